/*
 * cluster_graph.c -- the cluster graphs of the decomposed traffic bound
 * (cluster_graph.h).  Calls: window.c (sub-graph helpers), least_traffic.c,
 * fusion.c (greedy, for the searches' upper limit), eval.c.
 */
#include "solver/bound/cluster_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heuristics/heuristics.h"
#include "model/eval.h"
#include "solver/window/window.h"

/* N(S) of the cluster, and B->extra when set, ascending, into
 * B->members. */
static void collect_members(cluster_build *B) {
  B->count = 0;
  for (int32_t i = 0; i <= B->n_bufs; i++) {
    const fp_buffer *buf =
        i < B->n_bufs ? fp_graph_buffer(B->g, B->bufs[i]) : NULL;
    for (int32_t j = buf ? -1 : 0; j < (buf ? buf->n_readers : 1); j++) {
      int32_t v = !buf ? B->extra : j < 0 ? buf->writer : buf->readers[j];
      if (v >= 0 && B->node_map[v] < 0) {
        B->node_map[v] = B->count;
        B->members[B->count++] = v;
      }
    }
  }
  qsort(B->members, (size_t)B->count, sizeof *B->members, sub_cmp_node);
  for (int32_t i = 0; i < B->count; i++)
    B->node_map[B->members[i]] = i;
}

/* Queues node x in a path search from `from` (see search_paths) when it
 * is new or is now reached by a fusible path.  false past the cap. */
static bool visit(cluster_build *B, int32_t x, int32_t want, int32_t *tail,
                  int32_t *visits) {
  if (B->seen[x] >= want)
    return true;
  B->queue[(*tail)++] = x;
  B->seen[x] = want;
  return ++*visits <= PATH_VISIT_CAP;
}

/* Searches from member i over g's nodes between the first and the last
 * member: its descendants (forward) or its ancestors (backward).  Marks
 * each node `any` when some path reaches it, `fusible` when one does
 * whose inner nodes are all compatible with member i.  false when the
 * search hit PATH_VISIT_CAP.  Each node is queued at most twice. */
static bool search(cluster_build *B, int32_t i, bool forward, int32_t any) {
  const fp_graph *g = B->g;
  int32_t u = B->members[i], first = B->members[0],
          last = B->members[B->count - 1];
  int32_t head = 0, tail = 0, visits = 0, fusible = any + 1;
  B->queue[tail++] = u;
  B->seen[u] = fusible;
  while (head < tail) {
    int32_t w = B->queue[head++];
    int32_t want =
        B->seen[w] == fusible && (w == u || fp_graph_compatible(g, u, w))
            ? fusible
            : any;
    const fp_node *nd = fp_graph_node(g, w);
    if (!forward) {
      for (int32_t a = 0; a < nd->n_reads; a++) {
        int32_t x = fp_graph_buffer(g, nd->reads[a].buffer)->writer;
        if (x >= first && !visit(B, x, want, &tail, &visits))
          return false;
      }
      continue;
    }
    for (int32_t a = 0; a < nd->n_writes; a++) {
      const fp_buffer *buf = fp_graph_buffer(g, nd->writes[a]);
      for (int32_t r = 0; r < buf->n_readers; r++)
        if (buf->readers[r] <= last &&
            !visit(B, buf->readers[r], want, &tail, &visits))
          return false;
    }
  }
  return true;
}

/* Paths from member i: which later members it reaches (reach), and
 * through inner nodes compatible with i (fused); then, searching back
 * from i, which earlier members reach it through inner nodes compatible
 * with i (bfused[h][i]).  A capped search records nothing: its pairs get
 * no order and no separation. */
static void search_paths(cluster_build *B, int32_t i) {
  size_t c = (size_t)B->count;
  int32_t any = 2 * ++B->gen + 1;
  if (search(B, i, true, any))
    for (size_t j = (size_t)i + 1; j < c; j++) {
      int32_t v = B->seen[B->members[j]];
      B->reach[i * c + j] = v >= any;
      B->fused[i * c + j] = v == any + 1;
    }
  any = 2 * ++B->gen + 1;
  if (search(B, i, false, any))
    for (size_t h = 0; h < (size_t)i; h++)
      B->bfused[h * c + i] = B->seen[B->members[h]] == any + 1;
  else
    for (size_t h = 0; h < (size_t)i; h++)
      B->bfused[h * c + i] = 1; /* unknown: no separation from this side */
}

/* Whether member j reads a buffer member i writes (a direct link, which
 * the cluster graph keeps anyway). */
