/*
 * flow.c -- Dinic's maximum flow (flow.h).
 *
 * Invariant: edges come in pairs 2i (forward) and 2i + 1 (its residual
 * twin), so e ^ 1 is the twin of e; cap[e] is the residual capacity.
 * Each phase builds BFS levels from s over edges with residual capacity
 * and pushes blocking flow along strictly rising levels; at most O(V)
 * phases, each O(V E).  The networks here have a few thousand vertices.
 */
#include "model/flow.h"

#include <stdlib.h>

struct fp_flow {
  int32_t n, m, cap_m; /* vertices, edges (with twins), allocated edges */
  int32_t *head;       /* vertex -> first edge, -1 */
  int32_t *next;       /* edge -> next edge of the same tail */
  int32_t *to;         /* edge -> head vertex */
  int64_t *cap;        /* edge -> residual capacity */
  int32_t *level, *iter, *queue;
  int64_t work; /* edge visits */
};

fp_flow *fp_flow_create(int32_t n) {
  fp_flow *f = calloc(1, sizeof *f);
  if (!f)
    return NULL;
  f->n = n;
  f->head = malloc(((size_t)n + 1) * sizeof *f->head);
  f->level = malloc(((size_t)n + 1) * sizeof *f->level);
  f->iter = malloc(((size_t)n + 1) * sizeof *f->iter);
  f->queue = malloc(((size_t)n + 1) * sizeof *f->queue);
  if (!f->head || !f->level || !f->iter || !f->queue) {
    fp_flow_destroy(f);
    return NULL;
  }
  for (int32_t v = 0; v < n; v++)
    f->head[v] = -1;
  return f;
}

void fp_flow_destroy(fp_flow *f) {
  if (!f)
    return;
  free(f->head);
  free(f->next);
  free(f->to);
  free(f->cap);
  free(f->level);
  free(f->iter);
  free(f->queue);
  free(f);
}

/* Room for two more edges.  0, or -1 out of memory. */
static int grow_edges(fp_flow *f) {
  if (f->m + 2 <= f->cap_m)
    return 0;
  int32_t c = f->cap_m ? 2 * f->cap_m : 64;
  int32_t *nx = realloc(f->next, (size_t)c * sizeof *nx);
  if (nx)
    f->next = nx;
  int32_t *to = nx ? realloc(f->to, (size_t)c * sizeof *to) : NULL;
  if (to)
    f->to = to;
  int64_t *cp = to ? realloc(f->cap, (size_t)c * sizeof *cp) : NULL;
  if (!cp)
    return -1;
  f->cap = cp;
  f->cap_m = c;
  return 0;
}

int fp_flow_add_edge(fp_flow *f, int32_t u, int32_t v, int64_t cap) {
  if (grow_edges(f) != 0)
    return -1;
  int32_t e = f->m;
  f->to[e] = v, f->cap[e] = cap, f->next[e] = f->head[u], f->head[u] = e;
  f->to[e + 1] = u, f->cap[e + 1] = 0, f->next[e + 1] = f->head[v];
  f->head[v] = e + 1;
  f->m += 2;
  return 0;
}

/* BFS levels from s; whether t is reachable. */
static int bfs_levels(fp_flow *f, int32_t s, int32_t t) {
  for (int32_t v = 0; v < f->n; v++)
    f->level[v] = -1;
  int32_t qh = 0, qt = 0;
  f->level[s] = 0;
  f->queue[qt++] = s;
  while (qh < qt) {
    int32_t v = f->queue[qh++];
    for (int32_t e = f->head[v]; e >= 0; e = f->next[e], f->work++)
      if (f->cap[e] > 0 && f->level[f->to[e]] < 0) {
        f->level[f->to[e]] = f->level[v] + 1;
        f->queue[qt++] = f->to[e];
      }
  }
  return f->level[t] >= 0;
}

/* Pushes up to `limit` from v to t along rising levels (recursive: the
 * depth is at most the number of levels). */
static int64_t push(fp_flow *f, int32_t v, int32_t t, int64_t limit) {
  if (v == t)
    return limit;
  for (; f->iter[v] >= 0; f->iter[v] = f->next[f->iter[v]], f->work++) {
    int32_t e = f->iter[v], w = f->to[e];
    if (f->cap[e] <= 0 || f->level[w] != f->level[v] + 1)
      continue;
    int64_t d = push(f, w, t, limit < f->cap[e] ? limit : f->cap[e]);
    if (d > 0) {
      f->cap[e] -= d;
      f->cap[e ^ 1] += d;
      return d;
    }
  }
  return 0;
}

int64_t fp_flow_max(fp_flow *f, int32_t s, int32_t t) {
  int64_t total = 0;
  while (total < FP_FLOW_INF && bfs_levels(f, s, t)) {
    for (int32_t v = 0; v < f->n; v++)
      f->iter[v] = f->head[v];
    int64_t d;
    while ((d = push(f, s, t, FP_FLOW_INF)) > 0 && total < FP_FLOW_INF)
      total += d;
  }
  return total < FP_FLOW_INF ? total : FP_FLOW_INF;
}

bool fp_flow_source_side(const fp_flow *f, int32_t v) {
  /* the last BFS of fp_flow_max found no path to t: its levels mark the
   * vertices still reachable from s */
  return v >= 0 && v < f->n && f->level[v] >= 0;
}

int64_t fp_flow_work(const fp_flow *f) {
  return f->work;
}
