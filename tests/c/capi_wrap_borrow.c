/* capi_wrap_borrow.c -- host memory in, array memory out, without DLPack
 * structs: dlb_push_external (wrap engine memory as an array, release once,
 * on any thread, possibly after lua_close), dlb_borrow / dlb_borrow_ref /
 * dlb_borrow_end (read an array from C; the memory stays valid until the
 * borrow ends, whatever Lua does meanwhile), dlb_last_error, and the
 * versioned export options. */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dlbridge.h"
#include "fixtures.h"

/* ------------------------------------------------------------------------ */
/* Engine memory: a malloc'd block and a counter of releases */

typedef struct engine_block {
  float data[6];
  atomic_int *released;
} engine_block;

static atomic_int released;

static void release_block(void *ctx) {
  engine_block *b = ctx;
  atomic_fetch_add(b->released, 1);
  free(b);
}

/* A block holding 0, 1, ..., 5. */
static engine_block *new_block(void) {
  engine_block *b = malloc(sizeof *b);
  for (int i = 0; i < 6; i++) b->data[i] = (float)i;
  b->released = &released;
  return b;
}

static const DLDevice host = {kDLCPU, 0};
static const DLDataType f32 = {kDLFloat, 32, 1};

/* Pushes a new block as a float32 array of shape {2, 3} with strides (NULL:
 * row-major) and flags; *out is the block (owned by the array now). */
static dlb_status push_block(lua_State *L, const int64_t *strides, uint32_t flags,
                             engine_block **out) {
  static const int64_t shape[] = {2, 3};
  engine_block *b = new_block();
  *out = b;
  return dlb_push_external(L, b->data, f32, 2, shape, strides, host, flags, release_block, b);
}

/* ------------------------------------------------------------------------ */
/* dlb_push_external */

static void test_external_row_major(void) {
  lua_State *L = new_state();
  engine_block *b;
  atomic_store(&released, 0);
  CHECK_EQ_INT(push_block(L, NULL, 0, &b), DLB_OK);
  CHECK_EQ_INT(lua_gettop(L), 1);
  lua_setglobal(L, "a");
  /* Lua sees the engine's memory, in place, both ways. */
  CHECK_EQ_INT(RUN(L, "return a.dtype == 'float32' and a.shape[1] == 2 and a.shape[2] == 3"), 1);
  CHECK_EQ_INT(RUN(L, "return a:get(2, 3)"), 5);
  CHECK_EQ_INT(RUN(L, "a:set(1, 2, 42) return 1"), 1);
  CHECK(b->data[1] == 42.0f);
  b->data[5] = 7.0f;
  CHECK_EQ_INT(RUN(L, "return a:get(2, 3)"), 7);
  /* A view keeps the memory: release waits for the last holder. */
  CHECK_EQ_INT(RUN(L, "v = a[2] a = nil collectgarbage() collectgarbage() return v[3]"), 7);
  CHECK_EQ_INT(atomic_load(&released), 0);
  CHECK_EQ_INT(RUN(L, "v = nil collectgarbage() collectgarbage() return 1"), 1);
  CHECK_EQ_INT(atomic_load(&released), 1);
  lua_close(L);
  CHECK_EQ_INT(atomic_load(&released), 1); /* exactly once */
}

/* The host's own memory is not the script's: a mod that filled the memory
 * limit cannot make the host's dlb_push_external fail. It shows as
 * dl.memory().external (and paces the collector), not in in_use. */
static void test_external_not_refused_by_the_limit(void) {
  lua_State *L = new_state();
  engine_block *b;
  atomic_store(&released, 0);
  CHECK_EQ_INT(dlb_set_memory_limit(L, 1u << 20), DLB_OK);
  CHECK_EQ_INT(RUN(L, "hoard = {} for i = 1, 100 do local ok, a = pcall(dl.zeros, 16384) "
                      "if not ok then return a.code == 'OUT_OF_MEMORY' and 1 or 0 end "
                      "hoard[i] = a end return 0"),
               1);
  CHECK_EQ_INT(push_block(L, NULL, 0, &b), DLB_OK);
  lua_setglobal(L, "a");
  CHECK_EQ_INT(RUN(L, "return dl.memory().external"), (long long)sizeof b->data);
  CHECK_EQ_INT(RUN(L, "return dl.memory().in_use <= dl.memory().limit and 1 or 0"), 1);
  CHECK_EQ_INT(RUN(L, "return a:get(2, 3)"), 5);
  CHECK_EQ_INT(RUN(L, "a = nil collectgarbage() collectgarbage() return dl.memory().external"), 0);
  CHECK_EQ_INT(atomic_load(&released), 1);
  lua_close(L);
  CHECK_EQ_INT(atomic_load(&released), 1);
}

