/*
 * inductor_order.c -- `--order inductor`: PyTorch Inductor's
 * reorder_for_peak_memory (torch 2.15, memory.py) on the groups of a plan,
 * as Inductor runs it after fusion.
 *
 * Inductor works on its own node list, which differs from fuseplan's
 * groups in one way that changes its choices: a fallback kernel with
 * several results (convolution_backward, native_layer_norm) is followed
 * by one MultiOutput node per result, which the exporter folds into the
 * kernel (docs/exporter.md).  Here each such group (see multi_result)
 * gets a stand-in per written buffer again: the kernel
 * allocates all its results (the MultiOutputLayout holder), the stand-in
 * of result b allocates nothing and frees b if nobody reads it, and b's
 * readers depend on the stand-in.  The sorts run on these extended
 * "Inductor nodes" with Inductor's sizes (every buffer a group writes,
 * kernel-local ones included), its tie-break (mpi_node.index, the
 * position in the baseline) and its estimate; the stand-ins are dropped
 * from the answer.
 *
 *   1. baseline: the nodes sorted by smallest member index (min_order),
 *      then Scheduler.topological_sort_schedule: depth-first in that
 *      order, first visiting the writers of each node's dependencies in
 *      buffer-name order, emitting in post-order (fuse_nodes_once);
 *   2. topological_sort_lpmf, _bfs and _dfs (order.c's sorts, which take
 *      Inductor's sizes and ties through the gdag built here);
 *   3. estimate_peak_memory of each, resident inputs left out (a
 *      constant); the lowest wins, the baseline first, then lpmf, bfs,
 *      dfs (Python's min keeps the first).
 */
#include <stdlib.h>
#include <string.h>

#include "heuristics/fuser.h"
#include "heuristics/order_internal.h"
#include "model/eval.h"

/* The extended DAG: d over N = groups + stand-ins ("Inductor nodes"). */
typedef struct idag {
  gdag d;
  int32_t n_groups;
  int32_t *real;          /* node -> its group, -1 for a stand-in */
  int32_t *minorder;      /* nodes sorted by (min member index, stand-in) */
  int32_t *dep_off, *dep; /* node -> writer nodes of its dependencies,
                             in buffer-name order */
  int32_t *tie;           /* node -> baseline position */
  int32_t *gid, *ext;     /* graph node -> group; group -> its node */
  int32_t *wnode;         /* buffer -> the node that writes it, or -1 */
  int32_t *rank;          /* buffer -> rank of its name */
  int32_t *mut;           /* buffer -> the node mutating it (T of a
                             mutation pair), or -1 */
  bool *renamed;          /* buffer -> a mutation's new version (W) */
} idag;

static void idag_free(idag *x) {
  gdag_free(&x->d);
  free(x->real);
  free(x->minorder);
  free(x->dep_off);
  free(x->dep);
  free(x->tie);
  free(x->gid);
  free(x->ext);
  free(x->wnode);
  free(x->rank);
  free(x->mut);
  free(x->renamed);
  memset(x, 0, sizeof *x);
}

/* The number after `prefix` in `s` ("op12" -> 12), or -1 when s is not
 * prefix + digits. */
static long numbered(const char *s, const char *prefix) {
  size_t k = strlen(prefix);
  if (strncmp(s, prefix, k) != 0 || !s[k])
    return -1;
  long v = 0;
  for (const char *c = s + k; *c; c++) {
    if (*c < '0' || *c > '9' || v > 100000000L)
      return -1;
    v = 10 * v + (*c - '0');
  }
  return v;
}

/* Whether memory.py keeps input `name` for the whole graph: it decides
 * by name (is_nonfreeable_buffers: parameters, tangents, RNG states),
 * whatever the graph's `freeable` says (the exporter sets that from what
 * the compiled graph frees, docs/exporter.md, differences (d), (f)). */
static bool nonfreeable_name(const char *name) {
  static const char *const prefixes[] = {"primals_", "arg", "fwd_rng_state",
                                         "bwd_rng_state", "tangents"};
  for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
    if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
      return true;
  return false;
}

/* Whether buffer b is an input that memory.py frees after its last
 * reader. */
static bool inductor_freeable(const fp_buffer *b) {
  return b->input && !nonfreeable_name(b->name);
}

