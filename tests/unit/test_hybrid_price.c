/* test_hybrid_price — hybrid prices its candidates from their messages alone
 * (compiler/cover/hybrid.c's price_messages, cost.h's cost_add_flow) and must
 * get exactly what the cost model gives the built plan (cost_plan.c).
 *
 * On real matrices, several rank counts and ranks per node (a smaller last
 * node among them), on tsubame4 and on a 2-GPU machine with a slow NIC (where
 * relaying pays on some node pairs and not on others, so the candidates mix
 * direct, relayed and moved relays), the routing's price_check prices every
 * candidate both ways; the largest relative difference must be 0 (the same
 * messages added in the same order: the same floating-point sums), and the
 * kept plan, built and priced, must cost what hybrid says it chose. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocks.h"
#include "cost_plan.h"
#include "mm_read.h"
#include "partition.h"
#include "strategy.h"
#include "test_util.h"

static int64_t checked_prices;

static void check_case(const char *path, int32_t R, int32_t gpn, const sc_machine *m) {
  shiro_error err = {{0}};
  sc_csr *A = NULL;
  sc_partition Prow = {0}, Pcol = {0};
  sc_blocks B = {0};
  char tag[256];
  snprintf(tag, sizeof tag, "%s R=%d G=%d %s", strrchr(path, '/') ? strrchr(path, '/') + 1 : path, R, gpn, m->name);
  if (mm_read(path, &A, NULL, &err) != SHIRO_OK || part_block(A->m, R, &Prow, &err) != SHIRO_OK ||
      part_block(A->k, R, &Pcol, &err) != SHIRO_OK || blocks_build(A, &Prow, &Pcol, &B, &err) != SHIRO_OK ||
      strategy_select(&B, STRAT_JOINT, gpn, NULL, NULL, &err) != SHIRO_OK) {
    EXPECT(0, "%s: setting up failed: %s", tag, err.message);
    goto done;
  }
  const size_t row_bytes = 64 * sizeof(float);
  cost_hybrid hp = {A, &Prow, &Pcol, gpn, m, row_bytes};
  if (cost_route_hybrid(&B, &hp, &err) != SHIRO_OK) {
    EXPECT(0, "%s: %s", tag, err.message);
    goto done;
  }
  B.route->price_check = 1;
  if (strategy_select(&B, STRAT_HYBRID, gpn, NULL, NULL, &err) != SHIRO_OK) {
    EXPECT(0, "%s: hybrid failed: %s", tag, err.message);
    goto done;
  }
  const sc_route *rt = B.route;
  EXPECT(rt->prices >= 2, "%s: %d candidates priced", tag, rt->prices);
  EXPECT(rt->price_check_rel == 0, "%s: priced from messages %.3g away from the built plan's price", tag,
         rt->price_check_rel);
  cost_pred pred;
  if (cost_plan(A, &Prow, &Pcol, &B, STRAT_HYBRID, gpn, m, row_bytes, NULL, &pred, NULL, &err) != SHIRO_OK) {
    EXPECT(0, "%s: pricing the kept plan: %s", tag, err.message);
    goto done;
  }
  EXPECT(pred.time_s == rt->price_s, "%s: the kept plan prices %.9g, hybrid chose it at %.9g", tag, pred.time_s,
         rt->price_s);
  checked_prices += rt->prices;
  printf("ok   %s: %d candidates priced from their messages, as built (candidate %d, %lld direct / %lld relayed "
         "pairs, %lld relays moved)\n",
         tag, rt->prices, rt->candidate, (long long)rt->pairs_direct, (long long)rt->pairs_relayed,
         (long long)rt->relays_moved);
done:
  if (B.route) B.route->price = NULL;
  blocks_free(&B);
  part_free(&Prow);
  part_free(&Pcol);
  sc_csr_free(A);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_hybrid_price MATRIX...\n");
    return 2;
  }
  shiro_error err = {{0}};
  sc_machine ts, slow;
  if (machine_load("tsubame4", &ts, &err) != SHIRO_OK) {
    fprintf(stderr, "FAIL tsubame4: %s\n", err.message);
    return 1;
  }
  slow = ts; /* 2 GPUs per node, a 2 GB/s NIC each: relaying pays on some node pairs only */
  snprintf(slow.name, sizeof slow.name, "slow-nic-2");
  slow.gpus_per_node = 2;
  slow.nics_per_node = 2;
  slow.nic_Bps = 2e9;
  static const struct {
    int32_t R, gpn;
    int slow;
  } cases[] = {{32, 4, 0}, {30, 4, 0}, {16, 8, 0}, {12, 2, 1}, {32, 2, 1}};
  for (int a = 1; a < argc; a++)
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
      check_case(argv[a], cases[c].R, cases[c].gpn, cases[c].slow ? &slow : &ts);
  EXPECT(checked_prices > 0, "no candidate was priced");
  printf("%s: %lld prices checked, %d failures\n", test_failures ? "FAIL" : "ok", (long long)checked_prices,
         test_failures);
  return test_failures ? 1 : 0;
}
