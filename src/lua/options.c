/* options.c -- the one reader of options tables: {dtype = "int32",
 * device = "cpu"}, {dim = -1, out = a}, {copy = true}, ... Every function
 * of the binding that takes an options table checks it with
 * dlbL_check_option_table (or dlbL_check_dim_or_options, where a plain dim
 * stands for {dim = n}) and reads its keys with the dlbL_opt_* getters.
 *
 * An options argument may be nil or absent (every key takes its default).
 * A table is read raw, as it is checked: its own keys are the options (no
 * __index runs), and reading allocates nothing (a key is found by lua_next,
 * never made into a Lua string), so a host's refusing allocator cannot
 * fail a call there with a raw memory error. Errors are
 * ARGUMENT, with the op's usage line (usage.c) as hint, worded alike:
 *   options must be a table, got string
 *   options must be a dim or a table, got string
 *   unknown option 'dtyp' (expected dtype, device)
 *   option keepdims must be a boolean, got number
 *   option mode must be one of "full", "same", "valid", got "x"
 *   option range must be a list (keys 1..n, no holes), got a table with ...
 *   option range: entry 2 must be a number, got string
 * except where a value is checked as the same value is elsewhere: a dtype
 * that names none is DTYPE (dlbL_check_dtype), a device no backend has
 * UNKNOWN_DEVICE (dlbL_check_device), a dim out of range INDEX
 * (dlbL_check_dim), a deleted out array DELETED. */
#include <stdio.h>
#include <string.h>
#include "internal.h"

const char *dlbL_key_name(lua_State *L, int idx) {
  return lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx) : luaL_typename(L, idx);
}

/* What the value at idx is, for "got ...": its type, or dlbridge.Array. */
static const char *type_of(lua_State *L, int idx) {
  return dlbL_to_array(L, idx) ? "dlbridge.Array" : luaL_typename(L, idx);
}

/* "got ..." for the value at the top, which is not what was wanted: its
 * type, or the number itself when it is one (1.5 for an integer). */
static const char *got(lua_State *L, char *buf, size_t size) {
  if (lua_type(L, -1) != LUA_TNUMBER) return type_of(L, -1);
  snprintf(buf, size, "%.17g", (double)lua_tonumber(L, -1));
  return buf;
}

/* Raises ARGUMENT: the option key (its value at the top) is not what. */
static void wrong_type(lua_State *L, const char *key, const char *what, const char *op)
    __attribute__((noreturn));
static void wrong_type(lua_State *L, const char *key, const char *what, const char *op) {
  char buf[32];
  dlbL_raise(L, DLB_E_ARGUMENT, op, "option %s must be %s, got %s", key, what,
             got(L, buf, sizeof buf));
}

/* Whether the key at idx is the string key (embedded zeros count). */
static int is_key(lua_State *L, int idx, const char *key) {
  size_t len;
  const char *s;
  if (lua_type(L, idx) != LUA_TSTRING) return 0;
  s = lua_tolstring(L, idx, &len);
  return len == strlen(key) && memcmp(s, key, len) == 0;
}

/* Raises ARGUMENT for the key at -2, which is none of keys. */
static void unknown_key(lua_State *L, const char *const *keys, const char *what, const char *op)
    __attribute__((noreturn));
static void unknown_key(lua_State *L, const char *const *keys, const char *what, const char *op) {
  char list[200];
  size_t len = 0;
  list[0] = 0;
  for (int k = 0; keys[k] && len < sizeof list; k++)
    len += (size_t)snprintf(list + len, sizeof list - len, k ? ", %s" : "%s", keys[k]);
  dlbL_raise(L, DLB_E_ARGUMENT, op, "unknown %s '%.40s' (expected %s)", what, dlbL_key_name(L, -2),
             list);
}

/* Which of keys the key at -2 is (-1: none). */
static int key_index(lua_State *L, const char *const *keys) {
  for (int k = 0; keys[k]; k++)
    if (is_key(L, -2, keys[k])) return k;
  return -1;
}

void dlbL_check_keys(lua_State *L, int idx, const char *const *keys, const char *what,
                     const char *op) {
  idx = lua_absindex(L, idx);
  lua_pushnil(L); /* (a C function has LUA_MINSTACK slots: nothing grows the stack here) */
  while (lua_next(L, idx) != 0) {
    if (key_index(L, keys) < 0) unknown_key(L, keys, what, op);
    lua_pop(L, 1);
  }
}

/* Whether options were given at idx: 0 for none or nil, 1 for a table;
 * anything else raises ARGUMENT. */
static int options_given(lua_State *L, int idx, const char *op) {
  if (lua_isnoneornil(L, idx)) return 0;
  if (lua_type(L, idx) != LUA_TTABLE)
    dlbL_raise(L, DLB_E_ARGUMENT, op, "options must be a table, got %s", type_of(L, idx));
  return 1;
}

