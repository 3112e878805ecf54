/* matmul.c -- matmul and dot: the shape rules, the operands made readable
 * for a kernel, and the kernels (CBLAS for float types, blocked loops for
 * the others).
 *
 * A call is one product description (M, N, K, the batch dims, and each
 * operand as a stack of matrices with byte strides between matrices and
 * element strides inside them), run once per batch index by the iterator.
 * An input a kernel cannot read as it is becomes a contiguous copy in the
 * loop dtype; a destination it cannot write becomes a contiguous temporary
 * that is copied (and cast) into place at the end. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "../core/copy.h"
#include "../core/work.h"
#include "../core/iter.h"
#include "../core/shape.h"
#include "../backends/cpu/blas.h"
#include "matmul.h"

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
  dlb_dtype half; /* a float16/bfloat16 result: inputs of other dtypes round to it first; else DLB_DTYPE_COUNT */
  kernel_kind kind;
  int64_t m, n, k;
  int nbatch;
  int64_t batch_shape[DLB_MAX_NDIM];
  matrices a, b, c;
} product;

/* Where the rows, columns and batch dims of C are among the result's dims. */
typedef struct result_layout {
  int first_batch; /* the result dim of batch dim 0 */
  int row_dim;     /* -1: a was a vector (no row dim in the result) */
  int col_dim;     /* -1: b was a vector */
} result_layout;

/* "(2, 3)" into out. */
static void shape_text(const dlb_array *a, char *out, size_t size) {
  size_t len = (size_t)snprintf(out, size, "(");
  for (int d = 0; d < a->ndim && len < size; d++)
    len += (size_t)snprintf(out + len, size - len, d ? ", %lld" : "%lld", (long long)a->shape[d]);
  if (len < size) snprintf(out + len, size - len, ")");
}

static int is_blas_type(dlb_dtype t) {
  return t == DLB_FLOAT32 || t == DLB_FLOAT64 || t == DLB_COMPLEX64 || t == DLB_COMPLEX128;
}

static kernel_kind kernel_for(dlb_dtype type, int64_t m, int64_t n, int64_t k) {
  if (!is_blas_type(type) || m > blas_limit || n > blas_limit || k > blas_limit ||
      !dlb_blas_get())
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
                            const char *b, int64_t brs, int64_t m, int64_t n, int64_t k, int accumulate);

#define BLOCK_K 128
#define BLOCK_ROW_BYTES 2048 /* of a B row: a block of B is 256 KiB */

/* Sets the m rows of n elements of size item at c (crs bytes apart) to 0. */
static void zero_rows(char *c, int64_t crs, int64_t m, int64_t n, size_t item) {
  for (int64_t i = 0; i < m; i++) memset(c + i * crs, 0, (size_t)n * item);
}

/* T: the element type; U: its unsigned twin (signed integers wrap through
 * it, as NumPy's do); W: what a product is formed in (so that two uint16
 * never multiply as int, which can overflow). Floats: all three are T. */
#define DEFINE_LOOP(NAME, T, U, W)                                                           \
  DLB_KERNEL_CLONES static void NAME(char *c, int64_t crs, const char *a, int64_t ars,       \
                                     int64_t acs, const char *b, int64_t brs, int64_t m,     \
                                     int64_t n, int64_t k, int accumulate) {                 \
    const int64_t block_n = BLOCK_ROW_BYTES / (int64_t)sizeof(T);                            \
    if (!accumulate) zero_rows(c, crs, m, n, sizeof(T));                                     \
    for (int64_t j0 = 0; j0 < n; j0 += block_n) {                                            \
      int64_t jn = n - j0 < block_n ? n - j0 : block_n;                                      \
      for (int64_t k0 = 0; k0 < k; k0 += BLOCK_K) {                                          \
        int64_t k1 = k - k0 < BLOCK_K ? k : k0 + BLOCK_K;                                    \
        for (int64_t i = 0; i < m; i++) {                                                    \
          U *restrict ci = (U *)(c + i * crs) + j0;                                          \
          for (int64_t p = k0; p < k1; p++) {                                                \
            const W aip = (W)(U)(*(const T *)(a + i * ars + p * acs));                     \
            const U *restrict bp = (const U *)(b + p * brs) + j0;                            \
            for (int64_t j = 0; j < jn; j++) ci[j] = (U)(ci[j] + aip * (W)bp[j]);            \
          }                                                                                  \
        }                                                                                    \
      }                                                                                      \
    }                                                                                        \
  }

