/* cuda_check.h — check macros of the CUDA backend, in NCCL's NCCLCHECKGOTO style.
 *
 * Every CUDA runtime, cuSPARSE, NCCL and MPI failure becomes a shiro_status
 * and a message "FILE:LINE: CALL failed: REASON" in a caller-owned buffer of
 * CUDA_MSG_LEN bytes (a context's error[] or a shiro_error's message[]).
 * Each macro jumps to the enclosing function's `done:` label with the status
 * stored in `st`; nothing is printed, nothing exits. */
#ifndef SHIRO_CUDA_CHECK_H
#define SHIRO_CUDA_CHECK_H

#include <cuda_runtime_api.h>
#include <cusparse.h>
#include <mpi.h>
#include <nccl.h>

#include "error.h" /* SHIRO_CHECK_GOTO for shiro_status expressions */
#include "shiro.h"

#define CUDA_MSG_LEN 512

/* Formats "file:line: call failed: why" into msg (CUDA_MSG_LEN bytes; NULL:
 * nothing is written) and returns st. Local; never fails. */
shiro_status cuda_note(char *msg, shiro_status st, const char *call, const char *why, const char *file, int line);

/* Formats a free-form message ("file:line: ...") into msg and returns st. */
shiro_status cuda_notef(char *msg, shiro_status st, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Returns the message of an MPI error code (static storage per thread not
 * needed: the text is copied into buf of len bytes, which is returned). */
const char *cuda_mpi_reason(int rc, char *buf, int len);

#define CUDACHECKGOTO(expr, st, msg)                                                              \
  do {                                                                                            \
    cudaError_t e_ = (expr);                                                                      \
    if (e_ != cudaSuccess) {                                                                      \
      (st) = cuda_note((msg), SHIRO_ERR_CUDA, #expr, cudaGetErrorString(e_), __FILE__, __LINE__); \
      goto done;                                                                                  \
    }                                                                                             \
  } while (0)

#define CUSPARSECHECKGOTO(expr, st, msg)                                                              \
  do {                                                                                                \
    cusparseStatus_t e_ = (expr);                                                                     \
    if (e_ != CUSPARSE_STATUS_SUCCESS) {                                                              \
      (st) = cuda_note((msg), SHIRO_ERR_CUDA, #expr, cusparseGetErrorString(e_), __FILE__, __LINE__); \
      goto done;                                                                                      \
    }                                                                                                 \
  } while (0)

#define NCCLCHECKGOTO(expr, st, msg)                                                              \
  do {                                                                                            \
    ncclResult_t e_ = (expr);                                                                     \
    if (e_ != ncclSuccess) {                                                                      \
      (st) = cuda_note((msg), SHIRO_ERR_CUDA, #expr, ncclGetErrorString(e_), __FILE__, __LINE__); \
      goto done;                                                                                  \
    }                                                                                             \
  } while (0)

#define MPICHECKGOTO(expr, st, msg)                                                                    \
  do {                                                                                                 \
    int e_ = (expr);                                                                                   \
    if (e_ != MPI_SUCCESS) {                                                                           \
      char r_[MPI_MAX_ERROR_STRING];                                                                   \
      (st) = cuda_note((msg), SHIRO_ERR_MPI, #expr, cuda_mpi_reason(e_, r_, (int)sizeof r_), __FILE__, \
                       __LINE__);                                                                      \
      goto done;                                                                                       \
    }                                                                                                  \
  } while (0)

#endif
