#pragma once
// Seeded, counter-based random fills: element i depends only on (seed, i), so fills are
// reproducible and parallel. Also the poison fill used to detect unwritten outputs.
#include <cstdint>
#include <string>
#include <string_view>

#include "klab/core/dtype.hpp"

namespace klab {

enum class Dist : uint8_t {
  normal,   ///< N(0, 1)
  uniform,  ///< U(-1, 1)
  heavy,    ///< Student-t with 3 degrees of freedom: occasional large magnitudes
};

std::string_view dist_name(Dist d);
Dist parse_dist(std::string_view name);

/// Fills `n` elements of type `t` at `data` with draws from `d`, rounded to `t`.
void fill_random(void* data, DType t, int64_t n, Dist d, uint64_t seed);
/// Fills `n` elements with uniform integers in [lo, hi] stored as type t (for small exact data).
void fill_random_int(void* data, DType t, int64_t n, int lo, int hi, uint64_t seed);

/// Byte written over every output before a run: 0xFF is a NaN in every float dtype we use.
inline constexpr unsigned char kPoisonByte = 0xFF;
void fill_poison(void* data, int64_t bytes);
/// True when element i still holds the poison pattern.
bool is_poison(const void* data, DType t, int64_t i);

/// SplitMix64: one step of the counter hash behind the fills.
uint64_t splitmix64(uint64_t x);

}  // namespace klab
