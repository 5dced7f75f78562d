/*
 * window.c -- a window of a plan as a graph of its own (see window.h for
 * why its costs differ from the whole plan's by constants only).
 */
#include "solver/window/window.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sub_scratch_init(sub_scratch *s, const fp_graph *g) {
  size_t n = (size_t)fp_graph_node_count(g),
         b = (size_t)fp_graph_buffer_count(g);
  s->node_map = malloc((n ? n : 1) * sizeof *s->node_map);
  s->buf_map = malloc((b ? b : 1) * sizeof *s->buf_map);
  if (!s->node_map || !s->buf_map) {
    sub_scratch_free(s);
    return -1;
  }
  memset(s->node_map, 0xff, n * sizeof *s->node_map); /* all -1 */
  memset(s->buf_map, 0xff, b * sizeof *s->buf_map);
  return 0;
}

void sub_scratch_free(sub_scratch *s) {
  free(s->node_map);
  free(s->buf_map);
  s->node_map = s->buf_map = NULL;
}

void sub_free(sub_problem *S) {
  fp_graph_destroy(S->g);
  fp_plan_destroy(S->current);
  free(S->to_global);
  memset(S, 0, sizeof *S);
}

int sub_cmp_node(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

fp_status sub_copy_unfusible(fp_graph *sg, const fp_graph *g,
                             const int32_t *nodes, int32_t n, fp_error *err) {
  for (int32_t i = 0; i < n; i++)
    for (int32_t j = i + 1; j < n; j++) {
      int32_t u = nodes[i], v = nodes[j];
      fp_status st;
      /* only pairs the iteration spaces allow: the others are never
       * fused anyway, and the unfusible lookup is a search */
      if (fp_iter_compatible(fp_graph_node(g, u), fp_graph_node(g, v)) &&
          fp_graph_is_unfusible(g, u, v) &&
          (st = fp_graph_add_unfusible(sg, i, j, err)) != FP_OK)
        return st;
    }
  return FP_OK;
}

void sub_clear_maps(const fp_graph *g, const int32_t *nodes, int32_t n,
                    int32_t *buf_map, int32_t *node_map) {
  for (int32_t i = 0; i < n; i++) {
    const fp_node *nd = fp_graph_node(g, nodes[i]);
    for (int32_t j = 0; j < nd->n_reads; j++)
      buf_map[nd->reads[j].buffer] = -1;
    for (int32_t j = 0; j < nd->n_writes; j++)
      buf_map[nd->writes[j]] = -1;
    node_map[nodes[i]] = -1;
  }
}

/* Whether a buffer that the window reads but does not write stays live
 * after the window: resident inputs, graph outputs, and buffers with a
 * reader at step s1 or later.  Such buffers are resident inputs of the
 * sub-graph; the others are freed inside it. */
static bool outlives_window(const fp_graph *g, int32_t b, const int32_t *step,
                            int32_t s1) {
  const fp_buffer *buf = fp_graph_buffer(g, b);
  if (buf->output || (buf->input && !buf->freeable))
    return true;
  for (int32_t i = 0; i < buf->n_readers; i++)
    if (step[buf->readers[i]] >= s1)
      return true;
  return false;
}

/* Adds whole-graph buffer b to the sub-graph (once): an input when its
 * writer is outside the window.  0, or -1 with err set. */
static int map_buffer(fp_graph *sg, sub_scratch *scr, const fp_graph *g,
                      int32_t b, const int32_t *step, int32_t s1,
                      fp_error *err) {
  if (scr->buf_map[b] >= 0)
    return 0;
  const fp_buffer *buf = fp_graph_buffer(g, b);
  bool inside = buf->writer >= 0 && scr->node_map[buf->writer] >= 0;
  bool freeable = !inside && !outlives_window(g, b, step, s1);
  scr->buf_map[b] =
      fp_graph_add_buffer(sg, buf->name, buf->bytes, !inside, freeable, err);
  if (scr->buf_map[b] < 0)
    return -1;
  /* Written before the window: a pair on it is no mutation's, so its
   * fused readers stay those of the whole graph. */
  if (!inside && (buf->writer >= 0 || fp_graph_input_written_before(g, b)))
    return fp_graph_set_input_written_before(sg, scr->buf_map[b], err) == FP_OK
               ? 0
               : -1;
  return 0;
}

/* Adds window node v (whole-graph index) with its buffers.  0 or -1. */
static int map_node(fp_graph *sg, sub_scratch *scr, const fp_graph *g,
                    int32_t v, const int32_t *step, int32_t s1, fp_error *err) {
  const fp_node *n = fp_graph_node(g, v);
  fp_read *reads = malloc(((size_t)n->n_reads + 1) * sizeof *reads);
  int32_t *writes = malloc(((size_t)n->n_writes + 1) * sizeof *writes);
  int rc = -1;
  if (!reads || !writes) {
    fp_error_set(err, FP_ENOMEM, "out of memory");
    goto fail;
  }
  for (int32_t i = 0; i < n->n_reads; i++) {
    if (map_buffer(sg, scr, g, n->reads[i].buffer, step, s1, err) != 0)
      goto fail;
    reads[i] = n->reads[i];
    reads[i].buffer = scr->buf_map[n->reads[i].buffer];
  }
  for (int32_t i = 0; i < n->n_writes; i++) {
    if (map_buffer(sg, scr, g, n->writes[i], step, s1, err) != 0)
      goto fail;
    writes[i] = scr->buf_map[n->writes[i]];
  }
  fp_node_spec spec = {n->name,     n->kind, n->numel, n->rnumel, n->n_reads,
                       n->n_writes, reads,   writes,   NULL};
  int32_t sv = fp_graph_add_node(sg, &spec, err), m;
  const fp_inplace *pr = fp_graph_inplace(g, v, &m);
  /* The loop nest, the workspace and the pairs too: a window's sub-graph
   * applies them exactly where the whole graph does (an input freed inside
   * the window is freeable). */
  rc = sv >= 0 && fp_graph_set_node_loop(sg, sv, &n->loop, err) == FP_OK ? 0
                                                                         : -1;
  if (rc == 0 &&
      fp_graph_set_node_workspace(sg, sv, n->workspace, err) != FP_OK)
    rc = -1;
  for (int32_t k = 0; rc == 0 && k < m; k++)
    if (fp_graph_add_inplace(sg, sv, scr->buf_map[pr[k].read],
                             scr->buf_map[pr[k].write], err) != FP_OK)
      rc = -1;
fail:
  free(reads);
  free(writes);
  return rc;
}

/* The linked pairs of g with both nodes in the window (node_map: whole
 * graph -> window node, -1 outside), with their linkers in the window; a
 * pair with none there is unfusible in the window, whose groups hold only
 * window nodes.  FP_OK, or the builder's error. */
static fp_status copy_linked(fp_graph *sg, const fp_graph *g,
                             const int32_t *node_map, fp_error *err) {
  int32_t *via = NULL;
  fp_status st = FP_OK;
  for (int32_t i = 0; st == FP_OK && i < fp_graph_linked_count(g); i++) {
    const fp_linked *l = fp_graph_linked(g, i);
    int32_t u = node_map[l->u], v = node_map[l->v], n = 0;
    if (u < 0 || v < 0)
      continue;
    if (!via &&
        !(via = malloc(((size_t)fp_graph_node_count(g) + 1) * sizeof *via)))
      return fp_error_set(err, FP_ENOMEM, "out of memory");
    for (int32_t j = 0; j < l->n_via; j++)
      if (node_map[l->via[j]] >= 0)
        via[n++] = node_map[l->via[j]];
    st = n ? fp_graph_add_linked(sg, u, v, n, via, err)
           : fp_graph_add_unfusible(sg, u, v, err);
  }
  free(via);
  return st;
}

/* Outputs (written in the window, read after it or graph outputs),
 * unfusible and linked pairs of the sub-graph.  0 or -1. */
static int add_outputs_and_pairs(const sub_problem *S, const sub_scratch *scr,
                                 const fp_graph *g, const int32_t *step,
                                 int32_t s1, fp_error *err) {
  for (int32_t i = 0; i < S->n; i++) {
    const fp_node *n = fp_graph_node(g, S->to_global[i]);
    for (int32_t j = 0; j < n->n_writes; j++)
      if (outlives_window(g, n->writes[j], step, s1) &&
          fp_graph_add_output(S->g, scr->buf_map[n->writes[j]], err) != FP_OK)
        return -1;
  }
  if (sub_copy_unfusible(S->g, g, S->to_global, S->n, err) != FP_OK)
    return -1;
  return copy_linked(S->g, g, scr->node_map, err) == FP_OK ? 0 : -1;
}

/* The window's nodes, ascending (a program order of the sub-graph). */
static fp_status collect_nodes(sub_problem *S, sub_scratch *scr,
                               const fp_plan *p, int32_t s0, int32_t s1,
                               fp_error *err) {
  int32_t count = 0, len;
  for (int32_t t = s0; t < s1; t++)
    fp_plan_group(p, t, &len), count += len;
  S->to_global = malloc((count ? (size_t)count : 1) * sizeof *S->to_global);
  if (!S->to_global)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  for (int32_t t = s0; t < s1; t++) {
    const int32_t *grp = fp_plan_group(p, t, &len);
    memcpy(S->to_global + S->n, grp, (size_t)len * sizeof *grp);
    S->n += len;
  }
  qsort(S->to_global, (size_t)S->n, sizeof *S->to_global, sub_cmp_node);
  for (int32_t i = 0; i < S->n; i++)
    scr->node_map[S->to_global[i]] = i;
  return FP_OK;
}

/* Builds the sub-graph of the window's nodes.  FP_OK or an error. */
static fp_status build_graph(sub_problem *S, sub_scratch *scr,
                             const fp_graph *g, const int32_t *step, int32_t k,
                             int32_t s1, fp_error *err) {
  S->g = fp_graph_create(fp_graph_name(g));
  if (!S->g)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  if (fp_graph_set_max_fusion_size(S->g, k, err) != FP_OK)
    return err->code;
  for (int32_t i = 0; i < S->n; i++)
    if (map_node(S->g, scr, g, S->to_global[i], step, s1, err) != 0)
      return err->code;
  if (add_outputs_and_pairs(S, scr, g, step, s1, err) != 0)
    return err->code;
  return fp_graph_finalize(S->g, err);
}

/* The window's groups in sub-graph indices. */
static fp_status map_current(sub_problem *S, const sub_scratch *scr,
                             const fp_plan *p, int32_t s0, int32_t s1,
                             fp_error *err) {
  S->current = fp_plan_create();
  if (!S->current)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  for (int32_t t = s0; t < s1; t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, t, &len);
    fp_status st = fp_plan_open_group(S->current, err);
    for (int32_t i = 0; st == FP_OK && i < len; i++)
      st = fp_plan_append_node(S->current, scr->node_map[grp[i]], err);
    if (st != FP_OK)
      return st;
  }
  return FP_OK;
}

