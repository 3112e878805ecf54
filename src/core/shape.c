/* shape.c -- checked arithmetic on shapes, strides and byte sizes. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "invariant.h"
#include "shape.h"

dlb_status dlb_shape_numel(int ndim, const int64_t *shape, int64_t *numel, dlb_error *err) {
  int64_t product = 1;
  int has_zero = 0;
  if (ndim < 0 || ndim > DLB_MAX_NDIM)
    return dlb_fail(err, DLB_E_SHAPE, "%d dimensions (at most %d)", ndim, DLB_MAX_NDIM);
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0)
      return dlb_fail(err, DLB_E_SHAPE, "dimension %d has negative extent %lld", d + 1,
                      (long long)shape[d]);
    if (shape[d] == 0) {
      has_zero = 1;
      continue;
    }
    /* The product of the nonzero extents must fit even when another extent
     * is 0: it bounds the row-major strides, which must not overflow. */
    if (__builtin_mul_overflow(product, shape[d], &product))
      return dlb_fail(err, DLB_E_SHAPE, "the element count overflows");
  }
  *numel = has_zero ? 0 : product;
  return DLB_OK;
}

dlb_status dlb_shape_nbytes(int64_t numel, size_t itemsize, size_t *nbytes, dlb_error *err) {
  int64_t bytes;
  if (numel < 0 || __builtin_mul_overflow(numel, (int64_t)itemsize, &bytes) ||
      (uint64_t)bytes > (uint64_t)PTRDIFF_MAX)
    return dlb_fail(err, DLB_E_SHAPE, "%lld elements of %zu bytes overflow the address space",
                    (long long)numel, itemsize);
  *nbytes = (size_t)bytes;
  return DLB_OK;
}

void dlb_shape_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    strides[d] = s;
    /* Only called on shapes whose numel was checked, so this cannot overflow. */
    if (shape[d] > 1) s *= shape[d];
  }
}

static int64_t magnitude(int64_t x) { return x < 0 ? -x : x; }

/* How the operands order dims a and b (extents above 1): 1 when some
 * operand steps along both and every such one steps farther along a (a
 * goes outside), -1 when one steps no farther along a, 0 when none steps
 * along both (NumPy's nditer: the first operand that has a say decides,
 * any later one can only keep the order). */
static int vote(int nop, const int64_t *const *strides, int a, int b) {
  int said = 0;
  for (int k = 0; k < nop; k++) {
    int64_t sa = magnitude(strides[k][a]), sb = magnitude(strides[k][b]);
    if (sa == 0 || sb == 0) continue;
    if (sa <= sb) return -1;
    said = 1;
  }
  return said;
}

void dlb_shape_keep_order_strides(int ndim, const int64_t *shape, int nop,
                                  const int64_t *const *strides, int64_t *out) {
  int order[DLB_MAX_NDIM]; /* the dims, innermost first */
  int64_t s = 1;
  DLB_ASSERT(ndim >= 0 && ndim <= DLB_MAX_NDIM);
  /* NumPy's insertion sort (nditer's find_best_axis_ordering): from C
   * order, each dim moves inwards past the dims the operands put outside
   * it, and past those they do not order against it. */
  for (int i = 0; i < ndim; i++) order[i] = ndim - 1 - i;
  for (int i = 1; i < ndim; i++) {
    int d = order[i], at = i;
    for (int j = i - 1; j >= 0 && shape[d] > 1; j--) {
      int v = shape[order[j]] > 1 ? vote(nop, strides, order[j], d) : 0;
      if (v < 0) break;
      if (v > 0) at = j;
    }
    memmove(order + at + 1, order + at, (size_t)(i - at) * sizeof order[0]);
    order[at] = d;
  }
  for (int i = 0; i < ndim; i++) {
    out[order[i]] = s;
    if (shape[order[i]] > 1) s *= shape[order[i]]; /* numel was checked: no overflow */
  }
}

int dlb_shape_equal(int ndim_a, const int64_t *a, int ndim_b, const int64_t *b) {
  if (ndim_a != ndim_b) return 0;
  for (int d = 0; d < ndim_a; d++) /* a loop: dims are few, a memcmp call costs more */
    if (a[d] != b[d]) return 0;
  return 1;
}

