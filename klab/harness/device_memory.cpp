#include "klab/harness/device_memory.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "klab/core/text_table.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/result.hpp"

#if KLAB_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace klab {

namespace {

DeviceMemoryInfo cuda_memory_info() {
  DeviceMemoryInfo m;
#if KLAB_HAS_CUDA
  if (!device_info().present) return m;
  size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    cudaGetLastError();  // not sticky: clear it, so the next call does not report it
    return m;
  }
  m.known = true;
  m.free = static_cast<int64_t>(free);
  m.total = static_cast<int64_t>(total);
#endif
  return m;
}

DeviceMemoryProbe& probe_slot() {
  static DeviceMemoryProbe probe;
  return probe;
}

std::string problem_cell(const Result& r) {
  std::string s = r.problem.shape.str() + " " + std::string(dtype_name(r.problem.dtype));
  if (r.problem.misalign) s += " +" + std::to_string(r.problem.misalign);
  if (!r.problem.layout.empty()) s += " " + r.problem.layout;
  return s;
}

std::string ratio(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", x);
  return buf;
}

std::string signed_bytes(int64_t b) { return b < 0 ? "-" + format_bytes(-b) : format_bytes(b); }

// Why a record has no measured peak (or an empty string when it has one).
std::string note_of(const Result& r) {
  if (r.status == "skipped") return "skipped: " + r.reason;
  if (r.status == "error") return "ERROR: " + r.reason;
  if (!r.device_memory->peak_measured) return "not measured";
  return "";
}

}  // namespace

DeviceMemoryProbe set_device_memory_probe(DeviceMemoryProbe probe) {
  return std::exchange(probe_slot(), std::move(probe));
}

DeviceMemoryInfo device_memory_now() {
  const DeviceMemoryProbe& probe = probe_slot();
  return probe ? probe() : cuda_memory_info();
}

int64_t tensor_bytes(const Family& f, const Problem& p) {
  int64_t bytes = 0;
  for (const TensorSpec& t : f.tensors(p))
    bytes += (t.numel + p.misalign) * dtype_size(t.dtype);  // as make_device_set allocates them
  return bytes;
}

DeviceMemory memory_need(const Family& f, const Variant& v, const Problem& p) {
  DeviceMemory m;
  m.tensors = tensor_bytes(f, p);
  m.workspace = v.workspace_bytes ? static_cast<int64_t>(v.workspace_bytes(p)) : 0;
  return m;
}

Status fits_in_free_memory(const DeviceMemory& m, const DeviceMemoryInfo& device) {
  if (!device.known || m.needed() <= device.free) return Status::yes();
  return Status::no("does not fit: needs " + format_gib(double(m.needed())) + " (tensors " +
                    format_gib(double(m.tensors)) + " + workspace " +
                    format_gib(double(m.workspace)) + "), " + format_gib(double(device.free)) +
                    " free");
}

MemoryWatch::MemoryWatch() : first_(device_memory_now()), max_used_(first_.used()) {}

void MemoryWatch::sample() {
  const DeviceMemoryInfo now = device_memory_now();
  if (first_.known && now.known) max_used_ = std::max(max_used_, now.used());
}

std::string format_gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / double(int64_t(1) << 30));
  return buf;
}

std::string format_bytes(int64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double x = double(bytes) / 1024;
  int u = 0;
  while (x >= 1024 && u < 3) {
    x /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", x, units[u]);
  return buf;
}

std::string memory_table(const std::vector<Result>& results, bool markdown) {
  std::vector<std::vector<std::string>> rows{{"variant", "problem", "tensors", "workspace",
                                              "peak measured", "peak / tensors",
                                              "extra (peak - tensors)", "note"}};
  for (const Result& r : results) {
    if (!r.device_memory) continue;
    const DeviceMemory& m = *r.device_memory;
    std::vector<std::string> row{r.variant + (r.baseline_variant ? " (baseline)" : ""),
                                 problem_cell(r), format_bytes(m.tensors),
                                 format_bytes(m.workspace)};
    if (m.peak_measured && r.status == "ok") {
      row.push_back(format_bytes(*m.peak_measured));
      row.push_back(m.tensors > 0 ? ratio(double(*m.peak_measured) / double(m.tensors)) : "-");
      row.push_back(signed_bytes(*m.peak_measured - m.tensors));
    } else {
      row.insert(row.end(), {"-", "-", "-"});
    }
    row.push_back(note_of(r));
    rows.push_back(std::move(row));
  }
  return render_table(rows, markdown, {false, false, true, true, true, true, true, false});
}

std::string memory_by_problem(const std::vector<Result>& results) {
  std::vector<std::string> variants, problems;
  std::map<std::pair<std::string, std::string>, std::string> cell;
  for (const Result& r : results) {
    if (!r.device_memory) continue;
    const std::string prob = problem_cell(r);
    if (std::find(variants.begin(), variants.end(), r.variant) == variants.end())
      variants.push_back(r.variant);
    if (std::find(problems.begin(), problems.end(), prob) == problems.end())
      problems.push_back(prob);
    const DeviceMemory& m = *r.device_memory;
    std::string& c = cell[{prob, r.variant}];
    if (m.peak_measured && r.status == "ok")
      c = format_bytes(*m.peak_measured);
    else if (r.status == "skipped" && r.reason.rfind("does not fit", 0) == 0)
      c = "does not fit (needs " + format_bytes(m.needed()) + ")";
    else
      c = r.status == "error" ? "error" : r.status == "skipped" ? "skipped" : "-";
  }
  if (variants.size() < 2) return "";
  std::vector<std::vector<std::string>> rows{{"problem"}};
  rows[0].insert(rows[0].end(), variants.begin(), variants.end());
  for (const std::string& prob : problems) {
    std::vector<std::string> row{prob};
    for (const std::string& v : variants) {
      auto it = cell.find({prob, v});
      row.push_back(it == cell.end() ? "" : it->second);
    }
    rows.push_back(std::move(row));
  }
  std::vector<bool> right(rows[0].size(), true);
  right[0] = false;
  return render_table(rows, true, right);
}

}  // namespace klab
