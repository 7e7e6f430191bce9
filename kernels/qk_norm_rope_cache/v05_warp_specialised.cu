// v05 warp-specialised: v03's token ring with its one barrier a token replaced by a producer warp
// and two mbarriers a stage.
// Adds over v03: v03's profile at 16384 tokens (2026-12-03_0a2a2ec) puts the per-token
// __syncthreads at the top of its stalls (5.05 cycles an issue) with DRAM ~74% busy: every warp
// waits each token for the slowest warp of the block and for the fillers' next table, so a late
// q warp holds the v warps, and the ring's copies go out only after the whole block's barrier.
// Here the roles split (warp specialisation, as Hopper GEMMs split a TMA producer from the math
// warps):
//  - one producer warp, after the consumer warps: for each of the block's tokens it waits until
//    the token's stage is free (the stage's `empty` mbarrier: one arrival a consumer warp), issues
//    the row's bulk copy at once (expect_tx, no arrival yet), writes the token's rope table (two
//    pairs a lane at D = 128, each pair's frequency from shared memory, computed once a block) and
//    pool offset, and arrives on the stage's `full` mbarrier (one arrival a lane: they release
//    the table and offset; the copy's bytes complete it);
//  - each consumer warp waits on `full` for its token, runs v03's step of its heads (hoisted.cuh:
//    head_step), and hands the stage back with one arrival on `empty`: no warp waits for another
//    except through the ring, so a fast warp runs up to a ring's depth of tokens ahead of the
//    slowest.
// Expected bottleneck: DRAM bandwidth at thousands of tokens; at 1-16 tokens, as v03, the launch
// and one token's chain (the producer's slot read, the copy, the consumers' step).
// Prediction (written before it ran): 16384 tokens 86.8-88.1% (v03) -> 89-93% of copy; 4096
// tokens 83.7% -> 83-87%; 1 and 16 tokens within 3% of v03.
// Measured: with four rows at three blocks an SM (ptxas spilling 16 bytes at 48 registers) 84.7% /
// 80.8% of copy at 16384 / 4096 tokens against v03's 87.2% / 83.7% (2026-12-03_48aa6e4); at two
// blocks (64 registers) 87.0% / 79.8% (v03 86.9% / 83.5%). Eight rows at two blocks, the first
// copy before the block's barrier (kept): 86.0% / 79.3% (v03 87.0% / 83.3%; four rows 85.8%,
// 2026-12-03_bd7108f_qk_v05_stages); 2.11x, 2.15x and 2.15x the unfused launches at 1, 16 and 64
// tokens. Refuted: the barrier stall is gone (0.08 cycles an issue) and the warps now wait on
// their rows (long_scoreboard 8.58), v03's time exactly in Nsight Compute (107.6 us against
// 107.5). Built traffic-only (no norm, no rotation) this structure moves the bytes at 86.7%
// (2026-12-03_bd7108f_qk_traffic): fewer warps storing, not the barrier, set its pace.
// Requirements: those of rung.cuh and token_ring.cuh (a ring of eight rows); sm_90; every head in
// one pass of the consumer warps plus one producer warp: Hq + 2 Hkv groups + 32 threads, at most
// 1024; a pool of fewer than 2^31 slots.
#include "kernels/qk_norm_rope_cache/hoisted.cuh"

