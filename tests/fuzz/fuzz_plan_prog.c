/* fuzz_plan_prog.c — libFuzzer harness for plan_check_rank alone, without
 * HDF5: the input is one rank's program in the flat encoding of
 * fuzz_prog_decode (seeds: every rank of the build-time seed plans, written
 * by fuzz_prog_seed). Every array is its own exact-size heap block, so
 * AddressSanitizer catches a read of the checker one element past an array;
 * a program the checker accepts is replayed by the bounds-asserting
 * interpreter (fuzz_prog.h), which aborts on any access the runtime would
 * make out of bounds. Mutations reach the checker at full speed (no HDF5
 * metadata to get past), which the whole-file harness cannot. */
#define _GNU_SOURCE /* fuzz_util.h: mkostemp */
#include <stdint.h>
#include <string.h>

#include "fuzz_prog.h"
#include "fuzz_util.h"
#include "plan_file.h"

static int strict;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *s = getenv("SHIRO_FUZZ_STRICT");
  strict = s && s[0] == '1';
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  prog_meta meta;
  prog_rank pr;
  if (fuzz_prog_decode(data, size, &meta, &pr) != 0) return 0;
  if (fuzz_prog_too_big(&pr)) {
    fuzz_prog_free_arrays(&pr);
    return 0;
  }
  shiro_error err = {{0}};
  shiro_status st = plan_check_rank(&meta, &pr, &err);
  if (st == SHIRO_OK) {
    fuzz_interp_run(&meta, &pr, 2, strict);
  } else {
    FUZZ_ASSERT(st == SHIRO_ERR_FORMAT || st == SHIRO_ERR_NOMEM, "check returned %d", (int)st);
    FUZZ_ASSERT(memchr(err.message, 0, sizeof err.message) && err.message[0], "failure without a message");
  }
  fuzz_prog_free_arrays(&pr);
  return 0;
}
