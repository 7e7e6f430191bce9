#pragma once
// The machine a result was measured on, and the SM clock during the samples.
#include <cstdint>
#include <string>

namespace klab {

struct DeviceInfo {
  bool present = false;
  std::string absent_reason;  ///< why there is no GPU (no CUDA build, no device, driver error)
  std::string name;
  std::string pci_bus_id;
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  int64_t l2_bytes = 0;
  int64_t global_mem_bytes = 0;
  int64_t smem_per_sm = 0, smem_per_block_optin = 0;
  int regs_per_sm = 0, max_threads_per_sm = 0, max_blocks_per_sm = 0;
  int max_sm_clock_mhz = 0;  ///< from NVML when available, else the device attribute
  int memory_bus_width = 0;
  std::string driver;    ///< "580.159.04" (NVML) or the CUDA driver API version
  int cuda_runtime = 0;  ///< e.g. 13000
  int cuda_driver = 0;

  int sm() const { return cc_major * 10 + cc_minor; }
};

/// Queries device 0 once (cached). Never throws: absence is reported in the struct.
const DeviceInfo& device_info();

/// The SM clock and throttling state, read through NVML (loaded at run time; absent -> zeros).
struct ClockReading {
  int sm_mhz = 0;
  bool throttled = false;          ///< power cap, thermal or hardware slowdown active
  unsigned long long reasons = 0;  ///< NVML clock-event reason bits
};
bool nvml_available();
ClockReading read_sm_clock();

}  // namespace klab
