/*
 * peak_group.c -- min cuts at whole groups (peak_group.h, and
 * fp_peak_group_bounds of peak_bound.h), for the second level's bound
 * (docs/cost-model.md, "The peak bound"; docs/solver.md, "The second
 * level's bound").
 *
 * Why: the min-cut rule of peak_bound.c fixes one node x at its step and
 * places every other node as cheaply as the order allows.  The second
 * level only asks about plans of least traffic, and those may all have to
 * run some nodes together (solver/bound/forced.c proves which).  A node y
 * that always shares a group with a node z runs at z's step: when z runs
 * after G's step, so does y, whatever the order alone allows.  On
 * resmlp_12_224.bwd two reductions that read 38.5 MB of saved
 * activations are grouped, in every plan of least traffic, with a
 * reduction three kernels later, so those activations are live at the
 * plan's peak; the cut that may run them first is 21.6 MB under it.
 *
 * In-place takeovers: at the step of a group holding G, a pair (i, o) of
 * a node saves nothing when i is written in G (it is not yet live memory
 * that dies there, the first condition of a takeover), and only nodes
 * that may share a group with every node of G can add theirs.  On
 * resnet50-triton.fwd the per-node caps gave away a takeover of a buffer
 * written in the same group (524,288 bytes).
 *
 * Calls: peak_bound.c (peak_work.h), graph.c.
 */
#include <stdlib.h>
#include <string.h>

#include "model/peak_group.h"

#include "model/args.h"
#include "model/peak_bound.h"
#include "model/peak_work.h"

struct fp_peak_cuts {
  pb_work W;
  bool cuts;         /* the min cuts fit the size limits, W built */
  uint64_t resident; /* bytes live in every step */
  uint64_t *capx;    /* node -> most takeovers save at its step */
  uint64_t *tmp;     /* n entries of scratch */
  int32_t *grp;      /* G with its ties, ng nodes */
  bool *ing;         /* node -> in grp */
  int8_t *side;      /* node -> PB_SIDE_* */
  int8_t *agg;       /* tie class -> the sides of its nodes */
  bool *late;        /* node -> runs at or after G's step (late_nodes) */
  int32_t *cls;      /* node -> class of fp_peak_cuts_placed's ties */
};

fp_status fp_peak_cuts_create(const fp_graph *g, int32_t max_fusion_size,
                              fp_peak_cuts **out, fp_error *err) {
  if (fp_arg_ptr(out, "peak cuts", "out", err) != FP_OK)
    return FP_EARG;
  *out = NULL;
  if (fp_arg_graph(g, "peak cuts", err) != FP_OK)
    return FP_EARG;
  fp_peak_cuts *pc = calloc(1, sizeof *pc);
  if (!pc)
    goto oom;
  pc->resident = fp_graph_resident_bytes(g);
  pc->W.g = g;
  pc->W.n = fp_graph_node_count(g);
  *out = pc;
  if (!pb_cuts_affordable(g))
    return FP_OK;
  size_t n = (size_t)fp_graph_node_count(g) + 1;
  pc->capx = calloc(n, sizeof *pc->capx);
  pc->tmp = calloc(n, sizeof *pc->tmp);
  pc->grp = calloc(n, sizeof *pc->grp);
  pc->ing = calloc(n, sizeof *pc->ing);
  pc->side = calloc(n, sizeof *pc->side);
  pc->agg = calloc(n, sizeof *pc->agg);
  pc->late = calloc(n, sizeof *pc->late);
  pc->cls = calloc(n, sizeof *pc->cls);
  pc->cuts = true; /* pb_work_free below frees a partial W */
  if (!pc->capx || !pc->tmp || !pc->grp || !pc->ing || !pc->side || !pc->agg ||
      !pc->late || !pc->cls ||
      pb_work_build(&pc->W, g, max_fusion_size, err) != FP_OK ||
      pb_step_caps(&pc->W, fp_inplace_step_cap(g, max_fusion_size), pc->capx) !=
          0)
    goto oom;
  return FP_OK;
oom:
  fp_peak_cuts_destroy(pc);
  *out = NULL;
  return fp_error_set(err, FP_ENOMEM, "out of memory (peak cuts)");
}

void fp_peak_cuts_destroy(fp_peak_cuts *pc) {
  if (!pc)
    return;
  if (pc->cuts)
    pb_work_free(&pc->W);
  free(pc->capx);
  free(pc->tmp);
  free(pc->grp);
  free(pc->ing);
  free(pc->side);
  free(pc->agg);
  free(pc->late);
  free(pc->cls);
  free(pc);
}

bool fp_peak_cuts_precedes(const fp_peak_cuts *pc, int32_t u, int32_t v) {
  return pc && pc->cuts && (u == v || bit(pc->W.desc, pc->W.words, u, v));
}

