/* test_format.c — plan file round trip and rejection of foreign or damaged files. */
#include <fcntl.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "plan_envelope.h"
#include "plan_file.h"
#include "test_build.h"
#include "test_util.h"

static int same_i64(const int64_t *a, const int64_t *b, int64_t n) { return n == 0 || !memcmp(a, b, (size_t)n * 8); }
static int same_i32(const int32_t *a, const int32_t *b, int64_t n) { return n == 0 || !memcmp(a, b, (size_t)n * 4); }

/* Edits a root version attribute through HDF5, then seals the file again. */
static void set_version(const char *path, const char *name, int64_t v) {
  shiro_error err;
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t a = H5Aopen(f, name, H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_INT64, &v);
  H5Aclose(a);
  H5Fclose(f);
  EXPECT(plan_envelope_seal(path, &err) == SHIRO_OK, "reseal: %s", err.message);
}

static void spill(const char *path, const uint8_t *b, size_t n) {
  FILE *f = fopen(path, "wb");
  fwrite(b, 1, n, f);
  fclose(f);
}

static uint64_t le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* The integrity envelope: every single bit flipped anywhere outside the
 * raw-data extents (user block, superblock, object headers, heaps, free
 * space) is refused before libhdf5 reads the file; flips inside an extent
 * pass the envelope and are the datasets' own CRCs' to catch. Truncation,
 * appended bytes, a file without an envelope, and bad extent tables. */
