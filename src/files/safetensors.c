/* safetensors.c -- parsing, validating and writing safetensors headers.
 * The JSON is parsed by cJSON (libcjson); everything cJSON lets through that
 * the format forbids (bytes after the object, invalid UTF-8, NUL in strings,
 * duplicate keys, numbers that are no exact integers) is checked here. */
#define _XOPEN_SOURCE 700 /* POSIX 2008 */
#include "safetensors.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../core/copy.h"
#include "mapping.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_BIG_ENDIAN 1 /* the format is little-endian: every element is swapped */
#else
#define HOST_BIG_ENDIAN 0
#endif

/* JSON numbers are doubles in cJSON: integers are exact below 2^53. */
#define EXACT_LIMIT 9007199254740992.0
#define EXACT_LIMIT_INT ((uint64_t)1 << 53)

static const char *const dtype_names[DLB_DTYPE_COUNT] = {
    [DLB_BOOL] = "BOOL",   [DLB_INT8] = "I8",       [DLB_INT16] = "I16",     [DLB_INT32] = "I32",
    [DLB_INT64] = "I64",   [DLB_UINT8] = "U8",      [DLB_UINT16] = "U16",    [DLB_UINT32] = "U32",
    [DLB_UINT64] = "U64",  [DLB_FLOAT16] = "F16",   [DLB_BFLOAT16] = "BF16", [DLB_FLOAT32] = "F32",
    [DLB_FLOAT64] = "F64", [DLB_COMPLEX64] = "C64", [DLB_COMPLEX128] = NULL,
};

/* dtypes the format defines that dlbridge has no element type for. */
static const char *const foreign_dtypes[] = {"F4",      "F6_E2M3", "F6_E3M2",     "F8_E5M2",
                                             "F8_E4M3", "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ"};

const char *dlb_safetensors_dtype_name(dlb_dtype dtype) {
  return (unsigned)dtype < DLB_DTYPE_COUNT ? dtype_names[dtype] : NULL;
}

size_t dlb_safetensors_alignment(dlb_dtype dtype) {
  size_t item = dlb_dtype_get(dtype)->itemsize;
  return item > 8 ? 8 : item;
}

/* ---- text checks the JSON parser does not make ------------------------------- */

/* Length of the valid UTF-8 sequence at p (n bytes left), or 0 when invalid
 * (overlong forms, surrogates and code points above U+10FFFF included). */
static size_t utf8_sequence(const unsigned char *p, size_t n) {
  unsigned c = p[0];
  size_t len;
  unsigned lo = 0x80, hi = 0xBF;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c >= 0xE0 && c <= 0xEF) len = 3;
  else if (c >= 0xF0 && c <= 0xF4) len = 4;
  else return 0;
  if (len > n) return 0;
  if (c == 0xE0) lo = 0xA0; /* overlong */
  if (c == 0xED) hi = 0x9F; /* surrogates */
  if (c == 0xF0) lo = 0x90; /* overlong */
  if (c == 0xF4) hi = 0x8F; /* above U+10FFFF */
  if (p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < len; i++)
    if (p[i] < 0x80 || p[i] > 0xBF) return 0;
  return len;
}

/* Index of the first byte of p[0..n) that is not valid UTF-8, or n. */
static size_t utf8_invalid_at(const unsigned char *p, size_t n) {
  size_t i = 0;
  while (i < n) {
    size_t len = p[i] < 0x80 ? 1 : utf8_sequence(p + i, n - i);
    if (!len) return i;
    i += len;
  }
  return n;
}

/* Checks the strings of JSON text: no raw control character and no \u0000
 * (cJSON would cut the string there). Valid JSON is assumed only in that a
 * string starts and ends at an unescaped quote; the parser judges the rest. */
static dlb_status check_strings(const unsigned char *p, size_t n, dlb_error *err) {
  int in_string = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = p[i];
    if (!in_string) {
      in_string = c == '"';
    } else if (c == '"') {
      in_string = 0;
    } else if (c < 0x20) {
      return dlb_fail(err, DLB_E_FORMAT,
                      "the header has a raw control character (0x%02x) in a "
                      "string at byte %zu",
                      c, i);
    } else if (c == '\\' && i + 1 < n) {
      if (p[i + 1] == 'u' && i + 5 < n && memcmp(p + i + 2, "0000", 4) == 0)
        return dlb_fail(err, DLB_E_FORMAT,
                        "the header has a NUL character (\\u0000) in a "
                        "string at byte %zu",
                        i);
      i++; /* the escaped character */
    }
  }
  return DLB_OK;
}

/* ---- reading JSON values ---------------------------------------------------- */

/* Whether item is an integer in [0, 2^53) (exact as a double); sets *out. */
static int json_exact_uint(const cJSON *item, uint64_t *out) {
  double d;
  if (!cJSON_IsNumber(item)) return 0;
  d = item->valuedouble;
  if (!(d >= 0.0 && d < EXACT_LIMIT) || d != (double)(uint64_t)d) return 0;
  *out = (uint64_t)d;
  return 1;
}

