/* test_dist_metis.c — dist_part_metis (PT-Scotch over the planner's processes) against serial
 * part_metis (METIS), run under mpirun -np 1, 2 and 3:
 *
 *   test_dist_metis [--shared DIR] FILE...     the checks below on each FILE (.mtx, or .mtx.gz:
 *                                               decompressed to /tmp first), then on DIR's
 *                                               square matrices named in shared_files (skipped,
 *                                               saying so, when DIR is absent)
 *   test_dist_metis --measure PARTS[,PARTS] [--no-serial] FILE...
 *                                               prints each FILE's edge cuts and times, checks nothing
 *
 * For parts in {2, 5, 16} (fewer than the rows): every label in 0..parts-1; the same labels on
 * every process and on a second call (the fixed seed); each part's vertex weight (the row's entries
 * + 1, as serial) at most BAL_TOL x the average plus the heaviest vertex; the edge cut of A + Aᵀ
 * without the diagonal (counted here on the whole matrix, read by mm_read) at most CUT_TOL x
 * serial METIS's (part_metis, the same parts) plus CUT_SLACK. Then, as serial does: parts == 1 gives every row 0, parts >= rows
 * gives row i label i, a graph without edges (a diagonal) is still cut in balance; parts < 1 and a
 * rectangular matrix are refused with SHIRO_ERR_ARG on every process, the message saying why.
 * Without PT-Scotch in this build: SHIRO_ERR_UNSUPPORTED naming libptscotch-dev, then exit 77. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "csr.h"
#include "dist_metis.h"
#include "mm_read.h"
#include "partition.h"
#include "shiro_config.h"
#include "test_util.h"

#define BAL_TOL 1.10 /* PT-Scotch is asked for 3%; this leaves room for its distributed refinement */
#define CUT_TOL 1.35 /* the distributed cut against serial METIS's: at most 1.24x measured (ca-GrQc, 5 parts) */
#define CUT_SLACK 8 /* edges: tiny graphs move by a few (bcsstk01, 2 parts: 34 against 24) */

static int rank, size;
static const int check_parts[] = {2, 5, 16};
/* ../shared/data/matrices' square matrices the checks also run on, where that folder exists */
static const char *const shared_files[] = {"bcsstk13.mtx.gz", "delaunay_n16.mtx.gz", "email-Enron.mtx.gz"};

/* path, or (.gz) a copy decompressed into /tmp by process 0, named in out (on every process).
 * Returns 1 if out is a temporary file to remove. */
static int plain_copy(const char *path, char *out, size_t n) {
  const size_t len = strlen(path);
  if (len < 3 || strcmp(path + len - 3, ".gz")) {
    snprintf(out, n, "%s", path);
    return 0;
  }
  char name[256] = "";
  if (rank == 0) {
    snprintf(name, sizeof name, "/tmp/test_dist_metis_XXXXXX");
    const int fd = mkstemp(name);
    gzFile z = gzopen(path, "rb");
    char buf[1 << 16];
    int got, ok = fd >= 0 && z;
    while (ok && (got = gzread(z, buf, sizeof buf)) > 0) ok = write(fd, buf, (size_t)got) == got;
    if (z) gzclose(z);
    if (fd >= 0) close(fd);
    if (!ok) {
      fprintf(stderr, "cannot decompress %s into %s\n", path, name);
      name[0] = 0;
    }
  }
  MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
  snprintf(out, n, "%s", name);
  return 1;
}

/* The edges of A + Aᵀ without the diagonal whose ends have different labels (each edge once). */
static int64_t edge_cut(const sc_csr *S, const int32_t *lab) {
  int64_t cut = 0;
  for (int64_t i = 0; i < S->m; i++)
    for (int64_t t = S->Ap[i]; t < S->Ap[i + 1]; t++) cut += S->Aj[t] != i && lab[S->Aj[t]] != lab[i];
  return cut / 2;
}

/* A + Aᵀ (pattern; the diagonal kept, edge_cut skips it). */
static sc_csr *symmetrized(const sc_csr *A) {
  int64_t *Ti = malloc(((size_t)A->nnz + 1) * sizeof *Ti), *Tj = malloc(((size_t)A->nnz + 1) * sizeof *Tj);
  sc_csr *S = NULL;
  shiro_error err = {{0}};
  for (int64_t i = 0; Ti && Tj && i < A->m; i++)
    for (int64_t t = A->Ap[i]; t < A->Ap[i + 1]; t++) {
      Ti[t] = i;
      Tj[t] = A->Aj[t];
    }
  if (!Ti || !Tj || sc_csr_from_coo(A->m, A->k, A->nnz, Ti, Tj, NULL, SC_COO_SYMMETRIC, &S, &err) != SHIRO_OK)
    fprintf(stderr, "symmetrizing failed: %s\n", err.message);
  free(Ti);
  free(Tj);
  return S;
}

