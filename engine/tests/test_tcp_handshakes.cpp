// TCP handshakes through the data plane (ports in memory, harness.hpp): the Initiator's SYNs,
// the Responder's SYN-ACKs and the Initiator's ACKs, each answered in place by the receiver
// of the segment before it, through a reference NAT that tracks every connection's handshake
// (the checks a window-tracking conntrack makes of it) and rewrites addresses and ports.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "harness.hpp"
#include "protocol/protocol.hpp"
#include "reference.hpp"
#include "emulation/tcp.hpp"

using namespace xlp;
using nlohmann::json;

namespace {

// A source NAT from port 0 (inside) to port 1 (outside) for TCP, one mapping per inside
// source port, with a tracker of each connection: SYN, then a SYN-ACK that acknowledges it,
// then an ACK that acknowledges the SYN-ACK with the next sequence number (and any number of
// the Responder's ACKs acknowledging the handshake again); then either the Initiator's FIN
// (next numbers), the Responder's FIN-ACK acknowledging it and the last ACK acknowledging
// that, or the Initiator's RST. It tracks each side's receive window as Linux conntrack and PF
// do (RFC 7323 §2.2): a SYN's or SYN-ACK's window field unscaled, later segments' scaled by the
// shift that side's SYN announced; a data segment that ends beyond the window its receiver
// announced past its last acknowledgement is dropped. A segment that breaks the order is
// dropped as invalid. `modulate`: it rewrites the Initiator's sequence numbers by an offset of
// each connection's, and the Responder's acknowledgements back, as OpenBSD PF's modulate state
// and carrier-grade NATs do (the tracker keeps the Initiator's own numbers). `corrupt_syn_ack`: the DUT sends SYN-ACKs on with
// their acknowledgement number off by one (checksums fixed), as a broken DUT would.
class ReferenceNat {
 public:
  ReferenceNat(int version, bool corrupt_syn_ack = false, bool modulate = false, uint16_t clamp_mss = 0,
               bool strip_mss = false)
      : version_(version), corrupt_(corrupt_syn_ack), modulate_(modulate), strip_mss_(strip_mss), clamp_mss_(clamp_mss),
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
        conns_[mapped] = {sport, seg.seq(), 0, State::kSynSent, seg.seq() + 1, 0};
        conns_[mapped].initiator.opened(seg);
        if (modulate_) conns_[mapped].delta = 0x9e3779b9u * (mapped + 1u);
      } else {
        auto it = by_inside_.find(sport);
        if (it == by_inside_.end()) return drop(m);
        Conn& c = conns_[it->second];
        const uint8_t flags = seg.flags();
        c.initiator.announced(seg);
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
        } else if (flags == (kTcpAck | kTcpPsh) && c.state == State::kEstablished && seg.seq() == c.next_i &&
                   seg.ack() == c.isn_r + 1 && c.responder.takes(c.isn_i + 1, c.next_i + payload(f, tag))) {
          c.next_i += payload(f, tag);  // the byte stream continues where the last segment ended
          ++data_segments;
        } else {
          return drop(m);
        }
      }
      const uint32_t delta = conns_[by_inside_[sport]].delta;
      put32(&f[tag.l4_offset + 4], seg.seq() + delta);  // modulated: its number on the outside
      f = reference_snat(f, outside_, by_inside_[sport]);
    } else {
      auto it = conns_.find(dport);
      if (it == conns_.end()) return drop(m);
      Conn& c = it->second;
      const uint32_t isn_i = c.isn_i + c.delta;  // the Initiator's ISN as the Responder knows it
      if (seg.flags() == (kTcpSyn | kTcpAck) && c.state == State::kSynSent && seg.ack() == isn_i + 1) {
        c.isn_r = seg.seq();
        c.next_r = c.isn_r + 1;
        c.state = State::kSynReceived;
        c.responder.opened(seg);
      } else if (seg.flags() == kTcpAck && c.state == State::kEstablished && seg.seq() == c.isn_r + 1 &&
                 seg.ack() == isn_i + 1) {
        c.responder.announced(seg);  // the window ACK: the Responder's first scaled window
        ++window_acks;
      } else if (seg.flags() == (kTcpAck | kTcpPsh) && c.state == State::kEstablished && seg.seq() == c.next_r &&
                 seg.ack() == isn_i + 1 && c.initiator.takes(c.isn_r + 1, c.next_r + payload(f, tag))) {
        c.responder.announced(seg);
        c.next_r += payload(f, tag);
        ++data_segments;
      } else if (seg.flags() == (kTcpFin | kTcpAck) && c.state == State::kFinWait && seg.seq() == c.isn_r + 1 &&
                 seg.ack() == isn_i + 2) {
        c.state = State::kLastAck;
      } else {
        return drop(m);
      }
      put32(&f[tag.l4_offset + 8], seg.ack() - c.delta);  // the Initiator's own numbers again
      if (corrupt_) {
        const size_t ack = 14 + (version_ == 4 ? 20 : 40) + 8;
        ++f[ack + 3];
      }
      f = reference_snat(f, inside_address_, c.inside_port, true);
    }
    if (clamp_mss_ && (f[tag.l4_offset + 13] & kTcpSyn)) clamp(f, tag.l4_offset);
    std::memcpy(data, f.data(), f.size());
    m->data_len = uint16_t(f.size());
    m->pkt_len = uint32_t(f.size());
    deliver(uint16_t(1 - port), m);
  }

  void set_inside(const std::string& address) { inside_address_ = parse_ip(address, version_); }
  uint64_t established = 0, closed = 0, reset = 0, data_segments = 0, window_acks = 0, invalid = 0, clamped = 0;

 private:
  enum class State { kSynSent, kSynReceived, kEstablished, kFinWait, kLastAck, kClosed };
  // One side's receive window as the tracker knows it.
  struct Window {
    uint32_t shift = 0, bytes = 0;
    void opened(const TcpView& syn) {  // a SYN's or SYN-ACK's window is never scaled
      bytes = uint32_t(syn.tcp[14] << 8 | syn.tcp[15]);
      const uint32_t header = (syn.tcp[12] >> 4) * 4u;
      for (uint32_t at = 20; at + 1 < header;) {  // the options: the window scale's shift
        const uint8_t kind = syn.tcp[at];
        if (kind == 0) break;
        if (kind == 1) {
          ++at;
          continue;
        }
        if (kind == 3 && syn.tcp[at + 1] == 3) shift = syn.tcp[at + 2];
        at += std::max<uint32_t>(2, syn.tcp[at + 1]);
      }
    }
    void announced(const TcpView& seg) { bytes = uint32_t(seg.tcp[14] << 8 | seg.tcp[15]) << shift; }
    // Whether data up to `end` (exclusive) fits the window past acknowledgement `acked`.
    bool takes(uint32_t acked, uint32_t end) const { return end - acked <= bytes; }
  };
  struct Conn {
    uint16_t inside_port;
    uint32_t isn_i, isn_r;
    State state;
    uint32_t next_i, next_r;  // each side's next data byte
    Window initiator{}, responder{};  // each side's receive window
    uint32_t delta = 0;  // modulate: what the Initiator's sequence numbers gain outside
  };
  static uint32_t payload(const std::vector<uint8_t>& f, const TestTag& tag) {
    return uint32_t(f.size() - tag.l4_offset - (f[tag.l4_offset + 12] >> 4) * 4u);
  }
  void drop(rte_mbuf* m) {
    ++invalid;
    rte_pktmbuf_free(m);
  }
  // What Linux's xt_TCPMSS does to a SYN: lowers its MSS option to the clamp where it is above
  // it, in place; without one (strip_mss: the option removed first, as from a sender that sends
  // none), inserts one (kind 2, length 4) in front of the other options. Lengths and checksums
  // adjusted.
  void clamp(std::vector<uint8_t>& f, size_t tcp) {
    const size_t ip = 14;
    const bool v4 = (f[ip] >> 4) == 4;
    const size_t length_at = v4 ? ip + 2 : ip + 4;
    const auto add_length = [&](int bytes) {
      const size_t length = (f[length_at] << 8 | f[length_at + 1]) + bytes;
      f[length_at] = uint8_t(length >> 8), f[length_at + 1] = uint8_t(length);
      f[tcp + 12] = uint8_t(f[tcp + 12] + bytes / 4 * 0x10);  // the data offset, in 32-bit words
    };
    const size_t options_end = tcp + (f[tcp + 12] >> 4) * 4u;
    size_t mss_at = 0;
    for (size_t at = tcp + kTcpHeader; at < options_end; at += f[at] == 1 ? 1 : f[at + 1])
      if (f[at] == 2) mss_at = at;
    if (mss_at && strip_mss_) {  // the option out, a NOP word's worth of padding in its place
      f.erase(f.begin() + ptrdiff_t(mss_at), f.begin() + ptrdiff_t(mss_at + 4));
      add_length(-4);
      mss_at = 0;
    }
    if (mss_at) {
      if ((f[mss_at + 2] << 8 | f[mss_at + 3]) > clamp_mss_) {
        f[mss_at + 2] = uint8_t(clamp_mss_ >> 8);
        f[mss_at + 3] = uint8_t(clamp_mss_);
      }
    } else {
      const uint8_t mss[4] = {2, 4, uint8_t(clamp_mss_ >> 8), uint8_t(clamp_mss_)};
      f.insert(f.begin() + ptrdiff_t(tcp + kTcpHeader), mss, mss + 4);
      add_length(4);
    }
    // Checksums afresh: the addresses as they are (reference_snat writes the same ones again).
    std::array<uint8_t, 16> dst{};
    std::copy_n(f.begin() + ptrdiff_t(ip + (v4 ? 16 : 24)), v4 ? 4 : 16, dst.begin());
    f = reference_snat(f, dst, uint16_t(f[tcp + 2] << 8 | f[tcp + 3]), true);
    ++f[v4 ? ip + 8 : ip + 7];  // reference_snat decremented the TTL: not twice
    if (v4) {
      f[ip + 10] = f[ip + 11] = 0;
      const uint16_t c = reference_checksum({f.begin() + ip, f.begin() + ip + 20});
      f[ip + 10] = uint8_t(c >> 8), f[ip + 11] = uint8_t(c);
    }
    ++clamped;
  }
  static void put32(uint8_t* p, uint32_t v) {
    for (int i = 3; i >= 0; --i, v >>= 8) p[i] = uint8_t(v);
  }
  int version_;
  bool corrupt_, modulate_, strip_mss_;
  uint16_t clamp_mss_;
  std::array<uint8_t, 16> outside_, inside_address_{};
  std::map<uint16_t, uint16_t> by_inside_;  // inside source port -> mapped port
  std::map<uint16_t, Conn> conns_;          // by mapped port
};

