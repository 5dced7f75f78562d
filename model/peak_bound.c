/*
 * peak_bound.c -- a lower bound on the peak that holds for every legal plan
 * (docs/cost-model.md, "The peak bound", proves each rule).
 *
 * These steps are certain to exist in every plan with nodes:
 *   - step 0: every freeable, non-output input that has a reader is live
 *     from step 0 through its last reader's step;
 *   - step T-1: every produced graph output is live from its write through
 *     the end of the program;
 *   - step(x) for each node x: a buffer b is live at step(x) in every plan
 *     when its lifetime must cover step(x).  For a produced, read, non-output
 *     b with writer w: w precedes-or-is x, x precedes-or-is some reader r
 *     (so step(w) <= step(x) <= last(b)), and b is certainly materialized.
 *     Materialization is certain when some reader of b always runs at a
 *     later step than w, when x always runs later than w, or when some such
 *     covering reader r always runs later than x.
 *   - step(x) again, for a freeable input b no node at or after x reads:
 *     if b is freed before step(x), its readers ran before x, and what
 *     they wrote for nodes at or after x is live at step(x) instead;
 *   - step 0 and step T-1 again: the first group holds a source and the
 *     last a sink, so the cut rule at the cheapest source (sink) adds to
 *     the step-0 (last-step) rule.
 * "Always runs later" (strict[w] below) is derived from the dependency order
 * and the fusion rules: step(u) <= step(v) along every edge u -> v, and two
 * nodes that can never share a group (incompatible kinds or iteration
 * spaces, an extern, an unfusible pair, max_fusion_size 1) are never at the
 * same step.  Hence x is strictly after w when x is a descendant of w and
 * either x cannot share w's group, or some producer u of x (w itself or a
 * descendant of w) is strictly after w or cannot share x's group.
 *
 * Cost: three n x n bit matrices (descendants, ancestors, strict); each
 * buffer's live set in O(n / 64) word operations per reader, plus bit
 * tests where the strict relation leaves it open; past PB_MAX_NODES or
 * PB_MAX_WORK (nodes x (buffers + reads)) only the step-0 and last-step
 * rules apply (still valid, weaker: on a whole-step AdamW graph, the
 * optimizer state alone).
 */
#include <stdlib.h>
#include <string.h>

#include "model/peak_bound.h"

#include "model/args.h"

#include "model/flow.h"
#include "model/peak_work.h"

/* Past these sizes the bit matrices (3 n^2 / 8 bytes) or the bit tests cost
 * more than a bound is worth here.  Most of the work is word-parallel:
 * measured (December 2026) at 0.25 s and 92 MB for a generated
 * 12,000-node transformer (work 4.2e8) and 0.44 s and 132 MB at 16,000
 * nodes (7.5e8), so the work limit admits every graph under the node
 * limit with up to 7.5 buffers and reads a node (whole-step exports have
 * about 4: a 126-layer step, 11.5k nodes, is 4.9e8). */
#define PB_MAX_NODES 16384
#define PB_MAX_WORK 2000000000.0

/* Distinct producers of every node, as CSR arrays.  0, or -1 when out of
 * memory. */
static int build_preds(pb_work *W) {
  const fp_graph *g = W->g;
  size_t reads = 0;
  for (int32_t x = 0; x < W->n; x++)
    reads += (size_t)fp_graph_node(g, x)->n_reads;
  W->pstart = malloc(((size_t)W->n + 1) * sizeof *W->pstart);
  W->pred = malloc((reads + 1) * sizeof *W->pred);
  W->apart = malloc((reads + 1) * sizeof *W->apart);
  int32_t *stamp = malloc(((size_t)W->n + 1) * sizeof *stamp);
  if (!W->pstart || !W->pred || !W->apart || !stamp) {
    free(stamp);
    return -1;
  }
  memset(stamp, 0xff, (size_t)W->n * sizeof *stamp);
  int32_t len = 0;
  for (int32_t x = 0; x < W->n; x++) {
    const fp_node *nd = fp_graph_node(g, x);
    W->pstart[x] = len;
    for (int32_t i = 0; i < nd->n_reads; i++) {
      int32_t u = fp_graph_buffer(g, nd->reads[i].buffer)->writer;
      if (u >= 0 && stamp[u] != x) {
        stamp[u] = x;
        W->apart[len] = !may_share(W, u, x);
        W->pred[len++] = u;
      }
    }
  }
  W->pstart[W->n] = len;
  free(stamp);
  return 0;
}

/* desc rows, from the last node back: the listed order is topological, so
 * every successor of u is listed after u and complete when u is reached. */
static void build_desc(pb_work *W) {
  for (int32_t x = W->n - 1; x >= 0; x--)
    for (int32_t i = W->pstart[x]; i < W->pstart[x + 1]; i++) {
      uint64_t *du = W->desc + (size_t)W->pred[i] * W->words;
      const uint64_t *dx = W->desc + (size_t)x * W->words;
      for (size_t j = (size_t)x / 64; j < W->words; j++) /* all after x */
        du[j] |= dx[j];
      set_bit(W->desc, W->words, W->pred[i], x);
    }
}

/* anc rows, from the first node on (producers are listed first). */
static void build_anc(pb_work *W) {
  for (int32_t x = 0; x < W->n; x++) {
    uint64_t *ax = W->anc + (size_t)x * W->words;
    for (int32_t i = W->pstart[x]; i < W->pstart[x + 1]; i++) {
      const uint64_t *au = W->anc + (size_t)W->pred[i] * W->words;
      for (size_t j = 0; j <= (size_t)W->pred[i] / 64; j++) /* all before */
        ax[j] |= au[j];
      set_bit(W->anc, W->words, x, W->pred[i]);
    }
  }
}

/* strict row of w, over w's descendants in topological order (the rule of
 * the file comment; producers of x are listed before x). */
static void build_strict_row(pb_work *W, int32_t w) {
  const uint64_t *dw = W->desc + (size_t)w * W->words;
  for (size_t j = (size_t)w / 64; j < W->words; j++)
    for (uint64_t m = dw[j]; m; m &= m - 1) {
      int32_t x = (int32_t)(j * 64) + __builtin_ctzll(m);
      bool later = false; /* the producer test first: it needs no lookup */
      for (int32_t i = W->pstart[x]; !later && i < W->pstart[x + 1]; i++) {
        int32_t u = W->pred[i];
        if (u == w)
          later = W->apart[i];
        else if (bit(W->desc, W->words, w, u))
          later = bit(W->strict, W->words, w, u) || W->apart[i];
      }
      if (later || !may_share(W, w, x))
        set_bit(W->strict, W->words, w, x);
    }
}

/* u == v, or a path u -> ... -> v. */
static bool precedes_or_is(const pb_work *W, int32_t u, int32_t v) {
  return u == v || bit(W->desc, W->words, u, v);
}

