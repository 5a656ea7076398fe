/* mm_input.c — byte input (plain or gzip) and number scanners of the Matrix Market reader. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "error.h"
#include "mm_input.h"

struct mm_input {
  const char *path; /* borrowed: names the file in messages */
  int fd; /* plain input: the open file; -1 once gzip owns it */
  gzFile gz; /* gzip input, or NULL for a plain file */
  unsigned char peek[2]; /* plain input: the magic bytes read to detect gzip */
  int npeek; /* bytes of peek[] not yet handed out */
  bool gz_truncated; /* gzip: the stream ended early; reported by the next read */
  char *map; /* mm_input_map: the whole file mapped read-only, or NULL */
  size_t map_size; /* bytes of map */
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

bool mm_input_read_at(mm_input *in, size_t off, char *buf, size_t len) {
  size_t have = 0;
  if (in->gz || in->fd < 0 || off > (size_t)INT64_MAX - len) return false;
  while (have < len) {
    ssize_t r = pread(in->fd, buf + have, len - have, (off_t)(off + have));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    have += (size_t)r;
  }
  return true;
}

bool mm_input_is_gzip(const mm_input *in) { return in->gz != NULL; }

void mm_input_map(mm_input *in, const char **data, size_t *size) {
  struct stat sb;
  void *p;
  *data = NULL;
  *size = 0;
  if (in->map) {
    *data = in->map;
    *size = in->map_size;
    return;
  }
  if (in->gz || in->fd < 0 || fstat(in->fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0 ||
      (uint64_t)sb.st_size > SIZE_MAX / 2)
    return;
  p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, in->fd, 0);
  if (p == MAP_FAILED) return;
  /* Read ahead aggressively: every byte is read once, front to back within a chunk. */
  (void)madvise(p, (size_t)sb.st_size, MADV_SEQUENTIAL);
  in->map = p;
  in->map_size = (size_t)sb.st_size;
  *data = in->map;
  *size = in->map_size;
}

/* The pages of the mapping that bytes [off, off+len) lie on: all of them
 * (outer), or only those wholly inside the range (inner: a neighbour may
 * still be reading the partial ones; the file's last page counts as whole).
 * False if there are none. */
static bool pages_of(const mm_input *in, size_t off, size_t len, bool outer, char **a,
                     size_t *n) {
  uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), b = (uintptr_t)in->map, lo, hi;
  if (!in->map || off >= in->map_size) return false;
  if (len > in->map_size - off) len = in->map_size - off;
  lo = outer ? (b + off) & ~(pg - 1) : (b + off + pg - 1) & ~(pg - 1);
  hi = (outer || off + len == in->map_size) ? (b + off + len + pg - 1) & ~(pg - 1)
                                            : (b + off + len) & ~(pg - 1);
  if (hi <= lo) return false;
  *a = (char *)lo;
  *n = (size_t)(hi - lo);
  return true;
}

void mm_input_populate(mm_input *in, size_t off, size_t len) {
#ifdef MADV_POPULATE_READ
  char *a;
  size_t n;
  if (pages_of(in, off, len, true, &a, &n)) (void)madvise(a, n, MADV_POPULATE_READ);
#else
  (void)in, (void)off, (void)len;
#endif
}

void mm_input_drop(mm_input *in, size_t off, size_t len) {
  char *a;
  size_t n;
  if (pages_of(in, off, len, false, &a, &n)) (void)madvise(a, n, MADV_DONTNEED);
}

void mm_input_close(mm_input **in) {
  mm_input *f;
  if (!in || !*in) return;
  f = *in;
  if (f->map) munmap(f->map, f->map_size);
  if (f->gz) gzclose(f->gz);
  if (f->fd >= 0) close(f->fd);
  free(f);
  *in = NULL;
}

/* ---- number scanners ---- */

#define is_digit mm_is_digit

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

