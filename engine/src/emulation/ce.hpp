// Emulated CEs (customer edge devices: B4s, lwB4s, MAP CEs; RFC 8219 §10.1.2, the multiple-IP
// draft): a correlated field. Per frame the sender picks one CE and one port of that CE's port
// set and writes all of the CE's fields together: its IPv6 address (in the tunnel header for
// DS-Lite, lw4o6 and MAP-E, in the IPv6 header for MAP-T), its IPv4 address and the port. The
// receiver reads the same fields back and checks that they belong to one CE (a frame the DUT
// delivered to the wrong CE, or mapped wrongly, is counted apart). Nothing is kept per CE
// beyond a binding table: a MAP rule computes its CEs, DS-Lite B4s are numbered.
// Pure: no DPDK.
#pragma once
#include <algorithm>
#include <cstring>
#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/field_generator.hpp"
#include "core/field_kernels.hpp"
#include "emulation/maprule.hpp"
#include "core/random.hpp"

namespace xlp {

// One CE's fields.
struct CeFields {
  Ipv6Bits ipv6 = 0;
  uint32_t ipv4 = 0;
  uint16_t psid = 0;
};

// DS-Lite B4s (RFC 6333): B4 i has the IPv6 address ipv6 + i and the private IPv4 address
// ipv4 + (i mod ipv4_count): with ipv4_count 1 every B4 uses the same one (RFC 6333 §5.7
// recommends 192.0.0.2), the case the AFTR's per-softwire NAT must keep apart. B4s own no
// port set: their ports are ordinary varying fields.
struct B4Range {
  Ipv6Bits ipv6 = 0;
  uint32_t ipv4 = 0, ipv4_count = 1;
  uint64_t count = 1;
  CeFields fields(uint64_t i) const {
    return {ipv6 + i, ipv4_count == 1 ? ipv4 : ipv4 + uint32_t(i % ipv4_count), 0};
  }
  std::optional<uint64_t> index_of(Ipv6Bits a) const {
    if (a < ipv6 || a - ipv6 >= count) return std::nullopt;
    return uint64_t(a - ipv6);
  }
};

// lw4o6 softwires (RFC 7596 §6.1): a binding table's lwB4s, each with its IPv6 address, shared
// IPv4 address and PSID, all with one sharing ratio (PortSet).
struct SoftwireTable {
  std::vector<CeFields> softwires;
  PortSet ports{0, 0};
  std::unordered_map<uint64_t, uint32_t> by_ipv4_psid;  // (ipv4 << 16 | psid) -> index
  CeFields fields(uint64_t i) const { return softwires[i]; }
};

// Reads a binding table file (docs/ipv4aas.md: a header line, then
// b4_ipv6,ipv4,psid,psid_length,psid_offset per softwire) by the front end's rules
// (xlatperf/frames/addressing.py, which validated it first: the two accept the same files,
// engine/tests/binding_tables.txt). Throws std::invalid_argument naming the file, line and column.
SoftwireTable read_softwires(const std::string& path);

// Where a CE's fields go in (or come from) a frame: the byte offsets of its IPv6 address, its
// IPv4 address, its port and the test tag's CE word (kTagCe: the CE's index); 0 for a field the
// frame does not carry. `ipv6_in_udp`: the IPv6 address is in the UDP pseudo-header (MAP-T:
// the IP header's), not a tunnel's.
struct CeLayout {
  uint16_t ipv6 = 0, ipv4 = 0, port = 0, tag = 0;
  // Whether the address is in the transport checksum's pseudo header (the inner header's; not
  // a tunnel header's).
  bool ipv6_in_udp = false, ipv4_in_udp = true;
};

class CeSource {
 public:
  using Kind = std::variant<MapRule, B4Range, SoftwireTable>;
  // `count`: the CEs used (RFC 8219 §10.1.2's n), the source's CEs first .. first + count - 1
  // (`first`: the one CE a DUT plays when the tester is its BR). Indices below are relative
  // to `first`. `prefix_hosts`: a MAP CE that owns an IPv4 prefix sends and receives on every
  // address of it (the sender spreads its frames over them), else on the prefix's first.
  CeSource(Kind kind, uint64_t count, uint64_t first = 0, bool prefix_hosts = false)
      : kind_(std::move(kind)), count_(count), first_(first) {
    // Computed once: the receiver masks them off every frame's IPv4 address.
    if (const auto* m = std::get_if<MapRule>(&kind_)) host_mask_ = m->host_mask();
    spread_hosts_ = prefix_hosts ? host_mask_ : 0;
    const uint64_t available = available_in(kind_);
    if (first_ >= available)
      throw std::invalid_argument("first " + std::to_string(first_) + ": must be in 0.." +
                                  std::to_string(available - 1) + " (the CEs this source has)");
    if (count_ == 0 || count_ > available - first_ || count_ > kMaxCount)
      throw std::invalid_argument("count " + std::to_string(count_) + ": must be in 1.." +
                                  std::to_string(std::min(available - first_, kMaxCount)) +
                                  " (the CEs this source has from the first one used)");
    if (auto* t = std::get_if<SoftwireTable>(&kind_))
      for (uint32_t i = 0; i < t->softwires.size(); ++i)
        t->by_ipv4_psid.emplace(uint64_t(t->softwires[i].ipv4) << 16 | t->softwires[i].psid, i);
  }
  // Indices are drawn as 32-bit numbers.
  static constexpr uint64_t kMaxCount = uint64_t(1) << 32;
  // The CEs a source has.
  static uint64_t available_in(const Kind& kind) {
    return std::visit([](const auto& k) { return available_of(k); }, kind);
  }

