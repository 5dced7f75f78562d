/*
 * cmd_solve.c -- `fuseplan solve`: make a plan with a heuristic, the ILP
 * or exhaustive enumeration; check it; write it.
 *
 * Whatever the method, the written plan is verified and carries the
 * evaluator's metrics.  Progress of the ILP goes to stderr on a terminal
 * only.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "heuristics/heuristics.h"
#include "model/json.h"
#include "solver/planner.h"
#include "solver/solver.h"

static const char solve_help_head[] =
    "usage: fuseplan solve GRAPH [-o PLAN] [--method M] [options]\n"
    "\n"
    "Makes a fusion + execution-order plan for GRAPH, verifies it, and\n"
    "writes it to PLAN (and/or stdout with --json).\n";

/* The options after the method list (which comes from the planner
 * table). */
static const char solve_help_options[] =
    "  --order O        heuristics: listed | lpmf | bfs | dfs | best |\n"
    "                   inductor (Inductor's own reorder_for_peak_memory);\n"
    "                   default inductor for greedy, best for greedy-lowmem\n"
    "                   and greedy-peak, listed for eager\n"
    "  --peak-limit L   bytes (suffixes KiB, MiB, GiB), 'eager' (the unfused\n"
    "                   program's peak) or N% of eager's peak.  auto,\n"
    "                   greedy-peak, ilp and exhaustive plan under it\n"
    "                   (default eager); the other methods only check it,\n"
    "                   and only when given.\n"
    "                   Exit 1 when no plan meets it.\n"
    "  --objective O    auto/ilp/exhaustive: traffic (default) | peak |\n"
    "                   weighted\n"
    "  --traffic-limit B  auto/ilp/exhaustive: traffic cap\n"
    "  --lambda L       --objective weighted: minimize traffic + L * peak\n"
    "  --time-limit S   auto/ilp: wall-clock seconds for the whole solve (10)\n"
    "  -j, --jobs N     auto: windows solved in parallel (default 1)\n"
    "  --start PLAN     auto/ilp: a plan (e.g. the compiler's own) that joins\n"
    "                   the heuristics as a start; repeatable; the answer is\n"
    "                   never worse than a start that meets the limits.  An\n"
    "                   illegal plan exits 3\n"
    "  --seed S         auto: window placement (default 1); the same seed\n"
    "                   with --jobs 1 gives the same plan when no window is\n"
    "                   cut short by the clock\n"
    "  --window W       ilp: keep each node within W steps of its warm-start\n"
    "                   step (faster, optimal only near it); 'exact' for no\n"
    "                   window; default: exact up to 40 nodes, else 4\n"
    "  --gap G          auto/ilp: the objective counts as done within this\n"
    "                   relative gap to its bound, 0 <= G < 1 (default 0)\n"
    "  --gap2 G         auto/ilp: the same for the second level, the other\n"
    "                   figure among the objective's answers (default\n"
    "                   0.001); both met: the solve stops\n"
    "  --mip-gap G      ilp: GLPK's relative gap on the objective (default\n"
    "                   0; the older form of --gap)\n"
    "  --lp-out F, --mps-out F  ilp: write the model (CPLEX LP / MPS)\n"
    "  --max-fusion-size K  override the graph's max_fusion_size\n"
    "  -o, --output PLAN  plan file (written atomically; .gz compresses)\n"
    "  --json           print the plan file's JSON on stdout\n"
    "  -q, --quiet      no summary or progress on "
    "stderr\n" CLI_INPUT_OPTIONS_HELP;

/* What the command line asks for. */
typedef struct request {
  const fp_planner *pl; /* the method */
  fp_plan_request req;
  const char *peak_arg;
} request;

/* Prints the method list of --help: a row per planner, its help lines
 * indented under its name. */
static void print_methods(FILE *f) {
  for (int32_t i = 0; i < fp_planner_count(); i++) {
    const fp_planner *pl = fp_planner_at(i);
    fprintf(f,
            "%s%s%s: ", i == 0 ? "  --method M       " : "                   ",
            pl->name, pl == fp_planner_default() ? " (default)" : "");
    for (const char *c = pl->help; *c; c++)
      if (*c == '\n')
        fputs("\n                     ", f);
      else
        fputc(*c, f);
    fputc('\n', f);
  }
}

/* Prints --help: the text around the method list, and the list. */
static void print_help(void) {
  fputs(solve_help_head, stdout);
  print_methods(stdout);
  fputs(solve_help_options, stdout);
}

/* 0, or a usage error naming the methods that take the first option
 * given that pl does not accept (in the table's option order). */
