// klab tune: tune tables (round trip through the cache directory), the lookup order a tunable
// variant follows (cache, committed table, built-in guess), the registrations of sgemm v10,
// transpose v06 and hgemm v07, and the CLI's bad requests.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "kernels/hgemm/tune.hpp"
#include "kernels/register.hpp"
#include "kernels/sgemm/tune.hpp"
#include "kernels/sgemm/tune_multistage.hpp"
#include "kernels/transpose/tune.hpp"
#include "kernels/transpose/tune_occupancy.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/tunable.hpp"
#include "klab/harness/tune_table.hpp"
#include "klab/harness/tuned_lookup.hpp"

namespace fs = std::filesystem;
using namespace klab;

namespace {

// A fresh directory, used as $KLAB_CACHE_DIR for the test's lifetime.
class TuneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("klab-tune-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    if (const char* old = std::getenv("KLAB_CACHE_DIR")) old_ = old, had_old_ = true;
    ::setenv("KLAB_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (had_old_)
      ::setenv("KLAB_CACHE_DIR", old_.c_str(), 1);
    else
      ::unsetenv("KLAB_CACHE_DIR");
    fs::remove_all(dir_);
  }
  fs::path dir_;
  std::string old_;
  bool had_old_ = false;
};

TuneEntry entry(const std::string& device, const std::string& cls, const std::string& name,
                int config = 0) {
  TuneEntry e;
  e.device = device;
  e.variant = "fam.v01_tunable";
  e.shape_class = cls;
  e.config = config;
  e.config_name = name;
  e.median_ms = 1.25;
  e.problem = "n=4096 f32";
  e.timestamp = "2025-01-01T00:00:00Z";
  e.git_sha = "abc";
  return e;
}

const std::vector<std::string> kConfigs{"a", "b", "c", "d"};

}  // namespace

TEST_F(TuneTest, CachePathFollowsCacheDirAndDeviceName) {
  EXPECT_EQ(klab_cache_dir(), dir_.string());
  EXPECT_EQ(tune_cache_path("NVIDIA H200"), (dir_ / "tune-NVIDIA_H200.json").string());
  EXPECT_EQ(config_variant_id("sgemm.v10_autotuned", 3), "sgemm.v10_autotuned[cfg3]");
}

TEST_F(TuneTest, TableRoundTripAndReplace) {
  const std::string path = tune_cache_path("NVIDIA H200");
  EXPECT_TRUE(load_tune_table(path, true).entries.empty());  // missing file: empty table
  record_tune_entry(entry("NVIDIA H200", "large", "b", 1), path);
  record_tune_entry(entry("NVIDIA H200", "small", "c", 2), path);
  ASSERT_TRUE(fs::exists(path));
  TuneTable t = load_tune_table(path, true);
  ASSERT_EQ(t.entries.size(), 2u);
  const TuneEntry* e = t.find("NVIDIA H200", "fam.v01_tunable", "large");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->config_name, "b");
  EXPECT_EQ(e->config, 1);
  EXPECT_DOUBLE_EQ(e->median_ms, 1.25);
  EXPECT_EQ(e->problem, "n=4096 f32");
  EXPECT_EQ(e->timestamp, "2025-01-01T00:00:00Z");
  EXPECT_EQ(e->git_sha, "abc");
  EXPECT_EQ(t.find("NVIDIA H100", "fam.v01_tunable", "large"), nullptr);
  EXPECT_EQ(t.find("NVIDIA H200", "fam.v02_other", "large"), nullptr);

  // Same device, variant and class: replaced, the others kept.
  record_tune_entry(entry("NVIDIA H200", "large", "d", 3), path);
  t = load_tune_table(path, true);
  ASSERT_EQ(t.entries.size(), 2u);
  EXPECT_EQ(t.find("NVIDIA H200", "fam.v01_tunable", "large")->config_name, "d");
  EXPECT_EQ(t.find("NVIDIA H200", "fam.v01_tunable", "small")->config_name, "c");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST_F(TuneTest, CorruptTableIsEmptyForLookupsAndAnErrorForWrites) {
  const std::string path = (dir_ / "bad.json").string();
  std::ofstream(path) << "{ not json";
  EXPECT_TRUE(load_tune_table(path).entries.empty());
  EXPECT_THROW(load_tune_table(path, true), UsageError);
  EXPECT_THROW(record_tune_entry(entry("X", "large", "a"), path), UsageError);
  std::ofstream(path) << R"({"entries": [{"device": "X"}]})";  // an entry lacking fields
  EXPECT_TRUE(load_tune_table(path).entries.empty());
}

