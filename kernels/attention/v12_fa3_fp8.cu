// v12 fa3_fp8 (sm_90a): FlashAttention 3's FP8 forward, e4m3 Q, K and V with per-tensor scales,
// bf16 O: v05's overlapped loop (two consumer warpgroups of 64 rows, the ping-pong, each
// softmax under its own previous P V, K handed back after S and V after P V) with both GEMMs as
// FP8 wgmma (m64n128k32: half the tensor cycles of bf16's m64n128k16 pair per key block).
// - Tiles: D = 128 e4m3 values are 128 bytes, bf16's D = 64 in bytes: fa3::Config<64, ...>'s
//   tiles, descriptors (k-steps of 32 bytes) and barriers, 128-row query tiles, 128-key blocks,
//   three stages of 16 KiB K and 16 KiB V.
// - V transposed first: FP8 wgmma reads B K-major only, so a launch before the forward writes Vt
//   (fa3_fp8.hpp: per key block of 128 its D rows of 128 keys, keys permuted within each group of
//   32 so that P's e4m3 registers pack in place from S's accumulators, no exchange); the producer
//   loads Vt's tiles with K's coordinates. Both launches are timed.
// - P: the softmax's terms 2^8 times the usual (FlashAttention 3's max offset for FP8; exact
//   rescaling, since lazily kept maxima can already put terms at 2^8), rounded to e4m3 four to a
//   register; the row sums from the fp32 terms.
// - Scales: Q's and K's multiply the softmax's scale, V's the epilogue's 1 / l; read by each
//   consumer thread from device memory at its tile's start.
// Prediction: docs/worklogs/attention.md.
// Requirements: sm_90a; D = 128; the TMA's (16-byte aligned Q, K, V); the workspace of Vt
// (VtLayout::bytes).
#include <cuda_fp8.h>

#include <string>

#include "kernels/attention/fa3_fp8.hpp"
#include "kernels/attention/fa3_kernel.cuh"
#include "kernels/attention/fa3_overlap.cuh"
#include "kernels/attention/family.hpp"

