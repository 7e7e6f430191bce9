#pragma once
// opaque(x): x through a volatile move, so that the compiler treats the result as unknown where
// it is taken: work derived from it is done there, not hoisted out of an enclosing loop (where its
// results would hold registers across the whole loop: attention v17's epilogue offsets).
namespace klab::device {

__device__ __forceinline__ int opaque(int x) {
  int r;
  asm volatile("mov.b32 %0, %1;" : "=r"(r) : "r"(x));
  return r;
}

}  // namespace klab::device
