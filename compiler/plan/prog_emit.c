/* prog_emit.c — the pieces both plan builders (flat and two-tier) emit into
 * a rank's program: its owned rows, the local product, partial rows, runs of
 * REMOTE_B entries; and the entry counts they size their programs by. */
#include <string.h>

#include "prog_emit.h"

void prog_emit_block_entries(const sc_blocks *B, int64_t *nent) {
  for (int64_t t = 0; t < B->n; t++) {
    nent[B->b[t].q] += B->b[t].ent_partial;
    nent[B->parts + B->b[t].p] += B->b[t].ent_remote;
  }
}

void prog_emit_rank_init(prog_rank *pr, int32_t r, const sc_partition *Prow, const sc_partition *Pcol) {
  memset(pr, 0, sizeof *pr);
  pr->rank = r;
  pr->c_first = Prow->first[r];
  pr->c_rows = Prow->first[r + 1] - pr->c_first;
  pr->b_first = Pcol->first[r];
  pr->b_rows = Pcol->first[r + 1] - pr->b_first;
}

void prog_emit_local(const sc_csr *A, const sc_partition *Prow, const sc_partition *Pcol, int32_t r,
                     prog_builder *pb) {
  int64_t c_first = Prow->first[r], c_rows = Prow->first[r + 1] - c_first;
  int64_t b_first = Pcol->first[r], b_last = Pcol->first[r + 1];
  pb_mul_begin(pb, PROG_TAG_LOCAL, 0, PROG_BUF_C, 0, PROG_BUF_B, 0, 0, 1, 0);
  for (int64_t i = 0; i < c_rows; i++) {
    pb_row(pb, 0);
    for (int64_t t = A->Ap[c_first + i]; t < A->Ap[c_first + i + 1]; t++)
      if (A->Aj[t] >= b_first && A->Aj[t] < b_last) pb_entry_src(pb, (int32_t)(A->Aj[t] - b_first), sc_csr_val(A, t), t);
  }
  pb_mul_end(pb);
}

/* The position in A of the first edge of block k's row i: a block row's
 * edges are the nonzeros of A's row in the source rank's column range, in
 * order, so edge e is A's nonzero (that position) + e - Gp[i]. */
static int64_t block_row_base(const sc_csr *A, const sc_block *k, int32_t i) {
  const int64_t row = k->rows[i], col = k->cols[k->Gj[k->Gp[i]]];
  int64_t lo = A->Ap[row], hi = A->Ap[row + 1];
  while (lo < hi) { /* the first column >= col */
    int64_t mid = lo + (hi - lo) / 2;
    if (A->Aj[mid] < col) lo = mid + 1;
    else hi = mid;
  }
  return lo - k->Gp[i];
}

void prog_emit_partial_row(prog_builder *pb, const sc_csr *A, const sc_block *k, int32_t i, int64_t b_first) {
  int64_t e0 = k->Gp[i], e1 = k->Gp[i + 1];
  if (e1 == e0) return;
  const int64_t base = block_row_base(A, k, i);
  if (pb_has_room(pb, e1 - e0)) { /* the common case: every edge stored, those kept counted */
    prog_rank *pr = pb->pr;
    int32_t *cd = pr->col + pr->ncol;
    double *vd = pr->val + pr->ncol;
    int64_t *od = pr->val_src + pr->ncol;
    int64_t n = 0;
    for (int64_t e = e0; e < e1; e++) {
      int32_t j = k->Gj[e];
      cd[n] = (int32_t)(k->cols[j] - b_first);
      vd[n] = sc_csr_val(A, base + e);
      od[n] = base + e;
      n += !k->csel[j];
    }
    pr->ncol += n;
    return;
  }
  for (int64_t e = e0; e < e1; e++)
    if (!k->csel[k->Gj[e]]) pb_entry_src(pb, (int32_t)(k->cols[k->Gj[e]] - b_first), sc_csr_val(A, base + e), base + e);
}

void prog_emit_run(prog_builder *pb, const int32_t *gj, const int32_t *map, int32_t base, const sc_csr *A, int64_t t0,
                   int64_t n) {
  if (pb_has_room(pb, n)) { /* the common case: straight into the program */
    prog_rank *pr = pb->pr;
    pr->ncol += prog_run_entries(gj, map, base, A, t0, n, pr->col + pr->ncol, pr->val + pr->ncol, pr->val_src + pr->ncol);
    return;
  }
  for (int64_t e = 0; e < n; e++)
    if (map[gj[e]] >= 0) pb_entry_src(pb, base + map[gj[e]], sc_csr_val(A, t0 + e), t0 + e);
}