/* A tensor name for messages: the first 60 bytes, quoted by the caller. */
#define NAME_FMT "%.60s"

/* Reads dtype. DTYPE for a name dlbridge has no type for; FORMAT for no string. */
static dlb_status read_dtype(const cJSON *item, const char *name, dlb_dtype *out, dlb_error *err) {
  const char *s = cJSON_IsString(item) ? item->valuestring : NULL;
  if (!s) return dlb_fail(err, DLB_E_FORMAT, "tensor '" NAME_FMT "': dtype is not a string", name);
  for (int d = 0; d < DLB_DTYPE_COUNT; d++)
    if (dtype_names[d] && strcmp(s, dtype_names[d]) == 0) {
      *out = (dlb_dtype)d;
      return DLB_OK;
    }
  for (size_t i = 0; i < sizeof foreign_dtypes / sizeof foreign_dtypes[0]; i++)
    if (strcmp(s, foreign_dtypes[i]) == 0) {
      dlb_fail(err, DLB_E_DTYPE, "tensor '" NAME_FMT "' has dtype %s, which dlbridge lacks", name,
               s);
      dlb_error_hint(err, "dlbridge has no 4-, 6- or 8-bit floats: convert the tensor to F16, "
                          "BF16 or F32 before saving the file");
      return DLB_E_DTYPE;
    }
  dlb_fail(err, DLB_E_DTYPE, "tensor '" NAME_FMT "' has the unknown dtype '%.20s'", name, s);
  dlb_error_hint(err, "safetensors dtypes dlbridge reads: BOOL, U8, U16, U32, U64, I8, I16, I32, "
                      "I64, F16, BF16, F32, F64, C64");
  return DLB_E_DTYPE;
}

/* Reads shape into extents (room for DLB_MAX_NDIM) and sets t's ndim, numel.
 * FORMAT when it is no array; SHAPE for a bad extent or an overflowing count. */
static dlb_status read_shape(const cJSON *item, dlb_safetensors_tensor *t, int64_t *extents,
                             dlb_error *err) {
  const cJSON *e;
  int ndim = 0;
  int64_t numel = 1;
  size_t nbytes;
  if (!cJSON_IsArray(item))
    return dlb_fail(err, DLB_E_FORMAT, "tensor '" NAME_FMT "': shape is not an array", t->name);
  cJSON_ArrayForEach(e, item) {
    uint64_t v;
    if (ndim == DLB_MAX_NDIM)
      return dlb_fail(err, DLB_E_SHAPE, "tensor '" NAME_FMT "' has more than %d dimensions",
                      t->name, DLB_MAX_NDIM);
    if (!json_exact_uint(e, &v))
      return dlb_fail(err, DLB_E_SHAPE,
                      "tensor '" NAME_FMT "': extent %d is not an integer in "
                      "[0, 2^53)",
                      t->name, ndim + 1);
    extents[ndim++] = (int64_t)v;
  }
  for (int d = 0; d < ndim; d++)
    if (__builtin_mul_overflow(numel, extents[d], &numel))
      return dlb_fail(err, DLB_E_SHAPE, "tensor '" NAME_FMT "': the element count overflows",
                      t->name);
  if (__builtin_mul_overflow((uint64_t)numel, dlb_dtype_get(t->dtype)->itemsize, &nbytes) ||
      nbytes > (size_t)PTRDIFF_MAX)
    return dlb_fail(err, DLB_E_SHAPE, "tensor '" NAME_FMT "': the byte size overflows", t->name);
  t->ndim = ndim;
  t->numel = numel;
  t->shape = extents;
  return DLB_OK;
}

/* Reads data_offsets (FORMAT unless two integers begin <= end <= data_size
 * that span the shape's byte size). */
static dlb_status read_offsets(const cJSON *item, dlb_safetensors_tensor *t, uint64_t data_size,
                               dlb_error *err) {
  const cJSON *b = cJSON_IsArray(item) ? item->child : NULL;
  const cJSON *e = b ? b->next : NULL;
  uint64_t nbytes = (uint64_t)t->numel * dlb_dtype_get(t->dtype)->itemsize; /* checked */
  if (!e || e->next || !json_exact_uint(b, &t->begin) || !json_exact_uint(e, &t->end))
    return dlb_fail(err, DLB_E_FORMAT,
                    "tensor '" NAME_FMT "': data_offsets is not two "
                    "integers [BEGIN, END]",
                    t->name);
  if (t->begin > t->end)
    return dlb_fail(err, DLB_E_FORMAT,
                    "tensor '" NAME_FMT "': data_offsets [%" PRIu64 ", %" PRIu64
                    "] ends before it begins",
                    t->name, t->begin, t->end);
  if (t->end > data_size)
    return dlb_fail(err, DLB_E_FORMAT,
                    "tensor '" NAME_FMT "': data_offsets [%" PRIu64 ", %" PRIu64
                    "] lie outside the %" PRIu64 " bytes of data",
                    t->name, t->begin, t->end, data_size);
  if (t->end - t->begin != nbytes)
    return dlb_fail(err, DLB_E_FORMAT,
                    "tensor '" NAME_FMT "': data_offsets span %" PRIu64
                    " bytes, but %lld %s elements take %" PRIu64,
                    t->name, t->end - t->begin, (long long)t->numel, dtype_names[t->dtype], nbytes);
  return DLB_OK;
}

