#pragma once
// FlashAttention 3 as a persistent kernel (attention v06, and v15 with v07's softmax): one block
// per SM walks a line of tiles taken off an atomic counter, heaviest first within L2-sized
// sections of heads; the next tile's Q and first K blocks load under the current tile's last
// P V and epilogue; the ping-pong runs across tiles. The design and its reasons: v06's file and
// fa3_schedule.hpp (the line, modelled on the CPU).
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

namespace klab::attention::fa3 {

/// v05's configuration: three stages where they fit beside Q, two at D = 256.
template <int kD>
using PersistentConfig = OverlapConfig<kD>;

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
/// and Q, then its K and V blocks through the ring, which runs on across tiles. kEarlyKv (v17,
/// whose consumers hand Q back only after their epilogue): the next tile's first kStages steps
/// of K and V go into the ring before the wait for Q, into slots the current tile's last blocks
/// free without the next Q, so that they load under the current tile's last P V and epilogue.
/// kQHalves (v18, with kEarlyKv): Q by halves, each with its own tile word and barriers (q_map:
/// 64-row boxes), each loaded once its warpgroup's store has read the rows, so the warpgroup
/// ahead starts its next tile without waiting for the other's epilogue.
template <class C, bool kEarlyKv = false, bool kQHalves = false>
__device__ __forceinline__ void produce_line(const CUtensorMap* q_map, const CUtensorMap* k_map,
                                             const CUtensorMap* v_map, unsigned char* smem,
                                             const Barriers<C::kStages>& bars, const Geometry& g,
                                             const TileLine& line, Counters* counters) {
  static_assert(!kQHalves || kEarlyKv);
  KvRing<C::kStages> ring;
  uint32_t q_phase = 0;
  int tile = int(blockIdx.x);  // < line.tiles(): the grid is at most one block a tile
  int early = 0;               // kEarlyKv: the steps of `tile` already in the ring
  // Waits until the consumers of Q (or of Q's half h) have handed its rows back: the previous
  // tile's S are done, or with kQHalves the half's store has read them.
  auto wait_q = [&](int h) {
    device::mbarrier_wait(kQHalves ? bars.empty_q_half(h) : bars.empty_q, q_phase ^ 1u);
  };
  // Q (or its half h) of tile t and its tile word, published by the full barrier's arrive.
  auto post_q = [&](int h, int m_tile, int head, int bi, const TileOf* t) {
    post_tile(kQHalves ? bars.half_tile(h) : bars.tile, m_tile, head, bi);
    uint64_t* full = kQHalves ? bars.full_q_half(h) : bars.full_q;
    if (t == nullptr || t->blocks.count == 0)
      device::mbarrier_arrive(full);  // the end, or every row empty: no Q to read
    else if constexpr (kQHalves)
      load_q_half<C>(q_map, smem, bars, *t, h);
    else
      load_q<C>(q_map, smem, bars, *t);
  };
  for (;;) {
    wait_q(0);
    if (tile == kNoTile) {
      post_q(0, kNoTile, 0, 0, nullptr);
      if constexpr (kQHalves) {
        wait_q(1);
        post_q(1, kNoTile, 0, 0, nullptr);
      }
      break;
    }
    // The next index is on its way while this tile's loads are issued (unsigned: past the end,
    // and so is whatever a workspace that was never zeroed held).
    const unsigned drawn = unsigned(atomicAdd(&counters->next, 1)) + gridDim.x;
    const TileLine::Tile c = line.at(tile);
    const TileOf t = tile_at<C::kBlockM, C::kBlockN>(g, c.m_tile, c.h, c.bi);
    post_q(0, int(c.m_tile), c.h, c.bi, &t);
    if constexpr (kQHalves) {  // the second warpgroup's rows, once its store has read them
      wait_q(1);
      post_q(1, int(c.m_tile), c.h, c.bi, &t);
    }
    if constexpr (kEarlyKv)
      load_tile_kv_steps<C>(k_map, v_map, smem, bars, t, ring, early,
                            kv_steps(int(t.blocks.count), C::kKvLag));
    else
      load_tile_kv<C>(k_map, v_map, smem, bars, t, ring);
    q_phase ^= 1u;
    tile = drawn < unsigned(line.tiles()) ? int(drawn) : kNoTile;
    if constexpr (kEarlyKv) {
      early = 0;
      if (tile != kNoTile) {
        const TileLine::Tile cn = line.at(tile);
        const TileOf tn = tile_at<C::kBlockM, C::kBlockN>(g, cn.m_tile, cn.h, cn.bi);
        // v18: the next Q into L2 now, the ring's depth in key blocks before each half's rows
        // come back (the early loads below wait for the current tile's last slots).
        if constexpr (kQHalves)
          if (tn.blocks.count > 0) prefetch_q_halves<C>(q_map, tn);
        early = min(C::kStages, kv_steps(int(tn.blocks.count), C::kKvLag));
        load_tile_kv_steps<C>(k_map, v_map, smem, bars, tn, ring, 0, early);
      }
    }
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
template <class C, class T, int kD, class Opt, bool kTmaStoreO = false, bool kQHalves = false>
__device__ __forceinline__ void consume_line(unsigned char* smem, const Barriers<C::kStages>& bars,
                                             int wg, T* __restrict__ o, float* __restrict__ lse,
                                             const Geometry& g,
                                             const CUtensorMap* o_map = nullptr) {
  if (pingpong_opens(wg)) pingpong_arrive(wg);
  ConsumerRing<C::kStages> ring;
  uint32_t q_phase = 0;
  for (;;) {
    device::mbarrier_wait(kQHalves ? bars.full_q_half(wg) : bars.full_q, q_phase);
    // Lane 0 alone reads the box and hands its words to the warp: lane 0 is the thread that
    // later hands Q back (empty_q), after which the producer rewrites the box, so every read of
    // it is ordered before that rewrite by the reader's own arrive. (With every lane reading and
    // a __syncwarp before lane 0's arrive, compute-sanitizer racecheck reported the other lanes'
    // reads and the next tile's write as a race.)
    const volatile int* box = kQHalves ? bars.half_tile(wg) : bars.tile;  // v18: its half's
    const bool lane0 = threadIdx.x % 32 == 0;
    const int m_tile = __shfl_sync(~0u, lane0 ? box[0] : 0, 0);
    const int h = __shfl_sync(~0u, lane0 ? box[1] : 0, 0);
    const int bi = __shfl_sync(~0u, lane0 ? box[2] : 0, 0);
    if (m_tile == kNoTile) break;
    const TileOf t = tile_at<C::kBlockM, C::kBlockN>(g, m_tile, h, bi);
    consume_tile<C, T, kD, PingPong::kAcrossTiles, /*release Q*/ true, Opt, kTmaStoreO, kQHalves>(
        smem, bars, t, wg, ring, o, lse, g, o_map);
    q_phase ^= 1u;
  }
  if (pingpong_closes(wg)) pingpong_wait(wg);
}

template <class T, int kD, class Opt>
__global__ void __launch_bounds__(PersistentConfig<kD>::kThreads, 1)
    persistent_kernel(const __grid_constant__ CUtensorMap q_map,
                      const __grid_constant__ CUtensorMap k_map,
                      const __grid_constant__ CUtensorMap v_map, T* __restrict__ o,
                      float* __restrict__ lse, Geometry g, TileLine line, Counters* counters) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // wgmma and setmaxnreg are sm_90a-only
  using C = PersistentConfig<kD>;
  split_roles<C>(
      [&](unsigned char* smem, const Barriers<C::kStages>& bars) {
        produce_line<C>(&q_map, &k_map, &v_map, smem, bars, g, line, counters);
      },
      [&](unsigned char* smem, const Barriers<C::kStages>& bars, int wg) {
        consume_line<C, T, kD, Opt>(smem, bars, wg, o, lse, g);
      });
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave O unwritten
#endif
}

/// v17's: the persistent kernel with v16's epilogue (O through the warpgroup's rows of Q and a
/// TMA store, Q handed back after it) and the next tile's first K and V steps loaded early.
/// kQHalves (v18): Q by halves (q_map: q_half_map's 64-row boxes), each back after its store.
template <class T, int kD, class Opt, bool kQHalves = false>
__global__ void __launch_bounds__(PersistentConfig<kD>::kThreads, 1)
    persistent_tma_kernel(const __grid_constant__ CUtensorMap q_map,
                          const __grid_constant__ CUtensorMap k_map,
                          const __grid_constant__ CUtensorMap v_map,
                          const __grid_constant__ CUtensorMap o_map, T* __restrict__ o,
                          float* __restrict__ lse, Geometry g, TileLine line, Counters* counters) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)  // wgmma and setmaxnreg are sm_90a-only
  using C = PersistentConfig<kD>;
  split_roles<C, kQHalves>(
      [&](unsigned char* smem, const Barriers<C::kStages>& bars) {
        produce_line<C, /*early K/V*/ true, kQHalves>(&q_map, &k_map, &v_map, smem, bars, g, line,
                                                      counters);
      },
      [&](unsigned char* smem, const Barriers<C::kStages>& bars, int wg) {
        consume_line<C, T, kD, Opt, /*TMA store of O*/ true, kQHalves>(smem, bars, wg, o, lse, g,
                                                                       &o_map);
      });
#elif defined(__CUDA_ARCH__)
  __trap();  // built for another architecture: fail loudly rather than leave O unwritten
#endif
}

