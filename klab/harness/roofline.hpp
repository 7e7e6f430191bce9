#pragma once
// The roofline model (Williams, Waterman, Patterson, CACM 2009): a kernel doing F flops over B
// bytes of DRAM traffic has arithmetic intensity AI = F / B and can run no faster than
// attainable = min(peak, AI x bandwidth). Below the ridge point (peak / bandwidth) it is
// memory-bound, above it compute-bound. Host-only: the CLI, the tests and the reports share it.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "klab/core/dtype.hpp"
#include "klab/harness/devices.hpp"

namespace klab::roofline {

/// Number formats the roofline knows: klab's dtypes plus fp64, tf32 and fp4.
enum class Precision : uint8_t { fp64, fp32, tf32, bf16, fp16, fp8, fp4 };

/// "f64"/"fp64", "f32"/"fp32", "tf32", "bf16", "f16"/"fp16", "e4m3"/"e5m2"/"fp8", "fp4"/"e2m1";
/// throws UsageError (one line) otherwise.
Precision parse_precision(std::string_view name);
Precision precision_of(DType t);
std::string_view precision_name(Precision p);
/// Bytes per element in memory (tf32 is stored as fp32; fp4 packs two per byte).
double element_bytes(Precision p);

/// Which units do a kernel's arithmetic.
enum class Unit : uint8_t { cuda_cores, tensor_cores };

/// A device's two roofs for one kind of kernel.
struct Roof {
  std::string device;
  double bandwidth = 0;       ///< bytes/s
  double peak = 0;            ///< flop/s
  std::string memory_label;   ///< "copy, measured" or "DRAM, datasheet"
  std::string compute_label;  ///< "bf16 tensor, datasheet", "fp32 FFMA, measured"
  /// The AI where the roofs meet, flop/byte.
  double ridge() const { return peak / bandwidth; }
};

enum class Bound : uint8_t { memory, compute };
std::string_view bound_name(Bound b);

/// flop/byte; 0 when bytes is 0.
double intensity(double flops, double bytes);
/// min(peak, ai x bandwidth), flop/s.
double attainable(const Roof& r, double ai);
/// memory below the ridge, compute at or above it.
Bound bound_of(const Roof& r, double ai);
/// The least time the roofs allow: max(flops / peak, bytes / bandwidth), seconds.
double time_floor_s(const Roof& r, double flops, double bytes);

/// Minimal counts of a kernel (each input read once, each output written once).
struct KernelModel {
  std::string name;   ///< "vector add"
  std::string shape;  ///< "n=67108864"
  Precision precision = Precision::fp32;
  Unit unit = Unit::cuda_cores;
  double flops = 0, bytes = 0;
  double ai() const { return intensity(flops, bytes); }
};

/// c = a + b: n flops, 3n elements.
KernelModel vector_add(int64_t n, Precision p);
/// y = max(x, 0): n flops, 2n elements.
KernelModel relu(int64_t n, Precision p);
/// Row-wise softmax of rows x cols: 5 flops per element (max, subtract, exp, sum, scale), 2 elements
/// per element (klab's softmax family counts the same).
KernelModel softmax(int64_t rows, int64_t cols, Precision p);
/// y = A x, A m x k: 2mk flops, mk + k + m elements. CUDA cores (one flop per loaded element).
KernelModel gemv(int64_t m, int64_t k, Precision p);
/// C = A B, m x k by k x n: 2mnk flops, mk + kn + mn elements; tensor cores except in fp32/fp64
/// without DMMA (fp32 GEMM is the FFMA SGEMM: the fair baseline has TF32 off).
KernelModel gemm(int64_t m, int64_t n, int64_t k, Precision p);
/// The five kernels at the shapes `klab roofline` tabulates.
std::vector<KernelModel> standard_kernels(Precision p);

/// Measured ceilings by name ("copy", "read", "write", "fp32", "bf16_tc", "fp8_tc"), in the units
/// `klab ceilings` reports (GB/s, TFLOP/s).
using Measured = std::map<std::string, double>;

/// Datasheet peak in flop/s for precision p on unit u; 0 when the chip has no such unit.
double datasheet_peak(const DeviceSpec& d, Precision p, Unit u);
/// "bf16 tensor", "fp32 FFMA", ...
std::string compute_roof_name(Precision p, Unit u);
/// The measured ceiling that matches that peak ("fp32", "bf16_tc", "fp8_tc"), empty if none.
std::string compute_ceiling_name(Precision p, Unit u);
/// Whether a ceiling name measures bandwidth (GB/s) rather than flop/s.
bool is_memory_ceiling(std::string_view name);

/// The roof of device d for kernels of precision p on unit u: datasheet figures, each replaced by
/// its measured ceiling when `measured` has one (memory: `memory_ceiling`, default "copy").
/// Throws UsageError when d has no unit for p (e.g. fp8 on an A100).
Roof make_roof(const DeviceSpec& d, Precision p, Unit u, const Measured& measured = {},
               const std::string& memory_ceiling = "copy");

/// Where a family's arithmetic runs: tensor cores for a "_tc" ceiling or a GEMM-like family in a
/// narrow type, CUDA cores otherwise.
Unit unit_for(std::string_view family, DType t, std::string_view ceiling_name);

/// One measurement placed against the roofs.
struct Assessment {
  double ai = 0, ridge = 0;
  Bound bound = Bound::memory;
  double attainable = 0;      ///< flop/s
  double floor_s = 0;         ///< time_floor_s
  double achieved_flops = 0;  ///< flop/s
  double achieved_bytes = 0;  ///< bytes/s
  double pct_of_roof = 0;     ///< 100 x floor / measured time (the same as % of attainable)
};
Assessment assess(const Roof& r, double flops, double bytes, double seconds);

/// A verdict from the predicted bound and the achieved % of the relevant ceiling: "at the memory
/// roof" (>= 90%), "memory-bound, 23% short", "above the ceiling: a bug to find" (> 100.5%),
/// "latency-bound: ..." for problems whose floor is under 5 us; "(near the ridge)" is appended
/// when AI is within a factor of two of the ridge.
std::string verdict(Bound b, double pct_of_ceiling, double floor_s, double ai, double ridge);

/// "1.34 G", "512 M", "8.0 k" (decimal prefixes) for the tables.
std::string si(double v);

}  // namespace klab::roofline
