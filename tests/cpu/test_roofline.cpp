// Roofline arithmetic, the device table and bound classification (host only).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "klab/core/errors.hpp"
#include "klab/harness/ceilings.hpp"
#include "klab/harness/devices.hpp"
#include "klab/harness/roofline.hpp"
#include "klab/harness/tune_table.hpp"

namespace rl = klab::roofline;
using klab::DeviceSpec;

TEST(Roofline, VectorAddF32IsOneTwelfthFlopPerByte) {
  const auto k = rl::vector_add(1 << 20, rl::Precision::fp32);
  EXPECT_DOUBLE_EQ(k.ai(), 1.0 / 12.0);  // one add per 4 + 4 + 4 bytes
  EXPECT_EQ(k.unit, rl::Unit::cuda_cores);
}

TEST(Roofline, GemmBf16Intensity) {
  const auto k = rl::gemm(4096, 4096, 4096, rl::Precision::bf16);
  const double n = 4096;
  EXPECT_DOUBLE_EQ(k.flops, 2 * n * n * n);
  EXPECT_DOUBLE_EQ(k.bytes, 3 * n * n * 2);
  EXPECT_NEAR(k.ai(), 1365.33, 0.01);
  EXPECT_EQ(k.unit, rl::Unit::tensor_cores);
  EXPECT_EQ(rl::gemm(64, 64, 64, rl::Precision::fp32).unit, rl::Unit::cuda_cores);  // FFMA SGEMM
}

TEST(Roofline, OtherKernelCounts) {
  EXPECT_DOUBLE_EQ(rl::relu(1000, rl::Precision::bf16).ai(), 1.0 / 4.0);
  EXPECT_DOUBLE_EQ(rl::softmax(10, 100, rl::Precision::fp32).ai(), 5.0 / 8.0);
  const auto g = rl::gemv(100, 50, rl::Precision::fp32);
  EXPECT_DOUBLE_EQ(g.flops, 2.0 * 100 * 50);
  EXPECT_DOUBLE_EQ(g.bytes, (100.0 * 50 + 50 + 100) * 4);
  EXPECT_DOUBLE_EQ(rl::vector_add(8, rl::Precision::fp4).bytes, 12);  // two fp4 per byte
  EXPECT_EQ(rl::standard_kernels(rl::Precision::bf16).size(), 5u);
}

TEST(Roofline, H200Bf16Ridge) {
  const DeviceSpec& h200 = klab::device_or_throw("h200");
  const rl::Roof r = rl::make_roof(h200, rl::Precision::bf16, rl::Unit::tensor_cores);
  EXPECT_NEAR(r.peak, 989.5e12, 1e9);
  EXPECT_DOUBLE_EQ(r.bandwidth, 4.8e12);
  EXPECT_NEAR(r.ridge(), 206.1, 0.1);  // 989.5e12 / 4.8e12
  // The fp32 CUDA-core roof meets the memory roof much earlier.
  EXPECT_NEAR(rl::make_roof(h200, rl::Precision::bf16, rl::Unit::cuda_cores).ridge(), 67.0 / 4.8,
              1e-9);
}

TEST(Roofline, AttainableAndBound) {
  const DeviceSpec& h200 = klab::device_or_throw("h200");
  const rl::Roof r = rl::make_roof(h200, rl::Precision::bf16, rl::Unit::tensor_cores);
  // Below the ridge: AI x bandwidth.
  EXPECT_DOUBLE_EQ(rl::attainable(r, 1.0), 4.8e12);
  EXPECT_EQ(rl::bound_of(r, 1.0), rl::Bound::memory);
  // Above it: the peak.
  EXPECT_DOUBLE_EQ(rl::attainable(r, 1365.0), r.peak);
  EXPECT_EQ(rl::bound_of(r, 1365.0), rl::Bound::compute);
  EXPECT_EQ(rl::bound_of(r, r.ridge()), rl::Bound::compute);
  // Vector add is memory-bound everywhere; a big GEMM compute-bound on every chip in the table.
  for (const auto& d : klab::device_table()) {
    const auto va = rl::vector_add(1 << 26, rl::Precision::fp32);
    EXPECT_EQ(rl::bound_of(rl::make_roof(d, va.precision, va.unit), va.ai()), rl::Bound::memory)
        << d.key;
    const auto gm = rl::gemm(8192, 8192, 8192, rl::Precision::bf16);
    EXPECT_EQ(rl::bound_of(rl::make_roof(d, gm.precision, gm.unit), gm.ai()), rl::Bound::compute)
        << d.key;
  }
}

