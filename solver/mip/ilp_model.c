/*
 * ilp_model.c -- builds the time-indexed integer program of docs/solver.md
 * ("The integer program") in its strong form (see ilp_model.h for the
 * columns), and reads plans and bounds back out of its solutions.
 *
 * Constraint families, in the order they are added:
 *   window      y[v,t-1] <= y[v,t]            (y is a prefix sum of x)
 *   precedence  y[v,t] <= y[u,t]   for u -> v; y[v,t] <= y[u,t-1] when u
 *               and v cannot share a step (strict precedence)
 *   steps       z[t] <= z[t-1]; z[t] <= sum_v x[v,t];
 *               sum_v x[v,t] <= K z[t]   (symmetry breaking: no empty step
 *               before a used one; group size)
 *   class       w[c,t] >= x[v,t] for v of class c (kind, numel, rnumel, loop;
 *               each extern its own class); sum_{c in Q} w[c,t] <= 1 for
 *               Q a clique of pairwise incompatible classes; unfusible
 *               pairs x[u,t] + x[v,t] <= 1; linked pairs x[u,t] +
 *               x[v,t] - sum_{c linker} x[c,t] <= 1
 *   materialize m[b] >= y[p,t] - y[c,t]    (writer p done, reader c not)
 *   read        r[b,j,t] >= sum_{c in Q} x[c,t] - x[p,t]  for Q a clique of
 *               mutually incompatible readers at byte level >= j
 *   live        l[b,t] >= m[b] + y[p,t] - y[c,t-1] - 1; freeable inputs
 *               l[b,t] >= 1 - y[c,t-1]
 *   in-place    s[k,t] <= x[v,t], y[p,t-1], y[c,t-1], m[o] for pair k =
 *               (i, o) of node v (p writes i, c other readers of i;
 *               y[c,t] for a fused reader c of the pair);
 *               sum of s[.,t] over v's pairs sharing a buffer <= 1
 *   peak        P >= sum_b bytes_b l[b,t] (+ outputs and dead buffers
 *               directly in y) - sum_k bytes_o s[k,t]
 *               + sum_v workspace_v x[v,t]
 *   traffic     traffic <= limit (objective peak only)
 *   cluster     sum over the buffers of a cluster S of their traffic terms
 *               >= lb(S), the cluster's bound from bound.c (valid for
 *               every legal plan: docs/solver.md, "Bounds")
 * Each "definition" row (class use, materialize, read, live, peak) bounds
 * exactly one continuous column from below; ilp_plan_columns uses that to
 * compute the exact column values of any plan.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/resource.h>
#include <unistd.h>

#include "model/util.h"
#include "solver/mip/ilp_model.h"
#include "solver/mip/mip.h"

/* ---- row assembly ------------------------------------------------------ */

typedef struct rowbuf {
  int n, cap;
  int *ind; /* 1-based for GLPK: ind[1..n] */
  double *val;
  double cst; /* constant part of the expression */
  bool off;   /* the build stopped: terms are dropped */
} rowbuf;

static bool rb_reserve(rowbuf *rb, int need) {
  if (need + 1 <= rb->cap)
    return true;
  int cap = rb->cap ? 2 * rb->cap : 64;
  while (cap < need + 1)
    cap *= 2;
  int *ind = realloc(rb->ind, (size_t)cap * sizeof *ind);
  if (ind)
    rb->ind = ind;
  double *val = realloc(rb->val, (size_t)cap * sizeof *val);
  if (val)
    rb->val = val;
  if (!ind || !val)
    return false;
  rb->cap = cap;
  return true;
}

/* Adds coef * column (merging repeats: GLPK rejects duplicate indices). */
static bool rb_col(rowbuf *rb, int col, double coef) {
  if (rb->off)
    return true;
  for (int i = 1; i <= rb->n; i++)
    if (rb->ind[i] == col) {
      rb->val[i] += coef;
      return true;
    }
  if (!rb_reserve(rb, rb->n + 1))
    return false;
  rb->n++;
  rb->ind[rb->n] = col;
  rb->val[rb->n] = coef;
  return true;
}

/* Adds coef * y[v,t] (a column, or the constant 0 / 1 outside v's
 * window). */
static bool rb_y(rowbuf *rb, const ilp_model *M, int32_t v, int32_t t,
                 double coef) {
  if (t < M->lo[v])
    return true;
  if (t >= M->hi[v]) {
    rb->cst += coef;
    return true;
  }
  return rb_col(rb, M->ycol[v] + (t - M->lo[v]), coef);
}

/* Adds coef * x[v,t] = coef * (y[v,t] - y[v,t-1]). */
static bool rb_x(rowbuf *rb, const ilp_model *M, int32_t v, int32_t t,
                 double coef) {
  return rb_y(rb, M, v, t, coef) && rb_y(rb, M, v, t - 1, -coef);
}

/* Calls between two looks at the clock and the cancel flag while
 * building (a look costs ~20 ns, a row or column far more). */
#define BUILD_CHECK_EVERY 16

/* Whether the build must stop: past M->deadline or cancelled (looked at
 * every BUILD_CHECK_EVERY calls); once true, stays true. */
static bool build_stopped(ilp_model *M) {
  if (!M->stopped && ++M->ticks % BUILD_CHECK_EVERY == 0)
    M->stopped = fp_clock_now() > M->deadline ||
                 (M->prm->cancel && *M->prm->cancel != 0);
  return M->stopped;
}

/* Model state beyond ilp_model while building. */
typedef struct builder {
  ilp_model *M;
  rowbuf rb;
  rowbuf traffic; /* the traffic expression, for the traffic-limit row */
  double wt, wp;  /* objective weights of traffic and of P */
  int32_t *lbase, *lt0, *lt1; /* per buffer: first l column, its steps */
  int *rfirst, *rlast;        /* per buffer: its r columns (0: none) */
  double *fixed;              /* per buffer: traffic units fixed by the graph */
  double *units;              /* per column: its traffic units (0: none) */
  int units_cap;
  bool oom;
} builder;

/* Records that column `col` carries `units` of buffer b's traffic. */
static void note_traffic(builder *B, int32_t b, int col, double units) {
  if (col >= B->units_cap) {
    int cap = B->units_cap ? 2 * B->units_cap : 1024;
    while (cap <= col)
      cap *= 2;
    double *p = realloc(B->units, (size_t)cap * sizeof *p);
    if (!p) {
      B->oom = true;
      return;
    }
    memset(p + B->units_cap, 0, (size_t)(cap - B->units_cap) * sizeof *p);
    B->units = p;
    B->units_cap = cap;
  }
  B->units[col] = units;
  if (B->M->mcol[b] != col) {
    B->rfirst[b] = B->rfirst[b] ? B->rfirst[b] : col;
    B->rlast[b] = col;
  }
}

/* Adds the row `expr (lo..up)` (either bound may be +-HUGE_VAL), moving
 * the expression's constant to the bounds.  A row with no column is
 * dropped (its truth is fixed by the windows).  `target` is the column a
 * definition row bounds from below, or 0. */
static void add_row(builder *B, double lo, double up, const char *name,
                    int target) {
  rowbuf *rb = &B->rb;
  ilp_model *M = B->M;
  int nz = 0;
  if (build_stopped(M)) { /* what follows only unwinds: the model is */
    rb->off = B->traffic.off = true; /* dropped, and a column skipped by */
    rb->n = 0;                       /* add_col (index 0) must never */
    rb->cst = 0;                     /* reach GLPK, which aborts on it */
    return;
  }
  for (int i = 1; i <= rb->n; i++)
    if (rb->val[i] != 0 && rb->ind[i] > 0)
      rb->ind[++nz] = rb->ind[i], rb->val[nz] = rb->val[i];
  if (nz == 0 && (rb->cst < lo - 1e-9 || rb->cst > up + 1e-9))
    M->infeasible = true; /* e.g. windows that cannot all hold */
  if (nz > 0) {
    int r = glp_add_rows(M->lp, 1);
    lo -= rb->cst;
    up -= rb->cst;
    int type = isinf(lo) ? (isinf(up) ? GLP_FR : GLP_UP)
                         : (isinf(up) ? GLP_LO : (lo == up ? GLP_FX : GLP_DB));
    glp_set_row_bnds(M->lp, r, type, isinf(lo) ? 0 : lo, isinf(up) ? 0 : up);
    glp_set_mat_row(M->lp, r, nz, rb->ind, rb->val);
    if (name)
      glp_set_row_name(M->lp, r, name);
    if (r + 1 > M->cap_rows) {
      int cap = M->cap_rows ? 2 * M->cap_rows : 1024;
      int *p = realloc(M->row_target, (size_t)cap * sizeof *p);
      if (!p) {
        B->oom = true;
      } else {
        M->row_target = p;
        M->cap_rows = cap;
      }
    }
    if (!B->oom)
      M->row_target[r] = target;
  }
  rb->n = 0;
  rb->cst = 0;
}

