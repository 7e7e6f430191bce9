#pragma once
// The kernel of v01 and v02: one block per query row (sequence, new token, query head) and
// split of its keys. The block's four warps take the split's visible keys in turn (key j to warp
// j % 4); for each, the warp looks the key's page up in the block table, reads its K row (lane i
// holds elements i, i + 32, ... of D), reduces q . k across the warp with shuffles, folds the
// score into its online softmax state (klab/device/online_softmax.cuh) and its fp32 accumulator
// rescaled by the same factor, then reads the V row into the accumulator. At the end the four
// warps' (max, sum) states merge through shared memory, o = acc / sum and lse = max + log(sum),
// written through SplitOut (split_kv.cuh): to o and lse when the sequence has one split, else to
// the split's partial. A row without keys writes o = 0 and lse = -inf, never 0 / 0.
// v01 launches it with one split (a chunk longer than any sequence); v02 with the split plan.
#include <cuda_bf16.h>

#include "kernels/decode_attention/family.hpp"
#include "kernels/decode_attention/split_kv.cuh"
#include "klab/device/online_softmax.cuh"

namespace klab::decode_attention {

constexpr int kRowWarps = 4;
constexpr int kRowThreads = kRowWarps * 32;

struct RowGeometry {
  int64_t qlen, hq, hkv, page, max_pages, group;
  float scale;
};

inline RowGeometry row_geometry(const Dims& s) {
  return {s.qlen, s.hq, s.hkv, s.page, s.max_pages(), s.group(), static_cast<float>(s.scale())};
}

// Block (x, y) = (row r = (bi * qlen + t) * hq + h, split y).
template <int kD>
__global__ void __launch_bounds__(kRowThreads)
    block_per_row_kernel(const __nv_bfloat16* __restrict__ q,
                         const __nv_bfloat16* __restrict__ k_cache,
                         const __nv_bfloat16* __restrict__ v_cache,
                         const int32_t* __restrict__ seq_lens,
                         const int32_t* __restrict__ block_table, SplitOut out, RowGeometry g) {
  constexpr int kPerLane = kD / 32;
  __shared__ float s_acc[kRowWarps][kD];         // each warp's accumulator
  __shared__ device::MaxSum s_state[kRowWarps];  // each warp's softmax state

  const int64_t r = blockIdx.x;
  const int split = static_cast<int>(blockIdx.y);
  const int64_t h = r % g.hq, t = (r / g.hq) % g.qlen, bi = r / (g.hq * g.qlen);
  const int64_t hk = h / g.group;
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  const int64_t len = seq_lens[bi];
  const int splits = out.plan.splits_of(len);
  if (split >= splits) return;  // the grid is sized for the longest sequence
  // Keys this row sees: the sequence's first len - qlen + t + 1 (family.hpp), none for an empty
  // slot; this split's share of them.
  const int64_t n = max(int64_t(0), min(len, len - g.qlen + t + 1));
  const int64_t j_end = min(n, out.plan.key_end(split, len));
  const int32_t* table = block_table + bi * g.max_pages;

  float rq[kPerLane], acc[kPerLane];  // q * scale and o's accumulator, elements lane + 32 i
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    rq[i] = __bfloat162float(q[r * kD + lane + 32 * i]) * g.scale;
    acc[i] = 0.f;
  }
  device::MaxSum st;
  for (int64_t j = out.plan.key_begin(split) + warp; j < j_end; j += kRowWarps) {
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
  for (int w = 0; w < kRowWarps; ++w) all = device::online_merge(all, s_state[w]);
  const bool empty = all.sum == 0.f;  // no key: every warp's state is (-inf, 0)
  for (int e = static_cast<int>(threadIdx.x); e < kD; e += kRowThreads) {
    float x = 0.f;
#pragma unroll
    for (int w = 0; w < kRowWarps; ++w) {
      const device::MaxSum sw = s_state[w];
      if (sw.sum > 0.f) x += s_acc[w][e] * (sw.max == all.max ? 1.f : expf(sw.max - all.max));
    }
    out.store_o(r, split, splits, kD, e, empty ? 0.f : x / all.sum);
  }
  if (threadIdx.x == 0)
    out.store_lse(r, split, splits, empty ? -INFINITY : all.max + logf(all.sum));
}

/// The row kernel's arguments, resolved once (prepare); operator() enqueues the kernel over
/// (rows, plan.max_splits) blocks, then the merge.
struct RowLaunch {
  const __nv_bfloat16 *q, *k_cache, *v_cache;
  const int32_t *seq_lens, *block_table;
  SplitOut out;
  RowGeometry g;
  int64_t rows, d;

  template <int kD>
  void enqueue(cudaStream_t stream) const {
    const dim3 grid(static_cast<unsigned>(rows), static_cast<unsigned>(out.plan.max_splits));
    block_per_row_kernel<kD>
        <<<grid, kRowThreads, 0, stream>>>(q, k_cache, v_cache, seq_lens, block_table, out, g);
    KLAB_CHECK_LAUNCH();
    launch_merge_splits<kD>(out, seq_lens, rows, g.qlen * g.hq, stream);
  }
  void operator()(cudaStream_t stream) const {
    with_head_dim(d, [&]<int kD>() { enqueue<kD>(stream); });
  }
};

inline RowLaunch row_launch(const Problem& p, Buffers& b, const SplitKvPlan& plan) {
  const Dims s = dims_of(p);
  return {
      b.ptr<const __nv_bfloat16>("q"),
      b.ptr<const __nv_bfloat16>("k_cache"),
      b.ptr<const __nv_bfloat16>("v_cache"),
      b.ptr<const int32_t>("seq_lens"),
      b.ptr<const int32_t>("block_table"),
      split_out(b.ptr<__nv_bfloat16>("o"), b.ptr<float>("lse"), b.workspace, plan, s.rows(), s.d),
      row_geometry(s),
      s.rows(),
      s.d};
}

}  // namespace klab::decode_attention
