#pragma once
// FlashAttention 4's conditional rescaling (attention v07, v14, v24): its threshold, and v24's
// exact power-of-two rescale of a row whose terms were taken against a stale max
// (fa3_kernel.cuh's max_free_block); host-compilable so that the CPU tests check the exponent.
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

/// v24's rescale of a row whose largest term t (finite) passed kLazyTermBound: e, t's binary
/// exponent (2^e <= t < 2^(e + 1), from the exponent field: t is normal there), by which the row's
/// max rises while its terms, sum and O scale by 2^-e, exactly; 0 (nothing to do) where t stays
/// at or below the bound.
KLAB_HOST_DEVICE constexpr int max_free_exponent(float t) {
  // t > 0 there: no sign bit above the exponent field.
  return t > kLazyTermBound ? int(std::bit_cast<uint32_t>(t) >> 23) - 127 : 0;
}

}  // namespace klab::attention
