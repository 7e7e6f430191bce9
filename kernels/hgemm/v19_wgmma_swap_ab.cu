// v19 wgmma_swap_ab (sm_90a): weight streaming for M <= 128 with the operands swapped. The
// product is computed as C^T = B^T A^T: the weight B (K x N) is wgmma's A operand, read
// MN-major straight from the TMA's 128-byte-swizzled (64 n, 64 k) boxes, 64 of its columns per
// m64 block, and the M rows of A (the tokens, 16, 64 or 128 wide; half of that a CTA where entry 5
// halves them) are wgmma's N. A CTA owns a slab of 64 kBlocks columns of B: a producer warp,
// whose lane 0 issues each k-tile's kBlocks boxes of B (half of each, multicast, where the tokens
// are halved) and one box of A's tokens (M rounded up to 8 rows; the stage's rows past it zeroed
// once) into a ring of up to 12 stages, and one consumer warpgroup that runs kBlocks m64nTk16
// wgmmas a k16 slice. Where an entry splits K over a cluster of `splits` CTAs (the same slab),
// each sums its own range of k-tiles, leaves its fp32 accumulators in its own shared memory, and
// each rank adds its share of the tile from every rank's partial in rank order through
// distributed shared memory and stores it: one launch, no workspace, the same bits every run.
// (The paragraphs below, "Since", tell how the box and the split's sum came to be these.)
// The entry (slab width, splits, token halves) per (N, K): the tune's table, else
// swap_ab_stage.hpp's model, one CTA an SM, with the CTAs the device can hold at once
// (cudaOccupancyMaxActiveClusters): clusters are given at launch (cudaLaunchKernelEx), none
// where one CTA takes a slab alone.
// Why: Nsight Compute of 2026-12-02_2859f6d shows cuBLASLt's kernel at M = 16, N = 24576 is
// nvjet_sm90_tst_192x16_64x8: 192 weight columns x 16 tokens a CTA, 128 CTAs, DRAM 84.6% busy;
// v16 (64 x 128 tiles, A's box of 64 rows zero-filled, 192 CTAs two an SM on 132 SMs) 72.3%,
// v17 (stream-K, one CTA an SM) 60.4%. Here a stage is the weight's bytes plus 2 KiB of tokens
// (v16: plus 8 KiB, three quarters zeros at M = 16), an m64n16 wgmma wastes nothing at M = 16
// (v16's m64n128 wastes 3/4), and every SM streams the same bytes with no second launch.
// Expected bottleneck: DRAM reads of B at one CTA an SM with ~150-190 KiB of B in flight.
// Prediction (written before it ran; three entries, clusters compiled in): M = 16, N = 24576,
// K = 4096: 4.0-4.2 TB/s of B (48-50 us, cuBLASLt 48.7 us in ac8ef08's run): 0.97-1.02x
// cuBLASLt; M = 1 / 16 / 64, N = K = 4096 (64 slabs x 2 splits): 11-13 us (cuBLASLt 13.4-14.8
// us): 1.05-1.25x; N = 6144 (32 slabs x 4): 14-16 us (cuBLASLt 17.3-18.4): 1.1-1.2x; K = 12288:
// 26-28 us (cuBLASLt 28.8-33.6): >= 1.05x.
// Measured (2026-12-02_f69f60c): N = K = 4096 1.07-1.08x at M = 1 and 16, 0.95x at 64; K = 12288
// 0.99-1.09x; N = 24576 0.94-0.95x (DRAM 84.4% busy under Nsight, cuBLASLt's kernel 84.6%: 50.6
// against 50.1 us there, 52.4 against 49.6 us in the timed runs); N = 6144 0.56-0.79x: the 32
// clusters of 4 took 22 us (DRAM 50%), as if they did not all fit in one wave.
// Changed after it: the entry model counts the CTAs the device holds at once, and a fourth entry
// (64-column slabs, whole K: 96 CTAs at N = 6144) takes N = 6144; the TMA descriptors are
// prefetched and one-split launches carry no cluster. Predicted N = 6144 13-15 us (1.15-1.3x, each
// CTA at ~45 GB/s) and N = 24576 0.96-1.00x. Measured (2026-12-02_12dc393): N = 6144 17.1-18.6 us,
// 0.96-1.05x (each CTA ~34 GB/s, DRAM 65% busy); N = 24576 unchanged at 0.94-0.95x. A deeper ring
// for the small stages gained nothing (swap_ab_stage.hpp). v18 now dispatches here at M <= 64
// (its tune picked this rung at all twelve M <= 64 shapes of the grid, 1.10-1.33x v16's time).
// What is left: the ~3 us at N = 24576 that cuBLASLt's kernel of the same tile (192 x 16, 8
// stages of 64) does not spend in the timed runs although Nsight Compute times both kernels
// alike (50.5 against 50.1 us), and M = 64 at N = 4096 (0.92-0.95x), where cuBLASLt splits the
// tokens over 1 x 2 clusters that multicast them instead of splitting K.
// Since: a one-block slab's k16 slices alternate between two accumulator sets. Its four
// m64n16k16 wgmmas a stage are ~8 tensor cycles of work each, so a chain of them on one
// accumulator waits on each other's latency. Predicted: the one-block entries (N = 4096, 6144)
// 10-25% faster, up to DRAM's share (N = 6144: 12.5-14 us); the three-block entries unchanged.
// Measured (2026-12-02_a55f38f): (16, 6144, 4096) 15.9 us under Nsight against 16.8 (DRAM 69%
// busy against 65%), 17.3 us timed, level with cuBLASLt (1.00x); the other shapes as before
// (0.92-1.10x): 6%, not 10-25. The chain was a small part of what holds one CTA near 34 GB/s.
// Two CTAs an SM for the one-block slabs (113 KiB rings; N = 6144 as 96 slabs x 2 splits, 192
// CTAs in one wave) were measured in 2026-12-02_984292d and refuted: 19.4-20.4 us at N = 6144
// (0.87-0.94x) against 17.3-18.6 with 96 CTAs one an SM, so the ~34 GB/s is the SM's limit
// here, not one CTA's; reverted.
// 128 tokens (M = 65..128), added for the prefill grid's M = 128, where v18 ran 128 x 128 tiles
// with K split 2-4 ways through an fp32 workspace and a second launch (0.74-0.93x cuBLASLt in
// ac8ef08's run): the same slabs and clusters with m64n128 wgmmas, the tokens a stage's 16 KiB
// beside 8-24 KiB of weight, the partials still meeting in distributed shared memory. Predicted
// (written before it ran; cuBLASLt's times in ac8ef08's run): M = 128, N = K = 4096 10-13 us
// (cuBLASLt ~15.7, v18 19.6: 64 slabs x 2 splits, each CTA reading three times its weight bytes
// from L2); N = 24576 48-53 us (192 accumulators a thread; v18 61.5); K = 12288 27-33 us (v18
// 36.7). Measured: docs/worklogs/gemm.md.
// Launched programmatically (LaunchArgs::programmatic, klab/device/pdl.cuh; attention_block v03),
// the producer issues the first lap's weight boxes, then waits on the grid dependency, then the
// tokens' boxes: the weight's stream starts while the kernel that writes A finishes. Otherwise
// the order is as before (the kernel's `programmatic` argument).
// Since, two changes to the ends of the stream (2026-12-06_4f69d98_hgemm_v19_m64, an H100, N = K =
// 4096: M = 16 1.07x cuBLASLt, M = 17 0.84x, M = 64 0.96x; Nsight's PC samples put a fifth of
// M = 64's in the split epilogue's cluster barriers, remote reads and scalar stores):
// (1) A's box is the tokens there are rounded up to 8 rows, not kTok: at M = 17 the 64-row box
// was 47 rows past M for the TMA to fill with zeros a stage; the rows past the box are zeroed
// once in every stage. (2) The split epilogue deals the tile's quads out over the cluster's
// ranks: each sums its share from every rank's partial in rank order (the same bits as before)
// and stores it, where rank 0 alone read every peer's partial and stored the whole tile; the
// ranks arrive on the last barrier before their stores. Prediction (written before it ran), an
// H100, paired with cuBLASLt, N = K = 4096: M = 17 from 0.84x to within 3% of M = 64's ratio;
// M = 64 +1-3% (0.2-0.5 us of the tail); M = 1 up to +4% (8 rows where 16); the whole-K entries
// (N = 6144, 24576) unchanged within noise except at M = 1.
// Measured (2026-12-06_8932e03_hgemm_v19_ends, old and new builds in turn, twice): M = 17 0.87x to
// 0.93x; M = 64 0.91x to 0.95x (v19's own median -2.3 to -3.0%, the rest cuBLASLt's slower rounds);
// M = 1 0.94x to 0.95-0.99x; the others within the runs' noise.
// Since, v19 is a tunable rung: its entry per shape class comes from `klab tune
// hgemm.v19_wgmma_swap_ab` (the tune cache, then kernels/hgemm/tuned.json), else from its model,
// which counts the weight's bytes and not the tokens'; v18's entry "v19" runs v19's choice. Entry
// 4 (128-column slabs, K in quarters: N = 4096 is 128 CTAs, as entry 1's) halves the tokens'
// bytes each stage carries beside the weight's, where M = 64 adds ~1.5 us over M = 16
// (2026-12-06_4f69d98_hgemm_v19_m64). Prediction (written before it ran), an H100, paired with
// cuBLASLt: the tune picks entry 4 at M = 64 and 128 with N = K = 4096, 2-5% faster than entry 1
// there; entry 1 keeps M <= 16.
// Measured (2026-12-06_4a65d1e_hgemm_v19_tuned): refuted; entry 4 loses everywhere (1.16-1.74x the
// winner's time), and entry 1 loses to entry 3 at all 16 shapes of M <= 128: at N = 4096 the
// tune takes entry 3 (64 whole-K slabs on half the SMs), 1.02-1.13x faster than the model's entry
// 1; v18 at 64 x 4096 x 4096 1.05x cuBLASLt with it (0.91x before).
// Since, entry 5 (`64_k1_t2`): cuBLASLt's M = 64 kernel (nvjet_sm90_tst_64x32_64x16_1x2, read in
// docs/worklogs/gemm.md) takes 32 weight columns by the 64 tokens a CTA, whole K, the tokens
// multicast over a 2-CTA cluster: 128 CTAs at N = 4096, each taking 256 KiB of weight and 512 KiB
// of tokens into its SM, no partials. v19's swapped form cannot take a slab under 64 columns
// (the weight is wgmma's M), so entry 5 splits the other way: a pair shares a 64-column slab over
// whole K, each CTA half the tokens (wgmma's N: 32 at M = 64) and half of every weight box's
// k-rows, multicast into both CTAs' stages; each stage is handed back to both producers. The same
// 128 CTAs and 768 KiB into each SM as cuBLASLt's kernel, the weight read once from L2 per pair,
// no split epilogue (entry 1's cost at M = 64) and twice entry 3's SMs. The model never picks it
// (it counts the weight's bytes alone); the tune does or not. Prediction (written before it ran),
// M = 64, N = K = 4096, paired with cuBLASLt: level with it, 0.97-1.03x, since it moves the same
// bytes on as many SMs; so it loses to entry 3 where entry 3 is ahead of cuBLASLt (1.05x on an
// H100, 2026-12-06_4a65d1e_hgemm_v19_tuned) and the tune keeps entry 3 there. At N = 6144 (192
// CTAs on 132 SMs: two waves) and 24576 (768 CTAs) it loses to entries 3 and 0; at M <= 16 it
// loses (the second CTA of a pair has at most 8 tokens, or none: the weight's bytes for half of
// entry 1's work). If it beats entry 3 at N = K = 4096, cuBLASLt's data movement is the lever at
// M = 64 and its 64 x 32 tile (unswapped) the next rung.
// Measured (2026-12-07_6c9f909_v19_token_halves, an H100): refuted where aimed; at 64 x 4096 x 4096
// 0.0173 ms against entry 3's 0.0161 and cuBLASLt's 0.0162 (~0.94x); behind entries 3 and 0 at
// N = 6144 and 24576 as predicted; level with entry 3 at 128 x 4096 x 12288, where the tune took
// it.
// Since, the unsplit entries store C through shared memory and the TMA (swap_ab_sm90.cuh's
// store_swap_ab_tma): each m64 block transposed by stmatrix.trans into a (64 columns, kTok tokens)
// box in the drained ring, one TMA store a block. store_swap_ab's 2-byte stores (96 a thread at
// M = 64 in three blocks, each warp store a quarter of four sectors) ran in every CTA at once at
// the launch's end with nothing to overlap them: v19's own times at N = 24576 on an H100 grow by
// ~0.8 us from M = 16 to 64 and ~2 us to 128 (24, 96 and 192 stores a thread), where cuBLASLt's
// grow by ~0.5 us. Twelve stmatrix a thread and three TMA stores a CTA at M = 64: ~0.1-0.2 us.
// Split entries keep their stores (each rank's share of quads), and a CTA of 8 tokens (a pair's
// half at M <= 16) keeps the register stores (half an stmatrix.x4). Prediction (written before it
// ran), an H100, paired with cuBLASLt against the build before: M = 64 at N = 24576 +1-2%,
// N = 6144 and N = K = 4096 +0.7-1.3%; M = 128 at N = 24576 2-3 us faster; M <= 16 within 0.4%.
// Refuted if M = 64 at N = 24576 and 6144 gain under 0.5%.
// Requirements: sm_90a (wgmma, TMA, clusters), M <= 128 (can_implement refuses larger M), up to
// 225 KiB of dynamic shared memory; the TMA path needs k % 8 == 0, n % 8 == 0 and 16-byte
// aligned pointers; other problems run v05's kernel with element copies.
#include <algorithm>

