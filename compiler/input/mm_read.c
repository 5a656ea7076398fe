/* mm_read.c — Matrix Market (coordinate) reader: banner, size line, entries, then CSR.
 *
 * Two ways in, one grammar. A plain regular file is memory-mapped: the
 * banner, comments and size line are parsed in order, then the entry lines
 * are cut into parts at line ends and the parts parsed in parallel
 * (mm_parse_part depends on nothing but its bytes, the header and a limit,
 * and counts its lines from 0), each appending its entries to the arrays
 * of the thread that parses it. Line numbers and entry counts of earlier
 * parts are known once all are parsed, so errors are placed afterwards:
 * the first part, in file order, that failed or whose entries overflow the
 * size line's count holds the first error of the file, and its message
 * gets its exact line then (an overflowing part is parsed again with the
 * exact limit to find the line). gzip and other inputs are read in blocks
 * of MM_BLOCK bytes, each block's whole lines parsed as one part appending
 * to common arrays; the partial last line is carried over. Either way
 * every parsed range ends in '\n' (a last line without one is copied and
 * given one), the number scanners' requirement. The triplets then go to
 * sc_csr_from_coo_segs as they lie, part by part, in file order.
 *
 * The grammar (header lines, mm_parse_part) is shared through
 * mm_grammar.h with a third way in, one byte range of the file read on
 * its own (mm_read_part.c). */
#define _GNU_SOURCE
#include <omp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "big_alloc.h"
#include "error.h"
#include "mm_grammar.h"
#include "mm_input.h"
#include "mm_read.h"

/* First capacity of the stream reader's entry arrays; they double up to the
 * size line's count. */
#define MM_FIRST_CAP ((int64_t)1 << 16)

/* Parts of a mapped file: at least this many bytes each, and at most
 * MM_PART_MAX (a bound on the pages mapped at a time); about eight per
 * thread for balance on a busy machine. */
#define MM_PART_MIN ((size_t)1 << 20)
#define MM_PART_MAX ((size_t)16 << 20)

/* Bytes of a mapped part copied (pread) and parsed at a time: small enough
 * to stay in a core's cache between the copy and the parse. */
#define MM_CHUNK ((size_t)256 << 10)

/* Bytes sampled to estimate the entries of a mapped file. */
#define MM_SAMPLE ((size_t)1 << 16)

shiro_status mm_fail_at(const mm_parser *P, int64_t line, shiro_status s, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return shiro_fail(P->err, s, "%s:%lld: %s", P->path, (long long)line, msg);
}

static inline bool at_eol(const char *s) { return *s == '\n' || (*s == '\r' && s[1] == '\n'); }

static inline const char *skip_blank(const char *s) {
  while (*s == ' ' || *s == '\t') s++;
  return s;
}

/* Describes the token at s for a message: "end of line", or the token in
 * quotes (at most 40 bytes, unprintable bytes as \xHH). out: 200 bytes. */
static const char *show(const char *s, char *out) {
  size_t o = 0;
  int n = 0;
  if (at_eol(s)) return "end of line";
  out[o++] = '\'';
  do { /* at least one byte, so that a lone CR is shown */
    unsigned char c = (unsigned char)*s++;
    if (n++ == 40) {
      memcpy(out + o, "...", 3);
      o += 3;
      break;
    }
    if (c >= 0x20 && c < 0x7f && c != '\'') {
      out[o++] = (char)c;
    } else {
      o += (size_t)snprintf(out + o, 5, "\\x%02x", c);
    }
  } while (!mm_is_delim(*s));
  out[o++] = '\'';
  out[o] = '\0';
  return out;
}

/* The token at *s (after blanks) as [w, *s); advances *s past it. */
static const char *next_word(const char **s) {
  const char *w = skip_blank(*s), *e = w;
  while (!mm_is_delim(*e)) e++;
  *s = e;
  return w;
}

/* True if the token [w, e) is `word`, ignoring case. */
static bool word_is(const char *w, const char *e, const char *word) {
  size_t n = (size_t)(e - w);
  return strlen(word) == n && strncasecmp(w, word, n) == 0;
}

#define MM_BANNER "'%%MatrixMarket matrix coordinate <field> <symmetry>'"

/* Parses the banner line at s (line 1). */
static shiro_status parse_banner(mm_parser *P, const char *s) {
  static const char *fields[] = {"real", "integer", "pattern"};
  static const char *syms[] = {"general", "symmetric", "skew-symmetric", "hermitian"};
  char q[200];
  const char *w = s;
  int f, y;
  while (!mm_is_delim(*s)) s++;
  if (!word_is(w, s, "%%MatrixMarket"))
    return mm_fail_at(P, 1, SHIRO_ERR_PARSE,
                      "missing Matrix Market banner (expected %s, found %s)", MM_BANNER,
                      show(w, q));
  w = next_word(&s);
  if (!word_is(w, s, "matrix"))
    return mm_fail_at(P, 1, SHIRO_ERR_PARSE, "unknown object in banner (expected 'matrix', found %s)",
                      show(w, q));
  w = next_word(&s);
  if (!word_is(w, s, "coordinate"))
    return mm_fail_at(P, 1, SHIRO_ERR_PARSE, "%s (expected 'coordinate', found %s)",
                      word_is(w, s, "array") ? "array format is not supported"
                                             : "unknown format in banner",
                      show(w, q));
  w = next_word(&s);
  for (f = 0; f < 3 && !word_is(w, s, fields[f]); f++) {
  }
  if (f == 3)
    return mm_fail_at(P, 1, SHIRO_ERR_PARSE, "%s (expected real, integer or pattern, found %s)",
                      word_is(w, s, "complex") ? "complex matrices are not supported"
                                               : "unknown field in banner",
                      show(w, q));
  w = next_word(&s);
  for (y = 0; y < 4 && !word_is(w, s, syms[y]); y++) {
  }
  if (y == 4)
    return mm_fail_at(P, 1, SHIRO_ERR_PARSE,
                      "unknown symmetry in banner (expected general, symmetric, skew-symmetric or "
                      "hermitian, found %s)",
                      show(w, q));
  if (y == MM_HERMITIAN && f == MM_PATTERN)
    return mm_fail_at(P, 1, SHIRO_ERR_PARSE,
                      "hermitian symmetry needs values (expected a real or integer field, found "
                      "'pattern')");
  w = skip_blank(s);
  if (!at_eol(w))
    return mm_fail_at(P, 1, SHIRO_ERR_PARSE, "trailing garbage on the banner (expected end of line, "
                                             "found %s)",
                      show(w, q));
  P->h.field = (mm_field)f;
  P->h.symmetry = (mm_symmetry)y;
  return SHIRO_OK;
}

