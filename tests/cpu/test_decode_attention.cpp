// The decode_attention family: its fp64 reference on cases computed by hand (one key, equal
// scores, grouped-query heads, pages scattered through the pool, speculative tokens, empty
// slots), the input builder (lengths as asked, valid block tables, no shared page), its counts,
// the sampled reference against the whole one, checks that catch wrong rungs, and the split-KV
// rungs' host side: their plans (splits cover every key once, fill the H200, disjoint workspace
// slices), v03's shared-memory budget and the merge by log-sum-exp; v04's line of key tiles (every
// tile once, ranges balanced to a tile, split row groups mergeable: slots and counters unshared);
// the e4m3 cache (scaled reference, both dtypes' shapes, wrong scales caught, v08's budget).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>

#include "kernels/decode_attention/fine_splits_plan.hpp"
#include "kernels/decode_attention/family.hpp"
#include "kernels/decode_attention/longest_first.hpp"
#include "kernels/decode_attention/rung_plans.hpp"
#include "kernels/decode_attention/steal_plan.hpp"
#include "kernels/decode_attention/steal_units.hpp"
#include "kernels/decode_attention/table_window.hpp"
#include "kernels/register.hpp"
#include "klab/core/errors.hpp"
#include "klab/device/lse_merge.hpp"
#include "klab/harness/runner.hpp"

using namespace klab;
using decode_attention::Dims;

namespace {

const Family& family() { return registry().family("decode_attention"); }

Dims dims(int64_t b, int64_t len, int64_t page, int64_t hq, int64_t hkv, int64_t d,
          int64_t min_len = 0, int64_t empty = 0, int64_t qlen = 1) {
  return Dims::of(b, len, page, hq, hkv, d, min_len, empty, qlen);
}

constexpr double kGarbage = 1000;  // every pool element no sequence owns

// Host buffers of p with seq_lens and block_table built from `seed`, q from fq(bi, t, h, i) and
// each sequence's token j of KV head hk from fk / fv(bi, j, hk, i), written where the block
// table puts it; the rest of the pool holds kGarbage (a kernel reading a wrong page is far off).
template <class Fq, class Fk, class Fv>
Buffers host_buffers(const Problem& p, uint64_t seed, Fq&& fq, Fk&& fk, Fv&& fv) {
  const Dims s = decode_attention::dims_of(p);
  Buffers b = make_host_buffers(family(), p);
  for (Tensor& t : b.tensors)
    if (t.spec.build) t.spec.build(b, t, seed + t.spec.name.size());
  for (const char* name : {"k_cache", "v_cache"})
    for (int64_t e = 0; e < b[name].spec.numel; ++e)
      store_from_double(b[name].host.data(), b[name].spec.dtype, e, kGarbage);
  for (int64_t bi = 0; bi < s.b; ++bi) {
    const auto len = static_cast<int64_t>(b["seq_lens"].host_at(bi));
    for (int64_t j = 0; j < len; ++j) {
      const auto page =
          static_cast<int64_t>(b["block_table"].host_at(bi * s.max_pages() + j / s.page));
      for (int64_t hk = 0; hk < s.hkv; ++hk)
        for (int64_t i = 0; i < s.d; ++i) {
          const int64_t e = ((page * s.hkv + hk) * s.page + j % s.page) * s.d + i;
          store_from_double(b["k_cache"].host.data(), p.dtype, e, fk(bi, j, hk, i));
          store_from_double(b["v_cache"].host.data(), p.dtype, e, fv(bi, j, hk, i));
        }
    }
  }
  for (int64_t bi = 0; bi < s.b; ++bi)
    for (int64_t t = 0; t < s.qlen; ++t)
      for (int64_t h = 0; h < s.hq; ++h)
        for (int64_t i = 0; i < s.d; ++i)
          store_from_double(b["q"].host.data(), DType::bf16,
                            ((bi * s.qlen + t) * s.hq + h) * s.d + i, fq(bi, t, h, i));
  return b;
}

Reference whole(const Problem& p, const Buffers& b) {
  Reference r;
  family().reference(p, b, r);
  return r;
}

double o_at(const Reference& r, const Dims& s, int64_t bi, int64_t t, int64_t h, int64_t i) {
  return r.at("o").value[static_cast<size_t>(((bi * s.qlen + t) * s.hq + h) * s.d + i)];
}
double lse_at(const Reference& r, const Dims& s, int64_t bi, int64_t t, int64_t h) {
  return r.at("lse").value[static_cast<size_t>((bi * s.qlen + t) * s.hq + h)];
}
int64_t len_of(const Buffers& b, int64_t bi) {
  return static_cast<int64_t>(b["seq_lens"].host_at(bi));
}

}  // namespace

// One key: its weight is 1, so O is its V row and lse its score.
TEST(DecodeAttention, OneKeyGivesItsValueRow) {
  const Dims s = dims(2, 1, 16, 2, 1, 4);
  const Problem p = decode_attention::problem(s);
  const Buffers b = host_buffers(
      p, 7, [](int64_t, int64_t, int64_t h, int64_t i) { return 0.5 * (i + 1) - h; },
      [](int64_t, int64_t, int64_t, int64_t i) { return 0.25 * (i - 1); },
      [](int64_t bi, int64_t, int64_t, int64_t i) { return 10.0 * bi + i; });
  const Reference r = whole(p, b);
  for (int64_t bi = 0; bi < s.b; ++bi)
    for (int64_t h = 0; h < s.hq; ++h) {
      double dot = 0;
      for (int64_t i = 0; i < s.d; ++i) dot += (0.5 * (i + 1) - h) * 0.25 * (i - 1);
      EXPECT_DOUBLE_EQ(lse_at(r, s, bi, 0, h), dot / 2);  // scale 1 / sqrt(4)
      for (int64_t i = 0; i < s.d; ++i) EXPECT_DOUBLE_EQ(o_at(r, s, bi, 0, h, i), 10.0 * bi + i);
    }
}

// Equal scores (q = 0): O is the mean of the visible V rows and lse = log(n). V holds its
// token's position, so a token read from a wrong page (kGarbage) or a wrong slot moves the mean.
// Pages of 4 scattered through the pool; three speculative tokens (query t sees len - 2 + t).
TEST(DecodeAttention, ScatteredPagesAndSpeculativeTokensReadTheRightTokens) {
  const Dims s = dims(3, 37, 4, 2, 2, 8, /*min_len*/ 5, 0, /*qlen*/ 3);
  const Problem p = decode_attention::problem(s);
  const Buffers b = host_buffers(
      p, 11, [](int64_t, int64_t, int64_t, int64_t) { return 0.0; },
      [](int64_t, int64_t j, int64_t, int64_t i) { return 0.125 * ((j + i) % 7); },
      [](int64_t bi, int64_t j, int64_t hk, int64_t i) { return j + 64.0 * bi + 8.0 * hk + i; });
  // The table is not the identity: pages are scattered.
  bool scattered = false;
  for (int64_t k = 0; k < s.max_pages(); ++k)
    scattered |= b["block_table"].host_at(k) != static_cast<double>(k);
  EXPECT_TRUE(scattered);
  const Reference r = whole(p, b);
  for (int64_t bi = 0; bi < s.b; ++bi)
    for (int64_t t = 0; t < s.qlen; ++t) {
      const int64_t n = len_of(b, bi) - s.qlen + t + 1;
      ASSERT_GT(n, 0);
      for (int64_t h = 0; h < s.hq; ++h) {
        EXPECT_NEAR(lse_at(r, s, bi, t, h), std::log(static_cast<double>(n)), 1e-12);
        for (int64_t i = 0; i < s.d; ++i)
          EXPECT_NEAR(o_at(r, s, bi, t, h, i), (n - 1) / 2.0 + 64.0 * bi + 8.0 * h + i, 1e-9)
              << "sequence " << bi << " token " << t << " head " << h;
      }
    }
}

// Grouped-query attention: query heads h of a group of 3 read KV head h / 3.
TEST(DecodeAttention, QueryHeadsReadTheirGroupsKvHead) {
  const Dims s = dims(1, 20, 16, 6, 2, 4);
  const Problem p = decode_attention::problem(s);
  const Buffers b = host_buffers(
      p, 3, [](int64_t, int64_t, int64_t, int64_t) { return 0.0; },
      [](int64_t, int64_t, int64_t, int64_t) { return 1.0; },
      [](int64_t, int64_t j, int64_t hk, int64_t) { return 100.0 * hk + (j % 2); });
  const Reference r = whole(p, b);
  for (int64_t h = 0; h < s.hq; ++h)
    for (int64_t i = 0; i < s.d; ++i)
      EXPECT_NEAR(o_at(r, s, 0, 0, h, i), 100.0 * (h / 3) + 0.5, 1e-9) << "head " << h;
}

// Empty slots and speculative tokens before a sequence's first: O = 0 and lse = -inf, no NaN.
TEST(DecodeAttention, RowsWithoutKeysGiveZerosAndMinusInfinity) {
  const Dims s = dims(4, 2, 16, 2, 1, 4, 0, /*empty*/ 2, /*qlen*/ 4);
  const Problem p = decode_attention::problem(s);
  const Buffers b = host_buffers(
      p, 5, [](int64_t, int64_t, int64_t, int64_t i) { return 0.5 * i; },
      [](int64_t, int64_t, int64_t, int64_t) { return 1.0; },
      [](int64_t, int64_t j, int64_t, int64_t) { return 2.0 + j; });
  const Reference r = whole(p, b);
  int empty_rows = 0;
  for (int64_t bi = 0; bi < s.b; ++bi)
    for (int64_t t = 0; t < s.qlen; ++t)
      for (int64_t h = 0; h < s.hq; ++h) {
        const int64_t n = s.visible_keys(len_of(b, bi), t);
        const double lse = lse_at(r, s, bi, t, h);
        if (n == 0) {
          ++empty_rows;
          EXPECT_EQ(lse, -std::numeric_limits<double>::infinity());
          for (int64_t i = 0; i < s.d; ++i) EXPECT_EQ(o_at(r, s, bi, t, h, i), 0.0);
        } else {
          EXPECT_TRUE(std::isfinite(lse));
        }
      }
  // Two empty slots (8 rows each) and, in each slot of length 2, tokens 0 and 1 (2 rows each).
  EXPECT_EQ(empty_rows, 2 * 8 + 2 * 2 * 2);
}

TEST(DecodeAttention, ContextLengthsAreAsAsked) {
  // Uniform.
  EXPECT_EQ(decode_attention::context_lengths(dims(3, 17, 16, 8, 2, 64)),
            (std::vector<int64_t>{17, 17, 17}));
  // Ragged: from min_len to len, ascending, geometric; empty slots give zeros.
  const std::vector<int64_t> l =
      decode_attention::context_lengths(dims(64, 16384, 16, 32, 8, 128, 100));
  ASSERT_EQ(l.size(), 64u);
  EXPECT_EQ(l.front(), 100);
  EXPECT_EQ(l.back(), 16384);
  EXPECT_TRUE(std::is_sorted(l.begin(), l.end()));
  EXPECT_NEAR(static_cast<double>(l[32]), 100 * std::pow(163.84, 32.0 / 63), 1);
  EXPECT_EQ(decode_attention::context_lengths(dims(5, 300, 32, 8, 2, 128, 17, 2)),
            (std::vector<int64_t>{0, 0, 17, 71, 300}));
}

// Every seed: the lengths are the shape's in some order; each sequence's pages are distinct
// pages of the pool, no page belongs to two sequences, entries past a sequence's pages are -1.
TEST(DecodeAttention, BuiltBlockTablesAreValid) {
  for (const Dims& s : {dims(64, 16384, 16, 32, 8, 128, 100), dims(5, 300, 32, 8, 2, 128, 17, 2),
                        dims(8, 1000, 1, 4, 1, 64, 1), dims(3, 130, 128, 4, 1, 64)}) {
    const Problem p = decode_attention::problem(s);
    std::vector<TensorSpec> specs = family().tensors(p);
    Tensor lens, table;
    for (const TensorSpec& spec : specs) {
      if (spec.name == "seq_lens") lens.spec = spec;
      if (spec.name == "block_table") table.spec = spec;
    }
    lens.host.resize(static_cast<size_t>(lens.bytes()));
    table.host.resize(static_cast<size_t>(table.bytes()));
    const int64_t pool = decode_attention::pool_pages(s);
    for (uint64_t seed : {1u, 2u, 99u}) {
      decode_attention::build_seq_lens(s, lens, seed);
      decode_attention::build_block_table(s, lens, table, seed * 31);
      std::vector<int64_t> got;
      for (int64_t i = 0; i < s.b; ++i) got.push_back(static_cast<int64_t>(lens.host_at(i)));
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, decode_attention::context_lengths(s));
      std::set<int64_t> owned;
      for (int64_t bi = 0; bi < s.b; ++bi) {
        const int64_t used = (static_cast<int64_t>(lens.host_at(bi)) + s.page - 1) / s.page;
        for (int64_t k = 0; k < s.max_pages(); ++k) {
          const auto e = static_cast<int64_t>(table.host_at(bi * s.max_pages() + k));
          if (k >= used) {
            EXPECT_EQ(e, -1);
            continue;
          }
          EXPECT_GE(e, 0);
          EXPECT_LT(e, pool);
          EXPECT_TRUE(owned.insert(e).second) << "page " << e << " shared";
        }
      }
    }
  }
}

