/* pcg64.c -- seeding and jumping of NumPy's PCG64 (see pcg64.h). */
#include "pcg64.h"

void dlb_pcg64_seed(dlb_pcg64 *g, const uint64_t words[4]) {
  dlb_u128 initstate = ((dlb_u128)words[0] << 64) | words[1];
  dlb_u128 initseq = ((dlb_u128)words[2] << 64) | words[3];
  g->state = 0;
  g->inc = (initseq << 1) | 1;
  g->state = g->state * DLB_PCG64_MULT + g->inc;
  g->state += initstate;
  g->state = g->state * DLB_PCG64_MULT + g->inc;
  g->has_uint32 = 0;
  g->uinteger = 0;
}

void dlb_pcg64_jump_constants(uint64_t steps, dlb_u128 inc, dlb_u128 *mult, dlb_u128 *add) {
  dlb_u128 cur_mult = DLB_PCG64_MULT, cur_plus = inc, acc_mult = 1, acc_plus = 0;
  while (steps) {
    if (steps & 1) {
      acc_mult *= cur_mult;
      acc_plus = acc_plus * cur_mult + cur_plus;
    }
    cur_plus = (cur_mult + 1) * cur_plus;
    cur_mult *= cur_mult;
    steps >>= 1;
  }
  *mult = acc_mult;
  *add = acc_plus;
}
