// Device memory on the CPU: the arithmetic of tensors and workspace, the refusal of a problem
// that does not fit the device's free memory (the free memory faked through the probe seam, the
// device made up), the record's JSON both ways (old records without it included) and the tables.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/register.hpp"
#include "klab/harness/device_memory.hpp"
#include "klab/harness/registry.hpp"
#include "klab/harness/result.hpp"
#include "klab/harness/runner.hpp"

using namespace klab;

namespace {

constexpr int64_t kGiB = int64_t(1) << 30;
constexpr int64_t kMiB = int64_t(1) << 20;

// Puts a fake probe in place for one test, and the one before it back afterwards.
class ProbeGuard {
 public:
  explicit ProbeGuard(DeviceMemoryProbe probe) : old_(set_device_memory_probe(std::move(probe))) {}
  ~ProbeGuard() { set_device_memory_probe(std::move(old_)); }

 private:
  DeviceMemoryProbe old_;
};

DeviceMemoryProbe free_memory(int64_t free, int64_t total = 8 * kGiB) {
  return [=] { return DeviceMemoryInfo{true, free, total}; };
}

// A family of two tensors of different element sizes: x (f32, n) in, y (bf16, 3n) out.
Family two_tensor_family() {
  Family f;
  f.name = "memtest";
  f.dims = {"n"};
  f.dtypes = {DType::f32};
  f.tensors = [](const Problem& p) {
    return std::vector<TensorSpec>{{"x", DType::f32, p.dim("n"), Role::input},
                                   {"y", DType::bf16, 3 * p.dim("n"), Role::output}};
  };
  return f;
}

Problem problem_n(int64_t n, int64_t misalign = 0) {
  Problem p;
  p.family = "memtest";
  p.shape = parse_shape("n=" + std::to_string(n));
  p.dtype = DType::f32;
  p.misalign = misalign;
  return p;
}

// A GPU variant whose workspace is `workspace` bytes and whose own can_implement refuses with
// "own reason" when `refuses`.
Variant gpu_variant(int64_t workspace, bool refuses = false) {
  Variant v = gpu_variant_of("memtest.v01_test", "test", 80, {DType::f32},
                             [](const Problem&, Buffers&, const LaunchArgs&) {});
  v.workspace_bytes = [workspace](const Problem&) { return static_cast<size_t>(workspace); };
  if (refuses) v.can_implement = [](const Problem&) { return Status::no("own reason"); };
  return v;
}

DeviceInfo made_up_h200() {
  DeviceInfo d;
  d.present = true;
  d.name = "made-up sm_90 device";
  d.cc_major = 9;
  d.cc_minor = 0;
  return d;
}

}  // namespace

TEST(DeviceMemory, TensorsAndWorkspaceAddUp) {
  const Family f = two_tensor_family();
  EXPECT_EQ(tensor_bytes(f, problem_n(1000)), 1000 * 4 + 3000 * 2);
  // --misalign shifts each tensor's base by that many of its elements: allocated too.
  EXPECT_EQ(tensor_bytes(f, problem_n(1000, 3)), 1003 * 4 + 3003 * 2);
  const DeviceMemory m = memory_need(f, gpu_variant(4096), problem_n(1000));
  EXPECT_EQ(m.tensors, 10000);
  EXPECT_EQ(m.workspace, 4096);
  EXPECT_EQ(m.needed(), 14096);
  EXPECT_FALSE(m.peak_measured);
  Variant none = gpu_variant(0);
  none.workspace_bytes = nullptr;
  EXPECT_EQ(memory_need(f, none, problem_n(1000)).workspace, 0);
}

