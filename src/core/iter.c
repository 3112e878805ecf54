/* iter.c -- walking several operands of one shape together. */
#include "invariant.h"
#include "iter.h"
#include "work.h"

/* |x| of a stride (INT64_MIN cannot occur: strides of reached elements fit). */
static int64_t magnitude(int64_t x) { return x < 0 ? -x : x; }

/* p + offset bytes. Through an integer: an operand that reaches no memory
 * (size 0 in a dim another operand lacks, as matmul's K = 0) may be NULL,
 * and NULL plus an offset is undefined in C even when never read. */
static char *offset_pointer(char *p, int64_t offset) {
  return (char *)((uintptr_t)p + (uintptr_t)offset);
}

/* Swaps dims a and b of every operand. */
static void swap_dims(dlb_iter *it, int a, int b) {
  int64_t t = it->shape[a];
  it->shape[a] = it->shape[b];
  it->shape[b] = t;
  for (int k = 0; k < it->nop; k++) {
    t = it->strides[k][a];
    it->strides[k][a] = it->strides[k][b];
    it->strides[k][b] = t;
  }
}

/* Whether dim inner can merge into dim outer in every operand: one step of
 * outer is a whole run of inner. */
static int mergeable(const dlb_iter *it, int outer, int inner) {
  for (int k = 0; k < it->nop; k++) {
    int64_t span;
    if (__builtin_mul_overflow(it->strides[k][inner], it->shape[inner], &span) ||
        span != it->strides[k][outer])
      return 0;
  }
  return 1;
}

void dlb_iter_init(dlb_iter *it, int nop, int ndim, const int64_t *shape, char *const *data,
                   const int64_t *const *strides) {
  dlb_iter_init_order(it, nop, ndim, shape, data, strides, 0);
}

void dlb_iter_init_order(dlb_iter *it, int nop, int ndim, const int64_t *shape, char *const *data,
                         const int64_t *const *strides, int order) {
  int n = 0;
  DLB_ASSERT(nop >= 1 && nop <= DLB_ITER_MAX && order >= 0 && order < nop);
  DLB_ASSERT(ndim >= 0 && ndim <= DLB_MAX_NDIM);
  it->nop = nop;
  for (int k = 0; k < nop; k++) it->data[k] = data[k];
  for (int d = 0; d < ndim; d++)
    if (shape[d] == 0) { /* nothing to visit: one empty dim */
      it->ndim = 1;
      it->shape[0] = 0;
      for (int k = 0; k < nop; k++) it->strides[k][0] = 0;
      return;
    }
  for (int d = 0; d < ndim; d++) { /* extent-1 dims go */
    if (shape[d] == 1) continue;
    it->shape[n] = shape[d];
    for (int k = 0; k < nop; k++) it->strides[k][n] = strides[k][d];
    n++;
  }
  it->ndim = n;
  /* Flip dims operand `order` walks backwards: start at their far end. */
  for (int d = 0; d < n; d++) {
    if (it->strides[order][d] >= 0) continue;
    for (int k = 0; k < nop; k++) {
      it->data[k] = offset_pointer(it->data[k], (it->shape[d] - 1) * it->strides[k][d]);
      it->strides[k][d] = -it->strides[k][d];
    }
  }
  /* Order by operand `order`'s strides, largest outermost (stable insertion
   * sort: ties, such as broadcast dims, keep their order). */
  for (int d = 1; d < n; d++)
    for (int e = d;
         e > 0 && magnitude(it->strides[order][e - 1]) < magnitude(it->strides[order][e]); e--)
      swap_dims(it, e - 1, e);
  /* Merge neighbours contiguous in every operand. */
  int out = 0;
  for (int d = 0; d < n; d++) {
    if (out > 0 && mergeable(it, out - 1, d)) {
      it->shape[out - 1] *= it->shape[d];
      for (int k = 0; k < nop; k++) it->strides[k][out - 1] = it->strides[k][d];
      continue;
    }
    it->shape[out] = it->shape[d];
    for (int k = 0; k < nop; k++) it->strides[k][out] = it->strides[k][d];
    out++;
  }
  it->ndim = out;
}

int dlb_iter_empty(const dlb_iter *it) { return it->ndim == 1 && it->shape[0] == 0; }

/* The odometer over a walk's outer dims: every operand's pointer moves with
 * the index, one stride a step (a carry takes back what the dim walked), so
 * that no offset is recomputed from the index. Operands past nop have
 * pointer and strides 0: the loops over them have a constant count (a loop
 * of nop copies became a call of memcpy per kernel call). Pointers are
 * integers for offset_pointer's reason. */
typedef struct odometer {
  int n; /* outer dims, outermost first */
  int64_t index[DLB_MAX_NDIM], shape[DLB_MAX_NDIM];
  int64_t step[DLB_MAX_NDIM][DLB_ITER_MAX]; /* [i][k]: operand k's stride along outer dim i */
  uintptr_t p[DLB_ITER_MAX];                /* each operand's element at index */
} odometer;

