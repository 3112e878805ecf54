/* test_dlpack.c -- DLPack export and import of the core (src/core/dlpack.c),
 * both ABIs, with hand-built producer tensors and a counting deleter.
 *
 * Every rule and ABI fact of DLPACK-NOTES.md has a check here or in
 * capi_exchange.c. Producer tensors live each in its own page; their deleter
 * counts the call and then makes the page inaccessible, so any read of a
 * tensor after its deleter ran (or a second deleter call) faults in every
 * build, not only under ASan. The few cases that faulted in the past run in
 * a child process, so a fault is one failed check. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, fork */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "core/array.h"
#include "core/copy.h"
#include "core/dlpack.h"
#include "core/shape.h"
#define FIXTURES_CPU
#include "fixtures.h"

/* Records one check that st is DLB_OK and says whether it is, so that the
 * checks depending on the result can be skipped instead of crashing. */
#define OK(st) ok_((st), #st, __LINE__)
static int ok_(dlb_status st, const char *what, int line) {
  check_count++;
  if (st == DLB_OK) return 1;
  check_failures++;
  fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, line, what, dlb_status_name(st),
          err.message);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Producers: hand-built tensors in guarded pages, a counting deleter. */

#define PAGE 4096

_Static_assert(sizeof(producer) <= PAGE, "a producer fits one page");

static atomic_int deleted;      /* deleter calls of producer tensors */
static atomic_int ctx_mismatch; /* deleter saw a manager_ctx it did not set */
static void *pages[1024];
static int npages;

static void guard(void *self) { mprotect(self, PAGE, PROT_NONE); }

static void producer_delete_v(DLManagedTensorVersioned *self) {
  if (self->manager_ctx && self->manager_ctx != (void *)self) atomic_fetch_add(&ctx_mismatch, 1);
  atomic_fetch_add(&deleted, 1);
  guard(self);
}

static void producer_delete_l(DLManagedTensor *self) {
  if (self->manager_ctx && self->manager_ctx != (void *)self) atomic_fetch_add(&ctx_mismatch, 1);
  atomic_fetch_add(&deleted, 1);
  guard(self);
}

/* A producer tensor over data. shape/strides are copied into the page
 * (strides NULL: the tensor's strides are NULL). */
static producer *make_producer(int versioned, void *data, int32_t device_type, DLDataType dtype,
                               int ndim, const int64_t *shape, const int64_t *strides,
                               uint64_t byte_offset) {
  producer *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(2);
  }
  if (npages < (int)(sizeof pages / sizeof pages[0])) pages[npages++] = p;
  memset(p, 0, sizeof *p);
  producer_init(p, versioned, producer_delete_v, producer_delete_l, data, device_type, dtype, ndim,
                shape, strides, byte_offset);
  return p;
}

static dlb_exported pex(producer *p) {
  dlb_exported e = {p->versioned, &p->t};
  return e;
}

#define DT_I32 dt(kDLInt, 32, 1)
#define DT_F64 dt(kDLFloat, 64, 1)

/* Imports p and checks the outcome. On failure: the code, exactly one
 * deleter call, out released. */
#define EXPECT_REJECT(p, code) expect_reject((p), (code), __LINE__)
static void expect_reject(producer *p, dlb_status code, int line) {
  dlb_array out;
  int before = atomic_load(&deleted);
  dlb_status st;
  memset(&out, 0xAB, sizeof out);
  st = dlb_dlpack_import(pex(p), cpu, NULL, &out, &err);
  if (st != code)
    fprintf(stderr, "line %d: import gave %s (%s)\n", line, dlb_status_name(st),
            st ? err.message : "");
  CHECK_EQ_INT(st, code);
  CHECK_EQ_INT(err.code, code);
  CHECK_EQ_INT(atomic_load(&deleted) - before, 1);
  CHECK(out.buffer == NULL);
  if (st == DLB_OK) dlb_array_release(&out);
}

/* Imports p, which must succeed without calling the deleter yet. */
#define IMPORT_OK(p, out) import_ok((p), (out), __LINE__)
static int import_ok(producer *p, dlb_array *out, int line) {
  int before = atomic_load(&deleted);
  dlb_status st = dlb_dlpack_import(pex(p), cpu, NULL, out, &err);
  if (st != DLB_OK)
    fprintf(stderr, "line %d: import failed: %s: %s\n", line, dlb_status_name(st), err.message);
  CHECK_EQ_INT(st, DLB_OK);
  CHECK_EQ_INT(atomic_load(&deleted) - before, st == DLB_OK ? 0 : 1);
  return st == DLB_OK;
}

/* Releases an imported array: exactly then the producer's deleter runs. */
#define RELEASE_IMPORTED(a) release_imported((a), __LINE__)
static void release_imported(dlb_array *a, int line) {
  int before = atomic_load(&deleted);
  dlb_array_release(a);
  if (atomic_load(&deleted) - before != 1) fprintf(stderr, "line %d: deleter calls\n", line);
  CHECK_EQ_INT(atomic_load(&deleted) - before, 1);
}

/* ------------------------------------------------------------------------ */
/* Helpers for our own arrays */

/* The element of a at idx as an integer; INT64_MIN when it cannot be read. */
static int64_t get_i(const dlb_array *a, const int64_t *idx) {
  dlb_scalar s;
  if (dlb_array_get(a, idx, &s, &err) != DLB_OK) return INT64_MIN;
  return scalar_int(&s);
}

static DLTensor *etensor(dlb_exported e) {
  return e.versioned ? &((DLManagedTensorVersioned *)e.tensor)->dl_tensor
                     : &((DLManagedTensor *)e.tensor)->dl_tensor;
}

static uint64_t eflags(dlb_exported e) {
  return e.versioned ? ((DLManagedTensorVersioned *)e.tensor)->flags : 0;
}

/* A size-0 export's data: never NULL (LibTorch 1.13 then never calls the
 * deleter), 64-byte aligned, byte_offset 0. */
#define CHECK_EMPTY_DATA(e) check_empty_data((e), __LINE__)
static void check_empty_data(dlb_exported e, int line) {
  DLTensor *t = etensor(e);
  int before = check_failures;
  CHECK(t->data != NULL);
  CHECK_EQ_INT((uintptr_t)t->data % 64, 0);
  CHECK_EQ_INT(t->byte_offset, 0);
  if (check_failures != before) fprintf(stderr, "  (size-0 export checked at line %d)\n", line);
}

static dlb_export_request request(int versioned, dlb_copy_mode copy) {
  dlb_export_request r;
  memset(&r, 0, sizeof r);
  r.versioned = versioned;
  r.copy = copy;
  r.host = cpu;
  return r;
}

/* Exports a as asked; DLB_OK expected. */
static dlb_exported export_ok(const dlb_array *a, int versioned, dlb_copy_mode copy, int line) {
  dlb_export_request r = request(versioned, copy);
  dlb_exported e = {0, NULL};
  dlb_status st = dlb_dlpack_export(a, &r, &e, &err);
  if (st != DLB_OK) fprintf(stderr, "line %d: export failed: %s\n", line, err.message);
  CHECK_EQ_INT(st, DLB_OK);
  CHECK(e.tensor != NULL);
  CHECK_EQ_INT(e.versioned, versioned);
  return e;
}
#define EXPORT_OK(a, v, c) export_ok((a), (v), (c), __LINE__)

/* The fields every zero-copy export of a cpu array has: header, device,
 * dtype, shape and strides equal to a's (never normalised), data at a's
 * element 0...0. */
