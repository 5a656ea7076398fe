/* plan_verify.c — symbolic execution of every rank's program, and the
 * certificates of optimality.
 *
 * Each row of B is a symbol e_j. Executing the programs of all ranks on
 * symbols (messages delivered stage by stage, as the runtime does) turns
 * every C row into a list of terms (j, coefficient, multiplicity, rank that
 * multiplied it). The plan is right if C row i holds every nonzero (i, j) of
 * A exactly once, multiplied exactly once (by the owner of row i: column
 * side, or by the owner of column j: row side). Where each nonzero was
 * multiplied gives the cover each problem really uses; a stored matching of
 * the same size in the same problem proves that cover minimum (König). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digest.h"
#include "error.h"
#include "permute.h"
#include "plan_build.h"
#include "plan_file.h"
#include "plan_verify.h"

typedef struct term {
  int64_t j;
  double coef;
  int32_t mult, at;
} term;
typedef struct trow {
  term *t;
  int64_t n, cap;
} trow;

typedef struct vstate {
  const prog_meta *meta;
  const prog_rank *pr;
  int32_t R;
  trow *buf[PROG_NBUF]; /* per rank: rows of C, S, R (B is implicit) — buf[k][r] is an array of rows */
  trow **bufs; /* [R * PROG_NBUF] */
  shiro_error *err;
  int64_t messages;
  int input; /* the buffer whose rows are the symbols: PROG_BUF_B (C = A·B), PROG_BUF_C (X = Aᵀ·Y) */
} vstate;

typedef struct pending {
  int32_t src, dst;
  int64_t stage, kind, count;
  trow *rows;
} pending;

static shiro_status nomem(shiro_error *err) { return shiro_fail(err, SHIRO_ERR_NOMEM, "verify: out of memory"); }

static int push(trow *r, term t) {
  if (r->n == r->cap) {
    int64_t cap = r->cap ? 2 * r->cap : 4;
    term *p = realloc(r->t, (size_t)cap * sizeof *p);
    if (!p) return 0;
    r->t = p;
    r->cap = cap;
  }
  r->t[r->n++] = t;
  return 1;
}

static int64_t nrows_of(const prog_rank *p, int b) {
  return b == PROG_BUF_C ? p->c_rows : b == PROG_BUF_S ? p->s_rows
      : b == PROG_BUF_R                                ? p->r_rows
                                                       : p->b_rows;
}

static trow *rows_of(vstate *v, int32_t r, int64_t b) { return v->bufs[(int64_t)r * PROG_NBUF + b]; }

/* Global id of row `row` of rank r's input buffer (the symbol it holds). */
static int64_t symbol(const vstate *v, const prog_rank *p, int64_t row) {
  return (v->input == PROG_BUF_B ? p->b_first : p->c_first) + row;
}

/* One MUL op of rank r on symbols. */
static shiro_status run_mul(vstate *v, int32_t r, const int64_t *op) {
  const prog_rank *p = &v->pr[r];
  const int64_t *ptr = p->ptr + op[OPF_PTR_OFF];
  trow *dst = rows_of(v, r, op[OPF_DST_BUF]) + op[OPF_DST_OFF];
  trow *src = op[OPF_SRC_BUF] == v->input ? NULL : rows_of(v, r, op[OPF_SRC_BUF]) + op[OPF_SRC_OFF];
  for (int64_t i = 0; i < op[OPF_NROWS]; i++) {
    trow *d = dst + (op[OPF_ROWS_OFF] >= 0 ? p->rows[op[OPF_ROWS_OFF] + i] : i);
    if (!op[OPF_ACCUM]) d->n = 0;
    for (int64_t e = ptr[i]; e < ptr[i + 1]; e++) {
      double scale = op[OPF_HAS_VAL] ? p->val[e] : 1.0;
      if (!src) { /* a row of the input: the symbol e_j */
        term t = {symbol(v, p, op[OPF_SRC_OFF] + p->col[e]), scale, 1, op[OPF_HAS_VAL] ? r : -1};
        if (!push(d, t)) return nomem(v->err);
        continue;
      }
      const trow *s = src + p->col[e];
      for (int64_t x = 0; x < s->n; x++) {
        term t = s->t[x];
        t.coef *= scale;
        if (op[OPF_HAS_VAL]) {
          if (t.at >= 0)
            return shiro_fail(v->err, SHIRO_ERR_FORMAT, "verify: rank %d multiplies %s row %lld a second time (first on rank %d)",
                              r, v->input == PROG_BUF_B ? "B" : "Y", (long long)t.j, t.at);
          t.at = r;
        }
        if (!push(d, t)) return nomem(v->err);
      }
    }
  }
  return SHIRO_OK;
}

static shiro_status copy_rows(trow *dst, const trow *src, int64_t n, shiro_error *err) {
  for (int64_t i = 0; i < n; i++) {
    dst[i].n = 0;
    for (int64_t x = 0; x < src[i].n; x++)
      if (!push(&dst[i], src[i].t[x])) return nomem(err);
  }
  return SHIRO_OK;
}

/* START s: snapshot every send of stage s (in *pend, *cap of them allocated). WAIT s: deliver into
 * the receivers' buffers. */
