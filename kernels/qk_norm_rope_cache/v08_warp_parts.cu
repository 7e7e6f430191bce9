// v08 warp parts: a warp a part of a token, in registers: no shared memory, no barrier.
// Adds over v03 (and v07): the data path of a copy. Built traffic-only, v03's ring of 12 KiB rows
// (a block of twelve warps waiting on each token's bulk copy, a barrier a token) moved the bytes
// at 89.4-89.9% of copy at 16384 tokens and v07's ring of 4 KiB parts at 91.4%, where CUB's copy
// of the same bytes reaches 94.9% with every warp streaming its own vectors from global memory
// into registers (2026-12-03_bd7108f_qk_traffic, 2026-12-03_68db206_qk_v07_head_parts). v07 lost
// its path's gain to its rope tables (a third of its threads filling one a part, behind a
// barrier). Here a persistent grid of warps walks units of (token, part): a part is kRounds
// rounds of 32 / (D / 16) heads (16 heads, 4 KiB at Qwen3-8B: q 0-15, q 16-31, k and v), each
// head in a lane group as in v01 (its two halves in one thread's two 16-byte vectors). A warp
// issues its part's 2 kRounds loads at once, with the token's position and slot beside them
// (no load waits on another), and, under their latency, the token's rotation: the D / 2 pairs'
// cos and sin computed once in the warp (D / 64 pairs a lane at D >= 64, each pair's
// f_i / pi computed once per warp, rope.hpp) and gathered into the 8 pairs each lane rotates by
// shuffles; the norm weights sit in registers for the whole launch. Each head is then normalised,
// rotated and stored from registers; v heads are stored as loaded. While one warp computes,
// the SM's other warps have their loads in flight; nothing waits on a block.
// The price: each part computes its token's rotation (three times a token at Qwen3-8B, two
// sincospif a lane each), and a skipped token's k and v heads are read though not written (the
// loads are issued before its slot is known; the family's bytes count only written tokens).
// Expected bottleneck: DRAM bandwidth at thousands of tokens; at 1-64 tokens the launch and one
// DRAM round trip (position, slot and data in parallel), then the stores.
// Prediction (written before it ran): 16384 tokens 87% (v03) -> 90-93% of copy; 4096 tokens
// 83.5% -> 85-90%; 1, 16 and 64 tokens >= 2.1x the unfused launches (v03 2.12-2.17x).
// Measured (2026-12-04_bb979cc_qk_v08_first, 2026-12-04_49915da_qk_v08_prefetch): 85.3% / 81.7%
// of copy at 16384 / 4096 tokens with the next unit's loads in flight (v03 87.2% / 83.8% in the
// same calls; 85.2% / 78.8% without them); built traffic-only its path reaches 90.1% / 89.4%,
// where v03's did 89.4-89.9%. 2.07x, 2.13x and 2.17x the unfused launches at 1, 16 and 64 tokens.
// Refuted as a rung (docs/worklogs/fused.md).
// Requirements: rung.cuh's (D = 16 .. 512, aligned rows) and a pool of fewer than 2^31 slots.
#include <algorithm>

#include "kernels/qk_norm_rope_cache/rung.cuh"
#include "klab/device/launch_attributes.hpp"
#include "klab/device/occupancy.cuh"
#include "klab/device/pdl.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::qk_norm_rope_cache {