#define CHECK_ZERO_COPY(e, a, code, bits) check_zero_copy((e), (a), (code), (bits), __LINE__)
static void check_zero_copy(dlb_exported e, const dlb_array *a, uint8_t code, uint8_t bits,
                            int line) {
  DLTensor *t = etensor(e);
  int before = check_failures;
  if (e.versioned) {
    DLManagedTensorVersioned *v = e.tensor;
    CHECK_EQ_INT(v->version.major, 1);
    CHECK_EQ_INT(v->version.minor, 3);
    CHECK(v->deleter != NULL);
    CHECK_EQ_INT(v->flags & DLPACK_FLAG_BITMASK_IS_COPIED, 0);
    CHECK_EQ_INT(v->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, 0);
    CHECK_EQ_INT((v->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0,
                 a->readonly || a->buffer->readonly);
  } else {
    DLManagedTensor *l = e.tensor;
    CHECK(l->deleter != NULL);
  }
  CHECK_EQ_INT(t->device.device_type, kDLCPU);
  CHECK_EQ_INT(t->device.device_id, 0);
  CHECK_EQ_INT(t->dtype.code, code);
  CHECK_EQ_INT(t->dtype.bits, bits);
  CHECK_EQ_INT(t->dtype.lanes, 1);
  CHECK_EQ_INT(t->ndim, a->ndim);
  if (a->ndim > 0) {
    CHECK(t->shape != NULL);
    CHECK(t->strides != NULL);
    if (t->shape && t->strides)
      for (int d = 0; d < a->ndim; d++) {
        CHECK_EQ_INT(t->shape[d], a->shape[d]);
        CHECK_EQ_INT(t->strides[d], a->strides[d]);
      }
  }
  if (a->numel > 0) CHECK((char *)t->data + t->byte_offset == dlb_array_host_data(a));
  if (check_failures != before) fprintf(stderr, "  (zero-copy export checked at line %d)\n", line);
}

/* ------------------------------------------------------------------------ */
/* ABI layout, checked at run time as well as by the compat header's asserts */

static void test_layout(void) {
  CHECK_EQ_INT(sizeof(DLDevice), 8);
  CHECK_EQ_INT(offsetof(DLDevice, device_type), 0);
  CHECK_EQ_INT(offsetof(DLDevice, device_id), 4);
  CHECK_EQ_INT(sizeof(DLDataType), 4);
  CHECK_EQ_INT(offsetof(DLDataType, code), 0);
  CHECK_EQ_INT(offsetof(DLDataType, bits), 1);
  CHECK_EQ_INT(offsetof(DLDataType, lanes), 2);
  CHECK_EQ_INT(sizeof(DLTensor), 48);
  CHECK_EQ_INT(offsetof(DLTensor, data), 0);
  CHECK_EQ_INT(offsetof(DLTensor, device), 8);
  CHECK_EQ_INT(offsetof(DLTensor, ndim), 16);
  CHECK_EQ_INT(offsetof(DLTensor, dtype), 20);
  CHECK_EQ_INT(offsetof(DLTensor, shape), 24);
  CHECK_EQ_INT(offsetof(DLTensor, strides), 32);
  CHECK_EQ_INT(offsetof(DLTensor, byte_offset), 40);
  CHECK_EQ_INT(sizeof(DLManagedTensor), 64);
  CHECK_EQ_INT(offsetof(DLManagedTensor, dl_tensor), 0);
  CHECK_EQ_INT(offsetof(DLManagedTensor, manager_ctx), 48);
  CHECK_EQ_INT(offsetof(DLManagedTensor, deleter), 56);
  CHECK_EQ_INT(sizeof(DLPackVersion), 8);
  CHECK_EQ_INT(offsetof(DLPackVersion, major), 0);
  CHECK_EQ_INT(offsetof(DLPackVersion, minor), 4);
  CHECK_EQ_INT(sizeof(((DLPackVersion *)0)->major), 4);
  CHECK_EQ_INT(sizeof(DLManagedTensorVersioned), 80);
  CHECK_EQ_INT(offsetof(DLManagedTensorVersioned, version), 0);
  CHECK_EQ_INT(offsetof(DLManagedTensorVersioned, manager_ctx), 8);
  CHECK_EQ_INT(offsetof(DLManagedTensorVersioned, deleter), 16);
  CHECK_EQ_INT(offsetof(DLManagedTensorVersioned, flags), 24);
  CHECK_EQ_INT(sizeof(((DLManagedTensorVersioned *)0)->flags), 8);
  CHECK_EQ_INT(offsetof(DLManagedTensorVersioned, dl_tensor), 32);
  CHECK_EQ_INT(DLPACK_FLAG_BITMASK_READ_ONLY, 1);
  CHECK_EQ_INT(DLPACK_FLAG_BITMASK_IS_COPIED, 2);
  CHECK_EQ_INT(DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED, 4);
  /* Device and type codes. */
  CHECK_EQ_INT(kDLCPU, 1);
  CHECK_EQ_INT(kDLCUDA, 2);
  CHECK_EQ_INT(kDLCUDAHost, 3);
  CHECK_EQ_INT(kDLOpenCL, 4);
  CHECK_EQ_INT(kDLVulkan, 7);
  CHECK_EQ_INT(kDLMetal, 8);
  CHECK_EQ_INT(kDLVPI, 9);
  CHECK_EQ_INT(kDLROCM, 10);
  CHECK_EQ_INT(kDLROCMHost, 11);
  CHECK_EQ_INT(kDLExtDev, 12);
  CHECK_EQ_INT(kDLCUDAManaged, 13);
  CHECK_EQ_INT(kDLOneAPI, 14);
  CHECK_EQ_INT(kDLWebGPU, 15);
  CHECK_EQ_INT(kDLHexagon, 16);
  CHECK_EQ_INT(kDLMAIA, 17);
  CHECK_EQ_INT(kDLTrn, 18);
  CHECK_EQ_INT(kDLInt, 0);
  CHECK_EQ_INT(kDLUInt, 1);
  CHECK_EQ_INT(kDLFloat, 2);
  CHECK_EQ_INT(kDLOpaqueHandle, 3);
  CHECK_EQ_INT(kDLBfloat, 4);
  CHECK_EQ_INT(kDLComplex, 5);
  CHECK_EQ_INT(kDLBool, 6);
  CHECK_EQ_INT(DLB_DLPACK_MAJOR, 1);
  CHECK_EQ_INT(DLB_DLPACK_MINOR, 3);
}

/* ------------------------------------------------------------------------ */
/* Export */

static void test_export_contiguous(void) {
  const int64_t shape[] = {2, 3};
  dlb_array a = iota(2, shape);
  for (int versioned = 0; versioned <= 1; versioned++) {
    dlb_exported e = EXPORT_OK(&a, versioned, DLB_COPY_IF_NEEDED);
    DLTensor *t = etensor(e);
    CHECK_ZERO_COPY(e, &a, kDLInt, 32);
    CHECK(t->data == a.buffer->host); /* shares memory */
    CHECK_EQ_INT(t->byte_offset, 0);
    CHECK_EQ_INT(t->strides[0], 3);
    CHECK_EQ_INT(t->strides[1], 1);
    CHECK_EQ_INT(((int32_t *)t->data)[4], 4);
    /* The tensor holds exactly one buffer reference. */
    CHECK_EQ_INT(atomic_load(&a.buffer->refs), 2);
    /* Both ABIs: the deleter sits where the ABI puts it (never cast one to the other). */
    if (versioned) {
      void (*d)(DLManagedTensorVersioned *);
      memcpy(&d, (char *)e.tensor + 16, sizeof d);
      CHECK(d == ((DLManagedTensorVersioned *)e.tensor)->deleter);
      CHECK(*(void **)((char *)e.tensor + 32) == t->data);
      CHECK(((DLManagedTensorVersioned *)e.tensor)->manager_ctx != NULL);
    } else {
      void (*d)(DLManagedTensor *);
      memcpy(&d, (char *)e.tensor + 56, sizeof d);
      CHECK(d == ((DLManagedTensor *)e.tensor)->deleter);
      CHECK(*(void **)e.tensor == t->data);
    }
    dlb_dlpack_delete(e);
    CHECK_EQ_INT(atomic_load(&a.buffer->refs), 1);
  }
  /* Writes through the tensor are the array's (zero copy both ways). */
  {
    dlb_exported e = EXPORT_OK(&a, 1, DLB_COPY_NEVER);
    int64_t idx[2] = {1, 2};
    ((int32_t *)etensor(e)->data)[5] = 77;
    CHECK_EQ_INT(get_i(&a, idx), 77);
    dlb_dlpack_delete(e);
  }
  /* The deleter may outlive the array: the memory stays valid until it runs,
   * and the last reference frees the buffer (the backend's count drops). */
  {
    size_t refs = atomic_load(&cpu->refs);
    dlb_exported e = EXPORT_OK(&a, 1, DLB_COPY_IF_NEEDED);
    dlb_array_release(&a);
    CHECK(a.buffer == NULL);
    CHECK_EQ_INT(atomic_load(&cpu->refs), refs);
    CHECK_EQ_INT(((int32_t *)etensor(e)->data)[5], 77);
    CHECK_EQ_INT(((int32_t *)etensor(e)->data)[0], 0);
    dlb_dlpack_delete(e);
    CHECK_EQ_INT(atomic_load(&cpu->refs), refs - 1);
  }
  /* dlb_dlpack_delete of nothing is a no-op. */
  {
    dlb_exported none = {1, NULL};
    dlb_dlpack_delete(none);
  }
}

/* Every dtype goes out with its DLPack code and bits; bool is {6, 8, 1}. */
static void test_export_dtypes(void) {
  static const struct {
    dlb_dtype dtype;
    uint8_t code, bits;
  } rows[] = {
      {DLB_BOOL, 6, 8},     {DLB_INT8, 0, 8},       {DLB_INT16, 0, 16},       {DLB_INT32, 0, 32},
      {DLB_INT64, 0, 64},   {DLB_UINT8, 1, 8},      {DLB_UINT16, 1, 16},      {DLB_UINT32, 1, 32},
      {DLB_UINT64, 1, 64},  {DLB_FLOAT16, 2, 16},   {DLB_BFLOAT16, 4, 16},    {DLB_FLOAT32, 2, 32},
      {DLB_FLOAT64, 2, 64}, {DLB_COMPLEX64, 5, 64}, {DLB_COMPLEX128, 5, 128},
  };
  const int64_t shape[] = {3};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    dlb_array a = alloc(rows[i].dtype, 1, shape);
    for (int versioned = 0; versioned <= 1; versioned++) {
      dlb_exported e = EXPORT_OK(&a, versioned, DLB_COPY_IF_NEEDED);
      CHECK_ZERO_COPY(e, &a, rows[i].code, rows[i].bits);
      dlb_dlpack_delete(e);
    }
    dlb_array_release(&a);
  }
  /* bool values go out as bytes 0/1 and come back as bool (jax #4719). */
  {
    dlb_array b = alloc(DLB_BOOL, 1, shape);
    dlb_scalar t = {.kind = DLB_SCALAR_BOOL, .v.b = 1};
    int64_t i1[1] = {1};
    dlb_array back;
    dlb_exported e;
    CHECK_EQ_INT(dlb_array_set(&b, i1, &t, &err), DLB_OK);
    e = EXPORT_OK(&b, 1, DLB_COPY_IF_NEEDED);
    CHECK_EQ_INT(((uint8_t *)etensor(e)->data)[1], 1);
    CHECK_EQ_INT(((uint8_t *)etensor(e)->data)[0], 0);
    CHECK_EQ_INT(dlb_dlpack_import(e, cpu, NULL, &back, &err), DLB_OK);
    CHECK_EQ_INT(back.dtype, DLB_BOOL);
    {
      dlb_scalar s;
      CHECK_EQ_INT(dlb_array_get(&back, i1, &s, &err), DLB_OK);
      CHECK_EQ_INT(s.kind, DLB_SCALAR_BOOL);
      CHECK_EQ_INT(s.v.b, 1);
    }
    dlb_array_release(&back);
    dlb_array_release(&b);
  }
}

