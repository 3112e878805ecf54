/* select.c -- the host's indexing kernels (the cpu kernels' take, mask and
 * nonzero entries): integer indices along a dim (take_along_dim,
 * put_along_dim, fancy indexing), boolean masks, and the positions of
 * nonzero elements. The core planned each call (shapes, dtypes, counts). */
#include <stdio.h>
#include <string.h>
#include "../../core/work.h"
#include "cpu.h"
#include "lanes.h"

/* Copies one element of size bytes (sizes 1..16). */
static inline void copy_element(char *dst, const char *src, int64_t size) {
  switch (size) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, (size_t)size); break;
  }
}

/* --- take --------------------------------------------------------------------- */

/* An element of an integer dtype as an int64; uint64 values past INT64_MAX
 * become INT64_MAX (out of range of any extent). */
static int64_t load_index(dlb_dtype t, const char *p) {
  uint64_t u;
  if (t != DLB_UINT64) return dlb_cpu_load_int64(t, p);
  memcpy(&u, p, 8);
  return u > INT64_MAX ? INT64_MAX : (int64_t)u;
}

/* A user's index into an extent n as 0-based, or -1 when out of range. */
static inline int64_t resolve(int64_t i, int64_t n, int64_t base) {
  if (i < 0) return i >= -n ? i + n : -1;
  if (i < base) return -1;
  i -= base;
  return i < n ? i : -1;
}

static dlb_status index_error(const dlb_take_call *c, int64_t i, dlb_kernel_error *ke) {
  int64_t n = c->data.shape[c->dim];
  snprintf(ke->message, sizeof ke->message,
           "index %lld is out of range for dim %d of extent %lld (valid: %lld..%lld or -%lld..-1)",
           (long long)i, c->dim + 1, (long long)n, (long long)c->index_base,
           (long long)(n - 1 + c->index_base), (long long)n);
  ke->hint = "indices are 1-based (1 the first, -1 the last) and must lie inside the dim";
  return DLB_E_INDEX;
}

/* The lanes of data, index and elements along dim. */
typedef struct take_walk {
  dlb_lanes lanes;
  int64_t m, n, step_data, step_index, step_elements, size;
  dlb_dtype index_type;
} take_walk;

static void take_walk_init(take_walk *w, const dlb_take_call *c) {
  const dlb_tensor *t[3] = {&c->elements, &c->index, &c->data};
  int d = c->dim;
  dlb_lanes_init(&w->lanes, 3, t, d);
  w->m = c->elements.shape[d];
  w->n = c->data.shape[d];
  w->step_elements = c->elements.shape[d] == 1 ? 0 : dlb_tensor_stride(&c->elements, d);
  w->step_index = c->index.shape[d] == 1 ? 0 : dlb_tensor_stride(&c->index, d);
  w->step_data = dlb_tensor_stride(&c->data, d);
  w->size = dlb_tensor_itemsize(&c->data);
  w->index_type = dlb_dtype_of_dl(c->index.dtype);
}

/* One lane of a gather by int64 indices of elements of T; returns 0, or 1
 * with the first index out of range in *bad (any int64 can be one:
 * math.mininteger too, so no value of the index can mark "none"). The
 * fast test subtracts base in uint64 (i - base overflows int64 for i near
 * INT64_MIN); resolve decides the rest. */

#define NAME gather4
#define T uint32_t
#include "select_gather.h"
#define NAME gather8
#define T uint64_t
#include "select_gather.h"

/* The first piece of a lane (m elements from j0, at most
 * DLB_WORK_CHECK_EVERY) as a walk of its own: at gets its pointers. A
 * long lane (a 1-D take is one) goes in such pieces, with a look at the
 * interrupt after each. */
static void lane_piece(const take_walk *w, char *const *lane, int64_t j0, take_walk *piece,
                       char **at) {
  *piece = *w;
  piece->m = w->m - j0 < DLB_WORK_CHECK_EVERY ? w->m - j0 : DLB_WORK_CHECK_EVERY;
  at[0] = lane[0] + j0 * w->step_elements;
  at[1] = lane[1] + j0 * w->step_index;
  at[2] = lane[2];
}

