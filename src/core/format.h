/* format.h -- NumPy-like text for an array, summarised when large. */
#ifndef DLB_CORE_FORMAT_H
#define DLB_CORE_FORMAT_H

#include "array.h"

/* A growable string; data is NUL-terminated while len > 0. */
typedef struct dlb_strbuf {
  char *data;
  size_t len, capacity;
  int failed; /* an allocation failed: contents are truncated */
} dlb_strbuf;

void dlb_strbuf_init(dlb_strbuf *sb);
void dlb_strbuf_free(dlb_strbuf *sb);
void dlb_strbuf_add(dlb_strbuf *sb, const char *s, size_t n);
void dlb_strbuf_printf(dlb_strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Arrays with more elements than this print summarised. */
#define DLB_FORMAT_THRESHOLD 1000
/* Elements kept at each end of a summarised dimension. */
#define DLB_FORMAT_EDGEITEMS 3

/*
 * Appends e.g. "array([[1., 2.],\n       [3., 4.]], shape=(2, 2), dtype=float64, device=cpu:0)".
 * Above DLB_FORMAT_THRESHOLD elements, each dimension longer than
 * 2*DLB_FORMAT_EDGEITEMS shows its first and last DLB_FORMAT_EDGEITEMS
 * entries with "..." between; only the printed elements are read.
 */
dlb_status dlb_array_format(const dlb_array *a, const char *device, dlb_strbuf *out,
                            dlb_error *err);

/* Appends one element as the printer shows it ("1.5", "-3", "true", "1.+2.j"). */
void dlb_format_scalar(dlb_strbuf *out, dlb_dtype dtype, const dlb_scalar *v);

#endif
