/*
 * eval.c -- legality, costs and lower bounds (docs/cost-model.md).
 *
 * Everything is computed from the step of each node (the index of its
 * group): a buffer's write step is its writer's step, its last use the max
 * step of its readers.  Live memory is a difference array over steps, so a
 * plan of T steps over a graph of B buffers and R reads costs O(T + B + R).
 */
#include "model/eval.h"
#include "model/args.h"
#include "model/peak_bound.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- legality ----------------------------------------------------------- */

/* Assigns step[v] for every node of the plan and checks that each node
 * appears exactly once, no group is empty, and no group is over `k`. */
static fp_status assign_steps(const fp_graph *g, const fp_plan *p, int32_t k,
                              int32_t *step, fp_error *err) {
  int32_t n = fp_graph_node_count(g);
  for (int32_t v = 0; v < n; v++)
    step[v] = -1;
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, t, &len);
    if (len == 0)
      return fp_error_set(err, FP_EILLEGAL, "group %d is empty", (int)t);
    if (len > k)
      return fp_error_set(err, FP_EILLEGAL,
                          "group %d has %d nodes, more than max_fusion_size "
                          "%d",
                          (int)t, (int)len, (int)k);
    for (int32_t i = 0; i < len; i++) {
      int32_t v = grp[i];
      if (v < 0 || v >= n)
        return fp_error_set(err, FP_EILLEGAL,
                            "group %d: node index %d out of range", (int)t,
                            (int)v);
      if (step[v] >= 0)
        return fp_error_set(err, FP_EILLEGAL,
                            "node '%s' appears twice (groups %d and %d)",
                            fp_graph_node(g, v)->name, (int)step[v], (int)t);
      step[v] = t;
    }
  }
  for (int32_t v = 0; v < n; v++)
    if (step[v] < 0)
      return fp_error_set(err, FP_EILLEGAL,
                          "node '%s' is missing from the plan",
                          fp_graph_node(g, v)->name);
  return FP_OK;
}

/* Writes loop nest l as "(2, 49, 768)" or "(768) x (98)" into out (256
 * bytes hold the longest, FP_MAX_LOOP_DIMS sizes below 2^53). */
static void loop_text(const fp_loop *l, char *out, size_t cap) {
  size_t k = (size_t)snprintf(out, cap, "(");
  for (int i = 0; i < l->n + l->rn && k < cap; i++)
    k += (size_t)snprintf(out + k, cap - k, "%s%llu",
                          i == l->n ? ") x ("
                          : i       ? ", "
                                    : "",
                          (unsigned long long)l->size[i]);
  if (k < cap)
    snprintf(out + k, cap - k, ")");
}

/* The message of a pair whose iteration spaces agree and whose loop nests
 * do not (docs/cost-model.md#loop-nests); FP_EILLEGAL. */
static fp_status loop_error(int32_t t, const fp_node *a, const fp_node *b,
                            fp_error *err) {
  char la[256], lb[256];
  loop_text(&a->loop, la, sizeof la);
  loop_text(&b->loop, lb, sizeof lb);
  return fp_error_set(err, FP_EILLEGAL,
                      "group %d: nodes '%s' %s and '%s' %s have "
                      "incompatible loop nests",
                      (int)t, a->name, la, b->name, lb);
}

