// v01 fused row: the add, the norm and the quantisation in one launch, one block per row, the
// row held in registers between them.
// Adds over the unfused baseline (three launches: add, rmsnorm, quantise): h and y never leave
// the SM. Each thread loads kChunks 16-byte vectors of x and of the residual (vector c of the row
// at thread c % blockDim, pass c / blockDim, so consecutive lanes touch consecutive 16 bytes),
// adds in fp32, rounds h to bf16 and stores it (residual_out), keeps h in registers; the weight's
// vectors are loaded beside them (8 KiB, an L2 hit after the first rows), so no load follows a
// barrier. The row's sum of h^2 by warp shuffles and one shared-memory step; per token the same
// step also reduces max |h * w| (max |y| = inv_rms * max |h * w|), so a token costs one pair of
// barriers. y = h * inv_rms * weight in registers; per group each slice's max |y| by a butterfly
// across the group's 16 lanes (1 x 128 = 16 vectors = 16 consecutive lanes); scale = max / 448,
// q = cvt.rn.satfinite.e4m3x2 of y * 448 / max, stored 8 bytes per vector; the group's first lane
// stores its scale.
// The launch shape: kChunks = 1, 2, 4 or 8 vectors per thread, the fewest that keep a block at
// 256 threads or fewer (H = 4096: 2 vectors, 256 threads, 8 blocks per SM), 8 beyond that
// (up to 512 threads: H = 32768).
// Expected bottleneck: DRAM bandwidth at thousands of rows (7 bytes per element moved against
// 7 flops); at 1-16 rows the launch and one block's serial latency (two loads, two block
// reductions, the stores), about one DRAM round trip each.
// Prediction (written before it ran): >= 90% of the copy ceiling at 16384 x 4096 (>= 80% at 4096
// tokens), both granularities within a few percent of each other; >= 2x the unfused baseline at 1
// and 16 tokens, >= 1.6x at 16384. Measured, and the weight prefetch and single reduction added
// after the first run: docs/worklogs/fused.md. The per-token path and the 1 x 128 slice are
// compile-time cases (kGroupLanes): at a run-time group the slice's maximum was a loop of
// shuffles and its scale's index two integer divisions, on the critical path of a one-row launch.
// Requirements: hidden % 8 == 0 and <= 32768, aligned rows; group 0 or 8 x a power of two up to 256
// (rung.cuh); sm_89 (the e4m3 conversion).
#include "kernels/add_rmsnorm_quant/rung.cuh"

namespace klab::add_rmsnorm_quant {

namespace {

using device::Vec16;

// Blocks of at most 256 threads below 8 vectors per thread, 512 at 8 (128 registers a thread:
// the row's 64 values stay in registers).
template <int kChunks>
constexpr int max_threads() {
  return kChunks < 8 ? 256 : 512;
}

// kGroupLanes: the scales' granularity fixed at compile time, so that each kernel holds one path:
// 0 a scale per token; 16 the 1 x 128 slice (DeepSeek's blocks: the slice's maximum unrolls to
// four shuffles and the scale's index is a shift); -1 any other group, a.group at run time.
template <int kChunks, bool kLatency, int kGroupLanes>
__global__ void __launch_bounds__(max_threads<kChunks>()) fused_row(Args a) {
  __shared__ float red[64];
  const int64_t row = blockIdx.x;
  const int vectors = a.hidden / kVec;
  const int64_t base = row * a.hidden;
  const bf16* gX = a.x + base;
  const bf16* gR = a.residual + base;
  bf16* gH = a.residual_out + base;

  float rY[kChunks][kVec];  // h, then y, then y * factor
  // Latency form (few rows, kLatency): the weight's vectors are loaded with x and the residual, so
  // their latency overlaps the row's DRAM loads instead of following the sum-of-squares barrier,
  // and a token's maximum joins that barrier pair. It costs registers (H = 4096: 54 against 44,
  // 4 blocks an SM against 5), which lost more than it gained once rows fill the GPU
  // (docs/worklogs/fused.md), so the bandwidth form loads the weight after the barrier. Never at
  // 8 vectors a thread (H above 16384), where 32 more registers would spill.
  constexpr bool kEarlyWeight = kLatency && kChunks <= 4;
  Vec16<bf16> rW[kChunks];
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int c = k * blockDim.x + threadIdx.x;
    if (kEarlyWeight && c < vectors) rW[k] = device::load16(a.weight + c * kVec);
  }
  float sum_sq = 0.f, hw_max = 0.f;  // hw_max: max |h * w|, for a scale per token
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int c = k * blockDim.x + threadIdx.x;
#pragma unroll
    for (int i = 0; i < kVec; ++i) rY[k][i] = 0.f;
    if (c < vectors) {
      const Vec16<bf16> x = device::load16_stream(gX + c * kVec);
      const Vec16<bf16> r = device::load16_stream(gR + c * kVec);
      Vec16<bf16> h;
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        h.v[i] = __float2bfloat16_rn(__bfloat162float(x.v[i]) + __bfloat162float(r.v[i]));
        rY[k][i] = __bfloat162float(h.v[i]);
        sum_sq += rY[k][i] * rY[k][i];
      }
      device::store16(gH + c * kVec, h);
    }
  }
  // The token's max |h * w| (the latency form's per-token path) after the stores of h, which do
  // not wait for the weight.
  if constexpr (kEarlyWeight) {
#pragma unroll
    for (int k = 0; k < kChunks; ++k)
      if (k * blockDim.x + threadIdx.x < vectors)
#pragma unroll
        for (int i = 0; i < kVec; ++i)
          hw_max = fmaxf(hw_max, fabsf(rY[k][i] * __bfloat162float(rW[k].v[i])));
  }
  // One pair of barriers for both of a token's reductions: max |y| = inv_rms * max |h * w|
  // (inv_rms > 0), so the per-token maximum needs no second block reduction after the norm.
  // It differs from the maximum of the rounded y by at most an ulp or two of fp32: the scale's
  // tolerance covers it, and the quantiser saturates at 448 either way.
  const int group = kGroupLanes >= 0 ? kGroupLanes * kVec : a.group;
  if (kEarlyWeight && group == 0)
    reduction::block_all_reduce2(sum_sq, reduction::SumOp{}, hw_max, reduction::MaxOp{}, red);
  else
    sum_sq = reduction::block_all_reduce(sum_sq, reduction::SumOp{}, red);
  const float inv_rms = rsqrtf(sum_sq * a.inv_hidden + a.eps);

  float amax[kChunks];  // of each vector's 8 values (per group only)
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int c = k * blockDim.x + threadIdx.x;
    amax[k] = 0.f;
    if (c < vectors) {
      float w[kVec];
      unpack8(kEarlyWeight ? rW[k] : device::load16(a.weight + c * kVec), w);
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        rY[k][i] = rY[k][i] * inv_rms * w[i];
        amax[k] = fmaxf(amax[k], fabsf(rY[k][i]));
      }
    }
  }

  uint8_t* gQ = a.q + base;
  if (group == 0) {  // one scale per token
    float token_max = hw_max * inv_rms;
    if constexpr (!kEarlyWeight) {  // a second block reduction, over the rounded y
      token_max = 0.f;
#pragma unroll
      for (int k = 0; k < kChunks; ++k) token_max = fmaxf(token_max, amax[k]);
      token_max = reduction::block_all_reduce(token_max, reduction::MaxOp{}, red);
    }
    const SliceScale s = slice_scale(token_max);
    if (threadIdx.x == 0) a.scales[row] = s.scale;
#pragma unroll
    for (int k = 0; k < kChunks; ++k) {
      const int c = k * blockDim.x + threadIdx.x;
      if (c >= vectors) continue;
#pragma unroll
      for (int i = 0; i < kVec; ++i) rY[k][i] *= s.factor;
      *reinterpret_cast<uint2*>(gQ + c * kVec) = pack8_e4m3(rY[k]);
    }
    return;
  }
  // One scale per group: group / 8 consecutive lanes hold a slice (blockDim is a multiple of 32
  // and of group / 8, so a slice never straddles two passes or two warps).
  const int group_lanes = group / kVec;
  float* gS = a.scales + row * (a.hidden / group);
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int c = k * blockDim.x + threadIdx.x;
    const SliceScale s = slice_scale(group_max(amax[k], group_lanes));  // every lane shuffles
    if (c >= vectors) continue;
    if (c % group_lanes == 0) gS[c / group_lanes] = s.scale;
