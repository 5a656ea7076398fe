/* cuda_check.c — the messages of the CUDA backend's check macros. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cuda_check.h"

/* The file name without its directories: messages stay short and build-independent. */
static const char *base_name(const char *file) {
  const char *slash = strrchr(file, '/');
  return slash ? slash + 1 : file;
}

shiro_status cuda_note(char *msg, shiro_status st, const char *call, const char *why, const char *file, int line) {
  if (msg) snprintf(msg, CUDA_MSG_LEN, "%s:%d: %s failed: %s", base_name(file), line, call, why ? why : "?");
  return st;
}

shiro_status cuda_notef(char *msg, shiro_status st, const char *file, int line, const char *fmt, ...) {
  if (!msg) return st;
  int k = snprintf(msg, CUDA_MSG_LEN, "%s:%d: ", base_name(file), line);
  if (k < 0 || k >= CUDA_MSG_LEN) return st;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg + k, (size_t)(CUDA_MSG_LEN - k), fmt, ap);
  va_end(ap);
  return st;
}

const char *cuda_mpi_reason(int rc, char *buf, int len) {
  int n = 0;
  if (len <= 0) return "";
  buf[0] = 0;
  if (MPI_Error_string(rc, buf, &n) != MPI_SUCCESS) snprintf(buf, (size_t)len, "MPI error %d", rc);
  return buf;
}