/* Explains why nodes u and v may not share group t. */
static fp_status fusion_error(const fp_graph *g, int32_t t, int32_t u,
                              int32_t v, fp_error *err) {
  const fp_node *a = fp_graph_node(g, u), *b = fp_graph_node(g, v);
  if (a->kind == FP_KIND_EXTERN || b->kind == FP_KIND_EXTERN)
    return fp_error_set(err, FP_EILLEGAL,
                        "group %d: extern node '%s' is fused with '%s'", (int)t,
                        a->kind == FP_KIND_EXTERN ? a->name : b->name,
                        a->kind == FP_KIND_EXTERN ? b->name : a->name);
  if (fp_graph_is_unfusible(g, u, v))
    return fp_error_set(err, FP_EILLEGAL,
                        "group %d: nodes '%s' and '%s' are listed unfusible",
                        (int)t, a->name, b->name);
  fp_node x = *a, y = *b; /* the same nodes without loop nests */
  x.loop.present = y.loop.present = false;
  if (fp_iter_compatible(&x, &y))
    return loop_error(t, a, b, err);
  return fp_error_set(err, FP_EILLEGAL,
                      "group %d: nodes '%s' [%llu, %llu] and '%s' [%llu, "
                      "%llu] have incompatible iteration spaces",
                      (int)t, a->name, (unsigned long long)a->numel,
                      (unsigned long long)a->rnumel, b->name,
                      (unsigned long long)b->numel,
                      (unsigned long long)b->rnumel);
}

/* The message of group t holding linked pair k without a linker; names
 * the first linker. */
static fp_status linked_error(const fp_graph *g, int32_t t, int32_t k,
                              fp_error *err) {
  const fp_linked *l = fp_graph_linked(g, k);
  return fp_error_set(err, FP_EILLEGAL,
                      "group %d: nodes '%s' and '%s' are a linked pair and "
                      "the group holds none of their %d linkers ('%s'%s)",
                      (int)t, fp_graph_node(g, l->u)->name,
                      fp_graph_node(g, l->v)->name, (int)l->n_via,
                      fp_graph_node(g, l->via[0])->name,
                      l->n_via > 1 ? ", ..." : "");
}

/* Checks rules 1-2 (extern alone, pairwise compatible, linked pairs with
 * a linker) in every group. */
static fp_status check_fusions(const fp_graph *g, const fp_plan *p,
                               fp_error *err) {
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, t, &len);
    for (int32_t i = 0; i < len; i++)
      for (int32_t j = i + 1; j < len; j++)
        if (!fp_graph_compatible(g, grp[i], grp[j]))
          return fusion_error(g, t, grp[i], grp[j], err);
    int32_t k = len > 1 ? fp_graph_linked_broken(g, grp, len) : -1;
    if (k >= 0)
      return linked_error(g, t, k, err);
  }
  return FP_OK;
}

/* Checks rule 4: every reader runs in its writer's step or later. */
static fp_status check_order(const fp_graph *g, const int32_t *step,
                             fp_error *err) {
  for (int32_t v = 0; v < fp_graph_node_count(g); v++) {
    const fp_node *n = fp_graph_node(g, v);
    for (int32_t i = 0; i < n->n_reads; i++) {
      const fp_buffer *b = fp_graph_buffer(g, n->reads[i].buffer);
      if (b->writer >= 0 && step[b->writer] > step[v])
        return fp_error_set(err, FP_EILLEGAL,
                            "node '%s' (group %d) reads '%s' before its "
                            "writer '%s' runs (group %d)",
                            n->name, (int)step[v], b->name,
                            fp_graph_node(g, b->writer)->name,
                            (int)step[b->writer]);
    }
  }
  return FP_OK;
}

/* Full legality check; fills step[] (n entries) on success. */
static fp_status check_into(const fp_graph *g, const fp_plan *p, int32_t k,
                            int32_t *step, fp_error *err) {
  k = fp_graph_fusion_cap(g, k); /* a limit may only lower g's own */
  fp_status st = assign_steps(g, p, k, step, err);
  if (st == FP_OK)
    st = check_fusions(g, p, err);
  if (st == FP_OK)
    st = check_order(g, step, err);
  return st;
}

/* FP_EARG unless g is finalized and p is given (the entry points). */
static fp_status check_args(const fp_graph *g, const fp_plan *p, const char *fn,
                            fp_error *err) {
  if (fp_arg_graph(g, fn, err) != FP_OK ||
      fp_arg_ptr(p, fn, "the plan", err) != FP_OK)
    return FP_EARG;
  return FP_OK;
}