/* Whether buffer b is live at step(x) in every plan (file comment). */
static bool live_at(const pb_work *W, const fp_buffer *buf, int32_t x) {
  if (buf->input) { /* resident ones are counted apart */
    if (!buf->freeable || buf->output)
      return false;
    for (int32_t i = 0; i < buf->n_readers; i++)
      if (precedes_or_is(W, x, buf->readers[i]))
        return true;
    return false;
  }
  int32_t w = buf->writer;
  if (w < 0 || !precedes_or_is(W, w, x))
    return false;
  if (buf->output)
    return true;
  if (buf->n_readers == 0)
    return w == x;
  bool covered = false, certain = w != x && bit(W->strict, W->words, w, x);
  for (int32_t i = 0; i < buf->n_readers; i++) {
    int32_t r = buf->readers[i];
    certain |= bit(W->strict, W->words, w, r);
    if (precedes_or_is(W, x, r)) {
      covered = true;
      certain |= r != x && bit(W->strict, W->words, x, r);
    }
  }
  return covered && certain;
}

/* Whether some reader of buf is always later than x. */
static bool later_reader(const pb_work *W, const fp_buffer *buf, int32_t x) {
  for (int32_t i = 0; i < buf->n_readers; i++)
    if (bit(W->strict, W->words, x, buf->readers[i]))
      return true;
  return false;
}

/* The nodes x at whose step buf is live in every plan (exactly live_at's
 * answers), as the bits of row: words [*lo, *hi) are written, the others
 * are not touched; *lo == *hi when the set is empty.  Word-parallel: for
 * a produced, read, non-output buffer with writer w and readers R it is
 * ({w} + desc(w)) & (R + anc(R)), less, when no reader is always later
 * than w, the x that w is not always before and no reader always after
 * (those are tested one by one). */
static void live_set(const pb_work *W, const fp_buffer *buf, uint64_t *row,
                     size_t *lo, size_t *hi) {
  int32_t w = buf->writer, last = -1;
  *lo = *hi = 0;
  if (buf->input ? !buf->freeable || buf->output : w < 0)
    return;
  for (int32_t i = 0; i < buf->n_readers; i++)
    last = buf->readers[i] > last ? buf->readers[i] : last;
  if (!buf->input && (buf->output || last < 0)) { /* from w on, or w only */
    *lo = (size_t)w / 64;
    *hi = buf->output ? W->words : *lo + 1;
    const uint64_t *dw = W->desc + (size_t)w * W->words;
    for (size_t j = *lo; j < *hi; j++)
      row[j] = buf->output ? dw[j] : 0;
    row[*lo] |= (uint64_t)1 << (w % 64);
    return;
  }
  if (last < 0 || last < w)
    return; /* an input nobody reads (a reader always follows its writer) */
  *lo = buf->input ? 0 : (size_t)w / 64;
  *hi = (size_t)last / 64 + 1;
  memset(row + *lo, 0, (*hi - *lo) * sizeof *row);
  for (int32_t i = 0; i < buf->n_readers; i++) { /* at or before a reader */
    int32_t r = buf->readers[i];
    const uint64_t *ar = W->anc + (size_t)r * W->words;
    for (size_t j = *lo; j <= (size_t)r / 64; j++)
      row[j] |= ar[j];
    row[r / 64] |= (uint64_t)1 << (r % 64);
  }
  if (buf->input)
    return;
  const uint64_t *dw = W->desc + (size_t)w * W->words;
  for (size_t j = *lo; j < *hi; j++) /* and at or after the writer */
    row[j] &= dw[j] | (j == (size_t)w / 64 ? (uint64_t)1 << (w % 64) : 0);
  if (later_reader(W, buf, w))
    return; /* always materialized */
  const uint64_t *sw = W->strict + (size_t)w * W->words;
  for (size_t j = *lo; j < *hi; j++)
    for (uint64_t m = row[j] & ~sw[j]; m; m &= m - 1) {
      int32_t x = (int32_t)(j * 64) + __builtin_ctzll(m);
      if (!later_reader(W, buf, x))
        row[j] &= ~((uint64_t)1 << (x % 64));
    }
}

/* Per node x, the bytes live at step(x) in every plan: of all buffers,
 * of the produced ones, and of the non-outputs. */
typedef struct live_sums {
  uint64_t *all, *made, *kept;
} live_sums;

static void live_sums_free(live_sums *L) {
  free(L->all);
  free(L->made);
  free(L->kept);
}

/* Fills L from every buffer's live set.  0, or -1 out of memory (free L
 * with live_sums_free all the same). */
static int live_sums_build(const pb_work *W, live_sums *L) {
  size_t n = (size_t)W->n + 1;
  uint64_t *row = malloc((W->words + 1) * sizeof *row);
  L->all = calloc(n, sizeof *L->all);
  L->made = calloc(n, sizeof *L->made);
  L->kept = calloc(n, sizeof *L->kept);
  if (!row || !L->all || !L->made || !L->kept) {
    free(row);
    return -1;
  }
  for (int32_t b = 0; b < fp_graph_buffer_count(W->g); b++) {
    const fp_buffer *buf = fp_graph_buffer(W->g, b);
    size_t lo, hi;
    live_set(W, buf, row, &lo, &hi);
    for (size_t j = lo; j < hi; j++)
      for (uint64_t m = row[j]; m; m &= m - 1) {
        size_t x = j * 64 + (size_t)__builtin_ctzll(m);
        L->all[x] += buf->bytes;
        L->made[x] += buf->input ? 0 : buf->bytes;
        L->kept[x] += buf->output ? 0 : buf->bytes;
      }
  }
  free(row);
  return 0;
}

/* The step-0 and last-step rules. */
static uint64_t end_steps_bound(const fp_graph *g) {
  uint64_t first = 0, last = 0;
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++) {
    const fp_buffer *buf = fp_graph_buffer(g, b);
    if (buf->input && buf->freeable && !buf->output && buf->n_readers > 0)
      first += buf->bytes;
    else if (!buf->input && buf->writer >= 0 && buf->output)
      last += buf->bytes;
  }
  return first > last ? first : last;
}

/* Whether x writes no buffer that some node reads (a sink). */
static bool is_sink(const fp_graph *g, int32_t x) {
  const fp_node *nd = fp_graph_node(g, x);
  for (int32_t i = 0; i < nd->n_writes; i++)
    if (fp_graph_buffer(g, nd->writes[i])->n_readers > 0)
      return false;
  return true;
}

/* The end-step cut rules.  The first group holds a node with no producer
 * (a source s: its producers would have to run earlier), and the last
 * group a sink t (its consumers would have to run later).  So live(0) is
 * at least every freeable input plus what is live at step(s) anyway, for
 * the cheapest source s; and live(T-1) every produced output plus what is
 * live at step(t), for the cheapest sink t.  Each sum counts a buffer
 * once (inputs and outputs apart). */
