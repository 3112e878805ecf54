/* test_iter.c -- the kernel layer's iterator (core/iter.h) against a plain
 * index walk: random shapes (extent-1 and zero extents, up to 6 dims),
 * random layouts per operand (permuted, reversed, stepped, broadcast), and
 * a kernel that computes out = a + 1000 * b element by element and fails
 * an element it reaches twice. Both walks: dlb_iter_run (runs of the inner
 * dim, in order) and dlb_iter_run_any (tiles across a short inner dim), the
 * latter also over shapes with a long dim beside short ones, where it
 * tiles. Also: how far the iterator merges (one kernel call for contiguous
 * operands), how long the tiled walk's calls are, and that the host's
 * interrupt stops every walk within DLB_WORK_CHECK_EVERY elements of a
 * look. */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/budget.h"
#include "core/iter.h"
#include "core/work.h"
#include "fixtures.h"

#define MAXN 65536 /* elements of the largest random shape */

/* What the kernels saw: calls, elements, the longest call, elements reached
 * a second time. */
static int64_t calls, visited, longest, twice;
static void seen_call(int64_t n) {
  calls++;
  visited += n;
  if (n > longest) longest = n;
}
static void reset_seen(void) { calls = visited = longest = twice = 0; }

/* The kernel: out = a + 1000 * b (int32); an out element not -1 (the
 * mark of unwritten ones) is reached twice. */
static int add_kernel(char **data, const int64_t *steps, int64_t n, void *aux) {
  (void)aux;
  seen_call(n);
  for (int64_t i = 0; i < n; i++) {
    int32_t a, b, out;
    memcpy(&out, data[0] + i * steps[0], 4);
    twice += out != -1;
    memcpy(&a, data[1] + i * steps[1], 4);
    memcpy(&b, data[2] + i * steps[2], 4);
    out = a + 1000 * b;
    memcpy(data[0] + i * steps[0], &out, 4);
  }
  return 0;
}

/* A kernel that only counts (for walks whose pointers reach no memory). */
static int count_kernel(char **data, const int64_t *steps, int64_t n, void *aux) {
  (void)data, (void)steps, (void)aux;
  seen_call(n);
  return 0;
}

/* A random layout of shape inside a buffer: strides (bytes) and the byte
 * offset of element 0...0; broadcast dims get stride 0 when allowed. */
static void random_layout(int ndim, const int64_t *shape, int allow_broadcast, int64_t *strides,
                          int64_t *offset) {
  int order[6];
  int64_t step = 4 * (1 + rnd(2)); /* sometimes every other int32 */
  for (int d = 0; d < ndim; d++) order[d] = d;
  for (int d = ndim - 1; d > 0; d--) { /* a random dim order */
    int e = (int)rnd(d + 1), t = order[d];
    order[d] = order[e];
    order[e] = t;
  }
  *offset = 0;
  for (int k = ndim - 1; k >= 0; k--) {
    int d = order[k];
    if (allow_broadcast && rnd(5) == 0) {
      strides[d] = 0;
      continue;
    }
    strides[d] = rnd(4) == 0 ? -step : step;
    if (strides[d] < 0 && shape[d] > 0) *offset += (shape[d] - 1) * step;
    step *= shape[d] > 0 ? shape[d] : 1;
  }
}

static int32_t load(const char *p) {
  int32_t v;
  memcpy(&v, p, 4);
  return v;
}

typedef int (*walk_fn)(const dlb_iter *it, dlb_loop loop, void *aux);

/* The iterator's inner dim in the last check_walk (its run length). */
static int64_t last_run;

/* Buffers for the random walks: MAXN elements 8 bytes apart, and one more. */
static char out_buf[MAXN * 8 + 8], a_buf[MAXN * 8 + 8], b_buf[MAXN * 8 + 8];

/* One walk of out = a + 1000 * b over shape with random layouts, checked
 * against the plain walk: every element once, with the right operands,
 * nothing else of the output written. */
