/* test_split.c — split-phase calls (run under mpirun, any rank count): shiro_spmm_begin / end and
 * shiro_spmm_transpose_begin / end give the bits of the blocking calls, call after call, with the
 * caller's own work in between, float and double, N = 1 and 7, on a flat (joint) and, with 4
 * ranks or more, a two-tier (group, 2 ranks per node: two stages) plan; between begin and end
 * every other call on the context is refused (SHIRO_ERR_ARG) and the call in progress still ends
 * right; end without begin, the other direction's end, and a begin refused for a NULL buffer are
 * errors that leave the context usable. The plans are written by rank 0 (ca-GrQc). */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shiro.h"
#include "test_plan.h"
#include "test_util.h"

static int rank, size;

static void put(void *p, size_t esz, int64_t e, double v) {
  if (esz == 4) ((float *)p)[e] = (float)v;
  else ((double *)p)[e] = v;
}

/* The caller's own work between begin and end: a dense update of its own array. */
static double own_work(double *w, int64_t len) {
  double s = 0;
  for (int64_t i = 0; i < len; i++) s += (w[i] = w[i] * 0.5 + 1.0);
  return s;
}

static void one(shiro_plan *plan, const shiro_plan_info *in, shiro_dtype dt, int64_t n, const char *tag) {
  shiro_ctx_options o = shiro_ctx_options_default();
  o.dtype = dt;
  o.n = n;
  shiro_ctx *ctx = NULL;
  shiro_error err;
  if (shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx, &err) != SHIRO_OK) {
    EXPECT(0, "create: %s", err.message);
    return;
  }
  const size_t esz = dt == SHIRO_FLOAT32 ? 4 : 8, cb = (size_t)(in->c_rows * n) * esz, bb = (size_t)(in->b_rows * n) * esz;
  void *B = malloc(bb + esz), *C = malloc(cb + esz), *C2 = malloc(cb + esz), *Y = malloc(cb + esz), *X = malloc(bb + esz),
       *X2 = malloc(bb + esz);
  double *w = calloc(4096, sizeof *w);
  for (int64_t i = 0; i < in->b_rows * n; i++) put(B, esz, i, (double)((in->b_global[i / n] * 5 + i % n * 3) % 17) / 8.0 - 1.0);
  for (int64_t i = 0; i < in->c_rows * n; i++) put(Y, esz, i, (double)((in->c_global[i / n] * 3 + i % n * 7) % 13) / 4.0 - 1.5);
  EXPECT(shiro_spmm(ctx, B, C) == SHIRO_OK && shiro_spmm_transpose(ctx, Y, X) == SHIRO_OK, "%s: blocking: %s", tag,
         shiro_ctx_last_error(ctx));
  for (int round = 0; round < 3; round++) {
    memset(C2, 0x7f, cb);
    memset(X2, 0x7f, bb);
    shiro_status st = shiro_spmm_begin(ctx, B, C2);
    EXPECT(st == SHIRO_OK, "%s: begin: %s", tag, shiro_ctx_last_error(ctx));
    own_work(w, 4096);
    if (round == 1) { /* every other call on the context is refused while the call is in progress */
      EXPECT(shiro_spmm(ctx, B, C) == SHIRO_ERR_ARG && strstr(shiro_ctx_last_error(ctx), "split call is in progress"),
             "%s: shiro_spmm during a split call: %s", tag, shiro_ctx_last_error(ctx));
      EXPECT(shiro_spmm_begin(ctx, B, C) == SHIRO_ERR_ARG, "%s: a second begin accepted", tag);
      EXPECT(shiro_spmm_transpose(ctx, Y, X) == SHIRO_ERR_ARG, "%s: a transposed call during a split call", tag);
      EXPECT(shiro_spmm_layout(ctx, SHIRO_ROW_MAJOR, B, n, C, n) == SHIRO_ERR_ARG, "%s: a layout call during a split call", tag);
      EXPECT(shiro_spmm_checked(ctx, B, C, n, dt) == SHIRO_ERR_ARG, "%s: a checked call during a split call", tag);
      EXPECT(shiro_spmm_transpose_end(ctx) == SHIRO_ERR_ARG, "%s: the transposed end of a forward call", tag);
    }
    if (st == SHIRO_OK) {
      st = shiro_spmm_end(ctx);
      EXPECT(st == SHIRO_OK, "%s: end: %s", tag, shiro_ctx_last_error(ctx));
      EXPECT(!memcmp(C, C2, cb), "rank %d, %s, round %d: begin + end differ from shiro_spmm", rank, tag, round);
    }
    st = shiro_spmm_transpose_begin(ctx, Y, X2);
    EXPECT(st == SHIRO_OK, "%s: transpose begin: %s", tag, shiro_ctx_last_error(ctx));
    own_work(w, 4096);
    if (st == SHIRO_OK) {
      EXPECT(shiro_spmm_end(ctx) == SHIRO_ERR_ARG, "%s: the forward end of a transposed call", tag);
      st = shiro_spmm_transpose_end(ctx);
      EXPECT(st == SHIRO_OK, "%s: transpose end: %s", tag, shiro_ctx_last_error(ctx));
      EXPECT(!memcmp(X, X2, bb), "rank %d, %s, round %d: transposed begin + end differ", rank, tag, round);
    }
  }
  /* misuse outside a call: end without begin; a begin refused (NULL C on every rank) is no call */
  EXPECT(shiro_spmm_end(ctx) == SHIRO_ERR_ARG && strstr(shiro_ctx_last_error(ctx), "no shiro_spmm_begin"),
         "%s: end without begin: %s", tag, shiro_ctx_last_error(ctx));
  if (in->c_rows > 0) {
    EXPECT(shiro_spmm_begin(ctx, B, NULL) == SHIRO_ERR_ARG && strstr(shiro_ctx_last_error(ctx), "C_local"),
           "%s: begin with C NULL: %s", tag, shiro_ctx_last_error(ctx));
    EXPECT(shiro_spmm_end(ctx) == SHIRO_ERR_ARG, "%s: end after a refused begin", tag);
  }
  memset(C2, 0, cb);
  EXPECT(shiro_spmm(ctx, B, C2) == SHIRO_OK && !memcmp(C, C2, cb), "%s: a blocking call after the misuse", tag);
  free(B);
  free(C);
  free(C2);
  free(Y);
  free(X);
  free(X2);
  free(w);
  shiro_ctx_destroy(&ctx);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *mtx = argc > 1 ? argv[1] : "data/ca-GrQc.mtx";
  struct {
    sc_strategy s;
    int32_t gpn;
    const char *name;
  } plans[] = {{STRAT_JOINT, 1, "joint"}, {STRAT_GROUP, 2, "group G=2"}};
  for (int p = 0; p < (size >= 4 ? 2 : 1); p++) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/shiro-split-%d-%d.h5", (int)getppid(), p);
    if (!test_world_plan(mtx, path, plans[p].s, plans[p].gpn)) {
      MPI_Finalize();
      return 1;
    }
    shiro_plan *plan = NULL;
    shiro_error err;
    shiro_plan_info in;
    EXPECT(shiro_plan_open_comm(path, MPI_COMM_WORLD, &plan, &err) == SHIRO_OK && shiro_plan_get_info(plan, &in) == SHIRO_OK,
           "open: %s", err.message);
    for (int d = 0; plan && d < 2; d++)
      for (int64_t n = 1; n <= 7; n += 6) {
        char tag[96];
        snprintf(tag, sizeof tag, "%s, %s, N = %lld", plans[p].name, d ? "double" : "float", (long long)n);
        one(plan, &in, d ? SHIRO_FLOAT64 : SHIRO_FLOAT32, n, tag);
      }
    shiro_plan_close(&plan);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) unlink(path);
  }
  int fails = 0;
  MPI_Allreduce(&test_failures, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("%s: %d failures\n", fails ? "FAIL" : "ok", fails);
  MPI_Finalize();
  return fails != 0;
}
