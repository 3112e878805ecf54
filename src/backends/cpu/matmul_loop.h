/* matmul_loop.h -- a template: the plain product loop NAME of elements T,
 * formed in W through U (matmul.c says what each is, above its instances).
 * matmul.c #defines NAME, T, U and W and includes this file once per instance;
 * it #undefs them at its end. A file, not a macro, so that a debugger and a
 * profiler see its lines. No include guard. */

DLB_KERNEL_CLONES static void NAME(char *c, int64_t crs, const char *a, int64_t ars, int64_t acs,
                                   const char *b, int64_t brs, int64_t m, int64_t n, int64_t k,
                                   int accumulate) {
  const int64_t block_n = BLOCK_ROW_BYTES / (int64_t)sizeof(T);
  if (!accumulate) zero_rows(c, crs, m, n, sizeof(T));
  for (int64_t j0 = 0; j0 < n; j0 += block_n) {
    int64_t jn = n - j0 < block_n ? n - j0 : block_n;
    for (int64_t k0 = 0; k0 < k; k0 += BLOCK_K) {
      int64_t k1 = k - k0 < BLOCK_K ? k : k0 + BLOCK_K;
      for (int64_t i = 0; i < m; i++) {
        U *restrict ci = (U *)(c + i * crs) + j0;
        for (int64_t p = k0; p < k1; p++) {
          const W aip = (W)(U)(*(const T *)(a + i * ars + p * acs));
          const U *restrict bp = (const U *)(b + p * brs) + j0;
          for (int64_t j = 0; j < jn; j++) ci[j] = (U)(ci[j] + aip * (W)bp[j]);
        }
      }
    }
  }
}

#undef NAME
#undef T
#undef U
#undef W
