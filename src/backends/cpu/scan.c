/* scan.c -- the host's scans and counts (the cpu kernels' scan and count
 * entries): cumsum/cumprod lane by lane in the result's dtype, as NumPy's
 * accumulate rounds each partial result; bincount and histogram in one
 * pass, in NumPy's order of addition (histogram weights in NumPy's blocks
 * of 65536 elements). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../core/array.h"
#include "../../core/work.h"
#include "cpu.h"
#include "lanes.h"

/* --- scans -------------------------------------------------------------------- */

/* acc = acc op x over a lane of n elements of T, stride bytes apart, in place. */
#define DEFINE_SCAN(NAME, T)                                                                       \
  static void NAME(int prod, char *p, int64_t stride, int64_t n) {                                 \
    T acc;                                                                                         \
    memcpy(&acc, p, sizeof acc);                                                                   \
    for (int64_t i = 1; i < n; i++) {                                                              \
      T x;                                                                                         \
      memcpy(&x, p + i * stride, sizeof x);                                                        \
      acc = prod ? (T)(acc * x) : (T)(acc + x);                                                    \
      memcpy(p + i * stride, &acc, sizeof acc);                                                    \
    }                                                                                              \
  }

DEFINE_SCAN(scan_u8, uint8_t)
DEFINE_SCAN(scan_u16, uint16_t)
DEFINE_SCAN(scan_u32, uint32_t)
DEFINE_SCAN(scan_u64, uint64_t)
DEFINE_SCAN(scan_f32, float)
DEFINE_SCAN(scan_f64, double)

static void scan_bool(int prod, char *p, int64_t stride, int64_t n) {
  char acc = p[0] != 0;
  for (int64_t i = 0; i < n; i++) {
    char x = p[i * stride] != 0;
    acc = prod ? (char)(acc && x) : (char)(acc || x);
    p[i * stride] = acc;
  }
}

/* float16 and bfloat16: each step in float32, rounded back (NumPy's half loops). */
static void scan_half(int prod, int brain, char *p, int64_t stride, int64_t n) {
  uint16_t acc, x;
  memcpy(&acc, p, 2);
  for (int64_t i = 1; i < n; i++) {
    float a, b, r;
    memcpy(&x, p + i * stride, 2);
    a = (float)(brain ? dlb_bfloat16_to_double(acc) : dlb_float16_to_double(acc));
    b = (float)(brain ? dlb_bfloat16_to_double(x) : dlb_float16_to_double(x));
    r = prod ? a * b : a + b;
    acc = brain ? dlb_bfloat16_from_double(r) : dlb_float16_from_double(r);
    memcpy(p + i * stride, &acc, 2);
  }
}

#define NAME scan_c64
#define T float
#include "scan_complex.h"
#define NAME scan_c128_plain
#define T double
#include "scan_complex.h"

/* complex128 products as NumPy's AVX-512F loop forms them where the CPU has
 * it (NumPy 1.24 dispatches so): each part one fused multiply-add. */
static void scan_c128(int prod, char *p, int64_t stride, int64_t n) {
  double acc[2];
  if (!prod || !__builtin_cpu_supports("avx512f")) {
    scan_c128_plain(prod, p, stride, n);
    return;
  }
  memcpy(acc, p, sizeof acc);
  for (int64_t i = 1; i < n; i++) {
    double x[2], re, im;
    memcpy(x, p + i * stride, sizeof x);
    re = fma(acc[0], x[0], -(acc[1] * x[1]));
    im = fma(acc[0], x[1], acc[1] * x[0]);
    acc[0] = re, acc[1] = im;
    memcpy(p + i * stride, acc, sizeof acc);
  }
}

static void scan_lane(dlb_dtype t, int prod, char *p, int64_t stride, int64_t n) {
  if (n == 0) return;
  switch (t) {
    case DLB_BOOL: scan_bool(prod, p, stride, n); break;
    case DLB_INT8:
    case DLB_UINT8: scan_u8(prod, p, stride, n); break;
    case DLB_INT16:
    case DLB_UINT16: scan_u16(prod, p, stride, n); break;
    case DLB_INT32:
    case DLB_UINT32: scan_u32(prod, p, stride, n); break;
    case DLB_INT64:
    case DLB_UINT64: scan_u64(prod, p, stride, n); break;
    case DLB_FLOAT16: scan_half(prod, 0, p, stride, n); break;
    case DLB_BFLOAT16: scan_half(prod, 1, p, stride, n); break;
    case DLB_FLOAT32: scan_f32(prod, p, stride, n); break;
    case DLB_FLOAT64: scan_f64(prod, p, stride, n); break;
    case DLB_COMPLEX64: scan_c64(prod, p, stride, n); break;
    default: scan_c128(prod, p, stride, n); break;
  }
}

