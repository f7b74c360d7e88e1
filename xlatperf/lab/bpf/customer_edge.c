// SPDX-License-Identifier: BSD-3-Clause
// The data path of the lab's reference CEs that encapsulate (xlatperf/lab/kinds/customer_edge.py):
// a DS-Lite B4 (RFC 6333), an lwB4 (RFC 7596) and a MAP-E CE (RFC 7597), in tc-BPF on the DUT's
// two interfaces (this kernel has no ip6tnl device, shared/docs/lab-kernel.md). The tester's
// right port plays the AFTR or BR.
//
//   LAN side (xlp-dl) ingress, encap: IPv4 to anywhere but the CE itself. With CE_IPV4 set
//       (an lwB4 or MAP CE without NAPT44: the LAN uses the CE's own address and ports) only
//       UDP and TCP from CE_IPV4 and a source port of the CE's set (PSID CE_PSID) go out (RFC
//       7596 §5.1: an lwB4 sends from its port set only), anything else is dropped. The TTL is
//       decremented, an IPv6 header from CE_ADDR to BR_ADDR put in front (RFC 2473: next
//       header 4, hop limit 64, the TOS as traffic class), and the packet forwarded out of the WAN side
//       with the kernel's FIB and neighbour table (bpf_redirect_neigh).
//   WAN side (xlp-dr) ingress, decap: IPv6 from BR_ADDR to CE_ADDR carrying IPv4 (next header
//       4); with CE_IPV4 the inner destination must be CE_IPV4 and its port in the CE's set
//       (else dropped). The IPv6 header is removed, the TTL decremented, the packet forwarded
//       to the LAN.
//
// With NAPT=1 (an lwB4 that translates its LAN, RFC 7596 §5.1) the kernel forwards and nftables
// translates the LAN's addresses and ports into the CE's (CE_IPV4, its port set): from_lan is
// not attached; the kernel routes IPv4 into the softwire link, where
//   WAN side egress (to_wan), encap: every IPv4 packet gets the IPv6 header from CE_ADDR to
//       BR_ADDR (the Ethernet header is the IPv4 next hop's: the lab gives it the IPv6 next
//       hop's MAC);
// and from_wan hands the decapsulated packet back to the kernel (conntrack translates it back
// and routes it to the LAN).
//
// Everything else (ARP, ND, packets to the DUT itself) goes to the kernel. Build parameters
// (-D): CE_ADDR_HI/LO, BR_ADDR_HI/LO (IPv6 addresses as two 64-bit halves); OWN_IPV4 (the DUT's
// LAN address, host order); LAN_IFINDEX, WAN_IFINDEX; CE_IPV4 (0 for a B4), CE_PSID,
// PSID_OFFSET, PSID_LEN; NAPT (0 or 1); MISDELIVER (tunnel.h: a faulty CE's wrong source
// address); the faults of tunnel.h (FAULT_SHARE, FAULT_TTL, ...; with NAPT, towards the BR only).
#include <linux/bpf.h>
#include <linux/in.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#include "portset.h"
#include "tunnel.h"

#ifndef NAPT
#define NAPT 0
#endif

// Whether the IPv4 address (host order) and port are the CE's own (always, for a B4).
static __always_inline int own(__u32 ipv4, __u16 port) {
  if (CE_IPV4 == 0) return 1;
  return ipv4 == CE_IPV4 && in_a_set(port) && psid_of(port) == CE_PSID;
}

SEC("tc/from_lan")
int from_lan(struct __sk_buff *skb) {
  __u8 h[ETH_LEN + 24];  // Ethernet, the IPv4 header and ports
  if (bpf_skb_load_bytes(skb, 0, h, sizeof h) < 0) return TC_ACT_OK;
  if (h[12] != 0x08 || h[13] != 0x00) return TC_ACT_OK;
  const __u8 *ip4 = h + ETH_LEN;
  if (be32_at(ip4 + 16) == OWN_IPV4) return TC_ACT_OK;
  if (CE_IPV4 != 0) {
    if ((ip4[0] & 0x0f) != 5 || (ip4[9] != IPPROTO_UDP && ip4[9] != IPPROTO_TCP)) return TC_ACT_SHOT;
    if (!own(be32_at(ip4 + 12), (__u16)(ip4[20] << 8 | ip4[21]))) return TC_ACT_SHOT;
  }
  const int fault = draw_fault();
  if (forward_ipv4(skb, ETH_LEN, fault)) return TC_ACT_SHOT;
  const __u16 length = (__u16)(ip4[2] << 8 | ip4[3]);
  struct ipv6_address ce = {CE_ADDR_HI, CE_ADDR_LO};
  const struct ipv6_address br = {BR_ADDR_HI, BR_ADDR_LO};
  maybe_misdeliver(&ce);
  if (encapsulate(skb, length, &ce, &br, fault) < 0) return TC_ACT_SHOT;
  return bpf_redirect_neigh(WAN_IFINDEX, 0, 0, 0);
}

SEC("tc/from_wan")
int from_wan(struct __sk_buff *skb) {
  __u8 h[ETH_LEN + IP6_LEN + 24];  // Ethernet, IPv6, the inner IPv4 header and ports
  if (bpf_skb_load_bytes(skb, 0, h, sizeof h) < 0) return TC_ACT_OK;
  if (h[12] != 0x86 || h[13] != 0xdd || h[ETH_LEN + 6] != PROTO_IPIP) return TC_ACT_OK;
  const __u8 *ip6 = h + ETH_LEN, *ip4 = ip6 + IP6_LEN;
  if (load_u64(ip6 + 24) != CE_ADDR_HI || load_u64(ip6 + 32) != CE_ADDR_LO) return TC_ACT_OK;
  if (load_u64(ip6 + 8) != BR_ADDR_HI || load_u64(ip6 + 16) != BR_ADDR_LO) return TC_ACT_SHOT;
  if (CE_IPV4 != 0) {
    if ((ip4[0] & 0x0f) != 5 || (ip4[9] != IPPROTO_UDP && ip4[9] != IPPROTO_TCP)) return TC_ACT_SHOT;
    if (!own(be32_at(ip4 + 16), (__u16)(ip4[22] << 8 | ip4[23]))) return TC_ACT_SHOT;
  }
  if (decapsulate(skb) < 0) return TC_ACT_SHOT;
  if (NAPT) return TC_ACT_OK;  // the kernel translates back and forwards (no faults that way)
  if (forward_ipv4(skb, ETH_LEN, draw_fault())) return TC_ACT_SHOT;
  return bpf_redirect_neigh(LAN_IFINDEX, 0, 0, 0);
}

SEC("tc/to_wan")
int to_wan(struct __sk_buff *skb) {
  __u8 h[ETH_LEN + 4];  // Ethernet, the IPv4 header's first word
  if (bpf_skb_load_bytes(skb, 0, h, sizeof h) < 0) return TC_ACT_OK;
  if (h[12] != 0x08 || h[13] != 0x00) return TC_ACT_OK;
  const __u16 length = (__u16)(h[ETH_LEN + 2] << 8 | h[ETH_LEN + 3]);
  struct ipv6_address ce = {CE_ADDR_HI, CE_ADDR_LO};
  const struct ipv6_address br = {BR_ADDR_HI, BR_ADDR_LO};
  maybe_misdeliver(&ce);
  const int fault = draw_fault();  // the kernel's NAPT44 forwarded it: spoiled here
  if (spoil_forwarded(skb, ETH_LEN, fault) < 0) return TC_ACT_SHOT;
  return encapsulate(skb, length, &ce, &br, fault) < 0 ? TC_ACT_SHOT : TC_ACT_OK;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
