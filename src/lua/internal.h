/* internal.h -- what the binding's files share: module state, checks, raising. */
#ifndef DLB_LUA_INTERNAL_H
#define DLB_LUA_INTERNAL_H

#include "compat.h"
#include "../core/array.h"
#include "../core/backend.h"
#include "../core/budget.h"
#include "../core/copy.h"
#include "../core/dlpack.h"
#include "../core/dtype.h"

#define DLB_ARRAY_MT "dlbridge.Array"
#define DLB_ERROR_MT "dlbridge.Error"
#define DLB_STATE_MT "dlbridge.State"
#define DLB_STATE_KEY "dlbridge.state" /* registry field holding the State */

/* Upvalues shared by every function of the module and of Array's metatable
 * (lua-cjson style: per-module state, no globals). */
#define DLB_UV_ARRAY_MT lua_upvalueindex(1)
#define DLB_UV_STATE lua_upvalueindex(2)
#define DLB_UV_METHODS lua_upvalueindex(3)
#define DLB_NUPVALUES 3

/* Per-lua_State module state: the backend registry, the memory budget, the
 * objects made inside finalizers. Recognised by its userdata size and tag,
 * like Arrays (a host closure's own upvalues must never pass for it). After
 * lua_close has run its __gc, registry and cpu are NULL: dlbridge is closed
 * in that state and makes no new objects.
 *
 * Why the pins: during lua_close, Lua finalizes no object that a finalizer
 * makes, so an Array or Capsule made by a finalizer there would leak what it
 * holds. Every object made inside a finalizer (any finalizer: one that runs
 * in lua_close cannot be told apart) is pinned in a registry table; the
 * state's own __gc, which in lua_close runs after the finalizers of all
 * objects made after require, releases what is pinned. The next object made
 * outside a finalizer proves the state was not closing: the pins are
 * dropped, and those objects live and die as any other. A pinned object is
 * reachable, so its memory is valid whenever it is released. */
typedef struct dlb_host_state dlb_host_state;

/* An Array's geometry, kept outside its userdata (records.c). */
typedef struct dlbL_record {
  dlb_array array;               /* first: a record's address is its array's */
  struct dlb_lua_state *owner;   /* the pool it goes back to; NULL: a dead record */
  struct dlbL_record *next_free; /* in the pool */
  dlb_array **home;              /* where records move (records.c): the Array's pointer to it, */
  struct dlbL_record *block;     /* and the block from the Lua allocator it started in */
} dlbL_record;

/* Under AddressSanitizer, records move (records.c): a record the binding
 * fetched moves to a new address at each allocation, so that a pointer a
 * call keeps across one is a use after free AddressSanitizer reports. */
#define DLB_MOVES_RECORDS (!DLB_KEEPS_BLOCKS)

typedef struct dlb_lua_state {
  dlb_host_state *host; /* what outlives a reload: host_state.c (registry, cpu, budget: its) */
  dlb_registry *registry;
  dlb_backend *cpu;
  dlb_budget *budget;  /* shared with every backend of the state */
  int capsule_mt;      /* registry reference of the Capsule metatable */
  int pins;            /* registry reference of the pin table (objects made in finalizers) */
  size_t pinned;       /* entries in it */
  size_t gc_seen;      /* the budget's in_use at the collector's last look (pacing.c) */
  size_t gc_threshold; /* in_use at which the next look runs a full collection */
  size_t gc_credit;    /* growth the collector's pause takes without a step (pacing.c) */
  dlbL_record *free_records; /* records.c: the pool, */
  size_t free_count;         /* its length, */
  size_t records_out;        /* the records Arrays hold (live or garbage), */
  int records_closed;        /* set by lua_close: records given back are freed */
  size_t records_epoch;      /* records given back or moved so far: dlbL_records_epoch */
  dlbL_record dead;          /* what a finalized Array points at */
  void *mover;               /* records.c, where records move: what moves them */
  uint64_t tag;
} dlb_lua_state;

#define DLB_STATE_TAG UINT64_C(0x646c622d73746174) /* "dlb-stat" */

/* The state at idx when it really is one, else NULL. */
static inline dlb_lua_state *dlbL_to_state(lua_State *L, int idx) {
  dlb_lua_state *s = (dlb_lua_state *)lua_touserdata(L, idx);
  return s && lua_rawlen(L, idx) == sizeof *s && s->tag == DLB_STATE_TAG ? s : NULL;
}

/* The state in the running function's upvalues: NULL unless that function
 * is one of the module's (its upvalues are dlbridge's Array metatable,
 * State and methods), as when the host calls the C API. */
