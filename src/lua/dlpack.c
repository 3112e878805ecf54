/* dlpack.c -- capsules, a:to_dlpack / __dlpack / __dlpack_device, dl.from_dlpack. */
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include "../core/dlpack.h"
#include "../core/event.h"
#include "internal.h"

#define DLB_CAPSULE_MT "dlbridge.Capsule"

/* A capsule owns one exported tensor until a consumer takes it. Version and
 * device are copied at creation: the tensor may be gone once consumed. */
struct dlb_capsule {
  void *tensor; /* NULL: empty or consumed */
  int versioned;
  int consumed;
  uint32_t major, minor;
  DLDevice device;
  uint64_t tag; /* recognised by size and tag, as Arrays are (array.c) */
};

#define CAPSULE_TAG UINT64_C(0x63617073756c6521) /* "capsule!" */

static dlb_capsule *to_capsule(lua_State *L, int idx) {
  dlb_capsule *c = lua_touserdata(L, idx);
  return c && lua_rawlen(L, idx) == sizeof *c && c->tag == CAPSULE_TAG ? c : NULL;
}

/* Gives an unconsumed capsule's tensor back to its producer, once. */
static void capsule_release(dlb_capsule *c) {
  if (c->tensor && !c->consumed) {
    dlb_exported t = {c->versioned, c->tensor};
    c->tensor = NULL;
    c->consumed = 1;
    dlb_dlpack_delete(t);
  }
}

/* Pushes an empty Capsule with the metatable at mt (absolute), tracked. A
 * Lua memory error leaves nothing behind. */
static dlb_capsule *make_capsule_object(lua_State *L, int mt, dlb_lua_state *state) {
  dlb_capsule *c = lua_newuserdatauv(L, sizeof *c, 0);
  memset(c, 0, sizeof *c);
  c->tag = CAPSULE_TAG;
  lua_pushvalue(L, mt);
  lua_setmetatable(L, -2);
  dlbL_track_new(L, state);
  return c;
}

/* new_capsule_object(metatable, state): the same, run by dlbL_call_maker. */
static int new_capsule_object(lua_State *L) {
  make_capsule_object(L, 1, dlbL_to_address(L, 2));
  return 1;
}

dlb_capsule *dlbL_push_empty_capsule(lua_State *L, const char *op) {
  dlb_lua_state *state = dlbL_state(L);
  dlbL_pace_collector(L, state);
  if (!dlbL_alloc_may_fail(L)) { /* the usual case inline (see dlbL_call_maker) */
    dlb_capsule *c;
    lua_rawgeti(L, LUA_REGISTRYINDEX, state->capsule_mt);
    c = make_capsule_object(L, lua_gettop(L), state);
    lua_remove(L, -2); /* the metatable */
    return c;
  }
  int extra = dlbL_push_callee(L, new_capsule_object);
  lua_rawgeti(L, LUA_REGISTRYINDEX, state->capsule_mt); /* an integer key: no string lookup */
  dlbL_push_address(L, state);
  dlbL_call_maker(L, 1 + DLBL_ADDRESS_SLOTS + extra, op, "a new capsule");
  return lua_touserdata(L, -1);
}

/* Whether the capsule's device is known: not for a versioned tensor of
 * another major version, whose fields past version, manager_ctx and
 * deleter must not be read (dlpack.h: their layout may have changed). */
static int device_known(const dlb_capsule *c) {
  return !c->versioned || c->major == DLB_DLPACK_MAJOR;
}

void dlbL_capsule_fill(dlb_capsule *c, dlb_exported t) {
  c->tensor = t.tensor;
  c->versioned = t.versioned;
  if (t.versioned) {
    const DLManagedTensorVersioned *v = t.tensor;
    c->major = v->version.major;
    c->minor = v->version.minor;
    /* The capsule carries it as given; dl.from_dlpack reports the version. */
    if (c->major == DLB_DLPACK_MAJOR) c->device = v->dl_tensor.device;
  } else {
    c->device = ((const DLManagedTensor *)t.tensor)->dl_tensor.device;
  }
}

/* __gc: an unconsumed capsule gives the tensor back to its producer, once. */
static int dlpack_gc(lua_State *L) {
  dlbL_capsule_release(L, 1);
  return 0;
}

