#include "klab/harness/kernel_capture.hpp"

#include <dlfcn.h>

#include <algorithm>

#include "klab/core/errors.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/profiler/demangle.hpp"
#include "klab/harness/registry.hpp"
#include "klab/harness/runner.hpp"

#if KLAB_HAS_CUDA
#include <cuda.h>  // driver types only: the functions come through cudaGetDriverEntryPointByVersion
#include <cuda_runtime_api.h>

#include "klab/core/cuda_check.hpp"
#include "klab/core/cuda_memory.hpp"
#endif

namespace klab {

std::string kernel_function_name(std::string_view d) {
  return without_template_arguments(function_name(d));
}

namespace {

#if KLAB_HAS_CUDA
// The few driver calls the runtime has no equivalent for on a graph node launched through the
// driver (library kernels): fetched from the runtime, so klab needs no link to libcuda.
struct Driver {
  CUresult (*kernel_node_params)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS_v2*) = nullptr;
  CUresult (*kernel_get_function)(CUfunction*, CUkernel) = nullptr;
  CUresult (*func_get_name)(const char**, CUfunction) = nullptr;
  CUresult (*func_get_attribute)(int*, CUfunction_attribute, CUfunction) = nullptr;
  CUresult (*occupancy)(int*, CUfunction, int, size_t) = nullptr;

  template <class Fn>
  static void load(Fn& fn, const char* symbol, unsigned version) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion(symbol, &p, version, cudaEnableDefault, &q) ==
            cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
      fn = reinterpret_cast<Fn>(p);
    cudaGetLastError();  // a missing symbol is not an error for us
  }

  Driver() {
    load(kernel_node_params, "cuGraphKernelNodeGetParams", 12000);  // the _v2 struct (kern, ctx)
    load(kernel_get_function, "cuKernelGetFunction", 12000);
    load(func_get_name, "cuFuncGetName", 12030);
    load(func_get_attribute, "cuFuncGetAttribute", 2020);
    load(occupancy, "cuOccupancyMaxActiveBlocksPerMultiprocessor", 6050);
  }
};

struct GraphOwner {
  cudaGraph_t g = nullptr;
  ~GraphOwner() {
    if (g) KLAB_CUDA_CHECK_NOEXCEPT(cudaGraphDestroy(g));
  }
};