json handshakes(int v, uint32_t connections, TcpStep first = TcpStep::kSyn) {
  json fg = test::stream(v, min_frame_size(v, {}, kProtoTcp, tcp_flags_of(first)));
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
  EXPECT_EQ(nat.window_acks, n);
  ASSERT_EQ(r.flows.size(), 4u);
  const char* names[] = {"hs", "hs.syn_ack", "hs.ack", "hs.window"};
  for (size_t i = 0; i < 4; ++i) {
    const FlowReport& f = r.flows[i];
    EXPECT_EQ(f.name, names[i]);
    EXPECT_EQ(f.planned, n) << names[i];
    EXPECT_EQ(f.sent, n) << names[i];
    EXPECT_EQ(f.received, n) << names[i];
    ASSERT_EQ(f.streams.size(), 1u);
    EXPECT_EQ(f.streams[0].tcp_unexpected, 0u) << names[i];
    EXPECT_EQ(f.streams[0].duplicates, 0u) << names[i];
    EXPECT_EQ(f.streams[0].bad_length, 0u) << names[i];
    EXPECT_EQ(f.streams[0].frame_size, (v == 4 ? 86u : 106u) - (i >= 2 ? 8 : 0)) << names[i];  // no window scale, no MSS
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

// Through a gateway that clamps the MSS (issue 30, defect 5), as Linux's xt_TCPMSS does: it
// lowers the MSS option of every SYN and SYN-ACK in place, or (strip_mss: a SYN without one, as
// from the tester before it sent the option) inserts one in front of the tag option, 4 bytes
// longer. Each is found by its tag among the options, taken at its length, every handshake
// completes (before: every SYN foreign), and each side learns the clamped MSS; a SYN without the
// option announces RFC 9293 §3.7.1's default where the clamp is above it.
TEST_P(TcpHandshakes, CompleteThroughAnMssClampingNat) {
  XLP_REQUIRE_EAL();
  const int v = GetParam();
  for (const bool strip : {false, true}) {
    for (const uint16_t clamp : {uint16_t(1000), uint16_t(2000), uint16_t(300)}) {
      SCOPED_TRACE((strip ? "option inserted, clamp " : "option lowered, clamp ") + std::to_string(clamp));
      ReferenceNat nat(v, false, false, clamp, strip);
      nat.set_inside(v == 4 ? "198.18.0.2" : "2001:2::2");
      test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& d) { nat(port, m, d); });
      const uint32_t n = 300;
      const TrialReport r = bench.run(protocol::parse_trial(handshakes(v, n), 2));
      EXPECT_TRUE(r.valid) << r.invalid_reason;
      EXPECT_EQ(nat.clamped, 2 * n);  // the SYNs and the SYN-ACKs
      EXPECT_EQ(nat.established, n);
      EXPECT_EQ(nat.invalid, 0u);
      for (const FlowReport& f : r.flows) {
        EXPECT_EQ(f.received, n) << f.name;
        EXPECT_EQ(f.streams[0].bad_length, 0u) << f.name;
        EXPECT_EQ(f.streams[0].tcp_unexpected, 0u) << f.name;
      }
      // What the SYNs (at the Responder) and SYN-ACKs (at the Initiator) announced on arrival:
      // the tester's own 1460 / 1440 lowered to the clamp, or the clamp inserted.
      const uint32_t sent_mss = v == 4 ? 1460 : 1440;
      for (size_t i : {0, 1}) {
        ASSERT_TRUE(r.flows[i].streams[0].mss_min.has_value()) << r.flows[i].name;
        EXPECT_EQ(*r.flows[i].streams[0].mss_min, strip ? clamp : std::min<uint32_t>(clamp, sent_mss)) << r.flows[i].name;
      }
      EXPECT_FALSE(r.flows[2].streams[0].mss_min.has_value());  // ACKs announce nothing
      EXPECT_EQ(r.state_table->entries, n);
    }
  }
}

