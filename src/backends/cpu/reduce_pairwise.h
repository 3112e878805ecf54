/* reduce_pairwise.h -- a template: NumPy's pairwise sums of the float
 * dtype T (float or double; reduce_loops.c says how, above its instances):
 * PREFIXpairwise_T of contiguous elements, PREFIXpairwise_strided_T of
 * strided ones, the fold kernel PREFIXsum_T and its short-runs kernel
 * PREFIXsum_short_runs_T. SKIP_NAN 1 (PREFIX nan)
 * reads a NaN element as 0 (nansum: NumPy's sum of a copy with NaNs
 * replaced by 0), 0 (PREFIX empty) reads elements as they are: then no
 * line differs from a sum without it. reduce_loops.c #defines T, PREFIX and
 * SKIP_NAN and includes this file once per instance; it #undefs them at
 * its end. A file, not a macro,
 * so that a debugger and a profiler see its lines. No include guard. */

#define PAIRWISE REDUCE_CAT(REDUCE_CAT(PREFIX, pairwise_), T)
#define PAIRWISE_STRIDED REDUCE_CAT(REDUCE_CAT(PREFIX, pairwise_strided_), T)
#define SUM REDUCE_CAT(REDUCE_CAT(PREFIX, sum_), T)
#define SUM_OWN REDUCE_CAT(REDUCE_CAT(PREFIX, sum_own_), T)
#define SHORT_RUNS REDUCE_CAT(REDUCE_CAT(PREFIX, sum_short_runs_), T)
#define LANES_T REDUCE_CAT(T, _lanes)
/* An element as the sum reads it. */
#define READ(x) (SKIP_NAN && (x) != (x) ? (T)0 : (x))

/* NumPy's pairwise sum of the n contiguous elements at a: its blocks in
 * memory order (reduce_loops.c says why), then the tree. */
DLB_KERNEL_CLONES static T PAIRWISE(const T *a, int64_t n, dlb_pairwise_layout *cache) {
  T sums[2 * DLB_PAIRWISE_MAX_BLOCKS], res = 0; /* blocks, then joins */
  const dlb_pairwise_tree *lay;
  if (n < 8) {
    for (int64_t i = 0; i < n; i++) res += READ(a[i]);
    return res;
  }
  lay = layout_of(cache, n);
  for (int b = 0; b < lay->blocks; b++) {
    const T *p = a + lay->start[b];
    LANES_T r;
    memcpy(&r, p, sizeof r);
    LANES_READ(r);
    if (lay->length[b] == PAIRWISE_BLOCK) { /* every block of a whole run */
#pragma GCC unroll 16
      for (int i = 8; i < PAIRWISE_BLOCK; i += 8) LANES_ADD(r, p + i);
      BLOCK_END(T, r, p, PAIRWISE_BLOCK, PAIRWISE_BLOCK, sums[b]);
    } else { /* a shorter block: the same adds, unrolled under a guard so
              * that the lanes stay in registers (as a loop, GCC kept 8
              * doubles on the stack on AVX2: rows of 1,808 summed 3.5x
              * slower than whole runs) */
      const int whole = lay->length[b] - lay->length[b] % 8;
#pragma GCC unroll 16
      for (int i = 8; i < PAIRWISE_BLOCK; i += 8)
        if (i < whole) LANES_ADD(r, p + i);
      BLOCK_END(T, r, p, whole, lay->length[b], sums[b]);
    }
  }
  /* The tree: each join adds its halves, left + right as NumPy does (no
   * shared slot between joins, so independent ones overlap). */
  for (int k = 0; k < lay->joins; k++)
    sums[DLB_PAIRWISE_MAX_BLOCKS + k] = sums[lay->left[k]] + sums[lay->right[k]];
  return lay->joins ? sums[DLB_PAIRWISE_MAX_BLOCKS + lay->joins - 1] : sums[0];
}
/* NumPy's pairwise sum of n elements stride bytes apart, as written there. */
static T PAIRWISE_STRIDED(const char *a, int64_t n, int64_t stride) {
  if (n < 8) {
    T res = 0;
    for (int64_t i = 0; i < n; i++) res += READ(*(const T *)(a + i * stride));
    return res;
  }
  if (n <= PAIRWISE_BLOCK) {
    T r[8], res;
    int64_t i;
    for (int l = 0; l < 8; l++) r[l] = READ(*(const T *)(a + l * stride));
    for (i = 8; i < n - (n % 8); i += 8)
      for (int l = 0; l < 8; l++) r[l] += READ(*(const T *)(a + (i + l) * stride));
    res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; i++) res += READ(*(const T *)(a + i * stride));
    return res;
  }
  int64_t n2 = n / 2 - (n / 2) % 8;
  return PAIRWISE_STRIDED(a, n2, stride) + PAIRWISE_STRIDED(a + n2 * stride, n - n2, stride);
}
/* sum: runs of the inner dim pairwise, DLB_REDUCE_RUN at a time; rows added. */
static int SUM(char **data, const int64_t *steps, int64_t n, void *aux);
/* SUM without a layout cache: one of its own (12 KiB, kept off SUM's frame:
 * the short calls of short reduced runs paid for probing it). */