DEFINE_LOOP(loop_int8, int8_t, uint8_t, uint32_t)
DEFINE_LOOP(loop_uint8, uint8_t, uint8_t, uint32_t)
DEFINE_LOOP(loop_int16, int16_t, uint16_t, uint32_t)
DEFINE_LOOP(loop_uint16, uint16_t, uint16_t, uint32_t)
DEFINE_LOOP(loop_int32, int32_t, uint32_t, uint32_t)
DEFINE_LOOP(loop_uint32, uint32_t, uint32_t, uint32_t)
DEFINE_LOOP(loop_int64, int64_t, uint64_t, uint64_t)
DEFINE_LOOP(loop_uint64, uint64_t, uint64_t, uint64_t)
DEFINE_LOOP(loop_float32, float, float, float)
DEFINE_LOOP(loop_float64, double, double, double)
#undef DEFINE_LOOP

/* Complex elements as (re, im) pairs of R: the textbook product (no C99
 * Annex G recovery of infinities, as BLAS does not either). */
#define DEFINE_COMPLEX_LOOP(NAME, R)                                                        \
  static void NAME(char *c, int64_t crs, const char *a, int64_t ars, int64_t acs,           \
                   const char *b, int64_t brs, int64_t m, int64_t n, int64_t k,             \
                   int accumulate) {                                                        \
    if (!accumulate) zero_rows(c, crs, m, n, 2 * sizeof(R));                                \
    for (int64_t i = 0; i < m; i++) {                                                       \
      R *restrict ci = (R *)(c + i * crs);                                                  \
      for (int64_t p = 0; p < k; p++) {                                                     \
        const R *aip = (const R *)(a + i * ars + p * acs), ar = aip[0], ai = aip[1];        \
        const R *restrict bp = (const R *)(b + p * brs);                                    \
        for (int64_t j = 0; j < n; j++) {                                                   \
          ci[2 * j] += ar * bp[2 * j] - ai * bp[2 * j + 1];                                 \
          ci[2 * j + 1] += ar * bp[2 * j + 1] + ai * bp[2 * j];                             \
        }                                                                                   \
      }                                                                                     \
    }                                                                                       \
  }

DEFINE_COMPLEX_LOOP(loop_complex64, float)
DEFINE_COMPLEX_LOOP(loop_complex128, double)
#undef DEFINE_COMPLEX_LOOP

