/* reduce_arg_search.h -- a template: the search NAME(p, n, stride) of
 * argmin or argmax of elements T (U: an unsigned integer as wide), with
 * its helpers NAME_walk, NAME_candidate, NAME_index, NAME_beats, NAME_find
 * and NAME_block (reduce_loops.c says how, above its instances). BEATS(x,
 * b): x strictly better than b; CANDIDATE(x, b): x beats b or is a NaN;
 * ISNAN(x); KIND: INT or FLOAT (which ARG_SHORT_ applies). reduce_arg.h
 * #defines NAME, T, U, BEATS, CANDIDATE, ISNAN and KIND and includes this
 * file once per instance; it #undefs NAME, BEATS and CANDIDATE at its end,
 * and reduce_arg.h the others. A file, not a macro, so that a debugger and
 * a profiler see its lines. No include guard. */

#define WALK REDUCE_CAT(NAME, _walk)
#define ANY_CANDIDATE REDUCE_CAT(NAME, _candidate)
#define INDEX REDUCE_CAT(NAME, _index)
#define ANY_BEATS REDUCE_CAT(NAME, _beats)
#define FIND REDUCE_CAT(NAME, _find)
#define SEARCH_BLOCK REDUCE_CAT(NAME, _block)
#define VEC_NAN REDUCE_CAT(VEC_NAN_, KIND)

/* The search element by element. */
static inline int64_t WALK(const char *p, int64_t n, int64_t stride) {
  T best = *(const T *)p;
  int64_t at = 0;
  if (ISNAN(best)) return 0;
  for (int64_t i = 1; i < n; i++) {
    T v = *(const T *)(p + i * stride);
    if (ISNAN(v)) return i;
    if (BEATS(v, best)) {
      best = v;
      at = i;
    }
  }
  return at;
}
/* Whether any of the n elements at x is a candidate against best. */
static inline int ANY_CANDIDATE(const T *x, int64_t n, T best) {
  U any = 0;
  for (int64_t i = 0; i < n; i++) any |= (U)CANDIDATE(x[i], best);
  return any != 0;
}
/* T of two bytes or more: the first index of the extreme of the
 * 0 < n <= ARG_BLOCK elements at x, the extreme into *e, and whether one
 * is a NaN into *nan (then *e and the index mean nothing). A row is
 * ARG_VECS vectors of ARG_VEC_BYTES (GCC's vector extension: 256 bits,
 * native in the x86-64-v3 and v4 clones, two 128-bit halves in the default
 * one), W lanes each. The row's vectors fold into one, lane by lane; each
 * lane keeps its extreme and the first row where it was seen (a select in
 * registers), and at the end looks in that row for the first of its ARG_VECS
 * elements equal to it. Per row that is ARG_VECS - 1 folds, one compare and
 * two selects: keeping every vector's lanes and their indices instead (four
 * compares, eight selects, spilled registers) ran ascending float32 at 2.2x
 * NumPy's time in cache and 1.1-1.2x from memory. The row is four named
 * vectors, not an array: GCC kept an array of them on the stack (stores
 * that loads could not forward from: 5x slower), and two rows' extremes at
 * once ran out of registers likewise. */
static inline int64_t INDEX(const T *x, int64_t n, T *e, int *nan) {
  typedef T vt __attribute__((vector_size(ARG_VEC_BYTES)));
  typedef U vu __attribute__((vector_size(ARG_VEC_BYTES)));
  enum { W = ARG_VEC_BYTES / sizeof(T), L = ARG_VECS * W };
  T v = x[0];
  U bad = (U)ISNAN(x[0]);
  int64_t i = 1, at = 0;
  if (n >= L) {
    vt best, y0, y1, y2, y3;
    vu row = {0}, first = {0}, nans = {0}, u;
    T m[W];
    U r[W];
    _Static_assert(ARG_VECS == 4, "a row is four vectors");
#define ARG_SELECT(u, p, q) ((vt)(((vu)(p) & (u)) | ((vu)(q) & ~(u))))
#define ARG_ROW(p)                                                                                 \
  do {                                                                                             \
    memcpy(&y0, (p), sizeof y0);                                                                   \
    memcpy(&y1, (p) + W, sizeof y1);                                                               \
    memcpy(&y2, (p) + 2 * W, sizeof y2);                                                           \
    memcpy(&y3, (p) + 3 * W, sizeof y3);                                                           \
    nans |= (vu)VEC_NAN(y0) | (vu)VEC_NAN(y1) | (vu)VEC_NAN(y2) | (vu)VEC_NAN(y3);                 \
    u = (vu)BEATS(y1, y0);                                                                         \
    y0 = ARG_SELECT(u, y1, y0);                                                                    \
    u = (vu)BEATS(y3, y2);                                                                         \
    y2 = ARG_SELECT(u, y3, y2);                                                                    \
    u = (vu)BEATS(y2, y0);                                                                         \
    y0 = ARG_SELECT(u, y2, y0);                                                                    \
  } while (0)
    ARG_ROW(x);
    best = y0;
    for (i = L; i + L <= n; i += L) {
      row += (U)L; /* every lane: i */
      ARG_ROW(x + i);
      u = (vu)BEATS(y0, best);
      best = ARG_SELECT(u, y0, best);
      first = (row & u) | (first & ~u);
    }
#undef ARG_ROW
#undef ARG_SELECT
    memcpy(m, &best, sizeof m);
    memcpy(r, &first, sizeof r);
    for (int l = 0; l < W; l++) bad |= nans[l];
    at = -1;
    for (int l = 0; l < W && !bad; l++) { /* the best lane; of equal ones, the first index */
      int64_t k = 0, where;
      while (k < ARG_VECS - 1 && !(x[(int64_t)r[l] + k * W + l] == m[l])) k++;
      where = (int64_t)r[l] + k * W + l;
      if (at < 0 || BEATS(m[l], v) || (m[l] == v && where < at)) {
        v = m[l];
        at = where;
      }
    }
    if (at < 0) at = 0;
  }
  for (; i < n; i++) { /* the rest: indices after every lane's */
    bad |= (U)ISNAN(x[i]);
    if (BEATS(x[i], v)) {
      v = x[i];
      at = i;
    }
  }
  *e = v;
  *nan = bad != 0;
  return at;
}
/* T of one byte: whether the n > 0 elements at x hold one that beats
 * best, and then *e, their extreme: LANES lanes fold a row of LANES
 * elements at a time, and only lanes that beat best are folded into one. */
