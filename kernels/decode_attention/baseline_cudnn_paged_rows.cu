// decode_attention.baseline_cudnn_paged's rows that see no key (baseline_cudnn_paged.cpp): after
// cuDNN, every query row (b, t, h) with t < Qlen - seq_lens[b] (an empty slot, or a speculative
// token before a short sequence's first) gets O = 0 and lse = -inf, whatever cuDNN's fully masked
// path left there. One thread per row: non-empty rows return after one length load.
#include <cuda_runtime.h>

#include <cmath>

#include "kernels/decode_attention/family.hpp"
#include "klab/core/cuda_check.hpp"

namespace klab::decode_attention {

namespace {

constexpr int kThreads = 256;

// o (rows, D) bf16 with D a multiple of 8: 16-byte stores.
__global__ void keyless_rows_kernel(const int32_t* __restrict__ seq_lens, uint4* __restrict__ o,
                                    float* __restrict__ lse, int64_t rows, int64_t qlen, int64_t hq,
                                    int64_t chunks) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const int64_t b = r / (qlen * hq), t = r / hq % qlen;
  if (t >= qlen - seq_lens[b]) return;
  lse[r] = -INFINITY;
  for (int64_t c = 0; c < chunks; ++c) o[r * chunks + c] = make_uint4(0, 0, 0, 0);
}

}  // namespace

void write_keyless_rows(const Dims& s, const int32_t* seq_lens, void* o, float* lse,
                        Stream stream) {
  const int64_t rows = s.rows();
  keyless_rows_kernel<<<static_cast<unsigned>((rows + kThreads - 1) / kThreads), kThreads, 0,
                        reinterpret_cast<cudaStream_t>(stream)>>>(seq_lens, static_cast<uint4*>(o),
                                                                  lse, rows, s.qlen, s.hq, s.d / 8);
  KLAB_CHECK_LAUNCH();
}

}  // namespace klab::decode_attention
