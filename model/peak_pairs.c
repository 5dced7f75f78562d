/*
 * peak_pairs.c -- pairs that no plan under a peak limit groups
 * (fp_peak_restrict of peak_bound.h; docs/cost-model.md, "Peak
 * conflicts"), over the order relations and min cuts of peak_bound.c
 * (peak_work.h).
 *
 * Why a file of its own: the scan and the far rule restrict the graph
 * that the first level's traffic bound runs on; they share the peak
 * bound's relations but none of its rules.
 *
 * Calls: peak_bound.c (peak_work.h), graph.c.
 */
#include <stdlib.h>
#include <string.h>

#include "model/peak_bound.h"

#include "model/args.h"
#include "model/peak_work.h"

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
    if ((P->cap[v] = pb_node_inplace_cap(g, v)) > 0)
      P->with[P->np++] = v;
  return pb_step_caps(&P->W, fp_inplace_step_cap(g, P->W.k), P->capx);
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
    qsort(P->tmp, (size_t)m, sizeof *P->tmp, pb_cmp_u64_desc);
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
    pb_live_set(&P->W, fp_graph_buffer(P->W.g, b), row, &lo, &hi);
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
  uint64_t gb = pb_sub_cap(pc_group_bytes(P, u, v), pc_pair_cap(P, u, v));
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
    if (pb_cut_forced(&P->W, grp, 2, -1, false, P->resident, &gb, &work,
                      NULL) != FP_OK)
      return -1;
    gb = pb_sub_cap(gb, pc_pair_cap(P, c->u, c->v));
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

/* The pairs (y, z) of the second rule once y is known never to run on
 * the side of step(x) that late names: partners z (pc_partner) that share
 * a buffer with y and may share its group.  With found == false only
 * counts them.  The count, or -1 out of memory. */
static int32_t pc_far_pairs(pc_scan *P, int32_t x, int32_t y, bool late,
                            bool found, uint64_t bytes) {
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
      if (!pc_partner(&P->W, x, z, late) || !may_share(&P->W, y, z))
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
      if (pc_far_pairs(P, x, y, late, false, 0) == 0)
        continue;
      uint64_t lb;
      if (pb_cut_forced(&P->W, &x, 1, y, late, P->resident, &lb, work, NULL) !=
          FP_OK)
        return -1;
      lb = pb_sub_cap(lb, P->capx[x]);
      if (lb > P->limit && pc_far_pairs(P, x, y, late, true, lb) < 0)
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
    vals[x].val = pb_sub_cap(P->resident + pc_row_bytes(P, row), P->capx[x]);
  }
  qsort(vals, (size_t)n, sizeof *vals, pb_cmp_node_val);
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
  pb_work_free(&P->W);
  free(P->live);
  free(P->acc);
  free(P->found.p);
  free(P->cand.p);
  free(P->mark);
  free(P->cap);
  free(P->capx);
  free(P->tmp);
  free(P->with);
}

/* One round on graph g: the conflicting pairs into P->found.  FP_ENOMEM. */
static fp_status pc_round(pc_scan *P, const fp_graph *g, int32_t k,
                          fp_error *err) {
  fp_status st = pb_work_build(&P->W, g, k, err);
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
  if (fp_graph_node_count(g) == 0 || pb_graph_size(g) > PB_MAX_CUT_SIZE)
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
