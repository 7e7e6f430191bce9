# The decode_attention family (paged KV cache). The GPU rungs are compiled (so CI checks them)
# but join register.cpp's ladder only once they pass the GPU tests on a device.
klab_family(decode_attention
  HOST family.cpp cpu.cpp register.cpp
  CUDA v01_block_per_head.cu v02_split_kv.cu v03_gqa_mma.cu
       v04_persistent_balanced.cu)
