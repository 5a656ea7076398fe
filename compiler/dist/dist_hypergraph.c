/* dist_hypergraph.c — the `hypergraph` partition: Zoltan's PHG on the column-net model of A, over
 * the processes' stripes (several processes) or the whole matrix (one, MPI_COMM_SELF).
 *
 * Why Zoltan's PHG: it is the packaged parallel hypergraph partitioner (Debian
 * libtrilinos-zoltan-dev), and the column-net model is exactly the column-based scheme's volume,
 * where METIS's graph of A + Aᵀ counts an unsymmetric A's edges in both directions and cannot take
 * a rectangular A at all. The hypergraph is given vertex by vertex (ZOLTAN_COMPRESSED_VERTEX): a
 * row's pins are its columns, so each process hands Zoltan its stripe as it is, and Zoltan moves
 * what it needs. Settings: the connectivity objective, 3% imbalance (METIS k-way's), every net
 * kept however large (PHG_EDGE_SIZE_THRESHOLD 1: the default drops nets wider than a quarter of
 * the rows, which on power-law graphs are the hub columns whose copies the scheme pays for), no
 * remapping of the parts, no output (DEBUG_LEVEL 0). Zoltan's random numbers start from a fixed
 * seed at each Zoltan_Create, so the same P gives the same labels. Only this file includes a
 * Zoltan header. */
#include <stdlib.h>
#include <string.h>

#include "csr.h"
#include "dist_hypergraph.h"
#include "error.h"
#include "shiro_config.h"

#if !SHIRO_HAVE_ZOLTAN
shiro_status dist_part_hypergraph(const dist_comm *c, const dist_matrix *M, int32_t parts, int32_t *labels,
                                  shiro_error *err) {
  (void)M;
  (void)parts;
  (void)labels;
  return dist_agree(c,
                    shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "--partition hypergraph: this shiro was built without "
                                                           "Zoltan (install libtrilinos-zoltan-dev)"),
                    err);
}
#else
#include <limits.h>
#include <stdio.h>

#include <zoltan.h>

/* What the query functions read: this process's rows lo .. lo+n-1 (A's rows 0 .. n-1). */
typedef struct hg_data {
  const sc_csr *A;
  int64_t lo, n;
  int self; /* 1: square A, row i is a pin of net i */
  int64_t pins; /* this process's pins */
} hg_data;

/* 1 if row i (of A's rows, global id g) has no entry in column g: the self pin is added. */
static int needs_self(const hg_data *d, int64_t i) {
  if (!d->self) return 0;
  const int32_t *a = d->A->Aj + d->A->Ap[i];
  int64_t l = 0, h = d->A->Ap[i + 1] - d->A->Ap[i];
  const int64_t g = d->lo + i;
  while (l < h) { /* columns increase within a row */
    const int64_t mid = (l + h) / 2;
    if (a[mid] < g) l = mid + 1;
    else h = mid;
  }
  return !(l < d->A->Ap[i + 1] - d->A->Ap[i] && a[l] == g);
}

static int q_num_obj(void *data, int *ierr) {
  *ierr = ZOLTAN_OK;
  return (int)((const hg_data *)data)->n;
}

static void q_obj_list(void *data, int ngid, int nlid, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids, int wdim, float *w,
                       int *ierr) {
  const hg_data *d = data;
  (void)ngid;
  (void)nlid;
  for (int64_t i = 0; i < d->n; i++) {
    gids[i] = (ZOLTAN_ID_TYPE)(d->lo + i);
    lids[i] = (ZOLTAN_ID_TYPE)i;
    if (wdim == 1) w[i] = (float)(d->A->Ap[i + 1] - d->A->Ap[i] + 1);
  }
  *ierr = ZOLTAN_OK;
}

static void q_hg_size(void *data, int *lists, int *pins, int *format, int *ierr) {
  const hg_data *d = data;
  *lists = (int)d->n;
  *pins = (int)d->pins;
  *format = ZOLTAN_COMPRESSED_VERTEX;
  *ierr = ZOLTAN_OK;
}

