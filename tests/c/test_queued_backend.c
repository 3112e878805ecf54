/* test_queued_backend.c -- the core against a backend that behaves like a
 * device (tests/device/queued.h: worker-thread queues, random delays, and
 * poison in every queued destination until the work runs):
 *  (a) a strided transfer to or from host memory is ONE copy_strided call;
 *  (b) copies between device arrays are queued, and ordering holds under
 *      random delays, within a device and across devices;
 *  (c) an export to a consumer's queue makes that queue wait, and the host
 *      does not; a consumer that reads without the wait sees poison (the
 *      proof that the checks can fail);
 *  (d) a foreign tensor of the backend's device type is adopted (zero
 *      copy, forget once when freed); a pointer outside foreign memory is
 *      DLPACK_INVALID;
 *  (e) kernels (element-wise, reductions, matmul, casts, fills) run on the
 *      worker, in queue order, with the right results; a kernel failing
 *      there surfaces at the next wait;
 *  (f) a version 1 backend, its vtable cut off at the v1 fields with an
 *      unreadable page right after, registers and works.
 * Every run ends with the backend's own checks: no bad handle, range or
 * queue, no host copy racing queued work, no event left. */
#define _DEFAULT_SOURCE
#include <stddef.h>
#include <sys/mman.h>
#include <time.h>
#include "compute/elementwise.h"
#include "compute/matmul.h"
#include "compute/reduce.h"
#include "core/copy.h"
#include "core/dlpack.h"
#include "queued.h"
#define FIXTURES_CPU
#include "fixtures.h"

#define N 100 /* the matrices are N x N */

static dlb_queued *q;    /* the device backend's context */
static dlb_backend *dev; /* 2 devices, kernels and copy_strided */
static dlb_queued_stats before;

static void nap_ms(int ms) {
  struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}

/* A registered queued backend (its own reference to ctx). */
static dlb_backend *make_backend(dlb_queued *ctx) {
  dlb_backend_ops ops;
  dlb_backend *b = NULL;
  dlb_queued_retain(ctx);
  dlb_queued_ops(ctx, &ops);
  CHECK_EQ_INT(dlb_backend_create(&ops, ctx, &b, &err), DLB_OK);
  return b;
}

static dlb_queued *make_queued(const char *name, unsigned max_delay_us, unsigned omit) {
  dlb_queued_config c = {name, 2, 0, max_delay_us, 20240611u, dlb_host_kernels(), omit};
  dlb_queued *ctx = dlb_queued_new(&c);
  CHECK(ctx != NULL);
  return ctx;
}

/* stats now minus `before`, field by field of interest. */
static dlb_queued_stats delta(dlb_queued *ctx) {
  dlb_queued_stats s;
  dlb_queued_stats_get(ctx, &s);
#define D(f) s.f -= before.f
  D(copy_strided);
  D(strided_host);
  D(strided_queued);
  D(to_host);
  D(from_host);
  D(within);
  D(elementwise);
  D(reduce);
  D(matmul);
  D(cast);
  D(fill);
  D(ran_on_worker);
  D(poisoned);
  D(stream_wait);
  D(event_wait);
  D(host_blocks);
  D(adopt);
  D(adopt_refused);
  D(forget);
  D(kernel_failures);
#undef D
  return s;
}

static void mark(dlb_queued *ctx) { dlb_queued_stats_get(ctx, &before); }

/* An N x N float32 array on (b, id) holding 0, 1, 2, ... row-major. */
static dlb_array matrix(dlb_backend *b, int id) {
  static float v[N * N];
  int64_t shape[2] = {N, N};
  dlb_array a = {0};
  for (int k = 0; k < N * N; k++) v[k] = (float)k;
  CHECK_EQ_INT(dlb_array_allocate(&a, b, id, DLB_FLOAT32, 2, shape, 0, &err), DLB_OK);
  CHECK_EQ_INT(dlb_array_write_from(&a, v, DLB_FLOAT32, &err), DLB_OK);
  return a;
}

