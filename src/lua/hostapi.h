/* hostapi.h -- what the host API's files (capi.c, module.c, backends.c,
 * exchange.c) share: opening the state on first use, failing as the C API
 * does. */
#ifndef DLB_LUA_HOSTAPI_H
#define DLB_LUA_HOSTAPI_H

#include "internal.h"

/* The open module state of L, opening dlbridge in L first when it is not
 * (as luaopen_dlbridge_core would; a later require returns that module).
 * NULL with err filled (err may be NULL) when Lua has no memory for it
 * (OUT_OF_MEMORY) or dlbridge was already closed with L (UNSUPPORTED). */
dlb_lua_state *dlbL_open_state(lua_State *L, dlb_error *err);

/* How a C API function fails: records err as this thread's last error
 * (dlb_last_error), pushes the error object, returns err->code. */
dlb_status dlbL_capi_failed(lua_State *L, const dlb_error *err, const char *op);

/* exchange.c: publishes the exchange table in the registry of L. */
void dlbL_open_exchange(lua_State *L);

#endif
