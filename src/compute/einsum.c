/* einsum.c -- np.einsum's planner (see einsum.h): the subscripts parsed
 * into letters per operand, each operand made a view with one dim per
 * distinct letter (diagonals by summed strides, broadcast dims by stride
 * 0), then combined pairwise by matmul, element-wise products and sums.
 *
 * Letters are numbered in ASCII order ('A' = 0 ... 'Z' = 25, 'a' = 26 ...
 * 'z' = 51), the dims of an ellipsis 52 ... 63: a set of labels is a 64-bit
 * mask, and the implicit output's letters are its bits in order. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "../core/copy.h"
#include "../core/shape.h"
#include "../core/work.h"
#include "einsum.h"
#include "elementwise.h"
#include "matmul.h"
#include "reduce.h"
#include "types.h"

#define NLETTERS 52
/* The dims an ellipsis stands for get the labels past the letters,
 * right-aligned: the last such dim of every operand is label 63. */
#define MAX_ELLIPSIS 12
#define NLABELS (NLETTERS + MAX_ELLIPSIS)

/* What the subscripts say: each operand's labels (repeats kept), the
 * output's, and each label's extent (-1: unused). */
typedef struct plan {
  int nops;
  int nin[DLB_EINSUM_MAX_OPERANDS];
  signed char in[DLB_EINSUM_MAX_OPERANDS][DLB_MAX_NDIM];
  int nell; /* the most dims an operand's ellipsis stands for */
  int nout;
  signed char out[NLABELS];
  int64_t extent[NLABELS];
  dlb_dtype dtype; /* the operands' promotion: every step computes in it */
} plan;

/* An operand on its way: a view with one dim per label, all distinct. */
typedef struct term {
  dlb_array a;
  signed char lab[DLB_MAX_NDIM]; /* a.ndim of them */
} term;

static char letter_char(int l) {
  return (char)(l < 26 ? 'A' + l : l < NLETTERS ? 'a' + l - 26 : '.');
}

static int letter_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  return -1;
}

static dlb_status syntax(dlb_error *err, const char *hint, const char *fmt, char c) {
  dlb_fail(err, DLB_E_VALUE, fmt, c);
  dlb_error_hint(err, hint);
  return DLB_E_VALUE;
}

#define SUBSCRIPTS_HINT "subscripts such as \"ij,jk->ik\": letters per operand, commas between"

static dlb_status too_many_subscripts(const dlb_array *const *ops, int k, dlb_error *err) {
  dlb_fail(err, DLB_E_SHAPE,
           "einsum: the subscripts string contains too many subscripts for operand %d (it "
           "has %d dims)",
           k + 1, ops[k]->ndim);
  dlb_error_hint(err, "one letter per dim of each operand, or '...' for the dims not named");
  return DLB_E_SHAPE;
}

/* Whether c starts "..."; *c then points at its last dot. DLB_E_VALUE for
 * a lone dot, or a second ellipsis where one was seen. */
static dlb_status ellipsis_at(const char **c, const char *end, int *seen, dlb_error *err) {
  if (end - *c < 3 || (*c)[1] != '.' || (*c)[2] != '.')
    return syntax(err, SUBSCRIPTS_HINT, "einsum: '%c' stands alone: an ellipsis is \"...\"", '.');
  if (*seen)
    return syntax(err, SUBSCRIPTS_HINT, "einsum: more than one ellipsis ('%c..') in a term", '.');
  *seen = 1;
  *c += 2;
  return DLB_OK;
}

/* Ends operand k's term: its ellipsis (after `at` letters; -1: none) becomes
 * the labels of the dims the letters leave. */
static dlb_status end_term(plan *p, const dlb_array *const *ops, int k, int at, dlb_error *err) {
  int e = ops[k]->ndim - p->nin[k];
  if (at < 0 && e > 0) {
    dlb_fail(err, DLB_E_SHAPE, "einsum: operand %d has more dims (%d) than subscripts given (%d)",
             k + 1, ops[k]->ndim, p->nin[k]);
    dlb_error_hint(err, "one letter per dim of each operand, or '...' for the dims not named");
    return DLB_E_SHAPE;
  }
  if (at < 0) return DLB_OK;
  if (e > MAX_ELLIPSIS) {
    dlb_fail(err, DLB_E_SHAPE, "einsum: operand %d's ellipsis stands for %d dims: at most %d",
             k + 1, e, MAX_ELLIPSIS);
    dlb_error_hint(err, "name more of the dims with letters");
    return DLB_E_SHAPE;
  }
  memmove(&p->in[k][at + e], &p->in[k][at], (size_t)(p->nin[k] - at));
  for (int i = 0; i < e; i++) p->in[k][at + i] = (signed char)(NLABELS - e + i);
  p->nin[k] += e;
  if (e > p->nell) p->nell = e;
  return DLB_OK;
}