#include "kernels/hgemm/swap_ab_sm90.cuh"
#include "klab/device/cluster_sm90.cuh"
#include "klab/device/launch_attributes.hpp"
#include "klab/device/pdl.cuh"
#include "klab/device/pipeline_sm90.cuh"
#include "klab/device/warpgroup_sm90.cuh"

namespace klab::hgemm {

namespace {

using swap_ab::mma_swap_ab_stage;
using swap_ab::store_swap_ab;
using swap_ab::V19Config;

template <class Cfg, class T>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_swap_ab_kernel(const __grid_constant__ CUtensorMap a_map,
                         const __grid_constant__ CUtensorMap b_map,
                         const __grid_constant__ CUtensorMap c_map, T* __restrict__ c, int m, int n,
                         int k, int a_rows, bool programmatic) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // wgmma is sm_90a-only
  using Stage = typename Cfg::Stage;
  constexpr int kStages = Cfg::kStages, kSplits = Cfg::kSplitsK, kHalves = Cfg::kTokenHalves;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = device::align_shared<1024>(smem_raw);  // kStages x (B panels, A)
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kStages * Stage::kBytes);
  uint64_t* empty = full + kStages;
  // full: the producer's arrive_expect_tx; empty: lane 0 of every consumer warp that reads the
  // stage's weight, the pair's where the tokens are halved (both CTAs' producers write it).
  device::init_ring<kStages>(full, empty, 1, kHalves * Cfg::kConsumers / 32);
  // A pair's barriers are set up before a peer multicasts into them or arrives on them.
  if constexpr (kHalves > 1) device::cluster_sync();

