// TCP handshakes through the data plane (ports in memory, harness.hpp): the Initiator's SYNs,
// the Responder's SYN-ACKs and the Initiator's ACKs, each answered in place by the receiver
// of the segment before it, through a reference NAT that tracks every connection's handshake
// (the checks a window-tracking conntrack makes of it) and rewrites addresses and ports.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <map>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "errors.hpp"
#include "harness.hpp"
#include "protocol.hpp"
#include "reference.hpp"
#include "tcp.hpp"

using namespace xlp;
using nlohmann::json;

namespace {

// A source NAT from port 0 (inside) to port 1 (outside) for TCP, one mapping per inside
// source port, with a tracker of each connection: SYN, then a SYN-ACK that acknowledges it,
// then an ACK that acknowledges the SYN-ACK with the next sequence number; then either the
// Initiator's FIN (next numbers), the Responder's FIN-ACK acknowledging it and the last ACK
// acknowledging that, or the Initiator's RST. A segment that breaks the order is dropped as
// invalid. `corrupt_syn_ack`: the DUT sends SYN-ACKs on with
// their acknowledgement number off by one (checksums fixed), as a broken DUT would.
class ReferenceNat {
 public:
  ReferenceNat(int version, bool corrupt_syn_ack = false)
      : version_(version), corrupt_(corrupt_syn_ack),
        outside_(parse_ip(version == 4 ? "203.0.113.1" : "2001:db8:ffff::1", version)) {}

  void operator()(uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& deliver) {
    uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
    std::vector<uint8_t> f(data, data + m->data_len);
    TestTag tag;
    if (!parse_test_frame(f.data(), uint32_t(f.size()), tag) || tag.l4 != kProtoTcp) return drop(m);
    const TcpView seg = tcp_view(f.data(), tag);
    const uint16_t sport = uint16_t(seg.src_port()[0] << 8 | seg.src_port()[1]);
    const uint16_t dport = uint16_t(seg.dst_port()[0] << 8 | seg.dst_port()[1]);
    if (port == 0) {
      if (seg.flags() == kTcpSyn) {
        if (by_inside_.count(sport)) return drop(m);
        const uint16_t mapped = uint16_t(20000 + by_inside_.size());
        by_inside_[sport] = mapped;
        conns_[mapped] = {sport, seg.seq(), 0, State::kSynSent};
      } else {
        auto it = by_inside_.find(sport);
        if (it == by_inside_.end()) return drop(m);
        Conn& c = conns_[it->second];
        const uint8_t flags = seg.flags();
        if (flags == kTcpAck && c.state == State::kSynReceived && seg.seq() == c.isn_i + 1 && seg.ack() == c.isn_r + 1) {
          c.state = State::kEstablished;
          ++established;
        } else if (flags == (kTcpFin | kTcpAck) && c.state == State::kEstablished && seg.seq() == c.isn_i + 1 &&
                   seg.ack() == c.isn_r + 1) {
          c.state = State::kFinWait;
        } else if (flags == kTcpAck && c.state == State::kLastAck && seg.seq() == c.isn_i + 2 &&
                   seg.ack() == c.isn_r + 2) {
          c.state = State::kClosed;
          ++closed;
        } else if (flags == (kTcpRst | kTcpAck) && c.state == State::kEstablished && seg.seq() == c.isn_i + 1) {
          c.state = State::kClosed;
          ++reset;
        } else {
          return drop(m);
        }
      }
      f = reference_snat(f, outside_, by_inside_[sport]);
    } else {
      auto it = conns_.find(dport);
      if (it == conns_.end()) return drop(m);
      Conn& c = it->second;
      if (seg.flags() == (kTcpSyn | kTcpAck) && c.state == State::kSynSent && seg.ack() == c.isn_i + 1) {
        c.isn_r = seg.seq();
        c.state = State::kSynReceived;
      } else if (seg.flags() == (kTcpFin | kTcpAck) && c.state == State::kFinWait && seg.seq() == c.isn_r + 1 &&
                 seg.ack() == c.isn_i + 2) {
        c.state = State::kLastAck;
      } else {
        return drop(m);
      }
      if (corrupt_) {
        const size_t ack = 14 + (version_ == 4 ? 20 : 40) + 8;
        ++f[ack + 3];
      }
      f = reference_snat(f, inside_address_, c.inside_port, true);
    }
    std::memcpy(data, f.data(), f.size());
    deliver(uint16_t(1 - port), m);
  }

  void set_inside(const std::string& address) { inside_address_ = parse_ip(address, version_); }
  uint64_t established = 0, closed = 0, reset = 0, invalid = 0;