TEST(Roofline, TimeFloorAndAssessment) {
  const DeviceSpec& h200 = klab::device_or_throw("h200");
  const rl::Roof r = rl::make_roof(h200, rl::Precision::fp32, rl::Unit::cuda_cores);
  const auto va = rl::vector_add(1 << 26, rl::Precision::fp32);
  const double floor = rl::time_floor_s(r, va.flops, va.bytes);
  EXPECT_DOUBLE_EQ(floor, va.bytes / 4.8e12);
  const rl::Assessment a = rl::assess(r, va.flops, va.bytes, 2 * floor);
  EXPECT_NEAR(a.pct_of_roof, 50.0, 1e-9);
  EXPECT_NEAR(a.achieved_bytes, 2.4e12, 1e3);
  EXPECT_EQ(a.bound, rl::Bound::memory);
  // Pure data movement (a transpose: no flops) still has a floor and a percentage.
  const rl::Assessment t = rl::assess(r, 0, 1e9, 1e9 / 4.8e12 / 0.8);
  EXPECT_NEAR(t.pct_of_roof, 80.0, 1e-9);
  EXPECT_EQ(t.ai, 0.0);
}

TEST(Roofline, MeasuredCeilingsReplaceDatasheet) {
  const DeviceSpec& h200 = klab::device_or_throw("h200");
  const rl::Measured m{{"copy", 4150.0}, {"read", 4330.0}, {"bf16_tc", 744.0}};
  const rl::Roof r = rl::make_roof(h200, rl::Precision::bf16, rl::Unit::tensor_cores, m);
  EXPECT_DOUBLE_EQ(r.bandwidth, 4150e9);
  EXPECT_DOUBLE_EQ(r.peak, 744e12);
  EXPECT_EQ(r.memory_label, "copy, measured");
  EXPECT_EQ(rl::make_roof(h200, rl::Precision::bf16, rl::Unit::tensor_cores, m, "read").bandwidth,
            4330e9);
  // No measured fp32 ceiling: the FFMA roof stays the datasheet's.
  EXPECT_DOUBLE_EQ(rl::make_roof(h200, rl::Precision::fp32, rl::Unit::cuda_cores, m).peak, 67e12);
}

TEST(Roofline, MissingUnitsAreUsageErrors) {
  EXPECT_THROW(
      rl::make_roof(klab::device_or_throw("a100"), rl::Precision::fp8, rl::Unit::tensor_cores),
      klab::UsageError);
  EXPECT_THROW(
      rl::make_roof(klab::device_or_throw("h200"), rl::Precision::fp4, rl::Unit::tensor_cores),
      klab::UsageError);
  EXPECT_GT(
      rl::make_roof(klab::device_or_throw("b200"), rl::Precision::fp4, rl::Unit::tensor_cores).peak,
      0);
}

TEST(Roofline, Verdicts) {
  EXPECT_EQ(rl::verdict(rl::Bound::memory, 95, 1e-3, 0.08, 206), "at the memory roof");
  EXPECT_EQ(rl::verdict(rl::Bound::memory, 77, 1e-3, 0.08, 206), "memory-bound, 23% short");
  EXPECT_EQ(rl::verdict(rl::Bound::compute, 60, 1e-3, 1365, 206), "compute-bound, 40% short");
  EXPECT_EQ(rl::verdict(rl::Bound::compute, 92, 1e-3, 300, 206),
            "at the compute roof (near the ridge)");
  EXPECT_NE(rl::verdict(rl::Bound::memory, 104, 1e-3, 0.1, 206).find("a bug to find"),
            std::string::npos);
  EXPECT_NE(rl::verdict(rl::Bound::memory, 20, 1e-6, 0.1, 206).find("latency-bound"),
            std::string::npos);
}

