/* test_mm_read.c — Matrix Market reader: valid inputs with their expected CSR,
 * mangled inputs with their expected status and message, gzip (whole,
 * truncated, corrupt), randomized inputs against a dense brute-force
 * reference, an allocation-failure loop (also under AddressSanitizer), and
 * the real matrices of tests/data (each must be there).
 *   test_mm_read        all of the above (workdir tests/)
 *   test_mm_read DIR    the matrices of the shared set DIR (../shared/data/matrices)
 *                       against its MANIFEST.tsv; exit 77 if DIR is absent
 * Returns 0 on success; prints each failure and returns 1; 77 (skipped, the
 * reason on stderr) when a part cannot run here. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "csr.h"
#include "mm_input.h"
#include "mm_read.h"
#include "mm_test_files.h"

static int alloc_runs = 0; /* runs of the allocation-failure loop */
static const char *alloc_skipped = NULL; /* why the loop could not run here, or NULL */

/* ---- allocation failure injection (glibc only) ----
 * The test defines malloc/calloc/realloc/free so that the allocation with
 * index fail_index inside a tracked window fails, and counts the blocks
 * alive, to prove that every failure path frees what it took. They forward
 * to glibc's allocator, or under AddressSanitizer (gcc's -fsanitize=address
 * defines __SANITIZE_ADDRESS__, clang says so through __has_feature) to the
 * sanitizer's: its malloc, calloc, realloc and free are weak aliases of
 * __interceptor_malloc and so on (gcc's libasan and clang's runtime alike),
 * which ours override and call, so that ASan still checks every block. */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#if defined(__GLIBC__)
#define HAVE_ALLOC_HOOKS 1
#ifdef TEST_ASAN
#define NEXT_ALLOC(f) __interceptor_##f
#else
#define NEXT_ALLOC(f) __libc_##f
#endif
extern void *NEXT_ALLOC(malloc)(size_t);
extern void *NEXT_ALLOC(calloc)(size_t, size_t);
extern void *NEXT_ALLOC(realloc)(void *, size_t);
extern void NEXT_ALLOC(free)(void *);
/* volatile: the compiler assumes that malloc touches no user globals */
static volatile int tracking = 0;
static volatile long alloc_index = 0, fail_index = -1, live = 0;

static bool inject(void) { return tracking && alloc_index++ == fail_index; }

void *malloc(size_t n) {
  void *p;
  if (inject()) return NULL;
  p = NEXT_ALLOC(malloc)(n);
  if (tracking && p) live++;
  return p;
}
void *calloc(size_t a, size_t b) {
  void *p;
  if (inject()) return NULL;
  p = NEXT_ALLOC(calloc)(a, b);
  if (tracking && p) live++;
  return p;
}
void *realloc(void *q, size_t n) {
  void *p;
  if (inject()) return NULL;
  p = NEXT_ALLOC(realloc)(q, n);
  if (tracking && p && !q) live++;
  return p;
}
void free(void *p) {
  if (tracking && p) live--;
  NEXT_ALLOC(free)
  (p);
}
#endif

/* ---- files ---- */

/* Checks the CSR invariants of A: Ap monotone from 0 to nnz, columns in
 * range and strictly increasing within each row. */
static bool csr_valid(const sc_csr *A, const char *name) {
  if (!A || !A->Ap || A->Ap[0] != 0 || A->Ap[A->m] != A->nnz) {
    printf("FAIL %s: bad Ap ends\n", name);
    return false;
  }
  for (int64_t i = 0; i < A->m; i++) {
    if (A->Ap[i + 1] < A->Ap[i]) {
      printf("FAIL %s: Ap decreases at row %lld\n", name, (long long)i);
      return false;
    }
    for (int64_t p = A->Ap[i]; p < A->Ap[i + 1]; p++) {
      if (A->Aj[p] < 0 || A->Aj[p] >= A->k || (p > A->Ap[i] && A->Aj[p] <= A->Aj[p - 1])) {
        printf("FAIL %s: bad column at row %lld, p %lld\n", name, (long long)i, (long long)p);
        return false;
      }
    }
  }
  return true;
}

/* ---- valid inputs ---- */

#define I64(...) ((const int64_t[]){__VA_ARGS__})
#define F64(...) ((const double[]){__VA_ARGS__})

typedef struct valid_case {
  const char *name;
  const char *text;
  bool gz;
  mm_field field;
  mm_symmetry sym;
  int64_t entries; /* the size line's third number */
  int64_t m, k, nnz;
  const int64_t *Ap, *Aj; /* [m+1], [nnz] */
  const double *Ax; /* [nnz] */
} valid_case;

#define RG "%%MatrixMarket matrix coordinate real general\n"

