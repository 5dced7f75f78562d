/*
 * peak_pairs.c -- pairs that no plan under a peak limit groups
 * (fp_peak_restrict of peak_bound.h; docs/cost-model.md, "Peak
 * conflicts"), and the far rule at a forced group (fp_peak_group_far, for
 * the branch on fusions of solver/bound/branch.c), over the order
 * relations and min cuts of peak_bound.c (peak_work.h).
 *
 * Why a file of its own: the scan and the far rule restrict the graph
 * that the first level's traffic bound runs on; they share the peak
 * bound's relations but none of its rules.
 *
 * Calls: peak_bound.c (peak_work.h), peak_group.c (the groups' argument
 * check), graph.c.
 */
#include <stdlib.h>
#include <string.h>

#include "model/peak_bound.h"

#include "model/args.h"
#include "model/peak_group.h"
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
    if ((P->cap[v] = pb_node_inplace_cap(g, v)) > 0)
      P->with[P->np++] = v;
  return pb_step_caps(&P->W, fp_inplace_step_cap(g, P->W.k), P->capx);
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
    if (w != u && w != v && pb_may_join(&P->W, w, u) &&
        pb_may_join(&P->W, w, v))
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
    if (pb_cut_forced(&P->W, grp, 2, -1, false, false, NULL, P->resident, &gb,
                      &work, NULL) != FP_OK)
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
      uint64_t lb;
      if (pb_cut_forced(&P->W, &x, 1, y, late, false, NULL, P->resident, &lb,
                        work, NULL) != FP_OK)
        return -1;
      lb = pb_sub_cap(lb, P->capx[x]);
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
  free(P->fx);
  free(P->fy);
  free(P->fstrict);
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

/* What is live at G's step after takeovers, at least, with node y (-1:
 * none) forced to the side of the step that side names (PC_*): the
 * larger of the min cut less the cap and the min cut with the refunds of
 * the nodes that may run at the step (cut_refunds; takers: scratch).
 * FP_ENOMEM. */
static fp_status pc_group_cut(pc_scan *P, const int32_t *grp, int32_t ng,
                              int32_t y, int side, uint64_t cap,
                              uint8_t *takers, uint64_t *out, double *work) {
  uint64_t lb, lb2 = 0;
  bool late = side == PC_LATE, strict = side == PC_STRICT;
  fp_status st = pb_cut_forced(&P->W, grp, ng, y, late, strict, NULL,
                               P->resident, &lb, work, NULL);
  pb_group_takers(&P->W, grp, ng, y >= 0 && strict ? y : -1, takers);
  if (st == FP_OK && cap > 0)
    st = pb_cut_forced(&P->W, grp, ng, y, late, strict, takers, P->resident,
                       &lb2, work, NULL);
  lb = pb_sub_cap(lb, cap);
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
  if (pc_group_cut(P, grp, ng, -1, PC_EARLY, cap, takers, &lb, &work) != FP_OK)
    return -1;
  if ((*none = lb > P->limit))
    return 0;
  for (int32_t y = 0; y < P->W.n && work < PC_FAR_BUDGET; y++)
    for (int side = 0; side < 3 && pc_free_of_group(&P->W, grp, ng, y);
         side++) {
      bool fact = ng == 1 && P->fact_y && P->fact_y[y];
      if (!fact && pc_far_pairs(P, grp, ng, y, side, false, 0) == 0)
        continue;
      if (pc_group_cut(P, grp, ng, y, side, cap, takers, &lb, &work) != FP_OK)
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
      fp_peak_check_groups(g, nodes, start, n_groups, err) != FP_OK)
    return FP_EARG;
  *none = false, *pairs = NULL, *n_pairs = 0;
  int32_t ng = n_groups > 0 ? start[1] : 0;
  if (ng < 1 || !pb_cuts_affordable(g))
    return FP_OK;
  pc_scan P;
  memset(&P, 0, sizeof P);
  P.limit = limit;
  fp_status st = pb_work_build(&P.W, g, max_fusion_size, err);
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
