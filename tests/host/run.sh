#!/usr/bin/env bash
# Runs the embedding host demo on examples/quickstart.lua and checks that the
# seed's story happened: the coded failure, both recoveries, the consumer's numbers.
set -euo pipefail
host=$1
out=$("$host" "$(dirname "$0")/../../examples/quickstart.lua")
expect() {
  grep -qF -- "$1" <<<"$out" || { echo "host demo: missing \"$1\"" >&2; echo "$out" >&2; exit 1; }
}
expect "backend engine  exportable=false"
expect "pcall(image.to_dlpack, image) ->	false	BACKEND_INCOMPATIBLE"
expect "device:	engine:0	 op:	Array:to_dlpack"
expect 'dl.device_put(a, "cpu")'
expect 'fallback = "cpu"'
[ "$(grep -c 'engine.analyze: count=48 min=0.250 max=1.000 mean=0.5833' <<<"$out")" = 2 ] ||
  { echo "host demo: the consumer did not read the right numbers twice" >&2; echo "$out" >&2; exit 1; }
echo "host demo: 6 passed, 0 failed"
