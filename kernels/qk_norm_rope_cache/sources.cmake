# The qk_norm_rope_cache family (QK-norm + rotary embedding + paged KV cache write, fused).
klab_family(qk_norm_rope_cache
  HOST family.cpp cpu.cpp register.cpp
  CUDA v01_fused.cu v02_token_ring.cu v03_hoisted.cu v04_token_pairs.cu v05_warp_specialised.cu
    v06_bulk_stores.cu v07_head_parts.cu v08_warp_parts.cu
    baseline_unfused.cu)
