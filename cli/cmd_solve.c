/*
 * cmd_solve.c -- `fuseplan solve`: make a plan, check it, write it.
 *
 * Methods arrive with their modules; today the eager plan (every node
 * alone, listed order) is the one available.  Whatever the method, the
 * written plan is verified and carries the evaluator's metrics.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "heuristics/heuristics.h"
#include "model/json.h"

static const char solve_help[] =
    "usage: fuseplan solve GRAPH [-o PLAN] [--method M] [--order O]\n"
    "                      [--peak-limit BYTES|eager|N%] [--max-fusion-size "
    "K]\n"
    "                      [--json] [-q]\n"
    "\n"
    "Makes a fusion + execution-order plan for GRAPH, verifies it, and\n"
    "writes it to PLAN (and/or stdout with --json).\n"
    "  --method M       greedy-peak (default): greedy fusion that refuses any\n"
    "                     fusion raising the peak above the limit\n"
    "                   greedy: PyTorch Inductor's greedy fusion (vertical +\n"
    "                     horizontal, max_fusion_size, no cycles), then its\n"
    "                     peak-memory reorder\n"
    "                   greedy-lowmem: greedy without horizontal fusion\n"
    "                   eager: every node alone, listed order\n"
    "  --order O        listed | lpmf | bfs | dfs | best: order of the groups\n"
    "                   (default: best for the greedy methods, listed for\n"
    "                   eager; best keeps the lowest peak of the four)\n"
    "  --peak-limit L   bytes (suffixes KiB, MiB, GiB), 'eager' (the unfused\n"
    "                   program's peak), or N% of eager's peak.  greedy-peak\n"
    "                   plans under it (default eager); for the other methods\n"
    "                   it is only checked, and only when given.  Exit 1 when\n"
    "                   the plan cannot meet it.\n"
    "  --max-fusion-size K  override the graph's max_fusion_size\n"
    "  -o, --output PLAN  plan file (written atomically; .gz compresses)\n"
    "  --json           print the plan file's JSON on stdout\n"
    "  -q, --quiet      no summary line on stderr\n";

/* Resolves --peak-limit against the eager peak; 0 or -1 for bad syntax. */
static int peak_limit(const char *s, uint64_t eager_peak, uint64_t *out) {
  size_t n = s ? strlen(s) : 0;
  uint64_t pct;
  if (!s || strcmp(s, "eager") == 0) {
    *out = eager_peak;
    return 0;
  }
  if (n > 1 && s[n - 1] == '%') {
    char buf[32];
    if (n >= sizeof buf)
      return -1;
    memcpy(buf, s, n - 1);
    buf[n - 1] = '\0';
    if (cli_parse_uint(buf, 100000, &pct) != 0)
      return -1;
    /* floor(eager * pct / 100) in 64 bits: split eager = 100q + r. */
    uint64_t q = eager_peak / 100, r = eager_peak % 100;
    *out = q > (UINT64_MAX - r * pct / 100) / (pct ? pct : 1)
               ? UINT64_MAX /* saturate: no graph holds that much */
               : q * pct + r * pct / 100;
    return 0;
  }
  return cli_parse_bytes(s, out);
}

/* Fills the fusion parameters from the options; 0 or a usage error. */
static int read_options(const cli_args *a, fp_fusion_params *prm) {
  const char *m = cli_get(a, "method"), *o = cli_get(a, "order");
  const char *k = cli_get(a, "max-fusion-size");
  uint64_t kv;
  if (a->n_pos != 1)
    return cli_usage_error("solve", "expected one GRAPH file");
  int mi = fp_method_parse(m ? m : "greedy-peak");
  if (mi < 0)
    return cli_usage_error("solve",
                           "unknown method '%s' (eager, greedy, greedy-lowmem, "
                           "greedy-peak)",
                           m);
  fp_fusion_params_init(prm, (fp_method)mi);
  if (o) {
    int oi = fp_order_parse(o);
    if (oi < 0)
      return cli_usage_error(
          "solve", "unknown order '%s' (listed, lpmf, bfs, dfs, best)", o);
    prm->order = (fp_order)oi;
  }
  if (k) {
    if (cli_parse_uint(k, INT32_MAX, &kv) != 0 || kv < 1)
      return cli_usage_error("solve", "--max-fusion-size: expected >= 1");
    prm->max_fusion_size = (int32_t)kv;
  }
  return 0;
}

/* The eager plan's figures: they define the 'eager' peak limit. */
static int eager_metrics(const fp_graph *g, fp_metrics *m) {
  fp_error err;
  fp_plan *p = fp_plan_create();
  fp_error_clear(&err);
  fp_status st = p ? fp_plan_make_eager(p, g, &err)
                   : fp_error_set(&err, FP_ENOMEM, "out of memory");
  if (st == FP_OK)
    st = fp_plan_eval(g, p, m, NULL, &err);
  fp_plan_destroy(p);
  return st == FP_OK ? 0 : cli_fail(&err);
}

