/* fuzz_lua_api.c -- sequences of dlbridge Lua API calls driven by the fuzz
 * bytes (tests/fuzz/README.md has the format).
 *
 * The bytes are translated into the text of a Lua program: a fixed prelude,
 * then up to MAX_STATEMENTS statements, each picked by one byte, with its
 * arguments picked by the bytes after it from pools of hostile values
 * (math.mininteger, 33+ dimensions, NaN, inf, tables, strings, deleted
 * arrays, consumed capsules, error objects, ...). Every dlbridge call goes
 * through CALL(slot, fault, f, ...), a C function that runs f in protected
 * mode, stores the result (or the error) into one of 8 slots S[1..8], and
 * optionally injects Lua memory faults during the call. Statements also make
 * finalizers (run by collectgarbage or at lua_close), coroutines (yielding
 * between statements, closed or abandoned), and `<close>` variables. The state
 * is closed with objects outstanding. The host's memory limit for arrays
 * (dlb_set_memory_limit) is set and lifted by statements too.
 *
 * FUZZ_VERBOSE=1 prints the generated program (the reproducer as Lua text).
 *
 * Crashes, sanitizer reports, leaks and timeouts are bugs; Lua errors are
 * not, except a dlbridge function raising a plain "not enough memory" error
 * (instead of an OUT_OF_MEMORY dlbridge.Error) while the memory to build the
 * error exists. FUZZ_STRICT_ERRORS=1 also fails on any other error from a
 * dlbridge C function that is not a dlbridge.Error. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lauxlib.h>
#include "backends/cpu/cpu.h"
#include "dlbridge.h"
#include "fuzz_common.h"
#include "queued.h"

#define MAX_STATEMENTS 48
#define MAX_DEPTH 2
#define NSLOTS 8

/* ---- a growing text buffer -------------------------------------------------------- */

typedef struct text {
  char *s;
  size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...) {
  va_list ap;
  int n;
  if (!t->s) {
    t->cap = 8192;
    t->s = malloc(t->cap);
    if (!t->s) abort();
  }
  for (;;) {
    size_t room = t->cap - t->len;
    va_start(ap, fmt);
    n = vsnprintf(t->s + t->len, room, fmt, ap);
    va_end(ap);
    if (n < 0) abort();
    if ((size_t)n < room) break;
    t->cap = (t->cap + (size_t)n + 1) * 2;
    t->s = realloc(t->s, t->cap);
    if (!t->s) abort();
  }
  t->len += (size_t)n;
}

/* ---- value pools -------------------------------------------------------------------- */

typedef struct gen {
  fuzz_bytes b;
  text t;
  int statements;
} gen;

static uint8_t u8(gen *g) { return fb_u8(&g->b); }

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void g_int(gen *g) {
  static const char *ints[] = {"0",
                               "1",
                               "2",
                               "3",
                               "4",
                               "5",
                               "7",
                               "8",
                               "-1",
                               "-2",
                               "-3",
                               "31",
                               "32",
                               "33",
                               "64",
                               "100",
                               "255",
                               "256",
                               "1000",
                               "65535",
                               "2147483647",
                               "-2147483648",
                               "2147483648",
                               "4294967296",
                               "9007199254740993",
                               "MI",
                               "mi",
                               "MI - 1",
                               "mi + 1",
                               "1000000000",
                               "1000000000000000000",
                               "-0"};
  uint8_t s = u8(g);
  if (s < 96) put(&g->t, "%d", (int)(s % 6)); /* mostly small */
  else if (s < 128) put(&g->t, "%d", -(int)(s % 4) - 1);
  else put(&g->t, "%s", ints[s % COUNT(ints)]);
}

static void g_float(gen *g) {
  static const char *floats[] = {"0.0",   "-0.0",    "0.5",    "1.5",          "3.0",  "-1.0",
                                 "1e300", "-1e300",  "nan",    "inf",          "-inf", "2^63",
                                 "-2^63", "65520.0", "1e-320", "math.pi",      "2^53", "1e9",
                                 "2.0",   "-2.5",    "1e18",   "4294967296.0", "0.1",  "-(2^63)"};
  put(&g->t, "%s", floats[u8(g) % COUNT(floats)]);
}

static void g_num(gen *g) {
  if (u8(g) < 170) g_int(g);
  else g_float(g);
}

/* A dimension or index argument: small (1-based, negative from the end), or hostile. */
static void g_dim(gen *g) {
  uint8_t s = u8(g);
  if (s < 160) put(&g->t, "%d", (int)(s % 8) - 3); /* -3..4 */
  else if (s < 230) g_int(g);
  else if (s < 240) g_float(g);
  else {
    static const char *odd[] = {"nil", "'1'", "{}", "true", "S[1]", "E0"};
    put(&g->t, "%s", odd[s % COUNT(odd)]);
  }
}

static void g_slot(gen *g) { put(&g->t, "S[%d]", u8(g) % NSLOTS + 1); }

static void g_shape_entry(gen *g, int allow_minus_one) {
  uint8_t s = u8(g);
  if (s < 180) put(&g->t, "%d", (int)(s % 5));
  else if (s < 200 && allow_minus_one) put(&g->t, "-1");
  else if (s < 245) g_int(g);
  else g_float(g);
}

static void g_shape(gen *g, int allow_minus_one) {
  uint8_t s = u8(g);
  if (s < 200) {
    static const int lens[] = {0, 1, 1, 2, 2, 2, 3, 3, 4, 5, 6, 8, 31, 32, 33, 40};
    int n = lens[s % COUNT(lens)];
    put(&g->t, "{");
    for (int d = 0; d < n; d++) {
      if (d) put(&g->t, ", ");
      if (n > 8 && u8(g) < 240) put(&g->t, "1"); /* many dims, few elements */
      else g_shape_entry(g, allow_minus_one);
    }
    put(&g->t, "}");
  } else if (s < 220) {
    g_shape_entry(g, allow_minus_one);
  } else {
    static const char *odd[] = {"{1, '2'}",
                                "{1.5}",
                                "{2, dtype = 'int32'}",
                                "'x'",
                                "nil",
                                "{nan}",
                                "{-1}",
                                "{{}}",
                                "{[2] = 3}",
                                "{MI, 0}",
                                "{MI, MI}",
                                "{0, MI}",
                                "{mi}",
                                "{2^62, 4}",
                                "S[1]",
                                "{-1, -1}",
                                "{1000000000}",
                                "{65536, 65536}",
                                "{0, 2^40, 2^40}",
                                "{2^31}"};
    put(&g->t, "%s", odd[s % COUNT(odd)]);
  }
}

static const char *dtypes[] = {"float64", "float32", "float16", "bfloat16",  "int8",
                               "int16",   "int32",   "int64",   "uint8",     "uint16",
                               "uint32",  "uint64",  "bool",    "complex64", "complex128"};

static void g_dtype(gen *g) {
  uint8_t s = u8(g);
  if (s < 225) {
    put(&g->t, "'%s'", dtypes[s % COUNT(dtypes)]);
  } else {
    static const char *odd[] = {"'nope'", "''", "'Float64'", "1", "nil", "{}", "'float64 '"};
    put(&g->t, "%s", odd[s % COUNT(odd)]);
  }
}

