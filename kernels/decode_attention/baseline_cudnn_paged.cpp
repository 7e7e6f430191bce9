// Baseline: cuDNN's fused SDPA forward over a paged KV cache, through the cuDNN frontend's C++
// graph API (the attention family's baseline_cudnn with page tables): one SDPA node whose K and V
// are the family's page pools as cuDNN's containers (num_blocks, H_kv, block_size, D) =
// (pages, Hkv, P, D), exactly family.hpp's HND layout, so no view or copy is needed; the block
// table as both page tables, (B, 1, ceil(len / P), 1) i32, with set_paged_attention_max_seq_len_kv
// = len; seq_lens as seq_len_kv and Qlen for every sequence as seq_len_q (the padding mask, which
// cuDNN requires with paged caches). Q and O are (B, Hq, Qlen, D) views of the family's
// (B, Qlen, Hq, D) arrays, Stats (natural log) the (B, Hq, Qlen, 1) view of lse (B, Qlen, Hq).
// bf16 in and out, fp32 intermediates and compute, attn_scale 1/sqrt(D), grouped-query heads by
// the pools having Hkv heads. Qlen > 1 adds the bottom-right causal mask (right bound 0), which
// with the padding mask cuDNN aligns to each sequence's own lengths: query t sees keys
// j <= L - Qlen + t, the family's mask. Qlen = 1 needs no mask (its row sees the whole context).
//
// Rows that see no key (empty slots, speculative tokens before a short sequence's first) are
// left to cuDNN's fully masked path, then overwritten with O = 0 and lse = -inf by
// baseline_cudnn_paged_rows.cu, enqueued only for shapes that have such rows (empty > 0, or
// Qlen > min_len): the headline shapes time cuDNN alone.
//
// baseline_cudnn_contiguous (cudnn_baselines.hpp): the same SDPA over K and V laid out
// contiguously, (B, Hkv, len, D) each, which prepare gathers from the pools once into the
// workspace (keys past a sequence's length zeroed) before any timed launch; no page tables, the
// padding mask alone. What cuDNN's kernel does with the layout a non-paged server hands it.
//
// Setup once, launch many: the graph is built, planned and cached per problem (the attention
// baseline's kernels/attention/cudnn_graph.hpp, shared); prepare binds the pointers and writes
// seq_len_q (Qlen, B times) into the tail of the workspace, once; the launch only executes.
// Expected: the bar the ladder's goals name (>= 1.00x at every headline shape, >= 1.5x at B = 1).
// Requirements: bf16 KV; D a multiple of 8; 16-byte aligned bases; page tables whose entries
// past a sequence's last page are -1 (cuDNN must not read them: the first GPU check verifies);
// the rest as cuDNN decides (can_implement reports its reason).
#include <cuda_runtime.h>

#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "kernels/attention/cudnn_graph.hpp"
#include "kernels/decode_attention/cudnn_baselines.hpp"
#include "kernels/decode_attention/family.hpp"

