/* test_buffer.c -- backends, buffers and the registry (backend.c, buffer.c):
 * a counting backend proves that memory and backends are freed exactly once
 * and in order, that failures carry the backend's name and native status,
 * that bad vtables and device strings are refused, and that the refcounts
 * hold under threads (run it under ThreadSanitizer too: -DDLB_TSAN=ON). */
#define _GNU_SOURCE /* pthread barriers; glibc's mallinfo2 */
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu.h"
#include "check.h"
#include "core/array.h"
#include "core/backend.h"
#include "core/budget.h"
#include "core/buffer.h"
#include "fixtures.h"

/* ------------------------------------------------------------------------ */
/* The counting backend */

typedef struct counting {
  atomic_int allocate_calls; /* every call, failed ones too */
  atomic_int allocations;    /* live allocations */
  atomic_int deallocations;
  atomic_int releases;
  atomic_int live_at_release; /* allocations still live when release ran */
  dlb_status fail_with;       /* DLB_OK: allocate succeeds */
  int devices;
  int last_device; /* device_id of the last allocate */
} counting;

static int c_device_count(void *ctx) { return ((counting *)ctx)->devices; }

static dlb_status c_allocate(void *ctx, int device_id, size_t nbytes, int zeroed, void **handle) {
  counting *c = ctx;
  atomic_fetch_add(&c->allocate_calls, 1);
  c->last_device = device_id;
  if (nbytes == 0) return DLB_E_ARGUMENT; /* the core never asks for 0 bytes */
  if (c->fail_with != DLB_OK) return c->fail_with;
  *handle = zeroed ? calloc(1, nbytes) : malloc(nbytes);
  if (!*handle) return DLB_E_OUT_OF_MEMORY;
  atomic_fetch_add(&c->allocations, 1);
  return DLB_OK;
}

static void c_deallocate(void *ctx, int device_id, void *handle) {
  counting *c = ctx;
  free(handle);
  atomic_fetch_sub(&c->allocations, 1);
  atomic_fetch_add(&c->deallocations, 1);
}

static void *c_host_pointer(void *ctx, int device_id, void *handle) { return handle; }

static int64_t c_last_status(void *ctx) { return 700; }

static void c_release(void *ctx) {
  counting *c = ctx;
  atomic_store(&c->live_at_release, atomic_load(&c->allocations));
  atomic_fetch_add(&c->releases, 1);
}

static dlb_backend_ops counting_ops(void) {
  dlb_backend_ops ops;
  memset(&ops, 0, sizeof ops);
  ops.version = DLB_BACKEND_OPS_VERSION;
  ops.name = "counting";
  ops.device_type = kDLExtDev;
  ops.device_count = c_device_count;
  ops.allocate = c_allocate;
  ops.deallocate = c_deallocate;
  ops.copy_to_host = malloc_to_host;
  ops.copy_from_host = malloc_from_host;
  ops.host_pointer = c_host_pointer;
  ops.last_status = c_last_status;
  ops.release = c_release;
  return ops;
}

static void counting_init(counting *c) {
  memset(c, 0, sizeof *c);
  atomic_init(&c->allocate_calls, 0);
  atomic_init(&c->allocations, 0);
  atomic_init(&c->deallocations, 0);
  atomic_init(&c->releases, 0);
  atomic_init(&c->live_at_release, -1);
  c->fail_with = DLB_OK;
  c->devices = 2;
}

/* A backend with ops (one check that it is created) over c, reset first. */
static dlb_backend *make_counting_with(counting *c, const dlb_backend_ops *ops) {
  dlb_backend *b = NULL;
  dlb_error err;
  counting_init(c);
  CHECK_EQ_INT(dlb_backend_create(ops, c, &b, &err), DLB_OK);
  return b;
}

/* The counting backend over c, reset first. */
static dlb_backend *make_counting(counting *c) {
  dlb_backend_ops ops = counting_ops();
  return make_counting_with(c, &ops);
}

/* ------------------------------------------------------------------------ */

static void test_zero_bytes(void) {
  counting c;
  dlb_backend *b = make_counting(&c);
  dlb_buffer *buf = NULL;
  dlb_error err;
  CHECK_EQ_INT(dlb_buffer_allocate(b, 1, 0, 1, &buf, &err), DLB_OK);
  CHECK_EQ_INT(atomic_load(&c.allocate_calls), 0);
  CHECK(buf != NULL);
  CHECK(buf->handle == NULL);
  CHECK(buf->host == NULL);
  CHECK_EQ_INT(buf->nbytes, 0);
  CHECK_EQ_INT(buf->device_id, 1);
  CHECK(buf->backend == b);
  CHECK_EQ_INT(atomic_load(&buf->refs), 1);
  CHECK_EQ_INT(atomic_load(&b->refs), 2);
  dlb_buffer_release(buf);
  CHECK_EQ_INT(atomic_load(&c.deallocations), 0); /* nothing to free */
  CHECK_EQ_INT(atomic_load(&b->refs), 1);
  { /* a size-0 array too */
    dlb_array a;
    const int64_t shape[] = {4, 0, 3};
    CHECK_EQ_INT(dlb_array_allocate(&a, b, 0, DLB_FLOAT64, 3, shape, 0, &err), DLB_OK);
    CHECK_EQ_INT(atomic_load(&c.allocate_calls), 0);
    dlb_array_release(&a);
  }
  CHECK_EQ_INT(atomic_load(&c.deallocations), 0);
  CHECK_EQ_INT(atomic_load(&c.releases), 0);
  dlb_backend_release(b);
  CHECK_EQ_INT(atomic_load(&c.releases), 1);
}

