/* values.c — new values for a rank's nonzeros under the plan's fixed pattern (shiro_ctx_set_values).
 *
 * A value of rank p's local matrix is multiplied where the plan put its
 * nonzero: by p itself (its local product, its products with received B
 * rows) or by another rank q that computes partial rows of p's C (row-based
 * covers, and the relays of two-tier plans). The plan's val_src says, for
 * every entry of every rank's program, which nonzero's value it is, in one
 * plan-wide numbering (the ranks' local matrices one after the other). The
 * first call turns that into who sends which of its values to whom (an
 * MPI_Allgather of the ranks' nonzero counts, an MPI_Alltoall of counts and
 * an MPI_Alltoallv of the local indices wanted); every call then ships the
 * values with one MPI_Alltoallv and writes them into the context's values
 * (the forward program's, in the context's type, and the transposed
 * program's copy, if derived), and a backend that copied them uploads them
 * again. An all-to-all exchange is used rather than the plan's own messages:
 * it runs once per install, not per product, and needs no buffers of N
 * values per row. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Writes a message into c->error and returns st. */
static shiro_status fail(shiro_ctx *c, shiro_status st, const char *what) {
  snprintf(c->error, sizeof c->error, "shiro_ctx_set_values: %s", what);
  return st;
}

void values_release(shiro_ctx *c) {
  rt_values *x = &c->xv;
  free(x->send_cnt);
  free(x->send_dsp);
  free(x->recv_cnt);
  free(x->recv_dsp);
  free(x->give);
  free(x->take);
  memset(x, 0, sizeof *x);
  free(c->vald);
  c->vald = NULL;
}

/* The rank of plan-wide nonzero id: the last p with first[p] <= id (first: [R+1], increasing). */
static int owner_of(const int64_t *first, int R, int64_t id) {
  int lo = 0, hi = R;
  while (hi - lo > 1) {
    int mid = lo + (hi - lo) / 2;
    if (first[mid] <= id) lo = mid;
    else hi = mid;
  }
  return lo;
}

/* Displacements of counts; 0 if a total passes INT_MAX (MPI's counts are int). */
static int displs(const int *cnt, int *dsp, int R, int64_t *total) {
  int64_t at = 0;
  for (int p = 0; p < R; p++) {
    if (at > INT_MAX) return 0;
    dsp[p] = (int)at;
    at += cnt[p];
  }
  *total = at;
  return at <= INT_MAX;
}

/* The first call's set-up (collective: every rank calls it after agreeing). Local failures are
 * returned with c->error set; the caller agrees on them. */
