# The attention forward family. v01_materialised.cu is compiled (so CI checks it) but not yet in
# register.cpp's ladder.
klab_family(attention
  HOST family.cpp cpu.cpp register.cpp
  CUDA v01_materialised.cu)
