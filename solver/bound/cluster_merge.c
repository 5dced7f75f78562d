/*
 * cluster_merge.c -- a partition's traffic bound raised by moving buffers
 * between pairs of its clusters (cluster_merge.h).
 *
 * Why: a fusible node v in N(A) and N(B) of two clusters may be grouped
 * one way in A's least-traffic plan and another way in B's, while no plan
 * can group it both ways (the two sets of partners are incompatible, or a
 * path through an extern node separates them).  The two minima then both
 * count a saving that no plan makes at once.  A cluster that holds both
 * sides sees the conflict.  Any partition of the buffers gives a valid
 * bound (bound.c), so the buffers of B that touch N(A), T, may move to A:
 * the new bound is lb(A + T) + lb(B - T), each the exact least traffic
 * of its cluster graph (least_traffic.c).  Both directions are tried.
 * Moving T rather than merging all of B keeps the graphs small: on a
 * generated random 1,000-node graph the best moves of 50 pairs add up to
 * 6.56 MB, found in 1.5 s; merging the whole pairs, 6.21 MB in 22 s (some
 * 30-node merged graphs ran out of budget).
 *
 * Most pairs gain nothing, so a pair is screened first: when the two
 * clusters' optimal groupings, joined (nodes grouped together in either
 * are grouped together), make a legal plan of the graph of A + B, that
 * plan costs lb(A) + lb(B), so the least traffic of A + B, and with it
 * lb(A + T) + lb(B - T) (a partition of the same buffers), is no more
 * than that: no move can gain.  Pairs go by the bytes of the largest
 * buffer the shared node touches, largest first.  The gaining moves of
 * disjoint pairs are applied, best first, and the search runs again on
 * the new partition (rounds) while it gains and time lasts.
 *
 * Calls: cluster_graph.c, least_traffic.c, window.c, eval.c, plan.c.
 */
#include "solver/bound/cluster_merge.h"

#include <stdlib.h>
#include <string.h>

#include "model/eval.h"
#include "model/plan.h"
#include "model/util.h"
#include "solver/bound/cluster_graph.h"
#include "solver/bound/least_traffic.h"
#include "solver/bound/partition.h"
#include "solver/window/window.h"

/* Groups the exact search of one cluster graph may examine, and its
 * wall-clock cap in seconds (as for a cluster of bound.c). */
#define MERGE_SEARCH_BUDGET 30000000
#define MERGE_TIME 2.0
/* Rounds of moves at most (each on the partition the last one left). */
#define MERGE_ROUNDS 8

typedef struct merge_move {
  int32_t a, b;            /* the pair of clusters, a < b */
  uint64_t prio;           /* bytes of the largest buffer of a shared node */
  int32_t to, from;        /* the better move: T from `from` to `to` */
  uint64_t lb_to, lb_from; /* their bounds after it */
  uint64_t gain;           /* lb_to + lb_from less the two bounds before */
} merge_move;

/* One round's view of the partition *P. */
typedef struct merger {
  const fp_graph *g;
  int32_t k;
  solver_partition *P; /* the partition being raised */
  solver_clusters C;   /* its buffers by cluster (C.of is P->of) */
  cluster_build B;
  int32_t *mstart, *mnode; /* CSR: N(S) of each cluster, ascending */
  int32_t *label; /* per mnode entry: its group in the cluster's optimum */
  uint8_t *state; /* per cluster: 0 not searched, 1 labels, 2 no optimum */
  int32_t *ubufs, *tbufs, *rbufs; /* scratch: A + B or A + T, T, B - T */
  merge_move *pairs;
  int32_t n_pairs;
  uint8_t *changed; /* per cluster: moved into or out of in the last round
                       (all, before the first): only pairs with one such
                       cluster can gain anything new */
  double deadline;
  const volatile sig_atomic_t *cancel;
} merger;

