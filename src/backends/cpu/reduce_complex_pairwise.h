/* reduce_complex_pairwise.h -- a template: NumPy's pairwise sum
 * pairwise_C of complex numbers C of parts T, and the fold kernel sum_C
 * (reduce_loops.c says how, above its instances). reduce_loops.c #defines
 * T and C and includes this file once per instance; it #undefs them at its
 * end. A file, not a macro, so that a debugger and a profiler see its
 * lines. No include guard. */

#define PAIRWISE REDUCE_CAT(pairwise_, C)
#define SUM REDUCE_CAT(sum_, C)

static void PAIRWISE(const char *a, int64_t n, int64_t stride, T *rr, T *ri) {
  if (n < 8) {
    *rr = 0;
    *ri = 0;
    for (int64_t i = 0; i < n; i += 2) {
      *rr += *(const T *)(a + i * stride);
      *ri += *(const T *)(a + i * stride + sizeof(T));
    }
    return;
  }
  if (n <= 128) {
    T r[8];
    int64_t i;
    for (int l = 0; l < 8; l += 2) {
      r[l] = *(const T *)(a + l * stride);
      r[l + 1] = *(const T *)(a + l * stride + sizeof(T));
    }
    for (i = 8; i < n - (n % 8); i += 8)
      for (int l = 0; l < 8; l += 2) {
        r[l] += *(const T *)(a + (i + l) * stride);
        r[l + 1] += *(const T *)(a + (i + l) * stride + sizeof(T));
      }
    *rr = (r[0] + r[2]) + (r[4] + r[6]);
    *ri = (r[1] + r[3]) + (r[5] + r[7]);
    for (; i < n; i += 2) {
      *rr += *(const T *)(a + i * stride);
      *ri += *(const T *)(a + i * stride + sizeof(T));
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
    acc->re += x->re;
    acc->im += x->im;
  }
  return 0;
}

#undef PAIRWISE
#undef SUM
#undef T
#undef C
