#include "kernels/cpu/threads.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "klab/core/errors.hpp"

namespace klab::cpu {

namespace {

std::atomic<int> g_override{0};

// $KLAB_CPU_THREADS, else the hardware's count; read once.
int default_thread_count() {
  static const int n = [] {
    if (const char* env = std::getenv("KLAB_CPU_THREADS"); env && *env) {
      const std::string_view s(env);
      int v = 0;
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc() || end != s.data() + s.size() || v < 1)
        return -1;  // reported by thread_count(), where throwing is allowed
      return v;
    }
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }();
  return n;
}

}  // namespace

int thread_count() {
  if (const int o = g_override.load(std::memory_order_relaxed); o > 0) return o;
  const int d = default_thread_count();
  if (d < 1)
    throw UsageError("KLAB_CPU_THREADS must be a positive integer, got '" +
                     std::string(std::getenv("KLAB_CPU_THREADS")) + "'");
  return d;
}

int set_thread_count(int threads) {
  KLAB_CHECK(threads >= 0, "thread count " + std::to_string(threads));
  return g_override.exchange(threads);
}

int threads_for(int64_t work, int64_t min_per_thread) {
  const int64_t useful = std::max<int64_t>(1, work / std::max<int64_t>(1, min_per_thread));
  return static_cast<int>(std::min<int64_t>(thread_count(), useful));
}

void run_threads(int threads, const std::function<void(int t)>& fn) {
  if (threads <= 1) {
    fn(0);
    return;
  }
  std::exception_ptr error;
  std::mutex error_mutex;
  auto guarded = [&](int t) {
    try {
      fn(t);
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads - 1));
  for (int t = 1; t < threads; ++t) pool.emplace_back(guarded, t);
  guarded(0);
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

Range split(int64_t n, int parts, int t, int64_t align) {
  // Whole units of `align`, spread as evenly as possible: the first `extra` parts get one more.
  const int64_t units = (n + align - 1) / align;
  const int64_t base = units / parts, extra = units % parts;
  const int64_t u0 = t * base + std::min<int64_t>(t, extra);
  const int64_t u1 = u0 + base + (t < extra ? 1 : 0);
  return {std::min(n, u0 * align), std::min(n, u1 * align)};
}

}  // namespace klab::cpu