TEST(DecodeAttention, CountsAndValidation) {
  const Family& f = family();
  // (1, 4k), Qwen3-8B heads: 4 L Hq D flops; bytes the KV read, q, o, lse, table and length.
  const Problem p = decode_attention::problem(dims(1, 4096, 16, 32, 8, 128));
  const Counts c = f.counts(p);
  EXPECT_DOUBLE_EQ(c.flops, 4.0 * 4096 * 32 * 128);
  EXPECT_DOUBLE_EQ(c.bytes, 4096.0 * 8 * 128 * 2 * 2 + 2 * 32 * 128 * 2 + 32 * 4 + 4 * (256 + 1));
  // Speculative tokens see len - qlen + t + 1 keys each.
  const Counts spec = f.counts(decode_attention::problem(dims(1, 10, 16, 1, 1, 4, 0, 0, 3)));
  EXPECT_DOUBLE_EQ(spec.flops, 4.0 * (8 + 9 + 10) * 4);
  EXPECT_THROW(
      make_problem(f, "b=1,qlen=1,hq=6,hkv=4,d=64,page=16,len=10,min_len=10,empty=0", "bf16"),
      UsageError);
  EXPECT_THROW(
      make_problem(f, "b=2,qlen=1,hq=4,hkv=4,d=64,page=16,len=10,min_len=20,empty=0", "bf16"),
      UsageError);
  EXPECT_THROW(
      make_problem(f, "b=2,qlen=1,hq=4,hkv=4,d=64,page=16,len=10,min_len=10,empty=2", "bf16"),
      UsageError);
  EXPECT_THROW(
      make_problem(f, "b=2,qlen=9,hq=4,hkv=4,d=64,page=16,len=10,min_len=10,empty=0", "bf16"),
      UsageError);
  EXPECT_NO_THROW(
      make_problem(f, "b=2,qlen=8,hq=7,hkv=1,d=64,page=1,len=1,min_len=1,empty=1", "bf16"));
}

// The sampled reference (every sequence's first and last rows among others) equals the whole one.
TEST(DecodeAttention, SampledReferenceMatchesWhole) {
  const Dims s = dims(6, 300, 16, 8, 2, 64, 1, 1, 2);
  const Problem p = decode_attention::problem(s);
  Buffers b = host_buffers(
      p, 9,
      [](int64_t bi, int64_t t, int64_t h, int64_t i) {
        return 0.25 * ((bi + t + h + i) % 5) - 0.5;
      },
      [](int64_t, int64_t j, int64_t hk, int64_t i) {
        return 0.125 * ((3 * j + hk + i) % 9) - 0.5;
      },
      [](int64_t bi, int64_t j, int64_t, int64_t i) { return 0.5 * ((j + bi + 2 * i) % 11); });
  const Reference r = whole(p, b);
  for (const char* out : {"o", "lse"}) {
    const OutputGrid g = family().output_grid(p, out);
    EXPECT_EQ(g.rows, s.b);
    RefOutput sample;
    sample.index = sample_indices(g, 1234, 64);
    family().reference_at(p, b, out, sample.index, sample);
    for (size_t i = 0; i < sample.index.size(); ++i) {
      EXPECT_EQ(sample.value[i], r.at(out).value[sample.index[i]]) << out << sample.index[i];
      EXPECT_EQ(sample.magnitude[i], r.at(out).magnitude[sample.index[i]]);
    }
  }
}

namespace {

Result check(const Variant& v, const Problem& p) {
  RunOptions opt;
  opt.bench = false;
  opt.dists = {Dist::normal, Dist::heavy};
  return run_variant(family(), v, p, opt);
}

const Problem& ragged() {
  static const Problem p = decode_attention::problem(dims(5, 300, 16, 8, 2, 128, 17, 1, 2));
  return p;
}

}  // namespace

TEST(DecodeAttention, CpuRungPasses) {
  const Variant* v = family().find("decode_attention.v00_cpu");
  ASSERT_NE(v, nullptr);
  const Result r = check(*v, ragged());
  ASSERT_EQ(r.status, "ok") << r.reason;
  EXPECT_TRUE(r.check.passed) << r.check.summary();
}

// A test must be able to fail: rungs wrong in one way each are caught.
TEST(DecodeAttention, WrongRungsFailTheirCheck) {
  const Variant good = *family().find("decode_attention.v00_cpu");
  auto wrapped = [&](std::function<void(const Problem&, Buffers&)> spoil) {
    Variant v = good;
    v.launch = [good, spoil](const Problem& p, Buffers& b, const LaunchArgs& a) {
      good.launch(p, b, a);
      spoil(p, b);
    };
    return v;
  };
  // Ignores the block table: reads each sequence's pages as if they were the pool's first ones.
  const Variant contiguous = wrapped([good](const Problem& p, Buffers& b) {
    const Dims s = decode_attention::dims_of(p);
    auto* table = b.ptr<int32_t>("block_table");
    std::vector<int32_t> saved(table, table + s.b * s.max_pages());
    int32_t next = 0;
    for (int64_t e = 0; e < s.b * s.max_pages(); ++e)
      if (table[e] >= 0) table[e] = next++;
    good.launch(p, b, {});
    std::copy(saved.begin(), saved.end(), table);
  });
  // Drops the last token of every sequence (an off-by-one at the length).
  const Variant short_by_one = wrapped([good](const Problem& p, Buffers& b) {
    const Dims s = decode_attention::dims_of(p);
    auto* lens = b.ptr<int32_t>("seq_lens");
    const std::vector<int32_t> saved(lens, lens + s.b);
    for (int64_t i = 0; i < s.b; ++i) lens[i] = std::max(0, lens[i] - 1);
    good.launch(p, b, {});
    std::copy(saved.begin(), saved.end(), lens);
  });
  // lse off by 1e-3 (o right).
  const Variant lse_off = wrapped([](const Problem& p, Buffers& b) {
    float* lse = b.ptr<float>("lse");
    for (int64_t i = 0; i < decode_attention::dims_of(p).rows(); ++i) lse[i] += 1e-3f;
  });
  // Writes NaN into empty rows (0 / 0).
  const Variant nan_empty = wrapped([](const Problem& p, Buffers& b) {
    const Dims s = decode_attention::dims_of(p);
    float* lse = b.ptr<float>("lse");
    for (int64_t r = 0; r < s.rows(); ++r)
      if (std::isinf(lse[r]))
        for (int64_t i = 0; i < s.d; ++i)
          store_from_double(b["o"].data, DType::bf16, r * s.d + i, std::nan(""));
  });
  for (const Variant* v : {&contiguous, &lse_off, &nan_empty}) {
    const Result r = check(*v, ragged());
    ASSERT_EQ(r.status, "ok") << r.reason;
    EXPECT_FALSE(r.check.passed) << r.check.summary();
  }
  const Result r = check(short_by_one, ragged());
  EXPECT_FALSE(r.check.passed);
  const Result lse_r = check(lse_off, ragged());
  ASSERT_FALSE(lse_r.check.first.empty());
  EXPECT_EQ(lse_r.check.first[0].tensor, "lse");
}

// ---- split-KV (v02, v03): the plans and the merge ----

namespace {

using decode_attention::GqaMmaConfig;
using decode_attention::SplitKvPlan;

constexpr int kH200Sms = 132;

// The headline (B, L, min_len) of issue 15 (min_len 0: a uniform batch), Qwen3-8B's heads.
std::vector<std::tuple<int64_t, int64_t, int64_t>> headline_batches() {
  return {{1, 4096, 0},  {1, 32768, 0},  {1, 131072, 0},  {16, 8192, 0},
          {64, 4096, 0}, {256, 2048, 0}, {64, 16384, 100}};
}

// The CTAs a plan launches that do work: splits of each sequence times the units.
int64_t working_ctas(const SplitKvPlan& plan, const Dims& s, int64_t units) {
  int64_t n = 0;
  for (int64_t l : decode_attention::context_lengths(s)) n += plan.splits_of(l) * units;
  return n;
}

// Splits [0, splits_of(len)) cover [0, len) in order, once each, none empty (an empty sequence
// has one split with no keys), within the grid.
void expect_covers(const SplitKvPlan& plan, int64_t len) {
  const int n = plan.splits_of(len);
  ASSERT_GE(n, 1);
  EXPECT_LE(n, plan.max_splits) << "len " << len;
  int64_t next = 0;
  for (int sp = 0; sp < n; ++sp) {
    EXPECT_EQ(plan.key_begin(sp), next);
    const int64_t end = plan.key_end(sp, len);
    if (len > 0) {
      EXPECT_GT(end, plan.key_begin(sp)) << "split " << sp << " of len " << len;
    }
    next = std::max(next, end);
  }
  EXPECT_EQ(next, len);
}

}  // namespace

TEST(DecodeAttentionSplitKv, SplitsCoverEveryKeyOnce) {
  for (const decode_attention::SplitKvTarget& t :
       {decode_attention::SplitKvTarget{8, 264, 64, 128, 2048},
        decode_attention::SplitKvTarget{32, 2112, 32, 256},
        decode_attention::SplitKvTarget{1, 1, 16, 16, 64}}) {
    for (int64_t max_len : {1, 63, 64, 65, 1000, 32768, 131072}) {
      const SplitKvPlan plan = decode_attention::plan_split_kv(max_len, 3 * max_len, t);
      EXPECT_EQ(plan.chunk % t.tile, 0);
      EXPECT_GE(plan.chunk, t.min_chunk);
      EXPECT_LE(plan.chunk, std::max(t.max_chunk, t.min_chunk));
      EXPECT_EQ(plan.max_splits, plan.splits_of(max_len));
      for (int64_t len : {int64_t(0), int64_t(1), plan.chunk - 1, plan.chunk, plan.chunk + 1,
                          max_len / 2, max_len})
        if (len <= max_len) expect_covers(plan, len);
    }
  }
}

// Each (row, split) partial has its own D floats and lse, inside the workspace.
TEST(DecodeAttentionSplitKv, WorkspaceSlicesAreDisjoint) {
  const SplitKvPlan plan{128, 7};
  const int64_t rows = 13, d = 64;
  std::set<int64_t> seen;
  for (int64_t r = 0; r < rows; ++r)
    for (int sp = 0; sp < plan.max_splits; ++sp) {
      const int64_t i = plan.partial_index(r, sp);
      EXPECT_TRUE(seen.insert(i).second);
      EXPECT_LT((i + 1) * d + rows * plan.max_splits, plan.workspace_floats(rows, d) + 1);
    }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), rows * plan.max_splits);
  EXPECT_EQ((SplitKvPlan{128, 1}.workspace_floats(rows, d)), 0);  // one split: o directly
}

// On the H200 (132 SMs), the rungs' plans fill one wave at B = 1 (the GPU is full at L = 32k)
// and stay near one wave at the batched headline shapes; chunks stay within v03's page-index
// buffer.
TEST(DecodeAttentionSplitKv, PlansFillTheH200AtTheHeadlineShapes) {
  for (int64_t page : {16, 64}) {
    for (auto [b, len, min_len] : headline_batches()) {
      const Dims s = dims(b, len, page, 32, 8, 128, min_len);
      const int64_t v03_slots = kH200Sms * GqaMmaConfig::ctas_per_sm(s.d, s.page);
      const SplitKvPlan p3 = decode_attention::plan_v03(s, kH200Sms);
      const int64_t ctas3 = working_ctas(p3, s, s.hkv * GqaMmaConfig::row_tiles(s));
      EXPECT_GE(static_cast<double>(ctas3), 0.9 * static_cast<double>(v03_slots))
          << "v03 b=" << b << " len=" << len;
      EXPECT_LE(p3.chunk, GqaMmaConfig::kMaxChunk);
      EXPECT_EQ(p3.chunk % GqaMmaConfig::kBlockN, 0);
      const int64_t v02_slots = kH200Sms * decode_attention::kV02CtasPerSm;
      const SplitKvPlan p2 = decode_attention::plan_v02(s, kH200Sms);
      const int64_t ctas2 = working_ctas(p2, s, s.qlen * s.hq);
      // v02's chunks of at least 128 keys leave (1, 4k) at half a wave.
      const double v02_fill = b == 1 && len < 32768 ? 0.45 : 0.9;
      EXPECT_GE(static_cast<double>(ctas2), v02_fill * static_cast<double>(v02_slots))
          << "v02 b=" << b << " len=" << len;
      EXPECT_LE(p2.max_splits, 65535);
      if (b == 1) {  // one sequence: no more than about one wave's worth of CTAs
        EXPECT_LE(ctas3, 2 * v03_slots);
        EXPECT_LE(ctas2, 2 * v02_slots);
      }
    }
  }
  // (1, 32k): 32 splits of 1024 keys per KV head, 256 CTAs, two an SM.
  const SplitKvPlan p = decode_attention::plan_v03(dims(1, 32768, 16, 32, 8, 128), kH200Sms);
  EXPECT_EQ(p.chunk, 1024);
  EXPECT_EQ(p.max_splits, 32);
}

