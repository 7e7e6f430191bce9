#include "klab/harness/profiler/ncu_csv.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "klab/harness/profiler/text.hpp"

namespace klab {

using profiler_text::ends_with;
using profiler_text::split_lines;
using profiler_text::starts_with;
using profiler_text::trim;

std::vector<std::vector<std::string>> parse_csv(std::string_view text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool in_quotes = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        field += c;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_quotes = true;
        any = true;
        break;
      case ',':
        row.push_back(std::move(field));
        field.clear();
        any = true;
        break;
      case '\r':
        break;
      case '\n':
        if (any || !field.empty()) {
          row.push_back(std::move(field));
          rows.push_back(std::move(row));
        }
        row.clear();
        field.clear();
        any = false;
        break;
      default:
        field += c;
        any = true;
    }
  }
  if (any || !field.empty()) {
    row.push_back(std::move(field));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::optional<double> parse_ncu_number(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  std::string digits;
  digits.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    // A thousands separator sits between digits, with exactly three digits after it.
    if (s[i] == ',') {
      auto digit = [&](size_t k) {
        return k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]));
      };
      const bool grouped =
          i > 0 && digit(i - 1) && digit(i + 1) && digit(i + 2) && digit(i + 3) && !digit(i + 4);
      if (!grouped) return std::nullopt;
      continue;
    }
    digits += s[i];
  }
  double v = 0;
  const char* end = digits.data() + digits.size();
  const auto [p, ec] = std::from_chars(digits.data(), end, v);
  if (ec != std::errc() || p != end) return std::nullopt;
  return v;
}

std::optional<double> NcuRow::number(std::string_view column) const {
  auto it = values.find(column);
  if (it == values.end()) return std::nullopt;
  return parse_ncu_number(it->second);
}

std::string NcuRow::text(std::string_view column) const {
  auto it = values.find(column);
  return it == values.end() ? std::string() : it->second;
}

NcuReport parse_ncu_csv(std::string_view text) {
  NcuReport r;
  std::string table;
  bool in_table = false;
  for (std::string_view line : split_lines(text)) {
    if (starts_with(line, "==")) {
      r.messages.emplace_back(line);
      continue;
    }
    if (!in_table) {
      if (!starts_with(line, "\"ID\"")) continue;  // program output before the report
      in_table = true;
    }
    if (!starts_with(line, "\"")) continue;  // program output interleaved with the report
    table.append(line);
    table += '\n';
  }
  const auto rows = parse_csv(table);
  if (rows.empty()) return r;
  r.columns = rows.front();
  const auto id = std::find(r.columns.begin(), r.columns.end(), "ID");
  const size_t id_col = static_cast<size_t>(id - r.columns.begin());
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].size() != r.columns.size()) continue;
    if (id_col < rows[i].size() && rows[i][id_col].empty()) {
      for (size_t c = 0; c < r.columns.size(); ++c) r.units[r.columns[c]] = rows[i][c];
      continue;
    }
    NcuRow row;
    for (size_t c = 0; c < r.columns.size(); ++c) row.values[r.columns[c]] = rows[i][c];
    r.rows.push_back(std::move(row));
  }
  return r;
}

std::vector<std::pair<std::string, double>> top_metrics(const NcuRow& row, std::string_view prefix,
                                                        std::string_view suffix, size_t n) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [name, value] : row.values) {
    if (name.size() < prefix.size() + suffix.size() || !starts_with(name, prefix) ||
        !ends_with(name, suffix))
      continue;
    if (auto v = parse_ncu_number(value))
      out.emplace_back(name.substr(prefix.size(), name.size() - prefix.size() - suffix.size()), *v);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (out.size() > n) out.resize(n);
  return out;
}

std::vector<std::string> parse_ncu_metric_list(std::string_view text) {
  std::vector<std::string> out;
  for (std::string_view line : split_lines(text)) {
    line = trim(line);
    if (!line.empty() && line.front() == '"') line.remove_prefix(1);
    const size_t end = line.find_first_of(" \t\",");
    const std::string_view tok = line.substr(0, end);
    if (tok.find("__") == std::string_view::npos || tok.front() == '_') continue;
    const bool ok = std::all_of(tok.begin(), tok.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
    });
    if (ok) out.emplace_back(tok);
  }
  return out;
}

std::string_view metric_base_name(std::string_view metric) {
  return metric.substr(0, metric.find('.'));
}

}  // namespace klab