/* bool: C[i, j] = OR over p of (A[i, p] AND B[p, j]); any nonzero byte is true. */
static void loop_bool(char *c, int64_t crs, const char *a, int64_t ars, int64_t acs,
                      const char *b, int64_t brs, int64_t m, int64_t n, int64_t k,
                      int accumulate) {
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

static void blas_gemm(const product *p, char *c, const char *a, const char *b) {
  int ta, tb, lda, ldb, ldc = (int)p->c.rs, m = (int)p->m, n = (int)p->n, k = (int)p->k;
  CBLAS_TRANSPOSE opa, opb;
  blas_matrix(p->m, p->k, p->a.rs, p->a.cs, &ta, &lda);
  blas_matrix(p->k, p->n, p->b.rs, p->b.cs, &tb, &ldb);
  opa = ta ? CblasTrans : CblasNoTrans;
  opb = tb ? CblasTrans : CblasNoTrans;
  switch (p->type) {
    case DLB_FLOAT32:
      dlb_blas_get()->sgemm(CblasRowMajor, opa, opb, m, n, k, 1.0f, (const float *)a, lda,
                  (const float *)b, ldb, 0.0f, (float *)c, ldc);
      break;
    case DLB_FLOAT64:
      dlb_blas_get()->dgemm(CblasRowMajor, opa, opb, m, n, k, 1.0, (const double *)a, lda,
                  (const double *)b, ldb, 0.0, (double *)c, ldc);
      break;
    case DLB_COMPLEX64:
      dlb_blas_get()->cgemm(CblasRowMajor, opa, opb, m, n, k, one_c64, a, lda, b, ldb, zero_c64, c, ldc);
      break;
    default:
      dlb_blas_get()->zgemm(CblasRowMajor, opa, opb, m, n, k, one_c128, a, lda, b, ldb, zero_c128, c, ldc);
      break;
  }
}

/* y = op(M) x for the matrix M (row-major, rows x cols as stored). */
static void blas_gemv(dlb_dtype type, int trans, int rows, int cols, const char *mat, int ld,
                      const char *x, int incx, char *y, int incy) {
  CBLAS_TRANSPOSE op = trans ? CblasTrans : CblasNoTrans;
  switch (type) {
    case DLB_FLOAT32:
      dlb_blas_get()->sgemv(CblasRowMajor, op, rows, cols, 1.0f, (const float *)mat, ld, (const float *)x,
                  incx, 0.0f, (float *)y, incy);
      break;
    case DLB_FLOAT64:
      dlb_blas_get()->dgemv(CblasRowMajor, op, rows, cols, 1.0, (const double *)mat, ld, (const double *)x,
                  incx, 0.0, (double *)y, incy);
      break;
    case DLB_COMPLEX64:
      dlb_blas_get()->cgemv(CblasRowMajor, op, rows, cols, one_c64, mat, ld, x, incx, zero_c64, y, incy);
      break;
    default:
      dlb_blas_get()->zgemv(CblasRowMajor, op, rows, cols, one_c128, mat, ld, x, incx, zero_c128, y, incy);
      break;
  }
}

/* N == 1: the column C = A times the column B. A column-major A is stored
 * as its transpose, row-major (K x M). */
static void blas_gemv_n(const product *p, char *c, const char *a, const char *b) {
  int ta, lda, incx, incy;
  blas_matrix(p->m, p->k, p->a.rs, p->a.cs, &ta, &lda);
  blas_vector(p->k, p->b.rs, &incx);
  blas_vector(p->m, p->c.rs, &incy);
  if (ta)
    blas_gemv(p->type, 1, (int)p->k, (int)p->m, a, lda, b, incx, c, incy);
  else
    blas_gemv(p->type, 0, (int)p->m, (int)p->k, a, lda, b, incx, c, incy);
}

/* M == 1: the row C = the row A times B, that is C = B^T A. */
static void blas_gemv_m(const product *p, char *c, const char *a, const char *b) {
  int tb, ldb, incx, incy;
  blas_matrix(p->k, p->n, p->b.rs, p->b.cs, &tb, &ldb);
  blas_vector(p->k, p->a.cs, &incx);
  blas_vector(p->n, p->c.cs, &incy);
  if (tb)
    blas_gemv(p->type, 0, (int)p->n, (int)p->k, b, ldb, a, incx, c, incy);
  else
    blas_gemv(p->type, 1, (int)p->k, (int)p->n, b, ldb, a, incx, c, incy);
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

/* One product of p's kind into c from a and b (accumulate: the loops add
 * to C, a later part of a K split). */
static void multiply_part(const product *p, char *c, const char *a, const char *b,
                          int accumulate) {
  int64_t item = (int64_t)dlb_dtype_get(p->type)->itemsize;
  switch (p->kind) {
    case KERNEL_LOOP:
      loop_for(p->type)(c, p->c.rs * item, a, p->a.rs * item, p->a.cs * item, b, p->b.rs * item,
                        p->m, p->n, p->k, accumulate);
      break;
    case KERNEL_GEMM: blas_gemm(p, c, a, b); break;
    case KERNEL_GEMV_N: blas_gemv_n(p, c, a, b); break;
    case KERNEL_GEMV_M: blas_gemv_m(p, c, a, b); break;
    case KERNEL_DOT: blas_dot(p, c, a, b); break;
  }
}

/* Inside a bounded call (work.h) a product runs in parts of about
 * PART_WORK multiply-adds, a look at the host's interrupt after each:
 * about a tenth of a second of one core's BLAS. Parts of a BLAS product
 * have at least MIN_BAND rows, so that BLAS still works on large panels. */
#define PART_WORK ((int64_t)1 << 28)
#define MIN_BAND 128

static int64_t clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* a * b, saturating (a, b >= 0). */
static int64_t times(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

/* C += (or =) A B in parts along K (the loops; sums keep their order). */
static int loop_in_k_parts(const product *p, char *c, const char *a, const char *b,
                           dlb_work *work) {
  int64_t item = (int64_t)dlb_dtype_get(p->type)->itemsize;
  int64_t part = clamp(PART_WORK / times(p->m, p->n) / BLOCK_K * BLOCK_K, BLOCK_K, p->k);
  for (int64_t k0 = 0; k0 < p->k; k0 += part) {
    product q = *p;
    q.k = p->k - k0 < part ? p->k - k0 : part;
    multiply_part(&q, c, a + k0 * p->a.cs * item, b + k0 * p->b.rs * item, k0 > 0);
    if (dlb_work_tick(work, times(times(q.m, q.n), q.k))) return DLB_ITER_STOPPED;
  }
  return 0;
}

/* A product in bands of rows of C (GEMM, GEMV_N, the loops). */
static int rows_in_parts(const product *p, char *c, const char *a, const char *b,
                         dlb_work *work) {
  int64_t item = (int64_t)dlb_dtype_get(p->type)->itemsize, per_row = times(p->n, p->k);
  int64_t band = clamp(PART_WORK / per_row, p->kind == KERNEL_LOOP ? 1 : MIN_BAND, p->m);
  for (int64_t r = 0; r < p->m; r += band) {
    product q = *p;
    char *cr = c + r * p->c.rs * item;
    const char *ar = a + r * p->a.rs * item;
    q.m = p->m - r < band ? p->m - r : band;
    if (q.kind == KERNEL_LOOP) {
      int st = loop_in_k_parts(&q, cr, ar, b, work);
      if (st) return st;
      continue;
    }
    multiply_part(&q, cr, ar, b, 0);
    if (dlb_work_tick(work, times(q.m, per_row))) return DLB_ITER_STOPPED;
  }
  return 0;
}

/* M == 1 by BLAS: the row C in parts of its columns. */
static int columns_in_parts(const product *p, char *c, const char *a, const char *b,
                            dlb_work *work) {
  int64_t item = (int64_t)dlb_dtype_get(p->type)->itemsize;
  int64_t part = clamp(PART_WORK / p->k, MIN_BAND, p->n);
  for (int64_t j = 0; j < p->n; j += part) {
    product q = *p;
    q.n = p->n - j < part ? p->n - j : part;
    multiply_part(&q, c + j * p->c.cs * item, a, b + j * p->b.cs * item, 0);
    if (dlb_work_tick(work, times(q.n, p->k))) return DLB_ITER_STOPPED;
  }
  return 0;
}

/* M == N == 1 by BLAS: partial dot products along K, added up. */
static int dot_in_parts(const product *p, char *c, const char *a, const char *b,
                        dlb_work *work) {
  int64_t item = (int64_t)dlb_dtype_get(p->type)->itemsize;
  double sum[2] = {0, 0};
  float sum32[2] = {0, 0};
  if (p->k <= PART_WORK) { /* one part: BLAS's own result, -0.0 included */
    multiply_part(p, c, a, b, 0);
    return dlb_work_tick(work, p->k) ? DLB_ITER_STOPPED : 0;
  }
  for (int64_t k0 = 0; k0 < p->k; k0 += PART_WORK) {
    product q = *p;
    unsigned char part[16];
    q.k = p->k - k0 < PART_WORK ? p->k - k0 : PART_WORK;
    multiply_part(&q, (char *)part, a + k0 * p->a.cs * item, b + k0 * p->b.rs * item, 0);
    if (p->type == DLB_FLOAT32 || p->type == DLB_COMPLEX64) {
      float v[2] = {0, 0};
      memcpy(v, part, (size_t)item);
      sum32[0] += v[0], sum32[1] += v[1];
    } else {
      double v[2] = {0, 0};
      memcpy(v, part, (size_t)item);
      sum[0] += v[0], sum[1] += v[1];
    }
    if (dlb_work_tick(work, q.k)) return DLB_ITER_STOPPED;
  }
  if (p->type == DLB_FLOAT32 || p->type == DLB_COMPLEX64)
    memcpy(c, sum32, (size_t)item);
  else
    memcpy(c, sum, (size_t)item);
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
  switch (p->kind) {
    case KERNEL_DOT: return dot_in_parts(p, data[0], data[1], data[2], work);
    case KERNEL_GEMV_M: return columns_in_parts(p, data[0], data[1], data[2], work);
    default: return rows_in_parts(p, data[0], data[1], data[2], work);
  }
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

/* C, the result r (shape: the result's) seen as a stack of matrices. */
static void result_view(const dlb_array *r, const product *p, const result_layout *l,
                        matrices *v) {
  int64_t item = (int64_t)dlb_array_itemsize(r);
  v->data = dlb_array_host_data(r);
  for (int d = 0; d < p->nbatch; d++) v->batch[d] = r->strides[l->first_batch + d] * item;
  v->rows = p->m;
  v->cols = p->n;
  v->rs = l->row_dim < 0 ? 0 : r->strides[l->row_dim];
  v->cs = l->col_dim < 0 ? 0 : r->strides[l->col_dim];
}

/* The multiply-adds of p (saturating): what the host's work limit counts. */
static int64_t product_work(const product *p) {
  int64_t w = p->m;
  if (__builtin_mul_overflow(w, p->n, &w) || __builtin_mul_overflow(w, p->k, &w)) return INT64_MAX;
  for (int d = 0; d < p->nbatch; d++)
    if (__builtin_mul_overflow(w, p->batch_shape[d], &w)) return INT64_MAX;
  return w;
}

/* Runs p (inputs ready) into out: a new array of result_type on where when
 * out->buffer is NULL, else the given out. In a temporary first when out
 * has another dtype, a layout the kernel cannot write, or overlaps the
 * inputs a or b. */
static dlb_status multiply_into(product *p, const dlb_array *a, const dlb_array *b,
                                dlb_array *out, dlb_dtype result_type, int rndim,
                                const int64_t *rshape, const result_layout *l,
                                const dlb_placement *where, dlb_backend *cpu, dlb_error *err) {
  dlb_array fresh = {0}, tmp = {0};
  dlb_array *dest = out;
  int given = out->buffer != NULL;
  dlb_work w;
  dlb_status st = dlb_work_begin(&w, where->backend->budget, product_work(p), "matmul", err);
  if (st != DLB_OK) return st;
  if (!given) {
    st = dlb_array_allocate(&fresh, where->backend, where->device_id, result_type, rndim, rshape,
                            0, err);
    if (st != DLB_OK) return dlb_work_end(&w, st, "matmul", err);
    dest = &fresh;
  }
  result_view(dest, p, l, &p->c);
  if (dest->dtype != p->type || !aligned_for(p->c.data, p->type) ||
      !layout_ready(p->kind, ROLE_C, &p->c) ||
      (given && (dlb_arrays_overlap(dest, a) || dlb_arrays_overlap(dest, b)))) {
    st = dlb_array_allocate(&tmp, cpu, 0, p->type, rndim, rshape, 0, err);
    if (st != DLB_OK) goto done;
    result_view(&tmp, p, l, &p->c);
  }
  run_product(p);
  if (tmp.buffer) st = dlb_array_copy_into(dest, &tmp, err);
done:
  st = dlb_work_end(&w, st, "matmul", err);
  dlb_array_release(&tmp);
  if (st == DLB_OK && !given)
    *out = fresh;
  else
    dlb_array_release(&fresh);
  return st;
}

/* ------------------------------------------------------------------------ */
/* matmul */

static dlb_status zero_d_operand(const char *op, dlb_error *err) {
  dlb_fail(err, DLB_E_SHAPE, "%s: a 0-d operand has no dims to multiply", op);
  dlb_error_hint(err, "multiply by a scalar element-wise (a * x) instead");
  return DLB_E_SHAPE;
}

/* M, N, K and the batch dims of matmul(a, b), and the result's shape. */
static dlb_status matmul_shapes(const dlb_array *a, const dlb_array *b, product *p, int *rndim,
                                int64_t *rshape, dlb_error *err) {
  int a_vec = a->ndim == 1, b_vec = b->ndim == 1, na, nb, nd = 0;
  char sa[160], sb[160];
  if (a->ndim == 0 || b->ndim == 0) return zero_d_operand("matmul", err);
  p->k = a->shape[a->ndim - 1];
  p->m = a_vec ? 1 : a->shape[a->ndim - 2];
  p->n = b_vec ? 1 : b->shape[b->ndim - 1];
  if (p->k != (b_vec ? b->shape[0] : b->shape[b->ndim - 2])) {
    shape_text(a, sa, sizeof sa);
    shape_text(b, sb, sizeof sb);
    dlb_fail(err, DLB_E_SHAPE, "matmul: shapes %s and %s do not multiply: %lld columns against %lld rows", sa,
             sb, (long long)p->k, (long long)(b_vec ? b->shape[0] : b->shape[b->ndim - 2]));
    dlb_error_hint(err, "(..., M, K) times (..., K, N): the last dim of a must equal the "
                        "second-to-last of b (a:T() swaps the dims of a matrix)");
    return DLB_E_SHAPE;
  }
  na = a->ndim > 2 ? a->ndim - 2 : 0;
  nb = b->ndim > 2 ? b->ndim - 2 : 0;
  p->nbatch = na > nb ? na : nb;
  for (int d = 0; d < p->nbatch; d++) p->batch_shape[d] = 1;
  for (int k = 0; k < 2; k++) {
    const dlb_array *x = k ? b : a;
    int nx = k ? nb : na;
    for (int d = 0; d < nx; d++) {
      int64_t e = x->shape[d], *r = &p->batch_shape[p->nbatch - nx + d];
      if (e == *r || e == 1) continue;
      if (*r != 1) {
        shape_text(a, sa, sizeof sa);
        shape_text(b, sb, sizeof sb);
        dlb_fail(err, DLB_E_SHAPE, "matmul: the batch dims of shapes %s and %s do not broadcast",
                 sa, sb);
        dlb_error_hint(err, "the dims before the last two broadcast as in NumPy: equal "
                            "extents, or 1 on either side");
        return DLB_E_SHAPE;
      }
      *r = e;
    }
  }
  for (int d = 0; d < p->nbatch; d++) rshape[nd++] = p->batch_shape[d];
  if (!a_vec) rshape[nd++] = p->m;
  if (!b_vec) rshape[nd++] = p->n;
  *rndim = nd;
  return DLB_OK;
}

/* x (a or b of matmul) as a stack of matrices over p's batch dims: its last
 * two dims, or for a 1-D x a row (a) or a column (b); its leading dims broadcast. */
static void matmul_view(const dlb_array *x, role r, const product *p, matrices *v) {
  int64_t item = (int64_t)dlb_array_itemsize(x);
  int nx = x->ndim > 2 ? x->ndim - 2 : 0, nd = x->ndim;
  v->data = dlb_array_host_data(x);
  for (int d = 0; d < p->nbatch; d++) {
    int s = d - (p->nbatch - nx);
    v->batch[d] = s < 0 || x->shape[s] == 1 ? 0 : x->strides[s] * item;
  }
  if (nd == 1 && r == ROLE_A) {
    v->rows = 1, v->cols = x->shape[0], v->rs = 0, v->cs = x->strides[0];
  } else if (nd == 1) {
    v->rows = x->shape[0], v->cols = 1, v->rs = x->strides[0], v->cs = 0;
  } else {
    v->rows = x->shape[nd - 2], v->cols = x->shape[nd - 1];
    v->rs = x->strides[nd - 2], v->cs = x->strides[nd - 1];
  }
}

/* Points p->a (r ROLE_A) or p->b at x, or at a copy of x in *copy. */
static dlb_status matmul_input(product *p, const dlb_array *x, role r, dlb_backend *cpu,
                               dlb_array *copy, dlb_error *err) {
  matrices *v = r == ROLE_A ? &p->a : &p->b;
  dlb_status st;
  matmul_view(x, r, p, v);
  if (inputs_unread(p) || input_ready(p, x, v, r)) return DLB_OK;
  if ((st = copy_input(x, x->ndim - 2, p->type, p->half, cpu, copy, err)) != DLB_OK) return st;
  matmul_view(copy, r, p, v);
  return DLB_OK;
}

/* Which dtype matmul computes and returns (dtype or the promotion). */
static dlb_status matmul_type(const dlb_array *a, const dlb_array *b, dlb_dtype dtype,
                              dlb_dtype *result, dlb_error *err) {
  if (dtype == DLB_MATMUL_PROMOTE) {
    *result = dlb_promote_types(a->dtype, b->dtype);
    return DLB_OK;
  }
  if ((unsigned)dtype >= DLB_DTYPE_COUNT) return dlb_fail(err, DLB_E_DTYPE, "matmul: invalid dtype");
  for (int k = 0; k < 2; k++) {
    dlb_dtype t = (k ? b : a)->dtype;
    if (!dlb_can_cast_same_kind(t, dtype)) {
      dlb_fail(err, DLB_E_DTYPE, "matmul: operand %d (%s) cannot be cast to %s (same_kind)", k + 1,
               dlb_dtype_get(t)->name, dlb_dtype_get(dtype)->name);
      dlb_error_hint(err, "pick a dtype of the operands' kind or a more general one "
                          "(bool < uint < int < float < complex)");
      return DLB_E_DTYPE;
    }
  }
  *result = dtype;
  return DLB_OK;
}

dlb_status dlb_matmul(const dlb_array *a, const dlb_array *b, dlb_dtype dtype, dlb_array *out,
                      dlb_backend *cpu, dlb_error *err) {
  dlb_operand in[2] = {{a, {0}}, {b, {0}}};
  dlb_placement where;
  product p;
  result_layout l;
  dlb_array ca = {0}, cb = {0};
  int64_t rshape[DLB_MAX_NDIM];
  int rndim = 0;
  dlb_dtype result_type = DLB_FLOAT64;
  dlb_status st;
  if ((st = dlb_check_operands(2, in, cpu, &where, "matmul", err)) != DLB_OK) return st;
  if ((st = matmul_shapes(a, b, &p, &rndim, rshape, err)) != DLB_OK) return st;
  if ((st = matmul_type(a, b, dtype, &result_type, err)) != DLB_OK) return st;
  if (out->buffer &&
      (st = dlb_check_out(out, result_type, rndim, rshape, &where, "matmul", err)) != DLB_OK)
    return st;
  p.type = dlb_compute_type(result_type);
  p.half = p.type != result_type ? result_type : DLB_DTYPE_COUNT;
  p.kind = kernel_for(p.type, p.m, p.n, p.k);
  l.first_batch = 0;
  l.row_dim = a->ndim == 1 ? -1 : p.nbatch;
  l.col_dim = b->ndim == 1 ? -1 : rndim - 1;
  if ((st = matmul_input(&p, a, ROLE_A, cpu, &ca, err)) == DLB_OK &&
      (st = matmul_input(&p, b, ROLE_B, cpu, &cb, err)) == DLB_OK)
    st = multiply_into(&p, a, b, out, result_type, rndim, rshape, &l, &where, cpu, err);
  dlb_array_release(&ca);
  dlb_array_release(&cb);
  return st;
}

/* ------------------------------------------------------------------------ */
/* dot */

/* M (a's dims but the last, merged), N, K and the batch dims (b's but its
 * last two) of dot(a, b), and the result's shape. */
static dlb_status dot_shapes(const dlb_array *a, const dlb_array *b, product *p, int *rndim,
                             int64_t *rshape, dlb_error *err) {
  int b_vec = b->ndim == 1, nd = 0, kdim;
  char sa[160], sb[160];
  if (a->ndim == 0 || b->ndim == 0) return zero_d_operand("dot", err);
  shape_text(a, sa, sizeof sa);
  shape_text(b, sb, sizeof sb);
  kdim = b_vec ? 0 : b->ndim - 2;
  p->k = a->shape[a->ndim - 1];
  if (p->k != b->shape[kdim]) {
    dlb_fail(err, DLB_E_SHAPE, "dot: shapes %s and %s are not aligned: dim %d of a (%lld) differs from dim %d of b (%lld)",
             sa, sb, a->ndim, (long long)p->k, kdim + 1, (long long)b->shape[kdim]);
    dlb_error_hint(err, "dot sums over the last dim of a and the second-to-last of b "
                        "(the only one of a 1-D b)");
    return DLB_E_SHAPE;
  }
  if ((a->ndim - 1) + (b->ndim - 1) > DLB_MAX_NDIM)
    return dlb_fail(err, DLB_E_SHAPE, "dot: shapes %s and %s give more than %d dims", sa, sb,
                    DLB_MAX_NDIM);
  if (dlb_shape_numel(a->ndim - 1, a->shape, &p->m, err) != DLB_OK)
    return dlb_fail(err, DLB_E_SHAPE, "dot: the result of shapes %s and %s is too large", sa, sb);
  p->n = b_vec ? 1 : b->shape[b->ndim - 1];
  p->nbatch = b_vec ? 0 : b->ndim - 2;
  for (int d = 0; d < a->ndim - 1; d++) rshape[nd++] = a->shape[d];
  for (int d = 0; d < p->nbatch; d++) rshape[nd++] = p->batch_shape[d] = b->shape[d];
  if (!b_vec) rshape[nd++] = p->n;
  *rndim = nd;
  return DLB_OK;
}

/* a as dot reads it: one matrix (its dims but the last merged into the
 * rows) for every batch index. 0 when those dims do not merge without a copy. */
static int dot_view_a(const dlb_array *a, const product *p, matrices *v) {
  v->data = dlb_array_host_data(a);
  for (int d = 0; d < p->nbatch; d++) v->batch[d] = 0;
  v->rows = p->m;
  v->cols = p->k;
  v->cs = a->strides[a->ndim - 1];
  v->rs = 0;
  return a->ndim == 1 ||
         dlb_shape_reshape_strides(a->ndim - 1, a->shape, a->strides, 1, &p->m, &v->rs);
}

/* b as dot reads it: its last two dims (a column for a 1-D b) over its batch dims. */
static void dot_view_b(const dlb_array *b, const product *p, matrices *v) {
  int64_t item = (int64_t)dlb_array_itemsize(b);
  int nd = b->ndim;
  v->data = dlb_array_host_data(b);
  for (int d = 0; d < p->nbatch; d++) v->batch[d] = b->shape[d] == 1 ? 0 : b->strides[d] * item;
  v->rows = p->k;
  v->cols = p->n;
  v->rs = nd == 1 ? b->strides[0] : b->strides[nd - 2];
  v->cs = nd == 1 ? 0 : b->strides[nd - 1];
}

/* Points p->a and p->b at a and b, or at copies in *ca and *cb. */
static dlb_status dot_inputs(product *p, const dlb_array *a, const dlb_array *b,
                             dlb_backend *cpu, dlb_array *ca, dlb_array *cb, dlb_error *err) {
  dlb_status st;
  int merged = dot_view_a(a, p, &p->a);
  dot_view_b(b, p, &p->b);
  if (inputs_unread(p)) return DLB_OK;
  if (!merged || !input_ready(p, a, &p->a, ROLE_A)) {
    if ((st = copy_input(a, 0, p->type, p->half, cpu, ca, err)) != DLB_OK) return st;
    dot_view_a(ca, p, &p->a);
  }
  if (!input_ready(p, b, &p->b, ROLE_B)) {
    if ((st = copy_input(b, b->ndim - 2, p->type, p->half, cpu, cb, err)) != DLB_OK) return st;
    dot_view_b(cb, p, &p->b);
  }
  return DLB_OK;
}

dlb_status dlb_dot(const dlb_array *a, const dlb_array *b, dlb_array *result, dlb_backend *cpu,
                   dlb_error *err) {
  dlb_operand in[2] = {{a, {0}}, {b, {0}}};
  dlb_placement where;
  product p;
  result_layout l;
  dlb_array ca = {0}, cb = {0};
  int64_t rshape[DLB_MAX_NDIM], batch = 1, row_stride;
  int rndim = 0;
  dlb_dtype result_type;
  dlb_status st;
  if ((st = dlb_check_operands(2, in, cpu, &where, "dot", err)) != DLB_OK) return st;
  if ((st = dot_shapes(a, b, &p, &rndim, rshape, err)) != DLB_OK) return st;
  result_type = dlb_promote_types(a->dtype, b->dtype);
  p.type = dlb_compute_type(result_type);
  p.half = p.type != result_type ? result_type : DLB_DTYPE_COUNT;
  p.kind = kernel_for(p.type, p.m, p.n, p.k);
  /* The rows of C lie a whole batch of results apart: beyond CBLAS's int, loop. */
  for (int d = 0; d < p.nbatch; d++)
    if (__builtin_mul_overflow(batch, p.batch_shape[d], &batch)) batch = INT64_MAX;
  if (__builtin_mul_overflow(batch, p.n, &row_stride) || (p.m > 1 && row_stride > blas_limit))
    p.kind = KERNEL_LOOP;
  l.first_batch = a->ndim - 1;
  l.row_dim = a->ndim == 1 ? -1 : a->ndim - 2;
  l.col_dim = b->ndim == 1 ? -1 : rndim - 1;
  result->buffer = NULL;
  if ((st = dot_inputs(&p, a, b, cpu, &ca, &cb, err)) == DLB_OK)
    st = multiply_into(&p, a, b, result, result_type, rndim, rshape, &l, &where, cpu, err);
  dlb_array_release(&ca);
  dlb_array_release(&cb);
  return st;
}

dlb_status dlb_matmul_result(int is_dot, const dlb_array *a, const dlb_array *b, dlb_dtype dtype,
                             dlb_dtype *result, int *ndim, int64_t *shape, dlb_error *err) {
  const char *op = is_dot ? "dot" : "matmul";
  product p;
  dlb_status st;
  if (!a->buffer || !b->buffer)
    return dlb_fail(err, DLB_E_DELETED, "%s: argument %d was deleted", op, a->buffer ? 2 : 1);
  if (is_dot) {
    if ((st = dot_shapes(a, b, &p, ndim, shape, err)) != DLB_OK) return st;
    *result = dlb_promote_types(a->dtype, b->dtype);
    return DLB_OK;
  }
  if ((st = matmul_shapes(a, b, &p, ndim, shape, err)) != DLB_OK) return st;
  return matmul_type(a, b, dtype, result, err);
}
