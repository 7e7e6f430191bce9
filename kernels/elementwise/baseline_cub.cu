// Baseline: CUB's cub::DeviceTransform (CCCL, shipped with the CUDA toolkit) — the library call
// a CUDA programmer would reach for instead of writing the kernel. It picks its own vector width,
// prefetching and grid.
#include <cub/device/device_transform.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "kernels/elementwise/rung.cuh"

namespace klab::elementwise {

namespace {

template <class T, class Op>
struct Lanewise1 {
  Op op;
  __device__ T operator()(T x) const { return device::from_float<T>(op(device::to_float(x))); }
};
template <class T, class Op>
struct Lanewise2 {
  Op op;
  __device__ T operator()(T x, T y) const {
    return device::from_float<T>(op(device::to_float(x), device::to_float(y)));
  }
};
struct GrayAt {
  const float* rgb;
  __device__ float operator()(int64_t i) const {
    return gray(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
  }
};

}  // namespace

Variant gpu_baseline_cub(Op op) {
  Variant v = gpu_variant(
      op, "baseline_cub", "cub::DeviceTransform (CCCL)",
      [op](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const int64_t n = p.dim("n");
        if (op == Op::grayscale) {
          KLAB_CUDA_CHECK(cub::DeviceTransform::Transform(
              thrust::counting_iterator<int64_t>(0), b.ptr<float>("gray"), n,
              GrayAt{b.ptr<float>("rgb")}, stream_of(args)));
          return;
        }
        with_map_args(op, p, b, [&]<class OpT, class T, int kIn>(OpT f, MapArgs<T, kIn> a) {
          if constexpr (kIn == 1)
            KLAB_CUDA_CHECK(cub::DeviceTransform::Transform(a.in[0], a.out, n, Lanewise1<T, OpT>{f},
                                                            stream_of(args)));
          else
            KLAB_CUDA_CHECK(cub::DeviceTransform::Transform(cuda::std::make_tuple(a.in[0], a.in[1]),
                                                            a.out, n, Lanewise2<T, OpT>{f},
                                                            stream_of(args)));
        });
      });
  v.info.baseline = true;
  v.info.sweepable = false;
  return v;
}

}  // namespace klab::elementwise
