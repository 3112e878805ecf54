/* capi_oom.c -- Lua running out of memory in the middle of DLPack calls.
 * An allocator fails the Nth allocation after arm(N); for every N the
 * export, the import, the host pushes and tostring either succeed or fail,
 * and every producer's deleter still runs exactly once (checked after
 * lua_close; ASan's leak check sees anything left behind). */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <stdlib.h>
#include "check.h"
#include "dlbridge.h"

static long fail_after = -1; /* allocations left before they fail; -1: never */
static long fail_count = -1; /* how many fail then; -1: all until disarmed */

static void *failing_alloc(void *ud, void *p, size_t old, size_t n) {
  if (n == 0) {
    free(p);
    return NULL;
  }
  /* From the nth growing allocation on, every one fails until disarmed (or
   * fail_count of them): Lua retries a failed allocation once, after an
   * emergency collection, so two failures make one allocation fail. */
  if (n > old && fail_after >= 0) {
    if (fail_after == 0 && fail_count != 0) {
      if (fail_count > 0) fail_count--;
      return NULL;
    }
    if (fail_after > 0) fail_after--;
  }
  return realloc(p, n);
}

static int made, deleted;
static double data[4] = {1, 2, 3, 4};
static int64_t shape[1] = {4};

static void count_delete(DLManagedTensorVersioned *self) {
  deleted++;
  free(self);
}

static DLManagedTensorVersioned *new_tensor(void) {
  DLManagedTensorVersioned *t = calloc(1, sizeof *t);
  t->version.major = 1;
  t->deleter = count_delete;
  t->dl_tensor.data = data;
  t->dl_tensor.device.device_type = kDLCPU;
  t->dl_tensor.ndim = 1;
  t->dl_tensor.shape = shape;
  t->dl_tensor.dtype.code = kDLFloat;
  t->dl_tensor.dtype.bits = 64;
  t->dl_tensor.dtype.lanes = 1;
  made++;
  return t;
}

/* arm(n): Lua allocations fail from the nth from now on; arm() disarms. */
static int arm(lua_State *L) {
  fail_after = lua_isnoneornil(L, 1) ? -1 : (long)lua_tointeger(L, 1);
  fail_count = -1;
  return 0;
}

/* Whether this Lua retries a failed allocation (after an emergency
 * collection: 5.2+; not 5.1 nor LuaJIT), found by failing one allocation
 * of a chunk: with the retry it runs. */
static int lua_retries(void) {
  static int retries = -1;
  if (retries < 0) {
    lua_State *L = lua_newstate(failing_alloc, NULL);
    luaL_openlibs(L);
    fail_after = 0;
    fail_count = 1;
    retries = luaL_dostring(L, "return string.rep('x', 4096)") == LUA_OK;
    fail_after = -1;
    lua_close(L);
  }
  return retries;
}

/* arm_once(n): the nth allocation from now fails for good (it and Lua's
 * retry, where it retries), and later ones succeed: the error object can
 * always be made. */
static int arm_once(lua_State *L) {
  fail_after = (long)lua_tointeger(L, 1);
  fail_count = lua_retries() ? 2 : 1;
  return 0;
}

/* make_capsule(): a capsule owning a fresh counted tensor. */
static int make_capsule(lua_State *L) {
  if (dlb_push_capsule_versioned(L, new_tensor()) != DLB_OK) return lua_error(L);
  return 1;
}

/* push_armed(n, as_capsule): the host hands a tensor over while allocation n fails. */
static int push_armed(lua_State *L) {
  long n = (long)lua_tointeger(L, 1);
  int as_capsule = lua_toboolean(L, 2);
  DLManagedTensorVersioned *t = new_tensor();
  dlb_status st;
  lua_settop(L, 0);
  fail_after = n;
  /* Under memory pressure pushing the error object can itself raise Lua's
   * memory error: the caller pcalls, and the tensor was handed back first. */
  st = as_capsule ? dlb_push_capsule_versioned(L, t) : dlb_push_versioned(L, t);
  fail_after = -1;
  lua_pushboolean(L, st == DLB_OK);
  return 1;
}

