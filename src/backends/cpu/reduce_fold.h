/* reduce_fold.h -- a template: the fold kernel NAME(acc, x) of inputs TI
 * into accumulators TA, INIT(x) the accumulator of one input, FOLD(a, x) a
 * with x folded in, COMBINE(a, b) two accumulators as one, LANED whether a
 * contiguous reduce-to-one run goes through LANES accumulators
 * (reduce_loops.c says why, above its instances). reduce_loops.c and the
 * templates reduce_fold_integer.h, reduce_fold_float.h and
 * reduce_fold_truth.h #define NAME, TA, TI, INIT, FOLD, COMBINE and LANED
 * and include this file once per instance; it #undefs them at its end. A
 * file, not a macro, so that a debugger and a profiler see its lines. No
 * include guard. */

DLB_KERNEL_CLONES static int NAME(char **data, const int64_t *steps, int64_t n, void *aux) {
  char *pa = data[0];
  const char *px = data[1];
  const int64_t sa = steps[0], sx = steps[1];
  int64_t i = 0;
  (void)aux;
  if (sa == 0) {
    TA a = *(TA *)pa;
    if (LANED && sx == (int64_t)sizeof(TI) && n >= 2 * LANES) {
      const TI *x = (const TI *)px;
      TA m[LANES];
      for (int l = 0; l < LANES; l++) m[l] = INIT(x[l]);
      const TI *y0;
      for (i = LANES; i + LANES <= n; i += LANES) {
        const TI *y = x + i;
        for (int l = 0; l < LANES; l++) m[l] = FOLD(m[l], y[l]);
      }
      y0 = x + i; /* the rest, fewer than LANES, into the first lanes */
      for (int l = 0; i + l < n; l++) m[l] = FOLD(m[l], y0[l]);
      i = n;
      for (int w = LANES / 2; w > 0; w /= 2) /* halves folded together: vectorised too */
        for (int l = 0; l < w; l++) m[l] = COMBINE(m[l], m[l + w]);
      a = COMBINE(a, m[0]);
    }
    for (; i < n; i++) a = FOLD(a, *(const TI *)(px + i * sx));
    *(TA *)pa = a;
  } else if (sa == (int64_t)sizeof(TA) && sx == (int64_t)sizeof(TI)) {
    TA *acc = (TA *)pa;
    const TI *x = (const TI *)px;
    for (i = 0; i < n; i++) acc[i] = FOLD(acc[i], x[i]);
  } else {
    for (i = 0; i < n; i++) {
      TA *acc = (TA *)(pa + i * sa);
      *acc = FOLD(*acc, *(const TI *)(px + i * sx));
    }
  }
  return 0;
}

#undef NAME
#undef TA
#undef TI
#undef INIT
#undef FOLD
#undef COMBINE
#undef LANED
