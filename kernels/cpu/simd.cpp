// The SIMD kernels of the CPU ladder, with Highway's dynamic dispatch: this file is compiled once
// per instruction set (foreach_target.h re-includes it with HWY_NAMESPACE = N_SSE4, N_AVX2,
// N_AVX3, ...) and HWY_DYNAMIC_DISPATCH picks the best one this CPU runs, at run time.
//
// The GEMM follows the Goto/BLIS loop nest (Goto & van de Geijn, "Anatomy of High-Performance
// Matrix Multiplication", TOMS 2008; Van Zee & van de Geijn, BLIS, TOMS 2015): a kBlockK x
// kBlockN block of B is packed once per (jc, pc) and stays in L3/L2; a kBlockM x kBlockK block
// of A is packed into panels of kTileRows rows and stays in L2; the micro-kernel keeps a
// kTileRows x (2 vectors) tile of C in registers (6 x 16 floats on AVX2: 12 of the 16 ymm
// registers, plus 2 for B and 1 for the broadcast A value) and streams a kBlockK-long panel of
// each, one broadcast and two FMAs per A value. Expected bound: FMA throughput once the tile is
// in registers (2 FMA ports: 32 flops/cycle/core on AVX2); packing costs O(mk + kn) per block.
#include "kernels/cpu/simd.hpp"

#include <algorithm>
#include <deque>
#include <mutex>

#ifndef KLAB_CPU_SIMD_CONSTANTS
#define KLAB_CPU_SIMD_CONSTANTS
namespace klab::cpu::simd {
constexpr int64_t kTileRows = 6;  // rows of the register tile; its width is 2 vectors
constexpr int64_t kBlockK =
    256;                         // depth of a packed block: an A panel (6 x 256) + a B panel fit L1
constexpr int64_t kBlockM = 96;  // rows of the packed A block (96 x 256 floats = 96 KiB: L2)
constexpr int64_t kBlockN = 2048;  // columns of the packed B block (2 MiB: L3); a multiple of
                                   // every tile width (2 x 4 .. 2 x 64 lanes)
}  // namespace klab::cpu::simd
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/simd.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/aligned_allocator.h>
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace klab::cpu::simd::HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

int64_t Lanes() { return static_cast<int64_t>(hn::Lanes(D())); }

void AddF32(const float* HWY_RESTRICT a, const float* HWY_RESTRICT b, float* HWY_RESTRICT out,
            int64_t n) {
  const D d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + 2 * N <= n;
       i += 2 * N) {  // two vectors per step: two independent load-add-store chains
    hn::StoreU(hn::Add(hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i);
    hn::StoreU(hn::Add(hn::LoadU(d, a + i + N), hn::LoadU(d, b + i + N)), d, out + i + N);
  }
  for (; i < n; ++i) out[i] = a[i] + b[i];
}

float SumF32(const float* HWY_RESTRICT x, int64_t n) {
  const D d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  // Four accumulators hide the add latency (4 cycles) and make 4N short interleaved fp32 chains.
  V s0 = hn::Zero(d), s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
  int64_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    s0 = hn::Add(s0, hn::LoadU(d, x + i));
    s1 = hn::Add(s1, hn::LoadU(d, x + i + N));
    s2 = hn::Add(s2, hn::LoadU(d, x + i + 2 * N));
    s3 = hn::Add(s3, hn::LoadU(d, x + i + 3 * N));
  }
  for (; i + N <= n; i += N) s0 = hn::Add(s0, hn::LoadU(d, x + i));
  float total = hn::GetLane(hn::SumOfLanes(d, hn::Add(hn::Add(s0, s1), hn::Add(s2, s3))));
  for (; i < n; ++i) total += x[i];
  return total;
}

int64_t TileCols() { return 2 * static_cast<int64_t>(hn::Lanes(D())); }

// A block (rows x kc, leading dimension lda) -> panels of kTileRows rows, k-major inside a panel:
// ap[panel][kk][r]. Rows past `rows` are zeros, so edge tiles run the same micro-kernel.
void PackA(const float* HWY_RESTRICT a, int64_t lda, int64_t rows, int64_t kc,
           float* HWY_RESTRICT ap) {
  for (int64_t p = 0; p < rows; p += kTileRows) {
    const int64_t h = std::min(kTileRows, rows - p);
    for (int64_t kk = 0; kk < kc; ++kk, ap += kTileRows) {
      for (int64_t r = 0; r < h; ++r) ap[r] = a[(p + r) * lda + kk];
      for (int64_t r = h; r < kTileRows; ++r) ap[r] = 0.f;
    }
  }
}

