/* cpu_backend.c — the CPU backend's table: host buffers, OpenMP kernels, the MPI transport.
 *
 * The 16-bit types (SHIRO_BFLOAT16, SHIRO_FLOAT16) compute in float32: the ops that read the call's
 * input read its 16-bit rows in place, widening each value (exactly) as they load it (cpu_src16.c;
 * an input in another layout is widened into `in32` at begin instead, as every input was before:
 * that pass was a seventh of the call on soc-Slashdot0902), the ops write `out32` and float32 S and
 * R (c->buf), each stage's rows to send are rounded (once, to nearest even) into 16-bit `wire`
 * buffers just before they are posted, the rows received are widened back after the wait, and
 * `out32` is rounded into the caller's output at finish. So every sum is the float32 context's, in
 * the same order; what differs is one rounding per hop of a partial row and one of each output
 * value. SHIRO_16_WIDEN=1 in the environment (read at the context's creation) keeps the widening
 * pass for every input: the old path, for comparing the two. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cpu_src16.h"
#include "half.h"
#include "internal.h"
#include "mpi_xport.h"

/* An op's rows with entries, where many of them have none: what the kernels walk in its place. */
typedef struct cpu_dense_rows {
  int64_t nrows; /* rows with entries (0: the op runs as stored) */
  int64_t *ptr; /* [nrows+1] their row pointers (absolute positions in the op's col / val) */
  int32_t *rows; /* [nrows] their destination rows (relative to dst_off) */
} cpu_dense_rows;

/* The CPU backend's state, per program (RT_FORWARD, RT_TRANSPOSE): the persistent requests, and
 * per op (by index) its rows with entries where the op adds into contiguous rows most of which have
 * none (cpu_load). */
typedef struct cpu_state {
  mpi_xport x[2];
  cpu_dense_rows *dense[2]; /* [nops] or NULL */
  int64_t ndense[2];
  /* 16-bit contexts only (else NULL): */
  uint16_t *wire[PROG_NBUF]; /* [S] and [R]: the rows on the wire, 16-bit (c->buf's are float32) */
  float *in32, *out32; /* the call's input widened, its output before rounding (the most rows of B and C) */
  int in_place; /* this call's ops read its 16-bit input in place (dense rows), else in32 */
  int64_t sole[2]; /* per program: the index of the op that alone writes the output, all its rows by
                      `=`, from the input (sole_writer), or -1 */
  int out_direct; /* this call's sole writer rounds into the caller's output: no pass at finish */
  int widen_always; /* SHIRO_16_WIDEN=1: in32 for every call */
} cpu_state;

/* A zeroed host buffer of rows x row_bytes bytes (at least one row), NULL when out of memory. From
 * 2 MiB on it is 2 MiB-aligned and asked for transparent huge pages (madvise; a hint the kernel may
 * ignore): the buffers are what shared-memory MPI copies into and out of, and Open MPI's single
 * copy (CMA) moved 2.5 MB at 19-23 GB/s between huge pages against 9-10 GB/s between 4 KiB ones on
 * this VM; the kernels' random reads of received rows take fewer TLB misses too. Freed with free(). */
static void *host_buffer(int64_t rows, size_t row_bytes) {
  enum { HUGE = 2 << 20 };
  size_t bytes = (size_t)(rows > 0 ? rows : 1) * row_bytes;
  if (bytes < HUGE) return calloc(1, bytes);
  size_t whole = (bytes + HUGE - 1) / HUGE * HUGE;
  void *p = aligned_alloc(HUGE, whole);
  if (!p) return NULL;
#ifdef MADV_HUGEPAGE
  (void)madvise(p, whole, MADV_HUGEPAGE);
#endif
  memset(p, 0, whole);
  return p;
}

/* Frees program d's compacted rows. */
static void free_dense(cpu_state *s, int d) {
  for (int64_t i = 0; s->dense[d] && i < s->ndense[d]; i++) {
    free(s->dense[d][i].ptr);
    free(s->dense[d][i].rows);
  }
  free(s->dense[d]);
  s->dense[d] = NULL;
  s->ndense[d] = 0;
}

