/* internal.h — the runtime's private structs: the plan handle, the context,
 * and the interpreter's entry points (interp.c, agree.c). */
#ifndef SHIRO_INTERNAL_H
#define SHIRO_INTERNAL_H

#include <stddef.h>

#include "backend.h"
#include "cpu_kernels.h"
#include "plan_file.h"
#include "program.h"
#include "shiro.h"
#include "stages.h"

struct shiro_plan {
  prog_meta meta; /* root attributes */
  prog_rank pr; /* this rank's program; arrays point into map */
  plan_mapping map; /* the mapped bytes of this rank's arrays */
  int checked; /* 1 once checksums and plan_check_rank passed */
  int64_t *ids; /* contiguous partitions: [c_rows + b_rows] the global ids c_first + i, then b_first + i
                         (shiro_plan_info's c_global / b_global); NULL when the plan lists its rows */
  int pattern_mismatch; /* 1 if shiro_plan_check_pattern found another matrix */
};

#define SHIRO_MSG_LEN 512 /* bytes of every message buffer (shiro_error.message, ctx.error) */

/* The two programs a context runs: the plan's (C = A·B) and the one the
 * interpreter derives from it for the transposed product (X = Aᵀ·Y). */
enum { RT_FORWARD = 0,
       RT_TRANSPOSE = 1 };

/* A program as the interpreter runs it: decoded ops and stages. The forward
 * program's arrays are the plan's; a derived program owns its own (store). */
typedef struct rt_program {
  int ready; /* 1 once prepared and loaded by the backend */
  int64_t nops;
  rt_op *op; /* [nops] */
  rt_stages stages; /* its exchange records by stage, in posting order */
  struct { /* owned by a derived program (NULL for the forward one) */
    int64_t *ptr;
    int32_t *col, *rows;
    void *val;
    int64_t *vsrc; /* [entries] the forward entry whose value val[slot] is, -1 for none
                                (shiro_ctx_set_values refreshes val through it) */
    int64_t *xchg;
  } store;
} rt_program;

/* What shiro_ctx_set_values set up at its first call: who needs which of this rank's values (the
 * plan's val_src, grouped by owner rank), for one MPI_Alltoallv per call. */
typedef struct rt_values {
  int ready; /* 1 once set up */
  int *send_cnt, *send_dsp; /* [R] values this rank sends each rank (of its local matrix) */
  int *recv_cnt, *recv_dsp; /* [R] values it receives from each rank (for its own program) */
  int64_t nsend, nrecv; /* totals */
  int64_t *give; /* [nsend] the local nonzero each sent value is, by destination rank */
  int64_t *take; /* [nrecv] the forward entry (position in val) each received value goes to */
} rt_values;

/* What shiro_sddmm set up at its first call (sddmm.c), kept for the later ones: no allocation per call. */
typedef struct rt_sddmm {
  int ready; /* 1 once set up */
  void *s, *r; /* the forward walk's S and R rows (pr->s_rows, pr->r_rows rows of N values), kept while the
                  transposed walk reuses the buffers */
  double *ent; /* [nval] ⟨G_i, B_j⟩ of each forward entry (position in val) */
  double *send, *got; /* [xv.nrecv], [xv.nsend]: the entries' sums back to the nonzeros' owners */
  double *acc; /* [nacol] float32 contexts: the sums per local nonzero, in set_values order */
  int *scnt, *rcnt; /* [R] xv's send_cnt / recv_cnt but 0 for this rank itself */
  int me; /* this rank in the context's communicator */
} rt_sddmm;

