/*
 * plan_graph.c -- fuseplan as a library: load a graph, plan it with the
 * auto method under the eager plan's peak, print what the plan costs
 * against eager and how far from optimal it may be, and write it.
 *
 *   cc plan_graph.c $(pkg-config --cflags --libs fuseplan) -o plan_graph
 *   ./plan_graph GRAPH.json[.gz] PLAN.json [SECONDS]
 *
 * Exit 0 on success, 1 when the library fails (the message says why),
 * 2 for a bad command line.  `make installcheck` (and so `make
 * distcheck`) builds it against the installed library.
 */
#include <fuseplan.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints "plan_graph: <message>" for a failed call; returns 1. */
static int fail(const fp_error *err) {
  fprintf(stderr, "plan_graph: %s (%s)\n", err->msg, fp_status_str(err->code));
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: plan_graph GRAPH PLAN [SECONDS]\n");
    return 2;
  }
  if (strcmp(fp_version(), FP_VERSION) != 0) {
    fprintf(stderr, "plan_graph: compiled for fuseplan %s, runs with %s\n",
            FP_VERSION, fp_version());
    return 1;
  }
  fp_error err;
  fp_graph *g = NULL;
  fp_plan *eager = fp_plan_create(), *plan = fp_plan_create();
  fp_metrics me, m;
  fp_ilp_params prm;
  int rc = 1;
  fp_error_clear(&err);
  fp_ilp_params_init(&prm); /* limits.peak: at most the eager peak */
  prm.time_limit_s = argc == 4 ? atof(argv[3]) : 5.0;
  if (!eager || !plan) {
    fp_error_set(&err, FP_ENOMEM, "out of memory");
    goto fail;
  }
  if (fp_graph_load_file(argv[1], &g, &err) != FP_OK ||
      fp_plan_make_eager(eager, g, &err) != FP_OK ||
      fp_plan_eval(g, eager, &me, NULL, &err) != FP_OK ||
      fp_auto_solve(g, &prm, plan, &m, &err) != FP_OK ||
      fp_plan_check(g, plan, 0, &err) != FP_OK ||
      fp_plan_save_file(plan, g, &m, argv[2], &err) != FP_OK)
    goto fail;
  const fp_solver_info *info = fp_plan_solver_const(plan);
  printf("graph   %s (%d nodes)\n", fp_graph_name(g),
         (int)fp_graph_node_count(g));
  printf("eager   traffic %llu  peak %llu  kernels %d\n",
         (unsigned long long)me.traffic_bytes,
         (unsigned long long)me.peak_bytes, (int)me.kernels);
  printf("%-7s traffic %llu  peak %llu  kernels %d\n", info->method,
         (unsigned long long)m.traffic_bytes, (unsigned long long)m.peak_bytes,
         (int)m.kernels);
  printf("traffic %.3f x eager, gap to the lower bound %.2f%% (%s)\n",
         me.traffic_bytes ? (double)m.traffic_bytes / (double)me.traffic_bytes
                          : 1.0,
         100 * info->gap, info->status);
  printf("wrote   %s\n", argv[2]);
  rc = 0;
fail:
  if (rc)
    fail(&err);
  fp_plan_destroy(plan);
  fp_plan_destroy(eager);
  fp_graph_destroy(g);
  return rc;
}
