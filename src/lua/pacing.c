/* pacing.c -- the Lua collector driven by the memory dlbridge holds.
 *
 * Array buffers live outside the Lua heap: Lua's own pacing never sees
 * them, and a loop that drops arrays would hold gigabytes of garbage
 * before the collector came round (in generational mode never: arrays that
 * survive two minor collections are old, and only a major collection, which
 * Lua starts when its own heap doubles, frees them). So dlbridge paces the
 * collector by its own bytes, as V8 does with external memory
 * (AdjustAmountOfExternalAllocatedMemory):
 *
 * - Every new Array or Capsule first looks at the state's budget (every
 *   buffer of every backend, imports included) and at the records its
 *   Arrays hold (records.c: Lua's allocator, but not Lua's count, has
 *   them). Growth since the last look is given to the collector as debt
 *   (LUA_GCSTEP), so an incremental collector works in proportion to the
 *   bytes dlbridge allocates, as it would for Lua's own: from 5.2 the
 *   pause after a cycle (the heap may grow by setpause - 100 percent
 *   before the next starts) absorbs that debt first. Lua 5.1 and LuaJIT
 *   have no such debt: their step does its work at once, starting a new
 *   cycle even in the pause, so there dlbridge keeps the pause's credit
 *   itself (gc_credit, set when a step or a collection ends a cycle) and
 *   steps only for growth beyond it. Without that credit the collector
 *   ran twice as many cycles over a small heap (tests/c/capi_gc_pacing.c)
 *   and a 10-element a:copy() on LuaJIT cost ~300 ns, with it ~230.
 * - When the bytes in use reach a threshold, dlbridge runs one full
 *   collection, whatever the mode or the host's setpause/setstepmul, and
 *   sets the next threshold to one and a half times what is in use after
 *   it plus DLB_GC_SLACK. Frees seen on the way (a:delete(), <close>, the
 *   collector's own work) lower the threshold to one and a half times the
 *   lowest use seen plus the slack. Garbage is thus found within a bounded
 *   amount of new allocation: the peak stays under one and a half times the
 *   live bytes plus the slack and one allocation (bench/memory.lua checks
 *   the looser bound of twice).
 * - A collector the host or a script stopped (collectgarbage "stop") gets
 *   no steps and no collections at the threshold, and a finalizer (where
 *   Lua refuses every request) none at all. But at the memory limit the
 *   one full collection before OUT_OF_MEMORY runs even when stopped, as
 *   Lua's own emergency collection does: otherwise one script's "stop"
 *   would leave its garbage counted against every later script.
 *
 * Large strings a call writes whole (tobytes, tonpy) get their room here
 * too (dlbL_string_room), advised as huge pages.
 *
 * The look happens before the new object exists: in Lua 5.4 a step taken
 * right after making an object with a finalizer leaves the garbage of a
 * loop unfinalized (a loop making two arrays an iteration kept every one
 * alive until a full collection). */
#include <stdatomic.h>
#include "internal.h"
#include "../core/pages.h"

/* Lua 5.4 counts the GC step argument in KB; 5.5 counts bytes. */
#if DLB_LUA_GC_STEP_IN_BYTES
#define GC_STEP_UNITS(bytes) (bytes)
#else
#define GC_STEP_UNITS(bytes) ((bytes) / 1024)
#endif

/* Growth smaller than this waits for the next look (no lua_gc call). */
#define STEP_GRAIN ((size_t)32 << 10)

/* gc(what, units): lua_gc in protected mode: a collection can run out of
 * Lua memory on the way (finalizers, call frames), and a collection that
 * failed is no reason to fail the call that asked for it. Returns whether
 * it ended a cycle (a step's answer; a full collection ends one too). */
static int gc_unprotected(lua_State *L) {
  int what = (int)lua_tointeger(L, 1);
  int ended = dlbL_gc(L, what, (int)lua_tointeger(L, 2));
  lua_pushboolean(L, what == LUA_GCCOLLECT || ended == 1);
  return 1;
}

#if DLB_LUA_GC_STEP_IGNORES_PAUSE
/* The bytes the collector's pause lets the heap grow by after a cycle
 * before it starts the next: (setpause - 100) percent of the heap. */
static size_t pause_credit(lua_State *L) {
  int pause = lua_gc(L, LUA_GCSETPAUSE, 200); /* 5.1 reads it by setting it: put back */
  size_t heap = (size_t)lua_gc(L, LUA_GCCOUNT, 0) * 1024 + (size_t)lua_gc(L, LUA_GCCOUNTB, 0);
  size_t credit;
  lua_gc(L, LUA_GCSETPAUSE, pause);
  if (pause <= 100) return 0;
  return __builtin_mul_overflow(heap / 100, (size_t)(pause - 100), &credit) ? SIZE_MAX : credit;
}

/* After lua_gc: a cycle that ended begins a pause, with its credit. */
static void note_cycle(lua_State *L, dlb_lua_state *state, int ended) {
  if (ended) state->gc_credit = pause_credit(L);
}

/* The part of grown the pause's credit does not absorb (the rest is spent). */
static size_t beyond_pause(dlb_lua_state *state, size_t grown) {
  size_t absorbed = grown < state->gc_credit ? grown : state->gc_credit;
  state->gc_credit -= absorbed;
  return grown - absorbed;
}
#else /* Lua's own debt goes through the pause */
static void note_cycle(lua_State *L, dlb_lua_state *state, int ended) {
  (void)L, (void)state, (void)ended;
}
static size_t beyond_pause(dlb_lua_state *state, size_t grown) {
  (void)state;
  return grown;
}
#endif

