// Bad input through the real CLI: one line on stderr, exit code 2, no GPU work.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct Out {
  int code;
  std::string err;
};

/// A shell command's exit code and stderr (its stdout discarded).
Out sh(const std::string& command) {
  const std::string cmd = command + " 2>&1 >/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  std::string err;
  std::array<char, 512> buf{};
  while (fgets(buf.data(), buf.size(), p)) err += buf.data();
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, err};
}

Out klab(const std::string& args) { return sh(std::string(KLAB_BINARY) + " " + args); }

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

void write_file(const std::string& path, const std::string& text) {
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr) << path;
  fputs(text.c_str(), f);
  fclose(f);
}

/// The file's text; "" when it cannot be opened.
std::string read_file(const std::string& path) {
  std::string text;
  FILE* f = fopen(path.c_str(), "r");
  if (!f) return text;
  std::array<char, 1024> buf{};
  while (fgets(buf.data(), buf.size(), f)) text += buf.data();
  fclose(f);
  return text;
}

/// How many times `needle` occurs in `text` (records in a JSON file, by one of their keys).
int occurrences(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

class BadInput : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(BadInput, OneLineAndExitTwo) {
  const auto [args, expect] = GetParam();
  const Out o = klab(args);
  EXPECT_EQ(o.code, 2) << args << "\n" << o.err;
  EXPECT_EQ(lines(o.err), 1) << args << "\n" << o.err;
  EXPECT_NE(o.err.find(expect), std::string::npos) << args << "\n" << o.err;
}

const std::pair<const char*, const char*> kBadInputCases[] = {
    {"check nosuchfamily", "unknown family"},
    {"check vector_add.v99_nope", "unknown variant"},
    {"check vector_add --shape n=abc", "not an integer"},
    {"check vector_add --shape n=0", "must be positive"},
    {"check vector_add --shape n=-5", "must be positive"},
    {"check vector_add --shape n=99999999999999999999999", "overflows"},
    {"check vector_add --shape n=4611686018427387904", "overflows"},
    {"check sgemm --shape m=4,n=4", "lacks dimension"},
    {"check vector_add --shape N=5", "unknown dimension 'N'"},
    {"check sgemm --shape m=4,n=4,k=4,z=3", "unknown dimension 'z'"},
    {"report x.json --max-delta 2", "--max-delta requires --compare"},
    {"report x.json --compare y.json --max-delta -2", "must not be negative"},
    {"scaling sgemm.cpu05_threads_simd --max-threads 0", "must be at least 1"},
    {"check vector_add.v00_cpu --json /nonexistent/dir/x.json", "no folder /nonexistent/dir"},
    {"bench vector_add --json /tmp", "it is a folder"},
    {"report x.json --md /nonexistent/dir/t.md", "no folder"},
    {"report x.json --md -", "is not taken here"},
    {"report x.json --readme /nonexistent/README.md", "does not exist"},
    {"check sabotage --device cpu", "nothing to run"},
    {"run nosuchfamily", "unknown family"},
    {"run sabotage", "on purpose"},
    {"check vector_add --shape n=4,n=5", "given twice"},
    {"check vector_add --shape n", "malformed shape"},
    {"check vector_add --shape ''", "shape is empty"},
    {"bench vector_add --shape ' '", "shape is empty"},
    {"tune sgemm.v10_autotuned --shape ''", "shape is empty"},
    {"check vector_add --shape n=1099511627776", "of host memory"},
    {"check hgemm --shape m=1000000,n=1000000,k=8", "of host memory"},
    {"check saxpy --shape n=64 --misalign -1", "--misalign"},
    {"check saxpy --misalign 1", "--misalign needs --shape"},
    {"check saxpy --shape n=64 --layout bhnd", "unknown layout"},
    {"check saxpy --shape n=64 --dtype i32", "does not take dtype"},
    {"check vector_add --dtype f33", "unknown dtype"},
    {"check vector_add.v00_cpu --shape n=8 --dtype e4m3", "does not take dtype"},
    {"check grayscale.v00_cpu --shape n=8 --dtype bf16", "does not take dtype"},
    {"sweep vector_add", "exactly one variant"},
#if KLAB_HAS_CUDA  // these name GPU rungs, registered only in the CUDA build
    {"sweep vector_add.v01_naive --blocks 48", "multiples of 32"},
    {"sweep vector_add.baseline_cub", "no block-size knob"},
    {"run vector_add.v01_naive --device cpu", "is not a cpu variant"},
    {"timeline decode_attention.v10_swap_ab --shape b=1,qlen=1,hq=32,hkv=8,d=128,page=16,len=64",
     "has no traced kernel"},
    // e4m3 pools: the unfused baseline, v00 and v03 write them; the other rungs say so
    {"check qk_norm_rope_cache.v01_fused --shape tokens=3,hq=8,hkv=2,d=128,page=16,seqs=1,"
     "context=64 --dtype e4m3",
     "does not take dtype"},
#endif
    {"timeline", "a variant and --shape"},
    {"timeline --from /nonexistent/t.json", "cannot read"},
    {"timeline --from " KLAB_SOURCE_DIR "/README.md", "is not valid JSON"},
    {"timeline --from " KLAB_SOURCE_DIR "/docs/goals.json",
     "not a record of `klab timeline --json`"},
    {"timeline vector_add.v99_nope --shape n=8", "unknown variant"},
    {"run vector_add --device tpu", "--device"},
    {"sweep vector_add.v00_cpu", "no block-size knob"},
    {"bench", "targets is required"},
    {"bench vector_add --interleave --rounds 3", "pick one"},
    {"bench vector_add --interleave --hot", "cold launches only"},
    {"bench vector_add --samples samples.txt", "add --interleave"},
    {"bench vector_add --interleave --samples /no/such/folder/samples.txt", "no folder"},
    {"frobnicate", "frobnicate"},
    {"report /nonexistent/x.json", "no such file"},
    {"check vector_add --dist cauchy", "unknown distribution"},
    {"report /nonexistent/x.json --section bad!name", "--section"},
    {"goals /nonexistent/goals.json /nonexistent", "cannot read"},
    {"goals", "goals is required"},
    // profile takes several variants, each resolved before any tool or GPU work
    {"profile vector_add.v01_naive vector_add.v99_nope", "unknown variant"},
    {"sass --kernel x --readme README.md", "--readme and --section go together"},
    {"ceilings --read-at 12Q", "the unit is K, M or G"},
    {"ceilings --read-at 8", "not a positive multiple of 16 bytes"},
    {"ceilings --read-at M", "a size is digits"},
    {"ceilings --read-at 32M,99999999999G", "above 1 TiB"},
    {"sass --list --table /tmp/klab_t.md", "not with --list"},
    {"bench vector_add --max-time -1", "above 0"},
    {"bench vector_add --max-time 0", "above 0"},
    {"bench vector_add --max-time nan", "above 0"},
    {"sweep vector_add.v00_cpu --max-time abc", "above 0"},
    {"tune sgemm.v10_autotuned --max-time -2", "above 0"},
    {"bench vector_add --noise -0.1", "[0, 1)"},
    {"run vector_add --noise 1", "[0, 1)"},
    {"scaling sgemm.cpu05_threads_simd --noise inf", "[0, 1)"},
    {"bench vector_add --seed -1", "must be >= 0"},
    {"tune sgemm.v10_autotuned --seed -3", "must be >= 0"},
    {"report x.json --plot /tmp/klab_plot.gif", "name a .png, .svg or .pdf file"},
    {"roofline --plot /tmp/klab_roof", "name a .png, .svg or .pdf file"},
};
INSTANTIATE_TEST_SUITE_P(Cli, BadInput, ::testing::ValuesIn(kBadInputCases));

// No GPU here: a GPU command is refused plainly; `klab run` runs the CPU rungs and exits 0.
TEST(Cli, NoGpuIsSaidPlainly) {
#if !KLAB_HAS_CUDA
  GTEST_SKIP() << "cpu-only build: no GPU variants are registered";
#endif
  const Out probe = klab("bench vector_add.v01_naive --shape n=8");
  if (probe.err.find("needs a GPU") == std::string::npos) GTEST_SKIP() << "a GPU is present";
  EXPECT_EQ(probe.code, 2);
  EXPECT_EQ(lines(probe.err), 1);
  EXPECT_EQ(klab("ceilings").code, 2);
  const Out run = klab("run vector_add --quiet --max-time 0.05 --shape n=1000");
  EXPECT_EQ(run.code, 0) << run.err;
}

TEST(Cli, ListShowsEveryFamily) {
  const std::string cmd = std::string(KLAB_BINARY) + " list";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 512> buf{};
  while (fgets(buf.data(), buf.size(), p)) out += buf.data();
  EXPECT_EQ(pclose(p), 0);
  for (const char* f : {"vector_add", "saxpy", "relu", "grayscale", "maxpool"})
    EXPECT_NE(out.find(f), std::string::npos) << f;
}

// Two runs among the inputs measured the same record: the report shows the newest only.
TEST(Cli, ReportKeepsTheNewestOfRepeatedRecords) {
  const std::string dir = ::testing::TempDir();
  auto record = [](const char* ts, double median) {
    return std::string(
               R"([{"variant":"vector_add.v03_vectorized","family":"vector_add","problem":"n=1024",)") +
           R"("dtype":"f32","status":"ok","timestamp":")" + ts +
           R"(","flops":1024,"bytes":12288,"mode":"cold",)" + R"("samples_ms":[)" +
           std::to_string(median) + R"(],"median_ms":)" + std::to_string(median) + "}]";
  };
  const std::string older = dir + "/klab_old.json", newer = dir + "/klab_new.json",
                    md = dir + "/klab_report.md";
  write_file(older, record("2026-01-01T00:00:00Z", 0.5));
  write_file(newer, record("2026-02-01T00:00:00Z", 0.25));
  // Either order of the inputs.
  for (const std::string& args : {newer + " " + older, older + " " + newer}) {
    const Out o = klab("report " + args + " --md " + md);
    ASSERT_EQ(o.code, 0) << o.err;
    const std::string text = read_file(md);
    EXPECT_NE(text.find("0.2500"), std::string::npos) << text;
    EXPECT_EQ(text.find("0.5000"), std::string::npos) << text;
    EXPECT_NE(text.find("from 1 record(s)"), std::string::npos) << text;
  }
}

