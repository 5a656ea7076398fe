/* spmm_overlap.h — shiro-spmm --overlap: the split-phase call with the caller's own work between
 * begin and end, against the call and the work one after the other. */
#ifndef SHIRO_SPMM_OVERLAP_H
#define SHIRO_SPMM_OVERLAP_H

#include <stdint.h>

#include "shiro.h"

/* The times of ctx's forward call on B, C (t_call: seconds per call, from the run) and of a dense
 * update of this rank's own array sized to take about t_call, then `iters` rounds of (call; work)
 * and of (begin; work; end), the best of 5 rounds each, the slowest rank's mean. Rank 0 prints
 * one line: the four times and (begin + work + end) / (call; work). Collective over
 * MPI_COMM_WORLD. Returns 0, or 1 after printing why a call failed. */
int spmm_overlap(shiro_ctx *ctx, const void *B, void *C, double t_call, int64_t iters, int rank, const char *label);

#endif