/* Frees one round's state (not the partition). */
static void round_free(merger *M) {
  M->C.of = NULL; /* P's */
  solver_clusters_free(&M->C);
  cluster_build_free(&M->B);
  free(M->mstart);
  free(M->mnode);
  free(M->label);
  free(M->state);
  free(M->ubufs);
  free(M->pairs);
  M->mstart = M->mnode = M->label = M->ubufs = NULL;
  M->state = NULL;
  M->pairs = NULL;
  M->n_pairs = 0;
}

/* The buffers of each cluster of M->P, ascending, into M->C.  0, or -1
 * when out of memory. */
static int clusters_of(merger *M) {
  memset(&M->C, 0, sizeof M->C);
  M->C.count = M->P->count;
  M->C.of = M->P->of;
  return cluster_buffer_lists(M->g, M->P->of, M->P->count, &M->C.start,
                              &M->C.list);
}

/* The nodes N(S) of cluster c, each once, into out (when not NULL), in
 * no particular order; returns how many.  stamp[v] != c for every node
 * on entry, == c for N(S) after. */
static int32_t cluster_nodes(const merger *M, int32_t c, int32_t *stamp,
                             int32_t *out) {
  int32_t n = 0;
  for (int32_t i = M->C.start[c]; i < M->C.start[c + 1]; i++) {
    const fp_buffer *buf = fp_graph_buffer(M->g, M->C.list[i]);
    for (int32_t j = -1; j < buf->n_readers; j++) {
      int32_t v = j < 0 ? buf->writer : buf->readers[j];
      if (v >= 0 && stamp[v] != c) {
        stamp[v] = c;
        if (out)
          out[n] = v;
        n++;
      }
    }
  }
  return n;
}

/* N(S) of every cluster, ascending, into the CSR mstart/mnode.  0, or -1
 * when out of memory. */
static int collect_nodes(merger *M) {
  int32_t n = fp_graph_node_count(M->g), nc = M->C.count;
  int32_t *stamp = malloc(((size_t)n + 1) * sizeof *stamp);
  M->mstart = calloc((size_t)nc + 1, sizeof *M->mstart);
  if (!stamp || !M->mstart)
    return free(stamp), -1;
  memset(stamp, 0xff, (size_t)n * sizeof *stamp);
  for (int32_t c = 0; c < nc; c++)
    M->mstart[c + 1] = M->mstart[c] + cluster_nodes(M, c, stamp, NULL);
  M->mnode = malloc(((size_t)M->mstart[nc] + 1) * sizeof *M->mnode);
  M->label = malloc(((size_t)M->mstart[nc] + 1) * sizeof *M->label);
  M->state = calloc((size_t)nc + 1, 1);
  if (!M->mnode || !M->label || !M->state)
    return free(stamp), -1;
  memset(stamp, 0xff, (size_t)n * sizeof *stamp);
  for (int32_t c = 0; c < nc; c++) {
    int32_t *at = M->mnode + M->mstart[c];
    qsort(at, (size_t)cluster_nodes(M, c, stamp, at), sizeof *at, sub_cmp_node);
  }
  free(stamp);
  return 0;
}

/* |N(a) u N(b)|: both lists ascending. */
static int32_t union_size(const merger *M, int32_t a, int32_t b) {
  int32_t i = M->mstart[a], j = M->mstart[b], n = 0;
  while (i < M->mstart[a + 1] || j < M->mstart[b + 1]) {
    int32_t x = i < M->mstart[a + 1] ? M->mnode[i] : INT32_MAX;
    int32_t y = j < M->mstart[b + 1] ? M->mnode[j] : INT32_MAX;
    i += x <= y;
    j += y <= x;
    n++;
  }
  return n;
}

/* Bytes of the largest buffer node v writes or reads. */
static uint64_t largest_buffer(const fp_graph *g, int32_t v) {
  const fp_node *n = fp_graph_node(g, v);
  uint64_t best = 0;
  for (int32_t i = 0; i < n->n_writes; i++)
    if (fp_graph_buffer(g, n->writes[i])->bytes > best)
      best = fp_graph_buffer(g, n->writes[i])->bytes;
  for (int32_t i = 0; i < n->n_reads; i++)
    if (fp_graph_buffer(g, n->reads[i].buffer)->bytes > best)
      best = fp_graph_buffer(g, n->reads[i].buffer)->bytes;
  return best;
}

