// v07 staged rows: bf16 rows of 129 to 255 columns that no 16-byte vector divides (255, 250,
// 130, ...) are read through shared memory, so that neither the loads nor the arithmetic see
// where a row starts inside a vector.
//  - A block of 4 warps owns tiles of 16 rows; the tile's bytes (16 * cols elements: a multiple
//    of 16 bytes) are copied global -> shared with 16-byte cp.async, no registers held, two
//    tiles ahead of the one computed (a ring of three buffers, one barrier a tile; one resident
//    wave of blocks strides over the tiles).
//  - Each warp takes 4 rows of the tile at once (four independent chains for the shuffles), one
//    row across the 32 lanes: lane q holds the row's 32-bit words q, q + 32, ... (8 elements),
//    read from shared memory without bank conflicts (a row's words are consecutive). A row of odd
//    length starts half way into a word every other row: the halves of a lane's words that
//    belong to the neighbouring rows are replaced by -inf with one LOP3 a word (masks computed
//    once per lane: the two parities are the only two layouts), so the max (two bf16 a HMNMX2),
//    the exponentials and the sums run on every element without a select.
//  - The outputs go from registers straight to global memory as whole 32-bit words (a word's
//    place in the tile is its place in y): a word two rows share is stored by the lane ending the
//    first row, with the second row's half fetched by a shuffle.
// Adds over v06: v06 reads these rows as 16-byte vectors straight into registers and pays, per
// element, the selects that place each vector's elements in its two rows (about 26 instructions
// an element at 255 bf16, 128 registers, 25% occupancy: docs/worklogs/softmax.md). Here the row
// layout is resolved by the shared-memory addresses.
// Expected bottleneck: DRAM bandwidth: 24 KiB of shared memory a block, two 8 KiB tiles in
// flight per block while a third is computed.
// f32 rows run v06: the first version of this rung measured 74.7% of copy there against v06's
// 89.2% (worklog); the kernel is bf16's alone.
// Requirements: 16-byte aligned x and y; bf16 cols in (128, 255], not a multiple of 8 (others
// run v06: its vector spans or v05's kernels).
#include <cuda_bf16.h>

#include <cstdint>
#include <cstring>

#include "kernels/reduction/softmax/rung.cuh"
#include "klab/device/cp_async.cuh"
#include "klab/device/fast_exp.hpp"
#include "klab/device/occupancy.cuh"
#include "klab/device/smem.cuh"
#include "klab/device/vec.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::reduction {

namespace {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int kRowsPerWarp = 4;                   // rows a warp carries at once
constexpr int kTileRows = kWarps * kRowsPerWarp;  // 16
constexpr int kLaneElems = 8;                     // elements of a row a lane holds
constexpr int kMaxCols = 32 * kLaneElems;         // 256
constexpr int kStages = 3;                        // tiles in shared memory: 2 in flight
constexpr float kLog2e = 1.44269504088896341f;

using bf16 = __nv_bfloat16;
constexpr int kWE = 2;                                  // bf16 elements in a 32-bit word
constexpr int kWords = kLaneElems / kWE;                // words of a row a lane holds
constexpr int kChunks = kTileRows * kMaxCols * 2 / 16;  // 16-byte chunks of the largest tile
constexpr uint32_t kNegInf = 0xff80ff80u;               // two bf16 -inf

/// Whether v07's staged rows take rows of `cols` elements: not a whole number of vectors (v05
/// reads those as vectors), longer than 128 (shorter rows would leave lanes idle: v06's spans
/// take them), and no more than 32 lanes' words (in bf16 a row of odd length that starts half
/// way into a word spans (cols + 1) / 2 + 1 words).
bool staged_rows_apply(const SoftmaxArgs<bf16>& a) {
  const int64_t words = (a.cols + 2) / 2;
  return a.cols % device::Vec16<bf16>::kN != 0 && a.cols > kMaxCols / 2 && words <= 32 * kWords &&
         device::aligned16(a.x) && device::aligned16(a.y);
}

__device__ __forceinline__ uint32_t ld_shared_u32(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
  return v;
}

/// Element h (0: the low half) of a word of two bf16, as fp32 (a bf16 is an fp32's high half).
__device__ __forceinline__ float word_element(uint32_t w, int h) {
  return __uint_as_float(h == 0 ? w << 16 : w & 0xffff0000u);
}

/// The largest of a lane's words' elements: two bf16 a HMNMX2, then the two halves.
__device__ __forceinline__ float word_max(const uint32_t (&w)[kWords]) {
  __nv_bfloat162 m = *reinterpret_cast<const __nv_bfloat162*>(&w[0]);
#pragma unroll
  for (int k = 1; k < kWords; ++k) m = __hmax2(m, *reinterpret_cast<const __nv_bfloat162*>(&w[k]));
  uint32_t u;
  memcpy(&u, &m, sizeof(u));
  return fmaxf(word_element(u, 0), word_element(u, 1));
}

__device__ __forceinline__ uint32_t pack_word(float lo, float hi) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);  // .x = lo: the low half
  uint32_t u;
  memcpy(&u, &h, sizeof(u));
  return u;
}

