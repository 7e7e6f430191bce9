// klab occupancy / sass / profile: look inside the kernels a variant launches.
//   occupancy  the kernels (found by capturing one launch into a CUDA graph), their resources,
//              and the occupancy worked out by hand beside the CUDA occupancy API
//   sass       the instruction mix of their SASS (cuobjdump), and where loads, math and stores sit
//   profile    Nsight Compute on `klab bench` restricted to those kernels: a short summary
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <set>

#include "apps/klab/extra_commands.hpp"
#include "apps/klab/profile_records.hpp"
#include "kernels/register.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/ceilings.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/kernel_capture.hpp"
#include "klab/harness/occupancy.hpp"
#include "klab/harness/profiler/all.hpp"

namespace klab::cli {

namespace {

namespace fs = std::filesystem;

struct InspectOptions {
  std::string variant, shape, dtype;
  std::string kernel;       // sass: substring of a kernel name
  std::string out;          // sass: SASS file; profile: folder
  std::string ptx;          // sass: PTX file
  bool list = false;        // sass: list the kernels in this binary
  std::string set = "all";  // profile: sol | memory | stalls | all
  std::string json;         // profile, sass: append a record to this JSON file
  std::string binary;       // sass: read kernels from this file instead of klab's own binary
  std::string arch;         // sass: with --binary, the SASS architecture to read (sm_90, ...)
};

struct Target {
  const Family* family;
  const Variant* variant;
  Problem problem;
};

// The variant and the problem to inspect: --shape (+ --dtype), else the family's first headline
// problem the variant runs (of --dtype when given). Bad input: UsageError, before any GPU work.
Target resolve(const InspectOptions& o) {
  if (o.variant.find('.') == std::string::npos)
    throw UsageError("'" + o.variant + "' is not a variant id (family.vNN_name; see `klab list`)");
  auto [f, v] = registry().variant(o.variant);
  std::optional<DType> want;
  if (!o.dtype.empty()) {
    want = parse_dtype(o.dtype);
    if (std::find(v->info.dtypes.begin(), v->info.dtypes.end(), *want) == v->info.dtypes.end())
      throw UsageError(v->info.id + " does not take dtype " + o.dtype);
  }
  Problem p;
  if (!o.shape.empty()) {
    p = make_problem(*f, o.shape, want ? o.dtype : std::string(dtype_name(v->info.dtypes.front())));
  } else {
    bool found = false;
    for (const Problem& h : f->headline) {
      if ((want && h.dtype != *want) || !can_run(*v, h).ok()) continue;
      p = h;
      found = true;
      break;
    }
    if (!found)
      throw UsageError(v->info.id + " runs none of " + f->name + "'s headline problems" +
                       (want ? " in " + o.dtype : std::string()) + "; give --shape");
  }
  if (Status st = can_run(*v, p); !st.ok())
    throw UsageError(v->info.id + " cannot run " + p.str() + ": " + st.reason);
  if (v->info.device != Device::gpu)
    throw UsageError(v->info.id + " is a CPU variant: it launches no GPU kernels");
  return {f, v, p};
}

void require_gpu(const std::string& what) {
  const DeviceInfo& d = device_info();
  if (!d.present) throw UsageError(what + " needs a GPU, and there is none: " + d.absent_reason);
}

// ---- processes and tools ----

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct Output {
  int code = -1;
  std::string text;
};

Output run(const std::string& cmd) {
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw Error("cannot run: " + cmd);
  Output o;
  std::array<char, 1 << 16> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) o.text.append(buf.data(), n);
  const int status = pclose(p);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

std::string self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot read /proc/self/exe: " + ec.message());
  return p.string();
}

bool executable(const fs::path& p) {
  return !p.empty() && access(p.c_str(), X_OK) == 0 && !fs::is_directory(p);
}

// PATH, then $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin (and Nsight Compute's own
// install folders for ncu). "" when absent.
std::string find_tool(const std::string& name) {
  std::vector<fs::path> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::string_view s(path);
    for (size_t a = 0; a <= s.size();) {
      size_t b = s.find(':', a);
      if (b == std::string_view::npos) b = s.size();
      if (b > a) dirs.emplace_back(std::string(s.substr(a, b - a)));
      a = b + 1;
    }
  }
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(env)) dirs.emplace_back(fs::path(v) / "bin");
  dirs.emplace_back("/usr/local/cuda/bin");
  if (name ==
      "ncu") {  // /opt/nvidia/nsight-compute/<version>/, /usr/local/cuda/nsight-compute-<version>/
    std::error_code ec;
    std::vector<fs::path> installs;
    for (const auto& e : fs::directory_iterator("/opt/nvidia/nsight-compute", ec))
      installs.push_back(e.path());
    for (const auto& e : fs::directory_iterator("/usr/local/cuda", ec))
      if (e.path().filename().string().starts_with("nsight-compute")) installs.push_back(e.path());
    std::sort(installs.rbegin(), installs.rend());  // newest version first
    dirs.insert(dirs.end(), installs.begin(), installs.end());
  }
  for (const auto& d : dirs)
    if (executable(d / name)) return (d / name).string();
  return {};
}