TEST(Roofline, UnitForFamilies) {
  EXPECT_EQ(rl::unit_for("hgemm", klab::DType::bf16, "bf16_tc"), rl::Unit::tensor_cores);
  EXPECT_EQ(rl::unit_for("hgemm", klab::DType::f16, ""), rl::Unit::tensor_cores);
  EXPECT_EQ(rl::unit_for("sgemm", klab::DType::f32, "fp32"), rl::Unit::cuda_cores);
  EXPECT_EQ(rl::unit_for("softmax", klab::DType::bf16, "copy"), rl::Unit::cuda_cores);
  EXPECT_EQ(rl::compute_ceiling_name(rl::Precision::bf16, rl::Unit::tensor_cores), "bf16_tc");
  EXPECT_EQ(rl::compute_ceiling_name(rl::Precision::fp8, rl::Unit::tensor_cores), "fp8_tc");
  EXPECT_EQ(rl::compute_ceiling_name(rl::Precision::bf16, rl::Unit::cuda_cores), "fp32");
}

TEST(Roofline, PrecisionNames) {
  EXPECT_EQ(rl::parse_precision("BF16"), rl::Precision::bf16);
  EXPECT_EQ(rl::parse_precision("e4m3"), rl::Precision::fp8);
  EXPECT_EQ(rl::parse_precision("fp64"), rl::Precision::fp64);
  EXPECT_THROW(rl::parse_precision("f33"), klab::UsageError);
  EXPECT_EQ(rl::precision_of(klab::DType::e5m2), rl::Precision::fp8);
}

TEST(Devices, LookupByKeyAliasAndCudaName) {
  EXPECT_EQ(klab::find_device("h200")->key, "h200");
  EXPECT_EQ(klab::find_device("H100-SXM")->key, "h100-sxm");
  EXPECT_EQ(klab::find_device("h100 sxm")->key, "h100-sxm");
  EXPECT_EQ(klab::find_device("h100_pcie")->key, "h100-pcie");
  EXPECT_EQ(klab::find_device("RTX-4090")->key, "rtx4090");
  EXPECT_EQ(klab::find_device("nosuchgpu"), nullptr);
  EXPECT_THROW(klab::device_or_throw("nosuchgpu"), klab::UsageError);

  // Names as cudaGetDeviceProperties reports them.
  auto key = [](const char* n) {
    const DeviceSpec* d = klab::device_for_cuda_name(n);
    return d ? d->key : std::string("none");
  };
  EXPECT_EQ(key("NVIDIA H200"), "h200");
  EXPECT_EQ(key("NVIDIA H100 80GB HBM3"), "h100-sxm");
  EXPECT_EQ(key("NVIDIA H100 PCIe"), "h100-pcie");
  EXPECT_EQ(key("NVIDIA A100-SXM4-80GB"), "a100-sxm");
  EXPECT_EQ(key("NVIDIA B200"), "b200");
  EXPECT_EQ(key("NVIDIA L4"), "l4");
  EXPECT_EQ(key("NVIDIA GeForce RTX 4090"), "rtx4090");
  // Different parts that share a chip name must not borrow another part's numbers.
  EXPECT_EQ(key("NVIDIA H200 NVL"), "none");
  EXPECT_EQ(key("NVIDIA H100 NVL"), "none");
  EXPECT_EQ(key("NVIDIA A100-SXM4-40GB"), "none");
  EXPECT_EQ(key("NVIDIA L40S"), "none");
  EXPECT_EQ(key("NVIDIA GH200 480GB"), "none");
}

