/* plan_heatmap.h — the rank x rank traffic matrix of a plan as a standalone SVG
 * (like the SHIRO paper's Fig. 9), for shiro-plan-dump --heatmap. */
#ifndef SHIRO_PLAN_HEATMAP_H
#define SHIRO_PLAN_HEATMAP_H

#include <stddef.h>
#include <stdint.h>

/* Largest rank count heatmap_write_svg draws (the file grows as R^2). */
#define HEATMAP_MAX_RANKS 4096

/* Writes an SVG image of the traffic matrix to `path`: rows[p * ranks + q]
 * is the number of rows moved from rank q to rank p per SpMM call (row p of
 * the image is destination rank p, column q is source rank q). Cells are
 * coloured on a logarithmic scale, log(1 + v) / log(1 + max), with one colour
 * ramp for inter-node pairs (p / G != q / G) and another for intra-node
 * pairs; empty cells are white, node boundaries are drawn every G ranks, a
 * legend bar per ramp carries tick labels, and every cell holding traffic (and
 * every cell, up to 64 ranks) has a <title> with its exact count, shown by a
 * browser on hover. Sizes adapt to the rank count (cells shrink, labels thin
 * out) so that the image stays readable up to a few hundred ranks.
 *
 * `title` (may be NULL) is printed above the matrix, XML-escaped. The file is
 * written through out_file.h: atomically and durably into "PATH.tmp.PID"
 * beside it (beside a symlink's target), renamed to it when complete; a device
 * or FIFO is written in place. On failure no file is left and an existing
 * `path` is untouched.
 * Requires 1 <= ranks <= HEATMAP_MAX_RANKS, gpus_per_node >= 1, rows of
 * ranks^2 entries, all >= 0. Returns 0 on success; -1 on failure with a
 * message ("PATH: what went wrong", or the bad argument) in errbuf[0 ..
 * errlen-1] when errbuf is not NULL. Prints nothing. */
int heatmap_write_svg(const char *path, int32_t ranks, int32_t gpus_per_node, const int64_t *rows,
                      const char *title, char *errbuf, size_t errlen);

#endif
