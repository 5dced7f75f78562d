/*
 * order.c -- memory-aware orders of a fixed grouping: the group DAG and
 * the listed, LPMF, BFS and DFS sorts (after Inductor's memory.py).
 * reorder.c applies them; inductor_order.c runs them in Inductor's way.
 *
 * All four work on the group DAG (an edge g -> h when h reads a buffer g
 * writes) and on "freeable items": buffers that are live for a while and
 * then freed -- materialized produced buffers that are not outputs, and
 * freeable inputs that are not outputs.  Which buffers are materialized
 * depends on the grouping only, never on the order, so it is fixed here.
 */
#include <stdlib.h>
#include <string.h>

#include "heuristics/order_internal.h"
#include "model/eval.h"
#include "model/util.h"

static const char *const order_names[] = {
#define FP_ORDER_STR_(name, str) str,
    FP_ORDER_MAP(FP_ORDER_STR_)
#undef FP_ORDER_STR_
};

const char *fp_order_name(fp_order o) {
  return fp_name_of(order_names, FP_ORDER_COUNT_, (int)o);
}

int fp_order_parse(const char *s) {
  return fp_name_lookup(order_names, FP_ORDER_COUNT_, s);
}

void gdag_free(gdag *d) {
  free(d->gid);
  free(d->minidx);
  free(d->succ_off);
  free(d->succ);
  free(d->pred_off);
  free(d->pred);
  free(d->alloc);
  free(d->dead);
  free(d->ws);
  free(d->item_bytes);
  free(d->cons_off);
  free(d->cons);
  free(d->gitem_off);
  free(d->gitem);
  free(d->item_input);
  free(d->dfs_extra);
  memset(d, 0, sizeof *d);
}

/* Turns per-row counts in off[1..n] into offsets. */
void gdag_prefix(int32_t *off, int32_t n) {
  off[0] = 0;
  for (int32_t i = 0; i < n; i++)
    off[i + 1] += off[i];
}

/* Builds succ/pred CSR: an edge t -> h when a node of h reads a buffer a
 * node of t writes.  Groups are scanned one at a time, so stamping h with
 * t dedupes edges.  Two passes: count, then fill. */
static int build_edges(const fp_graph *g, const fp_plan *p, gdag *d,
                       int32_t *stamp, int32_t *fill) {
  int32_t n = d->n;
  for (int pass = 0; pass < 2; pass++) {
    for (int32_t i = 0; i < n; i++)
      stamp[i] = -1, fill[i] = 0;
    for (int32_t t = 0; t < n; t++) {
      int32_t len;
      const int32_t *grp = fp_plan_group(p, t, &len);
      for (int32_t k = 0; k < len; k++) {
        const fp_node *nd = fp_graph_node(g, grp[k]);
        for (int32_t w = 0; w < nd->n_writes; w++) {
          const fp_buffer *buf = fp_graph_buffer(g, nd->writes[w]);
          for (int32_t r = 0; r < buf->n_readers; r++) {
            int32_t h = d->gid[buf->readers[r]];
            if (h == t || stamp[h] == t)
              continue;
            stamp[h] = t;
            if (!pass) {
              d->succ_off[t + 1]++;
              d->pred_off[h + 1]++;
            } else {
              d->succ[d->succ_off[t] + fill[t]++] = h;
              d->pred[d->pred_off[h] + d->pred_off[n + 1 + h]++] = t;
            }
          }
        }
      }
    }
    if (!pass) {
      gdag_prefix(d->succ_off, n);
      gdag_prefix(d->pred_off, n);
      memset(d->pred_off + n + 1, 0, (size_t)n * sizeof *d->pred_off);
      d->succ = malloc(((size_t)d->succ_off[n] + 1) * sizeof *d->succ);
      d->pred = malloc(((size_t)d->pred_off[n] + 1) * sizeof *d->pred);
      if (!d->succ || !d->pred)
        return -1;
    }
  }
  return 0;
}

/* Memory of each group: bytes it allocates (materialized writes) and bytes
 * freed right after it (written, never read, not outputs). */
static void group_memory(const fp_graph *g, const fp_plan *p, gdag *d) {
  for (int32_t t = 0; t < d->n; t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, t, &len);
    d->alloc[t] = d->dead[t] = 0;
    d->ws[t] = fp_graph_group_workspace(g, grp, len);
    for (int32_t k = 0; k < len; k++) {
      const fp_node *nd = fp_graph_node(g, grp[k]);
      for (int32_t w = 0; w < nd->n_writes; w++) {
        const fp_buffer *buf = fp_graph_buffer(g, nd->writes[w]);
        bool outside = buf->output || buf->n_readers == 0;
        for (int32_t r = 0; r < buf->n_readers && !outside; r++)
          outside = d->gid[buf->readers[r]] != t;
        d->alloc[t] += outside ? buf->bytes : 0;
        if (buf->n_readers == 0 && !buf->output)
          d->dead[t] += buf->bytes;
      }
    }
  }
}

