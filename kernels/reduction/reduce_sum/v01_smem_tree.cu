// v01 shared-memory tree: one value per thread; each block sums its 256 values by a tree in
// shared memory (sequential addressing: at each level thread t adds s[t + stride] to s[t], a
// conflict-free access, with a barrier per level) and writes one partial sum. The partials are
// reduced by the same kernel again, pass after pass, until one value is left, which the last
// pass writes to the output: n = 2^28 takes 4 passes (2^20, 2^12, 16 partials, then 1).
// Deterministic: no atomics, fixed order.
// Adds: nothing — the textbook starting point (a balanced tree: log2(256) = 8 levels per pass).
// Expected bottleneck: memory parallelism. A thread loads 4 bytes (f32) or 2 (bf16) and then
// spends 8 barrier-separated levels on arithmetic, so an SM has only ~8 KiB of loads in flight
// (2048 threads x 4 B) where HBM3e needs several times that. Predicted 25-35% of read (f32),
// about half that in bf16.
// Requirements: none. Workspace: the partials of every pass but the last (ping-pong, fp32).
#include "kernels/reduction/reduce_sum/rung.cuh"

namespace klab::reduction {

namespace {

constexpr int kBlock = 256;

template <class T>
__global__ void __launch_bounds__(kBlock)
    smem_tree_sum(const T* __restrict__ x, int64_t n, float* __restrict__ partial) {
  __shared__ float s[kBlock];
  const int t = threadIdx.x;
  const int64_t i = int64_t(blockIdx.x) * kBlock + t;
  s[t] = i < n ? device::to_float(x[i]) : 0.f;
  __syncthreads();
#pragma unroll
  for (int stride = kBlock / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = s[0];
}

/// Partial counts of the passes: ceil(n / 256), then ceil(that / 256), ... down to 1.
std::vector<int64_t> pass_counts(int64_t n) {
  std::vector<int64_t> c;
  do {
    n = device::ceil_div(n, kBlock);
    c.push_back(n);
  } while (n > 1);
  return c;
}

// Even passes write into buffer A (sized for pass 0, the largest), odd ones into B (pass 1);
// the last pass writes the output instead.
size_t workspace_bytes(const Problem& p) {
  const auto c = pass_counts(p.dim("n"));
  if (c.size() == 1) return 0;
  return sizeof(float) * static_cast<size_t>(c[0] + (c.size() > 2 ? c[1] : 0));
}

}  // namespace

Variant sum_v01_smem_tree() {
  Variant v = sum_variant(
      "v01_smem_tree", "one value per thread, shared-memory tree, pass per level of partials",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        const int64_t n = p.dim("n");
        const auto counts = pass_counts(n);
        float* out = b.ptr<float>("sum");
        float* ws = static_cast<float*>(b.workspace);
        float* buf[2] = {ws, ws ? ws + counts[0] : nullptr};
        with_sum_input(p, b, [&](auto x) {
          const size_t last = counts.size() - 1;
          float* dst = last == 0 ? out : buf[0];
          smem_tree_sum<<<static_cast<unsigned>(counts[0]), kBlock, 0, stream_of(args)>>>(x, n,
                                                                                          dst);
          KLAB_CHECK_LAUNCH();
          for (size_t k = 1; k <= last; ++k) {
            const float* src = buf[(k - 1) % 2];
            dst = k == last ? out : buf[k % 2];
            smem_tree_sum<<<static_cast<unsigned>(counts[k]), kBlock, 0, stream_of(args)>>>(
                src, counts[k - 1], dst);
            KLAB_CHECK_LAUNCH();
          }
        });
      });
  v.workspace_bytes = workspace_bytes;
  v.can_implement = [](const Problem& p) {
    if (device::ceil_div(p.dim("n"), kBlock) > 2147483647)
      return Status::no("more than 2^31 - 1 blocks in the first pass");
    return Status::yes();
  };
  return v;
}

}  // namespace klab::reduction