TEST_F(TuneTest, LookupOrderCacheThenCommittedThenBuiltIn) {
  const std::string cache = tune_cache_path("Dev"), committed = (dir_ / "committed.json").string();
  const std::vector<TuneSource> sources{{"cache", cache}, {"committed", committed}};
  auto pick = [&](const std::string& cls, const std::function<bool(int)>& usable = {}) {
    return pick_tuned(tune_candidates(sources, "Dev", "fam.v01_tunable", cls, kConfigs, 0), usable);
  };

  // Nothing stored: the built-in guess.
  TunedChoice c = pick("large");
  EXPECT_EQ(c.config, 0);
  EXPECT_EQ(c.source, "built-in");
  EXPECT_EQ(c.describe(), "built-in");

  // Committed only.
  record_tune_entry(entry("Dev", "large", "c"), committed);
  c = pick("large");
  EXPECT_EQ(c.config, 2);
  EXPECT_EQ(c.source, "committed");
  EXPECT_EQ(c.path, committed);

  // The cache wins over the committed table.
  record_tune_entry(entry("Dev", "large", "b"), cache);
  c = pick("large");
  EXPECT_EQ(c.config, 1);
  EXPECT_EQ(c.source, "cache");
  EXPECT_EQ(c.describe(), "cache (" + cache + ")");

  // A cached choice that cannot run the problem falls through to the committed one, then to
  // the built-in one.
  c = pick("large", [](int i) { return i != 1; });
  EXPECT_EQ(c.source, "committed");
  c = pick("large", [](int i) { return i == 0; });
  EXPECT_EQ(c.source, "built-in");
  // Nothing usable: the built-in one anyway (its can_implement then says why).
  c = pick("large", [](int) { return false; });
  EXPECT_EQ(c.source, "built-in");

  // Other shape classes, devices and variants do not match.
  EXPECT_EQ(pick("small").source, "built-in");
  EXPECT_EQ(
      pick_tuned(tune_candidates(sources, "Other", "fam.v01_tunable", "large", kConfigs, 3), {})
          .config,
      3);
  EXPECT_EQ(
      pick_tuned(tune_candidates(sources, "Dev", "fam.v02_other", "large", kConfigs, 3), {}).config,
      3);
  // No device (no GPU): tables are not consulted.
  EXPECT_EQ(
      pick_tuned(tune_candidates(sources, "", "fam.v01_tunable", "large", kConfigs, 3), {}).source,
      "built-in");

  // A stale entry (a configuration name no longer in the list) is skipped.
  record_tune_entry(entry("Dev", "large", "renamed"), cache);
  c = pick("large");
  EXPECT_EQ(c.source, "committed");
  EXPECT_EQ(c.config, 2);

  // The full candidate list, in order.
  record_tune_entry(entry("Dev", "large", "d"), cache);
  const auto all = tune_candidates(sources, "Dev", "fam.v01_tunable", "large", kConfigs, 0);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].source, "cache");
  EXPECT_EQ(all[0].config, 3);
  EXPECT_EQ(all[1].source, "committed");
  EXPECT_EQ(all[2].source, "built-in");
}

TEST_F(TuneTest, DefaultSourcesAreCacheThenSourceTree) {
  const auto s = default_tune_sources("NVIDIA H200", sgemm::kCommittedTable);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].label, "cache");
  EXPECT_EQ(s[0].path, tune_cache_path("NVIDIA H200"));
  EXPECT_EQ(s[1].label, "committed");
  EXPECT_EQ(fs::path(s[1].path), fs::path(committed_table_path("kernels/sgemm/tuned.json")));
  // The committed sgemm table exists and parses.
  EXPECT_TRUE(fs::exists(s[1].path)) << s[1].path;
  EXPECT_NO_THROW(load_tune_table(s[1].path, true));
}

// The tunable's committed table exists and parses; every entry it holds for the tunable names a
// configuration of its space (the table is shared with the family's other tunables).
static void expect_committed_entries_in_space(const Tunable& t) {
  const std::string committed = committed_table_path(t.committed_table);
  ASSERT_TRUE(fs::exists(committed)) << committed;
  int mine = 0;
  for (const TuneEntry& e : load_tune_table(committed, true).entries) {
    if (e.variant != t.variant) continue;
    ++mine;
    EXPECT_NE(std::find(t.configs.begin(), t.configs.end(), e.config_name), t.configs.end())
        << e.config_name;
  }
  EXPECT_GT(mine, 0) << "no committed entry for " << t.variant;
}

TEST_F(TuneTest, SgemmV10IsTunable) {
  registry();  // registers the tunables
  const Tunable* t = registry().tunable(sgemm::kV10Id);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(registry().tunable("sgemm.v09_warptile"), nullptr);
  ASSERT_EQ(static_cast<int>(t->configs.size()), sgemm::kTuneSpaceSize);
  EXPECT_EQ(std::set<std::string>(t->configs.begin(), t->configs.end()).size(), t->configs.size());
  EXPECT_EQ(t->configs[0], sgemm::kTuneSpace[0].name());
  EXPECT_EQ(t->committed_table, "kernels/sgemm/tuned.json");

  Problem p = registry().family("sgemm").headline.front();
  for (int i = 0; i < sgemm::kTuneSpaceSize; ++i) EXPECT_TRUE(t->can_implement(i, p).ok()) << i;
  EXPECT_FALSE(t->can_implement(sgemm::kTuneSpaceSize, p).ok());
  EXPECT_FALSE(t->can_implement(-1, p).ok());
  // m beyond 65535 row tiles of 32: no configuration fits gridDim.y.
  p.shape.dims = {{"m", 65535LL * 256 + 1}, {"n", 64}, {"k", 1}};
  for (int i = 0; i < sgemm::kTuneSpaceSize; ++i) EXPECT_FALSE(t->can_implement(i, p).ok()) << i;
}

TEST_F(TuneTest, SgemmV17IsTunableOverV16Entries) {
  registry();
  const Tunable* t = registry().tunable(sgemm::kV17Id);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(static_cast<int>(t->configs.size()), sgemm::kSpreadSpaceSize);
  // Its entries are v16's, named as v16 names them plus the refill's first k-step when it is not
  // 0; entry 0 is v16's committed shape.
  EXPECT_EQ(std::set<std::string>(t->configs.begin(), t->configs.end()).size(), t->configs.size());
  for (int i = 0; i < sgemm::kSpreadSpaceSize; ++i) {
    const sgemm::SpreadEntry& e = sgemm::kSpreadEntries[i];
    EXPECT_GE(e.from, 0) << i;
    EXPECT_LE(e.from, sgemm::kMultistageSpace[e.entry].block_k - 2) << i;
    EXPECT_TRUE(t->configs[i].starts_with(sgemm::kMultistageSpace[e.entry].name())) << i;
  }
  EXPECT_EQ(t->configs[0], "128x256x8_w64x64_t8x16_s3_b1");
  EXPECT_EQ(t->configs[2], "128x256x8_w64x64_t8x16_s3_b1_c6");
  EXPECT_EQ(t->committed_table, "kernels/sgemm/tuned.json");
  Problem p = registry().family("sgemm").headline.front();
  for (int i = 0; i < sgemm::kSpreadSpaceSize; ++i) EXPECT_TRUE(t->can_implement(i, p).ok()) << i;
  EXPECT_FALSE(t->can_implement(sgemm::kSpreadSpaceSize, p).ok());
  EXPECT_FALSE(t->can_implement(-1, p).ok());
  // The grid rules are v16's (v09's fallback grid included).
  p.shape.dims = {{"m", 65535LL * 128 + 1}, {"n", 64}, {"k", 3}};
  for (int i = 0; i < sgemm::kSpreadSpaceSize; ++i) EXPECT_FALSE(t->can_implement(i, p).ok()) << i;
  expect_committed_entries_in_space(*t);
}

