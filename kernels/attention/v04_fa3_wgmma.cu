// v04 fa3_wgmma (sm_90a): FlashAttention 3's forward structure on Hopper: wgmma, TMA and warp
// specialisation. A block of three warpgroups owns kBlockM = 128 query rows of one (batch,
// query head):
// - a producer warpgroup gives its registers back (setmaxnreg 40) and one of its threads issues
//   every TMA load: Q once, then per key block the K and V tiles into a ring of two stages, each
//   with its own "full" mbarrier for K and for V (S = Q K^T may start while V still lands) and
//   one "empty" mbarrier that the consumers' warps arrive on once the block's P V has read it;
// - two consumer warpgroups (setmaxnreg 232) each own 64 of the rows for the whole pass. Per key
//   block: S = Q K^T by wgmma m64nNk16 with both operands in 128-byte-swizzled shared memory
//   (N = kBlockN keys, D / 16 k-steps), the online softmax on S's accumulator registers (the row
//   max and sum over a row's 4 lanes by shuffles, exp2 of scores prescaled by scale * log2(e)), P
//   rounded to the input type in registers, and O += P V by wgmma with P as the register A
//   operand and V, key-major in shared memory, as an MN-major B operand (transpose bit 1). The
//   tiles, descriptors and the P mapping are in fa3_tile.hpp, checked on the CPU.
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
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "kernels/attention/fa3_tile.hpp"
#include "kernels/attention/family.hpp"
#include "kernels/attention/quad_softmax.cuh"
#include "kernels/attention/tiled_launch.cuh"
#include "klab/core/cuda_check.hpp"
#include "klab/device/launch.hpp"
#include "klab/device/mbarrier_sm90.cuh"
#include "klab/device/mma_sm80.cuh"
#include "klab/device/occupancy.cuh"
#include "klab/device/pipeline_sm90.cuh"
#include "klab/device/smem.cuh"
#include "klab/device/tensor_map.hpp"
#include "klab/device/tma_sm90.cuh"
#include "klab/device/warpgroup_sm90.cuh"
#include "klab/device/wgmma_fragment.hpp"
#include "klab/device/wgmma_sm90.cuh"

