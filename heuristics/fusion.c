/*
 * fusion.c -- greedy fusion in the manner of PyTorch Inductor's scheduler
 * (fuse_nodes / get_possible_fusions / score_fusion), its low-memory
 * variant, and a peak-aware variant: the candidate pairs of each round,
 * their order, and the drivers.  The groups, their legality, the cycle
 * check and the merging are the engine's (fuser.c); greedy-peak's
 * incremental peak is peak.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heuristics/fuser.h"
#include "heuristics/order_internal.h"
#include "heuristics/peak.h"
#include "model/args.h"
#include "model/eval.h"
#include "model/util.h"

static const char *const method_names[] = {
#define FP_METHOD_STR_(name, str) str,
    FP_METHOD_MAP(FP_METHOD_STR_)
#undef FP_METHOD_STR_
};

const char *fp_method_name(fp_method m) {
  return fp_name_of(method_names, FP_METHOD_COUNT_, (int)m);
}

int fp_method_parse(const char *s) {
  return fp_name_lookup(method_names, FP_METHOD_COUNT_, s);
}

void fp_fusion_params_init(fp_fusion_params *prm, fp_method method) {
  if (!prm)
    return;
  memset(prm, 0, sizeof *prm);
  prm->method = method;
  /* greedy is the Inductor replica: Inductor's own reorder by default. */
  prm->order = method == FP_METHOD_EAGER    ? FP_ORDER_LISTED
               : method == FP_METHOD_GREEDY ? FP_ORDER_INDUCTOR
                                            : FP_ORDER_BEST;
  prm->rounds = FP_FUSION_DEFAULT_ROUNDS;
  prm->bucket_pairs = FP_FUSION_DEFAULT_BUCKET_PAIRS;
  prm->max_distance = FP_FUSION_DEFAULT_MAX_DISTANCE;
  prm->min_shared = FP_FUSION_DEFAULT_MIN_SHARED;
  fp_limits_init(&prm->limits);
}

fp_status fp_fusion_params_check(const fp_fusion_params *prm, fp_error *err) {
  if (!prm)
    return fp_error_set(err, FP_EARG, "fusion params: NULL");
  if ((unsigned)prm->method >= FP_METHOD_COUNT_)
    return fp_error_set(err, FP_EARG, "fusion params: method: unknown");
  if ((unsigned)prm->order >= FP_ORDER_COUNT_)
    return fp_error_set(err, FP_EARG, "fusion params: order: unknown");
  if (fp_limits_check(&prm->limits, "fusion params", err) != FP_OK)
    return FP_EARG;
  if (prm->rounds < 1 || prm->bucket_pairs < 1 || prm->max_distance < 0)
    return fp_error_set(err, FP_EARG,
                        "fusion params: rounds and bucket_pairs must be >= 1, "
                        "max_distance >= 0");
  return FP_OK;
}

/* ---- candidates ---------------------------------------------------------- */

typedef struct cand {
  int32_t a, b; /* group ids at the start of the round, a < b */
  pair_info pi;
  int32_t key_a, key_b; /* tie-break: listed positions */
  bool outer;           /* only outer-loop fusion joins the pair */
} cand;

typedef struct cand_list {
  cand *c;
  size_t n, cap;
} cand_list;

static int cand_push(cand_list *L, int32_t a, int32_t b) {
  if (L->n == L->cap) {
    size_t cap = L->cap ? 2 * L->cap : 1024;
    cand *c = realloc(L->c, cap * sizeof *c);
    if (!c)
      return -1;
    L->c = c;
    L->cap = cap;
  }
  L->c[L->n++] = (cand){.a = a < b ? a : b, .b = a < b ? b : a};
  return 0;
}

static int cmp_pair_ids(const void *x, const void *y) {
  const cand *p = x, *q = y;
  if (p->a != q->a)
    return p->a < q->a ? -1 : 1;
  return (p->b > q->b) - (p->b < q->b);
}

/* Score order, Inductor's FusionScore (choices.py): when one pair shares
 * more than 16 times the bytes of the other, it goes first; otherwise
 * pairs of the same kind first, then more shared bytes, then closer in
 * the listed order, then listed positions (deterministic).  This is not
 * a total order (the 16x rule is not transitive), so it is only used
 * through sort_by_score's merge sort. */
