// v03 fa2_mma: FlashAttention 2 on tensor cores through mma.sync m16n8k16 (bf16/f16 in, fp32
// accumulate). A block of 4 warps owns kBlockM = 64 query rows of one (batch, query head); each
// warp owns 16 of them for the whole pass:
// - its Q fragments (16 rows x D) are loaded once by ldmatrix and stay in registers;
// - per key block of kBlockN keys, S = Q K^T in fp32 accumulators (K's B fragments by ldmatrix
//   from shared memory), the online softmax on those registers (the row's 4 lanes reduce by
//   shuffles; exp2f of scores prescaled by scale * log2(e)), and P, rounded to the input type in
//   registers, is directly the A operand of O += P V (V's B fragments by ldmatrix.trans): no
//   score ever goes to shared or device memory, and no warp waits on another between the two
//   products;
// - O is rescaled by exp2(m_old - m_new) only in registers and divided by the row sum once at the
//   end; lse = (m + log2 l) ln 2.
// K and V tiles are (kBlockN, D), 16-byte chunks XOR-swizzled by row (fa2_fragment.hpp, modelled
// lane by lane in the CPU tests), loaded with cp.async into two stages: the copy of the next key
// block is in flight while the warps compute on the current one (one barrier per key block). Q is
// staged once through the second stage's space before the loop.
// Causal: the key blocks are walked from the last visible one down; blocks entirely above the
// diagonal are never loaded, and only the blocks that cross the diagonal (or the end of the keys)
// take the element-wise mask, a separate instantiation of the loop body.
// Adds over v02: tensor cores (v02 runs every product on the FFMA pipe), P kept in registers
// between the two products, the K/V copies asynchronous and double-buffered.
// Expected bottleneck: the mma.sync issue rate and the ldmatrix traffic of K and V (each warp
// reads the whole K and V tiles for its 16 rows: 16 MACs per element loaded), then the softmax's
// FMUL/MUFU work between the two products, which nothing overlaps with the tensor pipe here
// (FA3's ping-pong does). Occupancy: 2 blocks (8 warps) per SM at D = 128.
// Prediction (written before it ran), causal D = 128 bf16 H = 32 N = 8k on an H200: 200-330
// TFLOP/s, i.e. 35-55% of cuDNN's ~600 and 0.6-1.0x PyTorch flash's ~337 (FlashAttention 2
// itself on mma.sync): mma.sync tops out far below the wgmma peak on Hopper.
// Requirements: D in {64, 128, 256} (256 with 32-key blocks, so that O's 128 and Q's 64
// registers per thread fit); hq and b up to 65535 (grid y, z). 16-byte aligned Q/K/V/O take
// cp.async and 16-byte stores of O staged through shared memory; any other alignment (the
// harness's misalign) copies element by element into the same tiles (slow, nothing in flight)
// and stores O element by element.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <cstdint>

#include "kernels/attention/fa2_fragment.hpp"
#include "kernels/attention/family.hpp"
#include "kernels/attention/quad_softmax.cuh"
#include "kernels/attention/tiled_launch.cuh"
#include "klab/core/cuda_check.hpp"
#include "klab/device/cp_async.cuh"
#include "klab/device/dispatch.cuh"
#include "klab/device/launch.hpp"
#include "klab/device/mma_sm80.cuh"
#include "klab/device/smem.cuh"
#include "klab/device/vec.cuh"

