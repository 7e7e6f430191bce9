#pragma once
// FlashAttention 4's conditional rescaling (attention v07, v14, v24): its threshold, and v24's
// exact power-of-two rescale of a row whose terms were taken against a stale max
// (fa3_kernel.cuh's max_free_block); host-compilable so that the CPU tests check both.
#include <bit>
#include <cstdint>

#include "klab/device/host_device.hpp"

namespace klab::attention {

/// A warp keeps its rows' running max until one grows by more than this (log2 units), so that
/// the terms stay at or below kLazyTermBound.
inline constexpr float kLazyRescaleLog2 = 8.f;
/// 2^kLazyRescaleLog2: the bound on a term, and on a lane's row sum in v24's check.
inline constexpr float kLazyTermBound = 256.f;
static_assert(kLazyTermBound == float(1 << int(kLazyRescaleLog2)));

/// The exponent by which v24's rare path raises a row's max, from the row's largest term t (finite,
/// not negative): t's binary exponent e (2^e <= t < 2^(e + 1)) where t >= 2, so that the terms
/// scaled by 2^-e lie below 2 and the next blocks' sums pass the check again; at most 126, so that
/// 2^-e stays a normal float (terms then below 4); 0 below 2, where nothing needs to move.
KLAB_HOST_DEVICE constexpr int max_free_exponent(float t) {
  if (!(t >= 2.f)) return 0;
  const int e = int(std::bit_cast<uint32_t>(t) >> 23) - 127;  // t >= 2: normal, no sign bit
  return e < 126 ? e : 126;
}

/// 2^-e for e in [0, 126] from its bits: exact, and a normal float, which no flush to zero takes.
KLAB_HOST_DEVICE constexpr float max_free_alpha(int e) {
  return std::bit_cast<float>(uint32_t(127 - e) << 23);
}

}  // namespace klab::attention
