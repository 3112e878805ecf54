/* stand_in_driver.c -- a stand-in for the CUDA driver (libcuda), for tests
 * on machines without a GPU. Loaded through DLB_CUDA_DRIVER; never
 * installed as the system's libcuda.so.1 (ctest gpu.oneshot_relocated
 * copies it under that name into a scratch directory on LD_LIBRARY_PATH,
 * to run the hardware check's one-shot as a GPU machine would). It proves
 * the backend's protocol (push and pop, ordering, lifetimes) against a
 * model of the documented semantics, not anything about hardware.
 *
 * Model (stand_in_driver.h lists the controls):
 * - Two devices. "Device" memory is host memory carved from one mmap
 *   region, each allocation between PROT_NONE guard pages; freed memory
 *   becomes PROT_NONE (a late access faults). A pointer table answers
 *   cuPointerGetAttribute(s). Fresh allocations read 0xCD.
 * - Streams are FIFOs run by a worker thread each, after a random delay
 *   per operation. Events are (stream, sequence); cuStreamWaitEvent
 *   queues a wait for it. The legacy default stream (handle 0/1) waits
 *   for every blocking stream of its context and they for it;
 *   CU_STREAM_NON_BLOCKING streams are exempt; handle 2 is the calling
 *   thread's per-thread default stream (blocking).
 * - Poison: a copy's or memset's destination is filled with 0xCD when it
 *   is queued (when no queued operation still touches those bytes; else
 *   just before it runs), so a reader that skipped a wait sees 0xCD.
 * - Memory calls need a current context (cuCtxPushCurrent), and a created
 *   stream must belong to it: a missing push fails with INVALID_CONTEXT.
 * - One global lock guards everything; workers signal one condition.
 * - A forked child has no driver: every call returns NOT_INITIALIZED.
 * - The stream-ordered allocator: cuMemAllocAsync gives memory at once,
 *   cuMemFreeAsync queues the free (it runs in stream order; a free that
 *   runs while another stream's queued work touches the block counts as
 *   "early_frees"). cuMemFreeAsync refuses memory of cuMemAlloc.
 * - 2D/3D copies refuse pitches above the device's MAX_PITCH; in strict
 *   mode ("strict_2d") a copy within device memory also refuses pitches
 *   that are not multiples of 512 (what cuMemAllocPitch gives), as the
 *   reference says such copies may fail.
 * - Stream capture (cuStreamBeginCapture_v2 on a created stream): work
 *   queued on a capturing stream is recorded, never run. While a capture
 *   in GLOBAL mode is active (or one of this thread's in THREAD_LOCAL
 *   mode), allocations and frees from a thread whose mode is not RELAXED
 *   (cuThreadExchangeStreamCaptureMode) fail with
 *   STREAM_CAPTURE_UNSUPPORTED and invalidate it; cuStreamWaitEvent on a
 *   capturing stream for an event recorded outside the capture, without
 *   CU_EVENT_WAIT_EXTERNAL, fails with STREAM_CAPTURE_ISOLATION and
 *   invalidates it; so does cuStreamSynchronize of a capturing stream. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "../../src/backends/cuda/driver.h"
#include "stand_in_driver.h"

#define API __attribute__((visibility("default")))
#define DEVICES 2
#define REGION_BYTES ((size_t)8 << 30)
#define POISON 0xCD

/* The entry points this library exports (the backend's list, and more). */
#define PROTO_(field, base, symbol, args) API CUresult symbol args;
DLB_CU_FUNCTIONS(PROTO_)
DLB_CU_OPTIONAL_FUNCTIONS(PROTO_)
#undef PROTO_
API CUresult cuGetProcAddress_v2(const char *symbol, void **fn, int version, uint64_t flags,
                                 int *status);
API CUresult cuGetProcAddress(const char *symbol, void **fn, int version, uint64_t flags);
API CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned int flags);
API CUresult cuStreamBeginCapture_v2(CUstream h, int mode);
API CUresult cuStreamEndCapture(CUstream h, void **graph);
API int standin_control(const char *key, long long value);
API long long standin_query(const char *key);
API void *standin_alloc(int device, size_t nbytes, int kind);
API void standin_free(void *p);

/* --- state --------------------------------------------------------------------- */

typedef struct block {
  char *base;
  size_t size;
  int device, kind, live; /* kind: CU_MEMORYTYPE_DEVICE, _HOST (pinned) or _UNIFIED (managed) */
  int pooled;             /* from cuMemAllocAsync */
  struct block *next;
} block;

enum { OP_COPY, OP_SET, OP_WAIT, OP_MARK, OP_FREE };

struct CUstream_st;
typedef struct op {
  int kind;
  char *dst;
  const char *src;
  size_t width, height, depth, dpitch, dheight, spitch, sheight; /* OP_COPY (3D form) */
  unsigned value, unit;                                          /* OP_SET */
  size_t count;
  struct CUstream_st *on; /* OP_WAIT */
  struct block *block;    /* OP_FREE */
  uint64_t until;
  int poison_at_run;
  long long delay; /* microseconds before it runs, drawn when queued */
  uint64_t seq;
  struct op *next;
} op;

struct CUstream_st {
  int device;
  unsigned flags;
  int legacy, per_thread, live;
  pthread_t owner, worker;
  op *head, *tail;
  uint64_t enqueued, done;
  unsigned seed;
  int capture, capture_mode; /* CU_STREAM_CAPTURE_STATUS_*, _MODE_* */
  pthread_t capturer;
  struct CUstream_st *next;
};
typedef struct CUstream_st sstream;

struct CUevent_st {
  int device;
  sstream *s; /* NULL: never recorded */
  uint64_t seq;
  struct CUevent_st *next;
};
typedef struct CUevent_st sevent;

struct CUctx_st {
  int device;
  int refs;
  sstream *legacy;
};

static pthread_mutex_t g = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static struct CUctx_st ctxs[DEVICES] = {{0, 0, NULL}, {1, 0, NULL}};
static char *region, *region_next;
static block *blocks;
static sevent *events;
static _Atomic int initialized, deinit;  /* read by every entry point without g */
static _Atomic long long delay_us = 300; /* read by the workers */
static int poison = 1, getproc = 2;
static long long fail_alloc, fail_copy, fail_free, device_bytes = (long long)1 << 30;
static long long max_pitch = 2147483647, pools = 1, strict_2d;
static long long getproc_lookups, getproc_not_legacy, early_frees, captured_ops;
static size_t used[DEVICES];
static FILE *log_file;

static _Thread_local struct CUctx_st *ctx_stack[16];
static _Thread_local int ctx_depth;
static _Thread_local int capture_mode; /* this thread's: CU_STREAM_CAPTURE_MODE_GLOBAL (0) first */

