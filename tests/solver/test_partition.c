/*
 * test_partition.c -- the clusters of the decomposed traffic bound
 * (solver/bound/partition.c): every buffer that carries traffic in exactly one
 * cluster, N(S) within the size, the CSR lists and counts consistent,
 * clusters numbered in program order, the same answer every time (both
 * kinds: linked along fusible nodes and consecutive pieces); and
 * buffers far apart in program order but linked by a fusible node kept
 * together (what a cut into consecutive pieces loses).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/bound/partition.h"
#include "tests/testutil.h"

/* The first node that touches b as its writer, or as a reader of an
 * input; -1 when none (the buffer carries no traffic). */
static int32_t place(const fp_graph *g, int32_t b) {
  const fp_buffer *buf = fp_graph_buffer(g, b);
  if (buf->writer >= 0)
    return buf->writer;
  return buf->input && buf->n_readers > 0 ? buf->readers[0] : -1;
}

/* |N(S)| of cluster c, counted from the buffers' writers and readers. */
static int32_t members(const fp_graph *g, const solver_clusters *C, int32_t c) {
  int32_t n = fp_graph_node_count(g), count = 0;
  char *in = calloc((size_t)n + 1, 1);
  for (int32_t i = C->start[c]; i < C->start[c + 1]; i++) {
    const fp_buffer *buf = fp_graph_buffer(g, C->list[i]);
    for (int32_t j = -1; j < buf->n_readers; j++) {
      int32_t v = j < 0 ? buf->writer : buf->readers[j];
      if (v >= 0 && !in[v]) {
        in[v] = 1;
        count++;
      }
    }
  }
  free(in);
  return count;
}

/* Checks every property the bound relies on for one graph and size. */
static void check_partition(const fp_graph *g, int32_t size, bool ordered) {
  solver_clusters C, D;
  int32_t nb = fp_graph_buffer_count(g);
  ck_assert_int_eq(solver_clusters_make(g, size, ordered, &C), 0);
  ck_assert_int_eq(C.start[0], 0);
  int32_t listed = 0, last_place = -1;
  for (int32_t b = 0; b < nb; b++) {
    bool carries = place(g, b) >= 0;
    ck_assert_msg(carries ? C.of[b] >= 0 && C.of[b] < C.count : C.of[b] == -1,
                  "buffer %d: cluster %d of %d", b, C.of[b], C.count);
    listed += carries;
  }
  ck_assert_int_eq(C.start[C.count], listed);
  for (int32_t c = 0; c < C.count; c++) {
    int32_t k = C.start[c + 1] - C.start[c], first = INT32_MAX;
    ck_assert_int_gt(k, 0);
    for (int32_t i = C.start[c]; i < C.start[c + 1]; i++) {
      ck_assert_int_eq(C.of[C.list[i]], c);
      ck_assert(i == C.start[c] || C.list[i] > C.list[i - 1]);
      first = place(g, C.list[i]) < first ? place(g, C.list[i]) : first;
    }
    ck_assert_int_eq(C.nodes[c], members(g, &C, c));
    ck_assert_msg(C.nodes[c] <= size || k == 1,
                  "cluster %d: %d nodes in %d buffers, size %d", c, C.nodes[c],
                  k, size);
    ck_assert_int_ge(first, last_place); /* numbered in program order */
    last_place = first;
  }
  ck_assert_int_eq(solver_clusters_make(g, size, ordered, &D), 0);
  ck_assert_int_eq(D.count, C.count);
  ck_assert(memcmp(C.of, D.of, (size_t)nb * sizeof *C.of) == 0);
  solver_clusters_free(&C);
  solver_clusters_free(&D);
}