/* Serial part_metis's labels (label of row i: the part whose range holds newof[i]). */
static int32_t *serial_labels(const sc_csr *A, int32_t parts) {
  int64_t *newof = NULL;
  sc_partition P = {0};
  shiro_error err = {{0}};
  int32_t *lab = malloc(((size_t)A->m + 1) * sizeof *lab);
  if (!lab || part_metis(A, parts, &newof, &P, &err) != SHIRO_OK) {
    fprintf(stderr, "serial part_metis failed: %s\n", err.message);
    free(lab);
    return NULL;
  }
  for (int64_t i = 0; i < A->m; i++) {
    int32_t p = 0;
    while (newof[i] >= P.first[p + 1]) p++;
    lab[i] = p;
  }
  free(newof);
  part_free(&P);
  return lab;
}

/* The heaviest part's weight over the average, against BAL_TOL (the weights serial's). */
static int balanced(const sc_csr *A, int32_t parts, const int32_t *lab, double *ratio) {
  int64_t *w = calloc((size_t)parts, sizeof *w), total = 0, maxv = 0, maxp = 0;
  for (int64_t i = 0; w && i < A->m; i++) {
    const int64_t v = A->Ap[i + 1] - A->Ap[i] + 1;
    w[lab[i]] += v;
    total += v;
    if (v > maxv) maxv = v;
  }
  for (int32_t p = 0; w && p < parts; p++)
    if (w[p] > maxp) maxp = w[p];
  free(w);
  const double avg = (double)total / parts;
  *ratio = maxp / avg;
  return maxp <= BAL_TOL * avg + (double)maxv;
}

/* dist_part_metis on path's matrix (read by dist_matrix_read) into parts; every process's status
 * the same; labels identical on every process. Returns the status; *lab (malloc'ed) the labels. */
