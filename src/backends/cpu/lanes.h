/* lanes.h -- the host kernels' walk over the lanes of tensors along one
 * dim (sorting, indexing and scanning run lane by lane): every index of
 * the other dims, in row-major order, with each tensor's address there. */
#ifndef DLB_BACKENDS_CPU_LANES_H
#define DLB_BACKENDS_CPU_LANES_H

#include <stdint.h>
#include "../../dlbridge.h"

#define DLB_LANES_MAX 4

typedef struct dlb_lanes {
  int nop, ndim; /* the outer dims: all but the lane's */
  int64_t shape[DLB_MAX_NDIM];
  int64_t strides[DLB_LANES_MAX][DLB_MAX_NDIM]; /* bytes */
  char *at[DLB_LANES_MAX];                      /* each tensor at the current index */
  int64_t index[DLB_MAX_NDIM];
  int64_t left; /* lanes not yet visited */
} dlb_lanes;

/* A tensor's element size in bytes (bool is one byte). */
static inline int64_t dlb_tensor_itemsize(const dlb_tensor *t) { return (t->dtype.bits + 7) / 8; }

/* A tensor's byte stride along d. */
static inline int64_t dlb_tensor_stride(const dlb_tensor *t, int d) {
  return t->strides[d] * dlb_tensor_itemsize(t);
}

/* Sets up the walk of nop tensors (shaped alike but along dim, where their
 * extents may differ) over every index of t[0]'s dims but dim. */
static inline void dlb_lanes_init(dlb_lanes *l, int nop, const dlb_tensor *const *t, int dim) {
  int n = 0;
  l->nop = nop;
  l->left = 1;
  for (int d = 0; d < t[0]->ndim; d++) {
    if (d == dim) continue;
    l->shape[n] = t[0]->shape[d];
    l->left *= t[0]->shape[d]; /* no overflow: a product of extents of live arrays */
    for (int k = 0; k < nop; k++) l->strides[k][n] = dlb_tensor_stride(t[k], d);
    l->index[n] = 0;
    n++;
  }
  l->ndim = n;
  for (int k = 0; k < nop; k++) l->at[k] = (char *)t[k]->data;
}

/* The next lane: its tensors' addresses into data; 0 when none is left. */
static inline int dlb_lanes_next(dlb_lanes *l, char **data) {
  if (l->left <= 0) return 0;
  for (int k = 0; k < l->nop; k++) data[k] = l->at[k];
  if (--l->left == 0) return 1;
  for (int d = l->ndim - 1; d >= 0; d--) { /* odometer step */
    for (int k = 0; k < l->nop; k++) l->at[k] += l->strides[k][d];
    if (++l->index[d] < l->shape[d]) break;
    for (int k = 0; k < l->nop; k++) l->at[k] -= l->strides[k][d] * l->shape[d];
    l->index[d] = 0;
  }
  return 1;
}

#endif
