/* dist_input.c — the matrix read in stripes of rows and moved to the processes that own them. */
#include <stdlib.h>
#include <string.h>

#include "csr_h5.h"
#include "mm_read.h"
#include "dist_input.h"
#include "dist_values.h"
#include "error.h"

/* x rounded up to a multiple of 8 (blocks of doubles stay aligned). */
static int64_t pad8(int64_t x) { return (x + 7) & ~(int64_t)7; }

/* The stripe of process r of P: rows m·r/P .. m·(r+1)/P - 1. */
static int64_t stripe_start(int64_t m, int r, int P) { return (int64_t)((__int128)m * r / P); }

/* The process whose stripe holds row i. */
static int stripe_of_row(int64_t m, int P, int64_t i) {
  int d = (int)((__int128)i * P / (m ? m : 1));
  while (d > 0 && stripe_start(m, d, P) > i) d--;
  while (d + 1 < P && stripe_start(m, d + 1, P) <= i) d++;
  return d;
}

/* csr-h5: the stripe's rows by hyperslab; k from the shape attribute or the largest over stripes. */
static shiro_status read_h5(const dist_comm *c, const char *path, dist_matrix *M, shiro_error *err) {
  shiro_status st = dist_agree(c, csr_h5_read_shape(path, &M->hdr, err), err);
  if (st != SHIRO_OK) return st;
  M->m = M->hdr.m;
  M->lo = stripe_start(M->m, c->rank, c->size);
  M->hi = stripe_start(M->m, c->rank + 1, c->size);
  st = dist_agree(c, csr_h5_read_rows(path, M->lo, M->hi, &M->A, NULL, err), err);
  if (st != SHIRO_OK) return st;
  if (MPI_Allreduce(&M->A->k, &M->k, 1, MPI_INT64_T, MPI_MAX, c->comm) != MPI_SUCCESS)
    return dist_agree(c, shiro_fail(err, SHIRO_ERR_MPI, "MPI_Allreduce of the columns failed"), err);
  M->A->k = M->k;
  M->hdr.k = M->k;
  return SHIRO_OK;
}

/* Matrix Market or an edge list: this process's byte range of the file, its triplets sent to the
 * stripes of their rows (in file order: parts, then processes, in order), each stripe built as
 * mm_read builds the whole matrix, so its rows are mm_read's bit for bit. On the way, a triplet
 * is its row in the stripe and its column (32 bits each) and, unless the file is a pattern, its
 * value: each destination's block holds its rows, then columns, then values. */
