/* test_npy.c -- NumPy .npy files (src/files/npy.c), no Lua: headers byte by
 * byte as NumPy 1.24 writes them (the literals below are np.save's output),
 * every variant of the dict np.save has written, every hostile header and
 * its code, arrays from memory, buffers and files (views, copies,
 * byte-swapping, Fortran order, bool bytes), and saving in every layout. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/array.h"
#include "core/copy.h"
#include "files/mapping.h"
#include "files/npy.h"
#define FIXTURES_CPU
#include "fixtures.h"

/* ------------------------------------------------------------------------ */
/* Building files */

/* A .npy file in a malloc'd block: version major.0, the dict text (padded
 * with spaces and a newline to a multiple of 64, as NumPy does, unless
 * pad is 0), then ndata bytes of data. */
typedef struct npy_file {
  unsigned char *bytes;
  size_t size;
} npy_file;

static npy_file make_npy(int major, const char *dict, int pad, const void *data, size_t ndata) {
  npy_file f;
  size_t pre = major == 1 ? 10 : 12, n = strlen(dict), hlen = n;
  if (pad) hlen = (pre + n + 1 + 63) / 64 * 64 - pre;
  f.size = pre + hlen + ndata;
  f.bytes = malloc(f.size ? f.size : 1);
  memcpy(f.bytes, "\x93NUMPY", 6);
  f.bytes[6] = (unsigned char)major;
  f.bytes[7] = 0;
  f.bytes[8] = (unsigned char)(hlen & 0xff);
  f.bytes[9] = (unsigned char)(hlen >> 8);
  if (major != 1) {
    f.bytes[10] = (unsigned char)(hlen >> 16);
    f.bytes[11] = (unsigned char)(hlen >> 24);
  }
  memcpy(f.bytes + pre, dict, n);
  if (pad) {
    memset(f.bytes + pre + n, ' ', hlen - n);
    f.bytes[pre + hlen - 1] = '\n';
  }
  if (ndata) memcpy(f.bytes + pre + hlen, data, ndata);
  return f;
}

/* The dict of a file with the given descr, fortran_order and shape texts. */
static const char *dict_of(const char *descr, const char *fortran, const char *shape) {
  static char text[512];
  snprintf(text, sizeof text, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, fortran,
           shape);
  return text;
}

/* The status of parsing a version-1.0 file with this dict and enough data. */
static dlb_status parse_dict_status(int major, const char *dict) {
  static unsigned char data[4096];
  npy_file f = make_npy(major, dict, 1, data, sizeof data);
  dlb_npy_header h;
  dlb_status st = dlb_npy_parse(f.bytes, f.size, f.size, &h, &err);
  free(f.bytes);
  return st;
}

/* A scratch directory for files, and paths in it. */
static char scratch[64];

static const char *path_of(const char *name) {
  static char path[128];
  snprintf(path, sizeof path, "%s/%s", scratch, name);
  return path;
}

static void write_bytes(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  CHECK_EQ_INT(fwrite(p, 1, n, f), n);
  fclose(f);
}

/* The contents of a file (malloc'd; *n its size). */
static unsigned char *read_bytes(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  unsigned char *p;
  long size;
  *n = 0;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  fseek(f, 0, SEEK_SET);
  p = malloc(size > 0 ? (size_t)size : 1);
  *n = fread(p, 1, (size_t)size, f);
  fclose(f);
  return p;
}

/* ------------------------------------------------------------------------ */
/* Headers as NumPy writes them */

/* NumPy 1.24's header for these arrays (in C order, or Fortran order when
 * fortran): the dict, spaces, a newline at byte 127. */
static void expect_header_order(dlb_dtype dtype, int ndim, const int64_t *shape, int fortran,
                                const char *dict) {
  char got[DLB_NPY_HEADER_MAX], want[128];
  size_t len = 0;
  memcpy(want, "\x93NUMPY\x01\x00v\x00", 10);
  memset(want + 10, ' ', sizeof want - 10);
  memcpy(want + 10, dict, strlen(dict));
  want[127] = '\n';
  CHECK_EQ_INT(dlb_npy_format_header(dtype, ndim, shape, fortran, got, &len, &err), DLB_OK);
  CHECK_EQ_INT(len, 128);
  CHECK(memcmp(got, want, 128) == 0);
  if (memcmp(got, want, 128) != 0) fprintf(stderr, "  got: %.*s\n", (int)len, got);
}

static void expect_header(dlb_dtype dtype, int ndim, const int64_t *shape, const char *dict) {
  expect_header_order(dtype, ndim, shape, 0, dict);
}

static void test_format_header(void) {
  int64_t s34[] = {3, 4}, s7[] = {7}, s0[] = {0}, s234[] = {2, 3, 4}, big[] = {12345678901, 0};
  expect_header(DLB_FLOAT64, 2, s34, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }");
  expect_header(DLB_BOOL, 0, s34, "{'descr': '|b1', 'fortran_order': False, 'shape': (), }");
  expect_header(DLB_UINT8, 1, s0, "{'descr': '|u1', 'fortran_order': False, 'shape': (0,), }");
  expect_header(DLB_COMPLEX64, 1, s7, "{'descr': '<c8', 'fortran_order': False, 'shape': (7,), }");
  expect_header(DLB_FLOAT16, 3, s234,
                "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3, 4), }");
  expect_header(DLB_INT16, 2, big,
                "{'descr': '<i2', 'fortran_order': False, 'shape': (12345678901, 0), }");
  /* np.save(np.zeros((3, 4)).T): a transposed matrix is written as it lies */
  expect_header_order(DLB_FLOAT64, 2, s34, 1,
                      "{'descr': '<f8', 'fortran_order': True, 'shape': (3, 4), }");
  {
    /* Every dtype, in either order: the header parses back to itself. */
    static const char *const descrs[DLB_DTYPE_COUNT] = {"|b1", "|i1", "<i2", "<i4", "<i8",
                                                        "|u1", "<u2", "<u4", "<u8", "<f2",
                                                        NULL,  "<f4", "<f8", "<c8", "<c16"};
    for (int t = 0; t < DLB_DTYPE_COUNT; t++) {
      char buf[DLB_NPY_HEADER_MAX];
      size_t len;
      dlb_npy_header h;
      if (t == DLB_BFLOAT16) {
        CHECK_EQ_INT(dlb_npy_format_header((dlb_dtype)t, 1, s7, 0, buf, &len, &err), DLB_E_DTYPE);
        CHECK(strstr(err.hint, "astype(\"float32\")") != NULL);
        continue;
      }
      CHECK_EQ_INT(dlb_npy_format_header((dlb_dtype)t, 2, s34, t % 2, buf, &len, &err), DLB_OK);
      CHECK(memcmp(buf + 21, descrs[t], strlen(descrs[t])) == 0); /* after "{'descr': '" */
      CHECK_EQ_INT(
          dlb_npy_parse(buf, len, len + 12 * dlb_dtype_get((dlb_dtype)t)->itemsize, &h, &err),
          DLB_OK);
      CHECK_EQ_INT(h.dtype, t);
      CHECK_EQ_INT(h.ndim, 2);
      CHECK_EQ_INT(h.data_offset, len);
      CHECK_EQ_INT(h.swapped, 0);
      CHECK_EQ_INT(h.fortran_order, t % 2);
    }
  }
  {
    /* 32 dims of 19 digits still fit a version 1.0 header. */
    int64_t wide[32];
    char buf[DLB_NPY_HEADER_MAX];
    size_t len;
    for (int d = 0; d < 32; d++) wide[d] = d ? 0 : INT64_MAX;
    CHECK_EQ_INT(dlb_npy_format_header(DLB_UINT8, 32, wide, 0, buf, &len, &err), DLB_OK);
    CHECK_EQ_INT(len % 64, 0);
    CHECK_EQ_INT(buf[6], 1);
    CHECK_EQ_INT(buf[len - 1], '\n');
  }
}

