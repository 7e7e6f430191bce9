#include "apps/klab/profile_records.hpp"

#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <fstream>
#include <map>
#include <optional>

#include "apps/klab/cli.hpp"
#include "apps/klab/cli_options.hpp"
#include "apps/klab/extra_commands.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/result.hpp"

namespace klab::cli {

namespace {

constexpr std::string_view kStallPrefix = "smsp__average_warps_issue_stalled_";
constexpr std::string_view kStallSuffix = "_per_issue_active.ratio";

NcuRow row_of(const nlohmann::json& kernel) {
  NcuRow r;
  for (const auto& [k, v] : kernel.items())
    r.values[k] = v.is_string() ? v.get<std::string>() : v.dump();
  return r;
}

std::string pct(const NcuRow& r, std::string_view m) {
  const auto v = r.number(m);
  return v ? fmt::format("{:.1f}%", *v) : "-";
}

std::string share(std::optional<double> part, std::optional<double> whole) {
  return part && whole && *whole > 0 ? fmt::format("{:.1f}%", 100 * *part / *whole) : "-";
}

}  // namespace

nlohmann::json profile_record(const std::string& variant, const std::string& family,
                              const Problem& p, const std::string& set, const Counts& counts,
                              const NcuReport& rep) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& row : rep.rows) {
    nlohmann::json k = nlohmann::json::object();
    for (const auto& [col, val] : row.values) k[col] = val;
    kernels.push_back(std::move(k));
  }
  nlohmann::json j = {{"variant", variant},
                      {"family", family},
                      {"problem", p.shape.str()},
                      {"dtype", std::string(dtype_name(p.dtype))},
                      {"set", set},
                      {"timestamp", now_iso8601()},
                      {"flops", counts.flops},
                      {"bytes", counts.bytes},
                      {"kernels", kernels}};
  j.update(machine_json());
  return j;
}

nlohmann::json sass_record(const std::string& variant, const std::string& family, const Problem& p,
                           const Counts& counts,
                           const std::vector<std::pair<std::string, SassSummary>>& kernels) {
  NcuReport rep;
  for (const auto& [name, s] : kernels) {
    NcuRow row;
    row.values["Kernel Name"] = name;
    row.values["sass__instructions"] = std::to_string(s.instructions);
    for (const auto& r : s.rows) row.values["sass__count_" + r.name] = std::to_string(r.count);
    if (s.main_loop) {
      const auto& m = *s.main_loop;
      row.values["sass__loop_instructions"] = std::to_string(m.instructions);
      row.values["sass__loop_math"] = std::to_string(m.math);
      row.values["sass__loop_math_op"] = m.top_math;
      row.values["sass__loop_shared"] = std::to_string(m.shared);
      row.values["sass__loop_global"] = std::to_string(m.global);
      row.values["sass__loop_barriers"] = std::to_string(m.barrier);
      row.values["sass__loop_inner"] = std::to_string(m.inner_loops);
      row.values["sass__loop_ffma"] = std::to_string(m.ffma);
      row.values["sass__loop_ffma_bank_conflicts"] = std::to_string(m.ffma_bank_conflicts);
    }
    rep.rows.push_back(std::move(row));
  }
  return profile_record(variant, family, p, "sass", counts, rep);
}

void append_profile_record(const std::string& path, const nlohmann::json& record) {
  nlohmann::json all = nlohmann::json::array();
  if (std::filesystem::exists(path))
    for (auto& r : load_profile_records({path})) all.push_back(std::move(r));
  all.push_back(record);
  std::ofstream out(path);
  if (!out) throw UsageError("cannot write " + path);
  out << all.dump(1) << "\n";
}

std::vector<nlohmann::json> load_profile_records(const std::vector<std::string>& paths) {
  std::vector<nlohmann::json> out;
  for (const auto& path : paths) {
    const nlohmann::json j = read_json_file(path);
    if (!j.is_array())
      throw UsageError(path +
                       " is not a profile record file (a JSON array from `klab profile --json`)");
    for (const auto& r : j) {
      if (!r.is_object() || !r.contains("kernels") || !r.contains("variant"))
        throw UsageError(path +
                         " is not a profile record file (a JSON array from `klab profile --json`)");
      out.push_back(r);
    }
  }
  return out;
}