// The MSS each side announces as the request names it (tcp.mss, tcp.reply.mss): what the other
// side learns through a DUT that does not clamp.
TEST_P(TcpHandshakes, EachSideAnnouncesTheMssTheRequestNames) {
  XLP_REQUIRE_EAL();
  const int v = GetParam();
  ReferenceNat nat(v);
  nat.set_inside(v == 4 ? "198.18.0.2" : "2001:2::2");
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& d) { nat(port, m, d); });
  json req = handshakes(v, 50);
  req["flows"][0]["tcp"]["mss"] = 8960;
  req["flows"][0]["tcp"]["reply"]["mss"] = 536;
  const TrialReport r = bench.run(protocol::parse_trial(req, 2));
  EXPECT_TRUE(r.valid) << r.invalid_reason;
  EXPECT_EQ(nat.established, 50u);
  EXPECT_EQ(r.flows[0].streams[0].mss_min, std::optional<uint32_t>(8960));
  EXPECT_EQ(r.flows[1].streams[0].mss_min, std::optional<uint32_t>(536));
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
  ASSERT_EQ(r.flows.size(), 4u);
  EXPECT_EQ(r.flows[0].received, n);
  EXPECT_EQ(r.flows[1].sent, n);
  EXPECT_EQ(r.flows[1].received, 0u);
  EXPECT_EQ(r.flows[1].streams[0].tcp_unexpected, n);
  EXPECT_EQ(r.flows[2].sent, 0u);
  EXPECT_EQ(r.flows[3].sent, 0u);
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