TEST(Devices, TableIsComplete) {
  for (const auto& d : klab::device_table()) {
    EXPECT_FALSE(d.source.empty()) << d.key;
    EXPECT_GT(d.fp32, 0) << d.key;
    EXPECT_GT(d.bf16, d.fp32) << d.key;  // tensor cores beat FFMA on every chip here
    EXPECT_GT(d.memory_gbps, 0) << d.key;
    EXPECT_GT(d.sm_count, 0) << d.key;
    EXPECT_GT(d.l2_mib, 0) << d.key;
    EXPECT_GT(d.boost_mhz, 0) << d.key;
    // FP32 FFMA peak = SMs x lanes x 2 flops x boost clock, within rounding of the datasheet
    // (64 FP32 lanes per SM on sm_80, 128 on sm_89/90/100).
    const int lanes = d.arch == "sm_80" ? 64 : 128;
    EXPECT_NEAR(d.fp32, d.sm_count * lanes * 2 * d.boost_mhz * 1e-6, 0.03 * d.fp32) << d.key;
  }
  EXPECT_EQ(klab::datasheet_bandwidth_gbps("NVIDIA H200"), 4800);
  EXPECT_EQ(klab::datasheet_bandwidth_gbps("NVIDIA H100 PCIe"), 2000);
  EXPECT_EQ(klab::datasheet_bandwidth_gbps("Some Other GPU"), 0);
}

// Through the real CLI: the H200 table, and bad requests as one line with exit code 2.
namespace {

struct CliRun {
  int code;
  std::string out;
};

CliRun klab_run(const std::string& args) {
  const std::string cmd = std::string(KLAB_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace

TEST(RooflineCli, H200Table) {
  const CliRun r = klab_run("roofline --device h200 --dtype bf16");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("| GEMM | m=4096,n=4096,k=4096 | bf16 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| 1365 | bf16 tensor | 206 | compute |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| vector add |"), std::string::npos) << r.out;
}

TEST(RooflineCli, BadRequests) {
  for (const char* args : {"roofline --device nope", "roofline --device h200 --dtype f33",
                           "roofline --device a100 --dtype e4m3",
                           "roofline --device h200 --plot out.txt", "predict /no/such/file.json"}) {
    const CliRun r = klab_run(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << "\n" << r.out;
  }
}

// A ceiling is the best rate measured: 8d2d5de's GEMM run stamped a throttled bf16 ceiling
// (699.5 TFLOP/s, SM clock 1485 MHz) on its records; given fe9e36e's ceilings file as well
// (810.6), predict must use the higher, in whichever order the inputs come.
TEST(RooflineCli, HighestMeasuredCeilingWins) {
  const std::string run = klab::committed_table_path(
                        "results/h200/2026-11-30_8d2d5de_sgemm_v16_hgemm_v08/run_gemm.json"),
                    ceilings = klab::committed_table_path(
                        "results/h200/2026-11-30_fe9e36e_every_gpu_rung/ceilings.json");
  for (const std::string& args :
       {"predict " + run + " " + ceilings, "predict " + ceilings + " " + run}) {
    const CliRun r = klab_run(args);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("bf16 tensor 810.6 TFLOP/s"), std::string::npos) << args;
    EXPECT_EQ(r.out.find("bf16 tensor 699.5 TFLOP/s"), std::string::npos) << args;
  }
  const CliRun alone = klab_run("predict " + run);
  ASSERT_EQ(alone.code, 0) << alone.out;
  EXPECT_NE(alone.out.find("bf16 tensor 699.5 TFLOP/s"), std::string::npos);
  // Two runs whose records carry different stamps (fe9e36e's: 810.6): every record of either
  // is rated against the higher, in either order.
  const std::string run3 =
      klab::committed_table_path("results/h200/2026-11-30_fe9e36e_every_gpu_rung/run.json");
  for (const std::string& args : {"predict " + run + " " + run3, "predict " + run3 + " " + run}) {
    const CliRun r = klab_run(args);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("bf16 tensor 810.6 TFLOP/s"), std::string::npos) << args;
    EXPECT_EQ(r.out.find("bf16 tensor 699.5 TFLOP/s"), std::string::npos) << args;
  }
}
