/* permute.h — symmetric permutations (the metis partition plans a permuted matrix). */
#ifndef SHIRO_PERMUTE_H
#define SHIRO_PERMUTE_H

#include <stdint.h>

#include "csr.h"
#include "shiro_status.h"

/* *out = P·A·Pᵀ for square A: entry (i, j) moves to (newof[i], newof[j]). */
shiro_status sc_csr_permute(const sc_csr *A, const int64_t *newof, sc_csr **out, shiro_error *err);

/* *out = A with its rows and columns renumbered: entry (i, j) moves to (rnew[i], cnew[j]); a NULL
 * permutation keeps its ids (any shape). */
shiro_status sc_csr_permute2(const sc_csr *A, const int64_t *rnew, const int64_t *cnew, sc_csr **out, shiro_error *err);

/* oldof[newof[i]] = i (malloc'ed), or NULL when out of memory. */
int64_t *sc_inverse_permutation(const int64_t *newof, int64_t n);

#endif