static void cpu_destroy(shiro_ctx *c) {
  cpu_state *s = c->state;
  if (s) {
    mpi_xport_destroy(&s->x[0]);
    mpi_xport_destroy(&s->x[1]);
    free_dense(s, 0);
    free_dense(s, 1);
    free(s->wire[PROG_BUF_S]);
    free(s->wire[PROG_BUF_R]);
    free(s->in32);
    free(s->out32);
  }
  free(s);
  free(c->buf[PROG_BUF_S]);
  free(c->buf[PROG_BUF_R]);
  c->buf[PROG_BUF_S] = c->buf[PROG_BUF_R] = NULL;
  c->state = NULL;
}

static shiro_status cpu_setup(shiro_ctx *c) {
  const size_t n = (size_t)c->opts.n;
  const prog_rank *pr = &c->plan->pr;
  c->buf[PROG_BUF_S] = host_buffer(c->rows[PROG_BUF_S], n * c->vsz);
  c->buf[PROG_BUF_R] = host_buffer(c->rows[PROG_BUF_R], n * c->vsz);
  cpu_state *s = c->state = calloc(1, sizeof(cpu_state));
  int ok = c->buf[PROG_BUF_S] && c->buf[PROG_BUF_R] && s;
  if (ok && half_is16(c->opts.dtype)) {
    const int64_t io = pr->b_rows > pr->c_rows ? pr->b_rows : pr->c_rows;
    s->wire[PROG_BUF_S] = host_buffer(c->rows[PROG_BUF_S], n * c->esz);
    s->wire[PROG_BUF_R] = host_buffer(c->rows[PROG_BUF_R], n * c->esz);
    s->in32 = host_buffer(io, n * sizeof(float));
    s->out32 = host_buffer(io, n * sizeof(float));
    ok = s->wire[PROG_BUF_S] && s->wire[PROG_BUF_R] && s->in32 && s->out32;
    s->sole[0] = s->sole[1] = -1; /* until cpu_load finds one */
    const char *w = getenv("SHIRO_16_WIDEN");
    s->widen_always = w && !strcmp(w, "1");
  }
  if (!ok) {
    snprintf(c->error, sizeof c->error, "out of memory (send and receive buffers: %lld and %lld rows of %zu bytes)",
             (long long)c->rows[PROG_BUF_S], (long long)c->rows[PROG_BUF_R], n * c->vsz);
    return SHIRO_ERR_NOMEM;
  }
  return SHIRO_OK;
}

/* The rows of op with entries if it should run over them only, else -1: it adds (an empty row is
 * then nothing to do) into contiguous rows, and at least a quarter of them have no entry. A
 * REMOTE_B op walks all of a rank's C rows, most of them empty where few B rows arrive: on mdual at
 * R = 2 the walk of 129,284 rows for 18,788 entries took 323 us against 64 us for a listed add of
 * 23,902 rows. */
static int64_t rows_to_compact(const rt_op *op) {
  if (op->kind == RT_GATHER || !op->accum || op->rows || op->nrows < 64) return -1;
  int64_t m = 0;
  for (int64_t i = 0; i < op->nrows; i++) m += op->ptr[i + 1] > op->ptr[i];
  return op->nrows - m >= op->nrows / 4 ? m : -1;
}

/* Program d's compacted ops (rows_to_compact): their rows with entries, listed. Same entries in
 * the same order, so the same bits; the ptr stays absolute, so new values (shiro_ctx_set_values,
 * which rewrites op->val) need nothing here. */
static shiro_status compact_ops(shiro_ctx *c, cpu_state *s, int d) {
  const rt_program *p = &c->prog[d];
  free_dense(s, d);
  s->dense[d] = calloc((size_t)(p->nops > 0 ? p->nops : 1), sizeof *s->dense[d]);
  if (!s->dense[d]) return SHIRO_ERR_NOMEM;
  s->ndense[d] = p->nops;
  for (int64_t k = 0; k < p->nops; k++) {
    const rt_op *op = &p->op[k];
    const int64_t m = rows_to_compact(op);
    if (m < 0) continue;
    cpu_dense_rows *z = &s->dense[d][k];
    z->ptr = malloc((size_t)(m + 1) * sizeof *z->ptr);
    z->rows = malloc((size_t)(m ? m : 1) * sizeof *z->rows);
    if (!z->ptr || !z->rows) return SHIRO_ERR_NOMEM;
    z->ptr[0] = op->ptr[0];
    for (int64_t i = 0, j = 0; i < op->nrows; i++)
      if (op->ptr[i + 1] > op->ptr[i]) {
        z->rows[j] = (int32_t)i;
        z->ptr[++j] = op->ptr[i + 1];
      }
    z->nrows = m;
    if (m == 0) z->ptr[0] = op->ptr[op->nrows];
  }
  return SHIRO_OK;
}

