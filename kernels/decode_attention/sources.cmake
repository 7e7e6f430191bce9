# The decode_attention family (paged KV cache). v01_block_per_head.cu is compiled (so CI checks
# it) but not yet in register.cpp's ladder.
klab_family(decode_attention
  HOST family.cpp cpu.cpp register.cpp
  CUDA v01_block_per_head.cu)
