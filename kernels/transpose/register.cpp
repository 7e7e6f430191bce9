#include "kernels/register.hpp"

namespace klab {

void register_transpose(Registry&) {}  // the ladder lands here

}  // namespace klab