int dlbL_capsule_release(lua_State *L, int idx) {
  dlb_capsule *c = to_capsule(L, idx);
  if (c) capsule_release(c);
  return c != NULL;
}

/* capsule.versioned, .version ({major, minor}, nil for legacy), .consumed, .device ({type, id};
 * nil for another major version) */
static int index_unprotected(lua_State *L) {
  dlb_capsule *c = to_capsule(L, 1);
  const char *k = lua_tostring(L, 2);
  if (!c || !k) return 0;
  if (strcmp(k, "versioned") == 0) {
    lua_pushboolean(L, c->versioned);
  } else if (strcmp(k, "consumed") == 0) {
    lua_pushboolean(L, c->consumed);
  } else if (strcmp(k, "version") == 0) {
    if (!c->versioned) return 0;
    lua_createtable(L, 2, 0);
    lua_pushinteger(L, c->major);
    lua_rawseti(L, -2, 1);
    lua_pushinteger(L, c->minor);
    lua_rawseti(L, -2, 2);
  } else if (strcmp(k, "device") == 0) {
    if (!device_known(c)) return 0; /* another major version: nil */
    lua_createtable(L, 2, 0);
    lua_pushinteger(L, c->device.device_type);
    lua_rawseti(L, -2, 1);
    lua_pushinteger(L, c->device.device_id);
    lua_rawseti(L, -2, 2);
  } else {
    return 0;
  }
  return 1;
}

/* Protected: the version and device tables are allocations. */
static int dlpack_index(lua_State *L) {
  return dlbL_call_protected(L, index_unprotected, "Capsule:__index");
}

static int tostring_unprotected(lua_State *L) {
  dlb_capsule *c = to_capsule(L, 1);
  if (!c) return 0;
  if (!device_known(c))
    lua_pushfstring(L, "dlbridge.Capsule (DLPack %d.%d, not readable here, %s)", (int)c->major,
                    (int)c->minor, c->consumed ? "consumed" : "unconsumed");
  else if (c->versioned)
    lua_pushfstring(L, "dlbridge.Capsule (DLPack %d.%d, device (%d, %d), %s)", (int)c->major,
                    (int)c->minor, (int)c->device.device_type, (int)c->device.device_id,
                    c->consumed ? "consumed" : "unconsumed");
  else
    lua_pushfstring(L, "dlbridge.Capsule (legacy DLPack, device (%d, %d), %s)",
                    (int)c->device.device_type, (int)c->device.device_id,
                    c->consumed ? "consumed" : "unconsumed");
  return 1;
}

static int dlpack_tostring(lua_State *L) {
  return dlbL_call_protected(L, tostring_unprotected, "Capsule:__tostring");
}

void dlbL_open_capsule(lua_State *L) {
  static const luaL_Reg meta[] = {{"__gc", dlpack_gc},
                                  {"__index", dlpack_index},
                                  {"__tostring", dlpack_tostring},
                                  {NULL, NULL}};
  dlb_lua_state *state = dlbL_state(L);
  if (luaL_newmetatable(L, DLB_CAPSULE_MT)) {
    luaL_setfuncs(L, meta, 0);
    dlbL_protect_metatable(L, -1, "dlbridge.Capsule");
  }
  state->capsule_mt = luaL_ref(L, LUA_REGISTRYINDEX);
}

dlb_status dlbL_capsule_take(lua_State *L, int idx, dlb_exported *out, dlb_error *err) {
  dlb_capsule *c = to_capsule(L, idx);
  if (!c) {
    dlb_fail(err, DLB_E_ARGUMENT, "a dlbridge.Capsule expected, got %s", luaL_typename(L, idx));
    dlb_error_hint(err, "a capsule comes from a:to_dlpack() or a producer's __dlpack(opts)");
    return DLB_E_ARGUMENT;
  }
  if (c->consumed || !c->tensor) {
    dlb_fail(err, DLB_E_CAPSULE_CONSUMED, "the capsule was already consumed");
    dlb_error_hint(err, "a capsule can be consumed once; export the array again");
    return DLB_E_CAPSULE_CONSUMED;
  }
  /* Marked used before anything that can fail (pytorch #56789). */
  out->tensor = c->tensor;
  out->versioned = c->versioned;
  c->tensor = NULL;
  c->consumed = 1;
  return DLB_OK;
}