TEST_F(TuneTest, SgemmV18IsTunableOverV16Shapes) {
  registry();
  const Tunable* t = registry().tunable(sgemm::kV18Id);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(static_cast<int>(t->configs.size()), sgemm::kTmaSpaceSize);
  // Its entries are v16's tile shapes with v18's ring depth for the stage count.
  EXPECT_EQ(std::set<std::string>(t->configs.begin(), t->configs.end()).size(), t->configs.size());
  for (int i = 0; i < sgemm::kTmaSpaceSize; ++i) {
    const sgemm::TmaEntry& e = sgemm::kTmaEntries[i];
    const sgemm::MultistageTuneConfig& c = sgemm::kMultistageSpace[e.entry];
    EXPECT_GE(e.stages, 2) << i;
    EXPECT_TRUE(c.block_k % 8 == 0 && c.block_k <= 32) << i;  // the producers' A copies
    EXPECT_EQ(c.threads, 256) << i;                           // two consumer warpgroups
    EXPECT_LT(e.probe, c.block_k - 1) << i;  // the probe comes before the last k-step
    EXPECT_TRUE(t->configs[i].find("_r" + std::to_string(e.stages)) != std::string::npos) << i;
    EXPECT_EQ(t->configs[i].ends_with("_p" + std::to_string(e.probe)), e.probe >= 0) << i;
  }
  EXPECT_EQ(t->configs[0], "128x256x8_w64x64_t8x16_r4");
  EXPECT_EQ(t->committed_table, "kernels/sgemm/tuned.json");
  Problem p = registry().family("sgemm").headline.front();
  for (int i = 0; i < sgemm::kTmaSpaceSize; ++i) EXPECT_TRUE(t->can_implement(i, p).ok()) << i;
  EXPECT_FALSE(t->can_implement(sgemm::kTmaSpaceSize, p).ok());
  EXPECT_FALSE(t->can_implement(-1, p).ok());
  p.shape.dims = {{"m", 65535LL * 128 + 1}, {"n", 64}, {"k", 3}};
  for (int i = 0; i < sgemm::kTmaSpaceSize; ++i) EXPECT_FALSE(t->can_implement(i, p).ok()) << i;
  expect_committed_entries_in_space(*t);
}

TEST_F(TuneTest, SgemmV16IsTunable) {
  registry();
  const Tunable* t = registry().tunable(sgemm::kV16Id);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(registry().tunable("sgemm.v15_hoisted_copies"), nullptr);
  ASSERT_EQ(static_cast<int>(t->configs.size()), sgemm::kMultistageSpaceSize);
  EXPECT_EQ(std::set<std::string>(t->configs.begin(), t->configs.end()).size(), t->configs.size());
  // Entry 0 is v15's configuration: without a table entry, v16 is v15.
  EXPECT_EQ(t->configs[0], "128x128x16_w32x64_t8x8_s4_b2");
  EXPECT_EQ(t->committed_table, "kernels/sgemm/tuned.json");
  EXPECT_EQ(t->shape_class(registry().family("sgemm").headline.front()), "large");
  Problem p = registry().family("sgemm").headline.front();
  for (int i = 0; i < sgemm::kMultistageSpaceSize; ++i)
    EXPECT_TRUE(t->can_implement(i, p).ok()) << i;
  EXPECT_FALSE(t->can_implement(sgemm::kMultistageSpaceSize, p).ok());
  p.shape.dims = {{"m", 65535LL * 256 + 1}, {"n", 64}, {"k", 1}};
  for (int i = 0; i < sgemm::kMultistageSpaceSize; ++i)
    EXPECT_FALSE(t->can_implement(i, p).ok()) << i;
  // Past v09's grid (128-row tiles, the fallback when k or n is not a multiple of 4), a 256-row
  // entry's own grid would fit, but the launch may take v09's: refused as well.
  p.shape.dims = {{"m", 65535LL * 128 + 1}, {"n", 64}, {"k", 3}};
  for (int i = 0; i < sgemm::kMultistageSpaceSize; ++i)
    EXPECT_FALSE(t->can_implement(i, p).ok()) << i;
  // A warp tile the lane tile does not divide fails the table's rule (the kernel would leave rows
  // uncomputed).
  sgemm::MultistageTuneConfig uneven = sgemm::kMultistageSpace[0];
  uneven.warp_m = 36;
  uneven.block_m = 144;
  EXPECT_FALSE(uneven.valid());
  // An invalid entry is caught by the table's own rule (the kernel would not compile).
  sgemm::MultistageTuneConfig bad = sgemm::kMultistageSpace[0];
  bad.warp_n = 32;  // 32x32 warp tiles of 8x8 per lane: 16 lanes, not 32
  EXPECT_FALSE(bad.valid());
  bad = sgemm::kMultistageSpace[6];
  bad.stages = 12;  // 12 x 24.8 KiB per block: over the SM's 228 KiB
  EXPECT_FALSE(bad.valid());
  expect_committed_entries_in_space(*t);
}