/* Runs lua_gc(what, units), noting a cycle it ended. */
static void collect(lua_State *L, dlb_lua_state *state, int what, int units) {
  int extra, ended = 0;
  dlbL_records_move(L); /* finalizers may run: records.c */
  extra = dlbL_push_callee(L, gc_unprotected);
  lua_pushinteger(L, what);
  lua_pushinteger(L, units);
  if (lua_pcall(L, 2 + extra, 1, 0) == LUA_OK) ended = lua_toboolean(L, -1);
  lua_pop(L, 1);
  note_cycle(L, state, ended);
}

/* What the collector is paced by: the bytes charged, and the host's own
 * memory that arrays wrap (held: budget.h), which garbage arrays keep alive
 * just the same. */
static size_t in_use(const dlb_lua_state *state) {
  return dlb_budget_in_use(state->budget) +
         atomic_load_explicit(&state->budget->held, memory_order_relaxed) +
         dlbL_records_bytes(state);
}

/* One and a half times used, plus the slack, saturating. */
static size_t threshold_after(size_t used) {
  size_t t;
  if (__builtin_add_overflow(used, used / 2, &t) || __builtin_add_overflow(t, DLB_GC_SLACK, &t))
    return SIZE_MAX;
  return t;
}

/* Whether the collector takes requests now: not stopped (0), not inside a
 * finalizer (-1). */
static int collector_running(lua_State *L) { return dlbL_gc_running(L) == 1; }

/* Whether a collection may run at all: not inside a finalizer (-1), even
 * when stopped (0). For the collection at the memory limit only. */
static int collector_usable(lua_State *L) { return dlbL_gc_running(L) >= 0; }

/* The slow path: a full collection at the threshold, else the growth as a
 * step. */
static __attribute__((noinline)) void pace_slow(lua_State *L, dlb_lua_state *state, size_t used) {
  if (!collector_running(L)) return; /* the growth stays unseen: it counts later */
  if (used >= state->gc_threshold) {
    collect(L, state, LUA_GCCOLLECT, 0);
    used = in_use(state);
    state->gc_threshold = threshold_after(used);
  } else {
    size_t grown = used - state->gc_seen, units;
    state->gc_seen = used; /* before the step: its finalizers may make objects */
    if (!(grown = beyond_pause(state, grown))) return; /* the pause takes it */
    units = GC_STEP_UNITS(grown);
    collect(L, state, LUA_GCSTEP, units > INT32_MAX ? INT32_MAX : (int)units);
    used = in_use(state);
  }
  state->gc_seen = used;
}

void dlbL_pace_collector(lua_State *L, dlb_lua_state *state) {
  size_t used = in_use(state);
  if (used < state->gc_seen) { /* freed since the last look: live is at most used */
    size_t t = threshold_after(used);
    if (t < state->gc_threshold) state->gc_threshold = t;
    state->gc_seen = used;
    return;
  }
  if (used - state->gc_seen >= STEP_GRAIN || used >= state->gc_threshold) pace_slow(L, state, used);
}

void dlbL_pacing_init(dlb_lua_state *state) {
  state->gc_seen = 0;
  state->gc_threshold = DLB_GC_SLACK;
  state->gc_credit = 0;
}

void dlbL_collect_garbage(lua_State *L, dlb_lua_state *state) {
  if (!collector_usable(L)) return;
  collect(L, state, LUA_GCCOLLECT, 0);
  state->gc_seen = in_use(state);
  state->gc_threshold = threshold_after(state->gc_seen);
}

void dlbL_reserve_in(lua_State *L, dlb_lua_state *state, int64_t numel, size_t itemsize) {
  size_t nbytes;
  if (numel < 0 || __builtin_mul_overflow((uint64_t)numel, itemsize, &nbytes)) nbytes = SIZE_MAX;
  if (state && state->budget && dlb_budget_would_exceed(state->budget, nbytes))
    dlbL_collect_garbage(L, state);
}

void dlbL_reserve(lua_State *L, int64_t numel, size_t itemsize) {
  dlbL_reserve_in(L, dlbL_find_state(L), numel, itemsize);
}

void dlbL_reserve_lua(lua_State *L, size_t nbytes, const char *op, const char *what) {
  dlb_lua_state *state = dlbL_state(L);
  size_t limit = atomic_load_explicit(&state->budget->limit, memory_order_relaxed);
  if (!limit || !dlb_budget_would_exceed(state->budget, nbytes)) return;
  dlbL_collect_garbage(L, state);
  if (!dlb_budget_would_exceed(state->budget, nbytes)) return;
  dlbL_raise_hint(L, DLB_E_OUT_OF_MEMORY, op,
                  "the host limits this state's memory (dlb_set_memory_limit): work on smaller "
                  "arrays, or in parts",
                  "%s of %zu bytes would pass the memory limit of %zu bytes (%zu in use)", what,
                  nbytes, limit,
                  dlb_budget_in_use(state->budget));
}

char *dlbL_string_room(lua_State *L, luaL_Buffer *b, size_t size) {
  char *out = dlbL_buffinitsize(L, b, size);
  if (out && size >= DLB_HUGEPAGE_BYTES) dlb_advise_huge_pages(out, size);
  return out;
}
