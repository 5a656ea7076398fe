/* test_strategy.c — properties of the blocks and strategies on real matrices:
 * the blocks partition the off-diagonal nonzeros; every joint cover covers its
 * block and has as many vertices as the certificate joint keeps (b->rmatch),
 * which is checked here to be a matching of the block (so, by König, cover
 * and matching are both optimal), and is no larger than the block's rows or
 * columns (joint <= min(col, row) per pair); selections do not depend on the
 * thread count; every strategy leaves each block the entry counts of its
 * selection; group's NIC-balanced covers keep its cardinality and
 * certificates and never raise its NIC estimate.
 *   test_strategy        the matrices shipped in tests/data (workdir tests/)
 *   test_strategy DIR    four larger ones of the shared set DIR
 *                        (../shared/data/matrices); exit 77 if DIR is absent
 * Exit 0 if all hold, 1 (each failure printed) if not. */
#include <errno.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blocks.h"
#include "mm_read.h"
#include "sorted.h"
#include "strategy.h"
#include "test_util.h"

/* The entry counts a strategy leaves in a block are those of its selection. */
static void check_entries(const char *path, const sc_block *b) {
  int64_t np = 0, nr = 0;
  for (int32_t i = 0; i < b->nr; i++)
    for (int64_t e = b->Gp[i]; e < b->Gp[i + 1]; e++) {
      nr += b->csel[b->Gj[e]];
      np += b->rsel[i] && !b->csel[b->Gj[e]];
    }
  EXPECT(np == b->ent_partial && nr == b->ent_remote, "%s block (%d,%d): entries %lld/%lld, counted %lld/%lld", path,
         b->p, b->q, (long long)b->ent_partial, (long long)b->ent_remote, (long long)np, (long long)nr);
}

/* The pairs of rmatch (column matched to each row of b, or -1), after
 * checking that they form a matching of b: every pair (i, rmatch[i]) is an
 * edge of row i, no column is matched twice. Returns -1 (and prints why) if
 * they do not. */
static int64_t matching_pairs(const char *path, const sc_block *b, const int32_t *rmatch) {
  uint8_t *used = calloc((size_t)b->nc + 1, 1);
  int64_t pairs = 0;
  if (!used) {
    EXPECT(0, "out of memory");
    return -1;
  }
  for (int32_t i = 0; i < b->nr && pairs >= 0; i++) {
    int32_t j = rmatch[i];
    if (j == -1) continue;
    int64_t e = b->Gp[i];
    while (j >= 0 && j < b->nc && e < b->Gp[i + 1] && b->Gj[e] != j) e++;
    const char *bad = j < 0 || j >= b->nc ? "out of range" : e == b->Gp[i + 1] ? "not an edge"
        : used[j]                                                              ? "matched twice"
                                                                               : NULL;
    EXPECT(!bad, "%s block (%d,%d): certificate pair (row %d, column %d): %s", path, b->p, b->q, i, j, bad);
    if (bad) pairs = -1;
    else used[j] = 1, pairs++;
  }
  free(used);
  return pairs;
}

/* Group-style node-level counts of blocks B with G ranks per node: *rows = Σ over node pairs
 * (N <- H) of the distinct columns each q of H sends (selected in some block (p in N, q)) plus the
 * distinct rows each p of N receives; *est = the busiest NIC of stage 0 (columns q -> rail(N, q),
 * out of q and into the rail rank) plus that of stage 1 (rows rail(H, p) -> p), in rows.
 * Every nonzero of an inter-node block must have its row or its column selected. */
