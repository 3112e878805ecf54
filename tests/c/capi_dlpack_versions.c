/* capi_dlpack_versions.c -- a versioned tensor of another major version
 * through every entry point that takes one: dlb_push_versioned,
 * dlb_push_capsule_versioned (then dl.from_dlpack, a producer's __dlpack,
 * dlb_capsule_take, the capsule's collection), the exchange table's
 * push_versioned and push_capsule_versioned, and the import with a memory
 * limit set (which sizes the tensor first).
 *
 * dlpack.h (DLPackVersion): when major differs from the consumer's, "the
 * consumer must call the deleter (and it is safe to do so). It is not safe to
 * access any other fields as the memory layout will have changed." Each tensor
 * here has only version, manager_ctx and deleter (its first 24 bytes) on a
 * readable page; flags (+24) and dl_tensor (+32) lie on a PROT_NONE page, so
 * reading them faults. Every case runs in a child process: a fault is one
 * failed check. Each must report DLPACK_VERSION and call the deleter exactly
 * once.
 *
 * Then the one flag dl.from_dlpack reads of a 1.x tensor a producer's
 * __dlpack hands over: IS_COPIED (the tensor is the consumer's own memory),
 * with and without READ_ONLY. */
#define _DEFAULT_SOURCE /* mmap's MAP_ANONYMOUS; fixtures.h: fork, waitpid */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "dlbridge.h"
#include "dlbridge_exchange.h"
#include "fixtures.h"

/* The bytes of DLManagedTensorVersioned that every major version keeps. */
#define STABLE_PREFIX (offsetof(DLManagedTensorVersioned, deleter) + sizeof(void (*)(void)))
_Static_assert(STABLE_PREFIX == 24, "version, manager_ctx, deleter: 24 bytes");

static int deleter_calls;

static void count_delete(DLManagedTensorVersioned *self) {
  /* manager_ctx is part of the stable prefix: a deleter may use it */
  CHECK(self->manager_ctx == &deleter_calls);
  deleter_calls++;
}

