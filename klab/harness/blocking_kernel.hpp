#pragma once
// Holds a stream while a sample's launches are enqueued, so that no host work lands inside the
// timed region (nvbench's technique). CUDA builds only.
#include <cuda_runtime_api.h>

namespace klab {

/// A one-thread kernel that spins until `release()` (or a timeout) is enqueued ahead of the
/// sample's start event: start event, launches and stop event then run back to back.
class StreamBlocker {
 public:
  StreamBlocker();
  ~StreamBlocker();
  StreamBlocker(const StreamBlocker&) = delete;
  StreamBlocker& operator=(const StreamBlocker&) = delete;

  /// Enqueues the spinning kernel on `stream`.
  void block(cudaStream_t stream);
  /// Lets it finish. After the stream has passed it: false when it timed out instead (something
  /// enqueued behind it waited on the host: a launch that synchronises).
  void release();
  bool timed_out() const;

 private:
  volatile int* flag_ = nullptr;       // host-mapped: 1 = release
  volatile int* timed_out_ = nullptr;  // host-mapped: set by the kernel on timeout
};

}  // namespace klab
