// Fields that vary from frame to frame (RFC 4814 ports, the multiple-IP draft's 16-bit
// address part, RFC 2544 §12 destination networks): one generic mechanism. A field is a
// big-endian 16-bit word of the frame, or one byte of it, whose value is drawn per frame as
// increasing, decreasing or pseudorandom within [min, max]. Values are generated a block of
// frames at a time (the mode is looked at once per block, not per frame), and the checksums
// are updated incrementally (RFC 1624) from the template's value, never recomputed. The
// pseudorandom values and the checksum sums come from vector kernels chosen for the CPU at run
// time (field_kernels.hpp); every kernel gives the same values.
#pragma once
#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "emulation/ce.hpp"
#include "core/enumerate.hpp"
#include "core/field_generator.hpp"
#include "core/field_kernels.hpp"
#include "core/frame.hpp"

namespace xlp {

// Where a stream's varying words go in its frames and how they enter the checksums: the same
// for every block, so computed once when the stream is set up. The words are the fields' rows,
// then an emulated CE's (`ce`), then the IPv4 header checksum. The frame is written in 16-byte
// windows that cover the varying words, as few as possible (per frame every store costs: with
// 8-byte windows, MAP-E frames from a million CEs were sent 7-15 % slower on AVX2): each starts
// at the first varying word the windows before it left uncovered (the greedy cover, optimal
// for points on a line), so bytes between distant words (a tunnel's fixed destination between
// a CE's tunnel source and its inner IPv4 source) are not rewritten. A window is two 8-byte
// chunks, each the template's bytes with the frame's words that fall in it (words start at
// even offsets, so none straddles two chunks), or one chunk where the second would hold the
// template's bytes only (an 8-byte store: joining a constant chunk cost more than the store
// saved); the pairs come first. A window ends inside the frame (the rest of the UDP or TCP
// header and the 18-byte test tag follow the last word, a port) and may cover the UDP
// checksum and the test tag with the template's bytes, which the sender stamps after.
// check_span bounds the spread of the words to BlockWords::kWindows windows.
class FieldLayout {
 public:
  FieldLayout(const std::vector<FieldGenerator>& fields, const FrameTemplate& t, const CeGenerator* ce = nullptr) {
    sums_.ipv4_base = t.ipv4_header_sum;
    uint16_t offset[BlockWords::kRows];
    const auto add_row = [&](uint16_t at, uint16_t not_template, bool in_udp, bool in_ipv4) {
      const uint32_t r = sums_.rows++;
      offset[r] = at;
      if (in_udp) sums_.udp_base += not_template, sums_.udp_rows |= 1u << r;
      if (in_ipv4) sums_.ipv4_base += not_template, sums_.ipv4_rows |= 1u << r, sums_.ipv4_checksum = true;
    };
    // Ports and addresses: all in the UDP checksum.
    for (const FieldGenerator& g : fields) add_row(g.spec().word_offset, g.not_template(), true, g.spec().in_ipv4_header);
    if (ce)
      for (const CeRow& row : ce->rows()) {
        const uint8_t* w = t.bytes.data() + row.offset;
        add_row(row.offset, uint16_t(~(w[0] << 8 | w[1])), row.in_udp, row.in_ipv4);
      }
    uint32_t rows = sums_.rows;
    if (sums_.ipv4_checksum) offset[rows++] = t.ipv4_checksum_at;
    uint16_t sorted[BlockWords::kRows];
    std::copy(offset, offset + rows, sorted);
    std::sort(sorted, sorted + rows);
    const uint32_t end = t.head ? t.head : t.size();  // the bytes the sender copies per frame
    for (uint32_t r = 0; r < rows; ++r) {
      if (windows_ > 0 && sorted[r] + 2u <= window_offset_[windows_ - 1] + kWindowBytes) continue;
      if (windows_ == BlockWords::kWindows) throw std::logic_error("FieldLayout: more windows than check_span allows");
      // A window that would run past the copied bytes (the test tag's CE word, near the end of
      // a short frame) starts as much earlier, at an even byte like every word: where it then
      // overlaps the window before, both hold the same bytes (a word there is in both).
      const uint16_t at = sorted[r] + kWindowBytes > end ? uint16_t((end - kWindowBytes) & ~1u) : sorted[r];
      if (sorted[r] % 2 != 0 || end < kWindowBytes || at + kWindowBytes > end || sorted[r] + 2u > at + kWindowBytes)
        throw std::logic_error("FieldLayout: a window at byte " + std::to_string(sorted[r]) + " off its place");
      window_offset_[windows_++] = at;
    }
    // Each window's chunks, a pair's before the singles'.
    const auto has_words = [&](uint32_t at) {
      return std::any_of(offset, offset + rows, [&](uint16_t o) { return o >= at && o < at + 8; });
    };
    uint16_t chunk_at[BlockWords::kChunks];
    uint32_t chunks = 0;
    for (const bool pairs : {true, false})
      for (uint32_t w = 0; w < windows_; ++w)
        if (has_words(window_offset_[w] + 8u) == pairs) {
          chunk_at[chunks++] = window_offset_[w];
          if (pairs) chunk_at[chunks++] = uint16_t(window_offset_[w] + 8), ++pairs_;
        }
    for (uint32_t c = 0; c < chunks; ++c) store_offset_[c] = chunk_at[c < 2 * pairs_ ? c & ~1u : c];
    sums_.chunks = chunks, sums_.pairs = pairs_;
    for (uint32_t c = 0; c < chunks; ++c) {
      uint64_t chunk;
      std::memcpy(&chunk, t.bytes.data() + chunk_at[c], 8);
      for (uint32_t j = 0; j < 4; ++j) {
        sums_.lane_row[c][j] = -1;
        for (uint32_t r = 0; r < rows; ++r)  // (a word where two windows overlap is in both)
          if (offset[r] == chunk_at[c] + 2 * j) sums_.lane_row[c][j] = int8_t(r), chunk &= ~(uint64_t(0xffff) << (16 * j));
      }
      sums_.template_chunks[c] = chunk;
    }
  }
  static constexpr uint32_t kWindowBytes = 16;
  uint32_t pairs() const { return pairs_; }  // windows of two chunks
  uint32_t singles() const { return windows_ - pairs_; }  // windows of one
  // Where chunk c goes: the offset of its window (of both chunks, for a pair's).
  uint16_t store_offset(uint32_t c) const { return store_offset_[c]; }
  const BlockSums& sums() const { return sums_; }

