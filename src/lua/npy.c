/* npy.c -- NumPy .npy files and strings: dl.save, dl.load, dl.tonpy, dl.fromnpy.
 * The format itself lives in src/files/npy.c (no Lua). */
#include <string.h>
#include <sys/stat.h>

#include "../core/shape.h"
#include "../files/npy.h"
#include "internal.h"

/* dl.load's and dl.fromnpy's options, and whether they name another device
 * than the cpu (then the array is a copy there). */
typedef struct load_options {
  dlbL_load_options o;
  int elsewhere;
} load_options;

static void check_load_options(lua_State *L, int idx, load_options *lo, const char *op) {
  dlbL_check_load_options(L, idx, &lo->o, op);
  lo->elsewhere = lo->o.backend != dlbL_state(L)->cpu || lo->o.device_id != 0;
}

/* The file path at idx: a string without zero bytes. */
static const char *check_path(lua_State *L, int idx, const char *op) {
  size_t len;
  const char *path;
  if (lua_type(L, idx) != LUA_TSTRING)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, "the path is a string such as \"data.npy\"",
                    "the path must be a string, got %s", luaL_typename(L, idx));
  path = lua_tolstring(L, idx, &len);
  if (strlen(path) != len)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, "the path is a string such as \"data.npy\"",
                    "the path contains a zero byte");
  return path;
}

/* Replaces the cpu array on top of the stack by a copy on where's device. */
static void move_to(lua_State *L, const dlbL_load_options *where, const char *op) {
  dlb_array *src = dlbL_to_array(L, -1), *dst;
  dlb_error err;
  dst = dlbL_push_empty(L, op);
  dlbL_reserve(L, src->numel, dlb_array_itemsize(src)); /* src is private: no finalizer reaches it */
  if (dlb_array_clone_to(dst, src, where->backend, where->device_id, &err) != DLB_OK)
    dlbL_raise_error(L, &err, op);
  dlbL_account(L, dst->buffer->nbytes);
  dlb_array_release(src); /* a mapping goes now, not at the next collection */
}

/* copy = false where only a copy would do. */
static void refuse_copy(lua_State *L, const char *op, const char *why, const char *hint) {
  dlb_error err;
  dlb_fail(&err, DLB_E_COPY_REQUIRED, "%s", why);
  dlb_error_hint(&err, hint);
  dlbL_raise_error(L, &err, op);
}

/* dl.save(path, a): a as a .npy file (C order, this machine's byte order). */
static int npy_save(lua_State *L) {
  const char *path;
  dlb_array *a;
  dlb_error err;
  dlbL_check_file_access(L, "dl.save");
  dlbL_check_nargs(L, 2, "dl.save");
  path = check_path(L, 1, "dl.save");
  a = dlbL_check_live(L, 2, "dl.save");
  if (dlb_npy_save_file(a, path, &err) != DLB_OK) dlbL_raise_error(L, &err, "dl.save");
  return 0;
}

/* dl.load(path, opts): the array of a .npy file, a read-only view of its
 * mapping where possible. */
static int npy_load(lua_State *L) {
  load_options o;
  const char *path;
  struct stat info;
  dlb_array *a;
  dlb_error err;
  dlbL_check_file_access(L, "dl.load");
  dlbL_check_nargs(L, 2, "dl.load");
  path = check_path(L, 1, "dl.load");
  check_load_options(L, 2, &o, "dl.load");
  if (o.elsewhere && o.o.copy == DLB_COPY_NEVER)
    refuse_copy(L, "dl.load", "loading onto another device than the cpu copies the data there",
                "leave copy out to copy, or load onto the cpu");
  lua_settop(L, 1);
  a = dlbL_push_empty(L, "dl.load");
  /* A mapping or a copy is at most the file's size: room for it first. */
  if (stat(path, &info) == 0) dlbL_reserve(L, (int64_t)info.st_size, 1);
  if (dlb_npy_load_file(dlbL_state(L)->cpu, path, o.elsewhere ? DLB_COPY_IF_NEEDED : o.o.copy, a,
                        &err) != DLB_OK)
    dlbL_raise_error(L, &err, "dl.load");
  dlbL_account(L, a->buffer->nbytes);
  if (o.elsewhere) move_to(L, &o.o, "dl.load");
  return 1;
}

/* dl.fromnpy(s, opts): the array of a .npy file held in a string (a copy). */
static int npy_fromnpy(lua_State *L) {
  load_options o;
  const char *s;
  size_t len;
  dlb_array *a;
  dlb_error err;
  dlbL_check_nargs(L, 2, "dl.fromnpy");
  if (lua_type(L, 1) != LUA_TSTRING)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, "dl.fromnpy",
                    "s is the contents of a .npy file, such as dl.tonpy(a) or "
                    "io.open(path, \"rb\"):read(\"a\")",
                    "dl.fromnpy(s) takes a string, got %s", luaL_typename(L, 1));
  check_load_options(L, 2, &o, "dl.fromnpy");
  if (o.o.copy == DLB_COPY_NEVER)
    refuse_copy(L, "dl.fromnpy", "an array made from a string is always a copy",
                "leave copy out; dl.load(path) maps a file without copying");
  lua_settop(L, 1);
  s = lua_tolstring(L, 1, &len);
  a = dlbL_push_empty(L, "dl.fromnpy");
  dlbL_reserve(L, (int64_t)len, 1);
  if (dlb_npy_from_memory(dlbL_state(L)->cpu, s, len, a, &err) != DLB_OK)
    dlbL_raise_error(L, &err, "dl.fromnpy");
  dlbL_account(L, a->buffer->nbytes);
  if (o.elsewhere) move_to(L, &o.o, "dl.fromnpy");
  return 1;
}

static int tonpy_unprotected(lua_State *L) {
  dlb_array *a = dlbL_check_live(L, 1, "dl.tonpy");
  char header[DLB_NPY_HEADER_MAX];
  size_t hlen, nbytes;
  luaL_Buffer b;
  dlb_error err;
  char *out;
  if (dlb_npy_format_header(a->dtype, a->ndim, a->shape, header, &hlen, &err) != DLB_OK)
    dlbL_raise_error(L, &err, "dl.tonpy");
  if (dlb_shape_nbytes(a->numel, dlb_array_itemsize(a), &nbytes, &err) != DLB_OK ||
      nbytes > SIZE_MAX - hlen)
    dlbL_raise(L, DLB_E_OUT_OF_MEMORY, "dl.tonpy", "%lld elements do not fit in a string",
               (long long)a->numel);
  out = luaL_buffinitsize(L, &b, hlen + nbytes);
  if (!a->buffer) /* a finalizer run by that allocation deleted it */
    dlbL_raise(L, DLB_E_DELETED, "dl.tonpy", "the array was deleted");
  memcpy(out, header, hlen);
  if (dlb_array_read_into(a, out + hlen, a->dtype, &err) != DLB_OK)
    dlbL_raise_error(L, &err, "dl.tonpy");
  luaL_pushresultsize(&b, hlen + nbytes);
  return 1;
}

/* dl.tonpy(a): the bytes dl.save would write, as a string. */
static int npy_tonpy(lua_State *L) {
  dlbL_check_nargs(L, 1, "dl.tonpy");
  return dlbL_call_protected(L, tonpy_unprotected, "dl.tonpy");
}

const luaL_Reg dlbL_npy_functions[] = {{"save", npy_save},
                                       {"load", npy_load},
                                       {"tonpy", npy_tonpy},
                                       {"fromnpy", npy_fromnpy},
                                       {NULL, NULL}};