/* ---- export ---------------------------------------------------------------- */

dlb_status dlbL_export(lua_State *L, int idx, const dlb_export_options *o, dlb_exported *out,
                       dlb_error *err) {
  dlb_array *a;
  dlb_export_request req;
  int may_copy;
  idx = lua_absindex(L, idx);
  a = dlbL_to_array(L, idx);
  if (!a) {
    dlb_fail(err, DLB_E_ARGUMENT, "a dlbridge.Array expected, got %s", luaL_typename(L, idx));
    dlb_error_hint(err, "pass the stack index of an array (dl.array{...} makes one)");
    return DLB_E_ARGUMENT;
  }
  if (!a->buffer) return dlb_fail(err, DLB_E_DELETED, "the array was deleted");
  may_copy = o->copy != 0 &&
             (o->fallback_cpu || o->has_dl_device || o->copy == 1 || o->layout != DLB_LAYOUT_ANY ||
              (o->max_version_major == 0 && (a->readonly || a->buffer->readonly)));
  if (may_copy) {
    /* A copy may be made: room for it first (finalizers may run, and delete a). */
    dlbL_reserve(L, a->numel, dlb_array_itemsize(a));
    a = dlbL_to_array(L, idx); /* fetched again after the collection (records.c) */
    if (!a->buffer) return dlb_fail(err, DLB_E_DELETED, "the array was deleted");
  }
  req.versioned = o->max_version_major != 0;
  req.copy = o->copy < 0 ? DLB_COPY_IF_NEEDED : o->copy ? DLB_COPY_ALWAYS : DLB_COPY_NEVER;
  req.has_dl_device = o->has_dl_device;
  req.dl_device = o->dl_device;
  req.fallback_host = o->fallback_cpu;
  req.host = NULL;
  req.layout = o->layout;
  req.has_stream = o->has_stream;
  req.stream = o->stream;
  /* The host backend matters only to copies: look the state up only then
   * (from a host's C function that is a registry lookup by name). */
  if (may_copy) {
    dlb_lua_state *state = dlbL_find_state(L);
    req.host = state ? state->cpu : NULL; /* NULL once closed: copies fail, coded */
    if (!req.host) return dlb_fail(err, DLB_E_UNSUPPORTED, "dlbridge is closed in this lua_State");
  }
  if (dlb_dlpack_export(a, &req, out, err) != DLB_OK) return err->code;
  /* A consumer that asked for 1.x with a lower minor gets that minor: the
   * managed tensor's layout is the same in every 1.x. */
  if (out->versioned && o->max_version_major == DLB_DLPACK_MAJOR && o->max_version_minor >= 0 &&
      o->max_version_minor < DLB_DLPACK_MINOR)
    ((DLManagedTensorVersioned *)out->tensor)->version.minor = (uint32_t)o->max_version_minor;
  return DLB_OK;
}

/* Option key of the options at idx as a pair {a, b} of integers in
 * [0, 2^31) into pair: 1 when given. */
static int int_pair(lua_State *L, int idx, const char *key, int64_t *pair, const char *op) {
  int n = dlbL_opt_integers(L, idx, key, pair, 2, op);
  if (n < 0) return 0;
  if (n != 2 || pair[0] < 0 || pair[1] < 0 || pair[0] > INT32_MAX || pair[1] > INT32_MAX)
    dlbL_raise(L, DLB_E_ARGUMENT, op, "option %s must be a pair of integers {a, b} >= 0", key);
  return 1;
}

/* Whether the options at idx give key (its value may be any). */
static int has_option(lua_State *L, int idx, const char *key) {
  int given = dlbL_opt_get(L, idx, key) != LUA_TNIL;
  lua_pop(L, 1);
  return given;
}