// v03's shared memory fits a CTA's opt-in limit for every D and page size it takes; two CTAs an
// SM at D = 128; the warps' partials fit in the stages they reuse.
TEST(DecodeAttentionSplitKv, GqaMmaSharedMemoryBudget) {
  for (int64_t d : {64, 128, 256}) {
    for (int64_t page : {1, 2, 16, 32, 64, 128, 4096}) {
      EXPECT_LE(GqaMmaConfig::smem_bytes(d, page), 227 * 1024) << d << " " << page;
      EXPECT_GE(GqaMmaConfig::ctas_per_sm(d, page), 1);
    }
    EXPECT_LE(GqaMmaConfig::merge_bytes(d), GqaMmaConfig::stages(d) * GqaMmaConfig::stage_bytes(d));
  }
  EXPECT_EQ(GqaMmaConfig::ctas_per_sm(128, 1), 2);
  EXPECT_EQ(GqaMmaConfig::ctas_per_sm(128, 16), 2);
  // The page indices of a chunk: its first page may be entered mid-page.
  for (int64_t page : {1, 3, 16, 128})
    for (int64_t start : {int64_t(0), page - 1, GqaMmaConfig::kMaxChunk - 1})
      EXPECT_LE((start + GqaMmaConfig::kMaxChunk - 1) / page - start / page + 1,
                GqaMmaConfig::table_entries(page));
}

namespace {

// One row's partial over keys [j0, j1) of scores s and values v (d wide), as the split kernels
// leave it: the normalised fp32 output and the natural-log lse; (0, -inf) without keys.
void partial(const std::vector<float>& s, const std::vector<float>& v, int d, int64_t j0,
             int64_t j1, float* o, float& lse) {
  float m = -INFINITY;
  for (int64_t j = j0; j < j1; ++j) m = std::max(m, s[j]);
  double sum = 0;
  std::vector<double> acc(static_cast<size_t>(d), 0.0);
  for (int64_t j = j0; j < j1; ++j) {
    const double w = std::exp(static_cast<double>(s[j]) - m);
    sum += w;
    for (int e = 0; e < d; ++e) acc[e] += w * v[j * d + e];
  }
  for (int e = 0; e < d; ++e) o[e] = sum > 0 ? static_cast<float>(acc[e] / sum) : 0.f;
  lse = sum > 0 ? static_cast<float>(m + std::log(sum)) : -INFINITY;
}

}  // namespace

// The merge of a row's split partials equals the softmax over all its keys, whatever the
// chunk; empty partials weigh nothing; an all-empty row gives O = 0, lse = -inf, no NaN.
TEST(DecodeAttentionSplitKv, MergeByLogSumExpEqualsTheWholeRow) {
  const int d = 8;
  for (int64_t len : {1, 5, 64, 1000}) {
    std::vector<float> s(static_cast<size_t>(len)), v(static_cast<size_t>(len * d));
    for (int64_t j = 0; j < len; ++j) {
      s[j] = static_cast<float>(8.0 * std::sin(0.37 * static_cast<double>(j)) + (j == 3 ? 40 : 0));
      for (int e = 0; e < d; ++e) v[j * d + e] = static_cast<float>(std::cos(j + 0.5 * e));
    }
    std::vector<float> whole(d);
    float whole_lse = 0;
    partial(s, v, d, 0, len, whole.data(), whole_lse);
    for (int64_t chunk : {1, 7, 64, 256}) {
      const SplitKvPlan plan{chunk, SplitKvPlan{chunk, 1}.splits_of(len)};
      const int n = plan.splits_of(len) + 1;  // and one empty partial past the end
      std::vector<float> po(static_cast<size_t>(n * d)), pl(static_cast<size_t>(n));
      for (int sp = 0; sp < n; ++sp)
        partial(s, v, d, std::min(len, plan.key_begin(sp)), plan.key_end(sp, len), &po[sp * d],
                pl[sp]);
      EXPECT_EQ(pl[n - 1], -INFINITY);
      std::vector<float> out(d, std::nanf(""));
      const float lse = device::lse_merge_row(
          pl.data(), n, 0, d, [&](int i, int e) { return po[i * d + e]; },
          [&](int e, float x) { out[e] = x; });
      EXPECT_NEAR(lse, whole_lse, 1e-5 * (1 + std::abs(whole_lse))) << len << " " << chunk;
      for (int e = 0; e < d; ++e) EXPECT_NEAR(out[e], whole[e], 1e-5) << len << " " << chunk;
    }
  }
  // Every partial empty (an empty slot, a speculative token before the first key).
  const float lse[3] = {-INFINITY, -INFINITY, -INFINITY};
  const float po[3 * 2] = {0, 0, 0, 0, 0, 0};
  float out[2] = {std::nanf(""), std::nanf("")};
  EXPECT_EQ(device::lse_merge_row(
                lse, 3, 0, 2, [&](int i, int e) { return po[i * 2 + e]; },
                [&](int e, float x) { out[e] = x; }),
            -INFINITY);
  EXPECT_EQ(out[0], 0.f);
  EXPECT_EQ(out[1], 0.f);
}

// v36's merge in its running form: a row's partials taken by several states (a warp each, the
// splits dealt round-robin as the kernel deals them), the states then joined, gives what
// lse_merge_row gives, up to fp32 rounding; empty partials and empty states weigh nothing, an
// all-empty row gives O = 0, lse = -inf.
TEST(DecodeAttentionSplitKv, RunningMergeOverWarpsEqualsTheMerge) {
  constexpr int d = 4;
  for (int n : {1, 2, 5, 8, 9, 32, 37, 64}) {
    for (int warps : {1, 3, 8}) {
      std::vector<float> lse(static_cast<size_t>(n)), po(static_cast<size_t>(n * d));
      for (int i = 0; i < n; ++i) {
        // Spread lse (one partial far above the others), every fifth partial empty.
        lse[i] = i % 5 == 4 ? -INFINITY
                            : static_cast<float>(6.0 * std::sin(1.3 * i) + (i == 2 ? 30 : 0));
        for (int e = 0; e < d; ++e) po[i * d + e] = static_cast<float>(std::cos(0.7 * i + e));
      }
      std::vector<float> want(d);
      const float want_lse = device::lse_merge_row(
          lse.data(), n, 0, d, [&](int i, int e) { return po[i * d + e]; },
          [&](int e, float x) { want[e] = x; });
      std::vector<device::LseMergeState<d>> st(static_cast<size_t>(warps));
      for (int i = 0; i < n; ++i) st[i % warps].add(lse[i], 1.f, &po[i * d]);
      device::LseMergeState<d> merged;
      for (const auto& w : st) merged.add(w.m, w.s, w.acc);
      const std::string at = std::to_string(n) + " partials, " + std::to_string(warps) + " warps";
      if (want_lse == -INFINITY) {
        EXPECT_EQ(merged.lse(), -INFINITY) << at;
      } else {
        EXPECT_NEAR(merged.lse(), want_lse, 1e-5 * (1 + std::abs(want_lse))) << at;
      }
      for (int e = 0; e < d; ++e) EXPECT_NEAR(merged.out(e), want[e], 1e-5) << at;
    }
  }
  // Every partial empty: the row is empty, whatever the partials hold.
  device::LseMergeState<2> empty;
  const float garbage[2] = {std::nanf(""), 1e30f};
  empty.add(-INFINITY, 1.f, garbage);
  device::LseMergeState<2> joined;
  joined.add(empty.m, empty.s, empty.acc);
  EXPECT_EQ(joined.lse(), -INFINITY);
  EXPECT_EQ(joined.out(0), 0.f);
  EXPECT_EQ(joined.out(1), 0.f);
}

// ---- v04: the persistent schedule over the line of key tiles ----

namespace {

using decode_attention::PersistentGqaConfig;
using decode_attention::TileLinePlan;

// One CTA's segment of a row group, as the kernel walks its range.
struct Segment {
  int cta;
  int64_t first, last;  // line indices of its first and last tiles
  int64_t slot;         // the partial slot it writes when its row group is split
};

// Walks every CTA's range of the line of `lens` x `groups` row groups the way the kernel does
// and returns each row group's segments (row groups in line order), checking on the way that
// every tile belongs to exactly one CTA and that every range is non-empty.
std::vector<std::vector<Segment>> walk_line(const std::vector<int64_t>& lens, int64_t groups,
                                            const TileLinePlan& plan) {
  std::vector<int64_t> group_begin;  // line index of each row group's first tile
  int64_t work = 0;
  for (int64_t l : lens)
    for (int64_t g = 0; g < groups; ++g) {
      group_begin.push_back(work);
      work += plan.key_tiles(l);
    }
  group_begin.push_back(work);
  EXPECT_GE(work, plan.ctas);
  std::vector<std::vector<Segment>> segs(group_begin.size() - 1);
  int64_t covered = 0;
  for (int c = 0; c < plan.ctas; ++c) {
    const int64_t t0 = plan.begin(c, work), t1 = plan.begin(c + 1, work);
    EXPECT_EQ(t0, covered) << "cta " << c;
    EXPECT_LT(t0, t1) << "cta " << c << ": empty range";
    covered = t1;
    for (int64_t t = t0; t < t1; ++t) EXPECT_EQ(plan.cta_of(t, work), c) << "tile " << t;
    // The row groups the range touches, each a segment.
    size_t grp = std::upper_bound(group_begin.begin(), group_begin.end(), t0) - group_begin.begin();
    for (--grp; grp + 1 < group_begin.size() && group_begin[grp] < t1; ++grp) {
      const int64_t a = std::max(t0, group_begin[grp]), b = std::min(t1, group_begin[grp + 1]);
      segs[grp].push_back({c, a, b - 1, plan.slot(c, group_begin[grp], work)});
    }
  }
  EXPECT_EQ(covered, work);
  return segs;
}

// The split row groups' bookkeeping: a group's segments are the CTAs cta_of(first tile) ..
// cta_of(last tile) in order, covering its tiles; a CTA writes at most one partial in each of its
// two slots; the merge finds each segment's slot where its writer put it; no two split groups
// share a counter (the CTA of their last tile).
void expect_consistent(const std::vector<int64_t>& lens, int64_t groups, const TileLinePlan& plan) {
  const std::vector<std::vector<Segment>> segs = walk_line(lens, groups, plan);
  int64_t work = 0;
  for (int64_t l : lens) work += groups * plan.key_tiles(l);
  std::set<int64_t> slots_used;
  std::set<int> counters_used;
  int64_t begin = 0;
  for (const std::vector<Segment>& s : segs) {
    ASSERT_FALSE(s.empty());
    const int c_first = plan.cta_of(s.front().first, work);
    const int c_last = plan.cta_of(s.back().last, work);
    EXPECT_EQ(s.front().first, begin);
    ASSERT_EQ(static_cast<int>(s.size()), c_last - c_first + 1);
    for (size_t i = 0; i < s.size(); ++i) {
      EXPECT_EQ(s[i].cta, c_first + static_cast<int>(i));
      if (i > 0) {
        EXPECT_EQ(s[i].first, s[i - 1].last + 1);
      }
    }
    begin = s.back().last + 1;
    if (c_first == c_last) continue;  // written whole: no partial, no counter
    EXPECT_TRUE(counters_used.insert(c_last).second) << "counter " << c_last << " shared";
    for (size_t i = 0; i < s.size(); ++i) {
      EXPECT_TRUE(slots_used.insert(s[i].slot).second) << "slot " << s[i].slot << " reused";
      EXPECT_GE(s[i].slot, 2 * int64_t(s[i].cta));
      EXPECT_LE(s[i].slot, 2 * int64_t(s[i].cta) + 1);
      EXPECT_LT(s[i].slot, plan.slots());
      // The merge's view (v04_persistent_balanced.cu, merge_row_group): the first CTA's slot
      // from the plan, every later one's first slot.
      const int64_t merged = i == 0 ? plan.slot(c_first, s.front().first, work)
                                    : 2 * int64_t(c_first + static_cast<int>(i));
      EXPECT_EQ(merged, s[i].slot);
    }
  }
}

}  // namespace

