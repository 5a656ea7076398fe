/* test_replay_calls.c — the calls of a replay on a real plan, under mpirun:
 *
 *   mpirun -np R test_replay_calls PLAN.h5 N[,N...]
 *
 * For float and double and each N, on a CPU context:
 *   - the same bits on every call, and on 1 and on 2 OpenMP threads (two contexts of one plan,
 *     shiro_ctx_options.threads 1 and 2);
 *   - nothing allocated per call: malloc, calloc, realloc and the aligned
 *     allocators are counted (this program defines them over glibc's) during
 *     calls after a warm-up, and shiro must not call them; what MPI allocates
 *     inside its own calls (Open MPI grows its fragment lists now and then)
 *     is told apart (the MPI calls of a replay are wrapped through PMPI) and
 *     only noted. Skipped, with a note, in a sanitizer build, whose allocator
 *     this would replace. The same for calls of a smaller width on the same
 *     context (shiro_spmm_n and shiro_spmm_transpose_n at n = ceil(N/2), whose
 *     messages go out as MPI_Isend / MPI_Irecv), which also give the same
 *     bits on every call;
 *   - the exchange progresses during the multiply: with the kernels' grain
 *     lowered so that every op is cut into chunks, each call tests (MPI_Testall,
 *     counted through the PMPI interface) the requests of a stage in flight on
 *     every rank that has such requests and computes while they fly.
 * White-box: the runtime's sources are built in (cpu_kernels_set_grain, the
 * context's program). Exit 0 when every check holds on every rank. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "internal.h"
#include "test_util.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define COUNT_ALLOCS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define COUNT_ALLOCS 0
#endif
#endif
#ifndef COUNT_ALLOCS
#define COUNT_ALLOCS 1
#endif

static int counting; /* 1 while allocations are counted */
static long allocs; /* allocations while counting, outside MPI calls */
static long mpi_allocs; /* allocations while counting, inside MPI calls (MPI's own) */
static long testalls; /* MPI_Testall calls, always */
static __thread int in_mpi; /* > 0 inside an MPI call of the replay */

#if COUNT_ALLOCS
/* glibc's allocator under the names this program defines: every allocation of the process passes here. */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t k, size_t n);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
static void note_alloc(void) {
  if (__atomic_load_n(&counting, __ATOMIC_RELAXED)) __atomic_add_fetch(in_mpi ? &mpi_allocs : &allocs, 1, __ATOMIC_RELAXED);
}
void *memalign(size_t align, size_t n); /* glibc's malloc.h; declared here for -Wmissing-prototypes */
void *malloc(size_t n) {
  note_alloc();
  return __libc_malloc(n);
}
void *calloc(size_t k, size_t n) {
  note_alloc();
  return __libc_calloc(k, n);
}
void *realloc(void *p, size_t n) {
  note_alloc();
  return __libc_realloc(p, n);
}
void *memalign(size_t align, size_t n) {
  note_alloc();
  return __libc_memalign(align, n);
}
void *aligned_alloc(size_t align, size_t n) {
  note_alloc();
  return __libc_memalign(align, n);
}
int posix_memalign(void **p, size_t align, size_t n) {
  note_alloc();
  void *q = __libc_memalign(align, n);
  if (!q) return ENOMEM;
  *p = q;
  return 0;
}
#endif

/* The MPI calls of a replay (mpi_xport.c), through PMPI: counted, and marked as MPI's for the allocation count. */
int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[]) {
  __atomic_add_fetch(&testalls, 1, __ATOMIC_RELAXED);
  in_mpi++;
  int rc = PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
  in_mpi--;
  return rc;
}
int MPI_Startall(int count, MPI_Request array_of_requests[]) {
  in_mpi++;
  int rc = PMPI_Startall(count, array_of_requests);
  in_mpi--;
  return rc;
}
int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
  in_mpi++;
  int rc = PMPI_Isend(buf, count, type, dest, tag, comm, req);
  in_mpi--;
  return rc;
}
int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *req) {
  in_mpi++;
  int rc = PMPI_Irecv(buf, count, type, source, tag, comm, req);
  in_mpi--;
  return rc;
}
int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]) {
  in_mpi++;
  int rc = PMPI_Waitall(count, array_of_requests, array_of_statuses);
  in_mpi--;
  return rc;
}

