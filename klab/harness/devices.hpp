#pragma once
// The device table: vendor datasheet peaks of the GPUs klab knows, for the roofline and for the
// datasheet column beside every measured ceiling. Host-only (no CUDA headers).
#include <string>
#include <string_view>
#include <vector>

namespace klab {

/// One GPU's published numbers. Compute peaks are dense (no 2:4 sparsity) TFLOP/s; 0 means the
/// chip has no such unit (e.g. no FP8 tensor cores before Ada/Hopper).
struct DeviceSpec {
  std::string key;                   ///< "h200": what `--device` takes (see aliases)
  std::string name;                  ///< "NVIDIA H200 SXM"
  std::string arch;                  ///< "sm_90"
  std::vector<std::string> aliases;  ///< other `--device` spellings ("h200-sxm")

  double fp64 = 0;         ///< FP64 on the CUDA cores
  double fp64_tensor = 0;  ///< FP64 on tensor cores (DMMA), 0 where absent
  double fp32 = 0;         ///< FP32 FFMA on the CUDA cores
  double tf32 = 0;         ///< TF32 tensor
  double bf16 = 0;         ///< BF16 / FP16 tensor, FP32 accumulate
  double fp8 = 0;          ///< FP8 (e4m3/e5m2) tensor, FP32 accumulate
  double fp4 = 0;          ///< FP4 tensor

  double memory_gbps = 0;  ///< DRAM bandwidth, GB/s (1e9 bytes/s)
  double memory_gb = 0;    ///< DRAM capacity, GB
  double l2_mib = 0;       ///< L2 cache, MiB
  int sm_count = 0;
  int boost_mhz = 0;  ///< maximum boost clock

  std::string source;  ///< the vendor documents these numbers come from
  std::string notes;   ///< how sparse figures were halved, which numbers are not on the datasheet

  /// The CUDA device name tokens that identify this chip ("NVIDIA H100 80GB HBM3"): every one of
  /// `match_all` present and none of `match_none` (case-insensitive, split at spaces and dashes).
  std::vector<std::string> match_all, match_none;
};

/// Every GPU in the table, in display order.
const std::vector<DeviceSpec>& device_table();

/// `--device` lookup: a key or alias, case-insensitive, ignoring '-', '_' and spaces ("H100 SXM",
/// "h100-sxm", "h100sxm"); failing that, a CUDA device name ("NVIDIA H200"). nullptr if none.
const DeviceSpec* find_device(std::string_view name);

/// The row for a running device's CUDA name ("NVIDIA A100-SXM4-80GB"); nullptr when the table
/// lacks it (e.g. "NVIDIA H200 NVL" is not the SXM part and is not matched to it).
const DeviceSpec* device_for_cuda_name(std::string_view cuda_name);

/// "h100-sxm, h100-pcie, h200, ..." for error messages.
std::string device_keys();

/// Same as find_device, but throws UsageError listing the known keys.
const DeviceSpec& device_or_throw(std::string_view name);

}  // namespace klab