static const valid_case valid[] = {
    {"real general, comment", RG "% a comment\n3 4 4\n1 1 1.5\n3 4 -2e3\n2 2 0.25\n1 3 7\n", 0,
     MM_REAL, MM_GENERAL, 4, 3, 4, 4, I64(0, 2, 3, 4), I64(0, 2, 1, 3), F64(1.5, 7, 0.25, -2000)},
    {"upper case, CRLF, tabs",
     "%%MATRIXMARKET Matrix COORDINATE Real GENERAL\r\n%c\r\n\r\n2\t2\t2\r\n1\t2\t3.5\r\n\r\n2 "
     "1 -1\r\n",
     0, MM_REAL, MM_GENERAL, 2, 2, 2, 2, I64(0, 1, 2), I64(1, 0), F64(3.5, -1)},
    {"no final newline", RG "2 2 2\n1 1 1\n2 2 4", 0, MM_REAL, MM_GENERAL, 2, 2, 2, 2,
     I64(0, 1, 2), I64(0, 1), F64(1, 4)},
    {"no final newline, CR", RG "2 2 1\n2 2 4\r", 0, MM_REAL, MM_GENERAL, 1, 2, 2, 1,
     I64(0, 0, 1), I64(1), F64(4)},
    {"blank lines, blanks, indented comments",
     RG "\n   % indented comment\n%%another\n\n  \t\n 2  2   3 \n\n \t \n  1 1   1  \n\n\n2\t\t1 "
        "2\t\n \n1 2 3\n\n\n",
     0, MM_REAL, MM_GENERAL, 3, 2, 2, 3, I64(0, 2, 3), I64(0, 1, 0), F64(1, 3, 2)},
    {"symmetric real",
     "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 1\n2 1 2\n3 2 3\n3 3 4\n", 0,
     MM_REAL, MM_SYMMETRIC, 4, 3, 3, 6, I64(0, 2, 4, 6), I64(0, 1, 0, 2, 1, 2),
     F64(1, 2, 2, 3, 3, 4)},
    {"skew-symmetric",
     "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 3\n2 1 2\n3 1 -1.5\n3 2 4\n", 0,
     MM_REAL, MM_SKEW, 3, 3, 3, 6, I64(0, 2, 4, 6), I64(1, 2, 0, 2, 0, 1),
     F64(-2, 1.5, 2, -4, -1.5, 4)},
    {"hermitian real = symmetric",
     "%%MatrixMarket matrix coordinate real hermitian\n2 2 2\n1 1 1\n2 1 5\n", 0, MM_REAL,
     MM_HERMITIAN, 2, 2, 2, 3, I64(0, 2, 3), I64(0, 1, 0), F64(1, 5, 5)},
    {"hermitian integer", "%%MatrixMarket matrix coordinate integer hermitian\n2 2 1\n2 1 -3\n",
     0, MM_INTEGER, MM_HERMITIAN, 1, 2, 2, 2, I64(0, 1, 2), I64(1, 0), F64(-3, -3)},
    {"duplicates summed in file order",
     RG "2 3 7\n1 1 1\n1 1 2\n2 1 3\n1 1 4\n1 3 1e16\n1 3 1\n1 3 -1e16\n", 0, MM_REAL,
     MM_GENERAL, 7, 2, 3, 3, I64(0, 2, 3), I64(0, 2, 0), F64(7, 0, 3)},
    {"symmetric duplicate from both triangles",
     "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 1\n1 2 2\n", 0, MM_REAL,
     MM_SYMMETRIC, 2, 2, 2, 2, I64(0, 1, 2), I64(1, 0), F64(3, 3)},
    {"explicit zeros kept", RG "2 2 3\n1 1 0\n2 1 0.0\n2 2 -0e5\n", 0, MM_REAL, MM_GENERAL, 3, 2,
     2, 3, I64(0, 1, 3), I64(0, 0, 1), F64(0, 0, 0)},
    {"rectangular pattern", "%%MatrixMarket matrix coordinate pattern general\n2 5 3\n1 5\n2 1\n1 2\n",
     0, MM_PATTERN, MM_GENERAL, 3, 2, 5, 3, I64(0, 2, 3), I64(1, 4, 0), F64(1, 1, 1)},
    {"pattern symmetric",
     "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n2 1\n3 3\n3 1\n", 0, MM_PATTERN,
     MM_SYMMETRIC, 3, 3, 3, 5, I64(0, 2, 3, 5), I64(1, 2, 0, 0, 2), F64(1, 1, 1, 1, 1)},
    {"pattern duplicates", "%%MatrixMarket matrix coordinate pattern general\n1 2 2\n1 2\n1 2\n",
     0, MM_PATTERN, MM_GENERAL, 2, 1, 2, 1, I64(0, 1), I64(1), F64(2)},
    {"integer exact int64",
     "%%MatrixMarket matrix coordinate integer general\n2 2 4\n1 1 9223372036854775807\n1 2 "
     "-9223372036854775808\n2 1 +5\n2 2 -0\n",
     0, MM_INTEGER, MM_GENERAL, 4, 2, 2, 4, I64(0, 2, 4), I64(0, 1, 0, 1),
     F64(9223372036854775807.0, -9223372036854775808.0, 5, 0)},
    {"integer symmetric",
     "%%MatrixMarket matrix coordinate integer symmetric\n2 2 2\n1 1 7\n2 1 -2\n", 0, MM_INTEGER,
     MM_SYMMETRIC, 2, 2, 2, 3, I64(0, 2, 3), I64(0, 1, 0), F64(7, -2, -2)},
    {"widest column count (32-bit column indices)", RG "3 2147483647 2\n1 2147483647 1.5\n3 1 2\n", 0, MM_REAL,
     MM_GENERAL, 2, 3, 2147483647, 2, I64(0, 1, 1, 2), I64(2147483646, 0), F64(1.5, 2)},
    {"empty 0 x 0", RG "0 0 0\n", 0, MM_REAL, MM_GENERAL, 0, 0, 0, 0, I64(0), NULL, NULL},
    {"no entries", RG "3 2 0\n\n", 0, MM_REAL, MM_GENERAL, 0, 3, 2, 0, I64(0, 0, 0, 0), NULL,
     NULL},
    {"real syntax and rounding",
     RG "1 12 12\n1 1 .5\n1 2 5.\n1 3 1E2\n1 4 +1e+2\n1 5 -1.e-2\n1 6 0.000001\n"
        "1 7 123456789012345678901234\n1 8 1.7976931348623157e308\n1 9 4.9e-324\n"
        "1 10 1e-400\n1 11 0.1000000000000000055511151231257827\n1 12 3.14159265358979323846\n",
     0, MM_REAL, MM_GENERAL, 12, 1, 12, 12, I64(0, 12), I64(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11),
     F64(.5, 5., 1E2, 1e2, -1.e-2, 0.000001, 123456789012345678901234.0, 1.7976931348623157e308,
         4.9e-324, 0.0, 0.1, 3.14159265358979323846)},
    {"unsorted row, long", RG "1 40 40\n"
                              "1 40 40\n1 39 39\n1 38 38\n1 37 37\n1 36 36\n1 35 35\n1 34 34\n1 33 33\n1 32 32\n1 31 31\n"
                              "1 30 30\n1 29 29\n1 28 28\n1 27 27\n1 26 26\n1 25 25\n1 24 24\n1 23 23\n1 22 22\n1 21 21\n"
                              "1 20 20\n1 19 19\n1 18 18\n1 17 17\n1 16 16\n1 15 15\n1 14 14\n1 13 13\n1 12 12\n1 11 11\n"
                              "1 10 10\n1 9 9\n1 8 8\n1 7 7\n1 6 6\n1 5 5\n1 4 4\n1 3 3\n1 2 2\n1 1 1\n",
     0, MM_REAL, MM_GENERAL, 40, 1, 40, 40,
     I64(0, 40), I64(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39),
     F64(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
         25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40)},
    {"gz real general", RG "% a comment\n3 4 4\n1 1 1.5\n3 4 -2e3\n2 2 0.25\n1 3 7\n", 1,
     MM_REAL, MM_GENERAL, 4, 3, 4, 4, I64(0, 2, 3, 4), I64(0, 2, 1, 3), F64(1.5, 7, 0.25, -2000)},
    {"gz skew CRLF",
     "%%MatrixMarket matrix coordinate real skew-symmetric\r\n3 3 3\r\n2 1 2\r\n3 1 -1.5\r\n3 2 "
     "4\r\n",
     1, MM_REAL, MM_SKEW, 3, 3, 3, 6, I64(0, 2, 4, 6), I64(1, 2, 0, 2, 0, 1),
     F64(-2, 1.5, 2, -4, -1.5, 4)},
    {"gz empty matrix", RG "0 0 0\n", 1, MM_REAL, MM_GENERAL, 0, 0, 0, 0, I64(0), NULL, NULL},
};

