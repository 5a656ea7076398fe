/* dist_metis.c — serial part_metis's graph (A + Aᵀ without the diagonal, vertex weight = the row's
 * entries + 1), built from the processes' stripes and cut by PT-Scotch over MPI.
 *
 * Why PT-Scotch's own API (SCOTCH_dgraph*, libptscotch-dev) and not its ParMETIS-compatible one
 * (libscotchparmetis-dev): the native API takes the seed (SCOTCH_randomSeed, and a context set
 * deterministic), the strategy and the imbalance explicitly, where the ParMETIS layer drops most of
 * ParMETIS's options; it reports failures as return codes with a message through
 * SCOTCH_errorPrint, which we capture below; libptscotch-dev is what petsc-dev already pulls in
 * (ENVIRONMENT.md §10); and ParMETIS's parmetis.h defines idx_t and METIS's constants again,
 * which clash with the serial metis.h the rest of the compiler uses. Only this file includes a
 * Scotch header, and it includes no METIS header.
 *
 * Strategy: SCOTCH_STRATQUALITY with a load imbalance of 3% (KBAL), METIS k-way's default
 * (ufactor 30). Seed 1, as partition_metis.c's. SCOTCH_Num is the build's (-Dptscotch_int): with
 * Debian's default (32-bit int), like serial METIS, at most 2^31-1 rows, edges of the symmetrized
 * graph (both directions) and total vertex weight, beyond which the call is refused with
 * SHIRO_ERR_UNSUPPORTED; with the 64-bit build, the rows' 2^31-1 of the rest of the planner. A
 * library whose integers are not the header's is refused before any call (SCOTCH_numSizeof). */
#include <stdlib.h>
#include <string.h>

#include "dist_metis.h"
#include "error.h"
#include "shiro_config.h"

#if !SHIRO_HAVE_PTSCOTCH
shiro_status dist_part_metis(const dist_comm *c, const dist_matrix *M, int32_t parts, int32_t *labels, shiro_error *err) {
  (void)M;
  (void)parts;
  (void)labels;
  return dist_agree(c,
                    shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "--partition metis with several processes: this shiro was "
                                                           "built without PT-Scotch (install libptscotch-dev)"),
                    err);
}
#else
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

#include <scotch.h>
#include <ptscotch.h>

#define KBAL 0.03 /* the load imbalance PT-Scotch is asked to keep: METIS k-way's default */
#define SEED 1 /* the random seed, every call: the same labels for the same P on every run */
#define NUM_MAX ((int64_t)((sizeof(SCOTCH_Num) == 4) ? INT32_MAX : INT64_MAX)) /* SCOTCH_Num's largest */
#define NUM_HINT " (build shiro with -Dptscotch_int=64 for Debian's 64-bit PT-Scotch)"

/* PT-Scotch's first error message since scotch_msg_reset. Scotch reports through
 * SCOTCH_errorPrint, which libptscotcherr (linked by libptscotch) would print on stderr; the
 * definitions below take its place (an executable's definition comes before a shared library's),
 * so that nothing of Scotch lands on our streams: the message comes back in shiro_error. */
static char scotch_msg[256];
static atomic_flag scotch_msg_taken = ATOMIC_FLAG_INIT;

static void scotch_msg_reset(void) {
  scotch_msg[0] = 0;
  atomic_flag_clear(&scotch_msg_taken);
}

/* Scotch's error hook (declared in scotch.h): keeps the first message of a call, prints nothing. */
__attribute__((visibility("default"))) void SCOTCH_errorPrint(const char *const fmt, ...) {
  if (atomic_flag_test_and_set(&scotch_msg_taken)) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(scotch_msg, sizeof scotch_msg, fmt, ap);
  va_end(ap);
}

/* Scotch's warning hook: warnings are dropped (a failure comes back as a return code and
 * SCOTCH_errorPrint). */
__attribute__((visibility("default"))) void SCOTCH_errorPrintW(const char *const fmt, ...) { (void)fmt; }

/* A failed Scotch call: SHIRO_ERR_INTERNAL with what it said. */
static shiro_status scotch_fail(shiro_error *err, const char *call) {
  return shiro_fail(err, SHIRO_ERR_INTERNAL, "--partition metis: PT-Scotch's %s failed%s%s", call,
                    scotch_msg[0] ? ": " : "", scotch_msg);
}

/* The process holding row j: the last d with first[d] <= j (first[0..P], increasing). */
static int owner(const int64_t *first, int P, int64_t j) {
  int a = 0, b = P - 1;
  while (a < b) {
    const int h = (a + b + 1) / 2;
    if (first[h] <= j) a = h;
    else b = h - 1;
  }
  return a;
}

static int cmp_num(const void *a, const void *b) {
  const SCOTCH_Num x = *(const SCOTCH_Num *)a, y = *(const SCOTCH_Num *)b;
  return (x > y) - (x < y);
}

