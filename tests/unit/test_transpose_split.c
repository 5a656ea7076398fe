/* test_transpose_split.c — when the transposed program splits an op by blocks of source rows
 * (runtime/transpose.c's transpose_split_count), on the shapes that R-MAT s18 gives at R = 2 and
 * R = 4 (N = 32 doubles, 256-byte rows, 4 MiB blocks of 16,384 rows) and at the edges.
 *
 * The rows of Mᵀ are counted, not spanned: at R = 4 the 13,500 B rows that three peers sent lie
 * among the partial rows they sent, over 32,900 rows of R; with the span the product with 65,536
 * rows of Y stayed whole and took 1.4x the forward's time for its entries. */
#include <stdint.h>

#include "internal.h"
#include "test_util.h"

/* One case: the blocks and the rows per block. */
static void expect_split(int64_t mt_rows, int64_t mt_cols, size_t row_bytes, size_t block, int forced, int64_t k,
                         int64_t brows) {
  int64_t b = -1;
  const int64_t got = transpose_split_count(mt_rows, mt_cols, row_bytes, block, forced, &b);
  EXPECT(got == k && b == brows, "%lld rows x %lld columns, %zu-byte rows, %zu-byte blocks%s: %lld blocks of %lld rows, not %lld of %lld",
         (long long)mt_rows, (long long)mt_cols, row_bytes, block, forced ? " (forced)" : "", (long long)got, (long long)b,
         (long long)k, (long long)brows);
}

int main(void) {
  const size_t mib4 = (size_t)4 << 20;
  /* R-MAT s18, R = 4: the B rows peers sent (13,500 over a span of 32,900 rows of R), 65,536 columns */
  expect_split(13500, 65536, 256, mib4, 0, 4, 16384);
  /* R = 2: 11,987 rows over 131,072 columns */
  expect_split(11987, 131072, 256, mib4, 0, 8, 16384);
  /* more than a quarter: whole (the partial rows peers sent, 29,179 of 65,536; a local product) */
  expect_split(29179, 65536, 256, mib4, 0, 1, 16384);
  expect_split(65536, 65536, 256, mib4, 0, 1, 16384);
  expect_split(16385, 65536, 256, mib4, 0, 1, 16384);
  expect_split(16384, 65536, 256, mib4, 0, 4, 16384); /* exactly a quarter: split */
  /* columns within one block: one op */
  expect_split(10, 16384, 256, mib4, 0, 1, 16384);
  expect_split(10, 16385, 256, mib4, 0, 2, 16384);
  /* rows wider than a block: one row per block */
  expect_split(1, 8, (size_t)8 << 20, mib4, 0, 8, 1);
  /* tests' forcing (SHIRO_TRANSPOSE_SPLIT): every op, few rows or not */
  expect_split(30, 34, 24, 24, 1, 34, 1);
  expect_split(30, 34, 24, 48, 1, 17, 2);
  if (!test_failures) printf("transpose_split_count: all cases ok\n");
  return test_failures ? 1 : 0;
}