static void test_valid(void) {
  for (size_t c = 0; c < sizeof valid / sizeof valid[0]; c++) {
    const valid_case *v = &valid[c];
    char path[512];
    sc_csr *A = NULL;
    mm_header h;
    shiro_error err = {{0}};
    tmp_path(path, sizeof path, v->gz ? "valid.mtx.gz" : "valid.mtx");
    if (write_file(path, v->text, strlen(v->text), v->gz)) {
      CHECK(0, "%s: cannot write %s", v->name, path);
      continue;
    }
    shiro_status st = mm_read(path, &A, &h, &err);
    CHECK(st == SHIRO_OK, "%s: status %d (%s)", v->name, (int)st, err.message);
    if (st == SHIRO_OK && A) {
      CHECK(h.field == v->field && h.symmetry == v->sym && h.entries == v->entries &&
                h.m == v->m && h.k == v->k,
            "%s: header %d %d %lld", v->name, (int)h.field, (int)h.symmetry,
            (long long)h.entries);
      CHECK(A->m == v->m && A->k == v->k && A->nnz == v->nnz, "%s: shape %lld x %lld, nnz %lld",
            v->name, (long long)A->m, (long long)A->k, (long long)A->nnz);
      if (A->m == v->m && A->nnz == v->nnz) {
        CHECK(memcmp(A->Ap, v->Ap, (size_t)(v->m + 1) * sizeof(int64_t)) == 0, "%s: Ap", v->name);
        for (int64_t p = 0; p < v->nnz; p++) {
          CHECK(A->Aj[p] == v->Aj[p] && A->Ax[p] == v->Ax[p],
                "%s: entry %lld is (%lld, %.17g), expected (%lld, %.17g)", v->name, (long long)p,
                (long long)A->Aj[p], A->Ax[p], (long long)v->Aj[p], v->Ax[p]);
        }
      }
      CHECK(csr_valid(A, v->name), "%s: CSR invalid", v->name);
    }
    sc_csr_free(A);
    unlink(path);
  }
}

/* ---- mangled inputs ---- */

typedef struct bad_case {
  const char *name;
  const char *text;
  size_t len; /* 0: strlen(text) */
  shiro_status status;
  const char *needle; /* must occur in the message */
} bad_case;

#define PG "%%MatrixMarket matrix coordinate pattern general\n"
#define IG "%%MatrixMarket matrix coordinate integer general\n"