dlb_status dlb_cpu_scan(void *ctx, dlb_scan_call *c) {
  const dlb_tensor *t[2] = {&c->out, &c->in};
  dlb_dtype to = dlb_dtype_of_dl(c->out.dtype), from = dlb_dtype_of_dl(c->in.dtype);
  dlb_lanes lanes;
  char *at[2];
  int64_t n = c->in.ndim ? c->in.shape[c->dim] : 1;
  int64_t os = c->in.ndim ? dlb_tensor_stride(&c->out, c->dim) : 0;
  int64_t is = c->in.ndim ? dlb_tensor_stride(&c->in, c->dim) : 0;
  dlb_work *work = dlb_work_current();
  dlb_error err;
  (void)ctx;
  if (c->in.ndim == 0)
    return dlb_cast(to, c->out.data, 0, from, c->in.data, 0, 1, &err) == DLB_OK
               ? DLB_OK
               : dlb_kernel_error_from(&c->error, &err);
  dlb_lanes_init(&lanes, 2, t, c->dim);
  while (dlb_lanes_next(&lanes, at)) {
    if (dlb_cast(to, at[0], os, from, at[1], is, (size_t)n, &err) != DLB_OK)
      return dlb_kernel_error_from(&c->error, &err);
    scan_lane(to, c->op == DLB_SCAN_PROD, at[0], os, n);
    if (dlb_work_tick(work, n)) break;
  }
  return DLB_OK;
}

/* --- counts ------------------------------------------------------------------- */

/* The bin of x (first <= x <= last) computed from the spacing of evenly
 * spaced bins, in 0..nbins-1. f is NaN where the edges' dtype held neither the
 * range nor its width (float32 edges of range {-1e300, 1e300} are -inf and
 * inf; a subnormal width makes norm inf): bin 0 then, for the caller's
 * correction against the edges, never a conversion of NaN (undefined). */
static inline int64_t computed_bin(double x, double first, int64_t nbins, double norm) {
  double f = (x - first) * norm;
  if (!(f > 0)) return 0;
  return f >= (double)nbins ? nbins - 1 : (int64_t)f;
}

/* The bin of x among nbins bins between edges, or -1 (NumPy's histogram:
 * a computed bin, corrected by one against the edges where rounding put it
 * next door). */
static int64_t bin_of(const dlb_count_call *c, dlb_dtype et, const char *edges, int64_t es,
                      int64_t nbins, double first, double last, double norm, double x) {
  int64_t b, lo, hi;
  if (!(x >= first && x <= last)) return -1; /* NaN too */
  if (c->uniform) {
    b = computed_bin(x, first, nbins, norm);
    if (x < dlb_cpu_load_real(et, edges + b * es)) b--;
    else if (b != nbins - 1 && x >= dlb_cpu_load_real(et, edges + (b + 1) * es)) b++;
    return b;
  }
  /* The last edge e with e <= x; the last bin takes its right edge. */
  lo = 0, hi = nbins; /* invariant: edges[lo] <= x, and x < edges[hi] unless hi == nbins */
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (dlb_cpu_load_real(et, edges + mid * es) <= x) lo = mid;
    else hi = mid;
  }
  return lo;
}

/* A bincount's negative element: the data the core could not check cheaply. */
static dlb_status negative(dlb_count_call *c, int64_t v) {
  snprintf(c->error.message, sizeof c->error.message,
           "bincount: x must have no negative elements (found %lld)", (long long)v);
  c->error.hint = "bins are the values 0, 1, 2, ...: shift the data first";
  return DLB_E_VALUE;
}

/* A count's temporary: n elements of size bytes of zeroed host memory
 * (c NULL: a refusal is not the call's error, the caller does without).
 * The script chooses n (the bins), so the bytes are charged first to the
 * account of the state whose call this is (the current work's budget, as
 * every buffer of the call's arrays is) and refunded when freed; a
 * refusal is the account's OUT_OF_MEMORY, with nothing allocated. A
 * caller with no work (a core caller without a budget) is not bounded. */
typedef struct temporary {
  void *p;
  size_t nbytes;
  dlb_budget *charged; /* NULL: nothing to refund */
} temporary;

