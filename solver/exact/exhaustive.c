/*
 * exhaustive.c -- the reference solver for tiny graphs: a depth-first
 * enumeration of every legal ordered grouping (docs/cost-model.md).
 *
 * A plan is built step by step.  The state is the set D of nodes already
 * scheduled (a bitmask; n <= FP_EXHAUSTIVE_MAX_NODES); the next step is a
 * non-empty set S of unscheduled nodes that is a legal group (no extern
 * with others, pairwise fp_graph_compatible, every linked pair with a
 * linker, |S| <= K) and closed under
 * dependencies (every writer of a buffer a node of S reads is in D or S).
 * Every sequence of such choices that ends with D = all nodes is exactly
 * one plan that passes fp_plan_check, and every such plan arises once.
 *
 * The cost of a step depends only on D and S (docs/cost-model.md): S reads
 * each buffer it does not produce once, at its largest per-read size; it
 * writes each buffer with a reader outside S, no reader, or an output; and
 * live(t) counts the resident inputs, the freeable inputs with a reader
 * outside D, the buffers written in D that are outputs or have a reader
 * outside D, and the buffers S writes and materializes, less S's in-place
 * takeovers (fp_inplace_mask_saving, a function of D and S), plus S's
 * workspaces (fp_graph_mask_workspace, a function of S).  So the search
 * carries the traffic and the peak so far, both lower bounds on the final
 * figures, and skips
 *   - a step after which the peak or traffic exceeds a limit;
 *   - a step whose (objective, peak, traffic) is already >= the best plan's,
 *     compared in that order: the final figures can only be as large;
 *   - a state D reached before with traffic and peak no larger (the
 *     earlier visit saw every completion this one could have).
 * None of these can drop a plan that would have been chosen, and ties go
 * to the plan found first, so the answer is that of the plain enumeration.
 * Each plan that would become the best is evaluated by the evaluator
 * (fp_plan_eval_k), which decides; figures that disagree with the search's
 * own are an internal error.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/util.h"
#include "solver/bound/least_traffic.h"
#include "solver/solver.h"

#define MAXN FP_EXHAUSTIVE_MAX_NODES

/* Sort key of a plan: smaller is better, compared field by field. */
typedef struct plan_key {
  double obj;
  uint64_t peak, traffic;
} plan_key;

/* (traffic, peak) pairs with which one state was entered; none dominates
 * another. */
typedef struct memo_list {
  uint64_t *traffic, *peak;
  int32_t n, cap;
} memo_list;

/* The graph as the search sees it, plus per-buffer scratch. */
typedef struct exh_graph {
  const fp_graph *g;
  int32_t n, nb, k;
  uint32_t all;          /* mask of every node */
  solver_node_sets sets; /* pred, compat, readers, group traffic */
  uint64_t resident;
} exh_graph;

/* One search: what it optimizes, its state, and the best plan so far. */
typedef struct search {
  exh_graph *X;
  fp_ilp_params crit; /* objective and limits of this search */
  uint64_t eager_peak, peak_limit, traffic_limit; /* limits resolved */
  uint32_t steps[MAXN];
  int32_t depth;
  bool found;
  plan_key best;
  uint32_t best_steps[MAXN];
  int32_t best_depth;
  fp_metrics best_m;
  memo_list *memo; /* 1 << n lists, indexed by D */
  fp_plan *scratch;
  fp_status st;
  fp_error *err;
} search;

static int32_t popcount(uint32_t s) {
  int32_t c = 0;
  for (; s; s &= s - 1)
    c++;
  return c;
}

/* ---- the graph --------------------------------------------------------- */

static void exh_graph_free(exh_graph *X) {
  solver_node_sets_free(&X->sets);
}

/* Fills X for a finalized graph of at most MAXN nodes with fusion limit k
 * (>= 1).  Returns -1 when out of memory (X is then freed). */
static int exh_graph_init(exh_graph *X, const fp_graph *g, int32_t k) {
  memset(X, 0, sizeof *X);
  X->g = g;
  X->n = fp_graph_node_count(g);
  X->nb = fp_graph_buffer_count(g);
  X->k = k;
  X->all = X->n ? (uint32_t)((1u << X->n) - 1) : 0;
  X->resident = fp_graph_resident_bytes(g);
  return solver_node_sets_init(&X->sets, g);
}

/* Whether s (a non-empty subset of the unscheduled nodes u) may run as the
 * next step: at most k nodes, pairwise compatible, every linked pair with
 * a linker, and every unscheduled writer of what s reads inside s. */
