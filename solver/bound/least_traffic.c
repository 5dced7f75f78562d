/*
 * least_traffic.c -- the least traffic of a small graph, exactly
 * (least_traffic.h).
 *
 * Traffic does not depend on the order of the groups, only on the
 * grouping: a group reads each buffer it does not produce once, at its
 * largest per-read size, and writes each buffer it produces that is an
 * output, unread, or read outside it (docs/cost-model.md).  So a plan is
 * a path from the empty set to the set of all nodes, each step adding a
 * legal group S to the set D already run (S pairwise compatible, every
 * linked pair in S with a linker, at most k nodes, every writer of what
 * S reads in D or S), at a cost that
 * depends on S alone; and the least traffic is the shortest such path.
 * Every legal plan is one path and every path is a legal plan, so the
 * shortest path is the optimum, not a bound.
 *
 * Invariant: the states are processed by the number of nodes they hold,
 * fewest first, and every step adds at least one node, so a state's cost
 * is final when it is processed.  The groups S leaving a state are
 * enumerated by adding unscheduled nodes in index order (listed order is
 * a program order, so a node's writers come before it); a node may join
 * only when its unscheduled writers are already in S, which makes each
 * prefix of S legal too (but for linked pairs, checked on each S, not
 * on its prefixes), so every legal S is met exactly once.
 */
#include "solver/bound/least_traffic.h"

#include <stdlib.h>
#include <string.h>

#include "model/eval.h"
#include "model/util.h"

typedef uint64_t lt_mask;

/* A node's reads by buffer: each buffer it reads once, at the largest
 * bytes of its reads of it. */
typedef struct lt_read {
  int32_t buffer;
  uint64_t bytes;
} lt_read;

/* The graph as the search sees it, with what the incremental traffic of
 * grow needs: each node's distinct reads (CSR rstart/rd), the bytes it
 * writes, and per buffer its bytes and whether it is an output. */
typedef struct lt_graph {
  solver_node_sets sets;
  int32_t n, k;
  lt_mask all;
  int32_t rstart[SOLVER_LT_MAX_NODES + 1];
  lt_read *rd;
  uint64_t wbytes[SOLVER_LT_MAX_NODES];
  int32_t *writer;   /* per buffer */
  uint64_t *bbytes;  /* per buffer */
  uint8_t *output;   /* per buffer */
  uint8_t *freeable; /* per buffer: a freeable input that is read and not
                        an output (live until its last reader runs) */
  uint64_t resident; /* fp_graph_resident_bytes */
  uint64_t *curmax;  /* per buffer: largest read of it from memory by
                        the group being grown (0 when none) */
  uint64_t *undo;    /* stack of curmax values to restore */
  /* For the bound on what the nodes not yet run must still move (rest):
   * per buffer, the share that is certain while its writer has not run,
   * and its readers by their read bytes, largest first (CSR). */
  uint64_t *forced;
  int32_t *bstart;
  lt_read *byreader; /* .buffer holds the reader's node */
} lt_graph;

/* A hash table of states: set -> least cost found, the set it was
 * reached from (the path back, for the plan), and the bound of rest on
 * what is left.  full: 0 empty, 1 a state not worth expanding yet (its
 * cost plus rest reaches the search's upper limit), 2 one on its level
 * list. */
typedef struct lt_table {
  size_t cap, used; /* cap a power of two, used <= cap / 2 */
  lt_mask *key, *from;
  uint64_t *cost, *rest;
  uint64_t *peak; /* the path's largest live bytes (when tracked) */
  uint8_t *full;
} lt_table;

/* One part of a guide: a cluster graph whose node i is node node[i] of
 * the graph searched, and its states (sets of its nodes, bit i: node i)
 * with, in rest, the least traffic of completing it from each. */
typedef struct lt_part {
  int32_t n;
  int32_t node[SOLVER_LT_MAX_NODES];
  lt_table T;
} lt_part;

/* The parts' cluster graphs hold disjoint sets of the buffers with bytes
 * (least_traffic.h). */
struct solver_lt_guide {
  int32_t count, cap;
  lt_part *part;
};

/* States by the number of nodes they hold. */
typedef struct lt_levels {
  lt_mask *set[SOLVER_LT_MAX_NODES + 1];
  int64_t n[SOLVER_LT_MAX_NODES + 1], cap[SOLVER_LT_MAX_NODES + 1];
} lt_levels;

typedef struct lt_search {
  const fp_graph *g; /* the graph searched (its in-place pairs) */
  lt_graph X;
  lt_table T;
  lt_levels L;
  int64_t budget, work, undo_top;
  uint64_t upper;               /* only plans of less traffic are searched */
  int32_t nb;                   /* buffers of the graph */
  const solver_lt_guide *guide; /* NULL: rest alone bounds what is left */
  /* The backward pass of the cost to go (togo_pass): grow then takes,
   * over the groups leaving a state, the least group cost plus the cost
   * to go of the state reached, into best. */
  bool pull;
  uint64_t best;
  /* With peaks: every step's live bytes are at most limit, and among
   * paths of equal cost a state keeps the one of least peak.  live0: the
   * live bytes of the state being expanded before its group's writes;
   * dpeak: its path's peak. */
  bool peaks;
  uint64_t limit, live0, dpeak;
  /* The priced step (solver_lt_limits.at_node, -1: none): the group
   * holding node `at` costs at_w per byte live above the resident ones. */
  int32_t at;
  uint64_t at_w;
  const uint64_t *at_credit; /* solver_lt_limits.at_credit */
  double deadline;
  const volatile sig_atomic_t *cancel;
  bool stopped, nomem;
} lt_search;

