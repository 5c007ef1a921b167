# Read by CMake right after llama.cpp's project() line, when README's install commands build
# llama-cpp-python (CMAKE_ARGS: -DCMAKE_PROJECT_llama.cpp_INCLUDE=<this file>).
#
# llama-cpp-python forces llama.cpp's "common" library on (a cache variable set with FORCE),
# but its Python package loads only libllama and libggml: common is the chat parsers, the
# argument parser and the JSON tooling of llama.cpp's own programs, over a third of the build.
# A plain variable of the same name hides the cache one in this directory, and option() leaves
# it alone (policy CMP0077), so common is neither compiled nor installed.
set(LLAMA_BUILD_COMMON OFF)