static void test_export_views(void) {
  const int64_t shape[] = {3, 4};
  dlb_array a = iota(2, shape);
  /* Transposed: strides {1, 4}, same memory. */
  {
    dlb_array v = view_of(&a);
    const int perm[] = {1, 0};
    dlb_exported e;
    CHECK_EQ_INT(dlb_view_permute(&v, perm, &err), DLB_OK);
    e = EXPORT_OK(&v, 1, DLB_COPY_NEVER); /* no copy needed: never normalised */
    CHECK_ZERO_COPY(e, &v, kDLInt, 32);
    CHECK_EQ_INT(etensor(e)->shape[0], 4);
    CHECK_EQ_INT(etensor(e)->strides[0], 1);
    CHECK_EQ_INT(etensor(e)->strides[1], 4);
    CHECK(etensor(e)->data == a.buffer->host);
    dlb_dlpack_delete(e);
    e = EXPORT_OK(&v, 0, DLB_COPY_NEVER);
    CHECK_ZERO_COPY(e, &v, kDLInt, 32);
    dlb_dlpack_delete(e);
    dlb_array_release(&v);
  }
  /* Negative step: data points at the first element of the view (the
   * buffer's last row), strides negative (pytorch #188023). */
  {
    dlb_array v = view_of(&a);
    dlb_exported e;
    DLTensor *t;
    CHECK_EQ_INT(dlb_view_slice(&v, 0, 2, 3, -1, &err), DLB_OK);
    CHECK_EQ_INT(dlb_view_slice(&v, 1, 3, 2, -2, &err), DLB_OK);
    for (int versioned = 0; versioned <= 1; versioned++) {
      e = EXPORT_OK(&v, versioned, DLB_COPY_NEVER);
      t = etensor(e);
      CHECK_ZERO_COPY(e, &v, kDLInt, 32);
      CHECK_EQ_INT(t->strides[0], -4);
      CHECK_EQ_INT(t->strides[1], -2);
      CHECK((int32_t *)t->data == (int32_t *)a.buffer->host + 11);
      CHECK_EQ_INT(((int32_t *)t->data)[0], 11);
      CHECK_EQ_INT(((int32_t *)t->data)[2 * -4 + 1 * -2], 1); /* element (2, 1) = a[0][1] */
      dlb_dlpack_delete(e);
    }
    dlb_array_release(&v);
  }
  /* Expanded (stride 0) and its read-only flag. */
  {
    dlb_array row = view_of(&a), v;
    const int64_t big[] = {5, 3, 4};
    dlb_exported e;
    CHECK_EQ_INT(dlb_view_select(&row, 0, 1, &err), DLB_OK); /* a[1], values 4..7 */
    CHECK_EQ_INT(dlb_view_unsqueeze(&row, 0, &err), DLB_OK);
    v = view_of(&row);
    {
      const int64_t sh[] = {6, 4};
      CHECK_EQ_INT(dlb_view_expand(&v, 2, sh, &err), DLB_OK);
    }
    e = EXPORT_OK(&v, 1, DLB_COPY_NEVER);
    CHECK_ZERO_COPY(e, &v, kDLInt, 32);
    CHECK_EQ_INT(etensor(e)->strides[0], 0);
    CHECK_EQ_INT(etensor(e)->strides[1], 1);
    CHECK_EQ_INT(((int32_t *)etensor(e)->data)[0], 4);
    dlb_dlpack_delete(e);
    dlb_array_release(&v);
    v = view_of(&a);
    CHECK_EQ_INT(dlb_view_expand(&v, 3, big, &err), DLB_OK);
    e = EXPORT_OK(&v, 1, DLB_COPY_NEVER);
    CHECK_ZERO_COPY(e, &v, kDLInt, 32);
    CHECK_EQ_INT(etensor(e)->strides[0], 0);
    dlb_dlpack_delete(e);
    dlb_array_release(&v);
    dlb_array_release(&row);
  }
  /* Odd strides of extent-1 dims go out exactly as they are: no
   * normalisation (pytorch #83069, #99803, #162113). */
  {
    dlb_array v = view_of(&a);
    dlb_exported e;
    CHECK_EQ_INT(dlb_view_slice(&v, 1, 2, 1, 1, &err), DLB_OK); /* shape {3, 1} */
    CHECK_EQ_INT(dlb_view_unsqueeze(&v, 0, &err), DLB_OK);      /* shape {1, 3, 1} */
    v.strides[0] = 12345;
    v.strides[2] = -7;
    CHECK_EQ_INT(dlb_array_check_bounds(&v, &err), DLB_OK);
    for (int versioned = 0; versioned <= 1; versioned++) {
      e = EXPORT_OK(&v, versioned, DLB_COPY_NEVER);
      CHECK_ZERO_COPY(e, &v, kDLInt, 32);
      CHECK_EQ_INT(etensor(e)->strides[0], 12345);
      CHECK_EQ_INT(etensor(e)->strides[1], 4);
      CHECK_EQ_INT(etensor(e)->strides[2], -7);
      CHECK_EQ_INT(((int32_t *)etensor(e)->data)[4], 6);
      dlb_dlpack_delete(e);
    }
    dlb_array_release(&v);
  }
  /* A view with an offset: cpu memory allows pointer arithmetic, so data
   * points at the element and byte_offset is 0. */
  {
    dlb_array v = view_of(&a);
    dlb_exported e;
    CHECK_EQ_INT(dlb_view_select(&v, 0, 2, &err), DLB_OK);
    e = EXPORT_OK(&v, 1, DLB_COPY_NEVER);
    CHECK_ZERO_COPY(e, &v, kDLInt, 32);
    CHECK_EQ_INT(etensor(e)->byte_offset, 0);
    CHECK((int32_t *)etensor(e)->data == (int32_t *)a.buffer->host + 8);
    dlb_dlpack_delete(e);
    dlb_array_release(&v);
  }
  CHECK_EQ_INT(atomic_load(&a.buffer->refs), 1);
  dlb_array_release(&a);
}

static void test_export_size0_and_0d(void) {
  /* Size 0: a fresh buffer of 0 bytes (no memory at all) and a 0-length
   * slice of a real one. Strides are filled; data is never NULL. */
  {
    const int64_t shape[] = {0, 3};
    dlb_array z = alloc(DLB_FLOAT32, 2, shape);
    for (int versioned = 0; versioned <= 1; versioned++) {
      dlb_exported e = EXPORT_OK(&z, versioned, DLB_COPY_NEVER);
      DLTensor *t = etensor(e);
      CHECK_ZERO_COPY(e, &z, kDLFloat, 32);
      CHECK_EQ_INT(t->shape[0], 0);
      CHECK_EQ_INT(t->strides[0], 3);
      CHECK_EQ_INT(t->strides[1], 1);
      CHECK_EMPTY_DATA(e);
      CHECK_EQ_INT(atomic_load(&z.buffer->refs), 2);
      dlb_dlpack_delete(e);
      CHECK_EQ_INT(atomic_load(&z.buffer->refs), 1);
    }
    /* copy = true of nothing still works and is marked copied. */
    for (int versioned = 0; versioned <= 1; versioned++) {
      dlb_exported e = EXPORT_OK(&z, versioned, DLB_COPY_ALWAYS);
      if (versioned)
        CHECK_EQ_INT(eflags(e) & DLPACK_FLAG_BITMASK_IS_COPIED, DLPACK_FLAG_BITMASK_IS_COPIED);
      CHECK_EQ_INT(etensor(e)->ndim, 2);
      CHECK(etensor(e)->strides != NULL);
      CHECK_EMPTY_DATA(e);
      dlb_dlpack_delete(e);
    }
    dlb_array_release(&z);
  }
  {
    const int64_t shape[] = {4, 2};
    dlb_array a = iota(2, shape), v = view_of(&a);
    dlb_exported e;
    CHECK_EQ_INT(dlb_view_slice(&v, 0, 1, 0, 1, &err), DLB_OK);
    CHECK_EQ_INT(v.numel, 0);
    for (int versioned = 0; versioned <= 1; versioned++) {
      e = EXPORT_OK(&v, versioned, DLB_COPY_NEVER);
      CHECK_ZERO_COPY(e, &v, kDLInt, 32);
      CHECK_EQ_INT(etensor(e)->shape[0], 0);
      CHECK_EMPTY_DATA(e); /* not the buffer's (misaligned) element 1 */
      dlb_dlpack_delete(e);
    }
    dlb_array_release(&v);
    dlb_array_release(&a);
  }
  /* 0-d: ndim 0, data at the value. */
  {
    dlb_array s = alloc(DLB_FLOAT64, 0, NULL);
    dlb_scalar x = {.kind = DLB_SCALAR_FLOAT, .v.f = 2.5};
    CHECK_EQ_INT(dlb_array_set(&s, no_dims, &x, &err), DLB_OK);
    for (int versioned = 0; versioned <= 1; versioned++) {
      dlb_exported e = EXPORT_OK(&s, versioned, DLB_COPY_NEVER);
      DLTensor *t = etensor(e);
      CHECK_ZERO_COPY(e, &s, kDLFloat, 64);
      CHECK_EQ_INT(t->ndim, 0);
      CHECK(t->data != NULL);
      CHECK(t->data && *(double *)((char *)t->data + t->byte_offset) == 2.5);
      dlb_dlpack_delete(e);
    }
    dlb_array_release(&s);
  }
}