static inline dlb_lua_state *dlbL_upvalue_state(lua_State *L) {
  return dlbL_upvalues_readable(L) ? dlbL_to_state(L, DLB_UV_STATE) : NULL;
}

/* Whether the running C function is one of the module's. */
static inline int dlbL_in_module(lua_State *L) { return dlbL_upvalue_state(L) != NULL; }

/* --- the host state (host_state.c) --- */
/* Points state at the host state of L's main thread, made on first use
 * (registry with the cpu backend, budget, the host's switches); a module
 * opened again after a script cleared dlbridge's registry keys finds the
 * same one. DLB_E_OUT_OF_MEMORY (err filled) when it cannot be made. */
dlb_status dlbL_host_adopt(lua_State *L, dlb_lua_state *state, dlb_error *err);
/* Drops state's reference (lua_close); the last one frees the host state. */
void dlbL_host_release(dlb_lua_state *state);
/* Whether a finalizer running in L runs in lua_close: the main thread with
 * nothing below the finalizer on its stack (a host collecting from C at
 * its outermost level looks the same). */
int dlbL_looks_like_close(lua_State *L);
/* The host's switches (dlb_allow_files, dlb_allow_mapping); 0 when closed. */
int dlbL_files_allowed(const dlb_lua_state *state);
int dlbL_mapping_allowed(const dlb_lua_state *state);
void dlbL_set_files_allowed(dlb_lua_state *state, int allowed);
void dlbL_set_mapping_allowed(dlb_lua_state *state, int allowed);
/* dlb_allow_pointers (a:ptr() on LuaJIT); 0 when closed. */
int dlbL_pointers_allowed(const dlb_lua_state *state);
void dlbL_set_pointers_allowed(dlb_lua_state *state, int allowed);

/* The module state, open or closed, or NULL before luaopen (module.c). */
dlb_lua_state *dlbL_find_state(lua_State *L);
/* The open module state; raises UNSUPPORTED when dlbridge was closed with
 * its lua_State (a finalizer running late in lua_close). */
dlb_lua_state *dlbL_state(lua_State *L);
/* For a new Array or Capsule at the top of the stack, already with its
 * metatable: pins it when a finalizer is running, else drops earlier pins
 * (see dlb_lua_state). Allocates: call it in protected mode. */
void dlbL_track_new(lua_State *L, dlb_lua_state *state);
/* Calls the function pushed by dlbL_push_callee below its arguments (a
 * maker that pushes one new Array or Capsule and can fail only by running
 * out of Lua memory; nargs counts dlbL_push_callee's extra) and leaves its
 * result. Protected, raising
 * OUT_OF_MEMORY "Lua has no memory for <what>", when the state's allocator
 * may refuse memory (a host's capped one); a plain call under lauxlib's
 * default allocator, which has no cap (see module.c). */
void dlbL_call_maker(lua_State *L, int nargs, const char *op, const char *what);
/* Whether the state's allocator may refuse memory: any but lauxlib's default.
 * Where it cannot, a maker may run inline, unprotected (dlbL_call_maker). */
int dlbL_alloc_may_fail(lua_State *L);
/* Makes room for an allocation of numel * itemsize bytes: when the state's memory limit
 * would refuse it, runs a full garbage collection first (garbage may be
 * holding the budget). Finalizers may run: call it where the caller
 * re-checks its arguments afterwards, as after dlbL_push_empty. */
void dlbL_reserve(lua_State *L, int64_t numel, size_t itemsize);
/* The same for a state the caller has (NULL: nothing to do). */
void dlbL_reserve_in(lua_State *L, dlb_lua_state *state, int64_t numel, size_t itemsize);

/* Memory a call makes for the script outside array buffers (a string, a
 * table): refused with OUT_OF_MEMORY before it is allocated when nbytes
 * more would pass the host's memory limit (after one full collection, as
 * dlbL_reserve). what names it ("a string"). Finalizers may run. */
void dlbL_reserve_lua(lua_State *L, size_t nbytes, const char *op, const char *what);

/* dlbL_buffinitsize for a string the caller writes whole at once (tobytes,
 * tonpy): room of DLB_HUGEPAGE_BYTES or more is advised as huge pages
 * first, as NumPy advises its buffers (only the pages inside the room; a
 * hint), so that writing 256 MiB faults per 2 MiB, not per 4 KiB: tonpy of
 * 256 MiB 1.4 s -> 0.7 s here. */
char *dlbL_string_room(lua_State *L, luaL_Buffer *b, size_t size);