/* ------------------------------------------------------------------------ */
/* Parsing what NumPy writes, in every variant */

static void test_parse_variants(void) {
  static unsigned char data[256];
  dlb_npy_header h;
  struct {
    int major;
    const char *dict;
    dlb_dtype dtype;
    int ndim, fortran;
    int64_t d0;
  } ok[] = {
      {1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }", DLB_FLOAT64, 2, 0, 3},
      {2, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }", DLB_FLOAT64, 2, 0, 3},
      {3, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }", DLB_FLOAT64, 2, 0, 3},
      {1, "{\"descr\": \"<i4\", \"fortran_order\": True, \"shape\": (5,)}", DLB_INT32, 1, 1, 5},
      {1, "{'shape': (2, 3), 'fortran_order': False, 'descr': '|u1'}", DLB_UINT8, 2, 0, 2},
      {1, "{'descr':'<i2','fortran_order':False,'shape':(2,3,)}", DLB_INT16, 2, 0, 2},
      {1, " { 'descr' : '<i2' ,\n 'fortran_order' : False ,\t'shape' : ( 2 , ) , } \n", DLB_INT16,
       1, 0, 2},
      {1, "{'descr': '<u8', 'fortran_order': False, 'shape': (3L, 4L), }", DLB_UINT64, 2, 0, 3},
      {2, "{'descr': '<u8', 'fortran_order': False, 'shape': (3L,), }", DLB_UINT64, 1, 0, 3},
      {1, "{'descr': '|b1', 'fortran_order': False, 'shape': (), }", DLB_BOOL, 0, 0, 0},
      {1, "{'descr': '<b1', 'fortran_order': False, 'shape': (0,), }", DLB_BOOL, 1, 0, 0},
      {1, "{'descr': '=f4', 'fortran_order': False, 'shape': (0, 5), }", DLB_FLOAT32, 2, 0, 0},
      {1, "{'descr': '>c16', 'fortran_order': False, 'shape': (1,), }", DLB_COMPLEX128, 1, 0, 1},
      {1, "{'descr': '<f2', 'fortran_order': False, 'shape': (00,), }", DLB_FLOAT16, 1, 0, 0},
      {1, "{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }", DLB_INT8, 1, 0, 2},
      {1, "{'descr': '>u1', 'fortran_order': False, 'shape': (2,), }", DLB_UINT8, 1, 0, 2},
  };
  for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
    npy_file f = make_npy(ok[k].major, ok[k].dict, 1, data, sizeof data);
    dlb_status st = dlb_npy_parse(f.bytes, f.size, f.size, &h, &err);
    CHECK_EQ_INT(st, DLB_OK);
    if (st != DLB_OK) fprintf(stderr, "  case %zu: %s\n", k, err.message);
    CHECK_EQ_INT(h.major, ok[k].major);
    CHECK_EQ_INT(h.dtype, ok[k].dtype);
    CHECK_EQ_INT(h.ndim, ok[k].ndim);
    CHECK_EQ_INT(h.fortran_order, ok[k].fortran);
    if (ok[k].ndim) CHECK_EQ_INT(h.shape[0], ok[k].d0);
    CHECK_EQ_INT(h.data_offset, f.size - sizeof data);
    free(f.bytes);
  }
  {
    /* No padding at all, the data right after the dict; bytes after the data ignored. */
    npy_file f = make_npy(1, dict_of("<i4", "False", "(2,)"), 0, data, 9);
    CHECK_EQ_INT(dlb_npy_parse(f.bytes, f.size, f.size, &h, &err), DLB_OK);
    CHECK_EQ_INT(h.nbytes, 8);
    CHECK_EQ_INT(h.data_offset, f.size - 9);
    free(f.bytes);
  }
  {
    /* Byte order: '>' is swapped here (little-endian), '<', '=' and '|' are not. */
    CHECK_EQ_INT(parse_dict_status(1, dict_of(">i4", "False", "(2,)")), DLB_OK);
    npy_file f = make_npy(1, dict_of(">i4", "False", "(2,)"), 1, data, 8);
    CHECK_EQ_INT(dlb_npy_parse(f.bytes, f.size, f.size, &h, &err), DLB_OK);
    CHECK_EQ_INT(h.swapped, 1);
    free(f.bytes);
    f = make_npy(1, dict_of(">u1", "False", "(2,)"), 1, data, 8);
    CHECK_EQ_INT(dlb_npy_parse(f.bytes, f.size, f.size, &h, &err), DLB_OK);
    CHECK_EQ_INT(h.swapped, 0);
    free(f.bytes);
  }
}

/* ------------------------------------------------------------------------ */
/* Hostile headers */

static void expect_dict(dlb_status code, int major, const char *dict) {
  dlb_status st = parse_dict_status(major, dict);
  CHECK_EQ_INT(st, code);
  if (st != code) fprintf(stderr, "  dict: %s\n  message: %s\n", dict, err.message);
}

