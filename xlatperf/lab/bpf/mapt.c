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
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#ifndef MODE_MAP
#define MODE_MAP
#endif
#include "ce.h"

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

SEC("tc/from_ce")
int from_ce(struct __sk_buff *skb) {
  __u8 h[ETH_LEN + IP6_LEN + 4];  // Ethernet, IPv6, the ports
  if (bpf_skb_load_bytes(skb, 0, h, sizeof h) < 0) return TC_ACT_OK;
  if (h[12] != 0x86 || h[13] != 0xdd) return TC_ACT_OK;
  const __u8 *ip6 = h + ETH_LEN;
  const __u8 proto = ip6[6];
  const __u32 l4_checksum = checksum_offset(proto);
  if (!l4_checksum) return TC_ACT_OK;
  const __u64 dst_hi = load_u64(ip6 + 24), dst_lo = load_u64(ip6 + 32);
  // The DMR's addresses: the IPv4 address after the u octet (bits 64-71, zero), zeros after it.
  if (dst_hi != DMR_HI || (dst_lo >> 56) != 0 || (dst_lo & 0xffffff) != 0) return TC_ACT_OK;
  const __u32 dst4 = (__u32)(dst_lo >> 24);
  const struct ipv6_address src = {load_u64(ip6 + 8), load_u64(ip6 + 16)};
  const __u32 src4 = (__u32)(src.lo >> 16);  // the interface identifier's IPv4 address
  const __u16 sport = (__u16)(ip6[IP6_LEN] << 8 | ip6[IP6_LEN + 1]);
  struct ipv6_address ce;
  if (!ce_address(src4, sport, &ce) || ce.hi != src.hi || ce.lo != src.lo) return drop();
  if (ip6[7] <= 1) return drop();  // hop limit exhausted
  const __u16 payload = (__u16)(ip6[4] << 8 | ip6[5]);
  __u8 ip4[IP4_LEN] = {0x45, (__u8)((ip6[0] & 0x0f) << 4 | ip6[1] >> 4)};  // TOS = traffic class
  const __u16 total = payload + IP4_LEN;
  ip4[2] = total >> 8, ip4[3] = total & 0xff;
  const __u16 id = (__u16)bpf_get_prandom_u32();
  ip4[4] = id >> 8, ip4[5] = id & 0xff;
  ip4[6] = total > 1260 ? 0x40 : 0;  // DF (RFC 7915 §5.1)
  ip4[8] = ip6[7] - 1, ip4[9] = proto;
  ip4[12] = src4 >> 24, ip4[13] = src4 >> 16, ip4[14] = src4 >> 8, ip4[15] = src4;
  ip4[16] = dst4 >> 24, ip4[17] = dst4 >> 16, ip4[18] = dst4 >> 8, ip4[19] = dst4;
  const __u16 csum = ipv4_checksum(ip4);
  ip4[10] = csum >> 8, ip4[11] = csum & 0xff;
  __be32 old_addrs[8], new_addrs[2];
  __builtin_memcpy(old_addrs, ip6 + 8, 32);
  __builtin_memcpy(new_addrs, ip4 + 12, 8);
  if (bpf_skb_change_proto(skb, bpf_htons(ETH_P_IP), 0) < 0) return drop();
  const __u8 type[2] = {0x08, 0x00};
  if (bpf_skb_store_bytes(skb, 12, type, 2, 0) < 0 || bpf_skb_store_bytes(skb, ETH_LEN, ip4, IP4_LEN, 0) < 0)
    return drop();
  if (fix_l4(skb, ETH_LEN + IP4_LEN + l4_checksum, proto, old_addrs, 32, new_addrs, 8) < 0) return drop();
  return bpf_redirect_neigh(V4_IFINDEX, 0, 0, 0);
}

SEC("tc/to_ce")
int to_ce(struct __sk_buff *skb) {
  __u8 h[ETH_LEN + IP4_LEN + 4];  // Ethernet, the IPv4 header, the ports
  if (bpf_skb_load_bytes(skb, 0, h, sizeof h) < 0) return TC_ACT_OK;
  if (h[12] != 0x08 || h[13] != 0x00) return TC_ACT_OK;
  const __u8 *ip4 = h + ETH_LEN;
  const __u32 l4_checksum = checksum_offset(ip4[9]);
  if (ip4[0] != 0x45 || !l4_checksum) return TC_ACT_OK;
  if ((ip4[6] & 0x3f) | ip4[7]) return TC_ACT_OK;  // fragments: the kernel's (RFC 7599 §10.2)
  const __u32 dst = (__u32)ip4[16] << 24 | (__u32)ip4[17] << 16 | (__u32)ip4[18] << 8 | ip4[19];
  const __u16 dport = (__u16)(ip4[22] << 8 | ip4[23]);
  struct ipv6_address ce;
  if (!ce_address(dst, dport, &ce)) {
    const __u32 mask4 = RULE4_LEN ? ~0u << (32 - RULE4_LEN) : 0;
    return (dst & mask4) == RULE4 ? drop() : TC_ACT_OK;
  }
  maybe_misdeliver(&ce);
  if (ip4[8] <= 1) return drop();  // TTL exhausted
  const __u32 src4 = (__u32)ip4[12] << 24 | (__u32)ip4[13] << 16 | (__u32)ip4[14] << 8 | ip4[15];
  const __u16 total = (__u16)(ip4[2] << 8 | ip4[3]);
  __u8 ip6[2 + IP6_LEN] = {0x86, 0xdd, (__u8)(0x60 | ip4[1] >> 4), (__u8)(ip4[1] << 4)};
  __u8 *hdr = ip6 + 2;
  const __u16 payload = total - IP4_LEN;
  hdr[4] = payload >> 8, hdr[5] = payload & 0xff;
  hdr[6] = ip4[9], hdr[7] = ip4[8] - 1;
  store_u64(hdr + 8, DMR_HI);
  store_u64(hdr + 16, (__u64)src4 << 24);
  store_u64(hdr + 24, ce.hi);
  store_u64(hdr + 32, ce.lo);
  __be32 old_addrs[2], new_addrs[8];
  __builtin_memcpy(old_addrs, ip4 + 12, 8);
  __builtin_memcpy(new_addrs, hdr + 8, 32);
  if (bpf_skb_change_proto(skb, bpf_htons(ETH_P_IPV6), 0) < 0) return drop();
  if (bpf_skb_store_bytes(skb, 12, ip6, sizeof ip6, 0) < 0) return drop();
  if (fix_l4(skb, ETH_LEN + IP6_LEN + l4_checksum, ip4[9], old_addrs, 8, new_addrs, 32) < 0) return drop();
  return bpf_redirect_neigh(CE_IFINDEX, 0, 0, 0);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
