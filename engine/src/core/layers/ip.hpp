// The IP header kinds a test frame's stack may hold, listed once: each is declared in its own
// file (ipv4.hpp, ipv6.hpp: layout, writer, parse step, its own fields' checks), and the writer,
// the parser, the size arithmetic and the receiver reach it through the dispatch below, by
// version, EtherType or protocol number, whatever its depth (the packet's header or a tunnel's).
// A new IP header kind is its file and its name in IpKinds. The dispatch is a chain of compares
// the compiler inlines: no call through a pointer on the receiver's path.
#pragma once
#include "core/layers/ipv4.hpp"
#include "core/layers/ipv6.hpp"

namespace xlp {

template <typename... Kinds>
struct IpKindList {};
using IpKinds = IpKindList<Ipv4Header, Ipv6Header>;

// `f(Kind{})` for the first kind whose layout `is` accepts; `none` when no kind does.
template <typename R, typename Is, typename F, typename... Kinds>
[[gnu::always_inline]] inline R dispatch_ip(IpKindList<Kinds...>, Is is, F f, R none) {
  R out = none;
  (void)((is(Kinds::kLayout) && (out = f(Kinds{}), true)) || ...);
  return out;
}
template <typename R, typename F>
[[gnu::always_inline]] inline R with_ip_version(int version, F f, R none) {
  return dispatch_ip(IpKinds{}, [version](const IpLayout& l) { return l.version == version; }, f, none);
}
template <typename R, typename F>
[[gnu::always_inline]] inline R with_ip_protocol(uint8_t protocol, F f, R none) {
  return dispatch_ip(IpKinds{}, [protocol](const IpLayout& l) { return l.protocol == protocol; }, f, none);
}

// `f(Kind{})` for each of IpKinds, in order.
template <typename F, typename... Kinds>
void for_each_ip_kind_of(IpKindList<Kinds...>, F f) {
  (f(Kinds{}), ...);
}
template <typename F>
void for_each_ip_kind(F f) {
  for_each_ip_kind_of(IpKinds{}, f);
}

// Whether a layer is an IP header of one of IpKinds.
template <typename... Kinds>
constexpr bool is_ip_layer_of(IpKindList<Kinds...>, Layer layer) {
  return ((Kinds::kLayer == layer) || ...);
}
constexpr bool is_ip_layer(Layer layer) { return is_ip_layer_of(IpKinds{}, layer); }

// The layout of the IP header of `version` (IPv6's for any other, as the writers refuse it).
inline const IpLayout& ip_layout(int version) {
  return *with_ip_version(version, [](auto k) { return &decltype(k)::kLayout; }, &Ipv6Header::kLayout);
}
inline bool is_ip_version(int version) {
  return with_ip_version(version, [](auto) { return true; }, false);
}
// The protocol number of the IP header an EtherType names (0: none of IpKinds).
[[gnu::always_inline]] inline uint8_t ip_protocol_of_ethertype(uint16_t ethertype) {
  return dispatch_ip(
      IpKinds{}, [ethertype](const IpLayout& l) { return l.ethertype == ethertype; },
      [](auto k) { return decltype(k)::kLayout.protocol; }, uint8_t(0));
}

// Writes an IP header of `version` at `at` (IpHeaderValues: the packet's or a tunnel's); returns
// where the next layer starts.
inline size_t write_ip_header(LayerWriter& w, int version, size_t at, const IpHeaderValues& v) {
  return with_ip_version(version, [&](auto k) { return decltype(k)::write(w, at, v); }, at);
}

// Walks one IP header of a frame's stack at `off`: checks it is a whole, unfragmented header
// of the kind `proto` names (IpLayout::protocol), moves `off` past it (and past what its kind
// skips) and returns the protocol it carries, or 0 when it is not one the stack may hold (or
// `proto` names no kind). `fixed`: the kind's fixed size.
[[gnu::always_inline]] inline uint8_t walk_ip_header(const uint8_t* p, uint32_t len, uint8_t proto, uint32_t& off,
                                                     uint8_t& fixed) {
  return with_ip_protocol(
      proto,
      [&](auto k) {
        fixed = decltype(k)::kLayout.size;
        return decltype(k)::walk(p, len, off);
      },
      uint8_t(0));
}

// The receiver's reads of the header at `h` of `version` (see the kinds).
[[gnu::always_inline]] inline uint8_t ip_ecn(int version, const uint8_t* h) {
  return with_ip_version(version, [h](auto k) { return decltype(k)::ecn(h); }, uint8_t(0));
}
[[gnu::always_inline]] inline uint32_t ip_packet_length(int version, const uint8_t* h) {
  return with_ip_version(version, [h](auto k) { return uint32_t(decltype(k)::packet_length(h)); }, 0u);
}
[[gnu::always_inline]] inline bool ip_header_checksum_ok(int version, const uint8_t* h) {
  return with_ip_version(version, [h](auto k) { return decltype(k)::header_checksum_ok(h); }, true);
}
inline bool ip_has_header_checksum(int version) {
  return with_ip_version(version, [](auto k) { return decltype(k)::kHeaderChecksum; }, false);
}
inline bool udp_checksum_optional(int version) {
  return with_ip_version(version, [](auto k) { return decltype(k)::kUdpChecksumOptional; }, false);
}

}  // namespace xlp
