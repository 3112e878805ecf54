/* random.c -- dl.random: NumPy's Generator (SeedSequence + PCG64) from Lua,
 * bit for bit (the core: src/random/). A generator is a userdata
 * (dlbridge.Generator) holding the PCG64 state and, when it was made from a
 * seed, the seed sequence's words (its user value, a string of 32-bit
 * words: the entropy, then the spawn key) for spawn. Draws without a shape
 * return a Lua number, as NumPy returns a scalar; with a shape, a new cpu
 * array, filled by src/random/generator.c (as shuffles are): inside the
 * host's work bounds (work.h), an interrupted draw or shuffle leaving the
 * generator as it was before the call. */
#define _DEFAULT_SOURCE /* getentropy */
#include <math.h>
#include <string.h>
#include <unistd.h>
#include "../compute/construct.h"
#include "../compute/select.h"
#include "../core/shape.h"
#include "../core/work.h"
#include "../random/choice.h"
#include "../random/generator.h"
#include "../random/seed_sequence.h"
#include "internal.h"

#define RNG_MT "dlbridge.Generator"
#define RNG_TAG UINT64_C(0x646c622d726e6730) /* "dlb-rng0" */

typedef struct lua_rng {
  uint64_t tag;
  /* the dlb_pcg64, 16-byte aligned inside (a userdata is aligned to 8 only) */
  unsigned char storage[sizeof(dlb_pcg64) + 16];
  int seeded;         /* made from a seed sequence: spawn works */
  size_t n_entropy;   /* words of entropy in the user value */
  size_t n_spawn;     /* then words of the spawn key */
  uint64_t n_spawned; /* children spawned so far */
} lua_rng;

#define SEED_HINT                                                                                  \
  "a seed is an integer >= 0, a hex string \"0x...\" (any width: a 128-bit seed), or a list of "   \
  "them (NumPy's entropy sequence); nil draws fresh entropy from the system"

/* The bit generator of r. */
static dlb_pcg64 *gen_of(lua_rng *r) {
  return (dlb_pcg64 *)(void *)(((uintptr_t)r->storage + 15) & ~(uintptr_t)15);
}

/* The generator at idx, or NULL. */
static lua_rng *to_rng(lua_State *L, int idx) {
  lua_rng *r = (lua_rng *)lua_touserdata(L, idx);
  return r && lua_rawlen(L, idx) == sizeof *r && r->tag == RNG_TAG ? r : NULL;
}

static lua_rng *check_rng(lua_State *L, int idx, const char *op) {
  lua_rng *r = to_rng(L, idx);
  if (!r)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op,
                    "call it as a method of a generator: local rng = dl.random.default_rng(42); "
                    "rng:random(3)",
                    "argument #%d: a dlbridge.Generator expected, got %s", idx,
                    luaL_typename(L, idx));
  return r;
}

/* --- seeds --- */

/* Appends the 32-bit words of the hex string s ("0x..."), least significant
 * first, high zero words dropped ([0] for zero). */
static void add_hex_words(lua_State *L, luaL_Buffer *b, const char *s, size_t len, const char *op) {
  size_t start = 2, end = len;
  if (len < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, SEED_HINT,
                    "a seed string must be hexadecimal, \"0x\" then digits, got \"%.40s\"", s);
  while (start < end - 1 && s[start] == '0') start++; /* leading zeros add no words */
  for (size_t pos = end; pos > start;) {
    uint32_t w = 0;
    size_t first = pos >= start + 8 ? pos - 8 : start;
    for (size_t k = first; k < pos; k++) {
      int c = (unsigned char)s[k], d;
      if (c >= '0' && c <= '9') d = c - '0';
      else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
      else
        dlbL_raise_hint(L, DLB_E_ARGUMENT, op, SEED_HINT,
                        "a seed string must be hexadecimal, \"0x\" then digits, got \"%.40s\"", s);
      w = w << 4 | (uint32_t)d;
    }
    luaL_addlstring(b, (const char *)&w, sizeof w);
    pos = first;
  }
}

/* Appends the words of one seed item at idx (an integer >= 0 or a hex
 * string). pop: the item is on top of the stack, above the buffer, and is
 * popped before anything is added (lauxlib grows a buffer only at the top;
 * a string item stays alive in its list). */
static void add_seed_item(lua_State *L, luaL_Buffer *b, int idx, int pop, const char *op) {
  if (lua_type(L, idx) == LUA_TSTRING) {
    size_t len;
    const char *s = lua_tolstring(L, idx, &len);
    if (pop) lua_pop(L, 1);
    add_hex_words(L, b, s, len, op);
  } else if (dlbL_isinteger(L, idx)) {
    lua_Integer v = dlbL_tointeger(L, idx);
    uint32_t w[2];
    size_t n;
    if (v < 0)
      dlbL_raise_hint(L, DLB_E_VALUE, op, SEED_HINT, "a seed must be >= 0, got %lld", (long long)v);
    if (pop) lua_pop(L, 1);
    n = dlb_seed_words_of((uint64_t)v, w);
    luaL_addlstring(b, (const char *)w, n * sizeof w[0]);
  } else {
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, SEED_HINT,
                    "a seed must be an integer, a hex string or a list of them, got %s",
                    lua_type(L, idx) == LUA_TNUMBER ? "a float" : luaL_typename(L, idx));
  }
}

/* Pushes the entropy words of the seed at idx as a string. */
static void push_seed_words(lua_State *L, int idx, const char *op) {
  luaL_Buffer b;
  idx = lua_absindex(L, idx);
  luaL_buffinit(L, &b);
  if (lua_isnoneornil(L, idx)) {
    uint32_t w[4];
    size_t n = 4;
    if (getentropy(w, sizeof w) != 0)
      dlbL_raise_hint(L, DLB_E_UNSUPPORTED, op, "pass a seed: dl.random.default_rng(12345)",
                      "the system gave no entropy for a fresh seed");
    while (n > 1 && w[n - 1] == 0) n--; /* NumPy's randbits(128) as an integer */
    luaL_addlstring(&b, (const char *)w, n * sizeof w[0]);
  } else if (lua_type(L, idx) == LUA_TTABLE) {
    lua_Integer len = dlbL_check_list(L, idx, "a seed list", SEED_HINT, op);
    for (lua_Integer i = 1; i <= len; i++) {
      lua_rawgeti(L, idx, i);
      if (lua_type(L, -1) == LUA_TTABLE)
        dlbL_raise_hint(L, DLB_E_ARGUMENT, op, SEED_HINT, "seed list entry %lld is a table",
                        (long long)i);
      add_seed_item(L, &b, lua_gettop(L), 1, op);
    }
  } else {
    add_seed_item(L, &b, idx, 0, op);
  }
  luaL_pushresult(&b);
}