static void g_device(gen *g) {
  /* 'gpu' is the device-like queued backend (tests/device/queued.h), 2 devices. */
  static const char *devs[] = {"'cpu'",    "'cpu'",     "'cpu:0'",  "'cpu:1'",
                               "'cpu:-1'", "'gpu'",     "''",       "'cpu:99999999999999999999'",
                               "1",        "'cuda:0'",  "'cpu:'",   "'CPU'",
                               "nil",      "'cpu:0x0'", "'cpu: 0'", "'cpu\\0'",
                               "'gpu:1'",  "'gpu'",     "'gpu:2'"};
  put(&g->t, "%s", devs[u8(g) % COUNT(devs)]);
}

/* Creation options: nil or {dtype=, device=} or something hostile. */
static void g_opts(gen *g) {
  uint8_t s = u8(g);
  switch (s % 10) {
    case 0:
    case 1:
    case 2: put(&g->t, "nil"); break;
    case 3:
    case 4:
      put(&g->t, "{dtype = ");
      g_dtype(g);
      put(&g->t, "}");
      break;
    case 5:
      put(&g->t, "{device = ");
      g_device(g);
      put(&g->t, "}");
      break;
    case 6:
      put(&g->t, "{dtype = ");
      g_dtype(g);
      put(&g->t, ", device = ");
      g_device(g);
      put(&g->t, "}");
      break;
    case 7:
      put(&g->t, "{dtyp = ");
      g_dtype(g);
      put(&g->t, "}");
      break;
    case 8: put(&g->t, "{}"); break;
    default: {
      static const char *odd[] = {"'x'", "{[1] = 2}", "{dtype = 'int8', [true] = 1}", "5", "S[2]"};
      put(&g->t, "%s", odd[s % COUNT(odd)]);
    }
  }
}

/* A scalar value to store (and a few that are not scalars). */
static void g_value(gen *g) {
  uint8_t s = u8(g);
  if (s < 120) g_num(g);
  else if (s < 190) {
    static const char *vals[] = {"true",       "false",       "{re = 1, im = 2}",
                                 "{re = nan}", "{im = -0.0}", "'x'",
                                 "{}",         "{1, 2}",      "nil",
                                 "E0",         "{re = '1'}",  "{re = 1e300, im = inf}",
                                 "'3'",        "{{1}}",       "0/0",
                                 "{re = MI}"};
    put(&g->t, "%s", vals[s % COUNT(vals)]);
  } else {
    g_slot(g);
  }
}

/* Nested data for dl.array / copy_from. */
static void g_data(gen *g, int depth) {
  uint8_t s = u8(g);
  if (depth > 3 || s < 60) {
    g_value(g);
    return;
  }
  if (s < 200) {
    int n = s % 5;
    put(&g->t, "{");
    for (int i = 0; i < n; i++) {
      if (i) put(&g->t, ", ");
      if (u8(g) < 200 || depth == 0) g_data(g, depth + 1);
      else g_value(g);
    }
    put(&g->t, "}");
  } else {
    static const char *odd[] = {"{{1, 2}, {3}}",
                                "{1, {2}}",
                                "{{}, {}}",
                                "{{{}}}",
                                "{true, 1}",
                                "{1, 2, x = 3}",
                                "{[1] = 1, [3] = 3}",
                                "{{re = 1}, 2}",
                                "{1, nil, 3}",
                                "setmetatable({1, 2}, {__index = function() error('idx') end})",
                                "{{1, 2}, {3, 4}, {5, 6}}",
                                "{math.huge, -math.huge, nan}"};
    put(&g->t, "%s", odd[s % COUNT(odd)]);
  }
}

static void g_bytes(gen *g) {
  int n = u8(g) % 20;
  uint8_t s = u8(g);
  if (s % 4 == 0) {
    put(&g->t, "string.rep('\\0', %d)", n * 8);
  } else if (s % 4 == 1) {
    put(&g->t, "string.rep('\\1', %d)", n);
  } else {
    put(&g->t, "'");
    for (int i = 0; i < n; i++) put(&g->t, "\\%d", u8(g));
    put(&g->t, "'");
  }
}

static void g_export_opts(gen *g) {
  uint8_t s = u8(g);
  if (s < 80) {
    put(&g->t, "nil");
    return;
  }
  if (s >= 240) {
    static const char *odd[] = {"'x'",
                                "{max_version = {1}}",
                                "{max_version = {'1', 0}}",
                                "{max_version = {-1, 0}}",
                                "{max_version = {2^31, 0}}",
                                "{dl_device = {1}}",
                                "{copy = 1}",
                                "{stream = 1.5}",
                                "{fallback = 'gpu'}",
                                "{nope = 1}",
                                "{[1] = 1}",
                                "{stream = 'x'}",
                                "{max_version = {1, MI}}",
                                "{dl_device = {1, 2^31}}",
                                "5",
                                "{}"};
    put(&g->t, "%s", odd[s % COUNT(odd)]);
    return;
  }
  put(&g->t, "{");
  if (s & 1) {
    static const char *mv[] = {"{1, 3}",  "{1, 0}", "{0, 0}",          "{0, 6}",
                               "{1, 99}", "{2, 0}", "{1, 2147483647}", "{0, 1}"};
    put(&g->t, "max_version = %s, ", mv[u8(g) % COUNT(mv)]);
  }
  if (s & 2) {
    static const char *dv[] = {"{1, 0}",  "{1, 1}", "{2, 0}",          "{3, 0}",
                               "{12, 0}", "{0, 0}", "{1, 2147483647}", "{13, 0}"};
    put(&g->t, "dl_device = %s, ", dv[u8(g) % COUNT(dv)]);
  }
  if (s & 4) put(&g->t, "copy = %s, ", u8(g) & 1 ? "true" : "false");
  if (s & 8) {
    static const char *streams[] = {"1", "0", "-1", "2", "3", "-2"};
    put(&g->t, "stream = %s, ", streams[u8(g) % COUNT(streams)]);
  }
  if (s & 16) put(&g->t, "fallback = 'cpu', ");
  if (s & 32) {
    static const char *layouts[] = {"'any'", "'nonnegative'", "'contiguous'", "'C'", "1"};
    put(&g->t, "layout = %s, ", layouts[u8(g) % COUNT(layouts)]);
  }
  put(&g->t, "}");
}

static void g_from_opts(gen *g) {
  uint8_t s = u8(g);
  switch (s % 8) {
    case 0:
    case 1:
    case 2: put(&g->t, "nil"); break;
    case 3: put(&g->t, "{copy = %s}", s & 8 ? "true" : "false"); break;
    case 4:
      put(&g->t, "{device = ");
      g_device(g);
      put(&g->t, "}");
      break;
    case 5:
      put(&g->t, "{device = ");
      g_device(g);
      put(&g->t, ", copy = %s}", s & 8 ? "true" : "false");
      break;
    case 6: put(&g->t, "{nope = 1}"); break;
    default: put(&g->t, "%s", s & 8 ? "5" : "{copy = 'yes'}");
  }
}

