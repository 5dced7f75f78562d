/*
 * moves.c -- single-node and whole-group moves for auto's search
 * (moves.h).
 *
 * A move takes node y out of its group G(y) and puts it into the group
 * A of a node u it shares a buffer with; the merged group M = A + {y}
 * runs either at A's step (y moves) or at y's step (A moves, after what
 * is left of G(y)).  A whole-group move does the same with all of G(y),
 * M = A + G(y): two kernels far apart that read the same tensor become
 * one, which moving their nodes one at a time cannot reach when each
 * single move costs more than it saves (on a generated random 1,000-node
 * graph, three such pairs of auto's 60 s plan saved 0.16%).  Every other
 * group keeps its relative order, so the
 * new plan is a legal order exactly when each edge between M and the
 * rest still runs forwards: that is checked on the steps first, and the
 * evaluator (fp_plan_eval_k) has the last word on legality and prices the
 * move exactly.  A move is kept only when solver_better prefers it, so a
 * pass never cycles.  The peak pass (solver_peak_pass, at the end) moves
 * whole groups across the peak step without changing any group.
 */
#include <stdlib.h>
#include <string.h>

#include "model/util.h"
#include "solver/common/services.h"
#include "solver/search/moves.h"

/* Participants of one buffer (its writer and readers, extern nodes left
 * out) paired with each other, at most this many: a weight read by
 * hundreds of kernels would otherwise give quadratically many
 * candidates.  Past it, the earliest and the latest readers are kept
 * (a late kernel recomputing from a saved activation is among the
 * last). */
#define MOVES_PER_BUFFER 32

typedef struct cand {
  int32_t y, u;
  uint64_t bytes;
} cand;

/* By node pair, the largest buffer first within a pair. */
static int cmp_pair(const void *a, const void *b) {
  const cand *x = a, *z = b;
  if (x->y != z->y)
    return x->y < z->y ? -1 : 1;
  if (x->u != z->u)
    return x->u < z->u ? -1 : 1;
  return x->bytes > z->bytes ? -1 : x->bytes < z->bytes;
}

/* Largest buffer first, then by pair: the order the pass tries. */
static int cmp_bytes(const void *a, const void *b) {
  const cand *x = a, *z = b;
  if (x->bytes != z->bytes)
    return x->bytes > z->bytes ? -1 : 1;
  if (x->y != z->y)
    return x->y < z->y ? -1 : 1;
  return (x->u > z->u) - (x->u < z->u);
}

/* The non-extern writer and readers of buffer b, at most
 * MOVES_PER_BUFFER of them (the writer, then the first and the last
 * readers), into P; returns how many. */
static int32_t participants(const fp_graph *g, int32_t b, int32_t *P) {
  const fp_buffer *buf = fp_graph_buffer(g, b);
  int32_t n = 0, half = MOVES_PER_BUFFER / 2;
  if (buf->writer >= 0 && fp_graph_node(g, buf->writer)->kind != FP_KIND_EXTERN)
    P[n++] = buf->writer;
  for (int32_t i = 0; i < buf->n_readers && n < MOVES_PER_BUFFER; i++) {
    /* readers [half, n_readers - half) are skipped when there are more */
    int32_t r =
        buf->n_readers <= MOVES_PER_BUFFER - 1 || i < half
            ? i
            : buf->n_readers - (MOVES_PER_BUFFER - 1 - half) + (i - half);
    if (r >= buf->n_readers)
      break;
    if (buf->readers[r] != buf->writer &&
        fp_graph_node(g, buf->readers[r])->kind != FP_KIND_EXTERN)
      P[n++] = buf->readers[r];
  }
  return n;
}

/* Every compatible ordered pair of every buffer's participants into *out
 * (*n of them).  0, or -1 out of memory. */