/* Marks the mutations of inputs: an in-place pair [T, W] whose T is an
 * input memory.py keeps is a mutation (the exporter's SSA form of
 * Inductor's mutation_real_name, docs/exporter.md "Mutations"), since no
 * kernel takes over a kept input.  memory.py gives W no bytes, and the
 * mutating node runs after every other reader of T (its WeakDeps).
 * mut[T] = the mutating node, renamed[W] = true.  0 or -1. */
static int find_mutations(const fp_graph *g, idag *x) {
  int32_t nb = fp_graph_buffer_count(g);
  x->mut = malloc(((size_t)nb + 1) * sizeof *x->mut);
  x->renamed = calloc((size_t)nb + 1, sizeof *x->renamed);
  if (!x->mut || !x->renamed)
    return -1;
  for (int32_t b = 0; b < nb; b++)
    x->mut[b] = -1;
  for (int32_t v = 0; v < fp_graph_node_count(g); v++) {
    int32_t n;
    const fp_inplace *ip = fp_graph_inplace(g, v, &n);
    for (int32_t k = 0; k < n; k++) {
      const fp_buffer *t = fp_graph_buffer(g, ip[k].read);
      if (!t->input || !nonfreeable_name(t->name) ||
          fp_graph_input_written_before(g, ip[k].read))
        continue;
      x->mut[ip[k].read] = v;
      x->renamed[ip[k].write] = true;
    }
  }
  return 0;
}

/* Whether group t is a fallback kernel whose results Inductor picks out
 * with MultiOutput nodes: one extern node writing two or more buffers, or
 * one whose single buffer is not its own (Inductor names node opN's
 * buffer bufN; a MultiOutput result has the MultiOutput's number). */
static bool multi_result(const fp_graph *g, const fp_plan *p, int32_t t) {
  int32_t len;
  const int32_t *grp = fp_plan_group(p, t, &len);
  const fp_node *nd = fp_graph_node(g, grp[0]);
  if (len != 1 || nd->kind != FP_KIND_EXTERN || nd->n_writes < 1)
    return false;
  if (nd->n_writes >= 2)
    return true;
  long op = numbered(nd->name, "op");
  long buf = numbered(fp_graph_buffer(g, nd->writes[0])->name, "buf");
  return op >= 0 && buf >= 0 && op != buf;
}

typedef struct named {
  const char *name;
  int32_t id;
} named;

static int cmp_named(const void *a, const void *b) {
  return strcmp(((const named *)a)->name, ((const named *)b)->name);
}

typedef struct ranked {
  int32_t rank, node;
} ranked;

static int cmp_ranked(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  return (x->rank > y->rank) - (x->rank < y->rank);
}

typedef struct keyed {
  int32_t minidx, sub, node;
} keyed;

static int cmp_keyed(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  if (x->minidx != y->minidx)
    return x->minidx < y->minidx ? -1 : 1;
  return (x->sub > y->sub) - (x->sub < y->sub);
}

/* Numbers the nodes (each group, then its stand-ins), fills real, gid,
 * ext, wnode, minorder and the buffer-name ranks.  0 or -1. */
