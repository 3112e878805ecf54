/* fuzz_safetensors.c -- the safetensors parser (files/safetensors.c) and the
 * loads built on it, on arbitrary bytes.
 *
 * Input: byte 0 is the mode, the rest is the file (held in a malloc'd block
 * of exactly its size, so that ASan sees a read one byte past it).
 *   bit 0  also load it through the C API (dlb_push_safetensors) in a fresh
 *          lua_State, and round-trip the tensors through dl.tosafetensors /
 *          dl.fromsafetensors
 *   bit 1  ... with DLB_LOAD_COPY
 *   bit 2  ... with Lua allocations failing during the push (countdown: the
 *          mode's high nibble; bit 3: every allocation from then on)
 *   bits 4-7  that countdown
 *
 * Invariants checked (a broken one aborts):
 * - a parsed header is what safetensors.h promises: sorted unique names
 *   without NUL, shapes whose byte size is END - BEGIN, tensors tiling the
 *   data exactly, sorted unique metadata keys;
 * - writing the parsed tensors again (plan + header + data) gives bytes
 *   that parse to the same tensors, metadata and data (BOOL normalised),
 *   and writing them twice gives the same bytes;
 * - dlb_push_safetensors succeeds exactly when the parse does (or fails
 *   with OUT_OF_MEMORY), with the parse's code when it fails; the host's
 *   release runs exactly once: before returning for a copy or a failure,
 *   never while an array views the memory, at lua_close at the latest;
 * - each loaded array holds the file's bytes (bools normalised), read-only
 *   unless copied; dl.fromsafetensors(dl.tosafetensors(t, m)) gives the
 *   same bytes and metadata. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lauxlib.h>
#include "dlbridge.h"
#include "files/safetensors.h"
#include "fuzz_common.h"

#define M_LUA 0x01
#define M_COPY 0x02
#define M_FAIL_ALLOC 0x04
#define M_FAIL_ALL 0x08

/* ---- the parser's promises ---------------------------------------------------- */

static int name_cmp(const char *a, size_t na, const char *b, size_t nb) {
  int c = memcmp(a, b, na < nb ? na : nb);
  return c ? c : (na > nb) - (na < nb);
}

static int by_begin(const void *a, const void *b) {
  const dlb_safetensors_tensor *x = *(const dlb_safetensors_tensor *const *)a;
  const dlb_safetensors_tensor *y = *(const dlb_safetensors_tensor *const *)b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  return (x->end > y->end) - (x->end < y->end);
}

static void check_header(const dlb_safetensors_header *h, size_t size) {
  const dlb_safetensors_tensor **sorted = malloc((h->ntensors + 1) * sizeof *sorted);
  uint64_t at = 0;
  if (!sorted) fuzz_fail("no memory");
  if (h->data_start + h->data_size != size || h->data_start < 8)
    fuzz_fail("data_start %llu + data_size %llu != %zu", (unsigned long long)h->data_start,
              (unsigned long long)h->data_size, size);
  for (size_t i = 0; i < h->ntensors; i++) {
    const dlb_safetensors_tensor *t = &h->tensors[i];
    int64_t numel = 1;
    if (strlen(t->name) != t->name_len) fuzz_fail("a name holds a NUL");
    const dlb_safetensors_tensor *prev = i ? &h->tensors[i - 1] : NULL;
    if (prev && name_cmp(prev->name, prev->name_len, t->name, t->name_len) >= 0)
      fuzz_fail("names not sorted and unique");
    if (t->ndim < 0 || t->ndim > DLB_MAX_NDIM || (unsigned)t->dtype >= DLB_DTYPE_COUNT ||
        !dlb_safetensors_dtype_name(t->dtype))
      fuzz_fail("tensor '%s': ndim %d, dtype %d", t->name, t->ndim, (int)t->dtype);
    for (int d = 0; d < t->ndim; d++) {
      if (t->shape[d] < 0 || __builtin_mul_overflow(numel, t->shape[d], &numel))
        fuzz_fail("tensor '%s': a bad extent", t->name);
    }
    if (numel != t->numel || t->begin > t->end || t->end > h->data_size ||
        t->end - t->begin != (uint64_t)numel * dlb_dtype_get(t->dtype)->itemsize)
      fuzz_fail("tensor '%s': numel or offsets do not agree", t->name);
    sorted[i] = t;
  }
  qsort(sorted, h->ntensors, sizeof *sorted, by_begin);
  for (size_t i = 0; i < h->ntensors; i++) {
    if (sorted[i]->begin != at) fuzz_fail("the tensors do not tile the data");
    at = sorted[i]->end;
  }
  if (at != h->data_size) fuzz_fail("bytes after the last tensor");
  for (size_t i = 0; i < h->nmetadata; i++) {
    const dlb_safetensors_pair *p = &h->metadata[i];
    if (strlen(p->key) != p->key_len || strlen(p->value) != p->value_len)
      fuzz_fail("metadata holds a NUL");
    if (i && name_cmp(h->metadata[i - 1].key, h->metadata[i - 1].key_len, p->key, p->key_len) >= 0)
      fuzz_fail("metadata keys not sorted and unique");
  }
  free(sorted);
}