namespace klab::attention {

namespace {

template <int kD>
struct V04Config : device::WarpSpecialized</*consumer warps*/ 8> {
  using Tiles = fa3::Tiles<kD>;
  static constexpr int kBlockM = Tiles::kBlockM, kBlockN = Tiles::kBlockN;
  static constexpr int kStages = Tiles::kStages;
  /// The tiles (1024-byte aligned: up to 1023 bytes lost aligning the base), then the barriers:
  /// Q's full, K's full per stage, V's full per stage, empty per stage.
  static constexpr int kSmemBytes = 1024 + int(Tiles::kBytes) + (1 + 3 * kStages) * 8;
  static_assert(kBlockM == 64 * (kConsumerWarps / 4), "one m64 block per consumer warpgroup");
  static_assert(kSmemBytes <= 227 * 1024);
};

/// The ring's barriers, after the tiles.
template <int kStages>
struct Barriers {
  uint64_t* full_q;
  uint64_t* full_k;  // [kStages]
  uint64_t* full_v;  // [kStages]
  uint64_t* empty;   // [kStages]
  __device__ explicit Barriers(unsigned char* at)
      : full_q(reinterpret_cast<uint64_t*>(at)),
        full_k(full_q + 1),
        full_v(full_k + kStages),
        empty(full_v + kStages) {}
};

/// Where a block sits in the problem (computed after setmaxnreg: ptxas keeps values that live
/// across it in local memory).
struct TileOf {
  int64_t n0;  // the tile's first query row
  int h, hk, bi;
  fa3::KeyBlocks blocks;
};

template <int kBlockM, int kBlockN>
__device__ __forceinline__ TileOf tile_of(const Geometry& g) {
  const int64_t m_tiles = (g.nq + kBlockM - 1) / kBlockM;
  // Causal grids run the longest tiles (the last query rows) first.
  const int64_t m_tile = g.causal ? m_tiles - 1 - blockIdx.x : blockIdx.x;
  TileOf t;
  t.n0 = m_tile * kBlockM;
  t.h = int(blockIdx.y);
  t.hk = int(t.h / g.group);
  t.bi = int(blockIdx.z);
  t.blocks = fa3::key_blocks(g.nq, g.nkv, g.causal, t.n0, kBlockM, kBlockN);
  return t;
}

/// The producer (one thread): Q's panels, then every visited key block's K and V panels (the
/// last block first) into the ring, each stage once its consumers have handed it back.
template <class C>
__device__ __forceinline__ void produce(const CUtensorMap* q_map, const CUtensorMap* k_map,
                                        const CUtensorMap* v_map, unsigned char* smem,
                                        const Barriers<C::kStages>& bars, const TileOf& t) {
  using Tiles = typename C::Tiles;
  using Q = typename Tiles::Q;
  using KV = typename Tiles::KV;
  if (t.blocks.count == 0) return;  // every row of the tile is empty: nothing to read
  const int n0 = int(t.n0);
  device::mbarrier_arrive_expect_tx(bars.full_q, Q::kBytes);
#pragma unroll
  for (int p = 0; p < Q::kPanels; ++p)
    device::tma_load_4d(smem + p * Q::kPanelBytes, q_map, p * fa3::kPanelCols, t.h, n0, t.bi,
                        bars.full_q);
  device::RingSlot<C::kStages> slot;
  for (int it = 0; it < int(t.blocks.count); ++it, slot = slot.next()) {
    const int j0 = (int(t.blocks.count) - 1 - it) * C::kBlockN;
    const int s = slot.index;
    // Parity phase ^ 1 of a fresh barrier counts as complete: the first lap does not wait.
    device::mbarrier_wait(&bars.empty[s], slot.phase ^ 1u);
    device::mbarrier_arrive_expect_tx(&bars.full_k[s], KV::kBytes);
#pragma unroll
    for (int p = 0; p < KV::kPanels; ++p)
      device::tma_load_4d(smem + Tiles::k_tile(s) + p * KV::kPanelBytes, k_map, p * fa3::kPanelCols,
                          t.hk, j0, t.bi, &bars.full_k[s]);
    device::mbarrier_arrive_expect_tx(&bars.full_v[s], KV::kBytes);
#pragma unroll
    for (int p = 0; p < KV::kPanels; ++p)
      device::tma_load_4d(smem + Tiles::v_tile(s) + p * KV::kPanelBytes, v_map, p * fa3::kPanelCols,
                          t.hk, j0, t.bi, &bars.full_v[s]);
  }
}

/// A consumer warpgroup (wg 0 or 1): rows n0 + 64 wg .. + 63 of the tile, the whole pass, then
/// its O rows and their lse.
template <class C, class T, int kD>
__device__ __forceinline__ void consume(unsigned char* smem, const Barriers<C::kStages>& bars,
                                        const TileOf& t, int wg, T* __restrict__ o,
                                        float* __restrict__ lse, const Geometry& g) {
  using Tiles = typename C::Tiles;
  using Q = typename Tiles::Q;
  using KV = typename Tiles::KV;
  constexpr int kBlockN = C::kBlockN;
  const int tid = device::warpgroup_thread(), lane = tid % 32, quad = lane % 4;
  const uint32_t s_base = device::smem_addr(smem);
  // This thread's two rows (r = 0, 1: wgmma_acc_coord's rows of registers 0 and 2).
  const int64_t row0 = t.n0 + 64 * wg + device::wgmma_acc_coord(tid, 0).row;
  const int64_t row[2] = {row0, row0 + 8};

  QuadRow rows[2];    // the two rows' running max (log2 units) and this lane's share of the sum
  float acc[kD / 2];  // O: 64 x kD over the warpgroup
#pragma unroll
  for (int i = 0; i < kD / 2; ++i) acc[i] = 0.f;

  if (t.blocks.count > 0) device::mbarrier_wait(bars.full_q, 0);
  device::RingSlot<C::kStages> slot;
  for (int it = 0; it < int(t.blocks.count); ++it, slot = slot.next()) {
    const int jb = int(t.blocks.count) - 1 - it, s = slot.index;

    // S = Q K^T over the block: kD / 16 k-steps of m64 x kBlockN.
    float sc[kBlockN / 2];
    device::mbarrier_wait(&bars.full_k[s], slot.phase);
    device::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk)
      device::wgmma_ss<kBlockN, T, /*A K-major*/ 0, /*B K-major*/ 0>(
          sc, Q::desc_k_major(s_base, 64 * wg, kk),
          KV::desc_k_major(s_base + Tiles::k_tile(s), 0, kk), kk > 0);
    device::wgmma_commit_group();
    device::wgmma_wait_group<0>();
    device::wgmma_fence_operands(sc);

    if (jb >= t.blocks.unmasked) {
      // The last visible key of each row relative to this lane's first column in the block,
      // clamped to [-1, kBlockN]: column 8 (i / 4) + i % 2 of the lane is masked past it.
      int last[2];
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        int64_t lim = g.causal ? row[r] + g.causal_offset : g.nkv - 1;
        lim = (lim < g.nkv - 1 ? lim : g.nkv - 1) - int64_t(jb) * kBlockN - 2 * quad;
        last[r] = int(lim < -1 ? -1 : (lim > kBlockN ? kBlockN : lim));
      }
#pragma unroll
      for (int i = 0; i < kBlockN / 2; ++i)
        if (8 * (i / 4) + i % 2 > last[(i / 2) % 2]) sc[i] = -INFINITY;
    }

