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
  int checked;        /* 1 once checksums and plan_check_rank passed */
  int pattern_mismatch;  /* 1 if shiro_plan_check_pattern found another matrix */
};

/* A backend executes a checked program. setup allocates everything a call
 * needs (c->plan, c->comm, c->opts and c->esz are set); spmm runs one call
 * (B, C non-NULL where the rank owns rows) and must not allocate; destroy
 * frees whatever setup made, also after a partial setup. Failures fill
 * c->error / err. */
typedef struct backend_ops {
  const char *name;
  shiro_status (*setup)(shiro_ctx *c, shiro_error *err);
  shiro_status (*spmm)(shiro_ctx *c, const void *B, void *C);
  void (*destroy)(shiro_ctx *c);
} backend_ops;

extern const backend_ops cpu_backend;   /* cpu_backend.c */
extern const backend_ops cuda_backend;  /* cuda/backend_cuda.cu, when built with CUDA */

struct shiro_ctx {
  shiro_plan *plan;          /* borrowed: must outlive the context */
  MPI_Comm comm;             /* duplicate of the application's communicator (own tag space) */
  shiro_ctx_options opts;
  size_t esz;                /* bytes per value */
  const backend_ops *be;     /* the backend running this context */
  void *state;               /* the backend's own state (owned by it) */
  shiro_traffic traffic;     /* per-call traffic of this rank */
  char error[512];           /* message of the last failed call */
};

/* MPI tag of an exchange record: kinds never share a tag, so matching never
 * relies on posting order. */
static inline int xchg_tag(const int64_t *rec) { return (int)(rec[XF_STAGE] * 16 + rec[XF_KIND]); }

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
