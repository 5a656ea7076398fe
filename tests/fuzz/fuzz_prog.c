/* fuzz_prog.c — heap copies, byte encoding and the bounds-asserting
 * interpreter of one rank's program (see fuzz_prog.h). */
#define _GNU_SOURCE /* fuzz_util.h: mkostemp */
#include "fuzz_prog.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

/* Values per buffer above which the interpreter checks indices only. */
#define FUZZ_MAX_BUFFER_VALUES ((int64_t)1 << 22)

/* Every array of a program: where its pointer lives, its element size, its count. */
typedef struct arr_ref {
  void **p; /* &pr->ops etc. */
  size_t esz; /* bytes per element */
  int64_t count; /* elements */
} arr_ref;

_Static_assert(PROG_NARRAYS == 13 && PROG_NARRAYS_2_0 == 9, "program.h has a new array: add it to arrays_of and the encoding");

/* In PA_* order (program.h). */
static void arrays_of(prog_rank *pr, arr_ref a[PROG_NARRAYS]) {
  a[PA_OPS] = (arr_ref){(void **)&pr->ops, sizeof(int64_t), pr->nops * PROG_OP_WIDTH};
  a[PA_XCHG] = (arr_ref){(void **)&pr->xchg, sizeof(int64_t), pr->nx * PROG_X_WIDTH};
  a[PA_PTR] = (arr_ref){(void **)&pr->ptr, sizeof(int64_t), pr->nptr};
  a[PA_COL] = (arr_ref){(void **)&pr->col, sizeof(int32_t), pr->ncol};
  a[PA_VAL] = (arr_ref){(void **)&pr->val, sizeof(double), pr->nval};
  a[PA_ROWS] = (arr_ref){(void **)&pr->rows, sizeof(int32_t), pr->nrowidx};
  a[PA_CERT] = (arr_ref){(void **)&pr->cert, sizeof(int64_t), pr->ncert * 2};
  a[PA_CGLOBAL] = (arr_ref){(void **)&pr->c_global, sizeof(int64_t), pr->ncglobal};
  a[PA_BGLOBAL] = (arr_ref){(void **)&pr->b_global, sizeof(int64_t), pr->nbglobal};
  a[PA_APTR] = (arr_ref){(void **)&pr->a_ptr, sizeof(int64_t), pr->naptr};
  a[PA_ACOL] = (arr_ref){(void **)&pr->a_col, sizeof(int64_t), pr->nacol};
  a[PA_AVAL] = (arr_ref){(void **)&pr->a_val, sizeof(double), pr->naval};
  a[PA_VALSRC] = (arr_ref){(void **)&pr->val_src, sizeof(int64_t), pr->nvalsrc};
}

void fuzz_prog_copy_arrays(prog_rank *pr) {
  arr_ref a[PROG_NARRAYS];
  arrays_of(pr, a);
  for (int i = 0; i < PROG_NARRAYS; i++) {
    void *src = *a[i].p, *dst = NULL;
    FUZZ_ASSERT(a[i].count >= 0, "array %d has %lld elements", i, (long long)a[i].count);
    if (a[i].count > 0) {
      FUZZ_ASSERT(src != NULL, "array %d: %lld elements but no pointer", i, (long long)a[i].count);
      dst = malloc((size_t)a[i].count * a[i].esz);
      FUZZ_ASSERT(dst != NULL, "out of memory copying array %d", i);
      memcpy(dst, src, (size_t)a[i].count * a[i].esz);
    }
    *a[i].p = dst;
  }
}

void fuzz_prog_free_arrays(prog_rank *pr) {
  arr_ref a[PROG_NARRAYS];
  arrays_of(pr, a);
  for (int i = 0; i < PROG_NARRAYS; i++) {
    free(*a[i].p);
    *a[i].p = NULL;
  }
}

/* ---- encoding ---------------------------------------------------------- */

