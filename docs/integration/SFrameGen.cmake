# SFrameGen.cmake: give the executables and shared libraries of a CMake project
# SFrame with sframe-gen, as a post-build step of each target
# (docs/integration.md#cmake).
#
#   list(APPEND CMAKE_MODULE_PATH /path/to/sframe-gen/share/cmake)  # or copy this file
#   include(SFrameGen)
#   sframe_gen_target(mytool)          # one target
#   sframe_gen_all_targets()           # every executable and shared/module library
#                                      # linked from here on (call it after project())
#
# Variables:
#   SFRAME_GEN_EXECUTABLE  the sframe-gen program (found on PATH by default)
#   SFRAME_GEN_FLAGS       extra flags (e.g. --sframe-version=2)
# When cross-compiling, --arch follows CMAKE_SYSTEM_PROCESSOR (aarch64/arm64,
# s390x, x86_64/AMD64), so a file built for another target is an error rather
# than a surprise.
include_guard(GLOBAL)

find_program(SFRAME_GEN_EXECUTABLE NAMES sframe-gen REQUIRED)
set(SFRAME_GEN_FLAGS "" CACHE STRING "Extra flags for sframe-gen")

function(_sframe_gen_arch_flag out)
  set(flag "")
  if(CMAKE_CROSSCOMPILING)
    string(TOLOWER "${CMAKE_SYSTEM_PROCESSOR}" p)
    if(p MATCHES "^(aarch64|arm64)$")
      set(flag "--arch=aarch64")
    elseif(p MATCHES "^(aarch64_be|arm64_be)$")
      set(flag "--arch=aarch64_be")
    elseif(p STREQUAL "s390x")
      set(flag "--arch=s390x")
    elseif(p MATCHES "^(x86_64|amd64)$")
      set(flag "--arch=x86_64")
    endif()
  endif()
  set(${out} "${flag}" PARENT_SCOPE)
endfunction()

# sframe_gen_target(TARGET...): run sframe-gen on each target's file after it is linked.
function(sframe_gen_target)
  _sframe_gen_arch_flag(arch)
  separate_arguments(extra UNIX_COMMAND "${SFRAME_GEN_FLAGS}")
  foreach(t IN LISTS ARGN)
    get_target_property(type ${t} TYPE)
    if(NOT type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY)$")
      message(FATAL_ERROR "sframe_gen_target: ${t} is a ${type}, not an executable or shared library")
    endif()
    add_custom_command(TARGET ${t} POST_BUILD
      COMMAND "${SFRAME_GEN_EXECUTABLE}" -q ${arch} ${extra} -- "$<TARGET_FILE:${t}>"
      COMMENT "sframe-gen ${t}"  # (COMMENT takes generator expressions only since CMake 3.26)
      VERBATIM)
  endforeach()
endfunction()

# sframe_gen_all_targets(): every executable and shared or module library linked
# from here on, in this directory and the ones below it, gets sframe-gen as the
# last command of its link rule (the languages enabled so far: call it after
# project()). Being part of the link, the step reruns exactly when the target
# is relinked. A link rule is a list of commands, each run on its own (as CMake's
# own archive rules, "ar ...;ranlib ..."): the Makefile generators run them one
# after the other through `cmake -E cmake_link_script`, without a shell, and
# Ninja joins them with &&; so the step is one more element of the list, never
# "&& sframe-gen" inside a command.
function(sframe_gen_all_targets)
  _sframe_gen_arch_flag(arch)
  set(step "\"${SFRAME_GEN_EXECUTABLE}\" -q ${arch} ${SFRAME_GEN_FLAGS} -- <TARGET>")
  get_property(langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  foreach(lang IN LISTS langs)
    foreach(rule LINK_EXECUTABLE CREATE_SHARED_LIBRARY CREATE_SHARED_MODULE)
      set(cmds "${CMAKE_${lang}_${rule}}")
      if(DEFINED CMAKE_${lang}_${rule} AND NOT cmds MATCHES "sframe-gen")
        list(APPEND cmds "${step}")
        set(CMAKE_${lang}_${rule} "${cmds}" PARENT_SCOPE)
      endif()
    endforeach()
  endforeach()
endfunction()
