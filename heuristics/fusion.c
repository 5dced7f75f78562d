/*
 * fusion.c -- greedy fusion in the manner of PyTorch Inductor's scheduler
 * (fuse_nodes / get_possible_fusions / score_fusion), its low-memory
 * variant, and a peak-aware variant.
 *
 * State: groups of nodes (linked member lists), an alias table (a group
 * fused into another points at it), and a topological order of the groups
 * kept in fixed slots: slot[pos] = group or -1.  Invariant: for every edge
 * g -> h of the group DAG, pos[g] < pos[h].
 *
 * Fusing A and B (pos[A] < pos[B]) creates a cycle exactly when some group
 * X != A, B has a path A -> X -> ... -> B.  Such X sit strictly between A
 * and B in the order, so the search explores only descendants of A with
 * pos < pos[B].  After the fusion the slots in [pos[A], pos[B]] are
 * rewritten as: groups that are not descendants of A, then A+B, then the
 * descendants of A (each list in its old relative order) -- which keeps
 * the invariant (a local version of the Pearce-Kelly reordering).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heuristics/fusion_internal.h"
#include "model/eval.h"

static const char *const method_names[] = {
#define FP_METHOD_STR_(name, str) str,
    FP_METHOD_MAP(FP_METHOD_STR_)
#undef FP_METHOD_STR_
};

const char *fp_method_name(fp_method m) {
  return (unsigned)m < FP_METHOD_COUNT_ ? method_names[m] : "unknown";
}

int fp_method_parse(const char *s) {
  for (int i = 0; i < FP_METHOD_COUNT_; i++)
    if (strcmp(s, method_names[i]) == 0)
      return i;
  return -1;
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

/* ---- state ----------------------------------------------------------------
 */

void fuser_free(fuser *F) {
  free(F->grp);
  free(F->alias);
  free(F->head);
  free(F->tail);
  free(F->next);
  free(F->size);
  free(F->minidx);
  free(F->maxidx);
  free(F->flags);
  free(F->pos);
  free(F->slot);
  free(F->succ_off);
  free(F->succ);
  free(F->mark);
  free(F->mark2);
  free(F->stack);
  free(F->desc);
  free(F->buf_mark);
  free(F->buf_flag);
  free(F->tmp);
  memset(F, 0, sizeof *F);
}

/* Distinct consumer nodes of each node's writes, as CSR. */
static int build_node_succ(fuser *F) {
  const fp_graph *g = F->g;
  int32_t n = F->n;
  F->succ_off = calloc((size_t)n + 1, sizeof *F->succ_off);
  if (!F->succ_off)
    return -1;
  for (int pass = 0; pass < 2; pass++) {
    for (int32_t v = 0; v < n; v++)
      F->mark[v] = -1;
    for (int32_t v = 0; v < n; v++) {
      const fp_node *nd = fp_graph_node(g, v);
      int32_t k = 0;
      for (int32_t w = 0; w < nd->n_writes; w++) {
        const fp_buffer *b = fp_graph_buffer(g, nd->writes[w]);
        for (int32_t r = 0; r < b->n_readers; r++) {
          int32_t c = b->readers[r];
          if (F->mark[c] == v)
            continue;
          F->mark[c] = v;
          if (pass)
            F->succ[F->succ_off[v] + k] = c;
          k++;
        }
      }
      if (!pass)
        F->succ_off[v + 1] = F->succ_off[v] + k;
    }
    if (!pass &&
        !(F->succ = malloc(((size_t)F->succ_off[n] + 1) * sizeof *F->succ)))
      return -1;
  }
  return 0;
}

#define ALLOC(p, count) ((p) = malloc(((size_t)(count) + 1) * sizeof *(p)))

int fuser_init(fuser *F, const fp_graph *g, int32_t k) {
  int32_t n = fp_graph_node_count(g), nb = fp_graph_buffer_count(g);
  memset(F, 0, sizeof *F);
  F->g = g;
  F->n = n;
  F->k = k;
  if (!ALLOC(F->grp, n) || !ALLOC(F->alias, n) || !ALLOC(F->head, n) ||
      !ALLOC(F->tail, n) || !ALLOC(F->next, n) || !ALLOC(F->size, n) ||
      !ALLOC(F->minidx, n) || !ALLOC(F->maxidx, n) || !ALLOC(F->flags, n) ||
      !ALLOC(F->pos, n) || !ALLOC(F->slot, n) || !ALLOC(F->mark, n) ||
      !ALLOC(F->mark2, n) || !ALLOC(F->stack, n) || !ALLOC(F->desc, n) ||
      !ALLOC(F->buf_mark, nb) || !ALLOC(F->buf_flag, nb) || !ALLOC(F->tmp, n) ||
      build_node_succ(F) != 0)
    return -1;
  for (int32_t v = 0; v < n; v++) {
    const fp_node *nd = fp_graph_node(g, v);
    F->grp[v] = F->alias[v] = F->head[v] = F->tail[v] = v;
    F->next[v] = -1;
    F->size[v] = 1;
    F->minidx[v] = F->maxidx[v] = v;
    F->flags[v] = (nd->kind == FP_KIND_EXTERN ? GF_EXTERN : 0) |
                  (nd->kind == FP_KIND_REDUCTION ? GF_REDUCTION : 0);
    F->pos[v] = F->slot[v] = v;
    F->mark[v] = F->mark2[v] = -1;
  }
  for (int32_t b = 0; b < nb; b++)
    F->buf_mark[b] = -1;
  F->epoch = 0;
  return 0;
}

