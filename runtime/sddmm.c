/* sddmm.c — the gradient of the values (shiro_sddmm): ⟨G_i, B_j⟩ for each of a rank's nonzeros.
 *
 * The forward program multiplies each nonzero A_ij once, on some rank, in a MULTIPLY op whose
 * source row is B_j (the caller's B, or a row received or relayed into S or R) and whose
 * destination row is a row of C_i or a partial row of it (in S or R, summed into C_i later). The
 * gradient of its value is ⟨∂L/∂dst row, src row⟩, and ∂L/∂dst row is what the transposed program
 * (transpose.c, X = Aᵀ·G) holds in that same row of its buffer once it has run: G_i itself for C,
 * and for a partial row the adjoint it receives or sums there (the adjoint program completes a
 * row's adjoint before the ops that read it, and nothing writes that row afterwards: the forward
 * never assigns a row it wrote before). So a call is:
 *
 *   1. the forward program with B, without its products and the ops that write C: its messages,
 *      gathers and relays bring the B rows to the multiplies (a product's output is a partial row
 *      of C, never a B row, so none is needed), then S and R copied aside (the transposed walk
 *      reuses them);
 *   2. the transposed program with G, likewise without its products (they make rows of X, not
 *      of G) and the ops that write X;
 *   3. for each forward MULTIPLY entry e, ⟨dst row, src row⟩ (the adjoint row from G, S or R;
 *      the source row from B or the copies), summed in double in a fixed order (dot_d);
 *   4. the sums sent back to the ranks that own the nonzeros (the reverse of shiro_ctx_set_values'
 *      MPI_Alltoallv) and summed there per local nonzero, in set_values order.
 *
 * Only the plan's messages move B and G (the forward's and the transposed program's); step 4
 * moves one double per nonzero that another rank multiplies. Design: the forward's B exchange is
 * run again rather than its received rows kept from the caller's shiro_spmm, because one context
 * serves every layer and width of a network, so the rows left in its buffers are the last call's,
 * not those of the product being differentiated; the extra cost is the forward's exchange and
 * gathers (no product), measured in docs/performance.md. The first call allocates (the copies of S and
 * R at N, the per-entry sums, the exchange's set-up); later calls allocate nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void sddmm_release(shiro_ctx *c) {
  rt_sddmm *d = &c->sd;
  free(d->s);
  free(d->r);
  free(d->ent);
  free(d->send);
  free(d->got);
  free(d->acc);
  free(d->scnt);
  free(d->rcnt);
  memset(d, 0, sizeof *d);
}

/* SHIRO_ERR_UNSUPPORTED with a message if a program reads a buffer this file does not keep (the
 * forward reading C, the transposed one reading X) or a forward multiply writes or reads a buffer
 * other than those step 3 reads; SHIRO_OK otherwise. Local, pure over the programs. */
static shiro_status check_programs(shiro_ctx *c) {
  const rt_program *f = &c->prog[RT_FORWARD], *t = &c->prog[RT_TRANSPOSE];
  for (int64_t o = 0; o < f->nops; o++) {
    const rt_op *op = &f->op[o];
    if (op->kind == RT_START || op->kind == RT_WAIT) continue;
    if (op->src_buf == PROG_BUF_C || op->dst_buf == PROG_BUF_B) {
      snprintf(c->error, sizeof c->error, "forward op %lld reads C or writes B (buffers %d -> %d): no sddmm for this plan",
               (long long)o, op->src_buf, op->dst_buf);
      return SHIRO_ERR_UNSUPPORTED;
    }
  }
  for (int64_t o = 0; o < t->nops; o++) {
    const rt_op *op = &t->op[o];
    if (op->kind != RT_START && op->kind != RT_WAIT && op->src_buf == PROG_BUF_B) {
      snprintf(c->error, sizeof c->error, "transposed op %lld reads X: no sddmm for this plan", (long long)o);
      return SHIRO_ERR_UNSUPPORTED;
    }
  }
  return SHIRO_OK;
}

