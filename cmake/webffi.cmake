# CMake functions for C code written against webffi's include/: each runs
# `webffi build` (bin/webffi.mjs, which needs Node and Emscripten's emcc).
#
#   include(path/to/webffi/cmake/webffi.cmake)
#   # a module to load into a running runtime (loadModule, ffi.ModuleLoadFromFile)
#   webffi_add_module(my_kernels SOURCES kernels.c [NAME my_kernels] [OUTPUT file.wasm]
#                     [OPTIONS -O3 -DFOO ...])
#   # the runtime with the sources linked in, served by ffi.SystemLib()
#   # (OPTIONS --threads: the threaded runtime, for load({ threads }))
#   webffi_add_system_lib_program(my_app SOURCES kernels.c [OUTPUT file.wasm] [OPTIONS ...])
#   # a command program (a source defines main), run by `npx webffi run prog.wasm ARGS`
#   webffi_add_command_program(my_tool SOURCES main.c [OUTPUT file.wasm] [OPTIONS ...])
#
# Each defines a target (built by `all`) producing OUTPUT, by default
# ${CMAKE_CURRENT_BINARY_DIR}/<target>.wasm.
# OPTIONS are `webffi build` options: sources are compiled with wasm SIMD
# (-msimd128) unless they include --no-simd (or -mno-simd128).
set(WEBFFI_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." CACHE INTERNAL "")
find_program(WEBFFI_NODE node REQUIRED)

function(_webffi_build target mode)
  cmake_parse_arguments(ARG "" "NAME;OUTPUT" "SOURCES;OPTIONS" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "${target}: SOURCES is required")
  endif()
  if(NOT ARG_OUTPUT)
    set(ARG_OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/${target}.wasm")
  endif()
  set(args build ${mode} -o "${ARG_OUTPUT}" ${ARG_OPTIONS})
  if(ARG_NAME)
    list(APPEND args --name "${ARG_NAME}")
  endif()
  set(sources)
  foreach(source ${ARG_SOURCES})
    get_filename_component(source "${source}" ABSOLUTE)
    list(APPEND sources "${source}")
  endforeach()
  file(GLOB_RECURSE deps CONFIGURE_DEPENDS "${WEBFFI_ROOT}/include/*.h")
  get_filename_component(webffi_root "${WEBFFI_ROOT}" REALPATH)
  get_filename_component(source_root "${CMAKE_SOURCE_DIR}" REALPATH)
  if(mode STREQUAL "--module" AND TARGET webffi AND webffi_root STREQUAL source_root)
    # inside webffi's own build: check the module's imports against the
    # runtime this build makes (not a packaged one that may be older)
    # (the threaded runtime for --threads)
    set(core webffi)
    if("--threads" IN_LIST ARG_OPTIONS)
      set(core webffi_mt)
    endif()
    list(APPEND args --runtime "$<TARGET_FILE_DIR:${core}>/$<TARGET_FILE_BASE_NAME:${core}>.wasm")
    list(APPEND deps ${core} "${WEBFFI_ROOT}/js/dylink.js")
  endif()
  if(NOT mode STREQUAL "--module" AND TARGET webffi_runtime AND webffi_root STREQUAL source_root)
    # inside webffi's own build: link the runtime archive this build makes
    # (the threaded one for --threads)
    set(archive webffi_runtime)
    if("--threads" IN_LIST ARG_OPTIONS)
      set(archive webffi_runtime_mt)
    endif()
    list(APPEND args --runtime-lib "$<TARGET_FILE:${archive}>")
    list(APPEND deps ${archive})
  endif()
  if(NOT mode STREQUAL "--module")
    # the runtime is linked in too (prebuilt, or compiled from these sources)
    file(GLOB runtime_deps CONFIGURE_DEPENDS "${WEBFFI_ROOT}/src/*.[ch]" "${WEBFFI_ROOT}/src/wasm/*")
    list(APPEND deps ${runtime_deps} "${WEBFFI_ROOT}/cmake/main_exports.txt")
  endif()
  add_custom_command(
    OUTPUT "${ARG_OUTPUT}"
    COMMAND "${WEBFFI_NODE}" "${WEBFFI_ROOT}/bin/webffi.mjs" ${args} ${sources}
    DEPENDS ${sources} ${deps} "${WEBFFI_ROOT}/bin/webffi.mjs" "${WEBFFI_ROOT}/bin/debug_build.mjs"
      "${WEBFFI_ROOT}/bin/line_table.mjs"
    COMMENT "webffi build ${mode} ${target}"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS "${ARG_OUTPUT}")
endfunction()

function(webffi_add_module target)
  _webffi_build(${target} --module ${ARGN})
endfunction()

function(webffi_add_system_lib_program target)
  _webffi_build(${target} "" ${ARGN})
endfunction()

# A command program (a source defines main), run with `webffi run`.
function(webffi_add_command_program target)
  _webffi_build(${target} --command ${ARGN})
endfunction()