/* Reads to_dlpack's options table at idx into o. */
static void check_export_options(lua_State *L, int idx, dlb_export_options *o, const char *op) {
  static const char *const keys[] = {"max_version", "dl_device", "copy", "stream",
                                     "fallback",    "layout",    NULL};
  static const char *const layouts[] = {"any", "nonnegative", "contiguous", NULL};
  static const char *const fallbacks[] = {"cpu", NULL};
  int64_t pair[2];
  int first, top = lua_gettop(L);
  dlb_export_options_init(o);
  if (!(first = dlbL_opt_collect(L, idx, keys, op))) return; /* one walk of the table */
  if (int_pair(L, DLBL_COLLECTED(keys, first, "max_version"), pair, op)) {
    o->max_version_major = (int32_t)pair[0];
    o->max_version_minor = (int32_t)pair[1];
  }
  if (int_pair(L, DLBL_COLLECTED(keys, first, "dl_device"), pair, op)) {
    o->has_dl_device = 1;
    o->dl_device.device_type = (DLDeviceType)pair[0];
    o->dl_device.device_id = (int32_t)pair[1];
  }
  o->copy = dlbL_opt_boolean(L, DLBL_COLLECTED(keys, first, "copy"), o->copy, op);
  o->has_stream = has_option(L, DLBL_COLLECTED(keys, first, "stream"));
  o->stream = dlbL_opt_integer(L, DLBL_COLLECTED(keys, first, "stream"), o->stream, op);
  o->layout = dlbL_opt_choice(L, DLBL_COLLECTED(keys, first, "layout"), layouts, o->layout, op);
  o->fallback_cpu =
      dlbL_opt_choice(L, DLBL_COLLECTED(keys, first, "fallback"), fallbacks, -1, op) == 0;
  lua_settop(L, top);
}

/* a:to_dlpack(opts) and a:__dlpack(opts): a capsule owning the tensor.
 * Without max_version, to_dlpack makes a versioned one and __dlpack a
 * legacy one (protocol: the Python array API's __dlpack__ gives a consumer
 * that names no max_version the legacy "dltensor" capsule). */
