/* capi_safetensors.c -- safetensors from C (dlbridge.h): dlb_load_safetensors
 * (a file, mapped: the arrays are read-only views of one mapping; with
 * dlb_allow_mapping(L, 0) read into copies, for any load from a path) and
 * dlb_push_safetensors (bytes the host owns, e.g. mapped itself: views of
 * them, release(ctx) once when the last array is gone). The lifetime checks:
 * the memory outlives lua_close while a DLPack consumer holds a tensor, and
 * is unmapped (released) exactly once, when the consumer's deleter runs, on
 * another thread. Errors: pushed, recorded as dlb_last_error, never raised. */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid; mkstemp */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "dlbridge.h"
#include "fixtures.h"

/* ------------------------------------------------------------------------ */
/* Files and memory */

/* The bytes of a file with w (float32 2x3: 0..5), mask (bool: 1, 0, 1) and
 * metadata {format = "pt"}, made by dl.tosafetensors; malloc'd, *size set. */
static unsigned char *model_bytes(size_t *size) {
  lua_State *L = new_state();
  const char *s;
  unsigned char *copy;
  PUSH(L, "return dl.tosafetensors({w = dl.arange(6, {dtype = 'float32'}):view(2, 3), "
          "mask = dl.array{true, false, true}}, {format = 'pt'})");
  s = lua_tolstring(L, -1, size);
  copy = malloc(*size);
  memcpy(copy, s, *size);
  lua_close(L);
  return copy;
}

/* Writes size bytes to a new file in /tmp; its path is static. */
static const char *write_temp(const void *bytes, size_t size) {
  static char path[64];
  int fd;
  snprintf(path, sizeof path, "/tmp/capi_safetensors_XXXXXX");
  fd = mkstemp(path);
  if (fd < 0 || write(fd, bytes, size) != (ssize_t)size) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(2);
  }
  close(fd);
  return path;
}

/* How many mappings of path this process has (/proc/self/maps lines). */
static int mappings_of(const char *path) {
  char line[1024];
  int n = 0;
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) return -1;
  while (fgets(line, sizeof line, f))
    if (strstr(line, path)) n++;
  fclose(f);
  return n;
}

/* Host memory handed over with dlb_push_safetensors: a counter of releases. */
static atomic_int released;

static void count_release(void *ctx) {
  atomic_fetch_add(&released, 1);
  free(ctx);
}

/* The consumer's side: the deleter of a tensor, run on another thread. */
static void *call_deleter(void *tensor) {
  DLManagedTensorVersioned *t = tensor;
  t->deleter(t);
  return NULL;
}

static void delete_on_thread(DLManagedTensorVersioned *t) {
  pthread_t thread;
  pthread_create(&thread, NULL, call_deleter, t);
  pthread_join(thread, NULL);
}

/* Stores the two results of a load as the globals tensors and metadata. */
static void keep_results(lua_State *L) {
  lua_setglobal(L, "metadata");
  lua_setglobal(L, "tensors");
}

/* ------------------------------------------------------------------------ */
/* dlb_load_safetensors */

static void test_load_file(void) {
  size_t size;
  unsigned char *bytes = model_bytes(&size);
  const char *path = write_temp(bytes, size);
  lua_State *L = new_state();
  CHECK_EQ_INT(dlb_load_safetensors(L, path, 0), DLB_OK);
  CHECK_EQ_INT(lua_gettop(L), 2);
  keep_results(L);
  CHECK_EQ_INT(RUN(L, "local w = tensors.w return w.dtype == 'float32' and w.shape[1] == 2 and "
                      "w.shape[2] == 3 and w:get(2, 3) == 5 and w.readonly"),
               1);
  CHECK_EQ_INT(RUN(L, "return tensors.mask.dtype == 'bool' and tensors.mask:get(2) == false"), 1);
  CHECK_EQ_INT(RUN(L, "return metadata.format == 'pt'"), 1);
  CHECK_EQ_INT(RUN(L, "local ok, e = pcall(tensors.w.set, tensors.w, 1, 1, 9) "
                      "return e.code == 'READ_ONLY'"),
               1);
  CHECK_EQ_INT(mappings_of(path), 1);
  /* the last array gone: unmapped */
  CHECK_EQ_INT(RUN(L, "tensors = nil collectgarbage() collectgarbage() return 1"), 1);
  CHECK_EQ_INT(mappings_of(path), 0);
  lua_close(L);
  unlink(path);
  free(bytes);
}

