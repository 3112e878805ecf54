/* metamethod_floor.c -- floors for the benchmarks: what Lua 5.4 itself costs.
 * - require("bench_floor")() is a userdata whose __index pushes the key back
 *   as a float and does nothing else: the floor of any C __index (a[i]).
 * - require("bench_floor").finalizable(size) makes a userdata whose metatable
 *   has an empty __gc: a DLPack round trip makes two such objects (the capsule
 *   and the array), so two of these are its floor.
 * - require("bench_floor").finalizable_protected(size) makes the same userdata
 *   in protected mode (lua_pcall of a light C function), as a library must to
 *   turn Lua's memory error into an error object of its own.
 * - require("bench_floor").checked() is a userdata whose __index/__newindex do
 *   the least a safe element access must: recognise the userdata (size), check
 *   the key and value are numbers, convert them; then read or write a double.
 *   What an array access adds on top of this is dlbridge's own cost.
 * - require("bench_floor").copier() is a userdata of an Array's size (16
 *   bytes) owning a malloc'd block of 40 bytes (10 float32) that its __gc
 *   frees; u:copy() makes another with a copy of the bytes: the least a
 *   method-call copy of a small array does, with no memory account, no
 *   dtype and no geometry.
 * - require("bench_floor").indexed_copier() is the copy floor of a type
 *   that also has a[i], as an Array does: its __index is a C function (a
 *   string key: a method, looked up in a table; else an element), which
 *   every u:copy() calls, where a table __index costs no call but cannot
 *   answer a[i]. Its u:view(i, j, k) reads three integers and makes a
 *   finalizable userdata of an Array's size, no block: the floor of a view
 *   method such as a:slice(1, 2, 5).
 * - require("bench_floor").zeros(n, options) makes the same userdata with a
 *   zeroed block of 40 bytes (n an integer, options a table, neither read
 *   further): with the table the script builds for it, the least
 *   dl.zeros(10, {dtype = "float32"}) does.
 * - require("bench_floor").string(n) makes a Lua string of n bytes copied
 *   from a block the module keeps (touched when made, reused after): what
 *   Lua itself costs to make a string of bytes at hand (lua_pushlstring:
 *   its allocation, the first touch of that memory, the copy), the floor
 *   of any call that returns n bytes as a string (dl.tonpy, a:tobytes()).
 * - require("bench_floor").replace(path, n) writes n bytes of that kept
 *   block to a new file beside path (its blocks reserved first, as NumPy's
 *   saves reserve them) and renames it over path: the least a save that
 *   replaces a file whole, never leaving half a file, does (dl.save).
 * - require("bench_floor").memcpy(nbytes, reps) -> seconds (CPU time) of reps
 *   memcpy calls between two buffers of nbytes, both touched first and got
 *   as the cpu backend gets its blocks: the floor of a contiguous copy into
 *   an existing array. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* madvise, fallocate */
#endif
#include <lauxlib.h>
#include <lua.h>
#include "lua/compat.h" /* one source for Lua 5.1-5.4 and LuaJIT */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

static int floor_index(lua_State *L) {
  lua_pushnumber(L, (lua_Number)lua_tointeger(L, 2));
  return 1;
}

static int floor_newindex(lua_State *L) { return 0; }

/* module() -> a userdata with the floor __index/__newindex (upvalue 1: their metatable). */
static int floor_call(lua_State *L) {
  lua_newuserdatauv(L, 8, 0);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_setmetatable(L, -2);
  return 1;
}

static int floor_gc(lua_State *L) { return 0; }

static int floor_finalizable(lua_State *L) {
  lua_newuserdatauv(L, (size_t)luaL_checkinteger(L, 1), 0);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_setmetatable(L, -2);
  return 1;
}

/* make_finalizable(size, metatable): the userdata (run in protected mode). */
static int make_finalizable(lua_State *L) {
  lua_newuserdatauv(L, (size_t)lua_tointeger(L, 1), 0);
  lua_pushvalue(L, 2);
  lua_setmetatable(L, -2);
  return 1;
}

