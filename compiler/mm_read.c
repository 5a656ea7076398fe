/* mm_read.c — Matrix Market (coordinate) reader: banner, size line, entries, then CSR.
 *
 * The file is read in blocks of MM_BLOCK bytes; the partial last line of a
 * block is carried over to the next one, so the parsers below always see
 * whole lines, each ending in '\n' (a sentinel '\n' is added after a last
 * line that lacks one). parse_entries() is a function of a byte range and
 * its first line number only, so that ranges can later be parsed in
 * parallel. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "error.h"
#include "mm_input.h"
#include "mm_read.h"

/* Bytes read per block; also the longest line accepted. */
#define MM_BLOCK ((size_t)4 << 20)

/* First capacity of the entry arrays; they double up to the size line's count. */
#define MM_FIRST_CAP ((int64_t)1 << 16)

typedef enum mm_state { MM_AT_BANNER, MM_AT_SIZE, MM_AT_ENTRIES } mm_state;

typedef struct mm_parser {
  const char *path;   /* borrowed: names the file in messages */
  shiro_error *err;   /* the caller's, may be NULL */
  mm_state state;     /* which line is expected next */
  mm_header h;        /* what the banner and size line said */
  int64_t line;       /* 1-based number of the first line not yet parsed */
  int64_t n;          /* entries stored so far, <= h.entries */
  int64_t cap;        /* capacity of Ti, Tj, Tx */
  int64_t *Ti, *Tj;   /* [cap] 0-based row and column of each entry, in file order */
  double *Tx;         /* [cap] value of each entry; NULL for pattern files */
} mm_parser;

/* Fills the error with "PATH:LINE: <message>" and returns s. */
static shiro_status fail_at(const mm_parser *P, int64_t line, shiro_status s, const char *fmt,
                            ...) __attribute__((format(printf, 4, 5)));
static shiro_status fail_at(const mm_parser *P, int64_t line, shiro_status s, const char *fmt,
                            ...) {
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
    return fail_at(P, 1, SHIRO_ERR_PARSE,
                   "missing Matrix Market banner (expected %s, found %s)", MM_BANNER,
                   show(w, q));
  w = next_word(&s);
  if (!word_is(w, s, "matrix"))
    return fail_at(P, 1, SHIRO_ERR_PARSE, "unknown object in banner (expected 'matrix', found %s)",
                   show(w, q));
  w = next_word(&s);
  if (!word_is(w, s, "coordinate"))
    return fail_at(P, 1, SHIRO_ERR_PARSE, "%s (expected 'coordinate', found %s)",
                   word_is(w, s, "array") ? "array format is not supported"
                                          : "unknown format in banner",
                   show(w, q));
  w = next_word(&s);
  for (f = 0; f < 3 && !word_is(w, s, fields[f]); f++) {
  }
  if (f == 3)
    return fail_at(P, 1, SHIRO_ERR_PARSE, "%s (expected real, integer or pattern, found %s)",
                   word_is(w, s, "complex") ? "complex matrices are not supported"
                                            : "unknown field in banner",
                   show(w, q));
  w = next_word(&s);
  for (y = 0; y < 4 && !word_is(w, s, syms[y]); y++) {
  }
  if (y == 4)
    return fail_at(P, 1, SHIRO_ERR_PARSE,
                   "unknown symmetry in banner (expected general, symmetric, skew-symmetric or "
                   "hermitian, found %s)",
                   show(w, q));
  if (y == MM_HERMITIAN && f == MM_PATTERN)
    return fail_at(P, 1, SHIRO_ERR_PARSE,
                   "hermitian symmetry needs values (expected a real or integer field, found "
                   "'pattern')");
  w = skip_blank(s);
  if (!at_eol(w))
    return fail_at(P, 1, SHIRO_ERR_PARSE, "trailing garbage on the banner (expected end of line, "
                   "found %s)", show(w, q));
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
      return fail_at(P, P->line, SHIRO_ERR_PARSE,
                     "short size line (expected %s, found end of line)", what[a]);
    r = mm_scan_int64(s, &t, &v[a]);
    if (r == MM_SCAN_BAD)
      return fail_at(P, P->line, SHIRO_ERR_PARSE, "bad size line (expected %s, found %s)",
                     what[a], show(s, q));
    if (r == MM_SCAN_RANGE)
      return fail_at(P, P->line, SHIRO_ERR_PARSE, "%s overflows int64 (found %s)", what[a],
                     show(s, q));
    if (v[a] < 0)
      return fail_at(P, P->line, SHIRO_ERR_PARSE, "negative %s (expected >= 0, found %s)",
                     what[a], show(s, q));
    s = t;
  }
  s = skip_blank(s);
  if (!at_eol(s))
    return fail_at(P, P->line, SHIRO_ERR_PARSE,
                   "trailing garbage on the size line (expected end of line, found %s)",
                   show(s, q));
  if (P->h.symmetry != MM_GENERAL && v[0] != v[1])
    return fail_at(P, P->line, SHIRO_ERR_PARSE,
                   "a symmetric, skew-symmetric or hermitian matrix must be square (expected "
                   "rows == columns, found %lld x %lld)",
                   (long long)v[0], (long long)v[1]);
  P->h.m = v[0];
  P->h.k = v[1];
  P->h.entries = v[2];
  return SHIRO_OK;
}

