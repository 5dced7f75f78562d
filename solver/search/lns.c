/*
 * lns.c -- `--method auto`: large-neighbourhood search.  The plan is
 * improved one window of consecutive steps at a time (or of steps linked
 * by the dataflow, first made consecutive: gathered windows); each window
 * is cut out as a graph of its own (window.h), re-solved as an exact ILP
 * with a work limit, and spliced back when the evaluator says the whole
 * plan got better.
 *
 * Between passes of windows, single-node moves (moves.c) put a node into
 * any group it shares a buffer with, however far apart: a late kernel
 * that recomputes from a saved activation joins the early kernel that
 * reads the same tensor (mixer_b16_224 forward), which no window holds.
 *
 * Invariant: L->cur is a legal plan meeting the limits at every moment
 * (but inside gather_try, which holds the moved plan there for one window
 * and always puts back the plan before the move unless it is beaten),
 * L->cur_m its evaluator figures, L->step and L->tl its per-node steps and
 * timeline; so the search can stop anywhere (time limit, cancel) and
 * return it.  A window is accepted only when the whole plan's objective
 * drops, or stays and the other metric drops, so the search never cycles.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heuristics/heuristics.h"
#include "model/args.h"
#include "model/util.h"
#include "solver/bound/bound.h"
#include "solver/bound/branch.h"
#include "solver/bound/forced.h"
#include "solver/bound/least_traffic.h"
#include "solver/common/services.h"
#include "solver/mip/ilp_model.h"
#include "solver/search/moves.h"
#include "solver/window/window.h"

/* Share of the time limit one window may take at most, and its bounds. */
#define WINDOW_TIME_SHARE 0.02
#define WINDOW_TIME_MIN 0.25
#define WINDOW_TIME_MAX 2.0
/* Time kept back for the final evaluation and the record. */
#define TIME_RESERVE_SHARE 0.02
/* Share of the time limit for the global bound: on real graphs it is
 * what proves the plan (near-)optimal, so it gets a good part. */
#define BOUND_TIME_SHARE 0.25
/* Passes over the plan in a row without an improvement before the
 * search raises its effort (or stops, at the top level). */
#define IDLE_PASSES 2
/* The search opens with a sweep: two passes of small windows of fixed
 * size, the second's boundaries halfway between the first's, so that
 * every pair of neighbouring groups shares a small window once.  Small
 * windows prove in milliseconds what a larger window's model may not
 * find in its budget (moving one node between two neighbouring groups:
 * volo_d1_224 backward), and no group boundary is left unvisited by the
 * random offsets of the adaptive passes that follow. */
#define SWEEP_PASSES 2
#define SWEEP_NODES 8
/* Share of the time limit one pass of single-node moves may take: each
 * move costs one evaluation of the whole plan, and a 10,000-node graph
 * has about a hundred thousand candidates. */
#define MOVE_TIME_SHARE 0.05
/* Effort levels: each doubles the time and branch-and-bound nodes a
 * window may take and widens the windows, so that time left over goes
 * where the bound says there is still something to gain instead of being
 * returned unused (a 185-node training graph stopped after 7.5 s of 120 s
 * with a 27.5% gap at the first level). */
#define EFFORT_LEVELS 4
/* Graphs up to this size may first get the exact model, with this share
 * of the time: when it proves the optimum, that is the answer; when it
 * does not, its plan joins the starts of the window search.  Whether to
 * try is decided by the model's size (exact_worth_trying). */
#define EXACT_TRY_NODES 150
#define EXACT_TRY_SHARE 0.3
/* Graphs of at most FP_ILP_EXACT_NODES always try it, on this share: the
 * window search and the cluster bound prove what the exact model alone
 * did not in 10 s on 36-node transformers. */
#define EXACT_SMALL_SHARE 0.5
/* Objective traffic on graphs of at most SOLVER_LT_MAX_NODES nodes: the
 * exact search of solver_exact_traffic goes first, on this share.  It
 * gives the lexicographic optimum within the peak limit (traffic, then
 * peak), or a bound: on generated 36- and 50-node graphs it ends in
 * 0.01-4 s where the exact ILP and the window search left gaps of 1.6-4%. */
#define EXACT_SEARCH_SHARE 0.1
/* ... and once more when the window search first stops improving, below
 * the plan it left (a tighter limit: far fewer states), on this share of
 * the time left. */
#define EXACT_AGAIN_SHARE 0.6
/* GLPK's root LP on the exact model takes about this many seconds per
 * squared row (measured on this project's machine: 25 s for the 14,520
 * rows of a 50-node random graph; the hardest kind: transformer and mlp
 * models of 6,400-7,200 rows were proved in under 10 s); the exact model
 * is tried when its root LP should fit in its share. */
#define LP_SECONDS_PER_ROW2 1.2e-7
/* Share of the time limit the step bound (solver_step_bound) may take
 * each time the plan's peak step moves: 0.2-0.6 s where it proves the
 * plan (efficientnet_b0.fwd, mobilenetv3_large_100.fwd, mobilevit_s.fwd),
 * about 2 s where it cannot (levit_128.fwd, 576 bytes short). */
#define STEP_BOUND_SHARE 0.1
/* Share of the time limit the branch on fusions (solver_branch_bound)
 * may take, once a run: mixer_b16_224.fwd's proof takes 2.1 s, so a 10 s
 * limit (the gold manifest's, the dominance table's) needs a quarter. */
#define BRANCH_BOUND_SHARE 0.25
/* ... at most this many times a run: where the peak step keeps moving
 * (large graphs), each try would take that share again. */
#define STEP_BOUND_TRIES 3
/* Groups the exact least-traffic search may examine on one window before
 * its ILP runs instead (about 0.05 s). */
#define WINDOW_SEARCH_BUDGET 2000000

typedef struct lns {
  const fp_graph *g;
  const fp_ilp_params *prm;
  int32_t k; /* effective max fusion size */
  uint64_t eager_peak, peak_cap;
  double t0, deadline, win_time, last_report;
  fp_plan *cur, *trial;
  fp_plan *gathered;      /* scratch for sub_gather */
  const fp_metrics *base; /* what a window must beat: &cur_m, or the plan
                             before a gather moved steps */
  fp_metrics cur_m;
  fp_step *tl;   /* timeline of cur (node_count entries) */
  int32_t *step; /* step of every node in cur */
  sub_scratch scr;
  int32_t W;          /* target nodes per window (adaptive) */
  int32_t w_max;      /* its upper end at this effort */
  int64_t node_limit; /* branch-and-bound nodes per window */
  int effort;         /* 0 .. EFFORT_LEVELS - 1 */
  int64_t solved, accepted;
  int64_t glpk_peak; /* most bytes GLPK's heap held, over all windows */
  double bound;      /* lower bound on the objective, valid for every plan */
  double bound2;     /* lower bound on the second level (the other figure
                        among plans at least as good at the first); NaN
                        until second_bound ran */
  uint64_t rng;
  bool sweeping;      /* the opening sweep: fixed window size */
  int32_t first;      /* the last pass's first-window length */
  bool second;        /* passes on the other figure, the objective held (the
                         lexicographic second level) */
  solver_moves moves; /* candidate single-node moves, made on first use */
  bool moves_made;
  int64_t moves_clean; /* L->accepted when a whole pass of moves kept
                          none (-1: never): no use trying again until
                          some window changes the plan */
  int64_t peak_clean;  /* the same for a whole peak pass */
  bool both_proven;    /* the exact search gave the lexicographic optimum */
  bool exact_tried;    /* exact_again ran */
  int32_t step_x;      /* the node the step bound last priced (-1: none) */
  int step_tries;      /* step bounds computed (at most STEP_BOUND_TRIES) */
  bool branch_tried;   /* solver_branch_bound ran */
} lns;

