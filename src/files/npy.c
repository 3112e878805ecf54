/* npy.c -- NumPy .npy files: a strict header parser, the header np.save
 * writes, and whole arrays to and from files and memory. No Lua here. */
#define _XOPEN_SOURCE 700 /* POSIX 2008: fstat, pread */
#include "npy.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/shape.h"
#include "mapping.h"

#define MAGIC "\x93NUMPY"
#define MAGIC_LEN 6

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define NATIVE_ORDER '>'
#else
#define NATIVE_ORDER '<'
#endif

/* ---- the preamble ---------------------------------------------------------- */

/* Bytes before the header text: magic, version, and a 2- or 4-byte length. */
static size_t preamble_size(int major) { return major == 1 ? 10 : 12; }

dlb_status dlb_npy_data_offset(const void *data, size_t size, uint64_t total, size_t *offset,
                               dlb_error *err) {
  const unsigned char *p = data;
  size_t pre;
  uint32_t hlen;
  if (total < MAGIC_LEN + 2 || size < MAGIC_LEN + 2)
    return dlb_fail(err, DLB_E_FORMAT, "%llu bytes are too short for a .npy file",
                    (unsigned long long)total);
  if (memcmp(p, MAGIC, MAGIC_LEN) != 0)
    return dlb_fail(err, DLB_E_FORMAT, "not a .npy file (it does not start with \\x93NUMPY)");
  if (p[6] < 1 || p[6] > 3 || p[7] != 0)
    return dlb_fail(err, DLB_E_FORMAT,
                    ".npy format version %u.%u (dlbridge reads 1.0, 2.0 and 3.0)", p[6], p[7]);
  pre = preamble_size(p[6]);
  if (total < pre || size < pre)
    return dlb_fail(err, DLB_E_FORMAT, "the .npy file ends inside its header length");
  hlen = p[6] == 1
             ? (uint32_t)(p[8] | p[9] << 8)
             : (uint32_t)p[8] | (uint32_t)p[9] << 8 | (uint32_t)p[10] << 16 | (uint32_t)p[11] << 24;
  /* NumPy writes headers of 64-byte multiples a few hundred long and, since
   * 1.24, refuses to read ones over 10000 bytes unless told to: a longer one
   * is no array dlbridge could read, and its text would be allocated by a
   * size the file (a script) controls. */
  if (hlen > DLB_NPY_HEADER_READ_MAX)
    return dlb_fail(err, DLB_E_FORMAT,
                    "the .npy header claims %lu bytes (dlbridge reads at most %u)",
                    (unsigned long)hlen, (unsigned)DLB_NPY_HEADER_READ_MAX);
  if ((uint64_t)hlen > total - pre)
    return dlb_fail(err, DLB_E_FORMAT,
                    "the .npy header claims %lu bytes, but only %llu follow its length",
                    (unsigned long)hlen, (unsigned long long)(total - pre));
  *offset = pre + hlen;
  return DLB_OK;
}

/* ---- the header dict ----------------------------------------------------------- */

/* The parser's position in the header text. A failure that is no syntax
 * error (an unsupported dtype, a bad extent) is kept in `deferred` until
 * the whole dict is known to be well-formed: a malformed header is FORMAT
 * whatever else is wrong with it. */
typedef struct parser {
  const char *p, *start, *end;
  int major;
  dlb_error *err;
  dlb_error deferred; /* code DLB_OK while there is none */
} parser;

static int at_end(const parser *ps) { return ps->p >= ps->end; }
static int peek(const parser *ps) { return at_end(ps) ? -1 : (unsigned char)*ps->p; }

