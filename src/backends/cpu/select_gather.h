/* select_gather.h -- a template: the gather NAME of elements of type T
 * (select.c says how, above its instances). select.c #defines NAME and T and
 * includes this file once per instance; it #undefs them at its end. A file, not
 * a macro, so that a debugger and a profiler see its lines. No include guard. */

static int NAME(const take_walk *w, char *const *at, int64_t base, int64_t *bad) {
  const int64_t m = w->m, n = w->n, is = w->step_index, ds = w->step_data;
  const int64_t es = w->step_elements;
  const char *index = at[1], *data = at[2];
  char *out = at[0];
  for (int64_t j = 0; j < m; j++) {
    int64_t i, r;
    T v;
    memcpy(&i, index + j * is, 8);
    if ((uint64_t)i - (uint64_t)base < (uint64_t)n) r = i - base;
    else if ((r = dlb_cpu_resolve_index(i, n, base)) < 0) {
      *bad = i;
      return 1;
    }
    memcpy(&v, data + r * ds, sizeof v);
    memcpy(out + j * es, &v, sizeof v);
  }
  return 0;
}

#undef NAME
#undef T
