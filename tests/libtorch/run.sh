#!/usr/bin/env bash
# tests/libtorch/run.sh BUILD [--sanitize] -- the LibTorch engine host end to
# end (ctest libtorch.host): installs BUILD into a scratch prefix, builds
# examples/libtorch_host and tests/libtorch against it with find_package(dlbridge)
# and find_package(Torch) alone, runs examples/libtorch_host/classify.lua in
# the host, then the checks (tests/libtorch/check.cpp). --sanitize builds
# them with ASan + UBSan, as the library in a DLB_SANITIZE build is.
# DLB_LIBTORCH_KEEP=DIR builds into DIR and keeps it (bench/libtorch_run).
set -euo pipefail
build=$1
sanitize=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
if [ -n "${DLB_LIBTORCH_KEEP:-}" ]; then
  scratch=$DLB_LIBTORCH_KEEP
  mkdir -p "$scratch"
else
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
fi
prefix=$scratch/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
flags=()
if [ "$sanitize" = --sanitize ]; then
  san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
  flags=(-DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san" -DCMAKE_BUILD_TYPE=Debug)
else
  flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
fi
[ -n "${DLB_LIBTORCH_KEEP:-}" ] && flags+=(-DDLB_LIBTORCH_BENCH=ON)
[ -n "${Torch_DIR:-}" ] && flags+=(-DTorch_DIR="$Torch_DIR")
cmake -S "$here" -B "$scratch/projects" -DCMAKE_PREFIX_PATH="$prefix" "${flags[@]}" >/dev/null
cmake --build "$scratch/projects" -j2 >/dev/null
libdir=$(cd "$prefix" && dirname "$(find lib* -name libdlbridge.so | head -n 1)")
export LD_LIBRARY_PATH="$prefix/$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
(cd "$src/examples/libtorch_host" && "$scratch/projects/example/dlbridge-libtorch-host" classify.lua)
"$scratch/projects/libtorch_check"
