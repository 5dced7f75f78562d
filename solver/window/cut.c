/*
 * cut.c -- sub-graphs of consecutive nodes (cut.h): the window machinery
 * of window.c applied to the eager plan, whose step t is node t.
 */
#include "solver/window/cut.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/eval.h"
#include "model/plan.h"
#include "solver/window/window.h"

/* The eager plan of g and its timeline, for sub_window. */
static fp_status eager_window_input(const fp_graph *g, fp_plan **p,
                                    fp_step **tl, int32_t **step, fp_metrics *m,
                                    fp_error *err) {
  int32_t n = fp_graph_node_count(g);
  *p = fp_plan_create();
  *tl = calloc((size_t)n + 1, sizeof **tl);
  *step = malloc(((size_t)n + 1) * sizeof **step);
  if (!*p || !*tl || !*step)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  for (int32_t v = 0; v < n; v++)
    (*step)[v] = v;
  fp_status st = fp_plan_make_eager(*p, g, err);
  return st == FP_OK ? fp_plan_eval_k(g, *p, INT32_MAX, m, *tl, err) : st;
}

fp_status fp_graph_cut(const fp_graph *g, fp_cut c, fp_graph **out,
                       fp_error *err) {
  int32_t n = fp_graph_node_count(g);
  *out = NULL;
  if (c.first < 0 || c.count < 1 || c.first > n - c.count)
    return fp_error_set(err, FP_EARG, "cut %d+%d: outside the graph's %d nodes",
                        (int)c.first, (int)c.count, (int)n);
  fp_plan *p = NULL;
  fp_step *tl = NULL;
  int32_t *step = NULL;
  fp_metrics m;
  sub_scratch scr = {NULL, NULL};
  sub_problem S;
  memset(&S, 0, sizeof S);
  fp_status st = eager_window_input(g, &p, &tl, &step, &m, err);
  if (st == FP_OK && sub_scratch_init(&scr, g) != 0)
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
  if (st == FP_OK)
    st = sub_window(&S, &scr, g, p, step, tl, &m, 0, c.first, c.first + c.count,
                    err);
  if (st == FP_OK) {
    char name[FP_MAX_NAME + 32];
    snprintf(name, sizeof name, "%s@%d+%d", fp_graph_name(g), (int)c.first,
             (int)c.count);
    st = fp_graph_rename(S.g, name, err);
  }
  if (st == FP_OK) {
    *out = S.g;
    S.g = NULL;
  }
  sub_free(&S);
  sub_scratch_free(&scr);
  fp_plan_destroy(p);
  free(tl);
  free(step);
  return st;
}

/* Union-find root with path halving. */
static int32_t uf_root(int32_t *up, int32_t x) {
  while (up[x] != x)
    x = up[x] = up[up[x]];
  return x;
}

int fp_cut_connected(const fp_graph *g, fp_cut c) {
  int32_t *up = malloc((size_t)c.count * sizeof *up), parts = c.count;
  if (!up)
    return 0;
  for (int32_t i = 0; i < c.count; i++)
    up[i] = i;
  for (int32_t i = 0; i < c.count; i++) {
    const fp_node *nd = fp_graph_node(g, c.first + i);
    for (int32_t r = 0; r < nd->n_reads; r++) {
      int32_t w = fp_graph_buffer(g, nd->reads[r].buffer)->writer - c.first;
      if (w < 0 || w >= c.count)
        continue;
      int32_t a = uf_root(up, i), b = uf_root(up, w);
      if (a != b)
        up[a] = b, parts--;
    }
  }
  free(up);
  return parts == 1;
}

/* splitmix64: a fixed generator, so that cuts are the same everywhere. */
static uint64_t next_random(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static int cmp_cut(const void *x, const void *y) {
  const fp_cut *a = x, *b = y;
  if (a->first != b->first)
    return a->first < b->first ? -1 : 1;
  return (a->count > b->count) - (a->count < b->count);
}

/* Whether c is among out[0..n). */
static int cut_taken(const fp_cut *out, int32_t n, fp_cut c) {
  for (int32_t i = 0; i < n; i++)
    if (out[i].first == c.first && out[i].count == c.count)
      return 1;
  return 0;
}

fp_status fp_cut_choose(const fp_graph *g, int32_t lo, int32_t hi, int32_t want,
                        uint64_t seed, fp_cut *out, int32_t *n, fp_error *err) {
  int32_t nodes = fp_graph_node_count(g);
  *n = 0;
  if (lo < 1 || lo > hi || want < 0 || want > FP_CUT_MAX)
    return fp_error_set(err, FP_EARG,
                        "cut: expected 1 <= A <= B and a count up to %d",
                        FP_CUT_MAX);
  if (hi > nodes)
    hi = nodes;
  /* The graph's name joins the seed, so that two graphs cut with one
   * seed do not get the same sizes in the same order. */
  uint64_t s = seed ^ 0xcbf29ce484222325ull;
  for (const unsigned char *c = (const unsigned char *)fp_graph_name(g); *c;
       c++)
    s = (s ^ *c) * 0x100000001b3ull;
  for (int64_t tries = 0; *n < want && lo <= hi && tries < 50 * (int64_t)want;
       tries++) {
    fp_cut c;
    c.count = lo + (int32_t)(next_random(&s) % (uint64_t)(hi - lo + 1));
    c.first = (int32_t)(next_random(&s) % (uint64_t)(nodes - c.count + 1));
    if (!cut_taken(out, *n, c) && fp_cut_connected(g, c))
      out[(*n)++] = c;
  }
  qsort(out, (size_t)*n, sizeof *out, cmp_cut);
  return FP_OK;
}
