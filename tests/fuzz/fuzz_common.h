/* fuzz_common.h -- what the libFuzzer harnesses share: reading the fuzz
 * bytes, a lua_State whose heap is capped (and can be made to fail), and
 * reporting a broken invariant as a crash. */
#ifndef DLB_FUZZ_COMMON_H
#define DLB_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <lua.h>

/* libFuzzer's entry points (defined by each harness). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- the fuzz bytes ------------------------------------------------------ */

/* A cursor over the input; reads past the end give zeros. */
typedef struct fuzz_bytes {
  const uint8_t *p;
  size_t n;
} fuzz_bytes;

static inline uint8_t fb_u8(fuzz_bytes *b) {
  if (!b->n) return 0;
  b->n--;
  return *b->p++;
}

static inline uint16_t fb_u16(fuzz_bytes *b) {
  uint16_t lo = fb_u8(b);
  return (uint16_t)(lo | (uint16_t)fb_u8(b) << 8);
}

static inline uint32_t fb_u32(fuzz_bytes *b) {
  uint32_t lo = fb_u16(b);
  return lo | (uint32_t)fb_u16(b) << 16;
}

static inline uint64_t fb_u64(fuzz_bytes *b) {
  uint64_t lo = fb_u32(b);
  return lo | (uint64_t)fb_u32(b) << 32;
}

/* ---- a lua_State with a capped heap ---------------------------------------- */

/* The Lua heap of one state: at most cap bytes; with countdown >= 0, the
 * countdown-th growing allocation from now fails, and so do the `count` - 1
 * growing allocations after it (count < 0: all of them, until
 * fuzz_heap_reset). Lua retries a failed allocation once after an emergency
 * collection: count 1 only forces that collection, count 2 makes one
 * allocation fail, a negative count kills the heap. Shrinking never fails. */
typedef struct fuzz_heap {
  size_t used, cap;
  long countdown;
  long count;        /* failures left once the countdown reached 0 */
  int failing;       /* the countdown reached 0 */
  unsigned injected; /* allocations refused by the countdown */
} fuzz_heap;

#define FUZZ_LUA_HEAP_CAP ((size_t)64 << 20)

/* Arms the countdown: from the n-th growing allocation from now (n >= 0),
 * count allocations fail (count < 0: every one). */
void fuzz_heap_fail_after(fuzz_heap *h, long n, long count);
/* Disarms it. */
void fuzz_heap_reset(fuzz_heap *h);

/* A new state (heap h, capped at FUZZ_LUA_HEAP_CAP) with the standard
 * libraries, dlbridge preloaded (dlb_preload) and required as the global
 * `dl`. A panic (an error outside any protected call) aborts: it is a bug
 * of the harness or of dlbridge. NULL only when Lua itself cannot start. */
lua_State *fuzz_new_state(fuzz_heap *h);

/* Whether the value at idx is a dlbridge.Error. */
int fuzz_is_dlb_error(lua_State *L, int idx);

/* A broken invariant: prints what and aborts (libFuzzer saves the input). */
void fuzz_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* FUZZ_VERBOSE=1 in the environment: the harness prints what it does. */
int fuzz_verbose(void);

#endif
