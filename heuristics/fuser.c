/*
 * fuser.c -- the greedy fusion engine behind greedy, greedy-lowmem and
 * greedy-peak (fusion.c drives it; peak.c tracks its peak).
 *
 * State: groups of nodes (linked member lists), an alias table (a group
 * fused into another points at it), and a topological order of the groups
 * kept in fixed slots: slot[pos] = group or -1.  Invariant: for every edge
 * g -> h of the group DAG, pos[g] < pos[h].
 *
 * Fusing A and B (pos[A] < pos[B]) creates a cycle exactly when some group
 * X != A, B has a path A -> X -> ... -> B.  Such X sit strictly between A
 * and B in the order, so the search explores only descendants of A with
 * pos < pos[B].  After the fusion the slots in [pos[A], pos[B]] are
 * rewritten as: groups that are not descendants of A, then A+B, then the
 * descendants of A (each list in its old relative order) -- which keeps
 * the invariant (a local version of the Pearce-Kelly reordering).
 *
 * It calls no other file of heuristics/.
 */
#include "heuristics/fuser.h"

#include <stdlib.h>
#include <string.h>

/* ---- state --------------------------------------------------------------- */

void fuser_free(fuser *F) {
  free(F->grp);
  free(F->alias);
  free(F->head);
  free(F->tail);
  free(F->next);
  free(F->size);
  free(F->minidx);
  free(F->maxidx);
  free(F->flags);
  free(F->pos);
  free(F->slot);
  free(F->succ_off);
  free(F->succ);
  free(F->mark);
  free(F->mark2);
  free(F->stack);
  free(F->desc);
  free(F->buf_mark);
  free(F->buf_flag);
  free(F->tmp);
  free(F->odepth);
  free(F->part);
  memset(F, 0, sizeof *F);
}

/* Distinct consumer nodes of each node's writes, as CSR. */
static int build_node_succ(fuser *F) {
  const fp_graph *g = F->g;
  int32_t n = F->n;
  F->succ_off = calloc((size_t)n + 1, sizeof *F->succ_off);
  if (!F->succ_off)
    return -1;
  for (int pass = 0; pass < 2; pass++) {
    for (int32_t v = 0; v < n; v++)
      F->mark[v] = -1;
    for (int32_t v = 0; v < n; v++) {
      const fp_node *nd = fp_graph_node(g, v);
      int32_t k = 0;
      for (int32_t w = 0; w < nd->n_writes; w++) {
        const fp_buffer *b = fp_graph_buffer(g, nd->writes[w]);
        for (int32_t r = 0; r < b->n_readers; r++) {
          int32_t c = b->readers[r];
          if (F->mark[c] == v)
            continue;
          F->mark[c] = v;
          if (pass)
            F->succ[F->succ_off[v] + k] = c;
          k++;
        }
      }
      if (!pass)
        F->succ_off[v + 1] = F->succ_off[v] + k;
    }
    if (!pass &&
        !(F->succ = malloc(((size_t)F->succ_off[n] + 1) * sizeof *F->succ)))
      return -1;
  }
  return 0;
}

#define ALLOC(p, count) ((p) = malloc(((size_t)(count) + 1) * sizeof *(p)))

