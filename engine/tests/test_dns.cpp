// The DNS codec (src/core/dns.hpp) against messages dnspython encoded (dns_vectors.txt,
// written by dns_vectors.py): what the engine writes must be those bytes, and what it judges
// must be what a DNS64 resolver would send.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/dns.hpp"
#include "core/frame.hpp"
#include "core/random.hpp"

using namespace xlp::dns;

namespace {

using Bytes = std::vector<uint8_t>;

const std::map<std::string, Bytes>& vectors() {
  static const std::map<std::string, Bytes> all = [] {
    std::map<std::string, Bytes> out;
    std::ifstream in(XLP_DNS_VECTORS);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string name, hex;
      fields >> name >> hex;
      Bytes bytes;
      for (size_t i = 0; i + 1 < hex.size(); i += 2) bytes.push_back(uint8_t(std::stoi(hex.substr(i, 2), nullptr, 16)));
      out[name] = bytes;
    }
    return out;
  }();
  return all;
}
const Bytes& vec(const std::string& name) {
  const auto it = vectors().find(name);
  if (it == vectors().end()) throw std::runtime_error("no vector " + name + " in " XLP_DNS_VECTORS);
  return it->second;
}

const Zone kZone("dns64perf.test");
const TestName kName{0x5be2a7c0, 1, 0x1f0};

std::array<uint8_t, 16> v6(std::initializer_list<int> words) {  // 8 16-bit words
  std::array<uint8_t, 16> a{};
  size_t i = 0;
  for (int w : words) {
    a[i++] = uint8_t(w >> 8);
    a[i++] = uint8_t(w);
  }
  return a;
}

// The authoritative side's answer to a query vector, as its bytes.
Bytes answer_to(const std::string& query, const RecordRule& rule = {}) {
  Bytes msg = vec(query);
  const size_t len = msg.size();
  msg.resize(512);
  const size_t out = answer_in_place(msg.data(), len, msg.size(), kZone, rule);
  msg.resize(out);
  return msg;
}

}  // namespace

TEST(Dns, QueriesAreWhatDnspythonEncodes) {
  Bytes q(query_size(kZone, true));
  EXPECT_EQ(write_query(q.data(), kName, kZone, 0x1234, kTypeAaaa, true), q.size());
  EXPECT_EQ(q, vec("query_aaaa_edns"));
  Bytes a(query_size(kZone, false));
  EXPECT_EQ(write_query(a.data(), kName, kZone, 0xbeef, kTypeA, false), a.size());
  EXPECT_EQ(a, vec("query_a"));
}

TEST(Dns, NamesRoundTripInEitherCase) {
  for (const TestName n : {kName, TestName{0, 0, 0}, TestName{0xffffffff, 0xff, 0xffffffff}}) {
    Bytes q(query_size(kZone, false));
    write_query(q.data(), n, kZone, 1, kTypeA, false);
    size_t end = 0;
    EXPECT_EQ(read_name(q.data(), q.size(), kHeader, kZone, &end), n);
    EXPECT_EQ(end, kHeader + kZone.name_size());
  }
  // dnspython's query with letters in random case (0x20) names the same test name.
  const Bytes& mixed = vec("query_a_mixed_case");
  size_t end = 0;
  EXPECT_EQ(read_name(mixed.data(), mixed.size(), kHeader, kZone, &end), (TestName{0x5be2a7c0, 1, 0x1f0}));
  // Not a test name: another zone, a label that is not hex, a name cut short.
  Bytes other = vec("query_a");
  other[kHeader + 1 + kLabelChars + 1] = 'x';  // dns64perf -> xns64perf
  EXPECT_FALSE(read_name(other.data(), other.size(), kHeader, kZone, &end));
  Bytes not_hex = vec("query_a");
  not_hex[kHeader + 3] = 'g';
  EXPECT_FALSE(read_name(not_hex.data(), not_hex.size(), kHeader, kZone, &end));
  EXPECT_FALSE(read_name(other.data(), kHeader + 10, kHeader, kZone, &end));
}

