/* dist_metis.h — the `metis` partition computed by the distributed planner's processes together:
 * the graph serial part_metis cuts (partition_metis.c), cut by PT-Scotch over MPI. */
#ifndef SHIRO_DIST_METIS_H
#define SHIRO_DIST_METIS_H

#include <stdint.h>

#include "dist_comm.h"
#include "dist_input.h"

/* Labels of every row of the square matrix M (after dist_matrix_read: this process holds the
 * stripe M->A of rows M->lo .. M->hi-1, row lo first, and M->gAp every row's length) cut into
 * `parts` parts by a distributed graph partitioner, on every process the same labels[m] (0..parts-1).
 * The graph is serial part_metis's: A + Aᵀ without the diagonal, each vertex weighing its row's
 * entries + 1; as there, one part (parts == 1) gives every row 0 and no more rows than parts
 * gives row i label i. The same P, matrix and parts give the same labels on every run; other P
 * may give other labels. M is borrowed and not changed; labels (caller-owned, M->m of them) is
 * written only on success. SHIRO_ERR_ARG: parts < 1, a matrix that is not square;
 * SHIRO_ERR_UNSUPPORTED: a graph beyond PT-Scotch's integers, or a build without PT-Scotch
 * (the message names the Debian package). Collective; errors agreed (dist_agree). */
shiro_status dist_part_metis(const dist_comm *c, const dist_matrix *M, int32_t parts, int32_t *labels, shiro_error *err)
    SHIRO_MUST_CHECK;

#endif
