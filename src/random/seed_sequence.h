/* seed_sequence.h -- NumPy's SeedSequence (numpy/random/bit_generator.pyx),
 * bit for bit: entropy and spawn key as 32-bit words, hashed into a pool of
 * 4 words, from which generate_state draws the words that seed a bit
 * generator. */
#ifndef DLB_RANDOM_SEED_SEQUENCE_H
#define DLB_RANDOM_SEED_SEQUENCE_H

#include <stddef.h>
#include <stdint.h>

#define DLB_SEED_POOL_SIZE 4

/* The pool of SeedSequence(entropy, spawn_key): entropy is the run entropy
 * as NumPy coerces it (the little-endian 32-bit words of an integer, [0] for
 * 0, the words of each element of a sequence one after the other), spawn
 * the words of the spawn key. As NumPy (since 1.19), an entropy shorter than
 * the pool is padded with zero words when there is a spawn key. */
void dlb_seed_pool(const uint32_t *entropy, size_t n_entropy, const uint32_t *spawn, size_t n_spawn,
                   uint32_t pool[DLB_SEED_POOL_SIZE]);

/* generate_state(n_words, uint32): n_words words from the pool. */
void dlb_seed_generate(const uint32_t pool[DLB_SEED_POOL_SIZE], uint32_t *out, size_t n_words);

/* generate_state(n, uint64): 2n 32-bit words, paired low word first. */
void dlb_seed_generate64(const uint32_t pool[DLB_SEED_POOL_SIZE], uint64_t *out, size_t n);

/* The little-endian 32-bit words of the 64-bit integer v as NumPy's
 * _int_to_uint32_array gives them ([0] for 0, no high zero word): 1 or 2. */
size_t dlb_seed_words_of(uint64_t v, uint32_t out[2]);

#endif
