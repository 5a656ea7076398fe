/* dist_write.h — one plan file written by the planner's processes together: process 0 writes
 * the metadata (HDF5, serial), each process the bytes of its own ranks' arrays. */
#ifndef SHIRO_DIST_WRITE_H
#define SHIRO_DIST_WRITE_H

#include "dist_comm.h"
#include "program.h"

typedef struct dist_writer dist_writer;

/* Collective: process 0 creates the plan file's temporary file for `path` with meta's root
 * attributes (plan_writer_open), every process opens it for its ranks' bytes. rounds: the most
 * programs any process writes (each round writes at most one per process). The path must be on
 * a file system every process sees. Errors agreed; on failure nothing is left at path. */
shiro_status dist_writer_open(const dist_comm *c, const char *path, const prog_meta *meta, int32_t rounds,
                              dist_writer **w, shiro_error *err);

/* One round (collective over the processes, any thread of each; one thread at a time): this
 * process's next program pr (NULL: none), or its failure st (err filled). Process 0 declares every
 * program of the round in the file, then each process writes its own program's bytes. Returns
 * SHIRO_OK, st, or, once any process failed, a status that stops the caller (the failing process
 * reports: dist_writer_close). pr stays the caller's. */
shiro_status dist_writer_round(dist_writer *w, const prog_rank *pr, shiro_status st, shiro_error *err);

/* Collective: runs the rounds left (this process has no more programs; st: its own failure, if
 * any), closes every process's file, then process 0 seals the plan and renames it into place, or,
 * after any failure, removes it. Returns the agreed outcome, err the failing process's message.
 * Frees w. */
shiro_status dist_writer_close(dist_writer *w, shiro_status st, shiro_error *err);

#endif
