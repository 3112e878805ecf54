/* reduce_loops.c -- the kernels of reductions (reduce_loops.h): one fold
 * expression per (operation, dtype) expanded into a loop with a
 * reduce-to-one branch and a row branch; NumPy's pairwise sums for floats
 * and complex; the searches and row updates of argmin/argmax. */
#include <string.h>
#include "../../core/invariant.h"
#include "reduce_loops.h"
#include "element_types.h"

/* Accumulators of a laned reduce-to-one branch: a row of LANES folds in a
 * row of inputs at a time, which GCC vectorises (float min/max written as
 * a few separate chains it leaves scalar). */
#define LANES 64

#define REDUCE_CAT_(a, b) a##b
#define REDUCE_CAT(a, b) REDUCE_CAT_(a, b)

/* --- fold kernels ---------------------------------------------------------- */

/*
 * The fold kernels (reduce_fold.h): name(acc, x) folds inputs of TI into
 * accumulators of TA. INIT(x) is the accumulator of one input, FOLD(a, x)
 * a with x folded in, COMBINE(a, b) two accumulators as one. With LANED, a
 * contiguous reduce-to-one run goes through LANES accumulators (min/max:
 * the order of the fold changes, which they do not mind; the run's loop
 * then vectorises, where the strided one does not: int64 max of 1e7 went
 * from 11.7 to 4.9 ms); otherwise it folds in order (integer sums and
 * products).
 */

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
/* nanmax, nanmin (NumPy's fmax, fmin): a NaN input is passed over, a NaN
 * accumulator (the first element) gives way to any number. */
#define FMAX_FLOAT(a, x) ((((a) >= (x)) | ((x) != (x))) ? (a) : (x))
#define FMIN_FLOAT(a, x) ((((a) <= (x)) | ((x) != (x))) ? (a) : (x))
/* nanprod: a NaN input multiplies as 1 (a complex one: a NaN part). */
#define MUL_NAN_AS_ONE(a, x) ((a) * ((x) != (x) ? 1 : (x)))
#define NAN_COMPLEX(x) (((x).re != (x).re) | ((x).im != (x).im))
#define CMUL64_NAN_AS_ONE(a, x) CMUL64(a, NAN_COMPLEX(x) ? complex64_one : (x))
#define CMUL128_NAN_AS_ONE(a, x) CMUL128(a, NAN_COMPLEX(x) ? complex128_one : (x))
/* The count of complex numbers without a NaN part: nanmean, nanvar. */
#define COUNT_NUMBER_COMPLEX(x) ((int64_t)!NAN_COMPLEX(x))
#define ADD_COUNT_NUMBER_COMPLEX(a, x) ((a) + COUNT_NUMBER_COMPLEX(x))
/* Truth of an element: NaN is true; float16/bfloat16 bits without the sign. */
#define NONZERO(x) ((x) != 0)
#define NONZERO_HALF(x) (((x)&0x7fff) != 0)
#define NONZERO_COMPLEX(x) (((x).re != 0) | ((x).im != 0))
#define AND_NONZERO(a, x) ((dlb_bool8)((a)&NONZERO(x)))
#define OR_NONZERO(a, x) ((dlb_bool8)((a) | NONZERO(x)))
#define AND_NONZERO_HALF(a, x) ((dlb_bool8)((a)&NONZERO_HALF(x)))
#define OR_NONZERO_HALF(a, x) ((dlb_bool8)((a) | NONZERO_HALF(x)))
#define AND_NONZERO_COMPLEX(a, x) ((dlb_bool8)((a)&NONZERO_COMPLEX(x)))
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

/* Integers (reduce_fold_integer.h): sum and prod into uint64 accumulators
 * (bool uses uint8's), min and max in their own dtype. */