static int collect(const fp_graph *g, cand **out, size_t *n) {
  int32_t P[MOVES_PER_BUFFER];
  size_t cap = 0, k = 0;
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++) {
    size_t m = (size_t)participants(g, b, P);
    cap += m * (m > 0 ? m - 1 : 0);
  }
  cand *c = malloc((cap + 1) * sizeof *c);
  if (!c)
    return -1;
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++) {
    int32_t m = participants(g, b, P);
    for (int32_t i = 0; i < m; i++)
      for (int32_t j = 0; j < m; j++)
        if (i != j && fp_graph_compatible(g, P[i], P[j]))
          c[k++] = (cand){P[i], P[j], fp_graph_buffer(g, b)->bytes};
  }
  *out = c;
  *n = k;
  return 0;
}

int solver_moves_make(const fp_graph *g, solver_moves *mv) {
  cand *c = NULL;
  size_t n = 0, k = 0;
  memset(mv, 0, sizeof *mv);
  if (collect(g, &c, &n) != 0)
    return -1;
  /* One entry per pair, with its largest shared buffer. */
  qsort(c, n, sizeof *c, cmp_pair);
  for (size_t i = 0; i < n; i++)
    if (k == 0 || c[i].y != c[k - 1].y || c[i].u != c[k - 1].u)
      c[k++] = c[i];
  qsort(c, k, sizeof *c, cmp_bytes);
  mv->node = malloc((k + 1) * sizeof *mv->node);
  mv->target = malloc((k + 1) * sizeof *mv->target);
  if (!mv->node || !mv->target) {
    free(c);
    solver_moves_free(mv);
    return -1;
  }
  for (size_t i = 0; i < k; i++) {
    mv->node[i] = c[i].y;
    mv->target[i] = c[i].u;
  }
  mv->count = (int32_t)k;
  free(c);
  return 0;
}

void solver_moves_free(solver_moves *mv) {
  free(mv->node);
  free(mv->target);
  memset(mv, 0, sizeof *mv);
}

/* A move: y joins the group at step ta (with its whole group, the one at
 * step ty, when `whole`); M, the merged group, runs at step ta, or at ty
 * (y's step) after the rest of y's old group when at_y. */
typedef struct move {
  int32_t y, ty, ta;
  bool at_y, whole;
} move;

/* Position of node v in the moved plan, as 2 * step (+1 for M at y's
 * step, which follows the rest of y's old group). */
static int64_t position(const solver_move_state *S, const move *mv, int32_t v) {
  int32_t s = S->step[v];
  bool in_m = s == mv->ta || (mv->whole ? s == mv->ty : v == mv->y);
  if (!in_m)
    return 2 * (int64_t)s;
  return mv->at_y ? 2 * (int64_t)mv->ty + 1 : 2 * (int64_t)mv->ta;
}

/* Whether every edge between node v of M and a node outside M runs
 * forwards in the moved plan. */
static bool edges_forward(const solver_move_state *S, const move *mv,
                          int32_t v) {
  const fp_graph *g = S->g;
  const fp_node *nd = fp_graph_node(g, v);
  int64_t pm = position(S, mv, v);
  for (int32_t i = 0; i < nd->n_reads; i++) {
    int32_t w = fp_graph_buffer(g, nd->reads[i].buffer)->writer;
    if (w >= 0 && w != v && position(S, mv, w) > pm)
      return false;
  }
  for (int32_t i = 0; i < nd->n_writes; i++) {
    const fp_buffer *b = fp_graph_buffer(g, nd->writes[i]);
    for (int32_t r = 0; r < b->n_readers; r++)
      if (b->readers[r] != v && position(S, mv, b->readers[r]) < pm)
        return false;
  }
  return true;
}

/* Whether the move keeps every producer before its readers (nodes of M
 * share a position, which fused groups allow). */
static bool order_holds(const solver_move_state *S, const move *mv) {
  int32_t len, ylen = 1;
  const int32_t *grp = fp_plan_group(*S->cur, mv->ta, &len);
  const int32_t *ygrp =
      mv->whole ? fp_plan_group(*S->cur, mv->ty, &ylen) : &mv->y;
  for (int32_t i = 0; i < ylen; i++)
    if (!edges_forward(S, mv, ygrp[i]))
      return false;
  for (int32_t i = 0; i < len; i++)
    if (!edges_forward(S, mv, grp[i]))
      return false;
  return true;
}

