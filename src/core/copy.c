/* copy.c -- strided copies, casts and fills between arrays in host memory. */
#include <stdlib.h>
#include <string.h>
#include "copy.h"
#include "dtype.h"
#include "iter.h"
#include "shape.h"
#include "staging.h"
#include "work.h"

/* Geometry of one operand of an element-wise loop, strides in bytes. */
typedef struct loop_operand {
  char *data;
  int64_t strides[DLB_MAX_NDIM];
} loop_operand;

/* Sets up an operand from an array: byte strides and host data pointer. */
static void operand_of(loop_operand *op, const dlb_array *a) {
  int64_t item = (int64_t)dlb_array_itemsize(a);
  op->data = dlb_array_host_data(a);
  /* An extent-1 dim's stride is unbounded (an import may carry any): unused. */
  for (int d = 0; d < a->ndim; d++) op->strides[d] = a->shape[d] == 1 ? 0 : a->strides[d] * item;
}

/* Copies the elements [I0, I1) x [J0, J1), one at a time, of size sizeof(T). */
#define COPY_RECT(T, I0, I1, J0, J1)                                             \
  for (int64_t i = (I0); i < (I1); i++)                                          \
    for (int64_t j = (J0); j < (J1); j++)                                        \
      memcpy(d + i * d0 + j * d1, s + i * s0 + j * s1, sizeof(T))

typedef struct { uint64_t lo, hi; } bytes16;

/* The blocks must be inlined into copy_tiled's clones to use their vector
 * units (left to itself GCC calls one baseline copy from all of them). */
#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

/* A B x B block of a transpose whose source runs along i and whose
 * destination runs along j (both a whole element apart): B source runs of B
 * elements into a local square, then its columns out as destination runs.
 * Constant sizes let the compiler do the square in vector registers. B by
 * measurement: runs of 64 bytes (whole cache lines) for 4- to 16-byte
 * elements, 16 bytes for 1- and 2-byte ones. */
#define TRANSPOSE_BLOCK(NAME, ET, B)                                             \
  static ALWAYS_INLINE void NAME(char *d, int64_t d0, const char *s, int64_t s1) { \
    ET square[B][B]; /* square[j][i] = source (i, j) */                          \
    for (int j = 0; j < (B); j++) memcpy(square[j], s + j * s1, sizeof square[j]); \
    for (int i = 0; i < (B); i++) {                                              \
      ET run[B];                                                                 \
      for (int j = 0; j < (B); j++) run[j] = square[j][i];                       \
      memcpy(d + i * d0, run, sizeof run);                                       \
    }                                                                            \
  }
TRANSPOSE_BLOCK(transpose_block_1, uint8_t, 16)
TRANSPOSE_BLOCK(transpose_block_2, uint16_t, 8)
TRANSPOSE_BLOCK(transpose_block_4, uint32_t, 16)
TRANSPOSE_BLOCK(transpose_block_8, uint64_t, 8)
TRANSPOSE_BLOCK(transpose_block_16, bytes16, 4)
#undef TRANSPOSE_BLOCK

/* The tile [i0, i1) x [j0, j1) in B x B blocks, then what is left at its
 * right and bottom edges (less than a block) one element at a time. */
#define TRANSPOSE_TILE(T, B, BLOCK)                                              \
  do {                                                                           \
    const int64_t ib_ = i0 + (i1 - i0) / (B) * (B), jb_ = j0 + (j1 - j0) / (B) * (B); \
    for (int64_t ii = i0; ii < ib_; ii += (B))                                   \
      for (int64_t jj = j0; jj < jb_; jj += (B))                                 \
        BLOCK(d + ii * d0 + jj * d1, d0, s + ii * s0 + jj * s1, s1);             \
    COPY_RECT(T, i0, ib_, jb_, j1);                                              \
    COPY_RECT(T, ib_, i1, j0, j1);                                               \
  } while (0)