#define T int8_t
#define SUFFIX int8
#include "reduce_fold_integer.h"
#define T int16_t
#define SUFFIX int16
#include "reduce_fold_integer.h"
#define T int32_t
#define SUFFIX int32
#include "reduce_fold_integer.h"
#define T int64_t
#define SUFFIX int64
#include "reduce_fold_integer.h"
#define T uint8_t
#define SUFFIX uint8
#include "reduce_fold_integer.h"
#define T uint16_t
#define SUFFIX uint16
#include "reduce_fold_integer.h"
#define T uint32_t
#define SUFFIX uint32
#include "reduce_fold_integer.h"
#define T uint64_t
#define SUFFIX uint64
#include "reduce_fold_integer.h"

/* Floats: max and min (reduce_fold_float.h). */
#define T float
#define SUFFIX float32
#include "reduce_fold_float.h"
#define T double
#define SUFFIX float64
#include "reduce_fold_float.h"
/* Float products multiply in order, as NumPy's do. */
#define NAME prod_float32
#define TA float
#define TI float
#define INIT SAME
#define FOLD MUL
#define COMBINE MUL
#define LANED 0
#include "reduce_fold.h"
#define NAME prod_float64
#define TA double
#define TI double
#define INIT SAME
#define FOLD MUL
#define COMBINE MUL
#define LANED 0
#include "reduce_fold.h"
#define NAME prod_complex64
#define TA complex64
#define TI complex64
#define INIT SAME
#define FOLD CMUL64
#define COMBINE CMUL64
#define LANED 0
#include "reduce_fold.h"
#define NAME prod_complex128
#define TA complex128
#define TI complex128
#define INIT SAME
#define FOLD CMUL128
#define COMBINE CMUL128
#define LANED 0
#include "reduce_fold.h"

/* nanprod: the products above with NaN inputs as 1 (a complex one times
 * 1 + 0i, as NumPy's product of a copy with 1 in place of each NaN). */
static const complex64 complex64_one = {1, 0};
static const complex128 complex128_one = {1, 0};
#define NAME nanprod_float32
#define TA float
#define TI float
#define INIT SAME
#define FOLD MUL_NAN_AS_ONE
#define COMBINE MUL
#define LANED 0
#include "reduce_fold.h"
#define NAME nanprod_float64
#define TA double
#define TI double
#define INIT SAME
#define FOLD MUL_NAN_AS_ONE
#define COMBINE MUL
#define LANED 0
#include "reduce_fold.h"
#define NAME nanprod_complex64
#define TA complex64
#define TI complex64
#define INIT SAME
#define FOLD CMUL64_NAN_AS_ONE
#define COMBINE CMUL64
#define LANED 0
#include "reduce_fold.h"
#define NAME nanprod_complex128
#define TA complex128
#define TI complex128
#define INIT SAME
#define FOLD CMUL128_NAN_AS_ONE
#define COMBINE CMUL128
#define LANED 0
#include "reduce_fold.h"
/* The counts of numbers, elements that are not NaN (nanmean, nanvar;
 * reduce_count_numbers.h), and of complex numbers without a NaN part. */
#define COUNT_LANES 32
#define COUNT_BLOCK (1 << 24) /* whole rows of lanes; a lane counts at most 2^19 */
#define NAME count_numbers_float32
#define T float
#define C int32_t
#include "reduce_count_numbers.h"
#define NAME count_numbers_float64
#define T double
#define C int64_t
#include "reduce_count_numbers.h"

#define NAME count_numbers_complex64
#define TA int64_t
#define TI complex64
#define INIT COUNT_NUMBER_COMPLEX
#define FOLD ADD_COUNT_NUMBER_COMPLEX
#define COMBINE ADD
#define LANED 0
#include "reduce_fold.h"
#define NAME count_numbers_complex128
#define TA int64_t
#define TI complex128
#define INIT COUNT_NUMBER_COMPLEX
#define FOLD ADD_COUNT_NUMBER_COMPLEX
#define COMBINE ADD
#define LANED 0
#include "reduce_fold.h"

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

/* all, any, count_nonzero of every dtype (reduce_fold_truth.h; one-byte
 * counts: above). TRUTH: how an element's truth is read, the suffix of
 * NONZERO. */
