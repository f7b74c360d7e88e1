// SPDX-License-Identifier: BSD-3-Clause
// Stateless IP/ICMP translation (RFC 7915) of UDP and TCP for the lab's MAP-T reference DUTs
// (mapt.c: the BR; mapt_ce.c: a CE): an IPv6 header becomes an IPv4 one and back
// (bpf_skb_change_proto), the transport checksum follows the pseudo-header's change, and the
// Default Mapping Rule's addresses (RFC 7599 §5.1; a /64 prefix, RFC 6052: the IPv4 address
// after the u octet). Build parameter (-D): DMR_HI, the DMR prefix's 64 bits.
#pragma once
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "tunnel.h"

#define IP4_LEN 20

// The IPv4 header checksum of a 20-byte header whose checksum field is zero.
static __always_inline __u16 ipv4_checksum(const __u8 *h) {
  __u32 sum = 0;
#pragma unroll
  for (int i = 0; i < IP4_LEN; i += 2) sum += (__u32)(h[i] << 8 | h[i + 1]);
  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  return (__u16)~sum;
}

// Where the transport checksum is, by protocol; 0 for a protocol this BR does not translate.
static __always_inline __u32 checksum_offset(__u8 proto) {
  return proto == IPPROTO_UDP ? 6 : proto == IPPROTO_TCP ? 16 : 0;
}

// The pseudo-header's change (RFC 1624) moved into the transport checksum at `off`.
static __always_inline int fix_l4(struct __sk_buff *skb, __u32 off, __u8 proto, __be32 *from, __u32 from_size,
                                  __be32 *to, __u32 to_size) {
  const __s64 diff = bpf_csum_diff(from, from_size, to, to_size, 0);
  if (diff < 0) return -1;
  const __u64 flags = BPF_F_PSEUDO_HDR | (proto == IPPROTO_UDP ? BPF_F_MARK_MANGLED_0 : 0);
  return bpf_l4_csum_replace(skb, off, 0, (__u32)diff, flags) < 0 ? -1 : 0;
}

// The IPv4 address embedded in the DMR address hi:lo, if it is one: 1, else 0.
static __always_inline int from_dmr(__u64 hi, __u64 lo, __u32 *ipv4) {
  if (hi != DMR_HI || (lo >> 56) != 0 || (lo & 0xffffff) != 0) return 0;
  *ipv4 = (__u32)(lo >> 24);
  return 1;
}
// The DMR address of an IPv4 address (the IPv4 Internet seen from the CEs).
static __always_inline struct ipv6_address in_dmr(__u32 ipv4) {
  const struct ipv6_address a = {DMR_HI, (__u64)ipv4 << 24};
  return a;
}

