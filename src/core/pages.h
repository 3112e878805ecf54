/* pages.h -- advice to the kernel about blocks of host memory. */
#ifndef DLB_CORE_PAGES_H
#define DLB_CORE_PAGES_H

#include <stddef.h>

/* Blocks from this size on are advised as huge pages (NumPy's threshold). */
#define DLB_HUGEPAGE_BYTES ((size_t)4 << 20)

/* Asks for transparent huge pages over the whole pages of [p, p + n) (Linux;
 * a hint: errors are ignored, and elsewhere it does nothing). A large block
 * then faults in per 2 MiB, not per 4 KiB, and random access into it misses
 * the TLB less. */
void dlb_advise_huge_pages(void *p, size_t n);

#endif
