// DNS queries through the data plane (ports in memory, harness.hpp; docs/dns.md): port 0 asks,
// port 1 is the authoritative side, and a test DUT between them passes, alters or holds the
// frames. The client's verdict on each reply is counted apart; every fault a DUT makes is caught
// as its own kind.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cctype>
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dns.hpp"
#include "core/dns_frame.hpp"
#include "core/errors.hpp"
#include "harness.hpp"
#include "protocol/protocol.hpp"
#include "reference.hpp"

using namespace xlp;
using nlohmann::json;

namespace {

constexpr uint32_t kQueries = 2000;

// A trial of `kQueries` queries from port 0 (`ports` source ports from 40000), port 1
// answering; `aaaa_share` of the names have a AAAA record.
json dns_trial(int v, const std::string& qtype, double aaaa_share, uint32_t ports = 100, bool edns = true) {
  json fg = test::stream(v, 0);
  fg["src_port"] = 40000;
  fg["dst_port"] = 53;
  FrameSpec spec;
  spec.ip_version = v;
  spec.dns = FrameSpec::DnsQuery{std::make_shared<const dns::Zone>("dns64perf.test"), dns::kTypeAaaa, edns, 7};
  fg["frame_size"] = dns_frame_size(spec);
  // Every query due in the first 0.4 s of a 1-s trial, and the schedule rule with 2 s of room
  // (max_lag): a sender held up by a busy host (the other tests' builds and runs on the same
  // two CPUs) still sends them all, late, and the trial judges the replies, not its pace.
  return {{"duration", 1.0},
          {"timeout", 0.8},
          {"max_lag", 2.0},
          {"seed", 3},
          {"delay", {{"frame_timeout", 0.25}}},
          {"dns", {{"zone", "dns64perf.test"}, {"aaaa_share", aaaa_share}, {"authoritative", {1}}}},
          {"flows",
           {{{"name", "queries"},
             {"tx_port", 0},
             {"rx_port", 0},
             {"rate", kQueries * 5},
             {"frames", kQueries},
             {"foreground", fg},
             {"dns", {{"qtype", qtype}, {"edns", edns}, {"ports", ports}, {"nonce", 0x5be2a7c0}}}}}}};
}

// Where a frame's DNS message lies (no VLAN, no tunnel).
struct Msg {
  size_t ip, udp, dns, end;
};
Msg locate(const uint8_t* f, size_t len) {
  TestTag hdrs;
  EXPECT_TRUE(parse_headers(f, uint32_t(len), hdrs));
  const auto m = dns_message(f, uint32_t(len), hdrs);
  EXPECT_TRUE(m.has_value());
  return {hdrs.l3_offset, hdrs.l4_offset, m->offset, m->offset + m->len};
}

// The UDP checksum written afresh with the test's own reference (an altered message).
void refresh_udp_checksum(uint8_t* f, size_t len) {
  const Msg at = locate(f, len);
  const bool v4 = f[at.ip] >> 4 == 4;
  std::vector<uint8_t> pseudo(f + at.ip + (v4 ? 12 : 8), f + at.ip + (v4 ? 20 : 40));
  const size_t udp_len = at.end - at.udp;
  pseudo.insert(pseudo.end(), {0, 0, uint8_t(udp_len >> 8), uint8_t(udp_len), 0, 0, 0, kProtoUdp});
  f[at.udp + 6] = f[at.udp + 7] = 0;
  pseudo.insert(pseudo.end(), f + at.udp, f + at.end);
  uint16_t c = reference_checksum(pseudo);
  if (c == 0) c = 0xffff;
  f[at.udp + 6] = uint8_t(c >> 8);
  f[at.udp + 7] = uint8_t(c);
}

// The answer cut to its header, no question or records, with RCODE `rcode`: a server's error
// kept small (Unbound's REFUSED). Its lengths and IPv4 header checksum written afresh (the UDP
// checksum: refresh_udp_checksum).
void cut_to_header(rte_mbuf* m, uint8_t rcode) {
  uint8_t* f = rte_pktmbuf_mtod(m, uint8_t*);
  const Msg at = locate(f, m->data_len);
  uint8_t* msg = f + at.dns;
  msg[3] = uint8_t((msg[3] & 0xf0) | rcode);
  std::fill(msg + 4, msg + dns::kHeader, 0);  // QDCOUNT, ANCOUNT, NSCOUNT, ARCOUNT
  const size_t end = at.dns + dns::kHeader;
  const bool v4 = f[at.ip] >> 4 == 4;
  const size_t ip_len = end - at.ip - (v4 ? 0 : 40);
  f[at.ip + (v4 ? 2 : 4)] = uint8_t(ip_len >> 8);
  f[at.ip + (v4 ? 3 : 5)] = uint8_t(ip_len);
  f[at.udp + 4] = uint8_t((end - at.udp) >> 8);
  f[at.udp + 5] = uint8_t(end - at.udp);
  if (v4) {
    f[at.ip + 10] = f[at.ip + 11] = 0;
    const uint16_t c = reference_checksum({f + at.ip, f + at.ip + 20});
    f[at.ip + 10] = uint8_t(c >> 8), f[at.ip + 11] = uint8_t(c);
  }
  m->data_len = uint16_t(std::max<size_t>(end, 60));  // the Ethernet minimum, padded
  m->pkt_len = m->data_len;
}

// What a faulty DUT does to every fourth answer on its way back to the client (kSilent: to the
// answers of queries kSilentFrom .. kSilentTo - 1, which it drops).
enum class Fault { kNone, kServFail, kWrongAddress, kOtherId, kTruncated, kDrop, kDuplicate, kLate, kUnanswerable,
                   kBadChecksum, kOtherSource, kRefusedHeaderOnly, kSilent, kOtherName };
constexpr uint64_t kSilentFrom = 70000, kSilentTo = 104000;

class FaultyPath {
 public:
  explicit FaultyPath(Fault f) : fault_(f) {}
  test::MemoryIo* io = nullptr;  // the ports it is between
  std::set<std::string> names;    // of the queries it passed (lower case)
  void operator()(uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    uint8_t* f = rte_pktmbuf_mtod(m, uint8_t*);
    const Msg at = locate(f, m->data_len);
    if (port == 0) {  // a query, on its way to the authoritative side
      std::string name;
      for (size_t i = at.dns + dns::kHeader; f[i] != 0; ++i) name += char(std::tolower(f[i]));
      names.insert(name);
      // A resolver's 0x20 case randomisation of the name: the answer must echo it.
      for (size_t i = at.dns + dns::kHeader; f[i] != 0; ++i)
        if (std::isalpha(f[i]) && (i % 3 == 0)) f[i] = uint8_t(std::toupper(f[i]));
      if (fault_ == Fault::kUnanswerable && ++queries_ % 4 == 0) f[at.end - 11 - 3] = 15;  // QTYPE MX
      refresh_udp_checksum(f, m->data_len);
      return deliver(1, m);
    }
    ++answers_;
    if (fault_ == Fault::kSilent) {
      if (answers_ > kSilentFrom && answers_ <= kSilentTo) return rte_pktmbuf_free(m);
      return deliver(0, m);
    }
    if (fault_ == Fault::kNone || fault_ == Fault::kUnanswerable || answers_ % 4 != 0) return deliver(0, m);
    uint8_t* msg = f + at.dns;
    switch (fault_) {
      case Fault::kServFail: msg[3] = uint8_t((msg[3] & 0xf0) | dns::kServFail); break;
      case Fault::kWrongAddress: f[at.end - 11 - 1] ^= 1; break;  // the last byte of the address, before the OPT
      case Fault::kOtherId: msg[1] ^= 1; break;
      case Fault::kTruncated: msg[2] |= uint8_t(dns::kFlagTc >> 8); break;
      case Fault::kDrop: rte_pktmbuf_free(m); return;
      case Fault::kDuplicate: deliver(0, rte_pktmbuf_copy(m, test::eal().pool, 0, UINT32_MAX)); break;
      case Fault::kBadChecksum:  // the UDP checksum wrong, never 0 (no checksum over IPv4)
        f[at.udp + 7] ^= (f[at.udp + 6] == 0 && f[at.udp + 7] == 1) ? 2 : 1;
        return deliver(0, m);
      case Fault::kOtherSource: {  // from another address: two of its 16-bit words swapped, so
        // that every checksum over it still verifies (a one's complement sum is the words' sum)
        const size_t src = at.ip + (f[at.ip] >> 4 == 4 ? 12 : 8), last = f[at.ip] >> 4 == 4 ? 2 : 14;
        std::swap(f[src], f[src + last]);
        std::swap(f[src + 1], f[src + last + 1]);
        return deliver(0, m);
      }
      case Fault::kLate:  // held back 0.3 s: later than the 0.25-s timeout
        io->deliver_after(std::chrono::milliseconds(300), 0, m);
        return;
      case Fault::kRefusedHeaderOnly:
        cut_to_header(m, 5);  // REFUSED (RFC 1035 §4.1.1)
        break;
      case Fault::kOtherName:  // the question's last digit another (a decimal digit: still a name)
        msg[dns::kHeader + msg[dns::kHeader]] ^= 1;
        break;
      default: break;
    }
    refresh_udp_checksum(f, m->data_len);
    deliver(0, m);
  }