/* dst = src over an n0 x n1 block of one dtype whose inner dim is strided in
 * the source but whose outer dim is not (a transpose): tiles keep both sides
 * in cache, so neither walks memory a stride apart for a whole row. Where
 * both sides run forward a whole element apart (the usual transpose), the
 * tiles are 128 x 128 and copied in blocks (4096^2 float32: 29 -> 9-12 ms,
 * 8192^2 uint8: 158 -> 17 ms); else 64 x 64 or 32 x 32, one element at a
 * time. */
DLB_KERNEL_CLONES static void copy_tiled(char *d, int64_t d0, int64_t d1, const char *s,
                                         int64_t s0, int64_t s1, int64_t n0, int64_t n1,
                                         size_t item) {
  const int blocked = s0 == (int64_t)item && d1 == (int64_t)item;
  /* unblocked: 2 * T * T * item <= 16 KiB (the L1 share of one tile pair) */
  const int64_t T = blocked ? 128 : item <= 2 ? 64 : 32;
  for (int64_t i0 = 0; i0 < n0; i0 += T)
    for (int64_t j0 = 0; j0 < n1; j0 += T) {
      const int64_t i1 = i0 + T < n0 ? i0 + T : n0, j1 = j0 + T < n1 ? j0 + T : n1;
      if (blocked) {
        switch (item) {
          case 1: TRANSPOSE_TILE(uint8_t, 16, transpose_block_1); break;
          case 2: TRANSPOSE_TILE(uint16_t, 8, transpose_block_2); break;
          case 4: TRANSPOSE_TILE(uint32_t, 16, transpose_block_4); break;
          case 8: TRANSPOSE_TILE(uint64_t, 8, transpose_block_8); break;
          default: TRANSPOSE_TILE(bytes16, 4, transpose_block_16); break;
        }
      } else {
        switch (item) {
          case 1: COPY_RECT(uint8_t, i0, i1, j0, j1); break;
          case 2: COPY_RECT(uint16_t, i0, i1, j0, j1); break;
          case 4: COPY_RECT(uint32_t, i0, i1, j0, j1); break;
          case 8: COPY_RECT(uint64_t, i0, i1, j0, j1); break;
          default: COPY_RECT(bytes16, i0, i1, j0, j1); break;
        }
      }
    }
}
#undef TRANSPOSE_TILE
#undef COPY_RECT

/* Whether a same-dtype copy is a transpose worth tiling: the destination
 * runs along its inner dim one element at a time while the source does so
 * along another dim. That dim is moved next to the inner one (the order of
 * the outer dims does not matter: the operands do not overlap here). */
static int transposed_pair(dlb_iter *it, int64_t item) {
  int in = it->ndim - 1;
  int64_t *dst = it->strides[0], *src = it->strides[1];
  if (it->ndim < 2 || it->shape[in] < 8 || src[in] == item || src[in] == -item ||
      (dst[in] != item && dst[in] != -item))
    return 0;
  for (int p = in - 1; p >= 0; p--) {
    if (it->shape[p] < 8 || (src[p] != item && src[p] != -item)) continue;
    int64_t t;
#define SWAP(x) (t = (x)[p], (x)[p] = (x)[in - 1], (x)[in - 1] = t)
    SWAP(it->shape);
    SWAP(dst);
    SWAP(src);
#undef SWAP
    return 1;
  }
  return 0;
}

/* What the kernels of cast_strided need. */
typedef struct cast_ctx {
  dlb_dtype dst_type, src_type;
  const dlb_iter *it;
  dlb_error *err;
  dlb_status status;
} cast_ctx;

/* The cast kernel over one run of the inner dim. */
static int cast_loop(char **data, const int64_t *steps, int64_t n, void *aux) {
  cast_ctx *c = aux;
  c->status = dlb_cast(c->dst_type, data[0], (ptrdiff_t)steps[0], c->src_type, data[1],
                       (ptrdiff_t)steps[1], (size_t)n, c->err);
  return c->status != DLB_OK;
}