/* ---- windows ------------------------------------------------------------ */

/* Whether u and v may share a step. */
static bool same_step_ok(const ilp_model *M, int32_t u, int32_t v) {
  return M->k > 1 && fp_graph_compatible(M->g, u, v);
}

/* Calls fn(ctx, u) for each distinct producer u of v's reads. */
static void each_pred(const fp_graph *g, int32_t v, int32_t *stamp,
                      void (*fn)(void *, int32_t), void *ctx) {
  const fp_node *nd = fp_graph_node(g, v);
  for (int32_t i = 0; i < nd->n_reads; i++) {
    int32_t u = fp_graph_buffer(g, nd->reads[i].buffer)->writer;
    if (u >= 0 && stamp[u] != v) {
      stamp[u] = v;
      fn(ctx, u);
    }
  }
}

typedef struct depth_ctx {
  const ilp_model *M;
  int32_t v, *din, *dout;
  uint64_t *reach; /* bitsets of descendants, or NULL */
  size_t words;
} depth_ctx;

static void push_in(void *p, int32_t u) {
  depth_ctx *c = p;
  int32_t d = c->din[u] + !same_step_ok(c->M, u, c->v);
  c->din[c->v] = d > c->din[c->v] ? d : c->din[c->v];
}

static void push_out(void *p, int32_t u) {
  depth_ctx *c = p;
  int32_t d = c->dout[c->v] + !same_step_ok(c->M, u, c->v);
  c->dout[u] = d > c->dout[u] ? d : c->dout[u];
  if (c->reach) { /* u's descendants include v and v's */
    uint64_t *ru = c->reach + (size_t)u * c->words,
             *rv = c->reach + (size_t)c->v * c->words;
    for (size_t w = 0; w < c->words; w++)
      ru[w] |= rv[w];
    ru[c->v / 64] |= (uint64_t)1 << (c->v % 64);
  }
}

/* Exact windows: a node runs no earlier than its chain of strict
 * predecessors allows, and -- steps being used without gaps -- no later
 * than n - 1 - (its descendants) or n - 1 - (its strict successor chain).
 * Narrowed to +-window around the warm start's steps when asked. */
static int compute_windows(ilp_model *M, const fp_plan *warm) {
  int32_t n = M->n;
  int32_t *stamp = malloc(((size_t)n + 1) * sizeof *stamp);
  depth_ctx c = {M,
                 0,
                 calloc((size_t)n + 1, sizeof(int32_t)),
                 calloc((size_t)n + 1, sizeof(int32_t)),
                 NULL,
                 0};
  c.words = ((size_t)n + 63) / 64;
  if (n <= 20000) /* descendant sets: n^2 / 8 bytes */
    c.reach = calloc((size_t)n * c.words + 1, sizeof *c.reach);
  int rc = -1;
  if (!stamp || !c.din || !c.dout || (n <= 20000 && !c.reach))
    goto done;
  for (int32_t v = 0; v < n; v++)
    stamp[v] = -1;
  for (c.v = 0; c.v < n; c.v++)
    each_pred(M->g, c.v, stamp, push_in, &c);
  for (int32_t v = 0; v < n; v++)
    stamp[v] = -1;
  for (c.v = n - 1; c.v >= 0; c.v--)
    each_pred(M->g, c.v, stamp, push_out, &c);
  for (int32_t v = 0; v < n; v++) {
    int32_t desc = 0;
    for (size_t w = 0; c.reach && w < c.words; w++)
      desc += __builtin_popcountll(c.reach[(size_t)v * c.words + w]);
    M->lo[v] = c.din[v];
    M->hi[v] = n - 1 - (desc > c.dout[v] ? desc : c.dout[v]);
  }
  if (warm && M->prm->window >= 0) {
    for (int32_t t = 0; t < fp_plan_group_count(warm); t++) {
      int32_t len;
      const int32_t *grp = fp_plan_group(warm, t, &len);
      for (int32_t i = 0; i < len; i++) {
        int32_t v = grp[i], w = M->prm->window;
        M->lo[v] = t - w > M->lo[v] ? t - w : M->lo[v];
        M->hi[v] = t + w < M->hi[v] ? t + w : M->hi[v];
      }
    }
    M->exact = false;
  }
  M->T = 0;
  for (int32_t v = 0; v < n; v++)
    M->T = M->hi[v] + 1 > M->T ? M->hi[v] + 1 : M->T;
  rc = 0;
  M->reach = c.reach; /* kept: ilp_dominated uses it */
  M->words = c.words;
  c.reach = NULL;
done:
  free(stamp);
  free(c.din);
  free(c.dout);
  free(c.reach);
  return rc;
}

/* Whether reader c of buffer b is dominated: another reader of b runs
 * after it in every plan (a descendant), so c's materialize and live rows
 * are implied by that reader's and need not be added. */
static bool dominated_reader(const ilp_model *M, const fp_buffer *b,
                             int32_t c) {
  if (!M->reach)
    return false;
  const uint64_t *rc = M->reach + (size_t)c * M->words;
  for (int32_t i = 0; i < b->n_readers; i++) {
    int32_t d = b->readers[i];
    if (d != c && (rc[d / 64] >> (d % 64) & 1))
      return true;
  }
  return false;
}

/* ---- names -------------------------------------------------------------- */

/* "<prefix>_<name>_<a>[_<b>]" with the name reduced to [A-Za-z0-9_.] and
 * 32 characters: readable in LP/MPS files, and unique through the
 * numbers. */
static const char *make_name(char *buf, size_t n, const char *prefix,
                             const char *name, int64_t a, int64_t b) {
  char clean[33];
  size_t k = 0;
  for (const char *c = name; *c && k < 32; c++)
    clean[k++] = (isalnum((unsigned char)*c) || *c == '.') ? *c : '_';
  clean[k] = '\0';
  if (b >= 0)
    snprintf(buf, n, "%s_%s_%lld_%lld", prefix, clean, (long long)a,
             (long long)b);
  else
    snprintf(buf, n, "%s_%s_%lld", prefix, clean, (long long)a);
  return buf;
}

/* Adds one column (binary or continuous in [0, 1], or [0, up] when up is
 * given) with its objective coefficient; returns its index. */
static int add_col(ilp_model *M, bool binary, double up, double obj,
                   const char *name) {
  if (build_stopped(M))
    return 0;
  int c = glp_add_cols(M->lp, 1);
  glp_set_col_kind(M->lp, c, binary ? GLP_BV : GLP_CV);
  if (!binary)
    glp_set_col_bnds(M->lp, c, isinf(up) ? GLP_LO : GLP_DB, 0,
                     isinf(up) ? 0 : up);
  glp_set_obj_coef(M->lp, c, obj);
  glp_set_col_name(M->lp, c, name);
  return c;
}

/* ---- columns y, z and the window / precedence / step families --------- */