/* --- numbers (numbers.c): one rule for integers on every Lua --- */
/* Whether the value at idx is an integer as dl.array infers one: 5.3+'s
 * integer subtype; elsewhere an integral number within +-2^53 (or, on
 * LuaJIT, an int64_t cdata). */
int dlbL_isinteger(lua_State *L, int idx);
/* The exact int64 value of the number (or numeric string, or LuaJIT
 * integer cdata) at idx; *isint (may be NULL) 0 and 0 when it has none
 * (3.5, 2^63, nan): lua_tointegerx's rule on every Lua. */
int64_t dlbL_tointegerx(lua_State *L, int idx, int *isint);
int64_t dlbL_tointeger(lua_State *L, int idx);
/* LuaJIT: an int64_t/uint64_t cdata at idx into out (INT, or UINT above
 * INT64_MAX): 1; else (and on other Luas) 0. */
int dlbL_cdata_integer(lua_State *L, int idx, dlb_scalar *out);
/* Pushes v exactly: a Lua integer (5.3+), a number within +-2^53, a boxed
 * int64_t/uint64_t on LuaJIT; else raises VALUE naming the exact routes. */
void dlbL_push_int64(lua_State *L, int64_t v);
void dlbL_push_uint64(lua_State *L, uint64_t v);
/* LuaJIT with its FFI: pushes p cast to ctype ("float *"), 1; else 0. */
int dlbL_push_pointer(lua_State *L, void *p, const char *ctype);

/* --- errors (error.c) --- */
/* Raises a dlbridge.Error; message is printf-style (any length is cut),
 * hint says what was expected (copied: a stack buffer will do). Every
 * ARGUMENT error names one; NULL: the code's default hint, or for ARGUMENT
 * the op's usage line (dlbL_usage) when it has one. */
int dlbL_raise_hint(lua_State *L, dlb_status code, const char *op, const char *hint,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6), noreturn));
/* dlbL_raise_hint with the default hint. */
#define dlbL_raise(L, code, op, ...) dlbL_raise_hint(L, code, op, NULL, __VA_ARGS__)
/* How the public function op is called ("dl.zeros{2, 3} or dl.zeros(2, 3),
 * ..."), or NULL when op has no usage line (usage.c: the one source). */
const char *dlbL_usage(const char *op);
/* Raises ARGUMENT "unexpected argument #max+1", op's usage line the hint. */
int dlbL_extra_argument(lua_State *L, int max, const char *op) __attribute__((noreturn, cold));
/* No argument is silently ignored: more than max raises ARGUMENT. One
 * comparison on the path of a correct call. */
static inline void dlbL_check_nargs(lua_State *L, int max, const char *op) {
  if (lua_gettop(L) > max) dlbL_extra_argument(L, max, op);
}
/* Calls f with this function's arguments in protected mode; a Lua memory
 * error (a huge table or string) becomes an OUT_OF_MEMORY dlbridge.Error. */
int dlbL_call_protected(lua_State *L, lua_CFunction f, const char *op);
/* lua_pcall of the function and nargs arguments on top; a memory error
 * becomes OUT_OF_MEMORY naming op, any other error is raised again as is. */
void dlbL_pcall(lua_State *L, int nargs, int nresults, const char *op);
/* Pushes the string s in protected mode (OUT_OF_MEMORY naming op). */
void dlbL_push_string(lua_State *L, const char *s, const char *op);
/* Whether the value at idx is a dlbridge.Error. */
int dlbL_is_error(lua_State *L, int idx);
/* Pushes (does not raise) the error object for err. */
void dlbL_push_error(lua_State *L, const dlb_error *err, const char *op);
/* Raises the error a core call reported. */
int dlbL_raise_error(lua_State *L, const dlb_error *err, const char *op) __attribute__((noreturn));
/* Pushes Error's metatable and helpers into the module table at -1. */
void dlbL_open_errors(lua_State *L);

/* --- arrays (array.c) --- */
/* The array at idx, or a raised ARGUMENT error naming op and the argument. */
dlb_array *dlbL_check_array(lua_State *L, int idx, const char *op);
/* As dlbL_check_array, and DELETED when released. */
dlb_array *dlbL_check_live(lua_State *L, int idx, const char *op);
/* The array at idx or NULL (no error). */
dlb_array *dlbL_to_array(lua_State *L, int idx);
/* The same for an array the running call pushed itself (dlbL_pin,
 * dlbL_push_empty) and keeps reachable: no finalizer can take its record,
 * so the pointer stays good across allocations (and where records move,
 * records.c, it is not watched). Never for an argument. */