static shiro_status dist_labels(const char *path, int32_t parts, int32_t **lab, int64_t *m, double *secs, shiro_error *err) {
  dist_comm c = {MPI_COMM_WORLD, rank, size};
  mm_read_options ro = {0};
  dist_matrix M;
  *lab = NULL;
  err->message[0] = 0;
  shiro_status st = dist_matrix_read(&c, path, "mtx", &ro, &M, err);
  if (st != SHIRO_OK) return st;
  *m = M.m;
  *lab = malloc(((size_t)M.m + 1) * sizeof **lab);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  st = dist_part_metis(&c, &M, parts, *lab, err);
  t0 = MPI_Wtime() - t0;
  MPI_Allreduce(&t0, secs, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  int s = (int)st, lo = 0, hi = 0;
  MPI_Allreduce(&s, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&s, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT(lo == hi, "%s, %d parts: statuses %d .. %d across processes", path, (int)parts, lo, hi);
  if (st == SHIRO_OK) {
    int32_t *root = malloc(((size_t)M.m + 1) * sizeof *root);
    memcpy(root, *lab, (size_t)M.m * sizeof *root);
    MPI_Bcast(root, (int)M.m, MPI_INT32_T, 0, MPI_COMM_WORLD);
    int diff = memcmp(root, *lab, (size_t)M.m * sizeof *root) != 0, any = 0;
    MPI_Allreduce(&diff, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    EXPECT(!any, "%s, %d parts: the labels differ between processes", path, (int)parts);
    free(root);
  }
  dist_matrix_free(&M);
  return st;
}

/* The checks of the header on one matrix (square, more rows than 16). */
static void check_matrix(const char *path, const char *name) {
  sc_csr *A = NULL, *S = NULL;
  mm_header hdr;
  shiro_error err = {{0}};
  if (mm_read(path, &A, &hdr, &err) != SHIRO_OK) {
    EXPECT(0, "mm_read %s: %s", path, err.message);
    return;
  }
  S = symmetrized(A);
  for (size_t q = 0; S && q < sizeof check_parts / sizeof *check_parts; q++) {
    const int32_t parts = check_parts[q];
    int32_t *lab = NULL, *again = NULL, *ref = NULL;
    int64_t m = 0;
    double secs;
    shiro_status st = dist_labels(path, parts, &lab, &m, &secs, &err);
    EXPECT(st == SHIRO_OK, "%s, %d parts: %s", path, (int)parts, err.message);
    if (st == SHIRO_OK && dist_labels(path, parts, &again, &m, &secs, &err) == SHIRO_OK)
      EXPECT(!memcmp(lab, again, (size_t)m * sizeof *lab), "%s, %d parts: a second call gave other labels", path, (int)parts);
    int inrange = st == SHIRO_OK;
    for (int64_t i = 0; inrange && i < A->m; i++) inrange = lab[i] >= 0 && lab[i] < parts;
    EXPECT(inrange, "%s, %d parts: a label out of range", path, (int)parts);
    if (inrange && (ref = serial_labels(A, parts))) {
      double ratio;
      const int bal = balanced(A, parts, lab, &ratio);
      const int64_t cut = edge_cut(S, lab), scut = edge_cut(S, ref);
      EXPECT(bal, "%s, %d parts: the heaviest part weighs %.3f x the average (bound %.2f + one vertex)", path, (int)parts,
             ratio, BAL_TOL);
      EXPECT(cut <= CUT_TOL * (double)scut + CUT_SLACK, "%s, %d parts: edge cut %lld, serial METIS's %lld", path,
             (int)parts, (long long)cut, (long long)scut);
      if (rank == 0)
        printf("%s P=%d parts=%d: cut %lld (serial %lld, %.2fx), heaviest part %.3f x average\n", name, size, (int)parts,
               (long long)cut, (long long)scut, scut ? (double)cut / (double)scut : 0.0, ratio);
    }
    free(lab);
    free(again);
    free(ref);
  }
  sc_csr_free(S);
  sc_csr_free(A);
}

/* Writes a matrix of n rows at /tmp (process 0), diagonal only (diag) or n x (n + 3); its name in out. */
static void write_matrix(int n, int diag, char *out, size_t len) {
  char name[64] = "/tmp/test_dist_metis_XXXXXX";
  if (rank == 0) {
    const int fd = mkstemp(name);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (f) {
      fprintf(f, "%%%%MatrixMarket matrix coordinate pattern general\n%d %d %d\n", n, diag ? n : n + 3, n);
      for (int i = 1; i <= n; i++) fprintf(f, "%d %d\n", i, diag ? i : i + 3);
      fclose(f);
    }
  }
  MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
  snprintf(out, len, "%s", name);
}

/* Serial's special cases, and the refusals. */
static void check_edges(const char *small) {
  shiro_error err = {{0}};
  int32_t *lab = NULL;
  int64_t m = 0;
  double secs;
  shiro_status st = dist_labels(small, 1, &lab, &m, &secs, &err);
  int ok = st == SHIRO_OK;
  for (int64_t i = 0; ok && i < m; i++) ok = lab[i] == 0;
  EXPECT(ok, "%s, 1 part: every row 0 (%s)", small, err.message);
  free(lab);
  for (int32_t extra = 0; extra <= 7; extra += 7) { /* parts == rows, parts > rows: row i, label i */
    const int32_t more = (int32_t)m + extra;
    st = dist_labels(small, more, &lab, &m, &secs, &err);
    ok = st == SHIRO_OK;
    for (int64_t i = 0; ok && i < m; i++) ok = lab[i] == i;
    EXPECT(ok, "%s, %d parts (%lld rows): row i, label i (%s)", small, (int)more, (long long)m, err.message);
    free(lab);
  }
  st = dist_labels(small, 0, &lab, &m, &secs, &err);
  EXPECT(st == SHIRO_ERR_ARG && strstr(err.message, "at least 1"), "0 parts: status %d, '%s'", (int)st, err.message);
  free(lab);
  char path[64];
  write_matrix(40, 0, path, sizeof path);
  st = dist_labels(path, 4, &lab, &m, &secs, &err);
  EXPECT(st == SHIRO_ERR_ARG && strstr(err.message, "square") && strstr(err.message, "40 x 43"),
         "rectangular: status %d, '%s'", (int)st, err.message);
  free(lab);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) unlink(path);
  write_matrix(40, 1, path, sizeof path); /* no edges at all: weights alone, 2 each */
  st = dist_labels(path, 4, &lab, &m, &secs, &err);
  ok = st == SHIRO_OK;
  int count[4] = {0};
  for (int64_t i = 0; ok && i < m; i++) ok = lab[i] >= 0 && lab[i] < 4 && ++count[lab[i]];
  for (int p = 0; ok && p < 4; p++) ok = count[p] <= 11;
  EXPECT(ok, "diagonal only, 4 parts: labels in range and about 10 rows a part (%s)", err.message);
  free(lab);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) unlink(path);
}

/* --measure: each file's cuts and times, printed by process 0. */
static void measure(const char *partlist, int serial, char **files, int nfiles) {
  for (int f = 0; f < nfiles; f++) {
    char path[512];
    const int tmp = plain_copy(files[f], path, sizeof path);
    sc_csr *A = NULL, *S = NULL;
    mm_header hdr;
    shiro_error err = {{0}};
    int have = 1;
    if (rank == 0) {
      have = mm_read(path, &A, &hdr, &err) == SHIRO_OK && A->m == A->k;
      if (have) S = symmetrized(A);
    }
    MPI_Bcast(&have, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (const char *p = partlist; have && *p;) {
      const int32_t parts = (int32_t)strtol(p, NULL, 10);
      int32_t *lab = NULL, *ref = NULL;
      int64_t m = 0;
      double secs = 0, ssecs = 0, ratio = 0;
      shiro_status st = dist_labels(path, parts, &lab, &m, &secs, &err);
      if (rank == 0) {
        if (serial) {
          double t0 = MPI_Wtime();
          ref = serial_labels(A, parts);
          ssecs = MPI_Wtime() - t0;
        }
        if (st == SHIRO_OK) balanced(A, parts, lab, &ratio);
        printf("%s\tP=%d\tparts=%d\trows=%lld\tnnz=%lld\tdist_cut=%lld\tdist_s=%.3f\tdist_max/avg=%.3f", files[f], size,
               (int)parts, (long long)A->m, (long long)A->nnz, st == SHIRO_OK ? (long long)edge_cut(S, lab) : -1LL, secs, ratio);
        if (ref) printf("\tserial_cut=%lld\tserial_s=%.3f", (long long)edge_cut(S, ref), ssecs);
        printf("%s%s\n", st == SHIRO_OK ? "" : "\terror: ", st == SHIRO_OK ? "" : err.message);
        fflush(stdout);
      }
      free(lab);
      free(ref);
      p = strchr(p, ',');
      p = p ? p + 1 : "";
    }
    sc_csr_free(S);
    sc_csr_free(A);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tmp && rank == 0) unlink(path);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc > 2 && !strcmp(argv[1], "--measure")) {
    const int serial = argc > 3 && !strcmp(argv[3], "--no-serial") ? 0 : 1;
    measure(argv[2], serial, argv + 3 + !serial, argc - 3 - !serial);
    MPI_Finalize();
    return 0;
  }
  if (!SHIRO_HAVE_PTSCOTCH) {
    shiro_error err = {{0}};
    int32_t *lab = NULL;
    int64_t m = 0;
    double secs;
    const shiro_status st = argc > 1 ? dist_labels(argv[argc - 1], 4, &lab, &m, &secs, &err) : SHIRO_ERR_UNSUPPORTED;
    EXPECT(st == SHIRO_ERR_UNSUPPORTED && (argc < 2 || strstr(err.message, "libptscotch-dev")), "without PT-Scotch: %d '%s'",
           (int)st, err.message);
    free(lab);
    if (rank == 0) fprintf(stderr, "SKIP: this build has no PT-Scotch (libptscotch-dev)\n");
    MPI_Finalize();
    return test_failures ? 1 : 77;
  }
  const char *shared = NULL;
  int first_file = 1;
  if (argc > 2 && !strcmp(argv[1], "--shared")) {
    shared = argv[2];
    first_file = 3;
  }
  for (int f = first_file; f < argc; f++) {
    char path[512];
    const int tmp = plain_copy(argv[f], path, sizeof path);
    check_matrix(path, argv[f]);
    if (f == first_file) check_edges(path);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tmp && rank == 0) unlink(path);
  }
  if (shared && access(shared, R_OK) != 0) {
    if (rank == 0) printf("SKIP shared matrices: %s is absent\n", shared);
  } else if (shared) {
    for (size_t f = 0; f < sizeof shared_files / sizeof *shared_files; f++) {
      char in[1024], path[512];
      snprintf(in, sizeof in, "%s/%s", shared, shared_files[f]);
      if (access(in, R_OK) != 0) {
        if (rank == 0) printf("SKIP %s: absent\n", in);
        continue;
      }
      const int tmp = plain_copy(in, path, sizeof path);
      check_matrix(path, shared_files[f]);
      MPI_Barrier(MPI_COMM_WORLD);
      if (tmp && rank == 0) unlink(path);
    }
  }
  int fails = test_failures, all = 0;
  MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("%s: %d failures\n", all ? "FAIL" : "OK", all);
  MPI_Finalize();
  return all ? 1 : 0;
}
