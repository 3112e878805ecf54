/* casts.c -- the cpu backend's cast loops and their table (casts.h).
 *
 * Each (source, destination) pair has a one-element run, NAME_run, written
 * once as one C expression (or a checked conversion), and the loops made
 * from it: NAME_contiguous (constant strides, which the compiler
 * vectorises, built per x86-64 level), NAME_strided (any strides; a long
 * run goes through contiguous chunks, NumPy's buffering) and
 * NAME_every_other (every other source element into a contiguous run:
 * a[::2], and the real parts of contiguous complex elements). A name is the
 * source's tag, then the destination's: i8_f32 casts int8 to float32. The
 * table `casts` holds them by [destination][source]; dlb_cast_loop_for picks
 * one from it by the strides.
 */
#include "casts.h"
#include <math.h>
#include <string.h>
#include "half_runs.h"
#include "element_types.h"

typedef struct {
  uint64_t lo, hi;
} bytes16;

/* Strided runs of at most this many elements are cast in place, longer
 * ones through contiguous chunks. */
#define SHORT_RUN 16

/* The runs must be inlined into each loop's clones to use their vector
 * units. */
#if defined(__GNUC__)
#define RUN_INLINE static inline __attribute__((always_inline))
#else
#define RUN_INLINE static inline
#endif

/* --- one-element helpers ------------------------------------------------- */

/* A complex64 element as one 64-bit word (re, then im = 0): the float's bits
 * zero-extended (little-endian: re is the low half), which the vectoriser
 * turns into one widening move where it leaves a two-float struct scalar. */
static inline uint64_t c64_bits(float re) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint32_t bits;
  memcpy(&bits, &re, sizeof bits);
  return bits;
#else
  complex64 c = {re, 0.0f};
  uint64_t w;
  memcpy(&w, &c, sizeof w);
  return w;
#endif
}

/* Whether a complex64 (one word) or a complex128 is nonzero: either part's
 * bits other than the sign (NaN counts, -0 does not). Integer tests
 * vectorise where the float struct's || does not. */
static inline int c64_nonzero(uint64_t w) { return (w & UINT64_C(0x7fffffff7fffffff)) != 0; }
static inline int c128_nonzero(bytes16 c) { return ((c.lo | c.hi) << 1) != 0; }

static inline complex64 c128_narrow(complex128 c) {
  complex64 r = {(float)c.re, (float)c.im};
  return r;
}

static inline complex128 c64_widen(complex64 c) {
  complex128 r = {(double)c.re, (double)c.im};
  return r;
}

/* A bfloat16 as float32: its bits are float32's top half (exact; a NaN
 * stays a NaN). */
static inline float bf16_float(uint16_t b) {
  const uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* The error for the first of n elements at src (src_type, src_step apart)
 * that the one-element cast into dst_type refuses: a checked run that found
 * a misfit names it as dlb_scalar_cast does. */
static dlb_status first_misfit(dlb_dtype dst_type, dlb_dtype src_type, const char *src,
                               ptrdiff_t src_step, ptrdiff_t n, dlb_error *err) {
  for (ptrdiff_t k = 0; k < n; k++) {
    unsigned char out[16];
    dlb_scalar s;
    dlb_scalar_load(src_type, src + k * src_step, &s);
    const dlb_status st = dlb_scalar_cast(dst_type, out, &s, err);
    if (st != DLB_OK) return st;
  }
  return dlb_fail(err, DLB_E_VALUE, "a %s value does not fit %s", dlb_dtype_get(src_type)->name,
                  dlb_dtype_get(dst_type)->name);
}

/* --- run and loop shapes --------------------------------------------------- */

/* NAME_run: n elements, each s (an ST) becoming (EXPR) (a DT); never fails. */
#define ELEMENT_RUN(NAME, ST, DT, EXPR)                                                            \
  RUN_INLINE dlb_status NAME##_run(char *dst, ptrdiff_t dst_step, const char *src,                 \
                                   ptrdiff_t src_step, ptrdiff_t n, dlb_error *err) {              \
    for (ptrdiff_t k = 0; k < n; k++) {                                                            \
      ST s;                                                                                        \
      memcpy(&s, src + k * src_step, sizeof s);                                                    \
      const DT d = (EXPR);                                                                         \
      memcpy(dst + k * dst_step, &d, sizeof d);                                                    \
    }                                                                                              \
    return DLB_OK;                                                                                 \
  }

/* NAME_run into complex128: the real part (EXPR, a double over s) and a zero
 * imaginary part, stored apart (which vectorises where a 16-byte struct
 * store does not). */
#define C128_RUN(NAME, ST, EXPR)                                                                   \
  RUN_INLINE dlb_status NAME##_run(char *dst, ptrdiff_t dst_step, const char *src,                 \
                                   ptrdiff_t src_step, ptrdiff_t n, dlb_error *err) {              \
    for (ptrdiff_t k = 0; k < n; k++) {                                                            \
      ST s;                                                                                        \
      memcpy(&s, src + k * src_step, sizeof s);                                                    \
      const double re = (EXPR), im = 0.0;                                                          \
      memcpy(dst + k * dst_step, &re, sizeof re);                                                  \
      memcpy(dst + k * dst_step + 8, &im, sizeof im);                                              \
    }                                                                                              \
    return DLB_OK;                                                                                 \
  }

