/* safetensors.c -- safetensors files and strings: dl.load_safetensors,
 * dl.save_safetensors, dl.fromsafetensors, dl.tosafetensors, and the C API's
 * dlb_load_safetensors / dlb_push_safetensors. The format lives in
 * src/files/safetensors.c, the view-or-copy policy of loads in
 * src/files/load_policy.c (no Lua); here are the Lua tables.
 *
 * A load opens its source (a file, a Lua string, the host's memory), parses
 * the header, then builds the two tables in protected mode: the C resources
 * (the source, the parsed header) are released whatever happens there, and
 * arrays made before a failure are released at once (no mapping outlives a
 * failed load, and a host's release runs before the C API returns its
 * error). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "../files/mapping.h"
#include "../files/safetensors.h"
#include "files.h"
#include "hostapi.h"

/* ---- loading ------------------------------------------------------------------ */

/* What the protected build of the tables reads and reports. */
typedef struct load_job {
  const char *op;
  dlb_load_source source;
  dlb_safetensors_header header;
  dlb_array **made; /* arrays filled so far */
  size_t nmade;
  dlb_status status; /* of the core calls in the build */
  dlb_error err;
} load_job;

/* build(job) -> tensors, metadata. Run in protected mode; a failure of the
 * core is recorded in job (and nothing returned), Lua's own errors raise. */
static int build_unprotected(lua_State *L) {
  load_job *job = dlbL_to_address(L, 1);
  const dlb_safetensors_header *h = &job->header;
  int tensors = DLBL_ADDRESS_SLOTS + 1, metadata = tensors + 1; /* after job */
  lua_createtable(L, 0, h->ntensors > INT_MAX ? INT_MAX : (int)h->ntensors);
  lua_createtable(L, 0, h->nmetadata > INT_MAX ? INT_MAX : (int)h->nmetadata);
  for (size_t i = 0; i < h->nmetadata; i++) {
    lua_pushlstring(L, h->metadata[i].key, h->metadata[i].key_len);
    lua_pushlstring(L, h->metadata[i].value, h->metadata[i].value_len);
    lua_rawset(L, metadata);
  }
  for (size_t i = 0; i < h->ntensors; i++) {
    dlb_load_item item;
    dlb_array *a;
    lua_pushlstring(L, h->tensors[i].name, h->tensors[i].name_len);
    a = dlbL_push_empty(L, job->op);
    dlb_safetensors_item(h, i, &item);
    if ((job->status = dlb_load_array(&job->source, &item, a, &job->err)) != DLB_OK) return 0;
    job->made[job->nmade++] = a;
    lua_rawset(L, tensors);
  }
  return 2;
}

/* The status a dlbridge.Error (or anything else) raised in the build stands
 * for, recorded in err; the value is popped. */
static dlb_status build_raised(lua_State *L, dlb_error *err) {
  dlb_status code = DLB_E_OUT_OF_MEMORY;
  const char *message = "Lua has no memory for the tables of tensors";
  if (lua_type(L, -1) == LUA_TTABLE) {
    if (lua_getfield(L, -1, "code") == LUA_TSTRING)
      for (int c = 1; c < DLB_STATUS_COUNT; c++)
        if (strcmp(lua_tostring(L, -1), dlb_status_name((dlb_status)c)) == 0) code = (dlb_status)c;
    lua_pop(L, 1);
    if (lua_getfield(L, -1, "message") == LUA_TSTRING) message = lua_tostring(L, -1);
    dlb_fail(err, code, "%s", message);
    lua_pop(L, 1);
  } else {
    dlb_fail(err, code, "%s", message);
  }
  lua_pop(L, 1);
  return code;
}

/* Builds the tables of job's parsed header (pushes tensors, metadata), or
 * pushes nothing and returns the failure in err. Never raises. */