#define NAME all_bytes1
#define TA dlb_bool8
#define TI uint8_t
#define INIT BOOL_OF
#define FOLD AND_NONZERO
#define COMBINE AND
#define LANED 0
#include "reduce_fold.h"
#define NAME any_bytes1
#define TA dlb_bool8
#define TI uint8_t
#define INIT BOOL_OF
#define FOLD OR_NONZERO
#define COMBINE OR
#define LANED 0
#include "reduce_fold.h"
#define T uint16_t
#define SUFFIX bytes2
#define TRUTH
#include "reduce_fold_truth.h"
#define T uint32_t
#define SUFFIX bytes4
#define TRUTH
#include "reduce_fold_truth.h"
#define T uint64_t
#define SUFFIX bytes8
#define TRUTH
#include "reduce_fold_truth.h"
#define T uint16_t
#define SUFFIX half
#define TRUTH _HALF
#include "reduce_fold_truth.h"
#define T float
#define SUFFIX float32
#define TRUTH
#include "reduce_fold_truth.h"
#define T double
#define SUFFIX float64
#define TRUTH
#include "reduce_fold_truth.h"
#define T complex64
#define SUFFIX complex64
#define TRUTH _COMPLEX
#include "reduce_fold_truth.h"
#define T complex128
#define SUFFIX complex128
#define TRUTH _COMPLEX
#include "reduce_fold_truth.h"
#undef CMUL

/* --- pairwise sums ------------------------------------------------------- */

/*
 * NumPy's pairwise sum (loops_utils.h.src) of a run of n elements: fewer
 * than 8 in a plain loop from 0; up to 128 (a block) with 8 accumulators
 * (element i into accumulator i % 8) combined as a tree, then the rest in
 * order; longer runs split at half rounded down to a multiple of 8, and the
 * halves' sums added. Here a run's blocks are listed first (a
 * dlb_pairwise_tree), summed one after another in memory order, and their
 * sums combined by the same tree: each block keeps NumPy's arithmetic, so
 * every bit of the result stays NumPy's. A block's 8 accumulators are one
 * vector; a whole block of 128 is unrolled, so the chains of neighbouring
 * blocks overlap in the core without leaving memory order (four blocks
 * side by side, four streams 512 bytes apart, read main memory at 60% of a
 * plain stream's speed on Zen 1; one stream reads it at 95%).
 */
#define PAIRWISE_BLOCK 128

/* Lists the blocks of the run [start, start + n) into lay, and their tree;
 * returns the node of the run's sum. */
