/* test_device_kernels.c -- a backend's own kernel table (dlb_backend_ops.kernels,
 * version 2): compute on memory the host cannot address is planned by the
 * core and handed to the backend's entries (element-wise, reductions,
 * matmul, casts, fills); without an entry the operation raises UNSUPPORTED
 * with a device_put hint and nothing is copied behind the caller's back;
 * mixing devices raises ARGUMENT; a kernel's failure reaches the caller
 * with its message. The test backend's memory is malloc'd (opaque to the
 * core: no host_pointer); its kernels run the host's on that memory. */
#define _POSIX_C_SOURCE 200809L
#include "compute/elementwise.h"
#include "compute/matmul.h"
#include "compute/reduce.h"
#include "compute/scan.h"
#include "compute/scatter.h"
#include "compute/select.h"
#include "compute/sort.h"
#include "core/copy.h"
#define FIXTURES_CPU
#include "fixtures.h"

/* Calls per entry: elementwise, reduce, matmul, cast, fill. */
static int calls[5];
static int fail_next; /* the next element-wise call fails */

/* t with its host address: the handle is malloc'd memory. */
static void on_host(dlb_tensor *t) { t->data = (char *)t->handle + t->offset; }

static dlb_status dev_elementwise(void *ctx, dlb_elementwise_call *call) {
  CHECK(ctx == &calls); /* the backend's own ctx */
  calls[0]++;
  if (fail_next) {
    fail_next = 0;
    snprintf(call->error.message, sizeof call->error.message, "the engine ran out of lanes");
    call->error.hint = "ask for fewer lanes";
    return DLB_E_BACKEND_FAILURE;
  }
  CHECK(call->out.data == NULL); /* the core has no host address for it */
  on_host(&call->out);
  for (int k = 0; k < call->nin; k++)
    if (!call->is_scalar[k]) on_host(&call->in[k]);
  return dlb_host_kernels()->elementwise(NULL, call);
}

static dlb_status dev_reduce(void *ctx, dlb_reduce_call *call) {
  calls[1]++;
  on_host(&call->in);
  if (call->out.handle) on_host(&call->out); /* else: one element in host memory */
  return dlb_host_kernels()->reduce(NULL, call);
}

static dlb_status dev_matmul(void *ctx, dlb_matmul_call *call) {
  calls[2]++;
  on_host(&call->a);
  on_host(&call->b);
  on_host(&call->out);
  return dlb_host_kernels()->matmul(NULL, call);
}

static dlb_status dev_cast(void *ctx, const dlb_tensor *dst, const dlb_tensor *src, void *queue,
                           dlb_kernel_error *e) {
  dlb_tensor d = *dst, s = *src;
  calls[3]++;
  on_host(&d);
  on_host(&s);
  return dlb_host_kernels()->cast(NULL, &d, &s, queue, e);
}

static dlb_status dev_fill(void *ctx, const dlb_tensor *dst, const void *value, void *queue,
                           dlb_kernel_error *e) {
  dlb_tensor d = *dst;
  calls[4]++;
  on_host(&d);
  return dlb_host_kernels()->fill(NULL, &d, value, queue, e);
}

/* A version-1 table (read as a prefix: sorting and the rest are not its). */
static const dlb_kernels dev_kernels = {.version = 1,
                                        .elementwise = dev_elementwise,
                                        .reduce = dev_reduce,
                                        .matmul = dev_matmul,
                                        .cast = dev_cast,
                                        .fill = dev_fill};

/* A float64 array of n values v on backend. */
static dlb_array on(dlb_backend *backend, int64_t n, const double *v) {
  dlb_array a;
  a.buffer = NULL;
  CHECK_EQ_INT(dlb_array_allocate(&a, backend, 0, DLB_FLOAT64, 1, &n, 0, &err), DLB_OK);
  CHECK_EQ_INT(dlb_array_write_from(&a, v, DLB_FLOAT64, &err), DLB_OK);
  return a;
}