/* --- the call log ----------------------------------------------------------------- */

#define MAX_NAMES 64
static struct {
  const char *name;
  long long calls;
} counts[MAX_NAMES];

static void count_call(const char *name) {
  pthread_mutex_lock(&g);
  for (int k = 0; k < MAX_NAMES; k++) {
    if (!counts[k].name) counts[k].name = name;
    if (strcmp(counts[k].name, name) == 0) {
      counts[k].calls++;
      break;
    }
  }
  if (log_file) fprintf(log_file, "%s\n", name);
  pthread_mutex_unlock(&g);
}

/* Every entry point starts here: counted, and refused once shut down. */
#define ENTER()                                                                                    \
  do {                                                                                             \
    count_call(__func__);                                                                          \
    if (deinit) return CUDA_ERROR_DEINITIALIZED;                                                   \
  } while (0)
#define NEED_INIT()                                                                                \
  do {                                                                                             \
    ENTER();                                                                                       \
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;                                           \
  } while (0)

static struct CUctx_st *current(void) { return ctx_depth > 0 ? ctx_stack[ctx_depth - 1] : NULL; }

static sstream *streams;

/* A potentially unsafe call (allocation, free) during stream capture (under
 * g): refused, and the captures it disturbs invalidated, when this thread's
 * mode prohibits it (the reference's rules for cuThreadExchangeStreamCaptureMode). */
static CUresult unsafe_call(void) {
  CUresult r = CUDA_SUCCESS;
  for (sstream *s = streams; s; s = s->next) {
    int own, prohibits;
    if (s->capture != CU_STREAM_CAPTURE_STATUS_ACTIVE) continue;
    own = pthread_equal(s->capturer, pthread_self()) &&
          s->capture_mode != CU_STREAM_CAPTURE_MODE_RELAXED;
    prohibits = capture_mode == CU_STREAM_CAPTURE_MODE_GLOBAL
                    ? own || s->capture_mode == CU_STREAM_CAPTURE_MODE_GLOBAL
                    : capture_mode == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL && own;
    if (prohibits) {
      s->capture = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
      r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
  }
  return r;
}

/* --- memory --------------------------------------------------------------------------- */

static size_t page(void) { return (size_t)sysconf(_SC_PAGESIZE); }

static size_t round_pages(size_t n) { return (n + page() - 1) / page() * page(); }

/* The live block holding [p, p + n), or NULL (under g). */
static block *find_block(const char *p, size_t n) {
  for (block *b = blocks; b; b = b->next)
    if (b->live && p >= b->base && p < b->base + b->size && n <= (size_t)(b->base + b->size - p))
      return b;
  return NULL;
}

static int in_region(const char *p) { return region && p >= region && p < region + REGION_BYTES; }

/* A new block (under g): 0xCD-filled, a guard page after it. */
static block *carve(int device, size_t n, int kind) {
  size_t bytes = round_pages(n ? n : 1);
  block *b;
  if (!region) {
    region =
        mmap(NULL, REGION_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED) return region = NULL, NULL;
    region_next = region + page(); /* a guard page first */
  }
  if ((size_t)(region + REGION_BYTES - region_next) < bytes + page() || !(b = calloc(1, sizeof *b)))
    return NULL;
  if (mprotect(region_next, bytes, PROT_READ | PROT_WRITE) != 0) {
    free(b);
    return NULL;
  }
  b->base = region_next;
  b->size = n;
  b->device = device;
  b->kind = kind;
  b->live = 1;
  memset(b->base, POISON, bytes);
  region_next += bytes + page();
  b->next = blocks;
  blocks = b;
  return b;
}

static void retire(block *b) {
  b->live = 0;
  if (b->kind != CU_MEMORYTYPE_HOST) used[b->device] -= b->size;
  mprotect(b->base, round_pages(b->size ? b->size : 1), PROT_NONE);
  madvise(b->base, round_pages(b->size ? b->size : 1), MADV_DONTNEED);
}

static CUresult allocate(int device, size_t n, int kind, int ordered, void **out) {
  block *b;
  CUresult r = CUDA_SUCCESS;
  pthread_mutex_lock(&g);
  if (!ordered && (r = unsafe_call()) != CUDA_SUCCESS) {
  } else if (fail_alloc > 0) {
    fail_alloc--;
    r = CUDA_ERROR_OUT_OF_MEMORY;
  } else if (kind != CU_MEMORYTYPE_HOST && used[device] + n > (size_t)device_bytes) {
    r = CUDA_ERROR_OUT_OF_MEMORY;
  } else if (!(b = carve(device, n, kind))) {
    r = CUDA_ERROR_OUT_OF_MEMORY;
  } else {
    if (kind != CU_MEMORYTYPE_HOST) used[device] += n;
    b->pooled = ordered;
    *out = b->base;
  }
  pthread_mutex_unlock(&g);
  return r;
}

static CUresult release_block(const void *p, int kind) {
  block *b;
  CUresult r = CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g);
  if ((b = find_block(p, 1)) && b->base == p && b->kind == kind &&
      (r = unsafe_call()) == CUDA_SUCCESS) {
    retire(b);
  } else if (r == CUDA_SUCCESS) {
    r = CUDA_ERROR_INVALID_VALUE;
  }
  pthread_mutex_unlock(&g);
  return r;
}

/* Whether [p, p + n) may be a copy's side: a live block, or host memory
 * outside the region (pageable). */
static int valid_side(const char *p, size_t n, int device_side) {
  if (n == 0) return 1;
  if (find_block(p, n)) return 1;
  return !device_side && !in_region(p);
}

/* --- streams ------------------------------------------------------------------------------ */

static void sleep_us(long long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  if (us > 0) nanosleep(&ts, NULL);
}

/* The bounding byte ranges an op reads and writes. */
static void op_ranges(const op *o, const char **wlo, const char **whi, const char **rlo,
                      const char **rhi) {
  *wlo = *whi = *rlo = *rhi = NULL;
  if (o->kind == OP_COPY) {
    *wlo = o->dst;
    *whi =
        o->dst + (o->depth - 1) * o->dpitch * o->dheight + (o->height - 1) * o->dpitch + o->width;
    *rlo = o->src;
    *rhi =
        o->src + (o->depth - 1) * o->spitch * o->sheight + (o->height - 1) * o->spitch + o->width;
  } else if (o->kind == OP_SET) {
    *wlo = o->dst;
    *whi = o->dst + o->count * o->unit;
  }
}

