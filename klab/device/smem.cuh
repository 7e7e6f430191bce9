#pragma once
// Shared-memory addresses for inline PTX (cp.async, ldmatrix, mbarriers, TMA).
#include <cstdint>

namespace klab::device {

/// Shared-memory address (32-bit, .shared window) of a generic pointer into shared memory.
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/// `base` (a __shared__ array, e.g. the dynamic one) advanced to the next kAlign-byte boundary.
/// Offsetting the shared pointer, rather than rounding it through an integer, keeps what the
/// compiler knows about it: accesses through the result stay LDS/STS, not generic LD/ST.
template <uint32_t kAlign>
__device__ __forceinline__ unsigned char* align_shared(unsigned char* base) {
  static_assert((kAlign & (kAlign - 1)) == 0, "a power of two");
  return base + ((kAlign - (smem_addr(base) & (kAlign - 1))) & (kAlign - 1));
}

/// 16-byte shared-memory load and store by .shared address: LDS.128 / STS.128 whatever the
/// compiler can prove about a pointer (through an integer cast it falls back to generic LD/ST).
__device__ __forceinline__ uint4 ld_shared_v4(uint32_t addr) {
  uint4 v;
  // "memory": never moved across the barriers and waits that make the data visible.
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}
__device__ __forceinline__ void st_shared_v4(uint32_t addr, uint4 v) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
}
/// One float by .shared address (LDS).
__device__ __forceinline__ float ld_shared_f32(uint32_t addr) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr) : "memory");
  return v;
}
/// Four floats by .shared address (LDS.128; 16-byte aligned).
__device__ __forceinline__ float4 ld_shared_f32x4(uint32_t addr) {
  const uint4 v = ld_shared_v4(addr);
  return make_float4(__uint_as_float(v.x), __uint_as_float(v.y), __uint_as_float(v.z),
                     __uint_as_float(v.w));
}
__device__ __forceinline__ void st_shared_u32(uint32_t addr, uint32_t v) {
  asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}

}  // namespace klab::device
