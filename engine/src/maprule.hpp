// The MAP algorithm (RFC 7597 §5-6; MAP-T uses it verbatim, RFC 7599 §5-6; lw4o6 its port
// sets): a Mapping Rule's CEs, each named by its index (its Embedded-Address bits), with its
// IPv4 address, its PSID and port set, and its MAP IPv6 address. A sender emulating many CEs
// picks an index per frame and writes that CE's fields together; nothing is kept per CE.
// The front end's xlatperf/frames/addressing.py is the same algorithm; both are tested on the
// RFCs' worked examples. Pure: no DPDK.
#pragma once
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace xlp {

struct MapCe {
  std::array<uint8_t, 16> ipv6{};  // the MAP IPv6 address (RFC 7597 §6)
  uint32_t ipv4 = 0;               // its IPv4 address (the first of its prefix, o + r < 32)
  uint16_t psid = 0;               // k bits; 0 without sharing
};

class MapRule {
 public:
  // ipv6_prefix/n: Rule IPv6 prefix; ipv4_prefix/r: Rule IPv4 prefix (host order); o: EA-bits
  // length; a: PSID offset; psid_length: only for a rule without EA bits that shares (the PSID
  // then comes with the CE, RFC 7597 App. A Example 5). Throws std::invalid_argument.
  MapRule(const std::array<uint8_t, 16>& ipv6_prefix, unsigned n, uint32_t ipv4_prefix, unsigned r,
          unsigned o, unsigned a = 6, unsigned psid_length = 0)
      : prefix6_(ipv6_prefix), n_(n), prefix4_(ipv4_prefix), r_(r), o_(o), a_(a) {
    if (n > 128 || r > 32) throw std::invalid_argument("prefix length out of range");
    if (o > 48) throw std::invalid_argument("EA-bits length " + std::to_string(o) + ": must be in 0..48");
    if (n + o > 80)
      throw std::invalid_argument("Rule IPv6 prefix /" + std::to_string(n) + " + " + std::to_string(o) +
                                  " EA bits: must be at most 80 bits");
    p_ = o < 32 - r ? o : 32 - r;
    k_ = o ? o - p_ : psid_length;
    if (k_ > 16 || a_ + k_ > 16)
      throw std::invalid_argument("PSID offset " + std::to_string(a_) + " + PSID length " + std::to_string(k_) +
                                  ": must be at most 16 bits");
    m_ = k_ ? 16 - a_ - k_ : 0;
  }

  unsigned psid_length() const { return k_; }
  unsigned psid_offset() const { return a_; }
  unsigned contiguous_bits() const { return m_; }
  uint64_t ce_count() const { return uint64_t(1) << o_; }

  // The CE whose EA bits are `index` (`psid` only for a rule without EA bits).
  MapCe ce(uint64_t index, uint16_t psid = 0) const {
    MapCe out;
    if (o_) psid = uint16_t(index & ((uint64_t(1) << k_) - 1));
    out.psid = psid;
    const uint64_t suffix = index >> k_;
    out.ipv4 = prefix4_ | (p_ ? uint32_t(suffix << (32 - r_ - p_)) : 0);
    out.ipv6 = prefix6_;
    // The EA bits right after the rule prefix (bits n .. n + o - 1).
    for (unsigned b = 0; b < o_; ++b)
      if ((index >> (o_ - 1 - b)) & 1) set_bit(out.ipv6, n_ + b);
    // The interface identifier (§6): 16 zero bits, the IPv4 address, the PSID; an end-user
    // prefix longer than 64 bits keeps its own leading bits.
    const uint64_t iid = uint64_t(out.ipv4) << 16 | psid;
    const unsigned end = n_ + o_ > 64 ? n_ + o_ : 64;
    for (unsigned bit = end; bit < 128; ++bit)
      if ((iid >> (127 - bit)) & 1) set_bit(out.ipv6, bit);
    return out;
  }

  // The PSID a port belongs to.
  uint16_t psid_of_port(uint16_t port) const {
    return k_ ? uint16_t((port >> m_) & ((1u << k_) - 1)) : 0;
  }
  // The CE's ports: (2^a - 1) x 2^m of them with sharing (A > 0: "A MUST be larger than 0"),
  // all 65,536 without. port(psid, i) for i in [0, ports_per_ce()) lists them in order.
  uint32_t ports_per_ce() const { return k_ ? ((1u << a_) - (a_ ? 1 : 0)) << m_ : 65536; }
  uint16_t port(uint16_t psid, uint32_t i) const {
    if (!k_) return uint16_t(i);
    const uint32_t block = (a_ ? 1 : 0) + (i >> m_), j = i & ((1u << m_) - 1);
    return uint16_t(block << (16 - a_) | uint32_t(psid) << m_ | j);
  }

 private:
  static void set_bit(std::array<uint8_t, 16>& a, unsigned bit) { a[bit / 8] |= uint8_t(0x80 >> (bit % 8)); }

  std::array<uint8_t, 16> prefix6_;
  unsigned n_;
  uint32_t prefix4_;
  unsigned r_, o_, a_, p_ = 0, k_ = 0, m_ = 0;
};

}  // namespace xlp