static void add_y_columns(ilp_model *M) {
  char nm[96];
  for (int32_t v = 0; v < M->n && !M->stopped; v++) {
    const char *name = fp_graph_node(M->g, v)->name;
    M->ycol[v] = glp_get_num_cols(M->lp) + 1;
    for (int32_t t = M->lo[v]; t < M->hi[v]; t++)
      add_col(M, true, 1, 0, make_name(nm, sizeof nm, "y", name, v, t));
  }
  for (int32_t t = 0; t < M->T; t++) {
    snprintf(nm, sizeof nm, "z_%d", (int)t);
    M->zcol[t] = add_col(M, true, 1, 0, nm);
  }
  if (M->n > 0 && M->zcol[0] > 0) /* the first step is always used */
    glp_set_col_bnds(M->lp, M->zcol[0], GLP_FX, 1, 1);
}

typedef struct prec_ctx {
  builder *B;
  int32_t v;
} prec_ctx;

/* precedence: y[v,t] <= y[u,t - strict] over v's window. */
static void add_precedence(void *p, int32_t u) {
  prec_ctx *c = p;
  ilp_model *M = c->B->M;
  int strict = !same_step_ok(M, u, c->v);
  char nm[96];
  for (int32_t t = M->lo[c->v]; t < M->hi[c->v] && !M->stopped; t++) {
    rb_y(&c->B->rb, M, c->v, t, 1);
    rb_y(&c->B->rb, M, u, t - strict, -1);
    add_row(
        c->B, -HUGE_VAL, 0,
        make_name(nm, sizeof nm, "prec", fp_graph_node(M->g, c->v)->name, u, t),
        0);
  }
}

static void add_order_rows(builder *B, int32_t *stamp) {
  ilp_model *M = B->M;
  char nm[96];
  for (int32_t v = 0; v < M->n && !M->stopped; v++) { /* window rows */
    for (int32_t t = M->lo[v] + 1; t < M->hi[v]; t++) {
      rb_y(&B->rb, M, v, t - 1, 1);
      rb_y(&B->rb, M, v, t, -1);
      add_row(
          B, -HUGE_VAL, 0,
          make_name(nm, sizeof nm, "win", fp_graph_node(M->g, v)->name, t, -1),
          0);
    }
    stamp[v] = -1;
  }
  for (int32_t v = 0; v < M->n && !M->stopped; v++) {
    prec_ctx c = {B, v};
    each_pred(M->g, v, stamp, add_precedence, &c);
  }
}

/* steps: z[t] <= z[t-1]; z[t] <= sum x; sum x <= K z[t]. */
static void add_step_rows(builder *B) {
  ilp_model *M = B->M;
  char nm[64];
  for (int32_t t = 0; t < M->T && !M->stopped; t++) {
    int32_t members = 0;
    if (t > 0) {
      rb_col(&B->rb, M->zcol[t], 1);
      rb_col(&B->rb, M->zcol[t - 1], -1);
      snprintf(nm, sizeof nm, "zorder_%d", (int)t);
      add_row(B, -HUGE_VAL, 0, nm, 0);
    }
    for (int32_t v = 0; v < M->n; v++)
      if (M->lo[v] <= t && t <= M->hi[v]) {
        rb_x(&B->rb, M, v, t, 1);
        members++;
      }
    rb_col(&B->rb, M->zcol[t], -(members < M->k ? members : M->k));
    snprintf(nm, sizeof nm, "size_%d", (int)t);
    add_row(B, -HUGE_VAL, 0, nm, 0);
    for (int32_t v = 0; v < M->n; v++)
      if (M->lo[v] <= t && t <= M->hi[v])
        rb_x(&B->rb, M, v, t, 1);
    rb_col(&B->rb, M->zcol[t], -1);
    snprintf(nm, sizeof nm, "used_%d", (int)t);
    add_row(B, 0, HUGE_VAL, nm, 0);
  }
}

/* ---- class family --------------------------------------------------------
 * Whether two nodes may share a step depends only on their class --
 * (kind, numel, rnumel, loop), each extern a class of its own -- plus the few
 * unfusible pairs.  Per step t, a continuous w[c,t] >= x[v,t] marks the
 * classes used, and a clique cover of the incompatible classes gives
 * sum_{c in Q} w[c,t] <= 1: far fewer rows than a cover of node pairs,
 * and exact at integer x. */

/* Class of every node; returns the number of classes, -1 when out of
 * memory.  rep[c] is a node of class c. */
static int32_t node_classes(const ilp_model *M, int32_t *cls, int32_t *rep) {
  int32_t nc = 0;
  for (int32_t v = 0; v < M->n; v++) {
    const fp_node *a = fp_graph_node(M->g, v);
    cls[v] = -1;
    for (int32_t c = 0; a->kind != FP_KIND_EXTERN && c < nc && cls[v] < 0;
         c++) {
      const fp_node *b = fp_graph_node(M->g, rep[c]);
      if (b->kind == a->kind && b->numel == a->numel &&
          b->rnumel == a->rnumel && fp_loop_equal(&a->loop, &b->loop))
        cls[v] = c;
    }
    if (cls[v] < 0) {
      rep[nc] = v;
      cls[v] = nc++;
    }
  }
  return nc;
}

static bool classes_ok(const ilp_model *M, const int32_t *rep, int32_t a,
                       int32_t b) {
  return M->k > 1 && a != b &&
         fp_iter_compatible(fp_graph_node(M->g, rep[a]),
                            fp_graph_node(M->g, rep[b]));
}

/* Clique cover of the incompatible classes in C[0..nc) at step t, over
 * their w columns wc[]. */
static void cover_classes(builder *B, const int32_t *rep, const int32_t *C,
                          const int *wc, int32_t nc, int32_t t, uint8_t *cov,
                          int32_t *Q) {
  char nm[64];
  memset(cov, 0, (size_t)nc * (size_t)nc);
  for (int32_t i = 0; i < nc && !build_stopped(B->M); i++)
    for (int32_t j = i + 1; j < nc; j++) {
      if (cov[i * nc + j] || classes_ok(B->M, rep, C[i], C[j]))
        continue;
      int32_t q = 0;
      Q[q++] = i;
      Q[q++] = j;
      for (int32_t k = 0; k < nc; k++) {
        bool all = k != i && k != j;
        for (int32_t a = 0; a < q && all; a++)
          all = !classes_ok(B->M, rep, C[Q[a]], C[k]);
        if (all)
          Q[q++] = k;
      }
      for (int32_t a = 0; a < q; a++) {
        for (int32_t b = 0; b < q; b++)
          cov[Q[a] * nc + Q[b]] = 1;
        rb_col(&B->rb, wc[Q[a]], 1);
      }
      snprintf(nm, sizeof nm, "cls_%d_%d_%d", (int)t, (int)i, (int)j);
      add_row(B, -HUGE_VAL, 1, nm, 0);
    }
}

/* unfusible pairs of otherwise compatible nodes: x[u,t] + x[v,t] <= 1. */
static void add_unfusible_rows(builder *B) {
  ilp_model *M = B->M;
  char nm[64];
  for (int32_t i = 0; i < fp_graph_unfusible_count(M->g); i++) {
    int32_t u, v;
    fp_graph_unfusible_pair(M->g, i, &u, &v);
    for (int32_t t = M->lo[u] > M->lo[v] ? M->lo[u] : M->lo[v];
         t <= M->hi[u] && t <= M->hi[v]; t++) {
      rb_x(&B->rb, M, u, t, 1);
      rb_x(&B->rb, M, v, t, 1);
      snprintf(nm, sizeof nm, "unf_%d_%d", (int)i, (int)t);
      add_row(B, -HUGE_VAL, 1, nm, 0);
    }
  }
}

/* linked pairs (u, v) with linkers C: x[u,t] + x[v,t] - sum_{c in C}
 * x[c,t] <= 1, so u and v share step t only when a linker runs in it
 * too (exact at integer x; linkers outside [lo, hi] add nothing). */
