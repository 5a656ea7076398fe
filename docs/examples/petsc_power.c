/* petsc_power.c — shiro in a PETSc program, written as a PETSc user would: their matrix
 * (MPIAIJ) and dense blocks (MPIDENSE: column-major, with a leading dimension) on PETSc's own row
 * layout, a shiro plan made for that layout (shiro-plan --partition parts:FILE), and split-phase
 * calls with their own work in between. A block power iteration, Z = A·Y then Y = Z scaled to unit
 * columns, runs on shiro; every iteration's product is compared with PETSc's MatMatMult, and the
 * transposed product, once, with MatTransposeMatMult.
 *
 *   shiro-plan A.mtx --ranks P --partition parts:parts.txt -o A.h5   (parts.txt: PETSc's layout,
 *                                                                   row i's rank on line i+1)
 *   mpirun -np P petsc_power A.mtx A.h5 [N] [ITERS]
 *
 * Build: mpicc petsc_power.c $(pkg-config --cflags --libs shiro PETSc) -Wl,-rpath,... (the
 * directories of both libraries). Prints "petsc_power: ok ..." on rank 0 and exits 0 when every
 * product agrees with PETSc's to 1e-12 (relative to the largest value); else a message and exit 1.
 * A real (or integer, or pattern) general or symmetric Matrix Market file. */
