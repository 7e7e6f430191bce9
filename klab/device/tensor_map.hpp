#pragma once
// Host side of Hopper tensor (TMA) copies: building a CUtensorMap. The driver function
// cuTensorMapEncodeTiled is looked up through the runtime (cudaGetDriverEntryPointByVersion), so
// nothing links libcuda and binaries still start on machines without a driver.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "klab/core/cuda_check.hpp"
#include "klab/core/errors.hpp"

namespace klab::device {

inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    KLAB_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000,
                                                     cudaEnableDefault, &q));
    KLAB_CHECK(q == cudaDriverEntryPointSuccess && p != nullptr,
               "the driver has no cuTensorMapEncodeTiled");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

/// The tensor-map element type of T (float, __nv_bfloat16 or __half).
template <class T>
constexpr CUtensorMapDataType tma_data_type() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, __nv_bfloat16> ||
                std::is_same_v<T, __half>);
  if constexpr (std::is_same_v<T, float>) return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  if constexpr (std::is_same_v<T, __half>) return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
}

/// A 2D row-major tensor (outer x inner elements, rows `row_bytes` apart) read or written in
/// boxes of box_outer x box_inner elements. Requirements (checked by the driver): base 16-byte
/// aligned, row_bytes a multiple of 16, box_inner * element size <= the swizzle span.
/// `promotion`: how much L2 fetches from DRAM around each of the box's missing sectors.
inline CUtensorMap tensor_map_2d(
    const void* base, CUtensorMapDataType type, uint64_t inner, uint64_t outer, uint64_t row_bytes,
    uint32_t box_inner, uint32_t box_outer, CUtensorMapSwizzle swizzle,
    CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
  CUtensorMap map{};
  const cuuint64_t dims[2] = {inner, outer};
  const cuuint64_t strides[1] = {row_bytes};
  const cuuint32_t box[2] = {box_inner, box_outer};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = tensor_map_encoder()(&map, type, 2, const_cast<void*>(base), dims, strides,
                                          box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                          promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  KLAB_CHECK(r == CUDA_SUCCESS,
             "cuTensorMapEncodeTiled failed with CUresult " + std::to_string(int(r)));
  return map;
}

/// A 4-D tensor (dims innermost first; strides[i] bytes between steps of dimension i + 1) read
/// in boxes of box[0] x .. x box[3] elements, laid out in shared memory innermost first.
/// Requirements (checked by the driver): base 16-byte aligned, strides multiples of 16, box[0] *
/// element size <= the swizzle span.
inline CUtensorMap tensor_map_4d(const void* base, CUtensorMapDataType type,
                                 const uint64_t (&dims)[4], const uint64_t (&strides)[3],
                                 const uint32_t (&box)[4], CUtensorMapSwizzle swizzle) {
  CUtensorMap map{};
  const cuuint64_t d[4] = {dims[0], dims[1], dims[2], dims[3]};
  const cuuint64_t s[3] = {strides[0], strides[1], strides[2]};
  const cuuint32_t b[4] = {box[0], box[1], box[2], box[3]};
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  const CUresult r = tensor_map_encoder()(
      &map, type, 4, const_cast<void*>(base), d, s, b, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
      swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  KLAB_CHECK(r == CUDA_SUCCESS,
             "cuTensorMapEncodeTiled (4-D) failed with CUresult " + std::to_string(int(r)));
  return map;
}

}  // namespace klab::device
