#pragma once
// Hopper (sm_90) thread-block clusters: the CTAs of a cluster run at once on one GPC and may
// read, write and arrive on each other's shared memory (distributed shared memory). Here: a
// CTA's rank in its cluster, the cluster-wide barrier, mapping a shared-memory address to a peer
// CTA's copy of it, and arriving on a peer's mbarrier (TMA multicast is in tma_sm90.cuh).
#include <cstdint>

#include "klab/device/smem.cuh"

namespace klab::device {

/// This CTA's rank in its cluster (0 .. cluster size - 1).
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

/// Barrier among every non-exited thread of the cluster, with release / acquire semantics: the
/// shared-memory writes (barrier initialisations included) of every CTA before it are visible
/// to every CTA after it. Needed before a CTA touches a peer's shared memory for the first time,
/// and before a CTA exits while peers may still arrive on its barriers.
__device__ __forceinline__ void cluster_sync() {
  asm volatile(
      "barrier.cluster.arrive.release;\n"
      "barrier.cluster.wait.acquire;\n" ::
          : "memory");
}

/// The shared::cluster address of the variable at `smem_ptr` in the cluster's CTA of rank
/// `rank` (the same offset in that CTA's shared memory).
__device__ __forceinline__ uint32_t map_shared_rank(const void* smem_ptr, uint32_t rank) {
  uint32_t out;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(out)
               : "r"(smem_addr(smem_ptr)), "r"(rank));
  return out;
}

/// One float from the shared::cluster address `addr` (map_shared_rank).
__device__ __forceinline__ float ld_shared_cluster_f32(uint32_t addr) {
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(addr) : "memory");
  return v;
}

/// Four floats from the shared::cluster address `addr` (map_shared_rank: a peer CTA's shared
/// memory, 16-byte aligned), e.g. a partial result the peer wrote before a cluster_sync().
__device__ __forceinline__ float4 ld_shared_cluster_f32x4(uint32_t addr) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}

/// One arrival on the mbarrier `bar` of the cluster's CTA of rank `rank` (this CTA's own rank
/// too), e.g. a consumer handing a stage back to every producer that multicasts into it. Release
/// at CTA scope, as a local arrive: it orders this thread's own shared-memory accesses, enough
/// when the arrival only says "done reading" (a cluster-scope release would add a GPU-wide
/// memory barrier before every arrival).
__device__ __forceinline__ void mbarrier_arrive_cluster(uint64_t* bar, uint32_t rank) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(map_shared_rank(bar, rank))
               : "memory");
}

}  // namespace klab::device
