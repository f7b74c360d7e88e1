// SPDX-License-Identifier: BSD-3-Clause
// The data path of the lab's reference DUTs for IPv4-in-IPv6 softwires (xlatperf/lab/kinds/
// softwire.py): a MAP-E BR (RFC 7597) and an lwAFTR (RFC 7596). This kernel has no ip6tnl
// device (shared/docs/lab-kernel.md), so tc-BPF on the DUT's two interfaces does the BR's work:
//
//   CE side (xlp-dl) ingress, decap:  IPv6 to BR_ADDR carrying IPv4 (next header 4): the outer
//       source must be the address the rule (MAP) or the binding table (lw4o6) gives the inner
//       IPv4 source and source port (RFC 7597 §8.1, RFC 7596 §6.2: else dropped);
//       the IPv6 header is removed, the IPv4 TTL decremented, and the packet forwarded out of
//       the IPv4 side with the kernel's FIB and neighbour table (bpf_redirect_neigh).
//   IPv4 side (xlp-dr) ingress, encap: IPv4 to an address of the rule (MAP) or of the table:
//       the destination address and port name the CE (RFC 7597 §5.3's forwarding rule, the
//       binding table's lookup); a port in no CE's set, or an unknown (address, PSID), is
//       dropped; else an IPv6 header from BR_ADDR to the CE is put in front (RFC
//       2473: next header 4, hop limit 64, the TOS as traffic class) and the packet forwarded
//       to the CE side.
//
// Everything else (ARP, ND, packets to the DUT itself) goes to the kernel. Build parameters
// (-D): MODE_MAP or MODE_LW (with SOFTWIRE_COUNT, the size of the binding table map, ce.h);
// BR_ADDR_HI/LO (the BR's IPv6 address as two 64-bit halves); CE_IFINDEX, NET_IFINDEX (the
// interfaces' indexes in the DUT namespace); MAP: RULE6_HI (the rule's IPv6 prefix's first 64
// bits), RULE6_LEN (n, with n + EA_BITS <= 64), RULE4 (host order), RULE4_LEN (r), EA_BITS
// (o); both: PSID_OFFSET (a), PSID_LEN (k; MAP: o - (32 - r)),
// MISDELIVER (0, or N: a faulty BR sends about one in N packets to the CEs into another CE's
// tunnel, its address's last bit flipped, for the tester's wrong-CE check); the faults of
// tunnel.h (FAULT_SHARE, FAULT_TTL, ...).
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "ce.h"

SEC("tc/from_ce")
int from_ce(struct __sk_buff *skb) {
  __u8 h[ETH_LEN + IP6_LEN + 24];  // Ethernet, IPv6, the inner IPv4 header and ports
  if (bpf_skb_load_bytes(skb, 0, h, sizeof h) < 0) return TC_ACT_OK;
  if (h[12] != 0x86 || h[13] != 0xdd || h[ETH_LEN + 6] != PROTO_IPIP) return TC_ACT_OK;
  const __u8 *ip6 = h + ETH_LEN, *ip4 = ip6 + IP6_LEN;
  if (load_u64(ip6 + 24) != BR_ADDR_HI || load_u64(ip6 + 32) != BR_ADDR_LO) return TC_ACT_OK;
  if ((ip4[0] >> 4) != 4 || (ip4[0] & 0x0f) != 5) return drop();  // no IPv4 options here
  const __u32 src = (__u32)ip4[12] << 24 | (__u32)ip4[13] << 16 | (__u32)ip4[14] << 8 | ip4[15];
  const __u16 sport = (__u16)(ip4[20] << 8 | ip4[21]);
  struct ipv6_address ce;
  if (!ce_address(src, sport, &ce, 0) || ce.hi != load_u64(ip6 + 8) || ce.lo != load_u64(ip6 + 16))
    return drop();  // spoofed: not the CE that owns this address and port
  if (decapsulate(skb) < 0) return drop();  // RFC 7597 §8: the BR forwards the IPv4 packet
  if (forward_ipv4(skb, ETH_LEN, draw_fault())) return drop();
  return bpf_redirect_neigh(NET_IFINDEX, 0, 0, 0);
}

SEC("tc/to_ce")
int to_ce(struct __sk_buff *skb) {
  __u8 h[ETH_LEN + 24];  // Ethernet, the IPv4 header and ports
  if (bpf_skb_load_bytes(skb, 0, h, sizeof h) < 0) return TC_ACT_OK;
  if (h[12] != 0x08 || h[13] != 0x00) return TC_ACT_OK;
  const __u8 *ip4 = h + ETH_LEN;
  if ((ip4[0] & 0x0f) != 5 || (ip4[9] != IPPROTO_UDP && ip4[9] != IPPROTO_TCP)) return TC_ACT_OK;
  const __u32 dst = (__u32)ip4[16] << 24 | (__u32)ip4[17] << 16 | (__u32)ip4[18] << 8 | ip4[19];
  const __u16 dport = (__u16)(ip4[22] << 8 | ip4[23]);
  struct ipv6_address ce;
  const int fault = draw_fault();
  if (!ce_address(dst, dport, &ce, FAULTY(fault, IID))) {
#ifdef MODE_MAP
    const __u32 mask4 = RULE4_LEN ? ~0u << (32 - RULE4_LEN) : 0;
    if ((dst & mask4) != RULE4) return TC_ACT_OK;  // not the rule's: the kernel's business
#endif
    return drop();
  }
  maybe_misdeliver(&ce);
  if (forward_ipv4(skb, ETH_LEN, fault)) return drop();
  const __u16 length = (__u16)(ip4[2] << 8 | ip4[3]);
  const struct ipv6_address br = {BR_ADDR_HI, BR_ADDR_LO};
  if (encapsulate(skb, length, &br, &ce, fault) < 0) return drop();
  return bpf_redirect_neigh(CE_IFINDEX, 0, 0, 0);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
