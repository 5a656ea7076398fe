/* collector.h — entries (destination row, source row, value) gathered in any
 * order and emitted as one operator grouped by destination row. Within a row
 * the entries keep the order they were added in, so the summation order — and
 * the result — is fixed by the planner, not by threads. */
#ifndef SHIRO_COLLECTOR_H
#define SHIRO_COLLECTOR_H

#include <stdint.h>

#include "prog_builder.h"

typedef struct collector {
  int64_t nkeys;   /* destination rows are 0 .. nkeys-1 */
  int64_t n, cap;  /* entries */
  int64_t *key;    /* [n] destination row */
  int32_t *src;    /* [n] source row */
  double *val;     /* [n] value */
  int failed;      /* an allocation failed */
} collector;

/* Starts an empty collector for destination rows 0 .. nkeys-1. */
void coll_init(collector *c, int64_t nkeys);

/* Adds an entry. */
void coll_add(collector *c, int64_t key, int32_t src, double val);

/* Appends the entries as rows of the open op of pb: every row 0..nkeys-1 if
 * all_rows (a contiguous destination), else only rows with entries (the op
 * must list its rows). Then frees the entries. SHIRO_ERR_NOMEM on failure. */
shiro_status coll_emit(collector *c, prog_builder *pb, int all_rows);

/* Frees the entries; safe after coll_emit. */
void coll_free(collector *c);

#endif