/* The first call's buffers (local; the caller agrees on the status). */
static shiro_status setup(shiro_ctx *c) {
  const prog_rank *pr = &c->plan->pr;
  rt_sddmm *d = &c->sd;
  const size_t row = (size_t)c->opts.n * c->esz;
  d->s = malloc((size_t)pr->s_rows * row + 1);
  d->r = malloc((size_t)pr->r_rows * row + 1);
  d->ent = malloc(((size_t)pr->nval + 1) * sizeof *d->ent);
  d->send = malloc(((size_t)c->xv.nrecv + 1) * sizeof *d->send);
  d->got = malloc(((size_t)c->xv.nsend + 1) * sizeof *d->got);
  d->acc = malloc(((size_t)pr->nacol + 1) * sizeof *d->acc);
  int R = 1;
  MPI_Comm_size(c->comm, &R);
  MPI_Comm_rank(c->comm, &d->me);
  d->scnt = malloc((size_t)R * sizeof *d->scnt);
  d->rcnt = malloc((size_t)R * sizeof *d->rcnt);
  if (!d->s || !d->r || !d->ent || !d->send || !d->got || !d->acc || !d->scnt || !d->rcnt) {
    sddmm_release(c);
    snprintf(c->error, sizeof c->error, "out of memory (sddmm buffers)");
    return SHIRO_ERR_NOMEM;
  }
  memcpy(d->scnt, c->xv.send_cnt, (size_t)R * sizeof *d->scnt);
  memcpy(d->rcnt, c->xv.recv_cnt, (size_t)R * sizeof *d->rcnt);
  d->scnt[d->me] = d->rcnt[d->me] = 0; /* its own values stay here (to_owners) */
  /* the walks skip the products, so the partial rows they send are whatever S and R hold: defined
   * bytes from the start (the receivers ignore them) */
  memset(c->buf[PROG_BUF_S], 0, (size_t)c->rows[PROG_BUF_S] * row);
  memset(c->buf[PROG_BUF_R], 0, (size_t)c->rows[PROG_BUF_R] * row);
  d->ready = 1;
  return SHIRO_OK;
}

/* Row r of a buffer of rows of n values of element size esz. */
static const void *row_at(const void *base, int64_t r, int64_t n, size_t esz) {
  return (const char *)base + (size_t)r * (size_t)n * esz;
}

/* Σ_k a[k]·b[k] in double, in 8 partial sums (column k into sum k mod 8, in increasing k:
 * independent chains, kept in four vectors of two doubles), then combined pairwise,
 * ((s0+s1)+(s2+s3)) + ((s4+s5)+(s6+s7)). A fixed order, so the same bits on every call and rank
 * count; below 8 columns it is the plain sum of the products (adding zeros changes nothing). One
 * chain of dependent adds, or sums kept in memory, had made the dot products 5-6x a forward call's
 * time at N = 16-64 (cit-HepTh, one rank). */
typedef double v2d __attribute__((vector_size(16)));
typedef float v2f __attribute__((vector_size(8)));

static double combine(v2d s0, v2d s1, v2d s2, v2d s3) {
  return ((s0[0] + s0[1]) + (s1[0] + s1[1])) + ((s2[0] + s2[1]) + (s3[0] + s3[1]));
}

static v2d load_d(const double *p) {
  v2d v;
  memcpy(&v, p, sizeof v);
  return v;
}

static v2d load_f(const float *p) {
  v2f v;
  memcpy(&v, p, sizeof v);
  return __builtin_convertvector(v, v2d);
}

static double dot_d(const double *a, const double *b, int64_t n) {
  v2d s0 = {0, 0}, s1 = s0, s2 = s0, s3 = s0;
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    s0 += load_d(a + k) * load_d(b + k);
    s1 += load_d(a + k + 2) * load_d(b + k + 2);
    s2 += load_d(a + k + 4) * load_d(b + k + 4);
    s3 += load_d(a + k + 6) * load_d(b + k + 6);
  }
  double t[8] = {0};
  for (int l = 0; k + l < n; l++) t[l] = a[k + l] * b[k + l];
  s0 += (v2d){t[0], t[1]}, s1 += (v2d){t[2], t[3]}, s2 += (v2d){t[4], t[5]}, s3 += (v2d){t[6], t[7]};
  return combine(s0, s1, s2, s3);
}

static double dot_f(const float *a, const float *b, int64_t n) {
  v2d s0 = {0, 0}, s1 = s0, s2 = s0, s3 = s0;
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    s0 += load_f(a + k) * load_f(b + k);
    s1 += load_f(a + k + 2) * load_f(b + k + 2);
    s2 += load_f(a + k + 4) * load_f(b + k + 4);
    s3 += load_f(a + k + 6) * load_f(b + k + 6);
  }
  double t[8] = {0};
  for (int l = 0; k + l < n; l++) t[l] = (double)a[k + l] * (double)b[k + l];
  s0 += (v2d){t[0], t[1]}, s1 += (v2d){t[2], t[3]}, s2 += (v2d){t[4], t[5]}, s3 += (v2d){t[6], t[7]};
  return combine(s0, s1, s2, s3);
}

/* Step 3 for one forward MULTIPLY op: d->ent[e] for each of its entries. bufs: the adjoint rows
 * (index by dst_buf) and the source rows (index by src_buf). */