static dlb_status temporary_get(temporary *t, int64_t n, size_t size, dlb_count_call *c) {
  dlb_work *w = dlb_work_current();
  dlb_error err;
  memset(t, 0, sizeof *t);
  if (n < 0 || (uint64_t)n > SIZE_MAX / size) goto no_memory;
  t->nbytes = (size_t)n * size;
  if (w && w->budget) {
    if (dlb_budget_charge(w->budget, t->nbytes, &err) != DLB_OK)
      return c ? dlb_kernel_error_from(&c->error, &err) : err.code;
    t->charged = w->budget;
  }
  if ((t->p = calloc(n > 0 ? (size_t)n : 1, size)) != NULL) return DLB_OK;
  if (t->charged) dlb_budget_refund(t->charged, t->nbytes);
  t->charged = NULL;
no_memory:
  if (c)
    snprintf(c->error.message, sizeof c->error.message, "count: no memory for %lld bins",
             (long long)n);
  return DLB_E_OUT_OF_MEMORY;
}

static void temporary_free(temporary *t) {
  free(t->p);
  if (t->charged) dlb_budget_refund(t->charged, t->nbytes);
  memset(t, 0, sizeof *t);
}

/* Edge b of float32 (f32) or float64 edges, es bytes apart. */
static inline double edge_at(const char *edges, int64_t es, int f32, int64_t b) {
  if (f32) {
    float v;
    memcpy(&v, edges + b * es, 4);
    return v;
  } else {
    double v;
    memcpy(&v, edges + b * es, 8);
    return v;
  }
}

/* Counts 1-D float data (FLOAT32: float32) into evenly spaced bins: its
 * bin as computed, moved by one where rounding put it next door (NumPy's
 * correction). EDGE(i) loads edge i as a double. The corrections are rare:
 * as branches, the load of counts[b] starts with the edges' loads (with
 * many bins all three miss the cache); as conditional moves (GCC 12 makes
 * them from a loader with a dtype test) it waits for them: 1.7 times as
 * long with 1e6 bins. Hence one loop per loader. */
#define COUNT_UNIFORM(FLOAT32, EDGE)                                                               \
  for (int64_t k = 0; k < total; k++, p += step) {                                                 \
    double x;                                                                                      \
    int64_t b;                                                                                     \
    if (FLOAT32) {                                                                                 \
      float v;                                                                                     \
      memcpy(&v, p, 4);                                                                            \
      x = v;                                                                                       \
    } else {                                                                                       \
      memcpy(&x, p, 8);                                                                            \
    }                                                                                              \
    if (x >= first && x <= last) {                                                                 \
      b = computed_bin(x, first, nbins, norm);                                                     \
      if (x < EDGE(b)) b--;                                                                        \
      else if (b != nbins - 1 && x >= EDGE(b + 1)) b++;                                            \
      counts[b]++;                                                                                 \
    }                                                                                              \
    if ((k & 0xFFFF) == 0xFFFF && dlb_work_tick(work, 0x10000)) break;                             \
  }

#define EDGE_F64(i) e64[i]
#define EDGE_ANY(i) edge_at(edges, es, f32, i)

/* bincount's loop over n integers of dtype t at p, step bytes apart, into
 * counts (nbins of them): 1 with a negative element in *bad, else 0. Made
 * once per dtype (bincount_piece), so that the load is one instruction and
 * nothing but the count is in the loop. With sub (n at most BINCOUNT_PIECE,
 * nbins at most SPLIT_BINS), four elements at a time go to four counts of
 * their own, added to counts at the end: an increment need not wait for
 * the one before it to reach memory when two elements fall in one bin
 * (twice as fast, whatever the data). */
#define SPLIT_BINS 1024
/* A piece: a quarter of it fits each uint16 count. */
#define BINCOUNT_PIECE DLB_WORK_CHECK_EVERY
static inline __attribute__((always_inline)) int bincount_run(dlb_dtype t, const char *p,
                                                              int64_t step, int64_t n,
                                                              int64_t nbins, int64_t *counts,
                                                              uint16_t *sub, int64_t *bad) {
  const uint64_t nb = (uint64_t)nbins;
  int64_t k = 0;
  if (sub) {
    memset(sub, 0, sizeof *sub * 4 * (size_t)nbins);
    for (; k + 4 <= n; k += 4, p += 4 * step) {
      int64_t v0 = dlb_cpu_load_int64(t, p), v1 = dlb_cpu_load_int64(t, p + step);
      int64_t v2 = dlb_cpu_load_int64(t, p + 2 * step), v3 = dlb_cpu_load_int64(t, p + 3 * step);
      if (!(((uint64_t)v0 < nb) & ((uint64_t)v1 < nb) & ((uint64_t)v2 < nb) & ((uint64_t)v3 < nb)))
        break; /* (the loop below finds which) */
      sub[v0]++;
      sub[nbins + v1]++;
      sub[2 * nbins + v2]++;
      sub[3 * nbins + v3]++;
    }
    for (int64_t b = 0; b < nbins; b++)
      counts[b] += (int64_t)sub[b] + sub[nbins + b] + sub[2 * nbins + b] + sub[3 * nbins + b];
  }
  for (; k < n; k++, p += step) {
    int64_t v = dlb_cpu_load_int64(t, p);
    if ((uint64_t)v < nb) {
      counts[v]++;
    } else if (v < 0) {
      *bad = v;
      return 1;
    }
  }
  return 0;
}