static const bad_case bad[] = {
    {"64-bit column count", RG "3 5000000000 2\n1 4999999999 1.5\n3 1 2\n", 0, SHIRO_ERR_UNSUPPORTED,
     ": the matrix has 5000000000 columns; at most 2147483647 are supported (32-bit column indices)"},
    {"int64 max columns", PG "1 9223372036854775807 1\n1 9223372036854775807\n", 0, SHIRO_ERR_UNSUPPORTED,
     ": the matrix has 9223372036854775807 columns; at most 2147483647 are supported"},
    {"empty file", "", 0, SHIRO_ERR_PARSE, ":1: missing Matrix Market banner"},
    {"no banner", "3 3 1\n1 1 1\n", 0, SHIRO_ERR_PARSE,
     ":1: missing Matrix Market banner (expected '%%MatrixMarket matrix coordinate <field> "
     "<symmetry>', found '3')"},
    {"banner not first", "\n" RG "1 1 0\n", 0, SHIRO_ERR_PARSE,
     ":1: missing Matrix Market banner (expected '%%MatrixMarket matrix coordinate <field> "
     "<symmetry>', found end of line)"},
    {"banner glued", "%%MatrixMarketmatrix coordinate real general\n1 1 0\n", 0, SHIRO_ERR_PARSE,
     ":1: missing Matrix Market banner"},
    {"vector object", "%%MatrixMarket vector coordinate real general\n1 1 0\n", 0, SHIRO_ERR_PARSE,
     ":1: unknown object in banner (expected 'matrix', found 'vector')"},
    {"array format", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 0,
     SHIRO_ERR_PARSE, ":1: array format is not supported (expected 'coordinate', found 'array')"},
    {"unknown format", "%%MatrixMarket matrix coord real general\n", 0, SHIRO_ERR_PARSE,
     ":1: unknown format in banner (expected 'coordinate', found 'coord')"},
    {"complex field", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 0,
     SHIRO_ERR_PARSE,
     ":1: complex matrices are not supported (expected real, integer or pattern, found "
     "'complex')"},
    {"complex hermitian", "%%MatrixMarket matrix coordinate complex hermitian\n1 1 0\n", 0,
     SHIRO_ERR_PARSE, ":1: complex matrices are not supported"},
    {"unknown field", "%%MatrixMarket matrix coordinate double general\n", 0, SHIRO_ERR_PARSE,
     ":1: unknown field in banner (expected real, integer or pattern, found 'double')"},
    {"unknown symmetry", "%%MatrixMarket matrix coordinate real symmetrical\n", 0,
     SHIRO_ERR_PARSE, ":1: unknown symmetry in banner (expected general, symmetric, "
                      "skew-symmetric or hermitian, found 'symmetrical')"},
    {"short banner", "%%MatrixMarket matrix coordinate real\n1 1 0\n", 0, SHIRO_ERR_PARSE,
     ":1: unknown symmetry in banner (expected general, symmetric, skew-symmetric or hermitian, "
     "found end of line)"},
    {"banner only word", "%%MatrixMarket\n", 0, SHIRO_ERR_PARSE,
     ":1: unknown object in banner (expected 'matrix', found end of line)"},
    {"banner trailing garbage", "%%MatrixMarket matrix coordinate real general extra\n1 1 0\n", 0,
     SHIRO_ERR_PARSE, ":1: trailing garbage on the banner (expected end of line, found 'extra')"},
    {"old Mac line ends", "%%MatrixMarket matrix coordinate real general\r1 1 0\r", 0,
     SHIRO_ERR_PARSE, ":1: trailing garbage on the banner (expected end of line, found '\\x0d1')"},
    {"pattern hermitian", "%%MatrixMarket matrix coordinate pattern hermitian\n1 1 0\n", 0,
     SHIRO_ERR_PARSE, ":1: hermitian symmetry needs values"},
    {"missing size line", RG "% only\n%comments\n", 0, SHIRO_ERR_PARSE,
     ":4: missing size line (expected 'rows columns entries', found end of file)"},
    {"banner without newline", "%%MatrixMarket matrix coordinate real general", 0,
     SHIRO_ERR_PARSE, ":2: missing size line"},
    {"short size line", RG "3 3\n1 1 1\n", 0, SHIRO_ERR_PARSE,
     ":2: short size line (expected number of entries, found end of line)"},
    {"empty size fields", RG "%c\n  3\r\n", 0, SHIRO_ERR_PARSE,
     ":3: short size line (expected number of columns, found end of line)"},
    {"negative rows", RG "-3 3 1\n1 1 1\n", 0, SHIRO_ERR_PARSE,
     ":2: negative number of rows (expected >= 0, found '-3')"},
    {"negative entries", RG "3 3 -1\n", 0, SHIRO_ERR_PARSE,
     ":2: negative number of entries (expected >= 0, found '-1')"},
    {"size overflow", RG "99999999999999999999 3 1\n", 0, SHIRO_ERR_PARSE,
     ":2: number of rows overflows int64 (found '99999999999999999999')"},
    {"size just over int64", RG "3 9223372036854775808 1\n", 0, SHIRO_ERR_PARSE,
     ":2: number of columns overflows int64"},
    {"size not a number", RG "3 x 1\n", 0, SHIRO_ERR_PARSE,
     ":2: bad size line (expected number of columns, found 'x')"},
    {"size fraction", RG "3.0 3 1\n", 0, SHIRO_ERR_PARSE,
     ":2: bad size line (expected number of rows, found '3.0')"},
    {"size exponent", RG "3 3 1e2\n", 0, SHIRO_ERR_PARSE,
     ":2: bad size line (expected number of entries, found '1e2')"},
    {"size trailing garbage", RG "3 3 1 4\n1 1 1\n", 0, SHIRO_ERR_PARSE,
     ":2: trailing garbage on the size line (expected end of line, found '4')"},
    {"symmetric not square", "%%MatrixMarket matrix coordinate real symmetric\n3 4 0\n", 0,
     SHIRO_ERR_PARSE, ":2: a symmetric, skew-symmetric or hermitian matrix must be square "
                      "(expected rows == columns, found 3 x 4)"},
    {"skew not square", "%%MatrixMarket matrix coordinate real skew-symmetric\n%\n3 4 0\n", 0,
     SHIRO_ERR_PARSE, ":3: a symmetric, skew-symmetric or hermitian matrix must be square"},
    {"hermitian not square", "%%MatrixMarket matrix coordinate integer hermitian\n4 3 0\n", 0,
     SHIRO_ERR_PARSE, "found 4 x 3)"},
    {"row zero", RG "3 3 2\n1 1 1\n0 1 1\n", 0, SHIRO_ERR_PARSE,
     ":4: row index out of range (expected 1..3, found '0')"},
    {"row too big", RG "3 3 1\n4 1 1\n", 0, SHIRO_ERR_PARSE,
     ":3: row index out of range (expected 1..3, found '4')"},
    {"row negative", RG "3 3 1\n-1 1 1\n", 0, SHIRO_ERR_PARSE,
     ":3: row index out of range (expected 1..3, found '-1')"},
    {"column too big (rectangular)", RG "3 2 1\n3 3 1\n", 0, SHIRO_ERR_PARSE,
     ":3: column index out of range (expected 1..2, found '3')"},
    {"column zero", PG "3 2 1\n\n1 0\n", 0, SHIRO_ERR_PARSE,
     ":4: column index out of range (expected 1..2, found '0')"},
    {"row overflow", RG "3 3 1\n99999999999999999999999 1 1\n", 0, SHIRO_ERR_PARSE,
     ":3: row index overflows int64 (found '99999999999999999999999')"},
    {"row not a number", RG "3 3 1\na 1 1\n", 0, SHIRO_ERR_PARSE,
     ":3: expected row index, found 'a'"},
    {"row fraction", RG "3 3 1\n1.0 1 1\n", 0, SHIRO_ERR_PARSE,
     ":3: expected row index, found '1.0'"},
    {"row hex", RG "3 3 1\n0x1 1 1\n", 0, SHIRO_ERR_PARSE, ":3: expected row index, found '0x1'"},
    {"column missing", RG "3 3 1\n1\n", 0, SHIRO_ERR_PARSE,
     ":3: expected column index, found end of line"},
    {"column missing CRLF", RG "3 3 1\r\n1 \r\n", 0, SHIRO_ERR_PARSE,
     ":3: expected column index, found end of line"},
    {"column garbage", RG "3 3 1\n1 b 1\n", 0, SHIRO_ERR_PARSE,
     ":3: expected column index, found 'b'"},
    {"value missing", RG "3 3 2\n1 1 1\n2 2\n", 0, SHIRO_ERR_PARSE,
     ":4: expected real value, found end of line"},
    {"integer value missing", IG "3 3 1\n2 2 \n", 0, SHIRO_ERR_PARSE,
     ":3: expected integer value, found end of line"},
    {"value garbage", RG "3 3 1\n1 1 abc\n", 0, SHIRO_ERR_PARSE,
     ":3: expected real value, found 'abc'"},
    {"value glued garbage", RG "3 3 1\n1 1 1.0x\n", 0, SHIRO_ERR_PARSE,
     ":3: expected real value, found '1.0x'"},
    {"value lone exponent", RG "3 3 1\n1 1 1e\n", 0, SHIRO_ERR_PARSE,
     ":3: expected real value, found '1e'"},
    {"value lone dot", RG "3 3 1\n1 1 .\n", 0, SHIRO_ERR_PARSE,
     ":3: expected real value, found '.'"},
    {"value two signs", RG "3 3 1\n1 1 +-1\n", 0, SHIRO_ERR_PARSE,
     ":3: expected real value, found '+-1'"},
    {"value inf", RG "3 3 1\n1 1 inf\n", 0, SHIRO_ERR_PARSE,
     ":3: expected real value, found 'inf'"},
    {"value -infinity", RG "3 3 1\n1 1 -Infinity\n", 0, SHIRO_ERR_PARSE,
     ":3: expected real value, found '-Infinity'"},
    {"value nan", RG "3 3 1\n1 1 nan\n", 0, SHIRO_ERR_PARSE,
     ":3: expected real value, found 'nan'"},
    {"value hex float", RG "3 3 1\n1 1 0x1p3\n", 0, SHIRO_ERR_PARSE,
     ":3: expected real value, found '0x1p3'"},
    {"value comma decimal", RG "3 3 1\n1 1 1,5\n", 0, SHIRO_ERR_PARSE,
     ":3: expected real value, found '1,5'"},
    {"real overflow", RG "3 3 1\n1 1 1e309\n", 0, SHIRO_ERR_PARSE,
     ":3: real value overflows double (found '1e309')"},
    {"real overflow negative", RG "3 3 1\n1 1 -1.8e308\n", 0, SHIRO_ERR_PARSE,
     ":3: real value overflows double (found '-1.8e308')"},
    {"real overflow long exponent", RG "3 3 1\n1 1 1e99999999999999999999999\n", 0,
     SHIRO_ERR_PARSE, ":3: real value overflows double"},
    {"integer fraction", IG "3 3 1\n1 1 1.5\n", 0, SHIRO_ERR_PARSE,
     ":3: expected integer value, found '1.5'"},
    {"integer exponent", IG "3 3 1\n1 1 1e3\n", 0, SHIRO_ERR_PARSE,
     ":3: expected integer value, found '1e3'"},
    {"integer trailing dot", IG "3 3 1\n1 1 7.\n", 0, SHIRO_ERR_PARSE,
     ":3: expected integer value, found '7.'"},
    {"integer overflow", IG "3 3 1\n1 1 9223372036854775808\n", 0, SHIRO_ERR_PARSE,
     ":3: integer value overflows int64 (found '9223372036854775808')"},
    {"integer negative overflow", IG "3 3 1\n1 1 -9223372036854775809\n", 0, SHIRO_ERR_PARSE,
     ":3: integer value overflows int64"},
    {"entry trailing garbage", RG "3 3 1\n1 1 1.0 x\n", 0, SHIRO_ERR_PARSE,
     ":3: trailing garbage on the entry line (expected end of line, found 'x')"},
    {"entry extra number", IG "3 3 1\n1 1 1 0\n", 0, SHIRO_ERR_PARSE,
     ":3: trailing garbage on the entry line (expected end of line, found '0')"},
    {"value in pattern file", PG "3 3 2\n1 1\n2 2 1.0\n", 0, SHIRO_ERR_PARSE,
     ":4: a value in a pattern matrix (expected end of line, found '1.0')"},
    {"lone CR in entry", RG "3 3 1\n1 1 1\r2\n", 0, SHIRO_ERR_PARSE,
     ":3: trailing garbage on the entry line (expected end of line, found '\\x0d2')"},
    {"NUL byte", RG "3 3 1\n1 1 1\0\n", sizeof(RG "3 3 1\n1 1 1\0\n") - 1, SHIRO_ERR_PARSE,
     ":3: expected real value, found '1\\x00'"},
    {"comment among entries", RG "3 3 2\n1 1 1\n% late comment\n2 2 2\n", 0, SHIRO_ERR_PARSE,
     ":4: expected row index, found '%'"},
    {"skew diagonal", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 "
                      "0\n",
     0, SHIRO_ERR_PARSE,
     ":4: diagonal entry in a skew-symmetric matrix (expected row != column, found 2 2)"},
    {"fewer entries", RG "3 3 3\n1 1 1\n2 2 2\n", 0, SHIRO_ERR_PARSE,
     ":5: unexpected end of file: fewer entries than the size line says (expected 3, found 2)"},
    {"fewer entries, no final newline", RG "3 3 3\n1 1 1\n2 2 2", 0, SHIRO_ERR_PARSE,
     ":5: unexpected end of file: fewer entries than the size line says (expected 3, found 2)"},
    {"no entries at all", RG "%\n3 3 1\n\n", 0, SHIRO_ERR_PARSE,
     ":5: unexpected end of file: fewer entries than the size line says (expected 1, found 0)"},
    {"more entries", RG "3 3 2\n1 1 1\n2 2 2\n\n3 3 3\n", 0, SHIRO_ERR_PARSE,
     ":6: more entries than the size line says (expected 2, found '3')"},
    {"more entries than zero", PG "3 3 0\n1 1\n", 0, SHIRO_ERR_PARSE,
     ":3: more entries than the size line says (expected 0, found '1')"},
    {"rows beyond memory", RG "576460752303423488 1 0\n", 0, SHIRO_ERR_NOMEM,
     "out of memory for the row pointers"},
};