/* RUN, n elements from a float (x = (LOAD), an FT, over s) into the
 * integer DT of dtype DTYPE: FITS(x, FT) (exact in FT) checks each element
 * without a branch, so that the loop vectorises (an element out of range
 * stores 0), and the value converts through VIA (int32_t where that holds
 * DT: what the vector units convert, then pack; else double). If any
 * element did not fit, the first is reported. */
#define FLOAT_INT_CHECKED_RUN(RUN, ST, FT, DT, DTYPE, SRC_DTYPE, LOAD, FITS, VIA)                  \
  RUN_INLINE dlb_status RUN(char *dst, ptrdiff_t dst_step, const char *src, ptrdiff_t src_step,    \
                            ptrdiff_t n, dlb_error *err) {                                         \
    int all_fit = 1;                                                                               \
    for (ptrdiff_t k = 0; k < n; k++) {                                                            \
      ST s;                                                                                        \
      memcpy(&s, src + k * src_step, sizeof s);                                                    \
      const FT x = (LOAD);                                                                         \
      const int fits = FITS(x, FT);                                                                \
      all_fit &= fits;                                                                             \
      const DT d = (DT)(VIA)(fits ? x : (FT)0);                                                    \
      memcpy(dst + k * dst_step, &d, sizeof d);                                                    \
    }                                                                                              \
    return all_fit ? DLB_OK : first_misfit(DTYPE, SRC_DTYPE, src, src_step, n, err);               \
  }

/* x truncated toward zero, as the bits of a 64-bit integer, for |x| < 2^51:
 * |x| + 1.5 * 2^52 rounds |x| to an integer r (the sum's unit is 1), which
 * the sum's low mantissa bits hold offset by 1.5 * 2^52's; one step down
 * where r passed |x|, then x's sign. Adds, compares and integer steps,
 * which the vector units have where C's conversion into 64 bits has none
 * before AVX-512 (it goes one element at a time). Exact in every rounding
 * mode; any other x gives some bits, without undefined behaviour. */
static inline uint64_t small_float_trunc(double x) {
  const double a = fabs(x), sum = a + 0x1.8p52, r = sum - 0x1.8p52;
  uint64_t bits;
  memcpy(&bits, &sum, sizeof bits);
  const uint64_t t = bits - UINT64_C(0x4338000000000000) - (uint64_t)(r > a);
  const uint64_t negative = -(uint64_t)(x < 0);
  return (t ^ negative) - negative;
}

/* A float into a 64-bit integer DT, in chunks: a chunk whose every element
 * lies in DT's range and below 2^51 in magnitude converts by
 * small_float_trunc (in vectors); a chunk with any other is cast again by
 * the checked run. */
#define WIDE_CHUNK 256
#define FLOAT_WIDE_RUN(NAME, ST, FT, DT, DTYPE, SRC_DTYPE, LOAD, FITS)                             \
  FLOAT_INT_CHECKED_RUN(NAME##_checked_run, ST, FT, DT, DTYPE, SRC_DTYPE, LOAD, FITS, double)      \
  RUN_INLINE dlb_status NAME##_run(char *dst, ptrdiff_t dst_step, const char *src,                 \
                                   ptrdiff_t src_step, ptrdiff_t n, dlb_error *err) {              \
    const double lowest = FITS(-1.0, double) ? -0x1p51 : -1.0; /* signed: -1 fits; exclusive */    \
    for (ptrdiff_t pos = 0; pos < n; pos += WIDE_CHUNK) {                                          \
      const ptrdiff_t m = n - pos < WIDE_CHUNK ? n - pos : WIDE_CHUNK;                             \
      const char *from = src + pos * src_step;                                                     \
      char *to = dst + pos * dst_step;                                                             \
      int all_small = 1;                                                                           \
      for (ptrdiff_t k = 0; k < m; k++) {                                                          \
        ST s;                                                                                      \
        memcpy(&s, from + k * src_step, sizeof s);                                                 \
        const double x = (double)(LOAD);                                                           \
        all_small &= (x > lowest) & (x < 0x1p51);                                                  \
        const DT d = (DT)small_float_trunc(x);                                                     \
        memcpy(to + k * dst_step, &d, sizeof d);                                                   \
      }                                                                                            \
      if (!all_small) {                                                                            \
        const dlb_status st = NAME##_checked_run(to, dst_step, from, src_step, m, err);            \
        if (st != DLB_OK) return st;                                                               \
      }                                                                                            \
    }                                                                                              \
    return DLB_OK;                                                                                 \
  }

/* NAME_run from a float into an integer, by the way INTS names: checked
 * and converted in one loop through int32_t or double, or (64 bits) in
 * chunks. */
#define FLOAT_INT_RUN(NAME, ST, FT, DT, DTYPE, SRC_DTYPE, LOAD, FITS, HOW)                         \
  FLOAT_INT_RUN_##HOW(NAME, ST, FT, DT, DTYPE, SRC_DTYPE, LOAD, FITS)
