// The MAP algorithm (RFC 7597 §5-6; MAP-T uses it verbatim, RFC 7599 §5-6; lw4o6 its port
// sets): a Mapping Rule's CEs, each named by its index (its Embedded-Address bits), with its
// IPv4 address, its PSID and port set, and its MAP IPv6 address. A sender emulating many CEs
// picks an index per frame and writes that CE's fields together; nothing is kept per CE.
// The front end's xlatperf/frames/addressing.py is the same algorithm; both are tested on the
// RFCs' worked examples. Pure: no DPDK.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace xlp {

// An IPv6 address as one 128-bit number (the first byte most significant): CE addresses are
// computed with shifts and ors, a few instructions per frame.
using Ipv6Bits = unsigned __int128;

inline Ipv6Bits ipv6_bits(const std::array<uint8_t, 16>& a) {
  Ipv6Bits v = 0;
  for (uint8_t byte : a) v = v << 8 | byte;
  return v;
}
inline std::array<uint8_t, 16> ipv6_bytes(Ipv6Bits v) {
  std::array<uint8_t, 16> a{};
  for (int i = 15; i >= 0; --i, v >>= 8) a[size_t(i)] = uint8_t(v);
  return a;
}
// The bits [from, from + length) of an address, counted from its first bit, as a mask.
inline Ipv6Bits ipv6_mask(unsigned from, unsigned length) {
  if (length == 0) return 0;
  const Ipv6Bits ones = length >= 128 ? ~Ipv6Bits(0) : (Ipv6Bits(1) << length) - 1;
  return ones << (128 - from - length);
}

struct MapCe {
  std::array<uint8_t, 16> ipv6{};  // the MAP IPv6 address (RFC 7597 §6)
  uint32_t ipv4 = 0;               // its IPv4 address (the first of its prefix, o + r < 32)
  uint16_t psid = 0;               // k bits; 0 without sharing
};

// The port sets of a sharing ratio (RFC 7597 §5.1, the GMA): PSID offset a, PSID length k,
// m = 16 - a - k contiguous bits. Shared by MAP rules and lw4o6 softwires.
//
// Without sharing (k = 0) a CE owns every port, and the tester uses RFC 4814 §4.5's client
// ports 1024..65535 (docs/ipv4aas.md, "Port sets"): a CE's port is where its hosts send from
// and where replies come back to, and a tester that sent from port 0 or from the system ports
// 1-1023 would measure what a DUT does with them (drops, ALGs). The tester's frames use them
// as the port set of a = 6, k = 0 (block 0 left out, as a shared set's); the front end's
// MapRule.port_ranges says the same.
class PortSet {
 public:
  PortSet(unsigned a, unsigned k) : a_(a), k_(k), m_(k ? 16 - a - k : 0) {
    if (k_ > 16 || a_ + k_ > 16)
      throw std::invalid_argument("PSID offset " + std::to_string(a_) + " + PSID length " + std::to_string(k_) +
                                  ": must be at most 16 bits");
  }
  unsigned psid_length() const { return k_; }
  unsigned psid_offset() const { return a_; }
  unsigned contiguous_bits() const { return m_; }
  // The PSID a port belongs to.
  uint16_t psid_of_port(uint16_t port) const { return k_ ? uint16_t((port >> m_) & ((1u << k_) - 1)) : 0; }
  // The ports the tester uses of a set: (2^a - 1) x 2^m of them with sharing (A > 0: "A MUST
  // be larger than 0"; the ports of block 0, 0 .. 2^(16-a) - 1, belong to no CE), 64,512
  // without (1024..65535, above). port(psid, i) for i in [0, ports_per_ce()) lists them in order.
  uint32_t ports_per_ce() const { return k_ ? ((1u << a_) - (a_ ? 1 : 0)) << m_ : kUnsharedPorts; }
  uint16_t port(uint16_t psid, uint32_t i) const {
    const Layout l = layout();
    return uint16_t(((i >> l.block_of) + l.first_block) << l.block_at | uint32_t(psid) << m_ | (i & l.low));
  }
  // How port(psid, i) places the bits of i: the block ((i >> block_of) + first_block) at bit
  // block_at, i's low bits (i & low) below the PSID. The field kernels compute it from these
  // terms (CePlacements).
  struct Layout {
    unsigned block_of, first_block, block_at;
    uint16_t low;
  };
  Layout layout() const {
    if (!k_) return {kUnsharedBlockBits, 1, kUnsharedBlockBits, uint16_t((1u << kUnsharedBlockBits) - 1)};
    return {m_, a_ ? 1u : 0u, 16 - a_, uint16_t((1u << m_) - 1)};
  }
  // Whether `port` is in some set (not in block 0 when a > 0).
  bool in_a_set(uint16_t port) const { return !k_ || !a_ || (port >> (16 - a_)) != 0; }