static void test_export_copy_rules(void) {
  const int64_t shape[] = {2, 3};
  dlb_array a = iota(2, shape);
  dlb_export_request r;
  dlb_exported e;
  /* copy = true: a fresh contiguous copy, IS_COPIED, the source untouched. */
  {
    dlb_array v = view_of(&a);
    const int perm[] = {1, 0};
    CHECK_EQ_INT(dlb_view_permute(&v, perm, &err), DLB_OK);
    e = EXPORT_OK(&v, 1, DLB_COPY_ALWAYS);
    CHECK_EQ_INT(eflags(e), DLPACK_FLAG_BITMASK_IS_COPIED);
    CHECK(etensor(e)->data != a.buffer->host);
    CHECK_EQ_INT(etensor(e)->strides[0], 2);
    CHECK_EQ_INT(etensor(e)->strides[1], 1);
    CHECK_EQ_INT(((int32_t *)etensor(e)->data)[1], 3); /* v[0][1] = a[1][0] */
    CHECK_EQ_INT(((int32_t *)etensor(e)->data)[5], 5);
    CHECK_EQ_INT(atomic_load(&a.buffer->refs), 2); /* a and v; the copy holds its own */
    ((int32_t *)etensor(e)->data)[0] = 99;
    {
      int64_t i00[2] = {0, 0};
      CHECK_EQ_INT(get_i(&a, i00), 0);
    }
    dlb_dlpack_delete(e);
    e = EXPORT_OK(&v, 0, DLB_COPY_ALWAYS); /* legacy copies too (no flag to carry) */
    CHECK(etensor(e)->data != a.buffer->host);
    CHECK_EQ_INT(((int32_t *)etensor(e)->data)[1], 3);
    dlb_dlpack_delete(e);
    dlb_array_release(&v);
  }
  /* dl_device = the array's own device: no copy. */
  r = request(1, DLB_COPY_NEVER);
  r.has_dl_device = 1;
  r.dl_device.device_type = kDLCPU;
  r.dl_device.device_id = 0;
  if (OK(dlb_dlpack_export(&a, &r, &e, &err))) {
    CHECK(etensor(e)->data == a.buffer->host);
    CHECK_EQ_INT(eflags(e), 0);
    dlb_dlpack_delete(e);
  }
  /* Another device with copy = false: only a copy would do. */
  r.dl_device.device_type = kDLCUDA;
  e.tensor = (void *)1;
  CHECK_EQ_INT(dlb_dlpack_export(&a, &r, &e, &err), DLB_E_COPY_REQUIRED);
  CHECK_EQ_INT(err.code, DLB_E_COPY_REQUIRED);
  CHECK(e.tensor == NULL);
  r.dl_device.device_type = kDLCPU;
  r.dl_device.device_id = 1;
  CHECK_EQ_INT(dlb_dlpack_export(&a, &r, &e, &err), DLB_E_COPY_REQUIRED);
  /* ... and with copies allowed, a device dlbridge cannot reach: refused. */
  r.copy = DLB_COPY_IF_NEEDED;
  r.dl_device.device_type = kDLCUDA;
  r.dl_device.device_id = 0;
  CHECK_EQ_INT(dlb_dlpack_export(&a, &r, &e, &err), DLB_E_UNSUPPORTED);
  CHECK_EQ_INT(atomic_load(&a.buffer->refs), 1);
  /* Read-only array. */
  {
    dlb_array ro = view_of(&a);
    ro.readonly = 1;
    /* versioned: zero copy with READ_ONLY */
    e = EXPORT_OK(&ro, 1, DLB_COPY_IF_NEEDED);
    CHECK_ZERO_COPY(e, &ro, kDLInt, 32);
    CHECK_EQ_INT(eflags(e), DLPACK_FLAG_BITMASK_READ_ONLY);
    CHECK(etensor(e)->data == a.buffer->host);
    dlb_dlpack_delete(e);
    e = EXPORT_OK(&ro, 1, DLB_COPY_NEVER);
    CHECK_EQ_INT(eflags(e), DLPACK_FLAG_BITMASK_READ_ONLY);
    dlb_dlpack_delete(e);
    /* versioned copy: writable, IS_COPIED only */
    e = EXPORT_OK(&ro, 1, DLB_COPY_ALWAYS);
    CHECK_EQ_INT(eflags(e), DLPACK_FLAG_BITMASK_IS_COPIED);
    dlb_dlpack_delete(e);
    /* legacy: no flag exists, so a copy is the only way: copy if needed
     * copies (NumPy refuses instead), copy = never cannot. */
    e = EXPORT_OK(&ro, 0, DLB_COPY_IF_NEEDED);
    CHECK(etensor(e)->data != a.buffer->host);
    CHECK_EQ_INT(((int32_t *)etensor(e)->data)[4], 4);
    dlb_dlpack_delete(e);
    r = request(0, DLB_COPY_NEVER);
    e.tensor = (void *)1;
    CHECK_EQ_INT(dlb_dlpack_export(&ro, &r, &e, &err), DLB_E_COPY_REQUIRED);
    CHECK_EQ_INT(err.code, DLB_E_COPY_REQUIRED);
    CHECK(strstr(err.message, "read-only") != NULL);
    CHECK(err.hint != NULL);
    CHECK(e.tensor == NULL);
    e = EXPORT_OK(&ro, 0, DLB_COPY_ALWAYS);
    CHECK(etensor(e)->data != a.buffer->host);
    CHECK_EQ_INT(((int32_t *)etensor(e)->data)[4], 4);
    dlb_dlpack_delete(e);
    CHECK_EQ_INT(atomic_load(&a.buffer->refs), 2);
    dlb_array_release(&ro);
    /* A read-only buffer (not just the view) counts as well. */
    a.buffer->readonly = 1;
    r = request(0, DLB_COPY_NEVER);
    CHECK_EQ_INT(dlb_dlpack_export(&a, &r, &e, &err), DLB_E_COPY_REQUIRED);
    e = EXPORT_OK(&a, 1, DLB_COPY_IF_NEEDED);
    CHECK_EQ_INT(eflags(e), DLPACK_FLAG_BITMASK_READ_ONLY);
    dlb_dlpack_delete(e);
    a.buffer->readonly = 0;
  }
  CHECK_EQ_INT(atomic_load(&a.buffer->refs), 1);
  dlb_array_release(&a);
}

/* ------------------------------------------------------------------------ */
/* The opaque backend: memory is malloc'd but no pointer is handed out (the
 * seed's non-PjRt case). A second flavour has export_pointer only. */

static dlb_status failing_export(void *ctx, int id, void *h, void **data) {
  return DLB_E_BACKEND_FAILURE;
}
static int64_t failing_status(void *ctx) { return 42; }

/* An opaque backend under name; with_export 1: export_pointer hands out the
 * handle, 2: export_pointer fails with native status 42. */
static dlb_backend *make_opaque(const char *name, int with_export) {
  dlb_backend_ops ops = opaque_ops(name);
  dlb_backend *b = NULL;
  ops.export_pointer = with_export == 1 ? malloc_export : with_export == 2 ? failing_export : NULL;
  ops.last_status = with_export == 2 ? failing_status : NULL;
  CHECK_EQ_INT(dlb_backend_create(&ops, NULL, &b, &err), DLB_OK);
  return b;
}

static dlb_array opaque_iota(dlb_backend *b, int64_t n) {
  dlb_array a;
  int32_t vals[16];
  memset(&a, 0, sizeof a);
  CHECK_EQ_INT(dlb_array_allocate(&a, b, 0, DLB_INT32, 1, &n, 1, &err), DLB_OK);
  for (int64_t k = 0; k < n && k < 16; k++) vals[k] = (int32_t)(10 + k);
  /* through the backend's own copy: the core has no host pointer to write through */
  if (a.buffer)
    CHECK_EQ_INT(a.buffer->backend->ops.copy_from_host(NULL, 0, a.buffer->handle, 0, vals,
                                                       (size_t)n * sizeof vals[0]),
                 DLB_OK);
  return a;
}

static dlb_backend *opaque_for_child;

/* A 0-length view of non-exportable memory (the buffer has a handle but no
 * pointer to give): nothing to point at, so it exports without asking the
 * backend. Isolated: a NULL export_pointer called here would crash. */
static void size0_view_of_opaque(void) {
  dlb_array a = opaque_iota(opaque_for_child, 4), v = view_of(&a);
  dlb_export_request r = request(1, DLB_COPY_IF_NEEDED);
  dlb_exported e = {0, NULL};
  dlb_status st;
  CHECK_EQ_INT(dlb_view_slice(&v, 0, 1, 0, 1, &err), DLB_OK);
  st = dlb_dlpack_export(&v, &r, &e, &err);
  CHECK_EQ_INT(st, DLB_OK);
  if (st == DLB_OK) {
    CHECK_EQ_INT(etensor(e)->ndim, 1);
    CHECK_EQ_INT(etensor(e)->shape[0], 0);
    CHECK(etensor(e)->strides != NULL);
    CHECK_EMPTY_DATA(e);
    dlb_dlpack_delete(e);
  }
  dlb_array_release(&v);
  dlb_array_release(&a);
}

static void test_export_opaque_backend(void) {
  dlb_backend *b = make_opaque("opaque", 0);
  dlb_array a = opaque_iota(b, 6);
  dlb_export_request r = request(1, DLB_COPY_IF_NEEDED);
  dlb_exported e = {0, (void *)1};
  CHECK(a.buffer->host == NULL);
  /* No pointer to hand out: a coded, recoverable error naming the backend. */
  memset(&err, 0, sizeof err);
  CHECK_EQ_INT(dlb_dlpack_export(&a, &r, &e, &err), DLB_E_BACKEND_INCOMPATIBLE);
  CHECK_EQ_INT(err.code, DLB_E_BACKEND_INCOMPATIBLE);
  CHECK_EQ_STR(err.backend, "opaque");
  CHECK(strstr(err.message, "opaque") != NULL);
  CHECK(e.tensor == NULL);
  r.versioned = 0;
  CHECK_EQ_INT(dlb_dlpack_export(&a, &r, &e, &err), DLB_E_BACKEND_INCOMPATIBLE);
  r.copy = DLB_COPY_ALWAYS; /* a copy on the same backend cannot be exported either */
  CHECK_EQ_INT(dlb_dlpack_export(&a, &r, &e, &err), DLB_E_BACKEND_INCOMPATIBLE);
  CHECK_EQ_INT(atomic_load(&a.buffer->refs), 1);
  CHECK_EQ_INT(atomic_load(&opaque_live), 1);
  /* fallback_host: a host copy, IS_COPIED, on the cpu device. */
  for (int versioned = 0; versioned <= 1; versioned++) {
    r = request(versioned, DLB_COPY_IF_NEEDED);
    r.fallback_host = 1;
    if (!OK(dlb_dlpack_export(&a, &r, &e, &err))) continue;
    if (versioned) CHECK_EQ_INT(eflags(e), DLPACK_FLAG_BITMASK_IS_COPIED);
    CHECK_EQ_INT(etensor(e)->device.device_type, kDLCPU);
    CHECK_EQ_INT(etensor(e)->device.device_id, 0);
    CHECK_EQ_INT(etensor(e)->strides[0], 1);
    CHECK_EQ_INT(((int32_t *)etensor(e)->data)[0], 10);
    CHECK_EQ_INT(((int32_t *)etensor(e)->data)[5], 15);
    CHECK_EQ_INT(atomic_load(&a.buffer->refs), 1);
    dlb_dlpack_delete(e);
  }
  /* fallback with copy = false: only a copy would do. */
  r = request(1, DLB_COPY_NEVER);
  r.fallback_host = 1;
  CHECK_EQ_INT(dlb_dlpack_export(&a, &r, &e, &err), DLB_E_COPY_REQUIRED);
  /* dl_device = cpu asks for the host copy explicitly. */
  r = request(1, DLB_COPY_IF_NEEDED);
  r.has_dl_device = 1;
  r.dl_device.device_type = kDLCPU;
  if (OK(dlb_dlpack_export(&a, &r, &e, &err))) {
    CHECK_EQ_INT(eflags(e), DLPACK_FLAG_BITMASK_IS_COPIED);
    CHECK_EQ_INT(etensor(e)->device.device_type, kDLCPU);
    CHECK_EQ_INT(((int32_t *)etensor(e)->data)[2], 12);
    dlb_dlpack_delete(e);
  }
  /* A size-0 array of it has no memory to point at: exports. */
  {
    int64_t zero = 0;
    dlb_array z;
    CHECK_EQ_INT(dlb_array_allocate(&z, b, 0, DLB_INT32, 1, &zero, 1, &err), DLB_OK);
    r = request(1, DLB_COPY_IF_NEEDED);
    if (OK(dlb_dlpack_export(&z, &r, &e, &err))) {
      CHECK_EQ_INT(etensor(e)->device.device_type, kDLExtDev);
      CHECK(etensor(e)->strides != NULL);
      CHECK_EMPTY_DATA(e);
      dlb_dlpack_delete(e);
    }
    dlb_array_release(&z);
  }
  opaque_for_child = b;
  CHECK(run_isolated(size0_view_of_opaque));
  dlb_array_release(&a);
  CHECK_EQ_INT(atomic_load(&opaque_live), 0);
  dlb_backend_release(b);
  CHECK_EQ_INT(atomic_load(&opaque_released), 1);

  /* Pointer but no host access: zero copy; device memory without pointer
   * arithmetic gets the view's offset in byte_offset. */
  b = make_opaque("engine", 1);
  a = opaque_iota(b, 6);
  {
    dlb_array v = view_of(&a);
    void *base = a.buffer->handle;
    CHECK_EQ_INT(dlb_view_slice(&v, 0, 2, 3, 1, &err), DLB_OK);
    for (int versioned = 0; versioned <= 1; versioned++) {
      r = request(versioned, DLB_COPY_NEVER);
      if (!OK(dlb_dlpack_export(&v, &r, &e, &err))) continue;
      CHECK_EQ_INT(etensor(e)->device.device_type, kDLExtDev);
      CHECK(etensor(e)->data == base);
      CHECK_EQ_INT(etensor(e)->byte_offset, 8);
      CHECK_EQ_INT(eflags(e), 0);
      CHECK_EQ_INT(*(int32_t *)((char *)etensor(e)->data + etensor(e)->byte_offset), 12);
      CHECK_EQ_INT(atomic_load(&a.buffer->refs), 3);
      /* Our own export comes back on its own buffer and backend, zero copy,
       * even though device memory is not host-reachable. */
      {
        dlb_array back;
        int32_t x[3] = {0, 0, 0};
        CHECK_EQ_INT(dlb_dlpack_import(e, cpu, NULL, &back, &err), DLB_OK);
        CHECK(back.buffer == a.buffer);
        CHECK_EQ_INT(back.offset, v.offset);
        CHECK_EQ_INT(atomic_load(&a.buffer->refs), 3); /* the tensor's hold moved to back */
        /* read through the backend (staged): elements 2..4 of 10, 11, ... */
        CHECK_EQ_INT(dlb_array_read_into(&back, x, DLB_INT32, &err), DLB_OK);
        CHECK(x[0] == 12 && x[1] == 13 && x[2] == 14);
        dlb_array_release(&back);
      }
      CHECK_EQ_INT(atomic_load(&a.buffer->refs), 2);
    }
    dlb_array_release(&v);
    /* The last reference, held by a tensor, frees the backend's memory. */
    r = request(1, DLB_COPY_NEVER);
    if (!OK(dlb_dlpack_export(&a, &r, &e, &err))) e.tensor = NULL;
    dlb_array_release(&a);
    dlb_backend_release(b);
    CHECK_EQ_INT(atomic_load(&opaque_live), 1);
    CHECK_EQ_INT(atomic_load(&opaque_released), 1);
    dlb_dlpack_delete(e);
    CHECK_EQ_INT(atomic_load(&opaque_live), 0);
    CHECK_EQ_INT(atomic_load(&opaque_released), 2);
  }
  /* export_pointer failing: BACKEND_FAILURE with the native status, nothing leaked. */
  b = make_opaque("flaky", 2);
  a = opaque_iota(b, 2);
  r = request(1, DLB_COPY_IF_NEEDED);
  memset(&err, 0, sizeof err);
  CHECK_EQ_INT(dlb_dlpack_export(&a, &r, &e, &err), DLB_E_BACKEND_FAILURE);
  CHECK_EQ_STR(err.backend, "flaky");
  CHECK_EQ_INT(err.has_native, 1);
  CHECK_EQ_INT(err.native_status, 42);
  CHECK_EQ_INT(atomic_load(&a.buffer->refs), 1);
  dlb_array_release(&a);
  dlb_backend_release(b);
  CHECK_EQ_INT(atomic_load(&opaque_live), 0);
}

