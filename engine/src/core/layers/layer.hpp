// What a header layer of a test frame is declared with (docs/architecture.md, "Where to add"):
// its place in the stack (Layer), its fields and what each is to a receiver (FieldRole, marked
// by its writer as FieldMark), and for an IP header its layout (IpLayout). An IP header kind is
// declared once, in its own file beside this one (ipv4.hpp, ipv6.hpp): its layout, its writer,
// its parse step and the checks of its own fields; ip.hpp lists the kinds, and the writer, the
// parser, the size arithmetic and the receiver dispatch over that list. Pure: no DPDK.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace xlp {

// The header layers of a test frame, outermost first: what each header is (an IP header is the
// same layer whether it carries the packet or a tunnel's payload: its depth says which).
enum class Layer : uint8_t { kEthernet, kIpv4, kIpv6, kUdp, kTcp, kTag, kDns };

// What a header field is to a receiver that judges a frame (header_check.hpp): a field a
// DUT must leave as sent or write as the stream's rx says (kFixed: always compared), one the
// rx expectation names (addresses, ports, TTL, TOS, DF, the IPv6 flow label), or one it may write
// freely or that another check owns (kFree: the IPv4 identification, checksums, TCP sequence
// numbers, the tag). The TOS octet or traffic class is two fields: its DSCP (kTos, the upper six
// bits) and its ECN field (kEcn, the lower two: RFC 3168 §5), which a congested router may
// change from ECT to CE.
enum class FieldRole : uint8_t {
  kFixed, kSrcAddress, kDstAddress, kSrcPort, kDstPort, kTtl, kTos, kEcn, kDf, kFlowLabel, kLength, kFree
};
// A field a layer writer wrote: `size` bytes from `offset` (in the frame), the first and last of
// them under `first_mask` and `last_mask` (a field that shares a byte with another: IPv6's
// version, traffic class and flow label; IPv4's flags). `ip_header`: which of the frame's IP
// headers an IP layer's field lies in (0 the outermost; the tunnels' come before the packet's).
struct FieldMark {
  Layer layer;
  uint8_t ip_header;
  FieldRole role;
  uint16_t offset;
  uint8_t size;
  uint8_t first_mask = 0xff, last_mask = 0xff;
};

// Where the layer writers write: the frame being built (zero-filled, `end` its last byte + 1,
// from which the lengths they write follow) and the marks of the fields they wrote.
struct LayerWriter {
  uint8_t* f;
  size_t end;
  std::vector<FieldMark>& marks;
  uint8_t ip_header = 0;  // the IP header being written (FieldMark::ip_header)
  void mark(Layer layer, FieldRole role, size_t at, size_t size, uint8_t first = 0xff, uint8_t last = 0xff) {
    marks.push_back({layer, ip_header, role, uint16_t(at), uint8_t(size), first, last});
  }
};

// IP protocol numbers of the headers a frame's stack may hold (IANA; IPv6 next header values).
constexpr uint8_t kProtoIpv4 = 4, kProtoIpv6 = 41, kProtoUdp = 17, kProtoTcp = 6, kProtoDestOptions = 60,
                  kProtoFragment = 44;

// An IP header's layout: its version, its size without options or extension headers, what
// names it from outside (the EtherType after Ethernet, the protocol number inside another IP
// header: RFC 2003 and RFC 2473 IPv4 in IP, RFC 4213 and RFC 2473 IPv6 in IP), and where its
// fields lie (the destination address right after the source).
struct IpLayout {
  int version;
  uint8_t size;
  uint16_t ethertype;
  uint8_t protocol;  // as another IP header's payload
  uint8_t src, dst, address_size;
  uint8_t ttl;       // IPv4 TTL, IPv6 hop limit
  uint8_t next;      // IPv4 protocol, IPv6 next header
};

// What an IP header is written from: the packet's own (`tunnel` false: its addresses, the
// transport's protocol, the stream's flow label) or a tunnel's around what `next` names.
struct IpHeaderValues {
  const uint8_t* src;
  const uint8_t* dst;
  uint8_t next;
  uint8_t tos, ttl;
  uint32_t flow_label;
  bool tunnel;
};

}  // namespace xlp