fp_status fp_plan_check(const fp_graph *g, const fp_plan *p,
                        int32_t max_fusion_size, fp_error *err) {
  if (check_args(g, p, "plan check", err) != FP_OK)
    return FP_EARG;
  int32_t *step = malloc(((size_t)fp_graph_node_count(g) + 1) * sizeof *step);
  if (!step)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  fp_status st = check_into(g, p, max_fusion_size, step, err);
  free(step);
  return st;
}

/* ---- costs -------------------------------------------------------------- */

/* Scratch arrays of one evaluation. */
typedef struct eval_work {
  int32_t *step;    /* per node */
  int32_t *stamp;   /* per buffer: last group that read it */
  uint64_t *cur;    /* per buffer: bytes counted for it in that group */
  int64_t *delta;   /* per step + 1: live-memory difference array */
  uint64_t *reads;  /* per step */
  uint64_t *writes; /* per step */
} eval_work;

static void work_free(eval_work *w) {
  free(w->step);
  free(w->stamp);
  free(w->cur);
  free(w->delta);
  free(w->reads);
  free(w->writes);
}

static int work_alloc(eval_work *w, size_t nodes, size_t buffers,
                      size_t steps) {
  memset(w, 0, sizeof *w);
  w->step = malloc((nodes + 1) * sizeof *w->step);
  w->stamp = malloc((buffers + 1) * sizeof *w->stamp);
  w->cur = malloc((buffers + 1) * sizeof *w->cur);
  w->delta = calloc(steps + 1, sizeof *w->delta);
  w->reads = calloc(steps + 1, sizeof *w->reads);
  w->writes = calloc(steps + 1, sizeof *w->writes);
  if (w->step && w->stamp && w->cur && w->delta && w->reads && w->writes)
    return 0;
  work_free(w);
  return -1;
}

/* Read traffic per step: each distinct buffer a group reads and does not
 * produce, once, at the largest per-read byte count among its readers. */
static void count_reads(const fp_graph *g, const fp_plan *p, eval_work *w) {
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++)
    w->stamp[b] = -1;
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, t, &len);
    for (int32_t i = 0; i < len; i++) {
      const fp_node *n = fp_graph_node(g, grp[i]);
      for (int32_t r = 0; r < n->n_reads; r++) {
        int32_t b = n->reads[r].buffer;
        uint64_t bytes = n->reads[r].bytes;
        int32_t wr = fp_graph_buffer(g, b)->writer;
        if (wr >= 0 && w->step[wr] == t)
          continue; /* produced inside the group: never read from memory */
        if (w->stamp[b] != t) {
          w->stamp[b] = t;
          w->cur[b] = bytes;
          w->reads[t] += bytes;
        } else if (bytes > w->cur[b]) {
          w->reads[t] += bytes - w->cur[b];
          w->cur[b] = bytes;
        }
      }
    }
  }
}

/* Adds `bytes` to live(t) for first <= t <= last. */
static void add_live(eval_work *w, int32_t first, int32_t last,
                     uint64_t bytes) {
  w->delta[first] += (int64_t)bytes;
  w->delta[last + 1] -= (int64_t)bytes;
}

/* Materialization and lifetimes of every buffer; returns how many produced
 * buffers are materialized. */
static int32_t count_buffers(const fp_graph *g, int32_t steps, eval_work *w) {
  int32_t materialized = 0;
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++) {
    const fp_buffer *buf = fp_graph_buffer(g, b);
    int32_t last = -1;
    bool split = false; /* some reader outside the writer's group */
    int32_t ws = buf->writer >= 0 ? w->step[buf->writer] : -1;
    for (int32_t i = 0; i < buf->n_readers; i++) {
      int32_t s = w->step[buf->readers[i]];
      last = s > last ? s : last;
      split |= s != ws;
    }
    if (buf->input) {
      /* Resident inputs are added once, outside; a freeable one lives from
       * the start through its last reader's step. */
      if (buf->freeable && !buf->output && buf->n_readers > 0)
        add_live(w, 0, last, buf->bytes);
      continue;
    }
    if (buf->writer < 0)
      continue; /* unused: never written, never read */
    if (!(buf->output || buf->n_readers == 0 || split))
      continue; /* consumed inside its writer's group */
    materialized++;
    w->writes[ws] += buf->bytes;
    int32_t end = buf->output ? steps - 1 : (buf->n_readers ? last : ws);
    add_live(w, ws, end, buf->bytes);
  }
  return materialized;
}