static dlb_status parse_inputs(plan *p, const char *s, const char *end, const dlb_array *const *ops,
                               dlb_error *err) {
  int k = 0, at = -1, seen = 0;
  dlb_status st;
  for (const char *c = s; c < end; c++) {
    int l = letter_of(*c);
    if (*c == ' ') continue;
    if (*c == ',') {
      if ((st = end_term(p, ops, k, at, err)) != DLB_OK) return st;
      if (++k >= p->nops)
        return syntax(err, SUBSCRIPTS_HINT,
                      "einsum: fewer operands provided than specified in the subscripts "
                      "string%c",
                      '\0');
      at = -1, seen = 0;
      continue;
    }
    if (*c == '.') {
      if ((st = ellipsis_at(&c, end, &seen, err)) != DLB_OK) return st;
      at = p->nin[k];
      continue;
    }
    if (l < 0)
      return syntax(err, SUBSCRIPTS_HINT,
                    "einsum: invalid subscript '%c' in the subscripts string, subscripts must be "
                    "letters",
                    *c);
    if (p->nin[k] >= ops[k]->ndim) return too_many_subscripts(ops, k, err);
    p->in[k][p->nin[k]++] = (signed char)l;
  }
  if (k + 1 < p->nops)
    return syntax(err, SUBSCRIPTS_HINT,
                  "einsum: more operands provided than specified in the subscripts string%c", '\0');
  return end_term(p, ops, k, at, err);
}

static uint64_t input_letters(const plan *p) {
  uint64_t m = 0;
  for (int k = 0; k < p->nops; k++)
    for (int d = 0; d < p->nin[k]; d++) m |= UINT64_C(1) << p->in[k][d];
  return m;
}

/* The labels of the ellipsis dims, in order, appended to the output. */
static void output_ellipsis(plan *p) {
  for (int i = 0; i < p->nell; i++) p->out[p->nout++] = (signed char)(NLABELS - p->nell + i);
}

static dlb_status parse_output(plan *p, const char *s, dlb_error *err) {
  uint64_t seen = 0, inputs = input_letters(p);
  int ellipsis = 0;
  const char *end = s + strlen(s);
  dlb_status st;
  for (const char *c = s; *c; c++) {
    int l = letter_of(*c);
    if (*c == ' ') continue;
    if (*c == '.') {
      if ((st = ellipsis_at(&c, end, &ellipsis, err)) != DLB_OK) return st;
      output_ellipsis(p);
      continue;
    }
    if (l < 0)
      return syntax(err, SUBSCRIPTS_HINT,
                    "einsum: invalid subscript '%c' in the output, subscripts must be letters", *c);
    if (seen >> l & 1)
      return syntax(err, "name each output dim once",
                    "einsum: the output subscript '%c' appears more than once", *c);
    if (!(inputs >> l & 1))
      return syntax(err, "every output letter comes from an input term",
                    "einsum: the output subscript '%c' never appeared in an input", *c);
    seen |= UINT64_C(1) << l;
    p->out[p->nout++] = (signed char)l;
  }
  if (!ellipsis && p->nell > 0) {
    dlb_fail(err, DLB_E_SHAPE,
             "einsum: the output has more dims than subscripts given, but no '...' for the %d "
             "dims of the inputs' ellipsis",
             p->nell);
    dlb_error_hint(err, "put \"...\" in the output too: \"...ij->...i\"");
    return DLB_E_SHAPE;
  }
  return DLB_OK;
}

/* NumPy's implicit output: the ellipsis dims, then the letters used exactly
 * once, in ASCII order. */
static void implicit_output(plan *p) {
  int count[NLABELS] = {0};
  for (int k = 0; k < p->nops; k++)
    for (int d = 0; d < p->nin[k]; d++) count[p->in[k][d]]++;
  output_ellipsis(p);
  for (int l = 0; l < NLETTERS; l++)
    if (count[l] == 1) p->out[p->nout++] = (signed char)l;
}

/* Each letter's extent: equal within an operand (a diagonal), equal or 1
 * across operands (broadcast). */
static dlb_status extents(plan *p, const dlb_array *const *ops, dlb_error *err) {
  for (int l = 0; l < NLABELS; l++) p->extent[l] = -1;
  for (int k = 0; k < p->nops; k++) {
    int64_t mine[NLABELS];
    for (int l = 0; l < NLABELS; l++) mine[l] = -1;
    for (int d = 0; d < p->nin[k]; d++) {
      int l = p->in[k][d];
      int64_t e = ops[k]->shape[d];
      if (mine[l] >= 0 && mine[l] != e) {
        dlb_fail(err, DLB_E_SHAPE,
                 "einsum: dims in operand %d for collapsing index '%c' don't match (%lld != "
                 "%lld)",
                 k + 1, letter_char(l), (long long)mine[l], (long long)e);
        dlb_error_hint(err, "a letter repeated in one term takes a diagonal: equal extents");
        return DLB_E_SHAPE;
      }
      mine[l] = e;
      if (p->extent[l] < 0 || p->extent[l] == 1) p->extent[l] = e;
      else if (e != 1 && e != p->extent[l]) {
        dlb_fail(err, DLB_E_SHAPE,
                 "einsum: operand %d has extent %lld for '%c', another operand %lld: they do not "
                 "broadcast",
                 k + 1, (long long)e, letter_char(l), (long long)p->extent[l]);
        dlb_error_hint(err, "a letter has one extent in every operand (or 1, broadcast)");
        return DLB_E_SHAPE;
      }
    }
  }
  return DLB_OK;
}

