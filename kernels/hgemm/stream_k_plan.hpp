#pragma once
// How hgemm's stream-K weight-streaming rung (v17, M <= 64) divides the work. Host-and-device
// constexpr: the CPU tests check that the pieces cover every unit once, that each slab's
// segments tile its k-tiles, and that the segments' workspace slots are distinct.
#include <cstddef>
#include <cstdint>

namespace klab::hgemm {

/// Stream-K over the weight (v17, M <= 64): the work is tiles_n slabs x k_tiles k-tiles, laid
/// slab-major in one line of units, and `ctas` resident CTAs take equal contiguous pieces of it
/// (within one k-tile), so every CTA streams the same bytes whatever N is. A piece crosses slab
/// boundaries: each (CTA, slab) segment stores its fp32 partial in its own workspace slot, and
/// the last segment of a slab to finish (a per-slab arrival counter) sums the slab's slots in CTA
/// order and stores C (deterministic); a slab inside one piece is stored directly.
struct StreamKPlan {
  int tiles_n = 1;  // N slabs
  int k_tiles = 1;  // k-tiles per slab
  int ctas = 1;     // pieces (grid size), at most units()

  constexpr int64_t units() const { return int64_t(tiles_n) * k_tiles; }
  /// CTA c's units: [begin(c), begin(c + 1)).
  constexpr int64_t begin(int c) const { return int64_t(c) * units() / ctas; }
  /// The CTA whose piece holds unit u.
  constexpr int cta_of(int64_t u) const {
    return int(((u + 1) * ctas + units() - 1) / units()) - 1;
  }
  /// Slab t's segments belong to CTAs first_cta(t) .. last_cta(t).
  constexpr int first_cta(int t) const { return cta_of(int64_t(t) * k_tiles); }
  constexpr int last_cta(int t) const { return cta_of(int64_t(t + 1) * k_tiles - 1); }
  /// CTA c's segment of slab t: k-tiles [seg_begin, seg_end) of the slab.
  constexpr int seg_begin(int c, int t) const {
    const int64_t lo = begin(c) - int64_t(t) * k_tiles;
    return lo > 0 ? int(lo) : 0;
  }
  constexpr int seg_end(int c, int t) const {
    const int64_t hi = begin(c + 1) - int64_t(t) * k_tiles;
    return hi < k_tiles ? int(hi) : k_tiles;
  }
  /// The most slabs one piece touches: its workspace slots per CTA.
  constexpr int slots_per_cta() const {
    const int64_t piece = (units() + ctas - 1) / ctas;
    return int((piece + k_tiles - 2) / k_tiles) + 1;
  }
  /// Slot of CTA c's segment of slab t (t within the piece's slabs), each m x block_n floats.
  constexpr int64_t slot(int c, int t) const {
    return int64_t(c) * slots_per_cta() + (t - int(begin(c) / k_tiles));
  }
  /// Workspace: the slots' fp32 partials, then one arrival counter (int) per slab.
  constexpr size_t partial_floats(int m, int block_n) const {
    return size_t(ctas) * size_t(slots_per_cta()) * size_t(m) * size_t(block_n);
  }
  constexpr size_t workspace_bytes(int m, int block_n) const {
    return partial_floats(m, block_n) * sizeof(float) + size_t(tiles_n) * sizeof(int);
  }
};

/// The stream-K plan of an (n, k) weight in block_n x block_k tiles for `slots` resident CTAs.
constexpr StreamKPlan plan_stream_k(int64_t n, int64_t k, int block_n, int block_k, int slots) {
  StreamKPlan p;
  p.tiles_n = int((n + block_n - 1) / block_n);
  p.k_tiles = int((k + block_k - 1) / block_k);
  p.ctas = int(p.units() < slots ? p.units() : slots);
  return p;
}

/// Whole waves, then stream-K over the tiles left (v21, prefill tiles): of `tiles` output tiles
/// (in the grouped order) the first dp_tiles, a multiple of the grid's `ctas`, are taken whole,
/// CTA c the tiles c, c + ctas, ...; the k-tiles of the rest form `line` (its slabs are those
/// tiles), in equal pieces for the first line.ctas CTAs, so that the last wave's work is spread
/// over every SM instead of leaving tiles % ctas of them busy. Each CTA runs its piece first.
/// A tile split between pieces is summed by its owner, the CTA whose piece holds its k-tile 0
/// (the last segment of that piece): every other segment of it is the first segment of its own
/// piece, stored as fp32 in its CTA's one workspace slot and counted on the tile's flag (one a
/// consumer warpgroup); the owner, having run its whole piece, waits for the count and adds the
/// slots in CTA order after its own part (the same bits every run). The waits only ever point
/// to later CTAs' first segments, which wait for nothing: no cycle, with every CTA resident.
struct StreamKTilesPlan {
  int tiles = 1;     // output tiles
  int ctas = 1;      // the grid: resident CTAs, at most tiles x k_tiles
  int dp_tiles = 0;  // tiles taken whole, a multiple of ctas
  StreamKPlan line;  // the rest: tiles_n = tiles - dp_tiles slabs of k_tiles, line.ctas pieces

