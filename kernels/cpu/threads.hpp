#pragma once
// How many threads the CPU rungs use (one process-wide setting), and the std::thread partition
// the cpu02/cpu05 rungs share.
#include <cstdint>
#include <functional>

namespace klab::cpu {

/// Threads a CPU rung uses: the override (set_thread_count), else $KLAB_CPU_THREADS, else
/// std::thread::hardware_concurrency(). Throws UsageError when $KLAB_CPU_THREADS is not a
/// positive integer.
int thread_count();

/// Overrides thread_count() for the whole process (0 removes the override); returns the previous
/// override (0 if there was none). Not for use while a rung runs.
int set_thread_count(int threads);

/// Sets thread_count() for a scope (the scaling command, tests).
class ScopedThreadCount {
 public:
  explicit ScopedThreadCount(int threads) : previous_(set_thread_count(threads)) {}
  ~ScopedThreadCount() { set_thread_count(previous_); }
  ScopedThreadCount(const ScopedThreadCount&) = delete;
  ScopedThreadCount& operator=(const ScopedThreadCount&) = delete;

 private:
  int previous_;
};

/// Threads worth starting for `work` items when each thread should get at least `min_per_thread`:
/// between 1 and thread_count().
int threads_for(int64_t work, int64_t min_per_thread);

/// Runs fn(t) for t in [0, threads) on `threads` std::threads (the caller runs t = 0) and joins
/// them; an exception thrown by any of them is rethrown here after the join.
void run_threads(int threads, const std::function<void(int t)>& fn);

/// [begin, end) of part t when [0, n) is cut into `parts` contiguous ranges whose boundaries are
/// multiples of `align` (the last range takes the remainder).
struct Range {
  int64_t begin, end;
};
Range split(int64_t n, int parts, int t, int64_t align = 1);

}  // namespace klab::cpu