static int touches(const op *o, const char *lo, const char *hi) {
  const char *wlo, *whi, *rlo, *rhi;
  op_ranges(o, &wlo, &whi, &rlo, &rhi);
  return (wlo && wlo < hi && lo < whi) || (rlo && rlo < hi && lo < rhi);
}

/* Whether a queued (not finished) op of any stream touches [lo, hi) (under g). */
static int busy(const char *lo, const char *hi) {
  for (sstream *s = streams; s; s = s->next)
    for (op *o = s->head; o; o = o->next)
      if (touches(o, lo, hi)) return 1;
  return 0;
}

static void poison_dst(const op *o) {
  if (o->kind == OP_SET) {
    memset(o->dst, POISON, o->count * o->unit);
    return;
  }
  for (size_t z = 0; z < o->depth; z++)
    for (size_t y = 0; y < o->height; y++)
      memset(o->dst + (z * o->dheight + y) * o->dpitch, POISON, o->width);
}

static void run_copy(const op *o) {
  for (size_t z = 0; z < o->depth; z++)
    for (size_t y = 0; y < o->height; y++)
      memcpy(o->dst + (z * o->dheight + y) * o->dpitch, o->src + (z * o->sheight + y) * o->spitch,
             o->width);
}

static void run_set(const op *o) {
  for (size_t k = 0; k < o->count; k++) memcpy(o->dst + k * o->unit, &o->value, o->unit);
}

/* Runs o (its stream's head; g not held, except for waits). */
static void execute(sstream *s, op *o) {
  (void)s;
  sleep_us(o->delay);
  if (o->kind == OP_FREE) { /* another stream's queued work on it: freed too early */
    const char *lo = o->block->base, *hi = lo + o->block->size;
    pthread_mutex_lock(&g);
    if (busy(lo, hi)) early_frees++;
    while (busy(lo, hi)) pthread_cond_wait(&changed, &g);
    retire(o->block);
    pthread_mutex_unlock(&g);
    return;
  }
  if (o->kind == OP_WAIT) {
    pthread_mutex_lock(&g);
    while (o->on->done < o->until) pthread_cond_wait(&changed, &g);
    pthread_mutex_unlock(&g);
    return;
  }
  if (o->poison_at_run && (o->kind == OP_COPY || o->kind == OP_SET)) {
    poison_dst(o);
    sleep_us(o->delay / 4);
  }
  if (o->kind == OP_COPY) run_copy(o);
  if (o->kind == OP_SET) run_set(o);
}

static void *worker(void *arg) {
  sstream *s = arg;
  op *o;
  pthread_mutex_lock(&g);
  for (;;) {
    while (!s->head && s->live) pthread_cond_wait(&changed, &g);
    if (!s->head) break;
    o = s->head;
    pthread_mutex_unlock(&g);
    execute(s, o);
    pthread_mutex_lock(&g);
    s->head = o->next;
    if (!s->head) s->tail = NULL;
    s->done = o->seq;
    free(o);
    pthread_cond_broadcast(&changed);
  }
  pthread_mutex_unlock(&g);
  return NULL;
}

/* A new stream with its worker (under g), or NULL. */
static sstream *new_stream(int device, unsigned flags, int legacy, int per_thread) {
  sstream *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->device = device;
  s->flags = flags;
  s->legacy = legacy;
  s->per_thread = per_thread;
  s->owner = pthread_self();
  s->live = 1;
  s->seed = (unsigned)(uintptr_t)s ^ (unsigned)time(NULL);
  if (pthread_create(&s->worker, NULL, worker, s) != 0) {
    free(s);
    return NULL;
  }
  s->next = streams;
  streams = s;
  return s;
}

static int is_live_stream(const sstream *x) {
  for (sstream *s = streams; s; s = s->next)
    if (s == x && s->live) return 1;
  return 0;
}

/* The stream a handle names in the current context (under g): 0/1 the
 * legacy stream, 2 this thread's per-thread stream, else a created one of
 * this context. */