static void test_each_freed_once(void) {
  counting c;
  dlb_backend *b = make_counting(&c);
  dlb_buffer *bufs[20];
  dlb_error err;
  for (int k = 0; k < 20; k++) {
    CHECK_EQ_INT(dlb_buffer_allocate(b, k % 2, (size_t)(k + 1) * 24, k % 3 == 0, &bufs[k], &err),
                 DLB_OK);
    CHECK(bufs[k]->host == bufs[k]->handle); /* from host_pointer */
    CHECK_EQ_INT(bufs[k]->device_id, k % 2);
    CHECK_EQ_INT(c.last_device, k % 2);
    CHECK_EQ_INT(bufs[k]->nbytes, (k + 1) * 24);
    if (k % 3 == 0) {
      int zero = 1;
      for (int i = 0; i < (k + 1) * 24; i++) zero &= ((unsigned char *)bufs[k]->host)[i] == 0;
      CHECK(zero);
    }
  }
  CHECK_EQ_INT(atomic_load(&c.allocate_calls), 20);
  CHECK_EQ_INT(atomic_load(&c.allocations), 20);
  CHECK_EQ_INT(atomic_load(&b->refs), 21);
  /* extra references on some: each buffer is still freed once, by its last release */
  for (int k = 0; k < 20; k += 2) {
    dlb_buffer_retain(bufs[k]);
    dlb_buffer_retain(bufs[k]);
  }
  for (int k = 19; k >= 0; k--) dlb_buffer_release(bufs[k]);
  CHECK_EQ_INT(atomic_load(&c.deallocations), 10);
  for (int k = 0; k < 20; k += 2) {
    CHECK_EQ_INT(atomic_load(&bufs[k]->refs), 2);
    dlb_buffer_release(bufs[k]);
    CHECK_EQ_INT(atomic_load(&c.deallocations), 10 + k / 2);
    dlb_buffer_release(bufs[k]);
    CHECK_EQ_INT(atomic_load(&c.deallocations), 11 + k / 2);
  }
  CHECK_EQ_INT(atomic_load(&c.deallocations), 20);
  CHECK_EQ_INT(atomic_load(&c.allocations), 0);
  CHECK_EQ_INT(atomic_load(&b->refs), 1);
  { /* arrays and their views share one buffer: freed once, with the last view */
    dlb_array a, v;
    const int64_t shape[] = {3, 4};
    CHECK_EQ_INT(dlb_array_allocate(&a, b, 1, DLB_INT32, 2, shape, 1, &err), DLB_OK);
    dlb_array_share(&v, &a);
    CHECK_EQ_INT(dlb_view_select(&v, 0, 2, &err), DLB_OK);
    dlb_array_release(&a);
    CHECK_EQ_INT(atomic_load(&c.deallocations), 20);
    dlb_array_release(&v);
    CHECK_EQ_INT(atomic_load(&c.deallocations), 21);
  }
  CHECK_EQ_INT(atomic_load(&c.allocate_calls), 21);
  CHECK_EQ_INT(atomic_load(&c.releases), 0);
  dlb_backend_release(b);
  CHECK_EQ_INT(atomic_load(&c.releases), 1);
  CHECK_EQ_INT(atomic_load(&c.live_at_release), 0);
}

/* The backend's release runs once, after the registry and every buffer
 * have let go of it, in whatever order they do. */
static void test_release_order(void) {
  dlb_error err;
  for (int order = 0; order < 2; order++) {
    counting c;
    dlb_backend *b = make_counting(&c);
    dlb_registry *r = dlb_registry_new();
    dlb_buffer *x = NULL, *y = NULL;
    CHECK(r != NULL);
    CHECK_EQ_INT(dlb_registry_add(r, b, &err), DLB_OK);
    CHECK_EQ_INT(atomic_load(&b->refs), 2);
    dlb_backend_release(b); /* the creator's reference: the registry holds it now */
    CHECK_EQ_INT(atomic_load(&c.releases), 0);
    CHECK_EQ_INT(dlb_buffer_allocate(b, 0, 64, 0, &x, &err), DLB_OK);
    CHECK_EQ_INT(dlb_buffer_allocate(b, 1, 32, 0, &y, &err), DLB_OK);
    CHECK_EQ_INT(atomic_load(&b->refs), 3);
    dlb_registry_free(r); /* as at lua_close: the buffers are still out */
    CHECK_EQ_INT(atomic_load(&c.releases), 0);
    CHECK_EQ_INT(atomic_load(&c.deallocations), 0);
    CHECK_EQ_INT(atomic_load(&b->refs), 2);
    dlb_buffer_release(order ? x : y);
    CHECK_EQ_INT(atomic_load(&c.releases), 0);
    CHECK_EQ_INT(atomic_load(&c.deallocations), 1);
    dlb_buffer_release(order ? y : x); /* the last one: frees, then releases the backend */
    CHECK_EQ_INT(atomic_load(&c.deallocations), 2);
    CHECK_EQ_INT(atomic_load(&c.releases), 1);
    CHECK_EQ_INT(atomic_load(&c.live_at_release), 0);
  }
  { /* no buffers out: the registry's release is the last */
    counting c;
    dlb_backend *b = make_counting(&c);
    dlb_registry *r = dlb_registry_new();
    CHECK_EQ_INT(dlb_registry_add(r, b, &err), DLB_OK);
    dlb_backend_release(b);
    CHECK_EQ_INT(atomic_load(&c.releases), 0);
    dlb_registry_free(r);
    CHECK_EQ_INT(atomic_load(&c.releases), 1);
  }
  dlb_registry_free(NULL); /* fine */
  {                        /* a backend without release: nothing to call */
    counting c;
    dlb_backend_ops ops = counting_ops();
    dlb_backend *b;
    dlb_buffer *x = NULL;
    ops.release = NULL;
    b = make_counting_with(&c, &ops);
    CHECK_EQ_INT(dlb_buffer_allocate(b, 0, 8, 0, &x, &err), DLB_OK);
    dlb_backend_release(b);
    dlb_buffer_release(x);
    CHECK_EQ_INT(atomic_load(&c.deallocations), 1);
    CHECK_EQ_INT(atomic_load(&c.releases), 0);
  }
}