/* Reads one tensor entry {dtype, shape, data_offsets}: exactly those keys. */
static dlb_status read_tensor(const cJSON *entry, dlb_safetensors_tensor *t, int64_t *extents,
                              uint64_t data_size, dlb_error *err) {
  static const char *const keys[3] = {"dtype", "shape", "data_offsets"};
  const cJSON *found[3] = {NULL, NULL, NULL}, *c;
  dlb_status st;
  if (!cJSON_IsObject(entry))
    return dlb_fail(err, DLB_E_FORMAT, "tensor '" NAME_FMT "' is not a JSON object", t->name);
  cJSON_ArrayForEach(c, entry) {
    int k = 0;
    while (k < 3 && strcmp(c->string, keys[k]) != 0) k++;
    if (k == 3)
      return dlb_fail(err, DLB_E_FORMAT, "tensor '" NAME_FMT "' has the unknown key '%.40s'",
                      t->name, c->string);
    if (found[k])
      return dlb_fail(err, DLB_E_FORMAT, "tensor '" NAME_FMT "' has the key '%s' twice", t->name,
                      keys[k]);
    found[k] = c;
  }
  for (int k = 0; k < 3; k++)
    if (!found[k])
      return dlb_fail(err, DLB_E_FORMAT, "tensor '" NAME_FMT "' has no '%s'", t->name, keys[k]);
  if ((st = read_dtype(found[0], t->name, &t->dtype, err)) != DLB_OK) return st;
  if ((st = read_shape(found[1], t, extents, err)) != DLB_OK) return st;
  return read_offsets(found[2], t, data_size, err);
}

static int by_name(const void *a, const void *b) {
  const dlb_safetensors_tensor *x = a, *y = b;
  size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
  int c = memcmp(x->name, y->name, n);
  return c ? c : (x->name_len > y->name_len) - (x->name_len < y->name_len);
}

