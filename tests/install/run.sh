#!/usr/bin/env bash
# Installs the build in $1 into a scratch prefix and checks what a host or a
# module author gets: the C module under lib/lua/$abi, the Lua files under
# share/lua/$abi ($2: 5.1 for 5.1 and LuaJIT, else its version; $3 the
# interpreter, default lua5.4), the headers under include, a CMake package (find_package
# alone brings Lua) and a pkg-config file; then builds and runs a C host, a
# C++ host and a Lua C module against the installed files only.
set -euo pipefail
build=$1
abi=${2:-5.4}
lua=${3:-lua5.4}
here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
prefix=$scratch/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
# lib, or lib/<multiarch> where GNUInstallDirs says so
libdir=$(cd "$prefix" && dirname "$(find lib* -name libdlbridge.so | head -n 1)")
for f in lib/lua/$abi/dlbridge/core.so share/lua/$abi/dlbridge/init.lua include/dlbridge.h \
         include/dlbridge_exchange.h include/dlpack_compat.h "$libdir/cmake/dlbridge/dlbridgeConfig.cmake" \
         "$libdir/pkgconfig/dlbridge.pc"; do
  [ -f "$prefix/$f" ] || { echo "missing after install: $f" >&2; exit 1; }
done
passed=0
lua_paths() {
  LUA_PATH="$prefix/share/lua/$abi/?.lua;$prefix/share/lua/$abi/?/init.lua;;" \
  LUA_CPATH="$prefix/lib/lua/$abi/?.so;$scratch/projects/?.so;;" "$@"
}
(cd "$scratch" && lua_paths "$lua" -e \
   'local dl = require "dlbridge"; assert(dl.zeros{2, 2}.size == 4); print(_VERSION .. ": " .. dl.version)')
passed=$((passed + 1))
# CMake: find_package(dlbridge) and nothing else.
cmake -S "$here" -B "$scratch/projects" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$scratch/projects" >/dev/null
LD_LIBRARY_PATH="$prefix/$libdir" "$scratch/projects/consumer"
passed=$((passed + 1))
LD_LIBRARY_PATH="$prefix/$libdir" "$scratch/projects/host_cxx"
passed=$((passed + 1))
# The module links neither libdlbridge nor liblua, and works beside dlbridge.
if readelf -d "$scratch/projects/tensorstats.so" | grep -E 'NEEDED.*(dlbridge|liblua)'; then
  echo "tensorstats.so links dlbridge or Lua" >&2
  exit 1
fi
(cd "$scratch" && lua_paths "$lua" -e \
   'local dl = require "dlbridge"; local s = require "tensorstats"
    assert(s.mean(dl.arange(5):astype("float64")) == 2); print("exchange module: ok")')
passed=$((passed + 1))
# pkg-config: the C host again, built by hand.
PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig" \
  cc -o "$scratch/consumer_pc" "$here/consumer.c" \
     $(PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig" pkg-config --cflags --libs dlbridge)
LD_LIBRARY_PATH="$prefix/$libdir" "$scratch/consumer_pc"
passed=$((passed + 1))
echo "install: $passed passed, 0 failed"