/* ---- the graph --------------------------------------------------------- */

void solver_node_sets_free(solver_node_sets *X) {
  free(X->readers);
  free(X->stamp);
  free(X->cur);
  X->readers = X->stamp = X->cur = NULL;
}

/* Readers and touch sets of every buffer. */
static void buffer_sets(solver_node_sets *X) {
  for (int32_t b = 0; b < fp_graph_buffer_count(X->g); b++) {
    const fp_buffer *buf = fp_graph_buffer(X->g, b);
    for (int32_t i = 0; i < buf->n_readers; i++)
      X->readers[b] |= (lt_mask)1 << buf->readers[i];
    lt_mask all =
        X->readers[b] | (buf->writer >= 0 ? (lt_mask)1 << buf->writer : 0);
    for (lt_mask rest = all; rest; rest &= rest - 1)
      X->touch[__builtin_ctzll(rest)] |= all;
  }
}

/* The linkers of linked pair l as a mask, with u and v when `pair`. */
static lt_mask linked_mask(const fp_linked *l, bool pair) {
  lt_mask m = pair ? (lt_mask)1 << l->u | (lt_mask)1 << l->v : 0;
  for (int32_t j = 0; j < l->n_via; j++)
    m |= (lt_mask)1 << l->via[j];
  return m;
}

int solver_node_sets_init(solver_node_sets *X, const fp_graph *g) {
  memset(X, 0, sizeof *X);
  X->g = g;
  X->n = fp_graph_node_count(g);
  size_t nb = (size_t)fp_graph_buffer_count(g) + 1;
  X->readers = calloc(nb, sizeof *X->readers);
  X->stamp = calloc(nb, sizeof *X->stamp);
  X->cur = calloc(nb, sizeof *X->cur);
  if (!X->readers || !X->stamp || !X->cur) {
    solver_node_sets_free(X);
    return -1;
  }
  buffer_sets(X);
  for (int32_t v = 0; v < X->n; v++) {
    const fp_node *nd = fp_graph_node(g, v);
    for (int32_t i = 0; i < nd->n_reads; i++) {
      int32_t w = fp_graph_buffer(g, nd->reads[i].buffer)->writer;
      if (w >= 0 && w != v)
        X->pred[v] |= (lt_mask)1 << w;
    }
    for (int32_t u = 0; u < X->n; u++)
      if (fp_graph_compatible(g, u, v))
        X->compat[v] |= (lt_mask)1 << u;
  }
  /* A linked pair and its linkers touch (see connected): a group that
   * falls apart into parts sharing no buffer then keeps every linked
   * pair with its linker in one part. */
  for (int32_t i = 0; i < fp_graph_linked_count(g); i++) {
    lt_mask all = linked_mask(fp_graph_linked(g, i), true);
    for (lt_mask rest = all; rest; rest &= rest - 1)
      X->touch[__builtin_ctzll(rest)] |= all;
  }
  return 0;
}

bool solver_group_linked_ok(const solver_node_sets *X, lt_mask s) {
  for (int32_t i = 0; i < fp_graph_linked_count(X->g); i++) {
    const fp_linked *l = fp_graph_linked(X->g, i);
    if ((s >> l->u & 1) && (s >> l->v & 1) && !(s & linked_mask(l, false)))
      return false;
  }
  return true;
}

uint64_t solver_group_traffic(solver_node_sets *X, lt_mask s) {
  uint64_t sum = 0, id = ++X->stamp_id;
  for (lt_mask rest = s; rest; rest &= rest - 1) {
    const fp_node *nd = fp_graph_node(X->g, __builtin_ctzll(rest));
    for (int32_t i = 0; i < nd->n_reads; i++) {
      int32_t b = nd->reads[i].buffer, w = fp_graph_buffer(X->g, b)->writer;
      uint64_t bytes = nd->reads[i].bytes;
      if (w >= 0 && (s >> w & 1))
        continue; /* produced inside the group */
      if (X->stamp[b] != id) {
        X->stamp[b] = id;
        X->cur[b] = bytes;
        sum += bytes;
      } else if (bytes > X->cur[b]) {
        sum += bytes - X->cur[b];
        X->cur[b] = bytes;
      }
    }
    for (int32_t i = 0; i < nd->n_writes; i++) {
      const fp_buffer *buf = fp_graph_buffer(X->g, nd->writes[i]);
      lt_mask rd = X->readers[nd->writes[i]];
      if (buf->output || !rd || (rd & ~s))
        sum += buf->bytes;
    }
  }
  return sum;
}

