/* queued.h -- a test backend that behaves like a device (backend ops
 * version 2), for the C tests, the specs (tests/backend/testbackend.c) and
 * the fuzzers.
 *
 * Memory is malloc'd blocks (a handle is a block; no host_pointer: the core
 * reaches it only through the hooks). Each device has one queue, run by a
 * worker thread of its own, first in first out, each operation after a
 * random delay of 0..max_delay_us microseconds (seeded). Queued copies and
 * kernels write POISON bytes into every destination element when they are
 * queued and the real bytes when they run, so that a missing wait reads
 * poison rather than stale bytes that happen to be right. (The poison is
 * left out where a queued operation still reads those bytes: that would
 * break a correctly ordered program.)
 *
 * Events are a queue and a sequence number (the operations queued so far).
 * event_wait queues "wait until that queue has run that many" (the host
 * never blocks); event_synchronize blocks the host. Consumer queues stand
 * in for a DLPack consumer's streams: stream 1 and 2 (and no stream) are
 * the device's default consumer queue, a value above 2 is a queue made by
 * dlb_queued_consumer, 0 and anything else is refused (ARGUMENT).
 * copy_strided between host memory and a block runs on the device queue
 * and returns when it has run (dlbridge.h: a copy that touches host memory
 * is complete when it returns); between blocks it is queued. deallocate
 * queues the free behind every queue's work (no host block); forget waits
 * for every queue's work before it returns (the producer frees right
 * after). adopt accepts only memory registered with dlb_queued_foreign.
 *
 * The backend checks the core as it goes: every hook validates its handles
 * and byte ranges, and a host-side copy (the version 1 hooks) of bytes a
 * queued operation still writes counts as a race. Kernels run the host's
 * kernels (the config's table) on the worker thread, in queue order; a
 * kernel that fails there leaves its destination poisoned and makes the
 * next event_synchronize of that device return BACKEND_FAILURE (CUDA's
 * sticky asynchronous errors, once).
 *
 * Threads: every function may be called from any thread; one mutex guards
 * all state and every byte of device memory (TSan sees no race).
 */
#ifndef DLB_TESTS_DEVICE_QUEUED_H
#define DLB_TESTS_DEVICE_QUEUED_H

#include <stddef.h>
#include <stdint.h>
#include "dlbridge.h"

#define DLB_QUEUED_POISON 0xA5  /* what a queued destination holds until the work runs */
#define DLB_QUEUED_GARBAGE 0xCD /* what a non-zeroed allocation holds */
#define DLB_QUEUED_MAX_DEVICES 8

/* Hooks and kernel entries a configuration leaves out (dlb_queued_config.omit). */
enum {
  DLB_QUEUED_NO_COPY_STRIDED = 1 << 0,
  DLB_QUEUED_NO_ELEMENTWISE = 1 << 1,
  DLB_QUEUED_NO_REDUCE = 1 << 2,
  DLB_QUEUED_NO_MATMUL = 1 << 3,
  DLB_QUEUED_NO_CAST = 1 << 4,
  DLB_QUEUED_NO_FILL = 1 << 5,
  DLB_QUEUED_NO_ADOPT = 1 << 6,
  DLB_QUEUED_NO_EXPORT = 1 << 7
};

typedef struct dlb_queued_config {
  const char *name;        /* the backend's name (copied) */
  int devices;             /* 1..DLB_QUEUED_MAX_DEVICES */
  int32_t device_type;     /* DLPack device type; 0: kDLExtDev */
  unsigned max_delay_us;   /* each queued operation waits 0..this before it runs */
  uint64_t seed;           /* of the delays */
  const dlb_kernels *host; /* the kernels the workers run on host addresses; NULL: no kernels */
  unsigned omit;           /* DLB_QUEUED_NO_* bits */
} dlb_queued_config;

typedef struct dlb_queued dlb_queued;

/* Calls per hook and what the queues did; read with dlb_queued_stats_get. */
typedef struct dlb_queued_stats {
  long allocate, deallocate, freed, live; /* live: own blocks not yet freed */
  long to_host, from_host, within, export_pointer;
  long copy_strided, strided_host, strided_queued; /* copy_strided calls, by kind */
  long queue, event_record, event_wait, event_synchronize, event_release, stream_wait;
  long adopt, adopt_refused, forget;
  long elementwise, reduce, matmul, cast, fill; /* kernel entry calls */
  long ran_on_worker;                           /* kernels run by a worker thread */
  long ops_run, waits_run, poisoned;            /* operations run, waits run, poisoned enqueues */
  long host_blocks;                             /* hooks that made the host wait for a queue */
  long kernel_failures;                         /* kernels that failed on a worker */
  long violations;                              /* bad handle, range or queue (a core bug) */
  long races;                                   /* host copies of bytes queued work still writes */
  long events_live;                             /* recorded less released */
} dlb_queued_stats;

/* A new backend context with one reference (NULL when out of memory).
 * Threads start on first use. */
dlb_queued *dlb_queued_new(const dlb_queued_config *config);
void dlb_queued_retain(dlb_queued *q);
/* Drops a reference; the last joins the threads and frees everything. */
void dlb_queued_unref(dlb_queued *q);

/* The version 2 vtable (ctx q). Its release stops and joins the threads
 * (after their work) and drops one reference: retain once per registration. */
void dlb_queued_ops(dlb_queued *q, dlb_backend_ops *ops);

void dlb_queued_stats_get(dlb_queued *q, dlb_queued_stats *out);

/* The queue of device dev (what ops.queue returns), or NULL. */
void *dlb_queued_device_queue(dlb_queued *q, int dev);
/* A new consumer queue on dev: its stream value (> 2), or 0 on failure. */
int64_t dlb_queued_consumer(dlb_queued *q, int dev);
/* The queue a stream value names on dev (1, 2: the default consumer queue), or NULL. */
void *dlb_queued_stream_queue(dlb_queued *q, int dev, int64_t stream);

/* A paused queue runs nothing until resumed (the host never waits on one
 * in the tests that pause). */
void dlb_queued_pause(dlb_queued *q, void *queue, int paused);
/* Operations queued on queue and not yet run. */
long dlb_queued_pending(dlb_queued *q, void *queue);
/* Blocks until queue has run everything queued on it so far. */
void dlb_queued_sync(dlb_queued *q, void *queue);

/* A consumer's read on its queue: nbytes at device address src (inside a
 * block, an adopted range or foreign memory) into host memory dst, when the
 * queue gets there. 0, or -1 for a bad queue or range. */
int dlb_queued_consumer_read(dlb_queued *q, void *queue, const void *src, size_t nbytes, void *dst);
/* The same read, by the host, now (no queue, no wait). */
int dlb_queued_peek(dlb_queued *q, const void *src, size_t nbytes, void *dst);
/* The same as a write by the host, now. */
int dlb_queued_poke(dlb_queued *q, void *dst, const void *src, size_t nbytes);

/* nbytes of "foreign" device memory of dev (zeroed), which adopt accepts;
 * freed with q. NULL when out of memory. */
void *dlb_queued_foreign(dlb_queued *q, int dev, size_t nbytes);

#endif
