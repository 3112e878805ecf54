/* data.c -- Array methods that read, write or copy elements. */
#include <stdio.h>
#include <string.h>
#include "../core/event.h"
#include "../core/shape.h"
#include "internal.h"

/* a:copy(): a new contiguous array with the same elements. */
static int data_copy(lua_State *L) {
  dlb_array *c, *a;
  dlb_error err;
  if (lua_gettop(L) > 1) { /* self's error before the extra argument's */
    dlbL_check_array(L, 1, "Array:copy");
    dlbL_check_nargs(L, 1, "Array:copy");
  }
  a = dlbL_push_result(L, 1, 0, &c, "Array:copy");
  if (dlb_array_clone(c, a, a->dtype, &err) != DLB_OK) dlbL_raise_error(L, &err, "Array:copy");
  return 1;
}

/* a:astype(dtype): a converted copy (NumPy's casting="unsafe", see dtype.h). */
static int data_astype(lua_State *L) {
  dlb_dtype dtype;
  dlb_array *c, *a;
  dlb_error err;
  dlbL_check_array(L, 1, "Array:astype");
  dlbL_check_nargs(L, 2, "Array:astype");
  dtype = dlbL_check_dtype(L, 2, "Array:astype");
  a = dlbL_push_result(L, 1, dlb_dtype_get(dtype)->itemsize, &c, "Array:astype");
  if (dlb_array_clone(c, a, dtype, &err) != DLB_OK) dlbL_raise_error(L, &err, "Array:astype");
  return 1;
}

/* a:fill(v): every element becomes v; returns a. */
static int data_fill(lua_State *L) {
  dlb_array *a;
  dlb_scalar v;
  dlb_error err;
  dlbL_check_array(L, 1, "Array:fill");
  dlbL_check_nargs(L, 2, "Array:fill");
  dlbL_to_scalar(L, 2, &v, "Array:fill");
  a = dlbL_check_live(L, 1, "Array:fill"); /* after anything that can run Lua code */
  if (dlb_array_fill(a, &v, &err) != DLB_OK) dlbL_raise_error(L, &err, "Array:fill");
  lua_settop(L, 1);
  return 1;
}