static int dlpack_export(lua_State *L, const char *op, int protocol) {
  dlb_export_options o;
  dlb_exported t;
  dlb_error err;
  dlb_capsule *c;
  dlbL_check_live(L, 1, op);
  dlbL_check_nargs(L, 2, op);
  check_export_options(L, 2, &o, op);
  if (protocol && o.max_version_major < 0) o.max_version_major = 0;
  lua_settop(L, 1);
  /* The capsule first: once the tensor exists, nothing may fail before it is owned. */
  c = dlbL_push_empty_capsule(L, op);
  if (dlbL_export(L, 1, &o, &t, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
  dlbL_capsule_fill(c, t);
  return 1;
}

static int dlpack_to_dlpack(lua_State *L) { return dlpack_export(L, "Array:to_dlpack", 0); }
static int dlpack_dlpack(lua_State *L) { return dlpack_export(L, "Array:__dlpack", 1); }

/* a:__dlpack_device() -> device_type, device_id (DLPack numbering). */
static int dlpack_dlpack_device(lua_State *L) {
  dlb_array *a = dlbL_check_live(L, 1, "Array:__dlpack_device");
  dlbL_check_nargs(L, 1, "Array:__dlpack_device");
  lua_pushinteger(L, a->buffer->backend->ops.device_type);
  lua_pushinteger(L, a->buffer->device_id);
  return 2;
}

const luaL_Reg dlbL_dlpack_methods[] = {{"to_dlpack", dlpack_to_dlpack},
                                        {"__dlpack", dlpack_dlpack},
                                        {"__dlpack_device", dlpack_dlpack_device},
                                        {NULL, NULL}};

/* ---- import ---------------------------------------------------------------- */

dlb_status dlbL_import(lua_State *L, int idx, dlb_exported t, dlb_error *err) {
  dlb_lua_state *state = dlbL_find_state(L);
  idx = lua_absindex(L, idx);
  if (!state || !state->registry) {
    dlb_dlpack_delete(t);
    dlb_fail(err, DLB_E_ARGUMENT, "dlbridge is not open in this lua_State");
    dlb_error_hint(err, "dlbridge was closed with this lua_State: import before lua_close");
    return DLB_E_ARGUMENT;
  }
  if (atomic_load_explicit(&state->budget->limit, memory_order_relaxed))
    dlbL_reserve(L, (int64_t)dlb_dlpack_import_size(t), 1);
  /* the array fetched after the collection (records.c) */
  if (dlb_dlpack_import(t, state->cpu, state->registry, dlbL_to_array(L, idx), err) != DLB_OK)
    return err->code;
  /* Foreign memory held by an array counts for the GC like allocated memory. */
  return DLB_OK;
}

/* invoke_dunder(x, opts): x.__dlpack(x, opts), or x.__dlpack(x) when opts is
 * nil. Run in protected mode: the lookup itself can run the producer's code. */
static int invoke_dunder(lua_State *L) {
  int with_opts = !lua_isnil(L, 2);
  lua_getfield(L, 1, "__dlpack");
  lua_pushvalue(L, 1);
  if (with_opts) lua_pushvalue(L, 2);
  lua_call(L, with_opts ? 2 : 1, 1);
  return 1;
}

/* Calls x:__dlpack(opts) (opts at the stack top, popped) and leaves the
 * result or the error. */
static int call_dunder(lua_State *L, int x) {
  int extra = dlbL_push_callee(L, invoke_dunder);
  lua_pushvalue(L, x);
  lua_rotate(L, -(3 + extra), 2 + extra); /* ... invoke_dunder x opts */
  return lua_pcall(L, 2 + extra, 1, 0);
}

/* has_callable_dunder(x): whether x.__dlpack is a function or has __call
 * (protected: the lookup can run the producer's code). */
static int has_callable_dunder(lua_State *L) {
  lua_getfield(L, 1, "__dlpack");
  lua_pushboolean(L, lua_isfunction(L, -1) || luaL_getmetafield(L, -1, "__call") != LUA_TNIL);
  return 1;
}

/* What dl.from_dlpack asks a producer for: its opts, in DLPack's terms. */
typedef struct protocol_request {
  int copy;          /* opts.copy: -1 nil, 0 false, 1 true */
  int has_dl_device; /* opts.device given: dl_device is that device */
  DLDevice dl_device;
  int has_stream; /* opts.stream given */
  lua_Integer stream;
  int producer_queue_known; /* producer_queue looked up (once) */
  int has_producer_queue;
  lua_Integer producer_queue;
  /* The producer's memory is host-reachable CUDA memory (pinned, managed)
   * and was asked to be ready on dlbridge's queue of this cuda device: the
   * host waits for that queue before it reads. */
  dlb_backend *host_wait;
  int host_wait_device;
} protocol_request;

/* The calls a producer may get, in this order (each after the one before
 * failed as capsule_from_protocol says). */
enum {
  ASK_FORWARDED, /* max_version, copy, dl_device, stream: the 2023.12 protocol */
  ASK_VERSIONED, /* max_version, stream: copy and device move are dlbridge's */
  ASK_LEGACY     /* no options (stream only, when given): a legacy producer */
};

/* The stream a producer on device (type, id) is asked to order its work
 * before: dlbridge's queue on that device (the registry's backend of the
 * type), pushed as an integer; nothing pushed (0) when it has none. Pinned
 * (kDLCUDAHost, one for all devices: cuda:0's queue) and managed memory
 * (kDLCUDAManaged) are read by the host here: the producer orders its work
 * before the cuda device's queue, and the host waits for that (r). */
static int push_own_queue(lua_State *L, protocol_request *r, lua_Integer type, lua_Integer id) {
  dlb_lua_state *state = dlbL_find_state(L);
  int host_reachable = type == kDLCUDAHost || type == kDLCUDAManaged;
  dlb_backend *b;
  void *queue;
  if (host_reachable) {
    if (type == kDLCUDAHost) id = 0;
    type = kDLCUDA;
  }
  b = state && state->registry ? dlb_registry_adopter(state->registry, (int32_t)type) : NULL;
  queue = b && id >= 0 && id < dlb_backend_device_count(b) ? dlb_backend_queue(b, (int)id) : NULL;
  if (!queue) return 0;
  if (host_reachable) {
    r->host_wait = b;
    r->host_wait_device = (int)id;
  }
  lua_pushinteger(L, (lua_Integer)(intptr_t)queue);
  return 1;
}

/* The producer's device, from its __dlpack_device() when it has one, and
 * dlbridge's queue there (see push_own_queue): 1 when pushed. */
static int producer_queue(lua_State *L, protocol_request *r, int x) {
  int type_ok, id_ok;
  lua_Integer type, id;
  if (lua_getfield(L, x, "__dlpack_device") != LUA_TFUNCTION) {
    lua_pop(L, 1);
    return 0;
  }
  lua_pushvalue(L, x);
  lua_call(L, 1, 2); /* protected by the caller */
  type = dlbL_tointegerx(L, -2, &type_ok);
  id = dlbL_tointegerx(L, -1, &id_ok);
  lua_pop(L, 2);
  return type_ok && id_ok ? push_own_queue(L, r, type, id) : 0;
}

/* Pushes the stream of a call: the caller's, else dlbridge's queue on the
 * device the capsule is asked to be on (dl_device when passed, else the
 * producer's); 1 when pushed. */
static int push_stream(lua_State *L, int x, protocol_request *r, int with_dl_device) {
  if (r->has_stream) {
    lua_pushinteger(L, r->stream);
    return 1;
  }
  if (with_dl_device) return push_own_queue(L, r, r->dl_device.device_type, r->dl_device.device_id);
  if (!r->producer_queue_known) { /* __dlpack_device is asked once */
    r->producer_queue_known = 1;
    if ((r->has_producer_queue = producer_queue(L, r, x)) != 0) {
      r->producer_queue = dlbL_tointeger(L, -1);
      lua_pop(L, 1);
    }
  }
  if (r->has_producer_queue) lua_pushinteger(L, r->producer_queue);
  return r->has_producer_queue;
}

/* Pushes an integer pair {a, b}. */
static void push_pair(lua_State *L, lua_Integer a, lua_Integer b) {
  lua_createtable(L, 2, 0);
  lua_pushinteger(L, a);
  lua_rawseti(L, -2, 1);
  lua_pushinteger(L, b);
  lua_rawseti(L, -2, 2);
}

/* Pushes the opts of call `ask` (nil for a legacy call without a stream). */
static void push_ask_options(lua_State *L, int x, protocol_request *r, int ask) {
  int forward = ask == ASK_FORWARDED;
  if (ask == ASK_LEGACY) {
    if (!push_stream(L, x, r, 0)) {
      lua_pushnil(L);
      return;
    }
    lua_createtable(L, 0, 1);
    lua_rotate(L, -2, 1);
    lua_setfield(L, -2, "stream");
    return;
  }
  lua_createtable(L, 0, 4);
  push_pair(L, DLB_DLPACK_MAJOR, DLB_DLPACK_MINOR);
  lua_setfield(L, -2, "max_version");
  if (forward && r->copy >= 0) {
    lua_pushboolean(L, r->copy);
    lua_setfield(L, -2, "copy");
  }
  if (forward && r->has_dl_device) {
    push_pair(L, r->dl_device.device_type, r->dl_device.device_id);
    lua_setfield(L, -2, "dl_device");
  }
  if (push_stream(L, x, r, forward && r->has_dl_device)) lua_setfield(L, -2, "stream");
}

/* Whether the value at idx is a dlbridge.Error of code. */
static int error_has_code(lua_State *L, int idx, dlb_status code) {
  int yes;
  if (!dlbL_is_error(L, idx)) return 0;
  lua_getfield(L, idx, "code");
  yes = lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), dlb_status_name(code)) == 0;
  lua_pop(L, 1);
  return yes;
}

