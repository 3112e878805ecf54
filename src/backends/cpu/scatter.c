/* scatter.c -- the host's grouped updates (the cpu kernels' scatter entry,
 * dlbridge.h's dlb_scatter_call): NumPy's add.at, multiply.at, maximum.at
 * and minimum.at. The core planned the call (shapes, dtypes, the values
 * broadcast and cast to the computing dtype).
 *
 * Every index is checked first, so a call that fails writes nothing. Then
 * each lane of data along dim (every index of the other dims) takes its
 * updates in pieces of PIECE: the piece's indices resolved to byte offsets
 * into the lane, then one typed loop over them, in order (a repeated index
 * updates again, with what the earlier update left). Same-dtype updates of
 * the plain dtypes run typed loops (scatter_update.h); the others (float16,
 * bfloat16, complex, updates computed in a wider dtype) cast each element
 * to the computing dtype, run the element-wise loop of the operation on it
 * and cast it back. */
#include <stdio.h>
#include <string.h>
#include "../../core/work.h"
#include "casts.h"
#include "cpu.h"
#include "lanes.h"

#define PIECE 2048

#define SCATTER_INT 0
#define SCATTER_FLOAT 1
#define SCATTER_BOOL 2
#define SCATTER_CAT_(a, b) a##b
#define SCATTER_CAT(a, b) SCATTER_CAT_(a, b)

#define NAME update_f64
#define T double
#define KIND SCATTER_FLOAT
#include "scatter_update.h"
#define NAME update_f32
#define T float
#define KIND SCATTER_FLOAT
#include "scatter_update.h"
#define NAME update_i64
#define T int64_t
#define KIND SCATTER_INT
#include "scatter_update.h"
#define NAME update_i32
#define T int32_t
#define KIND SCATTER_INT
#include "scatter_update.h"
#define NAME update_i16
#define T int16_t
#define KIND SCATTER_INT
#include "scatter_update.h"
#define NAME update_i8
#define T int8_t
#define KIND SCATTER_INT
#include "scatter_update.h"
#define NAME update_u64
#define T uint64_t
#define KIND SCATTER_INT
#include "scatter_update.h"
#define NAME update_u32
#define T uint32_t
#define KIND SCATTER_INT
#include "scatter_update.h"
#define NAME update_u16
#define T uint16_t
#define KIND SCATTER_INT
#include "scatter_update.h"
#define NAME update_u8
#define T uint8_t
#define KIND SCATTER_INT
#include "scatter_update.h"
#define NAME update_bool
#define T uint8_t
#define KIND SCATTER_BOOL
#include "scatter_update.h"

typedef void (*update_fn)(int op, char *data, const int64_t *off, int64_t m, const char *e,
                          int64_t es);

/* The typed loop of data elements of dtype t updated by elements of the
 * same dtype, or NULL (then the cast road). */
static update_fn typed_update(dlb_dtype t) {
  switch (t) {
    case DLB_FLOAT64: return update_f64;
    case DLB_FLOAT32: return update_f32;
    case DLB_INT64: return update_i64;
    case DLB_INT32: return update_i32;
    case DLB_INT16: return update_i16;
    case DLB_INT8: return update_i8;
    case DLB_UINT64: return update_u64;
    case DLB_UINT32: return update_u32;
    case DLB_UINT16: return update_u16;
    case DLB_UINT8: return update_u8;
    case DLB_BOOL: return update_bool;
    default: return NULL;
  }
}

static const dlb_op element_ops[] = {DLB_OP_ADD, DLB_OP_MULTIPLY, DLB_OP_MAXIMUM, DLB_OP_MINIMUM};

/* The cast road: data elements of dtype dt, each cast to the computing
 * dtype kt, combined with the element-wise loop and cast back. */
typedef struct cast_road {
  dlb_loop loop;
  dlb_cast_plan to_compute, to_data;
  int64_t compute_size;
} cast_road;

static dlb_status cast_update(cast_road *r, char *data, const int64_t *off, int64_t m,
                              const char *e, int64_t es, dlb_error *err) {
  const int64_t steps[3] = {0, 0, 0};
  _Alignas(16) char a[16], b[16];
  char *args[3] = {a, a, b};
  dlb_status st;
  for (int64_t j = 0; j < m; j++) {
    char *datum = data + off[j];
    if ((st = dlb_cast_plan_run(&r->to_compute, a, 0, datum, 0, 1, err)) != DLB_OK) return st;
    memcpy(b, e + j * es, (size_t)r->compute_size);
    r->loop(args, steps, 1, NULL);
    if ((st = dlb_cast_plan_run(&r->to_data, datum, 0, a, 0, 1, err)) != DLB_OK) return st;
  }
  return DLB_OK;
}

static dlb_status index_error(const dlb_scatter_call *c, int64_t i, dlb_kernel_error *ke) {
  return dlb_cpu_index_error(i, c->data.shape[c->dim], c->dim, c->index_base, ke);
}

