/* backend_cpu.c -- host memory, 64-byte aligned, behind the same vtable as
 * every other backend. */
#include <stdlib.h>
#include <string.h>
#include "backend.h"

#define CPU_ALIGNMENT 64

static int cpu_device_count(void *ctx) { return 1; }

static dlb_status cpu_allocate(void *ctx, int device_id, size_t nbytes, int zeroed, void **handle) {
  /* aligned_alloc wants a multiple of the alignment. */
  size_t rounded = (nbytes + CPU_ALIGNMENT - 1) & ~(size_t)(CPU_ALIGNMENT - 1);
  void *p;
  if (rounded < nbytes) return DLB_E_OUT_OF_MEMORY;
  if (zeroed && rounded >= 1 << 20) {
    /* Large zeroed blocks: calloc gets fresh zero pages from the kernel and
     * glibc's mmap threshold already gives page (>= 64 byte) alignment. */
    p = calloc(1, rounded);
    if (p && ((uintptr_t)p & (CPU_ALIGNMENT - 1))) {
      free(p);
      p = NULL;
    } else if (p) {
      *handle = p;
      return DLB_OK;
    }
  }
  p = aligned_alloc(CPU_ALIGNMENT, rounded);
  if (!p) return DLB_E_OUT_OF_MEMORY;
  if (zeroed) memset(p, 0, rounded);
  *handle = p;
  return DLB_OK;
}

static void cpu_deallocate(void *ctx, int device_id, void *handle) { free(handle); }

static dlb_status cpu_copy_to_host(void *ctx, int device_id, const void *handle, size_t offset,
                                   void *dst, size_t nbytes) {
  memcpy(dst, (const char *)handle + offset, nbytes);
  return DLB_OK;
}

static dlb_status cpu_copy_from_host(void *ctx, int device_id, void *handle, size_t offset,
                                     const void *src, size_t nbytes) {
  memcpy((char *)handle + offset, src, nbytes);
  return DLB_OK;
}

static dlb_status cpu_copy_within(void *ctx, int dst_device_id, void *dst_handle,
                                  size_t dst_offset, int src_device_id, const void *src_handle,
                                  size_t src_offset, size_t nbytes) {
  memmove((char *)dst_handle + dst_offset, (const char *)src_handle + src_offset, nbytes);
  return DLB_OK;
}

static void *cpu_host_pointer(void *ctx, int device_id, void *handle) { return handle; }

static dlb_status cpu_export_pointer(void *ctx, int device_id, void *handle, void **data) {
  *data = handle;
  return DLB_OK;
}

static const dlb_backend_ops cpu_ops = {
    .version = DLB_BACKEND_OPS_VERSION,
    .name = "cpu",
    .device_type = kDLCPU,
    .device_count = cpu_device_count,
    .allocate = cpu_allocate,
    .deallocate = cpu_deallocate,
    .copy_to_host = cpu_copy_to_host,
    .copy_from_host = cpu_copy_from_host,
    .copy_within = cpu_copy_within,
    .host_pointer = cpu_host_pointer,
    .export_pointer = cpu_export_pointer,
};

const dlb_backend_ops *dlb_cpu_backend_ops(void) { return &cpu_ops; }