static uint64_t end_cut_bound(const pb_work *W, uint64_t resident,
                              const live_sums *L) {
  uint64_t inputs = 0, outputs = 0; /* freeable read inputs; made outputs */
  for (int32_t b = 0; b < fp_graph_buffer_count(W->g); b++) {
    const fp_buffer *buf = fp_graph_buffer(W->g, b);
    if (buf->input && buf->freeable && !buf->output && buf->n_readers > 0)
      inputs += buf->bytes;
    if (!buf->input && buf->writer >= 0 && buf->output)
      outputs += buf->bytes;
  }
  uint64_t first = UINT64_MAX, last = UINT64_MAX;
  for (int32_t x = 0; x < W->n; x++) {
    uint64_t at_first = inputs + L->made[x], at_last = outputs + L->kept[x];
    if (W->pstart[x] == W->pstart[x + 1] && at_first < first) /* a source */
      first = at_first;
    if (is_sink(W->g, x) && at_last < last)
      last = at_last;
  }
  first = first == UINT64_MAX ? 0 : first;
  last = last == UINT64_MAX ? 0 : last;
  return resident + (first > last ? first : last);
}

static void work_free(pb_work *W) {
  free(W->desc);
  free(W->anc);
  free(W->strict);
  free(W->pstart);
  free(W->pred);
  free(W->apart);
}

/* What an input b that no node at or after x reads (so it may be freed
 * before step(x)) forces at step(x) all the same.  If some reader of b
 * runs at step(x) or later, b is live there.  Otherwise every reader r
 * ran earlier, and a buffer o that r writes for a node y with x
 * precedes-or-is y is materialized (r and y are at different steps) and
 * live from step(r) < step(x) through step(y) >= step(x).  So live(x)
 * holds at least min(bytes(b), the bytes of one reader's such o).  Only
 * readers r that do not precede x are used (the cut rule may count the o
 * of those that do), and each o serves one input (claim[o] == x). */
static uint64_t freed_input_floor(const pb_work *W, const fp_buffer *buf,
                                  int32_t x, int32_t *claim) {
  uint64_t best = 0;
  int32_t best_r = -1;
  for (int32_t i = 0; i < buf->n_readers; i++) {
    int32_t r = buf->readers[i];
    if (precedes_or_is(W, r, x))
      continue;
    const fp_node *nd = fp_graph_node(W->g, r);
    uint64_t sum = 0;
    for (int32_t j = 0; j < nd->n_writes; j++) {
      const fp_buffer *o = fp_graph_buffer(W->g, nd->writes[j]);
      bool needed = o->output;
      for (int32_t k = 0; !needed && k < o->n_readers; k++)
        needed = precedes_or_is(W, x, o->readers[k]);
      sum += needed && claim[nd->writes[j]] != x ? o->bytes : 0;
    }
    if (sum > best) {
      best = sum;
      best_r = r;
    }
  }
  if (best_r < 0)
    return 0;
  const fp_node *nd = fp_graph_node(W->g, best_r);
  for (int32_t j = 0; j < nd->n_writes; j++)
    claim[nd->writes[j]] = x; /* claimed whole: never counted twice */
  return best < buf->bytes ? best : buf->bytes;
}

/* Sets up W for graph g (fusion-size limit k, 0: the graph's): the
 * producer lists and the desc and strict matrices.  FP_ENOMEM (free W
 * with work_free all the same). */
static fp_status work_build(pb_work *W, const fp_graph *g, int32_t k,
                            fp_error *err) {
  memset(W, 0, sizeof *W);
  W->g = g;
  W->n = fp_graph_node_count(g);
  W->k = fp_graph_fusion_cap(g, k);
  W->words = ((size_t)W->n + 63) / 64;
  size_t cells = (size_t)W->n * W->words;
  W->desc = calloc(cells + 1, sizeof *W->desc);
  W->anc = calloc(cells + 1, sizeof *W->anc);
  W->strict = calloc(cells + 1, sizeof *W->strict);
  if (!W->desc || !W->anc || !W->strict || build_preds(W) != 0)
    return fp_error_set(err, FP_ENOMEM, "out of memory (peak bound)");
  build_desc(W);
  build_anc(W);
  for (int32_t w = 0; w < W->n; w++)
    build_strict_row(W, w);
  return FP_OK;
}

/* ---- the min-cut step bound -------------------------------------------
 *
 * Fix a set G of nodes that share one group, at step s.  Every other node
 * runs before s or after it (a node in G's group counts as before unless
 * it descends from G, then as after: either only lowers what is live at
 * s, see docs/cost-model.md).  Ancestors of G are before, descendants
 * after; the rest ("free") may go either way, as long as the nodes before
 * s are closed under producers.  What is live at s is then a function of
 * that choice: an output counts when its writer is at or before s; a
 * freeable input when some reader is at or after s; another buffer when
 * its writer is at or before s, some reader at or after s, and it is
 * certainly materialized (a reader always later than the writer, the
 * writer certainly before s, or that reader certainly after s; a node
 * that cannot share a group with a member of G never runs at s, so its
 * side is strict).  The
 * cheapest choice is a maximum-closure problem, solved as a minimum cut:
 * profit c_b for a buffer whose counting readers all run before s (it is
 * then freed), cost a_v for the buffers a free node v would make live. */

enum { CLS_FREE, CLS_BEFORE, CLS_GROUP, CLS_AFTER };

typedef struct cut_work {
  const pb_work *W;
  const int32_t *grp; /* G's nodes */
  int32_t ng;
  int32_t forced;    /* a free node forced to one side (far pairs), or -1 */
  int8_t forced_cls; /* CLS_BEFORE or CLS_AFTER */
  bool forced_apart; /* the forced node and its producers never at s */
  int8_t *cls;       /* node -> CLS_* */
  bool *apart;       /* node -> never in G's group (never at step s) */
  int32_t *vid;      /* free node -> flow vertex */
  int64_t *a;        /* free node -> cost */
  int32_t *items;    /* readers of one reward item, scratch */
  uint64_t fixed;    /* bytes live whatever the free nodes do */
  int64_t rewards;   /* sum of the reward items' profits */
  fp_flow *f;
  int32_t nv;         /* flow vertices so far */
  const int8_t *side; /* node -> PB_SIDE_*, or NULL (pb_cut_bound) */
} cut_work;

/* Whether some node of G is always strictly after v (dir 0) or always
 * strictly before v (dir 1). */
static bool strict_vs_group(const cut_work *C, int32_t v, int dir) {
  for (int32_t i = 0; i < C->ng; i++) {
    int32_t g = C->grp[i];
    if (dir == 0 ? bit(C->W->strict, C->W->words, v, g)
                 : bit(C->W->strict, C->W->words, g, v))
      return true;
  }
  return false;
}

/* Places the free nodes as C->side says (the caller vouches for it). */
static void cut_sides(cut_work *C) {
  for (int32_t v = 0; C->side && v < C->W->n; v++) {
    if (C->cls[v] == CLS_FREE && (C->side[v] & PB_SIDE_BEFORE))
      C->cls[v] = CLS_BEFORE;
    else if (C->cls[v] == CLS_FREE && (C->side[v] & PB_SIDE_AFTER))
      C->cls[v] = CLS_AFTER;
    if (C->cls[v] != CLS_GROUP && (C->side[v] & PB_SIDE_NEVER))
      C->apart[v] = true;
  }
}

