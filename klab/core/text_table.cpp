#include "klab/core/text_table.hpp"

#include <algorithm>

namespace klab {

std::string render_table(const std::vector<std::vector<std::string>>& rows, bool markdown,
                         const std::vector<bool>& right) {
  std::vector<size_t> w(rows.front().size(), 0);
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
  std::string out;
  for (size_t k = 0; k < rows.size(); ++k) {
    const auto& r = rows[k];
    if (markdown) {
      out += "|";
      for (const auto& c : r) out += " " + c + " |";
      out += "\n";
      if (k == 0) {
        out += "|";
        for (size_t i = 0; i < r.size(); ++i) out += right[i] ? "---:|" : "---|";
        out += "\n";
      }
      continue;
    }
    for (size_t i = 0; i < r.size(); ++i) {
      const std::string pad(w[i] - r[i].size(), ' ');
      out += right[i] ? pad + r[i] : r[i] + (i + 1 < r.size() ? pad : "");
      out += i + 1 < r.size() ? "  " : "";
    }
    out += "\n";
  }
  return out;
}

}  // namespace klab
