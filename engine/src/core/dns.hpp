// DNS messages of the tester (RFC 1035 §4, EDNS(0) RFC 6891) for RFC 8219 §9 DNS64
// benchmarking and resolved-queries measurements (issue 31, docs/dns.md): the client's queries,
// the authoritative side's answers written over the query in place, and the client's judgement
// of a reply. Pure: no DPDK.
//
// A test name is one label of hex digits, then the zone: <nonce><stream><index>.<zone>, e.g.
// 5be2a7c001000001f0.dns64perf.test. The nonce comes from the trial's seed (names differ
// between trials and runs, so no cache answers from an earlier trial); the index counts the
// trial's names (a name asked again to hit a cache keeps its index). The records a name has
// follow from the name alone (records_of), so the client recomputes what the authoritative side
// answered without asking it. Hex digits are read in either case: a resolver may randomise the
// case of the names it sends (draft-vixie-dnsext-dns0x20).
//
// A zone may instead have dns64perf++'s names (NameStyle::kDns64perf): <a>-<b>-<c>-<d>.<zone>
// in 3 digits each, whose A record is a.b.c.d and which have no AAAA record, as a zone a user
// writes for any authoritative server serves them (BIND's $GENERATE, NSD): the client asks them
// of a server that is not the tester's. They carry no stream and no nonce: a reply's port names
// the stream and its port and ID the query, as for a reply without its question.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace xlp::dns {

constexpr uint16_t kTypeA = 1, kTypeSoa = 6, kTypeAaaa = 28, kTypeOpt = 41, kClassIn = 1;
constexpr size_t kHeader = 12;
constexpr size_t kQuestionTail = 4;  // QTYPE, QCLASS
constexpr size_t kOptRecord = 11;    // root name, TYPE, CLASS (payload size), TTL, RDLENGTH 0
// The UDP payload size the tester announces and answers with (EDNS(0)): DNS flag day 2020's.
constexpr uint16_t kEdnsPayload = 1232;
// Header flags (RFC 1035 §4.1.1).
constexpr uint16_t kFlagQr = 0x8000, kFlagAa = 0x0400, kFlagTc = 0x0200, kFlagRd = 0x0100, kFlagRa = 0x0080;
constexpr uint16_t kOpcodeMask = 0x7800, kRcodeMask = 0x000f;
enum Rcode : uint8_t { kNoError = 0, kFormErr = 1, kServFail = 2, kNxDomain = 3, kNotImp = 4, kRefused = 5 };

// What a test name carries. A dns64perf++ name carries its IPv4 address alone: in `index`,
// nonce and stream 0.
struct TestName {
  uint32_t nonce = 0;  // the trial's, from its seed
  uint8_t stream = 0;  // the stream that asked
  uint32_t index = 0;  // the name's number in the trial
  bool operator==(const TestName&) const = default;
};
enum class NameStyle : uint8_t { kXlatperf, kDns64perf };
constexpr size_t kDns64perfLabelChars = 15;  // ddd-ddd-ddd-ddd
constexpr size_t kLabelChars = 18;  // nonce 8, stream 2, index 8 hex digits
// Where the index's digits lie in a query (from its start: the header, the label's length, the
// nonce and the stream), and how many.
constexpr size_t kIndexAt = 12 + 1 + 8 + 2;
constexpr size_t kIndexDigits = 8;
// The 8 hex digits (lower case) of a 32-bit value, the first in the top byte of the word: a
// name's index, written at kIndexAt of a query with store_be64. All 8 at once, each byte a lane:
// the value's nibbles spread one to a lane, then each made its digit ('0' + n, or 'a' + n - 10
// where n + 0x76 reaches the lane's top bit: n >= 10).
inline uint64_t hex_digits(uint32_t v) {
  constexpr uint64_t kOnes = 0x0101010101010101;
  uint64_t n = v;
  n = (n | n << 16) & 0x0000ffff0000ffff;
  n = (n | n << 8) & 0x00ff00ff00ff00ff;
  n = (n | n << 4) & 0x0f * kOnes;
  return n + '0' * kOnes + ((n + 0x76 * kOnes) >> 7 & kOnes) * ('a' - '0' - 10);
}

