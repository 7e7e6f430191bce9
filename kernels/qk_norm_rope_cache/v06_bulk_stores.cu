// v06 bulk stores: v03's token ring with the token's outputs leaving by the copy engine too.
// Adds over v03: built traffic-only (every head copied raw from the ring, no norm, no rotation:
// the check fails by design), v03's structure reaches 89.4% of copy at 16384 tokens
// (2026-12-03_bd7108f_qk_traffic), where CUB's relu, moving the same bytes in the same run,
// reaches 94.9% and v03 itself 87.3%: the data's path, more than the math, keeps v03 under 90%.
// In v03 every head leaves as 16-byte stores from registers, 24 KiB of loads from shared memory
// and stores to global a token. Here:
//  - q and k heads are normalised and rotated in place in the ring's row (16-byte stores to
//    shared memory); v heads are not touched by a thread at all;
//  - after the token's barrier, lanes of the last warp send the row out in bulk copies from
//    shared memory (cp.async.bulk, 1D): q as one copy of Hq x D (8 KiB at Qwen3-8B), each k and
//    each v head as one of D (256 bytes) to its page;
//  - a stage is refilled one token later than in v03 (its bulk stores must have read it: the
//    issuing lanes wait for all but their newest bulk group), so the ring is four rows deep for
//    v03's three in flight.
// Expected bottleneck: DRAM bandwidth at thousands of tokens; at 1-16 tokens, as v03, the launch
// and one token's chain (plus the bulk stores' completion before the block exits).
// Prediction (written before it ran): 16384 tokens 87.3% -> 89-92% of copy; 4096 tokens 83.3% ->
// 83-87%; 1 and 16 tokens within 5% of v03.
// Measured (2026-12-03_a1263cb_qk_v06_bulk_stores): 70.3% / 63.0% of copy at 16384 / 4096 tokens
// against v03's 86.9% / 83.5% in the same call; at three blocks an SM (ptxas spilling 64 bytes)
// 83.6% / 69.5%; 1.89x, 1.94x and 1.94x the unfused launches at 1, 16 and 64 tokens. Refuted: the
// last warp's seventeen bulk copies a token (sixteen of them 256 bytes) and its wait for the
// previous token's to have read their row sit between two barriers, and the barrier stall rose
// to 8.45 cycles an issue (v03 5.30): small bulk copies cost the issuing warp more than the
// stores they replace.
// Requirements: those of rung.cuh, token_ring.cuh (a ring of four rows) and v03 (hoisted.cuh).
#include "kernels/qk_norm_rope_cache/hoisted.cuh"