TEST(DecodeAttentionPersistent, TileLineCoversEveryTileOnceAndSplitsAreMergeable) {
  // Uniform and ragged batches, empty slots, a line barely longer than the CTAs, and more CTAs
  // than row groups (one row group split over many CTAs).
  const std::vector<std::vector<int64_t>> batches = {
      {4096}, {1}, {0, 17, 0, 300}, {65, 64, 63, 1, 128, 129}, {131072}, {5000, 100}, {2048, 2048}};
  for (const std::vector<int64_t>& lens : batches)
    for (int64_t groups : {1, 3, 8})
      for (int ctas : {1, 2, 7, 64, 264}) {
        TileLinePlan plan{ctas, 64};
        int64_t work = 0;
        for (int64_t l : lens) work += groups * plan.key_tiles(l);
        plan.ctas = static_cast<int>(std::min<int64_t>(ctas, work));  // as the kernel caps it
        SCOPED_TRACE(testing::Message()
                     << "lens[0] " << lens[0] << " groups " << groups << " ctas " << plan.ctas);
        expect_consistent(lens, groups, plan);
      }
}

TEST(DecodeAttentionPersistent, RangesAreBalancedToOneTile) {
  const TileLinePlan plan{264, 64};
  for (int64_t work : {264, 265, 512, 4096, 65536, 1000003}) {
    int64_t lo = INT64_MAX, hi = 0;
    for (int c = 0; c < plan.ctas; ++c) {
      const int64_t n = plan.begin(c + 1, work) - plan.begin(c, work);
      lo = std::min(lo, n);
      hi = std::max(hi, n);
    }
    EXPECT_LE(hi - lo, 1) << work;
    EXPECT_EQ(plan.begin(plan.ctas, work), work);
  }
  EXPECT_EQ(plan.key_tiles(0), 1);  // an empty sequence's tile writes its zeros
  EXPECT_EQ(plan.key_tiles(64), 1);
  EXPECT_EQ(plan.key_tiles(65), 2);
}

// On the H200: every resident CTA at the batched headline shapes and the long single
// sequences, two tiles a CTA at (1, 4k); the ragged batch's ranges within a tile of each other
// whatever its lengths; two CTAs an SM at D = 128 within the shared-memory budget.
TEST(DecodeAttentionPersistent, PlanFillsTheH200AtTheHeadlineShapes) {
  for (int64_t page : {16, 64}) {
    for (auto [b, len, min_len] : headline_batches()) {
      const Dims s = dims(b, len, page, 32, 8, 128, min_len);
      const TileLinePlan plan = decode_attention::plan_v04(s, kH200Sms);
      const int64_t slots = kH200Sms * PersistentGqaConfig::ctas_per_sm(s.d);
      const int64_t work = decode_attention::tile_line_work(s, plan);
      EXPECT_LE(plan.ctas, slots);
      EXPECT_GE(work, plan.ctas * PersistentGqaConfig::kMinTilesPerCta - 1);
      if (b == 1 && len == 4096) {
        EXPECT_EQ(plan.ctas, 256) << "8 KV heads x 64 tiles, two a CTA";
      } else {
        EXPECT_EQ(plan.ctas, slots) << "b=" << b << " len=" << len;
      }
      // The workspace: two partial slots and a counter a CTA, whatever the batch.
      EXPECT_EQ(plan.workspace_floats(s.rows(), s.d), 2 * plan.ctas * 16 * (s.d + 1) + plan.ctas);
    }
  }
  // The ragged batch of 64 (100 .. 16k) on the line: segments and slots consistent.
  const Dims ragged64 = dims(64, 16384, 16, 32, 8, 128, 100);
  expect_consistent(decode_attention::context_lengths(ragged64),
                    PersistentGqaConfig::row_groups(ragged64),
                    decode_attention::plan_v04(ragged64, kH200Sms));
  EXPECT_EQ(PersistentGqaConfig::ctas_per_sm(128), 2);
  EXPECT_EQ(PersistentGqaConfig::ctas_per_sm(64), 3);
  for (int64_t d : {64, 128, 256}) {
    EXPECT_LE(PersistentGqaConfig::smem_bytes(d), 227 * 1024) << d;
    // The warps' fp32 sum fits in Q's bytes it reuses.
    EXPECT_GE(PersistentGqaConfig::q_bytes(d),
              GqaMmaConfig::kRows * PersistentGqaConfig::red_stride(d) * 4);
  }
}

// ---- v05: v04's line with the ring's page indices staged in shared memory ----

namespace {

using decode_attention::PageIndexRing;
using decode_attention::StagedPageConfig;

// Replays staged_page_kernel's order (v05_staged_page_indices.cu) for a range of tiles cut into
// segments of the given lengths, with `stages` K/V stages, a ring of `slots` index slots and the
// indices fetched `lead` tiles ahead: the prologue's group (Q of segment 0, the first lead
// tiles' indices) waited for and published; then the first stages - 1 tiles' copies, group g
// carrying tile g's K/V and tile g + lead's indices (and the Q of the segment that tile opens,
// when the warps are in the segment before it); iteration i waits for groups <= i, passes a
// barrier, issues group i + stages - 1, works on tile i and, at a segment's end, sums the warps
// through tile i's stage. Returns the first thing the kernel relies on that does not hold (empty
// when all do): a tile's indices and its segment's Q complete and published when read; no slot
// or stage written while something may still read it.
std::string replay_staged_ring(int stages, const std::vector<int>& segment_tiles, int lead,
                               int slots) {
  std::vector<int> seg_of;  // the segment of each tile
  for (size_t s = 0; s < segment_tiles.size(); ++s)
    for (int k = 0; k < segment_tiles[s]; ++k) seg_of.push_back(static_cast<int>(s));
  const int n = static_cast<int>(seg_of.size());
  auto opens = [&](int t) { return t == 0 || seg_of[t] != seg_of[t - 1]; };
  // Reads and writes are stamped with the barrier that follows them: the prologue's copies and
  // fetches after its barrier come before iteration 0's (stamp 0), iteration i's before
  // iteration i + 1's (stamp i + 1). A write stamped w may replace what a read stamped r used
  // only when r < w (a barrier between). Groups: -1 is the prologue's.
  struct Slot {
    int tile = -1, group = -2, read_at = -1;
  };
  std::vector<Slot> ring(static_cast<size_t>(slots));
  std::map<int, int> q_group;  // segment -> group of its Q fetched ahead (-1: the prologue's)
  int use_seg = 0, q_fetched = 0, tab = 0, kv = 0;
  std::string bad;
  auto fail = [&](const std::string& what) {
    if (bad.empty()) bad = what;
  };
  auto fetch = [&](int group, int stamp) {
    if (tab >= n) return;
    Slot& s = ring[static_cast<size_t>(tab % slots)];
    if (s.tile >= 0 && s.read_at < 0)
      fail("tile " + std::to_string(s.tile) + "'s indices replaced before its copies read them");
    if (s.tile >= 0 && s.read_at >= stamp)
      fail("tile " + std::to_string(s.tile) + "'s indices replaced while its copies read them");
    s = {tab, group, -1};
    if (opens(tab) && seg_of[tab] == use_seg + 1 && q_fetched < seg_of[tab]) {
      q_fetched = seg_of[tab];
      q_group[q_fetched] = group;
    }
    ++tab;
  };
  auto issue_kv = [&](int complete_through, int stamp) {
    if (kv >= n) return;
    Slot& s = ring[static_cast<size_t>(kv % slots)];
    if (s.tile != kv) fail("tile " + std::to_string(kv) + "'s indices not in its slot");
    if (s.group > complete_through)
      fail("tile " + std::to_string(kv) + "'s indices read while in flight");
    s.read_at = stamp;
    ++kv;
  };
  q_group[0] = -1;
  for (int t = 0; t < lead; ++t) fetch(-1, -1);
  for (int st = 0; st < stages - 1; ++st) {  // after wait_group 0 and the prologue's barrier
    issue_kv(-1, 0);
    fetch(st, 0);
  }
  for (int i = 0; i < n; ++i) {
    // wait_group stages - 2: groups <= i complete; the barrier publishes them.
    issue_kv(i, i + 1);
    fetch(i + stages - 1, i + 1);
    const int s = seg_of[i];
    if (s != use_seg) fail("tile " + std::to_string(i) + " worked on in the wrong segment");
    const bool ends = i + 1 == n || seg_of[i + 1] != s;
    // The warps' sum goes through tile i's stage: no copy in flight may target it.
    for (int t = i + 1; ends && t < kv; ++t)
      if (t % stages == i % stages) fail("tile " + std::to_string(t) + " lands in the sum's stage");
    if (ends && i + 1 < n) {
      // The switch: a Q fetched ahead (q_fetched == the new segment) must be in a group that
      // iteration i + 1's wait completes; otherwise the kernel loads it here.
      ++use_seg;
      if (q_fetched == use_seg && q_group[use_seg] > i + 1)
        fail("segment " + std::to_string(use_seg) + "'s Q read while in flight");
    }
  }
  return bad;
}

std::string replay_staged_ring(int stages, const std::vector<int>& segment_tiles) {
  return replay_staged_ring(stages, segment_tiles, PageIndexRing::lead(stages),
                            PageIndexRing::kSlots);
}

const std::vector<std::vector<int>>& ring_segment_cases() {
  static const std::vector<std::vector<int>> cases = {{1},
                                                      {2},
                                                      {3},
                                                      {64},
                                                      {1, 1, 1, 1, 1},
                                                      {2, 1, 3, 1, 1, 5},
                                                      {5, 32, 32, 7},
                                                      {1, 2, 3, 4, 5, 6, 7, 8},
                                                      {15, 1, 1, 16},
                                                      {4, 4, 4, 4, 4, 4}};
  return cases;
}

}  // namespace

TEST(DecodeAttentionStaged, PageIndexRingHoldsEveryPageATileSpans) {
  for (int64_t page : {1, 2, 3, 5, 16, 17, 63, 64, 100, 128, 4096}) {
    for (int64_t len : {0, 1, 15, 16, 17, 63, 64, 65, 1000, 4097, 131072}) {
      const int64_t tiles = TileLinePlan{1, 64}.key_tiles(len);
      for (int64_t k = 0; k < tiles; ++k) {
        const int e = PageIndexRing::entries(k, 64, page, len);
        const int64_t p0 = PageIndexRing::first_page(k, 64, page);
        ASSERT_LE(e, PageIndexRing::kEntries) << page << " " << len << " " << k;
        std::set<int64_t> pages;
        for (int64_t j = k * 64; j < std::min(len, k * 64 + 64); ++j) {
          const int64_t idx = j / page - p0;  // the kernel's pages[page_of(j) - page0]
          ASSERT_GE(idx, 0);
          ASSERT_LT(idx, e) << "page " << page << " len " << len << " key " << j;
          pages.insert(j / page);
        }
        EXPECT_EQ(static_cast<int64_t>(pages.size()), e) << "no index fetched in vain";
        // Every fetched column exists in the block table (its width: the longest's pages).
        if (e > 0) {
          EXPECT_LE(p0 + e, (len + page - 1) / page);
        }
      }
    }
  }
  EXPECT_EQ(PageIndexRing::entries(0, 64, 16, 0), 0);  // an empty sequence reads no index
}

TEST(DecodeAttentionStaged, RingReadsLandedIndicesAndReusesNothingLive) {
  for (int64_t d : {64, 128, 256}) {
    const int stages = GqaMmaConfig::stages(d);
    for (const std::vector<int>& segs : ring_segment_cases())
      EXPECT_EQ(replay_staged_ring(stages, segs), "")
          << "d " << d << ", " << segs.size() << " segments from " << segs[0] << " tiles";
  }
}

// The replay can fail: a lead one short of stages - 1 reads indices in flight; a ring of lead
// slots replaces indices while copies read them, and one of 2 (stages - 1) - 1 slots does so in
// the prologue (its copies and fetches share one barrier interval).
TEST(DecodeAttentionStaged, ReplayCatchesAShortLeadOrASmallRing) {
  const std::vector<int> segs = {5, 32, 32, 7};
  for (int stages : {3, 4}) {
    const int lead = PageIndexRing::lead(stages);
    EXPECT_NE(replay_staged_ring(stages, segs, lead - 1, PageIndexRing::kSlots), "") << stages;
    EXPECT_NE(replay_staged_ring(stages, segs, lead, lead), "") << stages;
  }
  EXPECT_NE(replay_staged_ring(4, segs, 3, 4), "");  // 4 stages need 6 slots
}

