/* test_random.c -- the core of dl.random (src/random/): SeedSequence and
 * PCG64 against values NumPy 1.24 printed (np.random.SeedSequence(...)
 * .generate_state, bit_generator.state, random_raw), and the fast paths
 * against the plain ones they must equal draw for draw. spec/random_spec.lua
 * compares every method with NumPy itself, in the same run. */
#include <math.h>
#include <stdlib.h>
#include "check.h"
#include "random/distributions.h"
#include "random/pcg64.h"
#include "random/seed_sequence.h"
#include "random/ziggurat_tables.h"

/* g seeded as np.random.default_rng(seed) for a seed of 64 bits or fewer. */
static void seed64(dlb_pcg64 *g, uint64_t seed) {
  uint32_t words[2], pool[DLB_SEED_POOL_SIZE];
  uint64_t state[4];
  size_t n = dlb_seed_words_of(seed, words);
  dlb_seed_pool(words, n, NULL, 0, pool);
  dlb_seed_generate64(pool, state, 4);
  dlb_pcg64_seed(g, state);
}

/* SeedSequence(12345).generate_state(4, uint64) and (3, uint32). */
static void test_seed_sequence(void) {
  static const uint64_t want64[4] = {UINT64_C(0xb5ae6482a03d837c), UINT64_C(0xbbe2996ffa1f7a2f),
                                     UINT64_C(0x64e39a9f37158f94), UINT64_C(0x3ebb0f96a013fd73)};
  static const uint32_t want32[3] = {0xa03d837cu, 0xb5ae6482u, 0xfa1f7a2fu};
  uint32_t words[2], pool[DLB_SEED_POOL_SIZE], got32[3];
  uint64_t got64[4];
  size_t n = dlb_seed_words_of(12345, words);
  CHECK_EQ_INT(n, 1);
  dlb_seed_pool(words, n, NULL, 0, pool);
  dlb_seed_generate64(pool, got64, 4);
  dlb_seed_generate(pool, got32, 3);
  for (int k = 0; k < 4; k++) CHECK(got64[k] == want64[k]);
  for (int k = 0; k < 3; k++) CHECK(got32[k] == want32[k]);
}

/* SeedSequence(0x0123456789abcdef0123456789abcdef, spawn_key=(1,)): four
 * entropy words, then a spawn key (no zero padding: the entropy fills the pool). */
static void test_spawn_key(void) {
  static const uint32_t entropy[4] = {0x89abcdefu, 0x01234567u, 0x89abcdefu, 0x01234567u};
  static const uint32_t spawn[1] = {1};
  static const uint64_t want[4] = {UINT64_C(0x1be583326f304857), UINT64_C(0xbf67dac2abe5177b),
                                   UINT64_C(0xe5f6da41b5c41023), UINT64_C(0x6433fe16b480922e)};
  uint32_t pool[DLB_SEED_POOL_SIZE];
  uint64_t got[4];
  dlb_seed_pool(entropy, 4, spawn, 1, pool);
  dlb_seed_generate64(pool, got, 4);
  for (int k = 0; k < 4; k++) CHECK(got[k] == want[k]);
}

/* default_rng(0): its state and its first raw 64-bit outputs. */
static void test_pcg64(void) {
  dlb_pcg64 g;
  seed64(&g, 0);
  CHECK((uint64_t)(g.state >> 64) == UINT64_C(0x1aa1b5345996452d));
  CHECK((uint64_t)g.state == UINT64_C(0x09585eb7a69561e3));
  CHECK((uint64_t)(g.inc >> 64) == UINT64_C(0x418ddadb3af71a82));
  CHECK((uint64_t)g.inc == UINT64_C(0x588133bc447873a9));
  CHECK(dlb_pcg64_next64(&g) == UINT64_C(0xa30febcfd9c2825f));
  CHECK(dlb_pcg64_next64(&g) == UINT64_C(0x4510bdf882d9d721));
  CHECK(dlb_pcg64_next64(&g) == UINT64_C(0x0a7d3da94ecde8b8));
}

/* 32-bit draws: the low half first, the high half kept; a 64-bit draw
 * between them neither uses nor clears it. */
static void test_next32(void) {
  dlb_pcg64 a, b;
  uint64_t first, second;
  seed64(&a, 1);
  b = a;
  first = dlb_pcg64_next64(&b);
  second = dlb_pcg64_next64(&b);
  CHECK(dlb_pcg64_next32(&a) == (uint32_t)first);
  CHECK(a.has_uint32 == 1);
  CHECK(dlb_pcg64_next64(&a) == second);
  CHECK(dlb_pcg64_next32(&a) == (uint32_t)(first >> 32));
  CHECK(a.has_uint32 == 0);
}

/* A jump of k steps is k steps. */
static void test_jump(void) {
  dlb_pcg64 g;
  dlb_u128 mult, add, state;
  seed64(&g, 7);
  state = g.state;
  dlb_pcg64_jump_constants(37, g.inc, &mult, &add);
  for (int k = 0; k < 37; k++) dlb_pcg64_next64(&g);
  CHECK(g.state == state * mult + add);
}

/* The interleaved float64 fill equals one draw at a time, for every length
 * around its lane boundaries, and leaves the same state. */
static void test_random_fill(void) {
  double fast[1000], slow[1000];
  for (int n = 0; n <= 1000; n += n < 40 ? 1 : 241) {
    dlb_pcg64 a, b;
    int same = 1;
    seed64(&a, 12345);
    b = a;
    dlb_random_fill(&a, fast, n);
    for (int i = 0; i < n; i++) slow[i] = dlb_pcg64_next_double(&b);
    for (int i = 0; i < n; i++) same = same && fast[i] == slow[i];
    CHECK(same);
    CHECK(a.state == b.state);
  }
}

/* The ziggurat tables: their shape as Marsaglia and Tsang define it. */
static void test_ziggurat_tables(void) {
  int decreasing = 1;
  CHECK(dlb_zig_ki_double[1] == 0 && dlb_zig_ki_float[1] == 0);
  CHECK(dlb_zig_fi_double[0] == 1.0 && dlb_zig_fi_float[0] == 1.0f);
  CHECK(fabs(dlb_zig_wi_double[255] * 4503599627370496.0 - DLB_ZIG_NOR_R) < 1e-12);
  for (int i = 1; i < 256; i++)
    decreasing = decreasing && dlb_zig_fi_double[i] < dlb_zig_fi_double[i - 1];
  CHECK(decreasing);
}

/* Bounded draws stay in their ranges; random_interval(0) draws nothing. */
static void test_bounds(void) {
  dlb_pcg64 g, before;
  uint64_t u64[500];
  uint8_t u8[500];
  dlb_bits bits = {0, 0};
  int inside = 1;
  seed64(&g, 3);
  dlb_bounded64_fill(&g, 10, 6, u64, 500);
  for (int i = 0; i < 500; i++) inside = inside && u64[i] >= 10 && u64[i] <= 16;
  dlb_bounded8_fill(&g, 200, 50, u8, 500, &bits);
  for (int i = 0; i < 500; i++) inside = inside && u8[i] >= 200 && u8[i] <= 250;
  CHECK(inside);
  before = g;
  CHECK(dlb_random_interval(&g, 0) == 0);
  CHECK(g.state == before.state);
  CHECK(dlb_random_interval(&g, UINT64_C(1) << 40) <= UINT64_C(1) << 40);
}

int main(void) {
  test_seed_sequence();
  test_spawn_key();
  test_pcg64();
  test_next32();
  test_jump();
  test_random_fill();
  test_ziggurat_tables();
  test_bounds();
  return check_done("test_random");
}
