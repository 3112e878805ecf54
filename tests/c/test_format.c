/* test_format.c -- dlb_strbuf and the NumPy-like array printer (format.c). */
#define _DEFAULT_SOURCE /* mmap, MAP_ANONYMOUS */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#define HAVE_MMAP 1
#endif

#include "check.h"
#include "core/format.h"
#include "fixtures.h"

/* An array around caller-owned host memory; no backend, no array.c. */
typedef struct host_array {
  dlb_buffer buf;
  dlb_array a;
} host_array;

/* A device whose memory the host cannot address: reads go through here. */
static int engine_reads, engine_fail;
static dlb_status engine_copy_to_host(void *ctx, int device_id, const void *handle, size_t offset,
                                      void *dst, size_t nbytes) {
  if (engine_fail) return DLB_E_BACKEND_FAILURE;
  engine_reads++;
  memcpy(dst, (const char *)handle + offset, nbytes);
  return DLB_OK;
}

/* Wraps mem as an array; strides NULL means C-contiguous; offset in bytes. */
static dlb_array *wrap(host_array *h, void *mem, size_t nbytes, dlb_dtype dtype, int ndim,
                       const int64_t *shape, const int64_t *strides, size_t offset) {
  memset(h, 0, sizeof *h);
  atomic_init(&h->buf.refs, 1);
  h->buf.host = mem;
  h->buf.handle = mem;
  h->buf.nbytes = nbytes;
  h->a.buffer = &h->buf;
  h->a.dtype = dtype;
  h->a.ndim = ndim;
  h->a.offset = offset;
  h->a.numel = 1;
  int64_t step = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    h->a.shape[i] = shape[i];
    h->a.strides[i] = strides ? strides[i] : step;
    step *= shape[i];
    h->a.numel *= shape[i];
  }
  return &h->a;
}

/* Formats a on "cpu:0"; a malloc'd string, or NULL when formatting fails. */
static char *fmt(const dlb_array *a) {
  dlb_strbuf sb;
  dlb_error err;
  memset(&err, 0, sizeof err);
  dlb_strbuf_init(&sb);
  if (dlb_array_format(a, "cpu:0", &sb, &err) != DLB_OK || sb.failed) {
    fprintf(stderr, "format failed: %s\n", err.message);
    dlb_strbuf_free(&sb);
    return NULL;
  }
  return sb.data;
}

#define EXPECT_FORMAT(arr, expected)                                                               \
  do {                                                                                             \
    char *got_ = fmt(arr);                                                                         \
    CHECK(got_ != NULL);                                                                           \
    CHECK_EQ_STR(got_ ? got_ : "(failed)", expected);                                              \
    free(got_);                                                                                    \
  } while (0)

/* The text of one scalar, in a static buffer. */
static const char *scalar_text(dlb_dtype dtype, dlb_scalar v) {
  static char text[128];
  dlb_strbuf sb;
  dlb_strbuf_init(&sb);
  dlb_format_scalar(&sb, dtype, &v);
  snprintf(text, sizeof text, "%s", sb.data ? sb.data : "(null)");
  dlb_strbuf_free(&sb);
  return text;
}

static void test_strbuf(void) {
  dlb_strbuf sb;
  dlb_strbuf_init(&sb);
  CHECK(sb.data == NULL && sb.len == 0 && !sb.failed);
  dlb_strbuf_add(&sb, NULL, 0); /* any add makes data a C string */
  CHECK(sb.data != NULL);
  CHECK_EQ_STR(sb.data, "");
  dlb_strbuf_add(&sb, "abXYZ", 2);
  dlb_strbuf_printf(&sb, "%d-%s", 12, "x");
  CHECK_EQ_STR(sb.data, "ab12-x");
  CHECK_EQ_INT(sb.len, 6);
  dlb_strbuf_printf(&sb, "%*s|", 1000, "r"); /* grows several times */
  CHECK_EQ_INT(sb.len, 6 + 1001);
  CHECK(sb.data[6 + 999] == 'r' && sb.data[6 + 1000] == '|' && sb.data[6 + 1001] == '\0');
  CHECK(sb.capacity > sb.len);
  size_t len = sb.len;
  dlb_strbuf_add(&sb, "x", SIZE_MAX); /* impossible size: fails without reading */
  CHECK(sb.failed);
  CHECK_EQ_INT(sb.len, len);
  CHECK(sb.data[len] == '\0');
  dlb_strbuf_add(&sb, "more", 4); /* a failed buffer stays as it was */
  dlb_strbuf_printf(&sb, "%s", "more");
  CHECK_EQ_INT(sb.len, len);
  dlb_strbuf_free(&sb);
  CHECK(sb.data == NULL && sb.len == 0 && sb.capacity == 0 && !sb.failed);

  dlb_strbuf_init(&sb);
  dlb_strbuf_printf(&sb, "%s", ""); /* an empty printf still terminates */
  CHECK(sb.data != NULL && sb.data[0] == '\0');
  dlb_strbuf_free(&sb);
}