static shiro_status sync_start(vstate *v, int64_t stage, pending **pend, int64_t *npend, int64_t *cap) {
  for (int32_t r = 0; r < v->R; r++) {
    const prog_rank *p = &v->pr[r];
    for (int64_t x = 0; x < p->nx; x++) {
      const int64_t *rec = p->xchg + x * PROG_X_WIDTH;
      if (rec[XF_STAGE] != stage || rec[XF_DIR] != 0) continue;
      if (*npend == *cap) { /* doubling: a stage of a plan for thousands of ranks has ~10^5 messages */
        int64_t nc = *cap ? 2 * *cap : 64;
        pending *np = realloc(*pend, (size_t)nc * sizeof *np);
        if (!np) return nomem(v->err);
        *pend = np;
        *cap = nc;
      }
      pending *pe = &(*pend)[(*npend)++];
      *pe = (pending){r, (int32_t)rec[XF_PEER], stage, rec[XF_KIND], rec[XF_COUNT], calloc((size_t)rec[XF_COUNT] + 1, sizeof(trow))};
      if (!pe->rows) return nomem(v->err);
      shiro_status st = copy_rows(pe->rows, rows_of(v, r, rec[XF_BUF]) + rec[XF_OFF], rec[XF_COUNT], v->err);
      if (st != SHIRO_OK) return st;
    }
  }
  return SHIRO_OK;
}

/* Orders sends by (receiver, sender, kind), the key a receive looks its send up by. */
static int cmp_pending(const void *a, const void *b) {
  const pending *x = a, *y = b;
  if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
  if (x->src != y->src) return x->src < y->src ? -1 : 1;
  return (x->kind > y->kind) - (x->kind < y->kind);
}

/* The send of pend[0..npend) (sorted by cmp_pending) that rank dst receives from src with kind,
 * or NULL. O(log npend): pairing each receive with its send by a scan was O(messages²). */
static pending *find_send(pending *pend, int64_t npend, int32_t src, int32_t dst, int64_t kind) {
  const pending key = {.src = src, .dst = dst, .kind = kind};
  return npend ? bsearch(&key, pend, (size_t)npend, sizeof *pend, cmp_pending) : NULL;
}

static shiro_status sync_wait(vstate *v, int64_t stage, pending *pend, int64_t npend) {
  int64_t used = 0;
  if (npend) qsort(pend, (size_t)npend, sizeof *pend, cmp_pending);
  for (int32_t r = 0; r < v->R; r++) {
    const prog_rank *p = &v->pr[r];
    for (int64_t x = 0; x < p->nx; x++) {
      const int64_t *rec = p->xchg + x * PROG_X_WIDTH;
      if (rec[XF_STAGE] != stage || rec[XF_DIR] != 1) continue;
      /* XF_PEER is in 0..R-1 (plan_check_rank), so the narrowing is exact */
      pending *pe = find_send(pend, npend, (int32_t)rec[XF_PEER], r, rec[XF_KIND]);
      if (!pe || pe->count != rec[XF_COUNT])
        return shiro_fail(v->err, SHIRO_ERR_FORMAT, "verify: stage %lld: rank %d receives %lld rows of kind %lld from rank %lld, which sends %lld",
                          (long long)stage, r, (long long)rec[XF_COUNT], (long long)rec[XF_KIND], (long long)rec[XF_PEER],
                          pe ? (long long)pe->count : 0LL);
      shiro_status st = copy_rows(rows_of(v, r, rec[XF_BUF]) + rec[XF_OFF], pe->rows, pe->count, v->err);
      if (st != SHIRO_OK) return st;
      used++;
      v->messages++;
    }
  }
  if (used != npend)
    return shiro_fail(v->err, SHIRO_ERR_FORMAT, "verify: stage %lld: %lld messages are sent, %lld received", (long long)stage,
                      (long long)npend, (long long)used);
  return SHIRO_OK;
}

static void free_pending(pending *pend, int64_t npend) {
  for (int64_t y = 0; y < npend; y++) {
    for (int64_t i = 0; i < pend[y].count; i++) free(pend[y].rows[i].t);
    free(pend[y].rows);
  }
  free(pend);
}

/* Runs all programs in lockstep: every rank runs to its next START/WAIT, which must agree. */
static shiro_status execute(vstate *v) {
  int64_t *cur = calloc((size_t)v->R, sizeof *cur);
  pending *pend = NULL;
  int64_t npend = 0, cap = 0;
  shiro_status st = cur ? SHIRO_OK : nomem(v->err);
  while (st == SHIRO_OK) {
    int64_t kind = -1, stage = -1;
    int done = 0;
    for (int32_t r = 0; r < v->R && st == SHIRO_OK; r++) {
      const prog_rank *p = &v->pr[r];
      while (cur[r] < p->nops && p->ops[cur[r] * PROG_OP_WIDTH + OPF_KIND] == PROG_OP_MUL && st == SHIRO_OK)
        st = run_mul(v, r, p->ops + cur[r]++ * PROG_OP_WIDTH);
      int64_t k = cur[r] < p->nops ? p->ops[cur[r] * PROG_OP_WIDTH + OPF_KIND] : 0;
      int64_t s = cur[r] < p->nops ? p->ops[cur[r] * PROG_OP_WIDTH + OPF_STAGE] : -1;
      if (r == 0) {
        kind = k;
        stage = s;
      } else if (k != kind || s != stage)
        st = shiro_fail(v->err, SHIRO_ERR_FORMAT, "verify: ranks 0 and %d disagree on the sequence of stages", r);
      done = (k == 0);
    }
    if (st != SHIRO_OK || done) break;
    if (kind == PROG_OP_START) st = sync_start(v, stage, &pend, &npend, &cap);
    else {
      st = sync_wait(v, stage, pend, npend);
      free_pending(pend, npend);
      pend = NULL;
      npend = cap = 0;
    }
    for (int32_t r = 0; r < v->R; r++) cur[r]++;
  }
  free_pending(pend, npend);
  free(cur);
  return st;
}

