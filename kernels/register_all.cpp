#include "kernels/register.hpp"

namespace klab {

Registry& registry() {
  static Registry r = [] {
    Registry reg;
    register_elementwise(reg);
    register_maxpool(reg);
    register_transpose(reg);
    register_reduction(reg);
    register_sgemm(reg);
    register_hgemm(reg);
    return reg;
  }();
  return r;
}

}  // namespace klab
