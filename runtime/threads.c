/* threads.c — how many OpenMP threads a context's CPU kernels use: the caller's option, else
 * OMP_NUM_THREADS where the user set it, else this rank's share of its node's cores. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

/* Logical CPUs this process may run on (its affinity mask), at least 1. */
static int usable_cpus(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  const long on = sysconf(_SC_NPROCESSORS_ONLN);
  return on > 0 ? (int)on : 1;
}

int rt_threads_share(int node_cpus, int node_ranks, int usable) {
  int t = node_ranks > 0 ? node_cpus / node_ranks : 1;
  if (t > usable) t = usable;
  return t > 0 ? t : 1;
}

void rt_threads_choose(MPI_Comm comm, int requested, int *threads, char *why, size_t why_len) {
  /* collective first (every rank, whatever it asked for): the ranks that share this rank's node */
  MPI_Comm node = MPI_COMM_NULL;
  int node_ranks = 1;
  const int split = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  if (split == MPI_SUCCESS && node != MPI_COMM_NULL) {
    MPI_Comm_size(node, &node_ranks);
    MPI_Comm_free(&node);
  }
  const char *env = getenv("OMP_NUM_THREADS");
  const long on = sysconf(_SC_NPROCESSORS_ONLN);
  const int cpus = on > 0 ? (int)on : 1, usable = usable_cpus();
  if (requested > 0 || (env && *env)) { /* the user's count: said when it is more than the binding allows */
    *threads = requested > 0 ? requested : omp_get_max_threads();
    const int n = requested > 0 ? snprintf(why, why_len, "the context's option") : snprintf(why, why_len, "OMP_NUM_THREADS=%.16s", env);
    if (*threads > usable && n > 0 && (size_t)n < why_len)
      snprintf(why + n, why_len - (size_t)n, "; more than the %d CPU%s of %s: threads share cores", usable,
               usable > 1 ? "s" : "", usable < cpus ? "this rank's binding" : "the node");
  } else if (split != MPI_SUCCESS) {
    *threads = 1;
    snprintf(why, why_len, "MPI_Comm_split_type failed: one thread");
  } else {
    *threads = rt_threads_share(cpus, node_ranks, usable);
    const int n = snprintf(why, why_len, "%d CPUs on the node / %d rank%s there", cpus, node_ranks, node_ranks > 1 ? "s" : "");
    if (usable < cpus && n > 0 && (size_t)n < why_len)
      snprintf(why + n, why_len - (size_t)n, ", %d CPU%s in this rank's binding", usable, usable > 1 ? "s" : "");
  }
}