/* Emits group t of p without node `skip` (-1: none), unless empty. */
static fp_status emit_group(fp_plan *out, const fp_plan *p, int32_t t,
                            int32_t skip, fp_error *err) {
  int32_t len;
  const int32_t *grp = fp_plan_group(p, t, &len);
  if (len == 1 && grp[0] == skip)
    return FP_OK;
  fp_status st = fp_plan_open_group(out, err);
  for (int32_t i = 0; st == FP_OK && i < len; i++)
    if (grp[i] != skip)
      st = fp_plan_append_node(out, grp[i], err);
  return st;
}

/* The moved plan of *S->cur into out. */
static fp_status build_move(const solver_move_state *S, const move *mv,
                            fp_plan *out, fp_error *err) {
  const fp_plan *p = *S->cur;
  fp_status st = FP_OK;
  fp_plan_clear(out);
  for (int32_t t = 0; st == FP_OK && t < fp_plan_group_count(p); t++) {
    bool merged_here = t == (mv->at_y ? mv->ty : mv->ta);
    if (t == mv->ty && !mv->whole)
      st = emit_group(out, p, t, mv->y, err);
    else if (t != mv->ta && t != mv->ty)
      st = emit_group(out, p, t, -1, err);
    if (st == FP_OK && merged_here) {
      int32_t ylen = 1;
      const int32_t *ygrp =
          mv->whole ? fp_plan_group(p, mv->ty, &ylen) : &mv->y;
      st = emit_group(out, p, mv->ta, -1, err);
      for (int32_t i = 0; st == FP_OK && i < ylen; i++)
        st = fp_plan_append_node(out, ygrp[i], err);
    }
  }
  return st == FP_OK ? fp_plan_set_graph_name(out, fp_plan_graph_name(p), err)
                     : st;
}

/* Node -> step of the current plan. */
static void index_steps(solver_move_state *S) {
  for (int32_t t = 0; t < fp_plan_group_count(*S->cur); t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(*S->cur, t, &len);
    for (int32_t i = 0; i < len; i++)
      S->step[grp[i]] = t;
  }
}

/* Evaluates *S->scratch and makes it the current plan when it is legal,
 * meets the limits and beats *cur (*kept).  FP_OK or FP_ENOMEM. */
static fp_status keep_if_better(solver_move_state *S, bool *kept,
                                fp_error *err) {
  fp_metrics m;
  fp_error local;
  fp_status st = fp_plan_eval_k(S->g, *S->scratch, S->k, &m, NULL, &local);
  *kept = false;
  if (st == FP_ENOMEM)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  if (st != FP_OK || !fp_meets_limits(S->prm, &m, S->eager_peak) ||
      !solver_better(S->prm, &m, S->cur_m))
    return FP_OK; /* illegal (compatibility, order) or no better */
  fp_plan *t = *S->cur;
  *S->cur = *S->scratch;
  *S->scratch = t;
  *S->cur_m = m;
  index_steps(S);
  *kept = true;
  return FP_OK;
}

/* Tries one move; *kept when it became the current plan.  FP_OK or
 * FP_ENOMEM. */
static fp_status try_move(solver_move_state *S, const move *mv, bool *kept,
                          fp_error *err) {
  *kept = false;
  if (!order_holds(S, mv))
    return FP_OK;
  fp_status st = build_move(S, mv, *S->scratch, err);
  return st == FP_OK ? keep_if_better(S, kept, err) : st;
}

