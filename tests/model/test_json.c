/*
 * test_json.c -- the file formats: round trips, exact byte counts, gzip,
 * unknown fields, plan files with metrics and solver records, atomic
 * writes, and the loader's messages for a few representative errors (the
 * full bad-input corpus is exercised through the CLI).
 */
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/io.h"
#include "model/json.h"
#include "tests/testutil.h"

static const char graph_json[] =
    "{'format': 'fuseplan.graph', 'version': 1, 'name': 'g \\'q\\' \\\\ 1',"
    " 'max_fusion_size': 5, 'future_field': {'x': [1, 2]},"
    " 'buffers': [{'name': 'w', 'bytes': 9007199254740991, 'input': true},"
    "  {'name': 'x', 'bytes': 1024, 'input': true, 'freeable': true},"
    "  {'name': 'y', 'bytes': 1024}, {'name': 'z', 'bytes': 8}],"
    " 'nodes': ["
    "  {'name': 'n0', 'kind': 'pointwise', 'iter': [256, 1],"
    "   'reads': ['x', {'buffer': 'w', 'bytes': 4503599627370497}],"
    "   'writes': ['y'], 'note': 'ignored'},"
    "  {'name': 'n1', 'kind': 'reduction', 'iter': [2, 128], 'reads': ['y'],"
    "   'writes': ['z'], 'op': {'fn': 'sum', 'alpha': 0.125,"
    "   'index': ['row']}},"
    "  {'name': 'n2', 'kind': 'extern', 'reads': ['z'], 'writes': []}],"
    " 'outputs': ['z'], 'unfusible': [['n1', 'n0'], ['n0', 'n1']],"
    " 'meta': {'source': 'unit test', 'inductor_peak_bytes': 123}}";

/* The graph above, minus n2 (nodes must write something). */
static fp_graph *load_sample(void) {
  char *s = strdup(graph_json);
  char *cut = strstr(s, ",  {'name': 'n2'");
  ck_assert_ptr_nonnull(cut);
  char *end = strstr(cut, "}]");
  memmove(cut, end + 1, strlen(end + 1) + 1);
  fp_graph *g = tu_graph(s);
  free(s);
  return g;
}

START_TEST(round_trip_exact) {
  fp_graph *g = load_sample();
  ck_assert_str_eq(fp_graph_name(g), "g \"q\" \\ 1");
  ck_assert_int_eq(fp_graph_max_fusion_size(g), 5);
  ck_assert_str_eq(fp_graph_source(g), "unit test");
  ck_assert_uint_eq(fp_graph_buffer(g, 0)->bytes, 9007199254740991ull);
  ck_assert_uint_eq(fp_graph_node(g, 0)->reads[1].bytes, 4503599627370497ull);
  ck_assert_int_eq(fp_graph_node(g, 1)->reads[0].index, FP_INDEX_ROW);
  ck_assert_int_eq(fp_graph_node(g, 1)->op.fn, FP_OP_SUM);
  ck_assert(fp_graph_node(g, 1)->op.alpha == 0.125);
  ck_assert_int_eq(fp_graph_node(g, 0)->op.fn, FP_OP_NONE);
  ck_assert_int_eq(fp_graph_unfusible_count(g), 1); /* duplicates merged */
  char *a = fp_graph_to_json(g, 1, NULL);
  ck_assert_ptr_nonnull(strstr(a, "9007199254740991"));
  ck_assert_ptr_nonnull(strstr(a, "4503599627370497"));
  ck_assert_ptr_nonnull(strstr(a, "\"inductor_peak_bytes\":123"));
  fp_graph *g2 = NULL;
  fp_error err;
  ck_assert_msg(fp_graph_load_buffer(a, strlen(a), "a", &g2, &err) == FP_OK,
                "%s", err.msg);
  char *b = fp_graph_to_json(g2, 1, NULL);
  ck_assert_str_eq(a, b);
  char *c = fp_graph_to_json(g2, 0, NULL); /* compact form loads too */
  fp_graph *g3 = NULL;
  ck_assert_int_eq(fp_graph_load_buffer(c, strlen(c), "c", &g3, NULL), FP_OK);
  char *d = fp_graph_to_json(g3, 1, NULL);
  ck_assert_str_eq(a, d);
  free(a);
  free(b);
  free(c);
  free(d);
  fp_graph_destroy(g);
  fp_graph_destroy(g2);
  fp_graph_destroy(g3);
}
END_TEST

static void expect_load_error(const char *json, const char *fragment) {
  fp_graph *g = NULL;
  fp_error err;
  fp_error_clear(&err);
  fp_status st = tu_graph_try(json, &g, &err);
  ck_assert_int_eq(st, FP_EINPUT);
  ck_assert_ptr_null(g);
  ck_assert_msg(strncmp(err.msg, "test.json: ", 11) == 0, "no file name: %s",
                err.msg);
  ck_assert_msg(strstr(err.msg, fragment) != NULL, "'%s' lacks '%s'", err.msg,
                fragment);
  ck_assert_ptr_null(strchr(err.msg, '\n'));
}

START_TEST(load_errors) {
  expect_load_error(graph_json, "node 'n2': writes: empty");
  expect_load_error("{'format': 'fuseplan.graph', 'version': 1, 'buffers': [],"
                    " 'nodes': [",
                    "malformed JSON at line 1");
  expect_load_error("{'format': 'fuseplan.plan', 'version': 1}",
                    "format: expected \"fuseplan.graph\"");
  expect_load_error("{'format': 'fuseplan.graph', 'version': 5}",
                    "version: 5 is not supported (expected 1 to 4)");
  expect_load_error("{'format': 'fuseplan.graph', 'version': 1.5}",
                    "version: missing or not an integer");
  expect_load_error("{'format': 'fuseplan.graph', 'version': 1, 'nodes': []}",
                    "buffers: missing or not an array");
  expect_load_error("{'format': 'fuseplan.graph', 'version': 1, 'buffers':"
                    " [{'name': 'a', 'bytes': 1.5}], 'nodes': []}",
                    "buffer 'a': bytes: must be an integer");
  expect_load_error("{'format': 'fuseplan.graph', 'version': 1, 'buffers':"
                    " [{'name': 'a', 'bytes': 9007199254740992}], 'nodes': []}",
                    "buffer 'a': bytes");
  expect_load_error("{'format': 'fuseplan.graph', 'version': 1, 'buffers':"
                    " [{'name': 'a', 'bytes': -1}], 'nodes': []}",
                    "buffer 'a': bytes");
  expect_load_error("{'format': 'fuseplan.graph', 'version': 1, 'buffers':"
                    " [{'name': 'a', 'bytes': 4, 'input': true}], 'nodes':"
                    " [{'name': 'n', 'kind': 'pointwise', 'iter': [1, 1],"
                    " 'reads': ['b'], 'writes': ['a']}]}",
                    "node 'n': reads[0]: unknown buffer 'b'");
  expect_load_error("{'format': 'fuseplan.graph', 'version': 1, 'buffers':"
                    " [{'name': 'a', 'bytes': 4}], 'nodes':"
                    " [{'name': 'n', 'kind': 'pointwise', 'iter': [1, 1],"
                    " 'writes': ['a']}], 'outputs': ['q']}",
                    "outputs[0]: unknown buffer 'q'");
  expect_load_error("{'format': 'fuseplan.graph', 'version': 1, 'buffers':"
                    " [{'name': 'a', 'bytes': 4}], 'nodes':"
                    " [{'name': 'n', 'kind': 'fancy', 'writes': ['a']}]}",
                    "node 'n': kind: unknown");
  expect_load_error("{'format': 'fuseplan.graph', 'version': 1, 'buffers':"
                    " [{'name': 'a', 'bytes': 4}], 'nodes':"
                    " [{'name': 'n', 'kind': 'reduction', 'writes': ['a']}]}",
                    "node 'n': iter: missing");
  expect_load_error("{'format': 'fuseplan.graph', 'version': 1, 'buffers':"
                    " [{'name': 'a', 'bytes': 4}], 'nodes':"
                    " [{'name': 'n', 'kind': 'pointwise', 'iter': [1, 1],"
                    " 'writes': ['a'], 'op': {'fn': 'fill', 'index': ['x']}}]}",
                    "op.index: expected one entry per read");
}
END_TEST