static int by_key(const void *a, const void *b) {
  const dlb_safetensors_pair *x = a, *y = b;
  size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
  int c = memcmp(x->key, y->key, n);
  return c ? c : (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

static int by_offsets(const void *a, const void *b) {
  const dlb_safetensors_tensor *x = *(const dlb_safetensors_tensor *const *)a;
  const dlb_safetensors_tensor *y = *(const dlb_safetensors_tensor *const *)b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  return 0;
}

/* Reads "__metadata__": an object of strings; keys sorted, unique. */
static dlb_status read_metadata(const cJSON *item, dlb_safetensors_header *h, dlb_error *err) {
  const cJSON *c;
  size_t n = 0;
  if (!cJSON_IsObject(item))
    return dlb_fail(err, DLB_E_FORMAT, "__metadata__ is not a JSON object");
  cJSON_ArrayForEach(c, item) n++;
  if (n && !(h->metadata = malloc(n * sizeof *h->metadata)))
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for %zu metadata entries", n);
  cJSON_ArrayForEach(c, item) {
    dlb_safetensors_pair *p = &h->metadata[h->nmetadata++];
    if (!cJSON_IsString(c))
      return dlb_fail(err, DLB_E_FORMAT,
                      "__metadata__ '%.60s' is not a string (the format "
                      "allows only strings there)",
                      c->string);
    p->key = c->string;
    p->key_len = strlen(c->string);
    p->value = c->valuestring;
    p->value_len = strlen(c->valuestring);
  }
  if (n > 1) qsort(h->metadata, n, sizeof *h->metadata, by_key);
  for (size_t i = 1; i < n; i++)
    if (by_key(&h->metadata[i - 1], &h->metadata[i]) == 0)
      return dlb_fail(err, DLB_E_FORMAT, "__metadata__ has the key '%.60s' twice",
                      h->metadata[i].key);
  return DLB_OK;
}

/* Makes room for the tensors of root: as many entries as keys and as many
 * extents as their shapes could need (counted first: a hostile header with
 * millions of keys gets arrays no larger than cJSON's own tree). */
static dlb_status allocate_tensors(const cJSON *root, dlb_safetensors_header *h, dlb_error *err) {
  const cJSON *c;
  size_t n = 0, extents = 0;
  cJSON_ArrayForEach(c, root) {
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(c, "shape");
    int k = cJSON_IsArray(shape) ? cJSON_GetArraySize(shape) : 0;
    n++;
    extents += (size_t)(k > DLB_MAX_NDIM ? DLB_MAX_NDIM : k);
  }
  if (n && !(h->tensors = calloc(n, sizeof *h->tensors)))
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for %zu tensor entries", n);
  /* read_shape may write up to DLB_MAX_NDIM entries before refusing more. */
  if (!(h->extents = malloc((extents + DLB_MAX_NDIM) * sizeof *h->extents)))
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for the shapes of %zu tensors", n);
  return DLB_OK;
}

/* Reads every key of root: the tensors (into h, sorted by name) and the
 * metadata. */
static dlb_status read_entries(const cJSON *root, dlb_safetensors_header *h, dlb_error *err) {
  const cJSON *c, *metadata = NULL;
  size_t used = 0;
  dlb_status st;
  if ((st = allocate_tensors(root, h, err)) != DLB_OK) return st;
  cJSON_ArrayForEach(c, root) {
    dlb_safetensors_tensor *t;
    if (strcmp(c->string, "__metadata__") == 0) {
      if (metadata) return dlb_fail(err, DLB_E_FORMAT, "the header has __metadata__ twice");
      metadata = c;
      continue;
    }
    t = &h->tensors[h->ntensors++];
    t->name = c->string;
    t->name_len = strlen(c->string);
    t->index = h->ntensors - 1;
    if ((st = read_tensor(c, t, h->extents + used, h->data_size, err)) != DLB_OK) return st;
    used += (size_t)t->ndim;
  }
  if (metadata && (st = read_metadata(metadata, h, err)) != DLB_OK) return st;
  if (h->ntensors > 1) qsort(h->tensors, h->ntensors, sizeof *h->tensors, by_name);
  for (size_t i = 1; i < h->ntensors; i++)
    if (by_name(&h->tensors[i - 1], &h->tensors[i]) == 0)
      return dlb_fail(err, DLB_E_FORMAT, "the header names tensor '" NAME_FMT "' twice",
                      h->tensors[i].name);
  return DLB_OK;
}

/* The tensors must tile the data: no overlap, no hole, nothing after. */
static dlb_status check_layout(const dlb_safetensors_header *h, dlb_error *err) {
  const dlb_safetensors_tensor **sorted;
  uint64_t at = 0;
  dlb_status st = DLB_OK;
  if (h->ntensors == 0) {
    if (h->data_size == 0) return DLB_OK;
    return dlb_fail(err, DLB_E_FORMAT, "%" PRIu64 " bytes of data belong to no tensor",
                    h->data_size);
  }
  if (!(sorted = malloc(h->ntensors * sizeof *sorted)))
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory to sort %zu tensors", h->ntensors);
  for (size_t i = 0; i < h->ntensors; i++) sorted[i] = &h->tensors[i];
  qsort(sorted, h->ntensors, sizeof *sorted, by_offsets);
  for (size_t i = 0; i < h->ntensors && st == DLB_OK; i++) {
    const dlb_safetensors_tensor *t = sorted[i];
    if (t->begin < at)
      st = dlb_fail(err, DLB_E_FORMAT,
                    "tensor '" NAME_FMT "' (bytes %" PRIu64 "..%" PRIu64
                    ") overlaps tensor '" NAME_FMT "'",
                    t->name, t->begin, t->end, sorted[i - 1]->name);
    else if (t->begin > at)
      st = dlb_fail(err, DLB_E_FORMAT,
                    "bytes %" PRIu64 "..%" PRIu64 " of the data belong to no "
                    "tensor (a hole before tensor '" NAME_FMT "')",
                    at, t->begin, t->name);
    at = t->end;
  }
  if (st == DLB_OK && at != h->data_size)
    st = dlb_fail(err, DLB_E_FORMAT,
                  "bytes %" PRIu64 "..%" PRIu64 " of the data, after the last "
                  "tensor, belong to no tensor",
                  at, h->data_size);
  free(sorted);
  return st;
}

static pthread_mutex_t cjson_parse_lock = PTHREAD_MUTEX_INITIALIZER;

/* Checks the header text at p (n bytes) and parses it into *root. */
static dlb_status parse_json(const unsigned char *p, uint64_t n, cJSON **root, dlb_error *err) {
  const char *end = NULL;
  size_t bad;
  dlb_status st;
  if (n == 0 || p[0] != '{')
    return dlb_fail(err, DLB_E_FORMAT,
                    "the header does not start with '{' (a safetensors "
                    "header is a JSON object)");
  if ((bad = utf8_invalid_at(p, (size_t)n)) != n)
    return dlb_fail(err, DLB_E_FORMAT, "the header is not valid UTF-8 (at byte %zu)", bad);
  if ((st = check_strings(p, (size_t)n, err)) != DLB_OK) return st;
  /* cJSON records the position of a parse error in a global: one parse at a
   * time (lua_States on other threads load files too). */
  pthread_mutex_lock(&cjson_parse_lock);
  *root = cJSON_ParseWithLengthOpts((const char *)p, (size_t)n, &end, 0);
  pthread_mutex_unlock(&cjson_parse_lock);
  if (!*root)
    return dlb_fail(err, DLB_E_FORMAT, "the header is not valid JSON (near byte %td)",
                    end ? end - (const char *)p : (ptrdiff_t)0);
  for (const unsigned char *q = (const unsigned char *)end; q < p + n; q++)
    if (*q != ' ' && *q != '\t' && *q != '\n' && *q != '\r')
      return dlb_fail(err, DLB_E_FORMAT,
                      "the header has bytes after its JSON object (at byte "
                      "%td)",
                      q - p);
  if (!cJSON_IsObject(*root)) return dlb_fail(err, DLB_E_FORMAT, "the header is not a JSON object");
  return DLB_OK;
}

dlb_status dlb_safetensors_parse_header(const void *head, size_t head_len, uint64_t size,
                                        dlb_safetensors_header *out, dlb_error *err) {
  const unsigned char *p = head;
  uint64_t n = 0;
  cJSON *root = NULL;
  dlb_status st;
  memset(out, 0, sizeof *out);
  if (size < 8)
    return dlb_fail(err, DLB_E_FORMAT,
                    "%" PRIu64 " bytes are too few for a safetensors file (it "
                    "starts with an 8-byte header size)",
                    size);
  if (head_len < 8) return dlb_fail(err, DLB_E_ARGUMENT, "the header size was not read");
  for (int i = 7; i >= 0; i--) n = n << 8 | p[i];
  if (n > size - 8)
    return dlb_fail(err, DLB_E_FORMAT,
                    "the header size %" PRIu64 " is larger than the %" PRIu64
                    " bytes after it (a truncated file?)",
                    n, size - 8);
  if (n > DLB_SAFETENSORS_MAX_HEADER)
    return dlb_fail(err, DLB_E_FORMAT,
                    "the header size %" PRIu64 " is over the format's limit "
                    "of %u bytes",
                    n, DLB_SAFETENSORS_MAX_HEADER);
  if (head_len - 8 < n) return dlb_fail(err, DLB_E_ARGUMENT, "the header was not read whole");
  out->data_start = 8 + n;
  out->data_size = size - 8 - n;
  st = parse_json(p + 8, n, &root, err);
  out->json = root;
  if (st == DLB_OK) st = read_entries(root, out, err);
  if (st == DLB_OK) st = check_layout(out, err);
  if (st != DLB_OK) dlb_safetensors_free(out);
  return st;
}

dlb_status dlb_safetensors_parse(const void *bytes, size_t size, dlb_safetensors_header *out,
                                 dlb_error *err) {
  return dlb_safetensors_parse_header(bytes, size, size, out, err);
}

void dlb_safetensors_free(dlb_safetensors_header *h) {
  cJSON_Delete(h->json);
  free(h->tensors);
  free(h->metadata);
  free(h->extents);
  memset(h, 0, sizeof *h);
}

/* ---- loading ------------------------------------------------------------------ */

void dlb_safetensors_item(const dlb_safetensors_header *h, size_t i, dlb_load_item *it) {
  const dlb_safetensors_tensor *t = &h->tensors[i];
  it->name = t->name;
  it->dtype = t->dtype;
  it->ndim = t->ndim;
  it->shape = t->shape;
  it->fortran_order = 0;
  it->numel = t->numel;
  it->nbytes = (size_t)(t->end - t->begin);
  it->offset = h->data_start + t->begin;
  it->swapped = HOST_BIG_ENDIAN;
}

/* Parsing builds a cJSON tree and the header's tables: at most about this
 * many bytes for each byte of JSON (a cJSON node is 64 bytes; the densest
 * JSON has a value every 2 bytes). A script controls the header (up to
 * DLB_SAFETENSORS_MAX_HEADER), so the parse is charged to the state's
 * memory limit, with the header text read from a file, for as long as it
 * runs. */
#define PARSE_BYTES_PER_JSON_BYTE 32

/* The header's length as its first 8 bytes say, where the parse would read
 * it (else 0: it refuses without reading). */
static uint64_t claimed_header(const unsigned char *first, uint64_t size) {
  uint64_t n = 0;
  if (size < 8) return 0;
  for (int i = 7; i >= 0; i--) n = n << 8 | first[i];
  return n <= size - 8 && n <= DLB_SAFETENSORS_MAX_HEADER ? n : 0;
}

static dlb_status read_header(const dlb_load_source *s, dlb_safetensors_header *out,
                              const unsigned char *first, uint64_t n, dlb_error *err) {
  unsigned char *head;
  uint64_t len = s->size < 8 ? s->size : 8;
  dlb_status st;
  if (s->bytes || s->size == 0) /* in memory: parsed where it is */
    return dlb_safetensors_parse_header(s->bytes, (size_t)s->size, s->size, out, err);
  if (len < 8) return dlb_safetensors_parse_header(first, (size_t)len, s->size, out, err);
  len += n; /* a size the parse will refuse is not read */
  if (!(head = malloc((size_t)len)))
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for a header of %llu bytes",
                    (unsigned long long)len);
  memcpy(head, first, 8);
  st = dlb_load_read(s, head + 8, (size_t)len - 8, 8, err);
  if (st == DLB_OK) st = dlb_safetensors_parse_header(head, (size_t)len, s->size, out, err);
  free(head);
  return st;
}

dlb_status dlb_safetensors_read_header(const dlb_load_source *s, dlb_safetensors_header *out,
                                       dlb_error *err) {
  unsigned char first[8] = {0};
  dlb_budget *budget = s->host ? s->host->budget : NULL;
  uint64_t n;
  size_t charge;
  dlb_status st;
  memset(out, 0, sizeof *out);
  if (s->bytes) memcpy(first, s->bytes, s->size < 8 ? (size_t)s->size : 8);
  else if (s->size > 0 &&
           (st = dlb_load_read(s, first, s->size < 8 ? (size_t)s->size : 8, 0, err)) != DLB_OK)
    return st;
  n = claimed_header(first, s->size);
  charge = (size_t)n * (PARSE_BYTES_PER_JSON_BYTE + (s->bytes ? 0 : 1));
  if (budget && charge && (st = dlb_budget_charge(budget, charge, err)) != DLB_OK) {
    dlb_error_hint(err, "the header of this safetensors file is too large to parse under the "
                        "host's memory limit");
    return st;
  }
  st = read_header(s, out, first, n, err);
  if (budget && charge) dlb_budget_refund(budget, charge);
  return st;
}

/* ---- writing ------------------------------------------------------------------ */

/* Where JSON text goes: counted always, copied when p is not NULL. */
typedef struct text_out {
  char *p;
  size_t n;
} text_out;

static void put(text_out *o, const char *s, size_t len) {
  if (o->p) memcpy(o->p + o->n, s, len);
  o->n += len;
}

static void put_str(text_out *o, const char *s) { put(o, s, strlen(s)); }

static void put_uint(text_out *o, uint64_t v) {
  char buf[24];
  int len = snprintf(buf, sizeof buf, "%" PRIu64, v);
  put(o, buf, (size_t)len);
}

/* A JSON string, escaped as serde_json escapes (the reference writer). */
static void put_json_string(text_out *o, const char *s, size_t len) {
  static const char hex[] = "0123456789abcdef";
  size_t run = 0; /* bytes copied as they are, pending */
  put(o, "\"", 1);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    char esc[6] = {'\\', 0, '0', '0', 0, 0};
    size_t esc_len = 2;
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    put(o, s + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': esc[1] = '"'; break;
      case '\\': esc[1] = '\\'; break;
      case '\b': esc[1] = 'b'; break;
      case '\f': esc[1] = 'f'; break;
      case '\n': esc[1] = 'n'; break;
      case '\r': esc[1] = 'r'; break;
      case '\t': esc[1] = 't'; break;
      default:
        esc[1] = 'u';
        esc[4] = hex[c >> 4];
        esc[5] = hex[c & 15];
        esc_len = 6;
    }
    put(o, esc, esc_len);
  }
  put(o, s + run, len - run);
  put(o, "\"", 1);
}

