/* table.c -- nested Lua tables <-> arrays (dl.array, a:totable()). */
#include <stdio.h>
#include <string.h>
#include "../core/shape.h"
#include "../core/work.h"
#include "../core/event.h"
#include "internal.h"

/* What the elements seen so far infer, NumPy style. */
typedef enum { SEEN_NOTHING, SEEN_BOOL, SEEN_INT, SEEN_FLOAT } seen_kind;

typedef struct fill_state {
  const char *op;
  int ndim;
  int64_t shape[DLB_MAX_NDIM];
  int has_dtype; /* explicit dtype: store each element with dlb_scalar_store */
  dlb_dtype dtype;
  char *out;        /* next element to write */
  char *start;      /* first element */
  seen_kind seen;   /* inference: the 8-byte slots hold int64 until a float shows up */
  int complex_seen; /* inference must restart as complex128 */
} fill_state;

/* A table with a metatable is read as table.unpack reads it: #t through
 * __len, t[i] through __index. That runs Lua code, which may fail (the error
 * propagates), change the tables (every length is checked again where it is
 * used: at most numel elements are ever written) or delete arrays (callers
 * check their arrays after the conversion, as after any finalizer). Plain
 * tables are read raw. A complex {re=, im=} is recognised by raw fields. */
static int has_metatable(lua_State *L, int idx) {
  if (!lua_getmetatable(L, idx)) return 0;
  lua_pop(L, 1);
  return 1;
}

#define LENGTH_HINT                                                                                \
  "a table's __len gives its number of elements, a non-negative integer n, and __index "           \
  "its elements t[1]..t[n]"

/* #t of the table at idx (depth 0 = outermost) as an extent. */
static int64_t table_length(lua_State *L, int idx, int meta, int depth, const char *op) {
  lua_Integer n;
  int isint;
  if (!meta) return (int64_t)lua_rawlen(L, idx);
  lua_len(L, idx);
  isint = lua_type(L, -1) == LUA_TNUMBER; /* a string "3" is no length */
  n = isint ? dlbL_tointegerx(L, -1, &isint) : 0;
  if (!isint && lua_type(L, -1) == LUA_TNUMBER)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, LENGTH_HINT,
                    "the length (__len) of a table at depth %d is %g, not an integer", depth + 1,
                    (double)lua_tonumber(L, -1));
  if (!isint)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, LENGTH_HINT,
                    "the length (__len) of a table at depth %d is a %s, not an integer", depth + 1,
                    luaL_typename(L, -1));
  if (n < 0)
    dlbL_raise_hint(L, DLB_E_SHAPE, op, LENGTH_HINT,
                    "the length (__len) of a table at depth %d is negative (%lld)", depth + 1,
                    (long long)n);
  lua_pop(L, 1);
  return (int64_t)n;
}

/* Pushes t[i] of the table at idx; returns its type. */
static int table_get(lua_State *L, int idx, int64_t i, int meta) {
  return meta ? lua_geti(L, idx, (lua_Integer)i) : lua_rawgeti(L, idx, (lua_Integer)i);
}

#define DATA_HINT                                                                                  \
  "data is a number or nested lists such as {{1, 2}, {3, 4}}: tables with keys 1..n and no "       \
  "holes"

/* A table whose keys are not exactly 1..n ({1, 2, x = 3}, holes) is no
 * array: ARGUMENT from dlbL_check_list, the check of every list argument.
 * Only a table whose raw length is n is checked (n is the raw length
 * unless meta); a table whose metamethods make another sequence is what
 * they say. */
static void check_sequence_keys(lua_State *L, int idx, int64_t n, int meta, int depth,
                                const char *op) {
  char what[48];
  if (meta && (int64_t)lua_rawlen(L, idx) != n) return;
  snprintf(what, sizeof what, "a table at depth %d", depth + 1);
  dlbL_check_list(L, idx, what, DATA_HINT, op);
}

/* Follows t[1][1]... to find the shape; a complex table is a leaf. */
static void infer_shape(lua_State *L, int idx, fill_state *fs) {
  int depth = 0;
  lua_pushvalue(L, idx);
  while (lua_type(L, -1) == LUA_TTABLE) {
    int meta = has_metatable(L, -1);
    int64_t n = table_length(L, -1, meta, depth, fs->op);
    if (n == 0) {
      if (dlbL_is_complex(L, -1)) break;
      check_sequence_keys(L, lua_gettop(L), 0, meta, depth, fs->op);
    }
    if (depth == DLB_MAX_NDIM)
      dlbL_raise(L, DLB_E_SHAPE, fs->op, "nesting deeper than %d dimensions", DLB_MAX_NDIM);
    fs->shape[depth++] = n;
    if (n == 0) break;
    table_get(L, -1, 1, meta);
    lua_remove(L, -2);
  }
  lua_pop(L, 1);
  fs->ndim = depth;
}