// B block (kc x cols, leading dimension ldb) -> panels of nr columns: bp[panel][kk][col], zero-
// padded to nr columns.
void PackB(const float* HWY_RESTRICT b, int64_t ldb, int64_t kc, int64_t cols, int64_t nr,
           float* HWY_RESTRICT bp) {
  for (int64_t q = 0; q < cols; q += nr) {
    const int64_t w = std::min(nr, cols - q);
    for (int64_t kk = 0; kk < kc; ++kk, bp += nr) {
      const float* src = b + kk * ldb + q;
      for (int64_t j = 0; j < w; ++j) bp[j] = src[j];
      for (int64_t j = w; j < nr; ++j) bp[j] = 0.f;
    }
  }
}

// One row of the tile into C: first k-block C = alpha acc + beta C (C not read when beta = 0),
// later k-blocks C += alpha acc.
HWY_INLINE void StoreRow(D d, float* HWY_RESTRICT c, V acc0, V acc1, V va, V vb, bool first,
                         bool read_c) {
  const size_t N = hn::Lanes(d);
  if (!read_c) {
    hn::StoreU(hn::Mul(va, acc0), d, c);
    hn::StoreU(hn::Mul(va, acc1), d, c + N);
  } else if (first) {
    hn::StoreU(hn::MulAdd(va, acc0, hn::Mul(vb, hn::LoadU(d, c))), d, c);
    hn::StoreU(hn::MulAdd(va, acc1, hn::Mul(vb, hn::LoadU(d, c + N))), d, c + N);
  } else {
    hn::StoreU(hn::MulAdd(va, acc0, hn::LoadU(d, c)), d, c);
    hn::StoreU(hn::MulAdd(va, acc1, hn::LoadU(d, c + N)), d, c + N);
  }
}

// The register tile: acc (kTileRows x 2 vectors) = A panel^T B panel over kc, then the epilogue
// into the `rows` x `cols` corner of C that is real (edge tiles go through a scratch tile).
void MicroKernel(int64_t kc, const float* HWY_RESTRICT ap, const float* HWY_RESTRICT bp,
                 float* HWY_RESTRICT c, int64_t ldc, int64_t rows, int64_t cols, float alpha,
                 float beta, bool first) {
  static_assert(kTileRows == 6, "the micro-kernel below is written out for 6 rows");
  const D d;
  const size_t N = hn::Lanes(d);
  V c00 = hn::Zero(d), c01 = hn::Zero(d), c10 = hn::Zero(d), c11 = hn::Zero(d), c20 = hn::Zero(d),
    c21 = hn::Zero(d), c30 = hn::Zero(d), c31 = hn::Zero(d), c40 = hn::Zero(d), c41 = hn::Zero(d),
    c50 = hn::Zero(d), c51 = hn::Zero(d);
  for (int64_t kk = 0; kk < kc; ++kk, ap += kTileRows, bp += 2 * N) {
    const V b0 = hn::Load(d, bp), b1 = hn::Load(d, bp + N);
    V a = hn::Set(d, ap[0]);
    c00 = hn::MulAdd(a, b0, c00);
    c01 = hn::MulAdd(a, b1, c01);
    a = hn::Set(d, ap[1]);
    c10 = hn::MulAdd(a, b0, c10);
    c11 = hn::MulAdd(a, b1, c11);
    a = hn::Set(d, ap[2]);
    c20 = hn::MulAdd(a, b0, c20);
    c21 = hn::MulAdd(a, b1, c21);
    a = hn::Set(d, ap[3]);
    c30 = hn::MulAdd(a, b0, c30);
    c31 = hn::MulAdd(a, b1, c31);
    a = hn::Set(d, ap[4]);
    c40 = hn::MulAdd(a, b0, c40);
    c41 = hn::MulAdd(a, b1, c41);
    a = hn::Set(d, ap[5]);
    c50 = hn::MulAdd(a, b0, c50);
    c51 = hn::MulAdd(a, b1, c51);
  }
  const bool read_c = !(first && beta == 0.f);
  if (rows == kTileRows && cols == static_cast<int64_t>(2 * N)) {
    const V va = hn::Set(d, alpha), vb = hn::Set(d, beta);
    StoreRow(d, c + 0 * ldc, c00, c01, va, vb, first, read_c);
    StoreRow(d, c + 1 * ldc, c10, c11, va, vb, first, read_c);
    StoreRow(d, c + 2 * ldc, c20, c21, va, vb, first, read_c);
    StoreRow(d, c + 3 * ldc, c30, c31, va, vb, first, read_c);
    StoreRow(d, c + 4 * ldc, c40, c41, va, vb, first, read_c);
    StoreRow(d, c + 5 * ldc, c50, c51, va, vb, first, read_c);
    return;
  }
  constexpr size_t kMaxCols = 2 * HWY_MAX_BYTES / sizeof(float);
  HWY_ALIGN float tile[kTileRows * kMaxCols];
  // Written out, not an array of vectors: scalable vectors (SVE, RVV) cannot be array elements.
  hn::Store(c00, d, tile + 0 * kMaxCols);
  hn::Store(c01, d, tile + 0 * kMaxCols + N);
  hn::Store(c10, d, tile + 1 * kMaxCols);
  hn::Store(c11, d, tile + 1 * kMaxCols + N);
  hn::Store(c20, d, tile + 2 * kMaxCols);
  hn::Store(c21, d, tile + 2 * kMaxCols + N);
  hn::Store(c30, d, tile + 3 * kMaxCols);
  hn::Store(c31, d, tile + 3 * kMaxCols + N);
  hn::Store(c40, d, tile + 4 * kMaxCols);
  hn::Store(c41, d, tile + 4 * kMaxCols + N);
  hn::Store(c50, d, tile + 5 * kMaxCols);
  hn::Store(c51, d, tile + 5 * kMaxCols + N);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) {
      float& out = c[r * ldc + j];
      const float t = tile[r * kMaxCols + j];
      out = !read_c ? alpha * t : first ? alpha * t + beta * out : alpha * t + out;
    }
}