/* Checks every index (before a scatter writes anything). */
static dlb_status check_indices(dlb_take_call *c) {
  take_walk w, piece;
  char *lane[3], *at[3];
  dlb_work *work = dlb_work_current();
  take_walk_init(&w, c);
  while (dlb_lanes_next(&w.lanes, lane)) {
    for (int64_t j0 = 0; j0 < w.m; j0 += piece.m) {
      lane_piece(&w, lane, j0, &piece, at);
      for (int64_t j = 0; j < piece.m; j++) {
        int64_t i = load_index(w.index_type, at[1] + j * w.step_index);
        if (resolve(i, w.n, c->index_base) < 0) return index_error(c, i, &c->error);
      }
      if (dlb_work_tick(work, piece.m)) return DLB_OK;
    }
  }
  return DLB_OK;
}

/* Gathers or scatters one piece of a lane. */
static dlb_status take_piece(dlb_take_call *c, const take_walk *w, char *const *at) {
  if (!c->scatter && w->index_type == DLB_INT64 && (w->size == 4 || w->size == 8)) {
    int64_t bad;
    if (w->size == 4 ? gather4(w, at, c->index_base, &bad) : gather8(w, at, c->index_base, &bad))
      return index_error(c, bad, &c->error);
    return DLB_OK;
  }
  for (int64_t j = 0; j < w->m; j++) {
    int64_t i = load_index(w->index_type, at[1] + j * w->step_index);
    int64_t r = resolve(i, w->n, c->index_base);
    char *element = at[0] + j * w->step_elements, *datum;
    if (r < 0) return index_error(c, i, &c->error);
    datum = at[2] + r * w->step_data;
    if (c->scatter) copy_element(datum, element, w->size);
    else copy_element(element, datum, w->size);
  }
  return DLB_OK;
}

dlb_status dlb_cpu_take(void *ctx, dlb_take_call *c) {
  take_walk w, piece;
  char *lane[3], *at[3];
  dlb_work *work = dlb_work_current();
  dlb_status st;
  (void)ctx;
  if (c->data.ndim == 0) return DLB_OK; /* the core never sends one */
  if (c->scatter && (st = check_indices(c)) != DLB_OK) return st;
  if (work && work->interrupted) return DLB_OK; /* stopped while checking: write nothing */
  take_walk_init(&w, c);
  while (dlb_lanes_next(&w.lanes, lane)) {
    for (int64_t j0 = 0; j0 < w.m; j0 += piece.m) {
      lane_piece(&w, lane, j0, &piece, at);
      if ((st = take_piece(c, &piece, at)) != DLB_OK) return st;
      if (dlb_work_tick(work, piece.m)) return DLB_OK;
    }
  }
  return DLB_OK;
}

/* --- masks -------------------------------------------------------------------- */

/* Picks along one row of n elements: read packs them, assign unpacks. */

#define NAME pick1
#define T uint8_t
#include "select_pick.h"
#define NAME pick2
#define T uint16_t
#include "select_pick.h"
#define NAME pick4
#define T uint32_t
#include "select_pick.h"
#define NAME pick8
#define T uint64_t
#include "select_pick.h"

static int64_t pick_any(int assign, char *data, int64_t ds, const char *mask, int64_t ms,
                        char *packed, int64_t ps, int64_t n, int64_t size) {
  int64_t j = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!mask[i * ms]) continue;
    if (assign) memcpy(data + i * ds, packed + j * ps, (size_t)size);
    else memcpy(packed + j * ps, data + i * ds, (size_t)size);
    j++;
  }
  return j;
}

/* Whether every element pointer is aligned for T (the fast row needs it). */
static int aligned(const void *p, int64_t size) {
  return ((uintptr_t)p & (uintptr_t)(size - 1)) == 0;
}

