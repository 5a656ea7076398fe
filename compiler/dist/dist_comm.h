/* dist_comm.h — the distributed planner's processes: one outcome for all, arrays traded. */
#ifndef SHIRO_DIST_COMM_H
#define SHIRO_DIST_COMM_H

#include <mpi.h>
#include <stdint.h>

#include "shiro_status.h"

/* The planner's processes (a communicator of the caller's, not freed here). */
typedef struct dist_comm {
  MPI_Comm comm;
  int rank, size;
} dist_comm;

/* One outcome on every process (collective): SHIRO_OK when st is SHIRO_OK on all of them; else
 * every process returns the status of the lowest failing process, err holding that process's
 * message, "process P: " in front (once: a message agreed on before is kept as it is). */
shiro_status dist_agree(const dist_comm *c, shiro_status st, shiro_error *err);

/* All-to-all of bytes (collective): sendn[d] bytes to each process d, the blocks one after the
 * other in process order in send; *recv (malloc'ed, the caller frees it) gets recvn[s] bytes from
 * each process s, in process order. Any sizes: what goes to one process moves in pieces
 * (dist_set_chunk_bytes). A local failure (memory) is agreed on before anything moves: no process is
 * left waiting. Memory: the send buffer and *recv (each block is sent from send in place). */
shiro_status dist_alltoallv(const dist_comm *c, const void *send, const int64_t *sendn, void **recv, int64_t *recvn,
                            shiro_error *err);

/* Writes this process's bytes for process d (sendn[d] of them) at buf. */
typedef void (*dist_pack_fn)(void *arg, int d, char *buf);

/* dist_alltoallv with the bytes packed for one destination at a time (pack), in P rounds (round k:
 * to process rank+k, from process rank-k), so that only the bytes for one process are held beside
 * *recv: the peak is what this process receives plus its largest block, not everything it sends
 * on top. Its own block is packed straight into *recv. Collective; failures agreed first. */
shiro_status dist_exchange(const dist_comm *c, const int64_t *sendn, dist_pack_fn pack, void *arg, void **recv,
                           int64_t *recvn, shiro_error *err);

/* Sets the most bytes one MPI call moves (default 1 GiB; 0 or more than 2^31-1: the default), for
 * tests that make the pieces small. Every process must set the same. Not thread-safe. */
void dist_set_chunk_bytes(int64_t bytes);

#endif
