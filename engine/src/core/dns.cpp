#include "core/dns.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/bytes.hpp"
#include "core/random.hpp"

namespace xlp::dns {

namespace {

uint8_t lower(uint8_t c) { return c >= 'A' && c <= 'Z' ? uint8_t(c | 0x20) : c; }
// Eight hex digits in either case, each byte of `x` one (the first in the top byte: load_be64),
// as their values, one to a byte, into *nibbles; returns nonzero when one is no hex digit. All 8
// at once (every query and reply has 18 digits).
uint64_t hex_nibbles(uint64_t x, uint64_t* nibbles) {
  constexpr uint64_t kOnes = 0x0101010101010101, kTop = 0x80 * kOnes;
  // With every lane below 0x80, adding (0x80 - lo) sets a lane's top bit exactly when it is at
  // least lo, adding (0x7f - hi) exactly when it is over hi, and carries into no other lane. A
  // lane from 0x80 up is no digit (and its carry spoils only lanes refused anyway).
  const auto in_range = [](uint64_t v, uint8_t lo, uint8_t hi) {
    return (v + (0x80 - lo) * kOnes) & ~(v + (0x7f - hi) * kOnes) & kTop;
  };
  const uint64_t digit = in_range(x, '0', '9');
  const uint64_t letter = in_range(x | 0x20 * kOnes, 'a', 'f');  // 0x20: lower case
  *nibbles = (x & 0x0f * kOnes) + (letter >> 7) * 9;  // 'a'..'f' and 'A'..'F' end in 1..6
  return (x & kTop) | ((digit | letter) ^ kTop);
}
// The value of 8 lanes' nibbles (hex_nibbles), the top lane's first: side by side in 32 bits.
uint32_t pack_nibbles(uint64_t v) {
  v = (v | v >> 4) & 0x00ff00ff00ff00ff;
  v = (v | v >> 8) & 0x0000ffff0000ffff;
  return uint32_t(v | v >> 16);
}

constexpr size_t kMaxName = 255;    // RFC 1035 §3.1, in wire form
constexpr int kMaxPointers = 16;    // a compression loop ends here (no real name needs more)

// The name at `offset` of a message, in wire form without compression and in lower case, into
// `out` (kMaxName bytes); `end`: where the name ends at `offset`. False when it cannot be read
// (past the message, a pointer loop, over kMaxName, a reserved label type).
bool read_wire_name(const uint8_t* msg, size_t len, size_t offset, uint8_t* out, size_t* out_len, size_t* end) {
  size_t at = offset, n = 0;
  int pointers = 0;
  bool jumped = false;
  for (;;) {
    if (at >= len) return false;
    const uint8_t l = msg[at];
    if ((l & 0xc0) == 0xc0) {  // a pointer to the rest of the name
      if (at + 1 >= len || ++pointers > kMaxPointers) return false;
      if (!jumped) *end = at + 2;
      jumped = true;
      at = size_t(l & 0x3f) << 8 | msg[at + 1];
      continue;
    }
    if (l & 0xc0) return false;  // 0x40, 0x80: label types no one uses (RFC 6891 §5)
    if (n + 1 + l > kMaxName || at + 1 + l > len) return false;
    out[n++] = l;
    for (size_t i = 0; i < l; ++i) out[n++] = lower(msg[at + 1 + i]);
    at += 1 + l;
    if (l == 0) break;
  }
  if (!jumped) *end = at;
  *out_len = n;
  return true;
}

// A resource record's fixed part after its owner name (RFC 1035 §4.1.3).
struct RecordHeader {
  uint16_t type, klass;
  uint32_t ttl;
  uint16_t rdlength;
  size_t rdata;  // offset of its data
};
constexpr size_t kRecordFixed = 10;

// The record at `at`; `owner` (kMaxName bytes) receives its owner name in lower case, unless the
// owner is a pointer to the question's name (the answers a server writes), which sets
// *owner_is_question instead: the hot path, no name read twice.
std::optional<RecordHeader> read_record(const uint8_t* msg, size_t len, size_t at, size_t* end,
                                        uint8_t* owner = nullptr, size_t* owner_len = nullptr,
                                        bool* owner_is_question = nullptr) {
  uint8_t scratch[kMaxName];
  size_t scratch_len = 0, after = 0;
  if (owner_is_question) *owner_is_question = false;
  if (at + 2 <= len && load_be16(msg + at) == (0xc000 | kHeader) && owner_is_question) {
    *owner_is_question = true;
    after = at + 2;
  } else if (at < len && msg[at] == 0) {  // the root (an OPT record's owner): nothing to follow
    if (owner) {
      owner[0] = 0;
      *owner_len = 1;
    }
    after = at + 1;
  } else if (!read_wire_name(msg, len, at, owner ? owner : scratch, owner_len ? owner_len : &scratch_len, &after)) {
    return std::nullopt;
  }
  if (after + kRecordFixed > len) return std::nullopt;
  const uint8_t* f = msg + after;
  RecordHeader h{load_be16(f), load_be16(f + 2), uint32_t(load_be16(f + 4)) << 16 | load_be16(f + 6), load_be16(f + 8),
                 after + kRecordFixed};
  if (h.rdata + h.rdlength > len) return std::nullopt;
  *end = h.rdata + h.rdlength;
  return h;
}

uint8_t* write_opt(uint8_t* p) {
  p[0] = 0;  // the root
  store_be16(p + 1, kTypeOpt);
  store_be16(p + 3, kEdnsPayload);
  store_be32(p + 5, 0);  // extended RCODE 0, version 0, no DO bit
  store_be16(p + 9, 0);
  return p + kOptRecord;
}

}  // namespace

Zone::Zone(std::string_view text, NameStyle style) : style_(style) {
  if (!text.empty() && text.back() == '.') text.remove_suffix(1);
  if (text.empty()) throw std::invalid_argument("zone: empty");
  size_t start = 0;
  while (start <= text.size()) {
    const size_t dot = std::min(text.find('.', start), text.size());
    const std::string_view label = text.substr(start, dot - start);
    if (label.empty()) throw std::invalid_argument("zone \"" + std::string(text) + "\": an empty label");
    if (label.size() > 63)
      throw std::invalid_argument("zone \"" + std::string(text) + "\": label \"" + std::string(label) +
                                  "\" is over 63 bytes");
    for (char c : label)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-'))
        throw std::invalid_argument("zone \"" + std::string(text) + "\": '" + std::string(1, c) +
                                    "' is not a letter, digit or hyphen");
    wire_.push_back(uint8_t(label.size()));
    case_mask_.push_back(0);
    for (char c : label) {
      wire_.push_back(lower(uint8_t(c)));
      case_mask_.push_back(std::isalpha(static_cast<unsigned char>(c)) ? 0x20 : 0);
    }
    start = dot + 1;
  }
  wire_.push_back(0);
  case_mask_.push_back(0);
  if (name_size() > kMaxName)
    throw std::invalid_argument("zone \"" + std::string(text) + "\": a test name in it would be " +
                                std::to_string(name_size()) + " bytes, over 255");
}

bool Zone::matches(const uint8_t* p) const {
  const size_t n = wire_.size();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t got, mask, want;
    std::memcpy(&got, p + i, 8);
    std::memcpy(&mask, case_mask_.data() + i, 8);
    std::memcpy(&want, wire_.data() + i, 8);
    if ((got | mask) != want) return false;
  }
  for (; i < n; ++i)
    if ((p[i] | case_mask_[i]) != wire_[i]) return false;
  return true;
}