// Attention's materialised rung: B·Hq·Nq·Nkv fp32 scores beside Q, K, V, O (bf16) and the lse.
TEST(DeviceMemory, MaterialisedAttentionNeedsItsScores) {
  const auto& reg = registry();
  const Family& f = reg.family("attention");
  const Variant* v01 = f.find("attention.v01_materialised");
  if (!v01) GTEST_SKIP() << "attention.v01_materialised is not built here (no CUDA)";
  const Problem p = make_problem(f, "b=1,nq=1024,nkv=1024,hq=32,hkv=32,d=128,causal=1", "bf16");
  const DeviceMemory m = memory_need(f, *v01, p);
  EXPECT_EQ(m.workspace, 4 * 32 * kMiB);                            // 4 bytes x 32 heads x 1024^2
  EXPECT_EQ(m.tensors, 4 * (1024 * 32 * 128 * 2) + 32 * 1024 * 4);  // q, k, v, o; lse
}

TEST(DeviceMemory, FitsOnlyWithinTheFreeMemory) {
  DeviceMemory m;
  m.tensors = 2 * kGiB;
  m.workspace = 512 * kGiB;
  EXPECT_TRUE(fits_in_free_memory(m, DeviceMemoryInfo{}).ok()) << "unknown free memory: no refusal";
  EXPECT_TRUE(fits_in_free_memory(m, {true, 514 * kGiB, 600 * kGiB}).ok()) << "exactly the need";
  const Status no = fits_in_free_memory(m, {true, 514 * kGiB - 1, 600 * kGiB});
  ASSERT_FALSE(no.ok());
  const Status h200 = fits_in_free_memory(m, {true, 139 * kGiB + kGiB / 2, 140 * kGiB});
  EXPECT_EQ(
      h200.reason,
      "does not fit: needs 514.0 GiB (tensors 2.0 GiB + workspace 512.0 GiB), 139.5 GiB free");
}

// The refusal run_variant makes before allocating, with the device's free memory faked: one line,
// the record's memory filled, nothing measured; the harness's refusal comes before the rung's own.
TEST(DeviceMemory, ProblemAboveTheFreeMemoryIsRefusedBeforeAllocation) {
  const Family f = two_tensor_family();
  const Problem p = problem_n(1000);
  const DeviceInfo dev = made_up_h200();
  {
    ProbeGuard fake(free_memory(kGiB));
    Result r;
    const Status st = refuse_before_allocation(f, gpu_variant(2 * kGiB, true), p, dev, r);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.reason.rfind("does not fit: needs 2.0 GiB", 0), 0u) << st.reason;
    EXPECT_NE(st.reason.find("1.0 GiB free"), std::string::npos) << st.reason;
    EXPECT_EQ(st.reason.find('\n'), std::string::npos) << "one line";
    ASSERT_TRUE(r.device_memory);
    EXPECT_EQ(r.device_memory->tensors, 10000);
    EXPECT_EQ(r.device_memory->workspace, 2 * kGiB);
    EXPECT_EQ(r.device_memory->free, kGiB);
    EXPECT_FALSE(r.device_memory->peak_measured);
    EXPECT_NE(r.device_memory->method.find("refused before allocation"), std::string::npos);
  }
  {
    ProbeGuard fake(free_memory(4 * kGiB));  // it fits: the rung's own can_implement decides
    Result r;
    EXPECT_EQ(refuse_before_allocation(f, gpu_variant(2 * kGiB, true), p, dev, r).reason,
              "own reason");
    Result ok;
    EXPECT_TRUE(refuse_before_allocation(f, gpu_variant(2 * kGiB), p, dev, ok).ok());
    ASSERT_TRUE(ok.device_memory);
    EXPECT_EQ(ok.device_memory->free, 4 * kGiB);
  }
  {
    // A workspace that cannot be computed for the problem leaves the decision to can_implement.
    ProbeGuard fake(free_memory(1));
    Variant v = gpu_variant(0, true);
    v.workspace_bytes = [](const Problem&) -> size_t { throw std::runtime_error("no plan"); };
    Result r;
    EXPECT_EQ(refuse_before_allocation(f, v, p, dev, r).reason, "own reason");
  }
  {
    // A device too old is said before memory is looked at; no device: the rung's reason first.
    ProbeGuard fake(free_memory(1));
    DeviceInfo old = dev;
    old.cc_major = 7;
    Result r;
    EXPECT_EQ(refuse_before_allocation(f, gpu_variant(kGiB), p, old, r).reason,
              "needs sm_80, device is sm_70");
    DeviceInfo none;
    none.absent_reason = "no CUDA device";
    EXPECT_EQ(refuse_before_allocation(f, gpu_variant(kGiB, true), p, none, r).reason,
              "own reason");
    EXPECT_EQ(refuse_before_allocation(f, gpu_variant(kGiB), p, none, r).reason, "no CUDA device");
  }
}