static void test_scalars(void) {
  CHECK_EQ_STR(scalar_text(DLB_FLOAT64, s_float(1.0)), "1.");
  CHECK_EQ_STR(scalar_text(DLB_FLOAT64, s_float(2.5)), "2.5");
  CHECK_EQ_STR(scalar_text(DLB_FLOAT64, s_float(-0.0)), "-0.");
  CHECK_EQ_STR(scalar_text(DLB_FLOAT64, s_float(1e20)), "1e+20");
  CHECK_EQ_STR(scalar_text(DLB_FLOAT64, s_float(1e-5)), "1e-05");
  CHECK_EQ_STR(scalar_text(DLB_FLOAT64, s_float(123456789.0)), "1.2345679e+08");
  CHECK_EQ_STR(scalar_text(DLB_FLOAT64, s_float(1.0 / 3)), "0.33333333");
  CHECK_EQ_STR(scalar_text(DLB_FLOAT64, s_float(-1.2345678e-308)), "-1.2345678e-308");
  CHECK_EQ_STR(scalar_text(DLB_FLOAT64, s_float(NAN)), "nan");
  CHECK_EQ_STR(scalar_text(DLB_FLOAT64, s_float(-NAN)), "nan");
  CHECK_EQ_STR(scalar_text(DLB_FLOAT64, s_float(INFINITY)), "inf");
  CHECK_EQ_STR(scalar_text(DLB_FLOAT64, s_float(-INFINITY)), "-inf");
  CHECK_EQ_STR(scalar_text(DLB_FLOAT32, s_float((double)0.1f)), "0.1");

  CHECK_EQ_STR(scalar_text(DLB_COMPLEX128, s_complex(1, 2)), "1.+2.j");
  CHECK_EQ_STR(scalar_text(DLB_COMPLEX128, s_complex(0, -1.5)), "0.-1.5j");
  CHECK_EQ_STR(scalar_text(DLB_COMPLEX128, s_complex(NAN, INFINITY)), "nan+infj");
  CHECK_EQ_STR(scalar_text(DLB_COMPLEX128, s_complex(NAN, NAN)), "nan+nanj");
  CHECK_EQ_STR(scalar_text(DLB_COMPLEX128, s_complex(1, -INFINITY)), "1.-infj");
  CHECK_EQ_STR(scalar_text(DLB_COMPLEX128, s_complex(0, -0.0)), "0.-0.j");
  CHECK_EQ_STR(scalar_text(DLB_COMPLEX128, s_complex(-1.2345678e-308, -1.2345678e-308)),
               "-1.2345678e-308-1.2345678e-308j");

  dlb_scalar v = {.kind = DLB_SCALAR_INT};
  v.v.i = INT64_MIN;
  CHECK_EQ_STR(scalar_text(DLB_INT64, v), "-9223372036854775808");
  v.kind = DLB_SCALAR_UINT;
  v.v.u = UINT64_MAX;
  CHECK_EQ_STR(scalar_text(DLB_UINT64, v), "18446744073709551615");
  v.kind = DLB_SCALAR_BOOL;
  v.v.b = 1;
  CHECK_EQ_STR(scalar_text(DLB_BOOL, v), "true");
  v.v.b = 0;
  CHECK_EQ_STR(scalar_text(DLB_BOOL, v), "false");
}

