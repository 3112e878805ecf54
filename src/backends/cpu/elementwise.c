/* elementwise.c -- the host's element-wise kernel (dlb_kernels.elementwise):
 * a call the core planned, walked with the typed loops of loops_arith.c and
 * loops_math.c, casting (or aligning) operands in buffered chunks where
 * their dtypes or addresses are not the loop's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../core/work.h"
#include "casts.h"
#include "cpu.h"
#include "loops.h"

#define CHUNK 1024 /* elements per buffered step (NumPy: 8192) */

#define OP_NAME(ID, name, ...) [DLB_OP_##ID] = #name,
static const char *const op_names[DLB_OP_COUNT] = {DLB_ELEMENTWISE_OPS(OP_NAME)};
#undef OP_NAME

dlb_loop dlb_cpu_loop(dlb_op op, dlb_dtype type) {
  dlb_loop k = dlb_arith_loop(op, type);
  return k ? k : dlb_math_loop(op, type);
}

/* The dtype of a tensor or loop the core made (always one of dlbridge's). */
static dlb_dtype dtype_of(DLDataType t) { return dlb_dtype_of_dl(t); }

/* State of a walk whose operands need casting (or aligning) around the kernel. */
typedef struct buffered {
  dlb_loop kernel;
  int nop;
  dlb_dtype actual[4], loop[4]; /* operand 0 is the output */
  int cast[4];
  dlb_cast_plan plan[4]; /* operand k into its loop dtype; the loop's output into operand 0 */
  char *scratch[4];
  dlb_error err;
  dlb_status status; /* a failed cast */
} buffered;

static int buffered_loop(char **data, const int64_t *steps, int64_t n, void *aux) {
  buffered *b = aux;
  char *ptr[4];
  int64_t step[4];
  for (int64_t done = 0; done < n;) {
    int64_t m = n - done < CHUNK ? n - done : CHUNK;
    for (int k = 1; k < b->nop; k++) {
      const char *src = data[k] + done * steps[k];
      if (!b->cast[k]) {
        ptr[k] = (char *)src;
        step[k] = steps[k];
        continue;
      }
      /* A stride-0 operand is cast once. */
      int64_t count = steps[k] == 0 ? 1 : m;
      size_t isz = dlb_dtype_get(b->loop[k])->itemsize;
      if ((b->status = dlb_cast_plan_run(&b->plan[k], b->scratch[k], (ptrdiff_t)isz, src,
                                         (ptrdiff_t)steps[k], (size_t)count, &b->err)) != DLB_OK)
        return -1;
      ptr[k] = b->scratch[k];
      step[k] = steps[k] == 0 ? 0 : (int64_t)isz;
    }
    if (b->cast[0]) {
      ptr[0] = b->scratch[0];
      step[0] = (int64_t)dlb_dtype_get(b->loop[0])->itemsize;
    } else {
      ptr[0] = data[0] + done * steps[0];
      step[0] = steps[0];
    }
    int st = b->kernel(ptr, step, m, NULL);
    if (st) return st;
    if (b->cast[0] && (b->status = dlb_cast_plan_run(
                           &b->plan[0], data[0] + done * steps[0], (ptrdiff_t)steps[0],
                           b->scratch[0], (ptrdiff_t)step[0], (size_t)m, &b->err)) != DLB_OK)
      return -1;
    done += m;
  }
  return 0;
}

/* Whether elements of t at p with byte strides can be read as C objects. */
static int aligned(dlb_dtype t, const char *p, int ndim, const int64_t *strides) {
  size_t isz = dlb_dtype_get(t)->itemsize;
  /* Item sizes are powers of two: a mask, not divisions (perf: half of this
   * function's time in a 10-element a + b went to the divides). */
  uint64_t mask = (isz > 8 ? 8 : isz) - 1, bits = (uintptr_t)p;
  for (int d = 0; d < ndim; d++) bits |= (uint64_t)strides[d];
  return (bits & mask) == 0;
}

/* A loop's error code (or a failed cast) as the call's error. */
static dlb_status loop_failed(dlb_elementwise_call *call, int code, const buffered *b) {
  const char *name = op_names[call->op];
  if (code == DLB_ITER_STOPPED) return DLB_OK; /* the host's interrupt: the core says so */
  if (code == -1) {
    dlb_kernel_error_from(&call->error, &b->err);
    return b->status;
  }
  if (code == DLB_LOOP_NEGATIVE_POWER)
    snprintf(call->error.message, sizeof call->error.message,
             "%s: integers to negative integer powers are not allowed", name);
  else snprintf(call->error.message, sizeof call->error.message, "%s failed", name);
  return DLB_E_VALUE;
}