static void test_bad(void) {
  for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
    const bad_case *b = &bad[c];
    size_t len = b->len ? b->len : strlen(b->text);
    for (int gz = 0; gz < 2; gz++) { /* each case plain and gzip-compressed */
      char path[512];
      sc_csr *A = (sc_csr *)&path; /* must be set to NULL */
      shiro_error err = {{0}};
      tmp_path(path, sizeof path, gz ? "bad.mtx.gz" : "bad.mtx");
      if (write_file(path, b->text, len, gz)) {
        CHECK(0, "%s: cannot write %s", b->name, path);
        continue;
      }
      shiro_status st = mm_read(path, &A, NULL, &err);
      CHECK(st == b->status, "%s%s: status %d, expected %d (%s)", b->name, gz ? " (gz)" : "",
            (int)st, (int)b->status, err.message);
      CHECK(A == NULL, "%s: out not NULL on failure", b->name);
      CHECK(strncmp(err.message, path, strlen(path)) == 0 && strstr(err.message, b->needle),
            "%s%s: message\n    '%s'\n  lacks path or\n    '%s'", b->name, gz ? " (gz)" : "",
            err.message, b->needle);
      if (st == SHIRO_OK) sc_csr_free(A);
      unlink(path);
    }
  }
}

/* ---- gzip damage, I/O errors, long lines ---- */

/* A valid real general file of n entries in buf (malloc'ed), its length in *len. */
static char *make_text(int64_t n, size_t *len) {
  size_t cap = 128 + (size_t)n * 64, o = 0;
  char *t = malloc(cap);
  if (!t) return NULL;
  o += (size_t)snprintf(t + o, cap - o, "%s%lld %lld %lld\n", RG, (long long)n, (long long)n,
                        (long long)n);
  for (int64_t e = 0; e < n; e++)
    o += (size_t)snprintf(t + o, cap - o, "%lld %lld %.17g\n", (long long)(e % n + 1),
                          (long long)((e * 7919) % n + 1), (double)e / 3.0);
  *len = o;
  return t;
}