static shiro_status read_text(const dist_comm *c, const char *path, const mm_read_options *ro, dist_matrix *M,
                              shiro_error *err) {
  const int P = c->size;
  mm_coo_part part;
  shiro_status st = dist_agree(c, mm_read_part(path, ro, c->rank, P, &part, err), err);
  if (st != SHIRO_OK) {
    mm_coo_part_free(&part); /* read here, failed on another process (freed already where it failed) */
    return st;
  }
  int64_t sums[2] = {part.entries, part.lines}, maxs[2] = {part.max_i, part.max_j}, all[4];
  if (MPI_Allreduce(sums, all, 2, MPI_INT64_T, MPI_SUM, c->comm) != MPI_SUCCESS ||
      MPI_Allreduce(maxs, all + 2, 2, MPI_INT64_T, MPI_MAX, c->comm) != MPI_SUCCESS)
    st = shiro_fail(err, SHIRO_ERR_MPI, "MPI_Allreduce of the entry counts failed");
  if (st == SHIRO_OK) st = mm_read_parts_finish(path, ro, &part, all[0], all[1], all[2], all[3], err);
  if (st == SHIRO_OK && (part.h.m > INT32_MAX || part.h.k > INT32_MAX))
    st = shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "%s: more than 2^31-1 rows or columns are not planned by several "
                                                "processes yet",
                    path);
  st = dist_agree(c, st, err);
  const int vals = part.h.field != MM_PATTERN;
  const int64_t each = 8 + (vals ? 8 : 0); /* bytes a triplet travels in */
  int64_t *sendn = calloc((size_t)P * 4, sizeof *sendn), *cnt = sendn ? sendn + P : NULL, *at = sendn ? sendn + 2 * P : NULL,
          *recvn = sendn ? sendn + 3 * P : NULL;
  char *send = st == SHIRO_OK ? malloc((size_t)(part.n ? part.n * each : 1)) : NULL;
  void *recv = NULL;
  if (st == SHIRO_OK) {
    M->hdr = part.h;
    M->m = part.h.m;
    M->k = part.h.k;
    M->lo = stripe_start(M->m, c->rank, P);
    M->hi = stripe_start(M->m, c->rank + 1, P);
    st = dist_agree(c, sendn && send ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory", path), err);
  }
  if (st == SHIRO_OK) {
    for (int64_t t = 0; t < part.n; t++) cnt[stripe_of_row(M->m, P, part.Ti[t])]++;
    for (int64_t d = 0, off = 0; d < P; d++) sendn[d] = cnt[d] * each, at[d] = off, off += sendn[d];
    int64_t *placed = recvn; /* scratch until the exchange: the triplets of d placed so far */
    memset(placed, 0, (size_t)P * sizeof *placed);
    for (int64_t t = 0; t < part.n; t++) { /* file order kept within each destination */
      const int d = stripe_of_row(M->m, P, part.Ti[t]);
      char *blk = send + at[d];
      const int64_t x = placed[d]++;
      ((int32_t *)blk)[x] = (int32_t)(part.Ti[t] - stripe_start(M->m, d, P));
      ((int32_t *)blk)[cnt[d] + x] = (int32_t)part.Tj[t];
      if (vals) ((double *)(blk + 8 * cnt[d]))[x] = part.Tx[t];
    }
  }
  mm_coo_part_free(&part);
  if (st == SHIRO_OK) st = dist_alltoallv(c, send, sendn, &recv, recvn, err);
  free(send);
  sc_coo_seg *seg = st == SHIRO_OK ? calloc((size_t)P, sizeof *seg) : NULL;
  if (st == SHIRO_OK && !seg) st = shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory", path);
  if (st == SHIRO_OK) { /* one segment per source, in process order: the file's order */
    const char *r = recv;
    for (int s = 0; s < P; s++) {
      const int64_t n = recvn[s] / each;
      seg[s] = (sc_coo_seg){.n = n, .Ti32 = (const int32_t *)r, .Tj32 = (const int32_t *)r + n, .Tx = vals ? (const double *)(r + 8 * n) : NULL};
      r += recvn[s];
    }
    st = sc_csr_from_coo_segs(M->hi - M->lo, M->k, P, seg, SC_COO_AS_IS, 0, &M->A, err);
  }
  st = dist_agree(c, st, err);
  free(seg);
  free(recv);
  free(sendn);
  return st;
}