// The peak is the largest rise of the used memory over the first sample, wherever it fell.
TEST(DeviceMemory, WatchKeepsTheLargestRise) {
  const int64_t total = 100 * kGiB;
  std::vector<int64_t> used{10 * kGiB, 30 * kGiB, 20 * kGiB, 25 * kGiB};
  size_t next = 0;
  ProbeGuard fake([&] { return DeviceMemoryInfo{true, total - used.at(next++), total}; });
  MemoryWatch w;
  EXPECT_EQ(w.free_before(), 90 * kGiB);
  EXPECT_EQ(w.peak_rise(), 0);
  w.sample();
  w.sample();
  w.sample();
  EXPECT_EQ(w.peak_rise(), 20 * kGiB);
  // Used memory that fell below the first sample (another process freed some) is no rise.
  std::vector<int64_t> falling{10 * kGiB, 5 * kGiB};
  size_t k = 0;
  ProbeGuard fall([&] { return DeviceMemoryInfo{true, total - falling.at(k++), total}; });
  MemoryWatch f;
  f.sample();
  EXPECT_EQ(f.peak_rise(), 0);
  ProbeGuard unknown([] { return DeviceMemoryInfo{}; });
  MemoryWatch u;
  EXPECT_FALSE(u.known());
  EXPECT_EQ(u.free_before(), -1);
}

TEST(DeviceMemory, UnitsReadAsTheyShould) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(768), "768 B");
  EXPECT_EQ(format_bytes(512 * 1024), "512.0 KiB");
  EXPECT_EQ(format_bytes(32 * kMiB + 128 * 1024), "32.1 MiB");
  EXPECT_EQ(format_bytes(128 * kGiB), "128.0 GiB");
  EXPECT_EQ(format_gib(double(kGiB) * 1.5), "1.5 GiB");
}

namespace {

Result memory_record(const std::string& variant, int64_t n, int64_t tensors, int64_t workspace,
                     std::optional<int64_t> peak, const std::string& status = "ok",
                     const std::string& reason = "") {
  Result r;
  r.variant = variant;
  r.family = "attention";
  r.problem.family = "attention";
  r.problem.shape = parse_shape("b=1,nq=" + std::to_string(n) + ",nkv=" + std::to_string(n));
  r.problem.dtype = DType::bf16;
  r.device_kind = "gpu";
  r.status = status;
  r.reason = reason;
  r.timestamp = "2026-12-03T00:00:00Z";
  DeviceMemory m;
  m.tensors = tensors;
  m.workspace = workspace;
  m.free = 139 * kGiB;
  m.peak_measured = peak;
  m.method = peak ? std::string(kPeakMethod) : "refused before allocation";
  r.device_memory = m;
  return r;
}

}  // namespace

