# SheafMPI.cmake - which MPI a build tree uses, and how its tests start MPI
# programs. Included by the top-level CMakeLists.txt when SHEAF_MPI is on.
#
# SHEAF_MPI_FLAVOR picks the MPI of a build tree:
#   mpich    mpicc.mpich / mpiexec.mpich (Debian's names)
#   openmpi  mpicc.openmpi / mpiexec.openmpi
#   auto     (default) MPICH by its Debian names when they exist, otherwise
#            whatever find_package(MPI) finds (mpicc / mpiexec on the PATH)
# The choice is named explicitly because installing Open MPI on Debian switches
# the `mpicc` / `mpiexec` alternatives (Open MPI has the higher priority): a
# build tree must not change MPI when someone installs the other one. One MPI
# per build tree (build/ MPICH, build-openmpi/ Open MPI); an explicit
# MPI_C_COMPILER / MPIEXEC_EXECUTABLE on the command line wins over the flavor.
#
# Provides, for every test that starts MPI ranks:
#   sheaf_mpi_command(<var> <np>)  the list [SHEAF_MPIEXEC_PREFIX] MPIEXEC_EXECUTABLE
#                                  MPIEXEC_NUMPROC_FLAG <np> SHEAF_MPIEXEC_PREFLAGS
#                                  (then the program, then MPIEXEC_POSTFLAGS)
#   SHEAF_MPI_ENV                  VAR=value list the launcher needs (Open MPI's
#                                  settings below; empty for MPICH)
#   sheaf_mpi_tests_environment()  appends SHEAF_MPI_ENV to the ENVIRONMENT of
#                                  every test labelled `mpi` in the calling
#                                  directory (call it after the tests are defined)
#   SHEAF_MPIEXEC_WRAPPER          <build>/sheaf-mpiexec: the same launcher as a
#                                  script (`sheaf-mpiexec -n 4 prog args`), for the
#                                  shell scripts that start MPI programs
#   SHEAF_MPI_IMPL                 mpich, openmpi or unknown (what mpiexec says)
#   SHEAF_MPI_BUILT_FLAVOR         mpich, openmpi or unknown (what mpi.h says): the
#                                  flavour the MPI libraries are built for
set(SHEAF_MPI_FLAVOR auto CACHE STRING "MPI of this build tree: auto, mpich or openmpi")
set_property(CACHE SHEAF_MPI_FLAVOR PROPERTY STRINGS auto mpich openmpi)
if(NOT SHEAF_MPI_FLAVOR MATCHES "^(auto|mpich|openmpi)$")
  message(FATAL_ERROR "SHEAF_MPI_FLAVOR must be auto, mpich or openmpi (is '${SHEAF_MPI_FLAVOR}')")
endif()
if(DEFINED _SHEAF_MPI_FLAVOR_CONFIGURED AND NOT _SHEAF_MPI_FLAVOR_CONFIGURED STREQUAL SHEAF_MPI_FLAVOR)
  message(FATAL_ERROR "this build tree was configured with SHEAF_MPI_FLAVOR=${_SHEAF_MPI_FLAVOR_CONFIGURED}; "
                      "use a fresh build directory for another MPI")
endif()
set(_SHEAF_MPI_FLAVOR_CONFIGURED ${SHEAF_MPI_FLAVOR} CACHE INTERNAL "")

set(_flavor ${SHEAF_MPI_FLAVOR})
if(_flavor STREQUAL "auto")
  find_program(SHEAF_MPICC_MPICH NAMES mpicc.mpich)
  find_program(SHEAF_MPIEXEC_MPICH NAMES mpiexec.mpich)
  if(SHEAF_MPICC_MPICH AND SHEAF_MPIEXEC_MPICH)
    set(_flavor mpich)
  endif()
endif()
if(NOT _flavor STREQUAL "auto")
  find_program(SHEAF_MPICC_${_flavor} NAMES mpicc.${_flavor})
  find_program(SHEAF_MPIEXEC_${_flavor} NAMES mpiexec.${_flavor})
  if(NOT SHEAF_MPICC_${_flavor} OR NOT SHEAF_MPIEXEC_${_flavor})
    message(FATAL_ERROR "SHEAF_MPI_FLAVOR=${_flavor}: mpicc.${_flavor} or mpiexec.${_flavor} not found "
                        "(Debian: apt-get install lib${_flavor}-dev; scripts/install-deps.sh installs both)")
  endif()
  # cache entries, so that a -D on the command line (already in the cache) wins
  set(MPI_C_COMPILER ${SHEAF_MPICC_${_flavor}} CACHE FILEPATH "MPI C compiler wrapper")
  set(MPIEXEC_EXECUTABLE ${SHEAF_MPIEXEC_${_flavor}} CACHE FILEPATH "MPI launcher")
endif()

find_package(MPI COMPONENTS C)
if(NOT MPI_C_FOUND)
  return()
endif()

set(SHEAF_MPI_IMPL unknown)
if(MPIEXEC_EXECUTABLE)
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _v ERROR_VARIABLE _v TIMEOUT 20)
  if(_v MATCHES "Open MPI|OpenRTE")
    set(SHEAF_MPI_IMPL openmpi)
  elseif(_v MATCHES "HYDRA|MPICH")
    set(SHEAF_MPI_IMPL mpich)
  endif()
endif()
# The flavour sheaf's MPI libraries are built for (issue 27), from the MPI
# headers actually used (an explicit MPI_C_COMPILER wins over SHEAF_MPI_FLAVOR):
# recorded in the installed CMake package (sheaf_MPI_FLAVOR; a consumer of the
# other MPI is refused) and in sheaf_mpi.pc / sheaf_mpi-<flavour>.pc.
include(${CMAKE_CURRENT_LIST_DIR}/sheafMPIFlavor.cmake)
sheaf_mpi_flavor_of_target(SHEAF_MPI_BUILT_FLAVOR MPI::MPI_C)
if(SHEAF_MPI_BUILT_FLAVOR STREQUAL "unknown")
  set(SHEAF_MPI_BUILT_FLAVOR ${SHEAF_MPI_IMPL})
