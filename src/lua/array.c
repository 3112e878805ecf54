/* array.c -- the dlbridge.Array userdata: creation, checks, indexing, metamethods. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "../core/format.h"
#include "../core/shape.h"
#include "internal.h"

/* The userdata of an Array: its tag and its record (records.c), which holds
 * the core array. An Array is recognised by its userdata size and tag, which
 * Lua code cannot forge; this costs two API calls where a metatable
 * comparison costs about six, and it runs on every call (a[i] above all). */
typedef struct lua_array {
  dlb_array *array; /* never NULL: a record, or a state's dead record */
  uint64_t tag;
} lua_array;

#define ARRAY_TAG UINT64_C(0x646c627269646765) /* "dlbridge" */

static lua_array *to_lua_array(lua_State *L, int idx) {
  lua_array *u = lua_touserdata(L, idx);
  return u && lua_rawlen(L, idx) == sizeof *u && u->tag == ARRAY_TAG ? u : NULL;
}

dlb_array *dlbL_to_array(lua_State *L, int idx) {
  lua_array *u = to_lua_array(L, idx);
  if (!u) return NULL;
  dlbL_record_watch(L, u->array);
  return u->array;
}

dlb_array *dlbL_to_pinned(lua_State *L, int idx) {
  lua_array *u = to_lua_array(L, idx);
  return u ? u->array : NULL;
}

/* Raises ARGUMENT for the non-array at idx: a method called with a dot
 * (a.copy()) gets the colon form as its hint. */
static __attribute__((noreturn, cold)) void not_an_array(lua_State *L, int idx, const char *op) {
  char hint[160];
  if (idx == 1 && strncmp(op, "Array:", 6) == 0)
    snprintf(hint, sizeof hint,
             "call methods with a colon, a:%s(...), on an array made by "
             "dl.array{...}, dl.zeros(n), ...",
             op + 6);
  else
    snprintf(hint, sizeof hint,
             "argument #%d is a dlbridge.Array: dl.array(t) makes one from "
             "nested tables or a number",
             idx);
  dlbL_raise_hint(L, DLB_E_ARGUMENT, op, hint, "argument #%d: dlbridge.Array expected, got %s", idx,
                  luaL_typename(L, idx));
}

dlb_array *dlbL_check_array(lua_State *L, int idx, const char *op) {
  dlb_array *a = dlbL_to_array(L, idx);
  if (!a) not_an_array(L, idx, op);
  return a;
}

dlb_array *dlbL_check_live(lua_State *L, int idx, const char *op) {
  dlb_array *a = dlbL_check_array(L, idx, op);
  if (!a->buffer) dlbL_raise(L, DLB_E_DELETED, op, "the array was deleted");
  return a;
}

/* No record for a new Array, even after a full collection: raised as
 * OUT_OF_MEMORY directly, or by dlbL_call_maker in protected mode. */
static __attribute__((noreturn, cold)) void no_record(lua_State *L) {
  dlbL_raise(L, DLB_E_OUT_OF_MEMORY, "dlbridge.Array", "Lua has no memory for a new array object");
}

/* Pushes a released Array with the metatable at mt (an index that stays
 * valid: absolute or an upvalue), tracked. A Lua memory error leaves
 * nothing behind but the empty Array (the dead record), for the collector. */
static lua_array *make_array_object(lua_State *L, int mt, dlb_lua_state *state) {
  lua_array *u = lua_newuserdatauv(L, sizeof(lua_array), 0);
  dlb_array *record;
  u->tag = ARRAY_TAG;
  u->array = dlbL_records_dead(state);
  lua_pushvalue(L, mt);
  lua_setmetatable(L, -2);
  dlbL_track_new(L, state);
  if (!(record = dlbL_record_take(L, state))) {
    dlbL_collect_garbage(L, state); /* finalized Arrays give theirs back */
    if (!(record = dlbL_record_take(L, state))) no_record(L);
  }
  u->array = record;
  ((dlbL_record *)record)->home = &u->array;
  return u;
}

/* new_array_object(metatable, state): the same, run by dlbL_call_maker. */
static int new_array_object(lua_State *L) {
  make_array_object(L, 1, dlbL_to_address(L, 2));
  return 1;
}

