/*
 * solver.h -- exact planning: the GLPK integer program (fp_ilp_solve) and
 * exhaustive enumeration for tiny graphs (fp_exhaustive), which tests use
 * as the reference for the ILP.
 *
 * Both choose fusion and order together.  Both return plans that pass
 * fp_plan_check, with metrics from the evaluator; the objective they
 * report is the evaluator's figure for the returned plan.  glpk.h is
 * included only under solver/.
 */
#ifndef FP_SOLVER_H
#define FP_SOLVER_H

#include <signal.h>
#include <stdint.h>

#include "../model/eval.h"
#include "../model/graph.h"
#include "../model/limits.h"
#include "../model/plan.h"
#include "../model/status.h"

/* X(name, string) */
#define FP_OBJECTIVE_MAP(X)                                                    \
  X(TRAFFIC, "traffic")                                                        \
  X(PEAK, "peak")                                                              \
  X(WEIGHTED, "weighted")

typedef enum fp_objective {
#define FP_OBJECTIVE_ENUM_(name, str) FP_OBJECTIVE_##name,
  FP_OBJECTIVE_MAP(FP_OBJECTIVE_ENUM_)
#undef FP_OBJECTIVE_ENUM_
      FP_OBJECTIVE_COUNT_
} fp_objective;

const char *fp_objective_name(fp_objective o);
int fp_objective_parse(const char *s); /* -1 if unknown */

/* Progress report, passed to the progress callback (never printed by the
 * library).  NaN where unknown. */
typedef struct fp_ilp_progress {
  double elapsed_s;
  double incumbent; /* objective of the best plan so far */
  double bound;     /* best proven lower bound */
  double gap;       /* (incumbent - bound) / incumbent */
  int64_t nodes;    /* branch-and-bound nodes so far (auto: windows
                       solved) */
  uint64_t traffic_bytes, peak_bytes; /* auto: the current plan's figures
                                         (0 when not reported) */
} fp_ilp_progress;

#define FP_ILP_DEFAULT_TIME_LIMIT 10.0 /* seconds, wall clock, all phases */
#define FP_ILP_WINDOW_EXACT (-1)       /* no window: the exact model */
#define FP_ILP_WINDOW_AUTO                                                     \
  (-2) /* exact up to FP_ILP_EXACT_NODES                                       \
          nodes, else FP_ILP_AUTO_WINDOW */
#define FP_ILP_DEFAULT_WINDOW FP_ILP_WINDOW_AUTO
#define FP_ILP_EXACT_NODES 40
#define FP_ILP_AUTO_WINDOW 4
#define FP_EXHAUSTIVE_MAX_NODES 10
#define FP_ILP_DEFAULT_LEVELS 2 /* the objective, then the other figure */
/* Relative gap tolerances of the two lexicographic levels (docs/solver.md,
 * "Gap tolerances and stop reasons"): the objective is solved to
 * optimality by default; the other figure among the objective's optima
 * to 1e-3, 5 MB on a 5 GB peak: below the 20 MiB segments and 2 MiB
 * rounding in which PyTorch's CUDA caching allocator takes memory, so no
 * run could tell the difference. */
#define FP_ILP_DEFAULT_GAP 0.0
#define FP_ILP_DEFAULT_GAP2 1e-3