static int by_cluster_pair(const void *x, const void *y) {
  const merge_move *p = x, *q = y;
  if (p->a != q->a)
    return p->a < q->a ? -1 : 1;
  if (p->b != q->b)
    return p->b < q->b ? -1 : 1;
  return p->prio > q->prio ? -1 : p->prio < q->prio;
}

static int by_prio(const void *x, const void *y) {
  const merge_move *p = x, *q = y;
  if (p->prio != q->prio)
    return p->prio > q->prio ? -1 : 1;
  return by_cluster_pair(x, y);
}

static int by_gain(const void *x, const void *y) {
  const merge_move *p = x, *q = y;
  if (p->gain != q->gain)
    return p->gain > q->gain ? -1 : 1;
  return by_cluster_pair(x, y);
}

/* Appends the pairs of clusters holding fusible node v (clusters[0..n)). */
static void add_pairs(merger *M, int32_t v, const int32_t *clusters,
                      int32_t n) {
  uint64_t prio = largest_buffer(M->g, v);
  for (int32_t i = 0; i < n; i++)
    for (int32_t j = i + 1; j < n; j++) {
      int32_t a = clusters[i] < clusters[j] ? clusters[i] : clusters[j];
      int32_t b = clusters[i] ^ clusters[j] ^ a;
      if (union_size(M, a, b) <= SOLVER_LT_MAX_NODES)
        M->pairs[M->n_pairs++] = (merge_move){a, b, prio, -1, -1, 0, 0, 0};
    }
}

/* The candidate pairs: clusters sharing a fusible node, at most
 * SOLVER_LT_MAX_NODES nodes together, once each, by priority.  0, or
 * -1 when out of memory. */
static int candidate_pairs(merger *M) {
  int32_t n = fp_graph_node_count(M->g), total = M->mstart[M->C.count];
  int32_t *cnt = calloc((size_t)n + 1, sizeof *cnt);
  int32_t *start = calloc((size_t)n + 2, sizeof *start);
  int32_t *list = malloc(((size_t)total + 1) * sizeof *list);
  size_t cap = 1;
  if (!cnt || !start || !list)
    goto fail;
  for (int32_t i = 0; i < total; i++)
    cnt[M->mnode[i]]++;
  for (int32_t v = 0; v < n; v++) {
    start[v + 1] = start[v] + cnt[v];
    if (fp_graph_node(M->g, v)->kind != FP_KIND_EXTERN)
      cap += (size_t)cnt[v] * (size_t)cnt[v] / 2;
    cnt[v] = 0;
  }
  for (int32_t c = 0; c < M->C.count; c++)
    for (int32_t i = M->mstart[c]; i < M->mstart[c + 1]; i++) {
      int32_t v = M->mnode[i];
      list[start[v] + cnt[v]++] = c;
    }
  if (!(M->pairs = malloc(cap * sizeof *M->pairs)))
    goto fail;
  for (int32_t v = 0; v < n; v++)
    if (fp_graph_node(M->g, v)->kind != FP_KIND_EXTERN)
      add_pairs(M, v, list + start[v], cnt[v]);
  qsort(M->pairs, (size_t)M->n_pairs, sizeof *M->pairs, by_cluster_pair);
  int32_t kept = 0;
  for (int32_t i = 0; i < M->n_pairs; i++)
    if (kept == 0 || M->pairs[kept - 1].a != M->pairs[i].a ||
        M->pairs[kept - 1].b != M->pairs[i].b)
      M->pairs[kept++] = M->pairs[i];
  M->n_pairs = kept;
  qsort(M->pairs, (size_t)kept, sizeof *M->pairs, by_prio);
  free(cnt);
  free(start);
  free(list);
  return 0;
fail:
  free(cnt);
  free(start);
  free(list);
  return -1;
}

