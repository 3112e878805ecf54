/* reduce_complex_pairwise.h -- a template: NumPy's pairwise sum
 * PREFIXpairwise_C of complex numbers C of parts T, and the fold kernel
 * PREFIXsum_C (reduce_loops.c says how, above its instances). SKIP_NAN 1
 * (PREFIX nan) reads a number with a NaN part as 0 (nansum), 0 (PREFIX
 * empty) reads numbers as they are. reduce_loops.c #defines T, C, PREFIX
 * and SKIP_NAN and includes this file once per instance; it #undefs them
 * at its end. A file, not a macro, so that a debugger and a profiler see its
 * lines. No include guard. */

#define PAIRWISE REDUCE_CAT(REDUCE_CAT(PREFIX, pairwise_), C)
#define SUM REDUCE_CAT(REDUCE_CAT(PREFIX, sum_), C)
/* Part k (0 real, 1 imaginary) of the number at p as the sum reads it. */
#define PART(p, k)                                                                                 \
  (SKIP_NAN && !(((const T *)(p))[0] == ((const T *)(p))[0] &&                                     \
                 ((const T *)(p))[1] == ((const T *)(p))[1])                                       \
       ? (T)0                                                                                      \
       : ((const T *)(p))[k])

static void PAIRWISE(const char *a, int64_t n, int64_t stride, T *rr, T *ri) {
  if (n < 8) {
    *rr = 0;
    *ri = 0;
    for (int64_t i = 0; i < n; i += 2) {
      *rr += PART(a + i * stride, 0);
      *ri += PART(a + i * stride, 1);
    }
    return;
  }
  if (n <= 128) {
    T r[8];
    int64_t i;
    for (int l = 0; l < 8; l += 2) {
      r[l] = PART(a + l * stride, 0);
      r[l + 1] = PART(a + l * stride, 1);
    }
    for (i = 8; i < n - (n % 8); i += 8)
      for (int l = 0; l < 8; l += 2) {
        r[l] += PART(a + (i + l) * stride, 0);
        r[l + 1] += PART(a + (i + l) * stride, 1);
      }
    *rr = (r[0] + r[2]) + (r[4] + r[6]);
    *ri = (r[1] + r[3]) + (r[5] + r[7]);
    for (; i < n; i += 2) {
      *rr += PART(a + i * stride, 0);
      *ri += PART(a + i * stride, 1);
    }
    return;
  }
  T rr1, ri1, rr2, ri2;
  int64_t n2 = n / 2 - (n / 2) % 8;
  PAIRWISE(a, n2, stride, &rr1, &ri1);
  PAIRWISE(a + n2 * stride, n - n2, stride, &rr2, &ri2);
  *rr = rr1 + rr2;
  *ri = ri1 + ri2;
}
static int SUM(char **data, const int64_t *steps, int64_t n, void *aux) {
  const int64_t sa = steps[0], sx = steps[1];
  (void)aux;
  if (sa == 0) {
    C *acc = (C *)data[0];
    for (int64_t i = 0; i < n; i += DLB_REDUCE_RUN) {
      int64_t m = n - i < DLB_REDUCE_RUN ? n - i : DLB_REDUCE_RUN;
      T rr, ri;
      PAIRWISE(data[1] + i * sx, 2 * m, sx / 2, &rr, &ri);
      acc->re += rr;
      acc->im += ri;
    }
    return 0;
  }
  for (int64_t i = 0; i < n; i++) {
    C *acc = (C *)(data[0] + i * sa);
    const C *x = (const C *)(data[1] + i * sx);
    acc->re += PART(x, 0);
    acc->im += PART(x, 1);
  }
  return 0;
}

#undef PAIRWISE
#undef SUM
#undef PART
#undef T
#undef C
#undef PREFIX
#undef SKIP_NAN
