#pragma once
// The kernel of the hoisted rungs (v03_hoisted: one token a barrier; v04_token_pairs: two;
// v07_head_parts: a row split over three blocks), on the token ring (token_ring.cuh), and the
// per-head step v05 and v06 share. What each part adds over v02 and why: v03_hoisted.cu's header
// and docs/worklogs/fused.md.
//
// Every head and every rope pair in one pass of the block, so a thread keeps its head every
// token; the block's last D / 2 threads fill the rope tables of the next group of tokens (each
// rope pair's f_i / pi computed once, rope_per_position), and the last thread reads their slots,
// computes their pool offsets (in 32 bits) and issues the ring's copies; v heads are copied as
// raw vectors; the norm weights sit in shared memory as fp32 in rope_slot's order. A group of
// kTokens tokens (the block's tokens j .. j + kTokens - 1, token j = blockIdx.x + j * gridDim.x,
// its row, table and pool offset in stage j % kStages) is processed between two barriers. With
// kParts > 1 a block holds one part of each of its tokens' rows (its heads a thread each, in
// one pass): block b part b % kParts of tokens b / kParts + j * gridDim.x / kParts.
#include <algorithm>
#include <string>

#include "kernels/qk_norm_rope_cache/token_ring.cuh"
#include "klab/device/pdl.cuh"