/* Converts the prefix of int64 slots written so far to float64, in place. */
static void ints_to_floats(fill_state *fs) {
  for (char *p = fs->start; p < fs->out; p += 8) {
    int64_t i;
    double d;
    memcpy(&i, p, 8);
    d = (double)i;
    memcpy(p, &d, 8);
  }
}

/* Stores the Lua value on top of the stack as the next element. */
static void put_leaf(lua_State *L, fill_state *fs) {
  int t = lua_type(L, -1);
  if (fs->has_dtype) {
    dlb_scalar v;
    dlb_error err;
    if (t == LUA_TNUMBER && fs->dtype == DLB_FLOAT64) {
      double d = (double)lua_tonumber(L, -1);
      memcpy(fs->out, &d, 8);
    } else {
      dlbL_to_scalar(L, -1, &v, fs->op);
      if (dlb_scalar_store(fs->dtype, fs->out, &v, &err) != DLB_OK)
        dlbL_raise_error(L, &err, fs->op);
    }
    fs->out += dlb_dtype_get(fs->dtype)->itemsize;
    return;
  }
  if (t == LUA_TNUMBER && dlbL_isinteger(L, -1) && fs->seen != SEEN_FLOAT) {
    int64_t i = (int64_t)dlbL_tointeger(L, -1);
    memcpy(fs->out, &i, 8);
    fs->seen = SEEN_INT;
  } else if (t == LUA_TNUMBER) {
    double d = (double)lua_tonumber(L, -1);
    if (fs->seen != SEEN_FLOAT) ints_to_floats(fs);
    memcpy(fs->out, &d, 8);
    fs->seen = SEEN_FLOAT;
  } else if (t == LUA_TBOOLEAN) {
    int b = lua_toboolean(L, -1);
    if (fs->seen == SEEN_FLOAT) {
      double d = b;
      memcpy(fs->out, &d, 8);
    } else {
      int64_t i = b;
      memcpy(fs->out, &i, 8);
      if (fs->seen == SEEN_NOTHING) fs->seen = SEEN_BOOL;
    }
  } else if (dlbL_is_complex(L, -1)) {
    fs->complex_seen = 1;
  } else if (fs->seen != SEEN_FLOAT && dlbL_isinteger(L, -1)) { /* LuaJIT: 1LL */
    int64_t i = dlbL_tointeger(L, -1);
    memcpy(fs->out, &i, 8);
    fs->seen = SEEN_INT;
  } else {
    dlbL_raise(L, DLB_E_VALUE, fs->op,
               "expected an element value (number, boolean, {re=, im=}), got %s",
               luaL_typename(L, -1));
  }
  fs->out += 8;
}

/* Fills the elements of the (sub)table at idx, depth 0 = outermost. Returns
 * 0 when inference met a complex value and must start again. */
static int fill(lua_State *L, int idx, int depth, fill_state *fs) {
  int64_t n = fs->shape[depth], here;
  int meta;
  luaL_checkstack(L, 4, "nested table");
  meta = has_metatable(L, idx);
  here = table_length(L, idx, meta, depth, fs->op);
  if (here != n)
    dlbL_raise(L, DLB_E_SHAPE, fs->op,
               "ragged nested table: dimension %d has %lld entries here and %lld elsewhere",
               depth + 1, (long long)here, (long long)n);
  /* Keys outside 1..n ({1, 2, x = 3}, holes) make it no list. A plain
   * table is counted (n keys) and its nils are seen as it is read: both
   * right, it is the list 1..n; either wrong, dlbL_check_list says why. */
  if (meta || !dlbL_has_n_keys(L, idx, n)) check_sequence_keys(L, idx, n, meta, depth, fs->op);
  for (int64_t i = 1; i <= n; i++) {
    int type = table_get(L, idx, i, meta);
    if (type == LUA_TNIL && !meta) check_sequence_keys(L, idx, n, meta, depth, fs->op);
    /* Fast path for the common leaf: a float, or an integer while all are. */
    if (type == LUA_TNUMBER && depth + 1 == fs->ndim && !fs->has_dtype) {
      if (fs->seen != SEEN_FLOAT && dlbL_isinteger(L, -1)) {
        int64_t v = (int64_t)dlbL_tointeger(L, -1);
        memcpy(fs->out, &v, 8);
        fs->seen = SEEN_INT;
      } else {
        double d = (double)lua_tonumber(L, -1);
        if (fs->seen != SEEN_FLOAT) ints_to_floats(fs);
        memcpy(fs->out, &d, 8);
        fs->seen = SEEN_FLOAT;
      }
      fs->out += 8;
      lua_pop(L, 1);
      continue;
    }
    if (depth + 1 < fs->ndim) {
      if (lua_type(L, -1) != LUA_TTABLE || dlbL_is_complex(L, -1))
        dlbL_raise(L, DLB_E_SHAPE, fs->op,
                   "ragged nested table: expected a table at depth %d, got %s", depth + 2,
                   luaL_typename(L, -1));
      if (!fill(L, lua_gettop(L), depth + 1, fs)) return 0;
    } else {
      if (lua_type(L, -1) == LUA_TTABLE && !dlbL_is_complex(L, -1))
        dlbL_raise(L, DLB_E_SHAPE, fs->op, "ragged nested table: unexpected table at depth %d",
                   depth + 2);
      put_leaf(L, fs);
      if (fs->complex_seen) return 0;
    }
    lua_pop(L, 1);
  }
  return 1;
}

