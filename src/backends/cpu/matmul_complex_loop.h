/* matmul_complex_loop.h -- a template: the plain complex product loop NAME over
 * parts of type T (matmul.c says how, above its instances). matmul.c #defines
 * NAME and T and includes this file once per instance; it #undefs them at its
 * end. A file, not a macro, so that a debugger and a profiler see its lines. No
 * include guard. */

static void NAME(char *c, int64_t crs, const char *a, int64_t ars, int64_t acs, const char *b,
                 int64_t brs, int64_t m, int64_t n, int64_t k, int accumulate) {
  if (!accumulate) zero_rows(c, crs, m, n, 2 * sizeof(R));
  for (int64_t i = 0; i < m; i++) {
    R *restrict ci = (R *)(c + i * crs);
    for (int64_t p = 0; p < k; p++) {
      const R *aip = (const R *)(a + i * ars + p * acs), ar = aip[0], ai = aip[1];
      const R *restrict bp = (const R *)(b + p * brs);
      for (int64_t j = 0; j < n; j++) {
        ci[2 * j] += ar * bp[2 * j] - ai * bp[2 * j + 1];
        ci[2 * j + 1] += ar * bp[2 * j + 1] + ai * bp[2 * j];
      }
    }
  }
}

#undef NAME
#undef R