    // Online softmax of the block's rows; O's rows rescaled by exp2(m_old - m_new).
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = -INFINITY;
#pragma unroll
      for (int i = 2 * r; i < kBlockN / 2; i += 4) mx = fmaxf(mx, fmaxf(sc[i], sc[i + 1]));
      float m_use;
      const float alpha = rows[r].rescale(quad_max(mx), g.scale_log2, m_use);
      float sum = 0.f;
#pragma unroll
      for (int i = 2 * r; i < kBlockN / 2; i += 4)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          sc[i + e] = QuadRow::term(sc[i + e], g.scale_log2, m_use);
          sum += sc[i + e];
        }
      rows[r].l = rows[r].l * alpha + sum;
#pragma unroll
      for (int i = 2 * r; i < kD / 2; i += 4) {
        acc[i] *= alpha;
        acc[i + 1] *= alpha;
      }
    }

    // O += P V: P rounded into the register A operand, kBlockN / 16 k-steps of m64 x kD.
    uint32_t pa[kBlockN / 16][4];
#pragma unroll
    for (int ks = 0; ks < kBlockN / 16; ++ks)
      fa3::p_operand<kBlockN>(sc, ks, pa[ks],
                              [](float x, float y) { return device::pack2<T>(x, y); });
    device::mbarrier_wait(&bars.full_v[s], slot.phase);
    device::wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kBlockN / 16; ++ks)
      device::wgmma_rs<kD, T, /*B MN-major*/ 1>(
          acc, pa[ks], KV::desc_mn_major(s_base + Tiles::v_tile(s), ks), true);
    device::wgmma_commit_group();
    device::wgmma_wait_group<0>();
    device::wgmma_fence_operands(acc);
#pragma unroll
    for (int ks = 0; ks < kBlockN / 16; ++ks)
#pragma unroll
      for (int e = 0; e < 4; ++e) device::wgmma_fence_operand(pa[ks][e]);
    // Every wgmma of this warp that read the stage is done: one arrival per warp.
    if (lane == 0) device::mbarrier_arrive(&bars.empty[s]);
  }

  // Epilogue: the rows' sums over their 4 lanes, O / l (0 for an empty row), lse.
  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const QuadRow::Final f = rows[r].finish();
    inv[r] = f.inv;
    if (quad == 0 && row[r] < g.nq) lse[(int64_t(t.bi) * g.hq + t.h) * g.nq + row[r]] = f.lse;
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    if (row[r] >= g.nq) continue;
    T* dst = o + ((int64_t(t.bi) * g.nq + row[r]) * g.hq + t.h) * kD;
#pragma unroll
    for (int i = 2 * r; i < kD / 2; i += 4)
      *reinterpret_cast<uint32_t*>(dst + device::wgmma_acc_coord(tid, i).col) =
          device::pack2<T>(acc[i] * inv[r], acc[i + 1] * inv[r]);
  }
}