/* Resizes the entry arrays to cap entries; false (arrays still valid, P->cap
 * unchanged) when out of memory. */
static bool resize(mm_parser *P, int64_t cap) {
  int64_t *ti, *tj;
  if (cap < 1 || (uint64_t)cap > SIZE_MAX / sizeof(double)) return false;
  ti = realloc(P->Ti, (size_t)cap * sizeof *ti);
  if (!ti) return false;
  P->Ti = ti;
  tj = realloc(P->Tj, (size_t)cap * sizeof *tj);
  if (!tj) return false;
  P->Tj = tj;
  if (P->h.field != MM_PATTERN) {
    double *tx = realloc(P->Tx, (size_t)cap * sizeof *tx);
    if (!tx) return false;
    P->Tx = tx;
  }
  P->cap = cap; /* only once all three hold cap entries */
  return true;
}

/* Grows the entry arrays (doubling, capped at the size line's count). */
static shiro_status grow(mm_parser *P) {
  int64_t cap = P->cap < MM_FIRST_CAP / 2 ? MM_FIRST_CAP : 2 * P->cap;
  if (cap > P->h.entries) cap = P->h.entries;
  if (!resize(P, cap))
    return fail_at(P, P->line, SHIRO_ERR_NOMEM, "out of memory storing %lld entries",
                   (long long)cap);
  return SHIRO_OK;
}

/* Message for a bad row or column index token at s (scan result r; valid: 1..hi). */
static shiro_status index_fail(const mm_parser *P, int64_t line, const char *s, mm_scan r,
                               const char *what, int64_t hi) {
  char q[200];
  if (r == MM_SCAN_BAD)
    return fail_at(P, line, SHIRO_ERR_PARSE, "expected %s index, found %s", what, show(s, q));
  if (r == MM_SCAN_RANGE)
    return fail_at(P, line, SHIRO_ERR_PARSE, "%s index overflows int64 (found %s)", what,
                   show(s, q));
  return fail_at(P, line, SHIRO_ERR_PARSE, "%s index out of range (expected 1..%lld, found %s)",
                 what, (long long)hi, show(s, q));
}

/* Message for a bad value token at s (scan result r). */
static shiro_status value_fail(const mm_parser *P, int64_t line, const char *s, mm_scan r) {
  char q[200];
  bool real = P->h.field == MM_REAL;
  if (r == MM_SCAN_RANGE)
    return fail_at(P, line, SHIRO_ERR_PARSE, "%s value overflows %s (found %s)",
                   real ? "real" : "integer", real ? "double" : "int64", show(s, q));
  return fail_at(P, line, SHIRO_ERR_PARSE, "expected %s value, found %s",
                 real ? "real" : "integer", show(s, q));
}

