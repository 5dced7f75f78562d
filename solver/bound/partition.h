/*
 * partition.h -- the buffers of a graph cut into clusters for the
 * decomposed traffic bound (bound.c; docs/solver.md, "Bounds").
 *
 * Any partition gives a valid bound; a good one keeps together the
 * buffers whose traffic depends on the grouping of the same fusible
 * nodes, since the bound loses what two clusters each count as saved
 * through one node grouped two ways.
 */
#ifndef FP_SOLVER_PARTITION_H
#define FP_SOLVER_PARTITION_H

#include <stdbool.h>
#include <stdint.h>

#include "model/graph.h"

typedef struct solver_clusters {
  int32_t size;   /* most nodes in N(S) (a larger N(b) stands alone) */
  int32_t count;  /* clusters */
  int32_t *of;    /* buffer -> cluster (-1: a buffer nothing touches) */
  int32_t *nodes; /* |N(S)| of each cluster */
  int32_t *start; /* CSR: the buffers of cluster c are */
  int32_t *list;  /* list[start[c] .. start[c+1]), ascending */
} solver_clusters;

/* Cuts g's buffers into clusters of at most `size` nodes N(S) (writers
 * and readers), into *C (free with solver_clusters_free, also after a
 * failure): grown along fusible nodes, heaviest link first, then along
 * program order; with `ordered`, along program order only (consecutive
 * pieces of each connected component).  Clusters are numbered by their
 * first buffer in program order.  0, or -1 when out of memory. */
int solver_clusters_make(const fp_graph *g, int32_t size, bool ordered,
                         solver_clusters *C);

/* Frees what solver_clusters_make filled; safe on a zeroed struct. */
void solver_clusters_free(solver_clusters *C);

#endif
