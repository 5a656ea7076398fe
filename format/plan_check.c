/* plan_check.c — bounds validation of a rank's program before anything runs it. */
#include <stdlib.h>

#include "error.h"
#include "plan_file.h"

static int64_t buf_rows(const prog_rank *pr, int64_t buf) {
  switch (buf) {
    case PROG_BUF_B: return pr->b_rows;
    case PROG_BUF_C: return pr->c_rows;
    case PROG_BUF_S: return pr->s_rows;
    case PROG_BUF_R: return pr->r_rows;
  }
  return -1;
}

/* Checks one MUL op; mark is a scratch byte array of at least max buffer rows, all 0 (restored). */
static shiro_status check_mul(const prog_rank *pr, int64_t o, const int64_t *op, uint8_t *mark, shiro_error *err) {
  int64_t dst = op[OPF_DST_BUF], src = op[OPF_SRC_BUF];
  int64_t dn = buf_rows(pr, dst), sn = buf_rows(pr, src), nrows = op[OPF_NROWS];
  int64_t doff = op[OPF_DST_OFF], soff = op[OPF_SRC_OFF], poff = op[OPF_PTR_OFF], roff = op[OPF_ROWS_OFF];
#define BAD(what) return shiro_fail(err, SHIRO_ERR_FORMAT, "rank %d op %lld: %s", pr->rank, (long long)o, what)
  if (dst == PROG_BUF_B || dn < 0 || sn < 0 || dst == src) BAD("bad buffers");
  if (nrows < 0 || doff < 0 || soff < 0 || doff > dn || soff > sn) BAD("bad offsets");
  if (poff < 0 || poff >= pr->nptr || nrows > pr->nptr - 1 - poff) BAD("row pointers out of range");
  if (op[OPF_HAS_VAL] != 0 && op[OPF_HAS_VAL] != 1) BAD("bad HAS_VAL");
  if (op[OPF_ACCUM] != 0 && op[OPF_ACCUM] != 1) BAD("bad ACCUM");
  if (op[OPF_HAS_VAL] && pr->nval != pr->ncol) BAD("values missing");
  if (roff < -1 || (roff >= 0 && (roff > pr->nrowidx || nrows > pr->nrowidx - roff))) BAD("row list out of range");
  if (roff < 0 && nrows > dn - doff) BAD("destination rows out of range");
  const int64_t *ptr = pr->ptr + poff;
  if (ptr[0] < 0 || ptr[nrows] > pr->ncol) BAD("entries out of range");
  int64_t span = sn - soff;
  for (int64_t i = 0; i < nrows; i++) {
    if (ptr[i + 1] < ptr[i] || ptr[i + 1] > pr->ncol) BAD("row pointers decrease or run past the entries");
    for (int64_t e = ptr[i]; e < ptr[i + 1]; e++)
      if (pr->col[e] < 0 || pr->col[e] >= span) BAD("source row out of range");
  }
  if (roff >= 0) { /* each destination row at most once: no two threads write one row */
    shiro_status st = SHIRO_OK;
    int64_t i = 0;
    for (; i < nrows; i++) {
      int32_t d = pr->rows[roff + i];
      if (d < 0 || d >= dn - doff) {
        st = SHIRO_ERR_FORMAT;
        break;
      }
      if (mark[doff + d]) {
        st = SHIRO_ERR_FORMAT;
        break;
      }
      mark[doff + d] = 1;
    }
    for (int64_t t = 0; t < i; t++) mark[doff + pr->rows[roff + t]] = 0;
    if (st != SHIRO_OK) BAD("destination row out of range or repeated");
  }
#undef BAD
  return SHIRO_OK;
}

static shiro_status check_xchg(const prog_meta *meta, const prog_rank *pr, shiro_error *err) {
  for (int64_t x = 0; x < pr->nx; x++) {
    const int64_t *r = pr->xchg + x * PROG_X_WIDTH;
    int64_t n = buf_rows(pr, r[XF_BUF]);
    int ok = r[XF_STAGE] >= 0 && r[XF_STAGE] < pr->nstages && r[XF_PEER] >= 0 && r[XF_PEER] < meta->ranks &&
        r[XF_PEER] != pr->rank && (r[XF_DIR] == 0 || r[XF_DIR] == 1) && n >= 0 && r[XF_COUNT] >= 0 &&
        r[XF_OFF] >= 0 && r[XF_OFF] <= n && r[XF_COUNT] <= n - r[XF_OFF] && r[XF_COUNT] <= INT32_MAX &&
        (r[XF_TIER] == 0 || r[XF_TIER] == 1) && r[XF_KIND] >= 0 && r[XF_KIND] < PROG_MSG_KINDS && r[XF_BROWS] >= 0 && r[XF_BROWS] <= r[XF_COUNT] &&
        (r[XF_BUF] == PROG_BUF_R || r[XF_BUF] == PROG_BUF_S);
    if (!ok) return shiro_fail(err, SHIRO_ERR_FORMAT, "rank %d exchange record %lld is out of range", pr->rank, (long long)x);
  }
  return SHIRO_OK;
}

