/*
 * test_graph.c -- the graph builder: validation of every item as it is
 * added, finalize, reader indexes, compatibility, size limits, and the
 * status/error helpers.
 */
#include <stdio.h>
#include <string.h>

#include "tests/testutil.h"

/* Adds a node with whole-buffer reads; returns its index or -1. */
static int32_t add(fp_graph *g, const char *name, fp_kind kind, uint64_t numel,
                   uint64_t rnumel, const int32_t *reads, int32_t nr,
                   const int32_t *writes, int32_t nw, const fp_op *op,
                   fp_error *err) {
  fp_read r[8];
  for (int32_t i = 0; i < nr; i++) {
    r[i].buffer = reads[i];
    r[i].bytes = FP_READ_WHOLE;
    r[i].index = FP_INDEX_AUTO;
  }
  fp_node_spec s = {name, kind, numel, rnumel, nr, nw, r, writes, op};
  return fp_graph_add_node(g, &s, err);
}

static void expect_msg(const fp_error *err, fp_status code,
                       const char *fragment) {
  ck_assert_int_eq(err->code, code);
  ck_assert_msg(strstr(err->msg, fragment) != NULL, "'%s' lacks '%s'", err->msg,
                fragment);
}

START_TEST(lifecycle) {
  fp_graph_destroy(NULL);
  fp_plan_destroy(NULL);
  fp_graph *g = fp_graph_create(NULL);
  ck_assert_ptr_nonnull(g);
  ck_assert_str_eq(fp_graph_name(g), "");
  ck_assert_int_eq(fp_graph_max_fusion_size(g), FP_DEFAULT_MAX_FUSION_SIZE);
  ck_assert(!fp_graph_is_finalized(g));
  ck_assert_int_eq(fp_graph_finalize(g, NULL), FP_OK);
  ck_assert(fp_graph_is_finalized(g));
  fp_error err;
  ck_assert_int_eq(fp_graph_add_buffer(g, "late", 1, true, false, &err), -1);
  expect_msg(&err, FP_EARG, "finalized");
  ck_assert_int_eq(fp_graph_finalize(g, &err), FP_EARG);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(buffer_validation) {
  fp_graph *g = fp_graph_create("g");
  fp_error err;
  ck_assert_int_eq(fp_graph_add_buffer(g, "a", 10, true, false, &err), 0);
  ck_assert_int_eq(fp_graph_add_buffer(g, "a", 10, true, false, &err), -1);
  expect_msg(&err, FP_EINPUT, "buffer 'a': duplicate name");
  ck_assert_int_eq(fp_graph_add_buffer(g, "", 10, true, false, &err), -1);
  expect_msg(&err, FP_EINPUT, "empty name");
  ck_assert_int_eq(
      fp_graph_add_buffer(g, "big", FP_MAX_BYTES, true, false, &err), -1);
  expect_msg(&err, FP_EINPUT, "below 2^53");
  ck_assert_int_eq(
      fp_graph_add_buffer(g, "ok", FP_MAX_BYTES - 1, true, false, &err), 1);
  ck_assert_int_eq(fp_graph_add_buffer(g, "f", 1, false, true, &err), -1);
  expect_msg(&err, FP_EINPUT, "freeable is only allowed on inputs");
  ck_assert_int_eq(fp_graph_find_buffer(g, "ok"), 1);
  ck_assert_int_eq(fp_graph_find_buffer(g, "nope"), -1);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(total_bytes_limit) {
  /* 2^62 / (2^53 - 1) buffers of the largest size overflow the total. */
  fp_graph *g = fp_graph_create("g");
  fp_error err;
  char name[16];
  int32_t i, last = 0;
  for (i = 0; i < 600 && last >= 0; i++) {
    snprintf(name, sizeof name, "b%d", (int)i);
    last = fp_graph_add_buffer(g, name, FP_MAX_BYTES - 1, true, false, &err);
  }
  ck_assert_int_eq(last, -1);
  expect_msg(&err, FP_ELIMIT, "exceed 2^62");
  /* 512 buffers total 2^62 - 512; the 513th (index 512) fails. */
  ck_assert_int_eq(i - 1, 512);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(node_validation) {
  fp_graph *g = fp_graph_create("g");
  fp_error err;
  int32_t x = fp_graph_add_buffer(g, "x", 400, true, false, NULL);
  int32_t y = fp_graph_add_buffer(g, "y", 400, false, false, NULL);
  int32_t z = fp_graph_add_buffer(g, "z", 400, false, false, NULL);
  int32_t r[] = {x}, w[] = {y}, wz[] = {z}, ry[] = {y}, wx[] = {x};
  int32_t bad[] = {99}, twice[] = {z, z};
  ck_assert_int_eq(
      add(g, "n", FP_KIND_POINTWISE, 100, 1, ry, 1, wz, 1, NULL, &err), -1);
  expect_msg(&err, FP_EINPUT, "reads buffer 'y' before any node writes it");
  ck_assert_int_eq(
      add(g, "n", FP_KIND_POINTWISE, 100, 1, bad, 1, w, 1, NULL, &err), -1);
  expect_msg(&err, FP_EINPUT, "unknown buffer");
  ck_assert_int_eq(
      add(g, "n", FP_KIND_POINTWISE, 100, 1, r, 1, wx, 1, NULL, &err), -1);
  expect_msg(&err, FP_EINPUT, "writes input buffer 'x'");
  ck_assert_int_eq(
      add(g, "n", FP_KIND_POINTWISE, 100, 1, r, 1, twice, 2, NULL, &err), -1);
  expect_msg(&err, FP_EINPUT, "writes buffer 'z' twice");
  ck_assert_int_eq(
      add(g, "n", FP_KIND_POINTWISE, 100, 1, r, 1, NULL, 0, NULL, &err), -1);
  expect_msg(&err, FP_EINPUT, "writes: empty");
  ck_assert_int_eq(add(g, "n", FP_KIND_POINTWISE, 0, 1, r, 1, w, 1, NULL, &err),
                   -1);
  expect_msg(&err, FP_EINPUT, "iter");
  ck_assert_int_eq(
      add(g, "n", FP_KIND_POINTWISE, 100, 2, r, 1, w, 1, NULL, &err), -1);
  expect_msg(&err, FP_EINPUT, "pointwise node has rnumel 1");
  ck_assert_int_eq(add(g, "n", FP_KIND_REDUCTION, 1ull << 40, 1ull << 40, r, 1,
                       w, 1, NULL, &err),
                   -1);
  expect_msg(&err, FP_EINPUT, "too large");
  ck_assert_int_eq(add(g, "n", 7, 1, 1, r, 1, w, 1, NULL, &err), -1);
  expect_msg(&err, FP_EINPUT, "kind");
  /* a valid one, then a second writer of y and a duplicate name */
  ck_assert_int_eq(
      add(g, "n", FP_KIND_POINTWISE, 100, 1, r, 1, w, 1, NULL, &err), 0);
  ck_assert_int_eq(
      add(g, "m", FP_KIND_POINTWISE, 100, 1, r, 1, w, 1, NULL, &err), -1);
  expect_msg(&err, FP_EINPUT, "already written by node 'n'");
  ck_assert_int_eq(
      add(g, "n", FP_KIND_POINTWISE, 100, 1, r, 1, wz, 1, NULL, &err), -1);
  expect_msg(&err, FP_EINPUT, "node 'n': duplicate name");
  /* extern nodes need no iter */
  ck_assert_int_eq(add(g, "e", FP_KIND_EXTERN, 0, 0, ry, 1, wz, 1, NULL, &err),
                   1);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(read_override_validation) {
  fp_graph *g = fp_graph_create("g");
  fp_error err;
  int32_t x = fp_graph_add_buffer(g, "x", 400, true, false, NULL);
  int32_t y = fp_graph_add_buffer(g, "y", 400, false, false, NULL);
  fp_read r = {x, FP_INDEX_AUTO, 401};
  fp_node_spec s = {"n", FP_KIND_POINTWISE, 100, 1, 1, 1, &r, &y, NULL};
  ck_assert_int_eq(fp_graph_add_node(g, &s, &err), -1);
  expect_msg(&err, FP_EINPUT, "bytes 401 exceed buffer 'x' (400)");
  r.bytes = 400;
  ck_assert_int_eq(fp_graph_add_node(g, &s, &err), 0);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(op_validation) {
  fp_graph *g = fp_graph_create("g");
  fp_error err;
  fp_op op;
  int32_t a = fp_graph_add_buffer(g, "a", 4 * 6, true, false, NULL);  /* 2x3 */
  int32_t b = fp_graph_add_buffer(g, "b", 4 * 12, true, false, NULL); /* 3x4 */
  int32_t c = fp_graph_add_buffer(g, "c", 4 * 8, false, false, NULL); /* 2x4 */
  int32_t d = fp_graph_add_buffer(g, "d", 4 * 8, false, false, NULL);
  int32_t e = fp_graph_add_buffer(g, "e", 4 * 2, false, false, NULL);
  int32_t odd = fp_graph_add_buffer(g, "odd", 3, true, false, NULL);
  int32_t mm_r[] = {a, b}, mm_w[] = {c}, pw_r[] = {c}, pw_w[] = {d};
  int32_t red_w[] = {e}, odd_r[] = {odd};
  fp_op_init(&op);
  op.fn = FP_OP_MATMUL;
  op.m = 2, op.n = 4, op.k = 3;
  ck_assert_int_eq(
      add(g, "mm", FP_KIND_EXTERN, 0, 0, mm_r, 2, mm_w, 1, &op, &err), 0);
  op.fn = FP_OP_RELU;
  ck_assert_int_eq(
      add(g, "x1", FP_KIND_EXTERN, 0, 0, pw_r, 1, pw_w, 1, &op, &err), -1);
  expect_msg(&err, FP_EINPUT, "'relu' is not a extern op");
  ck_assert_int_eq(
      add(g, "x2", FP_KIND_POINTWISE, 8, 1, mm_r, 2, pw_w, 1, &op, &err), -1);
  expect_msg(&err, FP_EINPUT, "cannot take 2 reads");
  ck_assert_int_eq(
      add(g, "x3", FP_KIND_POINTWISE, 8, 1, odd_r, 1, pw_w, 1, &op, &err), -1);
  expect_msg(&err, FP_EINPUT, "does not fit");
  ck_assert_int_eq(
      add(g, "relu", FP_KIND_POINTWISE, 8, 1, pw_r, 1, pw_w, 1, &op, &err), 1);
  op.fn = FP_OP_SUM; /* reduce 2 rows of 4 into 2 values */
  ck_assert_int_eq(
      add(g, "rsum", FP_KIND_REDUCTION, 2, 4, pw_r, 1, red_w, 1, &op, &err), 2);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(finalize_and_readers) {
  fp_graph *g = fp_graph_create("g");
  fp_error err;
  int32_t x = fp_graph_add_buffer(g, "x", 8, true, false, NULL);
  int32_t y = fp_graph_add_buffer(g, "y", 8, false, false, NULL);
  int32_t z = fp_graph_add_buffer(g, "z", 8, false, false, NULL);
  int32_t never = fp_graph_add_buffer(g, "never", 8, false, false, NULL);
  int32_t r0[] = {x, x}, w0[] = {y}, r1[] = {y, x}, w1[] = {z};
  ck_assert_int_eq(
      add(g, "a", FP_KIND_POINTWISE, 2, 1, r0, 2, w0, 1, NULL, &err), 0);
  ck_assert_int_eq(
      add(g, "b", FP_KIND_POINTWISE, 2, 1, r1, 2, w1, 1, NULL, &err), 1);
  ck_assert_int_eq(fp_graph_add_output(g, never, &err), FP_OK);
  ck_assert_int_eq(fp_graph_finalize(g, &err), FP_EINPUT);
  expect_msg(&err, FP_EINPUT, "outputs: buffer 'never' is neither");
  fp_graph_destroy(g);

  g = fp_graph_create("g");
  x = fp_graph_add_buffer(g, "x", 8, true, false, NULL);
  y = fp_graph_add_buffer(g, "y", 8, false, false, NULL);
  z = fp_graph_add_buffer(g, "z", 8, false, false, NULL);
  ck_assert_int_eq(
      add(g, "a", FP_KIND_POINTWISE, 2, 1, r0, 2, w0, 1, NULL, &err), 0);
  ck_assert_int_eq(
      add(g, "b", FP_KIND_POINTWISE, 2, 1, r1, 2, w1, 1, NULL, &err), 1);
  ck_assert_int_eq(fp_graph_add_output(g, z, &err), FP_OK);
  ck_assert_int_eq(fp_graph_add_output(g, z, &err), FP_OK); /* idempotent */
  ck_assert_int_eq(fp_graph_finalize(g, &err), FP_OK);
  const fp_buffer *bx = fp_graph_buffer(g, x);
  ck_assert_int_eq(bx->n_readers, 2); /* a reads x twice: one reader */
  ck_assert_int_eq(bx->readers[0], 0);
  ck_assert_int_eq(bx->readers[1], 1);
  ck_assert_int_eq(fp_graph_buffer(g, y)->writer, 0);
  ck_assert_int_eq(fp_graph_buffer(g, z)->n_readers, 0);
  ck_assert(fp_graph_buffer(g, z)->output);
  ck_assert_int_eq(fp_graph_output_count(g), 1);
  ck_assert_int_eq(fp_graph_node(g, 1)->reads[0].buffer, y);
  ck_assert_uint_eq(fp_graph_node(g, 1)->reads[0].bytes, 8);
  ck_assert_int_eq(fp_graph_node(g, 1)->writes[0], z);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(compatibility) {
  fp_graph *g = fp_graph_create("g");
  int32_t x = fp_graph_add_buffer(g, "x", 4096, true, false, NULL);
  int32_t r[] = {x};
  static const struct {
    fp_kind kind;
    uint64_t numel, rnumel;
  } nodes[] = {{FP_KIND_POINTWISE, 1024, 1}, /* 0 */
               {FP_KIND_REDUCTION, 32, 32},  /* 1: input space 1024 */
               {FP_KIND_POINTWISE, 32, 1},   /* 2: output space of 1 */
               {FP_KIND_REDUCTION, 32, 32},  /* 3: same iter as 1 */
               {FP_KIND_REDUCTION, 1024, 1}, /* 4: rnumel 1 */
               {FP_KIND_POINTWISE, 64, 1},   /* 5 */
               {FP_KIND_EXTERN, 0, 0},       /* 6 */
               {FP_KIND_REDUCTION, 16, 64}}; /* 7: input space 1024 too */
  for (int32_t i = 0; i < 8; i++) {
    char name[16], bn[16];
    snprintf(name, sizeof name, "n%d", (int)i);
    snprintf(bn, sizeof bn, "o%d", (int)i);
    int32_t w[] = {fp_graph_add_buffer(g, bn, 4, false, false, NULL)};
    ck_assert_int_eq(add(g, name, nodes[i].kind, nodes[i].numel,
                         nodes[i].rnumel, r, 1, w, 1, NULL, NULL),
                     i);
  }
  fp_graph_add_unfusible(g, 3, 0, NULL);
  ck_assert_int_eq(fp_graph_add_unfusible(g, 2, 2, NULL), FP_EINPUT);
  ck_assert_int_eq(fp_graph_finalize(g, NULL), FP_OK);
  ck_assert(fp_graph_compatible(g, 0, 1));  /* pw over red input space */
  ck_assert(fp_graph_compatible(g, 1, 0));  /* symmetric */
  ck_assert(fp_graph_compatible(g, 1, 2));  /* pw over red output space */
  ck_assert(fp_graph_compatible(g, 1, 3));  /* equal iter */
  ck_assert(!fp_graph_compatible(g, 0, 3)); /* listed unfusible */
  ck_assert(fp_graph_is_unfusible(g, 0, 3));
  ck_assert(fp_graph_compatible(g, 0, 4));  /* 1024 == 1024 * 1 */
  ck_assert(!fp_graph_compatible(g, 0, 2)); /* 1024 vs 32 pointwise */
  ck_assert(!fp_graph_compatible(g, 5, 1)); /* 64 fits neither space */
  ck_assert(!fp_graph_compatible(g, 1, 7)); /* reductions: iter differs */
  ck_assert(fp_graph_compatible(g, 0, 7));
  ck_assert(!fp_graph_compatible(g, 6, 6));
  for (int32_t i = 0; i < 8; i++) {
    ck_assert(!fp_graph_compatible(g, 6, i)); /* extern never fuses */
    ck_assert(!fp_graph_compatible(g, i, i));
  }
  fp_graph_destroy(g);
}
END_TEST

/* The loop-nest rows of docs/cost-model.md's compatibility table: a
 * LayerNorm-like reduction R over (6272) x (96), nodes over its spaces in
 * other loop shapes, and convnext's column reduction with a pointwise node
 * of equal size in another loop order (op58, op64). */
static const struct {
  fp_kind kind;
  uint64_t numel, rnumel;
  int n, rn; /* -1: no loop */
  uint64_t size[4];
} loop_nodes[] = {
    {FP_KIND_REDUCTION, 6272, 96, 1, 1, {6272, 96}},       /* 0 R */
    {FP_KIND_POINTWISE, 6272, 1, 1, 0, {6272}},            /* 1 R's output */
    {FP_KIND_POINTWISE, 602112, 1, 4, 0, {2, 56, 56, 96}}, /* 2 */
    {FP_KIND_POINTWISE, 602112, 1, 2, 0, {6272, 96}},      /* 3 R's input */
    {FP_KIND_POINTWISE, 602112, 1, 1, 0, {602112}},        /* 4 flat */
    {FP_KIND_REDUCTION, 96, 6272, 1, 1, {96, 6272}},       /* 5 column */
    {FP_KIND_REDUCTION, 6272, 96, 1, 2, {6272, 4, 24}},    /* 6 */
    {FP_KIND_POINTWISE, 602112, 1, 3, 0, {2, 3136, 96}},   /* 7 */
    {FP_KIND_REDUCTION, 6272, 96, -1, 0, {0}},             /* 8 no loop */
    {FP_KIND_POINTWISE, 602112, 1, 3, 0, {6272, 4, 24}},   /* 9 */
};

START_TEST(loop_compatibility) {
  fp_graph *g = fp_graph_create("g");
  int32_t x = fp_graph_add_buffer(g, "x", 4096, true, false, NULL);
  int32_t r[] = {x};
  int32_t n = (int32_t)(sizeof loop_nodes / sizeof loop_nodes[0]);
  for (int32_t i = 0; i < n; i++) {
    char name[16], bn[16];
    snprintf(name, sizeof name, "n%d", (int)i);
    snprintf(bn, sizeof bn, "o%d", (int)i);
    int32_t w[] = {fp_graph_add_buffer(g, bn, 4, false, false, NULL)};
    ck_assert_int_eq(add(g, name, loop_nodes[i].kind, loop_nodes[i].numel,
                         loop_nodes[i].rnumel, r, 1, w, 1, NULL, NULL),
                     i);
    fp_loop l = {loop_nodes[i].n >= 0,
                 (uint8_t)loop_nodes[i].n,
                 (uint8_t)loop_nodes[i].rn,
                 {0}};
    memcpy(l.size, loop_nodes[i].size, sizeof loop_nodes[i].size);
    ck_assert_int_eq(fp_graph_set_node_loop(g, i, &l, NULL), FP_OK);
  }
  ck_assert_int_eq(fp_graph_finalize(g, NULL), FP_OK);
  static const struct {
    int u, v;
    bool ok;
  } rows[] = {
      {0, 1, true},  /* outer loop: equal loop sizes */
      {0, 3, true},  /* pointwise over R's loops and reduction sizes */
      {0, 2, false}, /* same 602112 elements, another loop shape */
      {0, 4, false}, /* flat: not R's loop tuple */
      {2, 4, true},  /* compatible ranges: one side one-dimensional */
      {3, 4, true},
      {2, 7, false}, /* two multi-dimensional pointwise loops */
      {2, 3, false},
      {5, 2, false}, /* op58 (768) x (98) against op64 (2, 49, 768) */
      {0, 6, true},  /* outer loop: same loop, other reduction shape */
      {3, 6, true},  /* outer loop: (6272) prefixes (6272, 96) */
      {9, 0, true},  /* outer loop: (6272) prefixes (6272, 4, 24) */
      {9, 6, true},  /* pointwise over (6272) x (4, 24) */
      {9, 3, false},
      {8, 2, true}, /* no loop nest: the sizes rule alone */
      {8, 0, true},
      {1, 3, false}, /* the sizes rule still applies first */
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    ck_assert_msg(fp_graph_compatible(g, rows[i].u, rows[i].v) == rows[i].ok,
                  "row %d: n%d, n%d", (int)i, rows[i].u, rows[i].v);
    ck_assert(fp_graph_compatible(g, rows[i].v, rows[i].u) == rows[i].ok);
  }
  /* a plan fusing them names the loop nests */
  fp_plan *p = fp_plan_create();
  int32_t grp[] = {2, 5};
  fp_error err;
  ck_assert_int_eq(fp_plan_add_group(p, grp, 2, NULL), FP_OK);
  for (int32_t i = 0; i < n; i++)
    if (i != 2 && i != 5)
      ck_assert_int_eq(fp_plan_add_group(p, &i, 1, NULL), FP_OK);
  ck_assert_int_eq(fp_plan_check(g, p, 0, &err), FP_EILLEGAL);
  expect_msg(&err, FP_EILLEGAL,
             "group 0: nodes 'n2' (2, 56, 56, 96) and 'n5' (96) x (6272) "
             "have incompatible loop nests");
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(loop_validation) {
  fp_graph *g = fp_graph_create("g");
  int32_t x = fp_graph_add_buffer(g, "x", 4096, true, false, NULL);
  int32_t r[] = {x}, w[3];
  fp_error err;
  for (int i = 0; i < 3; i++) {
    char bn[16];
    snprintf(bn, sizeof bn, "o%d", i);
    w[i] = fp_graph_add_buffer(g, bn, 4, false, false, NULL);
  }
  ck_assert_int_eq(add(g, "r", FP_KIND_REDUCTION, 6, 4, r, 1, w, 1, NULL, NULL),
                   0);
  ck_assert_int_eq(
      add(g, "p", FP_KIND_POINTWISE, 6, 1, r, 1, w + 1, 1, NULL, NULL), 1);
  ck_assert_int_eq(
      add(g, "e", FP_KIND_EXTERN, 0, 0, r, 1, w + 2, 1, NULL, NULL), 2);
  fp_loop l = {true, 2, 1, {2, 3, 4}};
  ck_assert_int_eq(fp_graph_set_node_loop(g, 0, &l, &err), FP_OK);
  l.size[2] = 5;
  ck_assert_int_eq(fp_graph_set_node_loop(g, 0, &l, &err), FP_EINPUT);
  expect_msg(&err, FP_EINPUT,
             "node 'r': loop: the reduction sizes do not multiply to rnumel");
  l = (fp_loop){true, 1, 0, {6}};
  ck_assert_int_eq(fp_graph_set_node_loop(g, 0, &l, &err), FP_EINPUT);
  expect_msg(&err, FP_EINPUT, "node 'r': loop: a reduction needs reduction");
  ck_assert_int_eq(fp_graph_set_node_loop(g, 1, &l, &err), FP_OK);
  l = (fp_loop){true, 1, 1, {6, 1}};
  ck_assert_int_eq(fp_graph_set_node_loop(g, 1, &l, &err), FP_EINPUT);
  expect_msg(&err, FP_EINPUT, "node 'p': loop: a pointwise node has no");
  l = (fp_loop){true, 2, 0, {4, 2}};
  ck_assert_int_eq(fp_graph_set_node_loop(g, 1, &l, &err), FP_EINPUT);
  expect_msg(&err, FP_EINPUT, "node 'p': loop: the loop sizes do not");
  l = (fp_loop){true, 0, 0, {0}};
  ck_assert_int_eq(fp_graph_set_node_loop(g, 2, &l, &err), FP_EINPUT);
  expect_msg(&err, FP_EINPUT, "node 'e': loop: an extern node has no loop");
  ck_assert_int_eq(fp_graph_set_node_loop(g, 3, &l, &err), FP_EINPUT);
  ck_assert_int_eq(fp_graph_set_node_loop(g, 0, NULL, &err), FP_EARG);
  ck_assert_int_eq(fp_graph_finalize(g, NULL), FP_OK);
  /* the failed calls changed nothing */
  ck_assert_uint_eq(fp_graph_node(g, 0)->loop.size[2], 4);
  ck_assert_uint_eq(fp_graph_node(g, 1)->loop.n, 1);
  ck_assert(!fp_graph_node(g, 2)->loop.present);
  ck_assert_int_eq(fp_graph_set_node_loop(g, 0, &l, &err), FP_EARG);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(status_strings) {
  for (int s = 0; s < FP_STATUS_COUNT_; s++) {
    ck_assert_str_ne(fp_status_str((fp_status)s), "unknown status");
    for (int t = 0; t < s; t++)
      ck_assert_str_ne(fp_status_str((fp_status)s),
                       fp_status_str((fp_status)t));
  }
  ck_assert_str_eq(fp_status_name(FP_ENOMEM), "FP_ENOMEM");
  ck_assert_str_eq(fp_status_str((fp_status)999), "unknown status");
  fp_error err;
  ck_assert_int_eq(fp_error_set(&err, FP_EINPUT, "node '%s'", "n"), FP_EINPUT);
  fp_error_prefix(&err, "file.json");
  ck_assert_str_eq(err.msg, "file.json: node 'n'");
  char big[1000];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  fp_error_prefix(&err, big); /* truncates, stays terminated */
  ck_assert_uint_eq(strlen(err.msg), FP_ERROR_MSG_MAX - 1);
  ck_assert_int_eq(fp_error_set(NULL, FP_EIO, "x"), FP_EIO);
  fp_error_prefix(NULL, "x");
  fp_error_clear(&err);
  ck_assert_str_eq(err.msg, "");
  ck_assert_int_eq(err.code, FP_OK);
}
END_TEST

START_TEST(enum_names) {
  for (int k = 0; k < 3; k++)
    ck_assert_int_eq(fp_kind_parse(fp_kind_name((fp_kind)k)), k);
  for (int f = 1; f < FP_OP_COUNT_; f++)
    ck_assert_int_eq(fp_op_parse(fp_op_name((fp_op_fn)f)), f);
  for (int i = 0; i <= FP_INDEX_TRANS; i++)
    ck_assert_int_eq(fp_index_parse(fp_index_name((fp_index)i)), i);
  ck_assert_int_eq(fp_kind_parse("template"), -1);
  ck_assert_int_eq(fp_op_parse("none"), -1);
  ck_assert_int_eq(fp_index_parse("diag"), -1);
}
END_TEST

/* A copy keeps each in-place pair on its own node when the pairs were
 * declared out of node order (finalize sorts them by node). */
START_TEST(copy_keeps_inplace_pairs_on_their_nodes) {
  fp_graph *g = fp_graph_create("pairs");
  int32_t x = fp_graph_add_buffer(g, "x", 64, true, true, NULL);
  int32_t a = fp_graph_add_buffer(g, "a", 64, false, false, NULL);
  int32_t b = fp_graph_add_buffer(g, "b", 64, false, false, NULL);
  ck_assert_int_eq(
      add(g, "n0", FP_KIND_POINTWISE, 16, 1, &x, 1, &a, 1, NULL, NULL), 0);
  ck_assert_int_eq(
      add(g, "n1", FP_KIND_POINTWISE, 16, 1, &a, 1, &b, 1, NULL, NULL), 1);
  ck_assert_int_eq(fp_graph_add_output(g, b, NULL), FP_OK);
  ck_assert_int_eq(fp_graph_add_inplace(g, 1, a, b, NULL), FP_OK);
  ck_assert_int_eq(fp_graph_add_inplace(g, 0, x, a, NULL), FP_OK);
  ck_assert_int_eq(fp_graph_finalize(g, NULL), FP_OK);
  fp_graph *c = fp_graph_copy_open(g, NULL);
  ck_assert_ptr_nonnull(c);
  ck_assert_int_eq(fp_graph_finalize(c, NULL), FP_OK);
  for (int32_t v = 0; v < 2; v++) {
    int32_t m = -1;
    const fp_inplace *p = fp_graph_inplace(c, v, &m);
    ck_assert_int_eq(m, 1);
    ck_assert_int_eq(p[0].write, v == 0 ? a : b);
    ck_assert_int_eq(p[0].read, v == 0 ? x : a);
  }
  fp_graph_destroy(c);
  fp_graph_destroy(g);
}
END_TEST

static Suite *graph_suite(void) {
  Suite *s = suite_create("model/graph");
  TCase *tc = tcase_create("builder");
  tcase_add_test(tc, lifecycle);
  tcase_add_test(tc, buffer_validation);
  tcase_add_test(tc, total_bytes_limit);
  tcase_add_test(tc, node_validation);
  tcase_add_test(tc, read_override_validation);
  tcase_add_test(tc, op_validation);
  tcase_add_test(tc, finalize_and_readers);
  tcase_add_test(tc, compatibility);
  tcase_add_test(tc, loop_compatibility);
  tcase_add_test(tc, loop_validation);
  tcase_add_test(tc, status_strings);
  tcase_add_test(tc, enum_names);
  tcase_add_test(tc, copy_keeps_inplace_pairs_on_their_nodes);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return tu_run(graph_suite());
}
