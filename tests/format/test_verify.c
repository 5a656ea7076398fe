/* test_verify.c — the plan verifier accepts real plans of every strategy and
 * rejects tampered ones: a changed value, a nonzero counted twice, a missing
 * certificate pair, a certificate pair that is not a nonzero, a message whose
 * sizes disagree, two messages of one (stage, peer, direction, kind), a
 * damaged array (checksum); format 2.1's local matrices: a value named twice
 * by val_src, a program value unlike its local matrix's, a local matrix
 * unlike the matrix's row (values consistent in the plan itself); hybrid's
 * two-tier builder on arbitrary routings (node pairs direct or relayed at
 * random, relays anywhere in their node): every plan verifies. Each rank's part verified by
 * itself (plan_verify_rank): every rank of every strategy's plan passes, and a message whose
 * sizes disagree, a message one end does not record, a local row unlike the matrix, a damaged
 * array are rejected by the rank they concern. */
#include <stdlib.h>
#include <string.h>

#include "blocks.h"
#include "mm_read.h"
#include "plan_build.h"
#include "plan_verify.h"
#include "sorted.h"
#include "strategy.h"
#include "test_util.h"

static sc_csr *A;

static shiro_status verify(sc_plan *plan, const char *what, shiro_error *err);

static int build(sc_strategy s, int32_t R, int32_t G, sc_plan *plan) {
  shiro_error err;
  sc_partition Pr = {0}, Pc = {0};
  sc_blocks B = {0};
  int ok = part_block(A->m, R, &Pr, &err) == SHIRO_OK && part_block(A->k, R, &Pc, &err) == SHIRO_OK &&
      blocks_build(A, &Pr, &Pc, &B, &err) == SHIRO_OK && strategy_select(&B, s, G, NULL, NULL, &err) == SHIRO_OK &&
      plan_build(A, &Pr, &Pc, &B, s, G, plan, &err) == SHIRO_OK;
  if (!ok) fprintf(stderr, "build: %s\n", err.message);
  for (int32_t r = 0; ok && r < R; r++) prog_rank_seal(&plan->ranks[r]);
  blocks_free(&B);
  part_free(&Pr);
  part_free(&Pc);
  return ok;
}

/* Hybrid's plan on a routing drawn from seed: each inter-node node pair direct or relayed, each
 * relay any rank of its node (the blocks keep hybrid's selections: any block's is a cover, direct
 * or relayed). Returns 1 if it was built and verifies; *mixed is set when both kinds of pair and
 * a relay off the rail occurred. */
static int random_routing(int32_t R, int32_t G, uint32_t seed, int *mixed) {
  shiro_error err;
  sc_partition Pr = {0}, Pc = {0};
  sc_blocks B = {0};
  sc_plan plan = {0};
  int ok = part_block(A->m, R, &Pr, &err) == SHIRO_OK && part_block(A->k, R, &Pc, &err) == SHIRO_OK &&
      blocks_build(A, &Pr, &Pc, &B, &err) == SHIRO_OK &&
      strategy_select(&B, STRAT_HYBRID, G, NULL, NULL, &err) == SHIRO_OK;
  if (ok) {
    sc_route *rt = B.route;
    int32_t nodes = rt->nodes;
    int kinds[2] = {0, 0}, off = 0;
    uint32_t x = seed * 2654435761u + 1;
    for (int64_t y = 0; y < rt->npairs; y++) { /* the node pairs with blocks: a side, relays */
      int32_t N = (int32_t)(rt->pair[y] / nodes), H = (int32_t)(rt->pair[y] % nodes);
      x = x * 1103515245u + 12345u;
      rt->direct[y] = (uint8_t)((x >> 16) & 1);
      kinds[rt->direct[y]]++;
      for (int32_t i = 0; i < G; i++) {
        int32_t loN = N * G, nN = (N + 1) * G <= R ? G : R - loN, loH = H * G, nH = (H + 1) * G <= R ? G : R - loH;
        x = x * 1103515245u + 12345u;
        rt->rep[y * G + i] = loN + (int32_t)((x >> 16) % (uint32_t)nN); /* the rep in N of q = loH + i */
        x = x * 1103515245u + 12345u;
        rt->agg[y * G + i] = loH + (int32_t)((x >> 16) % (uint32_t)nH); /* the agg in H of p = loN + i */
        off |= i < nH && rt->rep[y * G + i] != sc_rail(N, loH + i, G, R);
      }
    }
    *mixed |= kinds[0] && kinds[1] && off;
    ok = plan_build(A, &Pr, &Pc, &B, STRAT_HYBRID, G, &plan, &err) == SHIRO_OK;
  }
  if (!ok) fprintf(stderr, "random routing R=%d G=%d seed %u: %s\n", R, G, seed, err.message);
  char what[64];
  snprintf(what, sizeof what, "hybrid, random routing R=%d G=%d seed %u", R, G, seed);
  if (ok) ok = verify(&plan, what, &err) == SHIRO_OK;
  plan_free(&plan);
  blocks_free(&B);
  part_free(&Pr);
  part_free(&Pc);
  return ok;
}

