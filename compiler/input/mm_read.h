/* mm_read.h — Matrix Market (coordinate) reader. */
#ifndef SHIRO_MM_READ_H
#define SHIRO_MM_READ_H

#include <stddef.h>
#include <stdint.h>

#include "csr.h"
#include "shiro_status.h"

typedef enum mm_field { MM_REAL = 0,
                        MM_INTEGER = 1,
                        MM_PATTERN = 2 } mm_field;
typedef enum mm_symmetry { MM_GENERAL = 0,
                           MM_SYMMETRIC = 1,
                           MM_SKEW = 2,
                           MM_HERMITIAN = 3 } mm_symmetry;

/* What the banner and size line of a Matrix Market file said. */
typedef struct mm_header {
  mm_field field;
  mm_symmetry symmetry;
  int64_t m, k; /* rows, columns from the size line */
  int64_t entries; /* entries stored in the file (size line's third number) */
} mm_header;

/* Reads the Matrix Market file at `path` (plain or .gz, detected by content)
 * into a new CSR matrix *out: symmetric/skew/hermitian entries mirrored,
 * duplicates summed, explicit zeros kept, column indices sorted per row.
 * hdr may be NULL. On failure returns SHIRO_ERR_IO / SHIRO_ERR_PARSE /
 * SHIRO_ERR_NOMEM, *out is NULL and err says "path:line: what was wrong". */
shiro_status mm_read(const char *path, sc_csr **out, mm_header *hdr, shiro_error *err);

/* What the input file is. */
typedef enum mm_format {
  MM_FORMAT_MTX = 0, /* Matrix Market coordinate */
  MM_FORMAT_EDGELIST = 1 /* SNAP-style edge list: one edge "u v" (pattern) or "u v value" per
                             line, the first edge line deciding which for all; fields separated
                             by spaces or tabs; lines starting with '#' or '%' and blank lines
                             skipped anywhere; edge (u, v) is entry A(u, v), duplicates summed
                             and self loops kept, as in Matrix Market; nothing mirrored */
} mm_format;

/* How mm_read_ex reads. Zero-initialise, then set what matters. */
typedef struct mm_read_options {
  int threads; /* threads that parse and build; <= 0: OpenMP's current number, and
                         one thread for inputs too small to gain from more */
  size_t chunk_bytes; /* bytes of file per parallel part; 0: automatic (tests make it
                         small so that small files have many parts) */
  mm_format format; /* MM_FORMAT_MTX (0, the default) or MM_FORMAT_EDGELIST */
  int el_base; /* edge list: the first id, 0 (default) or 1 */
  int64_t el_rows; /* edge list: rows, or 0: max id + 1 (ids of both ends, so square);
                         ids must be below the size given, and without one below 2^31 - 1 */
  int64_t el_cols; /* edge list: columns, or 0: the same max id + 1 */
} mm_read_options;

/* mm_read with options (opt may be NULL: the defaults, as mm_read); with
 * opt->format MM_FORMAT_EDGELIST, an edge list (hdr then says pattern or real,
 * general, its size and edges; errors "path:line: what was wrong" too). A plain
 * regular file is memory-mapped, cut into parts at line ends and the parts
 * parsed in parallel; gzip and other inputs are streamed and parsed in
 * order. The matrix, the header and any error message (the first error in
 * file order, with its exact line) are the same whatever the options.
 * Collective over the OpenMP threads it starts; local to the caller. */
shiro_status mm_read_ex(const char *path, const mm_read_options *opt, sc_csr **out,
                        mm_header *hdr, shiro_error *err);

#endif
