/*
 * cmd_pareto.c -- `fuseplan pareto`: the traffic-vs-peak front of a graph
 * as a table, a JSON file and an SVG plot with the heuristics' plans drawn
 * for comparison.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "cli/figures.h"
#include "heuristics/heuristics.h"
#include "solver/planner.h"
#include "solver/solver.h"

/* The help around the methods (rows of the planner table that can drive
 * the sweep). */
static const char pareto_help_usage[] =
    "usage: fuseplan pareto GRAPH [--points N] [--time-limit S]\n"
    "                       [--method ";
static const char pareto_help_text[] =
    "] [-o FRONT.json]\n"
    "                       [--svg FRONT.svg] [--max-fusion-size K]\n"
    "                       [--start PLAN]...\n"
    "\n"
    "Computes the trade-off between memory traffic and peak memory: the\n"
    "lowest peak, the lowest traffic with no peak limit, and N solves of\n"
    "'least traffic with peak <= L' for limits L spread between them, each\n"
    "warm-started from the previous one.  The heuristics' plans (eager,\n"
    "greedy, greedy-lowmem, greedy-peak) are shown for comparison.\n"
    "  --points N       points on the front (default 8, at least 2)\n"
    "  --time-limit S   seconds for the whole sweep (default 60)\n"
    "  --gap G          a point counts as done within this relative gap to\n"
    "                   its traffic bound, 0 <= G < 1 (default 0)\n"
    "  --gap2 G         each point's second level (least peak at its\n"
    "                   traffic) stops within this gap (default 0.001)\n";
static const char pareto_help_tail[] =
    "  -o, --output F   the front as JSON (written atomically)\n"
    "  --svg F          the front as an SVG plot (axes in MiB/GiB, the\n"
    "                   eager point, heuristics and given plans labelled)\n"
    "  --max-fusion-size K  lower the graph's max_fusion_size\n"
    "  --start PLAN     a plan (e.g. the compiler's own) that every point's\n"
    "                   solve starts from when it meets that point's limit,\n"
    "                   shown in the table by its file name and in the plot\n"
    "                   by its solver.method; repeatable; an illegal plan\n"
    "                   exits 3\n" CLI_INPUT_OPTIONS_HELP;

/* Prints --help: the usage line and the --method lines list the rows
 * that can drive the sweep, the default first. */
static void print_help(void) {
  char names[256];
  bool first = true;
  fputs(pareto_help_usage, stdout);
  fputs(cli_methods_join(FP_PLANNER_PARETO, "|", "|", names, sizeof names),
        stdout);
  fputs(pareto_help_text, stdout);
  for (int32_t i = 0; i < fp_planner_count(); i++) {
    const fp_planner *pl = fp_planner_at(i);
    if (!(pl->flags & FP_PLANNER_PARETO))
      continue;
    printf("%s%s%s: %s\n",
           first ? "  --method M       " : "                   ", pl->name,
           pl == fp_planner_default() ? " (default)" : "", pl->summary);
    first = false;
  }
  fputs(pareto_help_tail, stdout);
}

typedef struct heur_point {
  const char *name;
  fp_metrics m;
} heur_point;

/* Evaluates every heuristic (best order); returns how many succeeded. */
static int heuristics(const fp_graph *g, int32_t k, heur_point *hp) {
  int n = 0;
  for (int i = 0; i < FP_METHOD_COUNT_; i++) {
    fp_fusion_params prm;
    fp_plan *p = fp_plan_create();
    fp_fusion_params_init(&prm, (fp_method)i);
    prm.limits.max_fusion_size = k;
    if (p && fp_fuse(g, &prm, p, NULL) == FP_OK &&
        fp_plan_eval_k(g, p, k, &hp[n].m, NULL, NULL) == FP_OK)
      hp[n++].name = fp_method_name((fp_method)i);
    fp_plan_destroy(p);
  }
  return n;
}

static void print_table(const fp_pareto_point *pts, int32_t n,
                        const heur_point *hp, int nh) {
  printf("%-20s %18s %18s %8s %-20s %18s %8s %8s\n", "peak limit",
         "traffic_bytes", "peak_bytes", "kernels", "status", "traffic bound",
         "gap", "time s");
  for (int32_t i = 0; i < n; i++)
    printf("%-20llu %18llu %18llu %8d %-20s %18.0f %7.3f%% %8.2f%s\n",
           (unsigned long long)pts[i].peak_limit,
           (unsigned long long)pts[i].m.traffic_bytes,
           (unsigned long long)pts[i].m.peak_bytes, (int)pts[i].m.kernels,
           pts[i].status, pts[i].bound, 100 * pts[i].gap, pts[i].time_s,
           pts[i].dominated ? "  (dominated)" : "");
  for (int i = 0; i < nh; i++)
    printf("%-20s %18llu %18llu %8d %-20s\n", hp[i].name,
           (unsigned long long)hp[i].m.traffic_bytes,
           (unsigned long long)hp[i].m.peak_bytes, (int)hp[i].m.kernels,
           "heuristic");
}

