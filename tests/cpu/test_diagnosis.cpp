// klab doctor's judgement on captured tool outputs: compute-sanitizer's four tools (both location
// formats, with and without line information), a check result, Nsight Compute memory metrics.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "klab/harness/diagnosis.hpp"

using namespace klab;
using namespace klab::diagnosis;

namespace {

bool any_line(const std::vector<Finding>& fs, const std::string& kind, const std::string& part) {
  for (const auto& f : fs)
    if (f.kind == kind && f.line().find(part) != std::string::npos) return true;
  return false;
}

std::string all(const std::vector<Finding>& fs) {
  std::string s;
  for (const auto& f : fs) s += f.line() + "\n";
  return s;
}

constexpr const char* kRoot = "/work/main";

// memcheck on a misaligned float4 load (current location format), with the host-side API error
// that follows it, the program's own output mixed in, and the summary.
constexpr const char* kMemcheckMisaligned = R"(========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 16 bytes
=========     at klab::sabotage::sabotage_v02_kernel(const float *, float *, long)+0x70 in /work/main/kernels/sabotage/v02_misaligned_vector.cu:31
=========     by thread (1,0,0) in block (0,0,0)
=========     Address 0x7f3a5e00000c is misaligned
=========     and is inside the nearest allocation at 0x7f3a5e000000 of size 16777216 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: [0x2f2f1f] in libcuda.so.1
=========         Host Frame: klab::sabotage::gpu_v02_misaligned_vector() [0x4a1b2c] in klab
=========
========= Invalid __global__ read of size 16 bytes
=========     at klab::sabotage::sabotage_v02_kernel(const float *, float *, long)+0x70 in /work/main/kernels/sabotage/v02_misaligned_vector.cu:31
=========     by thread (2,0,0) in block (0,0,0)
=========     Address 0x7f3a5e00001c is misaligned
=========
========= Program hit cudaErrorLaunchFailure (error 719) due to "unspecified launch failure" on CUDA API call to cudaStreamSynchronize.
=========     Saved host backtrace up to driver entry point at error
=========         Host Frame: [0x2f2f1f] in libcuda.so.1
=========
sabotage.v02_misaligned_vector  n=4194304  f32  error: CUDA error: unspecified launch failure
========= Target application returned an error
========= ERROR SUMMARY: 3 errors
)";

// The same fault in the older location format ("at 0x70 in file:line:kernel").
constexpr const char* kMemcheckOldFormat = R"(========= CUDA-MEMCHECK
========= Invalid __global__ read of size 16
=========     at 0x00000070 in /work/main/kernels/sabotage/v02_misaligned_vector.cu:31:klab::sabotage::sabotage_v02_kernel(float const *, float*, long)
=========     by thread (1,0,0) in block (0,0,0)
=========     Address 0x7f3a5e00000c is misaligned
========= ERROR SUMMARY: 1 error
)";

constexpr const char* kMemcheckOutOfBounds = R"(========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at add_kernel(float *, int)+0x90
=========     by thread (31,0,0) in block (3,0,0)
=========     Address 0x7f0000001000 is out of bounds
=========     and is 4 bytes after the nearest allocation at 0x7f0000000000 of size 4096 bytes
=========
========= ERROR SUMMARY: 1 error
)";

constexpr const char* kRacecheck = R"(========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at klab::sabotage::sabotage_v01_kernel(const float *, float *, long)+0x1a0 in /work/main/kernels/sabotage/v01_smem_race.cu:18
=========     and Read access at klab::sabotage::sabotage_v01_kernel(const float *, float *, long)+0x250 in /work/main/kernels/sabotage/v01_smem_race.cu:22 [16380 hazards]
=========
========= Error: Race reported between Write access at klab::sabotage::sabotage_v01_kernel(const float *, float *, long)+0x1e0 in /work/main/kernels/sabotage/v01_smem_race.cu:20
=========     and Read access at klab::sabotage::sabotage_v01_kernel(const float *, float *, long)+0x250 in /work/main/kernels/sabotage/v01_smem_race.cu:22 [4 hazards]
=========
========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)
========= ERROR SUMMARY: 2 errors
)";