TEST_F(TuneTest, TransposeV06IsTunablePerDtype) {
  registry();
  const Tunable* t = registry().tunable(transpose::kV06Id);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(static_cast<int>(t->configs.size()), transpose::kTmaSpaceSize);
  EXPECT_EQ(std::set<std::string>(t->configs.begin(), t->configs.end()).size(), t->configs.size());
  EXPECT_EQ(t->committed_table, "kernels/transpose/tuned.json");
  // The shape class is the dtype: f32 and bf16 winners differ.
  Problem f32 = registry().family("transpose").headline.front(), bf16 = f32;
  bf16.dtype = DType::bf16;
  EXPECT_EQ(t->shape_class(f32), "f32");
  EXPECT_EQ(t->shape_class(bf16), "bf16");
  // Shared memory decides what fits: 4x2 with 3 stages is 161 KiB in f32, 321 KiB in bf16.
  int entry = -1;
  for (int i = 0; i < transpose::kTmaSpaceSize; ++i)
    if (t->configs[i] == "4x2_s3") entry = i;
  ASSERT_GE(entry, 0);
  EXPECT_TRUE(t->can_implement(entry, f32).ok());
  const Status no = t->can_implement(entry, bf16);
  EXPECT_FALSE(no.ok());
  EXPECT_NE(no.reason.find("KiB of shared memory"), std::string::npos) << no.reason;
  EXPECT_FALSE(t->can_implement(transpose::kTmaSpaceSize, f32).ok());
  // Every entry fits one dtype at least, and a block never exceeds 1024 threads.
  for (int i = 0; i < transpose::kTmaSpaceSize; ++i) {
    EXPECT_TRUE(t->can_implement(i, f32).ok() || t->can_implement(i, bf16).ok()) << t->configs[i];
    EXPECT_LE(transpose::kTmaSpace[i].threads(), 1024) << t->configs[i];
  }
  expect_committed_entries_in_space(*t);
}

TEST_F(TuneTest, TransposeV07IsTunablePerDtype) {
  registry();
  const Tunable* t = registry().tunable(transpose::kV07Id);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(static_cast<int>(t->configs.size()), transpose::kWideSpaceSize);
  EXPECT_EQ(std::set<std::string>(t->configs.begin(), t->configs.end()).size(), t->configs.size());
  EXPECT_EQ(t->committed_table, "kernels/transpose/tuned.json");
  Problem f32 = registry().family("transpose").headline.front(), bf16 = f32;
  bf16.dtype = DType::bf16;
  EXPECT_EQ(t->shape_class(bf16), "bf16");
  // 32-element sides are whole 128-byte segments in f32 only; 64 fits both.
  EXPECT_EQ(t->configs[0], "64x64_t256_b8");
  EXPECT_TRUE(t->can_implement(0, f32).ok());
  EXPECT_TRUE(t->can_implement(0, bf16).ok());
  EXPECT_EQ(t->configs[1], "32x64_t256_b8");
  EXPECT_TRUE(t->can_implement(1, f32).ok());
  const Status no = t->can_implement(1, bf16);
  EXPECT_FALSE(no.ok());
  EXPECT_NE(no.reason.find("does not fit bf16"), std::string::npos) << no.reason;
  EXPECT_FALSE(t->can_implement(transpose::kWideSpaceSize, f32).ok());
  // Every entry fits one dtype at least; a thread's words per phase stay within 32 (registers).
  for (int i = 0; i < transpose::kWideSpaceSize; ++i) {
    EXPECT_TRUE(t->can_implement(i, f32).ok() || t->can_implement(i, bf16).ok()) << t->configs[i];
    for (int bytes : {4, 2}) {
      if (transpose::kWideSpace[i].fits(bytes)) {
        EXPECT_LE(transpose::kWideSpace[i].loads(bytes), 32) << t->configs[i];
      }
    }
  }
  // 128x128 f32 is 64.5 KiB of shared memory (dynamic): three blocks (with the 1 KiB each
  // reserves) fit an SM's 228 KiB, four do not.
  EXPECT_TRUE((transpose::WideConfig{128, 128, 512, 3}.fits(4)));
  EXPECT_FALSE((transpose::WideConfig{128, 128, 512, 4}.fits(4)));
  // A static tile (<= 48 KiB) fits whatever min_blocks asks (it only caps registers): entry 7 in
  // f32, 64x128 (33 KiB) at 8 blocks, was measured (2026-11-30_e1de696_transpose_v07) and still runs.
  EXPECT_TRUE(transpose::kWideSpace[7].fits(4));
  // Grouped tile orders are named by their group.
  EXPECT_EQ((transpose::WideConfig{64, 64, 512, 4, false, 16}.name()), "64x64_t512_b4_g16");
  expect_committed_entries_in_space(*t);
}

// The grouped tile walk of transpose v07 hands every tile to exactly one step t, walking a
// group's tile rows down one tile column before the next column.
TEST(TransposeTileOrder, GroupedWalkCoversEveryTileOnce) {
  for (int64_t tiles_x : {1, 3, 7})
    for (int64_t tiles_y : {1, 5, 64, 516})
      for (int64_t g : {1, 8, 256}) {
        std::set<std::pair<int64_t, int64_t>> seen;
        for (int64_t t = 0; t < tiles_x * tiles_y; ++t) {
          const transpose::TileRowCol rc = transpose::grouped_tile(t, g, tiles_x, tiles_y);
          ASSERT_GE(rc.row, 0);
          ASSERT_LT(rc.row, tiles_y);
          ASSERT_GE(rc.col, 0);
          ASSERT_LT(rc.col, tiles_x);
          EXPECT_TRUE(seen.insert({rc.row, rc.col}).second)
              << "tile " << rc.row << "," << rc.col << " twice (g " << g << ")";
          if (t > 0) {  // inside a group: the next tile row of the same column, or the next column
            const transpose::TileRowCol prev = transpose::grouped_tile(t - 1, g, tiles_x, tiles_y);
            if (prev.row / g == rc.row / g) {
              EXPECT_TRUE((rc.col == prev.col && rc.row == prev.row + 1) ||
                          (rc.col == prev.col + 1 && rc.row % g == 0))
                  << t;
            }
          }
        }
        EXPECT_EQ(static_cast<int64_t>(seen.size()), tiles_x * tiles_y);
      }
  // g >= tiles_y is a column-major walk of the whole matrix.
  EXPECT_EQ(transpose::grouped_tile(5, 256, 3, 4).col, 1);
  EXPECT_EQ(transpose::grouped_tile(5, 256, 3, 4).row, 1);
}

