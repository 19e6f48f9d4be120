# Toolchain: clang-14 targeting wasm32-wasi with Debian's wasi-libc.
# Debian splits the sysroot, so a small one is assembled from links.
# CMake has no WASI platform module: build as Generic and say so.
set(CMAKE_SYSTEM_NAME Generic)
set(WEBFFI_TARGET_WASI ON)
set(CMAKE_SYSTEM_PROCESSOR wasm32)
set(CMAKE_C_COMPILER clang-14)
set(CMAKE_C_COMPILER_TARGET wasm32-wasi)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(WEBFFI_WASI_SYSROOT "${CMAKE_BINARY_DIR}/wasi-sysroot")
file(MAKE_DIRECTORY "${WEBFFI_WASI_SYSROOT}/lib")
if(NOT EXISTS "${WEBFFI_WASI_SYSROOT}/include")
  file(CREATE_LINK /usr/include/wasm32-wasi "${WEBFFI_WASI_SYSROOT}/include" SYMBOLIC)
endif()
if(NOT EXISTS "${WEBFFI_WASI_SYSROOT}/lib/wasm32-wasi")
  file(CREATE_LINK /usr/lib/wasm32-wasi "${WEBFFI_WASI_SYSROOT}/lib/wasm32-wasi" SYMBOLIC)
endif()
set(CMAKE_SYSROOT "${WEBFFI_WASI_SYSROOT}")
set(CMAKE_EXECUTABLE_SUFFIX .wasm)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