/* Python's whitespace between tokens (no comments, no line continuations). */
static void skip_space(parser *ps) {
  while (!at_end(ps) && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
    ps->p++;
}

/* Skips whitespace, then consumes ch if it comes next. */
static int accept(parser *ps, char ch) {
  skip_space(ps);
  if (peek(ps) != (unsigned char)ch) return 0;
  ps->p++;
  return 1;
}

/* FORMAT: what was expected, and the header text from where it went wrong
 * (printable ASCII, cut). */
static dlb_status bad_header(parser *ps, const char *expected) {
  char near[41];
  size_t n = 0;
  for (const char *q = ps->p; q < ps->end && n < sizeof near - 1; q++, n++)
    near[n] = *q >= 0x20 && *q < 0x7f ? *q : '?';
  near[n] = '\0';
  dlb_fail(ps->err, DLB_E_FORMAT,
           "bad .npy header: expected %s at byte %zu of the dict, found '%s'", expected,
           (size_t)(ps->p - ps->start), n ? near : "the end");
  dlb_error_hint(ps->err,
                 "NumPy writes {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }");
  return DLB_E_FORMAT;
}

/* Records the first failure that is no syntax error. */
static void defer(parser *ps, dlb_status code, const char *hint, const char *fmt, const char *arg) {
  if (ps->deferred.code != DLB_OK) return;
  dlb_fail(&ps->deferred, code, fmt, arg);
  if (hint) dlb_error_hint(&ps->deferred, hint);
}

/* A Python string literal in either quote style, without escapes (no .npy
 * header needs one): its contents in *s, *n. */
static dlb_status parse_string(parser *ps, const char **s, size_t *n) {
  char quote;
  skip_space(ps);
  if (peek(ps) != '\'' && peek(ps) != '"') return bad_header(ps, "a quoted string");
  quote = *ps->p++;
  *s = ps->p;
  while (!at_end(ps) && *ps->p != quote) {
    if (*ps->p == '\\' || *ps->p == '\n' || *ps->p == '\r')
      return bad_header(ps, "a string without escapes or line breaks");
    ps->p++;
  }
  if (at_end(ps)) return bad_header(ps, "the string's closing quote");
  *n = (size_t)(ps->p - *s);
  ps->p++;
  return DLB_OK;
}

static int is_name_char(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* True or False, as a whole word. */
static dlb_status parse_bool(parser *ps, int *out) {
  skip_space(ps);
  for (int value = 0; value <= 1; value++) {
    const char *word = value ? "True" : "False";
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, word, n) == 0 &&
        ((size_t)(ps->end - ps->p) == n || !is_name_char((unsigned char)ps->p[n]))) {
      ps->p += n;
      *out = value;
      return DLB_OK;
    }
  }
  return bad_header(ps, "True or False");
}

/* A decimal integer as Python writes it (a '-' sign; no leading zeros; in
 * versions 1.0 and 2.0 Python 2's 'L' suffix). A negative or too large
 * value is a deferred SHAPE error. */
static dlb_status parse_extent(parser *ps, int64_t *out) {
  int negative = 0, overflow = 0;
  uint64_t v = 0;
  const char *digits;
  skip_space(ps);
  if (peek(ps) == '-') {
    negative = 1;
    ps->p++;
  }
  digits = ps->p;
  while (!at_end(ps) && *ps->p >= '0' && *ps->p <= '9') {
    unsigned d = (unsigned)(*ps->p - '0');
    if (v > ((uint64_t)INT64_MAX - d) / 10) overflow = 1;
    else v = v * 10 + d;
    ps->p++;
  }
  if (ps->p == digits) return bad_header(ps, "an integer");
  if (digits[0] == '0') /* Python: 0, 00, ... but never 012 */
    for (const char *q = digits; q < ps->p; q++)
      if (*q != '0') {
        ps->p = digits;
        return bad_header(ps, "an integer without leading zeros");
      }
  if (ps->major <= 2 && peek(ps) == 'L') ps->p++;
  if (is_name_char(peek(ps))) return bad_header(ps, "',' or ')' after an integer");
  if (overflow)
    defer(ps, DLB_E_SHAPE, NULL, "a shape extent is too large (%s)", "more than 2^63 - 1");
  else if (negative && v != 0)
    defer(ps, DLB_E_SHAPE, NULL, "a shape extent is negative (%s)", "the file is corrupt");
  *out = negative ? 0 : (int64_t)v;
  return DLB_OK;
}

