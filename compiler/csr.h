/* csr.h — the sparse matrix of the compiler: compressed sparse rows, 64-bit. */
#ifndef SHIRO_CSR_H
#define SHIRO_CSR_H

#include <stdint.h>

typedef struct sc_csr {
  int64_t m;    /* rows */
  int64_t k;    /* columns */
  int64_t nnz;  /* stored entries (after symmetric expansion and summing duplicates) */
  int64_t *Ap;  /* [m+1] row pointers, Ap[0] = 0, Ap[m] = nnz */
  int64_t *Aj;  /* [nnz] column indices in [0,k), strictly increasing within a row */
  double *Ax;   /* [nnz] values (1.0 for pattern matrices) */
} sc_csr;

/* Frees A and its arrays; NULL is a no-op. */
void sc_csr_free(sc_csr *A);

#endif
