/* test_iter.c -- the kernel layer's iterator (core/iter.h) against a plain
 * index walk: random shapes (extent-1 and zero extents, up to 6 dims),
 * random layouts per operand (permuted, reversed, stepped, broadcast), and
 * a kernel that computes out = a + 1000 * b element by element. Also: how
 * far the iterator merges (one kernel call for contiguous operands). */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/iter.h"
#include "fixtures.h"

#define MAXN 4096

/* The kernel: out = a + 1000 * b (int32), counting its calls. */
static int calls;
static int add_kernel(char **data, const int64_t *steps, int64_t n, void *aux) {
  calls++;
  for (int64_t i = 0; i < n; i++) {
    int32_t a, b, out;
    memcpy(&a, data[1] + i * steps[1], 4);
    memcpy(&b, data[2] + i * steps[2], 4);
    out = a + 1000 * b;
    memcpy(data[0] + i * steps[0], &out, 4);
  }
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

static void test_random(void) {
  static char out[MAXN * 16], a[MAXN * 16], b[MAXN * 16]; /* 4^6 elements, 8 bytes apart */
  for (int round = 0; round < 3000; round++) {
    int ndim = (int)rnd(7);
    int64_t shape[6], numel = 1, so[6], sa[6], sb[6], oo, oa, ob, index[6] = {0};
    for (int d = 0; d < ndim; d++) {
      shape[d] = rnd(20) == 0 ? 0 : 1 + rnd(4);
      numel *= shape[d];
    }
    random_layout(ndim, shape, 0, so, &oo);
    random_layout(ndim, shape, 1, sa, &oa);
    random_layout(ndim, shape, 1, sb, &ob);
    for (int i = 0; i < MAXN * 4; i++) {
      int32_t x = (int32_t)i, y = (int32_t)(i * 7 + 3), z = -1;
      memcpy(a + 4 * i, &x, 4);
      memcpy(b + 4 * i, &y, 4);
      memcpy(out + 4 * i, &z, 4);
    }
    {
      char *data[3] = {out + oo, a + oa, b + ob};
      const int64_t *strides[3] = {so, sa, sb};
      dlb_iter it;
      dlb_iter_init(&it, 3, ndim, shape, data, strides);
      CHECK_EQ_INT(dlb_iter_run(&it, add_kernel, NULL), 0);
      CHECK_EQ_INT(dlb_iter_empty(&it), numel == 0);
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
      CHECK_EQ_INT(load(out + po), load(a + pa) + 1000 * load(b + pb));
      memcpy(out + po, &mark, 4); /* checked: back to untouched */
      for (int d = ndim - 1; d >= 0 && ++index[d] == shape[d]; d--) index[d] = 0;
    }
    {
      int stray = 0;
      for (int i = 0; i < MAXN * 4; i++) stray += load(out + 4 * i) != -1;
      CHECK_EQ_INT(stray, 0);
    }
  }
}

static void test_merging(void) {
  static int32_t out[64], a[64], b[64];
  const int64_t shape[3] = {4, 1, 16}, c[3] = {64, 0, 4}, bc[3] = {0, 0, 4};
  char *data[3] = {(char *)out, (char *)a, (char *)b};
  const int64_t *contiguous[3] = {c, c, c}, *broadcast[3] = {c, c, bc};
  dlb_iter it;
  dlb_iter_init(&it, 3, 3, shape, data, contiguous);
  CHECK_EQ_INT(it.ndim, 1); /* contiguous operands: one run */
  CHECK_EQ_INT(it.shape[0], 64);
  calls = 0;
  dlb_iter_run(&it, add_kernel, NULL);
  CHECK_EQ_INT(calls, 1);
  dlb_iter_init(&it, 3, 3, shape, data, broadcast);
  CHECK_EQ_INT(it.ndim, 2); /* a row broadcast over rows: rows of 16 */
  CHECK_EQ_INT(it.shape[1], 16);
  /* 0-d: one call with n = 1. */
  dlb_iter_init(&it, 3, 0, shape, data, contiguous);
  calls = 0;
  dlb_iter_run(&it, add_kernel, NULL);
  CHECK_EQ_INT(calls, 1);
  /* A zero extent: no call at all. */
  {
    const int64_t empty[2] = {3, 0}, s[2] = {0, 4};
    const int64_t *st[3] = {s, s, s};
    dlb_iter_init(&it, 3, 2, empty, data, st);
    calls = 0;
    dlb_iter_run(&it, add_kernel, NULL);
    CHECK_EQ_INT(calls, 0);
  }
}

int main(void) {
  test_random();
  test_merging();
  return check_done("test_iter");
}
