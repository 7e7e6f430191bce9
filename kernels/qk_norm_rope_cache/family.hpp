#pragma once
// The qk_norm_rope_cache family: what a decoder layer does between its QKV projection and
// attention (issue 15, item 4(a)), fused, and its rung factories. Per token: Qwen3's QK-norm (an
// RMSNorm over each head of q and of k, one weight of D for every q head and one for every k
// head), the rotary embedding (rotate-half / NeoX pairs (i, i + D/2), theta = 1e6, the token's
// position), then q to its output and k and v into a paged KV cache.
//
// Tensors (row-major):
//   qkv           (T, Hq + 2 Hkv, D)       bf16: the projection's output, q heads, k heads, v heads
//   q_weight      (D)                      bf16: q_norm's gain
//   k_weight      (D)                      bf16: k_norm's gain
//   positions     (T)                      i32: each token's position in its sequence
//   slot_mapping  (T)                      i64: each token's cache slot; -1: not written
//   q_out         (T, Hq, D)               bf16: rope(rmsnorm(q) * q_weight)
//   k_scale       (Hkv)                    fp32, e4m3 only: KV head h's keys are k_cache x k_scale[h]
//   v_scale       (Hkv)                    fp32, e4m3 only: its values are v_cache x v_scale[h]
//   k_cache       (pages, Hkv, P, D)       KV dtype, read and written: rope(rmsnorm(k) * k_weight)
//   v_cache       (pages, Hkv, P, D)       KV dtype, read and written: v, unchanged
// The KV dtype is the problem's dtype: bf16, or e4m3 (issue 15's "FP8 with scales": the cache
// decode_attention's e4m3 rungs read), where each written element is the value divided by its
// KV head's scale, rounded to nearest and saturated to +-448 (the scales are inputs: a served
// model's static per-head scales, klab/harness/kv_scales.hpp); qkv, the weights and q_out stay
// bf16.
// A slot is page * P + offset: token of slot s, KV head h lives at ((s / P * Hkv + h) * P + s % P)
// * D, decode_attention's HND pages (kernels/decode_attention/family.hpp), so decode_attention
// reads what this family writes. The family builds slot_mapping from block tables as
// decode_attention lays them out (slot = block_table[seq][pos / P] * P + pos % P; vLLM's
// slot_mapping). Slots no token writes keep what the pools held (the family fills them with
// kSentinel): the check wants them unchanged, bit for bit.
//
// The norm: y = x / sqrt(mean(x^2) + eps) * w, the mean over the head's D elements, eps = 1e-6.
// The rotation of pair i (i < D/2) at position p: angle = p * theta^(-2i / D),
//   out[i] = y[i] cos - y[i + D/2] sin,   out[i + D/2] = y[i + D/2] cos + y[i] sin.
#include <cstdint>
#include <vector>

#include "klab/device/host_device.hpp"
#include "klab/harness/family.hpp"

namespace klab::qk_norm_rope_cache {

inline constexpr double kEps = 1e-6;
inline constexpr double kTheta = 1e6;
/// What the pools hold before a run: bf16 0xC0DE (-6.9375), a value no rung writes by chance at
/// a slot it should leave alone (the check wants it exact there).
inline constexpr uint16_t kSentinelBits = 0xC0DE;
/// The e4m3 pools' sentinel: 0xDE (-28), as kSentinelBits for bf16.
inline constexpr uint8_t kSentinelE4m3 = 0xDE;

/// A problem's dimensions, read once from its shape.
struct Dims {
  int64_t tokens = 0;     ///< T: new tokens in the batch, sequences one after another
  int64_t hq = 0;         ///< query heads
  int64_t hkv = 0;        ///< KV heads
  int64_t d = 0;          ///< head dimension
  int64_t page = 16;      ///< P: tokens per cache page
  int64_t seqs = 1;       ///< sequences the tokens belong to (T / seqs each, the first T % seqs
                          ///< one more)
  int64_t context = 0;    ///< the longest sequence's length with its new tokens: positions < it
  int64_t skip = 0;       ///< tokens whose slot is -1 (q written, k and v not)
  int64_t zero_rows = 0;  ///< tokens whose whole qkv row is 0 (the norm of a zero head is 0)
  int64_t amp = 1;        ///< a power of two multiplying qkv (large magnitudes)

