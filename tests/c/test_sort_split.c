/* test_sort_split.c -- values alone of long lanes (backends/cpu/sort.c):
 * longer than a vqsort piece (2^18 32-bit or 2^17 64-bit keys), a lane is
 * split through its scratch into buckets of key ranges (sort_quick.h's
 * SPLIT), each bucket then split again or sorted as a piece. Keys of every
 * shape that moves that split: full-range random, a narrow range (one
 * level to single keys), a skewed spread (buckets past a piece at every
 * level, to the last bits), two far-apart values, all equal but one, few
 * distinct, evenly spread values of equal buckets; for int32, uint32,
 * float32, int64 and float64, ascending and descending, against qsort of
 * the same values. A sort stopped by the interrupt, before it starts or at
 * any one of its looks (the key pass, each pass of the split, the pieces,
 * the way back), fails INTERRUPTED and frees what it made. */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid */
#define FIXTURES_CPU
#include "compute/sort.h"
#include "core/array.h"
#include "core/budget.h"
#include "core/dtype.h"
#include "fixtures.h"

#define N ((int64_t)600000) /* past a piece of either width, with room for 2 levels */

typedef enum { RANDOM, NARROW, SKEWED, TWO_FAR, ONE_OUT, FEW, EVEN, SHAPES } shape;
static const char *shape_names[SHAPES] = {"random", "narrow", "skewed", "two far apart",
                                          "all equal but one", "few distinct", "evenly spread"};

/* The i-th of n raw 64 bits of a shape, before they become a dtype's value. */
static uint64_t raw_of(shape s, int64_t i) {
  switch (s) {
    case RANDOM: return rng();
    case NARROW: return 1000 + rng() % 300;
    case SKEWED: return rng() >> (rng() % 64); /* 1 bit fewer each half as often */
    case TWO_FAR: return i % 2 ? UINT64_MAX >> 2 : 3;
    case ONE_OUT: return i == N / 3 ? UINT64_MAX >> 3 : 7;
    case FEW: return rng() % 5;
    default: return (uint64_t)(i * 7919 % 100000) * 2; /* 1e5 values, 6 each: equal buckets */
  }
}

/* raw as a value of dtype t at p: integers take its low bytes; floats its
 * magnitude, scaled into a finite range with both signs. */
static void put(dlb_dtype t, char *p, uint64_t raw) {
  switch (t) {
    case DLB_FLOAT32: {
      float f = (float)(raw >> 1) * 0x1p-40f * (raw & 1 ? -1.0f : 1.0f);
      memcpy(p, &f, 4);
      break;
    }
    case DLB_FLOAT64: {
      double d = (double)(raw >> 1) * 0x1p-20 * (raw & 1 ? -1.0 : 1.0);
      memcpy(p, &d, 8);
      break;
    }
    default: memcpy(p, &raw, dlb_dtype_get(t)->itemsize); break;
  }
}

static dlb_dtype sort_dtype;

static int compare_values(const void *a, const void *b) {
  switch (sort_dtype) {
    case DLB_INT32: {
      int32_t x, y;
      memcpy(&x, a, 4), memcpy(&y, b, 4);
      return (x > y) - (x < y);
    }
    case DLB_UINT32: {
      uint32_t x, y;
      memcpy(&x, a, 4), memcpy(&y, b, 4);
      return (x > y) - (x < y);
    }
    case DLB_FLOAT32: {
      float x, y;
      memcpy(&x, a, 4), memcpy(&y, b, 4);
      return (x > y) - (x < y);
    }
    case DLB_INT64: {
      int64_t x, y;
      memcpy(&x, a, 8), memcpy(&y, b, 8);
      return (x > y) - (x < y);
    }
    default: {
      double x, y;
      memcpy(&x, a, 8), memcpy(&y, b, 8);
      return (x > y) - (x < y);
    }
  }
}

