/* The cast table (backends/cpu/casts.h) against the one-element cast.
 *
 * Every loop the table can pick -- for each (source, destination) pair of
 * the 15 dtypes, each layout (contiguous, a fill from one element, every
 * other element, strided, backwards) and each alignment -- gives, element
 * for element, the bytes and the status that dlb_scalar_cast gives for one
 * element loaded by dlb_scalar_load, and the error names the same first
 * value. A NaN may come back as any NaN. Bytes between the elements of a
 * strided destination stay as they were. Random runs of random lengths
 * (across the lengths where the loops change strategy: in place, through
 * chunks, chunk boundaries) with values in and out of the destination's
 * range, edge values and raw bit patterns. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/casts.h"
#include "check.h"
#include "core/dtype.h"
#include "fixtures.h"

#define POISON 0xa5

static size_t item(dlb_dtype t) { return dlb_dtype_get(t)->itemsize; }

static int is_float(dlb_dtype t) {
  return dlb_dtype_get(t)->kind == DLB_KIND_FLOAT || dlb_dtype_get(t)->kind == DLB_KIND_COMPLEX;
}

/* --- values ------------------------------------------------------------- */

static double random_in(double lo, double hi) {
  return lo + (hi - lo) * ((double)(rng() >> 11) * 0x1p-53);
}

/* The range of an integer dtype as doubles (for generating values only). */
static void int_range(dlb_dtype t, double *lo, double *hi) {
  const int bits = (int)item(t) * 8;
  if (dlb_dtype_get(t)->kind == DLB_KIND_UINT) {
    *lo = 0.0;
    *hi = ldexp(1.0, bits) - 1.0;
  } else {
    *lo = -ldexp(1.0, bits - 1);
    *hi = ldexp(1.0, bits - 1) - 1.0;
  }
}

/* Where a float into a 64-bit integer changes method: below 2^51 in
 * magnitude a chunk converts in vectors, past it one element at a time. */
static const double wide_edges[] = {0x1p51,       -0x1p51,       0x1p51 - 0.5,        -0x1p51 + 0.5,
                                    0x1p51 - 1.0, -0x1p51 + 1.0, 0x1p52 + 1.0,        -0x1p53,
                                    0x1p62,       0x1p63 - 1024, 2251799813685247.75, -0.75};

/* A double for a float element cast to dst: mostly one dst holds (an
 * integer dst's range, with a fraction), sometimes an edge or anything.
 * tame 2: numbers below 2^50 in magnitude (integers, halves, fractions;
 * for an unsigned dst above -1), one in 400 a wide edge and one in 3000
 * any edge: the long runs where one element sends a chunk of a float to
 * 64-bit cast the slow way, and sometimes fails it. */
static double random_double(dlb_dtype dst, int tame) {
  static const double edges[] = {
      0.0,           -0.0,          0.5,           -0.5,         -0.9999,      1.0,
      -1.0,          127.9,         128.0,         -128.0,       -128.9,       -129.0,
      255.9,         256.0,         -1.0,          32767.9,      32768.0,      -32769.0,
      65535.5,       65536.0,       65504.0,       65520.0,      2147483647.5, 2147483648.0,
      -2147483648.0, -2147483648.9, -2147483649.0, 4294967295.5, 4294967296.0, 0x1p63,
      -0x1p63,       0x1p64,        -0x1p64,       0x1p24 + 1,   1e300,        -1e300,
      4.9e-324,      0x1p-24,       0x1p-25,       0x1p-126,     0x1p-149,     INFINITY,
      -INFINITY,     NAN,           -NAN};
  const dlb_kind k = dlb_dtype_get(dst)->kind;
  if (tame == 2) {
    const uint64_t r = rng();
    if (r % 400 == 0) return wide_edges[rng() % (sizeof wide_edges / sizeof wide_edges[0])];
    if (r % 3000 == 1) return edges[rng() % (sizeof edges / sizeof edges[0])];
    double x = ldexp(random_in(-1.0, 1.0), (int)(rng() % 51));
    if (r % 3 == 0) x = round(x * 2.0) / 2.0;
    if (k == DLB_KIND_UINT && x <= -1.0) x = -x;
    return x;
  }
  if (tame && (k == DLB_KIND_INT || k == DLB_KIND_UINT)) {
    double lo, hi;
    int_range(dst, &lo, &hi);
    if (hi > 60000.0 && rng() % 2) { /* within float16's range */
      hi = 60000.0;
      lo = lo < 0 ? -60000.0 : 0.0;
    }
    return trunc(random_in(lo / 2, hi / 2)) + (double)(rng() % 8) / 8.0;
  }
  switch (rng() % 4) {
    case 0: return edges[rng() % (sizeof edges / sizeof edges[0])];
    case 1: {
      uint64_t bits = rng();
      double d;
      memcpy(&d, &bits, sizeof d);
      return d;
    }
    case 2: return ldexp(random_in(-1.0, 1.0), (int)(rng() % 80) - 30);
    default: return random_in(-300.0, 300.0);
  }
}

