// SPDX-License-Identifier: BSD-3-Clause
// RFC 2473 IPv4-in-IPv6 tunnels for the lab's reference DUTs (softwire.c, aftr.c; mapt.c uses the
// byte helpers): IPv6 addresses as two 64-bit halves, and putting a tunnel header in front of
// an IPv4 packet.
#pragma once
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#define ETH_LEN 14
#define IP6_LEN 40
#define PROTO_IPIP 4

struct ipv6_address {
  __u64 hi, lo;  // host order, hi = the first 64 bits
};

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

// Puts an IPv6 header from `src` to `dst` in front of the IPv4 packet of `length` bytes after
// the Ethernet header (next header 4, hop limit 64, traffic class and flow label 0) and sets
// the EtherType; returns < 0 on failure.
static __always_inline int encapsulate(struct __sk_buff *skb, __u16 length, const struct ipv6_address *src,
                                       const struct ipv6_address *dst) {
  if (bpf_skb_adjust_room(skb, IP6_LEN, BPF_ADJ_ROOM_MAC, BPF_F_ADJ_ROOM_ENCAP_L3_IPV6) < 0) return -1;
  __u8 ip6[2 + IP6_LEN] = {0x86, 0xdd, 0x60};  // EtherType, version 6
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
