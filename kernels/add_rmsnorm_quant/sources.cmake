# The add_rmsnorm_quant family (residual add + RMSNorm + FP8 quantisation, fused).
klab_family(add_rmsnorm_quant
  HOST family.cpp cpu.cpp register.cpp
  CUDA v01_fused_row.cu baseline_unfused.cu)