/* Whether the nodes of s are connected through the buffers they share.
 * Only such groups need trying: a group whose parts share no buffer
 * costs exactly what its parts cost run one after the other (no buffer
 * is read or written by both), and that is a legal plan too (each part
 * only needs the other's writers, of which there are none), so some
 * least-traffic plan has connected groups only. */
static bool connected(const solver_node_sets *X, lt_mask s) {
  lt_mask seen = s & -s, edge = seen;
  while (edge) {
    lt_mask next = 0;
    for (lt_mask rest = edge; rest; rest &= rest - 1)
      next |= X->touch[__builtin_ctzll(rest)];
    edge = next & s & ~seen;
    seen |= edge;
  }
  return seen == s;
}

static void lt_graph_free(lt_graph *G) {
  solver_node_sets_free(&G->sets);
  free(G->rd);
  free(G->writer);
  free(G->bbytes);
  free(G->output);
  free(G->freeable);
  free(G->curmax);
  free(G->undo);
  free(G->forced);
  free(G->bstart);
  free(G->byreader);
}

/* Node v's reads, each buffer once at its largest bytes, appended to
 * G->rd from G->rstart[v]; returns how many. */
static int32_t distinct_reads(lt_graph *G, const fp_graph *g, int32_t v) {
  const fp_node *nd = fp_graph_node(g, v);
  lt_read *out = G->rd + G->rstart[v];
  int32_t n = 0;
  for (int32_t i = 0; i < nd->n_reads; i++) {
    int32_t j = 0;
    while (j < n && out[j].buffer != nd->reads[i].buffer)
      j++;
    if (j == n)
      out[n++] = (lt_read){nd->reads[i].buffer, 0};
    if (nd->reads[i].bytes > out[j].bytes)
      out[j].bytes = nd->reads[i].bytes;
  }
  return n;
}

static int by_bytes_desc(const void *x, const void *y) {
  const lt_read *p = x, *q = y;
  if (p->bytes != q->bytes)
    return p->bytes > q->bytes ? -1 : 1;
  return p->buffer - q->buffer;
}

/* The readers of every buffer by read bytes, largest first, and each
 * buffer's certain share while its writer has not run (see rest).  0, or
 * -1 when out of memory. */
static int rest_tables(lt_graph *G, const fp_graph *g) {
  int32_t nb = fp_graph_buffer_count(g);
  G->forced = calloc((size_t)nb + 1, sizeof *G->forced);
  G->bstart = calloc((size_t)nb + 2, sizeof *G->bstart);
  G->byreader = malloc(((size_t)G->rstart[G->n] + 1) * sizeof *G->byreader);
  if (!G->forced || !G->bstart || !G->byreader)
    return -1;
  for (int32_t i = 0; i < G->rstart[G->n]; i++)
    G->bstart[G->rd[i].buffer + 2]++;
  for (int32_t b = 0; b < nb; b++)
    G->bstart[b + 2] += G->bstart[b + 1];
  for (int32_t v = 0; v < G->n; v++)
    for (int32_t i = G->rstart[v]; i < G->rstart[v + 1]; i++)
      G->byreader[G->bstart[G->rd[i].buffer + 1]++] =
          (lt_read){v, G->rd[i].bytes};
  for (int32_t b = 0; b < nb; b++) {
    lt_read *r = G->byreader + G->bstart[b];
    int32_t n = G->bstart[b + 1] - G->bstart[b], w = G->writer[b];
    qsort(r, (size_t)n, sizeof *r, by_bytes_desc);
    uint64_t apart = 0; /* largest read by a reader that cannot join w */
    for (int32_t i = 0; w >= 0 && i < n && !apart; i++)
      if (!(G->sets.compat[w] >> r[i].buffer & 1))
        apart = r[i].bytes;
    if (w >= 0 && (G->output[b] || n == 0 || apart))
      G->forced[b] = G->bbytes[b] + apart;
  }
  return 0;
}

/* Fills G for g (at most SOLVER_LT_MAX_NODES nodes).  0, or -1 when out
 * of memory (G is then freed). */
static int lt_graph_init(lt_graph *G, const fp_graph *g, int32_t k) {
  int32_t n = fp_graph_node_count(g), nb = fp_graph_buffer_count(g);
  size_t reads = 1;
  memset(G, 0, sizeof *G);
  G->n = n;
  G->k = k;
  G->all = n == 64 ? ~(lt_mask)0 : (((lt_mask)1 << n) - 1);
  for (int32_t v = 0; v < n; v++)
    reads += (size_t)fp_graph_node(g, v)->n_reads;
  G->rd = malloc(reads * sizeof *G->rd);
  G->undo = malloc(2 * reads * sizeof *G->undo); /* (old, buffer) pairs */
  G->writer = malloc(((size_t)nb + 1) * sizeof *G->writer);
  G->bbytes = malloc(((size_t)nb + 1) * sizeof *G->bbytes);
  G->output = malloc((size_t)nb + 1);
  G->freeable = malloc((size_t)nb + 1);
  G->curmax = calloc((size_t)nb + 1, sizeof *G->curmax);
  if (!G->rd || !G->undo || !G->writer || !G->bbytes || !G->output ||
      !G->freeable || !G->curmax || solver_node_sets_init(&G->sets, g) != 0) {
    lt_graph_free(G);
    return -1;
  }
  for (int32_t b = 0; b < nb; b++) {
    const fp_buffer *buf = fp_graph_buffer(g, b);
    G->writer[b] = buf->writer;
    G->bbytes[b] = buf->bytes;
    G->output[b] = buf->output;
    G->freeable[b] =
        buf->input && buf->freeable && !buf->output && buf->n_readers > 0;
  }
  G->resident = fp_graph_resident_bytes(g);
  for (int32_t v = 0; v < n; v++) {
    const fp_node *nd = fp_graph_node(g, v);
    G->rstart[v + 1] = G->rstart[v] + distinct_reads(G, g, v);
    for (int32_t i = 0; i < nd->n_writes; i++)
      G->wbytes[v] += fp_graph_buffer(g, nd->writes[i])->bytes;
  }
  if (rest_tables(G, g) != 0) {
    lt_graph_free(G);
    return -1;
  }
  return 0;
}