TEST_F(TuneTest, HgemmV09IsTunable) {
  registry();
  const Tunable* t = registry().tunable(hgemm::kV09Id);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(static_cast<int>(t->configs.size()), hgemm::kV09SpaceSize);
  EXPECT_EQ(std::set<std::string>(t->configs.begin(), t->configs.end()).size(), t->configs.size());
  EXPECT_EQ(t->configs[0], "128x256x64_s4_g8");  // v09 as first measured
  for (int i = 0; i < hgemm::kV09SpaceSize; ++i) {
    const hgemm::TmaProducerEntry& e = hgemm::kV09Entries[i];
    EXPECT_LT(e.probe, 3) << i;  // before the last of 4 mma steps
    EXPECT_EQ(t->configs[i].ends_with("_p" + std::to_string(e.probe)), e.probe >= 0) << i;
  }
  EXPECT_EQ(t->committed_table, "kernels/hgemm/tuned.json");
  Problem p = registry().family("hgemm").headline.front();
  for (int i = 0; i < hgemm::kV09SpaceSize; ++i) EXPECT_TRUE(t->can_implement(i, p).ok()) << i;
  EXPECT_FALSE(t->can_implement(hgemm::kV09SpaceSize, p).ok());
  EXPECT_FALSE(t->can_implement(-1, p).ok());
  expect_committed_entries_in_space(*t);
}

TEST_F(TuneTest, HgemmV07IsTunable) {
  registry();
  const Tunable* t = registry().tunable(hgemm::kV07Id);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(registry().tunable("hgemm.v05_mma_tuned"), nullptr);
  ASSERT_EQ(static_cast<int>(t->configs.size()), hgemm::kTuneSpaceSize);
  EXPECT_EQ(std::set<std::string>(t->configs.begin(), t->configs.end()).size(), t->configs.size());
  EXPECT_EQ(t->committed_table, "kernels/hgemm/tuned.json");
  // Entry 0 is v05's configuration: without a table entry, v07 at 4096^3 is v05.
  EXPECT_EQ(t->configs[0], "128x256x64_w64x64_s4_b1_g8");
  const hgemm::HgemmConfig& v05 = hgemm::kTuneSpace[0];
  EXPECT_EQ(v05.smem_bytes(), 192 * 1024);
  EXPECT_EQ(v05.threads(), 256);

  // Every entry satisfies the template's rules and fits sm_90's shared memory, per block and
  // min_blocks at a time per SM.
  for (int i = 0; i < hgemm::kTuneSpaceSize; ++i) {
    const hgemm::HgemmConfig& c = hgemm::kTuneSpace[i];
    EXPECT_TRUE(c.valid()) << t->configs[i];
    EXPECT_EQ(t->configs[i], c.name());
    EXPECT_LE(c.threads(), 1024) << t->configs[i];
    EXPECT_LE(c.smem_bytes(), 227 * 1024) << t->configs[i];
    EXPECT_LE(c.min_blocks * (c.smem_bytes() + 1024), 228 * 1024) << t->configs[i];
    EXPECT_LE(c.register_estimate(), c.register_cap()) << t->configs[i];
  }
  // valid() refuses what the template would not compile or could not hold in registers.
  EXPECT_FALSE((hgemm::HgemmConfig{128, 256, 16, 64, 64, 4, 1, 8}.valid()));  // 1 mma step per tile
  EXPECT_FALSE((hgemm::HgemmConfig{128, 256, 64, 64, 32, 4, 1, 8}.valid()));  // off the swizzle
  EXPECT_FALSE((hgemm::HgemmConfig{128, 256, 64, 64, 128, 4, 1, 8}.valid()));  // 256 accumulators
  EXPECT_FALSE((hgemm::HgemmConfig{128, 256, 64, 64, 64, 5, 1, 8}.valid()));   // 240 KiB
  EXPECT_FALSE((hgemm::HgemmConfig{128, 128, 64, 64, 64, 4, 2, 8}.valid()));   // 2 x 128 KiB

  // Shape classes: large from 2048 x 2048 outputs on, whatever the dtype.
  Problem p = registry().family("hgemm").headline.front();
  EXPECT_EQ(t->shape_class(p), "large");
  p.dtype = DType::f16;
  EXPECT_EQ(t->shape_class(p), "large");
  p.shape.dims = {{"m", 2048}, {"n", 2048}, {"k", 8}};
  EXPECT_EQ(t->shape_class(p), "large");
  p.shape.dims = {{"m", 2047}, {"n", 2048}, {"k", 8}};
  EXPECT_EQ(t->shape_class(p), "small");
  EXPECT_EQ(hgemm::builtin_config(hgemm::ShapeClass::large), 0);
  const hgemm::HgemmConfig& small =
      hgemm::kTuneSpace[hgemm::builtin_config(hgemm::ShapeClass::small)];
  EXPECT_EQ(small.min_blocks, 2);  // v06's: twice the blocks of v05 for grids under a wave

  p = registry().family("hgemm").headline.front();
  if (!device_info().present || device_info().smem_per_block_optin >= 227 * 1024) {
    for (int i = 0; i < hgemm::kTuneSpaceSize; ++i) EXPECT_TRUE(t->can_implement(i, p).ok()) << i;
  }
  EXPECT_FALSE(t->can_implement(hgemm::kTuneSpaceSize, p).ok());
  EXPECT_FALSE(t->can_implement(-1, p).ok());
  // More than 2^31 - 1 tiles: the 1-D grid cannot hold them.
  p.shape.dims = {{"m", INT_MAX}, {"n", INT_MAX}, {"k", 8}};
  for (int i = 0; i < hgemm::kTuneSpaceSize; ++i) EXPECT_FALSE(t->can_implement(i, p).ok()) << i;

  // Without a GPU, v07 uses its built-in guess.
  p = registry().family("hgemm").headline.front();
  if (!device_info().present) {
    EXPECT_EQ(hgemm::tuned_choice(p).source, "built-in");
    EXPECT_EQ(hgemm::tuned_config(p), 0);
  }
  // The committed table (shared with v09) names entries of v07's space for v07.
  expect_committed_entries_in_space(*t);
}

