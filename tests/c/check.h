/* check.h -- the few assertions the C tests need (no test framework is in
 * the project's allowed dependencies). Each test file is one executable run
 * by ctest; CHECK records a failure and goes on, check_done() sets the exit. */
#ifndef DLB_TESTS_CHECK_H
#define DLB_TESTS_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    check_count++;                                                                                 \
    if (!(cond)) {                                                                                 \
      check_failures++;                                                                            \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                     \
    }                                                                                              \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                                         \
  do {                                                                                             \
    long long check_a_ = (long long)(a), check_b_ = (long long)(b);                                \
    check_count++;                                                                                 \
    if (check_a_ != check_b_) {                                                                    \
      check_failures++;                                                                            \
      fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b,        \
              check_a_, check_b_);                                                                 \
    }                                                                                              \
  } while (0)

#define CHECK_EQ_STR(a, b)                                                                         \
  do {                                                                                             \
    const char *check_a_ = (a), *check_b_ = (b);                                                   \
    check_count++;                                                                                 \
    if (strcmp(check_a_, check_b_) != 0) {                                                         \
      check_failures++;                                                                            \
      fprintf(stderr, "%s:%d: %s == %s failed:\n  got      \"%s\"\n  expected \"%s\"\n", __FILE__, \
              __LINE__, #a, #b, check_a_, check_b_);                                               \
    }                                                                                              \
  } while (0)

/* Prints the tally and returns the process exit status. */
static inline int check_done(const char *name) {
  printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
  return check_failures == 0 && check_count > 0 ? 0 : 1;
}

#endif
