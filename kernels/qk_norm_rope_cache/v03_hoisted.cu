// v03 hoisted: v02's token ring with what does not change from one token to the next taken out of
// the token loop, and what one thread can do for the block done once.
// Adds over v02: the profile of v02 at 16384 tokens (2026-12-02_a55f38f) put it near the issue
// limit (74.6% issue active against DRAM 69.9% busy; not_selected 22% of the stalls), and its
// SASS spends ~640 instructions a thread a token where a head's norm, rotation and stores need
// ~160. Here, each thread keeps the same head every token (one pass: Hq + 2 Hkv groups fit the
// block), and
//  - the filler thread of rope pair i computes f_i / pi (an fp64 exp2 and a division) once
//    (rope.hpp: rope_per_position); a token's table costs one product, the reduction and sincospif
//    a pair;
//  - one thread computes the next token's pool offset (a 64-bit division by the page size, here
//    in 32 bits) into shared memory beside its table, where v02 had every thread divide;
//  - v heads go from the ring to the v pool as raw 16-byte vectors (v02 unpacked and repacked
//    them), and only the filler threads load the next position, only one thread the next slot;
//  - the fillers, the slot's reader and the ring's copies are the block's last threads: at
//    Qwen3-8B the two warps of v heads, the lightest of a token (v02: the first threads, q heads).
// The table and the one barrier a token are v02's; the ring (token_ring.cuh) is three rows deep
// (v02: two). Three blocks an SM (56 registers): the hoisted offsets held in registers. Measured and set aside (the worklog):
// four blocks at 40 registers with them spilled to local memory (77.1% of copy at 16384 tokens),
// and four blocks with them recomputed each token from a re-read %tid.x (85.1%, against this
// form's 87.4% in the same run). The norm weights sit in shared memory as fp32, filled once a
// block (v02: two loads from L1 and 16 conversions a head and token; held in registers across
// tokens they spilled more than they saved).
// Expected bottleneck: DRAM bandwidth at thousands of tokens; at 1-16 tokens, as v02, the launch
// and one token's chain.
// Prediction (written before it ran): 16384 tokens 85.0% -> 89-93% of copy, 4096 tokens 75.7% ->
// 79-84% (the first copies of a block's ~8 tokens stay exposed); 1 and 16 tokens within 3% of
// v02. Measured in its final form (2026-12-03_0a2a2ec): 87.4% and 83.8% of copy (v02 84.9% and
// 76.1%), 2.09x and 2.18x the unfused launches at 1 and 16 tokens; the per-token barrier is now
// its top stall (docs/worklogs/fused.md).
// Requirements: those of rung.cuh and token_ring.cuh; sm_90; every head and every rope pair in one
// pass: max(Hq + 2 Hkv groups, D / 2) threads, at most 1024; a pool of fewer than 2^31 slots.
#include "kernels/qk_norm_rope_cache/token_ring.cuh"
#include "klab/device/pdl.cuh"