static void envelope(const char *path, const char *dir) {
  shiro_error err;
  size_t size = 0;
  uint8_t *img = slurp(path, &size);
  if (!img) {
    EXPECT(0, "cannot read %s", path);
    return;
  }
  EXPECT(plan_envelope_check_image(img, size, path, &err) == SHIRO_OK, "%s", err.message);
  uint64_t ub = le64(img + 16), n = le64(img + 32);
  EXPECT(ub >= 512 && (ub & (ub - 1)) == 0 && n > 0 && n <= 5 * PROG_NARRAYS, "user block %llu, %llu extents",
         (unsigned long long)ub, (unsigned long long)n);
  /* The writer's seal (plan_envelope_seal: read through a buffer, the block written with pwrite)
   * gives the bytes the in-memory sealer gives the same file. */
  uint8_t *again = malloc(size);
  if (again) memcpy(again, img, size);
  EXPECT(again && plan_envelope_reseal_image(again, size) && memcmp(again, img, size) == 0,
         "plan_envelope_seal and plan_envelope_reseal_image differ");
  free(again);
  /* The writer's table (the extents it recorded as it wrote) is the one plan_envelope_seal lists
   * from the file through libhdf5: sealed again that way, the file keeps its bytes. */
  char relisted[512];
  snprintf(relisted, sizeof relisted, "%s/relisted.h5", dir);
  spill(relisted, img, size);
  size_t rsize = 0;
  uint8_t *rimg = plan_envelope_seal(relisted, &err) == SHIRO_OK ? slurp(relisted, &rsize) : NULL;
  EXPECT(rimg && rsize == size && memcmp(rimg, img, size) == 0, "%s: the writer's envelope differs from the listed one",
         path);
  free(rimg);
  remove(relisted);
  uint8_t *inside = calloc(size, 1);
  for (uint64_t i = 0; i < n; i++)
    memset(inside + le64(img + 64 + 16 * i), 1, (size_t)le64(img + 64 + 16 * i + 8));
  int64_t outside_refused = 0, outside = 0, inside_passed = 0, inside_n = 0;
  for (size_t p = 0; p < size; p += inside[p] ? 61 : 1) { /* every byte outside, a sample inside */
    uint8_t bit = (uint8_t)(1u << (p % 8));
    img[p] ^= bit;
    int ok = plan_envelope_check_image(img, size, path, &err) == SHIRO_OK;
    img[p] ^= bit;
    if (inside[p]) inside_n++, inside_passed += ok;
    else outside++, outside_refused += !ok;
  }
  EXPECT(outside > 0 && outside_refused == outside, "%lld of %lld flips outside the extents refused",
         (long long)outside_refused, (long long)outside);
  EXPECT(inside_n > 0 && inside_passed == inside_n, "%lld of %lld flips inside the extents passed the envelope",
         (long long)inside_passed, (long long)inside_n);
  /* Every file-level refusal names the file and says what is wrong. */
  char bad[600];
  snprintf(bad, sizeof bad, "%s/damaged.h5", dir);
  spill(bad, img, size - 1);
  EXPECT(plan_file_read_meta(bad, &(prog_meta){0}, &err) == SHIRO_ERR_FORMAT && strstr(err.message, "truncated") &&
             strstr(err.message, bad),
         "truncated: %s", err.message);
  uint8_t *longer = calloc(size + 1, 1);
  memcpy(longer, img, size);
  spill(bad, longer, size + 1);
  EXPECT(plan_file_read_meta(bad, &(prog_meta){0}, &err) == SHIRO_ERR_FORMAT && strstr(err.message, "appended"),
         "appended: %s", err.message);
  free(longer);
  img[ub + 3] ^= 0x10; /* the HDF5 superblock */
  spill(bad, img, size);
  prog_rank pr;
  plan_mapping map;
  EXPECT(plan_file_map_rank(bad, 0, &(prog_meta){0}, &pr, &map, &err) == SHIRO_ERR_FORMAT &&
             strstr(err.message, "HDF5 metadata fails its CRC32C"),
         "superblock flip: %s", err.message);
  EXPECT(plan_envelope_reseal_image(img, size), "reseal of a parsable envelope");
  EXPECT(plan_envelope_check_image(img, size, path, &err) == SHIRO_OK, "resealed image: %s", err.message);
  img[ub + 3] ^= 0x10;
  /* Bad extent tables are refused by the sealer (overlap, order, outside). */
  const uint64_t overlap[2][2] = {{ub, 64}, {ub + 32, 64}}, order[2][2] = {{ub + 128, 8}, {ub, 8}},
                 beyond[1][2] = {{size - 8, 16}}, before[1][2] = {{ub - 8, 16}},
                 past[1][2] = {{size + 4096, 8}}; /* size - offset would wrap */
  EXPECT(!plan_envelope_seal_image(img, size, ub, overlap, 2), "overlapping extents sealed");
  EXPECT(!plan_envelope_seal_image(img, size, ub, order, 2), "unsorted extents sealed");
  EXPECT(!plan_envelope_seal_image(img, size, ub, beyond, 1), "extent past the end sealed");
  EXPECT(!plan_envelope_seal_image(img, size, ub, before, 1), "extent in the user block sealed");
  EXPECT(!plan_envelope_seal_image(img, size, ub, past, 1), "extent starting past the end sealed");
  EXPECT(!plan_envelope_seal_image(img, size, 768, NULL, 0), "user block not a power of two sealed");
  /* An HDF5 file without an envelope: a plan of format 1.x, or not a plan. */
  spill(bad, img + ub, size - ub);
  EXPECT(plan_file_read_meta(bad, &(prog_meta){0}, &err) == SHIRO_ERR_VERSION && strstr(err.message, "without a shiro envelope"),
         "no envelope: %s", err.message);
  unlink(bad);
  free(inside);
  free(img);
}

static const char *dump_tool; /* shiro-plan-dump, from the command line */

/* `shiro-plan-dump PATH --json` and `shiro-plan-dump PATH` report the file's
 * format version, 2.minor (not the reader's own, nor "2.x"): a golden file of
 * an older minor keeps its dump. */
static void dump_reports_file_version(const char *path, int64_t minor) {
  if (!dump_tool) {
    printf("  no shiro-plan-dump given: its format_version not checked\n");
    return;
  }
  for (int json = 1; json >= 0; json--) {
    char cmd[1200], out[4096] = "", want[64];
    snprintf(cmd, sizeof cmd, "'%s' '%s'%s", dump_tool, path, json ? " --json" : "");
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = 0;
    int rc = p ? pclose(p) : -1;
    if (json)
      snprintf(want, sizeof want, "\"format_version\": \"%d.%lld\"", PLAN_VERSION_MAJOR, (long long)minor);
    else
      snprintf(want, sizeof want, "format %s %d.%lld, ", PLAN_FORMAT_NAME, PLAN_VERSION_MAJOR, (long long)minor);
    EXPECT(rc == 0 && strstr(out, want), "%s: exit %d, want %s in: %.200s", cmd, rc, want, out);
  }
}