static bool linked(const cluster_build *B, int32_t i, int32_t j) {
  const fp_node *nd = fp_graph_node(B->g, B->members[j]);
  for (int32_t a = 0; a < nd->n_reads; a++)
    if (fp_graph_buffer(B->g, nd->reads[a].buffer)->writer == B->members[i])
      return true;
  return false;
}

/* Whether the order of members i < j needs an edge of its own: j is a
 * descendant of i, not linked to it directly, and no member between them
 * carries the order (i reaches k and k reaches j). */
static bool needs_order_edge(const cluster_build *B, int32_t i, int32_t j) {
  const uint8_t *R = B->reach;
  size_t c = (size_t)B->count;
  if (!R[i * c + j] || linked(B, i, j))
    return false;
  for (int32_t k = i + 1; k < j; k++)
    if (R[i * c + k] && R[k * c + j])
      return false;
  return true;
}

/* Buffer b in the cluster graph: its own bytes when it belongs to the
 * cluster, else zero bytes (it only carries an order).  -1 when b is not
 * part of the cluster graph (an outside input, or written outside). */
static int32_t cluster_buffer(cluster_build *B, int32_t b, fp_error *err) {
  if (B->buf_map[b] >= 0)
    return B->buf_map[b];
  const fp_buffer *buf = fp_graph_buffer(B->g, b);
  bool own = B->of[b] == B->c;
  if (!own && (buf->writer < 0 || B->node_map[buf->writer] < 0))
    return -1;
  B->buf_map[b] =
      fp_graph_add_buffer(B->sg, buf->name, own ? buf->bytes : 0, buf->input,
                          buf->input && buf->freeable, err);
  return B->buf_map[b] >= 0 ? B->buf_map[b] : -2;
}

/* Adds member i with the reads and writes the cluster graph keeps, plus
 * the order buffers of add_paths: its own (written) and those of the
 * members whose order it must follow (read, zero bytes).  reads must hold
 * n_reads + count entries, writes n_writes + 1.  0, or -1 with err set. */
static int add_member(cluster_build *B, int32_t i, fp_read *reads,
                      int32_t *writes, fp_error *err) {
  const fp_node *n = fp_graph_node(B->g, B->members[i]);
  int32_t nr = 0, nw = 0;
  for (int32_t a = 0; a < n->n_writes; a++) /* writes first: own buffers */
    if ((writes[nw] = cluster_buffer(B, n->writes[a], err)) < -1)
      return -1;
    else if (writes[nw] >= 0)
      nw++;
  if (B->order_buf[i] >= 0)
    writes[nw++] = B->order_buf[i];
  for (int32_t a = 0; a < n->n_reads; a++) {
    int32_t b = n->reads[a].buffer, sb = cluster_buffer(B, b, err);
    if (sb < -1)
      return -1;
    if (sb < 0)
      continue;
    reads[nr] = n->reads[a];
    reads[nr].buffer = sb;
    reads[nr++].bytes = B->of[b] == B->c ? n->reads[a].bytes : 0;
  }
  for (int32_t h = 0; h < i; h++)
    if (B->edge[(size_t)h * B->count + i]) {
      reads[nr] = (fp_read){B->order_buf[h], 0, 0};
      nr++;
    }
  fp_node_spec spec = {n->name, n->kind, n->numel, n->rnumel, nr,
                       nw,      reads,   writes,   NULL};
  int32_t v = fp_graph_add_node(B->sg, &spec, err);
  return v >= 0 && fp_graph_set_node_loop(B->sg, v, &n->loop, err) == FP_OK
             ? 0
             : -1;
}

/* The order buffer of member i (zero bytes, written by it): a name that
 * no buffer of g or sg has.  0, or -1 with err set. */
static int add_order_buffer(cluster_build *B, int32_t i, fp_error *err) {
  char name[64];
  int32_t tries = 0;
  do
    snprintf(name, sizeof name, "~order%d.%d", (int)i, (int)tries++);
  while (fp_graph_find_buffer(B->g, name) >= 0 ||
         fp_graph_find_buffer(B->sg, name) >= 0);
  B->order_buf[i] = fp_graph_add_buffer(B->sg, name, 0, false, false, err);
  return B->order_buf[i] >= 0 ? 0 : -1;
}

/* Paths between members through nodes outside N(S) (docs/solver.md,
 * "Bounds"): any legal plan keeps their order and, when no path's inner
 * nodes can all share the first member's group, never puts the two in
 * one group (a group holding both holds every node on a path between
 * them).  The order becomes zero-byte order buffers (only where no direct
 * link or member in between carries it), the separation an unfusible
 * pair (added by add_separations).  0, or -1 when out of memory. */