static void op_dots(shiro_ctx *c, const rt_op *op, const void *const adj[PROG_NBUF], const void *const src[PROG_NBUF]) {
  const int64_t n = c->n;
  const size_t esz = c->esz;
  const int f32 = c->opts.dtype == SHIRO_FLOAT32;
  double *ent = c->sd.ent;
  const int64_t end = op->ptr[op->nrows]; /* the source rows of the entry 16 ahead are prefetched */
#pragma omp parallel for schedule(dynamic, 256) num_threads(c->threads) if (op->ptr[op->nrows] - op->ptr[0] > 4096)
  for (int64_t i = 0; i < op->nrows; i++) {
    const int64_t dr = op->dst_off + (op->rows ? op->rows[i] : i);
    const void *g = row_at(adj[op->dst_buf], dr, n, esz);
    for (int64_t e = op->ptr[i]; e < op->ptr[i + 1]; e++) {
      if (e + 16 < end) {
        const char *ahead = row_at(src[op->src_buf], op->src_off + op->col[e + 16], n, esz);
        for (size_t off = 0; off < (size_t)n * esz; off += 64) __builtin_prefetch(ahead + off);
      }
      const void *b = row_at(src[op->src_buf], op->src_off + op->col[e], n, esz);
      ent[e] = f32 ? dot_f(g, b, n) : dot_d(g, b, n);
    }
  }
}

/* Steps 1-3 at the call's width c->n (local but for the programs' messages). */
static shiro_status run(shiro_ctx *c, const void *B, const void *G) {
  const prog_rank *pr = &c->plan->pr;
  rt_sddmm *d = &c->sd;
  const size_t row = (size_t)c->n * c->esz;
  shiro_status st = c->be->begin ? c->be->begin(c) : SHIRO_OK;
  if (st == SHIRO_OK)
    st = interp_ops_skip(c, RT_FORWARD, B, NULL, 0, c->prog[RT_FORWARD].nops, 1 << PROG_BUF_C | INTERP_SKIP_MULTIPLY, NULL,
                         NULL);
  if (st == SHIRO_OK) {
    memcpy(d->s, c->buf[PROG_BUF_S], (size_t)pr->s_rows * row);
    memcpy(d->r, c->buf[PROG_BUF_R], (size_t)pr->r_rows * row);
    st = interp_ops_skip(c, RT_TRANSPOSE, G, NULL, 0, c->prog[RT_TRANSPOSE].nops, 1 << PROG_BUF_B | INTERP_SKIP_MULTIPLY,
                         NULL, NULL);
  }
  if (c->be->finish) st = c->be->finish(c, st);
  if (st != SHIRO_OK) return st;
  const void *const adj[PROG_NBUF] = {NULL, G, c->buf[PROG_BUF_S], c->buf[PROG_BUF_R]};
  const void *const src[PROG_NBUF] = {B, NULL, d->s, d->r};
  const rt_program *f = &c->prog[RT_FORWARD];
  for (int64_t o = 0; o < f->nops; o++)
    if (f->op[o].kind == RT_MULTIPLY) op_dots(c, &f->op[o], adj, src);
  return SHIRO_OK;
}

/* Step 4: the entries' sums to the owners, summed per local nonzero into grad (collective). The
 * values this rank owns itself skip MPI (counts of 0 to itself: d->scnt, d->rcnt) but are summed
 * in the same place of the same order as if they had come through it. */
static shiro_status to_owners(shiro_ctx *c, void *grad) {
  const prog_rank *pr = &c->plan->pr;
  const rt_values *x = &c->xv;
  rt_sddmm *d = &c->sd;
  const int64_t r0 = x->recv_dsp[d->me], s0 = x->send_dsp[d->me], nself = x->recv_cnt[d->me];
  for (int64_t k = 0; k < x->nrecv; k++)
    if (k < r0 || k >= r0 + nself) d->send[k] = d->ent[x->take[k]];
  if (MPI_Alltoallv(d->send, d->rcnt, x->recv_dsp, MPI_DOUBLE, d->got, d->scnt, x->send_dsp, MPI_DOUBLE, c->comm) !=
      MPI_SUCCESS) {
    snprintf(c->error, sizeof c->error, "MPI_Alltoallv of the gradients failed");
    return SHIRO_ERR_MPI;
  }
  double *acc = c->opts.dtype == SHIRO_FLOAT64 ? grad : d->acc; /* float64: summed in place */
  memset(acc, 0, (size_t)pr->nacol * sizeof *acc);
  for (int64_t k = 0; k < x->nsend; k++)
    acc[x->give[k]] += k >= s0 && k < s0 + nself ? d->ent[x->take[r0 + k - s0]] : d->got[k];
  if (c->opts.dtype == SHIRO_FLOAT32)
    for (int64_t t = 0; t < pr->nacol; t++) ((float *)grad)[t] = (float)acc[t];
  return SHIRO_OK;
}

