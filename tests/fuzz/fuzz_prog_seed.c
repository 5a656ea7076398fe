/* fuzz_prog_seed — writes one rank of a plan file in the flat encoding that
 * fuzz_plan_prog reads (a seed for its corpus).
 *
 *   fuzz_prog_seed PLAN.h5 RANK OUT
 *
 * Exit status 0 on success, 1 on error (message on stderr). */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_prog.h"
#include "plan_file.h"

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: fuzz_prog_seed PLAN.h5 RANK OUT\n");
    return 1;
  }
  prog_meta meta;
  prog_rank pr;
  plan_mapping map;
  shiro_error err = {{0}};
  if (plan_file_map_rank(argv[1], (int32_t)atoi(argv[2]), &meta, &pr, &map, &err) != SHIRO_OK) {
    fprintf(stderr, "fuzz_prog_seed: %s\n", err.message);
    return 1;
  }
  int rc = fuzz_prog_encode(argv[3], &meta, &pr);
  plan_file_unmap(&map);
  if (rc != 0) {
    fprintf(stderr, "fuzz_prog_seed: cannot write %s\n", argv[3]);
    return 1;
  }
  return 0;
}