static void round_trip(const char *dir) {
  sc_plan plan = {0};
  char path[512];
  snprintf(path, sizeof path, "%s/p.shiro.h5", dir);
  if (!build("data/ca-GrQc.mtx", 5, &plan)) {
    EXPECT(0, "planning failed");
    return;
  }
  shiro_error err;
  EXPECT(plan_file_write(path, &plan.meta, plan.ranks, &err) == SHIRO_OK, "%s", err.message);
  prog_meta meta;
  EXPECT(plan_file_read_meta(path, &meta, &err) == SHIRO_OK, "%s", err.message);
  EXPECT(meta.ranks == 5 && meta.gpus_per_node == 2 && meta.m == 5242 && meta.nnz == plan.meta.nnz &&
             !strcmp(meta.strategy, "joint") && !strcmp(meta.partition, "block"),
         "root attributes");
  for (int32_t r = 0; r < 5; r++) {
    prog_rank pr;
    plan_mapping map;
    const prog_rank *w = &plan.ranks[r];
    EXPECT(plan_file_map_rank(path, r, &meta, &pr, &map, &err) == SHIRO_OK, "%s", err.message);
    EXPECT(pr.rank == r && pr.nstages == w->nstages && pr.c_first == w->c_first && pr.c_rows == w->c_rows &&
               pr.b_first == w->b_first && pr.b_rows == w->b_rows && pr.s_rows == w->s_rows && pr.r_rows == w->r_rows,
           "rank %d attributes", r);
    EXPECT(pr.nops == w->nops && same_i64(pr.ops, w->ops, w->nops * PROG_OP_WIDTH), "rank %d ops", r);
    EXPECT(pr.nx == w->nx && same_i64(pr.xchg, w->xchg, w->nx * PROG_X_WIDTH), "rank %d xchg", r);
    EXPECT(pr.nptr == w->nptr && same_i64(pr.ptr, w->ptr, w->nptr), "rank %d ptr", r);
    EXPECT(pr.ncol == w->ncol && same_i32(pr.col, w->col, w->ncol), "rank %d col", r);
    EXPECT(pr.nval == w->nval && (w->nval == 0 || !memcmp(pr.val, w->val, (size_t)w->nval * 8)), "rank %d val", r);
    EXPECT(pr.nrowidx == w->nrowidx && same_i32(pr.rows, w->rows, w->nrowidx), "rank %d rows", r);
    EXPECT(((uintptr_t)pr.ops % 64) == 0 || pr.nops == 0, "rank %d ops not 64-byte aligned", r);
    EXPECT(plan_check_rank(&meta, &pr, &err) == SHIRO_OK, "check: %s", err.message);
    plan_file_unmap(&map);
  }
  /* A damaged program is refused by the bounds check, not run. */
  prog_rank bad = plan.ranks[1];
  int32_t *col = malloc((size_t)bad.ncol * sizeof *col);
  memcpy(col, bad.col, (size_t)bad.ncol * sizeof *col);
  col[bad.ncol / 2] = 1 << 30;
  bad.col = col;
  EXPECT(plan_check_rank(&meta, &bad, &err) == SHIRO_ERR_FORMAT, "out-of-range column accepted");
  free(col);
  envelope(path, dir);
  /* Version policy: an unknown major version is refused (the edited file
   * sealed again, or the envelope would refuse it first). A newer minor is
   * accepted. */
  prog_rank pr;
  plan_mapping map;
  set_version(path, "version_minor", PLAN_VERSION_MINOR + 1);
  EXPECT(plan_file_map_rank(path, 0, &meta, &pr, &map, &err) == SHIRO_OK, "newer minor refused: %s", err.message);
  plan_file_unmap(&map);
  dump_reports_file_version(path, PLAN_VERSION_MINOR + 1);
  set_version(path, "version_major", PLAN_VERSION_MAJOR + 1);
  EXPECT(plan_file_map_rank(path, 0, &meta, &pr, &map, &err) == SHIRO_ERR_VERSION, "unknown major version accepted");
  char want[32];
  snprintf(want, sizeof want, "version %d.%d", PLAN_VERSION_MAJOR + 1, PLAN_VERSION_MINOR + 1);
  EXPECT(strstr(err.message, want) != NULL, "message: %s", err.message);
  /* Atomic write: a failed write leaves nothing under the name; a rewrite leaves no temporary. */
  char nodir[600];
  snprintf(nodir, sizeof nodir, "%s/missing/p.h5", dir);
  EXPECT(plan_file_write(nodir, &plan.meta, plan.ranks, &err) == SHIRO_ERR_IO, "write into a missing directory");
  EXPECT(access(nodir, F_OK) != 0, "file left behind");
  EXPECT(plan_file_write(path, &plan.meta, plan.ranks, &err) == SHIRO_OK, "%s", err.message);
  EXPECT(plan_file_map_rank(path, 4, &meta, &pr, &map, &err) == SHIRO_OK, "rewritten plan: %s", err.message);
  plan_file_unmap(&map);
  EXPECT(plan_file_map_rank(path, 5, &meta, &pr, &map, &err) == SHIRO_ERR_MISMATCH, "rank 5 of 5");
  unlink(path);
  plan_free(&plan);
}

