// baseline unfused: the sequence a framework runs without a fused kernel (vLLM's Qwen3 layer:
// q_norm and k_norm, rotary_emb in place, reshape_and_cache), as three klab launches on the same
// data (issue 15: a fused kernel's baseline is the unfused sequence of klab launches, in the
// same run):
//   1. rmsnorm   every q and k head of every token: y = bf16(x * rsqrt(mean(x^2) + eps) * w),
//                q heads into q_out, k heads into the workspace (T x Hkv x D bf16), a lane group
//                per head (one launch for both norms: a framework's two would cost one more)
//   2. rope      in place on q_out and the workspace, a block per token (its cos/sin table in
//                shared memory, as v01's; every k head rotated, slot or not, as a framework does)
//   3. cache     k (workspace) and v (qkv) into the pools by slot_mapping, a thread per 16 bytes
//                (8 elements); into e4m3 pools times the head's 1 / scale, rounded to e4m3 (8 bytes)
// Expected bottleneck: DRAM bandwidth at thousands of tokens, on 192 head rows of 256 bytes a
// token at Qwen3-8B's heads (norm: 40 read, 40 written; rope: 40 and 40; cache: 16 and 16)
// against the fused kernel's 96, less what L2 (60 MiB) keeps between launches (at 16384
// tokens q_out alone is 128 MiB); at a few tokens three launches, each a dependent DRAM round
// trip.
// Prediction (written before it ran; not measured yet): ~45% of the copy ceiling by the family's
// counted bytes at 16384 tokens (96 / 192 of a copy-speed sequence, less three tails); 2-3x the
// fused kernel's time at 1 and 16 tokens.
// Requirements: those of rung.cuh (D = 16 .. 512 a power of two, aligned rows).
#include "kernels/qk_norm_rope_cache/rung.cuh"

namespace klab::qk_norm_rope_cache {

namespace {

constexpr int kThreads = 256;  // a multiple of 32 and of every head's lane group

// Where the workspace keeps the normalised k of token t, KV head h (T, Hkv, D).
__device__ __forceinline__ int64_t k_row(const Args& a, int64_t t, int h) {
  return (t * a.hkv + h) * a.d;
}

__global__ void __launch_bounds__(kThreads) rmsnorm_kernel(Args a, bf16* __restrict__ ws) {
  const int lanes = a.lanes(), lane = threadIdx.x % lanes, half = a.d / 2;
  const int per_token = a.hq + a.hkv;
  const int64_t row = int64_t(blockIdx.x) * (blockDim.x / lanes) + threadIdx.x / lanes;
  const bool on = row < a.tokens * per_token;  // the rest still shuffle with their warp
  const int64_t t = row / per_token;
  const int h = static_cast<int>(row % per_token);
  HalfPair y{};
  if (on) {
    const HeadVectors x = load_head(a.qkv + (t * a.heads() + h) * a.d, lane, half);
    unpack(x.lo, y.lo);
    unpack(x.hi, y.hi);
  }
  const bool is_q = h < a.hq;
  rms_normalise(y, load_head(is_q ? a.q_weight : a.k_weight, lane, half), a);
  if (!on) return;
  store_head(is_q ? a.q_out + (t * a.hq + h) * a.d : ws + k_row(a, t, h - a.hq), lane, half, y);
}

__global__ void __launch_bounds__(kMaxThreads) rope_kernel(Args a, bf16* __restrict__ ws) {
  extern __shared__ float4 sRaw[];  // (2, D / 2): cos, then sin
  float* sRope = reinterpret_cast<float*>(sRaw);
  const int64_t t = blockIdx.x;
  const int lanes = a.lanes(), lane = threadIdx.x % lanes, half = a.d / 2;
  fill_rope_table(sRope, a.positions[t], a.d);
  __syncthreads();
  for (int h = threadIdx.x / lanes; h < a.hq + a.hkv; h += blockDim.x / lanes) {
    bf16* row = h < a.hq ? a.q_out + (t * a.hq + h) * a.d : ws + k_row(a, t, h - a.hq);
    const HeadVectors x = load_head(row, lane, half);
    HalfPair y;
    unpack(x.lo, y.lo);
    unpack(x.hi, y.hi);
    rotate(y, sRope, lane, half);
    store_head(row, lane, half, y);
  }
}

__global__ void cache_kernel(Args a, const bf16* __restrict__ ws) {
  const int per_head = a.d / kVec;
  const int64_t vectors = a.tokens * a.hkv * 2 * per_head;  // (T, k|v, Hkv, D / 8)
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < vectors;
       c += int64_t(gridDim.x) * blockDim.x) {
    const int64_t t = c / (2 * a.hkv * per_head);
    const int64_t slot = a.slots[t];
    if (slot < 0) continue;
    const int within = static_cast<int>(c % (2 * a.hkv * per_head));
    const bool is_v = within >= a.hkv * per_head;
    const int h = within / per_head % a.hkv, e = within % per_head * kVec;
    const bf16* src = is_v ? a.qkv + (t * a.heads() + a.hq + a.hkv + h) * a.d : ws + k_row(a, t, h);
    const int64_t at = pool_offset(slot, h, a.hkv, a.page, a.d) + e;
    if (a.k_cache8 == nullptr) {
      device::store16((is_v ? a.v_cache : a.k_cache) + at, device::load16(src + e));
      continue;
    }
    const float inv_scale = 1.f / (is_v ? a.v_scale : a.k_scale)[h];
    float f[kVec];
    unpack(device::load16(src + e), f);
#pragma unroll
    for (int i = 0; i < kVec; ++i) f[i] *= inv_scale;
    *reinterpret_cast<uint2*>((is_v ? a.v_cache8 : a.k_cache8) + at) = device::pack8_e4m3(f);
  }
}

}  // namespace

Variant gpu_baseline_unfused() {
  Variant v = rung_variant(
      "baseline_unfused",
      "the unfused sequence: rmsnorm (q out, k to the workspace), rope in place, cache write",
      [](const Problem& p, Buffers& b, const LaunchArgs& la) {
        const Args a = args_of(p, b);
        auto* ws = static_cast<bf16*>(b.workspace);
        const cudaStream_t stream = stream_of(la);
        const int64_t rows = a.tokens * (a.hq + a.hkv);
        rmsnorm_kernel<<<device::grid_1d(rows, kThreads / a.lanes()), kThreads, 0, stream>>>(a, ws);
        KLAB_CHECK_LAUNCH();
        rope_kernel<<<static_cast<unsigned>(a.tokens), token_block_threads(a, a.hq + a.hkv),
                      rope_table_bytes(a), stream>>>(a, ws);
        KLAB_CHECK_LAUNCH();
        const int64_t vectors = a.tokens * a.hkv * 2 * (a.d / kVec);
        cache_kernel<<<device::grid_1d(vectors, kThreads), kThreads, 0, stream>>>(a, ws);
        KLAB_CHECK_LAUNCH();
      },
      {DType::bf16, DType::e4m3});
  v.info.baseline = true;
  v.workspace_bytes = [](const Problem& p) {
    const Dims s = dims_of(p);
    return static_cast<size_t>(s.tokens * s.hkv * s.d) * sizeof(bf16);
  };
  return v;
}

}  // namespace klab::qk_norm_rope_cache