/// The enqueue-only launch of the persistent kernel with softmax options Opt (Name: the rung's
/// kName, for messages) for problem p on buffers b.
template <class Name, class Opt, bool kTmaStoreO = false, bool kQHalves = false>
PreparedLaunch prepare_persistent(const Problem& p, Buffers& b) {
  static_assert(!kQHalves || kTmaStoreO);
  constexpr const char* kName = Name::kName;
  const Dims s = dims_of(p);
  KLAB_CHECK(b.workspace != nullptr && b.workspace_bytes >= sizeof(Counters),
             std::string(kName) + ": needs its workspace (the tile counter)");
  Counters* counters = static_cast<Counters*>(b.workspace);
  return dispatch_tiled(
      kName, p, b, [&]<class T, int kD>(const Geometry& g, int64_t batch, const Tensors<T>& t) {
        using C = PersistentConfig<kD>;
        const TensorMaps m = tensor_maps<C>(kName, t, s, batch);
        const TileLine line = line_of<C>(s, int64_t(sizeof(T)));
        const unsigned grid = device::persistent_grid(line.tiles(), device_info().sm_count);
        T* out = t.o;
        float* lse = t.lse;
        if constexpr (kTmaStoreO) {
          constexpr auto kernel = persistent_tma_kernel<T, kD, Opt, kQHalves>;
          device::opt_in_dynamic_smem<kernel>(C::kSmemBytes);
          const CUtensorMap om = o_store_map<C>(t, s, batch);
          const CUtensorMap qm = kQHalves ? q_half_map<C>(t, s, batch) : m.q;
          return PreparedLaunch([=](Stream stream) {
            kernel<<<grid, C::kThreads, C::kSmemBytes, reinterpret_cast<cudaStream_t>(stream)>>>(
                qm, m.k, m.v, om, out, lse, g, line, counters);
            KLAB_CHECK_LAUNCH();
          });
        }
        constexpr auto kernel = persistent_kernel<T, kD, Opt>;
        device::opt_in_dynamic_smem<kernel>(C::kSmemBytes);
        return PreparedLaunch([=](Stream stream) {
          kernel<<<grid, C::kThreads, C::kSmemBytes, reinterpret_cast<cudaStream_t>(stream)>>>(
              m.q, m.k, m.v, out, lse, g, line, counters);
          KLAB_CHECK_LAUNCH();
        });
      });
}

/// The registered persistent rung with softmax options Opt (Name: a type with the rung's kName):
/// fa3::can_implement's limits, the line's tiles within 32-bit ints, the counter's workspace.
template <class Name, class Opt, bool kTmaStoreO = false, bool kQHalves = false>
Variant persistent_variant(std::string id, std::string summary) {
  Variant v = tiled_variant<prepare_persistent<Name, Opt, kTmaStoreO, kQHalves>>(
      std::move(id), std::move(summary), 90);
  v.can_implement = [](const Problem& p) {
    const std::string name = Name::kName;
    if (Status st = can_implement(name, p); !st.ok()) return st;
    const Dims s = dims_of(p);
    // The line's tile indices and the counter (up to tiles + the grid) are 32-bit ints.
    if ((s.nq + 127) / 128 * s.hq * s.b > INT_MAX / 2)
      return Status::no(name + ": above 2^30 tiles (32-bit tile counter)");
    return Status::yes();
  };
  v.workspace_bytes = [](const Problem&) { return sizeof(Counters); };
  return v;
}

}  // namespace klab::attention::fa3