static void test_load_file_copy(void) {
  size_t size;
  unsigned char *bytes = model_bytes(&size);
  const char *path = write_temp(bytes, size);
  lua_State *L = new_state();
  CHECK_EQ_INT(dlb_load_safetensors(L, path, DLB_LOAD_COPY), DLB_OK);
  CHECK_EQ_INT(mappings_of(path), 0); /* copied out and unmapped before returning */
  keep_results(L);
  CHECK_EQ_INT(RUN(L, "local w = tensors.w w:set(1, 1, 42) return not w.readonly and "
                      "w:get(1, 1) == 42 and w:get(2, 1) == 3"),
               1);
  lua_close(L);
  unlink(path);
  free(bytes);
}

/* The mapping outlives lua_close while a DLPack consumer holds a tensor, and
 * goes when its deleter runs (on another thread), exactly once. */
static void test_mapping_outlives_close(void) {
  size_t size;
  unsigned char *bytes = model_bytes(&size);
  const char *path = write_temp(bytes, size);
  lua_State *L = new_state();
  DLManagedTensorVersioned *t = NULL, *t2 = NULL;
  CHECK_EQ_INT(dlb_load_safetensors(L, path, 0), DLB_OK);
  lua_getfield(L, 1, "w");
  CHECK_EQ_INT(dlb_export_versioned(L, -1, NULL, &t), DLB_OK);
  lua_getfield(L, 1, "mask");
  CHECK_EQ_INT(dlb_export_versioned(L, -1, NULL, &t2), DLB_OK);
  CHECK(t && (t->flags & DLPACK_FLAG_BITMASK_READ_ONLY));  /* exported read-only */
  CHECK(t && !(t->flags & DLPACK_FLAG_BITMASK_IS_COPIED)); /* the file's own bytes */
  lua_close(L);
  CHECK_EQ_INT(mappings_of(path), 1);
  unlink(path); /* the mapping does not need the name either */
  if (t && t2) {
    const float *w = (const float *)((const char *)t->dl_tensor.data + t->dl_tensor.byte_offset);
    CHECK(w[5] == 5.0f && w[1] == 1.0f);
    CHECK_EQ_INT(t->dl_tensor.ndim, 2);
    delete_on_thread(t);
    CHECK_EQ_INT(mappings_of(path), 1); /* the other tensor still holds it */
    delete_on_thread(t2);
  }
  CHECK_EQ_INT(mappings_of(path), 0);
  free(bytes);
}

/* ------------------------------------------------------------------------ */
/* dlb_push_safetensors */

/* Host memory holding the bytes of the file, at offset shift of the block
 * (so that the data can be misaligned). The block is freed by release. */
static unsigned char *host_copy(const unsigned char *bytes, size_t size, size_t shift,
                                void **block) {
  unsigned char *b = malloc(size + shift);
  memcpy(b + shift, bytes, size);
  *block = b;
  return b + shift;
}

