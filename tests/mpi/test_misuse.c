/* test_misuse.c — misuse of the runtime gets a clear status on EVERY rank and
 * never a hang (run under mpirun with 3 ranks): wrong N, wrong value type,
 * NULL buffers (shiro_spmm_checked), B and C overlapping, a plan for another
 * matrix, a rank that opened another rank's part, bad options, a NULL plan or
 * a NULL context pointer on one rank, ranks asking for different contexts, and
 * an MPI failure inside a call (injected through the profiling interface),
 * which must come back as a status, not abort. A correct call afterwards still
 * gives the right product. Every agreed failure carries the failing rank's own
 * message to every rank, also from a rank that passed no shiro_error; so does
 * shiro_plan_open_comm (a NULL path, file or plan pointer on one rank, a
 * communicator smaller than the plan). */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blocks.h"
#include "digest.h" /* with shiro.h: the compiler checks the two shiro_pattern_digest prototypes agree */
#include "mm_read.h"
#include "plan_build.h"
#include "plan_file.h"
#include "shiro.h"
#include "shiro_config.h"
#include "test_plan.h"
#include "test_util.h"

static int rank, size;

/* Injected MPI failures, through the MPI profiling interface: MPI_Send_init records the communicator
 * libshiro makes its requests on (the context's); while inject_startall is set, MPI_Startall makes a
 * real MPI call fail on that communicator (a negative count) and returns its error code. Under
 * MPI_ERRORS_ARE_FATAL that call would abort the process, so the test passes only if the context's
 * communicator returns errors and libshiro turns them into a status. */
static MPI_Comm requests_comm = MPI_COMM_NULL;
static int inject_startall = 0;

int MPI_Send_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  requests_comm = comm;
  return PMPI_Send_init(buf, count, type, dest, tag, comm, req);
}

int MPI_Startall(int count, MPI_Request reqs[]) {
  if (inject_startall && requests_comm != MPI_COMM_NULL) return PMPI_Send(NULL, -1, MPI_INT, 0, 0, requests_comm);
  return PMPI_Startall(count, reqs);
}

/* Every rank must see `want`; prints what each saw on failure. */
static void expect_all(shiro_status got, shiro_status want, const char *what, const char *msg) {
  EXPECT(got == want, "rank %d, %s: status %d (%s), expected %d", rank, what, (int)got, msg, (int)want);
}

/* Every rank's message holds each of the (up to two) needles. */
static void expect_said(const char *msg, const char *what, const char *a, const char *b) {
  EXPECT(strstr(msg, a) && (!b || strstr(msg, b)), "rank %d, %s: message '%s' lacks '%s'%s%s", rank, what, msg, a,
         b ? " or " : "", b ? b : "");
}

/* shiro_plan_open_comm misused on one rank (or launched on a communicator of the wrong size): every
 * rank gets the same status and the failing rank's own message, and no plan. */
