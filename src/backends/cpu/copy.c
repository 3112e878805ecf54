/* copy.c -- the host's strided copies and casts: the iterator over a cast
 * loop, and tiled transposes for same-dtype copies whose source runs across
 * the destination's rows. */
#include <string.h>
#include "../../core/iter.h"
#include "../../core/work.h"
#include "casts.h"
#include "cpu.h"

/* Copies the elements [I0, I1) x [J0, J1), one at a time, of size sizeof(T). */
#define COPY_RECT(T, I0, I1, J0, J1)                                                               \
  for (int64_t i = (I0); i < (I1); i++)                                                            \
    for (int64_t j = (J0); j < (J1); j++)                                                          \
  memcpy(d + i * d0 + j * d1, s + i * s0 + j * s1, sizeof(T))

typedef struct {
  uint64_t lo, hi;
} bytes16;

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
#define TRANSPOSE_BLOCK(NAME, ET, B)                                                               \
  static ALWAYS_INLINE void NAME(char *d, int64_t d0, const char *s, int64_t s1) {                 \
    ET square[B][B]; /* square[j][i] = source (i, j) */                                            \
    for (int j = 0; j < (B); j++) memcpy(square[j], s + j * s1, sizeof square[j]);                 \
    for (int i = 0; i < (B); i++) {                                                                \
      ET run[B];                                                                                   \
      for (int j = 0; j < (B); j++) run[j] = square[j][i];                                         \
      memcpy(d + i * d0, run, sizeof run);                                                         \
    }                                                                                              \
  }
TRANSPOSE_BLOCK(transpose_block_1, uint8_t, 16)
TRANSPOSE_BLOCK(transpose_block_2, uint16_t, 8)
TRANSPOSE_BLOCK(transpose_block_4, uint32_t, 16)
TRANSPOSE_BLOCK(transpose_block_8, uint64_t, 8)
TRANSPOSE_BLOCK(transpose_block_16, bytes16, 4)
#undef TRANSPOSE_BLOCK

/* The tile [i0, i1) x [j0, j1) in B x B blocks, then what is left at its
 * right and bottom edges (less than a block) one element at a time. */
#define TRANSPOSE_TILE(T, B, BLOCK)                                                                \
  do {                                                                                             \
    const int64_t ib_ = i0 + (i1 - i0) / (B) * (B), jb_ = j0 + (j1 - j0) / (B) * (B);              \
    for (int64_t ii = i0; ii < ib_; ii += (B))                                                     \
      for (int64_t jj = j0; jj < jb_; jj += (B))                                                   \
        BLOCK(d + ii * d0 + jj * d1, d0, s + ii * s0 + jj * s1, s1);                               \
    COPY_RECT(T, i0, ib_, jb_, j1);                                                                \
    COPY_RECT(T, ib_, i1, j0, j1);                                                                 \
  } while (0)

/* dst = src over an n0 x n1 block of one dtype whose inner dim is strided in
 * the source but whose outer dim is not (a transpose): tiles keep both sides
 * in cache, so neither walks memory a stride apart for a whole row. Where
 * both sides run forward a whole element apart (the usual transpose), the
 * tiles are 128 x 128 and copied in blocks (4096^2 float32: 29 -> 9-12 ms,
 * 8192^2 uint8: 158 -> 17 ms); else 64 x 64 or 32 x 32, one element at a
 * time. */
DLB_KERNEL_CLONES static void copy_tiled(char *d, int64_t d0, int64_t d1, const char *s, int64_t s0,
                                         int64_t s1, int64_t n0, int64_t n1, size_t item) {
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
  dlb_cast_plan loop; /* picked on the first run */
} cast_ctx;

/* The cast kernel over one run of the inner dim. */
static int cast_loop(char **data, const int64_t *steps, int64_t n, void *aux) {
  cast_ctx *c = aux;
  c->status = dlb_cast_plan_run(&c->loop, data[0], (ptrdiff_t)steps[0], data[1],
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

dlb_status dlb_cpu_cast_strided(dlb_dtype dst_type, char *dst, const int64_t *dst_strides,
                                dlb_dtype src_type, const char *src, const int64_t *src_strides,
                                int ndim, const int64_t *shape, dlb_error *err) {
  dlb_iter it;
  char *data[2] = {dst, (char *)src};
  const int64_t *strides[2] = {dst_strides, src_strides};
  cast_ctx c = {dst_type, src_type, &it, err, DLB_OK, dlb_cast_plan_for(dst_type, src_type)};
  /* One short run: no iterator to set up (small arrays' case, as in the
   * element-wise kernel), its elements counted as the iterator counts them
   * (a walk of many short casts, the boxes of a staged copy say, still
   * looks at the interrupt). A long one goes through the iterator, which
   * looks at the interrupt between pieces. */
  if (ndim == 0 || (ndim == 1 && shape[0] <= DLB_WORK_CHECK_EVERY)) {
    int64_t n = ndim ? shape[0] : 1;
    c.status = dlb_cast_plan_run(&c.loop, dst, ndim ? (ptrdiff_t)dst_strides[0] : 0, src,
                                 ndim ? (ptrdiff_t)src_strides[0] : 0, (size_t)n, err);
    if (c.status == DLB_OK) dlb_work_tick(dlb_work_current(), n);
    return c.status;
  }
  dlb_iter_init(&it, 2, ndim, shape, data, strides);
  if (dst_type == src_type && transposed_pair(&it, (int64_t)dlb_dtype_get(dst_type)->itemsize))
    dlb_iter_each(&it, 2, tile_body, &c);
  else dlb_iter_run_any(&it, cast_loop, &c);
  return c.status;
}
