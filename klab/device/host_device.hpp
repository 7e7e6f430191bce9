#pragma once
// KLAB_HOST_DEVICE marks functions that the host compiler and nvcc both compile (the layout
// arithmetic of swizzle.hpp, tile_order.hpp, wgmma_desc.hpp, which the CPU tests check).
#if defined(__CUDACC__)
#define KLAB_HOST_DEVICE __host__ __device__
#else
#define KLAB_HOST_DEVICE
#endif
