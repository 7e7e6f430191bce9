// klab sass: the instruction mix of a variant's kernels (cuobjdump), and where loads, math and
// stores sit; or of kernels by name, in klab's binary or a library's.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "apps/klab/cli.hpp"
#include "apps/klab/inspect.hpp"
#include "apps/klab/profile_records.hpp"
#include "apps/klab/tool_runner.hpp"
#include "klab/build_info.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/kernel_capture.hpp"
#include "klab/harness/profiler/all.hpp"

namespace klab::cli {

namespace fs = std::filesystem;

namespace {

std::string hex(uint32_t off) { return fmt::format("0x{:04x}", off); }

void print_sass_summary(const SassFunction& f) {
  const SassSummary s = summarize_sass(f);
  auto at = [&](int i) {
    return i >= 0 && i < static_cast<int>(f.instrs.size()) ? hex(f.instrs[i].offset) : "-";
  };
  std::cout << fmt::format("  {} instructions (NOPs excluded), {}..{}\n", s.instructions, at(0),
                           at(static_cast<int>(f.instrs.size()) - 1));
  std::cout << fmt::format("  {:<16} {:<12} {:>6}  {:<7} {:<7}\n", "group", "instruction", "count",
                           "first", "last");
  std::string group;
  for (const auto& r : s.rows) {
    std::cout << fmt::format("  {:<16} {:<12} {:>6}  {:<7} {:<7}\n",
                             r.group == group ? "" : r.group, r.name, r.count, at(r.first),
                             at(r.last));
    group = r.group;
  }
  std::cout << "  where:";
  for (const auto& r : s.regions)
    std::cout << fmt::format("  {} {}..{} ({})", r.group, at(r.first), at(r.last), r.count);
  std::cout << "\n";
  if (!s.loops.empty()) {
    auto loops = s.loops;
    std::stable_sort(loops.begin(), loops.end(), [](const auto& a, const auto& b) {
      return a.tail - a.head > b.tail - b.head;
    });
    std::cout << "  loops (backward branches), largest first:";
    for (size_t i = 0; i < loops.size() && i < 4; ++i)
      std::cout << fmt::format("  {}..{} ({} instr)", at(loops[i].head), at(loops[i].tail),
                               loops[i].tail - loops[i].head + 1);
    if (loops.size() > 4) std::cout << fmt::format("  (+{} more)", loops.size() - 4);
    std::cout << "\n";
  }
  if (s.main_loop) {
    const auto& m = *s.main_loop;
    auto share = [&](int n) { return m.instructions ? 100.0 * n / m.instructions : 0.0; };
    std::cout << fmt::format(
        "  main loop, one iteration on its fall-through path: {} instructions; math {} "
        "({:.1f}%{}){}, shared {}, global {}, barriers {}{}\n",
        m.instructions, m.math, share(m.math),
        m.top_math.empty() ? "" : fmt::format(", {} {}", m.top_math_count, m.top_math),
        m.special ? fmt::format(", special function (MUFU) {}", m.special) : "", m.shared, m.global,
        m.barrier,
        m.inner_loops
            ? fmt::format("; it holds {} inner loop(s), each body counted once", m.inner_loops)
            : "");
    if (m.ffma > 0)
      std::cout << fmt::format(
          "  FFMA in it with a register bank conflict: {} of {} ({:.1f}%; an estimate: three "
          "register-file reads in one bank, register % 2, reuse-cache hits excluded)\n",
          m.ffma_bank_conflicts, m.ffma, 100.0 * m.ffma_bank_conflicts / m.ffma);
  }
  if (s.tensor_loop && (!s.main_loop || s.tensor_loop->head != s.main_loop->head)) {
    const auto& t = *s.tensor_loop;
    std::cout << fmt::format(
        "  tensor loop (the innermost issuing tensor-core instructions), one iteration: {} "
        "instructions; tensor-core {} ({:.1f}%), shared {}, global {}, barriers {}\n",
        t.instructions, t.tensor, t.instructions ? 100.0 * t.tensor / t.instructions : 0.0,
        t.shared, t.global, t.barrier);
  }
  std::cout << "  layout: " << s.strip << "\n"
            << "          (start to end; G global load, S shared, M math, W global store, B "
               "barrier, L local, A atomic)\n";
  for (const auto& r : s.rows)
    if (r.group == "local (spill)") {
      std::cout << "  note: local-memory traffic (" << r.name
                << ") means register spills or a stack array\n";
      break;
    }
}

// Local-memory instructions (spills or a stack array) in the whole kernel.
int local_memory_instructions(const SassSummary& s) {
  int n = 0;
  for (const auto& r : s.rows)
    if (r.group == "local (spill)") n += r.count;
  return n;
}

// A markdown table of each kernel's loops (SassSummary::main_loop and tensor_loop), with a line
// saying how it was made: what a worklog cites as an instruction mix (a wgmma k loop's HGMMA
// share).
// A kernel's name for a table: demangled, its return type and parameter list dropped
// (function_name), without klab's and anonymous namespaces.
std::string short_kernel(const std::string& mangled) {
  std::string n = function_name(demangle(mangled));
  for (const std::string drop : {"(anonymous namespace)::", "klab::"})
    for (size_t at; (at = n.find(drop)) != std::string::npos;) n.erase(at, drop.size());
  return n;
}

std::string sass_table(const std::string& exe, const std::string& arch,
                       const std::vector<std::pair<std::string, SassSummary>>& summaries,
                       const std::map<std::string, std::string>& sources) {
  // The main loop's MUFU instructions (exponentials and the like) only where a kernel has some.
  bool with_mufu = false;
  for (const auto& [name, s] : summaries)
    with_mufu = with_mufu || (s.main_loop && s.main_loop->special);
  std::ostringstream f;
  f << "| source | kernel | instructions | local memory | main loop: instructions | its most "
       "frequent math | "
    << (with_mufu ? "its MUFU | " : "")
    << "tensor loop: instructions | tensor-core | share | shared | global | barriers | "
       "inner loops |\n"
    << "|---|---|---:|---:|---:|---|" << (with_mufu ? "---:|" : "")
    << "---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& [name, s] : summaries) {
    const auto src = sources.find(name);
    f << "| " << (src == sources.end() ? "-" : fs::path(src->second).filename().string()) << " | `"
      << short_kernel(name) << "` | " << s.instructions << " | " << local_memory_instructions(s)
      << " | ";
    if (s.main_loop)
      f << s.main_loop->instructions << " | "
        << (s.main_loop->top_math.empty()
                ? "-"
                : fmt::format("{} ({})", s.main_loop->top_math, s.main_loop->top_math_count))
        << " | " << (with_mufu ? fmt::format("{} | ", s.main_loop->special) : "");
    else
      f << "- | - | " << (with_mufu ? "- | " : "");
    if (!s.tensor_loop) {
      f << "- | - | - | - | - | - | - |\n";
      continue;
    }
    const auto& t = *s.tensor_loop;
    f << fmt::format("{} | {} | {:.1f}% | {} | {} | {} | {} |\n", t.instructions, t.tensor,
                     t.instructions ? 100.0 * t.tensor / t.instructions : 0.0, t.shared, t.global,
                     t.barrier, t.inner_loops);
  }
  const bool own = exe == self_exe();
  f << "\nGenerated by `klab sass --table` from "
    << (own ? fmt::format("klab's binary (build {}, {})", build::kGitSha, build::kCudaArchs)
            : "`" + fs::path(exe).filename().string() + "`" + (arch.empty() ? "" : " " + arch))
    << ", no GPU involved. Each loop is one iteration walked along its fall-through path "
       "(branches not taken, an inner loop's body counted once; NOPs excluded): the main loop "
       "is the one doing the most math, the tensor loop the innermost whose path issues "
       "tensor-core instructions (HMMA, HGMMA, QGMMA, IMMA), and the share is theirs of its "
       "instructions; shared, global and barriers count its shared-memory, global (TMA "
       "included) and barrier instructions (SYNCS, WARPGROUP, BAR)"
    << (with_mufu ? "; its MUFU, the main loop's special-function instructions (MUFU.EX2, "
                    "MUFU.RCP, ...: the XU pipe's)"
                  : "")
    << ".";
  return f.str();
}

}  // namespace

