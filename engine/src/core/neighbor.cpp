#include "core/neighbor.hpp"

#include <algorithm>
#include <cstring>

#include "core/bytes.hpp"
#include "core/checksum.hpp"

namespace xlp {

namespace {

constexpr uint16_t kArp = 0x0806, kIpv6 = 0x86DD;
constexpr uint8_t kIcmpv6 = 58, kNeighborSolicitation = 135, kNeighborAdvertisement = 136;
constexpr size_t kEth = 14, kIp6 = 40;


void ethernet(uint8_t* out, const uint8_t* dst, const uint8_t* src, uint16_t type) {
  std::memcpy(out, dst, 6);
  std::memcpy(out + 6, src, 6);
  store_be16(out + 12, type);
}

// IPv6 header + ICMPv6 ND message (type, 4 flag bytes, target, one link-layer option) with
// its checksum; returns the frame length.
size_t nd_message(uint8_t* out, const uint8_t* src_ip, const uint8_t* dst_ip, uint8_t type,
                  uint32_t flags, const uint8_t* target, uint8_t option, const uint8_t* mac) {
  uint8_t* ip = out + kEth;
  const uint16_t icmp_len = 4 + 4 + 16 + 8;
  std::memset(ip, 0, kIp6 + icmp_len);
  ip[0] = 0x60;
  store_be16(ip + 4, icmp_len);
  ip[6] = kIcmpv6;
  ip[7] = 255;  // RFC 4861 §7.1.1: receivers drop ND messages with another hop limit
  std::memcpy(ip + 8, src_ip, 16);
  std::memcpy(ip + 24, dst_ip, 16);
  uint8_t* icmp = ip + kIp6;
  icmp[0] = type;
  icmp[4] = uint8_t(flags >> 24);
  std::memcpy(icmp + 8, target, 16);
  icmp[24] = option;  // 1: source, 2: target link-layer address
  icmp[25] = 1;       // length in units of 8 bytes
  std::memcpy(icmp + 26, mac, 6);
  uint64_t sum = sum_words(ip + 8, 32);
  sum += kIcmpv6 + icmp_len;
  sum = sum_words(icmp, icmp_len, sum);
  store_be16(icmp + 2, uint16_t(~fold(sum)));
  return kEth + kIp6 + icmp_len;
}

// The ICMPv6 message of an ND frame of the given type, or nullptr.
const uint8_t* nd_icmp(const uint8_t* f, size_t len, uint8_t type) {
  if (len < kEth + kIp6 + 24 || load_be16(f + 12) != kIpv6) return nullptr;
  const uint8_t* ip = f + kEth;
  if (ip[6] != kIcmpv6 || ip[7] != 255 || ip[kIp6] != type) return nullptr;
  return ip + kIp6;
}

// The frame without its VLAN tags, in `out` (room for kNeighborFrameMax bytes; longer frames
// are cut there, as no ARP or ND message handled here is longer); returns its length, 0 for a
// frame this code cannot read.
size_t untagged(const uint8_t* f, size_t len, uint8_t* out, VlanStack& vlan) {
  const size_t type = read_vlan_tags(f, len, vlan);
  if (type == 0) return 0;
  const size_t n = std::min(len - (type - 12), kNeighborFrameMax);
  std::memcpy(out, f, 12);
  std::memcpy(out + 12, f + type, n - 12);
  return n;
}

// Inserts the tags of `vlan` after the MAC addresses of the untagged frame of `len` bytes at
// `frame` (which has room for them); returns the new length.
size_t tagged(uint8_t* frame, size_t len, const VlanStack& vlan) {
  if (vlan.count == 0) return len;
  std::memmove(frame + 12 + vlan.bytes(), frame + 12, len - 12);
  uint8_t header[kEth + kMaxVlanTags * kVlanTag];
  const size_t header_len = put_ethernet(header, frame, frame + 6, vlan, load_be16(frame + 12 + vlan.bytes()));
  std::memcpy(frame, header, header_len - 2);
  return len + vlan.bytes();
}

size_t answer_untagged(const uint8_t* f, size_t len, const AddressSet& owned, const uint8_t* own_mac,
                       uint8_t* out);
std::optional<std::array<uint8_t, 6>> parse_untagged_reply(const uint8_t* f, size_t len, int ip_version,
                                                           const uint8_t* target);

}  // namespace

size_t answer_neighbor_request(const uint8_t* f, size_t len, const AddressSet& owned, const uint8_t* own_mac,
                               uint8_t* out) {
  uint8_t plain[kNeighborFrameMax];
  VlanStack vlan;
  const size_t n = untagged(f, len, plain, vlan);
  if (n == 0) return 0;
  const size_t reply = answer_untagged(plain, n, owned, own_mac, out);
  return reply == 0 ? 0 : tagged(out, reply, vlan);
}

std::optional<std::array<uint8_t, 6>> parse_neighbor_reply(const uint8_t* f, size_t len, int ip_version,
                                                           const uint8_t* target) {
  uint8_t plain[kNeighborFrameMax];
  VlanStack vlan;
  const size_t n = untagged(f, len, plain, vlan);
  if (n == 0) return std::nullopt;
  return parse_untagged_reply(plain, n, ip_version, target);
}

bool AddressRange::contains(const uint8_t* addr) const {
  const size_t n = ip_version == 4 ? 4 : 16;
  for (size_t i = 0; i < n; ++i)
    if ((i < offset || i > offset + 1) && addr[i] != base[i]) return false;
  const uint32_t word = uint32_t(addr[offset] << 8 | addr[offset + 1]);
  return word >= min && word <= max;
}

namespace {

size_t answer_untagged(const uint8_t* f, size_t len, const AddressSet& owned, const uint8_t* own_mac,
                       uint8_t* out) {
  if (len >= kEth + 28 && load_be16(f + 12) == kArp) {
    const uint8_t* arp = f + kEth;
    if (load_be16(arp) != 1 || load_be16(arp + 2) != 0x0800 || arp[4] != 6 || arp[5] != 4 || load_be16(arp + 6) != 1)
      return 0;
    const uint8_t *sender_mac = arp + 8, *sender_ip = arp + 14, *target_ip = arp + 24;
    if (!owned.contains(4, target_ip)) return 0;
    ethernet(out, sender_mac, own_mac, kArp);
    uint8_t* r = out + kEth;
    std::memcpy(r, arp, 6);  // htype, ptype, hlen, plen
    store_be16(r + 6, 2);         // reply
    std::memcpy(r + 8, own_mac, 6);
    std::memcpy(r + 14, target_ip, 4);
    std::memcpy(r + 18, sender_mac, 6);
    std::memcpy(r + 24, sender_ip, 4);
    return kEth + 28;
  }
  const uint8_t* icmp = nd_icmp(f, len, kNeighborSolicitation);
  if (!icmp || !owned.contains(6, icmp + 8)) return 0;
  const uint8_t* ip = f + kEth;
  static const uint8_t kUnspecified[16] = {};
  static const uint8_t kAllNodes[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  static const uint8_t kAllNodesMac[6] = {0x33, 0x33, 0, 0, 0, 1};
  // Duplicate address detection (source ::) is answered to all nodes, unsolicited (RFC 4861 §7.2.4).
  const bool dad = std::memcmp(ip + 8, kUnspecified, 16) == 0;
  ethernet(out, dad ? kAllNodesMac : f + 6, own_mac, kIpv6);
  const uint32_t flags = (dad ? 0u : 0x40000000u) | 0x20000000u;  // Solicited, Override
  return nd_message(out, icmp + 8, dad ? kAllNodes : ip + 8, kNeighborAdvertisement, flags, icmp + 8, 2,
                    own_mac);
}

}  // namespace

size_t build_neighbor_request(int ip_version, const uint8_t* own_mac, const uint8_t* own_ip,
                              const uint8_t* target, uint8_t* out, const VlanStack& vlan) {
  size_t len;
  if (ip_version == 4) {
    static const uint8_t kBroadcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    ethernet(out, kBroadcast, own_mac, kArp);
    uint8_t* arp = out + kEth;
    store_be16(arp, 1);
    store_be16(arp + 2, 0x0800);
    arp[4] = 6;
    arp[5] = 4;
    store_be16(arp + 6, 1);
    std::memcpy(arp + 8, own_mac, 6);
    std::memcpy(arp + 14, own_ip, 4);
    std::memset(arp + 18, 0, 6);
    std::memcpy(arp + 24, target, 4);
    std::memset(arp + 28, 0, 18);  // pad to the 60-byte Ethernet minimum
    len = kEth + 28 + 18;
  } else {
    // Solicited-node multicast address ff02::1:ffXX:XXXX and its MAC 33:33:ff:XX:XX:XX.
    uint8_t group[16] = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, target[13], target[14], target[15]};
    const uint8_t mac[6] = {0x33, 0x33, 0xff, target[13], target[14], target[15]};
    ethernet(out, mac, own_mac, kIpv6);
    len = nd_message(out, own_ip, group, kNeighborSolicitation, 0, target, 1, own_mac);
  }
  return tagged(out, len, vlan);
}

namespace {

std::optional<std::array<uint8_t, 6>> parse_untagged_reply(const uint8_t* f, size_t len, int ip_version,
                                                           const uint8_t* target) {
  std::array<uint8_t, 6> mac{};
  if (ip_version == 4) {
    if (len < kEth + 28 || load_be16(f + 12) != kArp) return std::nullopt;
    const uint8_t* arp = f + kEth;
    if (load_be16(arp + 6) != 2 || std::memcmp(arp + 14, target, 4) != 0) return std::nullopt;
    std::memcpy(mac.data(), arp + 8, 6);
    return mac;
  }
  const uint8_t* icmp = nd_icmp(f, len, kNeighborAdvertisement);
  if (!icmp || std::memcmp(icmp + 8, target, 16) != 0) return std::nullopt;
  // Target link-layer address option if present, else the frame's source MAC.
  const size_t icmp_len = len - kEth - kIp6;
  for (size_t o = 24; o + 8 <= icmp_len && icmp[o + 1] != 0; o += icmp[o + 1] * 8u)
    if (icmp[o] == 2) {
      std::memcpy(mac.data(), icmp + o + 2, 6);
      return mac;
    }
  std::memcpy(mac.data(), f + 6, 6);
  return mac;
}

}  // namespace

}  // namespace xlp
