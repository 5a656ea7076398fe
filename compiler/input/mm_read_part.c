/* mm_read_part.c — one part of a text matrix file (mm_read.h: mm_read_part),
 * for a reader on every process of a distributed job.
 *
 * The file is read with pread through one buffer of MM_BLOCK + 1 bytes (the
 * longest line accepted and its '\n'), never mapped: the header lines one
 * at a time, as mm_read parses them (mm_grammar.h), then the part's range,
 * MM_CHUNK bytes at a time (as mm_read's parts are read, for the cache),
 * its whole lines parsed by mm_parse_part as one of mm_read's parts is. The
 * ranges: the entry section [S, Z) cut at S + (Z - S) * u / nparts, each
 * cut moved to the first line start at or after it; a part finds its two
 * cuts by reading from the byte before each to the next '\n'. Line numbers
 * are counted in the range only; the line ends before it are counted only
 * to place an error. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "mm_grammar.h"
#include "mm_input.h"
#include "mm_read.h"

/* Bytes read at a time while the lines are short. */
#define MM_CHUNK ((size_t)256 << 10)

/* Whole lines of a file read forward through a buffer. */
typedef struct lines_in {
  mm_input *in; /* the file (plain) */
  size_t size; /* its bytes */
  char *buf; /* [MM_BLOCK + 1] */
  size_t pos; /* file offset of buf[0] */
  size_t fill; /* bytes in buf */
  size_t next; /* file offset of the next byte to read */
  bool added; /* buf ends with the '\n' given to an unterminated last line */
} lines_in;

/* Starts reading R at file offset at, with nothing buffered. */
static void seek(lines_in *R, size_t at) {
  R->pos = R->next = at;
  R->fill = 0;
  R->added = false;
}

/* Reads more of the file, up to offset `end`, into R->buf after what it
 * holds (at most MM_CHUNK bytes, and the room left); a last line of the
 * file without a '\n' gets one, as mm_read gives it. False on a read error. */
static bool refill(lines_in *R, size_t end) {
  size_t want = end > R->next ? end - R->next : 0, room = MM_BLOCK + 1 - R->fill;
  if (want > MM_CHUNK) want = MM_CHUNK;
  if (want > room) want = room;
  if (want == 0) return true;
  if (!mm_input_read_at(R->in, R->next, R->buf + R->fill, want)) return false;
  R->next += want;
  R->fill += want;
  if (R->next == R->size && R->buf[R->fill - 1] != '\n' && R->fill < MM_BLOCK + 1) {
    R->buf[R->fill++] = '\n';
    R->added = true;
  }
  return true;
}

/* Drops the first n bytes of R->buf (consumed lines). */
static void consume(lines_in *R, size_t n) {
  memmove(R->buf, R->buf + n, R->fill - n);
  R->fill -= n;
  R->pos += n;
}

/* The first whole line in R->buf (*len: its bytes with the '\n'), reading up
 * to `end`; *len 0 if R has nothing more before end. Fails "line too long"
 * (at `line`) where MM_BLOCK bytes hold no line end, as mm_read. */
static shiro_status next_line(const mm_parser *P, lines_in *R, size_t end, int64_t line, size_t *len) {
  const char *e;
  *len = 0;
  while (!(e = memchr(R->buf, '\n', R->fill)) && R->fill < MM_BLOCK + 1 && R->next < end)
    if (!refill(R, end)) return mm_fail_at(P, line, SHIRO_ERR_IO, "read error: %s", strerror(errno));
  if (!e && R->fill == 0) return SHIRO_OK;
  if (e && (size_t)(e - R->buf) < MM_BLOCK) {
    *len = (size_t)(e - R->buf) + 1;
    return SHIRO_OK;
  }
  return mm_fail_at(P, line, SHIRO_ERR_PARSE, "line too long (expected at most %zu bytes, found more)", MM_BLOCK);
}

/* Parses the header from the start of the file; *start gets the offset of
 * the first entry line (the file's size if there is none) and P->line its
 * number. */
static shiro_status read_header(mm_parser *P, lines_in *R, size_t *start) {
  shiro_status st = SHIRO_OK;
  size_t len = 0;
  seek(R, 0);
  while (P->state != MM_AT_ENTRIES) {
    SHIRO_CHECK_GOTO(next_line(P, R, R->size, P->line, &len), st);
    if (len == 0) break;
    SHIRO_CHECK_GOTO(mm_parse_header_line(P, R->buf), st);
    if (P->el_pending) break; /* the first edge: an entry line */
    consume(R, len);
    P->line++;
  }
  if (P->state != MM_AT_ENTRIES) SHIRO_CHECK_GOTO(mm_end_of_input(P, 0), st);
  *start = P->state == MM_AT_ENTRIES ? R->pos : R->size;
done:
  return st;
}

/* The first line start at or after offset x of the entry section [s, size)
 * (size if none): x itself if the byte before it is a '\n'. */
