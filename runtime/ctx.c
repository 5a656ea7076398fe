/* ctx.c — context lifecycle: checks against the launch, buffers, persistent requests. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "internal.h"

shiro_ctx_options shiro_ctx_options_default(void) {
  shiro_ctx_options o = {.backend = SHIRO_BACKEND_CPU, .dtype = SHIRO_FLOAT64, .n = 1};
  return o;
}

/* Local checks of the options and the launch against the plan. */
static shiro_status check_launch(shiro_plan *plan, MPI_Comm comm, const shiro_ctx_options *o, shiro_error *err) {
  int size = 0, rank = 0;
  if (MPI_Comm_size(comm, &size) != MPI_SUCCESS || MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
    return shiro_fail(err, SHIRO_ERR_MPI, "shiro_ctx_create: cannot query the communicator");
  if (size != plan->meta.ranks)
    return shiro_fail(err, SHIRO_ERR_MISMATCH, "the plan was made for %d ranks but the communicator has %d (launch with -np %d)",
                      plan->meta.ranks, size, plan->meta.ranks);
  if (rank != plan->pr.rank)
    return shiro_fail(err, SHIRO_ERR_MISMATCH, "rank %d opened the plan part of rank %d", rank, plan->pr.rank);
  if (o->dtype != SHIRO_FLOAT32 && o->dtype != SHIRO_FLOAT64)
    return shiro_fail(err, SHIRO_ERR_ARG, "shiro_ctx_create: unknown dtype %d", (int)o->dtype);
  if (o->n < 1 || o->n > INT_MAX)
    return shiro_fail(err, SHIRO_ERR_ARG, "shiro_ctx_create: N = %lld, expected 1 .. %d", (long long)o->n, INT_MAX);
  if (o->backend == SHIRO_BACKEND_CUDA)
    return shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "shiro_ctx_create: the CUDA backend is not built in this library");
  if (o->backend != SHIRO_BACKEND_CPU)
    return shiro_fail(err, SHIRO_ERR_ARG, "shiro_ctx_create: unknown backend %d", (int)o->backend);
  if (!plan->checked) {
    shiro_status st = plan_check_rank(&plan->meta, &plan->pr, err);
    if (st != SHIRO_OK) return st;
    plan->checked = 1;
  }
  return SHIRO_OK;
}

/* Buffers, value copy, datatype and one persistent request per exchange record, grouped by stage. */
static shiro_status setup_cpu(shiro_ctx *c, shiro_error *err) {
  const prog_rank *pr = &c->plan->pr;
  int64_t n = c->opts.n;
  c->S = calloc((size_t)(pr->s_rows ? pr->s_rows : 1) * (size_t)n, c->esz);
  c->R = calloc((size_t)(pr->r_rows ? pr->r_rows : 1) * (size_t)n, c->esz);
  c->req = malloc((size_t)(pr->nx ? pr->nx : 1) * sizeof *c->req);
  c->stage_first = calloc((size_t)pr->nstages + 2, sizeof *c->stage_first);
  if (!c->S || !c->R || !c->req || !c->stage_first) return shiro_fail(err, SHIRO_ERR_NOMEM, "shiro_ctx_create: out of memory");
  if (c->opts.dtype == SHIRO_FLOAT32 && pr->nval) {
    float *v = malloc((size_t)pr->nval * sizeof *v);
    if (!v) return shiro_fail(err, SHIRO_ERR_NOMEM, "shiro_ctx_create: out of memory");
    for (int64_t e = 0; e < pr->nval; e++) v[e] = (float)pr->val[e];
    c->valf = v;
  }
  MPI_Datatype base = c->opts.dtype == SHIRO_FLOAT32 ? MPI_FLOAT : MPI_DOUBLE;
  if (MPI_Type_contiguous((int)n, base, &c->row_type) != MPI_SUCCESS || MPI_Type_commit(&c->row_type) != MPI_SUCCESS)
    return shiro_fail(err, SHIRO_ERR_MPI, "shiro_ctx_create: cannot make the row datatype");
  for (int32_t s = 0; s < pr->nstages; s++) {
    c->stage_first[s] = c->nreq;
    for (int64_t x = 0; x < pr->nx; x++) {
      const int64_t *r = pr->xchg + x * PROG_X_WIDTH;
      if (r[XF_STAGE] != s) continue;
      char *base_ptr = r[XF_BUF] == PROG_BUF_S ? c->S : c->R;
      void *addr = base_ptr + (size_t)r[XF_OFF] * (size_t)n * c->esz;
      int tag = (int)(s * 16 + r[XF_KIND]);  /* kinds never share a tag: no reliance on posting order */
      int rc = r[XF_DIR] == 0
                   ? MPI_Send_init(addr, (int)r[XF_COUNT], c->row_type, (int)r[XF_PEER], tag, c->comm, &c->req[c->nreq])
                   : MPI_Recv_init(addr, (int)r[XF_COUNT], c->row_type, (int)r[XF_PEER], tag, c->comm, &c->req[c->nreq]);
      if (rc != MPI_SUCCESS) return shiro_fail(err, SHIRO_ERR_MPI, "shiro_ctx_create: cannot create a persistent request");
      c->nreq++;
      if (r[XF_DIR] == 0) {
        c->traffic.rows_sent += r[XF_COUNT];
        if (r[XF_TIER]) c->traffic.inter_node_rows_sent += r[XF_COUNT];
      } else {
        c->traffic.rows_received += r[XF_COUNT];
      }
    }
  }
  c->stage_first[pr->nstages] = c->nreq;
  c->traffic.bytes_sent = c->traffic.rows_sent * n * (int64_t)c->esz;
  c->traffic.bytes_received = c->traffic.rows_received * n * (int64_t)c->esz;
  return SHIRO_OK;
}