/* The tensor's data as dlbridge holds it (bools normalised); malloc'd. */
static unsigned char *normalised(const dlb_safetensors_tensor *t, const unsigned char *file,
                                 const dlb_safetensors_header *h) {
  unsigned char *out = malloc((size_t)(t->end - t->begin) + 1);
  dlb_load_item it;
  if (!out) fuzz_fail("no memory");
  dlb_safetensors_item(h, (size_t)(t - h->tensors), &it);
  if (it.nbytes) memcpy(out, file + it.offset, it.nbytes);
  dlb_load_to_native(&it, out);
  if (!it.swapped && (uintptr_t)(file + it.offset) % dlb_safetensors_alignment(t->dtype) == 0 &&
      !dlb_load_copy_reason(&it, file + it.offset) && memcmp(out, file + it.offset, it.nbytes) != 0)
    fuzz_fail("tensor '%s' is viewable but its copy differs", t->name);
  return out;
}

/* Writes the parsed tensors again; returns the bytes (malloc'd), *size set. */
static unsigned char *rewrite(const dlb_safetensors_header *h, const unsigned char *file,
                              size_t *size) {
  size_t n = h->ntensors;
  dlb_safetensors_tensor *t = malloc((n + 1) * sizeof *t);
  dlb_safetensors_pair *m = malloc((h->nmetadata + 1) * sizeof *m);
  size_t *order = malloc((n + 1) * sizeof *order);
  uint64_t header, data;
  unsigned char *out;
  dlb_error err;
  if (!t || !m || !order) fuzz_fail("no memory");
  for (size_t i = 0; i < n; i++) {
    t[i] = h->tensors[i];
    t[i].index = i;
  }
  if (h->nmetadata) memcpy(m, h->metadata, h->nmetadata * sizeof *m);
  if (dlb_safetensors_plan(t, n, m, h->nmetadata, order, &header, &data, &err) != DLB_OK)
    fuzz_fail("a parsed header cannot be written again: %s", err.message);
  if (data != h->data_size) fuzz_fail("the data changed size when written again");
  out = malloc((size_t)(header + data) + 1);
  if (!out) fuzz_fail("no memory");
  dlb_safetensors_write_header(t, n, m, h->nmetadata, header, (char *)out);
  for (size_t k = 0; k < n; k++) {
    const dlb_safetensors_tensor *x = &t[order[k]];
    unsigned char *bytes = normalised(&h->tensors[x->index], file, h);
    if (x->end > x->begin) memcpy(out + header + x->begin, bytes, (size_t)(x->end - x->begin));
    free(bytes);
  }
  *size = (size_t)(header + data);
  free(t);
  free(m);
  free(order);
  return out;
}

