/* mm_input.h — bytes and tokens of a Matrix Market file.
 *
 * Byte input: a file opened by path, plain or gzip-compressed (detected by
 * the gzip magic bytes 1f 8b, never by the name), read in caller-sized
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

#include "shiro.h"

/* An open input file. */
typedef struct mm_input mm_input;

/* Opens `path` for reading and detects gzip by its first two bytes. The path
 * string is borrowed and must outlive the handle (it names the file in
 * messages). On success *in is a new handle (close with mm_input_close).
 * Returns SHIRO_ERR_IO ("PATH: cannot open: <strerror>") when the file cannot
 * be opened or read, SHIRO_ERR_NOMEM when out of memory; *in is then NULL. */
shiro_status mm_input_open(const char *path, mm_input **in, shiro_error *err);

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

/* Closes the input and sets *in to NULL; NULL or *in == NULL is a no-op. */
void mm_input_close(mm_input **in);

/* Result of a number scanner. */
typedef enum mm_scan {
  MM_SCAN_OK = 0,    /* a valid number, stored */
  MM_SCAN_BAD = 1,   /* the token is not a number of the expected kind (or is empty) */
  MM_SCAN_RANGE = 2  /* a valid number that does not fit (int64, or a finite double) */
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
 * into *v, correctly rounded (exact fast path, strtod otherwise). inf, nan,
 * hexadecimal and values beyond the double range are rejected (BAD, BAD,
 * BAD, RANGE); values below it round to a subnormal or zero. *endp is set
 * to the end of the token whatever the result. */
mm_scan mm_scan_real(const char *p, const char **endp, double *v);

#endif