/* 1 if this rank has requests in a stage and computes between its START and its WAIT (then the
 * kernels, cut into chunks, poll it). */
static int polls_expected(const shiro_ctx *c) {
  const rt_program *p = &c->prog[RT_FORWARD];
  int inside = 0, s = -1;
  for (int64_t o = 0; o < p->nops; o++) {
    const rt_op *op = &p->op[o];
    if (op->kind == RT_START) {
      inside = 1;
      s = op->stage;
      continue;
    }
    if (op->kind == RT_WAIT) {
      inside = 0;
      continue;
    }
    const int has_reqs = s >= 0 && s < p->stages.nstages && p->stages.stage[s].nx > 0;
    if (inside && has_reqs && (op->ptr[op->nrows] - op->ptr[0] + op->nrows) * c->opts.n >= 2 * 64) return 1;
  }
  return 0;
}

/* Fills count values with ±(1 + h/256), exact in float and double. */
static void fill(void *p, int64_t count, int is_double, int64_t first) {
  for (int64_t i = 0; i < count; i++) {
    uint64_t h = (uint64_t)(first + i) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    const double v = ((h & 256) ? 1 : -1) * (1.0 + (double)(h & 255) / 256.0);
    if (is_double) ((double *)p)[i] = v;
    else ((float *)p)[i] = (float)v;
  }
}

enum { CALLS = 3 };

