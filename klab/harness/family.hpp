#pragma once
// A family is one operation (vector add, transpose, sgemm, ...); a variant is one rung of its
// ladder. Families plug into the harness; the harness never includes a family.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "klab/harness/buffers.hpp"
#include "klab/harness/problem.hpp"
#include "klab/harness/sampling.hpp"

struct CUstream_st;

namespace klab {

using Stream = CUstream_st*;  ///< cudaStream_t without the CUDA headers (nullptr on the CPU).

enum class Device : uint8_t { cpu, gpu };

/// ok, or the reason a variant cannot run a problem.
struct Status {
  std::string reason;  ///< empty when ok
  bool ok() const { return reason.empty(); }
  static Status yes() { return {}; }
  static Status no(std::string why) { return {std::move(why)}; }
};

/// Launch-time knobs a sweep may set; 0 means "the rung's own default".
struct LaunchArgs {
  Stream stream = nullptr;
  int block_threads = 0;
  /// Launch with programmatic stream serialization (klab/device/pdl.cuh): the kernel may start
  /// before the previous one in the stream ends. Only kernels that wait on the grid dependency
  /// take it (the others launch as usual); a rung of a chain sets it (attention_block v03).
  bool programmatic = false;
};

struct VariantInfo {
  std::string id;       ///< "sgemm.v05_2d_blocktile"
  std::string summary;  ///< one line: what this rung adds
  int min_sm = 0;       ///< e.g. 90 for sm_90; 0 for CPU variants
  std::vector<DType> dtypes;
  bool baseline = false;  ///< vendor library (cuBLAS, cuDNN, OpenBLAS, ...)
  Device device = Device::gpu;
  bool sweepable = false;  ///< honours LaunchArgs::block_threads
};

/// An enqueue-only launch, made once per problem and buffers by a variant's prepare step.
using PreparedLaunch = std::function<void(Stream)>;

struct Variant {
  VariantInfo info;
  /// Empty means "every problem of a supported dtype".
  std::function<Status(const Problem&)> can_implement;
  /// Enqueues the work: no allocation, no synchronisation. Scratch memory comes from
  /// Buffers::workspace, sized by `workspace_bytes` and allocated by the harness.
  std::function<void(const Problem&, Buffers&, const LaunchArgs&)> launch;
  /// Device scratch the launch needs (e.g. CUB temp storage); empty means none. Zeroed once when
  /// allocated: a launch that leaves counters in it must reset them itself (hgemm v17).
  std::function<size_t(const Problem&)> workspace_bytes;
  /// Optional setup, once per problem and buffers: what does not change between launches (typed
  /// pointers, tensor maps, the tuned configuration, shared-memory opt-in, vendor plans). The
  /// launch it returns only enqueues on the stream it is given. Empty: `launch` does it all.
  std::function<PreparedLaunch(const Problem&, Buffers&, const LaunchArgs&)> prepare;
};

/// v's enqueue-only launch on (p, b): its prepare step's, or its `launch` bound to p and b.
PreparedLaunch prepare_launch(const Variant& v, const Problem& p, Buffers& b,
                              const LaunchArgs& args);

/// A GPU rung's common fields (the families' own factories add their id prefix, dtypes, min SM).
inline Variant gpu_variant_of(
    std::string id, std::string summary, int min_sm, std::vector<DType> dtypes,
    std::function<void(const Problem&, Buffers&, const LaunchArgs&)> launch) {
  Variant v;
  v.info.id = std::move(id);
  v.info.summary = std::move(summary);
  v.info.min_sm = min_sm;
  v.info.dtypes = std::move(dtypes);
  v.info.device = Device::gpu;
  v.launch = std::move(launch);
  return v;
}

/// Minimal work: each input read once, each output written once.
struct Counts {
  double flops = 0;
  double bytes = 0;
};

/// Pass when, element by element, |out - ref| <= atol + rtol * |ref| + mtol * magnitude, and the
/// relative L2 error over the whole output is <= max_rel_l2. `magnitude` is the reference's sum
/// of |terms| (the quantity floating-point error bounds scale with, e.g. sum_k |a_ik b_kj| in a
/// GEMM). Each family says why its numbers are what they are.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
  double mtol = 0;
  double max_rel_l2 = 0;
};