/* This process's part of the graph: *xadj [n+1] and *adj [(*xadj)[n]] (global vertex ids, sorted,
 * no repeats, no loops) of rows lo .. lo+n-1 of A + Aᵀ. A's entry (i, j) gives i the edge to j
 * here, and j the edge to i at j's process, to which it travels (first[0..P]: the processes' first
 * rows). Collective; errors agreed. */
static shiro_status local_graph(const dist_comm *c, const sc_csr *A, int64_t lo, const int64_t *first,
                                SCOTCH_Num **xadj, SCOTCH_Num **adj, shiro_error *err) {
  const int P = c->size;
  const int64_t n = A->m;
  int64_t *sendn = calloc((size_t)P * 3, sizeof *sendn), *at = sendn ? sendn + P : NULL, *recvn = sendn ? sendn + 2 * P : NULL;
  SCOTCH_Num *send = NULL, *recv = NULL, *x = calloc((size_t)n + 1, sizeof *x), *e = NULL;
  shiro_status st = sendn && x ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "--partition metis: out of memory");
  int64_t pairs = 0, got = 0;
  for (int64_t i = 0; st == SHIRO_OK && i < n; i++)
    for (int64_t t = A->Ap[i]; t < A->Ap[i + 1]; t++)
      if (A->Aj[t] != lo + i) {
        sendn[owner(first, P, A->Aj[t])]++;
        pairs++;
      }
  if (st == SHIRO_OK && !(send = malloc((size_t)(pairs ? pairs : 1) * 2 * sizeof *send)))
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "--partition metis: out of memory");
  for (int d = 1; st == SHIRO_OK && d < P; d++) at[d] = at[d - 1] + sendn[d - 1];
  for (int64_t i = 0; st == SHIRO_OK && i < n; i++)
    for (int64_t t = A->Ap[i]; t < A->Ap[i + 1]; t++)
      if (A->Aj[t] != lo + i) {
        const int64_t w = at[owner(first, P, A->Aj[t])]++;
        send[2 * w] = (SCOTCH_Num)A->Aj[t]; /* the edge (j, i), for j's process */
        send[2 * w + 1] = (SCOTCH_Num)(lo + i);
      }
  for (int d = 0; sendn && d < P; d++) sendn[d] *= 2 * (int64_t)sizeof *send;
  st = dist_agree(c, st, err);
  if (st == SHIRO_OK) st = dist_alltoallv(c, send, sendn, (void **)&recv, recvn, err);
  free(send);
  for (int d = 0; st == SHIRO_OK && d < P; d++) got += recvn[d] / (2 * (int64_t)sizeof *recv);
  /* row i's slots: its own edges, then those received; counted, filled, then sorted and deduplicated */
  if (st == SHIRO_OK && pairs + got > NUM_MAX)
    st = shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "--partition metis: %lld edges on one process; this PT-Scotch has %d-bit "
                                                "integers" NUM_HINT,
                    (long long)(pairs + got), (int)(8 * sizeof(SCOTCH_Num)));
  if (st == SHIRO_OK && !(e = malloc((size_t)(pairs + got ? pairs + got : 1) * sizeof *e)))
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "--partition metis: out of memory");
  if (st == SHIRO_OK) {
    for (int64_t i = 0; i < n; i++)
      for (int64_t t = A->Ap[i]; t < A->Ap[i + 1]; t++) x[i + 1] += A->Aj[t] != lo + i;
    for (int64_t r = 0; r < got; r++) x[recv[2 * r] - lo + 1]++;
    for (int64_t i = 0; i < n; i++) x[i + 1] += x[i];
    for (int64_t i = 0; i < n; i++) /* x[i] walks to row i's end; shifted back after */
      for (int64_t t = A->Ap[i]; t < A->Ap[i + 1]; t++)
        if (A->Aj[t] != lo + i) e[x[i]++] = (SCOTCH_Num)A->Aj[t];
    for (int64_t r = 0; r < got; r++) e[x[recv[2 * r] - lo]++] = recv[2 * r + 1];
    for (int64_t i = n; i > 0; i--) x[i] = x[i - 1];
    x[0] = 0;
    SCOTCH_Num kept = 0;
    for (int64_t i = 0; i < n; i++) { /* in place: a row's kept edges never pass its slots' start */
      const SCOTCH_Num from = x[i], to = x[i + 1];
      qsort(e + from, (size_t)(to - from), sizeof *e, cmp_num);
      x[i] = kept;
      for (SCOTCH_Num t = from; t < to; t++)
        if (kept == x[i] || e[kept - 1] != e[t]) e[kept++] = e[t];
    }
    x[n] = kept;
  }
  st = dist_agree(c, st, err);
  free(sendn);
  free(recv);
  if (st != SHIRO_OK) {
    free(x);
    free(e);
    return st;
  }
  *xadj = x;
  *adj = e;
  return SHIRO_OK;
}