static dlb_status build_tables(lua_State *L, load_job *job, dlb_error *err) {
  dlb_status st;
  int top = lua_gettop(L);
  if (!(job->made = malloc((job->header.ntensors + 1) * sizeof *job->made)))
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory to load %zu tensors",
                    job->header.ntensors);
  int extra = dlbL_push_callee(L, build_unprotected); /* no allocation */
  dlbL_push_address(L, job);
  int raised = lua_pcall(L, DLBL_ADDRESS_SLOTS + extra, 2, 0) != LUA_OK;
  st = raised ? DLB_E_OUT_OF_MEMORY : job->status; /* (raised: build_raised says) */
  if (st != DLB_OK) {
    /* The arrays made so far are garbage now: let go of the memory at once,
     * before anything (build_raised) can run a finalizer (records.c). */
    for (size_t i = 0; i < job->nmade; i++) dlb_array_release(job->made[i]);
    if (raised) st = build_raised(L, err);
    else *err = job->err;
    lua_settop(L, top);
  }
  free(job->made);
  return st;
}

/* Pushes tensors, metadata from the source job opened with status st, or
 * pushes nothing and returns the failure in err. Never raises. Closes the
 * source. */
static dlb_status load_source(lua_State *L, load_job *job, dlb_status st, dlb_error *err) {
  if (st == DLB_OK) st = dlb_safetensors_read_header(&job->source, &job->header, err);
  if (st == DLB_OK) {
    st = build_tables(L, job, err);
    dlb_safetensors_free(&job->header);
  }
  dlb_load_close(&job->source);
  return st;
}

/* Loads the file at path (pushes tensors, metadata), or pushes nothing and
 * returns the failure in err. Never raises. */
static dlb_status load_file(lua_State *L, dlb_lua_state *state, const char *path,
                            const dlbL_load_options *opts, const char *op, dlb_error *err) {
  load_job job = {.op = op};
  dlb_load_options policy;
  dlbL_load_policy_options(L, state, opts, &policy);
  return load_source(L, &job, dlb_load_open_file(&job.source, state->cpu, path, &policy, err), err);
}

/* The same for size bytes at bytes; viewable: those bytes as a buffer arrays
 * may view, or NULL (copies). The caller keeps its own reference. */
static dlb_status load_bytes(lua_State *L, dlb_lua_state *state, const void *bytes, size_t size,
                             dlb_buffer *viewable, const dlbL_load_options *opts, const char *op,
                             dlb_error *err) {
  load_job job = {.op = op};
  dlb_load_options policy;
  dlbL_load_policy_options(L, state, opts, &policy);
  return load_source(
      L, &job, dlb_load_open_memory(&job.source, state->cpu, bytes, size, viewable, &policy, err),
      err);
}

