/* reduce_loops.c -- the kernels of reductions (reduce_loops.h): one fold
 * expression per (operation, dtype) expanded into a loop with a
 * reduce-to-one branch and a row branch; NumPy's pairwise sums for floats
 * and complex; the searches and row updates of argmin/argmax. */
#include <string.h>
#include "reduce_loops.h"

typedef uint8_t dlb_bool8; /* a bool element: 0 or 1 */
typedef struct { float re, im; } complex64;
typedef struct { double re, im; } complex128;

/* Accumulators of a laned reduce-to-one branch: a row of LANES folds in a
 * row of inputs at a time, which GCC vectorises (float min/max written as
 * a few separate chains it leaves scalar). */
#define LANES 64

/* --- fold kernels ---------------------------------------------------------- */

/*
 * name(acc, x): folds inputs of TI into accumulators of TA. INIT(x) is the
 * accumulator of one input, FOLD(a, x) a with x folded in, COMBINE(a, b)
 * two accumulators as one. With LANED, a contiguous reduce-to-one run goes
 * through LANES accumulators (min/max: the order of the fold changes, which
 * they do not mind; the run's loop then vectorises, where the strided one
 * does not: int64 max of 1e7 went from 11.7 to 4.9 ms); otherwise it folds
 * in order (integer sums and products).
 */
#define FOLD_KERNEL(name, TA, TI, INIT, FOLD, COMBINE, LANED)                                      \
  DLB_KERNEL_CLONES static int name(char **data, const int64_t *steps, int64_t n, void *aux) {   \
    char *pa = data[0];                                                                            \
    const char *px = data[1];                                                                      \
    const int64_t sa = steps[0], sx = steps[1];                                                    \
    int64_t i = 0;                                                                                 \
    (void)aux;                                                                                     \
    if (sa == 0) {                                                                                 \
      TA a = *(TA *)pa;                                                                            \
      if (LANED && sx == (int64_t)sizeof(TI) && n >= 2 * LANES) {                                  \
        const TI *x = (const TI *)px;                                                              \
        TA m[LANES];                                                                               \
        for (int l = 0; l < LANES; l++) m[l] = INIT(x[l]);                                         \
        const TI *y0;                                                                              \
        for (i = LANES; i + LANES <= n; i += LANES) {                                              \
          const TI *y = x + i;                                                                     \
          for (int l = 0; l < LANES; l++) m[l] = FOLD(m[l], y[l]);                                 \
        }                                                                                          \
        y0 = x + i; /* the rest, fewer than LANES, into the first lanes */                        \
        for (int l = 0; i + l < n; l++) m[l] = FOLD(m[l], y0[l]);                                  \
        i = n;                                                                                     \
        for (int w = LANES / 2; w > 0; w /= 2) /* halves folded together: vectorised too */      \
          for (int l = 0; l < w; l++) m[l] = COMBINE(m[l], m[l + w]);                              \
        a = COMBINE(a, m[0]);                                                                      \
      }                                                                                            \
      for (; i < n; i++) a = FOLD(a, *(const TI *)(px + i * sx));                                  \
      *(TA *)pa = a;                                                                               \
    } else if (sa == (int64_t)sizeof(TA) && sx == (int64_t)sizeof(TI)) {                           \
      TA *acc = (TA *)pa;                                                                          \
      const TI *x = (const TI *)px;                                                                \
      for (i = 0; i < n; i++) acc[i] = FOLD(acc[i], x[i]);                                         \
    } else {                                                                                       \
      for (i = 0; i < n; i++) {                                                                    \
        TA *acc = (TA *)(pa + i * sa);                                                             \
        *acc = FOLD(*acc, *(const TI *)(px + i * sx));                                             \
      }                                                                                            \
    }                                                                                              \
    return 0;                                                                                      \
  }

/* Integer sums and products, modulo 2^64 (uint64_t: no signed overflow). */
#define WIDE(x) ((uint64_t)(x))
#define ADD_WIDE(a, x) ((a) + (uint64_t)(x))
#define MUL_WIDE(a, x) ((a) * (uint64_t)(x))
#define ADD(a, b) ((a) + (b))
#define MUL(a, b) ((a) * (b))
#define SAME(x) (x)
/* Integer extremes; floats: a NaN accumulator stays, a NaN input wins. */
#define MAX_INT(a, x) ((a) >= (x) ? (a) : (x))
#define MIN_INT(a, x) ((a) <= (x) ? (a) : (x))
#define MAX_FLOAT(a, x) ((((a) >= (x)) | ((a) != (a))) ? (a) : (x))
#define MIN_FLOAT(a, x) ((((a) <= (x)) | ((a) != (a))) ? (a) : (x))
/* Truth of an element: NaN is true; float16/bfloat16 bits without the sign. */
#define NONZERO(x) ((x) != 0)
#define NONZERO_HALF(x) (((x) & 0x7fff) != 0)
#define NONZERO_COMPLEX(x) (((x).re != 0) | ((x).im != 0))
#define AND_NONZERO(a, x) ((dlb_bool8)((a) & NONZERO(x)))
#define OR_NONZERO(a, x) ((dlb_bool8)((a) | NONZERO(x)))
#define AND_NONZERO_HALF(a, x) ((dlb_bool8)((a) & NONZERO_HALF(x)))
#define OR_NONZERO_HALF(a, x) ((dlb_bool8)((a) | NONZERO_HALF(x)))
#define AND_NONZERO_COMPLEX(a, x) ((dlb_bool8)((a) & NONZERO_COMPLEX(x)))
#define OR_NONZERO_COMPLEX(a, x) ((dlb_bool8)((a) | NONZERO_COMPLEX(x)))
#define BOOL_OF(x) ((dlb_bool8)NONZERO(x))
#define BOOL_OF_HALF(x) ((dlb_bool8)NONZERO_HALF(x))
#define BOOL_OF_COMPLEX(x) ((dlb_bool8)NONZERO_COMPLEX(x))
#define AND(a, b) ((dlb_bool8)((a) & (b)))
#define OR(a, b) ((dlb_bool8)((a) | (b)))
#define COUNT(x) ((int64_t)NONZERO(x))
#define COUNT_HALF(x) ((int64_t)NONZERO_HALF(x))
#define COUNT_COMPLEX(x) ((int64_t)NONZERO_COMPLEX(x))
#define ADD_COUNT(a, x) ((a) + COUNT(x))
#define ADD_COUNT_HALF(a, x) ((a) + COUNT_HALF(x))
#define ADD_COUNT_COMPLEX(a, x) ((a) + COUNT_COMPLEX(x))
/* Complex products, in order, as NumPy's multiply. */
#define CMUL(C, a, x) ((C){(a).re * (x).re - (a).im * (x).im, (a).re * (x).im + (a).im * (x).re})
#define CMUL64(a, x) CMUL(complex64, a, x)
#define CMUL128(a, x) CMUL(complex128, a, x)