/* The front as JSON text (caller frees). */
static char *front_json(const fp_graph *g, const fp_pareto_point *pts,
                        int32_t n, const heur_point *hp, int nh) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f)
    return NULL;
  fputs("{\"format\": \"fuseplan.pareto\", \"version\": 1, \"graph\": ", f);
  cli_json_str(f, fp_graph_name(g));
  fputs(",\n\"points\": [", f);
  for (int32_t i = 0; i < n; i++)
    fprintf(f,
            "%s\n {\"peak_limit\": %llu, \"traffic_bytes\": %llu, "
            "\"peak_bytes\": %llu, \"kernels\": %d, \"status\": \"%s\", "
            "\"bound\": %.17g, \"gap\": %.6g, \"time_s\": %.3f, "
            "\"solves\": %d, \"dominated\": %s}",
            i ? "," : "", (unsigned long long)pts[i].peak_limit,
            (unsigned long long)pts[i].m.traffic_bytes,
            (unsigned long long)pts[i].m.peak_bytes, (int)pts[i].m.kernels,
            pts[i].status, pts[i].bound, pts[i].gap, pts[i].time_s,
            (int)pts[i].solves, pts[i].dominated ? "true" : "false");
  fputs("],\n\"heuristics\": [", f);
  for (int i = 0; i < nh; i++)
    fprintf(f,
            "%s\n {\"method\": \"%s\", \"traffic_bytes\": %llu, "
            "\"peak_bytes\": %llu, \"kernels\": %d}",
            i ? "," : "", hp[i].name, (unsigned long long)hp[i].m.traffic_bytes,
            (unsigned long long)hp[i].m.peak_bytes, (int)hp[i].m.kernels);
  fputs("]}\n", f);
  fclose(f);
  return text;
}

/* The front as SVG: the heuristics (the first nh_heur of hp) and the
 * given plans (the rest, labelled by their solver.method when they state
 * one) beside the points of method `method`. */
static char *front_svg(const fp_graph *g, const char *method,
                       const fp_pareto_point *pts, int32_t n,
                       const heur_point *hp, int nh_heur, int nh,
                       const cli_starts *starts) {
  fig_plan_point marks[FP_METHOD_COUNT_ + CLI_MAX_STARTS];
  char names[CLI_MAX_STARTS][FIG_NAME_MAX + 8];
  for (int i = 0; i < nh; i++) {
    marks[i].m = hp[i].m;
    marks[i].name = hp[i].name;
    marks[i].kind = strcmp(hp[i].name, "eager") == 0 ? FIG_EAGER
                    : i < nh_heur                    ? FIG_HEURISTIC
                                                     : FIG_GIVEN;
    if (i >= nh_heur) {
      const char *sm = fp_plan_solver_const(starts->plans[i - nh_heur])->method;
      if (*sm)
        snprintf(names[i - nh_heur], sizeof names[0], "%s", sm);
      else
        fig_short_name(hp[i].name, names[i - nh_heur], sizeof names[0]);
      marks[i].name = names[i - nh_heur];
    }
  }
  return fig_pareto_svg(fp_graph_name(g), method, pts, n, marks, nh);
}

/* The row --method names (NULL when unknown or unable to drive the
 * sweep); the default row without --method. */
static const fp_planner *pick_method(const char *m) {
  const fp_planner *pl = m ? fp_planner_find(m) : fp_planner_default();
  return pl && (pl->flags & FP_PLANNER_PARETO) ? pl : NULL;
}

/* The usage error of a bad --method: the rows that can drive the sweep. */
static int pick_method_error(void) {
  char names[256];
  return cli_usage_error(
      "pareto", "--method: %s",
      cli_methods_join(FP_PLANNER_PARETO, ", ", " or ", names, sizeof names));
}

/* Runs the sweep and prints and writes the front: 0 or an exit code.
 * SIGINT and SIGTERM, until the files are written, end the sweep with the
 * points found so far (which are then printed and written as usual). */
