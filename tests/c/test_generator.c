/* test_generator.c -- draws into arrays and shuffles (src/random/generator.h),
 * the loops behind dl.random: the same values as one plain loop, however
 * they are cut into chunks between looks at the interrupt; a shuffle of
 * rows (any strides) in the order of the 1-D one; the work limit and the
 * interrupt stop them and leave the generator as it was before the call.
 * spec/random_spec.lua compares the results with NumPy itself. */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid */
#define FIXTURES_CPU
#include "core/budget.h"
#include "core/work.h"
#include "random/choice.h"
#include "random/generator.h"
#include "fixtures.h"

#define EVERY DLB_WORK_CHECK_EVERY

static dlb_budget *budget;
static int64_t looks, raise_at; /* the look that raises the interrupt; 0: none */

static void on_look(dlb_work *w) {
  (void)w;
  if (++looks == raise_at) atomic_store(&budget->interrupt, 1);
}

static void watch(int64_t at) {
  looks = 0;
  raise_at = at;
  atomic_store(&budget->interrupt, 0);
}

static dlb_pcg64 seeded(uint64_t s) {
  dlb_pcg64 g;
  uint64_t words[4] = {s, s ^ UINT64_C(0x9e3779b97f4a7c15), 3 * s + 1, 12345};
  dlb_pcg64_seed(&g, words);
  return g;
}

static int same_generator(const dlb_pcg64 *a, const dlb_pcg64 *b) {
  return a->state == b->state && a->inc == b->inc && a->has_uint32 == b->has_uint32 &&
         (!a->has_uint32 || a->uinteger == b->uinteger);
}

/* An int64 array 0 .. n-1. */
static dlb_array arange(int64_t n) {
  dlb_array a = alloc(DLB_INT64, 1, &n);
  int64_t *p = (int64_t *)(void *)dlb_array_host_data(&a);
  for (int64_t i = 0; i < n; i++) p[i] = i;
  return a;
}

