#!/bin/sh
# tests/gpu/oneshot_relocated.sh BUILD [PYTHON] -- ctest gpu.oneshot_relocated:
# tests/gpu/oneshot as a GPU machine runs it, with no GPU.
#   1. tests/gpu/pack --build BUILD: the bundle, into a scratch directory;
#   2. a bare copy of the tree (what git tracks and does not ignore, as the
#      GPU machine receives it) elsewhere, the bundle moved into it as
#      build-gpu/bundle (another path than the one it was built for);
#   3. the stand-in driver copied as libcuda.so.1 into a directory on
#      LD_LIBRARY_PATH, DLB_CUDA_DRIVER unset: the backend opens it as it
#      opens a real driver, and the check takes the hardware path;
#   4. the copy's tests/gpu/oneshot, OUT set: its last line must be
#      "oneshot: PASS (simulation) | ...", its logs in OUT, and nothing it
#      loaded may come from the source tree or BUILD; then once more with
#      `PYTHON -S` (no site packages: no NumPy, no PyTorch), which must
#      pass too.
set -u
build=$(CDPATH= cd -- "$1" && pwd)
python=${2:-python3}
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
root=$(CDPATH= cd -- "$here/../.." && pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/dlb-oneshot.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
fail() { echo "gpu.oneshot_relocated: FAIL: $*"; exit 1; }
t0=$(date +%s)

"$here/pack" --build "$build" --out "$scratch/packed" || fail "tests/gpu/pack"

mkdir "$scratch/tree"
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$root" && git ls-files -z --cached --others --exclude-standard |
     tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -C "$scratch/tree" -xf - ||
    fail "copying the tree"
else
  (cd "$root" && tar --exclude='./build*' --exclude=./.git -cf - .) | tar -C "$scratch/tree" -xf - ||
    fail "copying the tree"
fi
[ ! -e "$scratch/tree/build-gpu" ] || fail "the copy holds build-gpu/ (git ignores it: it should not travel)"
mkdir -p "$scratch/tree/build-gpu"
mv "$scratch/packed" "$scratch/tree/build-gpu/bundle"
bundle=$scratch/tree/build-gpu/bundle
mkdir "$scratch/driver"
cp "$bundle/lib/libdlb_cuda_standin.so" "$scratch/driver/libcuda.so.1"

# Nothing may resolve into the source tree or the build it came from.
for f in lib/libdlbridge.so lib/dlbridge/core.so lib/cuda_stand_in.so; do
  if env -u LD_LIBRARY_PATH ldd "$bundle/$f" | grep -F -e "$build/" -e "$root/"; then
    fail "$f resolves a library outside the bundle (above)"
  fi
done

run() { # run PYTHON-COMMAND OUT-DIR: the copy's oneshot; prints its output
  env -u DLB_CUDA_DRIVER -u DLBRIDGE_BUILD -u LUA_PATH -u LUA_CPATH -u PYTHONPATH \
    LD_LIBRARY_PATH="$scratch/driver" PYTHON="$1" OUT="$2" \
    sh "$scratch/tree/tests/gpu/oneshot" > "$2.txt" 2>&1
  rc=$?
  cat "$2.txt"
  last=$(tail -n 1 "$2.txt")
  case $last in
    "oneshot: PASS (simulation) | "*) ;;
    *) fail "oneshot exited $rc; its last line is not PASS (simulation): $last" ;;
  esac
  [ $rc -eq 0 ] || fail "oneshot printed PASS but exited $rc"
  for f in oneshot.log gpu-check.log check-output.log; do
    [ -s "$2/$f" ] || fail "OUT lacks $f"
  done
  grep -q "^loaded: .*$scratch/tree/build-gpu/bundle/lib/libdlbridge.so" "$2/gpu-check.log" ||
    fail "libdlbridge was not loaded from the relocated bundle: $(grep '^loaded:' "$2/gpu-check.log")"
  grep -q "driver libcuda.so.1 ($scratch/driver/libcuda.so.1)" "$2/gpu-check.log" ||
    fail "the driver was not the stand-in as libcuda.so.1"
}

echo "== $python"
run "$python" "$scratch/out"
grep -q '^peer numpy [0-9.]*: present' "$scratch/out/oneshot.log" && {
  echo "== $python -S (no site packages: no NumPy, no PyTorch)"
  run "$python -S" "$scratch/out-bare"
  grep -q '^peer numpy: absent' "$scratch/out-bare/oneshot.log" || fail "$python -S still found NumPy"
}
echo "gpu.oneshot_relocated: PASS in $(( $(date +%s) - t0 ))s (bundle $(du -sk "$bundle" | cut -f1) KiB)"
