// SPDX-License-Identifier: BSD-3-Clause
// The data path of the lab's reference MAP-T Border Relay (RFC 7599; xlatperf/lab/kinds/
// softwire.py, kind mapt-br): stateless translation (RFC 7915) between the CEs' IPv6 and the
// IPv4 Internet, in tc-BPF on the DUT's two interfaces (this kernel cannot load Jool).
//
//   CE side (xlp-dl) ingress, IPv6 -> IPv4 (RFC 7599 §8.3): UDP or TCP from a CE's MAP IPv6
//       address to the DMR prefix. The source must be the MAP address the rule gives the
//       IPv4 address in its interface identifier and the source port (else dropped); the IPv4
//       destination is the one embedded in the DMR address (RFC 6052, /64: after the u octet).
//       The IPv6 header becomes an IPv4 header (bpf_skb_change_proto; RFC 7915 §5.1: TTL =
//       hop limit - 1, DF set above 1260 bytes, identification random), the transport checksum
//       follows the pseudo-header's change, and the packet leaves on the IPv4 side.
//   IPv4 side (xlp-dr) ingress, IPv4 -> IPv6 (§8.4): UDP or TCP to an address of the rule: the
//       destination address and port name the CE (a port in no CE's set is dropped); the source
//       is embedded in the DMR prefix (RFC 7915 §4.1: hop limit = TTL - 1, traffic class = TOS,
//       flow label 0).
//
// Everything else goes to the kernel. Build parameters (-D) as softwire.c's MODE_MAP, plus
// DMR_HI (the /64 DMR prefix's 64 bits); no BR_ADDR (a MAP-T BR has no tunnel endpoint).
#ifndef MODE_MAP
#define MODE_MAP
#endif
#include "ce.h"
#include "translate.h"

SEC("tc/from_ce")
int from_ce(struct __sk_buff *skb) {
  __u8 h[ETH_LEN + IP6_LEN + 4];  // Ethernet, IPv6, the ports
  if (bpf_skb_load_bytes(skb, 0, h, sizeof h) < 0) return TC_ACT_OK;
  if (h[12] != 0x86 || h[13] != 0xdd) return TC_ACT_OK;
  const __u8 *ip6 = h + ETH_LEN;
  if (!checksum_offset(ip6[6])) return TC_ACT_OK;
  __u32 dst4;
  if (!from_dmr(load_u64(ip6 + 24), load_u64(ip6 + 32), &dst4)) return TC_ACT_OK;
  const struct ipv6_address src = {load_u64(ip6 + 8), load_u64(ip6 + 16)};
  const __u32 src4 = (__u32)(src.lo >> 16);  // the interface identifier's IPv4 address
  const __u16 sport = (__u16)(ip6[IP6_LEN] << 8 | ip6[IP6_LEN + 1]);
  struct ipv6_address ce;
  if (!ce_address(src4, sport, &ce, 0) || ce.hi != src.hi || ce.lo != src.lo) return drop();
  return to_ipv4(skb, ip6, src4, dst4, NET_IFINDEX, draw_fault());
}

SEC("tc/to_ce")
int to_ce(struct __sk_buff *skb) {
  __u8 h[ETH_LEN + IP4_LEN + 4];  // Ethernet, the IPv4 header, the ports
  if (bpf_skb_load_bytes(skb, 0, h, sizeof h) < 0) return TC_ACT_OK;
  if (h[12] != 0x08 || h[13] != 0x00) return TC_ACT_OK;
  const __u8 *ip4 = h + ETH_LEN;
  if (ip4[0] != 0x45 || !checksum_offset(ip4[9])) return TC_ACT_OK;
  if ((ip4[6] & 0x3f) | ip4[7]) return TC_ACT_OK;  // fragments: the kernel's (RFC 7599 §10.2)
  const __u32 dst = (__u32)ip4[16] << 24 | (__u32)ip4[17] << 16 | (__u32)ip4[18] << 8 | ip4[19];
  const __u16 dport = (__u16)(ip4[22] << 8 | ip4[23]);
  struct ipv6_address ce;
  const int fault = draw_fault();
  if (!ce_address(dst, dport, &ce, FAULTY(fault, IID))) {
    const __u32 mask4 = RULE4_LEN ? ~0u << (32 - RULE4_LEN) : 0;
    return (dst & mask4) == RULE4 ? drop() : TC_ACT_OK;
  }
  maybe_misdeliver(&ce);
  const __u32 src4 = (__u32)ip4[12] << 24 | (__u32)ip4[13] << 16 | (__u32)ip4[14] << 8 | ip4[15];
  const struct ipv6_address src = in_dmr(src4);
  return to_ipv6(skb, ip4, &src, &ce, CE_IFINDEX, fault);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