// A tuned rung's record names its choice: the report tables it, and flags a run that did not find
// the committed table (its records time the built-in guesses, not the tuned dispatch).
TEST(Cli, ReportTablesTheTunedRungsChoices) {
  const std::string dir = ::testing::TempDir();
  auto record = [](const char* m, const char* tuned) {
    return std::string(R"({"variant":"hgemm.v18_wgmma_dispatch","family":"hgemm","problem":"m=)") +
           m +
           R"(,n=4096,k=4096","dtype":"bf16","status":"ok","timestamp":"2026-01-01T00:00:00Z",)" +
           R"("flops":1,"bytes":1,"mode":"cold","samples_ms":[0.2],"median_ms":0.2,"tuned":)" +
           tuned + "}";
  };
  const std::string in = dir + "/klab_tuned.json", md = dir + "/klab_tuned.md";
  write_file(in, "[" +
                     record("4096", R"({"config":"v15","source":"committed","path":"/s/t.json",)"
                                    R"("committed_table":true})") +
                     "," +
                     record("2048", R"({"config":"128x256_k1","source":"built-in","path":"",)"
                                    R"("committed_table":false})") +
                     "]");
  const Out o = klab("report " + in + " --md " + md);
  ASSERT_EQ(o.code, 0) << o.err;
  const std::string text = read_file(md);
  EXPECT_NE(text.find("| hgemm.v18_wgmma_dispatch | m=4096,n=4096,k=4096 bf16 | v15 | "
                      "committed (/s/t.json) |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| 128x256_k1 | built-in; no committed table where the rung looks for it"),
            std::string::npos)
      << text;
}

