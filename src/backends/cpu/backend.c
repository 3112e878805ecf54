/* backend.c -- the cpu backend: host memory, 64-byte aligned, behind the same vtable as
 * every other backend.
 *
 * Memory comes from the C library's malloc/calloc, over-allocated by one
 * alignment unit. The handle is the aligned address with its distance from
 * what malloc returned (0..63) in its low six bits, so nothing is written
 * into the block. That keeps what glibc does well: a large
 * block is a fresh mapping whose zero pages calloc does not touch (so
 * dl.zeros of a large array costs no page until it is used), and blocks
 * freed by a loop are reused without new page faults (glibc raises its
 * mmap threshold after such frees). Blocks of DLB_HUGEPAGE_BYTES or more
 * are advised as transparent huge pages (Linux), as NumPy does: a 256 MiB
 * array then faults in 128 times, not 65,536.
 *
 * Lua frees an array when the collector gets to it, not when its last
 * reference goes (NumPy's case), so the temporaries of an expression are
 * freed in bursts, and glibc trims its heap between them and page-faults the
 * memory back in at the next allocation (the temporaries of a 640x480 image
 * pipeline cost 11 ms of faults against 0.5 ms of work; mapped blocks are
 * unmapped and faulted in again). So blocks of CACHE_MIN_BYTES to
 * CACHE_LARGEST_BYTES are kept on release, up to CACHE_MAX_BYTES in all,
 * and reused by the next allocation of about their size that need not be
 * zeroed (calloc's lazy zero pages stay for zeroed ones). Larger blocks are
 * freed at once, so deleting a large array still returns its memory.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#define CPU_BLOCK_CACHE 1 /* needs malloc_usable_size */
#endif
#include "../../core/buffer.h"
#include "../../core/pages.h"
#include "cpu.h"

#define CPU_ALIGNMENT 64

static int cpu_device_count(void *ctx) { return 1; }

/* The aligned block a handle stands for. */
static char *block_of(const void *handle) {
  return (char *)((uintptr_t)handle & ~(uintptr_t)(CPU_ALIGNMENT - 1));
}

#ifdef CPU_BLOCK_CACHE
#define CACHE_MIN_BYTES ((size_t)128 << 10) /* glibc's first mmap threshold */
#define CACHE_LARGEST_BYTES ((size_t)48 << 20)
#define CACHE_MAX_BYTES ((size_t)96 << 20)
#define CACHE_SLOTS 16

/* Released blocks kept for reuse, process-wide (like malloc itself); any
 * thread may release. */
static struct {
  pthread_mutex_t lock;
  size_t count, bytes;
  struct {
    char *raw;
    size_t size; /* malloc_usable_size */
  } slot[CACHE_SLOTS];
} block_cache = {PTHREAD_MUTEX_INITIALIZER, 0, 0, {{NULL, 0}}};

/* Removes slot k, keeping the others in the order they were released (locked). */
static void cache_remove(size_t k) {
  block_cache.bytes -= block_cache.slot[k].size;
  block_cache.count--;
  memmove(&block_cache.slot[k], &block_cache.slot[k + 1],
          (block_cache.count - k) * sizeof block_cache.slot[0]);
}

/* A cached block of at least need bytes and not much more, or NULL. */
static char *cache_take(size_t need) {
  char *raw = NULL;
  if (need < CACHE_MIN_BYTES || need > CACHE_LARGEST_BYTES) return NULL;
  pthread_mutex_lock(&block_cache.lock);
  for (size_t k = block_cache.count; k-- > 0;) { /* the most recently released first */
    size_t size = block_cache.slot[k].size;
    if (size >= need && size - need <= need / 4) {
      raw = block_cache.slot[k].raw;
      cache_remove(k);
      break;
    }
  }
  pthread_mutex_unlock(&block_cache.lock);
  return raw;
}

/* Keeps raw for reuse when it fits the cache, making room by freeing the
 * blocks released longest ago: the blocks a loop releases now are the ones
 * it allocates next (a sort's scratch after a gather's outputs filled the
 * cache was freed and faulted in again every call); 0 when the caller must
 * free raw. */
static int cache_put(char *raw) {
  size_t size = malloc_usable_size(raw), dropped = 0;
  char *drop[CACHE_SLOTS];
  if (size < CACHE_MIN_BYTES || size > CACHE_LARGEST_BYTES + CPU_ALIGNMENT) return 0;
  pthread_mutex_lock(&block_cache.lock);
  while (block_cache.count == CACHE_SLOTS || block_cache.bytes + size > CACHE_MAX_BYTES) {
    drop[dropped++] = block_cache.slot[0].raw;
    cache_remove(0);
  }
  block_cache.slot[block_cache.count].raw = raw;
  block_cache.slot[block_cache.count].size = size;
  block_cache.count++;
  block_cache.bytes += size;
  pthread_mutex_unlock(&block_cache.lock);
  while (dropped > 0) free(drop[--dropped]); /* (outside the lock) */
  return 1;
}
/* Frees the kept blocks when the library is unloaded (Lua dlcloses C
 * modules in lua_close; the blocks would be lost with the cache). */