/* A window to try: its first node, and how much it could gain. */
typedef struct window_ref {
  int32_t anchor;
  uint64_t score;
} window_ref;

/* xorshift64*: window placement only; deterministic for a seed. */
static uint64_t next_random(lns *L) {
  L->rng ^= L->rng >> 12;
  L->rng ^= L->rng << 25;
  L->rng ^= L->rng >> 27;
  return L->rng * 0x2545F4914F6CDD1DULL;
}

/* True past the deadline or once the caller raised the cancel flag. */
static bool out_of_time(const lns *L) {
  return fp_clock_now() > L->deadline ||
         (L->prm->cancel && *L->prm->cancel != 0);
}

/* The current plan's second figure: peak for objective traffic, traffic
 * for objective peak (weighted has one level). */
static double second_value(const lns *L) {
  return L->prm->objective == FP_OBJECTIVE_TRAFFIC
             ? (double)L->cur_m.peak_bytes
             : (double)L->cur_m.traffic_bytes;
}

/* Whether the first level is still open: above the bound by more than
 * the tolerance prm->gap. */
static bool level1_open(const lns *L) {
  double v = fp_objective_value(L->prm, &L->cur_m);
  return v > L->bound && solver_rel_gap(v, L->bound) > L->prm->gap;
}

/* Whether the second level is still open: no bound yet, or above it by
 * more than prm->gap2. */
static bool level2_open(const lns *L) {
  double g2 = solver_rel_gap(second_value(L), L->bound2);
  return isnan(g2) || (g2 > 0 && g2 > L->prm->gap2);
}

/* Steps and timeline of the current plan.  FP_OK or FP_ENOMEM. */
static fp_status refresh(lns *L, fp_error *err) {
  fp_status st = fp_plan_eval_k(L->g, L->cur, L->k, &L->cur_m, L->tl, err);
  for (int32_t t = 0; st == FP_OK && t < fp_plan_group_count(L->cur); t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(L->cur, t, &len);
    for (int32_t i = 0; i < len; i++)
      L->step[grp[i]] = t;
  }
  return st;
}

/* Calls the progress callback (at most every 0.2 s unless `force`) with
 * the current plan's figures, the bound and the gap. */
static void report(lns *L, bool force) {
  double now = fp_clock_now();
  if (!L->prm->progress || (!force && now - L->last_report < 0.2))
    return;
  L->last_report = now;
  fp_ilp_progress pr = {
      now - L->t0,        fp_objective_value(L->prm, &L->cur_m),
      L->bound,           NAN,
      L->solved,          L->cur_m.traffic_bytes,
      L->cur_m.peak_bytes};
  if (pr.incumbent > 0)
    pr.gap = (pr.incumbent - pr.bound) / pr.incumbent;
  L->prm->progress(&pr, L->prm->progress_ctx);
}

/* Second-level passes: the window keeps its traffic (objective traffic)
 * or keeps the whole plan's peak (objective peak) and minimizes the other
 * figure.  false when there is nothing to hold (weighted). */
static bool second_level_params(const lns *L, const sub_problem *S,
                                fp_ilp_params *sp) {
  if (L->prm->objective == FP_OBJECTIVE_TRAFFIC) {
    sp->objective = FP_OBJECTIVE_PEAK;
    if (S->current_m.traffic_bytes < sp->limits.traffic)
      sp->limits.traffic = S->current_m.traffic_bytes;
    return true;
  }
  if (L->prm->objective != FP_OBJECTIVE_PEAK ||
      L->cur_m.peak_bytes <= S->const_live)
    return false;
  sp->objective = FP_OBJECTIVE_TRAFFIC;
  uint64_t hold = L->cur_m.peak_bytes - S->const_live;
  if (sp->limits.peak == FP_NO_LIMIT || hold < sp->limits.peak)
    sp->limits.peak = hold;
  return true;
}

/* The parameters of a window's ILP: the whole problem's, with limits
 * shifted by the window's constants.  false when the window has no room
 * (its constant bytes alone reach the peak limit). */
static bool window_params(const lns *L, const sub_problem *S,
                          fp_ilp_params *sp) {
  *sp = *L->prm;
  sp->window = FP_ILP_WINDOW_EXACT;
  sp->warm_start = S->current;
  sp->starts = NULL; /* plans of the whole graph, not of the window */
  sp->n_starts = 0;
  sp->node_limit = L->node_limit;
  sp->progress = NULL;
  sp->lp_out = sp->mps_out = NULL;
  /* the sub-graph carries L->k */
  sp->limits.max_fusion_size = FP_LIMITS_GRAPH_FUSION;
  sp->jobs = 1;
  /* A window's own second level would spend the whole window budget on
   * the other figure of a few steps; auto's second phase (L->second)
   * lowers it on the whole plan instead. */
  sp->levels = 1;
  double left = L->deadline - fp_clock_now();
  sp->time_limit_s = left < L->win_time ? left : L->win_time;
  if (sp->time_limit_s < 0.05)
    return false;
  if (L->peak_cap != FP_NO_LIMIT) {
    if (L->peak_cap <= S->const_live)
      return false;
    sp->limits.peak = L->peak_cap - S->const_live;
  } else {
    sp->limits.peak = FP_NO_LIMIT;
  }
  if (L->prm->limits.traffic != FP_NO_LIMIT)
    sp->limits.traffic = L->prm->limits.traffic - S->const_traffic;
  if (L->second) /* hold the objective, lower the other figure */
    return second_level_params(L, S, sp);
  return true;
}

/* Grows or shrinks the window after a solve: proved optimal with work to
 * spare -> one node larger; not proved -> a fifth smaller.  Additive
 * growth and multiplicative shrinking keep most windows at a size that
 * proves: an unproved window costs its whole budget and rarely helps. */
static void adapt(lns *L, const fp_solver_info *si) {
  if (L->sweeping)
    return; /* the sweep keeps its size: its two passes interleave */
  bool proved = strcmp(si->status, "optimal") == 0;
  if (proved && si->nodes < L->node_limit / 4 &&
      si->time_s < 0.25 * L->win_time)
    L->W = L->W + 1 > L->w_max ? L->w_max : L->W + 1;
  else if (!proved)
    L->W = L->W - L->W / 5 - 1 < FP_AUTO_WINDOW_MIN ? FP_AUTO_WINDOW_MIN
                                                    : L->W - L->W / 5 - 1;
}

/* Splices the window's plan q in and keeps it when the whole plan gets
 * better; *accepted says so.  The evaluator's figures must equal the
 * prediction from the window's constants (window.h), or it is a bug. */
