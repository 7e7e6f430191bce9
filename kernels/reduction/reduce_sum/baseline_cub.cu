// Baseline: CUB's cub::DeviceReduce (CCCL, shipped with the toolkit) — the library call a CUDA
// programmer would use. f32: DeviceReduce::Sum; bf16: DeviceReduce::TransformReduce with a
// bf16 -> float conversion, so CUB also accumulates in fp32 (a fair comparison). Its temporary
// storage comes from Variant::workspace_bytes (queried with a null buffer, as CUB prescribes), so
// the timed launch allocates nothing. CUB writes the output itself: no memset needed.
// Requirements: none. n is passed as int64 (CUB picks 64-bit offsets).
#include <cub/device/device_reduce.cuh>

#include "kernels/reduction/reduce_sum/rung.cuh"

namespace klab::reduction {

namespace {

struct Bf16ToFloat {
  __device__ float operator()(__nv_bfloat16 v) const { return __bfloat162float(v); }
};

/// One call serves both the size query (ws == nullptr) and the reduction.
cudaError_t cub_sum(void* ws, size_t& ws_bytes, const Problem& p, const void* x, float* out,
                    cudaStream_t st) {
  const int64_t n = p.dim("n");
  if (p.dtype == DType::bf16)
    return cub::DeviceReduce::TransformReduce(ws, ws_bytes, static_cast<const __nv_bfloat16*>(x),
                                              out, n, cuda::std::plus<float>{}, Bf16ToFloat{}, 0.f,
                                              st);
  return cub::DeviceReduce::Sum(ws, ws_bytes, static_cast<const float*>(x), out, n, st);
}

}  // namespace

Variant sum_baseline_cub() {
  Variant v = sum_variant("baseline_cub", "cub::DeviceReduce::Sum / TransformReduce (CCCL)",
                          [](const Problem& p, Buffers& b, const LaunchArgs& args) {
                            size_t ws_bytes = b.workspace_bytes;
                            KLAB_CUDA_CHECK(cub_sum(b.workspace, ws_bytes, p, b["x"].data,
                                                    b.ptr<float>("sum"), stream_of(args)));
                            KLAB_CHECK_LAUNCH();
                          });
  v.workspace_bytes = [](const Problem& p) {
    size_t bytes = 0;
    KLAB_CUDA_CHECK(cub_sum(nullptr, bytes, p, nullptr, nullptr, nullptr));
    return std::max<size_t>(bytes,
                            1);  // never zero: a null workspace would turn the launch into a query
  };
  v.info.baseline = true;
  return v;
}

}  // namespace klab::reduction
