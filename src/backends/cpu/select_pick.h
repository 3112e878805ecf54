/* select_pick.h -- a template: the pick NAME of elements of type T (select.c
 * says how, above its instances). select.c #defines NAME and T and includes
 * this file once per instance; it #undefs them at its end. A file, not a macro,
 * so that a debugger and a profiler see its lines. No include guard. */

static int64_t NAME(int assign, char *data, int64_t ds, const char *mask, int64_t ms, char *packed,
                    int64_t ps, int64_t n) {
  int64_t j = 0;
  if (!assign && ds == (int64_t)sizeof(T) && ms == 1 && ps == (int64_t)sizeof(T)) {
    const T *src = (const T *)data;
    T *dst = (T *)packed;
    for (int64_t i = 0; i < n; i++) {
      if (mask[i]) dst[j++] = src[i];
    }
    return j;
  }
  for (int64_t i = 0; i < n; i++) {
    if (!mask[i * ms]) continue;
    if (assign) memcpy(data + i * ds, packed + j * ps, sizeof(T));
    else memcpy(packed + j * ps, data + i * ds, sizeof(T));
    j++;
  }
  return j;
}

#undef NAME
#undef T