static fp_status try_splice(lns *L, const sub_problem *S, int32_t s0,
                            int32_t s1, const fp_plan *q, const fp_metrics *qm,
                            bool *accepted, fp_error *err) {
  fp_metrics pred = L->cur_m, m;
  pred.traffic_bytes = S->const_traffic + qm->traffic_bytes;
  pred.kernels = L->cur_m.kernels - (s1 - s0) + qm->kernels;
  pred.peak_bytes = S->const_live + qm->peak_bytes > S->outside_peak
                        ? S->const_live + qm->peak_bytes
                        : S->outside_peak;
  *accepted = false;
  if (!solver_better(L->prm, &pred, L->base ? L->base : &L->cur_m) ||
      !fp_meets_limits(L->prm, &pred, L->eager_peak))
    return FP_OK;
  fp_status st = sub_splice(S, L->cur, s0, s1, q, L->trial, err);
  if (st == FP_OK)
    st = fp_plan_eval_k(L->g, L->trial, L->k, &m, NULL, err);
  if (st != FP_OK)
    return st == FP_ENOMEM
               ? st
               : fp_error_set(err, FP_EINTERNAL, "auto: spliced plan: %s",
                              err ? err->msg : "");
  if (m.traffic_bytes != pred.traffic_bytes || m.peak_bytes != pred.peak_bytes)
    return fp_error_set(
        err, FP_EINTERNAL,
        "auto: window [%d, %d) predicted traffic %llu peak "
        "%llu, the evaluator says %llu and %llu",
        (int)s0, (int)s1, (unsigned long long)pred.traffic_bytes,
        (unsigned long long)pred.peak_bytes,
        (unsigned long long)m.traffic_bytes, (unsigned long long)m.peak_bytes);
  fp_plan *t = L->cur;
  L->cur = L->trial;
  L->trial = t;
  *accepted = true;
  L->accepted++;
  return refresh(L, err);
}

/* One window's ILP: prepared against the current plan, solved (possibly
 * on another thread: it touches nothing but its own fields), applied. */
typedef struct window_job {
  int32_t anchor;  /* first node of the window's first group */
  int32_t groups;  /* groups in the window */
  int64_t version; /* L->accepted when it was prepared */
  bool ready;      /* has a model to solve */
  sub_problem S;
  fp_ilp_params sp;
  fp_plan *q;
  fp_metrics qm;
  fp_status st;
  fp_error err;
} window_job;

/* Whether the window's exact model is one fp_ilp_solve would refuse for
 * its size (too slow to stop on time, or too large for memory): larger
 * windows at a high effort can reach that. */
static bool window_too_large(const sub_problem *S, const fp_ilp_params *sp) {
  ilp_model M;
  int v = ilp_size(&M, S->g, sp, NULL);
  ilp_free(&M);
  return v == ILP_BUILD_TOO_SLOW || v == ILP_BUILD_TOO_BIG;
}

/* Cuts window [s0, s1) out of the current plan into J.  FP_OK (J->ready
 * false when the window has no room to improve) or an error. */
static fp_status prepare(lns *L, int32_t s0, int32_t s1, window_job *J,
                         fp_error *err) {
  memset(J, 0, sizeof *J);
  int32_t len;
  J->anchor = fp_plan_group(L->cur, s0, &len)[0];
  J->groups = s1 - s0;
  J->version = L->accepted;
  fp_status st = sub_window(&J->S, &L->scr, L->g, L->cur, L->step, L->tl,
                            &L->cur_m, L->k, s0, s1, err);
  if (st != FP_OK)
    return st;
  if (!(J->q = fp_plan_create()))
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  J->ready = window_params(L, &J->S, &J->sp);
  if (J->ready && window_too_large(&J->S, &J->sp)) {
    J->ready = false; /* its ILP would be refused: smaller windows next */
    L->W = L->W - L->W / 5 - 1 < FP_AUTO_WINDOW_MIN ? FP_AUTO_WINDOW_MIN
                                                    : L->W - L->W / 5 - 1;
  }
  return FP_OK;
}

/* Records in the job's plan that the exact search proved it. */
static void exact_record(window_job *J, double t0) {
  fp_solver_info *si = fp_plan_solver(J->q);
  fp_solver_info_init(si);
  snprintf(si->method, sizeof si->method, "least-traffic");
  snprintf(si->status, sizeof si->status, "optimal");
  si->objective = si->bound = (double)J->qm.traffic_bytes;
  si->time_s = fp_clock_now() - t0;
}

/* A traffic window solved without GLPK (thread-safe): its least traffic
 * from the exact search (least_traffic.h), which ignores the peak.  When
 * the window's groups already move that little, they are optimal; when
 * the search's plan moves less and, its groups in the best order, fits
 * the window's peak limit, it is the optimum under the limit.  true when
 * either holds (the job's result is set), false to run the ILP: the
 * search ran out of budget or its plan does not fit. */
static bool exact_window(window_job *J) {
  double t0 = fp_clock_now();
  solver_lt_result r;
  if (J->sp.objective != FP_OBJECTIVE_TRAFFIC || !J->S.g)
    return false;
  /* Only plans under the window's current traffic matter: the search
   * below it skips the states that cannot get there (least_traffic.h),
   * and when none can, the current groups are optimal (r.traffic is then
   * that limit). */
  J->st = solver_least_traffic_below(
      J->S.g, fp_graph_max_fusion_size(J->S.g), J->S.current_m.traffic_bytes,
      WINDOW_SEARCH_BUDGET, t0 + J->sp.time_limit_s / 2, J->sp.cancel, J->q, &r,
      &J->err);
  if (J->st != FP_OK || !r.solved)
    return J->st != FP_OK;
  if (r.traffic >= J->S.current_m.traffic_bytes)
    J->st = fp_plan_copy(J->q, J->S.current, &J->err);
  else
    J->st = fp_plan_reorder(J->S.g, J->q, FP_ORDER_BEST, NULL, &J->err);
  if (J->st == FP_OK)
    J->st = fp_plan_eval(J->S.g, J->q, &J->qm, NULL, &J->err);
  if (J->st != FP_OK)
    return true;
  if (J->qm.traffic_bytes < J->S.current_m.traffic_bytes &&
      J->sp.limits.peak != FP_NO_LIMIT && J->qm.peak_bytes > J->sp.limits.peak)
    return false; /* moves less but does not fit: the ILP decides */
  exact_record(J, t0);
  return true;
}

/* Solves a prepared job into its own fields (thread-safe): the exact
 * search first, then the ILP in the window's time that is left (none
 * left: the job is dropped, as one with no room). */
static void solve_job(window_job *J) {
  double t0 = fp_clock_now();
  if (!J->ready || exact_window(J))
    return;
  J->sp.time_limit_s -= fp_clock_now() - t0;
  if (J->sp.time_limit_s < 0.05)
    J->ready = false;
  else
    J->st = fp_ilp_solve(J->S.g, &J->sp, J->q, &J->qm, &J->err);
}

/* Frees a job and zeroes it for reuse. */
static void job_free(window_job *J) {
  fp_plan_destroy(J->q);
  sub_free(&J->S);
  memset(J, 0, sizeof *J);
}

/* Keeps the job's window plan when the whole plan gets better.  When
 * another window of the batch was accepted since the job was prepared,
 * the window (whose groups are untouched: batches never overlap) is cut
 * again for fresh constants; its sub-graph is the same. */
