-- hw_stand_in.lua -- spec/cuda_spec.lua's `cuda_stand_in` module on real
-- hardware (tests/gpu/run): the foreign producer and consumer of
-- tests/cuda/stand_in_lua.c use only ordinary driver entry points, so they
-- run against libcuda.so.1 as they are; the stand-in's own controls and
-- counters (control, query) have no hardware equivalent and raise an error
-- marked `standin_only`, which the runner reports as "needs the stand-in"
-- rather than as a failure.
local real = package.loadlib(HW_STAND_IN_LIB, "luaopen_cuda_stand_in")
assert(real, "tests/gpu: cannot load " .. tostring(HW_STAND_IN_LIB))
local S = real()

local shim = {}
for k, v in pairs(S) do shim[k] = v end

local function standin_only(what)
  error(setmetatable({standin_only = true, what = what},
                     {__tostring = function(e) return "needs the stand-in driver: " .. e.what end}), 0)
end

function shim.control(key) standin_only("control(" .. tostring(key) .. ")") end
function shim.query(key) standin_only("query(" .. tostring(key) .. ")") end

return shim