static int floor_finalizable_protected(lua_State *L) {
  lua_Integer size = luaL_checkinteger(L, 1);
  lua_pushcfunction(L, make_finalizable);
  lua_pushinteger(L, size);
  lua_pushvalue(L, lua_upvalueindex(1));
  if (lua_pcall(L, 2, 1, 0) != LUA_OK) return lua_error(L);
  return 1;
}

/* The checked floor: a 1-D array of doubles in the userdata itself. */
typedef struct checked_floor {
  double data[16];
} checked_floor;

static checked_floor *checked_self(lua_State *L) {
  checked_floor *f = lua_touserdata(L, 1);
  return f && lua_rawlen(L, 1) == sizeof *f ? f : NULL;
}

static int checked_index(lua_State *L) {
  checked_floor *f = checked_self(L);
  lua_Number x = lua_type(L, 2) == LUA_TNUMBER ? lua_tonumber(L, 2) : 0;
  int i = x >= 1 && x <= 16 ? (int)x : 0;
  if (f && i == x && i) {
    lua_pushnumber(L, f->data[i - 1]);
    return 1;
  }
  lua_pushnumber(L, 0); /* the real thing would raise: never taken here */
  return 1;
}

static int checked_newindex(lua_State *L) {
  checked_floor *f = checked_self(L);
  int isnum;
  lua_Number x = lua_type(L, 2) == LUA_TNUMBER ? lua_tonumber(L, 2) : 0;
  int i = x >= 1 && x <= 16 ? (int)x : 0;
  lua_Number v = lua_tonumberx(L, 3, &isnum);
  if (f && i == x && i && isnum && lua_type(L, 3) == LUA_TNUMBER) f->data[i - 1] = v;
  return 0;
}

/* checked() -> the checked-floor userdata (upvalue 1: its metatable). */
static int floor_checked(lua_State *L) {
  checked_floor *f = lua_newuserdatauv(L, sizeof *f, 0);
  for (int k = 0; k < 16; k++) f->data[k] = k;
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_setmetatable(L, -2);
  return 1;
}

/* The copy floor's userdata (COPY_FLOOR_SIZE bytes, its block first). */
#define COPY_FLOOR_SIZE 16
#define COPY_FLOOR_BYTES 40

typedef struct copy_floor {
  char *data; /* COPY_FLOOR_BYTES, or NULL */
} copy_floor;

/* Pushes a copy floor with the metatable at mt and a new (uninitialised) block. */
static copy_floor *copy_floor_new(lua_State *L, int mt) {
  copy_floor *c = lua_newuserdatauv(L, COPY_FLOOR_SIZE, 0);
  c->data = NULL;
  lua_pushvalue(L, mt);
  lua_setmetatable(L, -2);
  if (!(c->data = malloc(COPY_FLOOR_BYTES))) luaL_error(L, "out of memory");
  return c;
}

/* u:copy() (upvalue 1: the metatable). */
static int copy_floor_copy(lua_State *L) {
  copy_floor *self = lua_touserdata(L, 1), *c;
  if (!self || lua_rawlen(L, 1) != COPY_FLOOR_SIZE || !self->data)
    return luaL_argerror(L, 1, "a copy floor expected");
  c = copy_floor_new(L, lua_upvalueindex(1));
  memcpy(c->data, self->data, COPY_FLOOR_BYTES);
  return 1;
}

static int copy_floor_gc(lua_State *L) {
  copy_floor *c = lua_touserdata(L, 1);
  free(c->data);
  c->data = NULL;
  return 0;
}

/* The __index of a type with both methods and elements (upvalue 1: the
 * methods): what an Array's does for a:name(). */
static int indexed_index(lua_State *L) {
  if (lua_type(L, 2) == LUA_TSTRING) {
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
  }
  lua_pushnumber(L, 0); /* an element would be read here: never taken */
  return 1;
}

