#pragma once
// The token ring of the sm_90 rungs (v02_token_ring to v07_head_parts): a resident wave of
// blocks walks the tokens (block b takes tokens b, b + grid, ...; with v07's parts, part
// b % parts of tokens b / parts, b / parts + grid / parts, ...), and each token's whole
// qkv row (Hq + 2 Hkv heads of D bf16, contiguous: 12 KiB at Qwen3-8B), or one part of it (v07),
// arrives in shared memory by one TMA bulk copy on an mbarrier, issued ahead into a ring of rows
// (a rung's choice: v02 two, v03 three, v04 to v07 four or eight). After the rows, a rope table
// (D floats) per stage.
// Device side: the ring's layout and its copies; host side: the launch and the shared-memory
// requirement.
#include <algorithm>
#include <functional>
#include <string>

#include "kernels/qk_norm_rope_cache/rung.cuh"
#include "klab/device/launch_attributes.hpp"
#include "klab/device/mbarrier_sm90.cuh"
#include "klab/device/occupancy.cuh"
#include "klab/device/tma_sm90.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::qk_norm_rope_cache::ring {

inline constexpr size_t kMaxSmem = 200 * 1024;

/// Heads of each part of a row of `heads` split over `parts` blocks (the last part may hold
/// fewer; parts = 1: the whole row).
template <class Int>
__host__ __device__ Int part_heads(Int heads, int parts) {
  return (heads + parts - 1) / parts;
}

/// Dynamic shared memory of the ring: `stages` rows of `heads` x d bf16, then `stages` rope tables
/// of d floats.
inline size_t smem_bytes(int64_t heads, int64_t d, int stages) {
  return stages * (size_t(heads) * d * sizeof(bf16) + size_t(d) * sizeof(float));
}

/// The ring of kStages rows in a block's dynamic shared memory, and its row copies (by one
/// thread).
template <int kStages>
struct Ring {
  bf16* rows;      // (kStages, max_heads x d): whole rows, or parts of at most max_heads
  float* tables;   // (kStages, d): the rope table of each stage's token
  uint64_t* full;  // kStages mbarriers: the row of stage s has landed
  int row_elems;   // a multiple of 16: 16-byte aligned rows
  uint32_t row_bytes;
  const bf16* src;  // the first copied element of token 0's qkv row
  int token_elems;  // elements of a token's whole qkv row

  /// A ring of whole qkv rows.
  __device__ Ring(unsigned char* smem, uint64_t* full_barriers, const Args& a)
      : Ring(smem, full_barriers, a, 0, a.heads(), a.heads()) {}
  /// A ring of a part of each row: `heads` heads from head `head0` (rows spaced for `max_heads`).
  __device__ Ring(unsigned char* smem, uint64_t* full_barriers, const Args& a, int head0, int heads,
                  int max_heads)
      : rows(reinterpret_cast<bf16*>(smem)),
        full(full_barriers),
        row_elems(max_heads * a.d),
        row_bytes(uint32_t(heads * a.d) * sizeof(bf16)),
        src(a.qkv + head0 * a.d),
        token_elems(a.heads() * a.d) {
    tables = reinterpret_cast<float*>(smem + kStages * size_t(row_elems) * sizeof(bf16));
  }

  /// Token t's row into stage s (one thread), with this thread's arrival on full[s].
  __device__ void issue(const Args& a, int64_t t, int s) const {
    device::mbarrier_arrive_expect_tx(&full[s], row_bytes);
    load(t, s);
  }

  /// Token t's row into stage s (one thread), expected on full[s] without an arrival: the
  /// stage's arrivals are counted apart (v05's producer warp).
  __device__ void copy(const Args& a, int64_t t, int s) const {
    device::mbarrier_expect_tx(&full[s], row_bytes);
    load(t, s);
  }

 private:
  __device__ void load(int64_t t, int s) const {
    device::bulk_copy_g2s(rows + s * row_elems, src + t * token_elems, row_bytes, &full[s]);
  }

 public:
  /// Thread 0: the barriers, then the block's first kStages rows (tokens first, first + stride,
  /// ...). The caller synchronises the block before any thread waits on them.
  __device__ void start(const Args& a, int64_t first, int64_t stride) const {
    if (threadIdx.x != 0) return;
    for (int s = 0; s < kStages; ++s) device::mbarrier_init(&full[s], 1);
    device::fence_mbarrier_init();
    for (int s = 0; s < kStages; ++s)
      if (first + s * stride < a.tokens) issue(a, first + s * stride, s);
  }
};