static void add_linked_rows(builder *B) {
  ilp_model *M = B->M;
  char nm[64];
  for (int32_t i = 0; i < fp_graph_linked_count(M->g); i++) {
    const fp_linked *l = fp_graph_linked(M->g, i);
    if (!same_step_ok(M, l->u, l->v))
      continue; /* never together anyway */
    for (int32_t t = M->lo[l->u] > M->lo[l->v] ? M->lo[l->u] : M->lo[l->v];
         t <= M->hi[l->u] && t <= M->hi[l->v] && !build_stopped(M); t++) {
      rb_x(&B->rb, M, l->u, t, 1);
      rb_x(&B->rb, M, l->v, t, 1);
      for (int32_t j = 0; j < l->n_via; j++)
        if (M->lo[l->via[j]] <= t && t <= M->hi[l->via[j]])
          rb_x(&B->rb, M, l->via[j], t, -1);
      snprintf(nm, sizeof nm, "lnk_%d_%d", (int)i, (int)t);
      add_row(B, -HUGE_VAL, 1, nm, 0);
    }
  }
}

/* w columns and their rows for step t; C[] lists the classes present. */
static void add_classes_at(builder *B, int32_t t, const int32_t *cls,
                           const int32_t *rep, int32_t *C, int *wc,
                           int32_t *slot, uint8_t *cov, int32_t *Q) {
  ilp_model *M = B->M;
  int32_t nc = 0;
  char nm[64];
  for (int32_t v = 0; v < M->n; v++)
    if (M->lo[v] <= t && t <= M->hi[v] && slot[cls[v]] != t) {
      slot[cls[v]] = t;
      C[nc++] = cls[v];
    }
  for (int32_t i = 0; i < nc; i++) {
    snprintf(nm, sizeof nm, "w_%d_%d", (int)C[i], (int)t);
    wc[i] = add_col(M, false, 1, 0, nm);
    for (int32_t v = 0; v < M->n; v++)
      if (cls[v] == C[i] && M->lo[v] <= t && t <= M->hi[v]) {
        rb_col(&B->rb, wc[i], 1);
        rb_x(&B->rb, M, v, t, -1);
        snprintf(nm, sizeof nm, "use_%d_%d", (int)v, (int)t);
        add_row(B, 0, HUGE_VAL, nm, wc[i]);
      }
  }
  cover_classes(B, rep, C, wc, nc, t, cov, Q);
}

static bool add_class_rows(builder *B) {
  ilp_model *M = B->M;
  size_t n = (size_t)M->n + 1;
  int32_t *cls = malloc(n * sizeof *cls), *rep = malloc(n * sizeof *rep);
  int32_t *C = malloc(n * sizeof *C), *slot = malloc(n * sizeof *slot);
  int32_t *Q = malloc(n * sizeof *Q);
  int *wc = malloc(n * sizeof *wc);
  int32_t nc = cls && rep ? node_classes(M, cls, rep) : 0;
  uint8_t *cov = malloc((size_t)nc * (size_t)nc + 1);
  bool ok = cls && rep && C && slot && Q && wc && cov;
  for (int32_t c = 0; ok && c < nc; c++)
    slot[c] = -1;
  for (int32_t t = 0; ok && t < M->T && !M->stopped; t++)
    add_classes_at(B, t, cls, rep, C, wc, slot, cov, Q);
  if (ok)
    add_unfusible_rows(B);
  if (ok)
    add_linked_rows(B);
  free(cls), free(rep), free(C), free(slot), free(Q), free(wc), free(cov);
  return ok;
}

/* ---- materialize / read families ---------------------------------------- */

/* Whether buffer b's materialization is decided by the plan (m free):
 * produced, read, not an output, and every reader may share the writer's
 * step.  Otherwise it is fixed: 1 for outputs, unread and split buffers. */
static int8_t materialize_fixed(const ilp_model *M, int32_t b) {
  const fp_buffer *buf = fp_graph_buffer(M->g, b);
  if (buf->input || buf->writer < 0)
    return 0;
  if (buf->output || buf->n_readers == 0)
    return 1;
  for (int32_t i = 0; i < buf->n_readers; i++)
    if (!same_step_ok(M, buf->writer, buf->readers[i]))
      return 1;
  return -1;
}

/* materialize: m[b] >= y[p,t] - y[c,t] for each reader c. */
static void add_materialize(builder *B, int32_t b) {
  ilp_model *M = B->M;
  const fp_buffer *buf = fp_graph_buffer(M->g, b);
  char nm[96];
  M->mfix[b] = materialize_fixed(M, b);
  double units = (double)buf->bytes / M->scale;
  if (M->mfix[b] == 1) {
    M->obj_const += B->wt * units;
    B->traffic.cst += units;
    B->fixed[b] = units;
  }
  if (M->mfix[b] != -1)
    return;
  M->mcol[b] = add_col(M, false, 1, B->wt * units,
                       make_name(nm, sizeof nm, "m", buf->name, b, -1));
  B->oom |= !rb_col(&B->traffic, M->mcol[b], units);
  note_traffic(B, b, M->mcol[b], units);
  int32_t p = buf->writer;
  for (int32_t i = 0; i < buf->n_readers; i++) {
    int32_t c = buf->readers[i];
    if (dominated_reader(M, buf, c))
      continue;
    for (int32_t t = M->lo[p]; t < M->hi[c] && !M->stopped; t++) {
      rb_col(&B->rb, M->mcol[b], 1);
      rb_y(&B->rb, M, p, t, -1);
      rb_y(&B->rb, M, c, t, 1);
      add_row(B, 0, HUGE_VAL, make_name(nm, sizeof nm, "mat", buf->name, c, t),
              M->mcol[b]);
    }
  }
}

/* Bytes node c reads of buffer b (the largest of its reads of b). */
static uint64_t read_bytes(const fp_graph *g, int32_t c, int32_t b) {
  const fp_node *nd = fp_graph_node(g, c);
  uint64_t m = 0;
  for (int32_t i = 0; i < nd->n_reads; i++)
    if (nd->reads[i].buffer == b && nd->reads[i].bytes > m)
      m = nd->reads[i].bytes;
  return m;
}

/* read rows of one byte level: readers R[0..nr) partitioned greedily into
 * cliques of mutually incompatible nodes; per clique Q and step t,
 * r[b,j,t] >= sum_Q x[c,t] - x[p,t] (the writer term dropped when no
 * member of Q may share the writer's step: it can only help). */
