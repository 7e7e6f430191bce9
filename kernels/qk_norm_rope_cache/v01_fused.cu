// v01 fused: the norm, the rotation and the cache write in one launch, one block per token,
// each head in a group of D / 16 lanes (8 at D = 128: 48 groups, 384 threads, every head of a
// Qwen3-8B token in one pass; three blocks an SM).
// Adds over the unfused baseline (three launches: rmsnorm, rope in place, cache write): y never
// leaves registers, each head is read once and written once, and the token's cos and sin are
// computed once for all its heads. A block issues its first pass's two 16-byte loads per thread
// (streaming: qkv is read once), then fills the token's table of D / 2 cos and sin in shared
// memory (rope.hpp: the phase reduced in fp64, sincospif in fp32) under those loads' latency,
// synchronises once, and per head: the group's sum of squares by shuffles, y = x * rsqrt(mean +
// eps) * w in fp32, the rotate-half pairs (both in one thread) by fma, 16-byte stores to q_out
// or, for a k head of a token with a slot, to the k pool; v heads go to the v pool unchanged. A
// token with slot -1 reads and writes no k or v (its q still goes out). More heads than 384
// threads hold loop.
// Expected bottleneck: DRAM bandwidth at thousands of tokens (96 head rows of 256 bytes moved a
// token, against 7 flops an element); at 1-16 tokens the launch and one block's dependent chain
// (slot and position, the loads, the table, the stores), about two DRAM round trips.
// Prediction (written before it ran; not measured yet): >= 90% of the copy ceiling at 16384
// tokens (>= 80% at 4096); >= 2x the unfused baseline at 1 and 16 tokens (one launch against
// three dependent ones), and >= 1.8x at 16384 tokens (the baseline moves 192 head rows a token
// against 96, less what L2 keeps between its launches).
// Requirements: those of rung.cuh (D = 16 .. 512 a power of two, aligned rows).
#include "kernels/qk_norm_rope_cache/rung.cuh"

namespace klab::qk_norm_rope_cache {

namespace {

// Qwen3-8B's 48 heads x 8 lanes in one pass; three blocks an SM (<= 56 registers, no spills):
// 1152 threads with two 16-byte loads each in flight.
constexpr int kThreads = 384;

__global__ void __launch_bounds__(kThreads, 3) fused_token(Args a) {
  extern __shared__ float4 sRaw[];  // (2, D / 2): cos, then sin
  float* sRope = reinterpret_cast<float*>(sRaw);
  const int64_t t = blockIdx.x;
  const int lanes = a.lanes(), lane = threadIdx.x % lanes, group = threadIdx.x / lanes;
  const int groups = blockDim.x / lanes, heads = a.heads(), half = a.d / 2;
  const int64_t slot = a.slots[t];
  // KV head h of the token's slot sits h pages' head strides (P x D) after head 0.
  const int64_t kv_base = slot >= 0 ? pool_offset(slot, 0, a.hkv, a.page, a.d) : 0;
  const bf16* gX = a.qkv + t * heads * a.d;  // (Hq + 2 Hkv, D)
  // A head is read and written when it is a q head, or the token has a slot.
  auto live = [&](int h) { return h < heads && (h < a.hq || slot >= 0); };
  auto load = [&](int h) {
    const bf16* row = gX + static_cast<int64_t>(h) * a.d;
    return HeadVectors{device::load16_stream(row + lane * kVec),
                       device::load16_stream(row + half + lane * kVec)};
  };
  HeadVectors x{};
  if (live(group)) x = load(group);  // issued before the table: its latency hides the table's
  fill_rope_table(sRope, a.positions[t], a.d);
  __syncthreads();

  for (int base = 0; base < heads; base += groups) {  // the same trip count in every thread
    const int h = base + group;
    const bool on = live(h);
    if (base > 0 && on) x = load(h);
    HalfPair y{};
    if (on) {
      unpack(x.lo, y.lo);
      unpack(x.hi, y.hi);
    }
    finish_head(a, y, h, on, t, kv_base, sRope, lane);
  }
}

}  // namespace

Variant gpu_v01_fused() {
  return rung_variant(
      "v01_fused",
      "one launch, a block per token, a lane group per head: norm, rope (table in shared "
      "memory), q out and k, v into the pools",
      [](const Problem& p, Buffers& b, const LaunchArgs& la) {
        const Args a = args_of(p, b);
        fused_token<<<static_cast<unsigned>(a.tokens), token_block_threads(a, a.heads(), kThreads),
                      rope_table_bytes(a), stream_of(la)>>>(a);
        KLAB_CHECK_LAUNCH();
      });
}

}  // namespace klab::qk_norm_rope_cache
