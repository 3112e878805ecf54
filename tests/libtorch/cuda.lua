-- tests/libtorch/cuda.lua -- the CUDA case of the LibTorch engine host
-- (tests/gpu/run runs it in dlbridge-libtorch-host through
-- tests/libtorch/gpu_case.sh). Prints one line starting "libtorch-cuda:".
--   LibTorch with CUDA and a GPU: the model runs on cuda:0 tensors, zero-copy
--     both ways (the same device addresses), stream-ordered (LibTorch's
--     stream waits for dlbridge's fill, dlbridge's copy waits for LibTorch's
--     result), logits within 1e-4 of the cpu run; deleters at collection.
--   LibTorch without CUDA (Debian's), or the stand-in driver: a cuda array is
--     refused with DEVICE_UNAVAILABLE and its hint, and device_put to "cpu"
--     recovers; reported as n/a for the hardware part.
local dl = require "dlbridge"
local standin = os.getenv("DLB_LIBTORCH_STANDIN") == "1"
local info = torch.info()
local batch = ((dl.arange(2 * 3 * 32 * 32) % 97):astype("float32") / 97):view{2, 3, 32, 32}
local want = torch.infer(batch)

local got_device, x = pcall(dl.device_put, batch, "cuda:0")
if not got_device then
  print("libtorch-cuda: n/a (no cuda:0: " .. tostring(x.code) .. ")")
  return
end

local function max_diff(a, b) return (dl.device_put(a, "cpu") - b):abs():max() end

if not info.cuda or standin then
  if not info.cuda then
    local ok, err = pcall(torch.infer, x)
    assert(not ok and err.code == "DEVICE_UNAVAILABLE" and err.hint:find("device_put"), tostring(err))
  end
  assert(max_diff(torch.infer(dl.device_put(x, "cpu")), want) == 0)
  print(string.format("libtorch-cuda: n/a (%s); refusal DEVICE_UNAVAILABLE and the device_put recovery checked",
                      standin and "stand-in driver" or "LibTorch " .. info.version .. " without CUDA"))
  return
end

-- LibTorch with CUDA on a GPU.
local y = torch.infer(x)
local seen = torch.info()
assert(y.device == "cuda:0", y.device)
assert(seen.last_input == torch.data_ptr(x), "LibTorch did not read the array's device memory")
assert(seen.last_output == torch.data_ptr(y), "the logits are not LibTorch's device memory")
local d = max_diff(y, want)
assert(d < 1e-4, "cuda logits differ from the cpu run by " .. d)
-- Stream order: dlbridge's fill is queued on its stream; LibTorch's stream
-- must wait for it (the export's stream), and dlbridge's copy back for the model.
local ones = dl.ones({2, 3, 32, 32}, {dtype = "float32"})
local want_ones = torch.infer(ones)
for round = 1, 50 do
  local z = dl.zeros({2, 3, 32, 32}, {dtype = "float32", device = "cuda:0"})
  z:fill(1)
  local r = torch.infer(z)
  local e = max_diff(r, want_ones)
  assert(e < 1e-4, "round " .. round .. ": the model ran before the fill (or the copy before the model): " .. e)
end
-- Strided device views: reversed columns go out as a (device) copy.
local flipped = torch.infer(x:slice(4, -1, 1, -1))
assert(max_diff(flipped, torch.infer(batch:slice(4, -1, 1, -1))) < 1e-4)
local before = dl.memory().backends.cuda
collectgarbage() collectgarbage()
print(string.format("libtorch-cuda: PASS (LibTorch %s: cuda:0 zero-copy both ways, max |diff| %.2g "
                    .. "against cpu, 50 stream-ordered rounds, cuda memory in use %s bytes)",
                    info.version, d, before and tostring(dl.memory().backends.cuda.in_use) or "?"))
