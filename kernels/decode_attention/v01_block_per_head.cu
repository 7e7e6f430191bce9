// v01 block_per_head: one block per query row (sequence, new token, query head), as vLLM's first
// paged-attention kernel. The block's four warps take the row's visible tokens in turn (token j to
// warp j % 4); for each, the warp looks the token's page up in the block table, reads its K row
// (lane i holds elements i, i + 32, ... of D), reduces q . k across the warp with shuffles, folds
// the score into its online softmax state (klab/device/online_softmax.cuh) and its fp32
// accumulator rescaled by the same factor, then reads the V row into the accumulator. At the end
// the four warps' (max, sum) states merge through shared memory, o = acc / sum and
// lse = max + log(sum). A row without keys (an empty slot, a speculative token before the
// sequence's first) writes o = 0 and lse = -inf, never 0 / 0.
// Adds: nothing: the first correct GPU rung, the baseline the split-KV, grouped-query and
// pipelined rungs are measured against. Plain CUDA, fp32 scores and accumulation, P never
// rounded.
// Expected bottleneck: memory latency, not bandwidth. Each warp walks its tokens one at a time:
// a dependent chain of a block-table load, then the K and V rows (two 2 D-byte loads), a
// five-step shuffle reduction and two exps per token, so a warp keeps at most about one token's
// rows in flight. The Hq / Hkv query heads of a KV head each read the same K/V rows in their own
// blocks (hits in L2 when they run together, DRAM traffic when they do not). Only B * Qlen * Hq
// blocks exist: 32 at B = 1 for Qwen3-8B's heads, a quarter of the H200's SMs with four warps
// each.
// Prediction (written before it ran): at B = 1 a few percent of the read ceiling (32 blocks, one
// outstanding token per warp: latency-bound, L = 4k far above 10 us); at (256, 2k) and (64, 4k),
// with every SM full (16 blocks of 128 threads), a few tens of percent of the read ceiling, below
// cuDNN's paged SDPA at every headline shape. Page size should not matter beyond the table loads
// (one per token here, cached in L1).
// Requirements: D = 64, 128 or 256; B * Qlen * Hq < 2^31 (one block each, grid x); the HND page
// layout of family.hpp; block table entries valid for every token below the sequence's length
// (entries past it are never read).
#include <cuda_bf16.h>

#include <climits>

#include "kernels/decode_attention/family.hpp"
#include "klab/core/cuda_check.hpp"
#include "klab/device/online_softmax.cuh"

namespace klab::decode_attention {

namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;

struct Geometry {
  int64_t qlen, hq, hkv, page, max_pages, group;
  float scale;
};

// Block r = (bi * qlen + t) * hq + h: the row's o (kD elements) and lse[r] (lse is (B, Qlen, Hq),
// the rows' order).
template <int kD>
__global__ void __launch_bounds__(kThreads)
    block_per_head_kernel(const __nv_bfloat16* __restrict__ q,
                          const __nv_bfloat16* __restrict__ k_cache,
                          const __nv_bfloat16* __restrict__ v_cache,
                          const int32_t* __restrict__ seq_lens,
                          const int32_t* __restrict__ block_table, __nv_bfloat16* __restrict__ o,
                          float* __restrict__ lse, Geometry g) {
  constexpr int kPerLane = kD / 32;
  __shared__ float s_acc[kWarps][kD];         // each warp's accumulator
  __shared__ device::MaxSum s_state[kWarps];  // each warp's softmax state

  const int64_t r = blockIdx.x;
  const int64_t h = r % g.hq, t = (r / g.hq) % g.qlen, bi = r / (g.hq * g.qlen);
  const int64_t hk = h / g.group;
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  // Keys this row sees: the sequence's first len - qlen + t + 1 (family.hpp), none for an empty
  // slot.
  const int64_t len = seq_lens[bi];
  const int64_t n = max(int64_t(0), min(len, len - g.qlen + t + 1));
  const int32_t* table = block_table + bi * g.max_pages;

  float rq[kPerLane], acc[kPerLane];  // q * scale and o's accumulator, elements lane + 32 i
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    rq[i] = __bfloat162float(q[r * kD + lane + 32 * i]) * g.scale;
    acc[i] = 0.f;
  }
  device::MaxSum st;
  for (int64_t j = warp; j < n; j += kWarps) {
    const int64_t page = table[j / g.page];
    const int64_t base = ((page * g.hkv + hk) * g.page + j % g.page) * kD;
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) s += rq[i] * __bfloat162float(k_cache[base + lane + 32 * i]);
#pragma unroll
    for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
    // A larger score rescales the state's sum (online_raise_max) and the accumulator by the same
    // factor; from the empty state the factor is exp(-inf) = 0 on a zero accumulator.
    const float prev = st.max;
    device::online_raise_max(st, s);
    const float alpha = prev == st.max ? 1.f : expf(prev - st.max);
    const float p = expf(s - st.max);
    st.sum += p;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i)
      acc[i] = acc[i] * alpha + p * __bfloat162float(v_cache[base + lane + 32 * i]);
  }