// The label's digits are read 8 at a time: every byte value in every digit's place is read as
// the digit it is, in either case, and anything else refuses the name.
TEST(Dns, EveryByteOfTheLabelIsAHexDigitOrNoTestName) {
  Bytes q(query_size(kZone, false));
  const TestName n{0x01234567, 0x89, 0xabcdef01};
  write_query(q.data(), n, kZone, 1, kTypeA, false);
  for (size_t digit = 0; digit < kLabelChars; ++digit) {
    for (int c = 0; c < 256; ++c) {
      Bytes m = q;
      m[kHeader + 1 + digit] = uint8_t(c);
      const int value = c >= '0' && c <= '9' ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;
      size_t end = 0;
      const auto got = read_name(m.data(), m.size(), kHeader, kZone, &end);
      if (value < 0) {
        EXPECT_FALSE(got) << digit << " " << c;
        continue;
      }
      // The name with that digit in place of the one written.
      uint8_t label[kLabelChars];
      std::copy_n(m.begin() + kHeader + 1, kLabelChars, label);
      for (uint8_t& d : label) d = uint8_t(std::tolower(d));
      const auto hex = [&](size_t from, size_t count) {
        return uint32_t(std::stoul(std::string(label + from, label + from + count), nullptr, 16));
      };
      EXPECT_EQ(got, (TestName{hex(0, 8), uint8_t(hex(8, 2)), hex(10, 8)})) << digit << " " << c;
    }
  }
}

TEST(Dns, ZonesAreCheckedAndLowerCased) {
  EXPECT_EQ(Zone("DNS64perf.Test.").wire(), kZone.wire());
  EXPECT_THROW(Zone(""), std::invalid_argument);
  EXPECT_THROW(Zone("a..b"), std::invalid_argument);
  EXPECT_THROW(Zone("a_b.test"), std::invalid_argument);
  EXPECT_THROW(Zone(std::string(64, 'a') + ".test"), std::invalid_argument);
  std::string long_zone;
  for (int i = 0; i < 4; ++i) long_zone += std::string(60, 'a') + ".";
  EXPECT_THROW(Zone{long_zone}, std::invalid_argument);  // 244 bytes + the test label: over 255
}

// A zone's wire form matches its letters in either case and every other byte exactly: a byte
// that differs from a digit, hyphen or length byte only in the case bit (0x20) is no match.
TEST(Dns, AZoneMatchesItsLettersInEitherCaseAndNothingElse) {
  const Zone zone("a-9.dns64perf.test");  // 19 bytes: two 8-byte words and a tail
  const std::vector<uint8_t> wire = zone.wire();
  EXPECT_TRUE(zone.matches(wire.data()));
  std::vector<uint8_t> upper = wire;
  for (uint8_t& c : upper)
    if (c >= 'a' && c <= 'z') c = uint8_t(c - 0x20);
  EXPECT_TRUE(zone.matches(upper.data()));
  for (size_t i = 0; i < wire.size(); ++i) {
    std::vector<uint8_t> other = wire;
    other[i] ^= 0x20;
    const bool letter = wire[i] >= 'a' && wire[i] <= 'z';
    EXPECT_EQ(zone.matches(other.data()), letter) << "byte " << i << " = " << int(wire[i]);
    other = wire;
    other[i] ^= 0x01;
    EXPECT_FALSE(zone.matches(other.data())) << "byte " << i;
  }
}

// The cache-hit grid's schedule (RFC 8219 §9.2): the share of queries that repeat a name, each
// the name asked `lag` queries before (after its answer, within its TTL), none among the first
// `lag`, and every other query a name never asked before.
TEST(Dns, RepeatedNamesAreTheShareAskedLagQueriesEarlier) {
  for (const double share : {0.0, 0.2, 0.4, 0.6, 0.8, 1.0}) {
    const RepeatSchedule schedule{uint32_t(std::lround(share * 65536)), 1000};
    const uint64_t n = 100'000;
    uint64_t repeats = 0;
    std::set<uint64_t> names;
    for (uint64_t k = 0; k < n; ++k) {
      const uint64_t first = schedule.first_ask(k);
      if (schedule.repeats(k)) {
        ++repeats;
        EXPECT_EQ(first, schedule.first_ask(k - 1000));  // the name asked 1000 queries before
        EXPECT_TRUE(names.count(first)) << k;            // ... which was asked then
      } else {
        EXPECT_EQ(first, k);
        EXPECT_TRUE(names.insert(k).second);             // a new name
      }
      if (k < 1000) {
        EXPECT_FALSE(schedule.repeats(k));
      }
    }
    EXPECT_NEAR(double(repeats), share * double(n - 1000), 1.0) << share;
  }
}

TEST(Dns, TheAuthoritativeSideAnswersAsDnspythonEncodes) {
  EXPECT_EQ(answer_to("query_a"), vec("answer_a"));
  EXPECT_EQ(answer_to("query_aaaa_edns"), vec("answer_aaaa_nodata_edns"));  // NODATA with the SOA
  RecordRule every_aaaa;
  every_aaaa.aaaa_share = 65536;
  EXPECT_EQ(answer_to("query_aaaa_edns", every_aaaa), vec("answer_aaaa_record_edns"));
  // The question as received: 0x20's random case echoed.
  EXPECT_EQ(answer_to("query_a_mixed_case"), vec("answer_a_mixed_case"));
}

