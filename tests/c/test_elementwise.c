/* test_elementwise.c -- the element-wise driver from C: dtype promotion
 * (NumPy's table, NEP 50 weak scalars), resolution errors, broadcasting,
 * out arrays (in place, cast, overlap), the buffered path (float16,
 * mixed dtypes, misaligned memory), kernel errors and deleted operands. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include "compute/elementwise.h"
#include "compute/types.h"
#define FIXTURES_CPU
#include "fixtures.h"

static dlb_operand arr(const dlb_array *a) { return (dlb_operand){.array = a}; }
static dlb_operand num(dlb_scalar s) { return (dlb_operand){.array = NULL, .scalar = s}; }

/* A 1-D array of n doubles cast to dtype. */
static dlb_array from_doubles(dlb_dtype dtype, int64_t n, const double *v) {
  dlb_array a = alloc(dtype, 1, &n);
  CHECK_EQ_INT(dlb_cast(dtype, dlb_array_host_data(&a), (ptrdiff_t)dlb_array_itemsize(&a),
                        DLB_FLOAT64, v, 8, (size_t)n, &err),
               DLB_OK);
  return a;
}

/* Element i of a (row-major over a contiguous array) as a double. */
static double at(const dlb_array *a, int64_t i) {
  double d;
  CHECK_EQ_INT(dlb_cast(DLB_FLOAT64, &d, 8, a->dtype,
                        dlb_array_host_data(a) + i * (int64_t)dlb_array_itemsize(a), 0, 1, &err),
               DLB_OK);
  return d;
}

static void test_promotion(void) {
  /* np.promote_types facts */
  CHECK_EQ_INT(dlb_promote_types(DLB_INT8, DLB_UINT8), DLB_INT16);
  CHECK_EQ_INT(dlb_promote_types(DLB_INT64, DLB_UINT64), DLB_FLOAT64);
  CHECK_EQ_INT(dlb_promote_types(DLB_UINT32, DLB_INT32), DLB_INT64);
  CHECK_EQ_INT(dlb_promote_types(DLB_FLOAT32, DLB_INT64), DLB_FLOAT64);
  CHECK_EQ_INT(dlb_promote_types(DLB_FLOAT32, DLB_INT16), DLB_FLOAT32);
  CHECK_EQ_INT(dlb_promote_types(DLB_FLOAT16, DLB_UINT8), DLB_FLOAT16);
  CHECK_EQ_INT(dlb_promote_types(DLB_FLOAT16, DLB_INT16), DLB_FLOAT32);
  CHECK_EQ_INT(dlb_promote_types(DLB_COMPLEX64, DLB_FLOAT64), DLB_COMPLEX128);
  CHECK_EQ_INT(dlb_promote_types(DLB_COMPLEX64, DLB_INT16), DLB_COMPLEX64);
  CHECK_EQ_INT(dlb_promote_types(DLB_BOOL, DLB_BOOL), DLB_BOOL);
  /* bfloat16 as PyTorch */
  CHECK_EQ_INT(dlb_promote_types(DLB_BFLOAT16, DLB_FLOAT16), DLB_FLOAT32);
  CHECK_EQ_INT(dlb_promote_types(DLB_BFLOAT16, DLB_UINT8), DLB_BFLOAT16);
  /* symmetric, and idempotent */
  for (int a = 0; a < DLB_DTYPE_COUNT; a++) {
    CHECK_EQ_INT(dlb_promote_types(a, a), a);
    for (int b = 0; b < DLB_DTYPE_COUNT; b++)
      CHECK_EQ_INT(dlb_promote_types(a, b), dlb_promote_types(b, a));
  }
  /* same_kind: float64 -> float32 and uint8 -> int8 yes; float -> int, int -> uint no */
  CHECK(dlb_can_cast_same_kind(DLB_FLOAT64, DLB_FLOAT32));
  CHECK(dlb_can_cast_same_kind(DLB_UINT8, DLB_INT8));
  CHECK(!dlb_can_cast_same_kind(DLB_FLOAT32, DLB_INT64));
  CHECK(!dlb_can_cast_same_kind(DLB_INT8, DLB_UINT64));
}

