// v16 fa3_tma_epilogue: v07 (v05's overlapped loop with FlashAttention 4's conditional rescale,
// one tile a block) with FlashAttention 3's epilogue: each consumer warpgroup rounds O / l into
// its own 64 rows of the block's Q tile (which only its own S products read, all done by then),
// in the 128-byte swizzled panels the TMA brought Q in (fa3_tile.hpp's o_stage_offset,
// conflict-free and checked on the CPU), and one thread stores them by TMA, one 64-row box a
// panel (fa3_kernel.cuh's store_rows_tma).
// Why: at causal 4k, the one D = 128 causal headline shape where v07 does not hold 1.00x cuDNN by
// median, Nsight (2026-12-03_262879f_attention_v13) showed v07's O stores at 7.60 sectors a
// request (kD / 2 4-byte stores a thread from the accumulators' layout) and 1.56x cuDNN's L2
// write sectors; a tile's epilogue runs with the warpgroup off the tensor pipe, and the shorter
// the tiles (16.5 key blocks on average at 4k) the more it weighs.
// Prediction: see the worklog.
// Requirements: v07's (sm_90a; D in {64, 128, 256}; 16-byte aligned Q, K, V and O), bf16 and f16.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>

#include "kernels/attention/fa3_kernel.cuh"
#include "kernels/attention/fa3_overlap.cuh"
#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {

constexpr const char* kName = "attention.v16";

template <class C, class T, int kD>
__global__ void __launch_bounds__(C::kThreads, 1)
    v16_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
               const __grid_constant__ CUtensorMap v_map, const __grid_constant__ CUtensorMap o_map,
               T* __restrict__ o, float* __restrict__ lse, Geometry g) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // wgmma and setmaxnreg are sm_90a-only
  fa3::run_block<C>(
      &q_map, &k_map, &v_map, g,
      [&](unsigned char* smem, const fa3::Barriers<C::kStages>& bars, const fa3::TileOf& t,
          int wg) {
        fa3::consume_one_tile<C, T, kD, fa3::SoftmaxOptions<0, true>, /*TMA store of O*/ true>(
            smem, bars, t, wg, o, lse, g, &o_map);
      });
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave O unwritten
#endif
}

PreparedLaunch prepare_v16(const Problem& p, Buffers& b) {
  const Dims s = dims_of(p);
  return dispatch_tiled(
      kName, p, b, [&]<class T, int kD>(const Geometry& g, int64_t batch, const Tensors<T>& t) {
        using C = fa3::OverlapConfig<kD>;
        static_assert(C::kBlockM == 64 * C::kConsumerWarpgroups);
        const fa3::TensorMaps m = fa3::tensor_maps<C>(kName, t, s, batch);
        const CUtensorMap om = fa3::o_store_map<C>(t, s, batch);
        constexpr auto kernel = v16_kernel<C, T, kD>;
        device::opt_in_dynamic_smem<kernel>(C::kSmemBytes);
        const dim3 grid = tiled_grid(g, batch, C::kBlockM);
        T* out = t.o;
        float* lse = t.lse;
        return PreparedLaunch([=](Stream stream) {
          kernel<<<grid, C::kThreads, C::kSmemBytes, reinterpret_cast<cudaStream_t>(stream)>>>(
              m.q, m.k, m.v, om, out, lse, g);
          KLAB_CHECK_LAUNCH();
        });
      });
}

}  // namespace

Variant gpu_v16_fa3_tma_epilogue() {
  Variant v = tiled_variant<prepare_v16>(
      "attention.v16_fa3_tma_epilogue",
      "v07 with FA3's epilogue: O rounded into each consumer warpgroup's rows of Q's tile and "
      "stored by TMA, one 64-row box a panel",
      90);
  v.can_implement = [](const Problem& p) { return fa3::can_implement(kName, p); };
  return v;
}

}  // namespace klab::attention