namespace {

std::string short_kernel_name(const std::string& mangled) {
  std::string k = demangle(mangled);
  if (const auto paren = k.find('('); paren != std::string::npos) k = k.substr(0, paren);
  return k.size() > 48 ? k.substr(0, 45) + "..." : k;
}

/// The `klab sass --json` records of one family: a row per kernel. The bank-conflict column
/// (`klab sass`'s FFMA estimate) appears when a record of the family has it.
std::string sass_markdown(const std::string& family,
                          const std::vector<const nlohmann::json*>& recs) {
  auto bank_estimate = [](const NcuRow& row) -> std::string {
    const auto ffma = row.number("sass__loop_ffma"),
               conflicts = row.number("sass__loop_ffma_bank_conflicts");
    if (!ffma || !conflicts || *ffma <= 0) return "-";
    return fmt::format("{:.0f} of {:.0f} ({:.1f}%)", *conflicts, *ffma, 100 * *conflicts / *ffma);
  };
  bool with_banks = false;
  for (const auto* r : recs)
    for (const auto& k : (*r)["kernels"])
      with_banks = with_banks || bank_estimate(row_of(k)) != "-";
  std::string md = fmt::format("### {} — SASS instruction mix (static)\n\n", family);
  md += std::string(
            "| variant | problem | kernel | instructions | main loop: instructions per iteration | "
            "math in it | shared accesses | global accesses | barriers |") +
        (with_banks ? " FFMA with a bank conflict (est.) |" : "") +
        "\n|---|---|---|---:|---:|---:|---:|---:|---:|" + (with_banks ? "---:|" : "") + "\n";
  for (const auto* r : recs)
    for (const auto& k : (*r)["kernels"]) {
      const NcuRow row = row_of(k);
      const auto loop = row.number("sass__loop_instructions");
      const auto math = row.number("sass__loop_math");
      auto n = [&](std::string_view m) {
        auto v = row.number(m);
        return v ? fmt::format("{:.0f}", *v) : std::string("-");
      };
      const bool nested = row.number("sass__loop_inner").value_or(0) > 0;
      md += fmt::format("| {} | {} {} | `{}` | {} | {}{} | {} | {} | {} | {} |{}\n",
                        r->value("variant", ""), r->value("problem", ""), r->value("dtype", ""),
                        short_kernel_name(row.text("Kernel Name")), n("sass__instructions"),
                        n("sass__loop_instructions"), nested ? " (inner loop counted once)" : "",
                        loop && math && *loop > 0
                            ? fmt::format("{:.0f} {} ({:.1f}%)", *math,
                                          row.text("sass__loop_math_op"), 100 * *math / *loop)
                            : std::string("-"),
                        n("sass__loop_shared"), n("sass__loop_global"), n("sass__loop_barriers"),
                        with_banks ? " " + bank_estimate(row) + " |" : std::string());
    }
  return md + "\n";
}

}  // namespace

