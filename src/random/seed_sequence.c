/* seed_sequence.c -- NumPy's SeedSequence hashing (see seed_sequence.h). */
#include "seed_sequence.h"

#define INIT_A UINT32_C(0x43b0d7e5)
#define MULT_A UINT32_C(0x931e8875)
#define INIT_B UINT32_C(0x8b51f9dd)
#define MULT_B UINT32_C(0x58f38ded)
#define MIX_MULT_L UINT32_C(0xca01f9dd)
#define MIX_MULT_R UINT32_C(0x4973f715)
#define XSHIFT 16

/* NumPy's hashmix: the multiplier hash_const changes with every call. */
static uint32_t hashmix(uint32_t value, uint32_t *hash_const) {
  value ^= *hash_const;
  *hash_const *= MULT_A;
  value *= *hash_const;
  value ^= value >> XSHIFT;
  return value;
}

static uint32_t mix(uint32_t x, uint32_t y) {
  uint32_t result = MIX_MULT_L * x - MIX_MULT_R * y;
  result ^= result >> XSHIFT;
  return result;
}

/* Word i of the assembled entropy: the run entropy (zero-padded to the pool
 * size when there is a spawn key), then the spawn key. */
static uint32_t assembled(const uint32_t *entropy, size_t n_entropy, size_t n_run,
                          const uint32_t *spawn, size_t i) {
  if (i < n_run) return i < n_entropy ? entropy[i] : 0;
  return spawn[i - n_run];
}

void dlb_seed_pool(const uint32_t *entropy, size_t n_entropy, const uint32_t *spawn, size_t n_spawn,
                   uint32_t pool[DLB_SEED_POOL_SIZE]) {
  uint32_t hash_const = INIT_A;
  size_t n_run = n_spawn > 0 && n_entropy < DLB_SEED_POOL_SIZE ? DLB_SEED_POOL_SIZE : n_entropy;
  size_t n = n_run + n_spawn;
  for (size_t i = 0; i < DLB_SEED_POOL_SIZE; i++)
    pool[i] = hashmix(i < n ? assembled(entropy, n_entropy, n_run, spawn, i) : 0, &hash_const);
  for (size_t src = 0; src < DLB_SEED_POOL_SIZE; src++)
    for (size_t dst = 0; dst < DLB_SEED_POOL_SIZE; dst++)
      if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src], &hash_const));
  for (size_t src = DLB_SEED_POOL_SIZE; src < n; src++) {
    uint32_t word = assembled(entropy, n_entropy, n_run, spawn, src);
    for (size_t dst = 0; dst < DLB_SEED_POOL_SIZE; dst++)
      pool[dst] = mix(pool[dst], hashmix(word, &hash_const));
  }
}

void dlb_seed_generate(const uint32_t pool[DLB_SEED_POOL_SIZE], uint32_t *out, size_t n_words) {
  uint32_t hash_const = INIT_B;
  for (size_t i = 0; i < n_words; i++) {
    uint32_t v = pool[i % DLB_SEED_POOL_SIZE];
    v ^= hash_const;
    hash_const *= MULT_B;
    v *= hash_const;
    v ^= v >> XSHIFT;
    out[i] = v;
  }
}

void dlb_seed_generate64(const uint32_t pool[DLB_SEED_POOL_SIZE], uint64_t *out, size_t n) {
  uint32_t hash_const = INIT_B;
  for (size_t i = 0; i < 2 * n; i++) { /* generate_state(2n, uint32), viewed as uint64 */
    uint32_t v = pool[i % DLB_SEED_POOL_SIZE];
    v ^= hash_const;
    hash_const *= MULT_B;
    v *= hash_const;
    v ^= v >> XSHIFT;
    if (i % 2 == 0) out[i / 2] = v;
    else out[i / 2] |= (uint64_t)v << 32;
  }
}

size_t dlb_seed_words_of(uint64_t v, uint32_t out[2]) {
  out[0] = (uint32_t)v;
  out[1] = (uint32_t)(v >> 32);
  return v >> 32 ? 2 : 1;
}