static void test_weak_scalars(void) {
  int64_t n = 2;
  dlb_array u8 = alloc(DLB_UINT8, 1, &n), b = alloc(DLB_BOOL, 1, &n),
            f16 = alloc(DLB_FLOAT16, 1, &n);
  dlb_operand in[2];
  in[0] = arr(&u8);
  in[1] = num(s_int(1000));
  CHECK_EQ_INT(dlb_result_type(2, in), DLB_UINT8);
  in[1] = num(s_float(0.5));
  CHECK_EQ_INT(dlb_result_type(2, in), DLB_FLOAT64);
  in[1] = num(s_complex(0, 1));
  CHECK_EQ_INT(dlb_result_type(2, in), DLB_COMPLEX128);
  in[0] = arr(&b);
  in[1] = num(s_int(1));
  CHECK_EQ_INT(dlb_result_type(2, in), DLB_INT64);
  in[0] = arr(&f16);
  in[1] = num(s_float(0.5));
  CHECK_EQ_INT(dlb_result_type(2, in), DLB_FLOAT16);
  in[1] = num(s_complex(0, 1));
  CHECK_EQ_INT(dlb_result_type(2, in), DLB_COMPLEX64);
  /* scalars alone */
  in[0] = num(s_int(1));
  in[1] = num(s_float(2));
  CHECK_EQ_INT(dlb_result_type(2, in), DLB_FLOAT64);
  dlb_array_release(&u8);
  dlb_array_release(&b);
  dlb_array_release(&f16);
}

static void test_resolve(void) {
  int64_t n = 2;
  dlb_array i32 = alloc(DLB_INT32, 1, &n), f64 = alloc(DLB_FLOAT64, 1, &n),
            c64 = alloc(DLB_COMPLEX64, 1, &n), b = alloc(DLB_BOOL, 1, &n),
            u8 = alloc(DLB_UINT8, 1, &n);
  dlb_op_types t;
  dlb_operand in[2] = {arr(&i32), num(s_int(2))};
  CHECK_EQ_INT(dlb_op_resolve(DLB_OP_DIVIDE, in, &t, &err), DLB_OK);
  CHECK_EQ_INT(t.result, DLB_FLOAT64);
  CHECK_EQ_INT(dlb_op_resolve(DLB_OP_SQRT, in, &t, &err), DLB_OK);
  CHECK_EQ_INT(t.result, DLB_FLOAT64);
  in[0] = arr(&u8);
  CHECK_EQ_INT(dlb_op_resolve(DLB_OP_SQRT, in, &t, &err), DLB_OK);
  CHECK_EQ_INT(t.result, DLB_FLOAT16);
  CHECK_EQ_INT(t.in[0], DLB_FLOAT32); /* float16 computes in float32 */
  in[0] = arr(&f64);
  CHECK_EQ_INT(dlb_op_resolve(DLB_OP_BITWISE_AND, in, &t, &err), DLB_E_DTYPE);
  in[0] = arr(&c64);
  CHECK_EQ_INT(dlb_op_resolve(DLB_OP_LESS, in, &t, &err), DLB_E_DTYPE);
  CHECK_EQ_INT(dlb_op_resolve(DLB_OP_EQUAL, in, &t, &err), DLB_OK);
  CHECK_EQ_INT(t.result, DLB_BOOL);
  CHECK_EQ_INT(dlb_op_resolve(DLB_OP_ABS, in, &t, &err), DLB_OK);
  CHECK_EQ_INT(t.result, DLB_FLOAT32);
  in[0] = arr(&b);
  in[1] = arr(&b);
  CHECK_EQ_INT(dlb_op_resolve(DLB_OP_SUBTRACT, in, &t, &err), DLB_E_DTYPE);
  CHECK_EQ_INT(dlb_op_resolve(DLB_OP_POWER, in, &t, &err), DLB_OK);
  CHECK_EQ_INT(t.result, DLB_INT8);
  dlb_array_release(&i32);
  dlb_array_release(&f64);
  dlb_array_release(&c64);
  dlb_array_release(&b);
  dlb_array_release(&u8);
}

