/* select_kth.h -- partial selection (NumPy's np.partition, C++'s
 * nth_element) over an array of one C type, for quantile.c.
 *
 * DLB_DEFINE_SELECT(name, T) defines, static, for a T with a strict weak
 * order under `<` (floats without NaN):
 *   name_nth(v, lo, hi, k): reorders v[lo, hi) so that v[k] holds the
 *     element of rank k - lo of that range, none before it larger, none
 *     after it smaller (lo <= k < hi);
 *   name_select(v, lo, hi, ranks, nranks): the same for every rank of the
 *     sorted list of distinct positions ranks[], each in [lo, hi).
 * introselect: quickselect (Floyd and Rivest's sampled pivot on long
 * ranges, a median of three with an unguarded partition on shorter ones),
 * insertion sort on short ranges, heapsort once the depth passes twice
 * log2 of the length (O(n) expected, O(n log n) at worst).
 */
#ifndef DLB_COMPUTE_SELECT_KTH_H
#define DLB_COMPUTE_SELECT_KTH_H

#include <math.h>
#include <stdint.h>

#define DLB_SELECT_SHORT 16   /* ranges this short are insertion-sorted */
#define DLB_SELECT_SAMPLE 600 /* ranges longer pick their pivot from a sample */

/* Floyd and Rivest's sample about rank k of [lo, hi): [*sub_lo, *sub_hi),
 * about n^(2/3) long, holds rank k of the range with high probability, so
 * that the element selected there at k is a pivot close to it. */
static inline void dlb_select_sample(int64_t lo, int64_t hi, int64_t k, int64_t *sub_lo,
                                     int64_t *sub_hi) {
  double n = (double)(hi - lo), i = (double)(k - lo + 1), z = log(n);
  double s = 0.5 * exp(2.0 * z / 3.0), sd = 0.5 * sqrt(z * s * (n - s) / n);
  double l = (double)k - i * s / n + (i < n / 2 ? -sd : sd);
  double h = (double)k + (n - i) * s / n + (i < n / 2 ? -sd : sd);
  *sub_lo = l > (double)lo ? (int64_t)l : lo;
  *sub_hi = h + 1 < (double)hi ? (int64_t)h + 1 : hi;
  if (*sub_lo > k) *sub_lo = k;
  if (*sub_hi <= k) *sub_hi = k + 1;
}

