#include "klab/harness/roofline.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "klab/core/errors.hpp"

namespace klab::roofline {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string fmt_num(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string n_shape(int64_t n) { return "n=" + std::to_string(n); }

}  // namespace

Precision parse_precision(std::string_view name) {
  const std::string n = lower(name);
  if (n == "f64" || n == "fp64" || n == "double") return Precision::fp64;
  if (n == "f32" || n == "fp32" || n == "float") return Precision::fp32;
  if (n == "tf32") return Precision::tf32;
  if (n == "bf16") return Precision::bf16;
  if (n == "f16" || n == "fp16" || n == "half") return Precision::fp16;
  if (n == "e4m3" || n == "e5m2" || n == "fp8") return Precision::fp8;
  if (n == "fp4" || n == "e2m1" || n == "nvfp4") return Precision::fp4;
  throw UsageError("unknown dtype '" + std::string(name) +
                   "' (roofline dtypes: f64, f32, tf32, bf16, f16, e4m3, e5m2, fp4)");
}

Precision precision_of(DType t) {
  switch (t) {
    case DType::f32:
      return Precision::fp32;
    case DType::f16:
      return Precision::fp16;
    case DType::bf16:
      return Precision::bf16;
    case DType::e4m3:
    case DType::e5m2:
      return Precision::fp8;
    case DType::i32:
    case DType::i64:
      break;  // index tensors: no arithmetic rate of their own
  }
  return Precision::fp32;
}

std::string_view precision_name(Precision p) {
  switch (p) {
    case Precision::fp64:
      return "fp64";
    case Precision::fp32:
      return "fp32";
    case Precision::tf32:
      return "tf32";
    case Precision::bf16:
      return "bf16";
    case Precision::fp16:
      return "fp16";
    case Precision::fp8:
      return "fp8";
    case Precision::fp4:
      return "fp4";
  }
  return "?";
}

double element_bytes(Precision p) {
  switch (p) {
    case Precision::fp64:
      return 8;
    case Precision::fp32:
    case Precision::tf32:
      return 4;
    case Precision::bf16:
    case Precision::fp16:
      return 2;
    case Precision::fp8:
      return 1;
    case Precision::fp4:
      return 0.5;
  }
  return 4;
}

std::string_view bound_name(Bound b) { return b == Bound::memory ? "memory" : "compute"; }

double intensity(double flops, double bytes) { return bytes > 0 ? flops / bytes : 0.0; }

double attainable(const Roof& r, double ai) { return std::min(r.peak, ai * r.bandwidth); }

Bound bound_of(const Roof& r, double ai) { return ai < r.ridge() ? Bound::memory : Bound::compute; }

double time_floor_s(const Roof& r, double flops, double bytes) {
  return std::max(r.peak > 0 ? flops / r.peak : 0.0, r.bandwidth > 0 ? bytes / r.bandwidth : 0.0);
}

KernelModel vector_add(int64_t n, Precision p) {
  const double e = element_bytes(p), dn = static_cast<double>(n);
  return {"vector add", n_shape(n), p, Unit::cuda_cores, dn, 3 * dn * e};
}

KernelModel relu(int64_t n, Precision p) {
  const double e = element_bytes(p), dn = static_cast<double>(n);
  return {"ReLU", n_shape(n), p, Unit::cuda_cores, dn, 2 * dn * e};
}

KernelModel softmax(int64_t rows, int64_t cols, Precision p) {
  const double e = element_bytes(p), n = static_cast<double>(rows) * static_cast<double>(cols);
  return {"softmax (rows)",
          "rows=" + std::to_string(rows) + ",cols=" + std::to_string(cols),
          p,
          Unit::cuda_cores,
          5 * n,
          2 * n * e};
}

KernelModel gemv(int64_t m, int64_t k, Precision p) {
  const double e = element_bytes(p), dm = static_cast<double>(m), dk = static_cast<double>(k);
  return {"matrix-vector",
          "m=" + std::to_string(m) + ",k=" + std::to_string(k),
          p,
          Unit::cuda_cores,
          2 * dm * dk,
          (dm * dk + dk + dm) * e};
}

KernelModel gemm(int64_t m, int64_t n, int64_t k, Precision p) {
  const double e = element_bytes(p), dm = static_cast<double>(m), dn = static_cast<double>(n),
               dk = static_cast<double>(k);
  const Unit u = p == Precision::fp32 ? Unit::cuda_cores : Unit::tensor_cores;
  return {"GEMM",
          "m=" + std::to_string(m) + ",n=" + std::to_string(n) + ",k=" + std::to_string(k),
          p,
          u,
          2 * dm * dn * dk,
          (dm * dk + dk * dn + dm * dn) * e};
}

std::vector<KernelModel> standard_kernels(Precision p) {
  // The families' headline sizes: 2^26 elements, a 32768 x 4096 softmax, an 8192^2 matrix
  // against a vector, a 4096^3 GEMM.
  const int64_t n = int64_t(1) << 26;
  return {vector_add(n, p), relu(n, p), softmax(32768, 4096, p), gemv(8192, 8192, p),
          gemm(4096, 4096, 4096, p)};
}

double datasheet_peak(const DeviceSpec& d, Precision p, Unit u) {
  double tf = 0;
  if (u == Unit::cuda_cores) {
    // Narrow types are converted and computed in fp32 on the CUDA cores.
    tf = p == Precision::fp64 ? d.fp64 : d.fp32;
  } else {
    switch (p) {
      case Precision::fp64:
        tf = d.fp64_tensor > 0 ? d.fp64_tensor : d.fp64;
        break;
      case Precision::fp32:
        tf = d.fp32;
        break;
      case Precision::tf32:
        tf = d.tf32;
        break;
      case Precision::bf16:
      case Precision::fp16:
        tf = d.bf16;
        break;
      case Precision::fp8:
        tf = d.fp8;
        break;
      case Precision::fp4:
        tf = d.fp4;
        break;
    }
  }
  return tf * 1e12;
}

std::string compute_roof_name(Precision p, Unit u) {
  if (p == Precision::fp32 || (u == Unit::cuda_cores && p != Precision::fp64)) return "fp32 FFMA";
  if (u == Unit::cuda_cores) return "fp64 FMA";
  return std::string(precision_name(p)) + " tensor";
}

std::string compute_ceiling_name(Precision p, Unit u) {
  if (p == Precision::fp64) return "";
  if (u == Unit::cuda_cores || p == Precision::fp32) return "fp32";
  switch (p) {
    case Precision::bf16:
    case Precision::fp16:
      return "bf16_tc";
    case Precision::fp8:
      return "fp8_tc";
    default:
      return "";
  }
}

bool is_memory_ceiling(std::string_view name) {
  return name == "copy" || name == "read" || name == "write" || name == "read2_write1" ||
         name == "read3_write1" || name == "read4_write1";
}

Roof make_roof(const DeviceSpec& d, Precision p, Unit u, const Measured& measured,
               const std::string& memory_ceiling) {
  Roof r;
  r.device = d.name;
  r.peak = datasheet_peak(d, p, u);
  if (r.peak <= 0)
    throw UsageError(d.name + " has no " + compute_roof_name(p, u) + " units (" + d.arch + ")");
  r.compute_label = compute_roof_name(p, u) + ", datasheet";
  r.bandwidth = d.memory_gbps * 1e9;
  r.memory_label = "DRAM, datasheet";
  if (auto it = measured.find(memory_ceiling); it != measured.end() && it->second > 0) {
    r.bandwidth = it->second * 1e9;
    r.memory_label = memory_ceiling + ", measured";
  }
  const std::string cname = compute_ceiling_name(p, u);
  if (auto it = measured.find(cname); !cname.empty() && it != measured.end() && it->second > 0) {
    r.peak = it->second * 1e12;
    r.compute_label = compute_roof_name(p, u) + ", measured";
  }
  return r;
}

Unit unit_for(std::string_view family, DType t, std::string_view ceiling_name) {
  if (ceiling_name.size() > 3 && ceiling_name.substr(ceiling_name.size() - 3) == "_tc")
    return Unit::tensor_cores;
  if (t == DType::f32) return Unit::cuda_cores;
  for (std::string_view w : {"gemm", "matmul", "attention", "mma"})
    if (family.find(w) != std::string_view::npos) return Unit::tensor_cores;
  return Unit::cuda_cores;
}

Assessment assess(const Roof& r, double flops, double bytes, double seconds) {
  Assessment a;
  a.ai = intensity(flops, bytes);
  a.ridge = r.ridge();
  a.bound = bound_of(r, a.ai);
  a.attainable = attainable(r, a.ai);
  a.floor_s = time_floor_s(r, flops, bytes);
  if (seconds > 0) {
    a.achieved_flops = flops / seconds;
    a.achieved_bytes = bytes / seconds;
    a.pct_of_roof = 100.0 * a.floor_s / seconds;
  }
  return a;
}

std::string verdict(Bound b, double pct, double floor_s, double ai, double ridge) {
  const std::string roof(bound_name(b));
  std::string v;
  if (pct > 100.5)
    v = "above the ceiling (" + fmt_num("%.0f", pct) +
        "%): a bug to find in the counts or the timing";
  else if (pct >= 90)
    v = "at the " + roof + " roof";
  else if (floor_s < 5e-6)
    v = "latency-bound: too small for either roof (" + fmt_num("%.0f", pct) + "% of the " + roof +
        " roof)";
  else
    v = roof + "-bound, " + fmt_num("%.0f", 100 - pct) + "% short";
  if (ai > 0 && ridge > 0 && ai >= ridge / 2 && ai <= ridge * 2) v += " (near the ridge)";
  return v;
}

std::string si(double v) {
  const double a = std::fabs(v);
  const char* suffix = "";
  double s = v;
  if (a >= 1e12)
    s = v / 1e12, suffix = " T";
  else if (a >= 1e9)
    s = v / 1e9, suffix = " G";
  else if (a >= 1e6)
    s = v / 1e6, suffix = " M";
  else if (a >= 1e3)
    s = v / 1e3, suffix = " k";
  const double as = std::fabs(s);
  const char* f = as >= 100 ? "%.0f" : as >= 10 ? "%.1f" : "%.2f";
  return fmt_num(f, s) + suffix;
}

}  // namespace klab::roofline