static bool legal_step(const exh_graph *X, uint32_t s, uint32_t u) {
  if (popcount(s) > X->k)
    return false;
  for (int32_t v = 0; v < X->n; v++) {
    uint32_t bit = 1u << v;
    if (!(s & bit))
      continue;
    if ((X->sets.pred[v] & u & ~s) || (s & ~bit & ~X->sets.compat[v]))
      return false;
  }
  return solver_group_linked_ok(&X->sets, s);
}

/* live(t) of the step that runs s after the nodes in `done`. */
static uint64_t step_live(const exh_graph *X, uint32_t done, uint32_t s) {
  uint64_t live = X->resident;
  for (int32_t b = 0; b < X->nb; b++) {
    const fp_buffer *buf = fp_graph_buffer(X->g, b);
    uint64_t rd = X->sets.readers[b];
    if (buf->input) {
      if (buf->freeable && !buf->output && (rd & ~done))
        live += buf->bytes;
      continue;
    }
    if (buf->writer < 0)
      continue;
    uint32_t w = 1u << buf->writer;
    if (done & w) { /* a reader outside done implies materialized */
      if (buf->output || (rd & ~done))
        live += buf->bytes;
    } else if (s & w) {
      if (buf->output || !rd || (rd & ~s))
        live += buf->bytes;
    }
  }
  /* In-place takeovers depend on done and s alone as well; s's
   * workspaces on s alone. */
  return live - fp_inplace_mask_saving(X->g, done, s) +
         fp_graph_mask_workspace(X->g, s);
}

/* ---- the search -------------------------------------------------------- */

static plan_key make_key(const search *S, uint64_t traffic, uint64_t peak) {
  fp_metrics m;
  memset(&m, 0, sizeof m);
  m.traffic_bytes = traffic;
  m.peak_bytes = peak;
  plan_key k = {fp_objective_value(&S->crit, &m), peak, traffic};
  return k;
}

/* a < b, field by field. */
static bool key_less(plan_key a, plan_key b) {
  if (a.obj != b.obj)
    return a.obj < b.obj;
  if (a.peak != b.peak)
    return a.peak < b.peak;
  return a.traffic < b.traffic;
}

/* Whether a partial plan with these figures so far can be skipped: it
 * breaks a limit, or cannot become strictly better than the best. */
static bool hopeless(const search *S, uint64_t traffic, uint64_t peak) {
  if (peak > S->peak_limit || traffic > S->traffic_limit)
    return true;
  return S->found && !key_less(make_key(S, traffic, peak), S->best);
}

/* Whether state `done` was entered before with traffic and peak no larger;
 * if not, records (traffic, peak) there, dropping the pairs it dominates.
 * Sets S->st to FP_ENOMEM (and returns true) when out of memory. */
static bool memo_seen(search *S, uint32_t done, uint64_t traffic,
                      uint64_t peak) {
  memo_list *L = &S->memo[done];
  int32_t keep = 0;
  for (int32_t i = 0; i < L->n; i++)
    if (L->traffic[i] <= traffic && L->peak[i] <= peak)
      return true;
  for (int32_t i = 0; i < L->n; i++)
    if (!(traffic <= L->traffic[i] && peak <= L->peak[i])) {
      L->traffic[keep] = L->traffic[i];
      L->peak[keep++] = L->peak[i];
    }
  L->n = keep;
  if (L->n == L->cap) {
    int32_t cap = L->cap ? 2 * L->cap : 4;
    uint64_t *t = realloc(L->traffic, (size_t)cap * sizeof *t);
    if (t)
      L->traffic = t;
    uint64_t *p = t ? realloc(L->peak, (size_t)cap * sizeof *p) : NULL;
    if (!p) {
      S->st = fp_error_set(S->err, FP_ENOMEM, "exhaustive: out of memory");
      return true;
    }
    L->peak = p;
    L->cap = cap;
  }
  L->traffic[L->n] = traffic;
  L->peak[L->n++] = peak;
  return false;
}

/* Writes the groups steps[0..depth) into p, nodes ascending. */
static fp_status steps_to_plan(const exh_graph *X, const uint32_t *steps,
                               int32_t depth, fp_plan *p, fp_error *err) {
  fp_plan_clear(p);
  for (int32_t t = 0; t < depth; t++) {
    int32_t grp[MAXN], len = 0;
    for (int32_t v = 0; v < X->n; v++)
      if (steps[t] & (1u << v))
        grp[len++] = v;
    fp_status st = fp_plan_add_group(p, grp, len, err);
    if (st != FP_OK)
      return st;
  }
  return FP_OK;
}

/* A complete plan the search found better than the best so far: the
 * evaluator confirms its figures and it becomes the best. */