dlb_status dlb_cpu_mask(void *ctx, dlb_mask_call *c) {
  const dlb_tensor *t[2] = {&c->data, &c->mask};
  dlb_lanes lanes;
  char *at[2], *packed = c->packed.data;
  int last = c->data.ndim - 1;
  int64_t size = dlb_tensor_itemsize(&c->data), n, ds, ms, ps;
  dlb_work *work = dlb_work_current();
  (void)ctx;
  ps = c->packed.shape[0] == 1 ? 0 : dlb_tensor_stride(&c->packed, 0);
  if (c->data.ndim == 0) {
    if (*(const char *)c->mask.data)
      pick_any(c->assign, c->data.data, 0, c->mask.data, 0, packed, ps, 1, size);
    return DLB_OK;
  }
  n = c->data.shape[last];
  ds = dlb_tensor_stride(&c->data, last);
  ms = c->mask.shape[last] == 1 ? 0 : dlb_tensor_stride(&c->mask, last);
  dlb_lanes_init(&lanes, 2, t, last);
  while (dlb_lanes_next(&lanes, at)) {
    int64_t got;
    int fast = aligned(at[0], size) && aligned(packed, size) && (ds % size) == 0;
    if (!fast || size > 8 || size == 0)
      got = pick_any(c->assign, at[0], ds, at[1], ms, packed, ps, n, size);
    else if (size == 1) got = pick1(c->assign, at[0], ds, at[1], ms, packed, ps, n);
    else if (size == 2) got = pick2(c->assign, at[0], ds, at[1], ms, packed, ps, n);
    else if (size == 4) got = pick4(c->assign, at[0], ds, at[1], ms, packed, ps, n);
    else got = pick8(c->assign, at[0], ds, at[1], ms, packed, ps, n);
    packed += got * ps;
    if (dlb_work_tick(work, n)) break;
  }
  return DLB_OK;
}

/* --- nonzero ------------------------------------------------------------------ */

/* Whether the element at p of dtype t is nonzero (NaN is; -0 is not). */
static int element_nonzero(dlb_dtype t, const char *p) {
  uint64_t a = 0, b = 0;
  switch (dlb_dtype_get(t)->itemsize) {
    case 1: return *p != 0;
    case 2: {
      uint16_t v;
      memcpy(&v, p, 2);
      return (t == DLB_FLOAT16 || t == DLB_BFLOAT16 ? v & 0x7FFF : v) != 0;
    }
    case 4: {
      uint32_t v;
      memcpy(&v, p, 4);
      return (t == DLB_FLOAT32 ? v & 0x7FFFFFFF : v) != 0;
    }
    case 8:
      memcpy(&a, p, 8);
      if (t == DLB_FLOAT64) return (a & ~(UINT64_C(1) << 63)) != 0;
      if (t == DLB_COMPLEX64) return (a & ~UINT64_C(0x8000000080000000)) != 0;
      return a != 0;
    default:
      memcpy(&a, p, 8);
      memcpy(&b, p + 8, 8);
      return ((a | b) & ~(UINT64_C(1) << 63)) != 0;
  }
}

dlb_status dlb_cpu_nonzero(void *ctx, dlb_nonzero_call *c) {
  dlb_dtype t = dlb_dtype_of_dl(c->in.dtype);
  int nd = c->in.ndim;
  int64_t index[DLB_MAX_NDIM] = {0}, total = 1, row = 0;
  int64_t rs = dlb_tensor_stride(&c->out, 0), cs = nd ? dlb_tensor_stride(&c->out, 1) : 0;
  const char *p = c->in.data;
  dlb_work *work = dlb_work_current();
  (void)ctx;
  for (int d = 0; d < nd; d++) total *= c->in.shape[d];
  for (int64_t k = 0; k < total; k++) {
    if (element_nonzero(t, p)) {
      char *out = (char *)c->out.data + row++ * rs;
      for (int d = 0; d < nd; d++) {
        int64_t v = index[d] + c->index_base;
        memcpy(out + d * cs, &v, 8);
      }
    }
    for (int d = nd - 1; d >= 0; d--) { /* odometer step */
      p += dlb_tensor_stride(&c->in, d);
      if (++index[d] < c->in.shape[d]) break;
      p -= dlb_tensor_stride(&c->in, d) * c->in.shape[d];
      index[d] = 0;
    }
    if ((k & 0xFFFF) == 0xFFFF && dlb_work_tick(work, 0x10000)) break;
  }
  return DLB_OK;
}
