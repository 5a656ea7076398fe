/* partition.h — 1D row partitions of A/C (m rows) and of B (k rows) over R ranks. */
#ifndef SHIRO_PARTITION_H
#define SHIRO_PARTITION_H

#include <stdint.h>

#include "shiro_status.h"

/* A contiguous partition: part p owns [first[p], first[p+1]). */
typedef struct sc_partition {
  int32_t parts; /* R */
  int64_t n; /* rows partitioned */
  int64_t *first; /* [parts+1], first[0] = 0, first[parts] = n */
} sc_partition;

/* The `block` partition of DESIGN.md: part p owns [floor(p·n/R), floor((p+1)·n/R)),
 * computed in 64-bit (128-bit intermediate) arithmetic. */
shiro_status part_block(int64_t n, int32_t parts, sc_partition *out, shiro_error *err);

struct sc_csr;

/* The `nnz` partition: contiguous ranges of A's rows with balanced nonzeros:
 * part p starts at the first row whose nonzero prefix reaches ⌈p·nnz/R⌉
 * (deterministic; a row is never split, so one dense row can unbalance it). */
shiro_status part_nnz(const struct sc_csr *A, int32_t parts, sc_partition *out, shiro_error *err);

/* A contiguous partition of A's rows balancing nonzeros weighted by their current part:
 * row i, owned by part p in P, weighs scale[p] (>= 0) times its nonzeros, and part p of the
 * result starts at the first row whose weight's middle passes p / parts of the total
 * (deterministic). The work partition's step (work_balance.h). */
shiro_status part_scaled(const struct sc_csr *A, const sc_partition *P, const double *scale, sc_partition *out,
                         shiro_error *err);

/* The `metis` partition (square A): METIS k-way on the symmetrized pattern
 * (A + Aᵀ, no diagonal), vertices weighted by their row's nonzeros + 1, fixed
 * seed. Returns the permutation *newof (newof[old] = new id: the rows of part
 * 0 first, then part 1, ..., each part in increasing old id) and the
 * contiguous partition *out of the permuted rows. */
shiro_status part_metis(const struct sc_csr *A, int32_t parts, int64_t **newof, sc_partition *out,
                        shiro_error *err);

/* The METIS partitions' variants: volume: METIS's communication-volume objective
 * (METIS_OBJTYPE_VOL) instead of the edge cut; node_first with gpn > 1 (and parts a multiple of
 * gpn above it): METIS first cuts the graph into parts / gpn nodes, then each node's induced
 * subgraph into its gpn ranks (rank = node · gpn + its part there), so the ranks of a node share
 * one well-cut part and the inter-node traffic is what the first cut minimizes. */
typedef struct part_metis_options {
  int volume; /* 1: METIS_OBJTYPE_VOL */
  int node_first; /* 1: nodes first, then each node's ranks */
  int32_t gpn; /* ranks per node (node_first) */
} part_metis_options;

/* part_metis with options (NULL: part_metis's), the same results for the same options; where
 * node_first cannot apply (gpn <= 1, parts not a multiple of gpn, or one node) a flat cut. */
shiro_status part_metis_opt(const struct sc_csr *A, int32_t parts, const part_metis_options *o, int64_t **newof,
                            sc_partition *out, shiro_error *err);

/* The --partition name of the variant o ("metis", "metis-vol", "metis-node"; NULL: "metis"). */
const char *part_metis_name(const part_metis_options *o);

/* A partition from labels: part[i] (0..parts-1) owns row i. Returns the permutation *newof
 * (newof[old] = new id: part 0's rows first, then part 1's, ..., each part in increasing old id)
 * and the contiguous partition *out of the permuted rows (parts may be empty). */
shiro_status part_from_labels(const int32_t *part, int64_t n, int32_t parts, int64_t **newof, sc_partition *out,
                              shiro_error *err);

/* The `parts:FILE` partition: the labels of n rows read from path, one rank id (0..parts-1) per
 * line, line i for row i-1 (gpmetis's output format; partition_file.c says what is accepted).
 * what names the rows in messages ("rows", "columns"). Returns *newof and *out as
 * part_from_labels does; a bad file is SHIRO_ERR_PARSE (SHIRO_ERR_IO if unreadable) with the
 * file and line in err. */
shiro_status part_file(const char *path, const char *what, int64_t n, int32_t parts, int64_t **newof, sc_partition *out,
                       shiro_error *err);

/* Copies a partition. */
shiro_status part_copy(const sc_partition *in, sc_partition *out, shiro_error *err);

/* Owner of row i (0 <= i < n) by binary search. */
int32_t part_owner(const sc_partition *P, int64_t i);

/* Fills owner[i] for every row i in [0, n): a lookup table. */
void part_owner_table(const sc_partition *P, int32_t *owner);

/* A small index that finds the owner of a row in a few cached loads: the
 * owner of the first row of each bucket of 2^shift rows (about 4 buckets per
 * part), then a forward step past the starts inside the bucket. A table of
 * owners over all rows would be read at random, out of cache. */
typedef struct sc_owner_index {
  const int64_t *first; /* [parts+1] the partition's starts (borrowed) */
  int32_t *bucket; /* [(n >> shift) + 1] owner of row b << shift */
  int shift; /* bucket width 2^shift rows */
} sc_owner_index;

/* Builds the index of P (which must outlive it). */
shiro_status part_owner_index(const sc_partition *P, sc_owner_index *ix, shiro_error *err);

/* Owner of row i (0 <= i < n): what part_owner returns. */
static inline int32_t part_owner_at(const sc_owner_index *ix, int64_t i) {
  int32_t q = ix->bucket[i >> ix->shift];
  while (ix->first[q + 1] <= i) q++;
  return q;
}

/* Frees the index's table; NULL is a no-op. */
void part_owner_index_free(sc_owner_index *ix);

/* Frees the arrays of a partition (not the struct); NULL is a no-op. */
void part_free(sc_partition *P);

#endif
