// v24 wgmma_aligned_b (sm_90a): v14's kernel (v18's 128 x 256 entry) on B copied into rows of
// whole 128-byte lines where N's rows are not.
// Why: at 6000 x 7000 x 5000, the grid's weakest shape (v18 0.90x cuBLASLt on the H200, 0.81x on
// an H100), the cost is N = 7000 alone: B's rows of 14000 bytes start 48 bytes past a 128-byte
// line, and each 128-byte row of a TMA box of B (its panels are MN-major: a box row is 64
// columns of one k-row) then spans two lines. v14 goes from 1.006x cuBLASLt at 6016 x 7168 x
// 5056 to 0.843x at 6016 x 7000 x 5056, v15's multicast (B's loads halved) gives back half of
// it, and neither C's TMA stores (v12, v13: refuted) nor A's rows (16 bytes off, K-major boxes:
// 1.000x at 6016 x 7168 x 5000) are the cost (2026-12-04_72e0ad3_hgemm_v21_ragged,
// _44c7838_hgemm_v18_entries; docs/worklogs/gemm.md).
// What changes: where n is not a multiple of 64, a copy kernel first writes B's k rows into the
// workspace with a pitch of n rounded up to 64 elements (a read and a write of B, streamed:
// 70 MB each way at 6000 x 7000 x 5000, ~15 us at the H200's copy rate), and v14's kernel reads
// B through a tensor map of that pitch (GemmArgs::ldb; the map's width stays n, so the padding
// columns are never read: the TMA fills a box's columns past n with zeros). Elsewhere v14's
// kernel as it is. C is stored as before, through its own rows (the TMA store is not the cost).
// Expected bottleneck: the tensor pipe, as at the aligned neighbours, plus the copy's DRAM time.
// Prediction (written before it ran), bf16, paired with cuBLASLt, beside v15 and v18: on an H100,
// 6000 x 7000 x 5000 at 0.92-1.00x cuBLASLt (v18, on v15's clusters there: 0.81x), 1.10-1.20x
// v15's speed; on the H200 0.95-1.02x (v18 0.90x). At shapes whose N is a multiple of 64 v24 is
// v18's 128x256_k1 entry (the same kernel, no copy): within noise of it.
// Measured on an H100 (2026-12-06_5f7c367_hgemm_v24; docs/worklogs/gemm.md): 0.828x cuBLASLt at
// 6000 x 7000 x 5000 against v15's 0.781x (+6%), refuted in size; v14's kernel from 0.548x to
// 0.828x with B copied. A's rows copied too (2026-12-06_8c0ee88_hgemm_v24_a) cost 6% where only
// K is ragged: A's K-major rows are not the cost, so v24 copies B's alone.
// Requirements: v14's (sm_90a; 225 KiB of dynamic shared memory; the TMA path needs k % 8 == 0,
// n % 8 == 0 and 16-byte aligned pointers, other problems run v05's kernel with element copies);
// a workspace of k x v24_ldb(n) elements where n % 64 != 0.
#include "kernels/hgemm/tune.hpp"
#include "kernels/hgemm/wgmma_mainloop_sm90.cuh"

namespace klab::hgemm {

namespace {

/// B's rows (k of them, `vecs` 16-byte vectors each, contiguous) into rows `pitch` vectors
/// apart: a block a row at a time, its threads along the row.
__global__ void __launch_bounds__(256)
    copy_rows_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, int64_t rows,
                     int64_t vecs, int64_t pitch) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x)
    for (int64_t c = threadIdx.x; c < vecs; c += blockDim.x) dst[r * pitch + c] = src[r * vecs + c];
}

}  // namespace

void launch_v24(const Problem& p, Buffers& b, const LaunchArgs& args) {
  with_gemm_args(p, b, [&]<class T>(GemmArgs<T> g) {
    const cudaStream_t stream = stream_of(args);
    if (!g.vec16()) return launch_multistage<WgmmaFallback, T, false>(g, stream);
    if (v24_copies_b(g.n)) {  // B's rows are not whole 128-byte lines: copy them into some
      T* rows = static_cast<T*>(b.workspace);
      const int64_t vecs = g.n / 8, pitch = v24_ldb(g.n) / 8;
      const int blocks = static_cast<int>(std::min<int64_t>(g.k, 16 * device_info().sm_count));
      copy_rows_kernel<<<blocks, 256, 0, stream>>>(
          reinterpret_cast<const uint4*>(g.b), reinterpret_cast<uint4*>(rows), g.k, vecs, pitch);
      KLAB_CHECK_LAUNCH();
      g.b = rows;
      g.ldb = static_cast<int>(v24_ldb(g.n));
    }
    launch_v14_tiles(g, 256, 1, nullptr, stream);
  });
}

Variant gpu_v24_wgmma_aligned_b() {
  Variant v = gpu_variant(
      "v24_wgmma_aligned_b",
      "v14's kernel (v18's 128x256 entry) on B copied into rows of whole 128-byte lines where "
      "N's rows are not (a streamed copy into the workspace, then the TMA reads whole lines)",
      launch_v24);
  v.info.min_sm = 90;
  v.can_implement = [](const Problem& p) { return v18_config_can_implement(17, p); };
  v.workspace_bytes = v24_workspace_bytes;
  return v;
}

}  // namespace klab::hgemm