uint64_t Zone::first_word_letters() const {
  if (wire_.size() < 8) return 0;
  uint64_t letters = 0;
  for (size_t i = 0; i < 8; ++i) letters = letters << 8 | case_mask_[i];
  return letters;
}

CaseFlips case_flips(uint64_t seq, uint64_t nonce_hex, uint64_t index_hex, uint64_t zone_letters) {
  // One random bit per lane and word: bits 5, 4 and 3 of each byte of the hash, moved to 0x20.
  const uint64_t r = mix64(seq ^ 0x6a09e667f3bcc909);
  return {r & hex_letters(nonce_hex), (r << 1) & hex_letters(index_hex), (r << 2) & zone_letters};
}

std::array<uint64_t, 2> dns64perf_label(uint32_t address) {
  // Each byte's 3 digits, from a table of 256 (built once).
  static const std::array<uint32_t, 256> kDigits = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t v = 0; v < 256; ++v) t[v] = ('0' + v / 100) << 16 | ('0' + v / 10 % 10) << 8 | ('0' + v % 10);
    return t;
  }();
  const auto d = [&](int shift) { return uint64_t(kDigits[(address >> shift) & 0xff]); };
  return {uint64_t(kDns64perfLabelChars) << 56 | d(24) << 32 | uint64_t('-') << 24 | d(16),
          uint64_t('-') << 56 | d(8) << 32 | uint64_t('-') << 24 | d(0)};
}

