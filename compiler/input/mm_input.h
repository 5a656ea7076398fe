/* mm_input.h — bytes and tokens of a Matrix Market file.
 *
 * Byte input: a file opened by path, plain or gzip-compressed (detected by
 * the gzip magic bytes 1f 8b, never by the name). A plain regular file can
 * be memory-mapped whole (mm_input_map) so that ranges of it are parsed in
 * parallel; otherwise, and always for gzip, it is read in caller-sized
 * blocks; gzip is streamed through zlib's gzread, never unpacked to disk.
 *
 * Tokens: the number scanners used by the reader. A token ends at the first
 * space, tab, CR or LF; the caller guarantees that one of those follows
 * within the buffer (every range the reader parses ends with '\n'), so the
 * scanners never need an end pointer and never read past it. */
#ifndef SHIRO_MM_INPUT_H
#define SHIRO_MM_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shiro_status.h"

/* An open input file. */
typedef struct mm_input mm_input;

/* Opens `path` for reading and detects gzip by its first two bytes. The path
 * string is borrowed and must outlive the handle (it names the file in
 * messages). On success *in is a new handle (close with mm_input_close).
 * Returns SHIRO_ERR_IO ("PATH: cannot open: <strerror>") when the file cannot
 * be opened or read, SHIRO_ERR_NOMEM when out of memory; *in is then NULL. */
shiro_status mm_input_open(const char *path, mm_input **in, shiro_error *err);

/* Maps the whole file read-only and returns its bytes in *data[0 .. *size-1]
 * (owned by the handle, valid until mm_input_close). Only a plain (not gzip)
 * regular, non-empty file is mapped; for anything else, or where mmap fails,
 * *data is NULL and the caller reads with mm_input_read instead. Local; never
 * fails (a mapping is an optimisation, not a requirement). */
void mm_input_map(mm_input *in, const char **data, size_t *size);

/* Hints for bytes [off, off+len) of the mapping: `populate` maps them now
 * (one system call instead of a page fault per few pages, before parsing
 * them); `drop` unmaps their pages from this process once parsed, so that
 * the resident size does not grow with the file (the page cache keeps
 * them). Both are no-ops without a mapping and ignore failures. */
void mm_input_populate(mm_input *in, size_t off, size_t len);
void mm_input_drop(mm_input *in, size_t off, size_t len);

/* Reads bytes [off, off+len) of a plain file into buf[0 .. len-1] with
 * pread (short reads and EINTR retried), leaving the position that
 * mm_input_read reads from alone. True if all len bytes were read; false
 * for gzip input, at the end of the file or on a read error (buf then
 * holds anything; the caller falls back to the mapping). Thread-safe: no
 * state of the handle changes. */
bool mm_input_read_at(mm_input *in, size_t off, char *buf, size_t len);

/* Reads the next bytes of the (decompressed) content into buf[0 .. cap-1];
 * *got is the number of bytes stored: less than cap only at the end of the
 * input, 0 once the input is exhausted. `line` is the 1-based line the
 * caller is at, used only to name the place in messages. Returns
 * SHIRO_ERR_IO for a failed read ("PATH:LINE: read error: <strerror>"),
 * SHIRO_ERR_PARSE for a truncated or corrupt gzip stream, SHIRO_ERR_NOMEM
 * when zlib runs out of memory. Requires 0 < cap <= INT32_MAX. */
shiro_status mm_input_read(mm_input *in, char *buf, size_t cap, size_t *got, int64_t line,
                           shiro_error *err);

/* True if the input is gzip-compressed. */
bool mm_input_is_gzip(const mm_input *in);

/* Closes the input (and its mapping) and sets *in to NULL; NULL or *in ==
 * NULL is a no-op. */
void mm_input_close(mm_input **in);

/* Result of a number scanner. */
typedef enum mm_scan {
  MM_SCAN_OK = 0, /* a valid number, stored */
  MM_SCAN_BAD = 1, /* the token is not a number of the expected kind (or is empty) */
  MM_SCAN_RANGE = 2 /* a valid number that does not fit (int64, or a finite double) */
} mm_scan;