int fuser_init(fuser *F, const fp_graph *g, int32_t k) {
  int32_t n = fp_graph_node_count(g), nb = fp_graph_buffer_count(g);
  memset(F, 0, sizeof *F);
  F->g = g;
  F->n = n;
  F->k = k;
  if (!ALLOC(F->grp, n) || !ALLOC(F->alias, n) || !ALLOC(F->head, n) ||
      !ALLOC(F->tail, n) || !ALLOC(F->next, n) || !ALLOC(F->size, n) ||
      !ALLOC(F->minidx, n) || !ALLOC(F->maxidx, n) || !ALLOC(F->flags, n) ||
      !ALLOC(F->pos, n) || !ALLOC(F->slot, n) || !ALLOC(F->mark, n) ||
      !ALLOC(F->mark2, n) || !ALLOC(F->stack, n) || !ALLOC(F->desc, n) ||
      !ALLOC(F->buf_mark, nb) || !ALLOC(F->buf_flag, nb) || !ALLOC(F->tmp, n) ||
      !ALLOC(F->odepth, n) || !ALLOC(F->part, n) || build_node_succ(F) != 0)
    return -1;
  for (int32_t v = 0; v < n; v++) {
    const fp_node *nd = fp_graph_node(g, v);
    F->grp[v] = F->alias[v] = F->head[v] = F->tail[v] = v;
    F->next[v] = -1;
    F->size[v] = 1;
    F->minidx[v] = F->maxidx[v] = v;
    F->flags[v] = (nd->kind == FP_KIND_EXTERN ? GF_EXTERN : 0) |
                  (nd->kind == FP_KIND_REDUCTION ? GF_REDUCTION : 0);
    F->pos[v] = F->slot[v] = v;
    F->mark[v] = F->mark2[v] = -1;
    F->odepth[v] = 0;
    F->part[v] = v;
  }
  for (int32_t b = 0; b < nb; b++)
    F->buf_mark[b] = -1;
  F->epoch = 0;
  return 0;
}

int32_t fuser_find(fuser *F, int32_t g) {
  int32_t r = g;
  while (F->alias[r] != r)
    r = F->alias[r];
  while (F->alias[g] != r) { /* path compression */
    int32_t nx = F->alias[g];
    F->alias[g] = r;
    g = nx;
  }
  return r;
}

/* ---- legality and score of a pair ---------------------------------------- */

/* Marks the buffers group A touches: bit 1 read, bit 2 written. */
static void mark_buffers(fuser *F, int32_t a) {
  int32_t e = ++F->epoch;
  for (int32_t v = F->head[a]; v >= 0; v = F->next[v]) {
    const fp_node *nd = fp_graph_node(F->g, v);
    for (int32_t i = 0; i < nd->n_reads; i++) {
      int32_t b = nd->reads[i].buffer;
      if (F->buf_mark[b] != e)
        F->buf_mark[b] = e, F->buf_flag[b] = 0;
      F->buf_flag[b] |= 1;
    }
    for (int32_t i = 0; i < nd->n_writes; i++) {
      int32_t b = nd->writes[i];
      if (F->buf_mark[b] != e)
        F->buf_mark[b] = e, F->buf_flag[b] = 0;
      F->buf_flag[b] |= 2;
    }
  }
}

/* Adds buffer b touched by B (bit `how`) to the pair's sums: shared bytes
 * counted once per buffer; vertical when one side writes what the other
 * reads; *dir gets 1 when A wrote b for B, 2 when B wrote it for A.  Bit
 * 4 marks "already counted". */
static void visit_shared(fuser *F, int32_t b, int how, pair_info *pi,
                         int *dir) {
  if (F->buf_mark[b] != F->epoch)
    return;
  if ((F->buf_flag[b] & 2) && how == 1)
    pi->vertical = true, *dir |= 1;
  if ((F->buf_flag[b] & 1) && how == 2)
    pi->vertical = true, *dir |= 2;
  if (F->buf_flag[b] & 4)
    return;
  F->buf_flag[b] |= 4;
  pi->shared += fp_graph_buffer(F->g, b)->bytes;
}

/* The loops of group g's first or last part as Inductor compares them:
 * a fused part takes its first reduction member's loops, else its first
 * member's (FusedSchedulerNode.group); *red says whether it holds a
 * reduction. */
static const fp_loop *part_loop(const fuser *F, int32_t g, bool last,
                                bool *red) {
  int32_t p = F->part[last ? F->tail[g] : F->head[g]];
  const fp_loop *first = NULL;
  *red = false;
  for (int32_t v = F->head[g]; v >= 0; v = F->next[v]) {
    const fp_node *nd = fp_graph_node(F->g, v);
    if (F->part[v] != p)
      continue;
    if (nd->kind == FP_KIND_REDUCTION) {
      *red = true;
      return &nd->loop;
    }
    first = first ? first : &nd->loop;
  }
  return first;
}

