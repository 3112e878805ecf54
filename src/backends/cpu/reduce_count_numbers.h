/* reduce_count_numbers.h -- a template: the fold kernel NAME(acc, x)
 * counting the elements of the real float dtype T that are not NaN into
 * int64 accumulators (nanmean's and nanvar's counts; reduce_loops.h). A
 * contiguous run into one accumulator counts in COUNT_LANES counters of
 * the integer type C, as wide as T (a comparison's mask then adds lane by
 * lane: GCC vectorises it, where int64 counters of float32 elements
 * widened each mask), summed every COUNT_BLOCK elements. reduce_loops.c
 * #defines NAME, T and C and includes this file once per instance; it
 * #undefs them at its end. No include guard. */

DLB_KERNEL_CLONES static int NAME(char **data, const int64_t *steps, int64_t n, void *aux) {
  const int64_t sa = steps[0], sx = steps[1];
  (void)aux;
  if (sa == 0 && sx == (int64_t)sizeof(T)) {
    const T *x = (const T *)data[1];
    int64_t total = 0, i = 0;
    while (i + COUNT_LANES <= n) {
      C c[COUNT_LANES] = {0};
      int64_t end = n - i < COUNT_BLOCK ? i + (n - i) / COUNT_LANES * COUNT_LANES : i + COUNT_BLOCK;
      for (; i < end; i += COUNT_LANES) {
        const T *y = x + i;
        for (int l = 0; l < COUNT_LANES; l++) c[l] += (C)(y[l] == y[l]);
      }
      for (int l = 0; l < COUNT_LANES; l++) total += (int64_t)c[l];
    }
    for (; i < n; i++) total += x[i] == x[i];
    *(int64_t *)data[0] += total;
    return 0;
  }
  for (int64_t i = 0; i < n; i++) {
    const T v = *(const T *)(data[1] + i * sx);
    *(int64_t *)(data[0] + i * sa) += v == v;
  }
  return 0;
}

#undef NAME
#undef T
#undef C
