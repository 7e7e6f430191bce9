// The graph rungs' launch (v02, v03): a rung's steps captured once into a CUDA graph and
// replayed as one graph launch, as serving engines run decode (vLLM's and SGLang's CUDA graphs):
// the host's work a launch (the GEMM's tensor maps and tile choice, attention's plan, the kernel
// launches) happens once at capture, and the GPU takes the kernels as one submission.
#include <cuda_runtime.h>

#include <memory>

#include "kernels/attention_block/gpu_steps.hpp"
#include "klab/core/cuda_check.hpp"

namespace klab::attention_block {

namespace {

/// The captured block: its graph, the executable and the stream it was captured on.
struct CapturedBlock {
  cudaStream_t stream = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~CapturedBlock() {
    if (exec) KLAB_CUDA_CHECK_NOEXCEPT(cudaGraphExecDestroy(exec));
    if (graph) KLAB_CUDA_CHECK_NOEXCEPT(cudaGraphDestroy(graph));
    if (stream) KLAB_CUDA_CHECK_NOEXCEPT(cudaStreamDestroy(stream));
  }
};

}  // namespace

Variant graph_variant(const std::string& name, const std::string& summary, Recipe r) {
  Variant v = block_variant(name, summary, r);
  const auto steps_can = v.can_implement;
  v.can_implement = [steps_can, name](const Problem& p) -> Status {
    if (detail::debug_sync_enabled())  // KLAB_CHECK_LAUNCH's synchronisation would end a capture
      return Status::no("attention_block." + name +
                        ": captures a CUDA graph, which KLAB_DEBUG_SYNC's synchronisation "
                        "after every launch would break");
    return steps_can(p);
  };
  v.prepare = [r](const Problem& p, Buffers& b, const LaunchArgs& la) -> PreparedLaunch {
    const PreparedLaunch steps = prepare_block(r, p, b, la);
    auto g = std::make_shared<CapturedBlock>();
    KLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    const auto s = reinterpret_cast<Stream>(g->stream);
    // Once eagerly: modules loaded, function attributes set, before anything is captured.
    steps(s);
    KLAB_CUDA_CHECK(cudaStreamSynchronize(g->stream));
    KLAB_CUDA_CHECK(cudaStreamBeginCapture(g->stream, cudaStreamCaptureModeThreadLocal));
    try {
      steps(s);
    } catch (...) {  // end the capture before the stream goes
      cudaGraph_t partial = nullptr;
      cudaStreamEndCapture(g->stream, &partial);
      if (partial) cudaGraphDestroy(partial);
      cudaGetLastError();
      throw;
    }
    KLAB_CUDA_CHECK(cudaStreamEndCapture(g->stream, &g->graph));
    KLAB_CUDA_CHECK(cudaGraphInstantiate(&g->exec, g->graph, 0));
    // Undo what the eager run left, so that the check judges the graph's replay alone: the
    // outputs and the block's intermediates (y, q_out, lse) to NaN (bf16 0xFFFF), the new
    // tokens' cache slots back to their stale value. The steps' own workspaces stay as they are
    // (counters the steps reset themselves).
    for (const Tensor& t : b.tensors)
      if (t.is_output()) KLAB_CUDA_CHECK(cudaMemsetAsync(t.data, 0xFF, t.bytes(), g->stream));
    KLAB_CUDA_CHECK(cudaMemsetAsync(b.workspace, 0xFF, block_intermediate_bytes(r, p), g->stream));
    write_stale_slots(dims_of(p), static_cast<const int64_t*>(b["slot_mapping"].data),
                      b["k_cache"].data, b["v_cache"].data, s);
    KLAB_CUDA_CHECK(cudaStreamSynchronize(g->stream));
    return [g, steps](Stream stream) {  // steps: the captured launches' buffers stay alive
      const auto cs = reinterpret_cast<cudaStream_t>(stream);
      // Under a capture of the caller's (klab's kernel capture: MainPath, `klab sass`) a graph
      // launch is not permitted: the steps are launched again instead (the host's launch path,
      // the same kernels the graph holds), so that the caller's capture records them.
      cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
      KLAB_CUDA_CHECK(cudaStreamIsCapturing(cs, &capturing));
      if (capturing == cudaStreamCaptureStatusActive) return steps(stream);
      KLAB_CUDA_CHECK(cudaGraphLaunch(g->exec, cs));
    };
  };
  return v;
}

}  // namespace klab::attention_block
