/* test_device_kernels.c -- a device backend's own kernels plug into the
 * element-wise driver: operations on memory the host cannot address are
 * planned as on the host and handed to the backend's table; without a table
 * they raise UNSUPPORTED; mixing devices raises ARGUMENT; other operations
 * (reductions) stay UNSUPPORTED. The test table "computes" by staging
 * through the host, which is enough to check what it is handed. */
#define _POSIX_C_SOURCE 200809L
#include "compute/device_kernels.h"
#include "compute/reduce.h"
#include "core/copy.h"
#define FIXTURES_CPU
#include "fixtures.h"

static int kernel_calls;

/* A copy of a (on any device) in host memory. */
static dlb_status to_host(const dlb_array *a, dlb_array *out, dlb_error *e) {
  out->buffer = NULL;
  return dlb_array_clone_to(out, a, cpu, 0, e);
}

/* The test backend's element-wise kernel: stage, compute on the host, copy back. */
static dlb_status staged_elementwise(dlb_backend *backend, const dlb_elementwise_plan *plan,
                                     dlb_array *out, dlb_error *e) {
  dlb_operand in[3];
  dlb_array host[3], result;
  int nin = dlb_op_get(plan->op)->nin;
  dlb_status st = DLB_OK;
  kernel_calls++;
  CHECK(backend == plan->where.backend);
  for (int k = 0; k < 3; k++) host[k].buffer = NULL;
  result.buffer = NULL;
  for (int k = 0; k < nin && st == DLB_OK; k++) {
    in[k] = plan->in[k];
    if (in[k].array && (st = to_host(in[k].array, &host[k], e)) == DLB_OK) in[k].array = &host[k];
  }
  if (st == DLB_OK) st = dlb_elementwise(plan->op, in, &result, cpu, e);
  if (st == DLB_OK && !out->buffer)
    st = dlb_array_allocate(out, plan->where.backend, plan->where.device_id, plan->types.result,
                            plan->ndim, plan->shape, 0, e);
  if (st == DLB_OK) st = dlb_array_copy_into(out, &result, e);
  for (int k = 0; k < 3; k++) dlb_array_release(&host[k]);
  dlb_array_release(&result);
  return st;
}

static const dlb_compute_kernels staged_kernels = {staged_elementwise};

/* A float64 array of n values v on backend. */
static dlb_array on(dlb_backend *backend, int64_t n, const double *v) {
  dlb_array a;
  a.buffer = NULL;
  CHECK_EQ_INT(dlb_array_allocate(&a, backend, 0, DLB_FLOAT64, 1, &n, 0, &err), DLB_OK);
  CHECK_EQ_INT(dlb_array_write_from(&a, v, DLB_FLOAT64, &err), DLB_OK);
  return a;
}

int main(void) {
  dlb_backend_ops ops = opaque_ops("engine");
  dlb_backend *dev;
  double x[3] = {1, 2, 3}, y[3] = {10, 20, 30}, got[3];
  if (!cpu_open()) return 1;
  CHECK_EQ_INT(dlb_backend_create(&ops, NULL, &dev, &err), DLB_OK);
  {
    dlb_array a = on(dev, 3, x), b = on(dev, 3, y), h = on(cpu, 3, x), r;
    dlb_operand in[2] = {{.array = &a}, {.array = &b}};
    r.buffer = NULL;
    /* no kernels: UNSUPPORTED, with the device_put hint */
    CHECK_EQ_INT(dlb_elementwise(DLB_OP_ADD, in, &r, cpu, &err), DLB_E_UNSUPPORTED);
    CHECK(strstr(err.hint, "device_put") != NULL);
    CHECK_EQ_INT(kernel_calls, 0);
    /* with kernels: planned here, run there; the result stays on the device */
    dev->kernels = &staged_kernels;
    CHECK_EQ_INT(dlb_elementwise(DLB_OP_ADD, in, &r, cpu, &err), DLB_OK);
    CHECK_EQ_INT(kernel_calls, 1);
    CHECK(r.buffer && r.buffer->backend == dev);
    CHECK_EQ_INT(dlb_array_read_into(&r, got, DLB_FLOAT64, &err), DLB_OK);
    CHECK(got[0] == 11 && got[1] == 22 && got[2] == 33);
    /* a scalar operand and an out on the device (in place) */
    in[1] = (dlb_operand){.array = NULL, .scalar = s_float(0.5)};
    CHECK_EQ_INT(dlb_elementwise(DLB_OP_MULTIPLY, in, &a, cpu, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_read_into(&a, got, DLB_FLOAT64, &err), DLB_OK);
    CHECK(got[0] == 0.5 && got[2] == 1.5);
    /* planning errors come before the kernel: complex numbers have no order */
    in[1] = (dlb_operand){.array = NULL, .scalar = s_complex(0, 1)};
    CHECK_EQ_INT(dlb_elementwise(DLB_OP_LESS, in, &r, cpu, &err), DLB_E_DTYPE);
    CHECK_EQ_INT(kernel_calls, 2);
    /* one operand on the host, one on the device: no silent copy */
    in[1] = (dlb_operand){.array = &h};
    CHECK_EQ_INT(dlb_elementwise(DLB_OP_ADD, in, &r, cpu, &err), DLB_E_ARGUMENT);
    /* reductions bring no device kernel yet: UNSUPPORTED */
    {
      dlb_reduce_options o;
      dlb_array s;
      memset(&o, 0, sizeof o);
      o.dims = DLB_REDUCE_ALL_DIMS;
      s.buffer = NULL;
      CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_SUM, &a, &o, &s, cpu, &err), DLB_E_UNSUPPORTED);
    }
    dlb_array_release(&a);
    dlb_array_release(&b);
    dlb_array_release(&h);
    dlb_array_release(&r);
  }
  dlb_backend_release(dev);
  cpu_close();
  return check_done("test_device_kernels");
}
