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
#include "heuristics/peak.h"
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
  memset(prm, 0, sizeof *prm);
  prm->method = method;
  prm->order = method == FP_METHOD_EAGER ? FP_ORDER_LISTED : FP_ORDER_BEST;
  prm->rounds = FP_FUSION_DEFAULT_ROUNDS;
  prm->bucket_pairs = FP_FUSION_DEFAULT_BUCKET_PAIRS;
  prm->max_distance = FP_FUSION_DEFAULT_MAX_DISTANCE;
  prm->min_shared = FP_FUSION_DEFAULT_MIN_SHARED;
}

fp_status fp_fusion_params_check(const fp_fusion_params *prm, fp_error *err) {
  if ((unsigned)prm->method >= FP_METHOD_COUNT_)
    return fp_error_set(err, FP_EARG, "fusion params: method: unknown");
  if ((unsigned)prm->order >= FP_ORDER_COUNT_)
    return fp_error_set(err, FP_EARG, "fusion params: order: unknown");
  if (prm->max_fusion_size < 0)
    return fp_error_set(err, FP_EARG, "fusion params: max_fusion_size < 0");
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
  L->c[L->n++] =
      (cand){a < b ? a : b, a < b ? b : a, {0, 0, false, false}, 0, 0};
  return 0;
}

static int cmp_pair_ids(const void *x, const void *y) {
  const cand *p = x, *q = y;
  if (p->a != q->a)
    return p->a < q->a ? -1 : 1;
  return (p->b > q->b) - (p->b < q->b);
}

/* Score order: more shared bytes first, then same kind, then closer in
 * the listed order, then listed positions (deterministic). */
static int cmp_score(const void *x, const void *y) {
  const cand *p = x, *q = y;
  if (p->pi.shared != q->pi.shared)
    return p->pi.shared > q->pi.shared ? -1 : 1;
  if (p->pi.same_kind != q->pi.same_kind)
    return p->pi.same_kind ? -1 : 1;
  if (p->pi.proximity != q->pi.proximity)
    return p->pi.proximity < q->pi.proximity ? -1 : 1;
  if (p->key_a != q->key_a)
    return p->key_a < q->key_a ? -1 : 1;
  return (p->key_b > q->key_b) - (p->key_b < q->key_b);
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

/* All candidate pairs of a round, deduplicated, legal and acceptable,
 * sorted by score. */
static int collect(fuser *F, const fp_fusion_params *prm, cand_list *L) {
  L->n = 0;
  for (int32_t b = 0; b < fp_graph_buffer_count(F->g); b++)
    if (bucket_pairs(F, prm, b, L) != 0)
      return -1;
  if (L->n == 0)
    return 0;
  qsort(L->c, L->n, sizeof *L->c, cmp_pair_ids);
  size_t m = 0;
  for (size_t i = 0; i < L->n; i++) {
    cand c = L->c[i];
    if (m && L->c[m - 1].a == c.a && L->c[m - 1].b == c.b)
      continue;
    if (!fuser_legal(F, c.a, c.b))
      continue;
    fuser_score(F, c.a, c.b, &c.pi);
    if (!fuser_acceptable(F, prm, &c.pi))
      continue;
    c.key_a = F->minidx[c.a];
    c.key_b = F->minidx[c.b];
    L->c[m++] = c;
  }
  L->n = m;
  qsort(L->c, L->n, sizeof *L->c, cmp_score);
  return 0;
}

/* ---- rounds and the driver ------------------------------------------------
 */

/* Tries one candidate with the groups as they are now; true if fused. */
static bool try_fuse(fuser *F, const fp_fusion_params *prm, const cand *c,
                     peak_tracker *P, uint64_t limit) {
  int32_t a = fuser_find(F, c->a), b = fuser_find(F, c->b);
  pair_info pi;
  if (a == b || !fuser_legal(F, a, b))
    return false;
  fuser_score(F, a, b, &pi);
  if (!fuser_acceptable(F, prm, &pi))
    return false;
  if (F->pos[a] > F->pos[b]) {
    int32_t t = a;
    a = b;
    b = t;
  }
  if (fuser_creates_cycle(F, a, b))
    return false;
  if (P && peak_tracker_try(P, a, b) > limit)
    return false;
  fuser_merge(F, a, b);
  if (P)
    peak_tracker_commit(P);
  return true;
}

/* Fuses rounds until one changes nothing (fuse_nodes).  -1 when out of
 * memory. */
static int fuse_rounds(fuser *F, const fp_fusion_params *prm, peak_tracker *P,
                       uint64_t limit) {
  cand_list L = {0};
  int rc = 0;
  for (int32_t r = 0; r < prm->rounds; r++) {
    if (collect(F, prm, &L) != 0) {
      rc = -1;
      break;
    }
    int64_t fused = 0;
    for (size_t i = 0; i < L.n; i++)
      fused += try_fuse(F, prm, &L.c[i], P, limit);
    if (fused == 0)
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
  uint64_t limit = prm->peak_limit ? prm->peak_limit : eager.peak_bytes;
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
  if (!(P = peak_tracker_create(F, tl)) || fuse_rounds(F, prm, P, limit) != 0 ||
      fuser_plan(F, out, err) != FP_OK ||
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

/* greedy / greedy-lowmem: fusion, then listed order (each group at the
 * earliest position its members allow), then `prm->order`. */
static fp_status fuse_greedy(fuser *F, const fp_fusion_params *prm,
                             fp_plan *out, fp_error *err) {
  if (fuse_rounds(F, prm, NULL, 0) != 0)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  fp_status st = fuser_plan(F, out, err);
  if (st == FP_OK)
    st = fp_plan_reorder(F->g, out, FP_ORDER_LISTED, NULL, err);
  if (st == FP_OK && prm->order != FP_ORDER_LISTED)
    st = fp_plan_reorder(F->g, out, prm->order, NULL, err);
  return st;
}

fp_status fp_fuse(const fp_graph *g, const fp_fusion_params *prm, fp_plan *out,
                  fp_error *err) {
  fp_status st = fp_fusion_params_check(prm, err);
  if (st != FP_OK)
    return st;
  double t0 = fp_clock_now();
  int32_t k =
      prm->max_fusion_size ? prm->max_fusion_size : fp_graph_max_fusion_size(g);
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