// Letter case in a query's name (draft-vixie-dnsext-dns0x20): a resolver copies the question
// into its reply letter for letter, and clients that randomise the case of their names rely on
// it. So each query's name has a case of its own, from its sequence number (case_flips), which
// the client holds the reply's question to. Three 8-byte words of the name change case: the
// nonce's digits, the index's, and the zone's first 8 bytes (a zone of at least that many); a
// word's flips are 0x20 in lanes that hold a lower-case letter (big-endian, as load_be64 reads
// it), and word ^ flips is that word with those letters upper case.
constexpr size_t kNonceInName = 1, kIndexInName = 1 + 10, kZoneInName = 1 + kLabelChars;
struct CaseFlips {
  uint64_t nonce = 0, index = 0, zone = 0;
};
// The lanes of 8 hex digits (hex_digits) that hold a letter ('a'..'f': from 0x61, which adding
// 0x1f takes to the lane's top bit; digits stay below it), 0x20 each.
inline uint64_t hex_letters(uint64_t hex) {
  constexpr uint64_t kOnes = 0x0101010101010101;
  return ((hex + 0x1f * kOnes) & 0x80 * kOnes) >> 2;
}
// Query `seq`'s flips, for a name of nonce digits `nonce_hex` and index digits `index_hex` in a
// zone whose first word has the letters `zone_letters` (Zone::first_word_letters).
CaseFlips case_flips(uint64_t seq, uint64_t nonce_hex, uint64_t index_hex, uint64_t zone_letters);

// What stamp_dns writes into a query's name (Zone::stamp): `words` 8-byte words from `at` (from
// the name's start; its template holds zeros there), and the case flips of the nonce's digits
// (at kNonceInName) and of the zone's first word (at `zone_at`).
struct NameStamp {
  uint8_t at = 0, words = 1, zone_at = 0;
  std::array<uint64_t, 2> word{};
  uint64_t nonce_flips = 0, zone_flips = 0;
};

// A zone in wire form: its labels, each after its length, then the root's 0 (RFC 1035 §3.1),
// and the style of the test names asked in it.
class Zone {
 public:
  // From its text ("dns64perf.test", a trailing dot allowed). Throws std::invalid_argument
  // naming the problem: an empty label, a label over 63 bytes, a test name over 255 bytes, a
  // character other than a letter, digit or hyphen (RFC 1123 §2.1).
  explicit Zone(std::string_view text, NameStyle style = NameStyle::kXlatperf);
  const std::vector<uint8_t>& wire() const { return wire_; }
  NameStyle style() const { return style_; }
  // The characters of a test name's first label, and where the zone starts in the name.
  size_t label_chars() const { return style_ == NameStyle::kXlatperf ? kLabelChars : kDns64perfLabelChars; }
  size_t zone_in_name() const { return 1 + label_chars(); }
  // The wire size of a test name in this zone.
  size_t name_size() const { return 1 + label_chars() + wire_.size(); }
  // Where a query's name varies from one query to the next, and how: its index's digits (or a
  // dns64perf++ name's length and label), in letters of the case `flips` says.
  NameStamp stamp(const TestName& name, const CaseFlips& flips = {}) const;
  // Whether the wire().size() bytes at `p` are the zone but for the case of its letters.
  bool matches(const uint8_t* p) const;
  // The letters of the zone's first 8 wire bytes (0x20 each, CaseFlips), or 0 for a zone of
  // fewer bytes (its case is left as it is).
  uint64_t first_word_letters() const;

 private:
  std::vector<uint8_t> wire_;       // lower case
  // 0x20 where wire_ has a letter, else 0: (byte | mask) is the letter's lower case exactly when
  // the byte is that letter in either case (0x20 is the one bit the cases differ in), and any
  // other byte must be as it is. Compared 8 bytes at a time.
  std::vector<uint8_t> case_mask_;
  NameStyle style_;
};

// Writes the test name's wire form at `p` (name_size() bytes), in lower case but where `flips`
// says.
void write_name(uint8_t* p, const TestName& name, const Zone& zone, const CaseFlips& flips = {});

// A name in a message, read from `offset` (following compression pointers, RFC 1035 §4.1.4):
// the test name it is (of the zone's style), or nullopt when it is not one of this zone. `end`:
// where the name ends at `offset` (past its pointer, if it has one).
std::optional<TestName> read_name(const uint8_t* msg, size_t len, size_t offset, const Zone& zone, size_t* end);

// A query for `qtype` (A or AAAA) of `name`, recursion desired, with an EDNS(0) OPT record when
// `edns`. Returns the bytes written: kHeader + name_size() + kQuestionTail (+ kOptRecord).
size_t write_query(uint8_t* p, const TestName& name, const Zone& zone, uint16_t id, uint16_t qtype, bool edns);
inline size_t query_size(const Zone& zone, bool edns) {
  return kHeader + zone.name_size() + kQuestionTail + (edns ? kOptRecord : 0);
}

