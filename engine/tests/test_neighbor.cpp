#include <gtest/gtest.h>

#include "core/frame.hpp"
#include "core/neighbor.hpp"
#include "reference.hpp"

using namespace xlp;

namespace {

const auto kTesterMac = parse_mac("02:78:6c:00:00:01");
const auto kDutMac = parse_mac("02:78:6c:00:01:01");

AddressSet tester_addresses() {
  AddressSet set;
  set.add({4, parse_ip("198.18.0.2", 4), 2, 2, 1001});
  set.add({6, parse_ip("2001:2::2", 6), 14, 2, 2});
  return set;
}

// The ICMPv6 checksum over pseudo header + message must verify (sum 0xffff).
bool icmpv6_ok(const uint8_t* f, size_t len) {
  std::vector<uint8_t> p(f + 22, f + 54);  // source and destination addresses
  const size_t icmp_len = len - 54;
  p.insert(p.end(), {0, 0, uint8_t(icmp_len >> 8), uint8_t(icmp_len), 0, 0, 0, 58});
  p.insert(p.end(), f + 54, f + len);
  return reference_checksum(p) == 0;
}

}  // namespace

TEST(Neighbor, AnswersArpForEveryOwnedAddressOnly) {
  AddressSet owned = tester_addresses();
  for (auto [target, owned_expected] : {std::pair{"198.18.0.2", true}, {"198.18.3.233", true},
                                        {"198.18.0.1", false}, {"198.18.3.234", false}, {"198.19.0.2", false}}) {
    uint8_t req[kNeighborFrameMax], reply[kNeighborFrameMax];
    const auto dut_ip = parse_ip("198.18.0.1", 4), tgt = parse_ip(target, 4);
    const size_t len = build_neighbor_request(4, kDutMac.data(), dut_ip.data(), tgt.data(), req);
    ASSERT_EQ(len, 60u);
    const size_t rlen = answer_neighbor_request(req, len, owned, kTesterMac.data(), reply);
    ASSERT_EQ(rlen != 0, owned_expected) << target;
    if (!rlen) continue;
    // The DUT reading the reply learns our MAC for the target address.
    auto mac = parse_neighbor_reply(reply, rlen, 4, tgt.data());
    ASSERT_TRUE(mac);
    EXPECT_EQ(*mac, kTesterMac);
    EXPECT_EQ(std::vector<uint8_t>(reply, reply + 6), std::vector<uint8_t>(kDutMac.begin(), kDutMac.end()));
  }
}

TEST(Neighbor, AnswersNeighborSolicitationWithValidAdvertisement) {
  AddressSet owned = tester_addresses();
  const auto dut_ip = parse_ip("2001:2::1", 6), tgt = parse_ip("2001:2::2", 6);
  uint8_t req[kNeighborFrameMax], reply[kNeighborFrameMax];
  const size_t len = build_neighbor_request(6, kDutMac.data(), dut_ip.data(), tgt.data(), req);
  EXPECT_TRUE(icmpv6_ok(req, len));
  EXPECT_EQ(req[0], 0x33);  // solicited-node multicast MAC 33:33:ff:00:00:02
  EXPECT_EQ(req[2], 0xff);
  EXPECT_EQ(req[5], 0x02);
  const size_t rlen = answer_neighbor_request(req, len, owned, kTesterMac.data(), reply);
  ASSERT_GT(rlen, 0u);
  EXPECT_TRUE(icmpv6_ok(reply, rlen));
  EXPECT_EQ(reply[14 + 7], 255);            // hop limit
  EXPECT_EQ(reply[54], 136);                // Neighbor Advertisement
  EXPECT_EQ(reply[58], 0x60);               // Solicited + Override
  auto mac = parse_neighbor_reply(reply, rlen, 6, tgt.data());
  ASSERT_TRUE(mac);
  EXPECT_EQ(*mac, kTesterMac);
  // Not ours: no answer.
  const auto other = parse_ip("2001:2::3", 6);
  const size_t len2 = build_neighbor_request(6, kDutMac.data(), dut_ip.data(), other.data(), req);
  EXPECT_EQ(answer_neighbor_request(req, len2, owned, kTesterMac.data(), reply), 0u);
}

// On a tagged port the DUT asks on its VLAN (or VLANs, QinQ) and must hear the answer there:
// the reply carries the request's tags; the tester's own requests carry the port's tags, and
// tagged replies are read.
TEST(Neighbor, TaggedRequestsGetTaggedAnswers) {
  AddressSet owned = tester_addresses();
  for (int v : {4, 6})
    for (uint8_t count : {1, 2}) {
      VlanStack vlan;
      vlan.count = count;
      vlan.ids = {300, 42};
      const auto dut_ip = parse_ip(v == 4 ? "198.18.0.1" : "2001:2::1", v);
      const auto tgt = parse_ip(v == 4 ? "198.18.0.2" : "2001:2::2", v);
      uint8_t req[kNeighborFrameMax], plain[kNeighborFrameMax], reply[kNeighborFrameMax];
      const size_t plain_len = build_neighbor_request(v, kDutMac.data(), dut_ip.data(), tgt.data(), plain);
      const size_t len = build_neighbor_request(v, kDutMac.data(), dut_ip.data(), tgt.data(), req, vlan);
      ASSERT_EQ(len, plain_len + 4 * count);
      VlanStack seen;
      ASSERT_EQ(read_vlan_tags(req, len, seen), 12u + 4 * count);
      EXPECT_TRUE(seen == vlan);
      EXPECT_EQ(req[12] << 8 | req[13], count == 2 ? 0x88a8 : 0x8100);
      EXPECT_EQ(std::vector<uint8_t>(req + 12 + 4 * count, req + len), std::vector<uint8_t>(plain + 12, plain + plain_len));
      const size_t rlen = answer_neighbor_request(req, len, owned, kTesterMac.data(), reply);
      ASSERT_GT(rlen, 0u) << v << " " << int(count);
      ASSERT_EQ(read_vlan_tags(reply, rlen, seen), 12u + 4 * count);
      EXPECT_TRUE(seen == vlan);
      if (v == 6) {  // the untagged message's checksum still verifies
        std::vector<uint8_t> untagged(reply, reply + 12);
        untagged.insert(untagged.end(), reply + 12 + 4 * count, reply + rlen);
        EXPECT_TRUE(icmpv6_ok(untagged.data(), untagged.size()));
      }
      auto mac = parse_neighbor_reply(reply, rlen, v, tgt.data());
      ASSERT_TRUE(mac);
      EXPECT_EQ(*mac, kTesterMac);
    }
}