/* PT-Scotch's k-way partition of the distributed graph (n local vertices: x, e, w) into parts,
 * into part[n], with the fixed seed and a deterministic context. Collective; errors agreed. */
static shiro_status scotch_part(const dist_comm *c, SCOTCH_Num n, SCOTCH_Num *x, SCOTCH_Num *e, SCOTCH_Num *w,
                                SCOTCH_Num parts, SCOTCH_Num *part, shiro_error *err) {
  SCOTCH_Dgraph g, gc;
  SCOTCH_Strat strat;
  SCOTCH_Context ctx;
  int have_g = 0, have_gc = 0, have_strat = 0, have_ctx = 0;
  scotch_msg_reset();
  SCOTCH_randomSeed(SEED);
  SCOTCH_randomReset();
  shiro_status st = SHIRO_OK;
  if (SCOTCH_dgraphInit(&g, c->comm)) st = scotch_fail(err, "SCOTCH_dgraphInit");
  else have_g = 1;
  st = dist_agree(c, st, err);
  if (st == SHIRO_OK && SCOTCH_dgraphBuild(&g, 0, n, n, x, NULL, w, NULL, x[n], x[n], e, NULL, NULL))
    st = scotch_fail(err, "SCOTCH_dgraphBuild");
  st = dist_agree(c, st, err);
  /* a context of its own: deterministic, seeded, one thread (below) */
  if (st == SHIRO_OK) {
    if (SCOTCH_contextInit(&ctx)) st = scotch_fail(err, "SCOTCH_contextInit");
    else have_ctx = 1;
  }
  if (st == SHIRO_OK && (SCOTCH_contextRandomClone(&ctx) || SCOTCH_contextOptionSetNum(&ctx, SCOTCH_OPTIONNUMDETERMINISTIC, 1) || SCOTCH_contextOptionSetNum(&ctx, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1)))
    st = scotch_fail(err, "SCOTCH_contextOptionSetNum");
  if (st == SHIRO_OK) {
    SCOTCH_contextRandomSeed(&ctx, SEED);
    /* one thread: Scotch's threads fold the graph in two halves that call MPI at once, which needs
     * MPI_THREAD_MULTIPLE (shiro-plan asks for SERIALIZED) and crashed here with 3 processes */
    if (SCOTCH_contextThreadSpawn(&ctx, 1, NULL)) st = scotch_fail(err, "SCOTCH_contextThreadSpawn");
    if (st == SHIRO_OK && SCOTCH_contextBindDgraph(&ctx, &g, &gc)) st = scotch_fail(err, "SCOTCH_contextBindDgraph");
    else have_gc = st == SHIRO_OK;
  }
  if (st == SHIRO_OK) {
    if (SCOTCH_stratInit(&strat)) st = scotch_fail(err, "SCOTCH_stratInit");
    else have_strat = 1;
  }
  if (st == SHIRO_OK && SCOTCH_stratDgraphMapBuild(&strat, SCOTCH_STRATQUALITY, c->size, parts, KBAL))
    st = scotch_fail(err, "SCOTCH_stratDgraphMapBuild");
  st = dist_agree(c, st, err);
  if (st == SHIRO_OK && SCOTCH_dgraphPart(&gc, parts, &strat, part)) st = scotch_fail(err, "SCOTCH_dgraphPart");
  st = dist_agree(c, st, err);
  if (have_strat) SCOTCH_stratExit(&strat);
  if (have_gc) SCOTCH_dgraphExit(&gc);
  if (have_g) SCOTCH_dgraphExit(&g);
  if (have_ctx) SCOTCH_contextExit(&ctx);
  return st;
}

