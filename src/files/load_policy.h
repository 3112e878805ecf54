/* load_policy.h -- how a load makes arrays of a file's bytes, for every
 * format (.npy, safetensors): where the bytes come from, and whether each
 * array views them or is a copy of its own. No Lua here.
 *
 * The policy, in one place:
 * - An array is a read-only view of the bytes when the bytes are a buffer
 *   arrays may view (a mapped file, host memory handed over), the arrays go
 *   to the host (the cpu backend, device 0), and its elements can be read
 *   as they are: this machine's byte order, aligned for the dtype (an
 *   address that is a multiple of the item size, at most 8, as the kernels
 *   read them), and, for bool, every byte 0 or 1 (dlbridge's bools are).
 * - Anything else is a copy of its own, converted: byte-swapped, aligned,
 *   bool bytes other than 0 stored as 1.
 * - The copy mode decides between them: DLB_COPY_IF_NEEDED views where the
 *   bytes allow and copies elsewhere, the copies read-only like the views
 *   when they are on the host (every array of such a load behaves the
 *   same), writable on another device; DLB_COPY_ALWAYS gives writable
 *   copies only; DLB_COPY_NEVER views or fails with COPY_REQUIRED, before
 *   reading anything when no array could be a view at all.
 * - A file is mapped only when a view can come of it: with copy ALWAYS, with
 *   mapping off (the host's choice: dlb_allow_mapping) or for another device
 *   its arrays are read from the file (pread), each into its own memory. */
#ifndef DLB_FILES_LOAD_POLICY_H
#define DLB_FILES_LOAD_POLICY_H

#include "../core/array.h"
#include "../core/dlpack.h" /* dlb_copy_mode */

/* How a load makes its arrays. */
typedef struct dlb_load_options {
  dlb_copy_mode copy;
  dlb_backend *backend; /* where the arrays go: the host (see dlb_load_source), or another */
  int device_id;
  int map; /* a file may be mapped; 0: read instead */
  /* Called (when not NULL) with the bytes about to be charged to the
   * budget, before each mapping or copy: a binding makes room there
   * (collects garbage). It must not raise nor longjmp. */
  void (*reserve)(void *ctx, uint64_t nbytes);
  void *reserve_ctx;
} dlb_load_options;

/* The bytes a load reads: a file (mapped or open) or memory. Open it with
 * dlb_load_open_file or dlb_load_open_memory, close it with dlb_load_close. */
typedef struct dlb_load_source {
  dlb_backend *host; /* the cpu backend: views, copies, staging */
  dlb_load_options opts;
  const unsigned char *bytes; /* all size bytes in memory, or NULL: read from fd */
  uint64_t size;
  dlb_buffer *viewable; /* the bytes as a buffer arrays may view (a reference), or NULL */
  const char *no_view;  /* with viewable NULL: why (a static sentence) */
  int fd;               /* with bytes NULL: the open file; else -1 */
  const char *path;     /* for messages: the file's path, or NULL for memory */
  int viewed;           /* some array views `viewable` */
} dlb_load_source;

/* Opens the file at path (dlb_open_file: a regular file, never waiting) and
 * maps it when the options let a view come of it (above). Errors: IO
 * (dlb_open_file, the map), OUT_OF_MEMORY, COPY_REQUIRED. On failure s is
 * closed already. */
dlb_status dlb_load_open_file(dlb_load_source *s, dlb_backend *host, const char *path,
                              const dlb_load_options *o, dlb_error *err);

/* size bytes at bytes, which stay valid until s is closed; viewable: the
 * same bytes as a buffer arrays may view (s takes its own reference), or
 * NULL (a Lua string: every array is a copy). Fails only with
 * COPY_REQUIRED (copy NEVER and no viewable). */
dlb_status dlb_load_open_memory(dlb_load_source *s, dlb_backend *host, const void *bytes,
                                size_t size, dlb_buffer *viewable, const dlb_load_options *o,
                                dlb_error *err);

/* Lets go of the file and the buffer (arrays viewing it keep their own
 * references). Idempotent. */
void dlb_load_close(dlb_load_source *s);

/* Reads n bytes at offset (within size) into dst: copied from memory or
 * read from the file (FORMAT if it ended early: it changed). */
dlb_status dlb_load_read(const dlb_load_source *s, void *dst, size_t n, uint64_t offset,
                         dlb_error *err);

/* One array of a file, as its format's parser found it: offset and nbytes
 * lie within the source's size (the parser checked), and numel, nbytes fit. */
typedef struct dlb_load_item {
  const char *name; /* for messages: a tensor's name, or NULL (the file's one array) */
  dlb_dtype dtype;
  int ndim;
  const int64_t *shape;
  int fortran_order; /* column-major strides (the first index varies fastest) */
  int64_t numel;
  size_t nbytes;
  uint64_t offset; /* of the elements in the source */
  int swapped;     /* stored in the other byte order than this machine's */
} dlb_load_item;

/* Why the item's elements (at elements) cannot be viewed as they are (a
 * static sentence), or NULL: swapped, misaligned, or a bool byte other than
 * 0 and 1 (this reads every byte of a bool array). */
const char *dlb_load_copy_reason(const dlb_load_item *it, const void *elements);

/* Brings elements just copied from a file into dlbridge's form, in place:
 * this machine's byte order, bool bytes as 0 or 1. */
void dlb_load_to_native(const dlb_load_item *it, void *elements);

/*
 * Fills the empty array out with the item, by the policy above: a read-only
 * view of the source's buffer, or a copy (on opts' backend and device).
 * Errors: COPY_REQUIRED (copy NEVER, naming the reason), OUT_OF_MEMORY and
 * the backend's, IO or FORMAT from a file's read. On failure out stays
 * empty.
 */
dlb_status dlb_load_array(dlb_load_source *s, const dlb_load_item *it, dlb_array *out,
                          dlb_error *err);

#endif
