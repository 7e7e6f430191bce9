#include <unistd.h>

#include <cstdio>

#include "apps/klab/cli.hpp"

namespace klab::cli {

Progress::Progress(int total, bool quiet)
    : total_(total), tty_(isatty(STDERR_FILENO) != 0), quiet_(quiet) {}

Progress::~Progress() {
  if (tty_ && !quiet_ && done_ > 0) std::fprintf(stderr, "\r\033[K");
}

void Progress::step(const std::string& label) {
  ++done_;
  if (quiet_) return;
  if (tty_)
    std::fprintf(stderr, "\r\033[K[%d/%d] %s", done_, total_, label.c_str());
  else
    std::fprintf(stderr, "[%d/%d] %s\n", done_, total_, label.c_str());
  std::fflush(stderr);
}

}  // namespace klab::cli