// racecheck --racecheck-report hazard, older format.
constexpr const char* kRacecheckHazard = R"(========= CUDA-MEMCHECK
========= ERROR: Potential RAW hazard detected at __shared__ 0x84 in block (0, 0, 0) :
=========     Write Thread (32, 0, 0) at 0x00000150 in /src/k.cu:40:kern(float*)
=========     Read Thread (31, 0, 0) at 0x00000190 in /src/k.cu:44:kern(float*)
=========     Current Value : 0, Incoming Value : 1
=========
========= ERROR SUMMARY: 1 error
)";

constexpr const char* kInitcheck = R"(========= COMPUTE-SANITIZER
========= Uninitialized __global__ memory read of size 4 bytes
=========     at sum_kernel(const float *, float *, int)+0x60 in /src/sum.cu:12
=========     by thread (0,0,0) in block (0,0,0)
=========     Address 0x7f0000000000
=========
========= ERROR SUMMARY: 1 error
)";

constexpr const char* kSynccheck = R"(========= COMPUTE-SANITIZER
========= Barrier error detected. Divergent thread(s) in warp
=========     at reduce_kernel(float *)+0x120 in /src/reduce.cu:27
=========     by thread (1,0,0) in block (0,0,0)
=========
========= Barrier error detected. Divergent thread(s) in warp
=========     at reduce_kernel(float *)+0x120 in /src/reduce.cu:27
=========     by thread (2,0,0) in block (0,0,0)
=========
========= ERROR SUMMARY: 2 errors
)";

constexpr const char* kClean = R"(========= COMPUTE-SANITIZER
sabotage.v00_correct  n=4194304  f32  pass
========= ERROR SUMMARY: 0 errors
)";

}  // namespace

TEST(Diagnosis, ShortKernelNames) {
  EXPECT_EQ(short_kernel_name("klab::sabotage::sabotage_v01_kernel(const float *, float *, long)"),
            "sabotage_v01_kernel");
  EXPECT_EQ(short_kernel_name("ns::(anonymous namespace)::tile<float, 4>(const float *, int)"),
            "tile<float, 4>");
  EXPECT_EQ(short_kernel_name("plain_kernel"), "plain_kernel");
  EXPECT_EQ(short_kernel_name("void a::b<c::d>(int)"), "b<c::d>");
}

TEST(Diagnosis, MemcheckMisalignedLoad) {
  const SanitizerReport r = parse_sanitizer_output("memcheck", kMemcheckMisaligned);
  EXPECT_TRUE(r.ran);
  ASSERT_TRUE(r.error_summary);
  EXPECT_EQ(*r.error_summary, 3);
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(r.records[0].kind, RecordKind::misaligned);
  EXPECT_EQ(r.records[0].memory, "__global__");
  EXPECT_EQ(r.records[0].access, "read");
  EXPECT_EQ(r.records[0].size, 16);
  EXPECT_EQ(r.records[0].at.line, 31);
  EXPECT_EQ(r.records[0].at.file, "/work/main/kernels/sabotage/v02_misaligned_vector.cu");
  EXPECT_EQ(r.records[2].kind, RecordKind::api_error);
  EXPECT_TRUE(r.records[2].at.kernel.empty());  // host frames are not device locations
  const auto fs = sanitizer_findings(r, kRoot);
  ASSERT_EQ(fs.size(), 1u) << all(fs);  // two threads, one fault; the API error is its echo
  EXPECT_EQ(fs[0].line(),
            "misaligned: 16-byte global-memory read at a misaligned address in "
            "sabotage_v02_kernel at kernels/sabotage/v02_misaligned_vector.cu:31 (memcheck, 2 "
            "reports)");
}