static void node_counts(const char *path, const sc_blocks *B, int32_t G, int64_t *rows, int64_t *est) {
  int32_t R = B->parts, nodes = (R + G - 1) / G;
  int64_t *L = calloc((size_t)4 * R, sizeof *L);
  int64_t rmax = 0;
  for (int64_t t = 0; t < B->n; t++)
    rmax = B->b[t].nr > rmax ? B->b[t].nr : rmax, rmax = B->b[t].nc > rmax ? B->b[t].nc : rmax;
  int64_t *seen = NULL;
  int64_t total = 0, m0 = 0, m1 = 0;
  *rows = *est = -1;
  if (!L) {
    EXPECT(0, "out of memory");
    return;
  }
  for (int32_t x = 0; x < R; x++) /* per rank x: its distinct selected columns toward each node, rows from each */
    for (int side = 0; side < 2; side++)
      for (int32_t other = 0; other < nodes; other++) {
        if (other == x / G) continue;
        int64_t n = 0, cap = 0;
        for (int64_t t = 0; t < B->n; t++) {
          const sc_block *b = &B->b[t];
          if (side ? (b->p == x && b->q / G == other) : (b->q == x && b->p / G == other)) cap += side ? b->nr : b->nc;
        }
        seen = realloc(seen, (size_t)(cap + 1) * sizeof *seen);
        for (int64_t t = 0; t < B->n; t++) {
          const sc_block *b = &B->b[t];
          if (!(side ? (b->p == x && b->q / G == other) : (b->q == x && b->p / G == other))) continue;
          for (int32_t i = 0; i < b->nr; i++)
            for (int64_t e = b->Gp[i]; e < b->Gp[i + 1]; e++)
              EXPECT(b->rsel[i] || b->csel[b->Gj[e]], "%s block (%d,%d): a nonzero uncovered", path, b->p, b->q);
          if (side) {
            for (int32_t i = 0; i < b->nr; i++)
              if (b->rsel[i]) seen[n++] = b->rows[i];
          } else {
            for (int32_t j = 0; j < b->nc; j++)
              if (b->csel[j]) seen[n++] = b->cols[j];
          }
        }
        int64_t u = 0; /* distinct: small lists, quadratic is fine */
        for (int64_t a = 0; a < n; a++) {
          int dup = 0;
          for (int64_t c = 0; c < a && !dup; c++) dup = seen[c] == seen[a];
          u += !dup;
        }
        total += u;
        if (side) {
          L[2 * R + sc_rail(other, x, G, R)] += u;
          L[3 * R + x] += u;
        } else {
          L[x] += u;
          L[R + sc_rail(other, x, G, R)] += u;
        }
      }
  for (int32_t r = 0; r < 2 * R; r++) {
    if (L[r] > m0) m0 = L[r];
    if (L[2 * R + r] > m1) m1 = L[2 * R + r];
  }
  *rows = total;
  *est = m0 + m1;
  free(seen);
  free(L);
}

/* Group's NIC-balanced covers against its own at G = 2: the same inter-node rows (both minimum
 * at the node level) and certificates, every nonzero covered, entry counts kept, a NIC estimate no
 * higher, the same selections on 1 and 2 threads. */
static void check_balanced(const char *path, const sc_csr *A, const sc_partition *Pr, const sc_partition *Pc) {
  shiro_error err;
  sc_blocks Bg = {0}, Bb[2] = {{0}, {0}};
  const int32_t G = 2;
  EXPECT(blocks_build(A, Pr, Pc, &Bg, &err) == SHIRO_OK && strategy_select(&Bg, STRAT_GROUP, G, NULL, NULL, &err) == SHIRO_OK,
         "group: %s", err.message);
  for (int th = 0; th < 2; th++) {
    omp_set_num_threads(th + 1);
    EXPECT(blocks_build(A, Pr, Pc, &Bb[th], &err) == SHIRO_OK && strategy_select(&Bb[th], STRAT_JOINT, G, NULL, NULL, &err) == SHIRO_OK &&
               strategy_select_group_balanced(&Bb[th], G, 4, &err) == SHIRO_OK,
           "balanced: %s", err.message);
  }
  int64_t rg, eg, rb, eb;
  node_counts(path, &Bg, G, &rg, &eg);
  node_counts(path, &Bb[0], G, &rb, &eb);
  EXPECT(rg == rb && eb <= eg, "%s R=%d: group %lld inter-node rows, NIC estimate %lld; balanced %lld, %lld", path,
         Bg.parts, (long long)rg, (long long)eg, (long long)rb, (long long)eb);
  for (int64_t t = 0; t < Bb[0].n; t++) {
    const sc_block *b = &Bb[0].b[t];
    check_entries(path, b);
    EXPECT(!memcmp(b->rsel, Bb[1].b[t].rsel, (size_t)b->nr) && !memcmp(b->csel, Bb[1].b[t].csel, (size_t)b->nc),
           "%s block (%d,%d): balanced cover differs between 1 and 2 threads", path, b->p, b->q);
  }
  int64_t npairs = (int64_t)Bg.cert_nodes * Bg.cert_nodes;
  for (int64_t c = 0; c < npairs && Bb[0].cert_at; c++) {
    int64_t n = Bg.cert_at[c * (G + 1) + G];
    EXPECT(n == Bb[0].cert_at[c * (G + 1) + G] && (n == 0 || !memcmp(Bg.cert[c], Bb[0].cert[c], (size_t)n * 2 * sizeof(int64_t))),
           "%s node pair %lld: the balanced certificate is not group's", path, (long long)c);
  }
  blocks_free(&Bg);
  blocks_free(&Bb[0]);
  blocks_free(&Bb[1]);
}

