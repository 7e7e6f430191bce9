# The CPU ladder (cpu01..cpu05 rungs and the OpenBLAS baseline), added to vector_add, reduce_sum
# and sgemm. simd.cpp is compiled once per instruction set by Highway (dynamic dispatch), so it
# needs libhwy (its CPU detection); OpenBLAS is dlopen'ed at run time, never linked.
klab_family(cpu
  HOST register.cpp threads.cpp simd.cpp vector_add.cpp reduce_sum.cpp sgemm.cpp baseline_openblas.cpp)
target_link_libraries(klab_kernels PUBLIC hwy::hwy)
