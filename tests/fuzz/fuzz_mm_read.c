/* fuzz_mm_read.c — libFuzzer harness for the Matrix Market reader (mm_read, mm_read_ex).
 *
 * Each input is written to a scratch file in RAM (fuzz_util.h) and read
 * through the public entry points, up to three ways:
 *   1. mm_read_ex, one thread, automatic parts: a plain file is memory-mapped
 *      and parsed as one part; an input starting with the gzip magic 1f 8b is
 *      a (usually damaged) gzip stream, read block by block;
 *   2. mm_read_ex, 3 threads and parts of 1 to 64 bytes (chosen by a hash of
 *      the input; larger for inputs over 4 KiB, at most about 64 parts): the
 *      same file cut at many line ends and parsed in parallel, so that the
 *      placing of errors and entries across parts is exercised by small inputs;
 *   3. for one input in four (hash again: deterministic, as libFuzzer needs),
 *      the input gzip-compressed by the harness: the streamed path on the same
 *      text. Not for every input: the streamed path allocates a 4 MiB block
 *      buffer per call, which under ASan costs milliseconds of page faults.
 * Oracles: no sanitizer report; a success returns a well-formed CSR matrix
 * (row pointers from 0 to nnz, columns strictly increasing inside [0, k));
 * a failure returns NULL and a message that starts with the path; and all
 * reads agree (same status, same header and matrix bit for bit, same message
 * once the paths are stripped), as mm_read.h promises whatever the options.
 *
 * Not fuzzed: size lines that announce more than FUZZ_MM_MAX_ROWS rows or a
 * million entries. The reader builds m + 1 row pointers, as any CSR reader
 * must, and reserves room for the entries it expects; a forty-byte file
 * claiming 2^31 rows legitimately needs 16 GiB, which is a resource limit,
 * not a bug, and would only make libFuzzer report out-of-memory. Counts
 * beyond 2^60 (where a reservation fails at once and the reader must fall
 * back) are still fuzzed. */
#define _GNU_SOURCE /* fuzz_util.h: mkostemp */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "fuzz_util.h"
#include "mm_read.h"

#define FUZZ_MM_MAX_ROWS ((int64_t)1 << 20)
#define FUZZ_MM_MAX_ENTRIES ((int64_t)1 << 20)
#define FUZZ_MM_HUGE_ENTRIES ((int64_t)1 << 60)

static fuzz_file plain_file, gz_file;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fuzz_file_open(&plain_file, "mm");
  fuzz_file_open(&gz_file, "mmgz");
  return 0;
}

/* Parses an unsigned decimal token [+]?[0-9]+ ending at a delimiter, the way
 * mm_scan_int64 would accept it; -1 if the reader would refuse it (negative,
 * not a number, overflow: no allocation happens then). */