/* dl.load_safetensors(path, opts) -> tensors, metadata */
static int safetensors_load_safetensors(lua_State *L) {
  const char *op = "dl.load_safetensors";
  dlbL_load_options opts;
  dlb_error err;
  const char *path;
  dlbL_check_nargs(L, 2, op);
  path = dlbL_check_path(L, 1, op, "dl.load_safetensors(\"model.safetensors\")");
  dlbL_check_load_options(L, 2, &opts, op);
  dlbL_check_file_access(L, op);
  if (load_file(L, dlbL_state(L), path, &opts, op, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
  return 2;
}

/* dl.fromsafetensors(s, opts) -> tensors, metadata (always copies) */
static int safetensors_fromsafetensors(lua_State *L) {
  const char *op = "dl.fromsafetensors";
  dlbL_load_options opts;
  dlb_error err;
  size_t len;
  const char *s;
  dlbL_check_nargs(L, 2, op);
  if (lua_type(L, 1) != LUA_TSTRING)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op,
                    "s is the bytes of a safetensors file, such as "
                    "dl.tosafetensors(tensors) or io.open(path, \"rb\"):read(\"a\")",
                    "s must be a string, got %s", luaL_typename(L, 1));
  s = lua_tolstring(L, 1, &len);
  dlbL_check_load_options(L, 2, &opts, op);
  if (opts.copy == DLB_COPY_NEVER)
    dlbL_raise_hint(L, DLB_E_COPY_REQUIRED, op,
                    "dl.load_safetensors(path) maps a file: its "
                    "arrays are views of it",
                    "the arrays of a string are always copies");
  opts.copy = DLB_COPY_ALWAYS;
  /* s stays at index 1 (alive) while the arrays are copied out of it. */
  if (load_bytes(L, dlbL_state(L), s, len, NULL, &opts, op, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  return 2;
}

/* ---- the C API ---------------------------------------------------------------- */

/* The options of a C API load onto the cpu. */
static dlbL_load_options capi_options(dlb_lua_state *state, uint32_t flags) {
  dlbL_load_options opts;
  opts.copy = (flags & DLB_LOAD_COPY) ? DLB_COPY_ALWAYS : DLB_COPY_IF_NEEDED;
  opts.backend = state->cpu;
  opts.device_id = 0;
  return opts;
}

DLB_API dlb_status dlb_load_safetensors(lua_State *L, const char *path, uint32_t flags) {
  const char *op = "dlb_load_safetensors";
  dlbL_load_options opts;
  dlb_error err;
  dlb_lua_state *state = dlbL_open_state(L, &err);
  if (!state) return dlbL_capi_failed(L, &err, op);
  if (!path || (flags & ~DLB_LOAD_COPY)) {
    dlb_fail(&err, DLB_E_ARGUMENT, path ? "unknown flags 0x%x" : "path is NULL", (unsigned)flags);
    dlb_error_hint(&err, "a file's path; flags 0 (read-only views of the file) or DLB_LOAD_COPY");
    return dlbL_capi_failed(L, &err, op);
  }
  opts = capi_options(state, flags);
  if (load_file(L, state, path, &opts, op, &err) != DLB_OK) return dlbL_capi_failed(L, &err, op);
  return DLB_OK;
}

DLB_API dlb_status dlb_push_safetensors(lua_State *L, const void *data, size_t size, uint32_t flags,
                                        void (*release)(void *ctx), void *ctx) {
  const char *op = "dlb_push_safetensors";
  dlbL_load_options opts;
  dlb_buffer *source = NULL;
  dlb_error err;
  dlb_status st;
  dlb_lua_state *state = dlbL_open_state(L, &err);
  if (state && ((!data && size) || (flags & ~DLB_LOAD_COPY))) {
    dlb_fail(&err, DLB_E_ARGUMENT, flags & ~DLB_LOAD_COPY ? "unknown flags 0x%x" : "data is NULL",
             (unsigned)flags);
    dlb_error_hint(&err, "the bytes of a whole safetensors file; flags 0 (read-only views of "
                         "them) or DLB_LOAD_COPY");
    state = NULL;
  }
  if (!state) {
    if (release) release(ctx);
    return dlbL_capi_failed(L, &err, op);
  }
  opts = capi_options(state, flags);
  if (flags & DLB_LOAD_COPY) { /* copied out: the memory goes back at once */
    st = load_bytes(L, state, data, size, NULL, &opts, op, &err);
    if (release) release(ctx);
    return st == DLB_OK ? DLB_OK : dlbL_capi_failed(L, &err, op);
  }
  dlbL_reserve(L, (int64_t)(size > INT64_MAX ? INT64_MAX : size), 1);
  st = dlb_buffer_wrap_host(state->cpu, (void *)data, size, 1, release, ctx, &source, &err);
  if (st != DLB_OK) return dlbL_capi_failed(L, &err, op); /* release has run */
  st = load_bytes(L, state, data, size, source, &opts, op, &err);
  dlb_buffer_release(source); /* release runs now unless an array views the memory */
  return st == DLB_OK ? DLB_OK : dlbL_capi_failed(L, &err, op);
}

/* ---- saving ------------------------------------------------------------------- */

#define SAVE_HINT                                                                                  \
  "tensors is a table name -> array, e.g. {weight = w, bias = b}; metadata "                       \
  "(optional) a table of strings, e.g. {format = \"pt\"}"

/* What a save writes: the tensors (sorted by the plan), their arrays (by the
 * tensors' index), the metadata and the layout. Lives in a Lua userdata. */
typedef struct save_plan {
  size_t n, nmetadata;
  dlb_safetensors_tensor *tensors;
  const dlb_array **arrays;
  size_t *order;
  dlb_safetensors_pair *metadata;
  uint64_t header_size, data_size;
} save_plan;

/* Collects the tensors table at idx into holds (a table on the stack): per
 * tensor its name, then a private view of its array (that Lua code run by
 * a finalizer cannot delete). Returns the count. */
static size_t hold_tensors(lua_State *L, int idx, int holds, const char *op) {
  size_t n = 0;
  if (lua_type(L, idx) != LUA_TTABLE)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, SAVE_HINT, "tensors must be a table, got %s",
                    luaL_typename(L, idx));
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING)
      dlbL_raise_hint(L, DLB_E_ARGUMENT, op, SAVE_HINT, "tensor names must be strings, got %s",
                      luaL_typename(L, -2));
    if (!dlbL_to_array(L, -1))
      dlbL_raise_hint(L, DLB_E_ARGUMENT, op, SAVE_HINT, "tensors['%.60s'] must be an array, got %s",
                      lua_tostring(L, -2), luaL_typename(L, -1));
    dlbL_pin(L, -1, op); /* DELETED when it was */
    lua_rawseti(L, holds, (lua_Integer)(2 * n + 2));
    lua_pushvalue(L, -2);
    lua_rawseti(L, holds, (lua_Integer)(2 * n + 1));
    lua_pop(L, 1);
    n++;
  }
  return n;
}

