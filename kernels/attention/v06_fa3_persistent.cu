// v06 fa3_persistent (sm_90a): v05's block (a TMA producer warpgroup, two consumer warpgroups of
// 64 query rows, FA3's two overlaps, K handed back after S and V after P V) as a persistent
// kernel: one block per SM walks a line of tiles instead of one tile per block.
// - The line (fa3_schedule.hpp's TileLine): sections of consecutive (batch, query head) pairs
//   whose K and V fit half the L2; inside a section the tiles by query tile, the last (the longest
//   key range: under the causal mask the heaviest) first, the section's pairs fastest. A block's
//   first tile is its index, each next one comes off an atomic counter in the workspace (fetched
//   by the producer one tile ahead, so its latency hides under the loads it issues); the last
//   block to draw an index past the end resets the counter for the next launch.
//   Why the counter and not a static stride: the line's weights fall within a section and jump
//   back up at the next one, so block b taking tiles b, b + grid, ... would be handed the
//   heaviest tile of each window over and over (an imbalance of up to a heavy tile a section),
//   and the tiles' times vary beyond their weights (the first blocks of a section miss in L2,
//   the SM clock moves under power); a block that draws its next tile when it finishes one is
//   longest-processing-time-first scheduling, off by at most about one tile at the end.
// - The prologue and epilogue of consecutive tiles overlap: the consumers hand Q back as soon
//   as a tile's last S is done (empty_q), and the producer, which runs ahead through the K/V
//   ring without draining it between tiles, loads the next tile's Q and first K blocks while
//   the consumers run the tile's last softmax, its last P V and its epilogue (O's stores); the
//   tile's coordinates travel with Q (written beside it before full_q's arrive).
// - The ping-pong runs across tiles (opened once a block, closed once when the consumers leave),
//   so one warpgroup starts the next tile's first S while the other finishes the last.
// Changes from v05: the grid (SM count instead of a block per tile), the producer's and the
// consumers' loops over tiles, Q's empty barrier; the round itself is v05's (fa3_overlap.cuh).
// Expected bottleneck: the tensor pipe with v05's per-round costs (barrier handoffs, the masked
// diagonal block, a tile's first S and last P V, which the other warpgroup's rounds now fill);
// the per-tile costs of v05 that this removes (block launch, barrier setup, Q's and the first K
// block's load latency, the epilogue with the tensor pipe idle) weighed most at short causal
// tiles (N = 4k: 16.5 key blocks a tile on average).
// Prediction (written before it ran): docs/worklogs/attention.md.
// Requirements: v05's (sm_90a; D in {64, 128, 256}; 16-byte aligned Q, K, V and O); the line's
// tiles and the counter below 2^31; the workspace of two ints (Variant::workspace_bytes).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <string>

#include "kernels/attention/fa3_kernel.cuh"
#include "kernels/attention/fa3_overlap.cuh"
#include "kernels/attention/fa3_schedule.hpp"
#include "kernels/attention/family.hpp"
#include "klab/device/tile_scheduler.cuh"
#include "klab/harness/device_info.hpp"

