#pragma once
// The 2D max-pool family (NCHW, k x k window, stride s, padding p) and its rung factories.
#include <cstdint>

#include "klab/harness/family.hpp"

namespace klab::maxpool {

/// Every extent of one pooling problem, output sizes included. Passed to kernels by value; the
/// constexpr members are callable on the device (nvcc --expt-relaxed-constexpr).
struct Geometry {
  int64_t n, c, h, w;  // input x: (n, c, h, w)
  int64_t k, s, p;     // window k x k, stride s, padding p on every side
  int64_t ho, wo;      // output y: (n, c, ho, wo), ho = (h + 2p - k) / s + 1

  constexpr int64_t x_numel() const { return n * c * h * w; }
  constexpr int64_t y_numel() const { return n * c * ho * wo; }
};

/// The geometry of a validated maxpool problem.
Geometry geometry(const Problem& p);

Family make_maxpool();

// One factory per rung, each defined in its own file (cpu.cpp, vNN_*.cu, baseline_cudnn.cu).
Variant cpu_v00();
Variant gpu_v01_naive();
Variant gpu_v02_vertical_strip();
Variant gpu_v03_vector_rows();
Variant gpu_baseline_cudnn();

}  // namespace klab::maxpool
