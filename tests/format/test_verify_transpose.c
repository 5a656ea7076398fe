/* test_verify_transpose.c — the transposed programs that libshiro derives (runtime/transpose.c,
 * through tools/plan_transpose.c) are proven by plan_verify_transpose for every strategy, flat
 * and two-tier, square and rectangular, and move the forward's rows per tier and per stage; a
 * corrupted derivation is caught: a changed value, an add turned into an assignment, an entry
 * pointed at another row, a message that ships other rows, a clear op dropped.
 *
 * usage: test_verify_transpose MATRIX.mtx...   (the first must give every perturbation a place) */
#include <stdlib.h>
#include <string.h>

#include "blocks.h"
#include "mm_read.h"
#include "plan_build.h"
#include "plan_transpose.h"
#include "plan_verify.h"
#include "test_util.h"

static sc_csr *A;

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

/* The transposed programs of every rank (tr[R], tp[R]: their prog_rank views). */
static int derive(const sc_plan *plan, plan_transposed *tr, prog_rank *tp) {
  shiro_error err;
  for (int32_t r = 0; r < plan->meta.ranks; r++) {
    if (plan_transpose_rank(&plan->ranks[r], &tr[r], &err) != SHIRO_OK) {
      fprintf(stderr, "derive: %s\n", err.message);
      return 0;
    }
    tp[r] = tr[r].pr;
  }
  return 1;
}

/* Rows sent per (stage < 8, tier) by the programs p[0..R-1], into v[16]. */
static void volumes(const prog_rank *p, int32_t R, int64_t v[16]) {
  memset(v, 0, 16 * sizeof *v);
  for (int32_t r = 0; r < R; r++)
    for (int64_t x = 0; x < p[r].nx; x++) {
      const int64_t *rec = p[r].xchg + x * PROG_X_WIDTH;
      if (rec[XF_DIR] == 0 && rec[XF_STAGE] < 8) v[2 * rec[XF_STAGE] + (rec[XF_TIER] != 0)] += rec[XF_COUNT];
    }
}

static shiro_status prove(const sc_plan *plan, const prog_rank *tp, const char *what) {
  shiro_error err;
  verify_report rep;
  shiro_status st = plan_verify_transpose(&plan->meta, plan->ranks, tp, &rep, &err);
  if (st != SHIRO_OK) printf("  %-40s -> rejected: %s\n", what, err.message);
  else if (rep.nonzeros != plan->meta.nnz) {
    printf("  %-40s -> %lld nonzeros reach X, the matrix has %lld\n", what, (long long)rep.nonzeros, (long long)plan->meta.nnz);
    return SHIRO_ERR_INTERNAL;
  }
  return st;
}

/* A compute op of program p matching the predicate, from rank `from` on (cyclically); NULL if none. */
typedef int (*op_pred)(const prog_rank *p, const int64_t *op);
static int64_t *find(prog_rank *tp, int32_t R, op_pred want, int32_t *rank) {
  for (int32_t t = 0; t < R; t++) {
    int32_t r = (1 + t) % R;
    for (int64_t o = 0; o < tp[r].nops; o++) {
      int64_t *op = tp[r].ops + o * PROG_OP_WIDTH;
      if (op[OPF_KIND] == PROG_OP_MUL && want(&tp[r], op)) {
        *rank = r;
        return op;
      }
    }
  }
  return NULL;
}

static int64_t entries(const prog_rank *p, const int64_t *op) {
  const int64_t *ptr = p->ptr + op[OPF_PTR_OFF];
  return ptr[op[OPF_NROWS]] - ptr[0];
}
static int with_values(const prog_rank *p, const int64_t *op) { return op[OPF_HAS_VAL] && entries(p, op) > 0; }
/* 1 if an op before op (in p's order) has an entry in row r of buffer b. */
static int written_before(const prog_rank *p, const int64_t *op, int64_t b, int64_t r) {
  for (const int64_t *q = p->ops; q < op; q += PROG_OP_WIDTH) {
    if (q[OPF_KIND] != PROG_OP_MUL || q[OPF_DST_BUF] != b) continue;
    const int64_t *ptr = p->ptr + q[OPF_PTR_OFF];
    for (int64_t i = 0; i < q[OPF_NROWS]; i++)
      if (ptr[i + 1] > ptr[i] && q[OPF_DST_OFF] + (q[OPF_ROWS_OFF] >= 0 ? p->rows[q[OPF_ROWS_OFF] + i] : i) == r) return 1;
  }
  return 0;
}
/* an add into X rows that an earlier op gave a term: as an assignment it loses that term */
static int adds(const prog_rank *p, const int64_t *op) {
  if (!op[OPF_ACCUM] || op[OPF_DST_BUF] != PROG_BUF_B || entries(p, op) == 0) return 0;
  for (int64_t i = 0; i < op[OPF_NROWS]; i++)
    if (written_before(p, op, PROG_BUF_B, op[OPF_DST_OFF] + (op[OPF_ROWS_OFF] >= 0 ? p->rows[op[OPF_ROWS_OFF] + i] : i))) return 1;
  return 0;
}
static int clears(const prog_rank *p, const int64_t *op) { return !op[OPF_ACCUM] && op[OPF_NROWS] > 0 && entries(p, op) == 0; }
/* an op with a row of two entries from different source rows */
static int two_sources(const prog_rank *p, const int64_t *op) {
  const int64_t *ptr = p->ptr + op[OPF_PTR_OFF];
  for (int64_t i = 0; i < op[OPF_NROWS]; i++)
    if (ptr[i + 1] - ptr[i] >= 2 && p->col[ptr[i]] != p->col[ptr[i] + 1]) return 1;
  return 0;
}

