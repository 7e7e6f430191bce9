#pragma once
// Which kernels does a variant launch? Runs the variant once on real buffers (so that handles,
// workspaces and function attributes are set up), then captures one more launch into a CUDA
// graph and reads the graph's kernel nodes: no annotation of the rungs needed. Library kernels
// (cuBLAS, cuDNN, CUB) are found the same way. Needs a GPU; the header needs no CUDA.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "klab/harness/family.hpp"

namespace klab {

struct CapturedKernel {
  std::string name;       ///< as the driver reports it (mangled for C++ kernels)
  std::string demangled;  ///< readable form of `name`
  std::string origin;     ///< the binary holding the launch's host stub ("" when unknown)
  std::array<unsigned, 3> grid{}, block{};
  int64_t dynamic_smem = 0;  ///< of the launch
  int launches = 1;          ///< identical launches (name, grid, block, smem) folded together
  int cluster_blocks = 0;    ///< blocks per thread-block cluster (0: no cluster attribute)

  // cudaFuncGetAttributes (through the driver, so library kernels work too).
  int num_regs = 0;
  int64_t static_smem = 0;
  int64_t local_bytes = 0;  ///< per-thread local memory: spills and stack
  int64_t const_bytes = 0;
  int max_threads_per_block = 0;
  int64_t max_dynamic_smem = 0;
  int carveout_pct = -1;                    ///< preferred shared-memory carveout, -1 = default
  int binary_version = 0, ptx_version = 0;  ///< e.g. 90

  /// cudaOccupancyMaxActiveBlocksPerMultiprocessor for this launch (-1: the query failed).
  int cuda_blocks_per_sm = -1;

  int block_threads() const { return static_cast<int>(block[0] * block[1] * block[2]); }
  int64_t grid_blocks() const { return int64_t{grid[0]} * grid[1] * grid[2]; }
};

/// A kernel's function without its template arguments, parameters and return type:
/// "void klab::sgemm::multistage_kernel<Cfg<128>, true>(float const*, int)" ->
/// "klab::sgemm::multistage_kernel". Two configurations of one kernel template share it.
std::string kernel_function_name(std::string_view demangled);

/// The kernels one launch of `v` on `p` runs, in graph order. Throws UsageError without a GPU
/// (or in a build without CUDA) and for CPU variants; klab::Error when a CUDA call fails.
std::vector<CapturedKernel> capture_kernels(const Family& f, const Variant& v, const Problem& p);

}  // namespace klab