/* Byte strides of t into out (t has out's shape; inputs broadcast with 0). */
static void byte_strides(const dlb_tensor *t, int ndim, int64_t *out) {
  /* Through uint64: a size-0 tensor's strides are unbounded (never walked). */
  uint64_t item = dlb_dtype_get(dtype_of(t->dtype))->itemsize;
  for (int d = 0; d < ndim; d++) out[d] = (int64_t)((uint64_t)t->strides[d] * item);
}

dlb_status dlb_cpu_elementwise(void *ctx, dlb_elementwise_call *call) {
  int nop = call->nin + 1, ndim = call->out.ndim, need_buffer = 0, code;
  const int64_t *shape = call->out.shape;
  int64_t stride_store[4][DLB_MAX_NDIM];
  const int64_t *strides[4];
  char *data[4];
  buffered b;
  dlb_iter it;
  (void)ctx;
  b.kernel =
      dlb_cpu_loop((dlb_op)call->op, dtype_of(call->loop_in[call->op == DLB_OP_WHERE ? 1 : 0]));
  if (!b.kernel) {
    snprintf(call->error.message, sizeof call->error.message, "%s: no host loop for these dtypes",
             op_names[call->op]);
    return DLB_E_UNSUPPORTED;
  }
  b.nop = nop;
  b.actual[0] = dtype_of(call->out.dtype);
  b.loop[0] = dtype_of(call->loop_out);
  byte_strides(&call->out, ndim, stride_store[0]);
  data[0] = call->out.data;
  for (int k = 0; k < call->nin; k++) {
    b.loop[k + 1] = dtype_of(call->loop_in[k]);
    if (call->is_scalar[k]) { /* one value, already of the loop dtype */
      b.actual[k + 1] = b.loop[k + 1];
      memset(stride_store[k + 1], 0, (size_t)ndim * sizeof stride_store[k + 1][0]);
      data[k + 1] = (char *)call->scalar[k];
    } else {
      b.actual[k + 1] = dtype_of(call->in[k].dtype);
      byte_strides(&call->in[k], ndim, stride_store[k + 1]);
      data[k + 1] = call->in[k].data;
    }
  }
  for (int k = 0; k < nop; k++) {
    strides[k] = stride_store[k];
    b.cast[k] = b.actual[k] != b.loop[k] || !aligned(b.actual[k], data[k], ndim, strides[k]);
    if (b.cast[k])
      b.plan[k] =
          k ? dlb_cast_plan_for(b.loop[k], b.actual[k]) : dlb_cast_plan_for(b.actual[0], b.loop[0]);
    need_buffer |= b.cast[k];
  }
  /* One short run: no iterator to set up (small arrays' case). A long one
   * goes through the iterator, which looks at the interrupt between pieces. */
  if (!need_buffer && (ndim == 0 || (ndim == 1 && shape[0] <= DLB_WORK_CHECK_EVERY))) {
    int64_t steps[4];
    for (int k = 0; k < nop; k++) steps[k] = ndim ? strides[k][0] : 0;
    code = ndim && shape[0] == 0 ? 0 : b.kernel(data, steps, ndim ? shape[0] : 1, NULL);
    return code ? loop_failed(call, code, &b) : DLB_OK;
  }
  dlb_iter_init(&it, nop, ndim, shape, data, strides);
  if (!need_buffer) {
    code = dlb_iter_run_any(&it, b.kernel, NULL);
    return code ? loop_failed(call, code, &b) : DLB_OK;
  }
  for (int k = 0; k < nop; k++) {
    b.scratch[k] = NULL;
    if (b.cast[k] && !(b.scratch[k] = malloc(CHUNK * dlb_dtype_get(b.loop[k])->itemsize))) {
      for (int j = 0; j < k; j++) free(b.scratch[j]);
      snprintf(call->error.message, sizeof call->error.message, "%s: no memory for a cast buffer",
               op_names[call->op]);
      return DLB_E_OUT_OF_MEMORY;
    }
  }
  code = dlb_iter_run_any(&it, buffered_loop, &b);
  for (int k = 0; k < nop; k++) free(b.scratch[k]);
  return code ? loop_failed(call, code, &b) : DLB_OK;
}
