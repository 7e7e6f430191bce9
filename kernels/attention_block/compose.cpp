// The steps of an attention_block rung (compose.hpp): their problems, their tensors bound to the
// block's memory, and one launch that enqueues them in order.
#include "kernels/attention_block/compose.hpp"

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "kernels/hgemm/family.hpp"
#include "klab/core/errors.hpp"

namespace klab::attention_block {

namespace {

constexpr size_t kAlign = 256;  // every scratch region starts on a 256-byte boundary

size_t aligned(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

enum StepIndex : size_t { kQkvGemm, kQk, kAttention, kOGemm, kSteps };

/// A stretch of the scratch.
struct Region {
  size_t offset = 0, bytes = 0;
};

/// The four library steps of a rung on p, and where the scratch keeps what.
struct Plan {
  Dims s;
  std::array<Variant, kSteps> variant;
  std::array<Problem, kSteps> problem;
  Region y, q_out, lse;             ///< the block's own intermediates
  std::array<Region, kSteps> ws{};  ///< each step's workspace
  size_t total = 0;
};

Plan plan_of(const Recipe& r, const Problem& p) {
  Plan plan;
  plan.s = dims_of(p);
  const Dims& s = plan.s;
  plan.variant = {r.gemm(), r.qk(), r.attention(), r.gemm()};
  plan.problem = {s.qkv_gemm(), qk_norm_rope_cache::problem(s.qk()),
                  decode_attention::problem(s.attention()), s.o_gemm()};
  size_t at = 0;
  auto carve = [&](size_t bytes) {
    const Region r{at, bytes};
    at += aligned(bytes);
    return r;
  };
  plan.y = carve(static_cast<size_t>(s.b * s.hidden) * 2);
  plan.q_out = carve(static_cast<size_t>(s.b * s.attn_cols()) * 2);
  plan.lse = carve(static_cast<size_t>(s.b * s.hq) * 4);
  for (size_t i = 0; i < kSteps; ++i) {
    const Variant& v = plan.variant[i];
    plan.ws[i] = carve(v.workspace_bytes ? v.workspace_bytes(plan.problem[i]) : 0);
  }
  plan.total = at;
  return plan;
}

/// A step's tensor, by name: a pointer into the block's memory and the bytes there.
struct Binding {
  const char* name;
  void* data;
  int64_t bytes;
};

/// The step's buffers: each tensor its family declares for the step's problem, bound by name.
Buffers bind_step(const Family& f, const Problem& p, const std::vector<Binding>& binds, void* ws,
                  size_t ws_bytes) {
  Buffers out;
  for (const TensorSpec& spec : f.tensors(p)) {
    const Binding* hit = nullptr;
    for (const Binding& b : binds)
      if (spec.name == b.name) hit = &b;
    KLAB_CHECK(hit != nullptr, "attention_block: no binding for " + f.name + "'s " + spec.name);
    Tensor t;
    t.spec = spec;
    KLAB_CHECK(t.bytes() <= hit->bytes,
               "attention_block: " + f.name + "'s " + spec.name + " is larger than its binding");
    t.data = hit->data;
    out.tensors.push_back(std::move(t));
  }
  out.workspace = ws_bytes > 0 ? ws : nullptr;
  out.workspace_bytes = ws_bytes;
  return out;
}

/// What a prepared rung keeps alive: the steps' variants, problems and buffers (their launches
/// refer to them), and the CPU rung's host scratch.
struct State {
  Plan plan;
  std::vector<unsigned char> host_scratch;
  std::array<Buffers, kSteps> buffers;
  std::array<PreparedLaunch, kSteps> launch;
  NormLaunch norm;
  NormArgs norm_args{};
};

}  // namespace

Status block_can_implement(const Recipe& r, const Problem& p) {
  if (!r.host && p.misalign != 0)
    return Status::no("attention_block: the GPU rungs need 16-byte aligned tensors");
  const Plan plan = plan_of(r, p);
  for (size_t i = 0; i < kSteps; ++i) {
    const Variant& v = plan.variant[i];
    if (!v.can_implement) continue;
    if (Status st = v.can_implement(plan.problem[i]); !st.ok())
      return Status::no("attention_block: step " + v.info.id + " on " + plan.problem[i].str() +
                        ": " + st.reason);
  }
  return Status::yes();
}

size_t block_intermediate_bytes(const Recipe& r, const Problem& p) {
  const Plan plan = plan_of(r, p);
  return plan.ws[0].offset;  // y, q_out and lse come first (plan_of)
}

size_t block_workspace_bytes(const Recipe& r, const Problem& p) {
  return r.host ? 0 : plan_of(r, p).total;
}

PreparedLaunch prepare_block(const Recipe& r, const Problem& p, Buffers& b, const LaunchArgs& la) {
  auto st = std::make_shared<State>();
  st->plan = plan_of(r, p);
  const Plan& plan = st->plan;
  const Dims& s = plan.s;
  unsigned char* scratch = nullptr;
  if (r.host) {
    st->host_scratch.assign(plan.total, 0);
    scratch = st->host_scratch.data();
  } else {
    KLAB_CHECK(b.workspace != nullptr && b.workspace_bytes >= plan.total,
               "attention_block: the workspace is smaller than the plan's scratch");
    scratch = static_cast<unsigned char*>(b.workspace);
  }
  // A step's tensor `step` bound to the block's tensor `block`, or to a region of the scratch.
  auto as = [&](const char* step, const char* block) {
    return Binding{step, b[block].data, b[block].bytes()};
  };
  auto mine = [&](const char* name) { return as(name, name); };
  auto in_scratch = [&](const char* step, const Region& r) {
    return Binding{step, scratch + r.offset, static_cast<int64_t>(r.bytes)};
  };
  const std::array<std::vector<Binding>, kSteps> binds = {{
      {in_scratch("a", plan.y), as("b", "w_qkv"), as("c", "qkv")},
      {mine("qkv"), mine("q_weight"), mine("k_weight"), mine("positions"), mine("slot_mapping"),
       in_scratch("q_out", plan.q_out), mine("k_cache"), mine("v_cache")},
      {in_scratch("q", plan.q_out), mine("k_cache"), mine("v_cache"), mine("seq_lens"),
       mine("block_table"), mine("o"), in_scratch("lse", plan.lse)},
      {as("a", "o"), as("b", "w_o"), as("c", "out")},
  }};
  const std::array<Family, kSteps> families = {
      hgemm::make_hgemm(), qk_norm_rope_cache::make_qk_norm_rope_cache(),
      decode_attention::make_decode_attention(), hgemm::make_hgemm()};
  LaunchArgs step_args = la;  // every library step follows another kernel
  step_args.programmatic = r.programmatic;
  for (size_t i = 0; i < kSteps; ++i) {
    st->buffers[i] = bind_step(families[i], plan.problem[i], binds[i], scratch + plan.ws[i].offset,
                               plan.ws[i].bytes);
    st->launch[i] = prepare_launch(plan.variant[i], plan.problem[i], st->buffers[i], step_args);
  }
  st->norm = r.norm;
  st->norm_args = NormArgs{b["x"].data,
                           b["residual"].data,
                           b["norm_weight"].data,
                           b["residual_out"].data,
                           scratch + plan.y.offset,
                           s.b,
                           s.hidden};
  return [st](Stream stream) {
    st->norm(st->norm_args, stream);
    for (const PreparedLaunch& l : st->launch) l(stream);
  };
}

Variant block_variant(const std::string& name, const std::string& summary, Recipe r) {
  Variant v;
  v.info.id = "attention_block." + name;
  v.info.summary = summary;
  v.info.dtypes = {DType::bf16};
  v.info.device = r.host ? Device::cpu : Device::gpu;
  v.info.min_sm = r.host ? 0 : 90;
  v.can_implement = [r](const Problem& p) { return block_can_implement(r, p); };
  v.workspace_bytes = [r](const Problem& p) { return block_workspace_bytes(r, p); };
  v.prepare = [r](const Problem& p, Buffers& b, const LaunchArgs& la) {
    return prepare_block(r, p, b, la);
  };
  v.launch = [r](const Problem& p, Buffers& b, const LaunchArgs& la) {
    prepare_block(r, p, b, la)(la.stream);
  };
  return v;
}

}  // namespace klab::attention_block
