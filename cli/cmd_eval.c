/*
 * cmd_eval.c -- `fuseplan eval`, `verify` and `compare`: the evaluator's
 * figures for plan files, legality, and side-by-side tables.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/figures.h"
#include "model/io.h"
#include "model/json.h"

static const char eval_help[] =
    "usage: fuseplan eval GRAPH PLAN [--json] [--timeline FILE.csv|.svg]\n"
    "\n"
    "Checks PLAN against GRAPH and prints its memory traffic (bytes read\n"
    "and written by kernels), peak live memory, kernels, and both as a\n"
    "ratio to the eager plan.  Exit 1 if the plan is illegal.\n"
    "  --json             one JSON object on stdout\n"
    "  --timeline FILE    per-step live memory, reads and writes: CSV, or an\n"
    "                     SVG plot when FILE ends in .svg (the peak marked,\n"
    "                     a tooltip naming the kernel at each "
    "step)\n" CLI_INPUT_OPTIONS_HELP;

static const char verify_help[] =
    "usage: fuseplan verify GRAPH PLAN\n"
    "\n"
    "Exit 0 when PLAN is legal for GRAPH (every node exactly once, legal\n"
    "fusions, max_fusion_size, dependency order); exit 1 naming the first\n"
    "violation otherwise.  When the plan file states \"metrics\"\n"
    "(traffic_bytes, peak_bytes, kernels), they must equal the evaluator's\n"
    "figures, to the byte.\n" CLI_INPUT_OPTIONS_HELP;

static const char compare_help[] =
    "usage: fuseplan compare GRAPH PLAN... [--json] [--timeline FILE.svg]\n"
    "\n"
    "One row per plan (and the eager plan first): kernels, traffic, peak,\n"
    "and their ratios to eager.  Exit 1 if any plan is illegal.\n"
    "  --json             a JSON array on stdout instead of the table\n"
    "  --timeline FILE    an SVG plot of every legal plan's live memory at\n"
    "                     each step, overlaid, each peak marked, each plan\n"
    "                     named by its solver.method (by its file when two\n"
    "                     plans state the same one)\n" CLI_INPUT_OPTIONS_HELP;

/* Evaluates the eager plan of g. */
static int eval_eager(const fp_graph *g, fp_metrics *m) {
  fp_error err;
  fp_error_clear(&err);
  fp_plan *p = fp_plan_create();
  if (!p)
    return cli_fail(&(fp_error){FP_ENOMEM, "out of memory"});
  fp_status st = fp_plan_make_eager(p, g, &err);
  if (st == FP_OK)
    st = fp_plan_eval(g, p, m, NULL, &err);
  fp_plan_destroy(p);
  return st == FP_OK ? 0 : cli_fail(&err);
}

static double ratio(uint64_t a, uint64_t b) {
  return b ? (double)a / (double)b : 1.0;
}

/* The figures of step t of the timeline ctx (an fp_step array), as CSV
 * fields. */
static void timeline_row(FILE *f, int32_t t, int32_t n, const void *ctx) {
  const fp_step *s = (const fp_step *)ctx + t;
  (void)n;
  fprintf(f, "%d,%d,%llu,%llu,%llu,", (int)t, (int)s->nodes,
          (unsigned long long)s->live_bytes, (unsigned long long)s->read_bytes,
          (unsigned long long)s->write_bytes);
}

/* Writes the per-step timeline as CSV (node names quoted), or as SVG
 * when the name ends in .svg. */
static int write_timeline(const char *path, const char *name, const fp_graph *g,
                          const fp_plan *p, const fp_step *tl,
                          const fp_metrics *m) {
  char label[FIG_NAME_MAX + 8];
  if (fp_path_has_suffix(path, ".svg")) {
    const fig_series s = {fig_short_name(name, label, sizeof label), p, tl, m};
    return cli_write_text(path, fig_timeline_svg(g, &s, 1));
  }
  return cli_write_step_csv(
      path, "step,nodes,live_bytes,read_bytes,write_bytes,first_node", g, p,
      timeline_row, tl);
}

