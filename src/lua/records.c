/* records.c -- where an Array keeps its geometry: records outside its userdata.
 *
 * A dlb_array is 552 bytes (32 dimensions of shape and strides); an Array's
 * userdata holds only its tag and a pointer to one (16 bytes). The records
 * come from the state's Lua allocator (lua_getallocf, as LPeg allocates its
 * patterns), so a host's capped allocator counts them as it counted the
 * 576-byte userdata they replace, and go back to a short LIFO pool when the
 * collector finalizes their Array.
 *
 * Why: Lua frees dead objects in batches as it sweeps, and glibc's free of
 * 600-byte blocks in a batch passes its 7-entry per-size cache into the
 * bins it sorts (some 20-30 ns an array; measured with a larger cache,
 * GLIBC_TUNABLES=glibc.malloc.tcache_count=1000). A 16-byte userdata is
 * freed on glibc's fast path, and a pooled record is not freed at all.
 *
 * The collector still works in proportion to them: pacing.c counts the
 * records out (held by Arrays, live or garbage) as dlbridge's bytes, as it
 * counts buffers, so a loop making arrays steps the collector as a
 * 576-byte userdata made it step, and garbage records stay under the same
 * bound as garbage buffers.
 *
 * A finalized Array points at its state's dead record (no buffer, 0-d), so
 * an Array that Lua code keeps alive after its finalizer (resurrected by
 * another object's finalizer) reads as deleted. lua_close ends the pool
 * (dlbL_records_close); a record given back after that is freed at once.
 *
 * The rule this makes: a dlb_array pointer the binding fetched from an
 * Array (dlbL_to_array and the checks built on it) is good until the next
 * call that can step the collector (an allocation, a string pushed, a
 * collection, a Lua call), which can run the finalizer of an Array that
 * Lua code resurrected and gave back to the call; after one, the call
 * fetches the Array from its stack slot again (it then reads as deleted).
 * Under AddressSanitizer records move to check that rule: each record
 * fetched (the last WATCHED of them) moves to a new address at every
 * allocation of the state's Lua allocator (wrapped) and before every
 * collection dlbridge asks for, and the old address is freed (or, the
 * block from the Lua allocator, poisoned), so a pointer kept across one is
 * a use after free AddressSanitizer reports, in the specs, the C tests and
 * the fuzzers, without a finalizer having to run at that moment. Arrays
 * the call pushed itself are fetched with dlbL_to_pinned: not watched. */
#include <stddef.h>
#include <string.h>
#include "../core/invariant.h"
#include "internal.h"

/* Free records a state keeps for its next Arrays (140 KiB); none under
 * AddressSanitizer, as backends keep no blocks (backend.h), so that a stale
 * record is a use after free it reports. */
#if DLB_KEEPS_BLOCKS
#define POOL_MAX 256
#else
#define POOL_MAX 0
#endif

static void free_record(lua_State *L, dlbL_record *r) {
  void *ud;
  lua_Alloc alloc = lua_getallocf(L, &ud);
  alloc(ud, r, sizeof *r, 0);
}

/* A released 0-d array, as a new Array starts: no buffer, no elements. */
static void clear(dlb_array *a) {
  a->buffer = NULL;
  a->ndim = 0;
  a->numel = 0;
}

/* Cleared again each time: whatever Lua code did to a finalized Array through it. */
dlb_array *dlbL_records_dead(dlb_lua_state *state) {
  clear(&state->dead.array);
  return &state->dead.array;
}

dlb_array *dlbL_record_take(lua_State *L, dlb_lua_state *state) {
  dlbL_record *r = state->free_records;
  if (r) {
    state->free_records = r->next_free;
    state->free_count--;
  } else {
    void *ud;
    lua_Alloc alloc = lua_getallocf(L, &ud);
    if (!(r = alloc(ud, NULL, 0, sizeof *r))) return NULL;
    r->owner = state;
    r->block = r;
  }
  DLB_ASSERT(r->owner == state);
  state->records_out++;
  clear(&r->array);
  return &r->array;
}

/* --- where records move (DLB_MOVES_RECORDS) ---
 *
 * The host's allocator sees what it would see without the moves (tests
 * count and fail its calls): a record's block from it stays where it is,
 * poisoned while the record lives elsewhere, and the moved copies come
 * from malloc. */

#if DLB_MOVES_RECORDS
#include <sanitizer/asan_interface.h>
#include <stdlib.h>

#define WATCHED 32

typedef struct mover {
  lua_Alloc alloc; /* the state's own allocator, wrapped */
  void *ud;
  size_t *epoch; /* the state's records_epoch */
  dlbL_record *watched[WATCHED];
  unsigned next; /* the slot the next record watched takes */
} mover;

static void *moving_alloc(void *ud, void *p, size_t osize, size_t nsize);

/* The state's mover, or NULL where records stay put. */
static mover *mover_of(lua_State *L) {
  void *ud;
  if (lua_getallocf(L, &ud) != moving_alloc) return NULL;
  return ud;
}

