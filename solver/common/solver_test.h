/*
 * solver_test.h -- test hooks of solver/, for the unit tests only: not
 * part of the public API (solver.h) and never used by the library itself.
 */
#ifndef FP_SOLVER_TEST_H
#define FP_SOLVER_TEST_H

#include <stdint.h>

/* on != 0: from now on every MIP run on the calling thread (the ILP's and
 * the cluster bounds') fails inside GLPK, as a GLPK internal error would,
 * which exercises the error-hook recovery of mip.c; on == 0: GLPK runs
 * normally again.  Cannot fail. */
void solver_test_inject_fault(int on);

/* The cluster sizes fp_lower_bound's partitions use, from now on:
 * `sizes` (n of them, 1..7, each >= 1), or the defaults when n == 0.
 * Small clusters make most paths between a cluster's nodes run through
 * the rest of the graph, which is what the tests of those paths need.
 * Not thread-safe; cannot fail. */
void solver_test_cluster_sizes(const int32_t *sizes, int n);

/* Whether fp_lower_bound's clusters get the exact least-traffic search
 * first (on: the default) or only their ILPs (off), from now on: the
 * tests of the cluster ILPs need them to run.  Not thread-safe; cannot
 * fail. */
void solver_test_cluster_search(int on);

/* Whether fp_lower_bound merges pairs of clusters after its partitions
 * (on: the default; cluster_merge.h), from now on: the tests compare the
 * bound with and without.  Not thread-safe; cannot fail. */
void solver_test_cluster_merge(int on);

#endif /* FP_SOLVER_TEST_H */