// Shared memory: two CTAs an SM at D = 128 (as v04), the warps' fp32 sum exactly one stage.
TEST(DecodeAttentionStaged, SharedMemoryBudget) {
  for (int64_t d : {64, 128, 256}) {
    EXPECT_LE(StagedPageConfig::smem_bytes(d), 227 * 1024) << d;
    EXPECT_LE(StagedPageConfig::reduction_bytes(d), GqaMmaConfig::stage_bytes(d)) << d;
  }
  EXPECT_EQ(StagedPageConfig::ctas_per_sm(128), 2);
  EXPECT_EQ(StagedPageConfig::ctas_per_sm(64), 3);
  EXPECT_EQ(StagedPageConfig::ctas_per_sm(256), 1);
}

// The split of each headline shape on the H200: the CTAs, the tiles a CTA, and how many CTAs a
// row group spans (its partials, merged by the last to arrive): the worklog's arithmetic.
TEST(DecodeAttentionStaged, PlanAtTheHeadlineShapes) {
  struct Want {
    int64_t b, len, min_len;
    int ctas;
    int64_t max_parts;  // the most CTAs one row group spans
  };
  for (int64_t page : {16, 64}) {
    for (const Want& w :
         {Want{1, 4096, 0, 256, 32}, Want{1, 32768, 0, 264, 33}, Want{1, 131072, 0, 264, 33},
          Want{16, 8192, 0, 264, 3}, Want{64, 4096, 0, 264, 2}, Want{256, 2048, 0, 264, 2},
          Want{64, 16384, 100, 264, 4}}) {
      const Dims s = dims(w.b, w.len, page, 32, 8, 128, w.min_len);
      const TileLinePlan plan = decode_attention::plan_v05(s, kH200Sms);
      SCOPED_TRACE(testing::Message() << "b " << w.b << " len " << w.len << " page " << page);
      EXPECT_EQ(plan.ctas, w.ctas);
      const int64_t work = decode_attention::tile_line_work(s, plan);
      const int64_t groups = PersistentGqaConfig::row_groups(s);
      int64_t begin = 0, max_parts = 0;
      for (int64_t l : decode_attention::context_lengths(s))
        for (int64_t gi = 0; gi < groups; ++gi) {
          const int64_t end = begin + plan.key_tiles(l);
          max_parts = std::max<int64_t>(max_parts,
                                        plan.cta_of(end - 1, work) - plan.cta_of(begin, work) + 1);
          begin = end;
        }
      EXPECT_EQ(begin, work);
      EXPECT_EQ(max_parts, w.max_parts);
      expect_consistent(decode_attention::context_lengths(s), groups, plan);
    }
  }
}

// v06's wave model: every plan covers each key once at chunks of whole 64-key tiles (at least
// two), whatever the lengths; the wave model picks one wave at B = 1 (32 splits at L = 4k and
// 32k, 33 at 128k: 264 CTAs, two an SM), one split when the batch's row groups already fill two CTAs an SM for whole waves, and
// cuts a ragged batch's longest sequence rather than leaving it to one CTA.
TEST(DecodeAttentionTmaPages, WavePlanCoversEveryKeyOnce) {
  using decode_attention::SplitKvTarget;
  for (const std::vector<int64_t>& lens : {std::vector<int64_t>{0},
                                           {1},
                                           {17, 0, 1000},
                                           {131072},
                                           {100, 16384, 5000, 0, 63},
                                           std::vector<int64_t>(256, 2048)}) {
    for (const SplitKvTarget& t : {SplitKvTarget{8, 264, 64, 128}, SplitKvTarget{1, 1, 64, 128},
                                   SplitKvTarget{64, 132, 64, 128}}) {
      const SplitKvPlan plan = decode_attention::plan_split_kv_waves(lens, t, 128);
      EXPECT_EQ(plan.chunk % 64, 0);
      EXPECT_GE(plan.chunk, 128);
      const int64_t max_len = *std::max_element(lens.begin(), lens.end());
      EXPECT_EQ(plan.max_splits, plan.splits_of(max_len));
      for (int64_t l : lens) expect_covers(plan, l);
    }
  }
}

TEST(DecodeAttentionTmaPages, PlanAtTheHeadlineShapes) {
  using decode_attention::TmaPagesConfig;
  EXPECT_EQ(TmaPagesConfig::ctas_per_sm(128), 2);
  EXPECT_EQ(TmaPagesConfig::ctas_per_sm(64), 3);
  EXPECT_EQ(TmaPagesConfig::ctas_per_sm(256), 1);
  for (int64_t d : {64, 128, 256}) {
    EXPECT_LE(TmaPagesConfig::smem_bytes(d), 227 * 1024);
    EXPECT_LE(GqaMmaConfig::merge_bytes(d), GqaMmaConfig::stages(d) * GqaMmaConfig::stage_bytes(d));
  }
  for (int64_t page : {8, 16, 64, 128, 4096}) EXPECT_TRUE(TmaPagesConfig::page_ok(page));
  for (int64_t page : {1, 2, 4, 24, 100}) EXPECT_FALSE(TmaPagesConfig::page_ok(page));
  const std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, int>> expected = {
      {{1, 4096}, {128, 32}},  {{1, 32768}, {1024, 32}}, {{1, 131072}, {4032, 33}},
      {{16, 8192}, {4096, 2}}, {{64, 4096}, {4096, 1}},  {{256, 2048}, {2048, 1}}};
  for (int64_t page : {16, 64}) {
    for (auto [b, len, min_len] : headline_batches()) {
      const Dims s = dims(b, len, page, 32, 8, 128, min_len);
      const decode_attention::CountedSplitPlan p = decode_attention::plan_v06(s, kH200Sms);
      EXPECT_EQ(p.groups, b * 8);
      EXPECT_EQ(p.workspace_floats(s.rows(), s.d),
                p.max_splits > 1 ? s.rows() * p.max_splits * (s.d + 1) + p.groups : 0);
      const auto it = expected.find({b, len});
      if (min_len == 0) {
        ASSERT_NE(it, expected.end());
        EXPECT_EQ(p.chunk, it->second.first) << "b=" << b << " len=" << len;
        EXPECT_EQ(p.max_splits, it->second.second) << "b=" << b << " len=" << len;
      } else {  // ragged: the longest sequence is cut, into chunks of about the mean work a slot
        EXPECT_GT(p.max_splits, 1);
        EXPECT_LT(p.chunk, len);
      }
    }
  }
}

// v11 (bf16) and v12 (e4m3) merge in a cluster only where cluster_merge_pays: uniform lengths
// chunks of at most kClusterMaxChunk keys, at most kClusterMaxClusters clusters; there at most 16 splits a sequence (8 at D = 256
// in bf16, one CTA an SM), every key covered once, no workspace, and v06's chunk (v09's for
// e4m3) where it already fits a cluster. Elsewhere v06's plan and its counters, exactly.
TEST(DecodeAttentionClusterMerge, PlanAtTheHeadlineAndAwkwardShapes) {
  std::vector<Dims> shapes;
  for (int64_t page : {16, 64})
    for (auto [b, len, min_len] : headline_batches())
      shapes.push_back(dims(b, len, page, 32, 8, 128, min_len));
  shapes.push_back(dims(1, 1, 16, 32, 8, 128, 0));
  shapes.push_back(dims(3, 1000, 16, 10, 2, 128, 17));
  shapes.push_back(dims(1, 131072, 128, 32, 4, 64, 0));
  shapes.push_back(dims(1, 131072, 16, 32, 8, 256, 0));
  shapes.push_back(dims(1, 8192, 16, 32, 8, 128, 0));
  shapes.push_back(dims(8, 4096, 16, 32, 8, 128, 0));
  EXPECT_EQ(decode_attention::max_cluster_splits(128), 16);
  EXPECT_EQ(decode_attention::max_cluster_splits(256), 8);
  EXPECT_EQ(decode_attention::max_cluster_splits(128, 1), 16);
  // Where the runs measured a gain (B = 1 up to 8k keys) and a loss (longer chunks, ragged).
  auto clustered = [](const Dims& s, int64_t elem) {
    return decode_attention::plan_v11(s, kH200Sms, elem).cluster;
  };
  for (int64_t elem : {2, 1}) {
    EXPECT_TRUE(clustered(dims(1, 4096, 16, 32, 8, 128, 0), elem));
    EXPECT_TRUE(clustered(dims(1, 8192, 64, 32, 8, 128, 0), elem));
    EXPECT_FALSE(clustered(dims(1, 16384, 16, 32, 8, 128, 0), elem));
    EXPECT_FALSE(clustered(dims(1, 131072, 16, 32, 8, 128, 0), elem));
    EXPECT_FALSE(clustered(dims(8, 4096, 16, 32, 8, 128, 0), elem));
    EXPECT_FALSE(clustered(dims(2, 2048, 16, 32, 8, 128, 0), elem));  // 16 clusters
    EXPECT_FALSE(clustered(dims(8, 1024, 16, 32, 8, 128, 0), elem));
    EXPECT_TRUE(clustered(dims(2, 2048, 16, 32, 4, 128, 0), elem));  // 8 clusters (hkv 4)
    // Each condition alone: lengths that differ (6 clusters, short chunks), an empty slot (8
    // clusters), and row tiles counted in the clusters (B = 1, 8 query rows a token: 2 tiles).
    EXPECT_FALSE(clustered(dims(3, 1000, 16, 10, 2, 128, 17), elem));
    EXPECT_FALSE(clustered(dims(4, 2048, 16, 32, 2, 128, 0, /*empty*/ 1), elem));
    EXPECT_FALSE(clustered(dims(1, 4096, 16, 32, 8, 128, 0, 0, /*qlen*/ 8), elem));  // 16
    EXPECT_TRUE(clustered(dims(1, 4096, 16, 32, 4, 128, 0, 0, /*qlen*/ 4), elem));   // 8
    EXPECT_FALSE(clustered(dims(16, 8192, 16, 32, 8, 128, 0), elem));
    EXPECT_FALSE(clustered(dims(64, 16384, 16, 32, 8, 128, 100), elem));  // ragged
  }
  for (int64_t elem : {2, 1}) {
    for (const Dims& s : shapes) {
      if (elem == 1 && s.d % 128 != 0) continue;  // e4m3 takes D in multiples of 128
      const decode_attention::ClusterSplitPlan p = decode_attention::plan_v11(s, kH200Sms, elem);
      const decode_attention::CountedSplitPlan v06 = decode_attention::plan_v06(s, kH200Sms, elem);
      const std::string at = std::to_string(elem) + " " + std::to_string(s.b) + " " +
                             std::to_string(s.len) + " " + std::to_string(s.min_len);
      if (!p.cluster) {
        EXPECT_EQ(p.chunk, v06.chunk) << at;
        EXPECT_EQ(p.max_splits, v06.max_splits) << at;
        EXPECT_EQ(p.workspace_floats(s.rows(), s.d), v06.workspace_floats(s.rows(), s.d)) << at;
        continue;
      }
      const int most = decode_attention::max_cluster_splits(s.d, elem);
      EXPECT_LE(p.chunk, decode_attention::kClusterMaxChunk) << at;
      EXPECT_LE(p.max_splits, most) << at;
      EXPECT_EQ(p.workspace_floats(s.rows(), s.d), 0);
      EXPECT_EQ(p.chunk % decode_attention::GqaMmaConfig::kBlockN, 0);
      for (int64_t len : decode_attention::context_lengths(s)) {
        const int splits = p.splits_of(len);
        EXPECT_LE(splits, p.max_splits);
        int64_t covered = 0;
        for (int i = 0; i < splits; ++i) covered += p.key_end(i, len) - p.key_begin(i);
        EXPECT_EQ(covered, len);
      }
      if (v06.max_splits <= most) {
        EXPECT_EQ(p.chunk, v06.chunk) << at;
      }
    }
  }
}

