#pragma once
// The second cuDNN reference of decode_attention and its device helper (CUDA builds with cuDNN's
// frontend only): cuDNN's SDPA over the same K/V laid out contiguously (issue 15, item 3: "cuDNN
// on the same KV laid out contiguously"), beside baseline_cudnn_paged (family.hpp).
#include <cstdint>

#include "kernels/decode_attention/family.hpp"

namespace klab::decode_attention {

/// cuDNN's SDPA over (B, Hkv, len, D) K and V gathered from the pools once, outside the timed
/// launch (baseline_cudnn_paged.cpp).
Variant gpu_baseline_cudnn_contiguous();

/// pool (pages, Hkv, P, D) bf16 -> out (B, Hkv, len, D): sequence b's key j < seq_lens[b] from
/// page block_table[b][j / P], slot j % P; keys at and past seq_lens[b] zeroed (a masked key's
/// probability is 0, and 0 x NaN would not be). D a multiple of 8. On `stream`
/// (baseline_cudnn_paged_rows.cu).
void gather_contiguous_kv(const Dims& s, const int32_t* block_table, const int32_t* seq_lens,
                          const void* pool, void* out, Stream stream);

}  // namespace klab::decode_attention