TEST_F(TuneTest, SgemmLookupOrder) {
  const Problem p = registry().family("sgemm").headline.front();
  const std::string cls = sgemm::shape_class_name(sgemm::shape_class(p));
  const std::string cache = tune_cache_path("Dev"), committed = (dir_ / "tuned.json").string();
  const std::vector<TuneSource> sources{{"cache", cache}, {"committed", committed}};
  const int builtin = sgemm::builtin_config(sgemm::shape_class(p));
  const auto names = sgemm::sgemm_config_names();

  TunedChoice c = sgemm::tuned_choice_from(p, sources, "Dev");
  EXPECT_EQ(c.source, "built-in");
  EXPECT_EQ(c.config, builtin);

  TuneEntry e;
  e.device = "Dev";
  e.variant = sgemm::kV10Id;
  e.shape_class = cls;
  e.config = 5;
  e.config_name = names[5];
  record_tune_entry(e, committed);
  c = sgemm::tuned_choice_from(p, sources, "Dev");
  EXPECT_EQ(c.source, "committed");
  EXPECT_EQ(c.config, 5);

  e.config = 3;
  e.config_name = names[3];
  record_tune_entry(e, cache);
  c = sgemm::tuned_choice_from(p, sources, "Dev");
  EXPECT_EQ(c.source, "cache");
  EXPECT_EQ(c.config, 3);
  EXPECT_EQ(sgemm::tuned_choice_from(p, sources, "Other Dev").source, "built-in");

  // Without a GPU, v10 itself uses its built-in guess.
  if (!device_info().present) {
    EXPECT_EQ(sgemm::tuned_choice(p).source, "built-in");
    EXPECT_EQ(sgemm::tuned_config(p), builtin);
  }
}

// The CLI: bad requests are one line on stderr and exit 2, before any GPU work.
namespace {

struct Out {
  int code;
  std::string err;
};

Out klab_cli(const std::string& args) {
  const std::string cmd = std::string(KLAB_BINARY) + " " + args + " 2>&1 >/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  std::string err;
  std::array<char, 512> buf{};
  while (fgets(buf.data(), buf.size(), p)) err += buf.data();
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, err};
}

void expect_usage_error(const std::string& args, const std::string& expect) {
  const Out o = klab_cli(args);
  EXPECT_EQ(o.code, 2) << args << "\n" << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << args << "\n" << o.err;
  EXPECT_NE(o.err.find(expect), std::string::npos) << args << "\n" << o.err;
}

}  // namespace

TEST(TuneCli, BadRequests) {
  expect_usage_error("tune", "variant is required");
  expect_usage_error("tune nosuchfamily.v01", "unknown family");
  expect_usage_error("tune sgemm.v99_nope", "unknown variant");
  expect_usage_error("tune sgemm.v10_autotuned --shape m=0,n=4,k=4", "must be positive");
  expect_usage_error("tune sgemm.v10_autotuned --shape m=4,n=4", "lacks dimension");
  expect_usage_error("tune sgemm.v10_autotuned --rounds 0", "--rounds");
  expect_usage_error("tune sgemm.v10_autotuned --interleave --rounds 2", "pick one");
  expect_usage_error("tune sgemm.v10_autotuned --dtype bf16", "dtype");
#if KLAB_HAS_CUDA
  expect_usage_error("tune sgemm.v09_warptile", "no configurations to tune");
  expect_usage_error("tune hgemm.v05_mma_tuned", "no configurations to tune");
#endif
  expect_usage_error("tune hgemm.v07_mma_autotuned --dtype f32", "dtype");
  expect_usage_error("tune sgemm.v10_autotuned --configs 99", "not an index or range");
  expect_usage_error("tune sgemm.v10_autotuned --configs 3-1", "not an index or range");
  expect_usage_error("tune sgemm.v10_autotuned --configs 1,x", "'x' is not an index");
  expect_usage_error("tune sgemm.v10_autotuned --configs 1-2-3", "not an index or range");
}

TEST(TuneCli, NoGpuIsAUsageError) {
  if (device_info().present) GTEST_SKIP() << "a GPU is present";
  expect_usage_error("tune sgemm.v10_autotuned", "needs a GPU");
  expect_usage_error("tune sgemm.v10_autotuned --shape m=64,n=64,k=64 --json /dev/null",
                     "needs a GPU");
  expect_usage_error("tune hgemm.v07_mma_autotuned --shape m=64,n=64,k=64 --dtype f16",
                     "needs a GPU");
}