// v13 pushes each CTA's rows into their owners' receive region beside the stages: two CTAs an SM
// still at D = 128 (16 splits a cluster), a region that holds every row an owner receives where
// the plan clusters, v11's plan where v11 clusters and those rows fit, chunks up to
// kPushClusterMaxChunk keys beyond it (B = 1 at 16k), the counters elsewhere.
TEST(DecodeAttentionClusterPushMerge, ReceiveRegionAndPlan) {
  using decode_attention::PushMergeConfig;
  EXPECT_EQ(PushMergeConfig::ctas_per_sm(128), 2);
  EXPECT_EQ(PushMergeConfig::ctas_per_sm(64), decode_attention::TmaPagesConfig::ctas_per_sm(64));
  for (int64_t d : {64, 128, 256}) EXPECT_LE(PushMergeConfig::smem_bytes(d), 227 * 1024);
  EXPECT_EQ(PushMergeConfig::recv_bytes(128), 16 * 129 * 4 + 16);
  EXPECT_TRUE(PushMergeConfig::fits(4, 16));   // Qwen3-8B at B = 1: one row an owner
  EXPECT_TRUE(PushMergeConfig::fits(16, 16));  // a full row tile over 16 splits
  EXPECT_TRUE(PushMergeConfig::fits(16, 8));   // two rows an owner, 8 splits each
  EXPECT_FALSE(PushMergeConfig::fits(16, 3));  // six rows of three splits: 18 slots
  EXPECT_TRUE(PushMergeConfig::fits(15, 2));   // eight rows an owner of two splits: 16 slots
  EXPECT_FALSE(PushMergeConfig::fits(16, 5));  // four of five: 20
  std::vector<Dims> shapes;
  for (int64_t page : {16, 64})
    for (auto [b, len, min_len] : headline_batches())
      shapes.push_back(dims(b, len, page, 32, 8, 128, min_len));
  for (int64_t len : {1000, 4096, 8192}) {
    shapes.push_back(dims(1, len, 16, 32, 8, 128, 0));
    shapes.push_back(dims(1, len, 16, 32, 4, 128, 0, 0, /*qlen*/ 4));  // 16 rows a row group
    shapes.push_back(dims(1, len, 16, 10, 2, 64, 0, 0, /*qlen*/ 3));   // 15 rows
    shapes.push_back(dims(2, len, 16, 8, 2, 256, 0));
  }
  for (const Dims& s : shapes) {
    const decode_attention::ClusterSplitPlan p = decode_attention::plan_v13(s, kH200Sms);
    const decode_attention::ClusterSplitPlan v11 = decode_attention::plan_v11(s, kH200Sms);
    const int64_t rows = std::min<int64_t>(16, s.group() * s.qlen);
    const std::string at = std::to_string(s.b) + " " + std::to_string(s.len) + " " +
                           std::to_string(s.hq) + "/" + std::to_string(s.hkv) + " " +
                           std::to_string(s.qlen);
    // Where v11 clusters and the rows fit, v13 clusters the same way; it may cluster longer
    // chunks too (up to kPushClusterMaxChunk keys, and beyond where it streams with the counter
    // plan's splits).
    if (v11.cluster && PushMergeConfig::fits(rows, v11.max_splits)) {
      EXPECT_TRUE(p.cluster) << at;
      EXPECT_EQ(p.chunk, v11.chunk) << at;
      EXPECT_EQ(p.max_splits, v11.max_splits) << at;
    }
    if (p.cluster) {
      EXPECT_TRUE(PushMergeConfig::fits(rows, p.max_splits)) << at;
      if (p.chunk > decode_attention::kPushClusterMaxChunk) {  // clusters of two only
        EXPECT_EQ(p.max_splits, 2) << at;
        EXPECT_EQ(p.max_splits, decode_attention::plan_v06(s, kH200Sms).max_splits) << at;
      }
      EXPECT_LE(p.max_splits, decode_attention::max_cluster_splits(s.d)) << at;
      EXPECT_EQ(p.workspace_floats(s.rows(), s.d), 0) << at;
      for (int64_t len : decode_attention::context_lengths(s)) {
        int64_t covered = 0;
        for (int i = 0; i < p.splits_of(len); ++i) covered += p.key_end(i, len) - p.key_begin(i);
        EXPECT_EQ(covered, len) << at;
      }
    } else {
      const decode_attention::CountedSplitPlan v06 = decode_attention::plan_v06(s, kH200Sms);
      EXPECT_EQ(p.chunk, v06.chunk) << at;
      EXPECT_EQ(p.max_splits, v06.max_splits) << at;
    }
  }
  for (int64_t page : {16, 64}) {  // (1, 16k) clustered by v13 only; (1, 32k) by neither
    EXPECT_TRUE(decode_attention::plan_v13(dims(1, 16384, page, 32, 8, 128, 0), kH200Sms).cluster);
    EXPECT_FALSE(decode_attention::plan_v11(dims(1, 16384, page, 32, 8, 128, 0), kH200Sms).cluster);
    EXPECT_FALSE(decode_attention::plan_v13(dims(1, 32768, page, 32, 8, 128, 0), kH200Sms).cluster);
  }
  EXPECT_FALSE(decode_attention::plan_v13(dims(1, 131072, 16, 32, 8, 128, 0), kH200Sms).cluster);
  // (16, 8k): two splits of 4096 keys, the counter plan's, merged in 128 clusters of two.
  for (const Dims& s : {dims(16, 8192, 16, 32, 8, 128, 0), dims(16, 2500, 16, 16, 8, 128, 0)}) {
    const decode_attention::ClusterSplitPlan p = decode_attention::plan_v13(s, kH200Sms);
    EXPECT_TRUE(p.cluster) << s.len;
    EXPECT_EQ(p.max_splits, 2) << s.len;
    EXPECT_EQ(p.chunk, s.len == 8192 ? 4096 : 1280) << s.len;  // 2500: the awkward shape's
  }
  // Not where the cluster plan has fewer splits than the counter plan's ((1, 32k): 16 of 2048
  // keys against 32 of 1024, 54fa11d's loss), nor one split, nor four or eight long splits
  // ((8, 8k), (4, 16k): 6459d2f's loss).
  for (const Dims& s : {dims(64, 4096, 16, 32, 8, 128, 0), dims(8, 8192, 16, 32, 8, 128, 0),
                        dims(4, 16384, 16, 32, 8, 128, 0)})
    EXPECT_FALSE(decode_attention::plan_v13(s, kH200Sms).cluster) << s.b;
  EXPECT_TRUE(decode_attention::plan_v13(dims(16, 4096, 16, 32, 8, 128, 0), kH200Sms).cluster);
  // v14 (e4m3: half-size stages, still two CTAs an SM with the receive region) clusters where v13
  // does at the headline shapes.
  EXPECT_EQ(PushMergeConfig::ctas_per_sm(128, 1), 2);
  for (auto [b, len] :
       {std::pair<int64_t, int64_t>{1, 4096}, {1, 16384}, {1, 32768}, {16, 8192}, {64, 4096}}) {
    const Dims s = dims(b, len, 16, 32, 8, 128, 0);
    EXPECT_EQ(decode_attention::plan_v13(s, kH200Sms, 1).cluster,
              decode_attention::plan_v13(s, kH200Sms).cluster)
        << b << " " << len;
  }
  // The awkward shape that takes v13's long chunks on a GPU: 16 splits of 960 keys.
  const decode_attention::ClusterSplitPlan awkward =
      decode_attention::plan_v13(dims(1, 15000, 16, 8, 2, 128, 0), kH200Sms);
  EXPECT_TRUE(awkward.cluster);
  EXPECT_EQ(awkward.chunk, 960);
  EXPECT_EQ(awkward.max_splits, 16);
  EXPECT_FALSE(decode_attention::plan_v11(dims(1, 15000, 16, 8, 2, 128, 0), kH200Sms).cluster);
  // The awkward shapes of 16-row row groups on the cluster path: 8 splits, two rows an owner.
  for (const Dims& s : {dims(1, 1000, 16, 32, 2, 256, 0), dims(1, 1000, 16, 10, 2, 128, 0, 0, 4)}) {
    const decode_attention::ClusterSplitPlan p = decode_attention::plan_v13(s, kH200Sms);
    EXPECT_TRUE(p.cluster);
    EXPECT_EQ(p.max_splits, 8);
  }
  // A batch whose sequences take different split counts is refused the cluster path if any
  // count overflows the region (the plan clusters equal lengths only; this holds it anyway).
  EXPECT_FALSE(decode_attention::PushMergeConfig::fits(16, 3));
  EXPECT_TRUE(decode_attention::plan_v13(dims(1, 4096, 16, 32, 8, 128, 0), kH200Sms).cluster);
}

// v22's compact grid: the counter path's items are every sequence's splits, not max_splits a
// sequence. Qwen3-8B's ragged batch on e4m3 (plan_v13's counter path): 1032 items against a
// (split, row group, sequence) grid of 3584 CTAs.
TEST(DecodeAttentionCompactGrid, RaggedBatchLaunchesOnlyItsSplits) {
  for (int64_t page : {16, 64}) {
    const Dims s = dims(64, 16384, page, 32, 8, 128, 100);
    const decode_attention::ClusterSplitPlan p = decode_attention::plan_v13(s, kH200Sms, 1);
    ASSERT_FALSE(p.cluster);
    int64_t items = 0;
    for (int64_t len : decode_attention::context_lengths(s)) items += p.splits_of(len);
    const int64_t units = s.hkv * decode_attention::GqaMmaConfig::row_tiles(s);
    EXPECT_EQ(p.chunk, 2368);
    EXPECT_EQ(items * units, 1032);
    EXPECT_EQ(int64_t(p.max_splits) * units * s.b, 3584);
  }
  EXPECT_EQ(sizeof(decode_attention::SplitKvPlan), 16u);  // compact_batch in the padding
}

// v20: about four CTAs a slot on equal lengths with enough row groups (counter merge), v13's plan
// (e4m3) elsewhere; every key once.
TEST(DecodeAttentionFineSplits, PlanAtTheHeadlineAndAwkwardShapes) {
  using decode_attention::ClusterSplitPlan;
  for (int64_t page : {16, 64}) {
    const ClusterSplitPlan p =
        decode_attention::plan_v20(dims(16, 8192, page, 32, 8, 128, 0), kH200Sms);
    EXPECT_FALSE(p.cluster);
    EXPECT_EQ(p.chunk, 960);  // 1056 CTAs wanted over 128 row groups: nine splits
    EXPECT_EQ(p.max_splits, 9);
    EXPECT_EQ(p.groups, 128);
    // v21 on bf16: three 32 KiB stages, still two CTAs an SM, so the same splits.
    const ClusterSplitPlan b16 =
        decode_attention::plan_v20(dims(16, 8192, page, 32, 8, 128, 0), kH200Sms, 2);
    EXPECT_EQ(b16.chunk, 960);
    EXPECT_FALSE(b16.cluster);
  }
  std::vector<Dims> shapes;
  for (int64_t page : {16, 64})
    for (auto [b, len, min_len] : headline_batches())
      shapes.push_back(dims(b, len, page, 32, 8, 128, min_len));
  shapes.push_back(dims(16, 2500, 16, 16, 8, 128, 0));
  shapes.push_back(dims(8, 3000, 16, 40, 8, 128, 0));     // group 5
  shapes.push_back(dims(32, 4000, 16, 32, 2, 128, 100));  // ragged: v13's plan
  for (const Dims& s : shapes) {
    const ClusterSplitPlan p = decode_attention::plan_v20(s, kH200Sms);
    const ClusterSplitPlan v13 = decode_attention::plan_v13(s, kH200Sms, 1);
    const std::vector<int64_t> lens = decode_attention::context_lengths(s);
    const auto [lo, hi] = std::minmax_element(lens.begin(), lens.end());
    const std::string at =
        std::to_string(s.b) + " " + std::to_string(s.len) + " " + std::to_string(s.min_len);
    if (*lo != *hi || s.b == 1) {  // ragged, or few row groups: v13's plan as it is
      EXPECT_EQ(p.cluster, v13.cluster) << at;
      EXPECT_EQ(p.chunk, v13.chunk) << at;
      EXPECT_EQ(p.max_splits, v13.max_splits) << at;
      continue;
    }
    EXPECT_LE(p.chunk, v13.chunk) << at;
    if (s.b == 64 && s.page == 16) {  // (64, 4k): three splits of 1408 keys
      EXPECT_EQ(p.chunk, 1408) << at;
    }
    if (s.b == 256) {  // (256, 2k): one split a row group already fills the slots four times
      EXPECT_EQ(p.chunk, v13.chunk) << at;
    }
    EXPECT_EQ(p.chunk % 64, 0) << at;
    if (!p.cluster && p.max_splits > 1) {
      EXPECT_EQ(p.groups, s.b * s.hkv * decode_attention::GqaMmaConfig::row_tiles(s)) << at;
      EXPECT_GT(p.workspace_floats(s.rows(), s.d), 0) << at;
    }
    for (int64_t len : lens) {
      int64_t covered = 0;
      for (int i = 0; i < p.splits_of(len); ++i) {
        EXPECT_LT(p.key_begin(i), std::max<int64_t>(len, 1)) << at;
        covered += p.key_end(i, len) - p.key_begin(i);
      }
      EXPECT_EQ(covered, len) << at;
    }
  }
}

