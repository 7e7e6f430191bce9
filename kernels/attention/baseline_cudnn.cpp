// Baseline: cuDNN's fused scaled-dot-product attention forward (its flash-attention engine on
// sm_80+, wgmma and TMA on sm_90) through the cuDNN frontend's C++ graph API: one SDPA node, bf16 or
// f16 in and out, fp32 intermediates and compute, attn_scale 1/sqrt(D), the causal mask aligned to
// the bottom right (set_diagonal_alignment(BOTTOM_RIGHT) with a right bound of 0, as the family's),
// grouped-query heads by K and V having Hkv heads, and its Stats output as the family's lse.
// The tensors are the family's own arrays described with strides (cudnn_sdpa_layout.hpp: no
// copy); a causal problem with Nq > Nkv is given to cuDNN as its last Nkv query rows, and the
// empty rows are written beside it (baseline_cudnn_empty_rows.cu).
//
// Setup once, launch many: the graph is validated, lowered, its plan chosen by heuristic mode A
// (then the fallback list) and built once per (shape, dtype), then cached for the process, like
// the handle; a shape cuDNN does not support is refused by can_implement with cuDNN's message
// (built on the first can_implement that has a GPU). Its workspace is the plan's
// (Variant::workspace_bytes). prepare binds the pointers; the launch it returns only sets the
// handle's stream and executes the plan: no allocation, no synchronisation.
//
// A host file, not .cu: the frontend is host code, and nvcc's front end takes minutes over its
// headers (sources.cmake).
// Expected: the fastest forward on the H200 short of FlashAttention 3, the bar the ladder's FA3
// rungs are measured against.
// Requirements: D a multiple of 8 (cuDNN); 16-byte aligned bases; the rest as cuDNN decides.
#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>

#include "kernels/attention/cudnn_graph.hpp"
#include "kernels/attention/cudnn_sdpa_layout.hpp"
#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {

namespace fe = cudnn_frontend;
using cudnn_graph::TensorPtr;

constexpr int kMinSm = 80;  // cuDNN's fused SDPA needs sm_80 or newer

// The tensors' ids in the graph's variant pack.
enum Uid : int64_t { kQ = 1, kK, kV, kO, kStats };

struct Plan {
  std::shared_ptr<fe::graph::Graph> graph;  ///< built; null when cuDNN refused the problem
  std::string error;                        ///< cuDNN's reason, when it refused
  int64_t workspace_bytes = 0;
  SdpaLayout layout;
};

TensorPtr tensor_of(fe::graph::Graph& g, const char* name, Uid uid, const SdpaTensor& t) {
  return cudnn_graph::input(g, name, uid, {t.dim.begin(), t.dim.end()},
                            {t.stride.begin(), t.stride.end()}, t.alignment);
}

void set_output(const TensorPtr& x, Uid uid, const SdpaTensor& t) {
  cudnn_graph::output(x, uid, {t.dim.begin(), t.dim.end()}, {t.stride.begin(), t.stride.end()},
                      t.alignment);
}

// Builds p's graph and plan into `plan`; cuDNN's reason in plan.error when it refuses.
void build(const Problem& p, Plan& plan) {
  const Dims s = dims_of(p);
  plan.layout = sdpa_layout(s, dtype_size(p.dtype));
  const SdpaLayout& l = plan.layout;
  auto g = std::make_shared<fe::graph::Graph>();
  g->set_io_data_type(p.dtype == DType::bf16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  const TensorPtr q = tensor_of(*g, "q", kQ, l.q);
  const TensorPtr k = tensor_of(*g, "k", kK, l.k);
  const TensorPtr v = tensor_of(*g, "v", kV, l.v);
  auto options =
      fe::graph::SDPA_attributes().set_name("sdpa").set_generate_stats(true).set_attn_scale(
          static_cast<float>(s.scale()));
  if (s.causal)  // key j visible to row n iff j <= n + (Nkv - Nq): the family's mask
    options.set_diagonal_alignment(fe::DiagonalAlignment_t::BOTTOM_RIGHT)
        .set_diagonal_band_right_bound(0);
  auto [o, stats] = g->sdpa(q, k, v, options);
  set_output(o, kO, l.o);
  stats->set_data_type(fe::DataType_t::FLOAT);
  set_output(stats, kStats, l.stats);

  if (!cudnn_graph::build_plan(*g, plan.workspace_bytes, plan.error)) return;
  plan.graph = std::move(g);
}

// (b, nq, nkv, hq, hkv, d, causal, dtype): what the graph depends on (amp only scales the inputs).
using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, bool, int>;

const Plan& plan_for(const Problem& p) {
  const Dims s = dims_of(p);
  const Key key{s.b, s.nq, s.nkv, s.hq, s.hkv, s.d, s.causal, static_cast<int>(p.dtype)};
  return cudnn_graph::cached_plan<Plan>(key, [&p](Plan& plan) { build(p, plan); });
}

PreparedLaunch prepare(const Problem& p, Buffers& b) {
  const Plan& plan = plan_for(p);
  if (!plan.graph) throw Error("cuDNN refused " + p.str() + ": " + plan.error);
  KLAB_CHECK(b.workspace_bytes >= static_cast<size_t>(plan.workspace_bytes),
             "workspace smaller than the plan's");
  const SdpaLayout& l = plan.layout;
  const int64_t es = dtype_size(p.dtype);
  auto at = [es](void* base, int64_t offset) { return static_cast<char*>(base) + offset * es; };
  float* lse = b.ptr<float>("lse");
  // Shared, not copied into every std::function: execute takes the map by reference.
  auto pack = std::make_shared<std::unordered_map<int64_t, void*>>(
      std::unordered_map<int64_t, void*>{{kQ, at(b["q"].data, l.q.offset)},
                                         {kK, at(b["k"].data, l.k.offset)},
                                         {kV, at(b["v"].data, l.v.offset)},
                                         {kO, at(b["o"].data, l.o.offset)},
                                         {kStats, lse + l.stats.offset}});
  return [graph = plan.graph, pack, ws = b.workspace, s = dims_of(p), es, o = b["o"].data,
          lse](Stream stream) {
    cudnn_graph::execute(*graph, *pack, ws, stream, "cuDNN SDPA");
    write_empty_rows(s, es, o, lse, stream);
  };
}

}  // namespace

Variant gpu_baseline_cudnn() {
  Variant v = gpu_variant_of(
      "attention.baseline_cudnn",
      "cuDNN SDPA forward (frontend graph API): fused flash attention, bottom-right causal, GQA, "
      "stats as lse; plan cached per problem",
      kMinSm, {DType::bf16, DType::f16},
      [](const Problem& p, Buffers& b, const LaunchArgs& args) { prepare(p, b)(args.stream); });
  v.info.baseline = true;
  v.can_implement = [](const Problem& p) {
    if (Status st = sdpa_static_support(p); !st.ok()) return st;
    if (!cudnn_graph::device_can_plan(kMinSm)) return Status::yes();
    const Plan& plan = plan_for(p);
    return plan.graph ? Status::yes() : Status::no("cuDNN: " + plan.error);
  };
  v.workspace_bytes = [](const Problem& p) {
    if (!cudnn_graph::device_can_plan(kMinSm)) return size_t(0);
    return static_cast<size_t>(plan_for(p).workspace_bytes);
  };
  v.prepare = [](const Problem& p, Buffers& b, const LaunchArgs&) { return prepare(p, b); };
  return v;
}

}  // namespace klab::attention
