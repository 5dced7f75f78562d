/*
 * bench_ilp.c -- the ILP against the heuristics on generated graphs, side
 * by side in one run, for BENCHMARKS.md (`make bench`).
 *
 * For each graph: the heuristics' traffic under the eager peak; the ILP at
 * each time limit: time to its first incumbent (the warm start) and to a
 * proven optimum (if reached), final status and gap, and traffic saved
 * versus greedy-peak and greedy-lowmem (the latter only when it meets the
 * same peak limit).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen/generate.h"
#include "heuristics/heuristics.h"
#include "solver/solver.h"

typedef struct track {
  double first; /* elapsed at the first report with an incumbent */
} track;

static void on_progress(const fp_ilp_progress *p, void *ctx) {
  track *t = ctx;
  if (isnan(t->first) && !isnan(p->incumbent))
    t->first = p->elapsed_s;
}

static uint64_t heuristic(const fp_graph *g, fp_method m, uint64_t limit) {
  fp_fusion_params prm;
  fp_metrics mm;
  fp_plan *p = fp_plan_create();
  fp_fusion_params_init(&prm, m);
  uint64_t t = 0;
  if (fp_fuse(g, &prm, p, NULL) == FP_OK &&
      fp_plan_eval(g, p, &mm, NULL, NULL) == FP_OK)
    t = mm.peak_bytes <= limit ? mm.traffic_bytes : 0; /* 0: over limit */
  fp_plan_destroy(p);
  return t;
}

static void row(fp_gen_family fam, int32_t n, double limit_s) {
  fp_gen_params gp;
  fp_graph *g = NULL;
  fp_gen_params_init(&gp);
  gp.family = fam;
  gp.size = n;
  if (fp_generate(&gp, &g, NULL) != FP_OK)
    exit(1);
  fp_plan *e = fp_plan_create(), *p = fp_plan_create();
  fp_metrics me, m;
  fp_error err;
  fp_plan_make_eager(e, g, NULL);
  fp_plan_eval(g, e, &me, NULL, NULL);
  uint64_t gpk = heuristic(g, FP_METHOD_GREEDY_PEAK, me.peak_bytes);
  uint64_t glm = heuristic(g, FP_METHOD_GREEDY_LOWMEM, me.peak_bytes);
  fp_ilp_params prm;
  track tr = {NAN};
  fp_ilp_params_init(&prm);
  prm.time_limit_s = limit_s;
  prm.progress = on_progress;
  prm.progress_ctx = &tr;
  if (fp_ilp_solve(g, &prm, p, &m, &err) != FP_OK) {
    printf("| %s | %d | %.0f | error: %s |\n", fp_gen_family_name(fam), (int)n,
           limit_s, err.msg);
    exit(1);
  }
  const fp_solver_info *si = fp_plan_solver(p);
  bool opt = strcmp(si->status, "optimal") == 0;
  char lowmem[32];
  if (glm)
    snprintf(lowmem, sizeof lowmem, "%.2f%%",
             100.0 * ((double)glm - (double)m.traffic_bytes) / (double)glm);
  else
    snprintf(lowmem, sizeof lowmem, "over limit");
  char proven[32] = "no";
  if (opt) /* the time to the proof, in the same cell */
    snprintf(proven, sizeof proven, "after %.2f s", si->time_s);
  printf("| %s | %d | %.0f | %lld x %lld | %.2f | %s | %s | %.2f%% | %.2f%% | "
         "%s |\n",
         fp_gen_family_name(fam), (int)n, limit_s, (long long)si->rows,
         (long long)si->cols, tr.first, proven, si->status, 100 * si->gap,
         100.0 * ((double)gpk - (double)m.traffic_bytes) / (double)gpk, lowmem);
  fflush(stdout);
  fp_plan_destroy(e);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}

int main(int argc, char **argv) {
  static const int32_t sizes[] = {20, 50, 100, 200, 400};
  double limits[2] = {10, 60};
  int nl = argc > 1 && strcmp(argv[1], "quick") == 0 ? 1 : 2;
  printf("| family | nodes | limit s | model rows x cols | first incumbent s "
         "| proven optimal | status | gap | saved vs greedy-peak | saved vs "
         "greedy-lowmem |\n|---|---:|---:|---:|---:|---|---|---:|---:|---:|\n");
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
    for (int f = 0; f < 2; f++)
      for (int l = 0; l < nl; l++)
        row(f == 0 ? FP_GEN_TRANSFORMER : FP_GEN_RANDOM, sizes[i], limits[l]);
  return 0;
}