/* Rank r of plan with its exchange records replaced by its own plus one copy
 * of record `of` edited by edit (called on the copy): the arrays in *xs. */
static prog_rank with_extra_record(const sc_plan *plan, int32_t r, int64_t of, void (*edit)(int64_t *), int64_t **xs) {
  prog_rank pr = plan->ranks[r];
  *xs = malloc((size_t)(pr.nx + 1) * PROG_X_WIDTH * sizeof **xs);
  memcpy(*xs, pr.xchg, (size_t)pr.nx * PROG_X_WIDTH * sizeof **xs);
  memcpy(*xs + pr.nx * PROG_X_WIDTH, pr.xchg + of * PROG_X_WIDTH, PROG_X_WIDTH * sizeof **xs);
  edit(*xs + pr.nx * PROG_X_WIDTH);
  pr.xchg = *xs;
  pr.nx++;
  return pr;
}
static void same_record(int64_t *x) { (void)x; }
static void zero_rows(int64_t *x) {
  x[XF_COUNT] = 0;
  x[XF_BROWS] = 0;
}
static void other_kind(int64_t *x) { x[XF_KIND] = PROG_MSG_AGG_C; }

/* R4: a second message with the same (stage, peer, direction, kind) as
 * another is refused by plan_check_rank, in memory and read back from a file,
 * with a message naming rank, records, stage, peer, direction and kind; one
 * differing in kind only is accepted. */