static void print_eval_json(const fp_metrics *m, const fp_metrics *e) {
  printf("{\"traffic_bytes\": %llu, \"peak_bytes\": %llu, \"kernels\": %d, "
         "\"read_bytes\": %llu, \"write_bytes\": %llu, \"peak_step\": %d, "
         "\"materialized\": %d, \"resident_bytes\": %llu, \"eager\": "
         "{\"traffic_bytes\": %llu, \"peak_bytes\": %llu, \"kernels\": %d}}\n",
         (unsigned long long)m->traffic_bytes,
         (unsigned long long)m->peak_bytes, (int)m->kernels,
         (unsigned long long)m->read_bytes, (unsigned long long)m->write_bytes,
         (int)m->peak_step, (int)m->materialized,
         (unsigned long long)m->resident_bytes,
         (unsigned long long)e->traffic_bytes,
         (unsigned long long)e->peak_bytes, (int)e->kernels);
}

static void print_eval_text(const fp_graph *g, const fp_plan *p,
                            const fp_metrics *m, const fp_metrics *e) {
  char b1[64], b2[64], b3[64], safe[CLI_SAFE_MAX];
  const fp_solver_info *si = fp_plan_solver_const(p);
  printf("graph         %s\n", cli_safe(fp_graph_name(g), safe, sizeof safe));
  printf("method        %s\n",
         si->method[0] ? cli_safe(si->method, safe, sizeof safe) : "(unknown)");
  printf("kernels       %d (eager %d)\n", (int)m->kernels, (int)e->kernels);
  printf("traffic       %s = reads %s + writes %s; %.3fx eager\n",
         cli_bytes(m->traffic_bytes, b1, sizeof b1),
         cli_bytes(m->read_bytes, b2, sizeof b2),
         cli_bytes(m->write_bytes, b3, sizeof b3),
         ratio(m->traffic_bytes, e->traffic_bytes));
  printf("peak          %s; %.3fx eager",
         cli_bytes(m->peak_bytes, b1, sizeof b1),
         ratio(m->peak_bytes, e->peak_bytes));
  if (m->peak_step >= 0) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, m->peak_step, &len);
    printf(", first reached at step %d (%s%s)", (int)m->peak_step,
           cli_safe(fp_graph_node(g, grp[0])->name, safe, sizeof safe),
           len > 1 ? ", ..." : "");
  }
  uint64_t outside = fp_graph_outside_live_bytes(g);
  printf("\nmaterialized  %d buffers; resident inputs %s", (int)m->materialized,
         cli_bytes(m->resident_bytes - outside, b1, sizeof b1));
  if (outside) /* older graphs print as they always have */
    printf("; outside live %s", cli_bytes(outside, b1, sizeof b1));
  putchar('\n');
}

int cmd_eval(int argc, char **argv) {
  cli_opt opts[] = {{"json", 0, false, NULL}, {"timeline", 0, true, NULL}};
  cli_args a = {.opts = opts, .n_opts = 2, .inputs = true};
  if (cli_parse(&a, argc, argv) != 0)
    return cli_usage_error("eval", "%s", a.error);
  if (a.help)
    return fputs(eval_help, stdout), EXIT_OK;
  if (a.n_pos != 2)
    return cli_usage_error("eval", "expected GRAPH and PLAN");
  fp_graph *g = NULL;
  fp_plan *p = NULL;
  fp_step *tl = NULL;
  fp_metrics m, e;
  fp_error err;
  fp_error_clear(&err);
  int rc = cli_load_graph(a.pos[0], &g);
  if (rc || (rc = cli_load_plan(a.pos[1], g, &p)) || (rc = eval_eager(g, &e)))
    goto done;
  tl = calloc((size_t)fp_plan_group_count(p) + 1, sizeof *tl);
  if (!tl) {
    rc = cli_fail(&(fp_error){FP_ENOMEM, "out of memory"});
    goto done;
  }
  if (fp_plan_eval(g, p, &m, tl, &err) != FP_OK) {
    fp_error_prefix(&err, a.pos[1]);
    rc = cli_fail(&err);
    goto done;
  }
  if (cli_get(&a, "json"))
    print_eval_json(&m, &e);
  else
    print_eval_text(g, p, &m, &e);
  if (cli_get(&a, "timeline"))
    rc = write_timeline(cli_get(&a, "timeline"), a.pos[1], g, p, tl, &m);
done:
  free(tl);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
  return rc;
}

/* Holds the "metrics" a plan file states to the evaluator's figures;
 * prints the first disagreement and returns EXIT_PROBLEM, or 0. */
