/*
 * graph_internal.h -- the layout of fp_graph, for model/ files only.
 *
 * While building, node read/write lists live in the growing arrays
 * `reads` / `writes`, appended in node order; fp_graph_finalize() points
 * each fp_node at its slice once the arrays stop moving.  Readers of buffers
 * are CSR (reader_off/readers).
 */
#ifndef FP_GRAPH_INTERNAL_H
#define FP_GRAPH_INTERNAL_H

#include "model/graph.h"
#include "model/strmap.h"

typedef struct fp_pair {
  int32_t u, v;
} fp_pair;

struct fp_graph {
  char *name;
  char *source;
  char *meta_json; /* the file's whole "meta" object, kept verbatim */
  int32_t max_fusion_size;
  bool finalized;
  fp_arena names;
  fp_strmap buffer_map, node_map;

  fp_buffer *buffers;
  int32_t n_buffers, cap_buffers;

  fp_node *nodes;
  int32_t n_nodes, cap_nodes;
  fp_read *reads;
  int32_t n_reads, cap_reads;
  int32_t *writes;
  int32_t n_writes, cap_writes;

  int32_t *outputs;
  int32_t n_outputs, cap_outputs;

  fp_pair *unfusible;
  int32_t n_unfusible, cap_unfusible;

  /* Linked pairs in call order; their linkers are appended to linked_via
   * (linked_at[i]: where pair i's start), and finalize points each via
   * there and builds linked_off / linked_by_u (n_nodes + 1: the pairs
   * of each first node u, CSR). */
  fp_linked *linked;
  int32_t n_linked, cap_linked, cap_linked_at;
  int32_t *linked_at;
  int32_t *linked_via;
  int32_t n_linked_via, cap_linked_via;
  int32_t *linked_off, *linked_by_u;

  /* In-place pairs, appended in call order with their node; finalize
   * sorts them by node (stable) and builds inplace_off (n_nodes + 1). */
  fp_inplace *inplace;
  int32_t *inplace_node;
  int32_t n_inplace, cap_inplace, cap_inplace_node;
  int32_t *inplace_off;
  /* Each pair's fused readers (fp_graph_inplace_fused_readers), built by
   * finalize: pair k's are fused[fused_off[k] .. fused_off[k + 1]). */
  int32_t *fused_off, *fused;
  /* Inputs written before the graph (fp_graph_set_input_written_before),
   * in call order, and finalize's per-buffer flags of them. */
  int32_t *prior;
  int32_t n_prior, cap_prior;
  bool *is_prior;

  int32_t *reader_off; /* n_buffers + 1 */
  int32_t *readers;
  uint64_t total_bytes;    /* running sum for FP_MAX_TOTAL_BYTES */
  uint64_t outside_bytes;  /* live outside the graph, in every step */
  uint64_t resident_bytes; /* computed by finalize, outside_bytes included */
};

/* Grows *arr (element size `elem`) so it holds at least `need` elements.
 * Returns 0, or -1 when out of memory / past FP_MAX_ITEMS. */
int fp_grow_array(void **arr, int32_t *cap, int64_t need, size_t elem);

#endif /* FP_GRAPH_INTERNAL_H */
