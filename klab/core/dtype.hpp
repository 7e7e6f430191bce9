#pragma once
// Element types and their host-side conversions (no CUDA headers: used by the CPU-only build).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace klab {

/// Floating-point element types, and the integer ones of index tensors (block tables, sequence
/// lengths, expert offsets).
enum class DType : uint8_t { f32, f16, bf16, e4m3, e5m2, i32, i64 };

/// i32 or i64.
inline bool dtype_is_integer(DType t) { return t == DType::i32 || t == DType::i64; }

/// Bytes per element.
int dtype_size(DType t);
/// "f32", "bf16", ...
std::string_view dtype_name(DType t);
/// Parses a dtype name; throws UsageError listing the valid names.
DType parse_dtype(std::string_view name);
/// Unit roundoff (half an ulp at 1.0): 2^-24 for f32, 2^-8 for bf16, ...; 0 for integers.
double dtype_unit_roundoff(DType t);
const std::vector<DType>& all_dtypes();

// Round-to-nearest-even conversions between float and the narrow formats, on the host.
uint16_t float_to_half_bits(float f);
float half_bits_to_float(uint16_t h);
uint16_t float_to_bf16_bits(float f);
float bf16_bits_to_float(uint16_t h);
/// e4m3 (OCP "fn" variant): no infinities, saturates to +-448, 0x7f/0xff are NaN.
uint8_t float_to_e4m3_bits(float f);
float e4m3_bits_to_float(uint8_t b);
/// e5m2: IEEE-like with infinities; values above 57344 saturate to +-57344.
uint8_t float_to_e5m2_bits(float f);
float e5m2_bits_to_float(uint8_t b);

/// Reads element i of a raw buffer of type t as double.
double load_as_double(const void* data, DType t, int64_t i);
/// Stores v (rounded to t; to the nearest integer for i32 and i64) into element i.
void store_from_double(void* data, DType t, int64_t i, double v);

}  // namespace klab
