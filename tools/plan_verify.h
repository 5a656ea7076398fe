/* plan_verify.h — re-checks a whole plan from its own arrays (shiro-plan-dump --verify). */
#ifndef SHIRO_PLAN_VERIFY_H
#define SHIRO_PLAN_VERIFY_H

#include <stdint.h>

#include "csr.h"
#include "program.h"
#include "shiro_status.h"

/* What a verification established. */
typedef struct verify_report {
  int64_t nonzeros; /* (i, j) terms reaching C, each exactly once */
  int64_t problems; /* cover problems (blocks, or node pairs for group) */
  int64_t certified; /* of those, proven optimal by a matching of the cover's size */
  int64_t cover_rows; /* total size of the covers */
  int64_t messages; /* messages matched sender to receiver */
  int matrix_checked; /* 1 if a matrix was given and matched pattern, digests and values */
} verify_report;

/* Verifies the plan given by meta and all ranks' programs pr[0..R-1]:
 * checksums and bounds of every array, every message matched by its peer,
 * and, by executing the programs symbolically (B rows as symbols), that
 * every C row receives each nonzero of its row of A exactly once, multiplied
 * once. For joint, hier and group, the cover of every problem (derived from
 * where each nonzero was multiplied) must be as large as a valid matching
 * stored in the plan: the certificate of optimality. With A (may be NULL),
 * also that the plan is the plan of that matrix: digests, pattern and values.
 * Returns SHIRO_OK, or SHIRO_ERR_FORMAT with the first violation in err. */
shiro_status plan_verify(const prog_meta *meta, const prog_rank *pr, const sc_csr *A, verify_report *rep,
                         shiro_error *err);

/* Verifies rank own->rank's part of a plan by itself, as one rank of a run could: checksums and
 * bounds of its arrays (plan_check_rank), that its rows follow those of prev (rank p − 1) and are
 * followed by next's (rank p + 1; NULL where there is none: then they start at 0 / end at m, k),
 * every message it records matched by the record of the
 * other direction of its peer (same stage and kind, same rows), and every record of those peers
 * that names it matched by one of its own; with A (may be NULL), that the plan is A's (shape,
 * digest) and the rank's rows are A's rows (pattern digest, local matrix). peers[0..npeers): the
 * programs of every rank its records name, sorted by rank. O(its part + its peers' records + A).
 * What needs every rank (the symbolic execution, the certificates, val_src naming each nonzero
 * once, messages from ranks it never names) is plan_verify's. rep gets messages (its records) and
 * matrix_checked. Returns SHIRO_OK, SHIRO_ERR_FORMAT or SHIRO_ERR_MISMATCH with the violation. */
shiro_status plan_verify_rank(const prog_meta *meta, const prog_rank *own, const prog_rank *prev, const prog_rank *next,
                              const prog_rank *peers, int32_t npeers, const sc_csr *A, verify_report *rep, shiro_error *err);

/* Proves the transposed programs tr[0..R-1] (X = Aᵀ·Y, derived from pr: plan_transpose.h) by
 * executing them symbolically on the rows of Y: every message matched, and every X row j
 * receives each nonzero (i, j) exactly once, multiplied once (by the owner of row i or of column
 * j), with the coefficient the forward programs give C row i: X = Aᵀ·Y for the very A that
 * C = A·B multiplies (plan_verify proves that one first). rep gets the nonzeros and messages.
 * Returns SHIRO_OK, or SHIRO_ERR_FORMAT with the first violation in err. */
shiro_status plan_verify_transpose(const prog_meta *meta, const prog_rank *pr, const prog_rank *tr, verify_report *rep,
                                   shiro_error *err);

#endif
