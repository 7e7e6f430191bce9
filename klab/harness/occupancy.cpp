#include "klab/harness/occupancy.hpp"

#include <algorithm>

namespace klab {

namespace {

int64_t round_up(int64_t x, int64_t unit) { return unit > 0 ? (x + unit - 1) / unit * unit : x; }

}  // namespace

std::string_view limiter_name(Limiter l) {
  switch (l) {
    case Limiter::threads:
      return "threads";
    case Limiter::warps:
      return "warps";
    case Limiter::blocks:
      return "blocks";
    case Limiter::registers:
      return "registers";
    case Limiter::shared_memory:
      return "shared memory";
  }
  return "?";
}

std::string Occupancy::limiter_text() const {
  if (!invalid.empty()) return "cannot launch";
  std::string s;
  for (Limiter l : limiters) {
    if (!s.empty()) s += '/';
    s += limiter_name(l);
  }
  if (limiters.size() > 1) s += " (tied)";
  return s;
}

int64_t smallest_carveout(const SmLimits& sm, int64_t bytes) {
  for (int64_t c : sm.smem_carveouts)
    if (c >= bytes) return c;
  return -1;
}

Occupancy compute_occupancy(const KernelResources& k, const SmLimits& sm) {
  Occupancy o;
  if (k.block_threads <= 0 || k.block_threads > sm.max_threads_per_block) {
    o.invalid = "block of " + std::to_string(k.block_threads) + " threads (limit " +
                std::to_string(sm.max_threads_per_block) + ")";
    return o;
  }
  o.warps_per_block = (k.block_threads + sm.warp_size - 1) / sm.warp_size;

  // Threads and warps: one resource, counted per thread and per (partly filled) warp.
  o.by_threads = sm.max_threads_per_sm / k.block_threads;
  o.by_warps = sm.max_warps_per_sm / o.warps_per_block;
  o.by_blocks = sm.max_blocks_per_sm;

  // Registers: each warp gets regs*32 rounded up to the allocation unit; each of the SM's
  // sub-partitions holds a quarter of the register file and only whole warps.
  if (k.regs_per_thread > sm.max_regs_per_thread) {
    o.invalid = std::to_string(k.regs_per_thread) + " registers per thread (limit " +
                std::to_string(sm.max_regs_per_thread) + ")";
    return o;
  }
  if (k.regs_per_thread > 0) {
    o.regs_per_warp =
        static_cast<int>(round_up(int64_t{k.regs_per_thread} * sm.warp_size, sm.reg_alloc_unit));
    o.regs_per_block = int64_t{o.regs_per_warp} * o.warps_per_block;
    // The hardware's per-block check counts warps rounded up to the sub-partitions.
    const int64_t assumed =
        int64_t{o.regs_per_warp} * round_up(o.warps_per_block, sm.sub_partitions);
    if (assumed > sm.regs_per_block || o.regs_per_block > sm.regs_per_block) {
      o.invalid = std::to_string(o.regs_per_block) + " registers per block (limit " +
                  std::to_string(sm.regs_per_block) + ")";
      return o;
    }
    const int warps_per_partition = (sm.regs_per_sm / sm.sub_partitions) / o.regs_per_warp;
    o.by_registers = warps_per_partition * sm.sub_partitions / o.warps_per_block;
  } else {
    o.by_registers = kUnlimited;
  }

  // Shared memory: static + dynamic + the driver's reservation, in allocation units. The
  // carveout is the preferred one when a block fits in it, else the smallest that holds one
  // block; with no preference the driver may use the largest.
  o.smem_per_block =
      round_up(k.static_smem + k.dynamic_smem + sm.smem_reserved_per_block, sm.smem_alloc_unit);
  if (o.smem_per_block > sm.smem_per_block_optin + sm.smem_reserved_per_block) {
    o.invalid = std::to_string(o.smem_per_block) + " bytes of shared memory per block (limit " +
                std::to_string(sm.smem_per_block_optin) + " + " +
                std::to_string(sm.smem_reserved_per_block) + " reserved)";
    return o;
  }
  int64_t preferred = sm.smem_per_sm;
  if (k.carveout_pct >= 0)
    preferred =
        smallest_carveout(sm, std::min<int64_t>(100, k.carveout_pct) * sm.smem_per_sm / 100);
  o.smem_config =
      preferred >= o.smem_per_block ? preferred : smallest_carveout(sm, o.smem_per_block);
  o.by_smem =
      o.smem_per_block > 0 ? static_cast<int>(o.smem_config / o.smem_per_block) : kUnlimited;

  o.blocks_per_sm = std::min({o.by_threads, o.by_warps, o.by_blocks, o.by_registers, o.by_smem});
  const std::pair<Limiter, int> all[] = {{Limiter::threads, o.by_threads},
                                         {Limiter::warps, o.by_warps},
                                         {Limiter::blocks, o.by_blocks},
                                         {Limiter::registers, o.by_registers},
                                         {Limiter::shared_memory, o.by_smem}};
  for (const auto& [l, n] : all)
    if (n == o.blocks_per_sm) o.limiters.push_back(l);
  o.active_warps = o.blocks_per_sm * o.warps_per_block;
  o.occupancy = static_cast<double>(o.active_warps) / sm.max_warps_per_sm;
  o.smem_config_needed = smallest_carveout(sm, o.blocks_per_sm * o.smem_per_block);
  return o;
}

}  // namespace klab
