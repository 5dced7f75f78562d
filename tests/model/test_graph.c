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
  tcase_add_test(tc, status_strings);
  tcase_add_test(tc, enum_names);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return tu_run(graph_suite());
}
