#pragma once
// Host buffers of a problem with every input drawn or built from `seed` as a check does it (the
// run's distribution: normal), `data` pointing at the host copies.
#include "klab/core/rng.hpp"
#include "klab/harness/family.hpp"
#include "klab/harness/runner.hpp"

namespace klab::test {

inline Buffers drawn_host_buffers(const Family& f, const Problem& p, uint64_t seed) {
  Buffers b = make_host_buffers(f, p);
  for (Tensor& t : b.tensors) t.data = t.host.data();
  uint64_t k = 0;
  for (Tensor& t : b.tensors)
    if (++k, t.spec.role != Role::output && !t.spec.build)
      fill_random(t.host.data(), t.spec.dtype, t.spec.numel, Dist::normal, seed + k);
  k = 0;
  for (Tensor& t : b.tensors)
    if (++k, t.spec.build) t.spec.build(b, t, seed + k);
  return b;
}

}  // namespace klab::test
