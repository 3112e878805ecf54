/* safetensors.c -- safetensors files and strings: dl.load_safetensors,
 * dl.save_safetensors, dl.fromsafetensors, dl.tosafetensors, and the C API's
 * dlb_load_safetensors / dlb_push_safetensors.
 *
 * Loading parses the header (files/safetensors.c) over the bytes of a
 * mapping, a Lua string or the host's memory (or, for copies of a file, the
 * header read with pread: each tensor is then read straight into its new
 * memory), then builds the two tables in protected mode: the C resources
 * (the mapping reference, the parsed header) are released whatever happens
 * there, and arrays made before a failure are released at once (no mapping
 * outlives a failed load, and a host's release runs before the C API
 * returns its error). */
#define _POSIX_C_SOURCE 200809L /* pread */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../core/shape.h"
#include "../files/mapping.h"
#include "../files/safetensors.h"
#include "hostapi.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_BIG_ENDIAN 1 /* the format is little-endian: every element is swapped (copied) */
#else
#define HOST_BIG_ENDIAN 0
#endif

/* ---- loading ------------------------------------------------------------------ */

/* How a load makes its arrays. copy: IF_NEEDED views of the mapping where
 * the data allows (the default; other tensors are copied, read-only like
 * the views), ALWAYS writable copies, NEVER views or COPY_REQUIRED; backend
 * and device_id: the cpu, or copies on another device. */
typedef dlbL_load_options load_options;

/* What the protected build of the tables reads and reports. */
typedef struct load_job {
  dlb_lua_state *state;
  const char *op;
  load_options opts;
  dlb_safetensors_header header;
  const unsigned char *bytes; /* the whole file, or NULL: read from fd */
  int fd;
  const char *path;           /* of fd, for messages */
  dlb_buffer *source;         /* the bytes as a buffer arrays can view, or NULL */
  dlb_array **made;           /* arrays filled so far */
  size_t nmade;
  int viewed;                 /* some array views source */
  dlb_status status;          /* of the core calls in the build */
  dlb_error err;
} load_job;

/* Why tensor t cannot be a view of the source, or NULL when it can be. */
static const char *why_copied(const load_job *job, const dlb_safetensors_tensor *t,
                              const unsigned char *data) {
  if (!job->source) return "a string is always copied";
  if (job->opts.backend != job->state->cpu) return "its device is not the cpu";
  if (HOST_BIG_ENDIAN) return "the file is little-endian and this machine is not";
  if ((uintptr_t)data % dlb_safetensors_alignment(t->dtype) != 0)
    return "its data is misaligned for its dtype in the file";
  if (!dlb_safetensors_viewable(t, data))
    return "it is BOOL with bytes other than 0 and 1 (loaded as true: 1)";
  return NULL;
}

/* Makes a a read-only view of t's data in the source buffer. */
static dlb_status fill_view(load_job *job, const dlb_safetensors_tensor *t,
                            const unsigned char *data, dlb_array *a) {
  a->dtype = t->dtype;
  a->ndim = t->ndim;
  a->readonly = 1;
  a->offset = (size_t)(data - (const unsigned char *)job->source->host);
  a->numel = t->numel;
  if (t->ndim) memcpy(a->shape, t->shape, (size_t)t->ndim * sizeof *t->shape);
  dlb_shape_contiguous_strides(t->ndim, a->shape, a->strides);
  dlb_buffer_retain(job->source);
  a->buffer = job->source;
  job->viewed = 1;
  /* The parser proved it; an array never reaches outside its buffer all the same. */
  if (dlb_array_check_bounds(a, &job->err) != DLB_OK) {
    dlb_array_release(a);
    return DLB_E_FORMAT;
  }
  return DLB_OK;
}

/* Puts t's data (bools as 0 or 1) at dst: copied from the bytes in memory,
 * or read from the file. */