int dlbL_check_option_table(lua_State *L, int idx, const char *const *keys, const char *op) {
  if (!options_given(L, idx, op)) return 0;
  dlbL_check_keys(L, idx, keys, "option", op);
  return 1;
}

/* What the value at idx is as a dim or options: 2 a number, 1 a table, 0
 * none or nil; anything else raises ARGUMENT. */
static int dim_or_options(lua_State *L, int idx, const char *op) {
  if (lua_type(L, idx) == LUA_TNUMBER) return 2;
  if (!lua_isnoneornil(L, idx) && lua_type(L, idx) != LUA_TTABLE)
    dlbL_raise(L, DLB_E_ARGUMENT, op, "options must be a dim or a table, got %s", type_of(L, idx));
  return lua_type(L, idx) == LUA_TTABLE;
}

int dlbL_check_dim_or_options(lua_State *L, int idx, const char *const *keys, const char *op) {
  int kind = dim_or_options(L, idx, op);
  if (kind == 1) dlbL_check_keys(L, idx, keys, "option", op);
  return kind;
}

/* The one walk of the table at idx: each key checked, the value of keys[k]
 * left in slot first + k (first: the returned slot; nil when absent). */
static int collect(lua_State *L, int idx, const char *const *keys, const char *op) {
  int n = 0, first = lua_gettop(L) + 1;
  idx = lua_absindex(L, idx);
  while (keys[n]) n++;
  luaL_checkstack(L, n + 2, "options"); /* before the walk: a failure leaves nothing pushed */
  for (int k = 0; k < n; k++) lua_pushnil(L);
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    int k = key_index(L, keys);
    if (k < 0) unknown_key(L, keys, "option", op);
    lua_replace(L, first + k); /* the value; the key stays for lua_next */
  }
  return first;
}

int dlbL_opt_collect(lua_State *L, int idx, const char *const *keys, const char *op) {
  return options_given(L, idx, op) ? collect(L, idx, keys, op) : 0;
}

int dlbL_collect_dim_or_options(lua_State *L, int idx, const char *const *keys, int *first,
                                const char *op) {
  int kind = dim_or_options(L, idx, op);
  *first = kind == 1 ? collect(L, idx, keys, op) : 0;
  return kind;
}

int dlbL_opt_slot(const char *const *keys, int first, const char *key) {
  for (int k = 0; first && keys[k]; k++)
    if (strcmp(keys[k], key) == 0) return DLBL_OPT_SLOT + first + k;
  return 0;
}

int dlbL_opt_get(lua_State *L, int idx, const char *key) {
  if (idx >= DLBL_OPT_SLOT) { /* collected: the value itself */
    lua_pushvalue(L, idx - DLBL_OPT_SLOT);
    return lua_type(L, -1);
  }
  if (idx == 0) { /* collected, no options */
    lua_pushnil(L);
    return LUA_TNIL;
  }
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) == LUA_TTABLE) {
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
      if (is_key(L, -2, key)) {
        lua_remove(L, -2); /* the key: the value stays */
        return lua_type(L, -1);
      }
      lua_pop(L, 1);
    }
  }
  lua_pushnil(L);
  return LUA_TNIL;
}

int dlbL_opt_boolean(lua_State *L, int idx, const char *key, int dflt, const char *op) {
  int t = dlbL_opt_get(L, idx, key), r = dflt;
  if (t == LUA_TBOOLEAN) r = lua_toboolean(L, -1);
  else if (t != LUA_TNIL) wrong_type(L, key, "a boolean", op);
  lua_pop(L, 1);
  return r;
}

/* The integer at the top of the stack: a number (or, on LuaJIT, an
 * int64_t cdata) with an exact int64 value; no string. */
static int64_t integer_on_top(lua_State *L, const char *key, const char *op) {
  int isint = 0;
  int64_t v = lua_type(L, -1) == LUA_TSTRING ? 0 : (int64_t)dlbL_tointegerx(L, -1, &isint);
  if (!isint) wrong_type(L, key, "an integer", op);
  return v;
}

int64_t dlbL_opt_integer(lua_State *L, int idx, const char *key, int64_t dflt, const char *op) {
  int64_t r = dflt;
  if (dlbL_opt_get(L, idx, key) != LUA_TNIL) r = integer_on_top(L, key, op);
  lua_pop(L, 1);
  return r;
}

double dlbL_opt_number(lua_State *L, int idx, const char *key, double dflt, const char *op) {
  int t = dlbL_opt_get(L, idx, key);
  double r = dflt;
  if (t == LUA_TNUMBER) r = (double)lua_tonumber(L, -1);
  else if (t != LUA_TNIL) wrong_type(L, key, "a number", op);
  lua_pop(L, 1);
  return r;
}