static void check_walk(walk_fn walk, int ndim, const int64_t *shape) {
  int64_t numel = 1, so[6], sa[6], sb[6], oo, oa, ob, index[6] = {0}, bytes;
  for (int d = 0; d < ndim; d++) numel *= shape[d];
  bytes = numel * 8 + 8;
  random_layout(ndim, shape, 0, so, &oo);
  random_layout(ndim, shape, 1, sa, &oa);
  random_layout(ndim, shape, 1, sb, &ob);
  for (int64_t i = 0; i < bytes / 4; i++) {
    int32_t x = (int32_t)i, y = (int32_t)(i * 7 + 3), z = -1;
    memcpy(a_buf + 4 * i, &x, 4);
    memcpy(b_buf + 4 * i, &y, 4);
    memcpy(out_buf + 4 * i, &z, 4);
  }
  {
    char *data[3] = {out_buf + oo, a_buf + oa, b_buf + ob};
    const int64_t *strides[3] = {so, sa, sb};
    dlb_iter it;
    dlb_iter_init(&it, 3, ndim, shape, data, strides);
    last_run = it.ndim > 0 ? it.shape[it.ndim - 1] : 1;
    reset_seen();
    CHECK_EQ_INT(walk(&it, add_kernel, NULL), 0);
    CHECK_EQ_INT(dlb_iter_empty(&it), numel == 0);
    CHECK_EQ_INT(visited, numel);
    CHECK_EQ_INT(twice, 0);
  }
  /* The plain walk: every index, in row-major order; then nothing else
   * of the output buffer may have been written. */
  for (int64_t e = 0; e < numel; e++) {
    int64_t po = oo, pa = oa, pb = ob;
    int32_t mark = -1;
    for (int d = 0; d < ndim; d++) {
      po += index[d] * so[d];
      pa += index[d] * sa[d];
      pb += index[d] * sb[d];
    }
    CHECK_EQ_INT(load(out_buf + po), load(a_buf + pa) + 1000 * load(b_buf + pb));
    memcpy(out_buf + po, &mark, 4); /* checked: back to untouched */
    for (int d = ndim - 1; d >= 0 && ++index[d] == shape[d]; d--) index[d] = 0;
  }
  {
    int64_t stray = 0;
    for (int64_t i = 0; i < bytes / 4; i++) stray += load(out_buf + 4 * i) != -1;
    CHECK_EQ_INT(stray, 0);
  }
}

/* Small random shapes: up to 6 dims of 0 to 4. */
static void test_random(walk_fn walk) {
  for (int round = 0; round < 3000; round++) {
    int ndim = (int)rnd(7);
    int64_t shape[6];
    for (int d = 0; d < ndim; d++) shape[d] = rnd(20) == 0 ? 0 : 1 + rnd(4);
    check_walk(walk, ndim, shape);
  }
}

/* Shapes with a long dim (32 to 700) beside short ones (2 to 4 dims), which
 * the tiled walk walks across when the short one is the inner dim, and
 * wider ones (a dim of 300 to 1500 and one of 8 to 47, say a transpose). */
static void test_random_tiled(void) {
  int across = 0; /* rounds walked across a short inner dim */
  for (int round = 0; round < 1000; round++) {
    int ndim = 2 + (int)rnd(3);
    int64_t shape[6], numel = 1;
    if (round % 4 == 0) {
      for (int d = 0; d < ndim; d++) shape[d] = 1 + rnd(3);
      shape[rnd(ndim)] = 8 + rnd(40);
      shape[rnd(ndim)] = 300 + rnd(1200);
    } else {
      int long_dim = (int)rnd(ndim);
      for (int d = 0; d < ndim; d++) shape[d] = d == long_dim ? 32 + rnd(669) : 1 + rnd(5);
      if (rnd(40) == 0) shape[rnd(ndim)] = 0;
    }
    for (int d = 0; d < ndim; d++) numel *= shape[d];
    if (numel > MAXN) continue;
    check_walk(dlb_iter_run_any, ndim, shape);
    /* Runs of the inner dim make numel / run calls, the tiled walk fewer. */
    if (numel > 0 && calls * last_run < numel) across++;
  }
  CHECK(across > 100);
}