/* A version-2 graph with bytes live outside it: the field round-trips
 * exactly; a graph without it is written as version 1 (older files stay
 * byte for byte); version 1 cannot carry it. */
static const char outside_json[] =
    "{'format': 'fuseplan.graph', 'version': 2, 'name': 'o',"
    " 'outside_live_bytes': 9007199254740000,"
    " 'buffers': [{'name': 'x', 'bytes': 64, 'input': true},"
    "  {'name': 'y', 'bytes': 64}],"
    " 'nodes': [{'name': 'n', 'kind': 'pointwise', 'iter': [16, 1],"
    "   'reads': ['x'], 'writes': ['y']}], 'outputs': ['y']}";

START_TEST(outside_live_bytes_round_trip) {
  fp_graph *g = tu_graph(outside_json), *g2 = NULL;
  ck_assert_uint_eq(fp_graph_outside_live_bytes(g), 9007199254740000ull);
  ck_assert_uint_eq(fp_graph_resident_bytes(g), 9007199254740000ull + 64);
  char *a = fp_graph_to_json(g, 1, NULL);
  ck_assert_ptr_nonnull(strstr(a, "\"version\": 2,"));
  ck_assert_ptr_nonnull(strstr(a, "\"outside_live_bytes\": 9007199254740000"));
  ck_assert_int_eq(fp_graph_load_buffer(a, strlen(a), "a", &g2, NULL), FP_OK);
  char *b = fp_graph_to_json(g2, 0, NULL);
  ck_assert_ptr_nonnull(strstr(b, "\"outside_live_bytes\": 9007199254740000"));
  fp_graph_destroy(g2);
  g2 = NULL;
  ck_assert_int_eq(fp_graph_load_buffer(b, strlen(b), "b", &g2, NULL), FP_OK);
  char *c = fp_graph_to_json(g2, 1, NULL);
  ck_assert_str_eq(a, c);
  free(a);
  free(b);
  free(c);
  fp_graph_destroy(g);
  fp_graph_destroy(g2);
  /* absent: 0, written as version 1 without the field */
  g = load_sample();
  ck_assert_uint_eq(fp_graph_outside_live_bytes(g), 0);
  a = fp_graph_to_json(g, 1, NULL);
  ck_assert_ptr_nonnull(strstr(a, "\"version\": 1,"));
  ck_assert_ptr_null(strstr(a, "outside_live_bytes"));
  free(a);
  fp_graph_destroy(g);
  expect_load_error("{'format': 'fuseplan.graph', 'version': 1,"
                    " 'outside_live_bytes': 5, 'buffers': [], 'nodes': []}",
                    "outside_live_bytes: needs version 2 (this is 1)");
  static const char *const bad[] = {"-1", "1.5", "'8'", "9007199254740992"};
  for (int i = 0; i < 4; i++) {
    char doc[200];
    snprintf(doc, sizeof doc,
             "{'format': 'fuseplan.graph', 'version': 2,"
             " 'outside_live_bytes': %s, 'buffers': [], 'nodes': []}",
             bad[i]);
    expect_load_error(doc,
                      "outside_live_bytes: expected an integer below 2^53");
  }
}
END_TEST

/* A version-4 graph with workspaces (docs/formats.md, node field
 * `workspace`): exact up to 2^53 - 1, written only when not 0 and then
 * as version 4 (a file without any stays at its lower version); an older
 * version cannot carry it; bad values name the file and the node. */
static const char workspace_fmt[] = /* version, n's workspace */
    "{'format': 'fuseplan.graph', 'version': %d, 'name': 'w',"
    " 'buffers': [{'name': 'x', 'bytes': 64, 'input': true},"
    "  {'name': 'y', 'bytes': 64}, {'name': 'z', 'bytes': 64}],"
    " 'nodes': [{'name': 'n', 'kind': 'extern', 'reads': ['x'],"
    "   'writes': ['y'], 'workspace': %s},"
    "  {'name': 'm', 'kind': 'pointwise', 'iter': [16, 1], 'reads': ['y'],"
    "   'writes': ['z'], 'workspace': 0}], 'outputs': ['z']}";

/* g written, loaded back and written again: the same text, returned
 * (the caller frees it). */
static char *written_twice(const fp_graph *g) {
  fp_graph *g2 = NULL;
  char *a = fp_graph_to_json(g, 1, NULL);
  ck_assert_int_eq(fp_graph_load_buffer(a, strlen(a), "a", &g2, NULL), FP_OK);
  char *b = fp_graph_to_json(g2, 1, NULL);
  ck_assert_str_eq(a, b);
  free(b);
  fp_graph_destroy(g2);
  return a;
}

