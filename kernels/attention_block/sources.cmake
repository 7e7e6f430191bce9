# The attention_block family (a decoder layer's attention block from the other families' rungs).
klab_family(attention_block
  HOST family.cpp compose.cpp cpu.cpp register.cpp
  CUDA gpu_steps.cu graph_variant.cu baseline_unfused.cu v01_fused.cu v02_fused_graph.cu
       v03_fused_pdl_graph.cu)