static __attribute__((noinline)) int SUM_OWN(char **data, const int64_t *steps, int64_t n) {
  dlb_pairwise_layout own;
  dlb_pairwise_layout_init(&own);
  return SUM(data, steps, n, &own);
}
DLB_KERNEL_CLONES static int SUM(char **data, const int64_t *steps, int64_t n, void *aux) {
  const int64_t sa = steps[0], sx = steps[1];
  if (sa == 0) {
    dlb_pairwise_layout *cache = (dlb_pairwise_layout *)aux;
    T acc = *(T *)data[0];
    if (!cache && n >= 8) return SUM_OWN(data, steps, n);
    for (int64_t i = 0; i < n; i += DLB_REDUCE_RUN) {
      int64_t m = n - i < DLB_REDUCE_RUN ? n - i : DLB_REDUCE_RUN;
      const char *run = data[1] + i * sx;
      acc += sx == (int64_t)sizeof(T) ? PAIRWISE((const T *)run, m, cache)
                                      : PAIRWISE_STRIDED(run, m, sx);
    }
    *(T *)data[0] = acc;
  } else if (sa == (int64_t)sizeof(T) && sx == (int64_t)sizeof(T)) {
    T *acc = (T *)data[0];
    const T *x = (const T *)data[1];
    for (int64_t i = 0; i < n; i++) acc[i] += READ(x[i]);
  } else {
    for (int64_t i = 0; i < n; i++)
      *(T *)(data[0] + i * sa) += READ(*(const T *)(data[1] + i * sx));
  }
  return 0;
}
/* The short runs of m < 8 (reduce_loops.h): each summed from 0, one
 * element after another, as PAIRWISE(_STRIDED) sums them, then added. */
DLB_KERNEL_CLONES static int SHORT_RUNS(char **data, const int64_t *steps, int64_t n, void *aux) {
  const dlb_short_runs *r = (const dlb_short_runs *)aux;
  const int64_t m = r->m, step = r->step, sa = steps[0], sx = steps[1];
  if (m == 2 && sa == (int64_t)sizeof(T)) { /* a 2x2 block's row: its own loop */
    T *acc = (T *)data[0];
    for (int64_t j = 0; j < n; j++) {
      const char *x = data[1] + j * sx;
      T res = 0;
      res += READ(*(const T *)x);
      res += READ(*(const T *)(x + step));
      acc[j] += res;
    }
    return 0;
  }
  for (int64_t j = 0; j < n; j++) {
    const char *x = data[1] + j * sx;
    T res = 0;
    for (int64_t i = 0; i < m; i++) res += READ(*(const T *)(x + i * step));
    *(T *)(data[0] + j * sa) += res;
  }
  return 0;
}

#undef PAIRWISE
#undef PAIRWISE_STRIDED
#undef SUM
#undef SUM_OWN
#undef SHORT_RUNS
#undef LANES_T
#undef READ
#undef T
#undef PREFIX
#undef SKIP_NAN