namespace klab::attention {

namespace {

template <int kD>
struct V03Config {
  static constexpr int kWarps = 4, kThreads = 32 * kWarps;
  static constexpr int kBlockM = 16 * kWarps;           // each warp owns 16 query rows
  static constexpr int kBlockN = kD == 256 ? 32 : 64;   // keys per block
  static constexpr int kMinBlocks = kD == 256 ? 1 : 2;  // blocks per SM (registers' cap)
  // Q's fragments stay in registers up to D = 128; at 256 they would take 64 registers beside
  // O's 128, and Q is read from its own shared tile at every k step instead (FA2's default).
  static constexpr bool kQInRegs = kD <= 128;
  static constexpr int kSteps = kD / 16;              // k steps of S = Q K^T
  static constexpr int kKeyTiles = kBlockN / 8;       // n tiles of S
  static constexpr int kDTiles = kD / 8;              // n tiles of O
  static constexpr int kTileElems = kBlockN * kD;     // one K or V tile
  static constexpr int kStageElems = 2 * kTileElems;  // K then V
  static constexpr int kSmemBytes = 2 * (2 * kStageElems + (kQInRegs ? 0 : kBlockM * kD));
  static_assert(!kQInRegs || kBlockM * kD <= kStageElems, "Q is staged in stage 1's space");
  static_assert(kBlockN % 16 == 0 && kD % 64 == 0);
};

// Copies rows [0, rows) of a (.., heads, kD) tensor (row stride ld elements) into a swizzled
// (rows, kD) shared tile; rows at or past `valid` become zeros. kVec: 16-byte cp.async (the
// caller commits and waits); otherwise element loads and a 16-byte shared store per chunk.
template <class T, int kD, int kRows, int kThreads, bool kVec>
__device__ __forceinline__ void copy_tile(uint32_t s, const T* g, const T* safe, int64_t ld,
                                          int64_t valid, int tid) {
  constexpr int kChunks = kD / 8;
  static_assert((kRows * kChunks) % kThreads == 0);
#pragma unroll
  for (int i = 0; i < kRows * kChunks / kThreads; ++i) {
    const int c = tid + i * kThreads, r = c / kChunks, ch = c % kChunks;
    const bool ok = r < valid;
    const T* src = g + r * ld + ch * 8;
    const uint32_t dst = s + 2 * fa2::tile_offset<kD>(r, ch);
    if constexpr (kVec) {
      device::cp_async_16(dst, ok ? src : safe, ok);
    } else {
      uint32_t w[4] = {0, 0, 0, 0};
      if (ok) {
        const auto* h = reinterpret_cast<const unsigned short*>(src);
#pragma unroll
        for (int e = 0; e < 4; ++e) w[e] = uint32_t(h[2 * e]) | (uint32_t(h[2 * e + 1]) << 16);
      }
      device::st_shared_v4(dst, make_uint4(w[0], w[1], w[2], w[3]));
    }
  }
}

// Block (x, y, z) = (query tile, query head, batch); causal grids run the longest tiles first.
template <class T, int kD, bool kVec>
__global__ void __launch_bounds__(V03Config<kD>::kThreads, V03Config<kD>::kMinBlocks)
    v03_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
               T* __restrict__ o, float* __restrict__ lse, Geometry g) {
  using C = V03Config<kD>;
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t s_base = device::smem_addr(smem);  // 2 stages of (K, V), each (kBlockN, kD)
  constexpr uint32_t kStageBytes = 2 * C::kStageElems, kTileBytes = 2 * C::kTileElems;

  const int64_t m_tiles = (g.nq + C::kBlockM - 1) / C::kBlockM;
  const int64_t m_tile = g.causal ? m_tiles - 1 - blockIdx.x : blockIdx.x;
  const int64_t n0 = m_tile * C::kBlockM, h = blockIdx.y, bi = blockIdx.z, hk = h / g.group;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int gr = lane / 4, gt = lane % 4;  // the fragments' g and t
  const int wr0 = 16 * warp;               // the warp's first row in the block
  const fa2::LaneOffsets lo = fa2::lane_offsets<kD>(lane);

  const int64_t ld_q = g.hq * kD, ld_kv = g.hkv * kD;
  const T* gQ = q + ((bi * g.nq + n0) * g.hq + h) * kD;
  const T* gK = k + (bi * g.nkv * g.hkv + hk) * kD;
  const T* gV = v + (bi * g.nkv * g.hkv + hk) * kD;

  // Keys this tile needs: all, or under the causal mask up to its last valid row's last key.
  int64_t keys = g.nkv;
  if (g.causal) {
    const int64_t last_row = (n0 + C::kBlockM < g.nq ? n0 + C::kBlockM : g.nq) - 1;
    const int64_t last_key = last_row + g.causal_offset;
    keys = last_key < 0 ? 0 : (last_key + 1 < g.nkv ? last_key + 1 : g.nkv);
  }
  // Q (kBlockM, kD): in stage 1's space when it goes to registers, else after the stages.
  const uint32_t sQ = s_base + (C::kQInRegs ? 1 : 2) * kStageBytes;
  const int n_blocks = static_cast<int>((keys + C::kBlockN - 1) / C::kBlockN);

  auto copy_kv = [&](int jb, int stage) {
    const int64_t j0 = int64_t(jb) * C::kBlockN;
    const uint32_t s = s_base + stage * kStageBytes;
    copy_tile<T, kD, C::kBlockN, C::kThreads, kVec>(s, gK + j0 * ld_kv, k, ld_kv, g.nkv - j0, tid);
    copy_tile<T, kD, C::kBlockN, C::kThreads, kVec>(s + kTileBytes, gV + j0 * ld_kv, v, ld_kv,
                                                    g.nkv - j0, tid);
  };

  // Prologue: Q and the first (last visible) key block in one group; Q into registers.
  copy_tile<T, kD, C::kBlockM, C::kThreads, kVec>(sQ, gQ, q, ld_q, g.nq - n0, tid);
  if (n_blocks > 0) copy_kv(n_blocks - 1, 0);
  device::cp_async_commit();
  device::cp_async_wait<0>();
  __syncthreads();
  uint32_t qf[C::kQInRegs ? C::kSteps : 1][4];  // A fragments of the warp's rows, by k step
  if constexpr (C::kQInRegs) {
#pragma unroll
    for (int kk = 0; kk < C::kSteps; ++kk)
      device::ldmatrix_x4(qf[kk], sQ + 2 * fa2::ldmatrix_offset<kD>(lo, wr0, 2 * kk));
    __syncthreads();  // stage 1 is free for the first prefetch
  }

  // Rows gr (r = 0) and gr + 8 (r = 1) of the warp: running max (log2 units), this lane's share
  // of the running sum, and O's accumulators (D tile nt: columns 8 nt + 2 gt, + 1).
  QuadRow rows[2];
  float acc[C::kDTiles][4];
#pragma unroll
  for (int nt = 0; nt < C::kDTiles; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[nt][e] = 0.f;
  const int64_t row[2] = {n0 + wr0 + gr, n0 + wr0 + gr + 8};

  // One key block: S = Q K^T, (mask), online softmax, O += P V.
  auto block = [&]<bool kMask>(int jb, uint32_t sK) {
    const uint32_t sV = sK + kTileBytes;
    float s[C::kKeyTiles][4];
#pragma unroll
    for (int nt = 0; nt < C::kKeyTiles; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) s[nt][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < C::kSteps; ++kk) {
      uint32_t(&a)[4] = qf[C::kQInRegs ? kk : 0];
      if constexpr (!C::kQInRegs)
        device::ldmatrix_x4(a, sQ + 2 * fa2::ldmatrix_offset<kD>(lo, wr0, 2 * kk));
#pragma unroll
      for (int p = 0; p < C::kKeyTiles / 2; ++p) {
        uint32_t r[4], b_lo[2], b_hi[2];
        device::ldmatrix_x4(r, sK + 2 * fa2::ldmatrix_offset<kD>(lo, 16 * p, 2 * kk));
        fa2::k_fragments(r, b_lo, b_hi);
        device::mma_m16n8k16<T>(s[2 * p], a, b_lo);
        device::mma_m16n8k16<T>(s[2 * p + 1], a, b_hi);
      }
    }
    if constexpr (kMask) {
      // The last visible key of each row, relative to this lane's first key in the block and
      // clamped to [-1, kBlockN]: key 8 nt + (e & 1) of the lane is masked past it.
      int last[2];
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        int64_t lim = g.causal ? row[r] + g.causal_offset : g.nkv - 1;
        lim = (lim < g.nkv - 1 ? lim : g.nkv - 1) - int64_t(jb) * C::kBlockN - 2 * gt;
        last[r] = static_cast<int>(lim < -1 ? -1 : (lim > C::kBlockN ? C::kBlockN : lim));
      }
#pragma unroll
      for (int nt = 0; nt < C::kKeyTiles; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          if (8 * nt + (e & 1) > last[e / 2]) s[nt][e] = -INFINITY;
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = -INFINITY;
#pragma unroll
      for (int nt = 0; nt < C::kKeyTiles; ++nt)
        mx = fmaxf(mx, fmaxf(s[nt][2 * r], s[nt][2 * r + 1]));
      float m_use;
      const float alpha = rows[r].rescale(quad_max(mx), g.scale_log2, m_use);
      float sum = 0.f;
#pragma unroll
      for (int nt = 0; nt < C::kKeyTiles; ++nt)
#pragma unroll
        for (int e = 2 * r; e < 2 * r + 2; ++e) {
          s[nt][e] = QuadRow::term(s[nt][e], g.scale_log2, m_use);
          sum += s[nt][e];
        }
      rows[r].l = rows[r].l * alpha + sum;
#pragma unroll
      for (int nt = 0; nt < C::kDTiles; ++nt) {
        acc[nt][2 * r] *= alpha;
        acc[nt][2 * r + 1] *= alpha;
      }
    }
#pragma unroll
    for (int ks = 0; ks < C::kBlockN / 16; ++ks) {
      uint32_t a[4];
      fa2::p_fragment(s[2 * ks], s[2 * ks + 1], a,
                      [](float x, float y) { return device::pack2<T>(x, y); });
#pragma unroll
      for (int p = 0; p < C::kDTiles / 2; ++p) {
        uint32_t r[4], b_lo[2], b_hi[2];
        device::ldmatrix_x4_trans(r, sV + 2 * fa2::ldmatrix_offset<kD>(lo, 16 * ks, 2 * p));
        fa2::v_fragments(r, b_lo, b_hi);
        device::mma_m16n8k16<T>(acc[2 * p], a, b_lo);
        device::mma_m16n8k16<T>(acc[2 * p + 1], a, b_hi);
      }
    }
  };

  // Key blocks from the last visible one down: the first ones cross the diagonal or the end of
  // the keys and take the mask; the first block of the first row's limit past that does not.
  const int64_t first_limit = g.causal ? n0 + g.causal_offset : g.nkv - 1;
  for (int it = 0; it < n_blocks; ++it) {
    const int jb = n_blocks - 1 - it;
    if (it > 0) {
      device::cp_async_wait<0>();  // block jb has landed (this thread's copies)...
      __syncthreads();             // ...everyone's, and nobody reads block jb + 1's stage
    }
    if (jb > 0) copy_kv(jb - 1, (it + 1) & 1);
    device::cp_async_commit();
    const uint32_t sK = s_base + (it & 1) * kStageBytes;
    const int64_t j_end = int64_t(jb + 1) * C::kBlockN;  // one past the block's last key
    if (j_end > g.nkv || j_end - 1 > first_limit)
      block.template operator()<true>(jb, sK);
    else
      block.template operator()<false>(jb, sK);
  }
  device::cp_async_wait<0>();  // only empty groups can be pending: leave none behind

  // Epilogue: the rows' sums over their 4 lanes, O / l (0 for an empty row), lse.
  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const QuadRow::Final f = rows[r].finish();
    inv[r] = f.inv;
    if (gt == 0 && row[r] < g.nq) lse[(bi * g.hq + h) * g.nq + row[r]] = f.lse;
  }
  if constexpr (kVec) {
    // Through the warp's own 16 rows of a swizzled (kBlockM, kD) tile in stage 0's space (after
    // the barrier: other warps may still read the last key block there), then 16-byte stores of
    // whole row chunks.
    __syncthreads();
    const uint32_t sO = s_base;
#pragma unroll
    for (int nt = 0; nt < C::kDTiles; ++nt)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const uint32_t w = device::pack2<T>(acc[nt][2 * r] * inv[r], acc[nt][2 * r + 1] * inv[r]);
        const uint32_t addr = sO + 2 * (fa2::tile_offset<kD>(wr0 + gr + 8 * r, nt) + 2 * gt);
        asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(addr), "r"(w) : "memory");
      }
    __syncwarp();
    constexpr int kChunks = kD / 8;
#pragma unroll
    for (int i = 0; i < 16 * kChunks / 32; ++i) {
      const int c = lane + 32 * i, rr = c / kChunks, ch = c % kChunks;
      const int64_t n = n0 + wr0 + rr;
      if (n >= g.nq) continue;
      const uint4 x = device::ld_shared_v4(sO + 2 * fa2::tile_offset<kD>(wr0 + rr, ch));
      *reinterpret_cast<uint4*>(o + ((bi * g.nq + n) * g.hq + h) * kD + 8 * ch) = x;
    }
  } else {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      if (row[r] >= g.nq) continue;
      T* dst = o + ((bi * g.nq + row[r]) * g.hq + h) * kD + 2 * gt;
#pragma unroll
      for (int nt = 0; nt < C::kDTiles; ++nt) {
        dst[8 * nt] = device::from_float<T>(acc[nt][2 * r] * inv[r]);
        dst[8 * nt + 1] = device::from_float<T>(acc[nt][2 * r + 1] * inv[r]);
      }
    }
  }
}

