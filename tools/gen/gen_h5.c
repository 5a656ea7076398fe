/* gen_h5.c — R-MAT as an HDF5 CSR file: one pass over the edges counts
 * each row (in parallel; atomic adds, so the order of threads does not
 * matter), a prefix sum gives /indptr, a second pass in edge order fills
 * /indices, so that each row keeps its edges in generation order. Memory:
 * 8 bytes a row and 4 (or 8) an edge. */
#include <hdf5.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "gen_h5.h"

/* Writes the 1-D dataset `name` of n elements of type t from buf into f. */
static int put(hid_t f, const char *name, hid_t t, int64_t n, const void *buf) {
  hsize_t dims[1] = {(hsize_t)n};
  hid_t sp = H5Screate_simple(1, dims, NULL);
  hid_t d = sp >= 0 ? H5Dcreate2(f, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
  int ok = d >= 0 && (n == 0 || H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
  if (d >= 0) ok &= H5Dclose(d) >= 0;
  if (sp >= 0) H5Sclose(sp);
  return ok;
}

/* Writes indptr, indices (32-bit if idx32) and the shape attribute to path. */
static int write_file(const char *path, int64_t m, int64_t ne, const int64_t *Ap, const void *Aj, int idx32) {
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) return 0;
  int64_t shape[2] = {m, m};
  hsize_t two[1] = {2};
  hid_t sp = H5Screate_simple(1, two, NULL);
  hid_t a = sp >= 0 ? H5Acreate2(f, "shape", H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT) : -1;
  int ok = a >= 0 && H5Awrite(a, H5T_NATIVE_INT64, shape) >= 0;
  if (a >= 0) H5Aclose(a);
  if (sp >= 0) H5Sclose(sp);
  ok = ok && put(f, "indptr", H5T_NATIVE_INT64, m + 1, Ap);
  ok = ok && put(f, "indices", idx32 ? H5T_NATIVE_INT32 : H5T_NATIVE_INT64, ne, Aj);
  return (H5Fclose(f) >= 0) && ok;
}

shiro_status gen_write_csr_h5(const gen_spec *g, const char *path, int threads, shiro_error *err) {
  int64_t m, k, ne;
  shiro_status st = gen_shape(g, &m, &k, &ne, err);
  if (st != SHIRO_OK) return st;
  if (g->kind != GEN_RMAT || g->real_values)
    return shiro_fail(err, SHIRO_ERR_ARG, "--format csr-h5: pattern R-MAT only (rmat without --field real)");
  int idx32 = m <= INT32_MAX, T = threads > 0 ? threads : omp_get_max_threads();
  size_t w = idx32 ? sizeof(int32_t) : sizeof(int64_t);
  int64_t *Ap = calloc((size_t)m + 1, sizeof *Ap), *next = malloc((size_t)m * sizeof *next);
  void *Aj = malloc((size_t)(ne ? ne : 1) * w);
  char *tmp = malloc(strlen(path) + 5);
  if (!Ap || !next || !Aj || !tmp) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory for %lld edges", path, (long long)ne);
    goto done;
  }
#pragma omp parallel for schedule(static) num_threads(T)
  for (int64_t e = 0; e < ne; e++) {
    int64_t i, j;
    gen_rmat_edge(g, e, &i, &j);
#pragma omp atomic
    Ap[i + 1]++;
  }
  for (int64_t i = 0; i < m; i++) Ap[i + 1] += Ap[i];
  memcpy(next, Ap, (size_t)m * sizeof *next);
  for (int64_t e = 0; e < ne; e++) {
    int64_t i, j;
    gen_rmat_edge(g, e, &i, &j);
    if (idx32) ((int32_t *)Aj)[next[i]++] = (int32_t)j;
    else ((int64_t *)Aj)[next[i]++] = j;
  }
  free(next);
  next = NULL;
  sprintf(tmp, "%s.tmp", path);
  H5E_auto2_t func = NULL;
  void *data = NULL;
  H5Eget_auto2(H5E_DEFAULT, &func, &data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  int ok = write_file(tmp, m, ne, Ap, Aj, idx32);
  H5Eset_auto2(H5E_DEFAULT, func, data);
  if (!ok || rename(tmp, path) != 0) {
    remove(tmp);
    st = shiro_fail(err, SHIRO_ERR_IO, "%s: write error (HDF5 file %s)", path, tmp);
  }
done:
  free(Ap);
  free(next);
  free(Aj);
  free(tmp);
  return st;
}