static void test_failures(void) {
  static const struct {
    dlb_status returned, expected;
  } cases[] = {
      {DLB_E_OUT_OF_MEMORY, DLB_E_OUT_OF_MEMORY},
      {DLB_E_BACKEND_FAILURE, DLB_E_BACKEND_FAILURE},
      {DLB_E_ARGUMENT, DLB_E_BACKEND_FAILURE}, /* anything else is a backend failure */
      {DLB_E_SHAPE, DLB_E_BACKEND_FAILURE},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    counting c;
    dlb_backend *b = make_counting(&c);
    dlb_buffer *buf = (dlb_buffer *)&c; /* must not be touched */
    dlb_error err;
    c.fail_with = cases[k].returned;
    memset(&err, 0, sizeof err);
    CHECK_EQ_INT(dlb_buffer_allocate(b, 1, 100, 0, &buf, &err), cases[k].expected);
    CHECK(buf == (dlb_buffer *)&c);
    CHECK_EQ_INT(err.code, cases[k].expected);
    CHECK_EQ_STR(err.backend, "counting");
    CHECK_EQ_INT(err.has_native, 1);
    CHECK_EQ_INT(err.native_status, 700);
    CHECK(err.message[0] != '\0');
    CHECK_EQ_INT(atomic_load(&c.allocate_calls), 1);
    CHECK_EQ_INT(atomic_load(&b->refs), 1); /* no reference leaked */
    {                                       /* through an array */
      dlb_array a;
      const int64_t shape[] = {5, 5};
      memset(&a, 0xff, sizeof a);
      memset(&err, 0, sizeof err);
      CHECK_EQ_INT(dlb_array_allocate(&a, b, 0, DLB_INT32, 2, shape, 1, &err), cases[k].expected);
      CHECK(a.buffer == NULL);
      CHECK_EQ_STR(err.backend, "counting");
      CHECK_EQ_INT(err.has_native, 1);
      CHECK_EQ_INT(err.native_status, 700);
    }
    CHECK_EQ_INT(atomic_load(&c.deallocations), 0);
    /* it recovers */
    c.fail_with = DLB_OK;
    CHECK_EQ_INT(dlb_buffer_allocate(b, 1, 100, 0, &buf, &err), DLB_OK);
    dlb_buffer_release(buf);
    CHECK_EQ_INT(atomic_load(&c.deallocations), 1);
    dlb_backend_release(b);
    CHECK_EQ_INT(atomic_load(&c.releases), 1);
  }
  { /* without last_status there is no native status */
    counting c;
    dlb_backend_ops ops = counting_ops();
    dlb_backend *b;
    dlb_buffer *buf = NULL;
    dlb_error err;
    ops.last_status = NULL;
    b = make_counting_with(&c, &ops);
    c.fail_with = DLB_E_BACKEND_FAILURE;
    memset(&err, 0xff, sizeof err);
    CHECK_EQ_INT(dlb_buffer_allocate(b, 0, 10, 0, &buf, &err), DLB_E_BACKEND_FAILURE);
    CHECK_EQ_INT(err.has_native, 0);
    CHECK_EQ_STR(err.backend, "counting");
    c.fail_with = DLB_E_OUT_OF_MEMORY;
    memset(&err, 0xff, sizeof err);
    CHECK_EQ_INT(dlb_buffer_allocate(b, 0, 10, 0, &buf, &err), DLB_E_OUT_OF_MEMORY);
    CHECK_EQ_INT(err.has_native, 0);
    CHECK_EQ_STR(err.backend, "counting");
    CHECK_EQ_INT(dlb_buffer_allocate(b, 0, 10, 0, &buf, NULL), DLB_E_OUT_OF_MEMORY);
    dlb_backend_release(b);
  }
  { /* without host_pointer the buffer has no host address */
    counting c;
    dlb_backend_ops ops = counting_ops();
    dlb_backend *b;
    dlb_buffer *buf = NULL;
    dlb_error err;
    ops.host_pointer = NULL;
    b = make_counting_with(&c, &ops);
    CHECK_EQ_INT(dlb_buffer_allocate(b, 0, 10, 0, &buf, &err), DLB_OK);
    CHECK(buf->handle != NULL);
    CHECK(buf->host == NULL);
    dlb_buffer_release(buf);
    CHECK_EQ_INT(atomic_load(&c.deallocations), 1);
    dlb_backend_release(b);
  }
}

static void test_create_validation(void) {
  counting c;
  dlb_error err;
  dlb_backend *b;
  dlb_backend *const untouched = (dlb_backend *)&c;
  counting_init(&c);
#define REJECT(ops_ptr)                                                                            \
  do {                                                                                             \
    b = untouched;                                                                                 \
    memset(&err, 0, sizeof err);                                                                   \
    CHECK_EQ_INT(dlb_backend_create((ops_ptr), &c, &b, &err), DLB_E_ARGUMENT);                     \
    CHECK_EQ_INT(err.code, DLB_E_ARGUMENT);                                                        \
    CHECK(b == untouched);                                                                         \
  } while (0)

  REJECT(NULL);
  {
    dlb_backend_ops ops = counting_ops();
    ops.version = 0;
    REJECT(&ops);
    ops.version = DLB_BACKEND_OPS_VERSION + 1;
    REJECT(&ops);
  }
  {
    static const char *const bad_names[] = {"",
                                            "Cpu",
                                            "cpU",
                                            "a-b",
                                            "1abc",
                                            "_x",
                                            "a b",
                                            "a.b",
                                            "cpu:0",
                                            "é",
                                            "abcdefghijklmnopqrstuvwxyz012345", /* 32 chars */
                                            "abcdefghijklmnopqrstuvwxyz0123456789"};
    for (size_t k = 0; k < sizeof bad_names / sizeof bad_names[0]; k++) {
      dlb_backend_ops ops = counting_ops();
      ops.name = bad_names[k];
      REJECT(&ops);
    }
    dlb_backend_ops ops = counting_ops();
    ops.name = NULL;
    REJECT(&ops);
  }
  { /* each required function */
    for (int k = 0; k < 5; k++) {
      dlb_backend_ops ops = counting_ops();
      switch (k) {
        case 0: ops.device_count = NULL; break;
        case 1: ops.allocate = NULL; break;
        case 2: ops.deallocate = NULL; break;
        case 3: ops.copy_to_host = NULL; break;
        default: ops.copy_from_host = NULL; break;
      }
      REJECT(&ops);
    }
  }
#undef REJECT
  { /* good names, and only the required functions */
    static const char *const good[] = {"a", "a_1", "x9", "abcdefghijklmnopqrstuvwxyz01234", "z__"};
    for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
      dlb_backend_ops ops = counting_ops();
      ops.name = good[k];
      ops.copy_within = NULL;
      ops.host_pointer = NULL;
      ops.export_pointer = NULL;
      ops.last_status = NULL;
      ops.release = NULL;
      b = NULL;
      CHECK_EQ_INT(dlb_backend_create(&ops, &c, &b, &err), DLB_OK);
      CHECK(b != NULL);
      if (b) {
        CHECK_EQ_STR(b->name, good[k]);
        CHECK_EQ_INT(atomic_load(&b->refs), 1);
        dlb_backend_release(b);
      }
    }
  }
  { /* the name and the vtable are copied */
    char name[32];
    dlb_backend_ops ops = counting_ops();
    strcpy(name, "mine");
    ops.name = name;
    CHECK_EQ_INT(dlb_backend_create(&ops, &c, &b, &err), DLB_OK);
    strcpy(name, "XXXX");
    ops.allocate = NULL;
    CHECK_EQ_STR(b->name, "mine");
    CHECK(b->ops.name == b->name);
    CHECK(b->ops.allocate == c_allocate);
    CHECK(b->ctx == &c);
    CHECK_EQ_INT(dlb_backend_device_count(b), 2);
    dlb_backend_release(b);
    CHECK_EQ_INT(atomic_load(&c.releases), 1);
  }
}