static void add_read_level(builder *B, int32_t b, int32_t j, uint64_t delta,
                           const int32_t *R, int32_t nr, int32_t *part) {
  ilp_model *M = B->M;
  const fp_buffer *buf = fp_graph_buffer(M->g, b);
  int32_t p = buf->writer, t0 = INT32_MAX, t1 = -1;
  char nm[96];
  for (int32_t i = 0; i < nr; i++) {
    t0 = M->lo[R[i]] < t0 ? M->lo[R[i]] : t0;
    t1 = M->hi[R[i]] > t1 ? M->hi[R[i]] : t1;
    part[i] = -1;
  }
  int32_t nq = 0;
  for (int32_t i = 0; i < nr; i++) { /* greedy clique partition */
    if (part[i] >= 0)
      continue;
    part[i] = nq;
    for (int32_t k = i + 1; k < nr; k++) {
      bool all = part[k] < 0;
      for (int32_t a = 0; a < k && all; a++)
        all = part[a] != nq || !same_step_ok(M, R[a], R[k]);
      if (all)
        part[k] = nq;
    }
    nq++;
  }
  double units = (double)delta / M->scale;
  for (int32_t t = t0; t <= t1 && !M->stopped; t++) {
    int col = add_col(M, false, 1, B->wt * units,
                      make_name(nm, sizeof nm, "r", buf->name, j, t));
    B->oom |= !rb_col(&B->traffic, col, units);
    note_traffic(B, b, col, units);
    for (int32_t q = 0; q < nq; q++) {
      bool any = false, writer = false;
      for (int32_t i = 0; i < nr; i++)
        if (part[i] == q && M->lo[R[i]] <= t && t <= M->hi[R[i]]) {
          rb_x(&B->rb, M, R[i], t, -1);
          any = true;
          writer |= p >= 0 && same_step_ok(M, p, R[i]);
        }
      if (!any) {
        B->rb.n = 0;
        B->rb.cst = 0;
        continue;
      }
      rb_col(&B->rb, col, 1);
      if (writer)
        rb_x(&B->rb, M, p, t, 1);
      snprintf(nm, sizeof nm, "read_%d_%d_%d_%d", (int)b, (int)j, (int)t,
               (int)q); /* unique: LP readers reject repeated names */
      add_row(B, 0, HUGE_VAL, nm, col);
    }
  }
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* read: one level per distinct per-reader byte count, cost = the step up
 * from the level below, so a step pays exactly its largest reader. */
static bool add_reads(builder *B, int32_t b) {
  ilp_model *M = B->M;
  const fp_buffer *buf = fp_graph_buffer(M->g, b);
  int32_t nr = buf->n_readers;
  if (M->stopped)
    return true;
  uint64_t *lv = malloc(((size_t)nr + 1) * sizeof *lv);
  int32_t *R = malloc(((size_t)nr + 1) * sizeof *R);
  int32_t *part = malloc(((size_t)nr + 1) * sizeof *part);
  if (!lv || !R || !part) {
    free(lv), free(R), free(part);
    return false;
  }
  for (int32_t i = 0; i < nr; i++)
    lv[i] = read_bytes(M->g, buf->readers[i], b);
  qsort(lv, (size_t)nr, sizeof *lv, cmp_u64);
  uint64_t below = 0;
  for (int32_t i = 0, j = 0; i < nr; i++) {
    if (lv[i] == below || (i > 0 && lv[i] == lv[i - 1]))
      continue;
    int32_t k = 0;
    for (int32_t c = 0; c < nr; c++)
      if (read_bytes(M->g, buf->readers[c], b) >= lv[i])
        R[k++] = buf->readers[c];
    add_read_level(B, b, j++, lv[i] - below, R, k, part);
    below = lv[i];
  }
  free(lv), free(R), free(part);
  return true;
}

/* ---- live / peak families ----------------------------------------------- */

/* live rows of buffer b: l[b,t] for its possible lifetime steps.
 * Produced: l >= m + y[p,t] - y[c,t-1] - 1 per reader c (m fixed at 1:
 * l >= y[p,t] - y[c,t-1]).  Freeable input: l >= 1 - y[c,t-1]. */
static void add_live(builder *B, int32_t b) {
  ilp_model *M = B->M;
  const fp_buffer *buf = fp_graph_buffer(M->g, b);
  int32_t p = buf->writer, t0 = buf->input ? 0 : M->lo[p], t1 = -1;
  char nm[96];
  for (int32_t i = 0; i < buf->n_readers; i++)
    t1 = M->hi[buf->readers[i]] > t1 ? M->hi[buf->readers[i]] : t1;
  B->lt0[b] = t0;
  B->lt1[b] = t1;
  B->lbase[b] = glp_get_num_cols(M->lp) + 1;
  for (int32_t t = t0; t <= t1; t++)
    add_col(M, false, 1, 0, make_name(nm, sizeof nm, "l", buf->name, t, -1));
  for (int32_t t = t0; t <= t1 && !M->stopped; t++) {
    int col = B->lbase[b] + (t - t0);
    for (int32_t i = 0; i < buf->n_readers; i++) {
      int32_t c = buf->readers[i];
      if (dominated_reader(M, buf, c))
        continue;
      double lo = buf->input ? 1 : M->mfix[b] == 1 ? 0 : -1;
      rb_col(&B->rb, col, 1);
      rb_y(&B->rb, M, c, t - 1, 1);
      if (!buf->input) {
        rb_y(&B->rb, M, p, t, -1);
        if (M->mfix[b] != 1)
          rb_col(&B->rb, M->mcol[b], -1);
      }
      add_row(B, lo, HUGE_VAL,
              make_name(nm, sizeof nm, "live", buf->name, c, t), col);
    }
  }
}

/* ---- in-place takeovers (docs/cost-model.md, "In-place kernels") ------
 * s[k,t] may be 1 only when pair k = (i, o) of node v applies at step t:
 * v runs at t, i's writer and i's other readers before t (a fused reader
 * of the pair at t or before), o materialized.
 * Pairs of v that share a buffer form a star (graph.h), so at most one
 * of them applies and any one saves the same bytes: the minimum sets
 * each s to what the evaluator applies, and the peak rows equal its live
 * bytes.  A spare m[o] = 1 (o not materialized) adds o's bytes to l[o,t]
 * as much as s takes off, so it gains nothing. */

/* The last step at which node v may run. */
static int32_t last_step(const ilp_model *M, int32_t v) {
  return M->hi[v] < M->T - 1 ? M->hi[v] : M->T - 1;
}

/* Whether pair pr can ever apply: i dies in memory (not an output; a
 * freeable input or a produced buffer) and o may be materialized. */
static bool pair_possible(const ilp_model *M, fp_inplace pr) {
  const fp_buffer *i = fp_graph_buffer(M->g, pr.read);
  return !i->output && (!i->input || i->freeable) && M->mfix[pr.write] != 0;
}

/* The rows s <= each condition of pair k, pr, of node v at step t; a
 * fused reader of the pair may run at t itself. */
static void add_pair_rows(builder *B, int32_t v, int32_t k, fp_inplace pr,
                          int col, int32_t t) {
  ilp_model *M = B->M;
  const fp_buffer *i = fp_graph_buffer(M->g, pr.read);
  char nm[96];
  const char *name = fp_graph_buffer(M->g, pr.write)->name;
  rb_col(&B->rb, col, 1);
  rb_x(&B->rb, M, v, t, -1);
  add_row(B, -HUGE_VAL, 0, make_name(nm, sizeof nm, "ipx", name, v, t), 0);
  for (int32_t r = -1; r < i->n_readers; r++) {
    int32_t c = r < 0 ? i->writer : i->readers[r];
    if (c < 0 || c == v)
      continue;
    bool fused = r >= 0 && fp_graph_inplace_fused_reader(M->g, v, k, c);
    rb_col(&B->rb, col, 1);
    rb_y(&B->rb, M, c, fused ? t : t - 1, -1);
    add_row(B, -HUGE_VAL, 0, make_name(nm, sizeof nm, "ipy", name, c, t), 0);
  }
  if (M->mfix[pr.write] < 0) {
    rb_col(&B->rb, col, 1);
    rb_col(&B->rb, M->mcol[pr.write], -1);
    add_row(B, -HUGE_VAL, 0, make_name(nm, sizeof nm, "ipm", name, v, t), 0);
  }
}

/* The star rows of node v at step t: its pairs sharing a buffer with
 * pair j (the first of them) apply once at most. */
static void add_star_rows(builder *B, int32_t v, int32_t base, int32_t t) {
  ilp_model *M = B->M;
  int32_t m;
  const fp_inplace *pr = fp_graph_inplace(M->g, v, &m);
  char nm[96];
  for (int side = 0; side < 2; side++)
    for (int32_t j = 0; j < m; j++) {
      int32_t key = side ? pr[j].write : pr[j].read, n = 0;
      bool first = true;
      for (int32_t k = 0; k < m; k++) {
        if ((side ? pr[k].write : pr[k].read) != key || !M->scol[base + k])
          continue;
        first &= k >= j;
        n++;
        rb_col(&B->rb, M->scol[base + k] + (t - M->lo[v]), 1);
      }
      if (first && n > 1)
        add_row(B, -HUGE_VAL, 1,
                make_name(nm, sizeof nm, "ipstar", fp_graph_node(M->g, v)->name,
                          j, t),
                0);
      B->rb.n = 0;
      B->rb.cst = 0;
    }
}

/* Columns s[k,t] and their rows for every pair that can apply. */
static bool add_inplace(builder *B) {
  ilp_model *M = B->M;
  int32_t np = fp_graph_inplace_count(M->g), base = 0;
  char nm[96];
  if (np == 0)
    return true;
  if (!(M->scol = calloc((size_t)np, sizeof *M->scol)))
    return false;
  for (int32_t v = 0; v < M->n && !M->stopped; v++) {
    int32_t m;
    const fp_inplace *pr = fp_graph_inplace(M->g, v, &m);
    for (int32_t k = 0; k < m; k++) {
      if (!pair_possible(M, pr[k]) || M->lo[v] > last_step(M, v))
        continue;
      M->scol[base + k] = glp_get_num_cols(M->lp) + 1;
      for (int32_t t = M->lo[v]; t <= last_step(M, v); t++)
        add_col(
            M, false, 1, 0,
            make_name(nm, sizeof nm, "s", fp_graph_node(M->g, v)->name, k, t));
      for (int32_t t = M->lo[v]; t <= last_step(M, v); t++)
        add_pair_rows(B, v, k, pr[k], M->scol[base + k] + (t - M->lo[v]), t);
    }
    for (int32_t t = M->lo[v]; m > 1 && t <= last_step(M, v); t++)
      add_star_rows(B, v, base, t);
    base += m;
  }
  return true;
}

/* Takes the in-place savings of step t off the peak row being built. */
static void peak_inplace(builder *B, int32_t t) {
  ilp_model *M = B->M;
  for (int32_t v = 0, base = 0; M->scol && v < M->n; v++) {
    int32_t m;
    const fp_inplace *pr = fp_graph_inplace(M->g, v, &m);
    for (int32_t k = 0; k < m; k++)
      if (M->scol[base + k] && M->lo[v] <= t && t <= last_step(M, v))
        rb_col(&B->rb, M->scol[base + k] + (t - M->lo[v]),
               (double)fp_graph_buffer(M->g, pr[k].write)->bytes / M->scale);
    base += m;
  }
}

/* Adds the workspaces of step t's nodes to the peak row being built:
 * workspace_v x[v,t] (docs/cost-model.md#workspaces). */
static void peak_workspace(builder *B, int32_t t) {
  ilp_model *M = B->M;
  for (int32_t v = 0; v < M->n; v++) {
    uint64_t ws = fp_graph_node(M->g, v)->workspace;
    if (ws)
      rb_x(&B->rb, M, v, t, -(double)ws / M->scale);
  }
}

/* Whether buffer b is resident: live in every step whatever the plan. */
static bool resident(const fp_buffer *buf) {
  return buf->input && (!buf->freeable || buf->output);
}

/* peak: P >= sum of what is live at t, in units above the resident
 * inputs.  Outputs and unread buffers enter through y directly. */
static void add_peak_rows(builder *B) {
  ilp_model *M = B->M;
  char nm[64];
  for (int32_t t = 0; t < M->T && !M->stopped; t++) {
    rb_col(&B->rb, M->pcol, 1);
    for (int32_t b = 0; b < fp_graph_buffer_count(M->g); b++) {
      const fp_buffer *buf = fp_graph_buffer(M->g, b);
      double units = (double)buf->bytes / M->scale;
      if (resident(buf) || (!buf->input && buf->writer < 0) || units == 0)
        continue;
      if (!buf->input && buf->output)
        rb_y(&B->rb, M, buf->writer, t, -units);
      else if (!buf->input && buf->n_readers == 0)
        rb_x(&B->rb, M, buf->writer, t, -units);
      else if (B->lbase[b] && B->lt0[b] <= t && t <= B->lt1[b])
        rb_col(&B->rb, B->lbase[b] + (t - B->lt0[b]), -units);
      /* else: a freeable input nobody reads is never live */
    }
    peak_inplace(B, t);
    peak_workspace(B, t);
    snprintf(nm, sizeof nm, "peak_%d", (int)t);
    add_row(B, 0, HUGE_VAL, nm, M->pcol);
  }
}

/* ---- assembling the model ---------------------------------------------- */

static uint64_t gcd64(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* The GCD of every byte count the model uses (1 when there is none):
 * dividing by it keeps coefficients small without losing exactness.  A
 * peak is the resident bytes plus such counts, so when the objective has
 * the peak the resident total joins the GCD: bounds round up to a
 * multiple of the scale (ilp_bound_value), which must be one every peak
 * is (1024 + 1000 resident bytes against buffers of 1024 would otherwise
 * round a tight bound of 4072 up to 4096). */
static double byte_scale(const fp_graph *g, fp_objective objective) {
  uint64_t s =
      objective == FP_OBJECTIVE_TRAFFIC ? 0 : fp_graph_resident_bytes(g);
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++)
    if (!resident(fp_graph_buffer(g, b)))
      s = gcd64(s, fp_graph_buffer(g, b)->bytes);
  for (int32_t v = 0; v < fp_graph_node_count(g); v++) {
    const fp_node *nd = fp_graph_node(g, v);
    for (int32_t i = 0; i < nd->n_reads; i++)
      s = gcd64(s, nd->reads[i].bytes);
    s = gcd64(s, nd->workspace); /* a peak term; gcd(s, 0) = s */
  }
  return s ? (double)s : 1.0;
}

static bool alloc_model(ilp_model *M, builder *B) {
  size_t n = (size_t)M->n + 1, nb = (size_t)fp_graph_buffer_count(M->g) + 1;
  M->lo = calloc(n, sizeof *M->lo);
  M->hi = calloc(n, sizeof *M->hi);
  M->ycol = calloc(n, sizeof *M->ycol);
  M->zcol = calloc(n + 1, sizeof *M->zcol);
  M->mcol = calloc(nb, sizeof *M->mcol);
  M->mfix = calloc(nb, sizeof *M->mfix);
  B->lbase = calloc(nb, sizeof *B->lbase);
  B->lt0 = calloc(nb, sizeof *B->lt0);
  B->lt1 = calloc(nb, sizeof *B->lt1);
  B->rfirst = calloc(nb, sizeof *B->rfirst);
  B->rlast = calloc(nb, sizeof *B->rlast);
  B->fixed = calloc(nb, sizeof *B->fixed);
  return M->lo && M->hi && M->ycol && M->zcol && M->mcol && M->mfix &&
         B->lbase && B->lt0 && B->lt1 && B->rfirst && B->rlast && B->fixed;
}

/* materialize, read, live and peak families, in that order (see the file
 * comment: ilp_plan_columns relies on definition rows coming in
 * dependency order). */
static bool add_cost_rows(builder *B) {
  ilp_model *M = B->M;
  int32_t nb = fp_graph_buffer_count(M->g);
  for (int32_t b = 0; b < nb && !M->stopped; b++)
    add_materialize(B, b);
  for (int32_t b = 0; b < nb && !M->stopped; b++)
    if (fp_graph_buffer(M->g, b)->n_readers > 0 && !add_reads(B, b))
      return false;
  if (!M->with_peak)
    return true;
  for (int32_t b = 0; b < nb && !M->stopped; b++) {
    const fp_buffer *buf = fp_graph_buffer(M->g, b);
    bool lives = buf->input ? (buf->freeable && !buf->output)
                            : (buf->writer >= 0 && !buf->output);
    if (lives && buf->n_readers > 0)
      add_live(B, b);
  }
  if (!add_inplace(B))
    return false;
  add_peak_rows(B);
  return true;
}

/* The buffers of partition `part` grouped by cluster (counting sort)
 * into order; returns how many, or -1 out of memory. */
static int32_t by_cluster(const solver_partition *part, int32_t nb,
                          int32_t *order) {
  int32_t *start = calloc((size_t)part->count + 1, sizeof *start), n = 0;
  if (!start)
    return -1;
  for (int32_t b = 0; b < nb; b++)
    if (part->of[b] >= 0)
      start[part->of[b] + 1]++, n++;
  for (int32_t c = 0; c < part->count; c++)
    start[c + 1] += start[c];
  for (int32_t b = 0; b < nb; b++)
    if (part->of[b] >= 0)
      order[start[part->of[b]]++] = b;
  free(start);
  return n;
}

/* cluster rows: for each partition and cluster S with a positive bound,
 * the traffic terms of S's buffers >= lb(S), rounded up to whole units
 * (every term is a multiple of the scale). */
static void add_cluster_rows(builder *B, const solver_cuts *cuts) {
  ilp_model *M = B->M;
  int32_t nb = fp_graph_buffer_count(M->g);
  int32_t *order = malloc(((size_t)nb + 1) * sizeof *order);
  char nm[64];
  B->oom |= !order;
  for (int32_t p = 0; order && cuts && p < cuts->n; p++) {
    const solver_partition *part = &cuts->part[p];
    int32_t n = by_cluster(part, nb, order);
    B->oom |= n < 0;
    for (int32_t i = 0; i < n;) {
      int32_t c = part->of[order[i]];
      for (; i < n && part->of[order[i]] == c; i++) {
        int32_t b = order[i];
        B->rb.cst += B->fixed[b];
        if (M->mcol[b])
          B->oom |= !rb_col(&B->rb, M->mcol[b], B->units[M->mcol[b]]);
        for (int col = B->rfirst[b]; col && col <= B->rlast[b]; col++)
          B->oom |= !rb_col(&B->rb, col, B->units[col]);
      }
      snprintf(nm, sizeof nm, "cluster_%d_%d", (int)p, (int)c);
      if (part->lb[c] > 0)
        add_row(B, ceil((double)part->lb[c] / M->scale - 1e-9), HUGE_VAL, nm,
                0);
      B->rb.n = 0;
      B->rb.cst = 0;
    }
  }
  free(order);
}

/* Objective direction and the P column (added before any row uses it). */
static void add_objective(builder *B) {
  ilp_model *M = B->M;
  glp_set_obj_dir(M->lp, GLP_MIN);
  char nm[64]; /* the graph's name may hold anything: GLPK gets a clean one */
  glp_set_prob_name(M->lp, make_name(nm, sizeof nm, "fuseplan",
                                     fp_graph_name(M->g), M->n, -1));
  if (M->with_peak) {
    double up = M->peak_cap == FP_NO_LIMIT
                    ? HUGE_VAL
                    : (double)(M->peak_cap - M->resident) / M->scale;
    M->pcol = add_col(M, false, up, B->wp, "P");
    /* the objective counts whole bytes: resident inputs are in the peak */
    M->obj_const += B->wp * (double)M->resident / M->scale;
  }
}

/* Bytes GLPK holds per column, row and nonzero of a model, at least:
 * its structs, the names, and the simplex's working copies (measured with
 * glp_mem_usage on exact models of generated graphs of 150 and 400
 * nodes: the estimate was 0.41-0.44 of GLPK's peak). */
#define GLPK_BYTES_PER_COL 450.0
#define GLPK_BYTES_PER_ROW 450.0
#define GLPK_BYTES_PER_NZ 180.0

/* Counts the window, precedence and step families of the model
 * compute_windows set up (the rest only adds to them) into M->est_*.  -1
 * when out of memory. */
static int estimate_size(ilp_model *M) {
  int32_t *stamp = malloc(((size_t)M->n + 1) * sizeof *stamp);
  double cols = M->T, rows = 3.0 * M->T, nnz = 2.0 * M->T;
  if (!stamp)
    return -1;
  for (int32_t v = 0; v < M->n; v++)
    stamp[v] = -1;
  for (int32_t v = 0; v < M->n; v++) {
    double w = M->hi[v] - M->lo[v];
    cols += w;
    rows += w > 0 ? w - 1 : 0;
    nnz += (w > 0 ? 2 * (w - 1) : 0) + 4 * (w + 1);
    const fp_node *nd = fp_graph_node(M->g, v);
    for (int32_t i = 0; i < nd->n_reads; i++) {
      int32_t u = fp_graph_buffer(M->g, nd->reads[i].buffer)->writer;
      if (u >= 0 && stamp[u] != v) {
        stamp[u] = v;
        rows += w;
        nnz += 2 * w;
      }
    }
  }
  free(stamp);
  M->est_cols = cols;
  M->est_rows = rows;
  M->est_nnz = nnz;
  M->est_bytes = GLPK_BYTES_PER_COL * cols + GLPK_BYTES_PER_ROW * rows +
                 GLPK_BYTES_PER_NZ * nnz;
  return 0;
}

/* Bytes this process may still allocate, at most: its address-space
 * limit (ulimit -v) and the machine's memory, whichever is smaller;
 * HUGE_VAL when neither is known. */
static double memory_available(void) {
  double avail = HUGE_VAL;
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    avail = (double)rl.rlim_cur;
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && size > 0 && (double)pages * (double)size < avail)
    avail = (double)pages * (double)size;
#endif
  return avail;
}

