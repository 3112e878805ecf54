/* files.c -- what the file bindings share: the path check, load options. */
#include "files.h"

#include "../files/mapping.h"

const char *dlbL_check_path(lua_State *L, int idx, const char *op, const char *example) {
  size_t len;
  const char *path;
  dlb_error err;
  if (lua_type(L, idx) != LUA_TSTRING)
    dlbL_raise_hint(L, DLB_E_ARGUMENT, op, example, "the path must be a string, got %s",
                    luaL_typename(L, idx));
  path = lua_tolstring(L, idx, &len);
  if (dlb_check_path(path, len, &err) != DLB_OK) dlbL_raise_error(L, &err, op);
  return path;
}

/* The load policy's reserve hook: room for nbytes (dlbL_reserve collects,
 * never raises). */
static void reserve(void *L, uint64_t nbytes) {
  dlbL_reserve((lua_State *)L, nbytes > INT64_MAX ? INT64_MAX : (int64_t)nbytes, 1);
}

void dlbL_load_policy_options(lua_State *L, dlb_lua_state *state, const dlbL_load_options *o,
                              dlb_load_options *out) {
  out->copy = o->copy;
  out->backend = o->backend;
  out->device_id = o->device_id;
  out->map = dlbL_mapping_allowed(state);
  out->reserve = reserve;
  out->reserve_ctx = L;
}
