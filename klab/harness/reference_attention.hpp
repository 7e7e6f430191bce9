#pragma once
// fp64 reference of one attention row, o = sum_j softmax(s)_j v_j and lse = log sum_j exp(s_j)
// with s_j = scale * q . k_j, over keys and values a family hands over one row at a time (so that
// a contiguous (B, N, H, D) tensor and a paged KV cache share the same arithmetic). Each family
// turns the row's magnitudes into its own error bounds.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace klab {

/// One row's fp64 reference and the magnitudes its error bounds scale with.
struct AttentionRowReference {
  std::vector<double> o;         ///< (D): the output row; all 0 for a row without keys
  std::vector<double> abs_mean;  ///< (D): m_d = sum_j w_j |v_jd|, w_j the exact softmax weights
  std::vector<double> abs_sum;   ///< (D): sum_j |v_jd| / sum_j exp(s_j - max_j s_j)
  double lse = 0;                ///< natural log; -inf for a row without keys
  double score_bound = 0;        ///< A = max_j scale * sum_i |q_i k_ji| (0 without keys)
};

/// The row of query q (d elements) against n_keys keys: key(j, out) and value(j, out) write key
/// j's and value j's d elements as double. Products of two inputs of at most 24 significant bits
/// are exact in fp64; only fp64 sums round (relative 2^-53 per term, far below any tolerance).
/// `scores` is scratch (resized to n_keys).
template <class Key, class Value>
void attention_row_reference(const double* q, int64_t d, double scale, int64_t n_keys, Key&& key,
                             Value&& value, AttentionRowReference& out,
                             std::vector<double>& scores) {
  const size_t dd = static_cast<size_t>(d);
  out.o.assign(dd, 0.0);
  out.abs_mean.assign(dd, 0.0);
  out.abs_sum.assign(dd, 0.0);
  if (n_keys <= 0) {  // no key: O = 0 and lse = log(0) = -inf
    out.lse = -std::numeric_limits<double>::infinity();
    out.score_bound = 0;
    return;
  }
  std::vector<double> row(dd);
  scores.resize(static_cast<size_t>(n_keys));
  double mx = -std::numeric_limits<double>::infinity(), amax = 0;
  for (int64_t j = 0; j < n_keys; ++j) {
    key(j, row.data());
    double dot = 0, mag = 0;
    for (size_t i = 0; i < dd; ++i) {
      const double t = q[i] * row[i];
      dot += t;
      mag += std::fabs(t);
    }
    scores[j] = scale * dot;
    mx = std::max(mx, scores[j]);
    amax = std::max(amax, scale * mag);
  }
  double l = 0;  // safe softmax: the maximum subtracted before exp
  for (int64_t j = 0; j < n_keys; ++j) l += (scores[j] = std::exp(scores[j] - mx));
  for (int64_t j = 0; j < n_keys; ++j) {
    value(j, row.data());
    for (size_t i = 0; i < dd; ++i) {
      out.o[i] += scores[j] * row[i];
      out.abs_mean[i] += scores[j] * std::fabs(row[i]);
      out.abs_sum[i] += std::fabs(row[i]);
    }
  }
  for (size_t i = 0; i < dd; ++i) {
    out.o[i] /= l;
    out.abs_mean[i] /= l;
    out.abs_sum[i] /= l;
  }
  out.lse = mx + std::log(l);
  out.score_bound = amax;
}

/// The distinct query rows, sorted, of a sample's elements (row_of(e) for each e of index): a
/// sampled reference computes each once, whole.
template <class RowOf>
std::vector<int64_t> sampled_rows(const std::vector<int64_t>& index, RowOf&& row_of) {
  std::vector<int64_t> rows;
  rows.reserve(index.size());
  for (int64_t e : index) rows.push_back(row_of(e));
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

/// Where row r (one of them) sits in sampled_rows' result.
inline size_t row_position(const std::vector<int64_t>& rows, int64_t r) {
  return static_cast<size_t>(std::lower_bound(rows.begin(), rows.end(), r) - rows.begin());
}

}  // namespace klab