 private:
  // Without sharing: blocks of 2^10 ports from block 1 (a = 6), ports 1024..65535.
  static constexpr unsigned kUnsharedBlockBits = 10;
  static constexpr uint32_t kUnsharedPorts = 65536 - (1u << kUnsharedBlockBits);

  unsigned a_, k_, m_;
};

class MapRule {
 public:
  // ipv6_prefix/n: Rule IPv6 prefix; ipv4_prefix/r: Rule IPv4 prefix (host order); o: EA-bits
  // length; a: PSID offset; psid_length: only for a rule without EA bits that shares (the PSID
  // then comes with the CE, RFC 7597 App. A Example 5). Throws std::invalid_argument.
  MapRule(const std::array<uint8_t, 16>& ipv6_prefix, unsigned n, uint32_t ipv4_prefix, unsigned r,
          unsigned o, unsigned a = 6, unsigned psid_length = 0)
      : n_(n), prefix4_(ipv4_prefix), r_(r), o_(check_lengths(n, r, o)), p_(o < 32 - r ? o : 32 - r),
        ports_(a, o ? o - p_ : psid_length) {
    prefix_mask_ = ipv6_mask(0, n);
    prefix6_ = ipv6_bits(ipv6_prefix) & prefix_mask_;
    // The interface identifier (§6): 16 zero bits, the IPv4 address, the PSID; an end-user
    // prefix longer than 64 bits keeps its own leading bits.
    const unsigned end = n + o > 64 ? n + o : 64;
    iid_mask_ = ipv6_mask(end, 128 - end);
    prefix_hi_ = uint64_t(prefix6_ >> 64), prefix_lo_ = uint64_t(prefix6_), iid_lo_mask_ = uint64_t(iid_mask_);
    // The EA bits [n, n + o) of the address: in the high half shifted left by 64 - n - o (or
    // right by n + o - 64 when they run into the low half), in the low half by 128 - n - o.
    if (o == 0) ea_hi_right_ = 63, ea_lo_shift_ = 64;  // (index is 0)
    else if (n + o <= 64) ea_hi_shift_ = 64 - n - o, ea_lo_shift_ = 64;
    else ea_hi_right_ = n >= 64 ? 63 : n + o - 64, ea_lo_shift_ = 128 - n - o;
  }

  unsigned psid_length() const { return ports_.psid_length(); }
  unsigned psid_offset() const { return ports_.psid_offset(); }
  unsigned contiguous_bits() const { return ports_.contiguous_bits(); }
  const PortSet& ports() const { return ports_; }
  uint64_t ce_count() const { return uint64_t(1) << o_; }
  // The address bits that differ between the rule's CEs (the EA bits and the interface
  // identifier's IPv4 suffix and PSID).
  Ipv6Bits varying_bits() const {
    const unsigned k = ports_.psid_length();
    return ipv6_mask(n_, o_) | (Ipv6Bits(uint64_t(varying_ipv4()) << 16 | ((uint64_t(1) << k) - 1)) & iid_mask_);
  }
  // The IPv4 address bits that differ between the rule's CEs (the EA bits' IPv4 suffix).
  uint32_t varying_ipv4() const { return p_ ? uint32_t(((uint64_t(1) << p_) - 1) << (32 - r_ - p_)) : 0; }