static dlb_status tensor_data(load_job *job, const dlb_safetensors_tensor *t,
                              const unsigned char *data, void *dst) {
  dlb_status st = DLB_OK;
  if (data) {
    dlb_safetensors_copy_data(t, dst, data);
  } else {
    st = dlb_read_at(job->fd, dst, (size_t)(t->end - t->begin), job->header.data_start + t->begin,
                     job->path, &job->err);
    if (st == DLB_OK) dlb_safetensors_copy_data(t, dst, dst);
  }
  if (st == DLB_OK && HOST_BIG_ENDIAN)
    dlb_byteswap(dst, t->numel, dlb_dtype_get(t->dtype)->itemsize,
                 dlb_dtype_get(t->dtype)->kind == DLB_KIND_COMPLEX);
  return st;
}

/* Makes a a new array holding a copy of t's data (data NULL: in the file). */
static dlb_status fill_copy(lua_State *L, load_job *job, const dlb_safetensors_tensor *t,
                            const unsigned char *data, dlb_array *a) {
  size_t item = dlb_dtype_get(t->dtype)->itemsize, nbytes = (size_t)(t->end - t->begin);
  dlb_status st;
  dlbL_reserve(L, t->numel, item);
  st = dlb_array_allocate(a, job->opts.backend, job->opts.device_id, t->dtype, t->ndim, t->shape,
                          0, &job->err);
  if (st != DLB_OK) return st;
  if (dlb_array_host_data(a)) {
    st = tensor_data(job, t, data, dlb_array_host_data(a));
  } else { /* another device: the bytes as they will be, then through the backend */
    unsigned char *staged = malloc(nbytes + 1);
    if (!staged)
      st = dlb_fail(&job->err, DLB_E_OUT_OF_MEMORY, "no memory to stage %zu bytes", nbytes);
    if (st == DLB_OK) st = tensor_data(job, t, data, staged);
    if (st == DLB_OK) st = dlb_array_write_from(a, staged, t->dtype, &job->err);
    free(staged);
  }
  if (st != DLB_OK) {
    dlb_array_release(a);
    return st;
  }
  /* The default load hands out read-only arrays, copied or not. */
  a->readonly = job->source && job->opts.copy == DLB_COPY_IF_NEEDED && job->opts.backend == job->state->cpu;
  dlbL_account(L, a->buffer->nbytes);
  return DLB_OK;
}

/* Fills the empty array a with tensor t (a view or a copy). */
static dlb_status fill_tensor(lua_State *L, load_job *job, const dlb_safetensors_tensor *t,
                              dlb_array *a) {
  const unsigned char *data = job->bytes ? job->bytes + job->header.data_start + t->begin : NULL;
  const char *why;
  if (job->opts.copy == DLB_COPY_ALWAYS) return fill_copy(L, job, t, data, a);
  if (!(why = why_copied(job, t, data))) return fill_view(job, t, data, a);
  if (job->opts.copy == DLB_COPY_NEVER) {
    dlb_fail(&job->err, DLB_E_COPY_REQUIRED, "tensor '%.60s' cannot be a view of the file: %s",
             t->name, why);
    dlb_error_hint(&job->err, "leave copy out (views where possible, copies elsewhere) or "
                              "pass copy = true");
    return DLB_E_COPY_REQUIRED;
  }
  return fill_copy(L, job, t, data, a);
}

/* build(job) -> tensors, metadata. Run in protected mode; a failure of the
 * core is recorded in job (and nothing returned), Lua's own errors raise. */