START_TEST(random_graphs_partitioned_properly) {
  tu_rng r = {(uint64_t)_i * 2654435761u + 3};
  fp_graph *g = tu_random_graph(&r, 1, 12);
  for (int32_t size = 1; size <= 8; size++)
    for (int ordered = 0; ordered < 2; ordered++)
      check_partition(g, size, ordered != 0);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(generated_graphs_partitioned_properly) {
  fp_graph *g = tu_generated(_i % 4, 300, (uint64_t)_i / 4 + 1);
  static const int32_t sizes[] = {2, 8, 12, 24};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
    for (int ordered = 0; ordered < 2; ordered++)
      check_partition(g, sizes[i], ordered != 0);
  fp_graph_destroy(g);
}
END_TEST

/* A forward pointwise node a writes t; ten extern steps later, d reads t
 * and writes its derivative dt, read by the last extern.  d's grouping
 * decides the traffic of both t and dt (with a, t is never written; with
 * the derivative, dt is), so a cluster holding t but not dt counts a
 * saving a plan can only have for one of them.  Cut into consecutive
 * pieces of 4 nodes, t and dt fall apart; the links keep them together. */
START_TEST(buffers_linked_by_a_fusible_node_stay_together) {
  char json[4096];
  int off =
      snprintf(json, sizeof json,
               "{'format': 'fuseplan.graph', 'version': 1, 'name': 'far',"
               " 'buffers': [{'name': 'x', 'bytes': 4096, 'input': true},"
               "  {'name': 't', 'bytes': 4096}, {'name': 'dt', 'bytes': 4096},"
               "  {'name': 'y', 'bytes': 64}");
  for (int i = 0; i < 10; i++)
    off += snprintf(json + off, sizeof json - (size_t)off,
                    ", {'name': 'e%d', 'bytes': 4096}", i);
  off += snprintf(json + off, sizeof json - (size_t)off,
                  "], 'nodes': [{'name': 'a', 'kind': 'pointwise', 'iter': "
                  "[1024, 1], 'reads': ['x'], 'writes': ['t']}");
  for (int i = 0; i < 10; i++) {
    char in[16]; /* n0 reads t, n1 reads e0, ... */
    snprintf(in, sizeof in, i ? "e%d" : "t", i - 1);
    off += snprintf(json + off, sizeof json - (size_t)off,
                    ", {'name': 'n%d', 'kind': 'extern', 'reads': ['%s'],"
                    " 'writes': ['e%d']}",
                    i, in, i);
  }
  snprintf(json + off, sizeof json - (size_t)off,
           ", {'name': 'd', 'kind': 'pointwise', 'iter': [1024, 1],"
           " 'reads': ['t'], 'writes': ['dt']},"
           " {'name': 'z', 'kind': 'extern', 'reads': ['dt', 'e9'],"
           " 'writes': ['y']}], 'outputs': ['y']}");
  fp_graph *g = tu_graph(json);
  solver_clusters C;
  ck_assert_int_eq(solver_clusters_make(g, 4, false, &C), 0);
  int32_t t = fp_graph_find_buffer(g, "t"), dt = fp_graph_find_buffer(g, "dt");
  ck_assert_int_eq(C.of[t], C.of[dt]);
  ck_assert_int_le(C.nodes[C.of[t]], 4);
  solver_clusters_free(&C);
  fp_graph_destroy(g);
}
END_TEST

/* solver_clusters_free on a zeroed struct and on NULL does nothing. */
START_TEST(free_is_safe_on_nothing) {
  solver_clusters C;
  memset(&C, 0, sizeof C);
  solver_clusters_free(&C);
  solver_clusters_free(NULL);
  ck_assert_ptr_null(C.of);
}
END_TEST

static Suite *partition_suite(void) {
  Suite *s = suite_create("solver/partition");
  TCase *tc = tcase_create("properties");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, random_graphs_partitioned_properly, 0, 300);
  tcase_add_loop_test(tc, generated_graphs_partitioned_properly, 0, 8);
  tcase_add_test(tc, buffers_linked_by_a_fusible_node_stay_together);
  tcase_add_test(tc, free_is_safe_on_nothing);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return tu_run(partition_suite());
}
