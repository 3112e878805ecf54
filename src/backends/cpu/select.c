/* select.c -- the host's indexing kernels (the cpu kernels' take, mask and
 * nonzero entries): integer indices along a dim (take_along_dim,
 * put_along_dim, fancy indexing), boolean masks, and the positions of
 * nonzero elements. The core planned each call (shapes, dtypes, counts). */
#include <stdio.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
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

dlb_status dlb_cpu_index_error(int64_t i, int64_t n, int dim, int64_t base, dlb_kernel_error *ke) {
  snprintf(ke->message, sizeof ke->message,
           "index %lld is out of range for dim %d of extent %lld (valid: %lld..%lld or -%lld..-1)",
           (long long)i, dim + 1, (long long)n, (long long)base, (long long)(n - 1 + base),
           (long long)n);
  ke->hint = "indices are 1-based (1 the first, -1 the last) and must lie inside the dim";
  return DLB_E_INDEX;
}

static dlb_status index_error(const dlb_take_call *c, int64_t i, dlb_kernel_error *ke) {
  return dlb_cpu_index_error(i, c->data.shape[c->dim], c->dim, c->index_base, ke);
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
 * INT64_MIN); dlb_cpu_resolve_index decides the rest. */

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
        int64_t i = dlb_cpu_load_index(w.index_type, at[1] + j * w.step_index);
        if (dlb_cpu_resolve_index(i, w.n, c->index_base) < 0) return index_error(c, i, &c->error);
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
    int64_t i = dlb_cpu_load_index(w->index_type, at[1] + j * w->step_index);
    int64_t r = dlb_cpu_resolve_index(i, w->n, c->index_base);
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

/* Masks are read 64 elements at a time, as a word of bits (set: true): a
 * sparse mask costs a fast scan plus work per true element (a word of
 * none is skipped, the picks of a few are found by their bits), a dense
 * one read by a loop over the word's elements without branches to
 * mispredict (words of DENSE picks or more; a write goes pick by pick, so
 * that no element the mask leaves out is ever written). Pieces of lanes
 * of CHUNK elements at most go between looks at the interrupt; nonzero
 * lists the positions of such a piece, then writes their indices. */
#define DENSE 32
#define CHUNK 4096

/* A bit per byte of the 64 bytes at p: set where the byte is nonzero. */
static inline uint64_t nonzero_bits64(const uint8_t *p) {
#if defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128();
  uint64_t z = 0;
  for (int w = 0; w < 4; w++) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * w));
    z |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, zero)) << (16 * w);
  }
  return ~z;
#else
  /* Each word's nonzero bytes get their top bit (no carry crosses a byte),
   * which the multiply gathers into the word's top byte. */
  const uint64_t low7 = UINT64_C(0x7F7F7F7F7F7F7F7F), top = UINT64_C(0x8080808080808080);
  uint64_t bits = 0;
  for (int w = 0; w < 8; w++) {
    uint64_t x, t;
    memcpy(&x, p + 8 * w, 8);
    t = (((x & low7) + low7) | x) & top;
    bits |= (((t >> 7) * UINT64_C(0x0102040810204080)) >> 56) << (8 * w);
  }
  return bits;
#endif
}

/* A bit per byte of the len (1..64) bytes at m, ms apart (0: one byte for
 * all): set where the byte is nonzero. */
static inline uint64_t mask_bits(const char *m, int64_t ms, int64_t len) {
  const uint8_t *u = (const uint8_t *)m;
  uint64_t bits = 0;
  if (ms == 1 && len == 64) return nonzero_bits64(u);
  if (ms == 0) return *u ? ~UINT64_C(0) >> (64 - len) : 0;
  for (int64_t e = 0; e < len; e++) bits |= (uint64_t)(u[e * ms] != 0) << e;
  return bits;
}

/* The positions (0..n-1, n <= CHUNK) of the nonzero bytes among n bytes at
 * m, ms apart, in pos; returns their count. */
