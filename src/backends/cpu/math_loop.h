/* math_loop.h -- a template: the loop of the one-input math kernels over
 * elements of type IT giving OT, as a function that takes the element
 * operation as a function. loops_math.c #defines IT and OT and includes
 * this file once per pair of types; it #undefs them at its end. No include
 * guard.
 *
 * A kernel (UNARY_KERNEL in loops_math.c) is its operation, a static
 * inline function of one element, handed to this loop; both are inlined
 * into the kernel, so each kernel is the loop written out for its
 * operation, and a debugger and a profiler see the lines below. Branches:
 * both contiguous (the vectorised loop), a stride-0 input (one value
 * computed once, then stored n times), anything else. Elements move by
 * memcpy: steps need not be multiples of the element's alignment. */

static inline __attribute__((always_inline)) int MATH_CAT(
    unary_math_loop_, MATH_CAT(IT, MATH_CAT(_to_, OT)))(char **data, const int64_t *steps,
                                                        int64_t n, OT (*op)(IT)) {
  char *out = data[0];
  const char *in = data[1];
  const int64_t out_step = steps[0], in_step = steps[1];
  IT x;
  OT y;
  if (out_step == (int64_t)sizeof(OT) && in_step == (int64_t)sizeof(IT)) {
    for (int64_t i = 0; i < n; i++) {
      memcpy(&x, in + i * (int64_t)sizeof(IT), sizeof x);
      y = op(x);
      memcpy(out + i * (int64_t)sizeof(OT), &y, sizeof y);
    }
  } else if (in_step == 0) {
    memcpy(&x, in, sizeof x);
    y = op(x);
    for (int64_t i = 0; i < n; i++) memcpy(out + i * out_step, &y, sizeof y);
  } else {
    for (int64_t i = 0; i < n; i++) {
      memcpy(&x, in + i * in_step, sizeof x);
      y = op(x);
      memcpy(out + i * out_step, &y, sizeof y);
    }
  }
  return 0;
}

#undef IT
#undef OT