/* The consumer groups of buffer b, other than its writer's group, if b is
 * a freeable item (see the file comment); -1 when it is not one.  With
 * out != NULL they are stored there.  stamp/mark dedupe groups. */
static int32_t item_consumers(const fp_graph *g, const gdag *d, int32_t b,
                              int32_t *stamp, int32_t mark, int32_t *out) {
  const fp_buffer *buf = fp_graph_buffer(g, b);
  if (buf->output || buf->n_readers == 0 || (buf->input && !buf->freeable) ||
      (!buf->input && buf->writer < 0))
    return -1;
  int32_t skip = buf->writer >= 0 ? d->gid[buf->writer] : -1, k = 0;
  for (int32_t i = 0; i < buf->n_readers; i++) {
    int32_t h = d->gid[buf->readers[i]];
    if (h == skip || stamp[h] == mark)
      continue;
    stamp[h] = mark;
    if (out)
      out[k] = h;
    k++;
  }
  return k > 0 ? k : -1; /* all readers inside: not materialized */
}

/* Builds the item lists: item -> consumers, group -> items consumed.
 * Pass 0 counts, pass 1 fills; the stamp mark is unique per (pass, b). */
static int build_items(const fp_graph *g, gdag *d, int32_t *stamp) {
  int32_t nb = fp_graph_buffer_count(g), n = d->n, k = 0;
  d->cons_off = calloc((size_t)nb + 1, sizeof *d->cons_off);
  d->item_bytes = malloc(((size_t)nb + 1) * sizeof *d->item_bytes);
  d->item_input = malloc(((size_t)nb + 1) * sizeof *d->item_input);
  d->gitem_off = calloc((size_t)n + 1, sizeof *d->gitem_off);
  if (!d->cons_off || !d->item_bytes || !d->item_input || !d->gitem_off)
    return -1;
  for (int32_t i = 0; i < n; i++)
    stamp[i] = -1;
  for (int32_t b = 0; b < nb; b++) {
    int32_t c = item_consumers(g, d, b, stamp, b, NULL);
    if (c < 0)
      continue;
    const fp_buffer *buf = fp_graph_buffer(g, b);
    d->item_bytes[k] = buf->bytes;
    d->item_input[k] = buf->input;
    d->cons_off[++k] = c;
    if (buf->input)
      d->start_live += buf->bytes; /* freeable inputs start live */
  }
  d->n_items = k;
  gdag_prefix(d->cons_off, k);
  d->cons = malloc(((size_t)d->cons_off[k] + 1) * sizeof *d->cons);
  if (!d->cons)
    return -1;
  for (int32_t i = 0; i < n; i++)
    stamp[i] = -1;
  for (int32_t b = 0, it = 0; b < nb; b++)
    if (item_consumers(g, d, b, stamp, nb + b, d->cons + d->cons_off[it]) >= 0)
      it++;
  /* group -> items: invert cons */
  for (int32_t it = 0; it < k; it++)
    for (int32_t j = d->cons_off[it]; j < d->cons_off[it + 1]; j++)
      d->gitem_off[d->cons[j] + 1]++;
  gdag_prefix(d->gitem_off, n);
  d->gitem = malloc(((size_t)d->gitem_off[n] + 1) * sizeof *d->gitem);
  if (!d->gitem)
    return -1;
  for (int32_t i = 0; i < n; i++)
    stamp[i] = 0;
  for (int32_t it = 0; it < k; it++)
    for (int32_t j = d->cons_off[it]; j < d->cons_off[it + 1]; j++)
      d->gitem[d->gitem_off[d->cons[j]] + stamp[d->cons[j]]++] = it;
  return 0;
}

