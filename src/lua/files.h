/* files.h -- what the file bindings (npy.c, safetensors.c) share: the one
 * check of a path, and the load options as the load policy takes them. */
#ifndef DLB_LUA_FILES_H
#define DLB_LUA_FILES_H

#include "../files/load_policy.h"
#include "internal.h"

/* The path at idx: a string without zero bytes (dlb_check_path), else
 * ARGUMENT naming op, with example ("dl.load(\"data.npy\")") in the hint.
 * Every function taking a path from a script calls it. */
const char *dlbL_check_path(lua_State *L, int idx, const char *op, const char *example);

/* A load's options for the load policy: o (copy, device) and the state's
 * choices (mapping allowed: dlb_allow_mapping; the memory limit, which may
 * want garbage collected before a mapping or a copy: dlbL_reserve). */
void dlbL_load_policy_options(lua_State *L, dlb_lua_state *state, const dlbL_load_options *o,
                              dlb_load_options *out);

#endif