namespace klab::qk_norm_rope_cache {

namespace {

constexpr int kStages = 3;  // rows in the ring: this token's and the next two
using ring::kTables;

constexpr int kBlockLimit = 1024;
constexpr int kMaxD = 512;          // rung.cuh's largest head dimension
constexpr int kSmallThreads = 384;  // Qwen3-8B (48 heads x 8 lanes) and smaller: 3 blocks an SM

/// Threads of a block: every head's group and every rope pair in one pass.
int hoisted_threads(const Args& a) {
  const int threads = std::max(a.heads() * a.lanes(), a.d / 2);
  return (threads + 31) / 32 * 32;
}

template <int kBlock, int kMinBlocks>
__global__ void __launch_bounds__(kBlock, kMinBlocks) hoisted(Args a) {
  extern __shared__ __align__(128) unsigned char smem[];  // rows, then tables
  __shared__ uint64_t full[kStages];
  __shared__ int64_t kv_bases[kTables];  // beside each table: its token's pool offset, -1: no slot
  // q's norm weight, then k's, fp32, each half in rope_slot's order (rope.hpp): the 8 lanes of a
  // head group reading one quarter of their elements read 32 consecutive words.
  __shared__ __align__(16) float weights[2 * kMaxD];
  const ring::Ring<kStages> r(smem, full, a);
  const int half = a.d / 2, lane = threadIdx.x % a.lanes();
  const int h = threadIdx.x / a.lanes();  // this thread's head, every token
  const bool q_head = h < a.hq, k_head = !q_head && h < a.hq + a.hkv;
  const bool v_head = !q_head && !k_head && h < a.heads(), norms = q_head || k_head;
  const bool warp_norms = __any_sync(0xffffffffu, norms);  // the group sums shuffle warp-wide
  // The block's last D / 2 threads fill the next token's rope table (pair `pair` each), and the
  // last one also reads its slot and issues the ring's copies: at Qwen3-8B they are the v heads'
  // two warps, which have the least to do with a token, so the barrier waits less for them.
  const int pair = int(threadIdx.x) - (int(blockDim.x) - half);
  const bool filler = pair >= 0, last = threadIdx.x + 1 == blockDim.x;
  const uint32_t stride = gridDim.x;  // tokens < 2^31 (rung.cuh): t + stride fits 32 bits
  // KV head j of a slot: j pages' head strides (P x D) after head 0 (kv_base).
  const int kv_head = k_head ? h - a.hq : h - a.hq - a.hkv;
  auto pool_head = [&](bf16* pool, int64_t kv_base) {
    return pool + kv_base + int64_t(kv_head) * a.page * a.d;
  };
  auto pool_base = [&](int64_t slot) {  // pool_offset(slot, 0, ...), or -1: no slot
    if (slot < 0) return int64_t(-1);
    // In 32 bits (can_implement: fewer than 2^31 slots): a 64-bit division is a called routine
    // whose register convention spilled this kernel.
    const uint32_t s = uint32_t(slot), page = uint32_t(a.page);
    return (int64_t(s / page) * a.hkv * page + s % page) * a.d;
  };

  // Launched programmatically (attention_block v03), the QKV GEMM before it may still be writing
  // qkv: nothing is read before its end (pdl.cuh). The frequencies are not its.
  const double per_position = filler ? rope_per_position(pair, a.d) : 0.0;
  device::grid_dependency_wait();
  device::allow_dependent_launch();
  r.start(a, blockIdx.x, stride);
  for (int i = threadIdx.x; i < 2 * a.d; i += blockDim.x) {  // element e of a half at rope_slot
    const int e = i % a.d, in_half = e % half;
    weights[i - in_half + rope_slot(in_half, half)] =
        __bfloat162float(i < a.d ? a.q_weight[e] : a.k_weight[e]);
  }
  uint32_t t = blockIdx.x;  // < tokens: the grid is at most one block a token
  if (filler) store_rope_pair(r.tables, rope_reduce(a.positions[t], per_position), pair, half);
  if (last) kv_bases[0] = pool_base(a.slots[t]);
  __syncthreads();  // barriers initialised; the weights, first token's table and offset are in

  int s = 0, tb = 0;  // this token's row stage and table
  uint32_t phase = 0;
  for (; t < a.tokens; t += stride) {
    const uint32_t next = t + stride;
    const bool more = next < a.tokens;
    const int32_t next_pos = more && filler ? a.positions[next] : 0;  // in flight meanwhile
    const int64_t next_slot = more && last ? a.slots[next] : -1;
    const int64_t kv_base = kv_bases[tb];
    const bf16* sx = r.rows + s * r.row_elems + h * a.d;
    device::mbarrier_wait(&full[s], phase);

    if (v_head && kv_base >= 0)
      store_head(pool_head(a.v_cache, kv_base), lane, half, load_head(sx, lane, half));
    if (warp_norms) {  // every lane of the warp: the group sums shuffle
      HalfPair y{};
      if (norms) {
        const HeadVectors x = load_head(sx, lane, half);
        unpack(x.lo, y.lo);
        unpack(x.hi, y.hi);
      }
      HalfPair w;  // this lane's 16 weights of its head's kind (fp32, rope_slot's layout)
      const float* sw = weights + (q_head ? 0 : a.d);
#pragma unroll
      for (int q = 0; q < 2; ++q) {  // quarter q of each half: a float4 at rope_slot(8 lane + 4 q)
        const int at = rope_slot(lane * kVec + 4 * q, half);
        *reinterpret_cast<float4*>(w.lo + 4 * q) = *reinterpret_cast<const float4*>(sw + at);
        *reinterpret_cast<float4*>(w.hi + 4 * q) = *reinterpret_cast<const float4*>(sw + half + at);
      }
      rms_normalise(y, w, a);
      if (q_head || (k_head && kv_base >= 0)) {
        rotate(y, r.tables + tb * a.d, lane, half);
        store_head(q_head ? a.q_out + (int64_t(t) * a.hq + h) * a.d : pool_head(a.k_cache, kv_base),
                   lane, half, y);
      }
    }

    if (more && filler)
      store_rope_pair(r.tables + (tb ^ 1) * a.d, rope_reduce(next_pos, per_position), pair, half);
    if (more && last) kv_bases[tb ^ 1] = pool_base(next_slot);
    // This thread's reads of stage s before the copy engine's next write into it.
    device::fence_proxy_async_shared();
    __syncthreads();  // stage s and its table are free; the next token's table and offset are in
    if (last && t + kStages * stride < a.tokens) r.issue(a, t + kStages * stride, s);
    tb ^= 1;
    if (++s == kStages) s = 0, phase ^= 1u;
  }
}

}  // namespace

Variant gpu_v03_hoisted() {
  return ring::variant(
      "v03_hoisted",
      "v02's token ring with a head per thread every token: the rope frequencies once per pair, "
      "the next token's pool offset once, by one thread",
      kStages,
      [](const Problem& p, Buffers& b, const LaunchArgs& la) {
        const Args a = args_of(p, b);
        const int threads = hoisted_threads(a);
        if (threads <= kSmallThreads)
          ring::launch<hoisted<kSmallThreads, 3>>(a, la, threads, kStages);
        else
          ring::launch<hoisted<kBlockLimit, 1>>(a, la, threads, kStages);
      },
      [](const Problem& p) {
        const std::string id = "qk_norm_rope_cache.v03_hoisted";
        const Dims d = dims_of(p);
        const int64_t threads = std::max((d.hq + 2 * d.hkv) * (d.d / (2 * kVec)), d.d / 2);
        if (threads > kBlockLimit)
          return Status::no(id + ": " + std::to_string(d.hq + 2 * d.hkv) + " heads x " +
                            std::to_string(d.d / (2 * kVec)) +
                            " lanes exceed one block of 1024 threads (a head a thread group, one "
                            "pass)");
        if (d.pool_pages() * d.page > 2147483647)
          return Status::no(id + ": a pool of 2^31 slots or more (slots divided in 32 bits)");
        return Status::yes();
      });
}

}  // namespace klab::qk_norm_rope_cache
