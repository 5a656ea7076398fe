/* mm_read.h — Matrix Market (coordinate) reader. */
#ifndef SHIRO_MM_READ_H
#define SHIRO_MM_READ_H

#include <stddef.h>
#include <stdint.h>

#include "csr.h"
#include "shiro_status.h"

typedef enum mm_field { MM_REAL = 0, MM_INTEGER = 1, MM_PATTERN = 2 } mm_field;
typedef enum mm_symmetry { MM_GENERAL = 0, MM_SYMMETRIC = 1, MM_SKEW = 2, MM_HERMITIAN = 3 } mm_symmetry;

/* What the banner and size line of a Matrix Market file said. */
typedef struct mm_header {
  mm_field field;
  mm_symmetry symmetry;
  int64_t m, k;        /* rows, columns from the size line */
  int64_t entries;     /* entries stored in the file (size line's third number) */
} mm_header;

/* Reads the Matrix Market file at `path` (plain or .gz, detected by content)
 * into a new CSR matrix *out: symmetric/skew/hermitian entries mirrored,
 * duplicates summed, explicit zeros kept, column indices sorted per row.
 * hdr may be NULL. On failure returns SHIRO_ERR_IO / SHIRO_ERR_PARSE /
 * SHIRO_ERR_NOMEM, *out is NULL and err says "path:line: what was wrong". */
shiro_status mm_read(const char *path, sc_csr **out, mm_header *hdr, shiro_error *err);

/* How mm_read_ex reads. Zero-initialise, then set what matters. */
typedef struct mm_read_options {
  int threads;        /* threads that parse and build; <= 0: OpenMP's current number, and
                         one thread for inputs too small to gain from more */
  size_t chunk_bytes; /* bytes of file per parallel part; 0: automatic (tests make it
                         small so that small files have many parts) */
} mm_read_options;

/* mm_read with options (opt may be NULL: the defaults, as mm_read). A plain
 * regular file is memory-mapped, cut into parts at line ends and the parts
 * parsed in parallel; gzip and other inputs are streamed and parsed in
 * order. The matrix, the header and any error message (the first error in
 * file order, with its exact line) are the same whatever the options.
 * Collective over the OpenMP threads it starts; local to the caller. */
shiro_status mm_read_ex(const char *path, const mm_read_options *opt, sc_csr **out,
                        mm_header *hdr, shiro_error *err);

#endif
