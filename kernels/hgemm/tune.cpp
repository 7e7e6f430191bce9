// The host side of v07's tune space: names, shape classes, the lookup (tune cache, committed
// table, built-in guess) and its registration as a tunable for `klab tune`.
#include "kernels/hgemm/tune.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

#include "kernels/hgemm/family.hpp"
#include "klab/core/dtype.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/device_info.hpp"

namespace klab::hgemm {

std::string HgemmConfig::name() const {
  return std::to_string(block_m) + "x" + std::to_string(block_n) + "x" + std::to_string(block_k) +
         "_w" + std::to_string(warp_m) + "x" + std::to_string(warp_n) + "_s" +
         std::to_string(stages) + "_b" + std::to_string(min_blocks) + "_g" +
         std::to_string(group_m);
}

std::vector<std::string> hgemm_config_names() {
  std::vector<std::string> names;
  for (const HgemmConfig& c : kTuneSpace) names.push_back(c.name());
  return names;
}

const char* shape_class_name(ShapeClass c) {
  switch (c) {
    case ShapeClass::large:
      return "large";
    case ShapeClass::small:
      return "small";
  }
  return "?";
}

ShapeClass shape_class(const Problem& p) {
  return p.dim("m") * p.dim("n") >= int64_t(2048) * 2048 ? ShapeClass::large : ShapeClass::small;
}

namespace {

// v07's built-in table, one entry per ShapeClass (in enum order): the guesses used when neither
// the tune cache nor the committed table has an entry for the device. Measured winners belong in
// the committed table (`klab tune --commit`), not here. Large: v05, the best measured rung.
// Small: v06's 128x128 tiles, two blocks per SM: twice v05's tiles for grids under a wave.
constexpr int kBuiltinTable[] = {
    0,  // large: 128x256x64, warp 64x64, 4 stages, 1 block/SM, group 8 (v05)
    7,  // small: 128x128x64, warp 64x64, 3 stages, 2 blocks/SM, group 8 (v06)
};

// v07's launch-path lookup, read once per shape class.
TableTunable& table() {
  static TableTunable t(
      kV07Id, kCommittedTable, hgemm_config_names(),
      [](const Problem& p) { return std::string(shape_class_name(shape_class(p))); },
      [](const Problem& p) { return builtin_config(shape_class(p)); }, hgemm_config_can_implement);
  return t;
}

}  // namespace

int builtin_config(ShapeClass c) { return kBuiltinTable[static_cast<int>(c)]; }

TunedChoice tuned_choice(const Problem& p) { return table().choice(p); }

int tuned_config(const Problem& p) { return table().config(p); }

Status hgemm_config_can_implement(int index, const Problem& p) {
  if (Status s = tune_index_in_range(index, kTuneSpaceSize); !s.ok()) return s;
  const HgemmConfig& c = kTuneSpace[index];
  const int64_t bm = c.block_m, bn = c.block_n;
  if (((p.dim("m") + bm - 1) / bm) * ((p.dim("n") + bn - 1) / bn) > INT_MAX)
    return Status::no("more than 2^31 - 1 block tiles");
  // On a device with less than 227 KiB per block (A100: 163 KiB) the deep entries cannot launch.
  const DeviceInfo& d = device_info();
  if (d.present && d.smem_per_block_optin > 0 && c.smem_bytes() > d.smem_per_block_optin)
    return Status::no(c.name() + " needs " + std::to_string(c.smem_bytes() / 1024) +
                      " KiB of shared memory per block; this device allows " +
                      std::to_string(d.smem_per_block_optin / 1024));
  return Status::yes();
}

void register_hgemm_tunable(Registry& r) {
  // v07 with the table lookup replaced by one fixed configuration.
  r.add_tunable(
      table().tunable(KLAB_IF_CUDA(gpu_v07_mma_autotuned), KLAB_IF_CUDA(launch_hgemm_config)));
}

std::vector<std::string> v09_config_names() {
  std::vector<std::string> names;
  for (const TmaProducerEntry& e : kV09Entries)
    names.push_back("128x256x64_s" + std::to_string(e.stages) + "_g" + std::to_string(e.group_m) +
                    (e.probe >= 0 ? "_p" + std::to_string(e.probe) : ""));
  return names;
}

Status v09_config_can_implement(int index, const Problem& p) {
  if (Status s = tune_index_in_range(index, kV09SpaceSize); !s.ok()) return s;
  // Every entry and its fallback (v05's kernel) use 128x256 tiles on a 1-D grid.
  if (((p.dim("m") + 127) / 128) * ((p.dim("n") + 255) / 256) > INT_MAX)
    return Status::no("more than 2^31 - 1 block tiles");
  return Status::yes();
}

namespace {

TableTunable& v09_table() {
  static TableTunable t(
      kV09Id, kCommittedTable, v09_config_names(),
      [](const Problem& p) { return std::string(shape_class_name(shape_class(p))); },
      [](const Problem&) { return 0; }, v09_config_can_implement);
  return t;
}

}  // namespace

int v09_tuned_config(const Problem& p) { return v09_table().config(p); }

void register_v09_tunable(Registry& r) {
  r.add_tunable(
      v09_table().tunable(KLAB_IF_CUDA(gpu_v09_mma_tma_producer), KLAB_IF_CUDA(launch_v09_config)));
}

Status wgmma_rung_can_implement(const Problem& p, int64_t block_m, int64_t block_n,
                                int64_t smem_bytes) {
  if (((p.dim("m") + block_m - 1) / block_m) * ((p.dim("n") + block_n - 1) / block_n) > INT_MAX)
    return Status::no("more than 2^31 - 1 block tiles");
  const DeviceInfo& d = device_info();
  if (d.present && d.smem_per_block_optin > 0 && smem_bytes > d.smem_per_block_optin)
    return Status::no("needs " + std::to_string(smem_bytes / 1024) +
                      " KiB of shared memory per block; this device allows " +
                      std::to_string(d.smem_per_block_optin / 1024));
  return Status::yes();
}

namespace {

/// The SMs the split plans fill: this device's, or an H100/H200's 132 where none answers (a
/// CPU-only `klab list`; nothing launches there).
int plan_sm_count() { return device_info().sm_count > 0 ? device_info().sm_count : 132; }

}  // namespace

SplitKPlan v16_plan(const Problem& p) {
  using W = WeightStreaming;
  return plan_split_k(p.dim("n"), p.dim("k"), W::kBlockN, W::kBlockK,
                      plan_sm_count() * W::kCtasPerSm, W::kMinKTilesPerSplit);
}

Status v16_can_implement(const Problem& p) {
  using W = WeightStreaming;
  if (p.dim("m") > W::kBlockM)
    return Status::no("m = " + std::to_string(p.dim("m")) +
                      ": this rung keeps C's rows in one m64 block (M <= 64, weight streaming)");
  return wgmma_rung_can_implement(p, W::kBlockM, W::kBlockN, W::kSmemBytes);
}

Status v19_can_implement(const Problem& p) {
  if (p.dim("m") > kV19MaxTokens)
    return Status::no("m = " + std::to_string(p.dim("m")) +
                      ": this rung holds the tokens as one wgmma's N (M <= " +
                      std::to_string(kV19MaxTokens) + ", weight streaming)");
  if ((p.dim("n") + 63) / 64 > 65535)  // the slabs are gridDim.y
    return Status::no("n = " + std::to_string(p.dim("n")) +
                      " needs more than 65535 slabs of 64 columns (grid y)");
  return wgmma_rung_can_implement(p, 64, 64, v19_max_smem_bytes());
}

size_t v16_workspace_bytes(const Problem& p) {
  return sizeof(float) * v16_plan(p).workspace_floats(int(p.dim("m")), int(p.dim("n")));
}

StreamKPlan v17_plan(const Problem& p) {
  using W = StreamKWeight;
  return plan_stream_k(p.dim("n"), p.dim("k"), W::kBlockN, W::kBlockK, plan_sm_count());
}

Status v17_can_implement(const Problem& p) {
  using W = StreamKWeight;
  if (p.dim("m") > W::kBlockM)
    return Status::no("m = " + std::to_string(p.dim("m")) +
                      ": this rung keeps C's rows in one m64 block (M <= 64, weight streaming)");
  return wgmma_rung_can_implement(p, W::kBlockM, W::kBlockN, W::kSmemBytes);
}

size_t v17_workspace_bytes(const Problem& p) {
  return v17_plan(p).workspace_bytes(int(p.dim("m")), StreamKWeight::kBlockN);
}

namespace {

/// The 128 x block_n tiles of an m x n C.
int64_t tiles_of(int64_t m, int64_t n, int block_n) {
  return ((m + 127) / 128) * ((n + block_n - 1) / block_n);
}

}  // namespace

StreamKTilesPlan v21_plan(int64_t m, int64_t n, int64_t k, int slots) {
  return plan_stream_k_tiles(tiles_of(m, n, 256), (k + 63) / 64, slots);
}

int v21_max_ctas() { return plan_sm_count(); }

Status v21_can_implement(const Problem& p) {
  return wgmma_rung_can_implement(p, 128, 256, v18_smem_bytes(256));
}

size_t v21_slot_bytes() {
  return size_t(v21_max_ctas()) * 2 * 64 * 256 * sizeof(float);  // V21Config::kSlotFloats
}

size_t v21_flag_bytes(const Problem& p) {
  return size_t(tiles_of(p.dim("m"), p.dim("n"), 256)) * 2 * sizeof(int);
}

size_t v21_workspace_bytes(const Problem& p) { return v21_slot_bytes() + v21_flag_bytes(p); }

size_t v22_slot_bytes() { return 2 * v21_slot_bytes(); }

size_t v22_workspace_bytes(const Problem& p) { return v22_slot_bytes() + v21_flag_bytes(p); }

StreamKPlan v23_plan(int64_t n, int64_t k) { return plan_stream_k(n, k, 64, 64, plan_sm_count()); }

Status v23_can_implement(const Problem& p) {
  if (p.dim("m") > 64)
    return Status::no("m = " + std::to_string(p.dim("m")) +
                      ": this rung holds the tokens as one wgmma's N of 16 or 64 (M <= 64, weight "
                      "streaming)");
  return v19_can_implement(p);
}

size_t v23_workspace_bytes(const Problem& p) {
  return v23_plan(p.dim("n"), p.dim("k")).workspace_bytes(v19_tokens(p.dim("m")), 64);
}

int64_t v24_ldb(int64_t n) { return (n + 63) / 64 * 64; }

size_t v24_workspace_bytes(const Problem& p) {
  const int64_t n = p.dim("n"), k = p.dim("k");
  return v24_copies_b(n) ? size_t(v24_ldb(n)) * size_t(k) * dtype_size(p.dtype) : 0;
}

std::vector<std::string> v18_config_names() {
  std::vector<std::string> names;
  for (const WgmmaDispatchEntry& e : kV18Entries) {
    const std::string tiles = "128x" + std::to_string(e.block_n);
    if (e.rung == 14)
      names.push_back(tiles + "_k" + std::to_string(e.splits));
    else if (e.rung == 15 && e.block_n != 256)
      names.push_back("v15_" + tiles);
    else
      names.push_back("v" + std::to_string(e.rung));
  }
  return names;
}

namespace {

/// Why v18's tile entry e cannot run an (m, n, k) problem on sm_count SMs; empty when it can.
std::string v18_tile_refusal(const WgmmaDispatchEntry& e, int64_t m, int64_t n, int64_t k,
                             int sm_count) {
  const int64_t k_tiles = (k + 63) / 64, tiles = tiles_of(m, n, e.block_n);
  if (e.splits > k_tiles)
    return std::to_string(e.splits) + " K splits of " + std::to_string(k_tiles) + " k-tiles";
  if (e.splits > 1 && tiles >= sm_count)
    return std::to_string(tiles) + " tiles fill the " + std::to_string(sm_count) +
           " SMs without splitting K";
  return "";
}

}  // namespace

Status v18_config_can_implement(int index, const Problem& p) {
  if (Status s = tune_index_in_range(index, kV18SpaceSize); !s.ok()) return s;
  const WgmmaDispatchEntry& e = kV18Entries[index];
  if (e.rung == 16) return v16_can_implement(p);
  if (e.rung == 17) return v17_can_implement(p);
  if (e.rung == 19) return v19_can_implement(p);
  if (e.rung == 13 || e.rung == 12 || e.rung == 24)  // 128 x 256 tiles, no split
    return wgmma_rung_can_implement(p, 128, 256, v18_smem_bytes(256));
  if (e.rung == 15) return wgmma_rung_can_implement(p, 128, e.block_n, v18_smem_bytes(e.block_n));
  if (e.rung == 21) return v21_can_implement(p);
  if (Status s = wgmma_rung_can_implement(p, 128, e.block_n, v18_smem_bytes(e.block_n)); !s.ok())
    return s;
  const std::string why = v18_tile_refusal(e, p.dim("m"), p.dim("n"), p.dim("k"), plan_sm_count());
  if (!why.empty()) return Status::no(v18_config_names()[size_t(index)] + ": " + why);
  return Status::yes();
}

double v18_model_seconds(int index, int64_t m, int64_t n, int64_t k, int sm_count) {
  // Rates of this H200's measured runs (2026-12-02_9c2ca7a_hopper_v15_v16): v14 sustains ~750
  // TFLOP/s over 132 SMs; an m64n128 wgmma reads twice A's shared memory per flop of an
  // m64n256 (taken as 10% slower), an m64n192 half way (5%, not measured when written); partial
  // sums move at L2-like 5 TB/s; DRAM reads ~4 TB/s.
  constexpr double kMacsPerSm = 750e12 / 2 / 132, kUnitCost = 1e-6;
  constexpr double kSplitLaunch = 2e-6, kPartialBytesPerS = 5e12, kDramBytesPerS = 4e12;
  const double inf = std::numeric_limits<double>::infinity();
  if (index < 0 || index >= kV18SpaceSize || sm_count <= 0) return inf;
  const WgmmaDispatchEntry& e = kV18Entries[index];
  const double dram = double(m * k + k * n + m * n) * 2 / kDramBytesPerS;
  // v15's clusters, v13's and v12's register stores, v21's stream-K, v24's copy of B: no model;
  // only a tune table picks them.
  if (e.rung == 15 || e.rung == 13 || e.rung == 12 || e.rung == 21 || e.rung == 24) return inf;
  // Weight streaming: the bytes at the read rate; v19 (one launch, no partials in memory) ahead
  // of v17 (one launch) ahead of v16 (two). v16 and v17 keep M <= 64, v19 M <= 128, and v19 is
  // also held to its own model's best entry (few slabs stream slowly: a CTA an SM at most ~50
  // GB/s), every entry taken to fit one CTA on each SM.
  if (e.rung == 19) {
    if (m > kV19MaxTokens) return inf;
    auto resident = [&](int) { return int64_t(sm_count); };
    return std::max(dram,
                    v19_model_seconds(kV19Entries[v19_entry(n, k, resident)], n, k, sm_count));
  }
  if (e.rung != 14)
    return m <= WeightStreaming::kBlockM ? dram + kUnitCost * (e.rung == 16 ? 2 : 1) : inf;
  if (!v18_tile_refusal(e, m, n, k, sm_count).empty()) return inf;
  const int64_t k_tiles = (k + 63) / 64, per_split = (k_tiles + e.splits - 1) / e.splits;
  const int64_t units = tiles_of(m, n, e.block_n) * e.splits;
  const double waves = double((units + sm_count - 1) / sm_count);
  const double rate = kMacsPerSm * (e.block_n == 256 ? 1.0 : e.block_n == 192 ? 0.95 : 0.9);
  const double unit = 128.0 * e.block_n * 64.0 * double(per_split) / rate + kUnitCost;
  const double split =
      e.splits > 1 ? kSplitLaunch + double(m * n) * (8.0 * e.splits + 2) / kPartialBytesPerS : 0;
  return std::max(waves * unit, dram) + split;
}

int v18_builtin_config(int64_t m, int64_t n, int64_t k, int sm_count) {
  // M <= 64 streams the weight: v19 (the tile model has no term for how few bytes in flight
  // 96-192 tiles of one CTA each keep; v14 read 3.1 TB/s there against v16's 3.7, and v19 0.93-
  // 1.11x cuBLASLt where v16 and v17 read 0.68-0.98x: 2026-12-02_12dc393).
  // From 65 to 128 rows v19 competes with the tile entries in the loop below (it won at the
  // four M = 128 shapes of the grid in 2026-12-03_5fbc421's tune).
  if (m <= StreamKWeight::kBlockM) return 10;
  int best = 2;
  double best_s = v18_model_seconds(best, m, n, k, sm_count);
  for (int i = 3; i < kV18SpaceSize; ++i)
    if (const double t = v18_model_seconds(i, m, n, k, sm_count); t < best_s) {
      best = i;
      best_s = t;
    }
  return best;
}

std::string v18_shape_class(const Problem& p) {
  int64_t m = 1;
  while (m < p.dim("m") && m < 16384) m *= 2;
  return "m" + std::to_string(m) + "_n" + std::to_string(p.dim("n")) + "_k" +
         std::to_string(p.dim("k"));
}

namespace {

TableTunable& v18_table() {
  static TableTunable t(
      kV18Id, kCommittedTable, v18_config_names(), v18_shape_class,
      [](const Problem& p) {
        return v18_builtin_config(p.dim("m"), p.dim("n"), p.dim("k"), plan_sm_count());
      },
      v18_config_can_implement);
  return t;
}

}  // namespace

int v18_tuned_config(const Problem& p) { return v18_table().config(p); }

size_t v18_workspace_bytes(const Problem& p) {
  // v21's flags go past every byte any entry writes (the others would overwrite them), so they
  // stay zero from one v21 launch to the next.
  size_t most = 0, flags = 0;
  for (int i = 0; i < kV18SpaceSize; ++i) {
    if (!v18_config_can_implement(i, p).ok()) continue;
    const WgmmaDispatchEntry& e = kV18Entries[i];
    if (e.rung == 21) flags = v21_flag_bytes(p);
    const size_t bytes =
        e.rung == 16   ? v16_workspace_bytes(p)
        : e.rung == 17 ? v17_workspace_bytes(p)
        : e.rung == 21 ? v21_slot_bytes()
        : e.rung == 24 ? v24_workspace_bytes(p)
        : e.splits > 1 ? sizeof(float) * size_t(e.splits) * size_t(p.dim("m")) * size_t(p.dim("n"))
                       : 0;
    most = std::max(most, bytes);
  }
  return most + flags;
}

void register_v18_tunable(Registry& r) {
  r.add_tunable(
      v18_table().tunable(KLAB_IF_CUDA(gpu_v18_wgmma_dispatch), KLAB_IF_CUDA(launch_v18_config)));
}

std::vector<std::string> v19_config_names() {
  std::vector<std::string> names;
  for (const SwapAbEntry& e : kV19Entries)
    names.push_back(std::to_string(64 * e.blocks) + "_k" + std::to_string(e.splits) +
                    (e.halves > 1 ? "_t" + std::to_string(e.halves) : ""));
  return names;
}

namespace {

TableTunable& v19_table() {
  static TableTunable t(
      kV19Id, kCommittedTable, v19_config_names(), v18_shape_class,
      [](const Problem& p) {
#if KLAB_HAS_CUDA
        return v19_model_entry(p);
#else
        return v19_entry(p.dim("n"), p.dim("k"), [](int) { return int64_t(plan_sm_count()); });
#endif
      },
      [](int, const Problem& p) { return v19_can_implement(p); });
  return t;
}

}  // namespace

int v19_tuned_config(const Problem& p) { return v19_table().config(p); }

void register_v19_tunable(Registry& r) {
  r.add_tunable(
      v19_table().tunable(KLAB_IF_CUDA(gpu_v19_wgmma_swap_ab), KLAB_IF_CUDA(launch_v19_entry)));
}

}  // namespace klab::hgemm
