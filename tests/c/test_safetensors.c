/* test_safetensors.c -- the safetensors parser and writer (files/safetensors.c),
 * on files built byte by byte from the format's specification:
 *   8 bytes N (unsigned 64-bit, little-endian), N bytes of UTF-8 JSON (an
 *   object starting with '{', maybe padded with spaces), then the data; each
 *   tensor {"dtype", "shape", "data_offsets": [BEGIN, END]} relative to the
 *   data; "__metadata__" maps strings to strings; no holes in the data.
 * Every input lives in a malloc'd block of exactly its size, so that
 * AddressSanitizer reports a read one byte past it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "files/safetensors.h"
#include "fixtures.h"

static dlb_error err;

/* ------------------------------------------------------------------------ */
/* Building files */

/* A file: N = strlen(json) + pad, the JSON, pad spaces, then data_len bytes
 * of data; *size set. Exactly that many bytes are allocated. */
static unsigned char *file_with(const char *json, size_t pad, const void *data, size_t data_len,
                                size_t *size) {
  size_t n = strlen(json) + pad;
  unsigned char *p = malloc(8 + n + data_len + 1); /* +1: never 0 bytes */
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)((uint64_t)n >> (8 * i));
  memcpy(p + 8, json, strlen(json));
  memset(p + 8 + strlen(json), ' ', pad);
  if (data_len) memcpy(p + 8 + n, data, data_len);
  *size = 8 + n + data_len;
  return p;
}

/* The same, padded as writers do: the data starts at a multiple of 8. */
static unsigned char *file_of(const char *json, const void *data, size_t data_len, size_t *size) {
  return file_with(json, (8 - strlen(json) % 8) % 8, data, data_len, size);
}

/* A file whose data is data_len bytes 0, 1, 2, ... */
static unsigned char *file_counting(const char *json, size_t data_len, size_t *size) {
  unsigned char *data = malloc(data_len + 1), *p;
  for (size_t i = 0; i < data_len; i++) data[i] = (unsigned char)i;
  p = file_of(json, data, data_len, size);
  free(data);
  return p;
}

/* Whether the n bytes at p contain the text s. */
static int contains(const unsigned char *p, size_t n, const char *s) {
  size_t len = strlen(s);
  for (size_t i = 0; i + len <= n; i++)
    if (memcmp(p + i, s, len) == 0) return 1;
  return 0;
}

/* Parses exactly size bytes (a copy in a block of that size). */
static dlb_status parse(const unsigned char *bytes, size_t size, dlb_safetensors_header *h) {
  unsigned char *exact = malloc(size ? size : 1);
  dlb_status st;
  if (size) memcpy(exact, bytes, size);
  st = dlb_safetensors_parse(exact, size, h, &err);
  free(exact);
  return st;
}

/* The tensor named name in a parsed header, or NULL. */
static const dlb_safetensors_tensor *find(const dlb_safetensors_header *h, const char *name) {
  for (size_t i = 0; i < h->ntensors; i++)
    if (strcmp(h->tensors[i].name, name) == 0) return &h->tensors[i];
  return NULL;
}

/* Parsing json (+ data_len counting bytes, padded) fails with code and a
 * message containing text. */
#define REFUSED(json, data_len, code, text) refused((json), (data_len), (code), (text), __LINE__)
static void refused(const char *json, size_t data_len, dlb_status code, const char *text,
                    int line) {
  size_t size;
  unsigned char *p = file_counting(json, data_len, &size);
  dlb_safetensors_header h;
  dlb_status st = parse(p, size, &h);
  if (st != code || !strstr(err.message, text))
    fprintf(stderr, "line %d: got %s \"%s\"\n", line, dlb_status_name(st),
            st == DLB_OK ? "" : err.message);
  CHECK_EQ_STR(dlb_status_name(st), dlb_status_name(code));
  CHECK(strstr(err.message, text) != NULL);
  CHECK(h.tensors == NULL && h.json == NULL); /* nothing left to free */
  if (st == DLB_OK) dlb_safetensors_free(&h);
  free(p);
}

/* Raw bytes (not built from JSON) are refused with code. */
static void refused_bytes(const unsigned char *bytes, size_t size, dlb_status code,
                          const char *text) {
  dlb_safetensors_header h;
  dlb_status st = parse(bytes, size, &h);
  CHECK_EQ_STR(dlb_status_name(st), dlb_status_name(code));
  CHECK(st == DLB_OK || strstr(err.message, text) != NULL);
  if (st == DLB_OK) dlb_safetensors_free(&h);
}

/* ------------------------------------------------------------------------ */
/* Valid files */

