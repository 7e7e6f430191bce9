#pragma once
// Hopper (sm_90) thread-block clusters: the CTAs of a cluster run at once on one GPC and may
// read, write and arrive on each other's shared memory (distributed shared memory). Here: a
// CTA's rank in its cluster, the cluster-wide barrier (whole, or split into its arrival and its
// wait), mapping a shared-memory address to a peer CTA's copy of it, arriving on a peer's
// mbarrier, and stores into a peer's shared memory that complete on its mbarrier (st.async; TMA
// multicast is in tma_sm90.cuh).
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

/// The cluster barrier's arrival alone, relaxed: it orders none of this thread's memory accesses
/// (a release arrival is a cluster-scope fence), so what peers rely on after the matching wait
/// needs its own fence first (fence_mbarrier_init for mbarriers initialised before it). Every thread that arrives waits once (cluster_wait) before it arrives
/// again; work in between overlaps the peers' arrivals.
__device__ __forceinline__ void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
}

/// The cluster barrier's arrival alone, with release semantics: this thread's shared-memory
/// writes before it (e.g. a counter a peer will add to) are visible to every thread of the cluster
/// after its matching cluster_wait. Every thread that arrives waits once before it arrives again.
__device__ __forceinline__ void cluster_arrive_release() {
  asm volatile("barrier.cluster.arrive.release;" ::: "memory");
}

/// The cluster barrier's wait, after this thread's arrival (cluster_arrive_relaxed or
/// cluster_arrive_release): returns once every
/// non-exited thread of the cluster has arrived (acquire).
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire;" ::: "memory");
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

/// Adds `v` to the u32 at the shared::cluster address `addr` (map_shared_rank: a peer's shared
/// memory, or this CTA's own) and returns the value before the add (relaxed: it hands out numbers
/// and publishes nothing, e.g. the next unit of work of a counter the cluster shares).
__device__ __forceinline__ uint32_t atom_add_shared_cluster_u32(uint32_t addr, uint32_t v) {
  uint32_t old;
  asm volatile("atom.shared::cluster.add.u32 %0, [%1], %2;"
               : "=r"(old)
               : "r"(addr), "r"(v)
               : "memory");
  return old;
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

/// mbarrier_arrive_cluster on the barrier `bar` of each of the cluster's CTAs of ranks 0 to
/// kRanks - 1: a consumer handing a stage back to the producer of every CTA that multicasts into
/// it.
template <int kRanks>
__device__ __forceinline__ void mbarrier_arrive_cluster_ranks(uint64_t* bar) {
#pragma unroll
  for (int r = 0; r < kRanks; ++r) mbarrier_arrive_cluster(bar, uint32_t(r));
}

/// Stores four floats at the shared::cluster address `addr` (a peer's shared memory, 16-byte
/// aligned) and completes 16 transaction bytes on the mbarrier at shared::cluster address `bar`
/// in the same CTA as addr: fire and forget, the receiver learns of it by its barrier's phase
/// (mbarrier_wait_cluster). The peer's barrier must be initialised first (a cluster barrier
/// between its initialisation and this store).
__device__ __forceinline__ void st_async_f32x4(uint32_t addr, float4 v, uint32_t bar) {
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, "
      "[%5];" ::"r"(addr),
      "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "r"(bar)
      : "memory");
}

/// One float, as st_async_f32x4 (4 transaction bytes; addr 4-byte aligned).
__device__ __forceinline__ void st_async_f32(uint32_t addr, float v, uint32_t bar) {
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 [%0], %1, [%2];" ::"r"(addr),
      "f"(v), "r"(bar)
      : "memory");
}

/// Spins until this CTA's mbarrier `bar` completes the phase of parity `parity`, with acquire
/// at cluster scope: what peers stored into this CTA's shared memory by st.async (or wrote
/// before a release arrival) on that phase is visible after it.
__device__ __forceinline__ void mbarrier_wait_cluster(uint64_t* bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "wait_cluster_loop:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_cluster_loop;\n"
      "}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}

}  // namespace klab::device