NameStamp Zone::stamp(const TestName& name, const CaseFlips& flips) const {
  static_assert(kIndexAt == kHeader + kIndexInName && kIndexDigits == 8);  // the name's index, as stamped here
  NameStamp s;
  s.zone_at = uint8_t(zone_in_name());
  s.zone_flips = flips.zone;
  if (style_ == NameStyle::kDns64perf) {
    s.at = 0;
    s.words = 2;
    s.word = dns64perf_label(name.index);
  } else {
    s.at = kIndexInName;
    s.word[0] = hex_digits(name.index) ^ flips.index;
    s.nonce_flips = flips.nonce;
  }
  return s;
}

void write_name(uint8_t* p, const TestName& name, const Zone& zone, const CaseFlips& flips) {
  std::memcpy(p + zone.zone_in_name(), zone.wire().data(), zone.wire().size());
  if (zone.style() == NameStyle::kXlatperf) {
    p[0] = uint8_t(kLabelChars);
    store_be64(p + kNonceInName, hex_digits(name.nonce));
    store_be16(p + 9, uint16_t(hex_digits(name.stream)));  // its last 2 digits
  }
  const NameStamp s = zone.stamp(name, flips);
  for (size_t i = 0; i < s.words; ++i) store_be64(p + s.at + 8 * i, s.word[i]);
  if (s.nonce_flips) store_be64(p + kNonceInName, load_be64(p + kNonceInName) ^ s.nonce_flips);
  if (s.zone_flips) store_be64(p + s.zone_at, load_be64(p + s.zone_at) ^ s.zone_flips);
}

namespace {

// The test name whose first label (kLabelChars hex digits) is at `label`: the nonce's 8 digits,
// then 8 that start with the stream's 2, then the index's 8 (overlapping the previous word).
std::optional<TestName> parse_label(const uint8_t* label) {
  uint64_t nonce, stream, index;
  if (hex_nibbles(load_be64(label), &nonce) | hex_nibbles(load_be64(label + 8), &stream) |
      hex_nibbles(load_be64(label + 10), &index))
    return std::nullopt;
  return TestName{pack_nibbles(nonce), uint8_t(stream >> 52 | (stream >> 48 & 0x0f)), pack_nibbles(index)};
}

}  // namespace

std::optional<TestName> read_name(const uint8_t* msg, size_t len, size_t offset, const Zone& zone, size_t* end) {
  if (zone.style() == NameStyle::kDns64perf) {
    const auto address = read_dns64perf_name(msg, len, offset, zone, end);
    if (!address) return std::nullopt;
    return TestName{0, 0, *address};
  }
  // The usual case, the name written out where it starts (a question's): read in place.
  const size_t size = zone.name_size();
  if (offset + size <= len && msg[offset] == kLabelChars &&
      zone.matches(msg + offset + 1 + kLabelChars)) {
    *end = offset + size;
    return parse_label(msg + offset + 1);
  }
  uint8_t wire[kMaxName];
  size_t n = 0;
  if (!read_wire_name(msg, len, offset, wire, &n, end)) return std::nullopt;
  if (n != size || wire[0] != kLabelChars ||
      std::memcmp(wire + 1 + kLabelChars, zone.wire().data(), zone.wire().size()) != 0)
    return std::nullopt;
  return parse_label(wire + 1);
}

