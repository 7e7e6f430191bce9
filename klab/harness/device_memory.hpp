#pragma once
// The device memory a variant needs at a problem: what the harness allocates for it (the family's
// tensors, the variant's workspace), the refusal of a problem that cannot fit in the device's free
// memory (decided before anything is allocated), and the peak measured while the variant is set
// up and run once. Every GPU record carries it; `klab memory` measures it alone, without timing.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "klab/harness/family.hpp"

namespace klab {

struct Result;

/// The device's memory at one moment, as cudaMemGetInfo says: every process's use of the device,
/// not only this one's.
struct DeviceMemoryInfo {
  bool known = false;  ///< false without a CUDA device, or when the query failed
  int64_t free = 0, total = 0;
  int64_t used() const { return total - free; }
};

/// How the device's memory is read: cudaMemGetInfo, unless a test has put a fake in its place.
using DeviceMemoryProbe = std::function<DeviceMemoryInfo()>;
/// Replaces the probe (an empty one restores cudaMemGetInfo); returns the one it replaced.
DeviceMemoryProbe set_device_memory_probe(DeviceMemoryProbe probe);
/// The device's memory now, through the probe.
DeviceMemoryInfo device_memory_now();

/// How every record's peak_measured is taken.
inline constexpr std::string_view kPeakMethod =
    "cudaMemGetInfo used memory (every process on the device) sampled before the harness "
    "allocates, after allocation + prepare and after the first run (synchronised); peak = the "
    "largest rise over the first sample. Memory a vendor library allocates and keeps counts; "
    "memory allocated and freed within a launch is not seen; the driver's allocation "
    "granularity rounds the rise up";

/// One variant's device memory at one problem (Result::device_memory), in bytes.
struct DeviceMemory {
  int64_t tensors = 0;  ///< the family's tensors, inputs and outputs (each with --misalign's shift)
  int64_t workspace = 0;  ///< Variant::workspace_bytes
  int64_t free = -1;      ///< the device's free memory before the harness allocated (-1: unknown)
  std::optional<int64_t> peak_measured;  ///< empty: not measured (refused, or failed before)
  std::string method;                    ///< how peak_measured was taken, or why it was not
  int64_t needed() const { return tensors + workspace; }
};

/// Bytes of p's tensors as the harness allocates them for a GPU variant.
int64_t tensor_bytes(const Family& f, const Problem& p);
/// v's tensors and workspace at p (nothing measured); throws what workspace_bytes throws.
DeviceMemory memory_need(const Family& f, const Variant& v, const Problem& p);
/// ok; or, when the device's free memory is known and below m.needed(), the refusal:
/// "does not fit: needs X GiB (tensors A GiB + workspace B GiB), Y GiB free".
Status fits_in_free_memory(const DeviceMemory& m, const DeviceMemoryInfo& device);

/// Samples the device's used memory: once when made (before the harness allocates), then at each
/// sample(); the peak is the largest rise over the first sample.
class MemoryWatch {
 public:
  MemoryWatch();
  void sample();
  bool known() const { return first_.known; }
  int64_t free_before() const { return first_.known ? first_.free : -1; }
  /// The largest rise of the used memory over the first sample (0 when it never rose).
  int64_t peak_rise() const { return max_used_ > first_.used() ? max_used_ - first_.used() : 0; }

 private:
  DeviceMemoryInfo first_;
  int64_t max_used_ = 0;
};

/// "1.5 GiB" (one decimal): the refusals' unit.
std::string format_gib(double bytes);
/// "0 B", "768 B", "512.0 KiB", "32.0 MiB", "128.0 GiB": the tables' unit.
std::string format_bytes(int64_t bytes);

/// The records that carry device memory as a table, one row per (variant, problem): tensors,
/// workspace, the measured peak, the peak over the tensors, the extra memory (peak - tensors), and
/// the refusal or error where there is one. Markdown, or aligned text.
std::string memory_table(const std::vector<Result>& results, bool markdown);
/// The same records by problem, one column per variant: its measured peak, or why there is none
/// (markdown; empty with fewer than two variants).
std::string memory_by_problem(const std::vector<Result>& results);

}  // namespace klab