/* The product of the n sizes d[0..n) (1 for none). */
static uint64_t dims_product(const uint64_t *d, int n) {
  uint64_t p = 1;
  for (int i = 0; i < n; i++)
    p *= d[i];
  return p;
}

/* Whether Inductor's C++ scheduling would fuse x (producer, no reduction
 * in its part) and y as one loop nest (_why_fuse_nodes): equal loops, x
 * over y's input space, or two pointwise loops of equal size one of them
 * one-dimensional.  Such a pair is never outer-loop fused. */
static bool one_nest(const fp_loop *x, const fp_loop *y) {
  if (fp_loop_equal(x, y))
    return true;
  if (x->rn == 0 && x->n == y->n + y->rn &&
      memcmp(x->size, y->size, (size_t)x->n * sizeof *x->size) == 0)
    return true;
  return x->rn == 0 && y->rn == 0 && (x->n <= 1 || y->n <= 1) &&
         dims_product(x->size, x->n) == dims_product(y->size, y->n);
}

/* Inductor's memory score (bytes of buffers both groups touch), whether
 * the pair is vertical, and its proximity in the listed order. */
void fuser_score(fuser *F, int32_t a, int32_t b, pair_info *pi) {
  int dir = 0;
  pi->shared = 0;
  pi->vertical = false;
  mark_buffers(F, a);
  for (int32_t v = F->head[b]; v >= 0; v = F->next[v]) {
    const fp_node *nd = fp_graph_node(F->g, v);
    for (int32_t i = 0; i < nd->n_reads; i++)
      visit_shared(F, nd->reads[i].buffer, 1, pi, &dir);
    for (int32_t i = 0; i < nd->n_writes; i++)
      visit_shared(F, nd->writes[i], 2, pi, &dir);
  }
  pi->one_nest = true;
  if (F->cpp && pi->vertical) { /* can_fuse_vertical without outer loops */
    int32_t p = dir & 1 ? a : b, c = dir & 1 ? b : a;
    bool red1, red2;
    const fp_loop *x = part_loop(F, p, true, &red1);
    const fp_loop *y = part_loop(F, c, false, &red2);
    pi->one_nest = !red1 && x && y && one_nest(x, y);
  }
  int32_t d1 = F->minidx[a] - F->maxidx[b], d2 = F->minidx[b] - F->maxidx[a];
  d1 = d1 < 0 ? -d1 : d1;
  d2 = d2 < 0 ? -d2 : d2;
  pi->proximity = d1 > d2 ? d1 : d2;
  pi->same_kind = (F->flags[a] & GF_REDUCTION) == (F->flags[b] & GF_REDUCTION);
}

/* Whether groups a and b may form one group: size, no extern, every
 * cross pair compatible (rule 2 is pairwise over the whole group), and
 * the union holds a linker of every linked pair in it: a merge that would
 * join a linked pair before its linker is refused, so every group the
 * fuser makes passes fp_plan_check.  Uses F->tmp. */
bool fuser_legal(fuser *F, int32_t a, int32_t b) {
  if (a == b || F->size[a] + F->size[b] > F->k ||
      ((F->flags[a] | F->flags[b]) & GF_EXTERN) || F->odepth[a] || F->odepth[b])
    return false;
  for (int32_t u = F->head[a]; u >= 0; u = F->next[u])
    for (int32_t v = F->head[b]; v >= 0; v = F->next[v])
      if (!fp_graph_compatible(F->g, u, v))
        return false;
  if (fp_graph_linked_count(F->g) == 0)
    return true;
  int32_t m = 0;
  for (int32_t u = F->head[a]; u >= 0; u = F->next[u])
    F->tmp[m++] = u;
  for (int32_t v = F->head[b]; v >= 0; v = F->next[v])
    F->tmp[m++] = v;
  return fp_graph_linked_broken(F->g, F->tmp, m) < 0;
}

/* The pair rules beyond legality: enough shared bytes; vertical pairs of
 * one loop nest (pi->one_nest); horizontal pairs only when allowed and
 * not too far apart (are_long_distant_nodes). */
