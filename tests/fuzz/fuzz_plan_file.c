/* fuzz_plan_file.c — libFuzzer harness for the plan reader and checker.
 *
 * The input is a whole plan file (seeds: small plans made by shiro-plan at
 * build time). The harness writes it to a scratch file in RAM (fuzz_util.h) and
 * does what a launch does: plan_file_read_meta, then for every rank
 * plan_file_map_rank, plan_verify_checksums and plan_check_rank (the last
 * whatever the checksums said: it must hold on its own, since a damaged file
 * can be re-sealed); when the check passes, every op of
 * the program is replayed by the bounds-asserting interpreter (fuzz_prog.h)
 * on exact-size buffers, so that an accepted plan that could make the
 * runtime read or write out of bounds aborts here. The mapped arrays are
 * copied to exact-size heap blocks before the check, so AddressSanitizer
 * also sees any read of the checker past the end of an array.
 *
 * The envelope (plan_envelope.h) is fuzzed first, on the input as it is:
 * plan_envelope_check_image must refuse or accept it cleanly. Then the
 * input is sealed the way a deliberate edit would be, so that the fuzzer
 * gets past the checksums into libhdf5 and our HDF5-level checks: an input
 * with a parsable envelope has its checksums recomputed; a bare HDF5 file
 * (the committed regression seeds of format 1.x) is wrapped in a fresh
 * 512-byte user block with no extents (HDF5 addresses are relative to the
 * superblock, so a prepended user block leaves the file valid, as h5jam
 * does). A damaged plan never gets this far in real use.
 *
 * After every reader call, no HDF5 object may be left open (a leaked handle
 * is invisible to LeakSanitizer: HDF5's ID tables keep it reachable).
 *
 * SHIRO_FUZZ_STRICT=1 in the environment adds the protocol rules that the
 * per-rank checker does not promise (fuzz_interp_run's strict mode, and the
 * cross-rank message agreement of fuzz_cross_check): a way to list what a
 * damaged file can still do to a launch (hang, MPI abort), not a bug oracle. */
#define _GNU_SOURCE /* fuzz_util.h: mkostemp */
#include <hdf5.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_prog.h"
#include "fuzz_util.h"
#include "plan_envelope.h"
#include "plan_file.h"

/* Ranks looked at per input: a damaged 'ranks' attribute can claim 2^31. */
#define FUZZ_MAX_RANKS 16

static fuzz_file plan;
static int strict;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *s = getenv("SHIRO_FUZZ_STRICT");
  strict = s && s[0] == '1';
  fuzz_file_open(&plan, "plan");
  /* Let HDF5 keep every block it frees on its own free lists: each file open
   * callocs a metadata cache of about a megabyte, and under ASan a fresh
   * large block costs page faults every time (3x fewer executions per second
   * without this). Affects HDF5's allocator only, not what the reader does. */
  FUZZ_ASSERT(H5set_free_list_limits(-1, -1, -1, -1, -1, -1) >= 0, "H5set_free_list_limits failed");
  return 0;
}

/* The reader must close every file, group, dataset, datatype and attribute
 * it opened, on every path (property lists cannot be counted from outside). */
static void check_no_open_handles(const char *after) {
  ssize_t objs = H5Fget_obj_count((hid_t)H5F_OBJ_ALL, H5F_OBJ_ALL);
  FUZZ_ASSERT(objs == 0, "%zd HDF5 objects left open after %s", objs, after);
}

static void check_message(const shiro_error *err) {
  FUZZ_ASSERT(memchr(err->message, 0, sizeof err->message) != NULL, "message not terminated");
  FUZZ_ASSERT(err->message[0] != 0, "failure without a message");
}