static int reject(const cli_args *a, const fp_planner *pl) {
  for (int i = 0; i < FP_PLANNER_OPT_COUNT_; i++) {
    char who[256];
    const char *name = fp_planner_option_name((fp_planner_option)i);
    if (fp_planner_accepts(pl, (fp_planner_option)i) || !cli_get(a, name))
      continue;
    return cli_usage_error("solve", "--%s applies to %s", name,
                           cli_methods_taking(i, who, sizeof who));
  }
  return 0;
}

/* The values of --order and --objective, from the X-macro tables their
 * parsers use, so that the unknown-value messages list exactly what is
 * accepted (tests/cli/test_values.sh compares them with the docs). */
#define NAME_(name, str) str,
static const char *const order_names[] = {FP_ORDER_MAP(NAME_) NULL};
static const char *const objective_names[] = {FP_OBJECTIVE_MAP(NAME_) NULL};
#undef NAME_

/* Joins the NULL-terminated `names` into buf with ", "; returns buf, cut
 * at n bytes. */
static const char *names_join(const char *const *names, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; names[i] && len < n; i++) {
    int r = snprintf(buf + len, n - len, "%s%s", i ? ", " : "", names[i]);
    len += r > 0 ? (size_t)r : 0;
  }
  return buf;
}

/* Fills the ILP parameters and the traffic limit from the options; 0 or a
 * usage error. */
static int read_ilp_options(const cli_args *a, fp_ilp_params *prm,
                            fp_limits *lim) {
  const char *o = cli_get(a, "objective"), *w = cli_get(a, "window");
  const char *tl = cli_get(a, "traffic-limit"), *t = cli_get(a, "time-limit");
  const char *l = cli_get(a, "lambda"), *gp = cli_get(a, "mip-gap");
  uint64_t v;
  int oi = o ? fp_objective_parse(o) : FP_OBJECTIVE_TRAFFIC;
  if (oi < 0) {
    char all[128];
    return cli_usage_error("solve", "unknown objective '%s' (%s)", o,
                           names_join(objective_names, all, sizeof all));
  }
  prm->objective = (fp_objective)oi;
  if (tl && cli_parse_bytes(tl, &lim->traffic) != 0)
    return cli_usage_error("solve", "--traffic-limit: expected BYTES");
  if (t && cli_parse_seconds(t, &prm->time_limit_s) != 0)
    return cli_usage_error("solve", "--time-limit: expected seconds > 0");
  char *end = NULL;
  if (l && ((prm->lambda = strtod(l, &end)),
            *end || !(prm->lambda >= 0) || !isfinite(prm->lambda)))
    return cli_usage_error("solve", "--lambda: expected a number >= 0");
  if (gp && (sscanf(gp, "%lf", &prm->mip_gap) != 1 || !(prm->mip_gap >= 0)))
    return cli_usage_error("solve", "--mip-gap: expected a number >= 0");
  const char *g1 = cli_get(a, "gap"), *g2 = cli_get(a, "gap2");
  if (g1 && cli_parse_gap(g1, &prm->gap) != 0)
    return cli_usage_error("solve", "--gap: expected a number >= 0 and < 1");
  if (g2 && cli_parse_gap(g2, &prm->gap2) != 0)
    return cli_usage_error("solve", "--gap2: expected a number >= 0 and < 1");
  if (w && strcmp(w, "exact") == 0)
    prm->window = FP_ILP_WINDOW_EXACT;
  else if (w && cli_parse_uint(w, 1000000, &v) != 0)
    return cli_usage_error("solve", "--window: expected a step count or "
                                    "'exact'");
  else if (w)
    prm->window = (int32_t)v;
  prm->lp_out = cli_get(a, "lp-out");
  prm->mps_out = cli_get(a, "mps-out");
  const char *j = cli_get(a, "jobs"), *sd = cli_get(a, "seed");
  if (j && cli_parse_uint(j, FP_AUTO_MAX_JOBS, &v) != 0)
    return cli_usage_error("solve", "--jobs: expected 1..%d", FP_AUTO_MAX_JOBS);
  if (j && v < 1)
    return cli_usage_error("solve", "--jobs: expected 1..%d", FP_AUTO_MAX_JOBS);
  if (j)
    prm->jobs = (int32_t)v;
  if (sd && cli_parse_uint(sd, UINT64_MAX, &prm->seed) != 0)
    return cli_usage_error("solve", "--seed: expected an integer >= 0");
  return 0;
}