/// kOddCols: cols is odd, so a tile's row rr starts half way into a word when rr is odd (tiles
/// start on even rows); otherwise every row starts on a word.
template <bool kOddCols>
__global__ void __launch_bounds__(kThreads) staged_rows_softmax(SoftmaxArgs<bf16> a) {
  using T = bf16;
  constexpr int kParities = kOddCols ? 2 : 1;
  __shared__ __align__(16) uint4 tile[kStages][kChunks];

  const int cols = static_cast<int>(a.cols);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t tiles = (a.rows + kTileRows - 1) / kTileRows;
  const int64_t tile_elems = int64_t(kTileRows) * cols;

  // keep[p][k]: the bits of this lane's word k (the row's word lane + 32 k) that hold the row's
  // elements, for a row starting on a word (p = 0) or on a word's high half (p = 1).
  uint32_t keep[kParities][kWords];
#pragma unroll
  for (int p = 0; p < kParities; ++p)
#pragma unroll
    for (int k = 0; k < kWords; ++k) {
      const int first = (lane + 32 * k) * kWE - p;  // the word's first element, in the row
      keep[p][k] =
          (first >= 0 && first < cols ? 0x0000ffffu : 0u) | (first + 1 < cols ? 0xffff0000u : 0u);
    }

  auto tile_bytes = [&](int64_t t) {
    const int64_t rows_here = a.rows - t * kTileRows;
    return static_cast<int>((rows_here < kTileRows ? rows_here : kTileRows) * cols * sizeof(T));
  };
  auto issue = [&](int64_t t, int b) {  // tile t into tile[b]
    const int bytes = tile_bytes(t);
    const char* src = reinterpret_cast<const char*>(a.x + t * tile_elems);
    for (int c = threadIdx.x; 16 * c < bytes; c += kThreads) {
      if (16 * c + 16 <= bytes) {
        device::cp_async_16(device::smem_addr(&tile[b][c]), src + 16 * c, true);
      } else {  // the matrix's last, partial chunk: element by element (16 bytes would overrun x)
        const T* from = reinterpret_cast<const T*>(src + 16 * c);
        T* to = reinterpret_cast<T*>(&tile[b][c]);
        for (int j = 0; j < 16 / int(sizeof(T)); ++j)
          to[j] = 16 * c + j * int(sizeof(T)) < bytes ? from[j] : T(0.f);
      }
    }
  };

  // A ring of kStages buffers: tile i of this block in tile[i % kStages], tiles i + 1 and i + 2
  // in flight while i is computed. One barrier a tile: after it, tile i has landed for every
  // thread and every thread is done reading tile i - 1, whose buffer receives tile i + 2.
  const int64_t stride = gridDim.x;
#pragma unroll
  for (int i = 0; i < kStages - 1; ++i) {
    if (blockIdx.x + i * stride < tiles) issue(blockIdx.x + i * stride, i);
    device::cp_async_commit();
  }
  int b = 0;
  for (int64_t t = blockIdx.x; t < tiles; t += stride, b = b + 1 == kStages ? 0 : b + 1) {
    device::cp_async_wait<kStages - 2>();  // this thread's copies of tile t have landed
    __syncthreads();
    const int64_t ahead = t + (kStages - 1) * stride;
    if (ahead < tiles) issue(ahead, b == 0 ? kStages - 1 : b - 1);
    device::cp_async_commit();

    const int bytes = tile_bytes(t);
    const int rows_here = bytes / (cols * int(sizeof(T)));
    const uint32_t base = device::smem_addr(&tile[b][0]);

    // Read and mask this warp's rows; rows past the matrix's end read nothing (zeros).
    uint32_t w[kRowsPerWarp][kWords];
    uint32_t row_addr[kRowsPerWarp];  // the byte address of this lane's word 0 of each row
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
      const int rr = warp * kRowsPerWarp + i;
      const int p = kOddCols ? (i & 1) : 0;  // rr's parity: warp * 4 is even
      row_addr[i] = base + 4 * ((rr * cols) / kWE + lane);
      const bool live = rr < rows_here;
#pragma unroll
      for (int k = 0; k < kWords; ++k) {
        const uint32_t m = keep[p][k];
        const uint32_t v = live && m != 0 ? ld_shared_u32(row_addr[i] + 128 * k) : 0u;
        w[i][k] = (v & m) | (kNegInf & ~m);
      }
    }

    float mx[kRowsPerWarp];
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) mx[i] = word_max(w[i]);
#pragma unroll
    for (int off = 16; off > 0; off /= 2)
