// The trial request's parser in parts (protocol/ only, not included from outside it), as
// parse_trial (trial.cpp) calls them: a flow's streams (streams.cpp; their emulated CEs,
// stream_ce.cpp), its TCP segments and the flows that answer them (flows_tcp.cpp), its DNS
// queries and the trial's zone (flows_dns.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "protocol/json_read.hpp"
#include "protocol/plan.hpp"

namespace xlp::protocol::detail {

// -- streams.cpp

// "vlan": [outer, inner]: 0..2 VLAN IDs, outermost first (docs/protocol.md).
VlanStack parse_vlan(const json& obj, const std::string& path, const char* key, const VlanStack& dflt);

// A flow's streams and frame pattern (FlowPlan::streams, pattern), from either form:
//   "foreground", "background", "mix": {n, m}: RFC 8219's mix, frame k foreground iff k % n < m;
//   "streams": [...], "pattern": [...]: any streams (each with its "kind"), frame k of stream
//   pattern[k % len] (IMIX: a stream per frame size).
void parse_streams(const json& f, const std::string& path, FlowPlan& flow);

// -- stream_ce.cpp

// "ce": a stream's emulated CEs (docs/protocol.md).
CePlan parse_ce(const json& j, const std::string& path, StreamPlan& s);
// A CE's fields (CePlan bits) name its address once: in a tunnel of `tunnel_version` or in the
// packet's header of that version, not both.
void check_ce_tunnel(uint8_t fields, int tunnel_version, const std::string& key, const json& value);

// -- flows_tcp.cpp

// "tcp": {"key", "segments", "mss", "reply"}: the flow sends TCP segments (docs/tcp.md): the
// Initiator's SYNs ("open", the default), FINs ("close") or RSTs ("reset") of the connections of
// its four-tuples, or data segments ("data", with from_table: phase 2, either side). "mss": what
// the SYNs announce (default ethernet_mss). Checks what such a flow may be and makes its
// foreground those segments.
void make_tcp_flow(const json& t, const std::string& path, FlowPlan& flow);

// The flows that answer TCP flow `first` (make_tcp_flow): to SYNs the Responder's SYN-ACKs, the
// Initiator's ACKs and the Responder's window ACKs (tcp.hpp); to FINs the Responder's FIN-ACKs
// and the Initiator's last ACKs; RSTs get no answer. "reply": the Responder side's frames {ip_version, src_mac, dst_mac, vlan,
// rx_vlan, rx_frame_size, mss}: its segments as they leave and arrive (their addresses and ports
// come from the segments they answer), and the MSS its SYN-ACKs announce.
void add_answering_flows(const json& t, const std::string& tpath, size_t first, TrialPlan& plan);

// -- flows_dns.cpp

// "dns": {"zone", "names", "a", "aaaa", "aaaa_share", "ttl", "soa_ttl", "soa_minimum",
// "authoritative"}: the trial's test zone, the style of the names the clients ask in it, the
// records of its names (dns::RecordRule) and the ports that answer for it (docs/protocol.md, DNS).
DnsPlan parse_dns(const json& d, uint16_t port_count);

// A flow's "dns": {"qtype", "edns", "ports", "nonce", "names_from", "synthesis", "exclude",
// "mapped", "checks", "repeat", "repeat_after"}: its foreground sends DNS queries of the trial's
// zone to port 53, whose replies come back to its tx_port (docs/dns.md).
void make_dns_flow(const json& d, const std::string& path, const TrialPlan& plan, FlowPlan& flow);

}  // namespace xlp::protocol::detail