/* The 1-D shuffle, one swap at a time (NumPy's loop). */
static void reference_shuffle(dlb_pcg64 *g, int64_t *p, int64_t n) {
  for (int64_t i = n - 1; i >= 1; i--) {
    int64_t j = (int64_t)dlb_random_interval(g, (uint64_t)i), t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
}

/* Over several chunks, with a 32-bit half kept from before: the chunked
 * loop swaps as the plain one does, and leaves the generator where it does. */
static void test_shuffle_1d(void) {
  int64_t n = 3 * EVERY + 5, *want = malloc((size_t)n * sizeof *want);
  dlb_pcg64 g = seeded(1), h;
  dlb_array a = arange(n);
  const int64_t *got = (const int64_t *)(const void *)dlb_array_host_data(&a);
  int bad = 0;
  (void)dlb_pcg64_next32(&g); /* keeps the other half */
  h = g;
  for (int64_t i = 0; i < n; i++) want[i] = i;
  reference_shuffle(&h, want, n);
  CHECK_EQ_INT(dlb_shuffle(&g, &a, budget, "shuffle", &err), DLB_OK);
  for (int64_t i = 0; i < n; i++) bad += got[i] != want[i];
  CHECK_EQ_INT(bad, 0);
  CHECK(same_generator(&g, &h));
  dlb_array_release(&a);
  free(want);
}

/* Rows of a transposed (strided) 2-D array move as the 1-D shuffle moves
 * its elements, every column alike. */
static void test_shuffle_rows(void) {
  int64_t shape[2] = {3, 7}, n = 7;
  dlb_pcg64 g = seeded(2), h = g;
  dlb_array a = iota(2, shape), t = view_of(&a);
  int64_t order[7];
  int perm[2] = {1, 0}, bad = 0;
  const int32_t *p = (const int32_t *)(const void *)dlb_array_host_data(&a);
  CHECK_EQ_INT(dlb_view_permute(&t, perm, &err), DLB_OK); /* 7 rows of 3, strides {1, 7} */
  for (int64_t i = 0; i < n; i++) order[i] = i;
  reference_shuffle(&h, order, n);
  CHECK_EQ_INT(dlb_shuffle(&g, &t, budget, "shuffle", &err), DLB_OK);
  for (int64_t r = 0; r < 7; r++)
    for (int64_t c = 0; c < 3; c++) bad += p[c * 7 + r] != (int32_t)(c * 7 + order[r]);
  CHECK_EQ_INT(bad, 0);
  CHECK(same_generator(&g, &h));
  dlb_array_release(&t);
  dlb_array_release(&a);
}

/* Draws in chunks are the draws of one fill; a narrow integer draw keeps
 * its 32-bit buffer across chunks. */
static void test_draws(void) {
  int64_t n = 2 * EVERY + 3;
  dlb_pcg64 g = seeded(3), h = g;
  dlb_draw d = {.kind = DLB_DRAW_NORMAL, .dtype = DLB_FLOAT64, .standard = 1};
  dlb_draw e = {.kind = DLB_DRAW_INTEGERS, .dtype = DLB_UINT8, .off = 3, .rng = 200};
  dlb_bits bits = {0, 0};
  dlb_array a = alloc(DLB_FLOAT64, 1, &n), b = alloc(DLB_UINT8, 1, &n);
  double *want = malloc((size_t)n * sizeof *want);
  uint8_t *want8 = malloc((size_t)n);
  int bad = 0;
  dlb_standard_normal_fill(&h, want, n);
  CHECK_EQ_INT(dlb_draw_into(&g, &d, &a, budget, "standard_normal", &err), DLB_OK);
  bad += memcmp(dlb_array_host_data(&a), want, (size_t)n * sizeof *want) != 0;
  dlb_bounded8_fill(&h, 3, 200, want8, n, &bits);
  CHECK_EQ_INT(dlb_draw_into(&g, &e, &b, budget, "integers", &err), DLB_OK);
  bad += memcmp(dlb_array_host_data(&b), want8, (size_t)n) != 0;
  CHECK_EQ_INT(bad, 0);
  CHECK(same_generator(&g, &h));
  dlb_array_release(&b);
  dlb_array_release(&a);
  free(want8);
  free(want);
}

/* The work limit refuses before anything is drawn; the interrupt stops a
 * long call at a look. Either way the generator is as it was. */
static void test_bounds(void) {
  int64_t n = 4 * EVERY;
  dlb_pcg64 g = seeded(4), before;
  dlb_draw d = {.kind = DLB_DRAW_RANDOM, .dtype = DLB_FLOAT32};
  dlb_array a = arange(n), f = alloc(DLB_FLOAT32, 1, &n);
  const int64_t *p = (const int64_t *)(const void *)dlb_array_host_data(&a);
  (void)dlb_pcg64_next32(&g);
  before = g;
  atomic_store(&budget->work_limit, n - 1);
  CHECK_EQ_INT(dlb_shuffle(&g, &a, budget, "shuffle", &err), DLB_E_INTERRUPTED);
  CHECK_EQ_INT(dlb_draw_into(&g, &d, &f, budget, "random", &err), DLB_E_INTERRUPTED);
  CHECK(same_generator(&g, &before));
  CHECK(p[0] == 0 && p[n - 1] == n - 1); /* not started */
  atomic_store(&budget->work_limit, 0);
  watch(2);
  CHECK_EQ_INT(dlb_shuffle(&g, &a, budget, "shuffle", &err), DLB_E_INTERRUPTED);
  CHECK(looks >= 2 && looks <= 3);
  CHECK(same_generator(&g, &before));
  watch(2);
  CHECK_EQ_INT(dlb_draw_into(&g, &d, &f, budget, "random", &err), DLB_E_INTERRUPTED);
  CHECK(same_generator(&g, &before));
  watch(0);
  CHECK_EQ_INT(dlb_draw_into(&g, &d, &f, budget, "random", &err), DLB_OK);
  CHECK(!same_generator(&g, &before));
  dlb_array_release(&f);
  dlb_array_release(&a);
}

/* The new kinds in chunks draw as one fill of their sampler (binomial's
 * constants made once per chunk give the same numbers). */
static void test_more_draws(void) {
  int64_t n = 2 * EVERY + 5;
  dlb_draw kinds[] = {{.kind = DLB_DRAW_EXPONENTIAL, .dtype = DLB_FLOAT64, .a = 2},
                      {.kind = DLB_DRAW_GAMMA, .dtype = DLB_FLOAT64, .a = 0.4, .b = 3},
                      {.kind = DLB_DRAW_BETA, .dtype = DLB_FLOAT64, .a = 0.5, .b = 0.5},
                      {.kind = DLB_DRAW_POISSON, .dtype = DLB_INT64, .a = 30},
                      {.kind = DLB_DRAW_BINOMIAL, .dtype = DLB_INT64, .a = 0.4, .count = 500}};
  dlb_array a = alloc(DLB_FLOAT64, 1, &n);
  void *want = malloc((size_t)n * 8);
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    dlb_pcg64 g = seeded(10 + k), h = g;
    dlb_draw_fill(&h, &kinds[k], want, n);
    a.dtype = kinds[k].dtype;
    CHECK_EQ_INT(dlb_draw_into(&g, &kinds[k], &a, budget, "draw", &err), DLB_OK);
    CHECK(memcmp(dlb_array_host_data(&a), want, (size_t)n * 8) == 0);
    CHECK(same_generator(&g, &h));
  }
  a.dtype = DLB_FLOAT64;
  dlb_array_release(&a);
  free(want);
}