/* Deleters on another thread while this one keeps working (numpy #22510). */
#define NTHREAD_TENSORS 64
static dlb_exported thread_tensors[NTHREAD_TENSORS];

static void *delete_all(void *arg) {
  (void)arg;
  for (int i = 0; i < NTHREAD_TENSORS; i++) {
    int32_t *p = etensor(thread_tensors[i])->data;
    volatile int32_t sum = p[0] + p[99]; /* the memory is still valid here */
    (void)sum;
    dlb_dlpack_delete(thread_tensors[i]);
  }
  return NULL;
}

static void test_export_deleter_thread(void) {
  const int64_t n = 100;
  size_t refs = atomic_load(&cpu->refs);
  pthread_t th;
  dlb_array a = iota(1, &n);
  for (int i = 0; i < NTHREAD_TENSORS; i++) {
    dlb_array v = view_of(&a);
    thread_tensors[i] = EXPORT_OK(&v, i % 2, i % 3 == 0 ? DLB_COPY_ALWAYS : DLB_COPY_IF_NEEDED);
    dlb_array_release(&v);
  }
  CHECK_EQ_INT(pthread_create(&th, NULL, delete_all, NULL), 0);
  dlb_array_release(&a); /* races with the deleters: atomics only */
  for (int k = 0; k < 200; k++) {
    dlb_array t = iota(1, &n);
    dlb_array_release(&t);
  }
  CHECK_EQ_INT(pthread_join(th, NULL), 0);
  CHECK_EQ_INT(atomic_load(&cpu->refs), refs);
}

/* ------------------------------------------------------------------------ */
/* Import */

static void import_version_garbage(void) {
  /* Major 2: the deleter runs and nothing else is read. The DLTensor and
   * flags are garbage; after the deleter the whole page is inaccessible. */
  producer *p = make_producer(1, NULL, 0, dt(0, 0, 0), 0, NULL, NULL, 0);
  memset(&p->t.v.dl_tensor, 0xA5, sizeof p->t.v.dl_tensor);
  p->t.v.flags = ~(uint64_t)0;
  p->t.v.version.major = 2;
  p->t.v.version.minor = 0;
  EXPECT_REJECT(p, DLB_E_DLPACK_VERSION);
}

static void import_version_zero(void) {
  producer *p = make_producer(1, NULL, kDLCPU, DT_I32, 0, NULL, NULL, 0);
  p->t.v.version.major = 0;
  p->t.v.version.minor = 6;
  EXPECT_REJECT(p, DLB_E_DLPACK_VERSION);
}

static void test_import_version(void) {
  CHECK(run_isolated(import_version_garbage));
  CHECK(run_isolated(import_version_zero));
  /* Minor versions above ours are fine (same major, same ABI). */
  {
    int32_t x = 5;
    producer *p = make_producer(1, &x, kDLCPU, DT_I32, 0, NULL, NULL, 0);
    dlb_array a;
    p->t.v.version.minor = 99;
    if (IMPORT_OK(p, &a)) {
      CHECK_EQ_INT(get_i(&a, no_dims), 5);
      RELEASE_IMPORTED(&a);
    }
  }
  /* A NULL managed tensor: an error, nothing to call. */
  {
    dlb_exported none = {1, NULL};
    dlb_array a;
    CHECK_EQ_INT(dlb_dlpack_import(none, cpu, NULL, &a, &err), DLB_E_DLPACK_INVALID);
    CHECK(a.buffer == NULL);
  }
}