/* A lower bound on the traffic the groups of the nodes not in d must
 * still move, whatever they are: a sum over buffers, each term a bound on
 * that buffer's share in those groups.  A buffer whose writer has run
 * (or an input) is read from memory by every group holding one of its
 * readers not yet run: at least the largest such read.  A buffer whose
 * writer has not run is written when it is an output or unread, and
 * written and read again when a reader can never share the writer's
 * group (forced).  The writes of what d's groups produce are in d's
 * cost already. */
static uint64_t rest(const lt_graph *G, int32_t nb, lt_mask d) {
  lt_mask u = G->all & ~d;
  uint64_t sum = 0;
  for (int32_t b = 0; b < nb; b++) {
    int32_t w = G->writer[b];
    if (w >= 0 && (u >> w & 1))
      sum += G->forced[b];
    else if (G->sets.readers[b] & u)
      for (int32_t i = G->bstart[b]; i < G->bstart[b + 1]; i++)
        if (u >> G->byreader[i].buffer & 1) {
          sum += G->byreader[i].bytes;
          break;
        }
  }
  return sum;
}

/* ---- states ------------------------------------------------------------ */

static void table_free(lt_table *T) {
  free(T->key);
  free(T->from);
  free(T->cost);
  free(T->rest);
  free(T->peak);
  free(T->full);
  memset(T, 0, sizeof *T);
}

static size_t slot_of(const lt_table *T, lt_mask key) {
  uint64_t h = key * 0x9e3779b97f4a7c15ull;
  h ^= h >> 29;
  size_t i = (size_t)h & (T->cap - 1);
  while (T->full[i] && T->key[i] != key)
    i = (i + 1) & (T->cap - 1);
  return i;
}

/* Empty table of cap slots (a power of two).  -1 when out of memory. */
static int table_init(lt_table *T, size_t cap) {
  memset(T, 0, sizeof *T);
  T->cap = cap;
  T->key = malloc(cap * sizeof *T->key);
  T->from = malloc(cap * sizeof *T->from);
  T->cost = malloc(cap * sizeof *T->cost);
  T->rest = malloc(cap * sizeof *T->rest);
  T->peak = malloc(cap * sizeof *T->peak);
  T->full = calloc(cap, 1);
  if (T->key && T->from && T->cost && T->rest && T->peak && T->full)
    return 0;
  table_free(T);
  return -1;
}

/* Doubles T's slots.  -1 when out of memory (T unchanged). */
static int table_grow(lt_table *T) {
  lt_table N;
  if (table_init(&N, 2 * T->cap) != 0)
    return -1;
  for (size_t i = 0; i < T->cap; i++)
    if (T->full[i]) {
      size_t j = slot_of(&N, T->key[i]);
      N.full[j] = T->full[i];
      N.key[j] = T->key[i];
      N.from[j] = T->from[i];
      N.cost[j] = T->cost[i];
      N.rest[j] = T->rest[i];
      N.peak[j] = T->peak[i];
    }
  N.used = T->used;
  table_free(T);
  *T = N;
  return 0;
}

/* The guide's bound on what the nodes not in d must still move: the sum
 * of each part's cost to go from the nodes of d it holds.  d is a set
 * every writer of whose members is in it, so its share of a part is a
 * state of the part's search (its cluster graph's order is the graph's). */
static uint64_t guide_rest(const solver_lt_guide *G, lt_mask d) {
  uint64_t sum = 0;
  for (int32_t p = 0; p < G->count; p++) {
    const lt_part *P = &G->part[p];
    lt_mask local = 0;
    for (int32_t j = 0; j < P->n; j++)
      local |= (d >> P->node[j] & 1) << j;
    size_t i = slot_of(&P->T, local);
    if (P->T.full[i]) /* always: else the bound only gets weaker */
      sum += P->T.rest[i];
  }
  return sum;
}

/* What the nodes not in d must still move, at least: the larger of the
 * two bounds, both valid for every completion of d. */
static uint64_t state_rest(const lt_search *S, lt_mask d) {
  uint64_t r = rest(&S->X, S->nb, d);
  uint64_t h = S->guide ? guide_rest(S->guide, d) : 0;
  return h > r ? h : r;
}