 private:
  Fault fault_;
  uint64_t answers_ = 0, queries_ = 0;
};

const StreamReport& queries_of(const TrialReport& r) { return r.flows.at(0).streams.at(0); }
uint64_t fault(const TrialReport& r, dns::ReplyVerdict v) { return queries_of(r).dns_faults.value()[size_t(v)]; }

}  // namespace

class DnsTrials : public ::testing::TestWithParam<int> {};

// Looped back, every query is answered by port 1 and every answer judged good on port 0: AAAA
// queries of names that all have a AAAA record (the RFC 8219 §9.2.1 self-test's set-up), A
// queries, without EDNS(0) too, from one source port or a hundred.
TEST_P(DnsTrials, EveryQueryOfALoopIsAnsweredAndJudgedGood) {
  XLP_REQUIRE_EAL();
  const int v = GetParam();
  for (const auto& [qtype, edns, ports] : {std::tuple{"AAAA", true, 100u}, {"A", true, 1u}, {"AAAA", false, 7u}}) {
    SCOPED_TRACE(std::string(qtype) + (edns ? " edns" : "") + " ports " + std::to_string(ports));
    test::Bench bench(FaultyPath(Fault::kNone));
    const TrialReport r = bench.run(protocol::parse_trial(dns_trial(v, qtype, 1.0, ports, edns), 2));
    EXPECT_TRUE(r.valid) << r.invalid_reason;
    const StreamReport& s = queries_of(r);
    EXPECT_EQ(s.sent, kQueries);
    EXPECT_EQ(s.received, kQueries);
    EXPECT_EQ(s.late.value_or(0), 0u);
    EXPECT_EQ(s.duplicates, 0u);
    for (size_t k = 1; k < dns::kReplyVerdicts; ++k) EXPECT_EQ(s.dns_faults.value()[k], 0u) << dns::kReplyVerdictNames[k];
    ASSERT_TRUE(s.delay_ns.has_value());
    EXPECT_GT(s.delay_ns->min, 0.0);
    ASSERT_EQ(r.ports.size(), 2u);
    ASSERT_TRUE(r.ports[0].dns.has_value());
    EXPECT_EQ(r.ports[0].dns->answered, 0u);  // the client's port answers nothing
    ASSERT_TRUE(r.ports[1].dns.has_value());
    EXPECT_EQ(r.ports[1].dns->answered, kQueries);
    EXPECT_EQ(r.ports[1].dns->unanswered, 0u);
    EXPECT_EQ(r.ports[0].foreign, 0u);
    EXPECT_EQ(r.ports[1].foreign, 0u);
  }
}