/* ---- regrouping the readers of one buffer ------------------------------
 *
 * The readers of a buffer b taken out of their groups and grouped anew,
 * first fit in one order (each joins the first new group it is
 * compatible with, or opens one), each new group running right after
 * what is left of the step of its earliest member.  Twelve readers of one
 * tensor in groups of 2, 2, 2, 3 and 3, each compatible only with its
 * neighbours, become four groups of 3 (gpt2-triton.fwd: one read of the
 * tensor fewer), which no single move reaches: a group left behind
 * still reads the tensor, and each reader's partners change. */

/* Buffers with more readers than this are not regrouped (a weight read
 * by hundreds of kernels). */
#define REGROUP_MAX_READERS 64

/* One regrouping: the readers x[0..n) of a buffer, their new groups
 * (grp[i]: reader x[i]'s, numbered from 0 in order of first member) and
 * each new group's step (home). */
typedef struct regroup {
  int32_t n, groups;
  int32_t x[REGROUP_MAX_READERS], grp[REGROUP_MAX_READERS];
  int32_t home[REGROUP_MAX_READERS];
} regroup;

/* Groups R->x first fit (compatible with every member, at most S->k
 * nodes), each group's home the step of its first member. */
static void regroup_first_fit(const solver_move_state *S, regroup *R) {
  int32_t size[REGROUP_MAX_READERS];
  R->groups = 0;
  for (int32_t i = 0; i < R->n; i++) {
    int32_t to = -1;
    for (int32_t q = 0; q < R->groups && to < 0; q++) {
      bool fits = size[q] < S->k;
      for (int32_t j = 0; fits && j < i; j++)
        fits = R->grp[j] != q || fp_graph_compatible(S->g, R->x[i], R->x[j]);
      to = fits ? q : -1;
    }
    if (to < 0) {
      to = R->groups++;
      size[to] = 0;
      R->home[to] = S->step[R->x[i]];
    }
    R->grp[i] = to;
    size[to]++;
    if (S->step[R->x[i]] < R->home[to])
      R->home[to] = S->step[R->x[i]];
  }
}

/* The regrouped plan of *S->cur into out. */
static fp_status build_regroup(const solver_move_state *S, const regroup *R,
                               fp_plan *out, fp_error *err) {
  const fp_plan *p = *S->cur;
  fp_status st = FP_OK;
  fp_plan_clear(out);
  for (int32_t t = 0; st == FP_OK && t < fp_plan_group_count(p); t++) {
    int32_t len, kept = 0;
    const int32_t *grp = fp_plan_group(p, t, &len);
    for (int32_t i = 0; st == FP_OK && i < len; i++) {
      bool moved = false;
      for (int32_t j = 0; j < R->n && !moved; j++)
        moved = R->x[j] == grp[i];
      if (!moved && kept++ == 0)
        st = fp_plan_open_group(out, err);
      if (!moved && st == FP_OK)
        st = fp_plan_append_node(out, grp[i], err);
    }
    for (int32_t q = 0; st == FP_OK && q < R->groups; q++) {
      if (R->home[q] != t)
        continue;
      st = fp_plan_open_group(out, err);
      for (int32_t j = 0; st == FP_OK && j < R->n; j++)
        if (R->grp[j] == q)
          st = fp_plan_append_node(out, R->x[j], err);
    }
  }
  return st == FP_OK ? fp_plan_set_graph_name(out, fp_plan_graph_name(p), err)
                     : st;
}

/* Tries the regrouping of buffer b's non-extern readers (when they are
 * 3 to REGROUP_MAX_READERS in 2 or more groups), in index order; *kept
 * when it became the current plan.  FP_OK or FP_ENOMEM. */
