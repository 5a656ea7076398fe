/* layout_copy.h — copies between the caller's layouts of B and C and dense rows (layout_copy.c). */
#ifndef SHIRO_LAYOUT_COPY_H
#define SHIRO_LAYOUT_COPY_H

#include <stddef.h>
#include <stdint.h>

/* Copies rows × n values of esz bytes between a buffer whose value (i, j) lies at
 * i·rs + j·cs (cs = 1: row-major with leading dimension rs; else rs = 1: column-major with
 * leading dimension cs) and dense rows (value (i, j) at i·n + j): into the dense rows dst from src
 * if to_rows, else from the dense rows src into dst. On `threads` OpenMP threads. Local. */
void layout_copy(void *dst, const void *src, int64_t rows, int64_t n, int64_t rs, int64_t cs, int to_rows, size_t esz,
                 int threads);

#endif