// dns64perf++'s names: the A record the four numbers, NODATA for AAAA, as a zone of theirs.
TEST(Dns, TheAuthoritativeSideAnswersDns64perfNames) {
  EXPECT_EQ(answer_to("query_dns64perf_a"), vec("answer_dns64perf_a"));
  EXPECT_EQ(answer_to("query_dns64perf_aaaa"), vec("answer_dns64perf_aaaa"));
  size_t end = 0;
  const Bytes& q = vec("query_dns64perf_a");
  EXPECT_EQ(read_dns64perf_name(q.data(), q.size(), kHeader, kZone, &end), 0x0a0002ffu);
  EXPECT_EQ(end, kHeader + 1 + 15 + kZone.wire().size());
  // Not one of them: a number over 255, a letter, another separator, another zone.
  for (const auto& [at, byte] : std::vector<std::pair<size_t, uint8_t>>{{13, '3'}, {14, 'a'}, {16, '.'}, {29, 'x'}}) {
    Bytes bad = q;
    bad[at] = byte;
    EXPECT_FALSE(read_dns64perf_name(bad.data(), bad.size(), kHeader, kZone, &end)) << at;
    bad.resize(512);
    EXPECT_EQ(answer_in_place(bad.data(), q.size(), bad.size(), kZone, {}), 0u) << at;
  }
}

TEST(Dns, TheAuthoritativeSideLeavesWhatItCannotAnswer) {
  Bytes msg = vec("query_a");
  const size_t len = msg.size();
  msg.resize(512);
  const auto refused = [&](Bytes m, size_t l, size_t cap = 512) {
    m.resize(std::max<size_t>(m.size(), cap));
    return answer_in_place(m.data(), l, cap, kZone, {}) == 0;
  };
  EXPECT_FALSE(refused(msg, len));
  Bytes response = msg;
  response[2] |= 0x80;  // QR: a response, not a query
  EXPECT_TRUE(refused(response, len));
  Bytes mx = msg;
  mx[len - 3] = 15;  // QTYPE MX
  EXPECT_TRUE(refused(mx, len));
  Bytes chaos = msg;
  chaos[len - 1] = 3;  // QCLASS CH
  EXPECT_TRUE(refused(chaos, len));
  Bytes two = msg;
  two[5] = 2;  // QDCOUNT 2
  EXPECT_TRUE(refused(two, len));
  EXPECT_TRUE(refused(msg, len - 1));          // cut short
  EXPECT_TRUE(refused(msg, len, len + 10));    // no room for the answer
  Bytes loop = msg;                            // a name that points at itself
  loop[kHeader] = 0xc0;
  loop[kHeader + 1] = kHeader;
  EXPECT_TRUE(refused(loop, len));
}

TEST(Dns, Rfc6052ExamplesOfTable1) {
  const uint32_t v4 = 0xc0000221;  // 192.0.2.33
  EXPECT_EQ(synthesize(v6({0x2001, 0xdb8}), 32, v4), v6({0x2001, 0xdb8, 0xc000, 0x221}));
  EXPECT_EQ(synthesize(v6({0x2001, 0xdb8, 0x100}), 40, v4), v6({0x2001, 0xdb8, 0x1c0, 0x2, 0x21}));
  EXPECT_EQ(synthesize(v6({0x2001, 0xdb8, 0x122}), 48, v4), v6({0x2001, 0xdb8, 0x122, 0xc000, 0x2, 0x2100}));
  EXPECT_EQ(synthesize(v6({0x2001, 0xdb8, 0x122, 0x300}), 56, v4), v6({0x2001, 0xdb8, 0x122, 0x3c0, 0, 0x221}));
  EXPECT_EQ(synthesize(v6({0x2001, 0xdb8, 0x122, 0x344}), 64, v4),
            v6({0x2001, 0xdb8, 0x122, 0x344, 0xc0, 0x2, 0x2100}));
  EXPECT_EQ(synthesize(v6({0x2001, 0xdb8, 0x122, 0x344}), 96, v4),
            v6({0x2001, 0xdb8, 0x122, 0x344, 0, 0, 0xc000, 0x221}));
  EXPECT_EQ(synthesize(v6({0x64, 0xff9b}), 96, v4), v6({0x64, 0xff9b, 0, 0, 0, 0, 0xc000, 0x221}));
  EXPECT_THROW(synthesize({}, 80, v4), std::invalid_argument);
}

