/* struct_layout.c — prints the layout of every struct of the C API that the Python package mirrors
 * with ctypes (runtime/shiro.h, base/shiro_status.h, compiler/api/shiro_planner.h): one line
 * "STRUCT FIELD OFFSET SIZE" per field and "STRUCT - 0 SIZEOF" per struct, for struct_check.py. */
#include <stddef.h>
#include <stdio.h>

#include "shiro.h"
#include "shiro_planner.h"

#define FIELD(S, F) printf("%s %s %zu %zu\n", #S, #F, offsetof(S, F), sizeof(((S *)0)->F))
#define WHOLE(S) printf("%s - 0 %zu\n", #S, sizeof(S))

int main(void) {
  WHOLE(shiro_error);
  FIELD(shiro_error, message);
  WHOLE(shiro_plan_info);
  FIELD(shiro_plan_info, ranks), FIELD(shiro_plan_info, gpus_per_node), FIELD(shiro_plan_info, rank);
  FIELD(shiro_plan_info, m), FIELD(shiro_plan_info, k), FIELD(shiro_plan_info, nnz);
  FIELD(shiro_plan_info, c_rows), FIELD(shiro_plan_info, b_rows), FIELD(shiro_plan_info, c_first);
  FIELD(shiro_plan_info, b_first), FIELD(shiro_plan_info, strategy), FIELD(shiro_plan_info, partition);
  FIELD(shiro_plan_info, c_global), FIELD(shiro_plan_info, b_global);
  WHOLE(shiro_ctx_options);
  FIELD(shiro_ctx_options, backend), FIELD(shiro_ctx_options, dtype), FIELD(shiro_ctx_options, n);
  FIELD(shiro_ctx_options, device), FIELD(shiro_ctx_options, transport), FIELD(shiro_ctx_options, timeout_ms);
  FIELD(shiro_ctx_options, threads);
  WHOLE(shiro_traffic);
  FIELD(shiro_traffic, rows_sent), FIELD(shiro_traffic, rows_received), FIELD(shiro_traffic, inter_node_rows_sent);
  FIELD(shiro_traffic, bytes_sent), FIELD(shiro_traffic, bytes_received);
  WHOLE(shiro_planner_matrix);
  FIELD(shiro_planner_matrix, m), FIELD(shiro_planner_matrix, k), FIELD(shiro_planner_matrix, nnz);
  FIELD(shiro_planner_matrix, rowptr), FIELD(shiro_planner_matrix, rows), FIELD(shiro_planner_matrix, cols);
  FIELD(shiro_planner_matrix, values);
  WHOLE(shiro_planner_options);
  FIELD(shiro_planner_options, ranks), FIELD(shiro_planner_options, gpus_per_node);
  FIELD(shiro_planner_options, strategy), FIELD(shiro_planner_options, partition), FIELD(shiro_planner_options, parts);
  FIELD(shiro_planner_options, effort), FIELD(shiro_planner_options, machine), FIELD(shiro_planner_options, n);
  FIELD(shiro_planner_options, dtype_double), FIELD(shiro_planner_options, threads);
  WHOLE(shiro_planner_result);
  FIELD(shiro_planner_result, strategy), FIELD(shiro_planner_result, partition);
  FIELD(shiro_planner_result, nwarnings), FIELD(shiro_planner_result, warnings);
  return 0;
}
