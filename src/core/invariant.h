/* invariant.h -- DLB_ASSERT(cond): a tripwire at an invariant a module
 * states, the way lapi.c's api_check and LPeg's assert are. Live in Debug
 * builds (the sanitizer builds are Debug), compiled out under NDEBUG
 * (Release), so it costs nothing where speed is measured.
 *
 * A failed DLB_ASSERT is a bug in dlbridge: it prints where and what, and
 * aborts. It is never the answer to bad input, which raises a coded error
 * (dlb_fail) in every build. The condition must have no side effects. */
#ifndef DLB_CORE_INVARIANT_H
#define DLB_CORE_INVARIANT_H

#include <stdio.h>
#include <stdlib.h>

#ifdef NDEBUG
#define DLB_ASSERT(cond) ((void)0)
#else
#define DLB_ASSERT(cond) ((cond) ? (void)0 : dlb_invariant_failed(#cond, __FILE__, __LINE__))

__attribute__((noreturn, cold)) static inline void dlb_invariant_failed(const char *cond,
                                                                        const char *file,
                                                                        int line) {
  fprintf(stderr, "dlbridge: invariant broken at %s:%d: %s\n", file, line, cond);
  abort();
}
#endif

#endif