/* bool < integers < floats and complex: the kinds NumPy 1.24's value-based
 * casting orders (dtype_kind_to_simplified_ordering). */
static int kind_rank(dlb_dtype t) {
  switch (dlb_dtype_get(t)->kind) {
    case DLB_KIND_BOOL: return 0;
    case DLB_KIND_INT:
    case DLB_KIND_UINT: return 1;
    default: return 2;
  }
}

/* np.min_scalar_type of a float of dtype t: float16 within +-65000 (NaN and
 * inf too), float32 within its range, else float64; never wider than t. */
static dlb_dtype min_float_type(double v, dlb_dtype t) {
  if (t == DLB_FLOAT16 || isnan(v) || isinf(v) || (v > -65000.0 && v < 65000.0)) return DLB_FLOAT16;
  return t != DLB_FLOAT64 || (v > -3.4e38 && v < 3.4e38) ? DLB_FLOAT32 : DLB_FLOAT64;
}

/* np.min_scalar_type of an integer v: the smallest unsigned dtype for
 * v >= 0, "small" (*small = 1) when v also fits the signed dtype of its
 * size; the smallest signed one for v < 0. */
static dlb_dtype min_int_type(int64_t v, int *small) {
  static const dlb_dtype unsigned_types[] = {DLB_UINT8, DLB_UINT16, DLB_UINT32, DLB_UINT64};
  static const int64_t unsigned_max[] = {UINT8_MAX, UINT16_MAX, UINT32_MAX, INT64_MAX};
  static const int64_t signed_max[] = {INT8_MAX, INT16_MAX, INT32_MAX, INT64_MAX};
  int k = 0;
  if (v < 0)
    return v >= INT8_MIN    ? DLB_INT8
           : v >= INT16_MIN ? DLB_INT16
           : v >= INT32_MIN ? DLB_INT32
                            : DLB_INT64;
  while (v > unsigned_max[k]) k++;
  *small = v <= signed_max[k];
  return unsigned_types[k];
}

/* np.min_scalar_type of the 0-d host array a; *small as min_int_type's. */
static dlb_dtype min_scalar_type(const dlb_array *a, int *small) {
  dlb_scalar v;
  *small = 0;
  dlb_scalar_load(a->dtype, dlb_array_host_data(a), &v);
  switch (v.kind) {
    case DLB_SCALAR_BOOL: return DLB_BOOL;
    case DLB_SCALAR_INT: return min_int_type(v.v.i, small);
    case DLB_SCALAR_UINT: return DLB_UINT64;
    case DLB_SCALAR_FLOAT: return min_float_type(v.v.f, a->dtype);
    default: /* complex64 where both parts lie strictly inside float32's range (NaN does not) */
      return a->dtype == DLB_COMPLEX64 || (v.v.c.re > -3.4e38 && v.v.c.re < 3.4e38 &&
                                           v.v.c.im > -3.4e38 && v.v.c.im < 3.4e38)
                 ? DLB_COMPLEX64
                 : DLB_COMPLEX128;
  }
}

static dlb_dtype signed_of(dlb_dtype t) {
  switch (t) {
    case DLB_UINT8: return DLB_INT8;
    case DLB_UINT16: return DLB_INT16;
    case DLB_UINT32: return DLB_INT32;
    case DLB_UINT64: return DLB_INT64;
    default: return t;
  }
}

static int bool_or_unsigned(dlb_dtype t) {
  dlb_kind k = dlb_dtype_get(t)->kind;
  return k == DLB_KIND_BOOL || k == DLB_KIND_UINT;
}

/* NumPy's legacy promote_types: a "small" unsigned dtype meeting a dtype
 * that is neither bool nor unsigned counts as the signed dtype of its size. */
static dlb_dtype promote_small(dlb_dtype a, int small_a, dlb_dtype b, int small_b) {
  if (small_a && !bool_or_unsigned(b)) a = signed_of(a);
  else if (!small_a && small_b && !bool_or_unsigned(a)) b = signed_of(b);
  return dlb_promote_types(a, b);
}