TEST(Dns, RecordsFollowFromTheNameAlone) {
  RecordRule rule;
  const Records r = records_of(kName, rule);
  EXPECT_EQ(r.a >> 17, 0xc6120000u >> 17);  // in 198.18.0.0/15
  EXPECT_FALSE(r.has_aaaa);
  // The share of names with a AAAA record is the rule's, within sampling noise.
  rule.aaaa_share = 65536 * 2 / 10;
  int with = 0;
  for (uint32_t i = 0; i < 100000; ++i) with += records_of(TestName{7, 0, i}, rule).has_aaaa;
  EXPECT_NEAR(with, 20000, 600);
  rule.aaaa_share = 65536;
  EXPECT_TRUE(records_of(kName, rule).has_aaaa);
}

TEST(Dns, TheClientJudgesEachKindOfReply) {
  Expectation e;
  e.zone = &kZone;
  // A DNS64's synthesis from the name's A record with each RFC 6052 prefix length.
  const std::map<int, std::array<uint8_t, 16>> prefixes = {
      {96, v6({0x64, 0xff9b})},          {32, v6({0x2001, 0xdb8})},
      {40, v6({0x2001, 0xdb8, 0x100})},  {48, v6({0x2001, 0xdb8, 0x122})},
      {56, v6({0x2001, 0xdb8, 0x122, 0x300})}, {64, v6({0x2001, 0xdb8, 0x122, 0x344})}};
  const auto judge = [&](const std::string& name, const Expectation& x) {
    const Bytes& m = vec(name);
    return judge_reply(m.data(), m.size(), 0x1234, kName, kTypeAaaa, x);
  };
  for (const auto& [bits, prefix] : prefixes) {
    Expectation x = e;
    x.prefix = prefix;
    x.prefix_bits = bits;
    EXPECT_EQ(judge("dns64_reply_" + std::to_string(bits), x), ReplyVerdict::kGood) << bits;
    // ... and with any other prefix length it is a wrong answer.
    Expectation wrong = x;
    wrong.prefix_bits = bits == 96 ? 64 : 96;
    EXPECT_EQ(judge("dns64_reply_" + std::to_string(bits), wrong), ReplyVerdict::kWrongAnswer) << bits;
  }
  EXPECT_EQ(judge("dns64_reply_wrong_prefix", e), ReplyVerdict::kWrongAnswer);
  EXPECT_EQ(judge("dns64_reply_nodata", e), ReplyVerdict::kWrongAnswer);
  EXPECT_EQ(judge("dns64_reply_servfail", e), ReplyVerdict::kServFail);
  EXPECT_EQ(judge("dns64_reply_nxdomain", e), ReplyVerdict::kNxDomain);
  EXPECT_EQ(judge("dns64_reply_refused", e), ReplyVerdict::kOtherRcode);
  EXPECT_EQ(judge("dns64_reply_truncated", e), ReplyVerdict::kTruncated);
  EXPECT_EQ(judge("dns64_reply_other_name", e), ReplyVerdict::kMismatch);
  // Another ID; a query, not a reply; a reply cut short.
  const Bytes& good = vec("dns64_reply_96");
  EXPECT_EQ(judge_reply(good.data(), good.size(), 0x1235, kName, kTypeAaaa, e), ReplyVerdict::kMismatch);
  EXPECT_EQ(judge_reply(good.data(), good.size(), 0x1234, kName, kTypeA, e), ReplyVerdict::kMismatch);
  const Bytes& query = vec("query_aaaa_edns");
  EXPECT_EQ(judge_reply(query.data(), query.size(), 0x1234, kName, kTypeAaaa, e), ReplyVerdict::kMalformed);
  // (its last 11 bytes are the OPT record, which the client does not read: 3 more are the address)
  EXPECT_EQ(judge_reply(good.data(), good.size() - kOptRecord - 3, 0x1234, kName, kTypeAaaa, e), ReplyVerdict::kMalformed);
  // The authoritative side's own answers, judged as a client that asked it directly would
  // (resolved queries through a router: no synthesis).
  const Bytes a = answer_to("query_a");
  EXPECT_EQ(judge_reply(a.data(), a.size(), 0xbeef, kName, kTypeA, e), ReplyVerdict::kGood);
  Bytes wrong_a = a;
  wrong_a.back() ^= 1;
  EXPECT_EQ(judge_reply(wrong_a.data(), wrong_a.size(), 0xbeef, kName, kTypeA, e), ReplyVerdict::kWrongAnswer);
  RecordRule every_aaaa;
  every_aaaa.aaaa_share = 65536;
  Expectation real_aaaa = e;
  real_aaaa.rule = every_aaaa;  // the name has a AAAA record: it, not a synthesis, is the answer
  const Bytes aaaa = answer_to("query_aaaa_edns", every_aaaa);
  EXPECT_EQ(judge_reply(aaaa.data(), aaaa.size(), 0x1234, kName, kTypeAaaa, real_aaaa), ReplyVerdict::kGood);
  EXPECT_EQ(judge("dns64_reply_96", real_aaaa), ReplyVerdict::kWrongAnswer);  // synthesized over a real one
}