// A query's sequence number in its source port and DNS ID: consecutive queries take consecutive
// ports of the stream's `ports` (a resolver sees that many clients; seed 003 used 64,000) and
// the ID counts the rounds over them, so the pair names the sequence number modulo
// 65536 x ports. The name cannot carry it: a name asked again to hit a cache is the same name.
struct QueryKey {
  uint16_t port_offset = 0;  // from the stream's first source port
  uint16_t id = 0;
  bool operator==(const QueryKey&) const = default;
};
// The keys of a stream's queries over its `ports` (1..65536), both ways. No division per query:
// the sender steps from one query's key to the next (next), the receiver takes a 32-bit
// remainder by multiplication (a 64-bit division costs tens of cycles on some CPUs).
class QueryKeys {
 public:
  explicit QueryKeys(uint32_t ports) : ports_(ports), reciprocal_(~uint64_t(0) / ports + 1) {}
  uint32_t ports() const { return ports_; }
  // Query `seq`'s key (the mapping itself; a division, for where a stream starts).
  QueryKey key_of(uint64_t seq) const { return {uint16_t(seq % ports_), uint16_t(seq / ports_)}; }
  // The key of the query after the one of `key`: the next port, after the last the first one in
  // the next round.
  QueryKey next(QueryKey key) const {
    if (uint32_t(key.port_offset) + 1 < ports_) return {uint16_t(key.port_offset + 1), key.id};
    return {0, uint16_t(key.id + 1)};
  }
  // The sequence number a reply's key names: of those congruent to it modulo 65536 x ports, the
  // highest at most `newest`, the newest query the stream has sent (a reply answers a query
  // already sent). Exact while a reply comes before the stream has sent a whole modulus of
  // queries more (the front end sizes `ports` for twice rate x timeout), however long the DUT
  // was silent before it: the reference moves with the sender, not with the replies. A reply
  // taken for another query fails that query's name check.
  uint64_t seq_of(const QueryKey& key, uint64_t newest) const {
    const uint64_t modulus = uint64_t(65536) * ports_;
    const uint64_t residue = uint64_t(key.id) * ports_ + key.port_offset;
    const uint64_t base = newest - remainder(newest) + residue;  // in newest's round
    if (base <= newest) return base;
    return base >= modulus ? base - modulus : base;  // before the first round: none sent yet
  }

 private:
  // n modulo 65536 x ports: n's low 16 bits, and the rest (below 2^32 for every n below 2^48,
  // a trial of 100 M queries/s for a month) modulo ports, by the multiplication of Lemire, Kaser
  // and Kurz ("Faster remainder by direct computation", 2019): the fraction n / ports in 64 bits,
  // times ports, is the remainder in the high word. Exact for every 32-bit n and ports.
  uint64_t remainder(uint64_t n) const {
    const uint64_t high = n >> 16;
    const uint64_t r = high >> 32 ? high % ports_
                                  : uint64_t((static_cast<unsigned __int128>(reciprocal_ * high) * ports_) >> 64);
    return r << 16 | (n & 0xffff);
  }
  uint32_t ports_;
  uint64_t reciprocal_;  // ceil(2^64 / ports) modulo 2^64 (0 for one port: every remainder is 0)
};

// Which names a stream asks again, for a DUT's cache to answer (RFC 8219 §9.2's cache-hit
// grid): query k repeats the name of query k - lag, "late enough" (lag queries after, when its
// answer has come) and "early enough" (while its records live in the cache: lag is seconds, the
// TTL an hour). `share` of 65536 queries repeat, spread evenly (query k repeats when the running
// share passes a whole number at k), none of the first `lag`; the others ask new names. Both the
// sender and the receiver compute a query's name from it.
struct RepeatSchedule {
  uint32_t share = 0;  // 0..65536
  uint64_t lag = 1;    // queries, >= 1
  bool repeats(uint64_t k) const {
    return share && k >= lag && (((k + 1) * share) >> 16) > ((k * share) >> 16);  // share 0: one test
  }
  // The query that first asked the name query k asks (k itself for a new name).
  uint64_t first_ask(uint64_t k) const {
    while (repeats(k)) k -= lag;
    return k;
  }
};