/* The shape tuple: (), (3,), (3, 4), (3, 4,). (3) is an integer, not a tuple. */
static dlb_status parse_shape(parser *ps, dlb_npy_header *h) {
  int count = 0;
  dlb_status st;
  if (!accept(ps, '(')) return bad_header(ps, "the shape, a tuple such as (2, 3)");
  if (accept(ps, ')')) {
    h->ndim = 0;
    return DLB_OK;
  }
  for (;;) {
    int64_t extent;
    if ((st = parse_extent(ps, &extent)) != DLB_OK) return st;
    if (count < DLB_MAX_NDIM) h->shape[count] = extent;
    if (count < INT32_MAX) count++;
    if (accept(ps, ',')) {
      if (accept(ps, ')')) break;
      continue;
    }
    if (!accept(ps, ')')) return bad_header(ps, "',' or ')' in the shape");
    if (count == 1) {
      ps->p--;
      return bad_header(ps, "a tuple: a 1-D shape is written (n,)");
    }
    break;
  }
  if (count > DLB_MAX_NDIM)
    defer(ps, DLB_E_SHAPE, "dlbridge arrays have at most 32 dimensions",
          "the shape has more than 32 dimensions%s", "");
  h->ndim = count > DLB_MAX_NDIM ? DLB_MAX_NDIM : count;
  return DLB_OK;
}

/* Skips a bracketed value ([...] or (...), strings inside included): a
 * structured or subarray descr, which dlbridge does not read. */
static dlb_status skip_bracketed(parser *ps) {
  size_t depth = 0;
  do {
    int c = peek(ps);
    if (c < 0) return bad_header(ps, "the closing bracket of the descr");
    if (c == '\'' || c == '"') {
      const char *s;
      size_t n;
      dlb_status st = parse_string(ps, &s, &n);
      if (st != DLB_OK) return st;
      continue;
    }
    if (c == '[' || c == '(') depth++;
    else if (c == ']' || c == ')') depth--;
    ps->p++;
  } while (depth > 0);
  return DLB_OK;
}

/* dlbridge's dtype for a descr's kind letter and size, or -1. */
static int dtype_of_kind(char kind, long size) {
  switch (kind) {
    case 'b': return size == 1 ? DLB_BOOL : -1;
    case 'i':
      return size == 1   ? DLB_INT8
             : size == 2 ? DLB_INT16
             : size == 4 ? DLB_INT32
             : size == 8 ? DLB_INT64
                         : -1;
    case 'u':
      return size == 1   ? DLB_UINT8
             : size == 2 ? DLB_UINT16
             : size == 4 ? DLB_UINT32
             : size == 8 ? DLB_UINT64
                         : -1;
    case 'f':
      return size == 2 ? DLB_FLOAT16 : size == 4 ? DLB_FLOAT32 : size == 8 ? DLB_FLOAT64 : -1;
    case 'c': return size == 8 ? DLB_COMPLEX64 : size == 16 ? DLB_COMPLEX128 : -1;
    default: return -1;
  }
}

/* The hint for a NumPy kind dlbridge has no dtype for, or NULL when the
 * letter is no NumPy kind at all. */
static const char *unsupported_kind_hint(char kind) {
  switch (kind) {
    case 'U':
    case 'S':
    case 'a':
      return "strings are not numbers: save codes or bytes instead (in NumPy, "
             "np.frombuffer(a.tobytes(), np.uint8) or a.view(np.uint32) for '<U')";
    case 'O': return "object arrays hold pickled Python objects: save a numeric array instead";
    case 'V': return "save each field of a structured or void array as its own .npy file";
    case 'M':
    case 'm': return "save datetimes and timedeltas as int64: a.view(np.int64) in NumPy";
    default: return NULL;
  }
}

