/* test_vecmath.c -- what the binding cannot reach of dl.norm's C entry
 * (src/compute/vecmath.h): dims a C caller gives out of range, negative or
 * past ndim, are DLB_E_INDEX and allocate nothing; dims in range compute.
 * tests/oracle/vecmath_* compare the values with NumPy. */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid */
#define FIXTURES_CPU
#include "compute/vecmath.h"
#include "fixtures.h"

static dlb_status norm_over(const dlb_array *a, int ndims, int d0, int d1, dlb_array *out) {
  dlb_norm_args x;
  memset(&x, 0, sizeof x);
  x.a = a;
  x.kind = DLB_NORM_DEFAULT;
  x.ndims = ndims;
  x.dims[0] = d0;
  x.dims[1] = d1;
  return dlb_norm(&x, out, cpu, &err);
}

int main(void) {
  static const int64_t shape[2] = {2, 3};
  dlb_array a, out;
  if (!cpu_open()) return 1;
  a = iota(2, shape);
  CHECK_EQ_INT(norm_over(&a, 1, 2, 0, &out), DLB_E_INDEX);
  CHECK_EQ_INT(norm_over(&a, 1, -1, 0, &out), DLB_E_INDEX);
  CHECK_EQ_INT(norm_over(&a, 2, 0, 5, &out), DLB_E_INDEX);
  CHECK(out.buffer == NULL);
  CHECK_EQ_INT(norm_over(&a, 1, 1, 0, &out), DLB_OK); /* the 2-norm of each row */
  CHECK_EQ_INT(out.ndim, 1);
  CHECK_EQ_INT(out.shape[0], 2);
  dlb_array_release(&out);
  dlb_array_release(&a);
  cpu_close();
  return check_done("test_vecmath");
}
