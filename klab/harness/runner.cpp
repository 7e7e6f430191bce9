#include "klab/harness/runner.hpp"

#include <algorithm>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>

#include "klab/core/errors.hpp"
#include "klab/harness/ceilings.hpp"
#include "klab/harness/device_memory.hpp"
#include "klab/harness/host_phases.hpp"
#include "klab/harness/sampling.hpp"

#if KLAB_HAS_CUDA
#include "klab/core/cuda_check.hpp"
#include "klab/core/cuda_memory.hpp"
#endif

namespace klab {

Buffers make_host_buffers(const Family& f, const Problem& p) {
  Buffers b;
  for (auto& spec : f.tensors(p)) {
    Tensor t;
    t.spec = spec;
    t.host.resize(static_cast<size_t>(t.bytes()));
    b.tensors.push_back(std::move(t));
  }
  return b;
}

void fill_inputs(Buffers& b, Dist dist, uint64_t seed) {
  uint64_t k = 0;
  for (auto& t : b.tensors) {
    ++k;
    if (t.spec.role == Role::output || t.spec.build) continue;
    fill_random(t.host.data(), t.spec.dtype, t.spec.numel, t.spec.fixed_dist ? t.spec.dist : dist,
                splitmix64(seed + k));
  }
  k = 0;
  for (auto& t : b.tensors) {
    ++k;
    if (t.spec.build && t.spec.role != Role::output) t.spec.build(b, t, splitmix64(seed + k));
  }
}

namespace {

// The tensors' specs only, no host copies (what device sets are made from).
Buffers make_spec_buffers(const Family& f, const Problem& p) {
  Buffers b;
  for (auto& spec : f.tensors(p)) b.tensors.push_back(Tensor{spec, {}, nullptr});
  return b;
}

// Every output against `ref`: under the family's per-output tolerance when it has one and
// `per_output` (the fp64 reference), else under `tol`.
CheckResult compare_all(const Family& f, const Problem& p, const Buffers& b, const Reference& ref,
                        const Tolerance& tol, bool per_output = true) {
  CheckResult all;
  for (const auto& t : b.tensors) {
    if (!t.is_output()) continue;
    auto it = ref.find(t.spec.name);
    KLAB_CHECK(it != ref.end(), f.name + " reference did not produce " + t.spec.name);
    const bool own = per_output && f.output_tolerance;
    merge(all, compare_output(t, it->second, own ? f.output_tolerance(p, t.spec.name) : tol));
  }
  return all;
}

// The fp64 reference of a sample of every output (Family::sampled problems).
Reference sampled_reference(const Family& f, const Problem& p, const Buffers& host, uint64_t seed) {
  KLAB_CHECK(f.output_grid && f.reference_at,
             f.name + ": sampled problems need output_grid and reference_at");
  Reference ref;
  for (const auto& t : host.tensors) {
    if (!t.is_output()) continue;
    RefOutput& r = ref[t.spec.name];
    const OutputGrid g = f.output_grid(p, t.spec.name);
    KLAB_CHECK(g.rows * g.cols == t.spec.numel,
               f.name + ": output grid of " + t.spec.name + " does not cover its elements");
    r.index = sample_indices(g, splitmix64(seed ^ 0x5a3b1e5eedULL));
    f.reference_at(p, host, t.spec.name, r.index, r);
    KLAB_CHECK(r.value.size() == r.index.size(),
               f.name + ": reference_at of " + t.spec.name + " filled the wrong number of values");
  }
  return ref;
}

// The fp64 reference of p on the host inputs: whole, or a sample where the family says so.
Reference reference_of(const Family& f, const Problem& p, const Buffers& host, uint64_t seed) {
  if (f.sampled(p)) return sampled_reference(f, p, host, seed);
  Reference ref;
  f.reference(p, host, ref);
  return ref;
}

// The base seed of a problem's inputs: the requested one, else a fresh one in [1, 2^53) (exact as
// a JSON number), recorded in each Result so that `--seed` replays a failed check's inputs.
uint64_t base_seed(const RunOptions& opt) {
  if (opt.seed != 0) return opt.seed;
  static std::random_device rd;
  const uint64_t s = ((static_cast<uint64_t>(rd()) << 32) ^ rd()) & ((uint64_t{1} << 53) - 1);
  return s != 0 ? s : 1;
}

// The inputs of check k (distribution d) of p: drawn on first use, then shared by every variant
// of the problem (and every round).
CheckInputs& inputs_for(const Family& f, const Problem& p, const RunOptions& opt, int k, Dist d,
                        ProblemInputs& shared, HostSeconds& hs) {
  const std::string key = f.name + " " + p.str() + " seed " + std::to_string(opt.seed);
  if (shared.key != key) {
    shared.checks.clear();
    shared.outputs = Buffers();
    shared.key = key;
    shared.seed = base_seed(opt);
  }
  if (shared.checks.size() <= static_cast<size_t>(k)) shared.checks.resize(k + 1);
  std::unique_ptr<CheckInputs>& slot = shared.checks[k];
  if (slot && slot->dist == d) return *slot;
  PhaseTimer t(hs, "inputs");
  auto in = std::make_unique<CheckInputs>();
  in->dist = d;
  in->seed = splitmix64(shared.seed + static_cast<uint64_t>(k));
  in->host = make_host_buffers(f, p);
  fill_inputs(in->host, d, in->seed);
  slot = std::move(in);
  return *slot;
}

const Reference& reference_for(const Family& f, const Problem& p, CheckInputs& in,
                               HostSeconds& hs) {
  if (!in.reference) {
    PhaseTimer t(hs, "reference");
    in.reference = reference_of(f, p, in.host, in.seed);
  }
  return *in.reference;
}

// ---- CPU variants: run on host copies of the shared inputs. ----
void run_cpu(const Family& f, const Variant& v, const Problem& p, const RunOptions& opt,
             ProblemInputs& shared, Result& r) {
  HostSeconds& hs = r.host_seconds;
  PhaseTimer prep(hs, "prepare");
  Buffers b = make_host_buffers(f, p);
  for (auto& t : b.tensors) t.data = t.host.data();
  const LaunchArgs args{nullptr, opt.block_threads};
  const PreparedLaunch launch = prepare_launch(v, p, b, args);  // the buffers stay put
  prep.stop();
  auto load = [&](const CheckInputs& in) {  // the variant may write its inouts: a copy
    PhaseTimer t(hs, "upload");
    for (size_t i = 0; i < b.tensors.size(); ++i)
      if (b.tensors[i].spec.role != Role::output)
        std::copy(in.host.tensors[i].host.begin(), in.host.tensors[i].host.end(),
                  b.tensors[i].host.begin());
  };
  if (opt.check) {
    r.checked = true;
    int k = 0;
    for (Dist d : opt.dists) {
      CheckInputs& in = inputs_for(f, p, opt, k++, d, shared, hs);
      load(in);
      const Reference& ref = reference_for(f, p, in, hs);
      PhaseTimer run(hs, "run");
      for (auto& t : b.tensors)
        if (t.spec.role == Role::output) fill_poison(t.host.data(), t.bytes());
      launch(args.stream);
      run.stop();
      PhaseTimer check(hs, "check");
      merge(r.check, compare_all(f, p, b, ref, f.tolerance(p)));
    }
  } else {
    load(inputs_for(f, p, opt, 0, opt.dists.front(), shared, hs));
  }
  if (opt.bench) {
    PhaseTimer t(hs, "timing");
    r.timing = bench_cpu([&] { launch(args.stream); }, opt.bench_cfg);
    r.timed = true;
  }
}

#if KLAB_HAS_CUDA
// ---- GPU variants. ----
struct DeviceSet {
  std::vector<DeviceBuffer> mem;
  DeviceBuffer workspace;
  Buffers view;  // specs + device pointers (host vectors left empty)
};

DeviceSet make_device_set(const Buffers& host, const Problem& p, size_t workspace_bytes) {
  DeviceSet s;
  if (workspace_bytes > 0) {
    s.workspace = DeviceBuffer(workspace_bytes);
    // Zeroed once (Variant::workspace_bytes): counters a kernel resets itself start at zero.
    KLAB_CUDA_CHECK(cudaMemset(s.workspace.get(), 0, workspace_bytes));
    s.view.workspace = s.workspace.get();
    s.view.workspace_bytes = workspace_bytes;
  }
  for (const auto& t : host.tensors) {
    const int64_t shift = p.misalign * dtype_size(t.spec.dtype);
    s.mem.emplace_back(static_cast<size_t>(t.bytes() + shift));
    Tensor view;
    view.spec = t.spec;
    view.data = static_cast<unsigned char*>(s.mem.back().get()) + shift;
    s.view.tensors.push_back(std::move(view));
  }
  return s;
}

}  // namespace

// A GPU variant's device sets and prepared launches, kept past run_variant for an interleaved
// benchmark (run_variant_held).
struct HeldLaunches {
  DeviceSet set0;
  std::vector<DeviceSet> extra;          ///< more input sets (rotation), made after the check
  std::vector<PreparedLaunch> launches;  ///< one per input set
};

namespace {

// Inputs and inouts copied, outputs poisoned; with `inouts_only`, only the inouts copied (what a
// launch may have changed: inputs are read only).
void upload(const Buffers& host, Buffers& dev, cudaStream_t st, bool inouts_only = false) {
  for (size_t i = 0; i < host.tensors.size(); ++i) {
    const auto& h = host.tensors[i];
    auto& d = dev.tensors[i];
    if (inouts_only && h.spec.role != Role::inout) continue;
    if (h.spec.role == Role::output)
      KLAB_CUDA_CHECK(cudaMemsetAsync(d.data, kPoisonByte, h.bytes(), st));
    else
      KLAB_CUDA_CHECK(
          cudaMemcpyAsync(d.data, h.host.data(), h.bytes(), cudaMemcpyHostToDevice, st));
  }
  KLAB_CUDA_CHECK(cudaStreamSynchronize(st));
}

// The vendor variant's outputs on the host inputs, as a (whole) reference.
Reference vendor_outputs(const Variant& vendor, const Problem& p, const Buffers& host,
                         const LaunchArgs& args) {
  const auto st = reinterpret_cast<cudaStream_t>(args.stream);
  DeviceSet rs = make_device_set(host, p, vendor.workspace_bytes ? vendor.workspace_bytes(p) : 0);
  upload(host, rs.view, st);
  prepare_launch(vendor, p, rs.view, args)(args.stream);
  KLAB_CHECK_LAUNCH();
  KLAB_CUDA_CHECK(cudaStreamSynchronize(st));
  Reference ref;
  for (size_t i = 0; i < host.tensors.size(); ++i) {
    const Tensor& t = host.tensors[i];
    if (!t.is_output()) continue;
    std::vector<unsigned char> raw(static_cast<size_t>(t.bytes()));
    KLAB_CUDA_CHECK(
        cudaMemcpy(raw.data(), rs.view.tensors[i].data, raw.size(), cudaMemcpyDeviceToHost));
    auto& out = ref[t.spec.name].value;
    out.resize(static_cast<size_t>(t.spec.numel));
#pragma omp parallel for schedule(static)
    for (int64_t e = 0; e < t.spec.numel; ++e) out[e] = load_as_double(raw.data(), t.spec.dtype, e);
  }
  return ref;
}

const Reference& vendor_for(const Variant& vendor, const Problem& p, CheckInputs& in,
                            const LaunchArgs& args, HostSeconds& hs) {
  if (!in.vendor) {
    PhaseTimer t(hs, "vendor");
    in.vendor = vendor_outputs(vendor, p, in.host, args);
  }
  return *in.vendor;
}

// Host copies of the outputs only (what a variant's outputs are read back into).
Buffers& output_scratch(ProblemInputs& shared, const Buffers& host) {
  if (shared.outputs.tensors.empty())
    for (const Tensor& h : host.tensors) {
      Tensor t;
      t.spec = h.spec;
      if (t.is_output()) t.host.resize(static_cast<size_t>(t.bytes()));
      shared.outputs.tensors.push_back(std::move(t));
    }
  return shared.outputs;
}

// With `held`, the benchmark is left to the caller: the device sets and prepared launches are
// handed over in *held instead of timed.
void run_gpu(const Family& f, const Variant& v, const Problem& p, const RunOptions& opt,
             ProblemInputs& shared, Result& r, std::shared_ptr<HeldLaunches>* held) {
  HostSeconds& hs = r.host_seconds;
  PhaseTimer setup(hs, "allocate");
  CudaStream stream;
  cudaStream_t st = stream.get();
  const LaunchArgs args{reinterpret_cast<Stream>(st), opt.block_threads};
  const Buffers specs = make_spec_buffers(f, p);
  const size_t ws_bytes = v.workspace_bytes ? v.workspace_bytes(p) : 0;
  if (!r.device_memory) r.device_memory.emplace();
  r.device_memory->tensors = tensor_bytes(f, p);
  r.device_memory->workspace = static_cast<int64_t>(ws_bytes);
  setup.stop();
  // Too large for the whole CPU reference: fp64 samples judge, and the vendor baseline's whole
  // output is a second, labelled comparison (skipped for the vendor variant itself).
  const Variant* vendor = nullptr;
  if (f.sampled(p) && !f.gpu_reference_variant.empty() && f.gpu_reference_variant != v.info.id) {
    vendor = f.find(f.gpu_reference_variant);
    KLAB_CHECK(vendor != nullptr,
               f.name + ": gpu_reference_variant '" + f.gpu_reference_variant + "' not registered");
  }
  if (opt.check) {
    // The first check's inputs, reference and vendor output are made before memory is watched:
    // the vendor baseline's run, and what its library keeps, is not this variant's memory.
    CheckInputs& in = inputs_for(f, p, opt, 0, opt.dists.front(), shared, hs);
    reference_for(f, p, in, hs);
    if (vendor) vendor_for(*vendor, p, in, args, hs);
  }

  PhaseTimer alloc(hs, "allocate");
  MemoryWatch watch;  // before the harness allocates
  auto keep = std::make_shared<HeldLaunches>();
  keep->set0 = make_device_set(specs, p, ws_bytes);
  DeviceSet& set0 = keep->set0;
  alloc.stop();
  DeviceMemory& mem = *r.device_memory;
  mem.free = watch.free_before();
  mem.method = watch.known() ? std::string(kPeakMethod) : "the device's memory could not be read";
  // The memory samples around the variant's first run on set0: after allocation and prepare, and
  // after the run, synchronised.
  bool measured = false;
  auto run_first = [&](const PreparedLaunch& launch) {
    if (!measured) watch.sample();
    launch(args.stream);
    KLAB_CHECK_LAUNCH();
    KLAB_CUDA_CHECK(cudaStreamSynchronize(st));
    if (measured) return;
    watch.sample();
    measured = true;
    if (watch.known()) mem.peak_measured = watch.peak_rise();
  };

  int k = 0;
  for (Dist d : opt.check ? opt.dists : std::vector<Dist>{opt.dists.front()}) {
    CheckInputs& in = inputs_for(f, p, opt, k++, d, shared, hs);
    {
      PhaseTimer t(hs, "upload");
      upload(in.host, set0.view, st);
    }
    const Reference* ref = opt.check ? &reference_for(f, p, in, hs) : nullptr;
    const Reference* vendor_ref = ref && vendor ? &vendor_for(*vendor, p, in, args, hs) : nullptr;
    PhaseTimer prep(hs, "prepare");
    const PreparedLaunch launch = prepare_launch(v, p, set0.view, args);
    prep.stop();
    PhaseTimer run(hs, "run");
    run_first(launch);
    run.stop();
    if (!ref) {
      // No check: the variant ran once for the record's memory (a warm-up to a benchmark); the
      // benchmark starts from the inputs.
      PhaseTimer t(hs, "upload");
      upload(in.host, set0.view, st, /*inouts_only=*/true);
      break;
    }
    PhaseTimer download(hs, "download");
    Buffers& got = output_scratch(shared, in.host);
    for (size_t i = 0; i < got.tensors.size(); ++i)
      if (got.tensors[i].is_output())
        KLAB_CUDA_CHECK(cudaMemcpy(got.tensors[i].host.data(), set0.view.tensors[i].data,
                                   got.tensors[i].bytes(), cudaMemcpyDeviceToHost));
    download.stop();
    PhaseTimer check(hs, "check");
    r.checked = true;
    merge(r.check, compare_all(f, p, got, *ref, f.tolerance(p)));
    if (vendor_ref) {
      CheckResult second = compare_all(f, p, got, *vendor_ref, f.gpu_reference_tolerance(p), false);
      second.reference = "vendor " + vendor->info.id;
      if (!r.vendor_checked)
        r.vendor_check = second;
      else
        merge(r.vendor_check, second);
      r.vendor_checked = true;
      r.check.passed = r.check.passed && second.passed;
    }
    check.stop();
    // Restore the inputs of in-place tensors for the benchmark that follows.
    PhaseTimer t(hs, "upload");
    upload(in.host, set0.view, st, /*inouts_only=*/true);
  }

  if (!opt.bench) return;
  // Rotate among input sets when the working set would otherwise stay in L2.
  PhaseTimer rot(hs, "allocate");
  const int64_t ws = specs.total_bytes();
  const int64_t l2 = device_info().l2_bytes;
  int sets = 1;
  if (!opt.bench_cfg.hot && ws < l2)
    sets = static_cast<int>(std::min<int64_t>(8, (4 * l2) / std::max<int64_t>(ws, 1) + 1));
  std::vector<DeviceSet>& extra = keep->extra;
  for (int i = 1; i < sets; ++i) {
    extra.push_back(make_device_set(specs, p, ws_bytes));
    for (size_t t = 0; t < specs.tensors.size(); ++t)
      KLAB_CUDA_CHECK(cudaMemcpyAsync(extra.back().view.tensors[t].data, set0.view.tensors[t].data,
                                      specs.tensors[t].bytes(), cudaMemcpyDeviceToDevice, st));
  }
  KLAB_CUDA_CHECK(cudaStreamSynchronize(st));
  rot.stop();
  // Setup once per input set; the timed launches only enqueue.
  PhaseTimer prep(hs, "prepare");
  std::vector<PreparedLaunch>& launches = keep->launches;
  launches.push_back(prepare_launch(v, p, set0.view, args));
  for (auto& e : extra) launches.push_back(prepare_launch(v, p, e.view, args));
  prep.stop();
  if (held) {
    *held = std::move(keep);
    return;
  }
  PhaseTimer timing(hs, "timing");
  r.timing = bench_gpu(
      [&](int s) {
        launches[static_cast<size_t>(s)](args.stream);
        KLAB_CHECK_LAUNCH();
      },
      sets, args.stream, opt.bench_cfg);
  r.timed = true;
}
#endif

void print_phases(const Result& r) {
  for (const auto& [phase, s] : r.host_seconds.phases)
    std::fprintf(stderr, "klab phases: %s %s %s: %-9s %8.3f s\n", r.variant.c_str(),
                 r.problem.shape.str().c_str(), std::string(dtype_name(r.problem.dtype)).c_str(),
                 phase.c_str(), s);
}

}  // namespace

Status refuse_before_allocation(const Family& f, const Variant& v, const Problem& p,
                                const DeviceInfo& d, Result& r) {
  const bool takes_dtype =
      std::find(v.info.dtypes.begin(), v.info.dtypes.end(), p.dtype) != v.info.dtypes.end();
  if (v.info.device == Device::cpu || !takes_dtype) return can_run(v, p);
  if (!d.present) {
    const Status st = can_run(v, p);  // the rung's own reason first
    return st.ok() ? Status::no(d.absent_reason) : st;
  }
  if (d.sm() < v.info.min_sm)
    return Status::no("needs sm_" + std::to_string(v.info.min_sm) + ", device is sm_" +
                      std::to_string(d.sm()));
  // Before the rung's own can_implement: the harness allocates, and it can say how much memory
  // is missing (a rung that refuses for memory, as attention's v01 does, says less). A workspace
  // that cannot be computed for this problem leaves the decision to can_implement.
  std::optional<DeviceMemory> need;
  try {
    need = memory_need(f, v, p);
  } catch (const std::exception&) {
  }
  if (need) {
    const DeviceMemoryInfo now = device_memory_now();
    if (now.known) need->free = now.free;
    need->method = "not run";
    r.device_memory = need;
    if (Status fit = fits_in_free_memory(*need, now); !fit.ok()) {
      r.device_memory->method =
          "refused before allocation: tensors + workspace above the device's free memory "
          "(cudaMemGetInfo)";
      return fit;
    }
  }
  return can_run(v, p);
}

void attach_throughput(const Family& f, Result& r) {
  if (!r.timed || r.timing.stats.median <= 0) return;
  const double s = r.timing.stats.median * 1e-3;
  r.tflops = r.counts.flops / s / 1e12;
  r.gbps = r.counts.bytes / s / 1e9;
  if (r.device_kind != "gpu" || f.ceiling.empty() || !device_info().present) return;
  const Ceiling* c =
      ceilings_for_this_device().find(f.ceiling_of ? f.ceiling_of(r.problem) : f.ceiling);
  if (!c || c->value <= 0) return;
  r.ceiling.name = c->name;
  r.ceiling.unit = c->unit;
  r.ceiling.value = c->value;
  r.ceiling.datasheet = c->datasheet;
  r.ceiling.pct = 100.0 * (c->unit == "GB/s" ? r.gbps : r.tflops) / c->value;
}

Result merge_rounds(const Family& f, std::vector<Result> rounds) {
  KLAB_CHECK(!rounds.empty(), "merge_rounds: no rounds");
  for (const Result& o : rounds)
    if (o.status != "ok" || !o.timed) return o;
  Result r = std::move(rounds.front());
  if (rounds.size() == 1) return r;
  Timing& t = r.timing;
  for (size_t i = 1; i < rounds.size(); ++i) {
    r.host_seconds.add(rounds[i].host_seconds);
    const Timing& o = rounds[i].timing;
    t.samples_ms.insert(t.samples_ms.end(), o.samples_ms.begin(), o.samples_ms.end());
    t.throttled_samples += o.throttled_samples;
    t.discarded_samples += o.discarded_samples;
    t.converged = t.converged && o.converged;
    if (o.sm_clock_min_mhz > 0)
      t.sm_clock_min_mhz = t.sm_clock_min_mhz > 0 ? std::min(t.sm_clock_min_mhz, o.sm_clock_min_mhz)
                                                  : o.sm_clock_min_mhz;
    t.sm_clock_max_mhz = std::max(t.sm_clock_max_mhz, o.sm_clock_max_mhz);
  }
  t.stats = summarize(t.samples_ms);
  t.method += ", pooled over " + std::to_string(rounds.size()) +
              " rounds interleaved with the other variants";
  attach_throughput(f, r);
  return r;
}

Result run_variant(const Family& f, const Variant& v, const Problem& p, const RunOptions& opt) {
  ProblemInputs shared;
  return run_variant(f, v, p, opt, shared);
}

Result run_variant(const Family& f, const Variant& v, const Problem& p, const RunOptions& opt,
                   ProblemInputs& shared) {
  return run_variant_held(f, v, p, opt, shared, nullptr);
}

Result run_variant_held(const Family& f, const Variant& v, const Problem& p, const RunOptions& opt,
                        ProblemInputs& shared, std::shared_ptr<HeldLaunches>* held) {
  Result r;
  r.variant = v.info.id;
  r.family = f.name;
  r.problem = p;
  r.baseline_variant = v.info.baseline;
  r.device_kind = v.info.device == Device::gpu ? "gpu" : "cpu";
  r.counts = f.counts(p);
  r.block_threads = opt.block_threads;
  r.timestamp = now_iso8601();
  if (const Status st = refuse_before_allocation(f, v, p, device_info(), r); !st.ok()) {
    r.status = "skipped";
    r.reason = st.reason;
    return r;
  }
  PhaseTimer total(r.host_seconds, "total");
  try {
    if (v.info.device == Device::cpu) {
      run_cpu(f, v, p, opt, shared, r);
    } else {
#if KLAB_HAS_CUDA
      run_gpu(f, v, p, opt, shared, r, opt.bench ? held : nullptr);
#endif
    }
    attach_throughput(f, r);
    r.seed = shared.seed;
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    r.status = "error";
    r.reason = e.what();
  }
  total.stop();
  if (trace_phases()) print_phases(r);
  return r;
}

void attach_baselines(std::vector<Result>& results) {
  for (auto& r : results) {
    if (!r.timed || r.baseline_variant) continue;
    for (const auto& b : results) {
      if (!b.baseline_variant || !b.timed || b.status != "ok" || b.device_kind != r.device_kind)
        continue;
      if (b.family != r.family || !(b.problem.shape == r.problem.shape) ||
          b.problem.dtype != r.problem.dtype || b.problem.misalign != r.problem.misalign ||
          b.problem.layout != r.problem.layout)
        continue;
      r.baseline.id = b.variant;
      r.baseline.speedup = b.timing.stats.median / r.timing.stats.median;
      break;
    }
  }
}

void launch_held(const HeldLaunches& held, Stream stream) {
  KLAB_CHECK(!held.launches.empty(), "launch_held: nothing held");
  held.launches.front()(stream);
}

void bench_held_interleaved(const Family& f, const std::vector<Result*>& results,
                            const std::vector<std::shared_ptr<HeldLaunches>>& held,
                            const BenchConfig& cfg) {
  KLAB_CHECK(results.size() == held.size(), "bench_held_interleaved: one held set per record");
  if (results.empty()) return;
#if KLAB_HAS_CUDA
  std::vector<InterleavedLaunch> launches;
  for (const auto& h : held) {
    KLAB_CHECK(h && !h->launches.empty(), "bench_held_interleaved: nothing held");
    launches.push_back({[hp = h.get()](int set, Stream s) {
                          hp->launches[static_cast<size_t>(set)](s);
                          KLAB_CHECK_LAUNCH();
                        },
                        static_cast<int>(h->launches.size())});
  }
  if (!cfg.samples_path.empty()) {  // the problem's samples after a line naming its variants
    std::ofstream out(cfg.samples_path, std::ios::app);
    out << "# " << results.front()->problem.str() << ":";
    for (size_t j = 0; j < results.size(); ++j) out << " " << j << "=" << results[j]->variant;
    out << "\n";
    if (!out) throw UsageError("cannot write the samples to " + cfg.samples_path);
  }
  CudaStream stream;
  std::vector<std::vector<double>> round_ms;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<Timing> t =
      bench_gpu_interleaved(launches, reinterpret_cast<Stream>(stream.get()), cfg, round_ms);
  // The interleaved timing's host seconds, shared out evenly among the records.
  const double share =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
      static_cast<double>(results.size());
  for (Result* r : results) r->host_seconds.add("timing", share);
  int base = -1;
  for (size_t j = 0; j < results.size() && base < 0; ++j)
    if (results[j]->baseline_variant) base = static_cast<int>(j);
  for (size_t j = 0; j < results.size(); ++j) {
    Result& r = *results[j];
    r.timing = std::move(t[j]);
    r.timed = true;
    attach_throughput(f, r);
    if (base >= 0 && static_cast<int>(j) != base) {
      r.paired = paired_ratio(round_ms[static_cast<size_t>(base)], round_ms[j]);
      r.paired_with = results[static_cast<size_t>(base)]->variant;
    }
  }
#else
  (void)f;
  (void)cfg;
  throw UsageError("an interleaved GPU benchmark needs a CUDA build");
#endif
}

}  // namespace klab