  uint64_t count() const { return count_; }
  uint64_t first() const { return first_; }
  // The CEs' port sets; null when the CEs own none (B4s).
  const PortSet* ports() const {
    if (auto* m = std::get_if<MapRule>(&kind_)) return &m->ports();
    if (auto* t = std::get_if<SoftwireTable>(&kind_)) return &t->ports;
    return nullptr;
  }
  CeFields at(uint64_t index) const {
    return std::visit([&](const auto& k) { return fields_of(k, first_ + index); }, kind_);
  }
  // The host bits of a CE's IPv4 prefix (MapRule::host_mask), 0 where a CE has one address.
  uint32_t host_mask() const { return host_mask_; }
  // The host bits the sender writes: those of a CE's prefix with prefix_hosts, else none.
  uint32_t spread_hosts() const { return spread_hosts_; }
  // The bits of the IPv6 and IPv4 addresses that differ between the CEs in use, or between the
  // addresses of a CE's IPv4 prefix.
  std::pair<Ipv6Bits, uint32_t> varying() const {
    const CeFields first = at(0), last = at(count_ - 1);
    Ipv6Bits v6 = 0;
    uint32_t v4 = 0;
    if (auto* m = std::get_if<MapRule>(&kind_)) {
      v6 = m->varying_bits();
      v4 = m->varying_ipv4() | spread_hosts();
    } else if (auto* t = std::get_if<SoftwireTable>(&kind_)) {
      for (uint64_t i = first_; i < first_ + count_; ++i)
        v6 |= t->softwires[i].ipv6 ^ first.ipv6, v4 |= t->softwires[i].ipv4 ^ first.ipv4;
    } else {  // numbered: every bit up to the highest one that changes (carries)
      v6 = spread(first.ipv6 ^ last.ipv6);
      const auto& b4 = std::get<B4Range>(kind_);
      v4 = uint32_t(spread(b4.ipv4 ^ (b4.ipv4 + uint32_t(std::min<uint64_t>(first_ + count_, b4.ipv4_count) - 1))));
    }
    return {v6, v4};
  }