static int bincount_piece(dlb_dtype t, const char *p, int64_t step, int64_t n, int64_t nbins,
                          int64_t *counts, int64_t *bad) {
  uint16_t split[4 * SPLIT_BINS];
  uint16_t *sub = n <= BINCOUNT_PIECE && nbins <= SPLIT_BINS && n >= 4 * nbins ? split : NULL;
  switch (t) {
    case DLB_BOOL: return bincount_run(DLB_BOOL, p, step, n, nbins, counts, sub, bad);
    case DLB_INT8: return bincount_run(DLB_INT8, p, step, n, nbins, counts, sub, bad);
    case DLB_INT16: return bincount_run(DLB_INT16, p, step, n, nbins, counts, sub, bad);
    case DLB_INT32: return bincount_run(DLB_INT32, p, step, n, nbins, counts, sub, bad);
    case DLB_UINT8: return bincount_run(DLB_UINT8, p, step, n, nbins, counts, sub, bad);
    case DLB_UINT16: return bincount_run(DLB_UINT16, p, step, n, nbins, counts, sub, bad);
    case DLB_UINT32: return bincount_run(DLB_UINT32, p, step, n, nbins, counts, sub, bad);
    case DLB_INT64: return bincount_run(DLB_INT64, p, step, n, nbins, counts, sub, bad);
    default: return bincount_run(t, p, step, n, nbins, counts, sub, bad);
  }
}

/* Unweighted counts of 1-D integer data (bincount: one loop per dtype) or
 * float data in evenly spaced bins (histogram: edges of the data's dtype,
 * float32 or float64), with typed loads. */
static dlb_status count_fast(dlb_count_call *c, dlb_dtype it, int histogram, int64_t total,
                             int64_t nbins, double first, double last, double norm) {
  const char *p = c->in.data, *edges = c->edges.data;
  int64_t step = dlb_tensor_stride(&c->in, 0), cs = dlb_tensor_stride(&c->counts, 0);
  int64_t es = c->edges.ndim == 1 ? dlb_tensor_stride(&c->edges, 0) : 0;
  int f32 = c->edges.ndim == 1 && dlb_dtype_of_dl(c->edges.dtype) == DLB_FLOAT32;
  int64_t *counts = c->counts.data;
  const double *e64 = NULL;
  temporary local = {0}, copy = {0};
  dlb_work *work = dlb_work_current();
  dlb_status st;
  /* (the core's counts are fresh and contiguous: cs is 8, and no copy is made) */
  if (cs != 8) {
    if ((st = temporary_get(&local, nbins, sizeof *counts, c)) != DLB_OK) return st;
    counts = local.p;
  }
  if (!histogram) {
    for (int64_t k = 0, len; k < total; k += len, p += len * step) {
      int64_t bad;
      len = total - k < BINCOUNT_PIECE ? total - k : BINCOUNT_PIECE;
      if (bincount_piece(it, p, step, len, nbins, counts, &bad)) {
        temporary_free(&local);
        return negative(c, bad);
      }
      if (dlb_work_tick(work, len)) break;
    }
  } else {
    /* The edges as doubles: in place when they are (the core's are
     * contiguous and aligned), else a copy where the account has room, else
     * loaded and converted one by one. */
    if (!f32 && es == 8 && ((uintptr_t)edges & 7) == 0) {
      e64 = (const double *)(const void *)edges;
    } else if (temporary_get(&copy, nbins + 1, sizeof *e64, NULL) == DLB_OK) {
      double *e = copy.p;
      for (int64_t i = 0; i <= nbins; i++) e[i] = edge_at(edges, es, f32, i);
      e64 = e;
      dlb_work_tick(work, nbins + 1);
    }
    if (e64 && it == DLB_FLOAT32) {
      COUNT_UNIFORM(1, EDGE_F64)
    } else if (e64) {
      COUNT_UNIFORM(0, EDGE_F64)
    } else {
      COUNT_UNIFORM(it == DLB_FLOAT32, EDGE_ANY)
    }
  }
  if (local.p)
    for (int64_t i = 0; i < nbins; i++) memcpy((char *)c->counts.data + i * cs, &counts[i], 8);
  temporary_free(&local);
  temporary_free(&copy);
  return DLB_OK;
}