/* Parses the size line "rows columns entries" at s. */
static shiro_status parse_size(mm_parser *P, const char *s) {
  static const char *what[3] = {"number of rows", "number of columns", "number of entries"};
  int64_t v[3];
  char q[200];
  for (int a = 0; a < 3; a++) {
    const char *t;
    mm_scan r;
    s = skip_blank(s);
    if (at_eol(s))
      return mm_fail_at(P, P->line, SHIRO_ERR_PARSE,
                        "short size line (expected %s, found end of line)", what[a]);
    r = mm_scan_int64(s, &t, &v[a]);
    if (r == MM_SCAN_BAD)
      return mm_fail_at(P, P->line, SHIRO_ERR_PARSE, "bad size line (expected %s, found %s)",
                        what[a], show(s, q));
    if (r == MM_SCAN_RANGE)
      return mm_fail_at(P, P->line, SHIRO_ERR_PARSE, "%s overflows int64 (found %s)", what[a],
                        show(s, q));
    if (v[a] < 0)
      return mm_fail_at(P, P->line, SHIRO_ERR_PARSE, "negative %s (expected >= 0, found %s)",
                        what[a], show(s, q));
    s = t;
  }
  s = skip_blank(s);
  if (!at_eol(s))
    return mm_fail_at(P, P->line, SHIRO_ERR_PARSE,
                      "trailing garbage on the size line (expected end of line, found %s)",
                      show(s, q));
  if (P->h.symmetry != MM_GENERAL && v[0] != v[1])
    return mm_fail_at(P, P->line, SHIRO_ERR_PARSE,
                      "a symmetric, skew-symmetric or hermitian matrix must be square (expected "
                      "rows == columns, found %lld x %lld)",
                      (long long)v[0], (long long)v[1]);
  P->h.m = v[0];
  P->h.k = v[1];
  P->h.entries = v[2];
  return SHIRO_OK;
}

/* ---- entry arrays ---- */

/* Resizes E to cap >= E->n entries (Tx too unless pattern); false (E
 * unchanged but valid) when out of memory. */
bool mm_ents_resize(mm_ents *E, int64_t cap, bool pattern, bool idx32) {
  size_t w = idx32 ? sizeof(int32_t) : sizeof(int64_t);
  void *ti, *tj;
  if (cap < 1 || (uint64_t)cap > SIZE_MAX / sizeof(double)) return false;
  if (!(ti = realloc(E->Ti, (size_t)cap * w))) return false;
  E->Ti = ti;
  if (!(tj = realloc(E->Tj, (size_t)cap * w))) return false;
  E->Tj = tj;
  if (!pattern) {
    double *tx = realloc(E->Tx, (size_t)cap * sizeof *tx);
    if (!tx) return false;
    E->Tx = tx;
  }
  E->cap = cap; /* only once all three hold cap entries */
  sc_big_huge(E->Ti, (size_t)cap * w); /* filled piece by piece (map_make_room) */
  sc_big_huge(E->Tj, (size_t)cap * w);
  if (!pattern) sc_big_huge(E->Tx, (size_t)cap * sizeof *E->Tx);
  return true;
}

void mm_ents_free(mm_ents *E) {
  free(E->Ti);
  free(E->Tj);
  free(E->Tx);
  memset(E, 0, sizeof *E);
}

/* Index bytes of an entry array. */
static size_t isz(bool idx32) { return idx32 ? sizeof(int32_t) : sizeof(int64_t); }

/* The run of n entries of E from `base` on, as a builder segment. */
static sc_coo_seg ents_seg(const mm_ents *E, int64_t base, int64_t n, bool idx32) {
  sc_coo_seg g = {n, NULL, NULL, NULL, NULL, E->Tx ? E->Tx + base : NULL};
  if (!E->Ti) return g; /* no entries were stored: no arrays (NULL + 0 is undefined behaviour) */
  if (idx32) {
    g.Ti32 = (const int32_t *)E->Ti + base;
    g.Tj32 = (const int32_t *)E->Tj + base;
  } else {
    g.Ti = (const int64_t *)E->Ti + base;
    g.Tj = (const int64_t *)E->Tj + base;
  }
  return g;
}

/* ---- entry lines ---- */

/* Records the part's error at its line `line` (0-based in the part), whose
 * first byte is ls: "line too long" if that line is over the limit (the
 * block reader could not have read it, so that is what it says), else the
 * message given. */
static void part_fail(mm_part *C, const char *ls, int64_t line, shiro_status s, const char *fmt,
                      ...) __attribute__((format(printf, 5, 6)));
