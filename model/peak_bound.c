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

/* Past these sizes the bit matrices (3 n^2 / 8 bytes) or the bit tests cost
 * more than a bound is worth here.  Most of the work is word-parallel:
 * measured (December 2026) at 0.25 s and 92 MB for a generated
 * 12,000-node transformer (work 4.2e8) and 0.44 s and 132 MB at 16,000
 * nodes (7.5e8), so the work limit admits every graph under the node
 * limit with up to 7.5 buffers and reads a node (whole-step exports have
 * about 4: a 126-layer step, 11.5k nodes, is 4.9e8). */
#define PB_MAX_NODES 16384
#define PB_MAX_WORK 2000000000.0
/* Work (network sizes and edge visits) for the min cuts of one bound, and
 * the largest graph_size that gets them (the largest corpus graph,
 * volo_d1_224.bwd, is 2.1e6; on a 3,000-node graph the cuts would double
 * the bound's time, which short solves cannot spare). */
#define PB_CUT_BUDGET 10000000.0
#define PB_MAX_CUT_SIZE 3000000.0

typedef struct pb_work {
  const fp_graph *g;
  int32_t n, k;     /* nodes; fusion-size limit */
  size_t words;     /* 64-bit words per bit row */
  uint64_t *desc;   /* row v: nodes u != v with a path v -> ... -> u */
  uint64_t *anc;    /* row v: nodes u != v with a path u -> ... -> v */
  uint64_t *strict; /* row w: nodes x with step(w) < step(x) in every plan */
  int32_t *pstart;  /* CSR: distinct producers of node x are */
  int32_t *pred;    /* pred[pstart[x] .. pstart[x + 1]) */
  bool *apart;      /* apart[i]: pred[i] never shares x's group */
} pb_work;

static bool bit(const uint64_t *rows, size_t words, int32_t r, int32_t c) {
  return rows[(size_t)r * words + (size_t)c / 64] >> (c % 64) & 1;
}

static void set_bit(uint64_t *rows, size_t words, int32_t r, int32_t c) {
  rows[(size_t)r * words + (size_t)c / 64] |= (uint64_t)1 << (c % 64);
}

/* Whether u and v may ever share a group (under the limit k). */
static bool may_share(const pb_work *W, int32_t u, int32_t v) {
  return W->k > 1 && fp_graph_compatible(W->g, u, v);
}

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
  int32_t nv; /* flow vertices so far */
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
 * strictly after it; node -1 for none. */
typedef struct cut_force {
  int32_t node;
  bool late;
  bool strict;           /* before: strictly before the step, with its
                            producers */
  const uint8_t *takers; /* per node: its takeovers may save at the step
                            (cut_refunds; NULL: none) */
} cut_force;

static const cut_force no_force = {-1, false, false, NULL};

/* Resident bytes plus the least that is live at the step of G's group
 * over every placement of the other nodes: a bound on the peak of every
 * plan that puts G (a convex set of nodes) in one group and, when
 * force.node is a node neither an ancestor nor a descendant of G, runs it
 * at or before that step (strictly after it when force.late).
 * FP_ENOMEM. */
static fp_status step_cut_bound(const pb_work *W, const int32_t *grp,
                                int32_t ng, cut_force force, uint64_t resident,
                                uint64_t *out, double *work, fp_error *err) {
  int32_t n = W->n, nb = fp_graph_buffer_count(W->g);
  cut_work C;
  memset(&C, 0, sizeof C);
  C.W = W, C.grp = grp, C.ng = ng, C.forced = force.node;
  C.forced_cls = force.late ? CLS_AFTER : CLS_BEFORE;
  C.forced_apart = force.strict && !force.late;
  C.cls = malloc((size_t)n + 1);
  C.apart = malloc(((size_t)n + 1) * sizeof *C.apart);
  C.vid = malloc(((size_t)n + 1) * sizeof *C.vid);
  C.a = calloc((size_t)n + 1, sizeof *C.a);
  C.items = malloc(((size_t)n + 1) * sizeof *C.items);
  C.f = fp_flow_create(2 + n + nb);
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
      cut_closure(&C) != 0)
    goto oom;
  /* fixed - (rewards - cut): the least live bytes, never negative */
  int64_t least = (int64_t)C.fixed - C.rewards + fp_flow_max(C.f, 0, 1);
  /* G's workspaces are live at its step too, beside the least live. */
  *out = resident + (uint64_t)(least > 0 ? least : 0) +
         fp_graph_group_workspace(W->g, grp, ng);
  *work += (double)(n + nb) * ng + (double)fp_flow_work(C.f);
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

/* A node and its cut-rule figure, for ordering nodes by it. */
typedef struct node_val {
  uint64_t val;
  int32_t node;
} node_val;

/* Descending figure, then ascending node (a total order: deterministic). */
static int cmp_node_val(const void *a, const void *b) {
  const node_val *x = a, *y = b;
  if (x->val != y->val)
    return x->val > y->val ? -1 : 1;
  return x->node < y->node ? -1 : (x->node > y->node);
}

/* a - b, or 0 when b > a. */
static uint64_t sub_cap(uint64_t a, uint64_t b) {
  return a > b ? a - b : 0;
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
  double work = 0;
  fp_status st = FP_OK;
  for (int32_t i = 0; st == FP_OK && i < W->n && work < PB_CUT_BUDGET; i++) {
    uint64_t s;
    st =
        step_cut_bound(W, &vals[i].node, 1, no_force, resident, &s, &work, err);
    s = sub_cap(s, capx[vals[i].node]);
    *out = st == FP_OK && s > *out ? s : *out;
  }
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
    vals[x].val = sub_cap(vals[x].val, capx[x]);
    *out = vals[x].val > *out ? vals[x].val : *out;
  }
  uint64_t ends = sub_cap(end_cut_bound(W, resident, &L), global);
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