static void test_hostile_preamble(void) {
  dlb_npy_header h;
  size_t offset;
  npy_file f = make_npy(1, dict_of("<f8", "False", "(1,)"), 1, "12345678", 8);
  unsigned char *good = f.bytes;
  size_t n = f.size;
  CHECK_EQ_INT(dlb_npy_parse(good, n, n, &h, &err), DLB_OK);
  /* Truncated anywhere: FORMAT, never a read past the end (ASan checks the
   * exact-size copies). */
  for (size_t k = 0; k < n; k++) {
    unsigned char *copy = malloc(k ? k : 1);
    memcpy(copy, good, k);
    CHECK_EQ_INT(dlb_npy_parse(k ? copy : NULL, k, k, &h, &err), DLB_E_FORMAT);
    free(copy);
  }
  /* Given fewer bytes than the header while the file is longer. */
  CHECK_EQ_INT(dlb_npy_parse(good, 20, n, &h, &err), DLB_E_FORMAT);
  CHECK(strstr(err.message, "cut short") != NULL);
  /* Magic and version. */
  good[0] = 0x92;
  CHECK_EQ_INT(dlb_npy_parse(good, n, n, &h, &err), DLB_E_FORMAT);
  CHECK(strstr(err.message, "not a .npy file") != NULL);
  good[0] = 0x93;
  for (int v = 0; v < 6; v++) { /* 2.0 and 3.0 would read a 4-byte length here: too long */
    good[6] = (unsigned char)v;
    CHECK_EQ_INT(dlb_npy_parse(good, n, n, &h, &err), v == 1 ? DLB_OK : DLB_E_FORMAT);
  }
  good[6] = 1;
  good[7] = 1; /* 1.1 */
  CHECK_EQ_INT(dlb_npy_parse(good, n, n, &h, &err), DLB_E_FORMAT);
  CHECK(strstr(err.message, "version 1.1") != NULL);
  good[7] = 0;
  /* A header length beyond the file. */
  good[8] = 0xff;
  good[9] = 0xff;
  CHECK_EQ_INT(dlb_npy_data_offset(good, n, n, &offset, &err), DLB_E_FORMAT);
  CHECK(strstr(err.message, "claims 65535 bytes") != NULL);
  /* A header length that cuts the dict: FORMAT. */
  good[8] = 20;
  good[9] = 0;
  CHECK_EQ_INT(dlb_npy_parse(good, n, n, &h, &err), DLB_E_FORMAT);
  free(f.bytes);
  {
    unsigned char v2[16] = "\x93NUMPY\x02\x00\xff\xff\xff\xff{}  ";
    CHECK_EQ_INT(dlb_npy_parse(v2, sizeof v2, sizeof v2, &h, &err), DLB_E_FORMAT);
    CHECK_EQ_INT(dlb_npy_parse(v2, sizeof v2, UINT64_MAX, &h, &err), DLB_E_FORMAT);
  }
}

static void test_hostile_dicts(void) {
  /* Not the dict NumPy writes: FORMAT. */
  const char *format[] = {
      "",
      "[1, 2]",
      "{}",
      "{'descr': '<f8', 'fortran_order': False}",
      "{'descr': '<f8', 'shape': (1,)}",
      "{'fortran_order': False, 'shape': (1,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'extra': 1}",
      "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (1,)}",
      "{'descr': '<f8', 'fortran_order': 0, 'shape': (1,)}",
      "{'descr': '<f8', 'fortran_order': 'False', 'shape': (1,)}",
      "{'descr': '<f8', 'fortran_order': Falsey, 'shape': (1,)}",
      "{'descr': '<f8', 'fortran_order': false, 'shape': (1,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': [1]}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': 1}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': ('1',)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1.0,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (01,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (+1,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1_0,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (0x1,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1,,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1 2)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)}}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)} x",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1,),,}",
      "{'descr': '<f8' 'fortran_order': False, 'shape': (1,)}",
      "{'descr' '<f8', 'fortran_order': False, 'shape': (1,)}",
      "{descr: '<f8', 'fortran_order': False, 'shape': (1,)}",
      "{'descr': <f8, 'fortran_order': False, 'shape': (1,)}",
      "{'descr': '<f8\", 'fortran_order': False, 'shape': (1,)}",
      "{'descr': '<f\\x38', 'fortran_order': False, 'shape': (1,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)} # comment",
      "{'descr': 5, 'fortran_order': False, 'shape': (1,)}",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1,)",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (",
      "{'descr': [('a', '<f8')",
      "{'descr': '",
      "{'descr",
      "{",
  };
  for (size_t k = 0; k < sizeof format / sizeof format[0]; k++)
    expect_dict(DLB_E_FORMAT, 1, format[k]);
  /* Python 2's 'L' only in the versions Python 2 wrote. */
  expect_dict(DLB_E_FORMAT, 3, dict_of("<f8", "False", "(1L,)"));
  expect_dict(DLB_E_FORMAT, 1, dict_of("<f8", "False", "(1LL,)"));
  /* Descr strings NumPy does not know: FORMAT. */
  const char *bad_descr[] = {"",     "<",        "f8",      "<f3", "<f08", "<i3",  "<i16",
                             "<u16", "<b2",      "|i4",     "|f8", "<x8",  "<f8 ", " <f8",
                             "<f8>", "<float64", "float64", "<f",  "<c4",  "<c64", "|b"};
  for (size_t k = 0; k < sizeof bad_descr / sizeof bad_descr[0]; k++)
    expect_dict(DLB_E_FORMAT, 1, dict_of(bad_descr[k], "False", "(1,)"));
  /* Descr strings NumPy knows that dlbridge has no dtype for: DTYPE, with a hint. */
  const char *dtype[] = {"<U5",  "|S3",  "|O",   "|V8",  "<M8[ns]", "<m8[s]",
                         "<f16", "<c32", "<f12", "<c24", ">U1",     "|a4"};
  for (size_t k = 0; k < sizeof dtype / sizeof dtype[0]; k++) {
    expect_dict(DLB_E_DTYPE, 1, dict_of(dtype[k], "False", "(1,)"));
    CHECK(err.hint != NULL);
  }
  expect_dict(
      DLB_E_DTYPE, 1,
      "{'descr': [('x', '<f4'), ('y', '<i2', (2,))], 'fortran_order': False, 'shape': (1,)}");
  CHECK(strstr(err.message, "structured") != NULL);
  expect_dict(DLB_E_DTYPE, 3,
              "{'descr': [('\xc3\xa9t\xc3\xa9', '|u1')], 'fortran_order': False, 'shape': (2,)}");
  expect_dict(DLB_E_DTYPE, 1, "{'descr': ('<f8', (2,)), 'fortran_order': False, 'shape': (1,)}");
  /* A malformed dict is FORMAT even when its descr is also unsupported. */
  expect_dict(DLB_E_FORMAT, 1, "{'descr': '<U5', 'fortran_order': False, 'shape': (1,), 'x': 1}");
  expect_dict(DLB_E_FORMAT, 1, "{'descr': '<U5', 'fortran_order': 2, 'shape': (1,)}");
  /* Shapes: negative, huge, overflowing or too many dims: SHAPE. */
  const char *shape[] = {"(-1,)",
                         "(2, -3)",
                         "(9223372036854775808,)",
                         "(99999999999999999999999999,)",
                         "(4294967296, 4294967296)",
                         "(1152921504606846976,)", /* 2^60 float64 elements: 2^63 bytes */
                         "(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)"};
  for (size_t k = 0; k < sizeof shape / sizeof shape[0]; k++)
    expect_dict(DLB_E_SHAPE, 1, dict_of("<f8", "False", shape[k]));
  /* -0 is 0, as Python reads it; 2^63 - 1 one-byte elements are a size,
   * but not one that follows this header: FORMAT. */
  expect_dict(DLB_OK, 1, dict_of("<f8", "False", "(-0,)"));
  expect_dict(DLB_E_FORMAT, 1, dict_of("|u1", "False", "(9223372036854775807,)"));
  /* 32 dims is the most. */
  expect_dict(
      DLB_OK, 1,
      dict_of("<f8", "False", "(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)"));
}

