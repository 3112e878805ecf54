/* test_block_cache.c -- the cpu backend's reuse of released blocks: a zeroed
 * allocation never gets a used block, a plain one of about the same size
 * does, sizes far apart do not share, large blocks are not kept, and
 * releases from other threads are safe (run under TSan in CI). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include "core/array.h"
#include "core/buffer.h"
#define FIXTURES_CPU
#include "fixtures.h"

static dlb_buffer *buffer(size_t nbytes, int zeroed) {
  dlb_buffer *b = NULL;
  CHECK_EQ_INT(dlb_buffer_allocate(cpu, 0, nbytes, zeroed, &b, &err), DLB_OK);
  return b;
}

static void test_zeroed_never_reuses_dirty_memory(void) {
  const size_t n = (size_t)1 << 20;
  for (int round = 0; round < 4; round++) {
    dlb_buffer *b = buffer(n, 0);
    memset(b->host, 0xAB, n);
    dlb_buffer_release(b);
    b = buffer(n, 1);
    size_t nonzero = 0;
    for (size_t k = 0; k < n; k++) nonzero += ((unsigned char *)b->host)[k] != 0;
    CHECK_EQ_INT(nonzero, 0);
    dlb_buffer_release(b);
  }
}

static void test_plain_allocations_reuse(void) {
  const size_t n = (size_t)3 << 20;
  dlb_buffer *b = buffer(n, 0);
  void *first = b->host;
  dlb_buffer_release(b);
  b = buffer(n - 4096, 0); /* about the same size: the same block */
  CHECK(b->host == first);
  CHECK(((uintptr_t)b->host & 63) == 0); /* still 64-byte aligned */
  dlb_buffer_release(b);
  b = buffer(n / 4, 0); /* much smaller: not that block */
  CHECK(b->host != first);
  dlb_buffer_release(b);
}

static void test_large_blocks_are_not_kept(void) {
  const size_t n = (size_t)64 << 20;
  dlb_buffer *b = buffer(n, 0), *c;
  memset(b->host, 1, 4096);
  dlb_buffer_release(b);
  c = buffer(n, 0);
  CHECK(c->host != NULL);
  dlb_buffer_release(c);
}

static void *release_on_thread(void *arg) {
  dlb_buffer **list = arg;
  for (int k = 0; k < 32; k++) dlb_buffer_release(list[k]);
  return NULL;
}

static void test_releases_from_threads(void) {
  dlb_buffer *lists[2][32];
  pthread_t threads[2];
  for (int t = 0; t < 2; t++)
    for (int k = 0; k < 32; k++) lists[t][k] = buffer(((size_t)256 << 10) * (size_t)(1 + k % 5), 0);
  for (int t = 0; t < 2; t++) pthread_create(&threads[t], NULL, release_on_thread, lists[t]);
  for (int k = 0; k < 64; k++) dlb_buffer_release(buffer((size_t)300 << 10, k & 1)); /* meanwhile */
  for (int t = 0; t < 2; t++) pthread_join(threads[t], NULL);
}

int main(void) {
  if (!cpu_open()) return 1;
  test_zeroed_never_reuses_dirty_memory();
  test_plain_allocations_reuse();
  test_large_blocks_are_not_kept();
  test_releases_from_threads();
  cpu_close();
  return check_done("test_block_cache");
}