static fp_status apply(lns *L, window_job *J, bool *improved, fp_error *err) {
  *improved = false;
  if (!J->ready || J->st == FP_EINFEASIBLE) /* the window's plan fits: */
    return FP_OK;                           /* EINFEASIBLE cannot happen */
  if (J->st == FP_EARG) { /* its model is too large to stop on time */
    L->W = L->W - L->W / 5 - 1 < FP_AUTO_WINDOW_MIN ? FP_AUTO_WINDOW_MIN
                                                    : L->W - L->W / 5 - 1;
    return FP_OK;
  }
  if (J->st != FP_OK)
    return fp_error_set(err, J->st, "%s", J->err.msg);
  L->solved++;
  adapt(L, fp_plan_solver_const(J->q));
  if (fp_plan_solver_const(J->q)->glpk_peak_bytes > L->glpk_peak)
    L->glpk_peak = fp_plan_solver_const(J->q)->glpk_peak_bytes;
  int32_t s0 = L->step[J->anchor], s1 = s0 + J->groups;
  if (J->version == L->accepted)
    return try_splice(L, &J->S, s0, s1, J->q, &J->qm, improved, err);
  sub_problem fresh;
  fp_status st = sub_window(&fresh, &L->scr, L->g, L->cur, L->step, L->tl,
                            &L->cur_m, L->k, s0, s1, err);
  if (st == FP_OK && (fresh.n != J->S.n ||
                      memcmp(fresh.to_global, J->S.to_global,
                             (size_t)fresh.n * sizeof *fresh.to_global) != 0))
    st = fp_error_set(err, FP_EINTERNAL, "auto: window [%d, %d) moved", (int)s0,
                      (int)s1);
  if (st == FP_OK)
    st = try_splice(L, &fresh, s0, s1, J->q, &J->qm, improved, err);
  sub_free(&fresh);
  return st;
}

/* Thread body: one job, then this thread's GLPK environment freed. */
static void *job_thread(void *arg) {
  solve_job(arg);
  solver_thread_done(); /* this thread's GLPK environment */
  return NULL;
}

/* Solves the prepared jobs, jobs[0] on this thread and the others on
 * their own. */
static void solve_batch(window_job *jobs, int32_t n) {
  pthread_t tid[FP_AUTO_MAX_JOBS];
  bool started[FP_AUTO_MAX_JOBS] = {false};
  if (n == 0)
    return;
  for (int32_t i = 1; i < n; i++)
    started[i] = pthread_create(&tid[i], NULL, job_thread, &jobs[i]) == 0;
  solve_job(&jobs[0]);
  for (int32_t i = 1; i < n; i++)
    if (started[i])
      pthread_join(tid[i], NULL);
    else
      solve_job(&jobs[i]); /* no thread: solve it here */
}

/* The end of the window that starts at step s0 and holds about L->W
 * nodes (at least one group). */
static int32_t window_end(const lns *L, int32_t s0) {
  int32_t T = fp_plan_group_count(L->cur), nodes = 0, s1 = s0;
  while (s1 < T && (nodes == 0 || nodes < L->W)) {
    int32_t len;
    fp_plan_group(L->cur, s1, &len);
    if (nodes > 0 && nodes + len > L->w_max)
      break;
    nodes += len;
    s1++;
  }
  return s1;
}

/* Traffic the window [s0, s1) might still save: its traffic less its
 * sub-graph's structural bound (0: already optimal for traffic). */
static fp_status window_score(lns *L, int32_t s0, int32_t s1, uint64_t *score,
                              fp_error *err) {
  sub_problem S;
  uint64_t b;
  fp_status st = sub_window(&S, &L->scr, L->g, L->cur, L->step, L->tl,
                            &L->cur_m, L->k, s0, s1, err);
  if (st != FP_OK)
    return st;
  st = fp_graph_traffic_bound(S.g, &b, err);
  *score = st == FP_OK && S.current_m.traffic_bytes > b
               ? S.current_m.traffic_bytes - b
               : 0;
  sub_free(&S);
  return st;
}

/* qsort order of windows: higher score first, then program position. */
static int cmp_score(const void *a, const void *b) {
  const window_ref *x = a, *y = b;
  if (x->score != y->score)
    return x->score < y->score ? 1 : -1;
  return (x->anchor > y->anchor) - (x->anchor < y->anchor);
}

/* The windows of one pass: the plan cut every L->W nodes after a random
 * offset, best score first; the window holding the peak step leads when
 * the peak is what limits the plan.  *count windows into *out (malloc). */
static fp_status plan_pass(lns *L, window_ref **out, int32_t *count,
                           fp_error *err) {
  int32_t T = fp_plan_group_count(L->cur), n = 0;
  window_ref *w = malloc(((size_t)T + 1) * sizeof *w);
  if (!w)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  int32_t s0 = 0, first = (int32_t)(next_random(L) % (uint64_t)L->W);
  if (L->sweeping && L->first > 0) /* halfway between the last pass's */
    first = (L->first + L->W / 2) % L->W;
  L->first = first > 0 ? first : L->W;
  fp_status st = FP_OK;
  while (st == FP_OK && s0 < T) {
    int32_t W = L->W, s1;
    if (n == 0 && first > 0)
      L->W = first; /* the first window is shorter: boundaries move */
    s1 = window_end(L, s0);
    L->W = W;
    int32_t len;
    w[n].anchor = fp_plan_group(L->cur, s0, &len)[0];
    st = window_score(L, s0, s1, &w[n].score, err);
    bool peak_bound = L->prm->objective != FP_OBJECTIVE_TRAFFIC ||
                      L->cur_m.peak_bytes == L->peak_cap || L->second;
    if (peak_bound && L->cur_m.peak_step >= s0 && L->cur_m.peak_step < s1)
      w[n].score = UINT64_MAX;
    n++;
    s0 = s1;
  }
  qsort(w, (size_t)n, sizeof *w, cmp_score);
  *out = w;
  *count = n;
  return st;
}

/* Prepares up to prm->jobs windows from w[*next], which do not overlap,
 * into jobs; returns how many.  Windows that cannot save traffic end the
 * pass (the list is sorted). */
static fp_status next_batch(lns *L, const window_ref *w, int32_t count,
                            int32_t *next, window_job *jobs, int32_t *n,
                            fp_error *err) {
  int32_t lo[FP_AUTO_MAX_JOBS], hi[FP_AUTO_MAX_JOBS];
  fp_status st = FP_OK;
  *n = 0;
  while (st == FP_OK && *next < count && *n < L->prm->jobs) {
    const window_ref *r = &w[*next];
    if (r->score == 0 && L->prm->objective == FP_OBJECTIVE_TRAFFIC &&
        !L->second) {
      *next = count;
      break;
    }
    int32_t s0 = L->step[r->anchor], s1 = window_end(L, s0);
    for (int32_t i = 0; i < *n; i++)
      if (s0 < hi[i] && lo[i] < s1)
        return FP_OK; /* overlaps: it starts the next batch */
    lo[*n] = s0;
    hi[*n] = s1;
    st = prepare(L, s0, s1, &jobs[*n], err);
    ++*n;
    ++*next;
  }
  return st;
}

/* One pass; *improved when some window was accepted. */
static fp_status run_pass(lns *L, bool *improved, fp_error *err) {
  window_ref *w = NULL;
  int32_t count = 0, next = 0;
  window_job *jobs = calloc((size_t)L->prm->jobs, sizeof *jobs);
  *improved = false;
  fp_status st = jobs ? plan_pass(L, &w, &count, err)
                      : fp_error_set(err, FP_ENOMEM, "out of memory");
  while (st == FP_OK && next < count && !out_of_time(L) &&
         (L->second ? level2_open(L) : level1_open(L))) {
    int32_t n = 0;
    st = next_batch(L, w, count, &next, jobs, &n, err);
    if (st == FP_OK)
      solve_batch(jobs, n);
    for (int32_t i = 0; i < n; i++) {
      bool better_plan = false;
      if (st == FP_OK)
        st = apply(L, &jobs[i], &better_plan, err);
      *improved |= better_plan;
      job_free(&jobs[i]);
    }
    report(L, false);
  }
  free(w);
  free(jobs);
  return st;
}