START_TEST(workspace_round_trip) {
  char doc[600];
  snprintf(doc, sizeof doc, workspace_fmt, 4, "9007199254740991");
  fp_graph *g = tu_graph(doc);
  ck_assert_uint_eq(fp_graph_node(g, 0)->workspace, 9007199254740991ull);
  ck_assert_uint_eq(fp_graph_node(g, 1)->workspace, 0);
  char *a = written_twice(g);
  ck_assert_ptr_nonnull(strstr(a, "\"version\": 4,"));
  ck_assert_ptr_nonnull(strstr(a, "\"workspace\": 9007199254740991"));
  ck_assert_ptr_null(strstr(a, "\"workspace\": 0"));
  free(a);
  fp_graph_destroy(g);
  /* all 0: the lowest version that holds the rest (here 1) */
  snprintf(doc, sizeof doc, workspace_fmt, 4, "0");
  g = tu_graph(doc);
  a = fp_graph_to_json(g, 1, NULL);
  ck_assert_ptr_nonnull(strstr(a, "\"version\": 1,"));
  ck_assert_ptr_null(strstr(a, "workspace"));
  free(a);
  fp_graph_destroy(g);
  snprintf(doc, sizeof doc, workspace_fmt, 3, "8");
  expect_load_error(doc,
                    "test.json: node 'n': workspace: needs version 4 (this is "
                    "3)");
  static const char *const bad[] = {"-1", "1.5", "'8'", "9007199254740992",
                                    "true"};
  for (int i = 0; i < 5; i++) {
    snprintf(doc, sizeof doc, workspace_fmt, 4, bad[i]);
    expect_load_error(doc, "test.json: node 'n': workspace: expected an "
                           "integer of bytes in [0, 2^53)");
  }
}
END_TEST

/* A version-3 graph with loop nests (a reduction, a pointwise node over
 * its input space, a scalar-loop one): the field round-trips exactly; a
 * file of version 2 or less cannot carry it; bad nests are refused with
 * the node's name. */
static const char loop_fmt[] = /* version, the loop of r */
    "{'format': 'fuseplan.graph', 'version': %d, 'name': 'l',"
    " 'buffers': [{'name': 'x', 'bytes': 96, 'input': true},"
    "  {'name': 'y', 'bytes': 8}, {'name': 'z', 'bytes': 96},"
    "  {'name': 'w', 'bytes': 4}],"
    " 'nodes': [{'name': 'r', 'kind': 'reduction', 'iter': [2, 12],"
    "   'loop': %s, 'reads': ['x'], 'writes': ['y']},"
    "  {'name': 'p', 'kind': 'pointwise', 'iter': [24, 1],"
    "   'loop': [[2, 3, 4], []], 'reads': ['x', 'y'], 'writes': ['z']},"
    "  {'name': 's', 'kind': 'pointwise', 'iter': [1, 1],"
    "   'loop': [[], []], 'reads': ['y'], 'writes': ['w']}],"
    " 'outputs': ['z', 'w']}";

/* Loads loop_fmt with `version` and r's `loop`; expects the load to fail
 * with a message holding `msg`. */
static void expect_loop_error(int version, const char *loop, const char *msg) {
  char doc[1024];
  snprintf(doc, sizeof doc, loop_fmt, version, loop);
  expect_load_error(doc, msg);
}

START_TEST(loop_round_trip) {
  char doc[1024];
  snprintf(doc, sizeof doc, loop_fmt, 3, "[[2], [3, 4]]");
  fp_graph *g = tu_graph(doc), *g2 = NULL;
  const fp_node *r = fp_graph_node(g, 0), *s = fp_graph_node(g, 2);
  ck_assert(r->loop.present && r->loop.n == 1 && r->loop.rn == 2);
  ck_assert_uint_eq(r->loop.size[2], 4);
  ck_assert(s->loop.present && s->loop.n == 0 && s->loop.rn == 0);
  char *a = fp_graph_to_json(g, 1, NULL);
  ck_assert_ptr_nonnull(strstr(a, "\"version\": 3,"));
  ck_assert_ptr_nonnull(strstr(a, "\"loop\": [[2], [3, 4]]"));
  ck_assert_ptr_nonnull(strstr(a, "\"loop\": [[2, 3, 4], []]"));
  ck_assert_ptr_nonnull(strstr(a, "\"loop\": [[], []]"));
  ck_assert_int_eq(fp_graph_load_buffer(a, strlen(a), "a", &g2, NULL), FP_OK);
  char *b = fp_graph_to_json(g2, 1, NULL);
  ck_assert_str_eq(a, b);
  free(a);
  free(b);
  fp_graph_destroy(g);
  fp_graph_destroy(g2);
  expect_loop_error(2, "[[2], [3, 4]]",
                    "test.json: node 'r': loop: needs version 3 (this is 2)");
  expect_loop_error(1, "[[2], [3, 4]]", "loop: needs version 3 (this is 1)");
  expect_loop_error(3, "[[2], [3, 5]]",
                    "node 'r': loop: the reduction sizes do not multiply to "
                    "rnumel");
  expect_loop_error(3, "[[4], [3, 2]]",
                    "node 'r': loop: the loop sizes do not multiply to numel");
  expect_loop_error(3, "[[2], []]",
                    "node 'r': loop: a reduction needs reduction sizes");
  expect_loop_error(3, "[[2], [0, 4]]", "node 'r': loop: expected [[sizes]");
  expect_loop_error(3, "[[2], [1, 1, 1, 1, 1, 1, 1, 12]]",
                    "node 'r': loop: expected [[sizes], [reduction sizes]], "
                    "at most 8 positive integers");
  expect_loop_error(3, "[2, 12]", "node 'r': loop: expected [[sizes]");
}
END_TEST

/* g is written as version 3 with `fragment` in it, loads back to the
 * same text, and is copied (fp_graph_copy_open, finalized: returned). */
static fp_graph *v3_round_trip(const fp_graph *g, const char *fragment) {
  fp_graph *g2 = NULL;
  char *a = fp_graph_to_json(g, 1, NULL);
  ck_assert_ptr_nonnull(strstr(a, "\"version\": 3,"));
  ck_assert_msg(strstr(a, fragment) != NULL, "%s lacks %s", a, fragment);
  ck_assert_int_eq(fp_graph_load_buffer(a, strlen(a), "a", &g2, NULL), FP_OK);
  char *b = fp_graph_to_json(g2, 1, NULL);
  ck_assert_str_eq(a, b);
  free(a);
  free(b);
  fp_graph_destroy(g2);
  g2 = fp_graph_copy_open(g, NULL);
  ck_assert_int_eq(fp_graph_finalize(g2, NULL), FP_OK);
  return g2;
}

/* Version 3's field linked: pairs round-trip (u before v, linkers
 * ascending and merged), the file is version 3, copies keep them, an older
 * version cannot carry them, and bad entries name the file and pair. */
