// The CPU ladder: every cpuNN rung and the OpenBLAS baseline checked at awkward shapes through
// run_variant (check on, bench off), at several thread counts; the thread-count setting; the
// partition helpers; `klab scaling` end to end.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/threads.hpp"
#include "kernels/register.hpp"
#include "klab/harness/runner.hpp"

using namespace klab;

namespace {

const char* const kRungs[] = {"cpu01_scalar", "cpu02_threads", "cpu03_openmp", "cpu04_simd",
                              "cpu05_threads_simd"};

const Family* find_family(const std::string& name) {
  for (const auto& f : registry().families())
    if (f.name == name) return &f;
  return nullptr;
}

Problem problem(const Family& f, const std::string& shape) { return make_problem(f, shape, "f32"); }

// Checks `id` at every shape, three input distributions, at each thread count (1: no partition;
// 3: uneven ranges on this 2-core machine; 4: a 2 x 2 grid for the GEMM).
void check_rung(const Family& f, const std::string& id, const std::vector<std::string>& shapes) {
  const Variant* v = f.find(id);
  ASSERT_NE(v, nullptr) << id << " is not registered";
  RunOptions opt;
  opt.bench = false;
  opt.dists = {Dist::normal, Dist::uniform, Dist::heavy};
  for (int threads : {1, 3, 4}) {
    cpu::ScopedThreadCount scope(threads);
    for (const auto& s : shapes) {
      const Problem p = problem(f, s);
      const Result r = run_variant(f, *v, p, opt);
      ASSERT_EQ(r.status, "ok") << id << " " << p.str() << " threads=" << threads << ": "
                                << r.reason;
      EXPECT_TRUE(r.checked);
      EXPECT_TRUE(r.check.passed) << id << " " << p.str() << " threads=" << threads << ": "
                                  << r.check.summary();
    }
  }
}

}  // namespace

TEST(CpuLadder, RungsAreRegisteredInOrderBeforeTheGpuRungs) {
  for (const char* name : {"vector_add", "reduce_sum", "sgemm"}) {
    const Family* f = find_family(name);
    if (!f) {
      ADD_FAILURE() << name << " is not registered";
      continue;
    }
    std::vector<std::string> want;
    for (const char* rung : kRungs) want.push_back(std::string(name) + "." + rung);
    if (std::string(name) == "sgemm") want.push_back("sgemm.baseline_openblas");
    std::vector<std::string> got;
    bool seen_gpu = false;
    for (const auto& v : f->ladder) {
      if (v.info.device == Device::gpu) seen_gpu = true;
      if (v.info.id.find(".cpu") == std::string::npos && v.info.id != "sgemm.baseline_openblas")
        continue;
      EXPECT_FALSE(seen_gpu) << v.info.id << " comes after a GPU rung";
      EXPECT_EQ(v.info.device, Device::cpu) << v.info.id;
      EXPECT_EQ(v.info.min_sm, 0) << v.info.id;
      got.push_back(v.info.id);
    }
    EXPECT_EQ(got, want) << name;
  }
  EXPECT_TRUE(find_family("sgemm")->find("sgemm.baseline_openblas")->info.baseline);
}

TEST(CpuLadder, VectorAddAtAwkwardSizes) {
  const Family* f = find_family("vector_add");
  ASSERT_NE(f, nullptr);
  for (const char* rung : kRungs)
    check_rung(*f, std::string("vector_add.") + rung, {"n=1", "n=33", "n=1000003"});
}

TEST(CpuLadder, ReduceSumAtAwkwardSizes) {
  const Family* f = find_family("reduce_sum");
  if (!f) GTEST_SKIP() << "reduce_sum is not registered in this build";
  for (const char* rung : kRungs)
    check_rung(*f, std::string("reduce_sum.") + rung, {"n=1", "n=33", "n=1000003"});
}

// 257 x 263 x 300 is large enough for cpu05 to use several threads (and two k-blocks of 256),
// with ragged tiles on every side.
TEST(CpuLadder, SgemmAtAwkwardShapes) {
  const Family* f = find_family("sgemm");
  ASSERT_NE(f, nullptr);
  for (const char* rung : kRungs)
    check_rung(*f, std::string("sgemm.") + rung,
               {"m=1,n=1,k=1", "m=33,n=65,k=17", "m=127,n=129,k=131", "m=257,n=263,k=300",
                "m=300,n=257,k=1"});
}

TEST(CpuLadder, OpenBlasBaseline) {
  const Family* f = find_family("sgemm");
  ASSERT_NE(f, nullptr);
  const Variant* v = f->find("sgemm.baseline_openblas");
  ASSERT_NE(v, nullptr);
  if (const Status st = can_run(*v, problem(*f, "m=1,n=1,k=1")); !st.ok()) {
    EXPECT_NE(st.reason.find("OpenBLAS"), std::string::npos) << st.reason;  // says why
    GTEST_SKIP() << st.reason;
  }
  check_rung(*f, v->info.id, {"m=1,n=1,k=1", "m=33,n=65,k=17", "m=127,n=129,k=131"});
}

