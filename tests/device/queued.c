/* queued.c -- a test backend that behaves like a device (queued.h). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "queued.h"

enum { BLOCK_OWN, BLOCK_FOREIGN, BLOCK_ADOPTED };

/* Device memory: an allocation, a foreign region, or an adopted range of one. */
typedef struct qblock {
  struct qblock *next;
  char *data;
  size_t nbytes;
  int device, kind;
  int dead; /* the core gave the handle up: a free or forget is queued */
} qblock;

/* Bytes [lo, hi) of a block. */
typedef struct span {
  const qblock *block;
  size_t lo, hi;
} span;

struct qqueue;

/* A free (or, for forget, the end of every use) once every queue gets there. */
typedef struct retire {
  int remaining;
  int host_waits; /* forget: the host frees this record */
  qblock *block;
} retire;

enum { OP_COPY, OP_KERNEL, OP_WAIT, OP_RETIRE, OP_READ };
enum { K_ELEMENTWISE, K_REDUCE, K_MATMUL, K_CAST, K_FILL };

/* One queued operation. Geometry is copied in: the core's arrays may be gone
 * by the time it runs. */
typedef struct qop {
  struct qop *next;
  int kind;
  int host_owned, finished; /* a host waits for it and frees it */
  dlb_status status;
  span dst;
  int has_dst;
  span src[4];
  int nsrc;
  union {
    struct {
      size_t item;
      int ndim;
      int64_t shape[DLB_MAX_NDIM], dstr[DLB_MAX_NDIM], sstr[DLB_MAX_NDIM]; /* bytes */
      char *d;
      const char *s;
    } copy;
    struct {
      int which;
      int64_t shape[5][DLB_MAX_NDIM], strides[5][DLB_MAX_NDIM];
      dlb_kernel_error error; /* cast and fill */
      union {
        dlb_elementwise_call ew;
        dlb_reduce_call red;
        dlb_matmul_call mm;
        struct {
          dlb_tensor dst, src;
          unsigned char value[16];
        } cf;
      } u;
    } kernel;
    struct {
      struct qqueue *target;
      uint64_t seq;
    } wait;
    retire *retire;
    struct {
      const char *src;
      char *dst;
      size_t n;
    } read;
  } u;
} qop;

typedef struct qqueue {
  struct dlb_queued *q;
  struct qqueue *next; /* every queue of q */
  int device, consumer;
  qop *head, *tail; /* head: running or next */
  uint64_t enqueued, done;
  int paused, started;
  pthread_t thread;
  uint64_t rng;
  dlb_status sticky; /* a kernel failed here; reported once */
} qqueue;

/* An event: the queue had run `seq` operations. */
typedef struct qevent {
  qqueue *queue;
  uint64_t seq;
} qevent;

struct dlb_queued {
  atomic_int refs;
  pthread_mutex_t mu;
  pthread_cond_t cond; /* broadcast on every change */
  dlb_queued_config cfg;
  char name[32];
  dlb_kernels kernels;
  qqueue *queues;
  qqueue *device[DLB_QUEUED_MAX_DEVICES], *consumer[DLB_QUEUED_MAX_DEVICES];
  qblock *blocks;
  int stopping;
  int64_t last_status;
  dlb_queued_stats st;
};

#define LOCK(q) pthread_mutex_lock(&(q)->mu)
#define UNLOCK(q) pthread_mutex_unlock(&(q)->mu)

/* ---- queues and workers ----------------------------------------------------- */

static uint64_t next_random(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545f4914f6cdd1dull;
}

static qqueue *queue_new(dlb_queued *q, int device, int consumer) {
  static atomic_uint serial;
  qqueue *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->q = q;
  w->device = device;
  w->consumer = consumer;
  w->rng = (q->cfg.seed ^ (0x9e3779b97f4a7c15ull * (atomic_fetch_add(&serial, 1) + 1))) | 1;
  w->next = q->queues;
  q->queues = w;
  return w;
}

static int is_queue(const dlb_queued *q, const void *p) {
  for (const qqueue *w = q->queues; w; w = w->next)
    if (w == p) return 1;
  return 0;
}

static void run_op(dlb_queued *q, qqueue *w, qop *op);

static void sleep_us(unsigned us) {
  struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
  nanosleep(&ts, NULL);
}

/* Runs the queue's operations in order, each after its delay. */
static void *worker(void *arg) {
  qqueue *w = arg;
  dlb_queued *q = w->q;
  LOCK(q);
  for (;;) {
    qop *op;
    unsigned delay;
    while (!(w->head && !w->paused) && !(q->stopping && !w->head))
      pthread_cond_wait(&q->cond, &q->mu);
    if (!w->head) break;
    op = w->head;
    delay = q->cfg.max_delay_us ? (unsigned)(next_random(&w->rng) % (q->cfg.max_delay_us + 1u)) : 0;
    if (delay) {
      UNLOCK(q);
      sleep_us(delay);
      LOCK(q);
    }
    while (w->paused) pthread_cond_wait(&q->cond, &q->mu);
    run_op(q, w, op);
    w->head = op->next;
    if (!w->head) w->tail = NULL;
    w->done++;
    q->st.ops_run++;
    if (op->host_owned) op->finished = 1;
    else free(op);
    pthread_cond_broadcast(&q->cond);
  }
  UNLOCK(q);
  return NULL;
}

/* Appends op (locked); starts the worker on first use. */
static dlb_status enqueue(dlb_queued *q, qqueue *w, qop *op) {
  if (!w->started) {
    if (pthread_create(&w->thread, NULL, worker, w) != 0) {
      free(op);
      return DLB_E_BACKEND_FAILURE;
    }
    w->started = 1;
  }
  op->next = NULL;
  if (w->tail) w->tail->next = op;
  else w->head = op;
  w->tail = op;
  w->enqueued++;
  pthread_cond_broadcast(&q->cond);
  return DLB_OK;
}

