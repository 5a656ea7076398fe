/* shiro-gen — writes generated matrices as Matrix Market files.
 *
 *   shiro-gen rmat --scale S --edge-factor E [--seed X] [--field pattern|real]
 *                  [--no-scramble] [-o FILE] [--threads T] [--format mtx|csr-h5]
 *   shiro-gen grid2d --nx X --ny Y [--symmetric | --general] [-o FILE] [--threads T]
 *   shiro-gen grid3d --nx X --ny Y --nz Z [--symmetric | --general] [-o FILE] [--threads T]
 *
 * Output goes to FILE, or to standard output without -o or with -o -. Bad
 * arguments: a message naming the argument, exit status 2; a failed write
 * (to FILE or to standard output): exit status 1. FILE is written through
 * out_file.h: a temporary beside it renamed into place, so a failed or
 * interrupted run leaves an older FILE untouched; a device or FIFO is
 * written in place. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "error.h"
#include "gen.h"
#include "gen_h5.h"
#include "out_file.h"

static const char *prog = "shiro-gen";
static const char *out_format = "mtx"; /* --format: mtx or csr-h5 */

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: shiro-gen rmat --scale S --edge-factor E [--seed X] [--field pattern|real]\n"
      "                      [--no-scramble] [-o FILE] [--threads T]\n"
      "       shiro-gen grid2d --nx X --ny Y [--symmetric | --general] [-o FILE] [--threads T]\n"
      "       shiro-gen grid3d --nx X --ny Y --nz Z [--symmetric | --general] [-o FILE]\n"
      "                        [--threads T]\n"
      "       shiro-gen --help | --version\n"
      "  rmat     Graph500 R-MAT graph (a=.57 b=.19 c=.19 d=.05): 2^S vertices, E*2^S edges,\n"
      "           a pattern general matrix with every generated edge written (duplicates and\n"
      "           self-loops included; readers sum duplicates). The same seed gives the same\n"
      "           file on every machine and thread count. --field real adds values\n"
      "           0.ddddddddddddddddd (17 random digits). --no-scramble keeps R-MAT's\n"
      "           vertex order (by default labels are permuted by a seeded bijection).\n"
      "  grid2d   5-point Laplacian on an X x Y grid (4 on the diagonal, -1 off it)\n"
      "  grid3d   7-point Laplacian on an X x Y x Z grid (6 on the diagonal, -1 off it)\n"
      "           grids are real; --symmetric (default) writes the lower triangle,\n"
      "           --general both\n"
      "  -o FILE  output file; '-' or no -o: standard output\n"
      "  --format F  mtx (default) | csr-h5: the HDF5 CSR file of shiro-plan --format csr-h5\n"
      "           (rmat, pattern only; needs -o FILE): /indptr int64, /indices int32, attribute\n"
      "           shape, every edge kept in generation order (duplicates summed when read)\n"
      "  --threads T  formatting threads (default: OMP_NUM_THREADS or all cores); the\n"
      "           output does not depend on it\n"
      "  --help, --version  this text / the version (exit 0)\n");
}

