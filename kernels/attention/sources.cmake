# The attention forward family. The GPU rungs are compiled (so CI checks them); each joins
# register.cpp's ladder once it passes the GPU tests on a device.
klab_family(attention
  HOST family.cpp cpu.cpp register.cpp
  CUDA v01_materialised.cu v02_tiled_online_softmax.cu v03_fa2_mma.cu)
