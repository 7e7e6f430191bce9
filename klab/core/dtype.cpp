#include "klab/core/dtype.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "klab/core/errors.hpp"

namespace klab {

int dtype_size(DType t) {
  switch (t) {
    case DType::f32:
    case DType::i32:
      return 4;
    case DType::i64:
      return 8;
    case DType::f16:
    case DType::bf16:
      return 2;
    case DType::e4m3:
    case DType::e5m2:
      return 1;
  }
  return 0;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32:
      return "f32";
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
    case DType::e4m3:
      return "e4m3";
    case DType::e5m2:
      return "e5m2";
    case DType::i32:
      return "i32";
    case DType::i64:
      return "i64";
  }
  return "?";
}

const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> all{DType::f32,  DType::f16, DType::bf16, DType::e4m3,
                                      DType::e5m2, DType::i32, DType::i64};
  return all;
}

DType parse_dtype(std::string_view name) {
  for (DType t : all_dtypes())
    if (dtype_name(t) == name) return t;
  throw UsageError("unknown dtype '" + std::string(name) +
                   "' (expected f32, f16, bf16, e4m3, e5m2, i32, i64)");
}

double dtype_unit_roundoff(DType t) {
  switch (t) {
    case DType::f32:
      return std::ldexp(1.0, -24);
    case DType::f16:
      return std::ldexp(1.0, -11);
    case DType::bf16:
      return std::ldexp(1.0, -8);
    case DType::e4m3:
      return std::ldexp(1.0, -4);
    case DType::e5m2:
      return std::ldexp(1.0, -3);
    case DType::i32:
    case DType::i64:
      return 0;
  }
  return 0;
}

namespace {

// Generic round-to-nearest-even encoder for a small float format with `exp_bits` exponent and
// `man_bits` mantissa bits. Returns the magnitude bits (no sign). Overflow handling is the
// caller's: this returns the raw rounded value, possibly past the largest finite code.
uint32_t encode_magnitude(double a, int exp_bits, int man_bits) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const int min_normal_exp = 1 - bias;
  if (a == 0.0) return 0;
  int e = std::ilogb(a);
  if (e < min_normal_exp) e = min_normal_exp;  // subnormal range: fixed exponent
  // Scale so that the mantissa's last bit is the integer unit, then round to nearest even.
  const double scaled = std::ldexp(a, man_bits - e);
  double r = std::nearbyint(scaled);  // default rounding mode is to-nearest-even
  uint32_t mant = static_cast<uint32_t>(r);
  if (mant >= (2u << man_bits)) {  // rounding carried into the next binade
    mant >>= 1;
    ++e;
  }
  if (mant < (1u << man_bits)) return mant;  // subnormal (biased exponent 0)
  const uint32_t biased = static_cast<uint32_t>(e + bias);
  return (biased << man_bits) | (mant & ((1u << man_bits) - 1));
}

double decode_magnitude(uint32_t bits, int exp_bits, int man_bits) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const uint32_t biased = bits >> man_bits;
  const uint32_t mant = bits & ((1u << man_bits) - 1);
  if (biased == 0) return std::ldexp(static_cast<double>(mant), 1 - bias - man_bits);
  return std::ldexp(static_cast<double>(mant | (1u << man_bits)),
                    static_cast<int>(biased) - bias - man_bits);
}

}  // namespace

uint16_t float_to_half_bits(float f) {
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (std::isnan(f)) return 0x7e00;
  const double a = std::fabs(static_cast<double>(f));
  if (std::isinf(f)) return sign | 0x7c00;
  uint32_t m = encode_magnitude(a, 5, 10);
  if (m >= 0x7c00) m = 0x7c00;  // overflow to infinity
  return sign | static_cast<uint16_t>(m);
}

float half_bits_to_float(uint16_t h) {
  const bool neg = h & 0x8000;
  const uint32_t mag = h & 0x7fff;
  double v;
  if ((mag >> 10) == 0x1f)
    v = (mag & 0x3ff) ? std::numeric_limits<double>::quiet_NaN()
                      : std::numeric_limits<double>::infinity();
  else
    v = decode_magnitude(mag, 5, 10);
  return static_cast<float>(neg ? -v : v);
}