  // The next kernel may be scheduled from the start (pdl.cuh): it waits for this one's end
  // before it reads C. Signalled past the main loop instead, v03's block was 2% slower at B = 1
  // to 4 (runs of 67777d3 and 4e8807c): its launch no longer overlapped this kernel.
  device::allow_dependent_launch();
  // The grid is (splits or halves, slabs): a cluster is one slab's splits (rank = split) or its
  // two token halves (rank = half: tokens tok0 .. tok0 + Stage::kTok - 1, this CTA's rows).
  const int split = kHalves > 1 ? 0 : int(blockIdx.x), n0 = int(blockIdx.y) * Stage::kBlockN;
  const int half = kHalves > 1 ? int(blockIdx.x) : 0, tok0 = half * Stage::kTok;
  const bool has_tokens = tok0 < m;  // the second half of a pair at M <= Stage::kTok has none
  const int k_tiles = (k + Stage::kBlockK - 1) / Stage::kBlockK;
  const int per_split = (k_tiles + kSplits - 1) / kSplits;
  const int kt_begin = std::min(k_tiles, split * per_split);
  const int kt_end = std::min(k_tiles, kt_begin + per_split);
  float chains[Cfg::kChains][Stage::kBlocks][Stage::kTok / 2];
  auto& acc = chains[0];                 // the sum, once the chains are added
  if (threadIdx.x >= Cfg::kConsumers) {  // the producer warp: lane 0 issues every box
    if (threadIdx.x == Cfg::kConsumers) {
      device::prefetch_tensor_map(&b_map);
      device::prefetch_tensor_map(&a_map);
      // A's box is its a_rows tokens (M rounded up to 8), not the stage's kTok rows; none for a
      // half with no tokens. Halved, every weight box arrives half from each CTA of the pair.
      const uint32_t stage_tx =
          Stage::kBytesB + (has_tokens ? uint32_t(a_rows) * Stage::kRowBytes : 0u);
      auto load_b = [&](int kt, int s) {  // the weight's boxes of k-tile kt into stage s
        device::mbarrier_arrive_expect_tx(&full[s], stage_tx);
#pragma unroll
        for (int j = 0; j < Stage::kBlocks; ++j) {
          unsigned char* panel = smem + s * Stage::kBytes + j * Stage::kPanelBytes;
          if constexpr (kHalves > 1)  // this half's 32 k-rows (b_map's box), into both CTAs
            device::tma_load_2d_multicast(panel + half * Stage::kHalfPanelBytes, &b_map,
                                          n0 + 64 * j, kt * Stage::kBlockK + 32 * half, &full[s],
                                          uint16_t(0b11));
          else
            device::tma_load_2d(panel, &b_map, n0 + 64 * j, kt * Stage::kBlockK, &full[s]);
        }
      };
      auto load_a = [&](int kt, int s) {  // the tokens' box of k-tile kt into stage s
        if (has_tokens)
          device::tma_load_2d(smem + s * Stage::kBytes + Stage::kBytesB, &a_map,
                              kt * Stage::kBlockK, tok0, &full[s]);
      };
      // Launched programmatically (pdl.cuh), the first lap's weight boxes go out before the wait
      // on the grid dependency: nothing before this kernel writes B, so its stream starts while
      // the kernel that writes A is still finishing. Otherwise B and A go out stage by stage.
      const int first = programmatic ? std::min(kt_end - kt_begin, kStages) : 0;
      for (int i = 0; i < first; ++i) load_b(kt_begin + i, i);
      device::grid_dependency_wait();
      for (int i = 0; i < first; ++i) load_a(kt_begin + i, i);
      device::RingSlot<kStages> slot = device::RingSlot<kStages>{}.advance(first);
      for (int kt = kt_begin + first; kt < kt_end; ++kt, slot = slot.next()) {
        device::mbarrier_wait(&empty[slot.index], slot.phase ^ 1u);
        load_b(kt, slot.index);
        load_a(kt, slot.index);
      }
    }
  } else {  // the consumer warpgroup
    // The token rows past A's box (a_rows .. kTok - 1; every row for a half with no tokens),
    // which no TMA load writes, zeroed once in every stage and made visible to wgmma (the async
    // proxy) before the first one reads them.
    const int loaded = has_tokens ? a_rows : 0;
    if (loaded < Stage::kTok) {
      const int quads = (Stage::kTok - loaded) * int(Stage::kRowBytes / 16);
      for (int s = 0; s < kStages; ++s)
        for (int w = int(threadIdx.x); w < quads; w += Cfg::kConsumers)
          reinterpret_cast<uint4*>(smem + s * Stage::kBytes + Stage::kBytesB +
                                   loaded * Stage::kRowBytes)[w] = make_uint4(0, 0, 0, 0);
      device::fence_proxy_async_shared();
    }
    device::named_barrier_sync(1, Cfg::kConsumers);
#pragma unroll
    for (int c = 0; c < Cfg::kChains; ++c)
#pragma unroll
      for (int j = 0; j < Stage::kBlocks; ++j)
#pragma unroll
        for (int i = 0; i < Stage::kTok / 2; ++i) chains[c][j][i] = 0.f;
    const uint32_t ring = device::smem_addr(smem);
    const bool lane0 = threadIdx.x % 32 == 0;
    device::RingSlot<kStages> slot;
    consume_wgmma_ring(
        full, slot, kt_end - kt_begin,
        [&](int s) { mma_swap_ab_stage<Stage, T>(chains, ring + s * Stage::kBytes); },
        [&](int s) {  // to the producer of every CTA that writes the stage
          if (!lane0) return;
          if constexpr (kHalves > 1)
            device::mbarrier_arrive_cluster_ranks<kHalves>(&empty[s]);
          else
            device::mbarrier_arrive(&empty[s]);
        });
#pragma unroll
    for (int c = 0; c < Cfg::kChains; ++c)
#pragma unroll
      for (int j = 0; j < Stage::kBlocks; ++j) device::wgmma_fence_operands(chains[c][j]);
#pragma unroll
    for (int c = 1; c < Cfg::kChains; ++c)
#pragma unroll
      for (int j = 0; j < Stage::kBlocks; ++j)
#pragma unroll
        for (int i = 0; i < Stage::kTok / 2; ++i) acc[j][i] += chains[c][j][i];
  }
  if constexpr (kSplits > 1) {
    // Every k-tile's load has landed and been read (the consumers waited for each): the ring is
    // free. The tile's quads are dealt out over the ranks (rank r sums and stores quads
    // [r Q / S, (r + 1) Q / S)): each rank leaves the quads the others own in its ring, adds its
    // own from every rank's partial in rank order (the same bits whichever rank sums them), and
    // stores them, while the others do the same with theirs.
    constexpr int kQuads = Cfg::kPartialQuads, kPerBlock = swap_ab::kQuadsPerBlock<Stage>;
    float4* partial = reinterpret_cast<float4*>(smem);
    const int t = int(threadIdx.x);
    const bool consumer = t < Cfg::kConsumers;
    const int q_begin = split * kQuads / kSplits, q_end = (split + 1) * kQuads / kSplits;
    if (consumer)
#pragma unroll
      for (int q = 0; q < kQuads; ++q)
        if (q < q_begin || q >= q_end) {
          const float* v = &acc[q / kPerBlock][4 * (q % kPerBlock)];
          partial[q * Cfg::kConsumers + t] = make_float4(v[0], v[1], v[2], v[3]);
        }
    device::cluster_sync();  // the partials written, visible to every rank
    if (consumer)
#pragma unroll
      for (int q = 0; q < kQuads; ++q)
        if (q >= q_begin && q < q_end) {
          float* v = &acc[q / kPerBlock][4 * (q % kPerBlock)];
          const float4 own = make_float4(v[0], v[1], v[2], v[3]);
          float4 sum = own;
#pragma unroll
          for (int r = 0; r < kSplits; ++r) {
            const float4 p = r == split ? own
                                        : device::ld_shared_cluster_f32x4(
                                              device::map_shared_rank(partial, uint32_t(r)) +
                                              uint32_t(q * Cfg::kConsumers + t) * 16);
            if (r == 0) {
              sum = p;
            } else {
              sum.x += p.x;
              sum.y += p.y;
              sum.z += p.z;
              sum.w += p.w;
            }
          }
          v[0] = sum.x;
          v[1] = sum.y;
          v[2] = sum.z;
          v[3] = sum.w;
        }
    // Every peer's partial read: arrive (release: the reads are done before any peer passes the
    // wait and exits), store this rank's quads, then wait for the peers' reads of this one.
    device::cluster_arrive_release();
    if (consumer) store_swap_ab<Stage, T>(acc, c, m, n, n0, q_begin, q_end);
    device::cluster_wait();
  } else {
    // This CTA's tokens, C's rows tok0 on: by the TMA from the drained ring, or (8 tokens: half a
    // stmatrix.x4) from the registers.
    if (threadIdx.x < Cfg::kConsumers && has_tokens) {
      if constexpr (Stage::kTok >= 16) {
        static_assert(Stage::kBlocks * SwapAbStoreBox<Stage::kTok>::kBytes <=
                      kStages * Stage::kBytes);
        swap_ab::store_swap_ab_tma<Stage, T>(acc, smem, &c_map, n0, tok0);
      } else {
        store_swap_ab<Stage, T>(acc, c + size_t(tok0) * size_t(n), m - tok0, n, n0);
      }
    }
    // No CTA of a pair exits while its peer may still arrive on its empty barriers.
    if constexpr (kHalves > 1) device::cluster_sync();
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave C unwritten
#endif
}

/// The weight's tensor map: make_b_panel_map's panels, each a box, or half a panel's k-rows a box
/// where each CTA of a pair sends one half (kHalves = 2). L2 promotes 128 bytes, one panel row:
/// 256 would fetch the next panel's row too, which a neighbouring slab's CTA reads at another
/// point of K (decode v06 measured 2-3% from the same change).
template <int kHalves, class T>
CUtensorMap make_weight_map(const GemmArgs<T>& g) {
  return make_b_panel_map(g, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, uint32_t(64 / kHalves));
}

/// The launch of entry (kBlocks, kSplits, kHalves) at kTok tokens over g's slabs: grid (splits or
/// halves, slabs), clusters of that many CTAs along x given at launch (none for one CTA a slab).
template <int kBlocks, int kTok, int kSplits, int kHalves, class T>
struct V19Launch {
  using Cfg = V19Config<kBlocks, kTok, kSplits, kHalves>;
  static constexpr int kCluster = Cfg::kClusterSize;
  static constexpr auto kKernel = wgmma_swap_ab_kernel<Cfg, T>;

