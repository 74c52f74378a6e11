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

# DACHe files through the interposition library (issue 18): every MPI-IO data
# call - nonblocking, split collective, shared and ordered pointers - goes
# through the cache. mixed_io is an unmodified MPI-IO program (hints from its
# command line): at 2 and 4 ranks the same bytes and the same values read as
# the MPI library's MPI-IO (mixed.sh; 4 ranks with the shared pointer
# on MPI RMA); nbcoherence: writes of those kinds overwriting other ranks'
# bytes, barriers only between epochs, tiny cache and pages over the
# non-coherent fixture, every read against the model, the file equals the
# model after close (auto = shared memory; library = MPI RMA); nberrors: bad
# input returns MPI error codes. Linked in front of MPI (no LD_PRELOAD).
if(TARGET sheaf_mpiio_pmpi)
  add_executable(mixed_io mixed_io.c)
  target_link_libraries(mixed_io PRIVATE MPI::MPI_C)
  add_executable(mixed_io_sheaf mixed_io.c)
  target_link_libraries(mixed_io_sheaf PRIVATE sheaf_mpiio_pmpi MPI::MPI_C)
  set(_tiny sheaf_dache_slots=3 sheaf_dache_page_size=64 sheaf_dache_max_size=1M)
  foreach(np 2 4)
    set(_extra "")
    if(np EQUAL 4)
      set(_extra sheaf_shared_fp=rma)
    endif()
    add_test(NAME mpiio.dache.mixed.np${np} COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/mixed.sh
             ${SHEAF_MPIEXEC_WRAPPER} ${np} dache $<TARGET_FILE:mixed_io> $<TARGET_FILE:mixed_io_sheaf>
             ${_dir}/mixed${np} ${_tiny} ${_extra})
    set_tests_properties(mpiio.dache.mixed.np${np} PROPERTIES RESOURCE_LOCK mpi TIMEOUT 180 LABELS "mpi;mpiio")
    if(_env)
      set_tests_properties(mpiio.dache.mixed.np${np} PROPERTIES ENVIRONMENT "${_env}")
    endif()
  endforeach()
  # pfr (issue 30): every data call of the same program served by sheaf at 1-4
  # ranks (independent ones through the realm cache or straight to the file),
  # 2 aggregators, 192-byte realms, a 4-page cache of 64-byte pages; nocache
  # at 3 ranks
  set(_pfr cb_nodes=2 sheaf_pfr_size=192 sheaf_page_size=64 sheaf_cache_size=256)
  foreach(case pfr.1 pfr.2 pfr.3 pfr.4 nocache.3)
    string(REPLACE "." ";" _c ${case})
    list(GET _c 0 _m)
    list(GET _c 1 np)
    add_test(NAME mpiio.${_m}.mixed.np${np} COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/mixed.sh ${SHEAF_MPIEXEC_WRAPPER}
             ${np} ${_m} $<TARGET_FILE:mixed_io> $<TARGET_FILE:mixed_io_sheaf> ${_dir}/${_m}mixed${np} ${_pfr})
    set_tests_properties(mpiio.${_m}.mixed.np${np} PROPERTIES RESOURCE_LOCK mpi TIMEOUT 180 LABELS "mpi;mpiio")
    if(_env)
      set_tests_properties(mpiio.${_m}.mixed.np${np} PROPERTIES ENVIRONMENT "${_env}")
    endif()
  endforeach()
  set(_nc sheaf_cache=dache ${_tiny} sheaf_backend=noncoherent sheaf_fixture_page=256)
  mpiio_test(mpiio.dache.nbcoherence 4 mixed_io_sheaf coherence ${_dir}/nbcoh.dat ${_nc})
  mpiio_test(mpiio.dache.nbcoherence.library 4 mixed_io_sheaf coherence ${_dir}/nbcohl.dat epochs=10 ${_nc}
             sheaf_dache_progress=library sheaf_shared_fp=rma)
  set_tests_properties(mpiio.dache.nbcoherence.library PROPERTIES TIMEOUT 300)
  mpiio_test(mpiio.dache.nberrors 4 mixed_io_sheaf errors ${_dir}/nberr.dat sheaf_cache=dache ${_tiny})
  # a file not taken over would run on the MPI library's MPI-IO and prove nothing
  foreach(t mpiio.dache.nbcoherence mpiio.dache.nbcoherence.library mpiio.dache.nberrors)
    set_tests_properties(${t} PROPERTIES ENVIRONMENT "${_env};SHEAF_MPIIO_VERBOSE=1"
                         FAIL_REGULAR_EXPRESSION "not taken over")
  endforeach()
endif()

# hints that differ across ranks under the interposition library (issue 30):
# MPI_File_open never hangs (hints_test.c)
if(TARGET sheaf_mpiio_pmpi)
  add_executable(hints_test_pmpi hints_test.c)
  target_link_libraries(hints_test_pmpi PRIVATE sheaf_mpiio_pmpi sheaf_mpiio MPI::MPI_C)
  foreach(np 2 3)
    mpiio_test(mpiio.hints.pmpi.np${np} ${np} hints_test_pmpi pmpi ${_dir})
    set_tests_properties(mpiio.hints.pmpi.np${np} PROPERTIES TIMEOUT 60)
  endforeach()
endif()