static void test_float_1d(void) {
  host_array h;
  double d[] = {1, 2, 3};
  EXPECT_FORMAT(wrap(&h, d, sizeof d, DLB_FLOAT64, 1, (int64_t[]){3}, NULL, 0),
                "array([1., 2., 3.], shape=(3,), dtype=float64, device=cpu:0)");
  double e[] = {1.5, -2.25, 0.1};
  EXPECT_FORMAT(wrap(&h, e, sizeof e, DLB_FLOAT64, 1, (int64_t[]){3}, NULL, 0),
                "array([  1.5, -2.25,   0.1], shape=(3,), dtype=float64, device=cpu:0)");
  double special[] = {NAN, INFINITY, -INFINITY, -NAN, -0.0, 0.0, 1e20};
  EXPECT_FORMAT(wrap(&h, special, sizeof special, DLB_FLOAT64, 1, (int64_t[]){7}, NULL, 0),
                "array([  nan,   inf,  -inf,   nan,   -0.,    0., 1e+20], shape=(7,), "
                "dtype=float64, device=cpu:0)");
  double zeros[] = {-0.0, 0.0};
  EXPECT_FORMAT(wrap(&h, zeros, sizeof zeros, DLB_FLOAT64, 1, (int64_t[]){2}, NULL, 0),
                "array([-0.,  0.], shape=(2,), dtype=float64, device=cpu:0)");
  float f[] = {0.1f, -3.0f};
  EXPECT_FORMAT(wrap(&h, f, sizeof f, DLB_FLOAT32, 1, (int64_t[]){2}, NULL, 0),
                "array([0.1, -3.], shape=(2,), dtype=float32, device=cpu:0)");
  uint16_t half[] = {0x3C00, 0xC000, 0x3800, 0x7C00}; /* 1, -2, 0.5, inf */
  EXPECT_FORMAT(wrap(&h, half, sizeof half, DLB_FLOAT16, 1, (int64_t[]){4}, NULL, 0),
                "array([ 1., -2., 0.5, inf], shape=(4,), dtype=float16, device=cpu:0)");
  uint16_t bf[] = {0x3F80, 0xC040}; /* 1, -3 */
  EXPECT_FORMAT(wrap(&h, bf, sizeof bf, DLB_BFLOAT16, 1, (int64_t[]){2}, NULL, 0),
                "array([ 1., -3.], shape=(2,), dtype=bfloat16, device=cpu:0)");
}

static void test_int_bool_complex_1d(void) {
  host_array h;
  int64_t i[] = {1, 100};
  EXPECT_FORMAT(wrap(&h, i, sizeof i, DLB_INT64, 1, (int64_t[]){2}, NULL, 0),
                "array([  1, 100], shape=(2,), dtype=int64, device=cpu:0)");
  int8_t i8[] = {-128, 5, 127};
  EXPECT_FORMAT(wrap(&h, i8, sizeof i8, DLB_INT8, 1, (int64_t[]){3}, NULL, 0),
                "array([-128,    5,  127], shape=(3,), dtype=int8, device=cpu:0)");
  uint16_t u16[] = {65535, 0};
  EXPECT_FORMAT(wrap(&h, u16, sizeof u16, DLB_UINT16, 1, (int64_t[]){2}, NULL, 0),
                "array([65535,     0], shape=(2,), dtype=uint16, device=cpu:0)");
  uint64_t u64[] = {UINT64_MAX, 1};
  EXPECT_FORMAT(wrap(&h, u64, sizeof u64, DLB_UINT64, 1, (int64_t[]){2}, NULL, 0),
                "array([18446744073709551615,                    1], shape=(2,), dtype=uint64, "
                "device=cpu:0)");
  int64_t lo[] = {INT64_MIN, INT64_MAX};
  EXPECT_FORMAT(wrap(&h, lo, sizeof lo, DLB_INT64, 1, (int64_t[]){2}, NULL, 0),
                "array([-9223372036854775808,  9223372036854775807], shape=(2,), dtype=int64, "
                "device=cpu:0)");
  uint8_t b[] = {1, 0, 1};
  EXPECT_FORMAT(wrap(&h, b, sizeof b, DLB_BOOL, 1, (int64_t[]){3}, NULL, 0),
                "array([ true, false,  true], shape=(3,), dtype=bool, device=cpu:0)");
  double c[] = {1, 2, 0, -1.5};
  EXPECT_FORMAT(wrap(&h, c, sizeof c, DLB_COMPLEX128, 1, (int64_t[]){2}, NULL, 0),
                "array([ 1.+2.j, 0.-1.5j], shape=(2,), dtype=complex128, device=cpu:0)");
  float c64[] = {NAN, INFINITY};
  EXPECT_FORMAT(wrap(&h, c64, sizeof c64, DLB_COMPLEX64, 1, (int64_t[]){1}, NULL, 0),
                "array([nan+infj], shape=(1,), dtype=complex64, device=cpu:0)");
}

