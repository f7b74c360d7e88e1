// SPDX-License-Identifier: BSD-3-Clause
// The softwire ends of the lab's reference DS-Lite AFTR (RFC 6333; xlatperf/lab/kinds/nat.py,
// kind dslite-aftr). This kernel has no ip6tnl device (shared/docs/lab-kernel.md): tc-BPF on
// the B4 side's interface (xlp-dl) ends the softwires, the kernel's nftables NAT44 does the
// rest, keeping the B4s apart with a conntrack zone per softwire (RFC 6333 §6.6: the NAT
// binding is extended with the softwire; so two B4s that use the same private address and port
// get two bindings):
//
//   ingress (from the B4s): IPv6 to AFTR_ADDR carrying IPv4 (next header 4) from a B4 of the
//       lab's range (B4 i: B4_BASE + i, i < B4_COUNT; a real AFTR keeps a table of its
//       softwires): the IPv6 header is removed and the packet marked i + 1 for nftables (which
//       puts it into zone i + 1 and keeps the mark in its connection), then the kernel routes
//       and masquerades it. A packet from another source is dropped.
//   egress (to the B4s): an IPv4 packet the kernel sends with a mark m > 0 (restored from its
//       connection's mark) goes into the softwire of B4 m - 1: an IPv6 header from AFTR_ADDR
//       (RFC 2473: next header 4, hop limit 64, the TOS as traffic class, RFC 6333 §7.1) in
//       front of it. Unmarked packets (ARP, ND, the kernel's own) leave as they are.
//
// Build parameters (-D): AFTR_ADDR_HI/LO, B4_BASE_HI/LO (the first B4's address as two 64-bit
// halves), B4_COUNT; the faults of tunnel.h (FAULT_SHARE, FAULT_TTL, ...), on the packets to
// the B4s.
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "tunnel.h"

SEC("tc/from_b4")
int from_b4(struct __sk_buff *skb) {
  __u8 h[ETH_LEN + IP6_LEN];
  if (bpf_skb_load_bytes(skb, 0, h, sizeof h) < 0) return TC_ACT_OK;
  if (h[12] != 0x86 || h[13] != 0xdd || h[ETH_LEN + 6] != PROTO_IPIP) return TC_ACT_OK;
  const __u8 *ip6 = h + ETH_LEN;
  if (load_u64(ip6 + 24) != AFTR_ADDR_HI || load_u64(ip6 + 32) != AFTR_ADDR_LO) return TC_ACT_OK;
  // B4 i = B4_BASE + i: the same high half, the low half at most B4_COUNT - 1 above the base's.
  const __u64 hi = load_u64(ip6 + 8), lo = load_u64(ip6 + 16);
  if (hi != B4_BASE_HI || lo < B4_BASE_LO || lo - B4_BASE_LO >= B4_COUNT) return TC_ACT_SHOT;
  if (decapsulate(skb) < 0) return TC_ACT_SHOT;
  skb->mark = (__u32)(lo - B4_BASE_LO) + 1;
  return TC_ACT_OK;
}

SEC("tc/to_b4")
int to_b4(struct __sk_buff *skb) {
  const __u32 mark = skb->mark;
  if (mark == 0 || mark > B4_COUNT) return TC_ACT_OK;
  __u8 h[ETH_LEN + 4];
  if (bpf_skb_load_bytes(skb, 0, h, sizeof h) < 0) return TC_ACT_OK;
  if (h[12] != 0x08 || h[13] != 0x00) return TC_ACT_OK;
  const __u16 length = (__u16)(h[ETH_LEN + 2] << 8 | h[ETH_LEN + 3]);
  const int fault = draw_fault();  // the kernel forwarded it: spoiled here, towards the B4s only
  __u32 b4_index = mark - 1;
  if (FAULTY(fault, SWAP) && (b4_index ^ 1) < B4_COUNT) b4_index ^= 1;  // another B4's softwire
  const struct ipv6_address aftr = {AFTR_ADDR_HI, AFTR_ADDR_LO}, b4 = {B4_BASE_HI, B4_BASE_LO + b4_index};
  if (spoil_forwarded(skb, ETH_LEN, fault) < 0 || encapsulate(skb, length, &aftr, &b4, fault) < 0)
    return TC_ACT_SHOT;
  skb->mark = 0;
  return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
