/* npy.c -- NumPy .npy files and strings: dl.save, dl.load, dl.tonpy, dl.fromnpy.
 * The format lives in src/files/npy.c, the view-or-copy policy of loads in
 * src/files/load_policy.c (no Lua). */
#include <string.h>

#include "../core/shape.h"
#include "../files/npy.h"
#include "files.h"

/* dl.save(path, a): a as a .npy file (C order, this machine's byte order). */
static int npy_save(lua_State *L) {
  const char *path;
  dlb_array *a;
  dlb_error err;
  dlbL_check_file_access(L, "dl.save");
  dlbL_check_nargs(L, 2, "dl.save");
  path = dlbL_check_path(L, 1, "dl.save", "dl.save(\"data.npy\", a)");
  a = dlbL_check_live(L, 2, "dl.save");
  if (dlb_npy_save_file(a, path, &err) != DLB_OK) dlbL_raise_error(L, &err, "dl.save");
  return 0;
}

/* Fills the empty array a on top of the stack with the array of the source
 * opened with status st (then closed), or raises the failure. */
static void load_into(lua_State *L, dlb_load_source *source, dlb_status st, dlb_error *err,
                      dlb_array *a, const char *op) {
  if (st == DLB_OK) st = dlb_npy_load(source, a, err);
  dlb_load_close(source);
  if (st != DLB_OK) dlbL_raise_error(L, err, op);
}

/* dl.load(path, opts): the array of a .npy file, a read-only view of its
 * mapping where possible. */
static int npy_load(lua_State *L) {
  dlbL_load_options o;
  dlb_load_options policy;
  dlb_load_source source;
  const char *path;
  dlb_array *a;
  dlb_error err;
  dlb_status st;
  dlbL_check_file_access(L, "dl.load");
  dlbL_check_nargs(L, 2, "dl.load");
  path = dlbL_check_path(L, 1, "dl.load", "dl.load(\"data.npy\")");
  dlbL_check_load_options(L, 2, &o, "dl.load");
  lua_settop(L, 1);
  a = dlbL_push_empty(L, "dl.load");
  dlbL_load_policy_options(L, dlbL_state(L), &o, &policy);
  st = dlb_load_open_file(&source, dlbL_state(L)->cpu, path, &policy, &err);
  load_into(L, &source, st, &err, a, "dl.load");
  return 1;
}

/* dl.fromnpy(s, opts): the array of a .npy file held in a string (a copy). */
static int npy_fromnpy(lua_State *L) {
  dlbL_load_options o;
  dlb_load_options policy;
  dlb_load_source source;
  const char *s;
  size_t len;
  dlb_array *a;
  dlb_error err;
  dlb_status st;
  dlbL_check_nargs(L, 2, "dl.fromnpy");
  if (lua_type(L, 1) != LUA_TSTRING)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, "dl.fromnpy",
                    "s is the contents of a .npy file, such as dl.tonpy(a) or "
                    "io.open(path, \"rb\"):read(\"a\")",
                    "dl.fromnpy(s) takes a string, got %s", luaL_typename(L, 1));
  dlbL_check_load_options(L, 2, &o, "dl.fromnpy");
  if (o.copy == DLB_COPY_NEVER)
    dlbL_raise_hint(L, DLB_E_COPY_REQUIRED, "dl.fromnpy",
                    "leave copy out; dl.load(path) maps a file without copying",
                    "an array made from a string is always a copy");
  o.copy = DLB_COPY_ALWAYS;
  lua_settop(L, 1); /* s stays alive at index 1 while it is read */
  s = lua_tolstring(L, 1, &len);
  a = dlbL_push_empty(L, "dl.fromnpy");
  dlbL_load_policy_options(L, dlbL_state(L), &o, &policy);
  st = dlb_load_open_memory(&source, dlbL_state(L)->cpu, s, len, NULL, &policy, &err);
  load_into(L, &source, st, &err, a, "dl.fromnpy");
  return 1;
}

static int tonpy_unprotected(lua_State *L) {
  dlb_array *a = dlbL_check_live(L, 1, "dl.tonpy");
  char header[DLB_NPY_HEADER_MAX];
  size_t hlen, nbytes;
  luaL_Buffer b;
  dlb_error err;
  dlb_array column_major;
  int fortran = dlb_npy_fortran_view(a, &column_major);
  char *out;
  if (dlb_npy_format_header(a->dtype, a->ndim, a->shape, fortran, header, &hlen, &err) != DLB_OK)
    dlbL_raise_error(L, &err, "dl.tonpy");
  if (dlb_shape_nbytes(a->numel, dlb_array_itemsize(a), &nbytes, &err) != DLB_OK ||
      nbytes > SIZE_MAX - hlen)
    dlbL_raise(L, DLB_E_OUT_OF_MEMORY, "dl.tonpy", "%lld elements do not fit in a string",
               (long long)a->numel);
  dlbL_reserve_lua(L, hlen + nbytes, "dl.tonpy", "a string"); /* Lua's heap: the host's limit too */
  out = dlbL_string_room(L, &b, hlen + nbytes);
  if (!out) /* (LuaJIT: 2 GiB at most) */
    dlbL_raise(L, DLB_E_OUT_OF_MEMORY, "dl.tonpy", "%zu bytes are more than a Lua string holds",
               (size_t)(hlen + nbytes));
  a = dlbL_check_live(L, 1, "dl.tonpy"); /* after an allocation: fetched again (records.c) */
  if (fortran) dlb_npy_fortran_view(a, &column_major); /* the buffer as it is now */
  memcpy(out, header, hlen);
  if (dlb_array_read_into(fortran ? &column_major : a, out + hlen, a->dtype, &err) != DLB_OK)
    dlbL_raise_error(L, &err, "dl.tonpy");
  dlbL_pushresultsize(L, &b, hlen + nbytes);
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