static void one_message_per_key(const char *dir) {
  sc_plan plan = {0};
  shiro_error err;
  if (!build("data/karate.mtx", 4, &plan)) {
    EXPECT(0, "planning failed");
    return;
  }
  const int32_t r = 2;
  const prog_rank *orig = &plan.ranks[r];
  if (orig->nx < 2) {
    EXPECT(0, "rank %d has %lld messages", r, (long long)orig->nx);
    plan_free(&plan);
    return;
  }
  EXPECT(plan_check_rank(&plan.meta, orig, &err) == SHIRO_OK, "real plan: %s", err.message);
  const int64_t of = 1, *rec = orig->xchg + of * PROG_X_WIDTH;
  char want[200];
  snprintf(want, sizeof want, "rank %d exchange records %lld and %lld: two messages in stage %lld %s peer %lld of kind %lld",
           r, (long long)of, (long long)orig->nx, (long long)rec[XF_STAGE],
           rec[XF_DIR] == 0 ? "sending to" : "receiving from", (long long)rec[XF_PEER], (long long)rec[XF_KIND]);
  void (*edits[])(int64_t *) = {same_record, zero_rows, other_kind};
  const char *what[] = {"a copy of a message", "a zero-row copy", "a copy of another kind"};
  for (int e = 0; e < 3; e++) {
    int64_t *xs;
    prog_rank bad = with_extra_record(&plan, r, of, edits[e], &xs);
    shiro_status st = plan_check_rank(&plan.meta, &bad, &err);
    if (edits[e] == other_kind) EXPECT(st == SHIRO_OK, "%s refused: %s", what[e], err.message);
    else EXPECT(st == SHIRO_ERR_FORMAT && strstr(err.message, want), "%s: status %d, message: %s (want: %s)", what[e], st,
                st ? err.message : "", want);
    free(xs);
  }
  /* the same, written to a file and read back: the reader maps it, the check refuses it */
  int64_t *xs;
  prog_rank *keep = plan.ranks, *ranks = malloc((size_t)plan.meta.ranks * sizeof *ranks);
  memcpy(ranks, keep, (size_t)plan.meta.ranks * sizeof *ranks);
  ranks[r] = with_extra_record(&plan, r, of, same_record, &xs);
  char path[512];
  snprintf(path, sizeof path, "%s/r4.shiro.h5", dir);
  EXPECT(plan_file_write(path, &plan.meta, ranks, &err) == SHIRO_OK, "%s", err.message);
  prog_meta meta;
  prog_rank pr;
  plan_mapping map;
  EXPECT(plan_file_map_rank(path, r, &meta, &pr, &map, &err) == SHIRO_OK, "%s", err.message);
  EXPECT(plan_verify_checksums(&pr, &err) == SHIRO_OK, "%s", err.message);
  EXPECT(plan_check_rank(&meta, &pr, &err) == SHIRO_ERR_FORMAT && strstr(err.message, want), "read back: %s", err.message);
  plan_file_unmap(&map);
  unlink(path);
  free(xs);
  free(ranks);
  plan_free(&plan);
}

/* A sink that writes each program as it comes (what shiro-plan does), and
 * fails on purpose at rank fail_at (-1: never). */
typedef struct stream_sink {
  const char *path;
  plan_writer *w;
  int32_t fail_at, calls;
} stream_sink;

static shiro_status write_rank_now(void *arg, const prog_meta *meta, prog_rank *pr, shiro_error *err) {
  stream_sink *ss = arg;
  ss->calls++;
  shiro_status st = pr->rank == ss->fail_at ? shiro_fail(err, SHIRO_ERR_IO, "sink: refused rank %d", pr->rank)
      : pr->rank == 0                       ? plan_writer_open(&ss->w, ss->path, meta, err)
                                            : SHIRO_OK;
  if (st == SHIRO_OK) st = plan_writer_rank(ss->w, pr, err);
  prog_rank_free(pr);
  return st;
}

/* Writing rank by rank, straight from the builder, gives the same bytes as
 * writing the plan built in memory; misuse of the writer is refused and
 * leaves no file; a failing sink stops the build at once. */