/* The group's figure: the min cut at G less the smallest of its nodes'
 * in-place caps (each bounds what takeovers save at G's step). */
static fp_status group_figure(const pb_work *W, const uint64_t *capx,
                              const int32_t *grp, int32_t ng, uint64_t resident,
                              uint64_t *out, fp_error *err) {
  uint64_t s = resident, cap = UINT64_MAX;
  double work = 0;
  fp_status st = step_cut_bound(W, grp, ng, no_force, resident, &s, &work, err);
  for (int32_t i = 0; i < ng; i++)
    cap = capx[grp[i]] < cap ? capx[grp[i]] : cap;
  s = sub_cap(s, ng > 0 ? cap : 0);
  *out = st == FP_OK && s > resident ? s : resident;
  return st;
}

/* FP_EARG unless the groups are well formed: n_groups >= 0, start[]
 * from 0 and never falling, every node an index of g. */
static fp_status check_groups(const fp_graph *g, const int32_t *nodes,
                              const int32_t *start, int32_t n_groups,
                              fp_error *err) {
  const char *fn = "peak group bounds";
  if (n_groups < 0)
    return fp_error_set(err, FP_EARG, "%s: n_groups %d < 0", fn, (int)n_groups);
  if (n_groups > 0 && (fp_arg_ptr(nodes, fn, "nodes", err) != FP_OK ||
                       fp_arg_ptr(start, fn, "start", err) != FP_OK))
    return FP_EARG;
  for (int32_t i = 0; i < n_groups; i++) {
    if ((i == 0 && start[0] != 0) || start[i + 1] < start[i])
      return fp_error_set(err, FP_EARG, "%s: group %d: bad start", fn, (int)i);
    for (int32_t j = start[i]; j < start[i + 1]; j++)
      if (nodes[j] < 0 || nodes[j] >= fp_graph_node_count(g))
        return fp_error_set(err, FP_EARG, "%s: group %d: no node %d", fn,
                            (int)i, (int)nodes[j]);
  }
  return FP_OK;
}

fp_status fp_peak_group_bounds(const fp_graph *g, int32_t max_fusion_size,
                               const int32_t *nodes, const int32_t *start,
                               int32_t n_groups, uint64_t *out, fp_error *err) {
  if (fp_arg_graph(g, "peak group bounds", err) != FP_OK ||
      fp_arg_ptr(out, "peak group bounds", "out", err) != FP_OK ||
      check_groups(g, nodes, start, n_groups, err) != FP_OK)
    return FP_EARG;
  uint64_t resident = fp_graph_resident_bytes(g);
  for (int32_t i = 0; i < n_groups; i++)
    out[i] = resident;
  if (n_groups == 0 || !node_rule_affordable(g) ||
      graph_size(g) > PB_MAX_CUT_SIZE)
    return FP_OK;
  pb_work W;
  uint64_t *capx = calloc((size_t)fp_graph_node_count(g) + 1, sizeof *capx);
  fp_status st = capx ? work_build(&W, g, max_fusion_size, err)
                      : fp_error_set(err, FP_ENOMEM, "out of memory");
  if (!capx)
    return st;
  if (st == FP_OK &&
      step_caps(&W, fp_inplace_step_cap(g, max_fusion_size), capx) != 0)
    st = fp_error_set(err, FP_ENOMEM, "out of memory (peak bound)");
  for (int32_t i = 0; st == FP_OK && i < n_groups; i++)
    st = group_figure(&W, capx, nodes + start[i], start[i + 1] - start[i],
                      resident, &out[i], err);
  work_free(&W);
  free(capx);
  return st;
}

/* ---- pairs that no plan under a peak limit groups ---------------------
 *
 * Two nodes u, v in one group run at one step, and so does every node z
 * on a path u -> z -> v (a group is convex).  Every buffer the per-node
 * rule finds live at step(u), step(v) or step(z) is then live at that one
 * step, so resident + the bytes of the union of those sets bound the peak
 * of every plan that groups u with v.  When that exceeds the limit, no
 * plan within the limit groups them: declaring (u, v) unfusible keeps
 * every such plan legal, and a traffic bound of the restricted graph holds
 * for all of them (docs/cost-model.md, "Peak conflicts").
 *
 * A second rule reaches pairs that are far apart (far pairs).  Fix a
 * node x and a node y that is neither x nor an ancestor or descendant of
 * it.  The min cut at step(x) with y forced at or before that step (and
 * its producers with it) bounds what is live there in every plan that
 * runs y no later than x.  When that exceeds the limit, no plan within the
 * limit does; and y grouped with x or an ancestor z of x runs at step(z)
 * <= step(x).  So (y, z) is such a pair, for each such z that y shares a
 * buffer with (the only partners through which y saves traffic).  The
 * mirror: y forced strictly after step(x) (its consumers with it); over
 * the limit, y always runs at or before x, and stays apart from every z
 * that always runs after x.  A restricted graph has a
 * stronger strict relation, so the scan repeats on it.
 *
 * In-place takeovers lower what is live at a step by at most what they
 * save there, so each figure gives that up: a pair's figure the savings
 * of u, v and the k - 2 largest of the nodes that may join both
 * (pc_pair_cap), a far pair's the cap of step(x) (step_caps).  A pair
 * whose input is an output or a resident input never applies and saves
 * nothing (inplace_may_apply): on deit_small_patch16_224.fwd the last
 * layer norm's pair [buf231, buf232] would otherwise give up the 19.4 MB
 * by which grouping op231 with op232 goes over the eager peak. */