static void test_one_tensor(void) {
  /* 2x3 float32 1..6, the header padded with spaces to a multiple of 8. */
  static const float values[6] = {1, 2, 3, 4, 5, 6};
  const char *json = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]}}";
  size_t size;
  unsigned char *p = file_of(json, values, sizeof values, &size);
  dlb_safetensors_header h;
  const dlb_safetensors_tensor *t;
  CHECK_EQ_INT(strlen(json) % 8 != 0, 1); /* the padding is really there */
  CHECK_EQ_INT(parse(p, size, &h), DLB_OK);
  CHECK_EQ_INT(h.ntensors, 1);
  CHECK_EQ_INT(h.nmetadata, 0);
  CHECK_EQ_INT(h.data_start % 8, 0);
  CHECK_EQ_INT(h.data_start + h.data_size, size);
  t = find(&h, "w");
  CHECK(t != NULL);
  if (t) {
    float got[6];
    CHECK_EQ_INT(t->dtype, DLB_FLOAT32);
    CHECK_EQ_INT(t->ndim, 2);
    CHECK_EQ_INT(t->shape[0], 2);
    CHECK_EQ_INT(t->shape[1], 3);
    CHECK_EQ_INT(t->numel, 6);
    CHECK_EQ_INT(t->begin, 0);
    CHECK_EQ_INT(t->end, 24);
    CHECK_EQ_INT(t->name_len, 1);
    memcpy(got, p + h.data_start + t->begin, sizeof got);
    CHECK(memcmp(got, values, sizeof got) == 0);
  }
  dlb_safetensors_free(&h);
  dlb_safetensors_free(&h); /* idempotent */
  free(p);
}

/* Unpadded headers, other whitespace after the object, the keys in any order. */
static void test_header_forms(void) {
  size_t size;
  dlb_safetensors_header h;
  unsigned char *p = file_with("{\"a\":{\"data_offsets\":[0,2],\"shape\":[2],\"dtype\":\"U8\"}}", 0,
                               "\1\2", 2, &size);
  CHECK_EQ_INT(parse(p, size, &h), DLB_OK);
  CHECK_EQ_INT(h.data_start,
               8 + strlen("{\"a\":{\"data_offsets\":[0,2],\"shape\":[2],\"dtype\":\"U8\"}}"));
  dlb_safetensors_free(&h);
  free(p);
  p = file_with(
      "{ \"a\" : { \"dtype\" : \"U8\", \"shape\" : [ 2 ], \"data_offsets\" : [ 0, 2 ] } }\n\t\r", 3,
      "\1\2", 2, &size);
  CHECK_EQ_INT(parse(p, size, &h), DLB_OK);
  CHECK_EQ_INT(h.ntensors, 1);
  dlb_safetensors_free(&h);
  free(p);
}

/* Every dtype the format shares with dlbridge. */
static void test_dtypes(void) {
  static const struct {
    const char *name;
    dlb_dtype dtype;
    size_t itemsize;
  } rows[] = {
      {"BOOL", DLB_BOOL, 1},   {"U8", DLB_UINT8, 1},      {"U16", DLB_UINT16, 2},
      {"U32", DLB_UINT32, 4},  {"U64", DLB_UINT64, 8},    {"I8", DLB_INT8, 1},
      {"I16", DLB_INT16, 2},   {"I32", DLB_INT32, 4},     {"I64", DLB_INT64, 8},
      {"F16", DLB_FLOAT16, 2}, {"BF16", DLB_BFLOAT16, 2}, {"F32", DLB_FLOAT32, 4},
      {"F64", DLB_FLOAT64, 8}, {"C64", DLB_COMPLEX64, 8},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    char json[128];
    size_t size;
    dlb_safetensors_header h;
    unsigned char *p, zeros[24] = {0};
    snprintf(json, sizeof json, "{\"t\":{\"dtype\":\"%s\",\"shape\":[3],\"data_offsets\":[0,%zu]}}",
             rows[i].name, 3 * rows[i].itemsize);
    p = file_of(json, zeros, 3 * rows[i].itemsize, &size);
    CHECK_EQ_INT(parse(p, size, &h), DLB_OK);
    if (h.ntensors == 1) CHECK_EQ_INT(h.tensors[0].dtype, rows[i].dtype);
    CHECK_EQ_STR(dlb_safetensors_dtype_name(rows[i].dtype), rows[i].name);
    dlb_safetensors_free(&h);
    free(p);
  }
  CHECK(dlb_safetensors_dtype_name(DLB_COMPLEX128) == NULL);
  CHECK_EQ_INT(dlb_safetensors_alignment(DLB_COMPLEX64), 8);
  CHECK_EQ_INT(dlb_safetensors_alignment(DLB_FLOAT16), 2);
  CHECK_EQ_INT(dlb_safetensors_alignment(DLB_BOOL), 1);
}