/* The state dlbL_push_empty makes an Array for; in_module: called from
 * the module (the usual case), whose upvalues hold it and the metatable. */
static dlb_lua_state *state_for_new(lua_State *L, int *in_module) {
  dlb_lua_state *state = dlbL_upvalue_state(L);
  *in_module = state != NULL;
  return state && state->registry ? state : dlbL_state(L);
}

static dlb_array *push_empty_in(lua_State *L, dlb_lua_state *state, int in_module,
                                const char *op) {
  int extra;
  dlbL_pace_collector(L, state);
  /* The usual case inline: no maker call (about 10 ns of a small operation). */
  if (in_module && !dlbL_alloc_may_fail(L))
    return make_array_object(L, DLB_UV_ARRAY_MT, state)->array;
  extra = dlbL_push_callee(L, new_array_object); /* no allocation */
  if (in_module) lua_pushvalue(L, DLB_UV_ARRAY_MT);
  else luaL_getmetatable(L, DLB_ARRAY_MT);
  dlbL_push_address(L, state);
  dlbL_call_maker(L, 1 + DLBL_ADDRESS_SLOTS + extra, op, "a new array object");
  return ((lua_array *)lua_touserdata(L, -1))->array;
}

dlb_array *dlbL_push_empty(lua_State *L, const char *op) {
  int in_module;
  dlb_lua_state *state = state_for_new(L, &in_module);
  return push_empty_in(L, state, in_module, op);
}

/* Pushes an empty Array, then makes room for numel elements of itemsize
 * (itemsize 0: none, a view), with one look for the state. */
static dlb_array *push_empty_with_room(lua_State *L, dlb_lua_state *state, int in_module,
                                       int64_t numel, size_t itemsize, const char *op) {
  dlb_array *fresh = push_empty_in(L, state, in_module, op);
  if (itemsize) dlbL_reserve_in(L, state, numel, itemsize);
  return fresh;
}

dlb_array *dlbL_push_new(lua_State *L, int64_t numel, size_t itemsize, const char *op) {
  int in_module;
  dlb_lua_state *state = state_for_new(L, &in_module);
  return push_empty_with_room(L, state, in_module, numel, itemsize, op);
}

dlb_array *dlbL_push_allocated(lua_State *L, const dlbL_options *opts, dlb_dtype dtype, int ndim,
                               const int64_t *shape, int zeroed, const char *op) {
  dlb_error err;
  int64_t numel;
  int counted = dlb_shape_numel(ndim, shape, &numel, NULL) == DLB_OK;
  dlb_array *a =
      dlbL_push_new(L, counted ? numel : 0, counted ? dlb_dtype_get(dtype)->itemsize : 0, op);
  if (dlb_array_allocate(a, opts->backend, opts->device_id, dtype, ndim, shape, zeroed, &err) !=
      DLB_OK)
    dlbL_raise_error(L, &err, op);
  return a;
}

/* dlbL_push_new for a call on *src, the Array at idx (absolute). Finalizers
 * run by the allocation or the collection may have given a record back
 * (records.c): *src is fetched again then, only then. */
static dlb_array *push_empty_for(lua_State *L, int idx, dlb_array **src, int64_t numel,
                                 size_t itemsize, const char *op) {
  int in_module;
  dlb_lua_state *state = state_for_new(L, &in_module);
  size_t epoch = dlbL_records_epoch(state);
  dlb_array *fresh = push_empty_with_room(L, state, in_module, numel, itemsize, op);
  if (dlbL_records_epoch(state) != epoch) *src = dlbL_to_array(L, idx);
  return fresh;
}

dlb_array *dlbL_push_result(lua_State *L, int idx, size_t itemsize, dlb_array **result,
                            const char *op) {
  dlb_array *src;
  idx = lua_absindex(L, idx);
  src = dlbL_check_live(L, idx, op);
  if (!itemsize) itemsize = dlb_array_itemsize(src);
  *result = push_empty_for(L, idx, &src, src->numel, itemsize, op);
  /* a finalizer may have deleted it */
  if (!src->buffer) dlbL_raise(L, DLB_E_DELETED, op, "the array was deleted");
  return src;
}