/* Interprets the descr string s[0..n): '<f8', '|b1', '>i2', ... */
static dlb_status parse_descr(parser *ps, const char *s, size_t n, dlb_npy_header *h) {
  char order, kind, text[24];
  long size = 0;
  size_t k = 2;
  int dtype;
  snprintf(text, sizeof text, "%.*s", (int)(n < 20 ? n : 20), s);
  for (char *q = text; *q; q++)
    if (*q < 0x20 || *q >= 0x7f) *q = '?';
  if (n < 2 || s[0] == '\0' || !strchr("<>=|", s[0])) goto unknown;
  order = s[0];
  kind = s[1];
  if (unsupported_kind_hint(kind)) {
    defer(ps, DLB_E_DTYPE, unsupported_kind_hint(kind), "the .npy dtype '%s' has no dlbridge dtype",
          text);
    return DLB_OK;
  }
  if (k == n || s[k] == '0') goto unknown; /* a size, without leading zeros */
  for (; k < n && s[k] >= '0' && s[k] <= '9' && size < 1000; k++) size = size * 10 + (s[k] - '0');
  if (k != n) goto unknown;
  if ((kind == 'f' && (size == 12 || size == 16)) || (kind == 'c' && (size == 24 || size == 32))) {
    defer(ps, DLB_E_DTYPE,
          "long double has no dlbridge dtype: save a.astype(np.float64) "
          "(or np.complex128) in NumPy",
          "the .npy dtype '%s' (long double) has no dlbridge dtype", text);
    return DLB_OK;
  }
  dtype = dtype_of_kind(kind, size);
  if (dtype < 0) goto unknown;
  if (order == '|' && size != 1) goto unknown; /* NumPy writes '|' only where order is moot */
  h->dtype = (dlb_dtype)dtype;
  h->swapped = size > 1 && order != '=' && order != NATIVE_ORDER;
  return DLB_OK;
unknown:
  dlb_fail(ps->err, DLB_E_FORMAT, "bad .npy header: '%s' is not a NumPy dtype descr", text);
  dlb_error_hint(ps->err,
                 "a descr is a byte order (< > | =), a kind and a size: '<f8', '|b1', '>i4'");
  return DLB_E_FORMAT;
}

/* The descr value: a string, or a list or tuple (a structured or subarray
 * dtype, DTYPE). */
static dlb_status parse_descr_value(parser *ps, dlb_npy_header *h) {
  const char *s;
  size_t n;
  dlb_status st;
  skip_space(ps);
  if (peek(ps) == '[' || peek(ps) == '(') {
    if ((st = skip_bracketed(ps)) != DLB_OK) return st;
    defer(ps, DLB_E_DTYPE, unsupported_kind_hint('V'),
          "the .npy file holds a structured dtype%s, which dlbridge does not have", "");
    return DLB_OK;
  }
  if ((st = parse_string(ps, &s, &n)) != DLB_OK) return st;
  return parse_descr(ps, s, n, h);
}

enum { KEY_DESCR = 1, KEY_FORTRAN = 2, KEY_SHAPE = 4 };

/* One 'key': value entry of the dict; *seen collects the keys met. */
static dlb_status parse_entry(parser *ps, dlb_npy_header *h, int *seen) {
  const char *key, *at;
  size_t n;
  int which;
  dlb_status st;
  skip_space(ps);
  at = ps->p;
  if ((st = parse_string(ps, &key, &n)) != DLB_OK) return st;
  which = n == 5 && memcmp(key, "descr", 5) == 0             ? KEY_DESCR
          : n == 13 && memcmp(key, "fortran_order", 13) == 0 ? KEY_FORTRAN
          : n == 5 && memcmp(key, "shape", 5) == 0           ? KEY_SHAPE
                                                             : 0;
  if (!which || (*seen & which)) {
    ps->p = at;
    return bad_header(ps, which ? "each key once" : "'descr', 'fortran_order' or 'shape'");
  }
  *seen |= which;
  if (!accept(ps, ':')) return bad_header(ps, "':' after the key");
  if (which == KEY_DESCR) return parse_descr_value(ps, h);
  if (which == KEY_FORTRAN) return parse_bool(ps, &h->fortran_order);
  return parse_shape(ps, h);
}

