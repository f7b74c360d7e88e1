// One varying field's values (fields.hpp: the mechanism; ce.hpp draws its CEs with it too):
// increasing, decreasing or pseudorandom within [min, max], generated a block of frames at a
// time by the vector kernels chosen for the CPU (field_kernels.hpp).
#pragma once
#include <cstdint>
#include <cstring>
#include <string>

#include "core/field_kernels.hpp"
#include "core/random.hpp"

namespace xlp {

// kEnumerate: the field is one digit of a stream's joint enumeration (enumerate.hpp).
enum class VaryMode { kIncreasing, kDecreasing, kRandom, kEnumerate };

// Where and how one field varies.
struct FieldSpec {
  std::string name;        // for messages: "src_port", "dst_ip[2]", ...
  uint16_t word_offset;    // offset of the big-endian 16-bit word in the frame (even)
  uint8_t shift;           // 0: the whole word, or the low byte; 8: the high byte
  bool byte_only;          // an 8-bit field (the other byte keeps the template's value)
  bool in_ipv4_header;     // also covered by the IPv4 header checksum
  VaryMode mode;
  uint32_t min, max;
};

// Generates the values of one field. For increasing/decreasing the sequence starts at
// min/max and wraps around; for random every value of [min, max] is equally likely. Each
// field has its own generator, so a seed always yields the same frames, however the frames
// happen to be grouped into bursts (RFC 4814 §4.2.1 repeatability), and on every CPU. A lane
// q of several TX queues sharing a flow (pacing.hpp) takes every lanes-th value of the
// increasing/decreasing sequence from the q-th: start = q, stride = lanes.
class FieldGenerator {
 public:
  FieldGenerator(const FieldSpec& spec, uint16_t template_word, uint64_t seed, uint32_t start = 0,
                 uint32_t stride = 1)
      : spec_(spec), kernels_(&field_kernels()),
        other_(spec.byte_only ? uint16_t(template_word & (spec.shift ? 0x00ff : 0xff00)) : 0),
        not_template_(uint16_t(~template_word)), step_(stride % (spec.max - spec.min + 1)),
        next_(spec.mode == VaryMode::kDecreasing ? spec.max - start % (spec.max - spec.min + 1)
                                                 : spec.min + start % (spec.max - spec.min + 1)) {
    Rng seeder(seed);
    for (auto& word : random_.s)
      for (auto& lane : word) lane = seeder.next();
    random_.range = spec.max - spec.min + 1;
    random_.threshold = uint32_t((uint64_t(1) << 32) % random_.range);
    random_.min = uint16_t(spec.min);
    random_.other = other_;
    random_.shift = spec.shift;
  }

  // Fills out[0..count) with the words to write; one switch per block of frames.
  void generate(uint16_t* out, uint32_t count) {
    switch (spec_.mode) {
      case VaryMode::kIncreasing:
        for (uint32_t i = 0; i < count; ++i) {
          out[i] = word(next_);
          next_ += step_;
          if (next_ > spec_.max) next_ -= random_.range;  // wraps around
        }
        break;
      case VaryMode::kDecreasing:
        for (uint32_t i = 0; i < count; ++i) {
          out[i] = word(next_);
          next_ = next_ - spec_.min < step_ ? next_ + random_.range - step_ : next_ - step_;
        }
        break;
      case VaryMode::kEnumerate:  // values come from the stream's TupleEnumerator
        break;
      case VaryMode::kRandom:  // (a call per block of frames: its set-up is shared by 128 values)
        kernels_->fill_random(random_, out, count);
        break;
    }
  }
  const FieldSpec& spec() const { return spec_; }
  // The word written for the value min + offset (enumeration digits).
  uint16_t word_at(uint32_t offset) const { return word(spec_.min + offset); }
  // One's complement of the template's word: adding value + this to a sum replaces the
  // template's contribution by the new value (RFC 1624, eqn. 3).
  uint16_t not_template() const { return not_template_; }
  // The kernels chosen when the generator was made (one instruction set for a whole trial).
  const FieldKernels& kernels() const { return *kernels_; }

 private:
  uint16_t word(uint32_t v) const { return uint16_t(other_ | (v << spec_.shift)); }

  FieldSpec spec_;
  const FieldKernels* kernels_;
  uint16_t other_, not_template_;
  uint32_t step_;
  uint32_t next_;
  RandomFieldState random_;
};

}  // namespace xlp