/* The header's JSON (no padding): "__metadata__" first when there is any,
 * then the tensors in array order, keys as the reference writer orders them. */
static size_t emit_json(const dlb_safetensors_tensor *tensors, size_t n,
                        const dlb_safetensors_pair *metadata, size_t nmetadata, char *out) {
  text_out o = {out, 0};
  put(&o, "{", 1);
  if (nmetadata) {
    put_str(&o, "\"__metadata__\":{");
    for (size_t i = 0; i < nmetadata; i++) {
      if (i) put(&o, ",", 1);
      put_json_string(&o, metadata[i].key, metadata[i].key_len);
      put(&o, ":", 1);
      put_json_string(&o, metadata[i].value, metadata[i].value_len);
    }
    put(&o, "}", 1);
  }
  for (size_t i = 0; i < n; i++) {
    const dlb_safetensors_tensor *t = &tensors[i];
    if (i || nmetadata) put(&o, ",", 1);
    put_json_string(&o, t->name, t->name_len);
    put_str(&o, ":{\"dtype\":\"");
    put_str(&o, dtype_names[t->dtype]);
    put_str(&o, "\",\"shape\":[");
    for (int d = 0; d < t->ndim; d++) {
      if (d) put(&o, ",", 1);
      put_uint(&o, (uint64_t)t->shape[d]);
    }
    put_str(&o, "],\"data_offsets\":[");
    put_uint(&o, t->begin);
    put(&o, ",", 1);
    put_uint(&o, t->end);
    put_str(&o, "]}");
  }
  put(&o, "}", 1);
  return o.n;
}