bool fuser_acceptable(const fuser *F, const fp_fusion_params *prm,
                      const pair_info *pi) {
  (void)F;
  if (pi->shared < prm->min_shared)
    return false;
  if (pi->vertical)
    return pi->one_nest;
  return prm->method != FP_METHOD_GREEDY_LOWMEM &&
         pi->proximity <= prm->max_distance;
}

/* ---- cycles and merging -------------------------------------------------- */

/* Pushes the groups that consume a's members' outputs onto the DFS stack
 * (those before b, not yet seen); true when one of them is b itself and
 * `from` is not a (a path a -> ... -> from -> b). */
static bool push_consumers(fuser *F, int32_t from, int32_t a, int32_t b,
                           int32_t *sp) {
  for (int32_t v = F->head[from]; v >= 0; v = F->next[v])
    for (int32_t j = F->succ_off[v]; j < F->succ_off[v + 1]; j++) {
      int32_t h = F->grp[F->succ[j]];
      if (h == from || h == a)
        continue;
      if (h == b) {
        if (from != a)
          return true;
        continue; /* the direct edge a -> b is the fusion itself */
      }
      if (F->pos[h] < F->pos[b] && F->mark[h] != F->epoch) {
        F->mark[h] = F->epoch;
        F->desc[F->n_desc++] = h;
        F->stack[(*sp)++] = h;
      }
    }
  return false;
}

bool fuser_creates_cycle(fuser *F, int32_t a, int32_t b) {
  int32_t sp = 0;
  F->epoch++;
  F->n_desc = 0;
  if (push_consumers(F, a, a, b, &sp))
    return true;
  while (sp > 0)
    if (push_consumers(F, F->stack[--sp], a, b, &sp))
      return true;
  return false;
}

/* The new contents of slots pos[a]..pos[b] after fusing b into a: groups
 * that are not descendants of a, then a, then a's descendants, then -1
 * for the freed slot.  Written to out[0 .. pos[b] - pos[a]]. */
void fuser_interval(const fuser *F, int32_t a, int32_t b, int32_t *out) {
  int32_t lo = F->pos[a], hi = F->pos[b], k = 0;
  for (int32_t s = lo + 1; s < hi; s++) {
    int32_t h = F->slot[s];
    if (h >= 0 && F->mark[h] != F->epoch)
      out[k++] = h;
  }
  out[k++] = a;
  for (int32_t s = lo + 1; s < hi; s++) {
    int32_t h = F->slot[s];
    if (h >= 0 && F->mark[h] == F->epoch)
      out[k++] = h;
  }
  while (k <= hi - lo)
    out[k++] = -1;
}

void fuser_merge(fuser *F, int32_t a, int32_t b, int32_t depth) {
  int32_t lo = F->pos[a], hi = F->pos[b];
  if (depth > 0)
    F->odepth[a] = (uint8_t)depth;
  else /* one part (no outer-loop fused group joins any other way) */
    for (int32_t v = F->head[b]; v >= 0; v = F->next[v])
      F->part[v] = F->part[F->head[a]];
  fuser_interval(F, a, b, F->tmp);
  for (int32_t s = lo; s <= hi; s++) {
    F->slot[s] = F->tmp[s - lo];
    if (F->slot[s] >= 0)
      F->pos[F->slot[s]] = s;
  }
  for (int32_t v = F->head[b]; v >= 0; v = F->next[v])
    F->grp[v] = a;
  F->next[F->tail[a]] = F->head[b];
  F->tail[a] = F->tail[b];
  F->size[a] += F->size[b];
  F->minidx[a] = F->minidx[b] < F->minidx[a] ? F->minidx[b] : F->minidx[a];
  F->maxidx[a] = F->maxidx[b] > F->maxidx[a] ? F->maxidx[b] : F->maxidx[a];
  F->flags[a] |= F->flags[b];
  F->alias[b] = a;
  F->pos[b] = -1;
}

/* ---- outer-loop fusion (Inductor's C++ scheduling) ----------------------- */

