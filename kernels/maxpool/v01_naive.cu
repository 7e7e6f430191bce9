// v01 naive: one thread per output element, ceil(n*c*ho*wo / block) blocks.
// Adds: nothing — the first correct kernel. A warp covers 32 adjacent outputs of one row, so each
// of its k*k loads touches a contiguous (strided by s) run of one input row: coalesced enough.
// Expected bottleneck: DRAM bandwidth, short of the copy ceiling because each thread has only k
// loads of one row in flight at a time, pays two 64-bit divisions to find its output, and, for
// overlapping windows (k > s), re-reads shared input rows and columns through L1/L2 (k=3, s=2:
// 9 loads per output, which owns only s*s = 4 input cells). Predicted ~70-80% of the copy
// ceiling for 2x2/2, less for 3x3/2.
// Requirements: n*c*ho*wo < 2^31 (one thread per output must fit in the grid).
#include <limits>

#include "kernels/maxpool/rung.cuh"

namespace klab::maxpool {

namespace {

template <class T>
__global__ void naive_pool(const T* __restrict__ x, T* __restrict__ y, Geometry g) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= g.y_numel()) return;
  const int64_t ow = i % g.wo, t = i / g.wo;
  const int64_t oh = t % g.ho, plane = t / g.ho;
  const T* xp = x + plane * g.h * g.w;
  float m = -INFINITY;  // padded cells are skipped, i.e. behave as -inf
  for (int64_t kh = 0; kh < g.k; ++kh) {
    const int64_t ih = oh * g.s - g.p + kh;
    if (ih < 0 || ih >= g.h) continue;
    for (int64_t kw = 0; kw < g.k; ++kw) {
      const int64_t iw = ow * g.s - g.p + kw;
      if (iw >= 0 && iw < g.w) m = fmaxf(m, device::to_float(xp[ih * g.w + iw]));
    }
  }
  y[i] = device::from_float<T>(m);
}

}  // namespace

Variant gpu_v01_naive() {
  Variant v = gpu_variant(
      "v01_naive", "one thread per output element",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const int block = device::block_or(args.block_threads, kDefaultBlock);
        const Geometry g = geometry(p);
        device::dispatch_float(p.dtype, [&]<class T>() {
          naive_pool<<<device::grid_1d(g.y_numel(), block), block, 0, stream_of(args)>>>(
              b.ptr<const T>("x"), b.ptr<T>("y"), g);
        });
        KLAB_CHECK_LAUNCH();
      });
  v.can_implement = [](const Problem& p) {
    if (geometry(p).y_numel() > std::numeric_limits<int32_t>::max())
      return Status::no("v01_naive launches one thread per output: needs n*c*ho*wo < 2^31");
    return Status::yes();
  };
  return v;
}

}  // namespace klab::maxpool