  // The fields a received frame carries (those its layout has); the CE they name, if they
  // name one of the CEs in use and all of them agree with it (the receiver's check).
  struct Seen {
    std::optional<Ipv6Bits> ipv6;
    std::optional<uint32_t> ipv4;
    std::optional<uint16_t> port;
    std::optional<uint16_t> tag;  // the index (its low 16 bits) of the CE the sender chose
  };
  bool consistent(const Seen& s) const {
    std::optional<uint64_t> index;
    if (auto* m = std::get_if<MapRule>(&kind_)) {
      // A CE that owns no port set (PSID length 0: a 6rd CE, RFC 5969, seen in its IPv4
      // tunnel's address alone) is named by its IPv4 address; with sharing the port says which.
      const bool by_ipv4 = s.ipv4 && (s.port || m->ports().psid_length() == 0);
      index = s.ipv6 ? m->index_of(*s.ipv6) : by_ipv4 ? m->index_of(*s.ipv4, s.port.value_or(0)) : std::nullopt;
    } else if (auto* b = std::get_if<B4Range>(&kind_)) {
      if (s.ipv6) index = b->index_of(*s.ipv6);
    } else if (auto* t = std::get_if<SoftwireTable>(&kind_)) {
      if (s.ipv4 && s.port) {
        const auto it = t->by_ipv4_psid.find(uint64_t(*s.ipv4) << 16 | t->ports.psid_of_port(*s.port));
        if (it != t->by_ipv4_psid.end()) index = it->second;
      }
    }
    if (!index || *index < first_ || *index - first_ >= count_) return false;
    if (s.tag && uint16_t(*index - first_) != *s.tag) return false;  // consistent, but another CE
    CeFields ce;
    if (auto* m = std::get_if<MapRule>(&kind_)) {  // the halves, as the sender computes them
      uint64_t hi, lo;
      m->fields(*index, hi, lo, ce.ipv4, ce.psid);
      ce.ipv6 = Ipv6Bits(hi) << 64 | lo;
    } else {
      ce = at(*index - first_);
    }
    const PortSet* p = ports();
    return (!s.ipv6 || *s.ipv6 == ce.ipv6) && (!s.ipv4 || (*s.ipv4 & ~host_mask()) == ce.ipv4) &&
           (!s.port || !p || (p->in_a_set(*s.port) && p->psid_of_port(*s.port) == ce.psid));
  }

  const Kind& kind() const { return kind_; }
  template <class F>
  decltype(auto) visit(F&& f) const {
    return std::visit(std::forward<F>(f), kind_);
  }
  template <class K>
  static CeFields fields_of(const K& k, uint64_t i) {
    if constexpr (std::is_same_v<K, MapRule>) {
      const auto f = k.fields(i);
      return {f.ipv6, f.ipv4, f.psid};
    } else {
      return k.fields(i);
    }
  }

 private:
  static uint64_t available_of(const MapRule& m) { return m.ce_count(); }
  static uint64_t available_of(const B4Range& b) { return b.count; }
  static uint64_t available_of(const SoftwireTable& t) { return t.softwires.size(); }
  static Ipv6Bits spread(Ipv6Bits x) {  // x's highest set bit and every bit below it
    for (unsigned s = 1; s < 128; s *= 2) x |= x >> s;
    return x;
  }