struct shiro_ctx {
  shiro_plan *plan; /* borrowed: must outlive the context */
  MPI_Comm comm; /* duplicate of the application's communicator (own tag space) */
  shiro_ctx_options opts;
  int64_t n; /* the call's width, the columns of B and C (1 .. opts.n): opts.n but during a
                                call of another width (shiro_spmm_n; width.c), whose rows are packed at n
                                values in B, C, S and R alike */
  size_t esz; /* bytes per value of B and C (and of the rows on the wire): 2, 4 or 8 */
  size_t vsz; /* bytes per value of A and of the kernels' arithmetic: 4 (float32 and the 16-bit
                                types, which compute in float32) or 8 */
  const void *call_in; /* the call in progress's input (B, or Y) and output (C, or X), set by */
  void *call_out; /* interp_begin for the backends' begin and finish */
  const backend *be; /* the backend running this context */
  void *state; /* the backend's own state (owned by it) */
  /* What the interpreter prepared (interp_prepare; the transposed program at the first transposed call): */
  rt_program prog[2]; /* RT_FORWARD, RT_TRANSPOSE */
  int dir; /* the program the current call runs (backends' start/wait look here) */
  const void *val; /* the plan's values in the context's type: pr.val (float64) or valf */
  float *valf; /* float32 and 16-bit contexts: the values rounded once (owned), else NULL */
  double *vald; /* float64 contexts after shiro_ctx_set_values: the values (owned), else NULL */
  rt_values xv; /* shiro_ctx_set_values' exchange (values.c) */
  rt_sddmm sd; /* shiro_sddmm's buffers (sddmm.c) */
  int64_t rows[PROG_NBUF]; /* rows of each buffer: B, C, S, R as the plan says, S and R with room for
                                the transposed program's extra receive rows (interp_prepare) */
  void *buf[PROG_NBUF]; /* S and R (rows[] rows each), allocated by the backend's setup (B and C come with each call) */
  shiro_traffic traffic; /* per-call traffic of this rank */
  int64_t rs[PROG_NBUF], cs[PROG_NBUF]; /* the call's layout of each buffer: value (i, j) at i·rs + j·cs
                                            values from row 0 (rs = n, cs = 1 but during a call of
                                            shiro_spmm_layout with another layout for B or C; layout.c) */
  int strided; /* 1 while rs / cs of B or C are not the dense rows' */
  void *stage[2]; /* dense rows of B (b_rows × N) and C (c_rows × N) for calls in another layout,
                     made at the first such call (layout.c), else NULL */
  struct { /* a split call (shiro_spmm_begin .. shiro_spmm_end; split.c) */
    int active; /* 1 between a begin that succeeded and its end */
    int dir; /* RT_FORWARD or RT_TRANSPOSE */
    const void *in; /* B (Y) and C (X) of the call, borrowed until its end */
    void *out;
    int64_t next; /* the first op end runs (the program's nops: begin ran them all) */
    void *user_out; /* a layout call's output (shiro_spmm_layout_begin), copied from the staging rows
                       at end; NULL otherwise */
    int64_t out_rs, out_cs; /* its layout */
    int relayout; /* 1: end puts the context back to dense rows (layout_split_end) */
  } split;
  int threads; /* OpenMP threads of the CPU kernels in each call (rt_threads_choose) */
  char threads_why[256]; /* how that count was chosen, in words (shiro_ctx_get_threads) */
  char error[SHIRO_MSG_LEN]; /* message of the last failed call */
};

/* interp.c: decodes the forward program's ops, the values in the context's
 * type and the stages into c->prog[RT_FORWARD] (c->plan, c->opts and c->esz
 * are set). Local; on failure c->error says why, and interp_release frees
 * what was made (of both programs). */
shiro_status interp_prepare(shiro_ctx *c);
void interp_release(shiro_ctx *c);

/* transpose.c: derives c->prog[RT_TRANSPOSE] from the forward program (see
 * transpose.c for how). Local; allocates; on failure c->error says why. */
shiro_status interp_transpose(shiro_ctx *c);
/* transpose.c: the rows of each buffer a context allocates for pr: the plan's, and for S and R
 * room for the transposed program's receives that go through spare rows (those that add into a
 * row with other contributions). Local, cheap (one pass over the messages). */
void transpose_extra_rows(const prog_rank *pr, int64_t rows[PROG_NBUF]);
/* transpose.c: how many ops a transposed op Mᵀ of mt_rows rows (listed) and mt_cols columns (its
 * source rows) becomes, split by blocks of *brows source rows (block_bytes / row_bytes, at least 1):
 * 1 when its rows are more than a quarter of its columns (unless forced) or its columns fit in one
 * block, else one per block. Pure. */
int64_t transpose_split_count(int64_t mt_rows, int64_t mt_cols, size_t row_bytes, size_t block_bytes, int forced,
                              int64_t *brows);
void interp_program_free(rt_program *p);

/* interp.c: decodes op o of pr into *op (what interp_prepare does for every
 * op, but val is left NULL: the caller points MULTIPLY ops at its values). */
void interp_decode(const prog_rank *pr, int64_t o, rt_op *op);

/* Called after op o of a call has been issued (profiling; NULL for none). */
typedef shiro_status (*interp_hook)(shiro_ctx *c, int64_t o, void *arg);

/* interp.c: runs one call of program dir (RT_FORWARD: in = B, out = C;
 * RT_TRANSPOSE: in = Y in C's place, out = X in B's place): begin, every op
 * in program order (kernels and transport of c->be), finish. Allocates
 * nothing. Failures: c->error. */
shiro_status interp_run(shiro_ctx *c, int dir, const void *in, void *out, interp_hook hook, void *arg);

/* interp.c: the start of a call of program dir on in and out: c->dir, c->call_in, c->call_out set,
 * then the backend's begin (if any). interp_run and split.c's begin start every call here. */
shiro_status interp_begin(shiro_ctx *c, int dir, const void *in, void *out);

/* interp.c: ops lo .. hi-1 of program dir in program order (no begin, no finish: interp_run adds
 * them; split.c runs a call in two parts). Allocates nothing. Failures: c->error. */
shiro_status interp_ops(shiro_ctx *c, int dir, const void *in, void *out, int64_t lo, int64_t hi, interp_hook hook,
                        void *arg);