/* NumPy's type number of t: its order of "knowledge" (bfloat16, which NumPy
 * lacks, just below float16, NumPy's last). */
static int numpy_order(dlb_dtype t) {
  static const struct {
    dlb_dtype t;
    int num;
  } nums[] = {{DLB_BOOL, 0},        {DLB_INT8, 1},      {DLB_UINT8, 2},    {DLB_INT16, 3},
              {DLB_UINT16, 4},      {DLB_INT32, 5},     {DLB_UINT32, 6},   {DLB_INT64, 7},
              {DLB_UINT64, 8},      {DLB_FLOAT32, 11},  {DLB_FLOAT64, 12}, {DLB_COMPLEX64, 14},
              {DLB_COMPLEX128, 15}, {DLB_BFLOAT16, 22}, {DLB_FLOAT16, 23}};
  for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++)
    if (nums[k].t == t) return nums[k].num;
  return 0;
}

/* NumPy 1.24's PyArray_PromoteDTypeSequence for its own dtypes: the dtype
 * of the highest type number promotes with each of the others, and those
 * results promote together (not a fold from the left: int16, uint16 and
 * complex64 give complex64). */
static dlb_dtype promote_sequence(int n, const dlb_array *const *ops) {
  dlb_dtype main = ops[0]->dtype, t;
  for (int k = 1; k < n; k++)
    if (numpy_order(ops[k]->dtype) > numpy_order(main)) main = ops[k]->dtype;
  t = main;
  for (int k = 0; k < n; k++) t = dlb_promote_types(t, dlb_promote_types(main, ops[k]->dtype));
  return t;
}

/* The operands' common dtype as np.einsum's iterator finds it
 * (npyiter_get_common_dtype, then NumPy 1.24's result_type): the 0-d
 * operands count first, as values, then the other operands' dtypes. When
 * both kinds are there and no 0-d operand is of a higher kind than the
 * others, the legacy value-based promotion (PyArray_LegacyResultType): each
 * 0-d operand counts as np.min_scalar_type of its value, promoted from the
 * left, "small" unsigned ones as promote_small says, then each dtype (the
 * last "small" flag of the values still applying); otherwise
 * promote_sequence over all of them. */
static dlb_dtype common_dtype(int n, const dlb_array *const *ops) {
  const dlb_array *order[DLB_EINSUM_MAX_OPERANDS];
  int m = 0, nscalars, top = -1, top_scalar = -1, small = 0;
  dlb_dtype t = DLB_BOOL;
  for (int k = 0; k < n; k++)
    if (ops[k]->ndim == 0) {
      order[m++] = ops[k];
      if (kind_rank(ops[k]->dtype) > top_scalar) top_scalar = kind_rank(ops[k]->dtype);
    }
  nscalars = m;
  for (int k = 0; k < n; k++)
    if (ops[k]->ndim > 0) {
      order[m++] = ops[k];
      if (kind_rank(ops[k]->dtype) > top) top = kind_rank(ops[k]->dtype);
    }
  if (top < 0 || top_scalar < 0 || top < top_scalar) return promote_sequence(n, order);
  for (int k = 0; k < n; k++) {
    int value = k < nscalars && dlb_array_host_data(order[k]), s = 0;
    dlb_dtype d = value ? min_scalar_type(order[k], &s) : order[k]->dtype;
    t = k ? promote_small(d, s, t, small) : d;
    if (k < nscalars) small = k ? s && small : s;
  }
  return t;
}

/* NumPy's iterator casts the operands with dims to the common dtype under
 * 'safe' casting: one that cannot (a uint16 array where a "small" 0-d value
 * made the result int16) is its TypeError, DLB_E_DTYPE. */
static dlb_status check_casts(const plan *p, const dlb_array *const *ops, dlb_error *err) {
  for (int k = 0; k < p->nops; k++) {
    if (ops[k]->ndim == 0 || dlb_can_cast_safely(ops[k]->dtype, p->dtype)) continue;
    dlb_fail(err, DLB_E_DTYPE,
             "einsum: operand %d's dtype %s cannot be cast safely to %s, the operands' common "
             "dtype",
             k + 1, dlb_dtype_get(ops[k]->dtype)->name, dlb_dtype_get(p->dtype)->name);
    dlb_error_hint(err, "the 0-d operands count by their values: convert an operand first, "
                        "a:astype(\"int64\")");
    return DLB_E_DTYPE;
  }
  return DLB_OK;
}

static dlb_status parse(plan *p, const char *s, const dlb_array *const *ops, dlb_error *err) {
  const char *arrow = strstr(s, "->");
  dlb_status st;
  if ((st = parse_inputs(p, s, arrow ? arrow : s + strlen(s), ops, err)) != DLB_OK) return st;
  if (arrow) st = parse_output(p, arrow + 2, err);
  else implicit_output(p);
  if (st == DLB_OK) st = extents(p, ops, err);
  p->dtype = common_dtype(p->nops, ops);
  if (st == DLB_OK) st = check_casts(p, ops, err);
  return st;
}