static int neg_devices(void *ctx) { return -3; }

static void test_registry(void) {
  dlb_registry *r = dlb_registry_new();
  dlb_backend *cpu = NULL, *cnt, *none, *dup = NULL, *got;
  counting c, cz, cd;
  dlb_error err;
  int id;
  CHECK_EQ_INT(dlb_cpu_backend_create(&cpu, &err), DLB_OK);
  cnt = make_counting(&c);
  c.devices = 3;
  CHECK_EQ_INT(dlb_registry_add(r, cpu, &err), DLB_OK);
  CHECK_EQ_INT(dlb_registry_add(r, cnt, &err), DLB_OK);
  CHECK_EQ_INT(r->count, 2);
  CHECK_EQ_INT(atomic_load(&cpu->refs), 2);
  { /* a second backend under a taken name */
    dlb_backend_ops ops = counting_ops();
    ops.name = "cpu";
    counting_init(&cd);
    CHECK_EQ_INT(dlb_backend_create(&ops, &cd, &dup, &err), DLB_OK);
    memset(&err, 0, sizeof err);
    CHECK_EQ_INT(dlb_registry_add(r, dup, &err), DLB_E_ARGUMENT);
    CHECK_EQ_INT(err.code, DLB_E_ARGUMENT);
    CHECK_EQ_INT(dlb_registry_add(r, cpu, &err), DLB_E_ARGUMENT); /* the same one again */
    CHECK_EQ_INT(r->count, 2);
    CHECK_EQ_INT(atomic_load(&dup->refs), 1); /* not retained */
    CHECK_EQ_INT(atomic_load(&cpu->refs), 2);
    dlb_backend_release(dup);
    CHECK_EQ_INT(atomic_load(&cd.releases), 1);
  }
  /* find, with lengths (names need not be NUL-terminated) */
  CHECK(dlb_registry_find(r, "cpu", 3) == cpu);
  CHECK(dlb_registry_find(r, "cpuX", 3) == cpu);
  CHECK(dlb_registry_find(r, "cpu", 2) == NULL);
  CHECK(dlb_registry_find(r, "cpux", 4) == NULL);
  CHECK(dlb_registry_find(r, "counting", 8) == cnt);
  CHECK(dlb_registry_find(r, "", 0) == NULL);

#define PARSE(text, want)                                                                          \
  do {                                                                                             \
    got = (dlb_backend *)&c;                                                                       \
    id = -99;                                                                                      \
    memset(&err, 0, sizeof err);                                                                   \
    CHECK_EQ_INT(dlb_registry_parse_device(r, (text), strlen(text), &got, &id, &err), (want));     \
    if ((want) != DLB_OK) {                                                                        \
      CHECK_EQ_INT(err.code, (want));                                                              \
      CHECK(got == (dlb_backend *)&c);                                                             \
      CHECK_EQ_INT(id, -99);                                                                       \
    }                                                                                              \
  } while (0)

  PARSE("cpu", DLB_OK);
  CHECK(got == cpu);
  CHECK_EQ_INT(id, 0);
  PARSE("cpu:0", DLB_OK);
  CHECK(got == cpu);
  CHECK_EQ_INT(id, 0);
  PARSE("cpu:00", DLB_OK);
  CHECK_EQ_INT(id, 0);
  PARSE("counting:2", DLB_OK);
  CHECK(got == cnt);
  CHECK_EQ_INT(id, 2);
  PARSE("counting", DLB_OK);
  CHECK_EQ_INT(id, 0);
  PARSE("cpu:1", DLB_E_UNKNOWN_DEVICE);
  PARSE("counting:3", DLB_E_UNKNOWN_DEVICE);
  PARSE("cpu:", DLB_E_UNKNOWN_DEVICE);
  PARSE("cpu:x", DLB_E_UNKNOWN_DEVICE);
  PARSE("cpu:0x", DLB_E_UNKNOWN_DEVICE);
  PARSE("cpu:-1", DLB_E_UNKNOWN_DEVICE);
  PARSE("cpu:+0", DLB_E_UNKNOWN_DEVICE);
  PARSE("cpu: 0", DLB_E_UNKNOWN_DEVICE);
  PARSE("cpu:0:0", DLB_E_UNKNOWN_DEVICE);
  PARSE("cpu:99999999999999999999", DLB_E_UNKNOWN_DEVICE);
  PARSE("cpu:4294967296", DLB_E_UNKNOWN_DEVICE);
  PARSE("gpu", DLB_E_UNKNOWN_DEVICE);
  PARSE("gpu:0", DLB_E_UNKNOWN_DEVICE);
  PARSE("CPU", DLB_E_UNKNOWN_DEVICE);
  PARSE("cpu ", DLB_E_UNKNOWN_DEVICE);
  PARSE("", DLB_E_UNKNOWN_DEVICE);
  PARSE(":0", DLB_E_UNKNOWN_DEVICE);
  PARSE("cp", DLB_E_UNKNOWN_DEVICE);
  { /* the length bounds the text */
    got = NULL;
    CHECK_EQ_INT(dlb_registry_parse_device(r, "cpu:0junk", 5, &got, &id, &err), DLB_OK);
    CHECK(got == cpu);
    CHECK_EQ_INT(dlb_registry_parse_device(r, "cpu:1", 3, &got, &id, &err), DLB_OK);
    CHECK_EQ_INT(id, 0);
    CHECK_EQ_INT(dlb_registry_parse_device(r, "cpu:9", 4, &got, &id, &err), DLB_E_UNKNOWN_DEVICE);
    CHECK_EQ_INT(dlb_registry_parse_device(r, "gpu", 3, &got, &id, NULL), DLB_E_UNKNOWN_DEVICE);
  }
  { /* registered, but no devices here */
    dlb_backend_ops ops = counting_ops();
    ops.name = "nodev";
    counting_init(&cz);
    cz.devices = 0;
    CHECK_EQ_INT(dlb_backend_create(&ops, &cz, &none, &err), DLB_OK);
    CHECK_EQ_INT(dlb_registry_add(r, none, &err), DLB_OK);
    dlb_backend_release(none);
    PARSE("nodev", DLB_E_DEVICE_UNAVAILABLE);
    CHECK_EQ_STR(err.backend, "nodev");
    PARSE("nodev:0", DLB_E_DEVICE_UNAVAILABLE);
    PARSE("nodev:5", DLB_E_DEVICE_UNAVAILABLE);
    CHECK_EQ_INT(dlb_backend_device_count(none), 0);
    ops.name = "negdev";
    ops.device_count = neg_devices;
    CHECK_EQ_INT(dlb_backend_create(&ops, &cz, &none, &err), DLB_OK);
    CHECK_EQ_INT(dlb_registry_add(r, none, &err), DLB_OK);
    dlb_backend_release(none);
    CHECK_EQ_INT(dlb_backend_device_count(none), 0); /* the registry still holds it */
    PARSE("negdev", DLB_E_DEVICE_UNAVAILABLE);
  }
#undef PARSE
  { /* the registry grows */
    counting many;
    counting_init(&many);
    for (int k = 0; k < 40; k++) {
      char name[16];
      dlb_backend_ops ops = counting_ops();
      dlb_backend *x = NULL;
      snprintf(name, sizeof name, "b%d", k);
      ops.name = name;
      CHECK_EQ_INT(dlb_backend_create(&ops, &many, &x, &err), DLB_OK);
      CHECK_EQ_INT(dlb_registry_add(r, x, &err), DLB_OK);
      dlb_backend_release(x);
    }
    CHECK_EQ_INT(r->count, 44);
    CHECK(dlb_registry_find(r, "b39", 3) != NULL);
    CHECK(dlb_registry_find(r, "cpu", 3) == cpu);
    CHECK_EQ_INT(atomic_load(&many.releases), 0);
    dlb_registry_free(r);
    CHECK_EQ_INT(atomic_load(&many.releases), 40);
  }
  CHECK_EQ_INT(atomic_load(&cz.releases), 2);
  CHECK_EQ_INT(atomic_load(&cpu->refs), 1);
  CHECK_EQ_INT(atomic_load(&c.releases), 0);
  dlb_backend_release(cnt);
  CHECK_EQ_INT(atomic_load(&c.releases), 1);
  dlb_backend_release(cpu);
}

