// SPDX-License-Identifier: BSD-3-Clause
// What the lab's reference BRs share (softwire.c: MAP-E BR and lwAFTR; mapt.c: MAP-T BR): the
// CE that owns an IPv4 address and port, by the MAP rule's arithmetic (RFC 7597 §5-6, MODE_MAP)
// or the binding table (RFC 7596 §6.1, MODE_LW), and byte helpers. Build parameters: see the
// programs' heads.
#pragma once
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

#include "portset.h"
#include "tunnel.h"

#if !defined(MODE_MAP) && !defined(MODE_LW)
#error "build with -DMODE_MAP or -DMODE_LW (see the head of this file)"
#endif

// A packet the BR refuses (the tester counts it as lost).
static __always_inline int drop(void) { return TC_ACT_SHOT; }

#ifdef MODE_LW
// The binding table (RFC 7596 §6.1): the lwB4's IPv6 address by key = IPv4 address << 16 |
// PSID, one key for both directions (decapsulating, the inner source and its port's PSID name
// the lwB4 whose address must be the tunnel's source). A hash map of SOFTWIRE_COUNT entries that
// the lab fills after loading (softwire.py): compiled in and searched, a table of a few thousand
// softwires made the program too large for the verifier.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, SOFTWIRE_COUNT);
  __type(key, __u64);
  __type(value, struct ipv6_address);
} binding_table SEC(".maps");
#endif


// The CE owning IPv4 address `ipv4` (host order) and `port`; 0 when there is none. `whole`: a
// faulty BR's interface identifier with the whole IPv4 address where the CE owns a prefix.
static __always_inline int ce_address(__u32 ipv4, __u16 port, struct ipv6_address *out, int whole) {
  if (!in_a_set(port)) return 0;
  __u32 psid = psid_of(port);
#ifdef MODE_MAP
  const __u32 mask4 = RULE4_LEN ? ~0u << (32 - RULE4_LEN) : 0;
  if ((ipv4 & mask4) != RULE4) return 0;
  const __u32 p = EA_BITS - PSID_LEN;  // IPv4 suffix bits
  const __u64 suffix = p ? (ipv4 >> (32 - RULE4_LEN - p)) & ((1ull << p) - 1) : 0;
  const __u64 ea = suffix << PSID_LEN | psid;
  // RFC 7597 §6: rule prefix, EA bits, subnet ID 0; interface identifier 16 zero bits, the
  // IPv4 address (a CE's IPv4 prefix, r + p < 32 bits, right-padded with zeros), the PSID.
  const __u32 ce4 = RULE4_LEN + p < 32 && !whole ? ipv4 & ~((1u << (32 - RULE4_LEN - p)) - 1) : ipv4;
  out->hi = RULE6_HI | (EA_BITS ? ea << (64 - RULE6_LEN - EA_BITS) : 0);
  out->lo = (__u64)ce4 << 16 | psid;
  return 1;
#else
  const __u64 key = (__u64)ipv4 << 16 | psid;
  const struct ipv6_address *b4 = bpf_map_lookup_elem(&binding_table, &key);
  if (!b4) return 0;
  out->hi = b4->hi, out->lo = b4->lo;
  return 1;
#endif
}