/* (n, 3) + (n, 1): the tiled walk's calls are long; a transpose's are runs. */
static void test_tiled_calls(void) {
  static int32_t out[3 * 2000], a[3 * 2000], b[2000];
  char *data[3] = {(char *)out, (char *)a, (char *)b};
  dlb_iter it;
  for (int i = 0; i < 3 * 2000; i++) out[i] = -1, a[i] = i;
  for (int i = 0; i < 2000; i++) b[i] = 7 * i;
  {
    const int64_t shape[2] = {2000, 3}, c[2] = {12, 4}, col[2] = {4, 0};
    const int64_t *strides[3] = {c, c, col};
    dlb_iter_init(&it, 3, 2, shape, data, strides);
    reset_seen();
    dlb_iter_run(&it, add_kernel, NULL); /* in order: runs of 3 */
    CHECK_EQ_INT(calls, 2000);
    for (int i = 0; i < 3 * 2000; i++) out[i] = -1;
    reset_seen();
    dlb_iter_run_any(&it, add_kernel, NULL);
    CHECK(calls * 64 <= 6000); /* 64 elements a call at least on average */
    CHECK_EQ_INT(visited, 6000);
    CHECK_EQ_INT(twice, 0);
    for (int i = 0; i < 3 * 2000; i++) CHECK_EQ_INT(out[i], a[i] + 1000 * b[i / 3]);
  }
  {
    /* out (20, 300) = a (300, 20) transposed: runs of the inner dim. */
    const int64_t shape[2] = {20, 300}, so[2] = {1200, 4}, sa[2] = {4, 80}, sb[2] = {0, 4};
    const int64_t *strides[3] = {so, sa, sb};
    for (int i = 0; i < 6000; i++) out[i] = -1;
    dlb_iter_init(&it, 3, 2, shape, data, strides);
    reset_seen();
    dlb_iter_run_any(&it, add_kernel, NULL);
    CHECK_EQ_INT(calls, 20);
    CHECK_EQ_INT(visited, 6000);
    CHECK_EQ_INT(twice, 0);
    for (int r = 0; r < 20; r++)
      for (int j = 0; j < 300; j++) CHECK_EQ_INT(out[r * 300 + j], a[j * 20 + r] + 1000 * b[j]);
  }
  {
    /* 0-d: one call with n = 1; a zero extent: no call. */
    const int64_t shape[2] = {0, 3}, s[2] = {12, 4};
    const int64_t *strides[3] = {s, s, s};
    dlb_iter_init(&it, 3, 0, shape, data, strides);
    reset_seen();
    out[0] = -1;
    dlb_iter_run_any(&it, add_kernel, NULL);
    CHECK_EQ_INT(calls, 1);
    CHECK_EQ_INT(out[0], a[0] + 1000 * b[0]);
    dlb_iter_init(&it, 3, 2, shape, data, strides);
    reset_seen();
    dlb_iter_run_any(&it, add_kernel, NULL);
    CHECK_EQ_INT(calls, 0);
  }
}

static void test_merging(void) {
  static int32_t out[64], a[64], b[64];
  const int64_t shape[3] = {4, 1, 16}, c[3] = {64, 0, 4}, bc[3] = {0, 0, 4};
  char *data[3] = {(char *)out, (char *)a, (char *)b};
  const int64_t *contiguous[3] = {c, c, c}, *broadcast[3] = {c, c, bc};
  dlb_iter it;
  memset(out, 0xff, sizeof out);
  dlb_iter_init(&it, 3, 3, shape, data, contiguous);
  CHECK_EQ_INT(it.ndim, 1); /* contiguous operands: one run */
  CHECK_EQ_INT(it.shape[0], 64);
  reset_seen();
  dlb_iter_run(&it, add_kernel, NULL);
  CHECK_EQ_INT(calls, 1);
  dlb_iter_init(&it, 3, 3, shape, data, broadcast);
  CHECK_EQ_INT(it.ndim, 2); /* a row broadcast over rows: rows of 16 */
  CHECK_EQ_INT(it.shape[1], 16);
  /* 0-d: one call with n = 1. */
  dlb_iter_init(&it, 3, 0, shape, data, contiguous);
  reset_seen();
  memset(out, 0xff, sizeof out);
  dlb_iter_run(&it, add_kernel, NULL);
  CHECK_EQ_INT(calls, 1);
  /* A zero extent: no call at all. */
  {
    const int64_t empty[2] = {3, 0}, s[2] = {0, 4};
    const int64_t *st[3] = {s, s, s};
    dlb_iter_init(&it, 3, 2, empty, data, st);
    reset_seen();
    dlb_iter_run(&it, add_kernel, NULL);
    CHECK_EQ_INT(calls, 0);
  }
}

