// baseline unfused: the sequence a framework runs without a fused kernel, as three klab launches
// on the same data (issue 15: a fused kernel's baseline is the unfused sequence of klab
// launches, in the same run):
//   1. add       residual_out = bf16(x + residual)           (16-byte vectors, grid-stride)
//   2. rmsnorm   y = bf16(h * inv_rms * weight), h read back from residual_out, y to the
//                workspace (one block per row: the sum of squares, then a second pass over the
//                row, from L1/L2)
//   3. quantise  scales and q from y (one block per row: per token, max |y| over the row and a
//                second pass; per group, a butterfly across each slice's lanes)
// h needs no workspace of its own: the add's output is residual_out, the tensor the next layer
// reads. y, bf16 as a standalone RMSNorm returns it, is the workspace (T x H x 2 bytes).
// Expected bottleneck: DRAM bandwidth at thousands of rows, on 13 bytes per element (x and
// residual read, h written: 6; h read, y written: 4, rmsnorm's second pass over h from L1/L2;
// y read, q written: 3) against the fused kernel's 7, less what L2 keeps between launches
// (60 MiB: at 4096 x 4096 h and y are 32 MiB each); at a few rows three launches, each a
// dependent DRAM round trip.
// Prediction (written before it ran; not measured yet): ~50% of the copy ceiling by the family's
// counted bytes at 16384 x 4096 (7 / 13 of a copy-speed sequence, less the three tails); 2-3x
// the fused kernel's time at 1-16 tokens.
// Requirements: those of rung.cuh (hidden % 8 == 0, group 0 or 8 x a power of two up to 256).
#include "kernels/add_rmsnorm_quant/rung.cuh"

namespace klab::add_rmsnorm_quant {

namespace {

using device::Vec16;

constexpr int kThreads = 256;  // a multiple of 32 and of every group's lanes

__global__ void add_kernel(Args a) {
  const int64_t vectors = a.tokens * a.hidden / kVec;
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < vectors;
       c += int64_t(gridDim.x) * blockDim.x) {
    const Vec16<bf16> x = device::load16_stream(a.x + c * kVec);
    const Vec16<bf16> r = device::load16_stream(a.residual + c * kVec);
    Vec16<bf16> h;
#pragma unroll
    for (int i = 0; i < kVec; ++i)
      h.v[i] = __float2bfloat16_rn(__bfloat162float(x.v[i]) + __bfloat162float(r.v[i]));
    device::store16(a.residual_out + c * kVec, h);
  }
}

__global__ void __launch_bounds__(kThreads) rmsnorm_kernel(Args a, bf16* __restrict__ y) {
  __shared__ float red[32];
  const int vectors = a.hidden / kVec;
  const int64_t base = int64_t(blockIdx.x) * a.hidden;
  const bf16* gH = a.residual_out + base;
  float sum_sq = 0.f;
  for (int c = threadIdx.x; c < vectors; c += blockDim.x) {
    float h[kVec];
    unpack8(device::load16(gH + c * kVec), h);
#pragma unroll
    for (int i = 0; i < kVec; ++i) sum_sq += h[i] * h[i];
  }
  sum_sq = reduction::block_all_reduce(sum_sq, reduction::SumOp{}, red);
  const float inv_rms = rsqrtf(sum_sq * a.inv_hidden + a.eps);
  for (int c = threadIdx.x; c < vectors; c += blockDim.x) {
    float h[kVec], w[kVec];
    unpack8(device::load16(gH + c * kVec), h);
    unpack8(device::load16(a.weight + c * kVec), w);
    Vec16<bf16> out;
#pragma unroll
    for (int i = 0; i < kVec; ++i) out.v[i] = __float2bfloat16_rn(h[i] * inv_rms * w[i]);
    device::store16(y + base + c * kVec, out);
  }
}

__device__ __forceinline__ float max_abs8(const float (&f)[kVec]) {
  float m = 0.f;
#pragma unroll
  for (int i = 0; i < kVec; ++i) m = fmaxf(m, fabsf(f[i]));
  return m;
}

__device__ __forceinline__ void store_scaled(uint8_t* q, float (&f)[kVec], float factor) {
#pragma unroll
  for (int i = 0; i < kVec; ++i) f[i] *= factor;
  *reinterpret_cast<uint2*>(q) = pack8_e4m3(f);
}

__global__ void __launch_bounds__(kThreads) quantise_kernel(Args a, const bf16* __restrict__ y) {
  __shared__ float red[32];
  const int vectors = a.hidden / kVec;
  const int64_t row = blockIdx.x, base = row * a.hidden;
  const bf16* gY = y + base;
  uint8_t* gQ = a.q + base;
  if (a.group == 0) {
    float m = 0.f;
    for (int c = threadIdx.x; c < vectors; c += blockDim.x) {
      float f[kVec];
      unpack8(device::load16(gY + c * kVec), f);
      m = fmaxf(m, max_abs8(f));
    }
    const SliceScale s = slice_scale(reduction::block_all_reduce(m, reduction::MaxOp{}, red));
    if (threadIdx.x == 0) a.scales[row] = s.scale;
    for (int c = threadIdx.x; c < vectors; c += blockDim.x) {
      float f[kVec];
      unpack8(device::load16(gY + c * kVec), f);
      store_scaled(gQ + c * kVec, f, s.factor);
    }
    return;
  }
  const int group_lanes = a.group / kVec;
  float* gS = a.scales + row * (a.hidden / a.group);
  for (int c0 = 0; c0 < vectors; c0 += blockDim.x) {  // the same trip count in every lane
    const int c = c0 + threadIdx.x;
    float f[kVec] = {};
    if (c < vectors) unpack8(device::load16(gY + c * kVec), f);
    const SliceScale s = slice_scale(group_max(max_abs8(f), group_lanes));
    if (c >= vectors) continue;
    if (c % group_lanes == 0) gS[c / group_lanes] = s.scale;
    store_scaled(gQ + c * kVec, f, s.factor);
  }
}

}  // namespace

Variant gpu_baseline_unfused() {
  Variant v = rung_variant(
      "baseline_unfused", "the unfused sequence: add, rmsnorm (y bf16 in the workspace), quantise",
      [](const Problem& p, Buffers& b, const LaunchArgs& la) {
        const Args a = args_of(p, b);
        auto* y = static_cast<bf16*>(b.workspace);
        const cudaStream_t stream = stream_of(la);
        const unsigned rows = static_cast<unsigned>(a.tokens);
        add_kernel<<<device::grid_1d(a.tokens * a.hidden / kVec, kThreads), kThreads, 0, stream>>>(
            a);
        KLAB_CHECK_LAUNCH();
        rmsnorm_kernel<<<rows, kThreads, 0, stream>>>(a, y);
        KLAB_CHECK_LAUNCH();
        quantise_kernel<<<rows, kThreads, 0, stream>>>(a, y);
        KLAB_CHECK_LAUNCH();
      });
  v.info.baseline = true;
  v.workspace_bytes = [](const Problem& p) {
    const Dims s = dims_of(p);
    return static_cast<size_t>(s.tokens * s.hidden) * sizeof(bf16);
  };
  return v;
}

}  // namespace klab::add_rmsnorm_quant
