#include "klab/core/rng.hpp"

#include <cmath>
#include <cstring>
#include <numbers>

#include "klab/core/errors.hpp"

namespace klab {

std::string_view dist_name(Dist d) {
  switch (d) {
    case Dist::normal:
      return "normal";
    case Dist::uniform:
      return "uniform";
    case Dist::heavy:
      return "heavy";
  }
  return "?";
}

Dist parse_dist(std::string_view name) {
  for (Dist d : {Dist::normal, Dist::uniform, Dist::heavy})
    if (dist_name(d) == name) return d;
  throw UsageError("unknown distribution '" + std::string(name) +
                   "' (expected normal, uniform, heavy)");
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

namespace {

// Uniform in (0, 1), never exactly 0 (safe for log).
double unit(uint64_t bits) { return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53; }

double normal_draw(uint64_t seed, int64_t i, int which) {
  const uint64_t base = splitmix64(seed ^ splitmix64(static_cast<uint64_t>(i) * 8 + which));
  const double u1 = unit(base);
  const double u2 = unit(splitmix64(base));
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double draw(Dist d, uint64_t seed, int64_t i) {
  switch (d) {
    case Dist::normal:
      return normal_draw(seed, i, 0);
    case Dist::uniform:
      return 2.0 * unit(splitmix64(seed ^ splitmix64(i))) - 1.0;
    case Dist::heavy: {
      // t(3) = Z / sqrt(chi2_3 / 3)
      const double z = normal_draw(seed, i, 0);
      double chi2 = 0;
      for (int k = 1; k <= 3; ++k) {
        const double g = normal_draw(seed, i, k);
        chi2 += g * g;
      }
      return z / std::sqrt(chi2 / 3.0);
    }
  }
  return 0;
}

}  // namespace

void fill_random(void* data, DType t, int64_t n, Dist d, uint64_t seed) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) store_from_double(data, t, i, draw(d, seed, i));
}

void fill_random_int(void* data, DType t, int64_t n, int lo, int hi, uint64_t seed) {
  const uint64_t span = static_cast<uint64_t>(hi - lo + 1);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    store_from_double(data, t, i, lo + static_cast<int>(splitmix64(seed ^ splitmix64(i)) % span));
}

void fill_poison(void* data, int64_t bytes) { std::memset(data, kPoisonByte, bytes); }

bool is_poison(const void* data, DType t, int64_t i) {
  const int sz = dtype_size(t);
  const auto* p = static_cast<const unsigned char*>(data) + i * sz;
  for (int b = 0; b < sz; ++b)
    if (p[b] != kPoisonByte) return false;
  return true;
}

}  // namespace klab
