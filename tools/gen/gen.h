/* gen.h — matrix generators (R-MAT graphs, 2-D and 3-D grid stencils) that
 * write Matrix Market files, for benchmarks and tests.
 *
 * Determinism: a generator's output is a function of its spec alone, the
 * same bytes on every machine and for every thread count. R-MAT draws its
 * random numbers from a counter-based generator: word r of edge e is
 * splitmix64_mix(key ^ (e * 32 + r)) with key = splitmix64_mix(seed +
 * 0x9e3779b97f4a7c15), where splitmix64_mix is the output function of
 * SplitMix64 (Steele, Lea and Flood, 2014), a bijection of 64-bit words. So
 * any edge can be made by any thread, and the quadrant choices use integer
 * thresholds, never floating point. */
#ifndef SHIRO_GEN_H
#define SHIRO_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "shiro_status.h"

typedef enum gen_kind { GEN_RMAT = 0,
                        GEN_GRID2D = 1,
                        GEN_GRID3D = 2 } gen_kind;

/* What to generate. Zero-initialise, then set the fields of the kind. */
typedef struct gen_spec {
  gen_kind kind;
  /* R-MAT (Graph500 parameters a = .57, b = .19, c = .19, d = .05): 2^scale
   * vertices, edge_factor * 2^scale edges, every generated edge written
   * (duplicates and self-loops included; a reader sums duplicates). */
  int scale; /* 1..40 */
  int64_t edge_factor; /* >= 1 */
  uint64_t seed; /* any */
  bool real_values; /* real field, values 0.ddddddddddddddddd (17 random digits); else pattern */
  bool no_scramble; /* keep R-MAT's vertex order (vertex 0 the densest); default: a
                          seeded bijection of the labels, as Graph500 does */
  /* Grids: nx * ny (* nz) vertices numbered x + nx*(y + ny*z), the 5-point
   * (2-D) or 7-point (3-D) Laplacian: 4 or 6 on the diagonal, -1 to each
   * neighbour. Rows in order, columns increasing within a row. */
  int64_t nx, ny, nz; /* >= 1 (nz: 3-D only) */
  bool general; /* write both triangles ("general"); default: the lower one
                         ("symmetric") */
} gen_spec;

/* Checks the spec and gives the matrix size m x k and the number of entry
 * lines the file will have. Returns SHIRO_ERR_ARG (err names the field) for
 * a bad spec. Local. */
shiro_status gen_shape(const gen_spec *g, int64_t *m, int64_t *k, int64_t *entries,
                       shiro_error *err);

/* Writes the spec's Matrix Market file to f (borrowed; `name` names it in
 * messages), formatting blocks of lines on `threads` OpenMP threads (<= 0:
 * OpenMP's current number) and writing them in order. Returns SHIRO_ERR_ARG
 * for a bad spec, SHIRO_ERR_IO for a failed write ("NAME: write error:
 * ..."), SHIRO_ERR_NOMEM. Collective over the threads it starts. */
shiro_status gen_write(const gen_spec *g, FILE *f, const char *name, int threads, shiro_error *err);

/* Edge e of an R-MAT spec, 0-based (row i, column j). Local, pure. */
void gen_rmat_edge(const gen_spec *g, int64_t e, int64_t *i, int64_t *j);

#endif