static void leaf(search *S, uint64_t traffic, uint64_t peak) {
  fp_metrics m;
  S->st = steps_to_plan(S->X, S->steps, S->depth, S->scratch, S->err);
  if (S->st == FP_OK)
    S->st = fp_plan_eval_k(S->X->g, S->scratch, S->X->k, &m, NULL, S->err);
  if (S->st != FP_OK)
    return;
  if (m.traffic_bytes != traffic || m.peak_bytes != peak) {
    S->st = fp_error_set(S->err, FP_EINTERNAL,
                         "exhaustive: search figures (traffic %llu, peak "
                         "%llu) disagree with the evaluator's (%llu, %llu)",
                         (unsigned long long)traffic, (unsigned long long)peak,
                         (unsigned long long)m.traffic_bytes,
                         (unsigned long long)m.peak_bytes);
    return;
  }
  plan_key k = make_key(S, m.traffic_bytes, m.peak_bytes);
  if (!fp_meets_limits(&S->crit, &m, S->eager_peak) ||
      (S->found && !key_less(k, S->best)))
    return;
  S->found = true;
  S->best = k;
  S->best_m = m;
  S->best_depth = S->depth;
  memcpy(S->best_steps, S->steps, sizeof S->steps);
}

/* Explores every completion of the partial plan S->steps[0..depth), which
 * has scheduled `done` with the given traffic and peak so far. */
static void visit(search *S, uint32_t done, uint64_t traffic, uint64_t peak) {
  exh_graph *X = S->X;
  if (done == X->all) {
    leaf(S, traffic, peak);
    return;
  }
  if (memo_seen(S, done, traffic, peak))
    return;
  uint32_t u = X->all & ~done;
  /* Submasks of u, largest first: big groups early give a good best
   * early, which prunes the rest. */
  for (uint32_t s = u; s && S->st == FP_OK; s = (s - 1) & u) {
    if (!legal_step(X, s, u))
      continue;
    uint64_t t2 = traffic + solver_group_traffic(&X->sets, s);
    uint64_t live = step_live(X, done, s);
    uint64_t p2 = live > peak ? live : peak;
    if (hopeless(S, t2, p2))
      continue;
    S->steps[S->depth++] = s;
    visit(S, done | s, t2, p2);
    S->depth--;
  }
}

/* Runs one search for the objective and limits of `crit`.  Returns FP_OK
 * (S->found says whether a plan met the limits), FP_ENOMEM or
 * FP_EINTERNAL. */
static fp_status run_search(search *S, exh_graph *X, const fp_ilp_params *crit,
                            uint64_t eager_peak, fp_plan *scratch,
                            fp_error *err) {
  memset(S, 0, sizeof *S);
  S->X = X;
  S->crit = *crit;
  S->eager_peak = eager_peak;
  S->peak_limit = fp_limits_peak_cap(&crit->limits, eager_peak);
  S->traffic_limit = crit->limits.traffic;
  S->scratch = scratch;
  S->err = err;
  S->st = FP_OK;
  S->memo = calloc((size_t)X->all + 1, sizeof *S->memo);
  if (!S->memo)
    return fp_error_set(err, FP_ENOMEM, "exhaustive: out of memory");
  visit(S, 0, 0, X->resident);
  for (uint32_t d = 0; d <= X->all; d++) {
    free(S->memo[d].traffic);
    free(S->memo[d].peak);
  }
  free(S->memo);
  S->memo = NULL;
  return S->st;
}

/* ---- the entry point --------------------------------------------------- */

/* The figure `what` (PEAK: smallest peak, else smallest traffic) of any
 * legal plan, ignoring every limit, into *out. */
static fp_status smallest(exh_graph *X, fp_objective what, uint64_t eager_peak,
                          fp_plan *scratch, uint64_t *out, fp_error *err) {
  fp_ilp_params crit;
  fp_ilp_params_init(&crit);
  crit.objective = what;
  crit.limits.peak = FP_NO_LIMIT;
  search S;
  fp_status st = run_search(&S, X, &crit, eager_peak, scratch, err);
  if (st == FP_OK && !S.found) /* the eager plan is always legal */
    return fp_error_set(err, FP_EINTERNAL, "exhaustive: no legal plan found");
  if (st == FP_OK)
    *out = what == FP_OBJECTIVE_PEAK ? S.best_m.peak_bytes
                                     : S.best_m.traffic_bytes;
  return st;
}

/* FP_EINFEASIBLE with a message giving the smallest peak of any legal plan
 * (and the smallest traffic, when a traffic limit was set). */