dlb_array *dlbL_to_pinned(lua_State *L, int idx);
/* Pushes a new, released (safe empty) array userdata and returns it. Lua
 * running out of memory raises OUT_OF_MEMORY (a dlbridge.Error naming op);
 * a closed state raises UNSUPPORTED. Finalizers may run, and may delete
 * arrays the caller holds. */
dlb_array *dlbL_push_empty(lua_State *L, const char *op);
/* dlbL_push_empty, then dlbL_reserve(L, numel, itemsize) (itemsize 0: no
 * room made), with one look for the state. Finalizers may run. */
dlb_array *dlbL_push_new(lua_State *L, int64_t numel, size_t itemsize, const char *op);
/* For an operation making a new array from the live array at idx: pushes the
 * empty result (*result), makes room for as many elements of itemsize (0:
 * the source's own), and returns the source, checked live again after the
 * allocation and collection (finalizers may have deleted it). */
dlb_array *dlbL_push_result(lua_State *L, int idx, size_t itemsize, dlb_array **result,
                            const char *op);
/* Releases the Array at idx (no Array: nothing) and gives its record back:
 * it reads as deleted from now on (its __gc; lua_close's pins). */
void dlbL_finalize_array(lua_State *L, int idx);
/* Pushes a new view sharing the buffer of the Array at idx (released if
 * it was deleted meanwhile). */
dlb_array *dlbL_push_view(lua_State *L, int idx, const char *op);
/* Checks the array at idx is live and pushes a private view of it: Lua code
 * that runs later in the call (finalizers, metamethods) can delete the
 * array, but cannot reach the view, which holds the buffer. */
dlb_array *dlbL_pin(lua_State *L, int idx, const char *op);
/* --- Arrays' records (records.c) --- */
/* A cleared record (no buffer, 0-d) for a new Array, from the state's pool
 * or its Lua allocator; NULL when that allocator refuses. */
dlb_array *dlbL_record_take(lua_State *L, dlb_lua_state *state);
/* Gives the record of a finalized Array back (a dead record: nothing) and
 * returns what the Array points at from now: its state's dead record. */
dlb_array *dlbL_record_give(lua_State *L, dlb_array *a);
/* The state's dead record: what an Array points at before it has a record. */
dlb_array *dlbL_records_dead(dlb_lua_state *state);
/* Bytes of the records Arrays hold, live or garbage (the pacing counts them). */
size_t dlbL_records_bytes(const dlb_lua_state *state);
void dlbL_records_init(lua_State *L, dlb_lua_state *state);
#if DLB_MOVES_RECORDS
/* Where records move: the Array's record a is watched, and moves at the
 * next allocation (dlbL_to_array calls it). */
void dlbL_record_watch(lua_State *L, dlb_array *a);
/* Where records move: moves the watched ones now (before a collection). */
void dlbL_records_move(lua_State *L);
#else /* records stay put: nothing on the hot path */
static inline void dlbL_record_watch(lua_State *L, dlb_array *a) { (void)L, (void)a; }
static inline void dlbL_records_move(lua_State *L) { (void)L; }
#endif
/* Counts the records given back (and moved) in the state: a dlb_array
 * pointer fetched from an Array is still good while this count is what it
 * was at the fetch, so a hot path fetches again only when it changed. */
static inline size_t dlbL_records_epoch(const dlb_lua_state *state) {
  return state->records_epoch;
}
/* lua_close: frees the pool; records given back later are freed at once. */
void dlbL_records_close(lua_State *L, dlb_lua_state *state);
/* --- the collector paced by dlbridge's memory (pacing.c) --- */
/* Slack of the full-collection threshold: one and a half times the bytes
 * in use after a collection, plus this. */
#define DLB_GC_SLACK ((size_t)32 << 20)
/* Looks at the bytes the state's budget holds and drives the collector by
 * their growth: a step in proportion, a full collection at the threshold.
 * Called before a new Array or Capsule exists (see pacing.c). May run
 * finalizers. */
void dlbL_pace_collector(lua_State *L, dlb_lua_state *state);
/* One full collection where Lua allows one (even when stopped; never in a
 * finalizer), the pacing's marks set after it: what dlbridge does before it
 * refuses memory. May run finalizers. */
void dlbL_collect_garbage(lua_State *L, dlb_lua_state *state);
/* Pacing's starting point for a new state. */
void dlbL_pacing_init(dlb_lua_state *state);
/* "cpu:0" for a's device. */
void dlbL_device_name(const dlb_array *a, char *out, size_t size);
void dlbL_open_array(lua_State *L);

