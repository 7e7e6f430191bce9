#pragma once
// Error types and checks. Library code throws; only the CLI turns errors into exit codes.
#include <stdexcept>
#include <string>

namespace klab {

/// A bad request from the user (unknown name, malformed shape, ...): one line, exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A failed CUDA/cuBLAS call or a broken internal invariant: carries file, line and call text.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_error(const char* file, int line, const std::string& what);

}  // namespace klab

/// Internal invariant: throws klab::Error with the location and the condition text.
#define KLAB_CHECK(cond, msg)                                                              \
  do {                                                                                     \
    if (!(cond)) ::klab::throw_error(__FILE__, __LINE__, std::string(#cond ": ") + (msg)); \
  } while (0)