/* Something for dl.from_dlpack: a slot, or a producer with a __dlpack method. */
static void g_producer(gen *g) {
  uint8_t s = u8(g);
  int j = u8(g) % NSLOTS + 1;
  switch (s % 10) {
    case 0:
    case 1:
    case 2:
    case 3: put(&g->t, "S[%d]", j); break;
    case 4:
      put(&g->t, "{__dlpack = function(self, o) return MT.to_dlpack(S[%d], o) end}", j);
      break;
    case 5: put(&g->t, "{__dlpack = function(self, o) return S[%d] end}", j); break;
    case 6: /* knows only the legacy ABI */
      put(&g->t,
          "{__dlpack = function(self, o) if o then error('legacy only') end "
          "return MT.to_dlpack(S[%d], {max_version = {0, 0}}) end}",
          j);
      break;
    case 7: put(&g->t, "{__dlpack = function() error(E0) end}"); break;
    case 8: put(&g->t, "setmetatable({}, {__index = function() error('lookup') end})"); break;
    default:
      put(&g->t,
          "{__dlpack = setmetatable({}, {__call = function(_, self, o) return MT.to_dlpack(S[%d], "
          "o) end})}",
          j);
  }
}

/* ---- statements -------------------------------------------------------------------- */

/* The fault argument of CALL:
 *   -1        none;
 *   0..63     the n-th Lua allocation of the call fails once (Lua retries it
 *             after an emergency collection: a collection at that point);
 *   64..127   from the (n-64)-th on, every allocation fails (a dead heap);
 *   128..143  the call may grow the heap by only 2^(n - 128 + 8) bytes;
 *   144..223  k = n - 144: from the (k/2)-th on, 2 + k%2 allocations fail (one
 *             allocation really fails, then the heap recovers).
 * A byte below 176 means no fault. */
static void g_fault(gen *g) {
  uint8_t s = u8(g);
  if (s < 176) put(&g->t, "-1");
  else if (s < 190) put(&g->t, "%d", (s - 176) * 2);
  else if (s < 200) put(&g->t, "%d", 64 + (s - 190) * 3);
  else if (s < 216) put(&g->t, "%d", 128 + (s - 200));
  else put(&g->t, "%d", 144 + (s - 216) * 2 + (s & 1));
}

/* CALL(k, fault, f, */
static void call_head(gen *g, int keep, const char *f) {
  put(&g->t, "CALL(%d, ", keep ? u8(g) % NSLOTS + 1 : 0);
  g_fault(g);
  put(&g->t, ", %s", f);
}

static void g_self(gen *g) {
  uint8_t s = u8(g);
  if (s < 240) put(&g->t, "S[%d]", s % NSLOTS + 1);
  else {
    static const char *odd[] = {"nil", "1", "E0", "{}", "'x'", "dl", "A1", "C1"};
    put(&g->t, "%s", odd[s % COUNT(odd)]);
  }
}

static void g_statement(gen *g, int depth, int in_coroutine);

static void st_view(gen *g) {
  uint8_t m = u8(g) % 13;
  switch (m) {
    case 0:
      call_head(g, 1, "MT.view");
      put(&g->t, ", ");
      g_self(g);
      put(&g->t, ", ");
      g_shape(g, 1);
      break;
    case 1:
      call_head(g, 1, "MT.reshape");
      put(&g->t, ", ");
      g_self(g);
      put(&g->t, ", ");
      g_shape(g, 1);
      break;
    case 2:
      call_head(g, 1, "MT.transpose");
      put(&g->t, ", ");
      g_self(g);
      if (u8(g) & 1) {
        put(&g->t, ", ");
        g_dim(g);
        put(&g->t, ", ");
        g_dim(g);
      }
      break;
    case 3: {
      int n = u8(g) % 6;
      call_head(g, 1, "MT.permute");
      put(&g->t, ", ");
      g_self(g);
      put(&g->t, ", {");
      for (int i = 0; i < n; i++) {
        if (i) put(&g->t, ", ");
        g_dim(g);
      }
      put(&g->t, "}");
      break;
    }
    case 4:
      call_head(g, 1, "MT.narrow");
      put(&g->t, ", ");
      g_self(g);
      put(&g->t, ", ");
      g_dim(g);
      put(&g->t, ", ");
      g_dim(g);
      put(&g->t, ", ");
      g_dim(g);
      break;
    case 5:
      call_head(g, 1, "MT.select");
      put(&g->t, ", ");
      g_self(g);
      put(&g->t, ", ");
      g_dim(g);
      put(&g->t, ", ");
      g_dim(g);
      break;
    case 6:
      call_head(g, 1, "MT.slice");
      put(&g->t, ", ");
      g_self(g);
      put(&g->t, ", ");
      g_dim(g);
      for (int i = 0; i < 3; i++) {
        put(&g->t, ", ");
        if (u8(g) < 64) put(&g->t, "nil");
        else g_dim(g);
      }
      break;
    case 7:
      call_head(g, 1, "MT.squeeze");
      put(&g->t, ", ");
      g_self(g);
      if (u8(g) & 1) {
        put(&g->t, ", ");
        g_dim(g);
      }
      break;
    case 8:
      call_head(g, 1, "MT.unsqueeze");
      put(&g->t, ", ");
      g_self(g);
      put(&g->t, ", ");
      g_dim(g);
      break;
    case 9:
      call_head(g, 1, "MT.expand");
      put(&g->t, ", ");
      g_self(g);
      put(&g->t, ", ");
      g_shape(g, 1);
      break;
    case 10:
      call_head(g, 1, "MT.contiguous");
      put(&g->t, ", ");
      g_self(g);
      break;
    case 11:
      call_head(g, 0, "MT.is_contiguous");
      put(&g->t, ", ");
      g_self(g);
      break;
    default: /* a chain through the Lua syntax (not direct: no strict check) */
      call_head(g, 1, "CHAIN");
      put(&g->t, ", ");
      g_self(g);
      put(&g->t, ", ");
      g_dim(g);
      put(&g->t, ", ");
      g_dim(g);
  }
  put(&g->t, ")\n");
}

static void st_data(gen *g) {
  uint8_t m = u8(g) % 10;
  switch (m) {
    case 0:
      call_head(g, 1, "MT.copy");
      put(&g->t, ", ");
      g_self(g);
      break;
    case 1:
      call_head(g, 1, "MT.astype");
      put(&g->t, ", ");
      g_self(g);
      put(&g->t, ", ");
      g_dtype(g);
      break;
    case 2:
      call_head(g, 0, "MT.fill");
      put(&g->t, ", ");
      g_self(g);
      put(&g->t, ", ");
      g_value(g);
      break;
    case 3:
      call_head(g, 0, "MT.copy_from");
      put(&g->t, ", ");
      g_self(g);
      put(&g->t, ", ");
      g_data(g, 0);
      break;
    case 4:
      call_head(g, 1, "MT.totable");
      put(&g->t, ", SMALL(");
      g_self(g);
      put(&g->t, ")");
      break;
    case 5:
      call_head(g, 1, "MT.tobytes");
      put(&g->t, ", SMALL(");
      g_self(g);
      put(&g->t, ")");
      break;
    case 6:
      call_head(g, 1, "AMT.__tostring");
      put(&g->t, ", ");
      g_self(g);
      break;
    case 7:
      call_head(g, 1, "AMT.__len");
      put(&g->t, ", ");
      g_self(g);
      break;
    case 8:
      call_head(g, 1, "TOSTR");
      put(&g->t, ", ");
      g_self(g);
      break;
    default:
      call_head(g, 1, "dl.array");
      put(&g->t, ", ");
      g_self(g);
      put(&g->t, ", ");
      g_opts(g);
  }
  put(&g->t, ")\n");
}

