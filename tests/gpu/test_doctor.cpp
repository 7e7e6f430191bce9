// klab doctor on the sabotage family: the diagnosis of each rung names its planted fault (and
// the correct rung gets a clean bill). The check's findings are computed in this process; the
// sanitizer and Nsight Compute parts run `klab doctor` (KLAB_BINARY) as a child, since they
// spawn tools over a klab process. A part whose tool is missing here is skipped, said so.
// Exit 77 (CTest: skipped) when there is no GPU.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <filesystem>
#include <cstdio>
#include <iostream>
#include <string>

#include "kernels/register.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/diagnosis.hpp"
#include "klab/harness/runner.hpp"

using namespace klab;

namespace {

// Smaller than the headline shape: the sanitizers run four times per doctor.
constexpr const char* kShape = "n=1048576";

struct Doctor {
  int code = -1;
  std::string text;
  bool has(const std::string& s) const { return text.find(s) != std::string::npos; }
  // The diagnosis line of `kind` ("race: ...") that contains `part`.
  bool finding(const std::string& kind, const std::string& part = "") const {
    size_t pos = 0;
    while ((pos = text.find("\n" + kind + ": ", pos)) != std::string::npos) {
      const size_t end = text.find('\n', pos + 1);
      if (text.substr(pos, end - pos).find(part) != std::string::npos) return true;
      pos = end;
    }
    return false;
  }
};

// The klab CLI: the one built beside this test binary (tests/ and apps/klab/ of one build tree,
// wherever it was moved), else the path compiled in.
std::string klab_binary() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto beside = self.parent_path().parent_path() / "apps" / "klab" / "klab";
    if (std::filesystem::exists(beside, ec)) return beside.string();
  }
  return KLAB_BINARY;
}

Doctor doctor(const std::string& variant) {
  const std::string cmd =
      "'" + klab_binary() + "' doctor " + variant + " --shape " + kShape + " 2>&1";
  Doctor d;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return d;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) d.text.append(buf.data(), n);
  const int status = pclose(p);
  d.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  d.text = "\n" + d.text;  // every line starts after a newline
  std::cout << "$ klab doctor " << variant << d.text << "\n";
  return d;
}

Result check(const std::string& id) {
  auto [f, v] = registry().variant(id);
  RunOptions opt;
  opt.bench = false;
  opt.dists = {Dist::normal};
  return run_variant(*f, *v, make_problem(*f, kShape, "f32"), opt);
}

// "memcheck   skipped: ..." on its own line.
bool skipped(const Doctor& d, const std::string& step) {
  const size_t a = d.text.find("\n" + step + " ");
  if (a == std::string::npos) return true;
  const size_t b = d.text.find('\n', a + 1);
  return d.text.substr(a, b - a).find("skipped") != std::string::npos;
}

}  // namespace

TEST(Doctor, SabotageIsLeftOutOfTheLadderTests) {
  const Family& f = registry().family("sabotage");
  EXPECT_TRUE(f.sabotaged);
  EXPECT_EQ(f.ladder.size(), 5u);
}

// In process: the check's findings (not v02: its misaligned load poisons this process's context).
TEST(Doctor, CheckFindingsInProcess) {
  const Result ok = check("sabotage.v00_correct");
  ASSERT_EQ(ok.status, "ok") << ok.reason;
  EXPECT_TRUE(ok.check.passed) << ok.check.summary();
  EXPECT_TRUE(diagnosis::check_findings(ok).empty());

  const Result nan = check("sabotage.v03_silent_nan");
  ASSERT_EQ(nan.status, "ok") << nan.reason;
  EXPECT_FALSE(nan.check.passed);
  bool named = false;
  for (const auto& f : diagnosis::check_findings(nan)) named |= f.kind == "nan";
  EXPECT_TRUE(named) << nan.check.summary();

  const Result slow = check("sabotage.v04_slow_uncoalesced");  // slow, but right
  ASSERT_EQ(slow.status, "ok") << slow.reason;
  EXPECT_TRUE(slow.check.passed) << slow.check.summary();
}

TEST(Doctor, CorrectRungIsClean) {
  const Doctor d = doctor("sabotage.v00_correct");
  EXPECT_EQ(d.code, 0) << d.text;
  EXPECT_TRUE(d.has("diagnosis: nothing found"));
}

TEST(Doctor, SharedMemoryRace) {
  const Doctor d = doctor("sabotage.v01_smem_race");
  EXPECT_EQ(d.code, 1) << d.text;
  if (skipped(d, "racecheck")) GTEST_SKIP() << "racecheck did not run here";
  // compute-sanitizer names the source file as the line table holds it (a build's relative path
  // or just the file name): the kernel and the file are what must be named.
  EXPECT_TRUE(d.finding("race", "sabotage_v01_kernel at ")) << d.text;
  EXPECT_TRUE(d.finding("race", "v01_smem_race.cu:")) << d.text;
}

TEST(Doctor, MisalignedVectorLoad) {
  const Doctor d = doctor("sabotage.v02_misaligned_vector");
  EXPECT_EQ(d.code, 1) << d.text;
  EXPECT_TRUE(d.finding("misaligned")) << d.text;  // the check's launch error says so
  if (skipped(d, "memcheck")) GTEST_SKIP() << "memcheck did not run here";
  // Where: memcheck's records of the same load. The kernel's first block also reads its left halo
  // 4 bytes before the allocation, so on the H200 memcheck files them as out-of-bounds reads
  // (the hardware's misaligned-address trap names the fault above).
  EXPECT_TRUE(d.finding("misaligned", "v02_misaligned_vector.cu:") ||
              d.finding("out-of-bounds", "sabotage_v02_kernel at "))
      << d.text;
  EXPECT_TRUE(d.has("v02_misaligned_vector.cu:")) << d.text;
}

TEST(Doctor, SilentNan) {
  const Doctor d = doctor("sabotage.v03_silent_nan");
  EXPECT_EQ(d.code, 1) << d.text;
  EXPECT_TRUE(d.finding("nan", "first at y ")) << d.text;
}

TEST(Doctor, UncoalescedAccesses) {
  const Doctor d = doctor("sabotage.v04_slow_uncoalesced");
  if (skipped(d, "ncu")) GTEST_SKIP() << "Nsight Compute did not run here";
  EXPECT_EQ(d.code, 1) << d.text;
  EXPECT_TRUE(d.finding("slow", "sectors per global load request in sabotage_v04_kernel"))
      << d.text;
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!device_info().present) {
    std::cout << "SKIPPED: no GPU (" << device_info().absent_reason << ")\n";
    return 77;
  }
  return RUN_ALL_TESTS();
}