TEST(DeviceMemory, RecordRoundTripsAndOldRecordsLoad) {
  const Result r =
      memory_record("attention.v01_materialised", 1024, 32 * kMiB, 128 * kMiB, 162 * kMiB);
  const nlohmann::json j = to_json(r);
  ASSERT_TRUE(j.contains("device_memory"));
  EXPECT_EQ(j["device_memory"]["needed"].get<int64_t>(), 160 * kMiB);
  const Result back = result_from_json(nlohmann::json::parse(j.dump()));
  ASSERT_TRUE(back.device_memory);
  EXPECT_EQ(back.device_memory->tensors, 32 * kMiB);
  EXPECT_EQ(back.device_memory->workspace, 128 * kMiB);
  EXPECT_EQ(back.device_memory->free, 139 * kGiB);
  ASSERT_TRUE(back.device_memory->peak_measured);
  EXPECT_EQ(*back.device_memory->peak_measured, 162 * kMiB);
  EXPECT_EQ(back.device_memory->method, std::string(kPeakMethod));

  // A refused record: no peak, and none made up on the way back.
  const Result refused = memory_record("attention.v01_materialised", 65536, 2 * kGiB, 512 * kGiB,
                                       std::nullopt, "skipped", "does not fit: needs 514.0 GiB");
  const nlohmann::json rj = to_json(refused);
  EXPECT_FALSE(rj["device_memory"].contains("peak_measured"));
  EXPECT_FALSE(result_from_json(rj).device_memory->peak_measured);

  // A record written before device memory was kept loads without it (and writes none back).
  const nlohmann::json old = nlohmann::json::parse(
      R"({"variant":"vector_add.v03_vectorized","family":"vector_add","problem":"n=1024",)"
      R"("dtype":"f32","status":"ok","timestamp":"2026-01-01T00:00:00Z","flops":1024,)"
      R"("bytes":12288,"mode":"cold","samples_ms":[0.5],"median_ms":0.5})");
  const Result o = result_from_json(old);
  EXPECT_FALSE(o.device_memory);
  EXPECT_FALSE(to_json(o).contains("device_memory"));
}

TEST(DeviceMemory, TableShowsPeakRatioExtraAndRefusals) {
  const std::vector<Result> rs{
      memory_record("attention.v01_materialised", 1024, 32 * kMiB, 128 * kMiB, 162 * kMiB),
      memory_record("attention.v04_fa3_wgmma", 1024, 32 * kMiB, 0, 34 * kMiB),
      memory_record("attention.v01_materialised", 65536, 2 * kGiB, 512 * kGiB, std::nullopt,
                    "skipped",
                    "does not fit: needs 514.0 GiB (tensors 2.0 GiB + workspace 512.0 GiB), "
                    "139.0 GiB free"),
      memory_record("attention.v04_fa3_wgmma", 65536, 2 * kGiB, 0, 2 * kGiB + 4 * kMiB)};
  const std::string md = memory_table(rs, true);
  EXPECT_NE(md.find("| variant | problem | tensors | workspace | peak measured | peak / tensors"),
            std::string::npos)
      << md;
  // 162 MiB over 32 MiB of tensors: 5.06x, 130 MiB of extra memory.
  EXPECT_NE(md.find("| 32.0 MiB | 128.0 MiB | 162.0 MiB | 5.06x | 130.0 MiB |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| 32.0 MiB | 0 B | 34.0 MiB | 1.06x | 2.0 MiB |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 2.0 GiB | 512.0 GiB | - | - | - | skipped: does not fit: needs 514.0 GiB"),
            std::string::npos)
      << md;
  const std::string text = memory_table(rs, false);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 5) << text;  // head + 4 rows
  const std::string pivot = memory_by_problem(rs);
  EXPECT_NE(pivot.find("| problem | attention.v01_materialised | attention.v04_fa3_wgmma |"),
            std::string::npos)
      << pivot;
  EXPECT_NE(pivot.find("| does not fit (needs 514.0 GiB) | 2.0 GiB |"), std::string::npos) << pivot;
  // Records without device memory (CPU rungs, older records) stay out of both tables.
  Result cpu = rs[0];
  cpu.device_memory.reset();
  EXPECT_EQ(memory_table({cpu}, true).find("attention"), std::string::npos);
  EXPECT_EQ(memory_by_problem({cpu, rs[1]}), "") << "one variant: no pivot";
}
