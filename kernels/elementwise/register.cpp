// The elementwise ladders, in order. Adding a rung: one file plus one line per family here.
#include "kernels/cpu/ladder.hpp"
#include "kernels/elementwise/family.hpp"
#include "kernels/register.hpp"

namespace klab {

void register_elementwise(Registry& r) {
  using namespace elementwise;
  const std::pair<Family (*)(), Op> families[] = {{make_vector_add, Op::add},
                                                  {make_saxpy, Op::saxpy},
                                                  {make_relu, Op::relu},
                                                  {make_grayscale, Op::grayscale}};
  for (const auto& [make, op] : families) {
    Family f = make();
    f.ladder = {cpu_v00(op)};
#if KLAB_HAS_CUDA
    f.ladder.push_back(gpu_v01_naive(op));
    f.ladder.push_back(gpu_v02_grid_stride(op));
    f.ladder.push_back(gpu_v03_vectorized(op));
    f.ladder.push_back(gpu_v04_vectorized_ilp(op));
    if (op != Op::grayscale) f.ladder.push_back(gpu_v05_bulk_copy_sm90(op));   // map ops only
    if (op == Op::grayscale) f.ladder.push_back(gpu_v06_gray_bulk_sm90());     // grayscale only
    if (op != Op::grayscale) f.ladder.push_back(gpu_v07_bulk_tiles_sm90(op));  // map ops only
    f.ladder.push_back(gpu_baseline_cub(op));
#endif
    const std::vector<Variant> cpu_rungs = cpu::ladder(f.name);  // after v00, before the GPU rungs
    f.ladder.insert(f.ladder.begin() + 1, cpu_rungs.begin(), cpu_rungs.end());
    r.add(std::move(f));
  }
}

}  // namespace klab
