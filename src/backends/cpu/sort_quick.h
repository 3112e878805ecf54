/* sort_quick.h -- a template: the quicksort NAME of KT keys, with the radix
 * sort RADIX_OF, the partition PARTITION and its scalar form SCALAR (sort.c
 * says how, above its instances). sort.c #defines them and includes this
 * file once per instance; it #undefs them at its end. A file, not a macro,
 * so that a debugger and a profiler see its lines. No include guard. */

#define HEAP SORT_CAT(NAME, _heap)
#define SPLIT SORT_CAT(NAME, _split)

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

static void NAME(KT *key, KT *tmp, int64_t n, KT lo, KT hi, int levels, int64_t *count,
                 dlb_work *w);

/* A run longer than a piece, with scratch: scattered through tmp into
 * buckets of ranges of keys, each bucket then sorted by NAME. The keys'
 * digit is the top SPLIT_BITS of the bits in which they differ (least to
 * most); a bucket is a run of digits within one coarse digit (its top 8
 * bits), cut further where a sample of the keys crowds, so that keys bunched
 * in a few digits (floats of one exponent) still fill many buckets. A
 * bucket's keys then share 8 more bits: no key goes through more than
 * sizeof(KT) levels, whatever the keys. Passes: the least and most key, the
 * counts, the scatter, the copy back. count lends the level its tables
 * (SPLIT_SCRATCH bytes), free again before any bucket is sorted. */
static void SPLIT(KT *key, KT *tmp, int64_t n, int levels, int64_t *count, dlb_work *w) {
  uint32_t *seen = (uint32_t *)count;                      /* sampled keys a digit */
  uint16_t *bucket_of = (uint16_t *)(seen + SPLIT_DIGITS); /* a digit's bucket */
  int64_t *next = (int64_t *)(bucket_of + SPLIT_DIGITS);   /* the scatter's places */
  int64_t start[SPLIT_BUCKETS + 1] = {0};                  /* bucket b: [start[b], start[b + 1]) */
  uint32_t first_digit[SPLIT_BUCKETS + 1];
  KT least = key[0], most = key[0], base;
  int shift, bits, wide, buckets = 0, exact;
  for (int64_t i0 = 0, i1; i0 < n; i0 = i1) {
    i1 = stretch_end(i0, n);
    for (int64_t i = i0; i < i1; i++) {
      least = key[i] < least ? key[i] : least;
      most = key[i] > most ? key[i] : most;
    }
    if (dlb_work_tick(w, i1 - i0)) return;
  }
  if (least == most) return; /* all one key */
  bits = 64 - __builtin_clzll((uint64_t)(least ^ most));
  wide = bits < SPLIT_BITS ? bits : SPLIT_BITS;
  shift = bits - wide;
  base = least >> shift;                /* a key's digit: (key >> shift) - base, below 2^wide */
  exact = (1 << wide) <= SPLIT_BUCKETS; /* a bucket a digit, a key a digit */
  if (exact) {
    for (int d = 0; d < 1 << wide; d++) bucket_of[d] = (uint16_t)d, first_digit[d] = (uint32_t)d;
    buckets = 1 << wide;
  } else {
    const int coarse = wide - 8;
    int64_t crowd = 0;
    memset(seen, 0, sizeof(uint32_t) << wide);
    for (int64_t s = 0; s < SPLIT_SAMPLE; s++)
      seen[(key[s * (n / SPLIT_SAMPLE)] >> shift) - base]++;
    for (int d = 0; d < 1 << wide; d++) {
      /* a new bucket at each coarse digit, and after SPLIT_CROWD sampled keys */
      if (d == 0 || (d >> coarse) != ((d - 1) >> coarse) || crowd >= SPLIT_CROWD) {
        first_digit[buckets++] = (uint32_t)d;
        crowd = 0;
      }
      bucket_of[d] = (uint16_t)(buckets - 1);
      crowd += seen[d];
    }
  }
  first_digit[buckets] = (uint32_t)1 << wide;
  for (int64_t i0 = 0, i1; i0 < n; i0 = i1) {
    i1 = stretch_end(i0, n);
    for (int64_t i = i0; i < i1; i++) start[bucket_of[(key[i] >> shift) - base] + 1]++;
    if (dlb_work_tick(w, i1 - i0)) return;
  }
  for (int b = 0; b < buckets; b++) start[b + 1] += start[b];
  /* Each bucket fills from a place of its own within its first 64 lines,
   * round to its start: buckets of equal sizes (keys of evenly spread
   * values) would otherwise write at addresses a multiple of 4 KiB apart,
   * in one set of the cache (x:sort() of 1e7 float32 of 1e5 values: 101
   * ms, 73 rounded). Its keys' order does not matter: a bucket is sorted
   * next. */
  for (int b = 0; b < buckets; b++) {
    int64_t m = start[b + 1] - start[b], from = (int64_t)((b * 37) & 63) * (64 / (int)sizeof(KT));
    next[b] = start[b] + (m > 0 ? from % m : 0);
  }
  for (int64_t i0 = 0, i1; i0 < n; i0 = i1) {
    i1 = stretch_end(i0, n);
    for (int64_t i = i0; i < i1; i++) {
      int b = bucket_of[(key[i] >> shift) - base];
      int64_t at = next[b]++;
      if (at == start[b + 1]) at = start[b], next[b] = start[b] + 1; /* round to its start */
      tmp[at] = key[i];
    }
    if (dlb_work_tick(w, i1 - i0)) return;
  }
  if (!copy_counted(key, tmp, n, sizeof(KT), w) || exact) return;
  for (int b = 0; b < buckets && !stopped(w); b++) {
    int64_t m = start[b + 1] - start[b];
    KT lo = (KT)((base + first_digit[b]) << shift);
    KT hi = (KT)(((base + first_digit[b + 1]) << shift) - 1);
    if (m > 1) NAME(key + start[b], tmp + start[b], m, lo, hi, levels, count, w);
  }
}

/* tmp may be NULL (no scratch): runs too deep for the levels, or that
 * vqsort cannot take, are heapsorted in place instead of radix-sorted.
 * With tmp, a run longer than a piece is split by its top digit (SPLIT),
 * without it partitioned around a pivot. */
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
    if (lo == hi) return; /* all one key */
    if (tmp) {
      SPLIT(key, tmp, n, levels, count, w);
      return;
    }
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
#undef SPLIT
#undef NAME
#undef KT
#undef RADIX_OF
#undef PARTITION
#undef SCALAR