static void part_fail(mm_part *C, const char *ls, int64_t line, shiro_status s, const char *fmt,
                      ...) {
  const char *e = memchr(ls, '\n', (size_t)(C->end - ls));
  C->st = s;
  C->err_line = line;
  if (e && (size_t)(e - ls) >= MM_BLOCK) {
    C->st = SHIRO_ERR_PARSE;
    snprintf(C->msg, sizeof C->msg, "line too long (expected at most %zu bytes, found more)",
             MM_BLOCK);
    return;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(C->msg, sizeof C->msg, fmt, ap);
  va_end(ap);
}

/* Message for a bad row or column index token at s (scan result r; valid: 1..hi). */
static void index_fail(mm_part *C, const char *ls, int64_t line, const char *s, mm_scan r,
                       const char *what, int64_t hi) {
  char q[200];
  if (r == MM_SCAN_BAD)
    part_fail(C, ls, line, SHIRO_ERR_PARSE, "expected %s index, found %s", what, show(s, q));
  else if (r == MM_SCAN_RANGE)
    part_fail(C, ls, line, SHIRO_ERR_PARSE, "%s index overflows int64 (found %s)", what,
              show(s, q));
  else
    part_fail(C, ls, line, SHIRO_ERR_PARSE, "%s index out of range (expected 1..%lld, found %s)",
              what, (long long)hi, show(s, q));
}

/* Message for a bad value token at s (scan result r). */
static void value_fail(mm_part *C, const char *ls, int64_t line, const char *s, mm_scan r,
                       bool real) {
  char q[200];
  if (r == MM_SCAN_RANGE)
    part_fail(C, ls, line, SHIRO_ERR_PARSE, "%s value overflows %s (found %s)",
              real ? "real" : "integer", real ? "double" : "int64", show(s, q));
  else
    part_fail(C, ls, line, SHIRO_ERR_PARSE, "expected %s value, found %s",
              real ? "real" : "integer", show(s, q));
}

/* Parses the entry lines of C (blank lines skipped), appending to E, which
 * may hold at most `limit` entries in all (more is the "more entries"
 * error, which names h->entries). Stops at the first error. Depends on
 * nothing but its arguments, so parts are parsed in parallel. `field`,
 * `skew` and `idx32` are constants in each instance (see mm_parse_part), so
 * the loop tests none of them. */
static inline __attribute__((always_inline)) void parse_part_as(
    const mm_header *h, mm_ents *E, int64_t limit, mm_part *C, const mm_field field,
    const bool skew, const bool idx32) {
  const int64_t m = h->m, k = h->k;
  const char *p = C->p, *const end = C->end, *const lim = C->lim;
  int64_t line = 0, n = E->n, cap = E->cap;
  void *Ti = E->Ti, *Tj = E->Tj; /* local copies: stores through them cannot alias C or E */
  double *Tx = E->Tx;
  char q[200];
  C->st = SHIRO_OK;
  while (p < end) {
    const char *ls = p, *s = p, *t;
    int64_t i = 0, j = 0, iv = 0;
    double x = 1.0;
    mm_scan r;
    if (*s == ' ' || *s == '\t') s = skip_blank(s);
    if (at_eol(s)) { /* blank line */
      p = s + (*s == '\r') + 1;
      goto next;
    }
    if (n == limit) {
      part_fail(C, ls, line, SHIRO_ERR_PARSE,
                "more entries than the size line says (expected %lld, found %s)",
                (long long)h->entries, show(s, q));
      goto done;
    }
    r = mm_scan_int64_fast(s, lim, &t, &i);
    if (r != MM_SCAN_OK || i < 1 || i > m) {
      index_fail(C, ls, line, s, r, "row", m);
      goto done;
    }
    s = *t == ' ' ? t + 1 : t;
    if (*s == ' ' || *s == '\t') s = skip_blank(s);
    r = mm_scan_int64_fast(s, lim, &t, &j);
    if (r != MM_SCAN_OK || j < 1 || j > k) {
      index_fail(C, ls, line, s, r, "column", k);
      goto done;
    }
    s = t;
    if (field != MM_PATTERN) {
      s = *s == ' ' ? s + 1 : s;
      if (*s == ' ' || *s == '\t') s = skip_blank(s);
      if (field == MM_REAL) {
        r = mm_scan_real_fast(s, lim, &t, &x);
      } else {
        r = mm_scan_int64_fast(s, lim, &t, &iv);
        x = (double)iv;
      }
      if (r != MM_SCAN_OK) {
        value_fail(C, ls, line, s, r, field == MM_REAL);
        goto done;
      }
      s = t;
    }
    if (*s != '\n') {
      if (*s == ' ' || *s == '\t') s = skip_blank(s);
      if (!at_eol(s)) {
        part_fail(C, ls, line, SHIRO_ERR_PARSE, "%s (expected end of line, found %s)",
                  field == MM_PATTERN ? "a value in a pattern matrix"
                                      : "trailing garbage on the entry line",
                  show(s, q));
        goto done;
      }
    }
    if (skew && i == j) {
      part_fail(C, ls, line, SHIRO_ERR_PARSE,
                "diagonal entry in a skew-symmetric matrix (expected row != column, found "
                "%lld %lld)",
                (long long)i, (long long)j);
      goto done;
    }
    if (n == cap) {
      int64_t c2 = cap < MM_FIRST_CAP / 2 ? MM_FIRST_CAP : cap + cap / 2;
      if (c2 > limit) c2 = limit;
      E->n = n;
      if (!mm_ents_resize(E, c2, field == MM_PATTERN, idx32)) {
        part_fail(C, ls, line, SHIRO_ERR_NOMEM, "out of memory storing %lld entries",
                  (long long)c2);
        goto done;
      }
      cap = E->cap, Ti = E->Ti, Tj = E->Tj, Tx = E->Tx;
    }
    if (idx32) {
      ((int32_t *)Ti)[n] = (int32_t)(i - 1);
      ((int32_t *)Tj)[n] = (int32_t)(j - 1);
    } else {
      ((int64_t *)Ti)[n] = i - 1;
      ((int64_t *)Tj)[n] = j - 1;
    }
    if (field != MM_PATTERN) Tx[n] = x;
    n++;
    p = s + (*s == '\r') + 1;
  next:
    if ((size_t)(p - ls) > MM_BLOCK) {
      part_fail(C, ls, line, SHIRO_ERR_PARSE, "line too long");
      goto done;
    }
    line++;
  }
done:
  C->lines = line;
  E->n = n;
}

/* Message for a bad vertex id token at s (scan result r; valid: lo..hi). */
static void vertex_fail(mm_part *C, const char *ls, int64_t line, const char *s, mm_scan r,
                        const char *what, int64_t lo, int64_t hi) {
  char q[200];
  if (r == MM_SCAN_BAD)
    part_fail(C, ls, line, SHIRO_ERR_PARSE, "expected %s vertex id, found %s", what, show(s, q));
  else
    part_fail(C, ls, line, SHIRO_ERR_PARSE, "%s vertex id out of range (expected %lld..%lld, found %s)",
              what, (long long)lo, (long long)hi, show(s, q));
}

/* Edge lists: parse_part_as for lines "u v" (field MM_PATTERN) or "u v x"
 * (MM_REAL: the file's first edge line had three fields), ids from `base`
 * on, each below base + P->lim_i (u) or base + P->lim_j (v), '#' and '%'
 * lines comments, blank lines skipped; tracks the largest row and column
 * in C->max_i, C->max_j. No limit on the entries. */
static inline __attribute__((always_inline)) void parse_el_as(const mm_parser *P, mm_ents *E,
                                                              mm_part *C, const mm_field field,
                                                              const bool idx32) {
  const int64_t base = P->el_base, li = P->lim_i, lj = P->lim_j;
  const char *p = C->p, *const end = C->end, *const lim = C->lim;
  int64_t line = 0, n = E->n, cap = E->cap, mi = -1, mj = -1;
  void *Ti = E->Ti, *Tj = E->Tj;
  double *Tx = E->Tx;
  char q[200];
  C->st = SHIRO_OK;
  while (p < end) {
    const char *ls = p, *s = p, *t;
    int64_t i = 0, j = 0;
    double x = 1.0;
    mm_scan r;
    if (*s == ' ' || *s == '\t') s = skip_blank(s);
    if (at_eol(s)) { /* blank line */
      p = s + (*s == '\r') + 1;
      goto next;
    }
    if (*s == '#' || *s == '%') { /* comment */
      p = (const char *)memchr(s, '\n', (size_t)(end - s)) + 1;
      goto next;
    }
    r = mm_scan_int64_fast(s, lim, &t, &i);
    if (r != MM_SCAN_OK || i < base || i - base >= li) {
      vertex_fail(C, ls, line, s, r, "source", base, base + li - 1);
      goto done;
    }
    s = *t == ' ' ? t + 1 : t;
    if (*s == ' ' || *s == '\t') s = skip_blank(s);
    r = mm_scan_int64_fast(s, lim, &t, &j);
    if (r != MM_SCAN_OK || j < base || j - base >= lj) {
      vertex_fail(C, ls, line, s, r, "target", base, base + lj - 1);
      goto done;
    }
    s = t;
    if (field != MM_PATTERN) {
      s = *s == ' ' ? s + 1 : s;
      if (*s == ' ' || *s == '\t') s = skip_blank(s);
      if (at_eol(s)) {
        part_fail(C, ls, line, SHIRO_ERR_PARSE,
                  "expected a value (the first edge line has 3 fields: 'u v value'), found end of line");
        goto done;
      }
      r = mm_scan_real_fast(s, lim, &t, &x);
      if (r != MM_SCAN_OK) {
        value_fail(C, ls, line, s, r, true);
        goto done;
      }
      s = t;
    }
    if (*s != '\n') {
      if (*s == ' ' || *s == '\t') s = skip_blank(s);
      if (!at_eol(s)) {
        part_fail(C, ls, line, SHIRO_ERR_PARSE, "%s (expected end of line, found %s)",
                  field == MM_PATTERN ? "a third field where the first edge line has 2 ('u v')"
                                      : "trailing garbage on the edge line",
                  show(s, q));
        goto done;
      }
    }
    if (n == cap) {
      int64_t c2 = cap < MM_FIRST_CAP / 2 ? MM_FIRST_CAP : cap + cap / 2;
      E->n = n;
      if (!mm_ents_resize(E, c2, field == MM_PATTERN, idx32)) {
        part_fail(C, ls, line, SHIRO_ERR_NOMEM, "out of memory storing %lld entries",
                  (long long)c2);
        goto done;
      }
      cap = E->cap, Ti = E->Ti, Tj = E->Tj, Tx = E->Tx;
    }
    i -= base;
    j -= base;
    if (i > mi) mi = i;
    if (j > mj) mj = j;
    if (idx32) {
      ((int32_t *)Ti)[n] = (int32_t)i;
      ((int32_t *)Tj)[n] = (int32_t)j;
    } else {
      ((int64_t *)Ti)[n] = i;
      ((int64_t *)Tj)[n] = j;
    }
    if (field != MM_PATTERN) Tx[n] = x;
    n++;
    p = s + (*s == '\r') + 1;
  next:
    if ((size_t)(p - ls) > MM_BLOCK) {
      part_fail(C, ls, line, SHIRO_ERR_PARSE, "line too long");
      goto done;
    }
    line++;
  }
done:
  C->lines = line;
  C->max_i = mi;
  C->max_j = mj;
  E->n = n;
}

/* parse_el_as with the field and the index width as constants. */
static void parse_el(const mm_parser *P, mm_ents *E, mm_part *C) {
  switch (P->h.field == MM_PATTERN ? 2 + P->idx32 : P->idx32) {
    case 0: parse_el_as(P, E, C, MM_REAL, false); break;
    case 1: parse_el_as(P, E, C, MM_REAL, true); break;
    case 2: parse_el_as(P, E, C, MM_PATTERN, false); break;
    default: parse_el_as(P, E, C, MM_PATTERN, true); break;
  }
}

/* parse_part_as with the field, the symmetry and the index width as constants. */
static void parse_mm(const mm_header *h, bool idx32, mm_ents *E, int64_t limit, mm_part *C) {
  const bool skew = h->symmetry == MM_SKEW;
  switch ((h->field * 2 + skew) * 2 + idx32) {
#define MM_CASE(f, y, w) \
  case ((f)*2 + (y)) * 2 + (w): parse_part_as(h, E, limit, C, f, y, w); break;
    MM_CASE(MM_REAL, 0, 0)
    MM_CASE(MM_REAL, 0, 1)
    MM_CASE(MM_REAL, 1, 0)
    MM_CASE(MM_REAL, 1, 1)
    MM_CASE(MM_INTEGER, 0, 0)
    MM_CASE(MM_INTEGER, 0, 1)
    MM_CASE(MM_INTEGER, 1, 0)
    MM_CASE(MM_INTEGER, 1, 1)
    MM_CASE(MM_PATTERN, 0, 0)
    MM_CASE(MM_PATTERN, 0, 1)
    MM_CASE(MM_PATTERN, 1, 0)
    MM_CASE(MM_PATTERN, 1, 1)
#undef MM_CASE
  }
}

/* Parses part C into E: as Matrix Market entry lines (with the entry limit
 * `limit`) or as edge lines, as P says. */
void mm_parse_part(const mm_parser *P, mm_ents *E, int64_t limit, mm_part *C) {
  if (P->el) parse_el(P, E, C);
  else parse_mm(&P->h, P->idx32, E, limit, C);
}

/* ---- header lines ---- */

/* Edge lists: the comment and blank lines before the first edge are the
 * header; the first edge line (s: after its blanks) says how many fields
 * every edge line has (2: pattern, 3: with values) and is left pending, to
 * be parsed as an entry. */
static shiro_status el_header_line(mm_parser *P, const char *s) {
  int fields = 0;
  if (at_eol(s) || *s == '#' || *s == '%') return SHIRO_OK;
  while (!at_eol(s)) {
    fields++;
    while (!mm_is_delim(*s)) s++;
    s = skip_blank(s);
    if (*s == '\r' && s[1] != '\n') s++; /* a lone CR: part of a token, as the scanners see it */
  }
  if (fields != 2 && fields != 3)
    return mm_fail_at(P, P->line, SHIRO_ERR_PARSE,
                      "expected an edge 'u v' or 'u v value' (2 or 3 fields), found %d fields", fields);
  P->h.field = fields == 2 ? MM_PATTERN : MM_REAL;
  P->state = MM_AT_ENTRIES;
  P->el_pending = true;
  return SHIRO_OK;
}

/* Parses one header line at p (a whole line): the banner, a comment or
 * blank line, or the size line. */
shiro_status mm_parse_header_line(mm_parser *P, const char *p) {
  const char *s = skip_blank(p);
  shiro_status st = SHIRO_OK;
  if (P->el) return el_header_line(P, s);
  if (P->state == MM_AT_BANNER) {
    st = parse_banner(P, p);
    if (st == SHIRO_OK) P->state = MM_AT_SIZE;
  } else if (*s != '%' && !at_eol(s)) {
    st = parse_size(P, s);
    if (st == SHIRO_OK) {
      P->state = MM_AT_ENTRIES;
      P->idx32 = P->h.m <= INT32_MAX && P->h.k <= INT32_MAX;
    }
  }
  return st;
}

/* The message at the end of the input for what is still missing, or SHIRO_OK. */
shiro_status mm_end_of_input(mm_parser *P, int64_t n) {
  if (P->el) return SHIRO_OK; /* no header, no count: any number of edges */
  if (P->state == MM_AT_BANNER)
    return mm_fail_at(P, 1, SHIRO_ERR_PARSE,
                      "missing Matrix Market banner (expected %s, found end of file)", MM_BANNER);
  if (P->state == MM_AT_SIZE)
    return mm_fail_at(P, P->line, SHIRO_ERR_PARSE,
                      "missing size line (expected 'rows columns entries', found end of file)");
  if (n < P->h.entries)
    return mm_fail_at(P, P->line, SHIRO_ERR_PARSE,
                      "unexpected end of file: fewer entries than the size line says (expected "
                      "%lld, found %lld)",
                      (long long)P->h.entries, (long long)n);
  return SHIRO_OK;
}

/* ---- stream input (gzip, pipes, ...) ---- */

/* Parses the whole lines in [p, end): header lines one at a time, then entries. */
static shiro_status parse_lines(mm_parser *P, const char *p, const char *end) {
  shiro_status st = SHIRO_OK;
  while (p < end && P->state != MM_AT_ENTRIES) {
    const char *e = memchr(p, '\n', (size_t)(end - p));
    SHIRO_CHECK_GOTO(mm_parse_header_line(P, p), st);
    if (P->el_pending) break; /* the first edge: parsed with the entries below */
    if (P->state == MM_AT_ENTRIES) {
      /* Reserve what the size line announces: no copying while growing. Pages
       * are only touched as entries arrive, so a size line that overstates
       * costs address space, not memory; where even that fails (a bogus
       * count), the arrays grow as entries arrive and the count mismatch is
       * reported as such. */
      (void)mm_ents_resize(&P->E, P->h.entries, P->h.field == MM_PATTERN, P->idx32);
    }
    p = e + 1;
    P->line++;
  }
  if (p < end) {
    mm_part C = {.p = p, .end = end, .lim = end, .off = SIZE_MAX};
    mm_parse_part(P, &P->E, P->h.entries, &C);
    if (C.st != SHIRO_OK)
      st = mm_fail_at(P, P->line + C.err_line, C.st, "%s", C.msg);
    P->line += C.lines;
    if (C.max_i > P->max_i) P->max_i = C.max_i;
    if (C.max_j > P->max_j) P->max_j = C.max_j;
  }
done:
  return st;
}

/* Reads the input block by block and parses every line of it. buf: MM_BLOCK + 1 bytes. */
static shiro_status read_stream(mm_parser *P, mm_input *in, char *buf) {
  shiro_status st = SHIRO_OK;
  size_t fill = 0, got = 0;
  bool eof = false;
  while (!eof) {
    const char *last;
    size_t lim;
    SHIRO_CHECK_GOTO(mm_input_read(in, buf + fill, MM_BLOCK - fill, &got, P->line, P->err), st);
    fill += got;
    if (got == 0) {
      eof = true;
      if (fill > 0 && buf[fill - 1] != '\n') buf[fill++] = '\n'; /* the +1 byte of buf */
    }
    last = memrchr(buf, '\n', fill);
    if (!last) {
      if (fill == MM_BLOCK) {
        st = mm_fail_at(P, P->line, SHIRO_ERR_PARSE,
                        "line too long (expected at most %zu bytes, found more)", MM_BLOCK);
        goto done;
      }
      continue;
    }
    lim = (size_t)(last - buf) + 1;
    SHIRO_CHECK_GOTO(parse_lines(P, buf, buf + lim), st);
    memmove(buf, buf + lim, fill - lim);
    fill -= lim;
  }
  st = mm_end_of_input(P, P->E.n);
done:
  return st;
}

/* ---- mapped input ---- */

/* A mapped file being read: the whole lines data[0 .. whole), then the last
 * line if it has no '\n' (tail, a copy with one added). */
typedef struct mm_mapped {
  const char *data; /* the mapping (borrowed from the mm_input) */
  size_t size; /* bytes of the mapping */
  size_t whole; /* bytes up to and including the last '\n' */
  char *tail; /* [tail_len + 1] the unterminated last line + '\n', or NULL */
  size_t tail_len; /* bytes of that line (tail is NULL if it is too long to copy) */
  int64_t nparts; /* parts of the entry lines */
  mm_part *parts; /* [nparts] */
  double density; /* entry lines per byte, estimated from a sample */
  int nsinks; /* entry arrays: one per thread */
  mm_ents *sinks; /* [nsinks] */
  char **bufs; /* [nsinks] each thread's MM_CHUNK bytes for read_part, or NULL */
} mm_mapped;

static void mapped_free(mm_mapped *M) {
  for (int t = 0; t < M->nsinks; t++) mm_ents_free(&M->sinks[t]);
  for (int t = 0; M->bufs && t < M->nsinks; t++) free(M->bufs[t]);
  free(M->bufs);
  free(M->sinks);
  free(M->parts);
  free(M->tail);
  memset(M, 0, sizeof *M);
}

/* Parses header lines of the mapping from byte *pos on, then of the tail,
 * until the size line has been read or the input ends. */
static shiro_status map_header(mm_parser *P, mm_mapped *M, size_t *pos, bool *tail_used) {
  while (P->state != MM_AT_ENTRIES && *pos < M->whole) {
    const char *p = M->data + *pos, *e = memchr(p, '\n', M->whole - *pos);
    if ((size_t)(e - p) >= MM_BLOCK)
      return mm_fail_at(P, P->line, SHIRO_ERR_PARSE,
                        "line too long (expected at most %zu bytes, found more)", MM_BLOCK);
    shiro_status st = mm_parse_header_line(P, p);
    if (st != SHIRO_OK) return st;
    if (P->el_pending) break; /* the first edge: parsed with the entries */
    *pos = (size_t)(e + 1 - M->data);
    P->line++;
  }
  if (P->state != MM_AT_ENTRIES && M->tail_len > 0) {
    if (!M->tail)
      return mm_fail_at(P, P->line, SHIRO_ERR_PARSE,
                        "line too long (expected at most %zu bytes, found more)", MM_BLOCK);
    shiro_status st = mm_parse_header_line(P, M->tail);
    if (st != SHIRO_OK) return st;
    if (!P->el_pending) {
      *tail_used = true;
      P->line++;
    }
  }
  return SHIRO_OK;
}

/* Cuts the entry lines data[pos .. whole) (and the tail unless used) into
 * parts of about `cut` bytes ending at line ends. */
static shiro_status map_cut(mm_parser *P, mm_mapped *M, size_t pos, bool tail_used, size_t cut) {
  size_t left = M->whole - pos;
  int64_t max = (int64_t)(left / cut) + 2, n = 0;
  M->parts = calloc((size_t)max, sizeof *M->parts);
  if (!M->parts)
    return mm_fail_at(P, P->line, SHIRO_ERR_NOMEM, "out of memory for %lld parts", (long long)max);
  while (pos < M->whole) {
    size_t b = pos + cut;
    mm_part *C = &M->parts[n++];
    if (b >= M->whole) {
      b = M->whole;
    } else {
      const char *e = memchr(M->data + b - 1, '\n', M->whole - (b - 1));
      b = (size_t)(e + 1 - M->data);
    }
    C->p = M->data + pos;
    C->end = M->data + b;
    C->lim = M->data + M->size;
    C->off = pos;
    pos = b;
  }
  if (!tail_used && M->tail_len > 0) {
    mm_part *C = &M->parts[n++];
    C->off = SIZE_MAX;
    if (M->tail) {
      C->p = M->tail;
      C->end = C->lim = M->tail + M->tail_len + 1;
    } else { /* too long to copy: fails as the block reader would */
      C->p = C->end = C->lim = "";
      C->st = SHIRO_ERR_PARSE;
      snprintf(C->msg, sizeof C->msg, "line too long (expected at most %zu bytes, found more)",
               MM_BLOCK);
    }
  }
  M->nparts = n;
  return SHIRO_OK;
}

/* Entries the entry lines data[pos .. whole) probably hold: their bytes
 * times the lines per byte of a sample at their start (M->density), plus
 * 2%. */
static int64_t map_estimate(mm_mapped *M, size_t pos) {
  size_t left = M->whole - pos, ns = left < MM_SAMPLE ? left : MM_SAMPLE, lines = 0;
  const char *p = M->data + pos, *e = p + ns;
  while (p < e && (p = memchr(p, '\n', (size_t)(e - p))) != NULL) p++, lines++;
  M->density = ns ? (double)(lines + 1) / (double)ns : 0.0;
  return (int64_t)((double)left * M->density * 1.02) + 1024;
}

/* Makes room in E for the part's probable entries (bytes times density,
 * plus 5%) and maps that room in now, in one system call per array (see
 * sc_big_populate). Only a hint: mm_parse_part grows E if it is short. */
static void map_make_room(const mm_parser *P, const mm_mapped *M, mm_ents *E, size_t bytes) {
  int64_t want = (int64_t)((double)bytes * M->density * 1.05) + 64, grow;
  size_t w = isz(P->idx32);
  if (want > P->h.entries) want = P->h.entries;
  grow = E->n + want > E->cap + E->cap / 2 ? E->n + want : E->cap + E->cap / 2;
  if (E->n + want > E->cap && !mm_ents_resize(E, grow, P->h.field == MM_PATTERN, P->idx32)) return;
  sc_big_populate(E->Ti, (size_t)E->n * w, (size_t)want * w);
  sc_big_populate(E->Tj, (size_t)E->n * w, (size_t)want * w);
  if (E->Tx) sc_big_populate(E->Tx, (size_t)E->n * sizeof *E->Tx, (size_t)want * sizeof *E->Tx);
}

/* Parses the mapped part C into E (from C->base on, with the entry limit
 * `limit`) from copies of its bytes, read chunk by chunk into buf
 * (MM_CHUNK bytes) with pread, each chunk's whole lines parsed while
 * cached, the partial last line carried over. Why not the mapping: each
 * 4 KiB page of it costs a page-table entry to set up and tear down, and on
 * the virtual machines this was measured on that made reading the mapping
 * four times slower than copying the same bytes. True if the whole part
 * parsed without error (C->lines set); false on any error, a failed read
 * or a line longer than buf, with E holding anything from C->base on: the
 * caller then parses the part again from the mapping, which decides the
 * entries and words the error exactly as before. */
static bool read_part(const mm_parser *P, mm_input *in, char *buf, mm_ents *E, mm_part *C,
                      int64_t limit) {
  size_t off = C->off, end = C->off + (size_t)(C->end - C->p), fill = 0;
  int64_t lines = 0;
  while (off < end) {
    size_t want = end - off < MM_CHUNK - fill ? end - off : MM_CHUNK - fill, whole;
    const char *last;
    if (!mm_input_read_at(in, off, buf + fill, want)) return false;
    off += want;
    fill += want;
    if (!(last = memrchr(buf, '\n', fill))) return false; /* a line longer than buf */
    whole = (size_t)(last - buf) + 1;
    mm_part S = {.p = buf, .end = buf + whole, .lim = buf + fill, .off = SIZE_MAX};
    mm_parse_part(P, E, limit, &S);
    if (S.st != SHIRO_OK) return false;
    lines += S.lines;
    if (S.max_i > C->max_i) C->max_i = S.max_i;
    if (S.max_j > C->max_j) C->max_j = S.max_j;
    memmove(buf, buf + whole, fill - whole);
    fill -= whole;
  }
  C->lines = lines;
  return fill == 0; /* a part ends with '\n'; anything else (the file changed) decides nothing */
}

/* Parses part u of M into the entry arrays of sink t: from copies of its
 * bytes (read_part) where it can, else from the mapping, mapping its pages
 * in first and unmapping them after. */
static void map_parse_part(mm_parser *P, mm_input *in, mm_mapped *M, int64_t u, int t) {
  mm_part *C = &M->parts[u];
  mm_ents *E = &M->sinks[t];
  size_t bytes = (size_t)(C->end - C->p);
  int64_t limit;
  C->sink = t;
  C->base = E->n;
  C->max_i = C->max_j = -1;
  if (C->st != SHIRO_OK) return; /* decided when cut */
  limit = P->h.entries > INT64_MAX - E->n ? INT64_MAX : E->n + P->h.entries;
  map_make_room(P, M, E, bytes);
  if (C->off != SIZE_MAX && M->bufs && M->bufs[t] && read_part(P, in, M->bufs[t], E, C, limit)) {
    C->n = E->n - C->base;
    return;
  }
  E->n = C->base; /* forget what read_part stored */
  if (C->off != SIZE_MAX) mm_input_populate(in, C->off, bytes);
  mm_parse_part(P, E, limit, C);
  C->n = E->n - C->base;
  if (C->off != SIZE_MAX) mm_input_drop(in, C->off, bytes);
}

/* Finds the first error of the file from the parts' results, in file order,
 * and fills P->line with the line after the last; SHIRO_OK if none. */
static shiro_status map_first_error(mm_parser *P, mm_mapped *M, int64_t *n) {
  int64_t before = 0;
  for (int64_t u = 0; u < M->nparts; u++) {
    mm_part *C = &M->parts[u];
    if (before + C->n > P->h.entries || (C->st != SHIRO_OK && before + C->n == P->h.entries)) {
      /* The entry that overflows the count is in this part, before any
       * error of its own, or on the line of that error (the count is
       * checked before a line is parsed, so there it is the error): parse
       * the part again with the exact limit to find the line and say so
       * (into the room it took the first time: nothing to allocate). */
      mm_ents E = M->sinks[C->sink];
      mm_part first = *C;
      E.n = C->base;
      E.cap = C->base + C->n;
      mm_parse_part(P, &E, C->base + (P->h.entries - before), C);
      if (C->st == SHIRO_OK) *C = first; /* an error decided when cut (the tail too long) */
    }
    if (C->st != SHIRO_OK) return mm_fail_at(P, P->line + C->err_line, C->st, "%s", C->msg);
    before += C->n;
    P->line += C->lines;
    if (C->max_i > P->max_i) P->max_i = C->max_i;
    if (C->max_j > P->max_j) P->max_j = C->max_j;
  }
  *n = before;
  return SHIRO_OK;
}

/* Reads a mapped file into *M (which the caller frees with mapped_free,
 * whatever the result): header in order, entry parts in parallel on
 * o->threads threads (<= 0: OpenMP's number); *n is the number of
 * entries. */
static shiro_status read_mapped(mm_parser *P, mm_input *in, const char *data, size_t size,
                                const mm_read_options *o, mm_mapped *M, int64_t *n) {
  shiro_status st = SHIRO_OK;
  const char *last = memrchr(data, '\n', size);
  size_t pos = 0, cut;
  bool tail_used = false;
  int T = o->threads > 0 ? o->threads : omp_get_max_threads();
  *n = 0;
  M->data = data;
  M->size = size;
  M->whole = last ? (size_t)(last - data) + 1 : 0;
  M->tail_len = size - M->whole;
  if (M->tail_len > 0 && M->tail_len < MM_BLOCK) {
    M->tail = malloc(M->tail_len + 1);
    if (!M->tail) {
      st = mm_fail_at(P, 1, SHIRO_ERR_NOMEM, "out of memory for the last line");
      goto done;
    }
    memcpy(M->tail, data + M->whole, M->tail_len);
    M->tail[M->tail_len] = '\n';
  }
  SHIRO_CHECK_GOTO(map_header(P, M, &pos, &tail_used), st);
  if (P->state == MM_AT_ENTRIES) {
    size_t left = M->whole - pos;
    int64_t est = map_estimate(M, pos);
    if (T < 1) T = 1;
    cut = o->chunk_bytes ? o->chunk_bytes : left / (8 * (size_t)T);
    if (!o->chunk_bytes && cut < MM_PART_MIN) cut = MM_PART_MIN;
    if (!o->chunk_bytes && cut > MM_PART_MAX) cut = MM_PART_MAX;
    SHIRO_CHECK_GOTO(map_cut(P, M, pos, tail_used, cut), st);
    if (T > M->nparts) T = (int)M->nparts;
    if (T < 1) T = 1;
    M->sinks = calloc((size_t)T, sizeof *M->sinks);
    if (!M->sinks) {
      st = mm_fail_at(P, P->line, SHIRO_ERR_NOMEM, "out of memory for %d entry arrays", T);
      goto done;
    }
    M->nsinks = T;
    M->bufs = calloc((size_t)T, sizeof *M->bufs); /* a failure here only loses the copies */
    for (int t = 0; M->bufs && t < T; t++) M->bufs[t] = malloc(MM_CHUNK);
    /* Reserve the estimate and more (split among the threads, with room for
     * the uneven split of dynamic scheduling): address space only, pages
     * are mapped in part by part (map_make_room). The arrays grow if it is
     * short (realloc: mremap, no copy, for blocks this big). A failure here
     * is only a hint lost. */
    if (est > P->h.entries) est = P->h.entries;
    for (int t = 0; t < T && est > 0; t++)
      (void)mm_ents_resize(&M->sinks[t], T == 1 ? est + est / 8 : est / T + est / (2 * T) + 1024,
                           P->h.field == MM_PATTERN, P->idx32);
    if (T > 1) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(T)
      for (int64_t u = 0; u < M->nparts; u++) map_parse_part(P, in, M, u, omp_get_thread_num());
    } else {
      for (int64_t u = 0; u < M->nparts; u++) map_parse_part(P, in, M, u, 0);
    }
    SHIRO_CHECK_GOTO(map_first_error(P, M, n), st);
  }
  st = mm_end_of_input(P, *n);
done:
  return st;
}

