/* test_price_messages — plans priced from their messages, no program built,
 * must be priced exactly as the built programs are.
 *
 * cost_plan (compiler/choose/cost_plan.c) prices a strategy's plan from
 * plan_messages (compiler/plan/: the builders' layouts, each program's send
 * records in posting order) and hybrid prices its candidates from its own
 * routing's counts (compiler/cover/hybrid.c's price_messages); both replaced
 * building every rank's program. On real matrices, several rank counts and
 * ranks per node (a smaller last node among them), on tsubame4 and on a
 * 2-GPU machine with a slow NIC (where hybrid mixes direct and relayed node
 * pairs and moves relays):
 *   * every strategy: cost_plan's prediction (time, stages, each stage's
 *     bottleneck), per-rank times and volumes equal those of the built plan
 *     (plan_build, cost_add_rank, plan_rank_volumes), bit for bit;
 *   * hybrid: with route.price_check every candidate is priced both ways
 *     (its counts, and cost_plan) with no difference at all, and the plan it
 *     keeps, built, prices as it said. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blocks.h"
#include "cost_plan.h"
#include "mm_read.h"
#include "partition.h"
#include "plan_build.h"
#include "strategy.h"
#include "test_util.h"

static int64_t checked_prices, checked_plans;

/* The built plan of strategy s (selections set) priced and counted the way cost_plan did before
 * it priced messages: every program built, its send records added. */
static shiro_status built_price(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol, const sc_blocks *B,
                                sc_strategy s, int32_t gpn, const sc_machine *m, size_t row_bytes, sc_volumes *vol,
                                cost_pred *pred, double *rank_s, shiro_error *err) {
  sc_plan P = {0};
  cost_model cm;
  shiro_status st = plan_build(A, Prow, Pcol, B, s, gpn, &P, err);
  if (st == SHIRO_OK) st = cost_init(&cm, m, Prow->parts, row_bytes, err);
  if (st != SHIRO_OK) {
    plan_free(&P);
    return st;
  }
  for (int32_t r = 0; r < Prow->parts; r++) {
    cost_add_rank(&cm, &P.ranks[r]);
    plan_rank_volumes(&P.ranks[r], vol);
  }
  st = cost_predict_ranks(&cm, pred, rank_s, err);
  cost_free(&cm);
  plan_free(&P);
  return st;
}

/* Strategy s on blocks B: cost_plan's price and volumes against the built plan's. */
static void check_strategy(const char *tag, const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol,
                           const sc_blocks *B, sc_strategy s, int32_t gpn, const sc_machine *m, size_t row_bytes) {
  shiro_error err = {{0}};
  const int32_t R = Prow->parts;
  sc_volumes vm = {0}, vb = {0};
  cost_pred pm, pb;
  double *rm = calloc((size_t)R, sizeof *rm), *rb = calloc((size_t)R, sizeof *rb);
  if (!rm || !rb || cost_plan(A, Prow, Pcol, B, s, gpn, m, row_bytes, &vm, &pm, rm, &err) != SHIRO_OK ||
      built_price(A, Prow, Pcol, B, s, gpn, m, row_bytes, &vb, &pb, rb, &err) != SHIRO_OK) {
    EXPECT(0, "%s %s: pricing failed: %s", tag, strategy_name(s), err.message);
    goto done;
  }
  EXPECT(pm.time_s == pb.time_s && pm.nstages == pb.nstages, "%s %s: messages price %.9g (%d stages), built %.9g (%d)", tag,
         strategy_name(s), pm.time_s, pm.nstages, pb.time_s, pb.nstages);
  for (int32_t g = 0; g < pb.nstages && g < COST_MAX_STAGES; g++)
    EXPECT(!memcmp(&pm.stage[g], &pb.stage[g], sizeof pb.stage[g]), "%s %s: stage %d differs (%.9g at rank %d, built %.9g at rank %d)",
           tag, strategy_name(s), g, pm.stage[g].time_s, pm.stage[g].rank, pb.stage[g].time_s, pb.stage[g].rank);
  EXPECT(!memcmp(rm, rb, (size_t)R * sizeof *rm), "%s %s: per-rank times differ", tag, strategy_name(s));
  EXPECT(vm.total_rows == vb.total_rows && vm.inter_node_rows == vb.inter_node_rows && vm.intra_node_rows == vb.intra_node_rows,
         "%s %s: volumes %lld/%lld/%lld, built %lld/%lld/%lld", tag, strategy_name(s), (long long)vm.total_rows,
         (long long)vm.inter_node_rows, (long long)vm.intra_node_rows, (long long)vb.total_rows, (long long)vb.inter_node_rows,
         (long long)vb.intra_node_rows);
  checked_plans++;
done:
  free(rm);
  free(rb);
}

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
  sc_volumes vol = {0};
  if (built_price(A, &Prow, &Pcol, &B, STRAT_HYBRID, gpn, m, row_bytes, &vol, &pred, NULL, &err) != SHIRO_OK) {
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
  check_strategy(tag, A, &Prow, &Pcol, &B, STRAT_HYBRID, gpn, m, row_bytes);
  for (int k = 0; k < STRAT_COUNT; k++) { /* every other strategy on the same blocks */
    if (k == STRAT_HYBRID) continue;
    if (strategy_select(&B, (sc_strategy)k, gpn, NULL, NULL, &err) != SHIRO_OK) {
      EXPECT(0, "%s %s: %s", tag, strategy_name((sc_strategy)k), err.message);
      continue;
    }
    check_strategy(tag, A, &Prow, &Pcol, &B, (sc_strategy)k, gpn, m, row_bytes);
  }
done:
  if (B.route) B.route->price = NULL;
  blocks_free(&B);
  part_free(&Prow);
  part_free(&Pcol);
  sc_csr_free(A);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: test_price_messages MATRIX...\n");
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
  EXPECT(checked_prices > 0 && checked_plans > 0, "nothing was priced");
  printf("%s: %lld hybrid candidates and %lld plans priced from their messages as built, %d failures\n",
         test_failures ? "FAIL" : "ok", (long long)checked_prices, (long long)checked_plans, test_failures);
  return test_failures ? 1 : 0;
}