/* The input sealed (see the top): a buffer of *n bytes, reused between inputs. */
static const uint8_t *sealed_image(const uint8_t *data, size_t size, size_t *n) {
  static uint8_t *buf;
  static size_t cap;
  static const uint8_t hdf5_signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  const bool wrap = size >= 8 && !memcmp(data, hdf5_signature, 8);
  const size_t ub = wrap ? 512 : 0;
  if (size + ub > cap) {
    cap = size + ub;
    buf = realloc(buf, cap);
    FUZZ_ASSERT(buf != NULL, "out of memory");
  }
  if (size) memcpy(buf + ub, data, size);
  *n = size + ub;
  if (wrap) FUZZ_ASSERT(plan_envelope_seal_image(buf, *n, ub, NULL, 0), "cannot wrap an HDF5 file");
  else plan_envelope_reseal_image(buf, *n); /* false: not an envelope, the reader will refuse it */
  return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  shiro_error err = {{0}};
  if (plan_envelope_check_image(data, size, "input", &err) != SHIRO_OK) check_message(&err);
  size_t n;
  const uint8_t *img = sealed_image(data, size, &n);
  fuzz_file_set(&plan, img, n);
  prog_meta meta;
  memset(&err, 0, sizeof err);
  shiro_status st = plan_file_read_meta(plan.path, &meta, &err);
  check_no_open_handles("plan_file_read_meta");
  if (st != SHIRO_OK) {
    check_message(&err);
    return 0;
  }
  FUZZ_ASSERT(meta.ranks >= 1 && meta.gpus_per_node >= 1 && meta.m >= 0 && meta.k >= 0 && meta.nnz >= 0,
              "accepted root attributes out of range");
  FUZZ_ASSERT(memchr(meta.strategy, 0, sizeof meta.strategy) && memchr(meta.partition, 0, sizeof meta.partition),
              "unterminated string attribute");
  int32_t ranks = meta.ranks < FUZZ_MAX_RANKS ? meta.ranks : FUZZ_MAX_RANKS;
  prog_rank progs[FUZZ_MAX_RANKS];
  bool all = meta.ranks <= FUZZ_MAX_RANKS;
  memset(progs, 0, sizeof progs);
  for (int32_t r = 0; r < ranks; r++) {
    prog_meta m2;
    prog_rank pr;
    plan_mapping map;
    memset(&err, 0, sizeof err);
    st = plan_file_map_rank(plan.path, r, &m2, &pr, &map, &err);
    check_no_open_handles("plan_file_map_rank");
    if (st != SHIRO_OK) {
      check_message(&err);
      FUZZ_ASSERT(map.addr == NULL, "failed map_rank left a mapping");
      all = false;
      continue;
    }
    /* Not asserted: m2 == meta. HDF5 1.10.8 can return different values for one damaged
     * integer attribute on two reads (H5T__conv_i_i reads freed memory; valgrind shows it).
     * The runtime checks a rank's program against what plan_file_map_rank returned: so do we. */
    FUZZ_ASSERT(pr.rank == r, "asked for rank %d, got %d", r, pr.rank);
    FUZZ_ASSERT(pr.nops >= 0 && pr.nx >= 0 && pr.nptr >= 0 && pr.ncol >= 0 && pr.nval >= 0 && pr.nrowidx >= 0 &&
                    pr.ncert >= 0 && pr.ncglobal >= 0 && pr.nbglobal >= 0 && pr.naptr >= 0 && pr.nacol >= 0 &&
                    pr.naval >= 0 && pr.nvalsrc >= 0,
                "negative array length");
    /* The lengths the reader returns must have byte sizes that fit (else prog_array wraps). */
    const int64_t counts[PROG_NARRAYS] = {pr.nops, pr.nx, pr.nptr, pr.ncol, pr.nval, pr.nrowidx, pr.ncert,
                                          pr.ncglobal, pr.nbglobal, pr.naptr, pr.nacol, pr.naval, pr.nvalsrc};
    for (int a = 0; a < PROG_NARRAYS; a++)
      FUZZ_ASSERT(counts[a] <= INT64_MAX / (8 * PROG_OP_WIDTH), "array %d: %lld records, byte size overflows", a,
                  (long long)counts[a]);
    for (int a = 0; a < PROG_NARRAYS; a++) {
      size_t bytes;
      const char *p = prog_array(&pr, a, &bytes), *base = map.addr;
      FUZZ_ASSERT(bytes == 0 || (p && base && p >= base && bytes <= map.len && (size_t)(p - base) <= map.len - bytes),
                  "array %d (%zu bytes) is not inside the mapping", a, bytes);
    }
    /* What a context does first (ctx.c): every checksum. The index check
     * below runs whatever the checksums say: it is the last line of defence
     * (a file can be damaged and re-sealed), so it must hold on its own. */
    shiro_status crc = plan_verify_checksums(&pr, &err);
    if (crc != SHIRO_OK) {
      check_message(&err);
      FUZZ_ASSERT(crc == SHIRO_ERR_FORMAT, "checksum verification returned %d", (int)crc);
    }
    if (fuzz_prog_too_big(&pr)) { /* legal, but gigabytes of row marks: skip (fuzz_prog.h) */
      plan_file_unmap(&map);
      all = false;
      continue;
    }
    fuzz_prog_copy_arrays(&pr); /* exact-size heap blocks: ASan sees overreads */
    st = plan_check_rank(&m2, &pr, &err);
    if (st == SHIRO_OK) {
      fuzz_interp_run(&m2, &pr, 2, strict);
      if (m2.ranks != meta.ranks) all = false; /* no cross-rank check on an unstable file */
      progs[r] = pr;
    } else {
      check_message(&err);
      FUZZ_ASSERT(st == SHIRO_ERR_FORMAT || st == SHIRO_ERR_NOMEM, "check returned %d", (int)st);
      fuzz_prog_free_arrays(&pr);
      all = false;
    }
    plan_file_unmap(&map);
    FUZZ_ASSERT(map.addr == NULL && map.len == 0, "unmap did not clear the mapping");
  }
  if (strict && all) {
    char why[256];
    FUZZ_ASSERT(fuzz_cross_check(progs, meta.ranks, why, sizeof why) == 0, "%s", why);
  }
  for (int32_t r = 0; r < ranks; r++) fuzz_prog_free_arrays(&progs[r]);
  return 0;
}