std::string need_tool(const std::string& name, const std::string& command,
                      const std::string& what) {
  std::string p = find_tool(name);
  if (p.empty())
    throw UsageError(command + " needs " + what + " (" + name +
                     "), which is not on PATH, in $CUDA_HOME/bin or in /usr/local/cuda/bin");
  return p;
}

std::string short_origin(const CapturedKernel& k) {
  if (k.origin.empty()) return "launched through the driver";
  std::error_code ec;
  if (fs::equivalent(k.origin, "/proc/self/exe", ec)) return "";
  return fs::path(k.origin).filename().string();
}

std::string bytes_text(double b) {
  if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.2f} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.1f} KB", b / 1e3);
  return fmt::format("{:.0f} B", b);
}

std::string dim3_text(const std::array<unsigned, 3>& d) {
  return fmt::format("({},{},{})", d[0], d[1], d[2]);
}

void print_header(const Target& t) {
  const DeviceInfo& d = device_info();
  std::cout << t.variant->info.id << "  " << t.problem.str();
  if (d.present)
    std::cout << "  on " << d.name << " (sm_" << d.sm() << ", " << d.sm_count << " SMs)";
  std::cout << "\n";
}

// ---- occupancy ----

void print_occupancy(const CapturedKernel& k, const SmLimits& sm, int sm_count) {
  KernelResources r;
  r.block_threads = k.block_threads();
  r.regs_per_thread = k.num_regs;
  r.static_smem = k.static_smem;
  r.dynamic_smem = k.dynamic_smem;
  r.carveout_pct = k.carveout_pct;
  const Occupancy o = compute_occupancy(r, sm);
  std::cout << fmt::format(
      "  launch     grid {} = {} blocks, block {} = {} threads, dynamic smem {} B{}\n",
      dim3_text(k.grid), k.grid_blocks(), dim3_text(k.block), k.block_threads(), k.dynamic_smem,
      k.launches > 1 ? fmt::format("  [x{} launches]", k.launches) : "");
  std::cout << fmt::format(
      "  resources  {} regs/thread, static smem {} B, local {} B/thread{}, max {} threads/block, "
      "sm_{}\n",
      k.num_regs, k.static_smem, k.local_bytes,
      k.local_bytes > 0 ? " (spills or stack)" : " (no spills)", k.max_threads_per_block,
      k.binary_version);
  if (!o.invalid.empty()) {
    std::cout << "  by hand (" << sm.arch << "): cannot launch: " << o.invalid << "\n";
    return;
  }
  auto lim = [&](int n) { return n >= kUnlimited ? std::string("-") : std::to_string(n); };
  auto mark = [&](Limiter l) {
    return std::find(o.limiters.begin(), o.limiters.end(), l) != o.limiters.end() ? "  <- limit"
                                                                                  : "";
  };
  std::cout << "  by hand (" << sm.arch << "):   blocks/SM\n";
  std::cout << fmt::format("    threads       {:>5}   {} per SM / {} per block{}\n",
                           lim(o.by_threads), sm.max_threads_per_sm, r.block_threads,
                           mark(Limiter::threads));
  std::cout << fmt::format("    warps         {:>5}   {} per SM / {} per block{}\n",
                           lim(o.by_warps), sm.max_warps_per_sm, o.warps_per_block,
                           mark(Limiter::warps));
  std::cout << fmt::format("    blocks        {:>5}   at most {} per SM{}\n", lim(o.by_blocks),
                           sm.max_blocks_per_sm, mark(Limiter::blocks));
  if (r.regs_per_thread > 0)
    std::cout << fmt::format(
        "    registers     {:>5}   {} regs x 32 -> {}/warp (unit {}); {} per sub-partition / {} -> "
        "{} warps x {}{}\n",
        lim(o.by_registers), r.regs_per_thread, o.regs_per_warp, sm.reg_alloc_unit,
        sm.regs_per_sm / sm.sub_partitions, o.regs_per_warp,
        (sm.regs_per_sm / sm.sub_partitions) / o.regs_per_warp, sm.sub_partitions,
        mark(Limiter::registers));
  else
    std::cout << "    registers         -   (register count unknown)\n";
  std::cout << fmt::format(
      "    shared memory {:>5}   {} B/block ({} static + {} dynamic + {} reserved, unit {}) in a "
      "{} KiB carveout{}{}\n",
      lim(o.by_smem), o.smem_per_block, r.static_smem, r.dynamic_smem, sm.smem_reserved_per_block,
      sm.smem_alloc_unit, o.smem_config / 1024,
      r.carveout_pct >= 0 ? fmt::format(" (preferred {}%)", r.carveout_pct) : "",
      mark(Limiter::shared_memory));
  std::cout << fmt::format(
      "  => {} blocks/SM = {} warps = {:.0f}% occupancy, limited by {}; needs a {} KiB carveout\n",
      o.blocks_per_sm, o.active_warps, 100 * o.occupancy, o.limiter_text(),
      o.smem_config_needed / 1024);
  if (k.cuda_blocks_per_sm >= 0)
    std::cout << fmt::format(
        "  cudaOccupancyMaxActiveBlocksPerMultiprocessor: {} blocks/SM ({})\n",
        k.cuda_blocks_per_sm,
        k.cuda_blocks_per_sm == o.blocks_per_sm ? "agrees" : "DIFFERS from the hand count");
  else
    std::cout << "  cudaOccupancyMaxActiveBlocksPerMultiprocessor: not available for this kernel\n";
  if (k.cluster_blocks > 1)
    std::cout << fmt::format(
        "  clusters of {} blocks: co-scheduling may lower this (cudaOccupancyMaxActiveClusters)\n",
        k.cluster_blocks);
  if (sm_count > 0 && o.blocks_per_sm > 0) {
    const double waves =
        static_cast<double>(k.grid_blocks()) / (double(o.blocks_per_sm) * sm_count);
    std::cout << fmt::format("  waves      {} blocks / ({} x {} SMs) = {:.2f}{}\n", k.grid_blocks(),
                             o.blocks_per_sm, sm_count, waves,
                             waves < 1 ? " (the grid does not fill the GPU)"
                             : waves - static_cast<int>(waves) > 0 && waves < 4
                                 ? " (a partial last wave)"
                                 : "");
  }
}