static int64_t size_token(const char **s) {
  const char *p = *s;
  while (*p == ' ' || *p == '\t') p++;
  if (*p == '+') p++;
  const char *d0 = p;
  uint64_t v = 0;
  while (*p >= '0' && *p <= '9') {
    if (v > (uint64_t)INT64_MAX / 10) return -1;
    v = v * 10 + (uint64_t)(*p++ - '0');
  }
  if (p == d0 || v > (uint64_t)INT64_MAX || !(*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) return -1;
  *s = p;
  return (int64_t)v;
}

/* True if the text (what the reader will see, NUL-terminated, at most `len`
 * bytes, possibly cut short) has a size line whose rows or entries are
 * beyond what this harness feeds the reader (see the file comment). Mirrors
 * parse_lines: line 1 is the banner; then lines whose first non-blank byte
 * is '%' or that are blank (LF or CR LF) are skipped; the next line is the
 * size line. Conservative: if the size line is not within the text, skip. */
static bool too_big(const char *text, size_t len, bool complete) {
  const char *p = memchr(text, '\n', len), *end = text + len;
  if (!p) return !complete;
  for (p++; p < end; p++) {
    const char *s = p, *e = memchr(p, '\n', (size_t)(end - p));
    if (!e && !complete) return true; /* the size line may continue beyond what we looked at */
    while (*s == ' ' || *s == '\t') s++;
    if (*s == '%' || *s == '\n' || (*s == '\r' && s[1] == '\n')) {
      if (!e) return false;
      p = e;
      continue;
    }
    int64_t m = size_token(&s);
    if (m < 0) return false;
    if (m > FUZZ_MM_MAX_ROWS) return true;
    if (size_token(&s) < 0) return false;
    int64_t n = size_token(&s);
    return n > FUZZ_MM_MAX_ENTRIES && n < FUZZ_MM_HUGE_ENTRIES;
  }
  return false;
}

/* The first bytes of the content as the reader's input layer (zlib's gzread,
 * which passes plain files through) will deliver it. */
static bool content_too_big(const fuzz_file *f) {
  static char text[(1 << 16) + 2];
  int fd = dup(f->fd);
  FUZZ_ASSERT(fd >= 0, "dup failed");
  FUZZ_ASSERT(lseek(fd, 0, SEEK_SET) == 0, "lseek failed");
  gzFile gz = gzdopen(fd, "rb");
  FUZZ_ASSERT(gz != NULL, "gzdopen failed");
  size_t have = 0;
  int r;
  while (have < sizeof text - 2 && (r = gzread(gz, text + have, (unsigned)(sizeof text - 2 - have))) > 0)
    have += (size_t)r;
  bool complete = gzeof(gz) != 0;
  gzclose(gz);
  /* the reader adds a '\n' after a last line without one */
  if (complete && (have == 0 || text[have - 1] != '\n')) text[have++] = '\n';
  text[have] = 0;
  return too_big(text, have, complete);
}

/* Checks a result of mm_read on the file at `path`. */
static void check_result(const char *path, shiro_status st, const sc_csr *A, const mm_header *h,
                         const shiro_error *err) {
  if (st != SHIRO_OK) {
    FUZZ_ASSERT(A == NULL, "failed read returned a matrix");
    FUZZ_ASSERT(memchr(err->message, 0, sizeof err->message) != NULL, "message not terminated");
    FUZZ_ASSERT(strncmp(err->message, path, strlen(path)) == 0 && err->message[strlen(path)] == ':',
                "message does not name the file: '%s'", err->message);
    FUZZ_ASSERT(st == SHIRO_ERR_PARSE || st == SHIRO_ERR_IO || st == SHIRO_ERR_NOMEM, "status %d: %s", (int)st,
                err->message);
    return;
  }
  FUZZ_ASSERT(A != NULL && A->Ap != NULL, "success without a matrix");
  FUZZ_ASSERT(A->m == h->m && A->k == h->k, "shape %lld x %lld, header %lld x %lld", (long long)A->m,
              (long long)A->k, (long long)h->m, (long long)h->k);
  FUZZ_ASSERT(A->nnz >= 0 && A->nnz <= 2 * h->entries, "nnz %lld from %lld entries", (long long)A->nnz,
              (long long)h->entries);
  FUZZ_ASSERT(A->Ap[0] == 0 && A->Ap[A->m] == A->nnz, "row pointers do not span 0..nnz");
  for (int64_t i = 0; i < A->m; i++) {
    FUZZ_ASSERT(A->Ap[i] <= A->Ap[i + 1], "row pointers decrease at %lld", (long long)i);
    for (int64_t p = A->Ap[i]; p < A->Ap[i + 1]; p++) {
      FUZZ_ASSERT(A->Aj[p] >= 0 && A->Aj[p] < A->k, "column %lld out of range", (long long)A->Aj[p]);
      FUZZ_ASSERT(p == A->Ap[i] || A->Aj[p - 1] < A->Aj[p], "row %lld: columns not increasing", (long long)i);
    }
  }
}

/* Compresses data into a gzip stream in *out (malloc'd); returns its size. */
static size_t gzip_bytes(const uint8_t *data, size_t size, uint8_t **out) {
  z_stream z;
  memset(&z, 0, sizeof z);
  FUZZ_ASSERT(deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK, "deflateInit2");
  size_t cap = deflateBound(&z, (uLong)size) + 32;
  *out = malloc(cap);
  FUZZ_ASSERT(*out != NULL, "out of memory");
  z.next_in = (Bytef *)data;
  z.avail_in = (uInt)size;
  z.next_out = *out;
  z.avail_out = (uInt)cap;
  FUZZ_ASSERT(deflate(&z, Z_FINISH) == Z_STREAM_END, "deflate");
  size_t n = z.total_out;
  deflateEnd(&z);
  return n;
}

/* The message without its leading path (the two reads name different files). */
static const char *after_path(const char *msg, const char *path) {
  size_t n = strlen(path);
  return strncmp(msg, path, n) == 0 ? msg + n : msg;
}

/* FNV-1a of the input: picks the inputs that also take the gzip path. */
static uint32_t hash_bytes(const uint8_t *data, size_t size) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 16777619u;
  return h;
}