 private:
  enum class State { kSynSent, kSynReceived, kEstablished, kFinWait, kLastAck, kClosed };
  struct Conn {
    uint16_t inside_port;
    uint32_t isn_i, isn_r;
    State state;
  };
  void drop(rte_mbuf* m) {
    ++invalid;
    rte_pktmbuf_free(m);
  }
  int version_;
  bool corrupt_;
  std::array<uint8_t, 16> outside_, inside_address_{};
  std::map<uint16_t, uint16_t> by_inside_;  // inside source port -> mapped port
  std::map<uint16_t, Conn> conns_;          // by mapped port
};

json handshakes(int v, uint32_t connections, TcpStep first = TcpStep::kSyn) {
  json fg = test::stream(v, min_frame_size(v, false, kProtoTcp, tcp_flags_of(first)));
  fg["vary"] = {{{"field", "src_port"}, {"mode", "enumerate"}, {"min", 1024}, {"max", 1024 + connections - 1}}};
  fg["enumerate"] = "random";
  json tcp = {{"key", 99},
              {"segments", first == TcpStep::kSyn ? "open" : first == TcpStep::kFin ? "close" : "reset"}};
  if (first != TcpStep::kRst)
    tcp["reply"] = {{"ip_version", v}, {"src_mac", "02:00:00:00:00:02"}, {"dst_mac", "02:00:00:00:00:01"}};
  json req = {{"duration", 1.0}, {"timeout", 0.2}, {"finish_early", true}, {"seed", 5},
              {"flows", {{{"name", "hs"}, {"tx_port", 0}, {"rx_port", 1}, {"rate", 20 * connections},
                          {"frames", connections}, {"foreground", fg}, {"tcp", tcp}}}}};
  if (first == TcpStep::kSyn)
    req["learn"] = {{"port", 1}, {"flow", 0}, {"table_size", connections}, {"ip_version", v}};
  return req;
}

}  // namespace

class TcpHandshakes : public ::testing::TestWithParam<int> {};

// Every handshake completes through the reference NAT (its tracker saw each in order), each
// of the three flows received all its frames, and the Responder learned every connection.
TEST_P(TcpHandshakes, CompleteThroughAReferenceNat) {
  XLP_REQUIRE_EAL();
  const int v = GetParam();
  ReferenceNat nat(v);
  nat.set_inside(v == 4 ? "198.18.0.2" : "2001:2::2");
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& d) { nat(port, m, d); });
  const uint32_t n = 500;
  const TrialReport r = bench.run(protocol::parse_trial(handshakes(v, n), 2));
  EXPECT_TRUE(r.valid) << r.invalid_reason;
  EXPECT_EQ(nat.established, n);
  EXPECT_EQ(nat.invalid, 0u);
  ASSERT_EQ(r.flows.size(), 3u);
  const char* names[] = {"hs", "hs.syn_ack", "hs.ack"};
  for (size_t i = 0; i < 3; ++i) {
    const FlowReport& f = r.flows[i];
    EXPECT_EQ(f.name, names[i]);
    EXPECT_EQ(f.planned, n) << names[i];
    EXPECT_EQ(f.sent, n) << names[i];
    EXPECT_EQ(f.received, n) << names[i];
    ASSERT_EQ(f.streams.size(), 1u);
    EXPECT_EQ(f.streams[0].tcp_unexpected, 0u) << names[i];
    EXPECT_EQ(f.streams[0].duplicates, 0u) << names[i];
    EXPECT_EQ(f.streams[0].bad_length, 0u) << names[i];
    EXPECT_EQ(f.streams[0].frame_size, (v == 4 ? 82u : 102u) - (i == 2 ? 4 : 0)) << names[i];
  }
  ASSERT_TRUE(r.state_table.has_value());
  EXPECT_EQ(r.state_table->entries, n);  // learned from the ACKs: every completed connection
  const StateTable& table = *bench.tables[1];
  std::set<uint16_t> mapped;
  for (uint64_t i = 0; i < table.size(); ++i) {
    const uint8_t* e = table.entry(i);
    const size_t alen = v == 4 ? 4 : 16;
    EXPECT_EQ(std::vector<uint8_t>(e, e + alen), std::vector<uint8_t>(v == 4 ? std::vector<uint8_t>{203, 0, 113, 1}
                                                                            : std::vector<uint8_t>{0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
    mapped.insert(uint16_t(e[2 * alen] << 8 | e[2 * alen + 1]));
  }
  EXPECT_EQ(mapped.size(), n);
  EXPECT_EQ(*mapped.begin(), 20000);
  EXPECT_EQ(*mapped.rbegin(), 20000 + n - 1);
}

// A DUT that breaks the SYN-ACK's acknowledgement: the Initiator answers none, counts each as
// unexpected, and no handshake completes.
TEST_P(TcpHandshakes, WrongAcknowledgementsAreCountedNotAnswered) {
  XLP_REQUIRE_EAL();
  const int v = GetParam();
  ReferenceNat nat(v, true);
  nat.set_inside(v == 4 ? "198.18.0.2" : "2001:2::2");
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& d) { nat(port, m, d); });
  const uint32_t n = 50;
  json req = handshakes(v, n);
  req["timeout"] = 0.05;
  const TrialReport r = bench.run(protocol::parse_trial(req, 2));
  ASSERT_EQ(r.flows.size(), 3u);
  EXPECT_EQ(r.flows[0].received, n);
  EXPECT_EQ(r.flows[1].sent, n);
  EXPECT_EQ(r.flows[1].received, 0u);
  EXPECT_EQ(r.flows[1].streams[0].tcp_unexpected, n);
  EXPECT_EQ(r.flows[2].sent, 0u);
  EXPECT_EQ(nat.established, 0u);
  EXPECT_EQ(r.state_table->entries, 0u);
}

