/* dtype.h -- the 15 element types, Lua-neutral scalars, and element conversion. */
#ifndef DLB_CORE_DTYPE_H
#define DLB_CORE_DTYPE_H

#include <stddef.h>
#include <stdint.h>
#include "error.h"

typedef enum dlb_dtype {
  DLB_BOOL,
  DLB_INT8,
  DLB_INT16,
  DLB_INT32,
  DLB_INT64,
  DLB_UINT8,
  DLB_UINT16,
  DLB_UINT32,
  DLB_UINT64,
  DLB_FLOAT16,
  DLB_BFLOAT16,
  DLB_FLOAT32,
  DLB_FLOAT64,
  DLB_COMPLEX64,
  DLB_COMPLEX128,
  DLB_DTYPE_COUNT
} dlb_dtype;

typedef enum dlb_kind {
  DLB_KIND_BOOL,
  DLB_KIND_INT,
  DLB_KIND_UINT,
  DLB_KIND_FLOAT,
  DLB_KIND_COMPLEX
} dlb_kind;

typedef struct dlb_dtype_info {
  const char *name; /* "float32" */
  size_t itemsize;  /* bytes per element */
  dlb_kind kind;
  uint8_t dl_code; /* DLDataType.code */
  uint8_t dl_bits; /* DLDataType.bits (lanes is always 1) */
} dlb_dtype_info;

/* The rows, indexed by dtype (dtype.c). */
extern const dlb_dtype_info dlb_dtype_table[DLB_DTYPE_COUNT];

/* The row for dtype; dtype must be valid. Inline: every operation asks. */
static inline const dlb_dtype_info *dlb_dtype_get(dlb_dtype dtype) {
  return &dlb_dtype_table[dtype];
}

/* Looks up a name ("int64"); returns 0 and sets *out, or -1 if unknown. */
int dlb_dtype_from_name(const char *name, size_t len, dlb_dtype *out);

/* Maps a DLPack type (lanes must be 1); returns 0 and sets *out, or -1. */
int dlb_dtype_from_dl(DLDataType type, dlb_dtype *out);
DLDataType dlb_dtype_to_dl(dlb_dtype dtype);

/* dlb_dtype_from_dl of a DLDataType the core made from a dlb_dtype (valid:
 * no checks), for kernels that take the core's tensors on every call. */
extern const signed char dlb_dtype_by_dl[7][5];
static inline dlb_dtype dlb_dtype_of_dl(DLDataType type) {
  return (dlb_dtype)dlb_dtype_by_dl[type.code][__builtin_ctz(type.bits) - 3];
}

/* A value on its way between an element and a host language. */
typedef enum dlb_scalar_kind {
  DLB_SCALAR_BOOL,
  DLB_SCALAR_INT,  /* v.i */
  DLB_SCALAR_UINT, /* v.u: only loaded from uint64 elements above INT64_MAX */
  DLB_SCALAR_FLOAT,
  DLB_SCALAR_COMPLEX
} dlb_scalar_kind;

typedef struct dlb_scalar {
  dlb_scalar_kind kind;
  union {
    int b;
    int64_t i;
    uint64_t u;
    double f;
    struct {
      double re, im;
    } c;
  } v;
} dlb_scalar;

/*
 * Writes v as one element of dtype at dst (unaligned access is fine).
 * Strict: DLB_E_VALUE unless dtype holds the value. Integers take booleans
 * (0/1), integers in range and integral floats in range; never NaN, inf or
 * a fraction. bool takes booleans and the numbers 0 and 1. Floats take any
 * real number, rounded to nearest even; a finite value that rounds to
 * infinity is DLB_E_VALUE; NaN and inf are kept. A complex value with a
 * nonzero imaginary part goes only into a complex dtype.
 */
dlb_status dlb_scalar_store(dlb_dtype dtype, void *dst, const dlb_scalar *v, dlb_error *err);

/* Reads the element at src. Integers load as DLB_SCALAR_INT except uint64
 * values above INT64_MAX (DLB_SCALAR_UINT); float16/bfloat16/float32/float64
 * load as DLB_SCALAR_FLOAT; complex as DLB_SCALAR_COMPLEX; bool as BOOL. */
void dlb_scalar_load(dlb_dtype dtype, const void *src, dlb_scalar *out);

/* Element loops are built once per x86-64 level and the best one for the CPU
 * is picked when the library loads (function multiversioning, as NumPy's
 * dispatch does): the vector units a build for plain x86-64 would leave idle.
 * Put it on the definition only, and define the function before any use of
 * it in its own file. GCC only: clang 14 leaves an external multiversioned
 * function (dlb_float_round_odd_run) undefined for the other files that
 * call it. Not under ThreadSanitizer: the clones' resolvers run while the
 * library is relocated, before TSan's runtime is up, and crash there. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__) &&    \
    defined(__linux__) && !defined(__SANITIZE_THREAD__)
#define DLB_KERNEL_CLONES                                                                          \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define DLB_KERNEL_CLONES
#endif

/* One element with dlb_cast's semantics: writes v (as loaded by
 * dlb_scalar_load) as an element of dtype at dst; DLB_E_VALUE, dst
 * untouched, where dlb_cast stops. What every cast loop agrees with. */
dlb_status dlb_scalar_cast(dlb_dtype dtype, void *dst, const dlb_scalar *v, dlb_error *err);

/* The integer i as a double rounded to odd (its last bit sticky where bits
 * were dropped): rounding that double again to 24 significand bits or fewer
 * gives the correctly rounded result, where (double)i would round twice. */
static inline double dlb_uint64_to_double_odd(uint64_t u) {
  if (u < (UINT64_C(1) << 53)) return (double)u;
  const int k = 11 - __builtin_clzll(u); /* bits to drop to keep 53 */
  uint64_t t = u >> k;
  if (u & ((UINT64_C(1) << k) - 1)) t |= 1;
  return (double)t * (double)(UINT64_C(1) << k); /* exact: a power of two */
}

static inline double dlb_int64_to_double_odd(int64_t i) {
  if (i >= 0) return dlb_uint64_to_double_odd((uint64_t)i);
  return -dlb_uint64_to_double_odd(UINT64_C(0) - (uint64_t)i);
}

/* IEEE binary16 and bfloat16, from double with round-to-nearest-even. */
uint16_t dlb_float16_from_double(double x);
double dlb_float16_to_double(uint16_t h);
uint16_t dlb_bfloat16_from_double(double x);
double dlb_bfloat16_to_double(uint16_t b);

#endif
