/* cpu_src16.h — the kernels of a 16-bit context's ops that read the call's 16-bit input in place
 * (cpu_src16.c), private to the CPU kernels. */
#ifndef SHIRO_CPU_SRC16_H
#define SHIRO_CPU_SRC16_H

#include "cpu_kargs.h"

/* The most values a row may have for a 16-bit destination (its float32 sums are kept on the stack). */
enum { SRC16_ROW_MAX = 1024 };

/* The kernel of an op whose source rows are 16-bit (bfloat16, or float16 where is_f16) and whose
 * destination rows are float32, dense rows of a->n values: a gather (kind_gather) widens rows, a
 * multiply (has_val) or add sums widened terms with the float32 kernels' bits. to16: a multiply
 * that assigns 16-bit rows instead (a->dst16, a->dt16; n <= SRC16_ROW_MAX), each row summed in
 * float32 then rounded once; NULL for another kind. avx2: the AVX2 variants (float16 also needs
 * F16C, else the portable one). */
rows_fn cpu_src16_kernel(int kind_gather, int has_val, int is_f16, int avx2, int to16);

#endif
