/* cuda_ops.h — the compute ops of a rank's program, prepared once on the device.
 *
 * cuda_ops_setup uploads every MUL op's operator to one device arena (row
 * pointers rebased to 0, columns, values in the context's type, destination
 * rows) and decides how each op runs:
 *   - CUDA_OP_SPARSE: values and a contiguous destination (the local product,
 *     products with received B rows): cuSPARSE SpMM, CSR × row-major dense,
 *     with the algorithm cuda_ops_spmm_alg picks for N (beta = 1 when the op
 *     accumulates, 0 when it assigns); descriptors and a workspace per op.
 *     Measured on the H200: its results may differ in the last bits from
 *     one call to the next (random values; runtime/cuda/README.md);
 *   - CUDA_OP_KERNEL: everything else (gathers of B rows, partial C rows
 *     with row lists, sums of rows), and any op cuSPARSE declines:
 *     cuda_mul_launch (cuda_kernels.h), the same bits on every call.
 * cuda_ops_run then enqueues one op, allocating nothing. */
#ifndef SHIRO_CUDA_OPS_H
#define SHIRO_CUDA_OPS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>
#include <cusparse.h>

#include "backend.h"
#include "program.h"
#include "shiro.h"

/* The cuSPARSE algorithm of CUDA_OP_SPARSE ops for N values per row: CSR_ALG3 below N = 64,
 * CSR_ALG2 from N = 64. Measured on the H200 (R-MAT scale 22, whole-matrix SpMM): ALG2 takes
 * 0.76x / 0.52x ALG3's time at N = 64 / 128 in float, 0.68x / 0.65x in double; at N = 32
 * ALG3 is 1.33x faster in float and even in double. */
static inline cusparseSpMMAlg_t cuda_ops_spmm_alg(int64_t n) { return n >= 64 ? CUSPARSE_SPMM_CSR_ALG2 : CUSPARSE_SPMM_CSR_ALG3; }

enum { CUDA_OP_NONE = 0,
       CUDA_OP_SPARSE = 1,
       CUDA_OP_KERNEL = 2 };

typedef struct cuda_op {
  int how; /* CUDA_OP_* (NONE: not a MUL op, or a MUL op without rows) */
  int dst_buf, src_buf; /* PROG_BUF_* */
  int64_t dst_off, src_off; /* first rows addressed in dst / src */
  int64_t nrows, nnz, span; /* rows and entries of the operator; rows of src it may address */
  int accum; /* 1: dst += M·src */
  int32_t *ptr; /* device [nrows+1] row pointers from 0 (NULL: one entry per row, entry i = row i) */
  int32_t *col; /* device [nnz] source rows relative to src_off */
  void *val; /* device [nnz] values of the context's type (NULL: all ones) */
  int32_t *rows; /* device [nrows] destination rows relative to dst_off (NULL: contiguous) */
  /* CUDA_OP_SPARSE only */
  cusparseSpMatDescr_t A; /* nrows × span CSR over ptr/col/val */
  cusparseDnMatDescr_t X, Y; /* src (span × N) and dst (nrows × N), row-major; values set per call */
  void *work; /* device workspace of cusparseSpMM (kept: it holds the preprocessing) */
  int prepared; /* 1 once cusparseSpMM_preprocess ran (at the op's first run) */
  int declined; /* cusparseStatus_t with which cuSPARSE declined the op (how is then KERNEL), or 0 */
  double alpha_d, beta_d; /* scalars for double contexts */
  float alpha_f, beta_f; /* scalars for float contexts */
} cuda_op;

typedef struct cuda_ops {
  int64_t nops; /* = the program's nops; op[o] for every o */
  cuda_op *op; /* [nops] (host) */
  void *arena; /* device memory of every operator (owned) */
  size_t arena_bytes; /* its size */
  int is_double; /* value type */
  int64_t n; /* values per row */
  cusparseHandle_t sparse; /* borrowed: must outlive the ops */
} cuda_ops;

/* Prepares every compute op of ops[0 .. nops-1] (a program decoded by the
 * interpreter: rt_op, values already in the op's type, double or float when
 * !is_double) for N = n values per row: one host staging copy,
 * one upload, cuSPARSE descriptors and workspaces. buf_rows gives the rows
 * of B, C, S and R (PROG_BUF_* order). use_sparse = 0 sends every op to
 * the own kernels (tests, comparisons). The current device is used. On
 * failure msg (CUDA_MSG_LEN bytes) says why; call cuda_ops_destroy either
 * way. The program must have passed plan_check_rank (or be derived from one). */
shiro_status cuda_ops_setup(cuda_ops *o, const rt_op *ops, int64_t nops, int is_double, int64_t n, const int64_t buf_rows[PROG_NBUF],
                            cusparseHandle_t sparse, int use_sparse, char *msg);

/* Uploads the values of every MULTIPLY op of ops[0 .. nops-1] again (the
 * same program cuda_ops_setup prepared, whose values changed: its ops' val
 * in the context's type), straight into the op's place in the arena, which
 * its cuSPARSE descriptor points at; the next run of a cuSPARSE op
 * preprocesses again. Synchronous (cudaMemcpy). The current device is used. */
shiro_status cuda_ops_values(cuda_ops *o, const rt_op *ops, int64_t nops, char *msg);

/* Enqueues op `idx` (a compute op) on stream with the buffers bufs[PROG_BUF_*]
 * (device pointers of B, C, S, R) holding rows of `width` values (1 .. the
 * setup's n; a call of width n, shiro_spmm_n). Allocates nothing; the first
 * run of a cuSPARSE op also runs its preprocessing. At a width other than
 * the setup's n every op runs on the own kernel (the cuSPARSE descriptors
 * and workspaces are made for n): not yet run on a device. */
shiro_status cuda_ops_run(cuda_ops *o, int64_t idx, void *const bufs[PROG_NBUF], int64_t width, cudaStream_t stream,
                          char *msg);

/* "cusparse", "kernel" or "-" for op idx: how it runs (now: a cuSPARSE op can still
 * fall back to the kernel at its first run, if cuSPARSE declines it then). */
const char *cuda_ops_how(const cuda_ops *o, int64_t idx);

/* Frees what cuda_ops_setup made (also after a partial setup) and zeroes o. */
void cuda_ops_destroy(cuda_ops *o);

#endif
