#pragma once
// The one-tile-a-block FA3 kernel with FlashAttention 3's epilogue (v16; v19, v20, v21, v25 and
// v26 on it): v07's overlapped loop with FlashAttention 4's conditional rescale, each consumer
// warpgroup rounding O / l into its own 64 rows of the block's Q tile and one thread storing them
// by TMA (fa3_kernel.cuh's store_rows_tma). kTrimDiagonal: consume_tile's (v19). kOnLine (v20,
// v21, v26): a block's tile is its grid index's place on the persistent rungs' line (sections of
// (batch, head) pairs whose K and V fit a share of the L2, half for v20 and v26 and an eighth for
// v21, longest tiles first inside each; the short section first: fa3_schedule.hpp's
// ShortFirstLine), not (query tile, head, batch).
#include <string>
#include <utility>

#include "kernels/attention/fa3_kernel.cuh"
#include "kernels/attention/fa3_overlap.cuh"
#include "kernels/attention/family.hpp"

namespace klab::attention::fa3 {

template <class C, class T, int kD, bool kTrimDiagonal, bool kOnLine, class Opt>
__global__ void __launch_bounds__(C::kThreads, 1)
    tma_epilogue_kernel(const __grid_constant__ CUtensorMap q_map,
                        const __grid_constant__ CUtensorMap k_map,
                        const __grid_constant__ CUtensorMap v_map,
                        const __grid_constant__ CUtensorMap o_map, T* __restrict__ o,
                        float* __restrict__ lse, Geometry g, ShortFirstLine line) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // wgmma and setmaxnreg are sm_90a-only
  run_block_on<C>(
      &q_map, &k_map, &v_map,
      [&] {
        if constexpr (kOnLine)
          return tile_on_line<C::kBlockM, C::kBlockN>(g, line);
        else
          return tile_of<C::kBlockM, C::kBlockN>(g);
      },
      [&](unsigned char* smem, const Barriers<C::kStages>& bars, const TileOf& t, int wg) {
        consume_one_tile<C, T, kD, Opt, /*TMA store of O*/ true, kTrimDiagonal>(smem, bars, t, wg,
                                                                                o, lse, g, &o_map);
      });
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave O unwritten
#endif
}

/// The launch of rung `name` (v16, v19, v20, v21, v25, v26) on problem p: OverlapConfig's tiles, one
/// block a query tile (longest first when causal; with kLineL2Share > 0, causal problems in the
/// order of a line whose sections fit 1 / kLineL2Share of the L2), O's store map beside Q's, K's
/// and V's; the softmax's options Opt (the lazy rescale; v25 and v26 without the block's max).
template <bool kTrimDiagonal, int kLineL2Share = 0, class Opt = SoftmaxOptions<0, true>>
PreparedLaunch prepare_tma_epilogue(const char* name, const Problem& p, Buffers& b) {
  const Dims s = dims_of(p);
  return dispatch_tiled(
      name, p, b, [&]<class T, int kD>(const Geometry& g, int64_t batch, const Tensors<T>& t) {
        using C = OverlapConfig<kD>;
        static_assert(C::kBlockM == 64 * C::kConsumerWarpgroups);
        const TensorMaps m = tensor_maps<C>(name, t, s, batch);
        const CUtensorMap om = o_store_map<C>(t, s, batch);
        if constexpr (kLineL2Share > 0)
          if (g.causal)
            return prepare_tiled_kernel<C, tma_epilogue_kernel<C, T, kD, kTrimDiagonal, true, Opt>>(
                g, batch, m.q, m.k, m.v, om, t.o, t.lse, g,
                ShortFirstLine{line_of<C>(s, int64_t(sizeof(T)), kLineL2Share)});
        return prepare_tiled_kernel<C, tma_epilogue_kernel<C, T, kD, kTrimDiagonal, false, Opt>>(
            g, batch, m.q, m.k, m.v, om, t.o, t.lse, g, ShortFirstLine{});  // line unused
      });
}

/// prepare_tma_epilogue for rung kName (a namespace-scope string: the template argument).
template <bool kTrimDiagonal, int kLineL2Share, const char* kName, class Opt>
PreparedLaunch prepare_tma_epilogue_rung(const Problem& p, Buffers& b) {
  return prepare_tma_epilogue<kTrimDiagonal, kLineL2Share, Opt>(kName, p, b);
}

/// The Variant of a rung on this kernel (v16, v19, v20, v21, v25, v26): id, summary, sm_90,
/// FA3's limits.
template <bool kTrimDiagonal, int kLineL2Share, const char* kName,
          class Opt = SoftmaxOptions<0, true>>
Variant tma_epilogue_variant(std::string id, std::string summary) {
  Variant v = tiled_variant<prepare_tma_epilogue_rung<kTrimDiagonal, kLineL2Share, kName, Opt>>(
      std::move(id), std::move(summary), 90);
  v.can_implement = [](const Problem& p) { return can_implement(kName, p); };
  return v;
}

}  // namespace klab::attention::fa3