/* The dict, and only whitespace around it. */
static dlb_status parse_dict(parser *ps, dlb_npy_header *h) {
  int seen = 0;
  dlb_status st;
  if (!accept(ps, '{')) return bad_header(ps, "'{'");
  while (!accept(ps, '}')) {
    if ((st = parse_entry(ps, h, &seen)) != DLB_OK) return st;
    if (!accept(ps, ',')) {
      if (accept(ps, '}')) break;
      return bad_header(ps, "',' or '}'");
    }
  }
  skip_space(ps);
  if (!at_end(ps)) return bad_header(ps, "only spaces and a newline after the dict");
  if (seen != (KEY_DESCR | KEY_FORTRAN | KEY_SHAPE)) {
    dlb_fail(ps->err, DLB_E_FORMAT, "bad .npy header: the dict has no '%s'",
             !(seen & KEY_DESCR)     ? "descr"
             : !(seen & KEY_FORTRAN) ? "fortran_order"
                                     : "shape");
    dlb_error_hint(ps->err,
                   "NumPy writes {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }");
    return DLB_E_FORMAT;
  }
  return DLB_OK;
}

dlb_status dlb_npy_parse(const void *data, size_t size, uint64_t total, dlb_npy_header *h,
                         dlb_error *err) {
  const unsigned char *p = data;
  size_t offset = 0;
  parser ps;
  dlb_status st;
  if (size > total) size = (size_t)total;
  if ((st = dlb_npy_data_offset(data, size, total, &offset, err)) != DLB_OK) return st;
  if (size < offset)
    return dlb_fail(err, DLB_E_FORMAT, "the .npy header is cut short (%zu of %zu bytes)", size,
                    offset);
  memset(h, 0, sizeof *h);
  h->major = p[6];
  h->minor = p[7];
  h->data_offset = offset;
  ps.start = ps.p = (const char *)p + preamble_size(h->major);
  ps.end = (const char *)p + offset;
  ps.major = h->major;
  ps.err = err;
  ps.deferred.code = DLB_OK;
  if ((st = parse_dict(&ps, h)) != DLB_OK) return st;
  if (ps.deferred.code != DLB_OK) {
    if (err) *err = ps.deferred;
    return ps.deferred.code;
  }
  if ((st = dlb_shape_numel(h->ndim, h->shape, &h->numel, err)) != DLB_OK) return st;
  if ((st = dlb_shape_nbytes(h->numel, dlb_dtype_get(h->dtype)->itemsize, &h->nbytes, err)) !=
      DLB_OK)
    return st;
  if ((uint64_t)h->nbytes > total - offset)
    return dlb_fail(err, DLB_E_FORMAT,
                    "the .npy data is truncated: the shape needs %zu bytes, %llu follow the header",
                    h->nbytes, (unsigned long long)(total - offset));
  return DLB_OK;
}

/* ---- arrays ------------------------------------------------------------------- */

void dlb_npy_item(const dlb_npy_header *h, dlb_load_item *it) {
  it->name = NULL;
  it->dtype = h->dtype;
  it->ndim = h->ndim;
  it->shape = h->shape;
  it->fortran_order = h->fortran_order;
  it->numel = h->numel;
  it->nbytes = h->nbytes;
  it->offset = h->data_offset;
  it->swapped = h->swapped;
}

dlb_status dlb_npy_read_header(const dlb_load_source *s, dlb_npy_header *h, dlb_error *err) {
  unsigned char pre[DLB_NPY_PREAMBLE];
  size_t n = s->size < sizeof pre ? (size_t)s->size : sizeof pre, offset = 0;
  char *text;
  dlb_status st;
  if (s->bytes || s->size == 0) /* in memory: parsed where it is */
    return dlb_npy_parse(s->bytes, (size_t)s->size, s->size, h, err);
  if ((st = dlb_load_read(s, pre, n, 0, err)) != DLB_OK) return st;
  if ((st = dlb_npy_data_offset(pre, n, s->size, &offset, err)) != DLB_OK) return st;
  if (!(text = malloc(offset)))
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for a .npy header of %zu bytes", offset);
  st = dlb_load_read(s, text, offset, 0, err);
  if (st == DLB_OK) st = dlb_npy_parse(text, offset, s->size, h, err);
  free(text);
  return st;
}