// Through a DUT that rewrites the Initiator's sequence numbers (PF's modulate state): the
// handshakes complete (each side checks numbers as they reach it), but a FIN or RST computed
// from the four-tuple acknowledges a Responder ISN derived from the unrewritten number: the
// DUT drops the FIN as out of window, and the Responder counts the RST unexpected. Closing
// from the Initiator's table (the numbers it learned from the SYN-ACKs) ends every connection
// (issue 30, defect 4).
TEST_P(TcpHandshakes, ClosingFromTheInitiatorsTableThroughASequenceRewritingDut) {
  XLP_REQUIRE_EAL();
  const int v = GetParam();
  for (TcpStep end : {TcpStep::kFin, TcpStep::kRst}) {
    for (bool from_table : {false, true}) {
      ReferenceNat nat(v, false, true);
      nat.set_inside(v == 4 ? "198.18.0.2" : "2001:2::2");
      test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& d) { nat(port, m, d); });
      const uint32_t n = 200;
      const TrialReport opened = bench.run(protocol::parse_trial(handshakes(v, n), 2));
      ASSERT_EQ(nat.established, n);
      ASSERT_EQ(nat.invalid, 0u);
      // The Responder's window ACKs, whose sequence numbers follow from the rewritten ISN, are
      // expected at the Initiator (before: each unexpected, found through the lab's modulator).
      ASSERT_EQ(opened.flows.size(), 4u);
      EXPECT_EQ(opened.flows[3].received, n);
      EXPECT_EQ(opened.flows[3].streams[0].tcp_unexpected, 0u);
      json request = handshakes(v, n, end);
      request["timeout"] = 0.05;
      if (from_table) {
        request["flows"][0]["foreground"].erase("vary");
        request["flows"][0]["foreground"].erase("enumerate");
        request["flows"][0]["from_table"] = {{"port", 0}, {"selection", "increasing"}};
      }
      const TrialReport r = bench.run(protocol::parse_trial(request, 2));
      EXPECT_TRUE(r.valid) << r.invalid_reason;
      if (!from_table) {  // each closing segment dropped by the DUT (FIN) or refused by the Responder (RST)
        EXPECT_EQ(r.flows[0].received, 0u);
        EXPECT_EQ(end == TcpStep::kFin ? nat.invalid : r.flows[0].streams[0].tcp_unexpected.value_or(0), n);
        continue;
      }
      EXPECT_EQ(nat.invalid, 0u);
      EXPECT_EQ(end == TcpStep::kFin ? nat.closed : nat.reset, n);
      for (const FlowReport& f : r.flows) {
        EXPECT_EQ(f.sent, n) << f.name;
        EXPECT_EQ(f.received, n) << f.name;
        EXPECT_EQ(f.streams[0].tcp_unexpected, 0u) << f.name;
      }
    }
  }
}

