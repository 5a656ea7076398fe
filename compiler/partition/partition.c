/* partition.c — contiguous row partitions. */
#include <stdlib.h>
#include <string.h>

#include "csr.h"
#include "error.h"
#include "partition.h"

shiro_status part_block(int64_t n, int32_t parts, sc_partition *out, shiro_error *err) {
  if (n < 0 || parts < 1) return shiro_fail(err, SHIRO_ERR_ARG, "partition: %lld rows over %d parts", (long long)n, parts);
  int64_t *first = malloc(((size_t)parts + 1) * sizeof *first);
  if (!first) return shiro_fail(err, SHIRO_ERR_NOMEM, "partition: out of memory");
  for (int32_t p = 0; p <= parts; p++) /* 128-bit product: p·n can pass 2^63 */
    first[p] = (int64_t)(((__int128)p * n) / parts);
  out->parts = parts;
  out->n = n;
  out->first = first;
  return SHIRO_OK;
}

int32_t part_owner(const sc_partition *P, int64_t i) {
  int32_t lo = 0, hi = P->parts - 1; /* find the last p with first[p] <= i and a non-empty range */
  while (lo < hi) {
    int32_t mid = lo + (hi - lo + 1) / 2;
    if (P->first[mid] <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

void part_owner_table(const sc_partition *P, int32_t *owner) {
  for (int32_t p = 0; p < P->parts; p++)
    for (int64_t i = P->first[p]; i < P->first[p + 1]; i++) owner[i] = p;
}

shiro_status part_owner_index(const sc_partition *P, sc_owner_index *ix, shiro_error *err) {
  int shift = 0;
  while (shift < 62 && (P->n >> shift) > 4 * (int64_t)P->parts) shift++;
  int64_t nb = (P->n >> shift) + 1;
  ix->first = P->first;
  ix->shift = shift;
  ix->bucket = malloc((size_t)nb * sizeof *ix->bucket);
  if (!ix->bucket) return shiro_fail(err, SHIRO_ERR_NOMEM, "partition: out of memory");
  int32_t q = 0;
  for (int64_t b = 0; b < nb; b++) { /* the last part whose start is at or before row b << shift */
    int64_t i = b << shift;
    while (q + 1 < P->parts && P->first[q + 1] <= i) q++;
    ix->bucket[b] = q;
  }
  return SHIRO_OK;
}

void part_owner_index_free(sc_owner_index *ix) {
  if (!ix) return;
  free(ix->bucket);
  ix->bucket = NULL;
}

void part_free(sc_partition *P) {
  if (!P) return;
  free(P->first);
  P->first = NULL;
}

shiro_status part_copy(const sc_partition *in, sc_partition *out, shiro_error *err) {
  int64_t *first = malloc(((size_t)in->parts + 1) * sizeof *first);
  if (!first) return shiro_fail(err, SHIRO_ERR_NOMEM, "partition: out of memory");
  memcpy(first, in->first, ((size_t)in->parts + 1) * sizeof *first);
  *out = *in;
  out->first = first;
  return SHIRO_OK;
}

/* Starts of `parts` parts of A's rows: first[0] = 0, first[parts] = A->m, the others filled by the
 * caller (SHIRO_ERR_NOMEM: NULL). */
static int64_t *new_starts(const sc_csr *A, int32_t parts) {
  int64_t *first = malloc(((size_t)parts + 1) * sizeof *first);
  if (first) {
    first[0] = 0;
    first[parts] = A->m;
  }
  return first;
}

static shiro_status set_partition(sc_partition *out, int32_t parts, int64_t n, int64_t *first) {
  out->parts = parts;
  out->n = n;
  out->first = first;
  return SHIRO_OK;
}

shiro_status part_nnz(const sc_csr *A, int32_t parts, sc_partition *out, shiro_error *err) {
  if (parts < 1) return shiro_fail(err, SHIRO_ERR_ARG, "partition: %d parts", parts);
  int64_t *first = new_starts(A, parts);
  if (!first) return shiro_fail(err, SHIRO_ERR_NOMEM, "partition: out of memory");
  int64_t i = 0;
  for (int32_t p = 1; p < parts; p++) {
    int64_t target = (int64_t)(((__int128)p * A->nnz + parts - 1) / parts);
    while (i < A->m && A->Ap[i] < target) i++; /* first row whose prefix reaches the target */
    first[p] = i;
  }
  return set_partition(out, parts, A->m, first);
}

shiro_status part_scaled(const sc_csr *A, const sc_partition *P, const double *scale, sc_partition *out,
                         shiro_error *err) {
  const int32_t parts = P->parts;
  if (P->n != A->m) return shiro_fail(err, SHIRO_ERR_ARG, "partition: %lld rows against %lld", (long long)P->n, (long long)A->m);
  int64_t *first = new_starts(A, parts);
  if (!first) return shiro_fail(err, SHIRO_ERR_NOMEM, "partition: out of memory");
  double total = 0;
  for (int32_t p = 0; p < parts; p++) total += scale[p] * (double)(A->Ap[P->first[p + 1]] - A->Ap[P->first[p]]);
  double sum = 0; /* weight of rows [0, i) */
  int64_t i = 0;
  int32_t owner = 0;
  for (int32_t p = 1; p < parts; p++) {
    const double target = total * p / parts;
    while (i < A->m) {
      while (P->first[owner + 1] <= i) owner++;
      const double w = scale[owner] * (double)(A->Ap[i + 1] - A->Ap[i]);
      if (sum + 0.5 * w >= target) break; /* row i goes to the part whose share its middle falls in */
      sum += w;
      i++;
    }
    first[p] = i;
  }
  return set_partition(out, parts, A->m, first);
}
