/* plan_heatmap.h — the rank x rank traffic matrix of a plan as a standalone SVG
 * (like the SHIRO paper's Fig. 9), for shiro-plan-dump --heatmap. */
#ifndef SHIRO_PLAN_HEATMAP_H
#define SHIRO_PLAN_HEATMAP_H

#include <stddef.h>
#include <stdint.h>

/* Largest rank count heatmap_write_svg draws (the file grows as R^2). */
#define HEATMAP_MAX_RANKS 4096
/* Up to this many ranks, every cell with traffic prints its count. */
#define HEATMAP_NUMBERS_MAX_RANKS 32

/* How a count maps to a colour (max: the largest off-diagonal count). */
typedef enum heatmap_scale {
  HEATMAP_LINEAR = 0, /* v / max: 386 and 704 of 1000 look as different as they are */
  HEATMAP_LOG = 1, /* log(1 + v) / log(1 + max): counts spread over several decades */
} heatmap_scale;

/* "linear" or "log" into *out: returns 0, or -1 (*out untouched) for anything else. */
int heatmap_scale_parse(const char *text, heatmap_scale *out);

/* Writes an SVG image of the traffic matrix to `path`: rows[p * ranks + q]
 * is the number of rows moved from rank q to rank p per SpMM call (row p of
 * the image is destination rank p, column q is source rank q). Cells are
 * coloured on `scale` (heatmap_scale), with one colour ramp for inter-node
 * pairs (p / G != q / G) and another for intra-node pairs; empty cells are
 * white, node boundaries are drawn every G ranks, a colour bar per ramp
 * shares labelled ticks (the maximum, then round values; no two labels
 * closer than 13 pixels), up to HEATMAP_NUMBERS_MAX_RANKS ranks every cell
 * with traffic prints its count (704, 1.2k, 35k), and every cell holding
 * traffic (and every cell, up to 64 ranks) has a <title> with its exact
 * count, shown by a browser on hover. Sizes adapt to the rank count (cells shrink, labels thin
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
                      const char *title, heatmap_scale scale, char *errbuf, size_t errlen);

#endif
