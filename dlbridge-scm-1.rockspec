package = "dlbridge"
version = "scm-1"
source = {
  url = "git+https://example.invalid/dlbridge.git",
}
description = {
  summary = "N-dimensional arrays for Lua 5.1-5.4 and LuaJIT with DLPack exchange and pluggable backends",
  detailed = [[
dlbridge gives Lua scripts n-dimensional arrays as userdata, backed by a C core
that hands them to native code and other array libraries through DLPack.
]],
  license = "MIT",
}
dependencies = {
  "lua >= 5.1, < 5.5",
}
external_dependencies = {
  DLPACK = { header = "dlpack/dlpack.h" },
}
build = {
  type = "cmake",
  variables = {
    CMAKE_INSTALL_PREFIX = "$(PREFIX)",
    CMAKE_BUILD_TYPE = "Release",
    LUA_INCDIR = "$(LUA_INCDIR)",
    -- the Lua luarocks runs (5.1 to 5.4 or LuaJIT): the one whose headers it passes
    DLB_LUA = "from-headers",
    LUA_CMOD_DIR = "$(LIBDIR)",
    LUA_LMOD_DIR = "$(LUADIR)",
    DLB_TESTS = "OFF",
    DLB_INSTALL_HOST_LIBRARY = "OFF",
  },
}