static void test_external_strides_and_read_only(void) {
  lua_State *L = new_state();
  engine_block *b;
  static const int64_t column_major[] = {1, 2};
  atomic_store(&released, 0);
  CHECK_EQ_INT(push_block(L, column_major, DLB_EXTERNAL_READ_ONLY, &b), DLB_OK);
  lua_setglobal(L, "a");
  /* element (i, j) is data[(i - 1) + 2 * (j - 1)] */
  CHECK_EQ_INT(RUN(L, "return a:get(2, 1) * 100 + a:get(1, 3)"), 104);
  CHECK_EQ_INT(RUN(L, "return a.strides[1] == 1 and a.strides[2] == 2 and a.readonly"), 1);
  CHECK_EQ_INT(RUN(L, "local ok, e = pcall(a.set, a, 1, 1, 9) return e.code == 'READ_ONLY'"), 1);
  CHECK(b->data[0] == 0.0f);
  lua_close(L); /* the array still held the memory: released by lua_close */
  CHECK_EQ_INT(atomic_load(&released), 1);
}

/* The deleter of an export made from wrapped memory runs on another thread
 * after lua_close: the host's release runs there, once. */
static void *call_deleter(void *tensor) {
  DLManagedTensorVersioned *t = tensor;
  t->deleter(t);
  return NULL;
}

static void test_external_released_after_close_on_another_thread(void) {
  lua_State *L = new_state();
  engine_block *b;
  DLManagedTensorVersioned *t = NULL;
  pthread_t thread;
  atomic_store(&released, 0);
  CHECK_EQ_INT(push_block(L, NULL, 0, &b), DLB_OK);
  CHECK_EQ_INT(dlb_export_versioned(L, -1, NULL, &t), DLB_OK);
  lua_close(L);
  CHECK_EQ_INT(atomic_load(&released), 0); /* the export still holds it */
  if (t) {
    CHECK(t->dl_tensor.data == b->data);
    CHECK(((float *)t->dl_tensor.data)[5] == 5.0f);
    pthread_create(&thread, NULL, call_deleter, t);
    pthread_join(thread, NULL);
  }
  CHECK_EQ_INT(atomic_load(&released), 1);
}

/* Strides under which elements overlap make the array read-only (a write
 * through one index would change the others); a stride 0 is the usual one. */
static void test_external_overlap_read_only(void) {
  lua_State *L = new_state();
  engine_block *b;
  static const int64_t broadcast[] = {0, 1}, meet[] = {1, 1}, plain[] = {3, 1};
  atomic_store(&released, 0);
  CHECK_EQ_INT(push_block(L, broadcast, 0, &b), DLB_OK);
  lua_setglobal(L, "a");
  CHECK_EQ_INT(RUN(L, "return a.readonly and a:get(2, 3) == 2 and a:sum() == 6"), 1);
  CHECK_EQ_INT(RUN(L, "local ok, e = pcall(a.set, a, 1, 1, 99) return e.code == 'READ_ONLY'"), 1);
  CHECK(b->data[0] == 0.0f);
  CHECK_EQ_INT(push_block(L, meet, 0, &b), DLB_OK);
  lua_setglobal(L, "m");
  CHECK_EQ_INT(RUN(L, "return m.readonly"), 1);
  CHECK_EQ_INT(push_block(L, plain, 0, &b), DLB_OK);
  lua_setglobal(L, "p");
  CHECK_EQ_INT(RUN(L, "p:set(2, 3, 9) return p.readonly == false"), 1);
  CHECK(b->data[5] == 9.0f);
  lua_close(L);
  CHECK_EQ_INT(atomic_load(&released), 3);
}

/* Strides that reach no element (extent-1 dims; every dim of a size-0
 * array) become compact: computing on the array then steps by nothing
 * larger than its extents (UBSan checks the kernels under DLB_SANITIZE). */
