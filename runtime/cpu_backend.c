/* cpu_backend.c — the CPU backend: OpenMP kernels, MPI persistent requests.
 *
 * One call interprets the rank's program: MUL ops run the OpenMP kernel,
 * START s starts every persistent request of stage s (sends and receives in
 * flight together), WAIT s completes them. The requests are made once, at
 * context creation, over the context's buffers. */
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "internal.h"

typedef struct cpu_state {
  void *S, *R;               /* send / receive buffers: s_rows × N, r_rows × N */
  void *valf;                /* float32 copy of the plan's values (float contexts), else NULL */
  MPI_Datatype row_type;     /* N contiguous values */
  int64_t nreq;              /* persistent requests, ordered by stage */
  MPI_Request *req;          /* [nreq] */
  int64_t *stage_first;      /* [nstages+1] requests of stage s: req[stage_first[s] .. stage_first[s+1]-1] */
} cpu_state;

static void cpu_destroy(shiro_ctx *c) {
  cpu_state *s = c->state;
  if (!s) return;
  for (int64_t r = 0; r < s->nreq; r++) MPI_Request_free(&s->req[r]);
  if (s->row_type != MPI_DATATYPE_NULL) MPI_Type_free(&s->row_type);
  free(s->req); free(s->stage_first); free(s->S); free(s->R); free(s->valf);
  free(s);
  c->state = NULL;
}

static shiro_status cpu_setup(shiro_ctx *c, shiro_error *err) {
  const prog_rank *pr = &c->plan->pr;
  int64_t n = c->opts.n;
  cpu_state *s = calloc(1, sizeof *s);
  if (!s) return shiro_fail(err, SHIRO_ERR_NOMEM, "shiro_ctx_create: out of memory");
  c->state = s;
  s->row_type = MPI_DATATYPE_NULL;
  s->S = calloc((size_t)(pr->s_rows ? pr->s_rows : 1) * (size_t)n, c->esz);
  s->R = calloc((size_t)(pr->r_rows ? pr->r_rows : 1) * (size_t)n, c->esz);
  s->req = malloc((size_t)(pr->nx ? pr->nx : 1) * sizeof *s->req);
  s->stage_first = calloc((size_t)pr->nstages + 2, sizeof *s->stage_first);
  if (!s->S || !s->R || !s->req || !s->stage_first) return shiro_fail(err, SHIRO_ERR_NOMEM, "shiro_ctx_create: out of memory");
  if (c->opts.dtype == SHIRO_FLOAT32 && pr->nval) {
    float *v = malloc((size_t)pr->nval * sizeof *v);
    if (!v) return shiro_fail(err, SHIRO_ERR_NOMEM, "shiro_ctx_create: out of memory");
    for (int64_t e = 0; e < pr->nval; e++) v[e] = (float)pr->val[e];
    s->valf = v;
  }
  MPI_Datatype base = c->opts.dtype == SHIRO_FLOAT32 ? MPI_FLOAT : MPI_DOUBLE;
  if (MPI_Type_contiguous((int)n, base, &s->row_type) != MPI_SUCCESS || MPI_Type_commit(&s->row_type) != MPI_SUCCESS)
    return shiro_fail(err, SHIRO_ERR_MPI, "shiro_ctx_create: cannot make the row datatype");
  for (int32_t st = 0; st < pr->nstages; st++) {
    s->stage_first[st] = s->nreq;
    for (int64_t x = 0; x < pr->nx; x++) {
      const int64_t *r = pr->xchg + x * PROG_X_WIDTH;
      if (r[XF_STAGE] != st) continue;
      char *base_ptr = r[XF_BUF] == PROG_BUF_S ? s->S : s->R;
      void *addr = base_ptr + (size_t)r[XF_OFF] * (size_t)n * c->esz;
      int rc = r[XF_DIR] == 0
                   ? MPI_Send_init(addr, (int)r[XF_COUNT], s->row_type, (int)r[XF_PEER], xchg_tag(r), c->comm, &s->req[s->nreq])
                   : MPI_Recv_init(addr, (int)r[XF_COUNT], s->row_type, (int)r[XF_PEER], xchg_tag(r), c->comm, &s->req[s->nreq]);
      if (rc != MPI_SUCCESS) return shiro_fail(err, SHIRO_ERR_MPI, "shiro_ctx_create: cannot create a persistent request");
      s->nreq++;
    }
  }
  s->stage_first[pr->nstages] = s->nreq;
  return SHIRO_OK;
}

/* Base address of a program buffer for this call. */
static void *buffer(cpu_state *s, int64_t buf, const void *B, void *C) {
  switch (buf) {
    case PROG_BUF_B: return (void *)B;
    case PROG_BUF_C: return C;
    case PROG_BUF_S: return s->S;
    case PROG_BUF_R: return s->R;
  }
  return NULL;
}

static shiro_status fail(shiro_ctx *c, shiro_status st, const char *what) {
  snprintf(c->error, sizeof c->error, "shiro_spmm: %s", what);
  return st;
}

static shiro_status cpu_spmm(shiro_ctx *c, const void *B, void *C) {
  cpu_state *s = c->state;
  const prog_rank *pr = &c->plan->pr;
  for (int64_t o = 0; o < pr->nops; o++) {
    const int64_t *op = pr->ops + o * PROG_OP_WIDTH;
    int64_t st = op[OPF_STAGE];
    MPI_Request *rq = s->req + s->stage_first[st];
    int nrq = (int)(s->stage_first[st + 1] - s->stage_first[st]);
    if (op[OPF_KIND] == PROG_OP_START) {
      if (nrq && MPI_Startall(nrq, rq) != MPI_SUCCESS) return fail(c, SHIRO_ERR_MPI, "MPI_Startall failed");
    } else if (op[OPF_KIND] == PROG_OP_WAIT) {
      if (nrq && MPI_Waitall(nrq, rq, MPI_STATUSES_IGNORE) != MPI_SUCCESS) return fail(c, SHIRO_ERR_MPI, "MPI_Waitall failed");
    } else {
      void *dst = buffer(s, op[OPF_DST_BUF], B, C);
      const void *src = buffer(s, op[OPF_SRC_BUF], B, C);
      if (c->opts.dtype == SHIRO_FLOAT64) cpu_mul_f64(pr, op, pr->val, dst, src, c->opts.n);
      else cpu_mul_f32(pr, op, s->valf, dst, src, c->opts.n);
    }
  }
  return SHIRO_OK;
}

const backend_ops cpu_backend = {"cpu", cpu_setup, cpu_spmm, cpu_destroy};