static fp_status infeasible(exh_graph *X, const search *S, fp_plan *scratch,
                            fp_error *err) {
  uint64_t peak = 0, traffic = 0;
  fp_status st =
      smallest(X, FP_OBJECTIVE_PEAK, S->eager_peak, scratch, &peak, err);
  if (st == FP_OK && S->traffic_limit != FP_NO_LIMIT)
    st = smallest(X, FP_OBJECTIVE_TRAFFIC, S->eager_peak, scratch, &traffic,
                  err);
  if (st != FP_OK)
    return st;
  char lim[64], tr[96] = "";
  if (S->traffic_limit == FP_NO_LIMIT)
    snprintf(lim, sizeof lim, "none");
  else
    snprintf(lim, sizeof lim, "%llu", (unsigned long long)S->traffic_limit);
  if (S->traffic_limit != FP_NO_LIMIT)
    snprintf(tr, sizeof tr, "; the smallest traffic of any legal plan is %llu",
             (unsigned long long)traffic);
  return fp_error_set(
      err, FP_EINFEASIBLE,
      "exhaustive: no plan meets the limits (peak <= %llu, traffic <= %s): "
      "the smallest peak of any legal plan is %llu%s",
      (unsigned long long)S->peak_limit, lim, (unsigned long long)peak, tr);
}

/* The eager plan's peak under fusion limit k, into *peak. */
static fp_status eager_peak_of(const exh_graph *X, fp_plan *scratch,
                               uint64_t *peak, fp_error *err) {
  fp_metrics m;
  fp_status st = fp_plan_make_eager(scratch, X->g, err);
  if (st == FP_OK)
    st = fp_plan_eval_k(X->g, scratch, X->k, &m, NULL, err);
  if (st == FP_OK)
    *peak = m.peak_bytes;
  return st;
}

/* Writes the best plan of S into out with its solver record. */
static fp_status write_result(const search *S, double t0, fp_plan *out,
                              fp_metrics *m, fp_error *err) {
  fp_status st = steps_to_plan(S->X, S->best_steps, S->best_depth, out, err);
  if (st == FP_OK)
    st = fp_plan_set_graph_name(out, fp_graph_name(S->X->g), err);
  if (st != FP_OK)
    return st;
  fp_plan_claims_set(out, NULL);
  fp_solver_info *si = fp_plan_solver(out);
  fp_solver_info_init(si);
  snprintf(si->method, sizeof si->method, "exhaustive");
  snprintf(si->status, sizeof si->status, "optimal");
  si->objective = S->best.obj;
  si->bound = S->best.obj;
  si->gap = 0.0;
  si->time_s = fp_clock_now() - t0;
  if (m)
    *m = S->best_m;
  return FP_OK;
}

/* Checks the arguments of fp_exhaustive; fills *k with the effective
 * fusion limit. */
static fp_status check_args(const fp_graph *g, const fp_ilp_params *prm,
                            const fp_plan *out, int32_t *k, fp_error *err) {
  if (!g || !out || !fp_graph_is_finalized(g))
    return fp_error_set(err, FP_EARG,
                        "exhaustive: needs a finalized graph and a plan");
  fp_status st = fp_ilp_params_check(prm, err);
  if (st != FP_OK)
    return st;
  if (fp_graph_node_count(g) > FP_EXHAUSTIVE_MAX_NODES)
    return fp_error_set(err, FP_ELIMIT,
                        "exhaustive: the graph has %d nodes, more than the "
                        "%d exhaustive enumeration handles",
                        (int)fp_graph_node_count(g), FP_EXHAUSTIVE_MAX_NODES);
  *k = fp_limits_fusion_size(&prm->limits, g);
  return FP_OK;
}

/* See solver.h.  prm == NULL stands for the defaults. */
fp_status fp_exhaustive(const fp_graph *g, const fp_ilp_params *prm,
                        fp_plan *out, fp_metrics *m, fp_error *err) {
  double t0 = fp_clock_now();
  fp_ilp_params defaults;
  if (!prm) {
    fp_ilp_params_init(&defaults);
    prm = &defaults;
  }
  int32_t k = 0;
  fp_status st = check_args(g, prm, out, &k, err);
  if (st != FP_OK)
    return st;
  exh_graph X;
  fp_plan *scratch = fp_plan_create();
  if (!scratch || exh_graph_init(&X, g, k) != 0) {
    fp_plan_destroy(scratch);
    return fp_error_set(err, FP_ENOMEM, "exhaustive: out of memory");
  }
  uint64_t eager_peak = 0;
  search S;
  st = eager_peak_of(&X, scratch, &eager_peak, err);
  if (st == FP_OK)
    st = run_search(&S, &X, prm, eager_peak, scratch, err);
  if (st == FP_OK && !S.found)
    st = infeasible(&X, &S, scratch, err);
  if (st == FP_OK)
    st = write_result(&S, t0, out, m, err);
  exh_graph_free(&X);
  fp_plan_destroy(scratch);
  return st;
}
