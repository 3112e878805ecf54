/* exchange.c -- the exchange table (dlbridge_exchange.h): the host API as C
 * function pointers in the registry, for Lua C modules that do not link
 * dlbridge. */
#include "../dlbridge_exchange.h"
#include "hostapi.h"

static int exchange_is_array(lua_State *L, int idx) { return dlbL_to_array(L, idx) != NULL; }

static const dlb_exchange exchange_table = {
    DLB_EXCHANGE_VERSION,    sizeof(dlb_exchange), DLB_VERSION_STRING, exchange_is_array,
    dlb_export_options_init, dlb_export_versioned, dlb_push_versioned, dlb_push_capsule_versioned,
    dlb_push_external,       dlb_borrow,           dlb_borrow_end,     dlb_raise,
    dlb_register_backend,    dlb_last_error,
};

void dlbL_open_exchange(lua_State *L) {
  lua_pushlightuserdata(L, (void *)&exchange_table);
  lua_setfield(L, LUA_REGISTRYINDEX, DLB_EXCHANGE_KEY);
}
