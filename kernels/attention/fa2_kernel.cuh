#pragma once
// The FlashAttention 2 kernel on mma.sync m16n8k16 that attention v03, v13 and v14 instantiate
// (bf16/f16 in, fp32 accumulate), with what differs between them in its Config: the rows a warp
// owns (one or two m16 row tiles), the keys a block, whether Q's fragments stay in registers, and
// whether O is rescaled only when a row's max grows past 2^8 (FlashAttention 4's idea, v14).
// - A block of 4 warps owns kBlockM = 16 * kRowTiles * 4 query rows of one (batch, query head);
//   each warp owns kRowTiles m16 tiles of them for the whole pass.
// - Q's fragments are loaded by ldmatrix, once into registers (kQInRegs), or from Q's own shared
//   tile at every k step of S (FlashAttention 2's default, which frees their registers).
// - Per key block of kBlockN keys: S = Q K^T in fp32 accumulators (K's B fragments by ldmatrix,
//   each one feeding an MMA of every row tile of the warp), the online softmax on those registers
//   (the row's 4 lanes reduce by shuffles; exp2 of scores prescaled by scale * log2(e), one
//   MUFU.EX2 each), and P, rounded to the input type in registers, is directly the A operand of
//   O += P V (V's B fragments by ldmatrix.trans): no score goes to shared or device memory, and
//   no warp waits on another between the two products.
// - O is rescaled by exp2(m_old - m_new) only in registers and divided by the row sum once at the
//   end; lse = (m + log2 l) ln 2.
// K and V tiles are (kBlockN, D), 16-byte chunks XOR-swizzled by row (fa2_fragment.hpp, modelled
// lane by lane in the CPU tests), loaded with cp.async into two stages: the copy of the next key
// block is in flight while the warps compute on the current one (one barrier per key block). Q
// has its own tile after the stages, or, when its fragments go to registers, is staged once
// through the second stage's space before the loop.
// Causal: the key blocks are walked from the last visible one down; blocks entirely above the
// diagonal are never loaded, and only the blocks that cross the diagonal (or the end of the keys)
// take the element-wise mask, a separate instantiation of the loop body.
// 16-byte aligned Q/K/V/O take cp.async and 16-byte stores of O staged through shared memory;
// any other alignment (the harness's misalign) copies element by element into the same tiles
// (slow, nothing in flight) and stores O element by element.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <cstdint>
#include <string>

#include "kernels/attention/fa2_fragment.hpp"
#include "kernels/attention/family.hpp"
#include "kernels/attention/quad_softmax.cuh"
#include "kernels/attention/tiled_launch.cuh"
#include "klab/device/cp_async.cuh"
#include "klab/device/launch.hpp"
#include "klab/device/mma_sm80.cuh"
#include "klab/device/smem.cuh"
#include "klab/device/vec.cuh"