int cmd_sass(const InspectOptions& opt) {
  if (!opt.binary.empty()) {
    if (opt.kernel.empty() && !opt.list)
      throw UsageError(
          "sass --binary needs --kernel NAME or --list (a variant's kernels are klab's)");
    if (!opt.json.empty())
      throw UsageError("sass --json files records under a klab variant; not with --binary");
  }
  if ((!opt.table.empty() || !opt.readme.empty()) && opt.list)
    throw UsageError("sass --table and --readme table kernels' loops; not with --list");
  if (opt.readme.empty() != opt.section.empty())
    throw UsageError("sass --readme and --section go together");
  if (!opt.binary.empty()) {
    std::error_code ec;
    if (!fs::is_regular_file(opt.binary, ec))
      throw UsageError("sass --binary: no such file: " + opt.binary);
  }
  if (!opt.arch.empty() && opt.binary.empty())
    throw UsageError("sass --arch selects the architecture of a --binary's SASS");
  std::optional<Target> t;
  if (!opt.variant.empty()) t = resolve(opt);
  if (!opt.list && opt.kernel.empty() && !t)
    throw UsageError("sass needs a variant id, --kernel NAME or --list");
  if (!opt.json.empty() && !t)
    throw UsageError("sass --json needs a variant id (the record is filed under it)");
  const std::string cuobjdump = need_tool("cuobjdump", "sass", "the CUDA toolkit's cuobjdump");
  const std::string exe = opt.binary.empty() ? self_exe() : opt.binary;
  // A library holds its kernels for several architectures: read one.
  const std::string arch = opt.arch.empty() ? "" : " -arch " + quote(opt.arch);

  // The kernels to show: by name (any machine), or the ones the variant launches (needs a GPU).
  std::vector<std::string> names;
  std::map<std::string, std::string> sources;  // kernel -> its module's source file, where named
  std::vector<CapturedKernel> captured;
  if (opt.list || !opt.kernel.empty()) {
    const Output sym = run(quote(cuobjdump) + arch + " -symbols " + quote(exe) + " 2>&1");
    if (sym.code != 0 && sym.text.find("does not contain device code") != std::string::npos)
      throw UsageError(exe +
                       " holds no device code (a build without CUDA): nothing to disassemble");
    if (sym.code != 0) throw Error("cuobjdump -symbols failed: " + sym.text.substr(0, 300));
    const std::vector<DeviceSymbol> all = parse_cuobjdump_symbols(sym.text);
    std::vector<DeviceSymbol> match;
    for (const auto& s : all) {
      const std::string readable = demangle(s.name);
      if (std::all_of(opt.kernel.begin(), opt.kernel.end(), [&](const std::string& k) {
            return s.name.find(k) != std::string::npos || readable.find(k) != std::string::npos;
          }))
        match.push_back(s);
    }
    if (opt.list) {
      std::string source;
      for (const auto& s : match) {
        if (s.source != source) std::cout << (source = s.source) << "\n";
        std::cout << "  " << demangle(s.name) << "\n    " << s.name << "\n";
      }
      std::cout << match.size() << " kernels in " << exe << "\n";
      return 0;
    }
    if (match.empty())
      throw UsageError("no kernel in " + exe + " matches '" +
                       fmt::format("{}", fmt::join(opt.kernel, "' and '")) +
                       "' (see `klab sass --list`)");
    for (const auto& s : match) {
      names.push_back(s.name);
      if (!s.source.empty()) sources[s.name] = s.source;
    }
  } else {
    const DeviceInfo& d = device_info();
    if (!d.present)
      throw UsageError("sass " + opt.variant + " needs a GPU to see which kernels it launches (" +
                       d.absent_reason +
                       "); without one, name the kernel: --kernel NAME (see `klab sass --list`)");
    captured = capture_kernels(*t->family, *t->variant, t->problem);
    for (const auto& k : captured)
      if (std::find(names.begin(), names.end(), k.name) == names.end()) names.push_back(k.name);
  }
  if (names.empty()) {
    std::cout << "no kernel launched\n";
    return 0;
  }

  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ",") + n;
  const Output sass = run(quote(cuobjdump) + arch + " -sass -fun " + quote(list) + " " +
                          quote(exe) + " 2>/dev/null");
  const std::vector<SassFunction> fns = parse_sass(sass.text);
  std::vector<std::pair<std::string, SassSummary>> summaries;  // for --json
  if (t) print_header(*t);
  for (const auto& name : names) {
    std::cout << "\nkernel: " << demangle(name) << "\n  " << name << "\n";
    auto it =
        std::find_if(fns.begin(), fns.end(), [&](const SassFunction& f) { return f.name == name; });
    if (it == fns.end()) {
      auto c = std::find_if(captured.begin(), captured.end(),
                            [&](const CapturedKernel& k) { return k.name == name; });
      const std::string origin = c != captured.end() ? short_origin(*c) : "";
      std::cout << "  not in the klab binary"
                << (origin.empty() ? "" : " (a library kernel: " + origin + ")")
                << "; its SASS lives in that library: klab sass --binary <library> --arch sm_90 "
                   "--kernel '"
                << name << "'\n";
      continue;
    }
    print_sass_summary(*it);
    summaries.emplace_back(name, summarize_sass(*it));
  }
  if (!opt.table.empty() || !opt.readme.empty()) {
    const std::string md = sass_table(exe, opt.arch, summaries, sources);
    if (!opt.table.empty()) {
      std::ofstream f(opt.table);
      if (!f) throw UsageError("cannot write " + opt.table);
      f << md << "\n";
      std::cout << "\ntable of " << summaries.size() << " kernel(s) written to " << opt.table
                << "\n";
    }
    if (!opt.readme.empty()) {
      replace_marked_section(opt.readme, opt.section, md);
      std::cout << "\ntable of " << summaries.size() << " kernel(s) written into " << opt.readme
                << " (" << opt.section << ")\n";
    }
  }
  if (!opt.json.empty()) {
    append_profile_record(opt.json, sass_record(t->variant->info.id, t->family->name, t->problem,
                                                t->family->counts(t->problem), summaries));
    std::cout << "\nrecord appended to " << opt.json << "\n";
  }
  if (!opt.out.empty()) {
    std::ofstream f(opt.out);
    if (!f) throw UsageError("cannot write " + opt.out);
    std::set<std::string> written;  // a template instantiated in two files is listed twice
    for (const auto& fn : fns)
      if (written.insert(fn.name).second) f << fn.listing << "\n";
    std::cout << "\nSASS written to " << opt.out << "\n";
  }
  if (!opt.ptx.empty()) {
    // cuobjdump prints whole PTX modules: keep the kernels' own entries.
    const Output ptx = run(quote(cuobjdump) + arch + " -ptx " + quote(exe) + " 2>/dev/null");
    std::ofstream f(opt.ptx);
    if (!f) throw UsageError("cannot write " + opt.ptx);
    int found = 0;
    for (const auto& n : names)
      if (std::string entry = extract_ptx_entry(ptx.text, n); !entry.empty()) {
        f << "// " << demangle(n) << "\n" << entry << "\n";
        ++found;
      }
    std::cout << "PTX of " << found << " kernel(s) written to " << opt.ptx << "\n";
  }
  return 0;
}

}  // namespace klab::cli