TEST(Diagnosis, MemcheckOlderLocationFormat) {
  const SanitizerReport r = parse_sanitizer_output("memcheck", kMemcheckOldFormat);
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.records[0].kind, RecordKind::misaligned);
  EXPECT_EQ(r.records[0].at.line, 31);
  EXPECT_EQ(short_kernel_name(r.records[0].at.kernel), "sabotage_v02_kernel");
  EXPECT_TRUE(any_line(sanitizer_findings(r, kRoot), "misaligned",
                       "kernels/sabotage/v02_misaligned_vector.cu:31"));
}

TEST(Diagnosis, MemcheckOutOfBoundsWithoutLineInfo) {
  const SanitizerReport r = parse_sanitizer_output("memcheck", kMemcheckOutOfBounds);
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.records[0].kind, RecordKind::out_of_bounds);
  EXPECT_EQ(r.records[0].access, "write");
  const auto fs = sanitizer_findings(r);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].kind, "out-of-bounds");
  EXPECT_NE(fs[0].text.find("add_kernel (no line information"), std::string::npos) << fs[0].text;
}

TEST(Diagnosis, RacecheckAnalysisReport) {
  const SanitizerReport r = parse_sanitizer_output("racecheck", kRacecheck);
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.records[0].kind, RecordKind::race);
  EXPECT_EQ(r.records[0].access, "Write");
  EXPECT_EQ(r.records[0].other_access, "Read");
  EXPECT_EQ(r.records[0].at.line, 18);
  EXPECT_EQ(r.records[0].other.line, 22);
  EXPECT_EQ(r.records[0].hazards, 16380);
  const auto fs = sanitizer_findings(r, kRoot);
  ASSERT_EQ(fs.size(), 2u) << all(fs);
  EXPECT_EQ(
      fs[0].line(),
      "race: shared-memory write-read hazard: a write in sabotage_v01_kernel at "
      "kernels/sabotage/v01_smem_race.cu:18 and a read at kernels/sabotage/v01_smem_race.cu:22 "
      "(racecheck, 16380 hazards)");
}

TEST(Diagnosis, RacecheckHazardReportOlderFormat) {
  const SanitizerReport r = parse_sanitizer_output("racecheck", kRacecheckHazard);
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.records[0].kind, RecordKind::race);
  EXPECT_EQ(r.records[0].at.line, 40);
  EXPECT_EQ(r.records[0].other.line, 44);
  EXPECT_TRUE(
      any_line(sanitizer_findings(r, "/src"), "race", "kern at k.cu:40 and a read at k.cu:44"))
      << all(sanitizer_findings(r, "/src"));
}

TEST(Diagnosis, Initcheck) {
  const SanitizerReport r = parse_sanitizer_output("initcheck", kInitcheck);
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.records[0].kind, RecordKind::uninitialized);
  EXPECT_EQ(r.records[0].size, 4);
  EXPECT_TRUE(
      any_line(sanitizer_findings(r, "/src"), "uninitialized",
               "4-byte global-memory read of memory never written in sum_kernel at sum.cu:12"));
}

TEST(Diagnosis, Synccheck) {
  const SanitizerReport r = parse_sanitizer_output("synccheck", kSynccheck);
  ASSERT_EQ(r.records.size(), 2u);
  const auto fs = sanitizer_findings(r, "/src");
  ASSERT_EQ(fs.size(), 1u) << all(fs);
  EXPECT_EQ(fs[0].line(),
            "barrier: Barrier error detected. Divergent thread(s) in warp in reduce_kernel at "
            "reduce.cu:27 (synccheck, 2 reports)");
}