/* Whether in-place pair k of node v may apply at the step of a group
 * holding G: not when its read is written in G or later (then it is not
 * live memory that dies there, the first condition of a takeover) or
 * read later by another node, nor when G reads all of its write (then
 * that is never materialized, the third).  pc->late says what runs at or
 * after the step. */
static bool pair_may_apply(const fp_peak_cuts *pc, int32_t v, int32_t k) {
  int32_t m;
  const fp_inplace *pr = fp_graph_inplace(pc->W.g, v, &m);
  const fp_buffer *i = fp_graph_buffer(pc->W.g, pr[k].read);
  const fp_buffer *o = fp_graph_buffer(pc->W.g, pr[k].write);
  if (i->writer >= 0 && (pc->ing[i->writer] || pc->late[i->writer]))
    return false;
  /* a reader at or after the step, other than v or a fused reader of the
   * pair, still needs i there (the evaluator's rule, eval.c) */
  for (int32_t r = 0; r < i->n_readers; r++) {
    int32_t u = i->readers[r];
    if (u != v && pc->late[u] &&
        !fp_graph_inplace_fused_reader(pc->W.g, v, k, u))
      return false;
  }
  bool inside = !o->output && o->n_readers > 0;
  for (int32_t r = 0; inside && r < o->n_readers; r++)
    inside = pc->ing[o->readers[r]];
  return !inside;
}

/* What node v's takeovers can save at the step of a group holding G: the
 * distinct buffers its pairs write, of the pairs that may apply there. */
static uint64_t group_node_cap(const fp_peak_cuts *pc, int32_t v) {
  const fp_graph *g = pc->W.g;
  int32_t m;
  const fp_inplace *pr = fp_graph_inplace(g, v, &m);
  uint64_t cap = 0;
  for (int32_t k = 0; k < m; k++) {
    bool seen = !pair_may_apply(pc, v, k);
    for (int32_t j = 0; j < k && !seen; j++)
      seen = pr[j].write == pr[k].write && pair_may_apply(pc, v, j);
    cap += seen ? 0 : fp_graph_buffer(g, pr[k].write)->bytes;
  }
  return cap;
}

/* Whether node u may run in G's group: compatible with every node of G
 * and strictly ordered with none. */
static bool may_join(const fp_peak_cuts *pc, int32_t ng, int32_t u) {
  const pb_work *W = &pc->W;
  for (int32_t i = 0; i < ng; i++) {
    int32_t g = pc->grp[i];
    if (!may_share(W, u, g) || bit(W->strict, W->words, u, g) ||
        bit(W->strict, W->words, g, u))
      return false;
  }
  return true;
}

/* The most takeovers can save at the step of a group holding G: the
 * smallest cap of G's nodes (each bounds it), or G's own savings
 * (group_node_cap) plus the k - |G| largest of the nodes that may join
 * it, when lower. */
static uint64_t group_cap(fp_peak_cuts *pc, int32_t ng) {
  uint64_t cap = UINT64_MAX, own = 0;
  for (int32_t i = 0; i < ng; i++)
    cap = pc->capx[pc->grp[i]] < cap ? pc->capx[pc->grp[i]] : cap;
  if (cap == 0)
    return 0;
  int32_t m = 0;
  for (int32_t u = 0; u < pc->W.n; u++) {
    if (pc->ing[u])
      own += group_node_cap(pc, u);
    else if (may_join(pc, ng, u) && (pc->tmp[m] = group_node_cap(pc, u)) > 0)
      m++;
  }
  qsort(pc->tmp, (size_t)m, sizeof *pc->tmp, pb_cmp_u64_desc);
  for (int32_t j = 0; j < m && j < pc->W.k - ng; j++)
    own += pc->tmp[j];
  return own < cap ? own : cap;
}

/* Adds node v and, with tie, every node of its class to G. */
static void group_add(fp_peak_cuts *pc, const int32_t *tie, int32_t v,
                      int32_t *ng) {
  for (int32_t u = 0; u < pc->W.n; u++)
    if (!pc->ing[u] && (u == v || (tie && tie[u] == tie[v]))) {
      pc->ing[u] = true;
      pc->grp[(*ng)++] = u;
    }
}

/* side[] from the order and place (NULL, or FP_PEAK_* per node): ancestors
 * of G and the nodes placed before, before; descendants and those placed
 * after, after; a node strictly ordered with G, or never in its group,
 * never at its step. */