namespace {

constexpr int kThreads = 128;  // four warps a block
constexpr int kRounds = 4;     // rounds of heads in a warp's part (16 heads at D = 128)
/// Blocks an SM: four (16 warps, at most 128 registers: two units' loads held, no spill at
/// D = 128), three from D = 256 (its rope pairs' f_i / pi, four or eight doubles a lane,
/// spilled at four).
constexpr int min_blocks(int lanes) { return lanes >= 16 ? 3 : 4; }
constexpr unsigned kFull = 0xffffffffu;
/// Built true, the rung only moves the bytes (q and k stored as loaded: its checks fail by
/// design): the data path's own ceiling, as v03's and v07's were measured.
constexpr bool kTrafficOnly = false;

/// A warp's lanes at D = 16 kLanes: each lane group of kLanes holds a head, kGroups heads a round.
template <int kLanes>
struct WarpShape {
  static constexpr int kGroups = 32 / kLanes;
  static constexpr int kPartHeads = kGroups * kRounds;
  /// Rope pairs a lane computes: the warp's D / 2 = 8 kLanes pairs over 32 lanes (one, repeated,
  /// below D = 64).
  static constexpr int kSlots = kLanes >= 4 ? kLanes / 4 : 1;
};

/// The token's rotation in the 8 pairs this lane rotates (pairs 8 m + j, m its lane in the group):
/// lane L computes, in its slot s, pair 8 (L mod kLanes) + (s kGroups + L / kLanes) mod 8, so
/// that pair (m, j) is in slot j / kGroups of lane m + kLanes (j mod kGroups) - one slot for
/// every lane at each j: one shuffle a value.
template <int kLanes>
struct WarpRope {
  using S = WarpShape<kLanes>;
  double per_position[S::kSlots];  // f_i / pi of this lane's computed pairs (rope_per_position)

  __device__ WarpRope(int lane_id, int d) {
    const int m = lane_id % kLanes, g = lane_id / kLanes;
#pragma unroll
    for (int s = 0; s < S::kSlots; ++s)
      per_position[s] = rope_per_position(8 * m + (s * S::kGroups + g) % 8, d);
  }

  /// cos and sin of this lane's 8 pairs at position pos. Every lane of the warp calls it.
  __device__ void at(int32_t pos, int m, float (&c)[kVec], float (&s)[kVec]) const {
    float cs[S::kSlots], sn[S::kSlots];
#pragma unroll
    for (int k = 0; k < S::kSlots; ++k)
      sincospif(static_cast<float>(rope_reduce(pos, per_position[k])), &sn[k], &cs[k]);
#pragma unroll
    for (int j = 0; j < kVec; ++j) {
      const int src = m + kLanes * (j % S::kGroups);
      c[j] = __shfl_sync(kFull, cs[j / S::kGroups], src);
      s[j] = __shfl_sync(kFull, sn[j / S::kGroups], src);
    }
  }
};

/// A head's two halves in this lane as raw words (four bf16 pairs each): held as words, a
/// register each (Vec16's bf16 elements, loaded under a condition, went through local memory).
struct RawHead {
  uint4 lo, hi;
};
__device__ __forceinline__ RawHead load_raw(const bf16* p, int half) {  // streaming: read once
  const uint4* v = reinterpret_cast<const uint4*>(p);
  return {__ldcs(v), __ldcs(v + half / kVec)};
}
__device__ __forceinline__ RawHead load_raw_cached(const bf16* p, int half) {  // the weights
  const uint4* v = reinterpret_cast<const uint4*>(p);
  return {__ldg(v), __ldg(v + half / kVec)};
}
__device__ __forceinline__ void store_raw(bf16* p, int half, const RawHead& x) {
  uint4* v = reinterpret_cast<uint4*>(p);
  v[0] = x.lo;
  v[half / kVec] = x.hi;
}
/// bf16 pairs to fp32 (exact: the bf16 is the fp32's high half).
__device__ __forceinline__ void unpack_raw(const uint4& v, float (&f)[kVec]) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = __uint_as_float(w[i] << 16);
    f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
  }
}
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  const __nv_bfloat162 b = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&b);
}