/* NumPy's histogram walks its input in blocks of this many elements. */
#define HISTOGRAM_BLOCK 65536

dlb_status dlb_cpu_count(void *ctx, dlb_count_call *c) {
  int nd = c->in.ndim, histogram = c->edges.ndim == 1;
  dlb_dtype it = dlb_dtype_of_dl(c->in.dtype);
  dlb_dtype et = histogram ? dlb_dtype_of_dl(c->edges.dtype) : DLB_FLOAT64; /* (unset: bincount) */
  int64_t index[DLB_MAX_NDIM] = {0}, total = 1, nbins = c->counts.shape[0];
  int64_t cs = dlb_tensor_stride(&c->counts, 0),
          es = histogram ? dlb_tensor_stride(&c->edges, 0) : 0;
  const char *p = c->in.data, *w = c->has_weights ? c->weights.data : NULL;
  char *counts = c->counts.data;
  double first = 0, last = 0, norm = 0, *block = NULL;
  temporary sums = {0};
  dlb_work *work = dlb_work_current();
  (void)ctx;
  for (int d = 0; d < nd; d++) total *= c->in.shape[d];
  if (histogram && nbins > 0) {
    first = dlb_cpu_load_real(et, c->edges.data);
    last = dlb_cpu_load_real(et, (const char *)c->edges.data + nbins * es);
    norm = (double)nbins / (last - first);
    if (w) { /* one block's sums of weights, as many as the bins: charged */
      dlb_status st = temporary_get(&sums, nbins, sizeof *block, c);
      if (st != DLB_OK) return st;
      block = sums.p;
    }
  }
  if (!w && nd == 1 && dlb_tensor_itemsize(&c->counts) == 8 &&
      ((!histogram && dlb_dtype_get(it)->kind != DLB_KIND_FLOAT &&
        dlb_dtype_get(it)->kind != DLB_KIND_COMPLEX && it != DLB_UINT64) ||
       (histogram && c->uniform && (it == DLB_FLOAT32 || it == DLB_FLOAT64)))) {
    dlb_status st = count_fast(c, it, histogram, total, nbins, first, last, norm);
    temporary_free(&sums);
    return st;
  }
  for (int64_t k = 0; k < total; k++) {
    int64_t b = histogram ? bin_of(c, et, c->edges.data, es, nbins, first, last, norm,
                                   dlb_cpu_load_real(it, p))
                          : dlb_cpu_load_int64(it, p);
    if (!histogram && b < 0) {
      temporary_free(&sums);
      return negative(c, b);
    }
    if (b >= 0 && b < nbins) {
      if (!w) {
        int64_t v;
        memcpy(&v, counts + b * cs, 8);
        v++;
        memcpy(counts + b * cs, &v, 8);
      } else {
        double v, x;
        memcpy(&x, w, 8);
        if (block) {
          block[b] += x;
        } else {
          memcpy(&v, counts + b * cs, 8);
          v += x;
          memcpy(counts + b * cs, &v, 8);
        }
      }
    }
    if (block && ((k + 1) % HISTOGRAM_BLOCK == 0 || k + 1 == total)) {
      for (int64_t i = 0; i < nbins; i++) { /* n += bincount(block) */
        double v;
        memcpy(&v, counts + i * cs, 8);
        v += block[i];
        memcpy(counts + i * cs, &v, 8);
        block[i] = 0;
      }
    }
    for (int d = nd - 1; d >= 0; d--) { /* odometer step, in and weights alike */
      p += dlb_tensor_stride(&c->in, d);
      if (w) w += dlb_tensor_stride(&c->weights, d);
      if (++index[d] < c->in.shape[d]) break;
      p -= dlb_tensor_stride(&c->in, d) * c->in.shape[d];
      if (w) w -= dlb_tensor_stride(&c->weights, d) * c->in.shape[d];
      index[d] = 0;
    }
    if ((k & 0xFFFF) == 0xFFFF && dlb_work_tick(work, 0x10000)) break;
  }
  temporary_free(&sums);
  return DLB_OK;
}