namespace klab::qk_norm_rope_cache::hoisted {

inline constexpr int kBlockLimit = 1024;
inline constexpr int kMaxD = 512;          // rung.cuh's largest head dimension
inline constexpr int kSmallThreads = 384;  // Qwen3-8B (48 heads x 8 lanes) and smaller

/// Threads of a block: every head's group (D / 16 lanes each) and every rope pair in one pass.
inline int64_t block_threads(int64_t heads, int64_t d) {
  const int64_t threads = std::max(heads * (d / (2 * kVec)), d / 2);
  return (threads + 31) / 32 * 32;
}

/// What a thread of a head group keeps every token: its head and the head's kind. Every lane of
/// the warp constructs it (warp_norms: whether any group of the warp normalises).
struct HeadRole {
  int h, lane, kv_head;
  bool q_head, k_head, v_head, norms, warp_norms;
  /// This thread's head: its lane group's index in the block.
  __device__ explicit HeadRole(const Args& a) : HeadRole(a, int(threadIdx.x) / a.lanes()) {}
  /// Head `head` (a.heads() or more: none).
  __device__ HeadRole(const Args& a, int head)
      : h(head),
        lane(int(threadIdx.x) % a.lanes()),
        q_head(h < a.hq),
        k_head(!q_head && h < a.hq + a.hkv) {
    v_head = !q_head && !k_head && h < a.heads();
    norms = q_head || k_head;
    warp_norms = __any_sync(0xffffffffu, norms);     // the group sums shuffle warp-wide
    kv_head = k_head ? h - a.hq : h - a.hq - a.hkv;  // KV head j: j pages' head strides (P x D) on
  }
};

/// The block's fillers and its last thread: the last D / 2 threads fill the rope tables (pair
/// `pair` each, its f_i / pi computed once, rope_per_position: constructed before
/// grid_dependency_wait, it reads no memory), and the last thread also reads the slots and issues
/// the ring's copies.
struct Fillers {
  int pair;
  bool filler, last;
  double per_position;
  __device__ explicit Fillers(const Args& a)
      : pair(int(threadIdx.x) - (int(blockDim.x) - a.d / 2)),
        filler(pair >= 0),
        last(threadIdx.x + 1 == blockDim.x),
        per_position(filler ? rope_per_position(pair, a.d) : 0.0) {}
};

/// q's norm weight, then k's, as fp32 into `weights` (2 D floats), each half in rope_slot's order
/// (rope.hpp): the 8 lanes of a head group reading one quarter of their elements read 32
/// consecutive words. By the block's threads in turn; the caller synchronises.
__device__ __forceinline__ void fill_weights(float* weights, const Args& a) {
  const int half = a.d / 2;
  for (int i = threadIdx.x; i < 2 * a.d; i += blockDim.x) {  // element e of a half at rope_slot
    const int e = i % a.d, in_half = e % half;
    weights[i - in_half + rope_slot(in_half, half)] =
        __bfloat162float(i < a.d ? a.q_weight[e] : a.k_weight[e]);
  }
}

/// This thread's q or k head from its row `sx` in the ring, RMS-normalised with the fp32 weights
/// of fill_weights (zeros where the thread holds no q or k head). Every lane of a warp with
/// warp_norms calls it (the group sums shuffle).
__device__ __forceinline__ HalfPair normalised(const Args& a, const HeadRole& r, const bf16* sx,
                                               const float* weights) {
  const int half = a.d / 2;
  HalfPair y{};
  if (r.norms) {
    const HeadVectors x = load_head(sx, r.lane, half);
    unpack(x.lo, y.lo);
    unpack(x.hi, y.hi);
  }
  HalfPair w;  // this lane's 16 weights of its head's kind (fp32, rope_slot's layout)
  const float* sw = weights + (r.q_head ? 0 : a.d);
#pragma unroll
  for (int q = 0; q < 2; ++q) {  // quarter q of each half: a float4 at rope_slot(8 lane + 4 q)
    const int at = rope_slot(r.lane * kVec + 4 * q, half);
    *reinterpret_cast<float4*>(w.lo + 4 * q) = *reinterpret_cast<const float4*>(sw + at);
    *reinterpret_cast<float4*>(w.hi + 4 * q) = *reinterpret_cast<const float4*>(sw + half + at);
  }
  rms_normalise(y, w, a);
  return y;
}

/// Token tu's step of this thread's head, from its row `sx` in the ring, its rope table and pool
/// offset: a v head copied raw to the v pool, a q or k head normalised, rotated and stored to
/// q_out or the k pool. With kE4m3 the pools are e4m3: k and v times their head's 1 / scale
/// (inv_scale), rounded to e4m3 (store_head_e4m3). Every lane of the warp calls it.
template <bool kE4m3 = false>
__device__ __forceinline__ void head_step(const Args& a, const HeadRole& r, const bf16* sx,
                                          const float* table, const float* weights, int64_t kv_base,
                                          uint32_t tu, float inv_scale = 1.f) {
  const int half = a.d / 2;
  auto pool_head = [&](auto* pool) { return pool + kv_base + int64_t(r.kv_head) * a.page * a.d; };
  if (r.v_head && kv_base >= 0) {
    if constexpr (kE4m3) {
      const HeadVectors x = load_head(sx, r.lane, half);
      HalfPair v;
      unpack(x.lo, v.lo);
      unpack(x.hi, v.hi);
      store_head_e4m3(pool_head(a.v_cache8), r.lane, half, v, inv_scale);
    } else {
      store_head(pool_head(a.v_cache), r.lane, half, load_head(sx, r.lane, half));
    }
  }
  if (!r.warp_norms) return;  // every lane of the warp: the group sums shuffle
  HalfPair y = normalised(a, r, sx, weights);
  if (r.q_head || (r.k_head && kv_base >= 0)) {
    rotate(y, table, r.lane, half);
    if constexpr (kE4m3) {
      if (r.k_head) {
        store_head_e4m3(pool_head(a.k_cache8), r.lane, half, y, inv_scale);
        return;
      }
    }
    store_head(r.q_head ? a.q_out + (int64_t(tu) * a.hq + r.h) * a.d : pool_head(a.k_cache), r.lane,
               half, y);
  }
}

/// The hoisted kernels' requirements beyond rung.cuh's and the ring's: a block of threads_of(heads
/// of a block, d) threads at most 1024 (every head of the block and every rope pair in one
/// pass; `parts` blocks a row), and a pool of fewer than 2^31 slots.
inline Status fits_one_pass(const Dims& d, const std::string& id,
                            int64_t (*threads_of)(int64_t heads, int64_t d) = block_threads,
                            int parts = 1) {
  const int64_t heads = ring::part_heads<int64_t>(d.hq + 2 * d.hkv, parts);
  if (threads_of(heads, d.d) > kBlockLimit)
    return Status::no(
        id + ": " + std::to_string(heads) + " heads x " + std::to_string(d.d / (2 * kVec)) +
        " lanes (a head a thread group, one pass) need more than 1024 threads a block");
  if (parts > 1 && (parts - 1) * heads >= d.hq + 2 * d.hkv)
    return Status::no(id + ": " + std::to_string(d.hq + 2 * d.hkv) + " heads leave a part of " +
                      std::to_string(parts) + " empty");
  return slots_fit_32_bits(d, id);
}

template <int kBlock, int kMinBlocks, int kTokens, int kStages, int kParts, bool kE4m3 = false>
__global__ void __launch_bounds__(kBlock, kMinBlocks) kernel(Args a) {
  // The next group's tables go to stages the current group does not hold.
  static_assert(kStages >= 2 * kTokens);
  extern __shared__ __align__(128) unsigned char smem[];  // rows, then tables
  __shared__ uint64_t full[kStages];
  __shared__ int64_t kv_bases[kStages];  // each stage's token's pool offset, -1: no slot
  __shared__ __align__(16) float weights[2 * kMaxD];  // fill_weights's
  // kParts > 1 (v07): block b takes part b % kParts of each of its tokens, the heads from head0;
  // its tokens are b / kParts, b / kParts + grid / kParts, ... (the grid is a multiple of kParts).
  const int per_part = ring::part_heads(a.heads(), kParts);
  const int head0 = kParts == 1 ? 0 : int(blockIdx.x % kParts) * per_part;
  const int head_end = min(head0 + per_part, a.heads());
  const ring::Ring<kStages> r(smem, full, a, head0, head_end - head0, per_part);
  // With parts, a thread past the part's heads (blocks round up to warps and to D / 2 fillers)
  // takes the index a.heads(): no head.
  const int group = int(threadIdx.x) / a.lanes();
  const HeadRole role(a, kParts == 1                ? group
                         : group < head_end - head0 ? head0 + group
                                                    : a.heads());
  const uint32_t first = blockIdx.x / kParts;
  const int half = a.d / 2;
  const uint32_t stride = gridDim.x / kParts;  // tokens < 2^31 (rung.cuh): t + k stride fits

  // The fillers and the last thread: at Qwen3-8B without parts the v heads' two warps, which have
  // the least to do with a token, so the barrier waits less for them. Launched programmatically
  // (attention_block v03), the QKV GEMM before may still be writing qkv: nothing is read before
  // its end (pdl.cuh); the frequencies are not its.
  const Fillers f(a);
  device::grid_dependency_wait();
  device::allow_dependent_launch();
  r.start(a, first, stride);
  fill_weights(weights, a);
  // e4m3 pools: this thread's KV head's 1 / scale (k or v), once. Held in a register it costs
  // the e4m3 instantiation an 8-byte spill at 56 registers; from shared memory each token, or
  // recomputed each token, more (ptxas: 12 and 28 bytes).
  float inv_scale = 1.f;
  if constexpr (kE4m3)
    if (role.k_head || role.v_head)
      inv_scale = 1.f / (role.k_head ? a.k_scale : a.v_scale)[role.kv_head];
#pragma unroll
  for (int u = 0; u < kTokens; ++u) {  // the first group's tables and offsets
    const uint32_t tu = first + u * stride;
    if (tu >= a.tokens) break;
    if (f.filler)
      store_rope_pair(r.tables + u * a.d, rope_reduce(a.positions[tu], f.per_position), f.pair,
                      half);
    if (f.last) kv_bases[u] = pool_base(a, a.slots[tu]);
  }
  __syncthreads();  // barriers initialised; the weights (and scales), first tables and offsets in

  uint32_t j = 0;  // the block's tokens before this group
  for (uint32_t t = first; t < a.tokens; t += kTokens * stride, j += kTokens) {
    int32_t next_pos[kTokens];  // the next group's, in flight meanwhile
    int64_t next_slot[kTokens];
#pragma unroll
    for (int u = 0; u < kTokens; ++u) {
      const uint32_t tn = t + (kTokens + u) * stride;
      next_pos[u] = tn < a.tokens && f.filler ? a.positions[tn] : 0;
      next_slot[u] = tn < a.tokens && f.last ? a.slots[tn] : -1;
    }
#pragma unroll
    for (int u = 0; u < kTokens; ++u) {
      const uint32_t tu = t + u * stride;
      if (tu >= a.tokens) break;  // the same in every thread
      const int st = (j + u) % kStages;
      const int64_t kv_base = kv_bases[st];
      device::mbarrier_wait(&full[st], ((j + u) / kStages) & 1u);
      head_step<kE4m3>(a, role, r.rows + st * r.row_elems + (role.h - head0) * a.d,
                       r.tables + st * a.d, weights, kv_base, tu, inv_scale);
    }

#pragma unroll
    for (int u = 0; u < kTokens; ++u) {  // the next group's tables and offsets
      if (t + (kTokens + u) * stride >= a.tokens) break;
      const int sn = (j + kTokens + u) % kStages;
      if (f.filler)
        store_rope_pair(r.tables + sn * a.d, rope_reduce(next_pos[u], f.per_position), f.pair,
                        half);
      if (f.last) kv_bases[sn] = pool_base(a, next_slot[u]);
    }
    // This thread's reads of the group's stages before the copy engine's next writes into them.
    device::fence_proxy_async_shared();
    __syncthreads();  // the group's stages are free; the next group's tables and offsets are in
    if (f.last) {
#pragma unroll
      for (int u = 0; u < kTokens; ++u) {
        const uint32_t tf = t + (kStages + u) * stride;  // token j + u + kStages
        if (tf < a.tokens) r.issue(a, tf, (j + u) % kStages);
      }
    }
  }
}

/// The variant of a hoisted rung: kTokens tokens a barrier, a ring of kStages rows, each token's
/// row split over kParts blocks; kSmallBlocks blocks an SM up to kSmall threads (the register
/// bound: v03 3 blocks of 384 threads, 56 registers), one beyond. With kWithE4m3 it also takes
/// e4m3 pools (the same kernel's kE4m3 instantiations).
template <int kTokens, int kStages, int kSmallBlocks = 3, int kParts = 1,
          int kSmall = kSmallThreads, bool kWithE4m3 = false>
Variant variant(const std::string& rung, const std::string& summary) {
  const std::string id = "qk_norm_rope_cache." + rung;
  auto also = [id](const Problem& p) {
    return fits_one_pass(dims_of(p), id, block_threads, kParts);
  };
  if constexpr (kWithE4m3)
    return ring::sized_variant<kernel<kSmall, kSmallBlocks, kTokens, kStages, kParts>,
                               kernel<kBlockLimit, 1, kTokens, kStages, kParts>,
                               kernel<kSmall, kSmallBlocks, kTokens, kStages, kParts, true>,
                               kernel<kBlockLimit, 1, kTokens, kStages, kParts, true>>(
        rung, summary, kStages, kSmall, block_threads, also, kParts);
  else
    return ring::sized_variant<kernel<kSmall, kSmallBlocks, kTokens, kStages, kParts>,
                               kernel<kBlockLimit, 1, kTokens, kStages, kParts>>(
        rung, summary, kStages, kSmall, block_threads, also, kParts);
}

}  // namespace klab::qk_norm_rope_cache::hoisted