/* A view of the Array at idx (live when live is set) pushed. */
static dlb_array *push_view(lua_State *L, int idx, int live, const char *op) {
  dlb_array *a, *v;
  idx = lua_absindex(L, idx);
  a = live ? dlbL_check_live(L, idx, op) : dlbL_check_array(L, idx, op);
  v = push_empty_for(L, idx, &a, 0, 0, op);
  dlb_array_share(v, a);
  return v;
}

dlb_array *dlbL_push_view(lua_State *L, int idx, const char *op) {
  return push_view(L, idx, 0, op);
}

dlb_array *dlbL_pin(lua_State *L, int idx, const char *op) {
  dlb_array *v = push_view(L, idx, 1, op);
  if (!v->buffer) /* a finalizer run by the allocation deleted the array */
    dlbL_raise(L, DLB_E_DELETED, op, "the array was deleted");
  return v;
}

void dlbL_device_name(const dlb_array *a, char *out, size_t size) {
  const dlb_buffer *b = a->buffer;
  snprintf(out, size, "%s:%d", b && b->backend ? b->backend->name : "host", b ? b->device_id : 0);
}

/* Reads element p of a as a Lua value. */
static void push_element(lua_State *L, const dlb_array *a, const char *p) {
  dlb_scalar v;
  switch (a->dtype) {
    case DLB_FLOAT64: {
      double d;
      memcpy(&d, p, 8);
      lua_pushnumber(L, d);
      return;
    }
    case DLB_INT64: {
      int64_t i;
      memcpy(&i, p, 8);
      dlbL_push_int64(L, i);
      return;
    }
    default: dlb_scalar_load(a->dtype, p, &v); dlbL_push_scalar(L, &v);
  }
}

/* Host address of element i (0-based, valid) of a 1-D array. */
static char *element_1d(const dlb_array *a, int64_t i) {
  return dlb_array_host_data(a) + i * a->strides[0] * (int64_t)dlb_array_itemsize(a);
}

#define ZERO_D_HINT "a 0-d array has no first dimension to index or iterate: read it with a:get()"

/* Reads element (1-D) or row (n-D) i, 0-based and in range, of the live array a. */
static void push_item(lua_State *L, dlb_array *a, int64_t i) {
  if (a->ndim == 1 && dlb_array_host_data(a) && !a->buffer->pending) { /* nothing queued on it */
    push_element(L, a, element_1d(a, i));
  } else if (a->ndim == 1) {
    dlb_scalar v;
    dlb_error err;
    if (dlb_array_get(a, &i, &v, &err) != DLB_OK) dlbL_raise_error(L, &err, "Array:__index");
    dlbL_push_scalar(L, &v);
  } else {
    dlb_error err;
    dlb_array *row = dlbL_pin(L, 1, "Array:__index"); /* a is the Array at 1 */
    if (dlb_view_select(row, 0, i, &err) != DLB_OK) dlbL_raise_error(L, &err, "Array:__index");
  }
}

/* a[i]: the element of a 1-D array, or a view of row i. Like a Lua table,
 * an integer past either end reads nil, so that ipairs(a) stops there; 0,
 * which no array has, and a fraction raise INDEX (a:get stays strict). */
static int index_number(lua_State *L, dlb_array *a) {
  int isint;
  int64_t i = (int64_t)dlbL_tointegerx(L, 2, &isint), n;
  if (!a->buffer) dlbL_raise(L, DLB_E_DELETED, "Array:__index", "the array was deleted");
  if (a->ndim == 0)
    dlbL_raise_hint(L, DLB_E_INDEX, "Array:__index", ZERO_D_HINT, "a 0-d array cannot be indexed");
  if (!isint) dlbL_raise(L, DLB_E_INDEX, "Array:__index", "an index must be an integer");
  if (i == 0) dlbL_raise(L, DLB_E_INDEX, "Array:__index", "index 0: indices are 1-based");
  n = a->shape[0];
  if (i < 0 && i >= -n) i = i + n + 1; /* (i + n) + 1: n + 1 may overflow */
  if (i < 1 || i > n) {
    lua_pushnil(L);
    return 1;
  }
  push_item(L, a, i - 1);
  return 1;
}

