/* plan_heatmap.c — the rank x rank traffic matrix as a standalone SVG (see plan_heatmap.h).
 *
 * Layout, left to right: destination-rank labels, the matrix (R x R cells of
 * `cs` pixels, source ranks along the top), the legend (one bar per colour
 * ramp, tick labels on the right). Everything is plain SVG 1.1 with inline
 * attributes (no CSS, no scripts), so it renders the same in any browser or
 * converter; hover text is the standard <title> child of each cell. */
#include "plan_heatmap.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out_file.h"

/* ColorBrewer YlOrRd (inter-node) and Blues (intra-node), 9 classes each. */
static const unsigned char RAMP[2][9][3] = {
    {{255, 255, 204}, {255, 237, 160}, {254, 217, 118}, {254, 178, 76}, {253, 141, 60}, {252, 78, 42}, {227, 26, 28}, {189, 0, 38}, {128, 0, 38}},
    {{247, 251, 255}, {222, 235, 247}, {198, 219, 239}, {158, 202, 225}, {107, 174, 214}, {66, 146, 198}, {33, 113, 181}, {8, 81, 156}, {8, 48, 107}},
};
enum { RAMP_INTER = 0,
       RAMP_INTRA = 1 };
#define SELF_FILL "#e8e8e8" /* a rank never sends to itself */
#define FONT "font-family=\"DejaVu Sans, Arial, Helvetica, sans-serif\""

#define LEGEND_GAP 13.0 /* pixels between two legend labels' baselines: 11 px text never overlaps */

/* Writer state: the open file and the first error seen. */
typedef struct svg {
  FILE *f;
  int32_t R, G;
  heatmap_scale scale; /* how a count maps to a colour */
  double cs; /* cell size, pixels */
  double x0, y0; /* top-left corner of the matrix */
  double vmax; /* the largest off-diagonal count (0: no traffic) */
} svg;