  int64_t heads() const { return hq + 2 * hkv; }
  /// New tokens of sequence b.
  int64_t new_tokens(int64_t b) const { return tokens / seqs + (b < tokens % seqs ? 1 : 0); }
  /// The first token of sequence b in the batch.
  int64_t first_token(int64_t b) const {
    return b * (tokens / seqs) + (b < tokens % seqs ? b : tokens % seqs);
  }
  /// Columns of a block table: pages of the longest sequence.
  int64_t table_cols() const { return (context + page - 1) / page; }
  /// Pages the pool holds: the most that each sequence's new tokens can span (n consecutive
  /// positions touch at most ceil((n - 1) / P) + 1 pages), plus an eighth spare (pages no token
  /// of the batch writes, which must stay untouched).
  int64_t pool_pages() const;
  /// Pool elements: pages x Hkv x P x D.
  int64_t pool_numel() const;
};

/// Where the pools keep KV head h of slot `slot` (an element offset): decode_attention's HND pages,
/// (page, Hkv, P, D) with page = slot / P.
KLAB_HOST_DEVICE inline int64_t pool_offset(int64_t slot, int64_t h, int64_t hkv, int64_t page,
                                            int64_t d) {
  return ((slot / page * hkv + h) * page + slot % page) * d;
}

Dims dims_of(const Problem& p);
/// The problem of `s` with its KV cache in `kv` (bf16 or e4m3).
Problem problem(const Dims& s, DType kv = DType::bf16);

/// The builders (TensorSpec::build), exposed for the tests.
/// positions: each sequence gets a length L in [its new tokens, context] (one seeded sequence
/// exactly `context`), and its new tokens the positions L - n .. L - 1.
void build_positions(const Dims& s, Tensor& positions, uint64_t seed);
/// The block table (seqs x table_cols, i32, -1 where unused) that slot_mapping is built from:
/// every page a sequence's new tokens touch gets a pool page, drawn from a seeded permutation of
/// the pool (no page shared). The pages of a sequence's earlier context (positions below its
/// first new token's page) are not modelled: their entries are -1 here, and in a served model
/// they would point at pages this problem does not hold.
std::vector<int32_t> build_block_table(const Dims& s, const Tensor& positions, uint64_t seed);
/// slot_mapping: slot = table[seq][pos / P] * P + pos % P from build_block_table(seed), then
/// `skip` seeded tokens set to -1.
void build_slot_mapping(const Dims& s, const Tensor& positions, Tensor& slots, uint64_t seed);
/// qkv (when zero_rows or amp is set): N(0, 1) draws times amp, then `zero_rows` seeded tokens
/// set to 0.
void build_qkv(const Dims& s, Tensor& qkv, uint64_t seed);
/// Every element the sentinel of the pool's dtype (kSentinelBits, kSentinelE4m3).
void fill_sentinel(Tensor& pool);

/// The fp64 reference of head `head` of token t (0 <= head < Hq + Hkv: the q heads, then the k
/// heads; v needs none), from the host inputs, with each element's error bound (family.cpp,
/// tolerances).
struct HeadReference {
  std::vector<double> out;    ///< (D)
  std::vector<double> bound;  ///< (D): the check's magnitude (mtol = 1)
};
void reference_head(const Dims& s, const Buffers& b, int64_t t, int64_t head, HeadReference& out);

/// Relative error bound of the rungs' normalised y (family.cpp, tolerances).
double y_error_bound(int64_t d);
/// Absolute error bound of the rungs' cos and sin (rope.hpp).
double cos_sin_error_bound();

/// An e4m3 pool element's reference, in the pool's units (the value over its head's scale,
/// saturated to +-448), and its error bound, from the fp64 value x, the bound on the rung's
/// value before quantisation (`pre`: reference_head's, 0 for v) and the head's scale
/// (family.cpp, tolerances).
struct QuantisedReference {
  double value, bound;
};
QuantisedReference quantised_reference(double x, double pre, double scale);

/// The v00 CPU rung refuses problems above this many flops (seconds per run on the host).
inline constexpr double kCpuRungMaxFlops = 2e9;
/// Above this many flops a sample of heads and slots judges instead of the whole reference.
inline constexpr double kCpuReferenceMaxFlops = 1e8;

Family make_qk_norm_rope_cache();

// One factory per rung, each in its own file (cpu.cpp, baseline_unfused.cu, vNN_*.cu).
Variant cpu_v00();
Variant gpu_baseline_unfused();
Variant gpu_v01_fused();
Variant gpu_v02_token_ring();
Variant gpu_v03_hoisted();  // bf16 and e4m3 pools
Variant gpu_v04_token_pairs();
Variant gpu_v05_warp_specialised();
Variant gpu_v06_bulk_stores();
Variant gpu_v07_head_parts();
Variant gpu_v08_warp_parts();

}  // namespace klab::qk_norm_rope_cache