  // The CE whose EA bits are `index` (`psid` only for a rule without EA bits): its IPv4
  // address and PSID, and its MAP IPv6 address as a number.
  struct Fields {
    Ipv6Bits ipv6;
    uint32_t ipv4;
    uint16_t psid;
  };
  Fields fields(uint64_t index, uint16_t psid = 0) const {
    const unsigned k = ports_.psid_length();
    if (o_) psid = uint16_t(index & ((uint64_t(1) << k) - 1));
    const uint32_t ipv4 = prefix4_ | (p_ ? uint32_t((index >> k) << (32 - r_ - p_)) : 0);
    const Ipv6Bits ea = o_ ? Ipv6Bits(index) << (128 - n_ - o_) : 0;
    return {prefix6_ | ea | (Ipv6Bits(uint64_t(ipv4) << 16 | psid) & iid_mask_), ipv4, psid};
  }
  // fields() in 64-bit halves of the address (the sender's per-frame path: no 128-bit shifts
  // by amounts known only at run time).
  void fields(uint64_t index, uint64_t& hi, uint64_t& lo, uint32_t& ipv4, uint16_t& psid) const {
    const unsigned k = ports_.psid_length();
    psid = o_ ? uint16_t(index & ((uint64_t(1) << k) - 1)) : 0;
    ipv4 = prefix4_ | (p_ ? uint32_t((index >> k) << (32 - r_ - p_)) : 0);
    const uint64_t iid = uint64_t(ipv4) << 16 | psid;
    hi = prefix_hi_ | (index << ea_hi_shift_ >> ea_hi_right_);
    lo = prefix_lo_ | (ea_lo_shift_ < 64 ? index << ea_lo_shift_ : 0) | (iid & iid_lo_mask_);
  }
  MapCe ce(uint64_t index, uint16_t psid = 0) const {
    const Fields f = fields(index, psid);
    return {ipv6_bytes(f.ipv6), f.ipv4, f.psid};
  }
  // The CE an IPv6 address names by its EA bits (whatever the rest of the address says), or
  // none when it is outside the rule's prefix.
  std::optional<uint64_t> index_of(Ipv6Bits ipv6) const {
    if ((ipv6 & prefix_mask_) != prefix6_) return std::nullopt;
    return o_ ? uint64_t(ipv6 >> (128 - n_ - o_)) & ((uint64_t(1) << o_) - 1) : 0;
  }
  // The CE that owns IPv4 address `ipv4` and `port` (the BR's forwarding rule, RFC 7597 §5.3),
  // or none when the address is outside the rule or the port in no CE's set.
  std::optional<uint64_t> index_of(uint32_t ipv4, uint16_t port) const {
    const uint32_t prefix_mask = r_ ? ~uint32_t(0) << (32 - r_) : 0;
    if ((ipv4 & prefix_mask) != prefix4_ || !ports_.in_a_set(port)) return std::nullopt;
    if (!o_) return 0;  // the rule's one CE (its PSID, if it shares, is the CE's own)
    const uint64_t suffix = p_ ? (ipv4 >> (32 - r_ - p_)) & ((uint64_t(1) << p_) - 1) : 0;
    return suffix << ports_.psid_length() | ports_.psid_of_port(port);
  }

  uint16_t psid_of_port(uint16_t port) const { return ports_.psid_of_port(port); }
  // The host bits of a CE's IPv4 address when the CE owns a prefix (r + p < 32 without
  // sharing, RFC 7597 §5.2): its MAP address holds the prefix padded with zeros (§6), its
  // packets may come from and go to any address of it. 0 for a CE of one address, shared or not.
  uint32_t host_mask() const {
    return ports_.psid_length() == 0 && r_ + p_ < 32 ? (uint32_t(1) << (32 - r_ - p_)) - 1 : 0;
  }
  uint32_t ports_per_ce() const { return ports_.ports_per_ce(); }
  uint16_t port(uint16_t psid, uint32_t i) const { return ports_.port(psid, i); }

 private:
  static unsigned check_lengths(unsigned n, unsigned r, unsigned o) {
    if (n > 128 || r > 32) throw std::invalid_argument("prefix length out of range");
    if (o > 48) throw std::invalid_argument("EA-bits length " + std::to_string(o) + ": must be in 0..48");
    if (n + o > 80)
      throw std::invalid_argument("Rule IPv6 prefix /" + std::to_string(n) + " + " + std::to_string(o) +
                                  " EA bits: must be at most 80 bits");
    return o;
  }

  unsigned n_;
  uint32_t prefix4_;
  unsigned r_, o_, p_;
  PortSet ports_;
  Ipv6Bits prefix6_ = 0, prefix_mask_ = 0, iid_mask_ = 0;
  uint64_t prefix_hi_ = 0, prefix_lo_ = 0, iid_lo_mask_ = 0;
  unsigned ea_hi_shift_ = 0, ea_hi_right_ = 0, ea_lo_shift_ = 64;
};

}  // namespace xlp
