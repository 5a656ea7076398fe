/* floor_report.c — the floors in text and JSON (floor_report.h). */
#include "floor_report.h"

void floor_report_text(FILE *out, const plan_floor *f, const sc_machine *m, size_t row_bytes, double predicted_s,
                       double seconds) {
  if (m && predicted_s >= 0) {
    const char *term;
    int32_t at;
    const double fl = plan_floor_time(f, m, row_bytes, &term, &at);
    if (fl > 0)
      fprintf(out, "  predicted %.4f ms, floor %.4f ms (%.2fx the floor; the floor's term: %s of %s %d)\n",
              predicted_s * 1e3, fl * 1e3, predicted_s / fl, term, term[0] == 'n' ? "node" : "rank", (int)at);
    else fprintf(out, "  predicted %.4f ms, floor 0 ms (no row must move)\n", predicted_s * 1e3);
  }
  fprintf(out, "  floors (rows any schedule moves): the busiest node sends %lld, receives %lld (all nodes: %lld); "
               "the busiest rank sends %lld, receives %lld (all ranks: %lld); %.3f s\n",
          (long long)f->node.out_max, (long long)f->node.in_max, (long long)f->node.out_sum, (long long)f->rank.out_max,
          (long long)f->rank.in_max, (long long)f->rank.out_sum, seconds);
}

/* One level of the floors as JSON. */
static void level_json(FILE *out, const char *name, const plan_floor_level *L) {
  fprintf(out,
          "\"%s\": {\"egress_rows_max\": %lld, \"egress_at\": %d, \"ingress_rows_max\": %lld, \"ingress_at\": %d, "
          "\"egress_rows_sum\": %lld, \"ingress_rows_sum\": %lld, \"egress_rows\": [",
          name, (long long)L->out_max, (int)L->out_at, (long long)L->in_max, (int)L->in_at, (long long)L->out_sum,
          (long long)L->in_sum);
  for (int32_t x = 0; x < L->groups; x++) fprintf(out, "%s%lld", x ? ", " : "", (long long)(L->out ? L->out[x] : 0));
  fprintf(out, "], \"ingress_rows\": [");
  for (int32_t x = 0; x < L->groups; x++) fprintf(out, "%s%lld", x ? ", " : "", (long long)(L->in ? L->in[x] : 0));
  fprintf(out, "]}");
}

void floor_report_json(FILE *out, const plan_floor *f, const sc_machine *m, size_t row_bytes, double seconds) {
  const char *term = "none";
  int32_t at = 0;
  fprintf(out, "\"floor\": {\"time_s\": ");
  if (m) fprintf(out, "%.9g", plan_floor_time(f, m, row_bytes, &term, &at));
  else fprintf(out, "null");
  fprintf(out, ", \"term\": \"%s\", \"at\": %d, \"seconds\": %.6f, ", term, (int)at, seconds);
  level_json(out, "node", &f->node);
  fprintf(out, ", ");
  level_json(out, "rank", &f->rank);
  fprintf(out, "}");
}