static void test_hostile_data(void) {
  static unsigned char data[64];
  dlb_npy_header h;
  /* Data shorter than the shape needs: FORMAT; exactly enough: fine. */
  for (size_t have = 0; have <= 24; have++) {
    npy_file f = make_npy(1, dict_of("<f8", "False", "(3,)"), 1, data, have);
    CHECK_EQ_INT(dlb_npy_parse(f.bytes, f.size, f.size, &h, &err),
                 have >= 24 ? DLB_OK : DLB_E_FORMAT);
    if (have == 23) CHECK(strstr(err.message, "truncated") != NULL);
    free(f.bytes);
  }
  /* A size-0 array needs no data; a 0-d one needs one element. */
  npy_file f = make_npy(2, dict_of("<c16", "True", "(5, 0, 7)"), 1, data, 0);
  CHECK_EQ_INT(dlb_npy_parse(f.bytes, f.size, f.size, &h, &err), DLB_OK);
  CHECK_EQ_INT(h.numel, 0);
  free(f.bytes);
  f = make_npy(1, dict_of("<i4", "False", "()"), 1, data, 3);
  CHECK_EQ_INT(dlb_npy_parse(f.bytes, f.size, f.size, &h, &err), DLB_E_FORMAT);
  free(f.bytes);
  /* Padding that is not whitespace (a NUL before the newline): FORMAT. */
  f = make_npy(1, dict_of("<i4", "False", "()"), 1, data, 4);
  f.bytes[f.size - 4 - 2] = '\0';
  CHECK_EQ_INT(dlb_npy_parse(f.bytes, f.size, f.size, &h, &err), DLB_E_FORMAT);
  free(f.bytes);
}

/* ------------------------------------------------------------------------ */
/* Arrays from memory and buffers */

static void test_from_memory(void) {
  dlb_array a;
  {
    /* Big-endian int32 and complex64, Fortran order float16: values in native order. */
    unsigned char be[] = {0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 0x12, 0x34, 0x56, 0x78};
    npy_file f = make_npy(1, dict_of(">i4", "False", "(3,)"), 1, be, sizeof be);
    CHECK_EQ_INT(dlb_npy_from_memory(cpu, f.bytes, f.size, &a, &err), DLB_OK);
    int32_t *p = (int32_t *)dlb_array_host_data(&a);
    CHECK_EQ_INT(p[0], 1);
    CHECK_EQ_INT(p[1], -2);
    CHECK_EQ_INT(p[2], 0x12345678);
    CHECK_EQ_INT(a.readonly, 0);
    dlb_array_release(&a);
    free(f.bytes);
  }
  {
    float parts[2] = {1.5f, -2.25f};
    unsigned char be[8];
    for (int k = 0; k < 2; k++) {
      unsigned char le[4];
      memcpy(le, &parts[k], 4);
      for (int b = 0; b < 4; b++) be[4 * k + b] = le[3 - b];
    }
    npy_file f = make_npy(1, dict_of(">c8", "False", "()"), 1, be, sizeof be);
    CHECK_EQ_INT(dlb_npy_from_memory(cpu, f.bytes, f.size, &a, &err), DLB_OK);
    CHECK_EQ_INT(a.ndim, 0);
    float *p = (float *)dlb_array_host_data(&a);
    CHECK(p[0] == 1.5f && p[1] == -2.25f);
    dlb_array_release(&a);
    free(f.bytes);
  }
  {
    /* Fortran order: shape (2, 3), strides (1, 2), element (i, j) at i + 2j. */
    int16_t col[6] = {0, 10, 1, 11, 2, 12}; /* element (i, j) = 10 i + j */
    npy_file f = make_npy(1, dict_of("<i2", "True", "(2, 3)"), 1, col, sizeof col);
    CHECK_EQ_INT(dlb_npy_from_memory(cpu, f.bytes, f.size, &a, &err), DLB_OK);
    CHECK_EQ_INT(a.strides[0], 1);
    CHECK_EQ_INT(a.strides[1], 2);
    int16_t rows[6];
    CHECK_EQ_INT(dlb_array_read_into(&a, rows, DLB_INT16, &err), DLB_OK);
    for (int k = 0; k < 6; k++) CHECK_EQ_INT(rows[k], (k / 3) * 10 + k % 3);
    dlb_array_release(&a);
    free(f.bytes);
  }
  {
    /* bool bytes other than 0 and 1 become 1 in a copy. */
    unsigned char bytes[5] = {0, 1, 2, 255, 0};
    npy_file f = make_npy(1, dict_of("|b1", "False", "(5,)"), 1, bytes, sizeof bytes);
    CHECK_EQ_INT(dlb_npy_from_memory(cpu, f.bytes, f.size, &a, &err), DLB_OK);
    unsigned char *p = (unsigned char *)dlb_array_host_data(&a);
    CHECK(p[0] == 0 && p[1] == 1 && p[2] == 1 && p[3] == 1 && p[4] == 0);
    dlb_array_release(&a);
    free(f.bytes);
  }
  {
    /* A size-0 array, and failures leave out released. */
    npy_file f = make_npy(1, dict_of("<f4", "False", "(0, 3)"), 1, NULL, 0);
    CHECK_EQ_INT(dlb_npy_from_memory(cpu, f.bytes, f.size, &a, &err), DLB_OK);
    CHECK_EQ_INT(a.numel, 0);
    CHECK_EQ_INT(a.shape[1], 3);
    dlb_array_release(&a);
    CHECK_EQ_INT(dlb_npy_from_memory(cpu, f.bytes, f.size - 1, &a, &err), DLB_E_FORMAT);
    CHECK(a.buffer == NULL);
    free(f.bytes);
  }
}

/* A host buffer over a copy of f's bytes at byte shift of a malloc'd block. */
static void free_block(void *p) { free(p); }

static dlb_buffer *buffer_of(const npy_file *f, size_t shift) {
  dlb_buffer *buf = NULL;
  char *block = malloc(f->size + shift + 1);
  memcpy(block + shift, f->bytes, f->size);
  CHECK_EQ_INT(dlb_buffer_wrap_host(cpu, block + shift, f->size, 1, free_block, block, &buf, &err),
               DLB_OK);
  return buf;
}

