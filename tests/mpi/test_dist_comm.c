/* test_dist_comm.c — the distributed planner's all-to-all of bytes (dist_alltoallv, dist_exchange),
 * run under mpirun -np 1, 2 and 3: every process sends every other (and itself) a block of a size
 * that depends on the pair (0 bytes for some pairs), each byte a function of (sender, receiver,
 * offset); every block must arrive whole, in process order, at recvn's sizes. Repeated with the
 * pieces one MPI call moves (dist_set_chunk_bytes) of 1, 7 and 4096 bytes and the default, so that
 * blocks of many pieces, a last short piece, and a pair whose two directions need different
 * numbers of pieces are all exercised. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist_comm.h"
#include "error.h"

static int64_t pair_bytes(int s, int d, int round) {
  const int64_t n = ((int64_t)(s + 1) * 7919 + (int64_t)(d + 1) * 104729 + round * 31) % 20011;
  return (s + 2 * d + round) % 4 == 1 ? 0 : n; /* some pairs send nothing */
}

static unsigned char byte_of(int s, int d, int64_t off) { return (unsigned char)(s * 37 + d * 11 + off * 13 + (off >> 8)); }

static void pack(void *arg, int d, char *buf) {
  const int *me = arg;
  for (int64_t x = 0; x < pair_bytes(me[0], d, me[1]); x++) buf[x] = (char)byte_of(me[0], d, x);
}

/* 0 if recv holds every sender's block for this process, in order. */
static int check(const char *recv, const int64_t *recvn, int me, int P, int round, const char *what, int64_t chunk) {
  int64_t at = 0;
  for (int s = 0; s < P; s++) {
    if (recvn[s] != pair_bytes(s, me, round)) {
      fprintf(stderr, "%s chunk %lld: process %d got %lld bytes from %d, expected %lld\n", what, (long long)chunk, me,
              (long long)recvn[s], s, (long long)pair_bytes(s, me, round));
      return 1;
    }
    for (int64_t x = 0; x < recvn[s]; x++)
      if ((unsigned char)recv[at + x] != byte_of(s, me, x)) {
        fprintf(stderr, "%s chunk %lld: process %d, byte %lld from %d is wrong\n", what, (long long)chunk, me,
                (long long)x, s);
        return 1;
      }
    at += recvn[s];
  }
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  dist_comm c = {.comm = MPI_COMM_WORLD};
  MPI_Comm_rank(c.comm, &c.rank);
  MPI_Comm_size(c.comm, &c.size);
  const int P = c.size;
  int bad = 0, round = 0;
  const int64_t chunks[] = {1, 7, 4096, 0};
  int64_t *sendn = malloc((size_t)P * sizeof *sendn), *recvn = malloc((size_t)P * sizeof *recvn);
  for (size_t k = 0; k < sizeof chunks / sizeof *chunks; k++, round++) {
    dist_set_chunk_bytes(chunks[k]);
    shiro_error err = {0};
    int64_t tot = 0;
    for (int d = 0; d < P; d++) tot += sendn[d] = pair_bytes(c.rank, d, round);
    char *send = malloc((size_t)tot + 1), *recv = NULL;
    int me[2] = {c.rank, round};
    for (int d = 0, at = 0; d < P; at += (int)sendn[d], d++) pack(me, d, send + at);
    if (dist_alltoallv(&c, send, sendn, (void **)&recv, recvn, &err) != SHIRO_OK) {
      fprintf(stderr, "dist_alltoallv failed: %s\n", err.message);
      bad = 1;
    } else {
      bad |= check(recv, recvn, c.rank, P, round, "dist_alltoallv", chunks[k]);
    }
    free(recv);
    recv = NULL;
    memset(recvn, 0, (size_t)P * sizeof *recvn);
    if (dist_exchange(&c, sendn, pack, me, (void **)&recv, recvn, &err) != SHIRO_OK) {
      fprintf(stderr, "dist_exchange failed: %s\n", err.message);
      bad = 1;
    } else {
      bad |= check(recv, recvn, c.rank, P, round, "dist_exchange", chunks[k]);
    }
    free(recv);
    free(send);
  }
  int any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, c.comm);
  if (c.rank == 0) printf("%s: %d processes, chunks 1, 7, 4096 and 1 GiB\n", any ? "FAIL" : "ok", P);
  free(sendn);
  free(recvn);
  MPI_Finalize();
  return any;
}