static void test_broadcast_and_values(void) {
  int64_t sc[2] = {3, 1}, sr[1] = {4};
  double col[3] = {1, 2, 3}, row[4] = {10, 20, 30, 40};
  dlb_array c = from_doubles(DLB_INT32, 3, col), r = from_doubles(DLB_FLOAT32, 4, row), out;
  memset(&out, 0, sizeof out);
  c.ndim = 2;
  c.shape[0] = sc[0];
  c.shape[1] = sc[1];
  c.strides[1] = 1;
  (void)sr;
  dlb_operand in[2] = {arr(&c), arr(&r)};
  CHECK_EQ_INT(dlb_elementwise(DLB_OP_ADD, in, &out, cpu, &err), DLB_OK);
  CHECK_EQ_INT(out.ndim, 2);
  CHECK_EQ_INT(out.shape[0], 3);
  CHECK_EQ_INT(out.shape[1], 4);
  CHECK_EQ_INT(out.dtype, DLB_FLOAT64); /* int32 with float32 */
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) CHECK(at(&out, i * 4 + j) == col[i] + row[j]);
  dlb_array_release(&out);
  /* shapes that do not broadcast */
  {
    int64_t n = 5;
    dlb_array five = alloc(DLB_FLOAT32, 1, &n);
    in[0] = arr(&r);
    in[1] = arr(&five);
    CHECK_EQ_INT(dlb_elementwise(DLB_OP_ADD, in, &out, cpu, &err), DLB_E_SHAPE);
    CHECK(out.buffer == NULL);
    dlb_array_release(&five);
  }
  dlb_array_release(&c);
  dlb_array_release(&r);
}

static void test_scalars_and_errors(void) {
  double v[3] = {1, 2, 250};
  dlb_array u8 = from_doubles(DLB_UINT8, 3, v), out;
  dlb_operand in[2] = {arr(&u8), num(s_int(300))};
  memset(&out, 0, sizeof out);
  CHECK_EQ_INT(dlb_elementwise(DLB_OP_ADD, in, &out, cpu, &err), DLB_E_VALUE); /* 300 is no uint8 */
  in[1] = num(s_int(-1));
  CHECK_EQ_INT(dlb_elementwise(DLB_OP_ADD, in, &out, cpu, &err), DLB_E_VALUE);
  /* comparisons are exact instead */
  in[1] = num(s_int(300));
  CHECK_EQ_INT(dlb_elementwise(DLB_OP_LESS, in, &out, cpu, &err), DLB_OK);
  CHECK(at(&out, 0) == 1 && at(&out, 2) == 1);
  dlb_array_release(&out);
  /* wrap on overflow: 250 + 10 = 4 */
  in[1] = num(s_int(10));
  CHECK_EQ_INT(dlb_elementwise(DLB_OP_ADD, in, &out, cpu, &err), DLB_OK);
  CHECK(at(&out, 2) == 4);
  dlb_array_release(&out);
  /* integer to a negative power */
  in[1] = num(s_int(-2));
  {
    double iv[1] = {2};
    dlb_array i = from_doubles(DLB_INT64, 1, iv);
    in[0] = arr(&i);
    CHECK_EQ_INT(dlb_elementwise(DLB_OP_POWER, in, &out, cpu, &err), DLB_E_VALUE);
    CHECK(out.buffer == NULL);
    dlb_array_release(&i);
    /* a deleted operand */
    in[1] = num(s_int(1));
    CHECK_EQ_INT(dlb_elementwise(DLB_OP_ADD, in, &out, cpu, &err), DLB_E_DELETED);
  }
  dlb_array_release(&u8);
}

