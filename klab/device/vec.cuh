#pragma once
// 16-byte vector loads and stores: one LDG.E.128 / STG.E.128 per call.
#include <cstdint>

namespace klab::device {

/// N elements of T packed in 16 bytes (4 floats, 8 bf16).
template <class T>
struct alignas(16) Vec16 {
  static constexpr int kN = 16 / sizeof(T);
  T v[kN];
};

template <class T>
__device__ __forceinline__ Vec16<T> load16(const T* p) {
  return *reinterpret_cast<const Vec16<T>*>(p);
}
/// Streaming load that skips L1 allocation: data read once.
template <class T>
__device__ __forceinline__ Vec16<T> load16_stream(const T* p) {
  const int4 raw = __ldcs(reinterpret_cast<const int4*>(p));
  return *reinterpret_cast<const Vec16<T>*>(&raw);
}
template <class T>
__device__ __forceinline__ void store16(T* p, const Vec16<T>& v) {
  *reinterpret_cast<Vec16<T>*>(p) = v;
}

__host__ __device__ inline bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

}  // namespace klab::device