static shiro_status line_start(const mm_parser *P, lines_in *R, size_t s, size_t x, size_t *at) {
  const char *e = NULL;
  if (x <= s || x >= R->size) {
    *at = x <= s ? s : R->size;
    return SHIRO_OK;
  }
  seek(R, x - 1);
  while (R->next < R->size) {
    if (!refill(R, R->size)) return mm_fail_at(P, P->line, SHIRO_ERR_IO, "read error: %s", strerror(errno));
    if ((e = memchr(R->buf, '\n', R->fill))) break;
    consume(R, R->fill);
  }
  *at = e ? R->pos + (size_t)(e - R->buf) + 1 : R->size;
  if (*at > R->size) *at = R->size; /* the '\n' given to the last line */
  return SHIRO_OK;
}

/* Line ends in the file's bytes [s, a) (read only to place an error). */
static bool count_lines(lines_in *R, size_t s, size_t a, int64_t *n) {
  *n = 0;
  for (size_t at = s; at < a;) {
    size_t len = a - at < MM_BLOCK ? a - at : MM_BLOCK;
    const char *p = R->buf, *e = R->buf + len;
    if (!mm_input_read_at(R->in, at, R->buf, len)) return false;
    while ((p = memchr(p, '\n', (size_t)(e - p)))) p++, (*n)++;
    at += len;
  }
  return true;
}

/* Parses the lines that start in [a, b) into E (no entry limit), the whole
 * lines of the buffer at a time, as mm_read parses a part. Sets *lines; on
 * an error, mm_read's message for the line, placed by counting the line
 * ends in [s, a). */
static shiro_status parse_range(const mm_parser *P, lines_in *R, size_t s, size_t a, size_t b, mm_ents *E,
                                int64_t *lines) {
  mm_part C = {.st = SHIRO_OK};
  int64_t done = 0, before = 0;
  seek(R, a);
  for (;;) {
    const char *last;
    if (!refill(R, b)) {
      C.st = SHIRO_ERR_IO;
      snprintf(C.msg, sizeof C.msg, "read error: %s", strerror(errno));
      break;
    }
    if (R->fill == 0) break;
    if (!(last = memrchr(R->buf, '\n', R->fill))) {
      if (R->fill < MM_BLOCK + 1 && R->next < b) continue;
      C.st = SHIRO_ERR_PARSE; /* MM_BLOCK bytes and no line end (or a file that changed) */
      snprintf(C.msg, sizeof C.msg, "line too long (expected at most %zu bytes, found more)", MM_BLOCK);
      break;
    }
    size_t whole = (size_t)(last - R->buf) + 1;
    C = (mm_part){.p = R->buf, .end = R->buf + whole, .lim = R->buf + R->fill, .off = SIZE_MAX};
    mm_parse_part(P, E, INT64_MAX, &C);
    if (C.st != SHIRO_OK) {
      done += C.err_line;
      break;
    }
    done += C.lines;
    consume(R, whole);
  }
  *lines = done;
  if (C.st == SHIRO_OK) return SHIRO_OK;
  if (!count_lines(R, s, a, &before))
    return mm_fail_at(P, P->line, SHIRO_ERR_IO, "read error: %s (placing an error after this line)", strerror(errno));
  return mm_fail_at(P, P->line + before + done, C.st, "%s", C.msg);
}

/* Mirrors the off-diagonal entries of E in place (each followed by its
 * mirror, negated for skew), as sc_csr_from_coo_segs would, and gives
 * pattern entries their value 1.0; E ends sized exactly. */
static bool expand(mm_ents *E, const mm_header *h) {
  const bool mir = h->symmetry != MM_GENERAL, skew = h->symmetry == MM_SKEW;
  int64_t n = E->n, d = 0, w;
  if (mir)
    for (int64_t t = 0; t < n; t++) d += ((int64_t *)E->Ti)[t] != ((int64_t *)E->Tj)[t];
  if (n + d == 0) return true;
  if (!mm_ents_resize(E, n + d, false, false)) return false;
  int64_t *Ti = E->Ti, *Tj = E->Tj;
  double *Tx = E->Tx;
  if (h->field == MM_PATTERN)
    for (int64_t t = 0; t < n; t++) Tx[t] = 1.0;
  w = n + d;
  for (int64_t t = n - 1; t >= 0 && w > t + 1; t--) { /* from the end: w > t until all are placed */
    int64_t i = Ti[t], j = Tj[t];
    double x = Tx[t];
    if (mir && i != j) {
      w--;
      Ti[w] = j, Tj[w] = i, Tx[w] = skew ? -x : x;
    }
    w--;
    Ti[w] = i, Tj[w] = j, Tx[w] = x;
  }
  E->n = n + d;
  return true;
}