static CUresult resolve(CUstream h, sstream **out) {
  struct CUctx_st *c = current();
  if ((uintptr_t)h > 2) {
    sstream *s = (sstream *)h;
    if (!is_live_stream(s)) return CUDA_ERROR_INVALID_HANDLE;
    if (!c || c->device != s->device) return CUDA_ERROR_INVALID_CONTEXT;
    *out = s;
    return CUDA_SUCCESS;
  }
  if (!c) return CUDA_ERROR_INVALID_CONTEXT;
  if ((uintptr_t)h == 2) {
    for (sstream *s = streams; s; s = s->next)
      if (s->per_thread && s->device == c->device && pthread_equal(s->owner, pthread_self()))
        return *out = s, CUDA_SUCCESS;
    return (*out = new_stream(c->device, 0, 0, 1)) ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (!c->legacy && !(c->legacy = new_stream(c->device, 0, 1, 0))) return CUDA_ERROR_OUT_OF_MEMORY;
  *out = c->legacy;
  return CUDA_SUCCESS;
}

/* Queues o on s (under g), with its delay: delay_us/2 to delay_us. */
static void append(sstream *s, op *o) {
  long long d = delay_us;
  o->delay = d > 0 ? d / 2 + (long long)(rand_r(&s->seed) % (unsigned)(d / 2 + 1)) : 0;
  o->seq = ++s->enqueued;
  o->next = NULL;
  if (s->tail) s->tail->next = o;
  else s->head = o;
  s->tail = o;
}

static CUresult append_wait(sstream *s, sstream *on, uint64_t until) {
  op *w;
  if (on == s || on->done >= until) return CUDA_SUCCESS;
  if (!(w = calloc(1, sizeof *w))) return CUDA_ERROR_OUT_OF_MEMORY;
  w->kind = OP_WAIT;
  w->on = on;
  w->until = until;
  append(s, w);
  return CUDA_SUCCESS;
}

/* The legacy default stream's implicit waits before an op on s (under g). */
static CUresult legacy_waits(sstream *s) {
  CUresult r = CUDA_SUCCESS;
  if (s->flags & CU_STREAM_NON_BLOCKING) return r;
  if (!s->legacy) {
    sstream *l = ctxs[s->device].legacy;
    return l ? append_wait(s, l, l->enqueued) : r;
  }
  for (sstream *o = streams; o && r == CUDA_SUCCESS; o = o->next)
    if (o != s && o->live && o->device == s->device && !(o->flags & CU_STREAM_NON_BLOCKING))
      r = append_wait(s, o, o->enqueued);
  return r;
}

/* Queues o on the stream h names (takes o; poisons its destination). */
static CUresult enqueue(CUstream h, op *o) {
  sstream *s;
  const char *wlo, *whi, *rlo, *rhi;
  CUresult r;
  pthread_mutex_lock(&g);
  if ((r = resolve(h, &s)) == CUDA_SUCCESS && s->capture != CU_STREAM_CAPTURE_STATUS_NONE) {
    captured_ops++; /* recorded in the graph, not run */
    pthread_mutex_unlock(&g);
    free(o);
    return CUDA_SUCCESS;
  }
  if (r == CUDA_SUCCESS && (r = legacy_waits(s)) == CUDA_SUCCESS) {
    op_ranges(o, &wlo, &whi, &rlo, &rhi);
    if (poison && wlo) {
      if (busy(wlo, whi)) o->poison_at_run = 1;
      else poison_dst(o);
    }
    append(s, o);
    pthread_cond_broadcast(&changed);
  }
  pthread_mutex_unlock(&g);
  if (r != CUDA_SUCCESS) free(o);
  return r;
}

/* A copy op after the checks every copy gets: a context, live memory,
 * injected failures. */
static CUresult queue_copy(op *o, int dst_device, int src_device, CUstream h) {
  const char *wlo, *whi, *rlo, *rhi;
  CUresult r = CUDA_SUCCESS;
  op_ranges(o, &wlo, &whi, &rlo, &rhi);
  pthread_mutex_lock(&g);
  if (!current()) r = CUDA_ERROR_INVALID_CONTEXT;
  else if (fail_copy > 0) fail_copy--, r = CUDA_ERROR_UNKNOWN;
  else if (!valid_side(wlo, (size_t)(whi - wlo), dst_device) ||
           (rlo && !valid_side(rlo, (size_t)(rhi - rlo), src_device)))
    r = CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_unlock(&g);
  if (r != CUDA_SUCCESS) {
    free(o);
    return r;
  }
  return enqueue(h, o);
}

static op *linear_op(void *dst, const void *src, size_t n) {
  op *o = calloc(1, sizeof *o);
  if (!o) return NULL;
  o->kind = OP_COPY;
  o->dst = dst;
  o->src = src;
  o->width = n;
  o->height = o->depth = o->dheight = o->sheight = 1;
  o->dpitch = o->spitch = n;
  return o;
}

/* --- the entry points: setup and contexts ---------------------------------------------------------- */

API CUresult cuInit(unsigned int flags) {
  ENTER();
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  initialized = 1;
  return CUDA_SUCCESS;
}

API CUresult cuDriverGetVersion(int *v) {
  ENTER();
  *v = 12040;
  return CUDA_SUCCESS;
}

API CUresult cuDeviceGetCount(int *n) {
  NEED_INIT();
  *n = DEVICES;
  return CUDA_SUCCESS;
}

API CUresult cuDeviceGet(CUdevice *d, int ordinal) {
  NEED_INIT();
  if (ordinal < 0 || ordinal >= DEVICES) return CUDA_ERROR_INVALID_DEVICE;
  *d = ordinal;
  return CUDA_SUCCESS;
}

API CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
  NEED_INIT();
  if (d < 0 || d >= DEVICES) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&g);
  ctxs[d].refs++;
  pthread_mutex_unlock(&g);
  *c = &ctxs[d];
  return CUDA_SUCCESS;
}

/* The last release resets the context: its memory goes. */
API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
  CUresult r = CUDA_SUCCESS;
  NEED_INIT();
  if (d < 0 || d >= DEVICES) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&g);
  if (ctxs[d].refs == 0) {
    r = CUDA_ERROR_INVALID_CONTEXT;
  } else if (--ctxs[d].refs == 0) {
    for (block *b = blocks; b; b = b->next)
      if (b->live && b->device == d && b->kind != CU_MEMORYTYPE_HOST) retire(b);
  }
  pthread_mutex_unlock(&g);
  return r;
}

/* Whether c is a retained primary context. */
static int ctx_live(CUcontext c) {
  int live;
  if (c < &ctxs[0] || c >= &ctxs[DEVICES]) return 0;
  pthread_mutex_lock(&g);
  live = c->refs > 0;
  pthread_mutex_unlock(&g);
  return live;
}

API CUresult cuCtxPushCurrent_v2(CUcontext c) {
  NEED_INIT();
  if (!ctx_live(c)) return CUDA_ERROR_INVALID_CONTEXT;
  if (ctx_depth == 16) return CUDA_ERROR_INVALID_VALUE;
  ctx_stack[ctx_depth++] = c;
  return CUDA_SUCCESS;
}

API CUresult cuCtxPopCurrent_v2(CUcontext *c) {
  NEED_INIT();
  if (ctx_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
  ctx_depth--;
  if (c) *c = ctx_stack[ctx_depth];
  return CUDA_SUCCESS;
}

/* Waits for the work of every stream of the current context's device (a
 * capturing stream's is recorded, not run: nothing to wait for). */
API CUresult cuCtxSynchronize(void) {
  int device;
  NEED_INIT();
  if (!current()) return CUDA_ERROR_INVALID_CONTEXT;
  device = current()->device;
  pthread_mutex_lock(&g);
  for (sstream *s = streams; s; s = s->next)
    while (s->device == device && s->done < s->enqueued) pthread_cond_wait(&changed, &g);
  pthread_mutex_unlock(&g);
  return CUDA_SUCCESS;
}

/* --- memory --------------------------------------------------------------------------------------- */

#define DEVP(x) ((char *)(uintptr_t)(x))

API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  void *at = NULL;
  CUresult r;
  NEED_INIT();
  if (!current()) return CUDA_ERROR_INVALID_CONTEXT;
  if (n == 0) return CUDA_ERROR_INVALID_VALUE;
  if ((r = allocate(current()->device, n, CU_MEMORYTYPE_DEVICE, 0, &at)) == CUDA_SUCCESS)
    *p = (CUdeviceptr)(uintptr_t)at;
  return r;
}

/* The stream-ordered allocator: the memory at once (a pool of our own is
 * not modelled), its free queued on the stream. */
API CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream h) {
  void *at = NULL;
  sstream *s;
  CUresult r;
  NEED_INIT();
  if (!current()) return CUDA_ERROR_INVALID_CONTEXT;
  if (!pools) return CUDA_ERROR_NOT_SUPPORTED;
  if (n == 0) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g);
  r = resolve(h, &s);
  pthread_mutex_unlock(&g);
  if (r == CUDA_SUCCESS &&
      (r = allocate(current()->device, n, CU_MEMORYTYPE_DEVICE, 1, &at)) == CUDA_SUCCESS)
    *p = (CUdeviceptr)(uintptr_t)at;
  return r;
}