/* Classifies every node against G. */
static void cut_classify(cut_work *C) {
  const pb_work *W = C->W;
  for (int32_t v = 0; v < W->n; v++) {
    int8_t c = CLS_FREE;
    for (int32_t i = 0; i < C->ng && c != CLS_GROUP; i++) {
      int32_t g = C->grp[i];
      if (v == g)
        c = CLS_GROUP;
      else if (bit(W->desc, W->words, v, g))
        c = CLS_BEFORE;
      else if (c == CLS_FREE && bit(W->desc, W->words, g, v))
        c = CLS_AFTER;
    }
    C->cls[v] = c;
    /* A node that cannot share a group with some member of G never runs
     * at step s: placed before, it runs strictly before s; after,
     * strictly after. */
    bool apart = false;
    for (int32_t i = 0; i < C->ng && !apart && c != CLS_GROUP; i++)
      apart = !may_share(W, v, C->grp[i]);
    C->apart[v] = apart;
  }
  cut_sides(C);
  /* A node forced before s brings its producers along, one forced after
   * its consumers (the nodes before s are closed under producers). */
  int32_t y = C->forced;
  if (y < 0 || C->cls[y] != CLS_FREE)
    return;
  C->cls[y] = C->forced_cls;
  C->apart[y] |= C->forced_apart;
  for (int32_t v = 0; v < W->n; v++)
    if (bit(C->forced_cls == CLS_BEFORE ? W->anc : W->desc, W->words, y, v)) {
      C->cls[v] = C->cls[v] == CLS_FREE ? C->forced_cls : C->cls[v];
      C->apart[v] |= C->forced_apart; /* runs no later than y */
    }
}

/* Adds bytes to what writer w makes live: fixed when w is at or before s
 * for sure, a cost of w when it is free. */
static void cut_charge(cut_work *C, int32_t w, uint64_t bytes) {
  if (C->cls[w] == CLS_BEFORE || C->cls[w] == CLS_GROUP)
    C->fixed += bytes;
  else if (C->cls[w] == CLS_FREE)
    C->a[w] += (int64_t)bytes;
}

/* A reward item: b (bytes) stops counting when the n free readers in
 * C->items all run before s.  0, or -1 out of memory. */
static int cut_reward(cut_work *C, uint64_t bytes, int32_t n) {
  int32_t z = C->nv++;
  C->rewards += (int64_t)bytes;
  if (fp_flow_add_edge(C->f, 0, z, (int64_t)bytes) != 0)
    return -1;
  for (int32_t i = 0; i < n; i++)
    if (fp_flow_add_edge(C->f, z, C->vid[C->items[i]], FP_FLOW_INF) != 0)
      return -1;
  return 0;
}

/* Which readers of a produced, read, non-output buffer count (see the
 * comment above): all when it is always materialized or its writer is
 * certainly before s, else those certainly after s.  Collects the free
 * ones into C->items; returns their number, or -1 when one that counts
 * is surely at or after s (b is then live whenever w is at or before s). */
static int32_t cut_counting_readers(cut_work *C, const fp_buffer *buf) {
  const pb_work *W = C->W;
  int32_t w = buf->writer, n = 0;
  bool all = strict_vs_group(C, w, 0) || C->apart[w];
  for (int32_t i = 0; i < buf->n_readers && !all; i++)
    all = bit(W->strict, W->words, w, buf->readers[i]);
  for (int32_t i = 0; i < buf->n_readers; i++) {
    int32_t r = buf->readers[i];
    if (!all && !strict_vs_group(C, r, 1) && !C->apart[r])
      continue;
    if (C->cls[r] == CLS_GROUP || C->cls[r] == CLS_AFTER)
      return -1;
    if (C->cls[r] == CLS_FREE)
      C->items[n++] = r;
  }
  return n;
}

/* Charges buffer b to the network.  0, or -1 out of memory. */
static int cut_buffer(cut_work *C, const fp_buffer *buf) {
  if (buf->input) {
    if (!buf->freeable || buf->output || buf->n_readers == 0)
      return 0; /* resident, or never live */
    int32_t n = 0;
    for (int32_t i = 0; i < buf->n_readers; i++) {
      int32_t r = buf->readers[i];
      if (C->cls[r] == CLS_GROUP || C->cls[r] == CLS_AFTER) {
        C->fixed += buf->bytes;
        return 0;
      }
      if (C->cls[r] == CLS_FREE)
        C->items[n++] = r;
    }
    if (n == 0)
      return 0; /* every reader before s: freed by then */
    C->fixed += buf->bytes;
    return cut_reward(C, buf->bytes, n);
  }
  int32_t w = buf->writer;
  if (w < 0 || C->cls[w] == CLS_AFTER)
    return 0;
  if (buf->output || buf->n_readers == 0) {
    if (buf->output || C->cls[w] == CLS_GROUP)
      cut_charge(C, w, buf->bytes);
    return 0;
  }
  int32_t n = cut_counting_readers(C, buf);
  if (n != 0)
    cut_charge(C, w, buf->bytes);
  return n > 0 ? cut_reward(C, buf->bytes, n) : 0;
}

/* The closure edges (a free node before s needs its free producers
 * before s) and the costs.  0, or -1 out of memory. */
static int cut_closure(cut_work *C) {
  const pb_work *W = C->W;
  for (int32_t v = 0; v < W->n; v++) {
    if (C->cls[v] != CLS_FREE)
      continue;
    for (int32_t i = W->pstart[v]; i < W->pstart[v + 1]; i++) {
      int32_t u = W->pred[i];
      if (C->cls[u] == CLS_FREE &&
          fp_flow_add_edge(C->f, C->vid[v], C->vid[u], FP_FLOW_INF) != 0)
        return -1;
    }
    if (C->a[v] > 0 && fp_flow_add_edge(C->f, C->vid[v], 1, C->a[v]) != 0)
      return -1;
  }
  return 0;
}

static bool inplace_may_apply(const fp_graph *g, fp_inplace pr);

/* Keeps in C->items[0..*n) only the nodes that read buffer in. */
static void cut_keep_readers(cut_work *C, const fp_buffer *in, int32_t *n) {
  int32_t m = 0;
  for (int32_t i = 0; i < *n; i++)
    for (int32_t r = 0; r < in->n_readers; r++)
      if (in->readers[r] == C->items[i]) {
        C->items[m++] = C->items[i];
        break;
      }
  *n = m;
}

/* How reader r of an in-place input bears on a takeover at s: -1 when it
 * always runs after s (the input outlives s: no takeover there), 1 when
 * it is in G or descends from a member (the cut may count the input),
 * else 0. */
static int cut_reader_side(const cut_work *C, int32_t r) {
  const pb_work *W = C->W;
  if (strict_vs_group(C, r, 1) ||
      (C->forced >= 0 && C->forced_cls == CLS_AFTER &&
       (r == C->forced || bit(W->desc, W->words, C->forced, r))))
    return -1;
  for (int32_t i = 0; i < C->ng; i++)
    if (r == C->grp[i] || bit(W->desc, W->words, C->grp[i], r))
      return 1;
  return 0;
}

