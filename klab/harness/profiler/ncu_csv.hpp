#pragma once
// Parsers for Nsight Compute's output: the CSV of `ncu --csv --page raw` and the metric list of
// `ncu --query-metrics`. Host code only, tested on embedded samples.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace klab {

/// RFC 4180 CSV: quoted fields, "" inside quotes, separators and newlines inside quotes.
std::vector<std::vector<std::string>> parse_csv(std::string_view text);

/// An ncu value as a number: "5,376" -> 5376 (thousands separators), "1.5", "-3e+02";
/// nullopt for "", "n/a", "(256, 1, 1)" and other non-numbers.
std::optional<double> parse_ncu_number(std::string_view s);

/// One profiled kernel launch: column name -> value text.
struct NcuRow {
  std::map<std::string, std::string, std::less<>> values;
  std::optional<double> number(std::string_view column) const;
  std::string text(std::string_view column) const;  ///< "" when absent
};

struct NcuReport {
  std::vector<std::string> columns;
  std::map<std::string, std::string, std::less<>> units;  ///< from ncu's units row
  std::vector<NcuRow> rows;
  std::vector<std::string> messages;  ///< "==PROF==", "==ERROR==", "==WARNING==" lines
};

/// Parses `ncu --csv --page raw` output. The table starts at the header line ("ID",...); lines
/// before it (and tool messages anywhere) are not data; the units row (empty ID) fills `units`.
NcuReport parse_ncu_csv(std::string_view text);

/// Columns of `row` named prefix<X>suffix with numeric values, largest first (at most n),
/// as (X, value): e.g. the warp-stall reasons.
std::vector<std::pair<std::string, double>> top_metrics(const NcuRow& row, std::string_view prefix,
                                                        std::string_view suffix, size_t n);

/// Metric names from `ncu --query-metrics` output (first token of each line that looks like
/// unit__name). Empty when the text holds none.
std::vector<std::string> parse_ncu_metric_list(std::string_view text);

/// "dram__bytes_read.sum" -> "dram__bytes_read" (what --query-metrics lists).
std::string_view metric_base_name(std::string_view metric);

}  // namespace klab