API CUresult cuMemFreeAsync(CUdeviceptr p, CUstream h) {
  block *b;
  op *o;
  CUresult r = CUDA_SUCCESS;
  NEED_INIT();
  if (!current()) return CUDA_ERROR_INVALID_CONTEXT;
  if (!(o = calloc(1, sizeof *o))) return CUDA_ERROR_OUT_OF_MEMORY;
  pthread_mutex_lock(&g);
  if (!(b = find_block(DEVP(p), 1)) || b->base != DEVP(p) || !b->pooled)
    r = CUDA_ERROR_INVALID_VALUE;
  else if (fail_free > 0) fail_free--, r = CUDA_ERROR_UNKNOWN;
  pthread_mutex_unlock(&g);
  if (r != CUDA_SUCCESS) {
    free(o);
    return r;
  }
  o->kind = OP_FREE;
  o->block = b;
  return enqueue(h, o);
}

/* Managed memory, as a foreign producer allocates it (cuda_stand_in's
 * tensor{pointer = "managed"} in its driver-only mode, as on hardware);
 * flags: CU_MEM_ATTACH_GLOBAL (1) or CU_MEM_ATTACH_HOST (2). */
API CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned int flags) {
  void *at = NULL;
  CUresult r;
  NEED_INIT();
  if (!current()) return CUDA_ERROR_INVALID_CONTEXT;
  if (n == 0 || (flags != 1 && flags != 2)) return CUDA_ERROR_INVALID_VALUE;
  if ((r = allocate(current()->device, n, CU_MEMORYTYPE_UNIFIED, 0, &at)) == CUDA_SUCCESS)
    *p = (CUdeviceptr)(uintptr_t)at;
  return r;
}

/* Device and managed memory alike, as the driver's cuMemFree. */
API CUresult cuMemFree_v2(CUdeviceptr p) {
  long long failing;
  NEED_INIT();
  if (!current()) return CUDA_ERROR_INVALID_CONTEXT;
  pthread_mutex_lock(&g);
  if ((failing = fail_free > 0)) fail_free--;
  pthread_mutex_unlock(&g);
  if (failing) return CUDA_ERROR_UNKNOWN;
  if (release_block((void *)(uintptr_t)p, CU_MEMORYTYPE_DEVICE) == CUDA_SUCCESS)
    return CUDA_SUCCESS;
  return release_block((void *)(uintptr_t)p, CU_MEMORYTYPE_UNIFIED);
}

API CUresult cuMemHostAlloc(void **p, size_t n, unsigned int flags) {
  NEED_INIT();
  (void)flags;
  if (!current()) return CUDA_ERROR_INVALID_CONTEXT;
  return allocate(current()->device, n, CU_MEMORYTYPE_HOST, 0, p);
}

API CUresult cuMemFreeHost(void *p) {
  NEED_INIT();
  return release_block(p, CU_MEMORYTYPE_HOST);
}

/* --- copies and memsets ---------------------------------------------------------------------------- */

API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s) {
  op *o;
  NEED_INIT();
  if (!(o = linear_op(DEVP(dst), src, n))) return CUDA_ERROR_OUT_OF_MEMORY;
  return queue_copy(o, 1, 0, s);
}

API CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s) {
  op *o;
  NEED_INIT();
  if (!(o = linear_op(dst, DEVP(src), n))) return CUDA_ERROR_OUT_OF_MEMORY;
  return queue_copy(o, 0, 1, s);
}

API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  op *o;
  NEED_INIT();
  if (!(o = linear_op(DEVP(dst), DEVP(src), n))) return CUDA_ERROR_OUT_OF_MEMORY;
  return queue_copy(o, 1, 1, s);
}

API CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dc, CUdeviceptr src, CUcontext sc,
                               size_t n, CUstream s) {
  op *o;
  NEED_INIT();
  if (!ctx_live(dc) || !ctx_live(sc)) return CUDA_ERROR_INVALID_CONTEXT;
  if (!(o = linear_op(DEVP(dst), DEVP(src), n))) return CUDA_ERROR_OUT_OF_MEMORY;
  return queue_copy(o, 1, 1, s);
}

static char *side_ptr(CUmemorytype type, const void *host, CUdeviceptr dev, size_t x) {
  return (type == CU_MEMORYTYPE_HOST ? (char *)host : DEVP(dev)) + x;
}

/* Pitches a 2D or 3D copy refuses: above MAX_PITCH; in strict mode, within
 * device memory, any not a multiple of 512. */
static int bad_pitches(CUmemorytype st, size_t sp, CUmemorytype dt, size_t dp) {
  if (sp > (size_t)max_pitch || dp > (size_t)max_pitch) return 1;
  return strict_2d && st == CU_MEMORYTYPE_DEVICE && dt == CU_MEMORYTYPE_DEVICE &&
         (sp % 512 || dp % 512);
}

API CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *m, CUstream s) {
  op *o;
  NEED_INIT();
  if (m->srcPitch < m->WidthInBytes || m->dstPitch < m->WidthInBytes || m->srcY || m->dstY ||
      bad_pitches(m->srcMemoryType, m->srcPitch, m->dstMemoryType, m->dstPitch))
    return CUDA_ERROR_INVALID_VALUE;
  if (!(o = calloc(1, sizeof *o))) return CUDA_ERROR_OUT_OF_MEMORY;
  o->kind = OP_COPY;
  o->dst = side_ptr(m->dstMemoryType, m->dstHost, m->dstDevice, m->dstXInBytes);
  o->src = side_ptr(m->srcMemoryType, m->srcHost, m->srcDevice, m->srcXInBytes);
  o->width = m->WidthInBytes, o->height = m->Height, o->depth = 1;
  o->dpitch = m->dstPitch, o->spitch = m->srcPitch, o->dheight = o->sheight = m->Height;
  if (o->width == 0 || o->height == 0) return free(o), CUDA_SUCCESS;
  return queue_copy(o, m->dstMemoryType != CU_MEMORYTYPE_HOST,
                    m->srcMemoryType != CU_MEMORYTYPE_HOST, s);
}

API CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *m, CUstream s) {
  op *o;
  NEED_INIT();
  if (m->reserved0 || m->reserved1 || m->srcPitch < m->WidthInBytes ||
      m->dstPitch < m->WidthInBytes || m->srcHeight < m->Height || m->dstHeight < m->Height ||
      m->srcY || m->dstY || m->srcZ || m->dstZ ||
      bad_pitches(m->srcMemoryType, m->srcPitch, m->dstMemoryType, m->dstPitch))
    return CUDA_ERROR_INVALID_VALUE;
  if (!(o = calloc(1, sizeof *o))) return CUDA_ERROR_OUT_OF_MEMORY;
  o->kind = OP_COPY;
  o->dst = side_ptr(m->dstMemoryType, m->dstHost, m->dstDevice, m->dstXInBytes);
  o->src = side_ptr(m->srcMemoryType, m->srcHost, m->srcDevice, m->srcXInBytes);
  o->width = m->WidthInBytes, o->height = m->Height, o->depth = m->Depth;
  o->dpitch = m->dstPitch, o->spitch = m->srcPitch, o->dheight = m->dstHeight,
  o->sheight = m->srcHeight;
  if (!o->width || !o->height || !o->depth) return free(o), CUDA_SUCCESS;
  return queue_copy(o, m->dstMemoryType != CU_MEMORYTYPE_HOST,
                    m->srcMemoryType != CU_MEMORYTYPE_HOST, s);
}

static CUresult memset_async(CUdeviceptr dst, unsigned value, unsigned unit, size_t n, CUstream s) {
  op *o;
  if ((uintptr_t)dst % unit != 0) return CUDA_ERROR_INVALID_VALUE;
  if (n == 0) return CUDA_SUCCESS;
  if (!(o = linear_op(DEVP(dst), NULL, n * unit))) return CUDA_ERROR_OUT_OF_MEMORY;
  o->kind = OP_SET;
  o->value = value;
  o->unit = unit;
  o->count = n;
  return queue_copy(o, 1, 1, s);
}

API CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s) {
  NEED_INIT();
  return memset_async(dst, v, 1, n, s);
}

API CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short v, size_t n, CUstream s) {
  NEED_INIT();
  return memset_async(dst, v, 2, n, s);
}

API CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int v, size_t n, CUstream s) {
  NEED_INIT();
  return memset_async(dst, v, 4, n, s);
}

/* --- streams and events -------------------------------------------------------------------------------- */

API CUresult cuStreamCreate(CUstream *out, unsigned int flags) {
  sstream *s;
  NEED_INIT();
  if (!current()) return CUDA_ERROR_INVALID_CONTEXT;
  pthread_mutex_lock(&g);
  s = new_stream(current()->device, flags, 0, 0);
  pthread_mutex_unlock(&g);
  if (!s) return CUDA_ERROR_OUT_OF_MEMORY;
  *out = s;
  return CUDA_SUCCESS;
}

/* Waits for its work, then ends its worker (the struct stays: waits and
 * events may still name it). */
API CUresult cuStreamDestroy_v2(CUstream h) {
  sstream *s = h;
  pthread_t w;
  NEED_INIT();
  pthread_mutex_lock(&g);
  if ((uintptr_t)h <= 2 || !is_live_stream(s)) {
    pthread_mutex_unlock(&g);
    return CUDA_ERROR_INVALID_HANDLE;
  }
  s->live = 0;
  w = s->worker;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&g);
  pthread_join(w, NULL);
  return CUDA_SUCCESS;
}

API CUresult cuStreamSynchronize(CUstream h) {
  sstream *s;
  CUresult r;
  NEED_INIT();
  pthread_mutex_lock(&g);
  if ((r = resolve(h, &s)) == CUDA_SUCCESS && s->capture != CU_STREAM_CAPTURE_STATUS_NONE) {
    s->capture = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
    r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  } else if (r == CUDA_SUCCESS) {
    while (s->done < s->enqueued) pthread_cond_wait(&changed, &g);
  }
  pthread_mutex_unlock(&g);
  return r;
}

API CUresult cuStreamBeginCapture_v2(CUstream h, int mode) {
  sstream *s = h;
  CUresult r = CUDA_SUCCESS;
  NEED_INIT();
  if (mode < CU_STREAM_CAPTURE_MODE_GLOBAL || mode > CU_STREAM_CAPTURE_MODE_RELAXED)
    return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g);
  if ((uintptr_t)h <= 2 || !is_live_stream(s))
    r = CUDA_ERROR_INVALID_HANDLE;                               /* legacy: not capturable */
  else if (s->capture != CU_STREAM_CAPTURE_STATUS_NONE) r = 401; /* CUDA_ERROR_ILLEGAL_STATE */
  else
    s->capture = CU_STREAM_CAPTURE_STATUS_ACTIVE, s->capture_mode = mode,
    s->capturer = pthread_self();
  pthread_mutex_unlock(&g);
  return r;
}

/* Ends the capture: a (dummy) graph, or STREAM_CAPTURE_INVALIDATED. */
API CUresult cuStreamEndCapture(CUstream h, void **graph) {
  sstream *s = h;
  CUresult r = CUDA_SUCCESS;
  NEED_INIT();
  *graph = NULL;
  pthread_mutex_lock(&g);
  if ((uintptr_t)h <= 2 || !is_live_stream(s)) r = CUDA_ERROR_INVALID_HANDLE;
  else if (s->capture == CU_STREAM_CAPTURE_STATUS_NONE) r = 401;
  else if (s->capture == CU_STREAM_CAPTURE_STATUS_INVALIDATED)
    r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  else *graph = s;
  if (r != CUDA_ERROR_INVALID_HANDLE) s->capture = CU_STREAM_CAPTURE_STATUS_NONE;
  pthread_mutex_unlock(&g);
  return r;
}

/* A created stream is named by its handle alone, in any context. */
API CUresult cuStreamIsCapturing(CUstream h, int *status) {
  sstream *s = h;
  CUresult r = CUDA_SUCCESS;
  NEED_INIT();
  pthread_mutex_lock(&g);
  if ((uintptr_t)h > 2) r = is_live_stream(s) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  else r = resolve(h, &s);
  if (r == CUDA_SUCCESS) *status = s->capture;
  pthread_mutex_unlock(&g);
  return r;
}

API CUresult cuThreadExchangeStreamCaptureMode(int *mode) {
  int previous = capture_mode;
  NEED_INIT();
  if (*mode < CU_STREAM_CAPTURE_MODE_GLOBAL || *mode > CU_STREAM_CAPTURE_MODE_RELAXED)
    return CUDA_ERROR_INVALID_VALUE;
  capture_mode = *mode;
  *mode = previous;
  return CUDA_SUCCESS;
}

static int is_live_event(const sevent *x) {
  for (sevent *e = events; e; e = e->next)
    if (e == x) return 1;
  return 0;
}

API CUresult cuEventCreate(CUevent *out, unsigned int flags) {
  sevent *e;
  NEED_INIT();
  (void)flags;
  if (!current()) return CUDA_ERROR_INVALID_CONTEXT;
  if (!(e = calloc(1, sizeof *e))) return CUDA_ERROR_OUT_OF_MEMORY;
  e->device = current()->device;
  pthread_mutex_lock(&g);
  e->next = events;
  events = e;
  pthread_mutex_unlock(&g);
  *out = e;
  return CUDA_SUCCESS;
}

