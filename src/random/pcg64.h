/* pcg64.h -- NumPy's PCG64 bit generator (PCG XSL-RR 128/64, O'Neill), bit
 * for bit: a 128-bit LCG state advanced before each output, the 64-bit
 * output rotr(hi ^ lo, state >> 122), and the 32-bit draws NumPy makes from
 * halves of one 64-bit output (the low half first; the high half is kept for
 * the next 32-bit draw, and 64-bit draws neither use nor clear it). */
#ifndef DLB_RANDOM_PCG64_H
#define DLB_RANDOM_PCG64_H

#include <stdint.h>

__extension__ typedef unsigned __int128 dlb_u128;

/* PCG's default 128-bit multiplier (NumPy's PCG_DEFAULT_MULTIPLIER_128). */
#define DLB_PCG64_MULT                                                                             \
  (((dlb_u128)UINT64_C(2549297995355413924) << 64) | UINT64_C(4865540595714422341))

typedef struct dlb_pcg64 {
  dlb_u128 state;
  dlb_u128 inc;   /* odd */
  int has_uint32; /* uinteger holds the high half of the last 64-bit output */
  uint32_t uinteger;
} dlb_pcg64;

/* Seeds g as NumPy's PCG64 does from SeedSequence.generate_state(4, uint64):
 * initstate = words[0]:words[1], initseq = words[2]:words[3] (high:low). */
void dlb_pcg64_seed(dlb_pcg64 *g, const uint64_t words[4]);

/* The 64-bit output. */
static inline uint64_t dlb_pcg64_next64(dlb_pcg64 *g) {
  dlb_u128 s = g->state * DLB_PCG64_MULT + g->inc;
  uint64_t x = (uint64_t)(s >> 64) ^ (uint64_t)s;
  unsigned rot = (unsigned)(s >> 122);
  g->state = s;
  return (x >> rot) | (x << ((64 - rot) & 63));
}

/* The 32-bit output: a buffered half of a 64-bit one. */
static inline uint32_t dlb_pcg64_next32(dlb_pcg64 *g) {
  uint64_t next;
  if (g->has_uint32) {
    g->has_uint32 = 0;
    return g->uinteger;
  }
  next = dlb_pcg64_next64(g);
  g->has_uint32 = 1;
  g->uinteger = (uint32_t)(next >> 32);
  return (uint32_t)next;
}

/* A double in [0, 1): 53 random bits. */
static inline double dlb_pcg64_next_double(dlb_pcg64 *g) {
  return (double)(dlb_pcg64_next64(g) >> 11) * (1.0 / 9007199254740992.0);
}

/* A float in [0, 1): 24 random bits of a 32-bit draw (NumPy 1.24's next_float). */
static inline float dlb_pcg64_next_float(dlb_pcg64 *g) {
  return (float)(dlb_pcg64_next32(g) >> 8) * (1.0f / 16777216.0f);
}

/* Advances g by `steps` outputs in O(log steps) (Brown's LCG jump): the
 * multiplier and increment of `steps` steps at once. */
void dlb_pcg64_jump_constants(uint64_t steps, dlb_u128 inc, dlb_u128 *mult, dlb_u128 *add);

#endif