/* Wrapped memory: freed by external_release, never by the backend. */
static int external_calls;
static void external_free(void *owner) {
  external_calls++;
  free(owner);
}

static void test_external(void) {
  counting c;
  dlb_backend *b = make_counting(&c);
  { /* no backend at all */
    dlb_buffer *buf = calloc(1, sizeof *buf);
    void *mem = malloc(16);
    atomic_init(&buf->refs, 1);
    buf->handle = buf->host = mem;
    buf->nbytes = 16;
    buf->owner = mem;
    buf->external_release = external_free;
    dlb_buffer_retain(buf);
    dlb_buffer_release(buf);
    CHECK_EQ_INT(external_calls, 0);
    dlb_buffer_release(buf);
    CHECK_EQ_INT(external_calls, 1);
  }
  { /* on a backend: the backend is released, its deallocate is not called */
    dlb_buffer *buf = calloc(1, sizeof *buf);
    void *mem = malloc(16);
    atomic_init(&buf->refs, 1);
    dlb_backend_retain(b);
    buf->backend = b;
    buf->handle = buf->host = mem;
    buf->nbytes = 16;
    buf->owner = mem;
    buf->external_release = external_free;
    dlb_backend_release(b);
    CHECK_EQ_INT(atomic_load(&c.releases), 0);
    dlb_buffer_release(buf);
    CHECK_EQ_INT(external_calls, 2);
    CHECK_EQ_INT(atomic_load(&c.deallocations), 0);
    CHECK_EQ_INT(atomic_load(&c.releases), 1);
  }
  dlb_buffer_release(NULL); /* fine */
  dlb_backend_release(NULL);
}

/* ------------------------------------------------------------------------ */
/* Threads */

#define THREADS 8
#define ROUNDS 100000

typedef struct worker {
  dlb_buffer *buf;
  dlb_backend *backend;
  int drop_own; /* release one reference of its own at the end */
  pthread_barrier_t *start;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  pthread_barrier_wait(w->start);
  for (int k = 0; k < ROUNDS; k++) {
    dlb_buffer_retain(w->buf);
    if (k % 7 == 0) dlb_buffer_retain(w->buf);
    dlb_backend_retain(w->backend);
    dlb_buffer_release(w->buf);
    if (k % 7 == 0) dlb_buffer_release(w->buf);
    dlb_backend_release(w->backend);
  }
  if (w->drop_own) dlb_buffer_release(w->buf);
  return NULL;
}

static void run_workers(dlb_buffer *buf, dlb_backend *backend, int drop_own) {
  pthread_t th[THREADS];
  worker w[THREADS];
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, THREADS);
  for (int k = 0; k < THREADS; k++) {
    w[k].buf = buf;
    w[k].backend = backend;
    w[k].drop_own = drop_own;
    w[k].start = &start;
    CHECK_EQ_INT(pthread_create(&th[k], NULL, work, &w[k]), 0);
  }
  for (int k = 0; k < THREADS; k++) pthread_join(th[k], NULL);
  pthread_barrier_destroy(&start);
}