static long file_size(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

static void test_gzip_damage(void) {
  char path[512], cut[512];
  size_t len = 0;
  char *text = make_text(20000, &len), *raw = NULL;
  tmp_path(path, sizeof path, "whole.mtx.gz");
  tmp_path(cut, sizeof cut, "cut.mtx.gz");
  if (!text || write_file(path, text, len, true)) {
    CHECK(0, "cannot write %s", path);
    goto done;
  }
  long size = file_size(path);
  raw = malloc((size_t)size);
  FILE *f = fopen(path, "rb");
  CHECK(f && raw && fread(raw, 1, (size_t)size, f) == (size_t)size, "cannot read back %s", path);
  if (f) fclose(f);
  if (!raw) goto done;
  { /* whole file reads */
    sc_csr *A = NULL;
    shiro_error err = {{0}};
    shiro_status st = mm_read(path, &A, NULL, &err);
    CHECK(st == SHIRO_OK && A && A->nnz == 20000, "whole gz: status %d (%s)", (int)st,
          err.message);
    sc_csr_free(A);
  }
  /* cut anywhere: in the header, the middle, the last block, the 8-byte trailer */
  long cuts[] = {1, 2, 10, size / 3, size / 2, size - 100, size - 8, size - 4, size - 1};
  for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
    sc_csr *A = (sc_csr *)&path;
    shiro_error err = {{0}};
    if (write_file(cut, raw, (size_t)cuts[c], false)) continue;
    shiro_status st = mm_read(cut, &A, NULL, &err);
    if (cuts[c] < 2) { /* no gzip magic left: read as text, no banner */
      CHECK(st == SHIRO_ERR_PARSE && strstr(err.message, ":1: missing Matrix Market banner"),
            "cut at %ld: %d (%s)", cuts[c], (int)st, err.message);
    } else {
      CHECK(st == SHIRO_ERR_PARSE && strstr(err.message, "truncated gzip file") &&
                strncmp(err.message, cut, strlen(cut)) == 0,
            "cut at %ld of %ld: status %d (%s)", cuts[c], size, (int)st, err.message);
    }
    CHECK(A == NULL, "cut at %ld: out not NULL", cuts[c]);
    unlink(cut);
  }
  /* damage: flipped bytes in the data and in the CRC; must fail cleanly */
  long flips[] = {size / 2, size - 6};
  for (size_t c = 0; c < sizeof flips / sizeof flips[0]; c++) {
    sc_csr *A = NULL;
    shiro_error err = {{0}};
    raw[flips[c]] ^= 0x55;
    if (!write_file(cut, raw, (size_t)size, false)) {
      shiro_status st = mm_read(cut, &A, NULL, &err);
      CHECK(st == SHIRO_ERR_PARSE && A == NULL, "flip at %ld: status %d (%s)", flips[c], (int)st,
            err.message);
      if (c == 1)
        CHECK(strstr(err.message, "corrupt gzip data") != NULL, "CRC flip: %s", err.message);
    }
    raw[flips[c]] ^= 0x55;
    sc_csr_free(A);
    unlink(cut);
  }
done:
  free(text);
  free(raw);
  unlink(path);
}

static void test_io_errors(void) {
  char path[512];
  shiro_error err = {{0}};
  sc_csr *A = (sc_csr *)&path;
  tmp_path(path, sizeof path, "does-not-exist.mtx");
  shiro_status st = mm_read(path, &A, NULL, &err);
  CHECK(st == SHIRO_ERR_IO && A == NULL && strstr(err.message, path) &&
            strstr(err.message, "cannot open: No such file or directory"),
        "missing file: %d (%s)", (int)st, err.message);
  st = mm_read(tmpdir, &A, NULL, &err);
  CHECK(st == SHIRO_ERR_IO && A == NULL && strstr(err.message, tmpdir) &&
            strstr(err.message, "Is a directory"),
        "directory: %d (%s)", (int)st, err.message);
  st = mm_read(NULL, &A, NULL, &err);
  CHECK(st == SHIRO_ERR_ARG, "NULL path: %d", (int)st);
  st = mm_read(path, NULL, NULL, NULL);
  CHECK(st == SHIRO_ERR_ARG, "NULL out: %d", (int)st);
}

/* A 5 MiB comment line is refused; a 3 MiB one straddling blocks is fine. */
static void test_long_lines(void) {
  for (int big = 0; big < 2; big++) {
    char path[512];
    size_t n = big ? (5u << 20) : (3u << 20), len;
    char *t = malloc(n + 256);
    sc_csr *A = NULL;
    shiro_error err = {{0}};
    if (!t) continue;
    len = (size_t)sprintf(t, "%s%%", RG);
    memset(t + len, 'c', n);
    len += n;
    len += (size_t)sprintf(t + len, "\n1 1 1\n1 1 2.5\n");
    tmp_path(path, sizeof path, "long.mtx");
    if (!write_file(path, t, len, false)) {
      shiro_status st = mm_read(path, &A, NULL, &err);
      if (big)
        CHECK(st == SHIRO_ERR_PARSE && strstr(err.message, ":2: line too long"),
              "5 MiB line: %d (%s)", (int)st, err.message);
      else
        CHECK(st == SHIRO_OK && A && A->nnz == 1 && A->Ax[0] == 2.5, "3 MiB line: %d (%s)",
              (int)st, err.message);
    }
    sc_csr_free(A);
    free(t);
    unlink(path);
  }
}

/* A file larger than one read block, lines straddling block ends, checked entry by entry. */
static void test_multi_block(void) {
  char path[512];
  size_t len = 0;
  int64_t n = 300000;
  char *text = make_text(n, &len);
  tmp_path(path, sizeof path, "multi.mtx");
  for (int gz = 0; gz < 2 && text; gz++) {
    sc_csr *A = NULL;
    shiro_error err = {{0}};
    if (write_file(path, text, len, gz)) break;
    shiro_status st = mm_read(path, &A, NULL, &err);
    CHECK(st == SHIRO_OK && A && A->nnz == n && csr_valid(A, "multi-block"),
          "multi-block (%zu bytes, gz %d): %d (%s)", len, gz, (int)st, err.message);
    if (st == SHIRO_OK && A) {
      /* entry e is (e, e*7919 mod n, e/3): one per row */
      int64_t bad_rows = 0;
      for (int64_t e = 0; e < n; e++)
        if (A->Ap[e + 1] - A->Ap[e] != 1 || A->Aj[A->Ap[e]] != (e * 7919) % n ||
            A->Ax[A->Ap[e]] != (double)e / 3.0)
          bad_rows++;
      CHECK(bad_rows == 0, "multi-block: %lld rows differ", (long long)bad_rows);
    }
    sc_csr_free(A);
    unlink(path);
  }
  free(text);
}

/* ---- randomized inputs against a dense brute-force reference ---- */

static const char *blank(void) {
  static const char *b[] = {" ", " ", " ", "\t", "  ", " \t "};
  return b[rnd(6)];
}

