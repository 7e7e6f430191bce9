#pragma once
// klab doctor's judgement, as host code: compute-sanitizer's output parsed into records, and
// findings (one line each: what is wrong and where) from a check result, from sanitizer records
// and from Nsight Compute's memory metrics. No CUDA, no processes: tested on captured outputs.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "klab/harness/result.hpp"

namespace klab::diagnosis {

/// One line of a diagnosis: "kind: text", e.g. "race: shared-memory hazard ... at file.cu:42".
struct Finding {
  std::string kind;  ///< race, misaligned, out-of-bounds, uninitialized, barrier, nan, unwritten,
                     ///< wrong, launch, slow, sanitizer
  std::string text;
  std::string line() const { return kind + ": " + text; }
};

/// Where a sanitizer saw an access: the kernel (as printed) and the source line (with -lineinfo).
struct SourceLocation {
  std::string kernel;  ///< as printed, arguments included: "ns::kern(float *, int)"
  std::string file;    ///< "" without line information
  int line = 0;
  /// "kern at file.cu:42" (short kernel name; the file relative to `root` when under it).
  std::string str(std::string_view root = {}) const;
};

/// "ns::(anonymous namespace)::kern<float, 4>(const float *, int)" -> "kern<float, 4>".
std::string short_kernel_name(std::string_view printed);

enum class RecordKind : uint8_t {
  misaligned,     ///< memcheck: an access to a misaligned address
  out_of_bounds,  ///< memcheck: an access outside any allocation (or another invalid access)
  race,           ///< racecheck: a shared-memory hazard between two accesses
  uninitialized,  ///< initcheck: a read of memory never written
  barrier,        ///< synccheck: a barrier misuse (divergent threads, invalid arguments)
  api_error,      ///< a CUDA API call that returned an error (the program's side)
  other,          ///< any other record the tool printed
};

/// One error record of compute-sanitizer (its first line and the detail lines under it).
struct SanitizerRecord {
  RecordKind kind = RecordKind::other;
  std::string message;  ///< the first line, without the "========= " prefix
  std::string memory;   ///< "__global__", "__shared__", "__local__" when the message names one
  std::string access;   ///< "read" or "write" (memcheck, initcheck); the first access (racecheck)
  int size = 0;         ///< bytes of the access, when printed
  SourceLocation at;    ///< the (first) access
  // racecheck: the second access of the hazard, and how many hazards the record stands for.
  std::string other_access;
  SourceLocation other;
  int64_t hazards = 1;
  bool warning = false;  ///< racecheck "Warning:" (severity below error)
};

struct SanitizerReport {
  std::string tool;
  bool ran = false;  ///< a sanitizer banner or summary was seen (the tool itself ran)
  std::optional<int64_t> error_summary;  ///< "ERROR SUMMARY: N errors"
  std::vector<SanitizerRecord> records;
  std::vector<std::string> tool_errors;  ///< the tool's own failures ("Internal Sanitizer Error")
};

/// Parses the output of `compute-sanitizer --tool TOOL ...` (the program's own lines mixed in
/// are ignored). Tolerant: both the "at kern+0x70 in file.cu:31" and the older
/// "at 0x70 in file.cu:31:kern" location formats, with or without line information.
SanitizerReport parse_sanitizer_output(std::string_view tool, std::string_view text);

/// The report's findings, one per distinct (kind, kernel, source line), with repeat counts.
/// `root`: the source tree's path, stripped from file names under it.
std::vector<Finding> sanitizer_findings(const SanitizerReport& r, std::string_view root = {});

/// Findings of one check: a failed launch, NaN/Inf outputs, unwritten outputs, wrong values.
std::vector<Finding> check_findings(const Result& r);

/// The Nsight Compute memory metrics the slow-pattern rules read, of one profiled kernel.
struct MemoryMetrics {
  std::string kernel;  ///< as printed (demangled)
  std::optional<double> global_ld_sectors, global_ld_requests;
  std::optional<double> global_st_sectors, global_st_requests;
  std::optional<double> shared_ld_conflicts, shared_ld_wavefronts;
  std::optional<double> shared_st_conflicts, shared_st_wavefronts;
};

/// Above this many 32-byte sectors per warp-wide global request, lanes are scattered: 4 is a
/// warp's 4-byte accesses coalesced, 8 its 8-byte ones, 16 its 16-byte ones (the widest a lane
/// loads), so more than 16 means lanes fall in different sectors whatever the access width.
inline constexpr double kMaxCoalescedSectorsPerRequest = 16;
/// Above this share of shared-memory wavefronts being bank-conflict replays, conflicts dominate.
inline constexpr double kMaxBankConflictShare = 0.5;

/// "slow" findings: uncoalesced global loads or stores, shared-memory bank conflicts.
std::vector<Finding> ncu_findings(const MemoryMetrics& m);

}  // namespace klab::diagnosis