/* u:view(i, j, k) (upvalue 1: the finalizable metatable): three integer
 * arguments read, a finalizable userdata of an Array's size made. */
static int indexed_view(lua_State *L) {
  lua_Number sum = 0;
  for (int k = 2; k <= 4; k++) { /* a number of an integer's value, as a slice bound */
    lua_Number x = lua_tonumber(L, k);
    if (lua_type(L, k) != LUA_TNUMBER || !(x >= -0x1p53 && x <= 0x1p53) ||
        x != (lua_Number)(int64_t)x)
      return luaL_argerror(L, k, "an integer expected");
    sum += x;
  }
  lua_newuserdatauv(L, COPY_FLOOR_SIZE, 0);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_setmetatable(L, -2);
  return sum == -1 ? 0 : 1; /* (the sum only keeps the reads) */
}

/* copier() -> a copy floor of zeros (upvalue 1: the metatable). */
static int floor_copier(lua_State *L) {
  memset(copy_floor_new(L, lua_upvalueindex(1))->data, 0, COPY_FLOOR_BYTES);
  return 1;
}

/* zeros(n, options) -> what copier() makes, after checking its arguments
 * (upvalue 1: the metatable, as copier's). */
static int floor_zeros(lua_State *L) {
  luaL_checkinteger(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  return floor_copier(L);
}

/* n bytes the way the cpu backend gets them (src/core/backend_cpu.c): from
 * malloc, 64-byte aligned, and from 4 MiB on advised as transparent huge
 * pages (Linux). Without the advice, a memcpy floor over 4 KiB pages ran
 * 3.4 ms in some runs and 16-26 ms in others for 64 MiB. *raw gets what to free. */
static char *backend_like_block(size_t n, char **raw) {
  char *p;
  *raw = malloc(n + 63);
  if (!*raw) return NULL;
  p = (char *)(((uintptr_t)*raw + 63) & ~(uintptr_t)63);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (n >= ((size_t)4 << 20)) {
    uintptr_t start = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
    madvise((void *)start, (uintptr_t)p + n - start, MADV_HUGEPAGE);
  }
#endif
  return p;
}

static char *string_source;
static size_t string_source_size;

/* The kept block of at least the size at index 1, touched; its size. */
static size_t kept_block(lua_State *L, int index) {
  lua_Integer n = luaL_checkinteger(L, index);
  luaL_argcheck(L, n >= 0, index, "a size");
  if ((size_t)n > string_source_size) {
    char *p = malloc((size_t)n);
    if (!p) return (size_t)luaL_error(L, "no memory for %d bytes", (int)n);
    memset(p, 'x', (size_t)n);
    free(string_source);
    string_source = p, string_source_size = (size_t)n;
  }
  return (size_t)n;
}

/* string(n) -> a string of n bytes from the kept block (grown when short). */
static int floor_string(lua_State *L) {
  size_t n = kept_block(L, 1);
  lua_pushlstring(L, string_source, n);
  return 1;
}

/* replace(path, n): n bytes of the kept block replace the file at path. */
static int floor_replace(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  size_t n = kept_block(L, 2), done = 0;
  char temp[4096];
  int fd;
  snprintf(temp, sizeof temp, "%s.floor.tmp", path);
  if ((fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) < 0)
    return luaL_error(L, "cannot create %s", temp);
#if defined(__linux__)
  if (n) (void)fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)n);
#endif
  while (done < n) {
    ssize_t w = write(fd, string_source + done, n - done);
    if (w <= 0) break;
    done += (size_t)w;
  }
  if (close(fd) != 0 || done < n || rename(temp, path) != 0) {
    unlink(temp);
    return luaL_error(L, "cannot write %s", path);
  }
  return 0;
}