static int cmp_score(const cand *p, const cand *q) {
  uint64_t hi = p->pi.shared > q->pi.shared ? p->pi.shared : q->pi.shared;
  uint64_t lo = p->pi.shared > q->pi.shared ? q->pi.shared : p->pi.shared;
  if (hi / 16 > lo || (hi / 16 == lo && hi % 16 != 0))
    return p->pi.shared > q->pi.shared ? -1 : 1;
  if (p->pi.same_kind != q->pi.same_kind)
    return p->pi.same_kind ? -1 : 1;
  if (p->pi.shared != q->pi.shared)
    return p->pi.shared > q->pi.shared ? -1 : 1;
  if (p->pi.proximity != q->pi.proximity)
    return p->pi.proximity < q->pi.proximity ? -1 : 1;
  if (p->key_a != q->key_a)
    return p->key_a < q->key_a ? -1 : 1;
  return (p->key_b > q->key_b) - (p->key_b < q->key_b);
}

/* Stable bottom-up merge sort of L by cmp_score: a fixed sequence of
 * comparisons, so the result is deterministic even though the score
 * order is not transitive.  -1 when out of memory. */
static int sort_by_score(cand *c, size_t n) {
  cand *tmp = malloc((n + 1) * sizeof *tmp), *a = c, *b = tmp;
  if (!tmp)
    return -1;
  for (size_t w = 1; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = lo + w < n ? lo + w : n;
      size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        b[k++] = cmp_score(&a[j], &a[i]) < 0 ? a[j++] : a[i++];
      while (i < mid)
        b[k++] = a[i++];
      while (j < hi)
        b[k++] = a[j++];
    }
    cand *t = a;
    a = b;
    b = t;
  }
  if (a != c)
    memcpy(c, a, n * sizeof *a);
  free(tmp);
  return 0;
}

static int cmp_by_pos(const void *x, const void *y) {
  int32_t p = *(const int32_t *)x, q = *(const int32_t *)y;
  return (p > q) - (p < q);
}

/* Pairs from one buffer's bucket: the groups touching it, in the current
 * order, each paired with the next `pairs` ones (get_possible_fusions). */
static int bucket_pairs(fuser *F, const fp_fusion_params *prm, int32_t buf,
                        cand_list *L) {
  const fp_buffer *b = fp_graph_buffer(F->g, buf);
  int32_t k = 0, e = ++F->epoch;
  for (int32_t i = -1; i < b->n_readers; i++) {
    int32_t v = i < 0 ? b->writer : b->readers[i];
    if (v < 0)
      continue;
    int32_t gv = F->grp[v];
    if (F->mark2[gv] == e || (F->flags[gv] & GF_EXTERN))
      continue;
    F->mark2[gv] = e;
    F->tmp[k++] = F->pos[gv]; /* sort by position, map back below */
  }
  qsort(F->tmp, (size_t)k, sizeof *F->tmp, cmp_by_pos);
  for (int32_t i = 0; i < k; i++)
    for (int32_t j = i + 1; j < k && j <= i + prm->bucket_pairs; j++)
      if (cand_push(L, F->slot[F->tmp[i]], F->slot[F->tmp[j]]) != 0)
        return -1;
  return 0;
}

/* How live groups a and b may fuse, pos[a] < pos[b]: 1 as one loop nest,
 * or the depth of an outer-loop fusion negated, or 0 when they may not.
 * Fills *pi, and sets pi->scored, unless the pair is illegal without
 * outer-loop fusion to try. */
static int32_t fusible(fuser *F, const fp_fusion_params *prm, int32_t a,
                       int32_t b, pair_info *pi) {
  bool legal = fuser_legal(F, a, b);
  if (!legal && !F->cpp)
    return 0;
  fuser_score(F, a, b, pi);
  pi->scored = true;
  if (legal && fuser_acceptable(F, prm, pi))
    return 1;
  return -fuser_outer_depth(F, prm, a, b, pi);
}

/* All candidate pairs of a round, deduplicated, fusible: *n0 pairs of
 * one loop nest, then the outer-loop pairs, each part sorted by score
 * (Inductor ranks only the pairs of its best priority,
 * get_fusion_pair_priority; fuse_rounds tries the outer-loop pairs when
 * the others fuse nothing). */
