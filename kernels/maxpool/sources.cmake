klab_family(maxpool HOST register.cpp)