/* The ascending lists x[0..nx) and y[0..ny), disjoint, merged into out;
 * returns how many. */
static int32_t merge_sorted(const int32_t *x, int32_t nx, const int32_t *y,
                            int32_t ny, int32_t *out) {
  int32_t i = 0, j = 0, n = 0;
  while (i < nx || j < ny)
    out[n++] = j >= ny || (i < nx && x[i] < y[j]) ? x[i++] : y[j++];
  return n;
}

/* Builds into M->B.sg the cluster graph of bufs[0..n) (ascending), which
 * count as cluster c's, while moved[0..nm) (buffers of cluster `from`)
 * count as cluster `as`'s.  FP_OK or an error. */
static fp_status build_list(merger *M, int32_t c, const int32_t *bufs,
                            int32_t n, const int32_t *moved, int32_t nm,
                            int32_t as, int32_t from, fp_error *err) {
  for (int32_t i = 0; i < nm; i++)
    M->P->of[moved[i]] = as;
  M->B.bufs = bufs;
  M->B.n_bufs = n;
  fp_status st = cluster_build_graph(&M->B, c, M->k, err);
  for (int32_t i = 0; i < nm; i++)
    M->P->of[moved[i]] = from;
  return st;
}

/* Builds into M->B.sg the cluster graph of cluster a's buffers, and b's
 * too when b >= 0 (their buffers then count as a's).  FP_OK or an error. */
static fp_status build_graph(merger *M, int32_t a, int32_t b, fp_error *err) {
  const solver_clusters *C = &M->C;
  const int32_t *la = C->list + C->start[a];
  int32_t na = C->start[a + 1] - C->start[a];
  if (b < 0)
    return build_list(M, a, la, na, NULL, 0, a, a, err);
  const int32_t *lb = C->list + C->start[b];
  int32_t nb = C->start[b + 1] - C->start[b];
  int32_t n = merge_sorted(la, na, lb, nb, M->ubufs);
  return build_list(M, a, M->ubufs, n, lb, nb, a, b, err);
}

/* The least traffic of M->B.sg, and its plan into q when q is not NULL:
 * out->solved false when the search ran out.  FP_OK or an error. */
static fp_status search(merger *M, fp_plan *q, solver_lt_result *out,
                        fp_error *err) {
  double end = fp_clock_now() + MERGE_TIME;
  return cluster_least_traffic(M->B.sg, M->k, MERGE_SEARCH_BUDGET,
                               end < M->deadline ? end : M->deadline, M->cancel,
                               q, out, err);
}

/* Labels the members of cluster c with their group in its least-traffic
 * plan (state 1), or marks it as having none in the budget (state 2).
 * FP_OK or an error. */
static fp_status ensure_labels(merger *M, int32_t c, fp_error *err) {
  if (M->state[c])
    return FP_OK;
  fp_plan *q = fp_plan_create();
  solver_lt_result r = {0};
  fp_status st = q ? build_graph(M, c, -1, err)
                   : fp_error_set(err, FP_ENOMEM, "out of memory");
  if (st == FP_OK)
    st = search(M, q, &r, err);
  M->state[c] = 2;
  if (st == FP_OK && r.solved &&
      M->B.count == M->mstart[c + 1] - M->mstart[c]) {
    for (int32_t gi = 0; gi < fp_plan_group_count(q); gi++) {
      int32_t n;
      const int32_t *nodes = fp_plan_group(q, gi, &n);
      for (int32_t i = 0; i < n; i++)
        M->label[M->mstart[c] + nodes[i]] = gi;
    }
    M->state[c] = 1;
  }
  fp_graph_destroy(M->B.sg);
  M->B.sg = NULL;
  fp_plan_destroy(q);
  return st;
}

static int32_t uf_find(int32_t *uf, int32_t x) {
  while (uf[x] != x)
    x = uf[x] = uf[uf[x]];
  return x;
}