static int level_push(lt_levels *L, int32_t at, lt_mask s) {
  if (L->n[at] == L->cap[at]) {
    int64_t cap = L->cap[at] ? 2 * L->cap[at] : 16;
    lt_mask *p = realloc(L->set[at], (size_t)cap * sizeof *p);
    if (!p)
      return -1;
    L->set[at] = p;
    L->cap[at] = cap;
  }
  L->set[at][L->n[at]++] = s;
  return 0;
}

/* Records that `to` is reached from `from` at `cost`, its path's peak
 * `peak`, when that is less than known (with peaks: the cost, then the
 * peak; taking the least peak among equal costs is exact for the pair,
 * as neither a sum nor a maximum ever reverses their order); a state
 * joins its level once its cost plus the bound on what is left is under
 * the upper limit (states at or over it cannot lead to a plan under
 * it).  Sets S->nomem on failure. */
static void relax(lt_search *S, lt_mask to, lt_mask from, uint64_t cost,
                  uint64_t peak) {
  lt_table *T = &S->T;
  if (T->used + 1 > T->cap / 2 && table_grow(T) != 0) {
    S->nomem = true;
    return;
  }
  size_t i = slot_of(T, to);
  if (T->full[i]) {
    if (cost > T->cost[i] || (cost == T->cost[i] && peak >= T->peak[i]))
      return;
    T->cost[i] = cost;
    T->peak[i] = peak;
    T->from[i] = from;
  } else {
    T->full[i] = 1;
    T->key[i] = to;
    T->from[i] = from;
    T->cost[i] = cost;
    T->peak[i] = peak;
    /* Without an upper limit nothing is pruned: skip the O(buffers) sum. */
    T->rest[i] = S->upper == UINT64_MAX ? 0 : state_rest(S, to);
    T->used++;
  }
  if (T->full[i] == 1 && T->rest[i] < S->upper &&
      cost < S->upper - T->rest[i]) {
    if (level_push(&S->L, __builtin_popcountll(to), to) != 0) {
      S->nomem = true;
      return;
    }
    T->full[i] = 2;
  }
}

/* ---- the search -------------------------------------------------------- */

/* Whether the search must stop now: budget, clock, cancel or memory. */
static bool must_stop(lt_search *S) {
  if (S->stopped || S->nomem)
    return true;
  if (++S->work > S->budget ||
      ((S->work & 255) == 0 &&
       (fp_clock_now() > S->deadline || (S->cancel && *S->cancel))))
    S->stopped = true;
  return S->stopped;
}

/* The traffic of group s + {v}, from cost_s, the traffic of s (every node
 * of s before v in index order, v's writers in s or already run), and
 * G->curmax, which it updates for s + {v}; the old values go on the undo
 * stack.  v's writes all count: their readers come after v, outside the
 * group so far.  A buffer of a writer in s that v reads is produced
 * inside; its write stops counting when v was its last reader outside.
 * Any other buffer v reads costs what v reads of it beyond the group's
 * largest read so far.  This is solver_group_traffic's sum, built one
 * node at a time.  *writes gets the same changes to the bytes the group
 * writes (each of them is live during its step). */
static uint64_t add_node(lt_search *S, lt_mask s, int32_t v, uint64_t cost_s,
                         uint64_t *writes) {
  lt_graph *G = &S->X;
  lt_mask s2 = s | (lt_mask)1 << v;
  uint64_t cost = cost_s + G->wbytes[v];
  *writes += G->wbytes[v];
  for (int32_t i = G->rstart[v]; i < G->rstart[v + 1]; i++) {
    int32_t b = G->rd[i].buffer, w = G->writer[b];
    if (w >= 0 && (s >> w & 1)) {
      if (!G->output[b] && !(G->sets.readers[b] & ~s2)) {
        cost -= G->bbytes[b];
        *writes -= G->bbytes[b];
      }
    } else if (G->rd[i].bytes > G->curmax[b]) {
      cost += G->rd[i].bytes - G->curmax[b];
      G->undo[S->undo_top++] = G->curmax[b];
      G->undo[S->undo_top++] = (uint64_t)b;
      G->curmax[b] = G->rd[i].bytes;
    }
  }
  return cost;
}

/* The backward pass's step: a group of traffic `cost` leads to state
 * `to`, whose cost to go is final (it holds more nodes). */
static void pull(lt_search *S, lt_mask to, uint64_t cost) {
  size_t i = slot_of(&S->T, to);
  if (S->T.full[i] && cost + S->T.rest[i] < S->best)
    S->best = cost + S->T.rest[i];
}

/* Restores G->curmax down to undo-stack height mark. */
static void undo_to(lt_search *S, int64_t mark) {
  while (S->undo_top > mark) {
    int32_t b = (int32_t)S->X.undo[--S->undo_top];
    S->X.curmax[b] = S->X.undo[--S->undo_top];
  }
}

/* The in-place credit of group s2 at the priced step: the at_credit
 * bytes of the buffers it writes that stay materialized (an output,
 * unread, or with a reader outside s2), each among `writes` (add_node),
 * so never more than them. */