  device::LaunchAttributes attrs;  // the cluster (kCluster > 1), programmatic serialization
  cudaLaunchConfig_t config{};
  bool programmatic = false;

  V19Launch(int n, cudaStream_t stream, bool programmatic_ = false)
      : attrs(kCluster > 1 ? kCluster : 0, programmatic_), programmatic(programmatic_) {
    device::opt_in_dynamic_smem<kKernel>(Cfg::kSmemBytes);
    config.gridDim = dim3(unsigned(kCluster), unsigned(device::ceil_div(n, Cfg::Stage::kBlockN)));
    config.blockDim = dim3(Cfg::kThreads);
    config.dynamicSmemBytes = Cfg::kSmemBytes;
    config.stream = stream;
    attrs.apply(config);
  }

  /// How many of the kernel's CTAs run at once on this device (whole clusters; memoised).
  static int64_t resident() {
    static const int64_t n = [] {
      V19Launch l(64 * kBlocks, nullptr);
      int clusters = 0;
      if (kCluster > 1)
        KLAB_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kKernel, &l.config));
      else
        clusters = device::resident_blocks_per_sm(kKernel, Cfg::kThreads, Cfg::kSmemBytes) *
                   device_info().sm_count;
      return int64_t(clusters) * kCluster;
    }();
    return n;
  }

  void operator()(const GemmArgs<T>& g) {
    static_assert(Cfg::Stage::kBlockK == 64);
    // A's box: the tokens there are, rounded up to 8 rows (a TMA box of kTok rows made mostly of
    // rows past M cost M = 17 0.84x cuBLASLt, against 0.96x at M = 64: measured in
    // 2026-12-06_4f69d98_hgemm_v19_m64); the kernel zeroes the stage's rows past it once. Halved,
    // a CTA's box is at most its half's rows (both halves' boxes alike; past M the TMA fills
    // zeros).
    const int a_rows = std::min(Cfg::Stage::kTok, (g.m + 7) / 8 * 8);
    const CUtensorMap a_map = make_a_map(g, a_rows), b_map = make_weight_map<kHalves>(g);
    // C's boxes for the unsplit entries' TMA store: 64 columns by the CTA's tokens.
    const CUtensorMap c_map = make_wgmma_c_map(g, Cfg::Stage::kTok);
    KLAB_CUDA_CHECK(cudaLaunchKernelEx(&config, kKernel, a_map, b_map, c_map, g.c, g.m, g.n, g.k,
                                       a_rows, programmatic));
  }
};

