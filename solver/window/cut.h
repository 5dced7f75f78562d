/*
 * cut.h -- sub-graphs of consecutive nodes cut out of a real graph
 * (`fuseplan cut`, and the cut items of `fuseplan batch`): real structure
 * at sizes the exact ILP proves.
 *
 * A cut [first, first + count) takes those nodes in listed order; the
 * buffers that cross its edges become inputs and outputs exactly as the
 * windows of the large-neighbourhood search do (solver/window.h, on the
 * eager plan): a buffer written before the cut and read in it is an input,
 * one written in it and read after it (or a graph output) is an output.
 * A cut is a problem of its own: like the bytes the rest of the graph holds
 * around it, the graph's outside_live_bytes are not carried over.
 */
#ifndef FP_CUT_H
#define FP_CUT_H

#include <stdint.h>

#include "model/graph.h"
#include "model/status.h"

/* One cut: nodes [first, first + count) in listed order. */
typedef struct fp_cut {
  int32_t first, count;
} fp_cut;

/* The most cuts fp_cut_choose returns. */
#define FP_CUT_MAX 100000

/* Makes the sub-graph of cut c of the finalized graph g into *out (a
 * finalized graph named "<name>@<first>+<count>" that the caller
 * destroys).  FP_EARG when c is not inside g, FP_ENOMEM, FP_EINTERNAL
 * (the window's accounting disagrees with the evaluator: a bug). */
fp_status fp_graph_cut(const fp_graph *g, fp_cut c, fp_graph **out,
                       fp_error *err);

/* Whether the nodes of cut c form one connected piece (through the
 * buffers one writes and another reads): 1 or 0 (0 out of memory). */
int fp_cut_connected(const fp_graph *g, fp_cut c);

/* Chooses up to `want` distinct connected cuts of g with lo..hi nodes,
 * deterministically from `seed` and the graph's name (the same graph,
 * range, count and seed give the same cuts on every machine), sorted by first
 * node then size, into out[0..*n).  Fewer when g has fewer such cuts (tried a
 * bounded number of times).  FP_EARG for lo < 1, lo > hi, want above
 * FP_CUT_MAX; FP_ENOMEM. */
fp_status fp_cut_choose(const fp_graph *g, int32_t lo, int32_t hi, int32_t want,
                        uint64_t seed, fp_cut *out, int32_t *n, fp_error *err);

#endif /* FP_CUT_H */