/* ARGUMENT unless s (len bytes) is UTF-8 without NUL; what names it. */
static dlb_status check_text(const char *s, size_t len, const char *what, dlb_error *err) {
  const char *nul = memchr(s, '\0', len);
  if (nul) {
    dlb_fail(err, DLB_E_ARGUMENT, "%s '%.*s...' holds a NUL byte", what,
             (int)(nul - s < 60 ? nul - s : 60), s);
    dlb_error_hint(err, "safetensors headers are JSON text: names and metadata cannot hold NUL");
    return DLB_E_ARGUMENT;
  }
  if (utf8_invalid_at((const unsigned char *)s, len) != len) {
    dlb_fail(err, DLB_E_ARGUMENT, "%s '%.*s' is not valid UTF-8", what, (int)(len < 60 ? len : 60),
             s);
    dlb_error_hint(err, "safetensors headers are UTF-8 JSON: names and metadata must be UTF-8");
    return DLB_E_ARGUMENT;
  }
  return DLB_OK;
}

/* Checks one tensor to be written and sets its numel. */
static dlb_status check_tensor(dlb_safetensors_tensor *t, dlb_error *err) {
  int shown = (int)(t->name_len < 60 ? t->name_len : 60);
  size_t nbytes;
  dlb_status st = check_text(t->name, t->name_len, "the tensor name", err);
  if (st != DLB_OK) return st;
  if (t->name_len == 12 && memcmp(t->name, "__metadata__", 12) == 0) {
    dlb_fail(err, DLB_E_ARGUMENT, "a tensor cannot be named __metadata__");
    dlb_error_hint(err, "the format reserves __metadata__ for the metadata table: pass string "
                        "metadata as the third argument, and name the tensor otherwise");
    return DLB_E_ARGUMENT;
  }
  if (!dtype_names[t->dtype]) {
    dlb_fail(err, DLB_E_DTYPE, "tensor '%.*s' is %s, which safetensors has no dtype for", shown,
             t->name, dlb_dtype_get(t->dtype)->name);
    dlb_error_hint(err, "save complex128 as complex64 (a:astype(\"complex64\"), saved as C64), "
                        "or its real and imaginary parts as two float64 tensors");
    return DLB_E_DTYPE;
  }
  if (t->ndim < 0 || t->ndim > DLB_MAX_NDIM)
    return dlb_fail(err, DLB_E_SHAPE, "tensor '%.*s' has %d dimensions", shown, t->name, t->ndim);
  t->numel = 1;
  for (int d = 0; d < t->ndim; d++) {
    if (t->shape[d] < 0 || (uint64_t)t->shape[d] >= EXACT_LIMIT_INT)
      return dlb_fail(err, DLB_E_SHAPE,
                      "tensor '%.*s': extent %lld cannot be written exactly "
                      "(JSON readers take integers below 2^53)",
                      shown, t->name, (long long)t->shape[d]);
    if (__builtin_mul_overflow(t->numel, t->shape[d], &t->numel))
      return dlb_fail(err, DLB_E_SHAPE, "tensor '%.*s': the element count overflows", shown,
                      t->name);
  }
  if (__builtin_mul_overflow((uint64_t)t->numel, dlb_dtype_get(t->dtype)->itemsize, &nbytes) ||
      nbytes > (size_t)PTRDIFF_MAX)
    return dlb_fail(err, DLB_E_SHAPE, "tensor '%.*s': the byte size overflows", shown, t->name);
  return DLB_OK;
}

