#pragma once
// How attention.baseline_cudnn (baseline_cudnn.cpp) hands the family's tensors to cuDNN's SDPA,
// host-only so that the CPU tests check it without cuDNN:
// - cuDNN takes Q, K, V, O as (B, H, N, D) tensors with any strides; the family's (B, N, H, D)
//   arrays are those tensors with strides (N H D, D, H D, 1): no copy.
// - Its Stats output, (B, H, Nq, 1) fp32, is the natural-log log-sum-exp of the scaled scores (the
//   frontend's default, unless set_stats_use_log2): the family's lse (B, Hq, Nq), strides
//   (Hq Nq, Nq, 1, 1).
// - A bottom-right causal mask with Nq > Nkv is refused by cuDNN ("does not support max_s_q >
//   max_s_kv", its frontend suggests slicing Q): the first Nq - Nkv query rows of every sequence
//   see no key (family.hpp) and the last Nkv rows form an Nkv x Nkv causal problem. cuDNN gets that
//   slice (Q, O and Stats offset by Nq - Nkv rows, their strides unchanged); the empty rows get
//   O = 0 and lse = -inf from baseline_cudnn_empty_rows.cu.
#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "kernels/attention/family.hpp"

namespace klab::attention {

/// One tensor as cuDNN sees it: dims and strides in elements, (B, H, N, D) order (Stats: (B, H,
/// N, 1)), the offset of its first element from the family's pointer, and the alignment its
/// pointer and strides guarantee (bytes, at most 16, for a 16-byte-aligned base).
struct SdpaTensor {
  std::array<int64_t, 4> dim{}, stride{};
  int64_t offset = 0;
  int64_t alignment = 16;
};

struct SdpaLayout {
  int64_t empty_rows =
      0;  ///< leading query rows of every (b, h) that see no key (causal, Nq > Nkv)
  SdpaTensor q, k, v, o, stats;
};

/// The largest power of two dividing every one of the byte counts, at most 16.
inline int64_t alignment_of(std::initializer_list<int64_t> bytes) {
  int64_t a = 16;
  for (int64_t x : bytes)
    if (x != 0) a = std::min(a, x & -x);
  return a;
}

/// elem_bytes: the size of a q/k/v/o element (2 for bf16 and f16).
inline SdpaLayout sdpa_layout(const Dims& s, int64_t elem_bytes) {
  SdpaLayout l;
  l.empty_rows = s.causal && s.nq > s.nkv ? s.nq - s.nkv : 0;
  const int64_t rows = s.nq - l.empty_rows;  // the query rows cuDNN computes, per (b, h)
  auto bnhd = [&](int64_t n_total, int64_t n, int64_t h, int64_t first_row) {
    SdpaTensor t;
    t.dim = {s.b, h, n, s.d};
    t.stride = {n_total * h * s.d, s.d, h * s.d, 1};
    t.offset = first_row * h * s.d;
    t.alignment = alignment_of({t.stride[0] * elem_bytes, t.stride[1] * elem_bytes,
                                t.stride[2] * elem_bytes, t.offset * elem_bytes});
    return t;
  };
  l.q = bnhd(s.nq, rows, s.hq, l.empty_rows);
  l.o = l.q;
  l.k = bnhd(s.nkv, s.nkv, s.hkv, 0);
  l.v = l.k;
  l.stats.dim = {s.b, s.hq, rows, 1};
  l.stats.stride = {s.hq * s.nq, s.nq, 1, 1};
  l.stats.offset = l.empty_rows;
  l.stats.alignment =
      alignment_of({4 * l.stats.stride[0], 4 * l.stats.stride[1], 4 * l.stats.offset});
  return l;
}

/// What cuDNN's SDPA refuses, or gets wrong unrefused, decided from the problem alone (the rest
/// is decided by cuDNN when the graph is built on the device): the frontend's own words where it
/// has them.
inline Status sdpa_static_support(const Problem& p) {
  const Dims s = dims_of(p);
  if (s.d % 8 != 0)
    return Status::no("cuDNN SDPA: hidden_dim should be multiple of 8 (d=" + std::to_string(s.d) +
                      ")");
  // The frontend's note (its issue #1571): SDPA moves Q, K, V and O with 16-byte vector loads and
  // TMA and the backend does not check pointers, so a misaligned base gives wrong output on sm_90.
  if (p.misalign * dtype_size(p.dtype) % 16 != 0)
    return Status::no(
        "cuDNN SDPA reads and writes Q, K, V, O with 16-byte vectors and TMA: every base must be "
        "16-byte aligned (misalign=" +
        std::to_string(p.misalign) + ")");
  return Status::yes();
}

/// O = 0 and lse = -inf in the first `layout.empty_rows` query rows of every (b, h): the rows cuDNN
/// is not given (baseline_cudnn_empty_rows.cu; CUDA builds with cuDNN only). o: (B, Nq, Hq, D),
/// lse: (B, Hq, Nq); enqueued on `stream`.
void write_empty_rows(const Dims& s, int64_t elem_bytes, void* o, float* lse, Stream stream);

}  // namespace klab::attention