static int number_nodes(const fp_graph *g, const fp_plan *p, idag *x) {
  int32_t n = fp_plan_group_count(p), nb = fp_graph_buffer_count(g);
  int32_t cap = n + fp_graph_buffer_count(g) + 1, m = 0;
  x->n_groups = n;
  x->real = malloc((size_t)cap * sizeof *x->real);
  x->gid = malloc(((size_t)fp_graph_node_count(g) + 1) * sizeof *x->gid);
  x->ext = malloc(((size_t)n + 1) * sizeof *x->ext);
  x->wnode = malloc(((size_t)nb + 1) * sizeof *x->wnode);
  x->rank = malloc(((size_t)nb + 1) * sizeof *x->rank);
  keyed *k = malloc((size_t)cap * sizeof *k);
  named *nm = malloc(((size_t)nb + 1) * sizeof *nm);
  int rc = -1;
  if (!x->real || !x->gid || !x->ext || !x->wnode || !x->rank || !k || !nm)
    goto done;
  for (int32_t b = 0; b < nb; b++)
    x->wnode[b] = -1;
  for (int32_t t = 0; t < n; t++) {
    int32_t len, lo = INT32_MAX;
    const int32_t *grp = fp_plan_group(p, t, &len);
    for (int32_t i = 0; i < len; i++) {
      x->gid[grp[i]] = t;
      lo = grp[i] < lo ? grp[i] : lo;
    }
    x->ext[t] = m;
    x->real[m] = t;
    k[m] = (keyed){lo, 0, m};
    m++;
    bool multi = multi_result(g, p, t);
    for (int32_t i = 0; i < len; i++) {
      const fp_node *nd = fp_graph_node(g, grp[i]);
      for (int32_t w = 0; w < nd->n_writes; w++) {
        if (!multi) {
          x->wnode[nd->writes[w]] = x->ext[t];
          continue;
        }
        x->wnode[nd->writes[w]] = m;
        x->real[m] = -1;
        k[m] = (keyed){lo, w + 1, m};
        m++;
      }
    }
  }
  x->d.n = m;
  qsort(k, (size_t)m, sizeof *k, cmp_keyed);
  if (!(x->minorder = malloc((size_t)m * sizeof *x->minorder)))
    goto done;
  for (int32_t i = 0; i < m; i++)
    x->minorder[i] = k[i].node;
  for (int32_t b = 0; b < nb; b++)
    nm[b] = (named){fp_graph_buffer(g, b)->name, b};
  qsort(nm, (size_t)nb, sizeof *nm, cmp_named);
  for (int32_t r = 0; r < nb; r++)
    x->rank[nm[r].id] = r;
  rc = 0;
done:
  free(k);
  free(nm);
  return rc;
}

/* Calls visit(x, u, v, b, arg) for every dependency edge u -> v of the
 * Inductor nodes, where v reads buffer b that u writes (b = -1 for a
 * kernel -> stand-in edge).  Edges from one u come together, so a stamp on
 * v per u dedupes them. */
typedef void (*edge_fn)(idag *x, int32_t u, int32_t v, int32_t b, void *arg);

/* The WeakDeps of a mutation: node nd of group t reads the old value of
 * a buffer that another group's node mutates, so each of nd's results
 * comes before that node (memory.py orders by them; they free nothing). */
static void weak_edges(idag *x, const fp_node *nd, int32_t t, edge_fn visit,
                       void *arg) {
  for (int32_t i = 0; i < nd->n_reads; i++) {
    int32_t v = x->mut[nd->reads[i].buffer];
    if (v < 0 || x->gid[v] == t)
      continue;
    for (int32_t w = 0; w < nd->n_writes; w++)
      visit(x, x->wnode[nd->writes[w]], x->ext[x->gid[v]], nd->writes[w], arg);
  }
}

static void each_edge(const fp_graph *g, const fp_plan *p, idag *x,
                      edge_fn visit, void *arg) {
  for (int32_t t = 0; t < x->n_groups; t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, t, &len);
    for (int32_t i = 0; i < len; i++) {
      const fp_node *nd = fp_graph_node(g, grp[i]);
      for (int32_t w = 0; w < nd->n_writes; w++) {
        int32_t b = nd->writes[w], u = x->wnode[b];
        const fp_buffer *buf = fp_graph_buffer(g, b);
        if (u != x->ext[t])
          visit(x, x->ext[t], u, -1, arg); /* kernel -> stand-in */
        for (int32_t r = 0; r < buf->n_readers; r++)
          if (x->gid[buf->readers[r]] != t)
            visit(x, u, x->ext[x->gid[buf->readers[r]]], b, arg);
      }
      weak_edges(x, nd, t, visit, arg);
    }
  }
}

typedef struct edge_pass {
  int32_t *stamp, *fill;
  bool count;
} edge_pass;

static void add_edge(idag *x, int32_t u, int32_t v, int32_t b, void *arg) {
  edge_pass *e = arg;
  gdag *d = &x->d;
  (void)b;
  if (e->stamp[v] == u)
    return;
  e->stamp[v] = u;
  if (e->count) {
    d->succ_off[u + 1]++;
    d->pred_off[v + 1]++;
    return;
  }
  d->succ[d->succ_off[u] + e->fill[u]++] = v;
  d->pred[d->pred_off[v] + d->pred_off[d->n + 1 + v]++] = u;
}