int32_t fuser_find(fuser *F, int32_t g) {
  int32_t r = g;
  while (F->alias[r] != r)
    r = F->alias[r];
  while (F->alias[g] != r) { /* path compression */
    int32_t nx = F->alias[g];
    F->alias[g] = r;
    g = nx;
  }
  return r;
}

/* ---- legality and score of a pair ------------------------------------ */

/* Marks the buffers group A touches: bit 1 read, bit 2 written. */
static void mark_buffers(fuser *F, int32_t a) {
  int32_t e = ++F->epoch;
  for (int32_t v = F->head[a]; v >= 0; v = F->next[v]) {
    const fp_node *nd = fp_graph_node(F->g, v);
    for (int32_t i = 0; i < nd->n_reads; i++) {
      int32_t b = nd->reads[i].buffer;
      if (F->buf_mark[b] != e)
        F->buf_mark[b] = e, F->buf_flag[b] = 0;
      F->buf_flag[b] |= 1;
    }
    for (int32_t i = 0; i < nd->n_writes; i++) {
      int32_t b = nd->writes[i];
      if (F->buf_mark[b] != e)
        F->buf_mark[b] = e, F->buf_flag[b] = 0;
      F->buf_flag[b] |= 2;
    }
  }
}

/* Adds buffer b touched by B (bit `how`) to the pair's sums: shared bytes
 * counted once per buffer; vertical when one side writes what the other
 * reads.  Bit 4 marks "already counted". */
static void visit_shared(fuser *F, int32_t b, int how, pair_info *pi) {
  if (F->buf_mark[b] != F->epoch || (F->buf_flag[b] & 4))
    return;
  F->buf_flag[b] |= 4;
  pi->shared += fp_graph_buffer(F->g, b)->bytes;
  if (((F->buf_flag[b] & 2) && how == 1) || ((F->buf_flag[b] & 1) && how == 2))
    pi->vertical = true;
}

/* Inductor's memory score (bytes of buffers both groups touch), whether
 * the pair is vertical, and its proximity in the listed order. */
void fuser_score(fuser *F, int32_t a, int32_t b, pair_info *pi) {
  pi->shared = 0;
  pi->vertical = false;
  mark_buffers(F, a);
  for (int32_t v = F->head[b]; v >= 0; v = F->next[v]) {
    const fp_node *nd = fp_graph_node(F->g, v);
    for (int32_t i = 0; i < nd->n_reads; i++)
      visit_shared(F, nd->reads[i].buffer, 1, pi);
    for (int32_t i = 0; i < nd->n_writes; i++)
      visit_shared(F, nd->writes[i], 2, pi);
  }
  int32_t d1 = F->minidx[a] - F->maxidx[b], d2 = F->minidx[b] - F->maxidx[a];
  d1 = d1 < 0 ? -d1 : d1;
  d2 = d2 < 0 ? -d2 : d2;
  pi->proximity = d1 > d2 ? d1 : d2;
  pi->same_kind = (F->flags[a] & GF_REDUCTION) == (F->flags[b] & GF_REDUCTION);
}

/* Whether groups a and b may form one group: size, no extern, every
 * cross pair compatible (rule 2 is pairwise over the whole group). */
bool fuser_legal(fuser *F, int32_t a, int32_t b) {
  if (a == b || F->size[a] + F->size[b] > F->k ||
      ((F->flags[a] | F->flags[b]) & GF_EXTERN))
    return false;
  for (int32_t u = F->head[a]; u >= 0; u = F->next[u])
    for (int32_t v = F->head[b]; v >= 0; v = F->next[v])
      if (!fp_graph_compatible(F->g, u, v))
        return false;
  return true;
}

/* The pair rules beyond legality: enough shared bytes; horizontal pairs
 * only when allowed and not too far apart (are_long_distant_nodes). */
bool fuser_acceptable(const fuser *F, const fp_fusion_params *prm,
                      const pair_info *pi) {
  (void)F;
  if (pi->shared < prm->min_shared)
    return false;
  if (pi->vertical)
    return true;
  return prm->method != FP_METHOD_GREEDY_LOWMEM &&
         pi->proximity <= prm->max_distance;
}

