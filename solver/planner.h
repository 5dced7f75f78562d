/*
 * planner.h -- the planning methods as one table: a row per method with its
 * name, help, the options it accepts, what it can do, and the function that
 * makes its plan.
 *
 * The command line dispatches `solve --method M` and `pareto --method M`
 * through this table, checks options against a row's mask, and prints the
 * method list of its help from it; adding a method is adding a row
 * (planner.c).  Nothing here prints.
 */
#ifndef FP_PLANNER_H
#define FP_PLANNER_H

#include <stdint.h>

#include "../heuristics/heuristics.h"
#include "../model/eval.h"
#include "../model/graph.h"
#include "../model/plan.h"
#include "../model/status.h"
#include "solver.h"

/* The options a method may accept, by their command-line names, in the
 * order the command line checks them.  X(name, string) */
#define FP_PLANNER_OPTION_MAP(X)                                               \
  X(OBJECTIVE, "objective")                                                    \
  X(TRAFFIC_LIMIT, "traffic-limit")                                            \
  X(LAMBDA, "lambda")                                                          \
  X(WINDOW, "window")                                                          \
  X(MIP_GAP, "mip-gap")                                                        \
  X(GAP, "gap")                                                                \
  X(GAP2, "gap2")                                                              \
  X(LP_OUT, "lp-out")                                                          \
  X(MPS_OUT, "mps-out")                                                        \
  X(TIME_LIMIT, "time-limit")                                                  \
  X(JOBS, "jobs")                                                              \
  X(SEED, "seed")                                                              \
  X(START, "start")                                                            \
  X(ORDER, "order")                                                            \
  X(PEAK_LIMIT, "peak-limit")                                                  \
  X(MAX_FUSION_SIZE, "max-fusion-size")

/* Index of an option (FP_PLANNER_OPT_I_OBJECTIVE, ...). */
typedef enum fp_planner_option {
#define FP_PLANNER_OPT_ENUM_(name, str) FP_PLANNER_OPT_I_##name,
  FP_PLANNER_OPTION_MAP(FP_PLANNER_OPT_ENUM_)
#undef FP_PLANNER_OPT_ENUM_
      FP_PLANNER_OPT_COUNT_
} fp_planner_option;

/* The bit of each option in a row's mask (FP_PLANNER_OPT_OBJECTIVE, ...). */
enum {
#define FP_PLANNER_OPT_BIT_(name, str)                                         \
  FP_PLANNER_OPT_##name = 1u << FP_PLANNER_OPT_I_##name,
  FP_PLANNER_OPTION_MAP(FP_PLANNER_OPT_BIT_)
#undef FP_PLANNER_OPT_BIT_
};

/* The command-line name of option i ("objective"); NULL out of range. */
const char *fp_planner_option_name(fp_planner_option i);

/* What a method can do (a row's flags). */
enum {
  FP_PLANNER_EXACT = 1u << 0,        /* an optimizer over fusion and order
                                        together (reads req->ilp); otherwise a
                                        heuristic (reads req->fus) */
  FP_PLANNER_PEAK_LIMITED = 1u << 1, /* plans under the peak limit; the
                                        others' plans may exceed it */
  FP_PLANNER_ANYTIME = 1u << 2,      /* runs under req->ilp.time_limit_s,
                                        reports req->ilp.progress, stops with
                                        its best plan on *req->ilp.cancel, and
                                        records a bound and gap */
  FP_PLANNER_PARETO = 1u << 3        /* can solve the points of fp_pareto */
};

/* What a method is asked: heuristic rows read `fus`, exact rows `ilp`,
 * and every row reads `limits`, the one copy of the problem's limits:
 * fp_planner_run puts it into the method's own parameters (fus.limits or
 * ilp.limits of its copy of the request), so a caller sets it here and
 * leaves fus.limits and ilp.limits alone (they are not read). */
typedef struct fp_plan_request {
  fp_limits limits;
  fp_fusion_params fus;
  fp_ilp_params ilp;
} fp_plan_request;

/* Makes a plan for g into `out` (a plan that passes fp_plan_check) with
 * the evaluator's metrics in *m; fails as the method does (FP_EARG,
 * FP_EINFEASIBLE, FP_ELIMIT, FP_ENOMEM, FP_EIO, ...). */
typedef fp_status (*fp_planner_fn)(const fp_graph *g,
                                   const fp_plan_request *req, fp_plan *out,
                                   fp_metrics *m, fp_error *err);

/* One method. */
typedef struct fp_planner {
  const char *name;    /* --method name */
  const char *summary; /* one line, no period */
  const char *help;    /* the `solve --help` text: lines joined by '\n',
                          the first following "name: ", no final '\n' */
  unsigned options;    /* FP_PLANNER_OPT_* it accepts */
  unsigned flags;      /* FP_PLANNER_* */
  fp_method fusion;    /* heuristic rows: the fusion method run; exact rows:
                          the fusion defaults of the request (unused) */
  fp_planner_fn run;   /* call through fp_planner_run */
} fp_planner;

/* The number of methods, and method i (0 <= i < count; NULL otherwise),
 * in the order of the help. */
int32_t fp_planner_count(void);
const fp_planner *fp_planner_at(int32_t i);

/* The method named `name`, or NULL if unknown (or name is NULL). */
const fp_planner *fp_planner_find(const char *name);

/* The method `--method` defaults to (auto). */
const fp_planner *fp_planner_default(void);

/* Whether `pl` accepts the option (0 or 1; 0 for a NULL pl or an option
 * out of range). */
int fp_planner_accepts(const fp_planner *pl, fp_planner_option opt);

/* Fills *req with the defaults of method pl: fp_limits_init,
 * fp_fusion_params_init for its fusion method and fp_ilp_params_init (pl
 * NULL: the default method's; req NULL: a no-op). */
void fp_plan_request_init(fp_plan_request *req, const fp_planner *pl);

/* Runs method pl on g with *req (made by fp_plan_request_init for pl,
 * then edited), writing a legal plan into `out` and its metrics into *m
 * (may be NULL).  Fields of options the row does not accept are not read.
 * FP_EARG when pl, g or out is NULL; otherwise fails as the method. */
fp_status fp_planner_run(const fp_planner *pl, const fp_graph *g,
                         const fp_plan_request *req, fp_plan *out,
                         fp_metrics *m, fp_error *err);

#endif /* FP_PLANNER_H */