static void order_sides(fp_peak_cuts *pc, int32_t ng, const int8_t *place) {
  const pb_work *W = &pc->W;
  for (int32_t v = 0; v < W->n; v++) {
    int8_t s = !place || pc->ing[v]         ? PB_SIDE_OPEN
               : place[v] == FP_PEAK_BEFORE ? PB_SIDE_BEFORE
               : place[v] == FP_PEAK_AFTER  ? PB_SIDE_AFTER
                                            : PB_SIDE_OPEN;
    for (int32_t i = 0; i < ng && !pc->ing[v]; i++) {
      int32_t g = pc->grp[i];
      s |= bit(W->desc, W->words, v, g) ? PB_SIDE_BEFORE : 0;
      s |= bit(W->desc, W->words, g, v) ? PB_SIDE_AFTER : 0;
      if (bit(W->strict, W->words, v, g) || bit(W->strict, W->words, g, v) ||
          !may_share(W, v, g))
        s |= PB_SIDE_NEVER;
    }
    pc->side[v] = s;
  }
}

/* side[v] |= add, for a node v outside G; whether it changed. */
static bool side_add(fp_peak_cuts *pc, int32_t v, int8_t add) {
  int8_t old = pc->side[v];
  if (!pc->ing[v])
    pc->side[v] |= add;
  return pc->side[v] != old;
}

/* One round of closing side[]: a class shares its nodes' sides (one
 * step); before goes to producers and after to consumers, with never
 * (strictly before, strictly after).  Whether anything changed. */
static bool close_round(fp_peak_cuts *pc, const int32_t *tie) {
  const pb_work *W = &pc->W;
  const int8_t down = PB_SIDE_BEFORE | PB_SIDE_NEVER;
  const int8_t up = PB_SIDE_AFTER | PB_SIDE_NEVER;
  bool changed = false;
  for (int32_t v = 0; tie && v < W->n; v++)
    pc->agg[tie[v]] = 0;
  for (int32_t v = 0; tie && v < W->n; v++)
    pc->agg[tie[v]] |= pc->ing[v] ? 0 : pc->side[v];
  for (int32_t v = W->n - 1; v >= 0; v--) { /* consumers first */
    changed |= side_add(pc, v, tie ? pc->agg[tie[v]] : 0);
    for (int32_t i = W->pstart[v];
         (pc->side[v] & PB_SIDE_BEFORE) && i < W->pstart[v + 1]; i++)
      changed |= side_add(pc, W->pred[i], pc->side[v] & down);
  }
  for (int32_t v = 0; v < W->n; v++) /* producers first */
    for (int32_t i = W->pstart[v]; i < W->pstart[v + 1]; i++) {
      int8_t p = pc->side[W->pred[i]];
      if (p & PB_SIDE_AFTER)
        changed |= side_add(pc, v, p & up);
    }
  return changed;
}

/* G (pc->grp, *ng nodes) grown by its ties, and side[] closed from place
 * (as order_sides').  A node
 * placed both before and after runs at G's step: it joins G, and the
 * sides are made again.  false when a node would run at G's step and
 * never there (classes no plan with G grouped keeps: no sides). */
static bool tie_sides(fp_peak_cuts *pc, const int32_t *tie, const int8_t *place,
                      int32_t *ng) {
  const int8_t both = PB_SIDE_BEFORE | PB_SIDE_AFTER;
  for (int32_t i = 0, m = *ng; tie && i < m; i++)
    group_add(pc, tie, pc->grp[i], ng);
  for (bool again = true; again;) {
    order_sides(pc, *ng, place);
    while (close_round(pc, tie))
      ;
    again = false;
    for (int32_t v = 0; v < pc->W.n; v++) {
      if (pc->ing[v] || (pc->side[v] & both) != both)
        continue;
      if (pc->side[v] & PB_SIDE_NEVER)
        return false;
      group_add(pc, tie, v, ng);
      again = true;
    }
  }
  return true;
}

/* late[]: G's nodes and those side[] runs at or after its step. */
static void late_nodes(fp_peak_cuts *pc) {
  for (int32_t v = 0; v < pc->W.n; v++)
    pc->late[v] = pc->ing[v] || (pc->side[v] & PB_SIDE_AFTER);
}

/* The cut at G (grp, ng nodes, checked) with tie classes and place (each
 * NULL or per node), less the group cap; side_out as fp_peak_cuts_placed's.
 * FP_ENOMEM. */
static fp_status cut_at(fp_peak_cuts *pc, const int32_t *grp, int32_t ng,
                        const int32_t *tie, const int8_t *place, uint64_t *out,
                        int8_t *side_out, fp_error *err) {
  memset(pc->ing, 0, (size_t)pc->W.n * sizeof *pc->ing);
  int32_t m = 0;
  for (int32_t i = 0; i < ng; i++)
    group_add(pc, NULL, grp[i], &m);
  bool sides = tie_sides(pc, tie, place, &m);
  late_nodes(pc);
  uint64_t s = pc->resident, cap = group_cap(pc, m);
  fp_status st =
      pb_cut_bound(&pc->W, pc->grp, m, sides ? pc->side : NULL,
                   sides ? tie : NULL, side_out, pc->resident, &s, err);
  if (st == FP_OK && s == UINT64_MAX) /* no placement meets the ties */
    st = pb_cut_bound(&pc->W, pc->grp, m, pc->side, NULL, side_out,
                      pc->resident, &s, err);
  s = s > cap ? s - cap : 0;
  *out = st == FP_OK && s > pc->resident ? s : pc->resident;
  return st;
}