/* dlb_sort's values of a lane of shape s against qsort's. */
static void check_split(dlb_dtype t, shape s, int descending) {
  int64_t n = N;
  size_t item = dlb_dtype_get(t)->itemsize;
  dlb_array a = alloc(t, 1, &n), values = {0};
  dlb_sort_options o = {0, descending, 0, -1, 0};
  char *p = dlb_array_host_data(&a), *want = malloc(item * (size_t)n);
  const char *got;
  int64_t wrong = -1;
  for (int64_t i = 0; i < n; i++) put(t, p + (size_t)i * item, raw_of(s, i));
  memcpy(want, p, item * (size_t)n);
  sort_dtype = t;
  qsort(want, (size_t)n, item, compare_values);
  CHECK_EQ_INT(dlb_sort(&a, &o, &values, NULL, cpu, &err), DLB_OK);
  got = dlb_array_host_data(&values);
  for (int64_t i = 0; i < n && wrong < 0; i++) {
    const char *w = want + item * (size_t)(descending ? n - 1 - i : i);
    if (compare_values(got + item * (size_t)i, w) != 0) wrong = i;
  }
  if (wrong >= 0)
    fprintf(stderr, "  %s %s keys%s: element %lld out of order\n", dlb_dtype_get(t)->name,
            shape_names[s], descending ? ", descending" : "", (long long)wrong);
  CHECK(wrong < 0);
  dlb_array_release(&values);
  dlb_array_release(&a);
  free(want);
}

/* The looks at the interrupt of the sort under way: counted, and the
 * interrupt raised at look raise_at (0: never). */
static struct {
  dlb_budget *budget;
  int64_t looks, raise_at, after; /* after: looks past raise_at */
} watch;

static void on_look(dlb_work *w) {
  (void)w;
  if (watch.raise_at > 0 && watch.looks >= watch.raise_at) watch.after++;
  if (++watch.looks == watch.raise_at) atomic_store(&watch.budget->interrupt, 1);
}

/* Sorts a lane of random keys of dtype t with the interrupt raised at look
 * raise_at (0: never, -1: before the sort starts); returns the looks made. */
static int64_t sort_raised_at(dlb_budget *budget, dlb_dtype t, int64_t raise_at) {
  int64_t n = N;
  size_t item = dlb_dtype_get(t)->itemsize;
  size_t buffers;
  size_t in_use;
  dlb_array a = alloc(t, 1, &n), values = {0};
  dlb_sort_options o = {0, 0, 0, -1, 0};
  char *p = dlb_array_host_data(&a);
  for (int64_t i = 0; i < n; i++) put(t, p + (size_t)i * item, raw_of(RANDOM, i));
  buffers = atomic_load(&cpu->refs);
  in_use = dlb_budget_in_use(budget);
  watch.budget = budget, watch.looks = 0, watch.raise_at = raise_at, watch.after = 0;
  if (raise_at < 0) atomic_store(&budget->interrupt, 1);
  CHECK_EQ_INT(dlb_sort(&a, &o, &values, NULL, cpu, &err), raise_at ? DLB_E_INTERRUPTED : DLB_OK);
  atomic_store(&budget->interrupt, 0);
  if (raise_at) {
    CHECK(values.buffer == NULL);
    CHECK_EQ_INT(atomic_load(&cpu->refs), buffers);
    CHECK(dlb_budget_in_use(budget) == in_use);
    CHECK_EQ_INT(watch.after, 0); /* stopped before the next look */
  }
  dlb_array_release(&values);
  dlb_array_release(&a);
  return watch.looks;
}

/* Interrupted before it starts, or at each look of its own in turn, the
 * sort fails INTERRUPTED and leaves no buffer and no bytes behind. */
static void check_stopped(dlb_budget *budget, dlb_dtype t, int every_look) {
  int64_t looks = sort_raised_at(budget, t, 0);
  CHECK(looks >= 8); /* every pass over the lane looks about 9 times */
  sort_raised_at(budget, t, -1);
  for (int64_t k = 1; k <= looks; k += every_look ? 1 : looks / 4 + 1) sort_raised_at(budget, t, k);
  sort_raised_at(budget, t, looks);
}

int main(void) {
  static const dlb_dtype dtypes[] = {DLB_INT32, DLB_UINT32, DLB_FLOAT32, DLB_INT64, DLB_FLOAT64};
  dlb_budget *budget;
  if (!cpu_open_budgeted(&budget)) return 1;
  dlb_work_poll_hook = on_look;
  for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++) {
    for (int s = 0; s < SHAPES; s++) check_split(dtypes[d], (shape)s, 0);
    check_split(dtypes[d], RANDOM, 1);
    check_split(dtypes[d], SKEWED, 1);
    check_stopped(budget, dtypes[d], dtypes[d] == DLB_FLOAT32 || dtypes[d] == DLB_INT64);
  }
  dlb_work_poll_hook = NULL;
  cpu_close_budgeted(budget);
  return check_done("test_sort_split");
}