static fp_status regroup_buffer(solver_move_state *S, int32_t b, bool *kept,
                                fp_error *err) {
  const fp_buffer *buf = fp_graph_buffer(S->g, b);
  regroup R;
  bool spread = false;
  *kept = false;
  R.n = 0;
  for (int32_t i = 0; i < buf->n_readers && R.n <= REGROUP_MAX_READERS; i++) {
    int32_t v = buf->readers[i];
    if (fp_graph_node(S->g, v)->kind == FP_KIND_EXTERN)
      continue;
    if (R.n < REGROUP_MAX_READERS)
      R.x[R.n] = v;
    spread |= R.n > 0 && S->step[v] != S->step[R.x[0]];
    R.n++;
  }
  if (R.n < 3 || R.n > REGROUP_MAX_READERS || !spread)
    return FP_OK;
  regroup_first_fit(S, &R);
  fp_status st = build_regroup(S, &R, *S->scratch, err);
  return st == FP_OK ? keep_if_better(S, kept, err) : st;
}

/* One pass of regroupings over the buffers, until `deadline` (or the
 * cancel flag); *moved counts those kept.  FP_OK or FP_ENOMEM. */
static fp_status regroup_pass(solver_move_state *S, double deadline,
                              int32_t *moved, fp_error *err) {
  fp_status st = FP_OK;
  for (int32_t b = 0; st == FP_OK && b < fp_graph_buffer_count(S->g); b++) {
    bool kept = false;
    if (fp_clock_now() > deadline || (S->prm->cancel && *S->prm->cancel))
      break;
    st = regroup_buffer(S, b, &kept, err);
    *moved += kept;
  }
  return st;
}

fp_status solver_move_pass(solver_move_state *S, solver_moves *mv,
                           double deadline, int32_t *moved, bool *whole,
                           fp_error *err) {
  fp_status st = FP_OK;
  int32_t done = 0;
  *moved = 0;
  index_steps(S);
  for (; st == FP_OK && done < mv->count; done++) {
    if (fp_clock_now() > deadline || (S->prm->cancel && *S->prm->cancel))
      break;
    int32_t i = (mv->next + done) % mv->count;
    int32_t y = mv->node[i], ta = S->step[mv->target[i]];
    if (S->step[y] == ta)
      continue;
    bool kept = false;
    int32_t ylen;
    fp_plan_group(*S->cur, S->step[y], &ylen);
    /* y alone (at u's step, then at y's), then y's whole group, unless
     * that is y alone again */
    for (int k = 0; st == FP_OK && !kept && k < (ylen > 1 ? 4 : 2); k++) {
      move m = {y, S->step[y], ta, (k & 1) != 0, k >= 2};
      st = try_move(S, &m, &kept, err);
    }
    *moved += kept;
  }
  *whole = done == mv->count;
  mv->next = mv->count ? (mv->next + done) % mv->count : 0;
  /* Nothing single moves: regroup readers (what one move cannot reach). */
  if (st == FP_OK && *whole && *moved == 0)
    st = regroup_pass(S, deadline, moved, err);
  return st;
}

/* ---- groups around the peak ---------------------------------------------
 *
 * A group that runs before the peak step and whose outputs are all read
 * after it holds them across the peak; run just before its first reader,
 * it holds its inputs there instead.  In a whole training step with
 * gradient clipping every gradient waits for the global norm: a float32
 * copy of a bfloat16 gradient made early holds twice the bytes of its
 * source across the last casts (llama-d14-w3584-v256k-adamw-clip: the
 * 3.67 GB float32 embedding gradient was cast while the head's float32
 * gradient and the embedding's pre-cast copy were both live).  The
 * mirror: a group after the peak whose producers all ran before it,
 * hoisted to just after its last producer, frees what it last reads.  A
 * window of consecutive steps reaches neither when the reader is far. */

/* A candidate: group t to run before step `to` (the group count: at the
 * end); gain, the bytes it is expected to take off the peak step. */
typedef struct relocation {
  int32_t t, to;
  int64_t gain;
} relocation;

/* Larger gain first, then earlier group: a fixed order. */
static int cmp_gain(const void *a, const void *b) {
  const relocation *x = a, *z = b;
  if (x->gain != z->gain)
    return x->gain > z->gain ? -1 : 1;
  return (x->t > z->t) - (x->t < z->t);
}