/* ---- Eisel–Lemire: w * 10^q to the nearest double ----
 *
 * The table holds, for each q in [MM_Q_MIN, MM_Q_MAX], a 128-bit T_q with
 * its top bit set and a binary exponent b_q such that 5^q ~ T_q * 2^b_q:
 * truncated (T_q <= exact) for q >= 0, exact for q <= 55, and rounded up
 * (T_q > exact, by less than one unit) for q < 0. It is computed once, at
 * first use, from exact big integers: 5^q by repeated multiplication, and
 * floor(2^MM_BIG_BITS / 5^n) by repeated exact division by 5 (the floor of
 * a floor of a quotient is the floor of the whole quotient).
 *
 * Then w * 10^q = w' * 5^q * 2^(q-l) with w' = w << l normalised, and the
 * 192-bit product P = w' * T_q is within w' < 2^64 of the exact product.
 * The 53 leading bits of P, rounded by the bits below, give the double; the
 * error can change that only when the dropped bits are within 2^64 of
 * exactly one half, and then (and for subnormal or infinite results) the
 * caller falls back to strtod. */

#define MM_Q_MIN (-342)
#define MM_Q_MAX 308
#define MM_BIG_BITS 1152 /* 2^1152 / 5^342 still has > 300 bits */
#define MM_BIG_WORDS (MM_BIG_BITS / 64 + 1)

typedef unsigned __int128 u128;

typedef struct pow5_entry {
  uint64_t hi, lo; /* T_q = hi * 2^64 + lo, hi >= 2^63 */
  int32_t b; /* 5^q ~ T_q * 2^b */
} pow5_entry;

static pow5_entry pow5_table[MM_Q_MAX - MM_Q_MIN + 1];
static pthread_once_t pow5_once = PTHREAD_ONCE_INIT;
static atomic_bool pow5_ready;

/* Bits in the big integer x[0..nw) (little-endian 64-bit words). */
static int big_bits(const uint64_t *x, int nw) {
  while (nw > 0 && x[nw - 1] == 0) nw--;
  return nw == 0 ? 0 : 64 * (nw - 1) + 64 - __builtin_clzll(x[nw - 1]);
}

/* Bits [at, at+128) of x as (hi, lo); at may be negative (zeros shifted in). */
static void big_bits128(const uint64_t *x, int nw, int at, uint64_t *hi, uint64_t *lo) {
  uint64_t w[2] = {0, 0};
  for (int k = 0; k < 128; k++) {
    int bit = at + k;
    if (bit >= 0 && bit / 64 < nw && (x[bit / 64] >> (bit % 64) & 1))
      w[k / 64] |= UINT64_C(1) << (k % 64);
  }
  *hi = w[1];
  *lo = w[0];
}

static void pow5_init(void) {
  uint64_t x[MM_BIG_WORDS];
  /* q >= 0: x = 5^q exactly; T_q its top 128 bits (floor). */
  memset(x, 0, sizeof x);
  x[0] = 1;
  for (int q = 0; q <= MM_Q_MAX; q++) {
    pow5_entry *t = &pow5_table[q - MM_Q_MIN];
    int nb = big_bits(x, MM_BIG_WORDS);
    big_bits128(x, MM_BIG_WORDS, nb - 128, &t->hi, &t->lo);
    t->b = nb - 128;
    uint64_t carry = 0;
    for (int k = 0; k < MM_BIG_WORDS; k++) {
      u128 v = (u128)x[k] * 5 + carry;
      x[k] = (uint64_t)v;
      carry = (uint64_t)(v >> 64);
    }
  }
  /* q = -n < 0: x = floor(2^MM_BIG_BITS / 5^n); T_q = its top 128 bits + 1,
   * the ceiling, since 2^N / 5^n is never an integer. */
  memset(x, 0, sizeof x);
  x[MM_BIG_BITS / 64] = UINT64_C(1) << (MM_BIG_BITS % 64);
  for (int n = 1; - n >= MM_Q_MIN; n++) {
    pow5_entry *t = &pow5_table[-n - MM_Q_MIN];
    uint64_t rem = 0;
    for (int k = MM_BIG_WORDS - 1; k >= 0; k--) {
      u128 v = ((u128)rem << 64) | x[k];
      x[k] = (uint64_t)(v / 5);
      rem = (uint64_t)(v % 5);
    }
    int nb = big_bits(x, MM_BIG_WORDS);
    big_bits128(x, MM_BIG_WORDS, nb - 128, &t->hi, &t->lo);
    t->b = nb - 128 - MM_BIG_BITS;
    if (++t->lo == 0 && ++t->hi == 0) { /* rounded up to 2^128 */
      t->hi = UINT64_C(1) << 63;
      t->b++;
    }
  }
  atomic_store_explicit(&pow5_ready, true, memory_order_release);
}

