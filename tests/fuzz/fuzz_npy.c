/* fuzz_npy.c -- the .npy reader (src/files/npy.c) on arbitrary bytes: the
 * header parser, the full load from memory (a copy), and the load from a
 * host buffer (a view where possible), all without Lua. The input is the
 * file itself, in a block of exactly its size (ASan reports a one-byte
 * overread).
 *
 * Invariants checked (a broken one aborts):
 * - a parsed header is within bounds: ndim 0..32, extents >= 0, numel their
 *   product, nbytes numel times the itemsize, data_offset + nbytes <= size;
 * - parsing fails only with FORMAT, DTYPE or SHAPE, and the loads fail with
 *   the parser's code (or OUT_OF_MEMORY);
 * - a parse given only the header's bytes agrees with one given them all;
 * - every element of a loaded array is readable (read in full), a copy is
 *   writable and its bools are 0/1; a view is read-only, inside the buffer,
 *   and holds the file's own bytes;
 * - the header dlbridge writes for the parsed dtype and shape parses back
 *   to them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backends/cpu/cpu.h"
#include "core/array.h"
#include "core/backend.h"
#include "core/copy.h"
#include "files/mapping.h"
#include "files/npy.h"
#include "fuzz_common.h"

static dlb_backend *host;

static void release_block(void *p) { free(p); }

/* The header's invariants. */
static void check_header(const dlb_npy_header *h, size_t size) {
  int64_t numel = 1;
  int has_zero = 0;
  if (h->ndim < 0 || h->ndim > DLB_MAX_NDIM) fuzz_fail("ndim %d", h->ndim);
  for (int d = 0; d < h->ndim; d++) {
    if (h->shape[d] < 0) fuzz_fail("negative extent %lld", (long long)h->shape[d]);
    if (h->shape[d] == 0) has_zero = 1;
    else if (__builtin_mul_overflow(numel, h->shape[d], &numel)) fuzz_fail("numel overflows");
  }
  if (has_zero) numel = 0;
  if (numel != h->numel)
    fuzz_fail("numel %lld, expected %lld", (long long)h->numel, (long long)numel);
  if ((uint64_t)h->nbytes != (uint64_t)numel * dlb_dtype_get(h->dtype)->itemsize)
    fuzz_fail("nbytes %zu", h->nbytes);
  if (h->data_offset > size || h->nbytes > size - h->data_offset)
    fuzz_fail("data [%zu, +%zu) outside %zu bytes", h->data_offset, h->nbytes, size);
  if (h->dtype == DLB_BFLOAT16 || (unsigned)h->dtype >= DLB_DTYPE_COUNT)
    fuzz_fail("dtype %d", h->dtype);
}

/* Reads every element of a (ASan checks the reads); bools are 0/1. A view,
 * and a copy made without copy = ALWAYS, are read-only. */
static void check_array(const dlb_array *a, const dlb_npy_header *h, int readonly) {
  dlb_error err;
  unsigned char *out;
  if (!a->buffer) fuzz_fail("a loaded array without a buffer");
  if (a->numel != h->numel || a->ndim != h->ndim || a->dtype != h->dtype) fuzz_fail("geometry");
  if (dlb_array_check_bounds(a, &err) != DLB_OK) fuzz_fail("out of bounds: %s", err.message);
  if (a->readonly != readonly) fuzz_fail("readonly %d, expected %d", a->readonly, readonly);
  out = malloc(h->nbytes ? h->nbytes : 1);
  if (!out) return;
  if (dlb_array_read_into(a, out, a->dtype, &err) != DLB_OK) fuzz_fail("read: %s", err.message);
  if (a->dtype == DLB_BOOL)
    for (size_t i = 0; i < h->nbytes; i++)
      if (out[i] > 1) fuzz_fail("bool byte %u at %zu", out[i], i);
  free(out);
}