static int check_claims(const fp_graph *g, const fp_plan *p, const char *path) {
  const fp_plan_claims *c = fp_plan_claims_get(p);
  fp_metrics m;
  fp_error err;
  if (fp_plan_eval(g, p, &m, NULL, &err) != FP_OK)
    return cli_fail(&err);
  const struct {
    const char *key;
    double claimed;
    uint64_t actual;
  } rows[] = {{"traffic_bytes", c->traffic_bytes, m.traffic_bytes},
              {"peak_bytes", c->peak_bytes, m.peak_bytes},
              {"kernels", c->kernels, (uint64_t)m.kernels}};
  for (int i = 0; i < 3; i++)
    /* Compared as the JSON reader sees numbers: exact below 2^53. */
    if (!isnan(rows[i].claimed) && rows[i].claimed != (double)rows[i].actual) {
      fprintf(stderr,
              "fuseplan: %s: metrics.%s: the file says %.0f, the evaluator "
              "computes %llu\n",
              path, rows[i].key, rows[i].claimed,
              (unsigned long long)rows[i].actual);
      return EXIT_PROBLEM;
    }
  return 0;
}

int cmd_verify(int argc, char **argv) {
  cli_args a = {.opts = NULL, .n_opts = 0, .inputs = true};
  if (cli_parse(&a, argc, argv) != 0)
    return cli_usage_error("verify", "%s", a.error);
  if (a.help)
    return fputs(verify_help, stdout), EXIT_OK;
  if (a.n_pos != 2)
    return cli_usage_error("verify", "expected GRAPH and PLAN");
  fp_graph *g = NULL;
  fp_plan *p = NULL;
  fp_error err;
  fp_error_clear(&err);
  int rc = cli_load_graph(a.pos[0], &g);
  if (rc || (rc = cli_load_plan(a.pos[1], g, &p)))
    goto done;
  if (fp_plan_check(g, p, 0, &err) != FP_OK) {
    fp_error_prefix(&err, a.pos[1]);
    rc = cli_fail(&err);
  } else if ((rc = check_claims(g, p, a.pos[1])) == 0) {
    printf("%s: legal plan for %s (%d kernels, %d nodes)\n", a.pos[1], a.pos[0],
           (int)fp_plan_group_count(p), (int)fp_graph_node_count(g));
  }
done:
  fp_plan_destroy(p);
  fp_graph_destroy(g);
  return rc;
}

/* Width of the plan column: the longest label, at least 32. */
static int label_width = 32;

/* One row of the compare table; `m` is NULL for an illegal plan. */
static void compare_row(const char *label, const char *method,
                        const fp_metrics *m, const fp_metrics *e,
                        const char *problem, bool json, bool first) {
  if (json) {
    printf("%s\n {\"plan\": ", first ? "" : ",");
    cli_json_str(stdout, label);
    printf(", \"method\": ");
    cli_json_str(stdout, method);
    if (m)
      printf(", \"legal\": true, \"kernels\": %d, \"traffic_bytes\": %llu, "
             "\"peak_bytes\": %llu}",
             (int)m->kernels, (unsigned long long)m->traffic_bytes,
             (unsigned long long)m->peak_bytes);
    else {
      printf(", \"legal\": false, \"problem\": ");
      cli_json_str(stdout, problem);
      printf("}");
    }
    return;
  }
  char safe[CLI_SAFE_MAX], safe_problem[CLI_SAFE_MAX];
  method = cli_safe(method, safe, sizeof safe);
  if (!m) {
    printf("%-*s %-14.14s ILLEGAL: %s\n", label_width, label, method,
           cli_safe(problem, safe_problem, sizeof safe_problem));
    return;
  }
  printf("%-*s %-14.14s %8d %18llu %8.3f %18llu %8.3f\n", label_width, label,
         method, (int)m->kernels, (unsigned long long)m->traffic_bytes,
         ratio(m->traffic_bytes, e->traffic_bytes),
         (unsigned long long)m->peak_bytes,
         ratio(m->peak_bytes, e->peak_bytes));
}

/* The legal plans of a compare, kept for its --timeline plot. */
typedef struct kept_plans {
  fp_plan *plans[CLI_MAX_POS];
  fp_step *steps[CLI_MAX_POS];
  fp_metrics m[CLI_MAX_POS];
  char names[CLI_MAX_POS][FIG_NAME_MAX + 8];
  int n;
} kept_plans;

/* Evaluates plan p (file `path`) with its timeline and keeps it in *k
 * (taking p); false, with p freed, when out of memory. */