/// A q or k head in this lane (x; zeros in a lane without one) normalised by its weight w and
/// rotated by this lane's pairs' cos and sin, as the words to store. Every lane of the warp calls
/// it (the group's sum of squares shuffles).
template <int kLanes>
__device__ __forceinline__ RawHead norm_rotate(const RawHead& x, const RawHead& w,
                                               const float (&c)[kVec], const float (&s)[kVec],
                                               const Args& a) {
  float lo[kVec], hi[kVec], wl[kVec], wh[kVec];
  unpack_raw(x.lo, lo);
  unpack_raw(x.hi, hi);
  float sum_sq = 0.f;
#pragma unroll
  for (int j = 0; j < kVec; ++j) sum_sq += lo[j] * lo[j] + hi[j] * hi[j];
  const float inv_rms = rsqrtf(group_sum(sum_sq, kLanes) * a.inv_d + a.eps);
  unpack_raw(w.lo, wl);
  unpack_raw(w.hi, wh);
  uint32_t out_lo[4], out_hi[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float rl[2], rh[2];
#pragma unroll
    for (int k = 0; k < 2; ++k) {  // y = x inv_rms w (rms_normalise's order), then rotate-half
      const int j = 2 * i + k;
      const float yl = lo[j] * inv_rms * wl[j], yh = hi[j] * inv_rms * wh[j];
      rl[k] = fmaf(yl, c[j], -yh * s[j]);
      rh[k] = fmaf(yh, c[j], yl * s[j]);
    }
    out_lo[i] = pack2(rl[0], rl[1]);
    out_hi[i] = pack2(rh[0], rh[1]);
  }
  return {make_uint4(out_lo[0], out_lo[1], out_lo[2], out_lo[3]),
          make_uint4(out_hi[0], out_hi[1], out_hi[2], out_hi[3])};
}

/// A warp's unit: token t, part p (heads p kPartHeads ..), walked by the grid's warps.
struct Unit {
  int64_t t;
  uint32_t p;
};

/// What a warp loads for a unit: its heads (every one of the part, k and v whatever the slot:
/// issued before the slot is known), the token's position and slot.
template <int kLanes>
struct UnitLoads {
  RawHead x[kRounds];
  int32_t pos;
  int64_t slot;

  __device__ void issue(const Args& a, const Unit& u, int m, int g) {
    using S = WarpShape<kLanes>;
    const int half = a.d / 2, heads = a.heads(), head0 = int(u.p) * S::kPartHeads + g;
    const bf16* row = a.qkv + u.t * heads * a.d + m * kVec;
#pragma unroll
    for (int r = 0; r < kRounds; ++r) {
      const int h = head0 + r * S::kGroups;
      x[r] = h < heads ? load_raw(row + int64_t(h) * a.d, half) : RawHead{};
    }
    pos = a.positions[u.t];
    slot = a.slots[u.t];
  }
};

