/* shiro.h — public API of libshiro, the SHIRO distributed SpMM runtime.
 *
 * An application computes C = A·B with A sparse (m × k), B dense (k × N) and
 * C dense (m × N), all row-partitioned over the ranks of an MPI communicator.
 * The communication plan is compiled offline by `shiro-plan` into one HDF5
 * file; each rank maps its own part and replays it for every call:
 *
 *     shiro_plan *plan; shiro_ctx *ctx; shiro_error err;
 *     shiro_plan_open_comm("A.shiro.h5", MPI_COMM_WORLD, &plan, &err); // collective
 *     shiro_ctx_options o = shiro_ctx_options_default();
 *     o.dtype = SHIRO_FLOAT64; o.n = 64;
 *     shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx, &err); // collective
 *     for (...) shiro_spmm(ctx, B_local, C_local);            // collective
 *     shiro_ctx_destroy(&ctx); shiro_plan_close(&plan);
 *
 * B_local holds this rank's rows of B (shiro_plan_info: b_rows), C_local this
 * rank's rows of C (c_rows), both row-major with N values per row.
 *
 * The library never prints, exits or aborts. Every function that acts returns
 * a shiro_status (0 = success) and, where the caller passes a shiro_error,
 * fills it with a message naming what was wrong.
 *
 * Contracts. Each call says, under fixed labels:
 *   Collective:  "yes, over C" (every rank of C must make the call, in the
 *                same order as the other collective calls on C) or "no".
 *   Allocates:   what the call allocates and who frees it ("nothing").
 *   On failure:  the state of the outputs and of the objects afterwards.
 *   MPI:         what it needs of MPI, where that is more than below.
 *
 * MPI. shiro_plan_open, shiro_plan_get_info, shiro_plan_get_local_matrix,
 * shiro_pattern_digest, shiro_plan_check_pattern and shiro_plan_close make no
 * MPI call: they work before MPI_Init and without MPI. Every other call needs
 * MPI initialized and not yet finalized. Thread level: the library calls MPI
 * only from the thread that called it (the CPU kernels' OpenMP threads never
 * call MPI), so MPI_THREAD_FUNNELED is enough when that thread initialized
 * MPI, MPI_THREAD_SERIALIZED when another thread calls shiro, and
 * MPI_THREAD_MULTIPLE when two threads call shiro at the same time (on
 * different contexts).
 *
 * Objects. One plan may serve several contexts at once (other N, value
 * types, backends, or communicators in which the caller has the plan's
 * rank); each context borrows its plan, so close the plan after its last
 * context. A context is used by one thread at a time, and calls on one plan
 * (its first shiro_ctx_create or shiro_plan_get_local_matrix records that its
 * arrays were checked) are not made from two threads at once; different
 * plans and contexts are independent.
 */
#ifndef SHIRO_H
#define SHIRO_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#include "shiro_status.h" /* SHIRO_API, shiro_status, shiro_error, shiro_strerror */
#include "shiro_version.h" /* SHIRO_VERSION_MAJOR, _MINOR, _PATCH, _STRING */

