// The decode_attention ladder, in order. Adding a rung: one file plus one line here. GPU rungs
// join once they pass the GPU tests on a device; v01_block_per_head.cu is built and waits for
// that.
#include "kernels/decode_attention/family.hpp"
#include "kernels/register.hpp"

namespace klab {

void register_decode_attention(Registry& r) {
  using namespace decode_attention;
  Family f = make_decode_attention();
  f.ladder = {
    cpu_v00(),
#if KLAB_HAS_CUDA
    gpu_v01_block_per_head(),
    gpu_v02_split_kv(),
    gpu_v03_gqa_mma(),
    gpu_v04_persistent_balanced(),
#endif
  };
  r.add(std::move(f));
}

}  // namespace klab