size_t write_query(uint8_t* p, const TestName& name, const Zone& zone, uint16_t id, uint16_t qtype, bool edns) {
  store_be16(p, id);
  store_be16(p + 2, kFlagRd);
  store_be16(p + 4, 1);  // one question
  store_be16(p + 6, 0);
  store_be16(p + 8, 0);
  store_be16(p + 10, edns ? 1 : 0);
  uint8_t* q = p + kHeader;
  write_name(q, name, zone);
  q += zone.name_size();
  store_be16(q, qtype);
  store_be16(q + 2, kClassIn);
  q += kQuestionTail;
  if (edns) q = write_opt(q);
  return size_t(q - p);
}

Records records_of(const TestName& name, const RecordRule& rule, NameStyle style) {
  if (style == NameStyle::kDns64perf) return Records{name.index, false, {}};
  const uint64_t h = mix64(uint64_t(name.nonce) << 40 ^ uint64_t(name.stream) << 32 ^ name.index);
  Records r;
  const uint32_t host_mask = rule.host_mask();
  r.a = (rule.a_base & ~host_mask) | (uint32_t(h) & host_mask);
  r.has_aaaa = (h >> 48) < rule.aaaa_share;  // 16 other bits of the hash against the share
  if (r.has_aaaa) {
    r.aaaa = rule.aaaa_base;
    store_be32(r.aaaa.data() + 12, uint32_t(h));
  }
  return r;
}

std::array<uint8_t, 16> synthesize(const std::array<uint8_t, 16>& prefix, int prefix_bits, uint32_t ipv4) {
  if (prefix_bits != 32 && prefix_bits != 40 && prefix_bits != 48 && prefix_bits != 56 && prefix_bits != 64 &&
      prefix_bits != 96)
    throw std::invalid_argument("RFC 6052 prefix length " + std::to_string(prefix_bits) +
                                ": allowed 32, 40, 48, 56, 64, 96");
  std::array<uint8_t, 16> out{};
  const size_t prefix_bytes = size_t(prefix_bits) / 8;
  std::copy_n(prefix.begin(), prefix_bytes, out.begin());
  size_t at = prefix_bytes;
  for (int shift = 24; shift >= 0; shift -= 8) {
    if (at == 8) ++at;  // bits 64..71: the u octet, zero (RFC 6052 §2.2)
    out[at++] = uint8_t(ipv4 >> shift);
  }
  return out;
}

std::optional<uint32_t> read_dns64perf_name(const uint8_t* msg, size_t len, size_t offset, const Zone& zone,
                                            size_t* end) {
  // Written out where it starts (a question's name): the label's length, 4 x 3 digits with a
  // hyphen between, then the zone (any case).
  constexpr size_t kLabel = 15;
  if (offset + 1 + kLabel + zone.wire().size() > len || msg[offset] != kLabel ||
      !zone.matches(msg + offset + 1 + kLabel))
    return std::nullopt;
  uint32_t address = 0;
  for (size_t part = 0; part < 4; ++part) {
    const uint8_t* d = msg + offset + 1 + part * 4;
    if (part < 3 && d[3] != '-') return std::nullopt;
    uint32_t value = 0;
    for (size_t i = 0; i < 3; ++i) {
      if (d[i] < '0' || d[i] > '9') return std::nullopt;
      value = value * 10 + uint32_t(d[i] - '0');
    }
    if (value > 255) return std::nullopt;
    address = address << 8 | value;
  }
  *end = offset + 1 + kLabel + zone.wire().size();
  return address;
}