/* --- terms ---------------------------------------------------------------- */

static uint64_t letters(const term *t) {
  uint64_t m = 0;
  for (int d = 0; d < t->a.ndim; d++) m |= UINT64_C(1) << t->lab[d];
  return m;
}

/* Sets v's geometry to (ndim, shape, strides), counting its elements. */
static dlb_status set_geometry(dlb_array *v, int ndim, const int64_t *shape, const int64_t *strides,
                               dlb_error *err) {
  dlb_status st = dlb_shape_numel(ndim, shape, &v->numel, err);
  v->ndim = ndim;
  memcpy(v->shape, shape, (size_t)ndim * sizeof *shape);
  memcpy(v->strides, strides, (size_t)ndim * sizeof *strides);
  return st;
}

/* Operand k as a term: converted to the plan's dtype, one dim per distinct
 * letter (first appearance order; a repeat adds its stride: the diagonal),
 * extent-1 dims broadcast to the letter's extent (stride 0). */
static dlb_status make_term(const plan *p, int k, const dlb_array *op, term *t, dlb_error *err) {
  int64_t shape[DLB_MAX_NDIM], strides[DLB_MAX_NDIM];
  int pos[NLABELS], n = 0;
  dlb_status st;
  if (op->dtype == p->dtype) dlb_array_share(&t->a, op);
  else if ((st = dlb_array_clone(&t->a, op, p->dtype, err)) != DLB_OK) return st;
  for (int l = 0; l < NLABELS; l++) pos[l] = -1;
  for (int d = 0; d < p->nin[k]; d++) {
    int l = p->in[k][d];
    int64_t stride = t->a.shape[d] == 1 ? 0 : t->a.strides[d]; /* extent 1: no step */
    if (pos[l] >= 0) {
      if (__builtin_add_overflow(strides[pos[l]], stride, &strides[pos[l]]))
        return dlb_fail(err, DLB_E_SHAPE, "einsum: a diagonal's stride passes int64");
      continue;
    }
    pos[l] = n;
    t->lab[n] = (signed char)l;
    shape[n] = t->a.shape[d];
    strides[n] = stride;
    if (shape[n] == 1 && p->extent[l] != 1) shape[n] = p->extent[l], strides[n] = 0;
    n++;
  }
  return set_geometry(&t->a, n, shape, strides, err);
}

/* v = t's array with one dim per letter of labs[0..n-1] (extent 1, stride
 * 0 for a letter t lacks). */
static dlb_status arrange(const term *t, const signed char *labs, int n, dlb_array *v,
                          dlb_error *err) {
  int64_t shape[DLB_MAX_NDIM], strides[DLB_MAX_NDIM];
  if (n > DLB_MAX_NDIM)
    return dlb_fail(err, DLB_E_SHAPE, "einsum: an intermediate would have more than %d dims",
                    DLB_MAX_NDIM);
  for (int i = 0; i < n; i++) {
    shape[i] = 1, strides[i] = 0;
    for (int d = 0; d < t->a.ndim; d++)
      if (t->lab[d] == labs[i]) shape[i] = t->a.shape[d], strides[i] = t->a.strides[d];
  }
  dlb_array_share(v, &t->a);
  return set_geometry(v, n, shape, strides, err);
}

/* The sum of x over the dims of the mask `dims` into r (bool: any; the plan's
 * dtype kept: integers wrap as NumPy's einsum). */
static dlb_status sum_last(const plan *p, const dlb_array *x, uint64_t dims, dlb_array *r,
                           dlb_backend *cpu, dlb_error *err) {
  dlb_reduce_options o;
  memset(&o, 0, sizeof o);
  o.dims = dims;
  if (p->dtype == DLB_BOOL) return dlb_reduce(DLB_REDUCE_ANY, x, &o, r, cpu, err);
  o.has_dtype = 1;
  o.dtype = p->dtype;
  return dlb_reduce(DLB_REDUCE_SUM, x, &o, r, cpu, err);
}

/* Sums the letters of t that are not in keep out of it. */
static dlb_status sum_out(const plan *p, term *t, uint64_t keep, dlb_backend *cpu, dlb_error *err) {
  uint64_t dims = 0;
  int n = 0;
  dlb_array r = {0};
  dlb_status st;
  for (int d = 0; d < t->a.ndim; d++) {
    if (keep >> t->lab[d] & 1) t->lab[n++] = t->lab[d];
    else dims |= UINT64_C(1) << d;
  }
  if (!dims) return DLB_OK;
  if ((st = sum_last(p, &t->a, dims, &r, cpu, err)) != DLB_OK) return st;
  dlb_array_release(&t->a);
  t->a = r;
  return DLB_OK;
}