/* Sets the constants and checks the identities of window.h on the current
 * plan: the window's traffic and live bytes, step by step. */
static fp_status check_identities(sub_problem *S, const fp_step *tl,
                                  const fp_metrics *pm, int32_t steps,
                                  int32_t s0, int32_t s1, fp_error *err) {
  int32_t w = s1 - s0;
  fp_step *sub_tl = malloc((size_t)w * sizeof *sub_tl);
  if (!sub_tl)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  fp_status st =
      fp_plan_eval_k(S->g, S->current, 0, &S->current_m, sub_tl, err);
  uint64_t window_traffic = 0;
  for (int32_t t = s0; st == FP_OK && t < s1; t++)
    window_traffic += tl[t].read_bytes + tl[t].write_bytes;
  bool ok = st == FP_OK && window_traffic == S->current_m.traffic_bytes &&
            tl[s0].live_bytes >= sub_tl[0].live_bytes;
  S->const_live = ok ? tl[s0].live_bytes - sub_tl[0].live_bytes : 0;
  for (int32_t i = 0; ok && i < w; i++)
    ok = tl[s0 + i].live_bytes == S->const_live + sub_tl[i].live_bytes;
  free(sub_tl);
  if (st != FP_OK)
    return fp_error_set(err, FP_EINTERNAL, "window [%d, %d): %s", (int)s0,
                        (int)s1, err ? err->msg : "");
  if (!ok)
    return fp_error_set(err, FP_EINTERNAL,
                        "window [%d, %d): its sub-graph's costs do not match "
                        "the evaluator's",
                        (int)s0, (int)s1);
  S->const_traffic = pm->traffic_bytes - S->current_m.traffic_bytes;
  S->outside_peak = 0;
  for (int32_t t = 0; t < steps; t++)
    if ((t < s0 || t >= s1) && tl[t].live_bytes > S->outside_peak)
      S->outside_peak = tl[t].live_bytes;
  return FP_OK;
}

