/* capi_ops.c -- every row of DLB_ELEMENTWISE_OPS (dlbridge.h) reaches Lua
 * as the row says: dl.lua is a function taking nin operands (its errors
 * name it "dl.lua"), NumPy's name is the same function, a:lua is it too
 * when the form is method and absent when it is function, and no two
 * operations share a C function. The operators and the short comparison
 * methods are the binding's own (spec/arithmetic_spec.lua and friends). */
#define _POSIX_C_SOURCE 200809L /* fixtures.h: fork, waitpid */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "dlbridge.h"
#include "fixtures.h"

typedef struct row {
  const char *name, *lua, *form;
  int nin;
} row;

#define ROW(ID, name, nin, cls, loops, lua, form) {#name, #lua, #form, nin},
static const row rows[] = {DLB_ELEMENTWISE_OPS(ROW)};
#undef ROW
enum { ROW_COUNT = sizeof rows / sizeof rows[0] };

/* The C function of dl.k (method 0) or a.k (method 1), NULL when that is
 * no C function (nil: absent). */
static lua_CFunction c_function(lua_State *L, int method, const char *k) {
  char code[96];
  lua_CFunction f;
  snprintf(code, sizeof code, "return %s.%s", method ? "a" : "dl", k);
  PUSH(L, code);
  f = lua_iscfunction(L, -1) ? lua_tocfunction(L, -1) : NULL;
  lua_pop(L, 1);
  return f;
}

/* dl.lua() raises ARGUMENT naming dl.lua and, but for clip (whose bounds
 * may be nil), its number of operands. */
static void check_arity(lua_State *L, const row *r) {
  char code[96], op[48], message[64];
  snprintf(code, sizeof code, "local ok, e = pcall(dl.%s) return e", r->lua);
  snprintf(op, sizeof op, "dl.%s", r->lua);
  snprintf(message, sizeof message, "dl.%s takes %d operand%s, got 0", r->lua, r->nin,
           r->nin > 1 ? "s" : "");
  PUSH(L, code);
  if (strcmp(r->lua, "clip") != 0) CHECK(strstr(field(L, -1, "message"), message) != NULL);
  CHECK_ERROR_TOP(L, 0, "ARGUMENT", op);
}

static void check_row(lua_State *L, const row *r, lua_CFunction *seen, int k) {
  const lua_CFunction f = c_function(L, 0, r->lua);
  CHECK(f != NULL);
  CHECK(c_function(L, 0, r->name) == f); /* dl.subtract is dl.sub */
  for (int j = 0; j < k; j++) CHECK(seen[j] != f);
  seen[k] = f;
  if (strcmp(r->form, "method") == 0) {
    CHECK(c_function(L, 1, r->lua) == f);
    CHECK(c_function(L, 1, r->name) == f);
  } else {
    char code[96];
    CHECK_EQ_STR(r->form, "function");
    snprintf(code, sizeof code, "return a.%s == nil and a.%s == nil", r->lua, r->name);
    CHECK_EQ_INT(RUN(L, code), 1);
  }
  check_arity(L, r);
}

int main(void) {
  lua_State *L = new_state();
  lua_CFunction seen[ROW_COUNT];
  CHECK_EQ_INT(RUN(L, "a = dl.zeros(2) return 1"), 1);
  for (int k = 0; k < ROW_COUNT; k++) {
    const int before = check_failures;
    check_row(L, &rows[k], seen, k);
    if (check_failures != before) fprintf(stderr, "  (the row of %s)\n", rows[k].name);
  }
  CHECK_EQ_INT(lua_gettop(L), 0);
  lua_close(L);
  return check_done("capi_ops");
}
