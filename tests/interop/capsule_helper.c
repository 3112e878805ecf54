/*
 * capsule_helper.c -- the native half of the NumPy interop tests (loaded by
 * test_numpy.py with ctypes into /usr/bin/python3).
 *
 * Built without <Python.h> (python3-dev is no dependency): the few CPython
 * functions used are declared here and resolve from the running python3.
 *
 * - dlb_interop_capsule_destructor: the PyCapsule destructor of legacy
 *   "dltensor" capsules made in Python with PyCapsule_New. It calls the
 *   tensor's deleter only while the capsule is unconsumed (a consumer renames
 *   it "used_dltensor"), so it never runs Python code and never double-frees.
 * - A counting producer: float64 tensors in malloc'ed memory whose deleter
 *   counts its calls (dlb_interop_producer_deletes).
 * - A counting wrapper around any legacy tensor (e.g. one dlbridge exported):
 *   same DLTensor, a deleter that counts and then calls the inner deleter.
 *
 * Deleters may run on any thread: the counters are atomic.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "dlpack_compat.h"

#define INTEROP_API __attribute__((visibility("default")))

/* CPython (stable ABI), resolved from the python3 executable at load time. */
typedef struct _object PyObject;
int PyCapsule_IsValid(PyObject *capsule, const char *name);
void *PyCapsule_GetPointer(PyObject *capsule, const char *name);

/* What this library exports (the prototypes -Wmissing-prototypes asks for). */
INTEROP_API void dlb_interop_capsule_destructor(PyObject *capsule);
INTEROP_API DLManagedTensor *dlb_interop_make_f64(int64_t n);
INTEROP_API DLManagedTensor *dlb_interop_wrap(DLManagedTensor *inner);
INTEROP_API int dlb_interop_producer_deletes(void);
INTEROP_API int dlb_interop_wrapped_deletes(void);
INTEROP_API int dlb_interop_capsule_deletes(void);
INTEROP_API void dlb_interop_reset(void);
INTEROP_API void dlb_interop_call_deleter(DLManagedTensor *tensor);

static atomic_int producer_deletes;
static atomic_int wrapped_deletes;
static atomic_int capsule_deletes;

void dlb_interop_capsule_destructor(PyObject *capsule) {
  DLManagedTensor *t;
  /* IsValid never sets a Python error; a used capsule is the consumer's now. */
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;
  t = PyCapsule_GetPointer(capsule, "dltensor");
  atomic_fetch_add(&capsule_deletes, 1);
  if (t && t->deleter) t->deleter(t);
}

/* ---- a counting producer ----------------------------------------------------- */

typedef struct producer {
  DLManagedTensor tensor;
  int64_t shape[1];
  int64_t strides[1];
  double *data;
} producer;

static void producer_delete(DLManagedTensor *self) {
  producer *p = self->manager_ctx;
  atomic_fetch_add(&producer_deletes, 1);
  free(p->data);
  free(p);
}

/* A 1-D float64 tensor of n elements 0, 1, ..., n - 1 (NULL when out of memory). */
DLManagedTensor *dlb_interop_make_f64(int64_t n) {
  producer *p = calloc(1, sizeof *p);
  if (!p || n < 0) {
    free(p);
    return NULL;
  }
  p->data = malloc(n > 0 ? (size_t)n * sizeof(double) : 1);
  if (!p->data) {
    free(p);
    return NULL;
  }
  for (int64_t i = 0; i < n; i++) p->data[i] = (double)i;
  p->shape[0] = n;
  p->strides[0] = 1;
  p->tensor.dl_tensor.data = p->data;
  p->tensor.dl_tensor.device.device_type = kDLCPU;
  p->tensor.dl_tensor.device.device_id = 0;
  p->tensor.dl_tensor.ndim = 1;
  p->tensor.dl_tensor.dtype.code = kDLFloat;
  p->tensor.dl_tensor.dtype.bits = 64;
  p->tensor.dl_tensor.dtype.lanes = 1;
  p->tensor.dl_tensor.shape = p->shape;
  p->tensor.dl_tensor.strides = p->strides;
  p->tensor.dl_tensor.byte_offset = 0;
  p->tensor.manager_ctx = p;
  p->tensor.deleter = producer_delete;
  return &p->tensor;
}

/* ---- a counting wrapper ------------------------------------------------------ */

typedef struct wrapper {
  DLManagedTensor outer;
  DLManagedTensor *inner;
} wrapper;

static void wrapper_delete(DLManagedTensor *self) {
  wrapper *w = self->manager_ctx;
  atomic_fetch_add(&wrapped_deletes, 1);
  if (w->inner->deleter) w->inner->deleter(w->inner);
  free(w);
}

/* The same tensor (shape and strides still point into inner) with a counting
 * deleter; inner's deleter runs when the wrapper's does. */
DLManagedTensor *dlb_interop_wrap(DLManagedTensor *inner) {
  wrapper *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->inner = inner;
  w->outer.dl_tensor = inner->dl_tensor;
  w->outer.manager_ctx = w;
  w->outer.deleter = wrapper_delete;
  return &w->outer;
}

/* For tests that own a tensor outright and give it back without a consumer. */
void dlb_interop_call_deleter(DLManagedTensor *tensor) {
  if (tensor && tensor->deleter) tensor->deleter(tensor);
}

int dlb_interop_producer_deletes(void) { return atomic_load(&producer_deletes); }
int dlb_interop_wrapped_deletes(void) { return atomic_load(&wrapped_deletes); }
int dlb_interop_capsule_deletes(void) { return atomic_load(&capsule_deletes); }

void dlb_interop_reset(void) {
  atomic_store(&producer_deletes, 0);
  atomic_store(&wrapped_deletes, 0);
  atomic_store(&capsule_deletes, 0);
}