/* Several tensors (listed in any order), 0-d and empty tensors, metadata. */
static void test_several_tensors(void) {
  const char *json = "{\"__metadata__\":{\"format\":\"pt\",\"note\":\"caf\xc3\xa9 \\\"x\\\"\"},"
                     "\"z\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[0,8]},"
                     "\"empty\":{\"dtype\":\"F32\",\"shape\":[0,3],\"data_offsets\":[8,8]},"
                     "\"b\":{\"dtype\":\"U8\",\"shape\":[2,2],\"data_offsets\":[8,12]},"
                     "\"a\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[12,14]}}";
  size_t size;
  unsigned char *p = file_counting(json, 14, &size);
  dlb_safetensors_header h;
  CHECK_EQ_INT(parse(p, size, &h), DLB_OK);
  CHECK_EQ_INT(h.ntensors, 4);
  CHECK_EQ_INT(h.nmetadata, 2);
  if (h.ntensors == 4 && h.nmetadata == 2) {
    /* sorted by name; the metadata by key */
    CHECK_EQ_STR(h.tensors[0].name, "a");
    CHECK_EQ_STR(h.tensors[1].name, "b");
    CHECK_EQ_STR(h.tensors[2].name, "empty");
    CHECK_EQ_STR(h.tensors[3].name, "z");
    CHECK_EQ_INT(h.tensors[3].ndim, 0);
    CHECK_EQ_INT(h.tensors[3].numel, 1);
    CHECK_EQ_INT(h.tensors[2].numel, 0);
    CHECK_EQ_INT(h.tensors[2].shape[1], 3);
    CHECK_EQ_STR(h.metadata[0].key, "format");
    CHECK_EQ_STR(h.metadata[0].value, "pt");
    CHECK_EQ_STR(h.metadata[1].value, "caf\xc3\xa9 \"x\"");
    CHECK_EQ_INT(h.metadata[1].value_len, 9);
  }
  dlb_safetensors_free(&h);
  free(p);
}

/* No tensors at all: "{}" (with and without metadata) and no data. */
static void test_no_tensors(void) {
  size_t size;
  dlb_safetensors_header h;
  unsigned char *p = file_of("{}", NULL, 0, &size);
  CHECK_EQ_INT(size, 16);
  CHECK_EQ_INT(parse(p, size, &h), DLB_OK);
  CHECK_EQ_INT(h.ntensors, 0);
  CHECK_EQ_INT(h.data_size, 0);
  dlb_safetensors_free(&h);
  free(p);
  p = file_of("{\"__metadata__\":{}}", NULL, 0, &size);
  CHECK_EQ_INT(parse(p, size, &h), DLB_OK);
  CHECK_EQ_INT(h.nmetadata, 0);
  dlb_safetensors_free(&h);
  free(p);
}

/* The format does not check values: a BOOL byte other than 0 or 1 is a
 * file's right, but not a dlbridge bool (always 0 or 1): the load policy
 * will not view it, and its copy holds 1. */
static void test_bool_values(void) {
  const char *json = "{\"m\":{\"dtype\":\"BOOL\",\"shape\":[5000],\"data_offsets\":[0,5000]}}";
  unsigned char data[5000] = {0}, copy[5000];
  size_t size;
  dlb_safetensors_header h;
  dlb_load_item it;
  unsigned char *p;
  data[1] = 1;
  data[4999] = 1;
  p = file_of(json, data, sizeof data, &size);
  CHECK_EQ_INT(parse(p, size, &h), DLB_OK);
  dlb_safetensors_item(&h, 0, &it);
  CHECK_EQ_INT(it.offset, h.data_start);
  CHECK_EQ_INT(it.nbytes, 5000);
  CHECK(it.name && strcmp(it.name, "m") == 0);
  CHECK(dlb_load_copy_reason(&it, p + it.offset) == NULL);
  p[h.data_start + 4321] = 2;
  p[h.data_start + 7] = 0xff;
  CHECK(dlb_load_copy_reason(&it, p + it.offset) != NULL);
  memcpy(copy, p + it.offset, sizeof copy);
  dlb_load_to_native(&it, copy);
  CHECK(copy[4321] == 1 && copy[7] == 1 && copy[1] == 1 && copy[4999] == 1 && copy[0] == 0 &&
        copy[4998] == 0);
  dlb_safetensors_free(&h);
  free(p);
  /* other dtypes take any bytes, copied as they are */
  p = file_of("{\"u\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}", "\xff\x02", 2,
              &size);
  CHECK_EQ_INT(parse(p, size, &h), DLB_OK);
  dlb_safetensors_item(&h, 0, &it);
  CHECK(dlb_load_copy_reason(&it, p + it.offset) == NULL);
  memcpy(copy, p + it.offset, 2);
  dlb_load_to_native(&it, copy);
  CHECK(copy[0] == 0xff && copy[1] == 2);
  dlb_safetensors_free(&h);
  free(p);
}