static void test_random(void) {
  static const char *fields[] = {"real", "integer", "pattern"};
  static const char *syms[] = {"general", "symmetric", "skew-symmetric", "hermitian"};
  enum { TRIALS = 400,
         MAXD = 7,
         MAXE = 30 };
  char text[8192], path[512];
  for (int trial = 0; trial < TRIALS; trial++) {
    int f = (int)rnd(3), y = (int)rnd(4);
    if (f == MM_PATTERN && y == MM_HERMITIAN) y = MM_SYMMETRIC;
    int64_t m = 1 + rnd(MAXD), k = y == MM_GENERAL ? 1 + rnd(MAXD) : m;
    int64_t ne = rnd(MAXE + 1);
    if (y == MM_SKEW && m == 1) ne = 0;
    const char *eol = rnd(4) == 0 ? "\r\n" : "\n";
    double D[MAXD * MAXD] = {0};
    bool P[MAXD * MAXD] = {0};
    size_t o = 0;
    bool gz = rnd(3) == 0;
    o += (size_t)snprintf(text + o, sizeof text - o, "%%%%MatrixMarket matrix coordinate %s %s%s",
                          fields[f], syms[y], eol);
    if (rnd(2)) o += (size_t)snprintf(text + o, sizeof text - o, "%% trial %d%s", trial, eol);
    o += (size_t)snprintf(text + o, sizeof text - o, "%lld%s%lld%s%lld%s", (long long)m, blank(),
                          (long long)k, blank(), (long long)ne, eol);
    for (int64_t e = 0; e < ne; e++) {
      int64_t i = rnd(m), j = rnd(k);
      double v = 1.0;
      if (y == MM_SKEW)
        while (i == j) i = rnd(m), j = rnd(k);
      if (rnd(5) == 0) o += (size_t)snprintf(text + o, sizeof text - o, "%s", eol);
      o += (size_t)snprintf(text + o, sizeof text - o, "%s%lld%s%lld", rnd(4) ? "" : blank(),
                            (long long)i + 1, blank(), (long long)j + 1);
      if (f == MM_REAL) {
        v = rnd(3) ? (double)(rnd(2001) - 1000) / 8.0 : (double)rng() / 1e10 - 9e8;
        o += (size_t)snprintf(text + o, sizeof text - o, "%s%.17g", blank(), v);
      } else if (f == MM_INTEGER) {
        v = (double)(rnd(21) - 10);
        o += (size_t)snprintf(text + o, sizeof text - o, "%s%lld", blank(), (long long)v);
      }
      o += (size_t)snprintf(text + o, sizeof text - o, "%s%s", rnd(4) ? "" : blank(), eol);
      D[i * k + j] += v; /* the reference sums in file order, like the reader */
      P[i * k + j] = true;
      if (y != MM_GENERAL && i != j) {
        D[j * k + i] += y == MM_SKEW ? -v : v;
        P[j * k + i] = true;
      }
    }
    tmp_path(path, sizeof path, gz ? "rand.mtx.gz" : "rand.mtx");
    if (write_file(path, text, o, gz)) {
      CHECK(0, "cannot write %s", path);
      continue;
    }
    sc_csr *A = NULL;
    shiro_error err = {{0}};
    shiro_status st = mm_read(path, &A, NULL, &err);
    CHECK(st == SHIRO_OK && A && A->m == m && A->k == k, "random trial %d: %d (%s)", trial,
          (int)st, err.message);
    if (st == SHIRO_OK && A && A->m == m && A->k == k && csr_valid(A, "random")) {
      int64_t p = 0, diff = 0;
      for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < k; j++) {
          if (!P[i * k + j]) continue;
          if (p >= A->Ap[i + 1] || A->Aj[p] != j || A->Ax[p] != D[i * k + j]) diff++;
          if (p < A->Ap[i + 1]) p++;
        }
      CHECK(diff == 0 && p == A->nnz, "random trial %d (%s %s, %lld x %lld): %lld differ\n%s",
            trial, fields[f], syms[y], (long long)m, (long long)k, (long long)diff, text);
    }
    sc_csr_free(A);
    unlink(path);
  }
}

/* ---- number scanners against the C library ---- */

/* Random decimal strings of many shapes: mm_scan_real must agree with strtod
 * bit for bit (fast path included), mm_scan_int64 with strtoll. */
static void test_scanners(void) {
  char tok[96];
  int64_t bad_real = 0, bad_int = 0;
  for (int t = 0; t < 300000; t++) {
    size_t o = 0;
    int nd = 1 + (int)rnd(t % 3 == 0 ? 25 : 17), dot = (int)rnd(nd + 2) - 1;
    if (rnd(3) == 0) tok[o++] = rnd(2) ? '-' : '+';
    for (int d = 0; d < nd; d++) {
      if (d == dot) tok[o++] = '.';
      tok[o++] = (char)('0' + (rnd(4) == 0 ? 0 : rnd(10)));
    }
    if (rnd(3) == 0)
      o += (size_t)snprintf(tok + o, sizeof tok - o, "e%s%d", rnd(2) ? "-" : "",
                            (int)rnd(rnd(4) == 0 ? 340 : 30));
    tok[o] = ' ';
    tok[o + 1] = '\0';
    const char *end = NULL;
    double v = 0, ref;
    char *q;
    mm_scan r = mm_scan_real(tok, &end, &v);
    bool same;
    ref = strtod(tok, &q);
    same = isinf(ref) ? r == MM_SCAN_RANGE : (r == MM_SCAN_OK && memcmp(&v, &ref, sizeof v) == 0);
    if ((!same || end != tok + o || q != tok + o) && bad_real++ == 0)
      printf("real scan mismatch: '%s' -> %d %.17g, strtod %.17g\n", tok, (int)r, v, ref);
    if (!memchr(tok, '.', o) && !memchr(tok, 'e', o)) {
      int64_t iv = 0;
      errno = 0;
      long long ir = strtoll(tok, &q, 10);
      r = mm_scan_int64(tok, &end, &iv);
      if (errno == ERANGE ? r != MM_SCAN_RANGE : (r != MM_SCAN_OK || iv != ir)) bad_int++;
    }
  }
  CHECK(bad_real == 0, "%lld real scans differ from strtod", (long long)bad_real);
  CHECK(bad_int == 0, "%lld integer scans differ from strtoll", (long long)bad_int);
}

/* ---- allocation failures ---- */