namespace klab::decode_attention {

namespace {

namespace fe = cudnn_frontend;
using cudnn_graph::TensorPtr;

constexpr int kMinSm = 80;       // cuDNN's fused SDPA needs sm_80 or newer
constexpr int64_t kAlign = 256;  // the workspace's parts after cuDNN's own start aligned to it

// Where the SDPA's K and V live: the family's page pools, or contiguous copies of them.
enum class KvLayout { paged, contiguous };

enum Uid : int64_t { kQ = 1, kK, kV, kO, kStats, kSeqQ, kSeqKv, kTable };

struct Plan {
  std::shared_ptr<fe::graph::Graph> graph;  ///< built; null when cuDNN refused the problem
  std::string error;                        ///< cuDNN's reason, when it refused
  int64_t workspace_bytes = 0;              ///< cuDNN's own (seq_len_q follows it)
};

void build(const Problem& p, KvLayout layout, Plan& plan) {
  const Dims s = dims_of(p);
  const bool paged = layout == KvLayout::paged;
  const int64_t pages = pool_pages(s), cols = s.max_pages();
  auto g = std::make_shared<fe::graph::Graph>();
  g->set_io_data_type(fe::DataType_t::BFLOAT16)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  // (B, H, Qlen, D) over (B, Qlen, H, D).
  const std::vector<int64_t> qo_dim{s.b, s.hq, s.qlen, s.d},
      qo_stride{s.qlen * s.hq * s.d, s.d, s.hq * s.d, 1};
  const TensorPtr q = cudnn_graph::input(*g, "q", kQ, qo_dim, qo_stride);
  // The pools (pages, Hkv, P, D), or the contiguous copies (B, Hkv, len, D).
  const std::vector<int64_t> kv_dim = paged ? std::vector<int64_t>{pages, s.hkv, s.page, s.d}
                                            : std::vector<int64_t>{s.b, s.hkv, s.len, s.d};
  const std::vector<int64_t> kv_stride{kv_dim[1] * kv_dim[2] * s.d, kv_dim[2] * s.d, s.d, 1};
  const TensorPtr k = cudnn_graph::input(*g, "k", kK, kv_dim, kv_stride);
  const TensorPtr v = cudnn_graph::input(*g, "v", kV, kv_dim, kv_stride);
  auto i32 = [&](const char* name, Uid uid, std::vector<int64_t> dim, std::vector<int64_t> stride) {
    TensorPtr t = cudnn_graph::input(*g, name, uid, std::move(dim), std::move(stride), 4);
    t->set_data_type(fe::DataType_t::INT32);
    return t;
  };
  const TensorPtr seq_q = i32("seq_len_q", kSeqQ, {s.b, 1, 1, 1}, {1, 1, 1, 1});
  const TensorPtr seq_kv = i32("seq_len_kv", kSeqKv, {s.b, 1, 1, 1}, {1, 1, 1, 1});
  auto options = fe::graph::SDPA_attributes()
                     .set_name(paged ? "sdpa_paged" : "sdpa_contiguous")
                     .set_generate_stats(true)
                     .set_attn_scale(static_cast<float>(s.scale()))
                     .set_padding_mask(true)
                     .set_seq_len_q(seq_q)
                     .set_seq_len_kv(seq_kv);
  if (paged) {
    const TensorPtr table = i32("block_table", kTable, {s.b, 1, cols, 1}, {cols, cols, 1, 1});
    options.set_paged_attention_k_table(table)
        .set_paged_attention_v_table(table)
        .set_paged_attention_max_seq_len_kv(static_cast<int>(s.len));
  }
  if (s.qlen > 1)  // key j visible to query t iff j <= t + (L - Qlen): the family's mask
    options.set_diagonal_alignment(fe::DiagonalAlignment_t::BOTTOM_RIGHT)
        .set_diagonal_band_right_bound(0);
  auto [o, stats] = g->sdpa(q, k, v, options);
  cudnn_graph::output(o, kO, qo_dim, qo_stride);
  stats->set_data_type(fe::DataType_t::FLOAT);
  cudnn_graph::output(stats, kStats, {s.b, s.hq, s.qlen, 1}, {s.qlen * s.hq, 1, s.hq, 1}, 4);
  if (!cudnn_graph::build_plan(*g, plan.workspace_bytes, plan.error)) return;
  plan.graph = std::move(g);
}

// What the graph depends on: every dim but min_len and empty (the lengths are runtime data), the
// KV dtype and the layout; the pool's size follows from the shape.
using Key =
    std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int, int>;

const Plan& plan_for(const Problem& p, KvLayout layout) {
  const Dims s = dims_of(p);
  const Key key{s.b,
                s.qlen,
                s.hq,
                s.hkv,
                s.d,
                s.page,
                s.len,
                pool_pages(s),
                static_cast<int>(p.dtype),
                static_cast<int>(layout)};
  return cudnn_graph::cached_plan<Plan>(key, [&p, layout](Plan& plan) { build(p, layout, plan); });
}

int64_t aligned(int64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// The workspace: cuDNN's own, then seq_len_q (B i32), then (contiguous) the K and V copies.
struct Workspace {
  int64_t seq_len_q = 0, k = 0, v = 0, total = 0;
};
Workspace workspace_of(const Plan& plan, const Dims& s, KvLayout layout) {
  Workspace w;
  w.seq_len_q = aligned(plan.workspace_bytes);
  w.total = w.seq_len_q + 4 * s.b;
  if (layout == KvLayout::contiguous) {
    const int64_t kv_bytes = s.b * s.hkv * s.len * s.d * 2;
    w.k = aligned(w.total);
    w.v = aligned(w.k + kv_bytes);
    w.total = w.v + kv_bytes;
  }
  return w;
}

// Whether some row sees no key: an empty slot, or a sequence shorter than Qlen (the lengths are
// a function of the shape: min_len is the shortest non-empty one).
bool has_keyless_rows(const Dims& s) { return s.empty > 0 || s.min_len < s.qlen; }

PreparedLaunch prepare(const Problem& p, Buffers& b, KvLayout layout) {
  const Plan& plan = plan_for(p, layout);
  if (!plan.graph) throw Error("cuDNN refused " + p.str() + ": " + plan.error);
  const Dims s = dims_of(p);
  const Workspace w = workspace_of(plan, s, layout);
  KLAB_CHECK(b.workspace_bytes >= static_cast<size_t>(w.total),
             "workspace smaller than the plan's, seq_len_q and the K/V copies");
  char* ws = static_cast<char*>(b.workspace);
  auto* seq_q = reinterpret_cast<int32_t*>(ws + w.seq_len_q);
  const std::vector<int32_t> qlens(static_cast<size_t>(s.b), static_cast<int32_t>(s.qlen));
  KLAB_CUDA_CHECK(
      cudaMemcpy(seq_q, qlens.data(), qlens.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
  void* lens = b["seq_lens"].data;
  void* k = b["k_cache"].data;
  void* v = b["v_cache"].data;
  if (layout == KvLayout::contiguous) {  // the copies, once, before any timed launch
    const auto* table = static_cast<const int32_t*>(b["block_table"].data);
    gather_contiguous_kv(s, table, static_cast<const int32_t*>(lens), k, ws + w.k, Stream{});
    gather_contiguous_kv(s, table, static_cast<const int32_t*>(lens), v, ws + w.v, Stream{});
    KLAB_CUDA_CHECK(cudaDeviceSynchronize());
    k = ws + w.k;
    v = ws + w.v;
  }
  auto* o = b["o"].data;
  float* lse = b.ptr<float>("lse");
  // Shared, not copied into every std::function: execute takes the map by reference.
  auto pack = std::make_shared<std::unordered_map<int64_t, void*>>(std::unordered_map<int64_t,
                                                                                      void*>{
      {kQ, b["q"].data}, {kK, k}, {kV, v}, {kO, o}, {kStats, lse}, {kSeqQ, seq_q}, {kSeqKv, lens}});
  if (layout == KvLayout::paged) (*pack)[kTable] = b["block_table"].data;
  const char* what = layout == KvLayout::paged ? "cuDNN paged SDPA" : "cuDNN contiguous SDPA";
  return [graph = plan.graph, pack, ws = b.workspace, s, lens, o, lse, what](Stream stream) {
    cudnn_graph::execute(*graph, *pack, ws, stream, what);
    if (has_keyless_rows(s))
      write_keyless_rows(s, static_cast<const int32_t*>(lens), o, lse, stream);
  };
}

}  // namespace

namespace {

// A cuDNN baseline over K and V in `layout`: what both refuse, the plan's workspace, prepare.
Variant cudnn_variant(const std::string& id, const std::string& summary, KvLayout layout) {
  Variant v = gpu_variant_of(id, summary, kMinSm, {DType::bf16},
                             [layout](const Problem& p, Buffers& b, const LaunchArgs& args) {
                               prepare(p, b, layout)(args.stream);
                             });
  v.can_implement = [layout](const Problem& p) {
    const Dims s = dims_of(p);
    if (p.dtype != DType::bf16) return Status::no("cuDNN SDPA over a KV cache: bf16 KV only here");
    if (s.d % 8 != 0)
      return Status::no("cuDNN SDPA: hidden_dim should be multiple of 8 (d=" + std::to_string(s.d) +
                        ")");
    if (p.misalign != 0)
      return Status::no(
          "cuDNN SDPA reads Q, K, V, O with 16-byte vectors and TMA: bases must be "
          "16-byte aligned");
    if (s.len > INT32_MAX) return Status::no("cuDNN SDPA: max_seq_len_kv is an int");
    if (!cudnn_graph::device_can_plan(kMinSm)) return Status::yes();
    const Plan& plan = plan_for(p, layout);
    return plan.graph ? Status::yes() : Status::no("cuDNN: " + plan.error);
  };
  v.workspace_bytes = [layout](const Problem& p) {
    if (!cudnn_graph::device_can_plan(kMinSm)) return size_t(0);
    return static_cast<size_t>(workspace_of(plan_for(p, layout), dims_of(p), layout).total);
  };
  v.prepare = [layout](const Problem& p, Buffers& b, const LaunchArgs&) {
    return prepare(p, b, layout);
  };
  return v;
}

}  // namespace

Variant gpu_baseline_cudnn_paged() {
  Variant v = cudnn_variant(
      "decode_attention.baseline_cudnn_paged",
      "cuDNN SDPA forward over paged K/V (frontend graph API: page tables, padding mask, "
      "bottom-right causal for Qlen > 1), GQA, stats as lse; plan cached per problem",
      KvLayout::paged);
  v.info.baseline = true;
  return v;
}

Variant gpu_baseline_cudnn_contiguous() {
  return cudnn_variant(
      "decode_attention.baseline_cudnn_contiguous",
      "cuDNN SDPA forward over the same K/V laid out contiguously, (B, Hkv, len, D) gathered "
      "from the pages once outside the timed launch (padding mask, no page tables), GQA, stats as "
      "lse; a second reference beside the paged baseline",
      KvLayout::contiguous);
}

}  // namespace klab::decode_attention