#include <math.h>
#include <petscmat.h>
#include <shiro.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCHK(call)                                                                  \
  do {                                                                              \
    PetscErrorCode e_ = (call);                                                     \
    if (e_) {                                                                       \
      fprintf(stderr, "petsc_power: %s failed (PETSc error %d)\n", #call, (int)e_); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                 \
    }                                                                               \
  } while (0)

/* Fails the job with a message (every rank reaches a check of its own or the abort). */
static void die(int rank, const char *what, const char *why) {
  fprintf(stderr, "petsc_power: rank %d: %s: %s\n", rank, what, why);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The Matrix Market file as an MPIAIJ matrix on PETSc's default layout (each rank reads the file and
 * sets the entries of its rows). */
static Mat read_matrix(const char *path, int rank) {
  FILE *f = fopen(path, "r");
  if (!f) die(rank, path, "cannot open");
  char line[1024];
  int pattern = 0, symmetric = 0;
  if (!fgets(line, sizeof line, f)) die(rank, path, "empty");
  pattern = strstr(line, "pattern") != NULL;
  symmetric = strstr(line, "symmetric") != NULL;
  while (fgets(line, sizeof line, f) && line[0] == '%') {
  }
  long long m, k, nz;
  if (sscanf(line, "%lld %lld %lld", &m, &k, &nz) != 3) die(rank, path, "no size line");
  Mat A;
  PCHK(MatCreate(PETSC_COMM_WORLD, &A));
  PCHK(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, (PetscInt)m, (PetscInt)k));
  PCHK(MatSetType(A, MATMPIAIJ));
  PCHK(MatSetUp(A));
  PCHK(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscInt r0, r1;
  PCHK(MatGetOwnershipRange(A, &r0, &r1));
  for (long long t = 0; t < nz; t++) {
    long long i, j;
    double v = 1.0;
    if (!fgets(line, sizeof line, f) || sscanf(line, "%lld %lld %lf", &i, &j, &v) < 2) die(rank, path, "short file");
    if (pattern) v = 1.0;
    PetscInt ii = (PetscInt)(i - 1), jj = (PetscInt)(j - 1);
    if (ii >= r0 && ii < r1) PCHK(MatSetValue(A, ii, jj, v, ADD_VALUES));
    if (symmetric && i != j && jj >= r0 && jj < r1) PCHK(MatSetValue(A, jj, ii, v, ADD_VALUES));
  }
  fclose(f);
  PCHK(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PCHK(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  return A;
}

/* Largest |X - Y| over this rank's rows, over the largest |Y| (over all ranks). */
static double rel_diff(Mat X, Mat Y) {
  const PetscScalar *x, *y;
  PetscInt rows, cols, ldx, ldy;
  PCHK(MatGetLocalSize(X, &rows, NULL));
  PCHK(MatGetSize(X, NULL, &cols));
  PCHK(MatDenseGetLDA(X, &ldx));
  PCHK(MatDenseGetLDA(Y, &ldy));
  PCHK(MatDenseGetArrayRead(X, &x));
  PCHK(MatDenseGetArrayRead(Y, &y));
  double d[2] = {0, 0}, all[2];
  for (PetscInt j = 0; j < cols; j++)
    for (PetscInt i = 0; i < rows; i++) {
      d[0] = fmax(d[0], fabs(x[i + j * ldx] - y[i + j * ldy]));
      d[1] = fmax(d[1], fabs(y[i + j * ldy]));
    }
  PCHK(MatDenseRestoreArrayRead(X, &x));
  PCHK(MatDenseRestoreArrayRead(Y, &y));
  MPI_Allreduce(d, all, 2, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  return all[1] > 0 ? all[0] / all[1] : all[0];
}

/* The caller's own work between begin and end: a dense update of W (as long as it is). */
static void own_work(double *w, int64_t len) {
  for (int64_t i = 0; i < len; i++) w[i] = 0.5 * w[i] + 0.25;
}

int main(int argc, char **argv) {
  PCHK(PetscInitialize(&argc, &argv, NULL, NULL));
  int rank = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (argc < 3) die(rank, "usage", "mpirun -np P petsc_power A.mtx A.h5 [N] [ITERS]");
  const PetscInt n = argc > 3 ? (PetscInt)atoi(argv[3]) : 8;
  const int iters = argc > 4 ? atoi(argv[4]) : 20;
  Mat A = read_matrix(argv[1], rank);
  PetscInt m, k, r0, r1, c0, c1;
  PCHK(MatGetSize(A, &m, &k));
  PCHK(MatGetOwnershipRange(A, &r0, &r1));
  PCHK(MatGetOwnershipRangeColumn(A, &c0, &c1));

  /* shiro: the plan, opened by every rank at once (a failure anywhere reaches all) */
  shiro_plan *plan = NULL;
  shiro_ctx *ctx = NULL;
  shiro_error err;
  shiro_plan_info in;
  if (shiro_plan_open_comm(argv[2], PETSC_COMM_WORLD, &plan, &err) != SHIRO_OK) die(rank, "shiro_plan_open_comm", err.message);
  if (shiro_plan_get_info(plan, &in) != SHIRO_OK) die(rank, "shiro_plan_get_info", "failed");
  /* The plan must give each rank PETSc's rows, in order: C rows [r0, r1), B rows [c0, c1). */
  int same = in.c_rows == r1 - r0 && in.b_rows == c1 - c0;
  for (int64_t i = 0; same && i < in.c_rows; i++) same = in.c_global[i] == r0 + i;
  for (int64_t i = 0; same && i < in.b_rows; i++) same = in.b_global[i] == c0 + i;
  if (!same) die(rank, argv[2], "the plan's rows are not PETSc's layout (plan with --partition parts:FILE of it)");
  shiro_ctx_options o = shiro_ctx_options_default();
  o.dtype = SHIRO_FLOAT64;
  o.n = n;
  if (shiro_ctx_create(plan, PETSC_COMM_WORLD, &o, &ctx, &err) != SHIRO_OK) die(rank, "shiro_ctx_create", err.message);

  /* Y (k × N) and Z (m × N) in PETSc's dense layout; Y's first values deterministic */
  Mat Y, Z, Zref = NULL;
  PCHK(MatCreateDense(PETSC_COMM_WORLD, c1 - c0, PETSC_DECIDE, k, n, NULL, &Y));
  PCHK(MatCreateDense(PETSC_COMM_WORLD, r1 - r0, PETSC_DECIDE, m, n, NULL, &Z));
  PetscScalar *y, *z;
  PetscInt ldy, ldz;
  PCHK(MatDenseGetLDA(Y, &ldy));
  PCHK(MatDenseGetLDA(Z, &ldz));
  PCHK(MatDenseGetArray(Y, &y));
  for (PetscInt j = 0; j < n; j++)
    for (PetscInt i = 0; i < c1 - c0; i++) y[i + j * ldy] = 1.0 + (double)(((c0 + i) * 7 + j * 3) % 11) / 10.0;
  PCHK(MatDenseRestoreArray(Y, &y));

  const int64_t wlen = 4 * (int64_t)n * (r1 - r0) + 1;
  double *w = calloc((size_t)wlen, sizeof *w), worst = 0;
  for (int it = 0; it < iters; it++) {
    /* Z = A·Y on shiro, split phase, the caller's work in between */
    PCHK(MatDenseGetArray(Y, &y));
    PCHK(MatDenseGetArray(Z, &z));
    if (shiro_spmm_layout_begin(ctx, SHIRO_COL_MAJOR, y, ldy, z, ldz) != SHIRO_OK)
      die(rank, "shiro_spmm_layout_begin", shiro_ctx_last_error(ctx));
    own_work(w, wlen);
    if (shiro_spmm_end(ctx) != SHIRO_OK) die(rank, "shiro_spmm_end", shiro_ctx_last_error(ctx));
    PCHK(MatDenseRestoreArray(Z, &z));
    PCHK(MatDenseRestoreArray(Y, &y));
    /* PETSc's product of the same Y */
    PCHK(MatMatMult(A, Y, Zref ? MAT_REUSE_MATRIX : MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Zref));
    worst = fmax(worst, rel_diff(Z, Zref));
    /* Y = Z with unit columns (square A: Z's rows are Y's) */
    PetscReal norms[64];
    if (n > 64 || m != k) break;
    PCHK(MatGetColumnNorms(Z, NORM_2, norms));
    PCHK(MatDenseGetArray(Z, &z));
    PCHK(MatDenseGetArray(Y, &y));
    for (PetscInt j = 0; j < n; j++)
      for (PetscInt i = 0; i < r1 - r0; i++) y[i + j * ldy] = norms[j] > 0 ? z[i + j * ldz] / norms[j] : 0;
    PCHK(MatDenseRestoreArray(Y, &y));
    PCHK(MatDenseRestoreArray(Z, &z));
  }

  /* The transposed product, once: X = Aᵀ·Z against MatTransposeMatMult */
  Mat X, Xref = NULL;
  PetscScalar *x;
  PetscInt ldx;
  PCHK(MatCreateDense(PETSC_COMM_WORLD, c1 - c0, PETSC_DECIDE, k, n, NULL, &X));
  PCHK(MatDenseGetLDA(X, &ldx));
  PCHK(MatDenseGetArray(Z, &z));
  PCHK(MatDenseGetArray(X, &x));
  if (shiro_spmm_transpose_layout(ctx, SHIRO_COL_MAJOR, z, ldz, x, ldx) != SHIRO_OK)
    die(rank, "shiro_spmm_transpose_layout", shiro_ctx_last_error(ctx));
  PCHK(MatDenseRestoreArray(X, &x));
  PCHK(MatDenseRestoreArray(Z, &z));
  PCHK(MatTransposeMatMult(A, Z, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &Xref));
  const double tworst = rel_diff(X, Xref);

  const int ok = worst <= 1e-12 && tworst <= 1e-12;
  if (rank == 0)
    printf("petsc_power: %s: %d iterations of Z = A.Y (N = %d, split phase, column-major) against MatMatMult: "
           "max relative difference %.3g; A^T.Z against MatTransposeMatMult: %.3g\n",
           ok ? "ok" : "FAILED", iters, (int)n, worst, tworst);
  free(w);
  shiro_ctx_destroy(&ctx);
  shiro_plan_close(&plan);
  PCHK(MatDestroy(&X));
  PCHK(MatDestroy(&Xref));
  PCHK(MatDestroy(&Zref));
  PCHK(MatDestroy(&Z));
  PCHK(MatDestroy(&Y));
  PCHK(MatDestroy(&A));
  PCHK(PetscFinalize());
  return ok ? 0 : 1;
}