namespace klab::attention::fa2 {

/// A configuration of the kernel below: head dimension kD_, kRowTiles_ m16 row tiles a warp,
/// kBlockN_ keys a block, Q's fragments in registers or read at every k step (kQInRegs_), and the
/// blocks an SM that __launch_bounds__ asks for (the registers' cap); kLazyRescale_: FlashAttention
/// 4's conditional rescaling of O (v14).
template <int kD_, int kRowTiles_, int kBlockN_, bool kQInRegs_, int kMinBlocks_,
          bool kLazyRescale_ = false>
struct Config {
  static constexpr int kD = kD_;
  static constexpr int kWarps = 4, kThreads = 32 * kWarps;
  static constexpr int kRowTiles = kRowTiles_;
  static constexpr int kWarpRows = 16 * kRowTiles;    // query rows a warp owns
  static constexpr int kBlockM = kWarpRows * kWarps;  // query rows a block
  static constexpr int kBlockN = kBlockN_;            // keys a block
  static constexpr int kMinBlocks = kMinBlocks_;
  static constexpr bool kQInRegs = kQInRegs_;
  static constexpr bool kLazyRescale = kLazyRescale_;
  static constexpr int kSteps = kD / 16;              // k steps of S = Q K^T
  static constexpr int kKeyTiles = kBlockN / 8;       // n tiles of S
  static constexpr int kDTiles = kD / 8;              // n tiles of O
  static constexpr int kTileElems = kBlockN * kD;     // one K or V tile
  static constexpr int kStageElems = 2 * kTileElems;  // K then V
  static constexpr int kSmemBytes = 2 * (2 * kStageElems + (kQInRegs ? 0 : kBlockM * kD));
  static_assert(!kQInRegs || kBlockM * kD <= kStageElems, "Q is staged in stage 1's space");
  static_assert(kBlockM * kD <= 2 * kStageElems, "O is staged in the stages' space");
  static_assert(kBlockN % 16 == 0 && kD % 64 == 0);
};

template <class T, int kD, int kRows, int kThreads, bool kVec>
__device__ __forceinline__ void copy_tile(uint32_t s, const T* g, const T* safe, int64_t ld,
                                          int64_t valid, int tid) {
  constexpr int kChunks = kD / 8;
  static_assert((kRows * kChunks) % kThreads == 0 && kThreads % kChunks == 0);
  constexpr int kRowStep = kThreads / kChunks;
  const int r0 = tid / kChunks, ch = tid % kChunks;
  const T* src = g + r0 * ld + ch * 8;
  const int64_t step = kRowStep * ld;
  // Rows of this thread left valid, clamped to the tile: chunk i is valid when i * kRowStep is
  // below it (a compare with an immediate; nothing per chunk to keep across calls).
  const int left = int((valid < kRows ? (valid < 0 ? 0 : valid) : kRows)) - r0;
#pragma unroll
  for (int i = 0; i < kRows * kChunks / kThreads; ++i) {
    const int r = r0 + i * kRowStep;
    const bool ok = i * kRowStep < left;
    const uint32_t dst = s + 2 * tile_offset<kD>(r, ch);
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
    src += step;
    asm volatile("" : "+l"(src));  // a running pointer: no per-chunk offsets held across calls
  }
}

/// The FA2 kernel of configuration C (Config above) on element type T; kVec: 16-byte cp.async and
/// stores (every tensor 16-byte aligned), or element copies. Block (x, y, z) = (query tile, query
/// head, batch); causal grids run the longest tiles first.
template <class C, class T, bool kVec>
__global__ void __launch_bounds__(C::kThreads, C::kMinBlocks)
    kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
           T* __restrict__ o, float* __restrict__ lse, Geometry g) {
  constexpr int kD = C::kD;
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t s_base = device::smem_addr(smem);  // 2 stages of (K, V), each (kBlockN, kD)
  constexpr uint32_t kStageBytes = 2 * C::kStageElems, kTileBytes = 2 * C::kTileElems;

  const int64_t m_tiles = (g.nq + C::kBlockM - 1) / C::kBlockM;
  const int64_t m_tile = g.causal ? m_tiles - 1 - blockIdx.x : blockIdx.x;
  const int64_t n0 = m_tile * C::kBlockM, h = blockIdx.y, bi = blockIdx.z, hk = h / g.group;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int gr = lane / 4, gt = lane % 4;  // the fragments' g and t
  const int wr0 = C::kWarpRows * warp;     // the warp's first row in the block
  const LaneOffsets lo = lane_offsets<kD>(lane), lo_k = k_lane_offsets<kD>(lane);

  const int64_t ld_q = g.hq * kD, ld_kv = g.hkv * kD;
  const T* gQ = q + ((bi * g.nq + n0) * g.hq + h) * kD;
  const T* gK = k + (bi * g.nkv * g.hkv + hk) * kD;
  const T* gV = v + (bi * g.nkv * g.hkv + hk) * kD;

  const int64_t keys = tile_keys(g, n0, C::kBlockM);
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
  // A fragments of the warp's row tiles, by k step (in registers, or loaded at each k step).
  uint32_t qf[C::kRowTiles][C::kQInRegs ? C::kSteps : 1][4];
  if constexpr (C::kQInRegs) {
#pragma unroll
    for (int mt = 0; mt < C::kRowTiles; ++mt)
#pragma unroll
      for (int kk = 0; kk < C::kSteps; ++kk)
        device::ldmatrix_x4(qf[mt][kk], sQ + 2 * ldmatrix_offset<kD>(lo, wr0 + 16 * mt, 2 * kk));
    __syncthreads();  // stage 1 is free for the first prefetch
  }

  // Rows gr (r = 0) and gr + 8 (r = 1) of each row tile mt: running max (log2 units), this
  // lane's share of the running sum, and O's accumulators (D tile nt: columns 8 nt + 2 gt, + 1).
  QuadRow rows[C::kRowTiles][2];
  float acc[C::kRowTiles][C::kDTiles][4];
#pragma unroll
  for (int mt = 0; mt < C::kRowTiles; ++mt)
#pragma unroll
    for (int nt = 0; nt < C::kDTiles; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mt][nt][e] = 0.f;
  // Row r of row tile mt within the block (its index is n0 plus this): recomputed where it is
  // used rather than held as 64-bit indices across the loop, whose registers are the O tile's.
  auto block_row = [&](int mt, int r) { return wr0 + 16 * mt + gr + 8 * r; };

  // One key block: S = Q K^T, (mask), online softmax, O += P V. Each K and V fragment loaded
  // from shared memory feeds one MMA per row tile.
  auto block = [&]<bool kMask>(int jb, uint32_t sK) {
    const uint32_t sV = sK + kTileBytes;
    float s[C::kRowTiles][C::kKeyTiles][4];
#pragma unroll
    for (int mt = 0; mt < C::kRowTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < C::kKeyTiles; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[mt][nt][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < C::kSteps; ++kk) {
      if constexpr (!C::kQInRegs)
#pragma unroll
        for (int mt = 0; mt < C::kRowTiles; ++mt)
          device::ldmatrix_x4(qf[mt][0], sQ + 2 * ldmatrix_offset<kD>(lo, wr0 + 16 * mt, 2 * kk));
#pragma unroll
      for (int p = 0; p < C::kKeyTiles / 2; ++p) {
        uint32_t r[4], b_lo[2], b_hi[2];
        device::ldmatrix_x4(r, sK + 2 * ldmatrix_offset<kD>(lo_k, 16 * p, 2 * kk));
        k_fragments(r, b_lo, b_hi);
#pragma unroll
        for (int mt = 0; mt < C::kRowTiles; ++mt) {
          const uint32_t(&a)[4] = qf[mt][C::kQInRegs ? kk : 0];
          device::mma_m16n8k16<T>(s[mt][2 * p], a, b_lo);
          device::mma_m16n8k16<T>(s[mt][2 * p + 1], a, b_hi);
        }
      }
    }
    // Row tile mt's causal / end-of-keys mask.
    auto mask = [&](int mt) {
      if constexpr (kMask) {
        // The last visible key of each row, relative to this lane's first key in the block and
        // clamped to [-1, kBlockN]: key 8 nt + (e & 1) of the lane is masked past it. From two
        // block scalars relative to the block's first key: the diagonal (the block's row 0's
        // last key, causal) and the keys' end.
        const int64_t j0 = int64_t(jb) * C::kBlockN;
        const int64_t diag = n0 + g.causal_offset - j0, end = g.nkv - 1 - j0;
        int last[2];
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          int64_t lim = g.causal ? diag + block_row(mt, r) : end;
          lim = (lim < end ? lim : end) - 2 * gt;
          last[r] = static_cast<int>(lim < -1 ? -1 : (lim > C::kBlockN ? C::kBlockN : lim));
        }
#pragma unroll
        for (int nt = 0; nt < C::kKeyTiles; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            if (8 * nt + (e & 1) > last[e / 2]) s[mt][nt][e] = -INFINITY;
      }
    };
    // The raw scores' maximum over this lane's share of row r of row tile mt (quad_max of it:
    // the row's).
    auto lane_row_max = [&](int mt, int r) {
      float mx = -INFINITY;
#pragma unroll
      for (int nt = 0; nt < C::kKeyTiles; ++nt)
        mx = fmaxf(mx, fmaxf(s[mt][nt][2 * r], s[mt][nt][2 * r + 1]));
      return mx;
    };
    // Row r of row tile mt with the row maximum mx: its terms, its sum, and (rescale) its running
    // max raised and its O and sum rescaled; without rescale the row keeps its max.
    auto softmax_row = [&](int mt, int r, float mx, bool rescale) {
      float m_use, alpha = 1.f;
      if (rescale)
        alpha = rows[mt][r].rescale(mx, g.scale_log2, m_use);
      else  // kLazyRescale: its scores lie at most kLazyRescaleLog2 above the kept max
        m_use = QuadRow::subtrahend(rows[mt][r].m);
      float sum = 0.f;
#pragma unroll
      for (int nt = 0; nt < C::kKeyTiles; ++nt)
#pragma unroll
        for (int e = 2 * r; e < 2 * r + 2; ++e) {
          s[mt][nt][e] = QuadRow::term(s[mt][nt][e], g.scale_log2, m_use);
          sum += s[mt][nt][e];
        }
      rows[mt][r].l = rows[mt][r].l * alpha + sum;
      if (rescale) {
#pragma unroll
        for (int nt = 0; nt < C::kDTiles; ++nt) {
          acc[mt][nt][2 * r] *= alpha;
          acc[mt][nt][2 * r + 1] *= alpha;
        }
      }
    };
    if constexpr (!C::kLazyRescale) {
#pragma unroll
      for (int mt = 0; mt < C::kRowTiles; ++mt) {
        mask(mt);
#pragma unroll
        for (int r = 0; r < 2; ++r) softmax_row(mt, r, quad_max(lane_row_max(mt, r)), true);
      }
    } else {
      // FlashAttention 4's conditional rescaling (as v07's): the warp keeps its rows' running
      // max, and O and the sums unscaled, unless some row's max grows past kLazyRescaleLog2; the
      // vote makes the rescale a uniform branch. (m = -inf grows for any finite score.) A row's m
      // is the same in its quad's four lanes, so the vote over each lane's own max is the vote
      // over the rows' maxima: the quad's shuffles wait for a rescale, the rare case (as in
      // fa3_kernel.cuh's softmax_block).
      float mx[C::kRowTiles][2];
      bool grows = false;
#pragma unroll
      for (int mt = 0; mt < C::kRowTiles; ++mt) {
        mask(mt);
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          mx[mt][r] = lane_row_max(mt, r);
          grows |= mx[mt][r] * g.scale_log2 > rows[mt][r].m + kLazyRescaleLog2;
        }
      }
      const bool rescale = __any_sync(0xffffffffu, grows);
      if (rescale) {
#pragma unroll
        for (int mt = 0; mt < C::kRowTiles; ++mt)
#pragma unroll
          for (int r = 0; r < 2; ++r) mx[mt][r] = quad_max(mx[mt][r]);
      }
#pragma unroll
      for (int mt = 0; mt < C::kRowTiles; ++mt)
#pragma unroll
        for (int r = 0; r < 2; ++r) softmax_row(mt, r, mx[mt][r], rescale);
    }
#pragma unroll
    for (int ks = 0; ks < C::kBlockN / 16; ++ks) {
      uint32_t a[C::kRowTiles][4];
#pragma unroll
      for (int mt = 0; mt < C::kRowTiles; ++mt)
        p_fragment(s[mt][2 * ks], s[mt][2 * ks + 1], a[mt],
                   [](float x, float y) { return device::pack2<T>(x, y); });
#pragma unroll
      for (int p = 0; p < C::kDTiles / 2; ++p) {
        uint32_t r[4], b_lo[2], b_hi[2];
        device::ldmatrix_x4_trans(r, sV + 2 * ldmatrix_offset<kD>(lo, 16 * ks, 2 * p));
        v_fragments(r, b_lo, b_hi);
#pragma unroll
        for (int mt = 0; mt < C::kRowTiles; ++mt) {
          device::mma_m16n8k16<T>(acc[mt][2 * p], a[mt], b_lo);
          device::mma_m16n8k16<T>(acc[mt][2 * p + 1], a[mt], b_hi);
        }
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
  float inv[C::kRowTiles][2];
#pragma unroll
  for (int mt = 0; mt < C::kRowTiles; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const QuadRow::Final f = rows[mt][r].finish();
      inv[mt][r] = f.inv;
      const int64_t n = n0 + block_row(mt, r);
      if (gt == 0 && n < g.nq) lse[(bi * g.hq + h) * g.nq + n] = f.lse;
    }
  if constexpr (kVec) {
    // Through the warp's own rows of a swizzled (kBlockM, kD) tile at the stages' start (after
    // the barrier: other warps may still read the last key block there), then 16-byte stores of
    // whole row chunks.
    __syncthreads();
    const uint32_t sO = s_base;
#pragma unroll
    for (int mt = 0; mt < C::kRowTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < C::kDTiles; ++nt)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const uint32_t w = device::pack2<T>(acc[mt][nt][2 * r] * inv[mt][r],
                                              acc[mt][nt][2 * r + 1] * inv[mt][r]);
          const int rr = wr0 + 16 * mt + gr + 8 * r;
          const uint32_t addr = sO + 2 * (tile_offset<kD>(rr, nt) + 2 * gt);
          asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(addr), "r"(w) : "memory");
        }
    __syncwarp();
    constexpr int kChunks = kD / 8;
#pragma unroll
    for (int i = 0; i < C::kWarpRows * kChunks / 32; ++i) {
      const int c = lane + 32 * i, rr = c / kChunks, ch = c % kChunks;
      const int64_t n = n0 + wr0 + rr;
      if (n >= g.nq) continue;
      const uint4 x = device::ld_shared_v4(sO + 2 * tile_offset<kD>(wr0 + rr, ch));
      *reinterpret_cast<uint4*>(o + ((bi * g.nq + n) * g.hq + h) * kD + 8 * ch) = x;
    }
  } else {
#pragma unroll
    for (int mt = 0; mt < C::kRowTiles; ++mt)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int64_t n = n0 + block_row(mt, r);
        if (n >= g.nq) continue;
        T* dst = o + ((bi * g.nq + n) * g.hq + h) * kD + 2 * gt;
#pragma unroll
        for (int nt = 0; nt < C::kDTiles; ++nt) {
          dst[8 * nt] = device::from_float<T>(acc[mt][nt][2 * r] * inv[mt][r]);
          dst[8 * nt + 1] = device::from_float<T>(acc[mt][nt][2 * r + 1] * inv[mt][r]);
        }
      }
  }
}

