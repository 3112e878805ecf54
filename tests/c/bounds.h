/* bounds.h -- what the C API tests of the host's bounds (capi_*_bounds.c)
 * share: a Lua call that must fail with a code, and this process's
 * resident memory (Linux's /proc; -1 or 0 elsewhere). Include after
 * fixtures.h (RUN). */
#ifndef DLB_TESTS_BOUNDS_H
#define DLB_TESTS_BOUNDS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024L * 1024L)

/* `call` must fail with code, its message starting with prefix ("" any);
 * then the Lua lines `after` run (each returns 0 on a failed check). 1
 * when all hold. */
static inline int bounds_fails_with(lua_State *L, const char *code, const char *prefix,
                                    const char *call, const char *after) {
  char chunk[1024];
  snprintf(chunk, sizeof chunk,
           "local ok, err = pcall(function() %s end)\n"
           "if ok then print('succeeded: ' .. [[%s]]) return 0 end\n"
           "if err.code ~= '%s' or err.message:sub(1, #'%s') ~= '%s' then\n"
           "  print(tostring(err)) return 0\n"
           "end\n"
           "%s"
           "return 1",
           call, call, code, prefix, prefix, after);
  return (int)RUN(L, chunk);
}

/* A field of /proc/self/status ("VmRSS:", "VmHWM:") in bytes, or -1. */
static inline long rss_bytes(const char *field) {
  char line[256];
  long kb = -1;
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, field, strlen(field))) kb = atol(line + strlen(field));
  fclose(f);
  return kb < 0 ? -1 : kb * 1024;
}

/* Sets the peak (VmHWM) to the resident memory now (Linux: clear_refs 5); 0
 * when the kernel cannot. */
static inline int reset_peak_rss(void) {
  FILE *f = fopen("/proc/self/clear_refs", "w");
  int ok;
  if (!f) return 0;
  ok = fputs("5", f) >= 0;
  return fclose(f) == 0 && ok;
}

#endif
