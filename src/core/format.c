/* format.c -- NumPy-like text for an array (tostring), summarised when large. */
#include "format.h"
#include "event.h"
#include "staging.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- dlb_strbuf ---------------------------------------------------------- */

void dlb_strbuf_init(dlb_strbuf *sb) {
  sb->data = NULL;
  sb->len = 0;
  sb->capacity = 0;
  sb->failed = 0;
}

void dlb_strbuf_free(dlb_strbuf *sb) {
  free(sb->data);
  dlb_strbuf_init(sb);
}

/* Makes room for extra more bytes plus the NUL; on failure sets failed, returns -1. */
static int strbuf_reserve(dlb_strbuf *sb, size_t extra) {
  if (sb->failed) return -1;
  /* No object may exceed PTRDIFF_MAX bytes: refuse before asking malloc. */
  if (extra >= (size_t)PTRDIFF_MAX - sb->len) {
    sb->failed = 1;
    return -1;
  }
  size_t need = sb->len + extra + 1;
  if (need <= sb->capacity) return 0;
  size_t cap = sb->capacity ? sb->capacity : 64;
  while (cap < need) cap = cap > (size_t)PTRDIFF_MAX / 2 ? need : cap * 2;
  char *p = realloc(sb->data, cap);
  if (p == NULL) {
    sb->failed = 1;
    return -1;
  }
  p[sb->len] = '\0';
  sb->data = p;
  sb->capacity = cap;
  return 0;
}

/* s must not point into sb's own data. */
void dlb_strbuf_add(dlb_strbuf *sb, const char *s, size_t n) {
  if (strbuf_reserve(sb, n) != 0) return;
  if (n > 0) memcpy(sb->data + sb->len, s, n);
  sb->len += n;
  sb->data[sb->len] = '\0';
}

void dlb_strbuf_printf(dlb_strbuf *sb, const char *fmt, ...) {
  va_list ap, ap2;
  if (sb->failed) return;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap); /* measure */
  va_end(ap);
  if (n < 0) sb->failed = 1;
  else if (strbuf_reserve(sb, (size_t)n) == 0) {
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap2); /* write */
    sb->len += (size_t)n;
  }
  va_end(ap2);
}

static void strbuf_puts(dlb_strbuf *sb, const char *s) { dlb_strbuf_add(sb, s, strlen(s)); }

static void strbuf_spaces(dlb_strbuf *sb, size_t n) {
  static const char spaces[] = "                                ";
  while (n > 0) {
    size_t k = n < sizeof spaces - 1 ? n : sizeof spaces - 1;
    dlb_strbuf_add(sb, spaces, k);
    n -= k;
  }
}

/* ---- one element --------------------------------------------------------- */

/* Room for the longest element text: two reals ("-1.2345678e-308.") and "+j". */
#define ELEM_CAP 64

/* x rounded to dtype's precision (the identity for float64). */
static double round_to(dlb_dtype dtype, double x) {
  switch (dtype) {
    case DLB_FLOAT16: return dlb_float16_to_double(dlb_float16_from_double(x));
    case DLB_BFLOAT16: return dlb_bfloat16_to_double(dlb_bfloat16_from_double(x));
    case DLB_FLOAT32:
    case DLB_COMPLEX64: return (double)(float)x;
    default: return x;
  }
}

/* A real with at most 8 significant digits (NumPy's precision), and for the
 * narrower dtypes the fewest digits that read back as the same value
 * (float16 0.001 prints "0.001", not "0.0010004044"); '.' is appended when
 * the text would read as an integer. */
static size_t format_real(char *buf, size_t cap, double x, dlb_dtype dtype) {
  int n = 0;
  if (isnan(x)) return (size_t)snprintf(buf, cap, "nan"); /* never glibc's "-nan" */
  if (isinf(x)) return (size_t)snprintf(buf, cap, "%s", x < 0 ? "-inf" : "inf");
  /* Never fewer digits than the integer part has (100, not 1e+02). */
  int first = dtype == DLB_FLOAT64 || dtype == DLB_COMPLEX128 ? 8 : 1;
  for (double m = fabs(x); m >= 10.0 && first < 8; m /= 10.0) first++;
  for (int digits = first; digits <= 8; digits++) {
    n = snprintf(buf, cap, "%.*g", digits, x);
    if (digits == 8 || round_to(dtype, strtod(buf, NULL)) == x) break;
  }
  if (n < 0 || (size_t)n >= cap - 1) return n < 0 ? 0 : cap - 1; /* cannot happen with ELEM_CAP */
  if (strchr(buf, '.') == NULL && strchr(buf, 'e') == NULL) {
    buf[n++] = '.';
    buf[n] = '\0';
  }
  return (size_t)n;
}

