#pragma once
// Hopper (sm_90a) warpgroup matrix multiply-accumulate, wgmma.mma_async: the four warps of a
// warpgroup (warpgroup_sm90.cuh) multiply a 64 x N x 16 block together, operands read from
// shared memory through descriptors (wgmma_desc.hpp; wgmma_ss), or A from registers (wgmma_rs),
// accumulators in registers. Asynchronous:
// issue after wgmma_fence(), close with wgmma_commit_group(), read the accumulators after
// wgmma_wait_group<...>() and wgmma_fence_operands().
//
// Accumulator layout (PTX ISA, "Register Fragments" of wgmma .m64nNk16, f32 D): thread t of the
// warpgroup, warp w = t / 32, lane l = t % 32, holds for n8 block j (0..N/8-1) the four floats
// d[4j + 0..1] at (row 16w + l/4,     column 8j + 2(l%4) + 0..1) and
//     d[4j + 2..3] at (row 16w + l/4 + 8, column 8j + 2(l%4) + 0..1)
// (wgmma_fragment.hpp computes it; the CPU tests check it covers the tile once).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "klab/device/warpgroup_sm90.cuh"
#include "klab/device/wgmma_desc.hpp"

namespace klab::device {

/// Keeps the compiler from moving reads or writes of an accumulator register across the wgmma
/// fence / commit / wait (asm volatile orders instructions, not the registers they work on).
__device__ __forceinline__ void wgmma_fence_operand(float& r) {
  asm volatile("" : "+f"(r)::"memory");
}

template <int kN>
__device__ __forceinline__ void wgmma_fence_operands(float (&d)[kN]) {
#pragma unroll
  for (int i = 0; i < kN; ++i) wgmma_fence_operand(d[i]);
}

/// The widths wgmma_ss is instantiated for: the instruction takes any multiple of 8 up to 256,
/// but each width is its own asm text (below), so only the ones kernels use are spelled out.
template <int kN>
inline constexpr bool kWgmmaWidthSupported =
    kN == 8 || kN == 16 || kN == 32 || kN == 64 || kN == 128 || kN == 160 || kN == 176 ||
    kN == 192 || kN == 256;

// The asm text of one wgmma: N/2 accumulator registers (their names, 32 at a time, and their
// operands d[i]), then descriptor A, descriptor B, the scale-d predicate and the two transpose
// immediates, whose operand numbers follow the accumulators'.
#define KLAB_WGMMA_D0_4 "%0,%1,%2,%3"
#define KLAB_WGMMA_D0_8 KLAB_WGMMA_D0_4 ",%4,%5,%6,%7"
#define KLAB_WGMMA_D0_16 KLAB_WGMMA_D0_8 ",%8,%9,%10,%11,%12,%13,%14,%15"
#define KLAB_WGMMA_D0                                      \
  "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15," \
  "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"
#define KLAB_WGMMA_D32                                               \
  "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47," \
  "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
#define KLAB_WGMMA_D64                                               \
  "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79," \
  "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95"
#define KLAB_WGMMA_D64_16 "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79"
#define KLAB_WGMMA_D64_24 KLAB_WGMMA_D64_16 ",%80,%81,%82,%83,%84,%85,%86,%87"
#define KLAB_WGMMA_D96                                                           \
  "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111," \
  "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"
#define KLAB_WGMMA_F4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define KLAB_WGMMA_F32(i)                                                              \
  KLAB_WGMMA_F4(i), KLAB_WGMMA_F4(i + 4), KLAB_WGMMA_F4(i + 8), KLAB_WGMMA_F4(i + 12), \
      KLAB_WGMMA_F4(i + 16), KLAB_WGMMA_F4(i + 20), KLAB_WGMMA_F4(i + 24), KLAB_WGMMA_F4(i + 28)
// SHAPE "m64nNk16", TYPE "bf16" or "f16", A..TB the operand names ("%32" ...).
#define KLAB_WGMMA_SS(SHAPE, TYPE, DREGS, A, B, SCALE, TA, TB, ...)                         \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SCALE                                    \
               ", 0;\nwgmma.mma_async.sync.aligned." SHAPE ".f32." TYPE "." TYPE " {" DREGS \
               "}, " A ", " B ", p, 1, 1, " TA ", " TB ";\n}\n"                             \
               : __VA_ARGS__                                                                \
               : "l"(desc_a), "l"(desc_b), "r"(int(accumulate)), "n"(kTransA), "n"(kTransB))
#define KLAB_WGMMA_SS_TYPED(SHAPE, DREGS, A, B, SCALE, TA, TB, ...)        \
  if constexpr (std::is_same_v<T, __nv_bfloat16>)                          \
    KLAB_WGMMA_SS(SHAPE, "bf16", DREGS, A, B, SCALE, TA, TB, __VA_ARGS__); \
  else                                                                     \
    KLAB_WGMMA_SS(SHAPE, "f16", DREGS, A, B, SCALE, TA, TB, __VA_ARGS__)

