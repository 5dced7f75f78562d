/*
 * plan.c -- the plan container (groups as CSR arrays) and the eager plan.
 *
 * Invariant: group_off has n_groups + 1 entries (group_off[0] == 0) and
 * group i holds nodes[group_off[i] .. group_off[i+1]).
 */
#include "model/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/args.h"
#include "model/graph_internal.h"

struct fp_plan {
  int32_t *group_off;
  int32_t n_groups, cap_groups; /* cap_groups counts group_off entries */
  int32_t *nodes;
  int32_t n_nodes, cap_nodes;
  char *graph_name;
  fp_solver_info solver;
  fp_plan_claims claims;
};

static const fp_plan_claims no_claims = {NAN, NAN, NAN};

void fp_solver_info_init(fp_solver_info *info) {
  if (!info)
    return;
  memset(info, 0, sizeof *info);
  info->objective = NAN;
  info->bound = NAN;
  info->gap = NAN;
  info->time_s = NAN;
  info->nodes = -1;
  info->rows = -1;
  info->cols = -1;
  info->glpk_peak_bytes = -1;
  info->levels_proven = -1;
  info->objective2 = NAN;
  info->bound2 = NAN;
  info->gap2 = NAN;
}

fp_plan *fp_plan_create(void) {
  fp_plan *p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->graph_name = calloc(1, 1);
  if (!p->graph_name || fp_grow_array((void **)&p->group_off, &p->cap_groups, 1,
                                      sizeof *p->group_off) != 0)
    goto fail;
  p->group_off[0] = 0;
  fp_solver_info_init(&p->solver);
  p->claims = no_claims;
  return p;
fail:
  fp_plan_destroy(p);
  return NULL;
}

void fp_plan_destroy(fp_plan *p) {
  if (!p)
    return;
  free(p->group_off);
  free(p->nodes);
  free(p->graph_name);
  free(p);
}

/* FP_EARG naming `what` when p is NULL. */
static fp_status check_plan(const fp_plan *p, const char *what, fp_error *err) {
  return p ? FP_OK : fp_error_set(err, FP_EARG, "%s: NULL plan", what);
}

/* FP_EARG unless 0 <= v < FP_MAX_ITEMS: a plan does not know its graph,
 * but no graph has a node outside that range. */
static fp_status check_node_id(int32_t v, fp_error *err) {
  if (v < 0 || v >= FP_MAX_ITEMS)
    return fp_error_set(err, FP_EARG, "plan: node index %ld out of range",
                        (long)v);
  return FP_OK;
}

fp_status fp_plan_open_group(fp_plan *p, fp_error *err) {
  if (check_plan(p, "plan", err) != FP_OK)
    return FP_EARG;
  if (fp_grow_array((void **)&p->group_off, &p->cap_groups,
                    (int64_t)p->n_groups + 2, sizeof *p->group_off) != 0)
    return fp_error_set(err, FP_ENOMEM, "plan: out of memory");
  p->n_groups++;
  p->group_off[p->n_groups] = p->n_nodes;
  return FP_OK;
}

fp_status fp_plan_append_node(fp_plan *p, int32_t v, fp_error *err) {
  if (check_plan(p, "plan", err) != FP_OK || check_node_id(v, err) != FP_OK)
    return FP_EARG;
  if (p->n_groups == 0 && fp_plan_open_group(p, err) != FP_OK)
    return FP_ENOMEM;
  if (fp_grow_array((void **)&p->nodes, &p->cap_nodes, (int64_t)p->n_nodes + 1,
                    sizeof *p->nodes) != 0)
    return fp_error_set(err, FP_ENOMEM, "plan: out of memory");
  p->nodes[p->n_nodes++] = v;
  p->group_off[p->n_groups] = p->n_nodes;
  return FP_OK;
}

fp_status fp_plan_add_group(fp_plan *p, const int32_t *nodes, int32_t n,
                            fp_error *err) {
  if (check_plan(p, "plan", err) != FP_OK)
    return FP_EARG;
  if (n < 0 || (n > 0 && !nodes))
    return fp_error_set(err, FP_EARG,
                        "plan: negative group size or NULL "
                        "nodes");
  for (int32_t i = 0; i < n; i++)
    if (check_node_id(nodes[i], err) != FP_OK)
      return FP_EARG;
  if ((int64_t)p->n_nodes + n > FP_MAX_ITEMS)
    return fp_error_set(err, FP_ELIMIT, "plan: too many entries");
  if (fp_grow_array((void **)&p->nodes, &p->cap_nodes, (int64_t)p->n_nodes + n,
                    sizeof *p->nodes) != 0 ||
      fp_plan_open_group(p, err) != FP_OK)
    return fp_error_set(err, FP_ENOMEM, "plan: out of memory");
  if (n > 0)
    memcpy(p->nodes + p->n_nodes, nodes, (size_t)n * sizeof *nodes);
  p->n_nodes += n;
  p->group_off[p->n_groups] = p->n_nodes;
  return FP_OK;
}

