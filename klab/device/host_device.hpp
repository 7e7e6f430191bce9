#pragma once
// KLAB_HOST_DEVICE marks functions that the host compiler and nvcc both compile (the layout
// arithmetic of swizzle.hpp, tile_order.hpp, wgmma_desc.hpp, which the CPU tests check).
#if defined(__CUDACC__)
#define KLAB_HOST_DEVICE __host__ __device__
#else
#define KLAB_HOST_DEVICE
#endif

// KLAB_UNROLL: `#pragma unroll` where nvcc compiles, nothing for the host compiler (whose -Wall
// warns on the pragma); for loops in KLAB_HOST_DEVICE code whose trip counts are constants.
#if defined(__CUDACC__)
#define KLAB_UNROLL _Pragma("unroll")
#else
#define KLAB_UNROLL
#endif