// The checks of a right answer, each catching its own fault and passing a right reply; each
// off, the fault passes (Expectation::checks).
TEST(Dns, EachCheckOfARightAnswerCatchesItsFault) {
  Expectation e;
  e.zone = &kZone;
  e.edns = true;
  e.checks = kCheckTtl | kCheckEdns | kCheckRa | kCheckQuestion | kCheckDuplicates;
  const auto judge = [&](const std::string& name, const Expectation& x) {
    const Bytes& m = vec(name);
    return judge_reply(m.data(), m.size(), 0x1234, kName, kTypeAaaa, x);
  };
  const auto without = [&](uint8_t check) {
    Expectation x = e;
    x.checks &= uint8_t(~check);
    return x;
  };
  EXPECT_EQ(judge("dns64_reply_96", e), ReplyVerdict::kGood);
  const std::pair<const char*, std::pair<ReplyVerdict, uint8_t>> faults[] = {
      {"dns64_reply_ttl_of_a", {ReplyVerdict::kBadTtl, kCheckTtl}},  // 3600 > min(3600, 300)
      {"dns64_reply_no_ra", {ReplyVerdict::kNoRa, kCheckRa}},
      {"dns64_reply_no_edns", {ReplyVerdict::kNoEdns, kCheckEdns}},
      {"dns64_reply_duplicate_record", {ReplyVerdict::kDuplicateRecord, kCheckDuplicates}},
      {"dns64_reply_upper_case", {ReplyVerdict::kQuestionCase, kCheckQuestion}},
  };
  for (const auto& [name, fault] : faults) {
    EXPECT_EQ(judge(name, e), fault.first) << name;
    EXPECT_EQ(judge(name, without(fault.second)), ReplyVerdict::kGood) << name;
  }
  Expectation no_edns_asked = e;
  no_edns_asked.edns = false;  // a query without OPT: a reply without is right
  EXPECT_EQ(judge("dns64_reply_no_edns", no_edns_asked), ReplyVerdict::kGood);
  // A synthesis's TTL may reach the negative answer's (RFC 2308 §3: min(SOA TTL, MINIMUM)), no
  // further; with a longer-lived SOA the A record's 3600 s bound it.
  RecordRule long_soa;
  long_soa.soa_ttl = long_soa.soa_minimum = 7200;
  Expectation x = e;
  x.rule = long_soa;
  EXPECT_EQ(judge("dns64_reply_ttl_of_a", x), ReplyVerdict::kGood);
  // Unbound's and PowerDNS Recursor's way: the A record's TTL bounds a synthesis, no more.
  Expectation of_a = e;
  of_a.checks |= kSynthesisTtlOfA;
  EXPECT_EQ(judge("dns64_reply_ttl_of_a", of_a), ReplyVerdict::kGood);
  of_a.rule.ttl = 3599;
  EXPECT_EQ(judge("dns64_reply_ttl_of_a", of_a), ReplyVerdict::kBadTtl);
  // NODATA where the A record is not mapped: its SOA's TTL at most the negative TTL (300 s, not
  // the MINIMUM's 900 s); the authoritative side's own NODATA passes.
  Expectation unmapped = e;
  unmapped.mapped = {{0x0a000000, 8}};  // 10.0.0.0/8: the name's 198.18.x.y is not in it
  EXPECT_EQ(judge("dns64_reply_nodata_soa", unmapped), ReplyVerdict::kGood);
  EXPECT_EQ(judge("dns64_reply_nodata_soa_minimum", unmapped), ReplyVerdict::kBadTtl);
  EXPECT_EQ(judge("dns64_reply_nodata_soa_minimum", without(kCheckTtl)), ReplyVerdict::kWrongAnswer);
  unmapped.checks = kCheckTtl;
  const Bytes nodata = answer_to("query_aaaa_edns");
  EXPECT_EQ(judge_reply(nodata.data(), nodata.size(), 0x1234, kName, kTypeAaaa, unmapped), ReplyVerdict::kGood);
  // A query sent in a random case, answered by the authoritative side (which echoes it): right
  // with the flips it was sent with, caught with another query's.
  Expectation direct = e;
  direct.checks = kCheckQuestion;
  const auto flips_of = [](uint64_t seq) {
    return case_flips(seq, hex_digits(kName.nonce), hex_digits(kName.index), kZone.first_word_letters());
  };
  Bytes msg(512);
  const size_t len = write_query(msg.data(), kName, kZone, 0x1234, kTypeAaaa, true);
  write_name(msg.data() + kHeader, kName, kZone, flips_of(5));
  const size_t answered = answer_in_place(msg.data(), len, msg.size(), kZone, {});
  ASSERT_GT(answered, 0u);
  EXPECT_EQ(judge_reply(msg.data(), answered, 0x1234, kName, kTypeAaaa, direct, flips_of(5)), ReplyVerdict::kWrongAnswer);
  Expectation any_answer = direct;  // the authoritative side's NODATA is right where nothing is mapped
  any_answer.mapped = {{0x0a000000, 8}};
  EXPECT_EQ(judge_reply(msg.data(), answered, 0x1234, kName, kTypeAaaa, any_answer, flips_of(5)), ReplyVerdict::kGood);
  int caught = 0;
  for (uint64_t other = 6; other < 22; ++other)
    caught += judge_reply(msg.data(), answered, 0x1234, kName, kTypeAaaa, any_answer, flips_of(other)) ==
              ReplyVerdict::kQuestionCase;
  EXPECT_EQ(caught, 16);  // ten letters: another query's case is the same one time in 1,024
}

