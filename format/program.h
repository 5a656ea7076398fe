/* program.h — one rank's part of a plan: a short straight-line program.
 *
 * The planner builds it in memory, the format writes it, the reader maps it
 * back into the same struct (pointers into the mapped file), and a runtime
 * backend interprets it. Every array here is a dataset of the plan file; the
 * meaning of each field is documented in format/README.md.
 *
 * Buffers, each a row-major array of rows of N values:
 *   B (the application's local B rows), C (its local C rows),
 *   S (rows to send), R (rows received).
 * Every compute op has one shape, dst[rows] (+)= M · src, with M a sparse
 * operator stored in the pools (ptr/col/val/rows); START and WAIT begin and
 * end the exchanges of one stage. */
#ifndef SHIRO_PROGRAM_H
#define SHIRO_PROGRAM_H

#include <stdint.h>

enum { PROG_BUF_B = 0,
       PROG_BUF_C = 1,
       PROG_BUF_S = 2,
       PROG_BUF_R = 3,
       PROG_NBUF = 4 };
enum { PROG_OP_MUL = 1,
       PROG_OP_START = 2,
       PROG_OP_WAIT = 3 };

/* Fields of one op record (ops dataset: nops × PROG_OP_WIDTH int64). */
enum {
  OPF_KIND = 0, /* PROG_OP_* */
  OPF_STAGE = 1, /* START/WAIT: the stage; MUL: the stage it belongs to (informative) */
  OPF_DST_BUF = 2, /* MUL: PROG_BUF_* written */
  OPF_DST_OFF = 3, /* MUL: first row of dst the op addresses */
  OPF_SRC_BUF = 4, /* MUL: PROG_BUF_* read */
  OPF_SRC_OFF = 5, /* MUL: first row of src the op addresses */
  OPF_NROWS = 6, /* MUL: rows of M */
  OPF_PTR_OFF = 7, /* MUL: M's row pointers are ptr[PTR_OFF .. PTR_OFF+NROWS] (absolute col/val positions) */
  OPF_ROWS_OFF = 8, /* MUL: -1: M's row i writes dst row DST_OFF+i; else rows[ROWS_OFF+i] gives it */
  OPF_HAS_VAL = 9, /* MUL: 1: entries have values val[]; 0: every entry is 1 (select / sum rows) */
  OPF_ACCUM = 10, /* MUL: 1: dst += M·src; 0: dst = M·src */
  OPF_TAG = 11, /* MUL: what it computes (PROG_TAG_*), for inspection only */
  PROG_OP_WIDTH = 12
};
enum {
  PROG_TAG_NONE = 0,
  PROG_TAG_GATHER_B = 1,
  PROG_TAG_PARTIAL_C = 2,
  PROG_TAG_LOCAL = 3,
  PROG_TAG_REMOTE_B = 4,
  PROG_TAG_ADD_C = 5,
  PROG_TAG_FORWARD_B = 6,
  PROG_TAG_AGGREGATE_C = 7
};

/* Fields of one exchange record (xchg dataset: nx × PROG_X_WIDTH int64). One
 * record is one message of COUNT rows to or from PEER in stage STAGE. */
enum {
  XF_STAGE = 0, /* stage whose START/WAIT posts and completes it */
  XF_PEER = 1, /* the other rank */
  XF_DIR = 2, /* 0: send from BUF, 1: receive into BUF */
  XF_BUF = 3, /* PROG_BUF_S or PROG_BUF_R, nothing else (plan_check_rank): a receive fills R; a
                     send reads S, or R for B rows forwarded as they were received */
  XF_OFF = 4, /* first row in BUF */
  XF_COUNT = 5, /* rows */
  XF_TIER = 6, /* 0: peer in the same node, 1: another node */
  XF_BROWS = 7, /* of COUNT, rows that are B rows (the rest are partial C rows) */
  XF_KIND = 8, /* what the message carries (PROG_MSG_*); MPI tag = STAGE * 16 + KIND */
  PROG_X_WIDTH = 9
};
enum {
  PROG_MSG_DIRECT = 0, /* B rows then partial C rows, straight from source to destination */
  PROG_MSG_INTER_B = 1, /* B rows crossing to the rail-aligned rank of the destination node */
  PROG_MSG_AGG_PART = 2, /* partial C rows to the aggregating rank of the source node */
  PROG_MSG_FWD_B = 3, /* B rows forwarded inside the destination node */
  PROG_MSG_AGG_C = 4, /* aggregated partial C rows crossing to their owner */
  PROG_MSG_KINDS = 5
};

/* The arrays of a rank, in file order. */
enum { PA_OPS = 0,
       PA_XCHG,
       PA_PTR,
       PA_COL,
       PA_VAL,
       PA_ROWS,
       PA_CERT,
       PA_CGLOBAL,
       PA_BGLOBAL,
       PA_APTR,
       PA_ACOL,
       PA_AVAL,
       PA_VALSRC, /* since 2.1 (empty when a 2.0 plan is read) */
       PROG_NARRAYS };