TEST(Diagnosis, CleanRunAndUnreadableErrors) {
  const SanitizerReport clean = parse_sanitizer_output("memcheck", kClean);
  EXPECT_TRUE(clean.ran);
  EXPECT_EQ(clean.error_summary.value_or(-1), 0);
  EXPECT_TRUE(sanitizer_findings(clean).empty());

  // A summary with errors but no record klab recognises: said, not dropped.
  const SanitizerReport odd = parse_sanitizer_output(
      "memcheck", "========= Something new\n========= ERROR SUMMARY: 2 errors\n");
  EXPECT_FALSE(sanitizer_findings(odd).empty());

  const SanitizerReport none = parse_sanitizer_output("memcheck", "bash: no such file\n");
  EXPECT_FALSE(none.ran);
  EXPECT_TRUE(sanitizer_findings(none).empty());

  const SanitizerReport broken = parse_sanitizer_output(
      "racecheck", "========= Internal Sanitizer Error: The Sanitizer encountered an error\n");
  EXPECT_TRUE(any_line(sanitizer_findings(broken), "sanitizer", "racecheck failed"));
}

TEST(Diagnosis, CheckFindings) {
  Result ok;
  ok.checked = true;
  EXPECT_TRUE(check_findings(ok).empty());

  Result launch;
  launch.status = "error";
  launch.reason = "CUDA error: misaligned address (cudaErrorMisalignedAddress) at v02.cu:60";
  ASSERT_EQ(check_findings(launch).size(), 1u);
  EXPECT_EQ(check_findings(launch)[0].kind, "misaligned");

  Result nan;
  nan.checked = true;
  nan.check.passed = false;
  nan.check.nan = 16383;
  const double qnan = std::numeric_limits<double>::quiet_NaN();
  nan.check.first = {{"y", 255, qnan, 0.5}, {"y", 511, qnan, -0.25}};
  const auto fs = check_findings(nan);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(
      fs[0].line(),
      "nan: 16383 outputs NaN/Inf where the reference is finite, first at y indices 255, 511");

  Result wrong;
  wrong.checked = true;
  wrong.check.passed = false;
  wrong.check.bad = 3;
  wrong.check.max_abs = 0.5;
  wrong.check.first = {{"y", 31, 1.0, 1.5}};
  EXPECT_TRUE(any_line(check_findings(wrong), "wrong", "first at y[31] = 1, want 1.5"));
}

TEST(Diagnosis, NcuMemoryRules) {
  MemoryMetrics coalesced;
  coalesced.kernel = "klab::sabotage::sabotage_v00_kernel(const float *, float *, long)";
  coalesced.global_ld_sectors = 4.0e6;
  coalesced.global_ld_requests = 1.0e6;
  coalesced.global_st_sectors = 4.0e6;
  coalesced.global_st_requests = 1.0e6;
  coalesced.shared_ld_conflicts = 10;
  coalesced.shared_ld_wavefronts = 1.0e6;
  EXPECT_TRUE(ncu_findings(coalesced).empty());

  MemoryMetrics vec16 = coalesced;  // 16-byte lanes, coalesced: 16 sectors per request
  vec16.global_ld_sectors = 16.0e6;
  EXPECT_TRUE(ncu_findings(vec16).empty());

  MemoryMetrics scattered = coalesced;
  scattered.kernel = "klab::sabotage::sabotage_v04_kernel(const float *, float *, long)";
  scattered.global_ld_sectors = 96.0e6;
  scattered.global_ld_requests = 3.0e6;
  scattered.global_st_sectors = 32.0e6;
  const auto fs = ncu_findings(scattered);
  ASSERT_EQ(fs.size(), 2u) << all(fs);
  EXPECT_EQ(fs[0].kind, "slow");
  EXPECT_NE(fs[0].text.find("32.0 sectors per global load request in sabotage_v04_kernel"),
            std::string::npos)
      << fs[0].text;

  MemoryMetrics conflicted = coalesced;
  conflicted.shared_ld_conflicts = 7.0e6;
  conflicted.shared_ld_wavefronts = 8.0e6;
  EXPECT_TRUE(any_line(ncu_findings(conflicted), "slow", "88% of the shared load wavefronts"));

  MemoryMetrics missing;  // metrics ncu did not give: no finding, no crash
  EXPECT_TRUE(ncu_findings(missing).empty());
}