static int64_t get_i64(const uint8_t *p) {
  uint64_t v = 0;
  for (int b = 7; b >= 0; b--) v = (v << 8) | p[b];
  return (int64_t)v;
}

int fuzz_prog_decode(const uint8_t *data, size_t size, prog_meta *meta, prog_rank *pr) {
  int64_t h[FUZZ_PROG_HEADER];
  if (size < sizeof h) return -1;
  for (int i = 0; i < FUZZ_PROG_HEADER; i++) h[i] = get_i64(data + 8 * i);
  const uint8_t *p = data + sizeof h;
  size_t left = size - sizeof h;
  /* What plan_file_read_meta / plan_file_map_rank could return. */
  if (h[0] < 1 || h[0] > INT32_MAX || h[1] < 0 || h[1] >= h[0] || h[2] < 0 || h[2] > 64 || h[9] < 0 || h[10] < 0)
    return -1;
  memset(meta, 0, sizeof *meta);
  memset(pr, 0, sizeof *pr);
  meta->ranks = (int32_t)h[0];
  meta->gpus_per_node = 1;
  meta->m = h[9];
  meta->k = h[10];
  strcpy(meta->strategy, "fuzz");
  strcpy(meta->partition, "block");
  pr->rank = (int32_t)h[1];
  pr->nstages = (int32_t)h[2];
  pr->c_rows = h[3];
  pr->b_rows = h[4];
  pr->s_rows = h[5];
  pr->r_rows = h[6];
  pr->c_first = h[7];
  pr->b_first = h[8];
  /* Record counts, in PA_* order (the 2.1 arrays' from the optional trailer). */
  int64_t *n[PROG_NARRAYS] = {&pr->nops, &pr->nx, &pr->nptr, &pr->ncol, &pr->nval,
                              &pr->nrowidx, &pr->ncert, &pr->ncglobal, &pr->nbglobal, &pr->naptr,
                              &pr->nacol, &pr->naval, &pr->nvalsrc};
  /* Elements per record and bytes per element, in PA_* order; checked before any product is formed. */
  static const int64_t per[PROG_NARRAYS] = {PROG_OP_WIDTH, PROG_X_WIDTH, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1};
  static const size_t esz[PROG_NARRAYS] = {8, 8, 8, 4, 8, 4, 8, 8, 8, 8, 8, 8, 8};
  int64_t c9[PROG_NARRAYS];
  for (int i = 0; i < PROG_NARRAYS_2_0; i++) c9[i] = h[11 + i];
  size_t need = 0; /* bytes of the 2.0 arrays: the trailer, if any, follows them */
  for (int i = 0; i < PROG_NARRAYS_2_0; i++) {
    if (c9[i] < 0 || (uint64_t)c9[i] > (left - need) / (esz[i] * (size_t)per[i])) return -1;
    need += (size_t)c9[i] * esz[i] * (size_t)per[i];
  }
  int narrays = PROG_NARRAYS_2_0;
  const uint8_t *trailer = p + need;
  if (left - need >= 8 * FUZZ_PROG_TRAILER) {
    for (int i = 0; i < FUZZ_PROG_TRAILER; i++) c9[PROG_NARRAYS_2_0 + i] = get_i64(trailer + 8 * i);
    narrays = PROG_NARRAYS;
  }
  for (int i = 0; i < PROG_NARRAYS; i++) {
    int64_t c = i < narrays ? c9[i] : 0;
    if (i == PROG_NARRAYS_2_0 && narrays == PROG_NARRAYS) left -= 8 * FUZZ_PROG_TRAILER; /* the trailer's counts */
    if (c < 0 || (uint64_t)c > left / (esz[i] * (size_t)per[i])) return -1;
    left -= (size_t)c * esz[i] * (size_t)per[i];
    *n[i] = c;
  }
  meta->version_minor = narrays == PROG_NARRAYS ? 1 : 0;
  arr_ref a[PROG_NARRAYS];
  arrays_of(pr, a);
  /* Point into the input, then copy: the arrays end up exact-size on the heap. */
  for (int i = 0; i < PROG_NARRAYS; i++) {
    if (i == PROG_NARRAYS_2_0 && narrays == PROG_NARRAYS) p += 8 * FUZZ_PROG_TRAILER; /* past the trailer's counts */
    *a[i].p = a[i].count ? (void *)p : NULL;
    p += (size_t)a[i].count * a[i].esz;
  }
  /* The input may be unaligned for int64 loads: copying fixes that too. */
  fuzz_prog_copy_arrays(pr);
  prog_rank_seal(pr); /* the checksums a reader would have verified */
  return 0;
}