static const char *workload =
    "local dl = require 'dlbridge'\n"
    "local failures = 0\n"
    "for n = 0, 80 do\n"
    "  local a = dl.zeros(4)\n"
    "  arm(n); local ok, e = pcall(a.to_dlpack, a); arm()\n"
    "  if not ok then failures = failures + 1 end\n"
    "  local c = make_capsule()\n"
    "  arm(n); ok = pcall(dl.from_dlpack, c); arm()\n"
    "  local r = dl.arange(20)\n"
    "  arm(n); ok = pcall(tostring, r); arm()\n"
    "  pcall(push_armed, n, false); arm(); pcall(push_armed, n, true); arm()\n"
    "  collectgarbage(); collectgarbage()\n"
    "end\n"
    "return failures\n";

/* Where Lua runs out of memory inside dlbridge and the error object can be
 * made, the script gets a dlbridge.Error OUT_OF_MEMORY, never Lua's plain
 * "not enough memory" string; the state stays usable. The arguments are
 * made beforehand: an allocation of the script's own is not dlbridge's. */
static const char *coded_workload =
    "local dl = require 'dlbridge'\n"
    "local function on_gc(f) -- f finalizes it (5.1, LuaJIT: userdata only)\n"
    "  if newproxy then local u = newproxy(true); getmetatable(u).__gc = f; return u end\n"
    "  return setmetatable({}, {__gc = f})\n"
    "end\n"
    "local M = dl.zeros{4, 4}\n"
    "local shape, sixteen, copy_opts = {4}, {16}, {copy = true}\n"
    "local T, nested, CAP = M:transpose(), {{1, 2}, {3, 4}}, M:to_dlpack()\n"
    "local ops = {\n"
    "  {'dl.zeros', function() return dl.zeros(shape) end},\n"
    "  {'a[i] view', function() return M[1] end},\n"
    "  {'a:view', function() return M:view(sixteen) end},\n"
    "  {'a:to_dlpack', function() return M:to_dlpack() end},\n"
    "  {'dl.from_dlpack', function() return dl.from_dlpack(M) end},\n"
    "  {'a:copy', function() return M:copy() end},\n"
    "  {'a:transpose', function() return M:transpose() end},\n"
    "  {'dl.device_put', function() return dl.device_put(M, 'cpu', copy_opts) end},\n"
    "  {'host push', function() return push_armed_coded() end},\n"
    "  {'a:astype', function() return M:astype('float32') end},\n"
    "  {'a:contiguous', function() return T:contiguous() end},\n"
    "  {'a:reshape', function() return T:reshape(sixteen) end},\n"
    "  {'a:totable', function() return M:totable() end},\n"
    "  {'tostring', function() return tostring(M) end},\n"
    "  {'a.shape', function() return M.shape end},\n"
    "  {'dl.array', function() return dl.array(nested) end},\n"
    "  {'dl.arange', function() return dl.arange(10) end},\n"
    "  {'dl.memory', function() return dl.memory() end},\n"
    "  {'dl.backends', function() return dl.backends() end},\n"
    "  {'dl.dtypes', function() return dl.dtypes() end},\n"
    "  {'capsule.device', function() return CAP.device end},\n"
    "  {'capsule.version', function() return CAP.version end},\n"
    "}\n"
    "local failures, wrong = 0, {}\n"
    "for _, op in ipairs(ops) do\n"
    "  for n = 0, 30 do\n"
    "    local f = op[2]\n"
    "    arm_once(n); local ok, e = pcall(f); arm()\n"
    "    if not ok then\n"
    "      failures = failures + 1\n"
    "      if not dl.is_error(e) or e.code ~= 'OUT_OF_MEMORY' then\n"
    "        wrong[#wrong + 1] = op[1] .. ', allocation ' .. n .. ': ' .. tostring(e)\n"
    "      end\n"
    "    end\n"
    "    assert(M[2][3] == 0 and dl.zeros(shape).size == 4)  -- still usable\n"
    "  end\n"
    "end\n"
    "-- Under a memory budget too: a refusal runs a full GC first, inside the call.\n"
    "local function warm(n) if n > 0 then return warm(n - 1) + 0 end return 0 end\n"
    "collectgarbage() collectgarbage() limit(dl.memory().in_use + 16)\n"
    "local big = {4096}\n"
    "local budget_ops = {\n"
    "  {'dl.zeros over budget', function() return dl.zeros(big) end},\n"
    "  {'host push over budget', function() return push_armed_coded() end},\n"
    "  {'dl.from_dlpack over budget', function() return dl.from_dlpack(make_capsule()) end},\n"
    "}\n"
    "for _, op in ipairs(budget_ops) do\n"
    "  for n = 0, 30 do\n"
    "    on_gc(function() local x = {} end)  -- garbage with a finalizer\n"
    "    warm(12)  -- the GC frees call frames: make the script's own before arming\n"
    "    arm_once(n); local ok, e = pcall(op[2]); arm()\n"
    "    if ok or not dl.is_error(e) or e.code ~= 'OUT_OF_MEMORY' then\n"
    "      wrong[#wrong + 1] = op[1] .. ', allocation ' .. n .. ': ' .. tostring(e)\n"
    "    end\n"
    "  end\n"
    "end\n"
    "limit(0)\n"
    "if #wrong > 0 then error(table.concat(wrong, '\\n'), 0) end\n"
    "return failures\n";

