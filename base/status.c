/* status.c — status names and the error-message helper. */
#include <stdarg.h>
#include <stdio.h>

#include "error.h"

const char *shiro_strerror(shiro_status s) {
  switch (s) {
    case SHIRO_OK: return "success";
    case SHIRO_ERR_ARG: return "invalid argument";
    case SHIRO_ERR_NOMEM: return "out of memory";
    case SHIRO_ERR_IO: return "I/O error";
    case SHIRO_ERR_PARSE: return "malformed input";
    case SHIRO_ERR_FORMAT: return "damaged or foreign plan file";
    case SHIRO_ERR_VERSION: return "unsupported plan format version";
    case SHIRO_ERR_MISMATCH: return "plan does not match the launch";
    case SHIRO_ERR_MPI: return "MPI error";
    case SHIRO_ERR_UNSUPPORTED: return "not supported by this build";
    case SHIRO_ERR_CUDA: return "CUDA error";
    case SHIRO_ERR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

shiro_status shiro_fail(shiro_error *err, shiro_status s, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
  }
  return s;
}