// IPv6 -> IPv4 (RFC 7915 §5.1: TTL = hop limit - 1, DF set above 1260 bytes, identification
// random) of the packet whose IPv6 header is `ip6` (UDP or TCP: checksum_offset), from `src4` to
// `dst4`, forwarded out of `ifindex`; a faulty translator's packet (tunnel.h: its `fault`)
// keeps the hop limit, loses the traffic class, keeps its transport checksum unadjusted or has
// DF set however small.
static __always_inline int to_ipv4(struct __sk_buff *skb, const __u8 *ip6, __u32 src4, __u32 dst4, __u32 ifindex,
                                   int fault) {
  const __u8 proto = ip6[6];
  const __u32 l4_checksum = checksum_offset(proto);
  if (!l4_checksum || ip6[7] <= 1) return TC_ACT_SHOT;  // not translated here; hop limit exhausted
  const __u16 payload = (__u16)(ip6[4] << 8 | ip6[5]);
  __u8 ip4[IP4_LEN] = {0x45, (__u8)((ip6[0] & 0x0f) << 4 | ip6[1] >> 4)};  // TOS = traffic class
  if (FAULTY(fault, TOS)) ip4[1] = 0;
  const __u16 total = payload + IP4_LEN;
  ip4[2] = total >> 8, ip4[3] = total & 0xff;
  const __u16 id = (__u16)bpf_get_prandom_u32();
  ip4[4] = id >> 8, ip4[5] = id & 0xff;
  ip4[6] = total > 1260 || FAULTY(fault, DF) ? 0x40 : 0;  // DF (RFC 7915 §5.1)
  ip4[8] = FAULTY(fault, TTL) ? ip6[7] : ip6[7] - 1, ip4[9] = proto;
  ip4[12] = src4 >> 24, ip4[13] = src4 >> 16, ip4[14] = src4 >> 8, ip4[15] = src4;
  ip4[16] = dst4 >> 24, ip4[17] = dst4 >> 16, ip4[18] = dst4 >> 8, ip4[19] = dst4;
  const __u16 csum = ipv4_checksum(ip4);
  ip4[10] = csum >> 8, ip4[11] = csum & 0xff;
  __be32 old_addrs[8], new_addrs[2];
  __builtin_memcpy(old_addrs, ip6 + 8, 32);
  __builtin_memcpy(new_addrs, ip4 + 12, 8);
  if (bpf_skb_change_proto(skb, bpf_htons(ETH_P_IP), 0) < 0) return TC_ACT_SHOT;
  const __u8 type[2] = {0x08, 0x00};
  if (bpf_skb_store_bytes(skb, 12, type, 2, 0) < 0 || bpf_skb_store_bytes(skb, ETH_LEN, ip4, IP4_LEN, 0) < 0)
    return TC_ACT_SHOT;
  if (!FAULTY(fault, CHECKSUM) && fix_l4(skb, ETH_LEN + IP4_LEN + l4_checksum, proto, old_addrs, 32, new_addrs, 8) < 0)
    return TC_ACT_SHOT;
  return bpf_redirect_neigh(ifindex, 0, 0, 0);
}

// IPv4 -> IPv6 (RFC 7915 §4.1: hop limit = TTL - 1, traffic class = TOS, flow label 0) of the
// packet whose IPv4 header (20 bytes, UDP or TCP) is `ip4`, from `src` to `dst`, forwarded out
// of `ifindex`; the faults as to_ipv4's.
static __always_inline int to_ipv6(struct __sk_buff *skb, const __u8 *ip4, const struct ipv6_address *src,
                                   const struct ipv6_address *dst, __u32 ifindex, int fault) {
  const __u32 l4_checksum = checksum_offset(ip4[9]);
  if (!l4_checksum || ip4[8] <= 1) return TC_ACT_SHOT;  // not translated here; TTL exhausted
  const __u16 total = (__u16)(ip4[2] << 8 | ip4[3]);
  const __u8 tos = FAULTY(fault, TOS) ? 0 : ip4[1];
  __u8 ip6[2 + IP6_LEN] = {0x86, 0xdd, (__u8)(0x60 | tos >> 4), (__u8)(tos << 4)};
  __u8 *hdr = ip6 + 2;
  const __u16 payload = total - IP4_LEN;
  hdr[4] = payload >> 8, hdr[5] = payload & 0xff;
  hdr[6] = ip4[9], hdr[7] = FAULTY(fault, TTL) ? ip4[8] : ip4[8] - 1;
  store_u64(hdr + 8, src->hi);
  store_u64(hdr + 16, src->lo);
  store_u64(hdr + 24, dst->hi);
  store_u64(hdr + 32, dst->lo);
  __be32 old_addrs[2], new_addrs[8];
  __builtin_memcpy(old_addrs, ip4 + 12, 8);
  __builtin_memcpy(new_addrs, hdr + 8, 32);
  if (bpf_skb_change_proto(skb, bpf_htons(ETH_P_IPV6), 0) < 0) return TC_ACT_SHOT;
  if (bpf_skb_store_bytes(skb, 12, ip6, sizeof ip6, 0) < 0) return TC_ACT_SHOT;
  if (!FAULTY(fault, CHECKSUM) && fix_l4(skb, ETH_LEN + IP6_LEN + l4_checksum, ip4[9], old_addrs, 8, new_addrs, 32) < 0)
    return TC_ACT_SHOT;
  return bpf_redirect_neigh(ifindex, 0, 0, 0);
}