/* The letters of mask in t's order, appended to labs at *n. */
static void list_in_order(const term *t, uint64_t mask, signed char *labs, int *n) {
  for (int d = 0; d < t->a.ndim; d++)
    if (mask >> t->lab[d] & 1) labs[(*n)++] = t->lab[d];
}

/* The product of the extents of labs[0..n-1] (checked). */
static dlb_status extent_of(const plan *p, const signed char *labs, int n, int64_t *e,
                            dlb_error *err) {
  int64_t shape[DLB_MAX_NDIM];
  for (int i = 0; i < n; i++) shape[i] = p->extent[labs[i]];
  return dlb_shape_numel(n, shape, e, err);
}

/* v reshaped to (nd, shape): a view when the layout allows, else a copy. */
static dlb_status reshape_any(dlb_array *v, int nd, const int64_t *shape, dlb_error *err) {
  dlb_array c = {0};
  dlb_status st = dlb_view_reshape(v, nd, shape, err);
  if (st != DLB_E_COPY_REQUIRED) return st;
  if ((st = dlb_array_clone(&c, v, v->dtype, err)) != DLB_OK) return st;
  dlb_array_release(v);
  *v = c;
  return dlb_view_reshape(v, nd, shape, err);
}

/* The groups of a pair: batch (both, kept), M (a only), N (b only), K (both,
 * contracted), each in its operand's order. */
typedef struct groups {
  signed char batch[NLABELS], m[NLABELS], n[NLABELS], k[NLABELS];
  int nb, nm, nn, nk;
} groups;

/* One operand of the matmul: t over (batch, first, second) as (batch...,
 * extent of first, extent of second). */
static dlb_status matrix_view(const plan *p, const term *t, const groups *g, const signed char *f,
                              int nf, const signed char *s, int ns, dlb_array *v, dlb_error *err) {
  signed char labs[3 * NLABELS];
  int64_t shape[DLB_MAX_NDIM];
  int n = 0;
  dlb_status st;
  memcpy(labs, g->batch, (size_t)g->nb);
  memcpy(labs + g->nb, f, (size_t)nf);
  memcpy(labs + g->nb + nf, s, (size_t)ns);
  if (g->nb + 2 > DLB_MAX_NDIM)
    return dlb_fail(err, DLB_E_SHAPE, "einsum: an intermediate would have more than %d dims",
                    DLB_MAX_NDIM);
  if ((st = arrange(t, labs, g->nb + nf + ns, v, err)) != DLB_OK) return st;
  for (; n < g->nb; n++) shape[n] = v->shape[n];
  if ((st = extent_of(p, f, nf, &shape[n++], err)) != DLB_OK ||
      (st = extent_of(p, s, ns, &shape[n++], err)) != DLB_OK)
    return st;
  return reshape_any(v, n, shape, err);
}

/* a x b contracted over g's K by a batched matmul into r: (batch, M, N). */
static dlb_status by_matmul(const plan *p, const term *a, const term *b, const groups *g, term *r,
                            dlb_backend *cpu, dlb_error *err) {
  dlb_array va = {0}, vb = {0};
  int64_t shape[DLB_MAX_NDIM];
  int n = 0;
  dlb_status st;
  if (g->nb + g->nm + g->nn > DLB_MAX_NDIM)
    return dlb_fail(err, DLB_E_SHAPE, "einsum: an intermediate would have more than %d dims",
                    DLB_MAX_NDIM);
  if ((st = matrix_view(p, a, g, g->m, g->nm, g->k, g->nk, &va, err)) == DLB_OK &&
      (st = matrix_view(p, b, g, g->k, g->nk, g->n, g->nn, &vb, err)) == DLB_OK)
    st = dlb_matmul(&va, &vb, p->dtype, &r->a, cpu, err);
  dlb_array_release(&va);
  dlb_array_release(&vb);
  if (st != DLB_OK) return st;
  for (int i = 0; i < g->nb; i++) r->lab[n] = g->batch[i], shape[n] = p->extent[g->batch[i]], n++;
  for (int i = 0; i < g->nm; i++) r->lab[n] = g->m[i], shape[n] = p->extent[g->m[i]], n++;
  for (int i = 0; i < g->nn; i++) r->lab[n] = g->n[i], shape[n] = p->extent[g->n[i]], n++;
  return dlb_view_reshape(&r->a, n, shape, err);
}

/* a * b over the letters labs[0..n-1] (broadcast views), then summed over
 * the last nsum of them, into r. */