/* Fills the request from the options; 0 or a usage error. */
static int read_options(const cli_args *a, request *rq) {
  const char *o = cli_get(a, "order"), *k = cli_get(a, "max-fusion-size");
  const char *name = cli_get(a, "method");
  uint64_t kv = 0;
  if (a->n_pos != 1)
    return cli_usage_error("solve", "expected one GRAPH file");
  rq->pl = name ? fp_planner_find(name) : fp_planner_default();
  if (!rq->pl) {
    char all[256];
    return cli_usage_error("solve", "unknown method '%s' (%s)", name,
                           cli_methods_join(0, ", ", ", ", all, sizeof all));
  }
  fp_plan_request_init(&rq->req, rq->pl);
  int oi = o ? fp_order_parse(o) : (int)rq->req.fus.order;
  if (oi < 0) {
    char all[128];
    return cli_usage_error("solve", "unknown order '%s' (%s)", o,
                           names_join(order_names, all, sizeof all));
  }
  rq->req.fus.order = (fp_order)oi;
  if (k && (cli_parse_uint(k, INT32_MAX, &kv) != 0 || kv < 1))
    return cli_usage_error("solve", "--max-fusion-size: expected >= 1");
  /* Only tightening is allowed: the plan file does not record K, and
   * verify/eval hold plans to the graph's own max_fusion_size. */
  rq->req.limits.max_fusion_size = (int32_t)kv;
  int rc = reject(a, rq->pl);
  if (rc)
    return rc;
  rq->peak_arg = cli_get(a, "peak-limit");
  /* only the accepted options are set */
  return read_ilp_options(a, &rq->req.ilp, &rq->req.limits);
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

/* The live progress line of the ILP and auto (stderr is a terminal). */
static void progress(const fp_ilp_progress *p, void *ctx) {
  char gap[32] = "?", b1[64], b2[64];
  (void)ctx;
  if (!isnan(p->gap))
    snprintf(gap, sizeof gap, "%.2f%%", 100 * p->gap);
  if (p->traffic_bytes || p->peak_bytes) /* auto */
    fprintf(stderr, "\r  %6.1f s  traffic %s  peak %s  gap %s  windows %lld   ",
            p->elapsed_s, cli_bytes(p->traffic_bytes, b1, sizeof b1),
            cli_bytes(p->peak_bytes, b2, sizeof b2), gap, (long long)p->nodes);
  else
    fprintf(stderr,
            "\r  %6.1f s  incumbent %.6g  bound %.6g  gap %s  nodes %lld   ",
            p->elapsed_s, p->incumbent, p->bound, gap, (long long)p->nodes);
  fflush(stderr);
}

/* One line on stderr; `limit` is printed only when it was enforced
 * (UINT64_MAX otherwise). */
static void print_summary(const fp_graph *g, const fp_plan *p,
                          const fp_metrics *m, uint64_t limit,
                          const char *out) {
  char b1[64], b2[64], b3[64], name[CLI_SAFE_MAX];
  const fp_solver_info *si = fp_plan_solver_const(p);
  fprintf(stderr, "%s: %s (%s): %d nodes -> %d kernels, traffic %s, peak %s",
          cli_safe(fp_graph_name(g), name, sizeof name), si->method, si->status,
          (int)fp_graph_node_count(g), (int)m->kernels,
          cli_bytes(m->traffic_bytes, b1, sizeof b1),
          cli_bytes(m->peak_bytes, b2, sizeof b2));
  if (limit != UINT64_MAX)
    fprintf(stderr, " (limit %s)", cli_bytes(limit, b3, sizeof b3));
  fprintf(stderr, ", %.3f s", si->time_s);
  const fp_planner *by = fp_planner_find(si->method);
  bool anytime = by && (by->flags & FP_PLANNER_ANYTIME);
  if (!isnan(si->gap) && anytime)
    fprintf(stderr, ", gap %.3f%%", 100 * si->gap);
  if (!isnan(si->gap2) && anytime) /* the second level's */
    fprintf(stderr, ", gap2 %.4f%%", 100 * si->gap2);
  if (si->stop_reason[0] && anytime)
    fprintf(stderr, ", stopped: %s", si->stop_reason);
  fprintf(stderr, "%s%s\n", out ? ", written to " : "", out ? out : "");
}

/* Says why the limit cannot be met, with the lower bound for context;
 * returns EXIT_PROBLEM. */
static int infeasible(const fp_graph *g, const char *why) {
  fp_bounds lb;
  fp_error err;
  char b1[64], safe[CLI_SAFE_MAX];
  if (fp_graph_bounds(g, &lb, &err) != FP_OK)
    return cli_fail(&err);
  fprintf(stderr, "fuseplan: infeasible: %s; no plan can go below %s\n",
          cli_safe(why, safe, sizeof safe),
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

/* Runs the method; FP_OK, FP_EINFEASIBLE (err says why) or an error.
 * Anytime methods get the progress line (when `show`) and stop on SIGINT
 * or SIGTERM with their best plan. */
static fp_status run_method(const fp_graph *g, request *rq, bool show,
                            fp_plan *p, fp_metrics *m, fp_error *err) {
  if (!(rq->pl->flags & FP_PLANNER_ANYTIME))
    return fp_planner_run(rq->pl, g, &rq->req, p, m, err);
  if (show)
    rq->req.ilp.progress = progress;
  cli_trap trap;
  cli_trap_interrupts(&trap);
  rq->req.ilp.cancel = &cli_interrupted;
  fp_status st = fp_planner_run(rq->pl, g, &rq->req, p, m, err);
  cli_untrap_interrupts(&trap);
  if (show)
    fputc('\n', stderr);
  return st;
}

int cmd_solve(int argc, char **argv) {
  cli_opt opts[] = {
      {"method", 0, true, NULL},        {"order", 0, true, NULL},
      {"peak-limit", 0, true, NULL},    {"max-fusion-size", 0, true, NULL},
      {"output", 'o', true, NULL},      {"json", 0, false, NULL},
      {"quiet", 'q', false, NULL},      {"objective", 0, true, NULL},
      {"traffic-limit", 0, true, NULL}, {"lambda", 0, true, NULL},
      {"time-limit", 0, true, NULL},    {"window", 0, true, NULL},
      {"mip-gap", 0, true, NULL},       {"gap", 0, true, NULL},
      {"gap2", 0, true, NULL},          {"lp-out", 0, true, NULL},
      {"mps-out", 0, true, NULL},       {"jobs", 'j', true, NULL},
      {"seed", 0, true, NULL},          {"start", 0, true, NULL}};
  cli_args a = {
      .opts = opts, .n_opts = sizeof opts / sizeof *opts, .inputs = true};
  request rq;
  if (cli_parse(&a, argc, argv) != 0)
    return cli_usage_error("solve", "%s", a.error);
  if (a.help)
    return print_help(), EXIT_OK;
  int rc = read_options(&a, &rq);
  if (rc)
    return rc;
  fp_graph *g = NULL;
  fp_plan *p = fp_plan_create();
  fp_metrics m, e;
  fp_error err;
  fp_peak_spec peak = {FP_PEAK_EAGER, 0}; /* without --peak-limit */
  uint64_t limit;
  cli_starts starts = {.n = 0};
  fp_error_clear(&err);
  if (!p)
    return cli_fail(&(fp_error){FP_ENOMEM, "out of memory"});
  if ((rc = cli_load_graph(a.pos[0], &g)) || (rc = eager_metrics(g, &e)))
    goto done;
  if (rq.req.limits.max_fusion_size > fp_graph_max_fusion_size(g)) {
    rc = cli_usage_error("solve",
                         "--max-fusion-size %d is above the graph's %d (it "
                         "can only be lowered)",
                         (int)rq.req.limits.max_fusion_size,
                         (int)fp_graph_max_fusion_size(g));
    goto done;
  }
  if ((rq.peak_arg &&
       fp_limits_parse_peak(rq.peak_arg, &peak, NULL) != FP_OK) ||
      fp_limits_resolve_peak(&peak, e.peak_bytes, &limit, NULL) != FP_OK) {
    rc = cli_usage_error("solve", "--peak-limit: expected BYTES, eager or N%%");
    goto done;
  }
  rq.req.limits.peak = limit;
  if ((rc = cli_load_starts(&a, g, rq.req.limits.max_fusion_size, &starts)))
    goto done;
  rq.req.ilp.starts = (const fp_plan *const *)starts.plans;
  rq.req.ilp.n_starts = starts.n;
  bool show = !cli_get(&a, "quiet") && isatty(2);
  fp_status st = run_method(g, &rq, show, p, &m, &err);
  if (st == FP_EINFEASIBLE) {
    rc = infeasible(g, err.msg);
    goto done;
  }
  if (st == FP_EIO) { /* writing the model failed: an output error */
    fprintf(stderr, "fuseplan: %s\n", err.msg);
    rc = EXIT_INTERNAL;
    goto done;
  }
  if (st == FP_ELIMIT &&
      (rq.pl->flags & FP_PLANNER_EXACT)) { /* exhaustive on a big graph */
    rc = cli_usage_error("solve", "%s", err.msg);
    goto done;
  }
  if (st != FP_OK) {
    rc = cli_fail(&err);
    goto done;
  }
  bool enforced = rq.peak_arg || (rq.pl->flags & FP_PLANNER_PEAK_LIMITED);
  if (enforced && m.peak_bytes > limit) {
    char why[160], b1[64], b2[64];
    snprintf(why, sizeof why, "the %s plan's peak %s is above the limit %s",
             rq.pl->name, cli_bytes(m.peak_bytes, b1, sizeof b1),
             cli_bytes(limit, b2, sizeof b2));
    rc = infeasible(g, why);
    goto done;
  }
  rc = emit(&a, g, p, &m, enforced ? limit : UINT64_MAX);
done:
  cli_starts_free(&starts);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
  return rc;
}