/* An event is a marker queued on the stream: (stream, its sequence). */
API CUresult cuEventRecord(CUevent ev, CUstream h) {
  op *mark = calloc(1, sizeof *mark);
  sstream *s;
  CUresult r;
  NEED_INIT();
  if (!mark) return CUDA_ERROR_OUT_OF_MEMORY;
  mark->kind = OP_MARK;
  pthread_mutex_lock(&g);
  if (!is_live_event(ev)) r = CUDA_ERROR_INVALID_HANDLE;
  else if ((r = resolve(h, &s)) == CUDA_SUCCESS && s->device != ev->device)
    r = CUDA_ERROR_INVALID_CONTEXT;
  if (r == CUDA_SUCCESS && s->capture != CU_STREAM_CAPTURE_STATUS_NONE) {
    ev->s = NULL; /* a node of the graph: nothing to wait for here */
    r = CUDA_SUCCESS;
    free(mark);
    mark = NULL;
  } else if (r == CUDA_SUCCESS && (r = legacy_waits(s)) == CUDA_SUCCESS) {
    append(s, mark);
    ev->s = s;
    ev->seq = mark->seq;
    pthread_cond_broadcast(&changed);
  }
  pthread_mutex_unlock(&g);
  if (r != CUDA_SUCCESS) free(mark);
  return r;
}

/* flags: 0, or CU_EVENT_WAIT_EXTERNAL (1), which a capture records as an
 * external wait node. */
API CUresult cuStreamWaitEvent(CUstream h, CUevent ev, unsigned int flags) {
  sstream *s;
  CUresult r;
  NEED_INIT();
  if (flags > 1) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&g);
  if (!is_live_event(ev)) r = CUDA_ERROR_INVALID_HANDLE;
  else if ((r = resolve(h, &s)) == CUDA_SUCCESS && s->capture != CU_STREAM_CAPTURE_STATUS_NONE) {
    if (ev->s && !flags) { /* recorded outside the capture: it cannot be joined */
      s->capture = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
      r = CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
    }
  } else if (r == CUDA_SUCCESS && ev->s && (r = legacy_waits(s)) == CUDA_SUCCESS)
    r = append_wait(s, ev->s, ev->seq); /* across contexts too */
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&g);
  return r;
}

API CUresult cuEventSynchronize(CUevent ev) {
  CUresult r = CUDA_SUCCESS;
  NEED_INIT();
  pthread_mutex_lock(&g);
  if (!is_live_event(ev)) r = CUDA_ERROR_INVALID_HANDLE;
  else
    while (ev->s && ev->s->done < ev->seq) pthread_cond_wait(&changed, &g);
  pthread_mutex_unlock(&g);
  return r;
}

API CUresult cuEventDestroy_v2(CUevent ev) {
  CUresult r = CUDA_ERROR_INVALID_HANDLE;
  NEED_INIT();
  pthread_mutex_lock(&g);
  for (sevent **p = &events; *p; p = &(*p)->next)
    if (*p == ev) {
      *p = ev->next;
      free(ev);
      r = CUDA_SUCCESS;
      break;
    }
  pthread_mutex_unlock(&g);
  return r;
}

/* --- pointer attributes ---------------------------------------------------------------------------------- */

