/* dist_blocks.c — the send sides of the blocks traded between the planner's processes. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "dist_blocks.h"
#include "dist_values.h"
#include "error.h"

/* One block's send side as it travels, in sections each 8-byte aligned: this head; the selected
 * columns (int32 [ncs]); the selected rows (rec_row [nrs]: row, edges, position of the first in
 * the whole matrix); their edges' columns (int32 [ne]), row after row; where the columns were
 * renumbered (dpos), the edges' dist_matrix dpos (int32 [ne]); and the values that are not 1.0
 * (most are, in graphs): their edges' indices among the ne (int32 [nx], increasing), then their
 * values (double [nx]). */
typedef struct rec_head {
  int32_t p, q, ncs, nrs;
  int64_t ne, nx;
  int32_t dpos, unused; /* dpos: 1 when the dpos section is there */
} rec_head;

typedef struct rec_row {
  int32_t row, len;
  int64_t g0;
} rec_row;

static int64_t pad8(int64_t x) { return (x + 7) & ~(int64_t)7; }

/* A record's sections, and its size. */
typedef struct rec_view {
  rec_head h;
  int32_t *scol;
  rec_row *rows;
  int32_t *cols, *dpos, *xi;
  double *xv;
  int64_t bytes;
} rec_view;

/* The offsets of h's sections in its record (scol, rows, cols, dpos, xi, xv), and its size. */
static int64_t rec_layout(const rec_head *h, int64_t off[6]) {
  off[0] = (int64_t)sizeof *h;
  off[1] = pad8(off[0] + 4 * (int64_t)h->ncs);
  off[2] = off[1] + (int64_t)sizeof(rec_row) * h->nrs;
  off[3] = off[2] + 4 * h->ne;
  off[4] = off[3] + (h->dpos ? 4 * h->ne : 0);
  off[5] = pad8(off[4] + 4 * h->nx);
  return off[5] + 8 * h->nx;
}

static rec_view view_at(char *x, const rec_head *h) {
  int64_t off[6];
  rec_view v = {.h = *h};
  v.bytes = rec_layout(h, off);
  v.scol = (int32_t *)(x + off[0]);
  v.rows = (rec_row *)(x + off[1]);
  v.cols = (int32_t *)(x + off[2]);
  v.dpos = h->dpos ? (int32_t *)(x + off[3]) : NULL;
  v.xi = (int32_t *)(x + off[4]);
  v.xv = (double *)(x + off[5]);
  return v;
}

/* The record at x (written by pack). */
static rec_view view(const char *x) {
  rec_head h;
  memcpy(&h, x, sizeof h);
  return view_at((char *)x, &h);
}

/* Reads a record's values in edge order: the next edge's value (1.0 unless listed). */
typedef struct rec_values {
  const rec_view *v;
  int64_t e, k; /* the next edge, the next listed value */
} rec_values;

static inline double next_value(rec_values *r) {
  const int64_t e = r->e++;
  return r->k < r->v->h.nx && r->v->xi[r->k] == e ? r->v->xv[r->k++] : 1.0;
}

int64_t dist_position(const dist_positions *X, int64_t t, int32_t q, int64_t *hint) {
  const int64_t d = X->dpos ? X->dpos[t] : 0; /* the renumbered columns' order -> the file's */
  if (t >= X->own_t0 && t < X->own_t1) return X->own_g0 + (t - X->own_t0) + d;
  /* the last of q's runs with t0 <= t: the one after the hint, as a rank's program reads its rows
   * in order, else bisected */
  int64_t lo = X->first[q], hi = X->first[q + 1];
  const int64_t h = *hint + 1;
  if (h >= lo && h < hi && X->run[h][0] <= t && (h + 1 == hi || X->run[h + 1][0] > t)) lo = h, hi = h + 1;
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (X->run[mid][0] <= t) lo = mid;
    else hi = mid;
  }
  *hint = lo;
  return X->run[lo][1] + (t - X->run[lo][0]) + d;
}