/* Writes one random element of src (a cast into dst follows) at p. */
static void random_element(dlb_dtype src, dlb_dtype dst, int tame, unsigned char *p) {
  const uint64_t r = rng();
  switch (src) {
    case DLB_BOOL: p[0] = (unsigned char)(r & 1); return;
    case DLB_FLOAT16:
    case DLB_BFLOAT16: {
      uint16_t h = (uint16_t)r;
      if (tame || r % 3) {
        const double d = random_double(dst, tame);
        h = src == DLB_FLOAT16 ? dlb_float16_from_double(d) : dlb_bfloat16_from_double(d);
      }
      memcpy(p, &h, 2);
      return;
    }
    case DLB_FLOAT32: {
      uint32_t bits = (uint32_t)r;
      if (tame || r % 3) {
        const float f = (float)random_double(dst, tame);
        memcpy(&bits, &f, 4);
      }
      memcpy(p, &bits, 4);
      return;
    }
    case DLB_FLOAT64: {
      const double d = random_double(dst, tame);
      memcpy(p, &d, 8);
      return;
    }
    case DLB_COMPLEX64: {
      const float c[2] = {(float)random_double(dst, tame), (float)random_double(dst, 0)};
      memcpy(p, c, sizeof c);
      if (r % 4 == 0) memset(p + 4, 0, 4); /* a zero imaginary part */
      return;
    }
    case DLB_COMPLEX128: {
      const double c[2] = {random_double(dst, tame), random_double(dst, 0)};
      memcpy(p, c, sizeof c);
      if (r % 4 == 0) memset(p + 8, 0, 8);
      return;
    }
    default: { /* an integer: any bits, often few of them */
      uint64_t u = rng();
      if (r % 2) u >>= rng() % 64;
      if (r % 4 == 1) u = (uint64_t)(-(int64_t)u);
      memcpy(p, &u, item(src)); /* little-endian: the low bytes */
      return;
    }
  }
}

/* Whether two elements of t agree: the same bytes, or NaN for NaN in each
 * float part. */
static int same_element(dlb_dtype t, const unsigned char *a, const unsigned char *b) {
  if (memcmp(a, b, item(t)) == 0) return 1;
  if (!is_float(t)) return 0;
  dlb_scalar x, y;
  dlb_scalar_load(t, a, &x);
  dlb_scalar_load(t, b, &y);
  if (x.kind == DLB_SCALAR_COMPLEX) {
    const int re = isnan(x.v.c.re) ? isnan(y.v.c.re) : memcmp(&x.v.c.re, &y.v.c.re, 8) == 0;
    const int im = isnan(x.v.c.im) ? isnan(y.v.c.im) : memcmp(&x.v.c.im, &y.v.c.im, 8) == 0;
    return re && im;
  }
  return isnan(x.v.f) && isnan(y.v.f);
}

/* --- one trial ----------------------------------------------------------- */

/* A run of n elements, stride in elements (any sign), base misaligned by
 * `shift` bytes, in a buffer of its own. */
typedef struct run {
  unsigned char *buf, *base;
  size_t bytes;
  ptrdiff_t stride; /* bytes */
} run;

static run run_make(dlb_dtype t, size_t n, ptrdiff_t stride_items, size_t shift) {
  run r;
  const size_t sz = item(t), span = (size_t)llabs((long long)stride_items) * sz * (n - 1) + sz;
  r.bytes = span + shift;
  r.buf = malloc(r.bytes);
  memset(r.buf, POISON, r.bytes);
  r.stride = stride_items * (ptrdiff_t)sz;
  r.base = r.buf + shift + (stride_items < 0 ? span - sz : 0);
  return r;
}

static unsigned char *at(const run *r, size_t k) { return r->base + (ptrdiff_t)k * r->stride; }

static const char *layout_name(ptrdiff_t ds, ptrdiff_t ss) {
  if (ds == 1 && ss == 1) return "contiguous";
  if (ds == 1 && ss == 0) return "fill";
  if (ds == 1 && ss == 2) return "every other";
  return "strided";
}

static int failures_shown;

/* Casts n random src elements into dst at the layout and alignment given,
 * through `how` (0: dlb_cast; 1: the loop dlb_cast_loop_for picks; 2: a
 * plan, in pieces), and compares with the one-element cast. */