shiro_status values_setup(shiro_ctx *c) {
  const prog_rank *pr = &c->plan->pr;
  rt_values *x = &c->xv;
  int R = 0, me = 0;
  MPI_Comm_size(c->comm, &R);
  MPI_Comm_rank(c->comm, &me);
  shiro_status st = SHIRO_OK;
  int64_t *first = malloc(((size_t)R + 1) * sizeof *first), *want = NULL;
  x->send_cnt = calloc((size_t)R, sizeof(int));
  x->send_dsp = calloc((size_t)R, sizeof(int));
  x->recv_cnt = calloc((size_t)R, sizeof(int));
  x->recv_dsp = calloc((size_t)R, sizeof(int));
  int *at = calloc((size_t)R, sizeof(int));
  int ok = first && x->send_cnt && x->send_dsp && x->recv_cnt && x->recv_dsp && at;
  st = rt_agree(c->comm, ok ? SHIRO_OK : fail(c, SHIRO_ERR_NOMEM, "out of memory"), c->error, "shiro_ctx_set_values");
  /* every rank's nonzero count: the plan-wide numbering (first[p] = Σ_{q<p} nnz_q) */
  int64_t mine = pr->nacol;
  const int entered = st == SHIRO_OK;
  if (entered && MPI_Allgather(&mine, 1, MPI_INT64_T, first + 1, 1, MPI_INT64_T, c->comm) != MPI_SUCCESS)
    st = fail(c, SHIRO_ERR_MPI, "MPI_Allgather of the nonzero counts failed");
  if (entered) st = rt_agree(c->comm, st, c->error, "shiro_ctx_set_values");
  if (st != SHIRO_OK) {
    free(first);
    free(at);
    return st; /* the same on every rank: no collective below */
  }
  first[0] = 0;
  for (int p = 0; p < R; p++) first[p + 1] += first[p];
  if (first[R] != c->plan->meta.nnz) {
    st = fail(c, SHIRO_ERR_FORMAT, "the ranks' local matrices do not add up to the plan's nonzeros (files of different plans?)");
    goto done;
  }
  /* what this rank's program needs from each owner, in entry order: take[] and the indices wanted */
  for (int64_t e = 0; e < pr->nvalsrc; e++)
    if (pr->val_src[e] >= 0) x->recv_cnt[owner_of(first, R, pr->val_src[e])]++;
  if (!displs(x->recv_cnt, x->recv_dsp, R, &x->nrecv)) {
    st = fail(c, SHIRO_ERR_UNSUPPORTED, "more than 2^31-1 values to receive");
    goto done;
  }
  x->take = malloc(((size_t)x->nrecv + 1) * sizeof *x->take);
  want = malloc(((size_t)x->nrecv + 1) * sizeof *want);
  if (!x->take || !want) {
    st = fail(c, SHIRO_ERR_NOMEM, "out of memory (value exchange)");
    goto done;
  }
  for (int64_t e = 0; e < pr->nvalsrc; e++) {
    const int64_t id = pr->val_src[e];
    if (id < 0) continue;
    const int p = owner_of(first, R, id);
    const int64_t k = x->recv_dsp[p] + at[p]++;
    x->take[k] = e;
    want[k] = id - first[p];
  }
done:;
  /* the counts and the indices to the owners: collective, whatever happened here (agreed after) */
  shiro_status agreed = rt_agree(c->comm, st, c->error, "shiro_ctx_set_values (setting up the exchange)");
  if (agreed == SHIRO_OK && MPI_Alltoall(x->recv_cnt, 1, MPI_INT, x->send_cnt, 1, MPI_INT, c->comm) != MPI_SUCCESS)
    st = agreed = fail(c, SHIRO_ERR_MPI, "MPI_Alltoall of the counts failed");
  if (agreed == SHIRO_OK) {
    if (!displs(x->send_cnt, x->send_dsp, R, &x->nsend)) st = fail(c, SHIRO_ERR_UNSUPPORTED, "more than 2^31-1 values to send");
    else if (!(x->give = malloc(((size_t)x->nsend + 1) * sizeof *x->give))) st = fail(c, SHIRO_ERR_NOMEM, "out of memory");
    agreed = rt_agree(c->comm, st, c->error, "shiro_ctx_set_values (setting up the exchange)");
  }
  if (agreed == SHIRO_OK && MPI_Alltoallv(want, x->recv_cnt, x->recv_dsp, MPI_INT64_T, x->give, x->send_cnt, x->send_dsp, MPI_INT64_T, c->comm) != MPI_SUCCESS)
    st = fail(c, SHIRO_ERR_MPI, "MPI_Alltoallv of the wanted nonzeros failed");
  for (int64_t k = 0; st == SHIRO_OK && agreed == SHIRO_OK && k < x->nsend; k++)
    if (x->give[k] < 0 || x->give[k] >= pr->nacol) st = fail(c, SHIRO_ERR_FORMAT, "a rank wants a nonzero this rank does not have");
  free(first);
  free(want);
  free(at);
  if (agreed != SHIRO_OK) return agreed;
  st = rt_agree(c->comm, st, c->error, "shiro_ctx_set_values (setting up the exchange)");
  if (st == SHIRO_OK) x->ready = 1;
  return st;
}

/* The forward values, writable: float64 contexts get their own copy of the plan's (then their ops
 * point at it); float32 and 16-bit contexts have one already (valf). 0 when out of memory. */
static int own_values(shiro_ctx *c) {
  const prog_rank *pr = &c->plan->pr;
  if (c->opts.dtype != SHIRO_FLOAT64 || c->vald || pr->nval == 0) return 1;
  c->vald = malloc((size_t)pr->nval * sizeof *c->vald);
  if (!c->vald) return 0;
  memcpy(c->vald, pr->val, (size_t)pr->nval * sizeof *c->vald);
  c->val = c->vald;
  rt_program *f = &c->prog[RT_FORWARD];
  for (int64_t o = 0; o < f->nops; o++)
    if (f->op[o].kind == RT_MULTIPLY) f->op[o].val = c->val;
  return 1;
}

/* Writes the received values into the forward values and the transposed program's copy, then has
 * the backend take them. Local. */