/* The position in A of the first edge of b's row i (A holds the row whole). */
static int64_t row_first_edge(const sc_csr *A, const sc_block *b, int32_t i) {
  const int32_t col = b->cols[b->Gj[b->Gp[i]]];
  int64_t lo = A->Ap[b->rows[i]], hi = A->Ap[b->rows[i] + 1];
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (A->Aj[mid] < col) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* b's record head; ones: every value of A is 1.0 (no row looked up in A: none is listed). */
static rec_head head_of(const sc_block *b, const dist_matrix *M, int ones) {
  const sc_csr *A = M->A;
  rec_head h = {.p = b->p, .q = b->q, .dpos = M->dpos != NULL};
  for (int32_t j = 0; j < b->nc; j++) h.ncs += b->csel[j];
  for (int32_t i = 0; i < b->nr; i++)
    if (b->rsel[i]) {
      const int64_t len = b->Gp[i + 1] - b->Gp[i];
      h.nrs++;
      h.ne += len;
      if (ones) continue;
      const int64_t t0 = row_first_edge(A, b, i);
      for (int64_t e = 0; e < len; e++) h.nx += sc_csr_val(A, t0 + e) != 1.0;
    }
  if (h.ne > INT32_MAX) h.ne = -1; /* refused by the caller: edges are indexed by int32 */
  return h;
}

/* Writes b's record at w; returns the byte after it. */
static char *pack(char *w, const sc_block *b, const dist_matrix *M, int ones) {
  const rec_head h = head_of(b, M, ones);
  memcpy(w, &h, sizeof h);
  rec_view v = view_at(w, &h);
  int32_t *sc = v.scol, *cols = v.cols, *dpos = v.dpos;
  rec_row *rr = v.rows;
  int64_t e = 0, k = 0;
  for (int32_t j = 0; j < b->nc; j++)
    if (b->csel[j]) *sc++ = b->cols[j];
  for (int32_t i = 0; i < b->nr; i++) {
    if (!b->rsel[i]) continue;
    const int64_t t0 = row_first_edge(M->A, b, i), len = b->Gp[i + 1] - b->Gp[i];
    *rr++ = (rec_row){b->rows[i], (int32_t)len, M->g_lo + (t0 - M->A->Ap[M->lo])}; /* own rows: one stretch */
    memcpy(cols, M->A->Aj + t0, (size_t)len * sizeof *cols);
    cols += len;
    if (dpos) memcpy(dpos, M->dpos + t0, (size_t)len * sizeof *dpos);
    if (dpos) dpos += len;
    for (int64_t x = 0; !ones && x < len; x++, e++) {
      const double val = sc_csr_val(M->A, t0 + x);
      if (val != 1.0) v.xi[k] = (int32_t)e, v.xv[k++] = val;
    }
  }
  return w + v.bytes;
}

static int cmp_i32(const void *a, const void *b) {
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* The distinct columns of a record (selected columns and its rows' edges) into u, their count
 * returned; sorted: u in increasing order, and at[c] (every entry -1 before) column c's index in u
 * (else u unordered and at[c] only not -1: a count). The caller resets at[u[0 .. count)] to -1
 * after the record. */
static int32_t union_cols(const rec_view *v, int32_t *u, int32_t *at, int sorted) {
  const rec_head *h = &v->h;
  const int32_t *sc = v->scol, *cols = v->cols;
  int32_t n = 0, lo = INT32_MAX, hi = -1;
  for (int64_t e = -(int64_t)h->ncs; e < h->ne; e++) { /* the selected columns, then the edges' */
    const int32_t c = e < 0 ? sc[h->ncs + e] : cols[e];
    if (at[c] >= 0) continue;
    at[c] = 0;
    u[n++] = c;
    lo = c < lo ? c : lo;
    hi = c > hi ? c : hi;
  }
  if (!sorted) return n;
  if ((double)n * 16 > (double)hi - lo) { /* dense in its range: read them off in order */
    n = 0;
    for (int32_t c = lo; c <= hi; c++)
      if (at[c] >= 0) u[n++] = c;
  } else {
    qsort(u, (size_t)n, sizeof *u, cmp_i32);
  }
  for (int32_t j = 0; j < n; j++) at[u[j]] = j;
  return n;
}

static void reset_cols(const int32_t *u, int32_t n, int32_t *at) {
  for (int32_t j = 0; j < n; j++) at[u[j]] = -1;
}

static int64_t block_bytes(const rec_head *h, int32_t nc) {
  return 4 * (2 * (int64_t)h->nrs + 1 + h->ne + nc) + (((int64_t)h->nrs + nc + 3) & ~(int64_t)3);
}

/* The blocks this process sends, by destination process: blocks (p, q) of another's q. */
typedef struct outbox {
  const sc_blocks *B;
  const dist_matrix *M;
  int ones; /* every value of M's A is 1.0 */
  int64_t *first, *blk; /* [P+1], [blocks sent]: d's are blk[first[d] .. first[d+1]), (p, q) order */
} outbox;

static void pack_for(void *arg, int d, char *buf) {
  const outbox *o = arg;
  for (int64_t x = o->first[d]; x < o->first[d + 1]; x++) buf = pack(buf, &o->B->b[o->blk[x]], o->M, o->ones);
}

/* Sends this process's records, one destination at a time; on return *recv holds the others' (n
 * bytes), in process order. */
static shiro_status send_records(const dist_comm *c, const int32_t *proc, const sc_blocks *B, const dist_matrix *M,
                                 void **recv, int64_t *n, shiro_error *err) {
  const int P = c->size;
  outbox o = {.B = B, .M = M, .ones = sc_csr_all_ones(M->A)};
  int64_t *sendn = calloc((size_t)P * 2, sizeof *sendn), *recvn = sendn ? sendn + P : NULL;
  o.first = calloc((size_t)P + 2, sizeof *o.first);
  o.blk = malloc((size_t)(B->n ? B->n : 1) * sizeof *o.blk);
  shiro_status st = sendn && o.first && o.blk ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory");
  for (int64_t t = 0; st == SHIRO_OK && t < B->n; t++) {
    const int d = proc[B->b[t].q];
    if (d == c->rank) continue;
    const rec_head h = head_of(&B->b[t], M, o.ones);
    int64_t off[6];
    if (h.ne < 0) st = shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "block (%d, %d) sends more than 2^31-1 entries", h.p, h.q);
    sendn[d] += rec_layout(&h, off);
    o.first[d + 2]++;
  }
  for (int d = 0; st == SHIRO_OK && d < P; d++) o.first[d + 2] += o.first[d + 1];
  for (int64_t t = 0; st == SHIRO_OK && t < B->n; t++) /* (p, q) order within each destination */
    if (proc[B->b[t].q] != c->rank) o.blk[o.first[proc[B->b[t].q] + 1]++] = t;
  st = dist_agree(c, st, err);
  if (st == SHIRO_OK) st = dist_exchange(c, sendn, pack_for, &o, recv, recvn, err);
  *n = 0;
  for (int s = 0; st == SHIRO_OK && s < P; s++) *n += recvn[s];
  free(o.first);
  free(o.blk);
  free(sendn);
  return st;
}

/* The blocks of the records r[0 .. n) (in (p, q) order), their arrays in one allocation per
 * destination p (arena[2p]); *nb of them in *out. */
static shiro_status make_blocks(const char *r, int64_t n, int32_t R, int64_t ncols, void **arena, sc_block **out,
                                int64_t *nb) {
  int64_t count = 0, widest = 0;
  for (const char *x = r; x < r + n; count++) {
    const rec_view v = view(x);
    if (v.h.ncs + v.h.ne > widest) widest = v.h.ncs + v.h.ne;
    x += v.bytes;
  }
  int32_t *u = malloc((size_t)(widest ? widest : 1) * sizeof *u), *at = malloc((size_t)(ncols ? ncols : 1) * sizeof *at);
  int64_t *bytes = calloc((size_t)R, sizeof *bytes);
  sc_block *b = calloc((size_t)(count ? count : 1), sizeof *b);
  if (!u || !at || !bytes || !b) goto nomem;
  memset(at, 0xff, (size_t)ncols * sizeof *at); /* -1: no column seen */
  for (const char *x = r; x < r + n;) {
    const rec_view v = view(x);
    const int32_t nc = union_cols(&v, u, at, 0); /* sizes: the count is enough */
    bytes[v.h.p] += block_bytes(&v.h, nc);
    reset_cols(u, nc, at);
    x += v.bytes;
  }
  for (int32_t p = 0; p < R; p++) { /* p has no blocks of its own here: its rows are elsewhere */
    if (!bytes[p]) continue;
    free(arena[2 * p]);
    if (!(arena[2 * p] = malloc((size_t)bytes[p]))) goto nomem;
  }
  for (int32_t p = 0; p < R; p++) bytes[p] = 0; /* now: bytes used of arena[2p] */
  int64_t k = 0;
  for (const char *x = r; x < r + n; k++) {
    const rec_view v = view(x);
    const rec_head h = v.h;
    x += v.bytes;
    const int32_t nc = union_cols(&v, u, at, 1);
    char *a = (char *)arena[2 * h.p] + bytes[h.p];
    bytes[h.p] += block_bytes(&h, nc);
    sc_block *k_ = &b[k];
    *k_ = (sc_block){.p = h.p, .q = h.q, .nr = h.nrs, .nc = nc, .ne = h.ne, .mu = -1};
    k_->rows = (int32_t *)a;
    k_->Gp = k_->rows + h.nrs;
    k_->Gj = k_->Gp + h.nrs + 1;
    k_->cols = k_->Gj + h.ne;
    k_->rsel = (uint8_t *)(k_->cols + nc);
    k_->csel = k_->rsel + h.nrs;
    memcpy(k_->cols, u, (size_t)nc * sizeof *u);
    memset(k_->rsel, 1, (size_t)h.nrs);
    memset(k_->csel, 0, (size_t)nc);
    for (int32_t j = 0; j < h.ncs; j++) k_->csel[at[v.scol[j]]] = 1;
    const int32_t *cols = v.cols;
    k_->Gp[0] = 0;
    for (int32_t i = 0; i < h.nrs; i++) {
      k_->rows[i] = v.rows[i].row;
      for (int32_t e = 0; e < v.rows[i].len; e++) k_->Gj[k_->Gp[i] + e] = at[*cols++];
      k_->Gp[i + 1] = k_->Gp[i] + v.rows[i].len;
    }
    block_count_entries(k_);
    reset_cols(u, nc, at);
  }
  free(u);
  free(at);
  free(bytes);
  *out = b;
  *nb = count;
  return SHIRO_OK;
nomem:
  free(u);
  free(at);
  free(bytes);
  free(b);
  return SHIRO_ERR_NOMEM;
}

/* B with the blocks f[0 .. nf) of other destinations merged in, (p, q) order kept: those of
 * destinations before first come first (the processes own increasing ranges of ranks). */
static shiro_status merge_blocks(sc_blocks *B, sc_block *f, int64_t nf, int32_t first) {
  const int32_t R = B->parts;
  sc_block *b = malloc((size_t)(B->n + nf ? B->n + nf : 1) * sizeof *b);
  if (!b) return SHIRO_ERR_NOMEM;
  int64_t before = 0;
  while (before < nf && f[before].p < first) before++;
  memcpy(b, f, (size_t)before * sizeof *b);
  memcpy(b + before, B->b, (size_t)B->n * sizeof *b);
  memcpy(b + before + B->n, f + before, (size_t)(nf - before) * sizeof *b);
  free(B->b);
  B->b = b;
  B->n += nf;
  memset(B->first_p, 0, ((size_t)R + 1) * sizeof *B->first_p);
  for (int64_t t = 0; t < B->n; t++) B->first_p[b[t].p + 1]++;
  for (int32_t p = 0; p < R; p++) B->first_p[p + 1] += B->first_p[p];
  return SHIRO_OK;
}

/* Turns row pointers that were used as fill cursors (Ap[i] at the end of row i) back into starts. */
static void unshift(int64_t *Ap, int64_t m) {
  for (int64_t i = m; i > 0; i--) Ap[i] = Ap[i - 1];
  Ap[0] = 0;
}

/* M->A with the records' rows added (their edges, in record order: per row, sources in column
 * order), in place: its own rows (all its entries, from position 0) move up as one stretch, the
 * others' edges fill in around them, and the values are compacted anew as they go (dist_values);
 * X: every entry's place in the whole matrix. On failure M->A is unchanged unless its column
 * array grew. */
static shiro_status add_rows(dist_matrix *M, int32_t R, const char *r, int64_t n, dist_positions *X) {
  sc_csr *A = M->A;
  const int64_t m = A->m, own = A->nnz; /* the own rows' entries: positions 0 .. own-1 */
  int64_t extra = 0;
  dist_values V = {0};
  X->first = calloc((size_t)R + 2, sizeof *X->first);
  if (!X->first) return SHIRO_ERR_NOMEM;
  for (const char *x = r; x < r + n;) { /* runs per source q */
    const rec_view v = view(x);
    extra += v.h.ne;
    X->first[v.h.q + 2] += v.h.nrs;
    x += v.bytes;
  }
  for (int32_t q = 0; q < R; q++) X->first[q + 2] += X->first[q + 1];
  X->n = X->first[R + 1];
  int32_t *Aj = realloc(A->Aj, (size_t)(own + extra ? own + extra : 1) * sizeof *Aj);
  if (!Aj) return SHIRO_ERR_NOMEM;
  A->Aj = Aj;
  if (M->dpos) { /* grows with A, its own rows' part moved as theirs */
    int32_t *dp = realloc(M->dpos, (size_t)(own + extra ? own + extra : 1) * sizeof *dp);
    if (!dp) return SHIRO_ERR_NOMEM;
    M->dpos = dp;
  }
  X->run = malloc((size_t)(X->n ? X->n : 1) * sizeof *X->run);
  if (!X->run || !dist_values_init(&V, own + extra)) {
    dist_values_free(&V);
    return SHIRO_ERR_NOMEM;
  }
  /* the new row pointers, in place: lengths (own rows'), plus the edges added, summed */
  int64_t *Ap = A->Ap;
  for (int64_t i = m; i > 0; i--) Ap[i] -= Ap[i - 1];
  for (const char *x = r; x < r + n;) {
    const rec_view v = view(x);
    for (int32_t i = 0; i < v.h.nrs; i++) Ap[v.rows[i].row + 1] += v.rows[i].len;
    x += v.bytes;
  }
  for (int64_t i = 0; i < m; i++) Ap[i + 1] += Ap[i];
  const int64_t shift = Ap[M->lo]; /* where the own rows go */
  memmove(Aj + shift, Aj, (size_t)own * sizeof *Aj);
  if (M->dpos) memmove(M->dpos + shift, M->dpos, (size_t)own * sizeof *M->dpos);
  X->dpos = M->dpos;
  X->own_t0 = shift;
  X->own_t1 = shift + own;
  X->own_g0 = M->g_lo;
  for (int pass = 1; pass <= 2; pass++) { /* 1: columns, runs, values marked; 2: values put */
    for (int64_t t = 0; t < own; t++) /* the old values, by their old positions */
      if (pass == 1) dist_values_mark(&V, shift + t, sc_csr_val(A, t));
      else dist_values_put(&V, shift + t, sc_csr_val(A, t));
    /* other rows (Ap their cursors, then unshifted): a row's runs come in column order (sources
     * ascending); q's runs, one per row its blocks (p, q) select, in row order (records in (p, q)
     * order, p's rows before p+1's) */
    for (const char *x = r; x < r + n;) {
      const rec_view v = view(x);
      const int32_t *cols = v.cols, *dpos = v.dpos;
      rec_values vals = {.v = &v};
      for (int32_t i = 0; i < v.h.nrs; i++) {
        const int64_t row = v.rows[i].row, t = Ap[row], len = v.rows[i].len;
        if (pass == 1) {
          memcpy(Aj + t, cols, (size_t)len * sizeof *cols);
          if (dpos && M->dpos) memcpy(M->dpos + t, dpos, (size_t)len * sizeof *dpos);
          X->run[X->first[v.h.q + 1]][0] = t, X->run[X->first[v.h.q + 1]++][1] = v.rows[i].g0;
        }
        for (int64_t e = 0; e < len; e++)
          if (pass == 1) dist_values_mark(&V, t + e, next_value(&vals));
          else dist_values_put(&V, t + e, next_value(&vals));
        Ap[row] += len;
        cols += len;
        if (dpos) dpos += len;
      }
      x += v.bytes;
    }
    for (int64_t i = M->lo; i < M->hi; i++) Ap[i] = i + 1 < M->hi ? Ap[i + 1] : shift + own; /* own rows: at their ends too */
    unshift(Ap, m);
    if (pass == 1 && !dist_values_ranks(&V)) {
      dist_values_free(&V);
      return SHIRO_ERR_NOMEM; /* A's rows are whole, its values still its own: valid, but grown */
    }
  }
  A->nnz = own + extra;
  dist_values_install(&V, A);
  return SHIRO_OK;
}

shiro_status dist_blocks_trade(const dist_comm *c, const int32_t *proc, int32_t first, dist_matrix *M, sc_blocks *B,
                               dist_positions *X, shiro_error *err) {
  memset(X, 0, sizeof *X);
  void *recv = NULL;
  int64_t n = 0, nf = 0;
  sc_block *f = NULL;
  shiro_status st = send_records(c, proc, B, M, &recv, &n, err);
  if (st != SHIRO_OK) return st;
  /* the rows (A grown in place), the blocks' arrays, then the records go before the list of
   * blocks is merged: the lower peak */
  st = add_rows(M, B->parts, recv, n, X);
  if (st == SHIRO_OK) st = make_blocks(recv, n, B->parts, M->k, B->arena, &f, &nf);
  free(recv);
  if (st == SHIRO_OK) st = merge_blocks(B, f, nf, first);
  free(f);
  if (st == SHIRO_ERR_NOMEM) st = shiro_fail(err, st, "out of memory adding the blocks other processes send");
  return dist_agree(c, st, err);
}