/* The iterator of pairs(a): next_row(a, i) -> i + 1, a[i + 1], or nothing
 * past the end. */
static int next_row(lua_State *L) {
  dlb_array *a = dlbL_check_live(L, 1, "Array:__pairs");
  int isint;
  lua_Integer i = lua_isnoneornil(L, 2) ? 0 : dlbL_tointegerx(L, 2, &isint);
  if (!lua_isnoneornil(L, 2) && !isint)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, "Array:__pairs",
                    "the iterator of pairs(a) takes the array and the last index (0 to start)",
                    "the control value is an integer, got %s", luaL_typename(L, 2));
  if (a->ndim == 0)
    dlbL_raise_hint(L, DLB_E_INDEX, "Array:__pairs", ZERO_D_HINT, "a 0-d array cannot be iterated");
  if (i < 0 || i >= a->shape[0]) return 0;
  lua_pushinteger(L, i + 1);
  push_item(L, a, (int64_t)i);
  return 2;
}

/* pairs(a): for i, row in pairs(a) walks the first dimension, as ipairs(a)
 * does: elements of a 1-D array, views of the rows of an n-D one. */
static int array_pairs(lua_State *L) {
  dlb_array *a = dlbL_check_live(L, 1, "Array:__pairs");
  if (a->ndim == 0)
    dlbL_raise_hint(L, DLB_E_INDEX, "Array:__pairs", ZERO_D_HINT, "a 0-d array cannot be iterated");
  lua_pushcfunction(L, next_row); /* a light C function: no allocation, no upvalues needed */
  lua_pushvalue(L, 1);
  lua_pushinteger(L, 0);
  return 3;
}

/* int_list(n, pointer): a table of n int64 values (run in protected mode). */
static int int_list(lua_State *L) {
  int n = (int)dlbL_tointeger(L, 1);
  const int64_t *v = dlbL_to_address(L, 2);
  lua_createtable(L, n, 0);
  for (int d = 0; d < n; d++) {
    dlbL_push_int64(L, v[d]);
    lua_rawseti(L, -2, d + 1);
  }
  return 1;
}

/* Pushes a table of n int64 values; OUT_OF_MEMORY when Lua has no room. */
static void push_int_list(lua_State *L, int n, const int64_t *v) {
  int64_t copy[DLB_MAX_NDIM]; /* a finalizer run by the allocation may delete the array */
  memcpy(copy, v, (size_t)n * sizeof *v);
  int extra = dlbL_push_callee(L, int_list);
  lua_pushinteger(L, n);
  dlbL_push_address(L, copy);
  dlbL_pcall(L, 1 + DLBL_ADDRESS_SLOTS + extra, 1, "Array:__index");
}

/* a.shape, a.dtype, ...: returns 0 when name is not an attribute. */
static int index_attribute(lua_State *L, dlb_array *a, const char *name) {
  char device[48];
  if (!a->buffer) dlbL_raise(L, DLB_E_DELETED, "Array:__index", "the array was deleted");
  if (strcmp(name, "shape") == 0) push_int_list(L, a->ndim, a->shape);
  else if (strcmp(name, "strides") == 0) push_int_list(L, a->ndim, a->strides);
  else if (strcmp(name, "ndim") == 0) lua_pushinteger(L, a->ndim);
  else if (strcmp(name, "size") == 0) dlbL_push_int64(L, a->numel);
  else if (strcmp(name, "dtype") == 0)
    dlbL_push_string(L, dlb_dtype_get(a->dtype)->name, "Array:__index");
  else if (strcmp(name, "itemsize") == 0) lua_pushinteger(L, (lua_Integer)dlb_array_itemsize(a));
  else if (strcmp(name, "nbytes") == 0) {
    /* numel * itemsize; an expanded view can exceed int64: then a float. */
    int64_t n;
    if (__builtin_mul_overflow(a->numel, (int64_t)dlb_array_itemsize(a), &n))
      lua_pushnumber(L, (lua_Number)a->numel * (lua_Number)dlb_array_itemsize(a));
    else dlbL_push_int64(L, n);
  } else if (strcmp(name, "device") == 0) {
    dlbL_device_name(a, device, sizeof device);
    dlbL_push_string(L, device, "Array:__index");
  } else if (strcmp(name, "backend") == 0)
    dlbL_push_string(L, a->buffer->backend ? a->buffer->backend->name : "host", "Array:__index");
  else if (strcmp(name, "readonly") == 0) lua_pushboolean(L, a->readonly || a->buffer->readonly);
  else return 0;
  return 1;
}