/* One exchange record's R4 key (stage, peer, direction, kind) and its index. */
typedef struct msg_key {
  int64_t stage, peer, dir, kind, x;
} msg_key;

static int by_msg_key(const void *a, const void *b) {
  const msg_key *p = a, *q = b;
  if (p->stage != q->stage) return p->stage < q->stage ? -1 : 1;
  if (p->peer != q->peer) return p->peer < q->peer ? -1 : 1;
  if (p->dir != q->dir) return p->dir < q->dir ? -1 : 1;
  if (p->kind != q->kind) return p->kind < q->kind ? -1 : 1;
  return p->x < q->x ? -1 : p->x > q->x;
}

/* R4: at most one message per (stage, peer, direction, kind), zero-row records
 * included. The runtime's posting order (a total order on those four fields)
 * and its MPI tags (stage * 16 + kind) rely on it. Sorts a copy of the keys:
 * O(nx log nx) time, O(nx) memory. The records are already in range. */
static shiro_status check_xchg_unique(const prog_rank *pr, shiro_error *err) {
  if (pr->nx < 2) return SHIRO_OK;
  msg_key *k = malloc((size_t)pr->nx * sizeof *k);
  if (!k) return shiro_fail(err, SHIRO_ERR_NOMEM, "rank %d: out of memory checking the plan", pr->rank);
  for (int64_t x = 0; x < pr->nx; x++) {
    const int64_t *r = pr->xchg + x * PROG_X_WIDTH;
    k[x] = (msg_key){r[XF_STAGE], r[XF_PEER], r[XF_DIR], r[XF_KIND], x};
  }
  qsort(k, (size_t)pr->nx, sizeof *k, by_msg_key);
  shiro_status st = SHIRO_OK;
  for (int64_t i = 1; i < pr->nx && st == SHIRO_OK; i++) {
    const msg_key *a = &k[i - 1], *b = &k[i];
    if (a->stage == b->stage && a->peer == b->peer && a->dir == b->dir && a->kind == b->kind)
      st = shiro_fail(err, SHIRO_ERR_FORMAT,
                      "rank %d exchange records %lld and %lld: two messages in stage %lld %s peer %lld of kind %lld "
                      "(at most one per stage, peer, direction and kind)",
                      pr->rank, (long long)a->x, (long long)b->x, (long long)a->stage,
                      a->dir == 0 ? "sending to" : "receiving from", (long long)a->peer, (long long)a->kind);
  }
  free(k);
  return st;
}

/* Since 2.1: the local matrix (a_ptr, a_col, a_val) is a CSR of c_rows rows with columns in
 * 0..k-1, strictly increasing in each row, and val_src names a nonzero of A (or -1) for every
 * entry. All four may be empty (a 2.0 plan), but not some of them. O(nacol + nvalsrc). */
static shiro_status check_local_matrix(const prog_meta *meta, const prog_rank *pr, shiro_error *err) {
#define BAD(what) return shiro_fail(err, SHIRO_ERR_FORMAT, "rank %d local matrix: %s", pr->rank, what)
  if (pr->naptr == 0) {
    if (pr->nacol || pr->naval || pr->nvalsrc) BAD("entries without row pointers");
    return SHIRO_OK;
  }
  if (pr->naptr != pr->c_rows + 1) BAD("a_ptr does not have c_rows + 1 entries");
  if (pr->nacol > meta->nnz || (pr->naval != 0 && pr->naval != pr->nacol)) BAD("a_col / a_val of the wrong length");
  if (pr->nvalsrc != pr->ncol) BAD("val_src does not have one entry per entry of col");
  if (pr->a_ptr[0] != 0 || pr->a_ptr[pr->c_rows] != pr->nacol) BAD("a_ptr does not run from 0 to the entries");
  for (int64_t i = 0; i < pr->c_rows; i++) {
    if (pr->a_ptr[i + 1] < pr->a_ptr[i] || pr->a_ptr[i + 1] > pr->nacol) BAD("a_ptr decreases");
    for (int64_t t = pr->a_ptr[i]; t < pr->a_ptr[i + 1]; t++)
      if (pr->a_col[t] < 0 || pr->a_col[t] >= meta->k || (t > pr->a_ptr[i] && pr->a_col[t] <= pr->a_col[t - 1]))
        BAD("a column id out of 0..k-1 or not increasing in its row");
  }
  for (int64_t e = 0; e < pr->nvalsrc; e++)
    if (pr->val_src[e] < -1 || pr->val_src[e] >= meta->nnz) BAD("val_src names no nonzero of A");
#undef BAD
  return SHIRO_OK;
}