/* --- conversions (convert.c) --- */
/* Whether the value at idx is a complex scalar: a table with re or im. */
int dlbL_is_complex(lua_State *L, int idx);
/* Lua value at idx -> scalar; VALUE error (naming op and dtype) otherwise. */
void dlbL_to_scalar(lua_State *L, int idx, dlb_scalar *out, const char *op);
void dlbL_push_scalar(lua_State *L, const dlb_scalar *v);
/* dtype named by the string at idx; DTYPE / ARGUMENT errors. */
dlb_dtype dlbL_check_dtype(lua_State *L, int idx, const char *op);
/* Shape from an integer or a table of integers. allow_minus_one lets -1 through. */
int dlbL_check_shape(lua_State *L, int idx, int64_t *shape, int allow_minus_one, const char *op);
/* Shape from the arguments at idx on: one table, or integers (the Torch7 /
 * NumPy habit: dl.zeros(2, 3), a:view(3, 2)), up to the first argument that
 * is no number; *next is the index after the shape. next NULL: the shape is
 * the last argument, and anything after it raises ARGUMENT. */
int dlbL_check_shape_args(lua_State *L, int idx, int64_t *shape, int allow_minus_one, int *next,
                          const char *op);
/* The one check of every argument that takes a list (shapes, dims, repeats,
 * widths, the arrays to join, dl.array's nested tables, ...): the table at
 * idx must be a plain sequence, its raw keys exactly 1..n with n = #t (no
 * holes, no other keys), read raw. Returns n. Otherwise raises ARGUMENT
 * "<what> must be a list (keys 1..n, no holes), got a table with the key
 * \"dim\"" (or a hole at i, or another key); hint is what the argument
 * looks like (NULL: "a list such as {1, 2}"). Nothing is silently ignored:
 * {dim = -1} is no empty list of dims, {2, dtype = "int32"} no shape {2}. */
lua_Integer dlbL_check_list(lua_State *L, int idx, const char *what, const char *hint,
                            const char *op);
/* The n of dlbL_check_list without raising: -1 when the table at idx is
 * no list. A caller whose what or hint costs a lookup or a snprintf tries
 * this first and makes them only for dlbL_check_list's error. */
lua_Integer dlbL_list_length(lua_State *L, int idx);
/* dlbL_check_list's quick pass: whether the table at idx has exactly n raw
 * keys (counted, not looked at). With t[1..n] all set that makes it the
 * list 1..n; a caller that reads t[1..n] anyway (dl.array's tables) counts
 * first, then reads, and calls dlbL_check_list for the error when the
 * count is off or an entry is nil. */
int dlbL_has_n_keys(lua_State *L, int idx, lua_Integer n);
/* A 1-based dim (negative from the end) -> 0-based; INDEX errors. */
int dlbL_check_dim(lua_State *L, int idx, int ndim, const char *op);
/* A 1-based index into an extent (negative from the end) -> 0-based. */
int64_t dlbL_check_index(lua_State *L, int idx, int64_t extent, const char *op);
/* Pushes a new cpu array built from nested tables / scalars at idx. */
dlb_array *dlbL_array_from_lua(lua_State *L, int idx, int has_dtype, dlb_dtype dtype,
                               const char *op);
/* Pushes a's elements as nested tables (a scalar for 0-d). It allocates
 * while it reads a: a must be an array the caller pushed (dlbL_pin), whose
 * pointer no finalizer can take (records.c). */
void dlbL_push_table(lua_State *L, const dlb_array *a, const char *op);

/* A placement: a dtype (when has_dtype) on a device. */
typedef struct dlbL_options {
  int has_dtype;
  dlb_dtype dtype;
  dlb_backend *backend;
  int device_id;
} dlbL_options;
/* dlbL_push_new for a new array of shape on opts' device (zeroed or
 * uninitialised), allocated: a shape whose count overflows reserves
 * nothing and the allocation raises its error. */
dlb_array *dlbL_push_allocated(lua_State *L, const dlbL_options *opts, dlb_dtype dtype, int ndim,
                               const int64_t *shape, int zeroed, const char *op);
/* dlbL_check_options (options.c) for the argument after a shape: anything
 * but a table or nil there raises ARGUMENT with a hint showing both shape
 * forms. */
void dlbL_check_options_after_shape(lua_State *L, int idx, dlbL_options *opts, const char *op);
/* Parses the device string at idx ("cpu", "cpu:0") into opts: ARGUMENT
 * for no string, UNKNOWN_DEVICE for a device no backend has. */
