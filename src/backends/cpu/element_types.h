/* element_types.h -- the C types of the cpu kernels' elements that C has
 * no plain name for: a bool byte and the two complex types, as pairs of
 * floats laid out as DLPack's (and C99's _Complex) are. */
#ifndef DLB_CPU_ELEMENT_TYPES_H
#define DLB_CPU_ELEMENT_TYPES_H

#include <stdint.h>

typedef uint8_t dlb_bool8; /* a bool element: 0 or 1 */
typedef struct {
  float re, im;
} complex64;
typedef struct {
  double re, im;
} complex128;

#endif
