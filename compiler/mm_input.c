/* mm_input.c — byte input (plain or gzip) and number scanners of the Matrix Market reader. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "error.h"
#include "mm_input.h"

struct mm_input {
  const char *path;   /* borrowed: names the file in messages */
  int fd;             /* plain input: the open file; -1 once gzip owns it */
  gzFile gz;          /* gzip input, or NULL for a plain file */
  unsigned char peek[2]; /* plain input: the magic bytes read to detect gzip */
  int npeek;          /* bytes of peek[] not yet handed out */
  bool gz_truncated;  /* gzip: the stream ended early; reported by the next read */
};

/* Thread-safe strerror (GNU strerror_r returns the message, maybe not in buf). */
static const char *errstr(int e, char *buf, size_t cap) { return strerror_r(e, buf, cap); }

/* zlib's internal buffer for gzread: large, so that a 4 MiB read is a few syscalls. */
#define MM_GZ_BUFFER (1u << 18)

/* Reads up to n bytes at fd into buf, retrying short reads and EINTR. *got <
 * n only at end of file. Returns 0 or an errno value. */
static int read_full(int fd, unsigned char *buf, size_t n, size_t *got) {
  size_t have = 0;
  int e = 0;
  while (have < n) {
    ssize_t r = read(fd, buf + have, n - have);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      e = errno;
      goto done;
    }
    if (r == 0) break;
    have += (size_t)r;
  }
done:
  *got = have;
  return e;
}

shiro_status mm_input_open(const char *path, mm_input **in, shiro_error *err) {
  shiro_status st = SHIRO_OK;
  mm_input *f = NULL;
  size_t got = 0;
  char eb[128];
  int e;
  *in = NULL;
  f = calloc(1, sizeof *f);
  if (!f) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory opening the file", path);
    goto done;
  }
  f->path = path;
  f->fd = open(path, O_RDONLY | O_CLOEXEC);
  if (f->fd < 0) {
    st = shiro_fail(err, SHIRO_ERR_IO, "%s: cannot open: %s", path,
                    errstr(errno, eb, sizeof eb));
    goto done;
  }
  e = read_full(f->fd, f->peek, 2, &got);
  if (e) {
    st = shiro_fail(err, SHIRO_ERR_IO, "%s: cannot read: %s", path,
                    errstr(e, eb, sizeof eb));
    goto done;
  }
  f->npeek = (int)got;
  if (got == 2 && f->peek[0] == 0x1f && f->peek[1] == 0x8b) {
    /* gzip: hand zlib the descriptor from the start of the file. */
    if (lseek(f->fd, 0, SEEK_SET) != 0) {
      st = shiro_fail(err, SHIRO_ERR_IO, "%s: cannot rewind gzip input: %s", path,
                      errstr(errno, eb, sizeof eb));
      goto done;
    }
    f->gz = gzdopen(f->fd, "rb");
    if (!f->gz) {
      st = shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory opening the gzip stream", path);
      goto done;
    }
    f->fd = -1; /* owned by gz now, closed by gzclose */
    f->npeek = 0;
    if (gzbuffer(f->gz, MM_GZ_BUFFER) != 0) {
      st = shiro_fail(err, SHIRO_ERR_INTERNAL, "%s: gzbuffer refused", path);
      goto done;
    }
  }
done:
  if (st != SHIRO_OK) {
    mm_input_close(&f);
  }
  *in = f;
  return st;
}

/* Maps the zlib error state of a gzip input to a status and message. */
static shiro_status gz_fail(mm_input *in, int64_t line, shiro_error *err) {
  int zerr = Z_OK, e = errno;
  char eb[128];
  const char *msg = gzerror(in->gz, &zerr);
  switch (zerr) {
    case Z_ERRNO:
      return shiro_fail(err, SHIRO_ERR_IO, "%s:%lld: read error: %s", in->path,
                        (long long)line, errstr(e, eb, sizeof eb));
    case Z_MEM_ERROR:
      return shiro_fail(err, SHIRO_ERR_NOMEM, "%s:%lld: out of memory decompressing gzip",
                        in->path, (long long)line);
    case Z_BUF_ERROR:
      return shiro_fail(err, SHIRO_ERR_PARSE,
                        "%s:%lld: truncated gzip file (expected more compressed data, found "
                        "end of file)",
                        in->path, (long long)line);
    default:
      return shiro_fail(err, SHIRO_ERR_PARSE, "%s:%lld: corrupt gzip data (zlib: %s)", in->path,
                        (long long)line, msg ? msg : "unknown error");
  }
}

shiro_status mm_input_read(mm_input *in, char *buf, size_t cap, size_t *got, int64_t line,
                           shiro_error *err) {
  shiro_status st = SHIRO_OK;
  size_t have = 0;
  *got = 0;
  if (in->gz) {
    int zerr = Z_OK;
    int r;
    if (in->gz_truncated) {
      st = gz_fail(in, line, err);
      goto done;
    }
    r = gzread(in->gz, buf, (unsigned)cap);
    if (r < 0) {
      st = gz_fail(in, line, err);
      goto done;
    }
    have = (size_t)r;
    /* A stream cut short is not an error to gzread (it returns what it
     * could); zlib marks it Z_BUF_ERROR. Hand out the bytes, fail next. */
    gzerror(in->gz, &zerr);
    if (zerr == Z_BUF_ERROR) {
      in->gz_truncated = true;
      if (have == 0) st = gz_fail(in, line, err);
    } else if (zerr != Z_OK) {
      st = gz_fail(in, line, err);
    }
  } else {
    size_t more = 0;
    char eb[128];
    int e;
    while (in->npeek > 0 && have < cap) {
      buf[have++] = (char)in->peek[2 - in->npeek];
      in->npeek--;
    }
    e = read_full(in->fd, (unsigned char *)buf + have, cap - have, &more);
    have += more;
    if (e) {
      st = shiro_fail(err, SHIRO_ERR_IO, "%s:%lld: read error: %s", in->path, (long long)line,
                      errstr(e, eb, sizeof eb));
    }
  }
done:
  if (st == SHIRO_OK) *got = have;
  return st;
}