/* Pushes a new generator seeded by SeedSequence(entropy, spawn_key): words
 * is the string of entropy words then spawn-key words. */
static lua_rng *push_seeded(lua_State *L, const char *words, size_t n_entropy, size_t n_spawn) {
  const uint32_t *w = (const uint32_t *)(const void *)words;
  uint32_t pool[DLB_SEED_POOL_SIZE];
  uint64_t state[4];
  lua_rng *r = lua_newuserdatauv(L, sizeof *r, 1);
  memset(r, 0, sizeof *r);
  r->tag = RNG_TAG;
  r->seeded = 1;
  r->n_entropy = n_entropy;
  r->n_spawn = n_spawn;
  lua_pushlstring(L, words, (n_entropy + n_spawn) * sizeof(uint32_t));
  lua_setiuservalue(L, -2, 1);
  luaL_setmetatable(L, RNG_MT);
  dlb_seed_pool(w, n_entropy, w + n_entropy, n_spawn, pool);
  dlb_seed_generate64(pool, state, 4);
  dlb_pcg64_seed(gen_of(r), state);
  return r;
}

/* dl.random.default_rng(seed): protected (the seed's words are a Lua string). */
static int default_rng_unprotected(lua_State *L) {
  const char *words;
  size_t len;
  if (to_rng(L, 1)) { /* NumPy: a Generator passes through */
    lua_settop(L, 1);
    return 1;
  }
  lua_settop(L, 1); /* a nil seed stays at 1 (luaL_buffinit pushes above it) */
  push_seed_words(L, 1, "dl.random.default_rng");
  words = lua_tolstring(L, -1, &len);
  push_seeded(L, words, len / sizeof(uint32_t), 0);
  return 1;
}

static int random_default_rng(lua_State *L) {
  dlbL_check_nargs(L, 1, "dl.random.default_rng");
  return dlbL_call_protected(L, default_rng_unprotected, "dl.random.default_rng") ? 1 : 0;
}

/* --- state --- */

/* Pushes the 128-bit v as "0x" and 32 hex digits. */
static void push_hex128(lua_State *L, dlb_u128 v) {
  char s[40];
  static const char digits[] = "0123456789abcdef";
  s[0] = '0';
  s[1] = 'x';
  for (int k = 0; k < 32; k++) s[2 + k] = digits[(unsigned)(v >> (4 * (31 - k))) & 15];
  lua_pushlstring(L, s, 34);
}

#define STATE_HINT                                                                                 \
  "a state is what rng:state() returns: {bit_generator = \"PCG64\", state = {state = "             \
  "\"0x...\", inc = \"0x...\"}, has_uint32 = 0, uinteger = 0} (128-bit values as hex strings "     \
  "or integers >= 0)"

/* rng:state(): NumPy's bit_generator.state as a table. */
static int state_unprotected(lua_State *L) {
  lua_rng *r = to_rng(L, 1);
  lua_createtable(L, 0, 4);
  lua_pushliteral(L, "PCG64");
  lua_setfield(L, -2, "bit_generator");
  lua_createtable(L, 0, 2);
  push_hex128(L, gen_of(r)->state);
  lua_setfield(L, -2, "state");
  push_hex128(L, gen_of(r)->inc);
  lua_setfield(L, -2, "inc");
  lua_setfield(L, -2, "state");
  lua_pushinteger(L, gen_of(r)->has_uint32);
  lua_setfield(L, -2, "has_uint32");
  lua_pushinteger(L, (lua_Integer)gen_of(r)->uinteger);
  lua_setfield(L, -2, "uinteger");
  return 1;
}

static int random_state(lua_State *L) {
  check_rng(L, 1, "Generator:state");
  dlbL_check_nargs(L, 1, "Generator:state");
  return dlbL_call_protected(L, state_unprotected, "Generator:state");
}

/* A 128-bit value of a state table: a hex string or an integer >= 0. */
static dlb_u128 check_u128(lua_State *L, int idx, const char *what, const char *op) {
  dlb_u128 v = 0;
  if (dlbL_isinteger(L, idx) && dlbL_tointeger(L, idx) >= 0)
    return (dlb_u128)dlbL_tointeger(L, idx);
  if (lua_type(L, idx) == LUA_TSTRING) {
    size_t len, k = 2;
    const char *s = lua_tolstring(L, idx, &len);
    int ok = len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    while (ok && k < len && s[k] == '0') k++;
    ok = ok && len - k <= 32;
    for (; ok && k < len; k++) {
      int c = (unsigned char)s[k], d = c >= '0' && c <= '9'   ? c - '0'
                                       : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                       : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                              : -1;
      if (d < 0) ok = 0;
      v = v << 4 | (unsigned)d;
    }
    if (ok) return v;
  }
  dlbL_raise_hint(L, DLB_E_VALUE, op, STATE_HINT,
                  "%s must be a hex string \"0x...\" of at most 128 bits or an integer >= 0", what);
}

/* Reads the state table at 1 into g. */
static void check_state_table(lua_State *L, dlb_pcg64 *g, const char *op) {
  static const char *const keys[] = {"bit_generator", "state", "has_uint32", "uinteger", NULL};
  lua_Integer v;
  int isint;
  if (lua_type(L, 1) != LUA_TTABLE)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, STATE_HINT,
                    "argument #1: a state table expected, got %s", luaL_typename(L, 1));
  dlbL_check_keys(L, 1, keys, "state key", op);
  lua_getfield(L, 1, "bit_generator");
  if (lua_type(L, -1) != LUA_TSTRING || strcmp(lua_tostring(L, -1), "PCG64") != 0)
    dlbL_raise_hint(L, DLB_E_VALUE, op, STATE_HINT,
                    "state.bit_generator must be \"PCG64\" (the only bit generator here)");
  if (lua_getfield(L, 1, "state") != LUA_TTABLE)
    dlbL_raise_hint(L, DLB_E_VALUE, op, STATE_HINT, "state.state must be a table {state =, inc =}");
  lua_getfield(L, -1, "state");
  g->state = check_u128(L, -1, "state.state.state", op);
  lua_getfield(L, -2, "inc");
  g->inc = check_u128(L, -1, "state.state.inc", op);
  lua_getfield(L, 1, "has_uint32");
  if (lua_isboolean(L, -1)) {
    g->has_uint32 = lua_toboolean(L, -1);
  } else {
    v = dlbL_tointegerx(L, -1, &isint);
    if (!isint || (v != 0 && v != 1))
      dlbL_raise_hint(L, DLB_E_VALUE, op, STATE_HINT, "state.has_uint32 must be 0 or 1");
    g->has_uint32 = (int)v;
  }
  lua_getfield(L, 1, "uinteger");
  v = dlbL_tointegerx(L, -1, &isint);
  if (!isint || v < 0 || v > (lua_Integer)UINT32_MAX)
    dlbL_raise_hint(L, DLB_E_VALUE, op, STATE_HINT,
                    "state.uinteger must be an integer in [0, 2^32)");
  g->uinteger = (uint32_t)v;
  lua_settop(L, 1);
}