/* ------------------------------------------------------------------------ */
/* Hostile files */

static void test_hostile_sizes(void) {
  unsigned char b[16] = {0};
  /* fewer than 8 bytes, including none */
  refused_bytes(b, 0, DLB_E_FORMAT, "too few");
  refused_bytes(b, 7, DLB_E_FORMAT, "too few");
  /* N larger than the file; N = 2^64 - 1 (overflows any 8 + N) */
  b[0] = 9;
  memcpy(b + 8, "{}      ", 8);
  refused_bytes(b, 16, DLB_E_FORMAT, "larger than");
  memset(b, 0xff, 8);
  refused_bytes(b, 16, DLB_E_FORMAT, "larger than");
  /* N = 0 */
  memset(b, 0, 8);
  refused_bytes(b, 16, DLB_E_FORMAT, "does not start with '{'");
  /* N over the format's limit (100,000,000), file large enough */
  {
    size_t big = 8 + DLB_SAFETENSORS_MAX_HEADER + 1;
    unsigned char *p = calloc(big, 1);
    uint64_t n = DLB_SAFETENSORS_MAX_HEADER + 1;
    if (p) {
      for (int i = 0; i < 8; i++) p[i] = (unsigned char)(n >> (8 * i));
      p[8] = '{';
      CHECK_EQ_INT(dlb_safetensors_parse(p, big, &(dlb_safetensors_header){0}, &err), DLB_E_FORMAT);
      CHECK(strstr(err.message, "limit") != NULL);
      free(p);
    }
  }
}

static void test_hostile_json(void) {
  REFUSED("[1,2]", 0, DLB_E_FORMAT, "does not start with '{'");
  REFUSED(" {}", 0, DLB_E_FORMAT, "does not start with '{'");
  REFUSED("{\"a\":", 0, DLB_E_FORMAT, "not valid JSON");
  REFUSED("{\"a\":1,}", 0, DLB_E_FORMAT, "not valid JSON");
  REFUSED("{} x", 0, DLB_E_FORMAT, "after its JSON object");
  REFUSED("{}{}", 0, DLB_E_FORMAT, "after its JSON object");
  REFUSED("{\"\xff\":{}}", 0, DLB_E_FORMAT, "UTF-8");
  REFUSED("{\"\xc0\xaf\":{}}", 0, DLB_E_FORMAT, "UTF-8");     /* overlong '/' */
  REFUSED("{\"\xed\xa0\x80\":{}}", 0, DLB_E_FORMAT, "UTF-8"); /* a surrogate */
  REFUSED("{\"a\\u0000b\":{}}", 0, DLB_E_FORMAT, "NUL");
  REFUSED("{\"a\tb\":{}}", 0, DLB_E_FORMAT, "control character");
  /* an escaped backslash before u0000 is no NUL: the key is a\u0000 as text */
  REFUSED("{\"a\\\\u0000\":1}", 0, DLB_E_FORMAT, "not a JSON object");
  {
    /* nesting deeper than the parser allows */
    char deep[4200];
    size_t k = 0;
    k += (size_t)sprintf(deep, "{\"a\":");
    for (int i = 0; i < 2000; i++) deep[k++] = '[';
    for (int i = 0; i < 2000; i++) deep[k++] = ']';
    deep[k++] = '}';
    deep[k] = 0;
    REFUSED(deep, 0, DLB_E_FORMAT, "not valid JSON");
  }
}

static void test_hostile_entries(void) {
  REFUSED("{\"a\":[]}", 0, DLB_E_FORMAT, "'a' is not a JSON object");
  REFUSED("{\"a\":\"x\"}", 0, DLB_E_FORMAT, "not a JSON object");
  REFUSED("{\"a\":{\"shape\":[1],\"data_offsets\":[0,1]}}", 1, DLB_E_FORMAT, "no 'dtype'");
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"data_offsets\":[0,1]}}", 1, DLB_E_FORMAT, "no 'shape'");
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[1]}}", 1, DLB_E_FORMAT, "no 'data_offsets'");
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":1}}", 1,
          DLB_E_FORMAT, "unknown key 'x'");
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
          DLB_E_FORMAT, "'dtype' twice");
  REFUSED("{\"a\":{\"dtype\":8,\"shape\":[1],\"data_offsets\":[0,1]}}", 1, DLB_E_FORMAT,
          "dtype is not a string");
  /* dtypes dlbridge has not */
  REFUSED("{\"a\":{\"dtype\":\"F8_E4M3\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1, DLB_E_DTYPE,
          "tensor 'a' has dtype F8_E4M3");
  REFUSED("{\"a\":{\"dtype\":\"F8_E5M2\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1, DLB_E_DTYPE,
          "F8_E5M2");
  REFUSED("{\"a\":{\"dtype\":\"f32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, DLB_E_DTYPE,
          "unknown dtype 'f32'");
  REFUSED("{\"a\":{\"dtype\":\"C128\",\"shape\":[1],\"data_offsets\":[0,16]}}", 16, DLB_E_DTYPE,
          "unknown dtype");
}

