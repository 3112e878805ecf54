# tests/gpu/bundle.cmake -- the libraries of the hardware check's relocatable
# bundle (tests/gpu/pack assembles it; included by tests/CMakeLists.txt).
#
# libdlbridge, the module dlbridge.core and the check's Lua module
# cuda_stand_in (the foreign producer and consumer), linked once more from
# the objects the build already has, into BUILD/gpu-stage/lib, with an
# $ORIGIN RPATH: wherever the bundle's lib/ is carried, each finds the copies
# of the libraries it links that lie beside it (pack copies libsleef,
# libcjson, libhwy, libhwy_contrib and liblua5.4 there). A DT_RPATH
# (--disable-new-dtags), not a DT_RUNPATH: those copies keep no RPATH of
# their own (libhwy_contrib needs libhwy), and the loader searches the
# DT_RPATH of the object that loaded them too; a DT_RUNPATH serves only its
# own object. Not built by default: `tests/gpu/pack` builds the target
# dlb_gpu_bundle (and ctest gpu.oneshot_relocated runs pack).
set(DLB_GPU_STAGE ${PROJECT_BINARY_DIR}/gpu-stage)
get_target_property(DLB_GPU_LIBS dlbridge LINK_LIBRARIES)
get_target_property(DLB_GPU_MODULE_LIBS dlbridge_module LINK_LIBRARIES)

add_library(dlb_gpu_dlbridge SHARED EXCLUDE_FROM_ALL
            $<TARGET_OBJECTS:dlbridge_core> $<TARGET_OBJECTS:dlbridge_binding>)
target_link_libraries(dlb_gpu_dlbridge PRIVATE ${DLB_GPU_LIBS})
set_target_properties(dlb_gpu_dlbridge PROPERTIES
  OUTPUT_NAME dlbridge VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
  LIBRARY_OUTPUT_DIRECTORY ${DLB_GPU_STAGE}/lib)

add_library(dlb_gpu_module MODULE EXCLUDE_FROM_ALL
            $<TARGET_OBJECTS:dlbridge_core> $<TARGET_OBJECTS:dlbridge_binding>)
target_link_libraries(dlb_gpu_module PRIVATE ${DLB_GPU_MODULE_LIBS})
set_target_properties(dlb_gpu_module PROPERTIES OUTPUT_NAME core PREFIX ""
  LIBRARY_OUTPUT_DIRECTORY ${DLB_GPU_STAGE}/lib/dlbridge INSTALL_RPATH "\$ORIGIN/..")

add_library(dlb_gpu_cuda_stand_in MODULE EXCLUDE_FROM_ALL ${PROJECT_SOURCE_DIR}/tests/cuda/stand_in_lua.c)
target_link_libraries(dlb_gpu_cuda_stand_in PRIVATE dlb_gpu_dlbridge ${CMAKE_DL_LIBS})
target_include_directories(dlb_gpu_cuda_stand_in PRIVATE ${PROJECT_SOURCE_DIR}/src
                           ${DLPACK_INCLUDE_DIR} ${LUA_INCDIR})
set_target_properties(dlb_gpu_cuda_stand_in PROPERTIES OUTPUT_NAME cuda_stand_in PREFIX ""
  LIBRARY_OUTPUT_DIRECTORY ${DLB_GPU_STAGE}/lib)

foreach(t IN ITEMS dlb_gpu_dlbridge dlb_gpu_module dlb_gpu_cuda_stand_in)
  set_target_properties(${t} PROPERTIES BUILD_WITH_INSTALL_RPATH ON SKIP_BUILD_RPATH OFF)
  get_target_property(rp ${t} INSTALL_RPATH)
  if(NOT rp)
    set_target_properties(${t} PROPERTIES INSTALL_RPATH "\$ORIGIN")
  endif()
  # The ordinary code of the fat objects (CMakeLists.txt: LTO): the check
  # needs the same behaviour, not a second minute-long LTO link of each.
  target_link_options(${t} PRIVATE "LINKER:--disable-new-dtags" ${DLB_NO_LTO_LINK})
endforeach()

# What pack copies: these, the two small libraries that need no RPATH (the
# CPython capsule helper and the stand-in driver, for --stand-in and the
# simulation), and the Lua runtime library the check loads through ctypes.
add_custom_target(dlb_gpu_bundle)
add_dependencies(dlb_gpu_bundle dlb_gpu_dlbridge dlb_gpu_module dlb_gpu_cuda_stand_in
                 dlb_interop_capsule dlb_cuda_standin)
file(GENERATE OUTPUT ${DLB_GPU_STAGE}/stage.txt CONTENT
"libdlbridge $<TARGET_FILE:dlb_gpu_dlbridge>
module $<TARGET_FILE:dlb_gpu_module>
cuda_stand_in $<TARGET_FILE:dlb_gpu_cuda_stand_in>
capsule_helper $<TARGET_FILE:dlb_interop_capsule>
standin_driver $<TARGET_FILE:dlb_cuda_standin>
lua_library ${LUA_LIBRARY}
build_type ${CMAKE_BUILD_TYPE}
")