bool mm_input_is_gzip(const mm_input *in) { return in->gz != NULL; }

void mm_input_close(mm_input **in) {
  mm_input *f;
  if (!in || !*in) return;
  f = *in;
  if (f->gz) gzclose(f->gz);
  if (f->fd >= 0) close(f->fd);
  free(f);
  *in = NULL;
}

/* ---- number scanners ---- */

static inline bool is_digit(char c) { return (unsigned char)(c - '0') < 10; }

/* Advances p to the end of the token (the first delimiter). */
static const char *token_end(const char *p) {
  while (!mm_is_delim(*p)) p++;
  return p;
}

mm_scan mm_scan_int64(const char *p, const char **endp, int64_t *v) {
  const char *s = p, *d0;
  uint64_t x = 0, lim = (uint64_t)INT64_MAX;
  bool neg = false, ovf = false;
  if (*s == '+' || *s == '-') {
    neg = (*s == '-');
    lim += neg; /* |INT64_MIN| */
    s++;
  }
  d0 = s;
  /* 18 digits cannot overflow uint64; check only beyond that. */
  while (is_digit(*s) && s - d0 < 18) x = x * 10 + (uint64_t)(*s++ - '0');
  while (is_digit(*s)) {
    if (__builtin_mul_overflow(x, 10u, &x) || __builtin_add_overflow(x, (uint64_t)(*s - '0'), &x))
      ovf = true;
    s++;
  }
  if (s == d0 || !mm_is_delim(*s)) {
    *endp = token_end(s);
    return MM_SCAN_BAD;
  }
  *endp = s;
  if (ovf || x > lim) return MM_SCAN_RANGE;
  *v = neg ? (int64_t)(0 - x) : (int64_t)x; /* 0 - x wraps to INT64_MIN for x = 2^63 */
  return MM_SCAN_OK;
}

/* Powers of ten exactly representable as doubles (10^22 is the largest). */
static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

mm_scan mm_scan_real(const char *p, const char **endp, double *v) {
  const char *s = p;
  uint64_t mant = 0;       /* the first up to 19 significant digits */
  int nsig = 0;            /* significant digits kept in mant */
  int64_t dexp = 0;        /* decimal exponent of mant's last digit */
  int64_t e = 0;           /* the written exponent (saturated) */
  bool neg = false, any = false, dropped = false;
  mm_scan r = MM_SCAN_BAD;
  double x;
  if (*s == '+' || *s == '-') neg = (*s++ == '-');
  for (; is_digit(*s); s++) {
    int d = *s - '0';
    any = true;
    if (nsig < 19) {
      if (mant || d) mant = mant * 10 + (uint64_t)d, nsig++;
    } else {
      dexp++;
      dropped |= (d != 0);
    }
  }
  if (*s == '.') {
    for (s++; is_digit(*s); s++) {
      int d = *s - '0';
      any = true;
      if (nsig < 19) {
        if (mant || d) mant = mant * 10 + (uint64_t)d, nsig++;
        dexp--;
      } else {
        dropped |= (d != 0);
      }
    }
  }
  if (!any) goto done;
  if (*s == 'e' || *s == 'E') {
    bool eneg = false;
    s++;
    if (*s == '+' || *s == '-') eneg = (*s++ == '-');
    if (!is_digit(*s)) goto done;
    for (; is_digit(*s); s++)
      if (e < 100000) e = e * 10 + (*s - '0'); /* saturate: beyond any double anyway */
    if (eneg) e = -e;
  }
  if (!mm_is_delim(*s)) goto done;
  e += dexp;
  if (mant == 0) {
    x = 0.0;
    r = MM_SCAN_OK;
  } else if (!dropped && mant <= (UINT64_C(1) << 53) && e >= -22 && e <= 22) {
    /* Exact fast path (Clinger): mant and 10^|e| are exact doubles, so one
     * multiplication or division is correctly rounded. */
    x = (double)mant;
    x = e < 0 ? x / pow10_exact[-e] : x * pow10_exact[e];
    r = MM_SCAN_OK;
  } else {
    char *q = NULL;
    x = strtod(p, &q);
    /* The syntax was checked above, so strtod must stop exactly at the
     * token end; it does not in a locale whose decimal point is not '.'. */
    r = q != s ? MM_SCAN_BAD : (isinf(x) || isnan(x)) ? MM_SCAN_RANGE : MM_SCAN_OK;
    neg = false; /* strtod read the sign */
  }
  if (r == MM_SCAN_OK) *v = neg ? -x : x;
done:
  *endp = r == MM_SCAN_BAD ? token_end(s) : s;
  return r;
}