  Kind kind_;
  uint64_t count_, first_;
  uint32_t host_mask_ = 0, spread_hosts_ = 0;
};

// Division of a 16-bit number by a fixed d in 2..65535 in 16-bit arithmetic (loops over a burst
// vectorise it on 16-bit lanes; a division does not): Granlund and Montgomery's method ("Division
// by invariant integers using multiplication", 1994, §4). With l = ceil(log2 d) and m =
// floor(2^16 (2^l - d) / d) + 1, which is below 2^16: t = v * m >> 16, and floor(v / d) =
// (t + (v - t) / 2) >> (l - 1) for every v < 2^16, no intermediate above v.
struct SmallDivisor {
  explicit SmallDivisor(uint32_t d = 2) {
    uint32_t l = 1;
    while ((uint32_t(1) << l) < d) ++l;
    multiplier = uint16_t((uint64_t(1) << 16) * ((uint64_t(1) << l) - d) / d + 1);
    shift = uint8_t(l - 1);
  }
  uint16_t quotient(uint16_t v) const {
    const uint16_t t = uint16_t(uint32_t(v) * multiplier >> 16);
    return uint16_t((t + ((v - t) >> 1)) >> shift);
  }
  uint16_t multiplier;
  uint8_t shift;
};

// A row of the words a CE writes into a frame: where, and which checksums cover it.
struct CeRow {
  uint16_t offset;
  bool in_udp, in_ipv4;
};

// Picks the CEs of a stream's frames and gives their words, a block of frames at a time, as
// rows (FieldBlock adds them to the fields' rows). Random: every CE and every port of its set
// equally likely; increasing: CE after CE, the port moving on after each round of the CEs. A
// lane q of several takes every lanes-th CE. A block is computed in passes of the fields'
// vector kernels: the draws (16-bit words), then the rows (place_ce), or, for a binding table,
// the rows from each CE's fields.
class CeGenerator {
 public:
  // Rows at most: eight IPv6 words, two IPv4 words, a port.
  static constexpr size_t kMaxRows = kMaxCeRows;

  CeGenerator(const CeSource& source, const CeLayout& layout, bool random, uint64_t seed, uint32_t start = 0,
              uint32_t stride = 1)
      : source_(&source), random_(random), rng_(seed), count_(source.count()),
        ports_(layout.port && source.ports() ? source.ports()->ports_per_ce() : 1),
        ce_mapper_(uint32_t(count_ == CeSource::kMaxCount ? 1 : count_)), next_ce_(start % count_),
        // A stride of a whole round (one CE alone, or as many lanes as CEs) wraps every frame:
        // the port moves on each time (reduced to 0 it would never move).
        stride_(stride % count_ ? stride % count_ : count_) {
    const auto [v6, v4] = source.varying();
    for (unsigned w = 0; w < 8 && layout.ipv6; ++w)
      if (uint16_t(v6 >> (112 - 16 * w))) {
        ipv6_word_[ipv6_words_++] = uint8_t(w);
        rows_.push_back({uint16_t(layout.ipv6 + 2 * w), layout.ipv6_in_udp, false});
      }
    for (unsigned w = 0; w < 2 && layout.ipv4; ++w)
      if (uint16_t(v4 >> (16 - 16 * w))) {
        ipv4_shift_[ipv4_words_++] = uint8_t(16 - 16 * w);
        rows_.push_back({uint16_t(layout.ipv4 + 2 * w), layout.ipv4_in_udp, true});
      }
    tag_row_ = layout.tag != 0;
    if (tag_row_) rows_.push_back({layout.tag, true, false});
    port_row_ = layout.port && source.ports();
    if (port_row_) rows_.push_back({layout.port, true, false});
    // Random draws as 16-bit words from the vector kernels: the CE index's low word when there
    // are more than 65,536 CEs, its top (the rest: its high word, or the whole index; exact for
    // a power of two, other counts above 65,536 draw 32-bit numbers one by one), the port's
    // index in its set. The top and the port are one draw when their product fits 16 bits,
    // split by a multiplication (one draw less per frame).
    const auto words = [&](uint64_t range, uint64_t salt) {
      return FieldGenerator(FieldSpec{"ce", 0, 0, false, false, VaryMode::kRandom, 0, uint32_t(range - 1)}, 0,
                            seed ^ (0x9e3779b97f4a7c15ull * salt));
    };
    if (random_) {
      const uint64_t top = count_ > 65536 ? count_ >> 16 : count_;
      if (count_ <= 65536 || (count_ & (count_ - 1)) == 0) {
        if (count_ > 65536) low_.push_back(words(65536, 1));
        joint_ = ports_ > 1 && ports_ < 65536 && top * ports_ <= 65536;
        top_.push_back(words(joint_ ? top * ports_ : top, 2));
      }
      if (ports_ > 1 && !joint_) port_.push_back(words(ports_, 3));
    }
    place();
  }