fp_status sub_window(sub_problem *S, sub_scratch *scr, const fp_graph *g,
                     const fp_plan *p, const int32_t *step, const fp_step *tl,
                     const fp_metrics *pm, int32_t k, int32_t s0, int32_t s1,
                     fp_error *err) {
  fp_error local; /* the helpers read err->code */
  err = err ? err : &local;
  memset(S, 0, sizeof *S);
  k = fp_graph_fusion_cap(g, k);
  fp_status st = collect_nodes(S, scr, p, s0, s1, err);
  if (st == FP_OK)
    st = build_graph(S, scr, g, step, k, s1, err);
  if (st == FP_OK)
    st = map_current(S, scr, p, s0, s1, err);
  sub_clear_maps(g, S->to_global, S->n, scr->buf_map, scr->node_map);
  if (st == FP_OK)
    st = check_identities(S, tl, pm, fp_plan_group_count(p), s0, s1, err);
  if (st != FP_OK)
    sub_free(S);
  return st;
}

/* Appends groups [from, to) of p to out. */
static fp_status copy_groups(const fp_plan *p, int32_t from, int32_t to,
                             fp_plan *out, fp_error *err) {
  for (int32_t t = from; t < to; t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, t, &len);
    fp_status st = fp_plan_add_group(out, grp, len, err);
    if (st != FP_OK)
      return st;
  }
  return FP_OK;
}