// A share of the queries ask a name again (RFC 8219 §9.2's cache-hit grid), 0.1 s (1000 queries)
// after its first query: the DUT sees that many fewer names, and every answer is judged good.
TEST_P(DnsTrials, RepeatedNamesAreAskedAgainAndJudgedGood) {
  XLP_REQUIRE_EAL();
  json req = dns_trial(GetParam(), "AAAA", 1.0);
  req["flows"][0]["dns"]["repeat"] = 0.4;
  req["flows"][0]["dns"]["repeat_after"] = 0.1;
  FaultyPath dut(Fault::kNone);
  test::Bench bench([&dut](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& d) { dut(port, m, d); });
  const TrialReport r = bench.run(protocol::parse_trial(req, 2));
  EXPECT_EQ(queries_of(r).received, kQueries);
  EXPECT_EQ(dut.names.size(), kQueries - 400u);  // the second 1000 queries: 40 % repeat a name
}

// AAAA queries of names without a AAAA record, answered NODATA and nothing synthesized (no
// DNS64 between): every answer is a wrong answer, none a loss.
TEST_P(DnsTrials, ANoDataWhereASynthesisIsDueIsAWrongAnswer) {
  XLP_REQUIRE_EAL();
  test::Bench bench(FaultyPath(Fault::kNone));
  const TrialReport r = bench.run(protocol::parse_trial(dns_trial(GetParam(), "AAAA", 0.0), 2));
  EXPECT_EQ(queries_of(r).received, 0u);
  EXPECT_EQ(fault(r, dns::ReplyVerdict::kWrongAnswer), kQueries);
  EXPECT_EQ(queries_of(r).late.value_or(0), 0u);
}