static void test_import_malformed(void) {
  static int32_t data[64];
  const int64_t s2[] = {2, 3};
  for (int versioned = 0; versioned <= 1; versioned++) {
    /* ndim out of range */
    EXPECT_REJECT(make_producer(versioned, data, kDLCPU, DT_I32, -1, s2, NULL, 0),
                  DLB_E_DLPACK_INVALID);
    {
      int64_t ones[40];
      for (int d = 0; d < 40; d++) ones[d] = 1;
      /* A valid 33-D tensor is not malformed: it has more dims than an array holds. */
      EXPECT_REJECT(make_producer(versioned, data, kDLCPU, DT_I32, 33, ones, ones, 0), DLB_E_SHAPE);
      {
        producer *p = make_producer(versioned, data, kDLCPU, DT_I32, 32, ones, ones, 0);
        dlb_array a;
        if (IMPORT_OK(p, &a)) { /* 32 dims is still fine */
          CHECK_EQ_INT(a.ndim, 32);
          CHECK_EQ_INT(a.numel, 1);
          RELEASE_IMPORTED(&a);
        }
      }
    }
    /* NULL shape with ndim > 0 */
    EXPECT_REJECT(make_producer(versioned, data, kDLCPU, DT_I32, 2, NULL, NULL, 0),
                  DLB_E_DLPACK_INVALID);
    /* negative extents */
    {
      const int64_t neg[] = {2, -3};
      const int64_t neg0[] = {0, -1}; /* a zero elsewhere does not excuse it */
      EXPECT_REJECT(make_producer(versioned, data, kDLCPU, DT_I32, 2, neg, NULL, 0),
                    DLB_E_DLPACK_INVALID);
      EXPECT_REJECT(make_producer(versioned, data, kDLCPU, DT_I32, 2, neg0, NULL, 0),
                    DLB_E_DLPACK_INVALID);
    }
    /* element count overflows int64 */
    {
      const int64_t big[] = {INT64_C(1) << 32, INT64_C(1) << 32};
      const int64_t big3[] = {INT64_MAX, 2};
      EXPECT_REJECT(make_producer(versioned, data, kDLCPU, DT_I32, 2, big, NULL, 0),
                    DLB_E_DLPACK_INVALID);
      EXPECT_REJECT(make_producer(versioned, data, kDLCPU, DT_I32, 2, big3, NULL, 0),
                    DLB_E_DLPACK_INVALID);
    }
    /* dtypes dlbridge has no type for */
    {
      static const DLDataType bad[] = {
          {99, 32, 1},     {kDLFloat, 24, 1},   {kDLInt, 4, 1},           {kDLInt, 32, 2},
          {kDLInt, 32, 0}, {kDLFloat, 32, 4},   {kDLOpaqueHandle, 64, 1}, {kDLBool, 1, 1},
          {kDLBool, 8, 2}, {kDLComplex, 32, 1}, {7, 8, 1} /* float8 */,   {kDLBfloat, 32, 1},
          {kDLUInt, 1, 1},
      };
      for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        EXPECT_REJECT(make_producer(versioned, data, kDLCPU, bad[i], 2, s2, NULL, 0), DLB_E_DTYPE);
    }
    /* NULL data with elements */
    EXPECT_REJECT(make_producer(versioned, NULL, kDLCPU, DT_I32, 2, s2, NULL, 0),
                  DLB_E_DLPACK_INVALID);
    EXPECT_REJECT(make_producer(versioned, NULL, kDLCPU, DT_I32, 0, NULL, NULL, 0),
                  DLB_E_DLPACK_INVALID);
    /* strides whose byte range overflows int64 */
    {
      const int64_t sh[] = {3};
      const int64_t st1[] = {INT64_MAX};
      const int64_t st2[] = {INT64_C(1) << 61}; /* reach 2^62 elements: 2^64 bytes */
      const int64_t st3[] = {INT64_MIN};
      const int64_t sh2[] = {2, 2};
      const int64_t st4[] = {INT64_C(1) << 62, INT64_C(1) << 62}; /* sum overflows */
      EXPECT_REJECT(make_producer(versioned, data, kDLCPU, DT_I32, 1, sh, st1, 0),
                    DLB_E_DLPACK_INVALID);
      EXPECT_REJECT(make_producer(versioned, data, kDLCPU, DT_I32, 1, sh, st2, 0),
                    DLB_E_DLPACK_INVALID);
      EXPECT_REJECT(make_producer(versioned, data, kDLCPU, DT_I32, 1, sh, st3, 0),
                    DLB_E_DLPACK_INVALID);
      EXPECT_REJECT(make_producer(versioned, data, kDLCPU, DT_I32, 2, sh2, st4, 0),
                    DLB_E_DLPACK_INVALID);
    }
    /* ranges that would wrap the address space (data is never read: these
     * pointers are not mapped) */
    {
      const int64_t sh[] = {4};
      const int64_t back[] = {-1};
      const int64_t fwd[] = {1};
      EXPECT_REJECT(make_producer(versioned, (void *)(uintptr_t)8, kDLCPU, DT_I32, 1, sh, back, 0),
                    DLB_E_DLPACK_INVALID);
      EXPECT_REJECT(make_producer(versioned, (void *)(uintptr_t)8, kDLCPU, dt(kDLFloat, 64, 1), 1,
                                  sh, back, 0),
                    DLB_E_DLPACK_INVALID);
      EXPECT_REJECT(
          make_producer(versioned, (void *)(UINTPTR_MAX - 8), kDLCPU, DT_I32, 1, sh, fwd, 0),
          DLB_E_DLPACK_INVALID);
      EXPECT_REJECT(
          make_producer(versioned, (void *)(UINTPTR_MAX - 3), kDLCPU, DT_I32, 0, NULL, NULL, 0),
          DLB_E_DLPACK_INVALID);
      EXPECT_REJECT(
          make_producer(versioned, (void *)(UINTPTR_MAX - 100), kDLCPU, DT_I32, 1, sh, fwd, 200),
          DLB_E_DLPACK_INVALID);
    }
    /* huge byte_offset */
    {
      const int64_t sh[] = {2};
      EXPECT_REJECT(make_producer(versioned, data, kDLCPU, DT_I32, 1, sh, NULL, UINT64_MAX),
                    DLB_E_DLPACK_INVALID);
      EXPECT_REJECT(
          make_producer(versioned, data, kDLCPU, DT_I32, 1, sh, NULL, (uint64_t)INT64_MAX + 1),
          DLB_E_DLPACK_INVALID);
      EXPECT_REJECT(
          make_producer(versioned, data, kDLCPU, DT_I32, 1, sh, NULL, (uint64_t)INT64_MAX - 2),
          DLB_E_DLPACK_INVALID);
      EXPECT_REJECT(make_producer(versioned, data, kDLCPU, DT_I32, 0, NULL, NULL, UINT64_MAX - 3),
                    DLB_E_DLPACK_INVALID);
    }
    /* devices */
    {
      static const int32_t gpu[] = {kDLCUDA, kDLROCM};
      static const int32_t other[] = {kDLOpenCL, kDLVulkan,  kDLMetal, kDLVPI, kDLExtDev, kDLOneAPI,
                                      kDLWebGPU, kDLHexagon, kDLMAIA,  kDLTrn, 0,         999};
      for (size_t i = 0; i < sizeof gpu / sizeof gpu[0]; i++)
        EXPECT_REJECT(make_producer(versioned, data, gpu[i], DT_I32, 2, s2, NULL, 0),
                      DLB_E_DEVICE_UNAVAILABLE);
      for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
        EXPECT_REJECT(make_producer(versioned, data, other[i], DT_I32, 2, s2, NULL, 0),
                      DLB_E_DEVICE_UNAVAILABLE); /* no backend of that type adopts it */
    }
    /* A failure with no deleter at all is tolerated. */
    {
      producer *p = make_producer(versioned, data, kDLCPU, DT_I32, -1, NULL, NULL, 0);
      dlb_array a;
      if (versioned) p->t.v.deleter = NULL;
      else p->t.l.deleter = NULL;
      CHECK_EQ_INT(dlb_dlpack_import(pex(p), cpu, NULL, &a, &err), DLB_E_DLPACK_INVALID);
      CHECK(a.buffer == NULL);
    }
  }
  /* Sub-byte padding is not a layout dlbridge reads. */
  {
    producer *p = make_producer(1, data, kDLCPU, dt(kDLUInt, 8, 1), 2, s2, NULL, 0);
    p->t.v.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
    EXPECT_REJECT(p, DLB_E_DTYPE);
    p = make_producer(1, data, kDLCPU, dt(kDLBool, 1, 1), 2, s2, NULL, 0);
    p->t.v.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED | DLPACK_FLAG_BITMASK_READ_ONLY;
    EXPECT_REJECT(p, DLB_E_DTYPE);
  }
  CHECK_EQ_INT(atomic_load(&ctx_mismatch), 0);
}

