/* loops_column.h -- the loops column of the operation lists
 * (DLB_ELEMENTWISE_OPS, DLB_REDUCE_OPS) read as dtypes, for the tests that
 * hold the kernels to the lists (test_ops.c, test_reduce_ops.c). */
#ifndef DLB_TESTS_LOOPS_COLUMN_H
#define DLB_TESTS_LOOPS_COLUMN_H

#include "dlbridge.h"

/* The loop dtypes of a loops column ("BIFC") as a bit per dtype; -1 for a
 * letter the list does not define. */
static long long loop_dtypes(const char *loops) {
  long long mask = 0;
  for (const char *c = loops; *c; c++) {
    switch (*c) {
      case 'B': mask |= 1ll << DLB_BOOL; break;
      case 'I':
        for (int t = DLB_INT8; t <= DLB_UINT64; t++) mask |= 1ll << t;
        break;
      case 'H': mask |= 1ll << DLB_FLOAT16 | 1ll << DLB_BFLOAT16; break;
      case 'F': mask |= 1ll << DLB_FLOAT32 | 1ll << DLB_FLOAT64; break;
      case 'C': mask |= 1ll << DLB_COMPLEX64 | 1ll << DLB_COMPLEX128; break;
      default: return -1;
    }
  }
  return mask;
}

#endif