/* succ/pred CSR of the Inductor nodes.  0 or -1. */
static int build_node_edges(const fp_graph *g, const fp_plan *p, idag *x) {
  gdag *d = &x->d;
  int32_t m = d->n;
  edge_pass e = {malloc(((size_t)m + 1) * sizeof(int32_t)),
                 calloc((size_t)m + 1, sizeof(int32_t)), true};
  d->succ_off = calloc((size_t)m + 1, sizeof *d->succ_off);
  d->pred_off = calloc(2 * ((size_t)m + 1), sizeof *d->pred_off);
  int rc = -1;
  if (!e.stamp || !e.fill || !d->succ_off || !d->pred_off)
    goto done;
  for (int pass = 0; pass < 2; pass++) {
    for (int32_t v = 0; v < m; v++)
      e.stamp[v] = -1;
    each_edge(g, p, x, add_edge, &e);
    if (pass)
      break;
    gdag_prefix(d->succ_off, m);
    gdag_prefix(d->pred_off, m);
    d->succ = malloc(((size_t)d->succ_off[m] + 1) * sizeof *d->succ);
    d->pred = malloc(((size_t)d->pred_off[m] + 1) * sizeof *d->pred);
    if (!d->succ || !d->pred)
      goto done;
    e.count = false;
  }
  rc = 0;
done:
  free(e.stamp);
  free(e.fill);
  return rc;
}

/* Inductor's sizes: a kernel allocates every buffer it writes (kernel-
 * local ones too); what no other group reads (and is not an output) is
 * freed at the step that made it visible -- the kernel, or the stand-in
 * of a multi-result kernel.  Also the start: freeable inputs that are
 * read, and the outputs (lpmf's initial peak). */
static void node_sizes(const fp_graph *g, const fp_plan *p, idag *x) {
  gdag *d = &x->d;
  for (int32_t u = 0; u < d->n; u++)
    d->alloc[u] = d->dead[u] = 0;
  for (int32_t t = 0; t < x->n_groups; t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, t, &len);
    for (int32_t i = 0; i < len; i++) {
      const fp_node *nd = fp_graph_node(g, grp[i]);
      for (int32_t w = 0; w < nd->n_writes; w++) {
        const fp_buffer *buf = fp_graph_buffer(g, nd->writes[w]);
        if (x->renamed[nd->writes[w]])
          continue; /* a mutation's new version: no bytes of its own */
        bool outside = false;
        for (int32_t r = 0; r < buf->n_readers && !outside; r++)
          outside = x->gid[buf->readers[r]] != t;
        d->alloc[x->ext[t]] += buf->bytes;
        if (!outside && !buf->output)
          d->dead[x->wnode[nd->writes[w]]] += buf->bytes;
        d->start_peak += buf->output ? buf->bytes : 0;
      }
    }
  }
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++) {
    const fp_buffer *buf = fp_graph_buffer(g, b);
    if (inductor_freeable(buf) && buf->n_readers > 0) {
      d->start_live += buf->bytes;
      d->start_peak += buf->output ? buf->bytes : 0;
    }
  }
}

/* dfs's memory touched counts every buffer a node reads from another
 * node or a freeable input (its pred_buffers), outputs included; the
 * items cover all but the outputs, which are added here.  stamp: per
 * node scratch. */
static void output_reads(const fp_graph *g, idag *x, int32_t *stamp) {
  gdag *d = &x->d;
  for (int32_t u = 0; u < d->n; u++)
    d->dfs_extra[u] = 0, stamp[u] = -1;
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++) {
    const fp_buffer *buf = fp_graph_buffer(g, b);
    if (!buf->output || (buf->input && !inductor_freeable(buf)) ||
        x->renamed[b])
      continue;
    int32_t skip = buf->writer >= 0 ? x->gid[buf->writer] : -1;
    for (int32_t r = 0; r < buf->n_readers; r++) {
      int32_t v = x->ext[x->gid[buf->readers[r]]];
      if (x->gid[buf->readers[r]] == skip || stamp[v] == b)
        continue;
      stamp[v] = b;
      d->dfs_extra[v] += buf->bytes;
    }
  }
}

/* The freeable items over the Inductor nodes: buffers read outside their
 * writer's group that are not outputs, and read freeable inputs that are
 * not outputs; each with its distinct reader nodes.  0 or -1. */