#ifdef __cplusplus
extern "C" {
#endif

/* Value type of B and C (and of the multiply). The 16-bit types hold B, C and
 * the rows on the wire in 16 bits (uint16_t bit patterns: bfloat16, the upper
 * half of a float32; or IEEE 754 binary16) and compute in float32: A's values
 * are kept as float32 (rounded once from the doubles given), the inputs are
 * widened exactly, products and sums are float32 as in a float32 context, and
 * each value that leaves float32 is rounded once to nearest even: every
 * output value, and the partial rows of C that a rank sends (once per hop).
 * Accuracy: with t the entries of an output value's row (column in the
 * transposed product), h the hops its partial rows take (1 in flat plans, at
 * most 3 in two-tier ones), u16 the unit roundoff of the 16-bit type (2^-8
 * bfloat16, 2^-11 float16) and u32 = 2^-24,
 *     |C - A·B̃| <= ((h + 1)·u16 + (t + 3)·u32) · (|A|·|B̃|)   (B̃: B as given)
 * up to second-order terms, and float16 within its range (below 65504 in
 * magnitude, above 2^-14 for full precision). Plans without partial rows
 * (strategy col, forward) round each output once: the float32 context's
 * result on the same inputs, rounded. */
typedef enum shiro_dtype { SHIRO_FLOAT32 = 0,
                           SHIRO_FLOAT64 = 1,
                           SHIRO_BFLOAT16 = 2,
                           SHIRO_FLOAT16 = 3 } shiro_dtype;

/* A float rounded to the bits of a 16-bit type (dtype SHIRO_BFLOAT16 or
 * SHIRO_FLOAT16), to nearest even, as the library rounds (NaN stays a quiet
 * NaN; float16 overflows to infinity and underflows through its subnormals);
 * and those bits widened to the float they stand for (exact). For filling B
 * and reading C of a 16-bit context from C code (which has no such type).
 * Another dtype gives 0 (0.0f).
 * Collective: no. MPI: none needed. Allocates: nothing. Cannot fail. */
SHIRO_API uint16_t shiro_float_to_16(shiro_dtype dtype, float x);
/* The float that the bits h of a 16-bit type stand for (see shiro_float_to_16).
 * Collective: no. MPI: none needed. Allocates: nothing. Cannot fail. */
SHIRO_API float shiro_16_to_float(shiro_dtype dtype, uint16_t h);

/* Backend that executes the plan. SIM: the CPU backend under a simulated GPU
 * clock (SimGrid SMPI; only in the libshiro tools/sim/simulate.sh builds, elsewhere
 * shiro_ctx_create refuses it with SHIRO_ERR_UNSUPPORTED). */
typedef enum shiro_backend { SHIRO_BACKEND_CPU = 0,
                             SHIRO_BACKEND_CUDA = 1,
                             SHIRO_BACKEND_SIM = 2 } shiro_backend;

typedef struct shiro_plan shiro_plan;
typedef struct shiro_ctx shiro_ctx;

/* The version of the linked library, "MAJOR.MINOR.PATCH" (SHIRO_VERSION_STRING
 * of the headers it was built with). Thread-safe; the string is static: do not
 * free it.
 * Collective: no. MPI: none needed. Allocates: nothing. Cannot fail. */
SHIRO_API const char *shiro_get_version(void);

/* What a rank needs to know about its part of the problem. */
typedef struct shiro_plan_info {
  int32_t ranks; /* number of ranks the plan was made for */
  int32_t gpus_per_node; /* ranks per node the plan was made for */
  int32_t rank; /* the rank this plan handle belongs to */
  int64_t m, k, nnz; /* global shape and nonzeros of A */
  int64_t c_rows; /* rows of C (and A) owned by this rank */
  int64_t b_rows; /* rows of B owned by this rank */
  int64_t c_first; /* block/nnz: first global row of C owned (rows c_first .. c_first+c_rows-1) */
  int64_t b_first; /* block/nnz: first global row of B owned */
  const char *strategy; /* "block", "col", "row", "joint", "hier", "group", "cola", "hybrid" (owned by the plan) */
  const char *partition; /* "block", "nnz", "work", "time" (contiguous ranges) or "metis" / "metis-vol" / "metis-node" / "parts" (row lists) */
  const int64_t *c_global; /* [c_rows] global id of each local C row, increasing, for every partition
                              (block/nnz: c_first + i; metis: the rows listed). Owned by the plan; never
                              NULL, so one code path fills B and reads C whatever the partition */
  const int64_t *b_global; /* [b_rows] global id of each local B row, increasing, for every partition */
} shiro_plan_info;

/* Opens rank `rank`'s part of the plan file at `path` and maps its arrays.
 * Reads metadata only; never the other ranks' arrays. An application under
 * MPI opens its own part with shiro_plan_open_comm; this call serves tools
 * that inspect any rank's part.
 * Collective: no. MPI: none needed (works before MPI_Init).
 * Allocates: on success *plan, a new handle (free with shiro_plan_close),
 * and a read-only mapping of the rank's arrays.
 * On failure: *plan is NULL (where plan is not NULL); err (if not NULL)
 * says why; nothing is left open. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_plan_open(const char *path, int rank,
                                                        shiro_plan **plan, shiro_error *err);

/* Opens the calling rank's part of the plan file at `path`, its rank taken
 * from comm: shiro_plan_open(path, rank in comm) on every rank, the
 * communicator's size checked against the plan's ranks, and the outcome
 * agreed on.
 * Collective: over comm; every rank gets the same status and the same
 * message, the lowest failing rank's own ("shiro_plan_open_comm failed on
 * rank 0 (and 4 other ranks): A.shiro.h5: the plan was made for 4 ranks but
 * the communicator has 5 (launch with -np 4)"), so a program that leaves on
 * failure leaves on every rank. Each rank reads the root attributes and its
 * own rank's metadata (what shiro_plan_open reads).
 * MPI: initialized and not finalized (else SHIRO_ERR_ARG at once on the
 * calling rank, which can tell no other); any thread level. A rank that
 * passes MPI_COMM_NULL gets SHIRO_ERR_ARG at once (the others would wait).
 * Allocates: on success *plan, a new handle (free with shiro_plan_close).
 * On failure: *plan is NULL on every rank (where plan is not NULL) and
 * err (if not NULL) holds the agreed message. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_plan_open_comm(const char *path, MPI_Comm comm, shiro_plan **plan,
                                                             shiro_error *err);

/* Fills *info for an open plan; its pointers are the plan's (valid until
 * shiro_plan_close).
 * Collective: no. MPI: none needed. Allocates: nothing.
 * On failure: SHIRO_ERR_ARG, only when plan or info is NULL (so its result
 * need not be checked otherwise); *info is then untouched. */
SHIRO_API shiro_status shiro_plan_get_info(const shiro_plan *plan, shiro_plan_info *info);

/* This rank's rows of A (its local matrix) as the plan stores them (format
 * 2.1 and later): c_rows rows in local order (local row i is global row
 * info.c_global[i]), CSR with GLOBAL (original) column ids, strictly
 * increasing within each row. This is the order in which
 * shiro_ctx_set_values takes values, and
 * shiro_pattern_digest(c_rows, k, rowptr, colind) equals the digest the
 * plan records for the rank (shiro_plan_check_pattern).
 * Memory: the caller's. Call it first with rowptr, colind and values NULL
 * to learn *nnz (the rank's nonzeros), then again with arrays of
 * rowptr[c_rows + 1], colind[*nnz] and values[*nnz]; any of the three may be
 * NULL (not wanted). *has_values (may be NULL) is set to 1 when the plan
 * stores A's values, 0 when it was made from a pattern-only file: values is
 * then filled with 1.0, the values the plan multiplies by (a rank without
 * nonzeros cannot tell and reports 1). The values are
 * the plan file's: shiro_ctx_set_values changes a context, not the plan.
 * The first call checks the checksums and bounds of the rank's arrays (as
 * shiro_ctx_create does, once per plan).
 * Collective: no. MPI: none needed. Allocates: nothing.
 * On failure: SHIRO_ERR_ARG (plan or nnz NULL), SHIRO_ERR_VERSION (a plan
 * written in format 2.0, before local matrices were stored: plan the matrix
 * again; the rest of the API still serves it) or SHIRO_ERR_FORMAT (a damaged
 * file); nothing is written, the plan is unchanged. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_plan_get_local_matrix(shiro_plan *plan, int64_t *nnz, int *has_values,
                                                                    int64_t *rowptr, int64_t *colind, double *values,
                                                                    shiro_error *err);

/* Digest of a sparsity pattern: nrows rows of a matrix with ncols columns,
 * CSR row pointers and GLOBAL column indices (sorted within each row, no
 * duplicates: the pattern after symmetric expansion and summing duplicates).
 * The plan records it for each rank's rows of A.
 * Collective: no. MPI: none needed. Allocates: nothing. Cannot fail. */
SHIRO_API uint64_t shiro_pattern_digest(int64_t nrows, int64_t ncols, const int64_t *rowptr,
                                        const int64_t *colind);

/* Checks that this rank's rows of A (c_rows rows; digest from
 * shiro_pattern_digest(c_rows, k, ...)) have the pattern the plan was made
 * for.
 * Collective: no. MPI: none needed. Allocates: nothing.
 * On failure: SHIRO_ERR_MISMATCH, remembered by the plan, so that a later
 * shiro_ctx_create on it fails on every rank; SHIRO_ERR_ARG for a NULL plan. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_plan_check_pattern(shiro_plan *plan, uint64_t digest,
                                                                 shiro_error *err);

/* Closes a plan (unmaps it, frees the handle) and sets *plan to NULL; NULL or
 * *plan == NULL is a no-op. Every context made from the plan must be
 * destroyed first.
 * Collective: no. MPI: none needed. Allocates: nothing (frees the plan).
 * Cannot fail. */
SHIRO_API void shiro_plan_close(shiro_plan **plan);

/* How the CUDA backend moves rows between ranks (the CPU backend always uses MPI). */
typedef enum shiro_transport {
  SHIRO_TRANSPORT_AUTO = 0, /* NCCL when every rank has a GPU of its own, else MPI */
  SHIRO_TRANSPORT_NCCL = 1, /* NCCL grouped send/recv on the context's streams (one GPU per rank) */
  SHIRO_TRANSPORT_MPI = 2 /* MPI: CUDA-aware when the MPI library is, else staged through pinned host memory */
} shiro_transport;

/* Options of a context. Start from shiro_ctx_options_default(). */
typedef struct shiro_ctx_options {
  shiro_backend backend; /* CPU (default) or CUDA */
  shiro_dtype dtype; /* FLOAT64 (default), FLOAT32, BFLOAT16 or FLOAT16 (CUDA: compiled, not yet run) */
  int64_t n; /* columns of B and C (N >= 1): of every call but those of the _n and
                              * _checked calls, which take any width up to N; default 1 */
  int device; /* CUDA: device ordinal to use; -1 (default): the rank's index among the
                              * ranks of its node (MPI_COMM_TYPE_SHARED) modulo the device count */
  shiro_transport transport; /* CUDA: how rows move between ranks; default SHIRO_TRANSPORT_AUTO */
  int64_t timeout_ms; /* CUDA with NCCL: a call not complete after this many milliseconds aborts
                              * the context's NCCL communicator and fails with SHIRO_ERR_CUDA (the context
                              * can then only be destroyed). 0 (default): no timeout. Either way the wait
                              * polls NCCL's asynchronous errors and fails on one instead of hanging. */
  int threads; /* CPU kernels: OpenMP threads per call on this rank (may differ between
                              * ranks). 0 (default): OMP_NUM_THREADS where the user set it, else this
                              * rank's share of its node, the node's CPUs divided by the ranks on it
                              * (MPI_COMM_TYPE_SHARED), at least 1 and at most the CPUs of the rank's
                              * binding: never more threads than CPUs unless there are more ranks
                              * than CPUs. The library never changes the caller's OpenMP settings
                              * (a num_threads clause per parallel region). */
} shiro_ctx_options;

/* Returns the default options: CPU backend, float64, N = 1, device -1 (auto), transport AUTO, no
 * timeout, threads 0 (automatic).
 * Collective: no. MPI: none needed. Allocates: nothing. Cannot fail. */
SHIRO_API shiro_ctx_options shiro_ctx_options_default(void);

/* Creates a context that replays `plan` over `comm` for the given options and
 * allocates every buffer and persistent request a call will need. Collective
 * over comm: every rank gets the same status (a wrong rank count, a plan
 * opened for another rank, a NULL argument on one rank fails on all ranks,
 * without a hang). Every rank must ask for the same N, dtype, backend and
 * transport (compared across the ranks: SHIRO_ERR_ARG on all otherwise;
 * `device` may differ). A rank that passes MPI_COMM_NULL gets SHIRO_ERR_ARG
 * at once: it is in no communicator, so the others cannot learn of it (as
 * with any collective they would wait for it). The context works on a
 * duplicate of comm with MPI_ERRORS_RETURN: an MPI failure in a later call
 * is a SHIRO_ERR_MPI status, never an abort (though the peers of a rank whose
 * exchange failed may then wait for it). The plan must stay open while the
 * context lives; other contexts of the same plan may live beside it.
 * Collective: yes, over comm (one MPI_Comm_dup, one MPI_Comm_split_type for
 * the threads, a few small allreduces); every rank gets the same status and
 * the failing rank's own message, even when it passed err NULL.
 * Allocates: on success *ctx (free with shiro_ctx_destroy, on every rank):
 * its duplicate of comm, the send and receive buffers, the persistent MPI
 * requests, the program decoded, and the backend's state (CUDA: streams,
 * device buffers, an NCCL communicator).
 * On failure: *ctx is NULL on every rank (where ctx is not NULL), nothing is
 * left allocated, and the plan is unchanged. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_ctx_create(shiro_plan *plan, MPI_Comm comm,
                                                         const shiro_ctx_options *opts,
                                                         shiro_ctx **ctx, shiro_error *err);

/* Computes this rank's rows of C = A·B. B_local: b_rows × N, C_local:
 * c_rows × N, row-major, of the context's dtype (device pointers for the
 * CUDA backend). C_local is overwritten; B_local and C_local must not overlap
 * (refused with SHIRO_ERR_ARG). Collective over the context's communicator;
 * allocates nothing; adds no synchronization of its own. A NULL or
 * overlapping buffer is reported on the rank that passed it only (the others
 * would wait for it): use shiro_spmm_checked while developing.
 * Collective: yes, over the context's communicator (the plan's messages;
 * no extra synchronization).
 * Allocates: nothing.
 * On failure: the message is in shiro_ctx_last_error(ctx). After
 * SHIRO_ERR_ARG (a NULL or overlapping buffer, found before anything
 * starts) nothing was done and the context is as before. After any other
 * status (SHIRO_ERR_MPI, SHIRO_ERR_CUDA) C_local is unspecified, exchanges
 * may be left in flight and the peers may wait: destroy the context.
 * CUDA backend: B_local and C_local are device pointers on the context's
 * device, and shiro_spmm is synchronous from the caller's view: C_local is
 * complete on the device when it returns (the call waits for its own
 * streams). B_local must be complete when the call is made: the context's
 * streams are blocking streams, so work the calling thread queued on the
 * legacy default stream is ordered before the call; work on other streams
 * (or on the per-thread default stream) must be synchronized first. The call
 * makes the context's device current while it runs and restores the
 * caller's current device before it returns. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_spmm(shiro_ctx *ctx, const void *B_local,
                                                   void *C_local);

/* shiro_spmm with the caller's view of the call checked on every rank first:
 * n is the call's width, 1 .. the N the context was made for, the same on
 * every rank (shiro_spmm_n: B_local and C_local of n values a row); dtype
 * the context's; B/C non-NULL where the rank owns rows, and B and C must not
 * overlap. The ranks agree (small MPI_Allreduce calls) before any data
 * moves, so a misuse on one rank (n out of range, the ranks passing
 * different n, ...) fails on every rank with a message instead of leaving
 * the others waiting.
 * Collective: yes, over the context's communicator (one three-value and two
 * one-int allreduces, then shiro_spmm_n).
 * Allocates: nothing.
 * On failure: a misuse anywhere is SHIRO_ERR_ARG on every rank with the
 * lowest misusing rank's message ("...; nothing was computed"); the context
 * is as before. Other failures are shiro_spmm's. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_spmm_checked(shiro_ctx *ctx, const void *B_local,
                                                           void *C_local, int64_t n, shiro_dtype dtype);

/* shiro_spmm of width n: B_local is b_rows × n and C_local c_rows × n,
 * row-major with n values a row, for any n from 1 to the N the context was
 * made for. One context (one set of buffers, one shiro_ctx_set_values) then
 * serves every width up to N, e.g. the layers of a network. The messages
 * are the same rows between the same ranks in the same stages, of n values
 * a row (rows × n × sizeof(dtype) bytes), and C_local has the bits a
 * context made for exactly n columns gives. n = N is shiro_spmm. Every rank
 * must pass the same n (shiro_spmm_checked checks it).
 * Collective: yes, over the context's communicator, as shiro_spmm.
 * Allocates: nothing (at n = N the persistent requests; at other n one
 * MPI_Isend / MPI_Irecv per message into requests made with the context).
 * On failure: as shiro_spmm; n < 1 or n > N is SHIRO_ERR_ARG naming n,
 * found before anything starts on the rank that passed it (a rank that
 * passed another n would wait: shiro_spmm_checked agrees n first); the
 * context is then as before. CUDA backend: compiled, not yet run on a device
 * at n < N. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_spmm_n(shiro_ctx *ctx, const void *B_local, void *C_local, int64_t n);

/* Computes this rank's rows of X = Aᵀ·Y (the backward pass of C = A·B) from
 * the same plan: Y_local is this rank's c_rows × N rows of Y (laid out like
 * C_local), X_local its b_rows × N rows of X (like B_local), row-major, of the
 * context's dtype (device pointers for the CUDA backend); X_local is
 * overwritten, and Y_local and X_local must not overlap. The plan's program
 * runs backwards: every message moves the same rows between the same ranks in
 * the other direction (the same volumes per tier and stage as shiro_spmm).
 * The first call on a context derives the transposed program (allocates, and
 * agrees across the ranks: collective, like every call); later calls
 * allocate nothing. Deterministic: the same bits on every call.
 * Collective: yes, over the context's communicator.
 * Allocates: at the first call on a context, the transposed program (freed
 * with the context); later calls nothing.
 * On failure: the message is in shiro_ctx_last_error(ctx). If the first
 * call could not derive the transposed program, every rank fails the same
 * way and later transposed calls fail at once (SHIRO_ERR_UNSUPPORTED);
 * shiro_spmm still works. Otherwise as shiro_spmm: SHIRO_ERR_ARG leaves the
 * context as before, other statuses leave X_local unspecified (destroy it). */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_spmm_transpose(shiro_ctx *ctx, const void *Y_local,
                                                             void *X_local);

/* shiro_spmm in two parts, so that the caller may compute between them:
 * shiro_spmm_begin starts the exchanges of the first stage and computes what
 * does not wait for them (the rows to send, the partial rows for other ranks,
 * the local product, polling the messages meanwhile); shiro_spmm_end waits for
 * them and completes C_local (the received rows, later stages). The blocking
 * shiro_spmm is begin then end at once: the same bits. Between the two the
 * caller must not write B_local nor read or write C_local, and makes no other
 * call on ctx (refused with SHIRO_ERR_ARG, the call in progress unharmed);
 * calls on other contexts and its own MPI calls are free. With Open MPI's
 * default progress (no progress thread) a message that needs the peers'
 * polls moves on only inside shiro_spmm_end, so the overlap the caller's
 * work gets depends on the MPI library. CUDA backend: begin runs the whole
 * call (its device current only inside it) and end returns its status.
 * Collective: yes, over the context's communicator: every rank calls begin,
 * then end, in the same order as its other collective calls.
 * Allocates: nothing.
 * On failure: of begin, as shiro_spmm (a NULL or overlapping buffer is
 * found before anything starts, on the calling rank only); the call is over,
 * end is not called. Of end, as shiro_spmm's failures inside a call (destroy
 * the context); end without a successful begin is SHIRO_ERR_ARG. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_spmm_begin(shiro_ctx *ctx, const void *B_local, void *C_local);

/* The end of a call begun with shiro_spmm_begin (see there).
 * Collective: yes, over the context's communicator. Allocates: nothing.
 * On failure: as shiro_spmm_begin says. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_spmm_end(shiro_ctx *ctx);

/* shiro_spmm_transpose of width n (1 .. N): Y_local c_rows × n, X_local
 * b_rows × n, row-major with n values a row; the bits of a context made for
 * exactly n columns. As shiro_spmm_n otherwise.
 * Collective: yes, over the context's communicator, as shiro_spmm_transpose.
 * Allocates: as shiro_spmm_transpose (its first call, at any width, derives
 * the program); otherwise nothing.
 * On failure: as shiro_spmm_n. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_spmm_transpose_n(shiro_ctx *ctx, const void *Y_local, void *X_local,
                                                               int64_t n);

/* shiro_spmm_checked for the transposed product: the same checks of n
 * (1 .. N, the same on every rank), dtype, NULL and overlapping buffers,
 * agreed on by every rank, then shiro_spmm_transpose_n.
 * Collective: yes, over the context's communicator.
 * Allocates: as shiro_spmm_transpose.
 * On failure: as shiro_spmm_checked; other failures are shiro_spmm_transpose's. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_spmm_transpose_checked(shiro_ctx *ctx, const void *Y_local,
                                                                     void *X_local, int64_t n, shiro_dtype dtype);

/* shiro_spmm_transpose in two parts, as shiro_spmm_begin / shiro_spmm_end.
 * Collective: yes, over the context's communicator.
 * Allocates: at the first transposed call on a context, its program (as
 * shiro_spmm_transpose); otherwise nothing.
 * On failure: as shiro_spmm_begin. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_spmm_transpose_begin(shiro_ctx *ctx, const void *Y_local,
                                                                   void *X_local);

/* The end of a call begun with shiro_spmm_transpose_begin.
 * Collective: yes, over the context's communicator. Allocates: nothing.
 * On failure: as shiro_spmm_end. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_spmm_transpose_end(shiro_ctx *ctx);

/* Layouts of B and C (of Y and X) for shiro_spmm_layout: ROW_MAJOR, value
 * (i, j) at i·ld + j (ld >= N); COL_MAJOR, value (i, j) at i + j·ld (ld >= the
 * rows this rank owns: BLAS's, LAPACK's and PETSc's dense layout). */
typedef enum shiro_layout { SHIRO_ROW_MAJOR = 0,
                            SHIRO_COL_MAJOR = 1 } shiro_layout;

/* shiro_spmm with B_local and C_local in the caller's layout: B_local's
 * b_rows × N values with leading dimension ldb, C_local's c_rows × N values
 * with ldc, both in `layout`; the caller copies nothing. C_local's values are
 * overwritten, the rest of its leading dimension is not touched. The bits of
 * C are those of shiro_spmm on the same values in row-major order: the call
 * copies B into dense rows the context keeps, runs the row-major call on them
 * and copies C back (two copies of b_rows·N + c_rows·N values, a few percent
 * of a call); a context that cannot get those rows runs the call in place,
 * with the same bits, about twice as slow. shiro_spmm is the case ROW_MAJOR,
 * ldb = ldc = N. CPU backend (and the simulation's); the CUDA backend takes
 * only that case (SHIRO_ERR_UNSUPPORTED otherwise). B_local and C_local must
 * not share a byte of the address ranges they span.
 * Collective: yes, over the context's communicator, as shiro_spmm.
 * Allocates: at the context's first call in another layout (either
 * direction), its staging rows, b_rows × N and c_rows × N values, kept until
 * shiro_ctx_destroy; nothing after that.
 * On failure: as shiro_spmm; a bad layout or an ld below its least
 * (SHIRO_ERR_ARG, naming ldb or ldc) is found before anything starts and is
 * reported on the calling rank only, as a NULL buffer is. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_spmm_layout(shiro_ctx *ctx, shiro_layout layout, const void *B_local,
                                                          int64_t ldb, void *C_local, int64_t ldc);

/* shiro_spmm_transpose with Y_local (c_rows × N, leading dimension ldy) and
 * X_local (b_rows × N, ldx) in `layout`, through the same staging rows: the
 * bits of shiro_spmm_transpose on the same values in row-major order.
 * Collective: yes, over the context's communicator, as shiro_spmm_transpose.
 * Allocates: as shiro_spmm_transpose (its first call derives the program)
 * and shiro_spmm_layout (the staging rows).
 * On failure: as shiro_spmm_layout. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_spmm_transpose_layout(shiro_ctx *ctx, shiro_layout layout,
                                                                    const void *Y_local, int64_t ldy, void *X_local,
                                                                    int64_t ldx);

/* shiro_spmm_begin with B_local and C_local in the caller's layout, as
 * shiro_spmm_layout takes them; the call is completed by shiro_spmm_end,
 * which writes C_local. As with shiro_spmm_begin, the caller does not touch
 * B_local or C_local in between. The bits of shiro_spmm_layout.
 * Collective: yes, as shiro_spmm_begin.
 * Allocates: as shiro_spmm_layout (the staging rows, at the context's first
 * call in another layout).
 * On failure: as shiro_spmm_begin and shiro_spmm_layout. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_spmm_layout_begin(shiro_ctx *ctx, shiro_layout layout,
                                                                const void *B_local, int64_t ldb, void *C_local,
                                                                int64_t ldc);

/* shiro_spmm_transpose_begin with Y_local and X_local in the caller's layout
 * (as shiro_spmm_transpose_layout); completed by shiro_spmm_transpose_end.
 * Collective: yes. Allocates: as shiro_spmm_transpose_layout.
 * On failure: as shiro_spmm_transpose_begin and shiro_spmm_layout. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_spmm_transpose_layout_begin(shiro_ctx *ctx, shiro_layout layout,
                                                                          const void *Y_local, int64_t ldy,
                                                                          void *X_local, int64_t ldx);

/* Installs new values for this rank's nonzeros: values[t] replaces the value
 * of entry t of the rank's local matrix (shiro_plan_get_local_matrix's
 * order; *nnz doubles, host memory for every backend; NULL only where the
 * rank has no nonzeros). The pattern stays the plan's; a plan made from a
 * pattern-only file works the same (its values, all 1, become the ones
 * given). Every later shiro_spmm and shiro_spmm_transpose multiplies by the
 * new values (float32 contexts: rounded once, here); the values are the
 * context's: other contexts and the plan keep theirs. Values that other
 * ranks multiply on this rank's behalf (partial rows of its C, and relays in
 * two-tier plans) are shipped to them: the first call sets the exchange up
 * (allocates; a few small collectives), and every call makes one
 * MPI_Alltoallv of the values, no per-N buffers. shiro_spmm still allocates
 * nothing. Not while another call on ctx is in progress.
 * Collective: yes, over the context's communicator; every rank gets the same
 * status and the failing rank's own message.
 * Allocates: at the first call on a context, the exchange's tables and the
 * context's copy of the values (freed with the context); later calls only a
 * temporary send and receive buffer of the values shipped.
 * On failure: the message is in shiro_ctx_last_error; SHIRO_ERR_ARG (ctx or values
 * NULL), SHIRO_ERR_VERSION (a 2.0 plan: it does not record where each value
 * is multiplied; plan the matrix again), SHIRO_ERR_NOMEM, SHIRO_ERR_MPI, or
 * the backend's (CUDA: the upload); the context's values are then the old
 * ones or, if the failure came in the backend's upload, unspecified until a
 * call succeeds; the context stays usable. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_ctx_set_values(shiro_ctx *ctx, const double *values);

/* shiro_ctx_set_values with the values' type said: `values` holds *nnz
 * floats (SHIRO_FLOAT32) or doubles (SHIRO_FLOAT64), whatever the context's
 * type. Float values are widened exactly, so a float32 context multiplies by
 * the very floats given (a float64 context by their exact double values); no
 * copy of the caller's array is needed for either. Everything else is
 * shiro_ctx_set_values' contract.
 * Collective: yes, over the context's communicator, as shiro_ctx_set_values.
 * Allocates: as shiro_ctx_set_values.
 * On failure: as shiro_ctx_set_values; a dtype of neither type is
 * SHIRO_ERR_ARG on every rank, with the values unchanged. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_ctx_set_values_dtype(shiro_ctx *ctx, const void *values,
                                                                   shiro_dtype dtype);

/* The gradient of the values (SDDMM): for each of this rank's nonzeros A_ij,
 * in shiro_ctx_set_values' order (shiro_plan_get_local_matrix's), grad[t] =
 * ⟨G_i, B_j⟩ = Σ_k G(i,k)·B(j,k), the derivative of a loss L with respect to
 * A_ij when G = ∂L/∂C for C = A·B. B_local is this rank's b_rows × n rows of
 * B (as for shiro_spmm_n), G_local its c_rows × n rows of G (as C_local),
 * row-major with n values a row, of the context's dtype; grad holds *nnz
 * values of the context's dtype (so `v -= lr * grad; shiro_ctx_set_values`
 * is a step of gradient descent on the values). Computed from the plan's
 * own messages: the forward program moves the B rows each product needs
 * (its gathers and exchanges, not its products), the transposed program
 * moves the G rows back along the forward's partial rows, and the rank that
 * multiplies A_ij forms the dot product (in double: column k into partial
 * sum k mod 8, in increasing k, the 8 sums added pairwise: a fixed order,
 * the same bits on every call); a value multiplied on another rank than its owner's comes back in
 * one MPI_Alltoallv, the reverse of shiro_ctx_set_values'. Every call is
 * checked as shiro_spmm_checked: n (1 .. N, the same on every rank), dtype
 * and NULL buffers, agreed on by every rank before any data moves. CPU
 * backend only for now. Not while a split call is in progress.
 * Collective: yes, over the context's communicator (a few small
 * MPI_Allreduce calls, the forward's and the transposed program's messages,
 * one MPI_Alltoallv).
 * Allocates: at the first call on a context, the transposed program (as
 * shiro_spmm_transpose), the value exchange (as shiro_ctx_set_values) and
 * copies of the send and receive buffers at N (freed with the context);
 * later calls nothing.
 * On failure: a misuse anywhere is SHIRO_ERR_ARG on every rank with the
 * lowest misusing rank's message ("...; nothing was computed"); a plan of
 * format 2.0 is SHIRO_ERR_VERSION, another backend than the CPU's
 * SHIRO_ERR_UNSUPPORTED, on every rank; the context is then as before.
 * SHIRO_ERR_NOMEM at the first call reaches every rank. A failure inside
 * the call (SHIRO_ERR_MPI) is shiro_spmm's: grad is unspecified and the
 * peers may wait (destroy the context). */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_sddmm(shiro_ctx *ctx, const void *B_local, const void *G_local,
                                                    void *grad, int64_t n, shiro_dtype dtype);

/* The OpenMP threads this rank's CPU kernels use in each call (*threads),
 * and how that count was chosen, in words (*why, may be NULL: "the context's
 * option", "OMP_NUM_THREADS=4", "2 CPUs on the node / 4 ranks there"; owned
 * by ctx). A count given by the option or OMP_NUM_THREADS above the CPUs
 * the rank may run on (its affinity: mpirun binds a rank to one core by
 * default) adds "; more than the 1 CPU of this rank's binding: threads
 * share cores".
 * Collective: no. Allocates: nothing.
 * On failure: SHIRO_ERR_ARG, only when ctx or threads is NULL. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_ctx_get_threads(const shiro_ctx *ctx, int *threads, const char **why);

/* The message of the last failed call on ctx ("" if none, and for a NULL
 * ctx). Owned by ctx, valid until its next call.
 * Collective: no. Allocates: nothing. Cannot fail. */
SHIRO_API const char *shiro_ctx_last_error(const shiro_ctx *ctx);

/* Per-call traffic of this rank, from the plan: rows and bytes it sends per
 * shiro_spmm, split by tier (bytes at the context's N; a call of width n
 * moves the same rows, rows × n × sizeof(dtype) bytes). */
typedef struct shiro_traffic {
  int64_t rows_sent, rows_received; /* rows of N values, all tiers */
  int64_t inter_node_rows_sent; /* of rows_sent, to another node */
  int64_t bytes_sent, bytes_received; /* rows × N × sizeof(dtype) */
} shiro_traffic;

/* Fills *t with this rank's per-call traffic (shiro_traffic).
 * Collective: no. Allocates: nothing.
 * On failure: SHIRO_ERR_ARG, only when ctx or t is NULL; *t untouched. */
SHIRO_API SHIRO_MUST_CHECK shiro_status shiro_ctx_get_traffic(const shiro_ctx *ctx,
                                                              shiro_traffic *t);

/* Destroys a context (frees its buffers, MPI requests and communicator, the
 * backend's state) and sets *ctx to NULL; NULL or *ctx == NULL is a no-op.
 * Any context may be destroyed, also after a failed call. Its plan stays
 * open.
 * Collective: yes in MPI's sense, over the context's communicator (it frees
 * its duplicate with MPI_Comm_free, which MPI calls collective): every rank
 * destroys its context, before MPI_Finalize; it waits for no other rank.
 * Allocates: nothing (frees the context). Cannot fail. */
SHIRO_API void shiro_ctx_destroy(shiro_ctx **ctx);

#ifdef __cplusplus
}
#endif
#endif /* SHIRO_H */
