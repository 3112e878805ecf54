/* reduce_arg_update.h -- a template: the kernel NAME(best, index, x) of
 * rows of argmin or argmax of elements T, UPDATES(b, v) whether v replaces
 * b (reduce_loops.h says what it does; reduce_loops.c has its instances).
 * reduce_arg.h #defines NAME, T and UPDATES and includes this file once per
 * instance; it #undefs NAME and UPDATES at its end, and reduce_arg.h T. A
 * file, not a macro, so that a debugger and a profiler see its lines. No
 * include guard. */

DLB_KERNEL_CLONES static int NAME(char **data, const int64_t *steps, int64_t n, void *aux) {
  const int64_t k = *(const int64_t *)aux;
  const int64_t sb = steps[0], si = steps[1], sx = steps[2];
  if (sb == (int64_t)sizeof(T) && si == 8 && sx == (int64_t)sizeof(T)) {
    T *best = (T *)data[0];
    int64_t *index = (int64_t *)data[1];
    const T *x = (const T *)data[2];
    for (int64_t i = 0; i < n; i++) {
      T b = best[i], v = x[i];
      int u = UPDATES(b, v);
      best[i] = u ? v : b;
      index[i] = u ? k : index[i];
    }
  } else {
    for (int64_t i = 0; i < n; i++) {
      T *b = (T *)(data[0] + i * sb), v = *(const T *)(data[2] + i * sx);
      if (UPDATES(*b, v)) {
        *b = v;
        *(int64_t *)(data[1] + i * si) = k;
      }
    }
  }
  return 0;
}

#undef NAME
#undef UPDATES
