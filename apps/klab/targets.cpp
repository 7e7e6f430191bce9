// Resolving the inspect commands' targets, and the small printing helpers they share.
#include "apps/klab/targets.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>

#include "kernels/register.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/device_info.hpp"

namespace klab::cli {

namespace fs = std::filesystem;

Target resolve(const InspectOptions& o) {
  if (o.variant.find('.') == std::string::npos)
    throw UsageError("'" + o.variant + "' is not a variant id (family.vNN_name; see `klab list`)");
  auto [f, v] = registry().variant(o.variant);
  std::optional<DType> want;
  if (!o.dtype.empty()) {
    want = parse_dtype(o.dtype);
    if (std::find(v->info.dtypes.begin(), v->info.dtypes.end(), *want) == v->info.dtypes.end())
      throw UsageError(v->info.id + " does not take dtype " + o.dtype);
  }
  Problem p;
  if (!o.shape.empty()) {
    p = make_problem(*f, o.shape, want ? o.dtype : std::string(dtype_name(v->info.dtypes.front())));
  } else {
    bool found = false;
    for (const Problem& h : f->headline) {
      if ((want && h.dtype != *want) || !can_run(*v, h).ok()) continue;
      p = h;
      found = true;
      break;
    }
    if (!found)
      throw UsageError(v->info.id + " runs none of " + f->name + "'s headline problems" +
                       (want ? " in " + o.dtype : std::string()) + "; give --shape");
  }
  if (Status st = can_run(*v, p); !st.ok())
    throw UsageError(v->info.id + " cannot run " + p.str() + ": " + st.reason);
  if (v->info.device != Device::gpu)
    throw UsageError(v->info.id + " is a CPU variant: it launches no GPU kernels");
  return {f, v, p};
}

void require_gpu(const std::string& what) {
  const DeviceInfo& d = device_info();
  if (!d.present) throw UsageError(what + " needs a GPU, and there is none: " + d.absent_reason);
}

void print_header(const Target& t) {
  const DeviceInfo& d = device_info();
  std::cout << t.variant->info.id << "  " << t.problem.str();
  if (d.present)
    std::cout << "  on " << d.name << " (sm_" << d.sm() << ", " << d.sm_count << " SMs)";
  std::cout << "\n";
}

void add_target_opts(CLI::App* cmd, InspectOptions& o, bool required) {
  auto* v = cmd->add_option("variant", o.variant,
                            "variant id, e.g. sgemm.v05_2d_blocktile (see `klab list`)");
  if (required) v->required();
  add_problem_opts(cmd, o);
}

void add_problem_opts(CLI::App* cmd, InspectOptions& o) {
  cmd->add_option("--shape", o.shape,
                  "problem dimensions (default: the family's first headline shape)");
  cmd->add_option("--dtype", o.dtype, "f32, f16, bf16, e4m3, e5m2");
}

std::string short_origin(const CapturedKernel& k) {
  if (k.origin.empty()) return "launched through the driver";
  std::error_code ec;
  if (fs::equivalent(k.origin, "/proc/self/exe", ec)) return "";
  return fs::path(k.origin).filename().string();
}

std::string bytes_text(double b) {
  if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.2f} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.1f} KB", b / 1e3);
  return fmt::format("{:.0f} B", b);
}

std::string dim3_text(const std::array<unsigned, 3>& d) {
  return fmt::format("({},{},{})", d[0], d[1], d[2]);
}

}  // namespace klab::cli