/* interp.c: interp_ops without some compute ops: those that write buffer b where skip has bit
 * 1 << b (PROG_BUF_*), and every MULTIPLY where it has INTERP_SKIP_MULTIPLY; 0 skips none.
 * shiro_sddmm walks both programs without their products (it needs only the rows they move) and
 * passes NULL for the buffer it does not need (C, X). Allocates nothing. */
#define INTERP_SKIP_MULTIPLY (1 << PROG_NBUF)
shiro_status interp_ops_skip(shiro_ctx *c, int dir, const void *in, void *out, int64_t lo, int64_t hi, int skip,
                             interp_hook hook, void *arg);
/* interp.c: the index of program p's first WAIT op (its nops if none): where a split call's begin
 * stops, every exchange of the first stage started and the work before its wait done. Pure. */
int64_t interp_first_wait(const rt_program *p);

/* split.c: SHIRO_ERR_ARG with a message in c->error when a split call is in progress on c (`what`
 * may not run then), else SHIRO_OK. Local. */
shiro_status split_busy(shiro_ctx *c, const char *what);
/* ctx.c: the transposed program, derived and loaded at the first transposed call; the ranks agree
 * on it (collective). */
shiro_status ctx_ready_transpose(shiro_ctx *c);
/* ctx.c: the local checks of a call's buffers (NULL where the rank owns rows, overlap), with the
 * message in c->error naming `what` and the buffers `nin` and `nout`. Local. */
shiro_status ctx_check_buffers(shiro_ctx *c, int dir, const void *in, void *out, const char *what);

/* values.c: frees what shiro_ctx_set_values set up (c->xv, c->vald). */
void values_release(shiro_ctx *c);
/* values.c: sets up c->xv (who sends which value to whom; shiro_sddmm sends the gradients back the
 * same way). Collective: every rank calls it, after agreeing; returns an agreed status. Allocates. */
shiro_status values_setup(shiro_ctx *c);
/* sddmm.c: frees what shiro_sddmm set up (c->sd). */
void sddmm_release(shiro_ctx *c);
/* ctx.c: the least (*lo) and the most (*hi) width n passed over the context's communicator, and
 * *any_out = 1 if a rank passed one outside 1 .. N (one MPI_Allreduce). 0 on an MPI failure. */
int ctx_agree_width(shiro_ctx *c, int64_t n, int64_t *lo, int64_t *hi, int *any_out);

/* threads.c: the OpenMP threads of a context's CPU kernels, into *threads (>= 1), and why, in words,
 * into why: `requested` if > 0, else omp_get_max_threads() where OMP_NUM_THREADS is set, else
 * rt_threads_share of the node's CPUs among the ranks of comm on this node (MPI_COMM_TYPE_SHARED).
 * Collective over comm (one MPI_Comm_split_type, whatever was requested). */
void rt_threads_choose(MPI_Comm comm, int requested, int *threads, char *why, size_t why_len);
/* threads.c: node_cpus / node_ranks, at most `usable` (the CPUs of this rank's binding), at least 1:
 * never more threads on a node than it has CPUs, unless it has more ranks than CPUs. Pure. */
int rt_threads_share(int node_cpus, int node_ranks, int usable);

/* layout.c: every buffer's layout back to dense rows of the call's width (rs = c->n, cs = 1). Local. */
void layout_reset(shiro_ctx *c);
/* split.c: the begin of a split call of program dir (in: B or Y, out: C or X, in the layout set),
 * `what` naming the call; on failure the call is over. */
shiro_status split_begin(shiro_ctx *c, int dir, const void *in, void *out, const char *what);
/* layout.c: the end of a split call begun in another layout (shiro_spmm_layout_begin): copies the
 * output from the staging rows into the caller's layout if the call succeeded (st), and puts the
 * context back to dense rows. Returns st. Local. */
shiro_status layout_split_end(shiro_ctx *c, shiro_status st);
/* layout.c: frees the staging rows of calls in another layout. */
void layout_release(shiro_ctx *c);

/* ctx.c: "float32", "float64", "bfloat16", "float16" (or "an unknown type"). Pure. */
const char *ctx_dtype_name(int64_t dtype);

/* ctx.c: the checks of shiro_spmm_checked for either direction (dir), the width n agreed on across the
 * ranks, then the call at width n. Collective. */
shiro_status ctx_checked(shiro_ctx *c, int dir, const void *in, void *out, int64_t n, shiro_dtype dtype,
                         const char *what);

/* agree.c: agrees on a local status across comm (collective): SHIRO_OK only if
 * every rank passed SHIRO_OK; otherwise every rank returns the status of P,
 * the lowest failing rank, and gets in msg (SHIRO_MSG_LEN bytes) P's own
 * message: "WHAT failed on rank P[ (and K other ranks)]: P's message". msg is
 * read on P only (its message) and written on every rank after a failure.
 * Costs two one-int MPI_Allreduce calls, and a broadcast only after a failure. */
shiro_status rt_agree(MPI_Comm comm, shiro_status st, char *msg, const char *what);

#endif