// Phase 2 over TCP: each side's data segments from its own table (the Initiator's learned from
// the SYN-ACKs, the Responder's from the ACKs), in both directions at once; the reference NAT
// checks that every segment continues its connection's byte stream where the last one ended
// and acknowledges the peer's handshake, across two trials.
TEST_P(TcpHandshakes, DataSegmentsContinueEachConnectionsByteStream) {
  XLP_REQUIRE_EAL();
  const int v = GetParam();
  ReferenceNat nat(v);
  nat.set_inside(v == 4 ? "198.18.0.2" : "2001:2::2");
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& d) { nat(port, m, d); });
  const uint32_t n = 200;
  const TrialReport opened = bench.run(protocol::parse_trial(handshakes(v, n), 2));
  ASSERT_EQ(nat.established, n);
  ASSERT_TRUE(opened.state_table && opened.initiator_table);
  EXPECT_EQ(opened.state_table->port, 1u);
  EXPECT_EQ(opened.state_table->entries, n);
  EXPECT_EQ(opened.initiator_table->port, 0u);
  EXPECT_EQ(opened.initiator_table->entries, n);
  const uint32_t size = 200;
  json fwd = test::stream(v, size), rev = test::stream(v, size);
  std::swap(rev["src_mac"], rev["dst_mac"]);
  json request = {{"duration", 1.0}, {"timeout", 0.2}, {"finish_early", true},
                  {"flows", {{{"name", "fwd"}, {"tx_port", 0}, {"rx_port", 1}, {"rate", 20000}, {"frames", 5 * n},
                              {"foreground", fwd}, {"from_table", {{"port", 0}, {"selection", "random"}}},
                              {"tcp", {{"key", 99}, {"segments", "data"}}}},
                             {{"name", "rev"}, {"tx_port", 1}, {"rx_port", 0}, {"rate", 20000}, {"frames", 5 * n},
                              {"foreground", rev}, {"from_table", {{"port", 1}, {"selection", "random"}}},
                              {"tcp", {{"key", 99}, {"segments", "data"}}}}}}};
  for (int trial = 1; trial <= 2; ++trial) {
    const TrialReport r = bench.run(protocol::parse_trial(request, 2));
    EXPECT_TRUE(r.valid) << r.invalid_reason;
    ASSERT_EQ(r.flows.size(), 2u);
    for (const FlowReport& f : r.flows) {
      EXPECT_EQ(f.sent, 5 * n) << f.name;
      EXPECT_EQ(f.received, 5 * n) << f.name;
      EXPECT_EQ(f.streams[0].tcp_unexpected, 0u) << f.name;
    }
    EXPECT_EQ(nat.invalid, 0u) << "trial " << trial;
    EXPECT_EQ(nat.data_segments, uint64_t(trial) * 10 * n);
  }
  // Each connection's next sequence number in the tables: where its stream stands.
  const uint32_t payload = size - 4 - 14 - (v == 4 ? 20 : 40) - 40;
  uint64_t bytes = 0;
  for (uint64_t i = 0; i < bench.tables[0]->size(); ++i)
    bytes += bench.tables[0]->stream(i).next - bench.tables[0]->stream(i).first;
  EXPECT_EQ(bytes, uint64_t(payload) * 10 * n);  // two trials of 5n segments
  // Data needs a TCP table; UDP frames from a TCP table are refused.
  json udp = request;
  udp["flows"] = {request["flows"][0]};
  udp["flows"][0].erase("tcp");
  EXPECT_THROW(bench.run(protocol::parse_trial(udp, 2)), ExecutionFailure);
}

// One-way phase 2 (the Initiator's data only) of more than a SYN-ACK's 65,535 bytes per
// connection, through the window-tracking reference NAT: the Responder's window ACK after the
// handshake announced its scaled window, so every segment stays inside it. (Without it the NAT
// knew only the SYN-ACK's unscaled window and dropped each connection's data after 64 KiB:
// issue 30's conntrack counted 50,700 of 60,000 segments invalid.)
TEST_P(TcpHandshakes, OneWayDataBeyondTheSynAcksWindowStaysInTheWindow) {
  XLP_REQUIRE_EAL();
  const int v = GetParam();
  ReferenceNat nat(v);
  nat.set_inside(v == 4 ? "198.18.0.2" : "2001:2::2");
  test::Bench bench([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& d) { nat(port, m, d); });
  const uint32_t n = 4, per_connection = 120, size = 1518;
  bench.run(protocol::parse_trial(handshakes(v, n), 2));
  ASSERT_EQ(nat.established, n);
  ASSERT_EQ(nat.window_acks, n);
  const uint32_t payload = size - 4 - 14 - (v == 4 ? 20 : 40) - 40;
  ASSERT_GT(uint64_t(payload) * per_connection, 2 * 65535u);
  json fwd = test::stream(v, size);
  json request = {{"duration", 1.0}, {"timeout", 0.2}, {"finish_early", true},
                  {"flows", {{{"name", "fwd"}, {"tx_port", 0}, {"rx_port", 1}, {"rate", 20000},
                              {"frames", n * per_connection}, {"foreground", fwd},
                              {"from_table", {{"port", 0}, {"selection", "increasing"}}},
                              {"tcp", {{"key", 99}, {"segments", "data"}}}}}}};
  const TrialReport r = bench.run(protocol::parse_trial(request, 2));
  EXPECT_TRUE(r.valid) << r.invalid_reason;
  EXPECT_EQ(nat.invalid, 0u);
  EXPECT_EQ(nat.data_segments, uint64_t(n) * per_connection);
  EXPECT_EQ(r.flows.at(0).received, uint64_t(n) * per_connection);
}