static int collect(fuser *F, const fp_fusion_params *prm, cand_list *L,
                   size_t *n0) {
  L->n = 0;
  *n0 = 0;
  for (int32_t b = 0; b < fp_graph_buffer_count(F->g); b++)
    if (bucket_pairs(F, prm, b, L) != 0)
      return -1;
  if (L->n == 0)
    return 0;
  qsort(L->c, L->n, sizeof *L->c, cmp_pair_ids);
  size_t m = 0, n_outer = 0;
  for (size_t i = 0; i < L->n; i++) {
    cand c = L->c[i];
    if (m && L->c[m - 1].a == c.a && L->c[m - 1].b == c.b)
      continue;
    bool swap = F->pos[c.a] > F->pos[c.b];
    int32_t how = fusible(F, prm, swap ? c.b : c.a, swap ? c.a : c.b, &c.pi);
    if (how == 0)
      continue;
    c.outer = how < 0;
    n_outer += c.outer;
    c.key_a = F->minidx[c.a];
    c.key_b = F->minidx[c.b];
    L->c[m++] = c;
  }
  L->n = m;
  *n0 = m - n_outer;
  cand *tmp = malloc((n_outer + 1) * sizeof *tmp);
  if (!tmp)
    return -1;
  size_t k = 0, o = 0; /* stable: the one-nest pairs first */
  for (size_t i = 0; i < m; i++) {
    if (L->c[i].outer)
      tmp[o++] = L->c[i];
    else
      L->c[k++] = L->c[i];
  }
  memcpy(L->c + k, tmp, o * sizeof *tmp);
  free(tmp);
  return sort_by_score(L->c, k) != 0 || sort_by_score(L->c + k, o) != 0 ? -1
                                                                        : 0;
}

/* ---- rounds and the driver ------------------------------------------------
 */

/* Where fp_fusion_decisions wants each decision (NULL: not logged): its
 * callback, and a peak tracker over the fusion-time order that says
 * whether a fusion raises the plan's peak. */
typedef struct decision_log {
  fp_decision_fn fn;
  void *ctx;
  peak_tracker *P;
  int32_t round;
  int failed; /* the callback asked to stop */
} decision_log;

/* Hands one decision to the log: the pair as greedy sees it now. */
static void log_decision(fuser *F, decision_log *D, const cand *c,
                         const pair_info *pi, int raises, bool fused) {
  fp_fusion_decision d = {.round = D->round,
                          .u = c->a,
                          .v = c->b,
                          .size_u = F->size[fuser_find(F, c->a)],
                          .size_v = F->size[fuser_find(F, c->b)],
                          .shared_bytes = pi ? pi->shared : 0,
                          .vertical = pi && pi->vertical,
                          .proximity = pi ? pi->proximity : -1,
                          .raises_peak = raises,
                          .fused = fused};
  if (!D->failed && D->fn(&d, D->ctx) != 0)
    D->failed = 1;
}

/* Tries one candidate with the groups as they are now; true if fused.
 * Logs the decision into D when given. */
static bool try_fuse(fuser *F, const fp_fusion_params *prm, const cand *c,
                     peak_tracker *P, uint64_t limit, decision_log *D) {
  int32_t a = fuser_find(F, c->a), b = fuser_find(F, c->b);
  pair_info pi = {0};
  if (a == b)
    return false; /* one group already: no decision */
  if (F->pos[a] > F->pos[b]) {
    int32_t t = a;
    a = b;
    b = t;
  }
  int32_t how = fusible(F, prm, a, b, &pi);
  if (how == 0 || fuser_creates_cycle(F, a, b)) {
    if (D)
      log_decision(F, D, c, pi.scored ? &pi : NULL, -1, false);
    return false;
  }
  int raises = -1;
  if (D && D->P)
    raises = peak_tracker_try(D->P, a, b) > peak_tracker_peak(D->P);
  if (P && peak_tracker_try(P, a, b) > limit) {
    if (D)
      log_decision(F, D, c, &pi, raises, false);
    return false;
  }
  if (D)
    log_decision(F, D, c, &pi, raises, true);
  fuser_merge(F, a, b, how < 0 ? -how : 0);
  if (P)
    peak_tracker_commit(P);
  if (D && D->P)
    peak_tracker_commit(D->P);
  return true;
}

/* Fuses rounds until one changes nothing (fuse_nodes), logging each
 * decision into D when given.  -1 when out of memory. */
static int fuse_rounds(fuser *F, const fp_fusion_params *prm, peak_tracker *P,
                       uint64_t limit, decision_log *D) {
  cand_list L = {0};
  int rc = 0;
  for (int32_t r = 0; r < prm->rounds; r++) {
    size_t n0;
    if (collect(F, prm, &L, &n0) != 0) {
      rc = -1;
      break;
    }
    int64_t fused = 0;
    if (D)
      D->round = r;
    for (size_t i = 0; i < n0; i++)
      fused += try_fuse(F, prm, &L.c[i], P, limit, D);
    if (fused == 0) /* no other pair fused: the outer-loop pairs */
      for (size_t i = n0; i < L.n; i++)
        fused += try_fuse(F, prm, &L.c[i], P, limit, D);
    if (fused == 0 || (D && D->failed))
      break;
  }
  free(L.c);
  return rc;
}