/// d (+)= A * B for one m64nNk16 block, T = __nv_bfloat16 or __half: A 64 x 16 and B 16 x N in
/// shared memory (descriptors desc_a, desc_b), d 64 x N f32 spread over the warpgroup (N/2
/// floats a thread, layout above). accumulate = false overwrites d (scale-d 0). kTransA /
/// kTransB = 0: the operand is K-major (rows of A, columns of B contiguous in K); 1: MN-major
/// (A column-major, B row-major: N contiguous), which only 16-bit types allow.
template <int kN, class T, int kTransA = 0, int kTransB = 0>
__device__ __forceinline__ void wgmma_ss(float (&d)[kN / 2], uint64_t desc_a, uint64_t desc_b,
                                         bool accumulate) {
  static_assert(kWgmmaWidthSupported<kN>,
                "wgmma_ss: N in {8, 16, 32, 64, 128, 160, 176, 192, 256}");
  static_assert(std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __half>);
  static_assert((kTransA == 0 || kTransA == 1) && (kTransB == 0 || kTransB == 1));
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (kN == 8) {  // the narrow widths: skinny products (tokens as N)
    KLAB_WGMMA_SS_TYPED("m64n8k16", KLAB_WGMMA_D0_4, "%4", "%5", "%6", "%7", "%8",
                        KLAB_WGMMA_F4(0));
  } else if constexpr (kN == 16) {
    KLAB_WGMMA_SS_TYPED("m64n16k16", KLAB_WGMMA_D0_8, "%8", "%9", "%10", "%11", "%12",
                        KLAB_WGMMA_F4(0), KLAB_WGMMA_F4(4));
  } else if constexpr (kN == 32) {
    KLAB_WGMMA_SS_TYPED("m64n32k16", KLAB_WGMMA_D0_16, "%16", "%17", "%18", "%19", "%20",
                        KLAB_WGMMA_F4(0), KLAB_WGMMA_F4(4), KLAB_WGMMA_F4(8), KLAB_WGMMA_F4(12));
  } else if constexpr (kN == 64) {
    KLAB_WGMMA_SS_TYPED("m64n64k16", KLAB_WGMMA_D0, "%32", "%33", "%34", "%35", "%36",
                        KLAB_WGMMA_F32(0));
  } else if constexpr (kN == 128) {
    KLAB_WGMMA_SS_TYPED("m64n128k16", KLAB_WGMMA_D0 "," KLAB_WGMMA_D32, "%64", "%65", "%66", "%67",
                        "%68", KLAB_WGMMA_F32(0), KLAB_WGMMA_F32(32));
  } else if constexpr (kN == 160) {
    KLAB_WGMMA_SS_TYPED("m64n160k16", KLAB_WGMMA_D0 "," KLAB_WGMMA_D32 "," KLAB_WGMMA_D64_16, "%80",
                        "%81", "%82", "%83", "%84", KLAB_WGMMA_F32(0), KLAB_WGMMA_F32(32),
                        KLAB_WGMMA_F4(64), KLAB_WGMMA_F4(68), KLAB_WGMMA_F4(72), KLAB_WGMMA_F4(76));
  } else if constexpr (kN == 176) {
    KLAB_WGMMA_SS_TYPED("m64n176k16", KLAB_WGMMA_D0 "," KLAB_WGMMA_D32 "," KLAB_WGMMA_D64_24, "%88",
                        "%89", "%90", "%91", "%92", KLAB_WGMMA_F32(0), KLAB_WGMMA_F32(32),
                        KLAB_WGMMA_F4(64), KLAB_WGMMA_F4(68), KLAB_WGMMA_F4(72), KLAB_WGMMA_F4(76),
                        KLAB_WGMMA_F4(80), KLAB_WGMMA_F4(84));
  } else if constexpr (kN == 192) {
    KLAB_WGMMA_SS_TYPED("m64n192k16", KLAB_WGMMA_D0 "," KLAB_WGMMA_D32 "," KLAB_WGMMA_D64, "%96",
                        "%97", "%98", "%99", "%100", KLAB_WGMMA_F32(0), KLAB_WGMMA_F32(32),
                        KLAB_WGMMA_F32(64));
  } else {
    KLAB_WGMMA_SS_TYPED("m64n256k16",
                        KLAB_WGMMA_D0 "," KLAB_WGMMA_D32 "," KLAB_WGMMA_D64 "," KLAB_WGMMA_D96,
                        "%128", "%129", "%130", "%131", "%132", KLAB_WGMMA_F32(0),
                        KLAB_WGMMA_F32(32), KLAB_WGMMA_F32(64), KLAB_WGMMA_F32(96));
  }
#else
  (void)d, (void)desc_a, (void)desc_b, (void)accumulate;
  __trap();
#endif
}