/// Calls fn.template operator()<kBlocks, kSplits, kHalves>() for entry `entry` of kV19Entries.
template <class Fn>
void with_v19_entry(int entry, Fn&& fn) {
  switch (entry) {  // kV19Entries, one instantiation each
    case 0:
      return fn.template operator()<3, 1, 1>();
    case 1:
      return fn.template operator()<1, 2, 1>();
    case 2:
      return fn.template operator()<3, 4, 1>();
    case 3:
      return fn.template operator()<1, 1, 1>();
    case 4:
      return fn.template operator()<2, 4, 1>();
    default:
      return fn.template operator()<1, 1, 2>();
  }
}
constexpr bool v19_entry_is(int e, int blocks, int splits, int halves) {
  return kV19Entries[e].blocks == blocks && kV19Entries[e].splits == splits &&
         kV19Entries[e].halves == halves;
}
static_assert(kV19SpaceSize == 6 && v19_entry_is(0, 3, 1, 1) && v19_entry_is(1, 1, 2, 1) &&
              v19_entry_is(2, 3, 4, 1) && v19_entry_is(3, 1, 1, 1) && v19_entry_is(4, 2, 4, 1) &&
              v19_entry_is(5, 1, 1, 2));

/// Calls fn.template operator()<kTok>() for the tokens' width of m rows (v19_tokens).
template <class Fn>
void with_v19_tokens(int64_t m, Fn&& fn) {
  switch (v19_tokens(m)) {
    case 16:
      return fn.template operator()<16>();
    case 64:
      return fn.template operator()<64>();
    default:
      return fn.template operator()<kV19MaxTokens>();
  }
}

