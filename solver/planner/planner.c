/*
 * planner.c -- the table of planning methods (planner.h), and running one.
 *
 * The table is the one place that knows which methods exist: the command
 * line looks methods up here, checks options against a row's mask, and
 * prints its help and error messages from the rows.
 */
#include <stddef.h>
#include <string.h>

#include "solver/planner.h"

static const char *const option_names[] = {
#define FP_PLANNER_OPT_STR_(name, str) str,
    FP_PLANNER_OPTION_MAP(FP_PLANNER_OPT_STR_)
#undef FP_PLANNER_OPT_STR_
};

/* The name of option i, or NULL outside the list. */
const char *fp_planner_option_name(fp_planner_option i) {
  return (unsigned)i < FP_PLANNER_OPT_COUNT_ ? option_names[i] : NULL;
}

/* The heuristic rows: the fusion method of req->fus, then the evaluator's
 * figures under the same fusion-size limit. */
static fp_status run_fuse(const fp_graph *g, const fp_plan_request *req,
                          fp_plan *out, fp_metrics *m, fp_error *err) {
  fp_metrics local;
  fp_status st = fp_fuse(g, &req->fus, out, err);
  return st == FP_OK ? fp_plan_eval_k(g, out, req->fus.limits.max_fusion_size,
                                      m ? m : &local, NULL, err)
                     : st;
}

/* The exact rows: the solvers of solver.h on req->ilp. */
static fp_status run_auto(const fp_graph *g, const fp_plan_request *req,
                          fp_plan *out, fp_metrics *m, fp_error *err) {
  return fp_auto_solve(g, &req->ilp, out, m, err);
}

static fp_status run_ilp(const fp_graph *g, const fp_plan_request *req,
                         fp_plan *out, fp_metrics *m, fp_error *err) {
  return fp_ilp_solve(g, &req->ilp, out, m, err);
}

static fp_status run_exhaustive(const fp_graph *g, const fp_plan_request *req,
                                fp_plan *out, fp_metrics *m, fp_error *err) {
  return fp_exhaustive(g, &req->ilp, out, m, err);
}

/* Every method takes these. */
#define ALL_ (FP_PLANNER_OPT_PEAK_LIMIT | FP_PLANNER_OPT_MAX_FUSION_SIZE)
/* What the heuristics take, and what every exact method takes. */
#define HEURISTIC_ (ALL_ | FP_PLANNER_OPT_ORDER)
#define EXACT_                                                                 \
  (ALL_ | FP_PLANNER_OPT_OBJECTIVE | FP_PLANNER_OPT_TRAFFIC_LIMIT |            \
   FP_PLANNER_OPT_LAMBDA)
/* The anytime exact methods' tolerances of the two levels. */
#define GAPS_ (FP_PLANNER_OPT_GAP | FP_PLANNER_OPT_GAP2)

/*
 * The methods, in the order of `fuseplan solve --help`; the first is the
 * default.  Adding a method is adding one row here: its name, help,
 * accepted options and flags, and its run function (a heuristic row runs
 * its fp_method through run_fuse).  The command line's dispatch, option
 * checks, help and messages, and fp_pareto for rows flagged
 * FP_PLANNER_PARETO, all follow from the row.
 */
static const fp_planner planners[] = {
    {"auto", "exact search/ILP on small graphs, window search beyond",
     "objective traffic on graphs of at\n"
     "most 64 nodes: the exact least-traffic search first\n"
     "(10% of the time); then the exact ILP for graphs of\n"
     "at most 40 nodes, tried on 30% of the time up to 150\n"
     "when the model is small enough;\n"
     "else the best plan known, improved window by window\n"
     "with small exact ILPs (larger ones when passes stop\n"
     "improving) until both levels are proven or within\n"
     "--gap/--gap2, or the time limit; reports a lower\n"
     "bound and gap.  Ctrl-C returns the best plan so far",
     EXACT_ | FP_PLANNER_OPT_TIME_LIMIT | FP_PLANNER_OPT_JOBS |
         FP_PLANNER_OPT_SEED | FP_PLANNER_OPT_START | GAPS_,
     FP_PLANNER_EXACT | FP_PLANNER_PEAK_LIMITED | FP_PLANNER_ANYTIME |
         FP_PLANNER_PARETO,
     FP_METHOD_GREEDY_PEAK, run_auto},
    {"greedy-peak", "greedy fusion kept under the peak limit",
     "greedy fusion that refuses any\n"
     "fusion raising the peak above the limit",
     HEURISTIC_, FP_PLANNER_PEAK_LIMITED, FP_METHOD_GREEDY_PEAK, run_fuse},
    {"ilp", "the GLPK integer program, warm-started",
     "the GLPK integer program, warm-started from the\n"
     "best heuristic, under --time-limit; never worse\n"
     "than the heuristics",
     EXACT_ | FP_PLANNER_OPT_WINDOW | FP_PLANNER_OPT_MIP_GAP |
         FP_PLANNER_OPT_LP_OUT | FP_PLANNER_OPT_MPS_OUT |
         FP_PLANNER_OPT_TIME_LIMIT | FP_PLANNER_OPT_START | GAPS_,
     FP_PLANNER_EXACT | FP_PLANNER_PEAK_LIMITED | FP_PLANNER_ANYTIME |
         FP_PLANNER_PARETO,
     FP_METHOD_GREEDY_PEAK, run_ilp},
    {"exhaustive", "every legal plan (at most 10 nodes)",
     "every legal plan (graphs of at most 10\n"
     "nodes); the reference the ILP is tested against",
     EXACT_, FP_PLANNER_EXACT | FP_PLANNER_PEAK_LIMITED | FP_PLANNER_PARETO,
     FP_METHOD_GREEDY_PEAK, run_exhaustive},
    {"greedy", "PyTorch Inductor's greedy fusion and reorder",
     "PyTorch Inductor's greedy fusion (vertical +\n"
     "horizontal, max_fusion_size, no cycles), then its\n"
     "peak-memory reorder",
     HEURISTIC_, 0, FP_METHOD_GREEDY, run_fuse},
    {"greedy-lowmem", "greedy without horizontal fusion",
     "greedy without horizontal fusion", HEURISTIC_, 0, FP_METHOD_GREEDY_LOWMEM,
     run_fuse},
    {"eager", "every node alone, listed order",
     "every node alone, listed order", HEURISTIC_, 0, FP_METHOD_EAGER,
     run_fuse},
};