static shiro_status install(shiro_ctx *c, const double *got) {
  const rt_values *x = &c->xv;
  for (int64_t k = 0; k < x->nrecv; k++) {
    if (c->vald) c->vald[x->take[k]] = got[k];
    else if (c->valf) c->valf[x->take[k]] = (float)got[k];
  }
  rt_program *t = &c->prog[RT_TRANSPOSE];
  if (t->ready > 0 && t->store.vsrc) {
    int64_t nent = 0;
    for (int64_t o = 0; o < t->nops; o++)
      if (t->op[o].kind == RT_MULTIPLY && t->op[o].nrows > 0 && t->op[o].ptr[t->op[o].nrows] > nent)
        nent = t->op[o].ptr[t->op[o].nrows];
    for (int64_t s = 0; s < nent; s++)
      if (t->store.vsrc[s] >= 0)
        memcpy((char *)t->store.val + (size_t)s * c->vsz, (const char *)c->val + (size_t)t->store.vsrc[s] * c->vsz, c->vsz);
  }
  shiro_status st = SHIRO_OK;
  if (c->be->values) {
    st = c->be->values(c, RT_FORWARD);
    if (st == SHIRO_OK && t->ready > 0) st = c->be->values(c, RT_TRANSPOSE);
  }
  return st;
}

/* values[t] as a double: float32 values widen exactly, so a float32 context gets them back bit for bit. */
static double value_at(const void *values, shiro_dtype dtype, int64_t t) {
  return dtype == SHIRO_FLOAT32 ? (double)((const float *)values)[t] : ((const double *)values)[t];
}

shiro_status shiro_ctx_set_values(shiro_ctx *c, const double *values) {
  return shiro_ctx_set_values_dtype(c, values, SHIRO_FLOAT64);
}

shiro_status shiro_ctx_set_values_dtype(shiro_ctx *c, const void *values, shiro_dtype dtype) {
  if (!c) return SHIRO_ERR_ARG;
  const prog_rank *pr = &c->plan->pr;
  c->error[0] = 0;
  shiro_status st = SHIRO_OK;
  if (split_busy(c, "shiro_ctx_set_values") != SHIRO_OK) {
    st = SHIRO_ERR_ARG; /* the call in progress multiplies by the values it began with */
  } else if (dtype != SHIRO_FLOAT32 && dtype != SHIRO_FLOAT64) {
    snprintf(c->error, sizeof c->error, "shiro_ctx_set_values_dtype: dtype %d, expected SHIRO_FLOAT32 or SHIRO_FLOAT64",
             (int)dtype);
    st = SHIRO_ERR_ARG;
  } else if (pr->naptr == 0)
    st = fail(c, SHIRO_ERR_VERSION, "the plan is format 2.0, which does not say where each value is multiplied (since 2.1): "
                                    "plan the matrix again with this shiro-plan");
  else if (!values && pr->nacol > 0) {
    snprintf(c->error, sizeof c->error, "shiro_ctx_set_values: values is NULL (this rank has %lld nonzeros)", (long long)pr->nacol);
    st = SHIRO_ERR_ARG;
  } else if (!own_values(c))
    st = fail(c, SHIRO_ERR_NOMEM, "out of memory (the context's copy of the values)");
  st = rt_agree(c->comm, st, c->error, "shiro_ctx_set_values");
  if (st == SHIRO_OK && !c->xv.ready) st = values_setup(c);
  if (st != SHIRO_OK) return st;
  const rt_values *x = &c->xv;
  double *send = malloc(((size_t)x->nsend + 1) * sizeof *send), *got = malloc(((size_t)x->nrecv + 1) * sizeof *got);
  if (send && got)
    for (int64_t k = 0; k < x->nsend; k++) send[k] = value_at(values, dtype, x->give[k]);
  else
    st = fail(c, SHIRO_ERR_NOMEM, "out of memory (value exchange)");
  st = rt_agree(c->comm, st, c->error, "shiro_ctx_set_values");
  if (st == SHIRO_OK && MPI_Alltoallv(send, x->send_cnt, x->send_dsp, MPI_DOUBLE, got, x->recv_cnt, x->recv_dsp, MPI_DOUBLE, c->comm) != MPI_SUCCESS)
    st = fail(c, SHIRO_ERR_MPI, "MPI_Alltoallv of the values failed");
  st = rt_agree(c->comm, st, c->error, "shiro_ctx_set_values"); /* installed only where every rank has its values */
  if (st == SHIRO_OK) st = install(c, got);
  free(send);
  free(got);
  if (st != SHIRO_OK) {
    char why[sizeof c->error];
    memcpy(why, c->error, sizeof why);
    snprintf(c->error, sizeof c->error, "%.300s (%s backend)", why, c->be->name);
  }
  return rt_agree(c->comm, st, c->error, "shiro_ctx_set_values");
}