static void print_summary(const fp_graph *g, const fp_plan *p,
                          const fp_metrics *m, uint64_t limit,
                          const char *out) {
  char b1[64], b2[64], b3[64];
  const fp_solver_info *si = fp_plan_solver_const(p);
  fprintf(stderr,
          "%s: %s: %d nodes -> %d kernels, traffic %s, peak %s (limit %s), "
          "%.3f s%s%s\n",
          fp_graph_name(g), si->method, (int)fp_graph_node_count(g),
          (int)m->kernels, cli_bytes(m->traffic_bytes, b1, sizeof b1),
          cli_bytes(m->peak_bytes, b2, sizeof b2),
          cli_bytes(limit, b3, sizeof b3), si->time_s,
          out ? ", written to " : "", out ? out : "");
}

/* Says why the limit cannot be met, with the lower bound for context;
 * returns EXIT_PROBLEM. */
static int infeasible(const fp_graph *g, const char *why) {
  fp_bounds lb;
  fp_error err;
  char b1[64];
  if (fp_graph_bounds(g, &lb, &err) != FP_OK)
    return cli_fail(&err);
  fprintf(stderr, "fuseplan: infeasible: %s; no plan can go below %s\n", why,
          cli_bytes(lb.peak_bytes, b1, sizeof b1));
  return EXIT_PROBLEM;
}

/* Writes the plan where asked; 0 or an exit code. */
static int emit(const cli_args *a, const fp_graph *g, const fp_plan *p,
                const fp_metrics *m, uint64_t limit) {
  fp_error err;
  const char *out = cli_get(a, "output");
  char *text = fp_plan_to_json(p, g, m, 1, &err);
  int rc = 0;
  if (!text)
    return cli_fail(&err);
  if (out)
    rc = cli_write_file(out, text);
  if (!rc && cli_get(a, "json"))
    fputs(text, stdout);
  if (!rc && !cli_get(a, "quiet"))
    print_summary(g, p, m, limit, out);
  free(text);
  return rc;
}

int cmd_solve(int argc, char **argv) {
  cli_opt opts[] = {
      {"method", 0, true, NULL},     {"order", 0, true, NULL},
      {"peak-limit", 0, true, NULL}, {"max-fusion-size", 0, true, NULL},
      {"output", 'o', true, NULL},   {"json", 0, false, NULL},
      {"quiet", 'q', false, NULL}};
  cli_args a = {opts, 7, {0}, 0, false, {0}};
  fp_fusion_params prm;
  if (cli_parse(&a, argc, argv) != 0)
    return cli_usage_error("solve", "%s", a.error);
  if (a.help)
    return fputs(solve_help, stdout), EXIT_OK;
  int rc = read_options(&a, &prm);
  if (rc)
    return rc;
  fp_graph *g = NULL;
  fp_plan *p = fp_plan_create();
  fp_metrics m, e;
  uint64_t limit;
  const char *pl = cli_get(&a, "peak-limit");
  if (!p)
    return cli_fail(&(fp_error){FP_ENOMEM, "out of memory"});
  if ((rc = cli_load_graph(a.pos[0], &g)) || (rc = eager_metrics(g, &e)))
    goto done;
  if (peak_limit(pl, e.peak_bytes, &limit) != 0) {
    rc = cli_usage_error("solve", "--peak-limit: expected BYTES, eager or N%%");
    goto done;
  }
  prm.peak_limit = limit ? limit : 1; /* 0 would mean "eager" */
  fp_error err;
  fp_error_clear(&err);
  fp_status st = fp_fuse(g, &prm, p, &err);
  if (st == FP_EINFEASIBLE) {
    rc = infeasible(g, err.msg);
    goto done;
  }
  if (st != FP_OK ||
      fp_plan_eval_k(g, p, prm.max_fusion_size, &m, NULL, &err) != FP_OK) {
    rc = cli_fail(&err);
    goto done;
  }
  if ((pl || prm.method == FP_METHOD_GREEDY_PEAK) && m.peak_bytes > limit) {
    char why[160], b1[64], b2[64];
    snprintf(why, sizeof why, "the %s plan's peak %s is above the limit %s",
             fp_plan_solver_const(p)->method,
             cli_bytes(m.peak_bytes, b1, sizeof b1),
             cli_bytes(limit, b2, sizeof b2));
    rc = infeasible(g, why);
    goto done;
  }
  rc = emit(&a, g, p, &m, limit);
done:
  fp_plan_destroy(p);
  fp_graph_destroy(g);
  return rc;
}