#define FLOAT_INT_RUN_via_int32(NAME, ST, FT, DT, DTYPE, SRC_DTYPE, LOAD, FITS)                    \
  FLOAT_INT_CHECKED_RUN(NAME##_run, ST, FT, DT, DTYPE, SRC_DTYPE, LOAD, FITS, int32_t)
#define FLOAT_INT_RUN_via_double(NAME, ST, FT, DT, DTYPE, SRC_DTYPE, LOAD, FITS)                   \
  FLOAT_INT_CHECKED_RUN(NAME##_run, ST, FT, DT, DTYPE, SRC_DTYPE, LOAD, FITS, double)
#define FLOAT_INT_RUN_wide FLOAT_WIDE_RUN

/* The loops' parameter list is casts.h's dlb_cast_loop. */

/* NAME_contiguous: NAME_run over contiguous runs. */
#define CONTIGUOUS(NAME, ST, DT)                                                                   \
  DLB_KERNEL_CLONES static dlb_status NAME##_contiguous(char *dst, ptrdiff_t dst_stride,           \
                                                        const char *src, ptrdiff_t src_stride,     \
                                                        size_t n, dlb_error *err) {                \
    return NAME##_run(dst, (ptrdiff_t)sizeof(DT), src, (ptrdiff_t)sizeof(ST), (ptrdiff_t)n, err);  \
  }

/* NAME_every_other: NAME_run from every other source element into a
 * contiguous run (the real parts of contiguous complex elements, or a[::2]). */
#define EVERY_OTHER(NAME, ST, DT)                                                                  \
  DLB_KERNEL_CLONES static dlb_status NAME##_every_other(char *dst, ptrdiff_t dst_stride,          \
                                                         const char *src, ptrdiff_t src_stride,    \
                                                         size_t n, dlb_error *err) {               \
    return NAME##_run(dst, (ptrdiff_t)sizeof(DT), src, 2 * (ptrdiff_t)sizeof(ST), (ptrdiff_t)n,    \
                      err);                                                                        \
  }

/* NAME_strided: NAME_run at the strides given; a run longer than SHORT_RUN
 * goes through contiguous chunks, cast by NAME_contiguous. */
#define STRIDED(NAME, ST, DT)                                                                      \
  static dlb_status NAME##_strided(char *dst, ptrdiff_t dst_stride, const char *src,               \
                                   ptrdiff_t src_stride, size_t n, dlb_error *err) {               \
    if (n > SHORT_RUN)                                                                             \
      return cast_buffered(NAME##_contiguous, dst, dst_stride, sizeof(DT), src, src_stride,        \
                           sizeof(ST), n, err);                                                    \
    return NAME##_run(dst, dst_stride, src, src_stride, (ptrdiff_t)n, err);                        \
  }

/* NAME_strided without chunks: complex elements into complex or bool, as
 * fast in place as through a gather. */
#define STRIDED_IN_PLACE(NAME)                                                                     \
  static dlb_status NAME##_strided(char *dst, ptrdiff_t dst_stride, const char *src,               \
                                   ptrdiff_t src_stride, size_t n, dlb_error *err) {               \
    return NAME##_run(dst, dst_stride, src, src_stride, (ptrdiff_t)n, err);                        \
  }

#define ELEMENT_PAIR(NAME, ST, DT, EXPR)                                                           \
  ELEMENT_RUN(NAME, ST, DT, EXPR)                                                                  \
  CONTIGUOUS(NAME, ST, DT)                                                                         \
  EVERY_OTHER(NAME, ST, DT)                                                                        \
  STRIDED(NAME, ST, DT)

#define C128_PAIR(NAME, ST, EXPR)                                                                  \
  C128_RUN(NAME, ST, EXPR)                                                                         \
  CONTIGUOUS(NAME, ST, complex128)                                                                 \
  EVERY_OTHER(NAME, ST, complex128)                                                                \
  STRIDED(NAME, ST, complex128)

/* A table entry: the loops of one pair by layout (NULL: the strided one,
 * which for every other source element gathers them with a copy's
 * every-other loop first). */
typedef struct cast_entry {
  dlb_cast_loop contiguous;  /* both runs contiguous */
  dlb_cast_loop strided;     /* any strides */
  dlb_cast_loop fill;        /* one source element into a contiguous run */
  dlb_cast_loop every_other; /* every other source element into a contiguous run */
} cast_entry;

/* A pair with an every-other loop of its own, and one without (float16
 * through F16C chunks, complex to bool). */