/* A float64 array of n values on (b, id). */
static dlb_array vec(dlb_backend *b, int id, int64_t n, const double *v) {
  dlb_array a = {0};
  CHECK_EQ_INT(dlb_array_allocate(&a, b, id, DLB_FLOAT64, 1, &n, 0, &err), DLB_OK);
  CHECK_EQ_INT(dlb_array_write_from(&a, v, DLB_FLOAT64, &err), DLB_OK);
  return a;
}

/* The transposed view of a 2-D array. */
static dlb_array transposed(const dlb_array *a) {
  static const int perm[2] = {1, 0};
  dlb_array t = view_of(a);
  CHECK_EQ_INT(dlb_view_permute(&t, perm, &err), DLB_OK);
  return t;
}

static int all_poison(const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t k = 0; k < n; k++)
    if (c[k] != DLB_QUEUED_POISON) return 0;
  return 1;
}

/* ---- (a) strided transfers: one call ------------------------------------------------ */

static void test_transfers_are_one_call(void) {
  static float got[N * N], back[N * N];
  dlb_array a = matrix(dev, 0), t = transposed(&a), c = {0};
  dlb_queued_stats d;
  mark(q);
  CHECK_EQ_INT(dlb_array_read_into(&t, got, DLB_FLOAT32, &err), DLB_OK);
  d = delta(q);
  CHECK_EQ_INT(d.copy_strided, 1); /* not 10,000 */
  CHECK_EQ_INT(d.strided_host, 1);
  CHECK_EQ_INT(d.to_host, 0);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) CHECK(got[i * N + j] == (float)(j * N + i));
  /* and back into the transposed view: one call */
  for (int k = 0; k < N * N; k++) back[k] = -(float)k;
  mark(q);
  CHECK_EQ_INT(dlb_array_write_from(&t, back, DLB_FLOAT32, &err), DLB_OK);
  CHECK_EQ_INT(delta(q).copy_strided, 1);
  CHECK_EQ_INT(dlb_array_read_into(&a, got, DLB_FLOAT32, &err), DLB_OK);
  CHECK(got[1] == -(float)N && got[N] == -1.0f);
  /* t:contiguous() on the device: one cast kernel, no transfer */
  mark(q);
  CHECK_EQ_INT(dlb_array_clone(&c, &t, DLB_FLOAT32, &err), DLB_OK);
  d = delta(q);
  CHECK_EQ_INT(d.cast, 1);
  CHECK_EQ_INT(d.copy_strided + d.to_host + d.from_host, 0);
  CHECK(c.buffer->backend == dev);
  CHECK_EQ_INT(dlb_array_read_into(&c, got, DLB_FLOAT32, &err), DLB_OK);
  CHECK(got[1] == -1.0f && got[N * N - 1] == -(float)(N * N - 1));
  dlb_array_release(&c);
  dlb_array_release(&t);
  dlb_array_release(&a);
}

/* ---- (b) device copies: queued, in order ------------------------------------------------ */

