// A NIC's clock on the TSC (core/nic_clock.hpp): narrow counters unwrapped, a clock at another
// rate placed exactly.
#include <gtest/gtest.h>

#include "core/nic_clock.hpp"

namespace xlp {
namespace {

TEST(NicClock, UnwrapsACounterNearItsReference) {
  // A 32-bit counter read as 0x10 just after it wrapped, the reference taken before the wrap.
  EXPECT_EQ(unwrap_counter(0x10, 32, 0x1'ffff'fff0), 0x2'0000'0010u);
  // A stamp taken a little before the reference, in the same lap and in the lap before.
  EXPECT_EQ(unwrap_counter(0xffff'fff0, 32, 0x2'0000'0010), 0x1'ffff'fff0u);
  EXPECT_EQ(unwrap_counter(0x100, 32, 0x5'0000'0200), 0x5'0000'0100u);
  // Half a period away is the limit: beyond it the nearer lap wins.
  EXPECT_EQ(unwrap_counter(0x8000'0000, 32, 0x3'0000'0000), 0x3'8000'0000u);
  EXPECT_EQ(unwrap_counter(0x8000'0001, 32, 0x3'0000'0000), 0x2'8000'0001u);
  EXPECT_EQ(unwrap_counter(0x7fff'ffff, 32, 0x3'0000'0000), 0x3'7fff'ffffu);
  EXPECT_EQ(unwrap_counter(0x1234, 64, 99), 0x1234u);  // a full reading is taken as it is
  EXPECT_EQ(unwrap_counter(0x5, 40, 0xff'ffff'fffe), 0x100'0000'0005u);  // E810's 40-bit PHC
}

TEST(NicClock, MapsADeviceClockAtAnotherRateExactly) {
  // The device counts 3 ticks per TSC tick from an offset: device = 3 tsc + 12345.
  const uint64_t tsc0 = 1'000'000'000, tsc1 = 3'000'000'000;
  const DeviceClockMap map(3 * tsc0 + 12345, tsc0, 3 * tsc1 + 12345, tsc1);
  ASSERT_TRUE(map.usable());
  EXPECT_EQ(map.to_tsc(3 * 2'000'000'007ull + 12345), 2'000'000'007u);
  EXPECT_EQ(map.to_tsc(3 * 5'000'000'000ull + 12345), 5'000'000'000u);  // beyond the readings
  EXPECT_EQ(map.to_tsc(3 * 999'999'000ull + 12345), 999'999'000u);      // and before them
  EXPECT_EQ(map.to_device(2'000'000'007), 3 * 2'000'000'007ull + 12345);
  // A 32-bit stamp (wrapping every 1.4 G TSC ticks here) placed by the TSC it was taken near.
  const DeviceClockMap narrow(3 * tsc0 + 12345, tsc0, 3 * tsc1 + 12345, tsc1, 32);
  const uint64_t at = 4'000'000'123;
  EXPECT_EQ(narrow.stamp_to_tsc(uint32_t(3 * at + 12345), at + 5000), at);
  EXPECT_NE(map.stamp_to_tsc(uint32_t(3 * at + 12345), at + 5000), at);  // taken as a full reading
  EXPECT_FALSE(DeviceClockMap(5, 7, 5, 9).usable());
}

}  // namespace
}  // namespace xlp
