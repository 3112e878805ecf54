/* scan_complex.h -- a template: the complex scan NAME over parts of type T
 * (scan.c says how, above its instances). scan.c #defines NAME and T and
 * includes this file once per instance; it #undefs them at its end. A file, not
 * a macro, so that a debugger and a profiler see its lines. No include guard. */

static void NAME(int prod, char *p, int64_t stride, int64_t n) {
  T acc[2];
  memcpy(acc, p, sizeof acc);
  for (int64_t i = 1; i < n; i++) {
    T x[2];
    memcpy(x, p + i * stride, sizeof x);
    if (prod) {
      T re = acc[0] * x[0] - acc[1] * x[1];
      T im = acc[0] * x[1] + acc[1] * x[0];
      acc[0] = re, acc[1] = im;
    } else {
      acc[0] += x[0], acc[1] += x[1];
    }
    memcpy(p + i * stride, acc, sizeof acc);
  }
}

#undef NAME
#undef T