static void expect_linked_error(int ver, const char *linked, const char *msg) {
  char doc[600];
  snprintf(doc, sizeof doc,
           "{'format': 'fuseplan.graph', 'version': %d,"
           " 'buffers': [{'name': 'x', 'bytes': 4, 'input': true},"
           "  {'name': 'y', 'bytes': 4}, {'name': 'z', 'bytes': 4}],"
           " 'nodes': [{'name': 'a', 'kind': 'pointwise', 'iter': [1, 1],"
           "   'reads': ['x'], 'writes': ['y']},"
           "  {'name': 'b', 'kind': 'pointwise', 'iter': [1, 1],"
           "   'reads': ['x'], 'writes': ['z']}], 'linked': %s}",
           ver, linked);
  expect_load_error(doc, msg);
}

START_TEST(linked_round_trip) {
  fp_graph *g =
      tu_graph("{'format': 'fuseplan.graph', 'version': 3, 'name': 'lk',"
               " 'buffers': [{'name': 'x', 'bytes': 4, 'input': true},"
               "  {'name': 'y', 'bytes': 4}, {'name': 'z', 'bytes': 4},"
               "  {'name': 'w', 'bytes': 4}],"
               " 'nodes': [{'name': 'a', 'kind': 'pointwise', 'iter': [1, 1],"
               "   'reads': ['x'], 'writes': ['y']},"
               "  {'name': 'b', 'kind': 'pointwise', 'iter': [1, 1],"
               "   'reads': ['x'], 'writes': ['z']},"
               "  {'name': 'c', 'kind': 'pointwise', 'iter': [1, 1],"
               "   'reads': ['y', 'z'], 'writes': ['w']}],"
               " 'linked': [['b', 'a', ['c', 'c']]]}");
  ck_assert_int_eq(fp_graph_linked_count(g), 1);
  const fp_linked *l = fp_graph_linked(g, 0);
  ck_assert(l->u == 0 && l->v == 1 && l->n_via == 1 && l->via[0] == 2);
  fp_graph *g2 = v3_round_trip(g, "\"linked\": [\n  [\"a\", \"b\", [\"c\"]]]");
  ck_assert_int_eq(fp_graph_linked_count(g2), 1); /* copies keep them */
  int32_t group[] = {1, 0}, with[] = {2, 0, 1};
  ck_assert_int_eq(fp_graph_linked_broken(g2, group, 2), 0);
  ck_assert_int_eq(fp_graph_linked_broken(g2, with, 3), -1);
  ck_assert_int_eq(fp_graph_linked_broken(g2, group, 1), -1);
  fp_graph_destroy(g2);
  fp_graph_destroy(g);
  expect_linked_error(2, "[['a', 'b', ['a']]]",
                      "linked: needs version 3 (this is 2)");
  expect_linked_error(3, "[['a', 'b', ['a']]]",
                      "linked: pair 'a', 'b' lists 'a' as its own linker");
  expect_linked_error(3, "[['a', 'b', []]]",
                      "linked: pair 'a', 'b' has no linker");
  expect_linked_error(3, "[['a', 'q', ['b']]]", "linked[0]: unknown node 'q'");
  expect_linked_error(3, "[['a', 'a', ['b']]]",
                      "linked: pair names node 'a' twice");
  expect_linked_error(3, "[['a', 'b']]", "linked[0]: expected [node, node,");
  expect_linked_error(3, "{}", "linked: expected an array");
}
END_TEST

/* Version 3's node field inplace: pairs round-trip in listed order, the
 * file is written as version 3 only when some node has pairs, an older
 * version cannot carry it, and bad pairs name the file, node and buffers. */
static const char inplace_json[] =
    "{'format': 'fuseplan.graph', 'version': 3, 'name': 'ip',"
    " 'buffers': [{'name': 'x', 'bytes': 64, 'input': true, 'freeable': true},"
    "  {'name': 'y', 'bytes': 64}, {'name': 'z', 'bytes': 64}],"
    " 'nodes': [{'name': 'n', 'kind': 'pointwise', 'iter': [16, 1],"
    "   'reads': ['x'], 'writes': ['y', 'z'],"
    "   'inplace': [['x', 'z'], ['x', 'y']]}], 'outputs': ['y', 'z']}";

/* inplace_json with node n's inplace value replaced by `pairs` and its
 * version by `ver`. */
static void expect_inplace_error(int ver, const char *pairs, const char *msg) {
  char doc[600];
  snprintf(doc, sizeof doc,
           "{'format': 'fuseplan.graph', 'version': %d, 'name': 'ip',"
           " 'buffers': [{'name': 'x', 'bytes': 64, 'input': true},"
           "  {'name': 'y', 'bytes': 64}, {'name': 'w', 'bytes': 8}],"
           " 'nodes': [{'name': 'n', 'kind': 'pointwise', 'iter': [16, 1],"
           "   'reads': ['x'], 'writes': ['y', 'w'], 'inplace': %s}]}",
           ver, pairs);
  expect_load_error(doc, msg);
}

START_TEST(inplace_round_trip) {
  fp_graph *g = tu_graph(inplace_json), *g2 = NULL;
  int32_t m;
  const fp_inplace *p = fp_graph_inplace(g, 0, &m);
  ck_assert_int_eq(m, 2);
  ck_assert_int_eq(fp_graph_inplace_count(g), 2);
  ck_assert_int_eq(p[0].read, fp_graph_find_buffer(g, "x"));
  ck_assert_int_eq(p[0].write, fp_graph_find_buffer(g, "z"));
  ck_assert_int_eq(p[1].write, fp_graph_find_buffer(g, "y"));
  g2 = v3_round_trip(g, "\"inplace\": [[\"x\", \"z\"], [\"x\", \"y\"]]");
  ck_assert_int_eq(fp_graph_inplace_count(g2), 2); /* copies keep them */
  fp_graph_destroy(g2);
  fp_graph_destroy(g);
  expect_inplace_error(2, "[['x', 'y']]",
                       "test.json: node 'n': inplace: needs version 3 (this is "
                       "2)");
  expect_inplace_error(3, "[['y', 'x']]",
                       "test.json: node 'n': inplace: 'y' is not a buffer it "
                       "reads");
  expect_inplace_error(3, "[['x', 'x']]",
                       "node 'n': inplace: 'x' is not a buffer it writes");
  expect_inplace_error(3, "[['x', 'w']]",
                       "node 'n': inplace: 'x' (64 bytes) and 'w' (8 bytes) "
                       "differ in size");
  expect_inplace_error(3, "[['x', 'y'], ['x', 'y']]",
                       "node 'n': inplace: pair ['x', 'y'] listed twice");
  expect_inplace_error(3, "[['x', 'q']]",
                       "node 'n': inplace[0]: unknown buffer 'q'");
  expect_inplace_error(3, "[['x']]",
                       "node 'n': inplace[0]: expected [read_buffer, "
                       "written_buffer]");
  expect_inplace_error(3, "{}", "node 'n': inplace: expected an array");
  /* a chain, not a star: (x, y) shares x with (x, z) and y with (u, y) */
  expect_load_error("{'format': 'fuseplan.graph', 'version': 3,"
                    " 'buffers': [{'name': 'x', 'bytes': 8, 'input': true},"
                    "  {'name': 'u', 'bytes': 8, 'input': true},"
                    "  {'name': 'y', 'bytes': 8}, {'name': 'z', 'bytes': 8}],"
                    " 'nodes': [{'name': 'n', 'kind': 'extern',"
                    "  'reads': ['x', 'u'], 'writes': ['y', 'z'],"
                    "  'inplace': [['x', 'z'], ['x', 'y'], ['u', 'y']]}]}",
                    "node 'n': inplace: pair ['x', 'y'] shares its read "
                    "with one pair and its written buffer with another");
}
END_TEST

