// klab occupancy: the kernels a variant launches (found by capturing one launch into a CUDA
// graph), their resources, and the occupancy worked out by hand beside the CUDA occupancy API.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "apps/klab/inspect.hpp"
#include "klab/harness/device_info.hpp"
#include "klab/harness/kernel_capture.hpp"
#include "klab/harness/occupancy.hpp"

namespace klab::cli {

namespace {

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

}  // namespace

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

}  // namespace klab::cli
