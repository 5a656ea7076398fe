/* shiro_status.h — the status and error vocabulary of every shiro call (public).
 *
 * One status enum for the whole project, its names, and the caller-owned
 * error message. The public header shiro.h includes it; the plan compiler and
 * the plan format use it too, without MPI, so it includes nothing but the
 * C library. */
#ifndef SHIRO_STATUS_H
#define SHIRO_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SHIRO_API __attribute__((visibility("default")))
#define SHIRO_MUST_CHECK __attribute__((warn_unused_result))
#else
#define SHIRO_API
#define SHIRO_MUST_CHECK
#endif

/* Status of every shiro call. 0 is success; the others say which kind of thing failed. */
typedef enum shiro_status {
  SHIRO_OK = 0,
  SHIRO_ERR_ARG = 1, /* a bad argument (NULL, out of range, wrong N or type) */
  SHIRO_ERR_NOMEM = 2, /* an allocation failed */
  SHIRO_ERR_IO = 3, /* a file could not be opened, read, mapped or written */
  SHIRO_ERR_PARSE = 4, /* malformed input (Matrix Market file, command line) */
  SHIRO_ERR_FORMAT = 5, /* a plan file that is damaged or not a shiro plan */
  SHIRO_ERR_VERSION = 6, /* a plan file of an unsupported format version */
  SHIRO_ERR_MISMATCH = 7, /* plan and launch disagree (rank count, rank, matrix) */
  SHIRO_ERR_MPI = 8, /* an MPI call failed */
  SHIRO_ERR_UNSUPPORTED = 9, /* a valid request this build cannot serve (e.g. no CUDA) */
  SHIRO_ERR_CUDA = 10, /* a CUDA, cuSPARSE or NCCL call failed */
  SHIRO_ERR_INTERNAL = 11 /* a broken internal invariant: a bug, please report */
} shiro_status;

/* Caller-owned error message, filled on failure ("file:line: expected X, found Y"). */
typedef struct shiro_error {
  char message[512];
} shiro_error;

/* Returns a static, human-readable name of a status. Local, thread-safe. */
SHIRO_API const char *shiro_strerror(shiro_status s);

#ifdef __cplusplus
}
#endif
#endif /* SHIRO_STATUS_H */
