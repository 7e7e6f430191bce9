#pragma once
// Which outputs an fp64 reference computes when the whole output is too costly on the CPU.
#include <cstdint>
#include <vector>

namespace klab {

/// An output viewed as rows x cols (batch dimensions folded into rows).
struct OutputGrid {
  int64_t rows = 0;
  int64_t cols = 0;
};

/// The sample drawn from an output: flat indices (row * cols + col), sorted and unique.
/// Always included: the whole first and last rows and columns (each capped at kMaxLineSamples
/// evenly spread elements, ends included), and, for every tile size of kSampleTileSizes, the row
/// and column on each side of the last tile boundary, each at the special columns (rows) and
/// kEdgeSamples random ones. Then uniformly random elements until at least `min_samples` are
/// drawn (or the whole output, when it is smaller).
std::vector<int64_t> sample_indices(OutputGrid g, uint64_t seed, int64_t min_samples = 4096);

inline constexpr int64_t kMaxLineSamples = 16384;
inline constexpr int64_t kEdgeSamples = 256;
inline constexpr int64_t kSampleTileSizes[] = {8, 16, 32, 64, 128, 256};

}  // namespace klab