/* The takeover refund of buffer o, written by node w at s: o's bytes come
 * off the count when the free readers of the input i of each pair (i, o)
 * of w that may apply at s all run before s (a reward item).  A pair
 * applies at s only where i dies there: no reader of i always runs after
 * s, the free ones run before s or at it (placed before), and a member
 * of G that reads i is a fused reader of the pair.  Only pairs
 * whose i the cut may count (a reader in G or descending from it) are
 * refunded: otherwise i, live at s with o's bytes, is not counted, which
 * makes up for o.  The readers common to the refunded pairs are before
 * whenever one applies, so each takeover is refunded, once (o takes over
 * one storage).  0, or -1 out of memory. */
static int cut_refund(cut_work *C, int32_t w, int32_t o) {
  const fp_graph *g = C->W->g;
  int32_t m, n = 0;
  bool any = false;
  const fp_inplace *pr = fp_graph_inplace(g, w, &m);
  for (int32_t k = 0; k < m; k++) {
    const fp_buffer *in = fp_graph_buffer(g, pr[k].read);
    bool ok = pr[k].write == o && inplace_may_apply(g, pr[k]), counted = false;
    for (int32_t r = 0; r < in->n_readers && ok; r++) {
      int32_t rd = in->readers[r];
      int side = cut_reader_side(C, rd);
      /* a member of G that reads i at s stops the takeover unless the
       * pair lets it (a fused reader) */
      ok = side >= 0 && (rd == w || C->cls[rd] != CLS_GROUP ||
                         fp_graph_inplace_fused_reader(g, w, k, rd));
      counted |= side > 0;
    }
    if (!ok || !counted)
      continue;
    if (any)
      cut_keep_readers(C, in, &n);
    else
      for (int32_t r = 0; r < in->n_readers; r++)
        if (C->cls[in->readers[r]] == CLS_FREE)
          C->items[n++] = in->readers[r];
    any = true;
  }
  return any ? cut_reward(C, fp_graph_buffer(g, o)->bytes, n) : 0;
}

/* The refunds of every buffer a node of takers (those that may run at s)
 * writes through an in-place pair: a takeover saves its output's bytes
 * at its writer's step and nowhere else, so the least count less the
 * refunds is at most what is live at s after takeovers.  0, or -1 out of
 * memory. */
static int cut_refunds(cut_work *C, const uint8_t *takers) {
  for (int32_t w = 0; w < C->W->n; w++) {
    int32_t m;
    const fp_inplace *pr = fp_graph_inplace(C->W->g, w, &m);
    for (int32_t k = 0; k < m && takers[w]; k++) {
      bool seen = false; /* each output once */
      for (int32_t j = 0; j < k && !seen; j++)
        seen = pr[j].write == pr[k].write;
      if (!seen && cut_refund(C, w, pr[k].write) != 0)
        return -1;
    }
  }
  return 0;
}

/* A node forced to one side of the step (far pairs): at or before it, or
 * strictly after it; node -1 for none.  takers, when set, adds the
 * refunds of the takeovers at the step (cut_refunds); tie (node -> class,
 * or NULL) keeps the free nodes of a class on one side; out_side, when
 * set, gets the placement (pb_cut_bound). */
typedef struct cut_force {
  int32_t node;
  bool late;
  bool strict;           /* before: strictly before the step, with its
                            producers */
  const uint8_t *takers; /* per node: its takeovers may save at the step
                            (cut_refunds; NULL: none) */
  const int32_t *tie;
  int8_t *out_side;
} cut_force;

static const cut_force no_force = {-1, false, false, NULL, NULL, NULL};

/* The edges of the tie classes: both ways between each free node and the
 * first free node of its class (C->items, free again after the buffers
 * and refunds, maps a class to that node).  Classes that hold a node on
 * one side are closed by the caller (peak_group.c), so these are all the
 * ties add.  0, or -1 out of memory. */
static int cut_ties(cut_work *C, const int32_t *tie) {
  for (int32_t v = 0; tie && v < C->W->n; v++)
    C->items[tie[v]] = -1;
  for (int32_t v = 0; tie && v < C->W->n; v++) {
    if (C->cls[v] != CLS_FREE)
      continue;
    int32_t r = C->items[tie[v]];
    if (r < 0)
      C->items[tie[v]] = v;
    else if (fp_flow_add_edge(C->f, C->vid[v], C->vid[r], FP_FLOW_INF) != 0 ||
             fp_flow_add_edge(C->f, C->vid[r], C->vid[v], FP_FLOW_INF) != 0)
      return -1;
  }
  return 0;
}

/* The placement of the last cut into side[]: FP_PEAK_BEFORE, _IN, _AFTER. */
static void cut_placement(const cut_work *C, int8_t *side) {
  for (int32_t v = 0; v < C->W->n; v++) {
    int8_t c = C->cls[v];
    if (c == CLS_FREE)
      c = fp_flow_source_side(C->f, C->vid[v]) ? CLS_BEFORE : CLS_AFTER;
    side[v] = c == CLS_GROUP    ? FP_PEAK_IN
              : c == CLS_BEFORE ? FP_PEAK_BEFORE
                                : FP_PEAK_AFTER;
  }
}

/* Resident bytes plus the least that is live at the step of G's group
 * over every placement of the other nodes: a bound on the peak of every
 * plan that puts G (a convex set of nodes) in one group and, when
 * force.node is a node neither an ancestor nor a descendant of G, runs it
 * at or before that step (strictly before it, with its producers, when
 * force.strict; strictly after it when force.late),
 * places the nodes as side[] says (pb_cut_bound; NULL for none) and keeps
 * the free nodes of each of force's tie classes on one side (UINT64_MAX
 * when no placement meets them).  With force.takers, less the takeover
 * refunds of those nodes (cut_refunds).  FP_ENOMEM. */