shiro_status dist_matrix_read(const dist_comm *c, const char *path, const char *format, const mm_read_options *ro,
                              dist_matrix *M, shiro_error *err) {
  memset(M, 0, sizeof *M);
  shiro_status st = !strcmp(format, "csr-h5") ? read_h5(c, path, M, err) : read_text(c, path, ro, M, err);
  if (st != SHIRO_OK) {
    dist_matrix_free(M);
    return st;
  }
  /* every row's length, on every process: the whole matrix's row pointers */
  const int P = c->size;
  int *cnt = malloc((size_t)P * 2 * sizeof *cnt), *dsp = cnt ? cnt + P : NULL;
  int64_t *len = malloc((size_t)(M->hi > M->lo ? M->hi - M->lo : 1) * sizeof *len);
  M->gAp = malloc(((size_t)M->m + 1) * sizeof *M->gAp);
  st = cnt && len && M->gAp ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory", path);
  for (int d = 0; cnt && d < P; d++) {
    if (stripe_start(M->m, d + 1, P) > INT32_MAX)
      st = shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "%s: more than 2^31-1 rows are not planned by several processes yet",
                      path);
    cnt[d] = (int)(stripe_start(M->m, d + 1, P) - stripe_start(M->m, d, P));
    dsp[d] = (int)stripe_start(M->m, d, P);
  }
  for (int64_t i = M->lo; len && i < M->hi; i++) len[i - M->lo] = M->A->Ap[i - M->lo + 1] - M->A->Ap[i - M->lo];
  st = dist_agree(c, st, err);
  if (st == SHIRO_OK && MPI_Allgatherv(len, (int)(M->hi - M->lo), MPI_INT64_T, M->gAp + 1, cnt, dsp, MPI_INT64_T, c->comm) != MPI_SUCCESS)
    st = dist_agree(c, shiro_fail(err, SHIRO_ERR_MPI, "MPI_Allgatherv of the row lengths failed"), err);
  if (st == SHIRO_OK) {
    M->gAp[0] = 0;
    for (int64_t i = 0; i < M->m; i++) M->gAp[i + 1] += M->gAp[i];
    M->nnz = M->gAp[M->m];
    sc_csr_compact_values(M->A); /* until its rows move: about 2 bits a value where most are 1.0 */
  }
  free(cnt);
  free(len);
  if (st != SHIRO_OK) dist_matrix_free(M);
  return st;
}

/* The overlap of rows a0 .. a1-1 and b0 .. b1-1: its length, *lo its first row. */
static int64_t overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1, int64_t *lo) {
  *lo = a0 > b0 ? a0 : b0;
  int64_t hi = a1 < b1 ? a1 : b1;
  return hi > *lo ? hi - *lo : 0;
}

/* The stripe's rows going to other processes (dist_exchange's packer). */
typedef struct rows_out {
  const dist_matrix *M; /* its stripe */
  const int64_t *at; /* [2P] each process's rows: at[2d] .. at[2d+1]-1 */
  const int32_t *dest; /* renumbered: [hi-lo] the process each stripe row goes to; NULL: in order */
} rows_out;

/* The stripe's rows in d's range (renumbered: the rows going to d, in the file's order): their
 * values, then their columns. */
static void pack_rows(void *arg, int d, char *w) {
  const rows_out *o = arg;
  const sc_csr *S = o->M->A;
  if (o->dest) {
    const int64_t n = o->M->hi - o->M->lo;
    int64_t e = 0;
    for (int64_t x = 0; x < n; x++)
      if (o->dest[x] == d)
        for (int64_t t = S->Ap[x]; t < S->Ap[x + 1]; t++) ((double *)w)[e++] = sc_csr_val(S, t);
    int32_t *cols = (int32_t *)(w + 8 * e);
    for (int64_t x = 0; x < n; x++)
      if (o->dest[x] == d) {
        memcpy(cols, S->Aj + S->Ap[x], (size_t)(S->Ap[x + 1] - S->Ap[x]) * sizeof *cols);
        cols += S->Ap[x + 1] - S->Ap[x];
      }
    return;
  }
  int64_t r0, n = overlap(o->M->lo, o->M->hi, o->at[2 * d], o->at[2 * d + 1], &r0);
  if (!n) return;
  const int64_t t0 = S->Ap[r0 - o->M->lo], e = S->Ap[r0 - o->M->lo + n] - t0;
  for (int64_t x = 0; x < e; x++) ((double *)w)[x] = sc_csr_val(S, t0 + x);
  memcpy(w + 8 * e, S->Aj + t0, (size_t)e * sizeof *S->Aj);
}