/* 16-bit: the index of program d's op that writes its output alone (a multiply of the input that
 * assigns every output row, contiguous, and no other op writes or reads the output: a one-rank
 * plan's local product), so that it may round its rows into the caller's output as it stores
 * them; -1 if there is none. */
static int64_t sole_writer(const shiro_ctx *c, int d) {
  const rt_program *p = &c->prog[d];
  const prog_rank *pr = &c->plan->pr;
  const int in_buf = d == RT_FORWARD ? PROG_BUF_B : PROG_BUF_C, out_buf = PROG_BUF_B + PROG_BUF_C - in_buf;
  const int64_t out_rows = d == RT_FORWARD ? pr->c_rows : pr->b_rows;
  int64_t found = -1;
  for (int64_t k = 0; k < p->nops; k++) {
    const rt_op *op = &p->op[k];
    if (op->kind != RT_MULTIPLY && op->kind != RT_GATHER && op->kind != RT_ADD) continue;
    if (op->src_buf == out_buf) return -1;
    if (op->dst_buf != out_buf) continue;
    if (found >= 0 || op->kind != RT_MULTIPLY || op->accum || op->rows || op->dst_off != 0 || op->nrows != out_rows ||
        op->src_buf != in_buf)
      return -1;
    found = k;
  }
  return found;
}

static shiro_status cpu_load(shiro_ctx *c, int d) {
  cpu_state *s = c->state;
  s->sole[d] = s->in32 && c->opts.n <= SRC16_ROW_MAX ? sole_writer(c, d) : -1;
  if (compact_ops(c, s, d) != SHIRO_OK) {
    snprintf(c->error, sizeof c->error, "out of memory (the row lists of the adds into C)");
    return SHIRO_ERR_NOMEM;
  }
  void *const wire[PROG_NBUF] = {NULL, NULL, s->wire[PROG_BUF_S], s->wire[PROG_BUF_R]};
  return mpi_xport_setup(&s->x[d], &c->prog[d].stages, c->comm, c->opts.dtype, c->opts.n,
                         half_is16(c->opts.dtype) ? wire : c->buf, c->error);
}

/* A compute op (multiply, gather or add, as op->kind says) on the kernels (cpu_kernels.c); while a
 * stage is in flight they poll its requests between chunks of rows, so that its messages move during
 * the multiply (not only in the wait). */
static shiro_status cpu_compute(shiro_ctx *c, const rt_op *op, void *const bufs[PROG_NBUF]) {
  cpu_state *s = c->state;
  mpi_xport *x = &s->x[c->dir];
  const cpu_progress pg = {mpi_xport_poll, x};
  rt_op dense;
  if (s->dense[c->dir] && op->index >= 0 && op->index < s->ndense[c->dir] && s->dense[c->dir][op->index].ptr) {
    const cpu_dense_rows *z = &s->dense[c->dir][op->index];
    dense = *op;
    dense.nrows = z->nrows;
    dense.ptr = z->ptr;
    dense.rows = z->rows;
    op = &dense;
  }
  const cpu_layout lay = {c->rs[op->dst_buf], c->cs[op->dst_buf], c->rs[op->src_buf], c->cs[op->src_buf]};
  int rows_dense = lay.dst_cs == 1 && lay.src_cs == 1 && lay.dst_rs == c->n && lay.src_rs == c->n;
  void *dst = bufs[op->dst_buf];
  const void *src = bufs[op->src_buf];
  if (s->in32) { /* 16-bit: the float32 copies of the call's input and output, dense rows */
    const int in_buf = c->dir == RT_FORWARD ? PROG_BUF_B : PROG_BUF_C, out_buf = PROG_BUF_B + PROG_BUF_C - in_buf;
    if (op->dst_buf == out_buf) dst = s->out32;
    if (op->src_buf == out_buf) src = s->out32;
    if (op->src_buf == in_buf && s->in_place) {
      const int sole = s->out_direct && op->index == s->sole[c->dir];
      cpu_kernel_run_src16(op, dst, sole ? (uint16_t *)c->call_out : NULL, src, c->opts.dtype, c->n, c->threads,
                           mpi_xport_in_flight(x) ? &pg : NULL);
      return SHIRO_OK;
    }
    if (op->src_buf == in_buf) src = s->in32;
    rows_dense = 1;
  }
  cpu_kernel_run(op, dst, src, c->opts.dtype == SHIRO_FLOAT64, c->n, c->threads, rows_dense ? NULL : &lay,
                 mpi_xport_in_flight(x) ? &pg : NULL);
  return SHIRO_OK;
}

