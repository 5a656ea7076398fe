/* shiro-spmm — the example application: replays a plan under mpirun.
 *
 *   mpirun -np R shiro-spmm PLAN.h5 [--n N[,N...]] [--dtype float|double|bfloat16|float16[,...]]
 *                           [--iters K] [--warmup W] [--check MATRIX.mtx]
 *                           [--transpose | --direction forward|transpose|both]
 *                           [--backend cpu|cuda|sim] [--transport auto|nccl|mpi] [--device D]
 *   shiro-spmm --help | --version
 *
 * The command line is read before MPI_Init: --help and --version need no
 * launch, and a bad argument is reported once (by the launcher's rank 0)
 * while every rank exits with status 2.
 *
 * Each rank fills its B rows with b(g, c) (a deterministic function of the
 * global row g and column c), runs K calls of shiro_spmm, and rank 0 prints
 * the time per call and the bytes moved. With --check, every rank computes
 * its rows of C = A·B serially from the Matrix Market file and compares:
 *
 *   |C - C_ref| <= (nnz_i + 3) · u · (|A|·|B|)_ic   for every entry,
 *
 * u = 2^-24 (float) or 2^-53 (double), nnz_i the nonzeros of row i: the
 * classical bound for a sum of nnz_i products in any order, plus the rounding
 * of A's values to the value type. bfloat16 and float16 (computed in float32,
 * rounded once per hop of a partial row and once at the end; shiro.h) are
 * compared with the same float64 reference on B's unrounded values, within
 * ((h + 2)·u16 + (nnz_i + 4)·2^-24) · (|A|·|B|)_ic, u16 = 2^-8 (bfloat16) or
 * 2^-11 (float16), h = 3 for two-tier strategies and 1 otherwise: the bound
 * of shiro.h plus the rounding of B to 16 bits. A violation exits with status 1.
 *
 * --transpose (--direction transpose) runs X = Aᵀ·Y instead (shiro_spmm_transpose
 * from the same plan): each rank fills its rows of Y (laid out like C) with the
 * same function of (global C row, column), and --check compares its rows of X
 * with a serial Aᵀ·Y, within (terms_j + 3) · u · (|A|ᵀ·|Y|)_jc, terms_j the
 * nonzeros of column j. --direction both times the two side by side: five
 * rounds of K forward calls then K transposed calls, the best round of each
 * (the slowest rank's mean per call), and prints the ratio transposed/forward.
 *
 * --backend cuda: B and C live on the GPU (cudaMalloc); B is filled on the
 * host and copied up, C is copied back for --check. Without a usable CUDA
 * device ("no CUDA device") every rank prints why and the program exits with
 * status 77, which test harnesses read as "skipped"; built without CUDA,
 * --backend cuda is an error (rank 0 says so, status 1): no device would help.
 * --backend sim: the CPU backend under a simulated GPU clock, in the build
 * tools/sim/simulate.sh makes against SimGrid (run under its smpirun); elsewhere
 * an error, status 1. */
#include <fcntl.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "digest.h"
#include "mm_read.h"
#include "shiro.h"
#include "spmm_overlap.h"
#include "shiro_config.h"

/* The CUDA runtime, for the device copies of B and C (needs the CUDA dependency on this program). */
#if SHIRO_HAVE_CUDA && defined(__has_include)
#if __has_include(<cuda_runtime_api.h>)
#include <cuda_runtime_api.h>
#define SPMM_CUDART 1
#endif
#endif
#ifndef SPMM_CUDART
#define SPMM_CUDART 0
#endif

#define EXIT_SKIP 77 /* no CUDA device: skipped */

static const char *prog = "shiro-spmm";

#define MAX_LIST 16

typedef struct options {
  const char *plan, *check;
  int64_t n[MAX_LIST];
  int nn;
  shiro_dtype dt[MAX_LIST];
  int ndt;
  int64_t iters, warmup;
  shiro_backend backend;
  shiro_transport transport;
  int64_t device; /* -1: the library's choice */
  int64_t threads; /* CPU kernels' threads per rank; 0: the library's choice (shiro_ctx_options.threads) */
  int overlap; /* --overlap: the split-phase call with own work between begin and end (spmm_overlap.c) */
  int col; /* --layout: 0 row, 1 col (B and C, Y and X, column-major: shiro_spmm_layout), 2 both */
  int dirs; /* bit 0: C = A·B (forward), bit 1: X = Aᵀ·Y (transposed); default forward */
} options;

enum { DIR_FORWARD = 1,
       DIR_TRANSPOSE = 2,
       BOTH_ROUNDS = 5 };

static int is16(shiro_dtype dt) { return dt == SHIRO_BFLOAT16 || dt == SHIRO_FLOAT16; }
static size_t dt_size(shiro_dtype dt) { return dt == SHIRO_FLOAT64 ? 8 : dt == SHIRO_FLOAT32 ? 4
                                                                                             : 2; }
