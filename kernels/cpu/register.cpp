#include "kernels/register.hpp"

namespace klab {

void register_cpu_ladders(Registry&) {}  // the CPU ladder lands here

}  // namespace klab