#pragma unroll
    for (int i = 0; i < kVec; ++i) rY[k][i] *= s.factor;
    *reinterpret_cast<uint2*>(gQ + c * kVec) = pack8_e4m3(rY[k]);
  }
}

// The fewest vectors per thread that keep a block at <= 256 threads, 8 beyond that (up to 512
// threads: rung.cuh refuses longer rows).
struct Shape {
  int chunks, threads;
};
Shape launch_shape(int hidden) {
  const int vectors = hidden / kVec;
  for (int chunks : {1, 2, 4, 8}) {
    const int threads = static_cast<int>(device::ceil_div(vectors, chunks));
    if (threads <= 256 || chunks == 8) return {chunks, (threads + 31) / 32 * 32};
  }
  return {8, 512};
}

// Rows below this take the latency form: fewer than one block per SM, where no other block hides
// a row's dependent steps.
constexpr int64_t kLatencyRows = 132;

template <int kChunks, int kGroupLanes>
void launch_form(const Args& a, int threads, cudaStream_t stream) {
  const unsigned grid = static_cast<unsigned>(a.tokens);
  if (a.tokens < kLatencyRows)
    fused_row<kChunks, true, kGroupLanes><<<grid, threads, 0, stream>>>(a);
  else
    fused_row<kChunks, false, kGroupLanes><<<grid, threads, 0, stream>>>(a);
}

template <int kChunks>
void launch_fused(const Args& a, int threads, cudaStream_t stream) {
  if (a.group == 0)
    launch_form<kChunks, 0>(a, threads, stream);
  else if (a.group == 16 * kVec)
    launch_form<kChunks, 16>(a, threads, stream);
  else
    launch_form<kChunks, -1>(a, threads, stream);
}

}  // namespace

Variant gpu_v01_fused_row() {
  Variant v = rung_variant("v01_fused_row",
                           "one launch, one block per row held in registers: add, norm, e4m3",
                           [](const Problem& p, Buffers& b, const LaunchArgs& la) {
                             const Args a = args_of(p, b);
                             const Shape sh = launch_shape(a.hidden);
                             const cudaStream_t stream = stream_of(la);
                             switch (sh.chunks) {  // the compile-time register tile of the row
                               case 1:
                                 launch_fused<1>(a, sh.threads, stream);
                                 break;
                               case 2:
                                 launch_fused<2>(a, sh.threads, stream);
                                 break;
                               case 4:
                                 launch_fused<4>(a, sh.threads, stream);
                                 break;
                               default:
                                 launch_fused<8>(a, sh.threads, stream);
                             }
                             KLAB_CHECK_LAUNCH();
                           });
  v.can_implement = [](const Problem& p) {
    const std::string id = "add_rmsnorm_quant.v01_fused_row";
    if (dims_of(p).hidden > 8 * 512 * kVec)
      return Status::no(id + ": hidden above 32768 (8 vectors per thread of 512 in registers)");
    return gpu_rung_can_implement(p, id);
  };
  return v;
}

}  // namespace klab::add_rmsnorm_quant