static int64_t byte_positions(const char *m, int64_t ms, int64_t n, uint32_t *pos) {
  int64_t k = 0;
  for (int64_t i0 = 0; i0 < n; i0 += 64) {
    uint64_t bits = mask_bits(m + i0 * ms, ms, n - i0 < 64 ? n - i0 : 64);
    for (; bits; bits &= bits - 1) pos[k++] = (uint32_t)(i0 + __builtin_ctzll(bits));
  }
  return k;
}

/* The picks along a piece of a lane: n mask bytes at mask, ms apart, and
 * the elements they pick, data's ds apart. Pick j is a run of `block`
 * elements of data, one element or the elements of the dims the mask does
 * not cover (contiguous: size bytes apart); read copies it to packed's
 * elements j * block.. (ps bytes apart), assign back from them (ps 0: one
 * value for all). Each returns the picks it made, at most left (those
 * packed holds); any alignment. */
typedef struct pick_call {
  int assign;
  int64_t ds, ms, ps, block;
} pick_call;

#define NAME pick1
#define BLEND 1
#define T uint8_t
#include "select_pick.h"
#define NAME pick2
#define BLEND 1
#define T uint16_t
#include "select_pick.h"
#define NAME pick4
#define BLEND 1
#define T uint32_t
#include "select_pick.h"
#define NAME pick8
#define BLEND 1
#define T uint64_t
#include "select_pick.h"
typedef struct pick16_t {
  uint64_t w[2];
} pick16_t;
#define NAME pick16
#define BLEND 0
#define T pick16_t
#include "select_pick.h"

typedef int64_t (*pick_fn)(const pick_call *p, char *data, const char *mask, int64_t n,
                           char *packed, int64_t left);

/* The dims of a pick's block: extents and data's byte strides, outermost
 * first. */
typedef struct block_walk {
  int ndim;
  int64_t shape[DLB_MAX_NDIM], stride[DLB_MAX_NDIM];
} block_walk;

/* The picks of elements of any size and blocks of any strides, element by
 * element (pick_fn's contract; n <= CHUNK). */
static int64_t pick_any(const pick_call *p, int64_t size, const block_walk *b, char *data,
                        const char *mask, int64_t n, char *packed, int64_t left) {
  uint32_t pos[CHUNK];
  int64_t k = byte_positions(mask, p->ms, n, pos);
  if (k > left) k = left;
  for (int64_t j = 0; j < k; j++) {
    char *d = data + (int64_t)pos[j] * p->ds, *q = packed + j * p->block * p->ps;
    int64_t index[DLB_MAX_NDIM] = {0};
    for (int64_t e = 0; e < p->block; e++, q += p->ps) {
      if (p->assign) memcpy(d, q, (size_t)size);
      else memcpy(q, d, (size_t)size);
      for (int dim = b->ndim - 1; dim >= 0; dim--) { /* odometer step */
        d += b->stride[dim];
        if (++index[dim] < b->shape[dim]) break;
        d -= b->stride[dim] * b->shape[dim];
        index[dim] = 0;
      }
    }
  }
  return k;
}