bool mm_decimal_to_double(uint64_t w, int64_t q, double *v) {
  const pow5_entry *t;
  uint64_t p1, p2, m, low, half, bits;
  u128 a, b, mid;
  int l, top, rb;
  int64_t e2;
  if (w == 0 || q < MM_Q_MIN || q > MM_Q_MAX) return false;
  if (!atomic_load_explicit(&pow5_ready, memory_order_acquire)) pthread_once(&pow5_once, pow5_init);
  t = &pow5_table[q - MM_Q_MIN];
  l = __builtin_clzll(w);
  w <<= l;
  /* P = w * (hi, lo) = (p2, p1, p0), in [2^190, 2^192); p0 is not needed. */
  a = (u128)w * t->lo;
  b = (u128)w * t->hi;
  mid = (a >> 64) + (uint64_t)b;
  p1 = (uint64_t)mid;
  p2 = (uint64_t)(b >> 64) + (uint64_t)(mid >> 64);
  top = (int)(p2 >> 63); /* 1: P >= 2^191 */
  rb = 10 + top; /* bits of p2 below the 53-bit mantissa */
  m = p2 >> rb; /* in [2^52, 2^53) */
  low = p2 & ((UINT64_C(1) << rb) - 1);
  half = UINT64_C(1) << (rb - 1);
  /* value = P * 2^(b + q - l) = (m + dropped) * 2^(e2 - 52) */
  e2 = 190 + top + t->b + q - l;
  /* Undecidable within the error bound of 2^64 (in units of P): the dropped
   * bits (low, p1, p0) within 2^64 of half. */
  if ((low == half && p1 <= 1) || (low == half - 1 && p1 == UINT64_MAX)) return false;
  m += low >= half;
  if (m == (UINT64_C(1) << 53)) {
    m >>= 1;
    e2++;
  }
  if (e2 < -1022 || e2 > 1023) return false; /* subnormal or overflow: strtod decides */
  bits = ((uint64_t)(e2 + 1023) << 52) | (m & ((UINT64_C(1) << 52) - 1));
  memcpy(v, &bits, sizeof *v);
  return true;
}

mm_scan mm_scan_real(const char *p, const char **endp, double *v) {
  const char *s = p;
  uint64_t mant = 0; /* the first up to 19 significant digits */
  int nsig = 0; /* significant digits kept in mant */
  int64_t dexp = 0; /* decimal exponent of mant's last digit */
  int64_t e = 0; /* the written exponent (saturated) */
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
    x = e < 0 ? x / mm_pow10_exact[-e] : x * mm_pow10_exact[e];
    r = MM_SCAN_OK;
  } else if (!dropped && mm_decimal_to_double(mant, e, &x)) {
    r = MM_SCAN_OK;
  } else {
    char *q = NULL;
    x = strtod(p, &q);
    /* The syntax was checked above, so strtod must stop exactly at the
     * token end; it does not in a locale whose decimal point is not '.'. */
    r = q != s ? MM_SCAN_BAD : (isinf(x) || isnan(x)) ? MM_SCAN_RANGE
                                                      : MM_SCAN_OK;
    neg = false; /* strtod read the sign */
  }
  if (r == MM_SCAN_OK) *v = neg ? -x : x;
done:
  *endp = r == MM_SCAN_BAD ? token_end(s) : s;
  return r;
}
