/*
 * reorder.c -- fp_plan_reorder: applies one of the orders of order.c to a
 * legal plan, the best of them (`best`), or Inductor's reorder
 * (`inductor`, inductor_order.c).  The grouping never changes.
 */
#include <stdlib.h>
#include <string.h>

#include "heuristics/order_internal.h"
#include "model/eval.h"
#include "model/util.h"

static int compute_order(const gdag *d, fp_order o, int32_t *out) {
  switch (o) {
  case FP_ORDER_LISTED:
    return order_kahn(d, false, out);
  case FP_ORDER_BFS:
    return order_kahn(d, true, out);
  case FP_ORDER_LPMF:
    return order_lpmf(d, out);
  case FP_ORDER_DFS:
    return order_dfs(d, out);
  default:
    return -1;
  }
}

/* Writes p's groups in `order` into dst (replacing its groups). */
static fp_status permute(const fp_plan *p, const int32_t *order, fp_plan *dst,
                         fp_error *err) {
  fp_plan_clear(dst);
  for (int32_t i = 0; i < fp_plan_group_count(p); i++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, order[i], &len);
    if (fp_plan_add_group(dst, grp, len, err) != FP_OK)
      return FP_ENOMEM;
  }
  return FP_OK;
}

/* Tries every concrete order in [first, last]; leaves the lowest-peak one
 * (the first on ties) in `best` and its order in *chosen. */
static fp_status try_orders(const fp_graph *g, const fp_plan *p, const gdag *d,
                            fp_order first, fp_order last, fp_plan *best,
                            fp_order *chosen, fp_error *err) {
  int32_t *order = malloc(((size_t)d->n + 1) * sizeof *order);
  fp_plan *cand = fp_plan_create();
  fp_status st = FP_OK;
  uint64_t best_peak = UINT64_MAX;
  if (!order || !cand) {
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
    goto done;
  }
  for (int o = first; o <= (int)last; o++) {
    fp_metrics m;
    if (compute_order(d, (fp_order)o, order) != 0) {
      st = fp_error_set(err, FP_ENOMEM, "out of memory ordering groups");
      goto done;
    }
    if ((st = permute(p, order, cand, err)) != FP_OK ||
        (st = fp_plan_eval_k(g, cand, INT32_MAX, &m, NULL, err)) != FP_OK)
      goto done;
    if (m.peak_bytes < best_peak) {
      best_peak = m.peak_bytes;
      *chosen = (fp_order)o;
      if ((st = fp_plan_copy(best, cand, err)) != FP_OK)
        goto done;
    }
  }
done:
  free(order);
  fp_plan_destroy(cand);
  return st;
}

fp_status fp_plan_reorder(const fp_graph *g, fp_plan *p, fp_order order,
                          fp_order *chosen, fp_error *err) {
  fp_order applied = order;
  gdag d;
  fp_status st = fp_plan_check(g, p, INT32_MAX, err);
  if (st != FP_OK)
    return st;
  if ((unsigned)order >= FP_ORDER_COUNT_)
    return fp_error_set(err, FP_EARG, "unknown order %d", (int)order);
  if (gdag_build(g, p, &d) != 0) {
    gdag_free(&d);
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  }
  fp_plan *best = fp_plan_create();
  fp_solver_info keep = *fp_plan_solver(p);
  if (!best) {
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
    goto done;
  }
  if (order == FP_ORDER_INDUCTOR) {
    st = inductor_reorder_kernels(g, p, best, &applied, err);
    /* Its orders are not evaluated on the way (Inductor's estimate picks
     * them), so the verifier sees the answer here. */
    fp_error why;
    fp_status ck = st == FP_OK ? fp_plan_check(g, best, INT32_MAX, &why) : st;
    if (ck == FP_ENOMEM) /* the check itself ran out of memory */
      st = fp_error_set(err, FP_ENOMEM, "out of memory");
    else if (st == FP_OK && ck != FP_OK)
      st = fp_error_set(err, FP_EINTERNAL, "order inductor: %s", why.msg);
  } else if (order == FP_ORDER_BEST)
    st = try_orders(g, p, &d, FP_ORDER_LISTED, FP_ORDER_DFS, best, &applied,
                    err);
  else
    st = try_orders(g, p, &d, order, order, best, &applied, err);
  if (st == FP_OK && (st = fp_plan_copy(p, best, err)) == FP_OK) {
    *fp_plan_solver(p) = keep;
    st = fp_plan_set_graph_name(p, fp_graph_name(g), err);
  }
done:
  if (chosen)
    *chosen = applied;
  fp_plan_destroy(best);
  gdag_free(&d);
  return st;
}
