#include "klab/core/errors.hpp"

namespace klab {
void throw_error(const char* file, int line, const std::string& what) {
  throw Error(std::string(file) + ":" + std::to_string(line) + ": " + what);
}
}  // namespace klab