static void test_import_geometry(void) {
  int32_t data[24];
  for (int k = 0; k < 24; k++) data[k] = k;
  for (int versioned = 0; versioned <= 1; versioned++) {
    /* NULL strides: compact row-major (cupy #2095, NumPy < 2.4). */
    {
      const int64_t sh[] = {2, 3, 4};
      producer *p = make_producer(versioned, data, kDLCPU, DT_I32, 3, sh, NULL, 0);
      dlb_array a;
      if (IMPORT_OK(p, &a)) {
        int64_t idx[3] = {1, 2, 3};
        CHECK_EQ_INT(a.ndim, 3);
        CHECK_EQ_INT(a.numel, 24);
        CHECK_EQ_INT(a.strides[0], 12);
        CHECK_EQ_INT(a.strides[1], 4);
        CHECK_EQ_INT(a.strides[2], 1);
        CHECK_EQ_INT(a.dtype, DLB_INT32);
        CHECK_EQ_INT(a.readonly, 0);
        CHECK(a.buffer->backend == cpu);
        CHECK(dlb_array_host_data(&a) == (char *)data); /* zero copy */
        CHECK_EQ_INT(get_i(&a, idx), 23);
        idx[0] = 0;
        idx[1] = 1;
        idx[2] = 2;
        CHECK_EQ_INT(get_i(&a, idx), 6);
        CHECK_EQ_INT(dlb_array_check_bounds(&a, &err), DLB_OK);
        /* a second holder keeps the producer's memory: the deleter waits */
        {
          dlb_array b = view_of(&a);
          int before = atomic_load(&deleted);
          dlb_array_release(&a);
          CHECK_EQ_INT(atomic_load(&deleted), before);
          CHECK_EQ_INT(get_i(&b, idx), 6);
          RELEASE_IMPORTED(&b);
        }
      }
    }
    /* byte_offset honoured (pytorch #168177): element 0 is data[5]. */
    {
      const int64_t sh[] = {2, 2};
      producer *p =
          make_producer(versioned, data, kDLCPU, DT_I32, 2, sh, NULL, 5 * sizeof(int32_t));
      dlb_array a;
      if (IMPORT_OK(p, &a)) {
        int64_t idx[2] = {0, 0};
        CHECK_EQ_INT(get_i(&a, idx), 5);
        idx[0] = 1;
        idx[1] = 1;
        CHECK_EQ_INT(get_i(&a, idx), 8);
        CHECK(dlb_array_host_data(&a) == (char *)(data + 5));
        RELEASE_IMPORTED(&a);
      }
    }
    /* byte_offset and negative strides together: data at the array start,
     * element 0 at its end, reversed views. */
    {
      const int64_t sh[] = {3, 2};
      const int64_t st[] = {-4, -1};
      producer *p = make_producer(versioned, data, kDLCPU, DT_I32, 2, sh, st, 11 * sizeof(int32_t));
      dlb_array a;
      if (IMPORT_OK(p, &a)) {
        int64_t want[3][2] = {{11, 10}, {7, 6}, {3, 2}};
        for (int i = 0; i < 3; i++)
          for (int j = 0; j < 2; j++) {
            int64_t idx[2] = {i, j};
            CHECK_EQ_INT(get_i(&a, idx), want[i][j]);
          }
        CHECK_EQ_INT(a.strides[0], -4);
        CHECK_EQ_INT(a.strides[1], -1);
        CHECK_EQ_INT(dlb_array_check_bounds(&a, &err), DLB_OK);
        /* A copy reads the same values (the copy kernels honour it too). */
        {
          int32_t out[6];
          CHECK_EQ_INT(dlb_array_read_into(&a, out, DLB_INT32, &err), DLB_OK);
          CHECK_EQ_INT(out[0], 11);
          CHECK_EQ_INT(out[5], 2);
        }
        RELEASE_IMPORTED(&a);
      }
    }
    /* Negative strides with data at element 0 (byte_offset 0). */
    {
      const int64_t sh[] = {5};
      const int64_t st[] = {-3};
      producer *p = make_producer(versioned, data + 20, kDLCPU, DT_I32, 1, sh, st, 0);
      dlb_array a;
      if (IMPORT_OK(p, &a)) {
        for (int64_t i = 0; i < 5; i++) CHECK_EQ_INT(get_i(&a, &i), 20 - 3 * i);
        RELEASE_IMPORTED(&a);
      }
    }
    /* Stride 0 (a broadcast producer): kept, and read-only (one element
     * stands for four); the extent-1 dim's odd stride becomes compact. */
    {
      const int64_t sh[] = {4, 1, 3};
      const int64_t st[] = {0, 99999, 2};
      producer *p = make_producer(versioned, data, kDLCPU, DT_I32, 3, sh, st, 0);
      dlb_array a;
      if (IMPORT_OK(p, &a)) {
        int64_t idx[3] = {3, 0, 2};
        CHECK_EQ_INT(a.strides[0], 0);
        CHECK_EQ_INT(a.strides[1], 3);
        CHECK_EQ_INT(a.strides[2], 2);
        CHECK_EQ_INT(a.readonly, 1);
        CHECK_EQ_INT(get_i(&a, idx), 4);
        CHECK(a.buffer->nbytes <= sizeof data);
        RELEASE_IMPORTED(&a);
      }
    }
    /* Size 0: NULL data is fine, strides of any kind, counts as contiguous
     * (onnxruntime #27450). */
    {
      const int64_t sh[] = {3, 0};
      const int64_t st[] = {7, -5};
      producer *p = make_producer(versioned, NULL, kDLCPU, DT_F64, 2, sh, st, 0);
      dlb_array a;
      if (IMPORT_OK(p, &a)) {
        CHECK_EQ_INT(a.numel, 0);
        CHECK_EQ_INT(a.shape[0], 3);
        CHECK_EQ_INT(a.shape[1], 0);
        CHECK_EQ_INT(a.strides[0], 1); /* compact row-major: no stride reaches anything */
        CHECK_EQ_INT(a.strides[1], 1);
        CHECK(dlb_array_is_contiguous(&a));
        RELEASE_IMPORTED(&a);
      }
      p = make_producer(versioned, NULL, kDLCPU, DT_F64, 2, sh, NULL, 0);
      if (IMPORT_OK(p, &a)) RELEASE_IMPORTED(&a);
      /* size 0 with a garbage pointer: nothing is ever read from it */
      p = make_producer(versioned, (void *)(UINTPTR_MAX - 1), kDLCPU, DT_F64, 2, sh, st, 12345);
      if (IMPORT_OK(p, &a)) RELEASE_IMPORTED(&a);
    }
    /* 0-d with NULL shape and strides. */
    {
      producer *p = make_producer(versioned, data + 7, kDLCPU, DT_I32, 0, NULL, NULL, 0);
      dlb_array a;
      if (IMPORT_OK(p, &a)) {
        CHECK_EQ_INT(a.ndim, 0);
        CHECK_EQ_INT(a.numel, 1);
        CHECK_EQ_INT(get_i(&a, no_dims), 7);
        RELEASE_IMPORTED(&a);
      }
    }
    /* bool {6, 8, 1} (jax #4719). */
    {
      static uint8_t flags[3] = {1, 0, 1};
      const int64_t sh[] = {3};
      producer *p = make_producer(versioned, flags, kDLCPU, dt(kDLBool, 8, 1), 1, sh, NULL, 0);
      dlb_array a;
      if (IMPORT_OK(p, &a)) {
        dlb_scalar s;
        int64_t i = 1;
        CHECK_EQ_INT(a.dtype, DLB_BOOL);
        CHECK_EQ_INT(dlb_array_get(&a, &i, &s, &err), DLB_OK);
        CHECK_EQ_INT(s.kind, DLB_SCALAR_BOOL);
        CHECK_EQ_INT(s.v.b, 0);
        i = 2;
        CHECK_EQ_INT(get_i(&a, &i), 1);
        RELEASE_IMPORTED(&a);
      }
    }
    /* Host-reachable device memory is imported zero copy. */
    {
      static const int32_t host_like[] = {kDLCPU, kDLCUDAHost, kDLCUDAManaged, kDLROCMHost};
      const int64_t sh[] = {4};
      for (size_t i = 0; i < sizeof host_like / sizeof host_like[0]; i++) {
        producer *p = make_producer(versioned, data, host_like[i], DT_I32, 1, sh, NULL, 0);
        dlb_array a;
        CHECK(dlb_dlpack_host_reachable(host_like[i]));
        if (IMPORT_OK(p, &a)) {
          int64_t k = 3;
          CHECK(dlb_array_host_data(&a) == (char *)data);
          CHECK(a.buffer->backend == cpu);
          CHECK_EQ_INT(get_i(&a, &k), 3);
          RELEASE_IMPORTED(&a);
        }
      }
      CHECK(!dlb_dlpack_host_reachable(kDLCUDA));
      CHECK(!dlb_dlpack_host_reachable(kDLROCM));
      CHECK(!dlb_dlpack_host_reachable(kDLOpenCL));
    }
    /* deleter == NULL and manager_ctx == NULL are tolerated. */
    {
      const int64_t sh[] = {2};
      producer *p = make_producer(versioned, data, kDLCPU, DT_I32, 1, sh, NULL, 0);
      dlb_array a;
      if (versioned) p->t.v.deleter = NULL;
      else p->t.l.deleter = NULL;
      CHECK_EQ_INT(dlb_dlpack_import(pex(p), cpu, NULL, &a, &err), DLB_OK);
      if (a.buffer) {
        int64_t k = 1;
        CHECK_EQ_INT(get_i(&a, &k), 1);
        dlb_array_release(&a);
      }
      p = make_producer(versioned, data, kDLCPU, DT_I32, 1, sh, NULL, 0);
      if (versioned) p->t.v.manager_ctx = NULL;
      else p->t.l.manager_ctx = NULL;
      if (IMPORT_OK(p, &a)) RELEASE_IMPORTED(&a);
    }
    /* Writes through the array land in the producer's memory. */
    {
      const int64_t sh[] = {2};
      producer *p = make_producer(versioned, data, kDLCPU, DT_I32, 1, sh, NULL, 0);
      dlb_array a;
      if (IMPORT_OK(p, &a)) {
        dlb_scalar v = {.kind = DLB_SCALAR_INT, .v.i = 1000};
        int64_t k = 1;
        CHECK_EQ_INT(dlb_array_set(&a, &k, &v, &err), DLB_OK);
        CHECK_EQ_INT(data[1], 1000);
        data[1] = 1;
        RELEASE_IMPORTED(&a);
      }
    }
  }
  /* READ_ONLY: a read-only array. */
  {
    const int64_t sh[] = {2};
    producer *p = make_producer(1, data, kDLCPU, DT_I32, 1, sh, NULL, 0);
    dlb_array a;
    p->t.v.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    if (IMPORT_OK(p, &a)) {
      CHECK_EQ_INT(a.readonly, 1);
      /* and it stays read-only when exported again */
      {
        dlb_exported e = EXPORT_OK(&a, 1, DLB_COPY_IF_NEEDED);
        dlb_export_request r = request(0, DLB_COPY_NEVER);
        dlb_exported l;
        CHECK_EQ_INT(eflags(e), DLPACK_FLAG_BITMASK_READ_ONLY);
        dlb_dlpack_delete(e);
        CHECK_EQ_INT(dlb_dlpack_export(&a, &r, &l, &err), DLB_E_COPY_REQUIRED);
      }
      RELEASE_IMPORTED(&a);
    }
    /* IS_COPIED alone changes nothing for the consumer. */
    p = make_producer(1, data, kDLCPU, DT_I32, 1, sh, NULL, 0);
    p->t.v.flags = DLPACK_FLAG_BITMASK_IS_COPIED;
    if (IMPORT_OK(p, &a)) {
      CHECK_EQ_INT(a.readonly, 0);
      RELEASE_IMPORTED(&a);
    }
  }
  CHECK_EQ_INT(atomic_load(&ctx_mismatch), 0);
}

/* Round trips: our own export comes back sharing the buffer; a producer's
 * tensor goes out again with its strides untouched. */
static void test_roundtrip(void) {
  const int64_t shape[] = {3, 4};
  dlb_array a = iota(2, shape);
  for (int versioned = 0; versioned <= 1; versioned++) {
    dlb_array v = view_of(&a), back;
    dlb_exported e;
    CHECK_EQ_INT(dlb_view_slice(&v, 1, 3, 2, -2, &err), DLB_OK); /* columns 3, 1 */
    CHECK_EQ_INT(dlb_view_select(&v, 0, 1, &err), DLB_OK);       /* row 1: {7, 5} */
    e = EXPORT_OK(&v, versioned, DLB_COPY_NEVER);
    CHECK_EQ_INT(atomic_load(&a.buffer->refs), 3);
    CHECK_EQ_INT(dlb_dlpack_import(e, cpu, NULL, &back, &err), DLB_OK);
    CHECK(back.buffer == a.buffer);                /* shares the buffer: no wrapper of a wrapper */
    CHECK_EQ_INT(atomic_load(&a.buffer->refs), 3); /* the tensor's reference became back's */
    CHECK_EQ_INT(back.offset, v.offset);
    CHECK_EQ_INT(back.strides[0], -2);
    {
      int64_t k = 0;
      CHECK_EQ_INT(get_i(&back, &k), 7);
      k = 1;
      CHECK_EQ_INT(get_i(&back, &k), 5);
    }
    dlb_array_release(&back);
    dlb_array_release(&v);
    CHECK_EQ_INT(atomic_load(&a.buffer->refs), 1);
  }
  /* Copied export coming back: shares the copy's buffer, which the import
   * then owns alone. */
  {
    size_t refs = atomic_load(&cpu->refs);
    dlb_exported e = EXPORT_OK(&a, 1, DLB_COPY_ALWAYS);
    dlb_array back;
    CHECK_EQ_INT(dlb_dlpack_import(e, cpu, NULL, &back, &err), DLB_OK);
    CHECK(back.buffer != a.buffer);
    CHECK_EQ_INT(atomic_load(&back.buffer->refs), 1);
    {
      int64_t idx[2] = {2, 3};
      CHECK_EQ_INT(get_i(&back, idx), 11);
    }
    dlb_array_release(&back);
    CHECK_EQ_INT(atomic_load(&cpu->refs), refs);
  }
  /* Size 0 of our own. */
  {
    const int64_t z[] = {0, 2};
    dlb_array zero = alloc(DLB_INT32, 2, z), back;
    dlb_exported e = EXPORT_OK(&zero, 1, DLB_COPY_IF_NEEDED);
    CHECK_EQ_INT(dlb_dlpack_import(e, cpu, NULL, &back, &err), DLB_OK);
    CHECK_EQ_INT(back.numel, 0);
    dlb_array_release(&back);
    CHECK_EQ_INT(atomic_load(&zero.buffer->refs), 1);
    dlb_array_release(&zero);
  }
  /* A producer's strides on extent-1 dims become compact at import; from
   * then on import + export keep the array's strides unchanged (pytorch
   * #83069), and the producer's deleter runs once at the end. */
  {
    int32_t data[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    const int64_t sh[] = {1, 4, 1};
    const int64_t st[] = {-31, 2, 1000};
    producer *p = make_producer(1, data, kDLCPU, DT_I32, 3, sh, st, 0);
    dlb_array imp;
    int before = atomic_load(&deleted);
    if (IMPORT_OK(p, &imp)) {
      CHECK_EQ_INT(imp.strides[0], 4);
      CHECK_EQ_INT(imp.strides[1], 2);
      CHECK_EQ_INT(imp.strides[2], 1);
      for (int versioned = 0; versioned <= 1; versioned++) {
        dlb_exported e = EXPORT_OK(&imp, versioned, DLB_COPY_NEVER);
        DLTensor *t = etensor(e);
        CHECK_EQ_INT(t->strides[0], 4);
        CHECK_EQ_INT(t->strides[1], 2);
        CHECK_EQ_INT(t->strides[2], 1);
        CHECK((char *)t->data + t->byte_offset == (char *)data);
        dlb_array_release(&imp);
        CHECK_EQ_INT(atomic_load(&deleted), before); /* the export holds it */
        /* re-import the export: then the producer's deleter runs with the last release */
        CHECK_EQ_INT(dlb_dlpack_import(e, cpu, NULL, &imp, &err), DLB_OK);
        CHECK_EQ_INT(atomic_load(&deleted), before);
      }
      RELEASE_IMPORTED(&imp);
    }
  }
  CHECK_EQ_INT(atomic_load(&a.buffer->refs), 1);
  dlb_array_release(&a);
}

/* Elements that overlap make the import read-only: a stride 0 on an
 * extent > 1, or strides that fail the sufficient no-overlap test (sorted
 * by |stride|, each exceeds the span of the smaller ones). */
static void test_import_overlap(void) {
  int32_t data[24];
  struct {
    int ndim;
    int64_t shape[3], strides[3];
    int readonly;
  } cases[] = {
      {2, {4, 3}, {0, 1}, 1}, /* broadcast rows (torch.expand) */
      {1, {4}, {0}, 1},
      {2, {2, 2}, {1, 1}, 1},       /* (0, 1) and (1, 0) meet */
      {2, {2, 2}, {1, -1}, 1},      /* the same, reversed */
      {2, {3, 2}, {2, 3}, 1},       /* no shared element, but the test fails: counts */
      {2, {2, 3}, {3, 1}, 0},       /* row-major */
      {2, {2, 3}, {1, 2}, 0},       /* column-major */
      {2, {2, 2}, {-2, 1}, 0},      /* rows reversed */
      {2, {2, 2}, {3, 2}, 0},       /* 3 > 2 * (2 - 1): just enough */
      {3, {3, 1, 2}, {2, 0, 1}, 0}, /* stride 0 on extent 1 reaches one element */
      {2, {1, 5}, {0, 1}, 0},
      {2, {0, 4}, {0, 0}, 0}, /* size 0: nothing to overlap */
      {1, {1}, {0}, 0},
  };
  for (int k = 0; k < 24; k++) data[k] = k;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int versioned = 0; versioned <= 1; versioned++) {
      int32_t *base = cases[i].strides[1] < 0 || cases[i].strides[0] < 0 ? data + 8 : data;
      producer *p = make_producer(versioned, base, kDLCPU, DT_I32, cases[i].ndim, cases[i].shape,
                                  cases[i].strides, 0);
      dlb_array a;
      if (!IMPORT_OK(p, &a)) continue;
      if (a.readonly != cases[i].readonly) fprintf(stderr, "overlap case %zu\n", i);
      CHECK_EQ_INT(a.readonly, cases[i].readonly);
      RELEASE_IMPORTED(&a);
    }
  /* READ_ONLY without overlap stays read-only. */
  {
    const int64_t sh[] = {3};
    producer *p = make_producer(1, data, kDLCPU, DT_I32, 1, sh, NULL, 0);
    dlb_array a;
    p->t.v.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    if (IMPORT_OK(p, &a)) {
      CHECK_EQ_INT(a.readonly, 1);
      RELEASE_IMPORTED(&a);
    }
  }
}

