-- bench/game.lua: the shapes a game script computes on, against NumPy
-- (bench/game_numpy.py: the same formulas, so the same values), alternated
-- case by case (bench/support.lua). Each figure is the median of ROUNDS
-- rounds of CPU time per call (some calls a round), with its spread and the
-- ratio of the medians; no targets. Results are deleted at once (NumPy frees
-- them at once too).
--   short inner dims: (N, 3) + (N, 1) float32, the same with a bool (N, 1),
--     M:T() + 1 for M (N, 3) and (1000, 1000), and the 2x2 block mean of a
--     480x640 image (a:reshape{240, 2, 320, 2}:mean{dim = {2, 4}});
--   sparse masks, 0.5% true over N elements: M[mask] = v with M (N, 3) and
--     mask (N), a[mask] = 0, mask:nonzero().
-- N = 1e5 (BENCH_QUICK=1: 1e4). BENCH_ROUNDS sets the rounds (default 5).
-- The per-call costs of 10-element arrays are in bench/compute.lua.
local dl = require "dlbridge"
local support = require "support"

local ROUNDS = support.rounds(5)
local N = support.size(100000, 10000)
local SQUARE = support.size(1000, 300)
local H, W = 480, 640
local G, G2 = 0.6180339887498949, 0.7548776662466927

-- Quasi-random float32 in [0, 1): frac(i * g), as NumPy's side.
local function spread(n, g)
  return (dl.arange(n, {dtype = "float64"}) * g % 1.0):astype("float32")
end

local cmp = support.comparison{script = "game_numpy.py", rounds = ROUNDS, width = 44,
                               args = {N = N, SQUARE = SQUARE, H = H, W = W}}
print(string.format("dlbridge %s, %s, N = %d, median of %d rounds (CPU time per call)",
                    dl.version, _VERSION, N, ROUNDS))

local pos = spread(N * 3, G):view{N, 3}
local col = spread(N, G2):view{N, 1}
local flags = col:lt(0.5)
local square = spread(SQUARE * SQUARE, G2):view{SQUARE, SQUARE}
local img = spread(H * W, G):view{H, W}

-- reps: calls a round, so that a round takes some milliseconds at full size.
local function row(name, label, f, reps)
  return cmp:row{name = name, label = label, f = f, reps = reps}
end

cmp:header("short inner dims, float32")
row("add_n3_n1", string.format("(%d, 3) + (%d, 1)", N, N), function() (pos + col):delete() end, 20)
row("add_n3_n1_bool", string.format("(%d, 3) + (%d, 1) bool", N, N),
    function() (pos + flags):delete() end, 20)
row("transpose_add_n3", string.format("M:T() + 1, M (%d, 3)", N),
    function() (pos:T() + 1):delete() end, 20)
row("transpose_add_square", string.format("M:T() + 1, M (%d, %d)", SQUARE, SQUARE),
    function() (square:T() + 1):delete() end, 5)
row("block_mean", string.format("2x2 block mean of %dx%d", H, W),
    function() img:reshape{H // 2, 2, W // 2, 2}:mean{dim = {2, 4}}:delete() end, 20)

local mask = spread(N, G2):lt(0.005)
local M = spread(N * 3, G):view{N, 3}
local v = spread(N, G)
cmp:header(string.format("sparse masks, 0.5%% true over %d elements (%d true)", N,
                         mask:count_nonzero()))
row("mask_set_rows", string.format("M[mask] = 1.5, M (%d, 3)", N),
    function() M[mask] = 1.5 end, 100)
row("mask_set_zero", string.format("a[mask] = 0, a (%d)", N), function() v[mask] = 0 end, 100)
row("mask_nonzero", "mask:nonzero()", function() mask:nonzero():delete() end, 100)
cmp:finish()
