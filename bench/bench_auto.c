/*
 * bench_auto.c -- `--method auto` against the heuristics, side by side on
 * the same graphs in one run, for BENCHMARKS.md (`make bench`).
 *
 * Usage: bench_auto LIMIT_S GRAPH...   where GRAPH is FAMILY:SIZE (a
 * generated graph, seed 1) or a graph file.  For each graph: the eager
 * plan's traffic and peak, every heuristic's traffic and peak as ratios
 * to eager, then auto under the default peak limit (the eager peak) with
 * LIMIT_S seconds and one job: its traffic and peak ratios, its gap
 * against its own lower bound, the traffic it saves against the best
 * heuristic plan that meets the same limit, windows solved, and seconds.
 * The last line gives the median saving.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen/generate.h"
#include "heuristics/heuristics.h"
#include "model/eval.h"
#include "model/json.h"
#include "solver/solver.h"

static void die(const char *what, const fp_error *err) {
  fprintf(stderr, "bench_auto: %s: %s\n", what, err->msg);
  exit(1);
}

/* FAMILY:SIZE generates; anything else is a file. */
static fp_graph *load(const char *spec) {
  fp_graph *g = NULL;
  fp_error err;
  const char *colon = strchr(spec, ':');
  if (colon && !strchr(spec, '/')) {
    char fam[32];
    fp_gen_params gp;
    fp_gen_params_init(&gp);
    snprintf(fam, sizeof fam, "%.*s", (int)(colon - spec), spec);
    int f = fp_gen_family_parse(fam);
    if (f < 0) {
      fprintf(stderr, "bench_auto: unknown family '%s'\n", fam);
      exit(2);
    }
    gp.family = (fp_gen_family)f;
    gp.size = atoi(colon + 1);
    if (fp_generate(&gp, &g, &err) != FP_OK)
      die(spec, &err);
  } else if (fp_graph_load_file(spec, &g, &err) != FP_OK) {
    die(spec, &err);
  }
  return g;
}

/* A heuristic plan's figures (best order, as `fuseplan solve`). */
static fp_metrics heuristic(const fp_graph *g, fp_method method) {
  fp_fusion_params prm;
  fp_error err;
  fp_metrics m;
  fp_plan *p = fp_plan_create();
  fp_fusion_params_init(&prm, method);
  if (fp_fuse(g, &prm, p, &err) != FP_OK ||
      fp_plan_eval(g, p, &m, NULL, &err) != FP_OK)
    die(fp_method_name(method), &err);
  fp_plan_destroy(p);
  return m;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One table row; returns auto's saving against the best heuristic. */
static double row(const char *spec, double limit) {
  fp_graph *g = load(spec);
  fp_metrics e = heuristic(g, FP_METHOD_EAGER), m;
  uint64_t best = e.traffic_bytes; /* eager meets the eager peak */
  printf("| %s | %d | %.4g / %.4g |", spec, (int)fp_graph_node_count(g),
         (double)e.traffic_bytes, (double)e.peak_bytes);
  for (int k = FP_METHOD_GREEDY; k < FP_METHOD_COUNT_; k++) {
    m = heuristic(g, (fp_method)k);
    printf(" %.3f / %.3f |", (double)m.traffic_bytes / (double)e.traffic_bytes,
           (double)m.peak_bytes / (double)e.peak_bytes);
    if (m.peak_bytes <= e.peak_bytes && m.traffic_bytes < best)
      best = m.traffic_bytes;
  }
  fp_ilp_params prm;
  fp_error err;
  fp_plan *p = fp_plan_create();
  fp_ilp_params_init(&prm);
  prm.time_limit_s = limit;
  if (fp_auto_solve(g, &prm, p, &m, &err) != FP_OK)
    die("auto", &err);
  const fp_solver_info *si = fp_plan_solver_const(p);
  double saved = 1 - (double)m.traffic_bytes / (double)best;
  printf(" %.3f / %.3f | %.2f%% | %.2f%% | %lld | %.1f |\n",
         (double)m.traffic_bytes / (double)e.traffic_bytes,
         (double)m.peak_bytes / (double)e.peak_bytes, 100 * si->gap,
         100 * saved, (long long)si->nodes, si->time_s);
  fflush(stdout);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
  return saved;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bench_auto LIMIT_S GRAPH...\n");
    return 2;
  }
  double limit = atof(argv[1]);
  double *saved = malloc((size_t)argc * sizeof *saved);
  printf("| graph | nodes | eager traffic / peak B | greedy: traffic x / "
         "peak x | greedy-lowmem | greedy-peak | auto %g s | auto gap | auto "
         "saves vs best heuristic | windows | auto s |\n"
         "|---|---:|---:|---|---|---|---|---:|---:|---:|---:|\n",
         limit);
  for (int i = 2; i < argc; i++)
    saved[i - 2] = row(argv[i], limit);
  qsort(saved, (size_t)argc - 2, sizeof *saved, cmp_double);
  printf("\nMedian traffic saved by auto against the best heuristic plan "
         "meeting the eager peak: %.2f%% (%d graphs; worst %.2f%%).\n",
         100 * saved[(argc - 2) / 2], argc - 2, 100 * saved[0]);
  free(saved);
  return 0;
}