// Two queues per port, two workers (issue 30: TCP on several cores): the NAT's RSS spreads each
// lane's SYNs, SYN-ACKs and ACKs over both RX queues of the other port, and each queue's worker
// answers what arrives on it from its own TX queue, its replies counted apart. Every handshake
// completes; phase 2 both ways from tables the two queues learned apart and merged, each lane
// continuing only its own connections' byte streams (the NAT drops a segment that does not start
// where the connection's last one ended: two lanes writing one connection would reorder them);
// then every connection closes from the Initiator's table.
TEST_P(TcpHandshakes, EveryStepOnTwoQueuesWithRepliesCrossingQueues) {
  XLP_REQUIRE_EAL();
  const int v = GetParam();
  ReferenceNat nat(v);
  nat.set_inside(v == 4 ? "198.18.0.2" : "2001:2::2");
  std::set<std::pair<uint8_t, uint16_t>> syn_ack_stream_queue;  // (stream id, TX queue) of each SYN-ACK
  test::Bench* bench_ptr = nullptr;
  test::Bench bench(
      [&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& d) {
        TestTag tag;
        const uint8_t* data = rte_pktmbuf_mtod(m, const uint8_t*);
        if (port == 1 && parse_test_frame(data, m->data_len, tag) && tag.l4 == kProtoTcp &&
            tcp_view(data, tag).flags() == (kTcpSyn | kTcpAck))
          syn_ack_stream_queue.emplace(tag.stream, bench_ptr->io.tx_queue());
        nat(port, m, d);
      },
      2);
  bench_ptr = &bench;
  const uint32_t n = 600;
  const TrialReport opened = bench.run(protocol::parse_trial(handshakes(v, n), 2));
  EXPECT_TRUE(opened.valid) << opened.invalid_reason;
  EXPECT_EQ(nat.established, n);
  EXPECT_EQ(nat.window_acks, n);
  EXPECT_EQ(nat.invalid, 0u);
  ASSERT_EQ(opened.flows.size(), 4u);
  for (const FlowReport& f : opened.flows) {
    EXPECT_EQ(f.sent, n) << f.name;
    EXPECT_EQ(f.received, n) << f.name;
    EXPECT_EQ(f.streams[0].tcp_unexpected, 0u) << f.name;
    ASSERT_EQ(f.queues.size(), 2u) << f.name;
    // Per TX queue: a lane's share of the SYNs; of the replies, what that queue's receiver got.
    EXPECT_EQ(f.queues[0].sent + f.queues[1].sent, n) << f.name;
    EXPECT_GT(f.queues[0].sent, n / 4) << f.name;
    EXPECT_GT(f.queues[1].sent, n / 4) << f.name;
  }
  // Both lanes' SYN-ACKs left from both TX queues: 2 streams, 4 (stream, queue) pairs.
  EXPECT_EQ(syn_ack_stream_queue.size(), 4u);
  for (const auto& p : opened.ports) {
    ASSERT_EQ(p.queues.size(), 2u);
    EXPECT_GT(p.queues[0].test_frames, n / 2) << "port " << p.index;  // about n each (2 flows a port)
    EXPECT_GT(p.queues[1].test_frames, n / 2) << "port " << p.index;
  }
  ASSERT_TRUE(opened.state_table && opened.initiator_table);
  EXPECT_EQ(opened.state_table->entries, n);
  EXPECT_EQ(opened.initiator_table->entries, n);

  // As fast as the workers go (both lanes' bursts overlap in time; the trial may be late, which
  // is not what is tested here): every segment sent is one the NAT takes.
  const uint32_t size = 200, per_flow = 20 * n;
  json fwd = test::stream(v, size), rev = test::stream(v, size);
  std::swap(rev["src_mac"], rev["dst_mac"]);
  json data = {{"duration", 0.01}, {"timeout", 0.5}, {"finish_early", true},
               {"flows", {{{"name", "fwd"}, {"tx_port", 0}, {"rx_port", 1}, {"rate", 100 * per_flow}, {"frames", per_flow},
                           {"foreground", fwd}, {"from_table", {{"port", 0}, {"selection", "random"}}},
                           {"tcp", {{"key", 99}, {"segments", "data"}}}},
                          {{"name", "rev"}, {"tx_port", 1}, {"rx_port", 0}, {"rate", 100 * per_flow}, {"frames", per_flow},
                           {"foreground", rev}, {"from_table", {{"port", 1}, {"selection", "increasing"}}},
                           {"tcp", {{"key", 99}, {"segments", "data"}}}}}}};
  uint64_t sent = 0;
  for (int trial = 1; trial <= 2; ++trial) {
    const TrialReport r = bench.run(protocol::parse_trial(data, 2));
    for (const FlowReport& f : r.flows) {
      EXPECT_GT(f.sent, 0u) << f.name;
      EXPECT_EQ(f.received, f.sent) << f.name;
      EXPECT_EQ(f.streams[0].tcp_unexpected, 0u) << f.name;
      sent += f.sent;
    }
    EXPECT_EQ(nat.invalid, 0u) << "trial " << trial;
    EXPECT_EQ(nat.data_segments, sent);
  }
  const uint32_t payload = size - 4 - 14 - (v == 4 ? 20 : 40) - 40;
  uint64_t bytes = 0;
  for (const auto& table : {bench.tables[0].get(), bench.tables[1].get()})
    for (uint64_t i = 0; i < table->size(); ++i) bytes += table->stream(i).next - table->stream(i).first;
  EXPECT_EQ(bytes, uint64_t(payload) * sent);

  // Closing (a FIN assumes no data was sent: fresh connections through a fresh NAT).
  ReferenceNat closing_nat(v);
  closing_nat.set_inside(v == 4 ? "198.18.0.2" : "2001:2::2");
  test::Bench closing([&](uint16_t port, rte_mbuf* m, const test::MemoryIo::Deliver& d) { closing_nat(port, m, d); },
                      2);
  closing.run(protocol::parse_trial(handshakes(v, n), 2));
  ASSERT_EQ(closing_nat.established, n);
  json close = handshakes(v, n, TcpStep::kFin);
  close["flows"][0]["foreground"].erase("vary");
  close["flows"][0]["foreground"].erase("enumerate");
  close["flows"][0]["from_table"] = {{"port", 0}, {"selection", "increasing"}};
  const TrialReport closed = closing.run(protocol::parse_trial(close, 2));
  EXPECT_TRUE(closed.valid) << closed.invalid_reason;
  EXPECT_EQ(closing_nat.closed, n);
  EXPECT_EQ(closing_nat.invalid, 0u);
  for (const FlowReport& f : closed.flows) EXPECT_EQ(f.received, n) << f.name;
}