static void test_layout(void) {
  host_array h;
  int64_t v[24];
  for (int i = 0; i < 24; i++) v[i] = i;
  int64_t m[] = {1, 2, 3, 4, 5, 6};
  EXPECT_FORMAT(wrap(&h, m, sizeof m, DLB_INT64, 2, (int64_t[]){2, 3}, NULL, 0),
                "array([[1, 2, 3],\n"
                "       [4, 5, 6]], shape=(2, 3), dtype=int64, device=cpu:0)");
  EXPECT_FORMAT(wrap(&h, v, sizeof v, DLB_INT64, 3, (int64_t[]){2, 2, 3}, NULL, 0),
                "array([[[ 0,  1,  2],\n"
                "        [ 3,  4,  5]],\n"
                "\n"
                "       [[ 6,  7,  8],\n"
                "        [ 9, 10, 11]]], shape=(2, 2, 3), dtype=int64, device=cpu:0)");
  /* NumPy: one newline per remaining dimension, so two blank lines at the top of 4-D. */
  EXPECT_FORMAT(wrap(&h, v, sizeof v, DLB_INT64, 4, (int64_t[]){2, 2, 1, 1}, NULL, 0),
                "array([[[[0]],\n"
                "\n"
                "        [[1]]],\n"
                "\n"
                "\n"
                "       [[[2]],\n"
                "\n"
                "        [[3]]]], shape=(2, 2, 1, 1), dtype=int64, device=cpu:0)");
  double d[] = {1, 0.5, -1, 2};
  EXPECT_FORMAT(wrap(&h, d, sizeof d, DLB_FLOAT64, 2, (int64_t[]){2, 2}, NULL, 0),
                "array([[ 1., 0.5],\n"
                "       [-1.,  2.]], shape=(2, 2), dtype=float64, device=cpu:0)");
  EXPECT_FORMAT(wrap(&h, v, sizeof v, DLB_INT64, 2, (int64_t[]){1, 1}, NULL, 0),
                "array([[0]], shape=(1, 1), dtype=int64, device=cpu:0)");
}

static void test_zero_d_and_empty(void) {
  host_array h;
  int64_t five = 5;
  EXPECT_FORMAT(wrap(&h, &five, sizeof five, DLB_INT64, 0, NULL, NULL, 0),
                "array(5, shape=(), dtype=int64, device=cpu:0)");
  double x = 2.5;
  EXPECT_FORMAT(wrap(&h, &x, sizeof x, DLB_FLOAT64, 0, NULL, NULL, 0),
                "array(2.5, shape=(), dtype=float64, device=cpu:0)");
  /* Empty arrays read nothing: no host memory at all is fine. */
  EXPECT_FORMAT(wrap(&h, NULL, 0, DLB_FLOAT64, 1, (int64_t[]){0}, NULL, 0),
                "array([], shape=(0,), dtype=float64, device=cpu:0)");
  EXPECT_FORMAT(wrap(&h, NULL, 0, DLB_FLOAT64, 2, (int64_t[]){2, 0}, NULL, 0),
                "array([[], []], shape=(2, 0), dtype=float64, device=cpu:0)");
  EXPECT_FORMAT(wrap(&h, NULL, 0, DLB_INT32, 2, (int64_t[]){0, 3}, NULL, 0),
                "array([], shape=(0, 3), dtype=int32, device=cpu:0)");
  EXPECT_FORMAT(wrap(&h, NULL, 0, DLB_BOOL, 3, (int64_t[]){2, 3, 0}, NULL, 0),
                "array([[[], [], []], [[], [], []]], shape=(2, 3, 0), dtype=bool, device=cpu:0)");
  /* Many empty rows summarise like elements. */
  EXPECT_FORMAT(wrap(&h, NULL, 0, DLB_INT64, 2, (int64_t[]){5000, 0}, NULL, 0),
                "array([[], [], [], ..., [], [], []], shape=(5000, 0), dtype=int64, "
                "device=cpu:0)");
}