START_TEST(deep_nesting_rejected) {
  /* cJSON's compiled-in nesting limit is 1000 levels. */
  size_t depth = 1500;
  char *s = malloc(2 * depth + 1);
  memset(s, '[', depth);
  memset(s + depth, ']', depth);
  s[2 * depth] = '\0';
  fp_graph *g = NULL;
  fp_error err;
  ck_assert_int_eq(fp_graph_load_buffer(s, 2 * depth, "deep", &g, &err),
                   FP_EINPUT);
  ck_assert_ptr_nonnull(
      strstr(err.msg, "deep: malformed JSON: nested deeper than 1000 levels"));
  free(s);
}
END_TEST

START_TEST(plan_round_trip) {
  fp_graph *g = load_sample();
  fp_plan *p = tu_plan(g, "n0 | n1");
  fp_metrics m = tu_eval(g, p);
  fp_solver_info *si = fp_plan_solver(p);
  strcpy(si->method, "ilp");
  strcpy(si->status, "optimal");
  si->objective = 12345;
  si->bound = 12000.5;
  si->gap = 0.1;
  si->nodes = 42;
  char *a = fp_plan_to_json(p, g, &m, 1, NULL);
  ck_assert_ptr_nonnull(strstr(a, "\"traffic_bytes\": "));
  fp_plan *q = NULL;
  fp_error err;
  ck_assert_msg(fp_plan_load_buffer(a, strlen(a), "p", g, &q, &err) == FP_OK,
                "%s", err.msg);
  ck_assert_int_eq(fp_plan_group_count(q), 2);
  const fp_solver_info *qi = fp_plan_solver_const(q);
  ck_assert_str_eq(qi->method, "ilp");
  ck_assert_str_eq(qi->status, "optimal");
  ck_assert(qi->objective == 12345 && qi->bound == 12000.5 && qi->gap == 0.1);
  ck_assert_int_eq(qi->nodes, 42);
  ck_assert_int_eq(qi->rows, -1);
  /* A record without the second level and stop reason (older files)
   * loads with them unset, and writes none. */
  ck_assert(isnan(qi->objective2) && isnan(qi->bound2) && isnan(qi->gap2));
  ck_assert_str_eq(qi->stop_reason, "");
  ck_assert_ptr_null(strstr(a, "stop_reason"));
  const fp_plan_claims *c = fp_plan_claims_get(q);
  ck_assert(c->traffic_bytes == (double)m.traffic_bytes);
  ck_assert(c->peak_bytes == (double)m.peak_bytes); /* above 2^53 here */
  ck_assert(c->kernels == 2);
  ck_assert(isnan(fp_plan_claims_get(p)->peak_bytes)); /* built here */
  char *b = fp_plan_to_json(q, g, &m, 1, NULL);
  ck_assert_str_eq(a, b);
  free(a);
  free(b);
  /* ... and with them, they round-trip. */
  si->objective2 = 5000;
  si->bound2 = 4990.5;
  si->gap2 = 0.0019;
  strcpy(si->stop_reason, "gap");
  a = fp_plan_to_json(p, g, &m, 1, NULL);
  fp_plan_destroy(q);
  q = NULL;
  ck_assert_int_eq(fp_plan_load_buffer(a, strlen(a), "p", g, &q, &err), FP_OK);
  qi = fp_plan_solver_const(q);
  ck_assert(qi->objective2 == 5000 && qi->bound2 == 4990.5 &&
            qi->gap2 == 0.0019);
  ck_assert_str_eq(qi->stop_reason, "gap");
  free(a);
  fp_plan_destroy(p);
  fp_plan_destroy(q);
  fp_graph_destroy(g);
}
END_TEST

static void expect_plan_error(const fp_graph *g, const char *json,
                              const char *fragment) {
  char *s = strdup(json);
  for (char *c = s; *c; c++)
    *c = *c == '\'' ? '"' : *c;
  fp_plan *p = NULL;
  fp_error err;
  ck_assert_int_eq(fp_plan_load_buffer(s, strlen(s), "p.json", g, &p, &err),
                   FP_EINPUT);
  ck_assert_ptr_null(p);
  ck_assert_msg(strstr(err.msg, fragment) && strstr(err.msg, "p.json: "),
                "'%s' lacks '%s'", err.msg, fragment);
  free(s);
}