static fp_status cut_bound_placed(const pb_work *W, const int32_t *grp,
                                  int32_t ng, cut_force force,
                                  const int8_t *side, uint64_t resident,
                                  uint64_t *out, double *work, fp_error *err) {
  int32_t n = W->n, nb = fp_graph_buffer_count(W->g);
  cut_work C;
  memset(&C, 0, sizeof C);
  C.W = W, C.grp = grp, C.ng = ng, C.forced = force.node, C.side = side;
  C.forced_cls = force.late ? CLS_AFTER : CLS_BEFORE;
  C.forced_apart = force.strict && !force.late;
  C.cls = malloc((size_t)n + 1);
  C.apart = malloc(((size_t)n + 1) * sizeof *C.apart);
  C.vid = malloc(((size_t)n + 1) * sizeof *C.vid);
  C.a = calloc((size_t)n + 1, sizeof *C.a);
  C.items = malloc(((size_t)n + 1) * sizeof *C.items);
  /* source, sink, a vertex per free node and per reward item: at most one
   * a buffer, and with takers one more a refunded output */
  C.f = fp_flow_create(2 + n + nb + (force.takers ? nb : 0));
  fp_status st = FP_OK;
  if (!C.cls || !C.apart || !C.vid || !C.a || !C.items || !C.f)
    goto oom;
  cut_classify(&C);
  C.nv = 2; /* 0: source, 1: sink */
  for (int32_t v = 0; v < n; v++)
    C.vid[v] = C.cls[v] == CLS_FREE ? C.nv++ : -1;
  for (int32_t b = 0; b < nb; b++)
    if (cut_buffer(&C, fp_graph_buffer(W->g, b)) != 0)
      goto oom;
  if ((force.takers && cut_refunds(&C, force.takers) != 0) ||
      cut_closure(&C) != 0 || cut_ties(&C, force.tie) != 0)
    goto oom;
  int64_t flow = fp_flow_max(C.f, 0, 1);
  *work += (double)(n + nb) * ng + (double)fp_flow_work(C.f);
  if (flow >= FP_FLOW_INF) { /* no placement meets the ties */
    *out = UINT64_MAX;
    goto done;
  }
  if (force.out_side)
    cut_placement(&C, force.out_side);
  /* fixed - (rewards - cut): the least live bytes, never negative */
  int64_t least = (int64_t)C.fixed - C.rewards + flow;
  /* G's workspaces are live at its step too, beside the least live. */
  *out = resident + (uint64_t)(least > 0 ? least : 0) +
         fp_graph_group_workspace(W->g, grp, ng);
  goto done;
oom:
  st = fp_error_set(err, FP_ENOMEM, "out of memory (peak bound)");
done:
  free(C.cls);
  free(C.apart);
  free(C.vid);
  free(C.a);
  free(C.items);
  fp_flow_destroy(C.f);
  return st;
}

/* cut_bound_placed with no side[]. */
static fp_status step_cut_bound(const pb_work *W, const int32_t *grp,
                                int32_t ng, cut_force force, uint64_t resident,
                                uint64_t *out, double *work, fp_error *err) {
  return cut_bound_placed(W, grp, ng, force, NULL, resident, out, work, err);
}

/* Buffers plus reads: the items of every node's network. */
static double graph_items(const fp_graph *g) {
  double items = fp_graph_buffer_count(g);
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++)
    items += fp_graph_buffer(g, b)->n_readers;
  return items;
}

/* nodes x (nodes + buffers + reads): what one pass over every node's
 * network costs to build. */
static double graph_size(const fp_graph *g) {
  double n = fp_graph_node_count(g);
  return n * (n + graph_items(g));
}

/* Descending figure, then ascending node (a total order: deterministic). */
static int cmp_node_val(const void *a, const void *b) {
  const node_val *x = a, *y = b;
  if (x->val != y->val)
    return x->val > y->val ? -1 : 1;
  return x->node < y->node ? -1 : (x->node > y->node);
}

void pb_group_takers(const pb_work *W, const int32_t *grp, int32_t ng,
                     int32_t gone, uint8_t *takers) {
  for (int32_t w = 0; w < W->n; w++) {
    bool member = false, at = true;
    for (int32_t i = 0; i < ng; i++) {
      member |= w == grp[i];
      at &= w == grp[i] || pb_may_join(W, w, grp[i]);
    }
    takers[w] =
        member ||
        (at && (gone < 0 || (w != gone && !bit(W->anc, W->words, gone, w))));
  }
}

/* The min cut at step(x) with each takeover refunded where it may apply
 * (cut_refunds) instead of x's whole in-place cap: the takers are x and
 * the nodes that may join its group (the only ones that run at its step).
 * The cap gives up every saving any group at the step could make; the
 * refunds only those the cut's own placement allows (mixer_b16_224.fwd:
 * the bound rises from 7,720,247,392 to 7,758,380,128 bytes).  *s is
 * raised; takers is scratch of n bytes.  FP_ENOMEM. */
static fp_status refunded_cut(const pb_work *W, int32_t x, uint64_t resident,
                              uint8_t *takers, uint64_t *s, double *work,
                              fp_error *err) {
  pb_group_takers(W, &x, 1, -1, takers);
  cut_force f = no_force;
  f.takers = takers;
  uint64_t r = 0;
  fp_status st = step_cut_bound(W, &x, 1, f, resident, &r, work, err);
  *s = st == FP_OK && r > *s ? r : *s;
  return st;
}

static bool refunds_on = true;

void fp_peak_test_refunds(int on) {
  refunds_on = on != 0;
}

/* The min-cut rule at the nodes with the highest cut-rule figures first,
 * while its work stays within PB_CUT_BUDGET (each cut raises only its own
 * node's figure, and the peak is where the figures are highest; a budget
 * in work, not time, keeps the bound deterministic).  vals[] is sorted
 * here.  *out is raised.  FP_ENOMEM. */
static fp_status min_cut_rule(pb_work *W, uint64_t resident, node_val *vals,
                              const uint64_t *capx, uint64_t *out,
                              fp_error *err) {
  qsort(vals, (size_t)W->n, sizeof *vals, cmp_node_val);
  uint8_t *takers = calloc((size_t)W->n + 1, 1);
  if (!takers)
    return fp_error_set(err, FP_ENOMEM, "out of memory (peak bound)");
  double work = 0;
  fp_status st = FP_OK;
  for (int32_t i = 0; st == FP_OK && i < W->n && work < PB_CUT_BUDGET; i++) {
    uint64_t s;
    int32_t x = vals[i].node;
    st = step_cut_bound(W, &x, 1, no_force, resident, &s, &work, err);
    s = pb_sub_cap(s, capx[x]);
    if (st == FP_OK && capx[x] > 0 && refunds_on)
      st = refunded_cut(W, x, resident, takers, &s, &work, err);
    *out = st == FP_OK && s > *out ? s : *out;
  }
  free(takers);
  return st;
}

/* The per-node figures into vals[x]: what is live at step(x) in every
 * plan, plus the freed-input floors.  The inputs are taken in index order
 * at each x, as claim[] requires.  0, or -1 out of memory. */
static int node_figures(const pb_work *W, uint64_t resident, const live_sums *L,
                        node_val *vals) {
  int32_t nb = fp_graph_buffer_count(W->g), nf = 0;
  int32_t *claim = malloc(((size_t)nb + 1) * sizeof *claim);
  int32_t *freed = malloc(((size_t)nb + 1) * sizeof *freed);
  if (!claim || !freed) {
    free(claim);
    free(freed);
    return -1;
  }
  memset(claim, 0xff, ((size_t)nb + 1) * sizeof *claim);
  for (int32_t b = 0; b < nb; b++) {
    const fp_buffer *buf = fp_graph_buffer(W->g, b);
    if (buf->input && buf->freeable && !buf->output && buf->n_readers > 0)
      freed[nf++] = b; /* may be freed before some step */
  }
  for (int32_t x = 0; x < W->n; x++) {
    /* x's workspace is live at step(x) in every plan. */
    uint64_t s = resident + L->all[x] + fp_graph_node(W->g, x)->workspace;
    for (int32_t i = 0; i < nf; i++) {
      const fp_buffer *buf = fp_graph_buffer(W->g, freed[i]);
      if (!live_at(W, buf, x))
        s += freed_input_floor(W, buf, x, claim);
    }
    vals[x].val = s;
    vals[x].node = x;
  }
  free(claim);
  free(freed);
  return 0;
}