/* The tiled copy of the last two dims at one index of the others. */
static int tile_body(char **data, void *aux) {
  const cast_ctx *c = aux;
  const dlb_iter *it = c->it;
  int a = it->ndim - 2, b = it->ndim - 1;
  int64_t rows = it->shape[a], cols = it->shape[b], band = rows;
  dlb_work *work = dlb_work_current();
  if (work) { /* bands of whole 128-row tiles, a look at the interrupt after each */
    band = (DLB_WORK_CHECK_EVERY / cols + 127) / 128 * 128;
    if (band > rows) band = rows;
  }
  for (int64_t r = 0; r < rows; r += band) {
    int64_t n = rows - r < band ? rows - r : band;
    copy_tiled(data[0] + r * it->strides[0][a], it->strides[0][a], it->strides[0][b],
               data[1] + r * it->strides[1][a], it->strides[1][a], it->strides[1][b], n, cols,
               dlb_dtype_get(c->dst_type)->itemsize);
    if (dlb_work_tick(work, n * cols)) return DLB_ITER_STOPPED;
  }
  return 0;
}

/* dst[i] = cast(src[i]) for every index of shape (dst and src must not
 * overlap: the iterator may reorder and reverse the walk). */
static dlb_status cast_strided(dlb_dtype dst_type, loop_operand *dst, dlb_dtype src_type,
                               loop_operand *src, int ndim, const int64_t *shape,
                               dlb_error *err) {
  dlb_iter it;
  char *data[2] = {dst->data, src->data};
  const int64_t *strides[2] = {dst->strides, src->strides};
  cast_ctx c = {dst_type, src_type, &it, err, DLB_OK};
  dlb_iter_init(&it, 2, ndim, shape, data, strides);
  if (dst_type == src_type && transposed_pair(&it, (int64_t)dlb_dtype_get(dst_type)->itemsize))
    dlb_iter_each(&it, 2, tile_body, &c);
  else
    dlb_iter_run(&it, cast_loop, &c);
  return c.status;
}

static dlb_status require_writable(const dlb_array *a, dlb_error *err) {
  if (!a->readonly && !a->buffer->readonly) return DLB_OK;
  return dlb_fail(err, DLB_E_READ_ONLY, "the array is read-only");
}

/* Whether the byte ranges the two arrays reach intersect. */
static int overlaps(const dlb_array *a, const dlb_array *b) {
  int64_t alo, ahi, blo, bhi;
  int64_t ia = (int64_t)dlb_array_itemsize(a), ib = (int64_t)dlb_array_itemsize(b);
  if (a->buffer != b->buffer || a->numel == 0 || b->numel == 0) return 0;
  if (dlb_shape_reach(a->ndim, a->shape, a->strides, &alo, &ahi, NULL) != DLB_OK ||
      dlb_shape_reach(b->ndim, b->shape, b->strides, &blo, &bhi, NULL) != DLB_OK)
    return 1;
  alo = (int64_t)a->offset + alo * ia;
  ahi = (int64_t)a->offset + (ahi + 1) * ia;
  blo = (int64_t)b->offset + blo * ib;
  bhi = (int64_t)b->offset + (bhi + 1) * ib;
  return alo < bhi && blo < ahi;
}

/* A host buffer for staging, at most DLB_STAGING_BYTES and at least one element. */
static void *staging_alloc(size_t item, int64_t numel, int64_t *chunk, dlb_error *err) {
  int64_t n = (int64_t)(DLB_STAGING_BYTES / item);
  void *p;
  if (n > numel) n = numel;
  if (n < 1) n = 1;
  p = malloc((size_t)n * item);
  if (!p) dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for a %zu-byte staging buffer", (size_t)n * item);
  *chunk = n;
  return p;
}

/* Whether the backend can copy src into dst itself (same backend, same
 * dtype, both contiguous): the fast path of a transfer within a backend. */
static int backend_copy_ok(const dlb_array *dst, const dlb_array *src) {
  return dst->buffer->backend == src->buffer->backend && dst->buffer->backend->ops.copy_within &&
         dst->dtype == src->dtype && dlb_array_is_contiguous(dst) && dlb_array_is_contiguous(src);
}

/* dst = cast(src), element by element in row-major order, through host
 * staging buffers of at most DLB_STAGING_BYTES each. */