int dlb_shape_is_contiguous(int ndim, const int64_t *shape, const int64_t *strides) {
  int64_t expected = 1;
  for (int d = 0; d < ndim; d++)
    if (shape[d] == 0) return 1;
  for (int d = ndim - 1; d >= 0; d--) {
    if (shape[d] == 1) continue;
    if (strides[d] != expected) return 0;
    expected *= shape[d];
  }
  return 1;
}

dlb_status dlb_shape_reach(int ndim, const int64_t *shape, const int64_t *strides, int64_t *lo,
                           int64_t *hi, dlb_error *err) {
  int64_t low = 0, high = 0;
  for (int d = 0; d < ndim; d++)
    if (shape[d] == 0) {
      *lo = *hi = 0;
      return DLB_OK;
    }
  for (int d = 0; d < ndim; d++) {
    int64_t span;
    if (shape[d] <= 1 || strides[d] == 0) continue;
    if (__builtin_mul_overflow(shape[d] - 1, strides[d], &span))
      return dlb_fail(err, DLB_E_SHAPE, "dimension %d: extent times stride overflows", d + 1);
    if (span > 0 ? __builtin_add_overflow(high, span, &high)
                 : __builtin_add_overflow(low, span, &low))
      return dlb_fail(err, DLB_E_SHAPE, "the strides reach beyond any addressable range");
  }
  *lo = low;
  *hi = high;
  return DLB_OK;
}

/* NumPy's _attempt_nocopy_reshape: match groups of old and new dims whose
 * extents multiply to the same count; each old group must be contiguous
 * among itself for the new group to be laid over it. Extent-1 dims are
 * dropped first and get a harmless stride. */
int dlb_shape_reshape_strides(int ndim, const int64_t *shape, const int64_t *strides, int new_ndim,
                              const int64_t *new_shape, int64_t *new_strides) {
  int64_t old_shape[DLB_MAX_NDIM], old_strides[DLB_MAX_NDIM];
  int old_ndim = 0;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] == 0) {
      dlb_shape_contiguous_strides(new_ndim, new_shape, new_strides);
      return 1;
    }
    if (shape[d] != 1) {
      old_shape[old_ndim] = shape[d];
      old_strides[old_ndim] = strides[d];
      old_ndim++;
    }
  }
  for (int d = 0; d < new_ndim; d++)
    if (new_shape[d] == 0) {
      dlb_shape_contiguous_strides(new_ndim, new_shape, new_strides);
      return 1;
    }
  int oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < new_ndim && oi < old_ndim) {
    int64_t np = new_shape[ni], op = old_shape[oi];
    while (np != op) {
      if (np < op) np *= new_shape[nj++];
      else op *= old_shape[oj++];
    }
    for (int ok = oi; ok < oj - 1; ok++) {
      int64_t step;
      if (__builtin_mul_overflow(old_shape[ok + 1], old_strides[ok + 1], &step) ||
          old_strides[ok] != step)
        return 0;
    }
    new_strides[nj - 1] = old_strides[oj - 1];
    /* Overflow here needs a stride that only extent-1 dims allowed (an
     * import's): no view then; a copy has plain strides. */
    for (int nk = nj - 1; nk > ni; nk--)
      if (__builtin_mul_overflow(new_strides[nk], new_shape[nk], &new_strides[nk - 1])) return 0;
    ni = nj++;
    oi = oj++;
  }
  /* Trailing extent-1 dims of the new shape. */
  int64_t last = ni > 0 ? new_strides[ni - 1] : 1;
  for (int nk = ni; nk < new_ndim; nk++) new_strides[nk] = last;
  return 1;
}

void dlb_shape_text(int ndim, const int64_t *shape, char *out, size_t size) {
  size_t len = (size_t)snprintf(out, size, "(");
  for (int d = 0; d < ndim && len < size; d++)
    len += (size_t)snprintf(out + len, size - len, d ? ", %lld" : "%lld", (long long)shape[d]);
  if (len < size) snprintf(out + len, size - len, ")");
}
