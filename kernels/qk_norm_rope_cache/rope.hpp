#pragma once
// The rotary phase of the qk_norm_rope_cache rungs (v00 on the host, the GPU rungs on the
// device; the family's reference computes its angles on its own, in fp64 without reduction).
//
// Why not sincosf(pos * inv_freq) in fp32: near position 131071 the angles of the first pairs
// are ~10^5 radians, and in fp32 the rounding of inv_freq (2^-24 relative) and of the product
// (half an ulp of 2^16..2^17: 2^-8) move them by up to ~1e-2 rad: cos and sin off by ~1%,
// several times a bf16 output's half ulp (2^-8 = 0.4%), where the check's bound is one to two
// bf16 ulps (family.cpp; tests/cpu/test_qk_norm_rope_cache.cpp shows such a rung caught at
// positions near 131071 and passing at short contexts). A precomputed fp32 table (vLLM's
// cos_sin_cache) would be exact to 2^-24 but is memory the minimal traffic does not count
// (T x D / 2 x 8 bytes of gathers). Instead the phase is reduced in fp64 and only the reduced
// phase, in [-1, 1] half-turns, goes to fp32 and to sincospif
// (sin(pi r), cos(pi r) with an exact reduction by pi inside):
//   r = pos * f_i / pi  mod 2,   f_i = theta^(-2i / D) = 2^(-(2i / D) log2 theta)
// Errors, for positions below 2^20 (the family's limit; u64 = 2^-53, u32 = 2^-24):
//  - exp2's argument (magnitude < 22) carries the roundings of log2(theta), of the product and
//    of the sum, < 64 u64 absolute, so f_i / pi errs relatively by < 64 ln 2 + 2 (exp2's ulp)
//    < 47 u64, 48 with the product by pos: the phase a = pos f_i / pi < 2^20 / pi errs by
//    < 2^18.4 x 48 u64 < 2^-29 half-turns; the reduction a - 2 rint(a / 2) is exact (Sterbenz);
//  - r rounded to fp32: |r| <= 1, <= 2^-25 half-turns;
//  - sincospif: 1 ulp each (CUDA's documented bound; v00's fp64 cos and sin rounded to fp32:
//    half an ulp), <= 2^-24 for results in [-1, 1];
// so cos and sin err by <= pi (2^-25 + 2^-29) + 2^-24 < 2.7 u32 absolute, whatever the
// position: cos_sin_error_bound() (family.cpp) takes 4 u32.
// Cost: one fp64 exp2 and product per pair and token (64 per token at D = 128, shared by the
// token's heads through shared memory on the GPU).
#include <cmath>
#include <cstdint>

#include "kernels/qk_norm_rope_cache/family.hpp"
#include "klab/device/host_device.hpp"

namespace klab::qk_norm_rope_cache {

/// log2(kTheta) = 6 log2(10), and log2(pi), to fp64 precision (tests check them).
inline constexpr double kLog2Theta = 19.931568569324174;
inline constexpr double kLog2Pi = 1.6514961294723187;

/// Pair i's angle per position over pi, f_i / pi, in fp64: the same at every position, so a rung
/// may compute it once per pair (v03) instead of once per pair and token.
KLAB_HOST_DEVICE inline double rope_per_position(int i, int d) {
  return ::exp2(-(2.0 * i / d) * kLog2Theta - kLog2Pi);
}

/// The angle at position pos over pi, pos * per_position, reduced to [-1, 1] (half-turns), in fp64.
KLAB_HOST_DEVICE inline double rope_reduce(int32_t pos, double per_position) {
  const double a = static_cast<double>(pos) * per_position;
  return a - 2.0 * ::rint(0.5 * a);  // exact: 2 rint(a / 2) is within 1 of a
}

/// Pair i's rotation angle at position pos over pi, reduced to [-1, 1] (half-turns), in fp64.
KLAB_HOST_DEVICE inline double rope_half_turns(int32_t pos, int i, int d) {
  return rope_reduce(pos, rope_per_position(i, d));
}

/// The table's layout on the GPU (rung.cuh): where pair i's cos sits among the token's D / 2
/// (its sin: D / 2 further). Lane l of a head's group of D / 16 lanes rotates pairs 8 l .. 8 l + 7,
/// four (a float4) at a time: quarter q of lane l's pairs is the float4 at (q * lanes + l) * 4,
/// so the 8 lanes reading quarter q read 32 consecutive words, one per bank (the order by pair,
/// 8 l + 4 q, put lanes l and l + 4 on the same banks: a 2-way conflict on every read, 51% of the
/// load wavefronts in 98f891c's profile of v01). A permutation of [0, D / 2) (CPU tests).
KLAB_HOST_DEVICE inline int rope_slot(int i, int half) {
  constexpr int kPairsPerLane = 8;  // rung.cuh's kVec
  const int lanes = half / kPairsPerLane, l = i / kPairsPerLane, j = i % kPairsPerLane;
  return ((j / 4) * lanes + l) * 4 + j % 4;
}

}  // namespace klab::qk_norm_rope_cache
