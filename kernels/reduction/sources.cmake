klab_family(reduction HOST register.cpp)
