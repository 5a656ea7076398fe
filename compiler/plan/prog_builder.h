/* prog_builder.h — appends ops, operator rows and exchange records to a prog_rank. */
#ifndef SHIRO_PROG_BUILDER_H
#define SHIRO_PROG_BUILDER_H

#include <stdint.h>

#include "program.h"
#include "shiro_status.h"

/* Growable view of one rank's program under construction. */
typedef struct prog_builder {
  prog_rank *pr; /* the program being filled (owned by the caller) */
  int64_t cap_ops, cap_x, cap_ptr; /* capacities in records / entries */
  int64_t cap_col, cap_rows;
  int64_t cur; /* index of the MUL op being filled, -1 if none */
  int with_rows; /* the open op lists its destination rows */
  int failed; /* set once an allocation failed; later calls do nothing */
} prog_builder;

/* Starts filling *pr (which must be zeroed). */
void pb_init(prog_builder *b, prog_rank *pr);

/* Reserves room for about nptr row pointers, ncol entries and nrows listed
 * destination rows (fewer reallocations on big plans; a hint, not a limit).
 * With `map`, the pages of what is reserved are mapped in at once
 * (sc_big_populate) rather than faulted in one by one: for sizes that are
 * exact or nearly so, since every reserved byte then counts as resident. */
void pb_reserve(prog_builder *b, int64_t nptr, int64_t ncol, int64_t nrows, int map);

/* Appends a START or WAIT of `stage`. */
void pb_sync(prog_builder *b, int64_t kind, int64_t stage);

/* Opens a MUL op dst[...] (+)= M · src; rows are then added with pb_row. If
 * with_rowidx, each pb_row gives its destination row; else rows go to
 * dst_off, dst_off+1, ... */
void pb_mul_begin(prog_builder *b, int64_t tag, int64_t stage, int64_t dst_buf, int64_t dst_off,
                  int64_t src_buf, int64_t src_off, int with_rowidx, int has_val, int accum);

/* pb_row's path when ptr or rows are full (or the builder failed, or no op
 * is open): grows them, then takes the inline path. */
void pb_row_slow(prog_builder *b, int32_t dst_row);

/* Starts the next row of the open op (dst_row ignored unless with_rowidx).
 * Inline: it runs once per row of every op. */
static inline void pb_row(prog_builder *b, int32_t dst_row) {
  prog_rank *pr = b->pr;
  if (b->failed || b->cur < 0 || pr->nptr >= b->cap_ptr || (b->with_rows && pr->nrowidx >= b->cap_rows)) {
    pb_row_slow(b, dst_row);
    return;
  }
  if (b->with_rows) pr->rows[pr->nrowidx++] = dst_row;
  pr->ops[b->cur * PROG_OP_WIDTH + OPF_NROWS]++;
  pr->ptr[pr->nptr - 1] = pr->ncol; /* the open row ends here */
  pr->nval = pr->nvalsrc = pr->ncol;
  pr->ptr[pr->nptr++] = pr->ncol; /* end of the new row, moved as entries come */
}

/* pb_entry_src's path when col/val/val_src are full (or the builder failed, or no op is open). */
void pb_entry_slow(prog_builder *b, int32_t src_row, double val, int64_t src);

/* Appends an entry (source row, value) to the current row, whose value is
 * nonzero `src` of A (its position in the builder's CSR, which plan_deliver
 * and plan_rank_set_rows turn into the plan-wide id of val_src), or -1 for an
 * entry that only selects or sums rows. Inline: it runs once per nonzero of
 * the plan, so it stores the entry and nothing else. */
static inline void pb_entry_src(prog_builder *b, int32_t src_row, double val, int64_t src) {
  prog_rank *pr = b->pr;
  if (b->failed || b->cur < 0 || pr->ncol >= b->cap_col) {
    pb_entry_slow(b, src_row, val, src);
    return;
  }
  pr->col[pr->ncol] = src_row;
  pr->val[pr->ncol] = val;
  pr->val_src[pr->ncol] = src;
  pr->ncol++; /* the row's end pointer, nval and nvalsrc follow at the next pb_row or pb_mul_end */
}

/* pb_entry_src of an entry that is no nonzero of A (a selection or a sum: src -1). */
static inline void pb_entry(prog_builder *b, int32_t src_row, double val) { pb_entry_src(b, src_row, val, -1); }

/* Whether k more entries fit the open op as it stands (no failure, no
 * growth needed). Then a hot loop may write them straight to
 * pr->col/val/val_src[pr->ncol ...] and add what it kept to pr->ncol: storing every
 * candidate and advancing only over the kept ones, which is branch-free
 * where pb_entry under an unpredictable test is not. */
static inline int pb_has_room(const prog_builder *b, int64_t k) {
  return !b->failed && b->cur >= 0 && b->pr->ncol + k <= b->cap_col;
}

/* Closes the open op; an op with no rows is dropped. */
void pb_mul_end(prog_builder *b);

/* Appends an exchange record. */
void pb_xchg(prog_builder *b, int64_t stage, int64_t peer, int64_t dir, int64_t buf, int64_t off,
             int64_t count, int64_t tier, int64_t brows, int64_t kind);

/* SHIRO_OK, or SHIRO_ERR_NOMEM if any append failed. */
shiro_status pb_status(const prog_builder *b);

#endif