/* Group t's candidate around the peak step into *c (file section
 * comment): sinking when t <= peak and its first reader outside it runs
 * after peak, else hoisting when t >= peak and its last producer outside
 * it ran before peak.  False when neither applies or the group would not
 * move. */
static bool relocate(const solver_move_state *S, int32_t t, int32_t peak,
                     relocation *c) {
  int32_t len, first = fp_plan_group_count(*S->cur), last = -1;
  const int32_t *grp = fp_plan_group(*S->cur, t, &len);
  int64_t wrote = 0, read = 0;
  for (int32_t i = 0; i < len; i++) {
    const fp_node *nd = fp_graph_node(S->g, grp[i]);
    for (int32_t j = 0; j < nd->n_reads; j++) {
      const fp_buffer *b = fp_graph_buffer(S->g, nd->reads[j].buffer);
      int32_t s = b->writer >= 0 ? S->step[b->writer] : -1;
      last = s != t && s > last ? s : last;
      read += s != t ? (int64_t)b->bytes : 0;
    }
    for (int32_t j = 0; j < nd->n_writes; j++) {
      const fp_buffer *b = fp_graph_buffer(S->g, nd->writes[j]);
      for (int32_t r = 0; r < b->n_readers; r++) {
        int32_t s = S->step[b->readers[r]];
        first = s != t && s < first ? s : first;
      }
      wrote += (int64_t)b->bytes;
    }
  }
  *c = (relocation){t, -1, 0};
  if (t <= peak && first > peak && first > t + 1)
    *c = (relocation){t, first, wrote - read};
  else if (t >= peak && last < peak && last + 1 < t)
    *c = (relocation){t, last + 1, read - wrote};
  return c->to >= 0;
}

/* *S->cur with group t run before step `to` into out. */
static fp_status build_relocation(const solver_move_state *S,
                                  const relocation *c, fp_plan *out,
                                  fp_error *err) {
  const fp_plan *p = *S->cur;
  int32_t n = fp_plan_group_count(p);
  fp_status st = FP_OK;
  fp_plan_clear(out);
  for (int32_t s = 0; st == FP_OK && s <= n; s++) {
    if (s == c->to)
      st = emit_group(out, p, c->t, -1, err);
    if (st == FP_OK && s < n && s != c->t)
      st = emit_group(out, p, s, -1, err);
  }
  return st == FP_OK ? fp_plan_set_graph_name(out, fp_plan_graph_name(p), err)
                     : st;
}

/* One scan at the current peak: the candidates by gain, until one is
 * kept (*kept) or the time is up.  FP_OK or FP_ENOMEM. */
static fp_status peak_scan(solver_move_state *S, relocation *c, double deadline,
                           bool *kept, fp_error *err) {
  int32_t n = fp_plan_group_count(*S->cur), m = 0;
  int32_t peak = S->cur_m->peak_step;
  fp_status st = FP_OK;
  *kept = false;
  for (int32_t t = 0; peak >= 0 && t < n; t++)
    m += relocate(S, t, peak, &c[m]);
  qsort(c, (size_t)m, sizeof *c, cmp_gain);
  for (int32_t i = 0; st == FP_OK && !*kept && i < m; i++) {
    if (fp_clock_now() > deadline || (S->prm->cancel && *S->prm->cancel))
      break;
    st = build_relocation(S, &c[i], *S->scratch, err);
    if (st == FP_OK)
      st = keep_if_better(S, kept, err);
  }
  return st;
}

fp_status solver_peak_pass(solver_move_state *S, double deadline,
                           int32_t *moved, fp_error *err) {
  int32_t n = fp_plan_group_count(*S->cur);
  relocation *c = malloc(((size_t)n + 1) * sizeof *c);
  fp_status st = FP_OK;
  *moved = 0;
  if (!c)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  index_steps(S);
  for (bool kept = true; st == FP_OK && kept;) {
    st = peak_scan(S, c, deadline, &kept, err);
    *moved += kept;
  }
  free(c);
  return st;
}