static void test_external_unaddressed_strides(void) {
  lua_State *L = new_state();
  engine_block *b = new_block();
  dlb_borrowed view;
  static const int64_t row[] = {1, 3}, huge[] = {INT64_MAX / 2, 1};
  static const int64_t empty[] = {0, 3}, wild[] = {INT64_MAX, INT64_MIN};
  atomic_store(&released, 0);
  CHECK_EQ_INT(dlb_push_external(L, b->data, f32, 2, row, huge, host, 0, release_block, b), DLB_OK);
  lua_setglobal(L, "a");
  CHECK_EQ_INT(RUN(L, "return a.strides[1] == 3 and a.strides[2] == 1 and not a.readonly"), 1);
  CHECK_EQ_INT(RUN(L, "return a:sum() == 3 and a:sum{dim = 1}[3] == 2 and a:max() == 2"), 1);
  CHECK_EQ_INT(RUN(L, "return (a + 1):get(1, 3) == 3 and a:matmul(a:T()):get(1, 1) == 5"), 1);
  CHECK_EQ_INT(RUN(L, "return a:T():matmul(a):get(3, 3) == 4 and a:argmax() == 3"), 1);
  CHECK_EQ_INT(dlb_push_external(L, NULL, f32, 2, empty, wild, host, 0, NULL, NULL), DLB_OK);
  lua_setglobal(L, "z");
  CHECK_EQ_INT(RUN(L, "return z.strides[1] == 3 and z.strides[2] == 1 and z:sum() == 0"), 1);
  CHECK_EQ_INT(RUN(L, "return (z + 1).size == 0 and z:matmul(dl.ones{3, 2}).shape[2] == 2"), 1);
  /* a borrow of it points at non-NULL memory too (an export would) */
  lua_getglobal(L, "z");
  CHECK_EQ_INT(dlb_borrow(L, -1, &view), DLB_OK);
  CHECK(view.data != NULL);
  CHECK_EQ_INT(view.strides[0], 3);
  dlb_borrow_end(&view);
  lua_close(L);
  CHECK_EQ_INT(atomic_load(&released), 1);
}

/* Every refusal calls release once and pushes a coded error. */
static void test_external_refused(void) {
  lua_State *L = new_state();
  static const int64_t shape[] = {2, 3};
  static const int64_t negative[] = {2, -3};
  static const DLDataType no_such_type = {kDLFloat, 24, 1};
  static const DLDevice cuda = {kDLCUDA, 0};
  struct {
    DLDataType dtype;
    int32_t ndim;
    const int64_t *shape;
    DLDevice device;
    uint32_t flags;
    const char *code;
  } cases[] = {
      {f32, 2, shape, host, 0x80, "ARGUMENT"}, /* unknown flag */
      {f32, 33, shape, host, 0, "SHAPE"},      /* too many dims */
      {f32, -1, shape, host, 0, "SHAPE"},
      {f32, 2, NULL, host, 0, "ARGUMENT"},           /* no shape */
      {f32, 2, negative, host, 0, "DLPACK_INVALID"}, /* a negative extent */
      {no_such_type, 2, shape, host, 0, "DTYPE"},
      {f32, 2, shape, cuda, 0, "DEVICE_UNAVAILABLE"}, /* no cuda backend here */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    engine_block *b = new_block();
    const char *message = NULL;
    atomic_store(&released, 0);
    CHECK(dlb_push_external(L, b->data, cases[i].dtype, cases[i].ndim, cases[i].shape, NULL,
                            cases[i].device, cases[i].flags, release_block, b) != DLB_OK);
    CHECK_EQ_INT(atomic_load(&released), 1);
    CHECK_EQ_STR(field(L, -1, "code"), cases[i].code);
    CHECK(field(L, -1, "hint")[0] != '\0');
    CHECK_EQ_STR(dlb_status_name(dlb_last_error(&message)), cases[i].code);
    CHECK(message && strstr(message, "dlb_push_external: ") == message);
    CHECK_ERROR_TOP(L, 0, cases[i].code, "dlb_push_external");
  }
  /* release may be NULL: memory the host never frees (a static table). */
  {
    static float table[4] = {1, 2, 3, 4};
    const int64_t n = 4;
    CHECK_EQ_INT(dlb_push_external(L, table, f32, 1, &n, NULL, host, 0, NULL, NULL), DLB_OK);
    lua_setglobal(L, "t");
    CHECK_EQ_INT(RUN(L, "return t:sum()"), 10);
  }
  lua_close(L);
}

/* ------------------------------------------------------------------------ */
/* dlb_borrow */