static const char *dt_name(shiro_dtype dt) {
  return dt == SHIRO_FLOAT32 ? "float" : dt == SHIRO_FLOAT64 ? "double"
      : dt == SHIRO_BFLOAT16                                 ? "bfloat16"
                                                             : "float16";
}
/* Value i of an array of type dt, as a double; v stored at i in that type (rounded to nearest even). */
static double dt_get(shiro_dtype dt, const void *p, int64_t i) {
  return dt == SHIRO_FLOAT64 ? ((const double *)p)[i] : dt == SHIRO_FLOAT32 ? (double)((const float *)p)[i]
                                                                            : (double)shiro_16_to_float(dt, ((const uint16_t *)p)[i]);
}
static void dt_put(shiro_dtype dt, void *p, int64_t i, double v) {
  if (dt == SHIRO_FLOAT64) ((double *)p)[i] = v;
  else if (dt == SHIRO_FLOAT32) ((float *)p)[i] = (float)v;
  else ((uint16_t *)p)[i] = shiro_float_to_16(dt, (float)v);
}
/* The check's bound for an entry of `terms` products whose |A|·|B| is `mass` (the header's). */
static double dt_tol(shiro_dtype dt, const char *strategy, int64_t terms, double mass) {
  if (!is16(dt)) return (double)(terms + 3) * (dt == SHIRO_FLOAT32 ? ldexp(1.0, -24) : ldexp(1.0, -53)) * mass * 1.01 + 1e-300;
  const int two_tier = !strcmp(strategy, "hier") || !strcmp(strategy, "group") || !strcmp(strategy, "cola") ||
      !strcmp(strategy, "hybrid");
  const double u16 = dt == SHIRO_BFLOAT16 ? ldexp(1.0, -8) : ldexp(1.0, -11);
  return ((two_tier ? 5 : 3) * u16 + (double)(terms + 4) * ldexp(1.0, -24)) * mass * 1.01 + 1e-300;
}

/* The value of B at global row g, column c: ±(1 + h/256), exact in float and double (and float16;
 * bfloat16 rounds it). */
static double b_value(int64_t g, int64_t c) {
  uint64_t h = (uint64_t)g * 0x9E3779B97F4A7C15ull + (uint64_t)c * 0xC2B2AE3D27D4EB4Full + 0x165667B19E3779F9ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  double v = 1.0 + (double)(h & 255) / 256.0;
  return (h & 256) ? v : -v;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: mpirun -np R shiro-spmm PLAN.h5 [--n N[,N...]] [--dtype T[,...]] [--iters K]\n"
          "                  [--warmup W] [--check MATRIX.mtx] [--backend cpu|cuda|sim]\n"
          "                  [--transport auto|nccl|mpi] [--device D] [--threads T] [--layout row|col|both]\n"
          "                  [--transpose | --direction forward|transpose|both]\n"
          "       shiro-spmm --help | --version\n"
          "  R                 the plan's rank count (shiro-plan --ranks)\n"
          "  --n N[,N...]      columns of B and C; one run per value (default 32)\n"
          "  --dtype T[,...]   float | double | bfloat16 | float16 (16-bit B, C and messages,\n"
          "                    float32 arithmetic); one run per value and N (default double)\n"
          "  --iters K         timed calls per run (default 10)\n"
          "  --warmup W        untimed calls before them (default 1)\n"
          "  --check MATRIX    compare C with a serial reference from the Matrix Market file\n"
          "                    (exit 1 past the rounding bound)\n"
          "  --transpose       run X = A^T.Y (shiro_spmm_transpose) instead of C = A.B; --check\n"
          "                    then compares X with a serial A^T.Y\n"
          "  --direction D     forward (default) | transpose (= --transpose) | both: the two timed\n"
          "                    side by side (%d rounds of K calls each, the best round of each),\n"
          "                    and their ratio\n"
          "  --backend B       cpu (default) | cuda (B and C in GPU memory; exit 77 without a device)\n"
          "                    | sim (tools/sim/simulate.sh's SimGrid build only)\n"
          "  --transport T     cuda: auto (default) | nccl | mpi\n"
          "  --device D        cuda: the GPU index (default: the library's choice)\n"
          "  --overlap         also time begin + own work + end against the call then the work\n"
          "                    (shiro_spmm_begin / shiro_spmm_end; a dense update as long as the call)\n"
          "  --layout L        row (default) | col: B and C (Y and X) column-major (shiro_spmm_layout;\n"
          "                    --check reads them back) | both: the two timed side by side, and their ratio\n"
          "  --threads T       cpu: OpenMP threads per rank (default 0: OMP_NUM_THREADS if set,\n"
          "                    else the node's CPUs / the ranks on the node, never more)\n"
          "  --help, --version this text / the version and the plan format read (exit 0)\n"
          "Rank 0 prints the threads per rank it chose (and why), then one line per run and\n"
          "direction: time per call, bytes moved per call.\n",
          BOTH_ROUNDS);
}

