// SPDX-License-Identifier: BSD-3-Clause
// Tunnels for the lab's reference DUTs: RFC 2473 IPv4 in IPv6 (softwire.c, aftr.c,
// customer_edge.c; the MAP-T ones use the byte helpers), with IPv6 addresses as two 64-bit
// halves, putting a tunnel header in front of an IPv4 packet and taking it off, and the TTL of
// the IPv4 packets they forward; and RFC 4213 IPv6 in IPv4 (sixrd.c, 6rd), the same for an
// IPv4 tunnel header and the hop limit of the IPv6 packets inside.
#pragma once
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

// The installed uapi headers (6.1) predate the decapsulation flags the kernel (6.18) has.
#ifndef BPF_F_ADJ_ROOM_DECAP_L3_IPV4
#define BPF_F_ADJ_ROOM_DECAP_L3_IPV4 (1ULL << 7)
#endif
#ifndef BPF_F_ADJ_ROOM_DECAP_L3_IPV6
#define BPF_F_ADJ_ROOM_DECAP_L3_IPV6 (1ULL << 8)
#endif

#define ETH_LEN 14
#define IP6_LEN 40
#define IP4_LEN 20
#define PROTO_IPIP 4
#define PROTO_IPV6 41

struct ipv6_address {
  __u64 hi, lo;  // host order, hi = the first 64 bits
};

#ifndef MISDELIVER
#define MISDELIVER 0
#endif
// A faulty DUT (MISDELIVER = N > 0): about one in N packets gets another CE's address, its last
// bit flipped (a BR's towards the CEs, a CE's own towards the BR), which the tester must count
// as wrong_ce. misdeliver_now draws whether this packet is one (6rd's CE addresses are IPv4).
static __always_inline int misdeliver_now(void) {
  return MISDELIVER && bpf_get_prandom_u32() % MISDELIVER == 0;
}
static __always_inline void maybe_misdeliver(struct ipv6_address *ce) {
  if (misdeliver_now()) ce->lo ^= 1;
}

static __always_inline __u64 load_u64(const __u8 *p) {
  __u64 v = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) v = v << 8 | p[i];
  return v;
}
static __always_inline void store_u64(__u8 *p, __u64 v) {
#pragma unroll
  for (int i = 7; i >= 0; --i) p[i] = (__u8)v, v >>= 8;
}

// A faulty reference DUT (the lab's faulty= parameter, xlatperf/lab/kinds/common.py): each
// fault it is built with has its place 1.. in the list as FAULT_<NAME> and spoils its own
// FAULT_SHARE percent of the packets, apart from the others', so that the tester counts each
// by its own counter: FAULT_TTL no TTL/hop limit decrement, FAULT_TOS the TOS/traffic class
// zeroed, FAULT_CHECKSUM a checksum not adjusted, FAULT_TUNNEL_TOS a tunnel header's traffic
// class 0 while the inner TOS is kept (RFC 6333 §7.1 wants it carried over), FAULT_SWAP the
// packet into another CE's tunnel (the AFTR's: B4 i's into B4 i ^ 1's), FAULT_IID a MAP BR's
// CE address with the whole IPv4 destination where the CE owns a prefix (RFC 7597 §6 pads it),
// FAULT_DF a translated IPv4 packet of at most 1,260 bytes with DF set (RFC 6145 §5.1's rule
// on some packets, RFC 7915 §5.1's on the rest: a translator that follows neither).
#ifndef FAULT_SHARE
#define FAULT_SHARE 0
#endif
#ifndef FAULT_TTL
#define FAULT_TTL 0
#endif
#ifndef FAULT_TOS
#define FAULT_TOS 0
#endif
#ifndef FAULT_CHECKSUM
#define FAULT_CHECKSUM 0
#endif
#ifndef FAULT_TUNNEL_TOS
#define FAULT_TUNNEL_TOS 0
#endif
#ifndef FAULT_SWAP
#define FAULT_SWAP 0
#endif
#ifndef FAULT_IID
#define FAULT_IID 0
#endif
#ifndef FAULT_DF
#define FAULT_DF 0
#endif
#define FAULTY(fault, name) (FAULT_##name && (fault) == FAULT_##name)

// The fault of one packet: the place of one of the FAULT_* above, 0 (or a place no fault
// has) for none.
static __always_inline int draw_fault(void) {
  return FAULT_SHARE ? (int)(bpf_get_prandom_u32() % 100 / FAULT_SHARE) + 1 : 0;
}