static void st_index(gen *g) {
  uint8_t m = u8(g) % 6;
  static const char *attrs[] = {"'shape'",   "'strides'",  "'ndim'",   "'size'",
                                "'dtype'",   "'itemsize'", "'nbytes'", "'device'",
                                "'backend'", "'readonly'", "'nope'",   "'delete'",
                                "'__index'", "{}",         "true",     "nil"};
  switch (m) {
    case 0:
      call_head(g, 1, "AMT.__index");
      put(&g->t, ", ");
      g_self(g);
      put(&g->t, ", ");
      g_dim(g);
      break;
    case 1:
      call_head(g, 1, "AMT.__index");
      put(&g->t, ", ");
      g_self(g);
      put(&g->t, ", %s", attrs[u8(g) % COUNT(attrs)]);
      break;
    case 2:
      call_head(g, 0, "AMT.__newindex");
      put(&g->t, ", ");
      g_self(g);
      put(&g->t, ", ");
      g_dim(g);
      put(&g->t, ", ");
      g_data(g, 1);
      break;
    case 3:
      call_head(g, 0, "AMT.__newindex");
      put(&g->t, ", ");
      g_self(g);
      put(&g->t, ", %s, ", attrs[u8(g) % COUNT(attrs)]);
      g_value(g);
      break;
    case 4: {
      int n = u8(g) % 5;
      call_head(g, 1, "MT.get");
      put(&g->t, ", ");
      g_self(g);
      for (int i = 0; i < n; i++) {
        put(&g->t, ", ");
        g_dim(g);
      }
      break;
    }
    default: {
      int n = u8(g) % 5;
      call_head(g, 0, "MT.set");
      put(&g->t, ", ");
      g_self(g);
      for (int i = 0; i < n; i++) {
        put(&g->t, ", ");
        g_dim(g);
      }
      put(&g->t, ", ");
      g_value(g);
    }
  }
  put(&g->t, ")\n");
}

static void st_create(gen *g) {
  uint8_t m = u8(g) % 9;
  switch (m) {
    case 0:
    case 1:
    case 2: {
      static const char *f[] = {"dl.zeros", "dl.ones", "dl.empty"};
      call_head(g, 1, f[m]);
      put(&g->t, ", ");
      g_shape(g, 0);
      put(&g->t, ", ");
      g_opts(g);
      break;
    }
    case 3:
      call_head(g, 1, "dl.full");
      put(&g->t, ", ");
      g_shape(g, 0);
      put(&g->t, ", ");
      g_value(g);
      put(&g->t, ", ");
      g_opts(g);
      break;
    case 4:
      call_head(g, 1, "dl.array");
      put(&g->t, ", ");
      g_data(g, 0);
      put(&g->t, ", ");
      g_opts(g);
      break;
    case 5: {
      int n = u8(g) % 4;
      call_head(g, 1, "dl.arange");
      for (int i = 0; i < n; i++) {
        put(&g->t, ", ");
        g_num(g);
      }
      if (u8(g) & 1) {
        put(&g->t, ", ");
        g_opts(g);
      }
      break;
    }
    case 6: {
      int n = u8(g) % 4;
      call_head(g, 1, "dl.linspace");
      for (int i = 0; i < n; i++) {
        put(&g->t, ", ");
        g_num(g);
      }
      if (u8(g) & 1) {
        put(&g->t, ", ");
        g_opts(g);
      }
      break;
    }
    case 7:
      call_head(g, 1, "dl.frombytes");
      put(&g->t, ", ");
      g_bytes(g);
      put(&g->t, ", ");
      g_dtype(g);
      if (u8(g) & 1) {
        put(&g->t, ", ");
        g_shape(g, 0);
        if (u8(g) & 1) {
          put(&g->t, ", ");
          g_opts(g);
        }
      }
      break;
    default: /* a small array of known contents, the common case for everything else */
      put(&g->t, "CALL(%d, -1, dl.arange, %d, {dtype = '%s'}", u8(g) % NSLOTS + 1, u8(g) % 13,
          dtypes[u8(g) % COUNT(dtypes)]);
  }
  put(&g->t, ")\n");
}

static void st_dlpack(gen *g) {
  uint8_t m = u8(g) % 8;
  switch (m) {
    case 0:
    case 1:
      call_head(g, 1, "MT.to_dlpack");
      put(&g->t, ", ");
      g_self(g);
      put(&g->t, ", ");
      g_export_opts(g);
      break;
    case 2:
      call_head(g, 1, "MT.__dlpack");
      put(&g->t, ", ");
      g_self(g);
      put(&g->t, ", ");
      g_export_opts(g);
      break;
    case 3:
      call_head(g, 0, "MT.__dlpack_device");
      put(&g->t, ", ");
      g_self(g);
      break;
    case 4:
    case 5:
      call_head(g, 1, "dl.from_dlpack");
      put(&g->t, ", ");
      g_producer(g);
      put(&g->t, ", ");
      g_from_opts(g);
      break;
    case 6: {
      static const char *keys[] = {"'version'",   "'device'", "'consumed'",
                                   "'versioned'", "'x'",      "1"};
      call_head(g, 1, "CMT.__index");
      put(&g->t, ", ");
      g_self(g);
      put(&g->t, ", %s", keys[u8(g) % COUNT(keys)]);
      break;
    }
    default:
      call_head(g, 1, "CMT.__tostring");
      put(&g->t, ", ");
      g_self(g);
  }
  put(&g->t, ")\n");
}

static void st_transfer(gen *g) {
  static const char *put_opts[] = {"nil",
                                   "{copy = true}",
                                   "{donate = true}",
                                   "{copy = true, donate = true}",
                                   "{nope = 1}",
                                   "{copy = 1}",
                                   "'x'",
                                   "{copy = false, donate = true}"};
  uint8_t m = u8(g);
  call_head(g, 1, m & 1 ? "dl.device_put" : "MT.to");
  put(&g->t, ", ");
  g_self(g);
  put(&g->t, ", ");
  g_device(g);
  put(&g->t, ", %s)\n", put_opts[u8(g) % COUNT(put_opts)]);
}

static void st_delete(gen *g) {
  static const char *f[] = {"MT.delete", "MT.delete", "AMT.__gc", "AMT.__close", "CMT.__gc"};
  uint8_t m = u8(g);
  if (m % 6 == 5) {
    put(&g->t, "S[%d] = nil\n", u8(g) % NSLOTS + 1);
    return;
  }
  call_head(g, 0, f[m % 6 % COUNT(f)]);
  put(&g->t, ", ");
  g_self(g);
  put(&g->t, ")\n");
}

