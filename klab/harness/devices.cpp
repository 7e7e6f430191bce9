#include "klab/harness/devices.hpp"

#include <algorithm>
#include <cctype>

#include "klab/core/errors.hpp"

namespace klab {

namespace {

// Dense peaks only. NVIDIA's datasheets print tensor figures "with sparsity" (2:4 structured),
// twice the dense rate; every such figure below is the datasheet's halved, and the notes say so.
// SM counts, clocks and L2 sizes come from the architecture whitepapers (the datasheets omit
// them); where neither document gives a number, the note names where it comes from instead.
std::vector<DeviceSpec> make_table() {
  std::vector<DeviceSpec> t;
  t.push_back(
      {.key = "h100-sxm",
       .name = "NVIDIA H100 SXM5 80GB",
       .arch = "sm_90",
       .aliases = {"h100", "h100-sxm5"},
       .fp64 = 34,
       .fp64_tensor = 67,
       .fp32 = 67,
       .tf32 = 494.5,
       .bf16 = 989.5,
       .fp8 = 1979,
       .memory_gbps = 3350,
       .memory_gb = 80,
       .l2_mib = 50,
       .sm_count = 132,
       .boost_mhz = 1980,
       .source =
           "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM column); NVIDIA H100 Tensor Core GPU "
           "Architecture whitepaper (SMs, L2)",
       .notes = "tensor figures: the datasheet's sparse 989/1979/3958 halved",
       .match_all = {"h100"},
       .match_none = {"pcie", "nvl"}});
  t.push_back(
      {.key = "h100-pcie",
       .name = "NVIDIA H100 PCIe 80GB",
       .arch = "sm_90",
       .aliases = {},
       .fp64 = 26,
       .fp64_tensor = 51,
       .fp32 = 51,
       .tf32 = 378,
       .bf16 = 756.5,
       .fp8 = 1513,
       .memory_gbps = 2000,
       .memory_gb = 80,
       .l2_mib = 50,
       .sm_count = 114,
       .boost_mhz = 1755,
       .source =
           "NVIDIA H100 Tensor Core GPU datasheet (H100 PCIe column); NVIDIA H100 Tensor Core GPU "
           "Architecture whitepaper (SMs, L2, boost clock)",
       .notes = "tensor figures: the datasheet's sparse 756/1513/3026 halved",
       .match_all = {"h100", "pcie"},
       .match_none = {}});
  t.push_back(
      {.key = "h200",
       .name = "NVIDIA H200 SXM 141GB",
       .arch = "sm_90",
       .aliases = {"h200-sxm"},
       .fp64 = 34,
       .fp64_tensor = 67,
       .fp32 = 67,
       .tf32 = 494.5,
       .bf16 = 989.5,
       .fp8 = 1979,
       .memory_gbps = 4800,
       .memory_gb = 141,
       .l2_mib = 60,
       .sm_count = 132,
       .boost_mhz = 1980,
       .source = "NVIDIA H200 Tensor Core GPU datasheet (H200 SXM column); GH100 as in the H100 "
                 "whitepaper (SMs, clock)",
       .notes =
           "tensor figures: the datasheet's sparse 989/1979/3958 halved; L2 not on the datasheet: "
           "60 MiB is the CUDA device attribute read on the project's H200 (docs/design.md, "
           "Targets)",
       .match_all = {"h200"},
       .match_none = {"nvl"}});
  t.push_back(
      {.key = "b200",
       .name = "NVIDIA B200 (HGX, 1000 W)",
       .arch = "sm_100",
       .aliases = {"b200-hgx", "hgx-b200"},
       .fp64 = 37,
       .fp64_tensor = 37,
       .fp32 = 75,
       .tf32 = 1125,
       .bf16 = 2250,
       .fp8 = 4500,
       .fp4 = 9000,
       .memory_gbps = 8000,
       .memory_gb = 180,
       .l2_mib = 126,
       .sm_count = 148,
       .boost_mhz = 1965,
       .source = "NVIDIA HGX B200 datasheet (8-GPU figures / 8); NVIDIA Blackwell Architecture "
                 "Technical Brief",
       .notes =
           "tensor figures: the datasheet's sparse 18/36/72/144 PFLOPS per 8 GPUs halved; SMs, "
           "clock and L2 are not on the datasheet: the CUDA device attributes as publicly reported "
           "(148 SMs x 128 lanes x 2 x 1.965 GHz = 74.4 TFLOP/s agrees with the FP32 figure)",
       .match_all = {"b200"},
       .match_none = {}});
  t.push_back(
      {.key = "a100-sxm",
       .name = "NVIDIA A100 SXM4 80GB",
       .arch = "sm_80",
       .aliases = {"a100", "a100-sxm4", "a100-80gb", "a100-sxm-80gb"},
       .fp64 = 9.7,
       .fp64_tensor = 19.5,
       .fp32 = 19.5,
       .tf32 = 156,
       .bf16 = 312,
       .memory_gbps = 2039,
       .memory_gb = 80,
       .l2_mib = 40,
       .sm_count = 108,
       .boost_mhz = 1410,
       .source =
           "NVIDIA A100 Tensor Core GPU datasheet (A100 80GB SXM column); NVIDIA A100 Tensor Core "
           "GPU Architecture whitepaper (SMs, L2, boost clock)",
       .notes = "the datasheet prints dense tensor figures (sparse in parentheses); no FP8 or FP4",
       .match_all = {"a100", "80gb"},
       .match_none = {"pcie"}});
  t.push_back(
      {.key = "l4",
       .name = "NVIDIA L4",
       .arch = "sm_89",
       .aliases = {},
       .fp64 = 0.47,
       .fp32 = 30.3,
       .tf32 = 60,
       .bf16 = 121,
       .fp8 = 242.5,
       .memory_gbps = 300,
       .memory_gb = 24,
       .l2_mib = 48,
       .sm_count = 58,
       .boost_mhz = 2040,
       .source =
           "NVIDIA L4 Tensor Core GPU datasheet; NVIDIA Ada GPU Architecture whitepaper (SMs, L2)",
       .notes = "tensor figures: the datasheet's sparse 120/242/485 halved; FP64 is not on the "
                "datasheet: "
                "1/64 of FP32 (Ada's FP64 rate, whitepaper)",
       .match_all = {"l4"},
       .match_none = {}});
  t.push_back(
      {.key = "rtx4090",
       .name = "NVIDIA GeForce RTX 4090",
       .arch = "sm_89",
       .aliases = {"4090", "rtx-4090", "geforce-rtx-4090"},
       .fp64 = 1.3,
       .fp32 = 82.6,
       .tf32 = 82.6,
       .bf16 = 165.2,
       .fp8 = 330.3,
       .memory_gbps = 1008,
       .memory_gb = 24,
       .l2_mib = 72,
       .sm_count = 128,
       .boost_mhz = 2520,
       .source = "NVIDIA Ada GPU Architecture whitepaper, appendix (GeForce RTX 4090)",
       .notes =
           "GeForce tensor cores run FP32 accumulation at half rate: BF16/FP16 and FP8 are the "
           "FP32-accumulate figures (FP16 accumulate: 330.3 and 660.6)",
       .match_all = {"4090"},
       .match_none = {"d", "laptop", "mobile"}});
  return t;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Lower case without separators: "H100 SXM" and "h100-sxm" both become "h100sxm".
std::string squash(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != '-' && c != '_' && c != ' ')
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string> tokens(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : lower(s)) {
    if (c == ' ' || c == '-' || c == '_') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

}  // namespace

const std::vector<DeviceSpec>& device_table() {
  static const std::vector<DeviceSpec> t = make_table();
  return t;
}

const DeviceSpec* device_for_cuda_name(std::string_view cuda_name) {
  const auto toks = tokens(cuda_name);
  auto has = [&](const std::string& t) {
    return std::find(toks.begin(), toks.end(), t) != toks.end();
  };
  for (const auto& d : device_table()) {
    if (d.match_all.empty()) continue;
    if (std::all_of(d.match_all.begin(), d.match_all.end(), has) &&
        std::none_of(d.match_none.begin(), d.match_none.end(), has))
      return &d;
  }
  return nullptr;
}

const DeviceSpec* find_device(std::string_view name) {
  const std::string want = squash(name);
  if (want.empty()) return nullptr;
  for (const auto& d : device_table()) {
    if (squash(d.key) == want) return &d;
    for (const auto& a : d.aliases)
      if (squash(a) == want) return &d;
  }
  return device_for_cuda_name(name);
}

std::string device_keys() {
  std::string s;
  for (const auto& d : device_table()) s += (s.empty() ? "" : ", ") + d.key;
  return s;
}

const DeviceSpec& device_or_throw(std::string_view name) {
  if (const DeviceSpec* d = find_device(name)) return *d;
  throw UsageError("unknown device '" + std::string(name) + "' (known: " + device_keys() + ")");
}

}  // namespace klab