static void test_from_buffer(void) {
  double values[4] = {1, 2, 3, 4};
  npy_file f = make_npy(1, dict_of("<f8", "True", "(2, 2)"), 1, values, sizeof values);
  dlb_buffer *buf = buffer_of(&f, 0);
  dlb_array a, c;
  /* A view: read-only, the same memory, Fortran strides. */
  CHECK_EQ_INT(dlb_npy_from_buffer(buf, DLB_COPY_IF_NEEDED, cpu, &a, &err), DLB_OK);
  CHECK(a.buffer == buf);
  CHECK_EQ_INT(a.readonly, 1);
  CHECK_EQ_INT(a.offset, f.size - sizeof values);
  CHECK_EQ_INT(a.strides[1], 2);
  CHECK(dlb_array_host_data(&a) == (char *)buf->host + a.offset);
  CHECK_EQ_INT(dlb_npy_from_buffer(buf, DLB_COPY_NEVER, cpu, &c, &err), DLB_OK);
  dlb_array_release(&c);
  /* copy = always: a writable copy. */
  CHECK_EQ_INT(dlb_npy_from_buffer(buf, DLB_COPY_ALWAYS, cpu, &c, &err), DLB_OK);
  CHECK(c.buffer != buf);
  CHECK_EQ_INT(c.readonly, 0);
  CHECK(((double *)dlb_array_host_data(&c))[3] == 4);
  dlb_array_release(&c);
  dlb_buffer_release(buf);
  CHECK_EQ_INT(atomic_load(&a.buffer->refs), 1); /* the view holds the last reference */
  dlb_array_release(&a);
  /* Misaligned data: a copy, or COPY_REQUIRED. */
  buf = buffer_of(&f, 1);
  CHECK_EQ_INT(dlb_npy_from_buffer(buf, DLB_COPY_NEVER, cpu, &a, &err), DLB_E_COPY_REQUIRED);
  CHECK(strstr(err.message, "aligned") != NULL);
  CHECK(a.buffer == NULL);
  CHECK_EQ_INT(dlb_npy_from_buffer(buf, DLB_COPY_IF_NEEDED, cpu, &a, &err), DLB_OK);
  CHECK(a.buffer != buf && a.readonly); /* a default load is read-only, copied or not */
  CHECK(((double *)dlb_array_host_data(&a))[2] == 3);
  dlb_array_release(&a);
  dlb_buffer_release(buf);
  free(f.bytes);
  /* Byte-swapped: a copy, or COPY_REQUIRED. */
  {
    unsigned char be[4] = {0x01, 0x02, 0x03, 0x04};
    f = make_npy(1, dict_of(">u2", "False", "(2,)"), 1, be, sizeof be);
    buf = buffer_of(&f, 0);
    CHECK_EQ_INT(dlb_npy_from_buffer(buf, DLB_COPY_NEVER, cpu, &a, &err), DLB_E_COPY_REQUIRED);
    CHECK(strstr(err.message, "byte order") != NULL);
    CHECK_EQ_INT(dlb_npy_from_buffer(buf, DLB_COPY_IF_NEEDED, cpu, &a, &err), DLB_OK);
    CHECK_EQ_INT(((uint16_t *)dlb_array_host_data(&a))[1], 0x0304);
    dlb_array_release(&a);
    dlb_buffer_release(buf);
    free(f.bytes);
  }
  /* bool bytes: 0/1 are viewed, anything else copied and made 0/1. */
  {
    unsigned char ok[3] = {1, 0, 1}, odd[3] = {1, 7, 0};
    f = make_npy(1, dict_of("|b1", "False", "(3,)"), 1, ok, sizeof ok);
    buf = buffer_of(&f, 0);
    CHECK_EQ_INT(dlb_npy_from_buffer(buf, DLB_COPY_NEVER, cpu, &a, &err), DLB_OK);
    CHECK(a.buffer == buf);
    dlb_array_release(&a);
    dlb_buffer_release(buf);
    free(f.bytes);
    f = make_npy(1, dict_of("|b1", "False", "(3,)"), 1, odd, sizeof odd);
    buf = buffer_of(&f, 0);
    CHECK_EQ_INT(dlb_npy_from_buffer(buf, DLB_COPY_NEVER, cpu, &a, &err), DLB_E_COPY_REQUIRED);
    CHECK(strstr(err.message, "bool") != NULL);
    CHECK_EQ_INT(dlb_npy_from_buffer(buf, DLB_COPY_IF_NEEDED, cpu, &a, &err), DLB_OK);
    CHECK_EQ_INT(((unsigned char *)dlb_array_host_data(&a))[1], 1);
    dlb_array_release(&a);
    dlb_buffer_release(buf);
    free(f.bytes);
  }
}

/* ------------------------------------------------------------------------ */
/* Files */