/* ---- cycles and merging ---------------------------------------------------
 */

/* Pushes the groups that consume a's members' outputs onto the DFS stack
 * (those before b, not yet seen); true when one of them is b itself and
 * `from` is not a (a path a -> ... -> from -> b). */
static bool push_consumers(fuser *F, int32_t from, int32_t a, int32_t b,
                           int32_t *sp) {
  for (int32_t v = F->head[from]; v >= 0; v = F->next[v])
    for (int32_t j = F->succ_off[v]; j < F->succ_off[v + 1]; j++) {
      int32_t h = F->grp[F->succ[j]];
      if (h == from || h == a)
        continue;
      if (h == b) {
        if (from != a)
          return true;
        continue; /* the direct edge a -> b is the fusion itself */
      }
      if (F->pos[h] < F->pos[b] && F->mark[h] != F->epoch) {
        F->mark[h] = F->epoch;
        F->desc[F->n_desc++] = h;
        F->stack[(*sp)++] = h;
      }
    }
  return false;
}

bool fuser_creates_cycle(fuser *F, int32_t a, int32_t b) {
  int32_t sp = 0;
  F->epoch++;
  F->n_desc = 0;
  if (push_consumers(F, a, a, b, &sp))
    return true;
  while (sp > 0)
    if (push_consumers(F, F->stack[--sp], a, b, &sp))
      return true;
  return false;
}

/* The new contents of slots pos[a]..pos[b] after fusing b into a: groups
 * that are not descendants of a, then a, then a's descendants, then -1
 * for the freed slot.  Written to out[0 .. pos[b] - pos[a]]. */
void fuser_interval(const fuser *F, int32_t a, int32_t b, int32_t *out) {
  int32_t lo = F->pos[a], hi = F->pos[b], k = 0;
  for (int32_t s = lo + 1; s < hi; s++) {
    int32_t h = F->slot[s];
    if (h >= 0 && F->mark[h] != F->epoch)
      out[k++] = h;
  }
  out[k++] = a;
  for (int32_t s = lo + 1; s < hi; s++) {
    int32_t h = F->slot[s];
    if (h >= 0 && F->mark[h] == F->epoch)
      out[k++] = h;
  }
  while (k <= hi - lo)
    out[k++] = -1;
}

void fuser_merge(fuser *F, int32_t a, int32_t b) {
  int32_t lo = F->pos[a], hi = F->pos[b];
  fuser_interval(F, a, b, F->tmp);
  for (int32_t s = lo; s <= hi; s++) {
    F->slot[s] = F->tmp[s - lo];
    if (F->slot[s] >= 0)
      F->pos[F->slot[s]] = s;
  }
  for (int32_t v = F->head[b]; v >= 0; v = F->next[v])
    F->grp[v] = a;
  F->next[F->tail[a]] = F->head[b];
  F->tail[a] = F->tail[b];
  F->size[a] += F->size[b];
  F->minidx[a] = F->minidx[b] < F->minidx[a] ? F->minidx[b] : F->minidx[a];
  F->maxidx[a] = F->maxidx[b] > F->maxidx[a] ? F->maxidx[b] : F->maxidx[a];
  F->flags[a] |= F->flags[b];
  F->alias[b] = a;
  F->pos[b] = -1;
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

fp_status fuser_plan(const fuser *F, fp_plan *out, fp_error *err) {
  fp_plan_clear(out);
  for (int32_t s = 0; s < F->n; s++) {
    int32_t h = F->slot[s];
    if (h < 0)
      continue;
    if (fp_plan_open_group(out, err) != FP_OK)
      return FP_ENOMEM;
    for (int32_t v = F->head[h]; v >= 0; v = F->next[v])
      if (fp_plan_append_node(out, v, err) != FP_OK)
        return FP_ENOMEM;
  }
  return FP_OK;
}

void fuser_set_order(fuser *F, const fp_plan *p) {
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t len;
    int32_t v = fp_plan_group(p, t, &len)[0];
    F->pos[v] = t;
    F->slot[t] = v;
  }
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
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
  double t0 = now_s();
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
  if (st == FP_OK && fp_plan_eval_k(g, out, k, &m, NULL, err) != FP_OK)
    st = fp_error_set(err, FP_EINTERNAL, "%s produced an illegal plan: %s",
                      fp_method_name(prm->method), err ? err->msg : "");
  if (st != FP_OK)
    return st;
  fp_solver_info *si = fp_plan_solver(out);
  fp_solver_info_init(si);
  snprintf(si->method, sizeof si->method, "%s", fp_method_name(prm->method));
  snprintf(si->status, sizeof si->status, "heuristic");
  si->objective = (double)m.traffic_bytes;
  si->time_s = now_s() - t0;
  fp_plan_set_graph_name(out, fp_graph_name(g), NULL);
  return FP_OK;
}