int cmd_occupancy(const InspectOptions& opt) {
  const Target t = resolve(opt);
  require_gpu("occupancy");
  const std::vector<CapturedKernel> ks = capture_kernels(*t.family, *t.variant, t.problem);
  const DeviceInfo& d = device_info();
  const SmLimits sm = SmLimits::sm90();
  print_header(t);
  if (d.sm() != 90)
    std::cout << "note: the by-hand rules are sm_90's; this device is sm_" << d.sm() << "\n";
  if (ks.empty()) std::cout << "no kernel launched (the launch captured no kernel node)\n";
  for (size_t i = 0; i < ks.size(); ++i) {
    const std::string origin = short_origin(ks[i]);
    std::cout << fmt::format("\nkernel {}/{}: {}{}\n", i + 1, ks.size(), ks[i].demangled,
                             origin.empty() ? "" : "  [" + origin + "]");
    print_occupancy(ks[i], sm, d.sm_count);
  }
  return 0;
}

// ---- sass ----

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
        "({:.1f}%{}), shared {}, global {}, barriers {}{}\n",
        m.instructions, m.math, share(m.math),
        m.top_math.empty() ? "" : fmt::format(", {} {}", m.top_math_count, m.top_math), m.shared,
        m.global, m.barrier,
        m.inner_loops
            ? fmt::format("; it holds {} inner loop(s), each body counted once", m.inner_loops)
            : "");
    if (m.ffma > 0)
      std::cout << fmt::format(
          "  FFMA in it with a register bank conflict: {} of {} ({:.1f}%; an estimate: three "
          "register-file reads in one bank, register % 2, reuse-cache hits excluded)\n",
          m.ffma_bank_conflicts, m.ffma, 100.0 * m.ffma_bank_conflicts / m.ffma);
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

