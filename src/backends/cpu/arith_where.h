/* arith_where.h -- a template: the kernel NAME of where(cond, x, y) over
 * elements of type T, which it moves whole (loops_arith.c has one per
 * element size). loops_arith.c #defines NAME and T and includes this file
 * once per instance; it #undefs them at its end. A file, not a macro, so
 * that a debugger and a profiler see its lines. No include guard. */

DLB_KERNEL_CLONES static int NAME(char **data, const int64_t *steps, int64_t n, void *aux) {
  char *po = data[0], *pc = data[1], *px = data[2], *py = data[3];
  (void)aux;
  if (steps[0] == sizeof(T) && steps[1] == 1 && steps[2] == sizeof(T) && steps[3] == sizeof(T)) {
    T *o = (T *)po;
    const dlb_bool8 *c = (const dlb_bool8 *)pc;
    const T *x = (const T *)px, *y = (const T *)py;
    for (int64_t i = 0; i < n; i++) o[i] = c[i] ? x[i] : y[i];
  } else {
    for (int64_t i = 0; i < n; i++, po += steps[0], pc += steps[1], px += steps[2], py += steps[3])
      *(T *)po = *(const dlb_bool8 *)pc ? *(const T *)px : *(const T *)py;
  }
  return 0;
}

#undef NAME
#undef T
