/*
 * bench_methods.c -- every heuristic on generated graphs of every family,
 * side by side in one run, for BENCHMARKS.md (`make bench`).
 *
 * For each (family, size): the eager plan's traffic and peak, then for
 * greedy, greedy-lowmem and greedy-peak their traffic and peak as ratios
 * to eager, kernels, and time (seconds, this machine, one core).
 */
#include <stdio.h>
#include <stdlib.h>

#include "heuristics/heuristics.h"
#include "model/eval.h"
#include "model/generate.h"
#include "model/util.h"

static void die(const fp_error *err) {
  fprintf(stderr, "bench_methods: %s\n", err->msg);
  exit(1);
}

/* Runs one method; fills m and returns seconds. */
static double run(const fp_graph *g, fp_method method, fp_metrics *m) {
  fp_fusion_params prm;
  fp_error err;
  fp_plan *p = fp_plan_create();
  fp_fusion_params_init(&prm, method);
  double t0 = fp_clock_now();
  if (fp_fuse(g, &prm, p, &err) != FP_OK)
    die(&err);
  double dt = fp_clock_now() - t0;
  if (fp_plan_eval(g, p, m, NULL, &err) != FP_OK)
    die(&err);
  fp_plan_destroy(p);
  return dt;
}

static void row(fp_gen_family fam, int32_t size) {
  fp_gen_params prm;
  fp_graph *g = NULL;
  fp_error err;
  fp_metrics e, m;
  fp_gen_params_init(&prm);
  prm.family = fam;
  prm.size = size;
  if (fp_generate(&prm, &g, &err) != FP_OK)
    die(&err);
  run(g, FP_METHOD_EAGER, &e);
  printf("| %s | %d | %.3g | %.3g |", fp_gen_family_name(fam), (int)size,
         (double)e.traffic_bytes, (double)e.peak_bytes);
  for (int k = FP_METHOD_GREEDY; k < FP_METHOD_COUNT_; k++) {
    double dt = run(g, (fp_method)k, &m);
    printf(" %.3f / %.3f / %d / %.2f |",
           (double)m.traffic_bytes / (double)e.traffic_bytes,
           (double)m.peak_bytes / (double)e.peak_bytes, (int)m.kernels, dt);
  }
  printf("\n");
  fflush(stdout);
  fp_graph_destroy(g);
}

int main(int argc, char **argv) {
  int32_t max = argc > 1 ? atoi(argv[1]) : 100000;
  printf("| family | nodes | eager traffic B | eager peak B | greedy: traffic "
         "x / peak x / kernels / s | greedy-lowmem | greedy-peak |\n"
         "|---|---:|---:|---:|---|---|---|\n");
  for (int32_t n = 1000; n <= max; n *= 10)
    for (int f = 0; f < FP_GEN_FAMILY_COUNT_; f++)
      row((fp_gen_family)f, n);
  return 0;
}