/* dl.random.from_state(t): a generator in state t (it cannot spawn: NumPy's
 * state holds no seed sequence). */
static int from_state_unprotected(lua_State *L) {
  dlb_pcg64 g;
  lua_rng *r;
  check_state_table(L, &g, "dl.random.from_state");
  r = lua_newuserdatauv(L, sizeof *r, 1);
  memset(r, 0, sizeof *r);
  r->tag = RNG_TAG;
  *gen_of(r) = g;
  luaL_setmetatable(L, RNG_MT);
  return 1;
}

static int random_from_state(lua_State *L) {
  dlbL_check_nargs(L, 1, "dl.random.from_state");
  return dlbL_call_protected(L, from_state_unprotected, "dl.random.from_state");
}

/* A lower bound of the Lua memory one child of a generator with nw seed
 * words takes: its userdata (a header, one user value), its seed words' string
 * (a header, one more spawn-key word at least, the terminator) and its slot
 * in the list. */
static size_t child_bytes(size_t nw) {
  return sizeof(lua_rng) + 40 + 24 + (nw + 1) * sizeof(uint32_t) + 1 + 16;
}

/* rng:spawn(n): n children, as SeedSequence.spawn (spawn key + (i,)). A
 * child takes some microseconds: the host's interrupt is looked at before
 * each (the children made so far are garbage, and the generator spawned
 * none). */
static int spawn_unprotected(lua_State *L) {
  const char *op = "Generator:spawn";
  lua_rng *r = to_rng(L, 1);
  lua_Integer n = dlbL_tointeger(L, 2);
  size_t len, nw = r->n_entropy + r->n_spawn;
  const char *words;
  dlb_budget *budget = dlbL_state(L)->budget;
  lua_getiuservalue(L, 1, 1);
  words = lua_tolstring(L, -1, &len);
  lua_createtable(L, (int)n, 0);
  for (lua_Integer k = 0; k < n; k++) {
    uint32_t key[2];
    size_t nk = dlb_seed_words_of(r->n_spawned + (uint64_t)k, key);
    luaL_Buffer b;
    if (dlb_work_raised(budget)) {
      dlb_error err;
      dlb_work_interrupted(op, &err);
      dlbL_raise_error(L, &err, op);
    }
    luaL_buffinit(L, &b);
    luaL_addlstring(&b, words, nw * sizeof(uint32_t));
    luaL_addlstring(&b, (const char *)key, nk * sizeof key[0]);
    luaL_pushresult(&b);
    push_seeded(L, lua_tostring(L, -1), r->n_entropy, r->n_spawn + nk);
    lua_rawseti(L, -3, k + 1);
    lua_pop(L, 1);
  }
  r->n_spawned += (uint64_t)n;
  return 1;
}

/* Before a spawn starts: n children count against the host's work limit
 * (and a raised interrupt refuses it), their Lua memory against its memory
 * limit (OUT_OF_MEMORY before any is made, as tobytes and totable). */