/* Integers: sum and prod into uint64 accumulators (bool uses uint8's), min
 * and max in their own dtype. */
#define INTEGER_KERNELS(T, NAME)                                                    \
  FOLD_KERNEL(sum_##NAME, uint64_t, T, WIDE, ADD_WIDE, ADD, 0)                      \
  FOLD_KERNEL(prod_##NAME, uint64_t, T, WIDE, MUL_WIDE, MUL, 0)                     \
  FOLD_KERNEL(max_##NAME, T, T, SAME, MAX_INT, MAX_INT, 1)                          \
  FOLD_KERNEL(min_##NAME, T, T, SAME, MIN_INT, MIN_INT, 1)
INTEGER_KERNELS(int8_t, int8)
INTEGER_KERNELS(int16_t, int16)
INTEGER_KERNELS(int32_t, int32)
INTEGER_KERNELS(int64_t, int64)
INTEGER_KERNELS(uint8_t, uint8)
INTEGER_KERNELS(uint16_t, uint16)
INTEGER_KERNELS(uint32_t, uint32)
INTEGER_KERNELS(uint64_t, uint64)
#undef INTEGER_KERNELS

FOLD_KERNEL(max_float32, float, float, SAME, MAX_FLOAT, MAX_FLOAT, 1)
FOLD_KERNEL(min_float32, float, float, SAME, MIN_FLOAT, MIN_FLOAT, 1)
FOLD_KERNEL(max_float64, double, double, SAME, MAX_FLOAT, MAX_FLOAT, 1)
FOLD_KERNEL(min_float64, double, double, SAME, MIN_FLOAT, MIN_FLOAT, 1)
/* Float products multiply in order, as NumPy's do. */
FOLD_KERNEL(prod_float32, float, float, SAME, MUL, MUL, 0)
FOLD_KERNEL(prod_float64, double, double, SAME, MUL, MUL, 0)
FOLD_KERNEL(prod_complex64, complex64, complex64, SAME, CMUL64, CMUL64, 0)
FOLD_KERNEL(prod_complex128, complex128, complex128, SAME, CMUL128, CMUL128, 0)

/* count_nonzero of one-byte elements (bool masks): byte counters, 32 side
 * by side, each counting at most 255 elements before they are summed. */
#define BYTE_LANES 32
#define BYTE_BLOCK (255 * BYTE_LANES)
DLB_KERNEL_CLONES static int count_bytes1(char **data, const int64_t *steps, int64_t n, void *aux) {
  (void)aux;
  if (steps[0] == 0 && steps[1] == 1) {
    const uint8_t *x = (const uint8_t *)data[1];
    int64_t total = 0, i = 0;
    for (; i + BYTE_LANES <= n;) {
      uint8_t c[BYTE_LANES] = {0};
      int64_t end = n - i < BYTE_BLOCK ? i + (n - i) / BYTE_LANES * BYTE_LANES : i + BYTE_BLOCK;
      for (; i < end; i += BYTE_LANES) {
        const uint8_t *y = x + i;
        for (int l = 0; l < BYTE_LANES; l++) c[l] = (uint8_t)(c[l] + (y[l] != 0));
      }
      for (int l = 0; l < BYTE_LANES; l++) total += c[l];
    }
    for (; i < n; i++) total += x[i] != 0;
    *(int64_t *)data[0] += total;
    return 0;
  }
  for (int64_t i = 0; i < n; i++)
    *(int64_t *)(data[0] + i * steps[0]) += *(const uint8_t *)(data[1] + i * steps[1]) != 0;
  return 0;
}

/* all, any, count_nonzero of every dtype (one-byte counts: above) */
#define TRUTH_KERNELS(T, NAME, SUFFIX)                                                       \
  FOLD_KERNEL(all_##NAME, dlb_bool8, T, BOOL_OF##SUFFIX, AND_NONZERO##SUFFIX, AND, 0)        \
  FOLD_KERNEL(any_##NAME, dlb_bool8, T, BOOL_OF##SUFFIX, OR_NONZERO##SUFFIX, OR, 0)          \
  COUNT_KERNEL(count_##NAME, T, SUFFIX)
#define COUNT_KERNEL(name, T, SUFFIX) \
  FOLD_KERNEL(name, int64_t, T, COUNT##SUFFIX, ADD_COUNT##SUFFIX, ADD, 0)
FOLD_KERNEL(all_bytes1, dlb_bool8, uint8_t, BOOL_OF, AND_NONZERO, AND, 0)
FOLD_KERNEL(any_bytes1, dlb_bool8, uint8_t, BOOL_OF, OR_NONZERO, OR, 0)
TRUTH_KERNELS(uint16_t, bytes2, )
TRUTH_KERNELS(uint32_t, bytes4, )
TRUTH_KERNELS(uint64_t, bytes8, )
TRUTH_KERNELS(uint16_t, half, _HALF)
TRUTH_KERNELS(float, float32, )
TRUTH_KERNELS(double, float64, )
TRUTH_KERNELS(complex64, complex64, _COMPLEX)
TRUTH_KERNELS(complex128, complex128, _COMPLEX)
#undef TRUTH_KERNELS
#undef COUNT_KERNEL
#undef CMUL

/* --- pairwise sums ------------------------------------------------------- */

/*
 * NumPy's pairwise sum (loops_utils.h.src) of a run of n elements: fewer
 * than 8 in a plain loop from 0; up to 128 (a block) with 8 accumulators
 * (element i into accumulator i % 8) combined as a tree, then the rest in
 * order; longer runs split at half rounded down to a multiple of 8, and the
 * halves' sums added. Here a run's blocks are listed first (a
 * dlb_pairwise_layout), summed four at a time side by side, and their sums
 * combined by the same tree: each block keeps NumPy's arithmetic, so every
 * bit of the result stays NumPy's, but the adds of one block no longer
 * wait on those of another.
 */
#define PAIRWISE_BLOCK 128

/* Lists the blocks of the run [start, start + n) into lay, and their tree;
 * returns the node of the run's sum. */
static int layout_split(dlb_pairwise_layout *lay, int64_t start, int64_t n) {
  int64_t n2 = n / 2 - (n / 2) % 8;
  int left, right;
  if (n <= PAIRWISE_BLOCK) {
    lay->start[lay->blocks] = (int32_t)start;
    lay->length[lay->blocks] = (int32_t)n;
    return lay->blocks++;
  }
  left = layout_split(lay, start, n2);
  right = layout_split(lay, start + n2, n - n2);
  lay->left[lay->joins] = (int16_t)left;
  lay->right[lay->joins] = (int16_t)right;
  return DLB_PAIRWISE_MAX_BLOCKS + lay->joins++;
}

/* The layout of a run of n (8 <= n <= DLB_REDUCE_RUN: blocks of at least
 * 64), kept in lay for the next run of the same length. */
static const dlb_pairwise_layout *layout_of(dlb_pairwise_layout *lay, int64_t n) {
  if (lay->n != n) {
    lay->n = n;
    lay->blocks = lay->joins = 0;
    layout_split(lay, 0, n);
  }
  return lay;
}

/* 8 floats or doubles: one block's accumulators, added lane by lane (GCC's
 * vector extension: each lane's arithmetic is the scalar's). */
typedef float float_lanes __attribute__((vector_size(8 * sizeof(float))));
typedef double double_lanes __attribute__((vector_size(8 * sizeof(double))));
/* (Vectors never cross a function boundary: that has no portable ABI.) */

/* v (T_lanes) += the 8 elements at p. */
#define LANES_ADD(v, p)                \
  do {                                 \
    __typeof__(v) lanes_;              \
    memcpy(&lanes_, (p), sizeof lanes_); \
    (v) += lanes_;                     \
  } while (0)

/* out = the sum of the block of n elements at a whose accumulators v
 * (T_lanes) hold its elements before i: NumPy's tree of the 8, then the rest. */
#define BLOCK_END(T, v, a, i, n, out)                                                      \
  do {                                                                                     \
    T r_[8];                                                                               \
    int64_t i_ = (i);                                                                      \
    for (; i_ < (n) - (n) % 8; i_ += 8) LANES_ADD(v, (a) + i_);                            \
    memcpy(r_, &(v), sizeof r_);                                                           \
    (out) = ((r_[0] + r_[1]) + (r_[2] + r_[3])) + ((r_[4] + r_[5]) + (r_[6] + r_[7]));     \
    for (; i_ < (n); i_++) (out) += (a)[i_];                                               \
  } while (0)

#define PAIRWISE_KERNELS(T)                                                                  \
  /* NumPy's pairwise sum of the n contiguous elements at a. */                             \
  DLB_KERNEL_CLONES static T pairwise_##T(const T *a, int64_t n, dlb_pairwise_layout *cache) { \
    T sums[2 * DLB_PAIRWISE_MAX_BLOCKS], res = 0; /* blocks, then joins */     \
    const dlb_pairwise_layout *lay;                                                          \
    int b = 0;                                                                               \
    if (n < 8) {                                                                             \
      for (int64_t i = 0; i < n; i++) res += a[i];                                           \
      return res;                                                                            \
    }                                                                                        \
    lay = layout_of(cache, n);                                                               \
    for (; b + 4 <= lay->blocks; b += 4) { /* four blocks side by side */                   \
      const T *p0 = a + lay->start[b], *p1 = a + lay->start[b + 1];                          \
      const T *p2 = a + lay->start[b + 2], *p3 = a + lay->start[b + 3];                      \
      T##_lanes r0, r1, r2, r3;                                                              \
      int64_t i, common = PAIRWISE_BLOCK;                                                    \
      memcpy(&r0, p0, sizeof r0);                                                            \
      memcpy(&r1, p1, sizeof r1);                                                            \
      memcpy(&r2, p2, sizeof r2);                                                            \
      memcpy(&r3, p3, sizeof r3);                                                            \
      for (int k = b; k < b + 4; k++)                                                        \
        if (lay->length[k] / 8 * 8 < common) common = lay->length[k] / 8 * 8;               \
      for (i = 8; i < common; i += 8) {                                                      \
        LANES_ADD(r0, p0 + i);                                                               \
        LANES_ADD(r1, p1 + i);                                                               \
        LANES_ADD(r2, p2 + i);                                                               \
        LANES_ADD(r3, p3 + i);                                                               \
      }                                                                                      \
      BLOCK_END(T, r0, p0, i, lay->length[b], sums[b]);                                      \
      BLOCK_END(T, r1, p1, i, lay->length[b + 1], sums[b + 1]);                              \
      BLOCK_END(T, r2, p2, i, lay->length[b + 2], sums[b + 2]);                              \
      BLOCK_END(T, r3, p3, i, lay->length[b + 3], sums[b + 3]);                              \
    }                                                                                        \
    for (; b < lay->blocks; b++) {                                                           \
      const T *p = a + lay->start[b];                                                        \
      T##_lanes r;                                                                           \
      memcpy(&r, p, sizeof r);                                                               \
      BLOCK_END(T, r, p, 8, lay->length[b], sums[b]);                                        \
    }                                                                                        \
    /* The tree: each join adds its halves, left + right as NumPy does (no  \
     * shared slot between joins, so independent ones overlap). */          \
    for (int k = 0; k < lay->joins; k++)                                     \
      sums[DLB_PAIRWISE_MAX_BLOCKS + k] = sums[lay->left[k]] + sums[lay->right[k]]; \
    return lay->joins ? sums[DLB_PAIRWISE_MAX_BLOCKS + lay->joins - 1] : sums[0];            \
  }                                                                                          \
  /* NumPy's pairwise sum of n elements stride bytes apart, as written there. */             \
  static T pairwise_strided_##T(const char *a, int64_t n, int64_t stride) {                  \
    if (n < 8) {                                                                             \
      T res = 0;                                                                             \
      for (int64_t i = 0; i < n; i++) res += *(const T *)(a + i * stride);                   \
      return res;                                                                            \
    }                                                                                        \
    if (n <= PAIRWISE_BLOCK) {                                                               \
      T r[8], res;                                                                           \
      int64_t i;                                                                             \
      for (int l = 0; l < 8; l++) r[l] = *(const T *)(a + l * stride);                       \
      for (i = 8; i < n - (n % 8); i += 8)                                                   \
        for (int l = 0; l < 8; l++) r[l] += *(const T *)(a + (i + l) * stride);              \
      res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));               \
      for (; i < n; i++) res += *(const T *)(a + i * stride);                                \
      return res;                                                                            \
    }                                                                                        \
    int64_t n2 = n / 2 - (n / 2) % 8;                                                        \
    return pairwise_strided_##T(a, n2, stride) +                                             \
           pairwise_strided_##T(a + n2 * stride, n - n2, stride);                            \
  }                                                                                          \
  /* sum: runs of the inner dim pairwise, DLB_REDUCE_RUN at a time; rows added. */           \
  DLB_KERNEL_CLONES static int sum_##T(char **data, const int64_t *steps, int64_t n, void *aux) { \
    const int64_t sa = steps[0], sx = steps[1];                                              \
    if (sa == 0) {                                                                           \
      dlb_pairwise_layout own;                                                               \
      dlb_pairwise_layout *cache = aux ? (dlb_pairwise_layout *)aux : &own;                  \
      T acc = *(T *)data[0];                                                                 \
      own.n = 0;                                                                             \
      for (int64_t i = 0; i < n; i += DLB_REDUCE_RUN) {                                      \
        int64_t m = n - i < DLB_REDUCE_RUN ? n - i : DLB_REDUCE_RUN;                         \
        const char *run = data[1] + i * sx;                                                  \
        acc += sx == (int64_t)sizeof(T) ? pairwise_##T((const T *)run, m, cache)             \
                                        : pairwise_strided_##T(run, m, sx);                  \
      }                                                                                      \
      *(T *)data[0] = acc;                                                                   \
    } else if (sa == (int64_t)sizeof(T) && sx == (int64_t)sizeof(T)) {                       \
      T *acc = (T *)data[0];                                                                 \
      const T *x = (const T *)data[1];                                                       \
      for (int64_t i = 0; i < n; i++) acc[i] += x[i];                                        \
    } else {                                                                                 \
      for (int64_t i = 0; i < n; i++) *(T *)(data[0] + i * sa) += *(const T *)(data[1] + i * sx); \
    }                                                                                        \
    return 0;                                                                                \
  }

PAIRWISE_KERNELS(float)
PAIRWISE_KERNELS(double)
#undef PAIRWISE_KERNELS
#undef BLOCK_END
#undef LANES_ADD

/*
 * NumPy's pairwise sum of complex numbers: n counts the floats (2 per
 * number), a + i * stride is number i / 2 (stride: half a number's
 * stride); blocks of 64 numbers with 8 accumulators, the real parts in the
 * even ones.
 */
#define COMPLEX_PAIRWISE(T, C)                                                                 \
  static void pairwise_##C(const char *a, int64_t n, int64_t stride, T *rr, T *ri) {          \
    if (n < 8) {                                                                               \
      *rr = 0;                                                                                 \
      *ri = 0;                                                                                 \
      for (int64_t i = 0; i < n; i += 2) {                                                     \
        *rr += *(const T *)(a + i * stride);                                                   \
        *ri += *(const T *)(a + i * stride + sizeof(T));                                       \
      }                                                                                        \
      return;                                                                                  \
    }                                                                                          \
    if (n <= 128) {                                                                            \
      T r[8];                                                                                  \
      int64_t i;                                                                               \
      for (int l = 0; l < 8; l += 2) {                                                         \
        r[l] = *(const T *)(a + l * stride);                                                   \
        r[l + 1] = *(const T *)(a + l * stride + sizeof(T));                                   \
      }                                                                                        \
      for (i = 8; i < n - (n % 8); i += 8)                                                     \
        for (int l = 0; l < 8; l += 2) {                                                       \
          r[l] += *(const T *)(a + (i + l) * stride);                                          \
          r[l + 1] += *(const T *)(a + (i + l) * stride + sizeof(T));                          \
        }                                                                                      \
      *rr = (r[0] + r[2]) + (r[4] + r[6]);                                                     \
      *ri = (r[1] + r[3]) + (r[5] + r[7]);                                                     \
      for (; i < n; i += 2) {                                                                  \
        *rr += *(const T *)(a + i * stride);                                                   \
        *ri += *(const T *)(a + i * stride + sizeof(T));                                       \
      }                                                                                        \
      return;                                                                                  \
    }                                                                                          \
    T rr1, ri1, rr2, ri2;                                                                      \
    int64_t n2 = n / 2 - (n / 2) % 8;                                                          \
    pairwise_##C(a, n2, stride, &rr1, &ri1);                                                   \
    pairwise_##C(a + n2 * stride, n - n2, stride, &rr2, &ri2);                                 \
    *rr = rr1 + rr2;                                                                           \
    *ri = ri1 + ri2;                                                                           \
  }                                                                                            \
  static int sum_##C(char **data, const int64_t *steps, int64_t n, void *aux) {                \
    const int64_t sa = steps[0], sx = steps[1];                                                \
    (void)aux;                                                                                 \
    if (sa == 0) {                                                                             \
      C *acc = (C *)data[0];                                                                   \
      for (int64_t i = 0; i < n; i += DLB_REDUCE_RUN) {                                        \
        int64_t m = n - i < DLB_REDUCE_RUN ? n - i : DLB_REDUCE_RUN;                           \
        T rr, ri;                                                                              \
        pairwise_##C(data[1] + i * sx, 2 * m, sx / 2, &rr, &ri);                               \
        acc->re += rr;                                                                         \
        acc->im += ri;                                                                         \
      }                                                                                        \
      return 0;                                                                                \
    }                                                                                          \
    for (int64_t i = 0; i < n; i++) {                                                          \
      C *acc = (C *)(data[0] + i * sa);                                                        \
      const C *x = (const C *)(data[1] + i * sx);                                              \
      acc->re += x->re;                                                                        \
      acc->im += x->im;                                                                        \
    }                                                                                          \
    return 0;                                                                                  \
  }
COMPLEX_PAIRWISE(float, complex64)
COMPLEX_PAIRWISE(double, complex128)
#undef COMPLEX_PAIRWISE

/* --- the kernel tables ----------------------------------------------------- */

/* Rows of the fold table: one operation's kernels k_SUFFIX for a group of
 * loop dtypes (the letters of DLB_REDUCE_OPS's loops column). Bool elements
 * fold as uint8 (0 or 1); the truth kernels go by element width, float16
 * and bfloat16 by their bits without the sign. */
#define FOLDS_BI(k)                                                                          \
  [DLB_BOOL] = k##_uint8, [DLB_INT8] = k##_int8, [DLB_INT16] = k##_int16,                    \
  [DLB_INT32] = k##_int32, [DLB_INT64] = k##_int64, [DLB_UINT8] = k##_uint8,                 \
  [DLB_UINT16] = k##_uint16, [DLB_UINT32] = k##_uint32, [DLB_UINT64] = k##_uint64
#define FOLDS_F(k) [DLB_FLOAT32] = k##_float32, [DLB_FLOAT64] = k##_float64
#define FOLDS_C(k) [DLB_COMPLEX64] = k##_complex64, [DLB_COMPLEX128] = k##_complex128
#define FOLDS_SUM_FC                                                                         \
  [DLB_FLOAT32] = sum_float, [DLB_FLOAT64] = sum_double, FOLDS_C(sum)
#define FOLDS_BIHFC(k)                                                                       \
  [DLB_BOOL] = k##_bytes1, [DLB_INT8] = k##_bytes1, [DLB_UINT8] = k##_bytes1,                \
  [DLB_INT16] = k##_bytes2, [DLB_UINT16] = k##_bytes2, [DLB_INT32] = k##_bytes4,             \
  [DLB_UINT32] = k##_bytes4, [DLB_INT64] = k##_bytes8, [DLB_UINT64] = k##_bytes8,            \
  [DLB_FLOAT16] = k##_half, [DLB_BFLOAT16] = k##_half, FOLDS_F(k), FOLDS_C(k)

/* The fold kernels by operation and loop dtype: what DLB_REDUCE_OPS's
 * loops column declares for the reductions that fold, and no more
 * (tests/c/test_reduce_ops.c checks it). argmin and argmax search instead
 * (below); std and var fold with sum's kernels. */
static const dlb_loop folds[DLB_REDUCE_OP_COUNT][DLB_DTYPE_COUNT] = {
    [DLB_REDUCE_SUM] = {FOLDS_BI(sum), FOLDS_SUM_FC},
    [DLB_REDUCE_PROD] = {FOLDS_BI(prod), FOLDS_F(prod), FOLDS_C(prod)},
    [DLB_REDUCE_MEAN] = {FOLDS_SUM_FC},
    [DLB_REDUCE_MIN] = {FOLDS_BI(min), FOLDS_F(min)},
    [DLB_REDUCE_MAX] = {FOLDS_BI(max), FOLDS_F(max)},
    [DLB_REDUCE_ALL] = {FOLDS_BIHFC(all)},
    [DLB_REDUCE_ANY] = {FOLDS_BIHFC(any)},
    [DLB_REDUCE_COUNT_NONZERO] = {FOLDS_BIHFC(count)},
};

dlb_loop dlb_reduce_fold_loop(dlb_reduce_op op, dlb_dtype in) {
  if ((unsigned)op >= DLB_REDUCE_OP_COUNT || (unsigned)in >= DLB_DTYPE_COUNT) return NULL;
  return folds[op][in];
}

/* Row of a table by integer dtype: bool, int8..int64, uint8..uint64. */
static int integer_row(dlb_dtype t) {
  switch (t) {
    case DLB_BOOL: return 4; /* bool elements are uint8 0/1 */
    case DLB_INT8: return 0;
    case DLB_INT16: return 1;
    case DLB_INT32: return 2;
    case DLB_INT64: return 3;
    case DLB_UINT8: return 4;
    case DLB_UINT16: return 5;
    case DLB_UINT32: return 6;
    case DLB_UINT64: return 7;
    default: return -1;
  }
}

/* --- std/var: squared deviations ------------------------------------------- */

/* name(out, x, mean): out = |x - mean|^2 (SQUARE of the difference d). */
#define DEVIATION_KERNEL(name, TR, T, SQUARE)                                                    \
  DLB_KERNEL_CLONES static int name(char **data, const int64_t *steps, int64_t n, void *aux) {    \
    const int64_t so = steps[0], sx = steps[1], sm = steps[2];                                   \
    (void)aux;                                                                                   \
    if (so == (int64_t)sizeof(TR) && sx == (int64_t)sizeof(T) && sm == 0) {                      \
      TR *out = (TR *)data[0];                                                                   \
      const T *x = (const T *)data[1], m = *(const T *)data[2];                                  \
      for (int64_t i = 0; i < n; i++) out[i] = SQUARE(x[i], m);                                  \
    } else {                                                                                     \
      for (int64_t i = 0; i < n; i++)                                                            \
        *(TR *)(data[0] + i * so) =                                                              \
            SQUARE(*(const T *)(data[1] + i * sx), *(const T *)(data[2] + i * sm));              \
    }                                                                                            \
    return 0;                                                                                    \
  }
#define SQUARE_REAL(x, m) (((x) - (m)) * ((x) - (m)))
#define SQUARE_COMPLEX(x, m) \
  (((x).re - (m).re) * ((x).re - (m).re) + ((x).im - (m).im) * ((x).im - (m).im))
DEVIATION_KERNEL(deviation_float32, float, float, SQUARE_REAL)
DEVIATION_KERNEL(deviation_float64, double, double, SQUARE_REAL)
DEVIATION_KERNEL(deviation_complex64, float, complex64, SQUARE_COMPLEX)
DEVIATION_KERNEL(deviation_complex128, double, complex128, SQUARE_COMPLEX)

dlb_loop dlb_reduce_deviation_loop(dlb_dtype t) {
  switch (t) {
    case DLB_FLOAT32: return deviation_float32;
    case DLB_FLOAT64: return deviation_float64;
    case DLB_COMPLEX64: return deviation_complex64;
    case DLB_COMPLEX128: return deviation_complex128;
    default: return NULL;
  }
}

/* --- argmin, argmax -------------------------------------------------------- */

/* A search goes by blocks of ARG_BLOCK elements (a block stays in L1 while
 * it is looked at again), a strided one by blocks of ARG_COPY_BYTES copied
 * into a buffer on the stack; within a block, NaNs and matches are looked
 * for ARG_CHUNK elements at a time; runs shorter than ARG_SHORT_INT or
 * ARG_SHORT_FLOAT elements are walked instead (there the passes cost more
 * than they save). ARG_BLOCK fits the block's indices in 16 bits. */
#define ARG_BLOCK 4096
#define ARG_COPY_BYTES 8192
#define ARG_CHUNK 64
#define ARG_SHORT_INT 64
#define ARG_SHORT_FLOAT 128

/*
 * name(p, n, stride): the first index of the extreme of n > 0 elements of T
 * stride bytes apart, or of the first NaN (dlb_reduce_arg_search).
 * BEATS(x, b): x strictly better than b; CANDIDATE(x, b): x beats b or is a
 * NaN; ISNAN(x); U: an unsigned integer as wide as T; KIND: INT or FLOAT.
 * Each block (a strided one copied into a buffer first) is looked at
 * branch-free for a candidate against the best so far; only a block that
 * has one is searched, in one pass that keeps each lane's extreme and the
 * index where it was first seen (T of one byte: its extreme, then the first
 * element equal to it). After a block that beat the best, the next one is
 * searched straight away (ascending data beat it block after block). Every
 * loop but the walk vectorises.
 */
#define ARG_MATCH(ISNAN, x, v, nan_only) (ISNAN(x) | (!(nan_only) & ((x) == (v))))
#define ARG_SEARCH(name, T, U, BEATS, CANDIDATE, ISNAN, KIND)                                      \
  /* The search element by element. */                                                             \
  static inline int64_t name##_walk(const char *p, int64_t n, int64_t stride) {                    \
    T best = *(const T *)p;                                                                        \
    int64_t at = 0;                                                                                \
    if (ISNAN(best)) return 0;                                                                     \
    for (int64_t i = 1; i < n; i++) {                                                              \
      T v = *(const T *)(p + i * stride);                                                          \
      if (ISNAN(v)) return i;                                                                      \
      if (BEATS(v, best)) {                                                                        \
        best = v;                                                                                  \
        at = i;                                                                                    \
      }                                                                                            \
    }                                                                                              \
    return at;                                                                                     \
  }                                                                                                \
  /* Whether any of the n elements at x is a candidate against best. */                            \
  static inline int name##_candidate(const T *x, int64_t n, T best) {                              \
    U any = 0;                                                                                     \
    for (int64_t i = 0; i < n; i++) any |= (U)CANDIDATE(x[i], best);                               \
    return any != 0;                                                                               \
  }                                                                                                \
  /* T of two bytes or more: the first index of the extreme of the                                 \
   * 0 < n <= ARG_BLOCK elements at x, the extreme into *e, and whether one                        \
   * is a NaN into *nan (then *e and the index mean nothing). L lanes (two                         \
   * 512-bit vectors) keep each its extreme and the index of its first.                            \
   */                                                                                              \
  static inline int64_t name##_index(const T *x, int64_t n, T *e, int *nan) {                      \
    enum { L = 128 / sizeof(T) };                                                                  \
    T m[L], v = x[0];                                                                              \
    U id[L], bad = (U)ISNAN(x[0]);                                                                 \
    int64_t i = 1, at = 0;                                                                         \
    if (n >= L) {                                                                                  \
      for (int l = 0; l < L; l++) {                                                                \
        m[l] = x[l];                                                                               \
        id[l] = (U)l;                                                                              \
        bad |= (U)ISNAN(x[l]);                                                                     \
      }                                                                                            \
      for (i = L; i + L <= n; i += L)                                                              \
        for (int l = 0; l < L; l++) {                                                              \
          T y = x[i + l];                                                                          \
          int u = BEATS(y, m[l]);                                                                  \
          m[l] = u ? y : m[l];                                                                     \
          id[l] = u ? (U)(i + l) : id[l];                                                          \
          bad |= (U)ISNAN(y);                                                                      \
        }                                                                                          \
      v = m[0];                                                                                    \
      at = (int64_t)id[0];                                                                         \
      for (int l = 1; l < L; l++) /* the best lane; of equal ones, the first index */              \
        if (BEATS(m[l], v) || (m[l] == v && (int64_t)id[l] < at)) {                                \
          v = m[l];                                                                                \
          at = (int64_t)id[l];                                                                     \
        }                                                                                          \
    }                                                                                              \
    for (; i < n; i++) { /* the rest: indices after every lane's */                                \
      bad |= (U)ISNAN(x[i]);                                                                       \
      if (BEATS(x[i], v)) {                                                                        \
        v = x[i];                                                                                  \
        at = i;                                                                                    \
      }                                                                                            \
    }                                                                                              \
    *e = v;                                                                                        \
    *nan = bad != 0;                                                                               \
    return at;                                                                                     \
  }                                                                                                \
  /* T of one byte: whether the n > 0 elements at x hold one that beats                            \
   * best, and then *e, their extreme: LANES lanes fold a row of LANES                             \
   * elements at a time, and only lanes that beat best are folded into one. */                     \
  static inline int name##_beats(const T *x, int64_t n, T best, T *e) {                            \
    T m[LANES], r = x[0];                                                                          \
    int64_t i = 1;                                                                                 \
    if (n >= LANES) {                                                                              \
      U any = 0;                                                                                   \
      for (int l = 0; l < LANES; l++) m[l] = x[l];                                                 \
      for (i = LANES; i + LANES <= n; i += LANES)                                                  \
        for (int l = 0; l < LANES; l++) m[l] = BEATS(x[i + l], m[l]) ? x[i + l] : m[l];            \
      for (int l = 0; i + l < n; l++) m[l] = BEATS(x[i + l], m[l]) ? x[i + l] : m[l];              \
      for (int l = 0; l < LANES; l++) any |= (U)BEATS(m[l], best);                                 \
      if (!any) return 0;                                                                          \
      r = m[0];                                                                                    \
      for (int l = 1; l < LANES; l++) r = BEATS(m[l], r) ? m[l] : r;                               \
      *e = r;                                                                                      \
      return 1;                                                                                    \
    }                                                                                              \
    for (; i < n; i++) r = BEATS(x[i], r) ? x[i] : r;                                              \
    *e = r;                                                                                        \
    return BEATS(r, best);                                                                         \
  }                                                                                                \
  /* The first index of the n elements at x that is a NaN or (unless nan_only)                     \
   * equal to v; n when there is none. */                                                          \
  static inline int64_t name##_find(const T *x, int64_t n, T v, int nan_only) {                    \
    for (int64_t c = 0; c < n;) {                                                                  \
      int64_t len = n - c < ARG_CHUNK ? n - c : ARG_CHUNK;                                         \
      U hit = 0;                                                                                   \
      for (int64_t l = 0; l < len; l++) hit |= (U)ARG_MATCH(ISNAN, x[c + l], v, nan_only);         \
      if (hit) {                                                                                   \
        while (!ARG_MATCH(ISNAN, x[c], v, nan_only)) c++;                                          \
        return c;                                                                                  \
      }                                                                                            \
      c += len;                                                                                    \
    }                                                                                              \
    return n;                                                                                      \
  }                                                                                                \
  /* The block of len elements at y, index b of the search, against *best at                       \
   * *at: 1 when it beat *best (updated), 0 when not, -1 - i for a NaN at i. */                    \
  static inline int64_t name##_block(const T *y, int64_t len, int64_t b, T *best, int64_t *at) {   \
    T e;                                                                                           \
    int64_t i;                                                                                     \
    if (sizeof(T) > 1) {                                                                           \
      int nan;                                                                                     \
      i = name##_index(y, len, &e, &nan);                                                          \
      if (nan) return -1 - name##_find(y, len, e, 1);                                              \
      if (!BEATS(e, *best)) return 0;                                                              \
    } else {                                                                                       \
      if (!name##_beats(y, len, *best, &e)) return 0;                                              \
      i = name##_find(y, len, e, 0);                                                               \
    }                                                                                              \
    *best = e;                                                                                     \
    *at = b + i;                                                                                   \
    return 1;                                                                                      \
  }                                                                                                \
  DLB_KERNEL_CLONES static int64_t name(const char *p, int64_t n, int64_t stride) {                \
    T best = *(const T *)p, copy[ARG_COPY_BYTES / sizeof(T)];                                      \
    const int64_t whole = stride == (int64_t)sizeof(T);                                            \
    const int64_t block = whole ? ARG_BLOCK : (int64_t)(sizeof copy / sizeof(T));                  \
    int64_t at = 0, hot = 0;                                                                       \
    if (stride == 0) return 0; /* n times the same element */                                      \
    if (n < ARG_SHORT_##KIND || ISNAN(best)) return name##_walk(p, n, stride);                     \
    for (int64_t b = 0; b < n; b += block) {                                                       \
      int64_t len = n - b < block ? n - b : block;                                                 \
      const T *y = copy;                                                                           \
      if (whole)                                                                                   \
        y = (const T *)p + b;                                                                      \
      else                                                                                         \
        for (int64_t i = 0; i < len; i++) copy[i] = *(const T *)(p + (b + i) * stride);           \
      if (!hot && !name##_candidate(y, len, best)) continue;                                       \
      hot = name##_block(y, len, b, &best, &at);                                                   \
      if (hot < 0) return b - 1 - hot;                                                             \
    }                                                                                              \
    return at;                                                                                     \
  }

/* name(best, index, x): rows of argmin/argmax (reduce_loops.h). */
#define ARG_UPDATE(name, T, UPDATES)                                                             \
  DLB_KERNEL_CLONES static int name(char **data, const int64_t *steps, int64_t n, void *aux) {    \
    const int64_t k = *(const int64_t *)aux;                                                     \
    const int64_t sb = steps[0], si = steps[1], sx = steps[2];                                   \
    if (sb == (int64_t)sizeof(T) && si == 8 && sx == (int64_t)sizeof(T)) {                       \
      T *best = (T *)data[0];                                                                    \
      int64_t *index = (int64_t *)data[1];                                                       \
      const T *x = (const T *)data[2];                                                           \
      for (int64_t i = 0; i < n; i++) {                                                          \
        T b = best[i], v = x[i];                                                                 \
        int u = UPDATES(b, v);                                                                   \
        best[i] = u ? v : b;                                                                     \
        index[i] = u ? k : index[i];                                                             \
      }                                                                                          \
    } else {                                                                                     \
      for (int64_t i = 0; i < n; i++) {                                                          \
        T *b = (T *)(data[0] + i * sb), v = *(const T *)(data[2] + i * sx);                      \
        if (UPDATES(*b, v)) {                                                                    \
          *b = v;                                                                                \
          *(int64_t *)(data[1] + i * si) = k;                                                    \
        }                                                                                        \
      }                                                                                          \
    }                                                                                            \
    return 0;                                                                                    \
  }

#define GREATER(x, best) ((x) > (best))
#define LESS(x, best) ((x) < (best))
#define NEVER_NAN(x) ((void)(x), 0)
#define IS_NAN(x) ((x) != (x))
/* Whether x beats b or is a NaN (b is not). */
#define CANDIDATE_MAX_INT(x, b) ((x) > (b))
#define CANDIDATE_MIN_INT(x, b) ((x) < (b))
#define CANDIDATE_MAX_FLOAT(x, b) (!((x) <= (b)))
#define CANDIDATE_MIN_FLOAT(x, b) (!((x) >= (b)))
/* Whether v replaces b: v beats b, or v is a NaN and b is not. */
#define UPDATES_MAX_INT(b, v) ((v) > (b))
#define UPDATES_MIN_INT(b, v) ((v) < (b))
#define UPDATES_MAX_FLOAT(b, v) (((b) == (b)) & !((b) >= (v)))
#define UPDATES_MIN_FLOAT(b, v) (((b) == (b)) & !((b) <= (v)))

#define ARG_KERNELS(T, U, NAME, KIND, ISNAN)                                                    \
  ARG_SEARCH(argmax_##NAME, T, U, GREATER, CANDIDATE_MAX_##KIND, ISNAN, KIND)       \
  ARG_SEARCH(argmin_##NAME, T, U, LESS, CANDIDATE_MIN_##KIND, ISNAN, KIND)          \
  ARG_UPDATE(argmax_rows_##NAME, T, UPDATES_MAX_##KIND)                                         \
  ARG_UPDATE(argmin_rows_##NAME, T, UPDATES_MIN_##KIND)
ARG_KERNELS(int8_t, uint8_t, int8, INT, NEVER_NAN)
ARG_KERNELS(int16_t, uint16_t, int16, INT, NEVER_NAN)
ARG_KERNELS(int32_t, uint32_t, int32, INT, NEVER_NAN)
ARG_KERNELS(int64_t, uint64_t, int64, INT, NEVER_NAN)
ARG_KERNELS(uint8_t, uint8_t, uint8, INT, NEVER_NAN)
ARG_KERNELS(uint16_t, uint16_t, uint16, INT, NEVER_NAN)
ARG_KERNELS(uint32_t, uint32_t, uint32, INT, NEVER_NAN)
ARG_KERNELS(uint64_t, uint64_t, uint64, INT, NEVER_NAN)
ARG_KERNELS(float, uint32_t, float32, FLOAT, IS_NAN)
ARG_KERNELS(double, uint64_t, float64, FLOAT, IS_NAN)
#undef ARG_KERNELS

/* Row of the arg tables: the integer rows, then float32, float64. */
static int arg_row(dlb_dtype t) {
  int row = integer_row(t);
  if (row >= 0) return row;
  return t == DLB_FLOAT32 ? 8 : t == DLB_FLOAT64 ? 9 : -1;
}

int64_t dlb_reduce_arg_search(int is_max, dlb_dtype t, const char *p, int64_t n, int64_t stride) {
  typedef int64_t (*search)(const char *, int64_t, int64_t);
  static const search maxs[] = {argmax_int8,  argmax_int16,  argmax_int32,   argmax_int64,
                                argmax_uint8, argmax_uint16, argmax_uint32,  argmax_uint64,
                                argmax_float32, argmax_float64};
  static const search mins[] = {argmin_int8,  argmin_int16,  argmin_int32,   argmin_int64,
                                argmin_uint8, argmin_uint16, argmin_uint32,  argmin_uint64,
                                argmin_float32, argmin_float64};
  int row = arg_row(t);
  return row < 0 ? 0 : (is_max ? maxs : mins)[row](p, n, stride);
}

dlb_loop dlb_reduce_arg_update_loop(int is_max, dlb_dtype t) {
  static const dlb_loop maxs[] = {argmax_rows_int8,  argmax_rows_int16,   argmax_rows_int32,
                                  argmax_rows_int64, argmax_rows_uint8,   argmax_rows_uint16,
                                  argmax_rows_uint32, argmax_rows_uint64, argmax_rows_float32,
                                  argmax_rows_float64};
  static const dlb_loop mins[] = {argmin_rows_int8,  argmin_rows_int16,   argmin_rows_int32,
                                  argmin_rows_int64, argmin_rows_uint8,   argmin_rows_uint16,
                                  argmin_rows_uint32, argmin_rows_uint64, argmin_rows_float32,
                                  argmin_rows_float64};
  int row = arg_row(t);
  return row < 0 ? NULL : (is_max ? maxs : mins)[row];
}
