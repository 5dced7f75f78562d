/*
 * args.h -- the argument checks at the library's entry points (private to
 * the project, like util.h): a public function that needs a finalized
 * graph, or a pointer it cannot do without, answers FP_EARG with a
 * message naming itself instead of crashing (README, "Guarantees").
 */
#ifndef FP_ARGS_H
#define FP_ARGS_H

#include "model/graph.h"
#include "model/status.h"

/* FP_EARG "fn: the graph is NULL or not finalized", else FP_OK. */
static inline fp_status fp_arg_graph(const fp_graph *g, const char *fn,
                                     fp_error *err) {
  if (!fp_graph_is_finalized(g))
    return fp_error_set(err, FP_EARG, "%s: the graph is NULL or not finalized",
                        fn);
  return FP_OK;
}

/* FP_EARG "fn: what is NULL" when ptr is NULL, else FP_OK. */
static inline fp_status fp_arg_ptr(const void *ptr, const char *fn,
                                   const char *what, fp_error *err) {
  return ptr ? FP_OK : fp_error_set(err, FP_EARG, "%s: %s is NULL", fn, what);
}

#endif /* FP_ARGS_H */
