-- hw_stand_in.lua -- spec/cuda_spec.lua's `cuda_stand_in` module on a GPU
-- machine (tests/gpu/run): the module of tests/cuda/stand_in_lua.c (loaded
-- from HW_STAND_IN_LIB) switched to its driver-only mode, so that its
-- foreign producer and consumer (stream, read, tensor, deleted, queue) use
-- the driver's ordinary entry points alone (cuMemAlloc_v2,
-- cuMemAllocManaged, cuMemcpy*Async_v2, cuMemFree_v2, ...), never the
-- stand-in's standin_alloc. It opens the driver the backend opened
-- (DLB_CUDA_DRIVER when set, else libcuda.so.1).
--
-- `hardware = true` tells the spec to run as on hardware: what needs the
-- stand-in's controls or counters is pending there with its reason, and
-- nothing hands the driver a made-up handle. The controls themselves raise
-- an error marked `standin_only`, which the runner reports as n/a with the
-- reason rather than as a failure, should a spec still reach one.
local real = package.loadlib(HW_STAND_IN_LIB, "luaopen_cuda_stand_in")
assert(real, "tests/gpu: cannot load " .. tostring(HW_STAND_IN_LIB))
local S = real()
S.driver_only()

local shim = {hardware = true}
for k, v in pairs(S) do shim[k] = v end

local function standin_only(what)
  error(setmetatable({standin_only = true, what = what},
                     {__tostring = function(e) return "needs the stand-in driver: " .. e.what end}), 0)
end

function shim.control(key) standin_only("control(" .. tostring(key) .. ")") end
function shim.query(key) standin_only("query(" .. tostring(key) .. ")") end
shim.driver_only = nil

return shim