static void test_threads(void) {
  counting c;
  dlb_backend *b = make_counting(&c);
  dlb_buffer *buf = NULL;
  dlb_error err;
  CHECK_EQ_INT(dlb_buffer_allocate(b, 0, 256, 1, &buf, &err), DLB_OK);
  /* 1: churn while the main thread holds the buffer */
  run_workers(buf, b, 0);
  CHECK_EQ_INT(atomic_load(&buf->refs), 1);
  CHECK_EQ_INT(atomic_load(&b->refs), 2);
  CHECK_EQ_INT(atomic_load(&c.deallocations), 0);
  /* 2: every thread holds one reference and drops it at the end; the main
   * thread lets go first, so some worker frees the buffer -- exactly once */
  for (int k = 0; k < THREADS; k++) dlb_buffer_retain(buf);
  dlb_backend_release(b); /* the buffer holds the last backend reference */
  dlb_buffer_release(buf);
  CHECK_EQ_INT(atomic_load(&c.deallocations), 0);
  run_workers(buf, b, 1);
  /* buf and b are gone now */
  CHECK_EQ_INT(atomic_load(&c.deallocations), 1);
  CHECK_EQ_INT(atomic_load(&c.allocations), 0);
  CHECK_EQ_INT(atomic_load(&c.releases), 1);
  CHECK_EQ_INT(atomic_load(&c.live_at_release), 0);
}

/* ------------------------------------------------------------------------ */
/* A backend living by its budget (a state's cpu backend) */

/* The counting backend over c, charging a new budget of its own (limit
 * bytes, 0: none), opened: its buffers with bytes hold it by their charge. */
static dlb_backend *make_budgeted(counting *c, size_t limit) {
  dlb_backend *b = make_counting(c);
  dlb_budget *budget = dlb_budget_new();
  CHECK(budget != NULL);
  atomic_store(&budget->limit, limit);
  dlb_backend_set_budget(b, budget);
  dlb_budget_release(budget); /* the backend holds it */
  dlb_backend_live_by_budget(b);
  return b;
}

/* The flag an open budget carries is never seen as bytes: in use, the peak,
 * the limit and a refused charge's message count only what was charged. */
static void test_open_budget_counts(void) {
  counting c;
  dlb_backend *b = make_budgeted(&c, 100);
  dlb_budget *budget = b->budget;
  dlb_error err;
  CHECK_EQ_INT(dlb_budget_in_use(budget), 0);
  CHECK_EQ_INT(dlb_budget_charge(budget, 60, &err), DLB_OK);
  CHECK_EQ_INT(dlb_budget_in_use(budget), 60);
  CHECK_EQ_INT(atomic_load(&budget->peak), 60);
  CHECK(!dlb_budget_would_exceed(budget, 40));
  CHECK(dlb_budget_would_exceed(budget, 41));
  CHECK_EQ_INT(dlb_budget_charge(budget, 41, &err), DLB_E_OUT_OF_MEMORY);
  CHECK(strstr(err.message, "100 bytes is reached: 60 bytes in use, 41 more") != NULL);
  CHECK_EQ_INT(dlb_budget_in_use(budget), 60);
  dlb_budget_refund(budget, 60);
  CHECK_EQ_INT(dlb_budget_in_use(budget), 0);
  CHECK_EQ_INT(atomic_load(&c.releases), 0); /* open: the refund to 0 ends nothing */
  atomic_store(&budget->limit, 0);
  /* without a limit, bytes stop below the flag: a charge reaching it is refused */
  CHECK_EQ_INT(dlb_budget_charge(budget, DLB_BUDGET_OPEN, &err), DLB_E_OUT_OF_MEMORY);
  CHECK_EQ_INT(dlb_budget_charge(budget, SIZE_MAX, &err), DLB_E_OUT_OF_MEMORY);
  CHECK_EQ_INT(dlb_budget_charge(budget, DLB_BUDGET_OPEN - 2, &err), DLB_OK);
  CHECK_EQ_INT(dlb_budget_charge(budget, 2, &err), DLB_E_OUT_OF_MEMORY);
  CHECK_EQ_INT(dlb_budget_charge(budget, 1, &err), DLB_OK);
  CHECK(dlb_budget_in_use(budget) == DLB_BUDGET_OPEN - 1);
  dlb_budget_refund(budget, DLB_BUDGET_OPEN - 1);
  CHECK_EQ_INT(dlb_budget_in_use(budget), 0);
  dlb_budget_refund(budget, 0); /* takes nothing, ends nothing */
  dlb_budget_close(budget);     /* nothing charged: the charges' reference ends now */
  CHECK_EQ_INT(atomic_load(&b->refs), 1);
  CHECK_EQ_INT(atomic_load(&c.releases), 0);
  dlb_backend_release(b);
  CHECK_EQ_INT(atomic_load(&c.releases), 1);
  dlb_budget_close(NULL); /* fine */
}

/* Buffers with bytes hold the backend by their charge, an empty one by a
 * reference; the backend ends once, after the budget is closed and the last
 * buffer is freed, in whatever order. */
