/* dlpack_producer.c -- a foreign DLPack peer for the specs: it makes tensors
 * of any geometry (strides, byte_offset, overlap, size 0) over memory of its
 * own, and consumes dlbridge's capsules as a C consumer would. It stands in
 * for PyTorch or NumPy in spec/dlpack_foreign_spec.lua.
 *
 *   local P = require "dlpack_producer"
 *   local cap = P.capsule{dtype = "float64", shape = {4, 3}, strides = {0, 1},
 *                         byte_offset = 0, values = {...}, legacy = false,
 *                         readonly = false}
 *   P.deletes()          -- deleter calls of P's tensors so far
 *   P.consume(capsule)   -- {versioned =, data_null =, data_align =, shape =,
 *                        --  strides =, byte_offset =}; then calls the deleter
 *
 * values are the elements in row-major order of the logical index (numel of
 * them); with overlapping strides the last value written to an element
 * stays. strides nil: the tensor's strides are NULL (compact row-major).
 * The module links libdlbridge for dlb_push_capsule_* and dlb_capsule_take
 * (dlbridge.core is loaded RTLD_LOCAL), as tests/backend/testbackend.c does. */
#define _GNU_SOURCE /* dladdr, RTLD_NODELETE (lua_module_pin.h) */
#include <lauxlib.h>
#include <lua.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "dlbridge.h"
#include "../lua_module_pin.h"

/* At most this many bytes of memory behind one tensor. */
#define MAX_BLOCK ((int64_t)1 << 24)

typedef struct producer_tensor {
  DLManagedTensorVersioned versioned;
  DLManagedTensor legacy;
  int64_t shape[DLB_MAX_NDIM], strides[DLB_MAX_NDIM];
  unsigned char *block;
} producer_tensor;

static int deletes;

static void release(producer_tensor *t) {
  deletes++;
  free(t->block);
  free(t);
}

static void delete_versioned(DLManagedTensorVersioned *self) { release(self->manager_ctx); }
static void delete_legacy(DLManagedTensor *self) { release(self->manager_ctx); }

typedef struct dtype_info {
  const char *name;
  DLDataType dl;
  int size;
} dtype_info;

static const dtype_info dtypes[] = {{"float64", {kDLFloat, 64, 1}, 8},
                                    {"float32", {kDLFloat, 32, 1}, 4},
                                    {"int64", {kDLInt, 64, 1}, 8},
                                    {"int32", {kDLInt, 32, 1}, 4}};

static const dtype_info *check_dtype(lua_State *L, const char *name) {
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (strcmp(dtypes[i].name, name) == 0) return &dtypes[i];
  luaL_error(L, "dlpack_producer: no dtype '%s' (float64, float32, int64, int32)", name);
  return NULL;
}

/* Stores the Lua number at the top of the stack (checked by check_values)
 * as one element at p. */
static void store(lua_State *L, const dtype_info *t, unsigned char *p) {
  if (t->dl.code == kDLFloat && t->size == 8) {
    double v = lua_tonumber(L, -1);
    memcpy(p, &v, sizeof v);
  } else if (t->dl.code == kDLFloat) {
    float v = (float)lua_tonumber(L, -1);
    memcpy(p, &v, sizeof v);
  } else if (t->size == 8) {
    int64_t v = (int64_t)lua_tointeger(L, -1);
    memcpy(p, &v, sizeof v);
  } else {
    int32_t v = (int32_t)lua_tointeger(L, -1);
    memcpy(p, &v, sizeof v);
  }
}

/* Reads the integer list field `key` of the table at idx into out (at most
 * DLB_MAX_NDIM entries); returns its length, or -1 when the field is nil. */