/* One gathered window (window.h): the steps near `seed` along the
 * dataflow are made consecutive, re-solved, and kept only when the
 * result beats the plan before the move (L->base); otherwise the plan
 * goes back.  Reaches fusions and orders that no window of consecutive
 * steps holds (a consumer far from its producer, interleaved chains).
 * The gathered nodes are stamped in `covered`. */
static fp_status gather_try(lns *L, int32_t seed, char *covered, bool *improved,
                            fp_error *err) {
  int32_t s0, s1;
  fp_metrics before = L->cur_m;
  window_job J;
  *improved = false;
  fp_status st = sub_gather(L->g, L->cur, L->step, seed, L->W, L->w_max,
                            L->gathered, &s0, &s1, err);
  if (st != FP_OK || s0 == s1)
    return st;
  fp_plan *orig = L->cur;
  L->cur = L->gathered; /* legal, same traffic; its peak may be higher */
  L->gathered = orig;
  L->base = &before;
  st = refresh(L, err);
  for (int32_t t = s0; st == FP_OK && t < s1; t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(L->cur, t, &len);
    for (int32_t i = 0; i < len; i++)
      covered[grp[i]] = 1;
  }
  uint64_t score = 1;
  if (st == FP_OK && L->prm->objective == FP_OBJECTIVE_TRAFFIC)
    st = window_score(L, s0, s1, &score, err);
  memset(&J, 0, sizeof J);
  if (st == FP_OK && score > 0)
    st = prepare(L, s0, s1, &J, err);
  /* Steps the move pushed over the peak limit stay over it. */
  if (J.ready && L->peak_cap != FP_NO_LIMIT && J.S.outside_peak > L->peak_cap)
    J.ready = false;
  if (st == FP_OK && J.ready) {
    solve_job(&J);
    st = apply(L, &J, improved, err);
  }
  job_free(&J);
  L->base = NULL;
  if (!*improved) { /* back to the plan before the move, even on an error:
                       the moved plan may be over the peak limit */
    fp_plan *t = L->cur;
    fp_error local;
    L->cur = L->gathered;
    L->gathered = t;
    fp_status back = refresh(L, st == FP_OK ? err : &local);
    st = st == FP_OK ? back : st;
  }
  return st;
}

/* A pass of gathered windows, seeded at every node not gathered yet in
 * this pass (from a random node on); *improved when one was kept.  Runs
 * after a pass of consecutive windows found nothing. */
static fp_status gather_pass(lns *L, bool *improved, fp_error *err) {
  int32_t n = fp_graph_node_count(L->g);
  char *covered = calloc((size_t)n + 1, 1);
  *improved = false;
  if (!covered)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  int32_t from = (int32_t)(next_random(L) % (uint64_t)n);
  fp_status st = FP_OK;
  for (int32_t i = 0; st == FP_OK && i < n && !out_of_time(L) && level1_open(L);
       i++) {
    int32_t v = (from + i) % n;
    bool better = false;
    if (covered[v])
      continue;
    st = gather_try(L, L->step[v], covered, &better, err);
    *improved |= better;
    report(L, false);
  }
  free(covered);
  return st;
}

/* A pass of groups moved across the peak step, then of single-node moves
 * (moves.c), within MOVE_TIME_SHARE of the time limit; *improved when one
 * was kept.  FP_OK or FP_ENOMEM. */
static fp_status move_pass(lns *L, bool *improved, fp_error *err) {
  *improved = false;
  if (L->moves_made && L->moves_clean == L->accepted)
    return FP_OK;
  if (!L->moves_made && solver_moves_make(L->g, &L->moves) != 0)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  L->moves_made = true;
  solver_move_state S = {L->g,    L->prm,    L->k,      L->eager_peak,
                         &L->cur, &L->trial, &L->cur_m, L->step};
  double cap = fp_clock_now() + MOVE_TIME_SHARE * L->prm->time_limit_s;
  int32_t moved = 0, relocated = 0;
  bool whole = false;
  cap = cap < L->deadline ? cap : L->deadline;
  /* groups across the peak first (evaluations only, one per group), on
   * at most half the share, so that a large graph's scan cannot starve
   * the moves; not again on a plan it has scanned whole */
  double half = fp_clock_now() + 0.5 * (cap - fp_clock_now());
  fp_status st = FP_OK;
  if (L->peak_clean != L->accepted) {
    st = solver_peak_pass(&S, half, &relocated, err);
    if (st == FP_OK && relocated == 0 && fp_clock_now() <= half)
      L->peak_clean = L->accepted;
  }
  if (st == FP_OK)
    st = solver_move_pass(&S, &L->moves, cap, &moved, &whole, err);
  moved += relocated;
  if (moved == relocated && whole)
    L->moves_clean = L->accepted;
  if (moved > 0) {
    *improved = true;
    L->accepted += moved;
    fp_error local;
    fp_status r = refresh(L, st == FP_OK ? err : &local);
    st = st == FP_OK ? r : st;
  }
  return st;
}

/* Fills the solver record of the plan returned. */
static void record(lns *L, fp_plan *out) {
  fp_solver_info *si = fp_plan_solver(out);
  fp_solver_info_init(si);
  snprintf(si->method, sizeof si->method, "auto");
  si->objective = fp_objective_value(L->prm, &L->cur_m);
  si->bound = L->bound < si->objective ? L->bound : si->objective;
  si->gap = si->objective > 0 ? (si->objective - si->bound) / si->objective : 0;
  snprintf(si->status, sizeof si->status, "%s",
           si->bound >= si->objective ? "optimal" : "feasible");
  /* The window search proves no optimum of the other figure; the exact
   * search does. */
  si->levels_proven = L->both_proven ? 2 : si->bound >= si->objective ? 1 : 0;
  solver_record_second(L->prm, si, &L->cur_m, L->bound2);
  /* The last window of a pass ends at the deadline, a hair before it. */
  solver_stop_reason(L->prm, si, L->prm->cancel && *L->prm->cancel,
                     fp_clock_now() >
                         L->deadline - 0.01 * L->prm->time_limit_s);
  si->time_s = fp_clock_now() - L->t0;
  si->nodes = L->solved;
  int64_t here = solver_glpk_peak(); /* includes the bound's cluster ILPs */
  si->glpk_peak_bytes = here > L->glpk_peak ? here : L->glpk_peak;
}