template <int kLanes>
__global__ void __launch_bounds__(kThreads, min_blocks(kLanes)) kernel(Args a) {
  using S = WarpShape<kLanes>;
  const int lane_id = int(threadIdx.x) % 32, m = lane_id % kLanes, g = lane_id / kLanes;
  const int half = a.d / 2, heads = a.heads();
  const uint32_t parts = uint32_t(heads + S::kPartHeads - 1) / S::kPartHeads;
  const int64_t kv_stride = int64_t(a.page) * a.d;  // KV head j: j pages' head strides on
  // Unit t parts + p, from this warp's index on by the grid's warps (no division a unit).
  const uint32_t warp = blockIdx.x * (kThreads / 32) + threadIdx.x / 32;
  const uint32_t warps = gridDim.x * (kThreads / 32);
  const uint32_t dt = warps / parts, dp = warps % parts;
  auto advance = [&](const Unit& u) {
    Unit n{u.t + dt, u.p + dp};
    if (n.p >= parts) {
      n.p -= parts;
      ++n.t;
    }
    return n;
  };
  Unit u{warp / parts, warp % parts};
  if (u.t >= a.tokens) return;  // no barrier in the kernel: a warp without a unit leaves
  // Launched programmatically (attention_block), the QKV GEMM before may still be writing qkv.
  device::grid_dependency_wait();
  device::allow_dependent_launch();
  UnitLoads<kLanes> cur;
  cur.issue(a, u, m, g);
  const WarpRope<kLanes> rope(lane_id, 16 * kLanes);  // under the first loads (D = 16 kLanes)

  while (true) {
    // The next unit's loads in flight while this one is computed and stored.
    const Unit n = advance(u);
    const bool more = n.t < a.tokens;
    UnitLoads<kLanes> next;
    if (more) next.issue(a, n, m, g);

    const int part_head0 = int(u.p) * S::kPartHeads;  // the same in every lane
    float c[kVec]{}, s[kVec]{};
    if (!kTrafficOnly && part_head0 < a.hq + a.hkv) rope.at(cur.pos, m, c, s);  // a q or k head
    const int64_t kv_base = pool_base(a, cur.slot);
#pragma unroll
    for (int r = 0; r < kRounds; ++r) {
      const int h = part_head0 + g + r * S::kGroups;
      const bool q_head = h < a.hq, k_head = !q_head && h < a.hq + a.hkv;
      const bool v_head = !q_head && !k_head && h < heads;
      if (v_head && kv_base >= 0)
        store_raw(a.v_cache + kv_base + int64_t(h - a.hq - a.hkv) * kv_stride + m * kVec, half,
                  cur.x[r]);
      if (__all_sync(kFull, !q_head && !k_head)) continue;  // the group sums shuffle warp-wide
      RawHead y = cur.x[r];
      if (!kTrafficOnly) {
        const RawHead w = load_raw_cached((q_head ? a.q_weight : a.k_weight) + m * kVec, half);
        y = norm_rotate<kLanes>(q_head || k_head ? cur.x[r] : RawHead{}, w, c, s, a);
      }
      if (q_head)
        store_raw(a.q_out + (u.t * a.hq + h) * a.d + m * kVec, half, y);
      else if (k_head && kv_base >= 0)
        store_raw(a.k_cache + kv_base + int64_t(h - a.hq) * kv_stride + m * kVec, half, y);
    }
    if (!more) break;
    u = n;
    cur = next;
  }
}

template <int kLanes>
void launch(const Args& a, const LaunchArgs& la) {
  if (a.tokens == 0) return;
  using S = WarpShape<kLanes>;
  const int64_t units = a.tokens * ((a.heads() + S::kPartHeads - 1) / S::kPartHeads);
  const int64_t resident = device::resident_wave(device_info().sm_count, kernel<kLanes>, kThreads);
  const auto grid = static_cast<unsigned>(
      std::min<int64_t>(resident, (units + kThreads / 32 - 1) / (kThreads / 32)));
  const device::LaunchAttributes attrs(0, la.programmatic);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(kThreads);
  config.stream = stream_of(la);
  attrs.apply(config);
  KLAB_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel<kLanes>, a));
  KLAB_CHECK_LAUNCH();
}

}  // namespace

Variant gpu_v08_warp_parts() {
  Variant v = rung_variant(
      "v08_warp_parts",
      "a persistent grid of warps, a warp a part of a token (16 heads at D = 128) in registers: "
      "loads issued at once, the rotation by shuffles, no shared memory, no barrier",
      [](const Problem& p, Buffers& b, const LaunchArgs& la) {
        const Args a = args_of(p, b);
        switch (a.lanes()) {
          case 1:
            return launch<1>(a, la);
          case 2:
            return launch<2>(a, la);
          case 4:
            return launch<4>(a, la);
          case 8:
            return launch<8>(a, la);
          case 16:
            return launch<16>(a, la);
          default:
            return launch<32>(a, la);
        }
      });
  v.can_implement = [base = v.can_implement, id = v.info.id](const Problem& p) {
    if (Status s = base(p); !s.ok()) return s;
    return slots_fit_32_bits(dims_of(p), id);
  };
  return v;
}

}  // namespace klab::qk_norm_rope_cache