size_t answer_in_place(uint8_t* msg, size_t len, size_t cap, const Zone& zone, const RecordRule& rule) {
  if (len < kHeader) return 0;
  const uint16_t flags = load_be16(msg + 2);
  if ((flags & kFlagQr) || (flags & kOpcodeMask) || load_be16(msg + 4) != 1 || load_be16(msg + 6) || load_be16(msg + 8))
    return 0;
  size_t q_end = 0;
  std::optional<Records> found;
  if (const auto name = read_name(msg, len, kHeader, zone, &q_end); name && q_end == kHeader + zone.name_size())
    found = records_of(*name, rule, zone.style());
  else if (const auto a = read_dns64perf_name(msg, len, kHeader, zone, &q_end))
    found = Records{*a, false, {}};
  if (!found || q_end + kQuestionTail > len) return 0;
  const Records& records = *found;
  const uint16_t qtype = load_be16(msg + q_end), qclass = load_be16(msg + q_end + 2);
  if (qclass != kClassIn || (qtype != kTypeA && qtype != kTypeAaaa)) return 0;
  // The additional section: an OPT record says the asker speaks EDNS(0); the rest is skipped.
  bool edns = false;
  size_t at = q_end + kQuestionTail;
  for (uint16_t i = 0, n = load_be16(msg + 10); i < n; ++i) {
    const auto rr = read_record(msg, len, at, &at);
    if (!rr) return 0;
    edns |= rr->type == kTypeOpt;
  }
  const bool has = qtype == kTypeA || records.has_aaaa;
  const size_t rdlength = qtype == kTypeA ? 4 : 16;
  // NODATA carries the zone's SOA for negative caching (RFC 2308 §2.2): owner, MNAME and RNAME
  // all point at the zone's part of the question name.
  constexpr size_t kSoaData = 2 + 2 + 5 * 4;
  const size_t answer = has ? 2 + kRecordFixed + rdlength : 2 + kRecordFixed + kSoaData;
  const size_t out_len = q_end + kQuestionTail + answer + (edns ? kOptRecord : 0);
  if (out_len > cap) return 0;
  store_be16(msg + 2, uint16_t(kFlagQr | kFlagAa | (flags & kFlagRd)));  // NOERROR
  store_be16(msg + 6, has ? 1 : 0);
  store_be16(msg + 8, has ? 0 : 1);
  store_be16(msg + 10, edns ? 1 : 0);
  uint8_t* p = msg + q_end + kQuestionTail;
  const uint16_t zone_pointer = uint16_t(0xc000 | (q_end - zone.wire().size()));
  if (has) {
    store_be16(p, 0xc000 | kHeader);  // the question's name
    store_be16(p + 2, qtype);
    store_be16(p + 4, kClassIn);
    store_be32(p + 6, rule.ttl);
    store_be16(p + 10, uint16_t(rdlength));
    if (qtype == kTypeA) store_be32(p + 12, records.a);
    else std::memcpy(p + 12, records.aaaa.data(), 16);
    p += 12 + rdlength;
  } else {
    store_be16(p, zone_pointer);
    store_be16(p + 2, kTypeSoa);
    store_be16(p + 4, kClassIn);
    store_be32(p + 6, rule.negative_ttl());  // RFC 2308 §3: the lesser of its TTL and MINIMUM
    store_be16(p + 10, uint16_t(kSoaData));
    store_be16(p + 12, zone_pointer);  // MNAME
    store_be16(p + 14, zone_pointer);  // RNAME
    store_be32(p + 16, 1);             // SERIAL
    store_be32(p + 20, 3600);          // REFRESH
    store_be32(p + 24, 600);           // RETRY
    store_be32(p + 28, 86400);         // EXPIRE
    store_be32(p + 32, rule.soa_minimum);  // MINIMUM: how long NODATA is cached, at most
    p += 12 + kSoaData;
  }
  if (edns) p = write_opt(p);
  return size_t(p - msg);
}