static shiro_status verify(sc_plan *plan, const char *what, shiro_error *err) {
  verify_report rep;
  for (int32_t r = 0; r < plan->meta.ranks; r++) prog_rank_seal(&plan->ranks[r]); /* tampering keeps checksums valid */
  shiro_status st = plan_verify(&plan->meta, plan->ranks, A, &rep, err);
  if (st != SHIRO_OK) printf("  %-44s -> rejected: %s\n", what, err->message);
  return st;
}

/* Every rank's part verified by itself (plan_verify_rank, what shiro-plan-dump --verify --rank
 * does), with its neighbours and the peers its records name; the first rejection in err (its
 * rank in *bad if not NULL). */
static shiro_status verify_ranks(sc_plan *plan, const char *what, int32_t *bad, shiro_error *err) {
  const int32_t R = plan->meta.ranks;
  prog_rank *peers = calloc((size_t)R, sizeof *peers);
  if (!peers) return SHIRO_ERR_NOMEM;
  shiro_status st = SHIRO_OK;
  for (int32_t r = 0; r < R; r++) prog_rank_seal(&plan->ranks[r]);
  for (int32_t p = 0; p < R && st == SHIRO_OK; p++) {
    const prog_rank *own = &plan->ranks[p];
    int32_t n = 0;
    for (int32_t q = 0; q < R; q++) { /* in rank order: the peers sorted, as plan_verify_rank asks */
      int named = 0;
      for (int64_t x = 0; x < own->nx && !named; x++) named = own->xchg[x * PROG_X_WIDTH + XF_PEER] == q;
      if (named) peers[n++] = plan->ranks[q];
    }
    verify_report rep;
    st = plan_verify_rank(&plan->meta, own, p ? &plan->ranks[p - 1] : NULL, p + 1 < R ? &plan->ranks[p + 1] : NULL, peers, n, A,
                          &rep, err);
    if (st != SHIRO_OK) {
      printf("  %-44s -> rank %d rejected: %s\n", what, p, err->message);
      if (bad) *bad = p;
    }
  }
  free(peers);
  return st;
}

/* The first MUL op of rank r with the given tag, or NULL. */
static int64_t *find_op(prog_rank *pr, int64_t tag) {
  for (int64_t o = 0; o < pr->nops; o++)
    if (pr->ops[o * PROG_OP_WIDTH + OPF_KIND] == PROG_OP_MUL && pr->ops[o * PROG_OP_WIDTH + OPF_TAG] == tag)
      return pr->ops + o * PROG_OP_WIDTH;
  return NULL;
}

/* An entry of a LOCAL op that is not the first of its row, on the first rank
 * from rank 1 on (cyclically) that has one: pointing it at the previous
 * entry's column counts that nonzero twice. Sets *rank and *entry (an index
 * into col/val) and returns 1; returns 0 when no rank's LOCAL op has a row of
 * two entries (the case does not apply to this plan). */
static int find_second_entry(sc_plan *plan, int32_t *rank, int64_t *entry) {
  for (int32_t t = 0; t < plan->meta.ranks; t++) {
    int32_t r = (1 + t) % plan->meta.ranks;
    const int64_t *op = find_op(&plan->ranks[r], PROG_TAG_LOCAL);
    if (!op) continue;
    const int64_t *ptr = plan->ranks[r].ptr + op[OPF_PTR_OFF];
    for (int64_t i = 0; i < op[OPF_NROWS]; i++)
      if (ptr[i + 1] - ptr[i] >= 2) {
        *rank = r;
        *entry = ptr[i] + 1;
        return 1;
      }
  }
  return 0;
}