// klab report --steps: a problem's rungs in their ladder's order (not the file's), each against
// the one before it and the first, the speed-up over the baseline as each record carries it; a
// rung whose check failed left out (and counted); a table only (no --plot).
TEST(Cli, ReportStepsOrdersTheRungsAndComparesEach) {
  const std::string dir = ::testing::TempDir();
  auto record = [](const char* variant, double median, double speedup, bool passed = true) {
    return std::string(R"({"variant":")") + variant +
           R"(","family":"vector_add","problem":"n=1024","dtype":"f32","status":"ok",)" +
           R"("timestamp":"2026-01-01T00:00:00Z","flops":1024,"bytes":12288,"mode":"cold",)" +
           R"("check":{"passed":)" + (passed ? "true" : "false") + R"(},"samples_ms":[)" +
           std::to_string(median) + R"(],"median_ms":)" + std::to_string(median) +
           (speedup > 0 ? R"(,"baseline":{"id":"vector_add.baseline_cub","speedup":)" +
                              std::to_string(speedup) + "}"
                        : std::string()) +
           "}";
  };
  const std::string in = dir + "/klab_steps.json", md = dir + "/klab_steps.md";
  write_file(in, "[" + record("vector_add.v03_vectorized", 0.25, 0.8) + "," +
                     record("vector_add.v01_naive", 1.0, 0.2) + "," +
                     record("vector_add.v04_vectorized_ilp", 0.1, 2.0, false) + "," +
                     record("vector_add.v02_grid_stride", 0.5, 0.4) + "]");
  const Out o = klab("report " + in + " --steps --md " + md);
  ASSERT_EQ(o.code, 0) << o.err;
  const std::string text = read_file(md);
  const size_t v1 = text.find("v01_naive"), v2 = text.find("v02_grid_stride"),
               v3 = text.find("v03_vectorized");
  ASSERT_TRUE(v1 != std::string::npos && v2 != std::string::npos && v3 != std::string::npos)
      << text;
  EXPECT_LT(v1, v2);
  EXPECT_LT(v2, v3);
  EXPECT_NE(text.find("| 2.000x | 2.000x | 0.400x |"), std::string::npos) << text;  // v02
  EXPECT_NE(text.find("| 2.000x | 4.000x | 0.800x |"), std::string::npos) << text;  // v03
  EXPECT_EQ(text.find("v04_vectorized_ilp |"), std::string::npos) << text;  // its check failed
  EXPECT_NE(text.find("1 record(s) whose check failed"), std::string::npos) << text;
  EXPECT_NE(text.find("over vector_add.baseline_cub"), std::string::npos) << text;
  const Out bad = klab("report " + in + " --steps --plot " + dir + "/klab_steps.png");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
}

// klab report --processes: every interleaved record kept (two files of the same variant and
// problem, not the newest alone), grouped by build, with the processes' median, range and values.
TEST(Cli, ReportProcessesKeepsEveryPairedRecord) {
  const std::string dir = ::testing::TempDir();
  auto record = [](const char* sha, double ratio) {
    return std::string(R"([{"variant":"vector_add.v01_naive","family":"vector_add",)") +
           R"("problem":"n=1024","dtype":"f32","status":"ok","timestamp":"2026-01-01T00:00:00Z",)" +
           R"("flops":1024,"bytes":12288,"mode":"cold","check":{"passed":true},)" +
           R"("samples_ms":[1.0],"median_ms":1.0,"build":{"git_sha":")" + sha + R"("},)" +
           R"("paired":{"median":)" + std::to_string(ratio) +
           R"(,"p10":0.9,"p90":1.1,"pairs":100,"with":"vector_add.baseline_cub"}}])";
  };
  const std::string a1 = dir + "/klab_proc_a1.json", a2 = dir + "/klab_proc_a2.json",
                    a3 = dir + "/klab_proc_a3.json", b1 = dir + "/klab_proc_b1.json",
                    md = dir + "/klab_proc.md";
  write_file(a1, record("aaaa", 0.97));
  write_file(a2, record("aaaa", 1.01));
  write_file(a3, record("aaaa", 1.00));
  write_file(b1, record("bbbb", 1.05));
  const Out o = klab("report " + a1 + " " + a2 + " " + a3 + " " + b1 + " --processes --md " + md);
  ASSERT_EQ(o.code, 0) << o.err;
  const std::string text = read_file(md);
  EXPECT_NE(text.find("| aaaa | vector_add.v01_naive |"), std::string::npos) << text;
  EXPECT_NE(text.find("| 3 | 1.000x | 0.970 - 1.010 | 0.970 1.000 1.010 |"), std::string::npos)
      << text;
  EXPECT_NE(text.find("| 1 | 1.050x | 1.050 - 1.050 | 1.050 |"), std::string::npos) << text;
  const Out bad = klab("report " + a1 + " --processes --steps");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
}

