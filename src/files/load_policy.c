/* load_policy.c -- views or copies of a file's bytes, for every format. */
#define _XOPEN_SOURCE 700 /* POSIX 2008 */
#include "load_policy.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/copy.h"
#include "../core/shape.h"
#include "mapping.h"

#define COPY_HINT "leave copy out (views where possible, copies elsewhere) or pass copy = true"

/* ---- sources ---------------------------------------------------------------- */

static void source_init(dlb_load_source *s, dlb_backend *host, const dlb_load_options *o) {
  memset(s, 0, sizeof *s);
  s->host = host;
  s->opts = *o;
  if (!s->opts.backend) {
    s->opts.backend = host;
    s->opts.device_id = 0;
  }
  s->fd = -1;
}

static int to_host(const dlb_load_source *s) {
  return s->opts.backend == s->host && s->opts.device_id == 0;
}

/* Why no array of s can be a view whatever its bytes (NULL: some may be).
 * A file is also never viewed when the host turned mapping off. */
static const char *never_viewed(const dlb_load_source *s, int is_file) {
  if (s->opts.copy == DLB_COPY_ALWAYS) return "copy = true makes copies";
  if (!to_host(s)) return "the arrays go to another device than the cpu (copies there)";
  if (is_file && !s->opts.map)
    return "the host turned mapping off (dlb_allow_mapping): files are read into copies";
  return NULL;
}

static void reserve(const dlb_load_source *s, uint64_t nbytes) {
  if (s->opts.reserve && nbytes) s->opts.reserve(s->opts.reserve_ctx, nbytes);
}

/* COPY_REQUIRED: nothing of the source can be a view. */
static dlb_status refuse_all(const dlb_load_source *s, const char *why, dlb_error *err) {
  dlb_fail(err, DLB_E_COPY_REQUIRED, "no array of %s can be a view of it: %s",
           s->path ? "the file" : "the bytes", why);
  dlb_error_hint(err, COPY_HINT);
  return DLB_E_COPY_REQUIRED;
}

dlb_status dlb_load_open_file(dlb_load_source *s, dlb_backend *host, const char *path,
                              const dlb_load_options *o, dlb_error *err) {
  dlb_status st;
  source_init(s, host, o);
  s->path = path;
  s->no_view = never_viewed(s, 1);
  if (s->no_view && s->opts.copy == DLB_COPY_NEVER) return refuse_all(s, s->no_view, err);
  if ((st = dlb_open_file(path, &s->fd, &s->size, err)) != DLB_OK) {
    s->fd = -1;
    return st;
  }
  if (s->no_view) return DLB_OK; /* read from fd */
  reserve(s, s->size);
  st = dlb_buffer_map_fd(host, s->fd, s->size, path, &s->viewable, err);
  close(s->fd); /* the mapping stays valid without the descriptor */
  s->fd = -1;
  if (st != DLB_OK) {
    s->viewable = NULL;
    return st;
  }
  s->bytes = s->viewable->host; /* NULL for an empty file: nothing is read */
  return DLB_OK;
}

dlb_status dlb_load_open_memory(dlb_load_source *s, dlb_backend *host, const void *bytes,
                                size_t size, dlb_buffer *viewable, const dlb_load_options *o,
                                dlb_error *err) {
  source_init(s, host, o);
  s->bytes = bytes;
  s->size = size;
  s->no_view = never_viewed(s, 0);
  if (!s->no_view && !viewable) s->no_view = "the arrays of bytes in a string are always copies";
  if (!s->no_view) {
    dlb_buffer_retain(viewable);
    s->viewable = viewable;
  }
  if (s->no_view && s->opts.copy == DLB_COPY_NEVER) return refuse_all(s, s->no_view, err);
  return DLB_OK;
}

void dlb_load_close(dlb_load_source *s) {
  if (s->fd >= 0) close(s->fd);
  s->fd = -1;
  if (s->viewable) dlb_buffer_release(s->viewable);
  s->viewable = NULL;
  s->bytes = NULL;
}

dlb_status dlb_load_read(const dlb_load_source *s, void *dst, size_t n, uint64_t offset,
                         dlb_error *err) {
  if (n == 0) return DLB_OK;
  if (s->bytes) {
    memcpy(dst, s->bytes + offset, n);
    return DLB_OK;
  }
  return dlb_read_at(s->fd, dst, n, offset, s->path, err);
}

/* ---- one array ------------------------------------------------------------------- */

/* Whether some byte of n is neither 0 nor 1: blocks of 4096 bytes, each
 * folded branch-free (vectorised), then tested. */
static int has_non_bool_byte(const unsigned char *p, size_t n) {
  for (size_t at = 0; at < n; at += 4096) {
    size_t stop = n - at < 4096 ? n : at + 4096;
    unsigned char high = 0;
    for (size_t i = at; i < stop; i++) high |= p[i];
    if (high > 1) return 1;
  }
  return 0;
}

