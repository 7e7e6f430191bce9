klab_family(cpu HOST register.cpp)