/* What the guarded part of ilp_build needs. */
typedef struct build_job {
  builder *B;
  uint64_t traffic_cap;
  const solver_cuts *cuts;
  int32_t *scratch;
  int rc;
} build_job;

/* Every GLPK call of the build, under mip_guard. */
static void build_model(void *ctx) {
  build_job *J = ctx;
  builder *B = J->B;
  ilp_model *M = B->M;
  J->rc = ILP_BUILD_NOMEM;
  if (!(M->lp = glp_create_prob()))
    return;
  add_y_columns(M);
  add_objective(B); /* P first: rows below refer to it */
  add_order_rows(B, J->scratch);
  add_step_rows(B);
  if (!add_class_rows(B) || !add_cost_rows(B))
    return;
  if (J->traffic_cap != FP_NO_LIMIT) { /* a limit for every objective */
    B->rb.n = 0;
    for (int i = 1; i <= B->traffic.n; i++)
      rb_col(&B->rb, B->traffic.ind[i], B->traffic.val[i]);
    B->rb.cst = B->traffic.cst;
    add_row(B, -HUGE_VAL, (double)J->traffic_cap / M->scale, "traffic_limit",
            0);
  }
  add_cluster_rows(B, J->cuts);
  glp_set_obj_coef(M->lp, 0, M->obj_const);
  J->rc = B->oom       ? ILP_BUILD_NOMEM
          : M->stopped ? ILP_BUILD_STOPPED
                       : ILP_BUILD_OK;
}

