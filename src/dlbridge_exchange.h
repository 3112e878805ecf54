/*
 * dlbridge_exchange.h -- dlbridge arrays in another Lua C module, without
 * linking dlbridge: the Lua counterpart of DLPack's C exchange API.
 *
 * Invariants, stated once:
 * - When dlbridge opens in a lua_State it stores, in the registry under
 *   DLB_EXCHANGE_KEY, a light userdata pointing at a dlb_exchange table of C
 *   function pointers. The table is static: valid while the library that
 *   published it stays loaded, which is at least as long as the lua_State.
 * - The table is versioned like dlb_backend_ops: `version` is the library's
 *   DLB_EXCHANGE_VERSION, and later versions only append members, so a
 *   consumer built against version N may use the members of N whenever
 *   version >= N (dlb_exchange_get checks it).
 * - Each member behaves exactly as the dlbridge.h function of the same name
 *   (errors pushed as dlbridge.Error objects and their code returned, the
 *   same ownership rules); this header only declares types and one inline
 *   function, so a consumer links nothing but Lua (and not even that, as a
 *   Lua C module).
 */
#ifndef DLBRIDGE_EXCHANGE_H
#define DLBRIDGE_EXCHANGE_H

#include <lua.h>
#include "dlbridge.h" /* types only: no function of it is called from here */

#ifdef __cplusplus
extern "C" {
#endif

/* The registry field holding the light userdata. */
#define DLB_EXCHANGE_KEY "dlbridge.exchange"
/* The version this header describes. */
#define DLB_EXCHANGE_VERSION 1

/* The exchange table (version 1). */
typedef struct dlb_exchange {
  uint32_t version;             /* the publishing library's DLB_EXCHANGE_VERSION */
  uint32_t size;                /* sizeof(dlb_exchange) in the publishing library */
  const char *dlbridge_version; /* DLB_VERSION_STRING of the publishing library */
  /* The array at idx, or NULL: a quick test before borrowing or exporting. */
  int (*is_array)(lua_State *L, int idx);
  void (*export_options_init)(dlb_export_options *opts);
  dlb_status (*export_versioned)(lua_State *L, int idx, const dlb_export_options *opts,
                                 DLManagedTensorVersioned **out);
  dlb_status (*push_versioned)(lua_State *L, DLManagedTensorVersioned *tensor);
  dlb_status (*push_capsule_versioned)(lua_State *L, DLManagedTensorVersioned *tensor);
  dlb_status (*push_external)(lua_State *L, void *data, DLDataType dtype, int32_t ndim,
                              const int64_t *shape, const int64_t *strides, DLDevice device,
                              uint32_t flags, void (*release)(void *ctx), void *ctx);
  dlb_status (*borrow)(lua_State *L, int idx, dlb_borrowed *view);
  void (*borrow_end)(dlb_borrowed *view);
  int (*raise)(lua_State *L, dlb_status code, const char *op, const char *hint, const char *fmt,
               ...);
  dlb_status (*register_backend)(lua_State *L, const dlb_backend_ops *ops, void *ctx);
  dlb_status (*last_error)(const char **message);
} dlb_exchange;

/* The exchange table of L, or NULL when dlbridge cannot be loaded in L or is
 * older than this header. When dlbridge is not open yet it is required
 * ("dlbridge", through the global require). Leaves the stack as it was. */
static inline const dlb_exchange *dlb_exchange_get(lua_State *L) {
  const dlb_exchange *x;
  /* (written for every Lua from 5.1 on: the getters' results unused) */
  lua_getfield(L, LUA_REGISTRYINDEX, DLB_EXCHANGE_KEY);
  if (lua_type(L, -1) != LUA_TLIGHTUSERDATA) {
    lua_pop(L, 1);
    lua_getglobal(L, "require");
    if (lua_type(L, -1) == LUA_TFUNCTION) {
      lua_pushliteral(L, "dlbridge");
      if (lua_pcall(L, 1, 0, 0) != 0) lua_pop(L, 1);
    } else {
      lua_pop(L, 1);
    }
    lua_getfield(L, LUA_REGISTRYINDEX, DLB_EXCHANGE_KEY);
  }
  x = (const dlb_exchange *)lua_touserdata(L, -1);
  lua_pop(L, 1);
  return x && x->version >= DLB_EXCHANGE_VERSION ? x : NULL;
}

#ifdef __cplusplus
}
#endif
#endif