dlb_status dlb_npy_load(dlb_load_source *s, dlb_array *out, dlb_error *err) {
  dlb_npy_header h;
  dlb_load_item it;
  dlb_status st;
  out->buffer = NULL;
  if ((st = dlb_npy_read_header(s, &h, err)) != DLB_OK) return st;
  dlb_npy_item(&h, &it);
  return dlb_load_array(s, &it, out, err);
}

/* Loads through a source opened by the caller (st: how the open went). */
static dlb_status load_and_close(dlb_load_source *s, dlb_status st, dlb_array *out,
                                 dlb_error *err) {
  out->buffer = NULL;
  if (st == DLB_OK) st = dlb_npy_load(s, out, err);
  dlb_load_close(s);
  return st;
}

dlb_status dlb_npy_from_memory(dlb_backend *host, const void *data, size_t size, dlb_array *out,
                               dlb_error *err) {
  dlb_load_options o = {DLB_COPY_ALWAYS, NULL, 0, 0, NULL, NULL};
  dlb_load_source s;
  dlb_status st = dlb_load_open_memory(&s, host, data, size, NULL, &o, err);
  return load_and_close(&s, st, out, err);
}

dlb_status dlb_npy_from_buffer(dlb_buffer *buf, dlb_copy_mode copy, dlb_backend *host,
                               dlb_array *out, dlb_error *err) {
  dlb_load_options o = {copy, NULL, 0, 1, NULL, NULL};
  dlb_load_source s;
  dlb_status st;
  out->buffer = NULL;
  if (!buf->host && buf->nbytes)
    return dlb_fail(err, DLB_E_UNSUPPORTED, "a .npy buffer must be host memory");
  st = dlb_load_open_memory(&s, host, buf->host, buf->nbytes, buf, &o, err);
  return load_and_close(&s, st, out, err);
}

dlb_status dlb_npy_load_file(dlb_backend *host, const char *path, dlb_copy_mode copy,
                             dlb_array *out, dlb_error *err) {
  dlb_load_options o = {copy, NULL, 0, 1, NULL, NULL};
  dlb_load_source s;
  dlb_status st = dlb_load_open_file(&s, host, path, &o, err);
  return load_and_close(&s, st, out, err);
}

/* ---- writing ---------------------------------------------------------------------- */
/* The descr np.save writes for dtype in this machine's byte order. */
static const char *descr_of(dlb_dtype dtype, char *out) {
  static const char *const kinds[DLB_DTYPE_COUNT] = {
      [DLB_BOOL] = "b1",      [DLB_INT8] = "i1",       [DLB_INT16] = "i2",   [DLB_INT32] = "i4",
      [DLB_INT64] = "i8",     [DLB_UINT8] = "u1",      [DLB_UINT16] = "u2",  [DLB_UINT32] = "u4",
      [DLB_UINT64] = "u8",    [DLB_FLOAT16] = "f2",    [DLB_FLOAT32] = "f4", [DLB_FLOAT64] = "f8",
      [DLB_COMPLEX64] = "c8", [DLB_COMPLEX128] = "c16"};
  out[0] = dlb_dtype_get(dtype)->itemsize == 1 ? '|' : NATIVE_ORDER;
  strcpy(out + 1, kinds[dtype]);
  return out;
}

