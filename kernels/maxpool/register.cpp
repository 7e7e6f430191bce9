#include "kernels/register.hpp"

namespace klab {

void register_maxpool(Registry&) {}  // the ladder lands here

}  // namespace klab
