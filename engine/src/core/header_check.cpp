#include "core/header_check.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace xlp {

namespace {

bool is_address(FieldRole r) { return r == FieldRole::kSrcAddress || r == FieldRole::kDstAddress; }
bool is_port(FieldRole r) { return r == FieldRole::kSrcPort || r == FieldRole::kDstPort; }

// The verdict a mismatch in a field of this role gives.
Verdict verdict_of(FieldRole r) {
  if (is_address(r) || is_port(r)) return Verdict::kBadAddress;
  if (r == FieldRole::kTtl) return Verdict::kBadTtl;
  if (r == FieldRole::kTos || r == FieldRole::kEcn) return Verdict::kBadTos;
  return Verdict::kBadHeader;
}

}  // namespace

HeaderCheck::HeaderCheck(const FrameSpec& sent, const RxSpec& rx, uint32_t rx_frame_size, const VlanStack& rx_vlan,
                         const std::vector<OwnedField>& owned)
    : checksums_(rx.checksums), ipv6_zero_udp_checksum_(rx.ipv6_zero_udp_checksum), count_df_(rx.count_df),
      count_tunnel_ecn_(rx.count_tunnel_ecn), ip_version_(rx.ip_version), l4_(sent.l4) {
  if (rx.tunnels.size() > kMaxTunnels)
    throw std::invalid_argument("rx.tunnel: at most " + std::to_string(kMaxTunnels) + " nested tunnel headers");
  ip_headers_ = uint8_t(rx.tunnels.size() + 1);
  for (size_t i = 0; i < rx.tunnels.size(); ++i) {
    tunnel_versions_[i] = uint8_t(rx.tunnels[i].version);
    if (ip_has_header_checksum(rx.tunnels[i].version)) checksummed_tunnels_ = uint8_t(checksummed_tunnels_ | 1u << i);
  }
  const IpLayout& packet_layout = ip_layout(rx.ip_version);
  udp_checksum_optional_ = udp_checksum_optional(rx.ip_version);
  addresses_at_ = packet_layout.src;
  addresses_size_ = uint8_t(2 * packet_layout.address_size);
  if (rx.ttl && rx.ttl->first != rx.ttl->second) ttl_ = rx.ttl;  // one value: compared
  if (rx.dst_mac) also_to_ = PortMac(*rx.dst_mac);
  if (rx.src_mac) from_ = PortMac(*rx.src_mac);
  // The frame the DUT should deliver, written by the same layer writers as the sent frames:
  // the values rx names, zero where it names none (those are not compared).
  FrameSpec want;
  want.ip_version = rx.ip_version;
  want.l4 = sent.l4;
  want.tcp_flags = sent.tcp_flags;
  want.src_ip = rx.src_ip.value_or(std::array<uint8_t, 16>{});
  want.dst_ip = rx.dst_ip.value_or(std::array<uint8_t, 16>{});
  want.src_port = rx.src_port.value_or(0);
  want.dst_port = rx.dst_port.value_or(0);
  // One ECN codepoint: compared with the rest; a set of them (not all four): ecn_allowed.
  const bool one_ecn = rx.ecn && std::has_single_bit(*rx.ecn);
  if (rx.ecn && !one_ecn && *rx.ecn != 0x0f) ecn_set_ = *rx.ecn;
  want.tos = uint8_t(rx.tos.value_or(0) & (rx.ecn ? 0xfc : 0xff));
  if (one_ecn) want.tos = uint8_t(want.tos | std::countr_zero(*rx.ecn));
  want.ttl = rx.ttl ? rx.ttl->first : 0;
  want.flow_label = rx.flow_label.value_or(0);
  want.frame_size = rx_frame_size;
  want.vlan = rx_vlan;
  for (const RxTunnel& t : rx.tunnels)
    want.tunnels.items[want.tunnels.count++] =
        Tunnel{t.src.value_or(std::array<uint8_t, 16>{}), t.dst.value_or(std::array<uint8_t, 16>{}), t.version};
  expected_ = build_template(want, 0, 0);
  // The packet's DF flag, where its kind has one: as rx.df says (the writer sets it), counted
  // (counted_df) where asked.
  for (const FieldMark& m : expected_.fields)
    if (m.role == FieldRole::kDf && m.ip_header + 1u == ip_headers_) {
      df_at_ = uint8_t(m.offset - expected_.ip_offset);
      df_mask_ = m.first_mask;
      if (rx.df == false) expected_.bytes[m.offset] &= uint8_t(~m.first_mask);
    }

  // Which fields the rx expectation names, per layer and role: `ip_header` says which IP
  // header an IP layer's field lies in (the ones before the last are tunnels').
  const auto is_ip = is_ip_layer;
  const auto in_tunnel = [&](Layer layer, uint8_t ip_header) { return is_ip(layer) && ip_header + 1 < ip_headers_; };
  const auto named = [&](Layer layer, uint8_t ip_header, FieldRole role) {
    const bool tunnel = in_tunnel(layer, ip_header);
    for (const OwnedField& o : owned)
      if (o.role == role && (tunnel ? o.tunnel && ip_header + 2 == ip_headers_ : !o.tunnel && o.layer == layer))
        return false;
    if (tunnel) {  // the encapsulating node's own choices, but its addresses
      const RxTunnel& t = rx.tunnels[ip_header];
      if (role == FieldRole::kSrcAddress) return t.src.has_value();
      if (role == FieldRole::kDstAddress) return t.dst.has_value();
      // Its ECN field is the encapsulator's: RFC 6040 §4.1's normal mode copies the inner one,
      // its compatibility mode writes Not-ECT; either is right.
      if (role == FieldRole::kTos) return t.carries_tos && rx.tos.has_value();
      return role == FieldRole::kFixed;
    }
    switch (role) {
      case FieldRole::kFixed: return true;
      case FieldRole::kSrcAddress: return rx.src_ip.has_value();
      case FieldRole::kDstAddress: return rx.dst_ip.has_value();
      case FieldRole::kSrcPort: return rx.src_port.has_value();
      case FieldRole::kDstPort: return rx.dst_port.has_value();
      case FieldRole::kTos: return rx.tos.has_value();
      case FieldRole::kEcn: return rx.ecn ? one_ecn : rx.tos.has_value();
      case FieldRole::kDf: return rx.df.has_value();
      case FieldRole::kFlowLabel: return rx.flow_label.has_value();
      // One value: compared with the rest; a range: checked on its own (ttl_).
      case FieldRole::kTtl: return rx.ttl && rx.ttl->first == rx.ttl->second;
      // UDP: the length is the stream's; TCP: checked against the frame (length_matches).
      case FieldRole::kLength: return sent.l4 == kProtoUdp;
      case FieldRole::kFree: return false;
    }
    return false;
  };
  const auto where_of = [&](Layer layer, uint8_t ip_header) { return is_ip(layer) ? Where(ip_header) : kL4; };
  const auto base_of = [&](Where w) { return w == kL4 ? expected_.l4_offset : expected_.ip.at[w]; };
  const uint8_t packet = uint8_t(ip_headers_ - 1);  // the packet's own IP header
  // Varying words: their bytes are not compared but checked against their ranges.
  std::vector<std::pair<Where, uint16_t>> varying;  // (layer, byte from its start)
  const Layer packet_layer = ip_layer(rx.ip_version);
  const Layer l4_layer = sent.l4 == kProtoTcp ? Layer::kTcp : Layer::kUdp;
  for (const RxWord& v : rx.vary) {
    if (words_ == kMaxWords) throw std::invalid_argument("rx.vary: at most " + std::to_string(kMaxWords) + " words");
    const bool port = is_port(v.field);
    const Layer layer = port ? l4_layer : packet_layer;
    const Where where = where_of(layer, packet);
    uint16_t offset = uint16_t(v.offset);
    for (const FieldMark& m : expected_.fields)
      if (m.layer == layer && where_of(m.layer, m.ip_header) == where && m.role == v.field)
        offset = uint16_t(offset + m.offset - base_of(where));
    word_[words_++] = Word{where, offset, uint8_t(v.bits), uint16_t(v.min), uint16_t(v.max)};
    for (uint32_t b = 0; b < v.bits / 8; ++b) varying.emplace_back(where, uint16_t(offset + b));
  }

  for (const FieldMark& m : expected_.fields) {
    // Ethernet: the destination is the receiving port's and the source rx.src_mac (judge's
    // PortMacs), the type and VLAN tags the parser's and the VLAN check's. A DNS message is the
    // DNS verdict's (dns::judge_reply).
    if (m.layer == Layer::kEthernet || m.layer == Layer::kTag || m.layer == Layer::kDns) continue;
    const bool tunnel = in_tunnel(m.layer, m.ip_header);
    if (m.role == FieldRole::kTtl && !tunnel) ttl_at_ = uint16_t(m.offset - expected_.ip_offset);
    if (m.role == FieldRole::kTtl && tunnel)
      tunnel_ttl_at_[m.ip_header] = uint8_t(m.offset - expected_.ip.at[m.ip_header]);
    if (m.role == FieldRole::kEcn && tunnel && m.ip_header + 2 == ip_headers_)
      tunnel_ecn_shift_ = uint8_t(std::countr_zero(m.first_mask));
    if (!named(m.layer, m.ip_header, m.role)) continue;
    const Where where = where_of(m.layer, m.ip_header);
    const uint16_t rel = uint16_t(m.offset - base_of(where));
    compared_.push_back({where, m.role, rel, m.size, m.first_mask, m.last_mask});
    for (uint16_t i = 0; i < m.size; ++i) {
      const uint16_t at = uint16_t(rel + i);
      if (std::find(varying.begin(), varying.end(), std::make_pair(where, at)) != varying.end()) continue;
      uint8_t mask = 0xff;
      if (i == 0) mask &= m.first_mask;
      if (i + 1 == m.size) mask &= m.last_mask;
      const uint8_t want_byte = uint8_t(expected_.bytes[m.offset + i] & mask);
      // Byte `at` of the layer is byte at % 8 of its word at / 8, in memory order.
      CompareWord* c = nullptr;
      for (uint8_t k = 0; k < compare_words_; ++k)
        if (compare_[k].where == where && compare_[k].offset == at / 8 * 8) c = &compare_[k];
      if (!c) {
        if (compare_words_ == kMaxCompareWords) throw std::invalid_argument("more header words than compared");
        c = &compare_[compare_words_++];
        c->where = where;
        c->offset = uint8_t(at / 8 * 8);
      }
      uint8_t* wb = reinterpret_cast<uint8_t*>(&c->want);
      uint8_t* mb = reinterpret_cast<uint8_t*>(&c->mask);
      wb[at % 8] = uint8_t((wb[at % 8] & ~mask) | want_byte);
      mb[at % 8] |= mask;
    }
  }
  // UDP to compared addresses: the pseudo header's sum is the stream's (RFC 768), taken once.
  const bool addresses_vary = std::any_of(rx.vary.begin(), rx.vary.end(), [](const RxWord& w) {
    return is_address(w.field);
  });
  if (sent.l4 == kProtoUdp && !addresses_vary && named(packet_layer, packet, FieldRole::kSrcAddress) &&
      named(packet_layer, packet, FieldRole::kDstAddress)) {
    const uint8_t* ip = expected_.bytes.data() + expected_.ip_offset;
    const uint32_t l4_len = expected_.size() - expected_.l4_offset;
    pseudo_sum_ = pseudo_sum(ip, l4_len);
  }
  // The run: each compared word moved to its place counted from the first IP header.
  run_start_ = expected_.ip.outermost();
  run_l3_ = expected_.ip_offset;
  run_l4_ = expected_.l4_offset;
  for (uint8_t k = 0; k < compare_words_; ++k) {
    const CompareWord& c = compare_[k];
    const size_t at = size_t(base_of(c.where) - run_start_ + c.offset);
    for (size_t b = 0; b < 8; ++b) {
      const size_t byte = at + b;
      if (byte / 16 >= kMaxChunks) throw std::invalid_argument("more header words than compared");
      const uint8_t m = reinterpret_cast<const uint8_t*>(&c.mask)[b];
      if (!m) continue;
      reinterpret_cast<uint8_t*>(&run_mask_[byte / 16])[byte % 16] |= m;
      reinterpret_cast<uint8_t*>(&run_want_[byte / 16])[byte % 16] |= reinterpret_cast<const uint8_t*>(&c.want)[b];
      run_chunks_ = std::max<uint8_t>(run_chunks_, uint8_t(byte / 16 + 1));
    }
  }
}

