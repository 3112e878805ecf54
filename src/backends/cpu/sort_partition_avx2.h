/* sort_partition_avx2.h -- a template: the AVX2 partition NAME of KT keys,
 * LANES a vector, compared as signed after flipping the sign bit (CMPGT,
 * SET1), the mask of a comparison by MASK, the lookup table LUT, SCALAR for
 * short runs (sort.c says how, above its instances). sort.c #defines them
 * and includes this file once per instance; it #undefs them at its end. A
 * file, not a macro, so that a debugger and a profiler see its lines. No
 * include guard. */

__attribute__((target("avx2"))) static int64_t NAME(KT *a, int64_t n, KT pivot, int le,
                                                    dlb_work *w) {
  const __m256i flip = SET1((KT)1 << (sizeof(KT) * 8 - 1));
  const __m256i pv = _mm256_xor_si256(SET1(pivot), flip);
  int64_t lw = 0, rw = n, lr = LANES, rr = n - LANES, steps = 0;
  KT rest[3 * LANES];
  int nr = 0;
  __m256i first, last;
  if (n < 4 * LANES) return SCALAR(a, n, pivot, le, w);
  first = _mm256_loadu_si256((const __m256i *)(const void *)a);
  last = _mm256_loadu_si256((const __m256i *)(const void *)(a + n - LANES));
  while (rr - lr >= LANES) {
    __m256i v, x, c;
    int m, cl;
    if (lr - lw <= rw - rr) {
      v = _mm256_loadu_si256((const __m256i *)(const void *)(a + lr));
      lr += LANES;
    } else {
      rr -= LANES;
      v = _mm256_loadu_si256((const __m256i *)(const void *)(a + rr));
    }
    x = _mm256_xor_si256(v, flip);
    c = le ? CMPGT(x, pv) : CMPGT(pv, x); /* le: after the pivot; else: before it */
    m = MASK(c);
    if (le) m = ~m & ((1 << LANES) - 1);
    cl = __builtin_popcount((unsigned)m);
    _mm256_storeu_si256(
        (__m256i *)(void *)(a + lw),
        _mm256_permutevar8x32_epi32(v, _mm256_load_si256((const __m256i *)LUT[m][0])));
    _mm256_storeu_si256(
        (__m256i *)(void *)(a + rw - LANES),
        _mm256_permutevar8x32_epi32(v, _mm256_load_si256((const __m256i *)LUT[m][1])));
    lw += cl, rw -= LANES - cl;
    if ((++steps & 8191) == 0 && dlb_work_tick(w, 8192 * LANES)) return lw;
  }
  for (int64_t i = lr; i < rr; i++) rest[nr++] = a[i];
  _mm256_storeu_si256((__m256i *)(void *)(rest + nr), first);
  _mm256_storeu_si256((__m256i *)(void *)(rest + nr + LANES), last);
  nr += 2 * LANES;
  for (int i = 0; i < nr; i++) { /* into [lw, rw): exactly their room */
    KT k = rest[i];
    if (le ? k <= pivot : k < pivot) a[lw++] = k;
    else a[--rw] = k;
  }
  dlb_work_tick(w, (steps & 8191) * LANES + nr);
  return lw;
}

#undef NAME
#undef KT
#undef LANES
#undef LUT
#undef CMPGT
#undef SET1
#undef MASK
#undef SCALAR