/* A kernel's failure on w since the last report: BACKEND_FAILURE once (locked). */
static dlb_status take_sticky(dlb_queued *q, qqueue *w) {
  if (w->sticky == DLB_OK) return DLB_OK;
  q->last_status = 900 + (int64_t)w->sticky;
  w->sticky = DLB_OK;
  return DLB_E_BACKEND_FAILURE;
}

/* Queues a host-owned op and waits for it (locked): its status, or a
 * kernel's failure before it. */
static dlb_status enqueue_and_wait(dlb_queued *q, qqueue *w, qop *op) {
  dlb_status st;
  op->host_owned = 1;
  if ((st = enqueue(q, w, op)) != DLB_OK) return st;
  q->st.host_blocks++;
  while (!op->finished) pthread_cond_wait(&q->cond, &q->mu);
  st = op->status;
  free(op);
  return st != DLB_OK ? st : take_sticky(q, w);
}

static qop *op_new(int kind) {
  qop *op = calloc(1, sizeof *op);
  if (op) op->kind = kind;
  return op;
}

/* Stops every worker after its work and joins it. */
static void stop_all(dlb_queued *q) {
  LOCK(q);
  q->stopping = 1;
  for (qqueue *w = q->queues; w; w = w->next) w->paused = 0;
  pthread_cond_broadcast(&q->cond);
  for (;;) {
    qqueue *w = q->queues;
    while (w && !w->started) w = w->next;
    if (!w) break;
    w->started = 0;
    UNLOCK(q);
    pthread_join(w->thread, NULL);
    LOCK(q);
  }
  UNLOCK(q);
}

/* ---- memory ------------------------------------------------------------------ */

static qblock *block_of(dlb_queued *q, const void *handle) {
  for (qblock *b = q->blocks; b; b = b->next)
    if (b == handle && !b->dead && b->kind != BLOCK_FOREIGN) return b;
  return NULL;
}

/* The live block holding [p, p + n), preferring foreign regions when foreign. */
static qblock *block_holding(dlb_queued *q, uintptr_t p, size_t n, int foreign_only) {
  for (qblock *b = q->blocks; b; b = b->next) {
    uintptr_t lo = (uintptr_t)b->data;
    if (b->dead || (foreign_only && b->kind != BLOCK_FOREIGN)) continue;
    if (p >= lo && n <= b->nbytes && p - lo <= b->nbytes - n) return b;
  }
  return NULL;
}

static void unlist_block(dlb_queued *q, qblock *b) {
  for (qblock **p = &q->blocks; *p; p = &(*p)->next)
    if (*p == b) {
      *p = b->next;
      return;
    }
}

static int violation(dlb_queued *q, const char *what) {
  q->st.violations++;
  if (getenv("DLB_QUEUED_VERBOSE")) fprintf(stderr, "queued backend '%s': %s\n", q->name, what);
  return -1;
}

static int overlaps(const span *a, const span *b) {
  return a->block == b->block && a->lo < b->hi && b->lo < a->hi;
}

/* Whether a queued operation still reads (or, with writes, writes) the span. */
static int pending_touch(const dlb_queued *q, const span *s, int writes) {
  for (const qqueue *w = q->queues; w; w = w->next)
    for (const qop *op = w->head; op; op = op->next) {
      if (writes) {
        if (op->has_dst && overlaps(&op->dst, s)) return 1;
        continue;
      }
      for (int k = 0; k < op->nsrc; k++)
        if (overlaps(&op->src[k], s)) return 1;
    }
  return 0;
}

/* Byte reach [lo, hi) of an n-d walk with byte strides from byte offset
 * `offset`; 0 when it is inside [0, nbytes) (or empty: *empty set), -1 not. */
static int reach(int ndim, const int64_t *shape, const int64_t *bstrides, size_t item,
                 uint64_t offset, size_t nbytes, size_t *lo, size_t *hi, int *empty) {
  int64_t l = 0, h = 0;
  *empty = 0;
  for (int d = 0; d < ndim; d++) {
    int64_t ext;
    if (shape[d] < 0) return -1;
    if (shape[d] == 0) {
      *empty = 1;
      return 0;
    }
    if (__builtin_mul_overflow(shape[d] - 1, bstrides[d], &ext)) return -1;
    if (ext < 0 ? __builtin_add_overflow(l, ext, &l) : __builtin_add_overflow(h, ext, &h))
      return -1;
  }
  if (offset > (uint64_t)INT64_MAX || __builtin_add_overflow((int64_t)offset, l, &l) ||
      __builtin_add_overflow((int64_t)offset, h, &h) || l < 0 ||
      (uint64_t)h + item > (uint64_t)nbytes)
    return -1;
  *lo = (size_t)l;
  *hi = (size_t)h + item;
  return 0;
}

/* Element strides to byte strides. */
static int byte_strides(int ndim, const int64_t *strides, size_t item, int64_t *out) {
  for (int d = 0; d < ndim; d++)
    if (__builtin_mul_overflow(strides[d], (int64_t)item, &out[d])) return -1;
  return 0;
}

