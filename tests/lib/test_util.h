/* test_util.h — tiny helpers for the C tests: a failure counter and a check macro. */
#ifndef SHIRO_TEST_UTIL_H
#define SHIRO_TEST_UTIL_H

#include <stdio.h>

static int test_failures;

/* Records and prints a failed expectation, and goes on. */
#define EXPECT(cond, ...)                                                 \
  do {                                                                    \
    if (!(cond)) {                                                        \
      test_failures++;                                                    \
      fprintf(stderr, "%s:%d: expected %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                       \
      fprintf(stderr, "\n");                                              \
    }                                                                     \
  } while (0)

#endif