/* The file written again parses to the same tensors and metadata. */
static void check_round_trip(const dlb_safetensors_header *h, const unsigned char *file) {
  size_t size, size2;
  unsigned char *again = rewrite(h, file, &size), *twice;
  dlb_safetensors_header h2;
  dlb_error err;
  if (dlb_safetensors_parse(again, size, &h2, &err) != DLB_OK)
    fuzz_fail("the file written again does not parse: %s", err.message);
  if (h2.ntensors != h->ntensors || h2.nmetadata != h->nmetadata || h2.data_start % 8)
    fuzz_fail("the file written again holds other tensors");
  for (size_t i = 0; i < h->ntensors; i++) {
    const dlb_safetensors_tensor *a = &h->tensors[i], *b = &h2.tensors[i];
    unsigned char *bytes = normalised(a, file, h);
    if (name_cmp(a->name, a->name_len, b->name, b->name_len) || a->dtype != b->dtype ||
        a->ndim != b->ndim || (a->ndim && memcmp(a->shape, b->shape, (size_t)a->ndim * 8)) ||
        memcmp(bytes, again + h2.data_start + b->begin, (size_t)(b->end - b->begin)) ||
        (h2.data_start + b->begin) % dlb_safetensors_alignment(b->dtype))
      fuzz_fail("tensor '%s' changed when written again", a->name);
    free(bytes);
  }
  for (size_t i = 0; i < h->nmetadata; i++)
    if (strcmp(h->metadata[i].key, h2.metadata[i].key) ||
        strcmp(h->metadata[i].value, h2.metadata[i].value))
      fuzz_fail("metadata changed when written again");
  twice = rewrite(&h2, again, &size2);
  if (size2 != size || memcmp(twice, again, size)) fuzz_fail("writing is not deterministic");
  dlb_safetensors_free(&h2);
  free(again);
  free(twice);
}

/* ---- through the C API and Lua ------------------------------------------------ */

static int releases;
static void count_release(void *ctx) {
  releases++;
  free(ctx);
}

typedef struct push_args {
  const unsigned char *data;
  size_t size;
  uint32_t flags;
  void *block;
} push_args;

/* push(args) -> status, results...: as a host's lua_CFunction would call it. */
static int l_push(lua_State *L) {
  push_args *a = lua_touserdata(L, 1);
  dlb_status st;
  lua_settop(L, 0);
  st = dlb_push_safetensors(L, a->data, a->size, a->flags, count_release, a->block);
  lua_pushinteger(L, st);
  lua_insert(L, 1);
  return lua_gettop(L);
}

/* Each loaded array holds the file's bytes; the tables round-trip. */
static void check_loaded(lua_State *L, const dlb_safetensors_header *h, const unsigned char *file,
                         int copied) {
  int tensors = lua_gettop(L) - 1, metadata = lua_gettop(L);
  for (size_t i = 0; i < h->ntensors; i++) {
    const dlb_safetensors_tensor *t = &h->tensors[i];
    unsigned char *bytes = normalised(t, file, h);
    dlb_borrowed view;
    lua_pushlstring(L, t->name, t->name_len);
    if (lua_rawget(L, tensors) == LUA_TNIL) fuzz_fail("tensor '%s' is missing", t->name);
    if (dlb_borrow(L, -1, &view) != DLB_OK) fuzz_fail("tensor '%s' cannot be borrowed", t->name);
    if (view.numel != t->numel || view.ndim != t->ndim ||
        (t->end > t->begin &&
         memcmp((const char *)view.data + view.byte_offset, bytes, (size_t)(t->end - t->begin))))
      fuzz_fail("tensor '%s' does not hold the file's bytes", t->name);
    if (view.readonly == copied) fuzz_fail("tensor '%s': readonly is %d", t->name, view.readonly);
    dlb_borrow_end(&view);
    lua_pop(L, 1);
    free(bytes);
  }
  for (size_t i = 0; i < h->nmetadata; i++) {
    lua_pushlstring(L, h->metadata[i].key, h->metadata[i].key_len);
    lua_rawget(L, metadata);
    if (!lua_isstring(L, -1) || strcmp(lua_tostring(L, -1), h->metadata[i].value))
      fuzz_fail("metadata '%s' is wrong", h->metadata[i].key);
    lua_pop(L, 1);
  }
  lua_setglobal(L, "M");
  lua_setglobal(L, "T");
  if (luaL_dostring(L, "local s = dl.tosafetensors(T, M)\n"
                       "local t, m = dl.fromsafetensors(s)\n"
                       "for k, v in pairs(T) do\n"
                       "  if v:tobytes() ~= t[k]:tobytes() or v.dtype ~= t[k].dtype then\n"
                       "    error('round trip changed ' .. k) end end\n"
                       "for k, v in pairs(M) do\n"
                       "  if m[k] ~= v then error('metadata ' .. k) end end") != LUA_OK) {
    lua_getfield(L, -1, "code");
    if (!lua_isstring(L, -1) || strcmp(lua_tostring(L, -1), "OUT_OF_MEMORY") != 0)
      fuzz_fail("the Lua round trip failed: %s", luaL_tolstring(L, -2, NULL));
  }
  lua_settop(L, 0);
}