fp_status sub_splice(const sub_problem *S, const fp_plan *p, int32_t s0,
                     int32_t s1, const fp_plan *q, fp_plan *out,
                     fp_error *err) {
  fp_plan_clear(out);
  fp_status st = copy_groups(p, 0, s0, out, err);
  for (int32_t t = 0; st == FP_OK && t < fp_plan_group_count(q); t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(q, t, &len);
    st = fp_plan_open_group(out, err);
    for (int32_t i = 0; st == FP_OK && i < len; i++)
      st = fp_plan_append_node(out, S->to_global[grp[i]], err);
  }
  if (st == FP_OK)
    st = copy_groups(p, s1, fp_plan_group_count(p), out, err);
  if (st == FP_OK)
    st = fp_plan_set_graph_name(out, fp_plan_graph_name(p), err);
  return st;
}

/* Gathering.  The steps of a plan form a DAG (step t feeds step u when a
 * node of u reads a buffer a node of t writes).  A set X of steps can be
 * made consecutive without changing any group when it is convex (no step
 * outside X lies on a path between two steps of X): inside X's span,
 * the ancestors of X go first, then X, then the rest, each in its old
 * order.  An ancestor's producers are ancestors too, and nothing outside X
 * is both, so every read still follows its write. */

typedef struct gather_state {
  const fp_graph *g;
  const fp_plan *p;
  const int32_t *step;
  char *sel, *anc, *desc; /* per step */
  int32_t *queue;
  int32_t nodes; /* in the selected steps */
} gather_state;

/* Calls visit(G, t, ctx) for every step t that feeds step s (producers)
 * or that s feeds (consumers). */
static void each_neighbour(gather_state *G, int32_t s, bool producers,
                           bool consumers,
                           void (*visit)(gather_state *, int32_t, void *),
                           void *ctx) {
  int32_t len;
  const int32_t *grp = fp_plan_group(G->p, s, &len);
  for (int32_t i = 0; i < len; i++) {
    const fp_node *nd = fp_graph_node(G->g, grp[i]);
    for (int32_t r = 0; producers && r < nd->n_reads; r++) {
      int32_t w = fp_graph_buffer(G->g, nd->reads[r].buffer)->writer;
      if (w >= 0 && G->step[w] != s)
        visit(G, G->step[w], ctx);
    }
    for (int32_t r = 0; consumers && r < nd->n_writes; r++) {
      const fp_buffer *b = fp_graph_buffer(G->g, nd->writes[r]);
      for (int32_t j = 0; j < b->n_readers; j++)
        if (G->step[b->readers[j]] != s)
          visit(G, G->step[b->readers[j]], ctx);
    }
  }
}

/* BFS visit: selects step t when its nodes still fit in *(int32_t *)ctx. */
static void gather_visit(gather_state *G, int32_t t, void *ctx) {
  int32_t max_nodes = *(int32_t *)ctx, len;
  fp_plan_group(G->p, t, &len);
  if (G->sel[t] || G->nodes + len > max_nodes)
    return;
  G->sel[t] = 1;
  G->nodes += len;
  G->queue[G->queue[0]++ + 1] = t; /* queue[0]: its tail */
}

/* Marks into flag (G->anc or G->desc, by ctx) when t is selected or
 * flagged already. */
static void flag_visit(gather_state *G, int32_t t, void *ctx) {
  int32_t *hit = ctx;
  char *flag = hit[1] ? G->desc : G->anc;
  if (G->sel[t] || flag[t])
    hit[0] = 1;
}