static dlb_status copy_staged(dlb_array *dst, const dlb_array *src, dlb_error *err) {
  size_t sitem = dlb_array_itemsize(src), ditem = dlb_array_itemsize(dst);
  int64_t chunk, chunk2;
  int same = dst->dtype == src->dtype;
  char *sbuf = staging_alloc(sitem > ditem ? sitem : ditem, dst->numel, &chunk, err), *dbuf;
  dlb_status st = DLB_OK;
  if (!sbuf) return DLB_E_OUT_OF_MEMORY;
  dbuf = same ? sbuf : staging_alloc(sitem > ditem ? sitem : ditem, dst->numel, &chunk2, err);
  if (!dbuf) {
    free(sbuf);
    return DLB_E_OUT_OF_MEMORY;
  }
  for (int64_t pos = 0; pos < dst->numel && st == DLB_OK; pos += chunk) {
    int64_t n = dst->numel - pos < chunk ? dst->numel - pos : chunk;
    st = dlb_span_read(src, pos, n, sbuf, err);
    if (st == DLB_OK && !same)
      st = dlb_cast(dst->dtype, dbuf, (ptrdiff_t)ditem, src->dtype, sbuf, (ptrdiff_t)sitem,
                    (size_t)n, err);
    if (st == DLB_OK) st = dlb_span_write(dst, pos, n, dbuf, err);
    if (dlb_work_tick(dlb_work_current(), n)) break;
  }
  if (!same) free(dbuf);
  free(sbuf);
  return st;
}

static dlb_status copy_into(dlb_array *dst, const dlb_array *src, dlb_error *err) {
  loop_operand d, s;
  dlb_status st;
  if (dst->ndim != src->ndim ||
      (dst->ndim > 0 && memcmp(dst->shape, src->shape, (size_t)dst->ndim * sizeof dst->shape[0]) != 0))
    return dlb_fail(err, DLB_E_SHAPE, "copy between different shapes");
  if ((st = require_writable(dst, err)) != DLB_OK) return st;
  if (dst->numel == 0) return DLB_OK;
  if (overlaps(dst, src)) {
    dlb_array tmp;
    if ((st = dlb_array_clone(&tmp, src, src->dtype, err)) != DLB_OK) return st;
    st = dlb_array_copy_into(dst, &tmp, err);
    dlb_array_release(&tmp);
    return st;
  }
  if (dlb_array_host_data(dst) && dlb_array_host_data(src)) {
    operand_of(&d, dst);
    operand_of(&s, src);
    return cast_strided(dst->dtype, &d, src->dtype, &s, dst->ndim, dst->shape, err);
  }
  if (backend_copy_ok(dst, src)) {
    dlb_buffer *db = dst->buffer, *sb = src->buffer;
    dlb_backend *be = db->backend;
    st = be->ops.copy_within(be->ctx, db->device_id, db->handle, dst->offset, sb->device_id,
                             sb->handle, src->offset, (size_t)dst->numel * dlb_array_itemsize(dst));
    return st == DLB_OK ? DLB_OK : dlb_backend_failed(be, st, "copy within its memory", err);
  }
  return copy_staged(dst, src, err);
}

static dlb_status fill(dlb_array *dst, const dlb_scalar *v, dlb_error *err) {
  unsigned char element[16];
  loop_operand d, s;
  dlb_status st;
  if ((st = dlb_scalar_store(dst->dtype, element, v, err)) != DLB_OK) return st;
  if ((st = require_writable(dst, err)) != DLB_OK) return st;
  if (dst->numel == 0) return DLB_OK;
  if (dlb_array_host_data(dst)) {
    operand_of(&d, dst);
    /* The source is one element repeated: all strides 0. */
    s.data = (char *)element;
    memset(s.strides, 0, sizeof s.strides);
    return cast_strided(dst->dtype, &d, dst->dtype, &s, dst->ndim, dst->shape, err);
  }
  {
    size_t item = dlb_array_itemsize(dst);
    int64_t chunk;
    char *buf = staging_alloc(item, dst->numel, &chunk, err);
    if (!buf) return DLB_E_OUT_OF_MEMORY;
    for (int64_t k = 0; k < chunk; k++) memcpy(buf + (size_t)k * item, element, item);
    for (int64_t pos = 0; pos < dst->numel && st == DLB_OK; pos += chunk) {
      int64_t n = dst->numel - pos < chunk ? dst->numel - pos : chunk;
      st = dlb_span_write(dst, pos, n, buf, err);
      if (dlb_work_tick(dlb_work_current(), n)) break;
    }
    free(buf);
    return st;
  }
}

