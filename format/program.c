/* program.c — generic access to a rank program's arrays. */
#include <stdlib.h>
#include <string.h>

#include "checksum.h"
#include "program.h"

const void *prog_array(const prog_rank *pr, int a, size_t *bytes) {
  switch (a) {
    case PA_OPS: *bytes = (size_t)pr->nops * PROG_OP_WIDTH * sizeof(int64_t); return pr->ops;
    case PA_XCHG: *bytes = (size_t)pr->nx * PROG_X_WIDTH * sizeof(int64_t); return pr->xchg;
    case PA_PTR: *bytes = (size_t)pr->nptr * sizeof(int64_t); return pr->ptr;
    case PA_COL: *bytes = (size_t)pr->ncol * sizeof(int32_t); return pr->col;
    case PA_VAL: *bytes = (size_t)pr->nval * sizeof(double); return pr->val;
    case PA_ROWS: *bytes = (size_t)pr->nrowidx * sizeof(int32_t); return pr->rows;
    case PA_CERT: *bytes = (size_t)pr->ncert * 2 * sizeof(int64_t); return pr->cert;
    case PA_CGLOBAL: *bytes = (size_t)pr->ncglobal * sizeof(int64_t); return pr->c_global;
    case PA_BGLOBAL: *bytes = (size_t)pr->nbglobal * sizeof(int64_t); return pr->b_global;
    case PA_APTR: *bytes = (size_t)pr->naptr * sizeof(int64_t); return pr->a_ptr;
    case PA_ACOL: *bytes = (size_t)pr->nacol * sizeof(int64_t); return pr->a_col;
    case PA_AVAL: *bytes = (size_t)pr->naval * sizeof(double); return pr->a_val;
    case PA_VALSRC: *bytes = (size_t)pr->nvalsrc * sizeof(int64_t); return pr->val_src;
  }
  *bytes = 0;
  return NULL;
}

const char *prog_array_name(int a) {
  static const char *const names[PROG_NARRAYS] = {"ops", "xchg", "ptr", "col", "val", "rows", "cert", "c_global", "b_global",
                                                  "a_ptr", "a_col", "a_val", "val_src"};
  return a >= 0 && a < PROG_NARRAYS ? names[a] : "?";
}

void prog_rank_free(prog_rank *pr) {
  if (!pr) return;
  free(pr->ops);
  free(pr->xchg);
  free(pr->ptr);
  free(pr->col);
  free(pr->val);
  free(pr->rows);
  free(pr->cert);
  free(pr->c_global);
  free(pr->b_global);
  free(pr->a_ptr);
  free(pr->a_col);
  free(pr->a_val);
  free(pr->val_src);
  memset(pr, 0, sizeof *pr);
}

void prog_rank_seal(prog_rank *pr) {
  for (int a = 0; a < PROG_NARRAYS; a++) {
    size_t bytes;
    const void *p = prog_array(pr, a, &bytes);
    pr->crc[a] = crc32c(0, p, bytes);
  }
}

void prog_rank_shape(const prog_rank *pr, prog_rank *shape) {
  *shape = *pr;
  prog_rank_seal(shape);
  shape->ops = shape->xchg = shape->ptr = shape->cert = shape->c_global = shape->b_global = NULL;
  shape->a_ptr = shape->a_col = shape->val_src = NULL;
  shape->col = shape->rows = NULL;
  shape->val = shape->a_val = NULL;
}