static dlb_status by_product(const plan *p, const term *a, const term *b, const signed char *labs,
                             int n, int nsum, term *r, dlb_backend *cpu, dlb_error *err) {
  dlb_array va = {0}, vb = {0}, prod = {0};
  dlb_operand in[2] = {{&va, {0}}, {&vb, {0}}};
  uint64_t dims = 0;
  dlb_status st;
  for (int i = n - nsum; i < n; i++) dims |= UINT64_C(1) << i;
  if ((st = arrange(a, labs, n, &va, err)) == DLB_OK &&
      (st = arrange(b, labs, n, &vb, err)) == DLB_OK)
    st = dlb_elementwise(DLB_OP_MULTIPLY, in, nsum ? &prod : &r->a, cpu, err);
  if (st == DLB_OK && nsum) st = sum_last(p, &prod, dims, &r->a, cpu, err);
  dlb_array_release(&va);
  dlb_array_release(&vb);
  dlb_array_release(&prod);
  if (st == DLB_OK) /* (arrange refused n > DLB_MAX_NDIM: r->lab holds that many) */
    memcpy(r->lab, labs, (size_t)(n - nsum));
  return st;
}

/* Contractions of at most this many terms a result element add the
 * products term by term (element-wise, no temporary of every product). */
#define UNROLL_MAX 8

/* v = x with its first nk dims (extents shape) fixed at the row-major index k. */
static dlb_status select_term(const dlb_array *x, int nk, int64_t k, dlb_array *v, dlb_error *err) {
  dlb_status st = DLB_OK;
  dlb_array_share(v, x);
  for (int d = nk - 1; d >= 0 && st == DLB_OK; d--) {
    int64_t e = x->shape[d];
    st = dlb_view_select(v, d, k % e, err);
    k /= e;
  }
  return st;
}

/* As by_product, with few terms (kp) a sum: r = a_0 b_0, then r += a_k b_k
 * for each further term k, over views with the summed letters leading (the
 * terms added in np.einsum's order). */
static dlb_status by_terms(const term *a, const term *b, const signed char *labs, int n, int nsum,
                           int64_t kp, term *r, dlb_backend *cpu, dlb_error *err) {
  signed char order[DLB_MAX_NDIM];
  dlb_array va = {0}, vb = {0}, ak = {0}, bk = {0}, prod = {0};
  dlb_status st;
  memcpy(order, labs + n - nsum, (size_t)nsum);
  memcpy(order + nsum, labs, (size_t)(n - nsum));
  if ((st = arrange(a, order, n, &va, err)) != DLB_OK ||
      (st = arrange(b, order, n, &vb, err)) != DLB_OK)
    goto done;
  for (int64_t k = 0; k < kp && st == DLB_OK; k++) {
    dlb_operand in[2] = {{&ak, {0}}, {&bk, {0}}}, acc[2] = {{&r->a, {0}}, {&prod, {0}}};
    dlb_array_release(&ak);
    dlb_array_release(&bk);
    if ((st = select_term(&va, nsum, k, &ak, err)) != DLB_OK ||
        (st = select_term(&vb, nsum, k, &bk, err)) != DLB_OK)
      break;
    if (k == 0) st = dlb_elementwise(DLB_OP_MULTIPLY, in, &r->a, cpu, err);
    else if ((st = dlb_elementwise(DLB_OP_MULTIPLY, in, &prod, cpu, err)) == DLB_OK)
      st = dlb_elementwise(DLB_OP_ADD, acc, &r->a, cpu, err);
  }
done:
  dlb_array_release(&va);
  dlb_array_release(&vb);
  dlb_array_release(&ak);
  dlb_array_release(&bk);
  dlb_array_release(&prod);
  if (st == DLB_OK) memcpy(r->lab, labs, (size_t)(n - nsum));
  return st;
}

/* r = a and b combined, keeping the letters of keep (the others they share
 * are summed over). Both are summed first over letters only they have. */
static dlb_status combine(const plan *p, term *a, term *b, uint64_t keep, term *r, dlb_backend *cpu,
                          dlb_error *err) {
  signed char labs[3 * NLABELS];
  uint64_t la, lb;
  int64_t kp = 0;
  groups g;
  int n = 0;
  dlb_status st;
  if ((st = sum_out(p, a, keep | letters(b), cpu, err)) != DLB_OK ||
      (st = sum_out(p, b, keep | letters(a), cpu, err)) != DLB_OK)
    return st;
  la = letters(a), lb = letters(b);
  g.nb = g.nm = g.nn = g.nk = 0;
  list_in_order(a, la & lb & keep, g.batch, &g.nb);
  list_in_order(a, la & ~lb, g.m, &g.nm);
  list_in_order(b, lb & ~la, g.n, &g.nn);
  list_in_order(a, la & lb & ~keep, g.k, &g.nk);
  if (g.nk > 0 && (g.nm > 0 || g.nn > 0)) return by_matmul(p, a, b, &g, r, cpu, err);
  memcpy(labs, g.batch, (size_t)g.nb), n = g.nb;
  memcpy(labs + n, g.m, (size_t)g.nm), n += g.nm;
  memcpy(labs + n, g.n, (size_t)g.nn), n += g.nn;
  memcpy(labs + n, g.k, (size_t)g.nk), n += g.nk;
  if (g.nk > 0 && extent_of(p, g.k, g.nk, &kp, err) == DLB_OK && kp <= UNROLL_MAX)
    return by_terms(a, b, labs, n, g.nk, kp, r, cpu, err);
  return by_product(p, a, b, labs, n, g.nk, r, cpu, err);
}