static int int_list(lua_State *L, int idx, const char *key, int64_t *out) {
  int n;
  if (lua_getfield(L, idx, key) == LUA_TNIL) {
    lua_pop(L, 1);
    return -1;
  }
  luaL_checktype(L, -1, LUA_TTABLE);
  n = (int)lua_rawlen(L, -1);
  if (n > DLB_MAX_NDIM)
    luaL_error(L, "dlpack_producer: %s has more than %d entries", key, DLB_MAX_NDIM);
  for (int i = 0; i < n; i++) {
    lua_rawgeti(L, -1, i + 1);
    out[i] = (int64_t)luaL_checkinteger(L, -1);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return n;
}

/* Element count and reach (lowest and highest element offset) of the
 * geometry, or a Lua error when anything overflows. */
static int64_t measure(lua_State *L, int ndim, const int64_t *shape, const int64_t *strides,
                       int64_t *lo, int64_t *hi) {
  int64_t numel = 1;
  *lo = *hi = 0;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0) luaL_error(L, "dlpack_producer: negative extent");
    if (__builtin_mul_overflow(numel, shape[d], &numel))
      luaL_error(L, "dlpack_producer: the element count overflows");
  }
  if (numel == 0) return 0;
  for (int d = 0; d < ndim; d++) {
    int64_t span;
    if (shape[d] == 1) continue;
    if (__builtin_mul_overflow(shape[d] - 1, strides[d], &span) ||
        (span > 0 ? __builtin_add_overflow(*hi, span, hi) : __builtin_add_overflow(*lo, span, lo)))
      luaL_error(L, "dlpack_producer: the strides overflow");
  }
  return numel;
}

/* Writes values[k] (the table at idx) at element k of the row-major order. */
static void fill(lua_State *L, int idx, const dtype_info *t, const producer_tensor *x, int ndim,
                 int64_t numel, unsigned char *first) {
  int64_t index[DLB_MAX_NDIM] = {0};
  for (int64_t k = 0; k < numel; k++) {
    int64_t offset = 0;
    for (int d = 0; d < ndim; d++)
      if (index[d]) offset += index[d] * x->strides[d]; /* inside the measured reach */
    lua_rawgeti(L, idx, k + 1);
    store(L, t, first + offset * t->size);
    lua_pop(L, 1);
    for (int d = ndim - 1; d >= 0 && ++index[d] == x->shape[d]; d--) index[d] = 0;
  }
}

/* Raises unless every value is a number (an integer for integer dtypes):
 * checked before anything is allocated, so an error leaks nothing. */
static void check_values(lua_State *L, int idx, const dtype_info *t, int64_t numel) {
  if ((int64_t)lua_rawlen(L, idx) != numel)
    luaL_error(L, "dlpack_producer: %d values for %d elements", (int)lua_rawlen(L, idx),
               (int)numel);
  for (int64_t k = 1; k <= numel; k++) {
    int ok = lua_rawgeti(L, idx, k) == LUA_TNUMBER &&
             (t->dl.code == kDLFloat || floor(lua_tonumber(L, -1)) == lua_tonumber(L, -1));
    lua_pop(L, 1);
    if (!ok) luaL_error(L, "dlpack_producer: value %d is not a %s", (int)k, t->name);
  }
}