std::string profile_markdown(const std::vector<nlohmann::json>& records,
                             const std::vector<std::string>& files) {
  std::map<std::string, std::vector<const nlohmann::json*>> by_family,
      sass_by_family;  // sorted by family name
  for (const auto& r : records)
    (r.value("set", "") == "sass" ? sass_by_family : by_family)[r.value("family", "")].push_back(
        &r);
  std::string md;
  std::string newest, device;
  for (const auto& r : records) newest = std::max(newest, r.value("timestamp", std::string()));
  for (const auto& [family, recs] : sass_by_family) md += sass_markdown(family, recs);
  constexpr std::string_view kXu = "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active";
  for (const auto& [family, recs] : by_family) {
    // The XU (MUFU) pipe's column only where a record of the family measured it (older records
    // did not ask for it).
    bool with_xu = false;
    for (const auto* r : recs)
      for (const auto& k : (*r)["kernels"]) with_xu = with_xu || row_of(k).number(kXu).has_value();
    md += fmt::format("### {} — Nsight Compute\n\n", family);
    md += fmt::format(
        "| variant | problem | kernel | µs (ncu) | DRAM % peak | DRAM bytes ÷ minimum | L2 hit | "
        "L2 sectors read (hit) / write | issue active | "
        "FMA pipe | tensor pipe | {}occupancy (achieved) | shared conflicts ld / st | top stalls "
        "(cycles per issue) |\n",
        with_xu ? "XU pipe (MUFU) | " : "");
    md += fmt::format("|---|---|---|---:|---:|---:|---:|---|---:|---:|---:|{}---:|---|---|\n",
                      with_xu ? "---:|" : "");
    for (const auto* r : recs) {
      if (r->contains("device") && (*r)["device"].is_object())
        device = (*r)["device"].value("name", device);
      const auto& kernels = (*r)["kernels"];
      for (const auto& k : kernels) {
        const NcuRow row = row_of(k);
        const double minimal = kernels.size() == 1 ? r->value("bytes", 0.0) : 0.0;
        const auto rd = row.number("dram__bytes_read.sum"),
                   wr = row.number("dram__bytes_write.sum");
        const std::string traffic = rd && minimal > 0
                                        ? fmt::format("{:.2f}x", (*rd + wr.value_or(0)) / minimal)
                                        : std::string("-");
        auto time = row.number("gpu__time_duration.sum");
        std::string stalls;
        for (const auto& [name, v] : top_metrics(row, kStallPrefix, kStallSuffix, 3))
          stalls += (stalls.empty() ? "" : ", ") + fmt::format("{} {:.2f}", name, v);
        const std::string kname = short_kernel_name(row.text("Kernel Name"));
        // L2 sectors by direction (32 bytes each), and how many of the reads hit.
        const auto l2r = row.number("lts__t_sectors_op_read.sum"),
                   l2w = row.number("lts__t_sectors_op_write.sum"),
                   l2rh = row.number("lts__t_sectors_op_read_lookup_hit.sum");
        const std::string l2 =
            l2r && l2w ? fmt::format("{:.2f} GB ({}) / {:.2f} GB", *l2r * 32 / 1e9,
                                     l2rh && *l2r > 0 ? fmt::format("{:.1f}%", 100 * *l2rh / *l2r)
                                                      : std::string("-"),
                                     *l2w * 32 / 1e9)
                       : std::string("-");
        md += fmt::format(
            "| {} | {} {} | `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {}{} | {} / {} | {} |\n",
            r->value("variant", ""), r->value("problem", ""), r->value("dtype", ""), kname,
            time ? fmt::format("{:.1f}", *time / 1e3) : "-",
            pct(row, "dram__throughput.avg.pct_of_peak_sustained_elapsed"), traffic,
            pct(row, "lts__t_sector_hit_rate.pct"), l2,
            pct(row, "smsp__issue_active.avg.pct_of_peak_sustained_active"),
            pct(row, "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"),
            pct(row, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"),
            with_xu ? pct(row, kXu) + " | " : std::string(),
            pct(row, "sm__warps_active.avg.pct_of_peak_sustained_active"),
            share(row.number("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
                  row.number("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")),
            share(row.number("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
                  row.number("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")),
            stalls.empty() ? "-" : stalls);
      }
    }
    md += "\n";
  }
  std::string list;
  for (const auto& f : files) list += (list.empty() ? "" : ", ") + f;
  md += fmt::format(
      "Generated by `klab profile-report` from {} record(s) ({}){}; newest {}. Nsight Compute "
      "with `--clock-control none`, L2 flushed before the profiled launch; bank conflicts as a "
      "share of shared-memory wavefronts. SASS tables: `klab sass --json`, from the binary; the "
      "main loop's iteration is its fall-through path (edge-case branches not taken).\n",
      records.size(), list, device.empty() ? "" : ", measured on " + device, newest);
  return md;
}

namespace {

struct ProfileReportOptions {
  std::vector<std::string> inputs, families;
  std::string md, readme, section = "profile";
};

int cmd_profile_report(const ProfileReportOptions& o) {
  auto records = load_profile_records(o.inputs);
  if (!o.families.empty())
    std::erase_if(records, [&](const nlohmann::json& r) {
      return std::find(o.families.begin(), o.families.end(), r.value("family", "")) ==
             o.families.end();
    });
  if (records.empty())
    throw UsageError("no profile records of the requested families in the inputs");
  const std::string md = profile_markdown(records, o.inputs);
  if (!o.md.empty()) {
    std::ofstream out(o.md);
    if (!out) throw UsageError("cannot write " + o.md);
    out << md;
    std::cerr << "wrote " << o.md << "\n";
  }
  if (!o.readme.empty()) {
    replace_marked_section(o.readme, o.section, md);
    std::cerr << "updated " << o.readme << "\n";
  }
  if (o.md.empty() && o.readme.empty()) std::cout << md;
  return 0;
}

}  // namespace

void add_profile_report_command(CLI::App& app, CommandList& out) {
  auto o = std::make_shared<ProfileReportOptions>();
  auto* cmd = app.add_subcommand(
      "profile-report", "markdown tables of Nsight Compute records (`klab profile --json`)");
  cmd->add_option("inputs", o->inputs, "profile record files")->required();
  cmd->add_option("--md", o->md, "write the markdown here (default: stdout)")->check(writable_path);
  cmd->add_option("--readme", o->readme, "replace the <!-- klab:profile --> section of this file")
      ->check(CLI::ExistingFile);
  cmd->add_option("--family", o->families, "only these families");
  cmd->add_option("--section", o->section,
                  "with --readme: the <!-- klab:NAME --> section to replace (default: profile)");
  out.emplace_back(cmd, [o] { return cmd_profile_report(*o); });
}

}  // namespace klab::cli