// Each fault of a DUT is counted as its own kind, on a quarter of the answers, and the rest
// are received.
TEST_P(DnsTrials, EachFaultOfAnAnswerIsCountedApart) {
  XLP_REQUIRE_EAL();
  const int v = GetParam();
  const uint64_t quarter = kQueries / 4;
  struct Case {
    Fault fault;
    std::optional<dns::ReplyVerdict> verdict;
  };
  for (const Case c : {Case{Fault::kServFail, dns::ReplyVerdict::kServFail},
                       Case{Fault::kWrongAddress, dns::ReplyVerdict::kWrongAnswer},
                       Case{Fault::kOtherId, dns::ReplyVerdict::kMismatch},
                       Case{Fault::kTruncated, dns::ReplyVerdict::kTruncated}, Case{Fault::kDrop, std::nullopt},
                       Case{Fault::kDuplicate, std::nullopt}, Case{Fault::kLate, std::nullopt},
                       Case{Fault::kUnanswerable, std::nullopt}, Case{Fault::kBadChecksum, std::nullopt},
                       Case{Fault::kOtherSource, std::nullopt},
                       Case{Fault::kRefusedHeaderOnly, dns::ReplyVerdict::kOtherRcode}}) {
    SCOPED_TRACE(int(c.fault));
    FaultyPath dut(c.fault);
    test::Bench bench([&dut](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& d) { dut(port, m, d); });
    dut.io = &bench.io;
    const TrialReport r = bench.run(protocol::parse_trial(dns_trial(v, "AAAA", 1.0), 2));
    const StreamReport& s = queries_of(r);
    EXPECT_EQ(s.sent, kQueries);
    const bool lost = c.fault != Fault::kDuplicate;
    EXPECT_EQ(s.received, kQueries - (lost ? quarter : 0));
    for (size_t k = 1; k < dns::kReplyVerdicts; ++k)
      EXPECT_EQ(s.dns_faults.value()[k], c.verdict && size_t(*c.verdict) == k ? quarter : 0u)
          << dns::kReplyVerdictNames[k];
    EXPECT_EQ(s.duplicates, c.fault == Fault::kDuplicate ? quarter : 0u);
    EXPECT_EQ(s.late.value_or(0), c.fault == Fault::kLate ? quarter : 0u);
    ASSERT_TRUE(s.header_faults.has_value());
    EXPECT_EQ((*s.header_faults)[size_t(Verdict::kBadChecksum)], c.fault == Fault::kBadChecksum ? quarter : 0u);
    EXPECT_EQ((*s.header_faults)[size_t(Verdict::kBadAddress)], c.fault == Fault::kOtherSource ? quarter : 0u);
    EXPECT_EQ(r.ports[1].dns->unanswered, c.fault == Fault::kUnanswerable ? quarter : 0u);
    EXPECT_EQ(r.ports[1].dns->answered, kQueries - (c.fault == Fault::kUnanswerable ? quarter : 0));
  }
}

// A reply without its question (Unbound's REFUSED, header only) is tied to its query by the
// port it came to and its ID, and counted by its RCODE, not lost and not foreign; also where the
// flow's queries leave from two queues (each lane its own share of the source ports), and from
// a single port. A header-only NOERROR answers nothing that can be checked: malformed.
TEST_P(DnsTrials, AReplyWithoutItsQuestionIsCountedByItsRcode) {
  XLP_REQUIRE_EAL();
  const uint64_t quarter = kQueries / 4;
  for (const auto& [queues, ports] : {std::pair{uint16_t(1), 100u}, {uint16_t(2), 100u}, {uint16_t(2), 3u},
                                      {uint16_t(1), 1u}}) {
    SCOPED_TRACE("queues " + std::to_string(queues) + " ports " + std::to_string(ports));
    FaultyPath dut(Fault::kRefusedHeaderOnly);
    test::Bench bench([&dut](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& d) { dut(port, m, d); },
                      queues);
    const TrialReport r = bench.run(protocol::parse_trial(dns_trial(GetParam(), "AAAA", 1.0, ports), 2));
    uint64_t received = 0, refused = 0, mismatched = 0;
    for (const StreamReport& s : r.flows.at(0).streams) {
      received += s.received;
      refused += s.dns_faults.value()[size_t(dns::ReplyVerdict::kOtherRcode)];
      mismatched += s.dns_faults.value()[size_t(dns::ReplyVerdict::kMismatch)];
    }
    EXPECT_EQ(received, kQueries - quarter);
    EXPECT_EQ(refused, quarter);
    EXPECT_EQ(mismatched, 0u);
    EXPECT_EQ(r.ports[0].foreign, 0u);
  }
}