/* Parses the arguments into *g; returns 0 (after a message) on a bad one. */
static int parse(int argc, char **argv, gen_spec *g, const char **out, int *threads) {
  int64_t v;
  bool have_scale = false, have_ef = false, have_nx = false, have_ny = false, have_nz = false;
  const char *val, *kind = argv[1];
  memset(g, 0, sizeof *g);
  *out = NULL;
  *threads = 0;
  if (!strcmp(kind, "rmat"))
    g->kind = GEN_RMAT;
  else if (!strcmp(kind, "grid2d"))
    g->kind = GEN_GRID2D;
  else if (!strcmp(kind, "grid3d"))
    g->kind = GEN_GRID3D;
  else {
    fprintf(stderr, "%s: unknown generator '%s' (expected rmat, grid2d or grid3d; try --help)\n",
            prog, kind);
    return 0;
  }
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    bool rmat = g->kind == GEN_RMAT;
    if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      if (!(*out = cli_value(prog, argc, argv, &i))) return 0;
    } else if (!strcmp(a, "--format")) {
      if (!(val = cli_value(prog, argc, argv, &i))) return 0;
      if (strcmp(val, "mtx") && strcmp(val, "csr-h5")) {
        fprintf(stderr, "%s: --format: expected mtx or csr-h5, found '%s'\n", prog, val);
        return 0;
      }
      out_format = val;
    } else if (!strcmp(a, "--threads")) {
      if (!(val = cli_value(prog, argc, argv, &i)) || !cli_int(prog, a, val, 1, 4096, &v)) return 0;
      *threads = (int)v;
    } else if (rmat && !strcmp(a, "--scale")) {
      if (!(val = cli_value(prog, argc, argv, &i)) || !cli_int(prog, a, val, 1, 40, &v)) return 0;
      g->scale = (int)v;
      have_scale = true;
    } else if (rmat && !strcmp(a, "--edge-factor")) {
      if (!(val = cli_value(prog, argc, argv, &i)) ||
          !cli_int(prog, a, val, 1, INT64_C(1) << 40, &v))
        return 0;
      g->edge_factor = v;
      have_ef = true;
    } else if (rmat && !strcmp(a, "--seed")) {
      if (!(val = cli_value(prog, argc, argv, &i)) || !cli_int(prog, a, val, 0, INT64_MAX, &v))
        return 0;
      g->seed = (uint64_t)v;
    } else if (rmat && !strcmp(a, "--field")) {
      if (!(val = cli_value(prog, argc, argv, &i))) return 0;
      if (!strcmp(val, "real"))
        g->real_values = true;
      else if (!strcmp(val, "pattern"))
        g->real_values = false;
      else {
        fprintf(stderr, "%s: --field: expected pattern or real, found '%s'\n", prog, val);
        return 0;
      }
    } else if (rmat && !strcmp(a, "--no-scramble")) {
      g->no_scramble = true;
    } else if (!rmat && (!strcmp(a, "--nx") || !strcmp(a, "--ny") || (g->kind == GEN_GRID3D && !strcmp(a, "--nz")))) {
      if (!(val = cli_value(prog, argc, argv, &i)) ||
          !cli_int(prog, a, val, 1, INT64_C(1) << 40, &v))
        return 0;
      if (a[3] == 'x')
        g->nx = v, have_nx = true;
      else if (a[3] == 'y')
        g->ny = v, have_ny = true;
      else
        g->nz = v, have_nz = true;
    } else if (!rmat && !strcmp(a, "--symmetric")) {
      g->general = false;
    } else if (!rmat && !strcmp(a, "--general")) {
      g->general = true;
    } else if (a[0] == '-' && a[1] != 0) {
      fprintf(stderr, "%s: %s: unknown option '%s' (try --help)\n", prog, kind, a);
      return 0;
    } else {
      fprintf(stderr, "%s: %s: unexpected argument '%s'\n", prog, kind, a);
      return 0;
    }
  }
  if (g->kind == GEN_RMAT && (!have_scale || !have_ef)) {
    fprintf(stderr, "%s: rmat: %s is required\n", prog, !have_scale ? "--scale" : "--edge-factor");
    return 0;
  }
  if (g->kind != GEN_RMAT && (!have_nx || !have_ny || (g->kind == GEN_GRID3D && !have_nz))) {
    fprintf(stderr, "%s: %s: %s is required\n", prog, kind,
            !have_nx       ? "--nx"
                : !have_ny ? "--ny"
                           : "--nz");
    return 0;
  }
  return 1;
}

int main(int argc, char **argv) {
  gen_spec g;
  const char *out;
  int threads;
  int64_t m, k, entries;
  shiro_error err = {{0}};
  FILE *f;
  bool to_stdout;
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    usage(argc < 2 ? stderr : stdout);
    return cli_finish_stdout(prog, argc < 2 ? 2 : 0);
  }
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--version")) {
      cli_version(prog, NULL);
      return cli_finish_stdout(prog, 0);
    }
  for (int i = 2; i < argc; i++)
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return cli_finish_stdout(prog, 0);
    }
  if (!parse(argc, argv, &g, &out, &threads)) return 2;
  if (gen_shape(&g, &m, &k, &entries, &err) != SHIRO_OK) {
    fprintf(stderr, "%s: %s: %s\n", prog, argv[1], err.message);
    return 2;
  }
  to_stdout = !out || !strcmp(out, "-");
  if (!strcmp(out_format, "csr-h5")) {
    if (to_stdout) {
      fprintf(stderr, "%s: --format csr-h5 needs -o FILE (HDF5 is not written to a stream)\n", prog);
      return 2;
    }
    if (g.kind != GEN_RMAT || g.real_values) {
      fprintf(stderr, "%s: --format csr-h5: pattern R-MAT only (rmat without --field real)\n", prog);
      return 2;
    }
    if (gen_write_csr_h5(&g, out, threads, &err) != SHIRO_OK) {
      fprintf(stderr, "%s: %s\n", prog, err.message);
      return 1;
    }
    return cli_finish_stdout(prog, 0);
  }
  out_file *o = NULL; /* -o FILE: atomic for a file, in place for a device or FIFO (out_file.h) */
  if (!to_stdout) {
    cli_remove_temps_on_signals();
    if (out_file_open(&o, out, 0, &err) != SHIRO_OK) {
      fprintf(stderr, "%s: %s\n", prog, err.message);
      return 1;
    }
  }
  f = to_stdout ? stdout : out_file_stream(o);
  if (!f) {
    fprintf(stderr, "%s: %s: out of memory\n", prog, out);
    out_file_abandon(o);
    return 1;
  }
  static char obuf[1 << 16];
  setvbuf(f, obuf, _IOFBF, sizeof obuf);
  shiro_status st = gen_write(&g, f, to_stdout ? "<stdout>" : out, threads, &err);
  if (o && st == SHIRO_OK) st = out_file_commit(o, &err);
  else out_file_abandon(o); /* the temporary removed; a device or FIFO is left as it is */
  if (st != SHIRO_OK) {
    fprintf(stderr, "%s: %s\n", prog, err.message);
    return 1;
  }
  return cli_finish_stdout(prog, 0);
}