void fuser_set_cpp(fuser *F) {
  F->cpp = false;
  for (int32_t v = 0; v < F->n; v++) {
    const fp_node *nd = fp_graph_node(F->g, v);
    if (nd->kind != FP_KIND_EXTERN && !nd->loop.present)
      return;
    F->cpp = F->cpp || nd->kind != FP_KIND_EXTERN;
  }
}

/* Whether node v reads a buffer node u writes. */
static bool reads_from(const fp_graph *g, int32_t u, int32_t v) {
  const fp_node *nd = fp_graph_node(g, v);
  for (int32_t i = 0; i < nd->n_reads; i++)
    if (fp_graph_buffer(g, nd->reads[i].buffer)->writer == u)
      return true;
  return false;
}

/* Whether producer p's results, indexed by its loop sizes (a reduction's
 * without its reduction sizes), can be read along consumer c's loop
 * nest, its sizes then reduction sizes: one is a prefix of the other (a
 * reduction's result read along the shared outer loops, or broadcast
 * over the inner ones), and neither is a pointwise node over the other's
 * whole input space in another loop order (resnet50.bwd's (64) x (64,
 * 12544) and (64, 12544, 64): the 64s are other dimensions). */
static bool indexed_alike(const fp_node *p, const fp_node *c) {
  int n =
      p->loop.n < c->loop.n + c->loop.rn ? p->loop.n : c->loop.n + c->loop.rn;
  if (memcmp(p->loop.size, c->loop.size, (size_t)n * sizeof *p->loop.size))
    return false;
  const fp_node *x = p->kind == FP_KIND_POINTWISE ? p : c, *y = x == p ? c : p;
  return !(x->kind == FP_KIND_POINTWISE && y->kind == FP_KIND_REDUCTION &&
           x->numel == y->numel * y->rnumel &&
           !(x->loop.n == y->loop.n + y->loop.rn &&
             memcmp(x->loop.size, y->loop.size,
                    (size_t)x->loop.n * sizeof *x->loop.size) == 0));
}

/* Whether u, v of two groups joined by outer-loop fusion may be in it.
 * Each keeps its own loop nest, so an independent pair may, and so may a
 * pair the sizes or loop rule refuses where one reads the other
 * indexed_alike.  A pair listed unfusible may when it is independent or
 * only a shared loop prefix joins it (the exporter lists those where code
 * generation split Inductor's group, docs/exporter.md); another, which
 * Inductor's scheduler refuses, may not. */
static bool outer_pair_ok(const fp_graph *g, int32_t u, int32_t v) {
  const fp_node *x = fp_graph_node(g, u), *y = fp_graph_node(g, v);
  bool uv = reads_from(g, u, v), vu = !uv && reads_from(g, v, u);
  if (!uv && !vu)
    return true;
  if (!indexed_alike(uv ? x : y, uv ? y : x))
    return false;
  if (!fp_iter_compatible(x, y) || fp_graph_compatible(g, u, v))
    return true;
  return !fp_loop_equal(&x->loop, &y->loop) &&
         !(x->kind == FP_KIND_POINTWISE && y->kind == FP_KIND_POINTWISE) &&
         !one_nest(&x->loop, &y->loop) && !one_nest(&y->loop, &x->loop);
}

/* Whether every pair across groups a and b passes outer_pair_ok. */
static bool outer_pairs_ok(const fuser *F, int32_t a, int32_t b) {
  for (int32_t u = F->head[a]; u >= 0; u = F->next[u])
    for (int32_t v = F->head[b]; v >= 0; v = F->next[v])
      if (!outer_pair_ok(F->g, u, v))
        return false;
  return true;
}