namespace {

// A reply's verdict by its header alone, before its question: malformed (short, or no response),
// a mismatch (another ID or opcode, not `questions` questions), or none yet.
std::optional<ReplyVerdict> header_verdict(const uint8_t* msg, size_t len, uint16_t id, uint16_t questions = 1) {
  if (len < kHeader) return ReplyVerdict::kMalformed;
  const uint16_t flags = load_be16(msg + 2);
  if (!(flags & kFlagQr)) return ReplyVerdict::kMalformed;
  if (load_be16(msg) != id || (flags & kOpcodeMask) || load_be16(msg + 4) != questions) return ReplyVerdict::kMismatch;
  return std::nullopt;
}

// Whether an address lies in one of `prefixes` (IPv6: the first `bits` bits alike).
bool in_prefixes(const std::vector<std::pair<std::array<uint8_t, 16>, int>>& prefixes,
                 const std::array<uint8_t, 16>& address) {
  for (const auto& [net, bits] : prefixes) {
    const int whole = bits / 8, rest = bits % 8;
    if (std::memcmp(net.data(), address.data(), size_t(whole)) != 0) continue;
    if (rest && ((net[size_t(whole)] ^ address[size_t(whole)]) & uint8_t(0xff << (8 - rest)))) continue;
    return true;
  }
  return false;
}
bool in_prefixes(const std::vector<std::pair<uint32_t, int>>& prefixes, uint32_t address) {
  for (const auto& [net, bits] : prefixes)
    if (bits == 0 || ((net ^ address) >> (32 - bits)) == 0) return true;
  return false;
}

// The verdict of a reply's TC flag and RCODE; none for a whole NOERROR reply.
std::optional<ReplyVerdict> outcome_verdict(uint16_t flags) {
  if (flags & kFlagTc) return ReplyVerdict::kTruncated;
  switch (flags & kRcodeMask) {
    case kNoError: return std::nullopt;
    case kServFail: return ReplyVerdict::kServFail;
    case kNxDomain: return ReplyVerdict::kNxDomain;
    default: return ReplyVerdict::kOtherRcode;
  }
}

}  // namespace

uint32_t upstream_asks(const Records& records, uint16_t qtype,
                       const std::vector<std::pair<std::array<uint8_t, 16>, int>>& exclude) {
  if (qtype == kTypeA) return 1;
  return records.has_aaaa && !in_prefixes(exclude, records.aaaa) ? 1 : 2;
}

ReplyVerdict judge_headless_reply(const uint8_t* msg, size_t len, uint16_t id) {
  if (const auto v = header_verdict(msg, len, id, 0)) return *v;
  return outcome_verdict(load_be16(msg + 2)).value_or(ReplyVerdict::kMalformed);
}

ReplyVerdict judge_reply(const uint8_t* msg, size_t len, uint16_t id, const TestName& name, uint16_t qtype,
                         const Expectation& expect, const CaseFlips& flips) {
  if (const auto v = header_verdict(msg, len, id)) return *v;
  // The question, as asked (names compare without regard to case).
  size_t at = 0;
  const auto asked = read_name(msg, len, kHeader, *expect.zone, &at);
  if (!asked) {  // no test name of the zone: unreadable, or another name
    uint8_t question[kMaxName];
    size_t question_len = 0;
    return read_wire_name(msg, len, kHeader, question, &question_len, &at) && at + kQuestionTail <= len
               ? ReplyVerdict::kMismatch
               : ReplyVerdict::kMalformed;
  }
  return judge_reply(msg, len, id, name, qtype, expect, *asked, at, flips);
}

