// host.cpp -- a C++ host built against the installed package with
// find_package(dlbridge) alone: it embeds Lua, wraps engine memory held by
// C++ objects, reads arrays from C++, and shows the safe way to fail from C++.
//
// Lua errors are longjmps (Debian's liblua5.4 is C): a lua_error or dlb_raise
// jumps over every C++ frame between it and the pcall, and their destructors
// never run. The pattern used here:
//   1. every C++ object of a lua_CFunction lives inside `protect`'s body;
//   2. dlb_* functions report failure by status (the error object is pushed),
//      never by jumping: the body turns a status into a C++ exception;
//   3. `protect` catches, lets the destructors run, and only then raises the
//      error at the outermost frame of the function, where nothing is left
//      to destroy.
#include <lua.hpp>

#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <dlbridge.h>

namespace {

int live_objects = 0; // C++ objects alive: 0 after every call, error or not

// Counts itself, so that a skipped destructor shows.
struct Tracked {
  Tracked() { ++live_objects; }
  Tracked(const Tracked &) { ++live_objects; }
  ~Tracked() { --live_objects; }
};

// A dlb_* call failed: its error object is on the Lua stack.
struct dlbridge_failed {};

// Throws dlbridge_failed when a dlb_* call failed.
void check(dlb_status st) {
  if (st != DLB_OK) throw dlbridge_failed{};
}

// Runs body (which returns its number of results and may throw); raises the
// failure as a dlbridge.Error once every C++ object of body is destroyed.
template <class Body> int protect(lua_State *L, const char *op, Body body) {
  dlb_status code = DLB_OK;
  char message[256] = "";
  bool pushed = false;
  try {
    return body();
  } catch (const dlbridge_failed &) {
    pushed = true;
  } catch (const std::bad_alloc &) {
    code = DLB_E_OUT_OF_MEMORY;
    std::snprintf(message, sizeof message, "the engine ran out of memory");
  } catch (const std::exception &e) {
    code = DLB_E_BACKEND_FAILURE;
    std::snprintf(message, sizeof message, "%s", e.what());
  }
  // Only plain C data is alive in this frame now.
  if (pushed) return lua_error(L);
  return dlb_raise(L, code, op, "see the engine's log", "%s", message);
}

// engine.sum(a): the sum of a float64 array of any layout, read in place.
int engine_sum(lua_State *L) {
  return protect(L, "engine.sum", [L] {
    Tracked guard;
    std::vector<double> scratch(16); // a C++ object the error path must free
    dlb_borrowed view;
    check(dlb_borrow(L, 1, &view));
    std::unique_ptr<dlb_borrowed, void (*)(dlb_borrowed *)> hold(&view, dlb_borrow_end);
    if (view.dtype.code != kDLFloat || view.dtype.bits != 64)
      throw std::invalid_argument("engine.sum reads float64 arrays");
    const double *first =
        reinterpret_cast<const double *>(static_cast<const char *>(view.data) + view.byte_offset);
    double sum = 0;
    std::vector<int64_t> index(view.ndim, 0);
    for (int64_t n = 0; n < view.numel; n++) {
      int64_t offset = 0;
      for (int32_t d = 0; d < view.ndim; d++) offset += index[d] * view.strides[d];
      sum += first[offset];
      for (int32_t d = view.ndim - 1; d >= 0 && ++index[d] == view.shape[d]; d--) index[d] = 0;
    }
    lua_pushnumber(L, sum);
    return 1;
  });
}

// Engine memory owned by C++: released by dlbridge when Lua is done with it.
struct Mesh {
  Tracked guard;
  std::vector<float> vertices;
};

// engine.mesh(n): n vertices (x, y, z) owned by a C++ Mesh, as a float32 {n, 3} array.
int engine_mesh(lua_State *L) {
  lua_Integer n = luaL_checkinteger(L, 1); // may raise: no C++ object exists yet
  return protect(L, "engine.mesh", [L, n] {
    if (n < 0 || n > (1 << 20)) throw std::length_error("mesh size out of range");
    auto mesh = std::make_unique<Mesh>();
    mesh->vertices.resize(static_cast<size_t>(n) * 3);
    std::iota(mesh->vertices.begin(), mesh->vertices.end(), 0.0f);
    const int64_t shape[] = {n, 3};
    Mesh *owner = mesh.release(); // dlbridge owns it from here, even on failure
    check(dlb_push_external(
        L, owner->vertices.data(), DLDataType{kDLFloat, 32, 1}, 2, shape, nullptr,
        DLDevice{kDLCPU, 0}, 0, [](void *ctx) { delete static_cast<Mesh *>(ctx); }, owner));
    return 1;
  });
}

// engine.fail(): a C++ exception with a string and a vector alive.
int engine_fail(lua_State *L) {
  return protect(L, "engine.fail", []() -> int {
    Tracked guard;
    std::string detail(100, 'x');
    std::vector<int> data(1000);
    throw std::runtime_error("the engine refused the job");
  });
}

const char *script = R"(
local dl = require "dlbridge"
local a = dl.arange(12, {dtype = "float64"}):view{3, 4}
assert(engine.sum(a) == 66)
assert(engine.sum(a:T():slice(1, -1, 1, -1)) == 66)       -- any layout
local ok, err = pcall(engine.sum, "not an array")
assert(not ok and err.code == "ARGUMENT" and err.op == "dlb_borrow", tostring(err))
ok, err = pcall(engine.sum, dl.zeros({2}, {dtype = "int32"}))
assert(not ok and err.code == "BACKEND_FAILURE" and err.op == "engine.sum", tostring(err))
local d = dl.zeros{2}; d:delete()
ok, err = pcall(engine.sum, d)
assert(not ok and err.code == "DELETED", tostring(err))
ok, err = pcall(engine.fail)
assert(not ok and err.code == "BACKEND_FAILURE" and err.message:find("refused"), tostring(err))
local m = engine.mesh(4)
assert(m.dtype == "float32" and m.shape[1] == 4 and m:get(4, 3) == 11)
m[2][1] = 100                                              -- written in the C++ vector
assert(engine.sum(m:astype("float64")) == 66 - 3 + 100)
ok, err = pcall(engine.mesh, -1)
assert(not ok and err.code == "BACKEND_FAILURE", tostring(err))
print("c++ host: ok " .. dl.version)
)";

} // namespace

int main() {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  dlb_preload(L);
  static const luaL_Reg engine[] = {
      {"sum", engine_sum}, {"mesh", engine_mesh}, {"fail", engine_fail}, {nullptr, nullptr}};
  lua_newtable(L); /* (luaL_newlib is 5.2+) */
  for (const luaL_Reg *f = engine; f->name; f++) {
    lua_pushcfunction(L, f->func);
    lua_setfield(L, -2, f->name);
  }
  lua_setglobal(L, "engine");
  int ok = luaL_dostring(L, script) == 0; /* (written for every Lua from 5.1 on) */
  if (!ok)
    std::fprintf(stderr, "%s\n", lua_tostring(L, -1) ? lua_tostring(L, -1) : "(error object)");
  lua_close(L); // frees the meshes still held by Lua
  if (live_objects != 0) {
    std::fprintf(stderr, "c++ host: %d C++ objects were never destroyed\n", live_objects);
    ok = 0;
  }
  return ok ? 0 : 1;
}