static int build_unprotected(lua_State *L) {
  load_job *job = lua_touserdata(L, 1);
  const dlb_safetensors_header *h = &job->header;
  lua_createtable(L, 0, h->ntensors > INT_MAX ? INT_MAX : (int)h->ntensors); /* 2 */
  lua_createtable(L, 0, h->nmetadata > INT_MAX ? INT_MAX : (int)h->nmetadata); /* 3 */
  for (size_t i = 0; i < h->nmetadata; i++) {
    lua_pushlstring(L, h->metadata[i].key, h->metadata[i].key_len);
    lua_pushlstring(L, h->metadata[i].value, h->metadata[i].value_len);
    lua_rawset(L, 3);
  }
  for (size_t i = 0; i < h->ntensors; i++) {
    const dlb_safetensors_tensor *t = &h->tensors[i];
    dlb_array *a;
    lua_pushlstring(L, t->name, t->name_len);
    a = dlbL_push_empty(L, job->op);
    if ((job->status = fill_tensor(L, job, t, a)) != DLB_OK) return 0;
    job->made[job->nmade++] = a;
    lua_rawset(L, 2);
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
 * pushes nothing and returns the failure in err. Never raises. Frees the
 * header. */
static dlb_status load_parsed(lua_State *L, load_job *job, dlb_error *err) {
  dlb_status st;
  int top = lua_gettop(L);
  if (!(job->made = malloc((job->header.ntensors + 1) * sizeof *job->made))) {
    st = dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory to load %zu tensors", job->header.ntensors);
    dlb_safetensors_free(&job->header);
    return st;
  }
  lua_pushcfunction(L, build_unprotected); /* a light C function: no allocation */
  lua_pushlightuserdata(L, job);
  if (lua_pcall(L, 1, 2, 0) != LUA_OK)
    st = build_raised(L, err);
  else if ((st = job->status) != DLB_OK)
    *err = job->err;
  if (st != DLB_OK) {
    /* The arrays made so far are garbage now: let go of the memory at once. */
    for (size_t i = 0; i < job->nmade; i++) dlb_array_release(job->made[i]);
    lua_settop(L, top);
  } else if (job->viewed) {
    dlbL_account(L, job->source->nbytes); /* the views hold the whole mapping */
  }
  free(job->made);
  dlb_safetensors_free(&job->header);
  return st;
}

/* A job for a load with opts. */
static void job_init(load_job *job, dlb_lua_state *state, const load_options *opts,
                     const char *op) {
  memset(job, 0, sizeof *job);
  job->state = state;
  job->op = op;
  job->opts = *opts;
  job->fd = -1;
  job->path = NULL;
}

/*
 * Parses size bytes at bytes (source: the same bytes as a buffer that
 * arrays may view, or NULL) and pushes tensors, metadata; or pushes nothing
 * and returns the failure in err. Never raises. The caller keeps its own
 * reference to source.
 */
static dlb_status load_bytes(lua_State *L, dlb_lua_state *state, const void *bytes, size_t size,
                             dlb_buffer *source, const load_options *opts, const char *op,
                             dlb_error *err) {
  load_job job;
  dlb_status st;
  job_init(&job, state, opts, op);
  job.bytes = bytes;
  job.source = source;
  if ((st = dlb_safetensors_parse(bytes, size, &job.header, err)) != DLB_OK) return st;
  return load_parsed(L, &job, err);
}

/* Reads and parses the header of the open file fd (size bytes). */
static dlb_status read_header(int fd, const char *path, uint64_t size, dlb_safetensors_header *h,
                              dlb_error *err) {
  unsigned char first[8];
  unsigned char *head;
  uint64_t n = 0, len = size < 8 ? size : 8;
  dlb_status st = dlb_read_at(fd, first, (size_t)len, 0, path, err);
  if (st != DLB_OK) return st;
  if (len < 8) return dlb_safetensors_parse_header(first, (size_t)len, size, h, err);
  for (int i = 7; i >= 0; i--) n = n << 8 | first[i];
  /* A size the parse will refuse is not read. */
  if (n <= size - 8 && n <= DLB_SAFETENSORS_MAX_HEADER) len += n;
  if (!(head = malloc((size_t)len)))
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for a header of %llu bytes",
                    (unsigned long long)len);
  memcpy(head, first, 8);
  st = dlb_read_at(fd, head + 8, (size_t)len - 8, 8, path, err);
  if (st == DLB_OK) st = dlb_safetensors_parse_header(head, (size_t)len, size, h, err);
  free(head);
  return st;
}

/* Loads copies of the tensors of the file at path, each read (pread)
 * straight into its new memory: nothing is mapped. */
static dlb_status read_file(lua_State *L, dlb_lua_state *state, const char *path,
                            const load_options *opts, const char *op, dlb_error *err) {
  load_job job;
  uint64_t size;
  int fd;
  dlb_status st = dlb_open_file(path, &fd, &size, err);
  if (st != DLB_OK) return st;
  job_init(&job, state, opts, op);
  job.fd = fd;
  job.path = path;
  st = read_header(fd, path, size, &job.header, err);
  if (st == DLB_OK) st = load_parsed(L, &job, err);
  close(fd);
  return st;
}

/* Makes room for mapping the file at path (a memory limit may want garbage
 * collected first); a file that cannot be stat'ed is reported by the map. */
static void reserve_for_file(lua_State *L, dlb_lua_state *state, const char *path) {
  struct stat st;
  if (atomic_load_explicit(&state->budget->limit, memory_order_relaxed) && stat(path, &st) == 0 &&
      st.st_size > 0)
    dlbL_reserve(L, (int64_t)st.st_size, 1);
}

/* Loads the file at path: mapped (the mapping lives on in the arrays that
 * view it), or read when every tensor is copied anyway. */
static dlb_status load_file(lua_State *L, dlb_lua_state *state, const char *path,
                            const load_options *opts, const char *op, dlb_error *err) {
  dlb_buffer *mapping;
  dlb_status st;
  if (opts->copy == DLB_COPY_ALWAYS) return read_file(L, state, path, opts, op, err);
  reserve_for_file(L, state, path);
  if ((st = dlb_buffer_map_file(state->cpu, path, &mapping, err)) != DLB_OK) return st;
  st = load_bytes(L, state, mapping->host, mapping->nbytes, mapping, opts, op, err);
  dlb_buffer_release(mapping);
  return st;
}

/* Reads the load options at idx (nil or a table). */

/* The string argument at idx, or ARGUMENT naming what it is. */
static const char *check_string(lua_State *L, int idx, const char *what, const char *hint,
                                size_t *len, const char *op) {
  if (lua_type(L, idx) != LUA_TSTRING)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, hint, "%s must be a string, got %s", what,
                    luaL_typename(L, idx));
  return lua_tolstring(L, idx, len);
}

