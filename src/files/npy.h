/* npy.h -- NumPy .npy files: the header (parsed strictly, written as
 * np.save writes it) and whole arrays to and from files and memory.
 * No Lua here.
 *
 * A .npy file is the magic "\x93NUMPY", the version (two bytes: 1.0, 2.0
 * or 3.0), the header's length (2 bytes little-endian in 1.0, 4 bytes in
 * 2.0 and 3.0), the header -- a Python dict literal such as
 *   {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
 * padded with spaces and a newline -- and then the elements, raw. */
#ifndef DLB_FILES_NPY_H
#define DLB_FILES_NPY_H

#include "../core/array.h"
#include "load_policy.h"

/* What a header says. After a successful dlb_npy_parse: 0 <= ndim <= 32,
 * every extent >= 0, numel (their product) and nbytes (numel times the
 * itemsize) fit (nbytes <= PTRDIFF_MAX), and data_offset + nbytes is within
 * the total size the parser was given. */
typedef struct dlb_npy_header {
  int major, minor; /* format version: (1, 0), (2, 0) or (3, 0) */
  dlb_dtype dtype;
  int swapped;       /* the elements are in the other byte order than this machine's */
  int fortran_order; /* column-major: the first index varies fastest */
  int ndim;
  int64_t shape[DLB_MAX_NDIM];
  int64_t numel;
  size_t nbytes;      /* of the elements */
  size_t data_offset; /* where the elements start: magic, version, length and header */
} dlb_npy_header;

/* The bytes before the header text of a version 2.0 or 3.0 file: enough of
 * any file to know where its data starts (dlb_npy_data_offset). */
#define DLB_NPY_PREAMBLE 12

/* The most bytes dlb_npy_format_header writes (32 dims of 19 digits fit). */
#define DLB_NPY_HEADER_MAX 1024
/* The longest header a read accepts (FORMAT beyond). */
#define DLB_NPY_HEADER_READ_MAX 65536u

/*
 * From the first size bytes of a file of total bytes (size >= the smaller of
 * total and DLB_NPY_PREAMBLE): where its data starts. FORMAT for a bad magic
 * or version, or a header longer than the file.
 */
dlb_status dlb_npy_data_offset(const void *data, size_t size, uint64_t total, size_t *offset,
                               dlb_error *err);

/*
 * Parses the header of a .npy file of total bytes whose first size bytes
 * are at data (size >= its data offset; size <= total). Strict: the dict
 * must have exactly the keys 'descr', 'fortran_order' and 'shape', once
 * each, in any order, with either quote style, whitespace between tokens,
 * an optional trailing comma, and the 'L' suffix of Python 2 integers in
 * versions 1.0 and 2.0. Errors:
 *   FORMAT  truncated, bad magic or version, a dict that is not what NumPy
 *           writes, a descr NumPy does not know, data shorter than the shape
 *   DTYPE   a descr NumPy knows that dlbridge has no dtype for (strings,
 *           objects, structured or void, datetimes, long double), with a hint
 *   SHAPE   more than 32 dims, a negative extent, or a byte size that overflows
 * Bytes after the data are ignored, as NumPy does.
 */
dlb_status dlb_npy_parse(const void *data, size_t size, uint64_t total, dlb_npy_header *h,
                         dlb_error *err);

/* The array a parsed header describes, for the load policy
 * (load_policy.h); it points into h. */
void dlb_npy_item(const dlb_npy_header *h, dlb_load_item *it);

/* Reads and parses the header of the .npy file s holds (the header's bytes
 * only, when s reads a file). Errors as dlb_npy_parse, and IO. */
dlb_status dlb_npy_read_header(const dlb_load_source *s, dlb_npy_header *h, dlb_error *err);

/* The array of the .npy file s holds, made by the load policy: a read-only
 * view of s's bytes, or a copy converted to this machine's byte order with
 * bools 0/1 (a Fortran-order file gives Fortran strides either way). Errors
 * as dlb_npy_parse and dlb_load_array. On failure out stays empty. */
dlb_status dlb_npy_load(dlb_load_source *s, dlb_array *out, dlb_error *err);

/* Shorthands for a load from memory, a host buffer or a file onto the host
 * (the load policy's rules):
 * - dlb_npy_from_memory: size bytes at data, always a new writable copy;
 * - dlb_npy_from_buffer: all of buf (a host buffer, such as a mapping; the
 *   caller keeps its own reference), viewed or copied as copy says;
 * - dlb_npy_load_file: the file at path, mapped unless copy is ALWAYS
 *   (read(2), no mapping); the mapping lives while any view of it does.
 *   IO (errno in err) when the system refuses or path is no regular file. */
dlb_status dlb_npy_from_memory(dlb_backend *host, const void *data, size_t size, dlb_array *out,
                               dlb_error *err);
dlb_status dlb_npy_from_buffer(dlb_buffer *buf, dlb_copy_mode copy, dlb_backend *host,
                               dlb_array *out, dlb_error *err);
dlb_status dlb_npy_load_file(dlb_backend *host, const char *path, dlb_copy_mode copy,
                             dlb_array *out, dlb_error *err);

/*
 * Writes the header np.save writes for an array of dtype and shape in this
 * machine's byte order, in C order or (fortran_order) column-major order
 * (byte for byte as NumPy 1.24: sorted keys, room to grow the first extent,
 * padded with spaces and a newline so that the data starts at a multiple of
 * 64): version 1.0, or 2.0 when the header needs more than 65535 bytes. out
 * has room for DLB_NPY_HEADER_MAX bytes. DTYPE for bfloat16 (.npy has no
 * such type), SHAPE for a bad shape.
 */
dlb_status dlb_npy_format_header(dlb_dtype dtype, int ndim, const int64_t *shape, int fortran_order,
                                 char *out, size_t *len, dlb_error *err);

/*
 * np.save's choice of order: a C-contiguous array (every 1-D one among
 * them) is written in C order; one that is only Fortran-contiguous (a
 * transposed matrix) is written as its bytes lie, with 'fortran_order':
 * True. Returns 1 for the latter, with *view the same memory in C order
 * (a's dims reversed; no reference taken: valid while a is); else 0.
 */
int dlb_npy_fortran_view(const dlb_array *a, dlb_array *view);

/*
 * Writes a to path as np.save does: the header, then the elements in
 * column-major order when dlb_npy_fortran_view says so, else in row-major
 * (C) order whatever a's strides (a non-contiguous array goes
 * through a bounded buffer, 16 MiB at a time; memory the host cannot
 * address is staged), through a dlb_file_writer: a new file beside path
 * replaces it when complete, so arrays mapping the old file keep its bytes
 * and a failure leaves the old file untouched. IO with errno when the
 * system refuses or path names no regular file; DTYPE for bfloat16.
 */
dlb_status dlb_npy_save_file(const dlb_array *a, const char *path, dlb_error *err);
/* The same with a buffer of buffer_bytes (at least one element) for a
 * non-contiguous array: the tests' way to reach every path with small arrays. */
dlb_status dlb_npy_save_file_buffered(const dlb_array *a, const char *path, size_t buffer_bytes,
                                      dlb_error *err);

#endif
