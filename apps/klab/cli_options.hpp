#pragma once
// CLI11 options that several commands share, validated the same way everywhere.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace klab::cli {

/// CLI11 validator: a given shape that is empty or blank is an error, never "no shape".
inline std::string shape_not_blank(const std::string& s) {
  return s.find_first_not_of(" \t") == std::string::npos ? std::string("shape is empty")
                                                         : std::string();
}

/// --shape: given means given; an empty or blank value is an error, never "no shape".
inline CLI::Option* add_shape_option(CLI::App* cmd, std::string& shape, const std::string& help) {
  return cmd->add_option("--shape", shape, help)->check(shape_not_blank);
}

/// --shape given once per shape, each checked as add_shape_option checks one.
inline CLI::Option* add_shapes_option(CLI::App* cmd, std::vector<std::string>& shapes,
                                      const std::string& help) {
  return cmd->add_option("--shape", shapes, help)->check(shape_not_blank);
}

}  // namespace klab::cli