/* The per-node rule over every node, then the min cuts and the end-step
 * cut rules, each figure less what in-place takeovers may save at its
 * step (capx[x] at step(x), `global` at the end steps); *out is raised
 * to the best. */
static fp_status node_rule(pb_work *W, uint64_t resident, const uint64_t *capx,
                           uint64_t global, uint64_t *out, fp_error *err) {
  live_sums L = {0};
  node_val *vals = malloc(((size_t)W->n + 1) * sizeof *vals);
  fp_status st = FP_OK;
  if (!vals || live_sums_build(W, &L) != 0 ||
      node_figures(W, resident, &L, vals) != 0) {
    st = fp_error_set(err, FP_ENOMEM, "out of memory (peak bound)");
    goto done;
  }
  for (int32_t x = 0; x < W->n; x++) {
    vals[x].val = pb_sub_cap(vals[x].val, capx[x]);
    *out = vals[x].val > *out ? vals[x].val : *out;
  }
  uint64_t ends = pb_sub_cap(end_cut_bound(W, resident, &L), global);
  *out = ends > *out ? ends : *out;
  if (graph_size(W->g) <= PB_MAX_CUT_SIZE)
    st = min_cut_rule(W, resident, vals, capx, out, err);
done:
  free(vals);
  live_sums_free(&L);
  return st;
}

/* Whether the per-node rule fits the size limits above. */
static bool node_rule_affordable(const fp_graph *g) {
  double n = fp_graph_node_count(g);
  return n <= PB_MAX_NODES && n * graph_items(g) <= PB_MAX_WORK;
}

/* Whether pair pr of some node may ever apply: its input i must be memory
 * that dies at the step (a freeable non-output input, or a produced
 * non-output buffer); an output or a resident input never does (the
 * evaluator's first condition, docs/cost-model.md, "In-place kernels"). */
static bool inplace_may_apply(const fp_graph *g, fp_inplace pr) {
  const fp_buffer *i = fp_graph_buffer(g, pr.read);
  return !i->output && (!i->input || i->freeable);
}

/* Node v's most in-place saving: the bytes of the distinct buffers its
 * pairs that may ever apply write (each output takes over one storage at
 * most). */
static uint64_t node_inplace_cap(const fp_graph *g, int32_t v) {
  int32_t m;
  const fp_inplace *pr = fp_graph_inplace(g, v, &m);
  uint64_t cap = 0;
  for (int32_t k = 0; k < m; k++) {
    bool seen = !inplace_may_apply(g, pr[k]);
    for (int32_t j = 0; j < k && !seen; j++)
      seen = pr[j].write == pr[k].write && inplace_may_apply(g, pr[j]);
    cap += seen ? 0 : fp_graph_buffer(g, pr[k].write)->bytes;
  }
  return cap;
}

static int cmp_u64_desc(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}

uint64_t fp_inplace_step_cap(const fp_graph *g, int32_t max_fusion_size) {
  int32_t n = fp_graph_node_count(g), k = max_fusion_size;
  if (fp_graph_inplace_count(g) == 0)
    return 0;
  k = fp_graph_fusion_cap(g, k);
  uint64_t *cap = malloc(((size_t)n + 1) * sizeof *cap), sum = 0;
  for (int32_t v = 0; v < n; v++) {
    uint64_t c = node_inplace_cap(g, v);
    sum += c;
    if (cap)
      cap[v] = c;
  }
  if (!cap || k >= n) /* no memory: every node's, still an upper bound */
    goto done;
  qsort(cap, (size_t)n, sizeof *cap, cmp_u64_desc);
  sum = 0;
  for (int32_t v = 0; v < k; v++)
    sum += cap[v];
done:
  free(cap);
  return sum;
}

/* Work (node pairs) past which step_caps gives every step the global
 * cap. */
#define PB_CAP_WORK 4000000.0

/* Iteration classes class_caps handles at most (past them: the global
 * cap). */
#define PB_CAP_CLASSES 512

/* The class of non-extern node v among the reps so far (kind, numel,
 * rnumel), added when new; -1 past PB_CAP_CLASSES. */
static int32_t node_class(const fp_graph *g, int32_t v, int32_t *rep,
                          int32_t *nc) {
  const fp_node *a = fp_graph_node(g, v);
  for (int32_t c = 0; c < *nc; c++) {
    const fp_node *b = fp_graph_node(g, rep[c]);
    if (a->kind == b->kind && a->numel == b->numel && a->rnumel == b->rnumel)
      return c;
  }
  if (*nc == PB_CAP_CLASSES)
    return -1;
  rep[*nc] = v;
  return (*nc)++;
}

/* The k largest savings (desc) over the nodes with pairs whose class is
 * compatible with class c, into top (k entries, 0-padded). */
static void class_top(const pb_work *W, const uint64_t *cap,
                      const int32_t *with, int32_t np, const int32_t *cls,
                      const int32_t *rep, int32_t c, int32_t k, uint64_t *tmp,
                      uint64_t *top) {
  int32_t m = 0;
  const fp_node *a = fp_graph_node(W->g, rep[c]);
  for (int32_t j = 0; j < np; j++) {
    int32_t u = with[j];
    if (cls[u] >= 0 && fp_iter_compatible(a, fp_graph_node(W->g, rep[cls[u]])))
      tmp[m++] = cap[u];
  }
  qsort(tmp, (size_t)m, sizeof *tmp, cmp_u64_desc);
  for (int32_t j = 0; j < k; j++)
    top[j] = j < m ? tmp[j] : 0;
}

/* step_caps past PB_CAP_WORK: a node that may share x's group is of an
 * iteration class compatible with x's (fp_iter_compatible depends on
 * kind, numel and rnumel alone), so the k largest savings over those
 * classes, x's own taken out once, bound what they add.  Weaker than the
 * pairwise rule (order and unfusible pairs ignored), still an upper
 * bound.  0 (capx untouched past PB_CAP_CLASSES), or -1 out of memory. */
