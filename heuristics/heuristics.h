/*
 * heuristics.h -- greedy fusion (Inductor-style, low-memory, peak-aware)
 * and memory-aware orderings.  Not implemented yet: see issue "heuristics".
 * Today `fuseplan solve` offers only the eager method (model/plan.h).
 */
#ifndef FP_HEURISTICS_H
#define FP_HEURISTICS_H
#endif