static void st_misc(gen *g) {
  uint8_t m = u8(g) % 13;
  switch (m) {
    case 11: call_head(g, 1, "dl.memory"); break;
    case 12: {
      static const char *limits[] = {"0",       "1",          "4096", "65536",
                                     "1048576", "1073741824", "64",   "256"};
      call_head(g, 0, "LIMIT");
      put(&g->t, ", %s", limits[u8(g) % COUNT(limits)]);
      break;
    }
    case 0: call_head(g, 1, "dl.backends"); break;
    case 1: call_head(g, 1, "dl.dtypes"); break;
    case 2:
      call_head(g, 1, "dl.is_array");
      put(&g->t, ", ");
      g_self(g);
      break;
    case 3:
      call_head(g, 1, "dl.is_error");
      put(&g->t, ", ");
      g_self(g);
      break;
    case 4:
      call_head(g, 1, "dl.try");
      put(&g->t, ", dl.zeros, ");
      g_shape(g, 0);
      break;
    case 5:
      call_head(g, 1, "SAFE");
      put(&g->t, ", ");
      g_shape(g, 0);
      break;
    case 6:
      call_head(g, 1, "CONCAT");
      put(&g->t, ", ");
      g_self(g);
      break;
    case 7:
      call_head(g, 1, "ERRIS");
      put(&g->t, ", ");
      g_self(g);
      put(&g->t, ", 'SHAPE'");
      break;
    case 8:
      call_head(g, 1, "dl.traceback");
      put(&g->t, ", ");
      g_self(g);
      break;
    case 9:
      put(&g->t, "S[%d] = ", u8(g) % NSLOTS + 1);
      g_value(g);
      put(&g->t, "\n");
      return;
    default: put(&g->t, "S[%d] = S[%d]\n", u8(g) % NSLOTS + 1, u8(g) % NSLOTS + 1); return;
  }
  put(&g->t, ")\n");
}

/* An operand of a compute call: mostly arrays from the slots, else numbers or odd values. */
static void g_operand(gen *g) {
  if (u8(g) < 170) {
    put(&g->t, "TINY(");
    g_self(g);
    put(&g->t, ")");
  } else {
    g_value(g);
  }
}

/* An `out` option now and then: another slot (any shape, dtype, liveness). */
static void g_out_option(gen *g) {
  uint8_t s = u8(g);
  if (s < 200) return;
  if (s < 250) put(&g->t, ", {out = S[%d]}", s % NSLOTS + 1);
  else put(&g->t, ", {outt = 1}");
}

/* Compute: element-wise operations (functions, methods, metamethods),
 * reductions, matmul and joining, with hostile operands and options. */
static void st_compute(gen *g) {
  static const char *binary[] = {
      "dl.add",         "dl.sub",        "dl.mul",         "dl.div",         "dl.floor_divide",
      "dl.mod",         "dl.pow",        "dl.maximum",     "dl.minimum",     "dl.atan2",
      "dl.bitwise_and", "dl.left_shift", "dl.right_shift", "dl.logical_xor", "dl.equal",
      "dl.less",        "MT.ge",         "AMT.__add",      "AMT.__idiv",     "AMT.__pow",
      "AMT.__shl",      "AMT.__band",    "AMT.__mod",      "AMT.__div"};
  static const char *unary[] = {"dl.neg",   "dl.abs",         "dl.sign",        "dl.sqrt",
                                "dl.exp",   "dl.log1p",       "dl.tanh",        "dl.round",
                                "dl.isnan", "dl.bitwise_not", "dl.logical_not", "dl.floor",
                                "dl.sin",   "dl.exp2"};
  static const char *reductions[] = {"dl.sum",    "dl.prod",          "dl.mean", "dl.max",
                                     "dl.argmin", "dl.any",           "dl.std",  "dl.var",
                                     "dl.argmax", "dl.count_nonzero", "dl.all",  "dl.min"};
  static const char *reduce_opts[] = {"nil",
                                      "1",
                                      "-1",
                                      "{dim = 1}",
                                      "{dim = {1, 2}}",
                                      "{dim = 2, keepdims = true}",
                                      "{dtype = 'float32'}",
                                      "{ddof = 1}",
                                      "{dim = 0}",
                                      "{dim = {1, 1}}",
                                      "{nope = 1}",
                                      "{dim = 33}",
                                      "{dim = {}}",
                                      "{ddof = MI}",
                                      "{dtype = 'int8'}"};
  static const char *ordering[] = {"dl.sort",     "dl.argsort",  "dl.unique",  "dl.cumsum",
                                   "dl.cumprod",  "dl.diff",     "dl.nonzero", "dl.argwhere",
                                   "dl.bincount", "dl.histogram"};
  static const char *ordering_opts[] = {"nil",
                                        "1",
                                        "-1",
                                        "{dim = 1}",
                                        "{descending = true}",
                                        "{stable = true, dim = -1}",
                                        "{dim = 33}",
                                        "{nope = 1}",
                                        "{return_inverse = true, return_counts = true}",
                                        "{n = 2}",
                                        "{n = -1}",
                                        "{n = MI}",
                                        "{bins = 3}",
                                        "{bins = 0}",
                                        "{bins = MI}",
                                        "{range = {nan, 1}}",
                                        "{range = {1, 0}}",
                                        "{minlength = MI}",
                                        "{weights = S[2]}",
                                        "{dtype = 'int8'}",
                                        "{out = S[1]}",
                                        "{bins = S[3]}"};
  static const char *picks[] = {"dl.take", "dl.take_along_dim", "dl.put_along_dim",
                                "dl.topk", "dl.searchsorted",   "INDEX",
                                "ASSIGN"};
  uint8_t m = u8(g) % 11;
  if (m == 9) { /* selecting, sorting, scanning, counting: hostile options */
    call_head(g, 1, ordering[u8(g) % COUNT(ordering)]);
    put(&g->t, ", TINY(");
    g_self(g);
    put(&g->t, "), %s)\n", ordering_opts[u8(g) % COUNT(ordering_opts)]);
    return;
  }
  if (m == 10) { /* by arrays of indices or masks, k, insertion points */
    const char *f = picks[u8(g) % COUNT(picks)];
    call_head(g, 1, f);
    put(&g->t, ", TINY(");
    g_self(g);
    put(&g->t, "), ");
    if (strcmp(f, "dl.topk") == 0) {
      g_int(g);
    } else {
      g_operand(g);
    }
    if (strcmp(f, "dl.put_along_dim") == 0 || strcmp(f, "ASSIGN") == 0) {
      put(&g->t, ", ");
      g_operand(g);
    }
    if (u8(g) & 1) {
      put(&g->t, ", ");
      g_dim(g);
    }
    put(&g->t, ")\n");
    return;
  }
  switch (m) {
    case 0:
    case 1:
    case 2:
      call_head(g, 1, binary[u8(g) % COUNT(binary)]);
      put(&g->t, ", ");
      g_operand(g);
      put(&g->t, ", ");
      g_operand(g);
      g_out_option(g);
      break;
    case 3:
    case 4:
      call_head(g, 1, unary[u8(g) % COUNT(unary)]);
      put(&g->t, ", ");
      g_operand(g);
      g_out_option(g);
      break;
    case 5:
      call_head(g, 1, reductions[u8(g) % COUNT(reductions)]);
      put(&g->t, ", TINY(");
      g_self(g);
      put(&g->t, "), %s", reduce_opts[u8(g) % COUNT(reduce_opts)]);
      break;
    case 6:
      call_head(g, 1, "dl.matmul");
      put(&g->t, ", ");
      g_operand(g);
      put(&g->t, ", ");
      g_operand(g);
      g_out_option(g);
      break;
    case 7:
      call_head(g, 1, u8(g) & 1 ? "dl.where" : "dl.clip");
      put(&g->t, ", ");
      g_operand(g);
      put(&g->t, ", ");
      g_operand(g);
      put(&g->t, ", ");
      g_operand(g);
      break;
    default:
      call_head(g, 1, u8(g) & 1 ? "dl.concat" : "dl.stack");
      put(&g->t, ", {");
      g_operand(g);
      put(&g->t, ", ");
      g_operand(g);
      put(&g->t, "}, ");
      g_dim(g);
  }
  put(&g->t, ")\n");
}