/* Rounds of the scan, and the bit work of one round, at most. */
#define PC_MAX_ROUNDS 4
#define PC_MAX_WORK 400000000.0
/* The second rule: cut nodes x per round (highest live figure first), and
 * its min-cut work per round. */
#define PC_FAR_CUTS 64
#define PC_FAR_BUDGET 20000000.0
/* Buffers with more nodes than this contribute only writer-reader pairs
 * (the reader-reader pairs grow as the square). */
#define PC_MAX_PAIR_NODES 24

typedef struct pc_pair {
  int32_t u, v;
  uint64_t bytes; /* the pair's peak figure */
} pc_pair;

typedef struct pc_list {
  pc_pair *p;
  int32_t n, cap;
} pc_list;

typedef struct pc_scan {
  pb_work W;
  int32_t nb;
  size_t bwords;  /* 64-bit words per row over buffers */
  uint64_t *live; /* row x: the buffers live at step(x) in every plan */
  uint64_t *acc;  /* one row of scratch */
  uint64_t resident, limit;
  double work;   /* bit work spent */
  pc_list found; /* conflicting pairs, u < v */
  pc_list cand;  /* pairs for the min cut */
  int32_t *mark; /* node -> the last gen it was seen in (second rule) */
  int32_t gen;
  /* In-place takeovers: what each node's pairs may save (cap), at most
   * at each node's step (capx: step_caps), the nodes with a saving. */
  uint64_t *cap, *capx, *tmp;
  int32_t *with, np;
  /* Order facts the far rule proves at forced groups (fp_peak_group_far):
   * node fy[i] runs after step(fx[i]) (fstrict: strictly), for the nodes
   * of fact_y; NULL when not wanted. */
  const uint8_t *fact_y;
  int32_t *fx, *fy, nf, capf;
  bool *fstrict;
} pc_scan;

/* Fills P's in-place caps (all zero on a graph without pairs).  0, or -1
 * out of memory. */
static int pc_caps(pc_scan *P) {
  const fp_graph *g = P->W.g;
  size_t n = (size_t)P->W.n + 1;
  P->cap = calloc(n, sizeof *P->cap);
  P->capx = calloc(n, sizeof *P->capx);
  P->tmp = malloc(n * sizeof *P->tmp);
  P->with = malloc(n * sizeof *P->with);
  if (!P->cap || !P->capx || !P->tmp || !P->with)
    return -1;
  if (fp_graph_inplace_count(g) == 0)
    return 0;
  for (int32_t v = 0; v < P->W.n; v++)
    if ((P->cap[v] = node_inplace_cap(g, v)) > 0)
      P->with[P->np++] = v;
  return step_caps(&P->W, fp_inplace_step_cap(g, P->W.k), P->capx);
}

/* Whether w may run in one group with u: it may share u's group and
 * neither always runs before the other. */
static bool pc_may_join(const pb_work *W, int32_t w, int32_t u) {
  return may_share(W, w, u) && !bit(W->strict, W->words, w, u) &&
         !bit(W->strict, W->words, u, w);
}

/* The most in-place takeovers save at the step of a group holding u and
 * v: their own savings plus the k - 2 largest of the nodes that may join
 * both (a group holds at most k nodes, each compatible with the rest and
 * at one step with them). */
static uint64_t pc_pair_cap(pc_scan *P, int32_t u, int32_t v) {
  int32_t m = 0;
  uint64_t sum = P->cap[u] + P->cap[v];
  for (int32_t j = 0; j < P->np; j++) {
    int32_t w = P->with[j];
    if (w != u && w != v && pc_may_join(&P->W, w, u) &&
        pc_may_join(&P->W, w, v))
      P->tmp[m++] = P->cap[w];
  }
  if (m > P->W.k - 2)
    qsort(P->tmp, (size_t)m, sizeof *P->tmp, cmp_u64_desc);
  for (int32_t j = 0; j < m && j < P->W.k - 2; j++)
    sum += P->tmp[j];
  return sum;
}

/* Fills the live rows (the live sets, transposed).  0, or -1 out of
 * memory. */
static int pc_live_rows(pc_scan *P) {
  P->bwords = ((size_t)P->nb + 63) / 64;
  P->live = calloc((size_t)P->W.n * P->bwords + 1, sizeof *P->live);
  P->acc = calloc(P->bwords + 1, sizeof *P->acc);
  uint64_t *row = malloc((P->W.words + 1) * sizeof *row);
  if (!P->live || !P->acc || !row) {
    free(row);
    return -1;
  }
  for (int32_t b = 0; b < P->nb; b++) {
    size_t lo, hi;
    live_set(&P->W, fp_graph_buffer(P->W.g, b), row, &lo, &hi);
    for (size_t j = lo; j < hi; j++)
      for (uint64_t m = row[j]; m; m &= m - 1)
        set_bit(P->live, P->bwords, (int32_t)(j * 64) + __builtin_ctzll(m), b);
  }
  free(row);
  return 0;
}

/* The bytes of the buffers whose bits are set in row (P->bwords words). */
static uint64_t pc_row_bytes(const pc_scan *P, const uint64_t *row) {
  uint64_t sum = 0;
  for (size_t j = 0; j < P->bwords; j++)
    for (uint64_t m = row[j]; m; m &= m - 1)
      sum += fp_graph_buffer(P->W.g, (int32_t)(j * 64) + __builtin_ctzll(m))
                 ->bytes;
  return sum;
}

/* Resident bytes plus the union of the live rows of u, v (u < v) and the
 * nodes between them: a bound on the peak of every plan grouping u, v. */