static void test_files(void) {
  int64_t shape[] = {3, 5};
  dlb_array a = iota(2, shape), b, t;
  unsigned char *bytes;
  size_t n;
  /* Save, then load as a view of the mapping and as a copy. */
  CHECK_EQ_INT(dlb_npy_save_file(&a, path_of("a.npy"), &err), DLB_OK);
  bytes = read_bytes(path_of("a.npy"), &n);
  CHECK_EQ_INT(n, 128 + 60);
  {
    const char *dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (3, 5), }";
    CHECK(bytes && memcmp(bytes + 10, dict, strlen(dict)) == 0);
  }
  CHECK(bytes && memcmp(bytes + 128, dlb_array_host_data(&a), 60) == 0);
  free(bytes);
  for (int mode = -1; mode <= 1; mode++) {
    CHECK_EQ_INT(dlb_npy_load_file(cpu, path_of("a.npy"), (dlb_copy_mode)mode, &b, &err), DLB_OK);
    CHECK_EQ_INT(b.readonly, mode != 1);
    CHECK_EQ_INT(b.ndim, 2);
    CHECK(memcmp(dlb_array_host_data(&b), dlb_array_host_data(&a), 60) == 0);
    dlb_array_release(&b);
  }
  /* A transposed view is written as it lies, in Fortran order (np.save's
   * choice): a's bytes after a header that says so; it loads back with
   * Fortran strides. */
  t = view_of(&a);
  int perm[2] = {1, 0};
  CHECK_EQ_INT(dlb_view_permute(&t, perm, &err), DLB_OK);
  CHECK_EQ_INT(dlb_npy_save_file_buffered(&t, path_of("t.npy"), 4, &err), DLB_OK);
  bytes = read_bytes(path_of("t.npy"), &n);
  CHECK_EQ_INT(n, 128 + 60);
  CHECK(bytes && strstr((char *)bytes + 10, "'fortran_order': True, 'shape': (5, 3)") != NULL);
  CHECK(bytes && memcmp(bytes + 128, dlb_array_host_data(&a), 60) == 0);
  free(bytes);
  CHECK_EQ_INT(dlb_npy_load_file(cpu, path_of("t.npy"), DLB_COPY_ALWAYS, &b, &err), DLB_OK);
  CHECK_EQ_INT(b.shape[0], 5);
  CHECK_EQ_INT(b.strides[0], 1);
  CHECK_EQ_INT(b.strides[1], 5);
  CHECK(memcmp(dlb_array_host_data(&b), dlb_array_host_data(&a), 60) == 0);
  dlb_array_release(&b);
  /* A view contiguous in neither order (a transpose's reversed rows) is
   * written in row-major order: through every buffer size (whole array,
   * runs of rows, single rows recursively, one element). */
  CHECK_EQ_INT(dlb_view_slice(&t, 0, 4, 5, -1, &err), DLB_OK);
  for (size_t cap = 1; cap <= 64; cap *= 2) {
    int32_t got[15];
    CHECK_EQ_INT(dlb_npy_save_file_buffered(&t, path_of("t.npy"), cap, &err), DLB_OK);
    CHECK_EQ_INT(dlb_npy_load_file(cpu, path_of("t.npy"), DLB_COPY_ALWAYS, &b, &err), DLB_OK);
    CHECK_EQ_INT(b.shape[0], 5);
    memcpy(got, dlb_array_host_data(&b), sizeof got);
    for (int k = 0; k < 15; k++) CHECK_EQ_INT(got[k], (k % 3) * 5 + (4 - k / 3));
    dlb_array_release(&b);
  }
  {
    /* A 3-D strided view (every other column), rows larger than the buffer. */
    int64_t s3[] = {2, 3, 8};
    dlb_array c = iota(3, s3), v = view_of(&c);
    CHECK_EQ_INT(dlb_view_slice(&v, 2, 1, 4, 2, &err), DLB_OK);
    CHECK_EQ_INT(dlb_npy_save_file_buffered(&v, path_of("v.npy"), 20, &err), DLB_OK);
    CHECK_EQ_INT(dlb_npy_load_file(cpu, path_of("v.npy"), DLB_COPY_IF_NEEDED, &b, &err), DLB_OK);
    int32_t *p = (int32_t *)dlb_array_host_data(&b);
    for (int k = 0; k < 24; k++) CHECK_EQ_INT(p[k], (k / 4) * 8 + (k % 4) * 2 + 1);
    dlb_array_release(&b);
    dlb_array_release(&v);
    dlb_array_release(&c);
  }
  dlb_array_release(&t);
  /* 0-d and size-0 arrays round-trip. */
  {
    dlb_array z = alloc(DLB_FLOAT64, 0, NULL), e;
    int64_t s0[] = {4, 0};
    *(double *)dlb_array_host_data(&z) = 2.5;
    CHECK_EQ_INT(dlb_npy_save_file(&z, path_of("z.npy"), &err), DLB_OK);
    CHECK_EQ_INT(dlb_npy_load_file(cpu, path_of("z.npy"), DLB_COPY_IF_NEEDED, &b, &err), DLB_OK);
    CHECK_EQ_INT(b.ndim, 0);
    CHECK(*(double *)dlb_array_host_data(&b) == 2.5);
    dlb_array_release(&b);
    dlb_array_release(&z);
    e = alloc(DLB_COMPLEX128, 2, s0);
    CHECK_EQ_INT(dlb_npy_save_file(&e, path_of("e.npy"), &err), DLB_OK);
    for (int mode = -1; mode <= 1; mode++) {
      CHECK_EQ_INT(dlb_npy_load_file(cpu, path_of("e.npy"), (dlb_copy_mode)mode, &b, &err), DLB_OK);
      CHECK_EQ_INT(b.numel, 0);
      CHECK_EQ_INT(b.shape[0], 4);
      dlb_array_release(&b);
    }
    dlb_array_release(&e);
  }
  /* bfloat16 cannot be saved; nothing is written. */
  {
    dlb_array h = alloc(DLB_BFLOAT16, 2, shape);
    CHECK_EQ_INT(dlb_npy_save_file(&h, path_of("h.npy"), &err), DLB_E_DTYPE);
    CHECK(access(path_of("h.npy"), F_OK) != 0);
    dlb_array_release(&h);
  }
  /* The system's refusals: IO with errno; a directory: IO, EISDIR. */
  CHECK_EQ_INT(dlb_npy_save_file(&a, path_of("no/such/dir.npy"), &err), DLB_E_IO);
  CHECK_EQ_INT(err.has_native, 1);
  CHECK_EQ_INT(err.native_status, ENOENT);
  for (int mode = -1; mode <= 1; mode++) {
    CHECK_EQ_INT(dlb_npy_load_file(cpu, path_of("missing.npy"), (dlb_copy_mode)mode, &b, &err),
                 DLB_E_IO);
    CHECK_EQ_INT(err.native_status, ENOENT);
    CHECK(b.buffer == NULL);
    CHECK_EQ_INT(dlb_npy_load_file(cpu, scratch, (dlb_copy_mode)mode, &b, &err), DLB_E_IO);
    CHECK_EQ_INT(err.native_status, EISDIR);
  }
  /* Hostile files: the same codes through the mapping and through read(2). */
  {
    write_bytes(path_of("empty.npy"), "", 0);
    write_bytes(path_of("short.npy"), "\x93NUM", 4);
    npy_file f = make_npy(1, dict_of("<f8", "False", "(100,)"), 1, "12345678", 8);
    write_bytes(path_of("trunc.npy"), f.bytes, f.size);
    free(f.bytes);
    f = make_npy(1, dict_of("<U3", "False", "(1,)"), 1, "123456789012", 12);
    write_bytes(path_of("str.npy"), f.bytes, f.size);
    free(f.bytes);
    for (int mode = -1; mode <= 1; mode++) {
      dlb_copy_mode m = (dlb_copy_mode)mode;
      CHECK_EQ_INT(dlb_npy_load_file(cpu, path_of("empty.npy"), m, &b, &err), DLB_E_FORMAT);
      CHECK_EQ_INT(dlb_npy_load_file(cpu, path_of("short.npy"), m, &b, &err), DLB_E_FORMAT);
      CHECK_EQ_INT(dlb_npy_load_file(cpu, path_of("trunc.npy"), m, &b, &err), DLB_E_FORMAT);
      CHECK_EQ_INT(dlb_npy_load_file(cpu, path_of("str.npy"), m, &b, &err), DLB_E_DTYPE);
    }
  }
  /* A big-endian file: swapped copy unless copy = never. */
  {
    unsigned char be[8] = {0x3f, 0xf8, 0, 0, 0, 0, 0, 0}; /* 1.5 */
    npy_file f = make_npy(1, dict_of(">f8", "False", "(1,)"), 1, be, sizeof be);
    write_bytes(path_of("be.npy"), f.bytes, f.size);
    free(f.bytes);
    CHECK_EQ_INT(dlb_npy_load_file(cpu, path_of("be.npy"), DLB_COPY_NEVER, &b, &err),
                 DLB_E_COPY_REQUIRED);
    for (int mode = -1; mode <= 1; mode += 2) {
      CHECK_EQ_INT(dlb_npy_load_file(cpu, path_of("be.npy"), (dlb_copy_mode)mode, &b, &err),
                   DLB_OK);
      CHECK(*(double *)dlb_array_host_data(&b) == 1.5);
      CHECK_EQ_INT(b.readonly, mode != 1); /* copy = true alone gives writable arrays */
      dlb_array_release(&b);
    }
  }
  dlb_array_release(&a);
}