/* Whether v's pair k, (i, o), applies at v's step, before any other pair
 * of v (fp_inplace_node_saving's rule). */
static bool inplace_applies(const fp_graph *g, int32_t v, int32_t k,
                            fp_inplace pr, fp_step_where where,
                            const void *ctx) {
  const fp_buffer *i = fp_graph_buffer(g, pr.read);
  const fp_buffer *o = fp_graph_buffer(g, pr.write);
  if (i->output || (i->input ? !i->freeable : where(ctx, i->writer) >= 0))
    return false; /* i outlives the step, or is not in memory */
  for (int32_t r = 0; r < i->n_readers; r++) {
    int32_t u = i->readers[r], at = u == v ? -1 : where(ctx, u);
    /* A fused reader in v's group read each element before v writes it
     * (Inductor: v's ancestors are no remaining use). */
    if (at > 0 || (at == 0 && !fp_graph_inplace_fused_reader(g, v, k, u)))
      return false; /* another reader still needs i */
  }
  if (o->output || o->n_readers == 0)
    return true;
  for (int32_t r = 0; r < o->n_readers; r++)
    if (where(ctx, o->readers[r]) > 0)
      return true; /* o is materialized */
  return false;
}

uint64_t fp_inplace_node_applied(const fp_graph *g, int32_t v,
                                 fp_step_where where, const void *ctx) {
  int32_t m;
  const fp_inplace *pr = fp_graph_inplace(g, v, &m);
  if (!where)
    return 0;
  uint64_t used = 0; /* bit k: pair k applied (FP_MAX_INPLACE_PER_NODE) */
  for (int32_t k = 0; k < m && k < FP_MAX_INPLACE_PER_NODE; k++) {
    bool free_ = inplace_applies(g, v, k, pr[k], where, ctx);
    for (int32_t j = 0; free_ && j < k; j++)
      if ((used >> j & 1) &&
          (pr[j].read == pr[k].read || pr[j].write == pr[k].write))
        free_ = false; /* storage already taken over at this step */
    used |= (uint64_t)free_ << k;
  }
  return used;
}

uint64_t fp_inplace_node_saving(const fp_graph *g, int32_t v,
                                fp_step_where where, const void *ctx) {
  int32_t m;
  const fp_inplace *pr = fp_graph_inplace(g, v, &m);
  uint64_t used = fp_inplace_node_applied(g, v, where, ctx), saved = 0;
  for (int32_t k = 0; k < m && k < FP_MAX_INPLACE_PER_NODE; k++)
    saved += used >> k & 1 ? fp_graph_buffer(g, pr[k].write)->bytes : 0;
  return saved;
}

/* fp_step_where over a plan's steps: ctx is a step_at. */
typedef struct step_at {
  const int32_t *step;
  int32_t t;
} step_at;

static int where_step(const void *ctx, int32_t u) {
  const step_at *a = ctx;
  return a->step[u] < a->t ? -1 : a->step[u] > a->t;
}

uint64_t fp_inplace_plan_applied(const fp_graph *g, const int32_t *step,
                                 int32_t v) {
  if (!step || !fp_graph_node(g, v))
    return 0;
  step_at a = {step, step[v]};
  return fp_inplace_node_applied(g, v, where_step, &a);
}

/* fp_step_where over node masks: ctx is a mask_at. */
typedef struct mask_at {
  uint64_t done, group;
} mask_at;

static int where_mask(const void *ctx, int32_t u) {
  const mask_at *a = ctx;
  return a->done >> u & 1 ? -1 : !(a->group >> u & 1);
}