TEST(HgemmV19Entries, NamesAreStableKeysAndTheModelKeepsItsPicks) {
  using namespace klab::hgemm;
  // v19's entries are a tune table's configurations: names distinct and stable (append only).
  const auto names = v19_config_names();
  ASSERT_EQ(int(names.size()), kV19SpaceSize);
  EXPECT_EQ(names[0], "192_k1");
  EXPECT_EQ(names[1], "64_k2");
  EXPECT_EQ(names[2], "192_k4");
  EXPECT_EQ(names[3], "64_k1");
  EXPECT_EQ(names[4], "128_k4");
  EXPECT_EQ(names[5], "64_k1_t2");
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  // Entry 4 models level with entry 1 at N = K = 4096 (the same weight bytes a CTA, 128 CTAs):
  // a tie keeps the earlier entry, so only a tune table picks it.
  auto one_a_sm = [](int) { return int64_t(132); };
  EXPECT_EQ(v19_model_seconds(kV19Entries[4], 4096, 4096, 132),
            v19_model_seconds(kV19Entries[1], 4096, 4096, 132));
  EXPECT_EQ(v19_entry(4096, 4096, one_a_sm), 1);
  // The token-split entry is the tune's alone: the model, which counts the weight's bytes and
  // not the tokens', never picks it, at any shape, however many CTAs fit, not even where it is
  // the only entry that fits (every other modelled as never finishing).
  for (int64_t n : {1024, 4096, 6144, 24576, 100000})
    for (int64_t k : {64, 4096, 12288})
      for (int64_t resident : {66, 132, 264}) {
        EXPECT_EQ(kV19Entries[v19_entry(n, k, [&](int) { return resident; })].halves, 1)
            << n << " " << k << " " << resident;
        auto only_halves = [&](int i) { return kV19Entries[i].halves > 1 ? resident : 0; };
        EXPECT_EQ(kV19Entries[v19_entry(n, k, only_halves)].halves, 1)
            << n << " " << k << " " << resident;
      }
  // Its own modelled time counts both CTAs of each pair, each drawing on DRAM for half its slab.
  EXPECT_LT(v19_model_seconds(kV19Entries[5], 4096, 4096, 132), 1e29);
  EXPECT_GT(v19_model_seconds(kV19Entries[5], 6144, 4096, 132),
            v19_model_seconds(kV19Entries[5], 4096, 4096, 132))
      << "192 CTAs on 132 take two waves";
}

TEST(HgemmV18Dispatch, ModelPicksWeightStreamingNarrowTilesOrSplitsByShape) {
  using namespace klab::hgemm;
  // Names are table keys: distinct and stable.
  const auto names = v18_config_names();
  ASSERT_EQ(int(names.size()), kV18SpaceSize);
  EXPECT_EQ(names[0], "v16");
  EXPECT_EQ(names[1], "v17");
  EXPECT_EQ(names[2], "128x256_k1");
  EXPECT_EQ(names[9], "v15");
  EXPECT_EQ(names[10], "v19");
  EXPECT_EQ(names[11], "128x192_k1");
  EXPECT_EQ(names[12], "v13");
  EXPECT_EQ(names[13], "v12");
  EXPECT_EQ(names[14], "v21");
  EXPECT_EQ(names[15], "v15_128x128");
  EXPECT_EQ(names[16], "v15_128x192");
  EXPECT_EQ(names[17], "v24");
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  const int sms = 132;
  auto pick = [&](int64_t m, int64_t n, int64_t k) {
    return names[size_t(v18_builtin_config(m, n, k, sms))];
  };
  // M <= 64: v19's swapped-operand weight streaming, whatever N and K.
  EXPECT_EQ(pick(1, 4096, 4096), "v19");
  EXPECT_EQ(pick(64, 24576, 4096), "v19");
  // Grids of at least a wave of 128 x 256 tiles keep v14's kernel unsplit.
  EXPECT_EQ(pick(4096, 4096, 4096), "128x256_k1");
  EXPECT_EQ(pick(8192, 8192, 8192), "128x256_k1");
  EXPECT_EQ(pick(16384, 24576, 4096), "128x256_k1");
  // M = 512, N = 6144: 96 tiles of 128 x 256, 128 of 128 x 192 (one wave).
  EXPECT_EQ(pick(512, 6144, 4096), "128x192_k1");
  // M = 512, N = 4096: 64 wide tiles for 132 SMs; 128 narrow ones fill the wave unsplit.
  EXPECT_EQ(pick(512, 4096, 4096), "128x128_k1");
  // M = 128: v19's 128-token weight streaming (one launch, no workspace) where the tiles are too
  // few; at N = 24576 96 tiles of 128 x 256 tie with it at the weight's read time, and the
  // earlier entry keeps the tie.
  EXPECT_EQ(pick(128, 4096, 4096), "v19");
  EXPECT_EQ(pick(128, 24576, 4096), "128x256_k1");
  // A narrow weight is 16 slabs of 64: v19's own model streams it at ~50 GB/s an SM over 32
  // CTAs at most, slower than 128 x 128 tiles with K split.
  EXPECT_NE(pick(128, 1024, 8192), "v19");
  // M = 256, N = 4096: 64 narrow tiles: K is split.
  const std::string small = pick(256, 4096, 4096);
  EXPECT_NE(small.find("128x128_k"), std::string::npos) << small;
  EXPECT_NE(small, "128x128_k1");
  // Split entries are refused where the tiles already fill the SMs, or K has too few k-tiles;
  // the model calls them infinitely slow there.
  EXPECT_TRUE(std::isinf(v18_model_seconds(3, 4096, 4096, 4096, sms)));
  EXPECT_TRUE(std::isinf(v18_model_seconds(8, 128, 4096, 256, sms))) << "8 splits of 4 k-tiles";
  EXPECT_TRUE(std::isinf(v18_model_seconds(0, 128, 4096, 4096, sms))) << "v16 keeps M <= 64";
  EXPECT_TRUE(std::isinf(v18_model_seconds(1, 128, 4096, 4096, sms))) << "v17 keeps M <= 64";
  EXPECT_TRUE(std::isinf(v18_model_seconds(10, 129, 4096, 4096, sms))) << "v19 keeps M <= 128";
  for (int i : {9, 12, 13, 14, 15, 16, 17})
    EXPECT_TRUE(std::isinf(v18_model_seconds(i, 8192, 8192, 8192, sms)))
        << "only a table picks " << names[size_t(i)];
  for (int i = 0; i < kV18SpaceSize; ++i) EXPECT_TRUE(std::isinf(v18_model_seconds(i, 1, 1, 1, 0)));
}

