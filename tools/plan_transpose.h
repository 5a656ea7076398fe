/* plan_transpose.h — a rank's transposed program (X = Aᵀ·Y) in the plan's own encoding, derived
 * by the runtime's derivation itself (runtime/transpose.c, built into the tool), so that
 * shiro-plan-dump counts and proves the very program shiro_spmm_transpose runs. */
#ifndef SHIRO_PLAN_TRANSPOSE_H
#define SHIRO_PLAN_TRANSPOSE_H

#include "program.h"
#include "shiro_status.h"

struct shiro_ctx;

/* A derived program. pr reads like a program of the plan file: its ops (owned here) are the
 * transposed program's in order (compute ops as PROG_OP_MUL, TAG 0; HAS_VAL for those with
 * values), its ptr, col, rows, val (float64) and xchg are the derivation's arrays, s_rows and
 * r_rows count the spare rows the derivation adds; rank, c/b rows and firsts are the forward
 * program's. Where the derivation has no array, the pointer is NULL and its count 0; the pool
 * counts (nptr, ncol, ...) are not set (only ops and xchg counts are). */
typedef struct plan_transposed {
  prog_rank pr;
  struct shiro_ctx *ctx; /* the derivation's context (owned): the arrays pr points into */
} plan_transposed;

/* Derives the transposed program of fwd (which must have passed plan_check_rank, and must
 * outlive *out) into *out, exactly as a float64 context of libshiro does at its first
 * shiro_spmm_transpose. Local; allocates. On failure (no memory, or a forward program that
 * has no transposed one) err says why and *out holds nothing to free. */
shiro_status plan_transpose_rank(const prog_rank *fwd, plan_transposed *out, shiro_error *err);

/* Frees what plan_transpose_rank made; a zeroed *t is a no-op. */
void plan_transposed_free(plan_transposed *t);

#endif
