// SPDX-License-Identifier: BSD-3-Clause
// Port sets of CEs that share an IPv4 address (RFC 7597 §5.1, RFC 7596 §5.1), for the lab's
// reference BRs and CEs. Build parameters (-D): PSID_OFFSET (a), PSID_LEN (k).
#pragma once
#include <linux/types.h>

// PSID of a port, and whether the port is in any CE's set (RFC 7597 §5.1: with a > 0 the
// ports 0 .. 2^(16-a) - 1 belong to none).
static __always_inline __u32 psid_of(__u16 port) {
  if (PSID_LEN == 0) return 0;
  return (port >> (16 - PSID_OFFSET - PSID_LEN)) & ((1u << PSID_LEN) - 1);
}
static __always_inline int in_a_set(__u16 port) {
  return PSID_LEN == 0 || PSID_OFFSET == 0 || (port >> (16 - PSID_OFFSET)) != 0;
}