// What a DNS64 must ask the authoritative side for a name it has not cached: AAAA, and A where
// no AAAA record (outside the exclusions) answers; A alone for an A query.
TEST(Dns, UpstreamAsksAreWhatADns64CannotAnswerWithout) {
  RecordRule rule;
  EXPECT_EQ(upstream_asks(records_of(kName, rule), kTypeA, {}), 1u);
  EXPECT_EQ(upstream_asks(records_of(kName, rule), kTypeAaaa, {}), 2u);  // no AAAA record: then A
  rule.aaaa_share = 65536;
  EXPECT_EQ(upstream_asks(records_of(kName, rule), kTypeAaaa, {}), 1u);
  rule.aaaa_base = v6({0, 0, 0, 0, 0, 0xffff});  // ::ffff:0:0/96, excluded: synthesized after all
  EXPECT_EQ(upstream_asks(records_of(kName, rule), kTypeAaaa, {{v6({0, 0, 0, 0, 0, 0xffff}), 96}}), 2u);
}

// Case flips touch letters only, in the three words, and differ from query to query.
TEST(Dns, CaseFlipsTurnLettersOnly) {
  const uint64_t nonce = hex_digits(0x5be2a7c0), index = hex_digits(0xabcdef01);
  uint64_t seen = 0;
  for (uint64_t seq = 0; seq < 64; ++seq) {
    const CaseFlips f = case_flips(seq, nonce, index, kZone.first_word_letters());
    EXPECT_EQ(f.nonce & ~hex_letters(nonce), 0u);
    EXPECT_EQ(f.index & ~hex_letters(index), 0u);
    EXPECT_EQ(f.zone & ~kZone.first_word_letters(), 0u);
    seen |= f.nonce | f.index | f.zone;
  }
  EXPECT_EQ(hex_letters(hex_digits(0x0000a00f)), 0x0000000020000020u);
  EXPECT_EQ(kZone.first_word_letters(), 0x0020202000002020u);  // 9 d n s 6 4 p e
  EXPECT_EQ(Zone("a.b").first_word_letters(), 0u);              // under 8 bytes: left alone
  EXPECT_NE(seen, 0u);
}

// RFC 6147 §5.1.4: a AAAA record in an excluded prefix (::ffff:0:0/96 by default) counts as
// none, so the right answer is the synthesis, and the record passed on is a wrong answer; a
// name whose A record the DNS64 does not map (BIND's `mapped`) rightly gets NODATA.
TEST(Dns, ExcludedAaaaRecordsAndUnmappedARecordsAreJudgedAsRfc6147Says) {
  RecordRule mapped_v4_aaaa;
  mapped_v4_aaaa.aaaa_share = 65536;
  mapped_v4_aaaa.aaaa_base = v6({0, 0, 0, 0, 0, 0xffff});  // ::ffff:0:0/96
  Expectation e;
  e.zone = &kZone;
  e.rule = mapped_v4_aaaa;
  const Bytes passed_on = answer_to("query_aaaa_edns", mapped_v4_aaaa);  // the record as it is
  const Bytes& synthesized = vec("dns64_reply_96");                       // from the A record
  const auto judge = [&](const Bytes& m, const Expectation& x) {
    return judge_reply(m.data(), m.size(), 0x1234, kName, kTypeAaaa, x);
  };
  // No exclusion: the record is the answer.
  EXPECT_EQ(judge(passed_on, e), ReplyVerdict::kGood);
  EXPECT_EQ(judge(synthesized, e), ReplyVerdict::kWrongAnswer);
  // ::ffff:0:0/96 excluded: the synthesis is.
  Expectation excluding = e;
  excluding.exclude = {{v6({0, 0, 0, 0, 0, 0xffff}), 96}};
  EXPECT_EQ(judge(passed_on, excluding), ReplyVerdict::kWrongAnswer);
  EXPECT_EQ(judge(synthesized, excluding), ReplyVerdict::kGood);
  // An exclusion elsewhere changes nothing; a shorter one that holds it does.
  excluding.exclude = {{v6({0x2001, 0xdb8}), 32}};
  EXPECT_EQ(judge(passed_on, excluding), ReplyVerdict::kGood);
  excluding.exclude = {{v6({0x2001, 0xdb8}), 32}, {v6({}), 80}};
  EXPECT_EQ(judge(synthesized, excluding), ReplyVerdict::kGood);

  // Mapped: the name's A record (in 198.18.0.0/15) mapped, or not.
  Expectation plain;
  plain.zone = &kZone;
  const Bytes& nodata = vec("dns64_reply_nodata");
  plain.mapped = {{0xc6120000u, 15}};
  EXPECT_EQ(judge(synthesized, plain), ReplyVerdict::kGood);
  EXPECT_EQ(judge(nodata, plain), ReplyVerdict::kWrongAnswer);
  plain.mapped = {{0x0a000000u, 8}};  // 10.0.0.0/8 only: this name's A record is not mapped
  EXPECT_EQ(judge(synthesized, plain), ReplyVerdict::kWrongAnswer);
  EXPECT_EQ(judge(nodata, plain), ReplyVerdict::kGood);
  // A real AAAA record outside the exclusions is the answer whatever is mapped.
  Expectation real = e;
  real.mapped = {{0x0a000000u, 8}};
  EXPECT_EQ(judge(passed_on, real), ReplyVerdict::kGood);
}