/* One (dtype, N): the checks above. */
static void run_one(shiro_plan *plan, int is_double, int64_t n, int rank) {
  shiro_ctx_options co = shiro_ctx_options_default();
  co.dtype = is_double ? SHIRO_FLOAT64 : SHIRO_FLOAT32;
  co.n = n;
  shiro_ctx *c = NULL, *c1 = NULL; /* one plan, two contexts: 2 threads and 1 thread (the threads option) */
  shiro_error err = {{0}};
  co.threads = 1;
  if (shiro_ctx_create(plan, MPI_COMM_WORLD, &co, &c1, &err) != SHIRO_OK) {
    EXPECT(0, "rank %d: %s", rank, err.message);
    return;
  }
  co.threads = 2;
  if (shiro_ctx_create(plan, MPI_COMM_WORLD, &co, &c, &err) != SHIRO_OK) {
    EXPECT(0, "rank %d: %s", rank, err.message);
    shiro_ctx_destroy(&c1);
    return;
  }
  int t1 = 0, t2 = 0;
  EXPECT(shiro_ctx_get_threads(c1, &t1, NULL) == SHIRO_OK && shiro_ctx_get_threads(c, &t2, NULL) == SHIRO_OK && t1 == 1 &&
             t2 == 2,
         "rank %d: the threads option: %d and %d threads, asked for 1 and 2", rank, t1, t2);
  const prog_rank *pr = &plan->pr;
  const size_t esz = is_double ? 8 : 4, cb = (size_t)(pr->c_rows ? pr->c_rows : 1) * (size_t)n * esz;
  void *B = malloc((size_t)(pr->b_rows ? pr->b_rows : 1) * (size_t)n * esz), *C = malloc(cb), *C0 = malloc(cb);
  fill(B, pr->b_rows * n, is_double, pr->b_first * n);
  const char *what = is_double ? "double" : "float";
  int ok = 1;
  for (int i = 0; i < 2; i++) ok &= shiro_spmm(c1, B, C) == SHIRO_OK && shiro_spmm(c, B, C) == SHIRO_OK; /* warm-up */
  ok &= shiro_spmm(c1, B, C0) == SHIRO_OK;
  cpu_kernels_set_grain(1, 64); /* every op cut into chunks: the stage in flight is polled */
  ok &= shiro_spmm(c, B, C) == SHIRO_OK; /* a warm-up at this grain too */
  const long t0 = testalls;
  __atomic_store_n(&allocs, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&mpi_allocs, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&counting, 1, __ATOMIC_RELAXED);
  int differ = 0;
  for (int i = 0; i < CALLS; i++) {
    ok &= shiro_spmm(c, B, C) == SHIRO_OK;
    differ += memcmp(C, C0, (size_t)pr->c_rows * (size_t)n * esz) != 0;
  }
  __atomic_store_n(&counting, 0, __ATOMIC_RELAXED);
  const long polls = testalls - t0, nalloc = __atomic_load_n(&allocs, __ATOMIC_RELAXED);
  const long nmpi = __atomic_load_n(&mpi_allocs, __ATOMIC_RELAXED);
  if (COUNT_ALLOCS && nmpi)
    printf("note: rank %d, %s, N = %lld: MPI allocated %ld times inside its calls (its own pools)\n", rank,
           is_double ? "double" : "float", (long long)n, nmpi);
  cpu_kernels_set_grain(0, 0);
  EXPECT(ok, "rank %d, %s, N = %lld: a call failed: %s", rank, what, (long long)n, shiro_ctx_last_error(c));
  EXPECT(differ == 0, "rank %d, %s, N = %lld: %d of %d calls on 2 threads differ from a call on 1 thread", rank, what,
         (long long)n, differ, CALLS);
  EXPECT(!COUNT_ALLOCS || nalloc == 0, "rank %d, %s, N = %lld: %ld allocations during %d calls (expected none)", rank, what,
         (long long)n, nalloc, CALLS);
  if (polls_expected(c))
    EXPECT(polls >= CALLS, "rank %d, %s, N = %lld: %ld MPI_Testall in %d calls: the stage in flight was not polled during "
                           "the multiply",
           rank, what, (long long)n, polls, CALLS);
  /* calls of a smaller width w on the same context: nothing allocated, the same bits every call */
  if (n > 1) {
    const int64_t w = (n + 1) / 2;
    void *X = malloc((size_t)(pr->b_rows ? pr->b_rows : 1) * (size_t)n * esz), *X0 = malloc((size_t)(pr->b_rows ? pr->b_rows : 1) * (size_t)n * esz);
    int okw = 1;
    for (int i = 0; i < 2; i++) /* warm-up; the first transposed call derives its program */
      okw &= shiro_spmm_n(c, B, C0, w) == SHIRO_OK && shiro_spmm_transpose_n(c, C0, X0, w) == SHIRO_OK;
    __atomic_store_n(&allocs, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&counting, 1, __ATOMIC_RELAXED);
    int differw = 0;
    for (int i = 0; i < CALLS; i++) {
      okw &= shiro_spmm_n(c, B, C, w) == SHIRO_OK && shiro_spmm_transpose_n(c, C, X, w) == SHIRO_OK;
      differw += memcmp(C, C0, (size_t)pr->c_rows * (size_t)w * esz) != 0 || memcmp(X, X0, (size_t)pr->b_rows * (size_t)w * esz) != 0;
    }
    __atomic_store_n(&counting, 0, __ATOMIC_RELAXED);
    const long nallocw = __atomic_load_n(&allocs, __ATOMIC_RELAXED);
    EXPECT(okw, "rank %d, %s, N = %lld, n = %lld: a call failed: %s", rank, what, (long long)n, (long long)w,
           shiro_ctx_last_error(c));
    EXPECT(differw == 0, "rank %d, %s, N = %lld, n = %lld: %d of %d calls differ from the first", rank, what, (long long)n,
           (long long)w, differw, CALLS);
    EXPECT(!COUNT_ALLOCS || nallocw == 0, "rank %d, %s, N = %lld, n = %lld: %ld allocations during %d calls of width n "
                                          "(expected none)",
           rank, what, (long long)n, (long long)w, nallocw, CALLS);
    free(X);
    free(X0);
  }
  free(B);
  free(C);
  free(C0);
  shiro_ctx_destroy(&c);
  shiro_ctx_destroy(&c1);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 3) {
    if (rank == 0) fprintf(stderr, "usage: mpirun -np R test_replay_calls PLAN.h5 N[,N...]\n");
    MPI_Finalize();
    return 2;
  }
  if (!COUNT_ALLOCS && rank == 0) printf("note: a sanitizer build: allocations are not counted\n");
  shiro_plan *plan = NULL;
  shiro_error err = {{0}};
  if (shiro_plan_open(argv[1], rank, &plan, &err) != SHIRO_OK) {
    fprintf(stderr, "rank %d: %s\n", rank, err.message);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int d = 0; d < 2; d++) {
    char list[256];
    snprintf(list, sizeof list, "%s", argv[2]);
    for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save))
      run_one(plan, d, atoll(t), rank);
  }
  shiro_plan_close(&plan);
  int mine = test_failures, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("%s: %d failures\n", all ? "FAIL" : "ok", all);
  MPI_Finalize();
  return all != 0;
}