/* The header written for h's dtype, shape and order parses back to them. */
static void check_rewrite(const dlb_npy_header *h) {
  char header[DLB_NPY_HEADER_MAX];
  size_t len;
  dlb_npy_header back;
  dlb_error err;
  if (dlb_npy_format_header(h->dtype, h->ndim, h->shape, h->fortran_order, header, &len, &err) !=
      DLB_OK)
    fuzz_fail("format_header: %s", err.message);
  if (dlb_npy_parse(header, len, (uint64_t)len + h->nbytes, &back, &err) != DLB_OK)
    fuzz_fail("the written header does not parse: %s", err.message);
  if (back.dtype != h->dtype || back.ndim != h->ndim || back.fortran_order != h->fortran_order ||
      back.swapped || back.nbytes != h->nbytes ||
      (h->ndim && memcmp(back.shape, h->shape, (size_t)h->ndim * 8)))
    fuzz_fail("the written header parses to something else");
}

/* Why the load policy copies the array of the parsed file at file. */
static const char *copy_reason(const dlb_npy_header *h, const void *file) {
  dlb_load_item it;
  dlb_npy_item(h, &it);
  return dlb_load_copy_reason(&it, (const unsigned char *)file + it.offset);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dlb_error err;
  dlb_npy_header h;
  dlb_status st, st2;
  dlb_array copy, view;
  dlb_buffer *buf;
  unsigned char *block;
  if (!host && dlb_cpu_backend_create(&host, &err) != DLB_OK) abort();
  block = malloc(size ? size : 1);
  if (!block) return 0;
  memcpy(block, data, size);

  st = dlb_npy_parse(size ? block : NULL, size, size, &h, &err);
  if (st != DLB_OK && st != DLB_E_FORMAT && st != DLB_E_DTYPE && st != DLB_E_SHAPE)
    fuzz_fail("parse failed with %s", dlb_status_name(st));
  if (st == DLB_OK) {
    dlb_npy_header again;
    check_header(&h, size);
    check_rewrite(&h);
    /* Only the header's bytes at hand, the rest of the file known by size. */
    if (dlb_npy_parse(block, h.data_offset, size, &again, &err) != DLB_OK ||
        memcmp(&again, &h, sizeof h) != 0)
      fuzz_fail("a parse of the header alone differs");
  }

  st2 = dlb_npy_from_memory(host, size ? block : NULL, size, &copy, &err);
  if (st2 != st && st2 != DLB_E_OUT_OF_MEMORY)
    fuzz_fail("from_memory: %s, parse: %s", dlb_status_name(st2), dlb_status_name(st));
  if (st2 == DLB_OK) check_array(&copy, &h, 0);

  if (dlb_buffer_wrap_host(host, block, size, 1, release_block, block, &buf, &err) != DLB_OK)
    fuzz_fail("wrap: %s", err.message); /* the block is freed either way */
  for (int mode = DLB_COPY_IF_NEEDED; mode <= DLB_COPY_ALWAYS; mode++) {
    st2 = dlb_npy_from_buffer(buf, (dlb_copy_mode)mode, host, &view, &err);
    if (st2 == DLB_E_COPY_REQUIRED && mode == DLB_COPY_NEVER && st == DLB_OK &&
        copy_reason(&h, buf->host))
      continue;
    if (st2 != st && st2 != DLB_E_OUT_OF_MEMORY)
      fuzz_fail("from_buffer(%d): %s, parse: %s", mode, dlb_status_name(st2), dlb_status_name(st));
    if (st2 != DLB_OK) continue;
    if (view.buffer == buf) {
      if (mode == DLB_COPY_ALWAYS || copy_reason(&h, buf->host))
        fuzz_fail("a view that must be a copy");
      check_array(&view, &h, 1);
      /* A view holds the file's own bytes, as the copy does (nothing to convert). */
      if (copy.buffer && h.nbytes &&
          memcmp(dlb_array_host_data(&view), dlb_array_host_data(&copy), h.nbytes) != 0)
        fuzz_fail("a view and a copy of the same file differ");
    } else {
      if (mode == DLB_COPY_NEVER) fuzz_fail("a copy where none was allowed");
      check_array(&view, &h, mode != DLB_COPY_ALWAYS);
    }
    dlb_array_release(&view);
  }
  dlb_buffer_release(buf);
  if (copy.buffer) dlb_array_release(&copy);
  return 0;
}