/* The refusal of what cannot fit or could not be stopped on time, from
 * the estimate; ILP_BUILD_OK when neither. */
static int size_verdict(const ilp_model *M) {
  if (M->est_bytes > memory_available())
    return ILP_BUILD_TOO_BIG;
  return M->est_nnz > ILP_MAX_EST_NZ ? ILP_BUILD_TOO_SLOW : ILP_BUILD_OK;
}

/* Windows, the size estimate and the refusal of what cannot fit; then
 * the model itself under mip_guard. */
static int build(builder *B, const fp_plan *warm, uint64_t traffic_cap,
                 const solver_cuts *cuts) {
  ilp_model *M = B->M;
  build_job J = {B, traffic_cap, cuts, NULL, ILP_BUILD_NOMEM};
  J.scratch = malloc(((size_t)M->n + 1) * sizeof *J.scratch);
  if (!J.scratch || !alloc_model(M, B) || compute_windows(M, warm) != 0 ||
      estimate_size(M) != 0)
    goto done;
  if ((J.rc = size_verdict(M)) != ILP_BUILD_OK)
    goto done;
  J.rc = ILP_BUILD_NOMEM;
  if (M->with_peak && M->peak_cap != FP_NO_LIMIT && M->peak_cap < M->resident)
    M->infeasible = true;
  if (mip_guard(build_model, &J) != 0) {
    M->lp = NULL; /* freed with GLPK's environment */
    J.rc = ILP_BUILD_GLPK;
  }
done:
  free(J.scratch);
  return J.rc;
}

/* The fields of M that ilp_build and ilp_size share. */
static void model_init(ilp_model *M, const fp_graph *g,
                       const fp_ilp_params *prm, uint64_t peak_cap) {
  memset(M, 0, sizeof *M);
  M->g = g;
  M->prm = prm;
  M->n = fp_graph_node_count(g);
  M->k = fp_limits_fusion_size(&prm->limits, g);
  M->exact = true;
  M->scale = byte_scale(g, prm->objective);
  M->resident = fp_graph_resident_bytes(g);
  M->peak_cap = peak_cap;
  M->with_peak =
      peak_cap != FP_NO_LIMIT || prm->objective != FP_OBJECTIVE_TRAFFIC;
}

