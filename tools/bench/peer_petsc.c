/* peer-petsc — PETSc MatMatMult (MPIAIJ × MPIDENSE) on a matrix, the whole
 * replay's peer in tools/bench/bench_replay.sh (benchmark only: shiro does not link
 * PETSc; the script builds this with PETSc's pkg-config flags).
 *
 *   mpirun -np R peer-petsc MATRIX.mtx[.gz] [--n 1[,32...]] [--reps 5] [--ms 200]
 *
 * The same block partition as shiro-plan's default: rank p owns rows
 * [⌊p·m/R⌋, ⌊(p+1)·m/R⌋) of A and C and the same formula over k for B. For
 * N > 1 C = A·B with MatMatMult(MAT_REUSE_MATRIX) after a first
 * MAT_INITIAL_MATRIX call; for N = 1 y = A·x with MatMult. Double only (the
 * PETSc build's scalar). B holds mtx_b_value(g, c). Each sample times as many
 * calls as fill about --ms ms (the slowest rank's mean); best of --reps. One
 * line per N on rank 0: "peer-petsc key=value ...". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <petscmat.h>

#include "mtx_lite.h"

#define MAX_LIST 8
#define CHK(call)                                                                     \
  do {                                                                                \
    PetscErrorCode ierr_ = (call);                                                    \
    if (ierr_) {                                                                      \
      fprintf(stderr, "peer-petsc: %s failed (PETSc error %d)\n", #call, (int)ierr_); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                   \
    }                                                                                 \
  } while (0)

static int64_t first(int64_t total, int p, int R) { return (int64_t)((__int128)total * p / R); }

/* This rank's rows of M as an MPIAIJ matrix (the block partition). */
static Mat make_A(const mtx_csr *M, int rank, int R) {
  const int64_t r0 = first(M->m, rank, R), r1 = first(M->m, rank + 1, R);
  const int64_t k0 = first(M->k, rank, R), k1 = first(M->k, rank + 1, R);
  PetscInt *dn = calloc((size_t)(r1 - r0 + 1), sizeof *dn), *on = calloc((size_t)(r1 - r0 + 1), sizeof *on);
  for (int64_t i = r0; i < r1; i++)
    for (int64_t e = M->Ap[i]; e < M->Ap[i + 1]; e++) {
      if (M->Aj[e] >= k0 && M->Aj[e] < k1) dn[i - r0]++;
      else on[i - r0]++;
    }
  Mat A;
  CHK(MatCreateAIJ(PETSC_COMM_WORLD, (PetscInt)(r1 - r0), (PetscInt)(k1 - k0), (PetscInt)M->m, (PetscInt)M->k, 0, dn, 0, on, &A));
  for (int64_t i = r0; i < r1; i++) {
    const PetscInt row = (PetscInt)i, len = (PetscInt)(M->Ap[i + 1] - M->Ap[i]);
    PetscInt *cols = malloc((size_t)(len ? len : 1) * sizeof *cols);
    for (PetscInt t = 0; t < len; t++) cols[t] = (PetscInt)M->Aj[M->Ap[i] + t];
    CHK(MatSetValues(A, 1, &row, len, cols, M->Ax + M->Ap[i], INSERT_VALUES));
    free(cols);
  }
  CHK(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  CHK(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  free(dn);
  free(on);
  return A;
}

/* The slowest rank's mean time per call of `calls` calls of C = A·B (N > 1) or y = A·x. */
static double sample(Mat A, Mat B, Mat C, Vec x, Vec y, int64_t calls) {
  MPI_Barrier(PETSC_COMM_WORLD);
  double t = MPI_Wtime();
  for (int64_t i = 0; i < calls; i++) {
    if (x) CHK(MatMult(A, x, y));
    else CHK(MatMatMult(A, B, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C));
  }
  t = (MPI_Wtime() - t) / (double)calls;
  double tmax = 0;
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  return tmax;
}

/* Best time per call for one N. */
static double bench(const mtx_csr *M, Mat A, int64_t n, int reps, double ms, int rank, int R) {
  const int64_t k0 = first(M->k, rank, R), k1 = first(M->k, rank + 1, R);
  Mat B = NULL, C = NULL;
  Vec x = NULL, y = NULL;
  if (n == 1) {
    CHK(MatCreateVecs(A, &x, &y));
    PetscScalar *a;
    CHK(VecGetArray(x, &a));
    for (int64_t g = k0; g < k1; g++) a[g - k0] = mtx_b_value(g, 0);
    CHK(VecRestoreArray(x, &a));
  } else {
    CHK(MatCreateDense(PETSC_COMM_WORLD, (PetscInt)(k1 - k0), PETSC_DECIDE, (PetscInt)M->k, (PetscInt)n, NULL, &B));
    PetscScalar *a;
    PetscInt lda;
    CHK(MatDenseGetArray(B, &a));
    CHK(MatDenseGetLDA(B, &lda));
    for (int64_t c = 0; c < n; c++)
      for (int64_t g = k0; g < k1; g++) a[c * lda + (g - k0)] = mtx_b_value(g, c); /* column-major */
    CHK(MatDenseRestoreArray(B, &a));
    CHK(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
    CHK(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
    CHK(MatMatMult(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
  }
  /* calls per sample: two untimed calls (the first is cold), then as many as last 2 ms or more,
   * doubled until they do (as shiro-bench-cpu counts: samples of the same length) */
  (void)sample(A, B, C, x, y, 2);
  int64_t k = 1;
  double t = sample(A, B, C, x, y, k);
  while (t * (double)k < 2e-3 && k < 100000) t = sample(A, B, C, x, y, k *= 2);
  int64_t calls = t > 0 ? (int64_t)(ms * 1e-3 / t) : 1000;
  if (calls < 1) calls = 1;
  double best = 1e300;
  for (int r = 0; r < reps; r++) {
    t = sample(A, B, C, x, y, calls);
    if (t < best) best = t;
  }
  if (B) MatDestroy(&B);
  if (C) MatDestroy(&C);
  if (x) VecDestroy(&x);
  if (y) VecDestroy(&y);
  return best;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *path = NULL;
  long n[MAX_LIST] = {32};
  int nn = 1, reps = 5, bad = 0;
  double ms = 200;
  for (int i = 1; i < argc && !bad; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (a[0] != '-') {
      path = a;
      continue;
    }
    if (!v) {
      bad = 1;
      break;
    }
    i++;
    if (!strcmp(a, "--n")) {
      char buf[256];
      nn = 0;
      snprintf(buf, sizeof buf, "%s", v);
      for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        long x = atol(t);
        if (nn >= MAX_LIST || x < 1 || x > 4096) bad = 1;
        else n[nn++] = x;
      }
    } else if (!strcmp(a, "--reps")) reps = atoi(v);
    else if (!strcmp(a, "--ms")) ms = atof(v);
    else bad = 1;
  }
  int rank = 0, R = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &R);
  if (bad || !path || !nn || reps < 1 || !(ms > 0)) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np R peer-petsc MATRIX.mtx[.gz] [--n 1,32,...] [--reps 5] [--ms 200]\n");
    MPI_Finalize();
    return 2;
  }
  /* PETSc gets no command line (our options are not its) */
  CHK(PetscInitializeNoArguments());
  mtx_csr M;
  int failed = mtx_read(path, &M), anyfailed = 0;
  MPI_Allreduce(&failed, &anyfailed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (anyfailed) {
    PetscFinalize();
    MPI_Finalize();
    return 1;
  }
  Mat A = make_A(&M, rank, R);
  for (int j = 0; j < nn; j++) {
    const double t = bench(&M, A, n[j], reps, ms, rank, R);
    if (rank == 0) {
      printf("peer-petsc matrix=%s nnz=%lld ranks=%d n=%ld op=%s ms=%.4f\n", path, (long long)M.nnz, R, n[j],
             n[j] == 1 ? "MatMult" : "MatMatMult", 1e3 * t);
      fflush(stdout);
    }
  }
  MatDestroy(&A);
  mtx_free(&M);
  PetscFinalize();
  MPI_Finalize();
  return 0;
}
