// SPDX-License-Identifier: BSD-3-Clause
// The data path of the lab's reference DUTs for 6rd (RFC 5969: IPv6 over IPv4, RFC 4213's
// encapsulation, protocol 41; xlatperf/lab/kinds/sixrd.py): a BR (-DMODE_BR) and a CE
// (-DMODE_CE). This kernel has no sit device (shared/docs/lab-kernel.md), so tc-BPF on the DUT's
// two interfaces does the work. One 6rd domain: the 6rd prefix (SIXRD_HI, its first 64 bits;
// SIXRD_LEN = n) and the CEs' common IPv4 prefix (RULE4, host order; RULE4_LEN = IPv4MaskLen r):
// a CE's delegated prefix is the 6rd prefix followed by the 32 - r low bits of its IPv4 address
// (RFC 5969 §7.1.1), n + 32 - r <= 64.
//
// BR (IPv4 side xlp-dl towards the CEs, IPv6 side xlp-dr):
//   CE side ingress, decap: IPv4 protocol 41 to BR_IPV4: the inner IPv6 source must be in the
//       6rd prefix with the outer IPv4 source embedded after it (RFC 5969 §8 and §12: else
//       spoofed, dropped); the IPv4 header is removed, the hop limit decremented, and the packet
//       forwarded out of the IPv6 side with the kernel's FIB and neighbour table.
//   IPv6 side ingress, encap: IPv6 to the 6rd prefix: the CE's IPv4 address is RULE4 | the
//       32 - r bits after the 6rd prefix (§7.1.1); the hop limit is decremented, an IPv4 header
//       from BR_IPV4 to the CE put in front (tunnel.h, encapsulate_in_ipv4), and the packet
//       forwarded to the CE side (the kernel routes the CEs' IPv4 prefix there).
// CE (LAN xlp-dl, IPv6; WAN xlp-dr, IPv4):
//   LAN ingress, encap: IPv6 to outside the CE's delegated prefix (not link-local, not
//       multicast: ND stays the kernel's), from inside it (a source the BR would take for
//       spoofed is dropped here): into the tunnel from CE_IPV4 to BR_IPV4, or, for a
//       destination in the 6rd prefix, straight to that CE's IPv4 address (§7.1.2: 6rd CEs of
//       one domain talk directly), hop limit decremented, out of the WAN.
//   WAN ingress, decap: IPv4 protocol 41 to CE_IPV4, from BR_IPV4 or from the CE the inner
//       source names (§8), to an address in the delegated prefix: the IPv4 header removed, the
//       hop limit decremented, to the LAN.
//
// Everything else (ARP, ND, native traffic, packets to the DUT itself) goes to the kernel.
// Build parameters (-D): MODE_BR or MODE_CE; SIXRD_HI (ull), SIXRD_LEN, RULE4 (u), RULE4_LEN,
// BR_IPV4 (u); BR: CE_IFINDEX, NET_IFINDEX (the IPv4 and IPv6 sides); CE: CE_IPV4 (u),
// LAN_IFINDEX, WAN_IFINDEX; MISDELIVER (tunnel.h: a faulty BR's tunnel to another CE, a faulty
// CE's tunnel from another CE's address: the IPv4 address's last bit flipped); the faults of
// tunnel.h (FAULT_SHARE, FAULT_TTL, FAULT_TOS, FAULT_CHECKSUM: the tunnel header's checksum).
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#include "tunnel.h"

#if !defined(MODE_BR) && !defined(MODE_CE)
#error "build with -DMODE_BR or -DMODE_CE (see the head of this file)"
#endif

#define EMBEDDED (32 - RULE4_LEN)  // the IPv4 bits a CE's prefix carries
#define SIXRD_MASK (SIXRD_LEN ? ~0ull << (64 - SIXRD_LEN) : 0ull)

static __always_inline int in_sixrd_prefix(__u64 hi) { return (hi & SIXRD_MASK) == SIXRD_HI; }

// RFC 5969 §7.1.1: the IPv4 address of the CE whose delegated prefix holds an address of the
// 6rd prefix (its first 64 bits `hi`): the common prefix and the bits after the 6rd prefix.
static __always_inline __u32 ce_ipv4_of(__u64 hi) {
  const __u64 bits = EMBEDDED ? hi >> (64 - SIXRD_LEN - EMBEDDED) & ((1ull << EMBEDDED) - 1) : 0;
  return RULE4 | (__u32)bits;
}

// Whether an IPv6 source (its first 64 bits) may come in a tunnel from `ipv4`: the CE of that
// address's delegated prefix (RFC 5969 §8, §12: no CE speaks for another CE's prefix).
static __always_inline int source_of(__u64 hi, __u32 ipv4) { return in_sixrd_prefix(hi) && ce_ipv4_of(hi) == ipv4; }

#ifdef MODE_BR

