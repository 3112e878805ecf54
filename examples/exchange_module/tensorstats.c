/* tensorstats.c -- a Lua C module that takes and makes dlbridge arrays
 * without linking dlbridge: everything goes through the exchange table
 * (dlbridge_exchange.h), found in the Lua registry at run time.
 *
 *   local dl = require "dlbridge"
 *   local stats = require "tensorstats"
 *   stats.mean(dl.arange(10):astype("float32"))   --> 4.5 (float32/float64, any layout)
 *   local r = stats.ramp(5)                        --> float32 {0, 1, 2, 3, 4}, memory owned here
 *   stats.export_roundtrips(r, 1000)               --> 1000 (export + deleter, as a consumer does)
 */
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>

#include "dlbridge_exchange.h"

/* The exchange table; raises a plain Lua error when dlbridge is missing. */
static const dlb_exchange *exchange(lua_State *L) {
  const dlb_exchange *x = dlb_exchange_get(L);
  if (!x)
    luaL_error(L, "tensorstats needs dlbridge (exchange table version %d)", DLB_EXCHANGE_VERSION);
  return x;
}

/* Sum of the borrowed elements of a float32 or float64 array, any layout. */
static double sum_view(const dlb_borrowed *v) {
  const char *first = (const char *)v->data + v->byte_offset;
  int64_t index[DLB_MAX_NDIM] = {0};
  size_t itemsize = v->dtype.bits / 8;
  double sum = 0;
  for (int64_t n = 0; n < v->numel; n++) {
    int64_t offset = 0;
    for (int32_t d = 0; d < v->ndim; d++) offset += index[d] * v->strides[d];
    if (itemsize == 4) sum += ((const float *)first)[offset];
    else sum += ((const double *)first)[offset];
    for (int32_t d = v->ndim - 1; d >= 0 && ++index[d] == v->shape[d]; d--) index[d] = 0;
  }
  return sum;
}

/* stats.mean(a): the mean of a float32/float64 host array. */
static int stats_mean(lua_State *L) {
  const dlb_exchange *x = exchange(L);
  dlb_borrowed view;
  double sum;
  if (x->borrow(L, 1, &view) != DLB_OK) return lua_error(L); /* the error object is pushed */
  if (view.dtype.code != kDLFloat || (view.dtype.bits != 32 && view.dtype.bits != 64) ||
      view.device.device_type != kDLCPU) {
    x->borrow_end(&view);
    return x->raise(L, DLB_E_DTYPE, "tensorstats.mean", "convert first: a:astype(\"float32\")",
                    "tensorstats.mean reads float32 or float64 host arrays");
  }
  sum = sum_view(&view);
  x->borrow_end(&view);
  lua_pushnumber(L, view.numel ? sum / (double)view.numel : 0.0 / 0.0);
  return 1;
}

/* stats.ramp(n): a float32 array 0..n-1 whose memory this module owns. */
static int stats_ramp(lua_State *L) {
  const dlb_exchange *x = exchange(L);
  lua_Integer n = luaL_checkinteger(L, 1);
  int64_t shape[1];
  float *data;
  if (n < 0 || n > (1 << 26))
    return x->raise(L, DLB_E_SHAPE, "tensorstats.ramp", "0 <= n <= 2^26", "bad size %lld",
                    (long long)n);
  data = malloc((size_t)(n ? n : 1) * sizeof *data);
  if (!data) return x->raise(L, DLB_E_OUT_OF_MEMORY, "tensorstats.ramp", NULL, "no memory");
  for (lua_Integer i = 0; i < n; i++) data[i] = (float)i;
  shape[0] = n;
  /* free(data) runs once, when the last array or export of it is gone. */
  if (x->push_external(L, data, (DLDataType){kDLFloat, 32, 1}, 1, shape, NULL,
                       (DLDevice){kDLCPU, 0}, 0, free, data) != DLB_OK)
    return lua_error(L);
  return 1;
}

/* stats.export_roundtrips(a, n): exports a n times, calling each deleter as
 * a consumer would; returns n. */
static int stats_export_roundtrips(lua_State *L) {
  const dlb_exchange *x = exchange(L);
  lua_Integer n = luaL_checkinteger(L, 2);
  for (lua_Integer i = 0; i < n; i++) {
    DLManagedTensorVersioned *t;
    if (x->export_versioned(L, 1, NULL, &t) != DLB_OK) return lua_error(L);
    t->deleter(t);
  }
  lua_pushinteger(L, n);
  return 1;
}

/* DLB_API: exported even where symbols are hidden by default. */
DLB_API int luaopen_tensorstats(lua_State *L);

DLB_API int luaopen_tensorstats(lua_State *L) {
  static const luaL_Reg functions[] = {{"mean", stats_mean},
                                       {"ramp", stats_ramp},
                                       {"export_roundtrips", stats_export_roundtrips},
                                       {NULL, NULL}};
  exchange(L);     /* fail at require time when dlbridge is missing */
  lua_newtable(L); /* (luaL_newlib is 5.2+: this builds on every Lua) */
  for (const luaL_Reg *f = functions; f->name; f++) {
    lua_pushcfunction(L, f->func);
    lua_setfield(L, -2, f->name);
  }
  return 1;
}
