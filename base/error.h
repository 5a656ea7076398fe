/* error.h — internal helpers to fill a shiro_error (shared by every part; not installed). */
#ifndef SHIRO_ERROR_H
#define SHIRO_ERROR_H

#include "shiro_status.h"

/* Formats a message into *err (if err is not NULL) and returns status `s`,
 * so that failures read `return shiro_fail(err, SHIRO_ERR_PARSE, "...", ...);`. */
shiro_status shiro_fail(shiro_error *err, shiro_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Evaluates a shiro_status expression; on failure stores it in `st` and jumps to done. */
#define SHIRO_CHECK_GOTO(expr, st)   \
  do {                               \
    (st) = (expr);                   \
    if ((st) != SHIRO_OK) goto done; \
  } while (0)

#endif