int dlbL_opt_choice(lua_State *L, int idx, const char *key, const char *const *names, int dflt,
                    const char *op) {
  int t = dlbL_opt_get(L, idx, key), k = dflt;
  if (t != LUA_TNIL) {
    const char *s = t == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    for (k = 0; s && names[k] && strcmp(names[k], s) != 0; k++) {
    }
    if (!s || !names[k]) {
      char list[200];
      size_t len = 0;
      list[0] = 0;
      for (int i = 0; names[i] && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, i ? ", \"%s\"" : "\"%s\"", names[i]);
      if (s)
        dlbL_raise(L, DLB_E_ARGUMENT, op, "option %s must be one of %s, got \"%.40s\"", key, list,
                   s);
      dlbL_raise(L, DLB_E_ARGUMENT, op, "option %s must be one of %s, got %s", key, list,
                 type_of(L, -1));
    }
  }
  lua_pop(L, 1);
  return k;
}

int dlbL_opt_dtype(lua_State *L, int idx, const char *key, dlb_dtype *dtype, const char *op) {
  int given = dlbL_opt_get(L, idx, key) != LUA_TNIL;
  if (given) *dtype = dlbL_check_dtype(L, -1, op);
  lua_pop(L, 1);
  return given;
}

/* Reads the device string at the top (option key) into where. */
static void device_on_top(lua_State *L, const char *key, dlbL_options *where, const char *op) {
  if (lua_type(L, -1) != LUA_TSTRING) wrong_type(L, key, "a device string such as \"cpu\"", op);
  dlbL_check_device(L, -1, where, op);
}

int dlbL_opt_device(lua_State *L, int idx, const char *key, dlbL_options *where, const char *op) {
  int t = dlbL_opt_get(L, idx, key);
  if (t != LUA_TNIL) device_on_top(L, key, where, op);
  lua_pop(L, 1);
  return t != LUA_TNIL;
}

int dlbL_opt_dim(lua_State *L, int idx, const char *key, int ndim, int dflt, const char *op) {
  int r = dflt;
  if (dlbL_opt_get(L, idx, key) != LUA_TNIL) r = dlbL_check_dim(L, -1, ndim, op);
  lua_pop(L, 1);
  return r;
}

uint64_t dlbL_check_dims(lua_State *L, int idx, int ndim, const char *op) {
  uint64_t mask = 0;
  lua_Integer n;
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) == LUA_TNUMBER) return UINT64_C(1) << dlbL_check_dim(L, idx, ndim, op);
  if (lua_type(L, idx) != LUA_TTABLE)
    dlbL_raise(L, DLB_E_ARGUMENT, op, "option dim must be a dim or a list of dims, got %s",
               luaL_typename(L, idx));
  if ((n = dlbL_list_length(L, idx)) < 0) /* the usage line only for the error */
    n = dlbL_check_list(L, idx, "option dim", dlbL_usage(op), op);
  for (lua_Integer i = 1; i <= n; i++) {
    int d;
    lua_rawgeti(L, idx, (lua_Integer)i);
    d = dlbL_check_dim(L, -1, ndim, op);
    if (mask >> d & 1)
      dlbL_raise_hint(L, DLB_E_ARGUMENT, op,
                      "list each dimension once (-1 and ndim name the same one)",
                      "dimension %d is listed twice", d + 1);
    mask |= UINT64_C(1) << d;
    lua_pop(L, 1);
  }
  return mask;
}

dlb_array *dlbL_opt_array(lua_State *L, int idx, const char *key, const char *op) {
  dlb_array *a;
  if (dlbL_opt_get(L, idx, key) == LUA_TNIL) {
    lua_pop(L, 1);
    return NULL;
  }
  if (!(a = dlbL_to_array(L, -1))) wrong_type(L, key, "a dlbridge.Array", op);
  /* a released out would read as "allocate one" to the core */
  if (!a->buffer) dlbL_raise(L, DLB_E_DELETED, op, "the %s array was deleted", key);
  return a;
}

dlb_array *dlbL_opt_array_like(lua_State *L, int idx, const char *key, int has_dtype,
                               dlb_dtype dtype, const char *op) {
  if (dlbL_opt_get(L, idx, key) == LUA_TNIL) {
    lua_pop(L, 1);
    return NULL;
  }
  return dlbL_check_array_like(L, lua_gettop(L), has_dtype, dtype, op);
}