/* Writes one element's text into buf (ELEM_CAP bytes) and returns its length. */
static size_t format_element(char *buf, const dlb_scalar *v, dlb_dtype dtype) {
  int n;
  switch (v->kind) {
    case DLB_SCALAR_BOOL: n = snprintf(buf, ELEM_CAP, "%s", v->v.b ? "true" : "false"); break;
    case DLB_SCALAR_INT: n = snprintf(buf, ELEM_CAP, "%lld", (long long)v->v.i); break;
    case DLB_SCALAR_UINT: n = snprintf(buf, ELEM_CAP, "%llu", (unsigned long long)v->v.u); break;
    case DLB_SCALAR_FLOAT: return format_real(buf, ELEM_CAP, v->v.f, dtype);
    case DLB_SCALAR_COMPLEX: {
      /* NumPy style: "1.+2.j", "0.-1.5j", "nan+nanj". */
      double im = v->v.c.im;
      size_t len = format_real(buf, ELEM_CAP / 2, v->v.c.re, dtype);
      buf[len++] = signbit(im) && !isnan(im) ? '-' : '+';
      len += format_real(buf + len, ELEM_CAP / 2 - 2, fabs(im), dtype);
      buf[len++] = 'j';
      buf[len] = '\0';
      return len;
    }
    default: n = snprintf(buf, ELEM_CAP, "?"); break;
  }
  return n < 0 ? 0 : (size_t)n;
}

void dlb_format_scalar(dlb_strbuf *out, dlb_dtype dtype, const dlb_scalar *v) {
  char buf[ELEM_CAP];
  dlb_strbuf_add(out, buf, format_element(buf, v, dtype));
}

/* ---- the array ----------------------------------------------------------- */

/* Beyond this many printed elements (or "[]" cells) print "[...]" instead. */
#define FORMAT_MAX_PRINTED 10000
#define ARRAY_PREFIX "array("

typedef struct fmt_ctx {
  const dlb_array *a;
  const char *base;  /* host address of element 0...0; NULL: read through the backend */
  dlb_status status; /* the first failed backend read, else DLB_OK */
  dlb_error *err;
  size_t itemsize;
  int summarise; /* long dimensions show only their edge items */
  int empty;     /* some extent is 0: print nested brackets only */
  int measuring; /* first pass: only find the widest element */
  size_t width;  /* widest printed element */
  dlb_strbuf *out;
} fmt_ctx;

/* Whether dim shows "..." between its first and last DLB_FORMAT_EDGEITEMS entries. */
static int dim_is_split(const fmt_ctx *c, int dim) {
  return c->summarise && c->a->shape[dim] > 2 * DLB_FORMAT_EDGEITEMS;
}

static int64_t printed_count(const fmt_ctx *c, int dim) {
  return dim_is_split(c, dim) ? 2 * DLB_FORMAT_EDGEITEMS : c->a->shape[dim];
}

/* The index along dim of the k-th printed entry. */
static int64_t printed_index(const fmt_ctx *c, int dim, int64_t k) {
  if (dim_is_split(c, dim) && k >= DLB_FORMAT_EDGEITEMS)
    return c->a->shape[dim] - 2 * DLB_FORMAT_EDGEITEMS + k;
  return k;
}

static void put(fmt_ctx *c, const char *s) {
  if (!c->measuring) strbuf_puts(c->out, s);
}

/* The element at offset (in elements) from element 0...0: measured or printed. */
static void put_element(fmt_ctx *c, int64_t offset, int pad) {
  char buf[ELEM_CAP];
  dlb_scalar v;
  if (c->base) {
    dlb_scalar_load(c->a->dtype, c->base + (ptrdiff_t)offset * (ptrdiff_t)c->itemsize, &v);
  } else {
    /* Memory the host cannot address: one staged read per printed element. */
    union {
      unsigned char bytes[16];
      double align;
    } element;
    dlb_array one = *c->a; /* borrowed: the element as a 0-d view */
    if (c->status != DLB_OK) return;
    one.ndim = 0;
    one.numel = 1;
    one.offset = (size_t)((int64_t)one.offset + offset * (int64_t)c->itemsize);
    c->status = dlb_stage_read(&one, element.bytes, c->err);
    if (c->status != DLB_OK) return;
    dlb_scalar_load(c->a->dtype, element.bytes, &v);
  }
  size_t len = format_element(buf, &v, c->a->dtype);
  if (c->measuring) {
    if (len > c->width) c->width = len;
    return;
  }
  if (pad && len < c->width) strbuf_spaces(c->out, c->width - len);
  dlb_strbuf_add(c->out, buf, len);
}

/*
 * Between entries of dim: ", " in the last dim (and in empty arrays);
 * otherwise "," plus one newline per remaining dim, then the hanging indent
 * that aligns the next entry under the first one (NumPy's layout).
 */