/* P.capsule(spec): a capsule owning a new tensor of P's. */
static int p_capsule(lua_State *L) {
  const dtype_info *t;
  producer_tensor *x;
  DLTensor dl;
  int64_t shape[DLB_MAX_NDIM], strides[DLB_MAX_NDIM];
  int ndim, has_strides, legacy, readonly, values;
  int64_t numel, lo, hi, byte_offset, bytes;
  dlb_status st;
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  lua_getfield(L, 1, "dtype");
  t = check_dtype(L, luaL_checkstring(L, -1));
  ndim = int_list(L, 1, "shape", shape);
  if (ndim < 0) ndim = 0;
  has_strides = int_list(L, 1, "strides", strides) >= 0;
  if (!has_strides) { /* compact row-major, for placing the values */
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
      strides[d] = s;
      if (shape[d] > 1 && __builtin_mul_overflow(s, shape[d], &s)) s = 0;
    }
  }
  lua_getfield(L, 1, "byte_offset");
  byte_offset = (int64_t)luaL_optinteger(L, -1, 0);
  lua_getfield(L, 1, "legacy");
  legacy = lua_toboolean(L, -1);
  lua_getfield(L, 1, "readonly");
  readonly = lua_toboolean(L, -1);
  lua_getfield(L, 1, "values");
  luaL_checktype(L, -1, LUA_TTABLE);
  values = lua_gettop(L);
  numel = measure(L, ndim, shape, strides, &lo, &hi);
  check_values(L, values, t, numel);
  if (byte_offset < 0 || byte_offset > MAX_BLOCK || hi - lo >= MAX_BLOCK / 16)
    return luaL_error(L, "dlpack_producer: too much memory");
  bytes = numel ? (hi - lo + 1) * t->size + byte_offset : 16;
  x = calloc(1, sizeof *x);
  if (x) x->block = malloc((size_t)bytes);
  if (!x || !x->block) {
    free(x);
    return luaL_error(L, "dlpack_producer: out of memory");
  }
  memcpy(x->shape, shape, sizeof shape);
  memcpy(x->strides, strides, sizeof strides);
  /* element 0...0 at block + byte_offset - lo * size: the lowest element
   * the geometry reaches sits at block + byte_offset */
  if (numel) fill(L, values, t, x, ndim, numel, x->block + byte_offset - lo * t->size);
  dl.data = x->block;
  dl.device.device_type = kDLCPU;
  dl.device.device_id = 0;
  dl.ndim = ndim;
  dl.dtype = t->dl;
  dl.shape = ndim ? x->shape : NULL;
  dl.strides = ndim && has_strides ? x->strides : NULL;
  dl.byte_offset = (uint64_t)(byte_offset - lo * t->size);
  if (legacy) {
    x->legacy.dl_tensor = dl;
    x->legacy.manager_ctx = x;
    x->legacy.deleter = delete_legacy;
    st = dlb_push_capsule_legacy(L, &x->legacy);
  } else {
    x->versioned.version.major = 1;
    x->versioned.version.minor = 3;
    x->versioned.dl_tensor = dl;
    x->versioned.manager_ctx = x;
    x->versioned.deleter = delete_versioned;
    x->versioned.flags = readonly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
    st = dlb_push_capsule_versioned(L, &x->versioned);
  }
  return st == DLB_OK ? 1 : lua_error(L);
}

static int p_deletes(lua_State *L) {
  lua_pushinteger(L, deletes);
  return 1;
}

static void push_list(lua_State *L, int n, const int64_t *v) {
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushinteger(L, (lua_Integer)(v ? v[i] : 0));
    lua_rawseti(L, -2, i + 1);
  }
}

/* P.consume(capsule): takes the tensor, describes it, calls its deleter. */
static int p_consume(lua_State *L) {
  void *tensor;
  int versioned;
  const DLTensor *dl;
  if (dlb_capsule_take(L, 1, &tensor, &versioned) != DLB_OK) return lua_error(L);
  dl = versioned ? &((DLManagedTensorVersioned *)tensor)->dl_tensor
                 : &((DLManagedTensor *)tensor)->dl_tensor;
  lua_createtable(L, 0, 6);
  lua_pushboolean(L, versioned);
  lua_setfield(L, -2, "versioned");
  lua_pushboolean(L, dl->data == NULL);
  lua_setfield(L, -2, "data_null");
  /* the largest power of two (up to 4096) that divides the address */
  {
    uintptr_t a = (uintptr_t)dl->data;
    lua_Integer align = 1;
    while (align < 4096 && a % (uintptr_t)(align * 2) == 0) align *= 2;
    lua_pushinteger(L, a ? align : 0);
  }
  lua_setfield(L, -2, "data_align");
  push_list(L, dl->ndim, dl->shape);
  lua_setfield(L, -2, "shape");
  push_list(L, dl->ndim, dl->strides);
  lua_setfield(L, -2, "strides");
  lua_pushinteger(L, (lua_Integer)dl->byte_offset);
  lua_setfield(L, -2, "byte_offset");
  if (versioned) {
    DLManagedTensorVersioned *v = tensor;
    if (v->deleter) v->deleter(v);
  } else {
    DLManagedTensor *l = tensor;
    if (l->deleter) l->deleter(l);
  }
  return 1;
}

int luaopen_dlpack_producer(lua_State *L);
static const char module_anchor = 0; /* (lua_module_pin) */

__attribute__((visibility("default"))) int luaopen_dlpack_producer(lua_State *L) {
  lua_module_pin(&module_anchor); /* Lua 5.1 and LuaJIT would unload it first */
  static const luaL_Reg fns[] = {
      {"capsule", p_capsule}, {"deletes", p_deletes}, {"consume", p_consume}, {NULL, NULL}};
  luaL_newlib(L, fns);
  return 1;
}