/* An odometer over the n dims dims[0..n) of it, at index 0. */
static void odometer_init(odometer *o, const dlb_iter *it, const int *dims, int n) {
  o->n = n;
  for (int k = 0; k < DLB_ITER_MAX; k++) o->p[k] = k < it->nop ? (uintptr_t)it->data[k] : 0;
  for (int i = 0; i < n; i++) {
    o->index[i] = 0;
    o->shape[i] = it->shape[dims[i]];
    for (int k = 0; k < DLB_ITER_MAX; k++)
      o->step[i][k] = k < it->nop ? it->strides[k][dims[i]] : 0;
  }
}

/* odometer_next's carry out of dim i (its index at its last value). */
static int odometer_carry(odometer *o, int i) {
  for (; i >= 0; i--) {
    if (++o->index[i] < o->shape[i]) {
      for (int k = 0; k < DLB_ITER_MAX; k++) o->p[k] += (uintptr_t)o->step[i][k];
      return 1;
    }
    o->index[i] = 0;
    for (int k = 0; k < DLB_ITER_MAX; k++)
      o->p[k] -= (uintptr_t)((o->shape[i] - 1) * o->step[i][k]);
  }
  return 0;
}

/* Advances to the next index; 0 once every index was visited. */
static inline int odometer_next(odometer *o) {
  const int i = o->n - 1;
  if (i < 0) return 0;
  if (o->index[i] + 1 < o->shape[i]) { /* the common step, inline */
    o->index[i]++;
    for (int k = 0; k < DLB_ITER_MAX; k++) o->p[k] += (uintptr_t)o->step[i][k];
    return 1;
  }
  return odometer_carry(o, i);
}

/* The pointers at o's index plus offset[k] (NULL: none), as a kernel takes
 * them (its own copy: a kernel may move its data pointers). */
static inline void odometer_data(const odometer *o, const int64_t *offset, char **data) {
  for (int k = 0; k < DLB_ITER_MAX; k++)
    data[k] = (char *)(o->p[k] + (offset ? (uintptr_t)offset[k] : 0));
}

/* 0, 1, ..., n - 1. */
static void first_dims(int *dims, int n) {
  for (int d = 0; d < n; d++) dims[d] = d;
}

int dlb_iter_each(const dlb_iter *it, int inner, int (*body)(char **data, void *aux), void *aux) {
  int dims[DLB_MAX_NDIM];
  char *data[DLB_ITER_MAX];
  odometer o;
  if (dlb_iter_empty(it)) return 0;
  first_dims(dims, it->ndim - inner);
  odometer_init(&o, it, dims, it->ndim - inner);
  do {
    int st;
    odometer_data(&o, NULL, data);
    if ((st = body(data, aux)) != 0) return st;
  } while (odometer_next(&o));
  return 0;
}

/* The loop over n elements from data, in pieces of DLB_WORK_CHECK_EVERY
 * with a look at the interrupt between them. Pieces start at multiples of
 * DLB_WORK_CHECK_EVERY from the run's start, so a kernel that blocks its
 * run (pairwise sums: DLB_REDUCE_RUN divides it) computes as in one piece. */
static int run_pieces(dlb_loop loop, void *aux, dlb_work *work, char *const *data,
                      const int64_t *steps, int64_t n) {
  char *q[DLB_ITER_MAX];
  int64_t done = 0;
  while (done < n) {
    int64_t m = n - done < DLB_WORK_CHECK_EVERY ? n - done : DLB_WORK_CHECK_EVERY;
    for (int k = 0; k < DLB_ITER_MAX; k++) q[k] = offset_pointer(data[k], done * steps[k]);
    int st = loop(q, steps, m, aux);
    if (st) return st;
    if (dlb_work_tick(work, m)) return DLB_ITER_STOPPED;
    done += m;
  }
  return 0;
}

int dlb_iter_run(const dlb_iter *it, dlb_loop loop, void *aux) {
  int64_t steps[DLB_ITER_MAX], n = 1;
  int dims[DLB_MAX_NDIM], nouter = it->ndim > 0 ? it->ndim - 1 : 0;
  char *data[DLB_ITER_MAX];
  dlb_work *work = dlb_work_current();
  odometer o;
  if (dlb_iter_empty(it)) return 0;
  for (int k = 0; k < DLB_ITER_MAX; k++)
    steps[k] = k < it->nop && it->ndim > 0 ? it->strides[k][it->ndim - 1] : 0;
  if (it->ndim > 0) n = it->shape[it->ndim - 1];
  first_dims(dims, nouter);
  odometer_init(&o, it, dims, nouter);
  do {
    int st;
    odometer_data(&o, NULL, data);
    if (work && n > DLB_WORK_CHECK_EVERY) st = run_pieces(loop, aux, work, data, steps, n);
    else if ((st = loop(data, steps, n, aux)) == 0 && dlb_work_tick(work, n))
      st = DLB_ITER_STOPPED; /* run_pieces' one piece, without its loop */
    if (st) return st;
  } while (odometer_next(&o));
  return 0;
}

