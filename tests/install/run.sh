#!/usr/bin/env bash
# Installs the build in $1 into a scratch prefix and checks what DESIGN.md
# promises: the C module under lib/lua/5.4, the Lua files under share/lua/5.4,
# the header under include, and a CMake package a host can link.
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
for f in lib/lua/5.4/dlbridge/core.so share/lua/5.4/dlbridge/init.lua include/dlbridge.h \
         include/dlpack_compat.h lib/cmake/dlbridge/dlbridgeConfig.cmake; do
  [ -f "$scratch/prefix/$f" ] || { echo "missing after install: $f" >&2; exit 1; }
done
(cd "$scratch" &&
  LUA_PATH="$scratch/prefix/share/lua/5.4/?.lua;$scratch/prefix/share/lua/5.4/?/init.lua;;" \
  LUA_CPATH="$scratch/prefix/lib/lua/5.4/?.so;;" \
  lua5.4 -e 'local dl = require "dlbridge"; assert(dl.zeros{2, 2}.size == 4); print("lua5.4: " .. dl.version)')
cmake -S "$here" -B "$scratch/consumer" -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/consumer" >/dev/null
LD_LIBRARY_PATH="$scratch/prefix/lib" "$scratch/consumer/consumer"
echo "install: 3 passed, 0 failed"
