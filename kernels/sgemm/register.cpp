#include "kernels/register.hpp"

namespace klab {

void register_sgemm(Registry&) {}  // the ladder lands here

}  // namespace klab
