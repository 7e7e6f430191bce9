#pragma once
// The SIMD kernels of the CPU ladder (cpu04/cpu05 rungs), written once with Highway and compiled
// for every x86 (or Arm) instruction set it knows; the best one this CPU supports is chosen at
// run time (dynamic dispatch), so the binary starts on any x86-64 and uses AVX2 or AVX-512
// where present. Single-threaded: the callers partition the work.
#include <cstdint>

namespace klab::cpu::simd {

/// The instruction set chosen on this CPU ("AVX2", "AVX3", "SSE4", ...).
const char* target_name();
/// Floats per vector on this CPU.
int64_t lanes();

/// out[i] = a[i] + b[i] for i in [0, n).
void add_f32(const float* a, const float* b, float* out, int64_t n);
/// x[0] + ... + x[n-1] in fp32: four vector accumulators (4 x lanes() interleaved partial sums).
float sum_f32(const float* x, int64_t n);

/// Row-major C = alpha * A @ B + beta * C with A (m x k), B (k x n), C (m x n).
struct GemmArgs {
  const float* a;
  const float* b;
  float* c;
  int64_t m, n, k;
  float alpha, beta;
};

/// Rows and columns of the register tile (columns: a multiple of lanes()). Partitions of C
/// aligned to these keep every thread's tiles full.
int64_t gemm_tile_rows();
int64_t gemm_tile_cols();

/// C[i0:i1, j0:j1] = alpha * A[i0:i1, :] @ B[:, j0:j1] + beta * C[i0:i1, j0:j1], on the calling
/// thread: cache blocks of A and B packed into this thread's scratch (allocated on its first call,
/// then reused), a register-tile micro-kernel over them.
void gemm_block(const GemmArgs& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1);

}  // namespace klab::cpu::simd