/* Construction helpers and random numbers: hostile sizes, operands and
 * options, generators in the slots (and non-generators as self). */
static void st_helpers(gen *g) {
  static const char *sized[] = {"dl.eye", "dl.identity", "dl.logspace", "dl.meshgrid"};
  static const char *likes[] = {"dl.zeros_like", "dl.ones_like", "dl.empty_like", "dl.full_like"};
  static const char *reshaping[] = {"dl.tile", "dl.repeat_elements", "dl.roll",  "dl.flip",
                                    "dl.pad",  "MT.flatten",         "MT.ravel", "MT.item"};
  static const char *pairs[] = {"dl.convolve", "dl.isclose", "dl.allclose", "dl.array_equal"};
  static const char *opts[] = {"nil",
                               "{dim = 1}",
                               "{dim = -1}",
                               "{dim = {1, 2}}",
                               "{dim = 33}",
                               "{nope = 1}",
                               "{dim = 'x'}",
                               "{mode = 'valid'}",
                               "{mode = 'x'}",
                               "{rtol = nan}",
                               "{atol = -1}",
                               "{equal_nan = true}",
                               "{dtype = 'int8'}",
                               "{dtype = 'nope'}",
                               "{value = MI}",
                               "{indexing = 'ij'}",
                               "{indexing = 1}",
                               "{base = 0}",
                               "{endpoint = false}",
                               "{k = MI}",
                               "{k = mi}",
                               "{1, 2}",
                               "{dim = 1, x = 2}",
                               "{sparse = true, copy = false}"};
  static const char *methods[] = {"random",      "integers", "standard_normal", "normal", "uniform",
                                  "permutation", "shuffle",  "spawn",           "state"};
  static const char *gen_args[] = {"",
                                   "3",
                                   "MI",
                                   "-1",
                                   "{2, 3}",
                                   "{}",
                                   "S[1]",
                                   "0, 10, 3",
                                   "0, MI, 5",
                                   "mi, MI, {2}",
                                   "nan, 1, 2",
                                   "0, 1, {2, 2}",
                                   "{dtype = 'float32'}",
                                   "{dtype = 'int8'}",
                                   "1e9",
                                   "2, 1",
                                   "0, 1, 4, {dtype = 'float32', endpoint = true}",
                                   "inf",
                                   "TINY(S[2])",
                                   "S[3], {dim = 2}",
                                   "{axis = 1}",
                                   "1, -1"};
  uint8_t m = u8(g) % 8;
  switch (m) {
    case 0: {
      const char *f = sized[u8(g) % COUNT(sized)];
      int n = u8(g) % 4;
      call_head(g, 1, f);
      for (int i = 0; i < n; i++) {
        put(&g->t, ", ");
        if (u8(g) < 40) g_operand(g);
        else g_num(g);
      }
      put(&g->t, ", %s", opts[u8(g) % COUNT(opts)]);
      break;
    }
    case 1:
      call_head(g, 1, likes[u8(g) % COUNT(likes)]);
      put(&g->t, ", ");
      g_operand(g);
      if (u8(g) & 1) {
        put(&g->t, ", ");
        g_value(g);
      }
      put(&g->t, ", %s", opts[u8(g) % COUNT(opts)]);
      break;
    case 2:
    case 3:
      call_head(g, 1, reshaping[u8(g) % COUNT(reshaping)]);
      put(&g->t, ", ");
      g_operand(g);
      if (u8(g) & 1) {
        put(&g->t, ", ");
        if (u8(g) & 1) g_shape(g, 1);
        else g_int(g);
      }
      put(&g->t, ", %s", opts[u8(g) % COUNT(opts)]);
      break;
    case 4:
      call_head(g, 1, pairs[u8(g) % COUNT(pairs)]);
      put(&g->t, ", ");
      g_operand(g);
      put(&g->t, ", ");
      g_operand(g);
      put(&g->t, ", %s", opts[u8(g) % COUNT(opts)]);
      break;
    case 5: /* a generator into a slot: hostile seeds too */
      call_head(g, 1, u8(g) & 1 ? "dl.random.default_rng" : "dl.random.from_state");
      put(&g->t, ", ");
      if (u8(g) & 1) g_int(g);
      else g_self(g);
      break;
    default: { /* a Generator method on a slot (a generator, or anything else) */
      char f[32];
      const char *a;
      snprintf(f, sizeof f, "GEN.%s", methods[u8(g) % COUNT(methods)]);
      call_head(g, 1, f);
      put(&g->t, ", ");
      g_self(g);
      a = gen_args[u8(g) % COUNT(gen_args)];
      if (*a) put(&g->t, ", %s", a);
    }
  }
  put(&g->t, ")\n");
}