/* Strides that reach no element (extent 1; all of a size-0 tensor) become
 * the compact row-major ones, so nothing downstream computes with them. */
static void test_import_unaddressed_strides(void) {
  double data[6] = {1, 2, 3, 4, 5, 6};
  struct {
    int ndim;
    int64_t shape[3], strides[3], want[3];
  } cases[] = {
      {2, {1, 3}, {INT64_MAX / 2, 1}, {3, 1}}, /* the tensor */
      {2, {3, 1}, {1, INT64_MIN}, {1, 1}},
      {3, {2, 1, 3}, {1, INT64_MAX, 2}, {1, 3, 2}},
      {1, {1}, {-(INT64_C(1) << 62)}, {1}},
      {2, {0, 3}, {INT64_MAX, INT64_MIN}, {3, 1}}, /* size 0: every stride */
      {3, {4, 0, 2}, {-7, 5, INT64_MAX}, {2, 2, 1}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int versioned = 0; versioned <= 1; versioned++) {
      producer *p = make_producer(versioned, data, kDLCPU, DT_F64, cases[i].ndim, cases[i].shape,
                                  cases[i].strides, 0);
      dlb_array a;
      if (!IMPORT_OK(p, &a)) continue;
      for (int d = 0; d < cases[i].ndim; d++) CHECK_EQ_INT(a.strides[d], cases[i].want[d]);
      CHECK_EQ_INT(a.readonly, 0);
      if (a.numel > 0) {
        int64_t idx[3] = {0, 0, 0};
        idx[cases[i].ndim - 1] = cases[i].shape[cases[i].ndim - 1] - 1;
        CHECK_EQ_INT(get_i(&a, idx), (int64_t)data[(cases[i].shape[cases[i].ndim - 1] - 1) *
                                                   cases[i].strides[cases[i].ndim - 1]]);
      }
      RELEASE_IMPORTED(&a);
    }
}

/* Our own exports come back with exactly the strides they went out with,
 * even where a foreign tensor's would be rewritten; strides a consumer
 * changed in the tensor are treated as a foreign producer's. */
static void test_roundtrip_own_strides(void) {
  const int64_t shape[] = {3, 4}, zshape[] = {0, 2};
  const int perm[] = {1, 0};
  dlb_array a = iota(2, shape), z = alloc(DLB_INT32, 2, zshape);
  dlb_array v = view_of(&a), zt = view_of(&z);
  CHECK_EQ_INT(dlb_view_permute(&v, perm, &err), DLB_OK);     /* {4, 3}, strides {1, 4} */
  CHECK_EQ_INT(dlb_view_slice(&v, 0, 1, 1, 1, &err), DLB_OK); /* {1, 3}, strides {1, 4} */
  CHECK_EQ_INT(dlb_view_permute(&zt, perm, &err), DLB_OK);    /* {2, 0}, strides {1, 2} */
  CHECK_EQ_INT(v.strides[0], 1);
  for (int versioned = 0; versioned <= 1; versioned++) {
    dlb_array back;
    dlb_exported e = EXPORT_OK(&v, versioned, DLB_COPY_NEVER);
    if (OK(dlb_dlpack_import(e, cpu, NULL, &back, &err))) {
      CHECK_EQ_INT(back.strides[0], 1); /* kept: compact would be 3 */
      CHECK_EQ_INT(back.strides[1], 4);
      CHECK_EQ_INT(back.readonly, 0);
      dlb_array_release(&back);
    }
    e = EXPORT_OK(&zt, versioned, DLB_COPY_NEVER);
    if (OK(dlb_dlpack_import(e, cpu, NULL, &back, &err))) {
      CHECK_EQ_INT(back.strides[0], 1); /* kept: compact would be {1, 1} */
      CHECK_EQ_INT(back.strides[1], 2);
      dlb_array_release(&back);
    }
    /* A consumer changed the strides before handing the tensor back. */
    e = EXPORT_OK(&v, versioned, DLB_COPY_NEVER);
    etensor(e)->strides[0] = INT64_MAX / 2;
    if (OK(dlb_dlpack_import(e, cpu, NULL, &back, &err))) {
      CHECK_EQ_INT(back.strides[0], 3);
      CHECK_EQ_INT(back.strides[1], 4);
      dlb_array_release(&back);
    }
    e = EXPORT_OK(&v, versioned, DLB_COPY_NEVER);
    etensor(e)->strides[1] = 0; /* in bounds, but three indices on one element */
    if (OK(dlb_dlpack_import(e, cpu, NULL, &back, &err))) {
      CHECK_EQ_INT(back.readonly, 1);
      dlb_array_release(&back);
    }
    e = EXPORT_OK(&zt, versioned, DLB_COPY_NEVER);
    etensor(e)->strides[0] = INT64_MIN;
    etensor(e)->strides[1] = INT64_MAX;
    if (OK(dlb_dlpack_import(e, cpu, NULL, &back, &err))) {
      CHECK_EQ_INT(back.strides[0], 1);
      CHECK_EQ_INT(back.strides[1], 1);
      dlb_array_release(&back);
    }
  }
  dlb_array_release(&zt);
  dlb_array_release(&v);
  CHECK_EQ_INT(atomic_load(&a.buffer->refs), 1);
  CHECK_EQ_INT(atomic_load(&z.buffer->refs), 1);
  dlb_array_release(&z);
  dlb_array_release(&a);
}

/* Imported memory released on another thread: the producer's deleter runs
 * there, exactly once per tensor. */
#define NIMPORT 64
static dlb_array imported[NIMPORT];

static void *release_imports(void *arg) {
  (void)arg;
  for (int i = 0; i < NIMPORT; i++) dlb_array_release(&imported[i]);
  return NULL;
}

static void test_import_release_thread(void) {
  static int32_t data[NIMPORT][4];
  const int64_t sh[] = {4};
  pthread_t th;
  int before = atomic_load(&deleted);
  for (int i = 0; i < NIMPORT; i++) {
    producer *p = make_producer(i % 2, data[i], kDLCPU, DT_I32, 1, sh, NULL, 0);
    IMPORT_OK(p, &imported[i]);
  }
  CHECK_EQ_INT(pthread_create(&th, NULL, release_imports, NULL), 0);
  for (int k = 0; k < 100; k++) {
    dlb_array t = iota(1, sh);
    dlb_array_release(&t);
  }
  CHECK_EQ_INT(pthread_join(th, NULL), 0);
  CHECK_EQ_INT(atomic_load(&deleted) - before, NIMPORT);
}

int main(void) {
  if (!cpu_open()) return 1;
  test_layout();
  test_export_contiguous();
  test_export_dtypes();
  test_export_views();
  test_export_size0_and_0d();
  test_export_copy_rules();
  test_export_opaque_backend();
  test_export_deleter_thread();
  test_import_version();
  test_import_malformed();
  test_import_geometry();
  test_import_overlap();
  test_import_unaddressed_strides();
  test_roundtrip();
  test_roundtrip_own_strides();
  test_import_release_thread();
  CHECK_EQ_INT(atomic_load(&ctx_mismatch), 0);
  cpu_close(); /* every buffer was freed */
  for (int i = 0; i < npages; i++) munmap(pages[i], PAGE);
  return check_done("test_dlpack");
}