/* Allocates out on (backend, device_id) and copies src into it. */
static dlb_status clone_onto(dlb_array *out, const dlb_array *src, dlb_backend *backend,
                             int device_id, dlb_dtype dtype, dlb_error *err) {
  dlb_status st = dlb_array_allocate(out, backend, device_id, dtype, src->ndim, src->shape, 0, err);
  if (st != DLB_OK) return st;
  if ((st = dlb_array_copy_into(out, src, err)) != DLB_OK) dlb_array_release(out);
  return st;
}

dlb_status dlb_array_clone(dlb_array *out, const dlb_array *src, dlb_dtype dtype, dlb_error *err) {
  return clone_onto(out, src, src->buffer->backend, src->buffer->device_id, dtype, err);
}

dlb_status dlb_array_clone_to(dlb_array *out, const dlb_array *src, dlb_backend *backend,
                              int device_id, dlb_error *err) {
  return clone_onto(out, src, backend, device_id, src->dtype, err);
}

/* DLB_E_INDEX unless every index is within its extent. */
static dlb_status check_index(const dlb_array *a, const int64_t *index, dlb_error *err) {
  for (int d = 0; d < a->ndim; d++)
    if (index[d] < 0 || index[d] >= a->shape[d])
      return dlb_fail(err, DLB_E_INDEX, "index %lld out of range for dimension %d of extent %lld",
                      dlb_one_based(index[d]), d + 1, (long long)a->shape[d]);
  return DLB_OK;
}

/* The element's offset from element 0...0, in elements (by strides). */
static int64_t element_offset(const dlb_array *a, const int64_t *index) {
  int64_t off = 0;
  for (int d = 0; d < a->ndim; d++) off += index[d] * a->strides[d];
  return off;
}

dlb_status dlb_array_get(const dlb_array *a, const int64_t *index, dlb_scalar *out, dlb_error *err) {
  unsigned char element[16];
  dlb_status st = check_index(a, index, err);
  if (st != DLB_OK) return st;
  if ((st = dlb_element_read(a, element_offset(a, index), element, err)) != DLB_OK) return st;
  dlb_scalar_load(a->dtype, element, out);
  return DLB_OK;
}

dlb_status dlb_array_set(dlb_array *a, const int64_t *index, const dlb_scalar *v, dlb_error *err) {
  unsigned char element[16];
  dlb_array one;
  dlb_status st = require_writable(a, err);
  if (st != DLB_OK || (st = check_index(a, index, err)) != DLB_OK) return st;
  if ((st = dlb_scalar_store(a->dtype, element, v, err)) != DLB_OK) return st;
  /* The element as a 0-d view, written through the staging path. */
  one.buffer = a->buffer;
  one.dtype = a->dtype;
  one.ndim = 0;
  one.numel = 1;
  one.readonly = 0;
  one.offset = (size_t)((int64_t)a->offset + element_offset(a, index) * (int64_t)dlb_array_itemsize(a));
  return dlb_span_write(&one, 0, 1, element, err);
}

/* An operand over contiguous host memory with the shape of a. */
static void contiguous_operand(loop_operand *op, const dlb_array *a, void *data, dlb_dtype dtype) {
  int64_t strides[DLB_MAX_NDIM];
  int64_t item = (int64_t)dlb_dtype_get(dtype)->itemsize;
  dlb_shape_contiguous_strides(a->ndim, a->shape, strides);
  op->data = data;
  for (int d = 0; d < a->ndim; d++) op->strides[d] = strides[d] * item;
}

