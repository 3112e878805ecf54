-- bench/files_safetensors.lua: safetensors files (issue 13). Each figure is the
-- median of ROUNDS rounds of CPU time (os.clock: page faults and the kernel's
-- copies count), each after a full collection (which unmaps the previous
-- round's file).
-- Target: dl.load_safetensors of a 1 GiB file (64 tensors of 16 MiB) takes
-- <= 1 ms plus the per-tensor overhead: the file is mapped, not read, so the
-- time does not grow with its size. The per-tensor overhead is measured on a
-- file of 1000 tiny tensors (header parsing, one array object and one table
-- entry per tensor). For reference, no target: dl.load_safetensors with
-- {copy = true} (every byte read into new memory) next to memcpy's speed
-- measured in the same run (bench_floor.memcpy: two buffers touched first),
-- and dl.save_safetensors of the 1 GiB file.
-- BENCH_ROUNDS sets the rounds (default 7); BENCH_DIR the directory of the
-- files (default: the system's temporary directory); BENCH_QUICK=1 writes
-- 64 tensors of 1 MiB. The files are removed.
local dl = require "dlbridge"
local floor = require "bench_floor"
local support = require "support"

local ROUNDS = support.rounds(7)
local BIG_TENSORS = 64
local BIG_ELEMENTS = support.size(4 * 1024 * 1024, 256 * 1024) -- float32: 64 x 16 MiB = 1 GiB
local TINY_TENSORS = 1000

local function median(f, rounds) return support.median_time(f, rounds or ROUNDS) end

local scratch = os.tmpname()
local dir = os.getenv("BENCH_DIR") or scratch:match("^(.*)/[^/]*$") or "."
os.remove(scratch)
local big_path = dir .. "/dlbridge-bench-1gib.safetensors"
local tiny_path = dir .. "/dlbridge-bench-tiny.safetensors"

local function run()
  print(string.format("dlbridge %s, %s, median of %d rounds (CPU time), files in %s", dl.version,
                      _VERSION, ROUNDS, dir))
  -- 64 names for one 16 MiB array: the file holds 1 GiB, memory 16 MiB.
  local block = dl.arange(BIG_ELEMENTS, {dtype = "float32"})
  local big = {}
  for i = 1, BIG_TENSORS do big[string.format("layers.%02d.weight", i)] = block end
  local save_time = median(function() dl.save_safetensors(big_path, big) end, 1)
  local tiny = {}
  for i = 1, TINY_TENSORS do tiny[string.format("t%04d", i)] = dl.arange(4, {dtype = "float32"}) end
  dl.save_safetensors(tiny_path, tiny)
  local f = assert(io.open(big_path, "rb"))
  local size = f:seek("end")
  f:close()

  local function load(path, opts) return function() dl.load_safetensors(path, opts) end end
  local big_load = median(load(big_path))
  local tiny_load = median(load(tiny_path))
  local per_tensor = tiny_load / TINY_TENSORS
  local budget = 1e-3 + BIG_TENSORS * per_tensor
  print(string.format("%-48s %9.3f ms", string.format("load %d tiny tensors", TINY_TENSORS),
                      tiny_load * 1e3))
  print(string.format("%-48s %9.3f us", "  per tensor", per_tensor * 1e6))
  print(string.format("%-48s %9.3f ms   target <= 1 ms + %d x %.2f us = %.3f ms  %s",
                      string.format("load %.2f GiB, %d tensors (views)", size / 2^30, BIG_TENSORS),
                      big_load * 1e3, BIG_TENSORS, per_tensor * 1e6, budget * 1e3,
                      big_load <= budget and "(met)" or "(MISSED)"))
  -- A check that the views hold the data, outside the timing.
  local t = dl.load_safetensors(big_path)
  assert(t["layers.64.weight"]:get(BIG_ELEMENTS) == BIG_ELEMENTS - 1)
  t = nil

  -- For reference: reading every byte into new memory, against memcpy's speed.
  local copy_rounds = math.max(1, math.min(ROUNDS, 5))
  local copy_load = median(load(big_path, {copy = true}), copy_rounds)
  local reps = 4
  local memcpys = {}
  for r = 1, copy_rounds do memcpys[r] = floor.memcpy(size // reps, reps) end
  table.sort(memcpys)
  local memcpy = memcpys[(copy_rounds + 1) // 2]
  local fresh = median(function()
    local copies = {}
    for i = 1, BIG_TENSORS do copies[i] = block:copy() end
  end, copy_rounds)
  print(string.format("%-48s %9.3f ms   %6.2f GB/s",
                      string.format("load %.2f GiB with copy = true", size / 2^30), copy_load * 1e3,
                      size / copy_load / 1e9))
  print(string.format("%-48s %9.3f ms   %6.2f GB/s   load's time %4.2fx",
                      "  memcpy, buffers touched first", memcpy * 1e3, size / memcpy / 1e9,
                      copy_load / memcpy))
  print(string.format("%-48s %9.3f ms   %6.2f GB/s   load's time %4.2fx",
                      string.format("  %d x a:copy() of %g MiB (new memory)", BIG_TENSORS,
                                    block.nbytes / 2^20),
                      fresh * 1e3, size / fresh / 1e9, copy_load / fresh))
  print(string.format("%-48s %9.3f ms   %6.2f GB/s   (one round)",
                      string.format("save %.2f GiB, %d tensors", size / 2^30, BIG_TENSORS),
                      save_time * 1e3, size / save_time / 1e9))
end

local ok, err = pcall(run)
os.remove(big_path)
os.remove(tiny_path)
if not ok then error(err, 0) end
