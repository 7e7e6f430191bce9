#pragma once
// The klab CLI's commands. Each returns the process exit code; UsageError escapes to main().
#include <nlohmann/json_fwd.hpp>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "klab/harness/result.hpp"
#include "klab/harness/runner.hpp"

namespace klab::cli {

struct Common {
  std::string shape, dtype, json_path, dist = "normal";  // dtype empty: every headline dtype
  std::string layout;                                    // empty: the family's default
  bool hot = false, awkward = false, quiet = false;
  int64_t misalign = 0;
  uint64_t seed = 0;
  double noise = 0.01, max_time = 2.0;
  /// bench/run: every variant of a problem benchmarked once per round, samples pooled
  /// (merge_rounds); max_time is split between the rounds.
  int rounds = 1;
  /// bench/run: the GPU variants of a problem timed launch by launch in rounds, the speed-up over
  /// the baseline also from the rounds' paired samples (bench_gpu_interleaved).
  bool interleave = false;
  /// bench --interleave: every timed sample written to this file (BenchConfig::samples_path).
  std::string samples_path;
  std::vector<std::string> targets;  // families or variant ids
  std::string device = "all";        // run only the gpu or the cpu rungs of the selected families
};

int cmd_list(const Common& c);
int cmd_run(const Common& c);
int cmd_check(const Common& c);
int cmd_bench(const Common& c);
int cmd_sweep(const Common& c, const std::vector<int>& blocks, const std::string& plot);
int cmd_ceilings(bool remeasure, const std::string& json_path,
                 const std::vector<std::string>& read_at = {});
/// A size in bytes: digits, then optionally K, M or G (powers of 1024, "iB" allowed after them);
/// UsageError naming `option` otherwise, or when it is not a positive multiple of 16.
int64_t parse_byte_size(const std::string& text, const std::string& option);
int cmd_report(const std::vector<std::string>& inputs, const std::string& out_md,
               const std::string& plot, const std::string& readme, const std::string& compare_with,
               double max_delta_pct, const std::vector<std::string>& families = {},
               const std::string& section = "results", bool memory = false, bool fast_state = false,
               const std::vector<std::string>& against = {}, bool steps = false,
               bool processes = false);

// table.cpp
/// The side-by-side table: variant, problem, time, TFLOP/s, GB/s, % ceiling, x baseline, check.
std::string format_table(const std::vector<Result>& results, bool markdown);
/// A tuned rung's records (Result::tuned): the configuration each ran and where the choice came
/// from, flagged where it is not the committed table's dispatch; empty when none is tuned.
std::string tuned_summary(const std::vector<Result>& results, bool markdown);
/// Records above 100% of their measured ceiling (marked in the table): an error to explain, never
/// a result. Says so on stderr in one line when there are any.
int report_above_ceiling(const std::vector<Result>& results);
/// Writes records as a JSON array ("-" = stdout).
void write_json(const std::vector<Result>& results, const std::string& path);
std::vector<Result> read_json(const std::string& path);
/// The records of a parsed result file (`path` names it in errors).
std::vector<Result> results_of(const nlohmann::json& j, const std::string& path);
/// The JSON in a file; UsageError when it cannot be read or parsed (one line, naming the file).
nlohmann::json read_json_file(const std::string& path);
/// A JSON document of result records (an array of them, or one).
bool is_results_json(const nlohmann::json& j);
/// A klab ceilings file (`klab ceilings --json`, or the cache): {"ceilings": [...]}.
bool is_ceilings_json(const nlohmann::json& j);
enum class JsonKind { results, ceilings };
using InputVisitor = std::function<void(const std::string& input, const std::string& path,
                                        JsonKind kind, const nlohmann::json& j)>;
/// Every JSON file of `inputs`, each parsed once: a file given by name (a ceilings file, else
/// taken for records), or the files of a folder searched recursively, sorted, where only record
/// and ceilings files are visited (run folders hold tune tables and profiles too). UsageError for
/// a missing input.
void for_each_input_json(const std::vector<std::string>& inputs, const InputVisitor& each);
/// The record files of `inputs` (for_each_input_json's) and their records; UsageError when
/// there are none.
struct ResultFiles {
  std::vector<std::string> files;
  std::vector<Result> records;
};
ResultFiles read_result_files(const std::vector<std::string>& inputs);
/// A ceiling bounds what the hardware can do: of several measurements of one, keep the highest (a
/// lower one is a throttled or disturbed run; the ceilings record their SM clock).
void keep_highest(std::map<std::string, double>& m, const std::string& name, double value);
/// Each (name, value) of a ceilings file's measurements with a positive value.
void each_ceiling(const nlohmann::json& j,
                  const std::function<void(const std::string&, double)>& each);
/// Writes report markdown: to `out_md` when given, else to stdout when `to_stdout` and no
/// `readme`; and into `readme`'s marked section `section` when given.
void emit_markdown(const std::string& md, const std::string& out_md, const std::string& readme,
                   const std::string& section, bool to_stdout);
/// One record per (variant, problem, dtype, block size, mode): where several inputs measured the
/// same thing (a rerun, an older run's file), the newest by timestamp; order otherwise kept.
std::vector<Result> newest_per_record(std::vector<Result> results);
/// Replaces the text between <!-- klab:NAME:begin --> and <!-- klab:NAME:end --> in `path`
/// (the rest of the file is hand-written prose). UsageError when the file or a marker is missing.
void replace_marked_section(const std::string& path, const std::string& name,
                            const std::string& md);

// commands.cpp
class Progress;
/// One problem's variants benchmarked launch by launch (`klab bench --interleave`, `klab tune
/// --interleave`): each checked and prepared with its device sets held, then the GPU ones timed
/// together (bench_held_interleaved); a CPU variant is timed alone. Records appended to `fam`
/// in the variants' order.
void bench_problem_interleaved(const Family& f, const std::vector<const Variant*>& variants,
                               const Problem& p, const RunOptions& opt, ProblemInputs& shared,
                               Progress& progress, std::vector<Result>& fam);

// progress.cpp
/// "[3/20] label": rewritten in place on a terminal, plain lines otherwise; to stderr.
class Progress {
 public:
  Progress(int total, bool quiet);
  ~Progress();
  void step(const std::string& label);

 private:
  int total_, done_ = 0;
  bool tty_, quiet_;
};

}  // namespace klab::cli
