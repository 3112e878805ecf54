/* test_sort_in_place.c -- the sort of 64-bit keys in place without scratch
 * (backends/cpu/sort.c, dlb_cpu_sort_in_place64; argsort's packed words go
 * through it) against qsort: random, sorted, reversed, all-equal, few
 * distinct and organ-pipe keys, lengths around vqsort's pieces, with the
 * quicksort's levels capped at 0..3 so that the heapsort that takes runs
 * too deep for them (no tmp to radix-sort through) does part or all of the
 * work. Stopped work leaves the keys a permutation of what they were.
 * Also: the choice between vqsort and the radix sort for long lanes,
 * measured once on the running CPU, is a choice (0 or 1) that stays. */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "backends/cpu/cpu.h"
#include "core/work.h"
#include "fixtures.h"

#ifdef DLB_HAVE_VQSORT

typedef enum { RANDOM, SORTED, REVERSED, EQUAL, FEW, ORGAN, KINDS } kind;
static const char *kind_names[] = {"random", "sorted", "reversed", "equal", "few", "organ"};

static uint64_t key_of(kind k, int64_t i, int64_t n) {
  switch (k) {
    case RANDOM: return rng();
    case SORTED: return (uint64_t)i << 20;
    case REVERSED: return (uint64_t)(n - i) << 20;
    case EQUAL: return 42;
    case FEW: return rng() % 5 << 40;
    default: return (uint64_t)(i < n / 2 ? i : n - i);
  }
}

static int compare_keys(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static void check_sorts(kind k, int64_t n, int levels) {
  uint64_t *keys = malloc(sizeof *keys * (size_t)(n + 1)),
           *want = malloc(sizeof *want * (size_t)(n + 1));
  for (int64_t i = 0; i < n; i++) want[i] = keys[i] = key_of(k, i, n);
  qsort(want, (size_t)n, sizeof *want, compare_keys);
  dlb_cpu_sort_in_place64(keys, n, levels, NULL);
  CHECK(memcmp(keys, want, sizeof *keys * (size_t)n) == 0);
  if (memcmp(keys, want, sizeof *keys * (size_t)n) != 0)
    fprintf(stderr, "  %s keys, n = %lld, levels %d: not in order\n", kind_names[k], (long long)n,
            levels);
  free(keys);
  free(want);
}

/* With the work already stopped the sort leaves early, losing no key. */
static void check_stopped(int levels) {
  enum { N = 200000 };
  uint64_t *keys = malloc(sizeof *keys * N), *want = malloc(sizeof *want * N);
  dlb_work w;
  memset(&w, 0, sizeof w);
  w.interrupted = 1;
  for (int64_t i = 0; i < N; i++) want[i] = keys[i] = rng();
  dlb_cpu_sort_in_place64(keys, N, levels, &w);
  qsort(keys, N, sizeof *keys, compare_keys);
  qsort(want, N, sizeof *want, compare_keys);
  CHECK(memcmp(keys, want, sizeof *keys * N) == 0);
  free(keys);
  free(want);
}

int main(void) {
  static const int64_t lengths[] = {0, 1, 2, 3, 17, 4096, 131071, 131072, 131073, 400000};
  static const int levels[] = {0, 1, 2, 3, -1};
  for (int k = 0; k < KINDS; k++)
    for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++)
      for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++)
        check_sorts((kind)k, lengths[i], levels[l]);
  check_stopped(0);
  check_stopped(-1);
  for (int bits = 32; bits <= 64; bits += 32) {
    int chosen = dlb_cpu_sort_uses_vqsort(bits);
    CHECK(chosen == 0 || chosen == 1);
    CHECK_EQ_INT(dlb_cpu_sort_uses_vqsort(bits), chosen); /* measured once */
    fprintf(stderr, "test_sort_in_place: %d-bit keys sort by %s here\n", bits,
            chosen ? "vqsort" : "the radix sort");
  }
  return check_done("test_sort_in_place");
}

#else

int main(void) {
  fprintf(stderr, "test_sort_in_place: built without Highway's vqsort: nothing to test\n");
  return 77;
}

#endif