static void streamed(const char *dir) {
  char whole[512], each[512], tmp[600];
  snprintf(whole, sizeof whole, "%s/whole.shiro.h5", dir);
  snprintf(each, sizeof each, "%s/each.shiro.h5", dir);
  sc_plan plan = {0};
  shiro_error err;
  if (!build("data/ca-GrQc.mtx", 5, &plan)) {
    EXPECT(0, "planning failed");
    return;
  }
  EXPECT(plan_file_write(whole, &plan.meta, plan.ranks, &err) == SHIRO_OK, "%s", err.message);
  stream_sink ss = {each, NULL, -1, 0};
  EXPECT(build_to("data/ca-GrQc.mtx", 5, NULL, write_rank_now, &ss, &err) == SHIRO_OK, "%s", err.message);
  EXPECT(ss.calls == 5, "sink called %d times for 5 ranks", ss.calls);
  EXPECT(ss.w && plan_writer_close(ss.w, &err) == SHIRO_OK, "close: %s", err.message);
  size_t n1 = 0, n2 = 0;
  uint8_t *a = slurp(whole, &n1), *b = slurp(each, &n2);
  EXPECT(a && b && n1 == n2 && !memcmp(a, b, n1), "streamed plan differs from the plan written whole (%zu vs %zu bytes)", n1, n2);
  free(a);
  free(b);
  unlink(each);
  /* out of order, closed early, aborted: an error, and nothing left behind */
  plan_writer *w = NULL;
  plan_file_temp_name(each, (long)getpid(), tmp, sizeof tmp);
  EXPECT(plan_writer_open(&w, each, &plan.meta, &err) == SHIRO_OK, "%s", err.message);
  EXPECT(plan_writer_rank(w, &plan.ranks[1], &err) == SHIRO_ERR_INTERNAL && strstr(err.message, "out of order"),
         "rank 1 first: %s", err.message);
  EXPECT(plan_writer_rank(w, &plan.ranks[0], &err) == SHIRO_OK, "%s", err.message);
  EXPECT(plan_writer_close(w, &err) == SHIRO_ERR_INTERNAL && strstr(err.message, "after 1 of 5"), "early close: %s", err.message);
  EXPECT(access(each, F_OK) != 0 && access(tmp, F_OK) != 0, "early close left a file");
  EXPECT(plan_writer_open(&w, each, &plan.meta, &err) == SHIRO_OK, "%s", err.message);
  EXPECT(access(tmp, F_OK) == 0, "no temporary file while writing");
  plan_writer_abort(w);
  EXPECT(access(each, F_OK) != 0 && access(tmp, F_OK) != 0, "abort left a file");
  /* a sink's failure ends the build with its message, and no rank after it is delivered */
  stream_sink bad = {each, NULL, 2, 0};
  EXPECT(build_to("data/ca-GrQc.mtx", 5, NULL, write_rank_now, &bad, &err) == SHIRO_ERR_IO &&
             strstr(err.message, "refused rank 2"),
         "failing sink: %s", err.message);
  EXPECT(bad.calls == 3, "sink called %d times, want 3 (ranks 0-2)", bad.calls);
  plan_writer_abort(bad.w);
  EXPECT(access(each, F_OK) != 0 && access(tmp, F_OK) != 0, "failed build left a file");
  unlink(whole);
  plan_free(&plan);
}

/* A dataset's extent near 2^63 or 2^64 (a damaged or forged layout
 * address, offset + bytes wrapping around 64 bits) is refused with
 * SHIRO_ERR_FORMAT: the check itself on the edge cases, then a file whose
 * first dataset's address was rewritten and the envelope resealed (libhdf5
 * 1.10.8 already refuses that one when it opens the dataset; the reader's
 * own check is for a libhdf5 that does not). */
static void extent_wrap(const char *dir) {
  const uint64_t M = UINT64_MAX, I = (uint64_t)INT64_MAX, size = 1 << 20;
  EXPECT(plan_extent_inside(0, size, size) && plan_extent_inside(size - 8, 8, size) && plan_extent_inside(size, 0, size),
         "extents up to the end of the file refused");
  EXPECT(!plan_extent_inside(size - 8, 9, size) && !plan_extent_inside(size + 1, 0, size), "extent past the end accepted");
  EXPECT(!plan_extent_inside(M - 7, 16, size), "offset 2^64 - 8 + 16 bytes (wraps to 8) accepted");
  EXPECT(!plan_extent_inside(I - 7, I, size), "offset 2^63 - 8 + 2^63 - 1 bytes accepted");
  EXPECT(!plan_extent_inside(M - 63, 128, M) && plan_extent_inside(M - 64, 64, M), "extents at the end of a 2^64 - 1 byte file");
  sc_plan plan = {0};
  char path[512], bad[600];
  shiro_error err;
  snprintf(path, sizeof path, "%s/wrap.shiro.h5", dir);
  snprintf(bad, sizeof bad, "%s/wrap-bad.shiro.h5", dir);
  if (!build("data/karate.mtx", 2, &plan)) {
    EXPECT(0, "planning failed");
    return;
  }
  EXPECT(plan_file_write(path, &plan.meta, plan.ranks, &err) == SHIRO_OK, "%s", err.message);
  plan_free(&plan);
  size_t size_f = 0;
  uint8_t *img = slurp(path, &size_f);
  if (!img) {
    EXPECT(0, "cannot read %s", path);
    return;
  }
  uint64_t ub = le64(img + 16), n = le64(img + 32), first = le64(img + 64);
  /* The writer's superblock (version 2: no free-space tracking, plan_write.c)
   * stores object-header addresses relative to the base address, the end of
   * the user block: the first dataset's address is written as first - ub, and
   * a forged stored value v is read back as v + ub. */
  const uint64_t stored = first - ub, forged[2] = {M - 255, I - 7};
  for (int k = 0; k < 2; k++) {
    uint8_t *copy = malloc(size_f);
    memcpy(copy, img, size_f);
    int hits = 0;
    for (size_t p = ub; p + 8 <= size_f; p++) { /* the address in the object header, outside every extent */
      int in_extent = 0;
      for (uint64_t i = 0; i < n; i++)
        in_extent |= p + 8 > le64(img + 64 + 16 * i) && p < le64(img + 64 + 16 * i) + le64(img + 72 + 16 * i);
      if (in_extent || le64(img + p) != stored) continue;
      for (int b = 0; b < 8; b++) copy[p + b] = (uint8_t)((forged[k] - ub) >> (8 * b));
      hits++;
    }
    EXPECT(hits == 1, "the first dataset's address found %d times in the metadata", hits);
    EXPECT(plan_envelope_reseal_image(copy, size_f), "reseal");
    spill(bad, copy, size_f);
    free(copy);
    prog_meta meta;
    prog_rank pr;
    plan_mapping map;
    shiro_status st = plan_file_map_rank(bad, 0, &meta, &pr, &map, &err);
    char at[64]; /* the reader's extent check saw the forged offset itself */
    snprintf(at, sizeof at, "(offset %llu,", (unsigned long long)forged[k]);
    EXPECT(st == SHIRO_ERR_FORMAT && strstr(err.message, bad) && strstr(err.message, at) &&
               strstr(err.message, "lies outside the file"),
           "dataset at offset %llu: status %d (%s)",
           (unsigned long long)forged[k], st, st ? err.message : "mapped");
    if (st == SHIRO_OK) plan_file_unmap(&map);
  }
  free(img);
  unlink(bad);
  unlink(path);
}