struct V03Rung {
  template <int kD>
  using Config = V03Config<kD>;
  template <class T, int kD, bool kVec>
  static constexpr auto kernel() {
    return v03_kernel<T, kD, kVec>;
  }
  static constexpr const char* kName = "attention.v03";
};

PreparedLaunch prepare(const Problem& p, Buffers& b) { return prepare_tiled<V03Rung>(p, b); }

}  // namespace

Variant gpu_v03_fa2_mma() {
  Variant v = tiled_variant<prepare>(
      "attention.v03_fa2_mma",
      "FA2 on mma.sync m16n8k16: 16 query rows per warp, Q and P in registers, swizzled "
      "double-buffered cp.async K/V, causal blocks skipped",
      80);
  v.can_implement = [](const Problem& p) {
    const Dims s = dims_of(p);
    if (Status st = tiled_limits("attention.v03", s); !st.ok()) return st;
    if (device::ceil_div(s.nq, V03Config<64>::kBlockM) > INT_MAX)
      return Status::no("attention.v03: more than 2^31 - 1 query tiles");
    if (device::ceil_div(s.nkv, V03Config<256>::kBlockN) > INT_MAX)
      return Status::no("attention.v03: more than 2^31 - 1 key blocks");
    return Status::yes();
  };
  return v;
}

}  // namespace klab::attention
