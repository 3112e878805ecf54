/* scatter_update.h -- a template: the grouped update NAME of elements of
 * type T in place (scatter.c says how, above its instances). scatter.c
 * #defines NAME, T and KIND (SCATTER_INT, SCATTER_FLOAT or SCATTER_BOOL)
 * and includes this file once per instance; it #undefs them at its end. A
 * file, not a macro, so that a debugger and a profiler see its lines. No
 * include guard. */

#define SCATTER_FN(x) SCATTER_CAT(x, NAME)

/* a op b, a the element of data (NumPy's ufunc(a, b)). */
static inline __attribute__((always_inline)) T SCATTER_FN(combine_)(int op, T a, T b) {
#if KIND == SCATTER_BOOL
  if (op == DLB_SCATTER_ADD || op == DLB_SCATTER_MAXIMUM) return (T)((a != 0) | (b != 0));
  return (T)((a != 0) & (b != 0));
#elif KIND == SCATTER_FLOAT
  switch (op) {
    case DLB_SCATTER_ADD: return a + b;
    case DLB_SCATTER_MULTIPLY: return a * b;
    case DLB_SCATTER_MAXIMUM: return (a >= b || a != a) ? a : b; /* NaN wins */
    default: return (a <= b || a != a) ? a : b;
  }
#else
  switch (op) { /* wrapping: computed in uint64, the low bits kept */
    case DLB_SCATTER_ADD: return (T)((uint64_t)a + (uint64_t)b);
    case DLB_SCATTER_MULTIPLY: return (T)((uint64_t)a * (uint64_t)b);
    case DLB_SCATTER_MAXIMUM: return a >= b ? a : b;
    default: return a <= b ? a : b;
  }
#endif
}

/* The updates of one piece for a constant op (inlined into NAME once per op). */
static inline __attribute__((always_inline)) void SCATTER_FN(run_)(int op, char *data,
                                                                   const int64_t *off, int64_t m,
                                                                   const char *e, int64_t es) {
  if (es == 0) {
    T b;
    memcpy(&b, e, sizeof b);
    for (int64_t j = 0; j < m; j++) {
      T a;
      memcpy(&a, data + off[j], sizeof a);
      a = SCATTER_FN(combine_)(op, a, b);
      memcpy(data + off[j], &a, sizeof a);
    }
    return;
  }
  for (int64_t j = 0; j < m; j++) {
    T a, b;
    memcpy(&a, data + off[j], sizeof a);
    memcpy(&b, e + j * es, sizeof b);
    a = SCATTER_FN(combine_)(op, a, b);
    memcpy(data + off[j], &a, sizeof a);
  }
}

/* data + off[j] op= the element at e + j * es, for j < m in order. */
static void NAME(int op, char *data, const int64_t *off, int64_t m, const char *e, int64_t es) {
  switch (op) {
    case DLB_SCATTER_ADD: SCATTER_FN(run_)(DLB_SCATTER_ADD, data, off, m, e, es); break;
    case DLB_SCATTER_MULTIPLY: SCATTER_FN(run_)(DLB_SCATTER_MULTIPLY, data, off, m, e, es); break;
    case DLB_SCATTER_MAXIMUM: SCATTER_FN(run_)(DLB_SCATTER_MAXIMUM, data, off, m, e, es); break;
    default: SCATTER_FN(run_)(DLB_SCATTER_MINIMUM, data, off, m, e, es); break;
  }
}

#undef SCATTER_FN
#undef NAME
#undef T
#undef KIND
