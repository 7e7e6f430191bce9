#pragma once
// v25's units of work (tma_pages_kernel's kSteal): which 64-key unit of its sequence each stage
// of a split takes. Host and device: the kernel's producer walks it, and the CPU tests walk it for
// every split in random orders to check that each unit is taken exactly once.
#include <climits>
#include <cstdint>

#include "klab/device/host_device.hpp"

namespace klab::decode_attention {

/// A row group's `splits` splits over the `units` units of its sequence: split r's stage i takes
/// unit r + i * splits while i < fixed (the ring's first fill, so no counter add is on the first
/// copies' path), then the unit fixed * splits + t for the ticket t its add to the cluster's
/// counter returned. One split alone takes every unit in order.
struct StealUnits {
  int splits = 1, fixed = INT_MAX, units = 0;
  KLAB_HOST_DEVICE constexpr StealUnits(int splits_of_seq, int stages, int64_t len, int block)
      : splits(splits_of_seq),
        fixed(splits_of_seq > 1 ? stages : INT_MAX),
        units(static_cast<int>((len + block - 1) / block)) {}
  KLAB_HOST_DEVICE constexpr bool valid(int u) const { return u < units; }
  /// Whether stage i's unit comes from the counter.
  KLAB_HOST_DEVICE constexpr bool counted(int i) const { return i >= fixed; }
  KLAB_HOST_DEVICE constexpr int fixed_unit(int rank, int i) const { return rank + i * splits; }
  KLAB_HOST_DEVICE constexpr int stolen_unit(uint32_t ticket) const {
    return static_cast<int>(int64_t(fixed) * splits + ticket);
  }
};

/// One split's walk over its units, a stage at a time: stage i (at) takes unit `u`; the unit of
/// stage i + 1 (`u_next`) is known one stage ahead, so its table entries load while stage i is
/// issued, and the ticket of stage i + 2 is asked for (wants_ticket) while stage i is issued and
/// read at advance. The walk ends at the first unit past the sequence (no ticket after it).
struct StealWalk {
  StealUnits su;
  int rank, at = 0, u, u_next;
  KLAB_HOST_DEVICE constexpr StealWalk(const StealUnits& units, int r)
      : su(units), rank(r), u(units.fixed_unit(r, 0)), u_next(units.fixed_unit(r, 1)) {}
  KLAB_HOST_DEVICE constexpr bool done() const { return !su.valid(u); }
  /// Whether stage at + 2's unit needs a ticket now (it is counted, and stage at + 1 is a unit).
  KLAB_HOST_DEVICE constexpr bool wants_ticket() const {
    return su.counted(at + 2) && su.valid(u_next);
  }
  /// To the next stage; `ticket`: the counter's answer where wants_ticket() was true.
  KLAB_HOST_DEVICE constexpr void advance(uint32_t ticket) {
    const bool counted = su.counted(at + 2);
    u = u_next;
    if (su.valid(u_next)) u_next = counted ? su.stolen_unit(ticket) : su.fixed_unit(rank, at + 2);
    ++at;
  }
};

}  // namespace klab::decode_attention
