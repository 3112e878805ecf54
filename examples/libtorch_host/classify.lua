-- classify.lua -- a script of the LibTorch engine host (host.cpp): prepares a
-- batch of camera frames with dlbridge, runs the host's model through
-- torch.infer (zero-copy both ways) and post-processes the logits in dlbridge.
--
--   dlbridge-libtorch-host classify.lua
local dl = require "dlbridge"

local H, W, N = 120, 160, 4

-- N frames as the engine hands them over: RGBA8 bytes, H x W x 4, row-major.
local function frame_bytes(k)
  local i = dl.arange(H * W * 4)
  return ((i * (2 * k + 1) + i:floor_divide(W * 4) * 7) % 256):astype("uint8"):tobytes()
end

-- The README's camera-frame preparation: drop alpha, channels first, float32 in [0, 1].
local function prepare(bytes)
  local img = dl.frombytes(bytes, "uint8", {H, W, 4})
  return img:narrow(3, 1, 3):permute{3, 1, 2}:astype("float32") / 255
end

local frames = {}
for k = 1, N do frames[k] = prepare(frame_bytes(k)) end
local batch = dl.stack(frames)                                    -- N x 3 x H x W, contiguous
batch = batch - batch:mean{dim = {1, 3, 4}, keepdims = true}      -- centre each channel

-- The model: LibTorch reads the batch's memory and returns its own logits' memory.
local logits = torch.infer(batch)                                 -- N x classes, float32
local seen = torch.info()                                         -- the addresses LibTorch used
assert(seen.last_input == torch.data_ptr(batch) and seen.last_output == torch.data_ptr(logits))

-- Softmax and argmax in dlbridge.
local function softmax(x)
  local e = dl.exp(x - x:max{dim = 2, keepdims = true})
  return e / e:sum{dim = 2, keepdims = true}
end
local probs = softmax(logits)
local class = probs:argmax(2)                                     -- 1-based class per frame
local info = torch.info()
print(string.format("LibTorch %s (cuda: %s): %d frames -> logits %s %s",
                    info.version, tostring(info.cuda), N, logits.dtype,
                    table.concat(logits.shape, "x")))
print("zero-copy: LibTorch read the batch's memory, the logits are LibTorch's memory")
for k = 1, N do
  print(string.format("frame %d: class %d (p = %.4f)", k, class[k], probs:get(k, class[k])))
end

-- The seed: the same batch on the engine's own memory cannot be exported ...
local on_engine = dl.device_put(batch, "engine")
local ok, err = pcall(torch.infer, on_engine)
assert(not ok and err.code == "BACKEND_INCOMPATIBLE", tostring(err))
print("engine array: " .. err.code)
-- ... so it moves to host memory first, by hand or in the export.
local moved = torch.infer(dl.device_put(on_engine, "cpu"))
local fallen = torch.infer(on_engine, {fallback = "cpu"})
assert(dl.equal(moved, logits):all() and dl.equal(fallen, logits):all())
print("engine array via device_put and fallback = \"cpu\": same logits")

-- Views LibTorch could not take as they are: reversed columns (negative
-- strides, which would abort LibTorch) go out as a copy; so does a read-only array.
local flipped = torch.infer(batch:slice(4, -1, 1, -1))
assert(flipped.shape[1] == N)
print("reversed view: ok; classes " .. table.concat(flipped:argmax(2):totable(), " "))
local ro = batch:narrow(1, 1, 1):expand{N, -1, -1, -1}          -- broadcast: read-only
assert(ro.readonly and torch.infer(ro).shape[1] == N)
print("read-only broadcast view: copied for LibTorch, ok")

-- What LibTorch refuses comes back as a dlbridge.Error, and nothing leaks.
local ok2, err2 = pcall(torch.infer, batch:astype("float64"))
assert(not ok2 and err2.code == "DTYPE")
local ok3, err3 = pcall(torch.infer, dl.zeros({1, 3, 0, 8}, {dtype = "float32"}))
assert(not ok3 and err3.code == "BACKEND_FAILURE", tostring(err3))
print("refusals: " .. err2.code .. ", " .. err3.code .. " (" .. err3.message:sub(1, 60) .. "...)")