void dlbL_check_device(lua_State *L, int idx, dlbL_options *opts, const char *op);

/* Writes the Lua value at vidx into every element of the Array at didx: a
 * scalar fills; an array, or nested tables, is broadcast to its shape and
 * copied. */
void dlbL_assign(lua_State *L, int didx, int vidx, const char *op);

/* --- DLPack (dlpack.c) --- */
/* Exports the array at idx (no Lua error: a status in err). */
dlb_status dlbL_export(lua_State *L, int idx, const dlb_export_options *o, dlb_exported *out,
                       dlb_error *err);
typedef struct dlb_capsule dlb_capsule;
/* Pushes an empty capsule (owning nothing yet); raises as dlbL_push_empty. */
dlb_capsule *dlbL_push_empty_capsule(lua_State *L, const char *op);
/* Gives the tensor of the capsule at idx (if any, unconsumed) back to its
 * producer; 0 when the value is no capsule. Never raises. */
int dlbL_capsule_release(lua_State *L, int idx);
/* Gives the empty capsule c the tensor t (cannot fail). */
void dlbL_capsule_fill(dlb_capsule *c, dlb_exported t);
/* Takes the tensor of the capsule at idx, marking it consumed first. */
dlb_status dlbL_capsule_take(lua_State *L, int idx, dlb_exported *out, dlb_error *err);
/* Imports t (owning it) into the empty Array at idx; on failure the
 * deleter has run and the Array stays empty. */
dlb_status dlbL_import(lua_State *L, int idx, dlb_exported t, dlb_error *err);
/* Runs f (no arguments) in protected mode to push one object; a Lua memory
 * error comes back as DLB_E_OUT_OF_MEMORY with nothing pushed. */
dlb_status dlbL_push_protected(lua_State *L, lua_CFunction f);

/* --- read-only stand-ins (protect.c) --- */
/* Pushes a read-only stand-in for the table at idx: reads, pairs() and #
 * reach the table, writes raise READ_ONLY naming what; its own metatable
 * is hidden. Allocates: call it in protected mode (luaopen is). */
void dlbL_push_readonly(lua_State *L, int idx, const char *what);
/* Sets the metatable at idx's __metatable to such a stand-in, so that
 * getmetatable(obj) cannot reach the real one and setmetatable(obj) fails. */
void dlbL_protect_metatable(lua_State *L, int idx, const char *what);
extern const luaL_Reg dlbL_protect_functions[]; /* protect.c: dl.readonly */

/* --- options tables (options.c): every options table is read by these --- */
/* Errors are ARGUMENT with the op's usage line as hint, worded alike
 * ("options must be a table, got string", "unknown option 'dtyp'
 * (expected dtype, device)", "option keepdims must be a boolean, got 1",
 * "option range must be a list (keys 1..n, no holes), ..."); a value is
 * checked as the same value is elsewhere (a dtype name: DTYPE; a device:
 * UNKNOWN_DEVICE; a dim: INDEX; a deleted array: DELETED). */
/* The value at idx is nil/none (returns 0) or a table whose keys are all
 * in keys (NULL-terminated; returns 1); ARGUMENT otherwise. */
int dlbL_check_option_table(lua_State *L, int idx, const char *const *keys, const char *op);
/* As dlbL_check_option_table, where a dim stands for {dim = n}
 * (a:sum(2)): returns 2 for a number (the caller reads the dim). */
int dlbL_check_dim_or_options(lua_State *L, int idx, const char *const *keys, const char *op);
/* One walk for a call that reads several keys (each getter on the table
 * itself walks it again): checks the options at idx as
 * dlbL_check_option_table does and pushes the value of each of keys, in
 * keys' order, nil when absent. Returns the first one's slot, 0 (nothing
 * pushed) for no options. The getters then read each key with the index
 * dlbL_opt_slot(keys, first, key), and raise the same errors. */
int dlbL_opt_collect(lua_State *L, int idx, const char *const *keys, const char *op);
/* The same after dlbL_check_dim_or_options' answer (returned): *first set
 * for a table, 0 otherwise. */
int dlbL_collect_dim_or_options(lua_State *L, int idx, const char *const *keys, int *first,
                                const char *op);
/* The getter index of key's collected value (key one of keys): above any
 * stack index (Lua keeps stacks under 10^6 slots). 0 when first is 0 or
 * key is none of keys: absent, so the getter's default. */
