#include "klab/harness/device_info.hpp"

#include <dlfcn.h>

#include <array>
#include <mutex>

#if KLAB_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace klab {

namespace {

// A minimal NVML binding through dlopen, so that the binary runs where the driver's NVML is
// absent (CI) and needs no link-time stub.
struct NvmlApi {
  using Handle = void*;
  bool ok = false;
  Handle dev = nullptr;
  int (*get_clock)(Handle, int, unsigned*) = nullptr;         // nvmlDeviceGetClockInfo
  int (*get_max_clock)(Handle, int, unsigned*) = nullptr;     // nvmlDeviceGetMaxClockInfo
  int (*get_reasons)(Handle, unsigned long long*) = nullptr;  // ...GetCurrentClocksEventReasons
  std::string driver;

  NvmlApi() {
#if KLAB_HAS_CUDA
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    auto init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    auto by_bus = reinterpret_cast<int (*)(const char*, Handle*)>(
        dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    auto drv = reinterpret_cast<int (*)(char*, unsigned)>(dlsym(lib, "nvmlSystemGetDriverVersion"));
    get_clock = reinterpret_cast<decltype(get_clock)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    get_max_clock =
        reinterpret_cast<decltype(get_max_clock)>(dlsym(lib, "nvmlDeviceGetMaxClockInfo"));
    get_reasons = reinterpret_cast<decltype(get_reasons)>(
        dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (!get_reasons)
      get_reasons = reinterpret_cast<decltype(get_reasons)>(
          dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    if (!init || !by_bus || !get_clock || init() != 0) return;
    char bus[64] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, 0) != cudaSuccess) return;
    if (by_bus(bus, &dev) != 0) return;
    if (drv) {
      std::array<char, 96> v{};
      if (drv(v.data(), v.size()) == 0) driver = v.data();
    }
    ok = true;
#endif
  }
};

NvmlApi& nvml() {
  static NvmlApi api;
  return api;
}

constexpr int kNvmlClockSm = 1;
// Reasons that mean the clock is held down: SW power cap, HW slowdown, SW/HW thermal, power brake.
constexpr unsigned long long kThrottleMask = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

DeviceInfo query() {
  DeviceInfo d;
#if KLAB_HAS_CUDA
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    d.absent_reason = err != cudaSuccess ? std::string("no usable GPU: ") + cudaGetErrorString(err)
                                         : "no GPU found";
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return d;
  }
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
    d.absent_reason = "cudaGetDeviceProperties failed";
    return d;
  }
  d.present = true;
  d.name = p.name;
  d.sm_count = p.multiProcessorCount;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.l2_bytes = p.l2CacheSize;
  d.global_mem_bytes = static_cast<int64_t>(p.totalGlobalMem);
  d.smem_per_sm = static_cast<int64_t>(p.sharedMemPerMultiprocessor);
  d.smem_per_block_optin = static_cast<int64_t>(p.sharedMemPerBlockOptin);
  d.regs_per_sm = p.regsPerMultiprocessor;
  d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  d.max_blocks_per_sm = p.maxBlocksPerMultiProcessor;
  d.memory_bus_width = p.memoryBusWidth;
  char bus[64] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, 0) == cudaSuccess) d.pci_bus_id = bus;
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0) == cudaSuccess)
    d.max_sm_clock_mhz = khz / 1000;
  cudaRuntimeGetVersion(&d.cuda_runtime);
  cudaDriverGetVersion(&d.cuda_driver);
  auto& n = nvml();
  if (n.ok) {
    unsigned mhz = 0;
    if (n.get_max_clock && n.get_max_clock(n.dev, kNvmlClockSm, &mhz) == 0)
      d.max_sm_clock_mhz = static_cast<int>(mhz);
    d.driver = n.driver;
  }
  if (d.driver.empty()) d.driver = "cuda-driver-api " + std::to_string(d.cuda_driver);
#else
  d.absent_reason = "klab was built without CUDA (cpu-only build)";
#endif
  return d;
}

}  // namespace

const DeviceInfo& device_info() {
  static const DeviceInfo info = query();
  return info;
}

bool nvml_available() { return device_info().present && nvml().ok; }

ClockReading read_sm_clock() {
  ClockReading r;
  auto& n = nvml();
  if (!n.ok) return r;
  unsigned mhz = 0;
  if (n.get_clock(n.dev, kNvmlClockSm, &mhz) == 0) r.sm_mhz = static_cast<int>(mhz);
  if (n.get_reasons && n.get_reasons(n.dev, &r.reasons) == 0)
    r.throttled = (r.reasons & kThrottleMask) != 0;
  return r;
}

}  // namespace klab