static int sweep(const cli_args *a, const fp_graph *g, fp_ilp_params *prm,
                 int32_t npts, const fp_planner *pl, fp_pareto_point *pts,
                 const cli_starts *starts) {
  heur_point hp[FP_METHOD_COUNT_ + CLI_MAX_STARTS];
  const char *start_paths[CLI_MAX_STARTS];
  fp_error err;
  cli_trap trap;
  int rc = 0;
  fp_error_clear(&err);
  cli_trap_interrupts(&trap);
  prm->cancel = &cli_interrupted;
  fp_status st = fp_pareto(g, prm, npts, pl, pts, &err);
  if (st != FP_OK) {
    rc = st == FP_ELIMIT ? cli_usage_error("pareto", "%s", err.msg)
                         : cli_fail(&err);
    goto done;
  }
  int nh = heuristics(g, prm->limits.max_fusion_size, hp), nh_heur = nh;
  /* The given plans are placed beside the heuristics, named by file (they
   * all pass fp_plan_check, so each evaluates). */
  cli_get_all(a, "start", start_paths, CLI_MAX_STARTS);
  for (int i = 0; i < starts->n; i++)
    if (fp_plan_eval_k(g, starts->plans[i], prm->limits.max_fusion_size,
                       &hp[nh].m, NULL, NULL) == FP_OK)
      hp[nh++].name = start_paths[i];
  print_table(pts, npts, hp, nh);
  if (cli_get(a, "output"))
    rc = cli_write_text(cli_get(a, "output"), front_json(g, pts, npts, hp, nh));
  if (!rc && cli_get(a, "svg"))
    rc = cli_write_text(cli_get(a, "svg"), front_svg(g, pl->name, pts, npts, hp,
                                                     nh_heur, nh, starts));
done:
  cli_untrap_interrupts(&trap);
  return rc;
}

int cmd_pareto(int argc, char **argv) {
  cli_opt opts[] = {
      {"points", 0, true, NULL}, {"time-limit", 0, true, NULL},
      {"method", 0, true, NULL}, {"output", 'o', true, NULL},
      {"svg", 0, true, NULL},    {"max-fusion-size", 0, true, NULL},
      {"start", 0, true, NULL},  {"gap", 0, true, NULL},
      {"gap2", 0, true, NULL}};
  cli_args a = {
      .opts = opts, .n_opts = sizeof opts / sizeof *opts, .inputs = true};
  fp_ilp_params prm;
  uint64_t npts = 8, k = 0;
  if (cli_parse(&a, argc, argv) != 0)
    return cli_usage_error("pareto", "%s", a.error);
  if (a.help)
    return print_help(), EXIT_OK;
  const char *m = cli_get(&a, "method"), *pt = cli_get(&a, "points");
  const char *tl = cli_get(&a, "time-limit"),
             *ks = cli_get(&a, "max-fusion-size");
  fp_ilp_params_init(&prm);
  prm.time_limit_s = 60;
  if (a.n_pos != 1)
    return cli_usage_error("pareto", "expected one GRAPH file");
  const fp_planner *pl = pick_method(m);
  if (!pl)
    return pick_method_error();
  if (pt && (cli_parse_uint(pt, 1000, &npts) != 0 || npts < 2))
    return cli_usage_error("pareto", "--points: expected 2 .. 1000");
  if (tl && cli_parse_seconds(tl, &prm.time_limit_s) != 0)
    return cli_usage_error("pareto", "--time-limit: expected seconds > 0");
  if (ks && (cli_parse_uint(ks, INT32_MAX, &k) != 0 || k < 1))
    return cli_usage_error("pareto", "--max-fusion-size: expected >= 1");
  const char *g1 = cli_get(&a, "gap"), *g2 = cli_get(&a, "gap2");
  if (g1 && cli_parse_gap(g1, &prm.gap) != 0)
    return cli_usage_error("pareto", "--gap: expected a number >= 0 and < 1");
  if (g2 && cli_parse_gap(g2, &prm.gap2) != 0)
    return cli_usage_error("pareto", "--gap2: expected a number >= 0 and < 1");
  prm.limits.max_fusion_size = (int32_t)k;
  fp_graph *g = NULL;
  fp_pareto_point *pts = calloc(npts, sizeof *pts);
  cli_starts starts = {.n = 0};
  int rc = pts ? cli_load_graph(a.pos[0], &g)
               : cli_fail(&(fp_error){FP_ENOMEM, "out of memory"});
  if (rc)
    goto done;
  if (prm.limits.max_fusion_size > fp_graph_max_fusion_size(g)) {
    rc = cli_usage_error("pareto", "--max-fusion-size can only lower the "
                                   "graph's value");
    goto done;
  }
  if ((rc = cli_load_starts(&a, g, prm.limits.max_fusion_size, &starts)))
    goto done;
  prm.starts = (const fp_plan *const *)starts.plans;
  prm.n_starts = starts.n;
  rc = sweep(&a, g, &prm, (int32_t)npts, pl, pts, &starts);
done:
  cli_starts_free(&starts);
  free(pts);
  fp_graph_destroy(g);
  return rc;
}
