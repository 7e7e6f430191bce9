#pragma once
// Hopper (sm_90) stmatrix: a warp stores 8 x 8 matrices of 16-bit elements from registers to
// shared memory, each lane writing 16 contiguous bytes of one matrix row at an address it
// supplies (the register-to-shared inverse of ldmatrix). stmatrix_fragment.hpp holds which
// element goes where; here are the instructions.
#include <cstdint>

namespace klab::device {

/// Stores four 8 x 8 matrices of 16-bit pairs: register ri of lane l is row l / 4, columns
/// 2 (l % 4) .. + 1 of matrix i; lane l supplies `addr` (16-byte aligned, .shared window) of row
/// l % 8 of matrix l / 8.
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2,
                                            uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

/// stmatrix_x4 with each matrix transposed: register ri of lane l goes to column l / 4, rows
/// 2 (l % 4) .. + 1 of matrix i (e.g. a column-major tile from a row-major fragment).
__device__ __forceinline__ void stmatrix_x4_trans(uint32_t addr, uint32_t r0, uint32_t r1,
                                                  uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

}  // namespace klab::device