namespace klab::attention {

namespace {

constexpr const char* kName = "attention.v06";

/// v05's configuration: three stages where they fit beside Q, two at D = 256.
template <int kD>
using V06Config = fa3::OverlapConfig<kD>;

/// The workspace: the line's next tile past the grid's first ones, and the blocks done drawing.
struct Counters {
  int next, finished;
};
/// The query tile that tells the consumers to leave.
constexpr int kNoTile = -1;

/// The producer's word to the consumers, beside Q: the tile's (query tile, head, batch), so that
/// the consumers keep no line in their registers (at D = 256 they have none to spare).
__device__ __forceinline__ void post_tile(int* box, int m_tile, int h, int bi) {
  volatile int* v = box;
  v[0] = m_tile;
  v[1] = h;
  v[2] = bi;
}

/// The producer (one thread): per tile, once the consumers have handed Q back, the tile's index
/// and Q, then its K and V blocks through the ring, which runs on across tiles.
template <class C>
__device__ __forceinline__ void produce_line(const CUtensorMap* q_map, const CUtensorMap* k_map,
                                             const CUtensorMap* v_map, unsigned char* smem,
                                             const fa3::Barriers<C::kStages>& bars,
                                             const Geometry& g, const fa3::TileLine& line,
                                             Counters* counters) {
  fa3::KvRing<C::kStages> ring;
  uint32_t q_phase = 0;
  int tile = int(blockIdx.x);  // < line.tiles(): the grid is at most one block a tile
  for (;;) {
    device::mbarrier_wait(bars.empty_q, q_phase ^ 1u);  // the previous tile's S are done
    if (tile == kNoTile) {
      post_tile(bars.tile, kNoTile, 0, 0);
      device::mbarrier_arrive(bars.full_q);
      break;
    }
    // The next index is on its way while this tile's loads are issued (unsigned: past the end,
    // and so is whatever a workspace that was never zeroed held).
    const unsigned drawn = unsigned(atomicAdd(&counters->next, 1)) + gridDim.x;
    const fa3::TileLine::Tile c = line.at(tile);
    const fa3::TileOf t = fa3::tile_at<C::kBlockM, C::kBlockN>(g, c.m_tile, c.h, c.bi);
    post_tile(bars.tile, int(c.m_tile), c.h, c.bi);  // published by full_q's arrive
    if (t.blocks.count > 0)
      fa3::load_q<C>(q_map, smem, bars, t);
    else
      device::mbarrier_arrive(bars.full_q);  // every row empty: no Q to read
    fa3::load_tile_kv<C>(k_map, v_map, smem, bars, t, ring);
    q_phase ^= 1u;
    tile = drawn < unsigned(line.tiles()) ? int(drawn) : kNoTile;
  }
  // This block has drawn its index past the end; the last block to get here knows that every
  // block has, so none reads the counter again in this launch: it resets both for the next.
  __threadfence();
  if (atomicAdd(&counters->finished, 1) == int(gridDim.x) - 1) {
    atomicExch(&counters->next, 0);
    atomicExch(&counters->finished, 0);
  }
}

/// A consumer warpgroup: per tile, its index (with Q), then v05's rounds over it, handing Q back
/// after the tile's last S; the ping-pong opened once and closed once.
template <class C, class T, int kD>
__device__ __forceinline__ void consume_line(unsigned char* smem,
                                             const fa3::Barriers<C::kStages>& bars, int wg,
                                             T* __restrict__ o, float* __restrict__ lse,
                                             const Geometry& g) {
  if (fa3::pingpong_opens(wg)) fa3::pingpong_arrive(wg);
  fa3::ConsumerRing<C::kStages> ring;
  uint32_t q_phase = 0;
  for (;;) {
    device::mbarrier_wait(bars.full_q, q_phase);
    // Lane 0 alone reads the box and hands its words to the warp: lane 0 is the thread that
    // later hands Q back (empty_q), after which the producer rewrites the box, so every read of
    // it is ordered before that rewrite by the reader's own arrive. (With every lane reading and
    // a __syncwarp before lane 0's arrive, compute-sanitizer racecheck reported the other lanes'
    // reads and the next tile's write as a race.)
    const volatile int* box = bars.tile;
    const bool lane0 = threadIdx.x % 32 == 0;
    const int m_tile = __shfl_sync(~0u, lane0 ? box[0] : 0, 0);
    const int h = __shfl_sync(~0u, lane0 ? box[1] : 0, 0);
    const int bi = __shfl_sync(~0u, lane0 ? box[2] : 0, 0);
    if (m_tile == kNoTile) break;
    const fa3::TileOf t = fa3::tile_at<C::kBlockM, C::kBlockN>(g, m_tile, h, bi);
    fa3::consume_tile<C, T, kD, fa3::PingPong::kAcrossTiles, /*release Q*/ true>(smem, bars, t, wg,
                                                                                 ring, o, lse, g);
    q_phase ^= 1u;
  }
  if (fa3::pingpong_closes(wg)) fa3::pingpong_wait(wg);
}

template <class T, int kD>
__global__ void __launch_bounds__(V06Config<kD>::kThreads, 1)
    v06_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
               const __grid_constant__ CUtensorMap v_map, T* __restrict__ o,
               float* __restrict__ lse, Geometry g, fa3::TileLine line, Counters* counters) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // wgmma and setmaxnreg are sm_90a-only
  using C = V06Config<kD>;
  fa3::split_roles<C>(
      [&](unsigned char* smem, const fa3::Barriers<C::kStages>& bars) {
        produce_line<C>(&q_map, &k_map, &v_map, smem, bars, g, line, counters);
      },
      [&](unsigned char* smem, const fa3::Barriers<C::kStages>& bars, int wg) {
        consume_line<C, T, kD>(smem, bars, wg, o, lse, g);
      });
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave O unwritten
#endif
}

