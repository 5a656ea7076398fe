/* cuda_ops.c — upload of a program's operators and the execution of one compute op. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "cuda_kernels.h"
#include "cuda_ops.h"

#define ARENA_ALIGN 256 /* every array of the arena starts on a 256-byte boundary (cudaMalloc's own) */

static size_t align_up(size_t x) { return (x + (ARENA_ALIGN - 1)) & ~(size_t)(ARENA_ALIGN - 1); }

/* Where one op's arrays go in the arena (byte offsets; SIZE_MAX: absent). */
typedef struct op_layout {
  size_t ptr, col, val, rows;
} op_layout;

/* Decides how compute op r runs and lays out its arrays from *end on. Returns 0 if
 * an operator is too large for 32-bit row pointers. */
static int plan_op(const rt_op *r, const int64_t buf_rows[PROG_NBUF], int use_sparse, size_t esz, cuda_op *op, op_layout *lay,
                   size_t *end) {
  const int64_t nrows = r->nrows, *ptr = r->ptr;
  op->dst_buf = r->dst_buf;
  op->src_buf = r->src_buf;
  op->dst_off = r->dst_off;
  op->src_off = r->src_off;
  op->nrows = nrows;
  op->accum = r->accum;
  op->nnz = nrows > 0 ? ptr[nrows] - ptr[0] : 0;
  op->span = buf_rows[op->src_buf] - op->src_off;
  lay->ptr = lay->col = lay->val = lay->rows = SIZE_MAX;
  if (nrows <= 0) return 1; /* nothing to compute: how stays NONE */
  if (op->nnz > INT32_MAX || nrows >= INT32_MAX) return 0;
  const int has_val = r->kind == RT_MULTIPLY, listed = r->rows != NULL;
  op->how = (use_sparse && has_val && !listed && op->nnz > 0 && op->span > 0) ? CUDA_OP_SPARSE : CUDA_OP_KERNEL;
  /* cuSPARSE gets canonical CSR only (columns strictly increasing in each row): its summation order is
   * its own either way, but duplicates and unsorted rows are outside what its CSR routines document. */
  for (int64_t i = 0; op->how == CUDA_OP_SPARSE && i < nrows; i++)
    for (int64_t e = ptr[i] + 1; e < ptr[i + 1]; e++)
      if (r->col[e] <= r->col[e - 1]) {
        op->how = CUDA_OP_KERNEL;
        break;
      }
  int one_per_row = op->nnz == nrows;
  for (int64_t i = 0; one_per_row && i < nrows; i++) one_per_row = ptr[i + 1] - ptr[i] == 1;
  if (op->how == CUDA_OP_SPARSE || !one_per_row) {
    lay->ptr = *end;
    *end = align_up(*end + (size_t)(nrows + 1) * 4);
  }
  if (op->nnz > 0) {
    lay->col = *end;
    *end = align_up(*end + (size_t)op->nnz * 4);
  }
  if (has_val && op->nnz > 0) {
    lay->val = *end;
    *end = align_up(*end + (size_t)op->nnz * esz);
  }
  if (listed) {
    lay->rows = *end;
    *end = align_up(*end + (size_t)nrows * 4);
  }
  return 1;
}

/* Writes op r's arrays into the host staging copy of the arena (its values are of the context's type). */
static void stage_op(const rt_op *r, size_t esz, const op_layout *lay, char *host) {
  const int64_t nrows = r->nrows, *ptr = r->ptr, e0 = ptr[0];
  const int64_t nnz = ptr[nrows] - e0;
  if (lay->ptr != SIZE_MAX) {
    int32_t *p = (int32_t *)(host + lay->ptr);
    for (int64_t i = 0; i <= nrows; i++) p[i] = (int32_t)(ptr[i] - e0);
  }
  if (lay->col != SIZE_MAX) memcpy(host + lay->col, r->col + e0, (size_t)nnz * sizeof(int32_t));
  if (lay->val != SIZE_MAX) memcpy(host + lay->val, (const char *)r->val + (size_t)e0 * esz, (size_t)nnz * esz);
  if (lay->rows != SIZE_MAX) memcpy(host + lay->rows, r->rows, (size_t)nrows * sizeof(int32_t));
}