ReplyVerdict judge_reply(const uint8_t* msg, size_t len, uint16_t id, const TestName& name, uint16_t qtype,
                         const Expectation& expect, const TestName& asked, size_t asked_end, const CaseFlips& flips) {
  if (const auto v = header_verdict(msg, len, id)) return *v;
  const uint16_t flags = load_be16(msg + 2);
  size_t at = asked_end;
  if (at + kQuestionTail > len) return ReplyVerdict::kMalformed;
  if (!(asked == name) || load_be16(msg + at) != qtype || load_be16(msg + at + 2) != kClassIn)
    return ReplyVerdict::kMismatch;
  at += kQuestionTail;
  if (const auto v = outcome_verdict(flags)) return *v;
  const Records records = records_of(name, expect.rule, expect.zone->style());
  std::array<uint8_t, 16> want{};
  size_t want_len = 4;
  bool nodata = false;  // no record of the asked type is the right answer
  uint32_t max_ttl = expect.rule.ttl;  // of the answer's record
  if (qtype == kTypeAaaa) {
    const bool has = records.has_aaaa, excluded = has && in_prefixes(expect.exclude, records.aaaa);
    const bool real = has && !excluded;
    nodata = !real && !expect.mapped.empty() && !in_prefixes(expect.mapped, records.a);
    want = real ? records.aaaa : synthesize(expect.prefix, expect.prefix_bits, records.a);
    want_len = 16;
    // A synthesis lives no longer than the A record and the negative AAAA answer it replaces
    // (RFC 6147 §5.1.7). An excluded AAAA record brings no SOA: the A record's TTL bounds it
    // then (the RFC's 600 s there is a SHOULD, which BIND 9.18 does not follow).
    if (!real && !excluded && !(expect.checks & kSynthesisTtlOfA))
      max_ttl = std::min(max_ttl, expect.rule.negative_ttl());
  } else {
    store_be32(want.data(), records.a);
  }
  // Every address record of the asked type, owned by the asked name, must be the one expected;
  // there must be one. Records of other types (a CNAME, an RRSIG) are not judged.
  uint8_t question[kMaxName];
  size_t question_len = 0;  // read when an owner is written out
  int found = 0;
  bool ttl_over = false;
  for (uint16_t i = 0, n = load_be16(msg + 6); i < n; ++i) {
    uint8_t owner[kMaxName];
    size_t owner_len = 0;
    bool owner_is_question = false;
    const auto rr = read_record(msg, len, at, &at, owner, &owner_len, &owner_is_question);
    if (!rr) return ReplyVerdict::kMalformed;
    if (rr->type != qtype || rr->klass != kClassIn) continue;
    // An owner written out (not the question's pointer) is compared with the question's name.
    size_t question_end = 0;
    if (!owner_is_question && question_len == 0) read_wire_name(msg, len, kHeader, question, &question_len, &question_end);
    const bool asked_name = owner_is_question || (owner_len == question_len && std::memcmp(owner, question, owner_len) == 0);
    // (Sizes the compiler knows: two compares in place of a call.)
    const bool same = want_len == 16 ? std::memcmp(msg + rr->rdata, want.data(), 16) == 0
                                     : std::memcmp(msg + rr->rdata, want.data(), 4) == 0;
    if (nodata || !asked_name || rr->rdlength != want_len || !same) return ReplyVerdict::kWrongAnswer;
    ++found;
    ttl_over |= rr->ttl > max_ttl;
  }
  if (!found && !nodata) return ReplyVerdict::kWrongAnswer;
  const uint8_t checks = expect.checks;
  if (!checks) return ReplyVerdict::kGood;
  if ((checks & kCheckDuplicates) && found > 1) return ReplyVerdict::kDuplicateRecord;
  // The authority and additional sections: a NODATA answer's SOA, the OPT record.
  bool soa_over = false, opt = false;
  for (uint32_t i = 0, n = uint32_t(load_be16(msg + 8)) + load_be16(msg + 10); i < n; ++i) {
    const bool authority = i < load_be16(msg + 8);
    const auto rr = read_record(msg, len, at, &at);
    if (!rr) return ReplyVerdict::kMalformed;
    soa_over |= authority && rr->type == kTypeSoa && rr->ttl > expect.rule.negative_ttl();
    opt |= !authority && rr->type == kTypeOpt;
  }
  if ((checks & kCheckTtl) && (ttl_over || (nodata && soa_over))) return ReplyVerdict::kBadTtl;
  if ((checks & kCheckEdns) && expect.edns && !opt) return ReplyVerdict::kNoEdns;
  if ((checks & kCheckRa) && !(flags & kFlagRa)) return ReplyVerdict::kNoRa;
  if (checks & kCheckQuestion) {
    uint8_t sent[kMaxName];
    write_name(sent, name, *expect.zone, flips);
    if (std::memcmp(sent, msg + kHeader, expect.zone->name_size()) != 0) return ReplyVerdict::kQuestionCase;
  }
  return ReplyVerdict::kGood;
}

}  // namespace xlp::dns
