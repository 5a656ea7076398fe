/* cpu_kargs.h — what a CPU kernel reads (cpu_kernels.c, and cpu_strided.c's kernels of strided
 * layouts), private to those two files. */
#ifndef SHIRO_CPU_KARGS_H
#define SHIRO_CPU_KARGS_H

#include <stddef.h>
#include <stdint.h>

/* One op, its buffers resolved. */
typedef struct kargs {
  char *dst; /* the op's destination row 0 (buffer + dst_off rows) */
  const char *src; /* its source row 0 (buffer + src_off rows) */
  const int64_t *ptr; /* [nrows+1] row pointers into col / val */
  const int32_t *col, *rows; /* source rows; destination rows (NULL: row i) */
  const void *val; /* values (multiply), else NULL */
  int accum; /* 1: dst +=, 0: dst = */
  int64_t n; /* values per row */
  size_t row_bytes; /* bytes per row (dense rows) */
  uint16_t *dst16; /* cpu_src16.c's 16-bit destination (else NULL), of type dt16 */
  int dt16; /* shiro_dtype: SHIRO_BFLOAT16 or SHIRO_FLOAT16 */
  int64_t drs, dcs, srs, scs; /* strided kernels only: values from a row to the next and from a
                                 column to the next, in dst and in src (row-major: N or ld, 1;
                                 column-major: 1, ld) */
} kargs;

/* Rows lo .. hi-1 of an op. */
typedef void (*rows_fn)(const kargs *a, int64_t lo, int64_t hi);

/* cpu_strided.c: the kernel of an op over strided buffers: multiply (has_val) or add, float or
 * double; gather (kind_gather) copies values of esz bytes. Each destination value is its entries'
 * sum in stored order, rounded as the dense kernels round: the same bits. */
rows_fn cpu_strided_kernel(int kind_gather, int has_val, int is_double);

#endif