shiro_status dist_part_metis(const dist_comm *c, const dist_matrix *M, int32_t parts, int32_t *labels, shiro_error *err) {
  const int P = c->size;
  shiro_status st = SHIRO_OK;
  if (parts < 1) st = shiro_fail(err, SHIRO_ERR_ARG, "--partition metis: %d parts (at least 1)", (int)parts);
  else if (M->m != M->k)
    st = shiro_fail(err, SHIRO_ERR_ARG, "--partition metis needs a square matrix (this one is %lld x %lld)", (long long)M->m,
                    (long long)M->k);
  else if (SCOTCH_numSizeof() != (int)sizeof(SCOTCH_Num)) /* a 64-bit header with the 32-bit library, or back */
    st = shiro_fail(err, SHIRO_ERR_UNSUPPORTED,
                    "--partition metis: PT-Scotch's library has %d-bit integers and the header shiro was built with %d-bit "
                    "ones (-Dptscotch_int): link the library of that build",
                    8 * SCOTCH_numSizeof(), (int)(8 * sizeof(SCOTCH_Num)));
  else if (M->m > NUM_MAX)
    st = shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "--partition metis: %lld rows; this PT-Scotch has %d-bit integers" NUM_HINT,
                    (long long)M->m, (int)(8 * sizeof(SCOTCH_Num)));
  st = dist_agree(c, st, err);
  if (st != SHIRO_OK) return st;
  if (parts == 1 || M->m <= parts) { /* serial's kway: no call, one part, or one row per part */
    for (int64_t i = 0; i < M->m; i++) labels[i] = parts == 1 ? 0 : (int32_t)i;
    return SHIRO_OK;
  }
  const sc_csr *A = M->A;
  const int64_t n = M->hi - M->lo;
  int64_t *first = malloc(((size_t)P + 1) * sizeof *first), wsum = 0, edges = 0;
  int *cnt = malloc((size_t)P * 2 * sizeof *cnt), *dsp = cnt ? cnt + P : NULL;
  SCOTCH_Num *x = NULL, *e = NULL, *w = malloc(((size_t)n + 1) * sizeof *w), *part = malloc(((size_t)n + 1) * sizeof *part);
  int32_t *mine = malloc(((size_t)n + 1) * sizeof *mine);
  st = first && cnt && w && part && mine ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "--partition metis: out of memory");
  if (st == SHIRO_OK && A->m != n)
    st = shiro_fail(err, SHIRO_ERR_INTERNAL, "--partition metis: the stripe holds %lld rows, not %lld", (long long)A->m,
                    (long long)n);
  for (int64_t i = 0; st == SHIRO_OK && i < n; i++) { /* serial's weights, capped as there */
    const int64_t len = A->Ap[i + 1] - A->Ap[i] + 1, cap = INT32_MAX / parts;
    w[i] = (SCOTCH_Num)(len > cap ? cap : len);
    wsum += w[i];
  }
  st = dist_agree(c, st, err);
  /* the processes' rows, in process order one after the other (PT-Scotch's numbering) */
  if (st == SHIRO_OK) st = dist_stripes(c, M, "--partition metis", first, cnt, dsp, err);
  if (st == SHIRO_OK && MPI_Allreduce(MPI_IN_PLACE, &wsum, 1, MPI_INT64_T, MPI_SUM, c->comm) != MPI_SUCCESS)
    st = shiro_fail(err, SHIRO_ERR_MPI, "--partition metis: MPI_Allreduce of the weights failed");
  if (st == SHIRO_OK && wsum > NUM_MAX)
    st = shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "--partition metis: vertex weights summing to %lld; this PT-Scotch has "
                                                "%d-bit integers" NUM_HINT,
                    (long long)wsum, (int)(8 * sizeof(SCOTCH_Num)));
  st = dist_agree(c, st, err);
  if (st == SHIRO_OK) st = local_graph(c, A, M->lo, first, &x, &e, err);
  if (st == SHIRO_OK) {
    edges = x[n];
    if (MPI_Allreduce(MPI_IN_PLACE, &edges, 1, MPI_INT64_T, MPI_SUM, c->comm) != MPI_SUCCESS)
      st = shiro_fail(err, SHIRO_ERR_MPI, "--partition metis: MPI_Allreduce of the edges failed");
    else if (edges > NUM_MAX)
      st = shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "--partition metis: the symmetrized graph has %lld edges (both ways); "
                                                  "this PT-Scotch has %d-bit integers" NUM_HINT,
                      (long long)edges, (int)(8 * sizeof(SCOTCH_Num)));
    st = dist_agree(c, st, err);
  }
  if (st == SHIRO_OK) st = scotch_part(c, (SCOTCH_Num)n, x, e, w, parts, part, err);
  for (int64_t i = 0; st == SHIRO_OK && i < n; i++) {
    mine[i] = (int32_t)part[i];
    if (part[i] < 0 || part[i] >= parts)
      st = shiro_fail(err, SHIRO_ERR_INTERNAL, "--partition metis: PT-Scotch gave row %lld part %lld of %d",
                      (long long)(M->lo + i), (long long)part[i], (int)parts);
  }
  st = dist_agree(c, st, err); /* agreed already where scotch_part failed: every process is here */
  if (st == SHIRO_OK && MPI_Allgatherv(mine, (int)n, MPI_INT32_T, labels, cnt, dsp, MPI_INT32_T, c->comm) != MPI_SUCCESS)
    st = dist_agree(c, shiro_fail(err, SHIRO_ERR_MPI, "--partition metis: MPI_Allgatherv of the labels failed"), err);
  free(first);
  free(cnt);
  free(x);
  free(e);
  free(w);
  free(part);
  free(mine);
  return st;
}
#endif