// The connections opened, then closed (FIN, FIN-ACK, last ACK) or reset (RST), through the
// reference NAT, which sees every exchange in order.
TEST_P(TcpHandshakes, OpenedConnectionsCloseOrReset) {
  XLP_REQUIRE_EAL();
  const int v = GetParam();
  for (TcpStep end : {TcpStep::kFin, TcpStep::kRst}) {
    ReferenceNat nat(v);
    nat.set_inside(v == 4 ? "198.18.0.2" : "2001:2::2");
    test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& d) { nat(port, m, d); });
    const uint32_t n = 300;
    const TrialReport opened = bench.run(protocol::parse_trial(handshakes(v, n), 2));
    ASSERT_EQ(nat.established, n);
    const TrialReport r = bench.run(protocol::parse_trial(handshakes(v, n, end), 2));
    EXPECT_TRUE(r.valid) << r.invalid_reason;
    EXPECT_EQ(nat.invalid, 0u);
    if (end == TcpStep::kFin) {
      EXPECT_EQ(nat.closed, n);
      ASSERT_EQ(r.flows.size(), 3u);
      const char* names[] = {"hs", "hs.fin_ack", "hs.ack"};
      for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(r.flows[i].name, names[i]);
        EXPECT_EQ(r.flows[i].sent, n) << names[i];
        EXPECT_EQ(r.flows[i].received, n) << names[i];
        EXPECT_EQ(r.flows[i].streams[0].tcp_unexpected, 0u) << names[i];
        EXPECT_EQ(r.flows[i].streams[0].frame_size, v == 4 ? 78u : 98u) << names[i];
      }
    } else {
      EXPECT_EQ(nat.reset, n);
      ASSERT_EQ(r.flows.size(), 1u);
      EXPECT_EQ(r.flows[0].received, n);
      EXPECT_EQ(r.flows[0].streams[0].tcp_unexpected, 0u);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Versions, TcpHandshakes, ::testing::Values(4, 6));

TEST(TcpHandshakeRequests, BadOnesAreRefusedNamingTheKey) {
  auto refused = [](const json& req, const std::string& message) {
    try {
      protocol::parse_trial(req, 2);
      ADD_FAILURE() << "accepted: " << req.dump();
    } catch (const BadParameter& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
  };
  json req = handshakes(4, 10);
  req["flows"][0]["foreground"]["frame_size"] = 64;
  refused(req, "flows[0].foreground.frame_size = 64: must be 82 for IPv4 TCP open: its segments carry no payload");
  req = handshakes(4, 10);
  req["flows"][0]["tcp"]["segments"] = "close";
  refused(req, "flows[0].foreground.frame_size = 82: must be 78 for IPv4 TCP close: its segments carry no payload");
  req["flows"][0]["foreground"]["frame_size"] = 78;
  req["flows"][0]["tcp"]["segments"] = "reset";
  refused(req, "flows[0].tcp.reply = {\"dst_mac\":\"02:00:00:00:00:01\",\"ip_version\":4,\"src_mac\":\"02:00:00:00:00:02\"}: "
               "segments = reset: nothing answers an RST");
  req["flows"][0]["tcp"]["segments"] = "half";
  refused(req, "flows[0].tcp.segments = \"half\": must be one of open, close, reset");
  req = handshakes(6, 10);
  req["flows"][0]["tcp"]["reply"].erase("ip_version");
  refused(req, "flows[0].tcp.reply.ip_version: missing");
  req = handshakes(4, 10);
  req["flows"][0]["tcp"]["key"] = -1;
  refused(req, "flows[0].tcp.key = -1: must be an integer in 0..9223372036854775807");
  // A TCP flow needs one queue per port.
  test::Bench bench(nullptr, 2);
  EXPECT_THROW(bench.run(protocol::parse_trial(handshakes(4, 10), 2)), ExecutionFailure);
}
