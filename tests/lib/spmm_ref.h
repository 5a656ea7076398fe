/* spmm_ref.h — serial references for the replay tests: C = A·B and X = Aᵀ·Y on this
 * rank's rows, compared within the worst-case rounding bound of each sum.
 *
 * B and Y are deterministic functions of (global row, column) that every rank
 * computes alike (ref_b_value, ref_y_value). A's values come from a callback
 * (ref_a_value: the file's value, or a test's own function of (i, j)); A's and
 * B's/Y's values are rounded to the replay's type before the products, as the
 * runtime holds them. An entry passes when |got − ref| ≤ (terms + 3) · u ·
 * Σ|a·b| (u the type's unit roundoff), i.e. the ratio returned is ≤ 1. */
#ifndef SHIRO_TESTS_SPMM_REF_H
#define SHIRO_TESTS_SPMM_REF_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "csr.h"
#include "shiro.h"

/* The value of A(i, j) the replay multiplies by; v is the file's value. */
typedef double (*ref_a_value)(int64_t i, int64_t j, double v, const void *arg);

static inline double ref_b_value(int64_t g, int64_t c) { return (double)((g * 5 + c) % 9) - 4.0; }
static inline double ref_y_value(int64_t g, int64_t c) {
  return (double)((g * 7 + c * 3) % 11) - 5.0 + 0.25 * (double)(c % 3);
}

/* Element i of a float or double array, as a double / stored in the array's type. */
static inline double ref_get(const void *a, int64_t i, shiro_dtype dt) {
  return dt == SHIRO_FLOAT32 ? (double)((const float *)a)[i] : ((const double *)a)[i];
}
static inline void ref_put(void *a, int64_t i, shiro_dtype dt, double v) {
  if (dt == SHIRO_FLOAT32) ((float *)a)[i] = (float)v;
  else ((double *)a)[i] = v;
}
/* x rounded to the type. */
static inline double ref_round(double x, shiro_dtype dt) { return dt == SHIRO_FLOAT32 ? (double)(float)x : x; }

/* A's entry t of row i as the replay multiplies it. */
static inline double ref_a(const sc_csr *A, int64_t i, int64_t t, ref_a_value av, const void *arg, shiro_dtype dt) {
  return ref_round(av ? av(i, A->Aj[t], A->Ax[t], arg) : A->Ax[t], dt);
}

/* Worst |C − A·B| / bound over this rank's C rows (in->c_global), C c_rows × n. */
static inline double ref_worst_c(const sc_csr *A, const shiro_plan_info *in, ref_a_value av, const void *arg,
                                 shiro_dtype dt, int64_t n, const void *C) {
  const double u = dt == SHIRO_FLOAT32 ? ldexp(1.0, -24) : ldexp(1.0, -53);
  double worst = 0;
  for (int64_t l = 0; l < in->c_rows; l++) {
    const int64_t g = in->c_global[l];
    for (int64_t c = 0; c < n; c++) {
      double ref = 0, bound = 0;
      for (int64_t t = A->Ap[g]; t < A->Ap[g + 1]; t++) {
        const double p = ref_a(A, g, t, av, arg, dt) * ref_round(ref_b_value(A->Aj[t], c), dt);
        ref += p;
        bound += fabs(p);
      }
      const double tol = (double)(A->Ap[g + 1] - A->Ap[g] + 3) * u * bound * 1.01 + 1e-300;
      const double e = fabs(ref_get(C, l * n + c, dt) - ref) / tol;
      if (!(e <= worst)) worst = e;
    }
  }
  return worst;
}

/* Worst |X − Aᵀ·Y| / bound over this rank's X rows (in->b_global), X b_rows × n; Y's row i is
 * ref_y_value(i, ·) for every global row i of A. INFINITY when out of memory. */
static inline double ref_worst_x(const sc_csr *A, const shiro_plan_info *in, ref_a_value av, const void *arg,
                                 shiro_dtype dt, int64_t n, const void *X) {
  const double u = dt == SHIRO_FLOAT32 ? ldexp(1.0, -24) : ldexp(1.0, -53);
  double *ref = calloc((size_t)(A->k * n + 1), sizeof *ref), *bound = calloc((size_t)(A->k * n + 1), sizeof *bound);
  int64_t *terms = calloc((size_t)A->k + 1, sizeof *terms);
  double worst = 0;
  if (!ref || !bound || !terms) {
    free(ref);
    free(bound);
    free(terms);
    return INFINITY;
  }
  for (int64_t i = 0; i < A->m; i++)
    for (int64_t t = A->Ap[i]; t < A->Ap[i + 1]; t++) {
      const int64_t j = A->Aj[t];
      const double a = ref_a(A, i, t, av, arg, dt);
      terms[j]++;
      for (int64_t c = 0; c < n; c++) {
        const double p = a * ref_round(ref_y_value(i, c), dt);
        ref[j * n + c] += p;
        bound[j * n + c] += fabs(p);
      }
    }
  for (int64_t l = 0; l < in->b_rows; l++) {
    const int64_t j = in->b_global[l];
    for (int64_t c = 0; c < n; c++) {
      const double tol = (double)(terms[j] + 3) * u * bound[j * n + c] * 1.01 + 1e-300;
      const double e = fabs(ref_get(X, l * n + c, dt) - ref[j * n + c]) / tol;
      if (!(e <= worst)) worst = e;
    }
  }
  free(ref);
  free(bound);
  free(terms);
  return worst;
}

#endif