TEST(TcpStateTable, DataStaysInsideTheAnnouncedWindow) {
  // A connection that sent kMaxAhead bytes starts its stream over: every segment ends within
  // 1 GiB of the acknowledgement its peer last sent (the handshake's).
  StateTable table(4, 1, true);
  FrameSpec spec;
  spec.ip_version = 4;
  spec.l4 = kProtoTcp;
  spec.tcp_flags = kTcpAck;
  spec.frame_size = 78;
  std::vector<uint8_t> ack = build_template(spec, 0, 1).bytes;
  const uint32_t first = 0xfffff000u;  // the sequence space wraps too
  const uint8_t numbers[8] = {0, 0, 0, 7, uint8_t(first >> 24), uint8_t(first >> 16), uint8_t(first >> 8),
                              uint8_t(first)};
  std::memcpy(&ack[14 + 20 + 4], numbers, 8);  // seq 7 (the peer's next), ack `first` (this side's next)
  ASSERT_TRUE(table.learn(ack.data() + 14));
  spec.tcp_flags = kTcpAck | kTcpPsh;
  spec.frame_size = 1518;
  const FrameTemplate t = build_template(spec, 0, 1);
  table.prepare(t);
  const uint32_t payload = 1518 - 4 - 14 - 20 - 40;
  std::vector<uint8_t> frame = t.bytes;
  uint64_t wraps = 0;
  for (uint64_t k = 0; k < StateTable::kMaxAhead / payload + 2; ++k) {
    const uint32_t before = table.stream(0).next;
    table.write(0, frame.data(), t);
    const uint32_t seq = uint32_t(frame[38]) << 24 | uint32_t(frame[39]) << 16 | uint32_t(frame[40]) << 8 | frame[41];
    ASSERT_EQ(uint32_t(frame[42]) << 24 | uint32_t(frame[43]) << 16 | uint32_t(frame[44]) << 8 | frame[45], 7u);
    ASSERT_LE(seq - first + payload, StateTable::kMaxAhead);
    if (seq != before) ++wraps;
  }
  EXPECT_EQ(wraps, 1u);
}

INSTANTIATE_TEST_SUITE_P(Versions, TcpHandshakes, ::testing::Values(4, 6));

