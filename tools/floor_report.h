/* floor_report.h — the floors (compiler/choose/plan_floor.h) as shiro-plan and shiro-plan-dump
 * print them: one text form, one JSON form, so that the two tools say the same of one plan. */
#ifndef SHIRO_FLOOR_REPORT_H
#define SHIRO_FLOOR_REPORT_H

#include <stdio.h>

#include "plan_floor.h"

/* Two lines on out: the predicted time against the time floor (skipped when m is NULL or
 * predicted_s < 0), and the busiest node's and rank's row floors; `seconds` is what computing
 * them took. row_bytes: the bytes of one row (N values). */
void floor_report_text(FILE *out, const plan_floor *f, const sc_machine *m, size_t row_bytes, double predicted_s,
                       double seconds);

/* `"floor": {...}` on out (no separator before it): time_s (null without a machine), the
 * floor's term and node or rank, the seconds taken, and both levels' row floors per group. */
void floor_report_json(FILE *out, const plan_floor *f, const sc_machine *m, size_t row_bytes, double seconds);

#endif
