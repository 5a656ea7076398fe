/* cpu_kernels.h — the CPU kernels of the three compute shapes (cpu_kernels.c).
 *
 * Every kernel computes each destination row on one thread, its entries in
 * stored order, every product and every sum rounded on its own (no FMA: the
 * build pins -ffp-contract=off and the kernels use no FMA instructions), so
 * the bits do not depend on the thread count, the instruction set chosen, or
 * the call: the same bits as the CUDA kernels (__fmul_rn/__fadd_rn). */
#ifndef SHIRO_CPU_KERNELS_H
#define SHIRO_CPU_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"

/* A hook the kernels call between chunks of rows, outside any parallel
 * region, on the calling thread: e.g. MPI_Testall on the stage in flight, so
 * that messages progress while the rows are computed. poll returns nonzero
 * when it needs no more calls for this kernel. */
typedef struct cpu_progress {
  int (*poll)(void *arg);
  void *arg;
} cpu_progress;

/* Where value (i, j) of an op's two buffers lies: i·rs + j·cs values from the buffer's row 0
 * (dense rows: rs = n, cs = 1; the caller's layouts of B and C, shiro_spmm_layout: row-major with
 * ld, rs = ld, cs = 1, or column-major, rs = 1, cs = ld). */
typedef struct cpu_layout {
  int64_t dst_rs, dst_cs, src_rs, src_cs;
} cpu_layout;

/* Runs compute op `op` (RT_MULTIPLY, RT_ADD or RT_GATHER): dst and src the base
 * addresses of its buffers (row 0), n values per row of type double
 * (is_double) or float, dense rows (lay NULL) or as lay says (cpu_strided.c's
 * kernels: the same bits). OpenMP-parallel over the op's rows, split between
 * the threads by nonzeros (contiguous tasks of equal cost, taken in order), on
 * `threads` threads (0: omp_get_max_threads()); pg (NULL: none) is polled
 * between chunks. Allocates nothing. */
void cpu_kernel_run(const rt_op *op, void *dst, const void *src, int is_double, int64_t n, int threads,
                    const cpu_layout *lay, const cpu_progress *pg);

/* Runs compute op `op` of a 16-bit context (dt: SHIRO_BFLOAT16 or SHIRO_FLOAT16) whose source is
 * the call's 16-bit input (dense rows of n values), widened as it is loaded (cpu_src16.c): into
 * float32 rows dst (dst16 NULL), the bits of cpu_kernel_run on the widened rows; or, for a multiply
 * that assigns (accum 0, n <= SRC16_ROW_MAX), into 16-bit rows dst16, each row's float32 sums
 * rounded once as half_round rounds. Threads, tasks and polling as cpu_kernel_run. Allocates
 * nothing. */
void cpu_kernel_run_src16(const rt_op *op, float *dst, uint16_t *dst16, const uint16_t *src, int dt, int64_t n,
                          int threads, const cpu_progress *pg);

/* The same without a progress hook, one kernel each (tests, the CUDA tests' reference). */
void cpu_multiply_f64(const rt_op *op, double *dst, const double *src, int64_t n);
void cpu_multiply_f32(const rt_op *op, float *dst, const float *src, int64_t n);
void cpu_add_f64(const rt_op *op, double *dst, const double *src, int64_t n);
void cpu_add_f32(const rt_op *op, float *dst, const float *src, int64_t n);
void cpu_gather(const rt_op *op, void *dst, const void *src, size_t row_bytes);

/* Instruction sets the kernels are built for: the baseline of the build and,
 * on x86-64, AVX2 (chosen at run time where the CPU has it). */
enum { CPU_ISA_BASE = 0,
       CPU_ISA_AVX2 = 1 };

/* The instruction set the kernels use now (detected at the first call). */
int cpu_kernels_isa(void);

/* Tests only: makes the kernels use isa (CPU_ISA_BASE, or CPU_ISA_AVX2 where
 * the CPU has it); returns the one in use afterwards. Not thread-safe. */
int cpu_kernels_force_isa(int isa);

/* Tests only: the grain of the threads and of the polls (values touched =
 * (entries + rows) · N): an op below par runs on one thread; the threads'
 * tasks are at least `chunk` (at most 16 per thread); with a progress hook, a
 * poll after every `chunk` (at most 64 chunks). 0 restores the defaults. Not
 * thread-safe. */
void cpu_kernels_set_grain(int64_t par, int64_t chunk);

#endif