/* Checks every index before anything is written. */
static dlb_status check_indices(dlb_scatter_call *c, dlb_work *work) {
  const dlb_dtype t = dlb_dtype_of_dl(c->index.dtype);
  const int64_t m = c->index.shape[0], n = c->data.shape[c->dim], base = c->index_base;
  const int64_t is = dlb_tensor_stride(&c->index, 0);
  const char *p = c->index.data;
  for (int64_t j0 = 0; j0 < m; j0 += DLB_WORK_CHECK_EVERY) {
    int64_t end = m - j0 < DLB_WORK_CHECK_EVERY ? m : j0 + DLB_WORK_CHECK_EVERY;
    for (int64_t j = j0; j < end; j++) {
      int64_t i = dlb_cpu_load_index(t, p + j * is);
      if (dlb_cpu_resolve_index(i, n, base) < 0) return index_error(c, i, &c->error);
    }
    if (dlb_work_tick(work, end - j0)) return DLB_OK;
  }
  return DLB_OK;
}

/* The byte offsets into a lane of the k indices from j0 (all checked). */
static void piece_offsets(const dlb_scatter_call *c, int64_t j0, int64_t k, int64_t *off) {
  const int64_t n = c->data.shape[c->dim], base = c->index_base;
  const int64_t is = dlb_tensor_stride(&c->index, 0), ds = dlb_tensor_stride(&c->data, c->dim);
  const char *p = (const char *)c->index.data + j0 * is;
  if (c->index.dtype.code == kDLInt && c->index.dtype.bits == 64) {
    for (int64_t j = 0; j < k; j++) {
      int64_t i;
      memcpy(&i, p + j * is, 8);
      /* i - base in uint64: i near INT64_MIN cannot overflow; a negative i wraps past n */
      off[j] = ((uint64_t)i - (uint64_t)base < (uint64_t)n ? i - base : i + n) * ds;
    }
    return;
  }
  for (int64_t j = 0; j < k; j++) {
    int64_t i = dlb_cpu_load_index(dlb_dtype_of_dl(c->index.dtype), p + j * is);
    off[j] = dlb_cpu_resolve_index(i, n, base) * ds;
  }
}

dlb_status dlb_cpu_scatter(void *ctx, dlb_scatter_call *c) {
  const dlb_tensor *t[2] = {&c->elements, &c->data};
  const dlb_dtype dt = dlb_dtype_of_dl(c->data.dtype), kt = dlb_dtype_of_dl(c->elements.dtype);
  const int d = c->dim;
  const int64_t m = c->index.shape[0];
  const int64_t es = c->elements.shape[d] == 1 ? 0 : dlb_tensor_stride(&c->elements, d);
  int64_t off[PIECE];
  update_fn typed = dt == kt ? typed_update(dt) : NULL;
  cast_road road = {0};
  dlb_lanes lanes;
  char *lane[2];
  dlb_work *work = dlb_work_current();
  dlb_error err;
  dlb_status st;
  (void)ctx;
  if (c->op < DLB_SCATTER_ADD || c->op > DLB_SCATTER_MINIMUM || c->data.ndim == 0 ||
      c->index.ndim != 1) {
    snprintf(c->error.message, sizeof c->error.message, "scatter: an invalid call");
    return DLB_E_ARGUMENT;
  }
  if (!typed) {
    road.loop = dlb_cpu_loop(element_ops[c->op], kt);
    if (!road.loop) {
      snprintf(c->error.message, sizeof c->error.message, "scatter: no loop for %s updates",
               dlb_dtype_get(kt)->name);
      return DLB_E_DTYPE;
    }
    road.to_compute = dlb_cast_plan_for(kt, dt);
    road.to_data = dlb_cast_plan_for(dt, kt);
    road.compute_size = dlb_tensor_itemsize(&c->elements);
  }
  if ((st = check_indices(c, work)) != DLB_OK) return st;
  if (work && work->interrupted) return DLB_OK; /* stopped while checking: write nothing */
  if (m <= PIECE) piece_offsets(c, 0, m, off);  /* one piece: the same offsets for every lane */
  dlb_lanes_init(&lanes, 2, t, d);
  while (dlb_lanes_next(&lanes, lane)) {
    for (int64_t j0 = 0; j0 < m; j0 += PIECE) {
      int64_t k = m - j0 < PIECE ? m - j0 : PIECE;
      const char *e = lane[0] + j0 * es;
      if (m > PIECE) piece_offsets(c, j0, k, off);
      if (typed) typed(c->op, lane[1], off, k, e, es);
      else if ((st = cast_update(&road, lane[1], off, k, e, es, &err)) != DLB_OK)
        return dlb_kernel_error_from(&c->error, &err);
      if (dlb_work_tick(work, k)) return DLB_OK;
    }
  }
  return DLB_OK;
}