// klab goals over a results folder: run folders found below it (other JSON in them passed over),
// the newest run judged, a set-aside form's records dropped, a set-aside entry matching nothing
// refused.
TEST(Cli, GoalsJudgeTheNewestRunOfAResultsFolder) {
  // Per process: two runs of the suite at once (a local run beside CI) must not share it.
  const std::string dir = ::testing::TempDir() + "/klab_goals_" + std::to_string(getpid());
  std::system(("rm -rf " + dir + " && mkdir -p " + dir + "/res/2026-01-01_0000000_old " + dir +
               "/res/2026-02-01_0000000_new/a " + dir + "/res/2026-02-01_0000000_new/b")
                  .c_str());
  auto record = [](const char* variant, double x) {
    return std::string(R"([{"variant":")") + variant +
           R"(","family":"vector_add","problem":"n=1024","dtype":"f32","status":"ok",)" +
           R"("timestamp":"2026-01-01T00:00:00Z","flops":1024,"bytes":12288,"mode":"cold",)" +
           R"("samples_ms":[0.5],"median_ms":0.5,"baseline":{"id":"vector_add.baseline_cub",)" +
           R"("speedup":)" + std::to_string(x) + "}}]";
  };
  write_file(dir + "/res/2026-01-01_0000000_old/bench.json",
             record("vector_add.v03_vectorized", 1.50));
  write_file(dir + "/res/2026-02-01_0000000_new/a/bench.json",
             record("vector_add.v03_vectorized", 0.97));
  write_file(dir + "/res/2026-02-01_0000000_new/b/bench.json",
             record("vector_add.v04_grid_stride", 1.20));
  write_file(dir + "/res/2026-02-01_0000000_new/tuned.json",
             R"({"entries": []})");  // not records: passed over
  // 2026-02-01_0000000_new is the newer run (its records' timestamps are later).
  std::system(("sed -i s/2026-01-01/2026-02-01/ " + dir +
               "/res/2026-02-01_0000000_new/a/bench.json " + dir +
               "/res/2026-02-01_0000000_new/b/bench.json")
                  .c_str());
  auto goals = [&](const std::string& aside) {
    return R"({"set_aside": [)" + aside +
           R"(], "goals": [{"id": "9.1", "issue": 9, "text": "at cub or faster",
        "family": "vector_add", "dtype": "f32", "metric": "x_baseline",
        "against": "vector_add.baseline_cub", "at_least": 1.0, "problems": ["n=1024"]}]})";
  };
  const std::string g = dir + "/goals.json", md = dir + "/goals.md";
  write_file(g, goals(""));
  Out o = klab("goals " + g + " " + dir + "/res --md " + md);
  ASSERT_EQ(o.code, 0) << o.err;
  std::string text = read_file(md);
  EXPECT_NE(text.find("| n=1024 | 1.200x | medians | vector_add.v04_grid_stride | "
                      "2026-02-01_0000000_new | yes |"),
            std::string::npos)
      << text;
  write_file(g, goals(R"({"records": "2026-02-01_0000000_new/b", "why": "form b reverted"})"));
  o = klab("goals " + g + " " + dir + "/res --md " + md);
  ASSERT_EQ(o.code, 0) << o.err;
  text = read_file(md);
  EXPECT_NE(text.find("| n=1024 | 0.970x | medians | vector_add.v03_vectorized | "
                      "2026-02-01_0000000_new | no |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| 2026-02-01_0000000_new/b | 1 | form b reverted |"), std::string::npos)
      << text;
  write_file(g, goals(R"({"records": "2026-02-01_0000000_new/c", "why": "a typo"})"));
  o = klab("goals " + g + " " + dir + "/res --md " + md);
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("no records under it"), std::string::npos) << o.err;
  // A record file in no run folder: the rules judge run by run.
  write_file(g, goals(""));
  write_file(dir + "/loose.json", record("vector_add.v03_vectorized", 1.0));
  o = klab("goals " + g + " " + dir + "/loose.json");
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(lines(o.err), 1) << o.err;
  EXPECT_NE(o.err.find("is in no run folder"), std::string::npos) << o.err;
  // A criterion naming what klab does not have: refused, naming the goal.
  for (const char* bad : {R"("family": "vector_ad")", R"("problems": ["m=1024"])",
                          R"("against": "vector_add.baseline_cuub")", R"("dtype": "e4m3")"}) {
    std::string text = goals("");
    const std::string key = std::string(bad).substr(0, std::string(bad).find(':'));
    const size_t at = text.find(key);
    ASSERT_NE(at, std::string::npos) << key;
    text.replace(at, text.find_first_of(",}", text.find(':', at) + 1) - at, bad);
    write_file(g, text);
    o = klab("goals " + g + " " + dir + "/res");
    EXPECT_EQ(o.code, 2) << bad << "\n" << o.err;
    EXPECT_EQ(lines(o.err), 1) << bad << "\n" << o.err;
    EXPECT_NE(o.err.find("goal 9.1: "), std::string::npos) << bad << "\n" << o.err;
  }
  std::system(("rm -rf " + dir).c_str());
}

// The committed criteria parse, name registered families, and docs/goals.md holds what they judge
// against the committed runs now: a run committed without scripts/update_docs.sh fails here.
TEST(Cli, CommittedGoalsTableIsCurrent) {
  const std::string src = KLAB_SOURCE_DIR, md = ::testing::TempDir() + "/klab_goals_now_" +
                                                std::to_string(getpid()) + ".md";
  // From the source folder, with the paths update_docs.sh gives (the footer names them).
  const std::string cmd = "cd '" + src + "' && '" + std::string(KLAB_BINARY) +
                          "' goals docs/goals.json results/h200 --md '" + md + "' 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const std::string now = read_file(md), doc = read_file(src + "/docs/goals.md");
  const std::string begin = "<!-- klab:goals:begin -->\n", end = "<!-- klab:goals:end -->";
  const size_t b = doc.find(begin), e = doc.find(end);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(e, std::string::npos);
  EXPECT_EQ(doc.substr(b + begin.size(), e - b - begin.size()), now)
      << "docs/goals.md is stale: run scripts/update_docs.sh (or its `klab goals` line)";
}

// A result above 100% of its measured ceiling is an error the report must explain: marked in the
// table, one line on stderr, exit 1 (the table is still written); at 100% or below, no error.
TEST(Cli, ResultAboveItsCeilingIsAnError) {
  const std::string dir = ::testing::TempDir();
  auto record = [](double pct) {
    return std::string(
               R"([{"variant":"vector_add.v03_vectorized","family":"vector_add","problem":"n=1024",)") +
           R"("dtype":"f32","status":"ok","timestamp":"2026-01-01T00:00:00Z","flops":1024,)" +
           R"("bytes":12288,"mode":"cold","samples_ms":[0.5],"median_ms":0.5,)" +
           R"("ceiling":{"name":"copy","unit":"GB/s","value":4000,"pct":)" + std::to_string(pct) +
           "}}]";
  };
  const std::string above = dir + "/klab_above.json", below = dir + "/klab_below.json",
                    md = dir + "/klab_ceiling.md";
  write_file(above, record(104.2));
  write_file(below, record(99.5));
  const Out bad = klab("report " + above + " --md " + md);
  EXPECT_EQ(bad.code, 1) << bad.err;
  EXPECT_NE(bad.err.find("above 100% of their measured ceiling"), std::string::npos) << bad.err;
  EXPECT_NE(read_file(md).find("ABOVE CEILING"), std::string::npos);
  const Out good = klab("report " + below + " --md " + md);
  EXPECT_EQ(good.code, 0) << good.err;
  EXPECT_EQ(read_file(md).find("ABOVE CEILING"), std::string::npos);
}

