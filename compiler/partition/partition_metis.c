/* partition_metis.c — METIS k-way partitions of a square matrix's symmetrized pattern: flat
 * (edge cut or communication volume) or node-first (nodes, then each node's ranks). */
#include <stdlib.h>
#include <string.h>

#include "csr.h"
#include "error.h"
#include "partition.h"
#include "shiro_config.h"

#if !SHIRO_HAVE_METIS
shiro_status part_metis_opt(const sc_csr *A, int32_t parts, const part_metis_options *o, int64_t **newof,
                            sc_partition *out, shiro_error *err) {
  (void)A;
  (void)parts;
  (void)out;
  *newof = NULL;
  return shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "--partition %s: this shiro was built without METIS (install libmetis-dev)",
                    part_metis_name(o));
}
#else
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <metis.h>

/* Points the process's stdout at /dev/null and returns the saved descriptor (-1 if it could not).
 * METIS prints its complaints with printf (an empty bisection, too many parts for a part of the
 * graph) and still returns a partition; a tool's stdout may be JSON, so nothing of it may land there. */
static int stdout_mute(void) {
  fflush(stdout);
  const int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (saved >= 0 && null >= 0) dup2(null, STDOUT_FILENO);
  if (null >= 0) close(null);
  return saved;
}

/* Undoes stdout_mute: what METIS buffered is flushed to /dev/null first. */
static void stdout_restore(int saved) {
  fflush(stdout);
  if (saved < 0) return;
  dup2(saved, STDOUT_FILENO);
  close(saved);
}

/* The graph of A + Aᵀ without the diagonal, in METIS's 32-bit CSR. */
static shiro_status sym_graph(const sc_csr *A, idx_t **xadj, idx_t **adj, shiro_error *err) {
  int64_t n = 0;
  for (int64_t i = 0; i < A->m; i++)
    for (int64_t t = A->Ap[i]; t < A->Ap[i + 1]; t++) n += A->Aj[t] != i;
  int64_t *Ti = malloc((size_t)(n ? n : 1) * sizeof *Ti), *Tj = malloc((size_t)(n ? n : 1) * sizeof *Tj);
  sc_csr *S = NULL;
  shiro_status st = (Ti && Tj) ? SHIRO_OK : SHIRO_ERR_NOMEM;
  n = 0;
  for (int64_t i = 0; st == SHIRO_OK && i < A->m; i++)
    for (int64_t t = A->Ap[i]; t < A->Ap[i + 1]; t++)
      if (A->Aj[t] != i) {
        Ti[n] = i;
        Tj[n] = A->Aj[t];
        n++;
      }
  if (st == SHIRO_OK) st = sc_csr_from_coo(A->m, A->m, n, Ti, Tj, NULL, SC_COO_SYMMETRIC, &S, err);
  free(Ti);
  free(Tj);
  if (st != SHIRO_OK) return st == SHIRO_ERR_NOMEM ? shiro_fail(err, st, "metis: out of memory") : st;
  if (S->nnz > INT32_MAX) {
    sc_csr_free(S);
    return shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "metis: the symmetrized graph has %lld edges; this METIS has 32-bit indices",
                      (long long)S->nnz);
  }
  *xadj = malloc(((size_t)A->m + 1) * sizeof **xadj);
  *adj = malloc((size_t)(S->nnz ? S->nnz : 1) * sizeof **adj);
  if (!*xadj || !*adj) {
    sc_csr_free(S);
    return shiro_fail(err, SHIRO_ERR_NOMEM, "metis: out of memory");
  }
  for (int64_t i = 0; i <= A->m; i++) (*xadj)[i] = (idx_t)S->Ap[i];
  for (int64_t t = 0; t < S->nnz; t++) (*adj)[t] = (idx_t)S->Aj[t];
  sc_csr_free(S);
  return SHIRO_OK;
}

/* METIS k-way of the graph (xadj, adj, vwgt) of nv vertices into np parts, into part[];
 * one vertex per part where there are no more vertices than parts (METIS refuses, and prints). */
static shiro_status kway(idx_t nv, idx_t *xadj, idx_t *adj, idx_t *vwgt, idx_t np, int vol, idx_t *part,
                         shiro_error *err) {
  if (np <= 1 || nv <= np) {
    for (idx_t i = 0; i < nv; i++) part[i] = np <= 1 ? 0 : i;
    return SHIRO_OK;
  }
  idx_t ncon = 1, objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1; /* fixed seed: the same partition every run */
  options[METIS_OPTION_NUMBERING] = 0;
  if (vol) options[METIS_OPTION_OBJTYPE] = METIS_OBJTYPE_VOL;
  const int rc = METIS_PartGraphKway(&nv, &ncon, xadj, adj, vwgt, NULL, NULL, &np, NULL, NULL, options, &objval, part);
  return rc == METIS_OK ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_INTERNAL, "metis: METIS_PartGraphKway failed (%d)", rc);
}

/* Node-first: part[] holds each vertex's node (0..nodes-1); each node's induced subgraph is
 * split by kway into gpn parts, and part[i] becomes node * gpn + its part there. */