Verdict HeaderCheck::classify(const uint8_t* frame, const TestTag& tag, uint32_t l4_len, uint64_t l4_sum) const {
  Verdict worst = Verdict::kGood;  // the first failing check in Verdict's order
  const auto fail = [&](Verdict v) {
    if (worst == Verdict::kGood || v < worst) worst = v;
  };
  if (tag.ip.count != ip_headers_) return Verdict::kBadHeader;  // layers differ
  for (uint8_t i = 0; i + 1 < ip_headers_; ++i)                  // ... in kind
    if ((frame[tag.ip.at[i]] >> 4) != tunnel_versions_[i]) return Verdict::kBadHeader;
  for (const Compared& c : compared_) {
    const uint8_t* p = frame + start(c.where, tag) + c.offset;
    const uint8_t* want = expected_.bytes.data() + (c.where == kL4 ? expected_.l4_offset : expected_.ip.at[c.where]) + c.offset;
    for (uint8_t i = 0; i < c.size; ++i) {
      uint8_t mask = 0xff;
      if (i == 0) mask &= c.first_mask;
      if (i + 1 == c.size) mask &= c.last_mask;
      bool is_varying = false;
      for (uint8_t w = 0; w < words_; ++w)
        if (word_[w].where == c.where && c.offset + i >= word_[w].offset &&
            c.offset + i < word_[w].offset + word_[w].bits / 8)
          is_varying = true;
      if (!is_varying && ((p[i] ^ want[i]) & mask)) fail(verdict_of(c.role));
    }
  }
  if (!length_matches(frame, tag, l4_len)) fail(Verdict::kBadHeader);
  if (ttl_ && uint8_t(frame[tag.l3_offset + ttl_at_] - ttl_->first) > uint8_t(ttl_->second - ttl_->first))
    fail(Verdict::kBadTtl);
  if (!tunnels_live(frame, tag)) fail(Verdict::kBadTtl);
  if (!ecn_allowed(frame, tag)) fail(Verdict::kBadTos);
  for (uint8_t i = 0; i < words_; ++i)
    if (!word_in_range(word_[i], frame, tag)) fail(Verdict::kBadAddress);
  if (checksums_ && !checksums_verify(frame, tag, l4_len, l4_sum)) fail(Verdict::kBadChecksum);
  // The fast path found a failure; should none show here, it is a header byte the fast path
  // compares that no field accounts for: a header fault all the same.
  return worst == Verdict::kGood ? Verdict::kBadHeader : worst;
}

}  // namespace xlp
