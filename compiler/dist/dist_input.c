/* dist_input.c — the matrix read in stripes of rows and moved to the processes that own them. */
#include <stdlib.h>
#include <string.h>

#include "csr_h5.h"
#include "dist_input.h"
#include "error.h"

/* A new rows-row CSR with room for nnz entries (values as an array). */
static sc_csr *csr_new(int64_t rows, int64_t k, int64_t nnz) {
  sc_csr *A = calloc(1, sizeof *A);
  if (!A) return NULL;
  A->m = rows;
  A->k = k;
  A->nnz = nnz;
  A->Ap = calloc((size_t)rows + 1, sizeof *A->Ap);
  A->Aj = malloc((size_t)(nnz ? nnz : 1) * sizeof *A->Aj);
  A->Ax = malloc((size_t)(nnz ? nnz : 1) * sizeof *A->Ax);
  if (!A->Ap || !A->Aj || !A->Ax) {
    sc_csr_free(A);
    return NULL;
  }
  return A;
}

/* Rows lo .. hi-1 of W as a stripe (values as an array). */
static sc_csr *stripe_of(const sc_csr *W, int64_t lo, int64_t hi) {
  const int64_t t0 = W->Ap[lo], n = W->Ap[hi] - t0;
  sc_csr *S = csr_new(hi - lo, W->k, n);
  if (!S) return NULL;
  for (int64_t i = lo; i <= hi; i++) S->Ap[i - lo] = W->Ap[i] - t0;
  memcpy(S->Aj, W->Aj + t0, (size_t)n * sizeof *S->Aj);
  for (int64_t t = 0; t < n; t++) S->Ax[t] = sc_csr_val(W, t0 + t);
  return S;
}

static shiro_status read_whole(const char *path, const char *format, const mm_read_options *ro, sc_csr **W,
                               mm_header *hdr, shiro_error *err) {
  if (!strcmp(format, "csr-h5")) return csr_h5_read(path, W, hdr, err);
  return mm_read_ex(path, ro, W, hdr, err);
}

shiro_status dist_matrix_read(const dist_comm *c, const char *path, const char *format, const mm_read_options *ro,
                              dist_matrix *M, shiro_error *err) {
  memset(M, 0, sizeof *M);
  sc_csr *W = NULL;
  shiro_status st = dist_agree(c, read_whole(path, format, ro, &W, &M->hdr, err), err);
  if (st != SHIRO_OK) return st;
  M->m = W->m;
  M->k = W->k;
  M->nnz = W->nnz;
  M->lo = (int64_t)((__int128)W->m * c->rank / c->size);
  M->hi = (int64_t)((__int128)W->m * (c->rank + 1) / c->size);
  M->A = stripe_of(W, M->lo, M->hi);
  M->gAp = malloc(((size_t)W->m + 1) * sizeof *M->gAp);
  if (M->gAp) memcpy(M->gAp, W->Ap, ((size_t)W->m + 1) * sizeof *M->gAp);
  sc_csr_free(W);
  st = M->A && M->gAp ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory", path);
  return dist_agree(c, st, err);
}

/* The overlap of rows a0 .. a1-1 and b0 .. b1-1: its length, *lo its first row. */
static int64_t overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1, int64_t *lo) {
  *lo = a0 > b0 ? a0 : b0;
  int64_t hi = a1 < b1 ? a1 : b1;
  return hi > *lo ? hi - *lo : 0;
}

shiro_status dist_matrix_own(const dist_comm *c, dist_matrix *M, int64_t lo, int64_t hi, shiro_error *err) {
  const int P = c->size;
  const int64_t *g = M->gAp;
  int64_t *at = malloc(((size_t)P + 1) * 2 * sizeof *at), *sendn = malloc((size_t)P * 2 * sizeof *sendn);
  shiro_status st = at && sendn ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory");
  st = dist_agree(c, st, err);
  int64_t mine[2] = {lo, hi};
  if (st == SHIRO_OK && MPI_Allgather(mine, 2, MPI_INT64_T, at, 2, MPI_INT64_T, c->comm) != MPI_SUCCESS)
    st = dist_agree(c, shiro_fail(err, SHIRO_ERR_MPI, "MPI_Allgather of the row ranges failed"), err);
  char *send = NULL;
  void *recv = NULL;
  int64_t *recvn = sendn ? sendn + P : NULL, bytes = 0;
  const sc_csr *S = M->A; /* the stripe: rows M->lo .. M->hi-1 */
  if (st == SHIRO_OK) { /* to each process d: the stripe's rows in d's range, columns then values */
    for (int d = 0; d < P; d++) {
      int64_t r0, n = overlap(M->lo, M->hi, at[2 * d], at[2 * d + 1], &r0);
      sendn[d] = n ? (g[r0 + n] - g[r0]) * (int64_t)(sizeof *S->Aj + sizeof *S->Ax) : 0;
      bytes += sendn[d];
    }
    send = malloc(bytes ? (size_t)bytes : 1);
    st = dist_agree(c, send ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory"), err);
  }
  if (st == SHIRO_OK) {
    char *w = send;
    for (int d = 0; d < P; d++) {
      int64_t r0, n = overlap(M->lo, M->hi, at[2 * d], at[2 * d + 1], &r0);
      if (!n) continue;
      const int64_t t0 = S->Ap[r0 - M->lo], e = S->Ap[r0 - M->lo + n] - t0;
      memcpy(w, S->Aj + t0, (size_t)e * sizeof *S->Aj);
      w += e * (int64_t)sizeof *S->Aj;
      memcpy(w, S->Ax + t0, (size_t)e * sizeof *S->Ax);
      w += e * (int64_t)sizeof *S->Ax;
    }
    st = dist_alltoallv(c, send, sendn, &recv, recvn, err);
  }
  free(send);
  sc_csr *A = NULL;
  if (st == SHIRO_OK) {
    A = csr_new(M->m, M->k, g[hi] - g[lo]);
    st = dist_agree(c, A ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory"), err);
  }
  if (st == SHIRO_OK) { /* the sources' stripes come in row order: their blocks in process order */
    for (int64_t i = lo; i < hi; i++) A->Ap[i + 1] = g[i + 1] - g[lo];
    for (int64_t i = hi; i < M->m; i++) A->Ap[i + 1] = A->Ap[hi];
    const char *r = recv;
    for (int s = 0; s < P; s++) {
      int64_t r0, n = overlap((int64_t)((__int128)M->m * s / P), (int64_t)((__int128)M->m * (s + 1) / P), lo, hi, &r0);
      if (!n) continue;
      const int64_t t0 = g[r0] - g[lo], e = g[r0 + n] - g[r0];
      memcpy(A->Aj + t0, r, (size_t)e * sizeof *A->Aj);
      r += e * (int64_t)sizeof *A->Aj;
      memcpy(A->Ax + t0, r, (size_t)e * sizeof *A->Ax);
      r += e * (int64_t)sizeof *A->Ax;
    }
    sc_csr_free(M->A);
    M->A = A;
    M->lo = lo;
    M->hi = hi;
  }
  free(recv);
  free(at);
  free(sendn);
  return st;
}

void dist_matrix_free(dist_matrix *M) {
  sc_csr_free(M->A);
  free(M->gAp);
  memset(M, 0, sizeof *M);
}
