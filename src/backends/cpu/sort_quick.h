/* sort_quick.h -- a template: the quicksort NAME of KT keys, with the radix
 * sort RADIX_OF, the partition PARTITION and its scalar form SCALAR (sort.c
 * says how, above its instances). sort.c #defines them and includes this
 * file once per instance; it #undefs them at its end. A file, not a macro,
 * so that a debugger and a profiler see its lines. No include guard. */

#define HEAP SORT_CAT(NAME, _heap)

/* A heapsort of n keys in place, for runs without tmp where vqsort cannot
 * be used: O(n log n) in the worst case, counted as work as it goes. */
static void HEAP(KT *key, int64_t n, dlb_work *w) {
  int64_t moves = 0;
  for (int64_t end = n, start = n / 2; end > 1 && !stopped(w);) {
    KT v;
    int64_t at, child;
    if (start > 0) {
      v = key[--start];
    } else {
      v = key[--end];
      key[end] = key[0];
    }
    for (at = start; (child = 2 * at + 1) < end; at = child) {
      if (child + 1 < end && key[child + 1] > key[child]) child++;
      if (!(key[child] > v)) break;
      key[at] = key[child];
    }
    key[at] = v;
    if (++moves == STRETCH) {
      dlb_work_tick(w, moves);
      moves = 0;
    }
  }
  dlb_work_tick(w, moves);
}

/* tmp may be NULL (no scratch): runs too deep for the levels, or that
 * vqsort cannot take, are heapsorted in place instead of radix-sorted. */
static void NAME(KT *key, KT *tmp, int64_t n, KT lo, KT hi, int levels, int64_t *count,
                 dlb_work *w) {
  enum { SAMPLES = 63 };
  while (!stopped(w)) {
    KT sample[SAMPLES], pivot;
    int le, many;
    int64_t left;
    if (n <= VQSORT_PIECE_BYTES / (int64_t)sizeof(KT) || levels-- <= 0) {
      if (n <= VQSORT_PIECE_BYTES / (int64_t)sizeof(KT) && dlb_vqsort_keys(key, n, (int)sizeof(KT)))
        dlb_work_tick(w, n);
      else if (tmp) RADIX_OF(key, NULL, tmp, NULL, n, count, w);
      else HEAP(key, n, w);
      return;
    }
    if (lo == hi) return;               /* all one key */
    for (int s = 0; s < SAMPLES; s++) { /* sorted as they come (insertion) */
      KT v = key[n / SAMPLES * s + n / (2 * SAMPLES)];
      int t = s;
      for (; t > 0 && sample[t - 1] > v; t--) sample[t] = sample[t - 1];
      sample[t] = v;
    }
    pivot = sample[SAMPLES / 2];
    many = sample[SAMPLES / 2 - 1] == pivot || sample[SAMPLES / 2 + 1] == pivot;
    /* Keys equal to the pivot go left when it is the lowest key or a common one. */
    le = pivot != hi && (pivot == lo || many);
    left = PARTITION(key, n, pivot, le, w);
    if (stopped(w)) return;
    if (left == 0) { /* (le 0: no key is below the pivot) */
      lo = pivot;
      continue;
    }
    if (left == n) { /* (le 1: none is above it) */
      hi = pivot;
      continue;
    }
    {
      KT left_hi = le ? pivot : (KT)(pivot - 1), right_lo = le ? (KT)(pivot + 1) : pivot;
      if (left <= n - left) {
        NAME(key, tmp, left, lo, left_hi, levels, count, w);
        key += left, tmp = tmp ? tmp + left : NULL, n -= left, lo = right_lo;
      } else {
        NAME(key + left, tmp ? tmp + left : NULL, n - left, right_lo, hi, levels, count, w);
        n = left, hi = left_hi;
      }
    }
  }
}

#undef HEAP
#undef NAME
#undef KT
#undef RADIX_OF
#undef PARTITION
#undef SCALAR
