klab_family(sabotage
  HOST family.cpp register.cpp
  CUDA v00_correct.cu v01_smem_race.cu v02_misaligned_vector.cu v03_silent_nan.cu
       v04_slow_uncoalesced.cu)