/* The process whose range (at: [2P], increasing, covering 0 .. m-1) holds row r. */
static int owner_of(const int64_t *at, int P, int64_t r) {
  int lo = 0, hi = P - 1; /* the first d whose range ends after r */
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (at[2 * mid + 1] > r) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/* Bytes this process sends to each process (sendn[P]); renumbered, *dest gets each stripe row's
 * process. */
static shiro_status plan_sends(const dist_matrix *M, const int64_t *at, int P, const dist_renumber *rn, int64_t *sendn,
                               int32_t **dest) {
  const int64_t *g = M->gAp;
  if (!rn) {
    for (int d = 0; d < P; d++) {
      int64_t r0, n = overlap(M->lo, M->hi, at[2 * d], at[2 * d + 1], &r0);
      sendn[d] = n ? pad8((g[r0 + n] - g[r0]) * 12) : 0;
    }
    return SHIRO_OK;
  }
  const int64_t n = M->hi - M->lo;
  if (!(*dest = malloc((size_t)(n ? n : 1) * sizeof **dest))) return SHIRO_ERR_NOMEM;
  memset(sendn, 0, (size_t)P * sizeof *sendn);
  for (int64_t x = 0; x < n; x++) {
    const int d = (*dest)[x] = owner_of(at, P, rn->newof[M->lo + x]);
    sendn[d] += g[M->lo + x + 1] - g[M->lo + x];
  }
  for (int d = 0; d < P; d++) sendn[d] = pad8(sendn[d] * 12);
  return SHIRO_OK;
}

/* One row's entries in the renumbered columns' order: sorted (new column << 32 | place in the
 * file's order), keys of len entries. */
static int cmp_u64(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static void sort_row(uint64_t *key, int64_t len) {
  if (len > 32) {
    qsort(key, (size_t)len, sizeof *key, cmp_u64);
    return;
  }
  for (int64_t i = 1; i < len; i++) { /* short rows, most of them: insertion */
    const uint64_t v = key[i];
    int64_t j = i;
    for (; j > 0 && key[j - 1] > v; j--) key[j] = key[j - 1];
    key[j] = v;
  }
}

/* Source s's rows that this process (rows lo .. hi-1) holds after the move, in the order s sent
 * them: calls place(row here, row of the file, length) for each; the entries of the rows before it
 * in s's block are the sum of the lengths before. */
typedef struct placing {
  sc_csr *A;
  dist_values *V;
  const int64_t *g; /* the file's row pointers */
  const dist_renumber *rn;
  int32_t *dpos;
  uint64_t *key; /* scratch: the longest row */
  int pass;
} placing;

/* Row ni (here) of the file's row i, len entries: its values v[0 .. len) and columns c[0 .. len)
 * in the file's order. */
static void place_row(placing *pl, int64_t ni, const double *v, const int32_t *c, int64_t len) {
  sc_csr *A = pl->A;
  const int64_t t0 = A->Ap[ni];
  if (!pl->rn || !pl->rn->columns) {
    if (pl->pass == 1) memcpy(A->Aj + t0, c, (size_t)len * sizeof *c);
    for (int64_t x = 0; x < len; x++)
      if (pl->pass == 1) dist_values_mark(pl->V, t0 + x, v[x]);
      else dist_values_put(pl->V, t0 + x, v[x]);
    return;
  }
  if (pl->pass == 1) {
    for (int64_t x = 0; x < len; x++) pl->key[x] = (uint64_t)pl->rn->newof[c[x]] << 32 | (uint64_t)x;
    sort_row(pl->key, len);
    for (int64_t x = 0; x < len; x++) {
      const int64_t from = (int64_t)(pl->key[x] & 0xffffffffu);
      A->Aj[t0 + x] = (int32_t)(pl->key[x] >> 32);
      pl->dpos[t0 + x] = (int32_t)(from - x);
      dist_values_mark(pl->V, t0 + x, v[from]);
    }
  } else {
    for (int64_t x = 0; x < len; x++) dist_values_put(pl->V, t0 + x, v[x + pl->dpos[t0 + x]]);
  }
}

/* The rows source s sends (r: its block, values then columns), placed (pass 1: columns and
 * values marked; pass 2: values put). */
static void place_block(placing *pl, const char *r, int s, int P, int64_t lo, int64_t hi) {
  const int64_t m = pl->A->m, *g = pl->g;
  const int64_t s0 = stripe_start(m, s, P), s1 = stripe_start(m, s + 1, P);
  if (!pl->rn) {
    int64_t r0, n = overlap(s0, s1, lo, hi, &r0);
    if (n) place_row(pl, r0, (const double *)r, (const int32_t *)(r + 8 * (g[r0 + n] - g[r0])), g[r0 + n] - g[r0]);
    return; /* one stretch of rows: placed as one "row" (the columns kept) */
  }
  int64_t e = 0;
  for (int64_t i = s0; i < s1; i++)
    if (pl->rn->newof[i] >= lo && pl->rn->newof[i] < hi) e += g[i + 1] - g[i];
  const double *v = (const double *)r;
  const int32_t *c = (const int32_t *)(r + 8 * e);
  for (int64_t i = s0; i < s1; i++) {
    const int64_t ni = pl->rn->newof[i], len = g[i + 1] - g[i];
    if (ni < lo || ni >= hi) continue;
    place_row(pl, ni, v, c, len);
    v += len;
    c += len;
  }
}

/* The held rows' pointers (rows lo .. hi-1, renumbered: the file's rows oldof[lo .. hi-1]) and
 * the entries of the rows before lo, *g_lo. The longest row held, returned. */
static int64_t row_pointers(sc_csr *A, const int64_t *g, int64_t lo, int64_t hi, const dist_renumber *rn,
                            int64_t *g_lo) {
  int64_t longest = 0;
  *g_lo = rn ? 0 : g[lo];
  for (int64_t i = 0; rn && i < lo; i++) *g_lo += g[rn->oldof[i] + 1] - g[rn->oldof[i]];
  for (int64_t i = lo; i < hi; i++) {
    const int64_t j = rn ? rn->oldof[i] : i, len = g[j + 1] - g[j];
    A->Ap[i + 1] = A->Ap[i] + len;
    longest = len > longest ? len : longest;
  }
  for (int64_t i = hi; i < A->m; i++) A->Ap[i + 1] = A->Ap[hi];
  A->nnz = A->Ap[A->m];
  return longest;
}

shiro_status dist_matrix_own(const dist_comm *c, dist_matrix *M, int64_t lo, int64_t hi, const dist_renumber *rn,
                             shiro_error *err) {
  const int P = c->size;
  const int64_t *g = M->gAp;
  int64_t *at = malloc(((size_t)P + 1) * 2 * sizeof *at), *sendn = malloc((size_t)P * 2 * sizeof *sendn);
  int32_t *dest = NULL;
  shiro_status st = at && sendn ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory");
  st = dist_agree(c, st, err);
  int64_t mine[2] = {lo, hi};
  if (st == SHIRO_OK && MPI_Allgather(mine, 2, MPI_INT64_T, at, 2, MPI_INT64_T, c->comm) != MPI_SUCCESS)
    st = dist_agree(c, shiro_fail(err, SHIRO_ERR_MPI, "MPI_Allgather of the row ranges failed"), err);
  if (st == SHIRO_OK && plan_sends(M, at, P, rn, sendn, &dest) != SHIRO_OK) st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory");
  st = dist_agree(c, st, err);
  void *recv = NULL;
  int64_t *recvn = sendn ? sendn + P : NULL;
  rows_out o = {.M = M, .at = at, .dest = dest};
  /* to each process d: the stripe's rows it holds next, values then columns */
  if (st == SHIRO_OK) st = dist_exchange(c, sendn, pack_rows, &o, &recv, recvn, err);
  free(dest);
  sc_csr_free(M->A); /* the stripe */
  M->A = NULL;
  sc_csr *A = NULL;
  dist_values V = {0};
  placing pl = {.g = g, .rn = rn, .V = &V};
  if (st == SHIRO_OK) {
    A = calloc(1, sizeof *A);
    int64_t longest = 0;
    if (A) {
      *A = (sc_csr){.m = M->m, .k = M->k};
      A->Ap = calloc((size_t)M->m + 1, sizeof *A->Ap);
      if (A->Ap) longest = row_pointers(A, g, lo, hi, rn, &M->g_lo);
      A->Aj = malloc((size_t)(A->nnz ? A->nnz : 1) * sizeof *A->Aj);
    }
    int ok = A && A->Ap && A->Aj && dist_values_init(&V, A->nnz);
    if (ok && rn && rn->columns) {
      pl.dpos = malloc((size_t)(A->nnz ? A->nnz : 1) * sizeof *pl.dpos);
      pl.key = malloc((size_t)(longest ? longest : 1) * sizeof *pl.key);
      ok = pl.dpos && pl.key;
    }
    st = dist_agree(c, ok ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory"), err);
  }
  if (st == SHIRO_OK) { /* the sources' blocks in process order; the values compacted as they come */
    pl.A = A;
    for (pl.pass = 1; pl.pass <= 2 && st == SHIRO_OK; pl.pass++) {
      const char *r = recv;
      for (int s = 0; s < P; s++) {
        place_block(&pl, r, s, P, lo, hi);
        r += recvn[s];
      }
      if (pl.pass == 1 && !dist_values_ranks(&V)) st = shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory");
    }
    st = dist_agree(c, st, err);
  }
  free(pl.key);
  if (st == SHIRO_OK) {
    dist_values_install(&V, A);
    M->A = A;
    M->lo = lo;
    M->hi = hi;
    M->dpos = pl.dpos;
    free(M->gAp); /* not needed again: the rows held are whole, their entries from g_lo on */
    M->gAp = NULL;
  } else {
    free(pl.dpos);
    dist_values_free(&V);
    sc_csr_free(A);
  }
  free(recv);
  free(at);
  free(sendn);
  return st;
}

void dist_matrix_free(dist_matrix *M) {
  sc_csr_free(M->A);
  free(M->dpos);
  free(M->gAp);
  memset(M, 0, sizeof *M);
}

shiro_status dist_stripes(const dist_comm *c, const dist_matrix *M, const char *what, int64_t *first, int *cnt, int *dsp,
                          shiro_error *err) {
  const int P = c->size;
  const int64_t lohi[2] = {M->lo, M->hi};
  int64_t *span = malloc((size_t)P * 2 * sizeof *span);
  shiro_status st = dist_agree(c, span ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory", what), err);
  if (st == SHIRO_OK && MPI_Allgather(lohi, 2, MPI_INT64_T, span, 2, MPI_INT64_T, c->comm) != MPI_SUCCESS)
    st = shiro_fail(err, SHIRO_ERR_MPI, "%s: MPI_Allgather of the stripes failed", what);
  for (int q = 0; st == SHIRO_OK && q < P; q++) {
    first[q] = span[2 * q];
    cnt[q] = (int)(span[2 * q + 1] - span[2 * q]);
    dsp[q] = (int)span[2 * q];
    if (span[2 * q] != (q ? span[2 * q - 1] : 0) || span[2 * q + 1] < span[2 * q] || (q == P - 1 && span[2 * q + 1] != M->m))
      st = shiro_fail(err, SHIRO_ERR_INTERNAL, "%s: process %d holds rows %lld .. %lld, not the next stripe", what, q,
                      (long long)span[2 * q], (long long)span[2 * q + 1] - 1);
  }
  if (st == SHIRO_OK) first[P] = M->m;
  free(span);
  return dist_agree(c, st, err);
}