/* 1 for the statuses with which cuSPARSE declines a shape or an algorithm
 * (the op then runs on the own kernel, which takes every shape). */
static int declined(cusparseStatus_t cs) { return cs == CUSPARSE_STATUS_NOT_SUPPORTED || cs == CUSPARSE_STATUS_INVALID_VALUE; }

/* Turns a cuSPARSE op into an own-kernel op (its ptr/col/val stay: the kernel reads them). */
static void to_kernel(cuda_op *op, cusparseStatus_t why) {
  if (op->A) cusparseDestroySpMat(op->A);
  if (op->X) cusparseDestroyDnMat(op->X);
  if (op->Y) cusparseDestroyDnMat(op->Y);
  if (op->work) cudaFree(op->work);
  op->A = NULL;
  op->X = op->Y = NULL;
  op->work = NULL;
  op->how = CUDA_OP_KERNEL;
  op->declined = (int)why;
}

/* Descriptors and workspace of a cuSPARSE op. If cuSPARSE declines the
 * shape, the op falls back to the own kernel. */
static shiro_status setup_sparse(cuda_ops *o, cuda_op *op, char *msg) {
  shiro_status st = SHIRO_OK;
  const cudaDataType t = o->is_double ? CUDA_R_64F : CUDA_R_32F;
  const void *alpha = o->is_double ? (const void *)&op->alpha_d : (const void *)&op->alpha_f;
  const void *beta = o->is_double ? (const void *)&op->beta_d : (const void *)&op->beta_f;
  size_t bytes = 0;
  op->alpha_d = 1.0;
  op->alpha_f = 1.0f;
  op->beta_d = op->accum ? 1.0 : 0.0;
  op->beta_f = op->accum ? 1.0f : 0.0f;
  /* The dense descriptors point at the arena until a call binds B, C, S or R: nothing reads them before. */
  CUSPARSECHECKGOTO(cusparseCreateCsr(&op->A, op->nrows, op->span, op->nnz, op->ptr, op->col, op->val, CUSPARSE_INDEX_32I,
                                      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, t),
                    st, msg);
  CUSPARSECHECKGOTO(cusparseCreateDnMat(&op->X, op->span, o->n, o->n, o->arena, t, CUSPARSE_ORDER_ROW), st, msg);
  CUSPARSECHECKGOTO(cusparseCreateDnMat(&op->Y, op->nrows, o->n, o->n, o->arena, t, CUSPARSE_ORDER_ROW), st, msg);
  cusparseStatus_t cs = cusparseSpMM_bufferSize(o->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                alpha, op->A, op->X, beta, op->Y, t, cuda_ops_spmm_alg(o->n), &bytes);
  if (declined(cs)) { /* a shape the algorithm does not take */
    to_kernel(op, cs);
    return SHIRO_OK;
  }
  CUSPARSECHECKGOTO(cs, st, msg);
  CUDACHECKGOTO(cudaMalloc(&op->work, bytes ? bytes : 16), st, msg);
done:
  return st;
}