/*
 * Asks a producer for a capsule through its __dlpack method and leaves the
 * capsule on the stack. With opts.copy or opts.device (r) the first call
 * passes them on (copy, dl_device), as the Python array API's from_dlpack
 * does. A plain Lua error (Python's TypeError: a producer that does not
 * know those keys) gets a second call with max_version only, and a plain
 * error from that call a last one without options (a legacy producer). A
 * dlbridge.Error is the producer's refusal (Python's BufferError) and is
 * raised as is (COPY_REQUIRED for copy = false), except UNSUPPORTED for a
 * passed dl_device (it cannot put the tensor there): the call with
 * max_version only follows, and dlbridge moves the tensor itself. A plain
 * error from the last call becomes ARGUMENT, the producer's in err.cause.
 */
static void capsule_from_protocol(lua_State *L, int x, protocol_request *r, const char *op) {
  int ask = r->copy >= 0 || r->has_dl_device ? ASK_FORWARDED : ASK_VERSIONED;
  for (;; ask++) {
    push_ask_options(L, x, r, ask);
    if (call_dunder(L, x) == LUA_OK) break;
    if (dlbL_is_error(L, -1)) {
      if (!(ask == ASK_FORWARDED && r->has_dl_device && error_has_code(L, -1, DLB_E_UNSUPPORTED)))
        lua_error(L); /* the producer's own dlbridge error: as is */
    } else if (ask == ASK_LEGACY) {
      /* A plain error from the producer: ARGUMENT, with the original as err.cause. */
      dlb_error err;
      dlb_fail(&err, DLB_E_ARGUMENT, "the producer's __dlpack failed: %.200s",
               lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : luaL_typename(L, -1));
      dlb_error_hint(&err, "err.cause holds the error the producer's __dlpack(opts) raised");
      dlbL_push_error(L, &err, op);
      lua_rotate(L, -2, 1);
      lua_setfield(L, -2, "cause");
      lua_error(L);
    }
    lua_pop(L, 1);
  }
  if (!to_capsule(L, -1))
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op,
                    "a producer's __dlpack(opts) returns a dlbridge.Capsule, as a:to_dlpack(opts) "
                    "does",
                    "__dlpack returned %s, not a dlbridge.Capsule", luaL_typename(L, -1));
}