  constexpr int sk_tiles() const { return tiles - dp_tiles; }
  /// The CTA that sums stream-K tile s (0 .. sk_tiles() - 1; tile dp_tiles + s).
  constexpr int owner(int s) const { return line.first_cta(s); }
  /// The segments of stream-K tile s the owner adds (those of CTAs owner + 1 .. line.last_cta).
  constexpr int contributors(int s) const { return line.last_cta(s) - line.first_cta(s); }
  /// CTA c's stream-K tiles: first_tile(c) .. last_tile(c) (none when c >= line.ctas).
  constexpr int first_tile(int c) const { return int(line.begin(c) / line.k_tiles); }
  constexpr int last_tile(int c) const { return int((line.begin(c + 1) - 1) / line.k_tiles); }

  // v22's k-aligned order. v21's pieces start where the line cuts them, anywhere in K, so at any
  // moment the CTAs read panels from all over A and B and L2 serves few of them twice. v22 runs
  // each piece's segments in reverse: its last tile's, from k-tile 0, first; then any whole
  // tiles; then its first tile's, the high k-tiles. A piece that spans tiles then starts at
  // k-tile 0 and walks K upwards with one jump (where its first segment ends short of its
  // second's start), so the CTAs stay within a jump of each other in K, as a whole wave does (a
  // piece inside one tile starts where it must). No segment waits: each
  // split tile's segments all store their fp32 partial (two workspace slots a CTA) and count
  // themselves in, and the last to count sums every slot in CTA order (v21's order: the same
  // bits) and stores C.
  /// The segments (CTAs first_cta .. last_cta of the line) of stream-K tile s.
  constexpr int segments(int s) const { return line.last_cta(s) - line.first_cta(s) + 1; }
  /// v22: the slot (of two a CTA) of CTA c's segment of stream-K tile s: 0 for its last tile's,
  /// 1 for its first tile's when that is another tile.
  constexpr int aligned_slot(int c, int s) const { return s == last_tile(c) ? 0 : 1; }
};

/// The plan of `tiles` output tiles of k_tiles k-tiles each on `slots` resident CTAs, with
/// sk_waves whole waves joining the last partial one in the stream-K line (0: only the partial
/// wave; a whole number of waves is taken whole, with no stream-K).
constexpr StreamKTilesPlan plan_stream_k_tiles(int64_t tiles, int64_t k_tiles, int slots,
                                               int sk_waves = 0) {
  StreamKTilesPlan p;
  p.tiles = int(tiles);
  const int64_t all_units = tiles * k_tiles;
  p.ctas = int(all_units < slots ? all_units : slots);
  const int64_t waves = tiles / p.ctas;
  const int64_t dp_waves = tiles % p.ctas == 0 ? waves : (waves > sk_waves ? waves - sk_waves : 0);
  p.dp_tiles = int(dp_waves * p.ctas);
  p.line.tiles_n = p.sk_tiles();
  p.line.k_tiles = int(k_tiles);
  const int64_t units = int64_t(p.sk_tiles()) * k_tiles;
  p.line.ctas = int(units < p.ctas ? units : p.ctas);
  return p;
}

}  // namespace klab::hgemm