/* Parameters, in the manner of glp_iocp: fp_ilp_params_init, then edit. */
typedef struct fp_ilp_params {
  fp_objective objective;       /* default TRAFFIC */
  fp_limits limits;             /* every plan has peak <= limits.peak (the
                                   eager plan's by default), traffic <=
                                   limits.traffic and groups of at most
                                   limits.max_fusion_size nodes */
  double lambda;                /* WEIGHTED: minimize traffic + lambda * peak */
  double time_limit_s;          /* wall clock for the whole solve, > 0 */
  double mip_gap;               /* ilp: GLPK's own relative gap on the first
                                   level (default 0; the older form of gap) */
  double gap;                   /* the first level (the objective) counts as
                                   done once (value - bound) / value <= gap;
                                   0 <= gap < 1, default FP_ILP_DEFAULT_GAP */
  double gap2;                  /* the same for the second level (the other
                                   figure among the first level's answers);
                                   default FP_ILP_DEFAULT_GAP2 */
  int32_t window;               /* >= 0: each node within +-window steps of its
                                   warm-start step (optimal only within that
                                   neighbourhood); FP_ILP_WINDOW_EXACT: the exact
                                   model; FP_ILP_WINDOW_AUTO (default) */
  const fp_plan *warm_start;    /* optional legal plan; default: the best
                                   heuristic plan meeting the limits */
  const fp_plan *const *starts; /* optional: n_starts more plans (e.g.
                                   the compiler's own) that join the
                                   heuristics as start candidates; each must
                                   pass fp_plan_check (FP_EARG otherwise).
                                   The answer is never worse than any of
                                   them that meets the limits */
  int32_t n_starts;
  const char *lp_out;  /* optional: write the model (CPLEX LP) */
  const char *mps_out; /* optional: write the model (free MPS) */
  void (*progress)(const fp_ilp_progress *p, void *ctx); /* optional */
  void *progress_ctx;
  int64_t node_limit; /* >= 0: stop branch-and-bound after this many nodes
                         (0 = no limit); a limit in work, not time, keeps
                         results reproducible */
  const volatile sig_atomic_t *cancel; /* optional: the solve stops, with
                                          the best plan so far, once
                                          *cancel != 0 (e.g. set from a
                                          SIGINT handler) */
  int32_t levels; /* lexicographic levels: 2 (default) minimizes the other
                     figure among the objective's optima once the first
                     is proven; 1 stops at the first (auto's windows:
                     its own second phase does that on the whole plan) */
  /* --method auto (fp_auto_solve) only: */
  int32_t jobs;       /* >= 1: windows solved in parallel (default 1) */
  uint64_t seed;      /* window placement; same seed, jobs 1 and no time-limit
                         cut: same plan */
  double known_bound; /* NaN (default), or a lower bound on the objective
                         already known to hold for every legal plan within
                         the limits: the search takes it instead of
                         computing its own (fp_pareto's common bound);
                         it raises it with the pairs of nodes that the
                         peak limit keeps apart (fp_peak_restrict) */
} fp_ilp_params;

/* Fills `prm` with the defaults above. */
void fp_ilp_params_init(fp_ilp_params *prm);

/* Checks parameters; FP_EARG naming the field. */
fp_status fp_ilp_params_check(const fp_ilp_params *prm, fp_error *err);

/* Solves the integer program and writes the best plan found into `out`
 * (solver record: method "ilp", status optimal | feasible |
 * heuristic-fallback, objective = the evaluator's figure, bound, gap,
 * time_s, nodes, rows, cols, objective2, bound2, gap2, stop_reason; GLPK
 * stops each level at its tolerance, prm->gap and prm->gap2) and its metrics
 * into *m (may be NULL). Where traffic counts (objective traffic or weighted,
 * or a traffic limit) the model is strengthened with the cluster cuts of
 * fp_lower_bound (docs/solver.md, "Bounds"), on up to 10% of the time.
 * Never returns a plan worse than its warm start.  FP_EINFEASIBLE (with
 * the smallest peak known in the message) when no plan meets the limits;
 * FP_EARG, FP_ENOMEM, FP_EIO (model export). */
fp_status fp_ilp_solve(const fp_graph *g, const fp_ilp_params *prm,
                       fp_plan *out, fp_metrics *m, fp_error *err);

/* Defaults of the large-neighbourhood search (fp_auto_solve). */
#define FP_AUTO_DEFAULT_JOBS 1
#define FP_AUTO_DEFAULT_SEED 1
#define FP_AUTO_WINDOW_START 16 /* nodes per window at first */
#define FP_AUTO_WINDOW_MIN 6    /* adaptive window size range */
#define FP_AUTO_WINDOW_MAX 40
#define FP_AUTO_WINDOW_NODE_LIMIT 1000 /* branch-and-bound nodes per window */
#define FP_AUTO_MAX_JOBS 256

/* Plans the whole graph within prm->time_limit_s (`--method auto`, the
 * default): graphs of at most FP_ILP_EXACT_NODES nodes go to the exact
 * ILP, and graphs of up to 150 nodes get it first on 30% of the time
 * when the model's size says its root LP fits in that time (its answer
 * is auto's when it proves the optimum).  Otherwise the
 * search starts from the best plan meeting the limits among the
 * heuristics, the starts and that exact attempt, and improves it by
 * re-solving windows of consecutive steps as small exact ILPs with
 * everything outside fixed (docs/solver.md), accepting a window's plan
 * only when the evaluator says the whole plan got better; passes that
 * improve nothing raise the windows' size and budget.  Stops at the time
 * limit, on *prm->cancel, once the objective is within prm->gap of the
 * bound and the other figure within prm->gap2 of its own bound, or when
 * two passes at the top effort improve nothing; the plan is legal at
 * every moment, and never worse than the start.  solver record: method
 * "auto", status optimal | feasible, bound (a lower bound valid for every
 * plan, docs/solver.md) and gap, the second level's objective2, bound2
 * and gap2, and stop_reason.  Fails as fp_ilp_solve (FP_EINFEASIBLE with the
 * smallest known peak, FP_EARG, FP_ENOMEM), or FP_EINTERNAL when a window's
 * accounting disagrees with the evaluator (a bug, never expected). */