// The records of the test zone's names, as the authoritative side serves them and the client
// expects them: an A record in `a_base`/`a_bits` (the low bits from a hash of the name), and a
// AAAA record in `aaaa_base`/96 for a share of the names (`aaaa_share` of 2^16; the rest have
// none: the authoritative side answers NODATA). A dns64perf++ name's A record is its address,
// and it has no AAAA record.
struct RecordRule {
  uint32_t a_base = 0xC6120000;  // 198.18.0.0
  uint8_t a_bits = 15;           // the prefix's length (198.18.0.0/15: RFC 2544's range)
  std::array<uint8_t, 16> aaaa_base{0x20, 0x01, 0x0d, 0xb8};  // 2001:db8::/96
  uint32_t aaaa_share = 0;       // 0..65536: the names (of 65536) with a AAAA record
  uint32_t ttl = 3600;           // of the A and AAAA records
  // The zone's SOA, served with NODATA (RFC 2308 §3): its own TTL and its MINIMUM field. Each
  // apart from the others, so that an answer's TTL tells which one a resolver took.
  uint32_t soa_ttl = 300, soa_minimum = 900;
  // The host bits of the A records' prefix: a name's A record is a_base's network and these.
  uint32_t host_mask() const { return a_bits >= 32 ? 0 : ~uint32_t(0) >> a_bits; }
  // How long a NODATA answer may be cached: the SOA record's TTL in it (RFC 2308 §3, §5).
  uint32_t negative_ttl() const { return soa_ttl < soa_minimum ? soa_ttl : soa_minimum; }
};
struct Records {
  uint32_t a = 0;                // host order
  bool has_aaaa = false;
  std::array<uint8_t, 16> aaaa{};
};
Records records_of(const TestName& name, const RecordRule& rule, NameStyle style = NameStyle::kXlatperf);
// The 16 bytes a dns64perf++ name of `address` starts with, its label's length and the label
// (ddd-ddd-ddd-ddd), as two words (load_be64 order).
std::array<uint64_t, 2> dns64perf_label(uint32_t address);

// An IPv4 address embedded in an IPv6 prefix as RFC 6052 §2.2 says: after `prefix_bits` (32,
// 40, 48, 56, 64 or 96) bits of `prefix`, skipping bits 64..71 (the u octet, zero), the suffix
// zero. Throws std::invalid_argument for another length.
std::array<uint8_t, 16> synthesize(const std::array<uint8_t, 16>& prefix, int prefix_bits, uint32_t ipv4);

// dns64perf++'s names (Lencse and Bakai's DNS64 tester): {000..255}-{000..255}-{000..255}-
// {000..255}.<zone>, the A record the four numbers, no AAAA record. The IPv4 address a
// question's name at `offset` names, or none; `end`: where the name ends.
std::optional<uint32_t> read_dns64perf_name(const uint8_t* msg, size_t len, size_t offset, const Zone& zone,
                                            size_t* end);

// The authoritative side: writes its answer over the query of `len` bytes at `msg` (room for
// `cap`): QR and AA set, RD and the ID copied, the question as received (the case of its
// letters too), then the record of the query's type if the name has one (A always; AAAA where
// records_of says: else NODATA, an empty answer), and an OPT record when the query had one.
// dns64perf++'s names are answered too (read_dns64perf_name), so that tool gets a line-rate
// authoritative server (the one RFC 8219 §9.2.1's note wishes for).
// Returns the answer's length, or 0 for a query it does not answer (not a standard query of
// one question, not a test name of `zone`, not A or AAAA in class IN, a malformed message, no
// room): the caller counts those.
size_t answer_in_place(uint8_t* msg, size_t len, size_t cap, const Zone& zone, const RecordRule& rule);

// The client's judgement of a reply, the most specific first.
enum class ReplyVerdict : uint8_t {
  kGood,
  kMalformed,    // not a DNS response that can be read to its answers
  kMismatch,     // another ID, question or opcode than the query's (not this query's reply)
  kTruncated,    // TC set: the answer did not fit (RFC 1035 §4.1.1)
  kServFail,
  kNxDomain,
  kOtherRcode,   // REFUSED, FORMERR, NOTIMP, ...
  kWrongAnswer,  // no address record, or one other than expected (a DNS64's synthesis, an A)
  // The checks of a right answer (Expectation::checks), in this order:
  kDuplicateRecord,  // the expected record twice (RFC 2181 §5: a server suppresses duplicates)
  kBadTtl,           // a TTL above the records' (RFC 6147 §5.1.7, RFC 2308 §5, RFC 2181 §8)
  kNoEdns,           // no OPT record, to a query with one (RFC 6891 §7: MUST)
  kNoRa,             // RA clear from a recursive server (RFC 1035 §4.1.1)
  kQuestionCase,     // the question's letters in another case than asked (dns0x20)
  // A second reply to an answered query (the receiver's, not judge_reply's).
  kDuplicateReply,
};
constexpr size_t kReplyVerdicts = 14;
constexpr const char* kReplyVerdictNames[kReplyVerdicts] = {
    "good",         "malformed",        "mismatch", "truncated", "servfail", "nxdomain",      "other_rcode",
    "wrong_answer", "duplicate_record", "bad_ttl",  "no_edns",   "no_ra",    "question_case", "duplicate_reply"};
