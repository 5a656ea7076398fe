/* test_layout.c — shiro_spmm_layout and shiro_spmm_transpose_layout (run under mpirun, any rank
 * count): B and C (Y and X) column-major, and row-major with a leading dimension above N, give
 * the very bits of the dense row-major call, forward and transposed, float and double, N = 1, 3
 * and 8, on a flat (joint) and, with 4 ranks or more, a two-tier (group, 2 ranks per node) plan;
 * the values outside the N columns (or rows) of C and X are not touched; an ld below its least
 * or an unknown layout is refused naming it; the split-phase layout calls (begin in the layout,
 * end) give the same bits. The calls run through the context's staging rows;
 * a context that cannot get them (its allocations refused here) runs them in place, with the same
 * bits. The plans are written by rank 0 (ca-GrQc), and the
 * contexts get values other than 1 (shiro_ctx_set_values). */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shiro.h"
#include "test_plan.h"
#include "test_util.h"

static int rank, size;
static const double SENTINEL = -12345.5;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define REFUSE_ALLOCS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define REFUSE_ALLOCS 0
#endif
#endif
#ifndef REFUSE_ALLOCS
#define REFUSE_ALLOCS 1
#endif

static size_t refuse_bytes; /* while armed, malloc of exactly this many bytes returns NULL (0: none) */
static int armed; /* 1 during the layout calls of the context whose staging rows are refused */
static long refused; /* how many it refused */

#if REFUSE_ALLOCS
/* glibc's malloc under the name this program defines: the library's calls pass here. */
extern void *__libc_malloc(size_t n);
void *malloc(size_t n) {
  if (armed && n == refuse_bytes) {
    refused++;
    return NULL;
  }
  return __libc_malloc(n);
}
#endif

/* Value v at element e of a buffer of esz-byte values. */
static void put(void *p, size_t esz, int64_t e, double v) {
  if (esz == 4) ((float *)p)[e] = (float)v;
  else ((double *)p)[e] = v;
}
static int same(const void *a, int64_t ea, const void *b, int64_t eb, size_t esz) {
  return !memcmp((const char *)a + ea * (int64_t)esz, (const char *)b + eb * (int64_t)esz, esz);
}

/* A buffer of rows × n values in a layout (col: column-major) with leading dimension ld: the dense
 * values where given (else the sentinel), the sentinel in the padding. */
static void *laid(const void *dense, int64_t rows, int64_t n, int col, int64_t ld, size_t esz) {
  const int64_t total = (col ? ld * n : rows * ld) + 1;
  void *p = malloc((size_t)total * esz);
  for (int64_t e = 0; e < total; e++) put(p, esz, e, SENTINEL);
  for (int64_t i = 0; dense && i < rows; i++)
    for (int64_t j = 0; j < n; j++) memcpy((char *)p + (col ? i + j * ld : i * ld + j) * (int64_t)esz,
                                           (const char *)dense + (i * n + j) * (int64_t)esz, esz);
  return p;
}

/* out (rows × n in the layout) holds the dense ref's bits, and its padding the sentinel. */
static int check(const void *out, const void *ref, int64_t rows, int64_t n, int col, int64_t ld, size_t esz) {
  void *pad = laid(NULL, rows, n, col, ld, esz);
  const int64_t total = col ? ld * n : rows * ld;
  int bad = 0;
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < n; j++) {
      const int64_t e = col ? i + j * ld : i * ld + j;
      bad += !same(out, e, ref, i * n + j, esz);
      put(pad, esz, e, 0); /* not padding */
    }
  for (int64_t e = 0; e < total; e++) {
    const int is_pad = esz == 4 ? ((float *)pad)[e] != 0 : ((double *)pad)[e] != 0;
    if (is_pad) bad += !same(out, e, pad, e, esz);
  }
  free(pad);
  return bad;
}

/* The layout calls on ctx (column-major, row-major with ld) give the dense calls' C and X, the
 * padding untouched, and the dense call after them its bits again. */