static dlb_status read_into(const dlb_array *a, void *dst, dlb_dtype dtype, dlb_error *err) {
  loop_operand d, s;
  if (a->numel == 0) return DLB_OK;
  if (!dlb_array_host_data(a)) {
    /* Staged: dst itself is the staging memory when no cast is needed. */
    if (dtype == a->dtype) return dlb_span_read(a, 0, a->numel, dst, err);
    {
      size_t item = dlb_array_itemsize(a), out_item = dlb_dtype_get(dtype)->itemsize;
      int64_t chunk;
      char *buf = staging_alloc(item, a->numel, &chunk, err);
      dlb_status st = DLB_OK;
      if (!buf) return DLB_E_OUT_OF_MEMORY;
      for (int64_t pos = 0; pos < a->numel && st == DLB_OK; pos += chunk) {
        int64_t n = a->numel - pos < chunk ? a->numel - pos : chunk;
        st = dlb_span_read(a, pos, n, buf, err);
        if (st == DLB_OK)
          st = dlb_cast(dtype, (char *)dst + (size_t)pos * out_item, (ptrdiff_t)out_item, a->dtype,
                        buf, (ptrdiff_t)item, (size_t)n, err);
        if (dlb_work_tick(dlb_work_current(), n)) break;
      }
      free(buf);
      return st;
    }
  }
  contiguous_operand(&d, a, dst, dtype);
  operand_of(&s, a);
  return cast_strided(dtype, &d, a->dtype, &s, a->ndim, a->shape, err);
}

static dlb_status write_from(dlb_array *a, const void *src, dlb_dtype dtype, dlb_error *err) {
  loop_operand d, s;
  dlb_status st;
  if ((st = require_writable(a, err)) != DLB_OK) return st;
  if (a->numel == 0) return DLB_OK;
  if (!dlb_array_host_data(a)) {
    if (dtype == a->dtype) return dlb_span_write(a, 0, a->numel, src, err);
    {
      size_t item = dlb_array_itemsize(a), in_item = dlb_dtype_get(dtype)->itemsize;
      int64_t chunk;
      char *buf = staging_alloc(item, a->numel, &chunk, err);
      if (!buf) return DLB_E_OUT_OF_MEMORY;
      for (int64_t pos = 0; pos < a->numel && st == DLB_OK; pos += chunk) {
        int64_t n = a->numel - pos < chunk ? a->numel - pos : chunk;
        st = dlb_cast(a->dtype, buf, (ptrdiff_t)item, dtype, (const char *)src + (size_t)pos * in_item,
                      (ptrdiff_t)in_item, (size_t)n, err);
        if (st == DLB_OK) st = dlb_span_write(a, pos, n, buf, err);
        if (dlb_work_tick(dlb_work_current(), n)) break;
      }
      free(buf);
      return st;
    }
  }
  operand_of(&d, a);
  contiguous_operand(&s, a, (void *)src, dtype);
  return cast_strided(a->dtype, &d, dtype, &s, a->ndim, a->shape, err);
}

/* The public entry points: each one call of bounded work (work.h). */

dlb_status dlb_array_copy_into(dlb_array *dst, const dlb_array *src, dlb_error *err) {
  dlb_work w;
  dlb_status st = dlb_work_begin(&w, dlb_array_budget(dst), dst->numel, "copy", err);
  return st != DLB_OK ? st : dlb_work_end(&w, copy_into(dst, src, err), "copy", err);
}

dlb_status dlb_array_fill(dlb_array *dst, const dlb_scalar *v, dlb_error *err) {
  dlb_work w;
  dlb_status st = dlb_work_begin(&w, dlb_array_budget(dst), dst->numel, "fill", err);
  return st != DLB_OK ? st : dlb_work_end(&w, fill(dst, v, err), "fill", err);
}

dlb_status dlb_array_read_into(const dlb_array *a, void *dst, dlb_dtype dtype, dlb_error *err) {
  dlb_work w;
  dlb_status st = dlb_work_begin(&w, dlb_array_budget(a), a->numel, "read", err);
  return st != DLB_OK ? st : dlb_work_end(&w, read_into(a, dst, dtype, err), "read", err);
}

dlb_status dlb_array_write_from(dlb_array *a, const void *src, dlb_dtype dtype, dlb_error *err) {
  dlb_work w;
  dlb_status st = dlb_work_begin(&w, dlb_array_budget(a), a->numel, "write", err);
  return st != DLB_OK ? st : dlb_work_end(&w, write_from(a, src, dtype, err), "write", err);
}