/* Builds the group DAG of a legal plan.  0, or -1 when out of memory. */
int gdag_build(const fp_graph *g, const fp_plan *p, gdag *d) {
  int32_t n = fp_plan_group_count(p);
  memset(d, 0, sizeof *d);
  d->n = n;
  d->start_live = fp_graph_resident_bytes(g);
  size_t sn = (size_t)n + 1;
  d->gid = malloc(((size_t)fp_graph_node_count(g) + 1) * sizeof *d->gid);
  d->minidx = malloc(sn * sizeof *d->minidx);
  d->succ_off = calloc(sn, sizeof *d->succ_off);
  d->pred_off = calloc(2 * sn, sizeof *d->pred_off); /* + fill counters */
  d->alloc = malloc(sn * sizeof *d->alloc);
  d->dead = malloc(sn * sizeof *d->dead);
  d->ws = malloc(sn * sizeof *d->ws);
  d->tie = d->minidx;
  int32_t *stamp = malloc(sn * sizeof *stamp),
          *fill = malloc(sn * sizeof *fill);
  int rc = -1;
  if (!d->gid || !d->minidx || !d->succ_off || !d->pred_off || !d->alloc ||
      !d->dead || !d->ws || !stamp || !fill)
    goto done;
  for (int32_t t = 0; t < n; t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, t, &len);
    d->minidx[t] = INT32_MAX;
    for (int32_t k = 0; k < len; k++) {
      d->gid[grp[k]] = t;
      d->minidx[t] = grp[k] < d->minidx[t] ? grp[k] : d->minidx[t];
    }
  }
  group_memory(g, p, d);
  if (fp_graph_inplace_count(g) > 0) {
    d->g = g;
    d->p = p;
  }
  if (build_edges(g, p, d, stamp, fill) == 0 && build_items(g, d, stamp) == 0)
    rc = 0;
done:
  free(stamp);
  free(fill);
  return rc;
}

/* ---- a small binary heap of group ids --------------------------------- */

typedef struct heap {
  int32_t *a;
  int32_t n;
  const gdag *d;
  const int32_t *key; /* BFS: per-group key arrays at d->pred_off; or NULL */
} heap;

/* a before b?  BFS: lexicographic over the sorted predecessor orders
 * (a prefix first), then the smallest member index. */
static bool heap_less(const heap *h, int32_t a, int32_t b) {
  if (h->key) {
    const int32_t *ka = h->key + h->d->pred_off[a],
                  *kb = h->key + h->d->pred_off[b];
    int32_t na = h->d->pred_off[a + 1] - h->d->pred_off[a];
    int32_t nb = h->d->pred_off[b + 1] - h->d->pred_off[b];
    for (int32_t i = 0; i < na && i < nb; i++)
      if (ka[i] != kb[i])
        return ka[i] < kb[i];
    if (na != nb)
      return na < nb;
  }
  return h->d->tie[a] < h->d->tie[b];
}

