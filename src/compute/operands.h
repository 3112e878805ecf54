/* operands.h -- what every compute operation checks first: that its arrays
 * live on one device whose kernels can run it, their broadcast
 * shape, and the array a result goes into. No Lua here. */
#ifndef DLB_COMPUTE_OPERANDS_H
#define DLB_COMPUTE_OPERANDS_H

#include "../core/backend.h"
#include "types.h"

/* Where an operation's result lives. */
typedef struct dlb_placement {
  dlb_backend *backend; /* not retained; wrapped host memory counts as the cpu backend */
  int device_id;
} dlb_placement;

/*
 * Checks the n operands (scalars are skipped): every array live
 * (DLB_E_DELETED otherwise), all on one device (DLB_E_ARGUMENT naming both
 * devices otherwise: no silent cross-device copies), and that the kernels
 * computing on that memory (dlb_kernels_for) have the entry at `entry`
 * (offsetof(dlb_kernels, reduce), ...; DLB_E_UNSUPPORTED with a hint to
 * device_put to "cpu" otherwise). DLB_ANY_MEMORY: every memory passes
 * (copies, which every backend can do); so does an empty array on memory
 * the host could address. Sets *where to that device, or to (cpu, 0) when
 * no operand is an array. op names the operation in messages.
 */
#define DLB_ANY_MEMORY ((size_t)-1)
dlb_status dlb_check_operands_for(int n, const dlb_operand *in, dlb_backend *cpu, size_t entry,
                                  dlb_placement *where, const char *op, dlb_error *err);

/* dlb_check_operands_for over n arrays (at most 4; NULL ones are skipped). */
dlb_status dlb_check_arrays_for(int n, const dlb_array *const *arrays, dlb_backend *cpu,
                                size_t entry, dlb_placement *where, const char *op, dlb_error *err);

/* NumPy broadcasting of the n operands' shapes (scalars are 0-d):
 * *ndim and shape[] get the result; DLB_E_SHAPE names the shapes that do
 * not broadcast. */
dlb_status dlb_broadcast_shapes(int n, const dlb_operand *in, int *ndim, int64_t *shape,
                                const char *op, dlb_error *err);

/* NumPy broadcasting of two stacks' leading dims, a's first na and b's
 * first nb (right-aligned), into (*nbatch, batch). DLB_E_SHAPE, naming op
 * and both shapes, where they do not broadcast. */
dlb_status dlb_broadcast_stacks(const dlb_array *a, int na, const dlb_array *b, int nb, int *nbatch,
                                int64_t *batch, const char *op, dlb_error *err);

/* Strides (in elements) of a broadcast to (ndim, shape): 0 along
 * broadcast dims (a must broadcast to shape). */
void dlb_broadcast_strides(const dlb_array *a, int ndim, const int64_t *shape, int64_t *strides);

/*
 * Checks an `out` array given for a result of dtype result and shape
 * (ndim, shape): live, writable (DLB_E_READ_ONLY), exactly that shape
 * (DLB_E_SHAPE: out does not broadcast), a dtype the result casts to under
 * same_kind (DLB_E_DTYPE), on device where (DLB_E_ARGUMENT; wrapped host
 * memory with no backend counts as where when the host's kernels compute
 * there).
 */
dlb_status dlb_check_out(const dlb_array *out, dlb_dtype result, int ndim, const int64_t *shape,
                         const dlb_placement *where, const char *op, dlb_error *err);
/* DLB_E_UNSUPPORTED (with a hint to device_put to "cpu") unless the host
 * addresses a's memory; for the operations that run on the host whatever
 * backend holds their operands (convolve, linalg). */
dlb_status dlb_check_host_memory(const dlb_array *a, const char *op, dlb_error *err);

/* Whether writing a could change what reading b sees (the byte ranges of
 * their elements intersect in one buffer). */
int dlb_arrays_overlap(const dlb_array *a, const dlb_array *b);

/* Whether a and b view exactly the same elements in the same layout (an
 * in-place operation, safe element by element). */
int dlb_arrays_same_layout(const dlb_array *a, const dlb_array *b);

#endif