static int class_caps(const pb_work *W, const uint64_t *cap,
                      const int32_t *with, int32_t np, uint64_t *capx) {
  /* k: the entries kept per class (more than np + 1 add only zeros) */
  int32_t n = W->n, nc = 0, k = W->k < np + 1 ? W->k : np + 1, rc = -1;
  int32_t *cls = malloc(((size_t)n + 1) * sizeof *cls);
  int32_t *rep = malloc((PB_CAP_CLASSES + 1) * sizeof *rep);
  uint64_t *tmp = malloc(((size_t)np + 1) * sizeof *tmp), *top = NULL;
  if (!cls || !rep || !tmp)
    goto done;
  rc = 0;
  for (int32_t v = 0; v < n; v++) {
    bool ext = fp_graph_node(W->g, v)->kind == FP_KIND_EXTERN;
    if (!ext && (cls[v] = node_class(W->g, v, rep, &nc)) < 0)
      goto done; /* too many classes: the global cap stays */
    cls[v] = ext ? -1 : cls[v];
  }
  if (!(top = malloc(((size_t)nc * k + 1) * sizeof *top))) {
    rc = -1;
    goto done;
  }
  for (int32_t c = 0; c < nc; c++)
    class_top(W, cap, with, np, cls, rep, c, k, tmp, top + (size_t)c * k);
  for (int32_t x = 0; x < n; x++) {
    const uint64_t *t = cls[x] < 0 ? NULL : top + (size_t)cls[x] * k;
    bool skip = cap[x] > 0; /* x's own entry, once */
    capx[x] = cap[x];
    for (int32_t j = 0, used = 0; t && j < k && used < k - 1; j++) {
      if (skip && t[j] == cap[x]) {
        skip = false;
        continue;
      }
      capx[x] += t[j];
      used++;
    }
  }
done:
  free(cls);
  free(rep);
  free(tmp);
  free(top);
  return rc;
}

/* capx[x]: the most in-place takeovers can save at step(x): x's own
 * saving plus the k - 1 largest of the nodes that may share x's group
 * (compatible, and neither strictly before the other); past PB_CAP_WORK
 * node pairs, class_caps' weaker figure, or `global`.  0, or -1 out of
 * memory. */
static int step_caps(const pb_work *W, uint64_t global, uint64_t *capx) {
  int32_t n = W->n, np = 0;
  uint64_t *cap = malloc(((size_t)n + 1) * sizeof *cap);
  uint64_t *tmp = malloc(((size_t)n + 1) * sizeof *tmp);
  int32_t *with = malloc(((size_t)n + 1) * sizeof *with);
  int rc = cap && tmp && with ? 0 : -1;
  for (int32_t v = 0; rc == 0 && v < n; v++)
    if ((cap[v] = node_inplace_cap(W->g, v)) > 0)
      with[np++] = v;
  for (int32_t x = 0; rc == 0 && x < n; x++)
    capx[x] = global;
  if (rc == 0 && (double)n * np > PB_CAP_WORK)
    rc = class_caps(W, cap, with, np, capx);
  for (int32_t x = 0; rc == 0 && (double)n * np <= PB_CAP_WORK && x < n; x++) {
    int32_t m = 0;
    for (int32_t j = 0; j < np; j++) {
      int32_t u = with[j];
      if (u != x && may_share(W, x, u) && !bit(W->strict, W->words, x, u) &&
          !bit(W->strict, W->words, u, x))
        tmp[m++] = cap[u];
    }
    qsort(tmp, (size_t)m, sizeof *tmp, cmp_u64_desc);
    capx[x] = cap[x];
    for (int32_t j = 0; j < m && j < W->k - 1; j++)
      capx[x] += tmp[j];
  }
  free(cap);
  free(tmp);
  free(with);
  return rc;
}

/* The step-0, last-step and per-node rules (without the resident and
 * floor bytes' max), each less what in-place takeovers may save at its
 * step.  The step-0 and last-step sums need no such term: they count
 * only freeable inputs, or only produced outputs, and a takeover (i, o)
 * that removes o from such a sum leaves i, which is neither, holding
 * o's bytes. */
static fp_status rules_bound(const fp_graph *g, int32_t max_fusion_size,
                             uint64_t *out, fp_error *err) {
  uint64_t resident = fp_graph_resident_bytes(g);
  uint64_t global = fp_inplace_step_cap(g, max_fusion_size);
  *out = resident + end_steps_bound(g);
  if (!node_rule_affordable(g))
    return FP_OK;
  pb_work W;
  uint64_t best = *out;
  uint64_t *capx = calloc((size_t)fp_graph_node_count(g) + 1, sizeof *capx);
  fp_status st = capx ? work_build(&W, g, max_fusion_size, err)
                      : fp_error_set(err, FP_ENOMEM, "out of memory");
  if (!capx)
    return st;
  if (st == FP_OK && step_caps(&W, global, capx) != 0)
    st = fp_error_set(err, FP_ENOMEM, "out of memory (peak bound)");
  if (st == FP_OK)
    st = node_rule(&W, resident, capx, global, &best, err);
  if (st == FP_OK)
    *out = best;
  work_free(&W);
  free(capx);
  return st;
}

fp_status fp_peak_bound(const fp_graph *g, int32_t max_fusion_size,
                        uint64_t floor_bytes, uint64_t *out, fp_error *err) {
  if (fp_arg_graph(g, "peak bound", err) != FP_OK ||
      fp_arg_ptr(out, "peak bound", "out", err) != FP_OK)
    return FP_EARG;
  uint64_t resident = fp_graph_resident_bytes(g), rules = 0;
  *out = floor_bytes > resident ? floor_bytes : resident;
  if (fp_graph_node_count(g) == 0)
    return FP_OK;
  fp_status st = rules_bound(g, max_fusion_size, &rules, err);
  *out = rules > *out ? rules : *out;
  return st;
}

/* ---- what peak_group.c shares (peak_work.h) ------------------------ */

fp_status pb_work_build(pb_work *W, const fp_graph *g, int32_t k,
                        fp_error *err) {
  return work_build(W, g, k, err);
}

void pb_work_free(pb_work *W) {
  work_free(W);
}

bool pb_cuts_affordable(const fp_graph *g) {
  return node_rule_affordable(g) && graph_size(g) <= PB_MAX_CUT_SIZE;
}

int pb_step_caps(const pb_work *W, uint64_t global, uint64_t *capx) {
  return step_caps(W, global, capx);
}

fp_status pb_cut_bound(const pb_work *W, const int32_t *grp, int32_t ng,
                       const int8_t *side, const int32_t *tie, int8_t *out_side,
                       uint64_t resident, uint64_t *out, fp_error *err) {
  double work = 0;
  cut_force f = {-1, false, false, NULL, tie, out_side};
  return cut_bound_placed(W, grp, ng, f, side, resident, out, &work, err);
}

int pb_cmp_node_val(const void *a, const void *b) {
  return cmp_node_val(a, b);
}

int pb_cmp_u64_desc(const void *a, const void *b) {
  return cmp_u64_desc(a, b);
}

void pb_live_set(const pb_work *W, const fp_buffer *buf, uint64_t *row,
                 size_t *lo, size_t *hi) {
  live_set(W, buf, row, lo, hi);
}

double pb_graph_size(const fp_graph *g) {
  return graph_size(g);
}

uint64_t pb_node_inplace_cap(const fp_graph *g, int32_t v) {
  return node_inplace_cap(g, v);
}

fp_status pb_cut_forced(const pb_work *W, const int32_t *grp, int32_t ng,
                        int32_t y, bool late, bool strict,
                        const uint8_t *takers, uint64_t resident, uint64_t *out,
                        double *work, fp_error *err) {
  cut_force f = {y, late, strict, takers, NULL, NULL};
  return step_cut_bound(W, grp, ng, f, resident, out, work, err);
}