dlb_status dlb_cpu_mask(void *ctx, dlb_mask_call *c) {
  const int64_t *shape = c->data.shape;
  int nd = c->data.ndim, lead = nd, ln = 0;
  int64_t size = dlb_tensor_itemsize(&c->data), left, n, chunk;
  int64_t lshape[DLB_MAX_NDIM], ldata[DLB_MAX_NDIM], lmask[DLB_MAX_NDIM];
  dlb_tensor lt[2];
  const dlb_tensor *t[2] = {&lt[0], &lt[1]};
  block_walk b;
  pick_call p;
  pick_fn fn = NULL;
  dlb_lanes lanes;
  char *at[2], *packed = c->packed.data;
  dlb_work *work = dlb_work_current();
  (void)ctx;
  p.assign = c->assign;
  p.ps = c->packed.shape[0] == 1 ? 0 : dlb_tensor_stride(&c->packed, 0);
  p.block = 1;
  b.ndim = 0;
  if (nd == 0) {
    p.ds = p.ms = 0;
    pick_any(&p, size, &b, c->data.data, c->mask.data, 1, packed, 1);
    return DLB_OK;
  }
  for (int d = 0; d < nd; d++)
    if (shape[d] == 0) return DLB_OK;
  /* The mask picks along its dims up to the last one where it varies; the
   * dims after those (where the core spread it, stride 0) make each pick's
   * block, in row-major order as the picks are. */
  while (lead > 1 && (shape[lead - 1] == 1 || c->mask.strides[lead - 1] == 0)) lead--;
  for (int d = lead; d < nd; d++) {
    if (shape[d] == 1) continue;
    b.shape[b.ndim] = shape[d];
    b.stride[b.ndim++] = dlb_tensor_stride(&c->data, d);
    p.block *= shape[d];
  }
  {
    int64_t run = size; /* whether the block is one run of elements */
    int dense = 1;
    for (int d = b.ndim - 1; d >= 0; d--) {
      if (b.stride[d] != run) dense = 0;
      run *= b.shape[d];
    }
    if (dense) switch (size) {
        case 1: fn = pick1; break;
        case 2: fn = pick2; break;
        case 4: fn = pick4; break;
        case 8: fn = pick8; break;
        case 16: fn = pick16; break;
        default: break;
      }
  }
  /* The pick dims, merged where both data and mask run on across them (a
   * 2-D mask of an image, say: one lane). */
  for (int d = 0; d < lead; d++) {
    int64_t sd = c->data.strides[d], sm = c->mask.strides[d];
    if (shape[d] == 1) continue;
    if (ln > 0 && ldata[ln - 1] == sd * shape[d] && lmask[ln - 1] == sm * shape[d]) {
      lshape[ln - 1] *= shape[d];
      ldata[ln - 1] = sd;
      lmask[ln - 1] = sm;
    } else {
      lshape[ln] = shape[d];
      ldata[ln] = sd;
      lmask[ln++] = sm;
    }
  }
  if (ln == 0) lshape[ln] = 1, ldata[ln] = lmask[ln] = 0, ln++;
  lt[0] = c->data;
  lt[1] = c->mask;
  for (int k = 0; k < 2; k++) lt[k].ndim = ln, lt[k].shape = lshape;
  lt[0].strides = ldata;
  lt[1].strides = lmask;
  n = lshape[ln - 1];
  p.ds = ldata[ln - 1] * size;
  p.ms = lmask[ln - 1] * dlb_tensor_itemsize(&c->mask);
  /* The picks packed holds (one value written: any number). */
  left = c->assign && p.ps == 0 ? INT64_MAX : c->packed.shape[0] / p.block;
  /* A piece of a lane picks from about DLB_WORK_CHECK_EVERY elements at
   * most: the interrupt is looked at between pieces. */
  chunk = DLB_WORK_CHECK_EVERY / p.block;
  chunk = chunk < 1 ? 1 : chunk > CHUNK ? CHUNK : chunk;
  dlb_lanes_init(&lanes, 2, t, ln - 1);
  while (dlb_lanes_next(&lanes, at)) {
    for (int64_t i0 = 0, len; i0 < n && left > 0; i0 += len) {
      int64_t got;
      char *d = at[0] + i0 * p.ds;
      const char *m = at[1] + i0 * p.ms;
      len = n - i0 < chunk ? n - i0 : chunk;
      got = fn ? fn(&p, d, m, len, packed, left) : pick_any(&p, size, &b, d, m, len, packed, left);
      packed += got * p.block * p.ps;
      left -= got;
      if (dlb_work_tick(work, len * p.block)) return DLB_OK;
    }
  }
  return DLB_OK;
}

/* --- nonzero ------------------------------------------------------------------ */

/* positions_<T>(p, s, n, keep, pos): the positions (0..n-1) of the
 * elements of type T among n at p, s bytes apart, with bits in keep, into
 * pos, without a branch; returns their count. */
#define POSITIONS_OF(T)                                                                            \
  static int64_t positions_##T(const char *p, int64_t s, int64_t n, T keep, uint32_t *pos) {       \
    int64_t k = 0;                                                                                 \
    for (int64_t i = 0; i < n; i++) {                                                              \
      T v;                                                                                         \
      memcpy(&v, p + i * s, sizeof v);                                                             \
      pos[k] = (uint32_t)i;                                                                        \
      k += (v & keep) != 0;                                                                        \
    }                                                                                              \
    return k;                                                                                      \
  }