/* Joins in uf (over the merged graph's nodes) the members of cluster c
 * that its optimum groups together. */
static void join_labels(const merger *M, int32_t c, int32_t *uf) {
  int32_t first[SOLVER_LT_MAX_NODES + 1];
  memset(first, 0xff, sizeof first);
  for (int32_t e = M->mstart[c]; e < M->mstart[c + 1]; e++) {
    const int32_t *at = bsearch(&M->mnode[e], M->B.members, (size_t)M->B.count,
                                sizeof *at, sub_cmp_node);
    int32_t i = (int32_t)(at - M->B.members), l = M->label[e];
    if (first[l] < 0)
      first[l] = i;
    else
      uf[uf_find(uf, i)] = uf_find(uf, first[l]);
  }
}

/* The groups of M->B.sg whose nodes uf joins, in an order that runs every
 * group after the writers of what it reads, into plan q; false when there
 * is none (the joined groups depend on each other in a circle). */
static bool order_groups(const merger *M, int32_t *uf, fp_plan *q,
                         fp_error *err, fp_status *st) {
  int32_t n = M->B.count, comp[SOLVER_LT_MAX_NODES], id[SOLVER_LT_MAX_NODES];
  int32_t nc = 0, nodes[SOLVER_LT_MAX_NODES];
  uint64_t pred[SOLVER_LT_MAX_NODES] = {0}, done = 0;
  memset(id, 0xff, sizeof id);
  for (int32_t i = 0; i < n; i++) {
    int32_t r = uf_find(uf, i);
    comp[i] = id[r] >= 0 ? id[r] : (id[r] = nc++);
  }
  for (int32_t b = 0; b < fp_graph_buffer_count(M->B.sg); b++) {
    const fp_buffer *buf = fp_graph_buffer(M->B.sg, b);
    for (int32_t j = 0; buf->writer >= 0 && j < buf->n_readers; j++)
      if (comp[buf->readers[j]] != comp[buf->writer])
        pred[comp[buf->readers[j]]] |= (uint64_t)1 << comp[buf->writer];
  }
  for (int32_t placed = 0; placed < nc; placed++) {
    int32_t c = 0;
    while (c < nc && ((done >> c & 1) || (pred[c] & ~done)))
      c++;
    if (c == nc)
      return false;
    done |= (uint64_t)1 << c;
    int32_t cnt = 0;
    for (int32_t i = 0; i < n; i++)
      if (comp[i] == c)
        nodes[cnt++] = i;
    if ((*st = fp_plan_add_group(q, nodes, cnt, err)) != FP_OK)
      return false;
  }
  return true;
}

/* Whether the optima of clusters a and b, joined, make a legal plan of
 * their merged graph M->B.sg, into *legal.  FP_OK or FP_ENOMEM. */
static fp_status joined_legal(const merger *M, int32_t a, int32_t b,
                              bool *legal, fp_error *err) {
  int32_t uf[SOLVER_LT_MAX_NODES];
  fp_status st = FP_OK;
  fp_plan *q = fp_plan_create();
  *legal = false;
  if (!q)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  for (int32_t i = 0; i < M->B.count; i++)
    uf[i] = i;
  join_labels(M, a, uf);
  join_labels(M, b, uf);
  if (order_groups(M, uf, q, err, &st)) {
    st = fp_plan_check(M->B.sg, q, M->k, err);
    *legal = st == FP_OK;
    if (st == FP_EILLEGAL)
      st = FP_OK;
  }
  fp_plan_destroy(q);
  return st;
}

/* The least traffic of the cluster graph of build_list, into *lb; false
 * when the graph is past SOLVER_MERGE_MAX_NODES or the search ran out. */
