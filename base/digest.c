/* digest.c — shiro_pattern_digest, the public entry to the pattern digest (digest.h). */
#include "digest.h"

uint64_t shiro_pattern_digest(int64_t nrows, int64_t ncols, const int64_t *rowptr, const int64_t *colind) {
  digest64 d;
  pattern_digest_begin(&d, nrows, ncols);
  for (int64_t i = 0; i < nrows; i++) pattern_digest_row(&d, 1, rowptr[i + 1] - rowptr[i], colind + rowptr[i]);
  return d.h;
}
