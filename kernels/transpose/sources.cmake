klab_family(transpose HOST register.cpp)
