/* collector.h — entries (destination row, source row) gathered in any order
 * and emitted as one value-free operator (every entry is 1: rows copied or
 * summed) grouped by destination row. Within a row the entries keep the order
 * they were added in, so the summation order — and the result — is fixed by
 * the planner, not by threads. A collector is reused: one per thread, its
 * arrays kept from one use to the next, so that ranks do not each allocate
 * (and the kernel zero) fresh memory for them. */
#ifndef SHIRO_COLLECTOR_H
#define SHIRO_COLLECTOR_H

#include <stdint.h>

#include "prog_builder.h"

typedef struct collector {
  int64_t nkeys; /* destination rows are 0 .. nkeys-1 */
  int64_t n, cap; /* entries */
  int64_t *key; /* [cap] destination row */
  int32_t *src; /* [cap] source row */
  int64_t *start; /* [start_cap] coll_emit's counting sort: row starts */
  int64_t *order; /* [cap] and the entries in row order */
  int64_t start_cap;
  int failed; /* an allocation failed */
} collector;

/* Zeroes a collector (no arrays yet). */
void coll_init(collector *c);

/* Starts a new set of entries for destination rows 0 .. nkeys-1, keeping the arrays. */
void coll_begin(collector *c, int64_t nkeys);

/* Adds an entry. */
void coll_add(collector *c, int64_t key, int32_t src);

/* Appends the entries as rows of the open op of pb: every row 0..nkeys-1 if
 * all_rows (a contiguous destination), else only rows with entries (the op
 * must list its rows). SHIRO_ERR_NOMEM if an allocation failed since
 * coll_begin. */
shiro_status coll_emit(collector *c, prog_builder *pb, int all_rows);

/* Frees the arrays; the collector is then as after coll_init. */
void coll_free(collector *c);

#endif
