# Cross-compiling for Linux on 64-bit Arm with clang 19 (apt install clang-19 g++-aarch64-linux-gnu):
# the build with every ggml Arm CPU variant. The armv9.2 variants (SVE2, SME) need
# -march=armv9.2-a+sme, which Debian 12's cross GCC 12 does not know; clang targets it and links
# against the cross GCC's glibc and libstdc++ under /usr/aarch64-linux-gnu, so the libraries
# need nothing more at run time than the GCC build. Used by scripts/build-native.mjs --platform
# linux-arm64 (the baseline build keeps linux-arm64.cmake).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER clang-19)
set(CMAKE_CXX_COMPILER clang++-19)
set(CMAKE_C_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_CXX_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
