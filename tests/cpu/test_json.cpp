#include <gtest/gtest.h>

#include "klab/harness/result.hpp"

using namespace klab;

TEST(Json, ResultRoundTrips) {
  Result r;
  r.variant = "vector_add.v03_vectorized";
  r.family = "vector_add";
  r.problem.family = "vector_add";
  r.problem.shape.dims = {{"n", 1000003}};
  r.problem.dtype = DType::bf16;
  r.problem.misalign = 1;
  r.device_kind = "gpu";
  r.checked = true;
  r.check.passed = false;
  r.check.max_abs = 0.5;
  r.check.unwritten = 2;
  r.check.first.push_back({"out", 7, 1.0, 2.0});
  r.timed = true;
  r.timing.mode = "cold";
  r.timing.samples_ms = {1.0, 1.1, 0.9, 1.05};
  r.timing.stats = summarize(r.timing.samples_ms);
  r.timing.sm_clock_min_mhz = 1900;
  r.timing.sm_clock_max_mhz = 1980;
  r.counts = {1e6, 3e6};
  r.gbps = 3000;
  r.ceiling.name = "copy";
  r.ceiling.value = 4200;
  r.ceiling.pct = 71.4;
  r.baseline.id = "vector_add.baseline_cub";
  r.baseline.speedup = 0.9;
  const nlohmann::json j = to_json(r);
  const Result back = result_from_json(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(back.variant, r.variant);
  EXPECT_EQ(back.problem.shape, r.problem.shape);
  EXPECT_EQ(back.problem.dtype, DType::bf16);
  EXPECT_EQ(back.problem.misalign, 1);
  EXPECT_FALSE(back.check.passed);
  EXPECT_EQ(back.check.unwritten, 2);
  ASSERT_EQ(back.check.first.size(), 1u);
  EXPECT_EQ(back.check.first[0].index, 7);
  EXPECT_EQ(back.timing.samples_ms, r.timing.samples_ms);
  EXPECT_DOUBLE_EQ(back.timing.stats.median, r.timing.stats.median);
  EXPECT_EQ(back.timing.sm_clock_max_mhz, 1980);
  EXPECT_EQ(back.ceiling.name, "copy");
  EXPECT_EQ(back.baseline.id, r.baseline.id);
  EXPECT_TRUE(j.contains("device"));
  EXPECT_TRUE(j["build"].contains("git_sha"));
  for (const char* k : {"median_ms", "p10_ms", "p90_ms", "mean_ms", "rel_noise", "timestamp",
                        "sm_clock_mhz", "throttled"})
    EXPECT_TRUE(j.contains(k)) << k;
}

// Host seconds per phase round-trip; a record written before they were kept reads back without.
TEST(Json, HostSecondsRoundTripAndOldRecordsReadWithout) {
  Result r;
  r.variant = "attention.v03_fa2_mma";
  r.family = "attention";
  r.problem.family = "attention";
  r.problem.shape.dims = {{"b", 4}};
  r.host_seconds.add("inputs", 1.5);
  r.host_seconds.add("reference", 2.25);
  r.host_seconds.add("inputs", 0.5);  // a phase run again adds to its entry
  const nlohmann::json j = to_json(r);
  ASSERT_TRUE(j.contains("host_seconds"));
  EXPECT_DOUBLE_EQ(j["host_seconds"]["inputs"].get<double>(), 2.0);
  const Result back = result_from_json(nlohmann::json::parse(j.dump()));
  EXPECT_DOUBLE_EQ(back.host_seconds.at("inputs"), 2.0);
  EXPECT_DOUBLE_EQ(back.host_seconds.at("reference"), 2.25);
  nlohmann::json old = j;
  old.erase("host_seconds");
  EXPECT_TRUE(result_from_json(old).host_seconds.empty());
  EXPECT_FALSE(to_json(result_from_json(old)).contains("host_seconds"));
}

TEST(Json, TunedChoiceRoundTripsAndOldRecordsReadWithout) {
  Result r;
  r.variant = "hgemm.v18_wgmma_dispatch";
  r.family = "hgemm";
  r.problem.family = "hgemm";
  r.problem.shape.dims = {{"m", 4096}, {"n", 4096}, {"k", 4096}};
  r.tuned = {"v15", "committed", "/src/kernels/hgemm/tuned.json", true};
  const nlohmann::json j = to_json(r);
  ASSERT_TRUE(j.contains("tuned"));
  EXPECT_EQ(j["tuned"]["config"], "v15");
  const Result back = result_from_json(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(back.tuned.config, "v15");
  EXPECT_EQ(back.tuned.source, "committed");
  EXPECT_EQ(back.tuned.path, "/src/kernels/hgemm/tuned.json");
  EXPECT_TRUE(back.tuned.committed_table);
  nlohmann::json old = j;
  old.erase("tuned");
  EXPECT_TRUE(result_from_json(old).tuned.config.empty());
  EXPECT_FALSE(to_json(result_from_json(old)).contains("tuned"));
}

// A record read back keeps the device and build it was measured with: rewriting it (klab report
// --plot hands the plot script a rewritten file) must not restamp it with this machine.
TEST(Json, RecordReadBackKeepsItsMachine) {
  nlohmann::json j = to_json(Result{});
  j["variant"] = "x.v01";
  j["family"] = "x";
  j["problem"] = "n=8";
  j["dtype"] = "f32";
  j["device"] = {{"present", true}, {"name", "Some GPU elsewhere"}, {"sm_count", 7}};
  j["build"] = {{"git_sha", "0123456789ab"}};
  const nlohmann::json again = to_json(result_from_json(j));
  EXPECT_EQ(again["device"]["name"], "Some GPU elsewhere");
  EXPECT_EQ(again["device"]["sm_count"], 7);
  EXPECT_EQ(again["build"]["git_sha"], "0123456789ab");
  // A fresh record is stamped with this machine.
  EXPECT_EQ(to_json(Result{})["build"]["git_sha"], machine_json()["build"]["git_sha"]);
}