static int build_node_items(const fp_graph *g, idag *x) {
  gdag *d = &x->d;
  int32_t nb = fp_graph_buffer_count(g), m = d->n, k = 0, total = 0;
  size_t readers = 0;
  for (int32_t b = 0; b < nb; b++)
    readers += (size_t)fp_graph_buffer(g, b)->n_readers;
  int32_t *stamp = malloc(((size_t)m + 1) * sizeof *stamp);
  d->cons_off = calloc((size_t)nb + 1, sizeof *d->cons_off);
  d->item_bytes = malloc(((size_t)nb + 1) * sizeof *d->item_bytes);
  d->item_input = malloc(((size_t)nb + 1) * sizeof *d->item_input);
  d->gitem_off = calloc((size_t)m + 1, sizeof *d->gitem_off);
  d->cons = malloc((readers + 1) * sizeof *d->cons);
  int rc = -1;
  if (!stamp || !d->cons_off || !d->item_bytes || !d->item_input ||
      !d->gitem_off || !d->cons)
    goto done;
  for (int32_t u = 0; u < m; u++)
    stamp[u] = -1;
  for (int32_t b = 0; b < nb; b++) {
    const fp_buffer *buf = fp_graph_buffer(g, b);
    if (buf->output || (buf->input && !inductor_freeable(buf)) ||
        (!buf->input && buf->writer < 0) || x->renamed[b])
      continue;
    int32_t skip = buf->writer >= 0 ? x->gid[buf->writer] : -1, c = 0;
    for (int32_t r = 0; r < buf->n_readers; r++) {
      int32_t h = x->gid[buf->readers[r]];
      if (h == skip || stamp[x->ext[h]] == b)
        continue;
      stamp[x->ext[h]] = b;
      d->cons[total + c++] = x->ext[h];
    }
    if (c == 0)
      continue;
    d->item_bytes[k] = buf->bytes;
    d->item_input[k] = buf->input;
    total += c;
    d->cons_off[++k] = total;
  }
  d->n_items = k;
  for (int32_t j = 0; j < total; j++)
    d->gitem_off[d->cons[j] + 1]++;
  gdag_prefix(d->gitem_off, m);
  if (!(d->gitem = malloc(((size_t)total + 1) * sizeof *d->gitem)))
    goto done;
  for (int32_t u = 0; u < m; u++)
    stamp[u] = 0;
  for (int32_t it = 0; it < k; it++)
    for (int32_t j = d->cons_off[it]; j < d->cons_off[it + 1]; j++)
      d->gitem[d->gitem_off[d->cons[j]] + stamp[d->cons[j]]++] = it;
  rc = 0;
done:
  free(stamp);
  return rc;
}

static void count_dep(idag *x, int32_t u, int32_t v, int32_t b, void *arg) {
  (void)u;
  (void)b;
  (void)arg;
  x->dep_off[v + 1]++;
}

static void fill_dep(idag *x, int32_t u, int32_t v, int32_t b, void *arg) {
  ranked *r = arg;
  r[x->dep_off[v] + x->tie[v]++] = (ranked){b < 0 ? -1 : x->rank[b], u};
}

/* Each node's dependencies as topological_sort_schedule visits them: the
 * writer nodes of the buffers it reads, sorted by buffer name (a
 * stand-in's one dependency is its kernel).  Repeats are harmless: the
 * walk skips seen nodes.  Uses x->tie as scratch.  0 or -1. */
static int build_deps(const fp_graph *g, const fp_plan *p, idag *x) {
  int32_t m = x->d.n;
  x->dep_off = calloc((size_t)m + 1, sizeof *x->dep_off);
  x->tie = calloc((size_t)m + 1, sizeof *x->tie);
  if (!x->dep_off || !x->tie)
    return -1;
  each_edge(g, p, x, count_dep, NULL);
  gdag_prefix(x->dep_off, m);
  ranked *r = malloc(((size_t)x->dep_off[m] + 1) * sizeof *r);
  x->dep = malloc(((size_t)x->dep_off[m] + 1) * sizeof *x->dep);
  if (!r || !x->dep) {
    free(r);
    return -1;
  }
  each_edge(g, p, x, fill_dep, r);
  for (int32_t v = 0; v < m; v++) {
    qsort(r + x->dep_off[v], (size_t)(x->dep_off[v + 1] - x->dep_off[v]),
          sizeof *r, cmp_ranked);
    for (int32_t j = x->dep_off[v]; j < x->dep_off[v + 1]; j++)
      x->dep[j] = r[j].node;
  }
  free(r);
  return 0;
}