#define DLB_DEFINE_SELECT(name, T)                                                                 \
  static inline void name##_swap(T *v, int64_t i, int64_t j) {                                     \
    T t = v[i];                                                                                    \
    v[i] = v[j];                                                                                   \
    v[j] = t;                                                                                      \
  }                                                                                                \
                                                                                                   \
  static void name##_insertion(T *v, int64_t lo, int64_t hi) {                                     \
    for (int64_t i = lo + 1; i < hi; i++) {                                                        \
      T x = v[i];                                                                                  \
      int64_t j = i;                                                                               \
      for (; j > lo && x < v[j - 1]; j--) v[j] = v[j - 1];                                         \
      v[j] = x;                                                                                    \
    }                                                                                              \
  }                                                                                                \
                                                                                                   \
  /* Sifts h[i] down the max-heap h[0, n). */                                                      \
  static void name##_sift(T *h, int64_t i, int64_t n) {                                            \
    T x = h[i];                                                                                    \
    for (int64_t c; (c = 2 * i + 1) < n; i = c) {                                                  \
      if (c + 1 < n && h[c] < h[c + 1]) c++;                                                       \
      if (!(x < h[c])) break;                                                                      \
      h[i] = h[c];                                                                                 \
    }                                                                                              \
    h[i] = x;                                                                                      \
  }                                                                                                \
                                                                                                   \
  static void name##_heapsort(T *v, int64_t lo, int64_t hi) {                                      \
    T *h = v + lo;                                                                                 \
    int64_t n = hi - lo;                                                                           \
    for (int64_t i = n / 2; i-- > 0;) name##_sift(h, i, n);                                        \
    for (int64_t end = n - 1; end > 0; end--) {                                                    \
      name##_swap(h, 0, end);                                                                      \
      name##_sift(h, 0, end);                                                                      \
    }                                                                                              \
  }                                                                                                \
                                                                                                   \
  /* The extreme of v[lo, hi) into v[lo] (smallest) or v[hi - 1]. */                               \
  static void name##_extreme(T *v, int64_t lo, int64_t hi, int largest) {                          \
    int64_t best = largest ? hi - 1 : lo;                                                          \
    for (int64_t i = lo; i < hi; i++)                                                              \
      if (largest ? v[best] < v[i] : v[i] < v[best]) best = i;                                     \
    name##_swap(v, best, largest ? hi - 1 : lo);                                                   \
  }                                                                                                \
                                                                                                   \
  /* Partitions v[lo, hi) (hi - lo > DLB_SELECT_SHORT) about the median of  \
   * its first, middle and last elements: returns where that pivot ends. */                      \
  static int64_t name##_partition(T *v, int64_t lo, int64_t hi) {                                  \
    int64_t mid = lo + (hi - lo) / 2, i = lo + 1, j = hi - 1;                                      \
    T pivot;                                                                                       \
    if (v[hi - 1] < v[mid]) name##_swap(v, mid, hi - 1);                                           \
    if (v[hi - 1] < v[lo]) name##_swap(v, lo, hi - 1);                                             \
    if (v[lo] < v[mid]) name##_swap(v, lo, mid);                                                   \
    /* v[mid] <= v[lo] <= v[hi - 1]: the outer two stop the scans */                               \
    name##_swap(v, mid, lo + 1);                                                                   \
    pivot = v[lo];                                                                                 \
    for (;;) {                                                                                     \
      do i++;                                                                                      \
      while (v[i] < pivot);                                                                        \
      do j--;                                                                                      \
      while (pivot < v[j]);                                                                        \
      if (j < i) break;                                                                            \
      name##_swap(v, i, j);                                                                        \
    }                                                                                              \
    name##_swap(v, lo, j);                                                                         \
    return j;                                                                                      \
  }                                                                                                \
                                                                                                   \
  /* Partitions v[lo, hi) about the value at k (Floyd and Rivest's scheme):  \
   * returns where that value ends. */                     \
  static int64_t name##_partition_at(T *v, int64_t lo, int64_t hi, int64_t k) {                    \
    T pivot = v[k];                                                                                \
    int64_t i = lo, j = hi - 1;                                                                    \
    name##_swap(v, lo, k);                                                                         \
    if (pivot < v[hi - 1]) name##_swap(v, hi - 1, lo);                                             \
    while (i < j) {                                                                                \
      name##_swap(v, i, j);                                                                        \
      i++;                                                                                         \
      j--;                                                                                         \
      while (v[i] < pivot) i++;                                                                    \
      while (pivot < v[j]) j--;                                                                    \
    }                                                                                              \
    if (!(v[lo] < pivot) && !(pivot < v[lo])) {                                                    \
      name##_swap(v, lo, j);                                                                       \
    } else {                                                                                       \
      j++;                                                                                         \
      name##_swap(v, j, hi - 1);                                                                   \
    }                                                                                              \
    return j;                                                                                      \
  }                                                                                                \
                                                                                                   \
  static void name##_nth(T *v, int64_t lo, int64_t hi, int64_t k) {                                \
    int depth = 0;                                                                                 \
    for (int64_t n = hi - lo; n > 1; n >>= 1) depth += 2;                                          \
    while (hi - lo > DLB_SELECT_SHORT) {                                                           \
      int64_t p;                                                                                   \
      if (k == lo || k == hi - 1) {                                                                \
        name##_extreme(v, lo, hi, k != lo);                                                        \
        return;                                                                                    \
      }                                                                                            \
      if (depth-- == 0) {                                                                          \
        name##_heapsort(v, lo, hi);                                                                \
        return;                                                                                    \
      }                                                                                            \
      if (hi - lo > DLB_SELECT_SAMPLE) { /* a pivot close to rank k first */                       \
        int64_t sub_lo, sub_hi;                                                                    \
        dlb_select_sample(lo, hi, k, &sub_lo, &sub_hi);                                            \
        name##_nth(v, sub_lo, sub_hi, k);                                                          \
        p = name##_partition_at(v, lo, hi, k);                                                     \
      } else {                                                                                     \
        p = name##_partition(v, lo, hi);                                                           \
      }                                                                                            \
      if (p == k) return;                                                                          \
      if (p < k) lo = p + 1;                                                                       \
      else hi = p;                                                                                 \
    }                                                                                              \
    name##_insertion(v, lo, hi);                                                                   \
  }                                                                                                \
                                                                                                   \
  static void name##_select(T *v, int64_t lo, int64_t hi, const int64_t *ranks, int64_t nranks) {  \
    while (nranks > 0) {                                                                           \
      int64_t half = nranks / 2, k = ranks[half];                                                  \
      name##_nth(v, lo, hi, k);                                                                    \
      name##_select(v, lo, k, ranks, half); /* the smaller ranks, left of k */                     \
      lo = k + 1;                                                                                  \
      ranks += half + 1;                                                                           \
      nranks -= half + 1;                                                                          \
    }                                                                                              \
  }

#endif
