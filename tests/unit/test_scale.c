/* test_scale.c — what R alone costs: karate (34 rows) planned for R = 20,000
 * ranks, G = 8, every strategy but block (whose plan has R² messages by
 * design), program by program into a counting sink, with the address space
 * capped at 1.5 GiB. The planner's tables are sparse over the rank pairs that
 * exchange something; an R x R table of one byte a pair would be
 * 400 MB, the old builders' 40 and 136 bytes a pair 16 and 54 GB. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "blocks.h"
#include "error.h"
#include "mm_read.h"
#include "plan_build.h"
#include "strategy.h"
#include "test_util.h"

enum { R = 20000,
       G = 8 };

typedef struct count {
  int32_t next;
  int64_t ops;
  int in_order;
} count;

/* The sink: checks rank order, counts, frees. */
static shiro_status count_rank(void *arg, const prog_meta *meta, prog_rank *pr, shiro_error *err) {
  (void)meta;
  (void)err;
  count *c = arg;
  c->in_order &= pr->rank == c->next++;
  c->ops += pr->nops;
  prog_rank_free(pr);
  return SHIRO_OK;
}

int main(void) {
  struct rlimit lim = {(rlim_t)3 << 29, (rlim_t)3 << 29}; /* 1.5 GiB */
  if (setrlimit(RLIMIT_AS, &lim) != 0) {
    fprintf(stderr, "skip: cannot cap the address space\n");
    return 77;
  }
  shiro_error err;
  sc_csr *A = NULL;
  sc_partition Pr = {0}, Pc = {0};
  if (mm_read("data/karate.mtx", &A, NULL, &err) != SHIRO_OK || part_block(A->m, R, &Pr, &err) != SHIRO_OK ||
      part_block(A->k, R, &Pc, &err) != SHIRO_OK) {
    fprintf(stderr, "setup: %s\n", err.message);
    return 1;
  }
  const sc_strategy strategies[] = {STRAT_COL, STRAT_ROW, STRAT_JOINT, STRAT_HIER, STRAT_GROUP, STRAT_COLA};
  for (size_t k = 0; k < sizeof strategies / sizeof *strategies; k++) {
    sc_strategy s = strategies[k];
    sc_blocks B = {0};
    count c = {0, 0, 1};
    shiro_status st = blocks_build(A, &Pr, &Pc, &B, &err);
    if (st == SHIRO_OK) st = strategy_select(&B, s, G, NULL, NULL, &err);
    if (st == SHIRO_OK) st = plan_build_each(A, &Pr, &Pc, &B, s, G, count_rank, &c, &err);
    EXPECT(st == SHIRO_OK, "%s at R = %d: %s", strategy_name(s), R, st ? err.message : "");
    EXPECT(st != SHIRO_OK || (c.next == R && c.in_order && c.ops > 0), "%s: %d ranks delivered (in order: %d)",
           strategy_name(s), c.next, c.in_order);
    blocks_free(&B);
  }
  part_free(&Pr);
  part_free(&Pc);
  sc_csr_free(A);
  if (test_failures) fprintf(stderr, "%d failures\n", test_failures);
  return test_failures != 0;
}