/* No kernels: every compute entry is UNSUPPORTED with the device_put hint. */
static void test_without_kernels(void) {
  dlb_backend_ops ops = opaque_ops("engine");
  dlb_backend *dev;
  double x[3] = {1, 2, 3};
  dlb_reduce_options o;
  CHECK_EQ_INT(dlb_backend_create(&ops, NULL, &dev, &err), DLB_OK);
  {
    dlb_array a = on(dev, 3, x), r = {0};
    dlb_operand in[2] = {{.array = &a}, {.array = &a}};
    CHECK_EQ_INT(dlb_elementwise(DLB_OP_ADD, in, &r, cpu, &err), DLB_E_UNSUPPORTED);
    CHECK(strstr(err.hint, "device_put") != NULL);
    CHECK(strcmp(err.backend, "engine") == 0);
    memset(&o, 0, sizeof o);
    o.dims = DLB_REDUCE_ALL_DIMS;
    CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_SUM, &a, &o, &r, cpu, &err), DLB_E_UNSUPPORTED);
    CHECK(strstr(err.hint, "device_put") != NULL);
    CHECK_EQ_INT(dlb_dot(&a, &a, &r, cpu, &err), DLB_E_UNSUPPORTED);
    CHECK(r.buffer == NULL);
    dlb_array_release(&a);
  }
  dlb_backend_release(dev);
  for (int k = 0; k < 5; k++) CHECK_EQ_INT(calls[k], 0);
}

static void test_elementwise(dlb_backend *dev) {
  double x[3] = {1, 2, 3}, y[3] = {10, 20, 30}, got[3];
  dlb_array a = on(dev, 3, x), b = on(dev, 3, y), h = on(cpu, 3, x), r = {0};
  dlb_operand in[2] = {{.array = &a}, {.array = &b}};
  /* planned here, run there; the result stays on the device */
  CHECK_EQ_INT(dlb_elementwise(DLB_OP_ADD, in, &r, cpu, &err), DLB_OK);
  CHECK_EQ_INT(calls[0], 1);
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
  CHECK_EQ_INT(calls[0], 2);
  /* one operand on the host, one on the device: no silent copy */
  in[1] = (dlb_operand){.array = &h};
  CHECK_EQ_INT(dlb_elementwise(DLB_OP_ADD, in, &r, cpu, &err), DLB_E_ARGUMENT);
  /* an out in host memory for device operands: ARGUMENT */
  in[1] = (dlb_operand){.array = &b};
  CHECK_EQ_INT(dlb_elementwise(DLB_OP_ADD, in, &h, cpu, &err), DLB_E_ARGUMENT);
  CHECK(strstr(err.hint, "device") != NULL);
  /* the kernel's failure: its code, message, hint and backend */
  dlb_array_release(&r);
  fail_next = 1;
  CHECK_EQ_INT(dlb_elementwise(DLB_OP_ADD, in, &r, cpu, &err), DLB_E_BACKEND_FAILURE);
  CHECK(strstr(err.message, "out of lanes") != NULL);
  CHECK(err.hint && strcmp(err.hint, "ask for fewer lanes") == 0);
  CHECK(strcmp(err.backend, "engine") == 0);
  CHECK(r.buffer == NULL); /* the result it allocated is gone */
  dlb_array_release(&a);
  dlb_array_release(&b);
  dlb_array_release(&h);
}

static void test_reduce_matmul_cast_fill(dlb_backend *dev) {
  double x[3] = {1, 2, 3}, got[3];
  float f[3];
  dlb_array a = on(dev, 3, x), r = {0}, c = {0};
  dlb_reduce_options o;
  dlb_scalar v;
  memset(&o, 0, sizeof o);
  o.dims = DLB_REDUCE_ALL_DIMS;
  /* a reduction into a device array */
  CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_SUM, &a, &o, &r, cpu, &err), DLB_OK);
  CHECK_EQ_INT(calls[1], 1);
  CHECK(r.buffer && r.buffer->backend == dev);
  CHECK_EQ_INT(dlb_array_read_into(&r, got, DLB_FLOAT64, &err), DLB_OK);
  CHECK(got[0] == 6);
  dlb_array_release(&r);
  /* a dot product through the matmul entry */
  CHECK_EQ_INT(dlb_dot(&a, &a, &r, cpu, &err), DLB_OK);
  CHECK_EQ_INT(calls[2], 1);
  CHECK_EQ_INT(dlb_array_read_into(&r, got, DLB_FLOAT64, &err), DLB_OK);
  CHECK(got[0] == 14);
  dlb_array_release(&r);
  /* astype through the cast entry: the copy stays on the device */
  CHECK_EQ_INT(dlb_array_clone(&c, &a, DLB_FLOAT32, &err), DLB_OK);
  CHECK_EQ_INT(calls[3], 1);
  CHECK(c.buffer->backend == dev);
  CHECK_EQ_INT(dlb_array_read_into(&c, f, DLB_FLOAT32, &err), DLB_OK);
  CHECK(f[0] == 1 && f[2] == 3);
  /* a fill through the fill entry */
  v = s_float(7);
  CHECK_EQ_INT(dlb_array_fill(&c, &v, &err), DLB_OK);
  CHECK_EQ_INT(calls[4], 1);
  CHECK_EQ_INT(dlb_array_read_into(&c, f, DLB_FLOAT32, &err), DLB_OK);
  CHECK(f[0] == 7 && f[1] == 7 && f[2] == 7);
  dlb_array_release(&c);
  dlb_array_release(&a);
}