static int put_i64s(FILE *f, const int64_t *v, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint8_t b[8];
    uint64_t u = (uint64_t)v[i];
    for (int k = 0; k < 8; k++) b[k] = (uint8_t)(u >> (8 * k));
    if (fwrite(b, 1, 8, f) != 8) return -1;
  }
  return 0;
}

int fuzz_prog_encode(const char *path, const prog_meta *meta, const prog_rank *pr) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  int64_t h[FUZZ_PROG_HEADER] = {meta->ranks, pr->rank, pr->nstages, pr->c_rows, pr->b_rows,
                                 pr->s_rows, pr->r_rows, pr->c_first, pr->b_first, meta->m,
                                 meta->k, pr->nops, pr->nx, pr->nptr, pr->ncol,
                                 pr->nval, pr->nrowidx, pr->ncert, pr->ncglobal, pr->nbglobal};
  int bad = put_i64s(f, h, FUZZ_PROG_HEADER);
  /* Arrays as stored: this is a little-endian host (x86-64). */
  const int64_t t[FUZZ_PROG_TRAILER] = {pr->naptr, pr->nacol, pr->naval, pr->nvalsrc};
  for (int a = 0; a < PROG_NARRAYS && !bad; a++) {
    size_t bytes;
    const void *p = prog_array(pr, a, &bytes);
    if (a == PROG_NARRAYS_2_0) bad = put_i64s(f, t, FUZZ_PROG_TRAILER); /* format 2.1's arrays follow */
    if (!bad && bytes && fwrite(p, 1, bytes, f) != bytes) bad = 1;
  }
  if (fclose(f) != 0) bad = 1;
  return bad ? -1 : 0;
}

int fuzz_prog_too_big(const prog_rank *pr) {
  const int64_t rows[4] = {pr->b_rows, pr->c_rows, pr->s_rows, pr->r_rows};
  for (int b = 0; b < 4; b++)
    if (rows[b] > ((int64_t)1 << 24) && rows[b] <= INT32_MAX) return 1;
  return 0;
}

/* ---- interpreter ------------------------------------------------------- */

/* One of the four buffers: its rows and, when small enough, real storage. */
typedef struct ibuf {
  int64_t rows; /* rows the runtime would allocate / receive from the application */
  double *v; /* [rows × n] exact-size heap block, or NULL (indices checked only) */
} ibuf;

/* The interpreter's view of one program. */
typedef struct interp {
  const prog_rank *pr;
  int64_t n; /* values per row */
  ibuf buf[PROG_NBUF];
  uint8_t *mark; /* per destination row: written by the current op (row lists must not repeat) */
  int64_t nmark;
} interp;

/* Every pool read goes through these: the index the runtime would use. */
static int64_t at_ptr(const interp *I, int64_t o, int64_t idx) {
  FUZZ_ASSERT(idx >= 0 && idx < I->pr->nptr, "op %lld reads ptr[%lld] of %lld", (long long)o, (long long)idx,
              (long long)I->pr->nptr);
  return I->pr->ptr[idx];
}
static int32_t at_col(const interp *I, int64_t o, int64_t e) {
  FUZZ_ASSERT(e >= 0 && e < I->pr->ncol, "op %lld reads col[%lld] of %lld", (long long)o, (long long)e,
              (long long)I->pr->ncol);
  return I->pr->col[e];
}
static double at_val(const interp *I, int64_t o, int64_t e) {
  FUZZ_ASSERT(e >= 0 && e < I->pr->nval, "op %lld reads val[%lld] of %lld", (long long)o, (long long)e,
              (long long)I->pr->nval);
  return I->pr->val[e];
}
static int32_t at_rows(const interp *I, int64_t o, int64_t idx) {
  FUZZ_ASSERT(idx >= 0 && idx < I->pr->nrowidx, "op %lld reads rows[%lld] of %lld", (long long)o,
              (long long)idx, (long long)I->pr->nrowidx);
  return I->pr->rows[idx];
}

