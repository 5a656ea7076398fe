/* gen.c — R-MAT and grid-stencil generators writing Matrix Market files.
 *
 * Lines are formatted in blocks, the blocks of a round in parallel (one per
 * thread) into per-thread buffers, then written in order; a block's text is
 * a function of its first item alone, so the file does not depend on the
 * number of threads. */
#include <errno.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "gen.h"

/* ---- random numbers ---- */

#define GEN_GOLDEN UINT64_C(0x9e3779b97f4a7c15)

/* The output function of SplitMix64: a bijection of 64-bit words whose
 * outputs for consecutive inputs pass statistical tests. */
static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

/* Quadrant thresholds on 32-bit uniforms: a = .57, a+b = .76, a+b+c = .95,
 * as exact integers floor(p * 2^32). */
#define GEN_TA ((uint32_t)((UINT64_C(57) << 32) / 100))
#define GEN_TAB ((uint32_t)((UINT64_C(76) << 32) / 100))
#define GEN_TABC ((uint32_t)((UINT64_C(95) << 32) / 100))

/* Word r of edge e (r < 32). */
static uint64_t edge_word(uint64_t key, int64_t e, unsigned r) {
  return mix64(key ^ ((uint64_t)e * 32 + r));
}

/* A bijection of [0, 2^S) chosen by two keys: an affine map with an odd
 * factor, a xor-shift, an odd factor, a xor-shift (each step is invertible
 * modulo 2^S). */
static uint64_t scramble(uint64_t x, int S, uint64_t k1, uint64_t k2) {
  const uint64_t mask = (S == 64) ? ~UINT64_C(0) : (UINT64_C(1) << S) - 1;
  x = (x * (k1 | 1) + k2) & mask;
  x ^= x >> ((S + 1) / 2);
  x = (x * ((k2 >> 7) | 1)) & mask;
  x ^= x >> ((S + 2) / 3);
  return x & mask;
}

void gen_rmat_edge(const gen_spec *g, int64_t e, int64_t *i, int64_t *j) {
  const uint64_t key = mix64(g->seed + GEN_GOLDEN);
  uint64_t r = 0, c = 0;
  for (int l = 0; l < g->scale; l += 2) {
    uint64_t w = edge_word(key, e, (unsigned)l / 2);
    for (int h = 0; h < 2 && l + h < g->scale; h++) {
      uint32_t u = (uint32_t)(w >> (32 * h));
      r = r << 1 | (u >= GEN_TAB);
      c = c << 1 | ((u >= GEN_TA && u < GEN_TAB) || u >= GEN_TABC);
    }
  }
  if (!g->no_scramble) {
    uint64_t k1 = mix64(key ^ UINT64_C(0x5851f42d4c957f2d)),
             k2 = mix64(key ^ UINT64_C(0x14057b7ef767814f));
    r = scramble(r, g->scale, k1, k2);
    c = scramble(c, g->scale, k1, k2);
  }
  *i = (int64_t)r;
  *j = (int64_t)c;
}

/* ---- shape ---- */

/* a * b into *out, false on int64 overflow (a, b >= 0). */
static bool mul_ok(int64_t a, int64_t b, int64_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}