static int layout_split(dlb_pairwise_tree *lay, int64_t start, int64_t n) {
  int64_t n2 = n / 2 - (n / 2) % 8;
  int left, right;
  if (n <= PAIRWISE_BLOCK) {
    DLB_ASSERT(lay->blocks < DLB_PAIRWISE_MAX_BLOCKS);
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

/* The tree of a run of n (8 <= n <= DLB_REDUCE_RUN: blocks of at least
 * 64), kept in cache for the next run of the same length. */
static const dlb_pairwise_tree *layout_of(dlb_pairwise_layout *cache, int64_t n) {
  dlb_pairwise_tree *lay = n == DLB_REDUCE_RUN ? &cache->full : &cache->part;
  DLB_ASSERT(n >= 8 && n <= DLB_REDUCE_RUN);
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

/* The lanes v (T_lanes) as the sum reads them: NaNs as 0 where the
 * template's SKIP_NAN is 1 (x == x: all bits set where x is a number), as
 * they are (no code) where it is 0. In 16-byte pieces, a vector every
 * build level compares natively (GCC lowers a comparison of vectors wider
 * than the level's to scalar compares, 4x slower here), split and joined
 * in registers by __builtin_shufflevector (GCC 12, clang): through memory
 * (compilers without it), the wide reload of the narrow stores stalls
 * (store forwarding fails), 10x slower than sum. */
#define LANES_READ(v) REDUCE_CAT(LANES_READ_, T)(v)
#define NUMBERS_OR_ZERO(q) ((__typeof__(q))((__typeof__((q) == (q)))(q) & ((q) == (q))))
#ifdef __has_builtin
#if __has_builtin(__builtin_shufflevector)
#define LANES_SPLIT 1
#endif
#endif
#ifdef LANES_SPLIT
typedef float float_piece __attribute__((vector_size(16)));
typedef double double_piece __attribute__((vector_size(16)));
typedef double double_half __attribute__((vector_size(32)));
#define LANES_READ_float(v)                                                                        \
  do {                                                                                             \
    if (SKIP_NAN) {                                                                                \
      float_piece lo_ = __builtin_shufflevector(v, v, 0, 1, 2, 3);                                 \
      float_piece hi_ = __builtin_shufflevector(v, v, 4, 5, 6, 7);                                 \
      lo_ = NUMBERS_OR_ZERO(lo_);                                                                  \
      hi_ = NUMBERS_OR_ZERO(hi_);                                                                  \
      (v) = __builtin_shufflevector(lo_, hi_, 0, 1, 2, 3, 4, 5, 6, 7);                             \
    }                                                                                              \
  } while (0)
#define LANES_READ_double(v)                                                                       \
  do {                                                                                             \
    if (SKIP_NAN) {                                                                                \
      double_piece a_ = __builtin_shufflevector(v, v, 0, 1);                                       \
      double_piece b_ = __builtin_shufflevector(v, v, 2, 3);                                       \
      double_piece c_ = __builtin_shufflevector(v, v, 4, 5);                                       \
      double_piece d_ = __builtin_shufflevector(v, v, 6, 7);                                       \
      double_half ab_, cd_;                                                                        \
      a_ = NUMBERS_OR_ZERO(a_);                                                                    \
      b_ = NUMBERS_OR_ZERO(b_);                                                                    \
      c_ = NUMBERS_OR_ZERO(c_);                                                                    \
      d_ = NUMBERS_OR_ZERO(d_);                                                                    \
      ab_ = __builtin_shufflevector(a_, b_, 0, 1, 2, 3);                                           \
      cd_ = __builtin_shufflevector(c_, d_, 0, 1, 2, 3);                                           \
      (v) = __builtin_shufflevector(ab_, cd_, 0, 1, 2, 3, 4, 5, 6, 7);                             \
    }                                                                                              \
  } while (0)
#else
#define LANES_READ_PIECES(v)                                                                       \
  do {                                                                                             \
    if (SKIP_NAN) {                                                                                \
      typedef __typeof__((v)[0]) piece_ __attribute__((vector_size(16)));                          \
      unsigned char b_[sizeof(v)];                                                                 \
      memcpy(b_, &(v), sizeof b_);                                                                 \
      for (size_t k_ = 0; k_ < sizeof b_; k_ += 16) {                                              \
        piece_ q_;                                                                                 \
        memcpy(&q_, b_ + k_, 16);                                                                  \
        q_ = NUMBERS_OR_ZERO(q_);                                                                  \
        memcpy(b_ + k_, &q_, 16);                                                                  \
      }                                                                                            \
      memcpy(&(v), b_, sizeof b_);                                                                 \
    }                                                                                              \
  } while (0)
#define LANES_READ_float LANES_READ_PIECES
#define LANES_READ_double LANES_READ_PIECES
#endif

/* v (T_lanes) += the 8 elements at p. */
#define LANES_ADD(v, p)                                                                            \
  do {                                                                                             \
    __typeof__(v) lanes_;                                                                          \
    memcpy(&lanes_, (p), sizeof lanes_);                                                           \
    LANES_READ(lanes_);                                                                            \
    (v) += lanes_;                                                                                 \
  } while (0)

/* out = the sum of the block of n elements at a whose accumulators v
 * (T_lanes) hold its elements before i: NumPy's tree of the 8, then the rest. */
#define BLOCK_END(T, v, a, i, n, out)                                                              \
  do {                                                                                             \
    T r_[8];                                                                                       \
    int64_t i_ = (i);                                                                              \
    for (; i_ < (n) - (n) % 8; i_ += 8) LANES_ADD(v, (a) + i_);                                    \
    memcpy(r_, &(v), sizeof r_);                                                                   \
    (out) = ((r_[0] + r_[1]) + (r_[2] + r_[3])) + ((r_[4] + r_[5]) + (r_[6] + r_[7]));             \
    for (; i_ < (n); i_++) (out) += READ((a)[i_]);                                                 \
  } while (0)

/* pairwise_T, pairwise_strided_T and sum_T, and for nansum (NaNs read as
 * 0) nanpairwise_T, nanpairwise_strided_T and nansum_T (reduce_pairwise.h) */
#define T float
#define PREFIX
#define SKIP_NAN 0
#include "reduce_pairwise.h"
#define T double
#define PREFIX
#define SKIP_NAN 0
#include "reduce_pairwise.h"
#define T float
#define PREFIX nan
#define SKIP_NAN 1
#include "reduce_pairwise.h"
#define T double
#define PREFIX nan
#define SKIP_NAN 1
#include "reduce_pairwise.h"
#undef BLOCK_END
#undef LANES_ADD
#undef LANES_READ
#undef LANES_READ_float
#undef LANES_READ_double
#undef NUMBERS_OR_ZERO
#undef LANES_READ_PIECES

/*
 * NumPy's pairwise sum of complex numbers: n counts the floats (2 per
 * number), a + i * stride is number i / 2 (stride: half a number's
 * stride); blocks of 64 numbers with 8 accumulators, the real parts in the
 * even ones.
 */
#define T float
#define C complex64
#define PREFIX
#define SKIP_NAN 0
#include "reduce_complex_pairwise.h"
#define T double
#define C complex128
#define PREFIX
#define SKIP_NAN 0
#include "reduce_complex_pairwise.h"
#define T float
#define C complex64
#define PREFIX nan
#define SKIP_NAN 1
#include "reduce_complex_pairwise.h"
#define T double
#define C complex128
#define PREFIX nan
#define SKIP_NAN 1
#include "reduce_complex_pairwise.h"

/* --- the kernel tables ----------------------------------------------------- */

/* Rows of the fold table: one operation's kernels k_SUFFIX for a group of
 * loop dtypes (the letters of DLB_REDUCE_OPS's loops column). Bool elements
 * fold as uint8 (0 or 1); the truth kernels go by element width, float16
 * and bfloat16 by their bits without the sign. */
#define FOLDS_BI(k)                                                                                \
  [DLB_BOOL] = k##_uint8, [DLB_INT8] = k##_int8, [DLB_INT16] = k##_int16, [DLB_INT32] = k##_int32, \
  [DLB_INT64] = k##_int64, [DLB_UINT8] = k##_uint8, [DLB_UINT16] = k##_uint16,                     \
  [DLB_UINT32] = k##_uint32, [DLB_UINT64] = k##_uint64
#define FOLDS_F(k) [DLB_FLOAT32] = k##_float32, [DLB_FLOAT64] = k##_float64
#define FOLDS_C(k) [DLB_COMPLEX64] = k##_complex64, [DLB_COMPLEX128] = k##_complex128
#define FOLDS_SUM_FC [DLB_FLOAT32] = sum_float, [DLB_FLOAT64] = sum_double, FOLDS_C(sum)
#define FOLDS_NANSUM_FC [DLB_FLOAT32] = nansum_float, [DLB_FLOAT64] = nansum_double, FOLDS_C(nansum)
#define FOLDS_BIHFC(k)                                                                             \
  [DLB_BOOL] = k##_bytes1, [DLB_INT8] = k##_bytes1, [DLB_UINT8] = k##_bytes1,                      \
  [DLB_INT16] = k##_bytes2, [DLB_UINT16] = k##_bytes2, [DLB_INT32] = k##_bytes4,                   \
  [DLB_UINT32] = k##_bytes4, [DLB_INT64] = k##_bytes8, [DLB_UINT64] = k##_bytes8,                  \
  [DLB_FLOAT16] = k##_half, [DLB_BFLOAT16] = k##_half, FOLDS_F(k), FOLDS_C(k)

/* The fold kernels by operation and loop dtype: what DLB_REDUCE_OPS's
 * loops column declares for the reductions that fold, and no more
 * (tests/c/test_reduce_ops.c checks it). argmin and argmax search instead
 * (below); std and var fold with sum's kernels, nanstd and nanvar with
 * nansum's and sum's. The nan-functions of bool and integers are the plain
 * ones (no NaN there). */
static const dlb_loop folds[DLB_REDUCE_OP_COUNT][DLB_DTYPE_COUNT] = {
    [DLB_REDUCE_SUM] = {FOLDS_BI(sum), FOLDS_SUM_FC},
    [DLB_REDUCE_PROD] = {FOLDS_BI(prod), FOLDS_F(prod), FOLDS_C(prod)},
    [DLB_REDUCE_MEAN] = {FOLDS_SUM_FC},
    [DLB_REDUCE_MIN] = {FOLDS_BI(min), FOLDS_F(min)},
    [DLB_REDUCE_MAX] = {FOLDS_BI(max), FOLDS_F(max)},
    [DLB_REDUCE_ALL] = {FOLDS_BIHFC(all)},
    [DLB_REDUCE_ANY] = {FOLDS_BIHFC(any)},
    [DLB_REDUCE_COUNT_NONZERO] = {FOLDS_BIHFC(count)},
    [DLB_REDUCE_NANSUM] = {FOLDS_BI(sum), FOLDS_NANSUM_FC},
    [DLB_REDUCE_NANPROD] = {FOLDS_BI(prod), FOLDS_F(nanprod), FOLDS_C(nanprod)},
    [DLB_REDUCE_NANMEAN] = {FOLDS_NANSUM_FC},
    [DLB_REDUCE_NANMIN] = {FOLDS_BI(min), FOLDS_F(nanmin)},
    [DLB_REDUCE_NANMAX] = {FOLDS_BI(max), FOLDS_F(nanmax)},
};

dlb_loop dlb_reduce_fold_loop(dlb_reduce_op op, dlb_dtype in) {
  if ((unsigned)op >= DLB_REDUCE_OP_COUNT || (unsigned)in >= DLB_DTYPE_COUNT) return NULL;
  return folds[op][in];
}

dlb_loop dlb_reduce_short_runs_loop(dlb_reduce_op op, dlb_dtype in) {
  int f64 = in == DLB_FLOAT64;
  if (in != DLB_FLOAT32 && !f64) return NULL;
  switch (op) {
    case DLB_REDUCE_SUM:
    case DLB_REDUCE_MEAN: return f64 ? sum_short_runs_double : sum_short_runs_float;
    case DLB_REDUCE_NANSUM:
    case DLB_REDUCE_NANMEAN: return f64 ? nansum_short_runs_double : nansum_short_runs_float;
    default: return NULL;
  }
}

dlb_loop dlb_reduce_count_numbers_loop(dlb_dtype in) {
  switch (in) {
    case DLB_FLOAT32: return count_numbers_float32;
    case DLB_FLOAT64: return count_numbers_float64;
    case DLB_COMPLEX64: return count_numbers_complex64;
    case DLB_COMPLEX128: return count_numbers_complex128;
    default: return NULL;
  }
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
#define DEVIATION_KERNEL(name, TR, T, SQUARE)                                                      \
  DLB_KERNEL_CLONES static int name(char **data, const int64_t *steps, int64_t n, void *aux) {     \
    const int64_t so = steps[0], sx = steps[1], sm = steps[2];                                     \
    (void)aux;                                                                                     \
    if (so == (int64_t)sizeof(TR) && sx == (int64_t)sizeof(T) && sm == 0) {                        \
      TR *out = (TR *)data[0];                                                                     \
      const T *x = (const T *)data[1], m = *(const T *)data[2];                                    \
      for (int64_t i = 0; i < n; i++) out[i] = SQUARE(x[i], m);                                    \
    } else {                                                                                       \
      for (int64_t i = 0; i < n; i++)                                                              \
        *(TR *)(data[0] + i * so) =                                                                \
            SQUARE(*(const T *)(data[1] + i * sx), *(const T *)(data[2] + i * sm));                \
    }                                                                                              \
    return 0;                                                                                      \
  }
#define SQUARE_REAL(x, m) (((x) - (m)) * ((x) - (m)))
#define SQUARE_COMPLEX(x, m)                                                                       \
  (((x).re - (m).re) * ((x).re - (m).re) + ((x).im - (m).im) * ((x).im - (m).im))
/* nanvar: a NaN's deviation is 0 (NumPy zeroes it before squaring). */
#define SQUARE_REAL_NAN(x, m) ((x) != (x) ? 0 : SQUARE_REAL(x, m))
#define SQUARE_COMPLEX_NAN(x, m) (NAN_COMPLEX(x) ? 0 : SQUARE_COMPLEX(x, m))
DEVIATION_KERNEL(deviation_float32, float, float, SQUARE_REAL)
DEVIATION_KERNEL(deviation_float64, double, double, SQUARE_REAL)
DEVIATION_KERNEL(deviation_complex64, float, complex64, SQUARE_COMPLEX)
DEVIATION_KERNEL(deviation_complex128, double, complex128, SQUARE_COMPLEX)
DEVIATION_KERNEL(nandeviation_float32, float, float, SQUARE_REAL_NAN)
DEVIATION_KERNEL(nandeviation_float64, double, double, SQUARE_REAL_NAN)
DEVIATION_KERNEL(nandeviation_complex64, float, complex64, SQUARE_COMPLEX_NAN)
DEVIATION_KERNEL(nandeviation_complex128, double, complex128, SQUARE_COMPLEX_NAN)

dlb_loop dlb_reduce_deviation_loop(dlb_dtype t, int skip_nan) {
  switch (t) {
    case DLB_FLOAT32: return skip_nan ? nandeviation_float32 : deviation_float32;
    case DLB_FLOAT64: return skip_nan ? nandeviation_float64 : deviation_float64;
    case DLB_COMPLEX64: return skip_nan ? nandeviation_complex64 : deviation_complex64;
    case DLB_COMPLEX128: return skip_nan ? nandeviation_complex128 : deviation_complex128;
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
/* The independent vectors of a block's search and their bytes
 * (reduce_arg_search.h). */
#define ARG_VECS 4
#define ARG_VEC_BYTES 32

/*
 * The searches (reduce_arg_search.h): name(p, n, stride): the first index
 * of the extreme of n > 0 elements of T stride bytes apart, or of the first
 * NaN (dlb_reduce_arg_search).
 * BEATS(x, b): x strictly better than b; CANDIDATE(x, b): x beats b or is a
 * NaN; ISNAN(x); U: an unsigned integer as wide as T; KIND: INT or FLOAT.
 * Each block (a strided one copied into a buffer first) is looked at
 * branch-free for a candidate against the best so far; only a block that
 * has one is searched, in one pass that folds each row of vectors into one
 * and keeps each lane's extreme and the row where it was first seen, then
 * finds the lane's element in that row (T of one byte: its extreme, then
 * the first element equal to it). After a block that beat the best, the next one is
 * searched straight away (ascending data beat it block after block). Every
 * loop but the walk vectorises.
 */
#define ARG_MATCH(ISNAN, x, v, nan_only) (ISNAN(x) | (!(nan_only) & ((x) == (v))))
#define GREATER(x, best) ((x) > (best))
#define LESS(x, best) ((x) < (best))
#define NEVER_NAN(x) ((void)(x), 0)
#define IS_NAN(x) ((x) != (x))
/* Lanes of a vector that are NaN (all bits set), of an integer vector none. */
#define VEC_NAN_FLOAT(v) ((v) != (v))
#define VEC_NAN_INT(v) ((v) ^ (v))
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

/* argmax_SUFFIX, argmin_SUFFIX and their row kernels argmax_rows_SUFFIX and
 * argmin_rows_SUFFIX (reduce_arg.h) */
#define T int8_t
#define U uint8_t
#define SUFFIX int8
#define KIND INT
#define ISNAN NEVER_NAN
#include "reduce_arg.h"
#define T int16_t
#define U uint16_t
#define SUFFIX int16
#define KIND INT
#define ISNAN NEVER_NAN
#include "reduce_arg.h"
#define T int32_t
#define U uint32_t
#define SUFFIX int32
#define KIND INT
#define ISNAN NEVER_NAN
#include "reduce_arg.h"
#define T int64_t
#define U uint64_t
#define SUFFIX int64
#define KIND INT
#define ISNAN NEVER_NAN
#include "reduce_arg.h"
#define T uint8_t
#define U uint8_t
#define SUFFIX uint8
#define KIND INT
#define ISNAN NEVER_NAN
#include "reduce_arg.h"
#define T uint16_t
#define U uint16_t
#define SUFFIX uint16
#define KIND INT
#define ISNAN NEVER_NAN
#include "reduce_arg.h"
#define T uint32_t
#define U uint32_t
#define SUFFIX uint32
#define KIND INT
#define ISNAN NEVER_NAN
#include "reduce_arg.h"
#define T uint64_t
#define U uint64_t
#define SUFFIX uint64
#define KIND INT
#define ISNAN NEVER_NAN
#include "reduce_arg.h"
#define T float
#define U uint32_t
#define SUFFIX float32
#define KIND FLOAT
#define ISNAN IS_NAN
#include "reduce_arg.h"
#define T double
#define U uint64_t
#define SUFFIX float64
#define KIND FLOAT
#define ISNAN IS_NAN
#include "reduce_arg.h"

/* Row of the arg tables: the integer rows, then float32, float64. */
static int arg_row(dlb_dtype t) {
  int row = integer_row(t);
  if (row >= 0) return row;
  return t == DLB_FLOAT32 ? 8 : t == DLB_FLOAT64 ? 9 : -1;
}

int64_t dlb_reduce_arg_search(int is_max, dlb_dtype t, const char *p, int64_t n, int64_t stride) {
  typedef int64_t (*search)(const char *, int64_t, int64_t);
  static const search maxs[] = {argmax_int8,    argmax_int16,  argmax_int32,  argmax_int64,
                                argmax_uint8,   argmax_uint16, argmax_uint32, argmax_uint64,
                                argmax_float32, argmax_float64};
  static const search mins[] = {argmin_int8,    argmin_int16,  argmin_int32,  argmin_int64,
                                argmin_uint8,   argmin_uint16, argmin_uint32, argmin_uint64,
                                argmin_float32, argmin_float64};
  int row = arg_row(t);
  return row < 0 ? 0 : (is_max ? maxs : mins)[row](p, n, stride);
}

dlb_loop dlb_reduce_arg_update_loop(int is_max, dlb_dtype t) {
  static const dlb_loop maxs[] = {argmax_rows_int8,   argmax_rows_int16,  argmax_rows_int32,
                                  argmax_rows_int64,  argmax_rows_uint8,  argmax_rows_uint16,
                                  argmax_rows_uint32, argmax_rows_uint64, argmax_rows_float32,
                                  argmax_rows_float64};
  static const dlb_loop mins[] = {argmin_rows_int8,   argmin_rows_int16,  argmin_rows_int32,
                                  argmin_rows_int64,  argmin_rows_uint8,  argmin_rows_uint16,
                                  argmin_rows_uint32, argmin_rows_uint64, argmin_rows_float32,
                                  argmin_rows_float64};
  int row = arg_row(t);
  return row < 0 ? NULL : (is_max ? maxs : mins)[row];
}