/* Scans the integer token at s: the common case (1 to 18 digits, no sign)
 * inline, everything else through mm_scan_int64, which has the final say. */
static inline mm_scan scan_int(const char *s, const char **endp, int64_t *v) {
  const char *d = s;
  int64_t x = 0;
  while ((unsigned char)(*d - '0') < 10 && d - s < 18) x = x * 10 + (*d++ - '0');
  if (d > s && mm_is_delim(*d)) {
    *endp = d;
    *v = x;
    return MM_SCAN_OK;
  }
  return mm_scan_int64(s, endp, v);
}

/* Parses the entry lines in [p, end) (end is just past a '\n'), the first
 * of them being line P->line, and appends the entries to P. Blank lines are
 * skipped. Depends on nothing but the range, the header and the line number
 * of its first line, so that ranges can be parsed in parallel later. */
static shiro_status parse_entries(mm_parser *P, const char *p, const char *end) {
  shiro_status st = SHIRO_OK;
  const int64_t m = P->h.m, k = P->h.k, want = P->h.entries;
  const mm_field field = P->h.field;
  const bool skew = P->h.symmetry == MM_SKEW;
  int64_t line = P->line, n = P->n, cap = P->cap;
  int64_t *Ti = P->Ti, *Tj = P->Tj; /* local copies: stores through them cannot alias P */
  double *Tx = P->Tx;
  char q[200];
  while (p < end) {
    const char *s = skip_blank(p), *t;
    int64_t i = 0, j = 0, iv = 0;
    double x = 1.0;
    mm_scan r;
    if (at_eol(s)) { /* blank line */
      p = s + (*s == '\r') + 1;
      line++;
      continue;
    }
    if (n == want) {
      st = fail_at(P, line, SHIRO_ERR_PARSE,
                   "more entries than the size line says (expected %lld, found %s)",
                   (long long)want, show(s, q));
      goto done;
    }
    r = scan_int(s, &t, &i);
    if (r != MM_SCAN_OK || i < 1 || i > m) {
      st = index_fail(P, line, s, r, "row", m);
      goto done;
    }
    s = skip_blank(t);
    r = scan_int(s, &t, &j);
    if (r != MM_SCAN_OK || j < 1 || j > k) {
      st = index_fail(P, line, s, r, "column", k);
      goto done;
    }
    s = skip_blank(t);
    if (field != MM_PATTERN) {
      if (field == MM_REAL) {
        r = mm_scan_real(s, &t, &x);
      } else {
        r = scan_int(s, &t, &iv);
        x = (double)iv;
      }
      if (r != MM_SCAN_OK) {
        st = value_fail(P, line, s, r);
        goto done;
      }
      s = skip_blank(t);
    }
    if (!at_eol(s)) {
      st = fail_at(P, line, SHIRO_ERR_PARSE, "%s (expected end of line, found %s)",
                   field == MM_PATTERN ? "a value in a pattern matrix"
                                       : "trailing garbage on the entry line",
                   show(s, q));
      goto done;
    }
    if (skew && i == j) {
      st = fail_at(P, line, SHIRO_ERR_PARSE,
                   "diagonal entry in a skew-symmetric matrix (expected row != column, found "
                   "%lld %lld)",
                   (long long)i, (long long)j);
      goto done;
    }
    if (n == cap) {
      P->line = line;
      SHIRO_CHECK_GOTO(grow(P), st);
      cap = P->cap, Ti = P->Ti, Tj = P->Tj, Tx = P->Tx;
    }
    Ti[n] = i - 1;
    Tj[n] = j - 1;
    if (Tx) Tx[n] = x;
    n++;
    p = s + (*s == '\r') + 1;
    line++;
  }
done:
  P->line = line;
  P->n = n;
  return st;
}

