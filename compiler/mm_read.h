/* mm_read.h — Matrix Market (coordinate) reader. */
#ifndef SHIRO_MM_READ_H
#define SHIRO_MM_READ_H

#include <stddef.h>
#include <stdint.h>

#include "csr.h"
#include "shiro.h"

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

#endif
