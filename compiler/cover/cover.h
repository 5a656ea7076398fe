/* cover.h — exact minimum vertex covers of bipartite graphs.
 *
 * A graph has nr row vertices and nc column vertices; its edges are given in
 * CSR form: the neighbours of row i are Gj[Gp[i] .. Gp[i+1]-1], each in
 * [0, nc). Duplicate edges are allowed. Results never depend on threads: each
 * call is sequential and deterministic, callers run many calls in parallel,
 * one workspace per thread. */
#ifndef SHIRO_COVER_H
#define SHIRO_COVER_H

#include <stdint.h>

#include "shiro_status.h"

/* Reusable scratch memory; grows as needed. One per thread. */
typedef struct cover_ws cover_ws;

/* Returns a new empty workspace, or NULL when out of memory. */
cover_ws *cover_ws_new(void);

/* Frees a workspace; NULL is a no-op. */
void cover_ws_free(cover_ws *ws);

/* Maximum cardinality matching (each row takes a free column or gets an
 * augmenting search, and failed searches retire the rows they prove
 * unmatchable; Hopcroft–Karp if those searches wander; explicit stacks). On
 * return rmatch[i] is the column matched to row i or -1, cmatch[j] the row
 * matched to column j or -1, and *size the number of matched pairs. Deterministic. Any maximum matching gives the same covers
 * (cover_konig, cover_lex): only this certificate depends on the method. */
shiro_status cover_max_matching(int32_t nr, int32_t nc, const int64_t *Gp, const int32_t *Gj,
                                cover_ws *ws, int32_t *rmatch, int32_t *cmatch, int64_t *size);

/* König's construction: from a maximum matching (rmatch, cmatch) writes a
 * minimum vertex cover, rcov[i] = 1 if row i is in it, ccov[j] = 1 if column
 * j is, else 0. The cover has exactly as many vertices as the matching has
 * pairs (the matching is its certificate of optimality). */
shiro_status cover_konig(int32_t nr, int32_t nc, const int64_t *Gp, const int32_t *Gj,
                         const int32_t *rmatch, const int32_t *cmatch, cover_ws *ws,
                         uint8_t *rcov, uint8_t *ccov);

/* cover_konig for a matching cover_max_matching has just returned for this
 * same graph, with its size: the graph and the matching are not checked
 * again (two passes over the edges fewer). The cover's size is still checked
 * against `size` (SHIRO_ERR_ARG if the matching was not maximum). */
shiro_status cover_konig_matched(int32_t nr, int32_t nc, const int64_t *Gp, const int32_t *Gj,
                                 const int32_t *rmatch, const int32_t *cmatch, int64_t size, cover_ws *ws,
                                 uint8_t *rcov, uint8_t *ccov);

/* Convenience: maximum matching then König. *size = cover size = matching size. */
shiro_status cover_min_vertex_cover(int32_t nr, int32_t nc, const int64_t *Gp,
                                    const int32_t *Gj, cover_ws *ws, uint8_t *rcov,
                                    uint8_t *ccov, int64_t *size);

/* Minimum weight vertex cover by max-flow/min-cut (s→row i capacity rw[i],
 * column j→t capacity cw[j], edges infinite). Weights >= 0. Writes the cover
 * into rcov/ccov, its weight into *weight and the max-flow value into *flow
 * (equal to *weight: the flow is the certificate). Deterministic. */
shiro_status cover_weighted(int32_t nr, int32_t nc, const int64_t *Gp, const int32_t *Gj,
                            const int64_t *rw, const int64_t *cw, cover_ws *ws,
                            uint8_t *rcov, uint8_t *ccov, int64_t *weight, int64_t *flow);

/* The minimum vertex cover (fewest vertices) of least secondary weight
 * Σ rh[i] over its rows + Σ ch[j] over its columns, given a maximum matching
 * (rmatch, cmatch) of the graph. Weights >= 0 and small: 4 (nr + 1) Σ weights
 * must fit in int64 (else SHIRO_ERR_ARG). Exactly the cover cover_weighted
 * gives with weights W + rh, W + ch (any W > Σ rh + Σ ch), at a fraction of
 * the cost: the vertices every minimum cover takes or leaves are found by two
 * alternating searches (Dulmage–Mendelsohn), a pair of the matching free to
 * take either end with no edge to another such pair takes its lighter end,
 * and max-flow runs only on the pairs left. Writes the cover, its secondary
 * weight *weight and the lower bound *bound the matching and the flow prove
 * (equal to *weight). (rmatch, cmatch) must be what cover_max_matching
 * returned for this graph, which it checked: here only that they mirror each
 * other, in range, is checked again (SHIRO_ERR_ARG), and that the matching is
 * maximum, by the alternating search itself (SHIRO_ERR_ARG). */
shiro_status cover_lex(int32_t nr, int32_t nc, const int64_t *Gp, const int32_t *Gj, const int64_t *rh,
                       const int64_t *ch, const int32_t *rmatch, const int32_t *cmatch, cover_ws *ws,
                       uint8_t *rcov, uint8_t *ccov, int64_t *weight, int64_t *bound);

/* cover_lex for a matching cover_max_matching has just returned for this
 * same graph, with its size: the mirror is not checked again (one pass over
 * the rows and columns fewer); a matching that is not maximum is still
 * refused (SHIRO_ERR_ARG). */
shiro_status cover_lex_matched(int32_t nr, int32_t nc, const int64_t *Gp, const int32_t *Gj, const int64_t *rh,
                               const int64_t *ch, const int32_t *rmatch, const int32_t *cmatch, int64_t size,
                               cover_ws *ws, uint8_t *rcov, uint8_t *ccov, int64_t *weight, int64_t *bound);

#endif