/* Collects the metadata table at idx (nil: none) into holds after the
 * tensors' entries (first: the index of the last one). Returns the count. */
static size_t hold_metadata(lua_State *L, int idx, int holds, lua_Integer first, const char *op) {
  size_t n = 0;
  if (lua_isnoneornil(L, idx)) return 0;
  if (lua_type(L, idx) != LUA_TTABLE)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, SAVE_HINT, "metadata must be a table, got %s",
                    luaL_typename(L, idx));
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
      dlbL_raise_hint(L, DLB_E_ARGUMENT, op,
                      "the format's metadata maps strings to strings: convert numbers with "
                      "tostring",
                      "metadata must map strings to strings, got %s -> %s", luaL_typename(L, -2),
                      luaL_typename(L, -1));
    lua_rawseti(L, holds, first + (lua_Integer)(2 * n + 2));
    lua_pushvalue(L, -1);
    lua_rawseti(L, holds, first + (lua_Integer)(2 * n + 1));
    n++;
  }
  return n;
}

/* Reads tensors (argument 1) and metadata (argument 2 after it) into a plan:
 * pushes holds and the plan's userdata. */
static save_plan *plan_save(lua_State *L, int tensors_idx, const char *op) {
  save_plan *plan;
  size_t n, m, bytes;
  dlb_error err;
  int holds;
  lua_newtable(L);
  holds = lua_gettop(L);
  n = hold_tensors(L, tensors_idx, holds, op);
  m = hold_metadata(L, tensors_idx + 1, holds, (lua_Integer)(2 * n), op);
  bytes = sizeof *plan + n * (sizeof *plan->tensors + sizeof *plan->arrays + sizeof *plan->order) +
          m * sizeof *plan->metadata;
  plan = lua_newuserdatauv(L, bytes, 0);
  plan->n = n;
  plan->nmetadata = m;
  plan->tensors = (dlb_safetensors_tensor *)(plan + 1);
  plan->metadata = (dlb_safetensors_pair *)(plan->tensors + n);
  plan->arrays = (const dlb_array **)(plan->metadata + m);
  plan->order = (size_t *)(plan->arrays + n);
  /* Nothing below runs Lua code: the strings and views stay in holds. */
  for (size_t i = 0; i < n; i++) {
    dlb_safetensors_tensor *t = &plan->tensors[i];
    const dlb_array *a;
    lua_rawgeti(L, holds, (lua_Integer)(2 * i + 1));
    t->name = lua_tolstring(L, -1, &t->name_len);
    lua_rawgeti(L, holds, (lua_Integer)(2 * i + 2));
    a = plan->arrays[i] = dlbL_to_pinned(L, -1); /* a view in holds: kept across allocations */
    lua_pop(L, 2);
    t->index = i;
    t->dtype = a->dtype;
    t->ndim = a->ndim;
    t->shape = a->shape;
  }
  for (size_t i = 0; i < m; i++) {
    dlb_safetensors_pair *p = &plan->metadata[i];
    lua_rawgeti(L, holds, (lua_Integer)(2 * n + 2 * i + 1));
    p->key = lua_tolstring(L, -1, &p->key_len);
    lua_rawgeti(L, holds, (lua_Integer)(2 * n + 2 * i + 2));
    p->value = lua_tolstring(L, -1, &p->value_len);
    lua_pop(L, 2);
  }
  if (dlb_safetensors_plan(plan->tensors, n, plan->metadata, m, plan->order, &plan->header_size,
                           &plan->data_size, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  if (n >= INT_MAX) dlbL_raise(L, DLB_E_ARGUMENT, op, "%zu tensors are too many for one file", n);
  if (plan->header_size + plan->data_size > (uint64_t)PTRDIFF_MAX)
    dlbL_raise(L, DLB_E_OUT_OF_MEMORY, op, "%llu bytes do not fit in memory",
               (unsigned long long)(plan->header_size + plan->data_size));
  return plan;
}

/* save(path, tensors, metadata): run protected (a Lua memory error is OUT_OF_MEMORY). */
static int save_unprotected(lua_State *L) {
  const char *op = "dl.save_safetensors";
  const char *path = lua_tostring(L, 1);
  save_plan *plan = plan_save(L, 2, op);
  dlb_error err;
  if (dlb_safetensors_save_file(path, plan->tensors, plan->n, plan->metadata, plan->nmetadata,
                                plan->order, plan->header_size, plan->arrays, DLB_FILE_CHUNK_BYTES,
                                &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  return 0;
}

/* dl.save_safetensors(path, tensors, metadata) */
static int safetensors_save_safetensors(lua_State *L) {
  const char *op = "dl.save_safetensors";
  dlbL_check_nargs(L, 3, op);
  dlbL_check_path(L, 1, op, "dl.save_safetensors(\"model.safetensors\", {weight = w})");
  dlbL_check_file_access(L, op);
  lua_settop(L, 3);
  dlbL_call_protected(L, save_unprotected, op);
  return 0;
}

/* dl.tosafetensors(tensors, metadata) -> the file's bytes (run protected). */
static int tosafetensors_unprotected(lua_State *L) {
  const char *op = "dl.tosafetensors";
  save_plan *plan = plan_save(L, 1, op);
  size_t total = (size_t)(plan->header_size + plan->data_size);
  luaL_Buffer b;
  dlb_error err;
  char *out;
  dlbL_reserve_lua(L, total, op, "a string"); /* Lua's heap: the host's limit too */
  out = dlbL_string_room(L, &b, total);
  if (!out) /* (LuaJIT: 2 GiB at most) */
    dlbL_raise(L, DLB_E_OUT_OF_MEMORY, op, "%zu bytes are more than a Lua string holds",
               (size_t)(total));
  dlb_safetensors_write_header(plan->tensors, plan->n, plan->metadata, plan->nmetadata,
                               plan->header_size, out);
  for (size_t k = 0; k < plan->n; k++) {
    const dlb_safetensors_tensor *t = &plan->tensors[plan->order[k]];
    if (dlb_safetensors_write_data(plan->arrays[t->index], out + plan->header_size + t->begin,
                                   &err) != DLB_OK)
      dlbL_raise_error(L, &err, op);
  }
  dlbL_pushresultsize(L, &b, total);
  return 1;
}

/* dl.tosafetensors(tensors, metadata) -> string */
static int safetensors_tosafetensors(lua_State *L) {
  dlbL_check_nargs(L, 2, "dl.tosafetensors");
  lua_settop(L, 2);
  dlbL_call_protected(L, tosafetensors_unprotected, "dl.tosafetensors");
  return 1;
}

const luaL_Reg dlbL_safetensors_functions[] = {{"load_safetensors", safetensors_load_safetensors},
                                               {"save_safetensors", safetensors_save_safetensors},
                                               {"fromsafetensors", safetensors_fromsafetensors},
                                               {"tosafetensors", safetensors_tosafetensors},
                                               {NULL, NULL}};