static shiro_status split_nodes(idx_t nv, const idx_t *xadj, const idx_t *adj, const idx_t *vwgt, int32_t nodes,
                                int32_t gpn, int vol, idx_t *part, shiro_error *err) {
  idx_t *loc = malloc(((size_t)nv + 1) * sizeof *loc), *order = malloc(((size_t)nv + 1) * sizeof *order);
  idx_t *start = calloc((size_t)nodes + 1, sizeof *start), *sx = malloc(((size_t)nv + 1) * sizeof *sx);
  idx_t *sa = malloc(((size_t)xadj[nv] + 1) * sizeof *sa), *sw = malloc(((size_t)nv + 1) * sizeof *sw);
  idx_t *sp = malloc(((size_t)nv + 1) * sizeof *sp);
  shiro_status st = loc && order && start && sx && sa && sw && sp ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "metis: out of memory");
  if (st == SHIRO_OK) {
    for (idx_t i = 0; i < nv; i++) start[part[i] + 1]++;
    for (int32_t q = 0; q < nodes; q++) start[q + 1] += start[q];
    for (idx_t i = 0; i < nv; i++) order[start[part[i]]++] = i; /* each node's vertices, in increasing id */
    for (int32_t q = nodes; q > 0; q--) start[q] = start[q - 1];
    start[0] = 0;
    for (int32_t q = 0; q < nodes; q++)
      for (idx_t t = start[q]; t < start[q + 1]; t++) loc[order[t]] = t - start[q]; /* the place within its node */
  }
  for (int32_t q = 0; st == SHIRO_OK && q < nodes; q++) {
    const idx_t n = start[q + 1] - start[q];
    idx_t e = 0;
    sx[0] = 0;
    for (idx_t t = 0; t < n; t++) {
      const idx_t i = order[start[q] + t];
      for (idx_t u = xadj[i]; u < xadj[i + 1]; u++)
        if (part[adj[u]] == q) sa[e++] = loc[adj[u]];
      sx[t + 1] = e;
      sw[t] = vwgt[i];
    }
    st = kway(n, sx, sa, sw, gpn, vol, sp, err);
    for (idx_t t = 0; st == SHIRO_OK && t < n; t++) loc[order[start[q] + t]] = q * gpn + sp[t]; /* the new label, kept aside */
  }
  if (st == SHIRO_OK)
    for (idx_t i = 0; i < nv; i++) part[i] = loc[i];
  free(loc);
  free(order);
  free(start);
  free(sx);
  free(sa);
  free(sw);
  free(sp);
  return st;
}

shiro_status part_metis_opt(const sc_csr *A, int32_t parts, const part_metis_options *o, int64_t **newof,
                            sc_partition *out, shiro_error *err) {
  *newof = NULL;
  if (A->m != A->k) return shiro_fail(err, SHIRO_ERR_ARG, "--partition %s needs a square matrix (this one is %lld x %lld)",
                                      part_metis_name(o), (long long)A->m, (long long)A->k);
  if (A->m > INT32_MAX) return shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "metis: more than 2^31-1 rows");
  idx_t *xadj = NULL, *adj = NULL, *vwgt = NULL, *part = NULL;
  int64_t *first = NULL, *map = NULL;
  shiro_status st = sym_graph(A, &xadj, &adj, err);
  if (st != SHIRO_OK) goto done;
  vwgt = malloc(((size_t)A->m + 1) * sizeof *vwgt);
  part = calloc((size_t)A->m + 1, sizeof *part);
  first = calloc((size_t)parts + 1, sizeof *first);
  map = malloc(((size_t)A->m + 1) * sizeof *map);
  if (!vwgt || !part || !first || !map) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "metis: out of memory");
    goto done;
  }
  for (int64_t i = 0; i < A->m; i++) vwgt[i] = (idx_t)(A->Ap[i + 1] - A->Ap[i] + 1 > INT32_MAX / parts ? INT32_MAX / parts : A->Ap[i + 1] - A->Ap[i] + 1);
  const int32_t gpn = o && o->node_first && o->gpn > 1 && parts % o->gpn == 0 && parts > o->gpn ? o->gpn : 1;
  const int vol = o && o->volume;
  const int saved = stdout_mute();
  st = kway((idx_t)A->m, xadj, adj, vwgt, (idx_t)(parts / gpn), vol, part, err);
  if (st == SHIRO_OK && gpn > 1) st = split_nodes((idx_t)A->m, xadj, adj, vwgt, parts / gpn, gpn, vol, part, err);
  stdout_restore(saved);
  if (st != SHIRO_OK) goto done;
  for (int64_t i = 0; i < A->m; i++) first[part[i] + 1]++;
  for (int32_t p = 0; p < parts; p++) first[p + 1] += first[p];
  int64_t *next = malloc(((size_t)parts + 1) * sizeof *next);
  if (!next) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "metis: out of memory");
    goto done;
  }
  memcpy(next, first, ((size_t)parts + 1) * sizeof *next);
  for (int64_t i = 0; i < A->m; i++) map[i] = next[part[i]]++; /* stable: increasing old id within a part */
  free(next);
  out->parts = parts;
  out->n = A->m;
  out->first = first;
  first = NULL;
  *newof = map;
  map = NULL;
done:
  free(xadj);
  free(adj);
  free(vwgt);
  free(part);
  free(first);
  free(map);
  return st;
}
#endif

const char *part_metis_name(const part_metis_options *o) {
  return !o ? "metis" : o->node_first ? "metis-node"
      : o->volume                     ? "metis-vol"
                                      : "metis";
}

shiro_status part_metis(const sc_csr *A, int32_t parts, int64_t **newof, sc_partition *out, shiro_error *err) {
  return part_metis_opt(A, parts, NULL, newof, out, err);
}
