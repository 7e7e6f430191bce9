#include "kernels/register.hpp"

namespace klab {

void register_reduction(Registry&) {}  // the ladder lands here

}  // namespace klab