TEST(HgemmV18Dispatch, CanImplementAndWorkspaceFollowTheEntries) {
  using namespace klab::hgemm;
  const Family& f = registry().family("hgemm");
  auto problem = [&](const std::string& shape) { return make_problem(f, shape, "bf16"); };
  const Problem big = problem("m=4096,n=4096,k=4096"), mid = problem("m=128,n=4096,k=4096");
  EXPECT_TRUE(v18_config_can_implement(2, big).ok());
  EXPECT_FALSE(v18_config_can_implement(3, big).ok()) << "256 tiles need no split";
  EXPECT_FALSE(v18_config_can_implement(0, big).ok()) << "weight streaming keeps M <= 64";
  EXPECT_FALSE(v18_config_can_implement(1, big).ok()) << "weight streaming keeps M <= 64";
  EXPECT_FALSE(v18_config_can_implement(10, big).ok()) << "v19 keeps M <= 128";
  EXPECT_FALSE(v18_config_can_implement(kV18SpaceSize, big).ok());
  // No entry that runs 4096^3 splits K: v21's slots, then its flags, alone.
  EXPECT_EQ(v18_workspace_bytes(big), v21_slot_bytes() + v21_flag_bytes(big));
  EXPECT_EQ(v21_flag_bytes(big), size_t(32 * 16) * 2 * sizeof(int));
  for (int i = 2; i < kV18SpaceSize; ++i) EXPECT_TRUE(v18_config_can_implement(i, mid).ok()) << i;
  // The most any other entry needs (8 splits of 128 x 4096 fp32 partials, or v21's slots),
  // then v21's flags past it, where no other entry writes.
  EXPECT_EQ(
      v18_workspace_bytes(mid),
      std::max(size_t(8) * 128 * 4096 * sizeof(float), v21_slot_bytes()) + v21_flag_bytes(mid));
  // v24: B copied with rows of whole 128-byte lines (64 elements) where N's are not, else no
  // workspace; v18 holds room for the copy where the entry can run.
  EXPECT_EQ(v24_ldb(7000), 7040);
  EXPECT_EQ(v24_ldb(7040), 7040);
  EXPECT_EQ(v24_workspace_bytes(big), 0u);
  const Problem ragged = problem("m=6000,n=7000,k=5000");
  EXPECT_EQ(v24_workspace_bytes(ragged), size_t(7040) * 5000 * 2);
  EXPECT_TRUE(v18_config_can_implement(17, ragged).ok());
  EXPECT_GE(v18_workspace_bytes(ragged), v24_workspace_bytes(ragged) + v21_flag_bytes(ragged));
  // v19: M <= 128, and its slabs of 64 columns on the grid's y (at most 65535).
  EXPECT_TRUE(v19_can_implement(problem("m=128,n=4096,k=4096")).ok());
  EXPECT_FALSE(v19_can_implement(problem("m=129,n=4096,k=4096")).ok());
  EXPECT_TRUE(v19_can_implement(problem("m=1,n=4194240,k=8")).ok());
  EXPECT_FALSE(v19_can_implement(problem("m=1,n=4194304,k=8")).ok());
  EXPECT_EQ(v18_shape_class(mid), "m128_n4096_k4096");
  EXPECT_EQ(v18_shape_class(problem("m=300,n=264,k=72")), "m512_n264_k72");
  EXPECT_EQ(v18_shape_class(problem("m=100000,n=8,k=8")), "m16384_n8_k8");
}

// v23: the weight's 64-column slabs of 64-deep k-tiles in one stream-K line over every SM, the
// pieces within one k-tile of each other, and a workspace that holds the plan's slots (64 x the
// tokens' width floats) and counters; M > 64 refused.
TEST(HgemmV23, StreamsTheWeightOnEverySm) {
  using namespace klab::hgemm;
  const Family& f = registry().family("hgemm");
  auto problem = [&](const std::string& shape) { return make_problem(f, shape, "bf16"); };
  const int sms = v23_plan(1 << 20, 4096).ctas;  // a line longer than any grid: every SM
  for (const char* shape : {"m=16,n=6144,k=4096", "m=1,n=24576,k=4096", "m=64,n=4096,k=12288",
                            "m=16,n=4096,k=4096", "m=5,n=72,k=8"}) {
    const Problem p = problem(shape);
    ASSERT_TRUE(v23_can_implement(p).ok()) << shape;
    const StreamKPlan plan = v23_plan(p.dim("n"), p.dim("k"));
    EXPECT_EQ(plan.tiles_n, (p.dim("n") + 63) / 64) << shape;
    EXPECT_EQ(plan.ctas, std::min<int64_t>(plan.units(), sms)) << shape;
    int64_t lo = INT64_MAX, hi = 0;
    for (int c = 0; c < plan.ctas; ++c) {
      lo = std::min(lo, plan.begin(c + 1) - plan.begin(c));
      hi = std::max(hi, plan.begin(c + 1) - plan.begin(c));
    }
    EXPECT_LE(hi - lo, 1) << shape;
    EXPECT_EQ(v23_workspace_bytes(p), plan.workspace_bytes(v19_tokens(p.dim("m")), 64)) << shape;
  }
  // N = 6144 (v19: 96 CTAs of 64 columns) and 24576 (128 of 192) on every SM of a 132-SM part.
  if (sms == 132) {
    EXPECT_EQ(v23_plan(6144, 4096).ctas, 132);
    EXPECT_EQ(v23_plan(24576, 4096).ctas, 132);
  }
  EXPECT_FALSE(v23_can_implement(problem("m=65,n=4096,k=4096")).ok());
}