static void test_strided_views(void) {
  host_array h;
  int64_t v[] = {0, 1, 2, 3, 4, 5};
  /* reversed: v[5], v[4], ... */
  EXPECT_FORMAT(wrap(&h, v, sizeof v, DLB_INT64, 1, (int64_t[]){6}, (int64_t[]){-1}, 5 * 8),
                "array([5, 4, 3, 2, 1, 0], shape=(6,), dtype=int64, device=cpu:0)");
  /* every other element, backwards, from v[4] */
  EXPECT_FORMAT(wrap(&h, v, sizeof v, DLB_INT64, 1, (int64_t[]){3}, (int64_t[]){-2}, 4 * 8),
                "array([4, 2, 0], shape=(3,), dtype=int64, device=cpu:0)");
  /* transpose of the 2x3 matrix */
  EXPECT_FORMAT(wrap(&h, v, sizeof v, DLB_INT64, 2, (int64_t[]){3, 2}, (int64_t[]){1, 3}, 0),
                "array([[0, 3],\n"
                "       [1, 4],\n"
                "       [2, 5]], shape=(3, 2), dtype=int64, device=cpu:0)");
  /* both dims of the 2x3 matrix reversed */
  EXPECT_FORMAT(wrap(&h, v, sizeof v, DLB_INT64, 2, (int64_t[]){2, 3}, (int64_t[]){-3, -1}, 5 * 8),
                "array([[5, 4, 3],\n"
                "       [2, 1, 0]], shape=(2, 3), dtype=int64, device=cpu:0)");
  /* expanded: stride 0 */
  int64_t seven = 7;
  EXPECT_FORMAT(wrap(&h, &seven, 8, DLB_INT64, 2, (int64_t[]){2, 3}, (int64_t[]){0, 0}, 0),
                "array([[7, 7, 7],\n"
                "       [7, 7, 7]], shape=(2, 3), dtype=int64, device=cpu:0)");
  EXPECT_FORMAT(wrap(&h, v, sizeof v, DLB_INT64, 2, (int64_t[]){2, 3}, (int64_t[]){0, 1}, 8),
                "array([[1, 2, 3],\n"
                "       [1, 2, 3]], shape=(2, 3), dtype=int64, device=cpu:0)");
}