shiro_status plan_check_rank(const prog_meta *meta, const prog_rank *pr, shiro_error *err) {
  if (pr->c_rows < 0 || pr->b_rows < 0 || pr->s_rows < 0 || pr->r_rows < 0 || pr->c_rows > INT32_MAX ||
      pr->b_rows > INT32_MAX || pr->s_rows > INT32_MAX || pr->r_rows > INT32_MAX || pr->c_first < 0 ||
      pr->b_first < 0 || pr->c_first > meta->m - pr->c_rows || pr->b_first > meta->k - pr->b_rows ||
      (pr->nval != 0 && pr->nval != pr->ncol))
    return shiro_fail(err, SHIRO_ERR_FORMAT, "rank %d: buffer sizes out of range", pr->rank);
  int64_t most = pr->c_rows;
  if (pr->s_rows > most) most = pr->s_rows;
  if (pr->r_rows > most) most = pr->r_rows;
  uint8_t *mark = calloc((size_t)most + 1, 1);
  if (!mark) return shiro_fail(err, SHIRO_ERR_NOMEM, "rank %d: out of memory checking the plan", pr->rank);
  shiro_status st = SHIRO_OK;
  for (int64_t o = 0; o < pr->nops && st == SHIRO_OK; o++) {
    const int64_t *op = pr->ops + o * PROG_OP_WIDTH;
    if (op[OPF_STAGE] < 0 || op[OPF_STAGE] >= (pr->nstages ? pr->nstages : 1))
      st = shiro_fail(err, SHIRO_ERR_FORMAT, "rank %d op %lld: stage out of range", pr->rank, (long long)o);
    else if (op[OPF_KIND] == PROG_OP_MUL) st = check_mul(pr, o, op, mark, err);
    else if (op[OPF_KIND] != PROG_OP_START && op[OPF_KIND] != PROG_OP_WAIT)
      st = shiro_fail(err, SHIRO_ERR_FORMAT, "rank %d op %lld: unknown kind %lld", pr->rank, (long long)o, (long long)op[OPF_KIND]);
  }
  free(mark);
  if (st == SHIRO_OK) st = check_xchg(meta, pr, err);
  if (st == SHIRO_OK) st = check_xchg_unique(pr, err);
  if (st == SHIRO_OK && ((pr->ncglobal != 0 && pr->ncglobal != pr->c_rows) || (pr->nbglobal != 0 && pr->nbglobal != pr->b_rows)))
    st = shiro_fail(err, SHIRO_ERR_FORMAT, "rank %d: row lists of the wrong length", pr->rank);
  for (int64_t x = 0; x < pr->ncglobal && st == SHIRO_OK; x++)
    if (pr->c_global[x] < 0 || pr->c_global[x] >= meta->m || (x && pr->c_global[x] <= pr->c_global[x - 1]))
      st = shiro_fail(err, SHIRO_ERR_FORMAT, "rank %d: C row list is not increasing within 0..m-1", pr->rank);
  for (int64_t x = 0; x < pr->nbglobal && st == SHIRO_OK; x++)
    if (pr->b_global[x] < 0 || pr->b_global[x] >= meta->k || (x && pr->b_global[x] <= pr->b_global[x - 1]))
      st = shiro_fail(err, SHIRO_ERR_FORMAT, "rank %d: B row list is not increasing within 0..k-1", pr->rank);
  for (int64_t x = 0; x < pr->ncert && st == SHIRO_OK; x++)
    if (pr->cert[2 * x] < pr->c_first || pr->cert[2 * x] >= pr->c_first + pr->c_rows || pr->cert[2 * x + 1] < 0 ||
        pr->cert[2 * x + 1] >= meta->k)
      st = shiro_fail(err, SHIRO_ERR_FORMAT, "rank %d certificate pair %lld is out of range", pr->rank, (long long)x);
  if (st == SHIRO_OK) st = check_local_matrix(meta, pr, err);
  return st;
}