static int cmp_term(const void *a, const void *b) {
  const term *x = a, *y = b;
  return (x->j > y->j) - (x->j < y->j);
}

static int cmp_i64x3(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  for (int k = 0; k < 3; k++)
    if (x[k] != y[k]) return (x[k] > y[k]) - (x[k] < y[k]);
  return 0;
}

/* The first rank whose range [first, first + rows) of B (c = 0) or C (c = 1) ends after row j:
 * its owner, as the ranges follow each other (plan_verify checks it first). A binary search on
 * the ends, O(log R) even where most ranks own no row (walking the empty ranges that share one
 * start was O(R) a nonzero). R - 1 for a row past the end. */
static int32_t range_owner(const vstate *v, int c, int64_t j) {
  int32_t lo = 0, hi = v->R - 1;
  while (lo < hi) {
    const int32_t mid = lo + (hi - lo) / 2;
    const prog_rank *p = &v->pr[mid];
    if ((c ? p->c_first + p->c_rows : p->b_first + p->b_rows) > j) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/* Owner of B row j, from the ranks' ranges. */
static int32_t owner(const vstate *v, int64_t j) { return range_owner(v, 0, j); }

/* Problem a nonzero (or certificate pair) of row owner p and column owner q belongs to. */
static int64_t problem(const vstate *v, int group, int32_t p, int32_t q) {
  int32_t G = v->meta->gpus_per_node;
  if (group && p / G != q / G) return (int64_t)v->R * v->R + (int64_t)(p / G) * v->R + q / G;
  return (int64_t)p * v->R + q;
}

/* Checks every C row against A (if given) or for single terms, and collects
 * (problem, side, vertex) triples of the covers really used. */
static shiro_status check_rows(vstate *v, const sc_csr *A, int optimal, int group, int64_t **cov, int64_t *ncov,
                               verify_report *rep) {
  int64_t cap = 0;
  for (int32_t p = 0; p < v->R; p++) {
    trow *C = rows_of(v, p, PROG_BUF_C);
    for (int64_t li = 0; li < v->pr[p].c_rows; li++) {
      trow *c = &C[li];
      int64_t i = v->pr[p].c_first + li;
      if (c->n) qsort(c->t, (size_t)c->n, sizeof *c->t, cmp_term);
      for (int64_t x = 0; x < c->n; x++) {
        const term *t = &c->t[x];
        if ((x > 0 && c->t[x - 1].j == t->j) || t->mult != 1)
          return shiro_fail(v->err, SHIRO_ERR_FORMAT, "verify: nonzero (%lld, %lld) reaches C more than once", (long long)i, (long long)t->j);
        if (t->at < 0)
          return shiro_fail(v->err, SHIRO_ERR_FORMAT, "verify: B row %lld reaches C row %lld without a multiplication", (long long)t->j, (long long)i);
        int32_t q = owner(v, t->j);
        if (t->at != p && t->at != q)
          return shiro_fail(v->err, SHIRO_ERR_FORMAT, "verify: nonzero (%lld, %lld) multiplied on rank %d, which owns neither its row nor its column",
                            (long long)i, (long long)t->j, t->at);
        if (!optimal || q == p) continue;
        if (*ncov == cap) {
          cap = cap ? 2 * cap : 1024;
          int64_t *nc = realloc(*cov, (size_t)cap * 3 * sizeof *nc);
          if (!nc) return nomem(v->err);
          *cov = nc;
        }
        int64_t *tri = *cov + 3 * (*ncov)++;
        tri[0] = problem(v, group, p, q);
        tri[1] = t->at == p ? 0 : 1; /* 0: column side (B row j moved), 1: row side (C row i moved) */
        tri[2] = t->at == p ? t->j : i;
      }
      rep->nonzeros += c->n;
      if (A) {
        int64_t a0 = A->Ap[i], len = A->Ap[i + 1] - a0, x = 0;
        if (len != c->n)
          return shiro_fail(v->err, SHIRO_ERR_FORMAT, "verify: C row %lld receives %lld nonzeros, the matrix has %lld", (long long)i,
                            (long long)c->n, (long long)len);
        for (; x < len; x++)
          if (A->Aj[a0 + x] != c->t[x].j || A->Ax[a0 + x] != c->t[x].coef)
            return shiro_fail(v->err, SHIRO_ERR_FORMAT, "verify: nonzero (%lld, %lld) of the matrix is not what the plan computes",
                              (long long)i, (long long)A->Aj[a0 + x]);
      }
    }
  }
  if (rep->nonzeros != v->meta->nnz)
    return shiro_fail(v->err, SHIRO_ERR_FORMAT, "verify: %lld nonzeros reach C, the plan's matrix has %lld", (long long)rep->nonzeros,
                      (long long)v->meta->nnz);
  return SHIRO_OK;
}

/* Is (i, j) a nonzero reaching C (C rows are sorted by now)? */
static int is_edge(vstate *v, int32_t p, int64_t i, int64_t j) {
  const trow *c = &rows_of(v, p, PROG_BUF_C)[i - v->pr[p].c_first];
  int64_t lo = 0, hi = c->n - 1;
  while (lo <= hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (c->t[mid].j == j) return 1;
    if (c->t[mid].j < j) lo = mid + 1;
    else hi = mid - 1;
  }
  return 0;
}

/* Each problem's cover (distinct vertices used) must equal its certificate's matched pairs. */
static shiro_status check_certificates(vstate *v, int group, int64_t *cov, int64_t ncov, verify_report *rep) {
  int64_t ncert = 0;
  for (int32_t p = 0; p < v->R; p++) ncert += v->pr[p].ncert;
  int64_t *rows = malloc((size_t)(ncert + 1) * 3 * sizeof *rows), *cols = malloc((size_t)(ncert + 1) * 3 * sizeof *cols);
  if (!rows || !cols) {
    free(rows);
    free(cols);
    return nomem(v->err);
  }
  int64_t n = 0;
  shiro_status st = SHIRO_OK;
  for (int32_t p = 0; p < v->R && st == SHIRO_OK; p++)
    for (int64_t x = 0; x < v->pr[p].ncert; x++, n++) {
      int64_t i = v->pr[p].cert[2 * x], j = v->pr[p].cert[2 * x + 1];
      int32_t q = owner(v, j);
      if (q == p || !is_edge(v, p, i, j)) {
        st = shiro_fail(v->err, SHIRO_ERR_FORMAT, "verify: certificate pair (%lld, %lld) of rank %d is not an off-diagonal nonzero",
                        (long long)i, (long long)j, p);
        break;
      }
      int64_t key = problem(v, group, p, q);
      rows[3 * n] = key;
      rows[3 * n + 1] = i;
      rows[3 * n + 2] = 0;
      cols[3 * n] = key;
      cols[3 * n + 1] = j;
      cols[3 * n + 2] = 0;
    }
  if (st == SHIRO_OK) {
    if (n) qsort(rows, (size_t)n, 3 * sizeof *rows, cmp_i64x3);
    if (n) qsort(cols, (size_t)n, 3 * sizeof *cols, cmp_i64x3);
    for (int64_t x = 1; x < n && st == SHIRO_OK; x++)
      if (!cmp_i64x3(rows + 3 * x, rows + 3 * (x - 1)) || !cmp_i64x3(cols + 3 * x, cols + 3 * (x - 1)))
        st = shiro_fail(v->err, SHIRO_ERR_FORMAT, "verify: a certificate uses a row or column twice: not a matching");
  }
  /* cover sizes per problem (distinct (problem, side, vertex)) vs matched pairs per problem */
  if (ncov) qsort(cov, (size_t)ncov, 3 * sizeof *cov, cmp_i64x3);
  int64_t y = 0;
  for (int64_t x = 0; x < ncov && st == SHIRO_OK;) {
    int64_t key = cov[3 * x], size = 0;
    for (; x < ncov && cov[3 * x] == key; x++) size += x == 0 || cmp_i64x3(cov + 3 * x, cov + 3 * (x - 1)) != 0;
    while (y < n && rows[3 * y] < key) y++;
    int64_t matched = 0;
    for (; y < n && rows[3 * y] == key; y++) matched++;
    rep->problems++;
    rep->cover_rows += size;
    if (matched != size)
      st = shiro_fail(v->err, SHIRO_ERR_FORMAT, "verify: a cover of %lld rows is certified by a matching of %lld pairs: not proven minimum",
                      (long long)size, (long long)matched);
    else
      rep->certified++;
  }
  free(rows);
  free(cols);
  return st;
}

#define STALE (-1) /* the symbol of what a buffer held before the call (j of a term) */

/* The symbolic rows of every buffer but the input (the symbols): empty for C = A·B; for X = Aᵀ·Y
 * each holds the symbol STALE, what the buffers hold from an earlier call, so that a row the
 * program adds to or sends before clearing it is found (its X rows would hold it). */
static shiro_status alloc_rows(vstate *v) {
  v->bufs = calloc((size_t)v->R * PROG_NBUF, sizeof *v->bufs);
  if (!v->bufs) return nomem(v->err);
  for (int32_t r = 0; r < v->R; r++)
    for (int b = 0; b < PROG_NBUF; b++) {
      if (b == v->input) continue;
      trow *rows = v->bufs[(int64_t)r * PROG_NBUF + b] = calloc((size_t)nrows_of(&v->pr[r], b) + 1, sizeof(trow));
      if (!rows) return nomem(v->err);
      for (int64_t i = 0; v->input == PROG_BUF_C && i < nrows_of(&v->pr[r], b); i++)
        if (!push(&rows[i], (term){STALE, 1.0, 1, -1})) return nomem(v->err);
    }
  return SHIRO_OK;
}

static void free_rows(vstate *v) {
  for (int32_t r = 0; v->bufs && r < v->R; r++)
    for (int b = 0; b < PROG_NBUF; b++) {
      trow *rows = v->bufs[(int64_t)r * PROG_NBUF + b];
      for (int64_t i = 0; rows && i < nrows_of(&v->pr[r], b); i++) free(rows[i].t);
      free(rows);
    }
  free(v->bufs);
  v->bufs = NULL;
}

/* The rank whose local matrix holds plan-wide nonzero id (0 ≤ id < first[R]): the p with
 * first[p] ≤ id < first[p + 1], the last of equal starts. O(log R) (a walk from rank 0 was
 * O(R) a nonzero, the whole check O(nnz · R)). */
static int32_t rank_of_id(const int64_t *first, int32_t R, int64_t id) {
  int32_t lo = 0, hi = R - 1;
  while (lo < hi) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (first[mid + 1] > id) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/* Each local row of rank pr (a 2.1 plan's, checked by plan_check_rank) is row c_global[i] (or
 * c_first + i) of A: columns and values. SHIRO_ERR_MISMATCH otherwise. */
static shiro_status check_local_rows(const prog_rank *pr, const sc_csr *A, shiro_error *err) {
  for (int64_t x = 0; pr->naptr && x < pr->c_rows; x++) {
    const int64_t i = pr->ncglobal ? pr->c_global[x] : pr->c_first + x, t0 = pr->a_ptr[x];
    int same = pr->a_ptr[x + 1] - t0 == A->Ap[i + 1] - A->Ap[i];
    for (int64_t t = 0; same && t < A->Ap[i + 1] - A->Ap[i]; t++)
      same = pr->a_col[t0 + t] == A->Aj[A->Ap[i] + t] && (!pr->naval || pr->a_val[t0 + t] == A->Ax[A->Ap[i] + t]);
    if (!same)
      return shiro_fail(err, SHIRO_ERR_MISMATCH, "verify: rank %d's local row %lld is not row %lld of the matrix", pr->rank,
                        (long long)x, (long long)i);
  }
  return SHIRO_OK;
}

/* Format 2.1's local matrices and val_src (none in a 2.0 plan: nothing to check): the ranks' local
 * matrices hold the plan's nonzeros, every one of them is named by exactly one value entry of the
 * programs (val_src), with its value there (1 where the file had none), and with A (the original
 * matrix), each local row is A's row c_global[i] (or c_first + i): columns and values. */
static shiro_status check_local_matrices(const prog_meta *meta, const prog_rank *pr, const sc_csr *A, shiro_error *err) {
  int32_t R = meta->ranks, with = 0;
  for (int32_t r = 0; r < R; r++) with += pr[r].naptr > 0;
  if (!with) return SHIRO_OK;
  if (with != R) return shiro_fail(err, SHIRO_ERR_FORMAT, "verify: only %d of the %d ranks have a local matrix", with, R);
  int64_t *first = malloc(((size_t)R + 1) * sizeof *first);
  if (!first) return nomem(err);
  first[0] = 0;
  for (int32_t r = 0; r < R; r++) first[r + 1] = first[r] + pr[r].nacol;
  shiro_status st = first[R] == meta->nnz ? SHIRO_OK
                                          : shiro_fail(err, SHIRO_ERR_FORMAT, "verify: the local matrices hold %lld nonzeros, the plan %lld",
                                                       (long long)first[R], (long long)meta->nnz);
  uint8_t *used = st == SHIRO_OK ? calloc((size_t)meta->nnz + 1, 1) : NULL;
  if (st == SHIRO_OK && !used) st = nomem(err);
  for (int32_t q = 0; q < R && st == SHIRO_OK; q++)
    for (int64_t e = 0; e < pr[q].nvalsrc && st == SHIRO_OK; e++) {
      const int64_t id = pr[q].val_src[e];
      if (id < 0) continue;
      int32_t p = rank_of_id(first, R, id);
      const double want = pr[p].naval ? pr[p].a_val[id - first[p]] : 1.0;
      if (used[id]++)
        st = shiro_fail(err, SHIRO_ERR_FORMAT, "verify: nonzero %lld of the local matrices is multiplied twice (rank %d entry %lld)",
                        (long long)id, q, (long long)e);
      else if (pr[q].val[e] != want)
        st = shiro_fail(err, SHIRO_ERR_FORMAT, "verify: rank %d entry %lld multiplies by %.17g, its nonzero %lld is %.17g", q,
                        (long long)e, pr[q].val[e], (long long)id, want);
    }
  for (int64_t id = 0; st == SHIRO_OK && id < meta->nnz; id++)
    if (!used[id]) st = shiro_fail(err, SHIRO_ERR_FORMAT, "verify: nonzero %lld of the local matrices is multiplied nowhere", (long long)id);
  for (int32_t r = 0; A && r < R && st == SHIRO_OK; r++) st = check_local_rows(&pr[r], A, err);
  free(used);
  free(first);
  return st;
}

/* Rank own's arrays by themselves (checksums, plan_check_rank's bounds) and that its rows follow
 * those of prev (rank own->rank - 1; NULL for rank 0: they start at row 0). */
static shiro_status check_rank_alone(const prog_meta *meta, const prog_rank *own, const prog_rank *prev, shiro_error *err) {
  shiro_status st = plan_verify_checksums(own, err);
  if (st == SHIRO_OK) st = plan_check_rank(meta, own, err);
  if (st == SHIRO_OK && (own->b_first != (prev ? prev->b_first + prev->b_rows : 0) || own->c_first != (prev ? prev->c_first + prev->c_rows : 0)))
    st = shiro_fail(err, SHIRO_ERR_FORMAT, "verify: rank %d's rows do not follow rank %d's", own->rank, own->rank - 1);
  return st;
}

/* The plan was made for A: its shape, nonzeros and pattern digest. */
static shiro_status check_matrix_digest(const prog_meta *meta, const sc_csr *A, shiro_error *err) {
  if (A->m != meta->m || A->k != meta->k || A->nnz != meta->nnz ||
      plan_rows_digest(A, NULL, 0, A->m) != meta->matrix_digest) /* = shiro_pattern_digest of A */
    return shiro_fail(err, SHIRO_ERR_MISMATCH, "verify: the plan was made for another matrix (shape, nonzeros or pattern digest differ)");
  return SHIRO_OK;
}

/* Rank pr's rows are A's rows: its pattern digest. */
static shiro_status check_rank_digest(const prog_rank *pr, const sc_csr *A, shiro_error *err) {
  if (plan_rows_digest(A, pr->ncglobal ? pr->c_global : NULL, pr->c_first, pr->c_rows) != pr->pattern_digest)
    return shiro_fail(err, SHIRO_ERR_MISMATCH, "verify: rank %d's pattern digest does not match the matrix", pr->rank);
  return SHIRO_OK;
}

shiro_status plan_verify(const prog_meta *meta, const prog_rank *pr, const sc_csr *A, verify_report *rep,
                         shiro_error *err) {
  memset(rep, 0, sizeof *rep);
  vstate v = {.meta = meta, .pr = pr, .R = meta->ranks, .err = err, .input = PROG_BUF_B};
  shiro_status st = SHIRO_OK;
  for (int32_t r = 0; r < v.R && st == SHIRO_OK; r++) st = check_rank_alone(meta, &pr[r], r ? &pr[r - 1] : NULL, err);
  if (st == SHIRO_OK && (pr[v.R - 1].b_first + pr[v.R - 1].b_rows != meta->k || pr[v.R - 1].c_first + pr[v.R - 1].c_rows != meta->m))
    st = shiro_fail(err, SHIRO_ERR_FORMAT, "verify: the ranks' rows do not cover the matrix");
  if (st == SHIRO_OK && A) {
    st = check_matrix_digest(meta, A, err);
    for (int32_t r = 0; r < v.R && st == SHIRO_OK; r++) st = check_rank_digest(&pr[r], A, err);
  }
  if (st == SHIRO_OK) st = check_local_matrices(meta, pr, A, err);
  if (st != SHIRO_OK) return st;
  sc_csr *Aperm = NULL; /* row lists (metis, parts): the programs index the renumbered matrix */
  int clists = 0, blists = 0; /* any rank's (a rank without rows has an empty list either way) */
  for (int32_t r = 0; r < v.R; r++) {
    clists |= pr[r].ncglobal > 0;
    blists |= pr[r].nbglobal > 0;
  }
  if (A && (clists || blists)) {
    int64_t *rnew = clists ? malloc((size_t)(A->m ? A->m : 1) * sizeof *rnew) : NULL;
    int64_t *cnew = blists ? malloc((size_t)(A->k ? A->k : 1) * sizeof *cnew) : NULL;
    if ((clists && !rnew) || (blists && !cnew)) {
      free(rnew);
      free(cnew);
      return nomem(err);
    }
    for (int32_t r = 0; r < v.R; r++) {
      for (int64_t i = 0; rnew && i < pr[r].ncglobal; i++) rnew[pr[r].c_global[i]] = pr[r].c_first + i;
      for (int64_t i = 0; cnew && i < pr[r].nbglobal; i++) cnew[pr[r].b_global[i]] = pr[r].b_first + i;
    }
    st = sc_csr_permute2(A, rnew, cnew, &Aperm, err); /* rows and columns apart (parts:FILE, rectangular) */
    free(rnew);
    free(cnew);
    if (st != SHIRO_OK) return st;
    A = Aperm;
  }
  st = alloc_rows(&v);
  int optimal = !strcmp(meta->strategy, "joint") || !strcmp(meta->strategy, "hier") || !strcmp(meta->strategy, "group");
  int group = !strcmp(meta->strategy, "group");
  int64_t *cov = NULL, ncov = 0;
  if (st == SHIRO_OK) st = execute(&v);
  if (st == SHIRO_OK) st = check_rows(&v, A, optimal, group, &cov, &ncov, rep);
  if (st == SHIRO_OK && optimal) st = check_certificates(&v, group, cov, ncov, rep);
  rep->messages = v.messages;
  rep->matrix_checked = st == SHIRO_OK && A != NULL;
  free(cov);
  free_rows(&v);
  sc_csr_free(Aperm);
  return st;
}

/* A message as one end records it, seen from rank `self`: (stage, other end, direction as the
 * sender sees it: 0 self sends, 1 self receives, kind, rows). */
typedef struct msg_key {
  int64_t stage, other, dir, kind, count;
} msg_key;

static int cmp_msg_key(const void *a, const void *b) {
  const msg_key *x = a, *y = b;
  const int64_t u[4] = {x->stage, x->other, x->dir, x->kind}, w[4] = {y->stage, y->other, y->dir, y->kind};
  for (int k = 0; k < 4; k++)
    if (u[k] != w[k]) return u[k] < w[k] ? -1 : 1;
  return 0;
}

/* The rank of peers[0..npeers) (sorted by rank) that is rank q, or NULL. */
static const prog_rank *find_peer(const prog_rank *peers, int32_t npeers, int64_t q) {
  int32_t lo = 0, hi = npeers - 1;
  while (lo <= hi) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (peers[mid].rank == q) return &peers[mid];
    if (peers[mid].rank < q) lo = mid + 1;
    else hi = mid - 1;
  }
  return NULL;
}

/* own's messages (mine[0..own->nx)) against what its peers record of them (theirs, every record of
 * a peer that names own's rank, seen from own), both sorted: the same keys, the same rows. */
static shiro_status match_peers(const prog_rank *own, const msg_key *mine, int64_t nm, const msg_key *theirs, int64_t nt,
                                shiro_error *err) {
  static const char *const dir[2] = {"sends", "receives"};
  int64_t x = 0, y = 0;
  while (x < nm || y < nt) {
    const int c = x == nm ? 1 : y == nt ? -1
                                        : cmp_msg_key(&mine[x], &theirs[y]);
    if (c == 0 && mine[x].count == theirs[y].count) {
      x++;
      y++;
      continue;
    }
    const msg_key *k = c <= 0 ? &mine[x] : &theirs[y];
    if (c == 0)
      return shiro_fail(err, SHIRO_ERR_FORMAT, "verify: stage %lld: rank %d %s %lld rows of kind %lld %s rank %lld, which records %lld",
                        (long long)k->stage, own->rank, dir[k->dir], (long long)mine[x].count, (long long)k->kind,
                        k->dir ? "from" : "to", (long long)k->other, (long long)theirs[y].count);
    if (c < 0) /* own's record, no peer's */
      return shiro_fail(err, SHIRO_ERR_FORMAT, "verify: stage %lld: rank %d %s rows of kind %lld %s rank %lld, which has no such message",
                        (long long)k->stage, own->rank, dir[k->dir], (long long)k->kind, k->dir ? "from" : "to", (long long)k->other);
    return shiro_fail(err, SHIRO_ERR_FORMAT, "verify: stage %lld: rank %lld %s rows of kind %lld %s rank %d, which has no such message",
                      (long long)k->stage, (long long)k->other, dir[!k->dir], (long long)k->kind, k->dir ? "to" : "from", own->rank);
  }
  return SHIRO_OK;
}

/* Every record of own matched by the record of the other direction its peer keeps, and every
 * record of those peers that names own matched by one of own's. O((own's + peers' records) log). */
static shiro_status check_messages_rank(const prog_rank *own, const prog_rank *peers, int32_t npeers, verify_report *rep,
                                        shiro_error *err) {
  int64_t nt = 0, nm = own->nx;
  for (int32_t q = 0; q < npeers; q++) nt += peers[q].nx;
  msg_key *mine = malloc(((size_t)nm + 1) * sizeof *mine), *theirs = malloc(((size_t)nt + 1) * sizeof *theirs);
  shiro_status st = mine && theirs ? SHIRO_OK : nomem(err);
  nt = 0;
  for (int64_t x = 0; st == SHIRO_OK && x < nm; x++) {
    const int64_t *rec = own->xchg + x * PROG_X_WIDTH;
    mine[x] = (msg_key){rec[XF_STAGE], rec[XF_PEER], rec[XF_DIR], rec[XF_KIND], rec[XF_COUNT]};
    if (!find_peer(peers, npeers, rec[XF_PEER]))
      st = shiro_fail(err, SHIRO_ERR_FORMAT, "verify: rank %d: the program of its peer %lld was not given", own->rank,
                      (long long)rec[XF_PEER]);
  }
  for (int32_t q = 0; st == SHIRO_OK && q < npeers; q++)
    for (int64_t x = 0; x < peers[q].nx; x++) {
      const int64_t *rec = peers[q].xchg + x * PROG_X_WIDTH;
      if (rec[XF_PEER] == own->rank)
        theirs[nt++] = (msg_key){rec[XF_STAGE], peers[q].rank, rec[XF_DIR] == 0, rec[XF_KIND], rec[XF_COUNT]};
    }
  if (st == SHIRO_OK) {
    if (nm) qsort(mine, (size_t)nm, sizeof *mine, cmp_msg_key);
    if (nt) qsort(theirs, (size_t)nt, sizeof *theirs, cmp_msg_key);
    st = match_peers(own, mine, nm, theirs, nt, err);
  }
  if (st == SHIRO_OK) rep->messages = nm;
  free(mine);
  free(theirs);
  return st;
}

shiro_status plan_verify_rank(const prog_meta *meta, const prog_rank *own, const prog_rank *prev, const prog_rank *next,
                              const prog_rank *peers, int32_t npeers, const sc_csr *A, verify_report *rep, shiro_error *err) {
  memset(rep, 0, sizeof *rep);
  const int32_t p = own->rank;
  shiro_status st = check_rank_alone(meta, own, prev, err);
  if (st == SHIRO_OK && (own->b_first + own->b_rows != (next ? next->b_first : meta->k) || own->c_first + own->c_rows != (next ? next->c_first : meta->m)))
    st = next ? shiro_fail(err, SHIRO_ERR_FORMAT, "verify: rank %d's rows do not follow rank %d's", p + 1, p)
              : shiro_fail(err, SHIRO_ERR_FORMAT, "verify: the ranks' rows do not cover the matrix");
  if (st == SHIRO_OK) st = check_messages_rank(own, peers, npeers, rep, err);
  if (st == SHIRO_OK && A) st = check_matrix_digest(meta, A, err);
  if (st == SHIRO_OK && A) st = check_rank_digest(own, A, err);
  if (st == SHIRO_OK && A) st = check_local_rows(own, A, err);
  rep->matrix_checked = st == SHIRO_OK && A != NULL;
  return st;
}

/* A nonzero as a product computes it: A(i, j) = coef. */
typedef struct triple {
  int64_t i, j;
  double coef;
} triple;

static int cmp_triple(const void *a, const void *b) {
  const triple *x = a, *y = b;
  if (x->i != y->i) return x->i < y->i ? -1 : 1;
  if (x->j != y->j) return x->j < y->j ? -1 : 1;
  return (x->coef > y->coef) - (x->coef < y->coef);
}

/* Owner of C row i, from the ranks' ranges. */
static int32_t owner_c(const vstate *v, int64_t i) { return range_owner(v, 1, i); }

/* The nonzeros reaching the output rows of an executed v (C rows: (i, symbol j); X rows: (symbol
 * i, j)) into *out (nnz of them, sorted). The transposed output is checked on the way: each
 * term once, multiplied once, by the owner of its row or of its column. */
static shiro_status collect(vstate *v, triple **out, int64_t *n) {
  const int fwd = v->input == PROG_BUF_B, ob = fwd ? PROG_BUF_C : PROG_BUF_B;
  int64_t total = 0, k = 0;
  for (int32_t p = 0; p < v->R; p++)
    for (int64_t l = 0; l < nrows_of(&v->pr[p], ob); l++) total += rows_of(v, p, ob)[l].n;
  triple *t = malloc((size_t)(total + 1) * sizeof *t);
  if (!t) return nomem(v->err);
  for (int32_t p = 0; p < v->R; p++)
    for (int64_t l = 0; l < nrows_of(&v->pr[p], ob); l++) {
      trow *row = &rows_of(v, p, ob)[l];
      const int64_t g = (fwd ? v->pr[p].c_first : v->pr[p].b_first) + l;
      if (row->n) qsort(row->t, (size_t)row->n, sizeof *row->t, cmp_term);
      for (int64_t x = 0; x < row->n; x++) {
        const term *e = &row->t[x];
        if (!fwd && e->j == STALE) {
          free(t);
          return shiro_fail(v->err, SHIRO_ERR_FORMAT, "verify (transposed program): X row %lld holds what a buffer held before "
                                                      "the call (a row added to or sent before it was cleared)",
                            (long long)g);
        }
        if (!fwd && ((x > 0 && row->t[x - 1].j == e->j) || e->mult != 1 || e->at < 0 || (e->at != p && e->at != owner_c(v, e->j)))) {
          free(t);
          return shiro_fail(v->err, SHIRO_ERR_FORMAT, "verify (transposed program): nonzero (%lld, %lld) %s", (long long)e->j,
                            (long long)g, e->at < 0 ? "reaches X without a multiplication" : (e->at != p && e->at != owner_c(v, e->j)) ? "is multiplied on a rank that owns neither its row nor its column"
                                                                                                                                       : "reaches X more than once");
        }
        t[k++] = fwd ? (triple){g, e->j, e->coef} : (triple){e->j, g, e->coef};
      }
    }
  if (k) qsort(t, (size_t)k, sizeof *t, cmp_triple);
  *out = t;
  *n = k;
  return SHIRO_OK;
}

/* Executes the programs prs symbolically on v's input and collects what reaches the output. */
static shiro_status run_collect(vstate *v, triple **out, int64_t *n) {
  shiro_status st = alloc_rows(v);
  if (st == SHIRO_OK) st = execute(v);
  if (st == SHIRO_OK) st = collect(v, out, n);
  free_rows(v);
  return st;
}

shiro_status plan_verify_transpose(const prog_meta *meta, const prog_rank *pr, const prog_rank *tr, verify_report *rep,
                                   shiro_error *err) {
  memset(rep, 0, sizeof *rep);
  vstate f = {.meta = meta, .pr = pr, .R = meta->ranks, .err = err, .input = PROG_BUF_B};
  vstate t = {.meta = meta, .pr = tr, .R = meta->ranks, .err = err, .input = PROG_BUF_C};
  triple *a = NULL, *b = NULL;
  int64_t na = 0, nb = 0;
  shiro_status st = run_collect(&f, &a, &na);
  if (st == SHIRO_OK) st = run_collect(&t, &b, &nb);
  for (int64_t x = 0; st == SHIRO_OK && x < (na > nb ? na : nb); x++) {
    const triple *p = x < na ? &a[x] : NULL, *q = x < nb ? &b[x] : NULL;
    if (p && q && !cmp_triple(p, q)) continue;
    const triple *first = !q || (p && cmp_triple(p, q) < 0) ? p : q;
    st = shiro_fail(err, SHIRO_ERR_FORMAT, "verify (transposed program): nonzero (%lld, %lld) = %.17g %s", (long long)first->i,
                    (long long)first->j, first->coef, first == p ? "of C = A·B does not reach X = Aᵀ·Y" : "reaches X = Aᵀ·Y, C = A·B has no such term");
  }
  rep->nonzeros = st == SHIRO_OK ? nb : 0;
  rep->messages = t.messages;
  free(a);
  free(b);
  return st;
}