uint64_t fp_inplace_mask_saving(const fp_graph *g, uint64_t done,
                                uint64_t group) {
  if (fp_graph_inplace_count(g) == 0 || fp_graph_node_count(g) > 64)
    return 0;
  mask_at a = {done, group};
  uint64_t s = 0;
  for (uint64_t m = group; m; m &= m - 1)
    s += fp_inplace_node_saving(g, __builtin_ctzll(m), where_mask, &a);
  return s;
}

/* Adds every node's workspace to live memory at its step alone: the
 * kernel's temporaries exist only during its call, beside everything else
 * live then (docs/cost-model.md#workspaces). */
static void count_workspace(const fp_graph *g, eval_work *w) {
  for (int32_t v = 0; v < fp_graph_node_count(g); v++) {
    uint64_t ws = fp_graph_node(g, v)->workspace;
    if (ws)
      add_live(w, w->step[v], w->step[v], ws);
  }
}

/* Takes every node's in-place saving off live memory at its step. */
static void count_inplace(const fp_graph *g, eval_work *w) {
  if (fp_graph_inplace_count(g) == 0)
    return;
  for (int32_t v = 0; v < fp_graph_node_count(g); v++) {
    step_at a = {w->step, w->step[v]};
    uint64_t s = fp_inplace_node_saving(g, v, where_step, &a);
    w->delta[a.t] -= (int64_t)s;
    w->delta[a.t + 1] += (int64_t)s;
  }
}

fp_status fp_plan_eval_k(const fp_graph *g, const fp_plan *p,
                         int32_t max_fusion_size, fp_metrics *out,
                         fp_step *timeline, fp_error *err) {
  if (check_args(g, p, "plan eval", err) != FP_OK ||
      fp_arg_ptr(out, "plan eval", "the metrics", err) != FP_OK)
    return FP_EARG;
  int32_t steps = fp_plan_group_count(p);
  eval_work w;
  if (work_alloc(&w, (size_t)fp_graph_node_count(g),
                 (size_t)fp_graph_buffer_count(g), (size_t)steps) != 0)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  fp_status st = check_into(g, p, max_fusion_size, w.step, err);
  if (st != FP_OK)
    goto done;
  count_reads(g, p, &w);
  memset(out, 0, sizeof *out);
  out->materialized = count_buffers(g, steps, &w);
  count_inplace(g, &w);
  count_workspace(g, &w);
  out->kernels = steps;
  out->resident_bytes = fp_graph_resident_bytes(g);
  out->peak_bytes = out->resident_bytes;
  out->peak_step = -1;
  int64_t live = 0;
  for (int32_t t = 0; t < steps; t++) {
    live += w.delta[t];
    uint64_t now = out->resident_bytes + (uint64_t)live;
    if (out->peak_step < 0 || now > out->peak_bytes) {
      out->peak_bytes = now;
      out->peak_step = t;
    }
    out->read_bytes += w.reads[t];
    out->write_bytes += w.writes[t];
    if (timeline) {
      timeline[t].live_bytes = now;
      timeline[t].read_bytes = w.reads[t];
      timeline[t].write_bytes = w.writes[t];
      fp_plan_group(p, t, &timeline[t].nodes);
    }
  }
  out->traffic_bytes = out->read_bytes + out->write_bytes;
done:
  work_free(&w);
  return st;
}

fp_status fp_plan_eval(const fp_graph *g, const fp_plan *p, fp_metrics *out,
                       fp_step *timeline, fp_error *err) {
  return fp_plan_eval_k(g, p, 0, out, timeline, err);
}

/* ---- lower bounds ------------------------------------------------------- */

/* Per buffer: the smallest per-read bytes over all its reads (any_min)
 * and over reads by nodes that can never share the writer's group
 * (sep_min); UINT64_MAX when there is none.  One pass over all reads. */
