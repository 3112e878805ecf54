/* pages.c -- advice to the kernel about blocks of host memory (pages.h). */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#endif
#include "pages.h"
#include <stdint.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define PAGE 4096

void dlb_advise_huge_pages(void *p, size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  uintptr_t start = ((uintptr_t)p + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
  uintptr_t end = (uintptr_t)p + n;
  if (end > start) madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
  (void)p;
  (void)n;
#endif
}