static bool list_min(merger *M, int32_t c, const int32_t *bufs, int32_t n,
                     const int32_t *moved, int32_t nm, int32_t as, int32_t from,
                     uint64_t *lb, fp_status *st, fp_error *err) {
  solver_lt_result r = {0};
  *st = build_list(M, c, bufs, n, moved, nm, as, from, err);
  if (*st == FP_OK && M->B.count <= SOLVER_MERGE_MAX_NODES)
    *st = search(M, NULL, &r, err);
  fp_graph_destroy(M->B.sg);
  M->B.sg = NULL;
  *lb = r.traffic;
  return *st == FP_OK && r.solved;
}

/* Whether buffer b is written or read by a node of N(c). */
static bool touches(const merger *M, int32_t b, int32_t c) {
  const fp_buffer *buf = fp_graph_buffer(M->g, b);
  size_t n = (size_t)(M->mstart[c + 1] - M->mstart[c]);
  for (int32_t j = -1; j < buf->n_readers; j++) {
    int32_t v = j < 0 ? buf->writer : buf->readers[j];
    if (v >= 0 &&
        bsearch(&v, M->mnode + M->mstart[c], n, sizeof v, sub_cmp_node))
      return true;
  }
  return false;
}

/* T, the buffers of `from` touching N(to), into M->tbufs, the others into
 * M->rbufs, and to's buffers with T into M->ubufs (all ascending). */
static void split_for_move(merger *M, int32_t to, int32_t from, int32_t *nt,
                           int32_t *nr, int32_t *nu) {
  const solver_clusters *C = &M->C;
  *nt = *nr = 0;
  for (int32_t x = C->start[from]; x < C->start[from + 1]; x++) {
    int32_t b = C->list[x];
    if (touches(M, b, to))
      M->tbufs[(*nt)++] = b;
    else
      M->rbufs[(*nr)++] = b;
  }
  *nu = merge_sorted(C->list + C->start[to], C->start[to + 1] - C->start[to],
                     M->tbufs, *nt, M->ubufs);
}

/* Tries moving T from `from` to `to`; records it in *p when it gains more
 * than p's current move.  FP_OK or an error. */
static fp_status try_move(merger *M, merge_move *p, int32_t to, int32_t from,
                          fp_error *err) {
  int32_t nt, nr, nu;
  uint64_t lt = 0, lf = 0;
  fp_status st = FP_OK;
  split_for_move(M, to, from, &nt, &nr, &nu);
  if (nt == 0 ||
      !list_min(M, to, M->ubufs, nu, M->tbufs, nt, to, from, &lt, &st, err))
    return st;
  if (nr > 0 &&
      !list_min(M, from, M->rbufs, nr, M->tbufs, nt, to, from, &lf, &st, err))
    return st;
  uint64_t before = M->P->lb[to] + M->P->lb[from];
  if (lt + lf > before && lt + lf - before > p->gain)
    *p = (merge_move){p->a, p->b, p->prio, to, from, lt, lf, lt + lf - before};
  return FP_OK;
}

/* The best move of the pair, into p (gain 0 when none gains).  FP_OK or
 * an error. */
static fp_status pair_gain(merger *M, merge_move *p, fp_error *err) {
  fp_status st = ensure_labels(M, p->a, err);
  if (st == FP_OK)
    st = ensure_labels(M, p->b, err);
  if (st != FP_OK || M->state[p->a] != 1 || M->state[p->b] != 1)
    return st;
  bool legal = true;
  st = build_graph(M, p->a, p->b, err);
  if (st == FP_OK && M->B.count <= SOLVER_LT_MAX_NODES)
    st = joined_legal(M, p->a, p->b, &legal, err);
  fp_graph_destroy(M->B.sg);
  M->B.sg = NULL;
  if (st == FP_OK && !legal)
    st = try_move(M, p, p->a, p->b, err);
  if (st == FP_OK && !legal)
    st = try_move(M, p, p->b, p->a, err);
  return st;
}

/* Applies the gaining moves of disjoint pairs to M->P, best first (the
 * first move of a cluster wins); *gained tells whether any was.  FP_OK or
 * FP_ENOMEM. */