/* a[k] for anything but a method name or an in-range integer on a 1-D host
 * float64 array (array_index answers those). */
static __attribute__((noinline)) int index_slow(lua_State *L) {
  dlb_array *a = dlbL_check_array(L, 1, "Array:__index");
  switch (lua_type(L, 2)) {
    case LUA_TNUMBER:
      if (a->ndim == 1 && a->buffer && a->buffer->host && !a->buffer->pending &&
          dlbL_isinteger(L, 2)) {
        int64_t i = (int64_t)dlbL_tointeger(L, 2), n = a->shape[0];
        if (i < 0 && i >= -n) i = i + n + 1; /* (i + n) + 1: n + 1 may overflow */
        if (i >= 1 && i <= n) {
          push_element(L, a, element_1d(a, i - 1));
          return 1;
        }
      }
      return index_number(L, a);
    case LUA_TSTRING: /* not a method (array_index looked): an attribute or nil */
      if (index_attribute(L, a, lua_tostring(L, 2))) return 1;
      lua_pushnil(L); /* unknown names read as nil, as for other Lua objects */
      return 1;
    default:
      if (dlbL_to_array(L, 2)) return dlbL_index_by_array(L); /* a[mask], a[idx] */
      return dlbL_raise_hint(L, DLB_E_ARGUMENT, "Array:__index",
                             "a[i] takes an integer (1 the first, -1 the last), a bool mask or "
                             "an integer array; a.name reads an attribute such as a.shape",
                             "arrays are indexed by integers, not %s", luaL_typename(L, 2));
  }
}

/* a[k]. The common case, a float64 element of a 1-D host array, stays on
 * this short path: the cost of a[i] is mostly these few API calls. */
static int array_index(lua_State *L) {
  dlb_array *a;
  if (lua_type(L, 2) == LUA_TSTRING) { /* a method: first, as a:name() is the usual call */
    lua_pushvalue(L, 2);
    if (lua_rawget(L, DLB_UV_METHODS) != LUA_TNIL) return 1;
    lua_pop(L, 1);
    return index_slow(L);
  }
  a = dlbL_to_array(L, 1);
  if (a && a->ndim == 1 && a->dtype == DLB_FLOAT64 && a->buffer && a->buffer->host &&
      !a->buffer->pending && lua_type(L, 2) == LUA_TNUMBER) {
    int isint;
    int64_t i = (int64_t)dlbL_tointegerx(L, 2, &isint), n = a->shape[0];
    if (i < 0 && i >= -n) i = i + n + 1; /* (i + n) + 1: n + 1 may overflow */
    if (isint && i >= 1 && i <= n) {
      double d;
      memcpy(&d, (const char *)a->buffer->host + a->offset + (i - 1) * a->strides[0] * 8, 8);
      lua_pushnumber(L, d);
      return 1;
    }
  }
  return index_slow(L);
}

