/* arith_loop.h -- a template: the loop shapes of the element-wise kernels
 * over elements of type TI giving TO, as functions that take the element
 * operation as a function. loops_arith.c #defines TI and TO and includes
 * this file once per pair of types (through arith_loops.h); it #undefs them
 * at its end. No include guard.
 *
 * A kernel (BINARY_KERNEL, UNARY_KERNEL in loops_arith.c) is its operation,
 * a static inline function of one element, handed to these loops; both are
 * inlined into the kernel, so each kernel is the loop written out for its
 * operation (the contiguous and stride-0 branches are what the compiler
 * vectorises: NumPy's BINARY_LOOP_FAST), and a debugger and a profiler see
 * the lines below. */

#define ARITH_LOOP_NAME(shape) ARITH_CAT(shape, ARITH_CAT(TI, ARITH_CAT(_to_, TO)))

/* out = op(a, b) over n elements: data and steps as a dlb_loop's. */
static inline __attribute__((always_inline)) int ARITH_LOOP_NAME(binary_loop_)(char **data,
                                                                               const int64_t *steps,
                                                                               int64_t n,
                                                                               TO (*op)(TI, TI)) {
  char *po = data[0], *pa = data[1], *pb = data[2];
  const int64_t so = steps[0], sa = steps[1], sb = steps[2];
  if (so == sizeof(TO) && sa == sizeof(TI) && sb == sizeof(TI)) {
    TO *o = (TO *)po;
    const TI *x = (const TI *)pa, *y = (const TI *)pb;
    for (int64_t i = 0; i < n; i++) o[i] = op(x[i], y[i]);
  } else if (so == sizeof(TO) && sa == sizeof(TI) && sb == 0) {
    TO *o = (TO *)po;
    const TI *x = (const TI *)pa, b = *(const TI *)pb;
    for (int64_t i = 0; i < n; i++) o[i] = op(x[i], b);
  } else if (so == sizeof(TO) && sa == 0 && sb == sizeof(TI)) {
    TO *o = (TO *)po;
    const TI a = *(const TI *)pa, *y = (const TI *)pb;
    for (int64_t i = 0; i < n; i++) o[i] = op(a, y[i]);
  } else if (so == sizeof(TO) && sb == 0) { /* a strided (a transposed view), b one value */
    TO *o = (TO *)po;
    const TI b = *(const TI *)pb;
    for (int64_t i = 0; i < n; i++) o[i] = op(*(const TI *)(pa + i * sa), b);
  } else {
    for (int64_t i = 0; i < n; i++, po += so, pa += sa, pb += sb)
      *(TO *)po = op(*(const TI *)pa, *(const TI *)pb);
  }
  return 0;
}

/* out = op(a) over n elements. */
static inline __attribute__((always_inline)) int ARITH_LOOP_NAME(unary_loop_)(char **data,
                                                                              const int64_t *steps,
                                                                              int64_t n,
                                                                              TO (*op)(TI)) {
  char *po = data[0], *pa = data[1];
  const int64_t so = steps[0], sa = steps[1];
  if (so == sizeof(TO) && sa == sizeof(TI)) {
    TO *o = (TO *)po;
    const TI *x = (const TI *)pa;
    for (int64_t i = 0; i < n; i++) o[i] = op(x[i]);
  } else {
    for (int64_t i = 0; i < n; i++, po += so, pa += sa) *(TO *)po = op(*(const TI *)pa);
  }
  return 0;
}

#undef ARITH_LOOP_NAME
#undef TI
#undef TO