static void put_separator(fmt_ctx *c, int dim) {
  int ndim = c->a->ndim;
  if (c->measuring) return;
  if (dim == ndim - 1 || c->empty) {
    strbuf_puts(c->out, ", ");
    return;
  }
  strbuf_puts(c->out, ",");
  for (int i = dim; i < ndim - 1; i++) strbuf_puts(c->out, "\n");
  strbuf_spaces(c->out, strlen(ARRAY_PREFIX) + 1 + (size_t)dim);
}

/* The bracketed block of dim whose first element is at offset (in elements). */
static void put_block(fmt_ctx *c, int dim, int64_t offset) {
  const dlb_array *a = c->a;
  int64_t count = printed_count(c, dim); /* 0 at an empty array's first zero extent */
  put(c, "[");
  for (int64_t k = 0; k < count; k++) {
    if (k > 0) put_separator(c, dim);
    if (k == DLB_FORMAT_EDGEITEMS && dim_is_split(c, dim)) {
      put(c, "...");
      put_separator(c, dim);
    }
    /* a size-0 array reads no element: its strides are unbounded, so unused */
    int64_t at = a->numel > 0 ? offset + printed_index(c, dim, k) * a->strides[dim] : 0;
    if (dim == a->ndim - 1) put_element(c, at, 1);
    else put_block(c, dim + 1, at);
  }
  put(c, "]");
}

/* Product of the first n extents, saturated at limit + 1. */
static int64_t product_capped(const int64_t *extents, int n, int64_t limit) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) {
    if (extents[i] == 0) return 0;
    if (p > (limit + 1) / extents[i]) return limit + 1;
    p *= extents[i];
  }
  return p > limit ? limit + 1 : p;
}

static void put_shape(dlb_strbuf *out, const dlb_array *a) {
  strbuf_puts(out, "(");
  for (int i = 0; i < a->ndim; i++)
    dlb_strbuf_printf(out, i > 0 ? ", %lld" : "%lld", (long long)a->shape[i]);
  strbuf_puts(out, a->ndim == 1 ? ",)" : ")");
}

dlb_status dlb_array_format(const dlb_array *a, const char *device, dlb_strbuf *out,
                            dlb_error *err) {
  if (a->buffer == NULL) return dlb_fail(err, DLB_E_DELETED, "cannot format a deleted array");
  if ((unsigned)a->dtype >= (unsigned)DLB_DTYPE_COUNT)
    return dlb_fail(err, DLB_E_DTYPE, "cannot format an array of unknown dtype %d", (int)a->dtype);
  if (a->ndim < 0 || a->ndim > DLB_MAX_NDIM)
    return dlb_fail(err, DLB_E_SHAPE, "cannot format an array of %d dimensions", a->ndim);

  fmt_ctx c = {0};
  c.a = a;
  c.out = out;
  c.itemsize = dlb_array_itemsize(a);
  /* In an empty array the cells are the "[]" leaves before the first zero extent. */
  int cell_dims = a->ndim;
  for (int i = 0; i < a->ndim; i++) {
    if (a->shape[i] < 0)
      return dlb_fail(err, DLB_E_SHAPE, "cannot format an array with extent %lld",
                      (long long)a->shape[i]);
    if (a->shape[i] == 0 && !c.empty) {
      c.empty = 1;
      cell_dims = i;
    }
  }
  int64_t cells = product_capped(a->shape, cell_dims, DLB_FORMAT_THRESHOLD);
  c.summarise = cells > DLB_FORMAT_THRESHOLD;
  /* Even summarised, many small dims (2x2x...x2) can print too much. */
  int64_t printed = 1;
  for (int i = 0; i < cell_dims && printed <= FORMAT_MAX_PRINTED; i++)
    printed *= printed_count(&c, i);
  int capped = printed > FORMAT_MAX_PRINTED;

  if (!capped && !c.empty && (c.base = dlb_array_host_data(a)) != NULL &&
      dlb_buffer_sync_host(a->buffer, err) != DLB_OK) /* queued work first; NULL: staged reads */
    return err->code;
  c.status = DLB_OK;
  c.err = err;
  size_t start_len = out->len;

  strbuf_puts(out, ARRAY_PREFIX);
  if (capped) {
    strbuf_puts(out, "[...]");
  } else if (a->ndim == 0) {
    put_element(&c, 0, 0);
  } else {
    c.measuring = !c.empty;
    if (c.measuring) put_block(&c, 0, 0);
    c.measuring = 0;
    put_block(&c, 0, 0);
  }
  if (c.status != DLB_OK) { /* a backend read failed: take back what was appended */
    out->len = start_len;
    if (out->data) out->data[start_len] = '\0';
    return c.status;
  }
  strbuf_puts(out, ", shape=");
  put_shape(out, a);
  dlb_strbuf_printf(out, ", dtype=%s", dlb_dtype_get(a->dtype)->name);
  if (device != NULL) dlb_strbuf_printf(out, ", device=%s", device);
  strbuf_puts(out, ")");
  if (out->failed)
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "out of memory while formatting an array");
  return DLB_OK;
}