  const std::vector<CeRow>& rows() const { return rows_; }
  // Whether the rows are computed as placements of the CE index's bits (else looked up).
  bool placed() const { return plan_.rows > 0; }

  // rows[r][k]: row r's word of frame k (host order), for k < count.
  void generate(uint16_t (*rows)[kFrameBlock], uint32_t count) {
    uint16_t index[2][kFrameBlock], port[kFrameBlock];  // the CE index's low and high words
    pick(index, port, count);
    kernels_->place_ce(index, port, plan_, rows, count);  // (rows 0: splits a joint draw only)
    if (plan_.rows > 0) return;
    uint32_t ce[kFrameBlock], port32[kFrameBlock];
    for (uint32_t k = 0; k < count; ++k) ce[k] = uint32_t(index[1][k]) << 16 | index[0][k], port32[k] = port[k];
    compute_rows(ce, port32, rows, count);
  }

 private:
  // The rows of CEs ce[k] with ports port[k] from the CEs' fields (the definition; the
  // placements are derived from it and checked against it).
  void compute_rows(const uint32_t* ce, const uint32_t* port, uint16_t (*rows)[kFrameBlock], uint32_t count) const {
    uint64_t hi[kFrameBlock], lo[kFrameBlock];  // the IPv6 address's halves
    uint32_t ipv4[kFrameBlock];
    uint16_t psid[kFrameBlock];
    const uint64_t first = source_->first();
    const uint32_t spread_hosts = source_->spread_hosts();
    source_->visit([&](const auto& kind) {
      for (uint32_t k = 0; k < count; ++k) {
        if constexpr (std::is_same_v<std::decay_t<decltype(kind)>, MapRule>) {
          kind.fields(first + ce[k], hi[k], lo[k], ipv4[k], psid[k]);
          // A CE that owns a prefix: an address of it after the port's index (its MAP address
          // stays the prefix's), so that a DUT that takes the whole address is seen.
          ipv4[k] |= port[k] & spread_hosts;
        } else {
          const CeFields f = CeSource::fields_of(kind, first + ce[k]);
          hi[k] = uint64_t(f.ipv6 >> 64), lo[k] = uint64_t(f.ipv6), ipv4[k] = f.ipv4, psid[k] = f.psid;
        }
      }
    });
    uint32_t r = 0;
    for (uint32_t w = 0; w < ipv6_words_; ++w, ++r) {
      const uint64_t* half = ipv6_word_[w] < 4 ? hi : lo;
      const unsigned shift = 48 - 16 * (ipv6_word_[w] % 4);
      for (uint32_t k = 0; k < count; ++k) rows[r][k] = uint16_t(half[k] >> shift);
    }
    for (uint32_t w = 0; w < ipv4_words_; ++w, ++r)
      for (uint32_t k = 0; k < count; ++k) rows[r][k] = uint16_t(ipv4[k] >> ipv4_shift_[w]);
    if (tag_row_) {
      for (uint32_t k = 0; k < count; ++k) rows[r][k] = uint16_t(ce[k]);
      ++r;
    }
    if (r < rows_.size()) {
      const PortSet ports = *source_->ports();
      for (uint32_t k = 0; k < count; ++k) rows[r][k] = ports.port(psid[k], port[k]);
    }
  }
  uint16_t row_word(uint32_t r, uint32_t ce, uint32_t port) const {
    uint16_t rows[kMaxRows][kFrameBlock];
    compute_rows(&ce, &port, rows, 1);
    return rows[r][0];
  }

