/* sort_radix.h -- a template: the sorts NAME_insertion, NAME_lsd, NAME_msd and NAME
 * of KT keys with PT positions, BITS bits a digit (sort.c says how they
 * work, above their instances). sort.c #defines NAME, KT, PT and BITS and
 * includes this file once per instance; it #undefs them at its end. A
 * file, not a macro, so that a debugger and a profiler see its lines. No
 * include guard. */

#define INSERTION SORT_CAT(NAME, _insertion)
#define LSD SORT_CAT(NAME, _lsd)
#define MSD SORT_CAT(NAME, _msd)

/* The n keys (and positions) in order by an insertion sort: a key moves
 * past greater ones only, so equal keys keep their order. Every bit takes
 * part; where LSD sorts by the low bits, the keys share the others. */
static void INSERTION(KT *key, PT *pay, int64_t n) {
  for (int64_t i = 1; i < n; i++) {
    KT k = key[i];
    PT p = pay ? pay[i] : 0;
    int64_t j = i;
    for (; j > 0 && key[j - 1] > k; j--) {
      key[j] = key[j - 1];
      if (pay) pay[j] = pay[j - 1];
    }
    key[j] = k;
    if (pay) pay[j] = p;
  }
}
static void LSD(KT *key, PT *pay, KT *tk, PT *tp, int64_t n, int bits, int64_t *count,
                dlb_work *w) {
  enum { RADIX = 1 << BITS };
  const int passes = (bits + BITS - 1) / BITS;
  KT *src = key, *dst = tk;
  PT *ps = pay, *pd = tp;
  if (n < 2 || n <= 2 * passes * RADIX / n) { /* n^2 <= 2 passes RADIX, unoverflowed: sort.c */
    INSERTION(key, pay, n);
    dlb_work_tick(w, n);
    return;
  }
  memset(count, 0, sizeof(int64_t) * RADIX * (size_t)passes);
  for (int64_t i0 = 0, i1; i0 < n; i0 = i1) {
    i1 = stretch_end(i0, n);
    for (int64_t i = i0; i < i1; i++) {
      KT k = key[i];
      for (int b = 0; b < passes; b++) count[b * RADIX + ((k >> (BITS * b)) & (RADIX - 1))]++;
    }
    if (dlb_work_tick(w, i1 - i0)) return;
  }
  for (int b = 0; b < passes; b++) {
    int64_t *offset = count + b * RADIX, sum = 0;
    int shared = 0;
    const int shift = BITS * b;
    for (int d = 0; d < RADIX; d++) {
      int64_t c = offset[d];
      if (c == n) shared = 1;
      offset[d] = sum;
      sum += c;
    }
    if (shared) continue;
    for (int64_t i0 = 0, i1; i0 < n; i0 = i1) {
      i1 = stretch_end(i0, n);
      if (pay) {
        for (int64_t i = i0; i < i1; i++) {
          int64_t at = offset[(src[i] >> shift) & (RADIX - 1)]++;
          dst[at] = src[i];
          pd[at] = ps[i];
        }
      } else {
        for (int64_t i = i0; i < i1; i++) {
          KT k = src[i];
          dst[offset[(k >> shift) & (RADIX - 1)]++] = k;
        }
      }
      if (dlb_work_tick(w, i1 - i0)) return;
    }
    KT *t = src;
    src = dst, dst = t;
    PT *u = ps;
    ps = pd, pd = u;
  }
  if (src != key) {
    if (!copy_counted(key, src, n, sizeof(KT), w)) return;
    if (pay) copy_counted(pay, ps, n, sizeof(PT), w);
  }
}
/* By the low `bits` bits: scattered by the top digit first while the keys
 * would not fit a cache, each bucket then sorted the same way (its digit
 * counts one level further into count). */
static void MSD(KT *key, PT *pay, KT *tk, PT *tp, int64_t n, int bits, int level, int64_t *count,
                dlb_work *w) {
  enum { RADIX = 1 << RADIX_MSD_BITS };
  int64_t *offset = count + RADIX_LSD_LEVELS * 2048 + level * RADIX, sum = 0;
  int shift = bits - RADIX_MSD_BITS;
  if (n <= RADIX_SPLIT || bits <= 2 * BITS || level >= RADIX_MSD_LEVELS) {
    LSD(key, pay, tk, tp, n, bits, count, w);
    return;
  }
  memset(offset, 0, sizeof(int64_t) * RADIX);
  for (int64_t i0 = 0, i1; i0 < n; i0 = i1) {
    i1 = stretch_end(i0, n);
    for (int64_t i = i0; i < i1; i++) offset[(key[i] >> shift) & (RADIX - 1)]++;
    if (dlb_work_tick(w, i1 - i0)) return;
  }
  for (int d = 0; d < RADIX; d++) {
    int64_t c = offset[d];
    offset[d] = sum;
    sum += c;
  }
  for (int64_t i0 = 0, i1; i0 < n; i0 = i1) {
    i1 = stretch_end(i0, n);
    for (int64_t i = i0; i < i1; i++) {
      int64_t at = offset[(key[i] >> shift) & (RADIX - 1)]++;
      tk[at] = key[i];
      if (pay) tp[at] = pay[i];
    }
    if (dlb_work_tick(w, i1 - i0)) return;
  }
  for (int64_t d = 0, lo = 0; d < RADIX; d++) { /* offset[d]: the end of bucket d */
    int64_t hi = offset[d], m = hi - lo;
    if (m > 1)
      MSD(tk + lo, pay ? tp + lo : NULL, key + lo, pay ? pay + lo : NULL, m, shift, level + 1,
          count, w);
    if (stopped(w) || !copy_counted(key + lo, tk + lo, m, sizeof(KT), w)) return;
    if (pay && !copy_counted(pay + lo, tp + lo, m, sizeof(PT), w)) return;
    lo = hi;
  }
}
static void NAME(KT *key, PT *pay, KT *tk, PT *tp, int64_t n, int64_t *count, dlb_work *w) {
  KT all_and = (KT) ~(KT)0, all_or = 0;
  for (int64_t i0 = 0, i1; i0 < n; i0 = i1) {
    i1 = stretch_end(i0, n);
    for (int64_t i = i0; i < i1; i++) all_and &= key[i], all_or |= key[i];
    if (dlb_work_tick(w, i1 - i0)) return;
  }
  if (all_and == all_or) return; /* all equal (or none) */
  MSD(key, pay, tk, tp, n, 64 - __builtin_clzll((uint64_t)(all_and ^ all_or)), 0, count, w);
}

#undef INSERTION
#undef LSD
#undef MSD
#undef NAME
#undef KT
#undef PT
#undef BITS