static void test_lives_by_budget(void) {
  dlb_error err;
  for (int order = 0; order < 3; order++) {
    counting c;
    dlb_backend *b = make_budgeted(&c, 0);
    dlb_budget *budget = b->budget;
    dlb_buffer *x = NULL, *y = NULL, *empty = NULL;
    CHECK_EQ_INT(atomic_load(&b->refs), 2); /* the creator's and the charges' */
    CHECK_EQ_INT(dlb_buffer_allocate(b, 0, 64, 0, &x, &err), DLB_OK);
    CHECK_EQ_INT(dlb_buffer_allocate(b, 1, 32, 1, &y, &err), DLB_OK);
    CHECK_EQ_INT(dlb_buffer_allocate(b, 0, 0, 0, &empty, &err), DLB_OK);
    CHECK(x->by_charge && y->by_charge && !empty->by_charge);
    CHECK_EQ_INT(atomic_load(&b->refs), 3); /* only the empty buffer took one */
    CHECK_EQ_INT(dlb_budget_in_use(budget), 96);
    dlb_backend_release(b); /* the creator's */
    if (order == 1) dlb_buffer_release(x); /* freed before the close */
    if (order == 2) dlb_buffer_release(empty);
    dlb_budget_close(budget); /* as at lua_close, buffers still out */
    CHECK_EQ_INT(atomic_load(&c.releases), 0);
    if (order != 1) dlb_buffer_release(x);
    CHECK_EQ_INT(atomic_load(&c.releases), 0);
    if (order != 2) dlb_buffer_release(empty);
    CHECK_EQ_INT(atomic_load(&c.releases), 0);
    dlb_buffer_release(y); /* the last charge: the backend ends after its memory */
    CHECK_EQ_INT(atomic_load(&c.deallocations), 2);
    CHECK_EQ_INT(atomic_load(&c.releases), 1);
    CHECK_EQ_INT(atomic_load(&c.live_at_release), 0);
  }
  { /* a failed allocation takes no hold and leaves the charge as it was */
    counting c;
    dlb_backend *b = make_budgeted(&c, 0);
    dlb_buffer *x = NULL;
    c.fail_with = DLB_E_OUT_OF_MEMORY;
    CHECK_EQ_INT(dlb_buffer_allocate(b, 0, 64, 0, &x, &err), DLB_E_OUT_OF_MEMORY);
    CHECK_EQ_INT(dlb_budget_in_use(b->budget), 0);
    CHECK_EQ_INT(atomic_load(&b->refs), 2);
    dlb_budget_close(b->budget);
    CHECK_EQ_INT(atomic_load(&b->refs), 1);
    dlb_backend_release(b);
    CHECK_EQ_INT(atomic_load(&c.releases), 1);
  }
}

typedef struct freer {
  dlb_buffer **bufs;
  int n;
  pthread_barrier_t *start;
} freer;

static void *free_all(void *arg) {
  freer *f = arg;
  pthread_barrier_wait(f->start);
  for (int k = 0; k < f->n; k++) dlb_buffer_release(f->bufs[k]);
  return NULL;
}

/* DLPack deleters on other threads free the buffers while the state
 * closes: whichever comes last ends the backend, exactly once. */
static void test_budget_close_races_frees(void) {
  enum { PER_THREAD = 200 };
  for (int round = 0; round < 20; round++) {
    counting c;
    dlb_backend *b = make_budgeted(&c, 0);
    dlb_budget *budget = b->budget;
    static dlb_buffer *bufs[THREADS][PER_THREAD];
    pthread_t th[THREADS];
    freer f[THREADS];
    pthread_barrier_t start;
    dlb_error err;
    for (int t = 0; t < THREADS; t++)
      for (int k = 0; k < PER_THREAD; k++)
        CHECK_EQ_INT(dlb_buffer_allocate(b, 0, (size_t)(k % 5) * 8, 0, &bufs[t][k], &err), DLB_OK);
    dlb_backend_release(b); /* the creator's: the buffers and the open budget hold it */
    pthread_barrier_init(&start, NULL, THREADS + 1);
    for (int t = 0; t < THREADS; t++) {
      f[t].bufs = bufs[t];
      f[t].n = PER_THREAD;
      f[t].start = &start;
      CHECK_EQ_INT(pthread_create(&th[t], NULL, free_all, &f[t]), 0);
    }
    pthread_barrier_wait(&start);
    dlb_budget_close(budget); /* budget may be gone from here on */
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    pthread_barrier_destroy(&start);
    CHECK_EQ_INT(atomic_load(&c.allocations), 0);
    CHECK_EQ_INT(atomic_load(&c.releases), 1);
    CHECK_EQ_INT(atomic_load(&c.live_at_release), 0);
  }
}

/* Small cpu buffers share one block with their header: a block is 64-byte
 * aligned and zeroed when asked for (malloc may hand back the dirty blocks
 * freed here), and blocks freed on several threads at once are freed
 * intact (the backend keeps none of them: test_kept_blocks). */
typedef struct small_batch {
  dlb_buffer *bufs[64];
  pthread_barrier_t *start;
} small_batch;

static void *release_batch(void *arg) {
  small_batch *b = arg;
  pthread_barrier_wait(b->start);
  for (int k = 0; k < 64; k++) dlb_buffer_release(b->bufs[k]);
  return NULL;
}

static void test_small_blocks(void) {
  dlb_backend *cpu;
  dlb_error err;
  small_batch batch[4];
  pthread_t th[4];
  pthread_barrier_t start;
  int bad = 0;
  CHECK_EQ_INT(dlb_cpu_backend_create(&cpu, &err), DLB_OK);
  for (int round = 0; round < 50; round++) {
    /* dirty every block, then free them on four threads at once */
    for (int t = 0; t < 4; t++)
      for (int k = 0; k < 64; k++) {
        dlb_buffer *b = NULL;
        size_t n = 1 + (size_t)((round * 64 + k) % DLB_INLINE_BUFFER_BYTES);
        CHECK_EQ_INT(dlb_buffer_allocate(cpu, 0, n, 0, &b, &err), DLB_OK);
        if ((uintptr_t)b->host % 64 != 0) bad++;
        memset(b->host, 0xa5, n);
        batch[t].bufs[k] = b;
      }
    pthread_barrier_init(&start, NULL, 4);
    for (int t = 0; t < 4; t++) {
      batch[t].start = &start;
      CHECK_EQ_INT(pthread_create(&th[t], NULL, release_batch, &batch[t]), 0);
    }
    for (int t = 0; t < 4; t++) pthread_join(th[t], NULL);
    pthread_barrier_destroy(&start);
    /* zeroed buffers from the kept (dirty) blocks read as zeros */
    for (int k = 0; k < 100; k++) {
      dlb_buffer *b = NULL;
      CHECK_EQ_INT(dlb_buffer_allocate(cpu, 0, DLB_INLINE_BUFFER_BYTES, 1, &b, &err), DLB_OK);
      if ((uintptr_t)b->host % 64 != 0) bad++;
      for (size_t i = 0; i < DLB_INLINE_BUFFER_BYTES; i++)
        bad += ((unsigned char *)b->host)[i] != 0;
      batch[0].bufs[k % 64] = b;
      if (k % 64 == 63 || k == 99)
        for (int j = 0; j <= k % 64; j++) dlb_buffer_release(batch[0].bufs[j]);
    }
  }
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(atomic_load(&cpu->refs), 1); /* every buffer gave its reference back */
  dlb_backend_release(cpu);
}