/* ---- the reader ---- */

/* Sets up P to read an edge list as o says: no banner or size line, ids
 * o->el_base-based, 32-bit indices unless a given size needs more. */
shiro_status mm_el_setup(mm_parser *P, const mm_read_options *o) {
  if (o->el_base != 0 && o->el_base != 1)
    return shiro_fail(P->err, SHIRO_ERR_ARG, "%s: edge list ids must be 0- or 1-based (found base %d)",
                      P->path, o->el_base);
  if (o->el_rows < 0 || o->el_cols < 0)
    return shiro_fail(P->err, SHIRO_ERR_ARG, "%s: negative edge list size (%lld x %lld)", P->path,
                      (long long)o->el_rows, (long long)o->el_cols);
  P->el = true;
  P->el_base = o->el_base;
  P->el_rows = o->el_rows;
  P->el_cols = o->el_cols;
  P->lim_i = o->el_rows ? o->el_rows : INT32_MAX;
  P->lim_j = o->el_cols ? o->el_cols : INT32_MAX;
  P->idx32 = P->lim_i <= INT32_MAX && P->lim_j <= INT32_MAX;
  P->max_i = P->max_j = -1;
  P->h.field = MM_PATTERN;
  P->h.symmetry = MM_GENERAL;
  P->h.entries = INT64_MAX; /* no count to hold the entries to */
  return SHIRO_OK;
}