/// Launches kKernel (a ring of `stages` rows) over one resident wave of blocks of `threads` (at
/// most one block a token), programmatically when la asks (LaunchArgs::programmatic). With
/// `parts` > 1 each token's row is split over that many blocks (rows of `row_heads` heads): the
/// grid is a multiple of `parts`, at most `parts` blocks a token.
template <auto kKernel>
void launch(const Args& a, const LaunchArgs& la, int threads, int stages, int parts = 1,
            int row_heads = 0) {
  if (a.tokens == 0) return;
  const size_t smem = smem_bytes(row_heads > 0 ? row_heads : a.heads(), a.d, stages);
  device::opt_in_dynamic_smem<kKernel>(static_cast<int>(kMaxSmem));
  const int64_t resident = device::resident_wave(device_info().sm_count, kKernel, threads, smem);
  const auto grid =
      static_cast<unsigned>(std::min<int64_t>(resident / parts * parts, a.tokens * parts));
  KLAB_CHECK(grid > 0, "qk_norm_rope_cache: no block of " + std::to_string(threads) +
                           " threads and " + std::to_string(smem) + " bytes of shared memory " +
                           "(" + std::to_string(parts) + " a token) is resident on an SM");
  const device::LaunchAttributes attrs(0, la.programmatic);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(static_cast<unsigned>(threads));
  config.dynamicSmemBytes = smem;
  config.stream = stream_of(la);
  attrs.apply(config);
  KLAB_CUDA_CHECK(cudaLaunchKernelEx(&config, kKernel, a));
  KLAB_CHECK_LAUNCH();
}

/// launch of kSmall (bounded for blocks of at most `small_threads` threads: several blocks an SM)
/// when `threads` fits it, else of kLarge (1024 threads, one block an SM).
template <auto kSmall, auto kLarge>
void launch_sized(const Args& a, const LaunchArgs& la, int threads, int small_threads, int stages,
                  int parts = 1, int row_heads = 0) {
  if (threads <= small_threads)
    launch<kSmall>(a, la, threads, stages, parts, row_heads);
  else
    launch<kLarge>(a, la, threads, stages, parts, row_heads);
}

/// The ring's requirement beyond rung.cuh's: `stages` rows (or parts of a row of `parts`) and
/// tables in kMaxSmem.
inline Status fits(const Problem& p, const std::string& id, int stages, int parts = 1) {
  const Dims d = dims_of(p);
  const int64_t heads = part_heads<int64_t>(d.hq + 2 * d.hkv, parts);
  if (smem_bytes(heads, d.d, stages) > kMaxSmem)
    return Status::no(id + ": " + std::to_string(stages) + " qkv rows of " + std::to_string(heads) +
                      " heads x " + std::to_string(d.d) +
                      " do not fit in 200 KiB of shared memory");
  return Status::yes();
}

/// A token-ring rung of `stages` rows: rung_variant's, on sm_90, refusing what rung.cuh refuses,
/// what the ring cannot hold, then what `also` refuses (when given).
inline Variant variant(const std::string& rung, const std::string& summary, int stages,
                       std::function<void(const Problem&, Buffers&, const LaunchArgs&)> launch,
                       std::function<Status(const Problem&)> also = {}, int parts = 1) {
  Variant v = rung_variant(rung, summary, std::move(launch));
  v.info.min_sm = 90;
  v.can_implement = [base = v.can_implement, id = v.info.id, stages, also,
                     parts](const Problem& p) {
    if (Status s = base(p); !s.ok()) return s;
    if (Status s = fits(p, id, stages, parts); !s.ok()) return s;
    return also ? also(p) : Status::yes();
  };
  return v;
}

/// A token-ring rung of one kernel in two sizes (launch_sized): `threads_of(heads, d)` threads a
/// block for the heads of a block (a row's, or with `parts` > 1 a part's: ceil(heads / parts)),
/// kSmall up to `small_threads`; refusing what variant() refuses, then what `also` does. Given
/// kSmallE4m3 and kLargeE4m3 (the kernel's e4m3-pool sizes), it also takes e4m3 pools.
template <auto kSmall, auto kLarge, auto kSmallE4m3 = nullptr, auto kLargeE4m3 = nullptr>
Variant sized_variant(const std::string& rung, const std::string& summary, int stages,
                      int small_threads, int64_t (*threads_of)(int64_t heads, int64_t d),
                      std::function<Status(const Problem&)> also, int parts = 1) {
  constexpr bool kWithE4m3 = kSmallE4m3 != nullptr;
  Variant v = variant(
      rung, summary, stages,
      [=](const Problem& p, Buffers& b, const LaunchArgs& la) {
        const Args a = args_of(p, b);
        const int heads = part_heads(a.heads(), parts);
        const int threads = static_cast<int>(threads_of(heads, a.d));
        if constexpr (kWithE4m3)
          if (a.k_cache8 != nullptr)
            return launch_sized<kSmallE4m3, kLargeE4m3>(a, la, threads, small_threads, stages,
                                                        parts, heads);
        launch_sized<kSmall, kLarge>(a, la, threads, small_threads, stages, parts, heads);
      },
      std::move(also), parts);
  if (kWithE4m3) v.info.dtypes.push_back(DType::e4m3);
  return v;
}

}  // namespace klab::qk_norm_rope_cache::ring
