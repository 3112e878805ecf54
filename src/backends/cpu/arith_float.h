/* arith_float.h -- a template: Python's floor modulo and floor division on
 * the float type T, floor_mod_T and floor_div_T (NumPy's npy_divmod), with
 * the libm functions FMOD, FLOOR and COPYSIGN of T. loops_arith.c #defines
 * T, FMOD, FLOOR and COPYSIGN and includes this file once per float type;
 * it #undefs them at its end. A file, not a macro, so that a debugger and a
 * profiler see its lines. No include guard. */

static inline T ARITH_CAT(floor_mod_, T)(T a, T b) {
  T mod = FMOD(a, b);
  if (b == 0) return mod; /* NaN */
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) mod += b;
  } else {
    mod = COPYSIGN((T)0, b);
  }
  return mod;
}
static inline T ARITH_CAT(floor_div_, T)(T a, T b) {
  T mod, div, floordiv;
  if (b == 0) return a / b;
  mod = FMOD(a, b);
  div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= (T)1;
  if (div != 0) {
    floordiv = FLOOR(div);
    if (div - floordiv > (T)0.5) floordiv += (T)1;
  } else {
    floordiv = COPYSIGN((T)0, a / b);
  }
  return floordiv;
}

#undef T
#undef FMOD
#undef FLOOR
#undef COPYSIGN