static void test_borrow_view(void) {
  lua_State *L = new_state();
  dlb_borrowed view;
  /* A view with a negative stride and an offset: columns reversed. */
  PUSH(L, "a = dl.arange(12, {dtype = 'int32'}):view{3, 4} return a:slice(2, -1, 1, -1)");
  CHECK_EQ_INT(dlb_borrow(L, -1, &view), DLB_OK);
  CHECK_EQ_INT(lua_gettop(L), 1);
  CHECK_EQ_INT(view.ndim, 2);
  CHECK_EQ_INT(view.shape[0], 3);
  CHECK_EQ_INT(view.shape[1], 4);
  CHECK_EQ_INT(view.strides[0], 4);
  CHECK_EQ_INT(view.strides[1], -1);
  CHECK_EQ_INT(view.numel, 12);
  CHECK_EQ_INT(view.dtype.code, kDLInt);
  CHECK_EQ_INT(view.dtype.bits, 32);
  CHECK_EQ_INT(view.device.device_type, kDLCPU);
  CHECK_EQ_INT(view.readonly, 0);
  CHECK_EQ_INT((long long)view.byte_offset, 0);
  {
    const int32_t *first = (const int32_t *)((const char *)view.data + view.byte_offset);
    /* element (i, j) at first[i * 4 - j]: row 2 reversed is 7 6 5 4 */
    CHECK_EQ_INT(first[1 * view.strides[0] + 0 * view.strides[1]], 7);
    CHECK_EQ_INT(first[1 * view.strides[0] + 3 * view.strides[1]], 4);
    /* writes are seen by the array */
    ((int32_t *)first)[0] = 100;
    CHECK_EQ_INT(RUN(L, "return a:get(1, 4)"), 100);
  }
  dlb_borrow_end(&view);
  dlb_borrow_end(&view); /* idempotent */
  CHECK(view.hold == NULL);
  /* An expanded view is read-only. */
  PUSH(L, "return dl.zeros{3}:expand{2, 3}");
  CHECK_EQ_INT(dlb_borrow(L, -1, &view), DLB_OK);
  CHECK_EQ_INT(view.readonly, 1);
  CHECK_EQ_INT(view.strides[0], 0);
  dlb_borrow_end(&view);
  lua_close(L);
}

/* The borrow holds the memory: delete, collection and lua_close do not free
 * it under the borrower (ASan would see the read otherwise). */
static void *end_borrow(void *view) {
  dlb_borrow_end(view);
  return NULL;
}

static void test_borrow_outlives_delete_and_close(void) {
  lua_State *L = new_state();
  dlb_borrowed view;
  pthread_t thread;
  PUSH(L, "return dl.arange(1000, {dtype = 'float64'})");
  CHECK_EQ_INT(dlb_borrow(L, -1, &view), DLB_OK);
  lua_setglobal(L, "a");
  CHECK_EQ_INT(RUN(L, "a:delete() a = nil collectgarbage() return 1"), 1);
  CHECK(((const double *)view.data)[999] == 999.0);
  lua_close(L);
  CHECK(((const double *)view.data)[500] == 500.0);
  pthread_create(&thread, NULL, end_borrow, &view);
  pthread_join(thread, NULL);
  CHECK(view.hold == NULL);
}

static void test_borrow_ref(void) {
  lua_State *L = new_state();
  dlb_borrowed view;
  int ref;
  PUSH(L, "return dl.ones({2, 2}, {dtype = 'float32'})");
  ref = luaL_ref(L, LUA_REGISTRYINDEX);
  CHECK_EQ_INT(dlb_borrow_ref(L, ref, &view), DLB_OK);
  CHECK_EQ_INT(lua_gettop(L), 0);
  CHECK(((const float *)view.data)[3] == 1.0f);
  dlb_borrow_end(&view);
  /* A reference to something else: ARGUMENT, the error pushed. */
  lua_pushinteger(L, 5);
  lua_rawseti(L, LUA_REGISTRYINDEX, ref);
  CHECK_EQ_INT(dlb_borrow_ref(L, ref, &view), DLB_E_ARGUMENT);
  CHECK(view.hold == NULL);
  CHECK_ERROR_TOP(L, 0, "ARGUMENT", "dlb_borrow_ref");
  luaL_unref(L, LUA_REGISTRYINDEX, ref);
  lua_close(L);
}