/* A tensor of version major.minor of which only the stable prefix is readable. */
static DLManagedTensorVersioned *guarded(uint32_t major, uint32_t minor) {
  long page = sysconf(_SC_PAGESIZE);
  char *m =
      mmap(NULL, (size_t)(2 * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  DLManagedTensorVersioned *v;
  if (m == MAP_FAILED || mprotect(m + page, (size_t)page, PROT_NONE) != 0) {
    perror("mmap");
    exit(2);
  }
  v = (DLManagedTensorVersioned *)(void *)(m + page - STABLE_PREFIX);
  v->version.major = major;
  v->version.minor = minor;
  v->manager_ctx = &deleter_calls;
  v->deleter = count_delete;
  deleter_calls = 0;
  return v;
}

/* The error code a chunk raises ("" when it does not raise). */
static const char *code_of(lua_State *L, const char *chunk) {
  static char buf[128];
  char wrapped[1024];
  int top = lua_gettop(L);
  snprintf(
      wrapped, sizeof wrapped,
      "local ok, e = pcall(function() %s end) "
      "return ok and '' or dl.is_error(e) and e.code or 'not a dlbridge.Error: ' .. tostring(e)",
      chunk);
  if (luaL_dostring(L, wrapped) != LUA_OK)
    snprintf(buf, sizeof buf, "lua error: %s", lua_tostring(L, -1));
  else snprintf(buf, sizeof buf, "%s", lua_tostring(L, -1));
  lua_settop(L, top);
  return buf;
}

/* ------------------------------------------------------------------------ */

static void push_versioned(void) {
  lua_State *L = new_state();
  CHECK_EQ_INT(dlb_push_versioned(L, guarded(2, 0)), DLB_E_DLPACK_VERSION);
  CHECK_ERROR_TOP(L, 0, "DLPACK_VERSION", "dlb_push_versioned");
  CHECK_EQ_INT(deleter_calls, 1);
  /* major 0 in a versioned struct is another major too */
  CHECK_EQ_INT(dlb_push_versioned(L, guarded(0, 8)), DLB_E_DLPACK_VERSION);
  CHECK_ERROR_TOP(L, 0, "DLPACK_VERSION", "dlb_push_versioned");
  CHECK_EQ_INT(deleter_calls, 1);
  lua_close(L);
  CHECK_EQ_INT(deleter_calls, 1);
}

static void push_versioned_with_memory_limit(void) {
  lua_State *L = new_state();
  CHECK_EQ_INT(dlb_set_memory_limit(L, (size_t)1 << 30), DLB_OK); /* the import sizes the tensor */
  CHECK_EQ_INT(dlb_push_versioned(L, guarded(2, 0)), DLB_E_DLPACK_VERSION);
  CHECK_ERROR_TOP(L, 0, "DLPACK_VERSION", "dlb_push_versioned");
  CHECK_EQ_INT(deleter_calls, 1);
  CHECK_EQ_INT(dlb_push_capsule_versioned(L, guarded(2, 0)), DLB_OK);
  lua_setglobal(L, "cap");
  CHECK_EQ_STR(code_of(L, "dl.from_dlpack(cap)"), "DLPACK_VERSION");
  CHECK_EQ_INT(deleter_calls, 1);
  lua_close(L);
  CHECK_EQ_INT(deleter_calls, 1);
}

/* The capsule carries the tensor as the host gave it; the version is read,
 * nothing else (its device is unknown); dl.from_dlpack reports the version. */
static void capsule_then_from_dlpack(void) {
  lua_State *L = new_state();
  CHECK_EQ_INT(dlb_push_capsule_versioned(L, guarded(2, 1)), DLB_OK);
  CHECK_EQ_INT(lua_gettop(L), 1);
  lua_setglobal(L, "cap");
  CHECK_EQ_INT(deleter_calls, 0);
  CHECK_EQ_INT(RUN(L, "return cap.versioned and cap.version[1] == 2 and cap.version[2] == 1"), 1);
  CHECK_EQ_INT(RUN(L, "return cap.device == nil"), 1);
  CHECK_EQ_INT(RUN(L, "return tostring(cap):find('DLPack 2.1', 1, true) ~= nil"), 1);
  CHECK_EQ_STR(code_of(L, "dl.from_dlpack(cap)"), "DLPACK_VERSION");
  CHECK_EQ_INT(deleter_calls, 1);
  CHECK_EQ_INT(RUN(L, "return cap.consumed"), 1);
  CHECK_EQ_STR(code_of(L, "dl.from_dlpack(cap)"), "CAPSULE_CONSUMED");
  lua_close(L);
  CHECK_EQ_INT(deleter_calls, 1);
}

/* With options too: copy and device are looked at after the version. */
static void capsule_then_from_dlpack_with_options(void) {
  static const char *const chunks[] = {
      "dl.from_dlpack(cap, {copy = true})",
      "dl.from_dlpack(cap, {copy = false})",
      "dl.from_dlpack(cap, {device = 'cpu'})",
      "dl.from_dlpack({__dlpack = function() return cap end}, {copy = true})",
      "dl.from_dlpack({__dlpack = function() return cap end}, {copy = false, device = 'cpu'})",
  };
  lua_State *L = new_state();
  for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
    CHECK_EQ_INT(dlb_push_capsule_versioned(L, guarded(2, 0)), DLB_OK);
    lua_setglobal(L, "cap");
    CHECK_EQ_STR(code_of(L, chunks[i]), "DLPACK_VERSION");
    CHECK_EQ_INT(deleter_calls, 1);
  }
  lua_close(L);
  CHECK_EQ_INT(deleter_calls, 1);
}

/* A Lua producer whose __dlpack hands over such a capsule. */
static void capsule_from_producer(void) {
  lua_State *L = new_state();
  CHECK_EQ_INT(dlb_push_capsule_versioned(L, guarded(2, 0)), DLB_OK);
  lua_setglobal(L, "cap");
  CHECK_EQ_STR(code_of(L, "dl.from_dlpack({__dlpack = function(self, opts) return cap end})"),
               "DLPACK_VERSION");
  CHECK_EQ_INT(deleter_calls, 1);
  lua_close(L);
  CHECK_EQ_INT(deleter_calls, 1);
}

/* Never consumed: the capsule's collection gives it back, once. */
static void capsule_collected(void) {
  lua_State *L = new_state();
  CHECK_EQ_INT(dlb_push_capsule_versioned(L, guarded(2, 0)), DLB_OK);
  lua_pop(L, 1);
  lua_gc(L, LUA_GCCOLLECT, 0);
  lua_gc(L, LUA_GCCOLLECT, 0);
  CHECK_EQ_INT(deleter_calls, 1);
  CHECK_EQ_INT(dlb_push_capsule_versioned(L, guarded(3, 0)), DLB_OK);
  lua_setglobal(L, "kept");
  lua_close(L); /* at lua_close */
  CHECK_EQ_INT(deleter_calls, 1);
}

/* dlb_capsule_take hands the tensor back to the host untouched. */
static void capsule_taken_by_host(void) {
  lua_State *L = new_state();
  DLManagedTensorVersioned *v = guarded(2, 0);
  void *tensor = NULL;
  int versioned = 0;
  CHECK_EQ_INT(dlb_push_capsule_versioned(L, v), DLB_OK);
  CHECK_EQ_INT(dlb_capsule_take(L, -1, &tensor, &versioned), DLB_OK);
  CHECK(tensor == v);
  CHECK_EQ_INT(versioned, 1);
  CHECK_EQ_INT(deleter_calls, 0);
  lua_close(L);
  CHECK_EQ_INT(deleter_calls, 0); /* the host's now */
  v->deleter(v);
  CHECK_EQ_INT(deleter_calls, 1);
}

static void exchange_table(void) {
  lua_State *L = new_state();
  const dlb_exchange *x = dlb_exchange_get(L);
  CHECK(x != NULL);
  if (!x) return;
  CHECK_EQ_INT(x->push_versioned(L, guarded(2, 0)), DLB_E_DLPACK_VERSION);
  CHECK_ERROR_TOP(L, 0, "DLPACK_VERSION", "dlb_push_versioned");
  CHECK_EQ_INT(deleter_calls, 1);
  CHECK_EQ_INT(x->push_capsule_versioned(L, guarded(2, 0)), DLB_OK);
  lua_setglobal(L, "cap");
  CHECK_EQ_STR(code_of(L, "dl.from_dlpack(cap)"), "DLPACK_VERSION");
  CHECK_EQ_INT(deleter_calls, 1);
  lua_close(L);
  CHECK_EQ_INT(deleter_calls, 1);
}

/* The control: a 1.x tensor laid out the same way, but whole, imports. */
static void same_major_imports(void) {
  static float data[3] = {1, 2, 3};
  static int64_t shape[1] = {3};
  lua_State *L = new_state();
  DLManagedTensorVersioned *v = calloc(1, sizeof *v);
  v->version.major = DLB_DLPACK_MAJOR;
  v->version.minor = 99; /* a newer minor keeps the ABI */
  v->manager_ctx = &deleter_calls;
  v->deleter = count_delete;
  v->dl_tensor.data = data;
  v->dl_tensor.device.device_type = kDLCPU;
  v->dl_tensor.ndim = 1;
  v->dl_tensor.dtype = dt(kDLFloat, 32, 1);
  v->dl_tensor.shape = shape;
  deleter_calls = 0;
  CHECK_EQ_INT(dlb_push_capsule_versioned(L, v), DLB_OK);
  lua_setglobal(L, "cap");
  CHECK_EQ_INT(RUN(L, "return cap.device[1] == 1 and cap.device[2] == 0"), 1);
  CHECK_EQ_INT(RUN(L, "return dl.from_dlpack(cap):sum() == 6"), 1);
  lua_close(L);
  CHECK_EQ_INT(deleter_calls, 1);
  free(v);
}

/* A 1.3 float32 tensor {1, 2, 3} over data with these flags (a new one
 * each call, static: the deleter only counts). */
static DLManagedTensorVersioned *flagged(float *data, uint64_t flags) {
  static int64_t shape[1] = {3};
  static DLManagedTensorVersioned pool[8];
  static int used;
  DLManagedTensorVersioned *t = &pool[used++ % 8];
  memset(t, 0, sizeof *t);
  data[0] = 1, data[1] = 2, data[2] = 3;
  t->version.major = DLB_DLPACK_MAJOR;
  t->version.minor = DLB_DLPACK_MINOR;
  t->manager_ctx = &deleter_calls;
  t->deleter = count_delete;
  t->flags = flags;
  t->dl_tensor.data = data;
  t->dl_tensor.device.device_type = kDLCPU;
  t->dl_tensor.ndim = 1;
  t->dl_tensor.dtype = dt(kDLFloat, 32, 1);
  t->dl_tensor.shape = shape;
  deleter_calls = 0;
  return t;
}

/* A producer (global p) whose __dlpack returns the capsule in global cap. */
static void producer_of(lua_State *L, DLManagedTensorVersioned *v) {
  CHECK_EQ_INT(dlb_push_capsule_versioned(L, v), DLB_OK);
  lua_setglobal(L, "cap");
  CHECK_EQ_INT(RUN(L, "p = {__dlpack = function(self, opts) return cap end} return true"), 1);
}

static void copied_flag(void) {
  float data[3];
  lua_State *L = new_state();
  /* copy = true and the producer copied: that copy is the array (no second one) */
  producer_of(L, flagged(data, DLPACK_FLAG_BITMASK_IS_COPIED));
  CHECK_EQ_INT(RUN(L, "b = dl.from_dlpack(p, {copy = true}) b[1] = 9 return b.readonly"), 0);
  CHECK(data[0] == 9.0f);
  CHECK_EQ_INT(deleter_calls, 0); /* held by b */
  CHECK_EQ_INT(RUN(L, "b = nil collectgarbage() collectgarbage() return true"), 1);
  CHECK_EQ_INT(deleter_calls, 1);
  /* a read-only copy is copied again: copy = true gives a writable array */
  producer_of(L, flagged(data, DLPACK_FLAG_BITMASK_IS_COPIED | DLPACK_FLAG_BITMASK_READ_ONLY));
  CHECK_EQ_INT(RUN(L, "b = dl.from_dlpack(p, {copy = true}) b[1] = 9 return b.readonly"), 0);
  CHECK(data[0] == 1.0f);
  CHECK_EQ_INT(deleter_calls, 1); /* handed back at once */
  /* copy = false and the producer copied anyway: COPY_REQUIRED, deleter once */
  producer_of(L, flagged(data, DLPACK_FLAG_BITMASK_IS_COPIED));
  CHECK_EQ_STR(code_of(L, "dl.from_dlpack(p, {copy = false})"), "COPY_REQUIRED");
  CHECK_EQ_INT(deleter_calls, 1);
  /* without copy the flag changes nothing: zero copy */
  producer_of(L, flagged(data, DLPACK_FLAG_BITMASK_IS_COPIED));
  CHECK_EQ_INT(RUN(L, "b = dl.from_dlpack(p) b[2] = 8 b = nil collectgarbage() return true"), 1);
  CHECK(data[1] == 8.0f);
  CHECK_EQ_INT(deleter_calls, 1);
  /* a capsule given directly is copied as asked (the flag is looked at only
   * for what dl.from_dlpack asked a producer for) */
  CHECK_EQ_INT(dlb_push_capsule_versioned(L, flagged(data, DLPACK_FLAG_BITMASK_IS_COPIED)), DLB_OK);
  lua_setglobal(L, "cap");
  CHECK_EQ_INT(RUN(L, "b = dl.from_dlpack(cap, {copy = true}) b[1] = 9 return true"), 1);
  CHECK(data[0] == 1.0f);
  CHECK_EQ_INT(deleter_calls, 1);
  CHECK_EQ_INT(dlb_push_capsule_versioned(L, flagged(data, DLPACK_FLAG_BITMASK_IS_COPIED)), DLB_OK);
  lua_setglobal(L, "cap");
  CHECK_EQ_INT(RUN(L, "b = dl.from_dlpack(cap, {copy = false}) b[1] = 9 b = nil return true"), 1);
  CHECK(data[0] == 9.0f);
  lua_close(L);
  CHECK_EQ_INT(deleter_calls, 1);
}

int main(void) {
  CHECK(run_isolated(push_versioned));
  CHECK(run_isolated(push_versioned_with_memory_limit));
  CHECK(run_isolated(capsule_then_from_dlpack));
  CHECK(run_isolated(capsule_then_from_dlpack_with_options));
  CHECK(run_isolated(capsule_from_producer));
  CHECK(run_isolated(capsule_collected));
  CHECK(run_isolated(capsule_taken_by_host));
  CHECK(run_isolated(exchange_table));
  CHECK(run_isolated(same_major_imports));
  CHECK(run_isolated(copied_flag));
  return check_done("capi_dlpack_versions");
}