static int array_newindex(lua_State *L) {
  dlb_array *a = dlbL_check_array(L, 1, "Array:__newindex");
  /* Fast path: a[i] = number on a 1-D float64 host array. */
  if (a->ndim == 1 && a->dtype == DLB_FLOAT64 && a->buffer && a->buffer->host &&
      !a->buffer->pending && !a->readonly && !a->buffer->readonly &&
      lua_type(L, 2) == LUA_TNUMBER) {
    int isint, isnum;
    int64_t i = (int64_t)dlbL_tointegerx(L, 2, &isint), n = a->shape[0];
    double d = (double)lua_tonumberx(L, 3, &isnum);
    if (i < 0 && i >= -n) i = i + n + 1; /* (i + n) + 1: n + 1 may overflow */
    if (isint && isnum && lua_type(L, 3) == LUA_TNUMBER && i >= 1 && i <= n) {
      memcpy((char *)a->buffer->host + a->offset + (i - 1) * a->strides[0] * 8, &d, 8);
      return 0;
    }
  }
  if (dlbL_to_array(L, 2)) return dlbL_assign_by_array(L); /* a[mask] = v, a[idx] = v */
  if (lua_type(L, 2) != LUA_TNUMBER)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, "Array:__newindex",
                    "write elements with a[i] = v or a:set(i, j, ..., v); attributes such as "
                    "a.shape are read-only",
                    "arrays have no assignable fields; index them with integers");
  if (!a->buffer) dlbL_raise(L, DLB_E_DELETED, "Array:__newindex", "the array was deleted");
  if (a->ndim == 0)
    dlbL_raise_hint(L, DLB_E_INDEX, "Array:__newindex",
                    "a 0-d array has no first dimension: write it with a:set(v)",
                    "a 0-d array cannot be indexed");
  {
    int64_t i = dlbL_check_index(L, 2, a->shape[0], "Array:__newindex");
    dlb_error err;
    if (a->ndim == 1) {
      dlb_scalar v;
      dlbL_to_scalar(L, 3, &v, "Array:__newindex"); /* may push strings: fetched again */
      a = dlbL_check_live(L, 1, "Array:__newindex");
      if (dlb_array_set(a, &i, &v, &err) != DLB_OK) dlbL_raise_error(L, &err, "Array:__newindex");
    } else {
      dlb_array *row = dlbL_pin(L, 1, "Array:__newindex");
      if (dlb_view_select(row, 0, i, &err) != DLB_OK) dlbL_raise_error(L, &err, "Array:__newindex");
      dlbL_assign(L, -1, 3, "Array:__newindex");
    }
  }
  return 0;
}

/* Collects the index arguments first..first+ndim-1 of get/set. */
static void check_full_index(lua_State *L, const dlb_array *a, int first, int given, int64_t *index,
                             const char *op) {
  if (given != a->ndim)
    dlbL_raise(L, DLB_E_INDEX, op, "a %d-D array takes %d indices, got %d", a->ndim, a->ndim,
               given);
  for (int d = 0; d < a->ndim; d++) index[d] = dlbL_check_index(L, first + d, a->shape[d], op);
}

/* a:get(i, j, ...) -> the element. */
static int array_get(lua_State *L) {
  dlb_array *a = dlbL_check_live(L, 1, "Array:get");
  int64_t index[DLB_MAX_NDIM];
  dlb_scalar v;
  dlb_error err;
  check_full_index(L, a, 2, lua_gettop(L) - 1, index, "Array:get");
  if (dlb_array_get(a, index, &v, &err) != DLB_OK) dlbL_raise_error(L, &err, "Array:get");
  dlbL_push_scalar(L, &v);
  return 1;
}

/* a:set(i, j, ..., v) */
static int array_set(lua_State *L) {
  dlb_array *a = dlbL_check_live(L, 1, "Array:set");
  int top = lua_gettop(L);
  int64_t index[DLB_MAX_NDIM];
  dlb_scalar v;
  dlb_error err;
  if (top < 2)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, "Array:set",
                    "a:set(i, j, ..., value): one integer index per dimension, then the value "
                    "(a:set(v) for a 0-d array)",
                    "a:set(i, ..., value) needs a value");
  check_full_index(L, a, 2, top - 2, index, "Array:set");
  dlbL_to_scalar(L, top, &v, "Array:set");
  a = dlbL_check_live(L, 1, "Array:set"); /* again: the conversion can run Lua code */
  if (dlb_array_set(a, index, &v, &err) != DLB_OK) dlbL_raise_error(L, &err, "Array:set");
  return 0;
}

static int array_len(lua_State *L) {
  dlb_array *a = dlbL_check_live(L, 1, "Array:__len");
  if (a->ndim == 0) dlbL_raise(L, DLB_E_SHAPE, "Array:__len", "a 0-d array has no length");
  dlbL_push_int64(L, a->shape[0]);
  return 1;
}

/* push_text(length, pointer): the string (called in protected mode). */
static int push_text(lua_State *L) {
  lua_pushlstring(L, (const char *)dlbL_to_address(L, 2), (size_t)dlbL_tointeger(L, 1));
  return 1;
}