TEST(Dns, SequenceNumbersRoundTripThroughPortAndId) {
  for (uint32_t ports : {1u, 2u, 3u, 64u, 1000u, 64000u, 65535u, 65536u}) {
    const QueryKeys keys(ports);
    const uint64_t modulus = uint64_t(65536) * ports;
    for (uint64_t seq : {uint64_t(0), uint64_t(1), uint64_t(ports), modulus - 1, modulus, 5 * modulus + 7,
                         uint64_t(60) * 3'000'000, (uint64_t(1) << 48) - 1, uint64_t(1) << 48, uint64_t(3) << 52}) {
      const QueryKey key = keys.key_of(seq);
      EXPECT_LT(key.port_offset, ports);
      // Read back against the newest query sent, any number of queries up to a whole modulus
      // less one after it: a reply may come after the stream sent many more.
      for (uint64_t off : {uint64_t(0), uint64_t(1), uint64_t(1000), modulus / 2, modulus - 1})
        EXPECT_EQ(keys.seq_of(key, seq + off), seq) << ports << " " << seq << " " << off;
      // The sender's step to the next query's key is the next sequence number's key.
      EXPECT_EQ(keys.next(key), keys.key_of(seq + 1)) << ports << " " << seq;
    }
  }
  // Consecutive queries spread over the ports first.
  const QueryKeys four(4);
  EXPECT_EQ(four.key_of(0), (QueryKey{0, 0}));
  EXPECT_EQ(four.key_of(3), (QueryKey{3, 0}));
  EXPECT_EQ(four.key_of(4), (QueryKey{0, 1}));
  EXPECT_EQ(four.next(QueryKey{3, 0xffff}), (QueryKey{0, 0}));  // the ID wraps
}

// seq_of's remainder by multiplication against the division it replaces, for the sequence
// numbers near every round's edges and pseudorandom ones, with ports of every size.
TEST(Dns, AReplyNamesTheNewestSequenceNumberOfItsKeySent) {
  xlp::Rng rng(31);
  for (int trial = 0; trial < 20000; ++trial) {
    const uint32_t ports = trial < 16 ? uint32_t(1) << trial : uint32_t(1 + rng.next() % 65536);
    const QueryKeys keys(ports);
    const uint64_t modulus = uint64_t(65536) * ports;
    const uint64_t newest = trial % 3 == 0 ? rng.next() >> (16 + rng.next() % 48)
                            : trial % 3 == 1 ? (rng.next() % 4096 + 1) * modulus - rng.next() % 2
                                             : rng.next() % (uint64_t(1) << 48);
    const QueryKey key{uint16_t(rng.next() % ports), uint16_t(rng.next())};
    // The reference: the key's residue in newest's round, or the round before it where that
    // one lies after newest (no query of it sent yet).
    const uint64_t residue = uint64_t(key.id) * ports + key.port_offset;
    uint64_t want = newest - newest % modulus + residue;
    if (want > newest && want >= modulus) want -= modulus;
    ASSERT_EQ(keys.seq_of(key, newest), want) << ports << " " << newest;
  }
}

