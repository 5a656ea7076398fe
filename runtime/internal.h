/* internal.h — the runtime's private structs (plan handle, context, backends). */
#ifndef SHIRO_INTERNAL_H
#define SHIRO_INTERNAL_H

#include "plan_file.h"
#include "program.h"
#include "shiro.h"

struct shiro_plan {
  prog_meta meta;     /* root attributes */
  prog_rank pr;       /* this rank's program; arrays point into map */
  plan_mapping map;   /* the mapped bytes of this rank's arrays */
  int checked;        /* 1 once plan_check_rank passed */
};

struct shiro_ctx {
  shiro_plan *plan;          /* borrowed: must outlive the context */
  MPI_Comm comm;             /* duplicate of the application's communicator (own tag space) */
  shiro_ctx_options opts;
  size_t esz;                /* bytes per value */
  void *S, *R;               /* send / receive buffers: s_rows × N, r_rows × N */
  void *valf;                /* float32 copy of the plan's values (float contexts), else NULL */
  MPI_Datatype row_type;     /* N contiguous values */
  int64_t nreq;              /* persistent requests, ordered by stage */
  MPI_Request *req;          /* [nreq] */
  int64_t *stage_first;      /* [nstages+1] requests of stage s: req[stage_first[s] .. stage_first[s+1]-1] */
  shiro_traffic traffic;     /* per-call traffic of this rank */
  char error[512];           /* message of the last failed call */
};

/* CPU kernel: executes one MUL op, dst[...] (+)= M · src, with N values per
 * row. val is the value array of the context's type (float or double),
 * aligned with pr->col. OpenMP-parallel over the op's rows; each row is
 * computed by one thread in entry order, so results do not depend on the
 * thread count. */
void cpu_mul_f64(const prog_rank *pr, const int64_t *op, const double *val, double *dst,
                 const double *src, int64_t n);
void cpu_mul_f32(const prog_rank *pr, const int64_t *op, const float *val, float *dst,
                 const float *src, int64_t n);

#endif