/* protocol_capsule(x, request): the capsule x's __dlpack method gives (run
 * in protected mode by dl.from_dlpack). */
static int protocol_capsule(lua_State *L) {
  protocol_request *r = dlbL_to_address(L, 2);
  int has_method = lua_type(L, 1) == LUA_TTABLE || lua_type(L, 1) == LUA_TUSERDATA;
  if (has_method) {
    int extra = dlbL_push_callee(L, has_callable_dunder);
    lua_pushvalue(L, 1);
    if (lua_pcall(L, 1 + extra, 1, 0) != LUA_OK) {
      dlb_error err;
      dlb_fail(&err, DLB_E_ARGUMENT, "looking up the producer's __dlpack failed");
      dlb_error_hint(&err, "err.cause holds the error the producer's __index raised");
      dlbL_push_error(L, &err, "dl.from_dlpack");
      lua_rotate(L, -2, 1);
      lua_setfield(L, -2, "cause");
      lua_error(L);
    }
    has_method = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  if (!has_method)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, "dl.from_dlpack",
                    "pass a capsule (a:to_dlpack()), an array, or a value whose __dlpack(opts) "
                    "method returns a capsule",
                    "expected a capsule or a value with a callable __dlpack method, got %s",
                    luaL_typename(L, 1));
  capsule_from_protocol(L, 1, r, "dl.from_dlpack");
  return 1;
}

/* Whether t is a 1.x versioned tensor that says it is a copy (IS_COPIED).
 * The version first: another major's flags must not be read. */
