# sheaf_find_mpi_fortran(): MPI::MPI_Fortran of this build tree's MPI (for
# the Fortran tests and examples; the modules themselves need no MPI Fortran:
# communicators cross to C as integer handles). SHEAF_MPI_FLAVOR picked
# mpicc.<flavor>; the Fortran wrapper of the same MPI is mpif90.<flavor>.
# Imported targets are local to a directory: call it where they are used.
macro(sheaf_find_mpi_fortran)
  if(NOT MPI_Fortran_COMPILER AND MPI_C_COMPILER MATCHES "mpicc\\.(mpich|openmpi)$")
    find_program(SHEAF_MPIF90_${CMAKE_MATCH_1} NAMES mpif90.${CMAKE_MATCH_1} mpifort.${CMAKE_MATCH_1})
    if(SHEAF_MPIF90_${CMAKE_MATCH_1})
      set(MPI_Fortran_COMPILER ${SHEAF_MPIF90_${CMAKE_MATCH_1}} CACHE FILEPATH "MPI Fortran compiler wrapper")
    endif()
  endif()
  find_package(MPI COMPONENTS Fortran)
endmacro()