static uint64_t pc_group_bytes(pc_scan *P, int32_t u, int32_t v) {
  const pb_work *W = &P->W;
  const uint64_t *ru = P->live + (size_t)u * P->bwords,
                 *rv = P->live + (size_t)v * P->bwords;
  for (size_t j = 0; j < P->bwords; j++)
    P->acc[j] = ru[j] | rv[j];
  if (bit(W->desc, W->words, u, v)) {
    for (int32_t z = u + 1; z < v; z++) {
      if (!bit(W->desc, W->words, u, z) || !bit(W->desc, W->words, z, v))
        continue;
      const uint64_t *rz = P->live + (size_t)z * P->bwords;
      for (size_t j = 0; j < P->bwords; j++)
        P->acc[j] |= rz[j];
      P->work += (double)P->bwords;
    }
    P->work += (double)(v - u);
  }
  P->work += (double)P->bwords;
  return P->resident + pc_row_bytes(P, P->acc);
}

/* Appends the pair (a, b) as (u < v) with its figure to L.  0, or -1 out
 * of memory. */
static int pc_push(pc_list *L, int32_t a, int32_t b, uint64_t bytes) {
  if (L->n == L->cap) {
    int32_t cap = L->cap ? 2 * L->cap : 64;
    pc_pair *p = realloc(L->p, (size_t)cap * sizeof *p);
    if (!p)
      return -1;
    L->p = p;
    L->cap = cap;
  }
  pc_pair q = {a < b ? a : b, a < b ? b : a, bytes};
  L->p[L->n++] = q;
  return 0;
}

/* Records the pair in P->found, or in P->cand (with its union figure)
 * when that figure alone does not exceed the limit.  0, or -1 out of
 * memory. */
static int pc_test(pc_scan *P, int32_t a, int32_t b) {
  int32_t u = a < b ? a : b, v = a < b ? b : a;
  if (!may_share(&P->W, u, v))
    return 0;
  uint64_t gb = sub_cap(pc_group_bytes(P, u, v), pc_pair_cap(P, u, v));
  return pc_push(gb > P->limit ? &P->found : &P->cand, u, v, gb);
}

/* Tests the pairs that share buffer b: the writer with each reader, and
 * the readers among themselves when they are few. */
static int pc_scan_buffer(pc_scan *P, const fp_buffer *buf) {
  int32_t w = buf->writer, r = buf->n_readers;
  for (int32_t i = 0; i < r && w >= 0; i++)
    if (pc_test(P, w, buf->readers[i]) != 0)
      return -1;
  if (r + (w >= 0) > PC_MAX_PAIR_NODES)
    return 0;
  for (int32_t i = 0; i < r; i++)
    for (int32_t j = i + 1; j < r; j++)
      if (pc_test(P, buf->readers[i], buf->readers[j]) != 0)
        return -1;
  return 0;
}

/* Candidates by union figure, highest first (the likeliest to exceed the
 * limit under the min cut), then by pair. */
static int cmp_cand(const void *a, const void *b) {
  const pc_pair *x = a, *y = b;
  if (x->bytes != y->bytes)
    return x->bytes > y->bytes ? -1 : 1;
  if (x->u != y->u)
    return x->u < y->u ? -1 : 1;
  return x->v < y->v ? -1 : (x->v > y->v);
}

/* The min cut of the candidates, best first, within PB_CUT_BUDGET; the
 * conflicting ones join P->found (which has room for all of them).  0, or
 * -1 out of memory. */
static int pc_cut_candidates(pc_scan *P) {
  if (P->cand.n == 0)
    return 0; /* cand.p may be NULL: qsort must not see it */
  qsort(P->cand.p, (size_t)P->cand.n, sizeof *P->cand.p, cmp_cand);
  double work = 0;
  for (int32_t i = 0; i < P->cand.n && work < PB_CUT_BUDGET; i++) {
    pc_pair *c = &P->cand.p[i];
    if (i > 0 && c->u == c[-1].u && c->v == c[-1].v)
      continue; /* the same pair through another buffer */
    int32_t grp[2] = {c->u, c->v};
    uint64_t gb;
    if (step_cut_bound(&P->W, grp, 2, no_force, P->resident, &gb, &work,
                       NULL) != FP_OK)
      return -1;
    gb = sub_cap(gb, pc_pair_cap(P, c->u, c->v));
    if (gb > P->limit) {
      c->bytes = gb;
      P->found.p[P->found.n++] = *c;
    }
  }
  return 0;
}

/* Whether y is neither x nor an ancestor or descendant of x. */
static bool pc_free_of(const pb_work *W, int32_t x, int32_t y) {
  return y != x && !bit(W->anc, W->words, x, y) &&
         !bit(W->desc, W->words, x, y);
}

/* Whether z is a partner of y at cut node x for the side of force: when
 * y cannot run at or before step(x), z is x or an ancestor of x (grouped,
 * y would run at step(z) <= step(x)); when y cannot run after it, z
 * always runs after x (step(z) > step(x)). */
static bool pc_partner(const pb_work *W, int32_t x, int32_t z, bool late) {
  return late ? bit(W->strict, W->words, x, z)
              : z == x || bit(W->anc, W->words, x, z);
}

/* The sides of a far pair: y never at or before the step (PC_EARLY),
 * never after it (PC_LATE), or never strictly before it (PC_STRICT: then
 * its partners are the nodes always strictly before a member). */
enum { PC_EARLY, PC_LATE, PC_STRICT };

/* pc_partner for a group G (every member at one step) and a side: a
 * partner of any member. */
static bool pc_group_partner(const pb_work *W, const int32_t *grp, int32_t ng,
                             int32_t z, int side) {
  for (int32_t i = 0; i < ng; i++)
    if (side == PC_STRICT ? bit(W->strict, W->words, z, grp[i])
                          : pc_partner(W, grp[i], z, side == PC_LATE))
      return true;
  return false;
}