static void foreign_files(const char *dir) {
  char path[512];
  shiro_error err;
  prog_meta meta;
  prog_rank pr;
  plan_mapping map;
  snprintf(path, sizeof path, "%s/not-a-plan.h5", dir);
  FILE *f = fopen(path, "w");
  fputs("%%MatrixMarket matrix coordinate real general\n", f);
  fclose(f);
  EXPECT(plan_file_read_meta(path, &meta, &err) == SHIRO_ERR_FORMAT && strstr(err.message, "not a shiro plan"), "%s", err.message);
  EXPECT(plan_file_map_rank(path, 0, &meta, &pr, &map, &err) == SHIRO_ERR_FORMAT, "text file accepted");
  unlink(path);
  snprintf(path, sizeof path, "%s/missing.h5", dir);
  EXPECT(plan_file_read_meta(path, &meta, &err) == SHIRO_ERR_IO && strstr(err.message, "No such file"), "%s", err.message);
  /* An HDF5 file that is not a plan. */
  snprintf(path, sizeof path, "%s/other.h5", dir);
  hid_t h = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  H5Fclose(h);
  EXPECT(plan_file_read_meta(path, &meta, &err) == SHIRO_ERR_VERSION && strstr(err.message, "without a shiro envelope"), "%s", err.message);
  unlink(path);
  /* Inside a valid envelope, an HDF5 file that is not a plan. */
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  H5Pset_userblock(fcpl, 512);
  h = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
  H5Pclose(fcpl);
  H5Fclose(h);
  EXPECT(plan_envelope_seal(path, &err) == SHIRO_OK, "%s", err.message);
  EXPECT(plan_file_read_meta(path, &meta, &err) == SHIRO_ERR_FORMAT && strstr(err.message, "not a shiro plan"), "%s", err.message);
  unlink(path);
}

/* usage: test_format [SHIRO_PLAN_DUMP], run in tests/ */
int main(int argc, char **argv) {
  dump_tool = argc > 1 ? argv[1] : NULL;
  char dir[] = "/tmp/shiro-format-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  round_trip(dir);
  one_message_per_key(dir);
  streamed(dir);
  foreign_files(dir);
  extent_wrap(dir);
  rmdir(dir);
  if (test_failures) fprintf(stderr, "%d failures\n", test_failures);
  return test_failures != 0;
}
