#!/bin/sh
# tests/libtorch/gpu_case.sh [--build DIR] [--stand-in] -- the LibTorch
# engine host's CUDA case of tests/gpu/run (issue 26, point 4). Takes the host
# $DLB_LIBTORCH_HOST, or builds it (incrementally, in DIR/libtorch-cuda)
# against the LibTorch of the Python with PyTorch (torch.utils.cmake_prefix_path)
# with tests/libtorch/run.sh (which also runs the checks against that LibTorch),
# then runs tests/libtorch/cuda.lua in it. One line on stdout, starting
# "libtorch-cuda:"; the log in DIR/gpu-check-libtorch.log.
# Exit 0 passed or n/a (what is missing is named), 1 failed.
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
root=$(CDPATH= cd -- "$here/../.." && pwd)
build=${DLBRIDGE_BUILD:-$root/build}
standin=0
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift ;;
    --build=*) build=${1#--build=} ;;
    --stand-in) standin=1 ;;
  esac
  shift
done
build=$(CDPATH= cd -- "$build" 2>/dev/null && pwd) || { echo "libtorch-cuda: FAIL (no build directory)"; exit 1; }
log=$build/gpu-check-libtorch.log
: > "$log"
na() { echo "libtorch-cuda: n/a ($1)"; echo "n/a: $1" >> "$log"; exit 0; }

host=${DLB_LIBTORCH_HOST:-}
keep=$build/libtorch-cuda
if [ -z "$host" ]; then
  command -v cmake >/dev/null 2>&1 || na "no cmake to build the host"
  command -v c++ >/dev/null 2>&1 || na "no C++ compiler to build the host"
  [ -f "${LUA_INCDIR:-/usr/include/lua5.4}/lua.h" ] || na "no Lua headers (liblua5.4-dev) to build the host"
  configured=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null)
  [ "$configured" = "$root" ] || na "the build was configured for ${configured:-another} source directory, not $root: cannot install it"
  torch_dir=${Torch_DIR:-$("${PYTHON:-python3}" -c 'import os, torch; print(os.path.join(torch.utils.cmake_prefix_path, "Torch"))' 2>>"$log")}
  [ -f "$torch_dir/TorchConfig.cmake" ] || torch_dir=
  [ -n "$torch_dir" ] || [ -d /usr/lib/x86_64-linux-gnu/cmake/Torch ] || na "no LibTorch (TorchConfig.cmake)"
  # A CUDA LibTorch's TorchConfig needs the CUDA toolkit (nvcc, headers) to configure.
  if [ -n "$torch_dir" ] && "${PYTHON:-python3}" -c 'import sys, torch; sys.exit(torch.version.cuda is None)' 2>/dev/null; then
    command -v nvcc >/dev/null 2>&1 || [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ] ||
      na "no CUDA toolkit (nvcc), which a CUDA LibTorch's TorchConfig.cmake needs"
  fi
  echo "building the host against ${torch_dir:-the system LibTorch}" >> "$log"
  if ! Torch_DIR=$torch_dir DLB_LIBTORCH_KEEP=$keep "$root/tests/libtorch/run.sh" "$build" >> "$log" 2>&1; then
    echo "libtorch-cuda: FAIL (building or checking the host failed: $log)"
    exit 1
  fi
  host=$keep/projects/example/dlbridge-libtorch-host
fi
libdir=$(cd "$keep/prefix" 2>/dev/null && dirname "$(find lib* -name libdlbridge.so | head -n 1)")
export LD_LIBRARY_PATH="${libdir:+$keep/prefix/$libdir:}$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ $standin = 1 ]; then
  export DLB_CUDA_DRIVER=${DLB_CUDA_DRIVER:-$build/lib/libdlb_cuda_standin.so} DLB_LIBTORCH_STANDIN=1
fi
out=$("$host" "$here/cuda.lua" 2>&1)
rc=$?
echo "$out" >> "$log"
line=$(echo "$out" | grep '^libtorch-cuda:' | tail -n 1)
if [ $rc -ne 0 ] || [ -z "$line" ]; then
  echo "libtorch-cuda: FAIL ($(echo "$out" | tail -n 1 | cut -c1-200); log $log)"
  exit 1
fi
echo "$line"
