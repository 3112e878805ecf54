/* safetensors.h -- the safetensors format: parsing and validating a header,
 * its tensors for the load policy, laying out and writing files. No Lua here.
 *
 * A file is: 8 bytes N (unsigned, little-endian), N bytes of JSON (UTF-8, an
 * object, starting with '{', maybe padded with spaces), then the data. Each
 * key of the object but "__metadata__" names a tensor:
 *   {"dtype": "F32", "shape": [2, 3], "data_offsets": [BEGIN, END]}
 * with the offsets relative to the start of the data; "__metadata__", when
 * present, maps strings to strings. Elements are little-endian, row-major.
 *
 * What a parsed header guarantees (everything else is refused):
 * - N <= DLB_SAFETENSORS_MAX_HEADER and 8 + N <= the size given; the header
 *   is valid UTF-8 and one JSON object with only whitespace after it; no
 *   string holds a NUL (\u0000) or a raw control character;
 * - every tensor has exactly the keys dtype, shape, data_offsets; its dtype
 *   is one dlbridge has (else DTYPE); its shape has at most DLB_MAX_NDIM
 *   integer extents in [0, 2^53) whose element count and byte size fit
 *   (else SHAPE); END - BEGIN is that byte size;
 * - the tensors tile the data exactly: sorted by offsets, each begins where
 *   the previous ended, the first at 0, the last ends at the end of the data
 *   (no overlap, no hole, nothing after: the format's "entirely indexed");
 * - names are unique (as are metadata keys), metadata values are strings.
 * Malformed contents are FORMAT; the message names the tensor.
 */
#ifndef DLB_FILES_SAFETENSORS_H
#define DLB_FILES_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>
#include "../core/array.h"
#include "load_policy.h"

/* The largest header accepted and written (the reference implementation's
 * limit: its readers refuse larger ones). */
#define DLB_SAFETENSORS_MAX_HEADER 100000000u

/* One tensor of a header. Parsed: name points into the header's own
 * storage. Planned: the caller's name; index is the caller's too (planning
 * sorts the tensors and keeps it with its tensor). */
typedef struct dlb_safetensors_tensor {
  const char *name; /* UTF-8 without NUL, name_len bytes (also NUL-terminated when parsed) */
  size_t name_len;
  size_t index;
  dlb_dtype dtype;
  int ndim;
  int64_t numel;
  const int64_t *shape; /* ndim extents (parsed: in the header's own storage) */
  uint64_t begin, end;  /* bytes, relative to the start of the data */
} dlb_safetensors_tensor;

/* One "__metadata__" entry: UTF-8 strings without NUL. */
typedef struct dlb_safetensors_pair {
  const char *key;
  size_t key_len;
  const char *value;
  size_t value_len;
} dlb_safetensors_pair;

/* A parsed header. The tensors are sorted by name (bytewise), the metadata
 * by key. */
typedef struct dlb_safetensors_header {
  uint64_t data_start; /* 8 + N: where the data begins in the bytes parsed */
  uint64_t data_size;  /* bytes of data (the rest of the bytes) */
  size_t ntensors;
  dlb_safetensors_tensor *tensors;
  size_t nmetadata;
  dlb_safetensors_pair *metadata;
  int64_t *extents; /* the tensors' shapes */
  void *json;       /* owns the strings (a cJSON tree) */
} dlb_safetensors_header;

/* Parses and validates size bytes at bytes (a whole file). Reads nothing
 * outside [bytes, bytes + size). On success *out owns memory: free it with
 * dlb_safetensors_free. FORMAT, DTYPE, SHAPE, OUT_OF_MEMORY. */
dlb_status dlb_safetensors_parse(const void *bytes, size_t size, dlb_safetensors_header *out,
                                 dlb_error *err);

/* The same from the file's first head_len bytes, when the file (size bytes)
 * is not in memory: head must hold the 8-byte size N and the N bytes of the
 * header (all of them, as far as N is valid; ARGUMENT otherwise). The data
 * is not read. */
dlb_status dlb_safetensors_parse_header(const void *head, size_t head_len, uint64_t size,
                                        dlb_safetensors_header *out, dlb_error *err);

/* Frees what a parse made; *h is left empty. Idempotent. */
void dlb_safetensors_free(dlb_safetensors_header *h);

/* The format's name of dtype ("F32"), or NULL when the format has none
 * (complex128). */
const char *dlb_safetensors_dtype_name(dlb_dtype dtype);

/* What the writer aligns a tensor of dtype to in the file (its item size,
 * at most 8): every tensor of a file dlbridge writes is viewable in place. */
size_t dlb_safetensors_alignment(dlb_dtype dtype);

/* Tensor i of a parsed header as the load policy (load_policy.h) takes it:
 * little-endian, row-major, at data_start + begin. It points into h. */
void dlb_safetensors_item(const dlb_safetensors_header *h, size_t i, dlb_load_item *it);

/* Reads and parses the header of the file s holds (only the header's bytes
 * when s reads a file). Errors as dlb_safetensors_parse, and IO. */
dlb_status dlb_safetensors_read_header(const dlb_load_source *s, dlb_safetensors_header *out,
                                       dlb_error *err);

/*
 * Lays out a file for n tensors (name, dtype, ndim, shape set by the caller)
 * and nmetadata pairs: sorts the tensors by name and the metadata by key
 * (the header lists them in that order: the same arrays give the same
 * bytes), sets each tensor's numel, begin and end, and writes to order[n]
 * the positions (in the sorted array) in data order. The data is laid out
 * by decreasing item size, then by name, without gaps: with the data
 * starting at a multiple of 8 every tensor is aligned for its dtype (the
 * reference writer's layout; readers refuse holes). *header_size is the
 * bytes before the data (8 + N, a multiple of 8), *data_size those after.
 * ARGUMENT for a name that is "__metadata__", not UTF-8, holds a NUL or
 * comes twice, or metadata likewise, or a header over the limit; DTYPE for a
 * dtype the format lacks (complex128); SHAPE for an extent of 2^53 or more
 * or a byte size that overflows.
 */
dlb_status dlb_safetensors_plan(dlb_safetensors_tensor *tensors, size_t n,
                                dlb_safetensors_pair *metadata, size_t nmetadata, size_t *order,
                                uint64_t *header_size, uint64_t *data_size, dlb_error *err);

/* Writes the header_size bytes of a planned header (the 8-byte size, the
 * JSON, the padding spaces) to out. */
void dlb_safetensors_write_header(const dlb_safetensors_tensor *tensors, size_t n,
                                  const dlb_safetensors_pair *metadata, size_t nmetadata,
                                  uint64_t header_size, char *out);

/* Writes the elements of a as the file holds them (row-major,
 * little-endian) to dst, numel * itemsize bytes. */
dlb_status dlb_safetensors_write_data(const dlb_array *a, void *dst, dlb_error *err);

/*
 * Writes a planned file to path through a dlb_file_writer (mapping.h): the
 * header, then each tensor's array (arrays[tensor.index]) in data order
 * (order), streamed: contiguous host memory straight from the array,
 * anything else through one buffer of at most buffer_bytes. A new file
 * beside path replaces it when complete. IO with errno when the system
 * refuses or path names no regular file; OUT_OF_MEMORY; the backend's
 * failure for memory read through it.
 */
dlb_status dlb_safetensors_save_file(const char *path, const dlb_safetensors_tensor *tensors,
                                     size_t n, const dlb_safetensors_pair *metadata,
                                     size_t nmetadata, const size_t *order, uint64_t header_size,
                                     const dlb_array *const *arrays, size_t buffer_bytes,
                                     dlb_error *err);

#endif