 private:
  BlockSums sums_;
  uint16_t window_offset_[BlockWords::kWindows] = {};
  uint16_t store_offset_[BlockWords::kChunks] = {};
  uint32_t windows_ = 0, pairs_ = 0;
};

// The varying words of a stream's frames (laid out by `layout`), generated before the frames
// are built, kFrameBlock frames at a time: field by field for the whole block (where the
// vector kernels work best), then the IPv4 header checksum, each frame's change of the UDP
// checksum sum and its chunks (BlockWords). A burst takes the block's next frames, never more
// than it has left (fit: the sender shortens a burst at a block's end), and a Writer stores
// frame k's chunks while frame k is built (TxTask::build_single: copy, write, stamp in one
// pass per frame, as FramePatches::Cursor does with records computed before the trial). The
// values do not depend on how frames are grouped into bursts or blocks. Field values of an
// enumeration come from `enumerator`'s digits (`enumerated`: the enumerated fields' indices,
// fastest first); `ce`: the stream's emulated CEs, whose words follow the fields' rows (as in
// `layout`).
//
// A burst of a single stream is also stamped ahead (BurstStamp: the sequence number of its
// first frame and the burst's TSC): the frames' UDP checksums, sequence number and timestamp
// included, are computed with a vector kernel before the burst is built, so that
// Writer::stamp only stores (one checksum fold per frame in the sending loop had cost as much
// as all the burst's vector work).
struct BurstStamp {
  const FrameTemplate* tmpl;
  uint32_t first_seq;
  uint64_t tsc;
};

class FieldBlock {
 public:
  FieldBlock(const FieldLayout& layout, std::vector<FieldGenerator>& fields, TupleEnumerator* enumerator = nullptr,
             std::vector<size_t> enumerated = {}, CeGenerator* ce = nullptr)
      : layout_(layout), fields_(fields), enumerator_(enumerator), enumerated_(std::move(enumerated)), ce_(ce),
        kernels_(&(fields.empty() ? field_kernels() : fields[0].kernels())),
        b_(static_cast<BlockWords*>(::operator new(sizeof(BlockWords), std::align_val_t(64)))) {}
  FieldBlock(const FieldBlock&) = delete;
  FieldBlock& operator=(const FieldBlock&) = delete;
  ~FieldBlock() { ::operator delete(b_, std::align_val_t(64)); }