/* dl.load_safetensors(path, opts) -> tensors, metadata */
static int load_safetensors(lua_State *L) {
  const char *op = "dl.load_safetensors";
  load_options opts;
  dlb_error err;
  const char *path;
  dlbL_check_nargs(L, 2, op);
  path = check_string(L, 1, "the path", "dl.load_safetensors(\"model.safetensors\")", NULL, op);
  dlbL_check_load_options(L, 2, &opts, op);
  dlbL_check_file_access(L, op);
  if (load_file(L, dlbL_state(L), path, &opts, op, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
  return 2;
}

/* dl.fromsafetensors(s, opts) -> tensors, metadata (always copies) */
static int fromsafetensors(lua_State *L) {
  const char *op = "dl.fromsafetensors";
  load_options opts;
  dlb_error err;
  size_t len;
  const char *s;
  dlbL_check_nargs(L, 2, op);
  s = check_string(L, 1, "s", "s is the bytes of a safetensors file, such as "
                   "dl.tosafetensors(tensors) or io.open(path, \"rb\"):read(\"a\")", &len, op);
  dlbL_check_load_options(L, 2, &opts, op);
  if (opts.copy == DLB_COPY_NEVER)
    dlbL_raise_hint(L, DLB_E_COPY_REQUIRED, op, "dl.load_safetensors(path) maps a file: its "
                    "arrays are views of it", "the arrays of a string are always copies");
  opts.copy = DLB_COPY_ALWAYS;
  /* s stays at index 1 (alive) while the arrays are copied out of it. */
  if (load_bytes(L, dlbL_state(L), s, len, NULL, &opts, op, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  return 2;
}

/* ---- the C API ---------------------------------------------------------------- */

DLB_API dlb_status dlb_load_safetensors(lua_State *L, const char *path, uint32_t flags) {
  const char *op = "dlb_load_safetensors";
  load_options opts;
  dlb_error err;
  dlb_lua_state *state = dlbL_open_state(L, &err);
  if (!state) return dlbL_capi_failed(L, &err, op);
  if (!path || (flags & ~DLB_LOAD_COPY)) {
    dlb_fail(&err, DLB_E_ARGUMENT, path ? "unknown flags 0x%x" : "path is NULL", (unsigned)flags);
    dlb_error_hint(&err, "a file's path; flags 0 (read-only views of the file) or DLB_LOAD_COPY");
    return dlbL_capi_failed(L, &err, op);
  }
  opts.copy = (flags & DLB_LOAD_COPY) ? DLB_COPY_ALWAYS : DLB_COPY_IF_NEEDED;
  opts.backend = state->cpu;
  opts.device_id = 0;
  if (load_file(L, state, path, &opts, op, &err) != DLB_OK) return dlbL_capi_failed(L, &err, op);
  return DLB_OK;
}

DLB_API dlb_status dlb_push_safetensors(lua_State *L, const void *data, size_t size,
                                        uint32_t flags, void (*release)(void *ctx), void *ctx) {
  const char *op = "dlb_push_safetensors";
  load_options opts;
  dlb_buffer *source;
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
  opts.backend = state->cpu;
  opts.device_id = 0;
  if (flags & DLB_LOAD_COPY) {
    opts.copy = DLB_COPY_ALWAYS;
    st = load_bytes(L, state, data, size, NULL, &opts, op, &err);
    if (release) release(ctx);
    return st == DLB_OK ? DLB_OK : dlbL_capi_failed(L, &err, op);
  }
  opts.copy = DLB_COPY_IF_NEEDED;
  dlbL_reserve(L, (int64_t)(size > INT64_MAX ? INT64_MAX : size), 1);
  st = dlb_buffer_wrap_host(state->cpu, (void *)data, size, 1, release, ctx, &source, &err);
  if (st != DLB_OK) return dlbL_capi_failed(L, &err, op); /* release has run */
  st = load_bytes(L, state, data, size, source, &opts, op, &err);
  dlb_buffer_release(source); /* release runs now unless an array views the memory */
  return st == DLB_OK ? DLB_OK : dlbL_capi_failed(L, &err, op);
}

/* ---- saving ------------------------------------------------------------------- */

#define SAVE_HINT "tensors is a table name -> array, e.g. {weight = w, bias = b}; metadata " \
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
    a = plan->arrays[i] = dlbL_to_array(L, -1);
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
  if (n >= INT_MAX)
    dlbL_raise(L, DLB_E_ARGUMENT, op, "%zu tensors are too many for one file", n);
  if (plan->header_size + plan->data_size > (uint64_t)PTRDIFF_MAX)
    dlbL_raise(L, DLB_E_OUT_OF_MEMORY, op, "%llu bytes do not fit in memory",
               (unsigned long long)(plan->header_size + plan->data_size));
  return plan;
}

/* Writes the row-major, little-endian bytes of a into dst. */
static dlb_status array_bytes(const dlb_array *a, void *dst, dlb_error *err) {
  dlb_status st = dlb_array_read_into(a, dst, a->dtype, err);
  if (st == DLB_OK && HOST_BIG_ENDIAN)
    dlb_byteswap(dst, a->numel, dlb_array_itemsize(a),
                 dlb_dtype_get(a->dtype)->kind == DLB_KIND_COMPLEX);
  return st;
}

/* Whether a's memory is already the bytes the file holds (host, row-major). */
static int writable_as_is(const dlb_array *a) {
  return !HOST_BIG_ENDIAN && dlb_array_host_data(a) && dlb_array_is_contiguous(a);
}

/* save(path, tensors, metadata): run protected (a Lua memory error is OUT_OF_MEMORY). */
static int save_unprotected(lua_State *L) {
  const char *op = "dl.save_safetensors";
  const char *path = lua_tostring(L, 1);
  save_plan *plan = plan_save(L, 2, op);
  size_t nparts = plan->n + 1;
  const void **parts;
  size_t *sizes;
  void **owned;
  dlb_error err;
  dlb_status st = DLB_OK;
  /* From here on nothing raises before everything malloc'd is freed. */
  parts = calloc(nparts, sizeof *parts);
  sizes = calloc(nparts, sizeof *sizes);
  owned = calloc(nparts, sizeof *owned);
  if (!parts || !sizes || !owned || !(owned[0] = malloc((size_t)plan->header_size)))
    st = dlb_fail(&err, DLB_E_OUT_OF_MEMORY, "no memory for the header of %zu tensors", plan->n);
  if (st == DLB_OK) {
    dlb_safetensors_write_header(plan->tensors, plan->n, plan->metadata, plan->nmetadata,
                                 plan->header_size, owned[0]);
    parts[0] = owned[0];
    sizes[0] = (size_t)plan->header_size;
  }
  for (size_t k = 0; k < plan->n && st == DLB_OK; k++) {
    const dlb_safetensors_tensor *t = &plan->tensors[plan->order[k]];
    const dlb_array *a = plan->arrays[t->index];
    sizes[k + 1] = (size_t)(t->end - t->begin);
    if (writable_as_is(a) || sizes[k + 1] == 0) {
      parts[k + 1] = dlb_array_host_data(a);
    } else if (!(owned[k + 1] = malloc(sizes[k + 1]))) {
      st = dlb_fail(&err, DLB_E_OUT_OF_MEMORY, "no memory to lay out tensor '%.60s' (%zu bytes)",
                    t->name, sizes[k + 1]);
    } else {
      parts[k + 1] = owned[k + 1];
      st = array_bytes(a, owned[k + 1], &err);
    }
  }
  if (st == DLB_OK) st = dlb_write_file(path, parts, sizes, (int)nparts, &err);
  for (size_t k = 0; owned && k < nparts; k++) free(owned[k]);
  free(owned);
  free(sizes);
  free(parts);
  if (st != DLB_OK) dlbL_raise_error(L, &err, op);
  return 0;
}

/* dl.save_safetensors(path, tensors, metadata) */
static int save_safetensors(lua_State *L) {
  const char *op = "dl.save_safetensors";
  dlbL_check_nargs(L, 3, op);
  check_string(L, 1, "the path", "dl.save_safetensors(\"model.safetensors\", {weight = w})", NULL,
               op);
  dlbL_check_file_access(L, op);
  lua_settop(L, 3);
  dlbL_call_protected(L, save_unprotected, op);
  return 0;
}

/* tosafetensors(tensors, metadata) -> the file's bytes (run protected). */
static int tosafetensors_unprotected(lua_State *L) {
  const char *op = "dl.tosafetensors";
  save_plan *plan = plan_save(L, 1, op);
  size_t total = (size_t)(plan->header_size + plan->data_size);
  luaL_Buffer b;
  dlb_error err;
  char *out = luaL_buffinitsize(L, &b, total);
  dlb_safetensors_write_header(plan->tensors, plan->n, plan->metadata, plan->nmetadata,
                               plan->header_size, out);
  for (size_t k = 0; k < plan->n; k++) {
    const dlb_safetensors_tensor *t = &plan->tensors[plan->order[k]];
    if (array_bytes(plan->arrays[t->index], out + plan->header_size + t->begin, &err) != DLB_OK)
      dlbL_raise_error(L, &err, op);
  }
  luaL_pushresultsize(&b, total);
  return 1;
}

/* dl.tosafetensors(tensors, metadata) -> string */
static int tosafetensors(lua_State *L) {
  dlbL_check_nargs(L, 2, "dl.tosafetensors");
  lua_settop(L, 2);
  dlbL_call_protected(L, tosafetensors_unprotected, "dl.tosafetensors");
  return 1;
}

const luaL_Reg dlbL_safetensors_functions[] = {{"load_safetensors", load_safetensors},
                                               {"save_safetensors", save_safetensors},
                                               {"fromsafetensors", fromsafetensors},
                                               {"tosafetensors", tosafetensors},
                                               {NULL, NULL}};