// v25's plan: v13's clusters without the chunk cap where the lengths are equal and the launch
// makes at most eight clusters (B = 1 at Qwen3-8B's heads: 16 splits a KV head from 2k keys on,
// where v13 gives (1, 32k) and (1, 128k) to the counter path); v13's plan elsewhere.
TEST(DecodeAttentionClusterSteal, PlanAtTheHeadlineAndAwkwardShapes) {
  using decode_attention::ClusterSplitPlan;
  for (int64_t page : {16, 64}) {
    for (int64_t len : {4096, 16384, 32768, 131072}) {
      const Dims s = dims(1, len, page, 32, 8, 128, 0);
      const ClusterSplitPlan p = decode_attention::plan_v25(s, kH200Sms);
      EXPECT_TRUE(p.cluster) << len;
      EXPECT_EQ(p.max_splits, 16) << len;
      EXPECT_EQ(p.chunk, len / 16) << len;
      EXPECT_EQ(p.workspace_floats(s.rows(), s.d), 0) << len;
    }
    EXPECT_FALSE(decode_attention::plan_v13(dims(1, 32768, page, 32, 8, 128, 0), kH200Sms).cluster);
  }
  std::vector<Dims> shapes;
  for (int64_t page : {16, 64})
    for (auto [b, len, min_len] : headline_batches())
      shapes.push_back(dims(b, len, page, 32, 8, 128, min_len));
  shapes.push_back(dims(1, 15000, 16, 8, 2, 128, 0));     // two clusters of awkward length
  shapes.push_back(dims(2, 3000, 16, 40, 8, 128, 0));     // group 5: 16 clusters, v13's plan
  shapes.push_back(dims(32, 4000, 16, 32, 2, 128, 100));  // ragged: v13's plan
  for (const Dims& s : shapes) {
    const ClusterSplitPlan p = decode_attention::plan_v25(s, kH200Sms);
    const ClusterSplitPlan v13 = decode_attention::plan_v13(s, kH200Sms);
    const std::vector<int64_t> lens = decode_attention::context_lengths(s);
    const auto [lo, hi] = std::minmax_element(lens.begin(), lens.end());
    const int64_t clusters = s.b * s.hkv * decode_attention::GqaMmaConfig::row_tiles(s);
    const std::string at = std::to_string(s.b) + " " + std::to_string(s.len);
    if (*lo != *hi || clusters > decode_attention::kClusterMaxClusters) {
      EXPECT_EQ(p.cluster, v13.cluster) << at;
      EXPECT_EQ(p.chunk, v13.chunk) << at;
      EXPECT_EQ(p.max_splits, v13.max_splits) << at;
      continue;
    }
    EXPECT_TRUE(p.cluster) << at;
    EXPECT_LE(p.max_splits, decode_attention::kMaxClusterSplits) << at;
    EXPECT_TRUE(decode_attention::PushMergeConfig::fits(std::min<int64_t>(16, s.group() * s.qlen),
                                                        p.max_splits))
        << at;
  }
}

// v38's table windows (TableWindow in tma_pages.cuh): at every page size, split start and length,
// each stage's pages come from the window in use, the one the producer's registers hold then
// (requested when the window before it came into use), at the lanes holding their columns: none
// wraps past the window's end, none reads another window's entry.
TEST(DecodeAttentionTableWindow, EveryStageFindsItsPagesInTheWindowInUse) {
  using decode_attention::TableWindowIndex;
  for (int shift = 3; shift <= 8; ++shift)  // pages of 8 to 256 tokens
    for (int64_t j0 : {0, 64, 128, 960, 4096, 4160, 131008})
      for (int64_t keys : {1, 63, 64, 65, 2048, 2049, 20000}) {
        const int64_t j1 = j0 + keys;
        TableWindowIndex at{j0 >> shift, 0};
        int cur = 0, next = 1;  // the windows the producer's two registers hold
        for (int64_t k0 = j0; k0 < j1; k0 += 64) {
          const int64_t col = k0 >> shift;
          const int count = static_cast<int>(((std::min(j1, k0 + 64) - 1) >> shift) - col + 1);
          if (at.advance(col)) {
            cur = next;
            next = at.w + 1;
          }
          ASSERT_EQ(cur, at.w) << "page " << (1 << shift) << ", keys " << k0;
          for (int p = 0; p < count; ++p)
            ASSERT_EQ(at.column(cur, at.source_lane(col, p)), col + p)
                << "page " << (1 << shift) << ", split from " << j0 << ", stage at " << k0
                << ", page " << p;
        }
      }
}

// v25's walk: the splits of a row group, stepped in random orders against one counter as the
// kernel's producers step (a ticket asked for at a stage, read at its advance), take every unit
// of the sequence exactly once and none past it; a split alone takes them in order.
TEST(DecodeAttentionClusterSteal, EverySplitOrderTakesEachUnitOnce) {
  using decode_attention::StealUnits;
  using decode_attention::StealWalk;
  std::mt19937 rng(7);
  for (int stages : {3, 6})
    for (int splits : {1, 2, 3, 7, 16})
      for (int64_t len : {int64_t(0), int64_t(1), int64_t(63), int64_t(64), int64_t(100),
                          int64_t(1000), int64_t(4096), int64_t(4097), int64_t(20000)})
        for (int order = 0; order < 4; ++order) {
          const StealUnits units(splits, stages, len, 64);
          std::vector<StealWalk> walks;
          for (int r = 0; r < splits; ++r) walks.emplace_back(units, r);
          std::vector<int> taken(static_cast<size_t>(units.units), 0);
          uint32_t counter = 0;
          int past = 0;
          for (;;) {
            std::vector<int> live;
            for (int r = 0; r < splits; ++r)
              if (!walks[r].done()) live.push_back(r);
            if (live.empty()) break;
            StealWalk& w = walks[live[rng() % live.size()]];
            const uint32_t ticket = w.wants_ticket() ? counter++ : 0u;
            if (w.u >= 0 && w.u < units.units)
              ++taken[static_cast<size_t>(w.u)];
            else
              ++past;
            w.advance(ticket);
          }
          const std::string at =
              std::to_string(stages) + " " + std::to_string(splits) + " " + std::to_string(len);
          EXPECT_EQ(past, 0) << at;
          for (int u = 0; u < units.units; ++u) EXPECT_EQ(taken[static_cast<size_t>(u)], 1) << at;
          if (splits == 1) {
            EXPECT_EQ(walks[0].at, units.units) << at;
          }
        }
}

// The awkward shape that holds v31's ticket counter to its reset: one sequence on v13's counter
// path (not clustered) whose splits take more units than the ring's first fills, so tickets come
// from the global counter; the GPU tests run it with three distributions on one workspace.
TEST(DecodeAttentionCounterSteal, AnAwkwardShapeTakesTickets) {
  const Dims s = dims(1, 32768, 16, 8, 2, 128, 0);
  const decode_attention::ClusterSplitPlan p = decode_attention::plan_v13(s, kH200Sms);
  EXPECT_FALSE(p.cluster);
  const int splits = p.splits_of(s.len);
  EXPECT_GT(splits, 1);
  const decode_attention::StealUnits units(splits, decode_attention::TmaPagesConfig::stages(s.d),
                                           s.len, 64);
  EXPECT_GT(units.units, units.fixed * splits);  // units past the fixed ones: tickets
  const Problem want = decode_attention::problem(s);
  EXPECT_TRUE(std::any_of(family().awkward.begin(), family().awkward.end(), [&](const Problem& q) {
    return q.str() == want.str();
  })) << want.str();
}

// v28's work list: every split of every slot once, most keys first (then the longer sequence),
// each packed and unpacked as the kernel reads it; an empty slot's split 0 last, with no keys.
TEST(DecodeAttentionLongestFirst, WorkListTakesEverySplitOnceLongestFirst) {
  using decode_attention::WorkItem;
  for (const Dims& s : {dims(64, 16384, 16, 32, 8, 128, 100), dims(200, 600, 16, 8, 2, 128, 1, 3),
                        dims(6, 5000, 16, 8, 2, 128, 1)}) {
    const decode_attention::ClusterSplitPlan plan = decode_attention::plan_v13(s, kH200Sms, 2);
    std::vector<int64_t> lens = decode_attention::context_lengths(s);
    std::mt19937 rng(11);
    std::shuffle(lens.begin(), lens.end(), rng);  // slots hold the lengths in any order
    const std::vector<WorkItem> items = decode_attention::longest_first_items(plan, lens);
    const std::vector<uint32_t> packed = decode_attention::packed_work_list(items);
    ASSERT_EQ(int64_t(items.size()), decode_attention::work_items(plan, lens));
    ASSERT_EQ(packed.size(), items.size());
    std::map<std::pair<int64_t, int>, int> seen;
    for (size_t i = 0; i < items.size(); ++i) {
      const WorkItem& w = items[i];
      ++seen[{w.seq, w.split}];
      int64_t seq = -1;
      int split = -1;
      decode_attention::unpack_work_item(packed[i], seq, split);  // as the kernel reads it
      EXPECT_EQ(seq, w.seq);
      EXPECT_EQ(split, w.split);
      const int64_t len = lens[size_t(w.seq)];
      EXPECT_EQ(w.keys, std::max<int64_t>(0, plan.key_end(w.split, len) - plan.key_begin(w.split)));
      if (i > 0) {
        const WorkItem& v = items[i - 1];
        EXPECT_GE(v.keys, w.keys);
        if (v.keys == w.keys) {
          EXPECT_GE(lens[size_t(v.seq)], len);
        }
      }
    }
    for (size_t b = 0; b < lens.size(); ++b)
      for (int sp = 0; sp < plan.splits_of(lens[b]); ++sp)
        EXPECT_EQ((seen[{int64_t(b), sp}]), 1) << b << " " << sp;
    EXPECT_EQ(seen.size(), items.size());
  }
}

// v28's work list sits past the plan's workspace, 16-byte aligned, an item four bytes; the
// packing round-trips at the fields' limits.
TEST(DecodeAttentionLongestFirst, WorkListLayoutAndPacking) {
  using decode_attention::work_list_layout;
  for (size_t plan_bytes : {size_t(0), size_t(4), size_t(16), size_t(1000), size_t(1024)}) {
    const auto at = work_list_layout(plan_bytes, 1032);
    EXPECT_GE(at.offset, plan_bytes);
    EXPECT_LT(at.offset, plan_bytes + 16);
    EXPECT_EQ(at.offset % 16, 0u);
    EXPECT_EQ(at.bytes, 1032u * 4u);
    EXPECT_EQ(at.end(), at.offset + at.bytes);
  }
  for (auto [seq, split] : {std::pair<int64_t, int>{0, 0}, {65535, 65535}, {1, 65534}, {300, 7}}) {
    int64_t s = -1;
    int sp = -1;
    decode_attention::unpack_work_item(decode_attention::pack_work_item(seq, split), s, sp);
    EXPECT_EQ(s, seq);
    EXPECT_EQ(sp, split);
  }
}

// The block scheduler's list schedule as plan_longest_first simulates it: two slots, items of
// 5, 1, 1, 1, 1, 1 keys (no overhead) end at 5 in that order (the ones beside the five), at 7 in
// the reverse (the five last); two CTAs an item on four slots with one key of overhead at 8.
TEST(DecodeAttentionLongestFirst, ListScheduleMakespan) {
  using decode_attention::WorkItem;
  const std::vector<WorkItem> lpt = {{0, 0, 5}, {1, 0, 1}, {2, 0, 1},
                                     {3, 0, 1}, {4, 0, 1}, {5, 0, 1}};
  EXPECT_DOUBLE_EQ(decode_attention::list_schedule_makespan(lpt, 1, 2, 0), 5.0);
  const std::vector<WorkItem> spt(lpt.rbegin(), lpt.rend());
  EXPECT_DOUBLE_EQ(decode_attention::list_schedule_makespan(spt, 1, 2, 0), 7.0);
  EXPECT_DOUBLE_EQ(decode_attention::list_schedule_makespan(lpt, 2, 4, 1), 8.0);
}

// v29: v13's plan on equal lengths and where it clusters; on the ragged batch of 64 a chunk
// whose longest-first schedule ends no later than v13's chunk's in the same order, a tile
// multiple, with the counters of every row group.
TEST(DecodeAttentionLongestFirst, PlanAtTheHeadlineShapes) {
  using decode_attention::ClusterSplitPlan;
  for (int64_t elem : {1, 2})
    for (int64_t page : {16, 64})
      for (auto [b, len, min_len] : headline_batches()) {
        const Dims s = dims(b, len, page, 32, 8, 128, min_len);
        const ClusterSplitPlan p = decode_attention::plan_longest_first(s, kH200Sms, elem);
        const ClusterSplitPlan v13 = decode_attention::plan_v13(s, kH200Sms, elem);
        const std::vector<int64_t> lens = decode_attention::context_lengths(s);
        const std::string at = std::to_string(b) + " " + std::to_string(len) + " " +
                               std::to_string(min_len) + " " + std::to_string(elem);
        if (decode_attention::uniform_lengths(lens) || v13.cluster) {
          EXPECT_EQ(p.chunk, v13.chunk) << at;
          EXPECT_EQ(p.cluster, v13.cluster) << at;
          continue;
        }
        EXPECT_FALSE(p.cluster) << at;
        EXPECT_EQ(p.chunk % 64, 0) << at;
        EXPECT_GE(p.chunk, decode_attention::GqaMmaConfig::kMinChunk) << at;
        EXPECT_EQ(p.max_splits, p.splits_of(len)) << at;
        EXPECT_EQ(p.groups, s.b * s.hkv) << at;
        const int64_t slots = kH200Sms * decode_attention::TmaPagesConfig::ctas_per_sm(128, elem);
        auto cost = [&](const decode_attention::SplitKvPlan& q) {
          return decode_attention::list_schedule_makespan(
              decode_attention::longest_first_items(q, lens), s.hkv, slots, 128);
        };
        EXPECT_LE(cost(p), cost(v13)) << at;
        // The ragged batch of 64: 3328 keys (simulated end 6912 key-times) against v13's 2368
        // (7296 in the same order), at either element size (two CTAs an SM both).
        if (b == 64 && min_len == 100) {
          EXPECT_EQ(v13.chunk, 2368) << at;
          EXPECT_EQ(p.chunk, 3328) << at;
        }
      }
}

