/* select_pick.h -- a template: the pick NAME of elements of type T (select.c
 * says how, above its instances). select.c #defines NAME, T and BLEND (1:
 * T is an unsigned integer, a dense word read without branches) and includes this
 * file once per instance; it #undefs them at its end. A file, not a
 * macro, so that a debugger and a profiler see its lines. No include guard. */

DLB_KERNEL_CLONES static int64_t NAME(const pick_call *p, char *data, const char *mask, int64_t n,
                                      char *packed, int64_t left) {
  const int64_t ds = p->ds, ms = p->ms, ps = p->ps, block = p->block;
  const int read = !p->assign, fill = p->assign && ps == 0;
  int64_t j = 0; /* the picks made */
  T v, one;
  memset(&one, 0, sizeof one);
  if (fill) memcpy(&one, packed, sizeof one);
  for (int64_t i0 = 0; i0 < n && j < left; i0 += 64) {
    uint64_t bits = mask_bits(mask + i0 * ms, ms, n - i0 < 64 ? n - i0 : 64);
    char *d = data + i0 * ds, *q = packed + j * block * ps;
    int64_t k;
    if (!bits) continue;
    k = __builtin_popcountll(bits);
#if BLEND
    if (read && block == 1 && k >= DENSE && k < left - j) {
      /* Many picks to read: every element of the word, with no branch,
       * each stored into the next packed slot (a false one's is overwritten
       * by the next): slot j + k at most, inside packed (k < left - j).
       * Writes never take this road: an element the mask leaves out is
       * never written, not even with its own value (another thread or
       * device may be writing it). */
      int64_t len = n - i0 < 64 ? n - i0 : 64;
      if (ps == (int64_t)sizeof v) {
        for (int64_t e = 0, at = 0; e < len; e++) {
          memcpy(&v, d + e * ds, sizeof v);
          memcpy(q + at * (int64_t)sizeof v, &v, sizeof v);
          at += (int64_t)((bits >> e) & 1);
        }
      } else {
        for (int64_t e = 0; e < len; e++) {
          memcpy(&v, d + e * ds, sizeof v);
          memcpy(q, &v, sizeof v);
          q += ps & -(int64_t)((bits >> e) & 1);
        }
      }
      j += k;
      continue;
    }
#endif
    /* Few picks (or runs): one at a time. */
    if (k > left - j) k = left - j;
    if (block == 1 && read) {
      for (int64_t c = 0; c < k; c++, q += ps, bits &= bits - 1) {
        memcpy(&v, d + (int64_t)__builtin_ctzll(bits) * ds, sizeof v);
        memcpy(q, &v, sizeof v);
      }
    } else if (block == 1 && fill) {
      for (int64_t c = 0; c < k; c++, bits &= bits - 1)
        memcpy(d + (int64_t)__builtin_ctzll(bits) * ds, &one, sizeof one);
    } else if (block == 1) {
      for (int64_t c = 0; c < k; c++, q += ps, bits &= bits - 1) {
        memcpy(&v, q, sizeof v);
        memcpy(d + (int64_t)__builtin_ctzll(bits) * ds, &v, sizeof v);
      }
    } else {
      for (int64_t c = 0; c < k; c++, q += block * ps, bits &= bits - 1) {
        char *run = d + (int64_t)__builtin_ctzll(bits) * ds;
        for (int64_t e = 0; e < block; e++) {
          if (read) {
            memcpy(&v, run + e * (int64_t)sizeof v, sizeof v);
            memcpy(q + e * ps, &v, sizeof v);
          } else {
            if (!fill) memcpy(&one, q + e * ps, sizeof one);
            memcpy(run + e * (int64_t)sizeof one, &one, sizeof one);
          }
        }
      }
    }
    j += k;
  }
  return j;
}

#undef NAME
#undef T
#undef BLEND