TEST(TcpStateTable, LearnedInSoftwiresDataLeavesFromEachB4) {
  // The Initiator's table through a DS-Lite AFTR: each SYN-ACK came in the softwire of the B4
  // whose connection it is; that connection's data segments leave in the same softwire,
  // whatever B4 the data flow's template names. The inner checksum does not cover the tunnel.
  StateTable table(4, 2, true);
  FrameSpec spec;
  spec.ip_version = 4;
  spec.l4 = kProtoTcp;
  spec.tcp_flags = kTcpSyn | kTcpAck;
  spec.frame_size = 126;
  const auto aftr = parse_ip("2001:db8:af::1", 6);
  const std::array<std::array<uint8_t, 16>, 2> b4s = {parse_ip("2001:db8:b4::1", 6), parse_ip("2001:db8:b4::2", 6)};
  for (const auto& b4 : b4s) {
    spec.tunnels = {Tunnel{aftr, b4}};
    const FrameTemplate syn_ack = build_template(spec, 0, 1);
    ASSERT_TRUE(table.learn(syn_ack.bytes.data() + 54, syn_ack.bytes.data() + 14));
  }
  ASSERT_TRUE(table.tunnelled());
  spec.tunnels = {Tunnel{parse_ip("2001:db8:b4::99", 6), aftr}};
  spec.tcp_flags = kTcpAck | kTcpPsh;
  spec.frame_size = 168;
  const FrameTemplate data = build_template(spec, 0, 1);
  table.prepare(data);
  for (uint64_t i = 0; i < 2; ++i) {
    std::vector<uint8_t> frame = data.bytes;
    const uint64_t sum = table.write(i, frame.data(), data);
    (void)sum;
    EXPECT_EQ(std::vector<uint8_t>(&frame[14 + 8], &frame[14 + 24]), std::vector<uint8_t>(b4s[i].begin(), b4s[i].end()));
    EXPECT_EQ(std::vector<uint8_t>(&frame[14 + 24], &frame[14 + 40]), std::vector<uint8_t>(aftr.begin(), aftr.end()));
  }
  StateTable plain(4, 1, true);  // learned from segments in no tunnel
  ASSERT_TRUE(plain.learn(build_template(spec, 0, 1).bytes.data() + 54));
  EXPECT_FALSE(plain.tunnelled());
}

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
  req["flows"][0]["tcp"]["mss"] = 0;
  refused(req, "flows[0].tcp.mss = 0: must be an integer in 1..65535");
  req["flows"][0]["tcp"]["reply"]["mss"] = 70000;
  req["flows"][0]["tcp"]["mss"] = 1000;
  refused(req, "flows[0].tcp.reply.mss = 70000: must be an integer in 1..65535");
  req = handshakes(4, 10, TcpStep::kFin);
  req["flows"][0]["tcp"]["mss"] = 1000;
  refused(req, "flows[0].tcp.mss = 1000: only SYNs (segments = open) carry an MSS option");
  req = handshakes(4, 10);
  req["flows"][0]["foreground"]["frame_size"] = 64;
  refused(req, "flows[0].foreground.frame_size = 64: must be 86 for IPv4 TCP open: its segments carry no payload");
  req = handshakes(4, 10);
  req["flows"][0]["tcp"]["segments"] = "close";
  refused(req, "flows[0].foreground.frame_size = 86: must be 78 for IPv4 TCP close: its segments carry no payload");
  req["flows"][0]["foreground"]["frame_size"] = 78;
  req["flows"][0]["tcp"]["segments"] = "reset";
  refused(req, "flows[0].tcp.reply = {\"dst_mac\":\"02:00:00:00:00:01\",\"ip_version\":4,\"src_mac\":\"02:00:00:00:00:02\"}: "
               "segments = reset or data: nothing answers them");
  req["flows"][0]["tcp"]["segments"] = "half";
  refused(req, "flows[0].tcp.segments = \"half\": must be one of open, close, reset, data");
  req = handshakes(6, 10);
  req["flows"][0]["tcp"]["reply"].erase("ip_version");
  refused(req, "flows[0].tcp.reply.ip_version: missing");
  req = handshakes(4, 10);
  req["flows"][0]["tcp"]["key"] = -1;
  refused(req, "flows[0].tcp.key = -1: must be an integer in 0..9223372036854775807");
  // A handshake is four flows, each with stream ids on every queue: 33 queues need 264, more than
  // the tag's 256.
  test::Bench bench(nullptr, 33);
  try {
    bench.run(protocol::parse_trial(handshakes(4, 10), 2));
    ADD_FAILURE() << "33 queues of TCP handshakes accepted";
  } catch (const ExecutionFailure& e) {
    EXPECT_NE(std::string(e.what()).find("4 flows x 2 streams x 33 queues need 264 stream ids"), std::string::npos)
        << e.what();
  }
}