static void trial(dlb_dtype dst, dlb_dtype src, size_t n, ptrdiff_t ds, ptrdiff_t ss, size_t shift,
                  int tame, int how) {
  run d = run_make(dst, n, ds, shift), s = run_make(src, n, ss, shift);
  unsigned char(*want)[16] = malloc(n * 16);
  dlb_error got_err, want_err;
  dlb_status want_st = DLB_OK, got_st;
  memset(&got_err, 0, sizeof got_err);
  memset(&want_err, 0, sizeof want_err);
  const size_t distinct = ss == 0 ? 1 : n;
  for (size_t k = 0; k < distinct; k++) random_element(src, dst, tame, at(&s, k));
  for (size_t k = 0; k < n && want_st == DLB_OK; k++) {
    dlb_scalar v;
    dlb_scalar_load(src, at(&s, k), &v);
    want_st = dlb_scalar_cast(dst, want[k], &v, &want_err);
  }
  if (how == 0) {
    got_st = dlb_cast(dst, d.base, d.stride, src, s.base, s.stride, n, &got_err);
  } else if (how == 1) {
    const int aligned = dlb_cast_aligned(dst, d.base, d.stride, src, s.base, s.stride);
    dlb_cast_loop loop = dlb_cast_loop_for(dst, d.stride, src, s.stride, aligned);
    got_st = loop ? loop((char *)d.base, d.stride, (const char *)s.base, s.stride, n, &got_err)
                  : DLB_E_UNSUPPORTED;
  } else { /* pieces of a walk, as an iterator's runs */
    dlb_cast_plan plan = dlb_cast_plan_for(dst, src);
    got_st = DLB_OK;
    for (size_t pos = 0; pos < n && got_st == DLB_OK;) {
      const size_t m = 1 + (size_t)rnd((int64_t)(n - pos));
      got_st = dlb_cast_plan_run(&plan, at(&d, pos), d.stride, at(&s, pos), s.stride, m, &got_err);
      pos += m;
    }
  }
  int ok = got_st == want_st;
  if (ok && want_st != DLB_OK) ok = strcmp(got_err.message, want_err.message) == 0;
  for (size_t k = 0; ok && want_st == DLB_OK && k < n; k++)
    if (!same_element(dst, at(&d, k), want[k])) ok = 0;
  /* the gaps of the destination's buffer are untouched */
  unsigned char *mine = calloc(d.bytes, 1);
  for (size_t k = 0; k < n; k++) memset(mine + (at(&d, k) - d.buf), 1, item(dst));
  for (size_t b = 0; ok && b < d.bytes; b++)
    if (!mine[b] && d.buf[b] != POISON) ok = 0;
  free(mine);
  CHECK(ok);
  if (!ok && failures_shown++ < 10)
    fprintf(stderr,
            "  %s -> %s, %s (dst %td, src %td elements), n %zu, shift %zu, via %d: "
            "status %d (want %d) \"%s\" (want \"%s\")\n",
            dlb_dtype_get(src)->name, dlb_dtype_get(dst)->name, layout_name(ds, ss), ds, ss, n,
            shift, how, (int)got_st, (int)want_st, got_err.message, want_err.message);
  free(want);
  free(d.buf);
  free(s.buf);
}

/* Lengths either side of where the loops change strategy: SHORT_RUN (16),
 * the stack chunks (256 to 4096 elements), float16's (1024). */
static size_t random_length(void) {
  static const size_t edges[] = {1,   2,   3,   4,    5,    15,   16,   17,
                                 255, 256, 257, 1023, 1024, 1025, 2049, 4097};
  return rng() % 3 ? edges[rng() % (sizeof edges / sizeof edges[0])] : 1 + (size_t)rnd(3000);
}

static void test_every_pair(void) {
  static const ptrdiff_t layouts[][2] = {{1, 1}, {1, 0}, {1, 2}, {1, 3}, {2, 1}, {-2, -3}, {3, 2}};
  for (int dt = 0; dt < DLB_DTYPE_COUNT; dt++)
    for (int st = 0; st < DLB_DTYPE_COUNT; st++)
      for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
        for (size_t shift = 0; shift < 2; shift++)
          for (int rep = 0; rep < 3; rep++)
            trial((dlb_dtype)dt, (dlb_dtype)st, random_length(), layouts[l][0], layouts[l][1],
                  shift, rep != 2, rep % 3);
}

/* Floats into 64-bit integers over long runs (many chunks), each layout:
 * values below 2^50 and, now and then, one past 2^51, out of range or NaN
 * in the middle of a run. (float16 reaches them through float32 chunks.) */
static void test_float_to_wide_runs(void) {
  static const dlb_dtype dsts[] = {DLB_INT64, DLB_UINT64};
  static const dlb_dtype srcs[] = {DLB_BFLOAT16, DLB_FLOAT32, DLB_FLOAT64, DLB_COMPLEX64,
                                   DLB_COMPLEX128};
  static const ptrdiff_t layouts[][2] = {{1, 1}, {1, 2}, {1, 3}, {2, 1}, {-2, -3}};
  for (size_t d = 0; d < sizeof dsts / sizeof dsts[0]; d++)
    for (size_t s = 0; s < sizeof srcs / sizeof srcs[0]; s++)
      for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
        for (int rep = 0; rep < 8; rep++)
          trial(dsts[d], srcs[s], 200 + (size_t)rnd(1500), layouts[l][0], layouts[l][1],
                (size_t)rep % 2, 2, rep % 3);
}

