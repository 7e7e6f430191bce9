#pragma once
// Shared plumbing of the elementwise rungs: binding buffers to kernel arguments per op.
#include <string>

#include "kernels/elementwise/family.hpp"
#include "kernels/elementwise/ops.cuh"
#include "klab/core/cuda_check.hpp"
#include "klab/device/dispatch.cuh"
#include "klab/device/launch.hpp"
#include "klab/device/vec.cuh"

namespace klab::elementwise {

inline constexpr int kDefaultBlock = 256;

/// Calls fn(op_functor, MapArgs<T, kIn>) for the map ops (add, saxpy, relu) in the problem's dtype.
template <class Fn>
void with_map_args(Op op, const Problem& p, Buffers& b, Fn&& fn) {
  device::dispatch_float(p.dtype, [&]<class T>() {
    const int64_t n = p.dim("n");
    switch (op) {
      case Op::add:
        fn(AddOp{}, MapArgs<T, 2>{{b.ptr<T>("a"), b.ptr<T>("b")}, b.ptr<T>("out"), n});
        break;
      case Op::saxpy:
        fn(SaxpyOp{kSaxpyAlpha}, MapArgs<T, 2>{{b.ptr<T>("x"), b.ptr<T>("y")}, b.ptr<T>("y"), n});
        break;
      case Op::relu:
        fn(ReluOp{}, MapArgs<T, 1>{{b.ptr<T>("x")}, b.ptr<T>("out"), n});
        break;
      case Op::grayscale:
        throw Error("grayscale is not a map op");
    }
  });
}

/// A GPU rung of `op`'s family; dtypes follow the family (grayscale: f32 only).
inline Variant gpu_variant(
    Op op, const std::string& rung, const std::string& summary,
    std::function<void(const Problem&, Buffers&, const LaunchArgs&)> launch) {
  Variant v = gpu_variant_of(std::string(op_family(op)) + "." + rung, summary, 70,
                             op == Op::grayscale ? std::vector<DType>{DType::f32}
                                                 : std::vector<DType>{DType::f32, DType::bf16},
                             std::move(launch));
  v.info.sweepable = true;
  return v;
}

inline cudaStream_t stream_of(const LaunchArgs& a) {
  return reinterpret_cast<cudaStream_t>(a.stream);
}

/// The grid-stride launcher (v02); the vectorised rungs fall back to it for misaligned pointers.
void launch_grid_stride(Op op, const Problem& p, Buffers& b, const LaunchArgs& args);

/// A map-op rung on Hopper's bulk copies (v05, v07): `launch(op_functor, MapArgs, stream)` runs
/// when every tensor is 16-byte aligned, v02's grid-stride path otherwise; its tile fixes the
/// block size (not sweepable).
template <class Launch>
Variant bulk_map_variant(Op op, const std::string& rung, const std::string& summary,
                         Launch launch) {
  Variant v = gpu_variant(
      op, rung, summary, [op, launch](const Problem& p, Buffers& b, const LaunchArgs& args) {
        for (const auto& t : b.tensors)
          if (!device::aligned16(t.data)) return launch_grid_stride(op, p, b, args);
        with_map_args(op, p, b, [&](auto f, auto a) { launch(f, a, stream_of(args)); });
        KLAB_CHECK_LAUNCH();
      });
  v.info.min_sm = 90;
  v.info.sweepable = false;
  return v;
}

}  // namespace klab::elementwise
