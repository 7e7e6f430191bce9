// v08 fa4_poly_exp2 (sm_90a): v07 with FlashAttention 4's second softmax idea, part of the
// exponentials off the multi-function unit. The MUFU computes 16 exp2 a clock per SM; a round of
// one warpgroup at D = 64 (64 rows x 128 keys) asks it for 8192 of them, 512 clocks, as long as
// the round's two GEMMs take on the tensor pipe at its full rate (64 x 128 x 64 x 2 MACs, ~512
// clocks): with two warpgroups taking turns, the MUFU is as busy as the tensor pipe. Here every
// eighth term of each row (kPolyEvery = 8) is device::ex2_poly (fast_exp.hpp): a degree-5
// polynomial on the FMA pipe and the exponent added by integer arithmetic, about a dozen
// instructions against the MUFU's one, as accurate as ex2.approx (checked on the CPU). An eighth
// moves 64 of a round's 512 MUFU clocks to ~90 more issue cycles on each of the four schedulers.
// Changes from v07: the softmax's options (SoftmaxOptions<8, true>).
// Expected: a gain at D = 64 only if the MUFU, not the issue slots, bounds its rounds; at D = 128
// and 256 (twice and four times the GEMM time per exponential) a small loss. Prediction:
// docs/worklogs/attention.md.
// Requirements: v05's.
#include "kernels/attention/fa3_kernel.cuh"
#include "kernels/attention/fa3_overlap.cuh"
#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {
struct V08Name {
  static constexpr const char* kName = "attention.v08";
};
}  // namespace

Variant gpu_v08_fa4_poly_exp2() {
  return fa3::variant<fa3::OverlapRung<V08Name, fa3::SoftmaxOptions<8, true>>>(
      "attention.v08_fa4_poly_exp2",
      "v07 with FA4's emulated exponential: every eighth term of a row by a degree-5 polynomial "
      "on the FMA pipe instead of the MUFU");
}

}  // namespace klab::attention
