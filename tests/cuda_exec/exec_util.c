/*
 * exec_util.c -- see exec_util.h.
 */
#include "tests/cuda_exec/exec_util.h"

#include <stdlib.h>
#include <string.h>

uint64_t eu_matmul_work(const fp_graph *g) {
  uint64_t w = 0;
  for (int32_t v = 0; v < fp_graph_node_count(g); v++) {
    const fp_op *op = &fp_graph_node(g, v)->op;
    if (op->fn == FP_OP_MATMUL)
      w += (uint64_t)op->m * op->n * op->k;
  }
  return w;
}

/* Sum of all buffer bytes. */
static uint64_t total_bytes(const fp_graph *g) {
  uint64_t s = 0;
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++)
    s += fp_graph_buffer(g, b)->bytes;
  return s;
}

fp_graph *eu_small_graph(fp_gen_family family, int32_t size, uint64_t *seed,
                         uint64_t max_bytes, uint64_t max_work) {
  for (int i = 0; i < 200; i++, (*seed)++) {
    fp_gen_params prm;
    fp_graph *g = NULL;
    fp_gen_params_init(&prm);
    prm.family = family;
    prm.size = size;
    prm.seed = *seed;
    ck_assert_int_eq(fp_generate(&prm, &g, NULL), FP_OK);
    if (total_bytes(g) <= max_bytes && eu_matmul_work(g) <= max_work)
      return g;
    fp_graph_destroy(g);
  }
  ck_abort_msg("no %s graph of %d nodes fits", fp_gen_family_name(family),
               (int)size);
  return NULL;
}

/* Adds node v of g, without its op, to the copy c. */
static void copy_node(fp_graph *c, const fp_graph *g, int32_t v) {
  const fp_node *n = fp_graph_node(g, v);
  fp_node_spec s = {.name = n->name,
                    .kind = n->kind,
                    .numel = n->numel,
                    .rnumel = n->rnumel,
                    .n_reads = n->n_reads,
                    .n_writes = n->n_writes,
                    .reads = n->reads,
                    .writes = n->writes,
                    .op = NULL};
  fp_error err;
  ck_assert_msg(fp_graph_add_node(c, &s, &err) == v, "%s", err.msg);
}

fp_graph *eu_strip_ops(const fp_graph *g) {
  fp_graph *c = fp_graph_create(fp_graph_name(g));
  ck_assert_ptr_nonnull(c);
  ck_assert_int_eq(
      fp_graph_set_max_fusion_size(c, fp_graph_max_fusion_size(g), NULL),
      FP_OK);
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++) {
    const fp_buffer *buf = fp_graph_buffer(g, b);
    ck_assert_int_eq(fp_graph_add_buffer(c, buf->name, buf->bytes, buf->input,
                                         buf->freeable, NULL),
                     b);
  }
  for (int32_t v = 0; v < fp_graph_node_count(g); v++)
    copy_node(c, g, v);
  for (int32_t i = 0; i < fp_graph_output_count(g); i++)
    ck_assert_int_eq(fp_graph_add_output(c, fp_graph_output(g, i), NULL),
                     FP_OK);
  for (int32_t i = 0; i < fp_graph_unfusible_count(g); i++) {
    int32_t u, v;
    fp_graph_unfusible_pair(g, i, &u, &v);
    ck_assert_int_eq(fp_graph_add_unfusible(c, u, v, NULL), FP_OK);
  }
  ck_assert_int_eq(fp_graph_finalize(c, NULL), FP_OK);
  return c;
}

fp_plan *eu_method_plan(const fp_graph *g, fp_method method) {
  fp_fusion_params prm;
  fp_error err;
  fp_plan *p = fp_plan_create();
  ck_assert_ptr_nonnull(p);
  fp_fusion_params_init(&prm, method);
  ck_assert_msg(fp_fuse(g, &prm, p, &err) == FP_OK, "%s: %s",
                fp_method_name(method), err.msg);
  return p;
}