/* The pairs (y, z) of the second rule once y is known never to run on
 * the side of the step of group G (grp[0..ng): {x} for the scan) that
 * side names (PC_*): partners z (pc_group_partner) that share
 * a buffer with y and may share its group.  With found == false only
 * counts them.  The count, or -1 out of memory. */
static int32_t pc_far_pairs(pc_scan *P, const int32_t *grp, int32_t ng,
                            int32_t y, int side, bool found, uint64_t bytes) {
  const fp_graph *g = P->W.g;
  const fp_node *nd = fp_graph_node(g, y);
  int32_t gen = ++P->gen, count = 0;
  for (int32_t a = 0; a < nd->n_reads + nd->n_writes; a++) {
    int32_t b =
        a < nd->n_reads ? nd->reads[a].buffer : nd->writes[a - nd->n_reads];
    const fp_buffer *buf = fp_graph_buffer(g, b);
    for (int32_t j = -1; j < buf->n_readers; j++) {
      int32_t z = j < 0 ? buf->writer : buf->readers[j];
      if (z < 0 || z == y || P->mark[z] == gen)
        continue;
      P->mark[z] = gen;
      if (!pc_group_partner(&P->W, grp, ng, z, side) || !may_share(&P->W, y, z))
        continue;
      count++;
      if (found && pc_push(&P->found, y, z, bytes) != 0)
        return -1;
    }
  }
  return count;
}

/* The second rule at cut node x, over every y free of x that has pairs to
 * gain, forced to either side, within the round's budget.  0, or -1 out
 * of memory. */
static int pc_far_at(pc_scan *P, int32_t x, double *work) {
  for (int32_t y = 0; y < P->W.n && *work < PC_FAR_BUDGET; y++)
    for (int side = 0; side < 2 && pc_free_of(&P->W, x, y); side++) {
      bool late = side == 1;
      if (pc_far_pairs(P, &x, 1, y, late, false, 0) == 0)
        continue;
      cut_force f = {y, late, false, NULL};
      uint64_t lb;
      if (step_cut_bound(&P->W, &x, 1, f, P->resident, &lb, work, NULL) !=
          FP_OK)
        return -1;
      lb = sub_cap(lb, P->capx[x]);
      if (lb > P->limit && pc_far_pairs(P, &x, 1, y, late, true, lb) < 0)
        return -1;
    }
  return 0;
}

static bool far_rule_on = true;

void fp_peak_test_far_rule(int on) {
  far_rule_on = on != 0;
}

/* The second rule at the PC_FAR_CUTS nodes whose live rows hold the most
 * bytes (where the limit is nearest), within PC_FAR_BUDGET.  0, or -1
 * out of memory. */
static int pc_far_rule(pc_scan *P) {
  int32_t n = P->W.n;
  if (!far_rule_on)
    return 0;
  node_val *vals = malloc(((size_t)n + 1) * sizeof *vals);
  P->mark = calloc((size_t)n + 1, sizeof *P->mark);
  if (!vals || !P->mark) {
    free(vals);
    return -1;
  }
  for (int32_t x = 0; x < n; x++) {
    const uint64_t *row = P->live + (size_t)x * P->bwords;
    vals[x].node = x;
    vals[x].val = sub_cap(P->resident + pc_row_bytes(P, row), P->capx[x]);
  }
  qsort(vals, (size_t)n, sizeof *vals, cmp_node_val);
  double work = 0;
  int rc = 0;
  for (int32_t i = 0;
       rc == 0 && i < n && i < PC_FAR_CUTS && work < PC_FAR_BUDGET; i++)
    if (vals[i].val <= P->limit) /* else every plan is over the limit */
      rc = pc_far_at(P, vals[i].node, &work);
  free(vals);
  return rc;
}

static void pc_free(pc_scan *P) {
  work_free(&P->W);
  free(P->live);
  free(P->acc);
  free(P->found.p);
  free(P->cand.p);
  free(P->mark);
  free(P->cap);
  free(P->capx);
  free(P->tmp);
  free(P->with);
  free(P->fx);
  free(P->fy);
  free(P->fstrict);
}

/* One round on graph g: the conflicting pairs into P->found.  FP_ENOMEM. */
static fp_status pc_round(pc_scan *P, const fp_graph *g, int32_t k,
                          fp_error *err) {
  fp_status st = work_build(&P->W, g, k, err);
  P->nb = fp_graph_buffer_count(g);
  P->resident = fp_graph_resident_bytes(g);
  if (st == FP_OK && (pc_live_rows(P) != 0 || pc_caps(P) != 0))
    st = fp_error_set(err, FP_ENOMEM, "out of memory (peak conflicts)");
  for (int32_t b = 0; st == FP_OK && b < P->nb && P->work < PC_MAX_WORK; b++)
    if (pc_scan_buffer(P, fp_graph_buffer(g, b)) != 0)
      st = fp_error_set(err, FP_ENOMEM, "out of memory (peak conflicts)");
  /* room in found for every candidate: pc_cut_candidates adds to it */
  size_t room = (size_t)P->found.n + (size_t)P->cand.n + 1;
  pc_pair *p = st == FP_OK ? realloc(P->found.p, room * sizeof *p) : NULL;
  if (st == FP_OK && !p)
    st = fp_error_set(err, FP_ENOMEM, "out of memory (peak conflicts)");
  if (p) {
    P->found.p = p;
    P->found.cap = (int32_t)room; /* pc_push may grow it further */
  }
  if (st == FP_OK && (pc_cut_candidates(P) != 0 || pc_far_rule(P) != 0))
    st = fp_error_set(err, FP_ENOMEM, "out of memory (peak conflicts)");
  return st;
}

/* A finalized copy of g with the pairs added as unfusible.  NULL with err
 * filled. */
