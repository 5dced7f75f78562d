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
#include "model/json.h"

static const char solve_help[] =
    "usage: fuseplan solve GRAPH [-o PLAN] [--method eager] [--order listed]\n"
    "                      [--peak-limit BYTES|eager|N%] [--json]\n"
    "\n"
    "Makes a fusion + execution-order plan for GRAPH, verifies it, and\n"
    "writes it to PLAN (or stdout with --json).\n"
    "  --method M       eager: every node alone, in listed order (more\n"
    "                   methods arrive with the heuristics and the ILP)\n"
    "  --order O        listed (default)\n"
    "  --peak-limit L   bytes (suffixes KiB, MiB, GiB), 'eager' (default:\n"
    "                   never more than the unfused program), or N% of\n"
    "                   eager's peak; exit 1 if the plan cannot meet it\n"
    "  -o, --output PLAN  plan file (written atomically; .gz compresses)\n"
    "  --json           print the plan file's JSON on stdout\n"
    "  -q, --quiet      no summary line on stderr\n";

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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

static int check_options(const cli_args *a) {
  const char *m = cli_get(a, "method"), *o = cli_get(a, "order");
  if (a->n_pos != 1)
    return cli_usage_error("solve", "expected one GRAPH file");
  if (m && strcmp(m, "eager") != 0)
    return cli_usage_error("solve",
                           "method '%s' is not available in this build "
                           "(available: eager)",
                           m);
  if (o && strcmp(o, "listed") != 0)
    return cli_usage_error("solve",
                           "order '%s' is not available in this build "
                           "(available: listed)",
                           o);
  return 0;
}

/* Builds, times, checks and evaluates the plan. */
static int make_plan(const fp_graph *g, fp_plan *p, fp_metrics *m) {
  fp_error err;
  fp_error_clear(&err);
  double t0 = now_s();
  if (fp_plan_make_eager(p, g, &err) != FP_OK ||
      fp_plan_eval(g, p, m, NULL, &err) != FP_OK)
    return cli_fail(&err);
  fp_solver_info *si = fp_plan_solver(p);
  si->time_s = now_s() - t0;
  si->objective = (double)m->traffic_bytes;
  return 0;
}

static void print_summary(const fp_graph *g, const fp_metrics *m,
                          uint64_t limit, const char *out) {
  char b1[64], b2[64];
  fprintf(stderr,
          "%s: %d nodes -> %d kernels, traffic %s, peak %s (limit "
          "%s)%s%s\n",
          fp_graph_name(g), (int)fp_graph_node_count(g), (int)m->kernels,
          cli_bytes(m->traffic_bytes, b1, sizeof b1),
          cli_bytes(m->peak_bytes, b2, sizeof b2),
          cli_bytes(limit, (char[64]){0}, 64), out ? ", written to " : "",
          out ? out : "");
}

int cmd_solve(int argc, char **argv) {
  cli_opt opts[] = {{"method", 0, true, NULL},     {"order", 0, true, NULL},
                    {"peak-limit", 0, true, NULL}, {"output", 'o', true, NULL},
                    {"json", 0, false, NULL},      {"quiet", 'q', false, NULL}};
  cli_args a = {opts, 6, {0}, 0, false, {0}};
  if (cli_parse(&a, argc, argv) != 0)
    return cli_usage_error("solve", "%s", a.error);
  if (a.help)
    return fputs(solve_help, stdout), EXIT_OK;
  int rc = check_options(&a);
  if (rc)
    return rc;
  fp_graph *g = NULL;
  fp_plan *p = fp_plan_create();
  fp_metrics m;
  fp_error err;
  uint64_t limit;
  char *text = NULL;
  fp_error_clear(&err);
  if (!p)
    return cli_fail(&(fp_error){FP_ENOMEM, "out of memory"});
  if ((rc = cli_load_graph(a.pos[0], &g)) || (rc = make_plan(g, p, &m)))
    goto done;
  /* The eager plan defines the 'eager' limit, so it is evaluated first. */
  if (peak_limit(cli_get(&a, "peak-limit"), m.peak_bytes, &limit) != 0) {
    rc = cli_usage_error("solve", "--peak-limit: expected BYTES, eager or N%%");
    goto done;
  }
  if (m.peak_bytes > limit) {
    fp_bounds lb;
    char b1[64], b2[64], b3[64];
    if (fp_graph_bounds(g, &lb, &err) != FP_OK) {
      rc = cli_fail(&err);
      goto done;
    }
    fprintf(stderr,
            "fuseplan: infeasible: peak limit %s is below the peak of the "
            "best plan found, %s (no plan can go below %s)\n",
            cli_bytes(limit, b1, sizeof b1),
            cli_bytes(m.peak_bytes, b2, sizeof b2),
            cli_bytes(lb.peak_bytes, b3, sizeof b3));
    rc = EXIT_PROBLEM;
    goto done;
  }
  const char *out = cli_get(&a, "output");
  if (!(text = fp_plan_to_json(p, g, &m, 1, &err))) {
    rc = cli_fail(&err);
    goto done;
  }
  if (out && (rc = cli_write_file(out, text)))
    goto done;
  if (cli_get(&a, "json"))
    fputs(text, stdout);
  if (!cli_get(&a, "quiet"))
    print_summary(g, &m, limit, out);
done:
  free(text);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
  return rc;
}
