# cmake/docs.cmake -- the API reference and the checks that keep it complete.
# Included from the top-level CMakeLists.txt (include(cmake/docs.cmake)).
#
#   cmake --build build --target docs
#
# builds the Lua reference with LDoc (config.ld, docs/api/*.luadoc) into
# build/docs/lua/index.html and the C reference from the comments of the
# public headers into build/docs/c/c-api.md. The target is not part of
# `all`. When testing is enabled, ctest runs:
#   docs.lua_complete    every public Lua name has an entry (docs/tools/check_lua_docs.lua)
#   docs.c_complete      every public C function and type has a comment (docs/tools/c_reference.lua)
#   docs.ldoc_builds     LDoc builds the reference without a warning
#   docs.examples        every example in the Lua reference runs and shows what it says
#   docs.tools_selftest  the checkers catch what they are meant to catch
#   docs.links           README.md and docs/design.md link only to files in the repository
# LDoc is Debian's lua-ldoc; it runs under lua5.4 (Debian's `ldoc` script
# would pick Lua 5.1 or 5.2, when installed). Without it (or lua5.4), the
# target and the tests that need it fail with a message saying what to
# install: they never skip.

# In script mode (cmake -P cmake/docs.cmake): fail with the message given,
# the stand-in for a target or test whose tool is missing.
if(CMAKE_SCRIPT_MODE_FILE)
  message(FATAL_ERROR "${DLB_DOCS_MISSING}")
endif()
include_guard(GLOBAL)

find_program(DLB_LUA54 lua5.4)
find_program(DLB_LDOC ldoc)