static void test_summarised(void) {
  host_array h;
  int64_t *v = malloc(10000 * sizeof *v);
  CHECK(v != NULL);
  if (v == NULL) return;
  for (int i = 0; i < 10000; i++) v[i] = i;
  EXPECT_FORMAT(wrap(&h, v, 10000 * 8, DLB_INT64, 1, (int64_t[]){10000}, NULL, 0),
                "array([   0,    1,    2, ..., 9997, 9998, 9999], shape=(10000,), dtype=int64, "
                "device=cpu:0)");
  /* 1000 elements is not above the threshold: all print. */
  char *all = fmt(wrap(&h, v, 1000 * 8, DLB_INT64, 1, (int64_t[]){1000}, NULL, 0));
  CHECK(all != NULL && strstr(all, "...") == NULL && strstr(all, " 500, 501,") != NULL);
  free(all);

  /* Unprinted elements hold a wide poison value: neither shown nor widening the columns. */
  for (int r = 0; r < 100; r++)
    for (int col = 0; col < 100; col++) {
      int shown = (r < 3 || r >= 97) && (col < 3 || col >= 97);
      v[r * 100 + col] = shown ? r * 100 + col : -999999999;
    }
  EXPECT_FORMAT(wrap(&h, v, 10000 * 8, DLB_INT64, 2, (int64_t[]){100, 100}, NULL, 0),
                "array([[   0,    1,    2, ...,   97,   98,   99],\n"
                "       [ 100,  101,  102, ...,  197,  198,  199],\n"
                "       [ 200,  201,  202, ...,  297,  298,  299],\n"
                "       ...,\n"
                "       [9700, 9701, 9702, ..., 9797, 9798, 9799],\n"
                "       [9800, 9801, 9802, ..., 9897, 9898, 9899],\n"
                "       [9900, 9901, 9902, ..., 9997, 9998, 9999]], shape=(100, 100), "
                "dtype=int64, device=cpu:0)");

  /* Only the long dimension is cut: rows of 2 show both. */
  for (int i = 0; i < 2000; i++) v[i] = i % 1000;
  EXPECT_FORMAT(wrap(&h, v, 2000 * 8, DLB_INT64, 2, (int64_t[]){2, 1000}, NULL, 0),
                "array([[  0,   1,   2, ..., 997, 998, 999],\n"
                "       [  0,   1,   2, ..., 997, 998, 999]], shape=(2, 1000), dtype=int64, "
                "device=cpu:0)");

  /* 3-D: the blank line also separates the "..." block. */
  for (int i = 0; i < 10000; i++) v[i] = i % 10;
  EXPECT_FORMAT(wrap(&h, v, 10000 * 8, DLB_INT64, 3, (int64_t[]){1000, 1, 10}, NULL, 0),
                "array([[[0, 1, 2, ..., 7, 8, 9]],\n\n"
                "       [[0, 1, 2, ..., 7, 8, 9]],\n\n"
                "       [[0, 1, 2, ..., 7, 8, 9]],\n\n"
                "       ...,\n\n"
                "       [[0, 1, 2, ..., 7, 8, 9]],\n\n"
                "       [[0, 1, 2, ..., 7, 8, 9]],\n\n"
                "       [[0, 1, 2, ..., 7, 8, 9]]], shape=(1000, 1, 10), dtype=int64, "
                "device=cpu:0)");
  free(v);

  /* 10^7 expanded elements over one value: cheap because only 6 are read. */
  int64_t fortytwo = 42;
  EXPECT_FORMAT(wrap(&h, &fortytwo, 8, DLB_INT64, 1, (int64_t[]){10000000}, (int64_t[]){0}, 0),
                "array([42, 42, 42, ..., 42, 42, 42], shape=(10000000,), dtype=int64, "
                "device=cpu:0)");
  int64_t row[] = {1, 2, 3};
  EXPECT_FORMAT(
      wrap(&h, row, sizeof row, DLB_INT64, 2, (int64_t[]){1000000, 3}, (int64_t[]){0, 1}, 0),
      "array([[1, 2, 3],\n"
      "       [1, 2, 3],\n"
      "       [1, 2, 3],\n"
      "       ...,\n"
      "       [1, 2, 3],\n"
      "       [1, 2, 3],\n"
      "       [1, 2, 3]], shape=(1000000, 3), dtype=int64, device=cpu:0)");
}

#ifdef HAVE_MMAP
/* Makes the page holding element i of an int64 block readable and stores value there. */
static void expose(char *base, size_t page, int64_t i, int64_t value) {
  char *at = base + i * 8;
  char *start = base + ((size_t)(at - base) / page) * page;
  CHECK(mprotect(start, page, PROT_READ | PROT_WRITE) == 0);
  memcpy(at, &value, 8);
}

/* 10^7 int64 elements where only the printed ones' pages are readable: reading
 * any other element faults, so this proves that only printed elements are read. */