uint16_t float_to_bf16_bits(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);
  const uint32_t rounding = 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>((u + rounding) >> 16);
}

float bf16_bits_to_float(uint16_t h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

uint8_t float_to_e4m3_bits(float f) {
  const uint8_t sign = std::signbit(f) ? 0x80 : 0;
  if (std::isnan(f)) return 0x7f;
  const double a = std::fabs(static_cast<double>(f));
  if (a >= 448.0) return sign | 0x7e;  // saturate (the fn format has no infinity)
  uint32_t m = encode_magnitude(a, 4, 3);
  if (m > 0x7e) m = 0x7e;
  return sign | static_cast<uint8_t>(m);
}

float e4m3_bits_to_float(uint8_t b) {
  const bool neg = b & 0x80;
  const uint32_t mag = b & 0x7f;
  if (mag == 0x7f) return std::numeric_limits<float>::quiet_NaN();
  const double v = decode_magnitude(mag, 4, 3);
  return static_cast<float>(neg ? -v : v);
}

uint8_t float_to_e5m2_bits(float f) {
  const uint8_t sign = std::signbit(f) ? 0x80 : 0;
  if (std::isnan(f)) return 0x7e;
  if (std::isinf(f)) return sign | 0x7c;
  const double a = std::fabs(static_cast<double>(f));
  if (a >= 57344.0) return sign | 0x7b;  // saturating conversion, as __nv_cvt with satfinite
  uint32_t m = encode_magnitude(a, 5, 2);
  if (m > 0x7b) m = 0x7b;
  return sign | static_cast<uint8_t>(m);
}

float e5m2_bits_to_float(uint8_t b) {
  const bool neg = b & 0x80;
  const uint32_t mag = b & 0x7f;
  double v;
  if ((mag >> 2) == 0x1f)
    v = (mag & 3) ? std::numeric_limits<double>::quiet_NaN()
                  : std::numeric_limits<double>::infinity();
  else
    v = decode_magnitude(mag, 5, 2);
  return static_cast<float>(neg ? -v : v);
}

double load_as_double(const void* data, DType t, int64_t i) {
  switch (t) {
    case DType::f32:
      return static_cast<const float*>(data)[i];
    case DType::f16:
      return half_bits_to_float(static_cast<const uint16_t*>(data)[i]);
    case DType::bf16:
      return bf16_bits_to_float(static_cast<const uint16_t*>(data)[i]);
    case DType::e4m3:
      return e4m3_bits_to_float(static_cast<const uint8_t*>(data)[i]);
    case DType::e5m2:
      return e5m2_bits_to_float(static_cast<const uint8_t*>(data)[i]);
    case DType::i32:
      return static_cast<const int32_t*>(data)[i];
    case DType::i64:
      return static_cast<double>(static_cast<const int64_t*>(data)[i]);
  }
  return 0;
}

void store_from_double(void* data, DType t, int64_t i, double v) {
  const float f = static_cast<float>(v);
  switch (t) {
    case DType::f32:
      static_cast<float*>(data)[i] = f;
      break;
    case DType::f16:
      static_cast<uint16_t*>(data)[i] = float_to_half_bits(f);
      break;
    case DType::bf16:
      static_cast<uint16_t*>(data)[i] = float_to_bf16_bits(f);
      break;
    case DType::e4m3:
      static_cast<uint8_t*>(data)[i] = float_to_e4m3_bits(f);
      break;
    case DType::e5m2:
      static_cast<uint8_t*>(data)[i] = float_to_e5m2_bits(f);
      break;
    case DType::i32:
      static_cast<int32_t*>(data)[i] = static_cast<int32_t>(std::llround(v));
      break;
    case DType::i64:
      static_cast<int64_t*>(data)[i] = static_cast<int64_t>(std::llround(v));
      break;
  }
}

}  // namespace klab