#pragma unroll
  for (int i = 0; i < kPerLane; ++i) s_acc[warp][lane + 32 * i] = acc[i];
  if (lane == 0) s_state[warp] = st;
  __syncthreads();

  device::MaxSum all;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) all = device::online_merge(all, s_state[w]);
  const bool empty = all.sum == 0.f;  // no key: every warp's state is (-inf, 0)
  for (int e = static_cast<int>(threadIdx.x); e < kD; e += kThreads) {
    float x = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const device::MaxSum sw = s_state[w];
      if (sw.sum > 0.f) x += s_acc[w][e] * (sw.max == all.max ? 1.f : expf(sw.max - all.max));
    }
    o[r * kD + e] = __float2bfloat16(empty ? 0.f : x / all.sum);
  }
  if (threadIdx.x == 0) lse[r] = empty ? -INFINITY : all.max + logf(all.sum);
}

template <int kD>
void launch_block_per_head(const Problem& p, Buffers& b, cudaStream_t stream) {
  const Dims s = dims_of(p);
  const Geometry g{
      s.qlen, s.hq, s.hkv, s.page, s.max_pages(), s.group(), static_cast<float>(s.scale())};
  block_per_head_kernel<kD><<<static_cast<unsigned>(s.rows()), kThreads, 0, stream>>>(
      b.ptr<const __nv_bfloat16>("q"), b.ptr<const __nv_bfloat16>("k_cache"),
      b.ptr<const __nv_bfloat16>("v_cache"), b.ptr<const int32_t>("seq_lens"),
      b.ptr<const int32_t>("block_table"), b.ptr<__nv_bfloat16>("o"), b.ptr<float>("lse"), g);
  KLAB_CHECK_LAUNCH();
}

}  // namespace

Variant gpu_v01_block_per_head() {
  Variant v = gpu_variant_of(
      "decode_attention.v01_block_per_head",
      "one block per (sequence, token, query head): its warps walk the pages, online softmax, "
      "fp32",
      80, {DType::bf16}, [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const auto stream = reinterpret_cast<cudaStream_t>(args.stream);
        switch (dims_of(p).d) {
          case 64:
            return launch_block_per_head<64>(p, b, stream);
          case 128:
            return launch_block_per_head<128>(p, b, stream);
          default:
            return launch_block_per_head<256>(p, b, stream);
        }
      });
  v.can_implement = [](const Problem& p) {
    const Dims s = dims_of(p);
    if (s.d != 64 && s.d != 128 && s.d != 256)
      return Status::no("decode_attention.v01: d must be 64, 128 or 256");
    if (s.rows() > INT_MAX) return Status::no("decode_attention.v01: b * qlen * hq above 2^31");
    return Status::yes();
  };
  return v;
}

}  // namespace klab::decode_attention
