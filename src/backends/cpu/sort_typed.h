/* sort_typed.h -- a template: the typed loops of one real element type
 * (sort.c says what they do, above their instances): exact_keys_SUFFIX,
 * write_values_SUFFIX and canonical_keys_SUFFIX of elements ET with keys KT
 * (FP: a float dtype). sort.c #defines SUFFIX, ET, KT and FP and includes
 * this file once per instance; it #undefs them at its end. A file, not a
 * macro, so that a debugger and a profiler see its lines. No include guard. */

/* Exact keys of the lane's non-NaN elements into keys from the front; NaN
 * bits, in order, from the back; counts zeros by sign; returns the keys. */
static int64_t SORT_CAT(exact_keys_, SUFFIX)(const keyer *k, const lane *in, KT *keys,
                                             int64_t *nans, int64_t zeros[2], int *ordered,
                                             dlb_work *w) {
  const KT sign = (KT)k->sign, inf = (KT)k->inf, flip = (KT)k->flip;
  const int is_bool = k->dtype == DLB_BOOL;
  int64_t m = 0, nn = 0, z_neg = 0, z_pos = 0;
  int ord = 1;
  KT prev = 0;
  for (int64_t i0 = 0, i1; i0 < in->n; i0 = i1) {
    i1 = stretch_end(i0, in->n);
    for (int64_t i = i0; i < i1; i++) {
      ET bits;
      KT key;
      memcpy(&bits, in->data + i * in->stride, sizeof bits);
      if (FP) {
        KT mag = (KT)(bits & (KT)~sign);
        if (mag > inf) {
          keys[in->n - 1 - nn++] = (KT)bits;
          continue;
        }
        if (mag == 0) {
          if (bits) z_neg++;
          else z_pos++;
        }
        key = (KT)(bits & sign ? (KT)~bits : (KT)(bits | sign));
      } else {
        key = is_bool ? (KT)(bits != 0) : (KT)(bits ^ sign);
      }
      key ^= flip;
      if (key < prev) ord = 0;
      prev = key;
      keys[m++] = key;
    }
    if (dlb_work_tick(w, i1 - i0)) break;
  }
  *nans = nn;
  zeros[0] = z_neg, zeros[1] = z_pos;
  *ordered = ord;
  return m;
}
/* The m values of sorted exact keys, to out (step bytes apart) from slot at. */
static void SORT_CAT(write_values_, SUFFIX)(const keyer *k, const KT *keys, int64_t m, char *out,
                                            int64_t step, int64_t at, dlb_work *w) {
  const KT sign = (KT)k->sign, flip = (KT)k->flip;
  /* backwards: keys may be out itself, at <= 0 ahead */
  for (int64_t hi = m, lo; hi > 0; hi = lo) {
    lo = hi > STRETCH ? hi - STRETCH : 0;
    for (int64_t i = hi; i-- > lo;) {
      KT key = keys[i] ^ flip;
      ET bits = FP ? (ET)(key & sign ? (KT)(key & (KT)~sign) : (KT)~key) : (ET)(key ^ sign);
      memcpy(out + (at + i) * step, &bits, sizeof bits);
    }
    if (dlb_work_tick(w, hi - lo)) return;
  }
}
/* The canonical key of an element's bits (canonical_key, typed): every NaN
 * ones, -0 as +0, xor flip. */
static inline KT SORT_CAT(canonical_bits_, SUFFIX)(ET bits, KT sign, KT inf, KT ones, KT flip,
                                                   int is_bool) {
  KT key;
  if (FP) {
    KT mag = (KT)(bits & (KT)~sign);
    key = mag > inf ? ones : mag == 0 ? sign : (KT)(bits & sign ? (KT)~bits : (KT)(bits | sign));
  } else {
    key = is_bool ? (KT)(bits != 0) : (KT)(bits ^ sign);
  }
  return key ^ flip;
}
/* Canonical keys of the whole lane with their positions; returns whether
 * they were in order already. With word (keys of 32 bits or fewer, a lane
 * shorter than 2^32): each key above its position in one 64-bit word there
 * instead (keys and pay unused). */
static int SORT_CAT(canonical_keys_, SUFFIX)(const keyer *k, const lane *in, KT *keys, void *pay,
                                             int wide, uint64_t *word, dlb_work *w) {
  const KT sign = (KT)k->sign, inf = (KT)k->inf, ones = (KT)k->ones, flip = (KT)k->flip;
  const int is_bool = k->dtype == DLB_BOOL;
  int ord = 1;
  uint64_t prev = 0;
  for (int64_t i0 = 0, i1; i0 < in->n; i0 = i1) {
    i1 = stretch_end(i0, in->n);
    for (int64_t i = i0; i < i1; i++) {
      ET bits;
      KT key;
      uint64_t order;
      memcpy(&bits, in->data + i * in->stride, sizeof bits);
      key = SORT_CAT(canonical_bits_, SUFFIX)(bits, sign, inf, ones, flip, is_bool);
      order = word ? (uint64_t)key << 32 | (uint64_t)i : (uint64_t)key;
      if (order < prev) ord = 0;
      prev = order;
      if (word) {
        word[i] = order;
        continue;
      }
      keys[i] = key;
      if (wide) ((uint64_t *)pay)[i] = (uint64_t)i;
      else ((uint32_t *)pay)[i] = (uint32_t)i;
    }
    if (dlb_work_tick(w, i1 - i0)) break;
  }
  return ord;
}

#undef SUFFIX
#undef ET
#undef KT
#undef FP
