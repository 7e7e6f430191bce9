// klab memory: the device memory GPU variants need at given shapes, without timing. At each
// shape every variant goes through the same run_variant as `klab bench` (refusal before
// allocation, allocation, prepare, one synchronised run), with no check and no benchmark: the
// record holds the tensors, the workspace and the measured peak (klab/harness/device_memory.hpp).
#include <iostream>
#include <memory>
#include <set>

#include "apps/klab/cli.hpp"
#include "apps/klab/cli_options.hpp"
#include "apps/klab/extra_commands.hpp"
#include "kernels/register.hpp"
#include "klab/core/errors.hpp"

namespace klab::cli {

namespace {

struct MemoryOptions {
  std::vector<std::string> targets, shapes;
  std::string dtype, layout, json_path;
  uint64_t seed = 0;
  bool quiet = false, no_warmup = false;
};

struct FamilyWork {
  const Family* family;
  std::vector<const Variant*> variants;
  std::vector<Problem> problems;
};

// Targets (families: their GPU rungs; variant ids: those) -> what to measure, grouped by family in
// the order given. Every problem is made and validated here, before any GPU work.
std::vector<FamilyWork> select_work(const MemoryOptions& o) {
  const Registry& reg = registry();
  std::vector<FamilyWork> work;
  auto slot = [&](const Family& f) -> FamilyWork& {
    for (auto& w : work)
      if (w.family == &f) return w;
    work.push_back({&f, {}, {}});
    return work.back();
  };
  for (const auto& t : o.targets) {
    if (t.find('.') == std::string::npos) {
      FamilyWork& w = slot(reg.family(t));
      for (const Variant& v : w.family->ladder)
        if (v.info.device == Device::gpu) w.variants.push_back(&v);
      if (w.variants.empty()) throw UsageError(t + " has no GPU variants to measure");
      continue;
    }
    auto [f, v] = reg.variant(t);
    if (v->info.device != Device::gpu)
      throw UsageError(v->info.id +
                       " runs on the CPU; memory measures GPU variants' device memory");
    slot(*f).variants.push_back(v);
  }
  for (auto& w : work) {
    const Family& f = *w.family;
    if (o.shapes.empty()) {
      if (!o.layout.empty()) throw UsageError("--layout needs --shape");
      for (const Problem& p : f.headline)
        if (o.dtype.empty() || p.dtype == parse_dtype(o.dtype)) w.problems.push_back(p);
      if (w.problems.empty())
        throw UsageError(f.name + " has no headline shape of dtype " + o.dtype);
      continue;
    }
    const std::string dtype = o.dtype.empty() ? std::string(dtype_name(f.dtypes.front())) : o.dtype;
    for (const std::string& s : o.shapes)
      w.problems.push_back(make_problem(f, s, dtype, 0, o.layout));
  }
  return work;
}

int run_memory(const MemoryOptions& o) {
  std::vector<FamilyWork> work = select_work(o);
  const DeviceInfo& d = device_info();
  if (!d.present) throw UsageError("memory needs a GPU, and there is none: " + d.absent_reason);
  int total = 0;
  for (const auto& w : work) total += static_cast<int>(w.variants.size() * w.problems.size());
  Progress progress(total, o.quiet);
  RunOptions opt;
  opt.check = false;
  opt.bench = false;
  opt.seed = o.seed;
  std::vector<Result> all;
  std::set<const Variant*> warm;
  bool failed = false;
  for (const auto& w : work) {
    for (const Problem& p : w.problems) {
      ProblemInputs shared;  // the inputs of p, drawn once for every variant
      for (const Variant* v : w.variants) {
        progress.step(v->info.id + " " + p.shape.str() + " " + std::string(dtype_name(p.dtype)));
        // A variant's first run in the process loads its kernels (lazily) and its library's
        // handles: one unmeasured run first, at its first problem, keeps them out of its rows.
        if (!o.no_warmup && !warm.count(v) &&
            run_variant(*w.family, *v, p, opt, shared).status == "ok")
          warm.insert(v);
        Result r = run_variant(*w.family, *v, p, opt, shared);
        if (r.device_memory && r.device_memory->peak_measured)
          r.device_memory->method +=
              o.no_warmup
                  ? ". klab memory --no-warmup: a variant's first problem in the process also "
                    "counts its kernels' lazy loading and its library's handles"
                  : ". klab memory ran each variant once, unmeasured, at the first problem it runs "
                    "before measuring it there: its kernels' lazy loading and its library's "
                    "handles "
                    "(and any memory that first run keeps) are left out of every row";
        failed |= r.status == "error";
        all.push_back(std::move(r));
      }
      // Rewritten after every problem: a call stopped by a time limit keeps what it measured.
      if (!o.json_path.empty() && o.json_path != "-") write_json(all, o.json_path);
    }
  }
  std::cout << "\n## device memory on " << d.name << "\n\n" << memory_table(all, false);
  if (const std::string pivot = memory_by_problem(all); !pivot.empty())
    std::cout << "\npeak measured, by problem:\n\n" << pivot;
  if (o.json_path == "-") write_json(all, o.json_path);
  return failed ? 1 : 0;
}

}  // namespace

void add_memory_command(CLI::App& app, CommandList& out) {
  auto o = std::make_shared<MemoryOptions>();
  auto* cmd = app.add_subcommand("memory",
                                 "device memory of GPU variants at given shapes: tensors, "
                                 "workspace, measured peak (no timing)");
  cmd->add_option("targets", o->targets, "GPU variant ids or families (their GPU rungs)")
      ->required();
  add_shapes_option(cmd, o->shapes,
                    "problem dimensions, once per shape (default: the family's headline shapes)");
  cmd->add_option("--dtype", o->dtype, "dtype (default: the family's first)");
  cmd->add_option("--layout", o->layout, "with --shape: the tensors' layout");
  cmd->add_option("--json", o->json_path, "write the records here ('-' for stdout)")
      ->check(writable_path_or_stdout);
  add_seed_option(cmd, o->seed);
  cmd->add_flag("--quiet", o->quiet, "no progress line");
  cmd->add_flag("--no-warmup", o->no_warmup,
                "measure each variant's first problem without an unmeasured run before it");
  out.emplace_back(cmd, [o] { return run_memory(*o); });
}

}  // namespace klab::cli