/// One fp64 reference output; `magnitude` is optional (empty: not used). With `index` empty it
/// covers every element; otherwise value[s] (and magnitude[s]) is the reference of flat element
/// index[s] (sorted, unique): a sampled reference.
struct RefOutput {
  std::vector<double> value;
  std::vector<double> magnitude;
  std::vector<int64_t> index = {};
};
/// Reference outputs, by output tensor name.
using Reference = std::map<std::string, RefOutput>;

struct Family {
  std::string name;
  std::string summary;
  std::vector<std::string> dims;  ///< required dimension names, in display order
  std::vector<std::string>
      zero_ok_dims;  ///< dimensions that may be 0 (a padding); others must be > 0
  /// Dimensions of `dims` that a shape may leave out, with the value they then take (attention's
  /// causal = 0): make_problem fills them in, so a problem's text and records always name them.
  std::vector<std::pair<std::string, int64_t>> default_dims;
  std::vector<DType> dtypes;  ///< dtypes any rung takes
  /// Which measured ceiling bounds this family: "copy", "read", "write", "fp32", "bf16_tc", ...
  std::string ceiling;
  /// Where a problem's dtype changes the bound (attention's e4m3 problems run on the FP8 tensor
  /// cores: "fp8_tc"): the ceiling of that problem; unset, every problem takes `ceiling`.
  std::function<std::string(const Problem&)> ceiling_of;
  /// Rungs (by name, "v14_wgmma_tma_store") that `klab ceilings` runs beside the vendor
  /// baselines at the headline shapes to raise the ceiling: where a rung beats the vendor, the
  /// vendor alone would put it above 100%.
  std::vector<std::string> ceiling_rungs;
  /// Shapes beside the headline ones at which those rungs and the baselines probe the ceiling
  /// (hgemm: the deep-K projections, where the tensor pipe runs fastest).
  std::vector<Problem> ceiling_shapes;

  /// Semantic checks beyond the generic ones (required dims, positive); throws UsageError.
  std::function<void(const Problem&)> validate;
  std::function<std::vector<TensorSpec>(const Problem&)> tensors;
  /// Computes every output from the host inputs with fp64 accumulation.
  std::function<void(const Problem&, const Buffers&, Reference&)> reference;
  std::function<Counts(const Problem&)> counts;
  std::function<Tolerance(const Problem&)> tolerance;
  /// Optional: a tolerance per output (an attention output and its log-sum-exp are judged
  /// differently); when set it replaces `tolerance` against the fp64 reference.
  std::function<Tolerance(const Problem&, const std::string& output)> output_tolerance;
  /// Layout tags the family takes (Problem::layout), the first the default; empty: none.
  std::vector<std::string> layouts;

  /// For problems too large for the whole CPU reference (counts().flops above
  /// cpu_reference_max_flops, when that is > 0), the fp64 reference of a sample of each output
  /// (sample_indices over output_grid) judges every variant, baselines included, under
  /// `tolerance`: reference_at computes the listed elements (RefOutput::index) of one output.
  double cpu_reference_max_flops = 0;
  std::function<OutputGrid(const Problem&, const std::string& output)> output_grid;
  std::function<void(const Problem&, const Buffers&, const std::string& output,
                     const std::vector<int64_t>& index, RefOutput&)>
      reference_at;
  /// There, this vendor baseline's whole output is a second, labelled comparison (a second
  /// opinion on every element, never the only reference), under gpu_reference_tolerance.
  std::string gpu_reference_variant;
  std::function<Tolerance(const Problem&)> gpu_reference_tolerance;
  /// True when p is judged by samples (see cpu_reference_max_flops).
  bool sampled(const Problem& p) const {
    return cpu_reference_max_flops > 0 && counts(p).flops > cpu_reference_max_flops;
  }

  std::vector<Problem> headline;  ///< shapes that matter for speed
  std::vector<Problem> awkward;   ///< shapes that break careless kernels
  std::vector<Variant> ladder;    ///< in ladder order, baselines included
  /// Wrong or slow on purpose (klab doctor's exhibits): left out of `klab run`, of the registry's
  /// correctness tests and of reports; `klab check` and `klab doctor` reach it by name.
  bool sabotaged = false;

  const Variant* find(std::string_view id) const;
};

}  // namespace klab