// Block (x, y, z) = (query tile, query head, batch); 3 warpgroups: 2 consumers, then the producer.
template <class T, int kD>
__global__ void __launch_bounds__(V04Config<kD>::kThreads, 1)
    v04_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
               const __grid_constant__ CUtensorMap v_map, T* __restrict__ o,
               float* __restrict__ lse, Geometry g) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // wgmma and setmaxnreg are sm_90a-only
  using C = V04Config<kD>;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = device::align_shared<1024>(smem_raw);  // Q, then (K, V) per stage
  const Barriers<C::kStages> bars(smem + C::Tiles::kBytes);
  if (threadIdx.x == 0) {
    device::mbarrier_init(bars.full_q, 1);  // the producer's arrive_expect_tx
    for (int s = 0; s < C::kStages; ++s) {
      device::mbarrier_init(&bars.full_k[s], 1);
      device::mbarrier_init(&bars.full_v[s], 1);
      device::mbarrier_init(&bars.empty[s], C::kConsumerWarps);  // lane 0 of each consumer warp
    }
    device::fence_mbarrier_init();
  }
  __syncthreads();

  const int wg = device::warpgroup_index();
  if (wg == C::kConsumerWarps / 4) {  // the producer warpgroup: one thread issues every load
    device::setmaxnreg_dec<C::kProducerRegs>();
    if (threadIdx.x == C::kConsumers)
      produce<C>(&q_map, &k_map, &v_map, smem, bars, tile_of<C::kBlockM, C::kBlockN>(g));
  } else {
    device::setmaxnreg_inc<C::kConsumerRegs>();
    consume<C, T, kD>(smem, bars, tile_of<C::kBlockM, C::kBlockN>(g), wg, o, lse, g);
  }
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave O unwritten
#endif
}

/// The 4-D tensor map of a (B, N, H, D) tensor in boxes of 64 x `rows` tokens (fa3::token_map).
template <class T>
CUtensorMap token_tensor_map(const T* base, int64_t b, int64_t n, int64_t h, int64_t d, int rows) {
  const fa3::TokenMap m = fa3::token_map(b, n, h, d, rows, int(sizeof(T)));
  return device::tensor_map_4d(base, device::tma_data_type<T>(), m.dims, m.strides, m.box,
                               CU_TENSOR_MAP_SWIZZLE_128B);
}

constexpr const char* kName = "attention.v04";

PreparedLaunch prepare(const Problem& p, Buffers& b) {
  const Dims s = dims_of(p);
  return dispatch_tiled(
      kName, p, b, [&]<class T, int kD>(const Geometry& g, int64_t batch, const Tensors<T>& t) {
        using C = V04Config<kD>;
        KLAB_CHECK(t.vec16(), "attention.v04: Q, K, V and O must be 16-byte aligned (TMA)");
        constexpr auto kernel = v04_kernel<T, kD>;
        device::opt_in_dynamic_smem<kernel>(C::kSmemBytes);
        const CUtensorMap q_map = token_tensor_map(t.q, batch, s.nq, s.hq, kD, C::kBlockM);
        const CUtensorMap k_map = token_tensor_map(t.k, batch, s.nkv, s.hkv, kD, C::kBlockN);
        const CUtensorMap v_map = token_tensor_map(t.v, batch, s.nkv, s.hkv, kD, C::kBlockN);
        const dim3 grid = tiled_grid(g, batch, C::kBlockM);
        T* out = t.o;
        float* lse = t.lse;
        return PreparedLaunch([=](Stream stream) {
          kernel<<<grid, C::kThreads, C::kSmemBytes, reinterpret_cast<cudaStream_t>(stream)>>>(
              q_map, k_map, v_map, out, lse, g);
          KLAB_CHECK_LAUNCH();
        });
      });
}

}  // namespace

Variant gpu_v04_fa3_wgmma() {
  Variant v = tiled_variant<prepare>(
      "attention.v04_fa3_wgmma",
      "FA3 on wgmma: a TMA producer warpgroup and two consumer warpgroups of 64 query rows "
      "(setmaxnreg 40/232), S = QK^T from shared memory, P in registers as P V's A operand, "
      "two-stage K/V mbarrier ring, causal blocks skipped",
      90);
  v.can_implement = [](const Problem& p) {
    const Dims s = dims_of(p);
    if (Status st = tiled_limits(kName, s); !st.ok()) return st;
    if (p.misalign % 8 != 0)
      return Status::no("attention.v04: the TMA needs 16-byte aligned Q, K, V (misaligned base)");
    if (s.nq > INT_MAX || s.nkv > INT_MAX)
      return Status::no("attention.v04: nq or nkv above 2^31 - 1 (TMA coordinates)");
    // The tensor maps' batch strides (N H D elements) must stay below 2^40 bytes.
    if (std::max(s.nq * s.hq, s.nkv * s.hkv) * s.d * 2 >= (int64_t(1) << 40))
      return Status::no("attention.v04: a batch of Q, K or V spans 2^40 bytes (TMA stride limit)");
    return Status::yes();
  };
  return v;
}

}  // namespace klab::attention
