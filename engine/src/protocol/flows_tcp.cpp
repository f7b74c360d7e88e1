// A flow of TCP segments and the flows that answer them (docs/tcp.md).
#include "protocol/parsers.hpp"

#include <optional>
#include <utility>

#include "protocol/json_read.hpp"

namespace xlp::protocol::detail {

void make_tcp_flow(const json& t, const std::string& path, FlowPlan& flow) {
  const std::string tpath = path + "tcp.";
  if (!t.is_object()) bad(path + "tcp", t, "must be an object {key, segments, reply}");
  known_keys(t, tpath, {"key", "segments", "mss", "reply"});
  if (flow.streams.size() > 1) bad(path + "tcp", t, "a flow of TCP segments has one stream (no background, no IMIX)");
  StreamPlan& first = flow.streams[0];
  TcpFlow tcp;
  const std::string segments = t.contains("segments") ? text(t, tpath, "segments") : "open";
  if (segments == "open") tcp.step = TcpStep::kSyn;
  else if (segments == "close") tcp.step = TcpStep::kFin;
  else if (segments == "reset") tcp.step = TcpStep::kRst;
  else if (segments == "data") tcp.step = TcpStep::kData;
  else bad(tpath + "segments", segments, "must be one of open, close, reset, data");
  // Data continues, and a close or reset from a table ends, the connections a phase 1 learned,
  // with the numbers that side learned (a DUT may have rewritten the sequence numbers, as PF's
  // modulate state does); closes and resets without a table take theirs from the four-tuple.
  if (tcp.step == TcpStep::kData && !flow.from_table)
    bad(tpath + "segments", segments, "data needs from_table: phase 2's segments continue the connections a phase 1 "
                                      "learned");
  if (tcp.step == TcpStep::kSyn && flow.from_table)
    bad(tpath + "segments", segments, "from_table: a table's connections are open already: segments must be data, "
                                      "close or reset");
  // A table holds each entry's tuple (and, learned in a softwire, its B4), so no CE writes any field.
  if (flow.from_table && first.ce && first.ce->tx)
    bad(path + "tcp", t, "segments = " + segments + " from a state table: its foreground's CEs write fields, and "
                         "such segments take theirs from the table");
  first.spec.l4 = kProtoTcp;
  first.spec.tcp_flags = tcp_flags_of(tcp.step);
  if (t.contains("mss")) {
    if (tcp.step != TcpStep::kSyn) bad(tpath + "mss", t["mss"], "only SYNs (segments = open) carry an MSS option");
    first.spec.tcp_mss = uint16_t(integer_in(t, tpath, "mss", 1, 65535));
  }
  const uint32_t size = min_frame_size(first.spec.ip_version, first.spec.tunnels, kProtoTcp,
                                      first.spec.tcp_flags);
  if (tcp.step == TcpStep::kData) {
    if (first.spec.frame_size <= size)
      bad(path + "foreground.frame_size", first.spec.frame_size,
          "must be at least " + std::to_string(size + 1) + " for IPv" + std::to_string(first.spec.ip_version) +
              " TCP data: a 40-byte header with the tag option and at least one byte of payload");
  } else if (first.spec.frame_size != size)
    bad(path + "foreground.frame_size", first.spec.frame_size,
        "must be " + std::to_string(size) + " for IPv" + std::to_string(first.spec.ip_version) + " TCP " + segments +
            ": its segments carry no payload");
  const uint64_t key = integer_in(t, tpath, "key", 0, INT64_MAX);
  tcp.key = {key, tcp_detail::mix(key ^ 0x9e3779b97f4a7c15ull)};
  flow.tcp = tcp;
}

void add_answering_flows(const json& t, const std::string& tpath, size_t first, TrialPlan& plan) {
  const FlowPlan& f = plan.flows[first];
  if (f.tcp->step == TcpStep::kRst || f.tcp->step == TcpStep::kData) {
    if (t.contains("reply")) bad(tpath + "reply", t["reply"], "segments = reset or data: nothing answers them");
    return;
  }
  const bool open = f.tcp->step == TcpStep::kSyn;
  const json& r = require(t, tpath, "reply");
  const std::string rpath = tpath + "reply.";
  if (!r.is_object()) bad(tpath + "reply", r, "must be an object {ip_version, src_mac, dst_mac, ...}");
  known_keys(r, rpath, {"ip_version", "src_mac", "dst_mac", "vlan", "rx_vlan", "rx_frame_size", "mss"});
  if (r.contains("mss") && !open) bad(rpath + "mss", r["mss"], "only SYN-ACKs (segments = open) carry an MSS option");
  FlowPlan back = f;
  back.from_table.reset();  // the answers take their tuples from the segments they answer
  back.name = f.name + (open ? ".syn_ack" : ".fin_ack");
  std::swap(back.tx_port, back.rx_port);
  back.tcp->step = open ? TcpStep::kSynAck : TcpStep::kFinAck;
  back.tcp->answers = first;
  StreamPlan b;
  const json& version = require(r, rpath, "ip_version");
  if (version != 4 && version != 6) bad(rpath + "ip_version", version, "must be 4 or 6");
  b.spec.ip_version = version.get<int>();
  b.spec.l4 = kProtoTcp;
  b.spec.tcp_flags = tcp_flags_of(back.tcp->step);
  if (r.contains("mss")) b.spec.tcp_mss = uint16_t(integer_in(r, rpath, "mss", 1, 65535));
  b.spec.src_mac = parsed(r, rpath, "src_mac", parse_mac);
  b.spec.dst_mac = parsed(r, rpath, "dst_mac", parse_mac);
  b.spec.frame_size = min_frame_size(b.spec.ip_version, TunnelStack{}, kProtoTcp, b.spec.tcp_flags);
  b.spec.vlan = parse_vlan(r, rpath, "vlan", {});
  b.rx_vlan = parse_vlan(r, rpath, "rx_vlan", b.spec.vlan);
  b.rx_frame_size = uint32_t(integer_in(r, rpath, "rx_frame_size", 64, kMaxFrameSize, b.spec.frame_size));
  back.streams = {b};
  FlowPlan ack = f;
  ack.from_table.reset();
  ack.name = f.name + ".ack";
  ack.tcp->step = open ? TcpStep::kAck : TcpStep::kLastAck;
  ack.tcp->answers = plan.flows.size();  // the Responder's flow, added next
  StreamPlan& a = ack.streams[0];
  a.spec.tcp_flags = tcp_flags_of(ack.tcp->step);  // after a SYN: no window scale option
  const uint32_t shorter =
      a.spec.frame_size - min_frame_size(a.spec.ip_version, a.spec.tunnels, kProtoTcp, a.spec.tcp_flags);
  a.spec.frame_size -= shorter;
  a.rx_frame_size -= shorter;
  a.vary.clear();  // the tuple (and the tunnel's addresses) come from the segment it answers
  a.enumerate.reset();
  a.ce.reset();
  // To the handshake's ACK: the Responder's window ACK, the SYN-ACK's frames without the
  // window scale option.
  std::optional<FlowPlan> window;
  if (open) {
    window = back;
    window->name = f.name + ".window";
    window->tcp->step = TcpStep::kWindow;
    window->tcp->answers = plan.flows.size() + 1;  // the Initiator's ACKs, added second
    StreamPlan& w = window->streams[0];
    w.spec.tcp_flags = tcp_flags_of(TcpStep::kWindow);
    const uint32_t shorter = w.spec.frame_size - min_frame_size(w.spec.ip_version, TunnelStack{}, kProtoTcp, w.spec.tcp_flags);
    w.spec.frame_size -= shorter;
    w.rx_frame_size -= shorter;
  }
  plan.flows.push_back(std::move(back));
  plan.flows.push_back(std::move(ack));
  if (window) plan.flows.push_back(std::move(*window));
  if (plan.flows.size() > kMaxFlows)
    bad("flows", plan.flows.size(), "at most " + std::to_string(kMaxFlows) + " flows, with 3 more per TCP flow that opens "
        "connections and 2 more per one that closes them");
}

}  // namespace xlp::protocol::detail