  // How many of `wanted` frames the next burst may take: the rest of the block, the next
  // block computed first when none is left.
  uint32_t fit(uint32_t wanted) {
    if (next_ == end_) compute();
    return std::min(wanted, end_ - next_);
  }

  // Calls f(writer) for the next `count` frames (count <= fit(count)): a Writer of this
  // layout's kPairs 16-byte and kSingles 8-byte windows, whose write(frame) stores the next
  // frame's windows and returns what they add to the frame's UDP checksum sum (the Patch of
  // TxTask::build_single), and with `stamp`, stamp(frame, ...) does that and stamps it. A fixed
  // number of windows: no loop or branch per frame.
  template <class F>
  void write_burst(uint32_t count, const BurstStamp* stamp, F&& f) {
    assert(count <= end_ - next_ && count <= kMaxBurst);
    if (stamp)
      kernels_->stamp_checksums(b_->udp_sum + next_, count, stamp->first_seq,
                                stamp->tmpl->base_sum + timestamp_sum(tag_timestamp(stamp->tsc)), checksum_);
    with_shape(
        [&]<uint32_t kPairs, uint32_t kSingles>() { f(Writer<kPairs, kSingles>(*this, next_, stamp)); },
        std::make_integer_sequence<uint32_t, BlockWords::kWindows + 1>{});
    next_ += count;
  }

  template <uint32_t kPairs, uint32_t kSingles>
  class Writer {
   public:
    static constexpr uint32_t kChunks = 2 * kPairs + kSingles;
    Writer(const FieldBlock& block, uint32_t first, const BurstStamp* stamp)
        : b_(*block.b_), checksum_(block.checksum_), stamp_(stamp), first_(first) {
      for (uint32_t c = 0; c < kChunks; ++c) offset_[c] = block.layout_.store_offset(c);
      if (stamp_) checksum_at_ = stamp_->tmpl->checksum_offset, tag_at_ = stamp_->tmpl->tag_offset;
    }
    uint32_t write(uint8_t* frame) {
      const uint32_t k = first_ + next_++;
      // All loaded before any is stored (the stores may alias the chunks); a pair's record is
      // one 16-byte move (joining its two chunks per frame had cost four more instructions).
      Window pairs[kPairs > 0 ? kPairs : 1];
      uint64_t singles[kChunks > 2 * kPairs ? kChunks - 2 * kPairs : 1];
      for (uint32_t p = 0; p < kPairs; ++p) pairs[p] = *reinterpret_cast<const Window*>(&b_.chunks[2 * p][2 * k]);
      for (uint32_t c = 2 * kPairs; c < kChunks; ++c) singles[c - 2 * kPairs] = b_.chunks[c][k];
      for (uint32_t p = 0; p < kPairs; ++p) *reinterpret_cast<Window*>(frame + offset_[2 * p]) = pairs[p];
      for (uint32_t c = 2 * kPairs; c < kChunks; ++c) std::memcpy(frame + offset_[c], &singles[c - 2 * kPairs], 8);
      return b_.udp_sum[k];
    }
    // write() and stamp_frame() in one, of a stamped burst: `seq` and `tsc` must be the
    // BurstStamp's (first_seq + k for the burst's frame k).
    void stamp(uint8_t* frame, [[maybe_unused]] const FrameTemplate& t, uint32_t seq, uint64_t tsc) {
      assert(stamp_ && stamp_->tmpl == &t && seq == stamp_->first_seq + next_ && tsc == stamp_->tsc);
      const uint32_t k = next_;
      write(frame);  // first: a window may cover the checksum field (with the template's value)
      std::memcpy(frame + checksum_at_, &checksum_[k], 2);
      write_tag(frame + tag_at_, seq, tag_timestamp(tsc));
    }
    void save() const {}

