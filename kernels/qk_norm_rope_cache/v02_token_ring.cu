// v02 token ring (sm_90): v01's per-head steps, but a resident wave of blocks walks the tokens,
// and a token's whole qkv row (Hq + 2 Hkv heads of D bf16, contiguous: 12 KiB at Qwen3-8B)
// arrives in shared memory by one TMA bulk copy, issued two tokens ahead into a ring of two rows.
// The token's rope table is filled one token ahead (into the other of two tables), and its slot
// and position are loaded one token ahead, so the barrier each token still needs (the row and
// table it read are rewritten after it) waits on no load and no sincos.
// Adds over v01: v01 is one block a token. Each block issues its 12 KiB of loads, fills the table
// (the phase in fp64, sincospif) and waits at a barrier before any head rotates; the profile of
// 98f891c's run put its stalls on long_scoreboard (29%) and that barrier (20%), at 3 blocks an SM
// and 51-57% of DRAM peak (57.5% / 61.8% of copy at 4096 / 16384 tokens; 58.1% / 62.4% with the
// conflict-free table of dcac884). Here the loads of the next token are in flight while a token is
// normalised, rotated and stored, with no registers held for them.
// Expected bottleneck: DRAM bandwidth at thousands of tokens; at 1-16 tokens, as v01, the launch
// and one token's chain (now through the copy engine).
// Measured with a ring of two rows (2026-12-02_2859f6d): 83.5% of copy at 16384 tokens (predicted
// >= 80), 74.6% at 4096 (predicted >= 75), 2.11x and 2.21x the unfused launches at 1 and 16
// tokens; racecheck, memcheck and synccheck clean.
// A third row (measured in 2026-12-02_789bfd3's run) was refuted: a row's copy had two tokens'
// work to land in and 4 blocks an SM kept up to 144 KiB in flight, predicted 87-90% at 16384
// tokens and 78-81% at 4096; measured 83.2% and 71.9% (the first copies of three rows a block
// are not hidden where blocks walk ~8 tokens). The ring is back to two rows; kStages stays a
// parameter (token_ring.cuh).
// Per-stage mbarriers instead of the block-wide barrier a token (a table per stage, full / filled
// / empty barriers, each thread waiting only for what it reads or overwrites) were measured in
// 2026-12-02_539bb43 and refuted: checks and sanitizers clean, but 58.5% / 52.7% of copy at
// 16384 / 4096 tokens against 85.0% / 75.7% with the barrier (predicted 87-90% / 77-80%): 384
// threads polling two mbarriers a token cost more issue slots than the barrier's stalls did.
// Requirements: those of rung.cuh and token_ring.cuh (kStages rows and two tables within the
// block's shared memory: Hq + 2 Hkv heads x D bf16 of up to ~100 KiB a row); sm_90.
#include "kernels/qk_norm_rope_cache/token_ring.cuh"
#include "klab/device/pdl.cuh"

namespace klab::qk_norm_rope_cache {

namespace {

constexpr int kThreads = 384;  // Qwen3-8B's 48 heads x 8 lanes in one pass, as v01
constexpr int kStages = 2;     // rows in the ring: this token's and the next one's

__global__ void __launch_bounds__(kThreads, 4) token_ring(Args a) {
  extern __shared__ __align__(128) unsigned char smem[];  // rows, then tables
  __shared__ uint64_t full[kStages];
  const ring::Ring<kStages> r(smem, full, a);
  const int heads = a.heads(), half = a.d / 2;
  const int lanes = a.lanes(), lane = threadIdx.x % lanes, group = threadIdx.x / lanes;
  const int groups = blockDim.x / lanes;
  const int64_t stride = gridDim.x;

  // Launched programmatically (attention_block v03), the QKV GEMM before it may still be writing
  // qkv: nothing is read before its end (pdl.cuh).
  device::grid_dependency_wait();
  device::allow_dependent_launch();
  r.start(a, blockIdx.x, stride);
  int64_t t = blockIdx.x;  // < tokens: the grid is at most one block a token
  fill_rope_table(r.tables, a.positions[t], a.d);
  int64_t slot = a.slots[t];
  __syncthreads();  // the barriers are initialised; the first token's table is filled

  int s = 0, tb = 0;  // this token's row stage and table
  uint32_t phase = 0;
  for (; t < a.tokens; t += stride) {
    // KV head h of the token's slot sits h pages' head strides (P x D) after head 0.
    const int64_t kv_base = slot >= 0 ? pool_offset(slot, 0, a.hkv, a.page, a.d) : 0;
    const int64_t next = t + stride;
    const int32_t next_pos = next < a.tokens ? a.positions[next] : 0;  // in flight meanwhile
    const int64_t next_slot = next < a.tokens ? a.slots[next] : -1;
    const bf16* sx = r.rows + s * r.row_elems;
    const float* table = r.tables + tb * a.d;
    device::mbarrier_wait(&full[s], phase);

    for (int base = 0; base < heads; base += groups) {  // the same trip count in every thread
      const int h = base + group;
      // A head is written when it is a q head, or the token has a slot.
      const bool on = h < heads && (h < a.hq || slot >= 0);
      HalfPair y{};
      if (on) {
        const HeadVectors x = load_head(sx + h * a.d, lane, half);
        unpack(x.lo, y.lo);
        unpack(x.hi, y.hi);
      }
      finish_head(a, y, h, on, t, kv_base, table, lane);
    }

    if (next < a.tokens) fill_rope_table(r.tables + (tb ^ 1) * a.d, next_pos, a.d);
    // This thread's reads of stage s before the copy engine's next write into it.
    device::fence_proxy_async_shared();
    __syncthreads();  // stage s and its table are free; the next token's table is filled
    if (threadIdx.x == 0 && t + kStages * stride < a.tokens) r.issue(a, t + kStages * stride, s);
    slot = next_slot;
    tb ^= 1;
    if (++s == kStages) s = 0, phase ^= 1u;
  }
}

}  // namespace

Variant gpu_v02_token_ring() {
  return ring::variant(
      "v02_token_ring",
      "v01's steps over a resident wave of blocks: each token's qkv row by one TMA bulk copy two "
      "tokens ahead, its rope table one token ahead",
      kStages, [](const Problem& p, Buffers& b, const LaunchArgs& la) {
        const Args a = args_of(p, b);
        ring::launch<token_ring>(a, la, token_block_threads(a, a.heads(), kThreads), kStages);
      });
}

}  // namespace klab::qk_norm_rope_cache