static void test_hostile_shapes(void) {
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":2,\"data_offsets\":[0,2]}}", 2, DLB_E_FORMAT,
          "shape is not an array");
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[-1],\"data_offsets\":[0,0]}}", 0, DLB_E_SHAPE,
          "extent 1 is not an integer");
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[1,1.5],\"data_offsets\":[0,1]}}", 1, DLB_E_SHAPE,
          "extent 2");
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[\"2\"],\"data_offsets\":[0,2]}}", 2, DLB_E_SHAPE,
          "extent 1");
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[9007199254740992,0],\"data_offsets\":[0,0]}}", 0,
          DLB_E_SHAPE, "2^53");
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[1e300],\"data_offsets\":[0,0]}}", 0, DLB_E_SHAPE,
          "extent 1");
  /* the element count overflows; the byte size overflows */
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,0]}}", 0,
          DLB_E_SHAPE, "element count overflows");
  REFUSED("{\"a\":{\"dtype\":\"F64\",\"shape\":[2305843009213693952],\"data_offsets\":[0,0]}}", 0,
          DLB_E_SHAPE, "2^53"); /* 2^61 is not exact as a JSON number here */
  REFUSED("{\"a\":{\"dtype\":\"F64\",\"shape\":[4503599627370496,1024],\"data_offsets\":[0,0]}}", 0,
          DLB_E_SHAPE, "byte size overflows"); /* 2^52 * 2^10 * 8 = 2^65 */
  {
    /* 32 dimensions are fine, 33 are not */
    char json[256];
    for (int ndim = 32; ndim <= 33; ndim++) {
      strcpy(json, "{\"a\":{\"dtype\":\"U8\",\"shape\":[1");
      for (int i = 1; i < ndim; i++) strcat(json, ",1");
      strcat(json, "],\"data_offsets\":[0,1]}}");
      if (ndim == 33) {
        REFUSED(json, 1, DLB_E_SHAPE, "more than 32 dimensions");
      } else {
        size_t size;
        dlb_safetensors_header h;
        unsigned char *p = file_counting(json, 1, &size);
        CHECK_EQ_INT(parse(p, size, &h), DLB_OK);
        CHECK_EQ_INT(h.tensors ? h.tensors[0].ndim : -1, 32);
        dlb_safetensors_free(&h);
        free(p);
      }
    }
  }
}

static void test_hostile_offsets(void) {
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":{}}}", 2, DLB_E_FORMAT,
          "two integers");
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[2]}}", 2, DLB_E_FORMAT,
          "two integers");
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2,4]}}", 2, DLB_E_FORMAT,
          "two integers");
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[-1,1]}}", 2, DLB_E_FORMAT,
          "two integers");
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2.5]}}", 2, DLB_E_FORMAT,
          "two integers");
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[2,1]}}", 2, DLB_E_FORMAT,
          "ends before it begins");
  /* past the end of the data (a truncated file) */
  REFUSED("{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 12, DLB_E_FORMAT,
          "outside the 12 bytes");
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[9007199254740991,"
          "9007199254740991]}}",
          0, DLB_E_FORMAT, "outside");
  /* the span disagrees with the shape's byte size */
  REFUSED("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, DLB_E_FORMAT,
          "span 8 bytes, but 3 F32 elements take 12");
}

static void test_hostile_layout(void) {
  /* overlapping tensors */
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
          "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[2,6]}}",
          6, DLB_E_FORMAT, "'b' (bytes 2..6) overlaps tensor 'a'");
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
          "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}",
          4, DLB_E_FORMAT, "overlaps");
  /* an empty tensor inside another one's bytes */
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
          "\"e\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[2,2]}}",
          4, DLB_E_FORMAT, "overlaps");
  /* a hole; bytes after the last tensor; data without tensors */
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]},"
          "\"b\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[4,6]}}",
          6, DLB_E_FORMAT, "bytes 2..4 of the data belong to no tensor");
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[2,4]}}", 4, DLB_E_FORMAT,
          "bytes 0..2");
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}}", 3, DLB_E_FORMAT,
          "after the last tensor");
  REFUSED("{}", 8, DLB_E_FORMAT, "8 bytes of data belong to no tensor");
  /* duplicate names (cJSON keeps both) */
  REFUSED("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
          "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}",
          2, DLB_E_FORMAT, "names tensor 'a' twice");
}