/* Copies without a cast kernel go through copy_strided, queued. */
static void test_device_copies_queue_in_order(void) {
  dlb_queued *cq = make_queued("qcopy", 40, DLB_QUEUED_NO_CAST);
  dlb_backend *b = make_backend(cq);
  static float got[N * N];
  int64_t shape[2] = {N, N};
  long poisoned = 0;
  dlb_queued_stats d;
  dlb_queued_stats_get(cq, &before);
  for (int it = 0; it < 60; it++) {
    dlb_array x = matrix(b, it % 2), t = transposed(&x), y = {0}, z = {0};
    CHECK_EQ_INT(dlb_array_allocate(&y, b, it % 2, DLB_FLOAT32, 2, shape, 0, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_allocate(&z, b, 1 - it % 2, DLB_FLOAT32, 2, shape, 0, &err), DLB_OK);
    CHECK_EQ_INT(dlb_array_copy_into(&y, &t, &err), DLB_OK); /* queued on y's device */
    CHECK_EQ_INT(dlb_array_copy_into(&z, &y, &err), DLB_OK); /* the other device waits for it */
    CHECK_EQ_INT(dlb_array_read_into(&z, got, DLB_FLOAT32, &err), DLB_OK);
    for (int k = 0; k < N * N; k += 97) CHECK(got[k] == (float)((k % N) * N + k / N));
    dlb_array_release(&z);
    dlb_array_release(&y);
    dlb_array_release(&t);
    dlb_array_release(&x);
  }
  d = delta(cq);
  CHECK_EQ_INT(d.strided_queued, 120);
  CHECK(d.event_wait >= 60); /* the second copy of each pair waited on the device */
  CHECK(d.poisoned >= 60);   /* destinations held poison until their copy ran */
  poisoned = d.poisoned;
  (void)poisoned;
  /* Deterministically: a paused queue leaves the copy's destination poisoned,
   * and the host that copied did not wait. */
  {
    dlb_array x = matrix(b, 0), y = {0};
    float first[4];
    void *dq = dlb_queued_device_queue(cq, 0), *data;
    CHECK_EQ_INT(dlb_array_allocate(&y, b, 0, DLB_FLOAT32, 2, shape, 0, &err), DLB_OK);
    CHECK_EQ_INT(b->ops.export_pointer(cq, 0, y.buffer->handle, &data), DLB_OK);
    dlb_queued_pause(cq, dq, 1);
    CHECK_EQ_INT(dlb_array_copy_into(&y, &x, &err), DLB_OK);
    CHECK(dlb_queued_pending(cq, dq) >= 1);
    CHECK_EQ_INT(dlb_queued_peek(cq, data, sizeof first, first), 0);
    CHECK(all_poison(first, sizeof first)); /* what a read without the wait gets */
    dlb_queued_pause(cq, dq, 0);
    CHECK_EQ_INT(dlb_array_read_into(&y, got, DLB_FLOAT32, &err), DLB_OK);
    CHECK(got[0] == 0 && got[N * N - 1] == (float)(N * N - 1));
    dlb_array_release(&y);
    dlb_array_release(&x);
  }
  dlb_backend_release(b);
  dlb_queued_stats_get(cq, &d);
  CHECK_EQ_INT(d.violations, 0);
  CHECK_EQ_INT(d.races, 0);
  CHECK_EQ_INT(d.live, 0);
  CHECK_EQ_INT(d.events_live, 0);
  dlb_queued_unref(cq);
}

/* ---- (c) exports to a consumer's queue ------------------------------------------------ */

static dlb_status export_with_stream(const dlb_array *a, int has_stream, int64_t stream,
                                     dlb_exported *out) {
  dlb_export_request req;
  memset(&req, 0, sizeof req);
  req.versioned = 1;
  req.copy = DLB_COPY_IF_NEEDED;
  req.host = cpu;
  req.has_stream = has_stream;
  req.stream = stream;
  return dlb_dlpack_export(a, &req, out, &err);
}

static const char *data_of(dlb_exported e) {
  DLTensor *t = &((DLManagedTensorVersioned *)e.tensor)->dl_tensor;
  return (const char *)t->data + t->byte_offset;
}

/* b = a + 1 on device 0 of dev, queued while the device is paused. */
static dlb_array plus_one_paused(const dlb_array *a) {
  dlb_array r = {0};
  dlb_operand in[2] = {{.array = a}, {.array = NULL, .scalar = s_float(1)}};
  dlb_queued_pause(q, dlb_queued_device_queue(q, 0), 1);
  CHECK_EQ_INT(dlb_elementwise(DLB_OP_ADD, in, &r, cpu, &err), DLB_OK);
  return r;
}

static void test_exports_order_the_consumer(void) {
  double v[4] = {1, 2, 3, 4}, seen[4];
  void *dq = dlb_queued_device_queue(q, 0);
  int64_t stream = dlb_queued_consumer(q, 0);
  void *cs = (void *)(intptr_t)stream;
  dlb_array a = vec(dev, 0, 4, v), b;
  dlb_exported e;
  dlb_queued_stats d;
  CHECK(stream > 2);
  /* Without the wait (stream -1: no ordering) the consumer reads poison. */
  b = plus_one_paused(&a);
  mark(q);
  CHECK_EQ_INT(export_with_stream(&b, 1, -1, &e), DLB_OK);
  CHECK_EQ_INT(delta(q).stream_wait, 0);
  CHECK_EQ_INT(dlb_queued_consumer_read(q, cs, data_of(e), sizeof seen, seen), 0);
  dlb_queued_sync(q, cs);
  CHECK(all_poison(seen, sizeof seen)); /* the mechanism can fail: this is what it catches */
  dlb_dlpack_delete(e);
  dlb_queued_pause(q, dq, 0);
  dlb_array_release(&b);
  /* With the consumer's stream: its queue waits on the device, the host does not. */
  b = plus_one_paused(&a);
  mark(q);
  CHECK_EQ_INT(export_with_stream(&b, 1, stream, &e), DLB_OK);
  d = delta(q);
  CHECK_EQ_INT(d.stream_wait, 1);
  CHECK_EQ_INT(d.host_blocks, 0); /* returned while the device is paused */
  memset(seen, 0, sizeof seen);
  CHECK_EQ_INT(dlb_queued_consumer_read(q, cs, data_of(e), sizeof seen, seen), 0);
  nap_ms(5);
  CHECK(dlb_queued_pending(q, cs) == 2); /* the wait, then the read, both held */
  CHECK(seen[0] == 0);
  dlb_queued_pause(q, dq, 0);
  dlb_queued_sync(q, cs);
  CHECK(seen[0] == 2 && seen[1] == 3 && seen[2] == 4 && seen[3] == 5);
  dlb_dlpack_delete(e);
  /* No stream named, and streams 1 and 2: the device's default consumer queue. */
  mark(q);
  CHECK_EQ_INT(export_with_stream(&b, 0, 0, &e), DLB_OK);
  dlb_dlpack_delete(e);
  CHECK_EQ_INT(export_with_stream(&b, 1, 2, &e), DLB_OK);
  dlb_dlpack_delete(e);
  CHECK_EQ_INT(delta(q).stream_wait, 2);
  /* A value that is no stream of the device: ARGUMENT, with the protocol in the hint. */
  CHECK_EQ_INT(export_with_stream(&b, 1, 0, &e), DLB_E_ARGUMENT);
  CHECK(err.hint && strstr(err.hint, "-1") != NULL);
  CHECK_EQ_INT(export_with_stream(&b, 1, 12345, &e), DLB_E_ARGUMENT);
  dlb_array_release(&b);
  dlb_array_release(&a);
}

/* ---- (d) imports adopt foreign device memory ------------------------------------------ */

static int deleted;
static void count_delete(DLManagedTensorVersioned *t) { deleted++; }

/* Imports a producer tensor of dev's device type over data. */
static dlb_status import_foreign(dlb_registry *reg, producer *p, void *data, int device_id,
                                 int64_t n, const int64_t *strides, uint64_t byte_offset,
                                 dlb_array *out) {
  memset(p, 0, sizeof *p);
  producer_init(p, 1, count_delete, NULL, data, kDLExtDev, dt(kDLFloat, 64, 1), 1, &n, strides,
                byte_offset);
  p->t.v.dl_tensor.device.device_id = device_id;
  return dlb_dlpack_import((dlb_exported){1, &p->t.v}, cpu, reg, out, &err);
}

static void test_imports_adopt(void) {
  dlb_registry *reg = dlb_registry_new();
  double *foreign = dlb_queued_foreign(q, 0, 16 * sizeof(double)), host[16], got[4];
  int64_t back = -1;
  producer p;
  dlb_array a = {0}, r = {0};
  dlb_operand in[2];
  for (int k = 0; k < 16; k++) host[k] = k;
  CHECK(reg && foreign);
  CHECK_EQ_INT(dlb_queued_poke(q, foreign, host, sizeof host), 0);
  CHECK_EQ_INT(dlb_registry_add(reg, dev, &err), DLB_OK);
  /* Elements 4..7: zero copy on the device, through adopt. */
  mark(q);
  deleted = 0;
  CHECK_EQ_INT(import_foreign(reg, &p, foreign, 0, 4, NULL, 4 * sizeof(double), &a), DLB_OK);
  CHECK_EQ_INT(delta(q).adopt, 1);
  CHECK(a.buffer->backend == dev && a.buffer->host == NULL);
  CHECK_EQ_INT(dlb_array_read_into(&a, got, DLB_FLOAT64, &err), DLB_OK);
  CHECK(got[0] == 4 && got[3] == 7);
  /* The device computes on it in place. */
  in[0] = (dlb_operand){.array = &a};
  in[1] = (dlb_operand){.array = NULL, .scalar = s_float(10)};
  CHECK_EQ_INT(dlb_elementwise(DLB_OP_ADD, in, &r, cpu, &err), DLB_OK);
  CHECK(r.buffer->backend == dev);
  CHECK_EQ_INT(dlb_array_read_into(&r, got, DLB_FLOAT64, &err), DLB_OK);
  CHECK(got[0] == 14 && got[3] == 17);
  dlb_array_release(&r);
  dlb_array_release(&a);
  CHECK_EQ_INT(delta(q).forget, 1); /* once, when the last holder let go */
  CHECK_EQ_INT(deleted, 1);
  /* Negative strides: elements 7, 6, 5, 4 (the range starts below data + byte_offset). */
  CHECK_EQ_INT(import_foreign(reg, &p, foreign, 0, 4, &back, 7 * sizeof(double), &a), DLB_OK);
  CHECK_EQ_INT(dlb_array_read_into(&a, got, DLB_FLOAT64, &err), DLB_OK);
  CHECK(got[0] == 7 && got[3] == 4);
  dlb_array_release(&a);
  /* Past the end of the foreign memory, or memory that is not the device's. */
  mark(q);
  deleted = 0;
  CHECK_EQ_INT(import_foreign(reg, &p, foreign, 0, 17, NULL, 0, &a), DLB_E_DLPACK_INVALID);
  CHECK(strstr(err.message, "refused") != NULL);
  CHECK_EQ_INT(import_foreign(reg, &p, host, 0, 4, NULL, 0, &a), DLB_E_DLPACK_INVALID);
  CHECK_EQ_INT(import_foreign(reg, &p, foreign, 1, 4, NULL, 0, &a), DLB_E_DLPACK_INVALID);
  CHECK_EQ_INT(import_foreign(reg, &p, foreign, 5, 4, NULL, 0, &a), DLB_E_DEVICE_UNAVAILABLE);
  CHECK_EQ_INT(delta(q).adopt_refused, 3);
  CHECK_EQ_INT(deleted, 4); /* each producer got its tensor back, once */
  CHECK(a.buffer == NULL);
  dlb_registry_free(reg);
}

/* ---- (e) kernels run on the worker ------------------------------------------------------ */

static void test_kernels_run_on_the_worker(void) {
  double x[4] = {1, 2, 3, 4}, got[4];
  float f[4];
  int64_t shape[2] = {2, 2};
  dlb_array a = vec(dev, 1, 4, x), m = {0}, r = {0}, c = {0};
  dlb_operand in[2] = {{.array = &a}, {.array = &a}};
  dlb_reduce_options o;
  dlb_scalar v;
  dlb_queued_stats d;
  memset(&o, 0, sizeof o);
  o.dims = DLB_REDUCE_ALL_DIMS;
  mark(q);
  CHECK_EQ_INT(dlb_elementwise(DLB_OP_ADD, in, &r, cpu, &err), DLB_OK); /* 2, 4, 6, 8 */
  CHECK_EQ_INT(dlb_array_read_into(&r, got, DLB_FLOAT64, &err), DLB_OK);
  CHECK(got[0] == 2 && got[3] == 8);
  dlb_array_release(&r);
  CHECK_EQ_INT(dlb_reduce(DLB_REDUCE_SUM, &a, &o, &r, cpu, &err), DLB_OK);
  CHECK(r.buffer->backend == dev && r.buffer->device_id == 1);
  CHECK_EQ_INT(dlb_array_read_into(&r, got, DLB_FLOAT64, &err), DLB_OK);
  CHECK(got[0] == 10);
  dlb_array_release(&r);
  CHECK_EQ_INT(dlb_reduce_value(DLB_REDUCE_MAX, &a, &o, cpu, &v, &err), DLB_OK);
  CHECK(v.v.f == 4);
  /* [[1, 2], [3, 4]] @ [[1, 2], [3, 4]] = [[7, 10], [15, 22]] */
  m = view_of(&a);
  CHECK_EQ_INT(dlb_view_reshape(&m, 2, shape, &err), DLB_OK);
  CHECK_EQ_INT(dlb_matmul(&m, &m, DLB_FLOAT64, &r, cpu, &err), DLB_OK);
  CHECK_EQ_INT(dlb_array_read_into(&r, got, DLB_FLOAT64, &err), DLB_OK);
  CHECK(got[0] == 7 && got[1] == 10 && got[2] == 15 && got[3] == 22);
  dlb_array_release(&r);
  dlb_array_release(&m);
  CHECK_EQ_INT(dlb_array_clone(&c, &a, DLB_FLOAT32, &err), DLB_OK); /* astype */
  v = s_float(-2);
  CHECK_EQ_INT(dlb_array_fill(&a, &v, &err), DLB_OK);
  CHECK_EQ_INT(dlb_array_read_into(&c, f, DLB_FLOAT32, &err), DLB_OK);
  CHECK(f[0] == 1 && f[3] == 4); /* the cast ran before the fill: queue order */
  CHECK_EQ_INT(dlb_array_read_into(&a, got, DLB_FLOAT64, &err), DLB_OK);
  CHECK(got[0] == -2 && got[3] == -2);
  d = delta(q);
  CHECK_EQ_INT(d.elementwise, 1);
  CHECK_EQ_INT(d.reduce, 2);
  CHECK_EQ_INT(d.matmul, 1);
  CHECK_EQ_INT(d.cast, 1);
  CHECK_EQ_INT(d.fill, 1);
  CHECK_EQ_INT(d.ran_on_worker, 6); /* every one, on its device's thread */
  dlb_array_release(&c);
  dlb_array_release(&a);
}

/* A kernel that fails on the worker leaves its result poisoned and fails
 * the next wait for that device's work, once. */
static void test_kernel_failure_surfaces_at_the_wait(void) {
  int32_t x[2] = {2, 3}, got[2];
  int64_t n = 2;
  dlb_array a = {0}, r = {0};
  dlb_operand in[2] = {{.array = &a}, {.array = NULL, .scalar = s_int(-1)}};
  CHECK_EQ_INT(dlb_array_allocate(&a, dev, 0, DLB_INT32, 1, &n, 0, &err), DLB_OK);
  CHECK_EQ_INT(dlb_array_write_from(&a, x, DLB_INT32, &err), DLB_OK);
  mark(q);
  CHECK_EQ_INT(dlb_elementwise(DLB_OP_POWER, in, &r, cpu, &err), DLB_OK); /* queued */
  CHECK_EQ_INT(dlb_array_read_into(&r, got, DLB_INT32, &err), DLB_E_BACKEND_FAILURE);
  CHECK(err.has_native);
  CHECK_EQ_INT(err.native_status, 900 + DLB_E_VALUE);
  CHECK_EQ_INT(delta(q).kernel_failures, 1);
  CHECK_EQ_INT(dlb_array_read_into(&r, got, DLB_INT32, &err), DLB_OK);
  CHECK(all_poison(got, sizeof got));
  dlb_array_release(&r);
  dlb_array_release(&a);
}

/* ---- (f) a version 1 backend ------------------------------------------------------------- */

/* The v1 prefix of ops, its last byte at the end of a page, the next page unreadable. */
static dlb_backend_ops *truncated_v1(const dlb_backend_ops *ops, void **map, size_t *len) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE), v1 = offsetof(dlb_backend_ops, copy_strided);
  char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  dlb_backend_ops *t;
  if (p == MAP_FAILED) return NULL;
  CHECK_EQ_INT(mprotect(p + page, page, PROT_NONE), 0);
  t = (dlb_backend_ops *)(p + page - v1);
  memcpy(t, ops, v1);
  t->version = DLB_BACKEND_OPS_VERSION_1;
  *map = p;
  *len = 2 * page;
  return t;
}

