/* test_cuda_backend.c -- the cuda backend's hooks against the stand-in
 * driver (tests/cuda/stand_in_driver.c, whose path the build passes as
 * DLB_CUDA_STANDIN): loading, stream ordering of exports and of work across
 * devices, adoption checks, error mapping, and lifetimes (frees on other
 * threads, a driver that has shut down). It proves the protocol against the
 * stand-in's model of the documented semantics, not hardware behaviour.
 *
 * STANDIN_GETPROC=none in the environment (the second ctest run) makes the
 * driver refuse cuGetProcAddress, so the entry points come from dlsym. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include "../../src/backends/cuda/cuda.h"
#include "../cuda/stand_in_driver.h"
#include "check.h"

static void *lib;
static standin_control_fn control;
static standin_query_fn query;
static standin_alloc_fn producer_alloc;
static standin_free_fn producer_free;

static void *sym(const char *name) {
  void *f = dlsym(lib, name);
  if (!f) {
    fprintf(stderr, "stand-in lacks %s\n", name);
    exit(1);
  }
  return f;
}

static void open_standin(void) {
  setenv("DLB_CUDA_DRIVER", DLB_CUDA_STANDIN, 1);
  if (!(lib = dlopen(DLB_CUDA_STANDIN, RTLD_NOW | RTLD_LOCAL))) {
    fprintf(stderr, "cannot open %s: %s\n", DLB_CUDA_STANDIN, dlerror());
    exit(1);
  }
  control = (standin_control_fn)sym("standin_control");
  query = (standin_query_fn)sym("standin_query");
  producer_alloc = (standin_alloc_fn)sym("standin_alloc");
  producer_free = (standin_free_fn)sym("standin_free");
}

/* A consumer's own stream on device 0, made as a DLPack consumer would. */
static CUstream consumer_stream(const dlb_cu *cu, int device) {
  CUcontext c;
  CUstream s = NULL;
  CHECK_EQ_INT(cu->primary_retain(&c, device), CUDA_SUCCESS);
  CHECK_EQ_INT(cu->ctx_push(c), CUDA_SUCCESS);
  CHECK_EQ_INT(cu->stream_create(&s, 0), CUDA_SUCCESS);
  cu->ctx_pop(&c);
  return s;
}

/* The consumer reads n floats at p on its stream s, then waits for s only. */
static void consumer_read(const dlb_cu *cu, int device, CUstream s, const void *p, float *out,
                          size_t n) {
  CUcontext c;
  CHECK_EQ_INT(cu->primary_retain(&c, device), CUDA_SUCCESS);
  CHECK_EQ_INT(cu->ctx_push(c), CUDA_SUCCESS);
  CHECK_EQ_INT(cu->dtoh(out, (CUdeviceptr)(uintptr_t)p, n * sizeof *out, s), CUDA_SUCCESS);
  CHECK_EQ_INT(cu->stream_sync(s), CUDA_SUCCESS);
  cu->ctx_pop(&c);
  cu->primary_release(device);
}

static int all_equal(const float *v, size_t n, float want) {
  for (size_t i = 0; i < n; i++)
    if (v[i] != want) return 0;
  return 1;
}

static dlb_backend *new_backend(void) {
  dlb_backend *b = NULL;
  dlb_error err;
  CHECK_EQ_INT(dlb_cuda_backend_create(&b, &err), DLB_OK);
  return b;
}

static void test_loads_with_two_devices(void) {
  dlb_backend *b = new_backend();
  const char *why = "unset";
  CHECK_EQ_INT(dlb_backend_device_count(b), 2);
  CHECK(dlb_cu_driver(&why) != NULL);
  CHECK(why == NULL);
  CHECK(dlb_cuda_unavailable_reason(b) != NULL); /* it is a cuda backend */
  CHECK(query("calls:cuGetProcAddress_v2") > 0);
  if (getenv("STANDIN_GETPROC")) /* both refused: the entry points came from dlsym */
    CHECK(query("calls:cuGetProcAddress") > 0);
  else CHECK_EQ_INT(query("calls:cuGetProcAddress"), 0);
  dlb_backend_release(b);
}

/* A fill queued on dlbridge's stream; an export makes the consumer's stream
 * wait for it (stream_wait), so the consumer reads the fill, never poison. */
