/* dist_write.c — the plan file written in rounds: process 0 declares, each process writes its own. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dist_write.h"
#include "error.h"
#include "plan_file.h"

struct dist_writer {
  dist_comm c;
  plan_writer *pw; /* process 0's */
  char *path; /* the final name, for messages */
  int fd; /* the temporary file, for this process's bytes */
  int32_t round, rounds;
  int stopped; /* a process failed: the rounds left move nothing */
  int failed; /* this process failed (its own failure, reported at close) */
  shiro_status own; /* and with what */
  shiro_error own_err;
};

/* What a process tells process 0 in a round. */
typedef struct round_up {
  int32_t status; /* SHIRO_OK, or this process's failure */
  int32_t has; /* 1: shape is a program to declare */
  prog_rank shape; /* its counts, attributes and CRCs; no arrays */
} round_up;

/* And what it hears back. */
typedef struct round_down {
  int32_t stop; /* 1: some process failed */
  uint64_t off[PROG_NARRAYS]; /* where its program's arrays go */
} round_down;

shiro_status dist_writer_open(const dist_comm *c, const char *path, const prog_meta *meta, int32_t rounds,
                              dist_writer **out, shiro_error *err) {
  *out = NULL;
  dist_writer *w = calloc(1, sizeof *w);
  shiro_status st = w && (w->path = strdup(path)) ? SHIRO_OK : shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory");
  if (w) {
    w->c = *c;
    w->fd = -1;
    w->rounds = rounds;
  }
  if (st == SHIRO_OK && c->rank == 0) st = plan_writer_open(&w->pw, path, meta, err);
  char temp[4096] = "";
  if (st == SHIRO_OK && c->rank == 0) snprintf(temp, sizeof temp, "%s", plan_writer_temp_path(w->pw));
  st = dist_agree(c, st, err);
  if (st == SHIRO_OK && MPI_Bcast(temp, (int)sizeof temp, MPI_CHAR, 0, c->comm) != MPI_SUCCESS)
    st = shiro_fail(err, SHIRO_ERR_MPI, "MPI_Bcast of the plan's temporary name failed");
  if (st == SHIRO_OK && (w->fd = open(temp, O_WRONLY | O_CLOEXEC)) < 0)
    st = shiro_fail(err, SHIRO_ERR_IO, "%s: cannot open the plan's temporary file %s for writing (is it on a file "
                                       "system every process sees?)",
                    path, temp);
  st = dist_agree(c, st, err);
  if (st != SHIRO_OK) {
    if (w && w->fd >= 0) close(w->fd);
    if (w) plan_writer_abort(w->pw);
    if (w) free(w->path);
    free(w);
    return st;
  }
  *out = w;
  return SHIRO_OK;
}

/* Process 0: declares the round's programs; fills each process's answer. */
static void declare_round(dist_writer *w, const round_up *up, round_down *down) {
  const int P = w->c.size;
  int stop = w->stopped;
  for (int s = 0; s < P; s++) stop |= up[s].status != SHIRO_OK;
  for (int s = 0; s < P && !stop; s++) {
    if (!up[s].has) continue;
    shiro_status st = plan_writer_declare(w->pw, &up[s].shape, down[s].off, &w->own_err);
    if (st != SHIRO_OK) {
      w->failed = 1;
      w->own = st;
      stop = 1;
    }
  }
  for (int s = 0; s < P; s++) down[s].stop = stop;
}

shiro_status dist_writer_round(dist_writer *w, const prog_rank *pr, shiro_status st, shiro_error *err) {
  const int P = w->c.size;
  round_up me = {.status = st, .has = pr != NULL && st == SHIRO_OK};
  if (st != SHIRO_OK && !w->failed) {
    w->failed = 1;
    w->own = st;
    w->own_err = *err;
  }
  if (me.has) prog_rank_shape(pr, &me.shape);
  round_up *up = w->c.rank == 0 ? malloc((size_t)P * sizeof *up) : NULL;
  round_down *down = w->c.rank == 0 ? calloc((size_t)P, sizeof *down) : NULL, mine = {.stop = 1};
  int ok = w->c.rank != 0 || (up && down); /* process 0 out of memory: it stops everyone */
  if (MPI_Gather(&me, (int)sizeof me, MPI_BYTE, up, (int)sizeof me, MPI_BYTE, 0, w->c.comm) != MPI_SUCCESS) ok = 0;
  if (w->c.rank == 0 && up && down) declare_round(w, up, down);
  if (w->c.rank == 0 && !ok && !w->failed) {
    w->failed = 1;
    w->own = shiro_fail(&w->own_err, SHIRO_ERR_NOMEM, "%s: out of memory writing the plan", w->path);
  }
  if (MPI_Scatter(down, (int)sizeof mine, MPI_BYTE, &mine, (int)sizeof mine, MPI_BYTE, 0, w->c.comm) != MPI_SUCCESS)
    mine.stop = 1;
  free(up);
  free(down);
  w->round++;
  if (mine.stop) w->stopped = 1;
  if (w->failed) return shiro_fail(err, w->own, "%s", w->own_err.message);
  if (w->stopped) return shiro_fail(err, SHIRO_ERR_INTERNAL, "%s: stopped: another process failed", w->path);
  if (!me.has) return SHIRO_OK;
  st = plan_rank_write_raw(w->fd, pr, mine.off, w->path, err);
  if (st != SHIRO_OK) {
    w->failed = 1;
    w->own = st;
    w->own_err = *err;
  }
  return st;
}

shiro_status dist_writer_close(dist_writer *w, shiro_status st, shiro_error *err) {
  while (w->round < w->rounds) dist_writer_round(w, NULL, w->failed ? SHIRO_OK : st, err);
  if (st != SHIRO_OK && !w->stopped && !w->failed) { /* failed after its last round */
    w->failed = 1;
    w->own = st;
    w->own_err = *err;
  }
  if (w->fd >= 0 && (fsync(w->fd) != 0 || close(w->fd) != 0) && !w->failed) {
    w->failed = 1;
    w->own = shiro_fail(&w->own_err, SHIRO_ERR_IO, "%s: writing the plan failed (disk full?)", w->path);
  }
  w->fd = -1;
  if (w->failed) *err = w->own_err;
  shiro_status out = dist_agree(&w->c, w->failed ? w->own : SHIRO_OK, err);
  if (w->c.rank == 0) {
    if (out == SHIRO_OK) out = plan_writer_close(w->pw, err); /* sealed, renamed into place */
    else plan_writer_abort(w->pw);
  }
  out = dist_agree(&w->c, out, err);
  free(w->path);
  free(w);
  return out;
}
