// attention.baseline_cudnn's rows that cuDNN is not given: with a causal mask and Nq > Nkv the
// first Nq - Nkv query rows of every (b, h) see no key (cudnn_sdpa_layout.hpp): O = 0 (one 2-D
// memset, the rows of a batch being contiguous in (B, Nq, Hq, D)) and lse = -inf (a fill kernel:
// -inf is not a repeated byte).
#include <cuda_runtime.h>

#include <cmath>

#include "kernels/attention/cudnn_sdpa_layout.hpp"
#include "klab/core/cuda_check.hpp"

namespace klab::attention {

namespace {

constexpr int kThreads = 256;

// lse (B Hq, Nq): entries [0, width) of every one of `rows` rows of `pitch` floats.
__global__ void fill_leading_kernel(float* __restrict__ lse, int64_t rows, int64_t pitch,
                                    int64_t width, float value) {
  const int64_t n = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (n >= rows * width) return;
  lse[(n / width) * pitch + n % width] = value;
}

}  // namespace

void write_empty_rows(const Dims& s, int64_t elem_bytes, void* o, float* lse, Stream stream) {
  const int64_t e = s.causal && s.nq > s.nkv ? s.nq - s.nkv : 0;
  if (e == 0) return;
  const auto st = reinterpret_cast<cudaStream_t>(stream);
  const size_t row_bytes = static_cast<size_t>(s.hq * s.d * elem_bytes);  // one query position
  KLAB_CUDA_CHECK(cudaMemset2DAsync(o, static_cast<size_t>(s.nq) * row_bytes, 0,
                                    static_cast<size_t>(e) * row_bytes, static_cast<size_t>(s.b),
                                    st));
  const int64_t total = s.b * s.hq * e;
  fill_leading_kernel<<<static_cast<unsigned>((total + kThreads - 1) / kThreads), kThreads, 0,
                        st>>>(lse, s.b * s.hq, s.nq, e, -INFINITY);
  KLAB_CHECK_LAUNCH();
}

}  // namespace klab::attention