endif()
if(NOT SHEAF_MPI_FLAVOR STREQUAL "auto" AND NOT SHEAF_MPI_BUILT_FLAVOR STREQUAL SHEAF_MPI_FLAVOR)
  message(WARNING "SHEAF_MPI_FLAVOR=${SHEAF_MPI_FLAVOR} but the MPI headers of ${MPI_C_COMPILER} are "
                  "${SHEAF_MPI_BUILT_FLAVOR}'s: the libraries are built (and installed) for ${SHEAF_MPI_BUILT_FLAVOR}")
endif()
message(STATUS "MPI of this build tree (SHEAF_MPI_FLAVOR=${SHEAF_MPI_FLAVOR}): ${SHEAF_MPI_IMPL}, "
               "${MPI_C_COMPILER}, ${MPIEXEC_EXECUTABLE}; libraries built for: ${SHEAF_MPI_BUILT_FLAVOR}")

set(SHEAF_MPIEXEC_PREFLAGS ${MPIEXEC_PREFLAGS})
set(SHEAF_MPI_ENV "")
# Open MPI's mpiexec listens on every address (oob_tcp_if_include only chooses
# the addresses it advertises), and so does MPICH's hydra (its control port):
# with SHEAF_MPI_LOOPBACK_ONLY the tests' runs go into a network namespace with
# loopback only (cmake/loopback-only.sh; root or user namespaces needed).
# auto: on for Open MPI.
set(SHEAF_MPI_LOOPBACK_ONLY auto CACHE STRING
    "Start the tests' MPI runs in a loopback-only network namespace: auto (Open MPI only), ON, OFF")
set_property(CACHE SHEAF_MPI_LOOPBACK_ONLY PROPERTY STRINGS auto ON OFF)
set(SHEAF_MPIEXEC_PREFIX "")
if(SHEAF_MPI_LOOPBACK_ONLY STREQUAL "auto")
  if(SHEAF_MPI_IMPL STREQUAL "openmpi")
    set(SHEAF_MPIEXEC_PREFIX ${PROJECT_SOURCE_DIR}/cmake/loopback-only.sh)
  endif()
elseif(SHEAF_MPI_LOOPBACK_ONLY)
  set(SHEAF_MPIEXEC_PREFIX ${PROJECT_SOURCE_DIR}/cmake/loopback-only.sh)
endif()
if(SHEAF_MPI_IMPL STREQUAL "openmpi")
  # Open MPI refuses more ranks than cores (the tests run up to 16 ranks on
  # 2 cores) and refuses root (CI runs as root) unless told; the root
  # permission is given by environment so it holds whoever configured the tree.
  list(APPEND SHEAF_MPIEXEC_PREFLAGS --oversubscribe)
  list(APPEND SHEAF_MPI_ENV OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    # no single-copy (CMA) in shared memory: it needs ptrace permission,
    # which containers often deny
    OMPI_MCA_btl_vader_single_copy_mechanism=none
    # every rank is on this machine: shared memory (vader) and self only; the
    # runtime's own TCP (oob) advertises loopback only (where it listens is
    # what SHEAF_MPI_LOOPBACK_ONLY takes care of)
    OMPI_MCA_btl=self,vader OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
    # ranks wait in sched_yield rather than spin flat out when oversubscribed
    OMPI_MCA_mpi_yield_when_idle=1)
endif()

function(sheaf_mpi_command var np)
  set(${var} ${SHEAF_MPIEXEC_PREFIX} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${SHEAF_MPIEXEC_PREFLAGS}
      PARENT_SCOPE)
endfunction()

function(sheaf_mpi_tests_environment)
  if(NOT SHEAF_MPI_ENV)
    return()
  endif()
  get_property(_tests DIRECTORY PROPERTY TESTS)
  foreach(_t IN LISTS _tests)
    get_test_property(${_t} LABELS _labels)
    if("mpi" IN_LIST _labels)
      set_property(TEST ${_t} APPEND PROPERTY ENVIRONMENT ${SHEAF_MPI_ENV})
    endif()
  endforeach()
endfunction()

# <build>/sheaf-mpiexec: this tree's launcher for scripts (and by hand)
set(SHEAF_MPIEXEC_WRAPPER ${PROJECT_BINARY_DIR}/sheaf-mpiexec)
set(_w "#!/bin/sh\n# Generated by CMake (cmake/SheafMPI.cmake): the MPI launcher of this build tree\n")
string(APPEND _w "# (${SHEAF_MPI_IMPL}). Usage: sheaf-mpiexec -n N PROGRAM [ARGS...]\n")
foreach(_e IN LISTS SHEAF_MPI_ENV)
  string(APPEND _w "export ${_e}\n")
endforeach()
string(APPEND _w "exec")
foreach(_f IN LISTS SHEAF_MPIEXEC_PREFIX)
  string(APPEND _w " '${_f}'")
endforeach()
string(APPEND _w " '${MPIEXEC_EXECUTABLE}'")
foreach(_f IN LISTS SHEAF_MPIEXEC_PREFLAGS)
  string(APPEND _w " '${_f}'")
endforeach()
string(APPEND _w " \"$@\"\n")
file(CONFIGURE OUTPUT ${SHEAF_MPIEXEC_WRAPPER} CONTENT "${_w}" @ONLY)
file(CHMOD ${SHEAF_MPIEXEC_WRAPPER} PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
     GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
