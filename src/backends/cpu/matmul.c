/* matmul.c -- the host's matrix products (the cpu kernels' matmul entry):
 * CBLAS for float types, blocked loops for the others.
 *
 * A call is one product description (M, N, K, the batch dims, and each
 * operand as a stack of matrices with byte strides between matrices and
 * element strides inside them), run once per batch index by the iterator.
 * An input a kernel cannot read as it is becomes a contiguous copy; a
 * destination it cannot write becomes a contiguous temporary copied into
 * place at the end. The core planned the call (compute/matmul.c): every
 * operand has the compute dtype. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "../../core/copy.h"
#include "../../core/iter.h"
#include "../../core/shape.h"
#include "../../core/work.h"
#include "../../compute/blas.h"
#include "cpu.h"

static int64_t blas_limit = INT_MAX;

int64_t dlb_matmul_set_blas_limit(int64_t limit) {
  int64_t old = blas_limit;
  blas_limit = limit;
  return old;
}

/* The kernel of one (M x K)(K x N) product. */
typedef enum kernel_kind {
  KERNEL_LOOP,   /* the plain loops: bool, integers, and sizes beyond CBLAS's int */
  KERNEL_GEMM,   /* M > 1 and N > 1 */
  KERNEL_GEMV_N, /* N == 1: a matrix times a column */
  KERNEL_GEMV_M, /* M == 1: a row times a matrix */
  KERNEL_DOT     /* M == N == 1 */
} kernel_kind;

typedef enum role { ROLE_A, ROLE_B, ROLE_C } role;

/* One operand as the kernels see it: a stack of (rows x cols) matrices. */
typedef struct matrices {
  char *data;                  /* element (0, 0) of the first matrix */
  int64_t batch[DLB_MAX_NDIM]; /* byte strides along the batch dims (0: broadcast) */
  int64_t rows, cols;
  int64_t rs, cs; /* element strides of rows and columns (free where the extent is 1) */
} matrices;

/* C = A B for every index of the batch dims, all in the loop dtype type. */
typedef struct product {
  dlb_dtype type;
  dlb_dtype
      half; /* a float16/bfloat16 result: inputs of other dtypes round to it first; else DLB_DTYPE_COUNT */
  kernel_kind kind;
  int64_t m, n, k;
  int nbatch;
  int64_t batch_shape[DLB_MAX_NDIM];
  matrices a, b, c;
} product;

static int is_blas_type(dlb_dtype t) {
  return t == DLB_FLOAT32 || t == DLB_FLOAT64 || t == DLB_COMPLEX64 || t == DLB_COMPLEX128;
}

static kernel_kind kernel_for(dlb_dtype type, int64_t m, int64_t n, int64_t k) {
  if (!is_blas_type(type) || m > blas_limit || n > blas_limit || k > blas_limit || !dlb_blas_get())
    return KERNEL_LOOP;
  if (m == 1 && n == 1) return KERNEL_DOT;
  if (n == 1) return KERNEL_GEMV_N;
  if (m == 1) return KERNEL_GEMV_M;
  return KERNEL_GEMM;
}

/* Whether p is aligned for elements of t (complex: for its parts). */
static int aligned_for(const char *p, dlb_dtype t) {
  const dlb_dtype_info *info = dlb_dtype_get(t);
  size_t align = info->kind == DLB_KIND_COMPLEX ? info->itemsize / 2 : info->itemsize;
  return (uintptr_t)p % align == 0;
}

/* Whether a (rows x cols) matrix (both >= 1) with element strides rs, cs is
 * a CBLAS matrix: row-major (cs 1, rs >= cols) or column-major (rs 1,
 * cs >= rows: *trans), with its leading dim *ld <= INT_MAX. The stride of
 * an extent-1 dim is free, so it is chosen to fit. */
static int blas_matrix(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int *trans, int *ld) {
  *trans = 0;
  *ld = 1;
  if (rows == 1) rs = cs == 1 ? cols : 1;
  if (cols == 1) cs = 1;
  if (cs == 1 && rs >= cols && rs <= INT_MAX) {
    *trans = 0;
    *ld = (int)rs;
    return 1;
  }
  if (rs == 1 && cs >= rows && cs <= INT_MAX) {
    *trans = 1;
    *ld = (int)cs;
    return 1;
  }
  return 0;
}