/* The letters the output or an operand after k needs. */
static uint64_t needed_after(const plan *p, int k) {
  uint64_t m = 0;
  for (int i = 0; i < p->nout; i++) m |= UINT64_C(1) << p->out[i];
  for (int j = k + 1; j < p->nops; j++)
    for (int d = 0; d < p->nin[j]; d++) m |= UINT64_C(1) << p->in[j][d];
  return m;
}

/* The operands folded from the left into acc, then acc summed and permuted
 * to the output's letters. */
static dlb_status run(const plan *p, const dlb_array *const *ops, term *acc, dlb_backend *cpu,
                      dlb_error *err) {
  int perm[DLB_MAX_NDIM];
  dlb_status st = make_term(p, 0, ops[0], acc, err);
  for (int k = 1; k < p->nops && st == DLB_OK; k++) {
    term next = {{0}, {0}}, r = {{0}, {0}};
    if ((st = make_term(p, k, ops[k], &next, err)) == DLB_OK)
      st = combine(p, acc, &next, needed_after(p, k), &r, cpu, err);
    dlb_array_release(&next.a);
    dlb_array_release(&acc->a);
    acc->a = r.a;
    memcpy(acc->lab, r.lab, sizeof r.lab);
  }
  if (st == DLB_OK) st = sum_out(p, acc, needed_after(p, p->nops - 1), cpu, err);
  if (st != DLB_OK) return st;
  for (int i = 0; i < p->nout; i++)
    for (int d = 0; d < acc->a.ndim; d++)
      if (acc->lab[d] == p->out[i]) perm[i] = d;
  return dlb_view_permute(&acc->a, perm, err);
}

/* Whether a letter summed over has extent 0: every sum is then empty, the
 * result zeros (NaN in the other operands never enters it). */
static int empty_sum(const plan *p) {
  uint64_t out = 0, in = input_letters(p);
  for (int i = 0; i < p->nout; i++) out |= UINT64_C(1) << p->out[i];
  for (int l = 0; l < NLABELS; l++)
    if ((in & ~out) >> l & 1 && p->extent[l] == 0) return 1;
  return 0;
}

/* The result of an empty sum: zeros (false) of the output's shape. */
static dlb_status zeros(const plan *p, const dlb_placement *where, term *acc, dlb_error *err) {
  int64_t shape[DLB_MAX_NDIM];
  if (p->nout > DLB_MAX_NDIM)
    return dlb_fail(err, DLB_E_SHAPE, "einsum: the output would have more than %d dims",
                    DLB_MAX_NDIM);
  for (int i = 0; i < p->nout; i++) shape[i] = p->extent[p->out[i]];
  return dlb_array_allocate(&acc->a, where->backend, where->device_id, p->dtype, p->nout, shape, 1,
                            err);
}

dlb_status dlb_einsum(const char *subscripts, int n, const dlb_array *const *operands,
                      dlb_array *out, dlb_backend *cpu, dlb_error *err) {
  plan p;
  term acc = {{0}, {0}};
  dlb_operand in[DLB_EINSUM_MAX_OPERANDS] = {{0}};
  dlb_placement where;
  int64_t elements = 0;
  dlb_work w;
  dlb_status st;
  out->buffer = NULL;
  if (n < 1 || n > DLB_EINSUM_MAX_OPERANDS)
    return dlb_fail(err, DLB_E_VALUE, "einsum: %d operands: it takes 1 to %d", n,
                    DLB_EINSUM_MAX_OPERANDS);
  memset(&p, 0, sizeof p);
  p.nops = n;
  for (int k = 0; k < n; k++) {
    in[k].array = operands[k];
    if (__builtin_add_overflow(elements, operands[k]->numel, &elements)) elements = INT64_MAX;
  }
  if ((st = dlb_check_operands_for(n, in, cpu, offsetof(dlb_kernels, elementwise), &where, "einsum",
                                   err)) != DLB_OK)
    return st;
  if ((st = parse(&p, subscripts, operands, err)) != DLB_OK) return st;
  if ((st = dlb_work_begin(&w, dlb_array_budget(operands[0]), elements, "einsum", err)) != DLB_OK)
    return st;
  st = empty_sum(&p) ? zeros(&p, &where, &acc, err) : run(&p, operands, &acc, cpu, err);
  st = dlb_work_end(&w, st, "einsum", err);
  if (st != DLB_OK) dlb_array_release(&acc.a);
  else *out = acc.a;
  return st;
}