/* Builds the Inductor nodes of a legal plan.  0 or -1 (idag_free either
 * way). */
static int idag_build(const fp_graph *g, const fp_plan *p, idag *x) {
  memset(x, 0, sizeof *x);
  if (number_nodes(g, p, x) != 0 || find_mutations(g, x) != 0)
    return -1;
  gdag *d = &x->d;
  size_t sm = (size_t)d->n + 1;
  d->alloc = malloc(sm * sizeof *d->alloc);
  d->dead = malloc(sm * sizeof *d->dead);
  d->dfs_extra = malloc(sm * sizeof *d->dfs_extra);
  if (!d->alloc || !d->dead || !d->dfs_extra ||
      build_node_edges(g, p, x) != 0 || build_node_items(g, x) != 0 ||
      build_deps(g, p, x) != 0)
    return -1;
  node_sizes(g, p, x);
  output_reads(g, x, x->tie); /* tie is scratch until baseline() */
  return 0;
}

/* topological_sort_schedule over the nodes in min_order: out[] gets the
 * baseline, and tie[] each node's position in it.  0 or -1. */
static int baseline(idag *x, int32_t *out) {
  if (gdag_postorder(x->d.n, x->minorder, x->dep_off, x->dep, out) != 0)
    return -1;
  for (int32_t s = 0; s < x->d.n; s++)
    x->tie[out[s]] = s;
  return 0;
}

/* estimate_peak_memory of an order of the nodes (without resident
 * inputs): freeable inputs live from the start to their last reader,
 * every buffer from its kernel's step to its last reader's step (to the
 * step that frees it when nobody else reads it), outputs to the end. */
static uint64_t estimate(const gdag *d, const int32_t *order, int64_t *delta,
                         int32_t *step) {
  int32_t m = d->n;
  for (int32_t s = 0; s <= m; s++)
    delta[s] = 0;
  for (int32_t s = 0; s < m; s++)
    step[order[s]] = s;
  delta[0] += (int64_t)d->start_live;
  for (int32_t s = 0; s < m; s++) {
    delta[s] += (int64_t)d->alloc[order[s]];
    delta[s + 1] -= (int64_t)d->dead[order[s]];
  }
  for (int32_t it = 0; it < d->n_items; it++) {
    int32_t last = 0;
    for (int32_t j = d->cons_off[it]; j < d->cons_off[it + 1]; j++)
      last = step[d->cons[j]] > last ? step[d->cons[j]] : last;
    delta[last + 1] -= (int64_t)d->item_bytes[it];
  }
  int64_t cur = 0, peak = 0;
  for (int32_t s = 0; s <= m; s++) {
    cur += delta[s];
    peak = cur > peak ? cur : peak;
  }
  return (uint64_t)peak;
}

/* reorder_for_peak_memory's choice among the baseline and the three
 * sorts: the order of the nodes with the lowest estimate, the first on
 * ties, into out[]; *chosen names it.  0 or -1. */
static int choose(idag *x, int32_t *out, fp_order *chosen) {
  gdag *d = &x->d;
  size_t sm = (size_t)d->n + 1;
  int32_t *cand = malloc(sm * sizeof *cand), *step = malloc(sm * sizeof *step);
  int64_t *delta = malloc((sm + 1) * sizeof *delta);
  int rc = -1;
  if (!cand || !step || !delta || baseline(x, out) != 0)
    goto done;
  d->tie = x->tie;
  uint64_t best = estimate(d, out, delta, step);
  *chosen = FP_ORDER_INDUCTOR;
  static const fp_order methods[] = {FP_ORDER_LPMF, FP_ORDER_BFS, FP_ORDER_DFS};
  for (int i = 0; i < 3; i++) {
    int ok = methods[i] == FP_ORDER_LPMF  ? order_lpmf(d, cand)
             : methods[i] == FP_ORDER_BFS ? order_kahn(d, true, cand)
                                          : order_dfs(d, cand);
    if (ok != 0)
      goto done;
    uint64_t peak = estimate(d, cand, delta, step);
    if (peak < best) {
      best = peak;
      *chosen = methods[i];
      memcpy(out, cand, (size_t)d->n * sizeof *out);
    }
  }
  rc = 0;
done:
  free(cand);
  free(step);
  free(delta);
  return rc;
}