/* Whether n elements stride apart are a CBLAS vector: increment 1..INT_MAX
 * (any stride when n <= 1). */
static int blas_vector(int64_t n, int64_t stride, int *inc) {
  *inc = 1;
  if (n <= 1) stride = 1;
  if (stride < 1 || stride > INT_MAX) return 0;
  *inc = (int)stride;
  return 1;
}

/* Whether the kernel of kind reads (A, B) or writes (C) v as it is laid out. */
static int layout_ready(kernel_kind kind, role r, const matrices *v) {
  int trans, ld, inc;
  switch (kind) {
    case KERNEL_LOOP: /* B and C rows contiguous (the inner loop); A anything */
      return r == ROLE_A || v->cols <= 1 || v->cs == 1;
    case KERNEL_GEMM:
      if (r == ROLE_C) return v->cs == 1 && v->rs >= v->cols && v->rs <= INT_MAX;
      return blas_matrix(v->rows, v->cols, v->rs, v->cs, &trans, &ld);
    case KERNEL_GEMV_N: /* A a matrix; B and C columns */
      if (r == ROLE_A) return blas_matrix(v->rows, v->cols, v->rs, v->cs, &trans, &ld);
      return blas_vector(v->rows, v->rs, &inc);
    case KERNEL_GEMV_M: /* B a matrix; A and C rows */
      if (r == ROLE_B) return blas_matrix(v->rows, v->cols, v->rs, v->cs, &trans, &ld);
      return blas_vector(v->cols, v->cs, &inc);
    case KERNEL_DOT: /* A a row, B a column */
      if (r == ROLE_C) return 1;
      return r == ROLE_A ? blas_vector(v->cols, v->cs, &inc) : blas_vector(v->rows, v->rs, &inc);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The plain loops: C rows contiguous (crs bytes apart), B rows contiguous
 * (brs bytes apart), A at any byte strides. i-k-j order, so that the inner
 * loop is a contiguous multiply-add the compiler vectorises, blocked over k
 * and j so that a block of B stays in cache while every row of A meets it. */
/* accumulate: add to C instead of setting it (the later parts of a K
 * split: the sum along K keeps its order). */
typedef void (*loop_kernel)(char *c, int64_t crs, const char *a, int64_t ars, int64_t acs,
                            const char *b, int64_t brs, int64_t m, int64_t n, int64_t k,
                            int accumulate);

#define BLOCK_K 128
#define BLOCK_ROW_BYTES 2048 /* of a B row: a block of B is 256 KiB */

/* Sets the m rows of n elements of size item at c (crs bytes apart) to 0. */
static void zero_rows(char *c, int64_t crs, int64_t m, int64_t n, size_t item) {
  for (int64_t i = 0; i < m; i++) memset(c + i * crs, 0, (size_t)n * item);
}

/* T: the element type; U: its unsigned twin (signed integers wrap through
 * it, as NumPy's do); W: what a product is formed in (so that two uint16
 * never multiply as int, which can overflow). Floats: all three are T. */

#define NAME loop_int8
#define T int8_t
#define U uint8_t
#define W uint32_t
#include "matmul_loop.h"
#define NAME loop_uint8
#define T uint8_t
#define U uint8_t
#define W uint32_t
#include "matmul_loop.h"
#define NAME loop_int16
#define T int16_t
#define U uint16_t
#define W uint32_t
#include "matmul_loop.h"
#define NAME loop_uint16
#define T uint16_t
#define U uint16_t
#define W uint32_t
#include "matmul_loop.h"
#define NAME loop_int32
#define T int32_t
#define U uint32_t
#define W uint32_t
#include "matmul_loop.h"
#define NAME loop_uint32
#define T uint32_t
#define U uint32_t
#define W uint32_t
#include "matmul_loop.h"
#define NAME loop_int64
#define T int64_t
#define U uint64_t
#define W uint64_t
#include "matmul_loop.h"
#define NAME loop_uint64
#define T uint64_t
#define U uint64_t
#define W uint64_t
#include "matmul_loop.h"
#define NAME loop_float32
#define T float
#define U float
#define W float
#include "matmul_loop.h"
#define NAME loop_float64
#define T double
#define U double
#define W double
#include "matmul_loop.h"
#undef DEFINE_LOOP

/* Complex elements as (re, im) pairs of R: the textbook product (no C99
 * Annex G recovery of infinities, as BLAS does not either). */

#define NAME loop_complex64
#define R float
#include "matmul_complex_loop.h"
#define NAME loop_complex128
#define R double
#include "matmul_complex_loop.h"
#undef DEFINE_COMPLEX_LOOP

/* bool: C[i, j] = OR over p of (A[i, p] AND B[p, j]); any nonzero byte is true. */
static void loop_bool(char *c, int64_t crs, const char *a, int64_t ars, int64_t acs, const char *b,
                      int64_t brs, int64_t m, int64_t n, int64_t k, int accumulate) {
  if (!accumulate) zero_rows(c, crs, m, n, 1);
  for (int64_t i = 0; i < m; i++) {
    uint8_t *restrict ci = (uint8_t *)(c + i * crs);
    for (int64_t p = 0; p < k; p++) {
      const uint8_t *restrict bp = (const uint8_t *)(b + p * brs);
      if (!*(const uint8_t *)(a + i * ars + p * acs)) continue;
      for (int64_t j = 0; j < n; j++) ci[j] |= bp[j] != 0;
    }
  }
}

static loop_kernel loop_for(dlb_dtype t) {
  switch (t) {
    case DLB_BOOL: return loop_bool;
    case DLB_INT8: return loop_int8;
    case DLB_INT16: return loop_int16;
    case DLB_INT32: return loop_int32;
    case DLB_INT64: return loop_int64;
    case DLB_UINT8: return loop_uint8;
    case DLB_UINT16: return loop_uint16;
    case DLB_UINT32: return loop_uint32;
    case DLB_UINT64: return loop_uint64;
    case DLB_FLOAT32: return loop_float32;
    case DLB_FLOAT64: return loop_float64;
    case DLB_COMPLEX64: return loop_complex64;
    case DLB_COMPLEX128: return loop_complex128;
    default: return NULL; /* float16 and bfloat16 compute in float32 */
  }
}

/* ------------------------------------------------------------------------ */
/* CBLAS: every size, stride and increment was checked by layout_ready. */

static const float one_c64[2] = {1, 0}, zero_c64[2] = {0, 0};
static const double one_c128[2] = {1, 0}, zero_c128[2] = {0, 0};

/* C = A B, or C += A B with add (a later part along K). */
static void blas_gemm(const product *p, char *c, const char *a, const char *b, int add) {
  int ta, tb, lda, ldb, ldc = (int)p->c.rs, m = (int)p->m, n = (int)p->n, k = (int)p->k;
  CBLAS_TRANSPOSE opa, opb;
  blas_matrix(p->m, p->k, p->a.rs, p->a.cs, &ta, &lda);
  blas_matrix(p->k, p->n, p->b.rs, p->b.cs, &tb, &ldb);
  opa = ta ? CblasTrans : CblasNoTrans;
  opb = tb ? CblasTrans : CblasNoTrans;
  switch (p->type) {
    case DLB_FLOAT32:
      dlb_blas_get()->sgemm(CblasRowMajor, opa, opb, m, n, k, 1.0f, (const float *)a, lda,
                            (const float *)b, ldb, add ? 1.0f : 0.0f, (float *)c, ldc);
      break;
    case DLB_FLOAT64:
      dlb_blas_get()->dgemm(CblasRowMajor, opa, opb, m, n, k, 1.0, (const double *)a, lda,
                            (const double *)b, ldb, add ? 1.0 : 0.0, (double *)c, ldc);
      break;
    case DLB_COMPLEX64:
      dlb_blas_get()->cgemm(CblasRowMajor, opa, opb, m, n, k, one_c64, a, lda, b, ldb,
                            add ? one_c64 : zero_c64, c, ldc);
      break;
    default:
      dlb_blas_get()->zgemm(CblasRowMajor, opa, opb, m, n, k, one_c128, a, lda, b, ldb,
                            add ? one_c128 : zero_c128, c, ldc);
      break;
  }
}

/* y = op(M) x (y += op(M) x with add) for the matrix M (row-major, rows x
 * cols as stored). */
static void blas_gemv(dlb_dtype type, int trans, int rows, int cols, const char *mat, int ld,
                      const char *x, int incx, char *y, int incy, int add) {
  CBLAS_TRANSPOSE op = trans ? CblasTrans : CblasNoTrans;
  switch (type) {
    case DLB_FLOAT32:
      dlb_blas_get()->sgemv(CblasRowMajor, op, rows, cols, 1.0f, (const float *)mat, ld,
                            (const float *)x, incx, add ? 1.0f : 0.0f, (float *)y, incy);
      break;
    case DLB_FLOAT64:
      dlb_blas_get()->dgemv(CblasRowMajor, op, rows, cols, 1.0, (const double *)mat, ld,
                            (const double *)x, incx, add ? 1.0 : 0.0, (double *)y, incy);
      break;
    case DLB_COMPLEX64:
      dlb_blas_get()->cgemv(CblasRowMajor, op, rows, cols, one_c64, mat, ld, x, incx,
                            add ? one_c64 : zero_c64, y, incy);
      break;
    default:
      dlb_blas_get()->zgemv(CblasRowMajor, op, rows, cols, one_c128, mat, ld, x, incx,
                            add ? one_c128 : zero_c128, y, incy);
      break;
  }
}

/* N == 1: the column C = A times the column B. A column-major A is stored
 * as its transpose, row-major (K x M). */
static void blas_gemv_n(const product *p, char *c, const char *a, const char *b, int add) {
  int ta, lda, incx, incy;
  blas_matrix(p->m, p->k, p->a.rs, p->a.cs, &ta, &lda);
  blas_vector(p->k, p->b.rs, &incx);
  blas_vector(p->m, p->c.rs, &incy);
  if (ta) blas_gemv(p->type, 1, (int)p->k, (int)p->m, a, lda, b, incx, c, incy, add);
  else blas_gemv(p->type, 0, (int)p->m, (int)p->k, a, lda, b, incx, c, incy, add);
}

/* M == 1: the row C = the row A times B, that is C = B^T A. */
static void blas_gemv_m(const product *p, char *c, const char *a, const char *b, int add) {
  int tb, ldb, incx, incy;
  blas_matrix(p->k, p->n, p->b.rs, p->b.cs, &tb, &ldb);
  blas_vector(p->k, p->a.cs, &incx);
  blas_vector(p->n, p->c.cs, &incy);
  if (tb) blas_gemv(p->type, 0, (int)p->n, (int)p->k, b, ldb, a, incx, c, incy, add);
  else blas_gemv(p->type, 1, (int)p->k, (int)p->n, b, ldb, a, incx, c, incy, add);
}

static void blas_dot(const product *p, char *c, const char *a, const char *b) {
  int incx, incy, k = (int)p->k;
  blas_vector(p->k, p->a.cs, &incx);
  blas_vector(p->k, p->b.rs, &incy);
  switch (p->type) {
    case DLB_FLOAT32: {
      float r = dlb_blas_get()->sdot(k, (const float *)a, incx, (const float *)b, incy);
      memcpy(c, &r, sizeof r);
      break;
    }
    case DLB_FLOAT64: {
      double r = dlb_blas_get()->ddot(k, (const double *)a, incx, (const double *)b, incy);
      memcpy(c, &r, sizeof r);
      break;
    }
    case DLB_COMPLEX64: dlb_blas_get()->cdotu_sub(k, a, incx, b, incy, c); break;
    default: dlb_blas_get()->zdotu_sub(k, a, incx, b, incy, c); break;
  }
}

/* ------------------------------------------------------------------------ */
/* Running a product */

/* Sets every element of one C matrix to zero (K == 0). */
static void zero_matrix(const product *p, char *c) {
  size_t item = dlb_dtype_get(p->type)->itemsize;
  for (int64_t i = 0; i < p->m; i++)
    for (int64_t j = 0; j < p->n; j++)
      memset(c + (i * p->c.rs + j * p->c.cs) * (int64_t)item, 0, item);
}

/* One product of p's kind into c from a and b (accumulate: add to C, a
 * later part along K; never for KERNEL_DOT). */
static void multiply_part(const product *p, char *c, const char *a, const char *b, int accumulate) {
  int64_t item = (int64_t)dlb_dtype_get(p->type)->itemsize;
  switch (p->kind) {
    case KERNEL_LOOP:
      loop_for(p->type)(c, p->c.rs * item, a, p->a.rs * item, p->a.cs * item, b, p->b.rs * item,
                        p->m, p->n, p->k, accumulate);
      break;
    case KERNEL_GEMM: blas_gemm(p, c, a, b, accumulate); break;
    case KERNEL_GEMV_N: blas_gemv_n(p, c, a, b, accumulate); break;
    case KERNEL_GEMV_M: blas_gemv_m(p, c, a, b, accumulate); break;
    case KERNEL_DOT: blas_dot(p, c, a, b); break;
  }
}

/* Inside a bounded call (work.h) a product runs in pieces (blocks of rows,
 * columns and depth along K), a look at the host's interrupt after each,
 * of about PIECE_COST units of time each: a unit is 1/64 ns (about a
 * float32 multiply-add of BLAS's GEMM on one core here: 1024^3 of them in
 * 20 ms, float64 in 43 ms), so that a piece takes about 2 ms and the
 * interrupt is seen well within 20 ms. (GEMM's costs were 3-5x too high
 * until 2026-12: its pieces took 0.4-0.7 ms, and OpenBLAS packing A and B
 * again for each piece cost 1024^2 float64 products 10%.) The parts
 * of one element's sum along K run in order, each adding to C (BLAS's
 * beta = 1, the loops' accumulate): the loops' sums are as without
 * pieces; BLAS's may round differently, as BLAS's own blocking does. */
#define PIECE_COST ((int64_t)1 << 27)
#define MIN_BAND 128  /* BLAS pieces: rows and columns (of a GEMM) at least, as there are */
#define MIN_DEPTH 256 /* and this deep along K: BLAS still works on large panels */
/* The loops: a step of the inner loop over a row's columns costs about
 * LOOP_STEP units on top of its multiply-adds (a lone column: ~6 ns). */
#define LOOP_STEP 400

static int64_t clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* a * b, saturating (a, b >= 0). */
static int64_t times(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

/* The units of one multiply-add of p's kind and dtype (measured here, on
 * one core of a busy machine). */
static int64_t unit_cost(const product *p) {
  int64_t item = (int64_t)dlb_dtype_get(p->type)->itemsize;
  switch (p->kind) {
    case KERNEL_GEMM: /* compute-bound: float32 1, float64 3 (2.6), complex 4x their parts */
      return p->type == DLB_FLOAT32     ? 1
             : p->type == DLB_FLOAT64   ? 3
             : p->type == DLB_COMPLEX64 ? 5
                                        : 10;
    case KERNEL_LOOP:
      switch (p->type) {
        case DLB_INT32:
        case DLB_UINT32:
        case DLB_FLOAT32: return 16;
        case DLB_FLOAT64: return 40;
        case DLB_INT64:
        case DLB_UINT64:
        case DLB_COMPLEX64: return 84;
        case DLB_COMPLEX128: return 160;
        default: return 12; /* bool and the 8- and 16-bit integers */
      }
    default: return 4 * (item + item / 2); /* GEMV and DOT stream A: bandwidth-bound */
  }
}

/* The extents of one piece of p: rows, cols and depth (K). */
typedef struct piece_plan {
  int64_t rows, cols, depth;
} piece_plan;

static void plan_pieces(const product *p, piece_plan *q) {
  int64_t u = unit_cost(p);
  if (p->kind == KERNEL_LOOP) {
    /* The loops' own block of columns; the depth in the loops' blocks of K
     * (all rows meet a block of B while it is in cache), then the rows. */
    int64_t cols = BLOCK_ROW_BYTES / (int64_t)dlb_dtype_get(p->type)->itemsize;
    int64_t steps; /* (row, k) steps a piece may take */
    q->cols = clamp(cols, 1, p->n);
    steps = clamp(PIECE_COST / (LOOP_STEP + times(q->cols, u)), 1, INT64_MAX);
    q->depth = clamp(steps / p->m / BLOCK_K * BLOCK_K, BLOCK_K, p->k);
    q->rows = clamp(steps / q->depth, 1, p->m);
    return;
  }
  {
    int64_t macs = PIECE_COST / u; /* multiply-adds a piece may take */
    int64_t r0 = clamp(MIN_BAND, 1, p->m), c0 = clamp(MIN_BAND, 1, p->n), area;
    q->depth = p->k;
    if (p->k > macs / (r0 * c0))
      q->depth = clamp(macs / (r0 * c0) / MIN_DEPTH * MIN_DEPTH, MIN_DEPTH, p->k);
    area = clamp(macs / q->depth, r0 * c0, INT64_MAX);
    if (times(p->m, p->n) <= area) {
      q->rows = p->m, q->cols = p->n;
    } else if (times(p->n, r0) <= area) { /* bands of whole rows */
      q->cols = p->n, q->rows = clamp(area / p->n, r0, p->m);
    } else { /* square-ish: BLAS packs a piece's rows of A and columns of B */
      q->rows = clamp((int64_t)sqrt((double)area), r0, p->m);
      q->cols = clamp(area / q->rows, c0, p->n);
    }
  }
}

/* The piece of p at row r, column j and depth k0 (extents from q, cut at
 * p's edges) into c from a and b. */
static void run_piece(const product *p, const piece_plan *q, char *c, const char *a, const char *b,
                      int64_t r, int64_t j, int64_t k0) {
  int64_t item = (int64_t)dlb_dtype_get(p->type)->itemsize;
  product x = *p;
  x.m = p->m - r < q->rows ? p->m - r : q->rows;
  x.n = p->n - j < q->cols ? p->n - j : q->cols;
  x.k = p->k - k0 < q->depth ? p->k - k0 : q->depth;
  multiply_part(&x, c + (r * p->c.rs + j * p->c.cs) * item, a + (r * p->a.rs + k0 * p->a.cs) * item,
                b + (k0 * p->b.rs + j * p->b.cs) * item, k0 > 0);
}

/* The multiply-adds of the piece at (r, j, k0). */
static int64_t piece_work(const product *p, const piece_plan *q, int64_t r, int64_t j, int64_t k0) {
  int64_t m = p->m - r < q->rows ? p->m - r : q->rows;
  int64_t n = p->n - j < q->cols ? p->n - j : q->cols;
  return times(times(m, n), p->k - k0 < q->depth ? p->k - k0 : q->depth);
}

/* A product in pieces: the loops by blocks of columns, then depth, then
 * rows (their own order); BLAS by rows, columns, then depth (one block of
 * C takes its parts along K in a row). */
static int product_in_pieces(const product *p, char *c, const char *a, const char *b,
                             dlb_work *work) {
  piece_plan q;
  plan_pieces(p, &q);
  if (p->kind == KERNEL_LOOP) {
    for (int64_t j = 0; j < p->n; j += q.cols)
      for (int64_t k0 = 0; k0 < p->k; k0 += q.depth)
        for (int64_t r = 0; r < p->m; r += q.rows) {
          run_piece(p, &q, c, a, b, r, j, k0);
          if (dlb_work_tick(work, piece_work(p, &q, r, j, k0))) return DLB_ITER_STOPPED;
        }
    return 0;
  }
  for (int64_t r = 0; r < p->m; r += q.rows)
    for (int64_t j = 0; j < p->n; j += q.cols)
      for (int64_t k0 = 0; k0 < p->k; k0 += q.depth) {
        run_piece(p, &q, c, a, b, r, j, k0);
        if (dlb_work_tick(work, piece_work(p, &q, r, j, k0))) return DLB_ITER_STOPPED;
      }
  return 0;
}

/* M == N == 1 by BLAS: partial dot products along K, added up (the first
 * one as it is: a -0.0 stays). */
static int dot_in_parts(const product *p, char *c, const char *a, const char *b, dlb_work *work) {
  int64_t item = (int64_t)dlb_dtype_get(p->type)->itemsize, part = PIECE_COST / unit_cost(p);
  double sum[2] = {0, 0};
  float sum32[2] = {0, 0};
  if (p->k <= part) { /* one part: BLAS's own result */
    multiply_part(p, c, a, b, 0);
    return dlb_work_tick(work, p->k) ? DLB_ITER_STOPPED : 0;
  }
  for (int64_t k0 = 0; k0 < p->k; k0 += part) {
    product q = *p;
    unsigned char bytes[16];
    q.k = p->k - k0 < part ? p->k - k0 : part;
    multiply_part(&q, (char *)bytes, a + k0 * p->a.cs * item, b + k0 * p->b.rs * item, 0);
    if (p->type == DLB_FLOAT32 || p->type == DLB_COMPLEX64) {
      float v[2] = {0, 0};
      memcpy(v, bytes, (size_t)item);
      if (k0 == 0) sum32[0] = v[0], sum32[1] = v[1];
      else sum32[0] += v[0], sum32[1] += v[1];
    } else {
      double v[2] = {0, 0};
      memcpy(v, bytes, (size_t)item);
      if (k0 == 0) sum[0] = v[0], sum[1] = v[1];
      else sum[0] += v[0], sum[1] += v[1];
    }
    if (dlb_work_tick(work, q.k)) return DLB_ITER_STOPPED;
  }
  if (p->type == DLB_FLOAT32 || p->type == DLB_COMPLEX64) memcpy(c, sum32, (size_t)item);
  else memcpy(c, sum, (size_t)item);
  return 0;
}

/* The iterator's body: one product, with data = {C, A, B} at a batch index;
 * in parts inside a bounded call. */
static int multiply_one(char **data, void *aux) {
  const product *p = aux;
  dlb_work *work = dlb_work_current();
  if (p->k == 0) {
    zero_matrix(p, data[0]);
    return 0;
  }
  if (!work) {
    multiply_part(p, data[0], data[1], data[2], 0);
    return 0;
  }
  if (p->kind == KERNEL_DOT) return dot_in_parts(p, data[0], data[1], data[2], work);
  return product_in_pieces(p, data[0], data[1], data[2], work);
}

static void run_product(const product *p) {
  dlb_iter it;
  char *data[3] = {p->c.data, p->a.data, p->b.data};
  const int64_t *strides[3] = {p->c.batch, p->a.batch, p->b.batch};
  if (p->m == 0 || p->n == 0) return;
  dlb_iter_init(&it, 3, p->nbatch, p->batch_shape, data, strides);
  dlb_iter_each(&it, 0, multiply_one, (void *)p);
}

/* A contiguous copy of x in dtype type on the cpu backend. The first
 * nbatch dims of x broadcast: those x repeats (stride 0, as an expanded
 * view) are copied once, as extent 1. */
static dlb_status copy_input(const dlb_array *x, int nbatch, dlb_dtype type, dlb_dtype half,
                             dlb_backend *cpu, dlb_array *copy, dlb_error *err) {
  dlb_array v = *x, rounded; /* borrowed: x's buffer outlives the copy below */
  dlb_status st;
  v.numel = 1;
  rounded.buffer = NULL;
  for (int d = 0; d < v.ndim; d++) {
    if (d < nbatch && v.strides[d] == 0) v.shape[d] = 1;
    v.numel *= v.shape[d]; /* at most x's numel */
  }
  if (half != DLB_DTYPE_COUNT && x->dtype != half) { /* as NumPy's astype(half) first */
    if ((st = dlb_array_allocate(&rounded, cpu, 0, half, v.ndim, v.shape, 0, err)) != DLB_OK)
      return st;
    if ((st = dlb_array_copy_into(&rounded, &v, err)) != DLB_OK) {
      dlb_array_release(&rounded);
      return st;
    }
  }
  if ((st = dlb_array_allocate(copy, cpu, 0, type, v.ndim, v.shape, 0, err)) == DLB_OK &&
      (st = dlb_array_copy_into(copy, rounded.buffer ? &rounded : &v, err)) != DLB_OK)
    dlb_array_release(copy);
  dlb_array_release(&rounded);
  return st;
}

/* Whether the product reads no input element (an empty result, or K == 0). */
static int inputs_unread(const product *p) {
  if (p->m == 0 || p->n == 0 || p->k == 0) return 1;
  for (int d = 0; d < p->nbatch; d++)
    if (p->batch_shape[d] == 0) return 1;
  return 0;
}

/* Whether the kernel reads the input x, seen as v, without a copy. */
static int input_ready(const product *p, const dlb_array *x, const matrices *v, role r) {
  return x->dtype == p->type && p->half == DLB_DTYPE_COUNT && aligned_for(v->data, p->type) &&
         layout_ready(p->kind, r, v);
}

/* A borrowed host array over a kernel tensor (its buffer on the stack: no
 * reference, no backend; the host's kernels read and write it). */
typedef struct host_view {
  dlb_buffer buffer;
  dlb_array array;
} host_view;

static void host_view_of(const dlb_tensor *t, host_view *v) {
  memset(v, 0, sizeof *v);
  v->buffer.host = (char *)t->data;
  atomic_init(&v->buffer.refs, 1);
  v->array.buffer = &v->buffer;
  dlb_dtype_from_dl(t->dtype, &v->array.dtype);
  v->array.ndim = t->ndim;
  v->array.numel = 1;
  for (int d = 0; d < t->ndim; d++) {
    v->array.shape[d] = t->shape[d];
    v->array.strides[d] = t->strides[d];
    v->array.numel *= t->shape[d]; /* the core's shapes: they fit */
  }
}

/* x (an operand of the call, (..., rows, cols)) as a stack of matrices. */
static void matrices_of(const dlb_array *x, int nbatch, matrices *v) {
  int64_t item = (int64_t)dlb_array_itemsize(x);
  v->data = dlb_array_host_data(x);
  for (int d = 0; d < nbatch; d++) v->batch[d] = x->shape[d] == 1 ? 0 : x->strides[d] * item;
  v->rows = x->shape[nbatch];
  v->cols = x->shape[nbatch + 1];
  v->rs = x->strides[nbatch];
  v->cs = x->strides[nbatch + 1];
}

/* Points *v at x, or at a contiguous copy of it in *copy when the kernel
 * cannot read x as it is. */
static dlb_status ready_input(const product *p, const dlb_array *x, role r, dlb_backend *scratch,
                              dlb_array *copy, matrices *v, dlb_error *err) {
  dlb_status st;
  matrices_of(x, p->nbatch, v);
  if (inputs_unread(p) || input_ready(p, x, v, r)) return DLB_OK;
  if ((st = copy_input(x, p->nbatch, p->type, DLB_DTYPE_COUNT, scratch, copy, err)) != DLB_OK)
    return st;
  matrices_of(copy, p->nbatch, v);
  return DLB_OK;
}

static dlb_status matmul_host(dlb_backend *scratch, dlb_matmul_call *call, dlb_error *err) {
  host_view a, b, c;
  dlb_array ca = {0}, cb = {0}, tmp = {0};
  product p;
  int nb;
  dlb_status st = DLB_OK;
  host_view_of(&call->a, &a);
  host_view_of(&call->b, &b);
  host_view_of(&call->out, &c);
  nb = a.array.ndim - 2;
  memset(&p, 0, sizeof p);
  dlb_dtype_from_dl(call->compute, &p.type);
  p.half = DLB_DTYPE_COUNT;
  p.m = a.array.shape[nb];
  p.k = a.array.shape[nb + 1];
  p.n = b.array.shape[nb + 1];
  p.nbatch = nb;
  for (int d = 0; d < nb; d++) p.batch_shape[d] = c.array.shape[d];
  p.kind = kernel_for(p.type, p.m, p.n, p.k);
  if ((st = ready_input(&p, &a.array, ROLE_A, scratch, &ca, &p.a, err)) == DLB_OK &&
      (st = ready_input(&p, &b.array, ROLE_B, scratch, &cb, &p.b, err)) == DLB_OK) {
    matrices_of(&c.array, nb, &p.c);
    if (!aligned_for(p.c.data, p.type) || !layout_ready(p.kind, ROLE_C, &p.c)) {
      st = dlb_array_allocate(&tmp, scratch, 0, p.type, c.array.ndim, c.array.shape, 0, err);
      if (st == DLB_OK) matrices_of(&tmp, nb, &p.c);
    }
    if (st == DLB_OK) run_product(&p);
    if (st == DLB_OK && tmp.buffer) st = dlb_array_copy_into(&c.array, &tmp, err);
  }
  dlb_array_release(&tmp);
  dlb_array_release(&ca);
  dlb_array_release(&cb);
  return st;
}

/* The kernel: ctx is the state's cpu backend (temporaries there) or NULL. */
dlb_status dlb_cpu_matmul(void *ctx, dlb_matmul_call *call) {
  dlb_error err;
  dlb_status st = matmul_host(ctx ? (dlb_backend *)ctx : dlb_cpu_scratch_backend(), call, &err);
  if (st != DLB_OK) dlb_kernel_error_from(&call->error, &err);
  return st;
}