/* Sets up the search: limits, start plan, bound, scratch. */
static fp_status lns_init(lns *L, const fp_graph *g, const fp_ilp_params *prm,
                          double t0, fp_error *err) {
  int32_t n = fp_graph_node_count(g);
  L->g = g;
  L->prm = prm;
  L->k = fp_limits_fusion_size(&prm->limits, g);
  L->t0 = t0; /* the call's start: the time limit is the whole call's */
  L->last_report = fp_clock_now();
  L->deadline = L->t0 + prm->time_limit_s * (1 - TIME_RESERVE_SHARE);
  L->win_time = prm->time_limit_s * WINDOW_TIME_SHARE;
  L->win_time = L->win_time < WINDOW_TIME_MIN   ? WINDOW_TIME_MIN
                : L->win_time > WINDOW_TIME_MAX ? WINDOW_TIME_MAX
                                                : L->win_time;
  L->W = FP_AUTO_WINDOW_START;
  L->w_max = FP_AUTO_WINDOW_MAX;
  L->node_limit = FP_AUTO_WINDOW_NODE_LIMIT;
  L->rng = prm->seed * 0x9E3779B97F4A7C15ULL + 1;
  L->moves_clean = -1;
  L->peak_clean = -1;
  L->step_x = -1;
  L->bound2 = NAN;
  fp_status st = solver_eager_peak(g, &L->eager_peak, err);
  if (st != FP_OK)
    return st;
  L->peak_cap = fp_limits_peak_cap(&prm->limits, L->eager_peak);
  L->tl = malloc(((size_t)n + 1) * sizeof *L->tl);
  L->step = malloc(((size_t)n + 1) * sizeof *L->step);
  L->trial = fp_plan_create();
  L->gathered = fp_plan_create();
  if (!L->tl || !L->step || !L->trial || !L->gathered ||
      sub_scratch_init(&L->scr, g) != 0)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  st = solver_best_heuristic(g, prm, L->eager_peak, L->peak_cap, &L->cur,
                             &L->cur_m, err);
  if (st != FP_OK)
    return st;
  if (!L->cur)
    return solver_infeasible(g, prm, L->peak_cap, err);
  double share = prm->time_limit_s * BOUND_TIME_SHARE;
  if (isfinite(prm->known_bound)) { /* the caller's, raised by the limit */
    L->bound = prm->known_bound;
    st = solver_raise_bound(g, prm, share, &L->bound, err);
  } else
    st = fp_lower_bound(g, prm, share, &L->bound, err);
  return st == FP_OK ? refresh(L, err) : st;
}

/* Frees what lns_init allocated; safe after a failed init. */
static void lns_free(lns *L) {
  fp_plan_destroy(L->cur);
  fp_plan_destroy(L->trial);
  fp_plan_destroy(L->gathered);
  free(L->tl);
  free(L->step);
  sub_scratch_free(&L->scr);
  solver_moves_free(&L->moves);
}

/* Raises the search's effort one level after idle passes: windows get
 * twice the time and branch-and-bound nodes, and may hold more nodes.
 * false at the top level. */
static bool raise_effort(lns *L) {
  if (L->effort + 1 >= EFFORT_LEVELS)
    return false;
  L->effort++;
  L->win_time *= 2;
  L->node_limit *= 2;
  L->w_max += FP_AUTO_WINDOW_MAX / 2;
  L->W = L->W * 3 / 2 > L->w_max ? L->w_max : L->W * 3 / 2;
  return true;
}

/* The exact search (solver_exact_traffic) below the current plan's
 * traffic + 1, on EXACT_AGAIN_SHARE of the time left (when at least a
 * tenth of a second), for objective
 * traffic on graphs it takes: its plan, the lexicographic optimum,
 * replaces the current one (both levels proven); a search that ends
 * without one still raises the bound by what it proved. */
static fp_status exact_again(lns *L, fp_error *err) {
  const fp_ilp_params *prm = L->prm;
  if (prm->objective != FP_OBJECTIVE_TRAFFIC ||
      fp_graph_node_count(L->g) > SOLVER_LT_MAX_NODES || out_of_time(L))
    return FP_OK;
  double left = L->deadline - fp_clock_now();
  if (left * EXACT_AGAIN_SHARE < 0.1)
    return FP_OK;
  uint64_t lb = L->bound > 0 ? (uint64_t)L->bound : 0;
  solver_lt_result r;
  fp_status st =
      solver_exact_traffic(L->g, prm, L->cur_m.traffic_bytes + 1,
                           left * EXACT_AGAIN_SHARE, L->trial, &r, &lb, err);
  L->bound = (double)lb > L->bound ? (double)lb : L->bound;
  if (st != FP_OK || !r.solved || !r.found)
    return st;
  st = fp_plan_copy(L->cur, L->trial, err);
  if (st == FP_OK)
    st = refresh(L, err);
  L->bound = (double)L->cur_m.traffic_bytes;
  L->both_proven = st == FP_OK;
  return st;
}

/* Raises L->bound by the step bound (solver_step_bound, weight 1) at
 * the first node of the current plan's peak step, for objective traffic
 * under a peak limit, once per such node.  Where the least-traffic plans
 * all exceed the limit by a little (efficientnet_b0.fwd: the running-mean
 * updates, fused early with the statistics they read, are live at the
 * peak step), the traffic bound alone cannot see that the limit costs
 * traffic; pricing the bytes at that step can.  FP_OK or an error of
 * the bound. */
static fp_status step_bound(lns *L, fp_error *err) {
  double v = fp_objective_value(L->prm, &L->cur_m);
  /* Only where the limit may be what holds the plan: its peak within
   * the gap of the limit (gpt2-triton.fwd: 16 KB under it, 4 KB of gap,
   * and a better plan exists). */
  if (L->prm->objective != FP_OBJECTIVE_TRAFFIC || L->peak_cap == FP_NO_LIMIT ||
      L->cur_m.peak_step < 0 || !level1_open(L) || out_of_time(L) ||
      L->step_tries >= STEP_BOUND_TRIES ||
      (double)(L->peak_cap - L->cur_m.peak_bytes) > v - L->bound)
    return FP_OK;
  int32_t len;
  const int32_t *grp = fp_plan_group(L->cur, L->cur_m.peak_step, &len);
  if (len < 1 || grp[0] == L->step_x)
    return FP_OK;
  L->step_x = grp[0];
  L->step_tries++;
  double left = L->deadline - fp_clock_now(), b = 0;
  double t = STEP_BOUND_SHARE * L->prm->time_limit_s;
  fp_ilp_params q = *L->prm;
  q.limits.peak = L->peak_cap;
  /* Once it reaches the plan's traffic, the plan is proven. */
  fp_status st = solver_step_bound(L->g, &q, grp[0], 1, v,
                                   t < left / 2 ? t : left / 2, &b, err);
  if (st == FP_OK && b > L->bound)
    L->bound = b;
  return st;
}

/* Raises L->bound by the branch on fusions (solver_branch_bound), once
 * a run, under the conditions of step_bound: where the limit costs
 * traffic through a conflict between fusions (mixer_b16_224.fwd), no
 * single step's price sees it.  FP_OK or an error of the bound. */
static fp_status branch_bound(lns *L, fp_error *err) {
  double v = fp_objective_value(L->prm, &L->cur_m);
  if (L->prm->objective != FP_OBJECTIVE_TRAFFIC || L->peak_cap == FP_NO_LIMIT ||
      L->branch_tried || !level1_open(L) || out_of_time(L) ||
      (double)(L->peak_cap - L->cur_m.peak_bytes) > v - L->bound)
    return FP_OK;
  L->branch_tried = true;
  double left = L->deadline - fp_clock_now();
  double t = BRANCH_BOUND_SHARE * L->prm->time_limit_s;
  fp_ilp_params q = *L->prm;
  q.limits.peak = L->peak_cap;
  return solver_branch_bound(L->g, &q, L->cur, L->cur_m.traffic_bytes,
                             t < left / 2 ? t : left / 2, &L->bound, err);
}

/* Raises L->bound2 to solver_second_bound at the current plan: for
 * objective traffic, the peak bound below the current peak (a few tenths
 * of a second; structural only once out of time); for objective peak,
 * the traffic bound within the current peak, on BOUND_TIME_SHARE of the
 * limit at most and half the time left.  FP_OK or FP_ENOMEM. */