static fp_graph *pc_restricted(const fp_graph *g, const pc_pair *pairs,
                               int32_t n, fp_error *err) {
  fp_graph *c = fp_graph_copy_open(g, err);
  fp_status st = c ? FP_OK : FP_ENOMEM;
  for (int32_t i = 0; st == FP_OK && i < n; i++)
    st = fp_graph_add_unfusible(c, pairs[i].u, pairs[i].v, err);
  if (st == FP_OK)
    st = fp_graph_finalize(c, err);
  if (st == FP_OK)
    return c;
  fp_graph_destroy(c);
  return NULL;
}

fp_status fp_peak_restrict(const fp_graph *g, int32_t max_fusion_size,
                           uint64_t limit, fp_graph **out, int32_t *n_pairs,
                           fp_error *err) {
  if (fp_arg_ptr(out, "peak restrict", "out", err) != FP_OK ||
      fp_arg_ptr(n_pairs, "peak restrict", "n_pairs", err) != FP_OK)
    return FP_EARG;
  *out = NULL;
  *n_pairs = 0;
  if (fp_arg_graph(g, "peak restrict", err) != FP_OK)
    return FP_EARG;
  if (fp_graph_node_count(g) == 0 || graph_size(g) > PB_MAX_CUT_SIZE)
    return FP_OK;
  fp_graph *owned = NULL; /* the restricted graph so far */
  fp_status st = FP_OK;
  for (int round = 0; st == FP_OK && round < PC_MAX_ROUNDS; round++) {
    const fp_graph *cur = owned ? owned : g;
    pc_scan P;
    memset(&P, 0, sizeof P);
    P.limit = limit;
    st = pc_round(&P, cur, max_fusion_size, err);
    fp_graph *next = NULL;
    if (st == FP_OK && P.found.n > 0 &&
        !(next = pc_restricted(cur, P.found.p, P.found.n, err)))
      st = err ? err->code : FP_ENOMEM;
    pc_free(&P);
    if (!next)
      break; /* converged (nothing new), or an error */
    *n_pairs += fp_graph_unfusible_count(next) - fp_graph_unfusible_count(cur);
    fp_graph_destroy(owned);
    owned = next;
  }
  if (st == FP_OK)
    *out = owned;
  else
    fp_graph_destroy(owned);
  return st;
}

/* ---- the far rule at a forced group ------------------------------------
 *
 * The far rule above fixes G = {x}; a caller that branches on a fusion
 * (solver/bound/branch.c) knows more: every plan of its branch puts G
 * in one group.  The min cut at G bounds their peak, so over the limit
 * the branch holds no plan; and a node y free of G whose forced placement
 * overfills G's step is kept from the partners that would put it there,
 * exactly as for {x}, with the partners of any member of G. */

/* Whether y is neither in G nor an ancestor or descendant of a member. */
static bool pc_free_of_group(const pb_work *W, const int32_t *grp, int32_t ng,
                             int32_t y) {
  for (int32_t i = 0; i < ng; i++)
    if (!pc_free_of(W, grp[i], y))
      return false;
  return true;
}

/* Marks in takers (zeroed here) the nodes that may run at G's step: its
 * members and the nodes that may join each member, not `gone` or its
 * producers (forced strictly before the step; -1 for none). */
static void pc_group_takers(const pc_scan *P, const int32_t *grp, int32_t ng,
                            int32_t gone, uint8_t *takers) {
  const pb_work *W = &P->W;
  for (int32_t w = 0; w < W->n; w++) {
    bool member = false, at = true;
    for (int32_t i = 0; i < ng; i++) {
      member |= w == grp[i];
      at &= w == grp[i] || pc_may_join(W, w, grp[i]);
    }
    takers[w] =
        member ||
        (at && (gone < 0 || (w != gone && !bit(W->anc, W->words, gone, w))));
  }
}

/* What is live at G's step after takeovers, at least, with force: the
 * larger of the min cut less the cap and the min cut with the refunds of
 * the nodes that may run at the step (cut_refunds; takers: scratch).
 * FP_ENOMEM. */
static fp_status pc_group_cut(pc_scan *P, const int32_t *grp, int32_t ng,
                              cut_force f, uint64_t cap, uint8_t *takers,
                              uint64_t *out, double *work) {
  uint64_t lb, lb2 = 0;
  fp_status st =
      step_cut_bound(&P->W, grp, ng, f, P->resident, &lb, work, NULL);
  bool gone = f.node >= 0 && f.strict && !f.late;
  pc_group_takers(P, grp, ng, gone ? f.node : -1, takers);
  f.takers = takers;
  if (st == FP_OK && cap > 0)
    st = step_cut_bound(&P->W, grp, ng, f, P->resident, &lb2, work, NULL);
  lb = sub_cap(lb, cap);
  *out = lb > lb2 ? lb : lb2;
  return st;
}

/* Records what the far rule proved of y at x's step, its side over the
 * limit, as "fy runs at or after fx" (fstrict: strictly after): y is not
 * at or before the step (y strictly after x), not strictly before it (y
 * at or after x), or not after it (x at or after y).  0, or -1 out of
 * memory. */
static int pc_fact(pc_scan *P, int32_t x, int32_t y, int side) {
  if (P->nf == P->capf) {
    int32_t cap = 2 * P->capf + 16;
    int32_t *fx = realloc(P->fx, (size_t)cap * sizeof *fx);
    if (fx)
      P->fx = fx;
    int32_t *fy = realloc(P->fy, (size_t)cap * sizeof *fy);
    if (fy)
      P->fy = fy;
    bool *fs = realloc(P->fstrict, (size_t)cap * sizeof *fs);
    if (fs)
      P->fstrict = fs;
    if (!fx || !fy || !fs)
      return -1;
    P->capf = cap;
  }
  P->fx[P->nf] = side == PC_LATE ? y : x;
  P->fy[P->nf] = side == PC_LATE ? x : y;
  P->fstrict[P->nf++] = side == PC_EARLY;
  return 0;
}

