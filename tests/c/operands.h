/* operands.h -- random operands in every layout, and reading their elements
 * exactly, for the C tests of operations on whole arrays (test_matmul.c,
 * test_join.c). Included after fixtures.h (FIXTURES_CPU), once per test. */
#ifndef DLB_TESTS_OPERANDS_H
#define DLB_TESTS_OPERANDS_H

#include "core/copy.h"
#include "core/dtype.h"
#include "fixtures.h"

typedef enum layout {
  CONTIGUOUS,
  TRANSPOSED, /* the last two dims swapped in memory */
  STEP2,      /* every other element of the last dim */
  REVERSED,   /* every dim walked backwards */
  EXPANDED,   /* the second-to-last dim (or the only one) repeats one row: stride 0 */
  LAYOUT_COUNT
} layout;

/* A random element value for dtype. */
static dlb_scalar random_value(dlb_dtype t) {
  switch (dlb_dtype_get(t)->kind) {
    case DLB_KIND_BOOL: return s_bool((int)rnd(2));
    case DLB_KIND_INT: return s_int(rnd(101) - 50);
    case DLB_KIND_UINT: return s_int(rnd(101));
    case DLB_KIND_FLOAT: return s_float((double)rnd(2001) / 1000.0 - 1.0);
    default: return s_complex((double)rnd(2001) / 1000.0 - 1.0, (double)rnd(2001) / 1000.0 - 1.0);
  }
}

/* Sets every element of a (contiguous) to random values. */
static void fill_random(dlb_array *a) {
  int64_t index[DLB_MAX_NDIM] = {0};
  for (int64_t e = 0; e < a->numel; e++) {
    dlb_scalar v = random_value(a->dtype);
    CHECK_EQ_INT(dlb_array_set(a, index, &v, &err), DLB_OK);
    for (int d = a->ndim - 1; d >= 0 && ++index[d] == a->shape[d]; d--) index[d] = 0;
  }
}

/* A random array of dtype with the logical shape (ndim, shape), laid out as lay. */
static dlb_array make(dlb_dtype dtype, int ndim, const int64_t *shape, layout lay) {
  int64_t mem[DLB_MAX_NDIM];
  dlb_array base, v;
  int perm[DLB_MAX_NDIM];
  if (ndim > 0) memcpy(mem, shape, (size_t)ndim * sizeof *shape);
  if (lay == TRANSPOSED && ndim >= 2) {
    mem[ndim - 1] = shape[ndim - 2];
    mem[ndim - 2] = shape[ndim - 1];
  }
  if (lay == STEP2) mem[ndim - 1] = 2 * shape[ndim - 1];
  if (lay == EXPANDED) mem[ndim >= 2 ? ndim - 2 : 0] = 1;
  base = alloc(dtype, ndim, mem);
  fill_random(&base);
  v = view_of(&base);
  dlb_array_release(&base);
  switch (lay) {
    case TRANSPOSED:
      for (int d = 0; d < ndim; d++) perm[d] = d;
      if (ndim >= 2) perm[ndim - 1] = ndim - 2, perm[ndim - 2] = ndim - 1;
      CHECK_EQ_INT(dlb_view_permute(&v, perm, &err), DLB_OK);
      break;
    case STEP2:
      CHECK_EQ_INT(dlb_view_slice(&v, ndim - 1, 0, shape[ndim - 1], 2, &err), DLB_OK);
      break;
    case REVERSED:
      for (int d = 0; d < ndim; d++)
        if (shape[d] > 0)
          CHECK_EQ_INT(dlb_view_slice(&v, d, shape[d] - 1, shape[d], -1, &err), DLB_OK);
      break;
    case EXPANDED: CHECK_EQ_INT(dlb_view_expand(&v, ndim, shape, &err), DLB_OK); break;
    default: break;
  }
  return v;
}

/* An element read exactly: doubles for floats and complex, wrapping 64-bit
 * integers for integers and bool. */
typedef struct value {
  double re, im; /* floats and complex */
  uint64_t u;    /* integers (wrapping) and bool */
} value;

static value load(const dlb_array *a, const int64_t *index) {
  dlb_scalar s;
  value v = {0, 0, 0};
  CHECK_EQ_INT(dlb_array_get(a, index, &s, &err), DLB_OK);
  switch (s.kind) {
    case DLB_SCALAR_BOOL: v.re = s.v.b, v.u = (uint64_t)s.v.b; break;
    case DLB_SCALAR_INT: v.re = (double)s.v.i, v.u = (uint64_t)s.v.i; break;
    case DLB_SCALAR_UINT: v.re = (double)s.v.u, v.u = s.v.u; break;
    case DLB_SCALAR_FLOAT: v.re = s.v.f; break;
    case DLB_SCALAR_COMPLEX: v.re = s.v.c.re, v.im = s.v.c.im; break;
  }
  return v;
}

#endif
