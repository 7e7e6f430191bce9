#pragma once
// Runs one variant on one problem: inputs, check against the reference, benchmark, result.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "klab/harness/registry.hpp"
#include "klab/harness/result.hpp"

namespace klab {

struct RunOptions {
  bool check = true;
  bool bench = true;
  /// One check per distribution, each with fresh inputs.
  std::vector<Dist> dists{Dist::normal};
  uint64_t seed = 0;  ///< 0: a fresh seed per run (recorded); else reproducible
  BenchConfig bench_cfg;
  int block_threads = 0;
};

/// One check's inputs and what is made from them, shared by every variant of a problem.
struct CheckInputs {
  Dist dist = Dist::normal;
  uint64_t seed = 0;
  Buffers host;                        ///< the inputs (and inouts) drawn; outputs' copies unused
  std::optional<Reference> reference;  ///< the fp64 reference (whole or sampled), on first use
  std::optional<Reference> vendor;     ///< the vendor baseline's whole outputs, on first use
};

/// What the variants of one problem share, made on first use and kept for the problem: the
/// inputs of each check (one set per distribution, drawn once from its own seed), their fp64
/// reference and the vendor baseline's whole output (Family::gpu_reference_variant). The CLI
/// keeps one per problem across its variants and rounds, so that a problem's inputs are drawn,
/// its reference computed and its vendor output made once, not once per variant and round; every
/// variant is then judged on the same inputs against the same reference, as strictly as before.
struct ProblemInputs {
  std::string key;  ///< the family and problem the sets were made for (a new problem clears them)
  /// The sets' base seed: RunOptions::seed, or one drawn when the key was made (below 2^53, so a
  /// JSON record holds it exactly); check k's inputs come from splitmix64(seed + k).
  uint64_t seed = 0;
  std::vector<std::unique_ptr<CheckInputs>> checks;  ///< by check index (RunOptions::dists)
  Buffers outputs;  ///< scratch: a GPU variant's outputs read back (host copies of outputs only)
};

/// Never throws for a variant's own failure: it is recorded in Result::status.
/// Throws UsageError only for requests that are wrong (a GPU variant without a GPU).
/// Host seconds per phase go to Result::host_seconds (and stderr with KLAB_TRACE_PHASES=1).
Result run_variant(const Family& f, const Variant& v, const Problem& p, const RunOptions& opt);
/// The same, with the inputs, reference and vendor outputs of `shared` (made there on first use).
Result run_variant(const Family& f, const Variant& v, const Problem& p, const RunOptions& opt,
                   ProblemInputs& shared);

/// A GPU variant's device sets and prepared launches, held for an interleaved benchmark.
struct HeldLaunches;
/// run_variant with the benchmark left to the caller: a GPU variant that passed its refusals is
/// checked as run_variant checks it (opt.check), and with opt.bench its device sets and prepared
/// launches are handed over in *held (left null otherwise: a refusal, an error, a CPU variant,
/// which is timed as run_variant times it). `held` null: run_variant.
Result run_variant_held(const Family& f, const Variant& v, const Problem& p, const RunOptions& opt,
                        ProblemInputs& shared, std::shared_ptr<HeldLaunches>* held);
/// Enqueues the held launch of the first input set on `stream` (`klab timeline`).
void launch_held(const HeldLaunches& held, Stream stream);
/// Times the held variants of one problem launch by launch (bench_gpu_interleaved), one record
/// each: its timing, throughput, and, beside the first baseline variant among them, its paired
/// speed-up over it (Result::paired). The held sets are released by the caller.
void bench_held_interleaved(const Family& f, const std::vector<Result*>& results,
                            const std::vector<std::shared_ptr<HeldLaunches>>& held,
                            const BenchConfig& cfg);

/// The refusals decided before anything is allocated, each one line (Result::reason): a dtype
/// the variant does not take; for a GPU variant, no device or too old a one (`d`: device_info()
/// in run_variant, a made-up one in tests), then tensors + workspace above the device's free
/// memory ("does not fit: needs X GiB (...), Y GiB free", through device_memory_now()), then the
/// variant's own can_implement. For a GPU variant on a device it fills r.device_memory's tensors,
/// workspace and free memory (nothing measured yet).
Status refuse_before_allocation(const Family& f, const Variant& v, const Problem& p,
                                const DeviceInfo& d, Result& r);

/// Host buffers of every tensor of p (f.tensors), sized and zeroed, with no device copies; `data`
/// is left null (callers that hand the buffers to host code point it at `host`).
Buffers make_host_buffers(const Family& f, const Problem& p);
/// The host copies' inputs from `seed`: each drawn from `dist` (or its spec's fixed one), then
/// each built by its spec's builder (block tables, lengths, sentinels), in the family's order.
void fill_inputs(Buffers& b, Dist dist, uint64_t seed);

/// Fills Result::baseline for every record of the same problem: the first successful baseline
/// variant on the same kind of device.
void attach_baselines(std::vector<Result>& results);

/// Fills throughput and ceiling fields from counts and timing.
void attach_throughput(const Family& f, Result& r);

/// One record from the rounds of one variant at one problem (`klab bench --rounds`: every
/// variant of a problem runs once per round, so slow drifts of clock and power between the
/// first variant and the last fall on all of them alike). The first round's record (its check,
/// its setup) with every round's kept samples pooled and the statistics, clocks, dropped and
/// throttled counts recomputed over them; the method names the rounds; host seconds summed. A round that did not
/// time (skipped, error) is the record returned: a variant fails as a whole.
Result merge_rounds(const Family& f, std::vector<Result> rounds);

}  // namespace klab