static uint64_t step_credit(const lt_search *S, lt_mask s2) {
  uint64_t c = 0;
  for (lt_mask m = s2; m; m &= m - 1) {
    const fp_node *nd = fp_graph_node(S->g, __builtin_ctzll(m));
    for (int32_t j = 0; j < nd->n_writes; j++) {
      int32_t b = nd->writes[j];
      lt_mask r = S->X.sets.readers[b];
      if (S->at_credit[b] && (S->X.output[b] || !r || (r & ~s2)))
        c += S->at_credit[b];
    }
  }
  return c;
}

/* The step of group s2 (writing `writes` bytes) from state d, for the
 * search: the cost to go of the backward pass, or the state reached,
 * with peaks only when the step's live bytes fit the limit. */
static void step(lt_search *S, lt_mask d, lt_mask s2, uint64_t cost,
                 uint64_t writes) {
  /* The step's live bytes, less its in-place takeovers (model/eval.c),
   * which depend on d and s2, plus s2's workspaces: needed to price the step at
   * S->at and to hold it to the limit. */
  bool priced = S->at >= 0 && (s2 >> S->at & 1);
  uint64_t live = 0;
  if (priced || (S->peaks && !S->pull))
    live = S->live0 + writes - fp_inplace_mask_saving(S->g, d, s2) +
           fp_graph_mask_workspace(S->g, s2);
  if (priced)
    cost += S->at_w *
            (live - (S->at_credit ? step_credit(S, s2) : 0) - S->X.resident);
  if (S->pull) {
    pull(S, d | s2, cost);
    return;
  }
  if (!S->peaks) {
    relax(S, d | s2, d, cost, 0);
    return;
  }
  if (live <= S->limit)
    relax(S, d | s2, d, cost, live > S->dpeak ? live : S->dpeak);
}

/* Every legal group leaving state d (u: its unscheduled nodes) that
 * extends s (size nodes, all below index `from`, traffic cost_s, writing
 * writes_s bytes) by nodes of index `from` and up; each one is a step
 * from d, at cost base + its traffic. */
static void grow(lt_search *S, lt_mask d, lt_mask u, lt_mask s, int32_t size,
                 int32_t from, uint64_t base, uint64_t cost_s,
                 uint64_t writes_s) {
  const solver_node_sets *X = &S->X.sets;
  lt_mask cand = from >= 64 ? 0 : u & (~(lt_mask)0 << from);
  for (; cand; cand &= cand - 1) {
    int32_t v = __builtin_ctzll(cand);
    if ((X->pred[v] & u & ~s) || (s & ~X->compat[v]))
      continue; /* a writer not yet run, or a node it cannot join */
    if (must_stop(S))
      return;
    lt_mask s2 = s | (lt_mask)1 << v;
    int64_t mark = S->undo_top;
    uint64_t writes = writes_s;
    uint64_t cost = add_node(S, s, v, cost_s, &writes);
    if (connected(X, s2) && solver_group_linked_ok(X, s2))
      step(S, d, s2, base + cost, writes);
    if (size + 1 < S->X.k)
      grow(S, d, u, s2, size + 1, v + 1, base, cost, writes);
    undo_to(S, mark);
  }
}

static void levels_free(lt_levels *L) {
  for (int32_t i = 0; i <= SOLVER_LT_MAX_NODES; i++)
    free(L->set[i]);
}

/* The bytes live during every step run from state d, before the step's
 * own writes (the evaluator's lifetimes, model/eval.c): the resident
 * inputs, each freeable input some reader of which has not run, and each
 * buffer written in d that is an output or has a reader not in d (it is
 * then materialized: that reader runs in a later group).  A function of
 * d alone, so the live bytes of a step are d's plus its group's writes,
 * and a plan's peak is the largest over its steps. */
static uint64_t live_base(const lt_search *S, lt_mask d) {
  const lt_graph *G = &S->X;
  uint64_t sum = G->resident;
  for (int32_t b = 0; b < S->nb; b++) {
    int32_t w = G->writer[b];
    bool unread = (G->sets.readers[b] & ~d) != 0;
    if (w < 0 ? G->freeable[b] && unread
              : (d >> w & 1) && (G->output[b] || unread))
      sum += G->bbytes[b];
  }
  return sum;
}

/* Runs the search over every level; the answer is the state `all`. */
static void run(lt_search *S) {
  relax(S, 0, 0, 0, 0);
  for (int32_t at = 0; at < S->X.n && !S->stopped && !S->nomem; at++)
    for (int64_t i = 0; i < S->L.n[at] && !S->stopped && !S->nomem; i++) {
      lt_mask d = S->L.set[at][i];
      size_t slot = slot_of(&S->T, d);
      if (S->peaks || S->at >= 0)
        S->live0 = live_base(S, d);
      if (S->peaks)
        S->dpeak = S->T.peak[slot];
      grow(S, d, S->X.all & ~d, 0, 0, 0, S->T.cost[slot], 0, 0);
    }
}