__attribute__((destructor)) static void cache_flush(void) {
  pthread_mutex_lock(&block_cache.lock);
  while (block_cache.count > 0) free(block_cache.slot[--block_cache.count].raw);
  block_cache.bytes = 0;
  pthread_mutex_unlock(&block_cache.lock);
}
#else
static char *cache_take(size_t need) { return NULL; }
static int cache_put(char *raw) { return 0; }
#endif

static dlb_status cpu_allocate(void *ctx, int device_id, size_t nbytes, int zeroed, void **handle) {
  char *raw = NULL, *aligned;
  int reused;
  if (nbytes > SIZE_MAX - CPU_ALIGNMENT) return DLB_E_OUT_OF_MEMORY;
  if (!zeroed) raw = cache_take(nbytes + CPU_ALIGNMENT - 1);
  reused = raw != NULL;
  if (!raw)
    raw = zeroed ? calloc(1, nbytes + CPU_ALIGNMENT - 1) : malloc(nbytes + CPU_ALIGNMENT - 1);
  if (!raw) return DLB_E_OUT_OF_MEMORY;
  aligned = (char *)(((uintptr_t)raw + CPU_ALIGNMENT - 1) & ~(uintptr_t)(CPU_ALIGNMENT - 1));
  /* A kept block was advised when it was first allocated at its size. */
  if (nbytes >= DLB_HUGEPAGE_BYTES && !reused) dlb_advise_huge_pages(aligned, nbytes);
  *handle = aligned + (aligned - raw); /* the distance, 0..63, in the low bits */
  return DLB_OK;
}

static void cpu_deallocate(void *ctx, int device_id, void *handle) {
  char *raw = block_of(handle) - ((uintptr_t)handle & (CPU_ALIGNMENT - 1));
  if (!cache_put(raw)) free(raw);
}

static dlb_status cpu_copy_to_host(void *ctx, int device_id, const void *handle, size_t offset,
                                   void *dst, size_t nbytes) {
  memcpy(dst, block_of(handle) + offset, nbytes);
  return DLB_OK;
}

static dlb_status cpu_copy_from_host(void *ctx, int device_id, void *handle, size_t offset,
                                     const void *src, size_t nbytes) {
  memcpy(block_of(handle) + offset, src, nbytes);
  return DLB_OK;
}

static dlb_status cpu_copy_within(void *ctx, int dst_device_id, void *dst_handle, size_t dst_offset,
                                  int src_device_id, const void *src_handle, size_t src_offset,
                                  size_t nbytes) {
  memmove(block_of(dst_handle) + dst_offset, block_of(src_handle) + src_offset, nbytes);
  return DLB_OK;
}

static void *cpu_host_pointer(void *ctx, int device_id, void *handle) { return block_of(handle); }

static dlb_status cpu_export_pointer(void *ctx, int device_id, void *handle, void **data) {
  *data = block_of(handle);
  return DLB_OK;
}

static const dlb_backend_ops cpu_ops = {
    .version = DLB_BACKEND_OPS_VERSION_2,
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
    .kernels = &dlb_cpu_kernels,
};

const dlb_backend_ops *dlb_cpu_backend_ops(void) { return &cpu_ops; }

dlb_status dlb_cpu_backend_create(dlb_backend **out, dlb_error *err) {
  dlb_status st = dlb_backend_create(&cpu_ops, NULL, out, err);
  if (st == DLB_OK) {
    (*out)->inline_bytes = DLB_INLINE_BUFFER_BYTES;
    (*out)->ctx = *out; /* the kernels allocate their temporaries here (the state's budget) */
  }
  return st;
}

/* Made once (the first host kernel that needs a temporary elsewhere); lives
 * until the library is unloaded (its temporaries live within one call). */
static dlb_backend *scratch;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void make_scratch(void) {
  dlb_error err;
  if (dlb_cpu_backend_create(&scratch, &err) != DLB_OK) scratch = NULL;
}

dlb_backend *dlb_cpu_scratch_backend(void) {
  pthread_once(&scratch_once, make_scratch);
  return scratch;
}

/* At unload (lua_close of the module, or exit): LeakSanitizer would
 * otherwise find the backend behind a pointer of unmapped code. */
__attribute__((destructor)) static void release_scratch(void) {
  if (scratch) dlb_backend_release(scratch);
  scratch = NULL;
}