/* The list opts[key] pushed, and its length; -1 (nothing pushed) when absent. */
static lua_Integer opt_list(lua_State *L, int idx, const char *key, const char *op) {
  char what[64];
  lua_Integer n;
  int t = dlbL_opt_get(L, idx, key);
  if (t == LUA_TNIL) {
    lua_pop(L, 1);
    return -1;
  }
  if (t != LUA_TTABLE) wrong_type(L, key, "a list", op);
  if ((n = dlbL_list_length(L, -1)) >= 0) return n; /* the message only for the error */
  snprintf(what, sizeof what, "option %s", key);
  return dlbL_check_list(L, -1, what, dlbL_usage(op), op);
}

/* Raises ARGUMENT for entry i of the list option key (at the top). */
static void wrong_entry(lua_State *L, const char *key, lua_Integer i, const char *what,
                        const char *op) __attribute__((noreturn));
static void wrong_entry(lua_State *L, const char *key, lua_Integer i, const char *what,
                        const char *op) {
  char buf[32];
  dlbL_raise(L, DLB_E_ARGUMENT, op, "option %s: entry %lld must be %s, got %s", key, (long long)i,
             what, got(L, buf, sizeof buf));
}

/* Too many entries in the list option key. */
static void too_long(lua_State *L, const char *key, lua_Integer n, int max, const char *op)
    __attribute__((noreturn));
static void too_long(lua_State *L, const char *key, lua_Integer n, int max, const char *op) {
  dlbL_raise(L, DLB_E_ARGUMENT, op, "option %s has %lld entries, at most %d", key, (long long)n,
             max);
}

int dlbL_opt_integers(lua_State *L, int idx, const char *key, int64_t *out, int max,
                      const char *op) {
  lua_Integer n = opt_list(L, idx, key, op);
  if (n < 0) return -1;
  if (n > max) too_long(L, key, n, max, op);
  for (lua_Integer i = 1; i <= n; i++) {
    int isint = 0;
    lua_rawgeti(L, -1, i);
    if (lua_type(L, -1) != LUA_TSTRING) out[i - 1] = (int64_t)dlbL_tointegerx(L, -1, &isint);
    if (!isint) wrong_entry(L, key, i, "an integer", op);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return (int)n;
}

int dlbL_opt_numbers(lua_State *L, int idx, const char *key, double *out, int max, const char *op) {
  lua_Integer n = opt_list(L, idx, key, op);
  if (n < 0) return -1;
  if (n > max) too_long(L, key, n, max, op);
  for (lua_Integer i = 1; i <= n; i++) {
    if (lua_rawgeti(L, -1, i) != LUA_TNUMBER) wrong_entry(L, key, i, "a number", op);
    out[i - 1] = (double)lua_tonumber(L, -1);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return (int)n;
}

/* --- the common option sets ------------------------------------------------ */

void dlbL_check_options(lua_State *L, int idx, dlbL_options *opts, const char *op) {
  static const char *const keys[] = {"dtype", "device", NULL};
  opts->has_dtype = 0;
  opts->dtype = DLB_FLOAT64;
  opts->backend = dlbL_state(L)->cpu;
  opts->device_id = 0;
  int base;
  if (idx == 0 || !options_given(L, idx, op)) return;
  /* One walk of the table (a small call's options cost a walk each): the
   * keys checked, the values kept in two slots and read after it, so an
   * unknown key is still reported before a wrong value. dlbL_opt_collect's
   * walk, written out: on dl.zeros(10, {dtype = ...}) its stack check and
   * key count cost ~100 of the call's ~4,400 instructions. */
  idx = lua_absindex(L, idx);
  base = lua_gettop(L);
  lua_pushnil(L);
  lua_pushnil(L);
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    int k = key_index(L, keys);
    if (k < 0) unknown_key(L, keys, "option", op);
    lua_replace(L, base + 1 + k); /* the value */
  }
  if (!lua_isnil(L, base + 1)) {
    opts->dtype = dlbL_check_dtype(L, base + 1, op);
    opts->has_dtype = 1;
  }
  if (!lua_isnil(L, base + 2)) {
    lua_pushvalue(L, base + 2);
    device_on_top(L, "device", opts, op);
  }
  lua_settop(L, base);
}

void dlbL_check_load_options(lua_State *L, int idx, dlbL_load_options *o, const char *op) {
  static const char *const keys[] = {"copy", "device", NULL};
  dlbL_options where;
  int copy;
  dlbL_check_options(L, 0, &where, op); /* the cpu */
  o->copy = DLB_COPY_IF_NEEDED;
  if (dlbL_check_option_table(L, idx, keys, op)) {
    if ((copy = dlbL_opt_boolean(L, idx, "copy", -1, op)) >= 0)
      o->copy = copy ? DLB_COPY_ALWAYS : DLB_COPY_NEVER;
    dlbL_opt_device(L, idx, "device", &where, op);
  }
  o->backend = where.backend;
  o->device_id = where.device_id;
}