// The frame model's DNS layer (frame.hpp): a query in place of the test tag, stamped per query,
// with xlatperf's names and with dns64perf++'s (3 bytes shorter: 15 label characters, not 18).
TEST(DnsFrames, EachQueryIsItsSequenceNumbersAndItsChecksumVerifies) {
  for (const NameStyle style : {NameStyle::kXlatperf, NameStyle::kDns64perf})
  for (int ip_version : {4, 6}) {
    const auto zone = std::make_shared<Zone>("dns64perf.test", style);
    const bool dns64perf = style == NameStyle::kDns64perf;
    xlp::FrameSpec spec;
    spec.ip_version = ip_version;
    spec.src_ip[0] = spec.dst_ip[0] = 0x20;
    spec.src_port = 40000;
    spec.dst_port = 53;
    spec.dns = xlp::FrameSpec::DnsQuery{zone, kTypeAaaa, true, 0x5be2a7c0};
    EXPECT_THROW(xlp::build_template(spec, 3, 9), std::invalid_argument);  // 64 bytes: not a query's size
    spec.frame_size = xlp::dns_frame_size(spec);
    // docs/dns.md: 62 bytes of DNS with EDNS(0) (59 with dns64perf++'s names)
    EXPECT_EQ(spec.frame_size, (ip_version == 4 ? 108u : 128u) - (dns64perf ? 3 : 0));
    const xlp::FrameTemplate t = xlp::build_template(spec, 3, 9);
    EXPECT_EQ(t.tag_offset, 0);
    EXPECT_EQ(t.dns_offset, t.l4_offset + 8);
    const uint32_t ports = 1000;
    for (uint64_t seq : {uint64_t(0), uint64_t(1), uint64_t(999), uint64_t(123456789)}) {
      Bytes f = t.bytes;
      const uint32_t index = uint32_t(seq * 7 + 1);
      // dns64perf++'s names carry an address: 10.0.x.y, and one with every digit (198.18.255.100).
      const TestName asked = dns64perf ? TestName{0, 0, seq == 999 ? 0xc612ff64 : 0x0a000000 + index}
                                       : TestName{0x5be2a7c0, 3, index};
      const QueryKeys keys(ports);
      const QueryKey key = keys.key_of(seq);
      // Every other query's letters in a case of its own (as with the question's check).
      const CaseFlips flips =
          seq % 2 ? case_flips(seq, dns64perf ? 0 : hex_digits(0x5be2a7c0), dns64perf ? 0 : hex_digits(index),
                               zone->first_word_letters())
                  : CaseFlips{};
      xlp::stamp_dns(f.data(), t, key, zone->stamp(asked, flips));
      // The query: the stream's name with this index, the key's ID and source port, its
      // letters in the case flipped.
      size_t end = 0;
      EXPECT_EQ(read_name(f.data() + t.dns_offset, f.size() - t.dns_offset, kHeader, *zone, &end), asked);
      uint8_t name[255];
      write_name(name, asked, *zone, flips);
      EXPECT_EQ(Bytes(name, name + zone->name_size()),
                Bytes(f.begin() + t.dns_offset + kHeader, f.begin() + t.dns_offset + kHeader + zone->name_size()));
      if (dns64perf && seq == 999) {
        const std::string label(reinterpret_cast<const char*>(name) + 1, kDns64perfLabelChars);
        EXPECT_EQ(label, "198-018-255-100");
      }
      EXPECT_EQ(f[t.dns_offset] << 8 | f[t.dns_offset + 1], key.id);
      EXPECT_EQ(f[t.l4_offset] << 8 | f[t.l4_offset + 1], 40000 + key.port_offset);
      EXPECT_EQ(keys.seq_of(QueryKey{uint16_t((f[t.l4_offset] << 8 | f[t.l4_offset + 1]) - 40000),
                                     uint16_t(f[t.dns_offset] << 8 | f[t.dns_offset + 1])},
                            seq),
                seq);
      // The UDP checksum over the pseudo header verifies (RFC 768).
      const size_t addr = ip_version == 4 ? 4 : 16;
      const size_t udp_len = f.size() - t.l4_offset;
      uint64_t sum = xlp::sum_words(spec.src_ip.data(), addr);
      sum = xlp::sum_words(spec.dst_ip.data(), addr, sum) + xlp::kProtoUdp + udp_len;
      sum = xlp::sum_words(f.data() + t.l4_offset, udp_len, sum);
      EXPECT_EQ(xlp::fold(sum), 0xffff) << ip_version << " " << seq;
      // The authoritative side answers it: it is a query of the zone.
      Bytes msg(f.begin() + t.dns_offset, f.end());
      msg.resize(512);
      EXPECT_GT(answer_in_place(msg.data(), f.size() - t.dns_offset, msg.size(), *zone, {}), 0u);
    }
  }
}
