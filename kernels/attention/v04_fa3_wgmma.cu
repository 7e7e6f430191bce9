// v04 fa3_wgmma (sm_90a): FlashAttention 3's forward structure on Hopper: wgmma, TMA and warp
// specialisation. A block of three warpgroups owns kBlockM = 128 query rows of one (batch,
// query head):
// - a producer warpgroup gives its registers back (setmaxnreg 40) and one of its threads issues
//   every TMA load: Q once, then per key block the K and V tiles into a ring of two stages, each
//   with its own "full" mbarrier for K and for V (S = Q K^T may start while V still lands) and
//   "empty" mbarriers for K and for V that the consumers' warps both arrive on once the block's
//   P V has read the stage (v05 hands K back earlier);
// - two consumer warpgroups (setmaxnreg 232) each own 64 of the rows for the whole pass. Per key
//   block: S = Q K^T by wgmma m64nNk16 with both operands in 128-byte-swizzled shared memory
//   (N = kBlockN keys, D / 16 k-steps), the online softmax on S's accumulator registers (the row
//   max and sum over a row's 4 lanes by shuffles, exp2 of scores prescaled by scale * log2(e)), P
//   rounded to the input type in registers, and O += P V by wgmma with P as the register A
//   operand and V, key-major in shared memory, as an MN-major B operand (transpose bit 1). The
//   tiles, descriptors and the P mapping are in fa3_tile.hpp, checked on the CPU; the producer,
//   the consumers' pieces and the host side, which v05 shares, are in fa3_kernel.cuh.
// Q, K and V are read through 4-D tensor maps of the (B, N, H, D) arrays (D, H, N, B), boxes of
// (64, 1, rows, 1) built once in prepare: a box stops at its batch's last token and the TMA fills
// the rest with zeros (ragged N); O and lse are written from the registers with bounds checks.
// Causal: key blocks are walked from the last visible one down, the ones above the diagonal are
// never loaded, and only those crossing the diagonal or the end of the keys are masked. Rows with
// no visible key give O = 0 and lse = -inf.
// Adds over v03: wgmma instead of mma.sync (a warpgroup multiplies 64 rows by a whole key block
// per instruction, operands straight from shared memory: no ldmatrix), TMA loads issued by one
// thread instead of every thread's cp.async, and the producer/consumer split with an mbarrier
// ring instead of block-wide barriers. Not yet: the two consumers' softmax overlapped with each
// other's GEMMs (ping-pong) and with their own next block's S (intra-warpgroup pipelining), which
// are the next rungs: here each warpgroup waits for every wgmma group it issues.
// Expected bottleneck: the tensor pipe idles while a warpgroup does its softmax (the exp2 on the
// MUFU, 64 exponentials a thread per block), and the two warpgroups only overlap by chance; the
// wait for each S before its softmax and for each P V before the next S exposes the wgmma
// latency. O's 4-byte stores from registers are a small part at long N.
// Prediction (written before it ran), causal D = 128 bf16 H = 32 N = 8k on an H200: 380-480
// TFLOP/s, i.e. 0.60-0.75x cuDNN's 646 (FA3's own ablation without ping-pong and intra-warpgroup
// overlap is ~570 non-causal on the H100; causal tiles are shorter, and nothing here overlaps the
// softmax on purpose). Measured: docs/worklogs/attention.md (2026-12-02_6fda6f1_fa3_decode_v04).
// Requirements: sm_90a; D in {64, 128, 256} (D = 256 with 64-key blocks); Q, K, V and O 16-byte
// aligned (TMA base addresses and row pitches; the harness's misaligned problems are refused);
// hq and b up to 65535 (grid y, z).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/attention/fa3_kernel.cuh"
#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {

template <int kD>
using V04Config = fa3::Config<kD, /*stages*/ 2>;

/// The rung as fa3_kernel.cuh's kernel takes it.
struct V04 {
  static constexpr const char* kName = "attention.v04";
  template <int kD>
  using Config = V04Config<kD>;

  /// A consumer warpgroup (wg 0 or 1): rows n0 + 64 wg .. + 63 of the tile, the whole pass, then
  /// its O rows and their lse. Each wgmma group is waited for before its result is used.
  template <class C, class T, int kD>
  __device__ __forceinline__ static void consume(unsigned char* smem,
                                                 const fa3::Barriers<C::kStages>& bars,
                                                 const fa3::TileOf& t, int wg, T* __restrict__ o,
                                                 float* __restrict__ lse, const Geometry& g) {
    constexpr int kBlockN = C::kBlockN;
    const fa3::ConsumerThread th(t, wg);
    const uint32_t s_base = device::smem_addr(smem);

    QuadRow rows[2];    // the two rows' running max (log2 units) and this lane's share of the sum
    float acc[kD / 2];  // O: 64 x kD over the warpgroup
#pragma unroll
    for (int i = 0; i < kD / 2; ++i) acc[i] = 0.f;

    if (t.blocks.count > 0) device::mbarrier_wait(bars.full_q, 0);
    device::RingSlot<C::kStages> slot;
    for (int it = 0; it < int(t.blocks.count); ++it, slot = slot.next()) {
      const int jb = int(t.blocks.count) - 1 - it, s = slot.index;

      // S = Q K^T over the block.
      float sc[kBlockN / 2];
      device::mbarrier_wait(&bars.full_k[s], slot.phase);
      device::wgmma_fence();
      fa3::issue_s<C, T, kD>(sc, s_base, wg, s);
      device::wgmma_commit_group();
      device::wgmma_wait_group<0>();
      device::wgmma_fence_operands(sc);

      if (jb >= t.blocks.unmasked) fa3::mask_block<kBlockN>(sc, jb, th, g);
      // Online softmax of the block's rows; O's rows rescaled by exp2(m_old - m_new).
      float alpha[2];
      fa3::softmax_block<kBlockN>(sc, rows, g.scale_log2, alpha);
      fa3::scale_rows<kD>(acc, alpha);

      // O += P V: P rounded into the register A operand.
      uint32_t pa[kBlockN / 16][4];
      fa3::p_registers<kBlockN, T>(sc, pa);
      device::mbarrier_wait(&bars.full_v[s], slot.phase);
      device::wgmma_fence();
      fa3::issue_pv<C, T, kD>(acc, pa, s_base, s);
      device::wgmma_commit_group();
      device::wgmma_wait_group<0>();
      device::wgmma_fence_operands(acc);
      fa3::fence_p(pa);
      // Every wgmma of this warp that read the stage is done: one arrival per warp on each.
      fa3::release(&bars.empty_k[s], th.lane);
      fa3::release(&bars.empty_v[s], th.lane);
    }
    fa3::store_rows<T, kD>(acc, rows, th, t, o, lse, g);
  }
};

}  // namespace

Variant gpu_v04_fa3_wgmma() {
  return fa3::variant<V04>(
      "attention.v04_fa3_wgmma",
      "FA3 on wgmma: a TMA producer warpgroup and two consumer warpgroups of 64 query rows "
      "(setmaxnreg 40/232), S = QK^T from shared memory, P in registers as P V's A operand, "
      "two-stage K/V mbarrier ring, causal blocks skipped");
}

}  // namespace klab::attention