/* Checks the metadata, sorts it by key, refuses a key given twice. */
static dlb_status check_metadata(dlb_safetensors_pair *metadata, size_t n, dlb_error *err) {
  dlb_status st;
  for (size_t i = 0; i < n; i++) {
    const dlb_safetensors_pair *p = &metadata[i];
    if ((st = check_text(p->key, p->key_len, "the metadata key", err)) != DLB_OK ||
        (st = check_text(p->value, p->value_len, "the metadata value", err)) != DLB_OK)
      return st;
  }
  if (n > 1) qsort(metadata, n, sizeof *metadata, by_key);
  for (size_t i = 1; i < n; i++)
    if (by_key(&metadata[i - 1], &metadata[i]) == 0)
      return dlb_fail(err, DLB_E_ARGUMENT, "the metadata key '%.*s' comes twice",
                      (int)(metadata[i].key_len < 60 ? metadata[i].key_len : 60), metadata[i].key);
  return DLB_OK;
}

dlb_status dlb_safetensors_plan(dlb_safetensors_tensor *tensors, size_t n,
                                dlb_safetensors_pair *metadata, size_t nmetadata, size_t *order,
                                uint64_t *header_size, uint64_t *data_size, dlb_error *err) {
  static const size_t item_sizes[] = {8, 4, 2, 1}; /* the data order: larger items first */
  uint64_t at = 0;
  size_t k = 0, json;
  dlb_status st;
  for (size_t i = 0; i < n; i++)
    if ((st = check_tensor(&tensors[i], err)) != DLB_OK) return st;
  if ((st = check_metadata(metadata, nmetadata, err)) != DLB_OK) return st;
  if (n > 1) qsort(tensors, n, sizeof *tensors, by_name);
  for (size_t i = 1; i < n; i++)
    if (by_name(&tensors[i - 1], &tensors[i]) == 0)
      return dlb_fail(err, DLB_E_ARGUMENT, "the tensor name '%.*s' comes twice",
                      (int)(tensors[i].name_len < 60 ? tensors[i].name_len : 60), tensors[i].name);
  for (size_t s = 0; s < sizeof item_sizes / sizeof item_sizes[0]; s++)
    for (size_t i = 0; i < n; i++) {
      dlb_safetensors_tensor *t = &tensors[i];
      uint64_t nbytes = (uint64_t)t->numel * dlb_dtype_get(t->dtype)->itemsize; /* checked */
      if (dlb_dtype_get(t->dtype)->itemsize != item_sizes[s]) continue;
      order[k++] = i;
      t->begin = at;
      if (__builtin_add_overflow(at, nbytes, &at) || at > (uint64_t)PTRDIFF_MAX)
        return dlb_fail(err, DLB_E_SHAPE, "the tensors' bytes together overflow");
      t->end = at;
    }
  json = emit_json(tensors, n, metadata, nmetadata, NULL);
  if (json > DLB_SAFETENSORS_MAX_HEADER - 7) {
    dlb_fail(err, DLB_E_ARGUMENT,
             "the header would take %zu bytes, over the format's limit of "
             "%u",
             json, DLB_SAFETENSORS_MAX_HEADER);
    dlb_error_hint(err, "readers refuse larger headers: save fewer tensors (or less metadata) "
                        "per file");
    return DLB_E_ARGUMENT;
  }
  *header_size = 8 + (json + 7) / 8 * 8;
  *data_size = at;
  return DLB_OK;
}