  // A row's word as a function of the CE's index i and its port's index p in the set: a
  // constant, runs of i's bits placed in the word and, in the port row, the port's own bits
  // (PortSet::port(0, p)). A MAP rule's CEs are such placements (its EA bits are the index:
  // RFC 7597 §5.2), so are numbered B4s whose first address leaves the index's bits clear; a
  // binding table is looked up. Per burst a few shifts and masks per row on 16-bit lanes (the
  // field kernels' place_ce; a run takes its bits from one of the index's two words), instead
  // of each CE's 128-bit address and fields first.
  //
  // The placements of every row (plan_) are probed bit by bit of the index (an index bit that
  // changes more than one bit of a row, or clears one, is no placement: a carry, a lookup), then
  // checked on pseudorandom CEs and ports; no rows (plan_.rows 0) when a row is not a placement.
  // plan_ also holds the joint draw's split and the port set's bits, needed either way.
  void place() {
    plan_.joint = joint_;
    plan_.joint_word = low_.empty() ? 0 : 1;
    if (joint_) {
      const SmallDivisor by(ports_);
      plan_.ports = uint16_t(ports_), plan_.multiplier = by.multiplier, plan_.shift = by.shift;
    }
    if (const PortSet* ports = port_row_ ? source_->ports() : nullptr) {
      const PortSet::Layout l = ports->layout();
      plan_.port_shift = uint8_t(l.block_of), plan_.port_block = uint16_t(l.first_block);
      plan_.port_block_shift = uint8_t(l.block_at), plan_.port_low = l.low;
    }
    if (std::holds_alternative<SoftwireTable>(source_->kind())) return;
    const uint32_t bits = count_ == 1 ? 0 : 64 - __builtin_clzll(count_ - 1);  // of the indices in use
    const uint16_t port_zero = port_row_ ? source_->ports()->port(0, 0) : 0;
    CePlacements out = plan_;
    out.rows = uint32_t(rows_.size());
    for (uint32_t r = 0; r < rows_.size(); ++r) {
      CeRowPlan& pl = out.row[r];
      pl.port = port_row_ && r + 1 == rows_.size();
      const uint16_t zero = pl.port ? port_zero : 0;
      pl.constant = uint16_t(row_word(r, 0, 0) - zero);
      for (uint32_t b = 0; b < bits; ++b) {
        const uint16_t changed = uint16_t((row_word(r, uint32_t(1) << b, 0) - zero) ^ pl.constant);
        if (changed == 0) continue;
        if ((changed & (changed - 1)) != 0 || (changed & pl.constant) != 0) return;
        const uint8_t to = uint8_t(__builtin_ctz(changed)), word = uint8_t(b / 16), from = uint8_t(b % 16);
        CeRun* last = pl.runs ? &pl.run[pl.runs - 1] : nullptr;
        const uint32_t length = last ? 32 - __builtin_clz(last->mask) : 0;
        if (last && last->word == word && last->from + length == from && last->to + length == to)
          last->mask = uint16_t(last->mask << 1 | 1);
        else if (pl.runs < 16)
          pl.run[pl.runs++] = {word, from, to, 1};
        else
          return;
      }
    }
    // The rows as the scalar kernel places them against the CEs' fields (compute_rows); the
    // vector kernels give the scalar one's words (their tests).
    Rng rng(0x5eed);
    uint16_t index[2][kFrameBlock], port[kFrameBlock], rows[kMaxRows][kFrameBlock];
    uint32_t ce[kFrameBlock], port32[kFrameBlock];
    for (uint32_t n = 0; n < 4096; n += kFrameBlock) {
      for (uint32_t k = 0; k < kFrameBlock; ++k) {
        ce[k] = n + k == 0 ? uint32_t(count_ - 1) : uint32_t(rng.next() % count_);
        port32[k] = n + k == 0 ? ports_ - 1 : uint32_t(rng.next() % ports_);
        index[0][k] = uint16_t(ce[k]), index[1][k] = uint16_t(ce[k] >> 16), port[k] = uint16_t(port32[k]);
      }
      CePlacements no_split = out;
      no_split.joint = false;
      kScalarKernels.place_ce(index, port, no_split, rows, kFrameBlock);
      uint16_t computed[kMaxRows][kFrameBlock];
      compute_rows(ce, port32, computed, kFrameBlock);
      for (uint32_t r = 0; r < rows_.size(); ++r)
        for (uint32_t k = 0; k < kFrameBlock; ++k)
          if (rows[r][k] != computed[r][k]) return;
    }
    plan_ = out;
  }

