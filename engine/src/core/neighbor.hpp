// ARP (RFC 826) and IPv6 Neighbor Discovery (RFC 4861): the tester answers the DUT's
// requests for every address it uses, and resolves the DUT's MAC address itself, so the DUT
// needs no static neighbour entries (RFC 2544 §25, RFC 5180 §4). Pure functions on frames.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/frame.hpp"

namespace xlp {

// A set of addresses of one IP version: a base address whose 16-bit word at `offset` takes
// every value in [min, max] (one address when min == max == the base's word).
struct AddressRange {
  int ip_version = 4;
  std::array<uint8_t, 16> base{};
  uint32_t offset = 0, min = 0, max = 0;
  bool contains(const uint8_t* addr) const;
};

class AddressSet {
 public:
  void add(const AddressRange& r) { ranges_.push_back(r); }
  bool contains(int ip_version, const uint8_t* addr) const {
    for (const auto& r : ranges_)
      if (r.ip_version == ip_version && r.contains(addr)) return true;
    return false;
  }
  size_t size() const { return ranges_.size(); }

 private:
  std::vector<AddressRange> ranges_;
};

// The largest frame built here: NS/NA with its link-layer option (86 bytes), with two VLAN tags.
constexpr size_t kNeighborFrameMax = 86 + kMaxVlanTags * kVlanTag;

// If `frame` is an ARP request or a Neighbor Solicitation for an address in `owned`, writes
// the reply into `out` and returns its length; 0 otherwise. The reply carries the request's
// VLAN tags (a tagged port's neighbours ask on their VLAN and must hear the answer there).
size_t answer_neighbor_request(const uint8_t* frame, size_t len, const AddressSet& owned,
                               const uint8_t* own_mac, uint8_t* out);

// Builds an ARP request (IPv4) or a Neighbor Solicitation (IPv6) for `target`, sent from
// `own_ip`/`own_mac` with the VLAN tags `vlan`; returns its length.
size_t build_neighbor_request(int ip_version, const uint8_t* own_mac, const uint8_t* own_ip,
                              const uint8_t* target, uint8_t* out, const VlanStack& vlan = {});

// If `frame` (tagged or not) is an ARP reply or Neighbor Advertisement for `target`, returns
// the MAC address.
std::optional<std::array<uint8_t, 6>> parse_neighbor_reply(const uint8_t* frame, size_t len, int ip_version,
                                                           const uint8_t* target);

}  // namespace xlp