/// Keeps a wgmma's A registers (wgmma_rs) alive, unchanged, until this point: after the
/// wgmma_wait_group that retires the instruction reading them, so that the compiler neither
/// reuses them nor moves a write to them before it.
__device__ __forceinline__ void wgmma_fence_operand(uint32_t& r) {
  asm volatile("" : "+r"(r)::"memory");
}

// The register-A form: A's four registers follow the accumulators, then descriptor B, the
// scale-d predicate and B's transpose immediate.
#define KLAB_WGMMA_RS(SHAPE, TYPE, DREGS, A, B, SCALE, TB, ...)                                 \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SCALE                                        \
               ", 0;\nwgmma.mma_async.sync.aligned." SHAPE ".f32." TYPE "." TYPE " {" DREGS     \
               "}, {" A "}, " B ", p, 1, 1, " TB ";\n}\n"                                       \
               : __VA_ARGS__                                                                    \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(int(accumulate)), \
                 "n"(kTransB))
#define KLAB_WGMMA_RS_TYPED(SHAPE, DREGS, A, B, SCALE, TB, ...)        \
  if constexpr (std::is_same_v<T, __nv_bfloat16>)                      \
    KLAB_WGMMA_RS(SHAPE, "bf16", DREGS, A, B, SCALE, TB, __VA_ARGS__); \
  else                                                                 \
    KLAB_WGMMA_RS(SHAPE, "f16", DREGS, A, B, SCALE, TB, __VA_ARGS__)

/// d (+)= A * B for one m64nNk16 block with A from registers (PTX ISA, "Register Fragments",
/// matrix A of wgmma .m64nNk16): warp w of the warpgroup holds rows 16w .. 16w + 15 of the 64 x
/// 16 A as mma.sync m16n8k16's A fragment, lane l (g = l/4, t = l%4): a[0] (row g, k 2t, 2t+1),
/// a[1] (row g+8, k 2t..), a[2] (row g, k 2t+8..), a[3] (row g+8, k 2t+8..), lower k in the low
/// half. So a wgmma accumulator of 16-bit-rounded pairs is directly the A operand of the next
/// product (FlashAttention 3's P V). B 16 x N in shared memory (desc_b); kTransB as wgmma_ss.
/// The A registers must stay unchanged until the group completes (wgmma_fence_operand after the
/// wait).
template <int kN, class T, int kTransB = 0>
__device__ __forceinline__ void wgmma_rs(float (&d)[kN / 2], const uint32_t (&a)[4],
                                         uint64_t desc_b, bool accumulate) {
  static_assert(kN == 64 || kN == 128 || kN == 256, "wgmma_rs: N in {64, 128, 256}");
  static_assert(std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __half>);
  static_assert(kTransB == 0 || kTransB == 1);
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (kN == 64) {
    KLAB_WGMMA_RS_TYPED("m64n64k16", KLAB_WGMMA_D0, "%32,%33,%34,%35", "%36", "%37", "%38",
                        KLAB_WGMMA_F32(0));
  } else if constexpr (kN == 128) {
    KLAB_WGMMA_RS_TYPED("m64n128k16", KLAB_WGMMA_D0 "," KLAB_WGMMA_D32, "%64,%65,%66,%67", "%68",
                        "%69", "%70", KLAB_WGMMA_F32(0), KLAB_WGMMA_F32(32));
  } else {
    KLAB_WGMMA_RS_TYPED("m64n256k16",
                        KLAB_WGMMA_D0 "," KLAB_WGMMA_D32 "," KLAB_WGMMA_D64 "," KLAB_WGMMA_D96,
                        "%128,%129,%130,%131", "%132", "%133", "%134", KLAB_WGMMA_F32(0),
                        KLAB_WGMMA_F32(32), KLAB_WGMMA_F32(64), KLAB_WGMMA_F32(96));
  }
#else
  (void)d, (void)a, (void)desc_b, (void)accumulate;
  __trap();
#endif
}

#undef KLAB_WGMMA_RS_TYPED
#undef KLAB_WGMMA_RS
#undef KLAB_WGMMA_SS_TYPED
#undef KLAB_WGMMA_SS
#undef KLAB_WGMMA_F32
#undef KLAB_WGMMA_F4
#undef KLAB_WGMMA_D96
#undef KLAB_WGMMA_D64
#undef KLAB_WGMMA_D32
#undef KLAB_WGMMA_D0
#undef KLAB_WGMMA_D0_16
#undef KLAB_WGMMA_D0_8
#undef KLAB_WGMMA_D0_4

/// wgmma_ss for one m64n64k16 bf16 block (the first form this file held).
template <int kTransA = 0, int kTransB = 0>
__device__ __forceinline__ void wgmma_m64n64k16_bf16_ss(float (&d)[32], uint64_t desc_a,
                                                        uint64_t desc_b, bool accumulate) {
  wgmma_ss<64, __nv_bfloat16, kTransA, kTransB>(d, desc_a, desc_b, accumulate);
}

}  // namespace klab::device