static fp_status apply_moves(merger *M, bool *gained, fp_error *err) {
  int32_t n = 0;
  for (int32_t i = 0; i < M->n_pairs; i++)
    if (M->pairs[i].gain > 0)
      M->pairs[n++] = M->pairs[i];
  qsort(M->pairs, (size_t)n, sizeof *M->pairs, by_gain);
  uint8_t *taken = calloc((size_t)M->P->count + 1, 1);
  if (!taken)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  memset(M->changed, 0, (size_t)M->P->count);
  for (int32_t i = 0; i < n; i++) {
    const merge_move *p = &M->pairs[i];
    if (taken[p->a] || taken[p->b])
      continue;
    M->changed[p->a] = M->changed[p->b] = 1;
    taken[p->a] = taken[p->b] = 1;
    int32_t nt, nr, nu;
    split_for_move(M, p->to, p->from, &nt, &nr, &nu);
    for (int32_t x = 0; x < nt; x++)
      M->P->of[M->tbufs[x]] = p->to;
    M->P->lb[p->to] = p->lb_to;
    M->P->lb[p->from] = p->lb_from;
    M->P->total += p->gain;
    *gained = true;
  }
  free(taken);
  return FP_OK;
}

/* One round on M->P: the pairs, their moves, the gaining ones applied.
 * FP_OK or an error. */
static fp_status one_round(merger *M, bool *gained, fp_error *err) {
  int32_t nb = fp_graph_buffer_count(M->g);
  fp_status st = FP_OK;
  *gained = false;
  if (cluster_build_init(&M->B, M->g) != 0 || clusters_of(M) != 0 ||
      collect_nodes(M) != 0 ||
      !(M->ubufs = malloc(((size_t)nb + 1) * 3 * sizeof *M->ubufs)) ||
      candidate_pairs(M) != 0) {
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
    goto fail;
  }
  M->tbufs = M->ubufs + nb + 1;
  M->rbufs = M->tbufs + nb + 1;
  M->B.of = M->P->of;
  for (int32_t i = 0; st == FP_OK && i < M->n_pairs; i++) {
    if (fp_clock_now() >= M->deadline || (M->cancel && *M->cancel))
      break;
    if (M->changed[M->pairs[i].a] || M->changed[M->pairs[i].b])
      st = pair_gain(M, &M->pairs[i], err);
  }
  if (st == FP_OK)
    st = apply_moves(M, gained, err);
fail:
  round_free(M);
  return st;
}

fp_status solver_merge_clusters(const fp_graph *g, int32_t k,
                                const solver_partition *part, double deadline,
                                const volatile sig_atomic_t *cancel,
                                solver_partition *out, fp_error *err) {
  int32_t nb = fp_graph_buffer_count(g), nc = part->count;
  merger M;
  memset(&M, 0, sizeof M);
  *out = *part;
  out->of = malloc(((size_t)nb + 1) * sizeof *out->of);
  out->lb = malloc(((size_t)nc + 1) * sizeof *out->lb);
  M.changed = malloc((size_t)nc + 1);
  fp_status st = FP_OK;
  if (!out->of || !out->lb || !M.changed) {
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
    goto fail;
  }
  memcpy(out->of, part->of, (size_t)nb * sizeof *out->of);
  memcpy(out->lb, part->lb, (size_t)nc * sizeof *out->lb);
  memset(M.changed, 1, (size_t)nc);
  M.g = g;
  M.k = k;
  M.P = out;
  M.deadline = deadline;
  M.cancel = cancel;
  bool gained = true;
  for (int r = 0; st == FP_OK && gained && r < MERGE_ROUNDS &&
                  fp_clock_now() < deadline && !(cancel && *cancel);
       r++)
    st = one_round(&M, &gained, err);
  if (st == FP_OK && out->total > part->total) {
    free(M.changed);
    return FP_OK;
  }
fail:
  free(M.changed);
  free(out->of);
  free(out->lb);
  memset(out, 0, sizeof *out);
  return st;
}