/* The n-d walk: d[i...] = s[i...] (s NULL: poison), byte strides. */
static void walk(int ndim, const int64_t *shape, char *d, const int64_t *ds, const char *s,
                 const int64_t *ss, size_t item) {
  int64_t idx[DLB_MAX_NDIM] = {0}, od = 0, os = 0;
  for (int k = 0; k < ndim; k++)
    if (shape[k] == 0) return;
  for (;;) {
    int k;
    if (s) memcpy(d + od, s + os, item);
    else memset(d + od, DLB_QUEUED_POISON, item);
    for (k = ndim - 1; k >= 0; k--) {
      od += ds[k];
      if (s) os += ss[k];
      if (++idx[k] < shape[k]) break;
      od -= ds[k] * shape[k];
      if (s) os -= ss[k] * shape[k];
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

/* ---- version 1 hooks ------------------------------------------------------------- */

static int q_device_count(void *ctx) { return ((dlb_queued *)ctx)->cfg.devices; }

static dlb_status q_allocate(void *ctx, int dev, size_t nbytes, int zeroed, void **handle) {
  dlb_queued *q = ctx;
  qblock *b = calloc(1, sizeof *b);
  char *p = zeroed ? calloc(1, nbytes) : malloc(nbytes);
  if (!b || !p) {
    free(b);
    free(p);
    return DLB_E_OUT_OF_MEMORY;
  }
  if (!zeroed) memset(p, DLB_QUEUED_GARBAGE, nbytes);
  b->data = p;
  b->nbytes = nbytes;
  b->device = dev;
  b->kind = BLOCK_OWN;
  LOCK(q);
  q->st.allocate++;
  q->st.live++;
  if (dev < 0 || dev >= q->cfg.devices) violation(q, "allocate on a device out of range");
  b->next = q->blocks;
  q->blocks = b;
  UNLOCK(q);
  *handle = b;
  return DLB_OK;
}

static void retire_done(dlb_queued *q, retire *r) {
  qblock *b = r->block;
  unlist_block(q, b);
  if (b->kind == BLOCK_OWN) {
    free(b->data);
    q->st.freed++;
    q->st.live--;
  }
  free(b);
  if (!r->host_waits) free(r);
}

/* Queues the end of the block's use behind every started queue (locked). */
static retire *retire_block(dlb_queued *q, qblock *b, int host_waits) {
  retire *r = calloc(1, sizeof *r);
  if (!r) { /* no memory: wait for every queue instead */
    for (qqueue *w = q->queues; w; w = w->next)
      while (w->done < w->enqueued) pthread_cond_wait(&q->cond, &q->mu);
    unlist_block(q, b);
    if (b->kind == BLOCK_OWN) free(b->data), q->st.freed++, q->st.live--;
    free(b);
    return NULL;
  }
  b->dead = 1;
  r->block = b;
  r->host_waits = host_waits;
  r->remaining = 1; /* held until every op is queued */
  for (qqueue *w = q->queues; w; w = w->next) {
    qop *op;
    if (!w->started || w->done == w->enqueued) continue;
    if (!(op = op_new(OP_RETIRE))) { /* wait for that queue instead */
      while (w->done < w->enqueued) pthread_cond_wait(&q->cond, &q->mu);
      continue;
    }
    op->u.retire = r;
    r->remaining++;
    if (enqueue(q, w, op) != DLB_OK) r->remaining--;
  }
  if (--r->remaining == 0) {
    retire_done(q, r);
    if (host_waits) free(r);
    return NULL;
  }
  return r;
}

static void q_deallocate(void *ctx, int dev, void *handle) {
  dlb_queued *q = ctx;
  qblock *b;
  LOCK(q);
  q->st.deallocate++;
  if (!(b = block_of(q, handle)) || b->kind != BLOCK_OWN)
    violation(q, "deallocate of a handle that is not a live allocation");
  else retire_block(q, b, 0);
  UNLOCK(q);
}

static void q_forget(void *ctx, int dev, void *handle) {
  dlb_queued *q = ctx;
  qblock *b;
  retire *r;
  LOCK(q);
  q->st.forget++;
  if (!(b = block_of(q, handle)) || b->kind != BLOCK_ADOPTED) {
    violation(q, "forget of a handle that adopt did not return");
  } else if ((r = retire_block(q, b, 1)) != NULL) {
    q->st.host_blocks++;
    while (r->remaining > 0) pthread_cond_wait(&q->cond, &q->mu);
    free(r);
  }
  UNLOCK(q);
}

/* A byte range of a live handle (locked); NULL, an empty *s and a violation
 * when not. */
static char *range_of(dlb_queued *q, const void *handle, size_t offset, size_t n, span *s) {
  qblock *b = block_of(q, handle);
  if (!b || offset > b->nbytes || n > b->nbytes - offset) {
    violation(q, "a copy hook's range is outside its block");
    *s = (span){NULL, 0, 0};
    return NULL;
  }
  s->block = b;
  s->lo = offset;
  s->hi = offset + n;
  return b->data + offset;
}

static dlb_status q_to_host(void *ctx, int dev, const void *handle, size_t offset, void *dst,
                            size_t n) {
  dlb_queued *q = ctx;
  span s;
  char *p;
  LOCK(q);
  q->st.to_host++;
  if ((p = range_of(q, handle, offset, n, &s)) != NULL) {
    if (pending_touch(q, &s, 1)) q->st.races++;
    memcpy(dst, p, n);
  }
  UNLOCK(q);
  return p ? DLB_OK : DLB_E_BACKEND_FAILURE;
}

static dlb_status q_from_host(void *ctx, int dev, void *handle, size_t offset, const void *src,
                              size_t n) {
  dlb_queued *q = ctx;
  span s;
  char *p;
  LOCK(q);
  q->st.from_host++;
  if ((p = range_of(q, handle, offset, n, &s)) != NULL) {
    if (pending_touch(q, &s, 1) || pending_touch(q, &s, 0)) q->st.races++;
    memcpy(p, src, n);
  }
  UNLOCK(q);
  return p ? DLB_OK : DLB_E_BACKEND_FAILURE;
}

static dlb_status q_within(void *ctx, int dd, void *dh, size_t doff, int sd, const void *sh,
                           size_t soff, size_t n) {
  dlb_queued *q = ctx;
  span a, b;
  char *d, *s;
  LOCK(q);
  q->st.within++;
  d = range_of(q, dh, doff, n, &a);
  s = range_of(q, sh, soff, n, &b);
  if (d && s) {
    if (pending_touch(q, &a, 1) || pending_touch(q, &a, 0) || pending_touch(q, &b, 1))
      q->st.races++;
    memmove(d, s, n);
  }
  UNLOCK(q);
  return d && s ? DLB_OK : DLB_E_BACKEND_FAILURE;
}

static dlb_status q_export(void *ctx, int dev, void *handle, void **data) {
  dlb_queued *q = ctx;
  qblock *b;
  LOCK(q);
  q->st.export_pointer++;
  if ((b = block_of(q, handle)) != NULL) *data = b->data;
  else violation(q, "export of a handle that is not live");
  UNLOCK(q);
  return b ? DLB_OK : DLB_E_BACKEND_FAILURE;
}

static int64_t q_last_status(void *ctx) {
  dlb_queued *q = ctx;
  int64_t s;
  LOCK(q);
  s = q->last_status;
  UNLOCK(q);
  return s;
}

static void q_release(void *ctx) {
  dlb_queued *q = ctx;
  stop_all(q);
  dlb_queued_unref(q);
}

/* ---- version 2: copies, queues, events ----------------------------------------------- */

/* The device queue a hook was handed (locked): NULL with a violation when
 * it is not dev's. */
static qqueue *device_queue(dlb_queued *q, void *queue, int dev) {
  if (dev < 0 || dev >= q->cfg.devices || queue != (void *)q->device[dev]) {
    violation(q, "a queue that is not the device's own");
    return NULL;
  }
  return q->device[dev];
}

/* One side of a strided copy (locked): its base address and byte strides;
 * a block side adds its span. 0, or -1 for a violation. */
static int copy_side(dlb_queued *q, const dlb_strided_copy *c, const dlb_copy_side *side,
                     int64_t *bstr, char **base, span *s, int *empty) {
  size_t lo = 0, hi = 0;
  qblock *b;
  if (byte_strides(c->ndim, side->strides, c->itemsize, bstr) != 0)
    return violation(q, "copy_strided strides overflow");
  *empty = 0;
  s->block = NULL;
  if (!side->handle) {
    *base = side->host;
    return 0;
  }
  if (!(b = block_of(q, side->handle))) return violation(q, "copy_strided of a dead handle");
  if (reach(c->ndim, c->shape, bstr, c->itemsize, side->offset, b->nbytes, &lo, &hi, empty) != 0)
    return violation(q, "copy_strided reaches outside its block");
  *base = b->data + side->offset;
  s->block = b;
  s->lo = lo;
  s->hi = hi;
  return 0;
}

/* Poisons op's destination unless a queued operation (or op itself) still
 * reads those bytes (locked). */
static void poison(dlb_queued *q, qop *op, void (*write)(qop *op)) {
  if (!op->has_dst || pending_touch(q, &op->dst, 0)) return;
  for (int k = 0; k < op->nsrc; k++)
    if (overlaps(&op->src[k], &op->dst)) return;
  write(op);
  q->st.poisoned++;
}

static void poison_copy(qop *op) {
  walk(op->u.copy.ndim, op->u.copy.shape, op->u.copy.d, op->u.copy.dstr, NULL, NULL,
       op->u.copy.item);
}

static dlb_status q_copy_strided(void *ctx, const dlb_strided_copy *c) {
  dlb_queued *q = ctx;
  qop *op = op_new(OP_COPY);
  span ds, ss;
  int de, se, host;
  qqueue *w = NULL;
  dlb_status st = DLB_OK;
  if (!op) return DLB_E_OUT_OF_MEMORY;
  LOCK(q);
  q->st.copy_strided++;
  host = !c->dst.handle || !c->src.handle;
  q->st.strided_host += host;
  q->st.strided_queued += !host;
  if (c->ndim < 0 || c->ndim > DLB_MAX_NDIM || c->itemsize == 0 || c->itemsize > 64 ||
      copy_side(q, c, &c->dst, op->u.copy.dstr, &op->u.copy.d, &ds, &de) != 0 ||
      copy_side(q, c, &c->src, op->u.copy.sstr, (char **)&op->u.copy.s, &ss, &se) != 0 ||
      (c->queue &&
       !(w = device_queue(q, c->queue, c->dst.handle ? c->dst.device_id : c->src.device_id)))) {
    free(op);
    UNLOCK(q);
    return DLB_E_BACKEND_FAILURE;
  }
  op->u.copy.item = c->itemsize;
  op->u.copy.ndim = c->ndim;
  memcpy(op->u.copy.shape, c->shape, (size_t)c->ndim * sizeof c->shape[0]);
  if (ss.block) op->src[op->nsrc++] = ss;
  if (ds.block) op->dst = ds, op->has_dst = 1;
  if (de || se) {
    free(op);
  } else if (!w) {
    run_op(q, NULL, op);
    free(op);
  } else if (host) {
    st = enqueue_and_wait(q, w, op);
  } else {
    poison(q, op, poison_copy);
    st = enqueue(q, w, op);
  }
  UNLOCK(q);
  return st;
}

static void *q_queue(void *ctx, int dev) {
  dlb_queued *q = ctx;
  void *w;
  LOCK(q);
  q->st.queue++;
  w = dev >= 0 && dev < q->cfg.devices ? q->device[dev] : NULL;
  if (!w) violation(q, "queue of a device out of range");
  UNLOCK(q);
  return w;
}

static dlb_status q_event_record(void *ctx, int dev, void *queue, void **event) {
  dlb_queued *q = ctx;
  qevent *ev = malloc(sizeof *ev);
  qqueue *w;
  if (!ev) return DLB_E_OUT_OF_MEMORY;
  LOCK(q);
  q->st.event_record++;
  if (!(w = device_queue(q, queue, dev))) {
    UNLOCK(q);
    free(ev);
    return DLB_E_BACKEND_FAILURE;
  }
  ev->queue = w;
  ev->seq = w->enqueued;
  q->st.events_live++;
  UNLOCK(q);
  *event = ev;
  return DLB_OK;
}

/* Queues on w a wait for the event (locked). */
static dlb_status wait_on(dlb_queued *q, qqueue *w, const qevent *ev) {
  qop *op;
  if (ev->queue == w || ev->queue->done >= ev->seq) return DLB_OK; /* in order, or done */
  if (!(op = op_new(OP_WAIT))) return DLB_E_OUT_OF_MEMORY;
  op->u.wait.target = ev->queue;
  op->u.wait.seq = ev->seq;
  return enqueue(q, w, op);
}

static dlb_status q_event_wait(void *ctx, int dev, void *queue, void *event) {
  dlb_queued *q = ctx;
  qqueue *w;
  dlb_status st = DLB_E_BACKEND_FAILURE;
  LOCK(q);
  q->st.event_wait++;
  if ((w = device_queue(q, queue, dev)) != NULL) st = wait_on(q, w, event);
  UNLOCK(q);
  return st;
}

static dlb_status q_event_synchronize(void *ctx, int dev, void *event) {
  dlb_queued *q = ctx;
  qevent *ev = event;
  dlb_status st;
  LOCK(q);
  q->st.event_synchronize++;
  if (ev->queue->done < ev->seq) q->st.host_blocks++;
  while (ev->queue->done < ev->seq) pthread_cond_wait(&q->cond, &q->mu);
  st = take_sticky(q, ev->queue);
  UNLOCK(q);
  return st;
}

static void q_event_release(void *ctx, int dev, void *event) {
  dlb_queued *q = ctx;
  LOCK(q);
  q->st.event_release++;
  q->st.events_live--;
  UNLOCK(q);
  free(event);
}

/* The consumer queue a stream value names on dev (locked), or NULL. */
static qqueue *stream_queue(dlb_queued *q, int dev, int has_stream, int64_t stream) {
  if (dev < 0 || dev >= q->cfg.devices) return NULL;
  if (!has_stream || stream == 1 || stream == 2) return q->consumer[dev];
  if (stream <= 2) return NULL;
  for (qqueue *w = q->queues; w; w = w->next)
    if (w->consumer && w->device == dev && (int64_t)(intptr_t)w == stream) return w;
  return NULL;
}

static dlb_status q_stream_wait(void *ctx, int dev, int has_stream, int64_t stream, void *event) {
  dlb_queued *q = ctx;
  qqueue *w;
  dlb_status st = DLB_OK;
  LOCK(q);
  q->st.stream_wait++;
  if (!(w = stream_queue(q, dev, has_stream, stream))) st = DLB_E_ARGUMENT;
  else if (event) st = wait_on(q, w, event);
  UNLOCK(q);
  return st;
}

static dlb_status q_adopt(void *ctx, int dev, void *data, uint64_t first, uint64_t end,
                          void **handle) {
  dlb_queued *q = ctx;
  uintptr_t lo = (uintptr_t)data + (uintptr_t)first, hi = (uintptr_t)data + (uintptr_t)end;
  qblock *region, *b = calloc(1, sizeof *b);
  dlb_status st = DLB_OK;
  if (!b) return DLB_E_OUT_OF_MEMORY;
  LOCK(q);
  q->st.adopt++;
  region = dev >= 0 && dev < q->cfg.devices && hi >= lo ? block_holding(q, lo, hi - lo, 1) : NULL;
  if (dev < 0 || dev >= q->cfg.devices) {
    st = DLB_E_DEVICE_UNAVAILABLE;
  } else if (!region || region->device != dev) {
    st = DLB_E_DLPACK_INVALID;
  } else {
    b->data = (char *)lo;
    b->nbytes = hi - lo;
    b->device = dev;
    b->kind = BLOCK_ADOPTED;
    b->next = q->blocks;
    q->blocks = b;
    *handle = b;
  }
  if (st != DLB_OK) {
    q->st.adopt_refused++;
    free(b);
  }
  UNLOCK(q);
  return st;
}

/* ---- kernels ------------------------------------------------------------------------ */

static size_t dl_itemsize(DLDataType t) { return ((size_t)t.bits * t.lanes + 7) / 8; }

/* Copies t's geometry into slot k of op, checks its range in its block and
 * points it at host memory; the span goes to op's sources or destination
 * (locked). 0, or -1 for a violation. */
static int take_tensor(dlb_queued *q, qop *op, int k, dlb_tensor *t, int dev, int is_dst) {
  int64_t bstr[DLB_MAX_NDIM];
  size_t item = dl_itemsize(t->dtype), lo = 0, hi = 0;
  int empty;
  qblock *b = block_of(q, t->handle);
  if (t->ndim < 0 || t->ndim > DLB_MAX_NDIM) return violation(q, "a kernel tensor's ndim");
  if (!b || t->device_id != dev || b->device != dev)
    return violation(q, "a kernel tensor is not live memory of the device");
  memcpy(op->u.kernel.shape[k], t->shape, (size_t)t->ndim * sizeof t->shape[0]);
  memcpy(op->u.kernel.strides[k], t->strides, (size_t)t->ndim * sizeof t->strides[0]);
  t->shape = op->u.kernel.shape[k];
  t->strides = op->u.kernel.strides[k];
  if (byte_strides(t->ndim, t->strides, item, bstr) != 0 ||
      reach(t->ndim, t->shape, bstr, item, t->offset, b->nbytes, &lo, &hi, &empty) != 0)
    return violation(q, "a kernel tensor reaches outside its block");
  t->data = b->data + t->offset;
  if (empty) return 0;
  if (is_dst) {
    op->dst = (span){b, lo, hi};
    op->has_dst = 1;
  } else if (op->nsrc < 4) {
    op->src[op->nsrc++] = (span){b, lo, hi};
  }
  return 0;
}

/* The kernel's destination tensor in op. */
static dlb_tensor *kernel_dst(qop *op) {
  switch (op->u.kernel.which) {
    case K_ELEMENTWISE: return &op->u.kernel.u.ew.out;
    case K_REDUCE: return &op->u.kernel.u.red.out;
    case K_MATMUL: return &op->u.kernel.u.mm.out;
    default: return &op->u.kernel.u.cf.dst;
  }
}

static void poison_kernel(qop *op) {
  dlb_tensor *t = kernel_dst(op);
  int64_t bstr[DLB_MAX_NDIM];
  size_t item = dl_itemsize(t->dtype);
  if (byte_strides(t->ndim, t->strides, item, bstr) == 0)
    walk(t->ndim, t->shape, t->data, bstr, NULL, NULL, item);
}

/* Queues a kernel op whose tensors are taken (locked; ok 0 or a violation):
 * its status now (queued: DLB_OK). host_out: its output is host memory, so
 * the host waits for it and gets the kernel's own status and error. */
static dlb_status submit_kernel(dlb_queued *q, qop *op, int ok, void *queue, int dev, int host_out,
                                dlb_kernel_error *error) {
  qqueue *w = NULL;
  dlb_status st;
  if (ok != 0 || (queue && !(w = device_queue(q, queue, dev)))) {
    free(op);
    return DLB_E_BACKEND_FAILURE;
  }
  if (!w || host_out) {
    if (!w) {
      run_op(q, NULL, op);
      st = op->status;
    } else {
      op->host_owned = 1;
      if ((st = enqueue(q, w, op)) != DLB_OK) return st;
      q->st.host_blocks++;
      while (!op->finished) pthread_cond_wait(&q->cond, &q->mu);
      st = op->status;
    }
    if (st != DLB_OK)
      *error = op->u.kernel.which == K_REDUCE ? op->u.kernel.u.red.error : op->u.kernel.error;
    free(op);
    return st;
  }
  poison(q, op, poison_kernel);
  return enqueue(q, w, op);
}

static dlb_status q_elementwise(void *ctx, dlb_elementwise_call *call) {
  dlb_queued *q = ctx;
  qop *op = op_new(OP_KERNEL);
  dlb_elementwise_call *c;
  int dev = call->out.device_id, ok;
  dlb_status st;
  if (!op) return DLB_E_OUT_OF_MEMORY;
  op->u.kernel.which = K_ELEMENTWISE;
  c = &op->u.kernel.u.ew;
  *c = *call;
  LOCK(q);
  q->st.elementwise++;
  ok = c->nin < 1 || c->nin > 3 ? violation(q, "an element-wise call's nin")
                                : take_tensor(q, op, 0, &c->out, dev, 1);
  for (int k = 0; ok == 0 && k < c->nin; k++)
    if (!c->is_scalar[k]) ok = take_tensor(q, op, k + 1, &c->in[k], dev, 0);
  st = submit_kernel(q, op, ok, call->queue, dev, 0, &call->error);
  UNLOCK(q);
  return st;
}

static dlb_status q_reduce(void *ctx, dlb_reduce_call *call) {
  dlb_queued *q = ctx;
  qop *op = op_new(OP_KERNEL);
  dlb_reduce_call *c;
  int dev = call->in.device_id, ok, host_out = call->out.handle == NULL;
  dlb_status st;
  if (!op) return DLB_E_OUT_OF_MEMORY;
  op->u.kernel.which = K_REDUCE;
  c = &op->u.kernel.u.red;
  *c = *call;
  LOCK(q);
  q->st.reduce++;
  ok = take_tensor(q, op, 1, &c->in, dev, 0);
  if (ok == 0 && !host_out) ok = take_tensor(q, op, 0, &c->out, dev, 1);
  if (ok == 0 && host_out) { /* one element in host memory, of the input's ndim */
    memcpy(op->u.kernel.shape[0], c->out.shape, (size_t)c->out.ndim * sizeof(int64_t));
    memcpy(op->u.kernel.strides[0], c->out.strides, (size_t)c->out.ndim * sizeof(int64_t));
    c->out.shape = op->u.kernel.shape[0];
    c->out.strides = op->u.kernel.strides[0];
  }
  st = submit_kernel(q, op, ok, call->queue, dev, host_out, &call->error);
  UNLOCK(q);
  return st;
}

static dlb_status q_matmul(void *ctx, dlb_matmul_call *call) {
  dlb_queued *q = ctx;
  qop *op = op_new(OP_KERNEL);
  dlb_matmul_call *c;
  int dev = call->out.device_id, ok;
  dlb_status st;
  if (!op) return DLB_E_OUT_OF_MEMORY;
  op->u.kernel.which = K_MATMUL;
  c = &op->u.kernel.u.mm;
  *c = *call;
  LOCK(q);
  q->st.matmul++;
  ok = take_tensor(q, op, 0, &c->out, dev, 1);
  if (ok == 0) ok = take_tensor(q, op, 1, &c->a, dev, 0);
  if (ok == 0) ok = take_tensor(q, op, 2, &c->b, dev, 0);
  st = submit_kernel(q, op, ok, call->queue, dev, 0, &call->error);
  UNLOCK(q);
  return st;
}

static dlb_status q_cast(void *ctx, const dlb_tensor *dst, const dlb_tensor *src, void *queue,
                         dlb_kernel_error *error) {
  dlb_queued *q = ctx;
  qop *op = op_new(OP_KERNEL);
  int ok;
  dlb_status st;
  if (!op) return DLB_E_OUT_OF_MEMORY;
  op->u.kernel.which = K_CAST;
  op->u.kernel.u.cf.dst = *dst;
  op->u.kernel.u.cf.src = *src;
  LOCK(q);
  q->st.cast++;
  ok = take_tensor(q, op, 0, &op->u.kernel.u.cf.dst, dst->device_id, 1);
  if (ok == 0) ok = take_tensor(q, op, 1, &op->u.kernel.u.cf.src, dst->device_id, 0);
  st = submit_kernel(q, op, ok, queue, dst->device_id, 0, error);
  UNLOCK(q);
  return st;
}

static dlb_status q_fill(void *ctx, const dlb_tensor *dst, const void *value, void *queue,
                         dlb_kernel_error *error) {
  dlb_queued *q = ctx;
  qop *op = op_new(OP_KERNEL);
  size_t item = dl_itemsize(dst->dtype);
  int ok;
  dlb_status st;
  if (!op) return DLB_E_OUT_OF_MEMORY;
  op->u.kernel.which = K_FILL;
  op->u.kernel.u.cf.dst = *dst;
  memcpy(op->u.kernel.u.cf.value, value, item < 16 ? item : 16);
  LOCK(q);
  q->st.fill++;
  ok = item > 16 ? violation(q, "a fill value wider than 16 bytes")
                 : take_tensor(q, op, 0, &op->u.kernel.u.cf.dst, dst->device_id, 1);
  st = submit_kernel(q, op, ok, queue, dst->device_id, 0, error);
  UNLOCK(q);
  return st;
}

/* Runs a kernel op with the host's kernels (locked). */
static dlb_status run_kernel(dlb_queued *q, qop *op) {
  const dlb_kernels *h = q->cfg.host;
  switch (op->u.kernel.which) {
    case K_ELEMENTWISE:
      op->u.kernel.u.ew.queue = NULL;
      return h->elementwise(NULL, &op->u.kernel.u.ew);
    case K_REDUCE: op->u.kernel.u.red.queue = NULL; return h->reduce(NULL, &op->u.kernel.u.red);
    case K_MATMUL: op->u.kernel.u.mm.queue = NULL; return h->matmul(NULL, &op->u.kernel.u.mm);
    case K_CAST:
      return h->cast(NULL, &op->u.kernel.u.cf.dst, &op->u.kernel.u.cf.src, NULL,
                     &op->u.kernel.error);
    default:
      return h->fill(NULL, &op->u.kernel.u.cf.dst, op->u.kernel.u.cf.value, NULL,
                     &op->u.kernel.error);
  }
}

/* Runs op (locked); w NULL: on the calling thread, not queued. */
static void run_op(dlb_queued *q, qqueue *w, qop *op) {
  op->status = DLB_OK;
  switch (op->kind) {
    case OP_COPY:
      walk(op->u.copy.ndim, op->u.copy.shape, op->u.copy.d, op->u.copy.dstr, op->u.copy.s,
           op->u.copy.sstr, op->u.copy.item);
      break;
    case OP_KERNEL:
      op->status = run_kernel(q, op);
      if (w) q->st.ran_on_worker++;
      if (op->status != DLB_OK) {
        q->st.kernel_failures++;
        if (w && !op->host_owned && w->sticky == DLB_OK) w->sticky = op->status;
      }
      break;
    case OP_WAIT:
      q->st.waits_run++;
      while (op->u.wait.target->done < op->u.wait.seq) pthread_cond_wait(&q->cond, &q->mu);
      break;
    case OP_RETIRE:
      if (--op->u.retire->remaining == 0) retire_done(q, op->u.retire);
      pthread_cond_broadcast(&q->cond);
      break;
    default: memcpy(op->u.read.dst, op->u.read.src, op->u.read.n); break;
  }
}

/* ---- the test's side ------------------------------------------------------------------ */

dlb_queued *dlb_queued_new(const dlb_queued_config *config) {
  dlb_queued *q = calloc(1, sizeof *q);
  if (!q) return NULL;
  q->cfg = *config;
  if (q->cfg.devices < 1 || q->cfg.devices > DLB_QUEUED_MAX_DEVICES) q->cfg.devices = 1;
  if (!q->cfg.device_type) q->cfg.device_type = kDLExtDev;
  snprintf(q->name, sizeof q->name, "%s", config->name ? config->name : "queued");
  q->cfg.name = q->name;
  atomic_init(&q->refs, 1);
  pthread_mutex_init(&q->mu, NULL);
  pthread_cond_init(&q->cond, NULL);
  q->kernels.version = DLB_KERNELS_VERSION;
  if (!(q->cfg.omit & DLB_QUEUED_NO_ELEMENTWISE)) q->kernels.elementwise = q_elementwise;
  if (!(q->cfg.omit & DLB_QUEUED_NO_REDUCE)) q->kernels.reduce = q_reduce;
  if (!(q->cfg.omit & DLB_QUEUED_NO_MATMUL)) q->kernels.matmul = q_matmul;
  if (!(q->cfg.omit & DLB_QUEUED_NO_CAST)) q->kernels.cast = q_cast;
  if (!(q->cfg.omit & DLB_QUEUED_NO_FILL)) q->kernels.fill = q_fill;
  for (int d = 0; d < q->cfg.devices; d++)
    if (!(q->device[d] = queue_new(q, d, 0)) || !(q->consumer[d] = queue_new(q, d, 1))) {
      dlb_queued_unref(q);
      return NULL;
    }
  return q;
}

void dlb_queued_retain(dlb_queued *q) { atomic_fetch_add(&q->refs, 1); }

void dlb_queued_unref(dlb_queued *q) {
  if (!q || atomic_fetch_sub(&q->refs, 1) != 1) return;
  stop_all(q);
  while (q->queues) {
    qqueue *w = q->queues;
    q->queues = w->next;
    free(w);
  }
  while (q->blocks) {
    qblock *b = q->blocks;
    q->blocks = b->next;
    if (b->kind != BLOCK_ADOPTED) free(b->data);
    free(b);
  }
  pthread_cond_destroy(&q->cond);
  pthread_mutex_destroy(&q->mu);
  free(q);
}

void dlb_queued_ops(dlb_queued *q, dlb_backend_ops *ops) {
  unsigned omit = q->cfg.omit;
  memset(ops, 0, sizeof *ops);
  ops->version = DLB_BACKEND_OPS_VERSION_2;
  ops->name = q->name;
  ops->device_type = q->cfg.device_type;
  ops->device_count = q_device_count;
  ops->allocate = q_allocate;
  ops->deallocate = q_deallocate;
  ops->copy_to_host = q_to_host;
  ops->copy_from_host = q_from_host;
  ops->copy_within = q_within;
  ops->export_pointer = omit & DLB_QUEUED_NO_EXPORT ? NULL : q_export;
  ops->last_status = q_last_status;
  ops->release = q_release;
  ops->copy_strided = omit & DLB_QUEUED_NO_COPY_STRIDED ? NULL : q_copy_strided;
  ops->queue = q_queue;
  ops->event_record = q_event_record;
  ops->event_wait = q_event_wait;
  ops->event_synchronize = q_event_synchronize;
  ops->event_release = q_event_release;
  ops->stream_wait = q_stream_wait;
  ops->adopt = omit & DLB_QUEUED_NO_ADOPT ? NULL : q_adopt;
  ops->forget = omit & DLB_QUEUED_NO_ADOPT ? NULL : q_forget;
  ops->kernels = q->cfg.host ? &q->kernels : NULL;
}

void dlb_queued_stats_get(dlb_queued *q, dlb_queued_stats *out) {
  LOCK(q);
  *out = q->st;
  UNLOCK(q);
}

void *dlb_queued_device_queue(dlb_queued *q, int dev) {
  return dev >= 0 && dev < q->cfg.devices ? q->device[dev] : NULL;
}

int64_t dlb_queued_consumer(dlb_queued *q, int dev) {
  qqueue *w;
  if (dev < 0 || dev >= q->cfg.devices) return 0;
  LOCK(q);
  w = queue_new(q, dev, 1);
  UNLOCK(q);
  return w ? (int64_t)(intptr_t)w : 0;
}

void *dlb_queued_stream_queue(dlb_queued *q, int dev, int64_t stream) {
  qqueue *w;
  LOCK(q);
  w = stream_queue(q, dev, 1, stream);
  UNLOCK(q);
  return w;
}

void dlb_queued_pause(dlb_queued *q, void *queue, int paused) {
  LOCK(q);
  if (is_queue(q, queue)) ((qqueue *)queue)->paused = paused;
  pthread_cond_broadcast(&q->cond);
  UNLOCK(q);
}

long dlb_queued_pending(dlb_queued *q, void *queue) {
  long n = 0;
  LOCK(q);
  if (is_queue(q, queue)) n = (long)(((qqueue *)queue)->enqueued - ((qqueue *)queue)->done);
  UNLOCK(q);
  return n;
}

void dlb_queued_sync(dlb_queued *q, void *queue) {
  LOCK(q);
  if (is_queue(q, queue)) {
    qqueue *w = queue;
    uint64_t target = w->enqueued;
    while (w->done < target) pthread_cond_wait(&q->cond, &q->mu);
  }
  UNLOCK(q);
}

int dlb_queued_consumer_read(dlb_queued *q, void *queue, const void *src, size_t nbytes,
                             void *dst) {
  qop *op = op_new(OP_READ);
  qblock *b;
  int rc = -1;
  if (!op) return -1;
  LOCK(q);
  if (is_queue(q, queue) && (b = block_holding(q, (uintptr_t)src, nbytes, 0)) != NULL) {
    op->u.read.src = src;
    op->u.read.dst = dst;
    op->u.read.n = nbytes;
    op->src[0] = (span){b, (size_t)((const char *)src - b->data),
                        (size_t)((const char *)src - b->data) + nbytes};
    op->nsrc = 1;
    rc = enqueue(q, queue, op) == DLB_OK ? 0 : -1;
    op = NULL;
  }
  UNLOCK(q);
  free(op);
  return rc;
}

static int host_access(dlb_queued *q, const void *device, void *host, size_t n, int writing) {
  int rc = -1;
  LOCK(q);
  if (block_holding(q, (uintptr_t)device, n, 0)) {
    if (writing) memcpy((void *)device, host, n);
    else memcpy(host, device, n);
    rc = 0;
  }
  UNLOCK(q);
  return rc;
}

int dlb_queued_peek(dlb_queued *q, const void *src, size_t nbytes, void *dst) {
  return host_access(q, src, dst, nbytes, 0);
}

int dlb_queued_poke(dlb_queued *q, void *dst, const void *src, size_t nbytes) {
  return host_access(q, dst, (void *)src, nbytes, 1);
}

void *dlb_queued_foreign(dlb_queued *q, int dev, size_t nbytes) {
  qblock *b = calloc(1, sizeof *b);
  char *p = calloc(1, nbytes ? nbytes : 1);
  if (!b || !p) {
    free(b);
    free(p);
    return NULL;
  }
  b->data = p;
  b->nbytes = nbytes;
  b->device = dev;
  b->kind = BLOCK_FOREIGN;
  LOCK(q);
  b->next = q->blocks;
  q->blocks = b;
  UNLOCK(q);
  return p;
}