   private:
    // A 16-byte window's bytes, moved as one vector (unaligned, and aliasing anything).
    using Window = uint8_t __attribute__((vector_size(16), aligned(1), may_alias));
    const BlockWords& b_;
    const uint16_t* checksum_;  // the burst's UDP checksum fields, when stamped
    const BurstStamp* stamp_;
    uint16_t checksum_at_ = 0, tag_at_ = 0;  // the stamped template's UDP checksum and test tag
    uint16_t offset_[kChunks > 0 ? kChunks : 1];
    uint32_t first_;     // the burst's first frame in the block
    uint32_t next_ = 0;  // of the burst's frames
  };

 private:
  // The next kFrameBlock frames' words, sums and chunks.
  void compute() {
    const uint32_t count = kFrameBlock;
    uint32_t digits[kMaxFields][kFrameBlock];
    if (enumerator_) enumerator_->generate(digits, count);
    for (uint32_t f = 0; f < fields_.size(); ++f) {
      FieldGenerator& g = fields_[f];
      uint16_t* words = b_->words[f];
      if (enumerator_ && g.spec().mode == VaryMode::kEnumerate) {  // (a stream with such fields has one)
        const size_t d = size_t(std::find(enumerated_.begin(), enumerated_.end(), f) - enumerated_.begin());
        for (uint32_t k = 0; k < count; ++k) words[k] = g.word_at(digits[d][k]);
      } else {
        g.generate(words, count);
      }
    }
    if (ce_) ce_->generate(b_->words + fields_.size(), count);
    BlockSums sums = layout_.sums();
    sums.count = count;
    kernels_->finish(*b_, sums);
    next_ = 0, end_ = count;
  }

  // Calls f.template operator()<kPairs, kSingles>() for the layout's shape: exactly one
  // matches, at most kWindows windows together.
  template <class F, uint32_t... kPairs>
  void with_shape(F&& f, std::integer_sequence<uint32_t, kPairs...>) const {
    ((layout_.pairs() == kPairs
          ? (with_singles<kPairs>(f, std::make_integer_sequence<uint32_t, BlockWords::kWindows - kPairs + 1>{}), true)
          : false) ||
     ...);
  }
  template <uint32_t kPairs, class F, uint32_t... kSingles>
  void with_singles(F& f, std::integer_sequence<uint32_t, kSingles...>) const {
    ((layout_.singles() == kSingles ? (f.template operator()<kPairs, kSingles>(), true) : false) || ...);
  }

  const FieldLayout& layout_;
  std::vector<FieldGenerator>& fields_;
  TupleEnumerator* enumerator_;
  std::vector<size_t> enumerated_;
  CeGenerator* ce_;
  const FieldKernels* kernels_;
  BlockWords* b_;  // (13 KiB: on the heap)
  uint32_t next_ = 0, end_ = 0;  // the block's frames not taken yet: [next_, end_)
  alignas(64) uint16_t checksum_[kMaxBurst];  // the stamped burst's UDP checksum fields
};

// The per-field reference that the tests compare FieldBlock (and FramePatches) against:
// writes one field's values into a burst of frames and adds, per frame, what the new value
// changes in the UDP checksum sum (and in the IPv4 header sum, for address fields of IPv4).
// Frame at(k) receives values[k], for k < count.
template <class Position>
inline void apply_field(const FieldGenerator& g, const uint16_t* __restrict values, uint32_t count,
                        uint8_t* const* __restrict frames, Position at,
                        uint64_t* __restrict udp_delta, uint64_t* __restrict ip_delta) {
  const uint16_t offset = g.spec().word_offset, not_template = g.not_template();
  for (uint32_t k = 0; k < count; ++k)  // ports and addresses: all in the UDP checksum
    udp_delta[at(k)] += uint64_t(values[k]) + not_template;
  if (g.spec().in_ipv4_header)
    for (uint32_t k = 0; k < count; ++k) ip_delta[at(k)] += uint64_t(values[k]) + not_template;
  for (uint32_t k = 0; k < count; ++k) {
    const uint16_t be = __builtin_bswap16(values[k]);
    std::memcpy(frames[at(k)] + offset, &be, 2);
  }
}

// The IPv4 header checksum after address fields changed the header by `ip_delta`.
inline void finish_ipv4_header(uint8_t* frame, const FrameTemplate& t, uint64_t ip_delta) {
  const uint16_t csum = __builtin_bswap16(uint16_t(~fold(t.ipv4_header_sum + ip_delta)));
  std::memcpy(frame + t.ipv4_checksum_at, &csum, 2);
}

}  // namespace xlp