/* The unfused plan in its lowest-peak order (listed, lpmf, bfs, dfs), with
 * its timeline; the start of greedy-peak. */
static fp_status best_unfused(const fp_graph *g, fp_plan *p, fp_metrics *m,
                              fp_step **timeline, fp_error *err) {
  fp_status st = fp_plan_make_eager(p, g, err);
  if (st == FP_OK)
    st = fp_plan_reorder(g, p, FP_ORDER_BEST, NULL, err);
  *timeline = calloc((size_t)fp_plan_group_count(p) + 1, sizeof **timeline);
  if (st == FP_OK && !*timeline)
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
  if (st == FP_OK)
    st = fp_plan_eval_k(g, p, INT32_MAX, m, *timeline, err);
  return st;
}

/* greedy-peak: fusion under the peak limit, from the best unfused order;
 * the final order is the best of the fusion-time order and `prm->order`. */
static fp_status fuse_peak(fuser *F, const fp_fusion_params *prm, fp_plan *out,
                           fp_error *err) {
  const fp_graph *g = F->g;
  fp_metrics m, eager;
  fp_step *tl = NULL;
  peak_tracker *P = NULL;
  fp_plan *alt = fp_plan_create();
  fp_status st = alt ? fp_plan_make_eager(out, g, err) : FP_ENOMEM;
  if (st == FP_OK)
    st = fp_plan_eval_k(g, out, INT32_MAX, &eager, NULL, err);
  uint64_t limit = fp_limits_peak_cap(&prm->limits, eager.peak_bytes);
  if (st == FP_OK)
    st = best_unfused(g, out, &m, &tl, err);
  if (st == FP_OK && m.peak_bytes > limit)
    st = fp_error_set(err, FP_EINFEASIBLE,
                      "peak limit %llu is below the lowest peak of any order "
                      "tried (%llu bytes)",
                      (unsigned long long)limit,
                      (unsigned long long)m.peak_bytes);
  if (st != FP_OK)
    goto done;
  fuser_set_order(F, out);
  if (!(P = peak_tracker_create(F, tl)) ||
      fuse_rounds(F, prm, P, limit, NULL) != 0 ||
      fuser_plan(F, out, NULL, err) != FP_OK ||
      fp_plan_copy(alt, out, err) != FP_OK) {
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
    goto done;
  }
  /* A memory-aware reorder may lower the peak further; keep it only then. */
  fp_metrics now, re;
  if ((st = fp_plan_reorder(g, alt, prm->order, NULL, err)) == FP_OK &&
      (st = fp_plan_eval_k(g, out, F->k, &now, NULL, err)) == FP_OK &&
      (st = fp_plan_eval_k(g, alt, F->k, &re, NULL, err)) == FP_OK &&
      re.peak_bytes < now.peak_bytes)
    st = fp_plan_copy(out, alt, err);
done:
  free(tl);
  peak_tracker_destroy(P);
  fp_plan_destroy(alt);
  return st == FP_ENOMEM && err && err->code != FP_ENOMEM
             ? fp_error_set(err, FP_ENOMEM, "out of memory")
             : st;
}

/* greedy / greedy-lowmem: fusion with Inductor's C++ rules where the
 * graph has loop nests, then code generation's kernels; then either
 * Inductor's reorder of its scheduler groups (each one's kernels kept
 * together, in the order they were fused), or listed order (each group
 * at the earliest position its members allow) and `prm->order`. */
static fp_status fuse_greedy(fuser *F, const fp_fusion_params *prm,
                             fp_plan *out, fp_error *err) {
  fuser_set_cpp(F);
  int32_t *sched = malloc(((size_t)F->n + 1) * sizeof *sched);
  fp_status st = FP_OK;
  if (!sched || fuse_rounds(F, prm, NULL, 0, NULL) != 0 ||
      fuser_plan(F, out, sched, err) != FP_OK) {
    free(sched);
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  }
  if (prm->order == FP_ORDER_INDUCTOR) {
    st = inductor_reorder_parts(F->g, out, sched, F->n, NULL, err);
  } else {
    st = fp_plan_reorder(F->g, out, FP_ORDER_LISTED, NULL, err);
    if (st == FP_OK && prm->order != FP_ORDER_LISTED)
      st = fp_plan_reorder(F->g, out, prm->order, NULL, err);
  }
  free(sched);
  return st;
}