/* One attribute of the block b (NULL: unknown pointer) into data. */
static CUresult attribute_of(const block *b, CUpointer_attribute a, void *data) {
  unsigned int u;
  int i;
  CUdeviceptr start;
  size_t size;
  switch (a) {
    case CU_POINTER_ATTRIBUTE_CONTEXT: {
      CUcontext c = b ? &ctxs[b->device] : NULL;
      memcpy(data, &c, sizeof c);
      return CUDA_SUCCESS;
    }
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      u = !b ? 0 : b->kind == CU_MEMORYTYPE_HOST ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
      memcpy(data, &u, sizeof u);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
      u = b && b->kind == CU_MEMORYTYPE_UNIFIED;
      memcpy(data, &u, sizeof u);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      i = b ? b->device : -2;
      memcpy(data, &i, sizeof i);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      start = b ? (CUdeviceptr)(uintptr_t)b->base : 0;
      memcpy(data, &start, sizeof start);
      return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
      size = b ? b->size : 0;
      memcpy(data, &size, sizeof size);
      return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

API CUresult cuPointerGetAttribute(void *data, CUpointer_attribute a, CUdeviceptr p) {
  block *b;
  CUresult r;
  NEED_INIT();
  pthread_mutex_lock(&g);
  b = find_block(DEVP(p), 1);
  r = b ? attribute_of(b, a, data) : CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_unlock(&g);
  return r;
}

/* Unknown pointers: success, with nulls (as the reference says). */
API CUresult cuPointerGetAttributes(unsigned int n, CUpointer_attribute *a, void **data,
                                    CUdeviceptr p) {
  block *b;
  CUresult r = CUDA_SUCCESS;
  NEED_INIT();
  pthread_mutex_lock(&g);
  b = find_block(DEVP(p), 1);
  for (unsigned int k = 0; k < n && r == CUDA_SUCCESS; k++) r = attribute_of(b, a[k], data[k]);
  pthread_mutex_unlock(&g);
  return r;
}

API CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute a, CUdevice d) {
  NEED_INIT();
  if (d < 0 || d >= DEVICES) return CUDA_ERROR_INVALID_DEVICE;
  if (a == CU_DEVICE_ATTRIBUTE_MAX_PITCH) *value = (int)max_pitch;
  else if (a == CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) *value = (int)pools;
  else return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

API CUresult cuGetErrorName(CUresult e, const char **name) {
  static const struct {
    CUresult code;
    const char *name;
  } names[] = {{0, "CUDA_SUCCESS"},
               {1, "CUDA_ERROR_INVALID_VALUE"},
               {2, "CUDA_ERROR_OUT_OF_MEMORY"},
               {3, "CUDA_ERROR_NOT_INITIALIZED"},
               {4, "CUDA_ERROR_DEINITIALIZED"},
               {101, "CUDA_ERROR_INVALID_DEVICE"},
               {201, "CUDA_ERROR_INVALID_CONTEXT"},
               {400, "CUDA_ERROR_INVALID_HANDLE"},
               {999, "CUDA_ERROR_UNKNOWN"}};
  count_call(__func__);
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
    if (names[k].code == e) return *name = names[k].name, CUDA_SUCCESS;
  *name = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

/* --- cuGetProcAddress ------------------------------------------------------------------------------------------ */

#define PROC_ENTRY_(field, base, symbol, args) {#base, (void *)symbol},
static const struct {
  const char *name;
  void *fn;
} procs[] = {DLB_CU_FUNCTIONS(PROC_ENTRY_) DLB_CU_OPTIONAL_FUNCTIONS(PROC_ENTRY_)};

/* Counts a lookup that does not ask for the legacy stream's semantics. */
static void note_flags(uint64_t flags) {
  pthread_mutex_lock(&g);
  getproc_lookups++;
  if (flags != CU_GET_PROC_ADDRESS_LEGACY_STREAM) getproc_not_legacy++;
  pthread_mutex_unlock(&g);
}

static CUresult lookup(const char *symbol, void **fn, int version) {
  *fn = NULL;
  if (version > 12040) return CUDA_ERROR_INVALID_VALUE;
  for (size_t k = 0; k < sizeof procs / sizeof procs[0]; k++)
    if (strcmp(procs[k].name, symbol) == 0) *fn = procs[k].fn;
  return CUDA_SUCCESS; /* missing: success with NULL */
}

API CUresult cuGetProcAddress_v2(const char *symbol, void **fn, int version, uint64_t flags,
                                 int *status) {
  count_call(__func__);
  note_flags(flags);
  if (status) *status = 0;
  if (getproc < 2) return *fn = NULL, CUDA_ERROR_NOT_SUPPORTED;
  return lookup(symbol, fn, version);
}

API CUresult cuGetProcAddress(const char *symbol, void **fn, int version, uint64_t flags) {
  count_call(__func__);
  note_flags(flags);
  if (getproc < 1) return *fn = NULL, CUDA_ERROR_NOT_SUPPORTED;
  return lookup(symbol, fn, version);
}

/* --- control ---------------------------------------------------------------------------------------------------- */

API int standin_control(const char *key, long long value) {
  int known = 1;
  pthread_mutex_lock(&g);
  if (strcmp(key, "fail_alloc") == 0) fail_alloc = value;
  else if (strcmp(key, "fail_copy") == 0) fail_copy = value;
  else if (strcmp(key, "fail_free") == 0) fail_free = value;
  else if (strcmp(key, "max_pitch") == 0) max_pitch = value;
  else if (strcmp(key, "pools") == 0) pools = value != 0;
  else if (strcmp(key, "strict_2d") == 0) strict_2d = value != 0;
  else if (strcmp(key, "deinit") == 0) deinit = value != 0;
  else if (strcmp(key, "delay_us") == 0) delay_us = value;
  else if (strcmp(key, "poison") == 0) poison = value != 0;
  else if (strcmp(key, "reset_counts") == 0)
    for (int k = 0; k < MAX_NAMES; k++) counts[k].calls = 0;
  else known = 0;
  pthread_mutex_unlock(&g);
  return known ? 0 : -1;
}

static long long query_locked(const char *key) {
  long long n = 0;
  if (strncmp(key, "calls:", 6) == 0) {
    for (int k = 0; k < MAX_NAMES && counts[k].name; k++)
      if (strcmp(counts[k].name, key + 6) == 0) n = counts[k].calls;
  } else if (strncmp(key, "retains:", 8) == 0) {
    int d = atoi(key + 8);
    n = d >= 0 && d < DEVICES ? ctxs[d].refs : -1;
  } else if (strcmp(key, "live_allocations") == 0 || strcmp(key, "live_bytes") == 0) {
    for (block *b = blocks; b; b = b->next)
      if (b->live) n += key[5] == 'a' ? 1 : (long long)b->size;
  } else if (strcmp(key, "pending") == 0) {
    for (sstream *s = streams; s; s = s->next) n += (long long)(s->enqueued - s->done);
  } else if (strcmp(key, "getproc_lookups") == 0) {
    n = getproc_lookups;
  } else if (strcmp(key, "getproc_not_legacy") == 0) {
    n = getproc_not_legacy;
  } else if (strcmp(key, "early_frees") == 0) {
    n = early_frees;
  } else if (strcmp(key, "captured_ops") == 0) {
    n = captured_ops;
  } else if (strcmp(key, "events_live") == 0) {
    for (sevent *e = events; e; e = e->next) n++;
  } else if (strcmp(key, "streams_live") == 0) {
    for (sstream *s = streams; s; s = s->next) n += s->live && !s->legacy && !s->per_thread;
  } else {
    n = -1;
  }
  return n;
}

API long long standin_query(const char *key) {
  long long n;
  pthread_mutex_lock(&g);
  n = query_locked(key);
  pthread_mutex_unlock(&g);
  return n;
}

API void *standin_alloc(int device, size_t nbytes, int kind) {
  void *p = NULL;
  if (device < 0 || device >= DEVICES) return NULL;
  return allocate(device, nbytes, kind == CU_MEMORYTYPE_UNIFIED ? kind : CU_MEMORYTYPE_DEVICE, 0,
                  &p) == CUDA_SUCCESS
             ? p
             : NULL;
}

API void standin_free(void *p) {
  if (release_block(p, CU_MEMORYTYPE_DEVICE) != CUDA_SUCCESS)
    release_block(p, CU_MEMORYTYPE_UNIFIED);
}

static long long env_number(const char *name, long long fallback) {
  const char *v = getenv(name);
  return v && *v ? atoll(v) : fallback;
}

/* fork: the child inherits no driver (every call: NOT_INITIALIZED, as
 * CUDA's "initialization error"); g is held across the fork so that the
 * child's copy is consistent. */
static void before_fork(void) { pthread_mutex_lock(&g); }
static void after_fork_parent(void) { pthread_mutex_unlock(&g); }
static void after_fork_child(void) {
  initialized = 0;
  pthread_mutex_unlock(&g);
}

__attribute__((constructor)) static void standin_load(void) {
  pthread_atfork(before_fork, after_fork_parent, after_fork_child);
  const char *gp = getenv("STANDIN_GETPROC"), *path = getenv("STANDIN_LOG");
  delay_us = env_number("STANDIN_DELAY_US", 300);
  poison = (int)env_number("STANDIN_POISON", 1);
  device_bytes = env_number("STANDIN_DEVICE_BYTES", (long long)1 << 30);
  getproc = !gp ? 2 : strcmp(gp, "v1") == 0 ? 1 : strcmp(gp, "none") == 0 ? 0 : 2;
  if (path && *path) log_file = fopen(path, "a");
}

__attribute__((destructor)) static void standin_unload(void) {
  if (getenv("STANDIN_DEINIT_AT_EXIT") && atoi(getenv("STANDIN_DEINIT_AT_EXIT"))) deinit = 1;
  if (log_file) fclose(log_file), log_file = NULL;
}