/* The path back from `all` as a plan into p, groups in run order. */
static fp_status path_plan(const lt_search *S, fp_plan *p, fp_error *err) {
  lt_mask chain[SOLVER_LT_MAX_NODES + 1];
  int32_t depth = 0;
  for (lt_mask at = S->X.all; at; at = S->T.from[slot_of(&S->T, at)])
    chain[depth++] = at;
  fp_plan_clear(p);
  for (int32_t t = depth - 1; t >= 0; t--) {
    lt_mask grp = chain[t] & ~(t + 1 < depth ? chain[t + 1] : 0);
    int32_t nodes[SOLVER_LT_MAX_NODES], len = 0;
    for (; grp; grp &= grp - 1)
      nodes[len++] = __builtin_ctzll(grp);
    fp_status st = fp_plan_add_group(p, nodes, len, err);
    if (st != FP_OK)
      return st;
  }
  return FP_OK;
}

/* The evaluator's figures for plan p, into *m, and its cost as the
 * search counts it into *cost: the traffic, plus the priced step's live
 * bytes above the resident ones, less its in-place credit, times its
 * weight.  FP_OK or the evaluator's error. */
static fp_status eval_cost(const lt_search *S, const fp_plan *p, fp_metrics *m,
                           uint64_t *cost, fp_error *err) {
  fp_step tl[SOLVER_LT_MAX_NODES];
  fp_status st = fp_plan_eval_k(S->X.sets.g, p, S->X.k, m, tl, err);
  *cost = m->traffic_bytes;
  for (int32_t t = 0; st == FP_OK && S->at >= 0 && t < fp_plan_group_count(p);
       t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, t, &len);
    lt_mask s2 = 0;
    for (int32_t i = 0; i < len; i++)
      s2 |= (lt_mask)1 << grp[i];
    if (s2 >> S->at & 1)
      *cost += S->at_w * (tl[t].live_bytes - m->resident_bytes -
                          (S->at_credit ? step_credit(S, s2) : 0));
  }
  return st;
}

/* The evaluator's figures for the path found must be the search's: its
 * cost (eval_cost), and with peaks its peak. */
static fp_status confirm(const lt_search *S, fp_plan *p, uint64_t traffic,
                         uint64_t peak, fp_error *err) {
  fp_metrics m;
  uint64_t cost = 0;
  fp_status st = path_plan(S, p, err);
  if (st == FP_OK)
    st = eval_cost(S, p, &m, &cost, err);
  if (st == FP_OK && cost != traffic)
    st = fp_error_set(err, FP_EINTERNAL,
                      "least traffic: search figure %llu disagrees with the "
                      "evaluator's %llu",
                      (unsigned long long)traffic, (unsigned long long)cost);
  if (st == FP_OK && S->peaks && m.peak_bytes != peak)
    st = fp_error_set(err, FP_EINTERNAL,
                      "least traffic: search peak %llu disagrees with the "
                      "evaluator's %llu",
                      (unsigned long long)peak,
                      (unsigned long long)m.peak_bytes);
  return st;
}

/* Sets up S for g under fusion limit k, searching below upper.  FP_OK,
 * or FP_ENOMEM (S is then freed). */
static fp_status search_init(lt_search *S, const fp_graph *g, int32_t k,
                             uint64_t upper, int64_t budget, double deadline,
                             const volatile sig_atomic_t *cancel,
                             fp_error *err) {
  memset(S, 0, sizeof *S);
  S->at = -1; /* no priced step */
  S->budget = budget;
  S->deadline = deadline;
  S->cancel = cancel;
  S->upper = upper;
  S->nb = fp_graph_buffer_count(g);
  S->g = g;
  if (lt_graph_init(&S->X, g, k) != 0)
    return fp_error_set(err, FP_ENOMEM, "least traffic: out of memory");
  if (table_init(&S->T, 64) != 0) {
    lt_graph_free(&S->X);
    return fp_error_set(err, FP_ENOMEM, "least traffic: out of memory");
  }
  return FP_OK;
}

static void search_free(lt_search *S) {
  levels_free(&S->L);
  table_free(&S->T);
  lt_graph_free(&S->X);
}

void solver_lt_limits_init(solver_lt_limits *lim) {
  lim->upper = UINT64_MAX;
  lim->peak_limit = UINT64_MAX;
  lim->by_peak = false;
  lim->at_node = -1;
  lim->at_weight = 0;
  lim->at_credit = NULL;
}

