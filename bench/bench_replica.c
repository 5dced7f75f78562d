/*
 * bench_replica.c -- is `greedy` a faithful replica of Inductor?  For
 * BENCHMARKS.md (`make bench`) and tests/cli/test_replica.sh.
 *
 * Usage: bench_replica GRAPH...   where each GRAPH.json.gz has Inductor's
 * plan GRAPH.inductor.plan.json.gz beside it (tools/export_inductor.py).
 *
 * Per graph, one markdown row: nodes; Inductor's kernels; whether greedy's
 * groups equal Inductor's (as sets of node sets); how many of Inductor's
 * groups greedy does not form; whether the order is also equal; the first
 * difference (Inductor's first group, in its order, that greedy lacks, and
 * greedy's group holding that group's first node; or the first step where
 * the orders part); and whether `--order inductor` applied to Inductor's
 * own groups (in greedy's listed order) gives Inductor's order.  The last
 * line counts the three yes columns.  Exit 1 on a load or solve failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heuristics/heuristics.h"
#include "model/eval.h"
#include "model/json.h"

static void die(const char *what, const fp_error *err) {
  fprintf(stderr, "bench_replica: %s: %s\n", what, err->msg);
  exit(1);
}

/* node -> the index of its group in p (n entries). */
static int32_t *group_of(const fp_graph *g, const fp_plan *p) {
  int32_t *gid = malloc(((size_t)fp_graph_node_count(g) + 1) * sizeof *gid);
  if (!gid)
    exit(1);
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, t, &len);
    for (int32_t k = 0; k < len; k++)
      gid[grp[k]] = t;
  }
  return gid;
}

/* Whether group t of a (through a's gid) is exactly a group of b: every
 * member in one group of b of the same size.  *where gets that group. */
static bool same_group(const fp_plan *a, int32_t t, const fp_plan *b,
                       const int32_t *bgid, int32_t *where) {
  int32_t len, blen;
  const int32_t *grp = fp_plan_group(a, t, &len);
  *where = bgid[grp[0]];
  fp_plan_group(b, *where, &blen);
  if (blen != len)
    return false;
  for (int32_t k = 1; k < len; k++)
    if (bgid[grp[k]] != *where)
      return false;
  return true;
}

static void print_group(const fp_graph *g, const fp_plan *p, int32_t t) {
  int32_t len;
  const int32_t *grp = fp_plan_group(p, t, &len);
  printf("[");
  for (int32_t k = 0; k < len && k < 4; k++)
    printf("%s%s", k ? " " : "", fp_graph_node(g, grp[k])->name);
  printf("%s]", len > 4 ? " ..." : "");
}

/* Step of the first difference of order between plans with equal groups,
 * or -1. */
static int32_t first_order_diff(const fp_plan *a, const int32_t *bgid) {
  for (int32_t t = 0; t < fp_plan_group_count(a); t++) {
    int32_t len;
    if (bgid[fp_plan_group(a, t, &len)[0]] != t)
      return t;
  }
  return -1;
}

/* Inductor's groups in greedy's listed order, then `--order inductor`:
 * whether that gives Inductor's order. */
static bool reorder_matches(const fp_graph *g, const fp_plan *ind,
                            const int32_t *igid) {
  fp_plan *p = fp_plan_create();
  fp_error err;
  if (!p || fp_plan_copy(p, ind, &err) != FP_OK ||
      fp_plan_reorder(g, p, FP_ORDER_LISTED, NULL, &err) != FP_OK ||
      fp_plan_reorder(g, p, FP_ORDER_INDUCTOR, NULL, &err) != FP_OK)
    die("reorder", &err);
  bool same = first_order_diff(p, igid) < 0;
  fp_plan_destroy(p);
  return same;
}

/* One row; adds to the three counters. */
static void row(const char *path, int *n_groups, int *n_order, int *n_reorder) {
  char plan_path[4096];
  size_t len = strlen(path);
  if (len < 8 || strcmp(path + len - 8, ".json.gz") != 0 ||
      len + 32 > sizeof plan_path) {
    fprintf(stderr, "bench_replica: %s: expected NAME.json.gz\n", path);
    exit(2);
  }
  snprintf(plan_path, sizeof plan_path, "%.*s.inductor.plan.json.gz",
           (int)(len - 8), path);
  fp_graph *g = NULL;
  fp_plan *ind = NULL, *gr = fp_plan_create();
  fp_error err;
  fp_fusion_params prm;
  if (fp_graph_load_file(path, &g, &err) != FP_OK)
    die(path, &err);
  if (fp_plan_load_file(plan_path, g, &ind, &err) != FP_OK)
    die(plan_path, &err);
  fp_fusion_params_init(&prm, FP_METHOD_GREEDY);
  if (!gr || fp_fuse(g, &prm, gr, &err) != FP_OK)
    die("greedy", &err);
  int32_t *ggid = group_of(g, gr), *igid = group_of(g, ind);
  int32_t missing = 0, first = -1, where = -1, w;
  for (int32_t t = 0; t < fp_plan_group_count(ind); t++)
    if (!same_group(ind, t, gr, ggid, &w) && missing++ == 0)
      first = t, where = w;
  const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  printf("| %.*s | %d | %d | %s | %d | ", (int)(strlen(name) - 8), name,
         (int)fp_graph_node_count(g), (int)fp_plan_group_count(ind),
         missing ? "no" : "yes", (int)missing);
  int32_t step = missing ? -1 : first_order_diff(ind, ggid);
  if (missing) {
    printf("no | Inductor ");
    print_group(g, ind, first);
    printf(", greedy ");
    print_group(g, gr, where);
  } else if (step >= 0) {
    printf("no | step %d: Inductor ", (int)step);
    print_group(g, ind, step);
    printf(", greedy ");
    print_group(g, gr, step);
  } else {
    printf("yes | ");
  }
  bool re = reorder_matches(g, ind, igid);
  printf(" | %s |\n", re ? "yes" : "no");
  *n_groups += !missing;
  *n_order += !missing && step < 0;
  *n_reorder += re;
  free(ggid);
  free(igid);
  fp_plan_destroy(gr);
  fp_plan_destroy(ind);
  fp_graph_destroy(g);
}

int main(int argc, char **argv) {
  int n_groups = 0, n_order = 0, n_reorder = 0;
  printf("| graph | nodes | Inductor kernels | same groups | Inductor groups "
         "greedy lacks | same order | first difference | --order inductor "
         "on Inductor's groups gives its order |\n");
  printf("|---|---:|---:|---|---:|---|---|---|\n");
  for (int i = 1; i < argc; i++)
    row(argv[i], &n_groups, &n_order, &n_reorder);
  printf("\ngroups equal on %d of %d graphs; groups and order on %d of %d; "
         "`--order inductor` gives Inductor's order from its groups on %d of "
         "%d.\n",
         n_groups, argc - 1, n_order, argc - 1, n_reorder, argc - 1);
  return 0;
}
