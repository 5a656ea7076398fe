/* gen_h5.c — R-MAT as an HDF5 CSR file: the edges are made in parallel
 * into a row array (Ti) and straight into /indices' slots' source (Tj),
 * rows counted, a prefix sum gives /indptr, and one sequential pass in edge
 * order moves each column to its row, so that each row keeps its edges in
 * generation order whatever the number of threads. Memory: 8 bytes a row
 * and 12 an edge (4 for the rows, 4 for the columns, 4 for /indices) below
 * 2^31 vertices; above, the edges are made twice instead (8 + 8 a row and
 * edge). */
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
  hid_t dc = H5Pcreate(H5P_DATASET_CREATE);
  if (dc >= 0) H5Pset_obj_track_times(dc, 0); /* no creation time: the same spec gives the same bytes */
  hid_t d = sp >= 0 && dc >= 0 ? H5Dcreate2(f, name, t, sp, H5P_DEFAULT, dc, H5P_DEFAULT) : -1;
  if (dc >= 0) H5Pclose(dc);
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
  int32_t *Ti = NULL, *Tj = NULL; /* the edges, made in parallel, where they fit */
  if (!Ap || !next || !Aj || !tmp) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory for %lld edges", path, (long long)ne);
    goto done;
  }
  if (idx32 && (Ti = malloc((size_t)(ne ? ne : 1) * sizeof *Ti)) && (Tj = malloc((size_t)(ne ? ne : 1) * sizeof *Tj))) {
#pragma omp parallel for schedule(static) num_threads(T)
    for (int64_t e = 0; e < ne; e++) {
      int64_t i, j;
      gen_rmat_edge(g, e, &i, &j);
      Ti[e] = (int32_t)i;
      Tj[e] = (int32_t)j;
    }
    for (int64_t e = 0; e < ne; e++) Ap[Ti[e] + 1]++;
  } else { /* 64-bit ids, or no room for the edges: make them twice */
#pragma omp parallel for schedule(static) num_threads(T)
    for (int64_t e = 0; e < ne; e++) {
      int64_t i, j;
      gen_rmat_edge(g, e, &i, &j);
#pragma omp atomic
      Ap[i + 1]++;
    }
  }
  for (int64_t i = 0; i < m; i++) Ap[i + 1] += Ap[i];
  memcpy(next, Ap, (size_t)m * sizeof *next);
  for (int64_t e = 0; e < ne; e++) {
    int64_t i, j;
    if (Tj) {
      i = Ti[e], j = Tj[e];
    } else {
      gen_rmat_edge(g, e, &i, &j);
    }
    if (idx32) ((int32_t *)Aj)[next[i]++] = (int32_t)j;
    else ((int64_t *)Aj)[next[i]++] = j;
  }
  free(Ti);
  free(Tj);
  Ti = Tj = NULL;
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
  free(Ti);
  free(Tj);
  free(Ap);
  free(next);
  free(Aj);
  free(tmp);
  return st;
}