/* Marks every step of [lo, hi] reachable from the selected steps (desc)
 * and every step that reaches one (anc). */
static void mark_paths(gather_state *G, int32_t lo, int32_t hi) {
  for (int32_t s = lo; s <= hi; s++) {
    int32_t hit[2] = {0, 1};
    each_neighbour(G, s, true, false, flag_visit, hit);
    G->desc[s] = (char)hit[0];
  }
  for (int32_t s = hi; s >= lo; s--) {
    int32_t hit[2] = {0, 0};
    each_neighbour(G, s, false, true, flag_visit, hit);
    G->anc[s] = (char)hit[0];
  }
}

/* Appends to out the groups of steps [lo, hi] of one kind: which 0, the
 * ancestors of X; 1, X; 2, the rest. */
static fp_status copy_where(const gather_state *G, int32_t lo, int32_t hi,
                            int which, fp_plan *out, fp_error *err) {
  fp_status st = FP_OK;
  for (int32_t s = lo; st == FP_OK && s <= hi; s++) {
    bool a = G->anc[s] && !G->sel[s], x = G->sel[s];
    if ((which == 0 && a) || (which == 1 && x) || (which == 2 && !a && !x)) {
      int32_t len;
      const int32_t *grp = fp_plan_group(G->p, s, &len);
      st = fp_plan_add_group(out, grp, len, err);
    }
  }
  return st;
}

/* Selects the steps near `seed` (breadth first over the step DAG, up to
 * max_nodes nodes) and closes them to a convex set.  Its span into
 * *lo, *hi; false when the closure exceeds cap_nodes. */
static bool gather_select(gather_state *G, int32_t seed, int32_t max_nodes,
                          int32_t cap_nodes, int32_t *lo, int32_t *hi) {
  G->queue[0] = 0;
  G->nodes = 0;
  gather_visit(G, seed, &(int32_t){INT32_MAX});
  for (int32_t head = 0; head < G->queue[0]; head++)
    each_neighbour(G, G->queue[head + 1], true, true, gather_visit, &max_nodes);
  *lo = *hi = seed;
  for (int32_t i = 0; i < G->queue[0]; i++) {
    int32_t t = G->queue[i + 1];
    *lo = t < *lo ? t : *lo;
    *hi = t > *hi ? t : *hi;
  }
  mark_paths(G, *lo, *hi);
  /* Steps both below and above X join it; one round suffices, since
   * what they reach (or what reaches them) is flagged already. */
  for (int32_t s = *lo; s <= *hi; s++)
    if (!G->sel[s] && G->anc[s] && G->desc[s]) {
      int32_t len;
      fp_plan_group(G->p, s, &len);
      G->sel[s] = 1;
      G->nodes += len;
    }
  return G->nodes <= cap_nodes;
}

fp_status sub_gather(const fp_graph *g, const fp_plan *p, const int32_t *step,
                     int32_t seed, int32_t max_nodes, int32_t cap_nodes,
                     fp_plan *out, int32_t *s0, int32_t *s1, fp_error *err) {
  int32_t T = fp_plan_group_count(p), lo, hi;
  gather_state G = {g, p, step, NULL, NULL, NULL, NULL, 0};
  fp_status st = FP_OK;
  *s0 = *s1 = 0;
  G.sel = calloc((size_t)T + 1, 1);
  G.anc = calloc((size_t)T + 1, 1);
  G.desc = calloc((size_t)T + 1, 1);
  G.queue = malloc(((size_t)T + 2) * sizeof *G.queue);
  if (!G.sel || !G.anc || !G.desc || !G.queue) {
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
    goto fail;
  }
  if (seed < 0 || seed >= T ||
      !gather_select(&G, seed, max_nodes, cap_nodes, &lo, &hi))
    goto fail; /* nothing to gather: *s0 == *s1 */
  fp_plan_clear(out);
  st = copy_groups(p, 0, lo, out, err);
  for (int which = 0; st == FP_OK && which < 3; which++) {
    if (which == 1)
      *s0 = fp_plan_group_count(out);
    st = copy_where(&G, lo, hi, which, out, err);
    if (which == 1)
      *s1 = fp_plan_group_count(out);
  }
  if (st == FP_OK)
    st = copy_groups(p, hi + 1, T, out, err);
  if (st == FP_OK)
    st = fp_plan_set_graph_name(out, fp_plan_graph_name(p), err);
  if (st != FP_OK)
    *s0 = *s1 = 0;
fail:
  free(G.sel);
  free(G.anc);
  free(G.desc);
  free(G.queue);
  return st;
}