shiro_status gen_shape(const gen_spec *g, int64_t *m, int64_t *k, int64_t *entries,
                       shiro_error *err) {
  int64_t n = 0, pairs = 0, t;
  switch (g->kind) {
    case GEN_RMAT:
      if (g->scale < 1 || g->scale > 40)
        return shiro_fail(err, SHIRO_ERR_ARG, "--scale: expected 1..40, found %d", g->scale);
      if (g->edge_factor < 1 || g->edge_factor > (INT64_C(1) << 56) >> g->scale)
        return shiro_fail(
            err, SHIRO_ERR_ARG, "--edge-factor: expected 1..%lld for scale %d, found %lld",
            (long long)((INT64_C(1) << 56) >> g->scale), g->scale, (long long)g->edge_factor);
      *m = *k = INT64_C(1) << g->scale;
      *entries = g->edge_factor << g->scale;
      return SHIRO_OK;
    case GEN_GRID2D:
    case GEN_GRID3D: {
      int64_t nz = g->kind == GEN_GRID3D ? g->nz : 1;
      if (g->nx < 1)
        return shiro_fail(err, SHIRO_ERR_ARG, "--nx: expected >= 1, found %lld", (long long)g->nx);
      if (g->ny < 1)
        return shiro_fail(err, SHIRO_ERR_ARG, "--ny: expected >= 1, found %lld", (long long)g->ny);
      if (nz < 1)
        return shiro_fail(err, SHIRO_ERR_ARG, "--nz: expected >= 1, found %lld", (long long)nz);
      /* n vertices; pairs of neighbours along x, y, z. */
      if (!mul_ok(g->nx, g->ny, &n) || !mul_ok(n, nz, &n) || n > (INT64_C(1) << 50))
        return shiro_fail(err, SHIRO_ERR_ARG, "grid too large (expected at most 2^50 vertices)");
      pairs = (g->nx - 1) * g->ny * nz + g->nx * (g->ny - 1) * nz;
      if (g->kind == GEN_GRID3D) pairs += g->nx * g->ny * (nz - 1);
      t = n + (g->general ? 2 * pairs : pairs);
      *m = *k = n;
      *entries = t;
      return SHIRO_OK;
    }
  }
  return shiro_fail(err, SHIRO_ERR_ARG, "unknown generator kind %d", (int)g->kind);
}

/* ---- formatting ---- */

