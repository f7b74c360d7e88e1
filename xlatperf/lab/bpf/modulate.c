// SPDX-License-Identifier: BSD-3-Clause
// Sequence number modulation for the lab's nat44 (`--param modulate=on`, xlatperf/lab/kinds/nat.py):
// what OpenBSD PF's `modulate state` and carrier-grade NATs that randomise initial sequence
// numbers do, which this kernel's netfilter cannot (only its synproxy rewrites numbers, and it
// answers SYNs itself). On the DUT's right interface (towards the Responder):
//
//   egress (to_responder):    every TCP segment leaving has its sequence number raised by its
//                             connection's offset (a hash of the four-tuple it leaves with, after
//                             the NAT), after netfilter saw it;
//   ingress (from_responder): every TCP segment arriving has its acknowledgement number lowered
//                             by the same offset, before netfilter sees it.
//
// Conntrack between the two (the lab's NATs drop `ct state invalid`) sees the Initiator's own
// numbers both ways; the Responder sees a sequence space the Initiator never chose, so its ISN
// (a hash of the SYN's sequence number: docs/tcp.md) is not the one the Initiator computes from
// its four-tuple, and a FIN or RST built from the tuple alone is out of window. The TCP
// checksum is updated for each rewrite (RFC 1624, bpf_l4_csum_replace).
//
//   -DFAULT_ACK: acknowledgements are not lowered (a broken modulator): conntrack sees them
//   acknowledge data never sent and drops them as invalid, and no handshake completes.
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#ifndef FAULT_ACK
#define FAULT_ACK 0
#endif

// A 32-bit mix of the connection's four-tuple, the same from either direction: the addresses
// and ports of the side that is not the Responder (`client`) first. Never 0: every connection
// is rewritten.
static __always_inline __u32 offset_of(__u32 client, __u32 server, __u16 client_port, __u16 server_port) {
  __u64 x = ((__u64)client << 32 | server) ^ ((__u64)client_port << 16 | server_port) * 0x9e3779b97f4a7c15ull;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (__u32)x | 1;
}

// The TCP header's offset in an IPv4 frame, or 0 when the frame is not TCP over IPv4 (or is a
// fragment after the first, which holds no TCP header).
static __always_inline __u32 tcp_offset(struct __sk_buff *skb, struct iphdr *ip) {
  __u16 type;
  if (bpf_skb_load_bytes(skb, 12, &type, sizeof type) < 0 || type != bpf_htons(ETH_P_IP)) return 0;
  if (bpf_skb_load_bytes(skb, ETH_HLEN, ip, sizeof *ip) < 0) return 0;
  if (ip->protocol != IPPROTO_TCP || (ip->frag_off & bpf_htons(0x1fff))) return 0;
  return ETH_HLEN + ip->ihl * 4u;
}

// Adds `delta` to the 32-bit number at `at` (sequence: 4, acknowledgement: 8) of the TCP header
// at `tcp`, the checksum updated.
static __always_inline int rewrite(struct __sk_buff *skb, __u32 tcp, __u32 at, __u32 delta) {
  __u32 old;
  if (bpf_skb_load_bytes(skb, tcp + at, &old, sizeof old) < 0) return TC_ACT_SHOT;
  const __u32 new = bpf_htonl(bpf_ntohl(old) + delta);
  if (bpf_skb_store_bytes(skb, tcp + at, &new, sizeof new, 0) < 0) return TC_ACT_SHOT;
  if (bpf_l4_csum_replace(skb, tcp + 16, old, new, sizeof new) < 0) return TC_ACT_SHOT;
  return TC_ACT_OK;
}

SEC("tc/to_responder")
int to_responder(struct __sk_buff *skb) {
  struct iphdr ip;
  const __u32 tcp = tcp_offset(skb, &ip);
  if (!tcp) return TC_ACT_OK;
  __u16 ports[2];
  if (bpf_skb_load_bytes(skb, tcp, ports, sizeof ports) < 0) return TC_ACT_OK;
  return rewrite(skb, tcp, 4, offset_of(ip.saddr, ip.daddr, ports[0], ports[1]));
}

SEC("tc/from_responder")
int from_responder(struct __sk_buff *skb) {
  struct iphdr ip;
  const __u32 tcp = tcp_offset(skb, &ip);
  if (!tcp || FAULT_ACK) return TC_ACT_OK;
  __u8 flags;
  __u16 ports[2];
  if (bpf_skb_load_bytes(skb, tcp, ports, sizeof ports) < 0 || bpf_skb_load_bytes(skb, tcp + 13, &flags, 1) < 0)
    return TC_ACT_OK;
  if (!(flags & 0x10)) return TC_ACT_OK;  // no ACK flag: the acknowledgement number means nothing
  return rewrite(skb, tcp, 8, -offset_of(ip.daddr, ip.saddr, ports[1], ports[0]));
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