/* Saving an array the host cannot address: staged through the backend. */
static void test_save_opaque(void) {
  dlb_backend *opaque;
  dlb_backend_ops ops = opaque_ops("npyopaque");
  int64_t shape[] = {4, 6};
  dlb_array src = iota(2, shape), dev, t, b;
  CHECK_EQ_INT(dlb_backend_create(&ops, NULL, &opaque, &err), DLB_OK);
  CHECK_EQ_INT(dlb_array_clone_to(&dev, &src, opaque, 0, &err), DLB_OK);
  CHECK(dlb_array_host_data(&dev) == NULL);
  CHECK_EQ_INT(dlb_npy_save_file(&dev, path_of("dev.npy"), &err), DLB_OK);
  CHECK_EQ_INT(dlb_npy_load_file(cpu, path_of("dev.npy"), DLB_COPY_IF_NEEDED, &b, &err), DLB_OK);
  CHECK(memcmp(dlb_array_host_data(&b), dlb_array_host_data(&src), 96) == 0);
  dlb_array_release(&b);
  t = view_of(&dev);
  int perm[2] = {1, 0};
  CHECK_EQ_INT(dlb_view_permute(&t, perm, &err), DLB_OK);
  /* transposed: Fortran order, the device's bytes as they lie */
  CHECK_EQ_INT(dlb_npy_save_file_buffered(&t, path_of("devt.npy"), 8, &err), DLB_OK);
  CHECK_EQ_INT(dlb_npy_load_file(cpu, path_of("devt.npy"), DLB_COPY_ALWAYS, &b, &err), DLB_OK);
  CHECK_EQ_INT(b.strides[0], 1);
  CHECK(memcmp(dlb_array_host_data(&b), dlb_array_host_data(&src), 96) == 0);
  dlb_array_release(&b);
  /* transposed with its rows reversed: C order, staged piece by piece */
  CHECK_EQ_INT(dlb_view_slice(&t, 0, 5, 6, -1, &err), DLB_OK);
  CHECK_EQ_INT(dlb_npy_save_file_buffered(&t, path_of("devt.npy"), 8, &err), DLB_OK);
  CHECK_EQ_INT(dlb_npy_load_file(cpu, path_of("devt.npy"), DLB_COPY_IF_NEEDED, &b, &err), DLB_OK);
  int32_t *p = (int32_t *)dlb_array_host_data(&b);
  for (int k = 0; k < 24; k++) CHECK_EQ_INT(p[k], (k % 4) * 6 + (5 - k / 4));
  dlb_array_release(&b);
  dlb_array_release(&t);
  dlb_array_release(&dev);
  dlb_array_release(&src);
  dlb_backend_release(opaque);
}

/* copy_to_host that fails after the first call: a save that fails midway. */
static atomic_int reads_left;
static dlb_status failing_to_host(void *ctx, int id, const void *h, size_t off, void *dst,
                                  size_t n) {
  if (atomic_fetch_sub(&reads_left, 1) <= 0) return DLB_E_BACKEND_FAILURE;
  return malloc_to_host(ctx, id, h, off, dst, n);
}

/* Whether the scratch directory holds a file whose name contains part. */
static int scratch_has(const char *part) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -q -- '%s'", scratch, part);
  return system(cmd) == 0;
}

/* Saving replaces the file: what maps the old one keeps its bytes; a
 * failure leaves the old file as it was; symlinks and modes are kept. */
static void test_replace(void) {
  int64_t shape[] = {1000};
  dlb_array a = iota(1, shape), b, c, old;
  struct stat info;
  int32_t *p;
  CHECK_EQ_INT(dlb_npy_save_file(&a, path_of("r.npy"), &err), DLB_OK);
  CHECK_EQ_INT(dlb_npy_load_file(cpu, path_of("r.npy"), DLB_COPY_NEVER, &old, &err), DLB_OK);
  /* Saving the loaded view over its own file (dl.save(p, dl.load(p))). */
  CHECK_EQ_INT(dlb_npy_save_file(&old, path_of("r.npy"), &err), DLB_OK);
  /* Then other values: the first view still reads the first file. */
  ((int32_t *)dlb_array_host_data(&a))[0] = -5;
  CHECK_EQ_INT(dlb_npy_save_file(&a, path_of("r.npy"), &err), DLB_OK);
  p = (int32_t *)dlb_array_host_data(&old);
  CHECK_EQ_INT(p[0], 0);
  CHECK_EQ_INT(p[999], 999);
  CHECK_EQ_INT(dlb_npy_load_file(cpu, path_of("r.npy"), DLB_COPY_NEVER, &b, &err), DLB_OK);
  CHECK_EQ_INT(((int32_t *)dlb_array_host_data(&b))[0], -5);
  dlb_array_release(&b);
  dlb_array_release(&old);
  CHECK(!scratch_has(".tmp"));
  /* The mode of an existing file is kept. */
  CHECK_EQ_INT(chmod(path_of("r.npy"), 0640), 0);
  CHECK_EQ_INT(dlb_npy_save_file(&a, path_of("r.npy"), &err), DLB_OK);
  CHECK_EQ_INT(stat(path_of("r.npy"), &info), 0);
  CHECK_EQ_INT(info.st_mode & 0777, 0640);
  /* Through a symlink: the file it names is replaced, the link stays. */
  {
    char target[128], link[128];
    snprintf(target, sizeof target, "%s", path_of("r.npy"));
    snprintf(link, sizeof link, "%s", path_of("link.npy"));
    CHECK_EQ_INT(symlink(target, link), 0);
    ((int32_t *)dlb_array_host_data(&a))[0] = 77;
    CHECK_EQ_INT(dlb_npy_save_file(&a, link, &err), DLB_OK);
    CHECK_EQ_INT(lstat(link, &info), 0);
    CHECK(S_ISLNK(info.st_mode));
    CHECK_EQ_INT(dlb_npy_load_file(cpu, target, DLB_COPY_ALWAYS, &b, &err), DLB_OK);
    CHECK_EQ_INT(((int32_t *)dlb_array_host_data(&b))[0], 77);
    dlb_array_release(&b);
  }
  /* A failure midway (the backend refuses the second read): the old file
   * is untouched and nothing is left behind. */
  {
    dlb_backend *failing;
    dlb_backend_ops ops = opaque_ops("npyfailing");
    ops.copy_to_host = failing_to_host;
    CHECK_EQ_INT(dlb_backend_create(&ops, NULL, &failing, &err), DLB_OK);
    atomic_store(&reads_left, 1000);
    CHECK_EQ_INT(dlb_array_clone_to(&c, &a, failing, 0, &err), DLB_OK);
    atomic_store(&reads_left, 1);
    CHECK_EQ_INT(dlb_npy_save_file_buffered(&c, path_of("r.npy"), 400, &err),
                 DLB_E_BACKEND_FAILURE);
    CHECK_EQ_INT(dlb_npy_load_file(cpu, path_of("r.npy"), DLB_COPY_ALWAYS, &b, &err), DLB_OK);
    CHECK_EQ_INT(((int32_t *)dlb_array_host_data(&b))[0], 77);
    CHECK_EQ_INT(b.numel, 1000);
    dlb_array_release(&b);
    CHECK(!scratch_has(".tmp"));
    dlb_array_release(&c);
    dlb_backend_release(failing);
  }
  /* A target that is no regular file is never replaced (nor written in place:
   * the file could be one an array maps): IO, EINVAL or EISDIR. */
  CHECK_EQ_INT(dlb_npy_save_file(&a, "/dev/null", &err), DLB_E_IO);
  CHECK_EQ_INT(err.native_status, EINVAL);
  CHECK_EQ_INT(dlb_npy_save_file(&a, scratch, &err), DLB_E_IO);
  CHECK_EQ_INT(err.native_status, EISDIR);
  unlink(path_of("link.npy"));
  unlink(path_of("r.npy"));
  dlb_array_release(&a);
}

