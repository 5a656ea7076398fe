/* gen_h5.h — shiro-gen's R-MAT graphs written as the HDF5 CSR file that
 * shiro-plan --format csr-h5 reads (compiler/input/csr_h5.h): no text to
 * format or parse, the form a benchmark at hundreds of millions of edges
 * wants. */
#ifndef SHIRO_GEN_H5_H
#define SHIRO_GEN_H5_H

#include "gen.h"
#include "shiro_status.h"

/* Writes the pattern R-MAT graph of g to the HDF5 file `path`: /indptr
 * int64 [m + 1], /indices int32 [edges] (int64 above 2^31 - 1 vertices),
 * root attribute shape int64 (m, m), no /data. Every generated edge is
 * kept, duplicates and self loops included, each row's edges in
 * generation order: the same matrix as shiro-gen's .mtx of the same spec
 * once read (duplicates summed). Written to path + ".tmp" first and
 * renamed into place, so a failure leaves no file at path. Returns
 * SHIRO_ERR_ARG (not pattern R-MAT), SHIRO_ERR_NOMEM, SHIRO_ERR_IO (err
 * names the file). Makes the edges on `threads` OpenMP threads (<= 0:
 * OpenMP's number); the file, byte for byte, does not depend on it (nor on
 * the time: HDF5's object times are not recorded). */
shiro_status gen_write_csr_h5(const gen_spec *g, const char *path, int threads, shiro_error *err);

#endif