/* Row `row` of buffer b, or NULL when that buffer has no storage; asserts the row exists. */
static double *row_of(const interp *I, int64_t o, int64_t b, int64_t row, const char *what) {
  const ibuf *B = &I->buf[b];
  FUZZ_ASSERT(row >= 0 && row < B->rows, "op %lld: %s row %lld of buffer %lld (%lld rows)", (long long)o, what,
              (long long)row, (long long)b, (long long)B->rows);
  return B->v ? B->v + row * I->n : NULL;
}

/* kernel: cpu_multiply_f64 / cpu_add_f64 / cpu_gather of runtime/cpu_kernels.c (the op shapes the
 * interpreter, runtime/interp.c, classifies), one access at a time. */
static void interp_mul(interp *I, int64_t o, const int64_t *op) {
  const int64_t nrows = op[OPF_NROWS], poff = op[OPF_PTR_OFF], roff = op[OPF_ROWS_OFF];
  const int64_t dbuf = op[OPF_DST_BUF], sbuf = op[OPF_SRC_BUF];
  const int has_val = (int)op[OPF_HAS_VAL], accum = (int)op[OPF_ACCUM];
  int64_t tmp;
  /* The interpreter addresses only B, C, S and R. */
  FUZZ_ASSERT(dbuf >= 0 && dbuf < PROG_NBUF && sbuf >= 0 && sbuf < PROG_NBUF, "op %lld: buffers %lld <- %lld",
              (long long)o, (long long)dbuf, (long long)sbuf);
  FUZZ_ASSERT(dbuf != PROG_BUF_B, "op %lld writes the application's const B", (long long)o);
  FUZZ_ASSERT(dbuf != sbuf, "op %lld: dst and src are both buffer %lld (restrict)", (long long)o, (long long)dbuf);
  /* d0 = dst + DST_OFF * n, s0 = src + SRC_OFF * n: no int64 overflow. */
  FUZZ_ASSERT(!__builtin_mul_overflow(op[OPF_DST_OFF], I->n, &tmp) &&
                  !__builtin_mul_overflow(op[OPF_SRC_OFF], I->n, &tmp),
              "op %lld: offset * n overflows", (long long)o);
  for (int64_t i = 0; i < nrows; i++) {
    int64_t rel = roff >= 0 ? at_rows(I, o, roff + i) : i, drow;
    FUZZ_ASSERT(!__builtin_add_overflow(op[OPF_DST_OFF], rel, &drow), "op %lld: dst row overflows", (long long)o);
    double *d = row_of(I, o, dbuf, drow, "destination");
    FUZZ_ASSERT(drow < I->nmark && !I->mark[drow], "op %lld writes destination row %lld twice", (long long)o,
                (long long)drow);
    I->mark[drow] = 1;
    int64_t e = at_ptr(I, o, poff + i), end = at_ptr(I, o, poff + i + 1);
    if (!accum) {
      if (e == end) {
        if (d) memset(d, 0, (size_t)I->n * sizeof *d);
        continue;
      }
      int64_t srow;
      FUZZ_ASSERT(!__builtin_add_overflow(op[OPF_SRC_OFF], (int64_t)at_col(I, o, e), &srow), "src row overflows");
      const double *s = row_of(I, o, sbuf, srow, "source");
      double v = has_val ? at_val(I, o, e) : 1.0;
      if (d && s)
        for (int64_t c = 0; c < I->n; c++) d[c] = v * s[c];
      e++;
    }
    for (; e < end; e++) {
      int64_t srow;
      FUZZ_ASSERT(!__builtin_add_overflow(op[OPF_SRC_OFF], (int64_t)at_col(I, o, e), &srow), "src row overflows");
      const double *s = row_of(I, o, sbuf, srow, "source");
      double v = has_val ? at_val(I, o, e) : 1.0;
      if (d && s)
        for (int64_t c = 0; c < I->n; c++) d[c] += v * s[c];
    }
  }
  /* Clear the marks this op set (same traversal, indices now known good). */
  for (int64_t i = 0; i < nrows; i++) I->mark[op[OPF_DST_OFF] + (roff >= 0 ? I->pr->rows[roff + i] : i)] = 0;
}