// The checks beyond the records (Expectation::checks, the flow's dns.checks), a bit each.
enum ReplyCheck : uint8_t {
  kCheckTtl = 1,         // kBadTtl
  kCheckEdns = 2,        // kNoEdns (with EDNS(0) queries)
  kCheckRa = 4,          // kNoRa (a recursive DNS64, not the tester's authoritative side)
  kCheckQuestion = 8,    // kQuestionCase; the queries' letters then take random cases
  kCheckDuplicates = 16,  // kDuplicateRecord, kDuplicateReply
  // With kCheckTtl: a synthesis may live as long as its A record, not only as long as the
  // negative AAAA answer (Unbound's and PowerDNS Recursor's way, not RFC 6147 §5.1.7's).
  kSynthesisTtlOfA = 32,
  // The queries the DUT's resolver must have asked the authoritative side for the answers it
  // gave (upstream_asks): for new names, and (kCheckUpstreamExpired) for names asked again
  // after their records expired. Counted, for the front end to hold the authoritative side's
  // answer count to.
  kCheckUpstream = 64,
  kCheckUpstreamExpired = 128
};
// The queries a DNS64 asks the authoritative side to answer a query for `qtype` of a name with
// `records` (what it cannot have cached): AAAA, and A where no AAAA record outside `exclude` is
// there to pass on (RFC 6147 §5.1.1, §5.1.4); A alone for A.
uint32_t upstream_asks(const Records& records, uint16_t qtype,
                       const std::vector<std::pair<std::array<uint8_t, 16>, int>>& exclude);

// What the client expects of the reply to its query for `qtype` of `name`: for AAAA, the name's
// AAAA record where it has one outside `exclude`, else its A record synthesized with
// `prefix`/`prefix_bits` (RFC 6147 §5.1.7) where `mapped` holds it, else none (NODATA); for A,
// its A record. Every record of the asked type in the answer section must be that one, and
// there must be one (none for NODATA). Then, as `checks` says: that one only once; its TTL at
// most the records' (rule.ttl; a synthesis's at most the A record's and the negative AAAA
// answer's, RFC 6147 §5.1.7: min(ttl, negative_ttl()); where an excluded AAAA record gave no SOA
// the A record's), a NODATA answer's SOA at most negative_ttl() (a cache counts TTLs down, never
// up: RFC 2181 §8); an OPT record when the query had one (`edns`); RA set; the question's
// letters as asked.
struct Expectation {
  const Zone* zone = nullptr;
  RecordRule rule;
  std::array<uint8_t, 16> prefix{0x00, 0x64, 0xff, 0x9b};  // 64:ff9b::/96 (RFC 6052 §2.1)
  int prefix_bits = 96;
  // RFC 6147 §5.1.4: AAAA records in these prefixes are treated as an empty answer (a DNS64
  // excludes ::ffff:0:0/96 by default), so the name's answer is the synthesis.
  std::vector<std::pair<std::array<uint8_t, 16>, int>> exclude;
  // The IPv4 addresses the DNS64 synthesizes from (BIND's `mapped`); empty: every one. A name
  // that has only an A record outside them gets no AAAA: NODATA is its right answer.
  std::vector<std::pair<uint32_t, int>> mapped;
  uint8_t checks = 0;  // ReplyCheck bits
  bool edns = false;   // the queries carry an OPT record
};
// `flips`: the case the query's name was sent in.
ReplyVerdict judge_reply(const uint8_t* msg, size_t len, uint16_t id, const TestName& name, uint16_t qtype,
                         const Expectation& expect, const CaseFlips& flips = {});
// A reply without its question (QDCOUNT 0: Unbound's REFUSED, a FORMERR or SERVFAIL that
// leaves the question out to stay small), which its ID and the port it came to tie to query
// `id`'s: judged by its RCODE (kServFail, kNxDomain, kOtherRcode), or kMismatch (another ID or
// opcode, or a question after all), kTruncated, kMalformed (not a response; NOERROR without
// the question, which answers nothing that can be checked).
ReplyVerdict judge_headless_reply(const uint8_t* msg, size_t len, uint16_t id);
// The same for a reply whose question's name the caller read already (read_name at kHeader:
// `asked`, and `asked_end` where it ends): the client, which reads it to find the stream that
// asked, judges with it and reads no name twice.
ReplyVerdict judge_reply(const uint8_t* msg, size_t len, uint16_t id, const TestName& name, uint16_t qtype,
                         const Expectation& expect, const TestName& asked, size_t asked_end,
                         const CaseFlips& flips = {});

}  // namespace xlp::dns
