#pragma once
// The launch attributes klab's cudaLaunchKernelEx launches take (host code): a thread-block
// cluster along x, and programmatic stream serialization (klab/device/pdl.cuh: the kernel may
// start before the previous one in the stream ends).
#include <cuda_runtime.h>

namespace klab::device {

struct LaunchAttributes {
  cudaLaunchAttribute attrs[2]{};
  unsigned count = 0;

  /// A cluster of cluster_x CTAs along x when cluster_x > 0; programmatic serialization when
  /// asked.
  LaunchAttributes(unsigned cluster_x, bool programmatic) {
    if (cluster_x > 0) {
      attrs[count].id = cudaLaunchAttributeClusterDimension;
      attrs[count].val.clusterDim.x = cluster_x;
      attrs[count].val.clusterDim.y = attrs[count].val.clusterDim.z = 1;
      ++count;
    }
    if (programmatic) {
      attrs[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attrs[count].val.programmaticStreamSerializationAllowed = 1;
      ++count;
    }
  }
  LaunchAttributes(const LaunchAttributes&) = delete;  // a config points into it
  LaunchAttributes& operator=(const LaunchAttributes&) = delete;

  /// Points `config` at these attributes (which must outlive its launch).
  void apply(cudaLaunchConfig_t& config) const {
    config.attrs = count > 0 ? const_cast<cudaLaunchAttribute*>(attrs) : nullptr;
    config.numAttrs = count;
  }
};

}  // namespace klab::device
