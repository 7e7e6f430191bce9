// The cuDNN baselines' device helpers (baseline_cudnn_paged.cpp). Rows that see no key: after
// cuDNN, every query row (b, t, h) with t < Qlen - seq_lens[b] (an empty slot, or a speculative
// token before a short sequence's first) gets O = 0 and lse = -inf, whatever cuDNN's fully masked
// path left there; one thread per row, non-empty rows return after one length load. And the
// contiguous copy of the pools that baseline_cudnn_contiguous reads (cudnn_baselines.hpp), made
// once when it is prepared: 16 bytes a thread, grid-stride.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>

#include "kernels/decode_attention/cudnn_baselines.hpp"
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

// out (B, Hkv, len, D) from the pool (pages, Hkv, P, D), 8 bf16 (16 bytes) a chunk.
__global__ void gather_kernel(const int32_t* __restrict__ table, const int32_t* __restrict__ lens,
                              const uint4* __restrict__ pool, uint4* __restrict__ out, int64_t b,
                              int64_t hkv, int64_t len, int64_t page, int64_t cols,
                              int64_t chunks) {
  const int64_t total = b * hkv * len * chunks;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = i % chunks, j = i / chunks % len, h = i / (chunks * len) % hkv,
                  seq = i / (chunks * len * hkv);
    uint4 x = make_uint4(0, 0, 0, 0);
    if (j < lens[seq]) {
      const int64_t pg = table[seq * cols + j / page];
      x = pool[((pg * hkv + h) * page + j % page) * chunks + c];
    }
    out[i] = x;
  }
}

}  // namespace

void gather_contiguous_kv(const Dims& s, const int32_t* block_table, const int32_t* seq_lens,
                          const void* pool, void* out, Stream stream) {
  const int64_t chunks = s.d / 8, total = s.b * s.hkv * s.len * chunks;
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, 65535);
  gather_kernel<<<static_cast<unsigned>(std::max<int64_t>(blocks, 1)), kThreads, 0,
                  reinterpret_cast<cudaStream_t>(stream)>>>(
      block_table, seq_lens, static_cast<const uint4*>(pool), static_cast<uint4*>(out), s.b, s.hkv,
      s.len, s.page, s.max_pages(), chunks);
  KLAB_CHECK_LAUNCH();
}

void write_keyless_rows(const Dims& s, const int32_t* seq_lens, void* o, float* lse,
                        Stream stream) {
  const int64_t rows = s.rows();
  keyless_rows_kernel<<<static_cast<unsigned>((rows + kThreads - 1) / kThreads), kThreads, 0,
                        reinterpret_cast<cudaStream_t>(stream)>>>(seq_lens, static_cast<uint4*>(o),
                                                                  lse, rows, s.qlen, s.hq, s.d / 8);
  KLAB_CHECK_LAUNCH();
}

}  // namespace klab::decode_attention