static void open_comm_misuse(const char *path) {
  shiro_error err = {{0}};
  shiro_plan *p = (shiro_plan *)&err; /* not NULL: the call must clear it */
  expect_all(shiro_plan_open_comm(rank == 1 ? NULL : path, MPI_COMM_WORLD, &p, &err), SHIRO_ERR_ARG, "open_comm: NULL path on rank 1",
             err.message);
  EXPECT(p == NULL, "rank %d: plan left set after a failed open", rank);
  expect_said(err.message, "NULL path on rank 1", "failed on rank 1", "path is NULL");
  /* the failing rank passes no err: the others still get its message */
  expect_all(shiro_plan_open_comm(rank == 0 ? "/nonexistent/plan.h5" : path, MPI_COMM_WORLD, &p, rank == 0 ? NULL : &err),
             SHIRO_ERR_IO, "open_comm: missing file on rank 0", rank == 0 ? "(no err)" : err.message);
  if (rank != 0) expect_said(err.message, "missing file on rank 0", "failed on rank 0", "/nonexistent/plan.h5");
  expect_all(shiro_plan_open_comm(path, MPI_COMM_WORLD, rank == 2 ? NULL : &p, &err), SHIRO_ERR_ARG, "open_comm: NULL plan on rank 2",
             err.message);
  expect_said(err.message, "NULL plan on rank 2", "failed on rank 2", "plan is NULL");
  EXPECT(rank == 2 || p == NULL, "rank %d: plan set after a failed open", rank);
  /* a communicator smaller than the plan's ranks: every rank of it says so */
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank < 2, rank, &half);
  int hs = 0;
  MPI_Comm_size(half, &hs);
  char want[64];
  snprintf(want, sizeof want, "made for %d ranks but the communicator has %d", size, hs);
  expect_all(shiro_plan_open_comm(path, half, &p, &err), SHIRO_ERR_MISMATCH, "open_comm on a sub-communicator", err.message);
  expect_said(err.message, "open_comm on a sub-communicator", want, NULL);
  MPI_Comm_free(&half);
  expect_all(shiro_plan_open_comm(path, MPI_COMM_NULL, &p, &err), SHIRO_ERR_ARG, "open_comm on MPI_COMM_NULL", err.message);
  expect_said(err.message, "open_comm on MPI_COMM_NULL", "MPI_COMM_NULL", NULL);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char path[64];
  snprintf(path, sizeof path, "/tmp/shiro-misuse-%d.h5", (int)getppid());
  if (!test_world_plan("data/karate.mtx", path, STRAT_JOINT, 1)) {
    MPI_Finalize();
    return 1;
  }
  shiro_error err = {{0}};
  shiro_plan *plan = NULL, *other = NULL;
  open_comm_misuse(path);
  EXPECT(shiro_plan_open_comm(path, MPI_COMM_WORLD, &plan, &err) == SHIRO_OK, "open: %s", err.message);
  shiro_plan_info in;
  EXPECT(shiro_plan_get_info(plan, &in) == SHIRO_OK, "info");
  /* The global ids of the local rows are there for a contiguous (block) partition too. */
  EXPECT(in.c_global && in.b_global, "rank %d: c_global / b_global NULL for a block partition", rank);
  for (int64_t i = 0; in.c_global && i < in.c_rows; i++) EXPECT(in.c_global[i] == in.c_first + i, "c_global[%lld]", (long long)i);
  for (int64_t i = 0; in.b_global && i < in.b_rows; i++) EXPECT(in.b_global[i] == in.b_first + i, "b_global[%lld]", (long long)i);
  shiro_ctx_options o = shiro_ctx_options_default();
  o.n = 4;
  shiro_ctx *ctx = NULL;

  /* Bad options on one rank: every rank fails. */
  o.n = rank == 1 ? 0 : 4;
  expect_all(shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx, &err), SHIRO_ERR_ARG, "N = 0 on rank 1", err.message);
  expect_said(err.message, "N = 0 on rank 1", "failed on rank 1: ", "N = 0, expected 1");
  EXPECT(ctx == NULL, "ctx set after failure");
  /* Two causes on two ranks: every rank gets the lowest's status and message, and the count. */
  o.n = rank == 1 ? 0 : 4;
  o.timeout_ms = rank == 2 ? -1 : 0;
  expect_all(shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx, &err), SHIRO_ERR_ARG, "N = 0 on rank 1, timeout -1 on rank 2", err.message);
  expect_said(err.message, "N = 0 on rank 1, timeout -1 on rank 2", "failed on rank 1 (and 1 other rank): ", "N = 0");
  o.timeout_ms = 0;
  o.n = 4;
  /* A NULL plan on one rank. */
  expect_all(shiro_ctx_create(rank == 2 ? NULL : plan, MPI_COMM_WORLD, &o, &ctx, &err), SHIRO_ERR_ARG, "NULL plan on rank 2", err.message);
  /* A rank that opened another rank's part. */
  EXPECT(shiro_plan_open(path, (rank + 1) % size, &other, &err) == SHIRO_OK, "open other: %s", err.message);
  expect_all(shiro_ctx_create(rank == 0 ? other : plan, MPI_COMM_WORLD, &o, &ctx, &err), SHIRO_ERR_MISMATCH,
             "rank 0 opened rank 1's part", err.message);
  expect_said(err.message, "rank 0 opened rank 1's part", "rank 0 opened the plan part of rank 1", NULL);
  /* the same with no err on the failing rank */
  expect_all(shiro_ctx_create(rank == 0 ? other : plan, MPI_COMM_WORLD, &o, &ctx, rank == 0 ? NULL : &err), SHIRO_ERR_MISMATCH,
             "rank 0 opened rank 1's part, no err", rank == 0 ? "(no err)" : err.message);
  if (rank != 0) expect_said(err.message, "rank 0 opened rank 1's part, no err", "rank 0 opened the plan part of rank 1", NULL);
  shiro_plan_close(&other);
  /* A NULL context pointer on one rank: the others must not wait for it. */
  expect_all(shiro_ctx_create(plan, MPI_COMM_WORLD, &o, rank == 2 ? NULL : &ctx, &err), SHIRO_ERR_ARG, "NULL ctx on rank 2", err.message);
  EXPECT(ctx == NULL, "ctx set after failure");
  /* Ranks asking for different contexts (each valid on its own): every rank fails, saying what differs. */
  o.n = rank == 1 ? 5 : 4;
  expect_all(shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx, &err), SHIRO_ERR_ARG, "N = 5 on rank 1 only", err.message);
  EXPECT(strstr(err.message, "different N (from 4 to 5)"), "message: %s", err.message);
  o.n = 4;
  o.dtype = rank == 2 ? SHIRO_FLOAT32 : SHIRO_FLOAT64;
  expect_all(shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx, &err), SHIRO_ERR_ARG, "float32 on rank 2 only", err.message);
  EXPECT(strstr(err.message, "different value types"), "message: %s", err.message);
  o.dtype = SHIRO_FLOAT64;
  o.backend = rank == 0 ? SHIRO_BACKEND_CUDA : SHIRO_BACKEND_CPU;
  expect_all(shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx, &err), SHIRO_HAVE_CUDA ? SHIRO_ERR_ARG : SHIRO_ERR_UNSUPPORTED,
             "CUDA on rank 0 only", err.message);
  /* The sim backend exists only in tools/sim/simulate.sh's SimGrid build: refused here, and named. */
  o.backend = rank == 1 ? SHIRO_BACKEND_SIM : SHIRO_BACKEND_CPU;
  expect_all(shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx, &err), SHIRO_HAVE_SIM ? SHIRO_ERR_ARG : SHIRO_ERR_UNSUPPORTED,
             "sim on rank 1 only", err.message);
  EXPECT(SHIRO_HAVE_SIM || rank != 1 || strstr(err.message, "simulation build"), "message: %s", err.message);
  o.backend = SHIRO_BACKEND_CPU;
  EXPECT(ctx == NULL, "ctx set after failure");
  o.timeout_ms = rank == 1 ? -1 : 0;
  expect_all(shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx, &err), SHIRO_ERR_ARG, "timeout_ms = -1 on rank 1", err.message);
  o.timeout_ms = 0;
  o.threads = rank == 2 ? -1 : 0;
  expect_all(shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx, &err), SHIRO_ERR_ARG, "threads = -1 on rank 2", err.message);
  expect_said(err.message, "threads = -1 on rank 2", "failed on rank 2", "threads = -1");
  o.threads = 0;

  /* The real context, then misused calls. */
  EXPECT(shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx, &err) == SHIRO_OK, "create: %s", err.message);
  double *B = calloc((size_t)in.b_rows * 4 + 1, sizeof *B), *C = calloc((size_t)in.c_rows * 4 + 1, sizeof *C);
  for (int64_t i = 0; i < in.b_rows * 4; i++) B[i] = (double)((in.b_first * 4 + i) % 7) - 3;
  expect_all(shiro_spmm_checked(ctx, B, C, rank == 1 ? 5 : 4, SHIRO_FLOAT64), SHIRO_ERR_ARG, "N = 5 on rank 1", shiro_ctx_last_error(ctx));
  expect_said(shiro_ctx_last_error(ctx), "spmm_checked N = 5 on rank 1", "rank 1 passed N = 5", "nothing was computed");
  expect_all(shiro_spmm_checked(ctx, B, C, 4, rank == 2 ? SHIRO_FLOAT32 : SHIRO_FLOAT64), SHIRO_ERR_ARG, "float on rank 2",
             shiro_ctx_last_error(ctx));
  expect_all(shiro_spmm_checked(ctx, rank == 0 ? NULL : B, C, 4, SHIRO_FLOAT64), SHIRO_ERR_ARG, "NULL B on rank 0",
             shiro_ctx_last_error(ctx));
  /* B and C overlapping: refused by shiro_spmm_checked on every rank, and by shiro_spmm on the rank itself. */
  double *BC = calloc((size_t)(in.b_rows > in.c_rows ? in.b_rows : in.c_rows) * 4 + 1, sizeof *BC);
  expect_all(shiro_spmm_checked(ctx, B, rank == 1 ? (void *)B : C, 4, SHIRO_FLOAT64), SHIRO_ERR_ARG, "C = B on rank 1",
             shiro_ctx_last_error(ctx));
  expect_said(shiro_ctx_last_error(ctx), "spmm_checked C = B on rank 1", "rank 1 passed B_local and C_local that overlap", NULL);
  expect_all(shiro_spmm(ctx, BC, BC + 1), SHIRO_ERR_ARG, "shiro_spmm with C inside B", shiro_ctx_last_error(ctx));
  EXPECT(strstr(shiro_ctx_last_error(ctx), "overlap"), "message: %s", shiro_ctx_last_error(ctx));
  free(BC);
  /* An MPI failure inside a call: a status on every rank that exchanges anything, no abort. */
  shiro_traffic tr;
  EXPECT(shiro_ctx_get_traffic(ctx, &tr) == SHIRO_OK, "traffic");
  inject_startall = 1;
  shiro_status injected = shiro_spmm(ctx, B, C);
  inject_startall = 0;
  const int exchanges = tr.rows_sent + tr.rows_received > 0;
  EXPECT(injected == (exchanges ? SHIRO_ERR_MPI : SHIRO_OK), "rank %d: injected MPI failure gave status %d (%s)", rank, (int)injected,
         shiro_ctx_last_error(ctx));
  if (exchanges) EXPECT(strstr(shiro_ctx_last_error(ctx), "MPI_Startall"), "message: %s", shiro_ctx_last_error(ctx));
  /* A correct call still computes the product. */
  EXPECT(shiro_spmm_checked(ctx, B, C, 4, SHIRO_FLOAT64) == SHIRO_OK, "good call: %s", shiro_ctx_last_error(ctx));
  sc_csr *A = NULL;
  EXPECT(mm_read("data/karate.mtx", &A, NULL, &err) == SHIRO_OK, "read");
  double worst = 0;
  for (int64_t i = 0; A && i < in.c_rows; i++)
    for (int c = 0; c < 4; c++) {
      double ref = 0;
      for (int64_t t = A->Ap[in.c_first + i]; t < A->Ap[in.c_first + i + 1]; t++)
        ref += A->Ax[t] * ((double)((A->Aj[t] * 4 + c) % 7) - 3);
      worst = fmax(worst, fabs(ref - C[i * 4 + c]));
    }
  EXPECT(worst == 0, "rank %d: product off by %g", rank, worst);
  shiro_ctx_destroy(&ctx);
  EXPECT(ctx == NULL, "destroy clears the handle");
  shiro_ctx_destroy(&ctx); /* no-op */

  /* A plan for another matrix: the application's rows do not match on rank 1. */
  /* the public digest, on the application's 64-bit columns (the compiler's CSR holds 32-bit ones) */
  int64_t *cols64 = malloc((size_t)(A->nnz ? A->nnz : 1) * sizeof *cols64);
  EXPECT(cols64 != NULL, "out of memory");
  for (int64_t t = 0; cols64 && t < A->nnz; t++) cols64[t] = A->Aj[t];
  uint64_t d = cols64 ? shiro_pattern_digest(in.c_rows, A->k, A->Ap + in.c_first, cols64) : 0;
  free(cols64);
  EXPECT(shiro_plan_check_pattern(plan, rank == 1 ? d + 1 : d, &err) == (rank == 1 ? SHIRO_ERR_MISMATCH : SHIRO_OK),
         "pattern check on rank %d: %s", rank, err.message);
  expect_all(shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx, &err), SHIRO_ERR_MISMATCH, "plan of another matrix", err.message);

  sc_csr_free(A);
  free(B);
  free(C);
  shiro_plan_close(&plan);
  shiro_plan_close(&plan); /* no-op */
  int fails = 0;
  MPI_Allreduce(&test_failures, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    unlink(path);
    printf("%s: %d failures\n", fails ? "FAIL" : "ok", fails);
  }
  MPI_Finalize();
  return fails != 0;
}