/* FP_EARG unless the handle, grp (ng nodes) and out are well formed (fn
 * names the caller). */
static fp_status check_group(const fp_peak_cuts *pc, const char *fn,
                             const int32_t *grp, int32_t ng,
                             const uint64_t *out, fp_error *err) {
  if (fp_arg_ptr(pc, fn, "handle", err) != FP_OK ||
      fp_arg_ptr(grp, fn, "group", err) != FP_OK ||
      fp_arg_ptr(out, fn, "out", err) != FP_OK)
    return FP_EARG;
  if (ng < 1)
    return fp_error_set(err, FP_EARG, "%s: ng %d < 1", fn, (int)ng);
  for (int32_t i = 0; i < ng; i++)
    if (grp[i] < 0 || grp[i] >= pc->W.n)
      return fp_error_set(err, FP_EARG, "%s: no node %d", fn, (int)grp[i]);
  return FP_OK;
}

fp_status fp_peak_cuts_group(fp_peak_cuts *pc, const int32_t *grp, int32_t ng,
                             const int32_t *tie, uint64_t *out, fp_error *err) {
  if (check_group(pc, "peak cuts group", grp, ng, out, err) != FP_OK)
    return FP_EARG;
  *out = pc->resident;
  return pc->cuts ? cut_at(pc, grp, ng, tie, NULL, out, NULL, err) : FP_OK;
}

/* The root of v's class in the union-find parents up[]. */
static int32_t uf_find(int32_t *up, int32_t v) {
  while (up[v] != v)
    v = up[v] = up[up[v]];
  return v;
}

fp_status fp_peak_cuts_placed(fp_peak_cuts *h, const int32_t *grp, int32_t ng,
                              const fp_peak_tie *ties, int32_t n_ties,
                              const int8_t *place, uint64_t *out, int8_t *side,
                              fp_error *err) {
  const char *fn = "peak cuts";
  if (check_group(h, fn, grp, ng, out, err) != FP_OK ||
      (n_ties > 0 && fp_arg_ptr(ties, fn, "ties", err) != FP_OK))
    return FP_EARG;
  if (n_ties < 0)
    return fp_error_set(err, FP_EARG, "%s: %d ties", fn, (int)n_ties);
  for (int32_t i = 0; i < n_ties; i++)
    if (ties[i].u < 0 || ties[i].u >= h->W.n || ties[i].v < 0 ||
        ties[i].v >= h->W.n)
      return fp_error_set(err, FP_EARG, "%s: tie %d: no such node", fn, (int)i);
  *out = h->resident;
  for (int32_t v = 0; side && v < h->W.n; v++)
    side[v] = FP_PEAK_IN; /* past the size limits: nothing placed */
  if (!h->cuts)
    return FP_OK;
  /* the classes of the ties: union-find, then each node its root */
  for (int32_t v = 0; v < h->W.n; v++)
    h->cls[v] = v;
  for (int32_t i = 0; i < n_ties; i++)
    h->cls[uf_find(h->cls, ties[i].u)] = uf_find(h->cls, ties[i].v);
  for (int32_t v = 0; v < h->W.n; v++)
    h->cls[v] = uf_find(h->cls, v);
  return cut_at(h, grp, ng, n_ties > 0 ? h->cls : NULL, place, out, side, err);
}

fp_status fp_peak_cuts_tied(fp_peak_cuts *h, const int32_t *grp, int32_t ng,
                            const fp_peak_tie *ties, int32_t n_ties,
                            uint64_t *out, int8_t *side, fp_error *err) {
  return fp_peak_cuts_placed(h, grp, ng, ties, n_ties, NULL, out, side, err);
}

fp_status fp_peak_check_groups(const fp_graph *g, const int32_t *nodes,
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
      fp_peak_check_groups(g, nodes, start, n_groups, err) != FP_OK)
    return FP_EARG;
  for (int32_t i = 0; i < n_groups; i++)
    out[i] = fp_graph_resident_bytes(g);
  if (n_groups == 0)
    return FP_OK;
  fp_peak_cuts *pc = NULL;
  fp_status st = fp_peak_cuts_create(g, max_fusion_size, &pc, err);
  for (int32_t i = 0; st == FP_OK && i < n_groups; i++)
    if (start[i + 1] > start[i])
      st = fp_peak_cuts_group(pc, nodes + start[i], start[i + 1] - start[i],
                              NULL, &out[i], err);
  fp_peak_cuts_destroy(pc);
  return st;
}
