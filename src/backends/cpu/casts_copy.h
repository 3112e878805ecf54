/* casts_copy.h -- a template: the loops of a copy of T elements (a dtype
 * into itself, by item size): NAME_run (casts.c's ELEMENT_RUN), NAME_contiguous
 * (memmove), NAME_fill (one element into a contiguous run), NAME_every_other
 * (casts.c's EVERY_OTHER) and NAME_strided, which reads four elements an
 * iteration (the loads of a gather then overlap: twice the speed of one at a
 * time). casts.c #defines NAME and T and includes this file once per item
 * size; it #undefs them at its end. A file, not a macro, so that a debugger
 * and a profiler see its lines. No include guard. */

/* CASTS_EXPAND: NAME expanded before the shape macro pastes it. */
CASTS_EXPAND(ELEMENT_RUN, NAME, T, T, s)
static dlb_status CASTS_CAT(NAME, _contiguous)(char *dst, ptrdiff_t dst_stride, const char *src,
                                               ptrdiff_t src_stride, size_t n, dlb_error *err) {
  memmove(dst, src, n * sizeof(T));
  return DLB_OK;
}
DLB_KERNEL_CLONES static dlb_status CASTS_CAT(NAME, _fill)(char *dst, ptrdiff_t dst_stride,
                                                           const char *src, ptrdiff_t src_stride,
                                                           size_t n, dlb_error *err) {
  return CASTS_CAT(NAME, _run)(dst, (ptrdiff_t)sizeof(T), src, 0, (ptrdiff_t)n, err);
}
CASTS_EXPAND(EVERY_OTHER, NAME, T, T)
DLB_KERNEL_CLONES static dlb_status CASTS_CAT(NAME, _strided)(char *dst, ptrdiff_t dst_stride,
                                                              const char *src, ptrdiff_t src_stride,
                                                              size_t n, dlb_error *err) {
  ptrdiff_t so = 0, dof = 0; /* offsets: no pointer leaves either run */
  size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    T a, b, c, e;
    memcpy(&a, src + so, sizeof a);
    memcpy(&b, src + so + src_stride, sizeof b);
    memcpy(&c, src + so + 2 * src_stride, sizeof c);
    memcpy(&e, src + so + 3 * src_stride, sizeof e);
    memcpy(dst + dof, &a, sizeof a);
    memcpy(dst + dof + dst_stride, &b, sizeof b);
    memcpy(dst + dof + 2 * dst_stride, &c, sizeof c);
    memcpy(dst + dof + 3 * dst_stride, &e, sizeof e);
    so += 4 * src_stride;
    dof += 4 * dst_stride;
  }
  if (k == n) return DLB_OK;
  return CASTS_CAT(NAME, _run)(dst + dof, dst_stride, src + so, src_stride, (ptrdiff_t)(n - k),
                               err);
}

#undef NAME
#undef T
