klab_family(sgemm HOST register.cpp)
