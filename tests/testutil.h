/*
 * testutil.h -- helpers shared by the Check suites: graphs from inline JSON,
 * plans from a compact text form, and a runner.
 */
#ifndef FP_TESTUTIL_H
#define FP_TESTUTIL_H

#include <check.h>
#include <stdint.h>

#include "model/eval.h"
#include "model/graph.h"
#include "model/plan.h"

/* Parses a graph document (fails the test with the loader's message on
 * error).  Single quotes in `json` are turned into double quotes so that
 * tests can write JSON without escaping. */
fp_graph *tu_graph(const char *json);

/* Like tu_graph but returns the status and fills err; *out may be NULL. */
fp_status tu_graph_try(const char *json, fp_graph **out, fp_error *err);

/* Builds a plan from "a b | c | d e" (groups separated by '|', node names
 * by spaces).  Fails the test on an unknown name. */
fp_plan *tu_plan(const fp_graph *g, const char *text);

/* The step (group index) of every node of plan p into step[]. */
void tu_plan_steps(const fp_plan *p, int32_t *step);

/* Evaluates a plan that must be legal (fails the test otherwise). */
fp_metrics tu_eval(const fp_graph *g, const fp_plan *p);

/* Runs one suite; returns the process exit status (0 = all passed). */
int tu_run(Suite *s);

/* A small deterministic PRNG for property tests. */
typedef struct tu_rng {
  uint64_t s;
} tu_rng;
uint64_t tu_next(tu_rng *r);
/* Uniform in [0, n). */
uint32_t tu_below(tu_rng *r, uint32_t n);

/* A random finalized graph of min..max nodes: every kind mix (extern,
 * reduction, pointwise with a few iteration spaces so that some pairs are
 * compatible), 1-3 inputs (some freeable), partial reads, multi-writes,
 * outputs, unread buffers, sometimes an unfusible pair or a small
 * max_fusion_size, one graph in three with bytes live outside it. */
fp_graph *tu_random_graph(tu_rng *r, int32_t min_nodes, int32_t max_nodes);
#define TU_RANDOM_MAX_NODES 64 /* max_nodes of the random graphs, at most */

/* The same with reads favouring the last four buffers (deeper graphs),
 * one read in four of a random part of its buffer, and the small
 * max_fusion_size once in four: the graphs test_exhaustive checks against
 * brute force (the same draws, so the same graphs per seed). */
fp_graph *tu_random_deep_graph(tu_rng *r, int32_t min_nodes, int32_t max_nodes);

/* tu_random_deep_graph's graph of the same draws, with loop nests (graph
 * format 3) on most nodes: shapes that equal, extend, prefix or only match
 * in size one another (docs/cost-model.md#loop-nests). */
fp_graph *tu_random_loop_graph(tu_rng *r, int32_t min_nodes, int32_t max_nodes);

/* g (destroyed) again with 1-3 linked pairs (graph format 3): pairs of
 * compatible nodes, each with one or two linkers, most of them
 * compatible with both; g itself when it has no compatible pair. */
fp_graph *tu_add_linked(fp_graph *g, tu_rng *r);
/* g (destroyed) again with workspaces (graph format 4,
 * docs/cost-model.md#workspaces): each node one time in two, extern nodes
 * three times in four, gets 1 to twice the largest buffer's bytes, some
 * of them multiples of that size and some odd. */
fp_graph *tu_add_workspaces(fp_graph *g, tu_rng *r);
/* A random graph of min..max nodes shaped like an optimizer update: every
 * buffer of one size, pointwise nodes over it (one in eight extern) that
 * read 1-3 mostly recent buffers (one read in six of a part of it), two
 * nodes in three taking over their first read in place, 1-3 inputs
 * (mostly freeable), sometimes a max_fusion_size of 2 or 3.  Readers of
 * a taken-over buffer are often ancestors of the taker that may share its
 * group (fp_graph_inplace_fused_readers). */
fp_graph *tu_random_update_graph(tu_rng *r, int32_t min_nodes,
                                 int32_t max_nodes);

/* A generated graph (fuseplan gen): family is an fp_gen_family.  Fails
 * the test with the generator's message on error. */
fp_graph *tu_generated(int family, int32_t size, uint64_t seed);

/* x -> n0 -> b0 -> n1 -> ... -> n{n-1} -> b{n-1} (an output): n pointwise
 * nodes over bytes / 4 floats, every buffer `bytes` long. */
fp_graph *tu_chain_graph(int n, uint64_t bytes);

/* The chain of tu_chain3_json (x freeable) with each node writing in
 * place over what it reads (version 3), plus (late) a node d that reads
 * x after c; without pairs (plain) when the field is renamed (an unknown
 * field is ignored). */
fp_graph *tu_inplace_chain(bool late, bool plain);

/* x -> a -> t1 -> b -> t2 -> c -> y: three pointwise nodes over 250
 * floats, every buffer 1000 bytes (inline JSON for tu_graph). */
extern const char tu_chain3_json[];

#endif /* FP_TESTUTIL_H */