template <int kTok, class T>
void launch_v19_tokens(const GemmArgs<T>& g, int entry, cudaStream_t stream, bool programmatic) {
  with_v19_entry(entry, [&]<int kBlocks, int kSplits, int kHalves>() {
    V19Launch<kBlocks, kTok, kSplits, kHalves, T>(g.n, stream, programmatic)(g);
  });
}

}  // namespace

int v19_model_entry(const Problem& p) {
  int entry = 0;
  with_v19_tokens(p.dim("m"), [&]<int kTok>() {
    entry = v19_entry(p.dim("n"), p.dim("k"), [](int i) {
      int64_t r = 0;
      with_v19_entry(i, [&]<int kBlocks, int kSplits, int kHalves>() {
        r = V19Launch<kBlocks, kTok, kSplits, kHalves, __nv_bfloat16>::resident();
      });
      return r;
    });
  });
  return entry;
}

void launch_v19_entry(int entry, const Problem& p, Buffers& b, const LaunchArgs& args) {
  with_gemm_args(p, b, [&]<class T>(GemmArgs<T> g) {
    if (!g.vec16()) return launch_multistage<WgmmaFallback, T, false>(g, stream_of(args));
    with_v19_tokens(g.m, [&]<int kTok>() {
      launch_v19_tokens<kTok>(g, entry, stream_of(args), args.programmatic);
    });
  });
}

void launch_v19(const Problem& p, Buffers& b, const LaunchArgs& args) {
  launch_v19_entry(v19_tuned_config(p), p, b, args);
}

Variant gpu_v19_wgmma_swap_ab() {
  Variant v = gpu_variant(
      "v19_wgmma_swap_ab",
      "M <= 128 weight streaming with swapped operands: B's columns as wgmma's M, the tokens "
      "as its N (16, 64 or 128, or half that a CTA); 64-, 128- or 192-column slabs (per shape "
      "class: klab tune, else its model), one CTA an SM on a deep TMA ring, K split over a cluster "
      "whose partials meet in "
      "distributed shared memory, or the tokens halved over a pair that multicasts the weight",
      launch_v19);
  v.info.min_sm = 90;
  v.can_implement = v19_can_implement;
  return v;
}

}  // namespace klab::hgemm