/* Allocates the cpu array for fs (slots of slot_dtype) as a new userdata. */
static dlb_array *push_target(lua_State *L, fill_state *fs, dlb_dtype slot_dtype) {
  dlb_error err;
  dlb_array *a = dlbL_push_empty(L, fs->op);
  int64_t numel;
  if (dlb_shape_numel(fs->ndim, fs->shape, &numel, NULL) == DLB_OK)
    dlbL_reserve(L, numel, dlb_dtype_get(slot_dtype)->itemsize);
  if (dlb_array_allocate(a, dlbL_state(L)->cpu, 0, slot_dtype, fs->ndim, fs->shape, 0, &err) !=
      DLB_OK)
    dlbL_raise_error(L, &err, fs->op);
  fs->start = fs->out = dlb_array_host_data(a);
  return a;
}

/* A scalar or nested tables at idx -> a new cpu array on the stack. Without
 * a dtype: all booleans -> bool, all integers -> int64, any float ->
 * float64, any {re=, im=} -> complex128 (NumPy's inference). */
dlb_array *dlbL_array_from_lua(lua_State *L, int idx, int has_dtype, dlb_dtype dtype,
                               const char *op) {
  fill_state fs;
  dlb_array *a;
  idx = lua_absindex(L, idx);
  memset(&fs, 0, sizeof fs);
  fs.op = op;
  fs.has_dtype = has_dtype;
  fs.dtype = dtype;
  if (lua_type(L, idx) == LUA_TTABLE && !(lua_pushvalue(L, idx), dlbL_is_complex(L, -1))) {
    lua_pop(L, 1);
    infer_shape(L, idx, &fs);
  } else if (lua_type(L, idx) == LUA_TTABLE) {
    lua_pop(L, 1);
  }
  for (;;) {
    int done;
    a = push_target(L, &fs, fs.has_dtype ? fs.dtype : DLB_INT64);
    if (fs.ndim == 0) {
      lua_pushvalue(L, idx);
      put_leaf(L, &fs);
      lua_pop(L, 1);
      done = !fs.complex_seen;
    } else {
      done = fill(L, idx, 0, &fs);
    }
    if (done) break;
    /* A complex value: start over, storing everything as complex128. */
    lua_settop(L, idx);
    fs.has_dtype = 1;
    fs.dtype = DLB_COMPLEX128;
    fs.complex_seen = 0;
  }
  if (fs.has_dtype) return a;
  if (fs.seen == SEEN_FLOAT || fs.seen == SEEN_NOTHING) {
    /* SEEN_NOTHING: an empty table, float64 like NumPy's np.array([]). */
    if (fs.seen == SEEN_NOTHING) ints_to_floats(&fs);
    a->dtype = DLB_FLOAT64;
  } else if (fs.seen == SEEN_BOOL) {
    dlb_error err;
    dlb_array *b = dlbL_push_empty(L, op);
    dlbL_reserve(L, a->numel, 1); /* a is private: no finalizer reaches it */
    if (dlb_array_clone(b, a, DLB_BOOL, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
    dlb_array_release(a);
    lua_remove(L, -2);
    return b;
  }
  return a;
}

/* What push_nested carries: the array, its first element's host address,
 * and the host's interrupt (looked at every DLB_WORK_CHECK_EVERY elements;
 * this loop makes Lua values, so it is never the thread's current work). */
typedef struct nest_walk {
  const dlb_array *a;
  const char *base;
  dlb_budget *budget;
  int64_t since_check;
  const char *op;
} nest_walk;

/* Counts n elements pushed; raises INTERRUPTED once the host's interrupt
 * is seen (the tables made so far are garbage). */
static void nest_tick(lua_State *L, nest_walk *w, int64_t n) {
  dlb_error err;
  if ((w->since_check += n) < DLB_WORK_CHECK_EVERY) return;
  w->since_check = 0;
  if (dlb_work_raised(w->budget)) {
    dlb_work_interrupted(w->op, &err);
    dlbL_raise_error(L, &err, w->op);
  }
}

/* Sets t[i + 1] (t at -1) for the elements i in [from, to) of the last dim,
 * the first of them at off. */
static void push_leaves(lua_State *L, const nest_walk *w, int64_t from, int64_t to, int64_t off,
                        int64_t step) {
  const char *base = w->base;
  if (w->a->dtype == DLB_FLOAT64) {
    for (int64_t i = from; i < to; i++, off += step) {
      double d;
      memcpy(&d, base + off, 8);
      lua_pushnumber(L, d);
      lua_rawseti(L, -2, (lua_Integer)(i + 1));
    }
  } else {
    for (int64_t i = from; i < to; i++, off += step) {
      dlb_scalar v;
      dlb_scalar_load(w->a->dtype, base + off, &v);
      dlbL_push_scalar(L, &v);
      lua_rawseti(L, -2, (lua_Integer)(i + 1));
    }
  }
}

/* Pushes the elements at the given depth; off is the byte offset of the
 * first one from base (pointers are formed only for elements read). A long
 * last dim is pushed in pieces, with a look at the interrupt after each. */
static void push_nested(lua_State *L, nest_walk *w, int depth, int64_t off) {
  const dlb_array *a = w->a;
  int64_t n = a->shape[depth];
  /* Strides of extent-1 dims and of size-0 arrays are unbounded (no element
   * is reached through them): only the others enter offsets. */
  int64_t step = n > 1 && a->numel > 0 ? a->strides[depth] * (int64_t)dlb_array_itemsize(a) : 0;
  luaL_checkstack(L, 3, "totable");
  lua_createtable(L, n > INT32_MAX ? INT32_MAX : (int)n, 0);
  if (depth + 1 < a->ndim) {
    for (int64_t i = 0; i < n; i++, off += step) {
      push_nested(L, w, depth + 1, off);
      lua_rawseti(L, -2, (lua_Integer)(i + 1));
    }
    return;
  }
  for (int64_t from = 0; from < n; from += DLB_WORK_CHECK_EVERY) {
    int64_t to = n - from > DLB_WORK_CHECK_EVERY ? from + DLB_WORK_CHECK_EVERY : n;
    push_leaves(L, w, from, to, off + from * step, step);
    nest_tick(L, w, to - from);
  }
}

/* A lower bound of the Lua memory a's tables take: a value slot per
 * element and a table header per row (saturating). */
static size_t table_bytes(const dlb_array *a) {
  size_t rows = 1, bytes, headers;
  for (int d = 0; d + 1 < a->ndim; d++)
    if (__builtin_mul_overflow(rows, (size_t)a->shape[d], &rows)) return SIZE_MAX;
  if (__builtin_mul_overflow((size_t)a->numel, 16, &bytes) ||
      __builtin_mul_overflow(rows, 56, &headers) || __builtin_add_overflow(bytes, headers, &bytes))
    return SIZE_MAX;
  return bytes;
}

void dlbL_push_table(lua_State *L, const dlb_array *a, const char *op) {
  const char *p = dlb_array_host_data(a);
  if (!p && a->numel > 0) {
    /* Memory the host cannot address: a host copy (a userdata, so that a Lua
     * error while building the tables cannot leak it), then its tables. */
    dlb_error err;
    dlb_array *copy = dlbL_push_empty(L, op);
    if (dlb_array_clone_to(copy, a, dlbL_state(L)->cpu, 0, &err) != DLB_OK)
      dlbL_raise_error(L, &err, op);
    dlbL_push_table(L, copy, op);
    dlb_array_release(copy);
    lua_remove(L, -2);
    return;
  }
  if (p && a->buffer->pending) { /* host memory a queue still writes: wait for it */
    dlb_error err;
    if (dlb_buffer_sync_host(a->buffer, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
  }
  if (a->ndim == 0) {
    dlb_scalar v;
    dlb_scalar_load(a->dtype, p, &v);
    dlbL_push_scalar(L, &v);
    return;
  }
  {
    nest_walk w = {a, p, dlb_array_budget(a), 0, op};
    dlb_error err;
    if (dlb_work_admit(w.budget, a->numel, op, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
    dlbL_reserve_lua(L, table_bytes(a), op, "tables");
    if (!a->buffer) dlbL_raise(L, DLB_E_DELETED, op, "the array was deleted");
    push_nested(L, &w, 0, 0);
  }
}