static void test_out(void) {
  double v[6] = {1, 2, 3, 4, 5, 6};
  dlb_array a = from_doubles(DLB_FLOAT64, 6, v), f32, i64, shifted_in, shifted_out;
  int64_t n = 6;
  dlb_operand in[2] = {arr(&a), num(s_float(0.5))};
  /* in place */
  CHECK_EQ_INT(dlb_elementwise(DLB_OP_MULTIPLY, in, &a, cpu, &err), DLB_OK);
  CHECK(at(&a, 5) == 3);
  /* into another dtype of the same kind */
  f32 = alloc(DLB_FLOAT32, 1, &n);
  CHECK_EQ_INT(dlb_elementwise(DLB_OP_MULTIPLY, in, &f32, cpu, &err), DLB_OK);
  CHECK(at(&f32, 5) == 1.5);
  /* not into an integer array */
  i64 = alloc(DLB_INT64, 1, &n);
  CHECK_EQ_INT(dlb_elementwise(DLB_OP_MULTIPLY, in, &i64, cpu, &err), DLB_E_DTYPE);
  /* overlap: out = a[1:], input = a[:-1] reads as if copied first */
  for (int k = 0; k < 6; k++) ((double *)dlb_array_host_data(&a))[k] = k + 1;
  shifted_in = view_of(&a);
  shifted_out = view_of(&a);
  CHECK_EQ_INT(dlb_view_slice(&shifted_in, 0, 0, 5, 1, &err), DLB_OK);
  CHECK_EQ_INT(dlb_view_slice(&shifted_out, 0, 1, 5, 1, &err), DLB_OK);
  in[0] = arr(&shifted_in);
  in[1] = num(s_float(0));
  CHECK_EQ_INT(dlb_elementwise(DLB_OP_ADD, in, &shifted_out, cpu, &err), DLB_OK);
  for (int k = 1; k < 6; k++) CHECK(at(&a, k) == k);
  /* a read-only out */
  shifted_out.readonly = 1;
  CHECK_EQ_INT(dlb_elementwise(DLB_OP_ADD, in, &shifted_out, cpu, &err), DLB_E_READ_ONLY);
  dlb_array_release(&shifted_in);
  dlb_array_release(&shifted_out);
  dlb_array_release(&f32);
  dlb_array_release(&i64);
  dlb_array_release(&a);
}

/* The buffered path: float16 (computed in float32), mixed dtypes, and an
 * operand at an odd address, over more elements than one chunk. */
static void test_buffered(void) {
  int64_t n = 3001;
  dlb_array h = alloc(DLB_FLOAT16, 1, &n), i16 = alloc(DLB_INT16, 1, &n), out, odd;
  uint16_t *hp = (uint16_t *)dlb_array_host_data(&h);
  int16_t *ip = (int16_t *)dlb_array_host_data(&i16);
  dlb_operand in[2] = {arr(&h), arr(&i16)};
  memset(&out, 0, sizeof out);
  for (int64_t k = 0; k < n; k++) {
    hp[k] = dlb_float16_from_double((double)(k % 100) * 0.5);
    ip[k] = (int16_t)(k % 7 - 3);
  }
  CHECK_EQ_INT(dlb_elementwise(DLB_OP_MULTIPLY, in, &out, cpu, &err), DLB_OK);
  CHECK_EQ_INT(out.dtype, DLB_FLOAT32); /* float16 with int16 */
  for (int64_t k = 0; k < n; k += 97) CHECK(at(&out, k) == (double)(k % 100) * 0.5 * (k % 7 - 3));
  dlb_array_release(&out);
  /* int16 viewed from an odd byte offset: the kernels read it through the buffer */
  {
    int64_t bytes = 2 * n + 2;
    dlb_array raw = alloc(DLB_UINT8, 1, &bytes);
    odd = view_of(&raw);
    odd.dtype = DLB_INT16;
    odd.offset = 1;
    odd.shape[0] = n;
    odd.numel = n;
    memcpy(dlb_array_host_data(&odd), ip, (size_t)(2 * n));
    in[0] = arr(&odd);
    in[1] = num(s_int(2));
    CHECK_EQ_INT(dlb_elementwise(DLB_OP_MULTIPLY, in, &out, cpu, &err), DLB_OK);
    for (int64_t k = 0; k < n; k += 97) CHECK(at(&out, k) == 2.0 * (k % 7 - 3));
    dlb_array_release(&out);
    dlb_array_release(&odd);
    dlb_array_release(&raw);
  }
  dlb_array_release(&h);
  dlb_array_release(&i16);
}

int main(void) {
  if (!cpu_open()) return 1;
  test_promotion();
  test_weak_scalars();
  test_resolve();
  test_broadcast_and_values();
  test_scalars_and_errors();
  test_out();
  test_buffered();
  cpu_close();
  return check_done("test_elementwise");
}