static void q_hg_cs(void *data, int ngid, int nlists, int npins, int format, ZOLTAN_ID_PTR vtx, int *ptr,
                    ZOLTAN_ID_PTR pin, int *ierr) {
  const hg_data *d = data;
  (void)ngid;
  *ierr = nlists != d->n || npins != d->pins || format != ZOLTAN_COMPRESSED_VERTEX ? ZOLTAN_FATAL : ZOLTAN_OK;
  if (*ierr != ZOLTAN_OK) return;
  int64_t t = 0;
  for (int64_t i = 0; i < d->n; i++) {
    const int64_t g = d->lo + i;
    int self = needs_self(d, i);
    vtx[i] = (ZOLTAN_ID_TYPE)g;
    ptr[i] = (int)t;
    for (int64_t p = d->A->Ap[i]; p < d->A->Ap[i + 1]; p++) {
      if (self && d->A->Aj[p] > g) { /* the self pin in column order */
        pin[t++] = (ZOLTAN_ID_TYPE)g;
        self = 0;
      }
      pin[t++] = (ZOLTAN_ID_TYPE)d->A->Aj[p];
    }
    if (self) pin[t++] = (ZOLTAN_ID_TYPE)g;
  }
}

/* Zoltan's PHG on this process's rows: mine[i] the part of row lo + i. Collective over comm;
 * the outcome is this process's (the caller agrees). */
static shiro_status phg(MPI_Comm comm, hg_data *d, int32_t parts, int32_t *mine, shiro_error *err) {
  float ver;
  if (Zoltan_Initialize(0, NULL, &ver) != ZOLTAN_OK)
    return shiro_fail(err, SHIRO_ERR_INTERNAL, "--partition hypergraph: Zoltan_Initialize failed");
  struct Zoltan_Struct *zz = Zoltan_Create(comm);
  if (!zz) return shiro_fail(err, SHIRO_ERR_NOMEM, "--partition hypergraph: Zoltan_Create failed");
  char nparts[16];
  snprintf(nparts, sizeof nparts, "%d", (int)parts);
  static const char *const set[][2] = {
      {"DEBUG_LEVEL", "0"}, {"LB_METHOD", "HYPERGRAPH"}, {"HYPERGRAPH_PACKAGE", "PHG"}, {"LB_APPROACH", "PARTITION"}, {"NUM_GID_ENTRIES", "1"}, {"NUM_LID_ENTRIES", "1"}, {"RETURN_LISTS", "PARTS"}, {"OBJ_WEIGHT_DIM", "1"}, {"EDGE_WEIGHT_DIM", "0"}, {"IMBALANCE_TOL", "1.03"}, {"PHG_CUT_OBJECTIVE", "CONNECTIVITY"}, {"PHG_EDGE_SIZE_THRESHOLD", "1.0"}, {"REMAP", "0"}, {"CHECK_HYPERGRAPH", "0"}};
  int ok = Zoltan_Set_Param(zz, "NUM_GLOBAL_PARTS", nparts) == ZOLTAN_OK;
  for (size_t i = 0; ok && i < sizeof set / sizeof *set; i++) ok = Zoltan_Set_Param(zz, set[i][0], set[i][1]) == ZOLTAN_OK;
  ok = ok && Zoltan_Set_Num_Obj_Fn(zz, q_num_obj, d) == ZOLTAN_OK && Zoltan_Set_Obj_List_Fn(zz, q_obj_list, d) == ZOLTAN_OK &&
      Zoltan_Set_HG_Size_CS_Fn(zz, q_hg_size, d) == ZOLTAN_OK && Zoltan_Set_HG_CS_Fn(zz, q_hg_cs, d) == ZOLTAN_OK;
  if (!ok) {
    Zoltan_Destroy(&zz);
    return shiro_fail(err, SHIRO_ERR_INTERNAL, "--partition hypergraph: Zoltan refused a parameter");
  }
  int changes, ngid, nlid, nimp, nexp, *iproc = NULL, *ipart = NULL, *eproc = NULL, *epart = NULL;
  ZOLTAN_ID_PTR igid = NULL, ilid = NULL, egid = NULL, elid = NULL;
  shiro_status st = SHIRO_OK;
  if (Zoltan_LB_Partition(zz, &changes, &ngid, &nlid, &nimp, &igid, &ilid, &iproc, &ipart, &nexp, &egid, &elid, &eproc,
                          &epart) != ZOLTAN_OK)
    st = shiro_fail(err, SHIRO_ERR_INTERNAL, "--partition hypergraph: Zoltan's PHG failed");
  else if (nexp != d->n)
    st = shiro_fail(err, SHIRO_ERR_INTERNAL, "--partition hypergraph: Zoltan returned %d of %lld rows' parts", nexp,
                    (long long)d->n);
  for (int e = 0; st == SHIRO_OK && e < nexp; e++) {
    const ZOLTAN_ID_TYPE i = elid[e];
    if (i >= (ZOLTAN_ID_TYPE)d->n || epart[e] < 0 || epart[e] >= parts)
      st = shiro_fail(err, SHIRO_ERR_INTERNAL, "--partition hypergraph: Zoltan gave row %lld part %d of %d",
                      (long long)(d->lo + (int64_t)i), epart[e], (int)parts);
    else
      mine[i] = epart[e];
  }
  Zoltan_LB_Free_Part(&igid, &ilid, &iproc, &ipart);
  Zoltan_LB_Free_Part(&egid, &elid, &eproc, &epart);
  Zoltan_Destroy(&zz);
  return st;
}

