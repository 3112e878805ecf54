/* records.c -- where an Array keeps its geometry: records outside its userdata.
 *
 * A dlb_array is 560 bytes (32 dimensions of shape and strides); an Array's
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
 * (dlbL_records_close); a record given back after that is freed at once. */
#include <stddef.h>
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
  }
  DLB_ASSERT(r->owner == state);
  state->records_out++;
  clear(&r->array);
  return &r->array;
}

dlb_array *dlbL_record_give(lua_State *L, dlb_array *a) {
  dlbL_record *r = (dlbL_record *)a;
  dlb_lua_state *state = r->owner;
  if (!state) return a; /* a dead record: nothing to give */
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

void dlbL_records_init(dlb_lua_state *state) {
  state->free_records = NULL;
  state->free_count = 0;
  state->records_out = 0;
  state->records_closed = 0;
  state->dead.owner = NULL;
  state->dead.next_free = NULL;
  clear(&state->dead.array);
}

void dlbL_records_close(lua_State *L, dlb_lua_state *state) {
  dlbL_record *r = state->free_records;
  state->records_closed = 1;
  state->free_records = NULL;
  state->free_count = 0;
  while (r) {
    dlbL_record *next = r->next_free;
    free_record(L, r);
    r = next;
  }
}