void dlbL_assign(lua_State *L, int didx, int vidx, const char *op) {
  dlb_array *dst, *b;
  dlb_error err;
  didx = lua_absindex(L, didx);
  vidx = lua_absindex(L, vidx);
  /* Lua code can run below (allocations run finalizers): dst and src are
   * fetched from their slots and checked for deletion right before the
   * core uses them (records.c), and the source is held through a private
   * view. */
  if (!dlbL_to_array(L, vidx) && lua_type(L, vidx) != LUA_TTABLE) {
    dlb_scalar v;
    dlbL_to_scalar(L, vidx, &v, op);
    dst = dlbL_check_live(L, didx, op);
    if (dlb_array_fill(dst, &v, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
    return;
  }
  if (!dlbL_to_array(L, vidx)) {
    dlbL_array_from_lua(L, vidx, 1, dlbL_check_live(L, didx, op)->dtype, op);
    vidx = lua_gettop(L);
  }
  /* Broadcast the source to dst's shape (a view, nothing is copied yet). */
  b = dlbL_push_view(L, vidx, op);
  if (!b->buffer) dlbL_raise(L, DLB_E_DELETED, op, "the source array was deleted");
  dst = dlbL_check_live(L, didx, op);
  if (dlb_view_expand(b, dst->ndim, dst->shape, &err) != DLB_OK) {
    if (err.code == DLB_E_SHAPE)
      dlb_error_hint(&err, "the source must broadcast to the destination: the same trailing "
                           "extents, or extent 1 where they differ");
    dlbL_raise_error(L, &err, op);
  }
  if (dlb_array_copy_into(dst, b, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
  dlb_array_release(b);
}

/* a:copy_from(src): src (an array, nested tables or a scalar) broadcast to
 * a's shape and cast to a's dtype; returns a. */
static int data_copy_from(lua_State *L) {
  dlbL_check_live(L, 1, "Array:copy_from");
  dlbL_check_nargs(L, 2, "Array:copy_from");
  if (lua_isnone(L, 2))
    dlbL_raise_hint(L, DLB_E_ARGUMENT, "Array:copy_from",
                    "the source is an array, nested tables or a number, broadcast to a's shape: "
                    "a:copy_from(b), a:copy_from{1, 2, 3}, a:copy_from(0)",
                    "a:copy_from(src) needs a source");
  dlbL_assign(L, 1, 2, "Array:copy_from");
  lua_settop(L, 1);
  return 1;
}

static int totable_unprotected(lua_State *L) {
  /* A private view: building the tables runs the GC, and a finalizer could
   * delete a, but not this view. */
  dlb_array *v = dlbL_pin(L, 1, "Array:totable");
  dlbL_push_table(L, v, "Array:totable");
  return 1;
}

/* a:totable(): nested tables (a scalar for a 0-d array). */
static int data_totable(lua_State *L) {
  dlbL_check_nargs(L, 1, "Array:totable");
  return dlbL_call_protected(L, totable_unprotected, "Array:totable");
}

static int tobytes_unprotected(lua_State *L) {
  dlb_array *a = dlbL_check_live(L, 1, "Array:tobytes");
  size_t nbytes;
  luaL_Buffer b;
  dlb_error err;
  char *out;
  if (dlb_shape_nbytes(a->numel, dlb_array_itemsize(a), &nbytes, &err) != DLB_OK)
    dlbL_raise(L, DLB_E_OUT_OF_MEMORY, "Array:tobytes", "%lld elements do not fit in memory",
               (long long)a->numel);
  dlbL_reserve_lua(L, nbytes, "Array:tobytes", "a string");
  out = dlbL_string_room(L, &b, nbytes);
  if (!out) /* (LuaJIT: 2 GiB at most) */
    dlbL_raise(L, DLB_E_OUT_OF_MEMORY, "Array:tobytes",
               "%zu bytes are more than a Lua string holds", (size_t)(nbytes));
  a = dlbL_check_live(L, 1, "Array:tobytes"); /* after an allocation: fetched again (records.c) */
  if (dlb_array_read_into(a, out, a->dtype, &err) != DLB_OK)
    dlbL_raise_error(L, &err, "Array:tobytes");
  dlbL_pushresultsize(L, &b, nbytes);
  return 1;
}

/* a:tobytes(): the elements in row-major order, as a string of raw bytes. */
static int data_tobytes(lua_State *L) {
  dlbL_check_nargs(L, 1, "Array:tobytes");
  return dlbL_call_protected(L, tobytes_unprotected, "Array:tobytes");
}

/* The FFI element type of each dtype (float16/bfloat16: their bits). */
static const char *const pointer_ctypes[DLB_DTYPE_COUNT] = {[DLB_BOOL] = "bool *",
                                                            [DLB_INT8] = "int8_t *",
                                                            [DLB_INT16] = "int16_t *",
                                                            [DLB_INT32] = "int32_t *",
                                                            [DLB_INT64] = "int64_t *",
                                                            [DLB_UINT8] = "uint8_t *",
                                                            [DLB_UINT16] = "uint16_t *",
                                                            [DLB_UINT32] = "uint32_t *",
                                                            [DLB_UINT64] = "uint64_t *",
                                                            [DLB_FLOAT16] = "uint16_t *",
                                                            [DLB_BFLOAT16] = "uint16_t *",
                                                            [DLB_FLOAT32] = "float *",
                                                            [DLB_FLOAT64] = "double *",
                                                            [DLB_COMPLEX64] = "complex float *",
                                                            [DLB_COMPLEX128] = "complex double *"};

/* a:ptr(): on LuaJIT, a typed FFI pointer to element 1 (const for a
 * read-only array); nil for size 0. The array must stay alive (referenced)
 * while the pointer is used: the pointer does not keep it. */
static int data_ptr(lua_State *L) {
  dlb_array *a = dlbL_check_live(L, 1, "Array:ptr");
  char ctype[32];
  char *p;
  dlbL_check_nargs(L, 1, "Array:ptr");
  if (!dlbL_pointers_allowed(dlbL_state(L))) /* (first: the same answer on every Lua) */
    dlbL_raise_hint(
        L, DLB_E_UNSUPPORTED, "Array:ptr",
        "the host turned raw pointers off (dlb_allow_pointers); use a[i] or a:totable()",
        "this host does not let scripts hold raw pointers");
  if (!DLB_LUA_IS_JIT)
    dlbL_raise_hint(L, DLB_E_UNSUPPORTED, "Array:ptr",
                    "a:tobytes() copies the elements out; C code shares them through DLPack "
                    "(a:to_dlpack()) or the C API",
                    "a:ptr() needs LuaJIT's FFI; this is Lua %s", DLB_LUA_NAME);
  if (a->numel == 0) {
    lua_pushnil(L);
    return 1;
  }
  p = dlb_array_host_data(a);
  if (!p)
    dlbL_raise_hint(L, DLB_E_BACKEND_INCOMPATIBLE, "Array:ptr",
                    "dl.device_put(a, \"cpu\"):ptr() points at a host copy",
                    "the memory of a %s array is not host memory", a->buffer->backend->name);
  if (a->buffer->pending) { /* host memory a queue still writes: wait for it */
    dlb_error err;
    if (dlb_buffer_sync_host(a->buffer, &err) != DLB_OK) dlbL_raise_error(L, &err, "Array:ptr");
  }
  snprintf(ctype, sizeof ctype, "%s%s", a->readonly ? "const " : "", pointer_ctypes[a->dtype]);
  if (!dlbL_push_pointer(L, p, ctype))
    dlbL_raise_hint(L, DLB_E_UNSUPPORTED, "Array:ptr",
                    "the host opens LuaJIT's ffi library (luaL_openlibs does) before dlbridge",
                    "a:ptr() needs LuaJIT's ffi library, which this host did not open");
  return 1;
}

const luaL_Reg dlbL_data_methods[] = {{"copy", data_copy},       {"astype", data_astype},
                                      {"fill", data_fill},       {"copy_from", data_copy_from},
                                      {"totable", data_totable}, {"tobytes", data_tobytes},
                                      {"ptr", data_ptr},         {NULL, NULL}};