/* Leaves r's address for good: the copy elsewhere is the record now. */
static dlbL_record *move(dlbL_record *r) {
  dlbL_record *moved = malloc(sizeof *r);
  if (!moved) return r;
  memcpy(moved, r, sizeof *r);
  *moved->home = &moved->array;
  if (r == r->block) ASAN_POISON_MEMORY_REGION(r, sizeof *r);
  else free(r);
  return moved;
}

/* The record back in its block from the host, for the pool or the host. */
static dlbL_record *move_home(dlbL_record *r) {
  dlbL_record *block = r->block;
  if (r == block) return r;
  ASAN_UNPOISON_MEMORY_REGION(block, sizeof *block);
  memcpy(block, r, sizeof *r);
  free(r);
  return block;
}

static void move_watched(mover *m) {
  ++*m->epoch;
  for (int i = 0; i < WATCHED; i++)
    if (m->watched[i]) m->watched[i] = move(m->watched[i]);
}

static void *moving_alloc(void *ud, void *p, size_t osize, size_t nsize) {
  mover *m = ud;
  if (nsize) move_watched(m);
  return m->alloc(m->ud, p, osize, nsize);
}

void dlbL_record_watch(lua_State *L, dlb_array *a) {
  dlbL_record *r = (dlbL_record *)a;
  mover *m;
  if (!r->owner || !(m = mover_of(L))) return; /* the dead record stays */
  for (int i = 0; i < WATCHED; i++)
    if (m->watched[i] == r) return;
  m->watched[m->next] = r;
  m->next = (m->next + 1) % WATCHED;
}

void dlbL_records_move(lua_State *L) {
  mover *m = mover_of(L);
  if (m) move_watched(m);
}

/* A record given back is watched no more, and goes home. */
static dlbL_record *unwatch(lua_State *L, dlbL_record *r) {
  mover *m = mover_of(L);
  if (m)
    for (int i = 0; i < WATCHED; i++)
      if (m->watched[i] == r) m->watched[i] = NULL;
  return move_home(r);
}

/* Wraps the state's allocator (one mover a lua_State: a reloaded dlbridge
 * shares the first one's). */
static void start_moving(lua_State *L, dlb_lua_state *state) {
  void *ud;
  lua_Alloc alloc = lua_getallocf(L, &ud);
  mover *m;
  if (alloc == moving_alloc || !(m = malloc(sizeof *m))) return;
  memset(m, 0, sizeof *m);
  m->alloc = alloc;
  m->ud = ud;
  m->epoch = &state->records_epoch;
  lua_setallocf(L, moving_alloc, m);
  if (lua_getallocf(L, &ud) != moving_alloc) { /* a Lua that ignores lua_setallocf */
    free(m);
    return;
  }
  state->mover = m;
}

/* lua_close: the state's own allocator back, for what Lua frees last;
 * records still out stay where they are from now on. */
static void stop_moving(lua_State *L, dlb_lua_state *state) {
  mover *m = state->mover;
  void *ud;
  if (!m) return;
  state->mover = NULL;
  if (lua_getallocf(L, &ud) == moving_alloc && ud == m) lua_setallocf(L, m->alloc, m->ud);
  free(m);
}

#else /* records stay put (internal.h has the other two) */
static dlbL_record *unwatch(lua_State *L, dlbL_record *r) { return (void)L, r; }
static void start_moving(lua_State *L, dlb_lua_state *state) { (void)L, (void)state; }
static void stop_moving(lua_State *L, dlb_lua_state *state) { (void)L, (void)state; }
#endif

dlb_array *dlbL_record_give(lua_State *L, dlb_array *a) {
  dlbL_record *r = (dlbL_record *)a;
  dlb_lua_state *state = r->owner;
  if (!state) return a; /* a dead record: nothing to give */
  state->records_epoch++;
  r = unwatch(L, r);
  DLB_ASSERT(state->records_out > 0);
  state->records_out--;
  if (state->records_closed || state->free_count == POOL_MAX) {
    free_record(L, r);
  } else {
    r->next_free = state->free_records;
    state->free_records = r;
    state->free_count++;
  }
  return dlbL_records_dead(state);
}

size_t dlbL_records_bytes(const dlb_lua_state *state) {
  return state->records_out * sizeof(dlbL_record);
}

void dlbL_records_init(lua_State *L, dlb_lua_state *state) {
  state->mover = NULL;
  state->records_epoch = 0;
  start_moving(L, state);
  state->free_records = NULL;
  state->free_count = 0;
  state->records_out = 0;
  state->records_closed = 0;
  state->dead.owner = NULL;
  state->dead.next_free = NULL;
  state->dead.home = NULL;
  state->dead.block = &state->dead;
  clear(&state->dead.array);
}

void dlbL_records_close(lua_State *L, dlb_lua_state *state) {
  dlbL_record *r = state->free_records;
  stop_moving(L, state);
  state->records_closed = 1;
  state->free_records = NULL;
  state->free_count = 0;
  while (r) {
    dlbL_record *next = r->next_free;
    free_record(L, r);
    r = next;
  }
}
