/* partition_file.c — a partition the application brings: one rank id per row, read from a file.
 *
 * The format of METIS's gpmetis output and of most partitioners: line i (1-based) holds the
 * 0-based part of row i-1, a decimal integer, with optional blanks around it (and a CR before
 * the newline); nothing else. The last line's newline is optional. Every row gets exactly one
 * line: a blank line, a non-number, a part outside 0..parts-1, or a line count other than the
 * rows' is an error naming the file and the line. A part that gets no rows is allowed (the
 * caller warns about it, as for any partition that leaves ranks empty). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "partition.h"

/* Parses one line (its newline and CR removed) into *part; 0 on success, else writes why. */
static int parse_line(char *s, int32_t parts, int32_t *part, char *why, size_t why_len) {
  while (*s == ' ' || *s == '\t') s++;
  size_t len = strlen(s);
  while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r')) s[--len] = '\0';
  if (!len) {
    snprintf(why, why_len, "an empty line, expected a rank id (0..%d)", parts - 1);
    return 1;
  }
  char *end = NULL;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (end == s || *end != '\0' || errno == ERANGE) {
    snprintf(why, why_len, "expected a rank id (an integer 0..%d), found '%.40s'", parts - 1, s);
    return 1;
  }
  if (v < 0 || v >= parts) {
    snprintf(why, why_len, "rank %lld is out of range 0..%d (--ranks %d)", v, parts - 1, parts);
    return 1;
  }
  *part = (int32_t)v;
  return 0;
}

/* Reads the n labels of path into part[0..n-1]. */
static shiro_status read_labels(const char *path, const char *what, int64_t n, int32_t parts, int32_t *part,
                                shiro_error *err) {
  FILE *f = fopen(path, "r");
  if (!f) return shiro_fail(err, SHIRO_ERR_IO, "%s: cannot open the partition of the %s: %s", path, what, strerror(errno));
  char *line = NULL, why[160];
  size_t cap = 0;
  int64_t lines = 0;
  shiro_status st = SHIRO_OK;
  for (ssize_t got; st == SHIRO_OK && (got = getline(&line, &cap, f)) > 0; lines++) {
    if (memchr(line, '\0', (size_t)got)) {
      st = shiro_fail(err, SHIRO_ERR_PARSE, "%s:%lld: a NUL byte: not a text file of rank ids", path, (long long)lines + 1);
      break;
    }
    if (line[got - 1] == '\n') line[got - 1] = '\0';
    if (lines == n)
      st = shiro_fail(err, SHIRO_ERR_PARSE, "%s:%lld: more lines than the %lld %s (one rank id per line)", path,
                      (long long)lines + 1, (long long)n, what);
    else if (parse_line(line, parts, &part[lines], why, sizeof why))
      st = shiro_fail(err, SHIRO_ERR_PARSE, "%s:%lld: %s", path, (long long)lines + 1, why);
  }
  if (st == SHIRO_OK && ferror(f)) st = shiro_fail(err, SHIRO_ERR_IO, "%s: read error after line %lld", path, (long long)lines);
  if (st == SHIRO_OK && lines != n)
    st = shiro_fail(err, SHIRO_ERR_PARSE, "%s: %lld lines, the matrix has %lld %s (one rank id per line expected)", path,
                    (long long)lines, (long long)n, what);
  free(line);
  fclose(f);
  return st;
}

shiro_status part_from_labels(const int32_t *part, int64_t n, int32_t parts, int64_t **newof, sc_partition *out,
                              shiro_error *err) {
  *newof = NULL;
  int64_t *first = calloc((size_t)parts + 2, sizeof *first), *next = malloc(((size_t)parts + 1) * sizeof *next);
  int64_t *map = malloc(((size_t)n + 1) * sizeof *map);
  if (!first || !next || !map) {
    free(first);
    free(next);
    free(map);
    return shiro_fail(err, SHIRO_ERR_NOMEM, "partition: out of memory");
  }
  for (int64_t i = 0; i < n; i++) first[part[i] + 1]++;
  for (int32_t p = 0; p < parts; p++) first[p + 1] += first[p];
  memcpy(next, first, ((size_t)parts + 1) * sizeof *next);
  for (int64_t i = 0; i < n; i++) map[i] = next[part[i]]++; /* stable: increasing old id within a part */
  free(next);
  out->parts = parts;
  out->n = n;
  out->first = first;
  *newof = map;
  return SHIRO_OK;
}

shiro_status part_file(const char *path, const char *what, int64_t n, int32_t parts, int64_t **newof, sc_partition *out,
                       shiro_error *err) {
  *newof = NULL;
  if (parts < 1) return shiro_fail(err, SHIRO_ERR_ARG, "partition: %d parts", parts);
  int32_t *part = malloc(((size_t)n + 1) * sizeof *part);
  if (!part) return shiro_fail(err, SHIRO_ERR_NOMEM, "partition: out of memory (%lld rank ids)", (long long)n);
  shiro_status st = read_labels(path, what, n, parts, part, err);
  if (st == SHIRO_OK) st = part_from_labels(part, n, parts, newof, out, err);
  free(part);
  return st;
}
