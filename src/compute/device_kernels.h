/* device_kernels.h -- how a device backend plugs its own kernels into the
 * compute layer. No Lua here.
 *
 * Compute runs on the host's kernels when the host can address every
 * operand's memory. A backend whose memory the host cannot address (a GPU)
 * computes only through its own kernels: it sets backend->kernels to a table
 * of the functions below (any may be NULL), and operations on its arrays are
 * planned exactly as on the host (dtypes, broadcasting, scalars, checks) and
 * then handed to it. Without a table (or with a NULL entry) such operations
 * raise DLB_E_UNSUPPORTED with a hint to device_put to "cpu": there are no
 * silent cross-device copies.
 */
#ifndef DLB_COMPUTE_DEVICE_KERNELS_H
#define DLB_COMPUTE_DEVICE_KERNELS_H

#include "elementwise.h"

typedef struct dlb_compute_kernels {
  /* Runs a planned element-wise operation whose array operands all live on
   * plan->where (this backend and device); scalars are plan->scalars[k], an
   * element of loop dtype plan->types.in[k]. out is either released (then
   * allocate the result, dtype plan->types.result and shape plan->shape, on
   * plan->where) or a checked, writable array there of plan->shape, whose
   * dtype the result casts to (same_kind), which may be an input. Returns
   * DLB_OK, or fails as any core call (DLB_E_UNSUPPORTED for what it cannot
   * run), leaving a released out released. */
  dlb_status (*elementwise)(dlb_backend *backend, const dlb_elementwise_plan *plan,
                            dlb_array *out, dlb_error *err);
} dlb_compute_kernels;

#endif