/* Freed small blocks are kept by their backend for its next small buffers,
 * by the thread that created the backend only: there a released block comes
 * back (except under AddressSanitizer, which keeps none so that a use after
 * free is still caught), at most DLB_KEPT_BLOCKS of them. A release on
 * another thread frees its block and leaves the list alone, even while the
 * creating thread churns (ThreadSanitizer checks that no two threads touch
 * it); a backend made on another thread keeps nothing for this one; a
 * child of fork() forgets a list made before it (another thread may have
 * been halfway through an update) and keeps a new one; the backend's last
 * release frees the list (the heap's bytes in use do not
 * grow over a thousand backends with full lists). */
#define KEEPS DLB_KEEPS_BLOCKS

static dlb_buffer *small_buffer(dlb_backend *backend) {
  dlb_buffer *b = NULL;
  dlb_error err;
  CHECK_EQ_INT(dlb_buffer_allocate(backend, 0, 40, 0, &b, &err), DLB_OK);
  return b;
}

static void *release_all(void *arg) {
  small_batch *b = arg;
  pthread_barrier_wait(b->start);
  for (int k = 0; k < 64; k++) dlb_buffer_release(b->bufs[k]);
  return NULL;
}

/* Makes a cpu backend on this thread (checked by the caller after the join:
 * the check counters are the main thread's). */
static void *make_backend(void *out) {
  dlb_error err;
  if (dlb_cpu_backend_create(out, &err) != DLB_OK) *(dlb_backend **)out = NULL;
  return NULL;
}

static dlb_backend *forked; /* use_after_fork's backend, made before the fork */

static void use_after_fork(void) {
  dlb_buffer *b = small_buffer(forked);
  CHECK_EQ_INT(forked->kept_count, 0); /* the parent's list is forgotten, not taken from */
  dlb_buffer_release(b);
  CHECK_EQ_INT(forked->kept_count, KEEPS); /* a new list begins */
  b = small_buffer(forked);
  CHECK_EQ_INT(forked->kept_count, 0);
  dlb_buffer_release(b);
}

static void fill_kept_list(dlb_backend *cpu) {
  dlb_buffer *bufs[DLB_KEPT_BLOCKS + 8];
  for (int k = 0; k < DLB_KEPT_BLOCKS + 8; k++) bufs[k] = small_buffer(cpu);
  for (int k = 0; k < DLB_KEPT_BLOCKS + 8; k++) dlb_buffer_release(bufs[k]);
}

static void test_kept_blocks(void) {
  dlb_backend *cpu, *foreign = NULL;
  dlb_error err;
  dlb_buffer *b;
  void *first;
  small_batch batch;
  pthread_t th;
  pthread_barrier_t start;
  size_t before;
  CHECK_EQ_INT(dlb_cpu_backend_create(&cpu, &err), DLB_OK);

  /* the creating thread gets its released block back */
  b = small_buffer(cpu);
  first = b;
  dlb_buffer_release(b);
  CHECK_EQ_INT(cpu->kept_count, KEEPS);
  b = small_buffer(cpu);
  CHECK_EQ_INT(cpu->kept_count, 0);
  CHECK(!KEEPS || (void *)b == first);
  dlb_buffer_release(b);

  /* a kept block that held data reads as zeros when a zeroed buffer takes it */
  b = small_buffer(cpu);
  memset(b->host, 0xa5, 40);
  first = b;
  dlb_buffer_release(b);
  CHECK_EQ_INT(dlb_buffer_allocate(cpu, 0, DLB_INLINE_BUFFER_BYTES, 1, &b, &err), DLB_OK);
  CHECK(!KEEPS || (void *)b == first);
  for (size_t i = 0; i < DLB_INLINE_BUFFER_BYTES; i++) CHECK_EQ_INT(((unsigned char *)b->host)[i], 0);
  dlb_buffer_release(b);

  /* at most DLB_KEPT_BLOCKS are kept; the rest go back to malloc */
  fill_kept_list(cpu);
  CHECK_EQ_INT(cpu->kept_count, KEEPS * DLB_KEPT_BLOCKS);

  /* a child of fork() forgets the list and starts its own */
  forked = cpu;
  CHECK(run_isolated(use_after_fork));

  /* releases on another thread, while this one churns, keep nothing (the
   * batch takes the whole list first) */
  for (int k = 0; k < 64; k++) batch.bufs[k] = small_buffer(cpu);
  pthread_barrier_init(&start, NULL, 2);
  batch.start = &start;
  CHECK_EQ_INT(pthread_create(&th, NULL, release_all, &batch), 0);
  pthread_barrier_wait(&start);
  for (int k = 0; k < 20000; k++) dlb_buffer_release(small_buffer(cpu));
  pthread_join(th, NULL);
  pthread_barrier_destroy(&start);
  CHECK_EQ_INT(cpu->kept_count, KEEPS); /* the churn's last block, none of the other thread's */

  /* a backend made on another thread keeps nothing for this one */
  CHECK_EQ_INT(pthread_create(&th, NULL, make_backend, &foreign), 0);
  pthread_join(th, NULL);
  CHECK(foreign != NULL);
  if (foreign) {
    fill_kept_list(foreign);
    CHECK_EQ_INT(foreign->kept_count, 0);
    dlb_backend_release(foreign);
  }
  CHECK_EQ_INT(atomic_load(&cpu->refs), 1);
  dlb_backend_release(cpu);

  /* the last release frees the list: 1000 full lists (25 MB) leave no trace */
  before = mallinfo2().uordblks;
  for (int round = 0; round < 1000; round++) {
    CHECK_EQ_INT(dlb_cpu_backend_create(&cpu, &err), DLB_OK);
    fill_kept_list(cpu);
    dlb_backend_release(cpu);
  }
  CHECK(mallinfo2().uordblks < before + ((size_t)1 << 20));
}

int main(void) {
  test_zero_bytes();
  test_each_freed_once();
  test_release_order();
  test_failures();
  test_create_validation();
  test_registry();
  test_external();
  test_threads();
  test_open_budget_counts();
  test_lives_by_budget();
  test_budget_close_races_frees();
  test_small_blocks();
  test_kept_blocks();
  return check_done("test_buffer");
}
