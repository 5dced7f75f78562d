/*
 * figures.h -- the SVG plots of the command: the traffic-vs-peak front
 * (`pareto --svg`), live memory over the steps of one or more plans
 * (`eval --timeline F.svg`, `compare --timeline F.svg`) and the excess
 * of each method over gold (`batch report --svg`), laid out with
 * cli/plot.h.
 */
#ifndef FP_FIGURES_H
#define FP_FIGURES_H

#include <stddef.h>
#include <stdint.h>

#include "model/eval.h"
#include "model/graph.h"
#include "model/plan.h"
#include "solver/solver.h"

/* A plan drawn beside the front. */
typedef enum fig_kind {
  FIG_EAGER,     /* the unfused program */
  FIG_HEURISTIC, /* greedy, greedy-lowmem, greedy-peak */
  FIG_GIVEN      /* a plan passed with --start (the compiler's own, ...) */
} fig_kind;

typedef struct fig_plan_point {
  const char *name; /* the label: the method, or the plan's solver.method */
  fig_kind kind;
  fp_metrics m;
} fig_plan_point;

/* The front as SVG text (free with free()), or NULL when out of memory:
 * the points of `method` (dominated ones hollow) joined as a staircase,
 * the plans in marks[] as labelled markers, axes in binary units, a
 * legend, and a <title> tooltip on every marker. */
char *fig_pareto_svg(const char *graph, const char *method,
                     const fp_pareto_point *pts, int32_t n,
                     const fig_plan_point *marks, int n_marks);

/* One plan of a timeline plot: its timeline (fp_plan_eval's, one fp_step
 * per group) and metrics. */
typedef struct fig_series {
  const char *name;
  const fp_plan *plan;
  const fp_step *steps;
  const fp_metrics *m;
} fig_series;

/* Live memory over the steps of each plan in s[0..n), overlaid, each
 * plan's peak marked and labelled, as SVG text (free with free()), or
 * NULL when out of memory.  Each step carries a <title> tooltip naming
 * its kernel (the group's first node, and how many are fused with it). */
char *fig_timeline_svg(const fp_graph *g, const fig_series *s, int n);

/* The most methods the batch report's figure draws. */
#define FIG_MAX_METHODS 16

/* One method of a batch report: its excess over gold on each gold item
 * it ran on, in % of gold's figure. */
typedef struct fig_excess {
  const char *name;
  const double *traffic, *peak;   /* n of each, sorted ascending */
  int32_t n, equal;               /* items; items equal to gold */
  double traffic_q[3], peak_q[3]; /* median, p90, max */
} fig_excess;

/* The batch report's figure as SVG text (free with free()), or NULL when
 * out of memory: two panels, excess traffic and excess peak over gold,
 * each the share of the `gold` items at or below x for every method in
 * m[0..n), on a symmetric log x axis (linear near 0, decades beyond), so
 * that excesses of 0.01% and of 100% both show; the median, p90 and max
 * of each method marked with its own hollow shape.  Where methods
 * coincide, the earlier ones are drawn wider, so every one shows. */
char *fig_excess_svg(const fig_excess *m, int n, int32_t gold);

/* The most characters of a name in a legend. */
#define FIG_NAME_MAX 26

/* A file name as a legend shows it: the last component without .gz,
 * .json and .plan endings, cut to FIG_NAME_MAX characters ("..." marks
 * a cut).  Returns buf (n bytes). */
const char *fig_short_name(const char *path, char *buf, size_t n);

#endif /* FP_FIGURES_H */