static int fail(char *errbuf, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *errbuf, size_t errlen, const char *fmt, ...) {
  if (errbuf && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, errlen, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* Colour of intensity t in [0, 1] on a ramp: t > 0 spans classes 1..8 (class
 * 0 is too pale to tell from an empty cell), interpolated in RGB. */
static void ramp_rgb(int ramp, double t, int c[3]) {
  if (t < 0) t = 0;
  if (t > 1) t = 1;
  double x = 1.0 + 7.0 * t;
  int i = (int)x;
  if (i > 7) i = 7;
  double w = x - i;
  for (int k = 0; k < 3; k++) c[k] = (int)lround(RAMP[ramp][i][k] * (1 - w) + RAMP[ramp][i + 1][k] * w);
}

/* ramp_rgb as "#rrggbb". */
static void ramp_colour(int ramp, double t, char out[8]) {
  int c[3];
  ramp_rgb(ramp, t, c);
  snprintf(out, 8, "#%02x%02x%02x", c[0], c[1], c[2]);
}

/* Intensity of a count in [0, 1]: v / max (linear) or log(1 + v) / log(1 + max) (log). */
static double intensity(const svg *s, int64_t v) {
  if (s->vmax <= 0) return 0;
  return s->scale == HEATMAP_LOG ? log1p((double)v) / log1p(s->vmax) : (double)v / s->vmax;
}

int heatmap_scale_parse(const char *text, heatmap_scale *out) {
  if (!text) return -1;
  if (!strcmp(text, "linear")) *out = HEATMAP_LINEAR;
  else if (!strcmp(text, "log")) *out = HEATMAP_LOG;
  else return -1;
  return 0;
}

/* Writes text with &, <, >, " and ' escaped; control bytes dropped (not allowed in XML 1.0). */
static void put_escaped(FILE *f, const char *t) {
  for (; *t; t++) {
    unsigned char c = (unsigned char)*t;
    switch (c) {
      case '&': fputs("&amp;", f); break;
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '"': fputs("&quot;", f); break;
      case '\'': fputs("&apos;", f); break;
      default:
        if (c >= 0x20 || c == '\t' || c == '\n') fputc(c, f);
    }
  }
}

/* Compact tick label: 0, 1, 10, 100, 1k, 10k, 100k, 1M, ... */
static void compact(int64_t v, char *out, size_t cap) {
  static const char *suffix[] = {"", "k", "M", "G", "T", "P", "E"};
  int s = 0;
  while (v >= 1000 && v % 1000 == 0 && s < 6) v /= 1000, s++;
  snprintf(out, cap, "%lld%s", (long long)v, suffix[s]);
}

/* A cell's count in at most 4 characters: 704, 9999, 12k, 120k, 1.2M, ... */
static void cell_label(int64_t v, char *out, size_t cap) {
  static const char *suffix[] = {"", "k", "M", "G", "T", "P", "E"};
  double x = (double)v;
  int s = 0;
  while (x >= (s ? 999.5 : 9999.5) && s < 6) x /= 1000, s++;
  if (s == 0) snprintf(out, cap, "%lld", (long long)v);
  else if (x < 9.95) snprintf(out, cap, "%.1f%s", x, suffix[s]);
  else snprintf(out, cap, "%.0f%s", x, suffix[s]);
}

/* Number of decimal digits of v >= 0. */
static int digits(int64_t v) {
  int d = 1;
  while (v >= 10) v /= 10, d++;
  return d;
}

/* Label every `step` ranks: the first of 1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 50, ... whose spacing is >= min_px. */
static int32_t label_step(double cs, double min_px) {
  static const int32_t base[] = {1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 50, 64};
  for (int32_t scale = 1;; scale *= 100)
    for (size_t i = 0; i < sizeof base / sizeof *base; i++) {
      int32_t step = base[i] * scale;
      if (step * cs >= min_px || step >= 1 << 20) return step;
    }
}

/* Up to HEATMAP_NUMBERS_MAX_RANKS ranks: each cell that holds traffic prints
 * its count (cell_label), centred, white on dark colours and black on light
 * ones; the text lets the pointer through to the cell's hover title. */
static void put_numbers(const svg *s, const int64_t *rows) {
  FILE *f = s->f;
  int32_t R = s->R, G = s->G;
  double cs = s->cs, fs = cs * 0.34 < 12 ? cs * 0.34 : 12;
  fprintf(f, "<g %s font-size=\"%.1f\" text-anchor=\"middle\" pointer-events=\"none\">\n", FONT, fs);
  for (int32_t p = 0; p < R; p++)
    for (int32_t q = 0; q < R; q++) {
      int64_t v = rows[(size_t)p * (size_t)R + (size_t)q];
      if (v <= 0) continue;
      int c[3];
      char t[24];
      ramp_rgb(p / G != q / G ? RAMP_INTER : RAMP_INTRA, intensity(s, v), c);
      cell_label(v, t, sizeof t);
      int dark = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2] < 140;
      fprintf(f, "<text x=\"%.3f\" y=\"%.3f\" fill=\"%s\">%s</text>\n", s->x0 + (q + 0.5) * cs,
              s->y0 + (p + 0.5) * cs + 0.36 * fs, dark ? "#ffffff" : "#202020", t);
    }
  fprintf(f, "</g>\n");
}

/* The cells: white background, then one rect per cell that holds traffic, is
 * on the diagonal, or (up to 64 ranks) any cell, so that each has its title. */
static void put_cells(const svg *s, const int64_t *rows) {
  FILE *f = s->f;
  int32_t R = s->R, G = s->G;
  double cs = s->cs;
  fprintf(f, "<rect x=\"%.3f\" y=\"%.3f\" width=\"%.3f\" height=\"%.3f\" fill=\"#ffffff\"/>\n", s->x0, s->y0, cs * R,
          cs * R);
  fprintf(f, "<g shape-rendering=\"crispEdges\" stroke=\"none\">\n");
  for (int32_t p = 0; p < R; p++)
    for (int32_t q = 0; q < R; q++) {
      int64_t v = rows[(size_t)p * (size_t)R + (size_t)q];
      int inter = p / G != q / G;
      if (v == 0 && p != q && R > 64) continue;
      char fill[8];
      if (v > 0) ramp_colour(inter ? RAMP_INTER : RAMP_INTRA, intensity(s, v), fill);
      else snprintf(fill, sizeof fill, "%s", p == q ? SELF_FILL : "#ffffff");
      fprintf(f, "<rect x=\"%.3f\" y=\"%.3f\" width=\"%.3f\" height=\"%.3f\" fill=\"%s\"><title>", s->x0 + q * cs,
              s->y0 + p * cs, cs, cs, fill);
      if (p == q && v == 0)
        fprintf(f, "rank %d: itself (nothing moves)", p);
      else
        fprintf(f, "rank %d &#8594; rank %d: %lld row%s per call, %s-node", q, p, (long long)v, v == 1 ? "" : "s",
                inter ? "inter" : "intra");
      fprintf(f, "</title></rect>\n");
    }
  fprintf(f, "</g>\n");
}

/* Node boundaries every G ranks (none when every rank is its own node or the
 * lines would be closer than 4 pixels), then the frame. */
static void put_grid(const svg *s) {
  FILE *f = s->f;
  double cs = s->cs, side = cs * s->R;
  if (s->G > 1 && s->G < s->R && s->G * cs >= 4) {
    /* many nodes: fainter lines, so that they do not drown the cells */
    int32_t nodes = (s->R + s->G - 1) / s->G;
    fprintf(f, "<g stroke=\"#303030\" stroke-width=\"%.2f\" stroke-opacity=\"%.2f\" shape-rendering=\"crispEdges\">\n",
            cs >= 8 ? 1.5 : 1.0, nodes <= 16 ? 1.0 : nodes <= 64 ? 0.45
                                                                 : 0.3);
    for (int32_t b = s->G; b < s->R; b += s->G) {
      double at = b * cs;
      fprintf(f, "<line x1=\"%.3f\" y1=\"%.3f\" x2=\"%.3f\" y2=\"%.3f\"/>\n", s->x0 + at, s->y0, s->x0 + at,
              s->y0 + side);
      fprintf(f, "<line x1=\"%.3f\" y1=\"%.3f\" x2=\"%.3f\" y2=\"%.3f\"/>\n", s->x0, s->y0 + at, s->x0 + side,
              s->y0 + at);
    }
    fprintf(f, "</g>\n");
  }
  fprintf(f,
          "<rect x=\"%.3f\" y=\"%.3f\" width=\"%.3f\" height=\"%.3f\" fill=\"none\" stroke=\"#000000\" "
          "stroke-width=\"1\"/>\n",
          s->x0, s->y0, side, side);
}

/* Rank labels (thinned) and axis titles: sources along the top, destinations down the left. */
static void put_axes(const svg *s, double label_w, int vertical_x) {
  FILE *f = s->f;
  double cs = s->cs, side = cs * s->R;
  int32_t ystep = label_step(cs, 13), xstep = vertical_x ? ystep : label_step(cs, label_w + 4);
  fprintf(f, "<g %s font-size=\"11\" fill=\"#202020\">\n", FONT);
  for (int32_t q = 0; q < s->R; q += xstep) {
    double x = s->x0 + (q + 0.5) * cs, y = s->y0 - 5;
    if (vertical_x)
      fprintf(f, "<text x=\"%.3f\" y=\"%.3f\" transform=\"rotate(-90 %.3f %.3f)\" dominant-baseline=\"middle\">%d</text>\n",
              x, y, x, y, q);
    else
      fprintf(f, "<text x=\"%.3f\" y=\"%.3f\" text-anchor=\"middle\">%d</text>\n", x, y, q);
  }
  for (int32_t p = 0; p < s->R; p += ystep)
    fprintf(f, "<text x=\"%.3f\" y=\"%.3f\" text-anchor=\"end\" dominant-baseline=\"middle\">%d</text>\n", s->x0 - 5,
            s->y0 + (p + 0.5) * cs, p);
  fprintf(f, "</g>\n");
  double top = s->y0 - (vertical_x ? label_w + 12 : 20);
  fprintf(f, "<text x=\"%.3f\" y=\"%.3f\" %s font-size=\"12\" text-anchor=\"middle\">source rank q (sends)</text>\n",
          s->x0 + side / 2, top, FONT);
  double lx = s->x0 - label_w - 14, ly = s->y0 + side / 2;
  fprintf(f,
          "<text x=\"%.3f\" y=\"%.3f\" %s font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 %.3f %.3f)\">"
          "destination rank p (receives)</text>\n",
          lx, ly, FONT, lx, ly);
}

/* One tick of the legend at value v, y pixels down: a mark right of the bars and its label. */
static void put_tick(FILE *f, double tx, double y, const char *label) {
  fprintf(f, "<line x1=\"%.3f\" y1=\"%.3f\" x2=\"%.3f\" y2=\"%.3f\" stroke=\"#202020\" stroke-width=\"0.8\"/>\n",
          tx, y, tx + 4, y);
  fprintf(f, "<text x=\"%.3f\" y=\"%.3f\">%s</text>\n", tx + 7, y + 4, label); /* +4: centred on 11 px text */
}

/* The colour bars, one per ramp (inter-node, intra-node) side by side, on a
 * scale whose ticks are labelled right of them: the maximum at the top, then
 * round values from the bottom up (linear: 0 and steps of 1, 2 or 5 x 10^k,
 * at most about five; log: 1, 10, 100, ...), each kept only LEGEND_GAP
 * pixels or more from the labels kept before it and from the maximum's, so
 * that no two labels overlap. What the bars measure and the scale's name
 * stand above them; the ramps' names and the empty cell's white box below. */
static void put_legend(const svg *s, int64_t vmax, double lx, double ly, double h) {
  FILE *f = s->f;
  const double bw = 14, gap = 34, tx = lx + gap + bw;
  fprintf(f, "<defs>\n");
  for (int r = 0; r < 2; r++) {
    fprintf(f, "<linearGradient id=\"ramp%d\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n", r);
    for (int k = 0; k <= 16; k++) {
      char c[8];
      ramp_colour(r, k / 16.0, c);
      fprintf(f, "<stop offset=\"%.4f\" stop-color=\"%s\"/>\n", k / 16.0, c);
    }
    fprintf(f, "</linearGradient>\n");
  }
  fprintf(f, "</defs>\n<g %s font-size=\"11\" fill=\"#202020\">\n", FONT);
  if (vmax <= 0) {
    fprintf(f, "<text x=\"%.3f\" y=\"%.3f\">no traffic</text>\n</g>\n", lx, ly + 12);
    return;
  }
  fprintf(f, "<text x=\"%.3f\" y=\"%.3f\" font-weight=\"bold\">rows per call</text>\n", lx, ly - 22);
  fprintf(f, "<text x=\"%.3f\" y=\"%.3f\" fill=\"#505050\">%s scale</text>\n", lx, ly - 8,
          s->scale == HEATMAP_LOG ? "log" : "linear");
  static const char *name[2] = {"inter", "intra"};
  for (int r = 0; r < 2; r++) {
    double x = lx + r * gap;
    fprintf(f,
            "<rect x=\"%.3f\" y=\"%.3f\" width=\"%.3f\" height=\"%.3f\" fill=\"url(#ramp%d)\" stroke=\"#606060\" "
            "stroke-width=\"0.5\"><title>%s-node pairs: 1 to %lld rows per call</title></rect>\n",
            x, ly, bw, h, r, name[r], (long long)vmax);
    fprintf(f, "<text x=\"%.3f\" y=\"%.3f\" text-anchor=\"middle\">%s</text>\n", x + bw / 2, ly + h + 19, name[r]);
  }
  /* the empty cell: a white box under the bars */
  double by = ly + h + 28;
  fprintf(f,
          "<rect x=\"%.3f\" y=\"%.3f\" width=\"%.3f\" height=\"%.3f\" fill=\"#ffffff\" stroke=\"#606060\" "
          "stroke-width=\"0.5\"/>\n",
          lx, by, bw, bw);
  fprintf(f, "<text x=\"%.3f\" y=\"%.3f\">none</text>\n", lx + bw + 6, by + bw / 2 + 4);
  char t[48];
  snprintf(t, sizeof t, "%lld (max)", (long long)vmax);
  put_tick(f, tx, ly, t);
  int64_t step = 1; /* linear: the first 1, 2, 5 x 10^k with at most 5 steps to the maximum */
  for (int k = 0; s->scale == HEATMAP_LINEAR && vmax / step > 5 && step <= INT64_MAX / 10; k++)
    step = (k % 3 == 1) ? step / 2 * 5 : step * 2;
  double last = INFINITY; /* the lowest label kept so far, from the bottom up */
  for (int64_t v = s->scale == HEATMAP_LOG ? 1 : 0; v < vmax;) {
    double y = ly + h * (1 - intensity(s, v));
    if (last - y >= LEGEND_GAP && y - ly >= LEGEND_GAP) {
      compact(v, t, sizeof t);
      put_tick(f, tx, y, t);
      last = y;
    }
    if (v > INT64_MAX / 10) break;
    v = s->scale == HEATMAP_LOG ? v * 10 : v + step;
  }
  fprintf(f, "</g>\n");
}

/* Writes the whole document to s->f. */
static void put_svg(svg *s, const int64_t *rows, const char *title) {
  int32_t R = s->R, G = s->G;
  int64_t vmax = 0, total = 0, inter = 0;
  for (int32_t p = 0; p < R; p++)
    for (int32_t q = 0; q < R; q++) {
      int64_t v = rows[(size_t)p * (size_t)R + (size_t)q];
      if (p != q && v > vmax) vmax = v;
      total += v;
      if (p / G != q / G) inter += v;
    }
  s->vmax = (double)vmax;
  s->cs = 640.0 / R;
  if (s->cs > 40) s->cs = 40;
  if (s->cs < 1) s->cs = 1;
  int numbers = R <= HEATMAP_NUMBERS_MAX_RANKS;
  if (numbers && s->cs < 26) s->cs = 26; /* room for 4 characters in a cell */
  double side = s->cs * R;
  double label_w = digits(R - 1) * 6.8;
  int vertical_x = label_step(s->cs, label_w + 4) > label_step(s->cs, 13) && R > 10;
  s->x0 = 16 + 14 + label_w + 10;
  s->y0 = 58 + (vertical_x ? label_w + 12 : 20) + 6;
  double legend_h = side < 160 ? 160 : side > 320 ? 320
                                                  : side;
  int32_t nodes = (R + G - 1) / G;
  char sub[320];
  snprintf(sub, sizeof sub,
           "%d rank%s, %d per node (%d node%s); %lld rows per call: %lld inter-node, %lld intra-node; largest pair %lld",
           R, R == 1 ? "" : "s", G, nodes, nodes == 1 ? "" : "s", (long long)total, (long long)inter,
           (long long)(total - inter), (long long)vmax);
  /* Widths estimated at 6.8 px per character of 11-12 px text. */
  char how[200];
  snprintf(how, sizeof how, "colour: %s, red inter-node, blue intra-node%s", s->scale == HEATMAP_LOG ? "log(1 + rows) / log(1 + max) (log scale)" : "rows / max (linear scale)",
           numbers ? "; numbers: rows per call (k = 1000, M = 10^6)" : "");
  double lx = s->x0 + side + 28, width = lx + 34 + 14 + 12 + (digits(vmax) + 6) * 6.8;
  if (width < 32 + strlen(sub) * 6.8) width = 32 + strlen(sub) * 6.8;
  if (width < 32 + strlen(how) * 6.2) width = 32 + strlen(how) * 6.2;
  if (width < 560) width = 560;
  if (title && width < 32 + strlen(title) * 9.0) width = 32 + strlen(title) * 9.0;
  double height = s->y0 + (side > legend_h + 80 ? side : legend_h + 80) + 80;

  FILE *f = s->f;
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  fprintf(f,
          "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
          "viewBox=\"0 0 %.0f %.0f\">\n",
          ceil(width), ceil(height), ceil(width), ceil(height));
  fprintf(f, "<title>");
  put_escaped(f, title && *title ? title : "shiro plan: rows moved per call");
  fprintf(f, "</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n");
  fprintf(f, "<text x=\"16\" y=\"24\" %s font-size=\"15\" font-weight=\"bold\">", FONT);
  put_escaped(f, title && *title ? title : "rows moved per SpMM call");
  fprintf(f, "</text>\n");
  fprintf(f, "<text x=\"16\" y=\"44\" %s font-size=\"12\" fill=\"#404040\">%s</text>\n", FONT, sub);
  put_cells(s, rows);
  if (numbers) put_numbers(s, rows);
  put_grid(s);
  put_axes(s, label_w, vertical_x);
  put_legend(s, vmax, lx, s->y0 + 14, legend_h);
  fprintf(f,
          "<text x=\"16\" y=\"%.0f\" %s font-size=\"11\" fill=\"#404040\">cell (p, q): rows rank p receives from "
          "rank q per call (B rows and partial C rows, every hop)</text>\n",
          height - 46, FONT);
  fprintf(f,
          "<text x=\"16\" y=\"%.0f\" %s font-size=\"11\" fill=\"#404040\">lines: node boundaries every %d "
          "rank%s</text>\n",
          height - 30, FONT, G, G == 1 ? "" : "s");
  fprintf(f, "<text x=\"16\" y=\"%.0f\" %s font-size=\"11\" fill=\"#404040\">%s</text>\n", height - 14, FONT, how);
  fprintf(f, "</svg>\n");
}

int heatmap_write_svg(const char *path, int32_t ranks, int32_t gpus_per_node, const int64_t *rows,
                      const char *title, heatmap_scale scale, char *errbuf, size_t errlen) {
  if (!path || !*path) return fail(errbuf, errlen, "heatmap: no output path");
  if (ranks < 1 || ranks > HEATMAP_MAX_RANKS)
    return fail(errbuf, errlen, "heatmap: %d ranks, expected 1 .. %d", ranks, HEATMAP_MAX_RANKS);
  if (gpus_per_node < 1) return fail(errbuf, errlen, "heatmap: gpus per node %d, expected >= 1", gpus_per_node);
  if (!rows) return fail(errbuf, errlen, "heatmap: no traffic matrix");
  if (scale != HEATMAP_LINEAR && scale != HEATMAP_LOG) return fail(errbuf, errlen, "heatmap: unknown scale %d", (int)scale);
  for (size_t i = 0; i < (size_t)ranks * (size_t)ranks; i++)
    if (rows[i] < 0)
      return fail(errbuf, errlen, "heatmap: negative count %lld for rank %zu -> rank %zu", (long long)rows[i],
                  i % (size_t)ranks, i / (size_t)ranks);
  /* Atomic and durable for a file, in place for a device or FIFO (out_file.h). */
  out_file *o;
  shiro_error e;
  if (out_file_open(&o, path, 0, &e) != SHIRO_OK) return fail(errbuf, errlen, "%s", e.message);
  svg s = {.R = ranks, .G = gpus_per_node, .scale = scale};
  if (!(s.f = out_file_stream(o))) {
    out_file_abandon(o);
    return fail(errbuf, errlen, "%s: out of memory", path);
  }
  put_svg(&s, rows, title);
  if (out_file_commit(o, &e) != SHIRO_OK) return fail(errbuf, errlen, "%s", e.message);
  return 0;
}