static int parse_list(const char *opt, const char *text, options *o, int is_n) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", text);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if ((is_n ? o->nn : o->ndt) >= MAX_LIST) {
      fprintf(stderr, "%s: %s: at most %d values\n", prog, opt, MAX_LIST);
      return 0;
    }
    if (is_n) {
      if (!cli_int(prog, opt, tok, 1, 1 << 20, &o->n[o->nn])) return 0;
      o->nn++;
    } else if (!strcmp(tok, "float") || !strcmp(tok, "float32")) o->dt[o->ndt++] = SHIRO_FLOAT32;
    else if (!strcmp(tok, "double") || !strcmp(tok, "float64")) o->dt[o->ndt++] = SHIRO_FLOAT64;
    else if (!strcmp(tok, "bfloat16")) o->dt[o->ndt++] = SHIRO_BFLOAT16;
    else if (!strcmp(tok, "float16")) o->dt[o->ndt++] = SHIRO_FLOAT16;
    else {
      fprintf(stderr, "%s: %s: expected float, double, bfloat16 or float16, found '%s'\n", prog, opt, tok);
      return 0;
    }
  }
  return 1;
}

static int parse(int argc, char **argv, options *o) {
  memset(o, 0, sizeof *o);
  o->iters = 10;
  o->warmup = 1;
  o->backend = SHIRO_BACKEND_CPU;
  o->transport = SHIRO_TRANSPORT_AUTO;
  o->device = -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    if (!strcmp(a, "--n")) {
      if (!(v = cli_value(prog, argc, argv, &i)) || !parse_list(a, v, o, 1)) return 0;
    } else if (!strcmp(a, "--dtype")) {
      if (!(v = cli_value(prog, argc, argv, &i)) || !parse_list(a, v, o, 0)) return 0;
    } else if (!strcmp(a, "--iters")) {
      if (!(v = cli_value(prog, argc, argv, &i)) || !cli_int(prog, a, v, 1, 1000000, &o->iters)) return 0;
    } else if (!strcmp(a, "--warmup")) {
      if (!(v = cli_value(prog, argc, argv, &i)) || !cli_int(prog, a, v, 0, 1000000, &o->warmup)) return 0;
    } else if (!strcmp(a, "--check")) {
      if (!(o->check = cli_value(prog, argc, argv, &i))) return 0;
    } else if (!strcmp(a, "--transpose")) o->dirs = DIR_TRANSPOSE;
    else if (!strcmp(a, "--direction")) {
      if (!(v = cli_value(prog, argc, argv, &i))) return 0;
      if (!strcmp(v, "forward")) o->dirs = DIR_FORWARD;
      else if (!strcmp(v, "transpose")) o->dirs = DIR_TRANSPOSE;
      else if (!strcmp(v, "both")) o->dirs = DIR_FORWARD | DIR_TRANSPOSE;
      else {
        fprintf(stderr, "%s: --direction: expected forward, transpose or both, found '%s'\n", prog, v);
        return 0;
      }
    } else if (!strcmp(a, "--overlap")) o->overlap = 1;
    else if (!strcmp(a, "--layout")) {
      if (!(v = cli_value(prog, argc, argv, &i))) return 0;
      if (!strcmp(v, "row")) o->col = 0;
      else if (!strcmp(v, "col")) o->col = 1;
      else if (!strcmp(v, "both")) o->col = 2;
      else {
        fprintf(stderr, "%s: --layout: expected row, col or both, found '%s'\n", prog, v);
        return 0;
      }
    } else if (!strcmp(a, "--threads")) {
      if (!(v = cli_value(prog, argc, argv, &i)) || !cli_int(prog, a, v, 0, 4096, &o->threads)) return 0;
    } else if (!strcmp(a, "--device")) {
      if (!(v = cli_value(prog, argc, argv, &i)) || !cli_int(prog, a, v, -1, 1 << 16, &o->device)) return 0;
    } else if (!strcmp(a, "--backend")) {
      if (!(v = cli_value(prog, argc, argv, &i))) return 0;
      if (!strcmp(v, "cpu")) o->backend = SHIRO_BACKEND_CPU;
      else if (!strcmp(v, "cuda")) o->backend = SHIRO_BACKEND_CUDA;
      else if (!strcmp(v, "sim")) o->backend = SHIRO_BACKEND_SIM;
      else {
        fprintf(stderr, "%s: --backend: expected cpu, cuda or sim, found '%s'\n", prog, v);
        return 0;
      }
    } else if (!strcmp(a, "--transport")) {
      if (!(v = cli_value(prog, argc, argv, &i))) return 0;
      if (!strcmp(v, "auto")) o->transport = SHIRO_TRANSPORT_AUTO;
      else if (!strcmp(v, "nccl")) o->transport = SHIRO_TRANSPORT_NCCL;
      else if (!strcmp(v, "mpi")) o->transport = SHIRO_TRANSPORT_MPI;
      else {
        fprintf(stderr, "%s: --transport: expected auto, nccl or mpi, found '%s'\n", prog, v);
        return 0;
      }
    } else if (a[0] == '-') {
      fprintf(stderr, "%s: unknown option '%s' (try --help)\n", prog, a);
      return 0;
    } else if (!o->plan) o->plan = a;
    else {
      fprintf(stderr, "%s: unexpected argument '%s'\n", prog, a);
      return 0;
    }
  }
  if (!o->plan) {
    fprintf(stderr, "%s: no plan given\n", prog);
    usage(stderr);
    return 0;
  }
  if (!o->nn) o->n[o->nn++] = 32;
  if (!o->ndt) o->dt[o->ndt++] = SHIRO_FLOAT64;
  if (!o->dirs) o->dirs = DIR_FORWARD;
  if (o->overlap && (o->col || o->backend != SHIRO_BACKEND_CPU || !(o->dirs & DIR_FORWARD))) {
    fprintf(stderr, "%s: --overlap times the forward call, row-major, on the cpu backend: not with --layout col|both, "
                    "--backend cuda|sim or --direction transpose\n",
            prog);
    return 0;
  }
  return 1;
}