/* cpu_setup's persistent requests: which records it posts, and where. */
static void interp_xchg(const prog_meta *meta, const interp *I, int64_t *stage_first, int strict) {
  const prog_rank *pr = I->pr;
  int64_t nreq = 0;
  for (int32_t st = 0; st < pr->nstages; st++) {
    stage_first[st] = nreq;
    for (int64_t x = 0; x < pr->nx; x++) {
      const int64_t *r = pr->xchg + x * PROG_X_WIDTH;
      if (r[XF_STAGE] != st) continue;
      int64_t b = r[XF_BUF] == PROG_BUF_S ? PROG_BUF_S : PROG_BUF_R, end;
      FUZZ_ASSERT(r[XF_OFF] >= 0 && r[XF_COUNT] >= 0 && r[XF_COUNT] <= INT_MAX &&
                      !__builtin_add_overflow(r[XF_OFF], r[XF_COUNT], &end) && end <= I->buf[b].rows,
                  "exchange record %lld: rows %lld + %lld of buffer %lld (%lld rows)", (long long)x,
                  (long long)r[XF_OFF], (long long)r[XF_COUNT], (long long)b, (long long)I->buf[b].rows);
      FUZZ_ASSERT(r[XF_PEER] >= 0 && r[XF_PEER] < meta->ranks, "exchange record %lld: peer %lld of %d ranks",
                  (long long)x, (long long)r[XF_PEER], meta->ranks);
      int64_t tag = r[XF_STAGE] * 16 + r[XF_KIND];
      FUZZ_ASSERT(tag >= 0 && tag <= 32767, "exchange record %lld: MPI tag %lld", (long long)x, (long long)tag);
      if (strict) {
        FUZZ_ASSERT(r[XF_PEER] != pr->rank, "exchange record %lld: message to itself", (long long)x);
        for (int64_t y = 0; y < x; y++) {
          const int64_t *q = pr->xchg + y * PROG_X_WIDTH;
          FUZZ_ASSERT(!(q[XF_STAGE] == r[XF_STAGE] && q[XF_PEER] == r[XF_PEER] && q[XF_DIR] == r[XF_DIR] &&
                        q[XF_KIND] == r[XF_KIND]),
                      "exchange records %lld and %lld: same (stage, peer, dir, kind)", (long long)y, (long long)x);
        }
      }
      nreq++;
    }
  }
  stage_first[pr->nstages] = nreq;
}