static void test_alloc_failures(void) {
#ifdef HAVE_ALLOC_HOOKS
  static const char *text =
      "%%MatrixMarket matrix coordinate real symmetric\n40 40 41\n"
      "1 1 1\n2 1 2\n3 1 3\n4 1 4\n5 1 5\n6 1 6\n7 1 7\n8 1 8\n9 1 9\n10 1 10\n11 1 11\n"
      "12 1 12\n13 1 13\n14 1 14\n15 1 15\n16 1 16\n17 1 17\n18 1 18\n19 1 19\n20 1 20\n"
      "21 1 21\n22 1 22\n23 1 23\n24 1 24\n25 1 25\n26 1 26\n27 1 27\n28 1 28\n29 1 29\n"
      "30 1 30\n31 1 31\n32 1 32\n33 1 33\n34 1 34\n35 1 35\n36 1 36\n37 1 37\n38 1 38\n"
      "40 1 39\n39 1 40\n2 1 -2\n";
  static void *volatile probe;
  /* Under valgrind (or another allocator wrapper) our malloc is not the one
   * called: the first allocation must fail if the hooks are active. */
  alloc_index = 0;
  fail_index = 0;
  tracking = 1;
  probe = malloc(16);
  tracking = 0;
  if (probe) {
    free(probe);
    alloc_skipped = "malloc is not this test's here (valgrind or another allocator replaces it)";
    return;
  }
  for (int gz = 0; gz < 2; gz++) {
    char path[512];
    int runs = 0;
    tmp_path(path, sizeof path, gz ? "alloc.mtx.gz" : "alloc.mtx");
    if (write_file(path, text, strlen(text), gz)) {
      CHECK(0, "cannot write %s", path);
      continue;
    }
    /* Fail allocation n, for n = 0, 1, ... until a run makes fewer than n+1
     * allocations. A failed allocation must give NOMEM, or be recovered from
     * (a reservation that is only a hint) with the right result. */
    for (long n = 0; n < 1000; n++) {
      sc_csr *A = NULL;
      shiro_error err = {{0}};
      int64_t nnz = -1, row0 = -1;
      shiro_status st;
      bool fired;
      alloc_index = 0;
      fail_index = n;
      live = 0;
      tracking = 1;
      st = mm_read(path, &A, NULL, &err);
      if (A) {
        nnz = A->nnz;
        row0 = A->Ap[1];
      }
      sc_csr_free(A);
      tracking = 0;
      fired = alloc_index > n;
      runs++;
      CHECK(live == 0, "alloc failure %ld (gz %d): %ld blocks leaked (status %d)", n, gz, live,
            (int)st);
      CHECK(st == SHIRO_ERR_NOMEM || (st == SHIRO_OK && nnz == 79 && row0 == 40),
            "alloc failure %ld (gz %d): status %d, nnz %lld (%s)", n, gz, (int)st,
            (long long)nnz, err.message);
      CHECK(st == SHIRO_OK || A == NULL, "alloc failure %ld: out not NULL", n);
      if (!fired) {
        CHECK(st == SHIRO_OK, "no allocation failed, yet status %d", (int)st);
        break;
      }
    }
    CHECK(runs > 3 && runs < 1000, "alloc loop (gz %d) ran %d times", gz, runs);
    alloc_runs += runs;
    unlink(path);
  }
#else
  alloc_skipped = "no glibc: this test cannot replace malloc";
#endif
}

/* ---- real matrices ---- */

/* Reads the matrix at path, which must be there, and checks its shape, its
 * nonzeros after expansion and its stored entries (entries < 0: unchecked). */
static void check_real(const char *file, int64_t m, int64_t k, int64_t nnz, int64_t entries) {
  sc_csr *A = NULL;
  mm_header h;
  shiro_error err = {{0}};
  if (access(file, R_OK) != 0) {
    CHECK(0, "%s: missing (%s)", file, strerror(errno));
    return;
  }
  shiro_status st = mm_read(file, &A, &h, &err);
  CHECK(st == SHIRO_OK && A, "%s: status %d (%s)", file, (int)st, err.message);
  if (st == SHIRO_OK && A) {
    CHECK(A->m == m && A->k == k && A->nnz == nnz && (entries < 0 || h.entries == entries),
          "%s: %lld x %lld, nnz %lld, entries %lld; expected %lld x %lld, nnz %lld, entries %lld",
          file, (long long)A->m, (long long)A->k, (long long)A->nnz, (long long)h.entries,
          (long long)m, (long long)k, (long long)nnz, (long long)entries);
    CHECK(csr_valid(A, file), "%s: invalid CSR", file);
  }
  sc_csr_free(A);
}

/* Every matrix of dir/MANIFEST.tsv (which must be there, and list at least
 * one): rows, cols, stored entries and expanded nnz. Returns how many. */
static int test_manifest(const char *dir) {
  char line[4096], path[4096];
  int n = 0;
  snprintf(path, sizeof path, "%s/MANIFEST.tsv", dir);
  FILE *f = fopen(path, "r");
  if (!f) {
    CHECK(0, "%s: cannot open (%s)", path, strerror(errno));
    return 0;
  }
  while (fgets(line, sizeof line, f)) {
    char *col[16] = {0};
    int c = 0;
    for (char *s = line, *t; c < 16 && (t = strsep(&s, "\t\n")) != NULL;) col[c++] = t;
    if (c < 11 || strcmp(col[0], "file") == 0) continue;
    snprintf(path, sizeof path, "%s/%s", dir, col[0]);
    check_real(path, atoll(col[3]), atoll(col[4]), atoll(col[10]), atoll(col[5]));
    n++;
  }
  fclose(f);
  CHECK(n > 0, "%s/MANIFEST.tsv lists no matrix", dir);
  return n;
}

/* The shared set dir (../shared/data/matrices): bcsstk13 by its known shape,
 * then every matrix of its manifest. Returns 0, 1 (failures printed), or 77
 * when dir is absent (said on stderr). */
static int test_shared_set(const char *dir) {
  char path[4096];
  if (access(dir, F_OK) != 0) {
    fprintf(stderr, "SKIP: the shared matrix set %s is absent (%s): its matrices are not read\n", dir, strerror(errno));
    return 77;
  }
  snprintf(path, sizeof path, "%s/bcsstk13.mtx.gz", dir);
  check_real(path, 2003, 2003, 83883, 42943);
  int nman = test_manifest(dir);
  printf("%d manifest matrices of %s, %d checks, %d failures\n", nman, dir, checks, failures);
  return failures ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc > 2) {
    fprintf(stderr, "usage: test_mm_read [SHARED_MATRICES_DIR]\n");
    return 1;
  }
  if (argc == 2) return test_shared_set(argv[1]);
  rng_seed(0x9e3779b97f4a7c15u);
  if (tmpdir_make("shiro_mm")) return 1;
  test_valid();
  test_bad();
  test_gzip_damage();
  test_io_errors();
  test_long_lines();
  test_multi_block();
  test_random();
  test_scanners();
  test_alloc_failures();
  check_real("data/karate.mtx", 34, 34, 156, 78);
  int nman = test_manifest("data");
  rmdir(tmpdir);
  printf("%zu valid cases, %zu mangled cases (x2: plain and gz), %d allocation-failure runs, "
         "%d shipped matrices (tests/data), %d checks, %d failures\n",
         sizeof valid / sizeof valid[0], sizeof bad / sizeof bad[0], alloc_runs, nman, checks,
         failures);
  if (failures) return 1;
  if (alloc_skipped) {
    fprintf(stderr, "SKIP: everything else passed, but the allocation-failure loop did not run: %s\n", alloc_skipped);
    return 77;
  }
  return 0;
}