static fp_status second_bound(lns *L, fp_error *err) {
  double left = L->deadline - fp_clock_now(), b = NAN;
  double share = L->prm->time_limit_s * BOUND_TIME_SHARE;
  bool stop = left <= 0 || (L->prm->cancel && *L->prm->cancel);
  double t = stop ? 0 : left / 2 < share ? left / 2 : share;
  /* Interrupted: answer now, without even the structural bound (a
   * sweep's remaining points would each pay for it). */
  if (L->prm->cancel && *L->prm->cancel)
    return FP_OK;
  fp_status st = solver_second_bound(L->g, L->prm, &L->cur_m, t, &b, err);
  /* The first level proven: the groups least traffic forces count too. */
  if (st == FP_OK && !stop && L->bound >= (double)L->cur_m.traffic_bytes)
    st = solver_forced_peak_bound(
        L->g, L->prm, L->cur, &L->cur_m,
        L->deadline - fp_clock_now() < t ? L->deadline - fp_clock_now() : t, &b,
        err);
  if (st == FP_OK && (isnan(L->bound2) || b > L->bound2))
    L->bound2 = b;
  return st;
}

/* Passes until the time limit, the bound, or idle passes at the top
 * effort; then the lexicographic second level with the time left:
 * passes that hold the objective and lower the other figure (windows
 * are accepted only when solver_better says so). */
static fp_status search(lns *L, const fp_ilp_params *prm, fp_error *err) {
  /* Moves first: they cost evaluations, not ILPs, and reach what the
   * sweep's small windows cannot. */
  bool first_moves;
  fp_status st = move_pass(L, &first_moves, err);
  L->sweeping = true;
  L->W = SWEEP_NODES;
  for (int i = 0;
       st == FP_OK && i < SWEEP_PASSES && !out_of_time(L) && level1_open(L);
       i++) {
    bool improved;
    st = run_pass(L, &improved, err);
  }
  L->sweeping = false;
  L->W = FP_AUTO_WINDOW_START;
  for (int idle = 0; st == FP_OK && !out_of_time(L) && level1_open(L);) {
    bool improved;
    st = step_bound(L, err);
    if (st == FP_OK && level1_open(L))
      st = move_pass(L, &improved, err);
    else
      improved = false;
    if (st == FP_OK && !out_of_time(L) && level1_open(L)) {
      bool windows;
      st = run_pass(L, &windows, err);
      improved |= windows;
    }
    if (st == FP_OK && !improved && !out_of_time(L) && level1_open(L))
      st = gather_pass(L, &improved, err);
    idle = improved ? 0 : idle + 1;
    /* After one idle pass, not IDLE_PASSES: on mixer_b16_224.fwd the
     * second idle pass ends 2.2 s later and finds nothing the branch
     * needs (it bounds any incumbent; 9.4 s -> 7.2 s to the proof). */
    if (st == FP_OK && idle >= 1)
      st = branch_bound(L, err);
    if (st == FP_OK && idle >= IDLE_PASSES && !L->exact_tried) {
      L->exact_tried = true; /* the plan has settled: a tight limit */
      st = exact_again(L, err);
    }
    if (idle >= IDLE_PASSES && !raise_effort(L))
      break;
    if (idle >= IDLE_PASSES)
      idle = 0;
  }
  L->second = prm->objective != FP_OBJECTIVE_WEIGHTED && prm->levels > 1 &&
              !L->both_proven;
  if (st == FP_OK && L->second)
    st = second_bound(L, err);
  /* Idle: a pass that does not lower the second figure (one that only
   * saves a kernel goes on forever on real graphs). */
  for (int idle = 0; st == FP_OK && L->second && idle < IDLE_PASSES &&
                     !out_of_time(L) && level2_open(L);) {
    double before = second_value(L);
    bool improved, moved = false;
    st = run_pass(L, &improved, err);
    if (st == FP_OK && !improved && !out_of_time(L) && level2_open(L))
      st = move_pass(L, &moved, err);
    bool lower = second_value(L) < before;
    idle = lower ? 0 : idle + 1;
    if (st == FP_OK && lower && level2_open(L))
      st = second_bound(L, err);
  }
  return st;
}

/* Whether the exact model is worth a try on g: always up to
 * FP_ILP_EXACT_NODES nodes; up to EXACT_TRY_NODES when the model is not
 * refused for its size (ilp_size) and its root LP, judged by its
 * estimated rows, should fit in the try's time.  *try false on any failure: the
 * window search does not need the try. */
static void exact_worth_trying(const fp_graph *g, const fp_ilp_params *prm,
                               bool *try) {
  int32_t n = fp_graph_node_count(g);
  *try = n <= FP_ILP_EXACT_NODES;
  if (*try || n > EXACT_TRY_NODES)
    return;
  fp_ilp_params p = *prm;
  p.window = FP_ILP_WINDOW_EXACT;
  ilp_model M;
  if (ilp_size(&M, g, &p, NULL) == ILP_BUILD_OK) /* no GLPK call */
    *try = M.est_rows * M.est_rows * LP_SECONDS_PER_ROW2 <=
           EXACT_TRY_SHARE * prm->time_limit_s;
  ilp_free(&M);
}

/* Whether the best start (solver_best_heuristic) is already within
 * prm->gap of the global bound, which is computed on BOUND_TIME_SHARE of
 * the limit into *bound (NaN when there is no start): then the exact
 * model's try is skipped.  The bound proves in tenths of a second what
 * the exact model took 17 s to prove on resmlp_12_224.fwd (126 nodes,
 * 60 s limit).  FP_OK or FP_ENOMEM. */
static fp_status start_proven(const fp_graph *g, const fp_ilp_params *prm,
                              double *bound, bool *yes, fp_error *err) {
  uint64_t eager = 0;
  fp_plan *start = NULL;
  fp_metrics sm;
  *bound = NAN;
  *yes = false;
  fp_status st = solver_eager_peak(g, &eager, err);
  uint64_t cap = fp_limits_peak_cap(&prm->limits, eager);
  if (st == FP_OK)
    st = solver_best_heuristic(g, prm, eager, cap, &start, &sm, err);
  if (st == FP_OK && start)
    st = fp_lower_bound(g, prm, prm->time_limit_s * BOUND_TIME_SHARE, bound,
                        err);
  if (st == FP_OK && start)
    *yes = solver_rel_gap(fp_objective_value(prm, &sm), *bound) <= prm->gap;
  fp_plan_destroy(start);
  return st;
}

/* Whether to try the exact model (exact_worth_trying, unless the bound
 * already proves the best start: start_proven) into *try; the bound it
 * computed becomes q->known_bound, so that the window search does not
 * compute it twice.  FP_OK or FP_ENOMEM. */
static fp_status decide_exact_try(const fp_graph *g, const fp_ilp_params *prm,
                                  fp_ilp_params *q, bool *try, fp_error *err) {
  double b = NAN;
  bool settled = false;
  exact_worth_trying(g, prm, try);
  fp_status st = *try ? start_proven(g, prm, &b, &settled, err) : FP_OK;
  *try = *try && !settled;
  if (st == FP_OK && isfinite(b) && !(q->known_bound >= b))
    q->known_bound = b;
  return st;
}