static void heap_push(heap *h, int32_t x) {
  int32_t i = h->n++;
  while (i > 0 && heap_less(h, x, h->a[(i - 1) / 2])) {
    h->a[i] = h->a[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->a[i] = x;
}

static int32_t heap_pop(heap *h) {
  int32_t top = h->a[0], x = h->a[--h->n], i = 0;
  for (;;) {
    int32_t c = 2 * i + 1;
    if (c >= h->n)
      break;
    if (c + 1 < h->n && heap_less(h, h->a[c + 1], h->a[c]))
      c++;
    if (!heap_less(h, h->a[c], x))
      break;
    h->a[i] = h->a[c];
    i = c;
  }
  if (h->n > 0)
    h->a[i] = x;
  return top;
}

/* ---- the orders ---------------------------------------------------------- */

/* Kahn's algorithm with a heap: `listed` (key NULL: smallest member index
 * first) or `bfs` (key = sorted orders of the predecessors). */
int order_kahn(const gdag *d, bool bfs, int32_t *out) {
  int32_t n = d->n, done = 0;
  int32_t *indeg = malloc(((size_t)n + 1) * sizeof *indeg);
  int32_t *pos = malloc(((size_t)n + 1) * sizeof *pos);
  int32_t *key =
      bfs ? malloc(((size_t)d->pred_off[n] + 1) * sizeof *key) : NULL;
  heap h = {malloc(((size_t)n + 1) * sizeof(int32_t)), 0, d, NULL};
  int rc = -1;
  if (!indeg || !pos || !h.a || (bfs && !key))
    goto done;
  h.key = key;
  for (int32_t t = 0; t < n; t++)
    if ((indeg[t] = d->pred_off[t + 1] - d->pred_off[t]) == 0)
      heap_push(&h, t);
  while (h.n > 0) {
    int32_t t = heap_pop(&h);
    pos[t] = done;
    out[done++] = t;
    for (int32_t j = d->succ_off[t]; j < d->succ_off[t + 1]; j++) {
      int32_t s = d->succ[j];
      if (--indeg[s] > 0)
        continue;
      if (bfs) { /* all predecessors have run: their orders are known */
        int32_t lo = d->pred_off[s], hi = d->pred_off[s + 1];
        for (int32_t k = lo; k < hi;
             k++) { /* insertion sort: lists are short */
          int32_t v = pos[d->pred[k]], m = k;
          for (; m > lo && key[m - 1] > v; m--)
            key[m] = key[m - 1];
          key[m] = v;
        }
      }
      heap_push(&h, s);
    }
  }
  rc = done == n ? 0 : -1;
done:
  free(indeg);
  free(pos);
  free(key);
  free(h.a);
  return rc;
}

/* Where node u runs for lpmf_saving: ctx is a lpmf_at. */
typedef struct lpmf_at {
  const gdag *d;
  const bool *ran;
  int32_t t;
} lpmf_at;

static int lpmf_where(const void *ctx, int32_t u) {
  const lpmf_at *a = ctx;
  int32_t s = a->d->gid[u];
  return s == a->t ? 0 : a->ran[s] ? -1 : 1;
}

/* The bytes in-place takeovers save at group t's step when it runs after
 * the groups in ran[] (the evaluator's rule, model/eval.c). */
static uint64_t lpmf_saving(const gdag *d, const bool *ran, int32_t t) {
  if (!d->g)
    return 0;
  lpmf_at a = {d, ran, t};
  int32_t len;
  const int32_t *grp = fp_plan_group(d->p, t, &len);
  uint64_t s = 0;
  for (int32_t i = 0; i < len; i++)
    s += fp_inplace_node_saving(d->g, grp[i], lpmf_where, &a);
  return s;
}

/* Picks the LPMF choice among the ready groups (Inductor memory.py): the
 * smallest max(live + alloc + workspace - in-place saving, peak so far), then
 * the smallest net growth alloc - to_free, then the smallest member index.
 * Returns its slot. */
static int32_t lpmf_pick(const gdag *d, const int32_t *ready, int32_t n_ready,
                         const uint64_t *to_free, const bool *ran,
                         uint64_t live, uint64_t peak) {
  int32_t best = 0;
  uint64_t bk1 = 0;
  int64_t bk2 = 0;
  for (int32_t i = 0; i < n_ready; i++) {
    int32_t t = ready[i];
    uint64_t now =
        live + d->alloc[t] + (d->ws ? d->ws[t] : 0) - lpmf_saving(d, ran, t);
    uint64_t k1 = now > peak ? now : peak;
    int64_t k2 = (int64_t)d->alloc[t] - (int64_t)to_free[t];
    if (i == 0 || k1 < bk1 || (k1 == bk1 && k2 < bk2) ||
        (k1 == bk1 && k2 == bk2 && d->tie[t] < d->tie[ready[best]])) {
      best = i;
      bk1 = k1;
      bk2 = k2;
    }
  }
  return best;
}

/* After group t ran: items it consumed lose a consumer; when one consumer
 * is left, that group will free the item. */
static void lpmf_release(const gdag *d, int32_t t, int32_t *rem,
                         const bool *ran, uint64_t *to_free) {
  for (int32_t j = d->gitem_off[t]; j < d->gitem_off[t + 1]; j++) {
    int32_t it = d->gitem[j];
    if (--rem[it] != 1)
      continue;
    for (int32_t k = d->cons_off[it]; k < d->cons_off[it + 1]; k++)
      if (!ran[d->cons[k]])
        to_free[d->cons[k]] += d->item_bytes[it];
  }
}

/* Least-peak-memory-first order.  O(groups x ready) like Inductor's. */
int order_lpmf(const gdag *d, int32_t *out) {
  int32_t n = d->n, n_ready = 0;
  size_t sn = (size_t)n + 1;
  int32_t *indeg = malloc(sn * sizeof *indeg),
          *ready = malloc(sn * sizeof *ready);
  int32_t *rem = malloc(((size_t)d->n_items + 1) * sizeof *rem);
  uint64_t *to_free = malloc(sn * sizeof *to_free);
  bool *ran = calloc(sn, sizeof *ran);
  int rc = -1;
  if (!indeg || !ready || !rem || !to_free || !ran)
    goto done;
  for (int32_t t = 0; t < n; t++) {
    to_free[t] = d->dead[t];
    if ((indeg[t] = d->pred_off[t + 1] - d->pred_off[t]) == 0)
      ready[n_ready++] = t;
  }
  for (int32_t it = 0; it < d->n_items; it++)
    if ((rem[it] = d->cons_off[it + 1] - d->cons_off[it]) == 1)
      to_free[d->cons[d->cons_off[it]]] += d->item_bytes[it];
  uint64_t live = d->start_live;
  uint64_t peak = d->start_peak > live ? d->start_peak : live;
  for (int32_t step = 0; step < n; step++) {
    if (n_ready == 0)
      goto done; /* cannot happen on an acyclic DAG */
    int32_t slot = lpmf_pick(d, ready, n_ready, to_free, ran, live, peak);
    int32_t t = ready[slot];
    ready[slot] = ready[--n_ready];
    out[step] = t;
    uint64_t save = lpmf_saving(d, ran, t); /* before t counts as ran */
    ran[t] = true;
    live += d->alloc[t];
    uint64_t at = live - save + (d->ws ? d->ws[t] : 0); /* live at t */
    peak = at > peak ? at : peak;
    live -= to_free[t] < live ? to_free[t] : live;
    for (int32_t j = d->succ_off[t]; j < d->succ_off[t + 1]; j++)
      if (--indeg[d->succ[j]] == 0)
        ready[n_ready++] = d->succ[j];
    lpmf_release(d, t, rem, ran, to_free);
  }
  rc = 0;
done:
  free(indeg);
  free(ready);
  free(rem);
  free(to_free);
  free(ran);
  return rc;
}

/* Sort key of DFS: memory a group touches (allocations + items read),
 * then the smallest member index. */
typedef struct dfs_key {
  uint64_t touched;
  int32_t minidx, t;
} dfs_key;

static int cmp_dfs_key(const void *a, const void *b) {
  const dfs_key *x = a, *y = b;
  if (x->touched != y->touched)
    return x->touched < y->touched ? -1 : 1;
  return (x->minidx > y->minidx) - (x->minidx < y->minidx);
}

static int cmp_int32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

int gdag_postorder(int32_t n, const int32_t *roots, const int32_t *off,
                   const int32_t *adj, int32_t *out) {
  int32_t done = 0;
  int32_t *stack = malloc(((size_t)n + 1) * sizeof *stack);
  int32_t *next = malloc(((size_t)n + 1) * sizeof *next);
  bool *seen = calloc((size_t)n + 1, sizeof *seen);
  int rc = -1;
  if (!stack || !next || !seen)
    goto done;
  for (int32_t r = 0; r < n; r++) {
    int32_t root = roots[r], sp = 0;
    if (seen[root])
      continue;
    seen[root] = true;
    next[root] = off[root];
    stack[sp++] = root;
    while (sp > 0) {
      int32_t t = stack[sp - 1];
      if (next[t] < off[t + 1]) {
        int32_t u = adj[next[t]++];
        if (!seen[u]) {
          seen[u] = true;
          next[u] = off[u];
          stack[sp++] = u;
        }
        continue;
      }
      out[done++] = t;
      sp--;
    }
  }
  rc = done == n ? 0 : -1;
done:
  free(stack);
  free(next);
  free(seen);
  return rc;
}

/* Depth-first order: visit groups by ascending key; before a group, its
 * predecessors, also by ascending key; emit in post-order. */
int order_dfs(const gdag *d, int32_t *out) {
  int32_t n = d->n;
  size_t sn = (size_t)n + 1;
  dfs_key *keys = malloc(sn * sizeof *keys);
  int32_t *rank = malloc(sn * sizeof *rank),
          *byrank = malloc(sn * sizeof *byrank);
  int32_t *preds = malloc(((size_t)d->pred_off[n] + 1) * sizeof *preds);
  int rc = -1;
  if (!keys || !rank || !byrank || !preds)
    goto done;
  for (int32_t t = 0; t < n; t++) {
    keys[t] = (dfs_key){d->alloc[t], d->tie[t], t};
    keys[t].touched += d->dfs_extra ? d->dfs_extra[t] : 0;
    for (int32_t j = d->gitem_off[t]; j < d->gitem_off[t + 1]; j++)
      keys[t].touched += d->item_bytes[d->gitem[j]];
  }
  qsort(keys, (size_t)n, sizeof *keys, cmp_dfs_key);
  for (int32_t r = 0; r < n; r++)
    rank[keys[r].t] = r, byrank[r] = keys[r].t;
  /* predecessor lists in ascending key order */
  for (int32_t j = 0; j < d->pred_off[n]; j++)
    preds[j] = rank[d->pred[j]];
  for (int32_t t = 0; t < n; t++)
    qsort(preds + d->pred_off[t], (size_t)(d->pred_off[t + 1] - d->pred_off[t]),
          sizeof *preds, cmp_int32);
  for (int32_t j = 0; j < d->pred_off[n]; j++)
    preds[j] = byrank[preds[j]];
  rc = gdag_postorder(n, byrank, d->pred_off, preds, out);
done:
  free(keys);
  free(rank);
  free(byrank);
  free(preds);
  return rc;
}