// v16's tensor maps sit at the workspace's tail: 128-byte aligned, past every byte the plan's
// counter path uses, whether the plan clusters (no workspace of its own) or not.
TEST(DecodeAttentionClusterPushMerge, GlobalMapsFollowThePlansWorkspace) {
  using decode_attention::global_maps_offset;
  EXPECT_EQ(global_maps_offset(0), 0u);
  EXPECT_EQ(global_maps_offset(4), 128u);
  EXPECT_EQ(global_maps_offset(128), 128u);
  EXPECT_EQ(decode_attention::kGlobalMapsBytes, 256u);
  std::vector<Dims> shapes;
  for (auto [b, len, min_len] : headline_batches())
    shapes.push_back(dims(b, len, 16, 32, 8, 128, min_len));
  shapes.push_back(dims(1, 1000, 16, 10, 2, 64, 0, 0, /*qlen*/ 3));
  shapes.push_back(dims(3, 777, 1, 8, 8, 256, 0));
  int clustered = 0, counted = 0;
  for (const Dims& s : shapes) {
    const decode_attention::ClusterSplitPlan p = decode_attention::plan_v13(s, kH200Sms);
    const size_t plan_bytes =
        sizeof(float) * static_cast<size_t>(p.workspace_floats(s.rows(), s.d));
    const size_t at = global_maps_offset(plan_bytes);
    EXPECT_EQ(at % 128, 0u) << s.b << " " << s.len;
    EXPECT_GE(at, plan_bytes) << s.b << " " << s.len;
    EXPECT_LT(at, plan_bytes + 128) << s.b << " " << s.len;
    (p.cluster ? clustered : counted) += 1;
  }
  EXPECT_GT(clustered, 0);  // both paths seen
  EXPECT_GT(counted, 0);
}

// v07 runs v04's line on its own budget: two CTAs an SM at D = 128 (the ring, Q and the
// warps' summed outputs), one wave of every resident CTA at the headline shapes (all but
// (1, 4k), whose 512 tiles make 256 CTAs of two).
TEST(DecodeAttentionTmaLine, PlanAtTheHeadlineShapes) {
  using decode_attention::TmaLineConfig;
  EXPECT_EQ(TmaLineConfig::ctas_per_sm(128), 2);
  EXPECT_GE(TmaLineConfig::ctas_per_sm(64), 2);
  for (int64_t d : {64, 128, 256}) EXPECT_LE(TmaLineConfig::smem_bytes(d), 227 * 1024);
  for (int64_t page : {16, 64}) {
    for (auto [b, len, min_len] : headline_batches()) {
      const Dims s = dims(b, len, page, 32, 8, 128, min_len);
      const TileLinePlan plan = decode_attention::plan_v07(s, kH200Sms);
      EXPECT_EQ(plan.ctas, b == 1 && len == 4096 ? 256 : 2 * kH200Sms) << b << " " << len;
    }
  }
}

// ---- e4m3 KV cache (v08): scales, reference, checks ----

namespace {

const Problem& ragged_e4m3() {
  static const Problem p = [] {
    Problem q = ragged();
    q.dtype = DType::e4m3;
    return q;
  }();
  return p;
}

}  // namespace

// One key of an e4m3 cache: O is its V row times V's scale, lse its score with K's scale.
TEST(DecodeAttentionE4m3, OneKeyGivesItsScaledValueRow) {
  const Dims s = dims(1, 1, 16, 4, 2, 4);
  const Problem p = decode_attention::problem(s, DType::e4m3);
  const Buffers b = host_buffers(
      p, 3, [](int64_t, int64_t, int64_t h, int64_t i) { return 0.5 * (i + 1) - h; },
      [](int64_t, int64_t, int64_t hk, int64_t i) { return 0.25 * (i - 1) + hk; },
      [](int64_t, int64_t, int64_t hk, int64_t i) { return 2.0 * i - hk; });
  ASSERT_EQ(b["k_scale"].spec.numel, s.hkv);
  const Reference r = whole(p, b);
  for (int64_t h = 0; h < s.hq; ++h) {
    const int64_t hk = h / s.group();
    const double ks = b["k_scale"].host_at(hk), vs = b["v_scale"].host_at(hk);
    EXPECT_GE(ks, 0.25);
    EXPECT_LT(ks, 2.0);
    double dot = 0;
    for (int64_t i = 0; i < s.d; ++i) dot += (0.5 * (i + 1) - h) * (0.25 * (i - 1) + hk) * ks;
    EXPECT_DOUBLE_EQ(lse_at(r, s, 0, 0, h), dot / 2);
    for (int64_t i = 0; i < s.d; ++i) EXPECT_DOUBLE_EQ(o_at(r, s, 0, 0, h, i), (2.0 * i - hk) * vs);
  }
  // The heads' scales differ (a rung that takes another head's is caught).
  EXPECT_NE(b["k_scale"].host_at(0), b["k_scale"].host_at(1));
}

TEST(DecodeAttentionE4m3, HeadlineAndAwkwardShapesComeInBothDtypes) {
  for (const auto* list : {&family().headline, &family().awkward}) {
    const auto n = static_cast<size_t>(std::count_if(
        list->begin(), list->end(), [](const Problem& p) { return p.dtype == DType::e4m3; }));
    EXPECT_EQ(2 * n, list->size());
  }
  // The scales are inputs of e4m3 problems only, and counted in their bytes.
  const Problem bf = decode_attention::problem(dims(2, 64, 16, 8, 2, 128));
  const Problem e4 = decode_attention::problem(dims(2, 64, 16, 8, 2, 128), DType::e4m3);
  EXPECT_EQ(make_host_buffers(family(), bf).tensors.size() + 2,
            make_host_buffers(family(), e4).tensors.size());
  const double kv_bf = 2.0 * 64 * 2 * 128 * 2 * 2, kv_e4 = kv_bf / 2;  // b len hkv d (K, V) bytes
  EXPECT_DOUBLE_EQ(family().counts(bf).bytes - family().counts(e4).bytes,
                   kv_bf - kv_e4 - 2 * 4 * 2);
}

TEST(DecodeAttentionE4m3, CpuRungPassesAndWrongScalesFail) {
  const Variant good = *family().find("decode_attention.v00_cpu");
  const Result ok = check(good, ragged_e4m3());
  ASSERT_EQ(ok.status, "ok") << ok.reason;
  EXPECT_TRUE(ok.check.passed) << ok.check.summary();
  // Rungs that ignore K's scale, or take V's scale of the wrong head.
  auto with_scales = [&](std::function<void(const Dims&, float*, float*)> spoil) {
    Variant v = good;
    v.launch = [good, spoil](const Problem& p, Buffers& b, const LaunchArgs& a) {
      const Dims s = decode_attention::dims_of(p);
      float* ks = b.ptr<float>("k_scale");
      float* vs = b.ptr<float>("v_scale");
      const std::vector<float> k0(ks, ks + s.hkv), v0(vs, vs + s.hkv);
      spoil(s, ks, vs);
      good.launch(p, b, a);
      std::copy(k0.begin(), k0.end(), ks);
      std::copy(v0.begin(), v0.end(), vs);
    };
    return v;
  };
  const Variant no_k_scale =
      with_scales([](const Dims& s, float* ks, float*) { std::fill(ks, ks + s.hkv, 1.f); });
  const Variant swapped_v =
      with_scales([](const Dims& s, float*, float* vs) { std::reverse(vs, vs + s.hkv); });
  for (const Variant* v : {&no_k_scale, &swapped_v}) {
    const Result r = check(*v, ragged_e4m3());
    ASSERT_EQ(r.status, "ok") << r.reason;
    EXPECT_FALSE(r.check.passed) << r.check.summary();
  }
}

// v17: four e4m3 stages a CTA make three CTAs an SM with v14's bytes in flight an SM; its plan
// counts them where the ring applies (one n8 tile at D = 128) and is v14's elsewhere and on the
// clustered path.
TEST(DecodeAttentionE4m3, V17ThreeCtasAnSmOnTheCounterPath) {
  using decode_attention::kThreeCtaRing;
  using decode_attention::TmaPagesConfig;
  EXPECT_EQ(TmaPagesConfig::stages(128, 1, kThreeCtaRing), 4);
  EXPECT_EQ(TmaPagesConfig::stages(128, 1, 0), TmaPagesConfig::stages(128, 1));
  EXPECT_EQ(TmaPagesConfig::ctas_per_sm(128, 1, kThreeCtaRing), 3);
  EXPECT_EQ(3 * TmaPagesConfig::stages(128, 1, kThreeCtaRing),
            TmaPagesConfig::ctas_per_sm(128, 1) * TmaPagesConfig::stages(128, 1));  // in flight
  EXPECT_LE(GqaMmaConfig::merge_bytes(128),
            TmaPagesConfig::stages(128, 1, kThreeCtaRing) * TmaPagesConfig::stage_bytes(128, 1));
  EXPECT_TRUE(decode_attention::counter_ring_applies(128, 4));
  EXPECT_FALSE(decode_attention::counter_ring_applies(128, 16));  // two n8 tiles: 168 registers
  EXPECT_FALSE(decode_attention::counter_ring_applies(256, 4));
  int counted_on_three = 0;
  for (int64_t page : {16, 64})
    for (auto [b, len, min_len] : headline_batches()) {
      const Dims s = dims(b, len, page, 32, 8, 128, min_len);
      const auto v14 = decode_attention::plan_v13(s, kH200Sms, 1);
      const auto v17 = decode_attention::plan_v13(s, kH200Sms, 1, kThreeCtaRing);
      if (v17.cluster) {  // the clustered kernel's plan: v14's
        EXPECT_TRUE(v14.cluster) << b << " " << len;
        EXPECT_EQ(v17.chunk, v14.chunk) << b << " " << len;
        continue;
      }
      const auto three = decode_attention::plan_v06(s, kH200Sms, 1, kThreeCtaRing);
      EXPECT_EQ(v17.chunk, three.chunk) << b << " " << len;
      EXPECT_EQ(v17.max_splits, three.max_splits) << b << " " << len;
      ++counted_on_three;
    }
  EXPECT_GT(counted_on_three, 0);
  // A group of 16 rows (two n8 tiles) keeps v14's counter plan.
  const Dims wide = dims(64, 4096, 16, 32, 2, 128, 0);
  EXPECT_EQ(decode_attention::plan_v13(wide, kH200Sms, 1, kThreeCtaRing).chunk,
            decode_attention::plan_v13(wide, kH200Sms, 1).chunk);
}

// v08's budget: six stages of 16 KiB at D = 128 keep v06's bytes in flight and its two CTAs an
// SM, so its split plan is v06's.
TEST(DecodeAttentionE4m3, V08KeepsV06sBudgetAndPlan) {
  using decode_attention::TmaPagesConfig;
  EXPECT_EQ(TmaPagesConfig::stages(128, 1), 6);
  EXPECT_EQ(TmaPagesConfig::stages(128, 1) * TmaPagesConfig::stage_bytes(128, 1),
            TmaPagesConfig::stages(128) * TmaPagesConfig::stage_bytes(128));
  EXPECT_EQ(TmaPagesConfig::ctas_per_sm(128, 1), 2);
  EXPECT_EQ(TmaPagesConfig::ctas_per_sm(256, 1), 1);
  EXPECT_LE(GqaMmaConfig::merge_bytes(256),
            TmaPagesConfig::stages(256, 1) * TmaPagesConfig::stage_bytes(256, 1));
  for (auto [b, len, min_len] : headline_batches()) {
    const Dims s = dims(b, len, 16, 32, 8, 128, min_len);
    const auto a = decode_attention::plan_v06(s, kH200Sms);
    const auto e = decode_attention::plan_v06(s, kH200Sms, 1);
    EXPECT_EQ(a.chunk, e.chunk);
    EXPECT_EQ(a.max_splits, e.max_splits);
  }
}
