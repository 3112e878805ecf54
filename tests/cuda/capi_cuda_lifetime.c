/* capi_cuda_lifetime.c -- a host embedding Lua, with the cuda backend on the
 * stand-in driver (DLB_CUDA_STANDIN, set as DLB_CUDA_DRIVER before first use):
 * DLPack exports of cuda arrays whose deleters run on another thread after
 * lua_close give back every allocation and context retain; one whose
 * deleter runs after the driver shut down (CUDA_ERROR_DEINITIALIZED, as at
 * exit) is done without a crash, and so are the frees of a forked child;
 * dlb_device_queue hands out dlbridge's stream. With --without-driver, the driver cannot be loaded at all: the
 * module still loads and every use raises DEVICE_UNAVAILABLE. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <pthread.h>
#include "../c/fixtures.h"
#include "stand_in_driver.h"

static standin_control_fn control;
static standin_query_fn query;

static void open_standin(void) {
  void *lib;
  setenv("DLB_CUDA_DRIVER", DLB_CUDA_STANDIN, 1);
  if (!(lib = dlopen(DLB_CUDA_STANDIN, RTLD_NOW | RTLD_LOCAL))) {
    fprintf(stderr, "cannot open %s\n", DLB_CUDA_STANDIN);
    exit(2);
  }
  control = (standin_control_fn)dlsym(lib, "standin_control");
  query = (standin_query_fn)dlsym(lib, "standin_query");
  if (!control || !query) exit(2);
}

/* An export of a cuda:0 array of n float32 threes (a fresh state, closed). */
static DLManagedTensorVersioned *export_after_close(int n) {
  lua_State *L = new_state();
  DLManagedTensorVersioned *t = NULL;
  lua_pushfstring(L, "return dl.full(%d, 3, {dtype = 'float32', device = 'cuda:0'})", n);
  CHECK_EQ_INT(luaL_dostring(L, lua_tostring(L, -1)), LUA_OK);
  CHECK_EQ_INT(dlb_export_versioned(L, -1, NULL, &t), DLB_OK);
  lua_close(L);
  return t;
}

static void *delete_tensor(void *arg) {
  DLManagedTensorVersioned *t = arg;
  t->deleter(t);
  return NULL;
}

static void delete_on_thread(DLManagedTensorVersioned *t) {
  pthread_t th;
  CHECK_EQ_INT(pthread_create(&th, NULL, delete_tensor, t), 0);
  pthread_join(th, NULL);
}

static void test_deleter_after_close_on_another_thread(void) {
  long long allocations = query("live_allocations"), retains = query("retains:0");
  DLManagedTensorVersioned *t = export_after_close(1000);
  CHECK(t != NULL);
  if (!t) return;
  CHECK_EQ_INT(t->dl_tensor.device.device_type, kDLCUDA);
  CHECK(query("live_allocations") > allocations); /* the export keeps the memory */
  CHECK(query("retains:0") > retains);            /* and its context */
  delete_on_thread(t);
  CHECK_EQ_INT(query("live_allocations"), allocations);
  CHECK_EQ_INT(query("retains:0"), retains);
  CHECK_EQ_INT(query("streams_live"), 0);
  CHECK_EQ_INT(query("events_live"), 0);
}

static void test_deleter_after_driver_shutdown(void) {
  DLManagedTensorVersioned *t = export_after_close(10);
  long long frees;
  CHECK(t != NULL);
  if (!t) return;
  frees = query("calls:cuMemFree_v2");
  control("deinit", 1);
  delete_on_thread(t); /* DEINITIALIZED everywhere: done, no crash, no leak of ours */
  control("deinit", 0);
  CHECK_EQ_INT(query("calls:cuMemFree_v2"), frees); /* nothing freed twice or late */
}

static void test_device_queue_is_dlbridges_stream(void) {
  lua_State *L = new_state();
  void *q = NULL;
  CHECK_EQ_INT(dlb_device_queue(L, kDLCUDA, 1, &q), DLB_OK);
  CHECK(q != NULL && (uintptr_t)q > 2); /* a stream of its own, not a default stream */
  CHECK_EQ_INT(dlb_device_queue(L, kDLCUDA, 2, &q), DLB_E_DEVICE_UNAVAILABLE);
  lua_pop(L, 1);
  lua_close(L);
}

/* A child forked after CUDA was used frees its copies of the arrays at
 * lua_close: the driver refuses (NOT_INITIALIZED) and the frees are done. */
static void test_forked_child_frees_nothing(void) {
  lua_State *L = new_state();
  pid_t pid;
  int status = -1;
  CHECK_EQ_INT(RUN(L, "keep = dl.ones(100, {device = 'cuda:0'}):to_dlpack() "
                      "arr = dl.full(10, 2, {device = 'cuda:1'}) return 1"),
               1);
  fflush(NULL);
  if ((pid = fork()) == 0) {
    lua_close(L); /* every free meets NOT_INITIALIZED */
    _exit(0);
  }
  CHECK(pid > 0);
  CHECK_EQ_INT(waitpid(pid, &status, 0), pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK_EQ_INT(RUN(L, "return arr[10]"), 2); /* the parent's arrays are untouched */
  lua_close(L);
}

static void test_without_driver(void) {
  lua_State *L;
  void *q = (void *)1;
  setenv("DLB_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  L = new_state();
  CHECK_EQ_INT(RUN(L, "local b = dl.backends()[2] "
                      "return b.name == 'cuda' and not b.available and b.devices == 0 "
                      "and b.reason:find('/nonexistent/libcuda.so.1', 1, true) ~= nil"),
               1);
  CHECK_EQ_INT(RUN(L, "local ok, e = pcall(dl.zeros, 2, {device = 'cuda:0'}) "
                      "return not ok and e.code == 'DEVICE_UNAVAILABLE' and e.hint ~= nil"),
               1);
  CHECK_EQ_INT(dlb_device_queue(L, kDLCUDA, 0, &q), DLB_E_DEVICE_UNAVAILABLE);
  CHECK(q == NULL);
  lua_close(L);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--without-driver") == 0) {
    test_without_driver();
    return check_done("capi_cuda_without_driver");
  }
  open_standin();
  test_device_queue_is_dlbridges_stream();
  test_deleter_after_close_on_another_thread();
  test_deleter_after_driver_shutdown();
  test_forked_child_frees_nothing();
  return check_done("capi_cuda_lifetime");
}