/* The arrays every 2.0 plan has (PA_OPS .. PA_BGLOBAL); 2.1 added the rest. */
enum { PROG_NARRAYS_2_0 = PA_APTR };

typedef struct prog_rank {
  int32_t rank; /* rank this program runs on */
  int32_t nstages; /* stages 0 .. nstages-1 */
  int64_t c_first; /* first row of C owned, in the plan's numbering (= original unless c_global is given) */
  int64_t c_rows; /* rows of C owned (buffer C) */
  int64_t b_first; /* first global row of B owned */
  int64_t b_rows; /* rows of B owned (buffer B) */
  int64_t s_rows; /* rows of buffer S */
  int64_t r_rows; /* rows of buffer R */
  int64_t nops; /* records in ops */
  int64_t *ops; /* [nops × PROG_OP_WIDTH] */
  int64_t nx; /* records in xchg */
  int64_t *xchg; /* [nx × PROG_X_WIDTH] */
  int64_t nptr; /* entries of ptr */
  int64_t *ptr; /* [nptr] row pointers of every operator */
  int64_t ncol; /* entries of col */
  int32_t *col; /* [ncol] source rows (relative to the op's SRC_OFF) */
  int64_t nval; /* entries of val (= ncol, or 0 if no op has values) */
  double *val; /* [nval] values of A, aligned with col */
  int64_t nrowidx; /* entries of rows */
  int32_t *rows; /* [nrowidx] destination rows (relative to the op's DST_OFF) */
  int64_t ncert; /* optimality certificate: matched (row, column) pairs */
  int64_t *cert; /* [ncert × 2] global (i, j) of A: a matching per cover problem (DESIGN: its certificate) */
  int64_t ncglobal; /* c_rows when the partition lists rows (metis), else 0 */
  int64_t *c_global; /* [ncglobal] original global id of each local C row, increasing */
  int64_t nbglobal; /* b_rows when the partition lists rows (metis), else 0 */
  int64_t *b_global; /* [nbglobal] original global id of each local B row, increasing */
  /* Since 2.1: the rank's rows of A (its local matrix, the order set_values takes values in) and
   * where every value of the program comes from. All four are empty in a 2.0 plan. */
  int64_t naptr; /* entries of a_ptr: c_rows + 1 (0: a 2.0 plan, no local matrix) */
  int64_t *a_ptr; /* [naptr] CSR row pointers of the local matrix: local row i (global row c_global[i],
                         or c_first + i) has entries a_ptr[i] .. a_ptr[i+1]-1; a_ptr[0] = 0 */
  int64_t nacol; /* entries of a_col: the rank's nonzeros (= a_ptr[c_rows]) */
  int64_t *a_col; /* [nacol] ORIGINAL global column id of each entry, strictly increasing in a row */
  int64_t naval; /* entries of a_val: nacol, or 0 when the matrix had no values (pattern file) */
  double *a_val; /* [naval] value of each entry */
  int64_t nvalsrc; /* entries of val_src: ncol (0: a 2.0 plan) */
  int64_t *val_src; /* [nvalsrc] per entry of col/val: the plan-wide id of the nonzero of A whose value it
                         is (the ranks' local matrices numbered one after the other in rank order: rank q's
                         entry l is Σ_{p<q} nacol(p) + l), or -1 for entries that only select or sum rows */
  uint64_t pattern_digest; /* shiro_pattern_digest of this rank's rows of A (original ids, local order) */
  uint32_t crc[PROG_NARRAYS]; /* CRC32C of each array, in prog_array order (filled by writer and reader) */
} prog_rank;

/* Plan-wide facts (root attributes of the file). */
typedef struct prog_meta {
  int32_t ranks; /* R */
  int32_t gpus_per_node; /* G: rank r is in node r / G */
  int64_t m, k, nnz; /* shape and nonzeros of A */
  char strategy[16]; /* "block", "col", "row", "joint", ... */
  char partition[16]; /* "block", ... */
  uint64_t matrix_digest; /* shiro_pattern_digest of the whole matrix */
  int64_t version_minor; /* minor version of the file read (writer: PLAN_VERSION_MINOR) */
} prog_meta;

/* Computes crc[] of a program built in memory (what the writer stores). */
void prog_rank_seal(prog_rank *pr);

/* Address and byte size of array a of a program. */
const void *prog_array(const prog_rank *pr, int a, size_t *bytes);

/* Name of array a, its dataset's name in the file ("ops" .. "val_src", format/README.md R2);
 * "?" for an a outside 0 .. PROG_NARRAYS-1. */
const char *prog_array_name(int a);

/* Fills *shape with pr's shape: its counts, attributes and sealed CRCs (prog_rank_seal of
 * its arrays), every array pointer NULL. A plain struct of integers: what a process of a
 * distributed planner sends to the one that declares its datasets (plan_writer_declare)
 * before it writes the arrays themselves (plan_rank_write_raw). Local; reads every array
 * once (the CRCs); cannot fail. */
void prog_rank_shape(const prog_rank *pr, prog_rank *shape);

/* Frees the arrays of a program built in memory (not a mapped one) and zeroes it. */
void prog_rank_free(prog_rank *pr);

#endif
