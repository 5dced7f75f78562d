/*
 * exec_util.h -- helpers shared by the executor's test programs: graphs
 * small enough to run many times, plans from every method, an op-less
 * copy of a graph (surrogate kernels), and random legal plans.
 */
#ifndef FP_EXEC_UTIL_H
#define FP_EXEC_UTIL_H

#include <stdint.h>

#include "cuda_exec/exec.h"
#include "gen/generate.h"
#include "heuristics/heuristics.h"
#include "tests/testutil.h"

/* Multiply-adds of the graph's matmuls (what dominates a CPU run). */
uint64_t eu_matmul_work(const fp_graph *g);

/* A generated graph of `family` with `size` nodes, from the first seed at
 * or after *seed whose total bytes stay under max_bytes and matmul work
 * under max_work (both measured, not guessed); *seed gets the seed used.
 * Fails the test when none of 200 seeds fits. */
fp_graph *eu_small_graph(fp_gen_family family, int32_t size, uint64_t *seed,
                         uint64_t max_bytes, uint64_t max_work);

/* The same graph without any op: every node becomes a surrogate. */
fp_graph *eu_strip_ops(const fp_graph *g);

/* The plan of `method` (default parameters) for g. */
fp_plan *eu_method_plan(const fp_graph *g, fp_method method);

/* A random legal plan: a random topological order of the nodes, each node
 * joining the previous group when that stays legal (fp_plan_check) and a
 * coin says so. */
fp_plan *eu_random_plan(const fp_graph *g, tu_rng *r);

/* The plans the backend tests run on one graph: 0 eager, 1 greedy,
 * 2 greedy-lowmem and 3 a random legal plan of g, 4 greedy of `bare` (g
 * with its ops stripped: surrogate kernels).  *gg gets the graph plan i
 * belongs to. */
#define EU_PLAN_SET 5
fp_plan *eu_plan_in_set(const fp_graph *g, const fp_graph *bare, tu_rng *rng,
                        int i, const fp_graph **gg);

#endif /* FP_EXEC_UTIL_H */