/* shiro_pattern_digest of this rank's rows of A (global ids c_global, in local order), as the plan records it. */
static uint64_t rows_digest(const sc_csr *A, const shiro_plan_info *in) {
  digest64 d;
  pattern_digest_begin(&d, in->c_rows, A->k);
  for (int64_t i = 0; i < in->c_rows; i++) {
    const int64_t g = in->c_global[i];
    pattern_digest_row32(&d, 1, A->Ap[g + 1] - A->Ap[g], A->Aj + A->Ap[g]);
  }
  return d.h;
}

/* Worst (|C - ref| / bound) over this rank's rows; > 1 means the check failed. */
static double check_rows(const sc_csr *A, const shiro_plan_info *in, shiro_dtype dt, int64_t n, const void *C) {
  double worst = 0;
  for (int64_t i = 0; i < in->c_rows; i++) {
    int64_t g = in->c_global[i], len = A->Ap[g + 1] - A->Ap[g];
    for (int64_t c = 0; c < n; c++) {
      double ref = 0, bound = 0;
      for (int64_t t = A->Ap[g]; t < A->Ap[g + 1]; t++) {
        double b = b_value(A->Aj[t], c);
        ref += A->Ax[t] * b;
        bound += fabs(A->Ax[t] * b);
      }
      double got = dt_get(dt, C, i * n + c);
      double tol = dt_tol(dt, in->strategy, len, bound); /* 1.01 in it: the reference's own rounding */
      double r = fabs(got - ref) / tol;
      if (!(r <= worst)) worst = r; /* NaN propagates as a failure */
    }
  }
  return worst;
}

/* Device copies of B and C for the CUDA backend; B is uploaded from hB. Returns 0 on success. */
static int gpu_alloc(const void *hB, size_t b_bytes, size_t c_bytes, void **dB, void **dC, int rank) {
#if SPMM_CUDART
  cudaError_t e = cudaMalloc(dB, b_bytes ? b_bytes : 1);
  if (e == cudaSuccess) e = cudaMalloc(dC, c_bytes ? c_bytes : 1);
  if (e == cudaSuccess) e = cudaMemcpy(*dB, hB, b_bytes, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) return 0;
  fprintf(stderr, "%s: rank %d: device copies of B and C: %s\n", prog, rank, cudaGetErrorString(e));
#else
  (void)hB;
  (void)b_bytes;
  (void)c_bytes;
  (void)dB;
  (void)dC;
  fprintf(stderr, "%s: rank %d: this shiro-spmm was built without the CUDA runtime, so it cannot allocate B and C on "
                  "the device (tools/meson.build: give shiro-spmm the gpu_deps)\n",
          prog, rank);
#endif
  return 1;
}

/* Copies the device C back to hC. Returns 0 on success. */
static int gpu_download(void *hC, const void *dC, size_t bytes, int rank) {
#if SPMM_CUDART
  cudaError_t e = cudaMemcpy(hC, dC, bytes, cudaMemcpyDeviceToHost);
  if (e == cudaSuccess) return 0;
  fprintf(stderr, "%s: rank %d: copying C back: %s\n", prog, rank, cudaGetErrorString(e));
#else
  (void)hC;
  (void)dC;
  (void)bytes;
  (void)rank;
#endif
  return 1;
}

static void gpu_free(void *dB, void *dC) {
#if SPMM_CUDART
  if (dB) cudaFree(dB);
  if (dC) cudaFree(dC);
#else
  (void)dB;
  (void)dC;
#endif
}

/* 1 when a failed context creation means "no CUDA device here" (skip), not an
 * error: what the CUDA backend says when it finds no GPU (runtime/cuda:
 * SHIRO_ERR_CUDA, "no CUDA device: ..."). A libshiro built without CUDA
 * (SHIRO_ERR_UNSUPPORTED) is an error, not a skip: no device would help. */