static bool same_matrix(const sc_csr *a, const sc_csr *b) {
  if (a->m != b->m || a->k != b->k || a->nnz != b->nnz) return false;
  return memcmp(a->Ap, b->Ap, (size_t)(a->m + 1) * sizeof *a->Ap) == 0 &&
      (a->nnz == 0 || (memcmp(a->Aj, b->Aj, (size_t)a->nnz * sizeof *a->Aj) == 0 && memcmp(a->Ax, b->Ax, (size_t)a->nnz * sizeof *a->Ax) == 0));
}

/* One read and its outcome. */
typedef struct mm_result {
  shiro_status st;
  sc_csr *A;
  mm_header h;
  shiro_error err;
  const char *path;
} mm_result;

static void read_one(const char *path, const mm_read_options *o, mm_result *r) {
  memset(r, 0, sizeof *r);
  r->path = path;
  r->st = mm_read_ex(path, o, &r->A, &r->h, &r->err);
  check_result(path, r->st, r->A, &r->h, &r->err);
}

/* Two reads of the same text must agree (out of memory may strike one only). */
static void agree(const mm_result *a, const mm_result *b, const char *what) {
  if (a->st == SHIRO_ERR_NOMEM || b->st == SHIRO_ERR_NOMEM) return;
  FUZZ_ASSERT(a->st == b->st, "%s: status %d '%s' vs %d '%s'", what, (int)a->st, a->err.message, (int)b->st,
              b->err.message);
  if (a->st == SHIRO_OK)
    FUZZ_ASSERT(same_matrix(a->A, b->A) && memcmp(&a->h, &b->h, sizeof a->h) == 0, "%s: matrices differ", what);
  else
    FUZZ_ASSERT(strcmp(after_path(a->err.message, a->path), after_path(b->err.message, b->path)) == 0,
                "%s: '%s' vs '%s'", what, a->err.message, b->err.message);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_file_set(&plain_file, data, size);
  if (content_too_big(&plain_file)) return 0;
  bool is_gz = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  uint32_t hash = hash_bytes(data, size);

  mm_result one, many;
  mm_read_options o1 = {.threads = 1, .chunk_bytes = 0};
  /* parts of 1 to 64 bytes, but at most about 64 of them (each costs allocations) */
  size_t chunk = 1 + (hash >> 8) % 64;
  if (chunk < size / 64) chunk = size / 64;
  mm_read_options o2 = {.threads = 3, .chunk_bytes = chunk};
  read_one(plain_file.path, &o1, &one);
  read_one(plain_file.path, &o2, &many);
  agree(&one, &many, "one part vs many parts");
  sc_csr_free(many.A);

  if (!is_gz && (hash & 3) == 0) {
    uint8_t *z = NULL;
    size_t zn = gzip_bytes(data, size, &z);
    fuzz_file_set(&gz_file, z, zn);
    free(z);
    mm_result gz;
    read_one(gz_file.path, NULL, &gz);
    agree(&one, &gz, "mapped vs gzip stream");
    sc_csr_free(gz.A);
  }
  sc_csr_free(one.A);
  return 0;
}