static void g_statement(gen *g, int depth, int in_coroutine) {
  uint8_t op = u8(g);
  g->statements++;
  switch (op % 16) {
    case 0:
    case 1: st_create(g); break;
    case 2:
    case 3: st_view(g); break;
    case 4: st_data(g); break;
    case 5: st_index(g); break;
    case 6: st_dlpack(g); break;
    case 7: st_transfer(g); break;
    case 8: st_delete(g); break;
    case 9: {
      uint8_t s = u8(g);
      if (s & 1) put(&g->t, "collectgarbage()\n");
      else put(&g->t, "collectgarbage('step', %d)\n", s >> 1);
      break;
    }
    case 10: /* a finalizer: runs at a collection, or during lua_close when kept */
      if (depth >= MAX_DEPTH) {
        st_delete(g);
        break;
      }
      put(&g->t, "KEEP(setmetatable({}, {__gc = function()\n");
      g_statement(g, depth + 1, 0);
      if (u8(g) & 1) g_statement(g, depth + 1, 0);
      put(&g->t, "end}), %s)\n", u8(g) & 1 ? "true" : "false");
      break;
    case 11: /* a coroutine: statements with yields between, resumed now and later */
      if (depth >= MAX_DEPTH) {
        st_view(g);
        break;
      }
      {
        int slot = u8(g) % NSLOTS + 1, n = u8(g) % 3 + 1;
        put(&g->t, "S[%d] = coroutine.create(function()\n", slot);
        for (int i = 0; i < n; i++) {
          g_statement(g, depth + 1, 1);
          put(&g->t, "coroutine.yield()\n");
        }
        g_statement(g, depth + 1, 1);
        put(&g->t, "end)\ncoroutine.resume(S[%d])\n", slot);
      }
      break;
    case 12: {
      uint8_t s = u8(g);
      int slot = s % NSLOTS + 1;
      if (s & 0x80) put(&g->t, "pcall(coroutine.close, S[%d])\n", slot);
      else if (s & 0x40) put(&g->t, "RESUME(S[%d])\n", slot);
      else if (in_coroutine) put(&g->t, "coroutine.yield()\n");
      else put(&g->t, "RESUME(S[%d])\n", slot);
      break;
    }
    case 13: /* a to-be-closed variable around a statement */
      if (depth >= MAX_DEPTH) {
        st_index(g);
        break;
      }
      put(&g->t, "do local x <close> = CLOSABLE(");
      g_slot(g);
      put(&g->t, ")\n");
      g_statement(g, depth + 1, in_coroutine);
      if (in_coroutine && (u8(g) & 1)) put(&g->t, "coroutine.yield()\n");
      put(&g->t, "end\n");
      break;
    case 14: {
      uint8_t k = u8(g) % 3;
      if (k == 0) st_misc(g);
      else if (k == 1) st_compute(g);
      else st_helpers(g);
      break;
    }
    default: { /* a loop: many short-lived arrays (GC accounting, finalizers) */
      int n = u8(g) % 16 + 2;
      put(&g->t, "for i = 1, %d do CALL(%d, -1, dl.zeros, {%d, i}) end\n", n, u8(g) % NSLOTS + 1,
          u8(g) % 64);
    }
  }
}

/* The prelude: locals the statements use. CALL, S and KEEP come from C. */
static const char prelude[] =
    "local dl, CALL, S, KEEP, LIMIT = ...\n"
    "LIMIT(1073741824)\n" /* 1 GiB of arrays until a statement changes it */
    "local MI, mi, nan, inf = math.maxinteger, math.mininteger, 0/0, math.huge\n"
    "local A1 = dl.arange(6, {dtype = 'int32'}):view{2, 3}\n"
    "local MT = {}\n"
    "for _, k in ipairs{'view', 'reshape', 'transpose', 'permute', 'narrow', 'select', 'slice',\n"
    "    'squeeze', 'unsqueeze', 'expand', 'contiguous', 'is_contiguous', 'copy', 'astype', "
    "'fill',\n"
    "    'copy_from', 'totable', 'tobytes', 'get', 'set', 'delete', 'to_dlpack', '__dlpack',\n"
    "    '__dlpack_device', 'to', 'ge', 'flatten', 'ravel', 'item'} do MT[k] = A1[k] end\n"
    "local AMT = getmetatable(A1)\n"
    "local GEN = getmetatable(dl.random.default_rng(0)).__index\n"
    "local C1 = dl.zeros{2}:to_dlpack()\n"
    "local CMT = getmetatable(C1)\n"
    "local E0 = select(2, pcall(dl.zeros, -1))\n"
    "S[1], S[2], S[3] = dl.arange(12):view{3, 4}, dl.ones({2, 1}, {dtype = 'float32'}), C1\n"
    "local function SMALL(x)\n" /* work: the extents' product, zeros as 1 (tables) */
    "  if dl.is_array(x) then\n"
    "    local ok, s = pcall(function() return x.shape end)\n"
    "    if ok then\n"
    "      local w = 1\n"
    "      for _, e in ipairs(s) do w = w * math.max(e, 1); if w > 20000 then return nil end end\n"
    "    end\n"
    "  end\n"
    "  return x\n"
    "end\n"
    "local function TINY(x)\n" /* compute operands: broadcasts of two stay small */
    "  if dl.is_array(x) then\n"
    "    local ok, s = pcall(function() return x.shape end)\n"
    "    if ok then\n"
    "      local w = 1\n"
    "      for _, e in ipairs(s) do w = w * math.max(e, 1); if w > 2000 then return nil end end\n"
    "    end\n"
    "  end\n"
    "  return x\n"
    "end\n"
    "local function CLOSABLE(x) if dl.is_array(x) then return x end end\n"
    "local function TOSTR(x) return tostring(x) end\n"
    "local function CONCAT(x) return x .. '!' end\n"
    "local function ERRIS(e, c) return e:is(c) end\n"
    "local function SAFE(s) return dl.safe.zeros(s) end\n"
    "local function CHAIN(x, i, j) local r = x[i]; r[j] = r[j]; return r end\n"
    "local function RESUME(co) if type(co) == 'thread' then return coroutine.resume(co) end end\n"
    "local function INDEX(a, k) return a[k] end\n"
    "local function ASSIGN(a, k, v) a[k] = v; return a end\n";

/* ---- the C side: CALL, KEEP ------------------------------------------------------------ */

static fuzz_heap *heap_of_run;
static int strict_errors = -1;

static int noop(lua_State *L) { return 0; }

/* CALLs running inside another CALL (a finalizer it triggered): they run
 * under the outer call's memory faults, whatever their own byte says. */
static int call_depth;

/* CALL(slot, fault, f, ...): f(...) in protected mode; the first result (or
 * the error) goes to S[slot] unless slot is 0. */