// Puts an IPv6 header from `src` to `dst` in front of the IPv4 packet of `length` bytes after
// the Ethernet header (next header 4, hop limit 64, flow label 0, the IPv4 TOS as its traffic
// class: RFC 6333 §7.1 for DS-Lite and lw4o6, allowed by RFC 2473 §6.4 for MAP-E) and sets
// the EtherType; returns < 0 on failure.
static __always_inline int encapsulate(struct __sk_buff *skb, __u16 length, const struct ipv6_address *src,
                                       const struct ipv6_address *dst, int fault) {
  __u8 tos = 0;
  if (bpf_skb_load_bytes(skb, ETH_LEN + 1, &tos, 1) < 0) return -1;
  if (FAULTY(fault, TUNNEL_TOS)) tos = 0;
  if (bpf_skb_adjust_room(skb, IP6_LEN, BPF_ADJ_ROOM_MAC, BPF_F_ADJ_ROOM_ENCAP_L3_IPV6) < 0) return -1;
  __u8 ip6[2 + IP6_LEN] = {0x86, 0xdd, (__u8)(0x60 | tos >> 4), (__u8)(tos << 4)};  // EtherType, version 6
  __u8 *hdr = ip6 + 2;
  hdr[4] = length >> 8, hdr[5] = length & 0xff;
  hdr[6] = PROTO_IPIP;
  hdr[7] = 64;
  store_u64(hdr + 8, src->hi);
  store_u64(hdr + 16, src->lo);
  store_u64(hdr + 24, dst->hi);
  store_u64(hdr + 32, dst->lo);
  return bpf_skb_store_bytes(skb, 12, ip6, sizeof ip6, 0);
}

// Removes the tunnel header in front of the IPv4 packet after the Ethernet header and sets the
// EtherType; returns < 0 on failure.
static __always_inline int decapsulate(struct __sk_buff *skb) {
  if (bpf_skb_adjust_room(skb, -IP6_LEN, BPF_ADJ_ROOM_MAC, BPF_F_ADJ_ROOM_DECAP_L3_IPV4) < 0) return -1;
  const __u8 type[2] = {0x08, 0x00};
  return bpf_skb_store_bytes(skb, 12, type, 2, 0);
}

// Adds `delta` to the TTL of the IPv4 header at `off`, fixing its checksum unless the packet's
// fault is FAULT_CHECKSUM; 1 when the TTL would run out, < 0 on failure.
static __always_inline int change_ttl(struct __sk_buff *skb, __u32 off, int delta, int fault) {
  __u8 ttl_proto[2];
  if (bpf_skb_load_bytes(skb, off + 8, ttl_proto, 2) < 0) return -1;
  if (ttl_proto[0] + delta < 1) return 1;
  const __u16 old = bpf_htons(ttl_proto[0] << 8 | ttl_proto[1]);
  ttl_proto[0] += delta;
  const __u16 new = bpf_htons(ttl_proto[0] << 8 | ttl_proto[1]);
  if (bpf_skb_store_bytes(skb, off + 8, ttl_proto, 1, 0) < 0) return -1;
  if (FAULTY(fault, CHECKSUM)) return 0;
  return bpf_l3_csum_replace(skb, off + 10, old, new, 2) < 0 ? -1 : 0;
}

// Zeroes the TOS of the IPv4 header at `off`, fixing its checksum; < 0 on failure.
static __always_inline int zero_tos(struct __sk_buff *skb, __u32 off) {
  __u8 first[2];
  if (bpf_skb_load_bytes(skb, off, first, 2) < 0) return -1;
  const __u16 old = bpf_htons(first[0] << 8 | first[1]);
  first[1] = 0;
  if (bpf_skb_store_bytes(skb, off + 1, first + 1, 1, 0) < 0) return -1;
  return bpf_l3_csum_replace(skb, off + 10, old, bpf_htons(first[0] << 8), 2) < 0 ? -1 : 0;
}

// What a router does to an IPv4 packet it forwards, the TTL at `off` decremented and its
// checksum fixed, as the packet's fault spoils it (no decrement, no checksum fix, the TOS
// zeroed); 1 when the TTL is exhausted, < 0 on failure.
static __always_inline int forward_ipv4(struct __sk_buff *skb, __u32 off, int fault) {
  if (FAULTY(fault, TOS) && zero_tos(skb, off) < 0) return -1;
  return FAULTY(fault, TTL) ? 0 : change_ttl(skb, off, -1, fault);
}

// The faults of forward_ipv4 for an IPv4 packet at `off` that the kernel forwarded (the
// AFTR's NAT44, a CE's NAPT44): its decrement undone, its TOS zeroed, its header checksum
// wrong. < 0 on failure.
static __always_inline int spoil_forwarded(struct __sk_buff *skb, __u32 off, int fault) {
  if (FAULTY(fault, TOS)) return zero_tos(skb, off);
  if (FAULTY(fault, TTL)) return change_ttl(skb, off, 1, 0) ? -1 : 0;
  if (!FAULTY(fault, CHECKSUM)) return 0;
  __u8 sum[2];
  if (bpf_skb_load_bytes(skb, off + 10, sum, 2) < 0) return -1;
  sum[1] ^= 1;
  return bpf_skb_store_bytes(skb, off + 10, sum, 2, 0);
}

// --- RFC 4213 IPv6 in IPv4 (6rd, RFC 5969 §7) ---------------------------------------------------