/* Appends v to the last group if that stays legal and the coin agrees;
 * otherwise opens a new group for it. */
static void place(const fp_graph *g, fp_plan *p, int32_t v, tu_rng *r) {
  if (fp_plan_group_count(p) > 0 && tu_below(r, 3) != 0) {
    ck_assert_int_eq(fp_plan_append_node(p, v, NULL), FP_OK);
    int32_t len;
    const int32_t *last = fp_plan_group(p, fp_plan_group_count(p) - 1, &len);
    bool ok = len <= fp_graph_max_fusion_size(g);
    for (int32_t i = 0; ok && i + 1 < len; i++)
      ok = fp_graph_compatible(g, last[i], v);
    if (ok)
      return;
    /* Undo: rebuild without v in the last group. */
    fp_plan *q = fp_plan_create();
    ck_assert_ptr_nonnull(q);
    for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
      const int32_t *grp = fp_plan_group(p, t, &len);
      bool lastg = t == fp_plan_group_count(p) - 1;
      ck_assert_int_eq(fp_plan_add_group(q, grp, lastg ? len - 1 : len, NULL),
                       FP_OK);
    }
    ck_assert_int_eq(fp_plan_copy(p, q, NULL), FP_OK);
    fp_plan_destroy(q);
  }
  ck_assert_int_eq(fp_plan_add_group(p, &v, 1, NULL), FP_OK);
}

fp_plan *eu_random_plan(const fp_graph *g, tu_rng *r) {
  int32_t n = fp_graph_node_count(g);
  int32_t *indeg = calloc((size_t)n + 1, sizeof *indeg);
  int32_t *ready = malloc(((size_t)n + 1) * sizeof *ready);
  ck_assert_ptr_nonnull(indeg);
  ck_assert_ptr_nonnull(ready);
  /* In-degree: distinct producer nodes of what v reads. */
  for (int32_t v = 0; v < n; v++) {
    const fp_node *nd = fp_graph_node(g, v);
    for (int32_t k = 0; k < nd->n_reads; k++)
      indeg[v] += fp_graph_buffer(g, nd->reads[k].buffer)->writer >= 0;
  }
  int32_t n_ready = 0;
  for (int32_t v = 0; v < n; v++)
    if (indeg[v] == 0)
      ready[n_ready++] = v;
  fp_plan *p = fp_plan_create();
  ck_assert_ptr_nonnull(p);
  for (int32_t done = 0; done < n; done++) {
    ck_assert_int_gt(n_ready, 0);
    int32_t i = (int32_t)tu_below(r, (uint32_t)n_ready), v = ready[i];
    ready[i] = ready[--n_ready];
    place(g, p, v, r);
    const fp_node *nd = fp_graph_node(g, v);
    for (int32_t w = 0; w < nd->n_writes; w++) {
      const fp_buffer *b = fp_graph_buffer(g, nd->writes[w]);
      /* One decrement per read entry, as counted above. */
      for (int32_t j = 0; j < b->n_readers; j++) {
        const fp_node *c = fp_graph_node(g, b->readers[j]);
        for (int32_t k = 0; k < c->n_reads; k++)
          if (c->reads[k].buffer == nd->writes[w] &&
              --indeg[b->readers[j]] == 0)
            ready[n_ready++] = b->readers[j];
      }
    }
  }
  free(indeg);
  free(ready);
  ck_assert_int_eq(fp_plan_check(g, p, 0, NULL), FP_OK);
  return p;
}

fp_plan *eu_plan_in_set(const fp_graph *g, const fp_graph *bare, tu_rng *rng,
                        int i, const fp_graph **gg) {
  static const fp_method methods[] = {FP_METHOD_EAGER, FP_METHOD_GREEDY,
                                      FP_METHOD_GREEDY_LOWMEM};
  *gg = i < 4 ? g : bare;
  return i == 3   ? eu_random_plan(g, rng)
         : i == 4 ? eu_method_plan(bare, FP_METHOD_GREEDY)
                  : eu_method_plan(g, methods[i]);
}