#define ENTRY(NAME)                                                                                \
  { NAME##_contiguous, NAME##_strided, NULL, NAME##_every_other }
#define ENTRY_GATHERED(NAME)                                                                       \
  { NAME##_contiguous, NAME##_strided, NULL, NULL }

/* The loop of e for the strides (item sizes ditem, sitem). */
static dlb_cast_loop pick(const cast_entry *e, size_t ditem, ptrdiff_t dst_stride, size_t sitem,
                          ptrdiff_t src_stride) {
  if (dst_stride != (ptrdiff_t)ditem) return e->strided;
  if (src_stride == (ptrdiff_t)sitem) return e->contiguous;
  if (src_stride == 0 && e->fill) return e->fill;
  if (src_stride == 2 * (ptrdiff_t)sitem && e->every_other) return e->every_other;
  return e->strided;
}

/* --- copies: a dtype into itself, by item size ----------------------------- */

/* Names built by the template files (casts_*.h); CASTS_EXPAND(M, ...)
 * expands the arguments before M pastes them. */
#define CASTS_CAT_(a, b) a##b
#define CASTS_CAT(a, b) CASTS_CAT_(a, b)
#define CASTS_EXPAND(M, ...) M(__VA_ARGS__)

/* copyN: the loops of a copy by item size N (casts_copy.h). */
#define NAME copy1
#define T uint8_t
#include "casts_copy.h"
#define NAME copy2
#define T uint16_t
#include "casts_copy.h"
#define NAME copy4
#define T uint32_t
#include "casts_copy.h"
#define NAME copy8
#define T uint64_t
#include "casts_copy.h"
#define NAME copy16
#define T bytes16
#include "casts_copy.h"

#define COPY_ENTRY(NAME)                                                                           \
  { NAME##_contiguous, NAME##_strided, NAME##_fill, NAME##_every_other }

/* By log2 of the item size. */
static const cast_entry copies[5] = {COPY_ENTRY(copy1), COPY_ENTRY(copy2), COPY_ENTRY(copy4),
                                     COPY_ENTRY(copy8), COPY_ENTRY(copy16)};
#undef COPY_ENTRY

static const cast_entry *copy_entry(size_t item) { return &copies[__builtin_ctz((unsigned)item)]; }

/* A strided run cast through contiguous chunks on the stack: gathered into
 * a chunk (a copy), cast there by the pair's contiguous loop, scattered back
 * (NumPy's buffering). The copies are picked once for the run. */
static dlb_status cast_buffered(dlb_cast_loop contiguous, char *dst, ptrdiff_t dst_stride,
                                size_t ditem, const char *src, ptrdiff_t src_stride, size_t sitem,
                                size_t n, dlb_error *err) {
  _Alignas(64) char sbuf[4096], dbuf[4096];
  const size_t chunk = sizeof sbuf / (sitem > ditem ? sitem : ditem);
  const int gather = src_stride != (ptrdiff_t)sitem, scatter = dst_stride != (ptrdiff_t)ditem;
  const dlb_cast_loop gather_loop =
      pick(copy_entry(sitem), sitem, (ptrdiff_t)sitem, sitem, src_stride);
  const dlb_cast_loop scatter_loop =
      pick(copy_entry(ditem), ditem, dst_stride, ditem, (ptrdiff_t)ditem);
  for (size_t pos = 0; pos < n; pos += chunk) {
    const size_t m = n - pos < chunk ? n - pos : chunk;
    const char *s = src + (ptrdiff_t)pos * src_stride;
    char *d = dst + (ptrdiff_t)pos * dst_stride;
    if (gather) {
      gather_loop(sbuf, (ptrdiff_t)sitem, s, src_stride, m, NULL);
      s = sbuf;
    }
    const dlb_status st =
        contiguous(scatter ? dbuf : d, (ptrdiff_t)ditem, s, (ptrdiff_t)sitem, m, err);
    if (st != DLB_OK) return st;
    if (scatter) scatter_loop(d, dst_stride, dbuf, (ptrdiff_t)ditem, m, NULL);
  }
  return DLB_OK;
}

/* --- float16 runs through float32 (F16C where the CPU has it) ------------ */

/* A contiguous run into or out of float16 (to_half), through float32 chunks
 * on the stack, a chunk at a time: f32 is the contiguous loop from the
 * other dtype (item bytes) into float32, or from float32 into it.
 * Into float16: integers reach float32 exactly up to 2^24, and every larger
 * one is past float16's range either way (inf from both); float64 reaches
 * it rounded to odd, so that float16 rounds once. Out of float16: float32
 * holds every float16 exactly, so range errors name the same value. */
static dlb_status half_chunks(dlb_cast_loop f32, int to_half, size_t item, char *dst,
                              const char *src, size_t n, dlb_error *err) {
  _Alignas(64) float chunk[1024];
  for (size_t pos = 0; pos < n; pos += 1024) {
    const size_t m = n - pos < 1024 ? n - pos : 1024;
    dlb_status st;
    if (to_half) {
      st = f32((char *)chunk, 4, src + pos * item, (ptrdiff_t)item, m, err);
      dlb_half_from_float_run(dst + 2 * pos, chunk, m);
    } else {
      dlb_half_to_float_run(chunk, src + 2 * pos, m);
      st = f32(dst + item * pos, (ptrdiff_t)item, (const char *)chunk, 4, m, err);
    }
    if (st != DLB_OK) return st;
  }
  return DLB_OK;
}

#define HALF_FROM_CONTIGUOUS(NAME, ST, TO_F32)                                                     \
  static dlb_status NAME##_contiguous(char *dst, ptrdiff_t dst_stride, const char *src,            \
                                      ptrdiff_t src_stride, size_t n, dlb_error *err) {            \
    return half_chunks(TO_F32, 1, sizeof(ST), dst, src, n, err);                                   \
  }

#define HALF_TO_CONTIGUOUS(NAME, DT, FROM_F32)                                                     \
  static dlb_status NAME##_contiguous(char *dst, ptrdiff_t dst_stride, const char *src,            \
                                      ptrdiff_t src_stride, size_t n, dlb_error *err) {            \
    return half_chunks(FROM_F32, 0, sizeof(DT), dst, src, n, err);                                 \
  }

static dlb_status f64_odd_f32(char *dst, ptrdiff_t dst_stride, const char *src,
                              ptrdiff_t src_stride, size_t n, dlb_error *err) {
  dlb_float_round_odd_run(dst, src, n);
  return DLB_OK;
}

static dlb_status f32_f16_contiguous(char *dst, ptrdiff_t dst_stride, const char *src,
                                     ptrdiff_t src_stride, size_t n, dlb_error *err) {
  dlb_half_from_float_run(dst, src, n);
  return DLB_OK;
}

static dlb_status f16_f32_contiguous(char *dst, ptrdiff_t dst_stride, const char *src,
                                     ptrdiff_t src_stride, size_t n, dlb_error *err) {
  dlb_half_to_float_run(dst, src, n);
  return DLB_OK;
}

/* --- the pairs ------------------------------------------------------------ */

/* float -> integer range checks: the values that truncate into the target,
 * both bounds exact in float and double. In float, -2^31 - 1 rounds to -2^31
 * (and no float lies between them), hence int32's second test. */
#define IN_OPEN(x, FT, LO, HI) (((x) > (FT)(LO)) & ((x) < (FT)(HI)))
#define FITS_I8(x, FT) IN_OPEN(x, FT, -129, 128)
#define FITS_I16(x, FT) IN_OPEN(x, FT, -32769, 32768)
#define FITS_I32(x, FT)                                                                            \
  ((((x) > (FT)-2147483649.0) | ((x) == (FT)-2147483648.0)) & ((x) < (FT)2147483648.0))
#define FITS_I64(x, FT) (((x) >= (FT)-0x1p63) & ((x) < (FT)0x1p63))
#define FITS_U8(x, FT) IN_OPEN(x, FT, -1, 256)
#define FITS_U16(x, FT) IN_OPEN(x, FT, -1, 65536)
#define FITS_U32(x, FT) IN_OPEN(x, FT, -1, 4294967296.0)
#define FITS_U64(x, FT) IN_OPEN(x, FT, -1, 0x1p64)

/* The integer dtypes: tag, C type, dtype, the tag of its width, its range
 * check and conversion from a float (FLOAT_INT_RUN's HOW), its rounding to
 * odd as a double. */
#define INTS(X)                                                                                    \
  X(i8, int8_t, DLB_INT8, w8, FITS_I8, via_int32, dlb_int64_to_double_odd)                         \
  X(i16, int16_t, DLB_INT16, w16, FITS_I16, via_int32, dlb_int64_to_double_odd)                    \
  X(i32, int32_t, DLB_INT32, w32, FITS_I32, via_int32, dlb_int64_to_double_odd)                    \
  X(i64, int64_t, DLB_INT64, w64, FITS_I64, wide, dlb_int64_to_double_odd)                         \
  X(u8, uint8_t, DLB_UINT8, w8, FITS_U8, via_int32, dlb_uint64_to_double_odd)                      \
  X(u16, uint16_t, DLB_UINT16, w16, FITS_U16, via_int32, dlb_uint64_to_double_odd)                 \
  X(u32, uint32_t, DLB_UINT32, w32, FITS_U32, via_double, dlb_uint64_to_double_odd)                \
  X(u64, uint64_t, DLB_UINT64, w64, FITS_U64, wide, dlb_uint64_to_double_odd)

/* The integer widths: tag, C type (unsigned), the signed and unsigned
 * dtypes of that width; then the caller's arguments. */
#define WIDTHS(X, ...)                                                                             \
  X(w8, uint8_t, DLB_INT8, DLB_UINT8, __VA_ARGS__)                                                 \
  X(w16, uint16_t, DLB_INT16, DLB_UINT16, __VA_ARGS__)                                             \
  X(w32, uint32_t, DLB_INT32, DLB_UINT32, __VA_ARGS__)                                             \
  X(w64, uint64_t, DLB_INT64, DLB_UINT64, __VA_ARGS__)

/* bool <-> integer, by width: x != 0, and 0 or 1. */
#define BOOL_INT_PAIRS(W, WT, DI, DU, unused)                                                      \
  ELEMENT_PAIR(W##_bool, WT, uint8_t, s != 0)                                                      \
  ELEMENT_PAIR(b_##W, uint8_t, WT, s != 0)
WIDTHS(BOOL_INT_PAIRS, 0)
#undef BOOL_INT_PAIRS

/* integer -> integer: the low bits of the value (wraps modulo 2^bits). */
#define WRAP_PAIR(W, WT, DI, DU, S, ST) ELEMENT_PAIR(S##_##W, ST, WT, (WT)s)

/* An integer source S into the other dtypes: C's conversions round to
 * nearest even; float16 and bfloat16 through a double that rounds only
 * once (exact where a float16 is finite, rounded to odd for bfloat16). */
#define INT_PAIRS(S, ST, SE, SW, FITS, HOW, ODD)                                                   \
  WIDTHS(WRAP_PAIR, S, ST)                                                                         \
  ELEMENT_PAIR(S##_f32, ST, float, (float)s)                                                       \
  ELEMENT_PAIR(S##_f64, ST, double, (double)s)                                                     \
  ELEMENT_RUN(S##_f16, ST, uint16_t, dlb_float16_from_double((double)s))                           \
  HALF_FROM_CONTIGUOUS(S##_f16, ST, S##_f32_contiguous)                                            \
  STRIDED(S##_f16, ST, uint16_t)                                                                   \
  ELEMENT_PAIR(S##_bf16, ST, uint16_t, dlb_bfloat16_from_double(ODD(s)))                           \
  ELEMENT_PAIR(S##_c64, ST, uint64_t, c64_bits((float)s))                                          \
  C128_PAIR(S##_c128, ST, (double)s)
INTS(INT_PAIRS)
#undef INT_PAIRS
#undef WRAP_PAIR

/* float -> integer, checked: float32 and float64 (also read as the real
 * parts of complex elements, every other float), float16 (contiguous:
 * through float32 chunks) and bfloat16 (exactly float32's top half). */
#define FLOAT_INT_PAIRS(D, DT, DE, DW, FITS, HOW, ODD)                                             \
  FLOAT_INT_RUN(f32_##D, float, float, DT, DE, DLB_FLOAT32, s, FITS, HOW)                          \
  CONTIGUOUS(f32_##D, float, DT)                                                                   \
  EVERY_OTHER(f32_##D, float, DT)                                                                  \
  STRIDED(f32_##D, float, DT)                                                                      \
  FLOAT_INT_RUN(f64_##D, double, double, DT, DE, DLB_FLOAT64, s, FITS, HOW)                        \
  CONTIGUOUS(f64_##D, double, DT)                                                                  \
  EVERY_OTHER(f64_##D, double, DT)                                                                 \
  STRIDED(f64_##D, double, DT)                                                                     \
  FLOAT_INT_RUN(f16_##D, uint16_t, float, DT, DE, DLB_FLOAT16, (float)dlb_float16_to_double(s),    \
                FITS, HOW)                                                                         \
  HALF_TO_CONTIGUOUS(f16_##D, DT, f32_##D##_contiguous)                                            \
  STRIDED(f16_##D, uint16_t, DT)                                                                   \
  FLOAT_INT_RUN(bf16_##D, uint16_t, float, DT, DE, DLB_BFLOAT16, bf16_float(s), FITS, HOW)         \
  CONTIGUOUS(bf16_##D, uint16_t, DT)                                                               \
  EVERY_OTHER(bf16_##D, uint16_t, DT)                                                              \
  STRIDED(bf16_##D, uint16_t, DT)
INTS(FLOAT_INT_PAIRS)
#undef FLOAT_INT_PAIRS

/* float <-> float: every float widens exactly to double, then rounds once;
 * float16 from and to float32 and float64 in runs through F16C. */
ELEMENT_PAIR(f32_f64, float, double, (double)s)
ELEMENT_PAIR(f64_f32, double, float, (float)s)
ELEMENT_RUN(f16_f32, uint16_t, float, (float)dlb_float16_to_double(s))
STRIDED(f16_f32, uint16_t, float)
ELEMENT_RUN(f16_f64, uint16_t, double, dlb_float16_to_double(s))
HALF_TO_CONTIGUOUS(f16_f64, double, f32_f64_contiguous)
STRIDED(f16_f64, uint16_t, double)
ELEMENT_RUN(f32_f16, float, uint16_t, dlb_float16_from_double((double)s))
STRIDED(f32_f16, float, uint16_t)
ELEMENT_RUN(f64_f16, double, uint16_t, dlb_float16_from_double(s))
HALF_FROM_CONTIGUOUS(f64_f16, double, f64_odd_f32)
STRIDED(f64_f16, double, uint16_t)
ELEMENT_PAIR(f16_bf16, uint16_t, uint16_t, dlb_bfloat16_from_double(dlb_float16_to_double(s)))
ELEMENT_PAIR(bf16_f16, uint16_t, uint16_t, dlb_float16_from_double(dlb_bfloat16_to_double(s)))
ELEMENT_PAIR(bf16_f32, uint16_t, float, (float)dlb_bfloat16_to_double(s))
ELEMENT_PAIR(bf16_f64, uint16_t, double, dlb_bfloat16_to_double(s))
ELEMENT_PAIR(f32_bf16, float, uint16_t, dlb_bfloat16_from_double((double)s))
ELEMENT_PAIR(f64_bf16, double, uint16_t, dlb_bfloat16_from_double(s))

/* float -> bool: x != 0 (NaN is true; float16 and bfloat16 by their bits). */
ELEMENT_PAIR(half_bool, uint16_t, uint8_t, (s & 0x7fff) != 0)
ELEMENT_PAIR(f32_bool, float, uint8_t, s != 0.0f)
ELEMENT_PAIR(f64_bool, double, uint8_t, s != 0.0)

/* bool -> float and complex: 0 or 1. */
ELEMENT_PAIR(b_f16, uint8_t, uint16_t, s ? 0x3c00 : 0)
ELEMENT_PAIR(b_bf16, uint8_t, uint16_t, s ? 0x3f80 : 0)
ELEMENT_PAIR(b_f32, uint8_t, float, (float)(s != 0))
ELEMENT_PAIR(b_f64, uint8_t, double, (double)(s != 0))
ELEMENT_PAIR(b_c64, uint8_t, uint64_t, c64_bits((float)(s != 0)))
C128_PAIR(b_c128, uint8_t, (double)(s != 0))

/* real float -> complex: the value as the real part, imaginary 0. */
ELEMENT_PAIR(f32_c64, float, uint64_t, c64_bits(s))
C128_PAIR(f32_c128, float, (double)s)
ELEMENT_PAIR(f64_c64, double, uint64_t, c64_bits((float)s))
C128_PAIR(f64_c128, double, s)
ELEMENT_RUN(f16_c64, uint16_t, uint64_t, c64_bits((float)dlb_float16_to_double(s)))
HALF_TO_CONTIGUOUS(f16_c64, uint64_t, f32_c64_contiguous)
STRIDED(f16_c64, uint16_t, uint64_t)
C128_RUN(f16_c128, uint16_t, dlb_float16_to_double(s))
HALF_TO_CONTIGUOUS(f16_c128, complex128, f32_c128_contiguous)
STRIDED(f16_c128, uint16_t, complex128)
ELEMENT_PAIR(bf16_c64, uint16_t, uint64_t, c64_bits((float)dlb_bfloat16_to_double(s)))
C128_PAIR(bf16_c128, uint16_t, dlb_bfloat16_to_double(s))

/* complex -> complex (a[::2] has a loop of its own: a constant stride
 * vectorises, a variable one does not) and complex -> bool (either part). */
ELEMENT_RUN(c128_c64, complex128, complex64, c128_narrow(s))
CONTIGUOUS(c128_c64, complex128, complex64)
EVERY_OTHER(c128_c64, complex128, complex64)
STRIDED_IN_PLACE(c128_c64)
ELEMENT_RUN(c64_c128, complex64, complex128, c64_widen(s))
CONTIGUOUS(c64_c128, complex64, complex128)
EVERY_OTHER(c64_c128, complex64, complex128)
STRIDED_IN_PLACE(c64_c128)
ELEMENT_RUN(c64_bool, uint64_t, uint8_t, c64_nonzero(s))
CONTIGUOUS(c64_bool, uint64_t, uint8_t)
STRIDED_IN_PLACE(c64_bool)
ELEMENT_RUN(c128_bool, bytes16, uint8_t, c128_nonzero(s))
CONTIGUOUS(c128_bool, bytes16, uint8_t)
STRIDED_IN_PLACE(c128_bool)

/* --- the table ------------------------------------------------------------ */

/* The rows of an integer source S. */
#define WRAP_ENTRIES(W, WT, DI, DU, S, SE) [DI][SE] = ENTRY(S##_##W), [DU][SE] = ENTRY(S##_##W),
#define INT_ENTRIES(S, ST, SE, SW, FITS, HOW, ODD)                                                 \
  WIDTHS(WRAP_ENTRIES, S, SE)                                                                      \
  [DLB_BOOL][SE] = ENTRY(SW##_bool), [SE][DLB_BOOL] = ENTRY(b_##SW),                               \
  [DLB_FLOAT16][SE] = ENTRY_GATHERED(S##_f16), [DLB_BFLOAT16][SE] = ENTRY(S##_bf16),               \
  [DLB_FLOAT32][SE] = ENTRY(S##_f32), [DLB_FLOAT64][SE] = ENTRY(S##_f64),                          \
  [DLB_COMPLEX64][SE] = ENTRY(S##_c64), [DLB_COMPLEX128][SE] = ENTRY(S##_c128),

/* The floats (and complex real parts) into an integer destination D. */
#define FLOAT_INT_ENTRIES(D, DT, DE, DW, FITS, HOW, ODD)                                           \
  [DE][DLB_FLOAT16] = ENTRY_GATHERED(f16_##D), [DE][DLB_BFLOAT16] = ENTRY(bf16_##D),               \
  [DE][DLB_FLOAT32] = ENTRY(f32_##D), [DE][DLB_FLOAT64] = ENTRY(f64_##D),                          \
  [DE][DLB_COMPLEX64] = {f32_##D##_every_other, f32_##D##_strided, NULL, NULL},                    \
  [DE][DLB_COMPLEX128] = {f64_##D##_every_other, f64_##D##_strided, NULL, NULL},

/* [destination][source]; the diagonal (a copy, by item size: `copies`) is
 * never read. A complex source into a real dtype other than bool reads its
 * real parts in place: the loops of the complex's float type, whose every
 * other element (contiguous complex) or strided run they are. */
static const cast_entry casts[DLB_DTYPE_COUNT][DLB_DTYPE_COUNT] = {
    INTS(INT_ENTRIES) INTS(FLOAT_INT_ENTRIES)[DLB_FLOAT64][DLB_FLOAT32] = ENTRY(f32_f64),
    [DLB_FLOAT32][DLB_FLOAT64] = ENTRY(f64_f32),
    [DLB_FLOAT32][DLB_FLOAT16] = ENTRY_GATHERED(f16_f32),
    [DLB_FLOAT64][DLB_FLOAT16] = ENTRY_GATHERED(f16_f64),
    [DLB_FLOAT16][DLB_FLOAT32] = ENTRY_GATHERED(f32_f16),
    [DLB_FLOAT16][DLB_FLOAT64] = ENTRY_GATHERED(f64_f16),
    [DLB_BFLOAT16][DLB_FLOAT16] = ENTRY(f16_bf16),
    [DLB_FLOAT16][DLB_BFLOAT16] = ENTRY(bf16_f16),
    [DLB_FLOAT32][DLB_BFLOAT16] = ENTRY(bf16_f32),
    [DLB_FLOAT64][DLB_BFLOAT16] = ENTRY(bf16_f64),
    [DLB_BFLOAT16][DLB_FLOAT32] = ENTRY(f32_bf16),
    [DLB_BFLOAT16][DLB_FLOAT64] = ENTRY(f64_bf16),
    [DLB_BOOL][DLB_FLOAT16] = ENTRY(half_bool),
    [DLB_BOOL][DLB_BFLOAT16] = ENTRY(half_bool),
    [DLB_BOOL][DLB_FLOAT32] = ENTRY(f32_bool),
    [DLB_BOOL][DLB_FLOAT64] = ENTRY(f64_bool),
    [DLB_FLOAT16][DLB_BOOL] = ENTRY(b_f16),
    [DLB_BFLOAT16][DLB_BOOL] = ENTRY(b_bf16),
    [DLB_FLOAT32][DLB_BOOL] = ENTRY(b_f32),
    [DLB_FLOAT64][DLB_BOOL] = ENTRY(b_f64),
    [DLB_COMPLEX64][DLB_BOOL] = ENTRY(b_c64),
    [DLB_COMPLEX128][DLB_BOOL] = ENTRY(b_c128),
    [DLB_COMPLEX64][DLB_FLOAT16] = ENTRY_GATHERED(f16_c64),
    [DLB_COMPLEX128][DLB_FLOAT16] = ENTRY_GATHERED(f16_c128),
    [DLB_COMPLEX64][DLB_BFLOAT16] = ENTRY(bf16_c64),
    [DLB_COMPLEX128][DLB_BFLOAT16] = ENTRY(bf16_c128),
    [DLB_COMPLEX64][DLB_FLOAT32] = ENTRY(f32_c64),
    [DLB_COMPLEX128][DLB_FLOAT32] = ENTRY(f32_c128),
    [DLB_COMPLEX64][DLB_FLOAT64] = ENTRY(f64_c64),
    [DLB_COMPLEX128][DLB_FLOAT64] = ENTRY(f64_c128),
    [DLB_COMPLEX64][DLB_COMPLEX128] = {c128_c64_contiguous, c128_c64_strided, NULL,
                                       c128_c64_every_other},
    [DLB_COMPLEX128][DLB_COMPLEX64] = {c64_c128_contiguous, c64_c128_strided, NULL,
                                       c64_c128_every_other},
    [DLB_BOOL][DLB_COMPLEX64] = ENTRY_GATHERED(c64_bool),
    [DLB_BOOL][DLB_COMPLEX128] = ENTRY_GATHERED(c128_bool),
    [DLB_FLOAT32][DLB_COMPLEX64] = {copy4_every_other, copy4_strided, NULL, NULL},
    [DLB_FLOAT64][DLB_COMPLEX128] = {copy8_every_other, copy8_strided, NULL, NULL},
    [DLB_FLOAT64][DLB_COMPLEX64] = {f32_f64_every_other, f32_f64_strided, NULL, NULL},
    [DLB_FLOAT32][DLB_COMPLEX128] = {f64_f32_every_other, f64_f32_strided, NULL, NULL},
    [DLB_FLOAT16][DLB_COMPLEX64] = {f32_f16_strided, f32_f16_strided, NULL, NULL},
    [DLB_FLOAT16][DLB_COMPLEX128] = {f64_f16_strided, f64_f16_strided, NULL, NULL},
    [DLB_BFLOAT16][DLB_COMPLEX64] = {f32_bf16_strided, f32_bf16_strided, NULL, NULL},
    [DLB_BFLOAT16][DLB_COMPLEX128] = {f64_bf16_strided, f64_bf16_strided, NULL, NULL},
};
#undef INT_ENTRIES
#undef FLOAT_INT_ENTRIES
#undef WRAP_ENTRIES

#undef ENTRY
#undef ENTRY_GATHERED
#undef ELEMENT_PAIR
#undef C128_PAIR
#undef STRIDED_IN_PLACE
#undef STRIDED
#undef EVERY_OTHER
#undef CONTIGUOUS
#undef HALF_FROM_CONTIGUOUS
#undef HALF_TO_CONTIGUOUS
#undef FLOAT_INT_RUN
#undef FLOAT_INT_RUN_via_int32
#undef FLOAT_INT_RUN_via_double
#undef FLOAT_INT_RUN_wide
#undef FLOAT_WIDE_RUN
#undef FLOAT_INT_CHECKED_RUN
#undef WIDE_CHUNK
#undef C128_RUN
#undef ELEMENT_RUN
#undef INTS
#undef WIDTHS
#undef IN_OPEN
#undef FITS_I8
#undef FITS_I16
#undef FITS_I32
#undef FITS_I64
#undef FITS_U8
#undef FITS_U16
#undef FITS_U32
#undef FITS_U64
#undef RUN_INLINE
#undef CASTS_EXPAND
#undef CASTS_CAT
#undef CASTS_CAT_

/* --- picking -------------------------------------------------------------- */

dlb_cast_loop dlb_cast_loop_for(dlb_dtype dst_type, ptrdiff_t dst_stride, dlb_dtype src_type,
                                ptrdiff_t src_stride, int aligned) {
  if ((unsigned)dst_type >= DLB_DTYPE_COUNT || (unsigned)src_type >= DLB_DTYPE_COUNT) return NULL;
  const size_t ditem = dlb_dtype_get(dst_type)->itemsize, sitem = dlb_dtype_get(src_type)->itemsize;
  const cast_entry *e = dst_type == src_type ? copy_entry(sitem) : &casts[dst_type][src_type];
  (void)aligned; /* every loop here takes any alignment */
  return pick(e, ditem, dst_stride, sitem, src_stride);
}

dlb_status dlb_cast(dlb_dtype dst_type, void *dst, ptrdiff_t dst_stride, dlb_dtype src_type,
                    const void *src, ptrdiff_t src_stride, size_t n, dlb_error *err) {
  dlb_cast_plan plan = dlb_cast_plan_for(dst_type, src_type);
  return dlb_cast_plan_run(&plan, dst, dst_stride, src, src_stride, n, err);
}
