/* test_plan_declare.c — the distributed planner's writer (format/plan_file.h): one process
 * declares every rank's datasets (plan_writer_declare), the array bytes go in through another
 * file descriptor (plan_rank_write_raw), and the file is the plan plan_file_write gives.
 * usage: test_plan_declare MATRIX.mtx */
#include <fcntl.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "plan_envelope.h"
#include "plan_file.h"
#include "test_build.h"
#include "test_util.h"

enum { RANKS = 6 };

/* Writes plan to path the distributed way, as if each rank's bytes came from another process:
 * ranks declared in `order`; the bytes written through a second descriptor of the temporary
 * file, those of the ranks declared at even positions as soon as they are declared (before
 * later ranks' declarations) when `eager`, the rest after every declaration. */
static shiro_status write_declared(const char *path, const sc_plan *plan, const int32_t *order, int eager,
                                   shiro_error *err) {
  const int32_t R = plan->meta.ranks;
  uint64_t(*off)[PROG_NARRAYS] = calloc((size_t)R, sizeof *off);
  int *written = calloc((size_t)R, sizeof *written), fd = -1;
  plan_writer *w = NULL;
  shiro_status st = off && written ? plan_writer_open(&w, path, &plan->meta, err) : SHIRO_ERR_NOMEM;
  const char *tmp = st == SHIRO_OK ? plan_writer_temp_path(w) : NULL;
  if (tmp && (fd = open(tmp, O_WRONLY)) < 0) st = shiro_fail(err, SHIRO_ERR_IO, "cannot open %s", tmp);
  for (int32_t i = 0; st == SHIRO_OK && i < R; i++) {
    const int32_t r = order[i];
    prog_rank shape;
    prog_rank_shape(&plan->ranks[r], &shape);
    EXPECT(!shape.ops && !shape.col && !shape.val && !shape.val_src && shape.nops == plan->ranks[r].nops,
           "rank %d's shape has arrays or lost its counts", r);
    st = plan_writer_declare(w, &shape, off[r], err);
    for (int a = 0; st == SHIRO_OK && a < PROG_NARRAYS; a++) {
      size_t bytes;
      prog_array(&plan->ranks[r], a, &bytes);
      EXPECT(bytes ? off[r][a] % 64 == 0 && off[r][a] != UINT64_MAX : off[r][a] == UINT64_MAX,
             "rank %d %s: %zu bytes at offset %llu", r, prog_array_name(a), bytes, (unsigned long long)off[r][a]);
    }
    if (st == SHIRO_OK && eager && i % 2 == 0) {
      st = plan_rank_write_raw(fd, &plan->ranks[r], off[r], tmp, err);
      written[r] = 1;
    }
  }
  for (int32_t r = 0; st == SHIRO_OK && r < R; r++)
    if (!written[r]) st = plan_rank_write_raw(fd, &plan->ranks[r], off[r], tmp, err);
  if (st == SHIRO_OK && fsync(fd) != 0) st = shiro_fail(err, SHIRO_ERR_IO, "fsync %s", tmp);
  if (fd >= 0) close(fd);
  if (st == SHIRO_OK) st = plan_writer_close(w, err);
  else plan_writer_abort(w);
  free(off);
  free(written);
  return st;
}

/* 1 when the files at a and b have the same bytes. */
static int same_file(const char *a, const char *b) {
  size_t n1 = 0, n2 = 0;
  uint8_t *x = slurp(a, &n1), *y = slurp(b, &n2);
  int same = x && y && n1 == n2 && !memcmp(x, y, n1);
  free(x);
  free(y);
  return same;
}

/* Every rank of the file at path, read back with the plan reader, is plan's: attributes,
 * counts, CRCs and every array's bytes; it passes its checksums and bounds checks. */
