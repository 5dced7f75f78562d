/*
 * peak.c -- the incremental peak tracker behind greedy-peak.
 *
 * It keeps live(slot) for the fuser's current plan in a max segment tree
 * (freed slots hold 0).  Fusing a and b only changes the plan inside the
 * slots [pos a, pos b]: the groups there are rearranged and a + b become
 * one step.  A buffer nobody in that range touches keeps its lifetime, and
 * such a lifetime either covers the whole range or misses it, so its
 * contribution is one constant C over the range.  The tracker therefore
 * recomputes only the buffers the range touches:
 *   C = live_old(lo) - sum of their old contributions at lo - the
 *       workspace of the group at lo,
 *   live_new(s) = C + sum of their new contributions at s + the workspace
 *       of the group at s (docs/cost-model.md#workspaces),
 * and the new peak is the max of that and the tree's max outside the
 * range.  Lifetimes follow docs/cost-model.md ("Costs") exactly (the same rules
 * as model/eval.c; the tests hold the two to each other).
 */
#include <stdlib.h>
#include <string.h>

#include "heuristics/peak.h"
#include "model/eval.h"

struct peak_tracker {
  fuser *F;
  int32_t leaves;   /* power of two >= slots */
  uint64_t *tree;   /* 2 * leaves; tree[leaves + s] = live(s) */
  int32_t *arr;     /* new contents of the range being tried */
  int32_t *newpos;  /* group -> slot in the tried arrangement */
  int32_t *gstamp;  /* group -> try id that set newpos */
  int32_t *bstamp;  /* buffer -> try id that listed it */
  int32_t *touched; /* buffers the range touches */
  int64_t *diff;    /* range-relative difference array */
  uint64_t *fresh;  /* new live values of the range */
  int32_t try_id, lo, hi, a, b;
  bool ws; /* some node has a workspace */
};

static void tree_set(peak_tracker *P, int32_t s, uint64_t v) {
  int32_t i = P->leaves + s;
  P->tree[i] = v;
  for (i /= 2; i >= 1; i /= 2)
    P->tree[i] = P->tree[2 * i] > P->tree[2 * i + 1] ? P->tree[2 * i]
                                                     : P->tree[2 * i + 1];
}

/* Max of live(s) for lo <= s <= hi (0 for an empty range). */
static uint64_t tree_max(const peak_tracker *P, int32_t lo, int32_t hi) {
  uint64_t m = 0;
  if (lo > hi)
    return 0;
  for (int32_t l = lo + P->leaves, r = hi + P->leaves + 1; l < r;
       l /= 2, r /= 2) {
    if (l & 1) {
      m = P->tree[l] > m ? P->tree[l] : m;
      l++;
    }
    if (r & 1) {
      r--;
      m = P->tree[r] > m ? P->tree[r] : m;
    }
  }
  return m;
}

void peak_tracker_destroy(peak_tracker *P) {
  if (!P)
    return;
  free(P->tree);
  free(P->arr);
  free(P->newpos);
  free(P->gstamp);
  free(P->bstamp);
  free(P->touched);
  free(P->diff);
  free(P->fresh);
  free(P);
}

/* Slot of group g: in the tried arrangement when mapped = true. */
static int32_t slot_of(const peak_tracker *P, int32_t g, bool mapped) {
  if (!mapped)
    return P->F->pos[g];
  if (g == P->b)
    g = P->a;
  return P->gstamp[g] == P->try_id ? P->newpos[g] : P->F->pos[g];
}

/* Group of node v, with b fused into a when mapped. */
static int32_t group_of(const peak_tracker *P, int32_t v, bool mapped) {
  int32_t g = P->F->grp[v];
  return mapped && g == P->b ? P->a : g;
}

/* Lifetime [*first, *last] in slots of buffer buf before (mapped = false)
 * or after (true) the tried fusion; false when it is never live.  Resident
 * inputs are handled by the caller. */
static bool lifetime(const peak_tracker *P, int32_t buf, bool mapped,
                     int32_t *first, int32_t *last) {
  const fp_buffer *b = fp_graph_buffer(P->F->g, buf);
  int32_t end = -1, wg = b->writer >= 0 ? group_of(P, b->writer, mapped) : -1;
  bool split = false;
  for (int32_t i = 0; i < b->n_readers; i++) {
    int32_t rg = group_of(P, b->readers[i], mapped), s = slot_of(P, rg, mapped);
    end = s > end ? s : end;
    split |= rg != wg;
  }
  if (b->input) { /* freeable, not an output: live until its last reader */
    *first = 0;
    *last = end;
    return b->n_readers > 0;
  }
  if (b->writer < 0 || !(b->output || b->n_readers == 0 || split))
    return false;
  *first = slot_of(P, wg, mapped);
  *last = b->output ? P->F->n - 1 : b->n_readers ? end : *first;
  return true;
}