static int no_cuda(shiro_status st, const char *message) {
  return st == SHIRO_ERR_CUDA && strstr(message, "no CUDA device");
}

/* This process's rank as its launcher tells it (Open MPI, PMIx, MPICH's
 * hydra, Slurm), readable before MPI_Init; 0 when none does (a singleton). */
static int launch_rank(void) {
  static const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
    const char *v = getenv(vars[i]);
    if (v && *v) return atoi(v);
  }
  return 0;
}

/* The command line, before MPI_Init, on every rank: the same argv gives
 * every rank the same verdict, and only `speak` (launcher rank 0) prints
 * (the others' stderr goes to /dev/null meanwhile). Returns -1 to run, else
 * the exit status: 0 after --help or --version, 2 for a bad command line,
 * 1 for --backend cuda in a build without CUDA, or sim outside the simulation build. */
static int command_line(int argc, char **argv, options *o, int speak) {
  static const char *valued[] = {"--n", "--dtype", "--iters", "--warmup", "--check", "--device", "--backend", "--transport",
                                 "--direction", "--threads", "--layout"};
  for (int i = 1; i < argc; i++) {
    int skip = 0;
    for (size_t k = 0; k < sizeof valued / sizeof *valued; k++) skip |= !strcmp(argv[i], valued[k]);
    if (skip) {
      i++;
      continue;
    } /* a value, even "--help", is its option's */
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      if (speak) usage(stdout);
      return 0;
    }
    if (!strcmp(argv[i], "--version")) {
      if (speak) cli_version(prog, "reads");
      return 0;
    }
  }
  int saved = -1;
  if (!speak) {
    fflush(stderr);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      saved = dup(2);
      dup2(null, 2);
      close(null);
    }
  }
  int ok = parse(argc, argv, o);
  if (saved >= 0) {
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
  }
  if (!ok) return 2;
  if (o->backend == SHIRO_BACKEND_CUDA && !SHIRO_HAVE_CUDA) {
    if (speak)
      fprintf(stderr, "%s: --backend cuda: this shiro-spmm and its libshiro were built without CUDA (meson setup found "
                      "no CUDA toolkit, or -Dcuda=disabled); rebuild with -Dcuda=enabled, or use --backend cpu\n",
              prog);
    return 1;
  }
  if (o->backend == SHIRO_BACKEND_SIM && !SHIRO_HAVE_SIM) {
    if (speak)
      fprintf(stderr, "%s: --backend sim: this is not the simulation build; tools/sim/simulate.sh builds one against "
                      "SimGrid and runs it under smpirun\n",
              prog);
    return 1;
  }
  return -1;
}

/* Rank 0 says, once per process, how many threads the CPU kernels run per rank and why (rank 0's
 * reason; the range over the ranks where they differ), and warns on stderr when a rank's threads
 * outnumber the CPUs of its binding (the library's reason then says "share cores"). Collective. */