/* Agrees on the outcome across comm: if any rank failed, every rank fails,
 * and the others' message names the lowest failing rank. */
static shiro_status agree(MPI_Comm comm, shiro_status st, shiro_error *err) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int in[2] = {st != SHIRO_OK ? rank : INT_MAX, (int)st}, lowest = INT_MAX, worst = 0;
  if (MPI_Allreduce(&in[0], &lowest, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS ||
      MPI_Allreduce(&in[1], &worst, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
    return shiro_fail(err, SHIRO_ERR_MPI, "shiro_ctx_create: MPI_Allreduce failed");
  if (st != SHIRO_OK || lowest == INT_MAX) return st;
  return shiro_fail(err, (shiro_status)worst, "shiro_ctx_create failed on rank %d (see its message)", lowest);
}

shiro_status shiro_ctx_create(shiro_plan *plan, MPI_Comm comm, const shiro_ctx_options *opts, shiro_ctx **ctx,
                              shiro_error *err) {
  if (!ctx) return shiro_fail(err, SHIRO_ERR_ARG, "shiro_ctx_create: ctx is NULL");
  *ctx = NULL;
  if (comm == MPI_COMM_NULL) return shiro_fail(err, SHIRO_ERR_ARG, "shiro_ctx_create: comm is MPI_COMM_NULL");
  shiro_status st = SHIRO_OK;
  shiro_ctx *c = NULL;
  if (!plan || !opts) st = shiro_fail(err, SHIRO_ERR_ARG, "shiro_ctx_create: plan or options is NULL");
  else st = check_launch(plan, comm, opts, err);
  if (st == SHIRO_OK) {
    c = calloc(1, sizeof *c);
    if (!c) st = shiro_fail(err, SHIRO_ERR_NOMEM, "shiro_ctx_create: out of memory");
  }
  if (st == SHIRO_OK) {
    c->plan = plan;
    c->opts = *opts;
    c->esz = opts->dtype == SHIRO_FLOAT32 ? sizeof(float) : sizeof(double);
    c->row_type = MPI_DATATYPE_NULL;
    c->comm = MPI_COMM_NULL;
    if (MPI_Comm_dup(comm, &c->comm) != MPI_SUCCESS) st = shiro_fail(err, SHIRO_ERR_MPI, "shiro_ctx_create: MPI_Comm_dup failed");
  }
  if (st == SHIRO_OK) st = setup_cpu(c, err);
  st = agree(comm, st, err);
  if (st != SHIRO_OK) {
    shiro_ctx_destroy(&c);
    return st;
  }
  *ctx = c;
  return SHIRO_OK;
}

const char *shiro_ctx_last_error(const shiro_ctx *ctx) { return ctx ? ctx->error : ""; }

shiro_status shiro_ctx_get_traffic(const shiro_ctx *ctx, shiro_traffic *t) {
  if (!ctx || !t) return SHIRO_ERR_ARG;
  *t = ctx->traffic;
  return SHIRO_OK;
}

void shiro_ctx_destroy(shiro_ctx **ctx) {
  if (!ctx || !*ctx) return;
  shiro_ctx *c = *ctx;
  for (int64_t r = 0; r < c->nreq; r++) MPI_Request_free(&c->req[r]);
  if (c->row_type != MPI_DATATYPE_NULL) MPI_Type_free(&c->row_type);
  if (c->comm != MPI_COMM_NULL) MPI_Comm_free(&c->comm);
  free(c->req); free(c->stage_first); free(c->S); free(c->R); free(c->valf);
  free(c);
  *ctx = NULL;
}