SEC("tc/from_ce")
int from_ce(struct __sk_buff *skb) {
  __u8 h[ETH_LEN + IP4_LEN + IP6_LEN];  // Ethernet, the tunnel header, the IPv6 header
  if (bpf_skb_load_bytes(skb, 0, h, sizeof h) < 0) return TC_ACT_OK;
  const __u8 *ip4 = h + ETH_LEN, *ip6 = ip4 + IP4_LEN;
  if (h[12] != 0x08 || h[13] != 0x00 || ip4[9] != PROTO_IPV6 || be32_at(ip4 + 16) != BR_IPV4) return TC_ACT_OK;
  if (!plain_ipv6_in_ipv4(ip4)) return TC_ACT_SHOT;
  if (!source_of(load_u64(ip6 + 8), be32_at(ip4 + 12))) return TC_ACT_SHOT;  // spoofed
  if (decapsulate_from_ipv4(skb) < 0) return TC_ACT_SHOT;
  if (forward_ipv6(skb, ETH_LEN, draw_fault())) return TC_ACT_SHOT;
  return bpf_redirect_neigh(NET_IFINDEX, 0, 0, 0);
}

SEC("tc/to_ce")
int to_ce(struct __sk_buff *skb) {
  __u8 h[ETH_LEN + IP6_LEN];
  if (bpf_skb_load_bytes(skb, 0, h, sizeof h) < 0) return TC_ACT_OK;
  const __u64 dst = load_u64(h + ETH_LEN + 24);
  if (h[12] != 0x86 || h[13] != 0xdd || !in_sixrd_prefix(dst)) return TC_ACT_OK;
  __u32 ce = ce_ipv4_of(dst);
  if (misdeliver_now()) ce ^= 1;
  const int fault = draw_fault();
  if (forward_ipv6(skb, ETH_LEN, fault)) return TC_ACT_SHOT;
  if (encapsulate_in_ipv4(skb, BR_IPV4, ce, fault) < 0) return TC_ACT_SHOT;
  return bpf_redirect_neigh(CE_IFINDEX, 0, 0, 0);
}

#else  // MODE_CE

#define DELEGATED_LEN (SIXRD_LEN + EMBEDDED)
#define DELEGATED_MASK (DELEGATED_LEN ? ~0ull << (64 - DELEGATED_LEN) : 0ull)
// The CE's delegated prefix's first 64 bits (RFC 5969 §7.1.1).
#define DELEGATED_HI (SIXRD_HI | (EMBEDDED ? ((__u64)CE_IPV4 & ((1ull << EMBEDDED) - 1)) << (64 - DELEGATED_LEN) : 0))

static __always_inline int delegated(__u64 hi) { return (hi & DELEGATED_MASK) == DELEGATED_HI; }

SEC("tc/from_lan")
int from_lan(struct __sk_buff *skb) {
  __u8 h[ETH_LEN + IP6_LEN];
  if (bpf_skb_load_bytes(skb, 0, h, sizeof h) < 0) return TC_ACT_OK;
  const __u8 *ip6 = h + ETH_LEN;
  if (h[12] != 0x86 || h[13] != 0xdd) return TC_ACT_OK;
  const __u64 dst = load_u64(ip6 + 24);
  if (ip6[24] == 0xff || (ip6[24] == 0xfe && (ip6[25] & 0xc0) == 0x80) || delegated(dst)) return TC_ACT_OK;
  if (!delegated(load_u64(ip6 + 8))) return TC_ACT_SHOT;
  const __u32 to = in_sixrd_prefix(dst) ? ce_ipv4_of(dst) : BR_IPV4;
  __u32 from = CE_IPV4;
  if (misdeliver_now()) from ^= 1;
  const int fault = draw_fault();
  if (forward_ipv6(skb, ETH_LEN, fault)) return TC_ACT_SHOT;
  if (encapsulate_in_ipv4(skb, from, to, fault) < 0) return TC_ACT_SHOT;
  return bpf_redirect_neigh(WAN_IFINDEX, 0, 0, 0);
}

SEC("tc/from_wan")
int from_wan(struct __sk_buff *skb) {
  __u8 h[ETH_LEN + IP4_LEN + IP6_LEN];
  if (bpf_skb_load_bytes(skb, 0, h, sizeof h) < 0) return TC_ACT_OK;
  const __u8 *ip4 = h + ETH_LEN, *ip6 = ip4 + IP4_LEN;
  if (h[12] != 0x08 || h[13] != 0x00 || ip4[9] != PROTO_IPV6 || be32_at(ip4 + 16) != CE_IPV4) return TC_ACT_OK;
  if (!plain_ipv6_in_ipv4(ip4)) return TC_ACT_SHOT;
  const __u32 src = be32_at(ip4 + 12);
  if (src != BR_IPV4 && !source_of(load_u64(ip6 + 8), src)) return TC_ACT_SHOT;  // spoofed
  if (!delegated(load_u64(ip6 + 24))) return TC_ACT_SHOT;  // not this CE's
  if (decapsulate_from_ipv4(skb) < 0) return TC_ACT_SHOT;
  if (forward_ipv6(skb, ETH_LEN, draw_fault())) return TC_ACT_SHOT;
  return bpf_redirect_neigh(LAN_IFINDEX, 0, 0, 0);
}

#endif

char LICENSE[] SEC("license") = "Dual BSD/GPL";