/* The exact ILP on EXACT_TRY_SHARE of the time (EXACT_SMALL_SHARE up to
 * FP_ILP_EXACT_NODES).  *plan (caller frees) is its
 * answer; *proven when it is final (its first level proven and its
 * stop_reason "proven" or "gap"), which makes it auto's answer (labelled
 * so, its metrics in *m).  FP_EINFEASIBLE is returned
 * only when every plan is over the limits; other errors as fp_ilp_solve. */
static fp_status exact_first(const fp_graph *g, const fp_ilp_params *prm,
                             fp_plan **plan, bool *proven, fp_metrics *m,
                             fp_error *err) {
  fp_ilp_params p = *prm;
  fp_metrics pm;
  bool small = fp_graph_node_count(g) <= FP_ILP_EXACT_NODES;
  p.window = FP_ILP_WINDOW_EXACT;
  p.time_limit_s =
      prm->time_limit_s * (small ? EXACT_SMALL_SHARE : EXACT_TRY_SHARE);
  if (!(*plan = fp_plan_create()))
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  fp_status st = fp_ilp_solve(g, &p, *plan, &pm, err);
  if (st != FP_OK)
    return st;
  fp_solver_info *si = fp_plan_solver(*plan);
  /* Final only when its second level is done too; otherwise the window
   * search goes on from it, with its first level closed. */
  *proven = si->levels_proven >= 1 && (strcmp(si->stop_reason, "proven") == 0 ||
                                       strcmp(si->stop_reason, "gap") == 0);
  if (*proven) {
    snprintf(si->method, sizeof si->method, "auto");
    if (m)
      *m = pm;
  }
  return FP_OK;
}

/* Labels plan p, found by the exact search in `seconds` with metrics m,
 * as auto's answer proven at both levels. */
static void search_record(const fp_ilp_params *prm, fp_plan *p,
                          const fp_metrics *m, double seconds) {
  fp_solver_info *si = fp_plan_solver(p);
  fp_solver_info_init(si);
  snprintf(si->method, sizeof si->method, "auto");
  snprintf(si->status, sizeof si->status, "optimal");
  si->objective = si->bound = (double)m->traffic_bytes;
  si->gap = 0;
  si->levels_proven = 2;
  si->time_s = seconds;
  solver_record_second(prm, si, m, NAN);
  solver_stop_reason(prm, si, false, false);
}

/* The exact search first (EXACT_SEARCH_SHARE), for objective traffic on
 * graphs it takes: below the best start's traffic + 1, so that a start
 * of least traffic is matched and the least peak among such plans found.
 * *proven when it finished with a plan: then *plan (caller frees) is the
 * answer, labelled, its metrics in *m.  Else *plan is NULL and the
 * search ran out of time or budget, or found no plan within the limits
 * (which the steps after it report).  *lb: the traffic bound it proved
 * (0 when none).  FP_OK or an error. */
static fp_status search_first(const fp_graph *g, const fp_ilp_params *prm,
                              fp_plan **plan, bool *proven, fp_metrics *m,
                              uint64_t *lb, fp_error *err) {
  double t0 = fp_clock_now();
  uint64_t eager = 0, upper = UINT64_MAX;
  fp_plan *start = NULL;
  fp_metrics sm;
  solver_lt_result r = {0};
  *plan = NULL;
  *proven = false;
  if (prm->objective != FP_OBJECTIVE_TRAFFIC ||
      fp_graph_node_count(g) > SOLVER_LT_MAX_NODES)
    return FP_OK;
  fp_status st = solver_eager_peak(g, &eager, err);
  uint64_t cap = fp_limits_peak_cap(&prm->limits, eager);
  if (st == FP_OK)
    st = solver_best_heuristic(g, prm, eager, cap, &start, &sm, err);
  if (st == FP_OK && start)
    upper = sm.traffic_bytes + 1;
  if (prm->limits.traffic != FP_NO_LIMIT && prm->limits.traffic < upper - 1)
    upper = prm->limits.traffic + 1;
  if (st == FP_OK && !(*plan = fp_plan_create()))
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
  if (st == FP_OK)
    st = solver_exact_traffic(g, prm, upper,
                              prm->time_limit_s * EXACT_SEARCH_SHARE, *plan, &r,
                              lb, err);
  if (st == FP_OK && r.solved && r.found)
    st = fp_plan_eval_k(g, *plan, prm->limits.max_fusion_size, m, NULL, err);
  *proven = st == FP_OK && r.solved && r.found;
  if (*proven)
    search_record(prm, *plan, m, fp_clock_now() - t0);
  else {
    fp_plan_destroy(*plan);
    *plan = NULL;
  }
  fp_plan_destroy(start);
  return st;
}

fp_status fp_auto_solve(const fp_graph *g, const fp_ilp_params *prm,
                        fp_plan *out, fp_metrics *m, fp_error *err) {
  fp_status st = fp_ilp_params_check(prm, err);
  if (st != FP_OK)
    return st;
  if (fp_arg_graph(g, "auto", err) != FP_OK ||
      fp_arg_ptr(out, "auto", "the plan", err) != FP_OK)
    return FP_EARG;
  if ((st = solver_check_starts(g, prm, err)) != FP_OK)
    return st;
  fp_ilp_params q = *prm;
  fp_plan *exact = NULL;
  double t0 = fp_clock_now();
  bool try_exact, proven = false;
  fp_metrics local;
  uint64_t lb = 0;
  st = search_first(g, prm, &exact, &proven, m ? m : &local, &lb, err);
  if (st != FP_OK || proven) {
    if (st == FP_OK)
      st = fp_plan_copy(out, exact, err);
    if (st == FP_OK)
      st = fp_plan_set_graph_name(out, fp_graph_name(g), err);
    fp_plan_destroy(exact);
    return st;
  }
  if ((st = decide_exact_try(g, prm, &q, &try_exact, err)) != FP_OK)
    return st;
  /* The search may have spent the whole limit (a tiny one, a slow
   * machine): then the window search's heuristic starts answer alone. */
  double left = prm->time_limit_s - (fp_clock_now() - t0);
  if (try_exact && left > 0) {
    fp_ilp_params p = *prm; /* the rest of the time, as exact_first's */
    p.time_limit_s = left;
    st = exact_first(g, &p, &exact, &proven, m, err);
    if (st != FP_OK || proven) {
      if (st == FP_OK)
        st = fp_plan_copy(out, exact, err);
      fp_plan_destroy(exact);
      return st;
    }
    q.warm_start = exact; /* a start of the window search */
  }
  lns L;
  memset(&L, 0, sizeof L);
  st = lns_init(&L, g, &q, t0, err);
  if (st == FP_OK && exact) { /* the exact model's bound holds for all */
    double b = fp_plan_solver_const(exact)->bound;
    L.bound = isfinite(b) && b > L.bound ? b : L.bound;
  }
  if (st == FP_OK && (double)lb > L.bound) /* the exact search's */
    L.bound = (double)lb;
  st = st == FP_OK ? search(&L, prm, err) : st;
  if (st == FP_OK)
    st = fp_plan_copy(out, L.cur, err);
  if (st == FP_OK)
    st = fp_plan_set_graph_name(out, fp_graph_name(g), err);
  if (st == FP_OK && isnan(L.bound2) && prm->objective != FP_OBJECTIVE_WEIGHTED)
    st = second_bound(&L, err); /* the search ended before the second level */
  if (st == FP_OK) {
    report(&L, true);
    record(&L, out);
    if (m)
      *m = L.cur_m;
  }
  lns_free(&L);
  fp_plan_destroy(exact);
  return st;
}