/* The edge list's size once its n edges are read: as given, or max id + 1
 * (over both ends, so that a graph is square). */
static void el_finish(mm_parser *P, int64_t n) {
  int64_t most = (P->max_i > P->max_j ? P->max_i : P->max_j) + 1;
  P->h.m = P->el_rows ? P->el_rows : most;
  P->h.k = P->el_cols ? P->el_cols : most;
  P->h.entries = n;
}

shiro_status mm_read_ex(const char *path, const mm_read_options *opt, sc_csr **out,
                        mm_header *hdr, shiro_error *err) {
  shiro_status st = SHIRO_OK;
  mm_read_options o = {0};
  mm_parser P;
  mm_mapped M;
  mm_input *in = NULL;
  char *buf = NULL;
  const char *data = NULL;
  size_t size = 0;
  sc_csr *A = NULL;
  sc_coo_seg *segs = NULL;
  int64_t nseg = 0, n = 0;
  sc_coo_mirror mirror = SC_COO_AS_IS;
  memset(&P, 0, sizeof P);
  memset(&M, 0, sizeof M);
  if (!out || !path) return shiro_fail(err, SHIRO_ERR_ARG, "mm_read: path or out is NULL");
  *out = NULL;
  if (opt) o = *opt;
  P.path = path;
  P.err = err;
  P.line = 1;
  if (o.format == MM_FORMAT_EDGELIST) SHIRO_CHECK_GOTO(mm_el_setup(&P, &o), st);
  SHIRO_CHECK_GOTO(mm_input_open(path, &in, err), st);
  mm_input_map(in, &data, &size);
  if (data) {
    SHIRO_CHECK_GOTO(read_mapped(&P, in, data, size, &o, &M, &n), st);
    nseg = M.nparts;
  } else {
    buf = malloc(MM_BLOCK + 1);
    if (!buf) {
      st = shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory for the read buffer", path);
      goto done;
    }
    SHIRO_CHECK_GOTO(read_stream(&P, in, buf), st);
    nseg = 1;
  }
  mm_input_close(&in); /* the mapping is no longer needed */
  free(buf);
  buf = NULL;
  if (P.el) el_finish(&P, data ? n : P.E.n);
  segs = malloc((size_t)(nseg > 0 ? nseg : 1) * sizeof *segs);
  if (!segs) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory", path);
    goto done;
  }
  for (int64_t u = 0; u < nseg; u++)
    segs[u] = data ? ents_seg(&M.sinks[M.parts[u].sink], M.parts[u].base, M.parts[u].n, P.idx32)
                   : ents_seg(&P.E, 0, P.E.n, P.idx32);
  if (P.h.symmetry == MM_SYMMETRIC || P.h.symmetry == MM_HERMITIAN) mirror = SC_COO_SYMMETRIC;
  if (P.h.symmetry == MM_SKEW) mirror = SC_COO_SKEW;
  st = sc_csr_from_coo_segs(P.h.m, P.h.k, nseg, segs, mirror, o.threads, &A, err);
  if (st != SHIRO_OK && err) { /* name the file in the builder's message */
    char msg[sizeof err->message];
    memcpy(msg, err->message, sizeof msg);
    shiro_fail(err, st, "%s: %s", path, msg);
  }
done:
  mm_input_close(&in);
  free(buf);
  free(segs);
  mapped_free(&M);
  mm_ents_free(&P.E);
  if (st == SHIRO_OK) {
    *out = A;
    if (hdr) *hdr = P.h;
  }
  return st;
}

shiro_status mm_read(const char *path, sc_csr **out, mm_header *hdr, shiro_error *err) {
  return mm_read_ex(path, NULL, out, hdr, err);
}
