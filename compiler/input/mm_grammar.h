/* mm_grammar.h — the text reader's grammar, shared by its drivers (internal
 * to compiler/input/): the whole file (mm_read.c: mapped parts in parallel,
 * or a stream) and one byte range of it (mm_read_part.c). The drivers feed
 * whole lines; the grammar parses header lines one at a time, then ranges
 * of entry lines on their own (mm_parse_part), which is what lets a range
 * be parsed anywhere, its line numbers placed afterwards. */
#ifndef SHIRO_MM_GRAMMAR_H
#define SHIRO_MM_GRAMMAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mm_read.h"
#include "shiro_status.h"

/* Bytes read per block; also the longest line accepted (with its '\n'). */
#define MM_BLOCK ((size_t)4 << 20)

/* Bytes of a part's message (without "PATH:LINE: "). */
#define MM_MSG 400

typedef enum mm_state { MM_AT_BANNER,
                        MM_AT_SIZE,
                        MM_AT_ENTRIES } mm_state;

/* Entries in file order. Indices are 32-bit when the matrix allows (m and
 * k below 2^31): half the memory and bandwidth of the triplets. */
typedef struct mm_ents {
  int64_t n; /* entries stored */
  int64_t cap; /* capacity of Ti, Tj, Tx */
  void *Ti, *Tj; /* [cap] 0-based row and column of each entry: int32_t or int64_t */
  double *Tx; /* [cap] value of each entry; NULL for pattern files */
} mm_ents;

/* A range of whole lines parsed on its own. */
typedef struct mm_part {
  const char *p, *end; /* borrowed bytes; end is just past a '\n' */
  const char *lim; /* end of the readable bytes, >= end (scanners load 8 at a time) */
  size_t off; /* mapped parts: offset of p in the file (page hints); else SIZE_MAX */
  int sink; /* mapped parts: the entry arrays (thread) it appended to */
  int64_t base; /* its first entry in those arrays */
  int64_t n; /* its entries */
  int64_t lines; /* lines parsed, all of them unless st says otherwise */
  shiro_status st; /* the part's first error, or SHIRO_OK */
  int64_t err_line; /* lines of the part before the failing one */
  int64_t max_i, max_j; /* edge lists: the largest 0-based row / column stored, -1 if none */
  char msg[MM_MSG]; /* the error, without "PATH:LINE: " */
} mm_part;

typedef struct mm_parser {
  const char *path; /* borrowed: names the file in messages */
  shiro_error *err; /* the caller's, may be NULL */
  mm_state state; /* which line is expected next */
  mm_header h; /* what the banner and size line said */
  bool idx32; /* entries hold 32-bit indices (h.m, h.k <= INT32_MAX) */
  int64_t line; /* 1-based number of the first line not yet parsed */
  mm_ents E; /* stream input: the entries so far */
  bool el; /* an edge list (mm_read_options.format), not Matrix Market */
  bool el_pending; /* edge list: the header line just seen is the first edge, not yet parsed */
  int el_base; /* edge list: ids are 0- or 1-based */
  int64_t el_rows, el_cols; /* edge list: rows and columns given, or 0 (max id + 1) */
  int64_t lim_i, lim_j; /* edge list: 0-based rows / columns must be below these */
  int64_t max_i, max_j; /* edge list: largest 0-based row / column seen, -1 if none */
} mm_parser;

/* Fills P->err with "PATH:LINE: <message>" and returns s. */
shiro_status mm_fail_at(const mm_parser *P, int64_t line, shiro_status s, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Resizes E to cap >= E->n entries (Tx too unless pattern), 32- or 64-bit
 * indices as idx32 says; false (E unchanged but valid) when out of memory
 * or cap < 1. */
bool mm_ents_resize(mm_ents *E, int64_t cap, bool pattern, bool idx32);

/* Frees E's arrays and zeroes it. */
void mm_ents_free(mm_ents *E);

/* Parses the entry lines of C (C->p .. C->end, whole lines; readable up to
 * C->lim) into E, appending, E to hold at most `limit` entries in all (more
 * is the "more entries" error): Matrix Market entries or edge lines as P
 * says. C->lines, C->st, C->err_line (0-based in C), C->msg, and for edge
 * lists C->max_i, C->max_j are set; stops at the first error. Reads only P,
 * so ranges are parsed in parallel. Requires P past its header. */
void mm_parse_part(const mm_parser *P, mm_ents *E, int64_t limit, mm_part *C);

/* Parses one header line at p (whole, ending in '\n', at line P->line):
 * the banner, a comment or blank line, or the size line; for edge lists
 * comments and blanks, or the first edge (P->el_pending set: not consumed,
 * the first entry line). P->state is MM_AT_ENTRIES once the header is
 * complete. Errors "PATH:LINE: ..." through P->err. */
shiro_status mm_parse_header_line(mm_parser *P, const char *p);

/* The error at the end of the input for what is still missing (banner,
 * size line, or fewer than the size line's entries, n found), at P->line;
 * SHIRO_OK if none (always for edge lists). */
shiro_status mm_end_of_input(mm_parser *P, int64_t n);

/* Sets P (zeroed but for path, err and line) to read an edge list as o
 * says: no banner or size line, ids o->el_base-based, 32-bit indices
 * unless a given size needs more. SHIRO_ERR_ARG for a bad base or size. */
shiro_status mm_el_setup(mm_parser *P, const mm_read_options *o);

#endif