/* True for the bytes that end a token: space, tab, CR, LF. */
static inline bool mm_is_delim(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Scans the token at p as a decimal integer [+-]?[0-9]+ into *v, exactly.
 * *endp is set to the end of the token (the first delimiter) whatever the
 * result; an empty token is MM_SCAN_BAD. */
mm_scan mm_scan_int64(const char *p, const char **endp, int64_t *v);

/* Scans the token at p as a decimal real [+-]?(d+[.d*]|.d+)([eE][+-]?d+)?
 * into *v, correctly rounded (exact fast paths, strtod otherwise). inf, nan,
 * hexadecimal and values beyond the double range are rejected (BAD, BAD,
 * BAD, RANGE); values below it round to a subnormal or zero. *endp is set
 * to the end of the token whatever the result. Thread-safe. */
mm_scan mm_scan_real(const char *p, const char **endp, double *v);

/* The double nearest to w * 10^q (ties to even), for w != 0, in *v; true if
 * it is certain, false (nothing stored) where the fast algorithm cannot
 * decide — a result that would be subnormal, infinite, or within the error
 * of the 128-bit power table from a halfway point — and the caller must
 * fall back to strtod. Eisel–Lemire; thread-safe. */
bool mm_decimal_to_double(uint64_t w, int64_t q, double *v);

/* ---- the hot-loop versions (inline, for the reader) ---- */

static inline bool mm_is_digit(char c) { return (unsigned char)(c - '0') < 10; }

/* Exact powers of ten as doubles (10^22 is the largest exact one). */
static const double mm_pow10_exact[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
                                          1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                          1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The scanners below are inlined into the reader's loop whatever the
 * compiler's size heuristics say: they are the loop. */
#define MM_HOT static inline __attribute__((always_inline))

/* ---- eight digits at a time (SWAR) ----
 * A little-endian load of 8 bytes holds the first character in its low
 * byte. Callers load only where 8 bytes are readable (p + 8 <= lim). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MM_SWAR 1
#else
#define MM_SWAR 0
#endif

static inline uint64_t mm_load8(const char *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* Number of leading ASCII digits among the 8 bytes of v (0..8). A byte is a
 * digit iff its high nibble is 3 and stays 3 after adding 6; a carry out of
 * a byte >= 0xfa can only disturb the bytes after it, which come after a
 * non-digit and do not count. */
static inline int mm_digits8(uint64_t v) {
  const uint64_t hi = UINT64_C(0xF0F0F0F0F0F0F0F0), three = UINT64_C(0x3030303030303030);
  uint64_t bad = ((v & hi) ^ three) | (((v + UINT64_C(0x0606060606060606)) & hi) ^ three);
  return bad ? __builtin_ctzll(bad) >> 3 : 8;
}

/* The value of the first k (1..8) digits of v: moved to the top bytes (the
 * bytes shifted out may be anything; subtracting '0' borrows only upwards),
 * then pairs, quads and octets combined by multiply-and-shift. */
static inline uint64_t mm_value8(uint64_t v, int k) {
  v = (v - UINT64_C(0x3030303030303030)) << (8 * (8 - k));
  v = ((v * 2561) >> 8) & UINT64_C(0x00FF00FF00FF00FF);
  v = ((v * 6553601) >> 16) & UINT64_C(0x0000FFFF0000FFFF);
  return (v * UINT64_C(42949672960001)) >> 32;
}

/* Powers of ten as integers, 10^0 .. 10^19. */
static const uint64_t mm_pow10_u64[20] = {
    UINT64_C(1), UINT64_C(10), UINT64_C(100), UINT64_C(1000), UINT64_C(10000),
    UINT64_C(100000), UINT64_C(1000000), UINT64_C(10000000), UINT64_C(100000000),
    UINT64_C(1000000000), UINT64_C(10000000000), UINT64_C(100000000000),
    UINT64_C(1000000000000), UINT64_C(10000000000000), UINT64_C(100000000000000),
    UINT64_C(1000000000000000), UINT64_C(10000000000000000), UINT64_C(100000000000000000),
    UINT64_C(1000000000000000000), UINT64_C(10000000000000000000)};

/* Consumes the digits at *s into *w (w = w * 10^d + digits) and returns
 * their count d; w wraps if the total passes 19 digits (callers check the
 * count). Eight at a time while 8 bytes are readable before lim. */
MM_HOT int mm_digit_run(const char **s, const char *lim, uint64_t *w) {
  const char *p = *s;
  uint64_t x = *w;
#if MM_SWAR
  while (p + 8 <= lim) {
    uint64_t v = mm_load8(p);
    int k = mm_digits8(v);
    if (k == 0) break;
    x = x * mm_pow10_u64[k] + mm_value8(v, k);
    p += k;
    if (k < 8) goto done;
  }
#endif
  while (mm_is_digit(*p)) x = x * 10 + (uint64_t)(*p++ - '0');
#if MM_SWAR
done :
#endif
{
  int d = (int)(p - *s);
  *s = p;
  *w = x;
  return d;
}
}

/* mm_scan_int64 for the common token (1 to 18 digits, no sign) inline;
 * anything else through mm_scan_int64, which has the final say. lim: the
 * end of the readable bytes (at or after the token's delimiter). */
MM_HOT mm_scan mm_scan_int64_fast(const char *s, const char *lim, const char **endp, int64_t *v) {
  const char *d = s;
  uint64_t x = 0;
  int nd = mm_digit_run(&d, lim, &x);
  if (nd > 0 && nd <= 18 && mm_is_delim(*d)) {
    *endp = d;
    *v = (int64_t)x;
    return MM_SCAN_OK;
  }
  return mm_scan_int64(s, endp, v);
}

/* mm_scan_real for the common token inline: an optional sign, at most 19
 * digits in all, an optional exponent of at most 4 digits; the value from
 * Clinger's exact path or Eisel–Lemire. Anything else (more digits, a
 * value the fast paths cannot decide, a bad token) goes through
 * mm_scan_real, which has the final say, so results are identical. lim:
 * as for mm_scan_int64_fast. */
MM_HOT mm_scan mm_scan_real_fast(const char *p, const char *lim, const char **endp, double *v) {
  const char *s = p;
  uint64_t w = 0;
  int64_t q = 0;
  int nd;
  bool neg = false;
  if (*s == '-' || *s == '+') neg = (*s++ == '-');
  nd = mm_digit_run(&s, lim, &w);
  if (*s == '.') {
    int f;
    s++;
    f = mm_digit_run(&s, lim, &w);
    q = -f;
    nd += f;
  }
  if (nd == 0 || nd > 19) goto slow; /* no digits (bad), or w may have wrapped */
  if ((*s | 0x20) == 'e') {
    const char *e0;
    int64_t e = 0;
    bool eneg = false;
    s++;
    if (*s == '-' || *s == '+') eneg = (*s++ == '-');
    e0 = s;
    while (mm_is_digit(*s) && s - e0 < 5) e = e * 10 + (*s++ - '0');
    if (s == e0 || s - e0 > 4) goto slow; /* no digits, or 5 or more: the careful scanner */
    q += eneg ? -e : e;
  }
  if (!mm_is_delim(*s)) goto slow;
  {
    double x;
    if (w == 0) {
      x = 0.0;
    } else if (w <= (UINT64_C(1) << 53) && q >= -22 && q <= 22) {
      /* Clinger: w and 10^|q| are exact doubles; one operation rounds once. */
      x = (double)w;
      x = q < 0 ? x / mm_pow10_exact[-q] : x * mm_pow10_exact[q];
    } else if (!mm_decimal_to_double(w, q, &x)) {
      goto slow;
    }
    *v = neg ? -x : x;
    *endp = s;
    return MM_SCAN_OK;
  }
slow:
  return mm_scan_real(p, endp, v);
}

#endif
