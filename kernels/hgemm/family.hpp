#pragma once
// The hgemm family (C = A @ B, bf16/f16 in and out, fp32 accumulation) and its rung factories.
#include "klab/harness/family.hpp"

namespace klab::hgemm {

/// Above this many flops the fp64 CPU reference is too slow: cuBLASLt's output serves instead.
inline constexpr double kCpuReferenceMaxFlops = 2e10;
/// The v00 CPU rung refuses problems above this many flops (seconds per run on the host).
inline constexpr double kCpuRungMaxFlops = 1e10;
/// The trusted GPU variant for problems above kCpuReferenceMaxFlops.
inline constexpr const char* kGpuReference = "hgemm.baseline_cublaslt";

Family make_hgemm();

// One factory per rung, each defined in its own file (cpu.cpp, vNN_*.cu, baseline_cublaslt.cu).
Variant cpu_v00();
Variant gpu_v01_wmma();
Variant gpu_v02_mma_ldmatrix();
Variant gpu_v03_mma_swizzled();
Variant gpu_v04_mma_cp_async();
Variant gpu_v05_mma_tuned();
Variant gpu_v06_mma_2cta();
Variant gpu_v07_mma_autotuned();
Variant gpu_v08_mma_persistent();
Variant gpu_v09_mma_tma_producer();
Variant gpu_v10_wgmma_tma();
Variant gpu_v11_wgmma_warp_specialized();
Variant gpu_v12_wgmma_persistent();
Variant gpu_v13_wgmma_cluster_multicast();
Variant gpu_v14_wgmma_tma_store();
Variant gpu_v15_wgmma_cluster_tma_store();
Variant gpu_v16_wgmma_split_k();
Variant gpu_v17_wgmma_stream_k();
Variant gpu_v18_wgmma_dispatch();
Variant gpu_v19_wgmma_swap_ab();
Variant gpu_v20_wgmma_pingpong();
Variant gpu_v21_wgmma_stream_k_tiles();
Variant gpu_v22_wgmma_stream_k_aligned();
Variant gpu_v23_wgmma_swap_ab_stream_k();
Variant gpu_v24_wgmma_aligned_b();
Variant gpu_baseline_cublaslt();

}  // namespace klab::hgemm