static void test_push_views_released_once(void) {
  size_t size;
  unsigned char *bytes = model_bytes(&size);
  void *block;
  unsigned char *data = host_copy(bytes, size, 0, &block);
  lua_State *L = new_state();
  DLManagedTensorVersioned *t = NULL;
  dlb_borrowed view;
  atomic_store(&released, 0);
  CHECK_EQ_INT(dlb_push_safetensors(L, data, size, 0, count_release, block), DLB_OK);
  CHECK_EQ_INT(lua_gettop(L), 2);
  lua_getfield(L, 1, "w");
  /* a view of the host's memory, in place */
  CHECK_EQ_INT(dlb_borrow(L, -1, &view), DLB_OK);
  CHECK((const unsigned char *)view.data + view.byte_offset > data &&
        (const unsigned char *)view.data + view.byte_offset < data + size);
  CHECK_EQ_INT(view.readonly, 1);
  dlb_borrow_end(&view);
  CHECK_EQ_INT(dlb_export_versioned(L, -1, NULL, &t), DLB_OK);
  lua_close(L);
  CHECK_EQ_INT(atomic_load(&released), 0); /* the export still holds it */
  if (t) delete_on_thread(t);
  CHECK_EQ_INT(atomic_load(&released), 1);
  free(bytes);
}

static void test_push_copy(void) {
  size_t size;
  unsigned char *bytes = model_bytes(&size);
  void *block;
  unsigned char *data = host_copy(bytes, size, 0, &block);
  lua_State *L = new_state();
  atomic_store(&released, 0);
  CHECK_EQ_INT(dlb_push_safetensors(L, data, size, DLB_LOAD_COPY, count_release, block), DLB_OK);
  CHECK_EQ_INT(atomic_load(&released), 1); /* copied: released before returning */
  keep_results(L);
  CHECK_EQ_INT(RUN(L, "return not tensors.w.readonly and tensors.w:get(1, 2) == 1 and "
                      "tensors.mask:get(3) == true and metadata.format == 'pt'"),
               1);
  lua_close(L);
  CHECK_EQ_INT(atomic_load(&released), 1);
  free(bytes);
}

/* Data misaligned for float32 is copied (read-only, like the views); the
 * host's memory is then held by no array and released before returning. */
static void test_push_misaligned(void) {
  size_t size;
  unsigned char *bytes = model_bytes(&size);
  void *block;
  unsigned char *data = host_copy(bytes, size, 1, &block);
  lua_State *L = new_state();
  atomic_store(&released, 0);
  CHECK_EQ_INT(dlb_push_safetensors(L, data, size, 0, count_release, block), DLB_OK);
  keep_results(L);
  CHECK_EQ_INT(RUN(L, "local w = tensors.w return w.readonly and w:get(2, 2) == 4 and "
                      "w:sum() == 15"),
               1);
  /* mask (1-byte elements) is a view still: the memory stays until it goes */
  CHECK_EQ_INT(atomic_load(&released), 0);
  CHECK_EQ_INT(RUN(L, "tensors.mask = nil collectgarbage() collectgarbage() return 1"), 1);
  CHECK_EQ_INT(atomic_load(&released), 1);
  lua_close(L);
  CHECK_EQ_INT(atomic_load(&released), 1);
  free(bytes);
}

/* ------------------------------------------------------------------------ */
/* Failures: pushed errors, release exactly once, no mapping left */

/* A file: tensor a (U8 [2], a view) then b (BOOL [2]) whose second byte is
 * 2 (a copy holding 1: the format does not check values). */
static unsigned char *bad_bool_bytes(size_t *size) {
  static const char json[] = "{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]},"
                             "\"b\":{\"dtype\":\"BOOL\",\"shape\":[2],\"data_offsets\":[2,4]}}";
  size_t n = (sizeof json - 1 + 7) / 8 * 8;
  unsigned char *p = malloc(8 + n + 4);
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)((uint64_t)n >> (8 * i));
  memset(p + 8, ' ', n);
  memcpy(p + 8, json, sizeof json - 1);
  memcpy(p + 8 + n, "\7\7\1\2", 4);
  *size = 8 + n + 4;
  return p;
}

