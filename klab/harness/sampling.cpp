#include "klab/harness/sampling.hpp"

#include <algorithm>
#include <random>

#include "klab/core/errors.hpp"

namespace klab {

namespace {

// Up to `cap` evenly spread positions of [0, n), both ends included.
std::vector<int64_t> spread(int64_t n, int64_t cap) {
  std::vector<int64_t> v;
  if (n <= cap) {
    for (int64_t i = 0; i < n; ++i) v.push_back(i);
    return v;
  }
  for (int64_t s = 0; s < cap; ++s) v.push_back(s * (n - 1) / (cap - 1));
  return v;
}

// The first and last positions, and those on each side of the last tile boundary of every
// sampled tile size (where a kernel's partial last tile starts).
std::vector<int64_t> edges(int64_t n) {
  std::vector<int64_t> v{0, n - 1};
  for (int64_t t : kSampleTileSizes) {
    const int64_t b = (n - 1) / t * t;  // first position of the last (partial or full) tile
    if (b > 0) v.insert(v.end(), {b - 1, b});
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace

std::vector<int64_t> sample_indices(OutputGrid g, uint64_t seed, int64_t min_samples) {
  KLAB_CHECK(g.rows > 0 && g.cols > 0, "sample_indices: empty output grid");
  const int64_t n = g.rows * g.cols;
  std::vector<int64_t> idx;
  if (n <= min_samples) {
    idx.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) idx[i] = i;
    return idx;
  }
  std::mt19937_64 rng(seed);
  auto at = [&](int64_t r, int64_t c) { idx.push_back(r * g.cols + c); };
  // Whole first and last rows and columns.
  for (int64_t r : {int64_t{0}, g.rows - 1})
    for (int64_t c : spread(g.cols, kMaxLineSamples)) at(r, c);
  for (int64_t c : {int64_t{0}, g.cols - 1})
    for (int64_t r : spread(g.rows, kMaxLineSamples)) at(r, c);
  // Tile-edge rows and columns: their crossings, and random positions along each.
  const std::vector<int64_t> er = edges(g.rows), ec = edges(g.cols);
  std::uniform_int_distribution<int64_t> any_row(0, g.rows - 1), any_col(0, g.cols - 1);
  for (int64_t r : er) {
    for (int64_t c : ec) at(r, c);
    for (int64_t s = 0; s < kEdgeSamples; ++s) at(r, any_col(rng));
  }
  for (int64_t c : ec)
    for (int64_t s = 0; s < kEdgeSamples; ++s) at(any_row(rng), c);
  // Uniform elements on top: at least min_samples of them.
  std::uniform_int_distribution<int64_t> any(0, n - 1);
  for (int64_t s = 0; s < min_samples; ++s) idx.push_back(any(rng));
  std::sort(idx.begin(), idx.end());
  idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
  return idx;
}

}  // namespace klab