static void min_reads(const fp_graph *g, bool can_fuse, uint64_t *any_min,
                      uint64_t *sep_min) {
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++)
    any_min[b] = sep_min[b] = UINT64_MAX;
  for (int32_t v = 0; v < fp_graph_node_count(g); v++) {
    const fp_node *n = fp_graph_node(g, v);
    for (int32_t i = 0; i < n->n_reads; i++) {
      int32_t b = n->reads[i].buffer, w = fp_graph_buffer(g, b)->writer;
      uint64_t bytes = n->reads[i].bytes;
      any_min[b] = bytes < any_min[b] ? bytes : any_min[b];
      if (w >= 0 && !(can_fuse && fp_graph_compatible(g, w, v)))
        sep_min[b] = bytes < sep_min[b] ? bytes : sep_min[b];
    }
  }
}

/* Traffic bound for buffer b; sets *must to whether every plan
 * materializes it. */
static uint64_t buffer_traffic_bound(const fp_buffer *buf, uint64_t any_min,
                                     uint64_t sep_min, bool *must) {
  *must = false;
  if (buf->input)
    return buf->n_readers ? any_min : 0;
  if (buf->writer < 0)
    return 0;
  *must = buf->output || buf->n_readers == 0 || sep_min != UINT64_MAX;
  if (!*must)
    return 0;
  return buf->bytes + (sep_min != UINT64_MAX ? sep_min : 0);
}

/* Whether node_peak_bound counts buffer b when v reads it. */
static bool counted_read(const fp_buffer *buf, const bool *must, int32_t b) {
  return buf->input ? buf->freeable && !buf->output : must[b];
}

/* What in-place takeovers can save from node_peak_bound's sum at v's step:
 * a buffer o of the sum (v's reads and writes, stamped v) written by a
 * pair (i, o) whose i the sum counts too, as v's read.  o then shares i's
 * storage; when i is not in the sum, i's storage still holds o's bytes
 * (equal sizes), so nothing is lost there. */
static uint64_t node_peak_inplace(const fp_graph *g, int32_t v,
                                  const bool *must, const int32_t *stamp) {
  const fp_node *n = fp_graph_node(g, v);
  uint64_t save = 0;
  for (int32_t r = 0; r < n->n_reads + n->n_writes; r++) {
    int32_t o = r < n->n_reads ? n->reads[r].buffer : n->writes[r - n->n_reads];
    const fp_buffer *ob = fp_graph_buffer(g, o);
    bool dup = false; /* count each o once */
    for (int32_t j = 0; j < r && !dup; j++)
      dup = o ==
            (j < n->n_reads ? n->reads[j].buffer : n->writes[j - n->n_reads]);
    if (dup || ob->writer < 0 || !must[o])
      continue;
    int32_t m;
    const fp_inplace *pr = fp_graph_inplace(g, ob->writer, &m);
    bool hit = false;
    for (int32_t k = 0; k < m && !hit; k++)
      hit = pr[k].write == o && stamp[pr[k].read] == v &&
            counted_read(fp_graph_buffer(g, pr[k].read), must, pr[k].read);
    save += hit ? ob->bytes : 0;
  }
  return save;
}

/* Peak bound at node v: resident inputs + freeable inputs it reads + the
 * must-materialize buffers it reads or writes (each once), less what
 * in-place takeovers may save among them, + v's workspace (live at v's
 * step in every plan). */
static uint64_t node_peak_bound(const fp_graph *g, int32_t v, const bool *must,
                                int32_t *stamp) {
  const fp_node *n = fp_graph_node(g, v);
  uint64_t s = fp_graph_resident_bytes(g) + n->workspace;
  for (int32_t i = 0; i < n->n_reads; i++) {
    int32_t b = n->reads[i].buffer;
    const fp_buffer *buf = fp_graph_buffer(g, b);
    if (stamp[b] == v)
      continue;
    stamp[b] = v;
    if (counted_read(buf, must, b))
      s += buf->bytes;
  }
  for (int32_t i = 0; i < n->n_writes; i++)
    if (must[n->writes[i]])
      s += fp_graph_buffer(g, n->writes[i])->bytes;
  if (fp_graph_inplace_count(g) > 0)
    s -= node_peak_inplace(g, v, must, stamp);
  return s;
}

