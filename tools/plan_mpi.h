/* plan_mpi.h — shiro-plan under an MPI launcher (mpirun, mpiexec, srun): several processes plan
 * one plan together (compiler/dist/); a plain start stays MPI-free. */
#ifndef SHIRO_PLAN_MPI_H
#define SHIRO_PLAN_MPI_H

#include "dist_plan.h"

/* 1 when a launcher started this process (its environment says so: Open MPI, PMIx, PMI, Hydra or
 * Slurm's step variables); then MPI is initialised (MPI_THREAD_SERIALIZED asked) and finalised at
 * exit, and *rank / *size are this process's place; else 0, *rank 0, *size 1, and no MPI call is
 * made. Exits with a message on stderr when MPI_Init fails. */
int plan_mpi_start(int *argc, char ***argv, int *rank, int *size);

/* --partition hypergraph with one process (plan_request.hypergraph): Zoltan's labels of A's rows
 * (dist_part_hypergraph_local), MPI initialised first where no launcher did (finalised at exit). */
shiro_status plan_mpi_hypergraph(const struct sc_csr *A, int32_t parts, int32_t *labels, shiro_error *err);

/* The threads each process plans with (collective): threads where given (> 0), else
 * OMP_NUM_THREADS's where set, else the node's CPUs shared among the processes on it (at most
 * this process's affinity): never more threads than cores by default. */
int plan_mpi_threads(int threads);

/* How process 0 reports: the summary unless quiet, one JSON object with json; the threads each
 * process planned with; N and the value type the prediction (rq->m) was made for; partition_auto:
 * auto with no --partition (one process would weigh the time and METIS partitions too). */
typedef struct plan_mpi_report {
  int quiet, json, threads, partition_auto;
  int64_t n;
  const char *dtype;
} plan_mpi_report;

/* Runs dist_plan over MPI_COMM_WORLD and reports as shiro-plan does (process 0 only: the summary
 * on stderr unless quiet, one JSON object on stdout with json; an error once, on stderr).
 * matrix names the input in messages. Returns the exit status (0, or 1 on every process). */
int plan_mpi_run(const dist_request *rq, int rank, const plan_mpi_report *how);

#endif