static __always_inline __u32 be32_at(const __u8 *p) {
  return (__u32)p[0] << 24 | (__u32)p[1] << 16 | (__u32)p[2] << 8 | p[3];
}

// The one's complement sum of a 20-byte IPv4 header, folded: 0xffff when its checksum verifies.
static __always_inline __u16 ipv4_header_sum(const __u8 *h) {
  __u32 sum = 0;
#pragma unroll
  for (int i = 0; i < IP4_LEN; i += 2) sum += (__u32)h[i] << 8 | h[i + 1];
  sum = (sum & 0xffff) + (sum >> 16);
  return (__u16)((sum & 0xffff) + (sum >> 16));
}

// What a router does to the IPv6 packet at `off`, as the packet's fault spoils it: the hop
// limit decremented (not with FAULT_TTL), the traffic class zeroed with FAULT_TOS (IPv6 has no
// header checksum: FAULT_CHECKSUM spoils an IPv4 tunnel header instead). 1 when the hop limit is
// exhausted, < 0 on failure.
static __always_inline int forward_ipv6(struct __sk_buff *skb, __u32 off, int fault) {
  __u8 h[8];
  if (bpf_skb_load_bytes(skb, off, h, sizeof h) < 0) return -1;
  if (h[7] <= 1) return 1;
  if (FAULTY(fault, TOS)) h[0] &= 0xf0, h[1] &= 0x0f;
  if (!FAULTY(fault, TTL)) h[7] -= 1;
  return bpf_skb_store_bytes(skb, off, h, sizeof h, 0) < 0 ? -1 : 0;
}

// Puts an IPv4 header from `src` to `dst` (host order) in front of the IPv6 packet after the
// Ethernet header and sets the EtherType; < 0 on failure. RFC 4213 §3.5: protocol 41, TTL 64
// (§3.3: the encapsulator's choice), DF clear (§3.2.1: the lab's tunnel MTU is static, the
// veths carry the IPv6 MTU + 20, so nothing needs fragmenting and no ICMPv4 "fragmentation
// needed" should come back), a random identification (RFC 6864 §4.1: unique enough for a
// datagram that may be fragmented), the TOS the inner traffic class (RFC 2983's uniform model:
// the DSCP stays visible in the IPv4 network; the ECN field copied, RFC 6040 §4.1's normal
// mode). FAULT_CHECKSUM: the header checksum off by one.
static __always_inline int encapsulate_in_ipv4(struct __sk_buff *skb, __u32 src, __u32 dst, int fault) {
  __u8 ip6[6];
  if (bpf_skb_load_bytes(skb, ETH_LEN, ip6, sizeof ip6) < 0) return -1;
  const __u8 tos = (__u8)(ip6[0] << 4 | ip6[1] >> 4);
  const __u16 length = (__u16)(IP4_LEN + IP6_LEN + (ip6[4] << 8 | ip6[5]));
  if (bpf_skb_adjust_room(skb, IP4_LEN, BPF_ADJ_ROOM_MAC, BPF_F_ADJ_ROOM_ENCAP_L3_IPV4) < 0) return -1;
  const __u32 id = bpf_get_prandom_u32();
  __u8 h[2 + IP4_LEN] = {0x08, 0x00, 0x45, tos, (__u8)(length >> 8), (__u8)length, (__u8)(id >> 8), (__u8)id,
                         0, 0, 64, PROTO_IPV6, 0, 0,
                         (__u8)(src >> 24), (__u8)(src >> 16), (__u8)(src >> 8), (__u8)src,
                         (__u8)(dst >> 24), (__u8)(dst >> 16), (__u8)(dst >> 8), (__u8)dst};
  __u16 sum = (__u16)~ipv4_header_sum(h + 2);
  if (FAULTY(fault, CHECKSUM)) sum ^= 1;
  h[12] = (__u8)(sum >> 8), h[13] = (__u8)sum;
  return bpf_skb_store_bytes(skb, 12, h, sizeof h, 0);
}

// Whether the 20-byte IPv4 header `h` carries a whole IPv6 packet as a tunnel end takes it: no
// options, not a fragment (this DUT reassembles nothing), its checksum good, version 6 inside.
static __always_inline int plain_ipv6_in_ipv4(const __u8 *h) {
  return h[0] == 0x45 && (h[6] & 0x3f) == 0 && h[7] == 0 && ipv4_header_sum(h) == 0xffff &&
         (h[IP4_LEN] >> 4) == 6;
}

// Removes the IPv4 tunnel header in front of the IPv6 packet after the Ethernet header and sets
// the EtherType; < 0 on failure.
static __always_inline int decapsulate_from_ipv4(struct __sk_buff *skb) {
  if (bpf_skb_adjust_room(skb, -IP4_LEN, BPF_ADJ_ROOM_MAC, BPF_F_ADJ_ROOM_DECAP_L3_IPV6) < 0) return -1;
  const __u8 type[2] = {0x86, 0xdd};
  return bpf_skb_store_bytes(skb, 12, type, 2, 0);
}