static void test_hostile_metadata(void) {
  REFUSED("{\"__metadata__\":[]}", 0, DLB_E_FORMAT, "__metadata__ is not a JSON object");
  REFUSED("{\"__metadata__\":{\"epoch\":3}}", 0, DLB_E_FORMAT, "'epoch' is not a string");
  REFUSED("{\"__metadata__\":{\"a\":{}}}", 0, DLB_E_FORMAT, "not a string");
  REFUSED("{\"__metadata__\":{\"a\":\"1\",\"a\":\"2\"}}", 0, DLB_E_FORMAT, "key 'a' twice");
  REFUSED("{\"__metadata__\":{},\"__metadata__\":{}}", 0, DLB_E_FORMAT, "__metadata__ twice");
}

/* Every truncation of a valid file is refused (never a crash or overread). */
static void test_every_truncation(void) {
  const char *json = "{\"__metadata__\":{\"k\":\"v\"},\"a\":{\"dtype\":\"F32\",\"shape\":[2],"
                     "\"data_offsets\":[0,8]},"
                     "\"b\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[8,11]}}";
  size_t size;
  unsigned char *p = file_counting(json, 11, &size);
  dlb_safetensors_header h;
  CHECK_EQ_INT(parse(p, size, &h), DLB_OK);
  dlb_safetensors_free(&h);
  for (size_t n = 0; n < size; n++) {
    dlb_status st = parse(p, n, &h);
    if (st != DLB_E_FORMAT) fprintf(stderr, "truncated at %zu: %s\n", n, dlb_status_name(st));
    CHECK_EQ_INT(st, DLB_E_FORMAT);
  }
  free(p);
}

/* ------------------------------------------------------------------------ */
/* Writing */

/* Plans and writes tensors + metadata into a new block (header, then data:
 * each tensor's bytes copied from datas[index]). */
static unsigned char *write_file(dlb_safetensors_tensor *t, size_t n, dlb_safetensors_pair *m,
                                 size_t nm, const void *const *datas, size_t *size,
                                 dlb_status *st) {
  size_t order[16];
  uint64_t header, data;
  unsigned char *p;
  *st = dlb_safetensors_plan(t, n, m, nm, order, &header, &data, &err);
  if (*st != DLB_OK) return NULL;
  p = malloc((size_t)(header + data) + 1);
  dlb_safetensors_write_header(t, n, m, nm, header, (char *)p);
  for (size_t k = 0; k < n; k++) {
    const dlb_safetensors_tensor *x = &t[order[k]];
    if (k > 0) CHECK_EQ_INT(x->begin, t[order[k - 1]].end); /* data order, no gaps */
    if (x->end > x->begin)
      memcpy(p + header + x->begin, datas[x->index], (size_t)(x->end - x->begin));
  }
  *size = (size_t)(header + data);
  return p;
}

/* The reference writer's bytes for the same tensors (its own tests' vectors). */
static void test_writer_matches_reference(void) {
  static const float six[6] = {0, 1, 2, 3, 4, 5};
  static const unsigned char expected_attn_0[] = {
      64,  0,   0,   0,   0,   0,   0,   0,   '{', '"', 'a', 't', 't', 'n', '.', '0',
      '"', ':', '{', '"', 'd', 't', 'y', 'p', 'e', '"', ':', '"', 'F', '3', '2', '"',
      ',', '"', 's', 'h', 'a', 'p', 'e', '"', ':', '[', '1', ',', '2', ',', '3', ']',
      ',', '"', 'd', 'a', 't', 'a', '_', 'o', 'f', 'f', 's', 'e', 't', 's', '"', ':',
      '[', '0', ',', '2', '4', ']', '}', '}', 0,   0,   0,   0,   0,   0,   128, 63,
      0,   0,   0,   64,  0,   0,   64,  64,  0,   0,   128, 64,  0,   0,   160, 64};
  static const int64_t shape123[] = {1, 2, 3}, shape1123[] = {1, 1, 2, 3};
  const void *datas[] = {six};
  dlb_safetensors_tensor t = {
      .name = "attn.0", .name_len = 6, .dtype = DLB_FLOAT32, .ndim = 3, .shape = shape123};
  size_t size;
  dlb_status st;
  unsigned char *p = write_file(&t, 1, NULL, 0, datas, &size, &st);
  CHECK_EQ_INT(st, DLB_OK);
  CHECK_EQ_INT(size, sizeof expected_attn_0);
  CHECK(p && size == sizeof expected_attn_0 && memcmp(p, expected_attn_0, size) == 0);
  free(p);
  /* a 65-byte header: padded with 7 spaces to 72 */
  t = (dlb_safetensors_tensor){
      .name = "attn0", .name_len = 5, .dtype = DLB_FLOAT32, .ndim = 4, .shape = shape1123};
  p = write_file(&t, 1, NULL, 0, datas, &size, &st);
  CHECK_EQ_INT(size, 8 + 72 + 24);
  if (p) {
    CHECK_EQ_INT(p[0], 72);
    CHECK(memcmp(p + 8,
                 "{\"attn0\":{\"dtype\":\"F32\",\"shape\":[1,1,2,3],\"data_offsets\":[0,24]}}"
                 "       ",
                 72) == 0);
  }
  free(p);
  /* no tensors: "{}" and six spaces; with metadata as the reference writes it */
  p = write_file(NULL, 0, NULL, 0, NULL, &size, &st);
  CHECK(p && size == 16 && memcmp(p, "\x08\0\0\0\0\0\0\0{}      ", 16) == 0);
  free(p);
  {
    dlb_safetensors_pair m = {"framework", 9, "pt", 2};
    p = write_file(NULL, 0, &m, 1, NULL, &size, &st);
    CHECK(p && size == 48 &&
          memcmp(p, "\x28\0\0\0\0\0\0\0{\"__metadata__\":{\"framework\":\"pt\"}}     ", 48) == 0);
    free(p);
  }
}

