// `klab timeline`'s GPU side: a variant's traced launches, each after an L2 flush, their marks read
// back (phase_timeline.hpp).
#include <cuda_runtime_api.h>

#include "klab/core/cuda_check.hpp"
#include "klab/core/cuda_memory.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/l2_flush.hpp"
#include "klab/harness/phase_timeline.hpp"
#include "klab/harness/phase_trace_hooks.hpp"
#include "klab/harness/runner.hpp"

namespace klab {

TracedRun trace_variant(const Family& f, const Variant& v, const Problem& p, int launches,
                        uint64_t seed, bool hot) {
  const TraceHooks* hooks = find_trace_hooks(v.info.id);
  if (!hooks) throw UsageError(v.info.id + " has no traced kernel");
  const std::vector<std::string>& phases = hooks->phases;
  if (launches < 1) throw UsageError("timeline: --launches must be at least 1");
  const DeviceInfo& d = device_info();
  if (!d.present) throw UsageError("timeline needs a GPU, and there is none: " + d.absent_reason);
  TracedRun run;
  const int64_t ctas = hooks->ctas(p);
  const int64_t count = ctas * (1 + 2 * static_cast<int64_t>(phases.size()));
  DeviceBuffer slots(sizeof(uint64_t) * static_cast<size_t>(count));
  RunOptions opt;
  opt.seed = seed;
  ProblemInputs shared;
  std::shared_ptr<HeldLaunches> held;
  {
    // Prepared (and checked) with the trace active: the held launches are the traced kernel's.
    const ActivePhaseTrace active(static_cast<unsigned long long*>(slots.get()));
    run.record = run_variant_held(f, v, p, opt, shared, &held);
  }
  if (!held) return run;  // refused or failed: the record says why
  CudaStream stream;
  const cudaStream_t st = stream.get();
  DeviceBuffer flush(static_cast<size_t>(2 * d.l2_bytes));
  KLAB_CUDA_CHECK(cudaMemsetAsync(flush.get(), 0, flush.bytes(), st));
  std::vector<uint64_t> host(static_cast<size_t>(count));
  for (int i = 0; i < launches; ++i) {
    KLAB_CUDA_CHECK(cudaMemsetAsync(slots.get(), 0, slots.bytes(), st));
    if (!hot) flush_l2(flush.get(), flush.bytes(), d.sm_count, st);
    launch_held(*held, reinterpret_cast<Stream>(st));
    KLAB_CHECK_LAUNCH();
    KLAB_CUDA_CHECK(
        cudaMemcpyAsync(host.data(), slots.get(), slots.bytes(), cudaMemcpyDeviceToHost, st));
    KLAB_CUDA_CHECK(cudaStreamSynchronize(st));
    run.launches.push_back(summarize_launch(host, ctas, phases));
  }
  // A traced kernel whose launches marked nothing is not a timeline: the usual cause is a rung
  // that launches a kernel instantiated (with the same template arguments) in another rung's
  // file, whose own copy of the trace pointer (phase_trace.cuh: one a translation unit) was not
  // the one set.
  bool any = false;
  for (const LaunchTimeline& l : run.launches) any = any || l.ctas > 0;
  if (!any)  // the variant's limit, not klab's fault: one line, as for a variant without hooks
    throw UsageError("timeline: " + v.info.id +
                     "'s traced launches recorded no marks (its kernel reads another translation "
                     "unit's trace pointer?)");
  return run;
}

}  // namespace klab