void fuzz_interp_run(const prog_meta *meta, const prog_rank *pr, int n, int strict) {
  interp I;
  memset(&I, 0, sizeof I);
  I.pr = pr;
  I.n = n;
  const int64_t rows[PROG_NBUF] = {pr->b_rows, pr->c_rows, pr->s_rows, pr->r_rows};
  int64_t most = 0;
  for (int b = 0; b < PROG_NBUF; b++) {
    FUZZ_ASSERT(rows[b] >= 0 && rows[b] <= INT32_MAX, "buffer %d has %lld rows", b, (long long)rows[b]);
    I.buf[b].rows = rows[b];
    if (rows[b] > most) most = rows[b];
    if (rows[b] * n <= FUZZ_MAX_BUFFER_VALUES) {
      I.buf[b].v = malloc((size_t)(rows[b] * n) * sizeof(double) + (rows[b] == 0));
      FUZZ_ASSERT(I.buf[b].v != NULL, "out of memory");
      for (int64_t i = 0; i < rows[b] * n; i++) I.buf[b].v[i] = (double)((i * 7 + b) % 13) - 6.0;
    }
  }
  I.nmark = most;
  I.mark = calloc((size_t)most + 1, 1);
  FUZZ_ASSERT(I.mark != NULL, "out of memory");
  /* stage_first: calloc'd nstages + 2 entries, as in cpu_setup. */
  int64_t *stage_first = calloc((size_t)pr->nstages + 2, sizeof *stage_first);
  uint8_t *active = calloc((size_t)pr->nstages + 2, 1);
  FUZZ_ASSERT(stage_first && active, "out of memory");
  interp_xchg(meta, &I, stage_first, strict);
  for (int64_t o = 0; o < pr->nops; o++) {
    const int64_t *op = pr->ops + o * PROG_OP_WIDTH;
    int64_t st = op[OPF_STAGE];
    /* cpu_spmm reads stage_first[st] and stage_first[st + 1] for every op. */
    FUZZ_ASSERT(st >= 0 && st + 1 < (int64_t)pr->nstages + 2, "op %lld: stage %lld of %d", (long long)o,
                (long long)st, pr->nstages);
    int64_t nrq = stage_first[st + 1] - stage_first[st];
    if (op[OPF_KIND] == PROG_OP_START || op[OPF_KIND] == PROG_OP_WAIT) {
      FUZZ_ASSERT(nrq >= 0 && nrq <= INT_MAX, "op %lld: %lld requests in stage %lld", (long long)o, (long long)nrq,
                  (long long)st);
      if (strict && op[OPF_KIND] == PROG_OP_START)
        FUZZ_ASSERT(!active[st] || nrq == 0, "op %lld starts stage %lld while it is in flight", (long long)o,
                    (long long)st);
      active[st] = op[OPF_KIND] == PROG_OP_START;
    } else {
      /* Anything else is run as a MUL by cpu_spmm. */
      interp_mul(&I, o, op);
    }
  }
  if (strict)
    for (int32_t st = 0; st < pr->nstages; st++)
      FUZZ_ASSERT(!active[st] || stage_first[st + 1] == stage_first[st], "stage %d never completed", st);
  free(active);
  free(stage_first);
  free(I.mark);
  for (int b = 0; b < PROG_NBUF; b++) free(I.buf[b].v);
}

int fuzz_cross_check(const prog_rank *progs, int32_t ranks, char *why, size_t cap) {
  /* O(nx^2) over all ranks: plans under fuzzing are small. */
  for (int32_t p = 0; p < ranks; p++) {
    const prog_rank *a = &progs[p];
    for (int64_t x = 0; x < a->nx; x++) {
      const int64_t *r = a->xchg + x * PROG_X_WIDTH;
      const prog_rank *b = &progs[r[XF_PEER]];
      int64_t other = -1;
      for (int64_t y = 0; y < b->nx; y++) {
        const int64_t *q = b->xchg + y * PROG_X_WIDTH;
        if (q[XF_PEER] == p && q[XF_STAGE] == r[XF_STAGE] && q[XF_KIND] == r[XF_KIND] && q[XF_DIR] != r[XF_DIR])
          other = q[XF_COUNT];
      }
      if (other != r[XF_COUNT]) {
        snprintf(why, cap, "rank %d %s %lld rows %s rank %lld in stage %lld kind %lld; the peer expects %lld", p,
                 r[XF_DIR] ? "receives" : "sends", (long long)r[XF_COUNT], r[XF_DIR] ? "from" : "to",
                 (long long)r[XF_PEER], (long long)r[XF_STAGE], (long long)r[XF_KIND], (long long)other);
        return -1;
      }
    }
  }
  return 0;
}