#define DLBL_OPT_SLOT (1 << 28)
int dlbL_opt_slot(const char *const *keys, int first, const char *key);
/* A getter's (idx, key) arguments for key as collected at first:
 * dlbL_opt_boolean(L, DLBL_COLLECTED(keys, first, "stable"), 0, op). */
#define DLBL_COLLECTED(keys, first, key) dlbL_opt_slot(keys, first, key), key
/* The raw keys of the table at idx are all strings in keys; else ARGUMENT
 * "unknown <what> 'k' (expected a, b)" (what: "option", "state key"). */
void dlbL_check_keys(lua_State *L, int idx, const char *const *keys, const char *what,
                     const char *op);
/* A table key for a message: the string itself, else its type name (never
 * a user __tostring, which could raise or return anything). */
const char *dlbL_key_name(lua_State *L, int idx);
/* The getters: option key of the options at idx (nil/none: no options, so
 * the default). Tables are read raw, as they are checked (no __index runs,
 * nothing is allocated). dlbL_opt_get pushes opts[key] (nil without
 * options) and returns its type, for values of several forms. */
int dlbL_opt_get(lua_State *L, int idx, const char *key);
int dlbL_opt_boolean(lua_State *L, int idx, const char *key, int dflt, const char *op);
/* An integer: a number (or LuaJIT int64 cdata) with an exact int64 value. */
int64_t dlbL_opt_integer(lua_State *L, int idx, const char *key, int64_t dflt, const char *op);
double dlbL_opt_number(lua_State *L, int idx, const char *key, double dflt, const char *op);
/* A string among names (NULL-terminated): its index; dflt when absent. */
int dlbL_opt_choice(lua_State *L, int idx, const char *key, const char *const *names, int dflt,
                    const char *op);
/* A dtype name into *dtype, a device string into *where: 1 when given. */
int dlbL_opt_dtype(lua_State *L, int idx, const char *key, dlb_dtype *dtype, const char *op);
int dlbL_opt_device(lua_State *L, int idx, const char *key, dlbL_options *where, const char *op);
/* A dim (1-based, -1 the last) as a 0-based one. */
int dlbL_opt_dim(lua_State *L, int idx, const char *key, int ndim, int dflt, const char *op);
/* The dims named by the value at idx (a dim or a list of dims, each once)
 * as bits (bit d: 0-based dim d), as the reductions take them. */
uint64_t dlbL_check_dims(lua_State *L, int idx, int ndim, const char *op);
/* An Array (live), left pushed (the out of many ops); NULL, nothing pushed,
 * when absent. */
dlb_array *dlbL_opt_array(lua_State *L, int idx, const char *key, const char *op);
/* As dlbL_check_array_like: an Array, or numbers or nested tables made into
 * one; left pushed. NULL, nothing pushed, when absent. */
dlb_array *dlbL_opt_array_like(lua_State *L, int idx, const char *key, int has_dtype,
                               dlb_dtype dtype, const char *op);
/* A list (dlbL_check_list) of at most max integers or numbers into out:
 * their count; -1 when absent. */
int dlbL_opt_integers(lua_State *L, int idx, const char *key, int64_t *out, int max,
                      const char *op);
int dlbL_opt_numbers(lua_State *L, int idx, const char *key, double *out, int max, const char *op);
/* The placement options {dtype =, device =} at idx (nil or a table; idx 0
 * only sets the defaults: float64, no dtype given, the cpu). */
void dlbL_check_options(lua_State *L, int idx, dlbL_options *opts, const char *op);
/* The options of the file loads (dl.load, dl.load_safetensors and their
 * string forms): {copy =, device =}. copy is DLB_COPY_IF_NEEDED without the
 * key; backend/device_id the cpu without device. */
typedef struct dlbL_load_options {
  dlb_copy_mode copy;
  dlb_backend *backend;
  int device_id;
} dlbL_load_options;
void dlbL_check_load_options(lua_State *L, int idx, dlbL_load_options *o, const char *op);

/* --- array arguments (select.c) --- */
/* The array at idx (live), or a new cpu array made in its place from a
 * number, boolean or nested tables (with dtype when has_dtype). */
dlb_array *dlbL_check_array_like(lua_State *L, int idx, int has_dtype, dlb_dtype dtype,
                                 const char *op);
/* a[k] and a[k] = v for an array k: a bool mask, or integer indices along
 * dim 1 (select.c); Array's __index and __newindex call them. */
int dlbL_index_by_array(lua_State *L);
int dlbL_assign_by_array(lua_State *L);

