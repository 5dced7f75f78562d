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
 * Cost: two n x n bit matrices and O(n * (buffers + reads)) bit tests; past
 * PB_MAX_NODES or PB_MAX_WORK the per-node rule falls back to x's own reads
 * and writes (still valid, weaker).
 */
#include <stdlib.h>
#include <string.h>

#include "model/peak_bound.h"

/* Past these sizes the bit matrices (2 n^2 / 8 bytes) or the bit tests cost
 * more than a bound is worth here. */
#define PB_MAX_NODES 16384
#define PB_MAX_WORK 400000000.0

typedef struct pb_work {
  const fp_graph *g;
  int32_t n, k;     /* nodes; fusion-size limit */
  size_t words;     /* 64-bit words per bit row */
  uint64_t *desc;   /* row v: nodes u != v with a path v -> ... -> u */
  uint64_t *strict; /* row w: nodes x with step(w) < step(x) in every plan */
  int32_t *pstart;  /* CSR: distinct producers of node x are */
  int32_t *pred;    /* pred[pstart[x] .. pstart[x + 1]) */
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
  int32_t *stamp = malloc(((size_t)W->n + 1) * sizeof *stamp);
  if (!W->pstart || !W->pred || !stamp) {
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
      for (size_t j = 0; j < W->words; j++)
        du[j] |= dx[j];
      set_bit(W->desc, W->words, W->pred[i], x);
    }
}

/* strict row of w, over w's descendants in topological order (the rule of
 * the file comment; producers of x are listed before x). */
static void build_strict_row(pb_work *W, int32_t w) {
  for (int32_t x = w + 1; x < W->n; x++) {
    if (!bit(W->desc, W->words, w, x))
      continue;
    bool later = !may_share(W, w, x);
    for (int32_t i = W->pstart[x]; !later && i < W->pstart[x + 1]; i++) {
      int32_t u = W->pred[i];
      if (u != w && !bit(W->desc, W->words, w, u))
        continue;
      later = (u != w && bit(W->strict, W->words, w, u)) || !may_share(W, u, x);
    }
    if (later)
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
static uint64_t end_cut_bound(const pb_work *W, uint64_t resident) {
  uint64_t first = UINT64_MAX, last = UINT64_MAX;
  for (int32_t x = 0; x < W->n; x++) {
    bool source = W->pstart[x] == W->pstart[x + 1], sink = is_sink(W->g, x);
    if (!source && !sink)
      continue;
    uint64_t at_first = 0, at_last = 0;
    for (int32_t b = 0; b < fp_graph_buffer_count(W->g); b++) {
      const fp_buffer *buf = fp_graph_buffer(W->g, b);
      bool freeable_in = buf->input && buf->freeable && !buf->output &&
                         buf->n_readers > 0,
           produced_out = !buf->input && buf->writer >= 0 && buf->output;
      bool live = live_at(W, buf, x);
      at_first += freeable_in || (live && !buf->input) ? buf->bytes : 0;
      at_last += produced_out || (live && !buf->output) ? buf->bytes : 0;
    }
    if (source && at_first < first)
      first = at_first;
    if (sink && at_last < last)
      last = at_last;
  }
  first = first == UINT64_MAX ? 0 : first;
  last = last == UINT64_MAX ? 0 : last;
  return resident + (first > last ? first : last);
}

static void work_free(pb_work *W) {
  free(W->desc);
  free(W->strict);
  free(W->pstart);
  free(W->pred);
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

/* The per-node rule over every node; *out is raised to the best. */
static fp_status node_rule(pb_work *W, uint64_t resident, uint64_t *out,
                           fp_error *err) {
  size_t cells = (size_t)W->n * W->words;
  W->desc = calloc(cells + 1, sizeof *W->desc);
  W->strict = calloc(cells + 1, sizeof *W->strict);
  if (!W->desc || !W->strict || build_preds(W) != 0)
    return fp_error_set(err, FP_ENOMEM, "out of memory (peak bound)");
  build_desc(W);
  for (int32_t w = 0; w < W->n; w++)
    build_strict_row(W, w);
  int32_t nb = fp_graph_buffer_count(W->g);
  int32_t *claim = malloc(((size_t)nb + 1) * sizeof *claim);
  if (!claim)
    return fp_error_set(err, FP_ENOMEM, "out of memory (peak bound)");
  memset(claim, 0xff, ((size_t)nb + 1) * sizeof *claim);
  for (int32_t x = 0; x < W->n; x++) {
    uint64_t s = resident;
    for (int32_t b = 0; b < nb; b++) {
      const fp_buffer *buf = fp_graph_buffer(W->g, b);
      if (live_at(W, buf, x))
        s += buf->bytes;
      else if (buf->input && buf->freeable && !buf->output)
        s += freed_input_floor(W, buf, x, claim);
    }
    *out = s > *out ? s : *out;
  }
  free(claim);
  uint64_t ends = end_cut_bound(W, resident);
  *out = ends > *out ? ends : *out;
  return FP_OK;
}

/* Whether the per-node rule fits the size limits above. */
static bool node_rule_affordable(const fp_graph *g) {
  double n = fp_graph_node_count(g), items = fp_graph_buffer_count(g);
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++)
    items += fp_graph_buffer(g, b)->n_readers;
  return n <= PB_MAX_NODES && n * items <= PB_MAX_WORK;
}

fp_status fp_peak_bound(const fp_graph *g, int32_t max_fusion_size,
                        uint64_t floor_bytes, uint64_t *out, fp_error *err) {
  uint64_t resident = fp_graph_resident_bytes(g);
  int32_t n = fp_graph_node_count(g);
  *out = floor_bytes > resident ? floor_bytes : resident;
  if (n == 0)
    return FP_OK;
  uint64_t ends = resident + end_steps_bound(g);
  *out = ends > *out ? ends : *out;
  if (!node_rule_affordable(g))
    return FP_OK;
  pb_work W;
  memset(&W, 0, sizeof W);
  W.g = g;
  W.n = n;
  W.k = max_fusion_size > 0 ? max_fusion_size : fp_graph_max_fusion_size(g);
  W.words = ((size_t)n + 63) / 64;
  uint64_t best = *out;
  fp_status st = node_rule(&W, resident, &best, err);
  if (st == FP_OK)
    *out = best;
  work_free(&W);
  return st;
}