// The driver's view of the node's function first: it is the same for kernels of this binary
// and of libraries (whose host stubs this runtime never registered). cuFuncGetAttribute,
// cuFuncGetName and cuOccupancyMaxActiveBlocksPerMultiprocessor are what cudaFuncGetAttributes,
// cudaFuncGetName and cudaOccupancyMaxActiveBlocksPerMultiprocessor call; the runtime calls
// are the fallback.
CapturedKernel describe(cudaGraphNode_t node, const Driver& d) {
  CapturedKernel k;
  cudaKernelNodeParams rp{};
  const bool have_rt = cudaGraphKernelNodeGetParams(node, &rp) == cudaSuccess;
  cudaGetLastError();
  CUDA_KERNEL_NODE_PARAMS_v2 dp{};
  CUfunction fn = nullptr;
  if (d.kernel_node_params &&
      d.kernel_node_params(reinterpret_cast<CUgraphNode>(node), &dp) == CUDA_SUCCESS) {
    fn = dp.func;
    if (!fn && dp.kern && d.kernel_get_function) d.kernel_get_function(&fn, dp.kern);
    k.grid = {dp.gridDimX, dp.gridDimY, dp.gridDimZ};
    k.block = {dp.blockDimX, dp.blockDimY, dp.blockDimZ};
    k.dynamic_smem = dp.sharedMemBytes;
  } else if (have_rt) {
    k.grid = {rp.gridDim.x, rp.gridDim.y, rp.gridDim.z};
    k.block = {rp.blockDim.x, rp.blockDim.y, rp.blockDim.z};
    k.dynamic_smem = rp.sharedMemBytes;
  } else {
    throw Error("cannot read a kernel node's launch parameters from the captured graph");
  }

  if (have_rt && rp.func) {
    Dl_info info{};
    if (dladdr(rp.func, &info) != 0 && info.dli_fname) k.origin = info.dli_fname;
  }

  cudaFuncAttributes a{};
  if (fn && d.func_get_attribute) {
    auto attr = [&](CUfunction_attribute which) {
      int v = 0;
      return d.func_get_attribute(&v, which, fn) == CUDA_SUCCESS ? v : 0;
    };
    const char* name = nullptr;
    if (d.func_get_name && d.func_get_name(&name, fn) == CUDA_SUCCESS && name) k.name = name;
    k.num_regs = attr(CU_FUNC_ATTRIBUTE_NUM_REGS);
    k.static_smem = attr(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    k.local_bytes = attr(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
    k.const_bytes = attr(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
    k.max_threads_per_block = attr(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    k.max_dynamic_smem = attr(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
    k.carveout_pct = attr(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT);
    k.binary_version = attr(CU_FUNC_ATTRIBUTE_BINARY_VERSION);
    k.ptx_version = attr(CU_FUNC_ATTRIBUTE_PTX_VERSION);
    k.cluster_blocks = attr(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH) *
                       attr(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT) *
                       attr(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH);
    int blocks = 0;
    if (d.occupancy && d.occupancy(&blocks, fn, k.block_threads(),
                                   static_cast<size_t>(k.dynamic_smem)) == CUDA_SUCCESS)
      k.cuda_blocks_per_sm = blocks;
  } else if (have_rt && rp.func && cudaFuncGetAttributes(&a, rp.func) == cudaSuccess) {
    const char* name = nullptr;
    if (cudaFuncGetName(&name, rp.func) == cudaSuccess && name) k.name = name;
    k.num_regs = a.numRegs;
    k.static_smem = static_cast<int64_t>(a.sharedSizeBytes);
    k.local_bytes = static_cast<int64_t>(a.localSizeBytes);
    k.const_bytes = static_cast<int64_t>(a.constSizeBytes);
    k.max_threads_per_block = a.maxThreadsPerBlock;
    k.max_dynamic_smem = a.maxDynamicSharedSizeBytes;
    k.carveout_pct = a.preferredShmemCarveout;
    k.binary_version = a.binaryVersion;
    k.ptx_version = a.ptxVersion;
    k.cluster_blocks = a.requiredClusterWidth * a.requiredClusterHeight * a.requiredClusterDepth;
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, rp.func, k.block_threads(),
                                                      static_cast<size_t>(k.dynamic_smem)) ==
        cudaSuccess)
      k.cuda_blocks_per_sm = blocks;
  }
  cudaGetLastError();
  if (k.name.empty()) k.name = "(unnamed kernel)";
  k.demangled = demangle(k.name);

  // A cluster size given at launch (cudaLaunchKernelEx) rather than compiled in.
  cudaKernelNodeAttrValue v{};
  if (cudaGraphKernelNodeGetAttribute(node, cudaKernelNodeAttributeClusterDimension, &v) ==
      cudaSuccess) {
    const int launch_cluster = static_cast<int>(v.clusterDim.x * v.clusterDim.y * v.clusterDim.z);
    if (launch_cluster > 1) k.cluster_blocks = launch_cluster;
  }
  cudaGetLastError();
  if (k.cluster_blocks < 0) k.cluster_blocks = 0;
  return k;
}

void walk(cudaGraph_t g, const Driver& d, std::vector<CapturedKernel>& out) {
  size_t n = 0;
  KLAB_CUDA_CHECK(cudaGraphGetNodes(g, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  if (n > 0) KLAB_CUDA_CHECK(cudaGraphGetNodes(g, nodes.data(), &n));
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    KLAB_CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    if (type == cudaGraphNodeTypeGraph) {
      cudaGraph_t child = nullptr;
      KLAB_CUDA_CHECK(cudaGraphChildGraphNodeGetGraph(node, &child));
      walk(child, d, out);
    } else if (type == cudaGraphNodeTypeKernel) {
      out.push_back(describe(node, d));
    }
  }
}

std::vector<CapturedKernel> capture_gpu(const Family& f, const Variant& v, const Problem& p) {
  CudaStream stream;  // non-blocking: capture never touches the legacy default stream
  cudaStream_t st = stream.get();

  // The runner's buffers: inputs from a fixed seed (never zeros), outputs poisoned.
  Buffers bufs;
  std::vector<DeviceBuffer> mem;
  DeviceBuffer workspace;
  if (const size_t ws = v.workspace_bytes ? v.workspace_bytes(p) : 0; ws > 0) {
    workspace = DeviceBuffer(ws);
    // Zeroed once, as a run's (Variant::workspace_bytes): counters a kernel resets itself.
    KLAB_CUDA_CHECK(cudaMemset(workspace.get(), 0, ws));
    bufs.workspace = workspace.get();
    bufs.workspace_bytes = ws;
  }
  // The inputs as a run draws them, builders included: a block table of valid pages, lengths
  // within the shape's, sentinels; random bits there would send a kernel off its buffers.
  Buffers host = make_host_buffers(f, p);
  fill_inputs(host, Dist::normal, 0x6b6c6162ULL);
  for (const Tensor& h : host.tensors) {
    Tensor t;
    t.spec = h.spec;
    mem.emplace_back(static_cast<size_t>(t.bytes()));
    t.data = mem.back().get();
    if (t.bytes() > 0) {
      if (t.spec.role == Role::output)
        KLAB_CUDA_CHECK(cudaMemsetAsync(t.data, kPoisonByte, static_cast<size_t>(t.bytes()), st));
      else
        KLAB_CUDA_CHECK(
            cudaMemcpyAsync(t.data, h.host.data(), h.host.size(), cudaMemcpyHostToDevice, st));
    }
    bufs.tensors.push_back(std::move(t));
  }
  KLAB_CUDA_CHECK(cudaStreamSynchronize(st));  // before `host` goes away

  // Once for real: library handles, workspaces, cudaFuncSetAttribute calls and lazy module
  // loading all happen here, outside the capture.
  const LaunchArgs args{reinterpret_cast<Stream>(st), 0};
  const PreparedLaunch launch = prepare_launch(v, p, bufs, args);  // as the bench times it
  launch(args.stream);
  KLAB_CHECK_LAUNCH();
  KLAB_CUDA_CHECK(cudaStreamSynchronize(st));

  GraphOwner graph;
  KLAB_CUDA_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  try {
    launch(args.stream);
  } catch (...) {
    cudaStreamEndCapture(st, &graph.g);
    cudaGetLastError();
    throw;
  }
  const cudaError_t end = cudaStreamEndCapture(st, &graph.g);
  if (end != cudaSuccess || !graph.g) {
    cudaGetLastError();
    throw Error(v.info.id + ": its launch could not be captured into a CUDA graph (" +
                cudaGetErrorString(end) + "); does the launcher synchronise or allocate?");
  }

  static const Driver driver;
  std::vector<CapturedKernel> all;
  walk(graph.g, driver, all);

  // Fold identical launches (a multi-pass kernel run twice with the same geometry).
  std::vector<CapturedKernel> out;
  for (auto& c : all) {
    auto it = std::find_if(out.begin(), out.end(), [&](const CapturedKernel& o) {
      return o.name == c.name && o.grid == c.grid && o.block == c.block &&
             o.dynamic_smem == c.dynamic_smem;
    });
    if (it != out.end())
      ++it->launches;
    else
      out.push_back(std::move(c));
  }
  return out;
}
#endif

}  // namespace

std::vector<CapturedKernel> capture_kernels(const Family& f, const Variant& v, const Problem& p) {
  if (v.info.device != Device::gpu)
    throw UsageError(v.info.id + " is a CPU variant: it launches no GPU kernels");
  if (Status st = can_run(v, p); !st.ok())
    throw UsageError(v.info.id + " cannot run " + p.str() + ": " + st.reason);
  const DeviceInfo& d = device_info();
  if (!d.present)
    throw UsageError(v.info.id +
                     ": finding its kernels needs a GPU, and there is none: " + d.absent_reason);
  if (d.sm() < v.info.min_sm)
    throw UsageError(v.info.id + " needs sm_" + std::to_string(v.info.min_sm) +
                     ", the device is sm_" + std::to_string(d.sm()));
#if KLAB_HAS_CUDA
  return capture_gpu(f, v, p);
#else
  throw UsageError("this klab was built without CUDA");
#endif
}

}  // namespace klab
