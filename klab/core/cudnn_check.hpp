#pragma once
// KLAB_CUDNN_CHECK: the status check of every cuDNN call (the baselines of maxpool, softmax,
// attention and decode attention), beside cuda_check.hpp's CUDA and cuBLAS checks. Its own header:
// only the files that use cuDNN include cudnn.h.
#include <cudnn.h>

#include <string>

#include "klab/core/errors.hpp"

/// cuDNN status check: throws klab::Error carrying file, line, the call text and cuDNN's message.
#define KLAB_CUDNN_CHECK(call)                                                        \
  do {                                                                                \
    const cudnnStatus_t klab_st_ = (call);                                            \
    if (klab_st_ != CUDNN_STATUS_SUCCESS)                                             \
      ::klab::throw_error(__FILE__, __LINE__,                                         \
                          std::string(#call) + ": " + cudnnGetErrorString(klab_st_)); \
  } while (0)