static void check_matrix(const char *path, int32_t R) {
  shiro_error err;
  sc_csr *A = NULL;
  if (mm_read(path, &A, NULL, &err) != SHIRO_OK) {
    EXPECT(0, "%s", err.message);
    return;
  }
  sc_partition Pr = {0}, Pc = {0};
  sc_blocks B1 = {0}, B2 = {0};
  EXPECT(part_block(A->m, R, &Pr, &err) == SHIRO_OK && part_block(A->k, R, &Pc, &err) == SHIRO_OK, "partition");
  EXPECT(blocks_build(A, &Pr, &Pc, &B1, &err) == SHIRO_OK, "blocks: %s", err.message);
  EXPECT(blocks_build(A, &Pr, &Pc, &B2, &err) == SHIRO_OK, "blocks: %s", err.message);
  /* off-diagonal nonzeros = nonzeros outside the diagonal blocks */
  int64_t off = 0, in_blocks = 0;
  for (int32_t p = 0; p < R; p++)
    for (int64_t i = Pr.first[p]; i < Pr.first[p + 1]; i++)
      for (int64_t t = A->Ap[i]; t < A->Ap[i + 1]; t++) off += A->Aj[t] < Pc.first[p] || A->Aj[t] >= Pc.first[p + 1];
  for (int64_t t = 0; t < B1.n; t++) in_blocks += B1.b[t].ne;
  EXPECT(off == in_blocks, "%s R=%d: %lld off-diagonal nonzeros, blocks hold %lld", path, R, (long long)off, (long long)in_blocks);
  omp_set_num_threads(1);
  EXPECT(strategy_select(&B1, STRAT_JOINT, 1, NULL, NULL, &err) == SHIRO_OK, "joint");
  omp_set_num_threads(2);
  EXPECT(strategy_select(&B2, STRAT_JOINT, 1, NULL, NULL, &err) == SHIRO_OK, "joint");
  for (int64_t t = 0; t < B1.n; t++) {
    const sc_block *b = &B1.b[t];
    int64_t size = 0, uncovered = 0;
    for (int32_t i = 0; i < b->nr; i++) size += b->rsel[i];
    for (int32_t j = 0; j < b->nc; j++) size += b->csel[j];
    for (int32_t i = 0; i < b->nr; i++)
      for (int64_t e = b->Gp[i]; e < b->Gp[i + 1]; e++) uncovered += !b->rsel[i] && !b->csel[b->Gj[e]];
    EXPECT(b->rmatch, "%s block (%d,%d): joint kept no certificate", path, b->p, b->q);
    int64_t mu = b->rmatch ? matching_pairs(path, b, b->rmatch) : -1;
    EXPECT(uncovered == 0, "%s block (%d,%d): %lld nonzeros uncovered", path, b->p, b->q, (long long)uncovered);
    EXPECT(size == mu && size == b->mu, "%s block (%d,%d): cover %lld, certificate matching %lld (b->mu %lld)", path,
           b->p, b->q, (long long)size, (long long)mu, (long long)b->mu);
    EXPECT(size <= b->nr && size <= b->nc, "%s block (%d,%d): joint %lld > min(row %d, col %d)", path, b->p, b->q,
           (long long)size, b->nr, b->nc);
    EXPECT(!memcmp(b->rsel, B2.b[t].rsel, (size_t)b->nr) && !memcmp(b->csel, B2.b[t].csel, (size_t)b->nc),
           "%s block (%d,%d): cover differs between 1 and 2 threads", path, b->p, b->q);
    check_entries(path, b);
  }
  /* every other strategy leaves its counts too (group: blocks between nodes cut back from node-pair covers) */
  sc_strategy others[] = {STRAT_COL, STRAT_ROW, STRAT_GROUP};
  for (size_t s = 0; s < sizeof others / sizeof *others; s++) {
    EXPECT(strategy_select(&B2, others[s], 2, NULL, NULL, &err) == SHIRO_OK, "%s", strategy_name(others[s]));
    for (int64_t t = 0; t < B2.n; t++) check_entries(path, &B2.b[t]);
  }
  if (R >= 4) check_balanced(path, A, &Pr, &Pc);
  blocks_free(&B1);
  blocks_free(&B2);
  part_free(&Pr);
  part_free(&Pc);
  sc_csr_free(A);
}