// --section picks which marked section of a README the table replaces; the others stay as they
// are (a second run's table kept apart from the main one).
TEST(Cli, ReportReplacesTheNamedSectionOnly) {
  const std::string dir = ::testing::TempDir();
  const std::string json = dir + "/klab_sec.json", readme = dir + "/klab_sec.md";
  write_file(json,
             R"([{"variant":"vector_add.v03_vectorized","family":"vector_add","problem":"n=1024",)"
             R"("dtype":"f32","status":"ok","timestamp":"2026-01-01T00:00:00Z","flops":1024,)"
             R"("bytes":12288,"mode":"cold","samples_ms":[0.125],"median_ms":0.125}])");
  auto write_readme = [&] {
    write_file(readme,
               "a\n<!-- klab:results:begin -->\nMAIN\n<!-- klab:results:end -->\n"
               "<!-- klab:second:begin -->\nOLD\n<!-- klab:second:end -->\nz\n");
  };
  auto read_readme = [&] { return read_file(readme); };
  write_readme();
  const Out o = klab("report " + json + " --readme " + readme + " --section second");
  ASSERT_EQ(o.code, 0) << o.err;
  std::string text = read_readme();
  EXPECT_NE(text.find("MAIN"), std::string::npos) << text;
  EXPECT_EQ(text.find("OLD"), std::string::npos) << text;
  EXPECT_NE(text.find("0.1250"), std::string::npos) << text;
  write_readme();
  const Out missing = klab("report " + json + " --readme " + readme + " --section third");
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("klab:third:begin"), std::string::npos) << missing.err;
  EXPECT_EQ(read_readme().find("0.1250"), std::string::npos);
}

// klab profile-report renders `klab profile --json` records: the derived figures are computed
// from ncu's columns (DRAM bytes against the family's minimum, conflicts as a share of
// wavefronts, the top stalls), and a file of another kind is one clear error.
TEST(Cli, ProfileReportRendersRecords) {
  const std::string dir = ::testing::TempDir();
  const std::string rec = dir + "/klab_profiles.json", md = dir + "/klab_profiles.md";
  write_file(
      rec,
      R"([{"variant":"transpose.v06_tma_pipeline","family":"transpose","problem":"rows=64,cols=64",)"
      R"("dtype":"f32","set":"all","timestamp":"2026-11-30T12:00:00Z","flops":0,"bytes":32768,)"
      R"("device":{"present":true,"name":"NVIDIA H200"},"build":{"git_sha":"abc"},)"
      R"("kernels":[{"Kernel Name":"_Z3fooPf","gpu__time_duration.sum":"5,000",)"
      R"("dram__throughput.avg.pct_of_peak_sustained_elapsed":"76.9","dram__bytes_read.sum":"16384",)"
      R"("dram__bytes_write.sum":"16384","l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum":"10",)"
      R"("lts__t_sectors_op_read.sum":"50,000,000","lts__t_sectors_op_write.sum":"25,000,000",)"
      R"("lts__t_sectors_op_read_lookup_hit.sum":"12,500,000",)"
      R"("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum":"100",)"
      R"("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio":"13.76",)"
      R"("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio":"13.96",)"
      R"("smsp__average_warps_issue_stalled_wait_per_issue_active.ratio":"1.71"}]}])");
  const Out o = klab("profile-report " + rec + " --md " + md);
  ASSERT_EQ(o.code, 0) << o.err;
  const std::string text = read_file(md);
  EXPECT_NE(text.find("### transpose"), std::string::npos) << text;
  EXPECT_NE(text.find("| 5.0 |"), std::string::npos) << text;    // 5,000 ns = 5.0 us
  EXPECT_NE(text.find("76.9%"), std::string::npos) << text;      // DRAM % of peak
  EXPECT_NE(text.find("1.00x"), std::string::npos) << text;      // 32768 B moved / 32768 minimal
  EXPECT_NE(text.find("10.0% / -"), std::string::npos) << text;  // 10 of 100 load wavefronts
  EXPECT_NE(text.find("long_scoreboard 13.96, barrier 13.76, wait 1.71"), std::string::npos)
      << text;
  EXPECT_NE(text.find("`foo`"), std::string::npos) << text;  // demangled, arguments dropped
  EXPECT_NE(text.find("measured on NVIDIA H200"), std::string::npos) << text;
  // 50 M read sectors of 32 B = 1.60 GB, a quarter of them hits; 25 M written = 0.80 GB.
  EXPECT_NE(text.find("| 1.60 GB (25.0%) / 0.80 GB |"), std::string::npos) << text;
  // No record measured the XU pipe: no column for it.
  EXPECT_EQ(text.find("XU pipe"), std::string::npos) << text;

  // A record with the XU (MUFU) pipe's rate adds its column after the tensor pipe's.
  const std::string rec_xu = dir + "/klab_profiles_xu.json", md_xu = dir + "/klab_profiles_xu.md";
  std::string with_xu = read_file(rec);
  with_xu.insert(with_xu.find(R"("gpu__time_duration.sum")"),
                 R"("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active":"58.2",)"
                 R"("sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active":"61.5",)");
  write_file(rec_xu, with_xu);
  const Out oxu = klab("profile-report " + rec_xu + " --md " + md_xu);
  ASSERT_EQ(oxu.code, 0) << oxu.err;
  const std::string text_xu = read_file(md_xu);
  EXPECT_NE(text_xu.find("| tensor pipe | XU pipe (MUFU) | occupancy"), std::string::npos)
      << text_xu;
  EXPECT_NE(text_xu.find("| 58.2% | 61.5% |"), std::string::npos) << text_xu;

  // --section names the marked section of --readme to replace.
  const std::string readme = dir + "/klab_profile_readme.md";
  write_file(readme, "a\n<!-- klab:profile-big:begin -->\nold\n<!-- klab:profile-big:end -->\nb\n");
  const Out sec = klab("profile-report " + rec + " --readme " + readme + " --section profile-big");
  ASSERT_EQ(sec.code, 0) << sec.err;
  const std::string updated = read_file(readme);
  EXPECT_EQ(updated.find("old"), std::string::npos) << updated;
  EXPECT_NE(updated.find("1.60 GB (25.0%)"), std::string::npos) << updated;

  // A results file is not a profile file: one line, exit 2.
  const std::string other = dir + "/klab_not_profiles.json";
  write_file(other, R"([{"variant":"x.v01","family":"x"}])");
  const Out bad = klab("profile-report " + other);
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
}