static int says_copied(dlb_exported t) {
  const DLManagedTensorVersioned *v = t.tensor;
  return t.versioned && v && v->version.major == DLB_DLPACK_MAJOR &&
         (v->flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0;
}

/* dl.from_dlpack(x, opts): an array over the producer's memory. x is a
 * capsule or any value with a __dlpack method. opts = {device=, copy=,
 * stream=}. */
static int dlpack_from_dlpack(lua_State *L) {
  static const char *const keys[] = {"device", "copy", "stream", NULL};
  dlb_exported t;
  dlb_error err;
  int x = 1, has_device = 0, copied = 0;
  protocol_request req = {-1, 0, {kDLCPU, 0}, 0, 0, 0, 0, 0, NULL, 0};
  dlbL_options opts;
  dlbL_check_nargs(L, 2, "dl.from_dlpack");
  dlbL_check_options(L, 0, &opts, "dl.from_dlpack"); /* defaults: cpu */
  if (dlbL_check_option_table(L, 2, keys, "dl.from_dlpack")) {
    req.copy = dlbL_opt_boolean(L, 2, "copy", req.copy, "dl.from_dlpack");
    has_device = dlbL_opt_device(L, 2, "device", &opts, "dl.from_dlpack");
    req.has_stream = has_option(L, 2, "stream");
    req.stream = (lua_Integer)dlbL_opt_integer(L, 2, "stream", req.stream, "dl.from_dlpack");
  }
  if (has_device) { /* the device in DLPack's terms, for a producer */
    req.has_dl_device = 1;
    req.dl_device.device_type = (DLDeviceType)opts.backend->ops.device_type;
    req.dl_device.device_id = opts.device_id;
  }
  lua_settop(L, 1);
  /* The array first (at 2): once a tensor is taken, nothing may fail before it is owned. */
  dlbL_push_empty(L, "dl.from_dlpack");
  if (dlbL_to_array(L, x)) {
    /* An Array producer: what its __dlpack would do (a versioned export, no
     * copy unless asked), without the capsule and the protocol's tables. */
    dlb_export_options o;
    dlb_export_options_init(&o);
    if (dlbL_export(L, x, &o, &t, &err) != DLB_OK) dlbL_raise_error(L, &err, "dl.from_dlpack");
  } else if (!to_capsule(L, x)) {
    /* The protocol allocates (option tables, error causes): protected. */
    int extra = dlbL_push_callee(L, protocol_capsule);
    lua_pushvalue(L, x);
    dlbL_push_address(L, &req);
    dlbL_pcall(L, 1 + DLBL_ADDRESS_SLOTS + extra, 1, "dl.from_dlpack");
    if (req.host_wait &&
        dlb_backend_wait_queue(req.host_wait, req.host_wait_device, &err) != DLB_OK)
      dlbL_raise_error(L, &err, "dl.from_dlpack"); /* the capsule is garbage: its deleter runs */
    if (dlbL_capsule_take(L, -1, &t, &err) != DLB_OK) dlbL_raise_error(L, &err, "dl.from_dlpack");
    lua_pop(L, 1); /* the capsule: the array is on top again */
    /* A producer's copy (IS_COPIED) is the consumer's own memory: copy =
     * true needs no second one, and copy = false was not honoured. */
    copied = says_copied(t);
    if (copied && req.copy == 0) {
      dlb_dlpack_delete(t);
      dlbL_raise_hint(L, DLB_E_COPY_REQUIRED, "dl.from_dlpack",
                      "the producer could not give its memory without a copy: allow one "
                      "(copy = nil or true)",
                      "copy = false, but the producer's tensor is a copy (IS_COPIED)");
    }
  } else if (dlbL_capsule_take(L, x, &t, &err) != DLB_OK) {
    dlbL_raise_error(L, &err, "dl.from_dlpack");
  }
  if (dlbL_import(L, 2, t, &err) != DLB_OK) dlbL_raise_error(L, &err, "dl.from_dlpack");
  {
    dlb_array *src = dlbL_to_array(L, 2), *c; /* a, fetched after the import's allocations */
    int elsewhere = has_device && (opts.backend != src->buffer->backend ||
                                   opts.device_id != src->buffer->device_id);
    /* copy = true: a producer's writable copy is the array's own memory */
    int own = copied && !src->readonly && !src->buffer->readonly;
    if (!elsewhere && (req.copy != 1 || own)) return 1; /* zero copy */
    if (!has_device) { /* copy = true alone: a copy where the tensor is */
      opts.backend = src->buffer->backend;
      opts.device_id = src->buffer->device_id;
    }
    if (req.copy == 0) {
      char where[64];
      snprintf(where, sizeof where, "%s:%d", src->buffer->backend->name, src->buffer->device_id);
      dlb_array_release(src); /* the producer gets its tensor back now */
      dlbL_raise(L, DLB_E_COPY_REQUIRED, "dl.from_dlpack",
                 "the tensor is on %s: %s:%d needs a copy", where, opts.backend->name,
                 opts.device_id);
    }
    /* A copy onto the requested device; the producer gets its tensor back now. */
    c = dlbL_push_empty(L, "dl.from_dlpack");
    src = dlbL_to_array(L, 2);
    dlbL_reserve(L, src->numel, dlb_array_itemsize(src));
    src = dlbL_to_array(L, 2); /* after an allocation and a collection: fetched again */
    if (dlb_array_clone_to(c, src, opts.backend, opts.device_id, &err) != DLB_OK) {
      dlb_array_release(src);
      dlbL_raise_error(L, &err, "dl.from_dlpack");
    }
    dlb_array_release(src);
  }
  return 1;
}

const luaL_Reg dlbL_dlpack_functions[] = {{"from_dlpack", dlpack_from_dlpack}, {NULL, NULL}};