/* A version-1 table is read as a prefix: the backend holds a copy with the
 * version-2 entries NULL, so sorting, indexing by arrays, scans and counts
 * are UNSUPPORTED there while version 1's operations still run. */
static void test_version_1_table(dlb_backend *dev) {
  double x[3] = {3, 1, 2};
  dlb_array a = on(dev, 3, x), v = {0}, idx = {0}, r = {0};
  dlb_sort_options so = {0, 0, 0, -1, 1};
  dlb_scan_options sc = {0, 0, DLB_FLOAT64};
  int64_t one = 1;
  CHECK(dev->ops.kernels != &dev_kernels); /* the copy, not the host's struct */
  CHECK(dev->ops.kernels->elementwise == dev_elementwise);
  CHECK(dev->ops.kernels->sort == NULL && dev->ops.kernels->count == NULL);
  CHECK_EQ_INT(dlb_sort(&a, &so, &v, NULL, cpu, &err), DLB_E_UNSUPPORTED);
  CHECK(strstr(err.hint, "device_put") != NULL);
  CHECK(v.buffer == NULL);
  CHECK_EQ_INT(dlb_scan(DLB_SCAN_SUM, &a, &sc, &r, cpu, &err), DLB_E_UNSUPPORTED);
  CHECK_EQ_INT(dlb_array_allocate(&idx, cpu, 0, DLB_INT64, 1, &one, 1, &err), DLB_OK);
  CHECK_EQ_INT(dlb_argwhere(&a, 1, &r, cpu, &err), DLB_E_UNSUPPORTED);
  CHECK_EQ_INT(dlb_bincount(&idx, NULL, 0, &r, cpu, &err), DLB_OK); /* idx is the host's */
  CHECK_EQ_INT(dlb_scatter(DLB_SCATTER_ADD, &a, &idx, &a, 0, 1, cpu, &err), DLB_E_UNSUPPORTED);
  dlb_array_release(&r);
  dlb_array_release(&idx);
  dlb_array_release(&a);
}

/* A version-2 table (no scatter) is read as a prefix too: its own entries
 * are kept, scatter is NULL and grouped updates are UNSUPPORTED there, with
 * nothing written. */
static void test_version_2_table(void) {
  dlb_kernels v2 = dev_kernels;
  dlb_backend_ops ops = opaque_ops("engine2");
  dlb_backend *dev2;
  double x[3] = {3, 1, 2}, back[3];
  dlb_array a, idx = {0};
  int64_t one = 1;
  v2.version = 2;
  ops.kernels = &v2;
  CHECK_EQ_INT(dlb_backend_create(&ops, &calls, &dev2, &err), DLB_OK);
  CHECK(dev2->ops.kernels != &v2 && dev2->ops.kernels->scatter == NULL);
  CHECK(dev2->ops.kernels->elementwise == dev_elementwise);
  a = on(dev2, 3, x);
  CHECK_EQ_INT(dlb_array_allocate(&idx, dev2, 0, DLB_INT64, 1, &one, 1, &err), DLB_OK);
  CHECK_EQ_INT(dlb_scatter(DLB_SCATTER_ADD, &a, &idx, &a, 0, 1, cpu, &err), DLB_E_UNSUPPORTED);
  CHECK(strstr(err.hint, "device_put") != NULL);
  CHECK_EQ_INT(dlb_array_read_into(&a, back, DLB_FLOAT64, &err), DLB_OK);
  CHECK(back[0] == 3 && back[1] == 1 && back[2] == 2);
  dlb_array_release(&idx);
  dlb_array_release(&a);
  dlb_backend_release(dev2);
}

int main(void) {
  dlb_backend_ops ops = opaque_ops("engine");
  dlb_backend *dev;
  if (!cpu_open()) return 1;
  test_without_kernels();
  ops.kernels = &dev_kernels;
  CHECK_EQ_INT(dlb_backend_create(&ops, &calls, &dev, &err), DLB_OK);
  test_elementwise(dev);
  test_reduce_matmul_cast_fill(dev);
  test_version_1_table(dev);
  dlb_backend_release(dev);
  test_version_2_table();
  cpu_close();
  return check_done("test_device_kernels");
}