namespace klab::attention {

namespace {

struct V12Name {
  static constexpr const char* kName = "attention.v12";
};
/// The byte geometry of 128-byte rows (fa3_fp8.hpp), three stages, V a block behind K.
template <int>
using Fp8Config = fa3::Config</*16-bit columns of a 128-byte row*/ 64, 3, fa3::kOverlapKvLag>;
using V12 = fa3::OverlapRung<V12Name, fa3::SoftmaxOptions<0, false, /*max offset*/ 8>, Fp8Config>;
using E4m3 = __nv_fp8_e4m3;
static_assert(Fp8Config<0>::kBlockN == fa3::kFp8BlockN &&
              Fp8Config<0>::Tiles::KV::kBytes == fa3::kFp8D * fa3::kFp8BlockN);

constexpr int kTransposeThreads = 256;
constexpr int kPadWords = 33;  // a staged key row of 128 bytes in 32 words, padded by one

/// Vt of key block blockIdx.x, head blockIdx.y, batch blockIdx.z: the block's 128 keys (zeros
/// past Nkv) staged in shared memory, then written as D rows of 128 keys in p8_place's order.
__global__ void __launch_bounds__(kTransposeThreads)
    transpose_v(const uint8_t* __restrict__ v, uint8_t* __restrict__ vt, int64_t nkv, int hkv) {
  __shared__ uint32_t rows[fa3::kFp8BlockN * kPadWords];
  const int64_t bi = blockIdx.z, jb = blockIdx.x;
  const int h = int(blockIdx.y);
  for (int i = int(threadIdx.x); i < fa3::kFp8BlockN * 8; i += kTransposeThreads) {
    const int key = i / 8, chunk = i % 8;
    const int64_t n = jb * fa3::kFp8BlockN + key;
    uint4 x = make_uint4(0, 0, 0, 0);
    if (n < nkv)
      x = *reinterpret_cast<const uint4*>(v + ((bi * nkv + n) * hkv + h) * fa3::kFp8D + 16 * chunk);
    uint32_t* dst = rows + key * kPadWords + 4 * chunk;
    dst[0] = x.x, dst[1] = x.y, dst[2] = x.z, dst[3] = x.w;
  }
  __syncthreads();
  const auto* bytes = reinterpret_cast<const uint8_t*>(rows);
  const fa3::VtLayout lay{(nkv + fa3::kFp8BlockN - 1) / fa3::kFp8BlockN};
  // A warp's threads take 32 consecutive d of one chunk: each of its byte reads of a staged key
  // row touches 8 consecutive words (no bank conflict; with 8 chunks a warp, 75% of the loads'
  // wavefronts conflicted in 61e7274's profile).
  for (int i = int(threadIdx.x); i < fa3::kFp8D * 8; i += kTransposeThreads) {
    const int d = i % fa3::kFp8D, chunk = i / fa3::kFp8D;  // Vt's columns 16 chunk .. of row d
    uint32_t w[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      uint32_t word = 0;
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        const int c = 16 * chunk + 4 * q + b;
        const int key = c / 32 * 32 + fa3::p8_key(c % 32);
        word |= uint32_t(bytes[key * 4 * kPadWords + d]) << (8 * b);
      }
      w[q] = word;
    }
    *reinterpret_cast<uint4*>(vt + lay.offset(bi, jb * fa3::kFp8BlockN, h, d, hkv) + 16 * chunk) =
        make_uint4(w[0], w[1], w[2], w[3]);
  }
}

/// A (B, N, H, 128) e4m3 array (Q, K, or Vt shaped so, fa3_fp8.hpp) in boxes of 128 bytes x
/// `rows` tokens.
CUtensorMap e4m3_map(const void* base, int64_t b, int64_t n, int64_t h, int rows) {
  return fa3::token_tensor_map(base, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, b, n, h, fa3::kFp8D, rows);
}

PreparedLaunch prepare_v12(const Problem& p, Buffers& b) {
  const Dims s = dims_of(p);
  using C = Fp8Config<0>;
  const fa3::VtLayout lay = fa3::vt_layout(s.nkv);
  KLAB_CHECK(b.workspace != nullptr && int64_t(b.workspace_bytes) >= lay.bytes(s.b, s.hkv),
             std::string(V12Name::kName) + ": needs its workspace (V transposed)");
  const auto* q = static_cast<const uint8_t*>(b["q"].data);
  const auto* k = static_cast<const uint8_t*>(b["k"].data);
  const auto* v = static_cast<const uint8_t*>(b["v"].data);
  auto* vt = static_cast<uint8_t*>(b.workspace);
  KLAB_CHECK(device::aligned16(q) && device::aligned16(k) && device::aligned16(v),
             std::string(V12Name::kName) + ": Q, K and V must be 16-byte aligned (TMA)");
  const CUtensorMap q_map = e4m3_map(q, s.b, s.nq, s.hq, C::kBlockM);
  const CUtensorMap k_map = e4m3_map(k, s.b, s.nkv, s.hkv, C::kBlockN);
  const CUtensorMap vt_map = e4m3_map(vt, s.b, lay.rows(), s.hkv, C::kBlockN);
  Geometry g = geometry_of(s);
  g.q_scale = b.ptr<float>("q_scale");
  g.k_scale = b.ptr<float>("k_scale");
  g.v_scale = b.ptr<float>("v_scale");
  constexpr auto kernel = fa3::kernel<V12, C, E4m3, fa3::kFp8D>;
  device::opt_in_dynamic_smem<kernel>(C::kSmemBytes);
  const dim3 grid = tiled_grid(g, s.b, C::kBlockM);
  const dim3 t_grid(unsigned(lay.blocks), unsigned(s.hkv), unsigned(s.b));
  auto* o = b.ptr<__nv_bfloat16>("o");
  float* lse = b.ptr<float>("lse");
  const int64_t nkv = s.nkv;
  const int hkv = int(s.hkv);
  return PreparedLaunch([=](Stream stream) {
    const auto st = reinterpret_cast<cudaStream_t>(stream);
    transpose_v<<<t_grid, kTransposeThreads, 0, st>>>(v, vt, nkv, hkv);
    KLAB_CHECK_LAUNCH();
    kernel<<<grid, C::kThreads, C::kSmemBytes, st>>>(q_map, k_map, vt_map, o, lse, g);
    KLAB_CHECK_LAUNCH();
  });
}

}  // namespace

Variant gpu_v12_fa3_fp8() {
  Variant v = gpu_variant_of(
      "attention.v12_fa3_fp8",
      "FlashAttention 3's FP8 forward: v05's overlapped loop on e4m3 wgmma (m64n128k32), V "
      "transposed by a launch before (keys permuted so that P's e4m3 registers pack in place), P "
      "scaled by 2^8, per-tensor scales; bf16 O",
      90, {DType::e4m3},
      [](const Problem& p, Buffers& b, const LaunchArgs& args) { prepare_v12(p, b)(args.stream); });
  v.prepare = [](const Problem& p, Buffers& b, const LaunchArgs&) { return prepare_v12(p, b); };
  v.can_implement = [](const Problem& p) {
    const std::string name = V12Name::kName;
    if (Status st = fa3::can_implement(name, p); !st.ok()) return st;
    if (dims_of(p).d != fa3::kFp8D) return Status::no(name + ": d must be 128");
    if (p.misalign % 16 != 0)  // fa3::can_implement counts 2-byte elements
      return Status::no(name + ": the TMA needs 16-byte aligned Q, K, V (misaligned base)");
    return Status::yes();
  };
  v.workspace_bytes = [](const Problem& p) {
    const Dims s = dims_of(p);
    return size_t(fa3::vt_layout(s.nkv).bytes(s.b, s.hkv));
  };
  return v;
}

}  // namespace klab::attention