/* --- tiled walks (dlb_iter_run_any) ---------------------------------------- */

/* A tiled walk: kernel calls run along dim c, tc elements at most; a tile
 * is one such call for each index of dim r (short), at one block of dim c;
 * every other dim is an outer one. */
typedef struct tiling {
  int c, r;
  int64_t tc;
} tiling;

/* Tiling's measures ((N, k) + (N, 1) for k = 2 to 64, float32 and bool,
 * and bench/game.lua's rows, on a Zen core: 32 KiB L1). ITER_SHORT: inner
 * dims shorter than this are walked across (at 16 runs of the inner dim win
 * again: a kernel call costs about as much as 20 elements of a strided
 * loop). ITER_TILE_BYTES: what one operand's part of a tile may span, an L1
 * share, so that the tile stays in cache for all its calls. ITER_RUN_MAX:
 * the longest call of a tile (the buffered casts' chunk; 1024 beats 256 by
 * 7% on (N, 3) + (N, 1)).
 * Not tiled: a transpose's source (M:T() + 1), read a line per element
 * along the inner dim. Blocks of 16 x 256 keep its lines in L1, but cost
 * 5-10% in bench/game.lua (M 1000 x 1000): the strided kernel loop, not
 * the cache, bounds that walk. */
#define ITER_SHORT 16
#define ITER_TILE_BYTES 16384
#define ITER_RUN_MAX 1024
_Static_assert((ITER_SHORT) * (ITER_RUN_MAX) < DLB_WORK_CHECK_EVERY,
               "a tile is less work than one look at the interrupt covers");

/* Whether a tiled walk beats runs of the inner dim: an inner dim shorter
 * than ITER_SHORT beside a dim at least twice that long. Then calls run along
 * the longest dim, each tile the whole inner dim across a block of the
 * longest one that spans at most ITER_TILE_BYTES in every operand. */
static int pick_tiling(const dlb_iter *it, tiling *t) {
  const int in = it->ndim - 1;
  int longest = -1;
  int64_t span = 1;
  if (it->ndim < 2 || it->shape[in] >= ITER_SHORT) return 0;
  for (int d = in - 1; d >= 0; d--)
    if (longest < 0 || it->shape[d] > it->shape[longest]) longest = d;
  if (it->shape[longest] < 2 * ITER_SHORT) return 0;
  for (int k = 0; k < it->nop; k++)
    if (magnitude(it->strides[k][longest]) > span) span = magnitude(it->strides[k][longest]);
  t->c = longest;
  t->r = in;
  t->tc = ITER_TILE_BYTES / span;
  if (t->tc > ITER_RUN_MAX) t->tc = ITER_RUN_MAX;
  if (t->tc < ITER_SHORT) t->tc = ITER_SHORT;
  return 1;
}

/* The walk of tiling t. */
static int run_tiled(const dlb_iter *it, const tiling *t, dlb_loop loop, void *aux) {
  int64_t steps[DLB_ITER_MAX], across[DLB_ITER_MAX], offset[DLB_ITER_MAX];
  int dims[DLB_MAX_NDIM], nouter = 0;
  const int64_t ec = it->shape[t->c], er = it->shape[t->r];
  char *data[DLB_ITER_MAX];
  dlb_work *work = dlb_work_current();
  odometer o;
  for (int d = 0; d < it->ndim; d++)
    if (d != t->c && d != t->r) dims[nouter++] = d;
  odometer_init(&o, it, dims, nouter);
  for (int k = 0; k < DLB_ITER_MAX; k++) {
    steps[k] = k < it->nop ? it->strides[k][t->c] : 0;
    across[k] = k < it->nop ? it->strides[k][t->r] : 0;
  }
  do {
    for (int64_t c0 = 0; c0 < ec; c0 += t->tc) {
      const int64_t nc = ec - c0 < t->tc ? ec - c0 : t->tc;
      for (int64_t r = 0; r < er; r++) {
        int st;
        for (int k = 0; k < DLB_ITER_MAX; k++) offset[k] = r * across[k] + c0 * steps[k];
        odometer_data(&o, offset, data);
        if ((st = loop(data, steps, nc, aux)) != 0) return st;
      }
      if (dlb_work_tick(work, er * nc)) return DLB_ITER_STOPPED;
    }
  } while (odometer_next(&o));
  return 0;
}

int dlb_iter_run_any(const dlb_iter *it, dlb_loop loop, void *aux) {
  tiling t;
  if (dlb_iter_empty(it) || !pick_tiling(it, &t)) return dlb_iter_run(it, loop, aux);
  return run_tiled(it, &t, loop, aux);
}