int cmd_sass(const InspectOptions& opt) {
  if (!opt.binary.empty()) {
    if (opt.kernel.empty() && !opt.list)
      throw UsageError(
          "sass --binary needs --kernel NAME or --list (a variant's kernels are klab's)");
    if (!opt.json.empty())
      throw UsageError("sass --json files records under a klab variant; not with --binary");
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
  std::vector<CapturedKernel> captured;
  if (opt.list || !opt.kernel.empty()) {
    const Output sym = run(quote(cuobjdump) + arch + " -symbols " + quote(exe) + " 2>&1");
    if (sym.code != 0) throw Error("cuobjdump -symbols failed: " + sym.text.substr(0, 300));
    const std::vector<DeviceSymbol> all = parse_cuobjdump_symbols(sym.text);
    std::vector<DeviceSymbol> match;
    for (const auto& s : all)
      if (opt.kernel.empty() || s.name.find(opt.kernel) != std::string::npos ||
          demangle(s.name).find(opt.kernel) != std::string::npos)
        match.push_back(s);
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
      throw UsageError("no kernel in " + exe + " matches '" + opt.kernel +
                       "' (see `klab sass --list`)");
    for (const auto& s : match) names.push_back(s.name);
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

// ---- profile ----

const std::vector<std::string> kAlways = {"gpu__time_duration.sum",
                                          "launch__registers_per_thread",
                                          "launch__block_size",
                                          "launch__grid_size",
                                          "launch__occupancy_limit_registers",
                                          "launch__occupancy_limit_shared_mem",
                                          "launch__occupancy_limit_warps",
                                          "launch__occupancy_limit_blocks",
                                          "sm__maximum_warps_per_active_cycle_pct",
                                          "sm__warps_active.avg.pct_of_peak_sustained_active"};
const std::vector<std::string> kSol = {
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"};
const std::vector<std::string> kMemory = {
    "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sector_hit_rate.pct",
    "l1tex__t_sector_hit_rate.pct", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum",
    // L2 sectors by direction and outcome: where an L2 hit rate comes from (reads that hit, or
    // writes, which L2 takes without reading DRAM).
    "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum",
    "lts__t_sectors_op_read_lookup_hit.sum", "lts__t_sectors_op_write_lookup_hit.sum"};
constexpr std::string_view kStallPrefix = "smsp__average_warps_issue_stalled_";
constexpr std::string_view kStallSuffix = "_per_issue_active.ratio";
// Used when `ncu --query-metrics` cannot say which reasons this ncu knows.
const std::vector<std::string> kStallReasons = {"barrier",
                                                "branch_resolving",
                                                "dispatch_stall",
                                                "drain",
                                                "imc_miss",
                                                "lg_throttle",
                                                "long_scoreboard",
                                                "math_pipe_throttle",
                                                "membar",
                                                "mio_throttle",
                                                "misc",
                                                "no_instruction",
                                                "not_selected",
                                                "selected",
                                                "short_scoreboard",
                                                "sleeping",
                                                "tex_throttle",
                                                "wait"};

std::vector<std::string> profile_metrics(const std::string& set, const std::string& ncu) {
  std::vector<std::string> want = kAlways;
  const bool all = set == "all";
  if (all || set == "sol") want.insert(want.end(), kSol.begin(), kSol.end());
  if (all || set == "memory") want.insert(want.end(), kMemory.begin(), kMemory.end());
  const bool stalls = all || set == "stalls";
  if (stalls) want.push_back("smsp__average_warp_latency_per_inst_issued.ratio");

  // Keep what this ncu knows on this GPU: an unknown metric would fail the whole run. The list
  // is trusted only when it holds metrics every ncu has (else it was not the format we read);
  // launch statistics are not counters and may be missing from it.
  const Output q = run(quote(ncu) + " --query-metrics 2>&1");
  std::vector<std::string> known_list =
      q.code == 0 ? parse_ncu_metric_list(q.text) : std::vector<std::string>{};
  std::set<std::string, std::less<>> known(known_list.begin(), known_list.end());
  if (!known.contains("dram__bytes_read") || !known.contains("sm__throughput")) known.clear();
  std::vector<std::string> out;
  for (const auto& m : want)
    if (known.empty() || known.contains(metric_base_name(m)) || m.starts_with("launch__") ||
        m == "sm__maximum_warps_per_active_cycle_pct")
      out.push_back(m);
  if (stalls) {
    const std::string_view base_suffix =
        kStallSuffix.substr(0, kStallSuffix.rfind('.'));  // "_per_issue_active"
    bool any = false;
    for (const auto& k : known)
      if (k.starts_with(kStallPrefix) && k.ends_with(base_suffix)) {
        out.push_back(k + ".ratio");
        any = true;
      }
    if (!any)
      for (const auto& r : kStallReasons)
        out.push_back(std::string(kStallPrefix) + r + std::string(kStallSuffix));
  }
  return out;
}

std::string regex_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) o += '\\';
    o += c;
  }
  return o;
}

void print_profile_row(const NcuRow& r, const Counts& counts) {
  auto num = [&](std::string_view m) { return r.number(m); };
  auto pct = [&](std::string_view m) {
    auto v = num(m);
    return v ? fmt::format("{:.1f}%", *v) : std::string("n/a");
  };
  std::cout << "\nkernel: " << demangle(r.text("Kernel Name")) << "\n";
  std::cout << fmt::format("  launch   grid {} block {}, {} regs/thread", r.text("Grid Size"),
                           r.text("Block Size"), r.text("launch__registers_per_thread"));
  if (auto t = num("gpu__time_duration.sum"))
    std::cout << fmt::format(", {:.2f} us (under the profiler)", *t / 1e3);
  std::cout << "\n";
  if (auto th = num("sm__maximum_warps_per_active_cycle_pct")) {
    std::cout << fmt::format("  occupancy  theoretical {:.1f}%, achieved {}", *th,
                             pct("sm__warps_active.avg.pct_of_peak_sustained_active"));
    auto blocks = [&](std::string_view m) {
      auto v = num(m);
      return v ? fmt::format("{:.0f}", *v) : std::string("-");
    };
    std::cout << fmt::format(
        "; blocks/SM allowed by registers {}, shared memory {}, warps {}, blocks {}\n",
        blocks("launch__occupancy_limit_registers"), blocks("launch__occupancy_limit_shared_mem"),
        blocks("launch__occupancy_limit_warps"), blocks("launch__occupancy_limit_blocks"));
  }
  if (num("sm__throughput.avg.pct_of_peak_sustained_elapsed")) {
    std::cout << fmt::format(
        "  speed of light  SM {}  memory {}  DRAM {}  L1 {}  L2 {}\n",
        pct("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
        pct("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
        pct("dram__throughput.avg.pct_of_peak_sustained_elapsed"),
        pct("l1tex__throughput.avg.pct_of_peak_sustained_active"),
        pct("lts__throughput.avg.pct_of_peak_sustained_elapsed"));
    std::cout << fmt::format("  pipes    issue active {}  FMA {}  tensor {}\n",
                             pct("smsp__issue_active.avg.pct_of_peak_sustained_active"),
                             pct("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"),
                             pct("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"));
  }
  if (auto rd = num("dram__bytes_read.sum")) {
    const double wr = num("dram__bytes_write.sum").value_or(0);
    std::cout << fmt::format("  memory   DRAM read {} write {}", bytes_text(*rd), bytes_text(wr));
    if (counts.bytes > 0)
      std::cout << fmt::format(" = {:.2f}x the minimal {}", (*rd + wr) / counts.bytes,
                               bytes_text(counts.bytes));
    std::cout << fmt::format("; hit rate L2 {} L1 {}\n", pct("lts__t_sector_hit_rate.pct"),
                             pct("l1tex__t_sector_hit_rate.pct"));
    auto ratio = [&](std::string_view a, std::string_view b) {
      auto x = num(a), y = num(b);
      return x && y && *y > 0 ? fmt::format("{:.2f}", *x / *y) : std::string("-");
    };
    if (auto l2r = num("lts__t_sectors_op_read.sum")) {
      auto share = [&](std::string_view hit, std::optional<double> all) {
        auto h = num(hit);
        return h && all && *all > 0 ? fmt::format("{:.1f}%", 100 * *h / *all) : std::string("-");
      };
      const auto l2w = num("lts__t_sectors_op_write.sum");
      std::cout << fmt::format(
          "  L2 sectors  read {} (hit {})  write {} (hit {})\n", bytes_text(*l2r * 32),
          share("lts__t_sectors_op_read_lookup_hit.sum", l2r), bytes_text(l2w.value_or(0) * 32),
          share("lts__t_sectors_op_write_lookup_hit.sum", l2w));
    }
    std::cout << fmt::format(
        "  sectors/request  global loads {}  stores {}  (4 = a warp's 4-byte accesses coalesced)\n",
        ratio("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
              "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
        ratio("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
              "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"));
    auto conflicts = [&](std::string_view c, std::string_view w) {
      auto x = num(c), y = num(w);
      if (!x) return std::string("n/a");
      return fmt::format("{:.0f}", *x) +
             (y && *y > 0 ? fmt::format(" ({:.1f}% of wavefronts)", 100 * *x / *y) : "");
    };
    std::cout << fmt::format("  shared bank conflicts  loads {}  stores {}\n",
                             conflicts("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                                       "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
                             conflicts("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
                                       "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"));
    const double local = num("l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum").value_or(0) +
                         num("l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum").value_or(0);
    if (local > 0)
      std::cout << "  local memory traffic " << bytes_text(local)
                << " (register spills or stack)\n";
  }
  auto stalls = top_metrics(r, kStallPrefix, kStallSuffix, 64);
  std::erase_if(stalls,
                [](const auto& s) { return s.first == "selected"; });  // issuing, not stalled
  if (!stalls.empty()) {
    const double total = num("smsp__average_warp_latency_per_inst_issued.ratio").value_or(0);
    std::cout << "  warp stalls (cycles per issued instruction"
              << (total > 0 ? fmt::format(", {:.1f} in all", total) : "") << "):";
    for (size_t i = 0; i < stalls.size() && i < 5; ++i)
      std::cout << fmt::format(
          "  {} {:.2f}{}", stalls[i].first, stalls[i].second,
          total > 0 ? fmt::format(" ({:.0f}%)", 100 * stalls[i].second / total) : "");
    std::cout << "\n";
  }
}

int cmd_profile(const InspectOptions& opt) {
  const Target t = resolve(opt);
  const std::string ncu = need_tool("ncu", "profile", "Nsight Compute");
  require_gpu("profile");
  // The `klab bench` that ncu runs reads this device's ceilings from the cache. Measured under
  // ncu instead, every probe kernel and cuBLASLt GEMM runs instrumented and one profile takes
  // minutes (session 3 lost a device call to it): measure them here, outside the profiler, once.
  if (!load_cached_ceilings())
    std::cerr << "measuring this device's ceilings once, outside the profiler (cached at "
              << ceilings_cache_path() << ")\n";
  ceilings_for_this_device();
  const std::vector<CapturedKernel> ks = capture_kernels(*t.family, *t.variant, t.problem);
  if (ks.empty()) throw Error(t.variant->info.id + " launched no kernel to profile");
  std::string names;
  std::set<std::string> seen;
  int per_launch = 0;
  for (const auto& k : ks) {
    per_launch += k.launches;
    if (seen.insert(k.name).second) names += (names.empty() ? "" : "|") + regex_escape(k.name);
  }

  // Output folder: --out, or a temporary one removed afterwards.
  fs::path dir;
  bool temp = false;
  if (!opt.out.empty()) {
    dir = opt.out;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw UsageError("cannot create " + opt.out + ": " + ec.message());
  } else {
    std::string tmpl = (fs::temp_directory_path() / "klab-profile-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw Error("cannot create a temporary folder");
    dir = tmpl;
    temp = true;
  }
  const std::string stem = t.variant->info.id + "." + opt.set;
  const fs::path csv = dir / (stem + ".ncu.csv"), app_log = dir / (stem + ".app.log");

  std::string metrics;
  for (const auto& m : profile_metrics(opt.set, ncu)) metrics += (metrics.empty() ? "" : ",") + m;
  // Skip the check's launch (the first `per_launch` matching kernels); profile the next one.
  const std::string cmd =
      quote(ncu) +
      " --clock-control none --csv --page raw --print-units base --kernel-name-base mangled" +
      " --kernel-name " + quote("regex:^(" + names + ")$") + " --launch-skip " +
      std::to_string(per_launch) + " --launch-count " + std::to_string(per_launch) + " --metrics " +
      quote(metrics) + " --log-file " + quote(csv.string()) + " " + quote(self_exe()) + " bench " +
      quote(t.variant->info.id) + " --shape " + quote(t.problem.shape.str()) + " --dtype " +
      std::string(dtype_name(t.problem.dtype)) + " --max-time 0.05 --quiet --seed 1 > " +
      quote(app_log.string()) + " 2>&1";
  if (!temp) std::ofstream(dir / (stem + ".cmd")) << cmd << "\n";
  std::cerr << "profiling " << ks.size() << " kernel(s) of " << t.variant->info.id
            << " with ncu (--set " << opt.set << ")...\n";
  const Output o = run(cmd);

  auto slurp = [](const fs::path& p) {
    std::ifstream f(p);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  };
  // The report normally lands in the log file; read the program's output too, in case it did not.
  const std::string log = slurp(csv), app = slurp(app_log);
  NcuReport rep = parse_ncu_csv(log);
  if (rep.rows.empty()) rep = parse_ncu_csv(log + "\n" + app);
  std::string error;
  for (const auto& m : rep.messages)
    if (m.starts_with("==ERROR==")) error = error.empty() ? m : error;
  if (temp) fs::remove_all(dir);
  if (error.find("ERR_NVGPUCTRPERM") != std::string::npos)
    throw UsageError(
        "ncu may not read the GPU's performance counters here (ERR_NVGPUCTRPERM): run as root or "
        "allow "
        "non-admin profiling (NVreg_RestrictProfilingToAdminUsers=0)");
  if (rep.rows.empty())
    throw Error("ncu profiled no kernel (exit " + std::to_string(o.code) + ")" +
                (error.empty() ? "" : ": " + error) +
                (temp ? "" : "; see " + csv.string() + " and " + app_log.string()));

  print_header(t);
  std::cout << "ncu --set " << opt.set << ", " << rep.rows.size()
            << " launch(es) profiled (cache flushed, clocks as they are)\n";
  const Counts counts = t.family->counts(t.problem);
  for (const auto& row : rep.rows) print_profile_row(row, rep.rows.size() == 1 ? counts : Counts{});
  if (!temp) std::cout << "\nraw CSV: " << csv.string() << "\n";
  if (!opt.json.empty()) {
    append_profile_record(opt.json, profile_record(t.variant->info.id, t.family->name, t.problem,
                                                   opt.set, counts, rep));
    std::cout << "appended to " << opt.json << "\n";
  }
  return o.code == 0 ? 0 : 1;
}

void add_target_opts(CLI::App* cmd, InspectOptions& o, bool required) {
  auto* v = cmd->add_option("variant", o.variant,
                            "variant id, e.g. sgemm.v05_2d_blocktile (see `klab list`)");
  if (required) v->required();
  cmd->add_option("--shape", o.shape,
                  "problem dimensions (default: the family's first headline shape)");
  cmd->add_option("--dtype", o.dtype, "f32, f16, bf16, e4m3, e5m2");
}

}  // namespace

void add_inspect_commands(CLI::App& app, CommandList& out) {
  auto o = std::make_shared<InspectOptions>();

  auto* occ = app.add_subcommand(
      "occupancy",
      "the kernels a variant launches, their resources and occupancy (by hand and by CUDA)");
  add_target_opts(occ, *o, true);
  out.emplace_back(occ, [o] { return cmd_occupancy(*o); });

  auto* sass =
      app.add_subcommand("sass", "SASS instruction mix of a variant's kernels (cuobjdump)");
  add_target_opts(sass, *o, false);
  sass->add_option("--kernel", o->kernel,
                   "kernels whose (mangled or demangled) name contains this; no GPU needed");
  sass->add_flag("--list", o->list, "list the kernels in this binary (filtered by --kernel)");
  sass->add_option("--out", o->out, "write the SASS listing to this file");
  sass->add_option("--ptx", o->ptx, "write the PTX of the same kernels to this file");
  sass->add_option("--json", o->json,
                   "append the instruction mix as a record to this JSON file (with a variant id; "
                   "`klab profile-report` renders it)");
  sass->add_option("--binary", o->binary,
                   "read the kernels from this file (a library such as libcublasLt.so, or a "
                   "cubin) instead of klab's own binary; with --kernel or --list");
  sass->add_option("--arch", o->arch,
                   "with --binary: the architecture whose SASS to read, e.g. sm_90 (a library "
                   "holds several)");
  out.emplace_back(sass, [o] { return cmd_sass(*o); });

  auto* prof = app.add_subcommand(
      "profile", "Nsight Compute summary of a variant's kernels under `klab bench`");
  add_target_opts(prof, *o, true);
  prof->add_option("--set", o->set, "sol, memory, stalls or all")
      ->check(CLI::IsMember({"sol", "memory", "stalls", "all"}));
  prof->add_option("--out", o->out,
                   "keep the raw ncu CSV, the program's log and the command in this folder");
  prof->add_option("--json", o->json,
                   "append the parsed metrics to this JSON file (for `klab profile-report`)");
  out.emplace_back(prof, [o] { return cmd_profile(*o); });
}

}  // namespace klab::cli