/* The table has a loop for every valid pair and layout, at both
 * alignments; none for an invalid dtype. */
static void test_table_is_complete(void) {
  int missing = 0;
  for (int dt = 0; dt < DLB_DTYPE_COUNT; dt++)
    for (int st = 0; st < DLB_DTYPE_COUNT; st++) {
      const ptrdiff_t di = (ptrdiff_t)item((dlb_dtype)dt), si = (ptrdiff_t)item((dlb_dtype)st);
      const ptrdiff_t strides[][2] = {{di, si}, {di, 0}, {di, 2 * si}, {-di, 3 * si}, {0, 0}};
      for (size_t l = 0; l < sizeof strides / sizeof strides[0]; l++)
        for (int aligned = 0; aligned < 2; aligned++)
          missing += !dlb_cast_loop_for((dlb_dtype)dt, strides[l][0], (dlb_dtype)st, strides[l][1],
                                        aligned);
    }
  CHECK_EQ_INT(missing, 0);
  CHECK(dlb_cast_loop_for(DLB_DTYPE_COUNT, 1, DLB_INT8, 1, 0) == NULL);
  CHECK(dlb_cast_loop_for(DLB_INT8, 1, (dlb_dtype)-1, 1, 0) == NULL);
  dlb_error err;
  dlb_cast_plan plan = dlb_cast_plan_for(DLB_INT8, DLB_DTYPE_COUNT);
  unsigned char a[8] = {0}, b[8] = {0};
  CHECK_EQ_INT(dlb_cast_plan_run(&plan, a, 1, b, 1, 1, &err), DLB_E_DTYPE);
  CHECK_EQ_INT(dlb_cast(DLB_DTYPE_COUNT, a, 1, DLB_INT8, b, 1, 1, &err), DLB_E_DTYPE);
  CHECK_EQ_INT(dlb_cast_plan_run(&plan, NULL, 1, NULL, 1, 0, &err), DLB_OK); /* nothing to do */
}

/* A plan picks again when a run's strides differ from the last: a
 * contiguous run, then a strided one, then contiguous again. */
static void test_plan_repicks(void) {
  float src[8] = {1.5f, -2.5f, 3.5f, -4.5f, 5.5f, -6.5f, 7.5f, -8.5f};
  int32_t dst[8];
  dlb_error err;
  dlb_cast_plan plan = dlb_cast_plan_for(DLB_INT32, DLB_FLOAT32);
  memset(dst, 0, sizeof dst);
  CHECK_EQ_INT(dlb_cast_plan_run(&plan, dst, 4, src, 4, 2, &err), DLB_OK);
  CHECK_EQ_INT(dlb_cast_plan_run(&plan, dst + 2, 4, src + 2, 8, 3, &err), DLB_OK);
  CHECK_EQ_INT(dlb_cast_plan_run(&plan, dst + 5, 8, src, 4, 2, &err), DLB_OK);
  CHECK_EQ_INT(dst[0], 1);
  CHECK_EQ_INT(dst[1], -2);
  CHECK_EQ_INT(dst[2], 3);  /* src[2] */
  CHECK_EQ_INT(dst[3], 5);  /* src[4] */
  CHECK_EQ_INT(dst[4], 7);  /* src[6] */
  CHECK_EQ_INT(dst[5], 1);  /* src[0] */
  CHECK_EQ_INT(dst[6], 0);  /* skipped by the stride */
  CHECK_EQ_INT(dst[7], -2); /* src[1] */
  /* misaligned after aligned: the same bytes */
  unsigned char raw[64];
  double one = 1.0;
  memset(raw, 0, sizeof raw);
  memcpy(raw + 1, &one, 8);
  memcpy(raw + 9, &one, 8);
  plan = dlb_cast_plan_for(DLB_FLOAT32, DLB_FLOAT64);
  float out[4] = {0};
  CHECK_EQ_INT(dlb_cast_plan_run(&plan, out, 4, &one, 8, 1, &err), DLB_OK);
  CHECK_EQ_INT(dlb_cast_plan_run(&plan, out + 1, 4, raw + 1, 8, 2, &err), DLB_OK);
  CHECK(out[0] == 1.0f && out[1] == 1.0f && out[2] == 1.0f && out[3] == 0.0f);
}

int main(void) {
  test_table_is_complete();
  test_plan_repicks();
  test_every_pair();
  test_float_to_wide_runs();
  return check_done("test_casts");
}