fp_status fp_fuse(const fp_graph *g, const fp_fusion_params *prm, fp_plan *out,
                  fp_error *err) {
  fp_status st = fp_fusion_params_check(prm, err);
  if (st != FP_OK)
    return st;
  if (fp_arg_graph(g, "fuse", err) != FP_OK ||
      fp_arg_ptr(out, "fuse", "the plan", err) != FP_OK)
    return FP_EARG;
  double t0 = fp_clock_now();
  int32_t k = fp_limits_fusion_size(&prm->limits, g);
  fuser F;
  if (fuser_init(&F, g, k) != 0) {
    fuser_free(&F);
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  }
  if (prm->method == FP_METHOD_EAGER) {
    st = fp_plan_make_eager(out, g, err);
    if (st == FP_OK && prm->order != FP_ORDER_LISTED)
      st = fp_plan_reorder(g, out, prm->order, NULL, err);
  } else if (prm->method == FP_METHOD_GREEDY_PEAK) {
    st = fuse_peak(&F, prm, out, err);
  } else {
    st = fuse_greedy(&F, prm, out, err);
  }
  fuser_free(&F);
  fp_metrics m;
  /* Every plan leaves here verified. */
  if (st == FP_OK && (st = fp_plan_eval_k(g, out, k, &m, NULL, err)) != FP_OK &&
      st != FP_ENOMEM) { /* the message is copied: it is rewritten in place */
    char why[FP_ERROR_MSG_MAX];
    snprintf(why, sizeof why, "%s", err ? err->msg : "");
    st = fp_error_set(err, FP_EINTERNAL, "%s produced an illegal plan: %s",
                      fp_method_name(prm->method), why);
  }
  if (st != FP_OK)
    return st;
  fp_solver_info *si = fp_plan_solver(out);
  fp_solver_info_init(si);
  snprintf(si->method, sizeof si->method, "%s", fp_method_name(prm->method));
  snprintf(si->status, sizeof si->status, "heuristic");
  si->objective = (double)m.traffic_bytes;
  si->time_s = fp_clock_now() - t0;
  return fp_plan_set_graph_name(out, fp_graph_name(g), err);
}

/* The fusion-time (listed) order's timeline, and a tracker over it. */
static peak_tracker *listed_tracker(fuser *F, fp_error *err) {
  fp_plan *p = fp_plan_create();
  fp_step *tl = calloc((size_t)F->n + 1, sizeof *tl);
  peak_tracker *P = NULL;
  fp_metrics m;
  if (p && tl && fp_plan_make_eager(p, F->g, err) == FP_OK &&
      fp_plan_eval_k(F->g, p, INT32_MAX, &m, tl, err) == FP_OK)
    P = peak_tracker_create(F, tl);
  free(tl);
  fp_plan_destroy(p);
  return P;
}

fp_status fp_fusion_decisions(const fp_graph *g, const fp_fusion_params *prm,
                              fp_decision_fn fn, void *ctx, fp_error *err) {
  fp_status st = fp_fusion_params_check(prm, err);
  if (st != FP_OK)
    return st;
  if (fp_arg_graph(g, "fusion decisions", err) != FP_OK)
    return FP_EARG;
  if (!fn)
    return fp_error_set(err, FP_EARG, "fusion decisions: fn is NULL");
  if (prm->method != FP_METHOD_GREEDY && prm->method != FP_METHOD_GREEDY_LOWMEM)
    return fp_error_set(err, FP_EARG,
                        "fusion decisions: only greedy and greedy-lowmem");
  int32_t k = fp_limits_fusion_size(&prm->limits, g);
  fuser F;
  decision_log D = {.fn = fn, .ctx = ctx};
  int rc = fuser_init(&F, g, k);
  if (rc == 0)
    fuser_set_cpp(&F); /* as fuse_greedy */
  if (rc != 0 || !(D.P = listed_tracker(&F, err)) ||
      fuse_rounds(&F, prm, NULL, 0, &D) != 0)
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
  else if (D.failed)
    st = fp_error_set(err, FP_EARG, "fusion decisions: stopped by the caller");
  peak_tracker_destroy(D.P);
  fuser_free(&F);
  return st;
}