namespace klab::qk_norm_rope_cache {
namespace {

constexpr int kStages = 8;       // rows of the ring
constexpr int kSmallBlocks = 2;  // blocks an SM up to kSmallBlock threads
constexpr int kProducer = 32;    // threads of the producer warp
constexpr int kSmallBlock = hoisted::kSmallThreads + kProducer;  // Qwen3-8B: 12 + 1 warps

/// Consumer threads (a head group each, in warps) plus the producer warp.
int64_t threads_with_producer(int64_t heads, int64_t d) {
  return (heads * (d / (2 * kVec)) + 31) / 32 * 32 + kProducer;
}

template <int kBlock, int kMinBlocks>
__global__ void __launch_bounds__(kBlock, kMinBlocks) kernel(Args a) {
  extern __shared__ __align__(128) unsigned char smem[];  // rows, then tables
  __shared__ uint64_t full[kStages];     // the stage's row, table and offset are in
  __shared__ uint64_t empty[kStages];    // every consumer warp has read the stage
  __shared__ int64_t kv_bases[kStages];  // each stage's token's pool offset, -1: no slot
  __shared__ __align__(16) float weights[2 * hoisted::kMaxD];  // hoisted::fill_weights's
  __shared__ double per_position[hoisted::kMaxD / 2];          // rope_per_position of each pair
  const ring::Ring<kStages> r(smem, full, a);
  const int half = a.d / 2;
  const int consumers = int(blockDim.x) - kProducer;
  const uint32_t stride = gridDim.x;  // tokens < 2^31 (rung.cuh): t + stride fits 32 bits

  const bool producer = int(threadIdx.x) >= consumers;
  const int lane = int(threadIdx.x) % 32;
  if (producer && lane == 0) {
    for (int s = 0; s < kStages; ++s) {
      device::mbarrier_init(&full[s], kProducer);
      device::mbarrier_init(&empty[s], consumers / 32);
    }
    device::fence_mbarrier_init();
  }
  // Launched programmatically, the kernel before it may still be writing qkv: nothing is read
  // before its end (pdl.cuh). The frequencies are not its.
  for (int i = threadIdx.x; i < half; i += blockDim.x) per_position[i] = rope_per_position(i, a.d);
  device::grid_dependency_wait();
  device::allow_dependent_launch();
  // The block's first token: its row's copy and its position and slot in flight before the
  // block's one barrier (the grid has at most one block a token).
  int32_t pos = 0;
  int64_t slot = -1;
  if (producer) {
    if (lane == 0) r.copy(a, blockIdx.x, 0);
    pos = a.positions[blockIdx.x];
    slot = lane == 0 ? a.slots[blockIdx.x] : -1;
  }
  hoisted::fill_weights(weights, a);
  __syncthreads();  // barriers initialised; the weights and frequencies are in

  if (producer) {
    uint32_t j = 0;  // the block's tokens before this one
    for (uint32_t t = blockIdx.x; t < a.tokens; t += stride, ++j) {
      const int s = j % kStages;
      // The stage's previous token (j - kStages) read by every consumer warp: their arrivals
      // release those reads and this wait acquires them, before the copy engine's writes. (The
      // proxy fence below is this thread's own; the measured code has it, the ordering does not
      // rest on it.)
      if (j >= kStages) device::mbarrier_wait(&empty[s], ((j / kStages) + 1) & 1u);
      if (lane == 0 && j > 0) {  // token 0's went out before the barrier
        device::fence_proxy_async_shared();
        r.copy(a, t, s);
      }
      const uint32_t tn = t + stride;  // the next token's position and slot, in flight meanwhile
      const int32_t next_pos = tn < a.tokens ? a.positions[tn] : 0;
      const int64_t next_slot = tn < a.tokens && lane == 0 ? a.slots[tn] : -1;
      for (int i = lane; i < half; i += kProducer)
        store_rope_pair(r.tables + s * a.d, rope_reduce(pos, per_position[i]), i, half);
      if (lane == 0) kv_bases[s] = pool_base(a, slot);
      device::mbarrier_arrive(&full[s]);  // release: the table and the offset
      pos = next_pos;
      slot = next_slot;
    }
    return;
  }

  const hoisted::HeadRole role(a);
  uint32_t j = 0;
  for (uint32_t t = blockIdx.x; t < a.tokens; t += stride, ++j) {
    const int s = j % kStages;
    device::mbarrier_wait(&full[s], (j / kStages) & 1u);
    hoisted::head_step(a, role, r.rows + s * r.row_elems + role.h * a.d, r.tables + s * a.d,
                       weights, kv_bases[s], t);
    __syncwarp();  // the warp's reads of the stage before its lane 0 hands it back
    if (threadIdx.x % 32 == 0) device::mbarrier_arrive(&empty[s]);
  }
}

}  // namespace

Variant gpu_v05_warp_specialised() {
  const std::string id = "qk_norm_rope_cache.v05_warp_specialised";
  return ring::sized_variant<kernel<kSmallBlock, kSmallBlocks>, kernel<hoisted::kBlockLimit, 1>>(
      "v05_warp_specialised",
      "v03's heads and ring with a producer warp: the stages handed over by mbarriers, no "
      "block-wide barrier a token",
      kStages, kSmallBlock, threads_with_producer, [id](const Problem& p) {
        return hoisted::fits_one_pass(dims_of(p), id, threads_with_producer);
      });
}

}  // namespace klab::qk_norm_rope_cache
