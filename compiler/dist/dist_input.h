/* dist_input.h — the matrix in, spread over the distributed planner's processes: each reads a
 * stripe of rows, then holds the rows of its own ranks. */
#ifndef SHIRO_DIST_INPUT_H
#define SHIRO_DIST_INPUT_H

#include "csr.h"
#include "dist_comm.h"
#include "mm_read.h"

/* A matrix of m rows held in part: rows lo .. hi-1, whole, on this process. */
typedef struct dist_matrix {
  int64_t m, k, nnz; /* the whole matrix's */
  mm_header hdr; /* what the file said (field: pattern or values) */
  int64_t *gAp; /* [m+1] the whole matrix's row pointers, on every process (freed by dist_matrix_own) */
  int64_t g_lo; /* after dist_matrix_own: the whole matrix's position of row lo's first entry */
  int64_t lo, hi; /* the rows held */
  int32_t *dpos; /* after dist_matrix_own with the columns renumbered: [A->nnz] entry t's place in its
                    row in the file's column order minus its place here; NULL: the same places */
  sc_csr *A; /* after dist_matrix_own: an m-row matrix whose rows lo .. hi-1 are A's and the others
                empty (values compacted as one process keeps them: sc_csr_val); before: the
                stripe, hi-lo rows (row lo first) */
} dist_matrix;

/* Reads 1/P of the matrix at path (format "mtx" or "edgelist", plain: a byte range; "csr-h5": rows
 * by hyperslab; ro: the text reader's options) and keeps on process r of P the stripe of rows
 * m·r/P .. m·(r+1)/P - 1, bit for bit mm_read's or csr_h5_read's rows, with every row's length on
 * every process (gAp). Collective; errors agreed (dist_agree). */
shiro_status dist_matrix_read(const dist_comm *c, const char *path, const char *format, const mm_read_options *ro,
                              dist_matrix *M, shiro_error *err);

/* A renumbering of the rows (and, square, of the columns) that dist_matrix_own applies. */
typedef struct dist_renumber {
  const int64_t *newof, *oldof; /* [m] newof[old] = new id, oldof[new] = old id (inverse) */
  int columns; /* 1: the columns too (square A: B rows follow C rows), each row's entries sorted
                  anew (M->dpos); 0: the columns kept */
} dist_renumber;

/* Moves the rows so that this process holds rows lo .. hi-1 (each process its own range; the
 * ranges of the processes, in process order, cover 0 .. m-1 one after the other), as an m-row
 * matrix (M->A), one destination at a time (dist_exchange); then frees gAp (g_lo kept: the
 * entries of the rows before lo). rn (NULL: none): the rows are renumbered first, row i of the
 * file becoming row newof[i] (and its columns, rn->columns), so that g_lo counts the renumbered
 * rows' entries. Collective; errors agreed. */
shiro_status dist_matrix_own(const dist_comm *c, dist_matrix *M, int64_t lo, int64_t hi, const dist_renumber *rn,
                             shiro_error *err);

/* The stripes of dist_matrix_read (process q holds rows first[q] .. first[q+1]-1, in process
 * order), gathered from every process and checked to follow one another up to M->m: first[P + 1]
 * (first[P] = M->m) and, to gather one value per row with MPI, cnt[P] and dsp[P]. `what` heads
 * the messages (the caller's option). Collective; errors agreed. */
shiro_status dist_stripes(const dist_comm *c, const dist_matrix *M, const char *what, int64_t *first, int *cnt, int *dsp,
                          shiro_error *err);

/* Frees what M holds. */
void dist_matrix_free(dist_matrix *M);

#endif