# The repository root (this file's parent), and where the references go.
get_filename_component(DLB_DOCS_SOURCE ${CMAKE_CURRENT_LIST_DIR}/.. ABSOLUTE)
set(DLB_DOCS_OUTPUT ${PROJECT_BINARY_DIR}/docs)
file(GLOB DLB_DOCS_LUA_SOURCES CONFIGURE_DEPENDS ${DLB_DOCS_SOURCE}/docs/api/*.luadoc)
# The installed headers: dlbridge.h first, then its companions.
file(GLOB DLB_DOCS_HEADERS CONFIGURE_DEPENDS ${DLB_DOCS_SOURCE}/src/dlbridge*.h)
list(APPEND DLB_DOCS_HEADERS ${DLB_DOCS_SOURCE}/src/dlpack_compat.h)

# How to run LDoc: Debian's script (#!/usr/bin/env lua-any) under lua5.4;
# an ldoc that is not a Lua script (a LuaRocks wrapper) as it is.
set(DLB_DOCS_NO_LUA "")
set(DLB_DOCS_NO_LDOC "")
if(NOT DLB_LUA54)
  set(DLB_DOCS_NO_LUA "lua5.4 not found: apt-get install lua5.4")
  set(DLB_DOCS_NO_LDOC "${DLB_DOCS_NO_LUA}")
elseif(NOT DLB_LDOC)
  set(DLB_DOCS_NO_LDOC "ldoc not found: apt-get install --no-install-recommends lua-ldoc")
else()
  file(STRINGS ${DLB_LDOC} DLB_LDOC_SHEBANG LIMIT_COUNT 1)
  if(DLB_LDOC_SHEBANG MATCHES "^#!.*lua")
    set(DLB_LDOC_COMMAND ${DLB_LUA54} ${DLB_LDOC})
  else()
    set(DLB_LDOC_COMMAND ${DLB_LDOC})
  endif()
endif()
if(DLB_DOCS_NO_LDOC)
  message(WARNING "The docs target and the docs.* tests that need it will fail: ${DLB_DOCS_NO_LDOC}")
endif()
# The stand-in command of a target or test whose tool is missing.
set(DLB_DOCS_FAIL_NO_LUA ${CMAKE_COMMAND} "-DDLB_DOCS_MISSING=${DLB_DOCS_NO_LUA}"
    -P ${CMAKE_CURRENT_LIST_FILE})
set(DLB_DOCS_FAIL_NO_LDOC ${CMAKE_COMMAND} "-DDLB_DOCS_MISSING=${DLB_DOCS_NO_LDOC}"
    -P ${CMAKE_CURRENT_LIST_FILE})

# LDoc finds the reference's Markdown renderer (docs/tools/ldoc_markdown.lua) here.
set(DLB_DOCS_LUA_PATH "${DLB_DOCS_SOURCE}/docs/tools/?.lua\;\;")

if(DLB_DOCS_NO_LDOC)
  add_custom_target(docs COMMAND ${DLB_DOCS_FAIL_NO_LDOC} VERBATIM)
else()
  add_custom_target(docs
    COMMAND ${CMAKE_COMMAND} -E make_directory ${DLB_DOCS_OUTPUT}/lua ${DLB_DOCS_OUTPUT}/c
    COMMAND ${CMAKE_COMMAND} -E env "LUA_PATH=${DLB_DOCS_SOURCE}/docs/tools/?.lua$<SEMICOLON>$<SEMICOLON>"
            ${DLB_LDOC_COMMAND} --fatalwarnings -c ${DLB_DOCS_SOURCE}/config.ld
            -d ${DLB_DOCS_OUTPUT}/lua .
    COMMAND ${DLB_LUA54} ${DLB_DOCS_SOURCE}/docs/tools/c_reference.lua
            --output ${DLB_DOCS_OUTPUT}/c/c-api.md ${DLB_DOCS_HEADERS}
    COMMAND ${CMAKE_COMMAND} -E echo
            "Lua reference: ${DLB_DOCS_OUTPUT}/lua/index.html, C reference: ${DLB_DOCS_OUTPUT}/c/c-api.md"
    WORKING_DIRECTORY ${DLB_DOCS_SOURCE}
    SOURCES ${DLB_DOCS_SOURCE}/config.ld ${DLB_DOCS_LUA_SOURCES}
    COMMENT "Building the Lua (LDoc) and C API references into ${DLB_DOCS_OUTPUT}"
    VERBATIM)
endif()

if(BUILD_TESTING OR DLB_TESTS)
  # The module under test: the sources' Lua files and this build's C module.
  set(DLB_DOCS_MODULE_ENV
      "LUA_PATH=${DLB_DOCS_SOURCE}/lua/?.lua\;${DLB_DOCS_SOURCE}/lua/?/init.lua\;\;"
      "LUA_CPATH=${PROJECT_BINARY_DIR}/lib/?.so\;\;")
  if(DLB_SANITIZE)
    # lua5.4 is not instrumented: preload the sanitizer runtime for the module.
    list(APPEND DLB_DOCS_MODULE_ENV "LD_PRELOAD=${DLB_ASAN_RUNTIME}"
         "ASAN_OPTIONS=detect_leaks=0:abort_on_error=0"
         "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
  endif()

  # Without lua5.4 nothing runs; without LDoc what needs it fails.
  if(DLB_DOCS_NO_LUA)
    foreach(test IN ITEMS docs.c_complete docs.links docs.examples)
      add_test(NAME ${test} COMMAND ${DLB_DOCS_FAIL_NO_LUA})
    endforeach()
  else()
    add_test(NAME docs.c_complete
      COMMAND ${DLB_LUA54} docs/tools/c_reference.lua --check ${DLB_DOCS_HEADERS}
      WORKING_DIRECTORY ${DLB_DOCS_SOURCE})
    # The README and the design link only to files inside the repository.
    add_test(NAME docs.links
      COMMAND ${DLB_LUA54} docs/tools/check_links.lua README.md docs/design.md
              tests/fuzz/README.md
      WORKING_DIRECTORY ${DLB_DOCS_SOURCE})
    # This one loads the built module into lua5.4: a 5.4 build's; under
    # ThreadSanitizer the uninstrumented lua5.4 cannot (tests/CMakeLists.txt):
    # the other builds run it.
    if(NOT DLB_TSAN AND DLB_LUA STREQUAL "5.4")
      add_test(NAME docs.examples
        COMMAND ${DLB_LUA54} docs/tools/run_examples.lua docs/api
        WORKING_DIRECTORY ${DLB_DOCS_SOURCE})
      set_tests_properties(docs.examples PROPERTIES ENVIRONMENT "${DLB_DOCS_MODULE_ENV}")
    endif()
  endif()

  if(DLB_DOCS_NO_LDOC)
    foreach(test IN ITEMS docs.ldoc_builds docs.lua_complete docs.tools_selftest)
      add_test(NAME ${test} COMMAND ${DLB_DOCS_FAIL_NO_LDOC})
    endforeach()
  else()
    add_test(NAME docs.ldoc_builds
      COMMAND ${DLB_LDOC_COMMAND} --fatalwarnings -c config.ld
              -d ${PROJECT_BINARY_DIR}/docs-check/lua .
      WORKING_DIRECTORY ${DLB_DOCS_SOURCE})
    # --fatalwarnings fails on a doc comment LDoc complains about; a
    # formatter it cannot load it only prints ("format: ... not found").
    set_tests_properties(docs.ldoc_builds PROPERTIES
      ENVIRONMENT "LUA_PATH=${DLB_DOCS_LUA_PATH}"
      FAIL_REGULAR_EXPRESSION "format: [^:]* not found|warning:")
    if(NOT DLB_TSAN AND DLB_LUA STREQUAL "5.4")
      add_test(NAME docs.lua_complete
        COMMAND ${DLB_LUA54} docs/tools/check_lua_docs.lua --root ${DLB_DOCS_SOURCE}
                -- ${DLB_LDOC_COMMAND}
        WORKING_DIRECTORY ${DLB_DOCS_SOURCE})
      add_test(NAME docs.tools_selftest
        COMMAND ${DLB_LUA54} docs/tools/selftest.lua -- ${DLB_LDOC_COMMAND}
        WORKING_DIRECTORY ${DLB_DOCS_SOURCE})
      set_tests_properties(docs.lua_complete docs.tools_selftest PROPERTIES
        ENVIRONMENT "${DLB_DOCS_MODULE_ENV}")
    else()
      # The checkers' parts that need neither LDoc's filter run nor the module
      # (TSan, or a build for another Lua than lua5.4).
      add_test(NAME docs.tools_selftest
        COMMAND ${DLB_LUA54} docs/tools/selftest.lua
        WORKING_DIRECTORY ${DLB_DOCS_SOURCE})
    endif()
  endif()
endif()