void dlb_safetensors_write_header(const dlb_safetensors_tensor *tensors, size_t n,
                                  const dlb_safetensors_pair *metadata, size_t nmetadata,
                                  uint64_t header_size, char *out) {
  uint64_t json_size = header_size - 8;
  size_t json = emit_json(tensors, n, metadata, nmetadata, out + 8);
  for (int i = 0; i < 8; i++) out[i] = (char)(json_size >> (8 * i) & 0xff);
  memset(out + 8 + json, ' ', (size_t)json_size - json);
}

dlb_status dlb_safetensors_write_data(const dlb_array *a, void *dst, dlb_error *err) {
  dlb_status st = dlb_array_read_into(a, dst, a->dtype, err);
  if (st == DLB_OK && HOST_BIG_ENDIAN)
    dlb_byteswap(dst, a->numel, dlb_array_itemsize(a),
                 dlb_dtype_get(a->dtype)->kind == DLB_KIND_COMPLEX);
  return st;
}

dlb_status dlb_safetensors_save_file(const char *path, const dlb_safetensors_tensor *tensors,
                                     size_t n, const dlb_safetensors_pair *metadata,
                                     size_t nmetadata, const size_t *order, uint64_t header_size,
                                     const dlb_array *const *arrays, size_t buffer_bytes,
                                     dlb_error *err) {
  dlb_file_writer w;
  char *header = malloc((size_t)header_size);
  dlb_status st;
  if (!header)
    return dlb_fail(err, DLB_E_OUT_OF_MEMORY, "no memory for the header of %zu tensors", n);
  dlb_safetensors_write_header(tensors, n, metadata, nmetadata, header_size, header);
  st = dlb_file_writer_open(&w, path, buffer_bytes, err);
  if (st != DLB_OK) {
    free(header);
    return st;
  }
  st = dlb_file_writer_reserve(&w, header_size + (n ? tensors[order[n - 1]].end : 0), err);
  if (st == DLB_OK) st = dlb_file_writer_write(&w, header, (size_t)header_size, err);
  free(header);
  for (size_t k = 0; k < n && st == DLB_OK; k++)
    st = dlb_file_writer_write_array(&w, arrays[tensors[order[k]].index], HOST_BIG_ENDIAN, err);
  return dlb_file_writer_close(&w, st, err);
}