fp_status inductor_reorder(const fp_graph *g, const fp_plan *p, fp_plan *out,
                           fp_order *chosen, fp_error *err) {
  idag x;
  int32_t *order = NULL;
  fp_status st = FP_ENOMEM;
  if (idag_build(g, p, &x) == 0 &&
      (order = malloc(((size_t)x.d.n + 1) * sizeof *order)) &&
      choose(&x, order, chosen) == 0) {
    fp_plan_clear(out);
    st = FP_OK;
    for (int32_t s = 0; s < x.d.n && st == FP_OK; s++) {
      int32_t t = x.real[order[s]], len;
      if (t < 0)
        continue; /* a stand-in */
      const int32_t *grp = fp_plan_group(p, t, &len);
      st = fp_plan_add_group(out, grp, len, err);
    }
  }
  free(order);
  idag_free(&x);
  return st == FP_OK ? FP_OK
                     : fp_error_set(err, FP_ENOMEM, "out of memory ordering");
}

/* Kernel t of p as the k-th kernel of scheduler group dense[t]: CSR of
 * the kernels per scheduler group (first[k]..first[k + 1]), in p's order,
 * the groups numbered in order of first appearance.  -1 when out of
 * memory. */
typedef struct sched_map {
  int32_t n; /* scheduler groups */
  int32_t *dense, *first, *kern;
} sched_map;

static void sched_map_free(sched_map *m) {
  free(m->dense);
  free(m->first);
  free(m->kern);
}

static int sched_map_build(const fp_plan *p, const int32_t *sched,
                           int32_t n_ids, sched_map *m) {
  int32_t n = fp_plan_group_count(p);
  int32_t *id = malloc(((size_t)n_ids + 1) * sizeof *id);
  m->n = 0;
  m->dense = malloc(((size_t)n + 1) * sizeof *m->dense);
  m->first = calloc((size_t)n + 2, sizeof *m->first);
  m->kern = malloc(((size_t)n + 1) * sizeof *m->kern);
  if (!id || !m->dense || !m->first || !m->kern) {
    free(id);
    return -1;
  }
  for (int32_t i = 0; i < n_ids; i++)
    id[i] = -1;
  for (int32_t t = 0; t < n; t++) {
    if (id[sched[t]] < 0)
      id[sched[t]] = m->n++;
    m->dense[t] = id[sched[t]];
    m->first[m->dense[t] + 1]++;
  }
  gdag_prefix(m->first, m->n);
  int32_t *fill = id; /* reused: kernels placed per group */
  for (int32_t k = 0; k < m->n; k++)
    fill[k] = 0;
  for (int32_t t = 0; t < n; t++)
    m->kern[m->first[m->dense[t]] + fill[m->dense[t]]++] = t;
  free(id);
  return 0;
}

/* The plan of scheduler groups: each one all the members of its
 * kernels.  FP_ENOMEM. */
static fp_status merged_plan(const fp_plan *p, const sched_map *m, fp_plan *out,
                             fp_error *err) {
  fp_plan_clear(out);
  for (int32_t k = 0; k < m->n; k++) {
    if (fp_plan_open_group(out, err) != FP_OK)
      return FP_ENOMEM;
    for (int32_t j = m->first[k]; j < m->first[k + 1]; j++) {
      int32_t len;
      const int32_t *grp = fp_plan_group(p, m->kern[j], &len);
      for (int32_t i = 0; i < len; i++)
        if (fp_plan_append_node(out, grp[i], err) != FP_OK)
          return FP_ENOMEM;
    }
  }
  return FP_OK;
}