/* Lists the non-resident buffers the groups in slots lo..hi touch. */
static int32_t touched_buffers(peak_tracker *P) {
  const fuser *F = P->F;
  int32_t k = 0;
  for (int32_t s = P->lo; s <= P->hi; s++) {
    int32_t h = F->slot[s];
    for (int32_t v = h >= 0 ? F->head[h] : -1; v >= 0; v = F->next[v]) {
      const fp_node *nd = fp_graph_node(F->g, v);
      for (int32_t i = 0; i < nd->n_reads + nd->n_writes; i++) {
        int32_t b =
            i < nd->n_reads ? nd->reads[i].buffer : nd->writes[i - nd->n_reads];
        const fp_buffer *buf = fp_graph_buffer(F->g, b);
        if (P->bstamp[b] == P->try_id ||
            (buf->input && (!buf->freeable || buf->output)))
          continue;
        P->bstamp[b] = P->try_id;
        P->touched[k++] = b;
      }
    }
  }
  return k;
}

/* The workspace of live group h (docs/cost-model.md#workspaces), with
 * group b's added when h is the tried fusion's a: live at its slot
 * only. */
static uint64_t group_ws(const peak_tracker *P, int32_t h, bool tried) {
  const fuser *F = P->F;
  uint64_t s = 0;
  for (int32_t v = P->ws && h >= 0 ? F->head[h] : -1; v >= 0; v = F->next[v])
    s += fp_graph_node(F->g, v)->workspace;
  return s + (tried && h == P->a ? group_ws(P, P->b, false) : 0);
}

uint64_t peak_tracker_try(peak_tracker *P, int32_t a, int32_t b) {
  fuser *F = P->F;
  P->try_id++;
  P->a = a;
  P->b = b;
  P->lo = F->pos[a];
  P->hi = F->pos[b];
  int32_t len = P->hi - P->lo + 1;
  fuser_interval(F, a, b, P->arr);
  for (int32_t i = 0; i < len; i++)
    if (P->arr[i] >= 0) {
      P->newpos[P->arr[i]] = P->lo + i;
      P->gstamp[P->arr[i]] = P->try_id;
    }
  memset(P->diff, 0, ((size_t)len + 1) * sizeof *P->diff);
  uint64_t old_at_lo = 0;
  int32_t nt = touched_buffers(P);
  for (int32_t i = 0; i < nt; i++) {
    int32_t first, last, buf = P->touched[i];
    uint64_t bytes = fp_graph_buffer(F->g, buf)->bytes;
    if (lifetime(P, buf, false, &first, &last) && first <= P->lo &&
        P->lo <= last)
      old_at_lo += bytes;
    if (!lifetime(P, buf, true, &first, &last) || last < P->lo || first > P->hi)
      continue;
    P->diff[(first > P->lo ? first : P->lo) - P->lo] += (int64_t)bytes;
    P->diff[(last < P->hi ? last : P->hi) - P->lo + 1] -= (int64_t)bytes;
  }
  /* C: what the untouched buffers (and resident inputs) hold over the
   * whole range. */
  uint64_t c = P->tree[P->leaves + P->lo] - old_at_lo -
               group_ws(P, F->slot[P->lo], false),
           peak = 0;
  int64_t run = 0;
  for (int32_t i = 0; i < len; i++) {
    run += P->diff[i];
    P->fresh[i] =
        P->arr[i] >= 0 ? c + (uint64_t)run + group_ws(P, P->arr[i], true) : 0;
    peak = P->fresh[i] > peak ? P->fresh[i] : peak;
  }
  uint64_t out = tree_max(P, 0, P->lo - 1);
  uint64_t after = tree_max(P, P->hi + 1, F->n - 1);
  out = after > out ? after : out;
  return peak > out ? peak : out;
}

void peak_tracker_commit(peak_tracker *P) {
  for (int32_t s = P->lo; s <= P->hi; s++)
    tree_set(P, s, P->fresh[s - P->lo]);
}

uint64_t peak_tracker_peak(const peak_tracker *P) {
  return P->tree[1];
}

#define ALLOC(p, count) ((p) = calloc((size_t)(count) + 2, sizeof *(p)))

peak_tracker *peak_tracker_create(fuser *F, const fp_step *timeline) {
  peak_tracker *P = calloc(1, sizeof *P);
  int32_t n = F->n, nb = fp_graph_buffer_count(F->g);
  if (!P)
    return NULL;
  P->F = F;
  P->ws = fp_graph_workspace_total(F->g) > 0;
  P->leaves = 1;
  while (P->leaves < n)
    P->leaves *= 2;
  if (!ALLOC(P->tree, 2 * P->leaves) || !ALLOC(P->arr, n) ||
      !ALLOC(P->newpos, n) || !ALLOC(P->gstamp, n) || !ALLOC(P->bstamp, nb) ||
      !ALLOC(P->touched, nb) || !ALLOC(P->diff, n) || !ALLOC(P->fresh, n)) {
    peak_tracker_destroy(P);
    return NULL;
  }
  for (int32_t s = 0; s < n; s++)
    P->tree[P->leaves + s] = timeline[s].live_bytes;
  for (int32_t i = P->leaves - 1; i >= 1; i--)
    P->tree[i] = P->tree[2 * i] > P->tree[2 * i + 1] ? P->tree[2 * i]
                                                     : P->tree[2 * i + 1];
  return P;
}