  // Each frame's CE index (index[1][k] << 16 | index[0][k]) and port index.
  void pick(uint16_t (*index)[kFrameBlock], uint16_t* port, uint32_t count) {
    if (!random_) {
      for (uint32_t k = 0; k < count; ++k) {
        index[0][k] = uint16_t(next_ce_), index[1][k] = uint16_t(next_ce_ >> 16), port[k] = uint16_t(next_port_);
        next_ce_ += stride_;
        if (next_ce_ >= count_) {
          next_ce_ -= count_;
          if (++next_port_ == ports_) next_port_ = 0;
        }
      }
      return;
    }
    if (!port_.empty()) port_[0].generate(port, count);
    else if (!joint_) std::fill(port, port + count, uint16_t(0));
    if (top_.empty()) {  // more than 65,536 CEs, not a power of two: 32-bit draws
      for (uint32_t k = 0; k < count; ++k) {
        uint32_t ce;
        while (!draw(uint32_t(rng_.next()), ce)) {
        }
        index[0][k] = uint16_t(ce), index[1][k] = uint16_t(ce >> 16);
      }
      return;
    }
    // The top is the index's high word when the low word is drawn apart, else all of it.
    uint16_t* top = low_.empty() ? index[0] : index[1];
    if (low_.empty()) std::fill(index[1], index[1] + count, uint16_t(0));
    else low_[0].generate(index[0], count);
    top_[0].generate(top, count);
    // (joint: the draw is top * ports_ + the port's index, split by place_ce)
  }
  // [0, count) from x (a rejection, probability below 2^-16, draws again); 2^32 takes x.
  bool draw(uint32_t x, uint32_t& out) const {
    if (count_ == CeSource::kMaxCount) return out = x, true;
    return ce_mapper_.map(x, out);
  }

  const CeSource* source_;
  bool random_;
  Rng rng_;
  uint64_t count_;
  uint32_t ports_;
  RangeMapper ce_mapper_;
  std::vector<FieldGenerator> low_, top_, port_;  // empty: not drawn that way
  bool joint_ = false;  // top_ draws the top and the port together
  uint64_t next_ce_, stride_;
  uint32_t next_port_ = 0;
  std::vector<CeRow> rows_;
  bool tag_row_ = false;   // the row before the port's is the tag's CE word
  bool port_row_ = false;  // the last row is the port
  CePlacements plan_;  // the rows as placements (rows 0: compute_rows), the joint draw's split
  const FieldKernels* kernels_ = &field_kernels();
  uint8_t ipv6_word_[8] = {}, ipv4_shift_[2] = {};
  uint32_t ipv6_words_ = 0, ipv4_words_ = 0;
};

// The receiver's check of a frame's CE fields (layout as received).
inline bool ce_consistent(const CeSource& source, const CeLayout& layout, const uint8_t* frame) {
  CeSource::Seen s;
  if (layout.ipv6) {
    uint64_t hi, lo;
    std::memcpy(&hi, frame + layout.ipv6, 8);
    std::memcpy(&lo, frame + layout.ipv6 + 8, 8);
    s.ipv6 = Ipv6Bits(__builtin_bswap64(hi)) << 64 | __builtin_bswap64(lo);
  }
  if (layout.ipv4) {
    const uint8_t* p = frame + layout.ipv4;
    s.ipv4 = uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
  }
  if (layout.port) s.port = uint16_t(frame[layout.port] << 8 | frame[layout.port + 1]);
  if (layout.tag) s.tag = uint16_t(frame[layout.tag] << 8 | frame[layout.tag + 1]);
  return source.consistent(s);
}

}  // namespace xlp