/* Adds to W's order that b runs at or after a (strictly when strict), and
 * all it implies: every node at or before a is before every node at or
 * after b.  *none when it contradicts the order; *changed when it adds
 * something. */
static void pc_order(pb_work *W, int32_t a, int32_t b, bool strict, bool *none,
                     bool *changed) {
  size_t w = W->words;
  if (a == b || bit(strict ? W->desc : W->strict, w, b, a)) {
    *none |= a != b || strict;
    return;
  }
  const uint64_t *db = W->desc + (size_t)b * w, *aa = W->anc + (size_t)a * w;
  for (int32_t p = 0; p < W->n; p++) {
    if (p != a && !bit(aa, w, 0, p))
      continue;
    uint64_t *dp = W->desc + (size_t)p * w, *sp = W->strict + (size_t)p * w;
    for (size_t j = 0; j < w; j++) {
      uint64_t add = db[j] | (j == (size_t)b / 64 ? 1ULL << (b % 64) : 0);
      *changed |= (dp[j] | add) != dp[j] || (strict && (sp[j] | add) != sp[j]);
      dp[j] |= add;
      sp[j] |= strict ? add : 0;
    }
  }
  for (int32_t q = 0; q < W->n; q++) {
    if (q != b && !bit(db, w, 0, q))
      continue;
    uint64_t *aq = W->anc + (size_t)q * w;
    for (size_t j = 0; j < w; j++)
      aq[j] |= aa[j] | (j == (size_t)a / 64 ? 1ULL << (a % 64) : 0);
  }
  W->desc[(size_t)a * w + (size_t)a / 64] &= ~(1ULL << (a % 64));
  W->desc[(size_t)b * w + (size_t)b / 64] &= ~(1ULL << (b % 64));
  W->anc[(size_t)a * w + (size_t)a / 64] &= ~(1ULL << (a % 64));
  W->anc[(size_t)b * w + (size_t)b / 64] &= ~(1ULL << (b % 64));
}

/* The far rule at G on P (built): its pairs into P->found, *none when G's
 * own figure is over the limit.  0, or -1 out of memory. */
static int pc_far_group(pc_scan *P, const int32_t *grp, int32_t ng,
                        uint8_t *takers, bool *none) {
  uint64_t cap = UINT64_MAX, lb;
  double work = 0;
  for (int32_t i = 0; i < ng; i++)
    for (int32_t j = 0; j < ng; j++)
      if (bit(P->W.strict, P->W.words, grp[i], grp[j]))
        return (*none = true), 0; /* never at one step */
  for (int32_t i = 0; i < ng; i++)
    cap = P->capx[grp[i]] < cap ? P->capx[grp[i]] : cap;
  if (pc_group_cut(P, grp, ng, no_force, cap, takers, &lb, &work) != FP_OK)
    return -1;
  if ((*none = lb > P->limit))
    return 0;
  for (int32_t y = 0; y < P->W.n && work < PC_FAR_BUDGET; y++)
    for (int side = 0; side < 3 && pc_free_of_group(&P->W, grp, ng, y);
         side++) {
      bool fact = ng == 1 && P->fact_y && P->fact_y[y];
      if (!fact && pc_far_pairs(P, grp, ng, y, side, false, 0) == 0)
        continue;
      cut_force f = {y, side == PC_LATE, side == PC_STRICT, NULL};
      if (pc_group_cut(P, grp, ng, f, cap, takers, &lb, &work) != FP_OK)
        return -1;
      if (lb > P->limit && pc_far_pairs(P, grp, ng, y, side, true, lb) < 0)
        return -1;
      if (lb > P->limit && fact && pc_fact(P, grp[0], y, side) != 0)
        return -1;
    }
  P->work += work;
  return 0;
}

/* Contracts P's order for the plans that put G in one group, at step s:
 * a node at or before a member (G and its ancestors, A) is at or before
 * every member and every node after one (G and their descendants, D);
 * one always before a member is always before D; one always after a member
 * is always after A.  The min cuts and far pairs stay valid for those
 * plans, and see the order the group imposes.  0, or -1 out of memory. */
static int pc_contract(pc_scan *P, const int32_t *grp, int32_t ng) {
  pb_work *W = &P->W;
  size_t w = W->words;
  uint64_t *A = calloc(3 * w + 1, sizeof *A), *D = A + w, *S = A + 2 * w;
  if (!A)
    return -1;
  for (int32_t i = 0; i < ng; i++) {
    set_bit(A, w, 0, grp[i]);
    set_bit(D, w, 0, grp[i]);
    for (size_t j = 0; j < w; j++) {
      A[j] |= W->anc[(size_t)grp[i] * w + j];
      D[j] |= W->desc[(size_t)grp[i] * w + j];
      S[j] |= W->strict[(size_t)grp[i] * w + j];
    }
  }
  for (int32_t v = 0; v < W->n; v++) {
    bool in_a = bit(A, w, 0, v), in_d = bit(D, w, 0, v), before = false;
    for (int32_t i = 0; i < ng && !before; i++)
      before = bit(W->strict, w, v, grp[i]);
    for (size_t j = 0; j < w; j++) {
      W->desc[(size_t)v * w + j] |= in_a ? D[j] : 0;
      W->anc[(size_t)v * w + j] |= in_d ? A[j] : 0;
      W->strict[(size_t)v * w + j] |= (in_a ? S[j] : 0) | (before ? D[j] : 0);
    }
    uint64_t self = ~(1ULL << (v % 64)); /* rows leave the node out */
    W->desc[(size_t)v * w + (size_t)v / 64] &= self;
    W->anc[(size_t)v * w + (size_t)v / 64] &= self;
    W->strict[(size_t)v * w + (size_t)v / 64] &= self;
  }
  free(A);
  return 0;
}

