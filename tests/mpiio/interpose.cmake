# The interposition library under an unmodified MPI-IO program (included
# from CMakeLists.txt). Linked-in-front always; LD_PRELOAD too outside the
# sanitizer build (ASan must come first in the preload list there).
if(TARGET sheaf_mpiio_pmpi)
  add_executable(romio_style romio_style.c)
  target_link_libraries(romio_style PRIVATE MPI::MPI_C)
  add_executable(romio_style_sheaf romio_style.c)
  # link order: the interposition library before the MPI library
  target_link_libraries(romio_style_sheaf PRIVATE sheaf_mpiio_pmpi MPI::MPI_C)
  set(_mode preload)
  if(SHEAF_SANITIZE)
    set(_mode "")
  endif()
  add_test(NAME mpiio.interpose COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/interpose.sh ${SHEAF_MPIEXEC_WRAPPER}
           $<TARGET_FILE:romio_style> $<TARGET_FILE:romio_style_sheaf> $<TARGET_FILE:sheaf_mpiio_pmpi>
           ${_dir}/interpose ${_mode})
  set_tests_properties(mpiio.interpose PROPERTIES RESOURCE_LOCK mpi TIMEOUT 180 LABELS "mpi;mpiio")
  if(_env)
    set_tests_properties(mpiio.interpose PROPERTIES ENVIRONMENT "${_env}")
  endif()
endif()