static void test_borrow_refused(void) {
  lua_State *L = new_state();
  dlb_borrowed view;
  dlb_backend_ops ops = opaque_ops("engine");
  const char *message;
  lua_pushinteger(L, 3);
  CHECK_EQ_INT(dlb_borrow(L, -1, &view), DLB_E_ARGUMENT);
  CHECK(view.hold == NULL);
  dlb_borrow_end(&view); /* harmless after a failure */
  CHECK_ERROR_TOP(L, 1, "ARGUMENT", "dlb_borrow");
  lua_settop(L, 0);
  PUSH(L, "local a = dl.zeros{2} a:delete() return a");
  CHECK_EQ_INT(dlb_borrow(L, -1, &view), DLB_E_DELETED);
  CHECK_ERROR_TOP(L, 1, "DELETED", "dlb_borrow");
  lua_settop(L, 0);
  /* memory a backend cannot hand out a pointer to */
  CHECK_EQ_INT(dlb_register_backend(L, &ops, NULL), DLB_OK);
  PUSH(L, "return dl.zeros({4}, {device = 'engine'})");
  CHECK_EQ_INT(dlb_borrow(L, -1, &view), DLB_E_BACKEND_INCOMPATIBLE);
  CHECK_EQ_INT(dlb_last_error(&message), DLB_E_BACKEND_INCOMPATIBLE);
  CHECK(strstr(message, "dlb_borrow: BACKEND_INCOMPATIBLE: ") == message);
  CHECK_ERROR_TOP(L, 1, "BACKEND_INCOMPATIBLE", "dlb_borrow");
  /* a success leaves the last error as it was */
  PUSH(L, "return dl.zeros{2}");
  CHECK_EQ_INT(dlb_borrow(L, -1, &view), DLB_OK);
  dlb_borrow_end(&view);
  CHECK_EQ_INT(dlb_last_error(NULL), DLB_E_BACKEND_INCOMPATIBLE);
  lua_close(L);
}

/* ------------------------------------------------------------------------ */
/* Versioned export options */

static void test_options_version(void) {
  lua_State *L = new_state();
  dlb_export_options o;
  DLManagedTensorVersioned *t = NULL;
  dlb_export_options_init(&o);
  CHECK_EQ_INT(o.version, DLB_EXPORT_OPTIONS_VERSION);
  CHECK_EQ_INT(o.copy, -1);
  CHECK_EQ_INT(o.layout, DLB_LAYOUT_ANY);
  PUSH(L, "return dl.arange(6):view{2, 3}:T()");
  /* version 0 (a struct never initialised) and newer versions are refused */
  o.version = 0;
  CHECK_EQ_INT(dlb_export_versioned(L, 1, &o, &t), DLB_E_ARGUMENT);
  CHECK_ERROR_TOP(L, 1, "ARGUMENT", "dlb_export_versioned");
  o.version = DLB_EXPORT_OPTIONS_VERSION + 1;
  CHECK_EQ_INT(dlb_export_versioned(L, 1, &o, &t), DLB_E_ARGUMENT);
  CHECK_ERROR_TOP(L, 1, "ARGUMENT", "dlb_export_versioned");
  o.version = DLB_EXPORT_OPTIONS_VERSION;
  o.layout = 7;
  CHECK_EQ_INT(dlb_export_versioned(L, 1, &o, &t), DLB_E_ARGUMENT);
  CHECK_ERROR_TOP(L, 1, "ARGUMENT", "dlb_export_versioned");
  /* the contiguous layout copies the transposed view */
  o.layout = DLB_LAYOUT_CONTIGUOUS;
  CHECK_EQ_INT(dlb_export_versioned(L, 1, &o, &t), DLB_OK);
  if (t) {
    CHECK_EQ_INT(t->dl_tensor.strides[0], 2);
    CHECK_EQ_INT(t->dl_tensor.strides[1], 1);
    CHECK_EQ_INT(((int64_t *)t->dl_tensor.data)[1], 3);
    CHECK(t->flags & DLPACK_FLAG_BITMASK_IS_COPIED);
    t->deleter(t);
  }
  lua_close(L);
}

int main(void) {
  test_external_row_major();
  test_external_strides_and_read_only();
  test_external_not_refused_by_the_limit();
  test_external_released_after_close_on_another_thread();
  test_external_overlap_read_only();
  test_external_unaddressed_strides();
  test_external_refused();
  test_borrow_view();
  test_borrow_outlives_delete_and_close();
  test_borrow_ref();
  test_borrow_refused();
  test_options_version();
  return check_done("capi_wrap_borrow");
}
