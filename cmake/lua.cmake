# lua.cmake -- finds the Lua that DLB_LUA names and checks it is that one.
# DLB_LUA=from-headers (the rockspec's) takes the Lua whose headers
# LUA_INCDIR holds (luarocks passes the ones of the Lua it runs).
# Sets LUA_INCDIR, LUA_LIBRARY (may be empty: a module needs none),
# DLB_LUA_INTERPRETER (may be empty), DLB_LUA_ABI (the 5.x of its module
# paths: 5.1 for LuaJIT) and DLB_LUA_VERSION_NUM (LUA_VERSION_NUM).
if(DLB_LUA STREQUAL "from-headers")
  if(NOT EXISTS "${LUA_INCDIR}/lua.h")
    message(FATAL_ERROR "DLB_LUA=from-headers needs -DLUA_INCDIR=<the directory of lua.h>")
  endif()
  file(STRINGS ${LUA_INCDIR}/lua.h _dlb_lua_num REGEX "^#define[ \t]+LUA_VERSION_NUM[ \t]+[0-9]+")
  string(REGEX REPLACE ".*LUA_VERSION_NUM[ \t]+5?0?([0-9]+).*" "5.\\1" DLB_LUA "${_dlb_lua_num}")
  if(EXISTS ${LUA_INCDIR}/luajit.h)
    set(DLB_LUA luajit)
  endif()
  message(STATUS "Lua from ${LUA_INCDIR}/lua.h: ${DLB_LUA}")
endif()
if(DLB_LUA STREQUAL "luajit")
  set(DLB_LUA_ABI 5.1)
  set(_dlb_lua_suffixes luajit-2.1 luajit-2.0)
  set(_dlb_lua_libs luajit-5.1)
  set(_dlb_lua_programs luajit)
elseif(DLB_LUA MATCHES "^5\\.[1-4]$")
  set(DLB_LUA_ABI ${DLB_LUA})
  string(REPLACE "." "" _dlb_lua_nodot ${DLB_LUA})
  set(_dlb_lua_suffixes lua${DLB_LUA} lua/${DLB_LUA} lua${_dlb_lua_nodot})
  set(_dlb_lua_libs lua${DLB_LUA} lua${_dlb_lua_nodot} lua)
  set(_dlb_lua_programs lua${DLB_LUA} lua${_dlb_lua_nodot})
else()
  message(FATAL_ERROR "DLB_LUA is '${DLB_LUA}': use 5.1, 5.2, 5.3, 5.4 or luajit")
endif()

# A build directory switched to another Lua looks again (the cache holds the old one).
if(DEFINED CACHE{DLB_LUA_FOUND_FOR} AND NOT DLB_LUA_FOUND_FOR STREQUAL DLB_LUA)
  unset(LUA_INCDIR CACHE)
  unset(LUA_LIBRARY CACHE)
  unset(DLB_LUA_INTERPRETER CACHE)
endif()
set(DLB_LUA_FOUND_FOR ${DLB_LUA} CACHE INTERNAL "The DLB_LUA that LUA_INCDIR was found for")

# Debian: /usr/include/lua5.x, /usr/include/luajit-2.1.
find_path(LUA_INCDIR lua.h HINTS ${LUA_INCDIR} PATH_SUFFIXES ${_dlb_lua_suffixes} NO_CMAKE_SYSTEM_PATH)
find_path(LUA_INCDIR lua.h PATH_SUFFIXES ${_dlb_lua_suffixes})
if(NOT LUA_INCDIR)
  message(FATAL_ERROR "No lua.h for DLB_LUA=${DLB_LUA}: install its headers (Debian: "
          "liblua${DLB_LUA}-dev, libluajit-5.1-dev) or pass -DLUA_INCDIR=")
endif()
find_library(LUA_LIBRARY NAMES ${_dlb_lua_libs})
find_program(DLB_LUA_INTERPRETER NAMES ${_dlb_lua_programs})

# The headers must be the Lua asked for: 5.x by LUA_VERSION_NUM, LuaJIT by luajit.h.
file(STRINGS ${LUA_INCDIR}/lua.h _dlb_lua_num REGEX "^#define[ \t]+LUA_VERSION_NUM[ \t]+[0-9]+")
string(REGEX REPLACE ".*LUA_VERSION_NUM[ \t]+([0-9]+).*" "\\1" DLB_LUA_VERSION_NUM "${_dlb_lua_num}")
string(REPLACE "5." "50" _dlb_lua_expected ${DLB_LUA_ABI})
if(NOT DLB_LUA_VERSION_NUM STREQUAL _dlb_lua_expected)
  message(FATAL_ERROR "${LUA_INCDIR}/lua.h is Lua ${DLB_LUA_VERSION_NUM}, not ${DLB_LUA} "
          "(LUA_VERSION_NUM ${_dlb_lua_expected}): pass -DLUA_INCDIR= for DLB_LUA=${DLB_LUA}")
endif()
if(DLB_LUA STREQUAL "luajit" AND NOT EXISTS ${LUA_INCDIR}/luajit.h)
  message(FATAL_ERROR "${LUA_INCDIR} has no luajit.h: these are Lua 5.1's headers, not LuaJIT's")
endif()
if(DLB_LUA STREQUAL "5.1" AND EXISTS ${LUA_INCDIR}/luajit.h)
  message(FATAL_ERROR "${LUA_INCDIR} is LuaJIT's: configure with -DDLB_LUA=luajit")
endif()
message(STATUS "Lua: ${DLB_LUA} (${LUA_INCDIR}; library ${LUA_LIBRARY}; interpreter ${DLB_LUA_INTERPRETER})")
# Its pkg-config name (Debian's .pc files), for dlbridge.pc's Requires.
if(DLB_LUA STREQUAL "luajit")
  set(DLB_LUA_PKGCONFIG luajit)
else()
  set(DLB_LUA_PKGCONFIG lua${DLB_LUA})
endif()