int main(void) {
  shiro_error err;
  if (mm_read("data/ca-GrQc.mtx", &A, NULL, &err) != SHIRO_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 1;
  }
  sc_strategy all[] = {STRAT_BLOCK, STRAT_COL, STRAT_ROW, STRAT_JOINT, STRAT_HIER, STRAT_GROUP, STRAT_COLA, STRAT_HYBRID};
  for (int s = 0; s < (int)(sizeof all / sizeof *all); s++) {
    sc_plan plan = {0};
    EXPECT(build(all[s], 6, 4, &plan), "build %s", strategy_name(all[s]));
    EXPECT(verify(&plan, strategy_name(all[s]), &err) == SHIRO_OK, "%s plan rejected: %s", strategy_name(all[s]), err.message);
    EXPECT(verify_ranks(&plan, strategy_name(all[s]), NULL, &err) == SHIRO_OK, "%s: a rank rejected by itself: %s",
           strategy_name(all[s]), err.message);
    plan_free(&plan);
  }
  int doubles = 0; /* strategies whose plan the double-count case applied to */
  for (int s = 3; s < 6; s++) {
    sc_strategy st = all[s];
    sc_plan plan = {0};
    if (!build(st, 6, 4, &plan)) {
      EXPECT(0, "build");
      continue;
    }
    prog_rank *p1 = &plan.ranks[1];
    int64_t *local = find_op(p1, PROG_TAG_LOCAL);
    /* a changed value */
    double v = p1->val[p1->ptr[local[OPF_PTR_OFF] + 3]];
    p1->val[p1->ptr[local[OPF_PTR_OFF] + 3]] = v + 1;
    EXPECT(verify(&plan, "changed value", &err) == SHIRO_ERR_FORMAT, "%s: changed value accepted", strategy_name(st));
    p1->val[p1->ptr[local[OPF_PTR_OFF] + 3]] = v;
    /* a nonzero counted twice: an entry pointing at its row's previous column */
    int32_t dr;
    int64_t e;
    if (find_second_entry(&plan, &dr, &e)) {
      prog_rank *pd = &plan.ranks[dr];
      int32_t c = pd->col[e];
      pd->col[e] = pd->col[e - 1];
      EXPECT(verify(&plan, "nonzero counted twice", &err) == SHIRO_ERR_FORMAT, "%s: double count accepted", strategy_name(st));
      pd->col[e] = c;
      doubles++;
    } else {
      fprintf(stderr, "%s: no LOCAL row with two entries on any rank: the double-count case does not apply\n",
              strategy_name(st));
    }
    /* a certificate pair removed: the cover is no longer proven minimum */
    EXPECT(p1->ncert > 0, "rank 1 has no certificate");
    p1->ncert--;
    EXPECT(verify(&plan, "certificate pair removed", &err) == SHIRO_ERR_FORMAT, "%s: short certificate accepted", strategy_name(st));
    p1->ncert++;
    /* a certificate pair that is not a nonzero */
    int64_t j = p1->cert[1];
    p1->cert[1] = (j + 1) % A->k;
    EXPECT(verify(&plan, "certificate pair off the matrix", &err) == SHIRO_ERR_FORMAT, "%s: bad pair accepted", strategy_name(st));
    p1->cert[1] = j;
    /* a message whose sizes disagree */
    int64_t *rec = p1->xchg;
    rec[XF_COUNT]--;
    EXPECT(verify(&plan, "message sizes disagree", &err) == SHIRO_ERR_FORMAT, "%s: mismatched message accepted", strategy_name(st));
    int32_t bad = -1;
    EXPECT(verify_ranks(&plan, "message sizes disagree (by rank)", &bad, &err) == SHIRO_ERR_FORMAT && strstr(err.message, "which records") &&
               (bad == 1 || bad == rec[XF_PEER]),
           "%s: mismatched message accepted by rank: %s", strategy_name(st), err.message);
    rec[XF_COUNT]++;
    /* rank 1's last message left out: its peer's record of it is matched by nothing */
    p1->nx--;
    bad = -1;
    EXPECT(verify_ranks(&plan, "a message one end does not record", &bad, &err) == SHIRO_ERR_FORMAT &&
               strstr(err.message, "which has no such message") && (bad == 1 || bad == p1->xchg[p1->nx * PROG_X_WIDTH + XF_PEER]),
           "%s: a message missing at one end accepted by rank: %s", strategy_name(st), err.message);
    p1->nx++;
    EXPECT(verify(&plan, "restored", &err) == SHIRO_OK, "%s: restored plan rejected: %s", strategy_name(st), err.message);
    /* val_src: one nonzero named by two value entries (and another by none) */
    int64_t e1 = -1, e2 = -1;
    for (int64_t x = 0; x < p1->nvalsrc && e2 < 0; x++)
      if (p1->val_src[x] >= 0) *(e1 < 0 ? &e1 : &e2) = x;
    EXPECT(e2 >= 0, "%s: rank 1 has fewer than two values", strategy_name(st));
    if (e2 >= 0) {
      int64_t keep = p1->val_src[e2];
      p1->val_src[e2] = p1->val_src[e1];
      EXPECT(verify(&plan, "a nonzero named twice by val_src", &err) == SHIRO_ERR_FORMAT && strstr(err.message, "twice"),
             "%s: val_src duplicate: %s", strategy_name(st), err.message);
      p1->val_src[e2] = keep;
      /* the local matrix's value changed, the program's not */
      int32_t q = 0;
      int64_t id = p1->val_src[e1], base = 0;
      while (base + plan.ranks[q].nacol <= id) base += plan.ranks[q++].nacol;
      double a = plan.ranks[q].a_val[id - base];
      plan.ranks[q].a_val[id - base] = a + 0.5;
      EXPECT(verify(&plan, "local matrix value unlike the program's", &err) == SHIRO_ERR_FORMAT && strstr(err.message, "multiplies by"),
             "%s: local value: %s", strategy_name(st), err.message);
      /* both changed alike: the plan agrees with itself, not with the matrix */
      double w = p1->val[e1];
      p1->val[e1] = a + 0.5;
      shiro_status vs = verify(&plan, "local matrix and program unlike the matrix", &err);
      EXPECT(vs == SHIRO_ERR_MISMATCH || vs == SHIRO_ERR_FORMAT, "%s: changed matrix value accepted", strategy_name(st));
      EXPECT(vs != SHIRO_ERR_MISMATCH || strstr(err.message, "local row"), "%s: %s", strategy_name(st), err.message);
      bad = -1;
      EXPECT(verify_ranks(&plan, "local matrix unlike the matrix (by rank)", &bad, &err) == SHIRO_ERR_MISMATCH &&
                 strstr(err.message, "local row") && bad == q,
             "%s: changed local row accepted by rank: %s", strategy_name(st), err.message);
      p1->val[e1] = w;
      plan.ranks[q].a_val[id - base] = a;
    }
    /* a second message with the same stage, peer, direction and kind (R4) */
    int64_t *xs = realloc(p1->xchg, (size_t)(p1->nx + 1) * PROG_X_WIDTH * sizeof *xs);
    EXPECT(xs != NULL, "out of memory");
    if (xs) {
      p1->xchg = xs;
      memcpy(xs + p1->nx * PROG_X_WIDTH, xs, PROG_X_WIDTH * sizeof *xs);
      p1->nx++;
      EXPECT(verify(&plan, "two messages of one stage, peer, kind", &err) == SHIRO_ERR_FORMAT &&
                 strstr(err.message, "at most one per stage, peer, direction and kind"),
             "%s: R4 violation: %s",
             strategy_name(st), err.message);
      p1->nx--;
    }
    /* a damaged array: checksum mismatch */
    verify_report rep;
    p1->col[0] ^= 1;
    EXPECT(plan_verify(&plan.meta, plan.ranks, A, &rep, &err) == SHIRO_ERR_FORMAT && strstr(err.message, "CRC32C"),
           "%s: damaged array accepted", strategy_name(st));
    EXPECT(plan_verify_rank(&plan.meta, p1, &plan.ranks[0], &plan.ranks[2], NULL, 0, A, &rep, &err) == SHIRO_ERR_FORMAT &&
               strstr(err.message, "CRC32C"),
           "%s: damaged array accepted by rank: %s", strategy_name(st), err.message);
    p1->col[0] ^= 1;
    plan_free(&plan);
  }
  EXPECT(doubles > 0, "the double-count case applied to none of joint, hier, group");
  int mixed = 0;
  const int32_t shapes[][2] = {{12, 2}, {12, 4}, {10, 3}, {16, 4}};
  for (int k = 0; k < 4; k++)
    for (uint32_t seed = 1; seed <= 3; seed++)
      EXPECT(random_routing(shapes[k][0], shapes[k][1], seed, &mixed), "hybrid: random routing R=%d G=%d seed %u",
             shapes[k][0], shapes[k][1], seed);
  EXPECT(mixed, "no random routing had direct and relayed pairs and a relay off the rail");
  sc_csr_free(A);
  if (test_failures) fprintf(stderr, "%d failures\n", test_failures);
  return test_failures != 0;
}