// A DUT silent for longer than half the key space (34,000 queries from one source port: 65,536
// port and ID pairs) and answering again: the replies after it are named by the newest query the
// stream sent, not by the last reply it took, so each is its own query's and received.
TEST_P(DnsTrials, RepliesAfterALongSilenceAreStillNamedRight) {
  XLP_REQUIRE_EAL();
  constexpr uint64_t kMany = 120000;
  json req = dns_trial(GetParam(), "AAAA", 1.0, 1);
  // All sent in 0.8 s of the 1-s trial. A reply is misnamed only if its query's key came round
  // again before it arrived, 65,536 queries (0.44 s) later: no busy host holds a worker so long.
  req["flows"][0]["rate"] = 150000;
  req["flows"][0]["frames"] = kMany;
  req["delay"]["frame_timeout"] = 0.2;  // rate x timeout under half of 65,536 x 1 port
  FaultyPath dut(Fault::kSilent);
  test::Bench bench([&dut](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& d) { dut(port, m, d); });
  const TrialReport r = bench.run(protocol::parse_trial(req, 2));
  const StreamReport& s = queries_of(r);
  ASSERT_EQ(s.sent, kMany);
  // Answers the test's DUT could not pass in time (a busy host) are late, never misnamed.
  EXPECT_EQ(fault(r, dns::ReplyVerdict::kMismatch), 0u);
  EXPECT_EQ(s.duplicates, 0u);
  EXPECT_EQ(s.received + s.late.value_or(0), kMany - (kSilentTo - kSilentFrom));
  EXPECT_GT(s.received, kSilentTo - kSilentFrom);  // answers after the silence were taken
}

// dns64perf++'s names (dns.names = dns64perf), 3 bytes shorter than xlatperf's: the trial's
// first name the `names_from`-th address of dns.a; the tester's authoritative side answers them
// as any server of such a zone does.
json dns64perf_trial(int v, const std::string& qtype, const std::string& a, uint64_t names_from) {
  json req = dns_trial(v, qtype, 0.0);
  req["flows"][0]["foreground"]["frame_size"] = req["flows"][0]["foreground"]["frame_size"].get<uint32_t>() - 3;
  req["dns"]["names"] = "dns64perf";
  req["dns"]["a"] = a;
  req["flows"][0]["dns"]["names_from"] = names_from;
  return req;
}

