/* strategy.c — selection of the rows and columns each off-diagonal block moves. */
#include <stdlib.h>
#include <string.h>

#include "cover.h"
#include "error.h"
#include "strategy.h"

static const char *const names[STRAT_COUNT] = {"block", "col", "row", "joint", "hier", "group", "cola", "hybrid"};

int strategy_is_two_tier(sc_strategy s) {
  return s == STRAT_HIER || s == STRAT_GROUP || s == STRAT_COLA || s == STRAT_HYBRID;
}

const char *strategy_name(sc_strategy s) {
  return (s >= 0 && s < STRAT_COUNT) ? names[s] : "?";
}

shiro_status strategy_parse(const char *name, sc_strategy *s, shiro_error *err) {
  for (int i = 0; i < STRAT_COUNT; i++)
    if (name && strcmp(name, names[i]) == 0) {
      *s = (sc_strategy)i;
      return SHIRO_OK;
    }
  return shiro_fail(err, SHIRO_ERR_ARG,
                    "unknown strategy '%s' (expected one of block, col, row, joint, hier, group, cola, hybrid)",
                    name ? name : "(null)");
}

/* Joint: one exact minimum vertex cover per block; with gpn > 0 only for the
 * blocks inside a node (group covers the others by node pair). */
static shiro_status select_joint(sc_blocks *B, int32_t gpn, sc_progress_fn progress, void *arg, shiro_error *err) {
  int failed = 0;
  int64_t done_count = 0;
#pragma omp parallel reduction(| \
                               : failed)
  {
    cover_ws *ws = cover_ws_new();
    int32_t *cm = NULL; /* column mates, reused: grown to the largest block seen */
    int64_t cm_cap = 0;
    int64_t *gp = NULL; /* the block's Gp widened to the solvers' 64 bits, reused likewise */
    int64_t gp_cap = 0;
    if (!ws) failed = 1;
#pragma omp for schedule(dynamic, 1)
    for (int64_t t = 0; t < B->n; t++) {
      if (failed) continue;
      sc_block *b = &B->b[t];
      if (gpn <= 0 || b->p / gpn == b->q / gpn) {
        int64_t size = 0;
        if (b->nc + 1 > cm_cap) {
          free(cm);
          cm_cap = 2 * ((int64_t)b->nc + 1);
          cm = malloc((size_t)cm_cap * sizeof *cm);
          if (!cm) cm_cap = 0;
        }
        if (b->nr + 1 > gp_cap) {
          free(gp);
          gp_cap = 2 * ((int64_t)b->nr + 1);
          gp = malloc((size_t)gp_cap * sizeof *gp);
          if (!gp) gp_cap = 0;
        }
        for (int32_t i = 0; gp && i <= b->nr; i++) gp[i] = b->Gp[i];
        if (!b->rmatch) b->rmatch = malloc(((size_t)b->nr + 1) * sizeof *b->rmatch);
        if (!cm || !gp || !b->rmatch ||
            cover_max_matching(b->nr, b->nc, gp, b->Gj, ws, b->rmatch, cm, &size) != SHIRO_OK ||
            cover_konig_matched(b->nr, b->nc, gp, b->Gj, b->rmatch, cm, size, ws, b->rsel, b->csel) != SHIRO_OK) {
          failed = 1;
          continue;
        }
        b->mu = size; /* rmatch is kept: the plan stores it as the cover's certificate */
        block_count_entries(b);
      }
      if (progress) {
        int64_t d;
#pragma omp atomic capture
        d = ++done_count;
        if ((d & 255) == 0 || d == B->n) {
#pragma omp critical(shiro_progress)
          progress(d, B->n, arg);
        }
      }
    }
    cover_ws_free(ws);
    free(cm);
    free(gp);
  }
  if (failed) return shiro_fail(err, SHIRO_ERR_NOMEM, "cover: out of memory or invalid block");
  return SHIRO_OK;
}

shiro_status strategy_select(sc_blocks *B, sc_strategy s, int32_t gpn, sc_progress_fn progress,
                             void *arg, shiro_error *err) {
  blocks_drop_cert(B); /* node-level certificates belong to group and hybrid only */
  if (B->route) route_drop_tables(B->route); /* hybrid's routing, made anew by hybrid */
  if (s == STRAT_HYBRID) {
    /* joint's covers everywhere; hybrid then runs group's and keeps one of the two per node pair */
    shiro_status st = select_joint(B, 0, progress, arg, err);
    return st != SHIRO_OK ? st : strategy_select_hybrid(B, gpn, err);
  }
  if (s == STRAT_JOINT || s == STRAT_HIER) return select_joint(B, 0, progress, arg, err);
  if (s == STRAT_GROUP) {
    /* pairs inside a node keep these; group overwrites every other block's selection */
    shiro_status st = select_joint(B, gpn < B->parts ? gpn : B->parts, progress, arg, err);
    return st != SHIRO_OK ? st : strategy_select_group(B, gpn, err);
  }
  for (int64_t t = 0; t < B->n; t++) {
    sc_block *b = &B->b[t];
    int col_side = (s != STRAT_ROW); /* block, col, cola: every column */
    free(b->rmatch); /* no optimality claimed: no certificate */
    b->rmatch = NULL;
    b->mu = -1;
    memset(b->csel, col_side, (size_t)b->nc);
    memset(b->rsel, !col_side, (size_t)b->nr);
    b->ent_partial = col_side ? 0 : b->ne;
    b->ent_remote = col_side ? b->ne : 0;
  }
  if (progress) progress(B->n, B->n, arg);
  return SHIRO_OK;
}

static void count_hop(sc_volumes *v, int32_t p, int32_t q, int32_t gpn, int64_t rows) {
  v->total_rows += rows;
  if (p / gpn == q / gpn) v->intra_node_rows += rows;
  else v->inter_node_rows += rows;
}

void strategy_volumes(const sc_blocks *B, const sc_partition *Pcol, sc_strategy s, int32_t gpn,
                      sc_volumes *v) {
  memset(v, 0, sizeof *v);
  int32_t R = Pcol->parts;
  if (s == STRAT_BLOCK) {
    for (int32_t p = 0; p < R; p++)
      for (int32_t q = 0; q < R; q++)
        if (q != p) count_hop(v, p, q, gpn, Pcol->first[q + 1] - Pcol->first[q]);
    return;
  }
  for (int64_t t = 0; t < B->n; t++) {
    const sc_block *b = &B->b[t];
    count_hop(v, b->p, b->q, gpn, block_rows_moved(b));
  }
}