#define N_PLANNERS ((int32_t)(sizeof planners / sizeof planners[0]))

/* How many rows the table has. */
int32_t fp_planner_count(void) {
  return N_PLANNERS;
}

/* Row i, or NULL outside the table. */
const fp_planner *fp_planner_at(int32_t i) {
  return i >= 0 && i < N_PLANNERS ? &planners[i] : NULL;
}

/* The row called `name`, or NULL (also for name == NULL). */
const fp_planner *fp_planner_find(const char *name) {
  for (int32_t i = 0; name && i < N_PLANNERS; i++)
    if (strcmp(name, planners[i].name) == 0)
      return &planners[i];
  return NULL;
}

/* The first row: auto. */
const fp_planner *fp_planner_default(void) {
  return &planners[0];
}

/* Whether opt's bit is in the row's mask. */
int fp_planner_accepts(const fp_planner *pl, fp_planner_option opt) {
  return pl && (unsigned)opt < FP_PLANNER_OPT_COUNT_ &&
         (pl->options & (1u << opt)) != 0;
}

/* The defaults of pl's fusion method and of the solvers. */
void fp_plan_request_init(fp_plan_request *req, const fp_planner *pl) {
  if (!req)
    return;
  pl = pl ? pl : fp_planner_default();
  fp_limits_init(&req->limits);
  fp_fusion_params_init(&req->fus, pl->fusion);
  fp_ilp_params_init(&req->ilp);
}

/* Puts the fields of the options pl does not accept back to their
 * defaults, so that a method reads exactly what its mask says (auto on a
 * small graph would otherwise pass --mip-gap or --lp-out on to the ILP).
 * The peak and fusion-size limits are taken by every row. */
static void drop_unaccepted(const fp_planner *pl, fp_plan_request *r) {
  fp_plan_request d;
  fp_plan_request_init(&d, pl);
#define DROP_(opt, field)                                                      \
  if (!fp_planner_accepts(pl, FP_PLANNER_OPT_I_##opt))                         \
    r->field = d.field;
  DROP_(OBJECTIVE, ilp.objective)
  DROP_(TRAFFIC_LIMIT, limits.traffic)
  DROP_(LAMBDA, ilp.lambda)
  DROP_(WINDOW, ilp.window)
  DROP_(MIP_GAP, ilp.mip_gap)
  DROP_(GAP, ilp.gap)
  DROP_(GAP2, ilp.gap2)
  DROP_(LP_OUT, ilp.lp_out)
  DROP_(MPS_OUT, ilp.mps_out)
  DROP_(TIME_LIMIT, ilp.time_limit_s)
  DROP_(JOBS, ilp.jobs)
  DROP_(SEED, ilp.seed)
  DROP_(START, ilp.n_starts)
  DROP_(ORDER, fus.order)
#undef DROP_
}

/* Runs the row on a copy of *req whose fusion method is the row's, whose
 * unaccepted options are at their defaults, and whose method parameters
 * carry req->limits. */
fp_status fp_planner_run(const fp_planner *pl, const fp_graph *g,
                         const fp_plan_request *req, fp_plan *out,
                         fp_metrics *m, fp_error *err) {
  if (!pl || !fp_graph_is_finalized(g) || !req || !out)
    return fp_error_set(err, FP_EARG,
                        "planner: needs a method, a finalized graph, a "
                        "request and a plan");
  fp_plan_request r = *req;
  r.fus.method = pl->fusion;
  drop_unaccepted(pl, &r);
  r.fus.limits = r.ilp.limits = r.limits;
  return pl->run(g, &r, out, m, err);
}
