/* arith_clip.h -- a template: the kernel NAME of clip(a, lo, hi) =
 * MIN(MAX(a, lo), hi) over elements of type T; the common case, a
 * contiguous with scalar bounds, vectorises. loops_arith.c #defines NAME,
 * T, MAX and MIN (macros of two T values) and includes this file once per
 * instance; it #undefs them at its end. A file, not a macro, so that a
 * debugger and a profiler see its lines. No include guard. */

DLB_KERNEL_CLONES static int NAME(char **data, const int64_t *steps, int64_t n, void *aux) {
  char *po = data[0], *pa = data[1], *pl = data[2], *ph = data[3];
  (void)aux;
  if (steps[0] == sizeof(T) && steps[1] == sizeof(T) && steps[2] == 0 && steps[3] == 0) {
    T *o = (T *)po;
    const T *x = (const T *)pa, lo = *(const T *)pl, hi = *(const T *)ph;
    for (int64_t i = 0; i < n; i++) {
      const T m = MAX(x[i], lo);
      o[i] = MIN(m, hi);
    }
  } else {
    for (int64_t i = 0; i < n;
         i++, po += steps[0], pa += steps[1], pl += steps[2], ph += steps[3]) {
      const T m = MAX(*(const T *)pa, *(const T *)pl);
      *(T *)po = MIN(m, *(const T *)ph);
    }
  }
  return 0;
}

#undef NAME
#undef T
#undef MAX
#undef MIN