START_TEST(plan_errors) {
  fp_graph *g = load_sample();
  expect_plan_error(g,
                    "{'format': 'fuseplan.plan', 'version': 1, 'groups':"
                    " [['n0'], ['nX']]}",
                    "groups[1][0]: unknown node 'nX'");
  expect_plan_error(g,
                    "{'format': 'fuseplan.plan', 'version': 1, 'graph':"
                    " 'other', 'groups': []}",
                    "plan is for graph 'other'");
  expect_plan_error(g,
                    "{'format': 'fuseplan.plan', 'version': 1, 'groups':"
                    " ['n0']}",
                    "groups[0]: expected an array");
  expect_plan_error(g, "{'format': 'fuseplan.plan', 'version': 1}",
                    "groups: missing");
  expect_plan_error(g,
                    "{'format': 'fuseplan.plan', 'version': 1, 'groups':"
                    " [], 'metrics': {'peak_bytes': -5}}",
                    "metrics.peak_bytes: must be a non-negative integer");
  /* illegal but well-formed plans load: legality is fp_plan_check's job */
  const char *dup = "{\"format\": \"fuseplan.plan\", \"version\": 1, "
                    "\"groups\": [[\"n0\", \"n0\"], []]}";
  fp_plan *p = NULL;
  ck_assert_int_eq(fp_plan_load_buffer(dup, strlen(dup), "d", g, &p, NULL),
                   FP_OK);
  ck_assert_int_eq(fp_plan_group_count(p), 2);
  ck_assert_int_eq(fp_plan_check(g, p, 0, NULL), FP_EILLEGAL);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* Loads a one-buffer graph whose bytes are written `lit`; the value, or
 * -1 when the loader refuses it. */
static int64_t bytes_as_loaded(const char *lit) {
  char json[512];
  snprintf(json, sizeof json,
           "{'format': 'fuseplan.graph', 'version': 1, 'buffers':"
           " [{'name': 'a', 'bytes': %s, 'input': true}], 'nodes': []}",
           lit);
  fp_graph *g = NULL;
  fp_error err;
  if (tu_graph_try(json, &g, &err) != FP_OK) {
    ck_assert_msg(strstr(err.msg, "buffer 'a': bytes: must be an integer"),
                  "%s: %s", lit, err.msg);
    return -1;
  }
  int64_t v = (int64_t)fp_graph_buffer(g, 0)->bytes;
  fp_graph_destroy(g);
  return v;
}

/* Byte counts are the literal's exact decimal value, never a rounded
 * double: any spelling of an integer loads, any fraction is refused. */
START_TEST(exact_integers) {
  static const struct {
    const char *lit;
    int64_t want;
  } cases[] = {
      {"4096", 4096},
      {"4096.0", 4096},
      {"4.096e3", 4096},
      {"4.096E+3", 4096},
      {"40960e-1", 4096},
      {"0.4096e4", 4096},
      {"0", 0},
      {"-0", 0},
      {"0.0e5", 0},
      {"0e-7", 0},
      {"9007199254740991", 9007199254740991},
      {"9007199254740991.000", 9007199254740991},
      {"9.007199254740991e15", 9007199254740991},
      {"90071992547409910e-1", 9007199254740991},
      {"4096.0000000000001", -1}, /* 4096.0 as a double */
      {"4095.9999999999999", -1},
      {"1.0000000000000001e3", -1},
      {"9007199254740990.5", -1}, /* rounds to an even integer */
      {"9007199254740992", -1},   /* 2^53 */
      {"9007199254740993", -1},   /* reads as 2^53 */
      {"9.007199254740992e15", -1},
      {"1e16", -1},
      {"1e999", -1},
      {"1e-999", -1},
      {"0.5", -1},
      {"-1", -1},
      {"-0.5", -1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    ck_assert_msg(bytes_as_loaded(cases[i].lit) == cases[i].want,
                  "%s: got %lld, want %lld", cases[i].lit,
                  (long long)bytes_as_loaded(cases[i].lit),
                  (long long)cases[i].want);
  /* The same for a per-read byte count, numel, the version, a plan's
   * metrics (which may pass 2^53: only integrality is checked). */
  expect_load_error(
      "{'format': 'fuseplan.graph', 'version': 1, 'buffers': [{'name': 'a',"
      " 'bytes': 8, 'input': true}, {'name': 'b', 'bytes': 8}], 'nodes':"
      " [{'name': 'n', 'kind': 'pointwise', 'iter': [2, 1], 'reads':"
      " [{'buffer': 'a', 'bytes': 4.0000000000000001}], 'writes': ['b']}]}",
      "node 'n': reads[0]: bytes: must be an integer");
  expect_load_error(
      "{'format': 'fuseplan.graph', 'version': 1, 'buffers': [{'name': 'a',"
      " 'bytes': 8}], 'nodes': [{'name': 'n', 'kind': 'pointwise', 'iter':"
      " [2.0000000000000001, 1], 'writes': ['a']}]}",
      "node 'n': iter: invalid");
  expect_load_error(
      "{'format': 'fuseplan.graph', 'version': 1.0000000000000001,"
      " 'buffers': [], 'nodes': []}",
      "version: missing or not an integer");
  fp_graph *g = load_sample();
  expect_plan_error(g,
                    "{'format': 'fuseplan.plan', 'version': 1, 'groups': [],"
                    " 'metrics': {'traffic_bytes': 24448.000000000001}}",
                    "metrics.traffic_bytes: must be a non-negative integer");
  const char *big = "{\"format\": \"fuseplan.plan\", \"version\": 1, "
                    "\"groups\": [], \"metrics\": {\"traffic_bytes\": 1.5e20,"
                    " \"kernels\": 0.0}}";
  fp_plan *p = NULL;
  fp_error err;
  ck_assert_int_eq(fp_plan_load_buffer(big, strlen(big), "p", g, &p, &err),
                   FP_OK);
  ck_assert(fp_plan_claims_get(p)->traffic_bytes == 1.5e20);
  ck_assert(fp_plan_claims_get(p)->kernels == 0);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* A graph with one buffer named by the JSON string text `name` (quotes
 * included) and `extra` members. */
static fp_status load_named(const char *name, const char *extra,
                            fp_error *err) {
  char json[512];
  snprintf(json, sizeof json,
           "{\"format\": \"fuseplan.graph\", \"version\": 1,%s \"buffers\":"
           " [{\"name\": %s, \"bytes\": 4, \"input\": true}], \"nodes\": []}",
           extra, name);
  fp_graph *g = NULL;
  fp_status st = fp_graph_load_buffer(json, strlen(json), "s.json", &g, err);
  fp_graph_destroy(g);
  return st;
}

static void expect_string_error(const char *name, const char *extra,
                                const char *fragment) {
  fp_error err;
  ck_assert_int_eq(load_named(name, extra, &err), FP_EINPUT);
  ck_assert_msg(strncmp(err.msg, "s.json: ", 8) == 0 &&
                    strstr(err.msg, fragment),
                "%s: '%s' lacks '%s'", name, err.msg, fragment);
}

/* Every string, name or not, is JSON that fuseplan can write back: no
 * \u0000 (cJSON would cut the name there), no raw control bytes, only
 * UTF-8. */
START_TEST(strings_checked) {
  fp_error err;
  expect_string_error("\"a\\u0000b\"", "",
                      "buffers[0]: name: string holds a NUL character "
                      "(\\u0000), at line 1, column");
  expect_string_error("\"a\tb\"", "",
                      "buffers[0]: name: string holds a raw control "
                      "character (0x09)");
  const char *bad_utf8[] = {"\"\xff\"",
                            "\"a\x80\"",
                            "\"\xc0\xaf\"",
                            "\"\xc1\xbf\"",
                            "\"\xe0\x80\xaf\"",
                            "\"\xed\xa0\x80\"",
                            "\"\xf4\x90\x80\x80\"",
                            "\"\xf5\x80\x80\x80\"",
                            "\"\xe2\x82\""};
  for (size_t i = 0; i < sizeof bad_utf8 / sizeof *bad_utf8; i++)
    expect_string_error(bad_utf8[i], "",
                        "buffers[0]: name: string is not valid UTF-8");
  /* Keys, other members, nested values, unknown fields. */
  expect_string_error("\"a\"", " \"x\\u0000\": 1,",
                      "top level: a key holds a NUL character");
  expect_string_error("\"a\"", " \"extra\": [\"x\", {\"y\": \"\\u0000\"}],",
                      "extra[1].y: string holds a NUL character");
  expect_string_error("\"a\"", " \"meta\": {\"source\": \"\xfe\"},",
                      "meta: source: string is not valid UTF-8");
  expect_string_error("\"a\"", " \"name\": \"g\\u0000\",",
                      "name: string holds a NUL character");
  /* Valid UTF-8 and escapes load and keep every byte. */
  const char *good = "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbf"
                     "\xf4\x8f\xbf\xbf \\u00e9 \\\\u0000 \\ud83d\\ude00\"";
  char json[512];
  snprintf(json, sizeof json,
           "{\"format\": \"fuseplan.graph\", \"version\": 1, \"buffers\":"
           " [{\"name\": %s, \"bytes\": 4, \"input\": true}], \"nodes\": []}",
           good);
  fp_graph *g = NULL;
  ck_assert_msg(fp_graph_load_buffer(json, strlen(json), "s.json", &g, &err) ==
                    FP_OK,
                "%s", err.msg);
  ck_assert_str_eq(fp_graph_buffer(g, 0)->name,
                   "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbf"
                   "\xf4\x8f\xbf\xbf \xc3\xa9 \\u0000 \xf0\x9f\x98\x80");
  fp_graph_destroy(g);
  /* A lone surrogate escape is not JSON text (cJSON refuses it). */
  ck_assert_int_eq(load_named("\"\\ud800\"", "", &err), FP_EINPUT);
  ck_assert_ptr_nonnull(strstr(err.msg, "malformed JSON"));
  /* Plans: the path names the group and the place in it. */
  g = load_sample();
  expect_plan_error(g,
                    "{'format': 'fuseplan.plan', 'version': 1, 'groups':"
                    " [['n0'], ['n1', 'n0\\u0000x']]}",
                    "p.json: groups[1][1]: string holds a NUL character");
  fp_graph_destroy(g);
}
END_TEST

/* Loads `json` (len bytes) and expects "malformed JSON at line 1". */
static void expect_malformed(const char *json, size_t len) {
  fp_graph *g = NULL;
  fp_error err;
  ck_assert_msg(fp_graph_load_buffer(json, len, "b.json", &g, &err) ==
                    FP_EINPUT,
                "accepted: %s", json);
  ck_assert_msg(strstr(err.msg, "b.json: malformed JSON at line 1"), "%s: %s",
                json, err.msg);
}

/* Only JSON loads: the scanner that splits the big arrays matches bracket
 * kinds, and what cJSON is lenient about (numbers as strtod reads them,
 * any byte up to 0x20 as a blank) is refused. */
START_TEST(malformed_json_rejected) {
  const char *bad[] = {
      "{'format':'fuseplan.graph','version':1,'buffers':[],'nodes':[}}",
      "{'format':'fuseplan.graph','version':1,'buffers':[},'nodes':[]}",
      "{'format':'fuseplan.graph','version':1,'buffers':[{'name': 'a',"
      " 'bytes': 1]],'nodes':[]}",
      "{'format':'fuseplan.graph','version':1,'buffers':[],'nodes':[],"
      "'extra':[{]}}",
      "{'format':'fuseplan.graph','version':1,'buffers':[{'name': 'a',"
      " 'bytes': 01}],'nodes':[]}",
      "{'format':'fuseplan.graph','version':1,'buffers':[{'name': 'a',"
      " 'bytes': 1.}],'nodes':[]}",
      "{'format':'fuseplan.graph','version':1,'buffers':[{'name': 'a',"
      " 'bytes': 1.e3}],'nodes':[]}",
      "{'format':'fuseplan.graph','version':1,'buffers':[],'nodes':[],"
      "'meta':{'x': -.5}}",
      "{'format':'fuseplan.graph','version':01,'buffers':[],'nodes':[]}",
      "{'format':'fuseplan.graph','version':1,'buffers':[{'name': 'a',\v"
      " 'bytes': 1}],'nodes':[]}",
      "{'format':'fuseplan.graph','version':1,'buffers':[],'nodes':[],"
      "'extra':[1,\x01 2]}"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char *s = strdup(bad[i]);
    for (char *c = s; *c; c++)
      *c = *c == '\'' ? '"' : *c;
    expect_malformed(s, strlen(s));
    free(s);
  }
  /* A NUL byte cJSON would take for a blank, inside an element. */
  static const char nul[] = "{\"format\":\"fuseplan.graph\",\"version\":1,"
                            "\"buffers\":[{\"name\":\"a\",\0\"bytes\":1}],"
                            "\"nodes\":[]}";
  expect_malformed(nul, sizeof nul - 1);
  const char *ok =
      "{\"format\":\"fuseplan.graph\",\"version\":1,\"buffers\":[],"
      "\"nodes\":[],\"extra\":[{\"a\": [[], {}]}, \"]}\", 0, -0,"
      " 0.5, -1.25e-3, 1E+2, 10, 0e0]}";
  fp_graph *g = NULL;
  fp_error err;
  ck_assert_msg(fp_graph_load_buffer(ok, strlen(ok), "b.json", &g, &err) ==
                    FP_OK,
                "%s", err.msg);
  fp_graph_destroy(g);
}
END_TEST

/* Counts directory entries whose name starts with `prefix`. */
static int count_entries(const char *dir, const char *prefix) {
  DIR *d = opendir(dir);
  ck_assert_ptr_nonnull(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
  closedir(d);
  return n;
}

START_TEST(files_gzip_and_atomic) {
  char dir[] = "/tmp/fp_test_json_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char plain[256], gz[256];
  snprintf(plain, sizeof plain, "%s/g.json", dir);
  snprintf(gz, sizeof gz, "%s/g.json.gz", dir);
  fp_graph *g = load_sample(), *a = NULL, *b = NULL;
  fp_error err;
  ck_assert_int_eq(fp_graph_save_file(g, plain, &err), FP_OK);
  ck_assert_int_eq(fp_graph_save_file(g, gz, &err), FP_OK);
  FILE *f = fopen(gz, "rb");
  unsigned char magic[2] = {0};
  ck_assert_int_eq(fread(magic, 1, 2, f), 2);
  fclose(f);
  ck_assert(magic[0] == 0x1f && magic[1] == 0x8b);
  ck_assert_int_eq(fp_graph_load_file(plain, &a, &err), FP_OK);
  ck_assert_int_eq(fp_graph_load_file(gz, &b, &err), FP_OK);
  char *ja = fp_graph_to_json(a, 1, NULL), *jb = fp_graph_to_json(b, 1, NULL);
  ck_assert_str_eq(ja, jb);
  ck_assert_int_eq(count_entries(dir, "g.json"), 2); /* no temp files */
  /* corrupt gzip: an input error naming the file */
  f = fopen(gz, "r+b");
  fseek(f, 20, SEEK_SET);
  fputs("garbage-garbage-garbage", f);
  fclose(f);
  fp_graph *c = NULL;
  ck_assert_int_ne(fp_graph_load_file(gz, &c, &err), FP_OK);
  ck_assert_ptr_nonnull(strstr(err.msg, gz));
  /* missing file, unwritable target */
  ck_assert_int_eq(fp_graph_load_file("/nonexistent/g.json", &c, &err), FP_EIO);
  ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/g.json: cannot open"));
  ck_assert_int_eq(fp_graph_save_file(g, "/nonexistent/dir/g.json", &err),
                   FP_EIO);
  ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/dir/g.json"));
  free(ja);
  free(jb);
  unlink(plain);
  unlink(gz);
  rmdir(dir);
  fp_graph_destroy(g);
  fp_graph_destroy(a);
  fp_graph_destroy(b);
}
END_TEST

/* The raw bytes of a file (no gzip decoding), NUL-terminated; *len gets
 * the length.  Fails the test when the file cannot be read. */
static char *raw_bytes(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "%s: cannot open", path);
  ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
  long n = ftell(f);
  ck_assert_int_ge(n, 0);
  rewind(f);
  char *buf = malloc((size_t)n + 1);
  ck_assert_ptr_nonnull(buf);
  ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
  buf[n] = 0;
  fclose(f);
  *len = (size_t)n;
  return buf;
}

/* Saves `g` (and, when p is not NULL, then p) over `path` while
 * RLIMIT_FSIZE caps new file data at 16 bytes: the temporary file is
 * created, the write stops partway with EFBIG (the limit binds root too,
 * unlike permissions) and the save fails.  Returns the graph save's
 * status (its error in *err); *pst gets the plan save's (FP_OK without
 * a plan). */
static fp_status save_under_fsize_limit(const fp_graph *g, const fp_plan *p,
                                        const char *path, fp_error *err,
                                        fp_status *pst) {
  struct rlimit old, low;
  ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
  low = old;
  low.rlim_cur = 16;
  void (*old_sig)(int) = signal(SIGXFSZ, SIG_IGN);
  ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &low), 0);
  fp_status st = fp_graph_save_file(g, path, err);
  fp_error perr;
  *pst = p ? fp_plan_save_file(p, g, NULL, path, &perr) : FP_OK;
  ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
  signal(SIGXFSZ, old_sig);
  return st;
}

/* Atomicity: a save that fails after its temporary file exists (a write
 * cut off midway; a rename over a directory) leaves the old target byte
 * for byte and no temporary file behind, for plain and gzip targets. */
START_TEST(failed_write_keeps_old_file) {
  char dir[] = "/tmp/fp_test_json_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  fp_graph *old = tu_graph(tu_chain3_json), *g = load_sample();
  fp_plan *p = tu_plan(g, "n0 | n1");
  static const char *const names[] = {"plain.json", "zipped.json.gz"};
  char path[256];
  fp_error err;
  for (int k = 0; k < 2; k++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[k]);
    ck_assert_int_eq(fp_graph_save_file(old, path, &err), FP_OK);
    size_t len0, len1;
    char *before = raw_bytes(path, &len0);
    fp_status pst;
    fp_status st =
        save_under_fsize_limit(g, k == 0 ? p : NULL, path, &err, &pst);
    ck_assert_int_eq(st, FP_EIO);
    ck_assert_ptr_nonnull(strstr(err.msg, "cannot write"));
    ck_assert_ptr_nonnull(strstr(err.msg, path));
    if (k == 0)
      ck_assert_int_eq(pst, FP_EIO);
    char *after = raw_bytes(path, &len1);
    ck_assert_uint_eq(len1, len0);
    ck_assert(memcmp(before, after, len0) == 0);
    ck_assert_int_eq(count_entries(dir, names[k]), 1); /* no temp file */
    /* the same save without the limit goes through */
    ck_assert_int_eq(fp_graph_save_file(g, path, &err), FP_OK);
    free(after);
    after = raw_bytes(path, &len1);
    ck_assert(len1 != len0 || memcmp(before, after, len0) != 0);
    free(before);
    free(after);
    unlink(path);
  }
  /* The target is a directory: the write is refused (it is neither a
   * regular file nor a device to write in place), and the directory and
   * what it holds stay as they were. */
  char inner[300];
  snprintf(path, sizeof path, "%s/taken.json.gz", dir);
  snprintf(inner, sizeof inner, "%s/kept", path);
  ck_assert_int_eq(mkdir(path, 0700), 0);
  ck_assert_int_eq(fp_graph_save_file(old, inner, &err), FP_OK);
  size_t len0, len1;
  char *before = raw_bytes(inner, &len0);
  ck_assert_int_eq(fp_graph_save_file(g, path, &err), FP_EIO);
  ck_assert_ptr_nonnull(strstr(err.msg, "Is a directory"));
  char *after = raw_bytes(inner, &len1);
  ck_assert_uint_eq(len1, len0);
  ck_assert(memcmp(before, after, len0) == 0);
  ck_assert_int_eq(count_entries(dir, "taken.json.gz"), 1);
  ck_assert_int_eq(count_entries(path, "kept"), 1);
  free(before);
  free(after);
  unlink(inner);
  rmdir(path);
  ck_assert_int_eq(rmdir(dir), 0); /* nothing else was left behind */
  fp_plan_destroy(p);
  fp_graph_destroy(g);
  fp_graph_destroy(old);
}
END_TEST

static Suite *json_suite(void) {
  Suite *s = suite_create("model/json");
  TCase *tc = tcase_create("formats");
  tcase_add_test(tc, round_trip_exact);
  tcase_add_test(tc, load_errors);
  tcase_add_test(tc, outside_live_bytes_round_trip);
  tcase_add_test(tc, workspace_round_trip);
  tcase_add_test(tc, loop_round_trip);
  tcase_add_test(tc, inplace_round_trip);
  tcase_add_test(tc, deep_nesting_rejected);
  tcase_add_test(tc, plan_round_trip);
  tcase_add_test(tc, plan_errors);
  tcase_add_test(tc, files_gzip_and_atomic);
  tcase_add_test(tc, failed_write_keeps_old_file);
  tcase_add_test(tc, exact_integers);
  tcase_add_test(tc, linked_round_trip);
  tcase_add_test(tc, strings_checked);
  tcase_add_test(tc, malformed_json_rejected);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return tu_run(json_suite());
}