static void test_push_refused(void) {
  static const unsigned char junk[] = "not a safetensors file at all";
  lua_State *L = new_state();
  const char *message = NULL;
  struct {
    const void *data;
    size_t size;
    uint32_t flags;
    const char *code;
  } cases[] = {
      {junk, sizeof junk, 0, "FORMAT"},
      {junk, sizeof junk, DLB_LOAD_COPY, "FORMAT"},
      {junk, sizeof junk, 0x10, "ARGUMENT"},
      {NULL, 16, 0, "ARGUMENT"},
      {NULL, 0, 0, "FORMAT"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    void *block = NULL;
    const void *data = cases[i].data ? host_copy(cases[i].data, cases[i].size, 0, &block) : NULL;
    if (!block) block = malloc(1);
    atomic_store(&released, 0);
    CHECK(dlb_push_safetensors(L, data, cases[i].size, cases[i].flags, count_release, block) !=
          DLB_OK);
    CHECK_EQ_INT(atomic_load(&released), 1);
    CHECK_EQ_STR(dlb_status_name(dlb_last_error(&message)), cases[i].code);
    CHECK(message && strstr(message, "dlb_push_safetensors: ") == message);
    CHECK_ERROR_TOP(L, 0, cases[i].code, "dlb_push_safetensors");
  }
  /* release may be NULL: memory the host never frees */
  CHECK_EQ_INT(dlb_push_safetensors(L, junk, sizeof junk, 0, NULL, NULL), DLB_E_FORMAT);
  CHECK_ERROR_TOP(L, 0, "FORMAT", "dlb_push_safetensors");
  lua_close(L);
}

/* A failure after some arrays were made (a memory limit refuses the copy of
 * b after a became a view): those arrays let go at once, so the host's
 * release has run (and a file is unmapped) when the error comes back. */
static void test_failure_after_a_view(void) {
  size_t size;
  unsigned char *bad = bad_bool_bytes(&size);
  const char *path = write_temp(bad, size);
  void *block;
  unsigned char *data = host_copy(bad, size, 0, &block);
  lua_State *L = new_state();
  /* without a limit: a is a view, b a copy with the bools normalised */
  CHECK_EQ_INT(dlb_push_safetensors(L, data, size, 0, NULL, NULL), DLB_OK);
  keep_results(L);
  CHECK_EQ_INT(RUN(L, "return tensors.a:get(2) == 7 and tensors.b:get(1) == true and "
                      "tensors.b:get(2) == true and tensors.b:astype('uint8'):sum() == 2"),
               1);
  CHECK_EQ_INT(RUN(L, "tensors = nil collectgarbage() return 1"), 1);
  CHECK_EQ_INT(dlb_set_memory_limit(L, size + 1), DLB_OK);
  atomic_store(&released, 0);
  CHECK_EQ_INT(dlb_push_safetensors(L, data, size, 0, count_release, block), DLB_E_OUT_OF_MEMORY);
  CHECK_EQ_INT(atomic_load(&released), 1);
  CHECK_ERROR_TOP(L, 0, "OUT_OF_MEMORY", "dlb_push_safetensors");
  CHECK_EQ_INT(dlb_load_safetensors(L, path, 0), DLB_E_OUT_OF_MEMORY);
  CHECK_ERROR_TOP(L, 0, "OUT_OF_MEMORY", "dlb_load_safetensors");
  CHECK_EQ_INT(mappings_of(path), 0);
  lua_close(L);
  unlink(path);
  free(bad);
}

static void test_load_refused(void) {
  static const char junk[] = "\x14\0\0\0\0\0\0\0{\"a\":{\"dtype\":\"U8\"}}";
  const char *path = write_temp(junk, sizeof junk - 1);
  lua_State *L = new_state();
  CHECK_EQ_INT(dlb_load_safetensors(L, path, 0), DLB_E_FORMAT);
  CHECK(strstr(field(L, -1, "message"), "'a'") != NULL);
  CHECK_ERROR_TOP(L, 0, "FORMAT", "dlb_load_safetensors");
  CHECK_EQ_INT(mappings_of(path), 0);
  CHECK_EQ_INT(dlb_load_safetensors(L, "/nonexistent/model.safetensors", 0), DLB_E_IO);
  CHECK_EQ_STR(field(L, -1, "message"), "cannot open '/nonexistent/model.safetensors': "
                                        "No such file or directory");
  lua_getfield(L, -1, "status");
  CHECK_EQ_INT(lua_tointeger(L, -1), 2); /* ENOENT */
  lua_pop(L, 1);
  CHECK_ERROR_TOP(L, 0, "IO", "dlb_load_safetensors");
  CHECK_EQ_INT(dlb_load_safetensors(L, "/tmp", 0), DLB_E_IO); /* no regular file */
  CHECK_ERROR_TOP(L, 0, "IO", "dlb_load_safetensors");
  CHECK_EQ_INT(dlb_load_safetensors(L, NULL, 0), DLB_E_ARGUMENT);
  CHECK_ERROR_TOP(L, 0, "ARGUMENT", "dlb_load_safetensors");
  CHECK_EQ_INT(dlb_load_safetensors(L, path, 2), DLB_E_ARGUMENT);
  CHECK_ERROR_TOP(L, 0, "ARGUMENT", "dlb_load_safetensors");
  lua_close(L);
  unlink(path);
}

/* A memory limit refuses the memory; the host's release runs all the same. */
static void test_memory_limit(void) {
  size_t size;
  unsigned char *bytes = model_bytes(&size);
  lua_State *L = new_state();
  for (uint32_t flags = 0; flags <= DLB_LOAD_COPY; flags++) {
    void *block;
    unsigned char *data = host_copy(bytes, size, 0, &block);
    CHECK_EQ_INT(dlb_set_memory_limit(L, flags ? 16 : size - 1), DLB_OK);
    atomic_store(&released, 0);
    CHECK_EQ_INT(dlb_push_safetensors(L, data, size, flags, count_release, block),
                 DLB_E_OUT_OF_MEMORY);
    CHECK_EQ_INT(atomic_load(&released), 1);
    CHECK_ERROR_TOP(L, 0, "OUT_OF_MEMORY", "dlb_push_safetensors");
  }
  lua_close(L);
  free(bytes);
}

/* ------------------------------------------------------------------------ */
/* The host's choices */

/* dlb_load_safetensors is the host's own call: dlb_allow_files(L, 0), which
 * turns the scripts' file functions off, does not stop it. */
static void test_not_subject_to_allow_files(void) {
  size_t size;
  unsigned char *bytes = model_bytes(&size);
  const char *path = write_temp(bytes, size);
  char code[160];
  lua_State *L = new_state();
  CHECK_EQ_INT(dlb_allow_files(L, 0), DLB_OK);
  CHECK_EQ_INT(dlb_load_safetensors(L, path, 0), DLB_OK);
  lua_settop(L, 0);
  snprintf(code, sizeof code,
           "local ok, e = pcall(dl.load_safetensors, '%s') "
           "return e.code == 'UNSUPPORTED'",
           path);
  CHECK_EQ_INT(RUN(L, code), 1);
  lua_close(L);
  unlink(path);
  free(bytes);
}

/* dlb_allow_mapping(L, 0): every load from a path reads the file into
 * arrays of their own (read-only unless copied on request), nothing is
 * mapped, and a file truncated by another writer after the load (here
 * truncate(2); a script's io.open(path, "w") does the same) is harmless.
 * With a mapping the reads below would die of SIGBUS. */
static void test_mapping_off(void) {
  char code[1024];
  char npy[64], st[64];
  lua_State *L = new_state();
  snprintf(npy, sizeof npy, "%s", write_temp("", 0));
  snprintf(st, sizeof st, "%s", write_temp("", 0));
  snprintf(code, sizeof code,
           "big = dl.arange(2^20, {dtype = 'int32'}) "
           "dl.save('%s', big) dl.save_safetensors('%s', {w = big, m = dl.array{true, false}}) "
           "return 1",
           npy, st);
  CHECK_EQ_INT(RUN(L, code), 1);
  CHECK_EQ_INT(dlb_allow_mapping(L, 0), DLB_OK);
  snprintf(code, sizeof code,
           "a = dl.load('%s') t = dl.load_safetensors('%s') "
           "c = dl.load('%s', {copy = true}) "
           "local ok, e = pcall(dl.load_safetensors, '%s', {copy = false}) "
           "return a.readonly and t.w.readonly and t.m.readonly and not c.readonly and "
           "e.code == 'COPY_REQUIRED' and e.message:find('dlb_allow_mapping', 1, true) ~= nil",
           npy, st, npy, st);
  CHECK_EQ_INT(RUN(L, code), 1);
  CHECK_EQ_INT(dlb_load_safetensors(L, st, 0), DLB_OK); /* the host's own load too */
  keep_results(L);
  CHECK_EQ_INT(RUN(L, "return tensors.w.readonly and 1 or 0"), 1);
  CHECK_EQ_INT(mappings_of(npy), 0);
  CHECK_EQ_INT(mappings_of(st), 0);
  CHECK_EQ_INT(truncate(npy, 0), 0);
  CHECK_EQ_INT(truncate(st, 0), 0);
  CHECK_EQ_INT(RUN(L, "local n = 2^20 * (2^20 - 1) / 2 "
                      "return a:sum() == n and t.w:sum() == n and tensors.w:sum() == n and "
                      "t.m:get(1) == true and a:eq(big):all() and 1 or 0"),
               1);
  /* mapping on again: loads map */
  CHECK_EQ_INT(RUN(L, "big = nil a, t, c, tensors, metadata = nil collectgarbage() return 1"), 1);
  CHECK_EQ_INT(dlb_allow_mapping(L, 1), DLB_OK);
  snprintf(code, sizeof code, "dl.save('%s', dl.arange(3)) a = dl.load('%s') return 1", npy, npy);
  CHECK_EQ_INT(RUN(L, code), 1);
  CHECK_EQ_INT(mappings_of(npy), 1);
  lua_close(L);
  unlink(npy);
  unlink(st);
}

/* A FIFO fails at once with IO (an alarm ends the child should it wait). */
static char fifo_path[64];

static void fifo_child(void) {
  lua_State *L = new_state();
  alarm(5);
  for (uint32_t flags = 0; flags <= DLB_LOAD_COPY; flags++) {
    CHECK_EQ_INT(dlb_load_safetensors(L, fifo_path, flags), DLB_E_IO);
    CHECK(strstr(field(L, -1, "message"), "not a regular file") != NULL);
    CHECK_ERROR_TOP(L, 0, "IO", "dlb_load_safetensors");
  }
  lua_close(L);
}

static void test_fifo(void) {
  snprintf(fifo_path, sizeof fifo_path, "%s", write_temp("", 0));
  unlink(fifo_path);
  CHECK_EQ_INT(mkfifo(fifo_path, 0600), 0);
  CHECK(run_isolated(fifo_child));
  unlink(fifo_path);
}

/* No require first: the entry point opens dlbridge in the state. */
static void test_opens_dlbridge(void) {
  size_t size;
  unsigned char *bytes = model_bytes(&size);
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  CHECK_EQ_INT(dlb_push_safetensors(L, bytes, size, DLB_LOAD_COPY, NULL, NULL), DLB_OK);
  keep_results(L);
  CHECK_EQ_INT(RUN(L, "return tensors.w.dtype == 'float32' and tensors.w:get(2, 1) == 3"), 1);
  lua_close(L);
  free(bytes);
}

int main(void) {
  test_load_file();
  test_load_file_copy();
  test_mapping_outlives_close();
  test_push_views_released_once();
  test_push_copy();
  test_push_misaligned();
  test_push_refused();
  test_failure_after_a_view();
  test_load_refused();
  test_memory_limit();
  test_not_subject_to_allow_files();
  test_mapping_off();
  test_fifo();
  test_opens_dlbridge();
  return check_done("capi_safetensors");
}
