// The host side of the tune space: names, shape classes, v10's lookup (tune cache, committed
// table, built-in guess) and its registration as a tunable for `klab tune`.
#include "kernels/sgemm/tune.hpp"

#include <algorithm>

#include "kernels/sgemm/family.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/device_info.hpp"

namespace klab::sgemm {

std::string SgemmConfig::name() const {
  return std::to_string(block_m) + "x" + std::to_string(block_n) + "x" + std::to_string(block_k) +
         "_w" + std::to_string(warp_m) + "x" + std::to_string(warp_n) + "_t" +
         std::to_string(thread_m) + "x" + std::to_string(thread_n) + "_" + std::to_string(threads);
}

std::vector<SgemmConfig> sgemm_tune_space() {
  return {std::begin(kTuneSpace), std::end(kTuneSpace)};
}

std::vector<std::string> sgemm_config_names() {
  std::vector<std::string> names;
  for (const SgemmConfig& c : kTuneSpace) names.push_back(c.name());
  return names;
}

std::string shape_class_key(const Problem& p) { return shape_class_name(shape_class(p)); }

const char* shape_class_name(ShapeClass c) {
  switch (c) {
    case ShapeClass::large:
      return "large";
    case ShapeClass::medium:
      return "medium";
    case ShapeClass::small:
      return "small";
    case ShapeClass::short_m:
      return "short_m";
    case ShapeClass::short_n:
      return "short_n";
  }
  return "?";
}

namespace {

int64_t tiles(const Problem& p, int64_t bm, int64_t bn) {
  return ((p.dim("m") + bm - 1) / bm) * ((p.dim("n") + bn - 1) / bn);
}

// SMs to fill: the device's, or the H200's 132 when none is present (CPU-only builds, tests).
int64_t sm_count() {
  const DeviceInfo& d = device_info();
  return d.present && d.sm_count > 0 ? d.sm_count : 132;
}

// v10's built-in table, one entry per ShapeClass (in enum order): the guesses used when neither
// the tune cache nor the committed table (kernels/sgemm/tuned.json) has an entry for the device.
// Measured winners belong in the committed table (`klab tune --commit-to`), not here: 128x128 tiles once there are two waves of them, 64x128 while
// those still fill the SMs, 64x64 below, and 32-wide tiles along a short side.
constexpr int kTunedTable[] = {
    0,   // large: 128x128x16, warp 32x64, thread 8x8 (v09)
    6,   // medium: 64x128x8, warp 32x64, thread 8x8
    8,   // small: 64x64x16, warp 32x32, thread 8x4
    10,  // short_m: 32x64x16, warp 16x32, thread 4x4
    11,  // short_n: 64x32x16, warp 32x16, thread 4x4
};

}  // namespace

ShapeClass shape_class(const Problem& p) {
  const int64_t m = p.dim("m"), n = p.dim("n");
  if (m <= 32 && m <= n) return ShapeClass::short_m;
  if (n <= 32) return ShapeClass::short_n;
  const int64_t sms = sm_count();
  if (tiles(p, 128, 128) >= 2 * sms) return ShapeClass::large;
  if (tiles(p, 64, 128) >= sms) return ShapeClass::medium;
  return ShapeClass::small;
}

int builtin_config(ShapeClass c) { return kTunedTable[static_cast<int>(c)]; }

namespace {

bool usable(int index, const Problem& p) { return sgemm_config_can_implement(index, p).ok(); }

std::vector<TunedChoice> candidates(ShapeClass c, const std::vector<TuneSource>& sources,
                                    const std::string& device) {
  static const std::vector<std::string> names = sgemm_config_names();
  return tune_candidates(sources, device, kV10Id, shape_class_name(c), names, builtin_config(c));
}

}  // namespace

TunedChoice tuned_choice_from(const Problem& p, const std::vector<TuneSource>& sources,
                              const std::string& device) {
  return pick_tuned(candidates(shape_class(p), sources, device),
                    [&](int i) { return usable(i, p); });
}

namespace {

// v10's launch-path lookup, read once per shape class.
TableTunable& table() {
  static TableTunable t(
      kV10Id, kCommittedTable, sgemm_config_names(), shape_class_key,
      [](const Problem& p) { return builtin_config(shape_class(p)); }, sgemm_config_can_implement);
  return t;
}

}  // namespace

TunedChoice tuned_choice(const Problem& p) { return table().choice(p); }

int tuned_config(const Problem& p) { return table().config(p); }

Status sgemm_config_can_implement(int index, const Problem& p) {
  if (Status s = tune_index_in_range(index, kTuneSpaceSize); !s.ok()) return s;
  const int64_t bm = kTuneSpace[index].block_m;
  if ((p.dim("m") + bm - 1) / bm > 65535)
    return Status::no("m > 65535 * " + std::to_string(bm) + " (gridDim.y limit)");
  return Status::yes();
}

void register_sgemm_tunable(Registry& r) {
  // v10 with the table lookup replaced by one fixed configuration.
  r.add_tunable(
      table().tunable(KLAB_IF_CUDA(gpu_v10_autotuned), KLAB_IF_CUDA(launch_sgemm_config)));
}

}  // namespace klab::sgemm