static void test_reads_only_printed(void) {
  host_array h;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t nbytes = (size_t)10000000 * 8;
  char *base = mmap(NULL, nbytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  CHECK(base != MAP_FAILED);
  if (base == MAP_FAILED) return;
  const int64_t edge[] = {0, 1, 2, -3, -2, -1};
  for (int k = 0; k < 6; k++)
    expose(base, page, edge[k] < 0 ? 10000000 + edge[k] : edge[k],
           edge[k] < 0 ? 10000000 + edge[k] : edge[k]);
  EXPECT_FORMAT(wrap(&h, base, nbytes, DLB_INT64, 1, (int64_t[]){10000000}, NULL, 0),
                "array([      0,       1,       2, ..., 9999997, 9999998, 9999999], "
                "shape=(10000000,), dtype=int64, device=cpu:0)");

  /* The same block as 1000 x 10000. */
  for (int r = 0; r < 6; r++)
    for (int col = 0; col < 6; col++) {
      int64_t rr = edge[r] < 0 ? 1000 + edge[r] : edge[r];
      int64_t cc = edge[col] < 0 ? 10000 + edge[col] : edge[col];
      expose(base, page, rr * 10000 + cc, rr * 10000 + cc);
    }
  EXPECT_FORMAT(wrap(&h, base, nbytes, DLB_INT64, 2, (int64_t[]){1000, 10000}, NULL, 0),
                "array([[      0,       1,       2, ...,    9997,    9998,    9999],\n"
                "       [  10000,   10001,   10002, ...,   19997,   19998,   19999],\n"
                "       [  20000,   20001,   20002, ...,   29997,   29998,   29999],\n"
                "       ...,\n"
                "       [9970000, 9970001, 9970002, ..., 9979997, 9979998, 9979999],\n"
                "       [9980000, 9980001, 9980002, ..., 9989997, 9989998, 9989999],\n"
                "       [9990000, 9990001, 9990002, ..., 9999997, 9999998, 9999999]], "
                "shape=(1000, 10000), dtype=int64, device=cpu:0)");
  /* Its transpose, reversed along both dims (negative strides). */
  EXPECT_FORMAT(wrap(&h, base, nbytes, DLB_INT64, 2, (int64_t[]){10000, 1000},
                     (int64_t[]){-1, -10000}, nbytes - 8),
                "array([[9999999, 9989999, 9979999, ...,   29999,   19999,    9999],\n"
                "       [9999998, 9989998, 9979998, ...,   29998,   19998,    9998],\n"
                "       [9999997, 9989997, 9979997, ...,   29997,   19997,    9997],\n"
                "       ...,\n"
                "       [9990002, 9980002, 9970002, ...,   20002,   10002,       2],\n"
                "       [9990001, 9980001, 9970001, ...,   20001,   10001,       1],\n"
                "       [9990000, 9980000, 9970000, ...,   20000,   10000,       0]], "
                "shape=(10000, 1000), dtype=int64, device=cpu:0)");
  munmap(base, nbytes);
}
#endif

static void test_safety_cap(void) {
  host_array h;
  int64_t one = 1;
  int64_t shape[32], strides[32];
  for (int i = 0; i < 32; i++) {
    shape[i] = 2;
    strides[i] = 0;
  }
  /* 2^32 elements of 32 dims of 2: summarising cuts nothing, so no elements print. */
  char expected[256] = "array([...], shape=(2";
  for (int i = 1; i < 32; i++) strcat(expected, ", 2");
  strcat(expected, "), dtype=int64, device=cpu:0)");
  EXPECT_FORMAT(wrap(&h, &one, 8, DLB_INT64, 32, shape, strides, 0), expected);
  CHECK_EQ_INT(h.a.numel, (int64_t)1 << 32);
  /* 2^14 = 16384 printed elements is over the cap too ... */
  char *s = fmt(wrap(&h, &one, 8, DLB_INT64, 14, shape, strides, 0));
  CHECK(s != NULL && strncmp(s, "array([...], shape=(2, 2,", 25) == 0);
  free(s);
  /* ... but 2^13 = 8192 (summarised, as it is above 1000) print in full. */
  s = fmt(wrap(&h, &one, 8, DLB_INT64, 13, shape, strides, 0));
  CHECK(s != NULL);
  if (s != NULL) {
    size_t ones = 0;
    for (const char *p = s; *p; p++) ones += *p == '1';
    CHECK_EQ_INT(ones, 8192);
    CHECK(strstr(s, "...") == NULL);
    /* rows align under their bracket: 6 + 12 and 6 + 11 spaces */
    const char *head = "array([[[[[[[[[[[[[1, 1],\n"
                       "                  [1, 1]],\n"
                       "\n"
                       "                 [[1, 1],\n";
    CHECK(strncmp(s, head, strlen(head)) == 0);
  }
  free(s);
}

static void test_errors_and_appending(void) {
  host_array h;
  dlb_strbuf sb;
  dlb_error err;
  int64_t v[] = {1, 2};

  dlb_strbuf_init(&sb);
  dlb_strbuf_add(&sb, "x = ", 4);
  CHECK_EQ_INT(dlb_array_format(wrap(&h, v, sizeof v, DLB_INT64, 1, (int64_t[]){2}, NULL, 0),
                                "cuda:1", &sb, &err),
               DLB_OK);
  CHECK_EQ_STR(sb.data, "x = array([1, 2], shape=(2,), dtype=int64, device=cuda:1)");
  dlb_strbuf_free(&sb);

  /* Without a device name the device part is left out. */
  dlb_strbuf_init(&sb);
  CHECK_EQ_INT(dlb_array_format(&h.a, NULL, &sb, &err), DLB_OK);
  CHECK_EQ_STR(sb.data, "array([1, 2], shape=(2,), dtype=int64)");
  dlb_strbuf_free(&sb);

  /* A released array. */
  dlb_strbuf_init(&sb);
  h.a.buffer = NULL;
  memset(&err, 0, sizeof err);
  CHECK_EQ_INT(dlb_array_format(&h.a, "cpu:0", &sb, &err), DLB_E_DELETED);
  CHECK_EQ_INT(err.code, DLB_E_DELETED);
  CHECK(sb.len == 0);
  CHECK_EQ_INT(dlb_array_format(&h.a, "cpu:0", &sb, NULL), DLB_E_DELETED);

  /* Memory that is not host-addressable prints through the backend's
   * copy_to_host, one read per printed element... */
  int64_t device_mem[2] = {7, -8};
  dlb_backend engine = {.ops = {.name = "engine", .copy_to_host = engine_copy_to_host},
                        .ctx = NULL};
  strcpy(engine.name, "engine");
  wrap(&h, NULL, sizeof device_mem, DLB_INT64, 1, (int64_t[]){2}, NULL, 0);
  h.buf.handle = device_mem;
  h.buf.backend = &engine;
  engine_reads = 0;
  dlb_strbuf_init(&sb);
  CHECK_EQ_INT(dlb_array_format(&h.a, "engine:0", &sb, &err), DLB_OK);
  CHECK_EQ_STR(sb.data, "array([ 7, -8], shape=(2,), dtype=int64, device=engine:0)");
  CHECK_EQ_INT(engine_reads, 4); /* two passes: widths, then text */
  dlb_strbuf_free(&sb);
  /* ... and when a read fails, the backend's error comes back and nothing is appended. */
  engine_fail = 1;
  dlb_strbuf_init(&sb);
  memset(&err, 0, sizeof err);
  CHECK_EQ_INT(dlb_array_format(&h.a, "engine:0", &sb, &err), DLB_E_BACKEND_FAILURE);
  CHECK_EQ_INT(err.code, DLB_E_BACKEND_FAILURE);
  CHECK_EQ_STR(err.backend, "engine");
  CHECK(sb.len == 0);
  engine_fail = 0;
  /* ... but an empty or capped one needs no memory. */
  wrap(&h, NULL, 0, DLB_INT64, 1, (int64_t[]){0}, NULL, 0);
  CHECK_EQ_INT(dlb_array_format(&h.a, "engine:0", &sb, &err), DLB_OK);
  CHECK_EQ_STR(sb.data, "array([], shape=(0,), dtype=int64, device=engine:0)");
  dlb_strbuf_free(&sb);
}

int main(void) {
  test_strbuf();
  test_scalars();
  test_float_1d();
  test_int_bool_complex_1d();
  test_layout();
  test_zero_d_and_empty();
  test_strided_views();
  test_summarised();
#ifdef HAVE_MMAP
  test_reads_only_printed();
#endif
  test_safety_cap();
  test_errors_and_appending();
  return check_done("test_format");
}