static int array_tostring(lua_State *L) {
  dlb_array *a = dlbL_check_array(L, 1, "Array:__tostring");
  char device[48];
  dlb_strbuf sb;
  dlb_error err;
  dlb_status st;
  int extra;
  if (!a->buffer) {
    dlbL_push_string(L, "dlbridge.Array (deleted)", "Array:__tostring");
    return 1;
  }
  dlbL_device_name(a, device, sizeof device);
  dlb_strbuf_init(&sb);
  st = dlb_array_format(a, device, &sb, &err);
  if (st == DLB_OK && sb.failed) st = dlb_fail(&err, DLB_E_OUT_OF_MEMORY, "no memory to print");
  if (st != DLB_OK) {
    dlb_strbuf_free(&sb);
    dlbL_raise_error(L, &err, "Array:__tostring");
  }
  /* Pushed in protected mode, so that a Lua memory error cannot leak sb. */
  extra = dlbL_push_callee(L, push_text);
  lua_pushinteger(L, (lua_Integer)sb.len);
  dlbL_push_address(L, sb.data ? sb.data : "");
  st = lua_pcall(L, 1 + DLBL_ADDRESS_SLOTS + extra, 1, 0) == LUA_OK ? DLB_OK : DLB_E_OUT_OF_MEMORY;
  dlb_strbuf_free(&sb);
  if (st != DLB_OK) dlbL_raise(L, DLB_E_OUT_OF_MEMORY, "Array:__tostring", "no memory to print");
  return 1;
}

/* __close: the idempotent release; never raises. */
static int array_close(lua_State *L) {
  dlb_array *a = dlbL_to_array(L, 1);
  if (a) dlb_array_release(a);
  return 0;
}

void dlbL_finalize_array(lua_State *L, int idx) {
  lua_array *u = to_lua_array(L, idx);
  if (!u) return;
  dlb_array_release(u->array);
  u->array = dlbL_record_give(L, u->array);
}

/* __gc: the release, and the record goes back; never raises. */
static int array_gc(lua_State *L) {
  dlbL_finalize_array(L, 1);
  return 0;
}

/* a:delete(): the same release, but a non-array self is an ARGUMENT error. */
static int array_delete(lua_State *L) {
  dlb_array *a = dlbL_check_array(L, 1, "Array:delete");
  dlbL_check_nargs(L, 1, "Array:delete");
  dlb_array_release(a);
  return 0;
}

static const luaL_Reg array_metamethods[] = {{"__index", array_index},
                                             {"__newindex", array_newindex},
                                             {"__len", array_len},
                                             {"__tostring", array_tostring},
                                             {"__gc", array_gc},
                                             {"__close", array_close},
                                             {"__pairs", array_pairs},
                                             {"__ipairs", array_pairs}, /* (5.2's ipairs) */
                                             {NULL, NULL}};

static const luaL_Reg array_methods[] = {
    {"get", array_get}, {"set", array_set}, {"delete", array_delete}, {NULL, NULL}};

/* Sets the functions of list into the table at target with the module's
 * upvalues [Array metatable, State, methods]. */
static void set_list(lua_State *L, int target, int mt, int methods, const luaL_Reg *list) {
  lua_pushvalue(L, target);
  lua_pushvalue(L, mt);
  lua_pushvalue(L, mt + 1);
  lua_pushvalue(L, methods);
  luaL_setfuncs(L, list, DLB_NUPVALUES);
  lua_pop(L, 1);
}

/* Expects [Array metatable, State, methods] on top; fills both tables. */
void dlbL_open_array(lua_State *L) {
  int mt = lua_absindex(L, -3), methods = lua_absindex(L, -1);
  const luaL_Reg *lists[] = {array_methods,       dlbL_view_methods,    dlbL_data_methods,
                             dlbL_dlpack_methods, dlbL_backend_methods, dlbL_compute_methods,
                             dlbL_reduce_methods, dlbL_linalg_methods,  dlbL_select_methods,
                             dlbL_sort_methods,   dlbL_scan_methods,    dlbL_construct_methods};
  for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++)
    set_list(L, methods, mt, methods, lists[k]);
  set_list(L, mt, mt, methods, array_metamethods);
  set_list(L, mt, mt, methods, dlbL_compute_metamethods);
}