/* The perturbations, each on fresh transposed programs of plan; each must be rejected. */
static void perturb(const sc_plan *plan, const char *name, int *applied) {
  const int32_t R = plan->meta.ranks;
  for (int kind = 0; kind < 5; kind++) {
    plan_transposed *tr = calloc((size_t)R, sizeof *tr);
    prog_rank *tp = calloc((size_t)R, sizeof *tp);
    if (!tr || !tp || !derive(plan, tr, tp)) {
      EXPECT(0, "%s: derive", name);
      goto next;
    }
    int32_t r = 0;
    int64_t *op = NULL;
    const char *what = NULL;
    if (kind == 0 && (op = find(tp, R, with_values, &r))) {
      tp[r].val[tp[r].ptr[op[OPF_PTR_OFF]]] += 1.0;
      what = "a value changed";
    } else if (kind == 1 && (op = find(tp, R, adds, &r))) {
      op[OPF_ACCUM] = 0;
      what = "an add turned into an assignment";
    } else if (kind == 2 && (op = find(tp, R, two_sources, &r))) {
      const int64_t *ptr = tp[r].ptr + op[OPF_PTR_OFF];
      for (int64_t i = 0; i < op[OPF_NROWS]; i++)
        if (ptr[i + 1] - ptr[i] >= 2 && tp[r].col[ptr[i]] != tp[r].col[ptr[i] + 1]) {
          tp[r].col[ptr[i] + 1] = tp[r].col[ptr[i]];
          break;
        }
      what = "an entry pointed at another row";
    } else if (kind == 3) {
      for (int32_t q = 0; q < R && !what; q++)
        for (int64_t x = 0; x < tp[q].nx && !what; x++) {
          int64_t *rec = tp[q].xchg + x * PROG_X_WIDTH;
          const int64_t rows = rec[XF_BUF] == PROG_BUF_S ? tp[q].s_rows : tp[q].r_rows;
          if (rec[XF_DIR] != 0 || rec[XF_COUNT] == 0) continue;
          if (rec[XF_OFF] > 0) rec[XF_OFF]--;
          else if (rec[XF_OFF] + rec[XF_COUNT] < rows) rec[XF_OFF]++;
          else continue;
          what = "a message shipping other rows";
        }
    } else if (kind == 4 && (op = find(tp, R, clears, &r))) {
      op[OPF_NROWS] = 0;
      what = "a clear op dropped";
    }
    if (what) {
      applied[kind]++;
      char label[256];
      snprintf(label, sizeof label, "%s: %s", name, what);
      EXPECT(prove(plan, tp, label) == SHIRO_ERR_FORMAT, "%s: accepted", label);
    }
  next:
    for (int32_t q = 0; tr && q < R; q++) plan_transposed_free(&tr[q]);
    free(tr);
    free(tp);
  }
}

int main(int argc, char **argv) {
  const sc_strategy all[] = {STRAT_BLOCK, STRAT_COL, STRAT_ROW, STRAT_JOINT, STRAT_HIER, STRAT_GROUP, STRAT_COLA,
                             STRAT_HYBRID};
  const int32_t shapes[][2] = {{1, 1}, {3, 1}, {4, 2}, {5, 2}, {8, 4}};
  int applied[5] = {0};
  if (argc < 2) {
    fprintf(stderr, "usage: test_verify_transpose MATRIX.mtx...\n");
    return 2;
  }
  for (int m = 1; m < argc; m++) {
    shiro_error err;
    if (mm_read(argv[m], &A, NULL, &err) != SHIRO_OK) {
      fprintf(stderr, "%s\n", err.message);
      return 1;
    }
    for (size_t s = 0; s < sizeof all / sizeof *all; s++)
      for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        const int32_t R = shapes[k][0], G = shapes[k][1];
        char name[128];
        snprintf(name, sizeof name, "%s %s R=%d G=%d", argv[m], strategy_name(all[s]), R, G);
        sc_plan plan;
        if (!build(all[s], R, G, &plan)) {
          EXPECT(0, "%s: build", name);
          continue;
        }
        plan_transposed *tr = calloc((size_t)R, sizeof *tr);
        prog_rank *tp = calloc((size_t)R, sizeof *tp);
        int64_t vf[16], vt[16];
        if (tr && tp && derive(&plan, tr, tp)) {
          EXPECT(prove(&plan, tp, name) == SHIRO_OK, "%s: transposed programs not proven", name);
          volumes(plan.ranks, R, vf);
          volumes(tp, R, vt);
          EXPECT(!memcmp(vf, vt, sizeof vf), "%s: the transposed volumes per stage and tier differ from the forward's", name);
        } else
          EXPECT(0, "%s: derive", name);
        for (int32_t r = 0; tr && r < R; r++) plan_transposed_free(&tr[r]);
        free(tr);
        free(tp);
        if (m == 1 && R > 1) perturb(&plan, name, applied);
        plan_free(&plan);
      }
    printf("%s: every strategy and shape proven\n", argv[m]);
    sc_csr_free(A);
  }
  const char *kinds[5] = {"changed value", "add -> assign", "entry redirected", "message rows", "clear dropped"};
  for (int k = 0; k < 5; k++) EXPECT(applied[k] > 0, "perturbation '%s' applied to no plan of %s", kinds[k], argv[1]);
  if (test_failures) fprintf(stderr, "%d failures\n", test_failures);
  return test_failures != 0;
}
