/* test_stages — the posting order of every transport (runtime/stages.c), on real plans.
 *
 * NCCL has no tags: the k-th send from p to q in a group meets the k-th
 * receive at q from p. rt_stages_build orders each stage's messages by
 * (peer, kind, direction) on every rank; this test builds plans of every
 * strategy for several rank counts and nodes, runs rt_stages_build for every
 * rank, and checks for every stage and ordered pair (p, q) that p's sends to q
 * and q's receives from p form the same sequence of (kind, rows). It also
 * checks the staged-MPI copy ranges: per stage and buffer, the rows they cover
 * are exactly the rows the stage sends (device → host) or receives (host →
 * device). Runs without a GPU or MPI (this is the multi-rank NCCL path that a
 * one-GPU machine cannot run). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocks.h"
#include "mm_read.h"
#include "partition.h"
#include "plan_build.h"
#include "stages.h"
#include "test_util.h"
#include "strategy.h"

/* Rows of buf covered by the ranges, or by the stage's records in direction dir, as marks. */
static void mark_ranges(const rt_range *r, int64_t n, int buf, uint8_t *m) {
  for (int64_t i = 0; i < n; i++)
    if (r[i].buf == buf)
      for (int64_t k = 0; k < r[i].count; k++) m[r[i].row + k] = 1;
}

static void check_ranges(const prog_rank *pr, const rt_stages *s, int32_t rank, const char *tag) {
  const int64_t rows[PROG_NBUF] = {0, 0, pr->s_rows, pr->r_rows};
  for (int32_t g = 0; g < s->nstages; g++) {
    const rt_stage *st = &s->stage[g];
    for (int dir = 0; dir < 2; dir++)
      for (int buf = PROG_BUF_S; buf <= PROG_BUF_R; buf++) {
        uint8_t *a = calloc((size_t)rows[buf] + 1, 1), *b = calloc((size_t)rows[buf] + 1, 1);
        for (int64_t i = st->x_first; i < st->x_first + st->nx; i++) {
          const int64_t *x = s->xs[i];
          if (x[XF_DIR] == dir && x[XF_BUF] == buf)
            for (int64_t k = 0; k < x[XF_COUNT]; k++) a[x[XF_OFF] + k] = 1;
        }
        if (dir == 0) mark_ranges(s->ranges + st->out_first, st->nout, buf, b);
        else mark_ranges(s->ranges + st->in_first, st->nin, buf, b);
        EXPECT(!memcmp(a, b, (size_t)rows[buf] + 1), "%s rank %d stage %d dir %d buf %d: copy ranges differ from the records", tag,
               rank, g, dir, buf);
        free(a);
        free(b);
      }
  }
}

/* Every stage and ordered pair: p's sends to q == q's receives from p, in posting order. */
static void check_matching(const sc_plan *P, rt_stages *const *s, const char *tag) {
  const int32_t R = P->meta.ranks;
  int64_t messages = 0;
  for (int32_t p = 0; p < R; p++)
    for (int32_t q = 0; q < R; q++) {
      if (p == q) continue;
      const int32_t stages = s[p]->nstages > s[q]->nstages ? s[p]->nstages : s[q]->nstages;
      for (int32_t g = 0; g < stages; g++) {
        const rt_stage *a = g < s[p]->nstages ? &s[p]->stage[g] : NULL, *b = g < s[q]->nstages ? &s[q]->stage[g] : NULL;
        int64_t i = a ? a->x_first : 0, j = b ? b->x_first : 0;
        const int64_t ie = a ? a->x_first + a->nx : 0, je = b ? b->x_first + b->nx : 0;
        for (;;) {
          while (i < ie && !(s[p]->xs[i][XF_DIR] == 0 && s[p]->xs[i][XF_PEER] == q)) i++;
          while (j < je && !(s[q]->xs[j][XF_DIR] == 1 && s[q]->xs[j][XF_PEER] == p)) j++;
          if (i >= ie || j >= je) {
            EXPECT(i >= ie && j >= je, "%s stage %d %d->%d: %s has an unmatched message", tag, g, p, q, i < ie ? "the sender" : "the receiver");
            break;
          }
          const int64_t *x = s[p]->xs[i], *y = s[q]->xs[j];
          EXPECT(x[XF_KIND] == y[XF_KIND] && x[XF_COUNT] == y[XF_COUNT],
                 "%s stage %d %d->%d: posted send (kind %lld, %lld rows) meets receive (kind %lld, %lld rows)", tag, g, p, q,
                 (long long)x[XF_KIND], (long long)x[XF_COUNT], (long long)y[XF_KIND], (long long)y[XF_COUNT]);
          messages++;
          i++;
          j++;
        }
      }
    }
  printf("ok   %s: %lld messages matched in NCCL posting order\n", tag, (long long)messages);
}

static void check_plan(const char *path, int32_t R, int32_t gpn, const char *strategy) {
  shiro_error err = {{0}};
  sc_csr *A = NULL;
  sc_partition Prow = {0}, Pcol = {0};
  sc_blocks B = {0};
  sc_plan P = {0};
  sc_strategy s;
  char tag[256];
  snprintf(tag, sizeof tag, "%s R=%d G=%d %s", strrchr(path, '/') ? strrchr(path, '/') + 1 : path, R, gpn, strategy);
  if (strategy_parse(strategy, &s, &err) != SHIRO_OK || mm_read(path, &A, NULL, &err) != SHIRO_OK ||
      part_block(A->m, R, &Prow, &err) != SHIRO_OK || part_block(A->k, R, &Pcol, &err) != SHIRO_OK ||
      blocks_build(A, &Prow, &Pcol, &B, &err) != SHIRO_OK || strategy_select(&B, s, gpn, NULL, NULL, &err) != SHIRO_OK ||
      plan_build(A, &Prow, &Pcol, &B, s, gpn, &P, &err) != SHIRO_OK) {
    EXPECT(0, "%s: planning failed: %s", tag, err.message);
    goto done;
  }
  rt_stages **st = calloc((size_t)R, sizeof *st);
  char msg[512] = "";
  for (int32_t r = 0; r < R; r++) {
    st[r] = calloc(1, sizeof *st[r]);
    EXPECT(rt_stages_build(st[r], &P.ranks[r], msg) == SHIRO_OK, "%s rank %d: %s", tag, r, msg);
    check_ranges(&P.ranks[r], st[r], r, tag);
  }
  if (!test_failures) check_matching(&P, st, tag);
  for (int32_t r = 0; r < R; r++) {
    rt_stages_free(st[r]);
    free(st[r]);
  }
  free(st);
done:
  plan_free(&P);
  blocks_free(&B);
  part_free(&Prow);
  part_free(&Pcol);
  sc_csr_free(A);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_stages MATRIX...\n");
    return 2;
  }
  static const struct {
    int32_t R, gpn;
    const char *strategy;
  } cases[] = {
      {8, 4, "hier"}, {8, 4, "group"}, {8, 2, "hier"}, {8, 2, "group"}, {6, 4, "hier"}, {5, 2, "group"}, {4, 1, "joint"}, {8, 1, "block"}, {3, 1, "row"}, {5, 1, "col"}};
  for (int a = 1; a < argc; a++)
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) check_plan(argv[a], cases[c].R, cases[c].gpn, cases[c].strategy);
  printf("%s: %d failures\n", test_failures ? "FAIL" : "ok", test_failures);
  return test_failures ? 1 : 0;
}
