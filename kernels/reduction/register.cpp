// The reduction ladders, in order: reduce_sum, then softmax. Adding a rung: one file plus one
// line here.
#include "kernels/cpu/ladder.hpp"
#include "kernels/reduction/family.hpp"
#include "kernels/register.hpp"

namespace klab {

void register_reduction(Registry& r) {
  using namespace reduction;

  Family sum = make_reduce_sum();
  sum.ladder = {
    sum_v00_cpu(),
#if KLAB_HAS_CUDA
    sum_v01_smem_tree(),
    sum_v02_warp_shuffle(),
    sum_v03_vectorized(),
    sum_baseline_cub(),
#endif
  };
  const std::vector<Variant> cpu_rungs = cpu::ladder(sum.name);  // after v00, before the GPU rungs
  sum.ladder.insert(sum.ladder.begin() + 1, cpu_rungs.begin(), cpu_rungs.end());
  r.add(std::move(sum));

  Family softmax = make_softmax();
  softmax.ladder = {
    softmax_v00_cpu(),
#if KLAB_HAS_CUDA
    softmax_v01_naive(),
    softmax_v02_block_row(),
    softmax_v03_online(),
    softmax_v04_registers(),
    softmax_v05_warp_rows(),
    softmax_v06_vector_spans(),
    softmax_v07_staged_rows(),
#if KLAB_HAS_CUDNN
    softmax_baseline_cudnn(),
#endif
#endif
  };
  r.add(std::move(softmax));
}

}  // namespace klab
