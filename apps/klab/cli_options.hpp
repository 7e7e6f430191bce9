#pragma once
// CLI11 options that several commands share, validated the same way everywhere.
#include <CLI/CLI.hpp>
#include <cmath>
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
/// must exist and it must not be a folder, so that a long run never ends unable to write.
inline std::string writable_path(const std::string& path) {
  namespace fs = std::filesystem;
  if (path == "-") return "'-' (stdout) is not taken here: name a file";
  if (path.empty()) return "the output path is empty";
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent))
    return "cannot write " + path + ": no folder " + parent.string();
  if (fs::is_directory(path)) return "cannot write " + path + ": it is a folder";
  return "";
}

/// CLI11 validator of a plot file (--plot): writable_path, named .png, .svg or .pdf (the formats
/// the plotting scripts' matplotlib writes), so that a run never ends unable to plot.
inline std::string plot_path(const std::string& path) {
  if (std::string bad = writable_path(path); !bad.empty()) return bad;
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext != ".png" && ext != ".svg" && ext != ".pdf")
    return "cannot plot into " + path + ": name a .png, .svg or .pdf file";
  return "";
}

/// writable_path, or "-" for stdout (the options that print their records there).
inline std::string writable_path_or_stdout(const std::string& path) {
  return path == "-" ? std::string() : writable_path(path);
}

/// CLI11 validator of a folder the command will write into (made, with its parents, when
/// missing): it must not be a file, nor lie below one.
inline std::string writable_folder(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) return "the output folder is empty";
  fs::path at = fs::absolute(path).lexically_normal();
  while (!at.empty() && !fs::exists(at) && at != at.root_path()) at = at.parent_path();
  if (fs::exists(at) && !fs::is_directory(at))
    return "cannot write into " + path + ": " + at.string() + " is a file";
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

/// CLI11 validator of an unsigned option (--misalign, --seed): a leading '-' is an error, where the
/// parse alone would wrap it around to a huge value.
inline CLI::Validator non_negative_integer() {
  return CLI::Validator(
      [](const std::string& v) -> std::string {
        return !v.empty() && v[0] == '-' ? "must be >= 0, got " + v : "";
      },
      "INT >= 0");
}

/// --seed: the inputs' seed, 0 for a fresh one (recorded either way).
template <class Int>
CLI::Option* add_seed_option(CLI::App* cmd, Int& seed) {
  return cmd->add_option("--seed", seed, "input seed (0: fresh, recorded)")
      ->check(non_negative_integer());
}

/// CLI11 validator of a finite number that `ok` accepts; else "must be <want>, got <text>".
template <class Ok>
CLI::Validator finite_number(Ok ok, const std::string& want, const std::string& name) {
  return CLI::Validator(
      [ok, want](std::string& v) {
        double x = NAN;
        try {
          size_t used = 0;
          x = std::stod(v, &used);
          if (used != v.size()) x = NAN;
        } catch (const std::exception&) {  // not a number, or out of double's range
        }
        return std::isfinite(x) && ok(x) ? std::string() : "must be " + want + ", got " + v;
      },
      name);
}

/// --max-time: a finite number of seconds above 0 (a negative or zero cap would leave no sample).
inline CLI::Option* add_max_time_option(CLI::App* cmd, double& seconds) {
  return cmd->add_option("--max-time", seconds, "wall-clock cap per benchmark, seconds")
      ->check(finite_number([](double x) { return x > 0; }, "a number of seconds above 0",
                            "SECONDS > 0"));
}

/// --noise: the target relative noise, a finite fraction in [0, 1) (0: sample to --max-time).
inline CLI::Option* add_noise_option(CLI::App* cmd, double& noise) {
  return cmd->add_option("--noise", noise, "target relative noise (MAD-based) before stopping")
      ->check(finite_number([](double x) { return x >= 0 && x < 1; }, "a fraction in [0, 1)",
                            "FRACTION in [0, 1)"));
}

}  // namespace klab::cli
