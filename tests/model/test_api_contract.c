/*
 * test_api_contract.c -- every public fp_ function (build/libfuseplan.sym,
 * made from the installed headers) called with NULL for each pointer,
 * negative and out-of-range indexes and sizes, absurd values (NaN and
 * negative times) and a graph that was never finalized.  Each call must
 * answer what its header says -- FP_EARG with err filled for a status,
 * NULL / 0 / -1 / false for an accessor, nothing for a void function --
 * and never crash, abort or read out of bounds (the suite also runs under
 * ASan and UBSan in build-asan).  The last case holds the list: it fails
 * when an exported function has no call in this file.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_exec/exec.h"
#include "heuristics/heuristics.h"
#include "model/io.h"
#include "model/json.h"
#include "model/peak_bound.h"
#include "solver/planner.h"
#include "solver/solver.h"
#include "tests/testutil.h"

/* A status call refused its arguments: FP_EARG, mirrored in err with a
 * message. */
#define EXPECT_EARG(call)                                                      \
  do {                                                                         \
    fp_error e_;                                                               \
    fp_error_clear(&e_);                                                       \
    fp_status st_ = (call);                                                    \
    ck_assert_msg(st_ == FP_EARG, "%s: got %s", #call, fp_status_name(st_));   \
    ck_assert_int_eq(e_.code, FP_EARG);                                        \
    ck_assert_msg(e_.msg[0] != '\0', "%s: empty message", #call);              \
  } while (0)

/* The same with err = NULL: the code alone, and no write through NULL. */
#define EXPECT_EARG_NOERR(call) ck_assert_int_eq((call), FP_EARG)

#define ERR (&e_)

/* A finalized chain of 3 nodes, and a graph still open for building. */
static fp_graph *finalized(void) {
  return tu_chain_graph(3, 64);
}

static fp_graph *open_graph(void) {
  fp_graph *g = fp_graph_create("open");
  ck_assert_ptr_nonnull(g);
  ck_assert_int_ge(fp_graph_add_buffer(g, "x", 64, true, false, NULL), 0);
  return g;
}

/* ---- the failures of issue 38, item 6 ------------------------------------
 */

START_TEST(plan_with_foreign_node_ids_is_refused) {
  fp_graph *g = finalized();
  fp_plan *p = fp_plan_create();
  fp_error err;
  int32_t bad[] = {-1, 7, 1000000};
  /* A negative id is no node of any graph: refused at once. */
  ck_assert_int_eq(fp_plan_add_group(p, bad, 3, &err), FP_EARG);
  ck_assert_int_eq(fp_plan_group_count(p), 0);
  ck_assert_int_eq(fp_plan_append_node(p, -1, &err), FP_EARG);
  /* Ids beyond this graph: the plan cannot know, the writers refuse. */
  ck_assert_int_eq(fp_plan_add_group(p, bad + 1, 2, &err), FP_OK);
  ck_assert_ptr_null(fp_plan_to_json(p, g, NULL, 0, &err));
  ck_assert_int_eq(err.code, FP_EARG);
  ck_assert_ptr_nonnull(strstr(err.msg, "node index 7"));
  ck_assert_int_eq(fp_plan_save_file(p, g, NULL, "-", &err), FP_EARG);
  fp_metrics m;
  ck_assert_int_eq(fp_plan_eval(g, p, &m, NULL, &err), FP_EILLEGAL);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(unfinalized_graph_is_refused) {
  fp_graph *g = open_graph();
  fp_plan *p = fp_plan_create();
  fp_metrics m;
  fp_bounds b;
  EXPECT_EARG(fp_plan_eval(g, p, &m, NULL, ERR));
  EXPECT_EARG(fp_graph_bounds(g, &b, ERR));
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(op_parse_null) {
  ck_assert_int_eq(fp_op_parse(NULL), -1);
  ck_assert_int_eq(fp_kind_parse(NULL), -1);
  ck_assert_int_eq(fp_index_parse(NULL), -1);
  ck_assert_int_eq(fp_order_parse(NULL), -1);
  ck_assert_int_eq(fp_method_parse(NULL), -1);
  ck_assert_int_eq(fp_objective_parse(NULL), -1);
}
END_TEST

START_TEST(lower_bound_rejects_bad_time) {
  fp_graph *g = finalized();
  fp_ilp_params prm;
  double bound = 0;
  fp_ilp_params_init(&prm);
  EXPECT_EARG(fp_lower_bound(g, &prm, -1, &bound, ERR));
  EXPECT_EARG(fp_lower_bound(g, &prm, NAN, &bound, ERR));
  EXPECT_EARG(fp_lower_bound(g, &prm, INFINITY, &bound, ERR));
  ck_assert_int_eq(fp_lower_bound(g, &prm, 0, &bound, NULL), FP_OK);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(indexes_are_bounds_checked) {
  fp_graph *g = finalized();
  fp_plan *p = fp_plan_create();
  int32_t n = 99;
  ck_assert(!fp_graph_compatible(g, -1, 99));
  ck_assert(!fp_graph_compatible(g, 0, 3));
  ck_assert(!fp_graph_is_unfusible(g, -1, 99));
  ck_assert_ptr_null(fp_plan_group(p, -1, &n));
  ck_assert_int_eq(n, 0);
  ck_assert_ptr_null(fp_plan_group(p, 0, &n));
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* ---- every public function, header by header ------------------------------
 */

START_TEST(status_h) {
  ck_assert_str_eq(fp_status_str((fp_status)-1), "unknown status");
  ck_assert_str_eq(fp_status_str((fp_status)999), "unknown status");
  ck_assert_ptr_nonnull(fp_status_name((fp_status)999));
  ck_assert_int_eq(fp_error_set(NULL, FP_EIO, "x %d", 1), FP_EIO);
  fp_error err;
  ck_assert_int_eq(fp_error_set(&err, FP_EIO, NULL), FP_EIO);
  ck_assert_str_eq(err.msg, "input/output error");
  fp_error_prefix(NULL, "f");
  fp_error_prefix(&err, NULL);
  ck_assert_str_eq(err.msg, "input/output error");
  fp_error_clear(NULL);
  ck_assert_ptr_nonnull(fp_version());
}
END_TEST

START_TEST(graph_h_building) {
  fp_graph_destroy(NULL);
  fp_graph *g = fp_graph_create(NULL);
  ck_assert_ptr_nonnull(g);
  EXPECT_EARG(fp_graph_set_max_fusion_size(NULL, 4, ERR));
  EXPECT_EARG(fp_graph_set_source(NULL, "s", ERR));
  EXPECT_EARG(fp_graph_set_outside_live_bytes(NULL, 1, ERR));
  EXPECT_EARG(fp_graph_rename(NULL, "n", ERR));
  fp_error err;
  ck_assert_int_eq(fp_graph_add_buffer(NULL, "b", 1, true, false, &err), -1);
  ck_assert_int_eq(err.code, FP_EARG);
  ck_assert_int_eq(fp_graph_add_buffer(g, NULL, 1, true, false, &err), -1);
  ck_assert_int_eq(fp_graph_add_buffer(g, "b", UINT64_MAX, 1, 0, &err), -1);
  ck_assert_int_eq(fp_graph_add_node(NULL, NULL, &err), -1);
  ck_assert_int_eq(err.code, FP_EARG);
  ck_assert_int_eq(fp_graph_add_node(g, NULL, &err), -1);
  ck_assert_int_eq(err.code, FP_EARG);
  fp_node_spec neg = {"n", FP_KIND_POINTWISE, 1, 1, -1, -5, NULL, NULL, NULL};
  ck_assert_int_eq(fp_graph_add_node(g, &neg, &err), -1);
  ck_assert_int_eq(err.code, FP_EARG);
  fp_node_spec null_lists = {"n", FP_KIND_POINTWISE, 1, 1, 2, 1, NULL, NULL,
                             NULL};
  ck_assert_int_eq(fp_graph_add_node(g, &null_lists, &err), -1);
  ck_assert_int_ne(err.code, FP_OK);
  EXPECT_EARG(fp_graph_add_output(NULL, 0, ERR));
  ck_assert_int_eq(fp_graph_add_output(g, -1, &err), FP_EINPUT);
  ck_assert_int_eq(fp_graph_add_output(g, 99, &err), FP_EINPUT);
  EXPECT_EARG(fp_graph_add_unfusible(NULL, 0, 1, ERR));
  ck_assert_int_eq(fp_graph_add_unfusible(g, -1, 99, &err), FP_EINPUT);
  fp_loop none = {0};
  EXPECT_EARG(fp_graph_set_node_loop(NULL, 0, &none, ERR));
  EXPECT_EARG(fp_graph_set_node_loop(g, 0, NULL, ERR));
  ck_assert_int_eq(fp_graph_set_node_loop(g, -1, &none, &err), FP_EINPUT);
  EXPECT_EARG(fp_graph_set_node_workspace(NULL, 0, 1, ERR));
  ck_assert_int_eq(fp_graph_set_node_workspace(g, -1, 1, &err), FP_EINPUT);
  EXPECT_EARG(fp_graph_add_inplace(NULL, 0, 0, 0, ERR));
  ck_assert_int_eq(fp_graph_add_inplace(g, -1, 0, 0, &err), FP_EINPUT);
  int32_t via = 0;
  EXPECT_EARG(fp_graph_add_linked(NULL, 0, 1, 1, &via, ERR));
  EXPECT_EARG(fp_graph_add_linked(g, 0, 1, 1, NULL, ERR));
  ck_assert_int_eq(fp_graph_add_linked(g, -1, 99, 1, &via, &err), FP_EINPUT);
  EXPECT_EARG(fp_graph_set_input_written_before(NULL, 0, ERR));
  ck_assert_int_eq(fp_graph_set_input_written_before(g, -1, &err), FP_EINPUT);
  EXPECT_EARG(fp_graph_finalize(NULL, ERR));
  ck_assert_int_eq(fp_graph_set_max_fusion_size(g, -3, &err), FP_EINPUT);
  ck_assert_int_eq(fp_graph_set_outside_live_bytes(g, UINT64_MAX, &err),
                   FP_EINPUT);
  ck_assert_int_eq(fp_graph_find_buffer(NULL, "x"), -1);
  ck_assert_int_eq(fp_graph_find_buffer(g, NULL), -1);
  ck_assert_int_eq(fp_graph_find_node(NULL, "x"), -1);
  ck_assert_int_eq(fp_graph_find_node(g, NULL), -1);
  ck_assert_int_eq(fp_graph_finalize(g, NULL), FP_OK);
  EXPECT_EARG(fp_graph_finalize(g, ERR));
  fp_graph_destroy(g);
}
END_TEST

START_TEST(graph_h_reading) {
  fp_graph *g = finalized(), *o = open_graph();
  fp_error err;
  ck_assert_ptr_null(fp_graph_copy_open(NULL, &err));
  ck_assert_int_eq(err.code, FP_EARG);
  ck_assert_ptr_null(fp_graph_copy_open(o, &err));
  ck_assert_int_eq(err.code, FP_EARG);
  ck_assert_ptr_null(fp_graph_name(NULL));
  ck_assert_ptr_null(fp_graph_source(NULL));
  ck_assert_int_eq(fp_graph_node_count(NULL), 0);
  ck_assert_int_eq(fp_graph_buffer_count(NULL), 0);
  ck_assert_int_eq(fp_graph_output_count(NULL), 0);
  ck_assert_int_eq(fp_graph_output(NULL, 0), -1);
  ck_assert_int_eq(fp_graph_output(g, -1), -1);
  ck_assert_int_eq(fp_graph_output(g, 99), -1);
  ck_assert_int_eq(fp_graph_max_fusion_size(NULL), 0);
  ck_assert(!fp_graph_is_finalized(NULL));
  ck_assert_ptr_null(fp_graph_node(NULL, 0));
  ck_assert_ptr_null(fp_graph_node(g, -1));
  ck_assert_ptr_null(fp_graph_node(g, 3));
  ck_assert_ptr_null(fp_graph_node(o, 0));
  ck_assert_ptr_null(fp_graph_buffer(NULL, 0));
  ck_assert_ptr_null(fp_graph_buffer(g, -1));
  ck_assert_ptr_null(fp_graph_buffer(g, INT32_MAX));
  ck_assert_ptr_null(fp_graph_buffer(o, 0));
  ck_assert_int_eq(fp_graph_unfusible_count(NULL), 0);
  int32_t u = 5, v = 5;
  fp_graph_unfusible_pair(g, -1, &u, &v);
  ck_assert(u == -1 && v == -1);
  fp_graph_unfusible_pair(NULL, 0, NULL, NULL);
  ck_assert(!fp_graph_is_unfusible(NULL, 0, 1));
  ck_assert(!fp_graph_compatible(NULL, 0, 1));
  ck_assert(!fp_graph_compatible(o, -1, 0));
  ck_assert(!fp_iter_compatible(NULL, fp_graph_node(g, 0)));
  ck_assert(!fp_iter_compatible(fp_graph_node(g, 0), NULL));
  ck_assert(fp_loop_equal(NULL, NULL));
  ck_assert(!fp_loop_equal(NULL, &fp_graph_node(g, 0)->loop));
  ck_assert_int_eq(fp_graph_resident_bytes(NULL), 0);
  ck_assert_int_eq(fp_graph_outside_live_bytes(NULL), 0);
  int32_t wsat = 7;
  ck_assert_int_eq(fp_graph_workspace_total(NULL), 0);
  ck_assert_int_eq(fp_graph_workspace_max(NULL, &wsat), 0);
  ck_assert_int_eq(wsat, -1);
  ck_assert_int_eq(fp_graph_workspace_max(o, NULL), 0);
  ck_assert_int_eq(fp_graph_group_workspace(NULL, &wsat, 1), 0);
  ck_assert_int_eq(fp_graph_group_workspace(o, NULL, 1), 0);
  ck_assert_int_eq(fp_graph_mask_workspace(NULL, 1), 0);
  int32_t m = 7;
  ck_assert_ptr_null(fp_graph_inplace(NULL, 0, &m));
  ck_assert_int_eq(m, 0);
  ck_assert_ptr_null(fp_graph_inplace(g, -1, NULL));
  ck_assert_ptr_null(fp_graph_inplace(o, 0, NULL));
  ck_assert_int_eq(fp_graph_inplace_count(NULL), 0);
  ck_assert_int_eq(fp_graph_linked_count(NULL), 0);
  ck_assert_ptr_null(fp_graph_linked(NULL, 0));
  ck_assert_ptr_null(fp_graph_linked(g, -1));
  ck_assert_ptr_null(fp_graph_linked(o, 0));
  ck_assert_int_eq(fp_graph_linked_broken(NULL, NULL, 0), -1);
  ck_assert_int_eq(fp_graph_linked_broken(g, NULL, 3), -1);
  m = 7;
  ck_assert_ptr_null(fp_graph_inplace_fused_readers(NULL, 0, 0, &m));
  ck_assert_int_eq(m, 0);
  ck_assert_ptr_null(fp_graph_inplace_fused_readers(g, -1, 0, NULL));
  ck_assert_ptr_null(fp_graph_inplace_fused_readers(g, 0, -1, NULL));
  ck_assert_ptr_null(fp_graph_inplace_fused_readers(o, 0, 0, NULL));
  ck_assert(!fp_graph_inplace_fused_reader(NULL, 0, 0, 0));
  ck_assert(!fp_graph_inplace_fused_reader(g, 0, 99, 0));
  ck_assert(!fp_graph_input_written_before(NULL, 0));
  ck_assert(!fp_graph_input_written_before(g, -1));
  ck_assert(!fp_graph_input_written_before(o, 0));
  ck_assert_str_eq(fp_kind_name((fp_kind)99), "unknown");
  ck_assert_str_eq(fp_op_name((fp_op_fn)-1), "unknown");
  ck_assert_str_eq(fp_index_name((fp_index)99), "unknown");
  ck_assert_int_eq(fp_kind_parse("nope"), -1);
  ck_assert_int_eq(fp_op_parse(""), -1);
  ck_assert_int_eq(fp_index_parse("nope"), -1);
  fp_op_init(NULL);
  fp_graph_destroy(o);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(plan_h) {
  fp_graph *g = finalized(), *o = open_graph();
  fp_plan *p = fp_plan_create(), *q = fp_plan_create();
  int32_t one = 0, n = 7;
  fp_solver_info_init(NULL);
  fp_plan_destroy(NULL);
  EXPECT_EARG(fp_plan_add_group(NULL, &one, 1, ERR));
  EXPECT_EARG(fp_plan_add_group(p, NULL, 1, ERR));
  EXPECT_EARG(fp_plan_add_group(p, &one, -1, ERR));
  EXPECT_EARG(fp_plan_add_group(p, (int32_t[]){FP_MAX_ITEMS}, 1, ERR));
  EXPECT_EARG_NOERR(fp_plan_add_group(p, (int32_t[]){-7}, 1, NULL));
  EXPECT_EARG(fp_plan_append_node(NULL, 0, ERR));
  EXPECT_EARG(fp_plan_append_node(p, INT32_MIN, ERR));
  EXPECT_EARG(fp_plan_open_group(NULL, ERR));
  fp_plan_clear(NULL);
  EXPECT_EARG(fp_plan_copy(NULL, p, ERR));
  EXPECT_EARG(fp_plan_copy(p, NULL, ERR));
  ck_assert_int_eq(fp_plan_group_count(NULL), 0);
  ck_assert_int_eq(fp_plan_entry_count(NULL), 0);
  ck_assert_ptr_null(fp_plan_group(NULL, 0, &n));
  ck_assert_int_eq(n, 0);
  ck_assert_int_eq(fp_plan_add_group(p, &one, 1, NULL), FP_OK);
  ck_assert_ptr_null(fp_plan_group(p, 1, &n));
  ck_assert_ptr_nonnull(fp_plan_group(p, 0, NULL));
  ck_assert_ptr_null(fp_plan_graph_name(NULL));
  EXPECT_EARG(fp_plan_set_graph_name(NULL, "x", ERR));
  ck_assert_ptr_null(fp_plan_solver(NULL));
  ck_assert_ptr_null(fp_plan_solver_const(NULL));
  ck_assert_ptr_null(fp_plan_claims_get(NULL));
  fp_plan_claims_set(NULL, NULL);
  EXPECT_EARG(fp_plan_make_eager(NULL, g, ERR));
  EXPECT_EARG(fp_plan_make_eager(q, NULL, ERR));
  EXPECT_EARG(fp_plan_make_eager(q, o, ERR));
  fp_plan_destroy(q);
  fp_plan_destroy(p);
  fp_graph_destroy(o);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(eval_h) {
  fp_graph *g = finalized(), *o = open_graph();
  fp_plan *p = fp_plan_create();
  fp_metrics m;
  fp_bounds b;
  uint64_t t, per[8];
  ck_assert_int_eq(fp_plan_make_eager(p, g, NULL), FP_OK);
  EXPECT_EARG(fp_plan_check(NULL, p, 0, ERR));
  EXPECT_EARG(fp_plan_check(g, NULL, 0, ERR));
  EXPECT_EARG(fp_plan_check(o, p, 0, ERR));
  /* max_fusion_size <= 0 stands for the graph's own (eval.h). */
  ck_assert_int_eq(fp_plan_check(g, p, -5, NULL), FP_OK);
  EXPECT_EARG(fp_plan_eval(NULL, p, &m, NULL, ERR));
  EXPECT_EARG(fp_plan_eval(g, NULL, &m, NULL, ERR));
  EXPECT_EARG(fp_plan_eval(g, p, NULL, NULL, ERR));
  EXPECT_EARG(fp_plan_eval_k(o, p, 1, &m, NULL, ERR));
  EXPECT_EARG(fp_plan_eval_k(g, p, 1, NULL, NULL, ERR));
  EXPECT_EARG(fp_graph_bounds(NULL, &b, ERR));
  EXPECT_EARG(fp_graph_bounds(g, NULL, ERR));
  EXPECT_EARG(fp_graph_traffic_bound(NULL, &t, ERR));
  EXPECT_EARG(fp_graph_traffic_bound(o, &t, ERR));
  EXPECT_EARG(fp_graph_traffic_bound(g, NULL, ERR));
  EXPECT_EARG(fp_graph_buffer_traffic_bounds(o, per, ERR));
  EXPECT_EARG(fp_graph_buffer_traffic_bounds(g, NULL, ERR));
  int32_t step[8] = {0};
  ck_assert_uint_eq(fp_inplace_node_saving(NULL, 0, NULL, NULL), 0);
  ck_assert_uint_eq(fp_inplace_node_saving(g, -1, NULL, NULL), 0);
  ck_assert_uint_eq(fp_inplace_node_applied(g, 0, NULL, NULL), 0);
  ck_assert_uint_eq(fp_inplace_plan_applied(NULL, step, 0), 0);
  ck_assert_uint_eq(fp_inplace_plan_applied(g, NULL, 0), 0);
  ck_assert_uint_eq(fp_inplace_plan_applied(g, step, -1), 0);
  ck_assert_uint_eq(fp_inplace_mask_saving(NULL, 0, 1), 0);
  fp_plan_destroy(p);
  fp_graph_destroy(o);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(json_h) {
  fp_graph *g = finalized(), *o = open_graph(), *out_g = NULL;
  fp_plan *p = fp_plan_create(), *out_p = NULL;
  fp_error err;
  ck_assert_int_eq(fp_plan_make_eager(p, g, NULL), FP_OK);
  EXPECT_EARG(fp_graph_load_buffer("{}", 2, "s", NULL, ERR));
  EXPECT_EARG(fp_graph_load_buffer(NULL, 5, "s", &out_g, ERR));
  /* No data at all is an empty document: invalid input, not a crash. */
  ck_assert_int_eq(fp_graph_load_buffer(NULL, 0, NULL, &out_g, &err),
                   FP_EINPUT);
  EXPECT_EARG(fp_graph_load_file("x.json", NULL, ERR));
  EXPECT_EARG(fp_graph_load_file(NULL, &out_g, ERR));
  ck_assert_ptr_null(out_g);
  ck_assert_ptr_null(fp_graph_to_json(NULL, 0, &err));
  ck_assert_int_eq(err.code, FP_EARG);
  ck_assert_ptr_null(fp_graph_to_json(o, 1, &err));
  ck_assert_int_eq(err.code, FP_EARG);
  EXPECT_EARG(fp_graph_save_file(NULL, "-", ERR));
  EXPECT_EARG(fp_graph_save_file(g, NULL, ERR));
  EXPECT_EARG_NOERR(fp_graph_save_file(o, "-", NULL));
  EXPECT_EARG(fp_plan_load_buffer("{}", 2, "p", g, NULL, ERR));
  EXPECT_EARG(fp_plan_load_buffer("{}", 2, "p", NULL, &out_p, ERR));
  EXPECT_EARG(fp_plan_load_buffer("{}", 2, "p", o, &out_p, ERR));
  EXPECT_EARG(fp_plan_load_buffer(NULL, 9, "p", g, &out_p, ERR));
  EXPECT_EARG(fp_plan_load_file("p.json", NULL, &out_p, ERR));
  EXPECT_EARG(fp_plan_load_file(NULL, g, &out_p, ERR));
  EXPECT_EARG(fp_plan_load_file("p.json", g, NULL, ERR));
  ck_assert_ptr_null(out_p);
  ck_assert_ptr_null(fp_plan_to_json(NULL, g, NULL, 0, &err));
  ck_assert_int_eq(err.code, FP_EARG);
  ck_assert_ptr_null(fp_plan_to_json(p, NULL, NULL, 0, &err));
  ck_assert_int_eq(err.code, FP_EARG);
  ck_assert_ptr_null(fp_plan_to_json(p, o, NULL, 0, &err));
  ck_assert_int_eq(err.code, FP_EARG);
  EXPECT_EARG(fp_plan_save_file(p, g, NULL, NULL, ERR));
  EXPECT_EARG(fp_plan_save_file(NULL, g, NULL, "-", ERR));
  EXPECT_EARG_NOERR(fp_plan_save_file(p, o, NULL, "-", NULL));
  fp_plan_destroy(p);
  fp_graph_destroy(o);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(io_h) {
  char *data = (char *)"x";
  size_t len = 3;
  uint64_t keep = fp_max_input_bytes();
  fp_set_max_input_bytes(0); /* 0 restores the default (io.h) */
  ck_assert_uint_eq(fp_max_input_bytes(), FP_MAX_FILE_BYTES);
  fp_set_max_input_bytes(keep);
  EXPECT_EARG(fp_file_read_all(NULL, &data, &len, ERR));
  ck_assert_ptr_null(data);
  ck_assert_uint_eq(len, 0);
  EXPECT_EARG(fp_file_read_all("-", NULL, &len, ERR));
  EXPECT_EARG(fp_file_read_all("-", &data, NULL, ERR));
  EXPECT_EARG(fp_file_write_atomic(NULL, "x", 1, ERR));
  EXPECT_EARG(fp_file_write_atomic("-", NULL, 5, ERR));
  fp_file_remove_temps();
  ck_assert_int_eq(fp_path_has_suffix(NULL, ".gz"), 0);
  ck_assert_int_eq(fp_path_has_suffix("a.gz", NULL), 0);
  ck_assert_int_eq(fp_path_has_suffix("a.gz", ".gz"), 1);
}
END_TEST

START_TEST(peak_bound_h) {
  fp_graph *g = finalized(), *o = open_graph(), *rg = NULL;
  uint64_t out;
  int32_t pairs;
  EXPECT_EARG(fp_peak_bound(NULL, 0, 0, &out, ERR));
  EXPECT_EARG(fp_peak_bound(o, 0, 0, &out, ERR));
  EXPECT_EARG(fp_peak_bound(g, 0, 0, NULL, ERR));
  EXPECT_EARG(fp_peak_restrict(NULL, 0, 1, &rg, &pairs, ERR));
  EXPECT_EARG(fp_peak_restrict(o, 0, 1, &rg, &pairs, ERR));
  EXPECT_EARG(fp_peak_restrict(g, 0, 1, NULL, &pairs, ERR));
  EXPECT_EARG(fp_peak_restrict(g, 0, 1, &rg, NULL, ERR));
  ck_assert_ptr_null(rg);
  int32_t nodes[2] = {0, 99}, start[3] = {0, 1, 2}, bad[2] = {1, 1};
  EXPECT_EARG(fp_peak_group_bounds(NULL, 0, nodes, start, 1, &out, ERR));
  EXPECT_EARG(fp_peak_group_bounds(o, 0, nodes, start, 1, &out, ERR));
  EXPECT_EARG(fp_peak_group_bounds(g, 0, nodes, start, 1, NULL, ERR));
  EXPECT_EARG(fp_peak_group_bounds(g, 0, NULL, start, 1, &out, ERR));
  EXPECT_EARG(fp_peak_group_bounds(g, 0, nodes, NULL, 1, &out, ERR));
  EXPECT_EARG(fp_peak_group_bounds(g, 0, nodes, start, -1, &out, ERR));
  EXPECT_EARG(fp_peak_group_bounds(g, 0, nodes, bad, 1, &out, ERR));
  EXPECT_EARG(fp_peak_group_bounds(g, 0, nodes, start, 2, &out, ERR));
  fp_peak_cuts *h = NULL;
  fp_peak_tie tie = {0, 99};
  int8_t place[3] = {0}; /* one per node of the 3-node chain */
  EXPECT_EARG(fp_peak_cuts_create(NULL, 0, &h, ERR));
  EXPECT_EARG(fp_peak_cuts_create(o, 0, &h, ERR));
  EXPECT_EARG(fp_peak_cuts_create(g, 0, NULL, ERR));
  ck_assert_ptr_null(h);
  ck_assert_int_eq(fp_peak_cuts_create(g, 0, &h, NULL), FP_OK);
  EXPECT_EARG(fp_peak_cuts_tied(NULL, nodes, 1, NULL, 0, &out, NULL, ERR));
  EXPECT_EARG(fp_peak_cuts_tied(h, NULL, 1, NULL, 0, &out, NULL, ERR));
  EXPECT_EARG(fp_peak_cuts_tied(h, nodes, 1, NULL, 0, NULL, NULL, ERR));
  EXPECT_EARG(fp_peak_cuts_tied(h, nodes, 0, NULL, 0, &out, NULL, ERR));
  EXPECT_EARG(fp_peak_cuts_tied(h, nodes, 2, NULL, 0, &out, NULL, ERR));
  EXPECT_EARG(fp_peak_cuts_tied(h, nodes, 1, NULL, 1, &out, NULL, ERR));
  EXPECT_EARG(fp_peak_cuts_tied(h, nodes, 1, &tie, 1, &out, NULL, ERR));
  EXPECT_EARG(fp_peak_cuts_tied(h, nodes, 1, NULL, -1, &out, NULL, ERR));
  EXPECT_EARG(
      fp_peak_cuts_placed(NULL, nodes, 1, NULL, 0, place, &out, NULL, ERR));
  EXPECT_EARG(
      fp_peak_cuts_placed(h, nodes, 1, &tie, 1, place, &out, NULL, ERR));
  ck_assert_int_eq(
      fp_peak_cuts_placed(h, nodes, 1, NULL, 0, place, &out, NULL, NULL),
      FP_OK);
  fp_peak_cuts_destroy(h);
  fp_peak_cuts_destroy(NULL); /* a no-op */
  bool none;
  int32_t *far = NULL, n_far;
  EXPECT_EARG(
      fp_peak_group_far(NULL, 0, 1, nodes, start, 1, &none, &far, &n_far, ERR));
  EXPECT_EARG(
      fp_peak_group_far(o, 0, 1, nodes, start, 1, &none, &far, &n_far, ERR));
  EXPECT_EARG(
      fp_peak_group_far(g, 0, 1, nodes, start, 1, NULL, &far, &n_far, ERR));
  EXPECT_EARG(
      fp_peak_group_far(g, 0, 1, nodes, start, 1, &none, NULL, &n_far, ERR));
  EXPECT_EARG(
      fp_peak_group_far(g, 0, 1, nodes, start, 1, &none, &far, NULL, ERR));
  EXPECT_EARG(
      fp_peak_group_far(g, 0, 1, NULL, start, 1, &none, &far, &n_far, ERR));
  EXPECT_EARG(
      fp_peak_group_far(g, 0, 1, nodes, bad, 1, &none, &far, &n_far, ERR));
  EXPECT_EARG(
      fp_peak_group_far(g, 0, 1, nodes, start, 2, &none, &far, &n_far, ERR));
  ck_assert_ptr_null(far);
  ck_assert_uint_eq(fp_inplace_step_cap(NULL, 0), 0);
  ck_assert_uint_eq(fp_inplace_step_cap(g, -1), 0); /* no pairs */
  fp_peak_test_far_rule(-7);                        /* any int: nonzero is on */
  fp_peak_test_far_rule(1);
  fp_peak_test_refunds(0); /* a hook: off, then back on */
  fp_peak_test_refunds(3);
  fp_graph_destroy(o);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(limits_h) {
  fp_graph *g = finalized();
  fp_limits lim;
  fp_peak_spec spec = {FP_PEAK_PERCENT, 50};
  uint64_t bytes = 7;
  fp_limits_init(NULL); /* a no-op */
  fp_limits_init(&lim);
  EXPECT_EARG(fp_limits_check(NULL, "who", ERR));
  lim.max_fusion_size = -1;
  EXPECT_EARG(fp_limits_check(&lim, "who", ERR));
  ck_assert_uint_eq(fp_limits_peak_cap(NULL, 1234), 1234);
  ck_assert_int_eq(fp_limits_fusion_size(NULL, g), fp_graph_max_fusion_size(g));
  ck_assert_int_eq(fp_limits_fusion_size(NULL, NULL), 0);
  /* the cap never raises the graph's own limit; NULL answers 0 */
  ck_assert_int_eq(fp_graph_fusion_cap(NULL, 3), 0);
  ck_assert_int_eq(fp_graph_fusion_cap(g, 0), fp_graph_max_fusion_size(g));
  ck_assert_int_eq(fp_graph_fusion_cap(g, fp_graph_max_fusion_size(g) + 5),
                   fp_graph_max_fusion_size(g));
  EXPECT_EARG(fp_limits_parse_bytes(NULL, &bytes, ERR));
  EXPECT_EARG(fp_limits_parse_bytes("12", NULL, ERR));
  EXPECT_EARG(fp_limits_parse_bytes("-1", &bytes, ERR));
  EXPECT_EARG(fp_limits_parse_bytes("99999999999999999999GiB", &bytes, ERR));
  EXPECT_EARG(fp_limits_parse_peak(NULL, &spec, ERR));
  EXPECT_EARG(fp_limits_parse_peak("eager", NULL, ERR));
  EXPECT_EARG(fp_limits_parse_peak("1e400%", &spec, ERR));
  EXPECT_EARG(fp_limits_resolve_peak(NULL, 10, &bytes, ERR));
  EXPECT_EARG(fp_limits_resolve_peak(&spec, 10, NULL, ERR));
  spec.kind = (fp_peak_kind)99;
  EXPECT_EARG(fp_limits_resolve_peak(&spec, 10, &bytes, ERR));
  ck_assert_uint_eq(bytes, 7); /* untouched on failure */
  fp_graph_destroy(g);
}
END_TEST

/* A decision callback that never stops the run. */
static int go_on(const fp_fusion_decision *d, void *ctx) {
  (void)d;
  (void)ctx;
  return 0;
}

START_TEST(heuristics_h) {
  fp_graph *g = finalized(), *o = open_graph();
  fp_plan *p = fp_plan_create();
  fp_fusion_params prm;
  fp_order chosen;
  ck_assert_str_eq(fp_order_name((fp_order)99), "unknown");
  ck_assert_str_eq(fp_method_name((fp_method)-1), "unknown");
  fp_fusion_params_init(NULL, FP_METHOD_GREEDY);
  fp_fusion_params_init(&prm, (fp_method)99);
  EXPECT_EARG(fp_fusion_params_check(&prm, ERR));
  EXPECT_EARG(fp_fusion_params_check(NULL, ERR));
  fp_fusion_params_init(&prm, FP_METHOD_GREEDY);
  EXPECT_EARG(fp_fuse(NULL, &prm, p, ERR));
  EXPECT_EARG(fp_fuse(o, &prm, p, ERR));
  EXPECT_EARG(fp_fuse(g, NULL, p, ERR));
  EXPECT_EARG(fp_fuse(g, &prm, NULL, ERR));
  EXPECT_EARG(fp_fusion_decisions(NULL, &prm, go_on, NULL, ERR));
  EXPECT_EARG(fp_fusion_decisions(o, &prm, go_on, NULL, ERR));
  EXPECT_EARG(fp_fusion_decisions(g, &prm, NULL, NULL, ERR));
  EXPECT_EARG(fp_fusion_decisions(g, NULL, go_on, NULL, ERR));
  ck_assert_int_eq(fp_plan_make_eager(p, g, NULL), FP_OK);
  EXPECT_EARG(fp_plan_reorder(NULL, p, FP_ORDER_BEST, &chosen, ERR));
  EXPECT_EARG(fp_plan_reorder(o, p, FP_ORDER_BEST, &chosen, ERR));
  EXPECT_EARG(fp_plan_reorder(g, NULL, FP_ORDER_BEST, &chosen, ERR));
  EXPECT_EARG(fp_plan_reorder(g, p, (fp_order)99, &chosen, ERR));
  EXPECT_EARG(fp_plan_reorder(g, p, (fp_order)-1, NULL, ERR));
  fp_plan_destroy(p);
  fp_graph_destroy(o);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(solver_h) {
  fp_graph *g = finalized(), *o = open_graph();
  fp_plan *p = fp_plan_create();
  fp_ilp_params prm;
  fp_metrics m = {0};
  fp_pareto_point pts[4];
  double bound;
  ck_assert_str_eq(fp_objective_name((fp_objective)-1), "unknown");
  ck_assert_int_eq(fp_objective_parse("nope"), -1);
  fp_ilp_params_init(NULL);
  EXPECT_EARG(fp_ilp_params_check(NULL, ERR));
  fp_ilp_params_init(&prm);
  prm.time_limit_s = NAN;
  EXPECT_EARG(fp_ilp_params_check(&prm, ERR));
  EXPECT_EARG(fp_ilp_solve(g, &prm, p, NULL, ERR));
  EXPECT_EARG(fp_auto_solve(g, &prm, p, NULL, ERR));
  prm.time_limit_s = -1;
  EXPECT_EARG(fp_exhaustive(g, &prm, p, NULL, ERR));
  EXPECT_EARG(fp_lower_bound(g, &prm, 1, &bound, ERR));
  fp_ilp_params_init(&prm);
  prm.n_starts = 2; /* and starts NULL */
  EXPECT_EARG(fp_ilp_params_check(&prm, ERR));
  fp_ilp_params_init(&prm);
  EXPECT_EARG(fp_ilp_solve(NULL, &prm, p, &m, ERR));
  EXPECT_EARG(fp_ilp_solve(o, &prm, p, &m, ERR));
  EXPECT_EARG(fp_ilp_solve(g, NULL, p, &m, ERR));
  EXPECT_EARG(fp_ilp_solve(g, &prm, NULL, &m, ERR));
  EXPECT_EARG(fp_auto_solve(NULL, &prm, p, &m, ERR));
  EXPECT_EARG(fp_auto_solve(o, &prm, p, &m, ERR));
  EXPECT_EARG(fp_auto_solve(g, NULL, p, &m, ERR));
  EXPECT_EARG(fp_auto_solve(g, &prm, NULL, &m, ERR));
  EXPECT_EARG(fp_exhaustive(NULL, &prm, p, &m, ERR));
  EXPECT_EARG(fp_exhaustive(o, &prm, p, &m, ERR));
  EXPECT_EARG(fp_exhaustive(g, &prm, NULL, &m, ERR));
  EXPECT_EARG(fp_lower_bound(NULL, &prm, 1, &bound, ERR));
  EXPECT_EARG(fp_lower_bound(o, &prm, 1, &bound, ERR));
  EXPECT_EARG(fp_lower_bound(g, NULL, 1, &bound, ERR));
  EXPECT_EARG(fp_lower_bound(g, &prm, 1, NULL, ERR));
  ck_assert(isnan(fp_objective_value(NULL, &m)));
  ck_assert(isnan(fp_objective_value(&prm, NULL)));
  ck_assert_int_eq(fp_meets_limits(NULL, &m, 0), 0);
  ck_assert_int_eq(fp_meets_limits(&prm, NULL, 0), 0);
  const fp_planner *pl = fp_planner_find("greedy");
  EXPECT_EARG(fp_pareto(NULL, &prm, 4, pl, pts, ERR));
  EXPECT_EARG(fp_pareto(o, &prm, 4, pl, pts, ERR));
  EXPECT_EARG(fp_pareto(g, NULL, 4, pl, pts, ERR));
  EXPECT_EARG(fp_pareto(g, &prm, 4, pl, NULL, ERR));
  EXPECT_EARG(fp_pareto(g, &prm, -1, pl, pts, ERR));
  EXPECT_EARG(fp_pareto(g, &prm, 4, NULL, pts, ERR));
  ck_assert_ptr_nonnull(fp_glpk_version());
  fp_plan_destroy(p);
  fp_graph_destroy(o);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(planner_h) {
  fp_graph *g = finalized(), *o = open_graph();
  fp_plan *p = fp_plan_create();
  fp_plan_request req;
  ck_assert_ptr_null(fp_planner_option_name((fp_planner_option)-1));
  ck_assert_ptr_null(fp_planner_option_name(FP_PLANNER_OPT_COUNT_));
  ck_assert_int_gt(fp_planner_count(), 0);
  ck_assert_ptr_null(fp_planner_at(-1));
  ck_assert_ptr_null(fp_planner_at(fp_planner_count()));
  ck_assert_ptr_null(fp_planner_find(NULL));
  ck_assert_ptr_null(fp_planner_find("no-such-method"));
  const fp_planner *pl = fp_planner_default();
  ck_assert_ptr_nonnull(pl);
  ck_assert_int_eq(fp_planner_accepts(NULL, FP_PLANNER_OPT_I_JOBS), 0);
  ck_assert_int_eq(fp_planner_accepts(pl, (fp_planner_option)-1), 0);
  ck_assert_int_eq(fp_planner_accepts(pl, (fp_planner_option)99), 0);
  fp_plan_request_init(NULL, pl);
  fp_plan_request_init(&req, NULL); /* NULL: the default method's */
  ck_assert(req.ilp.time_limit_s > 0);
  EXPECT_EARG(fp_planner_run(NULL, g, &req, p, NULL, ERR));
  EXPECT_EARG(fp_planner_run(pl, NULL, &req, p, NULL, ERR));
  EXPECT_EARG(fp_planner_run(pl, o, &req, p, NULL, ERR));
  EXPECT_EARG(fp_planner_run(pl, g, NULL, p, NULL, ERR));
  EXPECT_EARG(fp_planner_run(pl, g, &req, NULL, NULL, ERR));
  req.ilp.time_limit_s = NAN;
  EXPECT_EARG(fp_planner_run(pl, g, &req, p, NULL, ERR));
  fp_plan_destroy(p);
  fp_graph_destroy(o);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(exec_h) {
  fp_graph *g = finalized(), *o = open_graph();
  fp_plan *p = fp_plan_create();
  fp_exec_params prm;
  fp_exec_report rep;
  int32_t kernels;
  uint64_t bytes;
  double secs;
  ck_assert_int_eq(fp_plan_make_eager(p, g, NULL), FP_OK);
  fp_exec_params_init(NULL);
  EXPECT_EARG(fp_exec_params_check(NULL, ERR));
  fp_exec_params_init(&prm);
  prm.repeat = -1;
  EXPECT_EARG(fp_exec_params_check(&prm, ERR));
  EXPECT_EARG(fp_exec_run(g, p, &prm, &rep, ERR));
  fp_exec_params_init(&prm);
  prm.rtol = NAN;
  EXPECT_EARG(fp_exec_params_check(&prm, ERR));
  fp_exec_report_free(NULL);
  EXPECT_EARG(fp_exec_run(NULL, p, NULL, &rep, ERR));
  EXPECT_EARG(fp_exec_run(o, p, NULL, &rep, ERR));
  EXPECT_EARG(fp_exec_run(g, NULL, NULL, &rep, ERR));
  EXPECT_EARG(fp_exec_run(g, p, NULL, NULL, ERR));
  /* Without the backend every CUDA call says so first (exec.h). */
  fp_status want = fp_exec_cuda_built() ? FP_EARG : FP_ENOTBUILT;
  fp_status avail = fp_exec_cuda_available(NULL);
  ck_assert(avail == FP_OK || avail == FP_ENOTBUILT || avail == FP_ENODEVICE);
  ck_assert_int_eq(
      fp_exec_cuda_compile_plan(NULL, p, NULL, &kernels, &bytes, &secs, NULL),
      want);
  ck_assert_int_eq(
      fp_exec_cuda_compile_plan(o, p, NULL, &kernels, &bytes, &secs, NULL),
      want);
  ck_assert_int_eq(fp_exec_cuda_compile_source(NULL, "sm_90", &bytes, NULL),
                   want);
  ck_assert_int_eq(fp_exec_cuda_compile_source("x", NULL, &bytes, NULL), want);
  fp_plan_destroy(p);
  fp_graph_destroy(o);
  fp_graph_destroy(g);
}
END_TEST

/* ---- the list -------------------------------------------------------------
 */

/* Reads a whole text file (NUL-terminated) or fails the test. */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  char *s = NULL;
  size_t n = 0, cap = 0, got;
  do {
    if (n + 4096 + 1 > cap) {
      cap = 2 * cap + 8192;
      s = realloc(s, cap);
      ck_assert_ptr_nonnull(s);
    }
    got = fread(s + n, 1, 4096, f);
    n += got;
  } while (got > 0);
  fclose(f);
  s[n] = '\0';
  return s;
}

START_TEST(every_exported_function_has_a_case) {
  const char *src = getenv("top_srcdir"), *bld = getenv("top_builddir");
  char path[4096];
  snprintf(path, sizeof path, "%s/libfuseplan.sym", bld ? bld : ".");
  char *sym = slurp(path);
  snprintf(path, sizeof path, "%s/tests/model/test_api_contract.c",
           src ? src : ".");
  char *me = slurp(path);
  int checked = 0, missing = 0;
  for (char *name = strtok(sym, "\n"); name; name = strtok(NULL, "\n")) {
    char call[256];
    snprintf(call, sizeof call, "%s(", name);
    checked++;
    if (!strstr(me, call)) {
      fprintf(stderr, "no contract case calls %s\n", name);
      missing++;
    }
  }
  ck_assert_int_ge(checked, 100);
  ck_assert_msg(missing == 0,
                "%d exported functions have no case in "
                "test_api_contract.c (listed above)",
                missing);
  free(sym);
  free(me);
}
END_TEST

int main(void) {
  Suite *s = suite_create("model/api_contract");
  TCase *tc = tcase_create("issue38");
  tcase_add_test(tc, plan_with_foreign_node_ids_is_refused);
  tcase_add_test(tc, unfinalized_graph_is_refused);
  tcase_add_test(tc, op_parse_null);
  tcase_add_test(tc, lower_bound_rejects_bad_time);
  tcase_add_test(tc, indexes_are_bounds_checked);
  suite_add_tcase(s, tc);
  tc = tcase_create("headers");
  tcase_add_test(tc, status_h);
  tcase_add_test(tc, graph_h_building);
  tcase_add_test(tc, graph_h_reading);
  tcase_add_test(tc, plan_h);
  tcase_add_test(tc, eval_h);
  tcase_add_test(tc, json_h);
  tcase_add_test(tc, io_h);
  tcase_add_test(tc, peak_bound_h);
  tcase_add_test(tc, limits_h);
  tcase_add_test(tc, heuristics_h);
  tcase_add_test(tc, solver_h);
  tcase_add_test(tc, planner_h);
  tcase_add_test(tc, exec_h);
  suite_add_tcase(s, tc);
  tc = tcase_create("list");
  tcase_add_test(tc, every_exported_function_has_a_case);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