static int add_paths(cluster_build *B) {
  size_t c = (size_t)B->count;
  free(B->reach);
  free(B->fused);
  free(B->bfused);
  free(B->edge);
  free(B->order_buf);
  B->reach = calloc(c * c + 1, 1);
  B->fused = calloc(c * c + 1, 1);
  B->bfused = calloc(c * c + 1, 1);
  B->edge = calloc(c * c + 1, 1);
  B->order_buf = malloc((c + 1) * sizeof *B->order_buf);
  if (!B->reach || !B->fused || !B->bfused || !B->edge || !B->order_buf)
    return -1;
  for (size_t i = 0; i < c; i++) {
    B->order_buf[i] = -1;
    search_paths(B, (int32_t)i);
  }
  for (size_t i = 0; i < c; i++)
    for (size_t j = i + 1; j < c; j++)
      B->edge[i * c + j] = needs_order_edge(B, (int32_t)i, (int32_t)j);
  return 0;
}

/* The unfusible pairs add_paths found, into sg (not yet finalized). */
static fp_status add_separations(cluster_build *B, fp_error *err) {
  size_t c = (size_t)B->count;
  for (size_t i = 0; i < c; i++)
    for (size_t j = i + 1; j < c; j++) {
      int32_t u = B->members[i], v = B->members[j];
      if (B->reach[i * c + j] &&
          (!B->fused[i * c + j] || !B->bfused[i * c + j]) &&
          fp_graph_compatible(B->g, u, v) &&
          fp_graph_add_unfusible(B->sg, (int32_t)i, (int32_t)j, err) != FP_OK)
        return err->code;
    }
  return FP_OK;
}

/* Outputs and unfusible pairs of the cluster graph, then finalize. */
static fp_status finish_graph(cluster_build *B, fp_error *err) {
  for (int32_t i = 0; i < B->n_bufs; i++) {
    int32_t b = B->bufs[i];
    if (fp_graph_buffer(B->g, b)->output &&
        fp_graph_add_output(B->sg, B->buf_map[b], err) != FP_OK)
      return err->code;
  }
  fp_status st = sub_copy_unfusible(B->sg, B->g, B->members, B->count, err);
  if (st == FP_OK)
    st = add_separations(B, err);
  return st == FP_OK ? fp_graph_finalize(B->sg, err) : st;
}

fp_status cluster_build_graph(cluster_build *B, int32_t c, int32_t k,
                              fp_error *err) {
  fp_status st = FP_ENOMEM;
  fp_read *reads = NULL;
  int32_t *writes = NULL;
  B->c = c;
  collect_members(B);
  B->sg = fp_graph_create(fp_graph_name(B->g));
  if (!B->sg || fp_graph_set_max_fusion_size(B->sg, k, err) != FP_OK ||
      add_paths(B) != 0)
    goto fail;
  for (int32_t i = 0; i < B->count; i++) {
    const fp_node *n = fp_graph_node(B->g, B->members[i]);
    free(reads);
    free(writes);
    reads = malloc(((size_t)n->n_reads + B->count + 1) * sizeof *reads);
    writes = malloc(((size_t)n->n_writes + 2) * sizeof *writes);
    if (!reads || !writes)
      goto fail;
    bool has_out = false;
    for (int32_t j = i + 1; j < B->count && !has_out; j++)
      has_out = B->edge[(size_t)i * B->count + j];
    if ((has_out && add_order_buffer(B, i, err) != 0) ||
        add_member(B, i, reads, writes, err) != 0) {
      st = err->code;
      goto fail;
    }
  }
  st = finish_graph(B, err);
fail:
  if (st == FP_ENOMEM)
    fp_error_set(err, FP_ENOMEM, "out of memory");
  free(reads);
  free(writes);
  sub_clear_maps(B->g, B->members, B->count, B->buf_map, B->node_map);
  return st;
}

int cluster_build_init(cluster_build *B, const fp_graph *g) {
  int32_t n = fp_graph_node_count(g), nb = fp_graph_buffer_count(g);
  memset(B, 0, sizeof *B);
  B->g = g;
  B->extra = -1;
  B->node_map = malloc(((size_t)n + 1) * sizeof *B->node_map);
  B->buf_map = malloc(((size_t)nb + 1) * sizeof *B->buf_map);
  B->members = malloc(((size_t)n + 1) * sizeof *B->members);
  B->seen = calloc((size_t)n + 1, sizeof *B->seen);
  B->queue = malloc(((size_t)PATH_VISIT_CAP + 2) * sizeof *B->queue);
  if (!B->node_map || !B->buf_map || !B->members || !B->seen || !B->queue)
    return -1;
  memset(B->node_map, 0xff, (size_t)n * sizeof *B->node_map);
  memset(B->buf_map, 0xff, (size_t)nb * sizeof *B->buf_map);
  return 0;
}

