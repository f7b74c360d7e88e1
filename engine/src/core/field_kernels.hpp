// The vector kernels of the varying fields (fields.hpp), compiled once per instruction set
// and chosen at run time: a binary built for a generic x86-64 target uses AVX-512 or AVX2
// where the CPU has them, and SSE2 (or plain C++ off x86) everywhere else.
//
// This header is shared by the engine and by the kernels' translation units, which are
// compiled with wider instruction sets than the rest (field_kernels_*.cpp). It therefore
// holds data and declarations only, no function bodies: an inline function that a kernel
// unit instantiated with AVX-512 instructions could otherwise be the copy the linker keeps
// for the whole program (one definition rule), and crash on a CPU without AVX-512. The
// build checks that the kernels' objects define no such shared symbol
// (tests/check_kernel_objects.cmake).
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/pacing.hpp"

namespace xlp {

constexpr size_t kMaxFields = 8;  // varying fields per stream
constexpr size_t kMaxCeRows = 12;  // an emulated CE's words: eight IPv6 words, two IPv4 words, the tag's, a port

// Instruction sets with their own kernels, lowest first. kScalar is plain C++ (the only one
// off x86); kSse needs SSE2 (every x86-64 CPU); kAvx2 AVX2; kAvx512 AVX-512 F and BW.
enum class Isa { kScalar, kSse, kAvx2, kAvx512 };

// A pseudorandom field's generator state. The values are defined independently of the
// instruction set, so that a seed gives the same frames on every CPU:
//  * eight xoshiro256** generators ("lanes"), stepped together; a step yields 8 x 64 bits,
//    read as 32 little-endian 16-bit words w[0..31] (lane 0's low word first);
//  * a step gives 16 draws x_i = w[16 + i] * 2^16 + w[i] (i = 0..15), in order of i;
//  * a draw maps onto [0, range) by Lemire's multiply-shift, m = x * range: rejected when
//    m mod 2^32 < threshold = 2^32 mod range (so every value is exactly equally likely),
//    else the value is min + m / 2^32;
//  * the field's word is (value << shift) | other.
// Accepted values that a burst did not use wait in `left` for the next burst, so the
// sequence does not depend on how frames are grouped into bursts.
struct RandomFieldState {
  uint64_t s[4][8];          // s[word][lane]
  uint16_t left[32];         // accepted words not used yet: left[left_begin..left_end)
  uint32_t left_begin = 0, left_end = 0;
  uint32_t range = 1;        // max - min + 1: 1..65536
  uint32_t threshold = 0;    // 2^32 mod range
  uint16_t min = 0;
  uint16_t other = 0;        // the template's byte that an 8-bit field leaves alone
  uint8_t shift = 0;         // 8 for the high byte of the word
};

// Frames whose varying words are computed together (fields.hpp, FieldBlock): four bursts, so
// that a kernel call's set-up (constants into registers, the loops' start and end, the CE's
// draws) is shared by 128 frames (on AVX2 a call for a burst of 32 frames ran its loops twice;
// the words of MAP-E frames from a million CEs took 2.9 ns per frame, 2.2 with 128).
constexpr uint32_t kFrameBlock = 4 * kMaxBurst;

// One block's varying words, row by row (a row per field, then the IPv4 header checksum),
// and per frame what they change in the UDP checksum sum and the frame's bytes of the 16-byte
// windows that hold the varying words (fields.hpp, FieldLayout), as 8-byte chunks: the
// template's bytes with the frame's words in place. The sender stores a frame's windows with a
// few 16-byte moves: per frame, every store into the frame costs (a scattered 2-byte store per
// word had cost as much as generating the values), while the chunks are built for the whole
// block with vector operations.
struct BlockWords {
  // The fields' rows, an emulated CE's (ce.hpp: eight IPv6 words, two IPv4 words, a port) and
  // the IPv4 header checksum.
  static constexpr uint32_t kRows = kMaxFields + kMaxCeRows + 1;
  // Windows at most: the varying words lie within 64 bytes (check_span; the widest: a
  // tunnel's IPv6 source address from its third word to the inner UDP ports, 52 bytes, RFC
  // 2473 IPv4 in IPv6 with a MAP-E CE's fields, which two or three windows cover).
  static constexpr uint32_t kWindows = 4;  // of 16 bytes (fields.hpp)
  static constexpr uint32_t kChunks = 2 * kWindows;
  alignas(64) uint16_t words[kRows][kFrameBlock];   // host order
  // Folded; for stamp_frame's extra_sum and stamp_checksums (which reads whole registers, up
  // to a burst past the block's end).
  alignas(64) uint16_t udp_sum[kFrameBlock + kMaxBurst];
  // Little-endian loads of the frame's bytes. The chunks of a pair of them (a 16-byte window,
  // BlockSums::pairs) are stored together, as one 16-byte record per frame: chunks 2p and 2p
  // + 1 of frame k at &chunks[2p][2k] (the sender loads a window with one move).
  alignas(64) uint64_t chunks[kChunks][kFrameBlock];
};

// What finish() needs besides the rows' words (the first `rows` rows of BlockWords).
struct BlockSums {
  uint32_t rows = 0;         // rows of values (the fields' and a CE's)
  uint32_t count = 0;        // frames in the block
  uint32_t udp_rows = 0;     // bit r: row r is covered by the UDP checksum (not a tunnel's address)
  uint32_t ipv4_rows = 0;    // bit r: row r is in the IPv4 header
  bool ipv4_checksum = false;  // add row `rows`: the IPv4 header checksum
  uint32_t udp_base = 0;     // sum of the fields' ~template words (RFC 1624 eqn. 3)
  uint32_t ipv4_base = 0;    // the template's IPv4 header sum (checksum field zero) + the same
  uint32_t chunks = 0;       // one or two per window (FieldLayout)
  uint32_t pairs = 0;        // windows of two chunks: chunks 0 .. 2 * pairs - 1
  // Set for the first `chunks` chunks only (no per-block clearing of the rest):
  uint64_t template_chunks[BlockWords::kChunks];  // the template's, varying words zero
  int8_t lane_row[BlockWords::kChunks][4];  // the row of each 16-bit word of a chunk; -1: the template's
};

// An emulated CE's words (ce.hpp, CeGenerator) as placements of the bits of its index (the
// index's low and high 16-bit words, index[0] and index[1]): row r's word of a frame is
// row[r].constant | the runs' bits, (index[run.word] >> run.from & run.mask) << run.to, plus in
// the port row the bits of the port's index p in its set, PortSet::port(0, p) = ((p >>
// port_shift) + port_block) << port_block_shift | (p & port_low); shifts by 16 or more give 0.
// A joint draw v = top * ports + p in index[joint_word] (with the port's index, one draw) is
// split first, q = floor(v / ports) in 16-bit arithmetic (ce.hpp, SmallDivisor: t = v *
// multiplier >> 16, q = (t + (v - t) / 2) >> shift).
struct CeRun {
  uint8_t word, from, to;
  uint16_t mask;
};
struct CeRowPlan {
  uint16_t constant = 0;
  bool port = false;
  uint32_t runs = 0;
  CeRun run[16];
};
struct CePlacements {
  uint32_t rows = 0;  // 0: split only (the CE's words are looked up)
  CeRowPlan row[kMaxCeRows];
  bool joint = false;
  uint8_t joint_word = 0, shift = 0;
  uint16_t ports = 1, multiplier = 1;
  uint8_t port_shift = 16, port_block_shift = 0;
  uint16_t port_block = 0, port_low = 0xffff;
};

struct FieldKernels {
  Isa isa;
  const char* name;  // "scalar", "sse", "avx2", "avx512"
  // out[0..count) = the field's next `count` words.
  void (*fill_random)(RandomFieldState& f, uint16_t* out, uint32_t count);
  // udp_sum[k] = udp_base + the sum of frame k's words in the UDP checksum, folded; the IPv4 header
  // checksum row from ipv4_base and the words of the header's fields; chunks[c][k] =
  // template_chunks[c] with frame k's words of chunk c in network byte order.
  void (*finish)(BlockWords& b, const BlockSums& s);
  // The UDP checksum fields (network order) of a burst of frames stamped ahead: frame k's
  // other words sum to udp_sum[k] (folded), its sequence number is first_seq + k and
  // stamp_sum is the template's base sum plus the burst's timestamp's words (frame.hpp,
  // stamp_frame), for k < count <= kMaxBurst. Reads and writes whole registers, up to
  // kMaxBurst entries.
  void (*stamp_checksums)(const uint16_t* udp_sum, uint32_t count, uint32_t first_seq, uint32_t stamp_sum,
                          uint16_t* checksum);
  // Splits a joint draw (index[joint_word] -> CE part, port[] -> the port's index) and writes
  // the placements' rows[0..rows) for frames 0..count (may run past count to a whole register).
  void (*place_ce)(uint16_t (*index)[kFrameBlock], uint16_t* port, const CePlacements& p,
                   uint16_t (*rows)[kFrameBlock], uint32_t count);
  // For the tests: the Lemire mapping of the draws x[0..n) (n a multiple of 32) onto
  // [0, range): out[i] = x[i] * range >> 32, accepted[i] = 1 unless rejected.
  void (*map)(const uint32_t* x, uint32_t n, uint32_t range, uint32_t threshold, uint16_t* out,
              uint8_t* accepted);
};

// The kernels of each instruction set (the x86 ones exist in x86 builds only).
extern const FieldKernels kScalarKernels, kSseKernels, kAvx2Kernels, kAvx512Kernels;

// The kernels in use (isa.cpp): those chosen by use_kernels(), else those named by the
// environment variable XLATPERF_ISA (scalar, sse, avx2 or avx512: a lower instruction set
// than the CPU's best, for tests and A/B benchmarks), else the best this CPU runs. Throws
// std::invalid_argument naming the variable, its value and the allowed values when the
// value is unknown or the CPU cannot run it.
const FieldKernels& field_kernels();
// Bit i set: this CPU (and this build) can run the kernels of Isa(i).
uint32_t supported_isas();
// The kernels of `isa`; throws std::invalid_argument when this CPU cannot run them.
const FieldKernels& kernels_for(Isa isa);
// The kernels named `name` as XLATPERF_ISA would name them; throws as field_kernels() does.
const FieldKernels& kernels_named(const char* name);
// Makes field_kernels() return `k` (null: back to the environment's or the best choice);
// returns the previous choice. Not thread-safe: before a trial or in tests.
const FieldKernels* use_kernels(const FieldKernels* k);

}  // namespace xlp