static void test_consumer_stream_waits(void) {
  dlb_backend *b = new_backend();
  const dlb_cu *cu = dlb_cu_driver(NULL);
  enum { N = 4096 };
  static float got[N];
  float three = 3;
  void *h = NULL, *q, *ev = NULL;
  int64_t strides[1] = {1}, shape[1] = {N};
  dlb_tensor t = {0};
  dlb_kernel_error ke = {{0}, NULL};
  CUstream s = consumer_stream(cu, 0);
  dlb_backend_device_count(b);
  CHECK_EQ_INT(b->ops.allocate(b->ctx, 0, N * sizeof(float), 1, &h), DLB_OK);
  q = b->ops.queue(b->ctx, 0);
  CHECK(q != NULL);
  t.handle = h;
  t.dtype.code = kDLFloat, t.dtype.bits = 32, t.dtype.lanes = 1;
  t.ndim = 1, t.shape = shape, t.strides = strides;
  control("delay_us", 20000);
  CHECK_EQ_INT(b->ops.kernels->fill(b->ctx, &t, &three, q, &ke), DLB_OK);
  CHECK_EQ_INT(b->ops.event_record(b->ctx, 0, q, &ev), DLB_OK);
  CHECK_EQ_INT(b->ops.stream_wait(b->ctx, 0, 1, (int64_t)(uintptr_t)s, ev), DLB_OK);
  CHECK(query("pending") > 0); /* the host did not wait */
  control("delay_us", 300);
  consumer_read(cu, 0, s, h, got, N);
  CHECK(all_equal(got, N, 3));
  CHECK_EQ_INT(b->ops.stream_wait(b->ctx, 0, 1, 0, ev), DLB_E_ARGUMENT);
  CHECK_EQ_INT(b->ops.stream_wait(b->ctx, 0, 1, 2, NULL), DLB_OK);
  CHECK_EQ_INT(b->ops.stream_wait(b->ctx, 0, 0, 0, NULL), DLB_OK); /* none named: legacy */
  b->ops.event_release(b->ctx, 0, ev);
  b->ops.deallocate(b->ctx, 0, h);
  dlb_backend_release(b);
}

/* Work on cuda:0, then a copy on cuda:1's queue after event_wait. */
static void test_event_wait_across_devices(void) {
  dlb_backend *b = new_backend();
  enum { N = 1000 };
  static float got[N];
  float seven = 7;
  void *h0 = NULL, *h1 = NULL, *q0, *q1, *ev = NULL;
  int64_t strides[1] = {1}, shape[1] = {N};
  dlb_tensor t = {0};
  dlb_kernel_error ke = {{0}, NULL};
  dlb_strided_copy c = {
      sizeof(float), 1, shape, {NULL, 1, 0, NULL, strides}, {NULL, 0, 0, NULL, strides}, NULL};
  dlb_backend_device_count(b);
  CHECK_EQ_INT(b->ops.allocate(b->ctx, 0, sizeof got, 0, &h0), DLB_OK);
  CHECK_EQ_INT(b->ops.allocate(b->ctx, 1, sizeof got, 1, &h1), DLB_OK);
  q0 = b->ops.queue(b->ctx, 0);
  q1 = b->ops.queue(b->ctx, 1);
  t.handle = h0;
  t.dtype.code = kDLFloat, t.dtype.bits = 32, t.dtype.lanes = 1;
  t.ndim = 1, t.shape = shape, t.strides = strides;
  control("delay_us", 5000);
  CHECK_EQ_INT(b->ops.kernels->fill(b->ctx, &t, &seven, q0, &ke), DLB_OK);
  CHECK_EQ_INT(b->ops.event_record(b->ctx, 0, q0, &ev), DLB_OK);
  CHECK_EQ_INT(b->ops.event_wait(b->ctx, 1, q1, ev), DLB_OK);
  c.dst.handle = h1, c.src.handle = h0, c.queue = q1;
  CHECK_EQ_INT(b->ops.copy_strided(b->ctx, &c), DLB_OK); /* a peer copy on cuda:1's queue */
  control("delay_us", 300);
  b->ops.event_release(b->ctx, 0, ev);
  CHECK_EQ_INT(b->ops.event_record(b->ctx, 1, q1, &ev), DLB_OK);
  CHECK_EQ_INT(b->ops.event_synchronize(b->ctx, 1, ev), DLB_OK);
  CHECK_EQ_INT(b->ops.copy_to_host(b->ctx, 1, h1, 0, got, sizeof got), DLB_OK);
  CHECK(all_equal(got, N, 7));
  b->ops.event_release(b->ctx, 1, ev);
  b->ops.deallocate(b->ctx, 0, h0);
  b->ops.deallocate(b->ctx, 1, h1);
  dlb_backend_release(b);
}

static void test_adopt_checks_the_pointer(void) {
  dlb_backend *b = new_backend();
  char *dev = producer_alloc(0, 4096, 2), *managed = producer_alloc(1, 256, 4);
  static char host[64];
  void *h = NULL;
  dlb_backend_device_count(b);
  CHECK_EQ_INT(b->ops.adopt(b->ctx, 0, dev, 0, 4096, &h), DLB_OK);
  CHECK(h == dev);
  b->ops.forget(b->ctx, 0, h);
  CHECK_EQ_INT(b->ops.adopt(b->ctx, 0, dev, 16, 4097, &h), DLB_E_DLPACK_INVALID); /* past the end */
  CHECK_EQ_INT(b->ops.adopt(b->ctx, 1, dev, 0, 64, &h), DLB_E_DLPACK_INVALID);    /* device 0's */
  CHECK_EQ_INT(b->ops.adopt(b->ctx, 0, host, 0, 64, &h),
               DLB_E_DLPACK_INVALID);                                 /* not the driver's */
  CHECK_EQ_INT(b->ops.adopt(b->ctx, 1, managed, 0, 256, &h), DLB_OK); /* managed, on 1 */
  b->ops.forget(b->ctx, 1, h);
  producer_free(dev);
  producer_free(managed);
  dlb_backend_release(b);
}