static int random_spawn(lua_State *L) {
  const char *op = "Generator:spawn";
  lua_rng *r = check_rng(L, 1, op);
  int isint;
  lua_Integer n = dlbL_tointegerx(L, 2, &isint);
  dlb_error err;
  dlbL_check_nargs(L, 2, op);
  if (!isint || n < 0 || n > 1000000)
    dlbL_raise(L, DLB_E_ARGUMENT, op, "n must be an integer in [0, 1e6]");
  if (!r->seeded)
    dlbL_raise_hint(L, DLB_E_VALUE, op,
                    "only a generator made by dl.random.default_rng (or spawned) has a seed "
                    "sequence to spawn from; a state table holds none",
                    "this generator was made from a state and has no seed sequence");
  if (n > 0 && dlb_work_admit(dlbL_state(L)->budget, (int64_t)n, op, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  dlbL_reserve_lua(L, (size_t)n * child_bytes(r->n_entropy + r->n_spawn), op, "generators");
  return dlbL_call_protected(L, spawn_unprotected, op);
}

/* --- draws --- */

/* Pushes the result of d: a Lua number without a shape (has_shape 0), else
 * a new cpu array of shape. */
static int push_draw(lua_State *L, lua_rng *r, dlb_draw *d, int has_shape, int ndim,
                     const int64_t *shape, const char *op) {
  dlb_array *a;
  dlb_error err;
  int64_t numel;
  if (!has_shape) {
    union {
      double f64;
      float f32;
      uint64_t u64;
      uint32_t u32;
      uint16_t u16;
      uint8_t u8;
    } v;
    dlb_scalar s;
    if (d->kind < DLB_DRAW_EXPONENTIAL) { /* a draw of bounded time */
      dlb_draw_fill(gen_of(r), d, &v, 1);
    } else if (dlb_draw_one(gen_of(r), d, &v, dlbL_state(L)->budget, op, &err) != DLB_OK) {
      dlbL_raise_error(L, &err, op); /* (a rejection loop stopped by the interrupt) */
    }
    dlb_scalar_load(d->dtype, &v, &s);
    dlbL_push_scalar(L, &s);
    return 1;
  }
  if (dlb_shape_numel(ndim, shape, &numel, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
  a = dlbL_push_new(L, numel, dlb_dtype_get(d->dtype)->itemsize, op);
  if (dlb_array_allocate(a, dlbL_state(L)->cpu, 0, d->dtype, ndim, shape, 0, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  if (dlb_draw_into(gen_of(r), d, a, dlbL_state(L)->budget, op, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  return 1;
}

/* The shape argument at idx: nil (no shape: a scalar), an integer or a table. */
static int check_shape_arg(lua_State *L, int idx, int64_t *shape, int *ndim, const char *op) {
  if (lua_isnoneornil(L, idx)) return 0;
  *ndim = dlbL_check_shape(L, idx, shape, 0, op);
  return 1;
}

/* Reads {dtype =} (and, for integers, {endpoint =}) at idx. */
static void check_draw_options(lua_State *L, int idx, dlb_draw *d, int *endpoint, const char *op) {
  static const char *const keys[] = {"dtype", NULL};
  static const char *const integer_keys[] = {"dtype", "endpoint", NULL};
  if (!dlbL_check_option_table(L, idx, endpoint ? integer_keys : keys, op)) return;
  dlbL_opt_dtype(L, idx, "dtype", &d->dtype, op);
  if (endpoint) *endpoint = dlbL_opt_boolean(L, idx, "endpoint", 0, op);
}

/* A float dtype for random / standard_normal: float64 or float32. */
static void check_float_dtype(lua_State *L, const dlb_draw *d, const char *op) {
  if (d->dtype != DLB_FLOAT64 && d->dtype != DLB_FLOAT32)
    dlbL_raise_hint(L, DLB_E_DTYPE, op, "dtype is \"float64\" (the default) or \"float32\"",
                    "%s draws float64 or float32, not %s", op, dlb_dtype_get(d->dtype)->name);
}

/* rng:random(shape, opts) and rng:standard_normal(shape, opts). */
static int draw_float(lua_State *L, dlb_draw_kind kind, const char *op) {
  lua_rng *r = check_rng(L, 1, op);
  int64_t shape[DLB_MAX_NDIM];
  int ndim = 0, has_shape;
  dlb_draw d = {.kind = kind, .dtype = DLB_FLOAT64, .standard = 1};
  int next = 3;
  has_shape = !lua_isnoneornil(L, 2);
  if (has_shape) /* one table, or integers: rng:random(2, 3) is rng:random{2, 3} */
    ndim = dlbL_check_shape_args(L, 2, shape, 0, &next, op);
  dlbL_check_nargs(L, next, op);
  check_draw_options(L, next, &d, NULL, op);
  check_float_dtype(L, &d, op);
  return push_draw(L, r, &d, has_shape, ndim, shape, op);
}

static int random_random(lua_State *L) {
  return draw_float(L, DLB_DRAW_RANDOM, "Generator:random");
}
static int random_standard_normal(lua_State *L) {
  return draw_float(L, DLB_DRAW_NORMAL, "Generator:standard_normal");
}

/* A finite number argument at idx (default def when nil). */
static double number_arg(lua_State *L, int idx, double def, const char *name, const char *op) {
  if (lua_isnoneornil(L, idx)) return def;
  if (lua_type(L, idx) != LUA_TNUMBER)
    dlbL_raise(L, DLB_E_ARGUMENT, op, "%s must be a number, got %s", name, luaL_typename(L, idx));
  return (double)lua_tonumber(L, idx);
}

/* rng:uniform(low, high, shape): low + (high - low) * random(). */
static int random_uniform(lua_State *L) {
  const char *op = "Generator:uniform";
  lua_rng *r = check_rng(L, 1, op);
  int64_t shape[DLB_MAX_NDIM];
  int ndim = 0, has_shape;
  double lo, hi;
  dlb_draw d = {.kind = DLB_DRAW_UNIFORM, .dtype = DLB_FLOAT64};
  dlbL_check_nargs(L, 4, op);
  lo = number_arg(L, 2, 0.0, "low", op);
  hi = number_arg(L, 3, 1.0, "high", op);
  has_shape = check_shape_arg(L, 4, shape, &ndim, op);
  d.a = lo;
  d.b = hi - lo;
  if (!isfinite(d.b))
    dlbL_raise_hint(L, DLB_E_VALUE, op, "low and high are finite and high - low is too",
                    "high - low (%g - %g) is not finite", hi, lo);
  return push_draw(L, r, &d, has_shape, ndim, shape, op);
}

/* rng:normal(loc, scale, shape): loc + scale * standard_normal(). */
static int random_normal(lua_State *L) {
  const char *op = "Generator:normal";
  lua_rng *r = check_rng(L, 1, op);
  int64_t shape[DLB_MAX_NDIM];
  int ndim = 0, has_shape;
  dlb_draw d = {.kind = DLB_DRAW_NORMAL, .dtype = DLB_FLOAT64};
  dlbL_check_nargs(L, 4, op);
  d.a = number_arg(L, 2, 0.0, "loc", op);
  d.b = number_arg(L, 3, 1.0, "scale", op);
  has_shape = check_shape_arg(L, 4, shape, &ndim, op);
  if (!(d.b >= 0))
    dlbL_raise_hint(L, DLB_E_VALUE, op, "scale is the standard deviation: a number >= 0",
                    "scale must be >= 0, got %g", d.b);
  return push_draw(L, r, &d, has_shape, ndim, shape, op);
}

/* The bounds of an integer dtype (int8..uint64, bool); 0 for others. */
static int dtype_bounds(dlb_dtype dtype, int64_t *lo, int64_t *hi) {
  switch (dtype) {
    case DLB_BOOL:
      *lo = 0;
      *hi = 1;
      return 1;
    case DLB_INT8:
      *lo = INT8_MIN;
      *hi = INT8_MAX;
      return 1;
    case DLB_INT16:
      *lo = INT16_MIN;
      *hi = INT16_MAX;
      return 1;
    case DLB_INT32:
      *lo = INT32_MIN;
      *hi = INT32_MAX;
      return 1;
    case DLB_INT64:
      *lo = INT64_MIN;
      *hi = INT64_MAX;
      return 1;
    case DLB_UINT8:
      *lo = 0;
      *hi = UINT8_MAX;
      return 1;
    case DLB_UINT16:
      *lo = 0;
      *hi = UINT16_MAX;
      return 1;
    case DLB_UINT32:
      *lo = 0;
      *hi = UINT32_MAX;
      return 1;
    case DLB_UINT64:
      *lo = 0;
      *hi = INT64_MAX;
      return 1; /* Lua integers stop there */
    default: return 0;
  }
}

/* An integer bound argument at idx. */
static int64_t integer_arg(lua_State *L, int idx, const char *name, const char *op) {
  if (!dlbL_isinteger(L, idx))
    dlbL_raise(L, DLB_E_ARGUMENT, op, "%s must be an integer, got %s", name,
               lua_type(L, idx) == LUA_TNUMBER ? "a float" : luaL_typename(L, idx));
  return (int64_t)dlbL_tointeger(L, idx);
}

/* rng:integers(low, high, shape, opts): NumPy's Generator.integers. */
static int random_integers(lua_State *L) {
  const char *op = "Generator:integers";
  lua_rng *r = check_rng(L, 1, op);
  int64_t shape[DLB_MAX_NDIM], lo, hi, lb, ub;
  int ndim = 0, has_shape, endpoint = 0;
  dlb_draw d = {.kind = DLB_DRAW_INTEGERS, .dtype = DLB_INT64};
  dlbL_check_nargs(L, 5, op);
  if (lua_isnoneornil(L, 3)) { /* integers(high): [0, high) */
    lo = 0;
    hi = integer_arg(L, 2, "high", op);
  } else {
    lo = integer_arg(L, 2, "low", op);
    hi = integer_arg(L, 3, "high", op);
  }
  has_shape = check_shape_arg(L, 4, shape, &ndim, op);
  check_draw_options(L, 5, &d, &endpoint, op);
  if (!dtype_bounds(d.dtype, &lb, &ub))
    dlbL_raise_hint(L, DLB_E_DTYPE, op, "dtype is an integer dtype (int8 .. uint64) or bool",
                    "integers draws integers, not %s", dlb_dtype_get(d.dtype)->name);
  if (!endpoint) {
    if (hi == INT64_MIN)
      dlbL_raise_hint(L, DLB_E_VALUE, op, "low < high, or low <= high with {endpoint = true}",
                      "low >= high");
    hi -= 1; /* the closed interval [low, high - 1] */
  }
  if (lo < lb)
    dlbL_raise_hint(L, DLB_E_VALUE, op, "low and high must fit the dtype",
                    "low (%lld) is out of bounds for %s", (long long)lo,
                    dlb_dtype_get(d.dtype)->name);
  if (hi > ub)
    dlbL_raise_hint(L, DLB_E_VALUE, op, "low and high must fit the dtype",
                    "high (%lld) is out of bounds for %s", (long long)(endpoint ? hi : hi + 1),
                    dlb_dtype_get(d.dtype)->name);
  if (lo > hi)
    dlbL_raise_hint(L, DLB_E_VALUE, op, "low < high, or low <= high with {endpoint = true}",
                    endpoint ? "low > high" : "low >= high");
  d.rng = (uint64_t)hi - (uint64_t)lo;
  d.off = (uint64_t)lo;
  return push_draw(L, r, &d, has_shape, ndim, shape, op);
}

/* --- more distributions: scalar parameters, as NumPy's scalar calls --- */

/* A number argument at idx that has no default. */
static double required_number(lua_State *L, int idx, const char *name, const char *op) {
  if (lua_type(L, idx) != LUA_TNUMBER)
    dlbL_raise(L, DLB_E_ARGUMENT, op, "%s must be a number, got %s", name, luaL_typename(L, idx));
  return (double)lua_tonumber(L, idx);
}

/* What a parameter must be, each checked as NumPy checks it. */
typedef enum param_rule {
  PARAM_NON_NEGATIVE, /* NumPy's CONS_NON_NEGATIVE: < 0 (and -0.0) refused, NaN passes */
  PARAM_POSITIVE,     /* NumPy's CONS_POSITIVE: <= 0 refused, NaN passes */
  PARAM_MEAN,         /* poisson's lam: 0 <= lam <= DLB_POISSON_LAM_MAX, NaN refused */
  PARAM_PROBABILITY,  /* 0 <= p <= 1, NaN refused */
  PARAM_TRIALS        /* an integer >= 0, into d.count; checked after the numbers, as NumPy */
} param_rule;

typedef struct distribution_param {
  const char *name;
  double fallback; /* its default; NAN: the argument is required */
  param_rule rule;
} distribution_param;

/* A distribution with scalar parameters: rng:<name>(params..., shape).
 * The number parameters go to d.a and d.b in their order. */
typedef struct distribution {
  const char *op;
  dlb_draw_kind kind;
  dlb_dtype dtype;
  int nparams;
  distribution_param params[2];
} distribution;

static const distribution EXPONENTIAL = {"Generator:exponential",
                                         DLB_DRAW_EXPONENTIAL,
                                         DLB_FLOAT64,
                                         1,
                                         {{"scale", 1.0, PARAM_NON_NEGATIVE}}};
static const distribution POISSON = {
    "Generator:poisson", DLB_DRAW_POISSON, DLB_INT64, 1, {{"lam", 1.0, PARAM_MEAN}}};
static const distribution BINOMIAL = {"Generator:binomial",
                                      DLB_DRAW_BINOMIAL,
                                      DLB_INT64,
                                      2,
                                      {{"n", NAN, PARAM_TRIALS}, {"p", NAN, PARAM_PROBABILITY}}};
static const distribution GAMMA = {
    "Generator:gamma",
    DLB_DRAW_GAMMA,
    DLB_FLOAT64,
    2,
    {{"shape_k", NAN, PARAM_NON_NEGATIVE}, {"scale", 1.0, PARAM_NON_NEGATIVE}}};
static const distribution BETA = {"Generator:beta",
                                  DLB_DRAW_BETA,
                                  DLB_FLOAT64,
                                  2,
                                  {{"a", NAN, PARAM_POSITIVE}, {"b", NAN, PARAM_POSITIVE}}};

/* Raises NumPy's error where v breaks the number parameter's rule. */
static void check_number_param(lua_State *L, double v, const distribution_param *p,
                               const char *op) {
  const char *name = p->name;
  switch (p->rule) {
    case PARAM_NON_NEGATIVE:
      if (!isnan(v) && signbit(v))
        dlbL_raise_hint(L, DLB_E_VALUE, op, "a number >= 0, as NumPy's", "%s < 0 (got %g)", name,
                        v);
      break;
    case PARAM_POSITIVE:
      if (v <= 0)
        dlbL_raise_hint(L, DLB_E_VALUE, op, "a number > 0, as NumPy's", "%s <= 0 (got %g)", name,
                        v);
      break;
    case PARAM_MEAN:
      if (!(v >= 0))
        dlbL_raise_hint(L, DLB_E_VALUE, op, "lam is the mean: a number >= 0",
                        "lam < 0 or lam is NaN");
      if (!(v <= DLB_POISSON_LAM_MAX))
        dlbL_raise_hint(L, DLB_E_VALUE, op,
                        "lam is at most NumPy's poisson_lam_max, 2^63 less 10 of its square "
                        "roots (about 9.22e18)",
                        "lam value too large (%g)", v);
      break;
    case PARAM_PROBABILITY:
      if (!(v >= 0) || !(v <= 1))
        dlbL_raise_hint(L, DLB_E_VALUE, op, "p is a probability: 0 <= p <= 1",
                        "p < 0, p > 1 or p is NaN (got %g)", v);
      break;
    case PARAM_TRIALS: break;
  }
}

/* rng:<dist>(params..., shape): reads the parameters (arguments 2..),
 * checks the numbers and then the trials, as NumPy does, and draws. */
static int draw_distribution(lua_State *L, const distribution *dist) {
  const char *op = dist->op;
  lua_rng *r = check_rng(L, 1, op);
  int64_t shape[DLB_MAX_NDIM];
  int ndim = 0, has_shape, k, nnumbers = 0;
  double numbers[2] = {0, 0};
  dlb_draw d = {.kind = dist->kind, .dtype = dist->dtype};
  dlbL_check_nargs(L, dist->nparams + 2, op);
  for (k = 0; k < dist->nparams; k++) {
    const distribution_param *p = &dist->params[k];
    if (p->rule == PARAM_TRIALS) d.count = integer_arg(L, k + 2, p->name, op);
    else
      numbers[nnumbers++] = isnan(p->fallback) ? required_number(L, k + 2, p->name, op)
                                               : number_arg(L, k + 2, p->fallback, p->name, op);
  }
  has_shape = check_shape_arg(L, dist->nparams + 2, shape, &ndim, op);
  for (k = 0, nnumbers = 0; k < dist->nparams; k++)
    if (dist->params[k].rule != PARAM_TRIALS)
      check_number_param(L, numbers[nnumbers++], &dist->params[k], op);
  if (d.count < 0)
    dlbL_raise_hint(L, DLB_E_VALUE, op, "n is the number of trials: an integer >= 0",
                    "n < 0 (got %lld)", (long long)d.count);
  d.a = numbers[0];
  d.b = numbers[1];
  return push_draw(L, r, &d, has_shape, ndim, shape, op);
}

/* rng:exponential(scale = 1, shape): scale * NumPy's exponential ziggurat. */
static int random_exponential(lua_State *L) { return draw_distribution(L, &EXPONENTIAL); }
/* rng:poisson(lam = 1, shape): int64 draws, NumPy's random_poisson. */
static int random_poisson(lua_State *L) { return draw_distribution(L, &POISSON); }
/* rng:binomial(n, p, shape): int64 draws, NumPy's random_binomial. */
static int random_binomial(lua_State *L) { return draw_distribution(L, &BINOMIAL); }
/* rng:gamma(shape_k, scale = 1, shape): scale * NumPy's standard gamma. */
static int random_gamma(lua_State *L) { return draw_distribution(L, &GAMMA); }
/* rng:beta(a, b, shape): NumPy's random_beta. */
static int random_beta(lua_State *L) { return draw_distribution(L, &BETA); }

/* --- choice --- */

#define CHOICE_HINT                                                                                \
  "rng:choice(n or a, size, {replace = true, p = probabilities, shuffle = true}): n an integer, "  \
  "a an array (its rows along dim 1 are the population)"

/* NumPy's tolerance of p's sum: sqrt of float64's epsilon, or of p's own
 * float dtype's when that is larger (an array of float32 or float16). */
static double choice_atol(dlb_dtype dtype) {
  switch (dtype) {
    case DLB_FLOAT32: return sqrt(1.1920928955078125e-07);
    case DLB_FLOAT16: return sqrt(9.765625e-04);
    case DLB_BFLOAT16: return sqrt(7.8125e-03);
    default: return sqrt(2.220446049250313e-16);
  }
}

/* opts.p at opts (a list of numbers or an array) as a new float64 cpu
 * array of pop elements, pushed, checked as NumPy checks it; NULL (nothing
 * pushed) without p. */
static dlb_array *choice_p(lua_State *L, int opts, int64_t pop, const char *op) {
  dlb_array *p = dlbL_opt_array_like(L, opts, "p", 0, DLB_FLOAT64, op), *pf;
  int pi = lua_gettop(L);
  dlb_dtype dtype;
  dlb_error err;
  static const char *const problems[] = {NULL, "probabilities contain NaN",
                                         "probabilities are not non-negative",
                                         "probabilities do not sum to 1"};
  dlb_choice_p_problem problem;
  if (!p) return NULL;
  if (p->ndim != 1) dlbL_raise_hint(L, DLB_E_VALUE, op, CHOICE_HINT, "p must be 1-dimensional");
  if (p->shape[0] != pop)
    dlbL_raise_hint(L, DLB_E_VALUE, op, CHOICE_HINT, "a and p must have same size");
  if (dlb_dtype_get(p->dtype)->kind == DLB_KIND_COMPLEX)
    dlbL_raise_hint(L, DLB_E_DTYPE, op, "p holds real probabilities", "p must be real, not %s",
                    dlb_dtype_get(p->dtype)->name);
  dtype = p->dtype;
  pf = dlbL_push_new(L, pop, sizeof(double), op);
  p = dlbL_check_live(L, pi, op); /* finalizers may have run */
  if (dlb_array_allocate(pf, dlbL_state(L)->cpu, 0, DLB_FLOAT64, 1, &pop, 0, &err) != DLB_OK ||
      dlb_array_read_into(p, dlb_array_host_data(pf), DLB_FLOAT64, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  problem =
      dlb_choice_check_p((const double *)(void *)dlb_array_host_data(pf), pop, choice_atol(dtype));
  if (problem != DLB_CHOICE_P_OK)
    dlbL_raise_hint(L, DLB_E_VALUE, op,
                    "p lists one probability per choice, each >= 0, summing to 1", "%s",
                    problems[problem]);
  return pf;
}

/* The scratch memory a route of choice will charge, made room for first
 * (dlbL_reserve collects garbage when the limit would refuse it). */
static void choice_reserve_scratch(lua_State *L, int has_p, int replace, int shuffle, int64_t pop,
                                   int64_t size) {
  if (size == 0) return;
  if (has_p) {
    dlbL_reserve(L, pop, replace ? sizeof(double) : 2 * sizeof(double));
  } else if (!replace) {
    if (dlb_choice_uses_tail(pop, size, shuffle)) dlbL_reserve(L, pop, sizeof(int64_t));
    else dlbL_reserve(L, size, 3 * sizeof(int64_t)); /* the hash set: under 2.4 * size slots */
  }
}

/* Fills idx (int64, size elements) with the indices NumPy's choice draws. */
static void choice_draw(lua_State *L, lua_rng *r, const dlb_array *idx, int64_t pop,
                        const dlb_array *pf, int replace, int shuffle, const char *op) {
  int64_t size = idx->numel, *out = (int64_t *)(void *)dlb_array_host_data(idx);
  const double *p = pf ? (const double *)(void *)dlb_array_host_data(pf) : NULL;
  dlb_budget *budget = dlbL_state(L)->budget;
  dlb_status st = DLB_OK;
  dlb_error err;
  if (replace && !p) { /* integers(0, pop, size) */
    dlb_draw d = {.kind = DLB_DRAW_INTEGERS, .dtype = DLB_INT64, .rng = (uint64_t)pop - 1};
    if (size > 0) st = dlb_draw_into(gen_of(r), &d, idx, budget, op, &err);
  } else if (replace) {
    st = dlb_choice_p(gen_of(r), p, pop, out, size, budget, op, &err);
  } else {
    if (size > pop)
      dlbL_raise_hint(L, DLB_E_VALUE, op, CHOICE_HINT,
                      "Cannot take a larger sample than population when replace is False");
    if (p && dlb_choice_count_positive(p, pop) < size)
      dlbL_raise_hint(L, DLB_E_VALUE, op, CHOICE_HINT, "Fewer non-zero entries in p than size");
    st = p ? dlb_choice_p_unique(gen_of(r), p, pop, out, size, budget, op, &err)
           : dlb_choice_unique(gen_of(r), pop, size, shuffle, out, budget, op, &err);
  }
  if (st != DLB_OK) dlbL_raise_error(L, &err, op);
}

/* Pushes element 0 of the 0-d (or one-element) array a as a Lua value. */
static void push_first(lua_State *L, const dlb_array *a, const char *op) {
  int64_t index[DLB_MAX_NDIM] = {0};
  dlb_scalar s;
  dlb_error err;
  if (dlb_array_get(a, index, &s, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
  dlbL_push_scalar(L, &s);
}

/* Pushes a.take(idx, dim 1) (the population at 2, pinned at a_pin). */
static dlb_array *choice_take(lua_State *L, int a_pin, const dlb_array *idx, const char *op) {
  const dlb_array *a = dlbL_to_array(L, a_pin);
  int64_t rows = a->shape[0], row = rows ? a->numel / rows : 0, n;
  size_t itemsize = dlb_array_itemsize(a);
  dlb_array *out = dlbL_push_empty(L, op); /* a is fetched again after it (records.c) */
  dlb_error err;
  n = row && idx->numel > INT64_MAX / row ? INT64_MAX : idx->numel * row;
  dlbL_reserve(L, n, itemsize);
  a = dlbL_to_array(L, a_pin);
  if (dlb_take(a, idx, 0, 0, out, dlbL_state(L)->cpu, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  return out;
}

/* rng:choice(a, size, opts): NumPy's Generator.choice along dim 1. */
static int random_choice(lua_State *L) {
  static const char *const keys[] = {"replace", "p", "shuffle", NULL};
  const char *op = "Generator:choice";
  lua_rng *r = check_rng(L, 1, op);
  int64_t shape[DLB_MAX_NDIM], pop, size = 1;
  int ndim = 0, has_shape, replace, shuffle, a_pin = 0;
  dlb_array *pf, *idx;
  dlb_error err;
  dlbL_check_nargs(L, 4, op);
  if (lua_type(L, 2) == LUA_TNUMBER) {
    if (!dlbL_isinteger(L, 2))
      dlbL_raise_hint(L, DLB_E_ARGUMENT, op, CHOICE_HINT,
                      "a must be an integer or an array, got a float");
    pop = (int64_t)dlbL_tointeger(L, 2);
  } else if (dlbL_to_array(L, 2)) {
    const dlb_array *a = dlbL_check_live(L, 2, op);
    if (a->ndim == 0)
      dlbL_raise_hint(L, DLB_E_ARGUMENT, op, CHOICE_HINT,
                      "a must be an integer or an array of at least 1 dim, got a 0-d array");
    pop = a->shape[0];
  } else {
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, CHOICE_HINT,
                    "argument #2: an integer or an array expected, got %s", luaL_typename(L, 2));
  }
  has_shape = check_shape_arg(L, 3, shape, &ndim, op);
  if (has_shape && dlb_shape_numel(ndim, shape, &size, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  dlbL_check_option_table(L, 4, keys, op);
  replace = dlbL_opt_boolean(L, 4, "replace", 1, op);
  shuffle = dlbL_opt_boolean(L, 4, "shuffle", 1, op);
  if (pop <= 0 && size != 0)
    dlbL_raise_hint(L, DLB_E_VALUE, op, CHOICE_HINT,
                    lua_type(L, 2) == LUA_TNUMBER
                        ? "a must be a positive integer unless no samples are taken"
                        : "a cannot be empty unless no samples are taken");
  if (lua_type(L, 2) != LUA_TNUMBER) {
    dlbL_pin(L, 2, op); /* the population, out of finalizers' reach */
    a_pin = lua_gettop(L);
  }
  pf = choice_p(L, 4, pop, op);
  idx = dlbL_push_new(L, size, sizeof(int64_t), op);
  choice_reserve_scratch(L, pf != NULL, replace, shuffle, pop, size);
  if (dlb_array_allocate(idx, dlbL_state(L)->cpu, 0, DLB_INT64, ndim, shape, 0, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  choice_draw(L, r, idx, pop, pf, replace, shuffle, op);
  if (a_pin) {
    dlb_array *out = choice_take(L, a_pin, idx, op);
    if (!has_shape && out->ndim == 0) push_first(L, out, op); /* NumPy's scalar a[i] */
    return 1;
  }
  if (!has_shape) push_first(L, idx, op);
  return 1;
}

/* --- permutations --- */

/* NumPy's shuffle of a (host, writable, ndim >= 1) by the generator r;
 * an interrupted shuffle leaves r as it was. */
static void shuffle_array(lua_State *L, lua_rng *r, const dlb_array *a, const char *op) {
  dlb_error err;
  if (dlb_shuffle(gen_of(r), a, dlbL_state(L)->budget, op, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
}

/* Checks that the array at idx can be shuffled in place; returns a private
 * view of it (pushed). */
static dlb_array *check_shufflable(lua_State *L, int idx, const char *op) {
  dlb_array *a = dlbL_check_live(L, idx, op);
  if (a->ndim == 0)
    dlbL_raise_hint(L, DLB_E_SHAPE, op,
                    "shuffle and permutation reorder along dim 1: a 0-d "
                    "array has none",
                    "cannot shuffle a 0-d array");
  if (a->readonly || a->buffer->readonly)
    dlbL_raise_hint(L, DLB_E_READ_ONLY, op, "shuffle a copy: local b = dl.array(a); rng:shuffle(b)",
                    "the array is read-only");
  if (a->numel > 0 && !dlb_array_host_data(a)) /* (size 0: a no-op anywhere, as NumPy's) */
    dlbL_raise_hint(L, DLB_E_UNSUPPORTED, op, "bring it to the cpu first: a:to(\"cpu\")",
                    "shuffle works on cpu arrays");
  return dlbL_pin(L, idx, op);
}

/* rng:shuffle(a): reorders a in place along dim 1 (NumPy's axis 0). */
static int random_shuffle(lua_State *L) {
  const char *op = "Generator:shuffle";
  lua_rng *r = check_rng(L, 1, op);
  dlb_array *v;
  dlbL_check_nargs(L, 2, op);
  if (!dlbL_to_array(L, 2))
    dlbL_raise(L, DLB_E_ARGUMENT, op, "argument #2: an array expected, got %s",
               luaL_typename(L, 2));
  v = check_shufflable(L, 2, op);
  shuffle_array(L, r, v, op);
  dlb_array_release(v);
  return 0;
}

/* rng:permutation(n): a shuffled dl.arange(n) (int64); rng:permutation(a):
 * a shuffled copy of a along dim 1. */
static int random_permutation(lua_State *L) {
  const char *op = "Generator:permutation";
  lua_rng *r = check_rng(L, 1, op);
  dlb_array *a;
  dlb_error err;
  dlbL_check_nargs(L, 2, op);
  if (lua_type(L, 2) != LUA_TNUMBER && !dlbL_to_array(L, 2))
    dlbL_raise(L, DLB_E_ARGUMENT, op, "argument #2: an integer or an array expected, got %s",
               luaL_typename(L, 2));
  if (lua_type(L, 2) == LUA_TNUMBER) {
    int isint;
    lua_Integer n = dlbL_tointegerx(L, 2, &isint);
    if (!isint || n < 0)
      dlbL_raise_hint(L, DLB_E_VALUE, op, "rng:permutation(n) shuffles 0 .. n-1: n >= 0",
                      "n must be an integer >= 0");
    a = dlbL_push_new(L, (int64_t)n, sizeof(int64_t), op);
    if (dlb_arange_int(a, dlbL_state(L)->cpu, 0, DLB_INT64, 0, 1, (int64_t)n, dlbL_state(L)->cpu,
                       &err) != DLB_OK)
      dlbL_raise_error(L, &err, op);
  } else {
    dlb_array *src = dlbL_check_live(L, 2, op);
    if (src->ndim == 0)
      dlbL_raise_hint(L, DLB_E_SHAPE, op, "permutation reorders along dim 1: a 0-d array has none",
                      "cannot permute a 0-d array");
    a = dlbL_push_empty(L, op);
    src = dlbL_check_live(L, 2, op); /* each allocation may run finalizers: fetched again */
    dlbL_reserve(L, src->numel, dlb_array_itemsize(src));
    src = dlbL_check_live(L, 2, op);
    if (dlb_array_allocate(a, dlbL_state(L)->cpu, 0, src->dtype, src->ndim, src->shape, 0, &err) !=
            DLB_OK ||
        dlb_array_copy_into(a, src, &err) != DLB_OK)
      dlbL_raise_error(L, &err, op);
  }
  shuffle_array(L, r, a, op);
  return 1;
}

/* tostring(rng) */
static int random_tostring(lua_State *L) {
  check_rng(L, 1, "Generator:__tostring");
  lua_pushliteral(L, "dlbridge.Generator(PCG64)");
  return 1;
}

static const luaL_Reg rng_methods[] = {
    {"random", random_random},     {"standard_normal", random_standard_normal},
    {"normal", random_normal},     {"uniform", random_uniform},
    {"integers", random_integers}, {"permutation", random_permutation},
    {"shuffle", random_shuffle},   {"state", random_state},
    {"spawn", random_spawn},       {"exponential", random_exponential},
    {"poisson", random_poisson},   {"binomial", random_binomial},
    {"gamma", random_gamma},       {"beta", random_beta},
    {"choice", random_choice},     {NULL, NULL}};

static const luaL_Reg random_functions[] = {
    {"default_rng", random_default_rng}, {"from_state", random_from_state}, {NULL, NULL}};

/* Pushes the module's upvalues (mt, state, methods) and sets funcs into the
 * table at -4 with them. */
static void set_with_upvalues(lua_State *L, int module, const luaL_Reg *funcs) {
  lua_pushvalue(L, module + 1);
  lua_pushvalue(L, module + 2);
  lua_pushvalue(L, module + 3);
  luaL_setfuncs(L, funcs, DLB_NUPVALUES);
}

/* Sets the Generator metatable and dl.random. Both are shared by every
 * script of the state, so both are read-only (see sandbox_spec.lua): the
 * metatable is protected, its __index is a read-only stand-in of the
 * methods, and dl.random is one of the module table. */
void dlbL_open_random(lua_State *L, int module) {
  int mt;
  luaL_newmetatable(L, RNG_MT);
  mt = lua_gettop(L);
  lua_createtable(L, 0, 16);
  set_with_upvalues(L, module, rng_methods);
  dlbL_push_readonly(L, -1, "Generator's methods");
  lua_setfield(L, mt, "__index");
  lua_pop(L, 1);
  lua_pushcfunction(L, random_tostring);
  lua_setfield(L, mt, "__tostring");
  dlbL_protect_metatable(L, mt, RNG_MT);
  lua_pop(L, 1);
  lua_createtable(L, 0, 2);
  set_with_upvalues(L, module, random_functions);
  dlbL_push_readonly(L, -1, "dl.random");
  lua_setfield(L, module, "random");
  lua_pop(L, 1);
}
