/* permute.c — permutations of a matrix's rows and columns (metis: symmetric; parts: rows and columns apart). */
#include <stdlib.h>

#include "csr.h"
#include "error.h"
#include "permute.h"

shiro_status sc_csr_permute(const sc_csr *A, const int64_t *newof, sc_csr **out, shiro_error *err) {
  return sc_csr_permute2(A, newof, newof, out, err);
}

shiro_status sc_csr_permute2(const sc_csr *A, const int64_t *rnew, const int64_t *cnew, sc_csr **out, shiro_error *err) {
  *out = NULL;
  int64_t *Ti = malloc((size_t)(A->nnz ? A->nnz : 1) * sizeof *Ti), *Tj = malloc((size_t)(A->nnz ? A->nnz : 1) * sizeof *Tj);
  shiro_status st = (Ti && Tj) ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "permute: out of memory");
  for (int64_t i = 0; st == SHIRO_OK && i < A->m; i++)
    for (int64_t t = A->Ap[i]; t < A->Ap[i + 1]; t++) {
      Ti[t] = rnew ? rnew[i] : i;
      Tj[t] = cnew ? cnew[A->Aj[t]] : A->Aj[t];
    }
  if (st == SHIRO_OK) st = sc_csr_from_coo(A->m, A->k, A->nnz, Ti, Tj, A->Ax, SC_COO_AS_IS, out, err);
  free(Ti);
  free(Tj);
  return st;
}

int64_t *sc_inverse_permutation(const int64_t *newof, int64_t n) {
  int64_t *oldof = malloc((size_t)(n ? n : 1) * sizeof *oldof);
  if (oldof)
    for (int64_t i = 0; i < n; i++) oldof[newof[i]] = i;
  return oldof;
}
