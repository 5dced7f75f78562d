/*
 * bench_eval.c -- load + evaluate time of generated graphs, for
 * BENCHMARKS.md (`make bench`).  Not a test: it asserts nothing about time.
 *
 * For each size: generate (transformer and random families), write the
 * JSON to a temporary file, then time (best of `reps`) loading the file
 * (read + parse + validate + index) and evaluating the eager plan (check +
 * traffic + peak), and report ns per node so that sizes compare directly.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/eval.h"
#include "model/generate.h"
#include "model/io.h"
#include "model/json.h"
#include "model/util.h"

static void die(const fp_error *err) {
  fprintf(stderr, "bench_eval: %s\n", err->msg);
  exit(1);
}

/* Best-of-reps seconds to load `path`; leaves the last graph in *out. */
static double time_load(const char *path, int reps, fp_graph **out) {
  double best = 1e30;
  fp_error err;
  for (int r = 0; r < reps; r++) {
    fp_graph *g = NULL;
    double t0 = fp_clock_now();
    if (fp_graph_load_file(path, &g, &err) != FP_OK)
      die(&err);
    double dt = fp_clock_now() - t0;
    best = dt < best ? dt : best;
    if (r + 1 < reps)
      fp_graph_destroy(g);
    else
      *out = g;
  }
  return best;
}

/* Best-of-reps seconds to build and evaluate the eager plan. */
static double time_eval(const fp_graph *g, int reps, fp_metrics *m) {
  double best = 1e30;
  fp_error err;
  fp_plan *p = fp_plan_create();
  for (int r = 0; r < reps; r++) {
    double t0 = fp_clock_now();
    if (fp_plan_make_eager(p, g, &err) != FP_OK ||
        fp_plan_eval(g, p, m, NULL, &err) != FP_OK)
      die(&err);
    double dt = fp_clock_now() - t0;
    best = dt < best ? dt : best;
  }
  fp_plan_destroy(p);
  return best;
}

static void run(fp_gen_family fam, int32_t size, const char *dir, int reps) {
  fp_gen_params prm;
  fp_graph *g = NULL, *h = NULL;
  fp_error err;
  fp_metrics m;
  char path[512];
  fp_gen_params_init(&prm);
  prm.family = fam;
  prm.size = size;
  double t0 = fp_clock_now();
  if (fp_generate(&prm, &g, &err) != FP_OK)
    die(&err);
  double gen_s = fp_clock_now() - t0;
  snprintf(path, sizeof path, "%s/g%d.json", dir, (int)size);
  if (fp_graph_save_file(g, path, &err) != FP_OK)
    die(&err);
  FILE *f = fopen(path, "rb");
  fseek(f, 0, SEEK_END);
  double mb = (double)ftell(f) / 1048576.0;
  fclose(f);
  double load_s = time_load(path, reps, &h);
  double eval_s = time_eval(h, reps, &m);
  int32_t n = fp_graph_node_count(h);
  printf("| %s | %d | %d | %.1f | %.3f | %.3f | %.3f | %.3f | %.0f | %.0f |\n",
         fp_gen_family_name(fam), (int)n, (int)fp_graph_buffer_count(h), mb,
         gen_s, load_s, eval_s, load_s + eval_s, 1e9 * load_s / n,
         1e9 * eval_s / n);
  fflush(stdout);
  unlink(path);
  fp_graph_destroy(g);
  fp_graph_destroy(h);
}

int main(int argc, char **argv) {
  int32_t max = argc > 1 ? atoi(argv[1]) : 1000000;
  char dir[] = "/tmp/fp_bench_XXXXXX";
  if (!mkdtemp(dir))
    return 1;
  printf("| family | nodes | buffers | JSON MiB | generate s | load s | "
         "eval s | load+eval s | load ns/node | eval ns/node |\n"
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int32_t n = 10000; n <= max; n *= 10) {
    run(FP_GEN_TRANSFORMER, n, dir, n >= 1000000 ? 2 : 3);
    run(FP_GEN_RANDOM, n, dir, n >= 1000000 ? 2 : 3);
  }
  rmdir(dir);
  return 0;
}
