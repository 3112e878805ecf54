// vqsort.cc -- Highway's vectorised quicksort (Debian's libhwy-dev, VQSort)
// behind a C entry for the host's sort kernel (sort.c), built when CMake
// finds the library (DLB_HAVE_VQSORT). It sorts unsigned keys in place: the
// kernel's keys, whose integer order is the sort order, so the floats' NaN
// and -0 rules stay sort.c's. Not stable: the kernel uses it only where equal
// keys are equal elements (sorting values alone).
#include <stddef.h>
#include <stdint.h>
#include <new>
#include <hwy/contrib/sort/vqsort.h>

extern "C" int dlb_vqsort_keys(void *keys, int64_t n, int bytes);

// Sorts n keys of `bytes` bytes (2, 4 or 8) ascending; 0 when it could not
// (no memory for the sorter's buffer). Never throws into C.
extern "C" int dlb_vqsort_keys(void *keys, int64_t n, int bytes) {
  try {
    hwy::Sorter sorter; // its own buffer: one a call keeps threads apart
    switch (bytes) {
      case 2:
        sorter(static_cast<uint16_t *>(keys), static_cast<size_t>(n), hwy::SortAscending());
        break;
      case 4:
        sorter(static_cast<uint32_t *>(keys), static_cast<size_t>(n), hwy::SortAscending());
        break;
      case 8:
        sorter(static_cast<uint64_t *>(keys), static_cast<size_t>(n), hwy::SortAscending());
        break;
      default: return 0;
    }
    return 1;
  } catch (...) {
    return 0;
  }
}