// From two queues each asking its own names, round the end of the prefix and on from its start:
// every name asked once, every A answer judged good; an answer with another name, another
// address or REFUSED without its question counted as such on exactly the quarter of the answers
// spoiled; a AAAA query answered NODATA (no DNS64 between) a wrong answer.
TEST_P(DnsTrials, Dns64perfNamesAreEachAskedOnceAndTheirAnswersJudged) {
  XLP_REQUIRE_EAL();
  const int v = GetParam();
  const uint64_t quarter = kQueries / 4;
  {
    FaultyPath dut(Fault::kNone);
    test::Bench bench([&dut](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& d) { dut(port, m, d); }, 2);
    const TrialReport r = bench.run(protocol::parse_trial(dns64perf_trial(v, "A", "198.18.0.0/16", 65000), 2));
    uint64_t sent = 0, received = 0;
    for (const StreamReport& s : r.flows.at(0).streams) {
      sent += s.sent;
      received += s.received;
      for (size_t k = 1; k < dns::kReplyVerdicts; ++k) EXPECT_EQ(s.dns_faults.value()[k], 0u) << dns::kReplyVerdictNames[k];
    }
    EXPECT_EQ(sent, kQueries);
    EXPECT_EQ(received, kQueries);
    EXPECT_EQ(dut.names.size(), kQueries);  // no name twice
    // The first (queue 0's first), the prefix's last and, past it, its first.
    for (const char* label : {"198-018-253-232", "198-018-255-255", "198-018-000-000"})
      EXPECT_TRUE(dut.names.count(char(15) + std::string(label) + char(9) + "dns64perf" + char(4) + "test")) << label;
    EXPECT_EQ(r.ports[0].foreign, 0u);
  }
  struct Case {
    Fault fault;
    dns::ReplyVerdict verdict;
  };
  for (const Case c : {Case{Fault::kOtherName, dns::ReplyVerdict::kMismatch},
                       Case{Fault::kWrongAddress, dns::ReplyVerdict::kWrongAnswer},
                       Case{Fault::kRefusedHeaderOnly, dns::ReplyVerdict::kOtherRcode}}) {
    SCOPED_TRACE(int(c.fault));
    test::Bench bench(FaultyPath(c.fault));
    const TrialReport r = bench.run(protocol::parse_trial(dns64perf_trial(v, "A", "10.0.0.0/8", 7), 2));
    const StreamReport& s = queries_of(r);
    EXPECT_EQ(s.received, kQueries - quarter);
    for (size_t k = 1; k < dns::kReplyVerdicts; ++k)
      EXPECT_EQ(s.dns_faults.value()[k], size_t(c.verdict) == k ? quarter : 0u) << dns::kReplyVerdictNames[k];
  }
  test::Bench bench(FaultyPath(Fault::kNone));
  const TrialReport r = bench.run(protocol::parse_trial(dns64perf_trial(v, "AAAA", "10.0.0.0/8", 0), 2));
  EXPECT_EQ(queries_of(r).received, 0u);
  EXPECT_EQ(fault(r, dns::ReplyVerdict::kWrongAnswer), kQueries);
}

INSTANTIATE_TEST_SUITE_P(IpVersions, DnsTrials, ::testing::Values(4, 6));

// A trial that would ask more dns64perf++ names than dns.a holds addresses asks none: it would
// ask a name twice, which a cache answers.
TEST(DnsTrialRequests, Dns64perfNamesMustFitTheirPrefix) {
  XLP_REQUIRE_EAL();
  test::Bench bench;
  try {
    bench.run(protocol::parse_trial(dns64perf_trial(4, "A", "198.18.0.0/22", 0), 2));
    FAIL() << "no error";
  } catch (const ExecutionFailure& e) {
    EXPECT_STREQ(e.what(), "flows: queries asks up to 2000 dns64perf names, more than the 1024 addresses of dns.a "
                           "(/22): a name would be asked again (use a shorter prefix, or fewer queries)");
  }
  json aaaa = dns64perf_trial(4, "A", "198.18.0.0/16", 0);
  aaaa["dns"]["aaaa_share"] = 0.5;
  EXPECT_THROW(protocol::parse_trial(aaaa, 2), BadParameter);
}

// A flow of DNS queries is refused where it could not be judged: with no trial zone, replies
// expected on another port, no reply timeout, too few ports for the queries outstanding, a
// frame size other than the query's.
TEST(DnsTrialRequests, RefuseWhatCannotBeJudged) {
  const auto refused = [](json req, const std::string& key) {
    try {
      protocol::parse_trial(req, 2);
      ADD_FAILURE() << "accepted; expected an error on " << key;
    } catch (const BadParameter& e) {
      EXPECT_EQ(e.key(), key) << e.what();
    }
  };
  json req = dns_trial(6, "AAAA", 0);
  json r = req;
  r.erase("dns");
  refused(r, "flows[0].dns");
  r = req;
  r["flows"][0]["rx_port"] = 1;
  refused(r, "flows[0].rx_port");
  r = req;
  r["delay"]["frame_timeout"] = 0;
  refused(r, "delay.frame_timeout");
  r = req;
  r["flows"][0]["dns"]["ports"] = 1;
  r["flows"][0]["rate"] = 200000;  // 50,000 outstanding in 0.25 s: more than 32,768 per port
  refused(r, "flows[0].dns.ports");
  r = req;
  r["flows"][0]["foreground"]["frame_size"] = 128 + 4;
  refused(r, "flows[0].foreground.frame_size");
  r = req;
  r["flows"][0]["dns"]["synthesis"] = "64:ff9b::/72";
  refused(r, "flows[0].dns.synthesis");
  r = req;
  r["dns"]["authoritative"] = {2};
  refused(r, "dns.authoritative[0]");
  r = req;
  r["dns"]["zone"] = "bad_zone.test";
  refused(r, "dns.zone");
}
