#include "klab/core/shape.hpp"

#include <charconv>
#include <limits>

#include "klab/core/errors.hpp"

namespace klab {

int64_t Shape::at(std::string_view name) const {
  for (const auto& [k, v] : dims)
    if (k == name) return v;
  throw Error("shape " + str() + " has no dimension '" + std::string(name) + "'");
}

bool Shape::has(std::string_view name) const {
  for (const auto& [k, v] : dims)
    if (k == name) return true;
  return false;
}

int64_t Shape::get_or(std::string_view name, int64_t fallback) const {
  return has(name) ? at(name) : fallback;
}

void Shape::set(const std::string& name, int64_t value) {
  for (auto& [k, v] : dims)
    if (k == name) {
      v = value;
      return;
    }
  dims.emplace_back(name, value);
}

std::string Shape::str() const {
  std::string s;
  for (const auto& [k, v] : dims) {
    if (!s.empty()) s += ',';
    s += k + "=" + std::to_string(v);
  }
  return s;
}

Shape parse_shape(std::string_view text) {
  Shape shape;
  const std::string whole(text);
  if (text.empty()) throw UsageError("empty shape (expected name=value[,name=value...])");
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view item = text.substr(pos, comma - pos);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size())
      throw UsageError("malformed shape '" + whole + "': expected name=value, got '" +
                       std::string(item) + "'");
    const std::string name(item.substr(0, eq));
    for (char c : name)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
        throw UsageError("malformed shape '" + whole + "': bad dimension name '" + name + "'");
    const std::string_view value = item.substr(eq + 1);
    if (value.front() == '-')
      throw UsageError("shape '" + whole + "': " + name + " must be positive, got " +
                       std::string(value));
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec == std::errc::result_out_of_range)
      throw UsageError("shape '" + whole + "': " + name + "=" + std::string(value) +
                       " overflows a 64-bit integer");
    if (ec != std::errc() || ptr != value.data() + value.size())
      throw UsageError("malformed shape '" + whole + "': " + name + "=" + std::string(value) +
                       " is not an integer");
    // Zero parses here (a padding may be 0); the family decides which dimensions may be 0.
    if (shape.has(name))
      throw UsageError("shape '" + whole + "': dimension '" + name + "' given twice");
    shape.dims.emplace_back(name, v);
    pos = comma + 1;
    if (comma == text.size()) break;
  }
  return shape;
}

int64_t checked_product(std::initializer_list<int64_t> values, std::string_view what) {
  int64_t p = 1;
  for (int64_t v : values) {
    if (v != 0 && p > std::numeric_limits<int64_t>::max() / v)
      throw UsageError(std::string(what) + " overflows a 64-bit element count");
    p *= v;
  }
  return p;
}

}  // namespace klab
