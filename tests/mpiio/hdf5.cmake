# Parallel HDF5 on its MPI-IO driver through the interposition library
# (included from CMakeLists.txt). Needs Debian's parallel HDF5 for this
# tree's MPI: libhdf5-mpich-dev (pkg-config hdf5-mpich) or, for an Open MPI
# tree, libhdf5-openmpi-dev (hdf5-openmpi); without it the test prints why
# and is skipped. h5dump (hdf5-tools) compares contents when the files are
# not byte-identical.
if(NOT TARGET sheaf_mpiio_pmpi)
  return()
endif()
find_package(PkgConfig QUIET)
set(_h5_reason "")
if(NOT PKG_CONFIG_FOUND)
  set(_h5_reason "pkg-config not found")
elseif(NOT SHEAF_MPI_IMPL MATCHES "^(mpich|openmpi)$")
  set(_h5_reason "no Debian parallel HDF5 known for MPI '${SHEAF_MPI_IMPL}'")
else()
  pkg_check_modules(SHEAF_HDF5 QUIET IMPORTED_TARGET hdf5-${SHEAF_MPI_IMPL})
  if(NOT SHEAF_HDF5_FOUND)
    set(_h5_reason "parallel HDF5 for ${SHEAF_MPI_IMPL} not installed (pkg-config hdf5-${SHEAF_MPI_IMPL}; Debian: libhdf5-${SHEAF_MPI_IMPL}-dev)")
  endif()
endif()
if(_h5_reason)
  message(STATUS "mpiio.hdf5: skipped: ${_h5_reason}")
  add_test(NAME mpiio.hdf5 COMMAND sh -c "echo 'mpiio.hdf5 skipped: ${_h5_reason}'; exit 77")
  set_tests_properties(mpiio.hdf5 PROPERTIES SKIP_RETURN_CODE 77 LABELS "mpi;mpiio")
  return()
endif()
add_executable(hdf5_mpio hdf5_mpio.c)
target_link_libraries(hdf5_mpio PRIVATE PkgConfig::SHEAF_HDF5 MPI::MPI_C)
add_executable(hdf5_mpio_sheaf hdf5_mpio.c)
# link order: the interposition library before HDF5 and the MPI library; the
# program itself calls no MPI_File_* (HDF5 does), so the linker's --as-needed
# would drop the library: --no-as-needed keeps it
target_link_libraries(hdf5_mpio_sheaf PRIVATE "-Wl,--no-as-needed" sheaf_mpiio_pmpi PkgConfig::SHEAF_HDF5 MPI::MPI_C)
find_program(SHEAF_H5DUMP h5dump)
set(_h5_mode preload)
if(SHEAF_SANITIZE)
  set(_h5_mode linked)  # ASan must come first in LD_PRELOAD: the linked runs only
endif()
set(_h5dump "")
if(SHEAF_H5DUMP)
  set(_h5dump ${SHEAF_H5DUMP})
endif()
add_test(NAME mpiio.hdf5 COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/hdf5.sh ${SHEAF_MPIEXEC_WRAPPER}
         $<TARGET_FILE:hdf5_mpio> $<TARGET_FILE:hdf5_mpio_sheaf> $<TARGET_FILE:sheaf_mpiio_pmpi>
         ${_dir}/hdf5 ${_h5_mode} ${_h5dump})
set_tests_properties(mpiio.hdf5 PROPERTIES RESOURCE_LOCK mpi TIMEOUT 300 LABELS "mpi;mpiio"
                     FAIL_REGULAR_EXPRESSION "FAIL")
if(_env)
  set_tests_properties(mpiio.hdf5 PROPERTIES ENVIRONMENT "${_env}")
endif()
