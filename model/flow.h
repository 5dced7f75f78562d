/*
 * flow.h -- maximum flow on a small directed network (Dinic's algorithm),
 * for the min-cut step bound of peak_bound.c.  Internal to model/.
 *
 * Capacities are non-negative int64 values; FP_FLOW_INF stands for an
 * edge that no finite cut may cross (sums of finite capacities must stay
 * below it).
 */
#ifndef FP_FLOW_H
#define FP_FLOW_H

#include <stdbool.h>
#include <stdint.h>

#define FP_FLOW_INF ((int64_t)1 << 62)

typedef struct fp_flow fp_flow;

/* A network of n vertices (0..n-1) and no edges; NULL out of memory. */
fp_flow *fp_flow_create(int32_t n);

/* Frees the network.  NULL is a no-op. */
void fp_flow_destroy(fp_flow *f);

/* Adds the edge u -> v with capacity cap >= 0 (and its residual twin).
 * 0, or -1 out of memory (the network is unchanged then). */
int fp_flow_add_edge(fp_flow *f, int32_t u, int32_t v, int64_t cap);

/* The value of a maximum s-t flow (s != t), saturating at FP_FLOW_INF.
 * Never fails (it allocates nothing).  The network keeps the flow: call
 * it once. */
int64_t fp_flow_max(fp_flow *f, int32_t s, int32_t t);

/* After fp_flow_max returned less than FP_FLOW_INF: whether vertex v is
 * on the source side of a minimum cut (reachable from s in the residual
 * network).  False for a bad v. */
bool fp_flow_source_side(const fp_flow *f, int32_t v);

/* Edge visits spent so far by fp_flow_max (a deterministic measure of its
 * work, for callers that budget it). */
int64_t fp_flow_work(const fp_flow *f);

#endif /* FP_FLOW_H */