/* 16-bit: the ranges of stage `stage` that it sends (out) rounded from c->buf into the wire
 * buffers, or that it received (!out) widened from the wire into c->buf. */
static void convert_ranges(shiro_ctx *c, const cpu_state *s, int32_t stage, int out) {
  const rt_stages *sg = &c->prog[c->dir].stages;
  const rt_stage *g = &sg->stage[stage];
  const int64_t first = out ? g->out_first : g->in_first, count = out ? g->nout : g->nin, n = c->n;
  for (int64_t k = first; k < first + count; k++) {
    const rt_range *r = &sg->ranges[k];
    float *f = (float *)c->buf[r->buf] + r->row * n;
    uint16_t *h = s->wire[r->buf] + r->row * n;
    if (out) half_round(c->opts.dtype, h, n, 1, f, r->count, n, c->threads);
    else half_widen(c->opts.dtype, f, h, r->count, n, n, 1, c->threads);
  }
}

/* 16-bit: the call's input read in place by the ops (dense rows), or widened into in32 (from the
 * caller's layout; X = Aᵀ·Y's Y is in C's place). */
static shiro_status cpu_begin(shiro_ctx *c) {
  cpu_state *s = c->state;
  if (!s->in32) return SHIRO_OK;
  const prog_rank *pr = &c->plan->pr;
  const int fwd = c->dir == RT_FORWARD, k = fwd ? PROG_BUF_B : PROG_BUF_C;
  const int kout = PROG_BUF_B + PROG_BUF_C - k;
  s->in_place = !s->widen_always && c->rs[k] == c->n && c->cs[k] == 1;
  s->out_direct = s->in_place && s->sole[c->dir] >= 0 && c->rs[kout] == c->n && c->cs[kout] == 1;
  if (s->in_place) return SHIRO_OK;
  half_widen(c->opts.dtype, s->in32, c->call_in, fwd ? pr->b_rows : pr->c_rows, c->n, c->rs[k], c->cs[k], c->threads);
  return SHIRO_OK;
}

/* 16-bit: out32 rounded into the caller's output (in its layout), once the call has succeeded. */
static shiro_status cpu_finish(shiro_ctx *c, shiro_status st) {
  const cpu_state *s = c->state;
  if (st != SHIRO_OK || !s->out32 || s->out_direct) return st; /* out_direct: rounded by its sole writer */
  const prog_rank *pr = &c->plan->pr;
  const int fwd = c->dir == RT_FORWARD, k = fwd ? PROG_BUF_C : PROG_BUF_B;
  half_round(c->opts.dtype, c->call_out, c->rs[k], c->cs[k], s->out32, fwd ? pr->c_rows : pr->b_rows, c->n, c->threads);
  return SHIRO_OK;
}

static shiro_status cpu_start(shiro_ctx *c, int32_t stage) {
  cpu_state *s = c->state;
  if (s->in32) convert_ranges(c, s, stage, 1);
  return mpi_xport_start(&s->x[c->dir], stage, c->n, c->error);
}
static shiro_status cpu_wait(shiro_ctx *c, int32_t stage) {
  cpu_state *s = c->state;
  const shiro_status st = mpi_xport_wait(&s->x[c->dir], stage, c->error);
  if (st == SHIRO_OK && s->in32) convert_ranges(c, s, stage, 0);
  return st;
}

const backend cpu_backend = {
    .name = "cpu",
    .setup = cpu_setup,
    .load = cpu_load,
    .multiply = cpu_compute, /* the kernel follows op->kind */
    .gather = cpu_compute,
    .add = cpu_compute,
    .start = cpu_start,
    .wait = cpu_wait,
    .begin = cpu_begin,
    .finish = cpu_finish,
    .destroy = cpu_destroy,
};
