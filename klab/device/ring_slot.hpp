#pragma once
// Where a consumer or producer stands in a ring of kStages shared-memory stages (pipeline_sm90.cuh):
// the slot and the parity of the lap the ring is on (a stage's full/empty mbarriers complete one
// phase per lap). Host-and-device: the CPU tests check that skipping n stages at once lands where
// n single steps do.
#include <cstdint>

#include "klab/device/host_device.hpp"

namespace klab::device {

template <int kStages>
struct RingSlot {
  int index = 0;
  uint32_t phase = 0;

  KLAB_HOST_DEVICE RingSlot next() const {
    return index + 1 == kStages ? RingSlot{0, phase ^ 1u} : RingSlot{index + 1, phase};
  }
  /// n >= 0 stages further: each lap completed on the way flips the parity (a consumer that
  /// skips another's stages, e.g. the ping-pong warpgroups of hgemm v20).
  KLAB_HOST_DEVICE RingSlot advance(int n) const {
    const int to = index + n;
    return RingSlot{to % kStages, phase ^ uint32_t((to / kStages) & 1)};
  }
};

}  // namespace klab::device