/* Beta's Johnk loop for a, b so small that every pair is rejected (NumPy
 * loops forever): the interrupt stops it, inside one draw, and the
 * generator is as it was. */
static void test_endless_beta(void) {
  dlb_pcg64 g = seeded(5), before = g;
  dlb_draw d = {.kind = DLB_DRAW_BETA, .dtype = DLB_FLOAT64, .a = 1e-300, .b = 1e-300};
  double x;
  watch(3);
  CHECK_EQ_INT(dlb_draw_one(&g, &d, &x, budget, "beta", &err), DLB_E_INTERRUPTED);
  CHECK(looks >= 3 && looks <= 4);
  CHECK(same_generator(&g, &before));
  watch(0);
}

/* Kahan's sum and NumPy's checks of p; each route of choice draws
 * distinct indices, is refused by the work limit and stopped by the
 * interrupt with the generator as it was, and charges its scratch. */
static void test_choice(void) {
  double p[4] = {0.25, 0.25, 0.5, 0}, bad[2] = {0.5, -0.5}, nan[2] = {0.5, 0.0 / 0.0};
  double big[3] = {0.3, 0.3, 0.3};
  int64_t out[5000], n = 200000, size = 5000;
  dlb_pcg64 g = seeded(6), before;
  size_t in_use;
  CHECK(dlb_kahan_sum(p, 4) == 1.0 && dlb_kahan_sum(p, 0) == 0.0);
  CHECK_EQ_INT(dlb_choice_check_p(p, 4, 1.5e-8), DLB_CHOICE_P_OK);
  CHECK_EQ_INT(dlb_choice_check_p(bad, 2, 1.5e-8), DLB_CHOICE_P_NEGATIVE);
  CHECK_EQ_INT(dlb_choice_check_p(nan, 2, 1.5e-8), DLB_CHOICE_P_NAN);
  CHECK_EQ_INT(dlb_choice_check_p(big, 3, 1.5e-8), DLB_CHOICE_P_SUM);
  CHECK_EQ_INT(dlb_choice_check_p(big, 3, 0.2), DLB_CHOICE_P_OK);
  CHECK_EQ_INT(dlb_choice_count_positive(p, 4), 3);
  CHECK(dlb_choice_uses_tail(n, size, 1) && !dlb_choice_uses_tail(n, size, 0));
  CHECK(!dlb_choice_uses_tail(10000, 10000, 1));
  /* distinct draws: tail (shuffle) and Floyd (no shuffle), and with p */
  for (int route = 0; route < 3; route++) {
    int64_t dup = 0;
    in_use = atomic_load(&budget->in_use);
    if (route < 2) {
      CHECK_EQ_INT(dlb_choice_unique(&g, n, size, route == 0, out, budget, "choice", &err), DLB_OK);
    } else {
      CHECK_EQ_INT(dlb_choice_p_unique(&g, p, 4, out, 3, budget, "choice", &err), DLB_OK);
    }
    CHECK(atomic_load(&budget->in_use) == in_use); /* scratch given back */
    for (int64_t i = 0; i < (route < 2 ? size : 3); i++)
      for (int64_t j = 0; j < i; j++) dup += out[i] == out[j];
    CHECK_EQ_INT(dup, 0);
  }
  CHECK(out[0] != 3 && out[1] != 3 && out[2] != 3); /* p = 0 is never taken */
  before = g;
  atomic_store(&budget->work_limit, 10);
  CHECK_EQ_INT(dlb_choice_unique(&g, n, size, 1, out, budget, "choice", &err), DLB_E_INTERRUPTED);
  CHECK_EQ_INT(dlb_choice_p(&g, p, 4, out, 5000, budget, "choice", &err), DLB_E_INTERRUPTED);
  atomic_store(&budget->work_limit, 0);
  watch(1); /* at the look after arange(n) */
  CHECK_EQ_INT(dlb_choice_unique(&g, n, size, 1, out, budget, "choice", &err), DLB_E_INTERRUPTED);
  CHECK(same_generator(&g, &before));
  watch(0);
  atomic_store(&budget->limit, 1000); /* the tail's scratch (1.6 MB) is refused */
  CHECK_EQ_INT(dlb_choice_unique(&g, n, size, 1, out, budget, "choice", &err), DLB_E_OUT_OF_MEMORY);
  CHECK(same_generator(&g, &before));
  atomic_store(&budget->limit, 0);
}

int main(void) {
  if (!cpu_open_budgeted(&budget)) return 1;
  dlb_work_poll_hook = on_look;
  test_shuffle_1d();
  test_shuffle_rows();
  test_draws();
  test_bounds();
  test_more_draws();
  test_endless_beta();
  test_choice();
  dlb_work_poll_hook = NULL;
  cpu_close_budgeted(budget);
  return check_done("test_generator");
}