/* --- module parts --- */
extern const luaL_Reg dlbL_create_functions[];  /* create.c */
extern const luaL_Reg dlbL_view_methods[];      /* views.c */
extern const luaL_Reg dlbL_data_methods[];      /* data.c */
extern const luaL_Reg dlbL_dlpack_methods[];    /* dlpack.c: to_dlpack, __dlpack, __dlpack_device */
extern const luaL_Reg dlbL_dlpack_functions[];  /* dlpack.c: from_dlpack */
extern const luaL_Reg dlbL_backend_functions[]; /* backends.c: backends, device_put */
extern const luaL_Reg dlbL_backend_methods[];   /* backends.c: to */
/* compute.c: operators (into Array's metatable), element-wise functions and
 * comparisons (dl.add, a:eq, a:sqrt). The arithmetic and bitwise
 * operators, X(mm, ID, nin): Lua's __mm runs DLB_OP_ID on nin operands
 * (usage.c gives them their usage line). */
#define DLBL_OPERATORS(X)                                                                          \
  X(add, ADD, 2)                                                                                   \
  X(sub, SUBTRACT, 2) X(mul, MULTIPLY, 2) X(div, DIVIDE, 2) X(idiv, FLOOR_DIVIDE, 2)               \
      X(mod, MOD, 2) X(pow, POWER, 2) X(band, BITWISE_AND, 2) X(bor, BITWISE_OR, 2)                \
          X(bxor, BITWISE_XOR, 2) X(shl, LEFT_SHIFT, 2) X(shr, RIGHT_SHIFT, 2) X(unm, NEGATIVE, 1) \
              X(bnot, BITWISE_NOT, 1)
extern const luaL_Reg dlbL_compute_metamethods[];
extern const luaL_Reg dlbL_compute_methods[];
extern const luaL_Reg dlbL_compute_functions[];
extern const luaL_Reg dlbL_reduce_methods[];   /* reduce.c: a:sum(), ... */
extern const luaL_Reg dlbL_reduce_functions[]; /* reduce.c: dl.sum(a), ... */
extern const luaL_Reg dlbL_linalg_methods[];   /* linalg.c: a:matmul(b), ... */
extern const luaL_Reg dlbL_linalg_functions[]; /* linalg.c: dl.matmul, dl.concat, dl.stack */
extern const luaL_Reg dlbL_select_methods[];   /* select.c: a:take(i), a:nonzero(), ... */
extern const luaL_Reg dlbL_select_functions[]; /* select.c: dl.take, dl.nonzero, dl.argwhere, ... */
extern const luaL_Reg dlbL_scatter_functions[]; /* scatter.c: dl.scatter_add, _mul, _max, _min */
extern const luaL_Reg dlbL_sort_methods[];     /* sort.c: a:sort(), a:argsort(), ... */
extern const luaL_Reg dlbL_sort_functions[];   /* sort.c: dl.sort, dl.topk, dl.unique, ... */
extern const luaL_Reg dlbL_quantile_functions[]; /* quantile.c: dl.median, dl.quantile, ... */
extern const luaL_Reg dlbL_scan_methods[];     /* scan.c: a:cumsum(), a:cumprod() */
extern const luaL_Reg dlbL_scan_functions[];   /* scan.c: dl.cumsum, dl.diff, dl.bincount, ... */
extern const luaL_Reg dlbL_construct_methods[];   /* construct.c: a:flatten(), a:item(), ... */
extern const luaL_Reg dlbL_construct_functions[]; /* construct.c: dl.eye, dl.tile, dl.pad, ... */
/* random.c: sets the module's `random` table (dl.random.default_rng, ...)
 * into the module table at index module. */
void dlbL_open_random(lua_State *L, int module);
/* linalg.c: sets the module's read-only `linalg` table (dl.linalg.solve, ...). */
void dlbL_open_linalg(lua_State *L, int module);
/* vecmath.c: dl.cross, dl.outer, dl.norm, dl.einsum, dl.interp. */
extern const luaL_Reg dlbL_vecmath_functions[];
extern const luaL_Reg dlbL_npy_functions[]; /* npy.c: dl.save, dl.load, dl.tonpy, dl.fromnpy */
extern const luaL_Reg dlbL_safetensors_functions[]; /* safetensors.c: dl.load_safetensors, ... */
/* Raises UNSUPPORTED when the host turned file access off (dlb_allow_files):
 * every function that opens a path calls it first. */
void dlbL_check_file_access(lua_State *L, const char *op);
/* dlpack.c: creates the Capsule metatable (once per state). */
void dlbL_open_capsule(lua_State *L);

#endif