const char *dlb_load_copy_reason(const dlb_load_item *it, const void *elements) {
  size_t item = dlb_dtype_get(it->dtype)->itemsize;
  size_t alignment = item > 8 ? 8 : item; /* what the kernels read in place */
  if (it->nbytes == 0) return NULL;
  if (it->swapped && item > 1)
    return "its elements are in the other byte order (a copy byte-swaps them)";
  if ((uintptr_t)elements % alignment != 0)
    return "its data is misaligned for its dtype (a copy aligns it)";
  if (it->dtype == DLB_BOOL && has_non_bool_byte(elements, it->nbytes))
    return "a bool element is a byte other than 0 and 1 (a copy stores it as 1)";
  return NULL;
}

void dlb_load_to_native(const dlb_load_item *it, void *elements) {
  const dlb_dtype_info *info = dlb_dtype_get(it->dtype);
  unsigned char *p = elements;
  if (it->nbytes == 0) return;
  if (it->swapped) dlb_byteswap(p, it->numel, info->itemsize, info->kind == DLB_KIND_COMPLEX);
  if (it->dtype == DLB_BOOL)
    for (size_t i = 0; i < it->nbytes; i++) p[i] = p[i] != 0;
}

/* Sets a's geometry to the item's, C or Fortran order (the element count
 * was checked by the parser). */
static void set_geometry(dlb_array *a, const dlb_load_item *it) {
  a->dtype = it->dtype;
  a->ndim = it->ndim;
  a->numel = it->numel;
  if (it->ndim > 0) memcpy(a->shape, it->shape, (size_t)it->ndim * sizeof *it->shape);
  if (it->fortran_order) {
    int64_t step = 1;
    for (int d = 0; d < it->ndim; d++) {
      a->strides[d] = step;
      if (it->shape[d] > 1) step *= it->shape[d];
    }
  } else {
    dlb_shape_contiguous_strides(it->ndim, it->shape, a->strides);
  }
}

/* Why the item cannot be a view of s (NULL: it can). */
static const char *why_copied(const dlb_load_source *s, const dlb_load_item *it,
                              const unsigned char *data) {
  if (!s->viewable) return s->no_view;
  return dlb_load_copy_reason(it, data);
}

static dlb_status make_view(dlb_load_source *s, const dlb_load_item *it, dlb_array *out,
                            dlb_error *err) {
  dlb_status st;
  set_geometry(out, it);
  out->offset = (size_t)it->offset;
  out->readonly = 1;
  dlb_buffer_retain(s->viewable);
  out->buffer = s->viewable;
  /* The parser proved it; an array never reaches outside its buffer all the same. */
  if ((st = dlb_array_check_bounds(out, err)) != DLB_OK) {
    dlb_array_release(out);
    return st;
  }
  s->viewed = 1;
  return DLB_OK;
}

/* A new array on the host holding the item's elements, converted. */
static dlb_status host_copy(dlb_load_source *s, const dlb_load_item *it, const unsigned char *data,
                            dlb_array *out, dlb_error *err) {
  dlb_status st;
  reserve(s, it->nbytes);
  st = dlb_array_allocate(out, s->host, 0, it->dtype, it->ndim, it->shape, 0, err);
  if (st != DLB_OK) return st;
  set_geometry(out, it); /* the same bytes, in the file's order */
  if (it->nbytes && data) memcpy(dlb_array_host_data(out), data, it->nbytes);
  else if (it->nbytes)
    st = dlb_read_at(s->fd, dlb_array_host_data(out), it->nbytes, it->offset, s->path, err);
  if (st != DLB_OK) {
    dlb_array_release(out);
    return st;
  }
  dlb_load_to_native(it, dlb_array_host_data(out));
  return DLB_OK;
}

static dlb_status make_copy(dlb_load_source *s, const dlb_load_item *it, const unsigned char *data,
                            dlb_array *out, dlb_error *err) {
  dlb_array staged;
  dlb_status st;
  if (to_host(s)) {
    if ((st = host_copy(s, it, data, out, err)) == DLB_OK)
      out->readonly = s->opts.copy == DLB_COPY_IF_NEEDED;
    return st;
  }
  /* Another device: converted on the host first, then copied there. */
  if ((st = host_copy(s, it, data, &staged, err)) != DLB_OK) return st;
  reserve(s, it->nbytes);
  st = dlb_array_clone_to(out, &staged, s->opts.backend, s->opts.device_id, err);
  dlb_array_release(&staged);
  if (st != DLB_OK) out->buffer = NULL;
  return st;
}

dlb_status dlb_load_array(dlb_load_source *s, const dlb_load_item *it, dlb_array *out,
                          dlb_error *err) {
  const unsigned char *data = s->bytes ? s->bytes + it->offset : NULL;
  out->buffer = NULL;
  if (s->opts.copy != DLB_COPY_ALWAYS) {
    const char *why = why_copied(s, it, data);
    if (!why) return make_view(s, it, out, err);
    if (s->opts.copy == DLB_COPY_NEVER) {
      if (it->name)
        dlb_fail(err, DLB_E_COPY_REQUIRED, "tensor '%.60s' cannot be a view of %s: %s", it->name,
                 s->path ? "the file" : "the bytes", why);
      else
        dlb_fail(err, DLB_E_COPY_REQUIRED, "the array cannot be a view of %s: %s",
                 s->path ? "the file" : "the bytes", why);
      dlb_error_hint(err, COPY_HINT);
      return DLB_E_COPY_REQUIRED;
    }
  }
  return make_copy(s, it, data, out, err);
}