void GemmBlock(const GemmArgs& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1,
               float* HWY_RESTRICT ap, float* HWY_RESTRICT bp) {
  const int64_t nr = TileCols();
  for (int64_t jc = j0; jc < j1; jc += kBlockN) {
    const int64_t nc = std::min(kBlockN, j1 - jc);
    for (int64_t pc = 0; pc < g.k; pc += kBlockK) {
      const int64_t kc = std::min(kBlockK, g.k - pc);
      PackB(g.b + pc * g.n + jc, g.n, kc, nc, nr, bp);
      for (int64_t ic = i0; ic < i1; ic += kBlockM) {
        const int64_t mc = std::min(kBlockM, i1 - ic);
        PackA(g.a + ic * g.k + pc, g.k, mc, kc, ap);
        for (int64_t jr = 0; jr < nc; jr += nr)
          for (int64_t ir = 0; ir < mc; ir += kTileRows)
            MicroKernel(kc, ap + ir * kc, bp + jr * kc, g.c + (ic + ir) * g.n + jc + jr, g.n,
                        std::min(kTileRows, mc - ir), std::min(nr, nc - jr), g.alpha, g.beta,
                        pc == 0);
      }
    }
  }
}

}  // namespace klab::cpu::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace klab::cpu::simd {

HWY_EXPORT(TargetName);
HWY_EXPORT(Lanes);
HWY_EXPORT(AddF32);
HWY_EXPORT(SumF32);
HWY_EXPORT(TileCols);
HWY_EXPORT(GemmBlock);

const char* target_name() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }
int64_t lanes() { return HWY_DYNAMIC_DISPATCH(Lanes)(); }
void add_f32(const float* a, const float* b, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(AddF32)(a, b, out, n);
}
float sum_f32(const float* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(SumF32)(x, n); }
int64_t gemm_tile_rows() { return kTileRows; }
int64_t gemm_tile_cols() { return HWY_DYNAMIC_DISPATCH(TileCols)(); }

namespace {

// Packing buffers of one thread. Worker t of every launch gets the same one back, so they are
// allocated once per worker slot (the first launch with that many threads), never per launch.
struct GemmScratch {
  hwy::AlignedFreeUniquePtr<float[]> a = hwy::AllocateAligned<float>(kBlockM * kBlockK);
  hwy::AlignedFreeUniquePtr<float[]> b = hwy::AllocateAligned<float>(kBlockK * kBlockN);
};

}  // namespace

void gemm_block(const GemmArgs& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  if (i0 >= i1 || j0 >= j1) return;
  // One scratch per thread that ever ran a block; std::thread workers end with their launch, so
  // the scratch is pooled rather than thread_local, and handed out one per running block.
  static std::mutex mutex;
  static std::deque<GemmScratch> pool;
  static std::vector<GemmScratch*> free_list;
  GemmScratch* s;
  {
    std::lock_guard lock(mutex);
    if (free_list.empty()) {
      pool.emplace_back();
      free_list.push_back(&pool.back());
    }
    s = free_list.back();
    free_list.pop_back();
  }
  HWY_DYNAMIC_DISPATCH(GemmBlock)(g, i0, i1, j0, j1, s->a.get(), s->b.get());
  std::lock_guard lock(mutex);
  free_list.push_back(s);
}

}  // namespace klab::cpu::simd
#endif  // HWY_ONCE