// A rung that would take minutes says so instead of running.
TEST(CpuLadder, HugeProblemsAreRefusedWithAReason) {
  const Family* f = find_family("sgemm");
  ASSERT_NE(f, nullptr);
  cpu::ScopedThreadCount scope(2);
  const Problem big = problem(*f, "m=4096,n=4096,k=4096");
  for (const char* id :
       {"sgemm.cpu01_scalar", "sgemm.cpu02_threads", "sgemm.cpu03_openmp", "sgemm.cpu04_simd"}) {
    const Status st = can_run(*f->find(id), big);
    EXPECT_FALSE(st.ok()) << id;
    EXPECT_NE(st.reason.find("minutes"), std::string::npos) << st.reason;
  }
  EXPECT_TRUE(can_run(*f->find("sgemm.cpu05_threads_simd"), big).ok());
}

// The SIMD GEMM computes exactly the rectangle it is given: the threads' rectangles tile C.
TEST(CpuLadder, GemmBlockWritesOnlyItsRectangle) {
  const int64_t m = 37, n = 41, k = 19;
  std::vector<float> a(m * k), b(k * n), c(m * n, 7.f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(i % 7) - 3.f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = float(i % 5) - 2.f;
  const cpu::simd::GemmArgs g{a.data(), b.data(), c.data(), m, n, k, 1.f, 0.f};
  cpu::simd::gemm_block(g, 5, 30, 3, 40);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 7;
      if (i >= 5 && i < 30 && j >= 3 && j < 40) {
        want = 0;
        for (int64_t kk = 0; kk < k; ++kk)
          want += double(a[i * k + kk]) * b[kk * n + j];  // small integers: exact
      }
      ASSERT_EQ(c[i * n + j], want) << i << "," << j;
    }
}

TEST(CpuThreads, OverrideAndRestore) {
  const int before = cpu::thread_count();
  EXPECT_GE(before, 1);
  {
    cpu::ScopedThreadCount outer(3);
    EXPECT_EQ(cpu::thread_count(), 3);
    {
      cpu::ScopedThreadCount inner(5);
      EXPECT_EQ(cpu::thread_count(), 5);
    }
    EXPECT_EQ(cpu::thread_count(), 3);
    EXPECT_EQ(cpu::threads_for(int64_t(1) << 30, 1), 3);  // capped by the setting
    EXPECT_EQ(cpu::threads_for(10, 1000), 1);             // too little work to share
  }
  EXPECT_EQ(cpu::thread_count(), before);
}

TEST(CpuThreads, RunThreadsUsesDistinctThreadsAndRethrows) {
  std::array<std::thread::id, 5> ids{};
  cpu::run_threads(5, [&](int t) { ids[static_cast<size_t>(t)] = std::this_thread::get_id(); });
  EXPECT_EQ(std::set<std::thread::id>(ids.begin(), ids.end()).size(), 5u);
  EXPECT_EQ(ids[0], std::this_thread::get_id());  // the caller is worker 0
  EXPECT_THROW(cpu::run_threads(3,
                                [](int t) {
                                  if (t == 2) throw std::runtime_error("worker 2");
                                }),
               std::runtime_error);
}

TEST(CpuThreads, SplitCoversTheRangeOnAlignedBoundaries) {
  for (int64_t n : {int64_t(1), int64_t(33), int64_t(1000003)})
    for (int parts : {1, 2, 3, 7, 64})
      for (int64_t align : {int64_t(1), int64_t(6), int64_t(16)}) {
        int64_t next = 0;
        for (int t = 0; t < parts; ++t) {
          const cpu::Range r = cpu::split(n, parts, t, align);
          EXPECT_EQ(r.begin, next) << n << " " << parts << " " << align;
          EXPECT_LE(r.begin, r.end);
          if (r.end < n) {
            EXPECT_EQ(r.end % align, 0);
          }
          next = r.end;
        }
        EXPECT_EQ(next, n) << n << " " << parts << " " << align;
      }
}

namespace {

struct Shell {
  int code;
  std::string out;
};

// Runs a shell command; returns its exit code and stdout.
Shell sh(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 512> buf{};
  while (fgets(buf.data(), buf.size(), p)) out += buf.data();
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace

// KLAB_CPU_THREADS sets the default maximum; every thread count up to it is measured and recorded.
TEST(CpuScaling, EnvironmentSetsTheThreadCountsAndJsonRecordsThem) {
  const std::string json = ::testing::TempDir() + "klab_scaling_test.json";
  const Shell r =
      sh("KLAB_CPU_THREADS=3 " + std::string(KLAB_BINARY) +
         " scaling vector_add.cpu05_threads_simd --shape n=300007 --max-time 0.05 --quiet --json " +
         json + " 2>&1");
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(json);
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_EQ(j.size(), 3u) << r.out;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(j[i]["cpu_threads"], i + 1);
    EXPECT_EQ(j[i]["status"], "ok");
    EXPECT_TRUE(j[i]["check"]["passed"].get<bool>());
  }
  std::remove(json.c_str());
}

TEST(CpuScaling, BadRequestsAreOneLineAndExitTwo) {
  for (const std::string& args :
       {"KLAB_CPU_THREADS=zero " + std::string(KLAB_BINARY) + " scaling sgemm.cpu05_threads_simd",
        std::string(KLAB_BINARY) + " scaling sgemm.cpu01_scalar --shape m=4096,n=4096,k=4096",
        std::string(KLAB_BINARY) + " scaling vector_add.v01_naive --shape n=5",
        std::string(KLAB_BINARY) + " scaling vector_add.cpu04_simd --shape n=5 --plot x.png"}) {
    const Shell r = sh(args + " 2>&1 >/dev/null");  // stderr only
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << "\n" << r.out;
  }
}