static int l_call(lua_State *L) {
  int slot = (int)lua_tointeger(L, 1), fault = (int)lua_tointeger(L, 2);
  int nargs = lua_gettop(L) - 3, direct = lua_iscfunction(L, 3), st, plain_oom, gc_stopped, nested;
  size_t saved_cap = heap_of_run->cap;
  fuzz_heap *h = heap_of_run;
  luaL_checkstack(L, 64, "CALL");
  /* Make sure the CallInfo the call needs exists before faults are armed. */
  lua_pushcfunction(L, noop);
  lua_call(L, 0, 0);
  /* Lua skips a finalizer it cannot call for lack of memory (a call frame,
   * stack), and what that object held leaks: a Lua limitation, not
   * dlbridge's. Faults that can starve a finalizer (more than one failure
   * in a row) run with the collector stopped; one failure Lua retries.
   * They start after a full collection: dlbridge's own collection at the
   * memory limit runs even when the collector is stopped (as Lua's
   * emergency one does), and it would starve the finalizers of the garbage
   * made before the call (a temporary's buffer then leaked: regression
   * forced-collection-starved-finalizer). */
  nested = call_depth > 0; /* inside a finalizer of an outer CALL: its faults stand */
  if (nested) fault = -1;
  if (fault >= 64 && lua_gc(L, LUA_GCISRUNNING) == 1) lua_gc(L, LUA_GCCOLLECT, 0);
  gc_stopped = fault >= 64 && lua_gc(L, LUA_GCISRUNNING) == 1;
  if (gc_stopped) lua_gc(L, LUA_GCSTOP);
  if (fault >= 0 && fault < 64) fuzz_heap_fail_after(h, fault, 1);
  else if (fault >= 64 && fault < 128) fuzz_heap_fail_after(h, fault - 64, -1);
  else if (fault >= 128 && fault < 144) {
    size_t room = (size_t)1 << (8 + (fault - 128));
    if (h->used + room < h->cap) h->cap = h->used + room;
  } else if (fault >= 144) {
    fuzz_heap_fail_after(h, (fault - 144) / 2, 2 + (fault - 144) % 2);
  }
  call_depth++;
  st = lua_pcall(L, nargs, 1, 0);
  call_depth--;
  if (nested) {
    h->cap = saved_cap; /* the outer call's faults stay armed */
  } else {
    fuzz_heap_reset(h);
    h->cap = saved_cap;
  }
  if (gc_stopped) lua_gc(L, LUA_GCRESTART);
  if (st != LUA_OK && direct) {
    /* A memory error may stay a plain string only when Lua could not even
     * allocate the error object: a dead heap (fault 64..127), or a budget too
     * small for an error table (under 16 KiB). */
    int room_to_report =
        !nested && (fault < 64 || fault >= 144 || (fault >= 128 + 6 && fault < 144));
    plain_oom = st == LUA_ERRMEM || (lua_type(L, -1) == LUA_TSTRING &&
                                     strcmp(lua_tostring(L, -1), "not enough memory") == 0);
    if ((plain_oom && room_to_report) ||
        (strict_errors && !plain_oom && !fuzz_is_dlb_error(L, -1))) {
      const char *what = luaL_tolstring(L, -1, NULL);
      luaL_where(L, 1); /* the CALL's line in the program (FUZZ_VERBOSE=1 lists it) */
      if (plain_oom)
        fuzz_fail("%s a dlbridge function raised a plain Lua memory error (not an OUT_OF_MEMORY "
                  "dlbridge.Error) with memory left to report it (fault %d)",
                  lua_tostring(L, -1), fault);
      fuzz_fail("%s a dlbridge function raised a %s that is not a dlbridge.Error: %s",
                lua_tostring(L, -1), luaL_typename(L, -3), what);
    }
  }
  if (slot >= 1 && slot <= NSLOTS) {
    lua_pushvalue(L, -1);
    lua_rawseti(L, lua_upvalueindex(1), slot); /* S has room for 8: no allocation */
  }
  return 0;
}

/* LIMIT(bytes): the host's dlb_set_memory_limit (0: none); returns the status. */
static int l_limit(lua_State *L) {
  dlb_status st = dlb_set_memory_limit(L, (size_t)lua_tointeger(L, 1));
  if (st != DLB_OK) lua_pop(L, 1);
  lua_pushinteger(L, st);
  return 1;
}

/* KEEP(obj, keep): anchors obj until lua_close when keep (its __gc then runs
 * inside lua_close), else drops it (collected at the next cycle). */
static int l_keep(lua_State *L) {
  if (lua_toboolean(L, 2)) {
    lua_settop(L, 1);
    lua_rawseti(L, lua_upvalueindex(1), (lua_Integer)lua_rawlen(L, lua_upvalueindex(1)) + 1);
  }
  return 0;
}

/* Registers 'gpu', a device-like backend: worker-thread queues with short
 * random delays (seeded by the input), poison in queued destinations, the
 * host's kernels run on its workers (tests/device/queued.h). Its own checks
 * (bad handles, ranges, queues, host copies racing queued work) are
 * invariants of the run. */
static dlb_queued *gpu;

static void register_gpu(lua_State *L, uint8_t seed) {
  dlb_queued_config c = {"gpu", 2, 0, seed % 8, seed, dlb_host_kernels(), 0};
  dlb_backend_ops ops;
  if (seed & 0x80) c.omit = DLB_QUEUED_NO_MATMUL | DLB_QUEUED_NO_CAST; /* UNSUPPORTED paths */
  if (!(gpu = dlb_queued_new(&c))) fuzz_fail("no memory for the queued backend");
  dlb_queued_retain(gpu); /* the registration's, dropped by its release */
  dlb_queued_ops(gpu, &ops);
  if (dlb_register_backend(L, &ops, gpu) != DLB_OK) {
    lua_pop(L, 1); /* out of memory (the heap may fail): no gpu this run */
    dlb_queued_unref(gpu);
  }
}

/* After lua_close: every buffer is gone, and the backend saw nothing wrong. */
static void check_gpu(void) {
  dlb_queued_stats s;
  dlb_queued_stats_get(gpu, &s);
  if (s.violations || s.races || s.live || s.events_live)
    fuzz_fail("INVARIANT BROKEN: the queued backend saw %ld violations, %ld races, %ld live "
              "blocks, %ld live events",
              s.violations, s.races, s.live, s.events_live);
  dlb_queued_unref(gpu);
  gpu = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gen g;
  fuzz_heap heap;
  lua_State *L;
  int st;

  if (strict_errors < 0) {
    const char *e = getenv("FUZZ_STRICT_ERRORS");
    strict_errors = e && *e && *e != '0';
  }
  memset(&g, 0, sizeof g);
  g.b.p = data;
  g.b.n = size;
  put(&g.t, "%s", prelude);
  while (g.b.n > 0 && g.statements < MAX_STATEMENTS) g_statement(&g, 0, 0);
  if (fuzz_verbose()) { /* numbered, as Lua reports lines */
    int line = 1;
    fprintf(stderr, "---- program ----\n%4d  ", line);
    for (const char *c = g.t.s; *c; c++) {
      fputc(*c, stderr);
      if (*c == '\n' && c[1]) fprintf(stderr, "%4d  ", ++line);
    }
    fprintf(stderr, "---- end ----\n");
  }

  L = fuzz_new_state(&heap);
  if (!L) fuzz_fail("lua_newstate failed");
  register_gpu(L, size ? data[0] : 0);
  heap_of_run = &heap;
  if (luaL_loadbuffer(L, g.t.s, g.t.len, "=fuzz") != LUA_OK)
    fuzz_fail("the generated program does not compile: %s\n%s", lua_tostring(L, -1), g.t.s);
  lua_getglobal(L, "dl");
  lua_createtable(L, NSLOTS + 1, 0); /* S */
  lua_pushvalue(L, -1);
  lua_pushcclosure(L, l_call, 1);
  lua_insert(L, -2);
  lua_newtable(L); /* kept objects */
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, "fuzz.kept");
  lua_pushcclosure(L, l_keep, 1);
  lua_pushcfunction(L, l_limit);
  st = lua_pcall(L, 5, 0, 0);
  if (st != LUA_OK && fuzz_verbose()) fprintf(stderr, "program: %s\n", luaL_tolstring(L, -1, NULL));
  lua_settop(L, 0);
  lua_close(L); /* with arrays, capsules, coroutines and finalizers outstanding */
  check_gpu();
  heap_of_run = NULL;
  free(g.t.s);
  return 0;
}