/* Reads the header and then part `part`'s range; see mm_read_part. */
static shiro_status read_part(mm_parser *P, lines_in *R, int part, int nparts, mm_coo_part *o) {
  shiro_status st = SHIRO_OK;
  size_t s = 0, a = 0, b = 0;
  SHIRO_CHECK_GOTO(read_header(P, R, &s), st);
  P->idx32 = false; /* the parts' triplets are 64-bit, whatever the size line (which set it) says */
  size_t span = R->size - s;
  SHIRO_CHECK_GOTO(line_start(P, R, s, s + (size_t)((unsigned __int128)span * (unsigned)part / (unsigned)nparts),
                              &a),
                   st);
  SHIRO_CHECK_GOTO(line_start(P, R, s,
                              s + (size_t)((unsigned __int128)span * (unsigned)(part + 1) / (unsigned)nparts), &b),
                   st);
  if (a < b) SHIRO_CHECK_GOTO(parse_range(P, R, s, a, b, &P->E, &o->lines), st);
  o->entries = P->E.n;
  o->max_i = o->max_j = -1;
  for (int64_t t = 0; t < P->E.n; t++) { /* before mirroring */
    int64_t i = ((int64_t *)P->E.Ti)[t], j = ((int64_t *)P->E.Tj)[t];
    if (i > o->max_i) o->max_i = i;
    if (j > o->max_j) o->max_j = j;
  }
  if (!expand(&P->E, &P->h)) {
    st = mm_fail_at(P, P->line, SHIRO_ERR_NOMEM, "out of memory mirroring %lld entries", (long long)P->E.n);
    goto done;
  }
  o->first_line = P->line;
  o->h = P->h;
  if (P->el) {
    o->h.m = P->el_rows;
    o->h.k = P->el_cols;
    o->h.entries = 0;
  }
  o->n = P->E.n;
  o->Ti = P->E.Ti, o->Tj = P->E.Tj, o->Tx = P->E.Tx;
  memset(&P->E, 0, sizeof P->E); /* now the caller's */
done:
  return st;
}

shiro_status mm_read_part(const char *path, const mm_read_options *opt, int part, int nparts, mm_coo_part *out,
                          shiro_error *err) {
  shiro_status st = SHIRO_OK;
  mm_read_options o = {0};
  mm_parser P;
  lines_in R = {0};
  struct stat sb;
  if (!out || !path) return shiro_fail(err, SHIRO_ERR_ARG, "mm_read_part: path or out is NULL");
  memset(out, 0, sizeof *out);
  if (nparts < 1 || part < 0 || part >= nparts)
    return shiro_fail(err, SHIRO_ERR_ARG, "mm_read_part: part %d of %d (expected 0 <= part < nparts)", part, nparts);
  if (opt) o = *opt;
  memset(&P, 0, sizeof P);
  P.path = path;
  P.err = err;
  P.line = 1;
  if (o.format == MM_FORMAT_EDGELIST) SHIRO_CHECK_GOTO(mm_el_setup(&P, &o), st);
  SHIRO_CHECK_GOTO(mm_input_open(path, &R.in, err), st);
  if (mm_input_is_gzip(R.in)) {
    st = shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "%s: a gzip-compressed file cannot be read in parts (byte ranges); "
                                                "decompress it (gunzip) or convert it to csr-h5",
                    path);
    goto done;
  }
  if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    st = shiro_fail(err, SHIRO_ERR_UNSUPPORTED, "%s: not a regular file (expected a plain file to read in parts)",
                    path);
    goto done;
  }
  R.size = (size_t)sb.st_size;
  if (!(R.buf = malloc(MM_BLOCK + 1))) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory for the read buffer", path);
    goto done;
  }
  st = read_part(&P, &R, part, nparts, out);
done:
  mm_input_close(&R.in);
  free(R.buf);
  mm_ents_free(&P.E);
  if (st != SHIRO_OK) mm_coo_part_free(out);
  return st;
}

shiro_status mm_read_parts_finish(const char *path, const mm_read_options *opt, mm_coo_part *p, int64_t entries,
                                  int64_t lines, int64_t max_i, int64_t max_j, shiro_error *err) {
  if (opt && opt->format == MM_FORMAT_EDGELIST) {
    int64_t most = (max_i > max_j ? max_i : max_j) + 1;
    p->h.m = opt->el_rows ? opt->el_rows : most;
    p->h.k = opt->el_cols ? opt->el_cols : most;
    p->h.entries = entries;
    return SHIRO_OK;
  }
  if (entries < p->h.entries)
    return shiro_fail(err, SHIRO_ERR_PARSE, "%s:%lld: unexpected end of file: fewer entries than the size line says "
                                            "(expected %lld, found %lld)",
                      path, (long long)(p->first_line + lines), (long long)p->h.entries, (long long)entries);
  if (entries > p->h.entries)
    return shiro_fail(err, SHIRO_ERR_PARSE, "%s: more entries than the size line says (expected %lld, found %lld)",
                      path, (long long)p->h.entries, (long long)entries);
  return SHIRO_OK;
}

void mm_coo_part_free(mm_coo_part *p) {
  if (!p) return;
  free(p->Ti);
  free(p->Tj);
  free(p->Tx);
  memset(p, 0, sizeof *p);
}