/* --- the interrupt --------------------------------------------------------- */

static dlb_budget *budget;
static int64_t looks, visited_at_look;

/* The test hook on every look: raises the interrupt at the first. */
static void raise_at_first_look(dlb_work *w) {
  (void)w;
  if (looks++ == 0) {
    visited_at_look = visited;
    atomic_store(&budget->interrupt, 1);
  }
}

/* A walk of count_kernel over shape (pointers from address 0: they reach
 * no memory) inside bounded work: it stops at the first look, which comes
 * within DLB_WORK_CHECK_EVERY elements of the start. */
static void check_stops(walk_fn walk, int ndim, const int64_t *shape, const int64_t *s0,
                        const int64_t *s1) {
  char *data[2] = {NULL, NULL};
  const int64_t *strides[2] = {s0, s1};
  dlb_iter it;
  dlb_work w;
  dlb_error err;
  int64_t numel = 1;
  for (int d = 0; d < ndim; d++) numel *= shape[d];
  atomic_store(&budget->interrupt, 0);
  looks = 0;
  reset_seen();
  dlb_iter_init(&it, 2, ndim, shape, data, strides);
  CHECK_EQ_INT(dlb_work_begin(&w, budget, numel, "walk", &err), DLB_OK);
  CHECK_EQ_INT(walk(&it, count_kernel, NULL), DLB_ITER_STOPPED);
  CHECK_EQ_INT(dlb_work_end(&w, DLB_OK, "walk", &err), DLB_E_INTERRUPTED);
  CHECK_EQ_INT(looks, 1);
  CHECK(visited_at_look >= DLB_WORK_CHECK_EVERY);
  CHECK(visited_at_look < 2 * DLB_WORK_CHECK_EVERY);
  CHECK_EQ_INT(visited, visited_at_look); /* nothing after the look */
  CHECK(visited < numel);
}

static void test_interrupt(void) {
  const int64_t n = 64 * DLB_WORK_CHECK_EVERY;
  budget = dlb_budget_new();
  CHECK(budget != NULL);
  if (!budget) return;
  dlb_work_poll_hook = raise_at_first_look;
  {
    const int64_t shape[1] = {n}, s[1] = {4}; /* one long run: pieces */
    check_stops(dlb_iter_run, 1, shape, s, s);
    check_stops(dlb_iter_run_any, 1, shape, s, s);
  }
  {
    const int64_t shape[2] = {n / 3, 3}, s[2] = {12, 4}, col[2] = {4, 0}; /* short rows */
    check_stops(dlb_iter_run, 2, shape, s, col);
    check_stops(dlb_iter_run_any, 2, shape, s, col);
  }
  {
    const int64_t shape[2] = {3, n / 3}, s[2] = {4 * (n / 3), 4}, t[2] = {4, 12}; /* across */
    check_stops(dlb_iter_run_any, 2, shape, s, t);
  }
  {
    const int64_t shape[2] = {64, n / 64}, s[2] = {4 * (n / 64), 4},
                  t[2] = {4, 256}; /* a transpose: long runs, in pieces */
    check_stops(dlb_iter_run_any, 2, shape, s, t);
  }
  {
    const int64_t shape[3] = {n / 48, 4, 3}, s[3] = {48, 12, 4}, t[3] = {4, 0, 0}; /* 3-D */
    check_stops(dlb_iter_run_any, 3, shape, s, t);
  }
  dlb_work_poll_hook = NULL;
  dlb_budget_release(budget);
}

int main(void) {
  test_random(dlb_iter_run);
  test_random(dlb_iter_run_any);
  test_random_tiled();
  test_tiled_calls();
  test_merging();
  test_interrupt();
  return check_done("test_iter");
}
