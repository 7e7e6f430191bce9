#include <algorithm>

#include "klab/core/errors.hpp"
#include "klab/harness/buffers.hpp"
#include "klab/harness/family.hpp"
#include "klab/harness/problem.hpp"

namespace klab {

std::string Problem::str() const {
  std::string s = family + " " + shape.str() + " " + std::string(dtype_name(dtype));
  if (misalign != 0) s += " misalign=" + std::to_string(misalign);
  if (!layout.empty()) s += " layout=" + layout;
  return s;
}

Tensor& Buffers::operator[](std::string_view name) {
  for (auto& t : tensors)
    if (t.spec.name == name) return t;
  throw Error("no tensor named '" + std::string(name) + "'");
}

const Tensor& Buffers::operator[](std::string_view name) const {
  for (const auto& t : tensors)
    if (t.spec.name == name) return t;
  throw Error("no tensor named '" + std::string(name) + "'");
}

int64_t Buffers::total_bytes() const {
  int64_t b = 0;
  for (const auto& t : tensors) b += t.bytes();
  return b;
}

const Variant* Family::find(std::string_view id) const {
  for (const auto& v : ladder)
    if (v.info.id == id) return &v;
  return nullptr;
}

PreparedLaunch prepare_launch(const Variant& v, const Problem& p, Buffers& b,
                              const LaunchArgs& args) {
  if (v.prepare) return v.prepare(p, b, args);
  return [&v, &p, &b, args](Stream s) {
    LaunchArgs a = args;
    a.stream = s;
    v.launch(p, b, a);
  };
}

}  // namespace klab
