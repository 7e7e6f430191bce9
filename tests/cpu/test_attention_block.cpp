// The attention_block family: the builders (positions and slots of the new tokens, the stale
// values at those slots and nowhere else), its dimensions and refusals, the steps' problems, and
// checks that catch a miswired block on the CPU rung's wiring: a norm without its weight, rope a
// position off, attention that leaves out the new token, a cache write left out.
#include <gtest/gtest.h>

#include <cstring>

#include "kernels/attention_block/compose.hpp"
#include "kernels/attention_block/family.hpp"
#include "kernels/register.hpp"
#include "klab/core/errors.hpp"
#include "klab/harness/runner.hpp"
#include "tests/cpu/drawn_buffers.hpp"

using namespace klab;
using attention_block::Dims;

namespace {

const Family& family() { return registry().family("attention_block"); }

Buffers host_buffers(const Problem& p, uint64_t seed) {
  return test::drawn_host_buffers(family(), p, seed);
}

Result check(const Variant& v, const Problem& p) {
  RunOptions opt;
  opt.bench = false;
  return run_variant(family(), v, p, opt);
}

// A CPU step that runs with one of its inputs changed by `patch` (and restored after).
std::function<Variant()> patched(std::function<Variant()> make, std::string tensor,
                                 std::function<void(Tensor&)> patch) {
  return [make, tensor, patch] {
    Variant inner = make();
    Variant v = inner;
    v.prepare = nullptr;
    v.launch = [inner, tensor, patch](const Problem& p, Buffers& b, const LaunchArgs& la) {
      Tensor& t = b[tensor];
      const auto* bytes = static_cast<unsigned char*>(t.data);
      const std::vector<unsigned char> saved(bytes, bytes + t.bytes());
      patch(t);
      prepare_launch(inner, p, b, la)(la.stream);
      std::copy(saved.begin(), saved.end(), static_cast<unsigned char*>(t.data));
    };
    return v;
  };
}

// Every element of an integer input plus `delta` (i32 or i64, as the tensor's dtype says).
std::function<void(Tensor&)> plus(int64_t delta) {
  return [delta](Tensor& t) {
    for (int64_t i = 0; i < t.spec.numel; ++i)
      store_from_double(t.data, t.spec.dtype, i, load_as_double(t.data, t.spec.dtype, i) + delta);
  };
}

Problem ragged() {
  return make_problem(family(), "b=5,len=1000,min_len=1,page=32,hidden=512,hq=4,hkv=2,d=128",
                      "bf16");
}

}  // namespace

TEST(AttentionBlock, BuildersPlaceTheNewTokens) {
  const Problem p = ragged();
  const Dims s = attention_block::dims_of(p);
  const Buffers b = host_buffers(p, 7);
  const int64_t cols = (s.len + s.page - 1) / s.page;
  const auto* bits = reinterpret_cast<const uint16_t*>(b["k_cache"].host.data());
  int64_t stale = 0;
  for (int64_t i = 0; i < b["k_cache"].spec.numel; ++i)
    stale += bits[i] == attention_block::kStaleBits;
  EXPECT_EQ(stale, s.b * s.hkv * s.d);  // exactly the new tokens' rows
  for (int64_t i = 0; i < s.b; ++i) {
    const auto len = static_cast<int64_t>(b["seq_lens"].host_at(i));
    EXPECT_EQ(b["positions"].host_at(i), static_cast<double>(len - 1));
    const auto page = static_cast<int64_t>(b["block_table"].host_at(i * cols + (len - 1) / s.page));
    EXPECT_EQ(b["slot_mapping"].host_at(i),
              static_cast<double>(page * s.page + (len - 1) % s.page));
    for (int64_t h = 0; h < s.hkv; ++h) {
      const int64_t at = qk_norm_rope_cache::pool_offset(page * s.page + (len - 1) % s.page, h,
                                                         s.hkv, s.page, s.d);
      EXPECT_EQ(bits[at], attention_block::kStaleBits);
      EXPECT_EQ(bits[at + s.d - 1], attention_block::kStaleBits);
    }
  }
}

TEST(AttentionBlock, DimensionsAndSteps) {
  const Problem p = make_problem(family(), "b=4,len=300", "bf16");
  const Dims s = attention_block::dims_of(p);
  EXPECT_EQ(s.hidden, 4096);  // Qwen3-8B unless given
  EXPECT_EQ(s.min_len, 300);
  EXPECT_EQ(s.qkv_gemm().str(), "hgemm m=4,n=6144,k=4096 bf16");
  EXPECT_EQ(s.o_gemm().str(), "hgemm m=4,n=4096,k=4096 bf16");
  EXPECT_EQ(s.attention().group(), 4);
  EXPECT_THROW(make_problem(family(), "b=4,len=300,min_len=301", "bf16"), UsageError);
  EXPECT_THROW(make_problem(family(), "b=4,len=300,hq=6,hkv=4", "bf16"), UsageError);
  EXPECT_THROW(make_problem(family(), "b=4,len=300,hidden=4100", "bf16"), UsageError);
}

TEST(AttentionBlock, CpuRungPasses) {
  const Result r = check(*family().find("attention_block.v00_cpu"), ragged());
  EXPECT_TRUE(r.check.passed) << r.reason;
  EXPECT_EQ(r.check.bad, 0);
}

// A test must be able to fail: each miswiring below is caught.
TEST(AttentionBlock, MiswiredBlocksFail) {
  using attention_block::Recipe;
  const Problem p = ragged();
  auto fails = [&](Recipe r, const char* what) {
    const Variant v = attention_block::block_variant("v99_miswired", what, std::move(r));
    const Result res = check(v, p);
    EXPECT_EQ(res.status, "ok") << what << ": " << res.reason;
    EXPECT_FALSE(res.check.passed)
        << what << ": rel_l2 " << res.check.rel_l2 << ", bad " << res.check.bad;
  };
  {
    Recipe r = attention_block::cpu_recipe();
    const attention_block::NormLaunch norm = r.norm;
    std::vector<uint16_t> ones;
    r.norm = [norm, ones](const attention_block::NormArgs& a, Stream s) mutable {
      ones.assign(static_cast<size_t>(a.hidden), 0x3F80);  // bf16 1.0
      attention_block::NormArgs b = a;
      b.weight = ones.data();
      norm(b, s);
    };
    fails(r, "the norm without its weight");
  }
  {
    Recipe r = attention_block::cpu_recipe();
    r.qk = patched(r.qk, "positions", plus(1));
    fails(r, "rope a position late");
  }
  {
    Recipe r = attention_block::cpu_recipe();
    r.attention = patched(r.attention, "seq_lens", plus(-1));
    fails(r, "attention without the new token");
  }
  {
    Recipe r = attention_block::cpu_recipe();
    r.qk = patched(r.qk, "slot_mapping", [](Tensor& t) {  // every token skipped: no k or v written
      for (int64_t i = 0; i < t.spec.numel; ++i) store_from_double(t.data, t.spec.dtype, i, -1);
    });
    fails(r, "the cache write left out");
  }
  {
    Recipe r = attention_block::cpu_recipe();
    r.qk = patched(r.qk, "slot_mapping", plus(0));  // the patching itself: this control passes
    const Variant ok = attention_block::block_variant("v98_control", "control", r);
    EXPECT_TRUE(check(ok, p).check.passed);
  }
}
