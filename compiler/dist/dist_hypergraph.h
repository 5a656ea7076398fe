/* dist_hypergraph.h — the `hypergraph` partition: Zoltan's parallel hypergraph partitioner (PHG) on
 * the column-net model of A, with one process or several. */
#ifndef SHIRO_DIST_HYPERGRAPH_H
#define SHIRO_DIST_HYPERGRAPH_H

#include <stdint.h>

#include "dist_comm.h"
#include "dist_input.h"

struct sc_csr;

/* Labels of every row of M (after dist_matrix_read: this process holds the stripe M->A of rows
 * M->lo .. M->hi-1, row lo first) cut into `parts` parts by Zoltan's PHG, on every process the same
 * labels[m] (0..parts-1). The model: a vertex per row of A, weighing its entries + 1 (serial
 * part_metis's weights); a net per column j whose pins are the rows with an entry in column j and,
 * for a square A, row j itself (B row j lives with C row j): the connectivity - 1 summed over the
 * nets, which PHG minimizes, is then the rows of B the column-based scheme moves. A rectangular A
 * (which METIS cannot take) has no such pin: B's rows are spread by block. Imbalance 3%, METIS
 * k-way's. One part gives every row 0, no more rows than parts gives row i label i (no call). The
 * same P, matrix and parts give the same labels on every run. labels (caller-owned, M->m) is
 * written only on success. SHIRO_ERR_UNSUPPORTED: a build without Zoltan (the message names the
 * Debian package), or more than 2^31-1 pins on one process. Collective; errors agreed. */
shiro_status dist_part_hypergraph(const dist_comm *c, const dist_matrix *M, int32_t parts, int32_t *labels,
                                  shiro_error *err) SHIRO_MUST_CHECK;

/* The same partition of a whole matrix A held by this process alone (Zoltan over MPI_COMM_SELF):
 * what one shiro-plan process computes for --partition hypergraph (plan_request.hypergraph).
 * Needs MPI initialized (SHIRO_ERR_UNSUPPORTED if not). Local. */
shiro_status dist_part_hypergraph_local(const struct sc_csr *A, int32_t parts, int32_t *labels,
                                        shiro_error *err) SHIRO_MUST_CHECK;

#endif