static inline int ANY_BEATS(const T *x, int64_t n, T best, T *e) {
  T m[LANES], r = x[0];
  int64_t i = 1;
  if (n >= LANES) {
    U any = 0;
    for (int l = 0; l < LANES; l++) m[l] = x[l];
    for (i = LANES; i + LANES <= n; i += LANES)
      for (int l = 0; l < LANES; l++) m[l] = BEATS(x[i + l], m[l]) ? x[i + l] : m[l];
    for (int l = 0; i + l < n; l++) m[l] = BEATS(x[i + l], m[l]) ? x[i + l] : m[l];
    for (int l = 0; l < LANES; l++) any |= (U)BEATS(m[l], best);
    if (!any) return 0;
    r = m[0];
    for (int l = 1; l < LANES; l++) r = BEATS(m[l], r) ? m[l] : r;
    *e = r;
    return 1;
  }
  for (; i < n; i++) r = BEATS(x[i], r) ? x[i] : r;
  *e = r;
  return BEATS(r, best);
}
/* The first index of the n elements at x that is a NaN or (unless nan_only)
 * equal to v; n when there is none. */
static inline int64_t FIND(const T *x, int64_t n, T v, int nan_only) {
  for (int64_t c = 0; c < n;) {
    int64_t len = n - c < ARG_CHUNK ? n - c : ARG_CHUNK;
    U hit = 0;
    for (int64_t l = 0; l < len; l++) hit |= (U)ARG_MATCH(ISNAN, x[c + l], v, nan_only);
    if (hit) {
      while (!ARG_MATCH(ISNAN, x[c], v, nan_only)) c++;
      return c;
    }
    c += len;
  }
  return n;
}
/* The block of len elements at y, index b of the search, against *best at
 * *at: 1 when it beat *best (updated), 0 when not, -1 - i for a NaN at i. */
static inline int64_t SEARCH_BLOCK(const T *y, int64_t len, int64_t b, T *best, int64_t *at) {
  T e;
  int64_t i;
  if (sizeof(T) > 1) {
    int nan;
    i = INDEX(y, len, &e, &nan);
    if (nan) return -1 - FIND(y, len, e, 1);
    if (!BEATS(e, *best)) return 0;
  } else {
    if (!ANY_BEATS(y, len, *best, &e)) return 0;
    i = FIND(y, len, e, 0);
  }
  *best = e;
  *at = b + i;
  return 1;
}
DLB_KERNEL_CLONES static int64_t NAME(const char *p, int64_t n, int64_t stride) {
  T best = *(const T *)p, copy[ARG_COPY_BYTES / sizeof(T)];
  const int64_t whole = stride == (int64_t)sizeof(T);
  const int64_t block = whole ? ARG_BLOCK : (int64_t)(sizeof copy / sizeof(T));
  int64_t at = 0, hot = 0;
  if (stride == 0) return 0; /* n times the same element */
  if (n < REDUCE_CAT(ARG_SHORT_, KIND) || ISNAN(best)) return WALK(p, n, stride);
  for (int64_t b = 0; b < n; b += block) {
    int64_t len = n - b < block ? n - b : block;
    const T *y = copy;
    if (whole) y = (const T *)p + b;
    else
      for (int64_t i = 0; i < len; i++) copy[i] = *(const T *)(p + (b + i) * stride);
    if (!hot && !ANY_CANDIDATE(y, len, best)) continue;
    hot = SEARCH_BLOCK(y, len, b, &best, &at);
    if (hot < 0) return b - 1 - hot;
  }
  return at;
}

#undef WALK
#undef ANY_CANDIDATE
#undef INDEX
#undef ANY_BEATS
#undef FIND
#undef SEARCH_BLOCK
#undef VEC_NAN
#undef NAME
#undef BEATS
#undef CANDIDATE