dlb_status dlb_npy_format_header(dlb_dtype dtype, int ndim, const int64_t *shape, int fortran_order,
                                 char *out, size_t *len, dlb_error *err) {
  char dict[DLB_NPY_HEADER_MAX], descr[8];
  size_t n = 0, pre, padded;
  int64_t numel;
  dlb_status st;
  if (dtype == DLB_BFLOAT16) {
    dlb_fail(err, DLB_E_DTYPE, ".npy has no bfloat16 type");
    dlb_error_hint(err, "convert first: a:astype(\"float32\") (NumPy has no bfloat16 either)");
    return DLB_E_DTYPE;
  }
  if ((st = dlb_shape_numel(ndim, shape, &numel, err)) != DLB_OK) return st;
  /* At most 32 extents of at most 19 digits: this always fits in dict. */
  n +=
      (size_t)snprintf(dict + n, sizeof dict - n, "{'descr': '%s', 'fortran_order': %s, 'shape': (",
                       descr_of(dtype, descr), fortran_order ? "True" : "False");
  for (int d = 0; d < ndim; d++)
    n += (size_t)snprintf(dict + n, sizeof dict - n, d ? ", %lld" : "%lld", (long long)shape[d]);
  n += (size_t)snprintf(dict + n, sizeof dict - n, "%s), }", ndim == 1 ? "," : "");
  if (ndim > 0) { /* NumPy's room to grow the first extent in place: 21 digits in all */
    int digits = snprintf(NULL, 0, "%lld", (long long)shape[0]);
    for (int k = digits; k < 21; k++) dict[n++] = ' ';
  }
  /* Spaces and a newline so that the data starts at a multiple of 64;
   * version 2.0 (a 4-byte length) only when 1.0's 2 bytes cannot say it. */
  pre = preamble_size(1);
  padded = (pre + n + 1 + 63) / 64 * 64 - pre;
  if (padded - n - 1 == 0) padded += 64; /* NumPy always pads: 64 spaces rather than none */
  if (padded > 0xffff) {
    pre = preamble_size(2);
    padded = (pre + n + 1 + 63) / 64 * 64 - pre;
    if (padded - n - 1 == 0) padded += 64;
  }
  if (pre + padded > DLB_NPY_HEADER_MAX)
    return dlb_fail(err, DLB_E_SHAPE, "the .npy header would exceed %d bytes", DLB_NPY_HEADER_MAX);
  memcpy(out, MAGIC, MAGIC_LEN);
  out[6] = pre == 10 ? 1 : 2;
  out[7] = 0;
  out[8] = (char)(padded & 0xff);
  out[9] = (char)((padded >> 8) & 0xff);
  if (pre == 12) {
    out[10] = (char)((padded >> 16) & 0xff);
    out[11] = (char)((padded >> 24) & 0xff);
  }
  memcpy(out + pre, dict, n);
  memset(out + pre + n, ' ', padded - n - 1);
  out[pre + padded - 1] = '\n';
  *len = pre + padded;
  return DLB_OK;
}

int dlb_npy_fortran_view(const dlb_array *a, dlb_array *view) {
  if (a->ndim < 2 || dlb_array_is_contiguous(a)) return 0;
  *view = *a;
  for (int d = 0; d < a->ndim; d++) {
    view->shape[d] = a->shape[a->ndim - 1 - d];
    view->strides[d] = a->strides[a->ndim - 1 - d];
  }
  return dlb_shape_is_contiguous(view->ndim, view->shape, view->strides);
}

dlb_status dlb_npy_save_file(const dlb_array *a, const char *path, dlb_error *err) {
  return dlb_npy_save_file_buffered(a, path, DLB_FILE_CHUNK_BYTES, err);
}

dlb_status dlb_npy_save_file_buffered(const dlb_array *a, const char *path, size_t buffer_bytes,
                                      dlb_error *err) {
  char header[DLB_NPY_HEADER_MAX];
  size_t hlen;
  dlb_file_writer f;
  dlb_array column_major;
  int fortran = dlb_npy_fortran_view(a, &column_major);
  dlb_status st = dlb_npy_format_header(a->dtype, a->ndim, a->shape, fortran, header, &hlen, err);
  if (st != DLB_OK) return st;
  if ((st = dlb_file_writer_open(&f, path, buffer_bytes, err)) != DLB_OK) return st;
  /* numel x itemsize: the bytes of an array that exists, no overflow */
  st = dlb_file_writer_reserve(&f, hlen + (uint64_t)a->numel * dlb_array_itemsize(a), err);
  if (st == DLB_OK) st = dlb_file_writer_write(&f, header, hlen, err);
  if (st == DLB_OK) st = dlb_file_writer_write_array(&f, fortran ? &column_major : a, 0, err);
  return dlb_file_writer_close(&f, st, err);
}