// `klab sass --json` records (set "sass") get their own table beside the Nsight Compute one:
// the main loop's instructions per iteration and the math share computed from them.
TEST(Cli, ProfileReportRendersSassRecords) {
  const std::string dir = ::testing::TempDir();
  const std::string rec = dir + "/klab_sass.json", md = dir + "/klab_sass.md";
  write_file(
      rec,
      R"([{"variant":"sgemm.v09_warptile","family":"sgemm","problem":"m=64,n=64,k=64",)"
      R"("dtype":"f32","set":"sass","timestamp":"2026-11-30T12:00:00Z","flops":0,"bytes":0,)"
      R"("kernels":[{"Kernel Name":"_Z3barv","sass__instructions":"1821",)"
      R"("sass__loop_instructions":"1200","sass__loop_math":"1024","sass__loop_math_op":"FFMA",)"
      R"("sass__loop_shared":"74","sass__loop_global":"4","sass__loop_barriers":"1"}]}])");
  const Out o = klab("profile-report " + rec + " --md " + md);
  ASSERT_EQ(o.code, 0) << o.err;
  const std::string text = read_file(md);
  EXPECT_NE(text.find("### sgemm — SASS instruction mix"), std::string::npos) << text;
  EXPECT_NE(text.find("| 1821 | 1200 | 1024 FFMA (85.3%) | 74 | 4 | 1 |"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("Nsight Compute\n\n|"), std::string::npos) << text;  // no ncu table
  // Without the bank estimate in any record, no column for it.
  EXPECT_EQ(text.find("FFMA with a bank conflict"), std::string::npos) << text;

  // A record with it (`klab sass` of this build) adds the column, "-" for the others.
  const std::string rec2 = dir + "/klab_sass_banks.json", md2 = dir + "/klab_sass_banks.md";
  std::string both = read_file(rec);
  both.insert(both.rfind(']'),
              R"(,{"variant":"sgemm.v16_autotuned_multistage","family":"sgemm",)"
              R"("problem":"m=64,n=64,k=64","dtype":"f32","set":"sass",)"
              R"("timestamp":"2026-11-30T12:00:00Z","flops":0,"bytes":0,)"
              R"("kernels":[{"Kernel Name":"_Z3bazv","sass__instructions":"2252",)"
              R"("sass__loop_instructions":"1122","sass__loop_math":"1024",)"
              R"("sass__loop_math_op":"FFMA","sass__loop_shared":"48","sass__loop_global":"6",)"
              R"("sass__loop_barriers":"3","sass__loop_ffma":"1024",)"
              R"("sass__loop_ffma_bank_conflicts":"55"}]})");
  write_file(rec2, both);
  const Out o2 = klab("profile-report " + rec2 + " --md " + md2);
  ASSERT_EQ(o2.code, 0) << o2.err;
  const std::string text2 = read_file(md2);
  EXPECT_NE(text2.find("| barriers | FFMA with a bank conflict (est.) |"), std::string::npos)
      << text2;
  EXPECT_NE(text2.find("| 48 | 6 | 3 | 55 of 1024 (5.4%) |"), std::string::npos) << text2;
  EXPECT_NE(text2.find("| 74 | 4 | 1 | - |"), std::string::npos) << text2;
}

// klab report --memory renders the device memory records (klab memory's) as a table into a
// README section; records without device memory are no such table; klab memory's bad requests
// are one line before any GPU work, and without a GPU it says so.
TEST(Cli, ReportRendersTheMemoryTable) {
  const std::string dir = ::testing::TempDir();
  const std::string json = dir + "/klab_mem.json", readme = dir + "/klab_mem.md",
                    plain = dir + "/klab_mem_plain.json";
  write_file(
      json,
      R"([{"variant":"attention.v01_materialised","family":"attention",)"
      R"("problem":"b=1,nq=1024,nkv=1024,hq=32,hkv=32,d=128,causal=1,amp=1","dtype":"bf16",)"
      R"("status":"ok","timestamp":"2026-12-03T00:00:00Z","flops":1,"bytes":1,)"
      R"("device_memory":{"tensors":33685504,"workspace":134217728,"peak_measured":169869312,)"
      R"("free":149000000000,"method":"a test's method"}},)"
      R"({"variant":"attention.v01_materialised","family":"attention",)"
      R"("problem":"b=1,nq=65536,nkv=65536,hq=32,hkv=32,d=128,causal=1,amp=1","dtype":"bf16",)"
      R"("status":"skipped","reason":"does not fit: needs 514.0 GiB (tensors 2.0 GiB + workspace )"
      R"(512.0 GiB), 139.0 GiB free","timestamp":"2026-12-03T00:00:00Z","flops":1,"bytes":1,)"
      R"("device_memory":{"tensors":2155872256,"workspace":549755813888,"method":"refused"}}])");
  write_file(readme, "a\n<!-- klab:memory:begin -->\nOLD\n<!-- klab:memory:end -->\nz\n");
  const Out o = klab("report " + json + " --memory --readme " + readme + " --section memory");
  ASSERT_EQ(o.code, 0) << o.err;
  const std::string text = read_file(readme);
  EXPECT_EQ(text.find("OLD"), std::string::npos) << text;
  EXPECT_NE(text.find("| 32.1 MiB | 128.0 MiB | 162.0 MiB | 5.04x | 129.9 MiB |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("skipped: does not fit: needs 514.0 GiB"), std::string::npos) << text;
  EXPECT_NE(text.find("from 2 record(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("a test's method"), std::string::npos) << text;
  EXPECT_EQ(text.rfind("z\n"), text.size() - 2) << "the rest of the file stays";

  write_file(plain,
             R"([{"variant":"vector_add.v03_vectorized","family":"vector_add","problem":"n=1024",)"
             R"("dtype":"f32","status":"ok","timestamp":"2026-01-01T00:00:00Z","flops":1024,)"
             R"("bytes":12288,"mode":"cold","samples_ms":[0.5],"median_ms":0.5}])");
  const Out none = klab("report " + plain + " --memory");
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("no records with device memory"), std::string::npos) << none.err;
  EXPECT_EQ(klab("report " + json + " --memory --plot x.png").code, 2);
}

// klab timeline --from renders a record (written by --json on a GPU) into a README section.
TEST(Cli, TimelineRendersARecord) {
  const std::string dir = ::testing::TempDir();
  const std::string json = dir + "/timeline.json", readme = dir + "/timeline_readme.md";
  write_file(json,
             R"({"kind":"timeline","variant":"decode_attention.v11_cluster_merge",)"
             R"("family":"decode_attention","problem":"b=1","dtype":"bf16",)"
             R"("check_passed":true,"status":"ok","launches":3,"span_us_per_launch":[9,8,10],)"
             R"("timeline":{"span_us":9,"clock_mhz":1980,"timer_step_ns":32,"ctas":128,)"
             R"("sms":128,"phases":[{"name":"start","ctas":128,"at_min_us":0,)"
             R"("at_median_us":0.5,"at_max_us":1.25,"own_median_us":0,"own_max_us":0}]},)"
             R"("machine":{"device":{"name":"NVIDIA H200"},"build":{"git_sha":"abc"}},)"
             R"("timestamp":"2026-12-04T00:00:00Z"})");
  write_file(readme, "a\n<!-- klab:tl:begin -->\nOLD\n<!-- klab:tl:end -->\nz\n");
  const Out o = klab("timeline --from " + json + " --readme " + readme + " --section tl");
  EXPECT_EQ(o.code, 0) << o.err;
  const std::string md = read_file(readme);
  EXPECT_EQ(md.find("OLD"), std::string::npos) << md;
  EXPECT_NE(md.find("| start | 128 | 0.00 | 0.50 | 1.25 |"), std::string::npos) << md;
  EXPECT_NE(md.find("8.00 - 10.00"), std::string::npos) << md;
  EXPECT_NE(md.find("NVIDIA H200"), std::string::npos) << md;
}

TEST(Cli, MemoryRefusesBadRequestsInOneLine) {
  std::vector<std::pair<std::string, std::string>> cases{
      {"memory", "targets is required"},
      {"memory vector_add --shape ''", "shape is empty"},
      {"memory vector_add.v00_cpu --shape n=8", "runs on the CPU"}};
#if KLAB_HAS_CUDA  // a family's GPU rungs are registered only in the CUDA build
  cases.push_back({"memory vector_add --shape m=8", "unknown dimension"});
  cases.push_back({"memory vector_add --layout bhnd", "--layout needs --shape"});
#else
  cases.push_back({"memory vector_add --shape n=8", "has no GPU variants"});
#endif
  for (const auto& [args, expect] : cases) {
    const Out o = klab(args);
    EXPECT_EQ(o.code, 2) << args << "\n" << o.err;
    EXPECT_EQ(lines(o.err), 1) << args << "\n" << o.err;
    EXPECT_NE(o.err.find(expect), std::string::npos) << args << "\n" << o.err;
  }
#if KLAB_HAS_CUDA
  const Out probe = klab("memory vector_add.v01_naive --shape n=8");
  if (probe.err.find("needs a GPU") == std::string::npos) GTEST_SKIP() << "a GPU is present";
  EXPECT_EQ(probe.code, 2);
  EXPECT_EQ(lines(probe.err), 1) << probe.err;
#endif
}

// `klab check --shape S --awkward` checks S and the family's awkward shapes; without
// --awkward, S alone.
TEST(Cli, CheckWithShapeAndAwkwardAddsTheAwkwardShapes) {
  const std::string dir = ::testing::TempDir();
  const std::string one = dir + "/check_shape.json", both = dir + "/check_shape_awkward.json";
  const std::string base = "check vector_add.v00_cpu --shape n=1000 --quiet --json ";
  ASSERT_EQ(klab(base + one).code, 0);
  ASSERT_EQ(klab(base + both + " --awkward").code, 0);
  const std::string a = read_file(one), b = read_file(both);
  EXPECT_EQ(occurrences(a, "\"problem\""), 1) << a;
  EXPECT_GT(occurrences(b, "\"problem\""), 1) << b;
  EXPECT_NE(b.find("\"n=1000\""), std::string::npos);
}

// Every checked record carries its inputs' seed, fresh or asked for, and `--seed` with it draws
// the same inputs again: the same check, to the last bit of its error.
TEST(Cli, CheckRecordsTheSeedThatReplaysIt) {
  const std::string dir = ::testing::TempDir();
  const std::string fresh = dir + "/check_fresh_seed.json", again = dir + "/check_seed_again.json";
  const std::string base = "check vector_add.v00_cpu --shape n=1000 --dist heavy --quiet --json ";
  ASSERT_EQ(klab(base + fresh).code, 0);
  const std::string a = read_file(fresh);
  const size_t at = a.find("\"seed\": ");
  ASSERT_NE(at, std::string::npos) << a.substr(0, 400);
  const std::string seed = a.substr(at + 8, a.find_first_of(",\n", at) - at - 8);
  ASSERT_NE(seed, "0");
  ASSERT_EQ(klab(base + again + " --seed " + seed).code, 0);
  const std::string b = read_file(again);
  EXPECT_NE(b.find("\"seed\": " + seed), std::string::npos) << b.substr(0, 400);
  auto field = [](const std::string& text, const std::string& key) {
    const size_t k = text.find("\"" + key + "\": ");
    return k == std::string::npos ? std::string() : text.substr(k, text.find('\n', k) - k);
  };
  for (const char* key : {"max_abs", "max_rel", "rel_l2"}) {
    EXPECT_FALSE(field(a, key).empty()) << key;
    EXPECT_EQ(field(a, key), field(b, key)) << key;
  }
}

// With a named variant, --shape S that it cannot run is a bad request; the awkward shapes
// --awkward adds are the family's, and one the variant refuses is a skipped record, not an error
// (the CPU GEMM refuses hgemm's 4095 x 4097 x 4096 as too slow for the host).
TEST(Cli, CheckSkipsAwkwardShapesTheNamedVariantRefuses) {
  const std::string json = ::testing::TempDir() + "/check_awkward_refused.json";
  const Out ok = klab(
      "check hgemm.v00_cpu --shape m=64,n=64,k=64 --dtype bf16 --awkward --quiet "
      "--json " +
      json);
  ASSERT_EQ(ok.code, 0) << ok.err;
  const std::string text = read_file(json);
  EXPECT_NE(text.find("\"status\": \"skipped\""), std::string::npos) << text.substr(0, 400);
  EXPECT_NE(text.find("m=64,n=64,k=64"), std::string::npos);
  const Out bad = klab("check hgemm.v00_cpu --shape m=4095,n=4097,k=4096 --dtype bf16 --quiet");
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("cannot run"), std::string::npos) << bad.err;
}

// `klab bench --interleave` over CPU rungs: each is checked and timed alone, as without the
// option (only GPU variants are timed launch by launch), and no record claims a pairing.
TEST(Cli, InterleaveTimesCpuRungsAlone) {
  const std::string out = ::testing::TempDir() + "/bench_interleave_cpu.json";
  const Out o = klab(
      "bench vector_add.v00_cpu vector_add.cpu01_scalar --shape n=1000 "
      "--max-time 0.02 --interleave --quiet --json " +
      out);
  ASSERT_EQ(o.code, 0) << o.err;
  const std::string text = read_file(out);
  EXPECT_EQ(occurrences(text, "\"median_ms\""), 2) << text;
  EXPECT_EQ(text.find("\"paired\""), std::string::npos) << text;
  EXPECT_EQ(text.find("interleaved"), std::string::npos) << text;  // no GPU method named
}

// scripts/measure_ab.sh, run against stub builds (a klab that only writes its --json file and
// prints one paired row): each build's benches in turn, pass after pass, in the ab/<build><pass>/
// layout update_docs.sh's h100_ab reads, with each build's commit in the manifest; bad input is
// one line and exit 2 before anything is written.
TEST(Cli, MeasureAbRunsTheBuildsInTurn) {
  const std::string dir = ::testing::TempDir() + "/klab_measure_ab";
  ASSERT_EQ(sh("rm -rf " + dir + " && mkdir -p " + dir + "/pa/build/apps/klab " + dir +
               "/pb/build/apps/klab")
                .code,
            0);
  const std::string stub = R"(#!/usr/bin/env bash
json=""; prev=""
for a in "$@"; do [ "$prev" = --json ] && json=$a; prev=$a; done
[ -n "$json" ] && echo '[]' > "$json"
[ "$1" = bench ] && echo "| $2 | fam x=1 bf16 | $3 | 0.990x | 0.991x | 0.98x - 1.00x | 5 |"
exit 0
)";
  for (const char* b : {"pa", "pb"}) {
    const std::string k = dir + "/" + b + "/build/apps/klab/klab";
    write_file(k, stub);
    write_file(dir + "/" + b + "/build/git_sha.txt", std::string(b) + "-sha\n");
    ASSERT_EQ(sh("chmod +x " + k).code, 0);
  }
  const std::string script = std::string(KLAB_SOURCE_DIR) + "/scripts/measure_ab.sh";
  const std::string out = dir + "/out";
  const Out o = sh("KLAB_AB_SHAPES='x=1,y=2 x=3' KLAB_AB_PASSES=2 bash " + script + " " + out +
                   " a=" + dir + "/pa b=" + dir + "/pb -- fam.v01 fam.baseline");
  ASSERT_EQ(o.code, 0) << o.err;
  for (const char* run : {"a1", "b1", "a2", "b2"})
    for (const char* shape : {"x1_y2", "x3"})
      EXPECT_EQ(read_file(out + "/ab/" + run + "/bench_" + shape + ".json"), "[]\n")
          << run << " " << shape;
  const std::string manifest = read_file(out + "/MANIFEST.md");
  EXPECT_NE(manifest.find("`a`: pa-sha"), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("`b`: pb-sha"), std::string::npos) << manifest;
  // The builds in turn within a pass: a1, b1, then a2, b2 (the summary's lines in order).
  const std::string summary = read_file(out + "/summary.txt");
  const auto a2 = summary.find("a2 x=3"), b1 = summary.find("b1 x=3");
  ASSERT_NE(a2, std::string::npos) << summary;
  ASSERT_NE(b1, std::string::npos) << summary;
  EXPECT_LT(b1, a2) << summary;
  EXPECT_NE(summary.find("fam.v01  0.991x"), std::string::npos) << summary;

  // Bad input: one line, exit 2, no output folder.
  const std::string none = dir + "/none";
  for (const std::string& args :
       {" " + none + " a=" + dir + "/pa -- fam.v01",                        // one build
        " " + none + " a=" + dir + "/pa b=" + dir + "/missing -- fam.v01",  // no pack there
        " " + none + " a=" + dir + "/pa b=" + dir + "/pb",                  // no variant
        " " + none + " a=" + dir + "/pa " + dir + "/pb -- fam.v01"}) {      // not NAME=PACK
    const Out bad = sh("KLAB_AB_SHAPES=x=1 bash " + script + args);
    EXPECT_EQ(bad.code, 2) << args << "\n" << bad.err;
    EXPECT_EQ(lines(bad.err), 1) << args << "\n" << bad.err;
  }
  const Out no_shapes = sh("KLAB_AB_SHAPES= bash " + script + " " + none + " a=" + dir +
                           "/pa b=" + dir + "/pb -- fam.v01");
  EXPECT_EQ(no_shapes.code, 2) << no_shapes.err;
  EXPECT_EQ(lines(no_shapes.err), 1) << no_shapes.err;
  EXPECT_NE(sh("test -e " + none).code, 0);
}

// scripts/measure_open_goals.sh's GEMM steps read hgemm's committed table at launch, from
// kernels/hgemm/tuned.json under the working folder: run from elsewhere they would time built-in
// choices, so the script refuses them in one line and exit 2 before touching a GPU; an unknown
// step is refused the same way.
TEST(Cli, MeasureOpenGoalsRefusesGemmStepsWithoutTheTable) {
  const std::string dir = ::testing::TempDir() + "/klab_goals_no_table";
  ASSERT_EQ(sh("rm -rf " + dir + " && mkdir -p " + dir).code, 0);
  const std::string script = std::string(KLAB_SOURCE_DIR) + "/scripts/measure_open_goals.sh";
  for (const char* steps : {"g13", "fa3 tune", "small", "v24"}) {
    const Out o = sh("cd " + dir + " && KLAB_GOALS_STEPS='" + steps + "' bash " + script + " " +
                     dir + "/build " + dir + "/out");
    EXPECT_EQ(o.code, 2) << steps << ": " << o.err;
    EXPECT_NE(o.err.find("kernels/hgemm/tuned.json is not under"), std::string::npos) << o.err;
    EXPECT_EQ(lines(o.err), 1) << o.err;
  }
  const Out bad =
      sh("cd " + std::string(KLAB_SOURCE_DIR) + " && KLAB_GOALS_STEPS='g13 nope' bash " + script +
         " " + dir + "/build " + dir + "/out");
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("no step 'nope'"), std::string::npos) << bad.err;
}