/* Writes v in decimal at p; returns the end. */
static char *put_u64(char *p, uint64_t v) {
  char t[20];
  int n = 0;
  do {
    t[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  while (n) *p++ = t[--n];
  return p;
}

/* Writes v as exactly `digits` decimal digits (leading zeros kept). */
static char *put_fixed(char *p, uint64_t v, int digits) {
  for (int d = digits - 1; d >= 0; d--) {
    p[d] = (char)('0' + v % 10);
    v /= 10;
  }
  return p + digits;
}

/* Most bytes of one item's text: an R-MAT line, a grid row. */
#define GEN_RMAT_LINE 64
#define GEN_GRID_ROW (7 * 48)

/* Items per block: R-MAT edges, grid rows. */
#define GEN_RMAT_BLOCK ((int64_t)1 << 16)
#define GEN_GRID_BLOCK ((int64_t)1 << 14)

/* Formats R-MAT edges [e0, e0+cnt) into buf; returns the bytes. */
static size_t fmt_rmat(const gen_spec *g, int64_t e0, int64_t cnt, char *buf) {
  const uint64_t key = mix64(g->seed + GEN_GOLDEN);
  char *p = buf;
  for (int64_t e = e0; e < e0 + cnt; e++) {
    int64_t i, j;
    gen_rmat_edge(g, e, &i, &j);
    p = put_u64(p, (uint64_t)i + 1);
    *p++ = ' ';
    p = put_u64(p, (uint64_t)j + 1);
    if (g->real_values) {
      *p++ = ' ';
      *p++ = '0';
      *p++ = '.';
      p = put_fixed(p, edge_word(key, e, 31) % UINT64_C(100000000000000000), 17);
    }
    *p++ = '\n';
  }
  return (size_t)(p - buf);
}

/* One entry "i j v\n" (1-based i, j). */
static char *put_entry(char *p, int64_t i, int64_t j, const char *v) {
  p = put_u64(p, (uint64_t)i + 1);
  *p++ = ' ';
  p = put_u64(p, (uint64_t)j + 1);
  *p++ = ' ';
  while (*v) *p++ = *v++;
  *p++ = '\n';
  return p;
}

/* Formats grid rows [r0, r0+cnt) into buf; returns the bytes. */
static size_t fmt_grid(const gen_spec *g, int64_t r0, int64_t cnt, char *buf) {
  const bool three = g->kind == GEN_GRID3D;
  const int64_t nx = g->nx, ny = g->ny, nz = three ? g->nz : 1, sxy = nx * ny;
  const char *diag = three ? "6" : "4";
  char *p = buf;
  for (int64_t v = r0; v < r0 + cnt; v++) {
    int64_t x = v % nx, y = (v / nx) % ny, z = v / sxy;
    if (three && z > 0) p = put_entry(p, v, v - sxy, "-1");
    if (y > 0) p = put_entry(p, v, v - nx, "-1");
    if (x > 0) p = put_entry(p, v, v - 1, "-1");
    p = put_entry(p, v, v, diag);
    if (g->general) {
      if (x + 1 < nx) p = put_entry(p, v, v + 1, "-1");
      if (y + 1 < ny) p = put_entry(p, v, v + nx, "-1");
      if (three && z + 1 < nz) p = put_entry(p, v, v + sxy, "-1");
    }
  }
  return (size_t)(p - buf);
}

/* ---- writing ---- */

shiro_status gen_write(const gen_spec *g, FILE *f, const char *name, int threads,
                       shiro_error *err) {
  shiro_status st = SHIRO_OK;
  int64_t m, k, entries, items, block;
  size_t item_bytes;
  char **buf = NULL;
  size_t *len = NULL;
  int T = threads > 0 ? threads : omp_get_max_threads();
  SHIRO_CHECK_GOTO(gen_shape(g, &m, &k, &entries, err), st);
  if (T < 1) T = 1;
  if (g->kind == GEN_RMAT) {
    items = entries, block = GEN_RMAT_BLOCK, item_bytes = GEN_RMAT_LINE;
    fprintf(f, "%%%%MatrixMarket matrix coordinate %s general\n",
            g->real_values ? "real" : "pattern");
    fprintf(f,
            "%% shiro-gen rmat --scale %d --edge-factor %lld --seed %llu%s%s (a=.57 b=.19 c=.19 "
            "d=.05; every edge written, duplicates included)\n",
            g->scale, (long long)g->edge_factor, (unsigned long long)g->seed,
            g->real_values ? " --field real" : "", g->no_scramble ? " --no-scramble" : "");
  } else {
    items = m, block = GEN_GRID_BLOCK, item_bytes = GEN_GRID_ROW;
    fprintf(f, "%%%%MatrixMarket matrix coordinate real %s\n",
            g->general ? "general" : "symmetric");
    if (g->kind == GEN_GRID2D)
      fprintf(f, "%% shiro-gen grid2d --nx %lld --ny %lld%s (5-point Laplacian)\n",
              (long long)g->nx, (long long)g->ny, g->general ? " --general" : "");
    else
      fprintf(f, "%% shiro-gen grid3d --nx %lld --ny %lld --nz %lld%s (7-point Laplacian)\n",
              (long long)g->nx, (long long)g->ny, (long long)g->nz, g->general ? " --general" : "");
  }
  fprintf(f, "%lld %lld %lld\n", (long long)m, (long long)k, (long long)entries);
  if (T > 1 && items < 4 * block) T = 1; /* small: no threads */
  buf = calloc((size_t)T, sizeof *buf);
  len = calloc((size_t)T, sizeof *len);
  if (!buf || !len) {
    st = shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory", name);
    goto done;
  }
  for (int t = 0; t < T; t++) {
    if (!(buf[t] = malloc((size_t)block * item_bytes))) {
      st = shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory for the buffers", name);
      goto done;
    }
  }
  /* Rounds of T blocks: formatted in parallel, written in order. */
  for (int64_t base = 0; base < items; base += (int64_t)T * block) {
#pragma omp parallel for num_threads(T) schedule(static, 1) if (T > 1)
    for (int t = 0; t < T; t++) {
      int64_t first = base + (int64_t)t * block,
              cnt = items - first < block ? items - first : block;
      len[t] = 0;
      if (cnt > 0)
        len[t] =
            g->kind == GEN_RMAT ? fmt_rmat(g, first, cnt, buf[t]) : fmt_grid(g, first, cnt, buf[t]);
    }
    for (int t = 0; t < T; t++) {
      if (len[t] && fwrite(buf[t], 1, len[t], f) != len[t]) {
        st = shiro_fail(err, SHIRO_ERR_IO, "%s: write error: %s", name, strerror(errno));
        goto done;
      }
    }
  }
  if (fflush(f) != 0 || ferror(f))
    st = shiro_fail(err, SHIRO_ERR_IO, "%s: write error: %s", name, strerror(errno));
done:
  for (int t = 0; buf && t < T; t++) free(buf[t]);
  free(buf);
  free(len);
  return st;
}
