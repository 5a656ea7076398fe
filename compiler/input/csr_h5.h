/* csr_h5.h — a CSR matrix stored in HDF5, the layout of scipy.sparse's
 * csr_matrix (what PyG, DGL and SNAP users write with a few lines of h5py):
 *
 *   /indptr    integer [m + 1]: indptr[0] = 0, nondecreasing, indptr[m] = nnz
 *   /indices   integer [nnz]: column of each entry, 0-based, in [0, k)
 *   /data      optional, real or integer [nnz]: the values, finite; absent:
 *              a pattern matrix (every value 1.0)
 *   attribute "shape" of the root group, optional, two integers (m, k); m
 *              must be len(indptr) - 1; absent: k = max(m, max column + 1),
 *              so that a graph's adjacency matrix is square
 *
 * Any integer type (int32 or int64 as numpy writes them) and any float type
 * are read. A row's columns need not be sorted; duplicates are summed in
 * stored order and explicit zeros kept, as the Matrix Market reader does,
 * so that the file gives the same matrix as the .mtx listing the same
 * entries row by row. */
#ifndef SHIRO_CSR_H5_H
#define SHIRO_CSR_H5_H

#include "csr.h"
#include "mm_read.h"
#include "shiro_status.h"

/* Reads the HDF5 CSR file at `path` into a new sc_csr *out (columns sorted
 * and unique in each row; arrays sized exactly). hdr may be NULL; else it
 * gets field MM_PATTERN (no /data) or MM_REAL, symmetry MM_GENERAL, the
 * size and the entries stored in the file. Peak memory: the result's
 * arrays plus one row's scratch. On failure returns SHIRO_ERR_IO (cannot
 * open, not HDF5, a failed read), SHIRO_ERR_PARSE (a missing or mistyped
 * dataset or attribute, a bad pointer, index or value: err names the file,
 * the dataset and the element) or SHIRO_ERR_NOMEM, and *out is NULL. Local;
 * single-threaded; leaves HDF5's automatic error printing as it found it. */
shiro_status csr_h5_read(const char *path, sc_csr **out, mm_header *hdr, shiro_error *err);

/* Reads only the metadata of the HDF5 CSR file at `path` (dataset types and
 * lengths, the shape attribute; no element of any dataset) into *hdr: field
 * MM_PATTERN (no /data) or MM_REAL, symmetry MM_GENERAL, m = len(/indptr) - 1,
 * entries = len(/indices) (stored, before duplicates are summed), and k from
 * the shape attribute, or -1 where the file has none: then k is known only
 * from the entries (the largest k of csr_h5_read_rows over ranges covering
 * [0, m) is csr_h5_read's). Errors as csr_h5_read's for the metadata; hdr is
 * untouched on failure. Local; single-threaded. */
shiro_status csr_h5_read_shape(const char *path, mm_header *hdr, shiro_error *err);

/* Reads rows [lo, hi) of the HDF5 CSR file at `path` into a new sc_csr *out of
 * hi - lo rows (Ap[0] = 0) and the file's columns: by hyperslab, only
 * /indptr[lo .. hi] and those rows' entries are read. The rows are bit for
 * bit those rows of csr_h5_read's matrix (sorted, duplicates summed in
 * stored order, values as a double array, never compacted). Checked as
 * csr_h5_read checks them, errors naming the file's element (global
 * index): /indptr[0] = 0 if lo = 0, /indptr[m] = nnz if hi = m, pointers
 * nondecreasing and within [0, nnz], columns in range, values finite.
 * hdr may be NULL; else as csr_h5_read_shape's, but k is out->k: the shape
 * attribute's, or without one max(m, largest column of these rows + 1), and
 * the caller then gives every part the maximum over all parts (an
 * MPI_MAX reduction: the k csr_h5_read finds). Requires 0 <= lo <= hi <= m
 * (SHIRO_ERR_ARG otherwise). Peak memory: the range's arrays plus one row's
 * scratch. Failures as csr_h5_read's; *out is then NULL. Local;
 * single-threaded; leaves HDF5's automatic error printing as it found it. */
shiro_status csr_h5_read_rows(const char *path, int64_t lo, int64_t hi, sc_csr **out, mm_header *hdr,
                              shiro_error *err);

#endif