int ilp_size(ilp_model *M, const fp_graph *g, const fp_ilp_params *prm,
             const fp_plan *warm) {
  builder B;
  memset(&B, 0, sizeof B);
  B.M = M;
  model_init(M, g, prm, FP_NO_LIMIT);
  int rc = ILP_BUILD_NOMEM;
  if (alloc_model(M, &B) && compute_windows(M, warm) == 0 &&
      estimate_size(M) == 0)
    rc = size_verdict(M);
  free(B.lbase), free(B.lt0), free(B.lt1);
  free(B.rfirst), free(B.rlast), free(B.fixed);
  return rc;
}

int ilp_build(ilp_model *M, const fp_graph *g, const fp_ilp_params *prm,
              const fp_plan *warm, uint64_t peak_cap, uint64_t traffic_cap,
              const solver_cuts *cuts, double deadline) {
  builder B;
  memset(&B, 0, sizeof B);
  B.M = M;
  model_init(M, g, prm, peak_cap);
  M->deadline = deadline;
  B.wt = prm->objective == FP_OBJECTIVE_PEAK ? 0 : 1;
  B.wp = prm->objective == FP_OBJECTIVE_TRAFFIC ? 0
         : prm->objective == FP_OBJECTIVE_PEAK  ? 1
                                                : prm->lambda;
  int rc = build(&B, warm, traffic_cap, cuts);
  free(B.rb.ind);
  free(B.rb.val);
  free(B.traffic.ind);
  free(B.traffic.val);
  free(B.lbase);
  free(B.lt0);
  free(B.lt1);
  free(B.rfirst);
  free(B.rlast);
  free(B.fixed);
  free(B.units);
  return rc;
}

void ilp_free(ilp_model *M) {
  if (M->lp)
    glp_delete_prob(M->lp);
  free(M->lo);
  free(M->hi);
  free(M->ycol);
  free(M->zcol);
  free(M->mcol);
  free(M->mfix);
  free(M->scol);
  free(M->row_target);
  free(M->names);
  free(M->reach);
  memset(M, 0, sizeof *M);
}

/* ---- plans as columns, and back ------------------------------------------ */

/* step[v] of each node in plan p; false when a node is outside its
 * window. */
static bool plan_steps(const ilp_model *M, const fp_plan *p, int32_t *step) {
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, t, &len);
    for (int32_t i = 0; i < len; i++) {
      if (t < M->lo[grp[i]] || t > M->hi[grp[i]] || t >= M->T)
        return false;
      step[grp[i]] = t;
    }
  }
  return true;
}

bool ilp_plan_columns(const ilp_model *M, const fp_plan *p, double *x) {
  int nc = glp_get_num_cols(M->lp), nr = glp_get_num_rows(M->lp);
  int32_t *step = malloc(((size_t)M->n + 1) * sizeof *step);
  int *ind = malloc(((size_t)nc + 1) * sizeof *ind);
  double *val = malloc(((size_t)nc + 1) * sizeof *val);
  bool ok = step && ind && val && plan_steps(M, p, step);
  for (int c = 1; ok && c <= nc; c++)
    x[c] = 0;
  for (int32_t v = 0; ok && v < M->n; v++)
    for (int32_t t = M->lo[v]; t < M->hi[v]; t++)
      x[M->ycol[v] + (t - M->lo[v])] = step[v] <= t;
  for (int32_t t = 0; ok && t < M->T; t++)
    x[M->zcol[t]] = t < fp_plan_group_count(p);
  for (int32_t v = 0, base = 0; ok && M->scol && v < M->n; v++) {
    int32_t m; /* s: the pairs the evaluator applies at v's step */
    fp_graph_inplace(M->g, v, &m);
    uint64_t on = m ? fp_inplace_plan_applied(M->g, step, v) : 0;
    for (int32_t k = 0; k < m; k++)
      if (M->scol[base + k] && step[v] >= M->lo[v] &&
          step[v] <= last_step(M, v))
        x[M->scol[base + k] + (step[v] - M->lo[v])] = (double)(on >> k & 1);
    base += m;
  }
  /* Definition rows come in dependency order: raise each target to the
   * least value its row allows. */
  for (int r = 1; ok && r <= nr; r++) {
    int tgt = M->row_target[r];
    if (!tgt)
      continue;
    int len = glp_get_mat_row(M->lp, r, ind, val);
    double rest = 0, coef = 0;
    for (int i = 1; i <= len; i++) {
      if (ind[i] == tgt)
        coef = val[i];
      else
        rest += val[i] * x[ind[i]];
    }
    double need = (glp_get_row_lb(M->lp, r) - rest) / coef;
    x[tgt] = need > x[tgt] ? need : x[tgt];
  }
  free(step);
  free(ind);
  free(val);
  return ok;
}

bool ilp_check_columns(const ilp_model *M, const double *x) {
  return mip_point_feasible(M->lp, x, 1e-9, 0);
}

fp_status ilp_extract(const ilp_model *M, fp_plan *out, fp_error *err) {
  int32_t *step = malloc(((size_t)M->n + 1) * sizeof *step);
  fp_status st = FP_OK;
  if (!step)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  for (int32_t v = 0; v < M->n; v++) {
    step[v] = M->hi[v];
    for (int32_t t = M->lo[v]; t < M->hi[v]; t++)
      if (glp_mip_col_val(M->lp, M->ycol[v] + (t - M->lo[v])) > 0.5) {
        step[v] = t;
        break;
      }
  }
  fp_plan_clear(out);
  for (int32_t t = 0; t < M->T && st == FP_OK; t++) {
    bool opened = false;
    for (int32_t v = 0; v < M->n && st == FP_OK; v++) {
      if (step[v] != t)
        continue;
      if (!opened && (st = fp_plan_open_group(out, err)) != FP_OK)
        break;
      opened = true;
      st = fp_plan_append_node(out, v, err);
    }
  }
  free(step);
  return st;
}

/* ---- what the callers of the MIP core share ------------------------------ */

double *ilp_warm_columns(const ilp_model *M, const fp_plan *warm) {
  int nc = glp_get_num_cols(M->lp);
  double *x = malloc(((size_t)nc + 1) * sizeof *x);
  if (x && !(ilp_plan_columns(M, warm, x) && ilp_check_columns(M, x))) {
    free(x); /* never inject what the rows do not accept */
    x = NULL;
  }
  return x;
}

fp_status ilp_solution_plan(const ilp_model *M, int glp_status, fp_plan *p,
                            fp_metrics *m, fp_error *err) {
  if (!M->lp || (glp_status != GLP_OPT && glp_status != GLP_FEAS))
    return FP_EINFEASIBLE; /* no MIP solution: not an error */
  fp_status st = ilp_extract(M, p, err);
  if (st == FP_OK)
    st = fp_plan_eval_k(M->g, p, M->k, m, NULL, err);
  if (st == FP_ENOMEM)
    return st;
  if (st != FP_OK) { /* the message is copied: it is rewritten in place */
    char why[FP_ERROR_MSG_MAX];
    snprintf(why, sizeof why, "%s", err ? err->msg : "");
    return fp_error_set(err, FP_EINTERNAL,
                        "ilp: model solution is not a legal plan: %s", why);
  }
  double model = glp_mip_obj_val(M->lp) * M->scale;
  double truth = fp_objective_value(M->prm, m);
  if (glp_status == GLP_OPT && fabs(model - truth) > 1e-6 * (1 + truth) + 0.5)
    return fp_error_set(err, FP_EINTERNAL,
                        "ilp: model objective %.17g disagrees with the "
                        "evaluator's %.17g",
                        model, truth);
  return FP_OK;
}

double ilp_bound_value(const ilp_model *M, double mip_bound, double b) {
  bool whole = M->prm->objective != FP_OBJECTIVE_WEIGHTED;
  if (M->exact && isfinite(mip_bound)) {
    double mip = mip_bound * M->scale;
    if (whole) /* whole model units */
      mip = ceil(mip_bound - 1e-6 * (1 + fabs(mip_bound))) * M->scale;
    b = mip > b ? mip : b;
  }
  /* Traffic and peak are sums of byte counts, so multiples of their GCD,
   * the model's scale: a bound rounds up to the next multiple. */
  if (whole)
    b = ceil(b / M->scale - 1e-9) * M->scale;
  return b;
}