fp_status solver_least_traffic_guided(const fp_graph *g, int32_t k,
                                      const solver_lt_limits *lim,
                                      const solver_lt_guide *guide,
                                      int64_t budget, double deadline,
                                      const volatile sig_atomic_t *cancel,
                                      fp_plan *plan, solver_lt_result *out,
                                      fp_error *err) {
  uint64_t upper = lim->upper;
  memset(out, 0, sizeof *out);
  if (fp_graph_node_count(g) > SOLVER_LT_MAX_NODES || k < 1)
    return FP_OK;
  lt_search S;
  fp_plan *scratch = plan ? NULL : fp_plan_create();
  if (!plan && !scratch)
    return fp_error_set(err, FP_ENOMEM, "least traffic: out of memory");
  fp_status st = search_init(&S, g, k, upper, budget, deadline, cancel, err);
  if (st != FP_OK) {
    fp_plan_destroy(scratch);
    return st;
  }
  S.guide = guide && guide->count > 0 ? guide : NULL;
  S.peaks = lim->by_peak || lim->peak_limit != UINT64_MAX;
  S.limit = lim->peak_limit;
  S.at = lim->at_node < fp_graph_node_count(g) ? lim->at_node : -1;
  S.at_w = lim->at_weight;
  S.at_credit = lim->at_credit;
  run(&S);
  out->work = S.work;
  if (S.nomem)
    st = fp_error_set(err, FP_ENOMEM, "least traffic: out of memory");
  else if (!S.stopped) {
    size_t at = slot_of(&S.T, S.X.all);
    out->solved = true;
    out->found = S.T.full[at] == 2; /* reached under the upper limit */
    out->traffic = out->found ? S.T.cost[at] : upper;
    out->peak = out->found && S.peaks ? S.T.peak[at] : 0;
    if (out->found) {
      st = confirm(&S, plan ? plan : scratch, out->traffic, out->peak, err);
      out->solved = st == FP_OK;
    }
  }
  search_free(&S);
  fp_plan_destroy(scratch);
  return st;
}

fp_status solver_least_traffic_below(const fp_graph *g, int32_t k,
                                     uint64_t upper, int64_t budget,
                                     double deadline,
                                     const volatile sig_atomic_t *cancel,
                                     fp_plan *plan, solver_lt_result *out,
                                     fp_error *err) {
  solver_lt_limits lim;
  solver_lt_limits_init(&lim);
  lim.upper = upper;
  return solver_least_traffic_guided(g, k, &lim, NULL, budget, deadline, cancel,
                                     plan, out, err);
}

fp_status solver_least_traffic(const fp_graph *g, int32_t k, int64_t budget,
                               double deadline,
                               const volatile sig_atomic_t *cancel,
                               fp_plan *plan, solver_lt_result *out,
                               fp_error *err) {
  return solver_least_traffic_below(g, k, UINT64_MAX, budget, deadline, cancel,
                                    plan, out, err);
}

/* ---- guides: the cost to go of cluster graphs --------------------------- */

/* The backward pass over the states the forward one found (every state:
 * nothing was pruned), most nodes first: each state's cost to go is the
 * least, over the groups leaving it, of the group's traffic plus the cost
 * to go of the state it reaches, which holds more nodes and is final.
 * Into T.rest (the forward pass left 0 there). */
static void togo_pass(lt_search *S) {
  S->T.rest[slot_of(&S->T, S->X.all)] = 0;
  S->pull = true;
  for (int32_t at = S->X.n - 1; at >= 0 && !S->stopped && !S->nomem; at--)
    for (int64_t i = 0; i < S->L.n[at] && !S->stopped && !S->nomem; i++) {
      lt_mask d = S->L.set[at][i];
      S->best = UINT64_MAX;
      grow(S, d, S->X.all & ~d, 0, 0, 0, 0, 0, 0);
      S->T.rest[slot_of(&S->T, d)] = S->best;
    }
}

solver_lt_guide *solver_lt_guide_create(void) {
  return calloc(1, sizeof(solver_lt_guide));
}

void solver_lt_guide_destroy(solver_lt_guide *G) {
  if (!G)
    return;
  for (int32_t p = 0; p < G->count; p++)
    table_free(&G->part[p].T);
  free(G->part);
  free(G);
}

int32_t solver_lt_guide_parts(const solver_lt_guide *G) {
  return G ? G->count : 0;
}

/* Room for one more part.  -1 when out of memory. */
static int guide_reserve(solver_lt_guide *G) {
  if (G->count < G->cap)
    return 0;
  int32_t cap = G->cap ? 2 * G->cap : 8;
  lt_part *p = realloc(G->part, (size_t)cap * sizeof *p);
  if (!p)
    return -1;
  G->part = p;
  G->cap = cap;
  return 0;
}

fp_status solver_lt_guide_add(solver_lt_guide *G, const fp_graph *sg,
                              const int32_t *node, int32_t k, int64_t budget,
                              double deadline,
                              const volatile sig_atomic_t *cancel, bool *added,
                              fp_error *err) {
  int32_t n = fp_graph_node_count(sg);
  *added = false;
  if (n > SOLVER_LT_MAX_NODES || k < 1)
    return FP_OK;
  if (guide_reserve(G) != 0)
    return fp_error_set(err, FP_ENOMEM, "least traffic: out of memory");
  lt_search S;
  fp_status st =
      search_init(&S, sg, k, UINT64_MAX, budget, deadline, cancel, err);
  if (st != FP_OK)
    return st;
  run(&S);
  if (!S.stopped && !S.nomem)
    togo_pass(&S);
  if (S.nomem)
    st = fp_error_set(err, FP_ENOMEM, "least traffic: out of memory");
  else if (!S.stopped) {
    lt_part *P = &G->part[G->count++];
    P->n = n;
    memcpy(P->node, node, (size_t)n * sizeof *node);
    P->T = S.T; /* handed over */
    memset(&S.T, 0, sizeof S.T);
    *added = true;
  }
  search_free(&S);
  return st;
}

uint64_t solver_lt_guide_bound(const solver_lt_guide *G) {
  return G ? guide_rest(G, 0) : 0;
}