static void layouts(shiro_ctx *ctx, const shiro_plan_info *in, const void *B, const void *C, const void *Y,
                    const void *X, int64_t n, size_t esz, const char *tag) {
  const int64_t br = in->b_rows, cr = in->c_rows;
  for (int col = 0; col < 2; col++) {
    const shiro_layout lay = col ? SHIRO_COL_MAJOR : SHIRO_ROW_MAJOR;
    const int64_t ldb = col ? br + 3 : n + 2, ldc = col ? cr + 2 : n + 1;
    void *Bl = laid(B, br, n, col, ldb, esz), *Cl = laid(NULL, cr, n, col, ldc, esz);
    void *Yl = laid(Y, cr, n, col, ldc, esz), *Xl = laid(NULL, br, n, col, ldb, esz);
    armed = refuse_bytes != 0;
    shiro_status st = shiro_spmm_layout(ctx, lay, Bl, ldb, Cl, ldc);
    armed = 0;
    EXPECT(st == SHIRO_OK, "%s %s: %s", tag, col ? "col" : "row-ld", shiro_ctx_last_error(ctx));
    int bad = st == SHIRO_OK ? check(Cl, C, cr, n, col, ldc, esz) : 0;
    EXPECT(bad == 0, "rank %d, %s, %s: %d values of C differ from the row-major call's (or padding written)", rank, tag,
           col ? "column-major" : "row-major with ld", bad);
    armed = refuse_bytes != 0;
    st = shiro_spmm_transpose_layout(ctx, lay, Yl, ldc, Xl, ldb);
    armed = 0;
    EXPECT(st == SHIRO_OK, "%s %s transposed: %s", tag, col ? "col" : "row-ld", shiro_ctx_last_error(ctx));
    bad = st == SHIRO_OK ? check(Xl, X, br, n, col, ldb, esz) : 0;
    EXPECT(bad == 0, "rank %d, %s, %s transposed: %d values of X differ (or padding written)", rank, tag,
           col ? "column-major" : "row-major with ld", bad);
    /* split phase: begin in the layout, end; the same bits */
    void *Cs = laid(NULL, cr, n, col, ldc, esz), *Xs = laid(NULL, br, n, col, ldb, esz);
    armed = refuse_bytes != 0;
    st = shiro_spmm_layout_begin(ctx, lay, Bl, ldb, Cs, ldc);
    armed = 0;
    EXPECT(st == SHIRO_OK && shiro_spmm_end(ctx) == SHIRO_OK, "%s %s begin/end: %s", tag, col ? "col" : "row-ld",
           shiro_ctx_last_error(ctx));
    bad = st == SHIRO_OK ? check(Cs, C, cr, n, col, ldc, esz) : 0;
    EXPECT(bad == 0, "rank %d, %s, %s begin/end: %d values of C differ (or padding written)", rank, tag,
           col ? "column-major" : "row-major with ld", bad);
    armed = refuse_bytes != 0;
    st = shiro_spmm_transpose_layout_begin(ctx, lay, Yl, ldc, Xs, ldb);
    armed = 0;
    EXPECT(st == SHIRO_OK && shiro_spmm_transpose_end(ctx) == SHIRO_OK, "%s %s transposed begin/end: %s", tag,
           col ? "col" : "row-ld", shiro_ctx_last_error(ctx));
    bad = st == SHIRO_OK ? check(Xs, X, br, n, col, ldb, esz) : 0;
    EXPECT(bad == 0, "rank %d, %s, %s transposed begin/end: %d values of X differ (or padding written)", rank, tag,
           col ? "column-major" : "row-major with ld", bad);
    free(Cs);
    free(Xs);
    /* the same bits again after the layout call: the context went back to dense rows */
    void *C2 = malloc((size_t)(cr * n + 1) * esz);
    EXPECT(shiro_spmm(ctx, B, C2) == SHIRO_OK && !memcmp(C, C2, (size_t)(cr * n) * esz), "%s: dense after a layout call",
           tag);
    free(C2);
    free(Bl);
    free(Cl);
    free(Yl);
    free(Xl);
  }
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
  /* values that are not all 1 (ca-GrQc is a pattern): products and sums both matter */
  int64_t nnz = 0;
  EXPECT(shiro_plan_get_local_matrix(plan, &nnz, NULL, NULL, NULL, NULL, &err) == SHIRO_OK, "local: %s", err.message);
  double *v = malloc((size_t)(nnz + 1) * sizeof *v);
  for (int64_t t = 0; t < nnz; t++) v[t] = 0.75 + (double)((t * 7 + rank) % 11) / 16.0;
  EXPECT(shiro_ctx_set_values(ctx, v) == SHIRO_OK, "%s: set_values: %s", tag, shiro_ctx_last_error(ctx));
  const size_t esz = dt == SHIRO_FLOAT32 ? 4 : 8;
  const int64_t br = in->b_rows, cr = in->c_rows;
  void *B = malloc((size_t)(br * n + 1) * esz), *C = malloc((size_t)(cr * n + 1) * esz);
  void *Y = malloc((size_t)(cr * n + 1) * esz), *X = malloc((size_t)(br * n + 1) * esz);
  for (int64_t i = 0; i < br * n; i++) put(B, esz, i, (double)((in->b_global[i / n] * 5 + i % n * 3) % 17) / 8.0 - 1.0);
  for (int64_t i = 0; i < cr * n; i++) put(Y, esz, i, (double)((in->c_global[i / n] * 3 + i % n * 7) % 13) / 4.0 - 1.5);
  EXPECT(shiro_spmm(ctx, B, C) == SHIRO_OK && shiro_spmm_transpose(ctx, Y, X) == SHIRO_OK, "%s: dense: %s", tag,
         shiro_ctx_last_error(ctx));
  layouts(ctx, in, B, C, Y, X, n, esz, tag);
  if (REFUSE_ALLOCS) { /* a context whose staging rows cannot be had: the calls run in place */
    shiro_ctx *inplace = NULL;
    char tag2[128];
    snprintf(tag2, sizeof tag2, "%s, in place", tag);
    EXPECT(shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &inplace, &err) == SHIRO_OK &&
               shiro_ctx_set_values(inplace, v) == SHIRO_OK,
           "%s: create: %s", tag2, err.message);
    refused = 0;
    refuse_bytes = (size_t)(br > 0 ? br : 1) * (size_t)n * esz; /* the staging rows of B */
    if (inplace) layouts(inplace, in, B, C, Y, X, n, esz, tag2);
    refuse_bytes = 0;
    EXPECT(refused > 0, "%s: the staging rows were not asked for", tag2);
    shiro_ctx_destroy(&inplace);
  }
  free(v);
  /* an ld below its least, an unknown layout: refused on the calling rank (every rank here), named */
  if (n > 1) {
    EXPECT(shiro_spmm_layout(ctx, SHIRO_ROW_MAJOR, B, n, C, n - 1) == SHIRO_ERR_ARG && strstr(shiro_ctx_last_error(ctx), "ldc"),
           "%s: ldc = N - 1 accepted: %s", tag, shiro_ctx_last_error(ctx));
  }
  if (cr > 1)
    EXPECT(shiro_spmm_layout(ctx, SHIRO_COL_MAJOR, B, br > 1 ? br : 1, C, cr - 1) == SHIRO_ERR_ARG &&
               strstr(shiro_ctx_last_error(ctx), "ldc"),
           "%s: column-major ldc = rows - 1 accepted: %s", tag, shiro_ctx_last_error(ctx));
  EXPECT(shiro_spmm_layout(ctx, (shiro_layout)9, B, n, C, n) == SHIRO_ERR_ARG && strstr(shiro_ctx_last_error(ctx), "layout 9"),
         "%s: layout 9 accepted", tag);
  free(B);
  free(C);
  free(Y);
  free(X);
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
    snprintf(path, sizeof path, "/tmp/shiro-layout-%d-%d.h5", (int)getppid(), p);
    if (!test_world_plan(mtx, path, plans[p].s, plans[p].gpn)) {
      MPI_Finalize();
      return 1;
    }
    shiro_plan *plan = NULL;
    shiro_error err;
    shiro_plan_info in;
    EXPECT(shiro_plan_open_comm(path, MPI_COMM_WORLD, &plan, &err) == SHIRO_OK && shiro_plan_get_info(plan, &in) == SHIRO_OK,
           "open: %s", err.message);
    const int64_t ns[] = {1, 3, 8};
    for (int d = 0; plan && d < 2; d++)
      for (int k = 0; k < 3; k++) {
        char tag[96];
        snprintf(tag, sizeof tag, "%s, %s, N = %lld", plans[p].name, d ? "double" : "float", (long long)ns[k]);
        one(plan, &in, d ? SHIRO_FLOAT64 : SHIRO_FLOAT32, ns[k], tag);
      }
    shiro_plan_close(&plan);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) unlink(path);
  }
  if (!REFUSE_ALLOCS && rank == 0) printf("note: a sanitizer build: the in-place calls (staging refused) are not run\n");
  int fails = 0;
  MPI_Allreduce(&test_failures, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("%s: %d failures\n", fails ? "FAIL" : "ok", fails);
  MPI_Finalize();
  return fails != 0;
}