/* The query data of rows lo .. lo+n-1 held as A's rows 0 .. n-1 (square: the self pins). */
static shiro_status hg_setup(const sc_csr *A, int64_t lo, int64_t n, int square, hg_data *d, shiro_error *err) {
  *d = (hg_data){.A = A, .lo = lo, .n = n, .self = square};
  for (int64_t i = 0; i < n; i++) d->pins += A->Ap[i + 1] - A->Ap[i] + needs_self(d, i);
  if (n > INT_MAX || d->pins > INT_MAX)
    return shiro_fail(err, SHIRO_ERR_UNSUPPORTED,
                      "--partition hypergraph: %lld rows with %lld pins on one process; Zoltan takes at most %d "
                      "(plan with more processes)",
                      (long long)n, (long long)d->pins, INT_MAX);
  return SHIRO_OK;
}

shiro_status dist_part_hypergraph(const dist_comm *c, const dist_matrix *M, int32_t parts, int32_t *labels,
                                  shiro_error *err) {
  const int P = c->size;
  shiro_status st = parts < 1 ? shiro_fail(err, SHIRO_ERR_ARG, "--partition hypergraph: %d parts", (int)parts) : SHIRO_OK;
  st = dist_agree(c, st, err);
  if (st != SHIRO_OK) return st;
  if (parts == 1 || M->m <= parts) { /* as serial metis: no call, one part, or one row per part */
    for (int64_t i = 0; i < M->m; i++) labels[i] = parts == 1 ? 0 : (int32_t)i;
    return SHIRO_OK;
  }
  const int64_t n = M->hi - M->lo;
  int *cnt = malloc((size_t)P * 2 * sizeof *cnt), *dsp = cnt ? cnt + P : NULL;
  int64_t *first = malloc(((size_t)P + 1) * sizeof *first);
  int32_t *mine = malloc(((size_t)n + 1) * sizeof *mine);
  hg_data d;
  st = cnt && first && mine ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "--partition hypergraph: out of memory");
  if (st == SHIRO_OK && M->A->m != n)
    st = shiro_fail(err, SHIRO_ERR_INTERNAL, "--partition hypergraph: the stripe holds %lld rows, not %lld",
                    (long long)M->A->m, (long long)n);
  if (st == SHIRO_OK) st = hg_setup(M->A, M->lo, n, M->m == M->k, &d, err);
  st = dist_agree(c, st, err);
  /* the labels land in row order: the stripes, in process order */
  if (st == SHIRO_OK) st = dist_stripes(c, M, "--partition hypergraph", first, cnt, dsp, err);
  if (st == SHIRO_OK) st = dist_agree(c, phg(c->comm, &d, parts, mine, err), err);
  if (st == SHIRO_OK && MPI_Allgatherv(mine, (int)n, MPI_INT32_T, labels, cnt, dsp, MPI_INT32_T, c->comm) != MPI_SUCCESS)
    st = dist_agree(c, shiro_fail(err, SHIRO_ERR_MPI, "--partition hypergraph: MPI_Allgatherv of the labels failed"), err);
  free(first);
  free(cnt);
  free(mine);
  return st;
}
#endif

shiro_status dist_part_hypergraph_local(const sc_csr *A, int32_t parts, int32_t *labels, shiro_error *err) {
  int up = 0;
  if (MPI_Initialized(&up) != MPI_SUCCESS || !up)
    return shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "--partition hypergraph needs MPI initialized (Zoltan): plan with "
                                                  "shiro-plan");
  const dist_comm c = {.comm = MPI_COMM_SELF, .rank = 0, .size = 1};
  const dist_matrix M = {.m = A->m, .k = A->k, .nnz = A->nnz, .lo = 0, .hi = A->m, .A = (sc_csr *)A};
  return dist_part_hypergraph(&c, &M, parts, labels, err);
}
