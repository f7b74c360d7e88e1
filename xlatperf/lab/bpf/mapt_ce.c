// SPDX-License-Identifier: BSD-3-Clause
// The data path of the lab's reference MAP-T CE (RFC 7599; xlatperf/lab/kinds/customer_edge.py,
// kind mapt-ce), without NAPT44: its LAN uses the CE's own IPv4 address and ports. tc-BPF on
// the DUT's two interfaces (translate.h); the tester's right port plays the BR.
//
//   LAN side (xlp-dl) ingress, IPv4 -> IPv6 (RFC 7599 §6): UDP or TCP from CE_IPV4 and a port
//       of the CE's set (PSID CE_PSID) to anywhere but the CE itself: the source becomes the
//       CE's MAP address CE_ADDR, the destination its address in the DMR prefix (the Default
//       Mapping Rule: everything outside the rule goes to the BR). Other IPv4 is dropped.
//   WAN side (xlp-dr) ingress, IPv6 -> IPv4: UDP or TCP to CE_ADDR from a DMR address, to a
//       port of the CE's set: the destination becomes CE_IPV4, the source the IPv4 address in
//       the DMR address.
//
// Everything else goes to the kernel. Build parameters (-D): CE_ADDR_HI/LO, CE_IPV4, CE_PSID,
// PSID_OFFSET, PSID_LEN, DMR_HI, OWN_IPV4 (the DUT's LAN address), LAN_IFINDEX, WAN_IFINDEX;
// MISDELIVER (tunnel.h: a faulty CE's wrong source address).
#include "portset.h"
#include "translate.h"

static __always_inline int own_port(__u16 port) {
  return in_a_set(port) && psid_of(port) == CE_PSID;
}

SEC("tc/from_lan")
int from_lan(struct __sk_buff *skb) {
  __u8 h[ETH_LEN + IP4_LEN + 4];  // Ethernet, the IPv4 header, the ports
  if (bpf_skb_load_bytes(skb, 0, h, sizeof h) < 0) return TC_ACT_OK;
  if (h[12] != 0x08 || h[13] != 0x00) return TC_ACT_OK;
  const __u8 *ip4 = h + ETH_LEN;
  const __u32 src4 = (__u32)ip4[12] << 24 | (__u32)ip4[13] << 16 | (__u32)ip4[14] << 8 | ip4[15];
  const __u32 dst4 = (__u32)ip4[16] << 24 | (__u32)ip4[17] << 16 | (__u32)ip4[18] << 8 | ip4[19];
  if (dst4 == OWN_IPV4) return TC_ACT_OK;
  if (ip4[0] != 0x45 || !checksum_offset(ip4[9]) || ((ip4[6] & 0x3f) | ip4[7])) return TC_ACT_SHOT;
  if (src4 != CE_IPV4 || !own_port((__u16)(ip4[20] << 8 | ip4[21]))) return TC_ACT_SHOT;
  struct ipv6_address src = {CE_ADDR_HI, CE_ADDR_LO};
  const struct ipv6_address dst = in_dmr(dst4);
  maybe_misdeliver(&src);
  return to_ipv6(skb, ip4, &src, &dst, WAN_IFINDEX, draw_fault());
}

SEC("tc/from_wan")
int from_wan(struct __sk_buff *skb) {
  __u8 h[ETH_LEN + IP6_LEN + 4];  // Ethernet, IPv6, the ports
  if (bpf_skb_load_bytes(skb, 0, h, sizeof h) < 0) return TC_ACT_OK;
  if (h[12] != 0x86 || h[13] != 0xdd) return TC_ACT_OK;
  const __u8 *ip6 = h + ETH_LEN;
  if (load_u64(ip6 + 24) != CE_ADDR_HI || load_u64(ip6 + 32) != CE_ADDR_LO) return TC_ACT_OK;
  __u32 src4;
  if (!checksum_offset(ip6[6]) || !from_dmr(load_u64(ip6 + 8), load_u64(ip6 + 16), &src4)) return TC_ACT_SHOT;
  if (!own_port((__u16)(ip6[IP6_LEN + 2] << 8 | ip6[IP6_LEN + 3]))) return TC_ACT_SHOT;
  return to_ipv4(skb, ip6, src4, CE_IPV4, LAN_IFINDEX, draw_fault());
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