POSITIONS_OF(uint16_t)
POSITIONS_OF(uint32_t)
POSITIONS_OF(uint64_t)
#undef POSITIONS_OF

/* The positions (0..n-1, n <= CHUNK) of the nonzero elements of dtype t
 * among n at p, s bytes apart, in pos; returns their count. NaN is
 * nonzero, -0 is not (the sign bits are left out). */
static int64_t element_positions(dlb_dtype t, const char *p, int64_t s, int64_t n, uint32_t *pos) {
  const uint64_t sign64 = UINT64_C(1) << 63;
  int64_t k = 0;
  switch (dlb_dtype_get(t)->itemsize) {
    case 1: return byte_positions(p, s, n, pos);
    case 2:
      return positions_uint16_t(p, s, n, t == DLB_FLOAT16 || t == DLB_BFLOAT16 ? 0x7FFF : 0xFFFF,
                                pos);
    case 4: return positions_uint32_t(p, s, n, t == DLB_FLOAT32 ? 0x7FFFFFFF : 0xFFFFFFFF, pos);
    case 8:
      return positions_uint64_t(p, s, n,
                                t == DLB_FLOAT64     ? ~sign64
                                : t == DLB_COMPLEX64 ? ~UINT64_C(0x8000000080000000)
                                                     : ~UINT64_C(0),
                                pos);
    default: { /* complex128 */
      uint64_t a, b;
      for (int64_t i = 0; i < n; i++) {
        memcpy(&a, p + i * s, 8);
        memcpy(&b, p + i * s + 8, 8);
        pos[k] = (uint32_t)i;
        k += ((a | b) & ~sign64) != 0;
      }
      return k;
    }
  }
}

dlb_status dlb_cpu_nonzero(void *ctx, dlb_nonzero_call *c) {
  dlb_dtype t = dlb_dtype_of_dl(c->in.dtype);
  const dlb_tensor *in[1] = {&c->in};
  int nd = c->in.ndim, last = nd - 1;
  int64_t index[DLB_MAX_NDIM] = {0}, rows = c->out.shape[0], row = 0, base = c->index_base, n, s;
  int64_t rs = dlb_tensor_stride(&c->out, 0), cs = nd ? dlb_tensor_stride(&c->out, 1) : 0;
  char *out = c->out.data, *at[1];
  uint32_t pos[CHUNK];
  dlb_lanes lanes;
  dlb_work *work = dlb_work_current();
  (void)ctx;
  if (nd == 0 || rows == 0) return DLB_OK; /* 0-d: rows of no columns */
  n = c->in.shape[last];
  s = dlb_tensor_stride(&c->in, last);
  dlb_lanes_init(&lanes, 1, in, last);
  while (dlb_lanes_next(&lanes, at)) {
    for (int64_t i0 = 0, len; i0 < n; i0 += len) {
      int64_t k;
      char *o = out + row * rs;
      len = n - i0 < CHUNK ? n - i0 : CHUNK;
      k = element_positions(t, at[0] + i0 * s, s, len, pos);
      if (k > rows - row) k = rows - row; /* (never, with the core's count) */
      if (nd == 1 && rs == 8 && ((uintptr_t)o & 7) == 0) {
        int64_t *o64 = (int64_t *)(void *)o, first = i0 + base;
        for (int64_t j = 0; j < k; j++) o64[j] = first + pos[j];
      } else {
        for (int d = 0; d < last; d++) {
          int64_t v = index[d] + base;
          for (int64_t j = 0; j < k; j++) memcpy(o + j * rs + d * cs, &v, 8);
        }
        for (int64_t j = 0; j < k; j++) {
          int64_t v = i0 + pos[j] + base;
          memcpy(o + j * rs + last * cs, &v, 8);
        }
      }
      row += k;
      if (dlb_work_tick(work, len)) return DLB_OK;
    }
    for (int d = last - 1; d >= 0; d--) { /* the next lane's index */
      if (++index[d] < c->in.shape[d]) break;
      index[d] = 0;
    }
  }
  return DLB_OK;
}
