# The source layers point only down: tests/layers/check_layers.py reads the
# rule from docs/design.md (the ```layers block) and checks every #include
# and cross-layer name under src/. It reads sources only, so every build
# (sanitizers, other Luas) runs it alike.
find_program(DLB_PYTHON3 python3)
if(DLB_PYTHON3)
  add_test(NAME layers.include_directions
    COMMAND ${DLB_PYTHON3} -B ${CMAKE_CURRENT_LIST_DIR}/check_layers.py
            --root ${PROJECT_SOURCE_DIR})
else()
  message(WARNING "layers.include_directions fails: no python3 to run tests/layers/check_layers.py")
  add_test(NAME layers.include_directions COMMAND ${CMAKE_COMMAND} -E false)
endif()