#pragma unroll
      for (int i = 0; i < kRowsPerWarp; ++i)
        mx[i] = fmaxf(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], off));

    // exp(x - max) in base 2 (masked elements: exp(-inf) = 0), and the row sums.
    float e[kRowsPerWarp][kLaneElems], s[kRowsPerWarp];
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
      s[i] = 0.f;
#pragma unroll
      for (int k = 0; k < kWords; ++k)
#pragma unroll
        for (int h = 0; h < kWE; ++h) {
          const float x = word_element(w[i][k], h);
          s[i] += (e[i][k * kWE + h] = device::ex2_ftz((x - mx[i]) * kLog2e));
        }
    }
#pragma unroll
    for (int off = 16; off > 0; off /= 2)
#pragma unroll
      for (int i = 0; i < kRowsPerWarp; ++i) s[i] += __shfl_xor_sync(0xffffffffu, s[i], off);

    // The outputs, as whole words. With odd cols, rows 4w + 1 and 4w + 3 start half way into a
    // word whose low half ends rows 4w and 4w + 2 (4 rows are an even number of elements: a
    // warp's rows share words with no other warp's): that word is stored once, by the lane that
    // ends the even row, with the odd row's half fetched from lane 0 by a shuffle.
    uint32_t o[kRowsPerWarp][kWords];
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
      const float inv = 1.f / s[i];
#pragma unroll
      for (int k = 0; k < kWords; ++k)
        o[i][k] = pack_word(e[i][k * kWE] * inv, e[i][k * kWE + 1] * inv);
    }
    if constexpr (kOddCols) {
#pragma unroll
      for (int i = 0; i < kRowsPerWarp; i += 2) {
        const uint32_t next_first = __shfl_sync(0xffffffffu, o[i + 1][0], 0);
#pragma unroll
        for (int k = 0; k < kWords; ++k)
          o[i][k] = (o[i][k] & keep[0][k]) | (next_first & ~keep[0][k]);
      }
    }
    // Straight to global memory: a word's place in the tile is its place in y (the tile starts
    // on 16 bytes), so each lane stores whole 32-bit words, 128 bytes a warp instruction. In the
    // matrix's last tile a word may run past its end (the last row's other half): that half
    // is left out.
    auto* yw = reinterpret_cast<uint32_t*>(a.y + t * tile_elems);
    const bool last_tile = t + 1 == tiles;
#pragma unroll
    for (int i = 0; i < kRowsPerWarp; ++i) {
      const int rr = warp * kRowsPerWarp + i;
      if (rr >= rows_here) continue;  // warp-uniform
      const int p = kOddCols ? (i & 1) : 0;
      const int w0 = (rr * cols) / kWE + lane;  // this lane's word 0 of the row, in the tile
#pragma unroll
      for (int k = 0; k < kWords; ++k) {
        // Words past the row's end are not stored, nor an odd row's first (stored with the row
        // before).
        if (keep[p][k] == 0 || (p == 1 && k == 0 && lane == 0)) continue;
        const int wi = w0 + 32 * k;
        if (!last_tile || (wi + 1) * kWE <= bytes / int(sizeof(T)))
          yw[wi] = o[i][k];
        else  // the word's low half is the matrix's last element
          reinterpret_cast<uint16_t*>(yw + wi)[0] = uint16_t(o[i][k]);
      }
    }
  }
}

template <class T>
void launch_staged_rows(SoftmaxArgs<T> a, cudaStream_t st) {
  if constexpr (sizeof(T) != 2) {  // f32 rows run v06 (worklog: faster there)
    launch_vector_spans(a, st);
  } else {
    if (!staged_rows_apply(a)) return launch_vector_spans(a, st);
    const int64_t tiles = (a.rows + kTileRows - 1) / kTileRows;
    auto run = [&](auto kernel) {
      kernel<<<device::grid_resident_wave(device_info().sm_count, kernel, tiles * kThreads,
                                          kThreads),
               kThreads, 0, st>>>(a);
    };
    if (a.cols % 2 != 0)
      run(staged_rows_softmax<true>);
    else
      run(staged_rows_softmax<false>);
  }
}

}  // namespace

Variant softmax_v07_staged_rows() {
  Variant v = softmax_variant(
      "v07_staged_rows",
      "v06, with rows of 129-256 off the vector width staged through shared memory by cp.async",
      [](const Problem& p, Buffers& b, const LaunchArgs& args) {
        with_softmax_args(
            p, b, [&]<class T>(SoftmaxArgs<T> a) { launch_staged_rows(a, stream_of(args)); });
        KLAB_CHECK_LAUNCH();
      });
  v.can_implement = warp_rows_fit;
  return v;
}

}  // namespace klab::reduction
