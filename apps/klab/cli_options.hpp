#pragma once
// CLI11 options that several commands share, validated the same way everywhere.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>
#include <vector>

namespace klab::cli {

/// CLI11 validator: a given shape that is empty or blank is an error, never "no shape".
inline std::string shape_not_blank(const std::string& s) {
  return s.find_first_not_of(" \t") == std::string::npos ? std::string("shape is empty")
                                                         : std::string();
}

/// CLI11 validator of a file the command will write (--json, --md, --plot, --out): its folder
/// must exist and it must not be a folder, so that a long run never ends unable to write. "-"
/// (stdout, where an option takes it) passes.
inline std::string writable_path(const std::string& path) {
  namespace fs = std::filesystem;
  if (path == "-") return "";
  if (path.empty()) return "the output path is empty";
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent))
    return "cannot write " + path + ": no folder " + parent.string();
  if (fs::is_directory(path)) return "cannot write " + path + ": it is a folder";
  return "";
}

/// CLI11 validator of a folder the command will write into (made when missing): its parent
/// must exist, and it must not be a file.
inline std::string writable_folder(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) return "the output folder is empty";
  if (fs::exists(path) && !fs::is_directory(path)) return path + " is a file, not a folder";
  std::string folder = path;
  while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
  const fs::path parent = fs::path(folder).parent_path();
  if (!parent.empty() && !fs::is_directory(parent))
    return "cannot write into " + path + ": no folder " + parent.string();
  return "";
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