static void run_lua(int mode, const unsigned char *file, size_t size, dlb_status parsed,
                    const dlb_safetensors_header *h) {
  fuzz_heap heap;
  push_args a;
  lua_State *L = fuzz_new_state(&heap);
  int st, copy = (mode & M_COPY) != 0;
  dlb_status pushed;
  if (!L) fuzz_fail("lua_newstate failed");
  a.block = malloc(size + 1);
  if (!a.block) fuzz_fail("no memory");
  memcpy(a.block, file, size);
  a.data = a.block;
  a.size = size;
  a.flags = copy ? DLB_LOAD_COPY : 0;
  releases = 0;
  lua_pushcfunction(L, l_push);
  lua_pushlightuserdata(L, &a);
  if (mode & M_FAIL_ALLOC) fuzz_heap_fail_after(&heap, mode >> 4, mode & M_FAIL_ALL ? -1 : 2);
  st = lua_pcall(L, 1, LUA_MULTRET, 0);
  fuzz_heap_reset(&heap);
  if (st != LUA_OK) {
    /* Lua could not even push the error object. */
    if (releases != 1) fuzz_fail("the push raised and release ran %d times", releases);
    lua_settop(L, 0);
  } else if ((pushed = (dlb_status)lua_tointeger(L, 1)) != DLB_OK) {
    if (releases != 1) fuzz_fail("the push failed and release ran %d times", releases);
    if (!fuzz_is_dlb_error(L, -1)) fuzz_fail("a failed push left no dlbridge.Error");
    if (parsed != DLB_OK ? pushed != parsed : pushed != DLB_E_OUT_OF_MEMORY)
      fuzz_fail("the push failed with %s, the parse with %s", dlb_status_name(pushed),
                dlb_status_name(parsed));
    lua_settop(L, 0);
  } else {
    if (parsed != DLB_OK) fuzz_fail("the push accepted what the parse refused");
    if (copy && releases != 1) fuzz_fail("a copying push left release at %d", releases);
    if (releases > 1) fuzz_fail("release ran %d times", releases);
    lua_remove(L, 1);
    check_loaded(L, h, file, copy);
  }
  lua_close(L);
  if (releases != 1) fuzz_fail("after lua_close release ran %d times", releases);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int mode = size ? data[0] : 0;
  size_t n = size ? size - 1 : 0;
  unsigned char *file = malloc(n ? n : 1);
  dlb_safetensors_header h;
  dlb_error err;
  dlb_status st;
  if (!file) return 0;
  if (n) memcpy(file, data + 1, n);
  st = dlb_safetensors_parse(file, n, &h, &err);
  if (fuzz_verbose()) fprintf(stderr, "parse: %s %s\n", dlb_status_name(st), st ? err.message : "");
  if (st == DLB_OK) {
    check_header(&h, n);
    check_round_trip(&h, file);
  } else if (st != DLB_E_FORMAT && st != DLB_E_DTYPE && st != DLB_E_SHAPE &&
             st != DLB_E_OUT_OF_MEMORY) {
    fuzz_fail("the parse failed with %s", dlb_status_name(st));
  } else if (h.tensors || h.json || h.metadata) {
    fuzz_fail("a failed parse left memory behind");
  }
  if (mode & M_LUA) run_lua(mode, file, n, st, &h);
  dlb_safetensors_free(&h);
  free(file);
  return 0;
}