fp_status inductor_reorder_parts(const fp_graph *g, fp_plan *p,
                                 const int32_t *sched, int32_t n_ids,
                                 fp_order *chosen, fp_error *err) {
  sched_map m = {0};
  fp_plan *merged = fp_plan_create(), *order = fp_plan_create(),
          *out = fp_plan_create();
  int32_t *kernel_of =
      malloc(((size_t)fp_graph_node_count(g) + 1) * sizeof *kernel_of);
  fp_status st = FP_ENOMEM;
  fp_order ignored;
  if (!chosen)
    chosen = &ignored;
  if (!merged || !order || !out || !kernel_of ||
      sched_map_build(p, sched, n_ids, &m) != 0)
    goto done;
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, t, &len);
    for (int32_t i = 0; i < len; i++)
      kernel_of[grp[i]] = t;
  }
  if ((st = merged_plan(p, &m, merged, err)) != FP_OK ||
      (st = inductor_reorder(g, merged, order, chosen, err)) != FP_OK)
    goto done;
  for (int32_t s = 0; s < fp_plan_group_count(order) && st == FP_OK; s++) {
    int32_t len, k = m.dense[kernel_of[fp_plan_group(order, s, &len)[0]]];
    for (int32_t j = m.first[k]; j < m.first[k + 1] && st == FP_OK; j++) {
      const int32_t *grp = fp_plan_group(p, m.kern[j], &len);
      st = fp_plan_add_group(out, grp, len, err);
    }
  }
  if (st == FP_OK)
    st = fp_plan_copy(p, out, err);
done:
  sched_map_free(&m);
  free(kernel_of);
  fp_plan_destroy(merged);
  fp_plan_destroy(order);
  fp_plan_destroy(out);
  return st == FP_OK ? FP_OK
                     : fp_error_set(err, FP_ENOMEM, "out of memory ordering");
}

/* Joins F's groups (kernels) by outer-loop fusion wherever a group reads
 * another's result, until nothing joins (at most `rounds` passes). */
static void join_outer(fuser *F, const fp_fusion_params *prm) {
  bool changed = true;
  for (int32_t r = 0; r < prm->rounds && changed; r++) {
    changed = false;
    for (int32_t b = 0; b < fp_graph_buffer_count(F->g); b++) {
      const fp_buffer *buf = fp_graph_buffer(F->g, b);
      for (int32_t i = 0; buf->writer >= 0 && i < buf->n_readers; i++) {
        int32_t a = fuser_find(F, F->grp[buf->writer]);
        int32_t c = fuser_find(F, F->grp[buf->readers[i]]);
        pair_info pi;
        if (a == c || F->pos[a] > F->pos[c])
          continue;
        fuser_score(F, a, c, &pi);
        int32_t d = fuser_outer_depth(F, prm, a, c, &pi);
        if (d > 0 && !fuser_creates_cycle(F, a, c)) {
          fuser_merge(F, a, c, d);
          changed = true;
        }
      }
    }
  }
}

/* Inductor's scheduler groups of p's kernels: kernels that outer-loop
 * fusion joins into a group that code generation splits (fuser.c) share
 * sched[t] (< n nodes); every other kernel is its own (n + t).  0, or -1
 * when out of memory. */
static int regroup(const fp_graph *g, const fp_plan *p, int32_t *sched) {
  fuser F;
  /* greedy's rounds and shared-bytes floor (fusion.c's defaults) */
  fp_fusion_params prm = {.method = FP_METHOD_GREEDY,
                          .rounds = FP_FUSION_DEFAULT_ROUNDS,
                          .min_shared = FP_FUSION_DEFAULT_MIN_SHARED};
  int32_t n = fp_graph_node_count(g);
  if (fuser_init(&F, g, fp_graph_max_fusion_size(g)) != 0) {
    fuser_free(&F);
    return -1;
  }
  fuser_set_groups(&F, p);
  fuser_set_cpp(&F);
  if (F.cpp)
    join_outer(&F, &prm);
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t len, h = fuser_find(&F, F.grp[fp_plan_group(p, t, &len)[0]]);
    sched[t] = F.cpp && fuser_splits(&F, h) ? h : n + t;
  }
  fuser_free(&F);
  return 0;
}

fp_status inductor_reorder_kernels(const fp_graph *g, const fp_plan *p,
                                   fp_plan *out, fp_order *chosen,
                                   fp_error *err) {
  int32_t n = fp_plan_group_count(p);
  int32_t *sched = malloc(((size_t)n + 1) * sizeof *sched);
  fp_status st = FP_ENOMEM;
  if (sched && regroup(g, p, sched) == 0 &&
      (st = fp_plan_copy(out, p, err)) == FP_OK)
    st = inductor_reorder_parts(g, out, sched, fp_graph_node_count(g) + n,
                                chosen, err);
  free(sched);
  return st == FP_OK || st != FP_ENOMEM
             ? st
             : fp_error_set(err, FP_ENOMEM, "out of memory ordering");
}
