#pragma once
// Hopper (sm_90) bulk asynchronous copies on the copy engine (TMA). Loads complete on an
// mbarrier (mbarrier_sm90.cuh) with the bytes they deliver; stores join the issuing thread's
// bulk groups.
// 1D form: cp.async.bulk moves a contiguous, 16-byte aligned block of global memory.
// Tensor (2D tile) form: cp.async.bulk.tensor moves a box described by a CUtensorMap (built on
// the host, see tensor_map.hpp, passed as a __grid_constant__ kernel parameter), laid out in
// shared memory as the map's swizzle says (swizzle.hpp).
#include <cstdint>

#include "klab/device/smem.cuh"

namespace klab::device {

/// Orders this thread's generic-proxy shared-memory accesses before later async-proxy ones.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// ---- 1D bulk copies ----

/// Bulk copy of `bytes` (multiple of 16, both addresses 16-byte aligned) global -> shared,
/// completing on `bar`.
__device__ __forceinline__ void bulk_copy_g2s(void* smem_dst, const void* gmem_src, uint32_t bytes,
                                              uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(smem_addr(smem_dst)),
      "l"(gmem_src), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
}

/// Bulk copy of `bytes` (multiple of 16, both addresses 16-byte aligned) shared -> global, part
/// of the thread's current bulk group (see bulk_commit_group / bulk_wait_group_read). The shared
/// memory's generic-proxy writes need fence_proxy_async_shared (by their writers) first.
__device__ __forceinline__ void bulk_copy_s2g(void* gmem_dst, const void* smem_src,
                                              uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(gmem_dst),
               "r"(smem_addr(smem_src)), "r"(bytes)
               : "memory");
}

// ---- 2D tensor copies ----

/// Fetches a tensor map (a __grid_constant__ kernel parameter's address, or one in global
/// memory after fence_tensor_map_acquire) into the TMA unit's
/// descriptor cache ahead of its first load, so that load does not wait for it.
__device__ __forceinline__ void prefetch_tensor_map(const void* tensor_map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(tensor_map) : "memory");
}

/// Makes a tensor map in global memory, written before this kernel (a copy ahead of its launch),
/// visible to this thread's later TMA uses of it (the CUDA guide's acquire, at system scope as
/// its example); then prefetch_tensor_map may fetch it.
__device__ __forceinline__ void fence_tensor_map_acquire(const void* tensor_map) {
  asm volatile("fence.proxy.tensormap::generic.acquire.sys [%0], 128;" ::"l"(tensor_map)
               : "memory");
}

/// Loads the box at element coordinates (x: inner, y: outer) into shared memory, completing on
/// `bar`. Out-of-range elements arrive as zeros and still count towards the transaction bytes.
__device__ __forceinline__ void tma_load_2d(void* smem_dst, const void* tensor_map, int x, int y,
                                            uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, "
      "{%2, %3}], [%4];" ::"r"(smem_addr(smem_dst)),
      "l"(tensor_map), "r"(x), "r"(y), "r"(smem_addr(bar))
      : "memory");
}

/// tma_load_2d for a 4-D tensor map (tensor_map_4d): the box at element coordinates (x0:
/// innermost .. x3), e.g. (column, head, token, batch) of a (B, N, H, D) array, so that a box of
/// tokens stops at its batch's end (zeros past it) instead of running into the next batch.
__device__ __forceinline__ void tma_load_4d(void* smem_dst, const void* tensor_map, int x0, int x1,
                                            int x2, int x3, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, "
      "{%2, %3, %4, %5}], [%6];" ::"r"(smem_addr(smem_dst)),
      "l"(tensor_map), "r"(x0), "r"(x1), "r"(x2), "r"(x3), "r"(smem_addr(bar))
      : "memory");
}

/// Brings the 4-D box at (x0, x1, x2, x3) of tensor_map into L2, no shared memory and no barrier:
/// a tma_load_4d of it later reads L2 (attention v18's next Q, ahead of the rows it replaces).
__device__ __forceinline__ void tma_prefetch_4d(const void* tensor_map, int x0, int x1, int x2,
                                                int x3) {
  asm volatile(
      "cp.async.bulk.prefetch.tensor.4d.L2.global.tile [%0, {%1, %2, %3, %4}];" ::"l"(tensor_map),
      "r"(x0), "r"(x1), "r"(x2), "r"(x3)
      : "memory");
}

/// tma_load_2d delivered to every CTA of the cluster whose bit is set in `cta_mask` (bit i: the
/// CTA of rank i in the cluster), at the same shared-memory offset and completing on the
/// mbarrier at the same offset in each of them: one read of global memory for several CTAs
/// that need the same box (e.g. the A tile of CTAs in one cluster row). Needs a cluster launch.
__device__ __forceinline__ void tma_load_2d_multicast(void* smem_dst, const void* tensor_map, int x,
                                                      int y, uint64_t* bar, uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::"
      "cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(smem_addr(smem_dst)),
      "l"(tensor_map), "r"(x), "r"(y), "r"(smem_addr(bar)), "h"(cta_mask)
      : "memory");
}

/// Stores a box from shared memory to (x, y); out-of-range elements are not written. Part of the
/// thread's current bulk group (see bulk_commit_group / bulk_wait_group_read).
__device__ __forceinline__ void tma_store_2d(const void* tensor_map, int x, int y,
                                             const void* smem_src) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
          tensor_map),
      "r"(x), "r"(y), "r"(smem_addr(smem_src))
      : "memory");
}

/// tma_store_2d for a 4-D tensor map (tensor_map_4d): the box at element coordinates (x0:
/// innermost .. x3); elements past any dimension's extent (rows past a batch's end) are not
/// written.
__device__ __forceinline__ void tma_store_4d(const void* tensor_map, int x0, int x1, int x2, int x3,
                                             const void* smem_src) {
  asm volatile(
      "cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3, %4}], "
      "[%5];" ::"l"(tensor_map),
      "r"(x0), "r"(x1), "r"(x2), "r"(x3), "r"(smem_addr(smem_src))
      : "memory");
}

// ---- bulk groups ----

/// Closes the bulk group of the stores issued so far by this thread.
__device__ __forceinline__ void bulk_commit_group() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

/// Waits until at most kPending of this thread's bulk groups still read shared memory.
template <int kPending>
__device__ __forceinline__ void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(kPending) : "memory");
}

/// Waits until at most kPending of this thread's bulk groups are incomplete (writes done).
template <int kPending>
__device__ __forceinline__ void bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(kPending) : "memory");
}

}  // namespace klab::device
