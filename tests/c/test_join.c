/* test_join.c -- dlb_concat and dlb_stack: every element of the result
 * against its source over random data in mixed dtypes and layouts, every
 * position of the new dim, 0-d arrays, the errors (SHAPE naming the array,
 * INDEX, ARGUMENT), and joins on another backend. */
#define _POSIX_C_SOURCE 200809L
#define FIXTURES_CPU
#include "compute/join.h"
#include "fixtures.h"
#include "operands.h"

/* Element index of the joined result -> (which array, index in it). */
static void check_join(int stack, int n, dlb_array *arrays, int dim) {
  const dlb_array *list[8];
  dlb_array r = {0};
  int64_t idx[DLB_MAX_NDIM] = {0};
  int bad = 0;
  for (int k = 0; k < n; k++) list[k] = &arrays[k];
  CHECK_EQ_INT((stack ? dlb_stack : dlb_concat)(n, list, dim, &r, cpu, &err), DLB_OK);
  if (!r.buffer) return;
  for (int64_t e = 0; e < r.numel && !bad; e++) {
    int64_t src[DLB_MAX_NDIM];
    int k = 0, nd = 0;
    value got, want;
    if (stack) {
      for (int d = 0; d < r.ndim; d++)
        if (d == dim) k = (int)idx[d];
        else src[nd++] = idx[d];
    } else {
      memcpy(src, idx, sizeof src);
      while (src[dim] >= arrays[k].shape[dim]) src[dim] -= arrays[k++].shape[dim];
    }
    got = load(&r, idx);
    want = load(&arrays[k], src);
    if (got.re != want.re || got.im != want.im) bad = 1;
    for (int d = r.ndim - 1; d >= 0 && ++idx[d] == r.shape[d]; d--) idx[d] = 0;
  }
  CHECK(!bad);
  dlb_array_release(&r);
}

static void test_join(void) {
  int64_t s1[3] = {2, 3, 4}, s2[3] = {2, 1, 4}, s3[3] = {2, 0, 4}, s4[3] = {3, 3, 4};
  dlb_array parts[3];
  /* concat along dim 1 (0-based) of mixed dtypes and layouts -> float64. */
  parts[0] = make(DLB_INT16, 3, s1, TRANSPOSED);
  parts[1] = make(DLB_FLOAT32, 3, s2, REVERSED);
  parts[2] = make(DLB_UINT8, 3, s3, CONTIGUOUS);
  {
    const dlb_array *list[3] = {&parts[0], &parts[1], &parts[2]};
    dlb_array r = {0};
    CHECK_EQ_INT(dlb_concat(3, list, 1, &r, cpu, &err), DLB_OK);
    CHECK_EQ_INT(r.dtype, DLB_FLOAT32);
    CHECK(r.ndim == 3 && r.shape[0] == 2 && r.shape[1] == 4 && r.shape[2] == 4);
    dlb_array_release(&r);
    /* Extents differ along another dim: SHAPE naming array 2. */
    dlb_array_release(&parts[1]);
    parts[1] = make(DLB_FLOAT32, 3, s4, CONTIGUOUS);
    CHECK_EQ_INT(dlb_concat(2, list, 1, &r, cpu, &err), DLB_E_SHAPE);
    CHECK(strstr(err.message, "array 2") != NULL);
    CHECK_EQ_INT(dlb_concat(2, list, 3, &r, cpu, &err), DLB_E_INDEX);
    CHECK_EQ_INT(dlb_concat(0, list, 0, &r, cpu, &err), DLB_E_ARGUMENT);
    CHECK_EQ_INT(dlb_stack(2, list, 0, &r, cpu, &err), DLB_E_SHAPE);
    dlb_array_release(&parts[1]);
    parts[1] = make(DLB_FLOAT32, 3, s2, REVERSED);
  }
  check_join(0, 3, parts, 1);
  for (int k = 0; k < 3; k++) dlb_array_release(&parts[k]);
  /* stack at every position, layouts mixed. */
  for (int dim = 0; dim <= 3; dim++) {
    for (int k = 0; k < 3; k++) parts[k] = make(DLB_COMPLEX64, 3, s1, (layout)(k + 1));
    check_join(1, 3, parts, dim);
    check_join(0, 3, parts, dim < 3 ? dim : 2);
    for (int k = 0; k < 3; k++) dlb_array_release(&parts[k]);
  }
  /* 0-d arrays stack into 1-D; concat refuses them. */
  for (int k = 0; k < 2; k++) parts[k] = make(DLB_INT64, 0, NULL, CONTIGUOUS);
  check_join(1, 2, parts, 0);
  {
    const dlb_array *list[2] = {&parts[0], &parts[1]};
    dlb_array r = {0};
    CHECK_EQ_INT(dlb_concat(2, list, 0, &r, cpu, &err), DLB_E_SHAPE);
  }
  for (int k = 0; k < 2; k++) dlb_array_release(&parts[k]);
}

/* Memory the host cannot address: joins are copies, which every backend
 * can do, so the result stays there; arrays of two devices are ARGUMENT. */
static void test_other_backends(void) {
  dlb_backend_ops ops = opaque_ops("opaque");
  dlb_backend *opaque;
  dlb_array a, b, r = {0};
  int64_t s[2] = {2, 2};
  const dlb_array *list[2];
  CHECK_EQ_INT(dlb_backend_create(&ops, NULL, &opaque, &err), DLB_OK);
  CHECK_EQ_INT(dlb_array_allocate(&a, opaque, 0, DLB_FLOAT32, 2, s, 1, &err), DLB_OK);
  b = alloc(DLB_FLOAT32, 2, s);
  list[0] = &b;
  list[1] = &a;
  CHECK_EQ_INT(dlb_concat(2, list, 0, &r, cpu, &err), DLB_E_ARGUMENT);
  list[0] = &a;
  CHECK_EQ_INT(dlb_stack(1, list, 0, &r, cpu, &err), DLB_OK);
  CHECK(r.buffer && r.buffer->backend == opaque);
  CHECK_EQ_INT(r.ndim, 3);
  dlb_array_release(&r);
  dlb_array_release(&a);
  dlb_array_release(&b);
  dlb_backend_release(opaque);
}

int main(void) {
  if (!cpu_open()) return 1;
  test_join();
  test_other_backends();
  cpu_close();
  return check_done("test_join");
}