int32_t fuser_outer_depth(fuser *F, const fp_fusion_params *prm, int32_t a,
                          int32_t b, const pair_info *pi) {
  if (!F->cpp || a == b || !pi->vertical || pi->shared < prm->min_shared ||
      F->size[a] + F->size[b] > F->k ||
      ((F->flags[a] | F->flags[b]) & GF_EXTERN))
    return 0;
  bool red1, red2;
  const fp_loop *x = part_loop(F, a, true, &red1);
  const fp_loop *y = part_loop(F, b, false, &red2);
  if (!x || !y || (x->n == 0 && y->n == 0 && red1 && red2))
    return 0;
  int32_t da = F->odepth[a], db = F->odepth[b];
  if (!da && !db && !red1 && one_nest(x, y))
    return 0;
  if (da && db)
    return da == db && outer_pairs_ok(F, a, b) ? da : 0;
  int32_t d = x->n < y->n ? x->n : y->n;
  if (d < 1 || memcmp(x->size, y->size, (size_t)d * sizeof *x->size) != 0)
    return 0;
  if ((da || db) && (da ? da : db) != d)
    return 0;
  return outer_pairs_ok(F, a, b) ? d : 0;
}

bool fuser_splits(fuser *F, int32_t g) {
  if (!F->odepth[g])
    return false;
  int32_t m = 0;
  for (int32_t u = F->head[g]; u >= 0; u = F->next[u]) {
    F->tmp[m++] = u;
    for (int32_t v = F->next[u]; v >= 0; v = F->next[v])
      if (F->part[u] != F->part[v] && !fp_graph_compatible(F->g, u, v))
        return true;
  }
  return fp_graph_linked_count(F->g) > 0 &&
         fp_graph_linked_broken(F->g, F->tmp, m) >= 0;
}

/* ---- plans --------------------------------------------------------------- */

/* Appends group h's part p (every member of that part, in member order)
 * to out as one group. */
static fp_status append_part(const fuser *F, int32_t h, int32_t p, fp_plan *out,
                             fp_error *err) {
  if (fp_plan_open_group(out, err) != FP_OK)
    return FP_ENOMEM;
  for (int32_t v = F->head[h]; v >= 0; v = F->next[v])
    if ((p < 0 || F->part[v] == p) && fp_plan_append_node(out, v, err) != FP_OK)
      return FP_ENOMEM;
  return FP_OK;
}

fp_status fuser_plan(fuser *F, fp_plan *out, int32_t *sched, fp_error *err) {
  fp_plan_clear(out);
  for (int32_t s = 0; s < F->n; s++) {
    int32_t h = F->slot[s];
    if (h < 0)
      continue;
    if (!fuser_splits(F, h)) {
      if (sched)
        sched[fp_plan_group_count(out)] = s;
      if (append_part(F, h, -1, out, err) != FP_OK)
        return FP_ENOMEM;
      continue;
    }
    int32_t e = ++F->epoch; /* each part once, in the order fused */
    for (int32_t v = F->head[h]; v >= 0; v = F->next[v]) {
      if (F->mark[F->part[v]] == e)
        continue;
      F->mark[F->part[v]] = e;
      if (sched)
        sched[fp_plan_group_count(out)] = s;
      if (append_part(F, h, F->part[v], out, err) != FP_OK)
        return FP_ENOMEM;
    }
  }
  return FP_OK;
}

void fuser_set_groups(fuser *F, const fp_plan *p) {
  for (int32_t s = 0; s < F->n; s++)
    F->slot[s] = -1;
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, t, &len);
    int32_t h = grp[0];
    F->pos[h] = t;
    F->slot[t] = h;
    for (int32_t i = 1; i < len; i++) {
      int32_t v = grp[i];
      F->grp[v] = F->alias[v] = F->part[v] = h;
      F->next[F->tail[h]] = v;
      F->tail[h] = v;
      F->size[h]++;
      F->minidx[h] = v < F->minidx[h] ? v : F->minidx[h];
      F->maxidx[h] = v > F->maxidx[h] ? v : F->maxidx[h];
      F->flags[h] |= F->flags[v];
      F->pos[v] = -1;
    }
  }
}

void fuser_set_order(fuser *F, const fp_plan *p) {
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t len;
    int32_t v = fp_plan_group(p, t, &len)[0];
    F->pos[v] = t;
    F->slot[t] = v;
  }
}