/* limit(bytes): dlb_set_memory_limit, as the host would. */
static int limit(lua_State *L) {
  if (dlb_set_memory_limit(L, (size_t)lua_tointeger(L, 1)) != DLB_OK) return lua_error(L);
  return 0;
}

/* push_armed_coded(): the host pushes a tensor; raises what it pushed. */
static int push_armed_coded(lua_State *L) {
  if (dlb_push_versioned(L, new_tensor()) != DLB_OK) return lua_error(L);
  return 1;
}

static void test_coded_errors(void) {
  lua_State *L;
  lua_retries(); /* probed before the workload arms the allocator */
  L = lua_newstate(failing_alloc, NULL);
  luaL_openlibs(L);
  dlb_preload(L);
  lua_register(L, "arm", arm);
  lua_register(L, "arm_once", arm_once);
  lua_register(L, "push_armed_coded", push_armed_coded);
  lua_register(L, "limit", limit);
  lua_register(L, "make_capsule", make_capsule);
  if (luaL_dostring(L, coded_workload) != LUA_OK) {
    fprintf(stderr, "coded workload: %s\n", lua_tostring(L, -1));
    CHECK(0);
  } else {
    CHECK(lua_tointeger(L, -1) > 0); /* some calls really failed */
  }
  lua_close(L);
}

int main(void) {
  lua_State *L = lua_newstate(failing_alloc, NULL);
  luaL_openlibs(L);
  dlb_preload(L);
  lua_register(L, "arm", arm);
  lua_register(L, "make_capsule", make_capsule);
  lua_register(L, "push_armed", push_armed);
  if (luaL_dostring(L, workload) != LUA_OK) {
    fprintf(stderr, "workload: %s\n", lua_tostring(L, -1));
    CHECK(0);
  } else {
    CHECK(lua_tointeger(L, -1) > 0); /* some exports really failed */
  }
  lua_close(L);
  CHECK(made > 0);
  CHECK_EQ_INT(deleted, made); /* every producer's deleter ran, exactly once */
  test_coded_errors();
  CHECK_EQ_INT(deleted, made);
  return check_done("capi_oom");
}
