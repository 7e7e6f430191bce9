#include "klab/harness/registry.hpp"

#include <unistd.h>

#include <algorithm>

#include "klab/core/errors.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/device_memory.hpp"

namespace klab {

void Registry::add(Family family) {
  KLAB_CHECK(!family.name.empty(), "family without a name");
  for (const auto& v : family.ladder)
    KLAB_CHECK(v.info.id.rfind(family.name + ".", 0) == 0,
               "variant " + v.info.id + " does not start with '" + family.name + ".'");
  families_.push_back(std::move(family));
}

const Family& Registry::family(std::string_view name) const {
  std::string known;
  for (const auto& f : families_) {
    if (f.name == name) return f;
    known += (known.empty() ? "" : ", ") + f.name;
  }
  throw UsageError("unknown family '" + std::string(name) + "' (known: " + known + ")");
}

std::pair<const Family*, const Variant*> Registry::variant(std::string_view id) const {
  const size_t dot = id.find('.');
  if (dot == std::string_view::npos)
    throw UsageError("'" + std::string(id) +
                     "' is not a variant id (expected family.vNN_name; see `klab list`)");
  const Family& f = family(id.substr(0, dot));
  if (const Variant* v = f.find(id)) return {&f, v};
  throw UsageError("unknown variant '" + std::string(id) + "' (see `klab list " + f.name + "`)");
}

void Registry::add_tunable(Tunable t) {
  for (auto& existing : tunables_)
    if (existing.variant == t.variant) {
      existing = std::move(t);
      return;
    }
  tunables_.push_back(std::move(t));
}

const Tunable* Registry::tunable(std::string_view variant) const {
  for (const auto& t : tunables_)
    if (t.variant == variant) return &t;
  return nullptr;
}

void validate_problem(const Family& f, const Problem& p) {
  // A misspelt name first ("N=5" for "n"): it would otherwise read as a missing dimension.
  for (const auto& [name, v] : p.shape.dims)
    if (std::find(f.dims.begin(), f.dims.end(), name) == f.dims.end()) {
      std::string all;
      for (const auto& d : f.dims) all += (all.empty() ? "" : ",") + d;
      throw UsageError(f.name + ": unknown dimension '" + name + "' (expected " + all + ")");
    }
  for (const auto& d : f.dims)
    if (!p.shape.has(d))
      throw UsageError(f.name + ": shape '" + p.shape.str() + "' lacks dimension '" + d + "'");
  for (const auto& [name, v] : p.shape.dims) {
    const bool zero_ok =
        std::find(f.zero_ok_dims.begin(), f.zero_ok_dims.end(), name) != f.zero_ok_dims.end();
    if (v < 0 || (v == 0 && !zero_ok))
      throw UsageError(f.name + ": dimension " + name + " must be positive, got " +
                       std::to_string(v));
  }
  if (std::find(f.dtypes.begin(), f.dtypes.end(), p.dtype) == f.dtypes.end())
    throw UsageError(f.name + " does not take dtype " + std::string(dtype_name(p.dtype)));
  if (p.misalign < 0) throw UsageError("misalign must be >= 0");
  if (!p.layout.empty() &&
      std::find(f.layouts.begin(), f.layouts.end(), p.layout) == f.layouts.end()) {
    std::string all;
    for (const auto& l : f.layouts) all += (all.empty() ? "" : ", ") + l;
    throw UsageError(f.name + ": unknown layout '" + p.layout + "'" +
                     (all.empty() ? " (it takes none)" : " (expected " + all + ")"));
  }
  if (f.validate) f.validate(p);
  // Element counts and byte sizes must fit comfortably in int64 (tensors() uses checked math).
  for (const auto& t : f.tensors(p))
    checked_product({t.numel, dtype_size(t.dtype)}, f.name + " tensor " + t.name);
  check_fits_in_memory(f, p);
}

void check_fits_in_memory(const Family& f, const Problem& p) {
  // Host: a copy of every tensor, and the fp64 reference (value and magnitude, 16 bytes per
  // output element) unless the problem is judged by samples. Device: every tensor once, against
  // the whole device (a variant's workspace against its free memory is refused when it runs:
  // refuse_before_allocation, runner.hpp).
  double host = 0, device = 0;
  const bool sampled = f.sampled(p);
  for (const auto& t : f.tensors(p)) {
    const double bytes = double(t.numel) * double(dtype_size(t.dtype));
    host += bytes + (t.role != Role::input && !sampled ? 16.0 * double(t.numel) : 0.0);
    device += bytes;
  }
  const double host_mem = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  if (host_mem > 0 && host > host_mem)
    throw UsageError(p.str() + " needs " + format_gib(host) +
                     " of host memory (inputs, outputs and reference); this machine has " +
                     format_gib(host_mem));
  const DeviceInfo& d = device_info();
  if (d.present && d.global_mem_bytes > 0 && device > double(d.global_mem_bytes))
    throw UsageError(p.str() + " needs " + format_gib(device) + " of device memory; " + d.name +
                     " has " + format_gib(double(d.global_mem_bytes)));
}

Problem make_problem(const Family& f, std::string_view shape_text, std::string_view dtype_text,
                     int64_t misalign, std::string_view layout) {
  Problem p;
  p.family = f.name;
  p.layout = std::string(layout);
  p.shape = parse_shape(shape_text);
  for (const auto& [name, value] : f.default_dims)
    if (!p.shape.has(name)) p.shape.dims.emplace_back(name, value);
  p.dtype = parse_dtype(dtype_text);
  p.misalign = misalign;
  // Reorder dims into the family's display order.
  Shape ordered;
  for (const auto& d : f.dims)
    if (p.shape.has(d)) ordered.dims.emplace_back(d, p.shape.at(d));
  for (const auto& kv : p.shape.dims)
    if (!ordered.has(kv.first)) ordered.dims.push_back(kv);
  p.shape = ordered;
  validate_problem(f, p);
  return p;
}

Status can_run(const Variant& v, const Problem& p) {
  if (std::find(v.info.dtypes.begin(), v.info.dtypes.end(), p.dtype) == v.info.dtypes.end())
    return Status::no(v.info.id + " does not take dtype " + std::string(dtype_name(p.dtype)));
  if (v.can_implement) return v.can_implement(p);
  return Status::yes();
}

}  // namespace klab