/* memcpy(nbytes, reps) -> seconds of CPU time for reps copies. */
static int floor_memcpy(lua_State *L) {
  size_t n = (size_t)luaL_checkinteger(L, 1);
  lua_Integer reps = luaL_checkinteger(L, 2);
  char *src_raw, *dst_raw;
  char *src = backend_like_block(n, &src_raw), *dst = backend_like_block(n, &dst_raw);
  clock_t t0;
  if (!src || !dst) {
    free(src_raw);
    free(dst_raw);
    return luaL_error(L, "out of memory");
  }
  memset(src, 1, n);
  memset(dst, 2, n);
  t0 = clock();
  for (lua_Integer r = 0; r < reps; r++) {
    memcpy(dst, src, n);
    __asm__ volatile("" : : "r"(dst) : "memory"); /* keep every copy */
  }
  lua_pushnumber(L, (lua_Number)(clock() - t0) / CLOCKS_PER_SEC);
  free(src_raw);
  free(dst_raw);
  return 1;
}

__attribute__((visibility("default"))) int luaopen_bench_floor(lua_State *L);
int luaopen_bench_floor(lua_State *L) {
  lua_createtable(L, 0, 1); /* module */
  lua_createtable(L, 0, 1); /* its metatable: calling the module makes the __index userdata */
  lua_createtable(L, 0, 2); /* the __index userdata's metatable */
  lua_pushcfunction(L, floor_index);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, floor_newindex);
  lua_setfield(L, -2, "__newindex");
  lua_pushcclosure(L, floor_call, 1);
  lua_setfield(L, -2, "__call");
  lua_setmetatable(L, -2);
  lua_createtable(L, 0, 1); /* metatable with an empty __gc */
  lua_pushcfunction(L, floor_gc);
  lua_setfield(L, -2, "__gc");
  lua_pushvalue(L, -1);
  lua_pushcclosure(L, floor_finalizable, 1);
  lua_setfield(L, -3, "finalizable");
  lua_pushcclosure(L, floor_finalizable_protected, 1);
  lua_setfield(L, -2, "finalizable_protected");
  lua_pushcfunction(L, floor_memcpy);
  lua_setfield(L, -2, "memcpy");
  lua_pushcfunction(L, floor_string);
  lua_setfield(L, -2, "string");
  lua_pushcfunction(L, floor_replace);
  lua_setfield(L, -2, "replace");
  lua_createtable(L, 0, 2); /* the checked floor's metatable */
  lua_pushcfunction(L, checked_index);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, checked_newindex);
  lua_setfield(L, -2, "__newindex");
  lua_pushcclosure(L, floor_checked, 1);
  lua_setfield(L, -2, "checked");
  lua_createtable(L, 0, 2); /* the copy floor's metatable */
  lua_pushcfunction(L, copy_floor_gc);
  lua_setfield(L, -2, "__gc");
  lua_createtable(L, 0, 1); /* its methods */
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, copy_floor_copy, 1);
  lua_setfield(L, -2, "copy");
  lua_setfield(L, -2, "__index");
  lua_pushvalue(L, -1);
  lua_pushcclosure(L, floor_zeros, 1);
  lua_setfield(L, -3, "zeros");
  lua_pushcclosure(L, floor_copier, 1);
  lua_setfield(L, -2, "copier");
  lua_createtable(L, 0, 2); /* the indexed copy floor's metatable */
  lua_pushcfunction(L, copy_floor_gc);
  lua_setfield(L, -2, "__gc");
  lua_createtable(L, 0, 2); /* its methods, found by a C __index */
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, copy_floor_copy, 1);
  lua_setfield(L, -2, "copy");
  lua_getfield(L, -3, "finalizable"); /* (its upvalue: the finalizable metatable) */
  lua_getupvalue(L, -1, 1);
  lua_remove(L, -2);
  lua_pushcclosure(L, indexed_view, 1);
  lua_setfield(L, -2, "view");
  lua_pushcclosure(L, indexed_index, 1);
  lua_setfield(L, -2, "__index");
  lua_pushcclosure(L, floor_copier, 1);
  lua_setfield(L, -2, "indexed_copier");
  return 1;
}
