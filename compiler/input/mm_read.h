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

/* One part of a text matrix file (mm_read_part): the header, and the entries
 * of the lines that start in the part's byte range, as triplets in file
 * order, expanded as mm_read expands them (a symmetric, hermitian or
 * skew-symmetric file's off-diagonal entry (i, j, v) followed at once by
 * (j, i, v), or (j, i, -v) for skew; pattern values 1.0; 0-based). Free
 * with mm_coo_part_free. */
typedef struct mm_coo_part {
  mm_header h; /* the header. Matrix Market: as mm_read's. Edge lists: field
                  (from the first edge line), MM_GENERAL, m and k as given
                  (0: from the ids) and entries 0, until mm_read_parts_finish */
  int64_t n; /* triplets stored (after mirroring) */
  int64_t *Ti, *Tj; /* [n] 0-based row and column of each triplet (NULL if n = 0) */
  double *Tx; /* [n] its value (NULL if n = 0) */
  int64_t entries; /* entry lines of this part (before mirroring): the caller
                      sums them over the parts for mm_read_parts_finish */
  int64_t lines; /* lines that start in this part's range (entries, blank and
                    comment lines): summed, with first_line, they place the
                    end of the file */
  int64_t first_line; /* 1-based number of the first entry line of the file
                         (the line after the header): the same in every part */
  int64_t max_i, max_j; /* largest 0-based row / column of this part's entry
                           lines (before mirroring), -1 if none */
} mm_coo_part;

/* Reads part `part` of `nparts` (0 <= part < nparts) of the plain text file
 * at `path` (Matrix Market, or an edge list as opt->format says; opt may be
 * NULL: Matrix Market), without MPI: the header (banner and size line, or
 * an edge list's leading comments and its first edge line's field count),
 * then only the entry lines that start in this part's byte range. The
 * entry section (the first entry line to the end of the file) is cut into
 * nparts ranges of about equal bytes, each cut moved forward to the next
 * line start: the same cuts in every part, whatever it reads, so the parts
 * partition the lines exactly (some may be empty). *out gets the triplets
 * (mm_coo_part) and the part's counts; opt's threads and chunk_bytes are
 * ignored (one thread).
 *
 * The contract: the parts' triplets concatenated in part order, given to
 * sc_csr_from_coo_segs as SC_COO_AS_IS segments with the header that
 * mm_read_parts_finish completes, are mm_read_ex's matrix bit for bit, for
 * any nparts >= 1.
 *
 * Checks: every part checks the header, and its own lines as mm_read does
 * (syntax, index and value range), with mm_read's message for that line and
 * its absolute line number ("PATH:LINE: ..."; the line is placed by counting
 * the line ends before the range, which is read only then). A part reports
 * its own first error: with several bad lines, the caller takes the first
 * failing part in part order for mm_read's message. What needs every part
 * (the size line's entry count; an edge list's size from its ids) is left
 * to mm_read_parts_finish.
 *
 * Memory: the part's triplets (24 bytes each, twice that for a mirrored
 * entry) and a buffer of 4 MiB (the longest line accepted); the file is
 * read with pread, never mapped, and only its header, this range and, to
 * place an error, the bytes before it are read. A gzip file cannot be cut
 * into byte ranges: SHIRO_ERR_UNSUPPORTED naming the file (decompress it,
 * or convert it to csr-h5). Other failures: SHIRO_ERR_ARG (bad part,
 * nparts or options), SHIRO_ERR_IO, SHIRO_ERR_PARSE, SHIRO_ERR_NOMEM; *out
 * is then zeroed. Local; single-threaded. */
shiro_status mm_read_part(const char *path, const mm_read_options *opt, int part, int nparts,
                          mm_coo_part *out, shiro_error *err);

/* Completes the header p->h of a file read in parts, from the sums over all
 * parts of mm_coo_part.entries (entries) and .lines (lines) and the maxima
 * of .max_i and .max_j (max_i, max_j), the same in every part (an MPI
 * allreduce). Matrix Market: checks the size line's count: fewer entries is
 * mm_read's error ("PATH:LINE: unexpected end of file: fewer entries than
 * the size line says (expected E, found N)", LINE = p->first_line + lines),
 * more is "PATH: more entries than the size line says (expected E, found
 * N)" (mm_read names the first line past the count; the parts do not know
 * it). Edge lists: m and k as given in opt, else max(max_i, max_j) + 1 both
 * (as mm_read), and h.entries = entries. SHIRO_ERR_PARSE on a count
 * mismatch, p->h unchanged. Local; cannot fail otherwise. */
shiro_status mm_read_parts_finish(const char *path, const mm_read_options *opt, mm_coo_part *p,
                                  int64_t entries, int64_t lines, int64_t max_i, int64_t max_j,
                                  shiro_error *err);

/* Frees p's arrays and zeroes it; NULL is a no-op. */
void mm_coo_part_free(mm_coo_part *p);

#endif