/* The local checks of a call (message in c->error). */
static shiro_status check_call(shiro_ctx *c, const void *B, const void *G, const void *grad, int64_t n, int64_t lo,
                               int64_t hi, int any_out, shiro_dtype dtype) {
  const prog_rank *pr = &c->plan->pr;
  int rank = 0;
  MPI_Comm_rank(c->comm, &rank);
  if (split_busy(c, "shiro_sddmm") != SHIRO_OK) return SHIRO_ERR_ARG;
  if (n < 1 || n > c->opts.n) {
    snprintf(c->error, sizeof c->error, "shiro_sddmm: rank %d passed n = %lld, expected 1 .. %lld (the context was made for N = %lld)",
             rank, (long long)n, (long long)c->opts.n, (long long)c->opts.n);
    return SHIRO_ERR_ARG;
  }
  if (lo != hi && !any_out && n != lo) {
    snprintf(c->error, sizeof c->error, "shiro_sddmm: the ranks passed different n (from %lld to %lld; rank %d passed %lld); every rank must pass the same n",
             (long long)lo, (long long)hi, rank, (long long)n);
    return SHIRO_ERR_ARG;
  }
  if (dtype != c->opts.dtype) {
    snprintf(c->error, sizeof c->error, "shiro_sddmm: rank %d passed %s values, the context was made for %s", rank,
             ctx_dtype_name(dtype), ctx_dtype_name(c->opts.dtype));
    return SHIRO_ERR_ARG;
  }
  const char *null = NULL;
  if (!B && pr->b_rows > 0) null = "B_local";
  else if (!G && pr->c_rows > 0) null = "G_local";
  else if (!grad && pr->nacol > 0) null = "grad";
  if (null) {
    snprintf(c->error, sizeof c->error, "shiro_sddmm: rank %d passed a NULL %s (it owns %lld B rows, %lld C rows, %lld nonzeros)",
             rank, null, (long long)pr->b_rows, (long long)pr->c_rows, (long long)pr->nacol);
    return SHIRO_ERR_ARG;
  }
  if (pr->naptr == 0) {
    snprintf(c->error, sizeof c->error, "shiro_sddmm: the plan is format 2.0, which does not say where each value is "
                                        "multiplied (since 2.1): plan the matrix again with this shiro-plan");
    return SHIRO_ERR_VERSION;
  }
  if (c->be != &cpu_backend) {
    snprintf(c->error, sizeof c->error, "shiro_sddmm: the %s backend has no sddmm yet (the CPU backend has)", c->be->name);
    return SHIRO_ERR_UNSUPPORTED;
  }
  if (c->opts.dtype != SHIRO_FLOAT32 && c->opts.dtype != SHIRO_FLOAT64) {
    snprintf(c->error, sizeof c->error, "shiro_sddmm: float32 and float64 contexts only, not 16-bit ones (yet)");
    return SHIRO_ERR_UNSUPPORTED;
  }
  return SHIRO_OK;
}

shiro_status shiro_sddmm(shiro_ctx *c, const void *B_local, const void *G_local, void *grad, int64_t n,
                         shiro_dtype dtype) {
  if (!c) return SHIRO_ERR_ARG;
  c->error[0] = 0;
  int64_t lo = n, hi = n;
  int any_out = 0;
  if (!ctx_agree_width(c, n, &lo, &hi, &any_out)) {
    snprintf(c->error, sizeof c->error, "shiro_sddmm: MPI_Allreduce of the widths failed");
    return SHIRO_ERR_MPI;
  }
  shiro_status st = rt_agree(c->comm, check_call(c, B_local, G_local, grad, n, lo, hi, any_out, dtype), c->error, "shiro_sddmm");
  if (st != SHIRO_OK) {
    if (st == SHIRO_ERR_ARG && strlen(c->error) + 25 < sizeof c->error) strcat(c->error, "; nothing was computed");
    return st;
  }
  st = ctx_ready_transpose(c); /* agreed */
  if (st == SHIRO_OK && !c->xv.ready) st = values_setup(c); /* agreed */
  if (st == SHIRO_OK && !c->sd.ready) {
    st = check_programs(c);
    if (st == SHIRO_OK) st = setup(c);
    st = rt_agree(c->comm, st, c->error, "shiro_sddmm (setting up)");
  }
  if (st != SHIRO_OK) return st;
  c->n = n;
  layout_reset(c);
  st = run(c, B_local, G_local);
  c->n = c->opts.n;
  layout_reset(c);
  /* as in shiro_spmm, a failure inside the walks (MPI, CUDA) is not agreed on: each agreement is a
   * synchronization of every rank, and on a loaded machine a descheduled peer makes each cost
   * milliseconds. The peers of a rank that failed there may wait: destroy the context. */
  if (st == SHIRO_OK) st = to_owners(c, grad);
  if (st != SHIRO_OK) {
    char why[sizeof c->error];
    memcpy(why, c->error, sizeof why);
    snprintf(c->error, sizeof c->error, "shiro_sddmm: %.480s", why);
  }
  return st;
}