void fp_plan_clear(fp_plan *p) {
  if (!p)
    return;
  p->n_groups = 0;
  p->n_nodes = 0;
  p->group_off[0] = 0;
}

fp_status fp_plan_copy(fp_plan *dst, const fp_plan *src, fp_error *err) {
  if (!dst || !src)
    return fp_error_set(err, FP_EARG, "plan copy: NULL plan");
  if (dst == src)
    return FP_OK;
  if (fp_grow_array((void **)&dst->group_off, &dst->cap_groups,
                    (int64_t)src->n_groups + 1, sizeof *dst->group_off) != 0 ||
      fp_grow_array((void **)&dst->nodes, &dst->cap_nodes, src->n_nodes,
                    sizeof *dst->nodes) != 0 ||
      fp_plan_set_graph_name(dst, src->graph_name, err) != FP_OK)
    return fp_error_set(err, FP_ENOMEM, "plan: out of memory");
  memcpy(dst->group_off, src->group_off,
         ((size_t)src->n_groups + 1) * sizeof *src->group_off);
  if (src->n_nodes > 0)
    memcpy(dst->nodes, src->nodes, (size_t)src->n_nodes * sizeof *src->nodes);
  dst->n_groups = src->n_groups;
  dst->n_nodes = src->n_nodes;
  dst->solver = src->solver;
  dst->claims = src->claims;
  return FP_OK;
}

int32_t fp_plan_group_count(const fp_plan *p) {
  return p ? p->n_groups : 0;
}
int32_t fp_plan_entry_count(const fp_plan *p) {
  return p ? p->n_nodes : 0;
}

const int32_t *fp_plan_group(const fp_plan *p, int32_t i, int32_t *n) {
  if (!p || i < 0 || i >= p->n_groups) {
    if (n)
      *n = 0;
    return NULL;
  }
  if (n)
    *n = p->group_off[i + 1] - p->group_off[i];
  return p->nodes ? p->nodes + p->group_off[i] : NULL; /* no entries yet */
}

const char *fp_plan_graph_name(const fp_plan *p) {
  return p ? p->graph_name : NULL;
}

fp_status fp_plan_set_graph_name(fp_plan *p, const char *name, fp_error *err) {
  if (check_plan(p, "plan", err) != FP_OK)
    return FP_EARG;
  size_t n = strlen(name ? name : "") + 1;
  char *s = malloc(n);
  if (!s)
    return fp_error_set(err, FP_ENOMEM, "plan: out of memory");
  memcpy(s, name ? name : "", n);
  free(p->graph_name);
  p->graph_name = s;
  return FP_OK;
}

const fp_plan_claims *fp_plan_claims_get(const fp_plan *p) {
  return p ? &p->claims : NULL;
}

void fp_plan_claims_set(fp_plan *p, const fp_plan_claims *c) {
  if (p)
    p->claims = c ? *c : no_claims;
}

fp_solver_info *fp_plan_solver(fp_plan *p) {
  return p ? &p->solver : NULL;
}
const fp_solver_info *fp_plan_solver_const(const fp_plan *p) {
  return p ? &p->solver : NULL;
}

fp_status fp_plan_make_eager(fp_plan *p, const fp_graph *g, fp_error *err) {
  if (check_plan(p, "eager plan", err) != FP_OK ||
      fp_arg_graph(g, "eager plan", err) != FP_OK)
    return FP_EARG;
  int32_t n = fp_graph_node_count(g);
  fp_plan_clear(p);
  if (fp_grow_array((void **)&p->group_off, &p->cap_groups, (int64_t)n + 1,
                    sizeof *p->group_off) != 0 ||
      fp_grow_array((void **)&p->nodes, &p->cap_nodes, n, sizeof *p->nodes) !=
          0 ||
      fp_plan_set_graph_name(p, fp_graph_name(g), err) != FP_OK)
    return fp_error_set(err, FP_ENOMEM, "plan: out of memory");
  for (int32_t v = 0; v < n; v++) {
    p->nodes[v] = v;
    p->group_off[v + 1] = v + 1;
  }
  p->n_groups = n;
  p->n_nodes = n;
  p->claims = no_claims;
  fp_solver_info_init(&p->solver);
  strcpy(p->solver.method, "eager");
  strcpy(p->solver.status, "heuristic");
  return FP_OK;
}