static void report_threads(const shiro_ctx *ctx, int rank) {
  static int said = 0;
  int t = 0;
  const char *why = "";
  if (shiro_ctx_get_threads(ctx, &t, &why) != SHIRO_OK) t = 0;
  const int over = strstr(why, "share cores") != NULL, mine[3] = {-t, t, over};
  int most[3]; /* -(the fewest threads), the most, whether any rank's threads share cores */
  MPI_Allreduce(mine, most, 3, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  const int lo = -most[0], hi = most[1], any_over = most[2];
  if (rank == 0 && !said) {
    if (lo == hi) printf("shiro-spmm: threads: %d per rank (%s)\n", t, why);
    else printf("shiro-spmm: threads: %d to %d per rank (rank 0: %d, %s)\n", lo, hi, t, why);
    if (any_over)
      fprintf(stderr, "shiro-spmm: warning: %s threads outnumber %s CPUs, so threads share cores and the extra "
                      "ones buy nothing: where mpirun binds each rank to a core (its default), run with "
                      "--bind-to none or --map-by slot:PE=%d; else ask for fewer threads\n",
              over ? "rank 0's" : "some ranks'", over ? "its" : "their", hi);
  }
  said = 1;
}

/* One direction of a run: its host (and device) input and output, and what it measured. */
typedef struct direction {
  int dir; /* DIR_FORWARD (in B, out C) or DIR_TRANSPOSE (in Y, out X) */
  size_t in_bytes, out_bytes;
  void *hin, *hout; /* host copies (hout: what --check reads) */
  void *din, *dout; /* device copies (--backend cuda), else NULL */
  void *lin, *lout; /* --layout col: column-major copies (leading dimension: the rows), else NULL */
  int64_t in_rows, out_rows, n;
  size_t esz;
  double best; /* seconds per call: the best round's, the slowest rank's mean */
} direction;

/* Fills and allocates d for a context of n columns and esz-byte values: the input rows are
 * b_value(global row, column) of this rank's B rows (forward) or C rows (transposed). Returns 0 on
 * success (on failure the caller frees what was made with free_direction). */
static int setup_direction(direction *d, int dir, const shiro_plan_info *in, shiro_dtype dt, int64_t n, int on_gpu,
                           int col, int rank) {
  const size_t esz = dt_size(dt);
  const int64_t in_rows = dir == DIR_FORWARD ? in->b_rows : in->c_rows;
  const int64_t *in_ids = dir == DIR_FORWARD ? in->b_global : in->c_global;
  memset(d, 0, sizeof *d);
  d->dir = dir;
  d->best = HUGE_VAL;
  d->in_bytes = (size_t)in_rows * (size_t)n * esz;
  d->out_bytes = (size_t)(dir == DIR_FORWARD ? in->c_rows : in->b_rows) * (size_t)n * esz;
  d->in_rows = in_rows;
  d->out_rows = dir == DIR_FORWARD ? in->c_rows : in->b_rows;
  d->n = n;
  d->esz = esz;
  d->hin = malloc(d->in_bytes ? d->in_bytes : 1);
  d->hout = malloc(d->out_bytes ? d->out_bytes : 1);
  if (col) {
    d->lin = malloc(d->in_bytes ? d->in_bytes : 1);
    d->lout = malloc(d->out_bytes ? d->out_bytes : 1);
  }
  if (!d->hin || !d->hout || (col && (!d->lin || !d->lout))) {
    fprintf(stderr, "%s: rank %d: out of memory (%zu bytes of input and output)\n", prog, rank, d->in_bytes + d->out_bytes);
    return 1;
  }
  for (int64_t i = 0; i < in_rows; i++)
    for (int64_t c = 0; c < n; c++) {
      dt_put(dt, d->hin, i * n + c, b_value(in_ids[i], c));
    }
  for (int64_t i = 0; col && i < in_rows; i++) /* the same values, column-major */
    for (int64_t c = 0; c < n; c++) memcpy((char *)d->lin + (size_t)(i + c * in_rows) * esz, (char *)d->hin + (size_t)(i * n + c) * esz, esz);
  return on_gpu ? gpu_alloc(d->hin, d->in_bytes, d->out_bytes, &d->din, &d->dout, rank) : 0;
}

static void free_direction(direction *d) {
  gpu_free(d->din, d->dout);
  free(d->hin);
  free(d->hout);
  free(d->lin);
  free(d->lout);
  memset(d, 0, sizeof *d);
}

/* k calls of d's product on ctx. Returns 0, or 1 after printing why a call failed. */
static int calls(shiro_ctx *ctx, const direction *d, int64_t k, int rank) {
  const void *x = d->din ? d->din : d->hin;
  void *y = d->dout ? d->dout : d->hout;
  const int64_t ldi = d->in_rows > 1 ? d->in_rows : 1, ldo = d->out_rows > 1 ? d->out_rows : 1;
  for (int64_t it = 0; it < k; it++)
    if ((d->lin ? (d->dir == DIR_FORWARD ? shiro_spmm_layout(ctx, SHIRO_COL_MAJOR, d->lin, ldi, d->lout, ldo)
                                         : shiro_spmm_transpose_layout(ctx, SHIRO_COL_MAJOR, d->lin, ldi, d->lout, ldo))
                : (d->dir == DIR_FORWARD ? shiro_spmm(ctx, x, y) : shiro_spmm_transpose(ctx, x, y))) != SHIRO_OK) {
      fprintf(stderr, "%s: rank %d: %s\n", prog, rank, shiro_ctx_last_error(ctx));
      return 1;
    }
  return 0;
}

/* Worst (|X - ref| / bound) over this rank's rows of X = Aᵀ·Y, Y(i, c) = b_value(i, c); > 1: failed.
 * The bound of row j is that of a sum of its column's terms_j products, like check_rows's. */
static double check_transposed(const sc_csr *A, const shiro_plan_info *in, shiro_dtype dt, int64_t n, const void *X) {
  double worst = 0;
  int64_t *local = malloc(((size_t)A->k + 1) * sizeof *local), *terms = calloc((size_t)in->b_rows + 1, sizeof *terms);
  double *ref = calloc((size_t)(in->b_rows * n) + 1, sizeof *ref), *bound = calloc((size_t)(in->b_rows * n) + 1, sizeof *bound);
  if (!local || !terms || !ref || !bound) {
    worst = HUGE_VAL;
    fprintf(stderr, "%s: --check: out of memory for the reference of X\n", prog);
    goto done;
  }
  for (int64_t j = 0; j < A->k; j++) local[j] = -1;
  for (int64_t l = 0; l < in->b_rows; l++) local[in->b_global[l]] = l;
  for (int64_t i = 0; i < A->m; i++)
    for (int64_t t = A->Ap[i]; t < A->Ap[i + 1]; t++) {
      const int64_t l = local[A->Aj[t]];
      if (l < 0) continue;
      terms[l]++;
      for (int64_t c = 0; c < n; c++) {
        double p = A->Ax[t] * b_value(i, c);
        ref[l * n + c] += p;
        bound[l * n + c] += fabs(p);
      }
    }
  for (int64_t l = 0; l < in->b_rows; l++)
    for (int64_t c = 0; c < n; c++) {
      double got = dt_get(dt, X, l * n + c);
      double tol = dt_tol(dt, in->strategy, terms[l], bound[l * n + c]);
      double r = fabs(got - ref[l * n + c]) / tol;
      if (!(r <= worst)) worst = r; /* NaN propagates as a failure */
    }
done:
  free(local);
  free(terms);
  free(ref);
  free(bound);
  return worst;
}

/* One (dtype, N) configuration: create, fill, run, time, check. Returns 0 if
 * fine, EXIT_SKIP if the CUDA backend has no device (on every rank), 1 else. */
static int run_one(shiro_plan *plan, const shiro_plan_info *in, const options *o, shiro_dtype dt, int64_t n,
                   const sc_csr *A, int rank) {
  shiro_ctx_options co = shiro_ctx_options_default();
  co.dtype = dt;
  co.n = n;
  co.backend = o->backend;
  co.transport = o->transport;
  co.device = (int)o->device;
  co.threads = (int)o->threads;
  shiro_ctx *ctx = NULL;
  shiro_error err = {{0}};
  size_t esz = dt_size(dt);
  shiro_status cs = shiro_ctx_create(plan, MPI_COMM_WORLD, &co, &ctx, &err);
  if (cs != SHIRO_OK) {
    int skip = o->backend == SHIRO_BACKEND_CUDA && no_cuda(cs, err.message), anyskip = 0;
    MPI_Allreduce(&skip, &anyskip, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    fprintf(stderr, "%s: rank %d: %s%s\n", prog, rank, err.message, anyskip ? " (skipped)" : "");
    return anyskip ? EXIT_SKIP : 1;
  }
  report_threads(ctx, rank);
  const int on_gpu = o->backend == SHIRO_BACKEND_CUDA;
  direction d[4]; /* forward, transposed; each row-major, column-major or both (--layout) */
  int nd = 0, bad = 0;
  memset(d, 0, sizeof d);
  for (int dir = DIR_FORWARD; dir <= DIR_TRANSPOSE; dir <<= 1)
    for (int col = 0; col <= 1; col++)
      if ((o->dirs & dir) && (o->col == 2 || o->col == col) && !bad)
        bad |= setup_direction(&d[nd++], dir, in, dt, n, on_gpu, col, rank);
  for (int k = 0; !bad && k < nd; k++) bad = calls(ctx, &d[k], o->warmup, rank);
  /* both directions or layouts: rounds of K calls of each in turn, so that a slow spell of a shared
   * machine hits each; the best round of each */
  const int rounds = nd >= 2 ? BOTH_ROUNDS : 1;
  for (int round = 0; round < rounds; round++)
    for (int k = 0; k < nd; k++) {
      int anybad = 0;
      MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD); /* also the barrier before the clock */
      if (anybad) {
        bad = 1;
        break;
      }
      double t = MPI_Wtime();
      bad = calls(ctx, &d[k], o->iters, rank);
      t = (MPI_Wtime() - t) / (double)o->iters;
      double tmax = 0;
      MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (tmax < d[k].best) d[k].best = tmax;
    }
  double worst[4] = {0, 0, 0, 0}, wmax[4] = {0, 0, 0, 0};
  for (int k = 0; !bad && A && k < nd; k++) {
    if (on_gpu) bad = gpu_download(d[k].hout, d[k].dout, d[k].out_bytes, rank);
    for (int64_t i = 0; d[k].lout && i < d[k].out_rows; i++) /* --layout col: back to rows for the check */
      for (int64_t c = 0; c < n; c++)
        memcpy((char *)d[k].hout + (size_t)(i * n + c) * esz, (char *)d[k].lout + (size_t)(i + c * d[k].out_rows) * esz, esz);
    if (!bad) worst[k] = d[k].dir == DIR_FORWARD ? check_rows(A, in, dt, n, d[k].hout) : check_transposed(A, in, dt, n, d[k].hout);
  }
  shiro_traffic tr = {0};
  if (shiro_ctx_get_traffic(ctx, &tr) != SHIRO_OK) memset(&tr, 0, sizeof tr);
  /* summed over the ranks, what the forward program sends is what the transposed one sends */
  int64_t mine[2] = {tr.bytes_sent, tr.inter_node_rows_sent * n * (int64_t)esz}, all[2] = {0, 0};
  int anybad = 0;
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(worst, wmax, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(mine, all, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  int fail = anybad;
  for (int k = 0; k < 4; k++) fail |= !(wmax[k] <= 1.0);
  for (int k = 0; rank == 0 && k < nd; k++) {
    printf("shiro-spmm: %s, %d ranks, %s, %s, N=%lld %s%s%s: %.3f ms/call over %lld calls, %.3f MB moved/call (%.3f MB inter-node)",
           o->plan, in->ranks, in->strategy, on_gpu ? "cuda" : "cpu", (long long)n, dt_name(dt),
           d[k].dir == DIR_TRANSPOSE ? ", transposed (X = A^T.Y)" : "", d[k].lin ? ", column-major" : "", 1e3 * d[k].best,
           (long long)o->iters, (double)all[0] / 1e6, (double)all[1] / 1e6);
    if (nd >= 2) printf(" (best of %d rounds)", rounds);
    if (A) printf("; check: max error/bound %.3g %s", wmax[k], (anybad || !(wmax[k] <= 1.0)) ? "FAILED" : "ok");
    printf("\n");
  }
  const int per_dir = o->col == 2 ? 2 : 1; /* d[]: per direction, row-major then column-major */
  for (int k = 0; rank == 0 && !anybad && o->dirs == (DIR_FORWARD | DIR_TRANSPOSE) && k < per_dir; k++)
    printf("shiro-spmm: %s, N=%lld %s%s: transposed/forward time %.3f (%.3f / %.3f ms/call)\n", o->plan, (long long)n,
           dt_name(dt), d[k].lin ? ", column-major" : "", d[k + per_dir].best / d[k].best,
           1e3 * d[k + per_dir].best, 1e3 * d[k].best);
  for (int k = 0; rank == 0 && !anybad && per_dir == 2 && k < nd; k += 2)
    printf("shiro-spmm: %s, N=%lld %s%s: column-major/row-major time %.3f (%.3f / %.3f ms/call)\n", o->plan,
           (long long)n, dt_name(dt), d[k].dir == DIR_TRANSPOSE ? ", transposed" : "",
           d[k + 1].best / d[k].best, 1e3 * d[k + 1].best, 1e3 * d[k].best);
  if (!fail && o->overlap) { /* parse() allowed it only for the forward row-major CPU call: d[0] */
    char label[600];
    snprintf(label, sizeof label, "%s, N=%lld %s", o->plan, (long long)n, dt_name(dt));
    fail = spmm_overlap(ctx, d[0].hin, d[0].hout, d[0].best, o->iters, rank, label);
  }
  for (int k = 0; k < 4; k++) free_direction(&d[k]);
  shiro_ctx_destroy(&ctx);
  return fail;
}

int main(int argc, char **argv) {
  options o;
  int cl = command_line(argc, argv, &o, launch_rank() == 0);
  if (cl == 0) return cli_finish_stdout(prog, 0); /* --help, --version: no MPI, no launch needed */
  MPI_Init(&argc, &argv);
  if (cl > 0) { /* every rank the same status; MPI_Finalize waits for all, so that mpirun, which
                    stops a job at the first failed exit, cannot stop rank 0 before it has printed */
    MPI_Finalize();
    return cl;
  }
  int rank = 0, rc = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  shiro_error err = {{0}};
  shiro_plan *plan = NULL;
  sc_csr *A = NULL;
  shiro_plan_info in;
  int bad = 0, anybad = 0;
  if (shiro_plan_open_comm(o.plan, MPI_COMM_WORLD, &plan, &err) != SHIRO_OK || shiro_plan_get_info(plan, &in) != SHIRO_OK) {
    fprintf(stderr, "%s: rank %d: %s\n", prog, rank, err.message);
    bad = 1;
  } else if (o.check && mm_read(o.check, &A, NULL, &err) != SHIRO_OK) {
    fprintf(stderr, "%s: rank %d: %s\n", prog, rank, err.message);
    bad = 1;
  } else if (A && (A->m != in.m || A->k != in.k || A->nnz != in.nnz)) {
    fprintf(stderr, "%s: rank %d: --check %s is %lld x %lld with %lld nonzeros, the plan is for %lld x %lld with %lld\n",
            prog, rank, o.check, (long long)A->m, (long long)A->k, (long long)A->nnz, (long long)in.m, (long long)in.k,
            (long long)in.nnz);
    bad = 1;
  } else if (A && shiro_plan_check_pattern(plan, rows_digest(A, &in), &err) != SHIRO_OK) {
    fprintf(stderr, "%s: --check %s: this plan was made for another matrix: %s\n", prog, o.check, err.message);
    bad = 1;
  }
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (anybad) rc = 1;
  for (int d = 0; !rc && d < o.ndt; d++)
    for (int j = 0; !rc && j < o.nn; j++) rc = run_one(plan, &in, &o, o.dt[d], o.n[j], A, rank);
  sc_csr_free(A);
  shiro_plan_close(&plan);
  MPI_Finalize();
  return cli_finish_stdout(prog, rc); /* rank 0's report lost on a full disk is a failure */
}