/* Loads and saves of a FIFO, in a child that an alarm ends after 5 s:
 * each fails at once with IO (EINVAL), in every copy mode, without waiting
 * for a writer (an open for reading would wait, a mapping or read(2) of
 * it would block or make nothing of it). */
static void fifo_child(void) {
  int64_t shape[] = {3};
  dlb_array a = iota(1, shape), b;
  alarm(5);
  for (int mode = -1; mode <= 1; mode++) {
    CHECK_EQ_INT(dlb_npy_load_file(cpu, path_of("fifo.npy"), (dlb_copy_mode)mode, &b, &err),
                 DLB_E_IO);
    CHECK_EQ_INT(err.native_status, EINVAL);
    CHECK(strstr(err.message, "a FIFO (named pipe), not a regular file") != NULL);
    CHECK(b.buffer == NULL);
  }
  CHECK_EQ_INT(dlb_npy_save_file(&a, path_of("fifo.npy"), &err), DLB_E_IO);
  CHECK_EQ_INT(err.native_status, EINVAL);
  dlb_array_release(&a);
}

static void test_fifo(void) {
  CHECK_EQ_INT(mkfifo(path_of("fifo.npy"), 0600), 0);
  CHECK(run_isolated(fifo_child));
  {
    struct stat info;
    CHECK(stat(path_of("fifo.npy"), &info) == 0 && S_ISFIFO(info.st_mode)); /* never replaced */
  }
  unlink(path_of("fifo.npy"));
}

/* A writer reserves the new file's blocks before writing (where the file
 * system can: ext4, tmpfs, xfs, btrfs): the size stays 0 until the writes;
 * a reservation the disk cannot hold fails with IO before any writing and
 * the new file goes away. */
static void test_reserve(void) {
  const size_t size = (size_t)1 << 20;
  dlb_file_writer w;
  struct stat info;
  char *bytes = calloc(size, 1);
  CHECK_EQ_INT(dlb_file_writer_open(&w, path_of("big.npy"), DLB_FILE_CHUNK_BYTES, &err), DLB_OK);
  CHECK_EQ_INT(dlb_file_writer_reserve(&w, size, &err), DLB_OK);
  CHECK_EQ_INT(fstat(w.fd, &info), 0);
  CHECK_EQ_INT((long)info.st_size, 0);
#if defined(__linux__) /* the scratch directory's file system reserves */
  CHECK(w.reserved);
  CHECK((size_t)info.st_blocks * 512 >= size);
#endif
  CHECK_EQ_INT(dlb_file_writer_write(&w, bytes, size, &err), DLB_OK);
  CHECK_EQ_INT(dlb_file_writer_close(&w, DLB_OK, &err), DLB_OK);
  CHECK_EQ_INT(stat(path_of("big.npy"), &info), 0);
  CHECK_EQ_INT((long)info.st_size, (long)size);
  /* 2^62 bytes: no disk holds them (ENOSPC, or EFBIG past the largest file) */
  CHECK_EQ_INT(dlb_file_writer_open(&w, path_of("big.npy"), DLB_FILE_CHUNK_BYTES, &err), DLB_OK);
#if defined(__linux__)
  CHECK_EQ_INT(dlb_file_writer_reserve(&w, (uint64_t)1 << 62, &err), DLB_E_IO);
  CHECK(err.native_status == ENOSPC || err.native_status == EFBIG);
#endif
  CHECK_EQ_INT(dlb_file_writer_close(&w, DLB_E_IO, &err), DLB_E_IO);
  CHECK_EQ_INT(stat(path_of("big.npy"), &info), 0); /* the old file, untouched */
  CHECK_EQ_INT((long)info.st_size, (long)size);
  CHECK(!scratch_has(".tmp"));
  unlink(path_of("big.npy"));
  free(bytes);
}

/* Removes the scratch directory's files, then the directory. */
static void remove_scratch(void) {
  const char *names[] = {"a.npy",     "t.npy",     "v.npy",   "z.npy",  "e.npy",   "empty.npy",
                         "short.npy", "trunc.npy", "str.npy", "be.npy", "dev.npy", "devt.npy"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) unlink(path_of(names[k]));
  rmdir(scratch);
}

int main(void) {
  const char *tmp = getenv("TMPDIR");
  if (!cpu_open()) return 1;
  snprintf(scratch, sizeof scratch, "%s/dlb-npy-XXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
  if (!mkdtemp(scratch)) {
    perror("mkdtemp");
    return 1;
  }
  test_format_header();
  test_parse_variants();
  test_hostile_preamble();
  test_hostile_dicts();
  test_hostile_data();
  test_from_memory();
  test_from_buffer();
  test_files();
  test_save_opaque();
  test_replace();
  test_fifo();
  test_reserve();
  remove_scratch();
  cpu_close();
  return check_done("test_npy");
}
