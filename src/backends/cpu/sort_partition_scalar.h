/* sort_partition_scalar.h -- a template: the scalar partition NAME of KT
 * keys (sort.c says how, above its instances). sort.c #defines NAME and KT
 * and includes this file once per instance; it #undefs them at its end. No
 * include guard. */

static int64_t NAME(KT *a, int64_t n, KT pivot, int le, dlb_work *w) {
  int64_t i = 0, j = n - 1, since = 0;
  for (;;) {
    while (i <= j && (le ? a[i] <= pivot : a[i] < pivot)) i++, since++;
    while (i <= j && !(le ? a[j] <= pivot : a[j] < pivot)) j--, since++;
    if (i >= j) break;
    KT t = a[i];
    a[i++] = a[j], a[j--] = t;
    if ((since += 2) >= STRETCH) {
      if (dlb_work_tick(w, since)) return i;
      since = 0;
    }
  }
  dlb_work_tick(w, since);
  return i;
}

#undef NAME
#undef KT