fp_status fp_auto_solve(const fp_graph *g, const fp_ilp_params *prm,
                        fp_plan *out, fp_metrics *m, fp_error *err);

/* A lower bound on prm's objective valid for every legal plan of g within
 * prm's peak limit, in the objective's units (bytes for traffic and
 * peak): the structural bounds of fp_graph_bounds, strengthened per
 * buffer by the paths that keep a reader out of its writer's group and by
 * the exact least traffic of clusters (docs/solver.md), on the graph with the
 * pairs that the limit forbids declared unfusible (fp_peak_restrict).  Spends
 * no more than `time_s` seconds (0: structural only).  FP_ENOMEM; FP_EARG
 * when time_s is NaN, infinite or negative, prm fails fp_ilp_params_check,
 * bound is NULL, or g is NULL or not finalized. */
fp_status fp_lower_bound(const fp_graph *g, const fp_ilp_params *prm,
                         double time_s, double *bound, fp_error *err);

/* Enumerates every legal ordered grouping (graphs of at most
 * FP_EXHAUSTIVE_MAX_NODES nodes) and returns one that is optimal for the
 * objective and limits of `prm` (time, window, warm start and export are
 * ignored).  solver.status "optimal".  FP_ELIMIT for larger graphs,
 * FP_EINFEASIBLE when no plan meets the limits, FP_ENOMEM. */
fp_status fp_exhaustive(const fp_graph *g, const fp_ilp_params *prm,
                        fp_plan *out, fp_metrics *m, fp_error *err);

/* The value of the objective for metrics m (traffic, peak, or traffic +
 * lambda * peak). */
double fp_objective_value(const fp_ilp_params *prm, const fp_metrics *m);

/* Whether metrics m meet the peak and traffic limits of prm, given the
 * eager peak (which limits.peak FP_LIMITS_PEAK_EAGER stands for). */
int fp_meets_limits(const fp_ilp_params *prm, const fp_metrics *m,
                    uint64_t eager_peak);

/* One point of a traffic-vs-peak front. */
typedef struct fp_pareto_point {
  uint64_t peak_limit; /* the limit this point was solved under */
  fp_metrics m;        /* the plan found (evaluator's figures) */
  char status[32];     /* "optimal" only when bound reaches the traffic;
                          else the status of the solve that found the plan */
  double bound;        /* lower bound on the traffic of every legal plan
                          with peak <= peak_limit (and within the traffic
                          limit, if any) */
  double gap;          /* (traffic - bound) / traffic */
  double time_s;       /* seconds spent on this point, all solves */
  int32_t solves;      /* 1 + the re-solves of the refinement */
  int dominated;       /* another point has <= peak and < traffic, or
                          < peak and <= traffic */
} fp_pareto_point;

/* The traffic-vs-peak front: the lowest peak P0 (objective peak), the
 * lowest traffic with no peak limit and its peak P1, then `npoints` solves
 * of objective traffic under peak limits spread evenly over [P0, P1], each
 * warm-started from the previous one, with half of prm->time_limit_s (the
 * budget of the whole call).  The other half re-solves the point with the
 * largest gap, from its own plan with a new seed, until every point is
 * proven, stalls (two re-solves without a better plan or bound), or the
 * budget or prm->cancel ends it.  A point takes the plan of a point with a
 * smaller limit when that is better, and the bound of a point with a
 * larger limit when that is higher (both are valid there).
 * prm->objective and the peak limit are set per solve; `pl` (a planner.h
 * row flagged FP_PLANNER_PARETO: auto, ilp, exhaustive) solves every
 * point.  out must hold npoints entries (npoints >= 2).  FP_EARG (also
 * for a planner that cannot drive the sweep), FP_ENOMEM, or what a solve
 * fails with. */
struct fp_planner;
fp_status fp_pareto(const fp_graph *g, const fp_ilp_params *prm,
                    int32_t npoints, const struct fp_planner *pl,
                    fp_pareto_point *out, fp_error *err);

/* The version of the GLPK library linked in ("5.0"). */
const char *fp_glpk_version(void);

#endif /* FP_SOLVER_H */