shiro_status cuda_ops_setup(cuda_ops *o, const rt_op *ops, int64_t nops, int is_double, int64_t n, const int64_t buf_rows[PROG_NBUF],
                            cusparseHandle_t sparse, int use_sparse, char *msg) {
  shiro_status st = SHIRO_OK;
  op_layout *lay = NULL;
  char *host = NULL;
  const size_t esz = is_double ? sizeof(double) : sizeof(float);
  size_t end = 0;
  memset(o, 0, sizeof *o);
  o->is_double = is_double;
  o->n = n;
  o->sparse = sparse;
  o->nops = nops;
  o->op = calloc((size_t)(nops ? nops : 1), sizeof *o->op);
  lay = calloc((size_t)(nops ? nops : 1), sizeof *lay);
  if (!o->op || !lay) {
    st = cuda_notef(msg, SHIRO_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
    goto done;
  }
  for (int64_t i = 0; i < nops; i++) {
    if (ops[i].kind == RT_START || ops[i].kind == RT_WAIT) continue;
    if (!plan_op(&ops[i], buf_rows, use_sparse && sparse != NULL, esz, &o->op[i], &lay[i], &end)) {
      st = cuda_notef(msg, SHIRO_ERR_UNSUPPORTED, __FILE__, __LINE__,
                      "op %lld has %lld rows and %lld entries: the CUDA backend takes at most 2^31-1 of each per op",
                      (long long)i, (long long)o->op[i].nrows, (long long)o->op[i].nnz);
      goto done;
    }
  }
  o->arena_bytes = end;
  if (end > 0) {
    host = malloc(end);
    if (!host) {
      st = cuda_notef(msg, SHIRO_ERR_NOMEM, __FILE__, __LINE__, "out of memory (%zu bytes of operators)", end);
      goto done;
    }
    for (int64_t i = 0; i < nops; i++)
      if (o->op[i].how != CUDA_OP_NONE) stage_op(&ops[i], esz, &lay[i], host);
    CUDACHECKGOTO(cudaMalloc(&o->arena, end), st, msg);
    CUDACHECKGOTO(cudaMemcpy(o->arena, host, end, cudaMemcpyHostToDevice), st, msg);
  }
  for (int64_t i = 0; i < nops; i++) {
    cuda_op *op = &o->op[i];
    if (op->how == CUDA_OP_NONE) continue;
    char *base = o->arena;
    op->ptr = lay[i].ptr != SIZE_MAX ? (int32_t *)(base + lay[i].ptr) : NULL;
    op->col = lay[i].col != SIZE_MAX ? (int32_t *)(base + lay[i].col) : NULL;
    op->val = lay[i].val != SIZE_MAX ? (void *)(base + lay[i].val) : NULL;
    op->rows = lay[i].rows != SIZE_MAX ? (int32_t *)(base + lay[i].rows) : NULL;
    if (op->how == CUDA_OP_SPARSE) SHIRO_CHECK_GOTO(setup_sparse(o, op, msg), st);
  }
done:
  free(host);
  free(lay);
  return st;
}

shiro_status cuda_ops_values(cuda_ops *o, const rt_op *ops, int64_t nops, char *msg) {
  shiro_status st = SHIRO_OK;
  const size_t esz = o->is_double ? sizeof(double) : sizeof(float);
  if (nops != o->nops) return cuda_notef(msg, SHIRO_ERR_INTERNAL, __FILE__, __LINE__, "%lld ops, %lld prepared", (long long)nops,
                                         (long long)o->nops);
  for (int64_t i = 0; i < nops; i++) {
    cuda_op *op = &o->op[i];
    if (op->how == CUDA_OP_NONE || !op->val || ops[i].kind != RT_MULTIPLY || op->nnz == 0) continue;
    const char *host = (const char *)ops[i].val + (size_t)ops[i].ptr[0] * esz; /* stage_op's slice */
    CUDACHECKGOTO(cudaMemcpy(op->val, host, (size_t)op->nnz * esz, cudaMemcpyHostToDevice), st, msg);
    /* op->prepared stays: cuSPARSE's preprocessing analyses the pattern, which is unchanged
     * (SpMM_preprocess serves "the same sparsity pattern" over many calls). */
  }
done:
  return st;
}

/* Row `row` of buffer b of rows of `width` values of this op's type, or NULL when the buffer is absent. */
static void *row_addr(const cuda_ops *o, void *b, int64_t row, int64_t width) {
  const size_t esz = o->is_double ? sizeof(double) : sizeof(float);
  return b ? (char *)b + (size_t)row * (size_t)width * esz : NULL;
}

shiro_status cuda_ops_run(cuda_ops *o, int64_t idx, void *const bufs[PROG_NBUF], int64_t width, cudaStream_t stream,
                          char *msg) {
  shiro_status st = SHIRO_OK;
  if (idx < 0 || idx >= o->nops) return cuda_notef(msg, SHIRO_ERR_INTERNAL, __FILE__, __LINE__, "op %lld out of range", (long long)idx);
  cuda_op *op = &o->op[idx];
  if (op->how == CUDA_OP_NONE) return SHIRO_OK;
  if (width < 1 || width > o->n)
    return cuda_notef(msg, SHIRO_ERR_INTERNAL, __FILE__, __LINE__, "width %lld of %lld", (long long)width, (long long)o->n);
  void *dst = row_addr(o, bufs[op->dst_buf], op->dst_off, width);
  const void *src = row_addr(o, bufs[op->src_buf], op->src_off, width);
  if (!dst || (!src && op->nnz > 0))
    return cuda_notef(msg, SHIRO_ERR_ARG, __FILE__, __LINE__, "op %lld: a buffer it uses is NULL", (long long)idx);
  if (op->how == CUDA_OP_SPARSE && width == o->n) { /* other widths: the own kernel below */
    const cudaDataType t = o->is_double ? CUDA_R_64F : CUDA_R_32F;
    const void *alpha = o->is_double ? (const void *)&op->alpha_d : (const void *)&op->alpha_f;
    const void *beta = o->is_double ? (const void *)&op->beta_d : (const void *)&op->beta_f;
    const cusparseOperation_t nt = CUSPARSE_OPERATION_NON_TRANSPOSE;
    CUSPARSECHECKGOTO(cusparseSetStream(o->sparse, stream), st, msg);
    CUSPARSECHECKGOTO(cusparseDnMatSetValues(op->X, (void *)(uintptr_t)src), st, msg); /* read only */
    CUSPARSECHECKGOTO(cusparseDnMatSetValues(op->Y, dst), st, msg);
    /* The first run also preprocesses. cuSPARSE may still decline the op: at its first run the op
     * moves to the own kernel for good; later (other buffer addresses) that call runs on it. */
    const cusparseSpMMAlg_t alg = cuda_ops_spmm_alg(o->n);
    cusparseStatus_t cs = CUSPARSE_STATUS_SUCCESS;
    if (!op->prepared && alg == CUSPARSE_SPMM_CSR_ALG3) /* preprocessing serves ALG1 and ALG3 only */
      cs = cusparseSpMM_preprocess(o->sparse, nt, nt, alpha, op->A, op->X, beta, op->Y, t, alg, op->work);
    if (cs == CUSPARSE_STATUS_SUCCESS)
      cs = cusparseSpMM(o->sparse, nt, nt, alpha, op->A, op->X, beta, op->Y, t, alg, op->work);
    if (cs == CUSPARSE_STATUS_SUCCESS) {
      op->prepared = 1;
      return SHIRO_OK;
    }
    if (!declined(cs)) CUSPARSECHECKGOTO(cs, st, msg);
    if (!op->prepared) {
      CUDACHECKGOTO(cudaStreamSynchronize(stream), st, msg); /* nothing of the declined op still runs */
      to_kernel(op, cs);
    }
  }
  {
    cuda_mul m = {dst, src, op->ptr, op->col, op->val, op->rows, op->nrows, width, o->is_double, op->accum};
    CUDACHECKGOTO(cuda_mul_launch(&m, stream), st, msg);
  }
done:
  return st;
}

const char *cuda_ops_how(const cuda_ops *o, int64_t idx) {
  if (idx < 0 || idx >= o->nops) return "-";
  switch (o->op[idx].how) {
    case CUDA_OP_SPARSE: return "cusparse";
    case CUDA_OP_KERNEL: return "kernel";
  }
  return "-";
}

void cuda_ops_destroy(cuda_ops *o) {
  if (!o) return;
  for (int64_t i = 0; o->op && i < o->nops; i++) {
    cuda_op *op = &o->op[i];
    if (op->A) cusparseDestroySpMat(op->A);
    if (op->X) cusparseDestroyDnMat(op->X);
    if (op->Y) cusparseDestroyDnMat(op->Y);
    if (op->work) cudaFree(op->work);
  }
  if (o->arena) cudaFree(o->arena);
  free(o->op);
  memset(o, 0, sizeof *o);
}
