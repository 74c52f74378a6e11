# sheafMPIFlavor.cmake - which MPI implementation a set of MPI headers belongs
# to. Used when sheaf is built (cmake/SheafMPI.cmake records the flavour) and
# installed with the CMake package, where sheafConfig.cmake compares the
# consumer's MPI with the one sheaf was built with.
#
#   sheaf_mpi_flavor_of(<var> <include dirs...>)
#     <var> = mpich | openmpi | unknown, from the first mpi.h found in the
#     directories: Open MPI's defines OMPI_MAJOR_VERSION, MPICH's (and its
#     derivatives': Intel MPI, MVAPICH, Cray MPICH) MPICH_VERSION.
function(sheaf_mpi_flavor_of var)
  set(_flavor unknown)
  foreach(_dir IN LISTS ARGN)
    if(EXISTS "${_dir}/mpi.h")
      file(STRINGS "${_dir}/mpi.h" _defs REGEX "^#[ \t]*define[ \t]+(OMPI_MAJOR_VERSION|MPICH_VERSION)[ \t]")
      if(_defs MATCHES "OMPI_MAJOR_VERSION")
        set(_flavor openmpi)
      elseif(_defs MATCHES "MPICH_VERSION")
        set(_flavor mpich)
      endif()
      break()
    endif()
  endforeach()
  set(${var} ${_flavor} PARENT_SCOPE)
endfunction()

# sheaf_mpi_flavor_of_target(<var> <target>): the same for an imported MPI
# target (MPI::MPI_C), from its interface include directories.
function(sheaf_mpi_flavor_of_target var tgt)
  set(_dirs "")
  if(TARGET ${tgt})
    get_target_property(_dirs ${tgt} INTERFACE_INCLUDE_DIRECTORIES)
    if(NOT _dirs)
      set(_dirs "")
    endif()
  endif()
  # FindMPI's cache variables, when the target carries no directories (an MPI
  # compiler wrapper used as CMAKE_C_COMPILER: its includes are implicit)
  list(APPEND _dirs ${MPI_C_HEADER_DIR} ${MPI_C_INCLUDE_DIRS} ${CMAKE_C_IMPLICIT_INCLUDE_DIRECTORIES})
  sheaf_mpi_flavor_of(_f ${_dirs})
  set(${var} ${_f} PARENT_SCOPE)
endfunction()