static bool keep_plan(kept_plans *k, const fp_graph *g, fp_plan *p,
                      const char *path) {
  fp_step *tl = calloc((size_t)fp_plan_group_count(p) + 1, sizeof *tl);
  if (!tl || fp_plan_eval(g, p, &k->m[k->n], tl, NULL) != FP_OK) {
    free(tl);
    fp_plan_destroy(p);
    return false;
  }
  k->plans[k->n] = p;
  k->steps[k->n] = tl;
  fig_short_name(path, k->names[k->n], sizeof k->names[0]);
  k->n++;
  return true;
}

/* The name of kept plan i in the plot: its solver.method when it states
 * one that no other kept plan states, else its file's short name. */
static const char *kept_name(const kept_plans *k, int i) {
  const char *m = fp_plan_solver_const(k->plans[i])->method;
  if (!*m)
    return k->names[i];
  for (int j = 0; j < k->n; j++)
    if (j != i && strcmp(fp_plan_solver_const(k->plans[j])->method, m) == 0)
      return k->names[i];
  return m;
}

/* Draws the kept plans into the SVG file `path`; 0 or an exit code. */
static int compare_timeline(const char *path, const fp_graph *g,
                            const kept_plans *k) {
  fig_series s[CLI_MAX_POS];
  for (int i = 0; i < k->n; i++)
    s[i] = (fig_series){kept_name(k, i), k->plans[i], k->steps[i], &k->m[i]};
  return cli_write_text(path, fig_timeline_svg(g, s, k->n));
}

static void kept_free(kept_plans *k) {
  for (int i = 0; i < k->n; i++) {
    fp_plan_destroy(k->plans[i]);
    free(k->steps[i]);
  }
  k->n = 0;
}

int cmd_compare(int argc, char **argv) {
  cli_opt opts[] = {{"json", 0, false, NULL}, {"timeline", 0, true, NULL}};
  cli_args a = {.opts = opts, .n_opts = 2, .inputs = true};
  if (cli_parse(&a, argc, argv) != 0)
    return cli_usage_error("compare", "%s", a.error);
  if (a.help)
    return fputs(compare_help, stdout), EXIT_OK;
  if (a.n_pos < 2)
    return cli_usage_error("compare", "expected GRAPH and at least one PLAN");
  const char *timeline = cli_get(&a, "timeline");
  if (timeline && !fp_path_has_suffix(timeline, ".svg"))
    return cli_usage_error("compare", "--timeline: expected FILE.svg");
  bool json = cli_get(&a, "json") != NULL;
  fp_graph *g = NULL;
  fp_metrics e;
  kept_plans *kept = calloc(1, sizeof *kept);
  int rc = kept ? cli_load_graph(a.pos[0], &g)
                : cli_fail(&(fp_error){FP_ENOMEM, "out of memory"});
  int illegal = 0;
  if (rc || (rc = eval_eager(g, &e)))
    goto done;
  for (int i = 1; i < a.n_pos; i++) /* labels are printed in full */
    if ((int)strlen(a.pos[i]) > label_width)
      label_width = (int)strlen(a.pos[i]);
  if (json)
    printf("[");
  else
    printf("%-*s %-14s %8s %18s %8s %18s %8s\n", label_width, "plan", "method",
           "kernels", "traffic_bytes", "x eager", "peak_bytes", "x eager");
  compare_row("(eager)", "eager", &e, &e, NULL, json, true);
  for (int i = 1; i < a.n_pos && !rc; i++) {
    fp_plan *p = NULL;
    fp_metrics m;
    fp_error err;
    fp_error_clear(&err);
    if ((rc = cli_load_plan(a.pos[i], g, &p)))
      break;
    const char *method = fp_plan_solver_const(p)->method;
    bool ok = fp_plan_eval(g, p, &m, NULL, &err) == FP_OK;
    if (!ok && err.code != FP_EILLEGAL)
      rc = cli_fail(&err);
    illegal += !ok;
    compare_row(a.pos[i], method[0] ? method : "?", ok ? &m : NULL, &e, err.msg,
                json, false);
    if (ok && timeline && !keep_plan(kept, g, p, a.pos[i]))
      rc = cli_fail(&(fp_error){FP_ENOMEM, "out of memory"});
    else if (!(ok && timeline))
      fp_plan_destroy(p);
  }
  if (json)
    printf("\n]\n");
  if (!rc && timeline)
    rc = compare_timeline(timeline, g, kept);
  if (!rc && illegal)
    rc = EXIT_PROBLEM;
done:
  if (kept)
    kept_free(kept);
  free(kept);
  fp_graph_destroy(g);
  return rc;
}