/// A rung of this kernel for tiled_launch.cuh: configuration Cfg<kD> at each head dimension, named
/// Name::kName in its messages.
template <template <int> class Cfg, class Name>
struct Rung {
  template <int kD>
  using Config = Cfg<kD>;
  template <class T, int kD, bool kVec>
  static constexpr auto kernel() {
    return fa2::kernel<Cfg<kD>, T, kVec>;
  }
  static constexpr const char* kName = Name::kName;
};

/// The registered variant of rung R (a Rung above): the tiled rungs' limits, and the query tiles
/// and key blocks of its tiles at the problem's D within the grid's and the loop's ints.
template <class R>
Variant variant(std::string id, std::string summary) {
  Variant v = tiled_variant<prepare_tiled<R>>(std::move(id), std::move(summary), 80);
  v.can_implement = [](const Problem& p) {
    const std::string name = R::kName;
    const Dims s = dims_of(p);
    if (Status st = tiled_limits(name, s); !st.ok()) return st;
    const int64_t rows = s.d == 64    ? R::template Config<64>::kBlockM
                         : s.d == 128 ? R::template Config<128>::kBlockM
                                      : R::template Config<256>::kBlockM;
    const int64_t keys = s.d == 64    ? R::template Config<64>::kBlockN
                         : s.d == 128 ? R::template Config<128>::kBlockN
                                      : R::template Config<256>::kBlockN;
    if (device::ceil_div(s.nq, rows) > INT_MAX)
      return Status::no(name + ": more than 2^31 - 1 query tiles");
    if (device::ceil_div(s.nkv, keys) > INT_MAX)
      return Status::no(name + ": more than 2^31 - 1 key blocks");
    return Status::yes();
  };
  return v;
}

}  // namespace klab::attention::fa2