/* Names in order, data by item size: every tensor aligned; the file reads back. */
static void test_writer_layout_and_round_trip(void) {
  static const int64_t s3[] = {3}, s2x2[] = {2, 2}, s0[] = {0, 5};
  static const unsigned char b3[3] = {1, 0, 1};
  static const uint16_t h4[4] = {1, 2, 3, 4};
  static const double d3[3] = {0.5, -1, 2};
  static const int32_t i4[4] = {7, 8, 9, -10};
  const void *datas[] = {b3, h4, d3, i4, NULL};
  dlb_safetensors_tensor t[5] = {
      {.name = "mask", .name_len = 4, .index = 0, .dtype = DLB_BOOL, .ndim = 1, .shape = s3},
      {.name = "half", .name_len = 4, .index = 1, .dtype = DLB_BFLOAT16, .ndim = 2, .shape = s2x2},
      {.name = "doubles", .name_len = 7, .index = 2, .dtype = DLB_FLOAT64, .ndim = 1, .shape = s3},
      {.name = "ints\n\"q\"",
       .name_len = 8,
       .index = 3,
       .dtype = DLB_INT32,
       .ndim = 2,
       .shape = s2x2},
      {.name = "none", .name_len = 4, .index = 4, .dtype = DLB_FLOAT32, .ndim = 2, .shape = s0},
  };
  dlb_safetensors_pair m[2] = {{"z", 1, "last", 4}, {"a", 1, "first \xe2\x82\xac", 9}};
  size_t size, size2;
  dlb_status st;
  dlb_safetensors_header h;
  unsigned char *p = write_file(t, 5, m, 2, datas, &size, &st), *q;
  CHECK_EQ_INT(st, DLB_OK);
  if (!p) return;
  /* sorted by name, the metadata by key */
  CHECK_EQ_STR(t[0].name, "doubles");
  CHECK_EQ_STR(t[4].name, "none");
  CHECK_EQ_STR(m[0].key, "a");
  /* the JSON lists them so, __metadata__ first; control characters escaped */
  {
    const char *start =
        "{\"__metadata__\":{\"a\":\"first \xe2\x82\xac\",\"z\":\"last\"},\"doubles\":";
    CHECK(memcmp(p + 8, start, strlen(start)) == 0);
  }
  CHECK(contains(p, size, "\"ints\\n\\\"q\\\"\":{\"dtype\":\"I32\""));
  CHECK(contains(p, size, "\"none\":{\"dtype\":\"F32\",\"shape\":[0,5],\"data_offsets\":[40,40]}"));
  CHECK(contains(p, size, "\"mask\":{\"dtype\":\"BOOL\",\"shape\":[3],\"data_offsets\":[48,51]}"));
  CHECK_EQ_INT(size % 8, 51 % 8); /* the header is a multiple of 8 */
  CHECK_EQ_INT(parse(p, size, &h), DLB_OK);
  CHECK_EQ_INT(h.ntensors, 5);
  CHECK_EQ_INT(h.nmetadata, 2);
  CHECK_EQ_INT(h.data_start % 8, 0);
  for (size_t i = 0; i < h.ntensors; i++) {
    const dlb_safetensors_tensor *r = &h.tensors[i];
    /* aligned in the file for its dtype */
    CHECK_EQ_INT((h.data_start + r->begin) % dlb_safetensors_alignment(r->dtype), 0);
    CHECK_EQ_INT(r->dtype, t[i].dtype);
    CHECK_EQ_INT(r->ndim, t[i].ndim);
    CHECK_EQ_INT(r->begin, t[i].begin);
    CHECK(r->name_len == t[i].name_len && memcmp(r->name, t[i].name, r->name_len) == 0);
    if (datas[t[i].index])
      CHECK(memcmp(p + h.data_start + r->begin, datas[t[i].index], (size_t)(r->end - r->begin)) ==
            0);
  }
  CHECK_EQ_STR(h.metadata[0].value, "first \xe2\x82\xac");
  dlb_safetensors_free(&h);
  /* the same tensors in another order make the same bytes */
  {
    dlb_safetensors_tensor swapped = t[0];
    t[0] = t[3];
    t[3] = swapped;
    q = write_file(t, 5, m, 2, datas, &size2, &st);
    CHECK(q && size2 == size && memcmp(p, q, size) == 0);
    free(q);
  }
  free(p);
}