static void test_errors_map_and_keep_the_number(void) {
  dlb_backend *b = new_backend();
  void *h = NULL;
  char buf[16] = {0};
  dlb_backend_device_count(b);
  control("fail_alloc", 1);
  CHECK_EQ_INT(b->ops.allocate(b->ctx, 0, 64, 0, &h), DLB_E_OUT_OF_MEMORY);
  CHECK_EQ_INT(b->ops.last_status(b->ctx), CUDA_ERROR_OUT_OF_MEMORY);
  CHECK_EQ_INT(b->ops.allocate(b->ctx, 0, 64, 0, &h), DLB_OK);
  control("fail_copy", 1);
  CHECK_EQ_INT(b->ops.copy_to_host(b->ctx, 0, h, 0, buf, sizeof buf), DLB_E_BACKEND_FAILURE);
  CHECK_EQ_INT(b->ops.last_status(b->ctx), CUDA_ERROR_UNKNOWN);
  CHECK_EQ_STR(dlb_cu_error_name(CUDA_ERROR_OUT_OF_MEMORY), "CUDA_ERROR_OUT_OF_MEMORY");
  CHECK_EQ_INT(dlb_cuda_status(CUDA_ERROR_NO_DEVICE), DLB_E_DEVICE_UNAVAILABLE);
  CHECK_EQ_INT(dlb_cuda_status(CUDA_ERROR_STUB_LIBRARY), DLB_E_DEVICE_UNAVAILABLE);
  CHECK_EQ_INT(dlb_cuda_status(CUDA_ERROR_INVALID_HANDLE), DLB_E_BACKEND_FAILURE);
  b->ops.deallocate(b->ctx, 0, h);
  dlb_backend_release(b);
}

typedef struct late_free {
  dlb_backend *b;
  void *h;
} late_free;

static void *free_later(void *arg) {
  late_free *f = arg;
  f->b->ops.deallocate(f->b->ctx, 0, f->h);
  dlb_backend_release(f->b); /* the last reference: release on this thread */
  return NULL;
}

/* Every allocation's retain and the backend's are given back, on whatever
 * thread the last free runs; nothing the backend made is left. */
static void test_frees_on_another_thread_release_everything(void) {
  long long allocations = query("live_allocations"), streams = query("streams_live");
  long long events = query("events_live"), retains = query("retains:0");
  late_free f = {new_backend(), NULL};
  pthread_t t;
  dlb_backend_device_count(f.b);
  CHECK_EQ_INT(f.b->ops.allocate(f.b->ctx, 0, 1 << 20, 1, &f.h), DLB_OK);
  CHECK(query("retains:0") >= retains + 2); /* the backend's and the allocation's */
  CHECK_EQ_INT(pthread_create(&t, NULL, free_later, &f), 0);
  pthread_join(t, NULL);
  CHECK_EQ_INT(query("retains:0"), retains);
  CHECK_EQ_INT(query("live_allocations"), allocations);
  CHECK_EQ_INT(query("streams_live"), streams);
  CHECK_EQ_INT(query("events_live"), events);
}

/* At exit the driver may shut down first: frees then are done, not errors. */
static void test_frees_after_shutdown_are_done(void) {
  dlb_backend *b = new_backend();
  void *h = NULL, *ev = NULL;
  long long frees;
  dlb_backend_device_count(b);
  CHECK_EQ_INT(b->ops.allocate(b->ctx, 0, 64, 1, &h), DLB_OK);
  CHECK_EQ_INT(b->ops.event_record(b->ctx, 0, b->ops.queue(b->ctx, 0), &ev), DLB_OK);
  frees = query("calls:cuMemFree_v2");
  control("deinit", 1);
  b->ops.event_release(b->ctx, 0, ev);
  b->ops.deallocate(b->ctx, 0, h);
  CHECK_EQ_INT(query("calls:cuMemFree_v2"), frees); /* the driver freed it: no call */
  dlb_backend_release(b);
  control("deinit", 0);
}

int main(void) {
  open_standin();
  test_loads_with_two_devices();
  test_consumer_stream_waits();
  test_event_wait_across_devices();
  test_adopt_checks_the_pointer();
  test_errors_map_and_keep_the_number();
  test_frees_on_another_thread_release_everything();
  test_frees_after_shutdown_are_done();
  return check_done("test_cuda_backend");
}