/* A matrix of 2^31 rows (or columns): refused by blocks_build before it reads A (block row and
 * column ids are 32-bit), saying why; nothing is allocated for it. */
static void check_too_wide(void) {
  for (int side = 0; side < 2; side++) {
    const int64_t big = (int64_t)1 << 31;
    sc_csr A = {.m = side ? 4 : big, .k = side ? big : 4}; /* no arrays: never read */
    sc_partition Pr = {0}, Pc = {0};
    sc_blocks B;
    shiro_error err = {{0}};
    EXPECT(part_block(A.m, 2, &Pr, &err) == SHIRO_OK && part_block(A.k, 2, &Pc, &err) == SHIRO_OK, "partitions: %s",
           err.message);
    shiro_status st = blocks_build(&A, &Pr, &Pc, &B, &err);
    EXPECT(st == SHIRO_ERR_UNSUPPORTED && strstr(err.message, "2147483648") && strstr(err.message, "at most 2^31-1"),
           "%s of 2^31: status %d, '%s'", side ? "columns" : "rows", (int)st, err.message);
    if (st == SHIRO_OK) blocks_free(&B);
    part_free(&Pr);
    part_free(&Pc);
  }
}

int main(int argc, char **argv) {
  const char *shipped[] = {"data/karate.mtx", "data/lp_ship04l.mtx", "data/ca-GrQc.mtx", "data/email-Eu-core.mtx",
                           "data/fidapex6.mtx.gz", "data/west0067.mtx"};
  const char *shared[] = {"bcsstk33.mtx.gz", "cit-HepTh.mtx.gz", "sx-mathoverflow.mtx.gz", "f855_mat9_I.mtx.gz"};
  int32_t ranks[] = {2, 5, 16};
  if (argc > 2) {
    fprintf(stderr, "usage: test_strategy [SHARED_MATRICES_DIR]\n");
    return 1;
  }
  if (argc == 2) {
    /* the set may be absent (a checkout without ../shared); a file missing from it is a failure */
    if (access(argv[1], F_OK) != 0) {
      fprintf(stderr, "SKIP: the shared matrix set %s is absent (%s): its matrices are not checked\n", argv[1],
              strerror(errno));
      return 77;
    }
    for (size_t m = 0; m < sizeof shared / sizeof *shared; m++) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[1], shared[m]);
      check_matrix(path, 16);
    }
  } else {
    check_too_wide();
    for (size_t m = 0; m < sizeof shipped / sizeof *shipped; m++)
      for (size_t r = 0; r < 3; r++) check_matrix(shipped[m], ranks[r]);
  }
  if (test_failures) fprintf(stderr, "%d failures\n", test_failures);
  return test_failures != 0;
}