/* The far rule at each single node x not in G, in the contracted order,
 * within PC_FAR_BUDGET in all: its pairs into P->found; *none when x's
 * own figure is over the limit (then no plan groups G).  0, or -1 out of
 * memory. */
static int pc_far_nodes(pc_scan *P, const int32_t *grp, int32_t ng,
                        uint8_t *takers, bool *none) {
  double budget = 0;
  for (int32_t x = 0; x < P->W.n && budget < PC_FAR_BUDGET && !*none; x++) {
    bool member = false;
    for (int32_t i = 0; i < ng; i++)
      member |= x == grp[i];
    if (member)
      continue;
    double before = P->work;
    if (pc_far_group(P, &x, 1, takers, none) != 0)
      return -1;
    budget += P->work - before + 1;
  }
  return 0;
}

/* Contracts P's order for every group of nodes/start with two nodes or
 * more, twice over (a contraction may order what an earlier one needs);
 * *none when some group then holds two nodes never at one step.  0, or -1
 * out of memory. */
static int pc_contract_all(pc_scan *P, const int32_t *nodes,
                           const int32_t *start, int32_t n_groups, bool *none) {
  for (int pass = 0; pass < 2; pass++)
    for (int32_t i = 0; i < n_groups; i++) {
      const int32_t *grp = nodes + start[i];
      int32_t ng = start[i + 1] - start[i];
      if (ng > 1 && pc_contract(P, grp, ng) != 0)
        return -1;
      for (int32_t a = 0; a < ng; a++)
        for (int32_t b = 0; b < ng; b++)
          *none |= bit(P->W.strict, P->W.words, grp[a], grp[b]);
    }
  return 0;
}

/* Rounds of the far rule at forced groups: each order fact a round
 * proves (pc_fact) is added to the order, which may make the next round
 * see more. */
#define PC_FACT_ROUNDS 3

/* The far rule at the first group and, when the groups constrain the
 * order (many), at every single node, in rounds while the facts it proves
 * change the order.  0, or -1 out of memory. */
static int pc_far_rounds(pc_scan *P, const int32_t *nodes, const int32_t *start,
                         int32_t n_groups, bool many, uint8_t *takers,
                         bool *none) {
  int32_t ng = start[1];
  for (int round = 0; round < PC_FACT_ROUNDS && !*none; round++) {
    int32_t nf = P->nf;
    if (pc_far_group(P, nodes, ng, takers, none) != 0 ||
        (many && !*none && pc_far_nodes(P, nodes, ng, takers, none) != 0))
      return -1;
    bool changed = false;
    for (int32_t i = nf; i < P->nf && !*none; i++)
      pc_order(&P->W, P->fx[i], P->fy[i], P->fstrict[i], none, &changed);
    if (!changed || *none)
      break;
    if (pc_contract_all(P, nodes, start, n_groups, none) != 0)
      return -1;
  }
  return 0;
}

fp_status fp_peak_group_far(const fp_graph *g, int32_t max_fusion_size,
                            uint64_t limit, const int32_t *nodes,
                            const int32_t *start, int32_t n_groups, bool *none,
                            int32_t **pairs, int32_t *n_pairs, fp_error *err) {
  const char *fn = "peak group far";
  if (fp_arg_graph(g, fn, err) != FP_OK ||
      fp_arg_ptr(none, fn, "none", err) != FP_OK ||
      fp_arg_ptr(pairs, fn, "pairs", err) != FP_OK ||
      fp_arg_ptr(n_pairs, fn, "n_pairs", err) != FP_OK ||
      check_groups(g, nodes, start, n_groups, err) != FP_OK)
    return FP_EARG;
  *none = false, *pairs = NULL, *n_pairs = 0;
  int32_t ng = n_groups > 0 ? start[1] : 0;
  if (ng < 1 || !node_rule_affordable(g) || graph_size(g) > PB_MAX_CUT_SIZE)
    return FP_OK;
  pc_scan P;
  memset(&P, 0, sizeof P);
  P.limit = limit;
  fp_status st = work_build(&P.W, g, max_fusion_size, err);
  P.nb = fp_graph_buffer_count(g);
  P.resident = fp_graph_resident_bytes(g);
  P.mark = calloc((size_t)P.W.n + 1, sizeof *P.mark);
  uint8_t *takers = calloc((size_t)P.W.n + 1, 1);
  uint8_t *fact_y = calloc((size_t)P.W.n + 1, 1);
  bool many = ng > 1 || n_groups > 1; /* the order changes */
  for (int32_t i = 0; fact_y && many && i < start[n_groups]; i++)
    fact_y[nodes[i]] = 1;
  P.fact_y = fact_y;
  if (st == FP_OK &&
      (!P.mark || !takers || !fact_y ||
       pc_contract_all(&P, nodes, start, n_groups, none) != 0 ||
       pc_caps(&P) != 0 ||
       pc_far_rounds(&P, nodes, start, n_groups, many, takers, none) != 0 ||
       !(*pairs = malloc(2 * ((size_t)P.found.n + 1) * sizeof **pairs))))
    st = fp_error_set(err, FP_ENOMEM, "out of memory (%s)", fn);
  free(fact_y);
  for (int32_t i = 0; st == FP_OK && i < P.found.n; i++) {
    (*pairs)[2 * i] = P.found.p[i].u;
    (*pairs)[2 * i + 1] = P.found.p[i].v;
  }
  *n_pairs = st == FP_OK ? P.found.n : 0;
  free(takers);
  pc_free(&P);
  return st;
}