/* The traffic rule of fp_bounds into *out, each buffer's term into
 * per_buffer[b] unless it is NULL, and must[b] for every buffer (whether
 * every plan materializes it).  FP_ENOMEM. */
static fp_status traffic_rule(const fp_graph *g, bool *must,
                              uint64_t *per_buffer, uint64_t *out,
                              fp_error *err) {
  size_t nb = (size_t)fp_graph_buffer_count(g) + 1;
  uint64_t *any_min = malloc(nb * sizeof *any_min);
  uint64_t *sep_min = malloc(nb * sizeof *sep_min);
  fp_status st = FP_OK;
  if (!any_min || !sep_min) {
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
    goto done;
  }
  min_reads(g, fp_graph_max_fusion_size(g) > 1, any_min, sep_min);
  *out = 0;
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++) {
    uint64_t t = buffer_traffic_bound(fp_graph_buffer(g, b), any_min[b],
                                      sep_min[b], &must[b]);
    *out += t;
    if (per_buffer)
      per_buffer[b] = t;
  }
done:
  free(any_min);
  free(sep_min);
  return st;
}

/* traffic_rule with its own must[] array. */
static fp_status traffic_only(const fp_graph *g, uint64_t *per_buffer,
                              uint64_t *out, fp_error *err) {
  bool *must = calloc((size_t)fp_graph_buffer_count(g) + 1, sizeof *must);
  fp_status st = must ? traffic_rule(g, must, per_buffer, out, err)
                      : fp_error_set(err, FP_ENOMEM, "out of memory");
  free(must);
  return st;
}

fp_status fp_graph_traffic_bound(const fp_graph *g, uint64_t *out,
                                 fp_error *err) {
  if (fp_arg_graph(g, "traffic bound", err) != FP_OK ||
      fp_arg_ptr(out, "traffic bound", "out", err) != FP_OK)
    return FP_EARG;
  return traffic_only(g, NULL, out, err);
}

fp_status fp_graph_buffer_traffic_bounds(const fp_graph *g,
                                         uint64_t *per_buffer, fp_error *err) {
  uint64_t total;
  if (fp_arg_graph(g, "traffic bounds", err) != FP_OK ||
      fp_arg_ptr(per_buffer, "traffic bounds", "per_buffer", err) != FP_OK)
    return FP_EARG;
  return traffic_only(g, per_buffer, &total, err);
}

fp_status fp_graph_bounds(const fp_graph *g, fp_bounds *out, fp_error *err) {
  if (fp_arg_graph(g, "bounds", err) != FP_OK ||
      fp_arg_ptr(out, "bounds", "out", err) != FP_OK)
    return FP_EARG;
  size_t nb = (size_t)fp_graph_buffer_count(g) + 1;
  bool *must = calloc(nb, sizeof *must);
  int32_t *stamp = malloc(nb * sizeof *stamp);
  fp_status st = FP_OK;
  if (!must || !stamp) {
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
    goto done;
  }
  if ((st = traffic_rule(g, must, NULL, &out->traffic_bytes, err)) != FP_OK)
    goto done;
  for (size_t b = 0; b < nb; b++)
    stamp[b] = -1;
  out->peak_bytes = fp_graph_resident_bytes(g);
  for (int32_t v = 0; v < fp_graph_node_count(g); v++) {
    uint64_t s = node_peak_bound(g, v, must, stamp);
    out->peak_bytes = s > out->peak_bytes ? s : out->peak_bytes;
  }
  /* The stronger rules of peak_bound.c (valid for every plan as well). */
  st = fp_peak_bound(g, 0, out->peak_bytes, &out->peak_bytes, err);
done:
  free(must);
  free(stamp);
  return st;
}