static void reads_back(const char *path, const sc_plan *plan) {
  shiro_error err;
  plan_reader *rd = NULL;
  prog_meta meta;
  EXPECT(plan_envelope_check(path, &err) == SHIRO_OK, "envelope: %s", err.message);
  if (plan_reader_open(path, &rd, &meta, &err) != SHIRO_OK) {
    EXPECT(0, "open: %s", err.message);
    return;
  }
  EXPECT(meta.ranks == plan->meta.ranks && meta.nnz == plan->meta.nnz && meta.matrix_digest == plan->meta.matrix_digest,
         "root attributes");
  for (int32_t r = 0; r < meta.ranks; r++) {
    prog_rank pr;
    plan_mapping map;
    const prog_rank *w = &plan->ranks[r];
    if (plan_reader_map_rank(rd, r, &pr, &map, &err) != SHIRO_OK) {
      EXPECT(0, "rank %d: %s", r, err.message);
      continue;
    }
    EXPECT(pr.rank == r && pr.nstages == w->nstages && pr.c_first == w->c_first && pr.c_rows == w->c_rows &&
               pr.b_first == w->b_first && pr.b_rows == w->b_rows && pr.s_rows == w->s_rows && pr.r_rows == w->r_rows &&
               pr.pattern_digest == w->pattern_digest,
           "rank %d attributes", r);
    for (int a = 0; a < PROG_NARRAYS; a++) {
      size_t n1, n2;
      const void *x = prog_array(&pr, a, &n1), *y = prog_array(w, a, &n2);
      EXPECT(n1 == n2 && (n1 == 0 || !memcmp(x, y, n1)), "rank %d %s: %zu bytes read, %zu written, or other bytes", r,
             prog_array_name(a), n1, n2);
    }
    EXPECT(plan_verify_checksums(&pr, &err) == SHIRO_OK, "rank %d: %s", r, err.message);
    EXPECT(plan_check_rank(&meta, &pr, &err) == SHIRO_OK, "rank %d: %s", r, err.message);
    plan_file_unmap(&map);
  }
  plan_reader_close(rd);
}

/* Misuse is refused with a message and leaves no file: a rank declared twice or out of
 * range, a rank written whole over a declared one, a close with a rank undeclared; a raw
 * write with another shape's offsets, or that the system refuses. */
