# SheafPart.cmake - how every library of sheaf is built (included by
# src/CMakeLists.txt before the parts).

# Hidden visibility: only the declarations marked SHEAF_API (include/sheaf_export.h,
# which SHEAF_BUILDING_LIBRARY turns on) are exported; the test `exports` checks.
# Every library of sheaf is built this way (sheaf_hide_internals).
function(sheaf_hide_internals obj)
  set_target_properties(${obj} PROPERTIES C_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  target_compile_definitions(${obj} PRIVATE SHEAF_BUILDING_LIBRARY)
endfunction()
# A shared library must resolve every symbol it uses at its own link (a call to
# a hidden internal of another library fails there, not in a program).
function(sheaf_no_undefined lib)
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT SHEAF_SANITIZE)
    target_link_options(${lib} PRIVATE LINKER:--no-undefined)
  endif()
endfunction()

# sheaf_add_part_library(<name>
#     SOURCES <src>...             compiled once (position independent, hidden
#                                  visibility) into <name>_obj, shared by both libraries
#     [OBJ_INCLUDES <dir>...]      more include directories of those objects
#     [OBJ_LINK <lib>...]          what the objects are compiled against (PRIVATE)
#     [SHARED_LINK <lib>...]       PUBLIC links of the shared library
#     [STATIC_LINK <lib>...]       PUBLIC links of the static library
#     [HEADERS <header>...]        public headers installed with it
#     [ORIGIN_RPATH])              INSTALL_RPATH $ORIGIN (the libsheaf*.so it
#                                  needs are found next to it wherever installed)
# makes the shared library <name> (lib<name>.so.0, VERSION the project's) and
# the static one <name>_static (also lib<name>.a), both with include/ in their
# interface, the aliases sheaf::<name> and sheaf::<name>_static, and installs
# both (export set sheafTargets) and HEADERS. Every add_library(<name> SHARED)
# of src/ is this call: tests/install/check_exports.py finds the libraries
# (and so which include/ headers are whose) by `sheaf_add_part_library(sheaf_<part>`.
function(sheaf_add_part_library name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "ORIGIN_RPATH" ""
    "SOURCES;OBJ_INCLUDES;OBJ_LINK;SHARED_LINK;STATIC_LINK;HEADERS")
  if(arg_UNPARSED_ARGUMENTS OR NOT arg_SOURCES)
    message(FATAL_ERROR "sheaf_add_part_library(${name}): bad arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  add_library(${name}_obj OBJECT ${arg_SOURCES})
  set_target_properties(${name}_obj PROPERTIES POSITION_INDEPENDENT_CODE ON)
  sheaf_hide_internals(${name}_obj)
  target_include_directories(${name}_obj PRIVATE ${PROJECT_SOURCE_DIR}/include ${arg_OBJ_INCLUDES})
  target_link_libraries(${name}_obj PRIVATE ${arg_OBJ_LINK})

  add_library(${name} SHARED $<TARGET_OBJECTS:${name}_obj>)
  sheaf_no_undefined(${name})
  add_library(${name}_static STATIC $<TARGET_OBJECTS:${name}_obj>)
  foreach(t ${name} ${name}_static)
    target_include_directories(${t} PUBLIC
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  endforeach()
  target_link_libraries(${name} PUBLIC ${arg_SHARED_LINK})
  target_link_libraries(${name}_static PUBLIC ${arg_STATIC_LINK})
  set_target_properties(${name} PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION 0)
  if(arg_ORIGIN_RPATH)
    set_target_properties(${name} PROPERTIES INSTALL_RPATH "$ORIGIN")
  endif()
  set_target_properties(${name}_static PROPERTIES OUTPUT_NAME ${name})
  add_library(sheaf::${name} ALIAS ${name})
  add_library(sheaf::${name}_static ALIAS ${name}_static)

  install(TARGETS ${name} ${name}_static EXPORT sheafTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  if(arg_HEADERS)
    install(FILES ${arg_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
endfunction()