void cluster_build_free(cluster_build *B) {
  free(B->node_map);
  free(B->buf_map);
  free(B->members);
  free(B->seen);
  free(B->queue);
  free(B->reach);
  free(B->fused);
  free(B->bfused);
  free(B->edge);
  free(B->order_buf);
}

/* Greedy fusion's plan of sg (fusion limit k, listed order: the order
 * does not change traffic) into q, and its traffic into *traffic.  FP_OK,
 * or FP_ENOMEM; any other failure of the heuristic leaves *traffic at
 * UINT64_MAX (no upper limit) and returns FP_OK. */
static fp_status greedy_traffic(const fp_graph *sg, int32_t k, fp_plan *q,
                                uint64_t *traffic, fp_error *err) {
  fp_fusion_params f;
  fp_fusion_params_init(&f, FP_METHOD_GREEDY);
  f.order = FP_ORDER_LISTED;
  f.limits.max_fusion_size = k;
  fp_metrics m;
  fp_status st = fp_fuse(sg, &f, q, err);
  if (st == FP_OK)
    st = fp_plan_eval(sg, q, &m, NULL, err);
  *traffic = st == FP_OK ? m.traffic_bytes : UINT64_MAX;
  return st == FP_ENOMEM ? st : FP_OK;
}

fp_status cluster_least_traffic(const fp_graph *sg, int32_t k, int64_t budget,
                                double deadline,
                                const volatile sig_atomic_t *cancel,
                                fp_plan *plan, solver_lt_result *out,
                                fp_error *err) {
  fp_plan *q = fp_plan_create();
  uint64_t upper = UINT64_MAX;
  fp_status st = q ? greedy_traffic(sg, k, q, &upper, err)
                   : fp_error_set(err, FP_ENOMEM, "out of memory");
  if (st == FP_OK)
    st = solver_least_traffic_below(sg, k, upper, budget, deadline, cancel,
                                    plan, out, err);
  if (st == FP_OK && out->solved && !out->found) {
    out->found = true; /* no plan under greedy's: greedy's is optimal */
    if (plan)
      st = fp_plan_copy(plan, q, err);
  }
  fp_plan_destroy(q);
  return st;
}

int cluster_buffer_lists(const fp_graph *g, const int32_t *of, int32_t count,
                         int32_t **start, int32_t **list) {
  int32_t nb = fp_graph_buffer_count(g);
  *start = calloc((size_t)count + 2, sizeof **start);
  *list = malloc(((size_t)nb + 1) * sizeof **list);
  if (!*start || !*list) {
    free(*start);
    free(*list);
    *start = *list = NULL;
    return -1;
  }
  for (int32_t b = 0; b < nb; b++)
    if (of[b] >= 0)
      (*start)[of[b] + 2]++;
  for (int32_t c = 0; c < count; c++)
    (*start)[c + 2] += (*start)[c + 1];
  for (int32_t b = 0; b < nb; b++) /* ascending within each cluster */
    if (of[b] >= 0)
      (*list)[(*start)[of[b] + 1]++] = b;
  return 0;
}

fp_status cluster_guide(const fp_graph *g, const int32_t *of, int32_t count,
                        int32_t k, int64_t budget, double deadline,
                        const volatile sig_atomic_t *cancel,
                        solver_lt_guide **guide, bool *complete,
                        fp_error *err) {
  cluster_build B;
  int32_t *start = NULL, *list = NULL;
  fp_status st = FP_OK;
  memset(&B, 0, sizeof B); /* freed below even when the guide's malloc fails */
  *complete = false;
  *guide = solver_lt_guide_create();
  if (!*guide || cluster_build_init(&B, g) != 0 ||
      cluster_buffer_lists(g, of, count, &start, &list) != 0) {
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
    goto fail;
  }
  B.of = of;
  B.size = SOLVER_LT_MAX_NODES;
  bool added = true;
  for (int32_t c = 0; st == FP_OK && added && c < count; c++) {
    B.bufs = list + start[c];
    B.n_bufs = start[c + 1] - start[c];
    if (B.n_bufs == 0)
      continue;
    st = cluster_build_graph(&B, c, k, err);
    if (st == FP_OK)
      st = solver_lt_guide_add(*guide, B.sg, B.members, k, budget, deadline,
                               cancel, &added, err);
    fp_graph_destroy(B.sg);
    B.sg = NULL;
  }
  *complete = st == FP_OK && added;
fail:
  cluster_build_free(&B);
  free(start);
  free(list);
  if (st != FP_OK) {
    solver_lt_guide_destroy(*guide);
    *guide = NULL;
  }
  return st;
}