/* Parses the whole lines in [p, end): header lines one at a time, then entries. */
static shiro_status parse_lines(mm_parser *P, const char *p, const char *end) {
  shiro_status st = SHIRO_OK;
  while (p < end && P->state != MM_AT_ENTRIES) {
    const char *e = memchr(p, '\n', (size_t)(end - p)), *s = skip_blank(p);
    if (P->state == MM_AT_BANNER) {
      SHIRO_CHECK_GOTO(parse_banner(P, p), st);
      P->state = MM_AT_SIZE;
    } else if (*s != '%' && !at_eol(s)) {
      SHIRO_CHECK_GOTO(parse_size(P, s), st);
      P->state = MM_AT_ENTRIES;
      /* Reserve what the size line announces: no copying while growing. Pages
       * are only touched as entries arrive, so a size line that overstates
       * costs address space, not memory; where even that fails (a bogus
       * count), the arrays grow as entries arrive and the count mismatch is
       * reported as such. */
      (void)resize(P, P->h.entries);
    }
    p = e + 1;
    P->line++;
  }
  if (p < end) st = parse_entries(P, p, end);
done:
  return st;
}

/* Reads the input block by block and parses every line of it. buf: MM_BLOCK + 1 bytes. */
static shiro_status read_all(mm_parser *P, mm_input *in, char *buf) {
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
        st = fail_at(P, P->line, SHIRO_ERR_PARSE,
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
  if (P->state == MM_AT_BANNER) {
    st = fail_at(P, 1, SHIRO_ERR_PARSE,
                 "missing Matrix Market banner (expected %s, found end of file)", MM_BANNER);
  } else if (P->state == MM_AT_SIZE) {
    st = fail_at(P, P->line, SHIRO_ERR_PARSE,
                 "missing size line (expected 'rows columns entries', found end of file)");
  } else if (P->n < P->h.entries) {
    st = fail_at(P, P->line, SHIRO_ERR_PARSE,
                 "unexpected end of file: fewer entries than the size line says (expected "
                 "%lld, found %lld)",
                 (long long)P->h.entries, (long long)P->n);
  }
done:
  return st;
}

shiro_status mm_read(const char *path, sc_csr **out, mm_header *hdr, shiro_error *err) {
  shiro_status st = SHIRO_OK;
  mm_parser P;
  mm_input *in = NULL;
  char *buf = NULL;
  sc_csr *A = NULL;
  sc_coo_mirror mirror = SC_COO_AS_IS;
  memset(&P, 0, sizeof P);
  if (!out || !path) return shiro_fail(err, SHIRO_ERR_ARG, "mm_read: path or out is NULL");
  *out = NULL;
  P.path = path;
  P.err = err;
  P.line = 1;
  SHIRO_CHECK_GOTO(mm_input_open(path, &in, err), st);
  buf = malloc(MM_BLOCK + 1);
  if (!buf) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory for the read buffer", path);
    goto done;
  }
  SHIRO_CHECK_GOTO(read_all(&P, in, buf), st);
  if (P.h.symmetry == MM_SYMMETRIC || P.h.symmetry == MM_HERMITIAN) mirror = SC_COO_SYMMETRIC;
  if (P.h.symmetry == MM_SKEW) mirror = SC_COO_SKEW;
  st = sc_csr_from_coo(P.h.m, P.h.k, P.n, P.Ti, P.Tj, P.Tx, mirror, &A, err);
  if (st != SHIRO_OK && err) { /* name the file in the builder's message */
    char msg[sizeof err->message];
    memcpy(msg, err->message, sizeof msg);
    shiro_fail(err, st, "%s: %s", path, msg);
  }
done:
  mm_input_close(&in);
  free(buf);
  free(P.Ti);
  free(P.Tj);
  free(P.Tx);
  if (st == SHIRO_OK) {
    *out = A;
    if (hdr) *hdr = P.h;
  }
  return st;
}