static void v1_backend_works(void) {
  dlb_queued *vq = make_queued("qv1", 0, 0);
  dlb_backend_ops ops, *v1;
  dlb_backend *b = NULL;
  void *map;
  size_t len;
  static float got[N * N];
  dlb_queued_ops(vq, &ops);
  CHECK((v1 = truncated_v1(&ops, &map, &len)) != NULL);
  if (!v1) return;
  dlb_queued_retain(vq); /* the registration's, dropped by its release */
  CHECK_EQ_INT(dlb_backend_create(v1, vq, &b, &err), DLB_OK); /* reads no byte past v1 */
  munmap(map, len);
  if (!b) return;
  CHECK(b->ops.copy_strided == NULL && b->ops.queue == NULL && b->ops.kernels == NULL);
  {
    dlb_array a = matrix(b, 0), t = transposed(&a), r = {0};
    dlb_operand in[2] = {{.array = &a}, {.array = &a}};
    dlb_exported e;
    dlb_queued_stats s;
    mark(vq);
    CHECK_EQ_INT(dlb_array_read_into(&t, got, DLB_FLOAT32, &err), DLB_OK);
    CHECK(got[1] == (float)N && got[N] == 1.0f);
    s = delta(vq);
    CHECK_EQ_INT(s.to_host, 1); /* the staging fallback: the span in one chunk */
    CHECK_EQ_INT(s.copy_strided, 0);
    CHECK_EQ_INT(dlb_elementwise(DLB_OP_ADD, in, &r, cpu, &err), DLB_E_UNSUPPORTED);
    CHECK(err.hint && strstr(err.hint, "device_put") != NULL);
    CHECK_EQ_INT(export_with_stream(&a, 0, 0, &e), DLB_OK); /* export_pointer is v1 */
    dlb_dlpack_delete(e);
    dlb_array_release(&t);
    dlb_array_release(&a);
    dlb_queued_stats_get(vq, &s);
    CHECK_EQ_INT(s.queue + s.event_record + s.stream_wait, 0);
    CHECK_EQ_INT(s.live, 0);
  }
  dlb_backend_release(b);
  dlb_queued_unref(vq);
}

int main(void) {
  dlb_queued_stats s;
  if (!cpu_open()) return 1;
  /* First, before any worker thread: the child of the fork is then whole. */
  CHECK(run_isolated(v1_backend_works));
  q = make_queued("qdev", 30, 0);
  dev = make_backend(q);
  test_transfers_are_one_call();
  test_device_copies_queue_in_order();
  test_exports_order_the_consumer();
  test_imports_adopt();
  test_kernels_run_on_the_worker();
  test_kernel_failure_surfaces_at_the_wait();
  dlb_backend_release(dev);
  dlb_queued_stats_get(q, &s);
  CHECK_EQ_INT(s.violations, 0);
  CHECK_EQ_INT(s.races, 0);
  CHECK_EQ_INT(s.live, 0);
  CHECK_EQ_INT(s.events_live, 0);
  CHECK_EQ_INT(s.event_record, s.event_release);
  dlb_queued_unref(q);
  cpu_close();
  return check_done("test_queued_backend");
}
