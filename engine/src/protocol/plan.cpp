#include "protocol/plan.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/errors.hpp"

namespace xlp {

std::vector<FieldSpec> resolve_fields(const StreamPlan& stream, const FrameTemplate& tmpl) {
  std::vector<FieldSpec> out;
  const bool v4 = stream.spec.ip_version == 4;
  for (const VarySpec& v : stream.vary) {
    FieldSpec f{v.name, 0, 0, false, false, v.mode, v.min, v.max};
    switch (v.field) {
      case VarySpec::Field::kSrcPort: f.word_offset = tmpl.l4_offset; break;
      case VarySpec::Field::kDstPort: f.word_offset = uint16_t(tmpl.l4_offset + 2); break;
      case VarySpec::Field::kSrcIp:
      case VarySpec::Field::kDstIp: {
        const bool src = v.field == VarySpec::Field::kSrcIp;
        const uint32_t addr = tmpl.ip_offset + (v4 ? (src ? 12 : 16) : (src ? 8 : 24));
        const uint32_t byte = addr + v.offset;
        f.word_offset = uint16_t(byte & ~1u);
        f.byte_only = v.bits == 8;
        f.shift = uint8_t(f.byte_only && byte % 2 == 0 ? 8 : 0);
        f.in_ipv4_header = v4;
        break;
      }
    }
    out.push_back(f);
  }
  return out;
}

CeLayout ce_layout(const CePlan& ce, uint8_t fields, uint16_t tunnel_offset, int tunnel_version, uint16_t ip_offset,
                   int ip_version, uint16_t l4_offset, uint16_t tag_offset) {
  CeLayout out;
  if (fields && tag_offset && ce.tag) out.tag = uint16_t(tag_offset + kTagCe);
  const uint16_t v6 = ce.src ? 8 : 24, v4 = ce.src ? 12 : 16;
  // A tunnel's address: the CE's IPv6 one (a softwire's B4 or CE), or over IPv4 its IPv4
  // address (a 6rd CE's, RFC 5969 §7), in no pseudo header.
  if ((fields & CePlan::kTunnel) && tunnel_version == 6) out.ipv6 = uint16_t(tunnel_offset + v6);
  if ((fields & CePlan::kTunnel) && tunnel_version == 4) out.ipv4 = uint16_t(tunnel_offset + v4), out.ipv4_in_udp = false;
  if (fields & CePlan::kIpv6) out.ipv6 = uint16_t(ip_offset + v6), out.ipv6_in_udp = true;
  if ((fields & CePlan::kIpv4) && ip_version == 4) out.ipv4 = uint16_t(ip_offset + v4);
  if (fields & CePlan::kPort) out.port = uint16_t(l4_offset + (ce.src ? 0 : 2));
  return out;
}

std::vector<OwnedField> ce_owned_fields(const StreamPlan& stream) {
  std::vector<OwnedField> owned;
  if (!stream.ce) return owned;
  const CePlan& ce = *stream.ce;
  const uint8_t fields = ce.tx | ce.rx;  // a field the sender varies per CE is not one value either
  const FieldRole address = ce.src ? FieldRole::kSrcAddress : FieldRole::kDstAddress;
  if (fields & CePlan::kTunnel) owned.push_back({ip_layer(stream.spec.tunnels.innermost().version), address, true});
  if (fields & CePlan::kIpv6) owned.push_back({Layer::kIpv6, address});
  if (fields & CePlan::kIpv4) owned.push_back({Layer::kIpv4, address});
  if (fields & CePlan::kPort)
    owned.push_back({stream.spec.l4 == kProtoTcp ? Layer::kTcp : Layer::kUdp,
                     ce.src ? FieldRole::kSrcPort : FieldRole::kDstPort});
  return owned;
}

bool ce_received_consistent(const CePlan& ce, const TestTag& tag, const uint8_t* frame) {
  const int version = frame[tag.l3_offset] >> 4;
  const int tunnel_version = tag.ip.tunnelled() ? frame[tag.ip.tunnel()] >> 4 : 0;
  if ((ce.rx & CePlan::kTunnel) && !tunnel_version) return false;  // no tunnel
  if ((ce.rx & CePlan::kIpv6) && version != 6) return false;
  if ((ce.rx & CePlan::kIpv4) && version != 4) return false;
  return ce_consistent(*ce.source,
                       ce_layout(ce, ce.rx, tunnel_version ? tag.ip.tunnel() : 0, tunnel_version, tag.l3_offset, version, tag.l4_offset,
                                 tag.l4 == kProtoUdp ? tag.tag_offset : 0),
                       frame);
}

void check_span(const std::vector<FieldSpec>& fields, const std::vector<CeRow>& ce_rows, const FrameTemplate& tmpl,
                const std::string& stream) {
  uint32_t lo = UINT32_MAX, hi = 0;
  bool ipv4_header = false;
  const auto add = [&](uint32_t offset) { lo = std::min(lo, offset), hi = std::max(hi, offset + 2); };
  for (const FieldSpec& f : fields) add(f.word_offset), ipv4_header = ipv4_header || f.in_ipv4_header;
  for (const CeRow& r : ce_rows) add(r.offset), ipv4_header = ipv4_header || r.in_ipv4;
  if (ipv4_header) add(tmpl.ipv4_checksum_at);
  if (hi > lo && hi - lo > BlockWords::kChunks * 8)
    throw BadParameter(stream, stream + ": its varying fields span " + std::to_string(hi - lo) +
                                   " bytes of the frame (from byte " + std::to_string(lo) + "); at most " +
                                   std::to_string(BlockWords::kChunks * 8) + " can vary per frame");
}

void check_frame_sizes(const TrialPlan& plan, uint32_t max_frame) {
  for (size_t i = 0; i < plan.flows.size(); ++i) {
    const FlowPlan& f = plan.flows[i];
    for (const StreamPlan& st : f.streams) {
      const StreamPlan* s = &st;
      const uint32_t sent = uint32_t(s->spec.frame_size + s->spec.vlan.bytes());
      const uint32_t received = uint32_t(s->rx_frame_size + s->rx_vlan.bytes());
      const uint32_t largest = std::max(sent, received);
      if (largest > max_frame)
        throw BadParameter("flows[" + std::to_string(i) + "]",
                           "flows[" + std::to_string(i) + "] (" + f.name + "): a frame of " + std::to_string(largest) +
                               " bytes on the wire (VLAN tags included) exceeds --max-frame-size " +
                               std::to_string(max_frame) + ", the largest frame the engine set its ports up for "
                               "(the front end passes the configuration's largest frame)");
    }
  }
}

uint64_t tagged_first(uint64_t foreground_frames, const TrialPlan& plan) {
  return uint64_t(std::ceil(double(foreground_frames) * plan.delay.tagged_start / plan.duration));
}

std::vector<RateSegment> FlowPlan::segments() const {
  std::vector<RateSegment> out{{0, 0.0, rate}};
  for (const RateStep& step : rate_steps) {
    const RateSegment& last = out.back();
    out.push_back({last.first_frame + uint64_t(std::llround(double(last.rate) * (step.at - last.start_s))), step.at,
                   step.rate});
  }
  return out;
}

uint64_t FlowPlan::planned_frames(double duration) const {
  if (frames) return frames;
  const RateSegment last = segments().back();
  return last.first_frame + uint64_t(std::llround(double(last.rate) * (duration - last.start_s)));
}


}  // namespace xlp