static void test_writer_refusals(void) {
  static const int64_t s1[] = {1}, huge[] = {(int64_t)1 << 53}, over[] = {INT64_MAX, 2};
  static const int64_t bytes_over[] = {(int64_t)1 << 52, (int64_t)1 << 52};
  size_t order[2];
  uint64_t header, data;
  struct {
    dlb_safetensors_tensor t;
    dlb_status code;
    const char *text;
  } cases[] = {
      {{.name = "__metadata__", .name_len = 12, .dtype = DLB_UINT8, .ndim = 1, .shape = s1},
       DLB_E_ARGUMENT,
       "__metadata__"},
      {{.name = "a\0b", .name_len = 3, .dtype = DLB_UINT8, .ndim = 1, .shape = s1},
       DLB_E_ARGUMENT,
       "NUL"},
      {{.name = "\xff", .name_len = 1, .dtype = DLB_UINT8, .ndim = 1, .shape = s1},
       DLB_E_ARGUMENT,
       "UTF-8"},
      {{.name = "z", .name_len = 1, .dtype = DLB_COMPLEX128, .ndim = 1, .shape = s1},
       DLB_E_DTYPE,
       "complex128"},
      {{.name = "big", .name_len = 3, .dtype = DLB_UINT8, .ndim = 1, .shape = huge},
       DLB_E_SHAPE,
       "2^53"},
      {{.name = "big", .name_len = 3, .dtype = DLB_UINT8, .ndim = 2, .shape = over},
       DLB_E_SHAPE,
       "2^53"},
      {{.name = "big", .name_len = 3, .dtype = DLB_FLOAT32, .ndim = 2, .shape = bytes_over},
       DLB_E_SHAPE,
       "overflows"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dlb_status st = dlb_safetensors_plan(&cases[i].t, 1, NULL, 0, order, &header, &data, &err);
    CHECK_EQ_STR(dlb_status_name(st), dlb_status_name(cases[i].code));
    CHECK(strstr(err.message, cases[i].text) != NULL);
    if (cases[i].code == DLB_E_DTYPE) CHECK(err.hint && strstr(err.hint, "complex64"));
  }
  {
    dlb_safetensors_tensor two[2] = {
        {.name = "a", .name_len = 1, .dtype = DLB_UINT8, .ndim = 1, .shape = s1},
        {.name = "a", .name_len = 1, .dtype = DLB_UINT8, .ndim = 1, .shape = s1}};
    dlb_safetensors_pair m[2] = {{"k", 1, "v", 1}, {"k", 1, "w", 1}}, bad = {"k", 1, "\xc3", 1};
    CHECK_EQ_INT(dlb_safetensors_plan(two, 2, NULL, 0, order, &header, &data, &err),
                 DLB_E_ARGUMENT);
    CHECK(strstr(err.message, "twice") != NULL);
    CHECK_EQ_INT(dlb_safetensors_plan(two, 1, m, 2, order, &header, &data, &err), DLB_E_ARGUMENT);
    CHECK(strstr(err.message, "metadata key 'k' comes twice") != NULL);
    CHECK_EQ_INT(dlb_safetensors_plan(two, 1, &bad, 1, order, &header, &data, &err),
                 DLB_E_ARGUMENT);
    CHECK(strstr(err.message, "UTF-8") != NULL);
  }
}

int main(void) {
  test_one_tensor();
  test_header_forms();
  test_dtypes();
  test_several_tensors();
  test_no_tensors();
  test_bool_values();
  test_hostile_sizes();
  test_hostile_json();
  test_hostile_entries();
  test_hostile_shapes();
  test_hostile_offsets();
  test_hostile_layout();
  test_hostile_metadata();
  test_every_truncation();
  test_writer_matches_reference();
  test_writer_layout_and_round_trip();
  test_writer_refusals();
  return check_done("test_safetensors");
}
