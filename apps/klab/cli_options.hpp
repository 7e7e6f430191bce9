#pragma once
// CLI11 options that several commands share, validated the same way everywhere.
#include <CLI/CLI.hpp>
#include <string>

namespace klab::cli {

/// --shape: given means given; an empty or blank value is an error, never "no shape".
inline CLI::Option* add_shape_option(CLI::App* cmd, std::string& shape, const std::string& help) {
  return cmd->add_option("--shape", shape, help)->check([](const std::string& s) {
    return s.find_first_not_of(" \t") == std::string::npos ? std::string("shape is empty")
                                                           : std::string();
  });
}

}  // namespace klab::cli