namespace klab::qk_norm_rope_cache {
namespace {

constexpr int kStages = 4;
constexpr int kSmallBlocks = 2;  // blocks an SM up to hoisted::kSmallThreads threads (80 registers)

template <int kBlock, int kMinBlocks>
__global__ void __launch_bounds__(kBlock, kMinBlocks) kernel(Args a) {
  extern __shared__ __align__(128) unsigned char smem[];  // rows, then tables
  __shared__ uint64_t full[kStages];
  __shared__ int64_t kv_bases[kStages];  // each stage's token's pool offset, -1: no slot
  __shared__ __align__(16) float weights[2 * hoisted::kMaxD];  // hoisted::fill_weights's
  const ring::Ring<kStages> r(smem, full, a);
  const hoisted::HeadRole role(a);
  const int half = a.d / 2;
  // v03's roles (hoisted::Fillers); the last warp's lanes issue the bulk stores.
  const hoisted::Fillers f(a);
  const int store_lane = int(threadIdx.x) - (int(blockDim.x) - 32);  // < 0: not in the last warp
  const int stores = 1 + 2 * a.hkv;   // a token's bulk stores: q, then each k head, each v head
  const uint32_t stride = gridDim.x;  // tokens < 2^31 (rung.cuh): t + k stride fits 32 bits

  // Launched programmatically, the kernel before may still be writing qkv: nothing is read
  // before its end (pdl.cuh). The frequencies are not its.
  device::grid_dependency_wait();
  device::allow_dependent_launch();
  r.start(a, blockIdx.x, stride);
  hoisted::fill_weights(weights, a);
  if (f.filler)
    store_rope_pair(r.tables, rope_reduce(a.positions[blockIdx.x], f.per_position), f.pair, half);
  if (f.last) kv_bases[0] = pool_base(a, a.slots[blockIdx.x]);
  __syncthreads();  // barriers initialised; the weights, first table and offset are in

  uint32_t j = 0;  // the block's tokens before this one
  for (uint32_t t = blockIdx.x; t < a.tokens; t += stride, ++j) {
    const uint32_t tn = t + stride;  // the next token's position and slot, in flight meanwhile
    const int32_t next_pos = tn < a.tokens && f.filler ? a.positions[tn] : 0;
    const int64_t next_slot = tn < a.tokens && f.last ? a.slots[tn] : -1;
    const int s = j % kStages;
    bf16* row = r.rows + s * r.row_elems;
    device::mbarrier_wait(&full[s], (j / kStages) & 1u);
    if (role.warp_norms) {  // every lane of the warp: the group sums shuffle
      HalfPair y = hoisted::normalised(a, role, row + role.h * a.d, weights);
      if (role.norms) {
        rotate(y, r.tables + s * a.d, role.lane, half);
        store_head(row + role.h * a.d, role.lane, half, y);  // in place, for the bulk stores
      }
    }
    const int sn = (j + 1) % kStages;  // the next token's table and offset
    if (tn < a.tokens) {
      if (f.filler)
        store_rope_pair(r.tables + sn * a.d, rope_reduce(next_pos, f.per_position), f.pair, half);
      if (f.last) kv_bases[sn] = pool_base(a, next_slot);
    }
    // The row's shared-memory writes before the copy engine reads it.
    device::fence_proxy_async_shared();
    __syncthreads();  // the row is final; the next token's table and offset are in
    if (store_lane >= 0) {
      const int64_t kv_base = kv_bases[s];  // read here: not held across the norm
      for (int i = store_lane; i < stores; i += 32) {
        if (i == 0) {
          device::bulk_copy_s2g(a.q_out + int64_t(t) * a.hq * a.d, row,
                                uint32_t(a.hq * a.d) * sizeof(bf16));
        } else if (kv_base >= 0) {  // KV head k of the k pool (i <= Hkv), then of the v pool
          const int k = (i - 1) % a.hkv;
          bf16* pool = i <= a.hkv ? a.k_cache : a.v_cache;
          device::bulk_copy_s2g(pool + kv_base + int64_t(k) * a.page * a.d,
                                row + (a.hq + i - 1) * a.d, uint32_t(a.d) * sizeof(bf16));
        }
      }
      device::bulk_commit_group();
      // The previous token's stores have read its stage: refill it, kStages tokens on.
      device::bulk_wait_group_read<1>();
      __syncwarp();
      const uint32_t tf = t - stride + kStages * stride;  // token j - 1 + kStages
      if (f.last && j > 0 && tf < a.tokens) r.issue(a, tf, (j - 1) % kStages);
    }
  }
  // The bulk stores read shared memory and write the outputs before the block exits.
  if (store_lane >= 0) device::bulk_wait_group<0>();
}

}  // namespace

Variant gpu_v06_bulk_stores() {
  const std::string id = "qk_norm_rope_cache.v06_bulk_stores";
  return ring::sized_variant<kernel<hoisted::kSmallThreads, kSmallBlocks>,
                             kernel<hoisted::kBlockLimit, 1>>(
      "v06_bulk_stores",
      "v03 with the token's outputs written back into its ring row and sent out by bulk copies "
      "(cp.async.bulk shared -> global)",
      kStages, hoisted::kSmallThreads, hoisted::block_threads,
      [id](const Problem& p) { return hoisted::fits_one_pass(dims_of(p), id); });
}

}  // namespace klab::qk_norm_rope_cache