static void misuse(const char *dir, const sc_plan *plan) {
  char path[512], tmp[600];
  shiro_error err;
  snprintf(path, sizeof path, "%s/misuse.shiro.h5", dir);
  plan_writer *w = NULL;
  if (plan_writer_open(&w, path, &plan->meta, &err) != SHIRO_OK) {
    EXPECT(0, "open: %s", err.message);
    return;
  }
  snprintf(tmp, sizeof tmp, "%s", plan_writer_temp_path(w));
  prog_rank shape;
  uint64_t off[PROG_NARRAYS], kept[PROG_NARRAYS];
  prog_rank_shape(&plan->ranks[0], &shape);
  EXPECT(plan_writer_declare(w, &shape, off, &err) == SHIRO_OK, "%s", err.message);
  memcpy(kept, off, sizeof off);
  EXPECT(plan_writer_declare(w, &shape, off, &err) == SHIRO_ERR_INTERNAL && strstr(err.message, "rank 0 declared twice") &&
             strstr(err.message, path),
         "second declaration: %s", err.message);
  EXPECT(!memcmp(kept, off, sizeof off), "a failed declaration changed the offsets");
  EXPECT(plan_writer_rank(w, &plan->ranks[0], &err) == SHIRO_ERR_INTERNAL && strstr(err.message, "out of order"),
         "rank 0 written after its declaration: %s", err.message);
  shape.rank = RANKS;
  EXPECT(plan_writer_declare(w, &shape, off, &err) == SHIRO_ERR_INTERNAL && strstr(err.message, "of 6 ranks"),
         "rank %d of %d: %s", RANKS, RANKS, err.message);
  shape.rank = -1;
  EXPECT(plan_writer_declare(w, &shape, off, &err) == SHIRO_ERR_INTERNAL, "rank -1 declared");
  prog_rank_shape(&plan->ranks[2], &shape);
  EXPECT(plan_writer_declare(w, &shape, off, &err) == SHIRO_OK, "%s", err.message);
  /* offsets of another shape: an empty array given a place, a non-empty one none */
  int fd = open(tmp, O_WRONLY);
  EXPECT(fd >= 0, "cannot open %s", tmp);
  for (int k = 0; k < 2; k++) {
    uint64_t bad[PROG_NARRAYS];
    memcpy(bad, off, sizeof off);
    if (k == 0) bad[PA_OPS] = UINT64_MAX;
    else bad[PA_CGLOBAL] = bad[PA_OPS]; /* block partition: c_global is empty */
    EXPECT(plan_rank_write_raw(fd, &plan->ranks[2], bad, tmp, &err) == SHIRO_ERR_INTERNAL &&
               strstr(err.message, k ? "rank 2's c_global has 0 bytes" : "rank 2's ops has") &&
               strstr(err.message, "another shape"),
           "rank 2 at another shape's offsets: %s", err.message);
  }
  close(fd);
  /* a write the system refuses names the file and what failed */
  fd = open(tmp, O_RDONLY);
  EXPECT(plan_rank_write_raw(fd, &plan->ranks[2], off, tmp, &err) == SHIRO_ERR_IO && strstr(err.message, tmp) &&
             strstr(err.message, "rank 2's ops") && strstr(err.message, "Bad file descriptor"),
         "write through a read-only descriptor: %s", err.message);
  close(fd);
  if ((fd = open("/dev/full", O_WRONLY)) >= 0) {
    EXPECT(plan_rank_write_raw(fd, &plan->ranks[2], off, "/dev/full", &err) == SHIRO_ERR_IO &&
               strstr(err.message, "disk full?") && strstr(err.message, "/dev/full"),
           "/dev/full: %s", err.message);
    close(fd);
  }
  EXPECT(plan_writer_close(w, &err) == SHIRO_ERR_INTERNAL && strstr(err.message, "after 2 of 6 ranks (rank 1 missing)"),
         "close with ranks undeclared: %s", err.message);
  EXPECT(access(path, F_OK) != 0 && access(tmp, F_OK) != 0, "a failed close left a file");
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_plan_declare MATRIX.mtx\n");
    return 2;
  }
  char dir[] = "/tmp/shiro-declare-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  sc_plan plan = {0};
  if (!build(argv[1], RANKS, &plan)) return 1;
  char whole[512], in_order[512], eager[512], shuffled[512];
  snprintf(whole, sizeof whole, "%s/whole.shiro.h5", dir);
  snprintf(in_order, sizeof in_order, "%s/in-order.shiro.h5", dir);
  snprintf(eager, sizeof eager, "%s/eager.shiro.h5", dir);
  snprintf(shuffled, sizeof shuffled, "%s/shuffled.shiro.h5", dir);
  shiro_error err;
  const int32_t identity[RANKS] = {0, 1, 2, 3, 4, 5}, shuffle[RANKS] = {3, 0, 5, 2, 4, 1};
  EXPECT(plan_file_write(whole, &plan.meta, plan.ranks, &err) == SHIRO_OK, "%s", err.message);
  /* (a) = (b): declared in rank order, the bytes written after, or interleaved */
  EXPECT(write_declared(in_order, &plan, identity, 0, &err) == SHIRO_OK, "%s", err.message);
  EXPECT(same_file(whole, in_order), "declared in rank order: not plan_file_write's bytes");
  EXPECT(write_declared(eager, &plan, identity, 1, &err) == SHIRO_OK, "%s", err.message);
  EXPECT(same_file(whole, eager), "declared in rank order, bytes interleaved: not plan_file_write's bytes");
  /* (c): shuffled, some ranks' bytes in before others are declared; another layout, the same plan */
  EXPECT(write_declared(shuffled, &plan, shuffle, 1, &err) == SHIRO_OK, "%s", err.message);
  EXPECT(!same_file(whole, shuffled), "shuffled declarations gave rank order's layout");
  reads_back(shuffled, &plan);
  reads_back(in_order, &plan);
  misuse(dir, &plan);
  plan_free(&plan);
  unlink(whole);
  unlink(in_order);
  unlink(eager);
  unlink(shuffled);
  rmdir(dir);
  if (test_failures) fprintf(stderr, "%d failures\n", test_failures);
  return test_failures != 0;
}