/// The line of problem s with tiles C on this device: sections in half its L2.
template <class C>
fa3::TileLine line_of(const Dims& s, int64_t elem_bytes) {
  const int64_t m_tiles = (s.nq + C::kBlockM - 1) / C::kBlockM;
  const int64_t budget = device_info().l2_bytes / 2;
  return {m_tiles, s.hq, s.b,
          fa3::section_pairs(budget, s.nkv, s.d, elem_bytes, s.group(), s.hq * s.b)};
}

PreparedLaunch prepare_v06(const Problem& p, Buffers& b) {
  const Dims s = dims_of(p);
  KLAB_CHECK(b.workspace != nullptr && b.workspace_bytes >= sizeof(Counters),
             std::string(kName) + ": needs its workspace (the tile counter)");
  Counters* counters = static_cast<Counters*>(b.workspace);
  return dispatch_tiled(
      kName, p, b, [&]<class T, int kD>(const Geometry& g, int64_t batch, const Tensors<T>& t) {
        using C = V06Config<kD>;
        const fa3::TensorMaps m = fa3::tensor_maps<C>(kName, t, s, batch);
        constexpr auto kernel = v06_kernel<T, kD>;
        device::opt_in_dynamic_smem<kernel>(C::kSmemBytes);
        const fa3::TileLine line = line_of<C>(s, int64_t(sizeof(T)));
        const unsigned grid = device::persistent_grid(line.tiles(), device_info().sm_count);
        T* out = t.o;
        float* lse = t.lse;
        return PreparedLaunch([=](Stream stream) {
          kernel<<<grid, C::kThreads, C::kSmemBytes, reinterpret_cast<cudaStream_t>(stream)>>>(
              m.q, m.k, m.v, out, lse, g, line, counters);
          KLAB_CHECK_LAUNCH();
        });
      });
}

}  // namespace

Variant gpu_v06_fa3_persistent() {
  Variant v = tiled_variant<prepare_v06>(
      "attention.v06_fa3_persistent",
      "v05 as a persistent kernel: one block per SM takes tiles off an atomic counter, heaviest "
      "(longest key range) first within L2-sized sections of heads; the next tile's Q and K load "
      "under the current tile's last P V and epilogue; ping-pong across tiles",
      90);
  v.can_implement = [](const Problem& p) {
    if (Status st = fa3::can_implement(kName, p); !st.ok()) return st;
    const Dims s = dims_of(p);
    // The line's tile indices and the counter (up to tiles + the grid) are 32-bit ints.
    if ((s.nq + 127) / 128 * s.hq * s.b > INT_MAX / 2)
      return Status::no(std::string(kName) + ": above 2^30 tiles (32-bit tile counter)");
    return Status::yes();
  };
  v.workspace_bytes = [](const Problem&) { return sizeof(Counters); };
  return v;
}

}  // namespace klab::attention
