/*
 * test_batch.c -- the pieces of `fuseplan batch` below the processes:
 * SHA-256 and item ids (stable, path-free, sensitive to every setting),
 * item records and manifest lines through JSON, cuts of consecutive nodes
 * (connectedness against a brute-force check, the window identities of a
 * cut's costs, determinism), and the decisions greedy fusion reports
 * (each fusion it makes is one accepted decision).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "batch/batch.h"
#include "batch/batch_json.h"
#include "batch/expand.h"
#include "heuristics/heuristics.h"
#include "model/eval.h"
#include "model/io.h"
#include "solver/solver.h"
#include "solver/window/cut.h"
#include "tests/testutil.h"

START_TEST(sha256_known_vectors) {
  char hex[65];
  fp_sha256_hex("abc", 3, hex);
  ck_assert_str_eq(
      hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  fp_sha256_hex("", 0, hex);
  ck_assert_str_eq(
      hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}
END_TEST

static fp_batch_item base_item(void) {
  fp_batch_item it;
  memset(&it, 0, sizeof it);
  it.source = "/some/where/g.json";
  it.inductor = it.load_error = "";
  memset(it.graph_sha256, 'a', 64);
  snprintf(it.objective, sizeof it.objective, "traffic");
  snprintf(it.method, sizeof it.method, "auto");
  it.traffic_limit = UINT64_MAX;
  it.time_limit_s = 10;
  it.gap = FP_ILP_DEFAULT_GAP, it.gap2 = FP_ILP_DEFAULT_GAP2;
  it.seed = 1;
  return it;
}

START_TEST(item_ids_hash_the_spec_and_version_only) {
  fp_batch_item a = base_item(), b = base_item();
  char spec[1024], all[1200], hex[65];
  fp_batch_item_finish(&a, "1.0");
  fp_batch_item_spec(&a, spec, sizeof spec);
  snprintf(all, sizeof all, "%sversion 1.0\n", spec);
  fp_sha256_hex(all, strlen(all), hex);
  ck_assert_str_eq(a.id, hex);
  b.source = "elsewhere/copy.json.gz";
  fp_batch_item_finish(&b, "1.0");
  ck_assert_str_eq(a.id, b.id); /* the same content anywhere: one id */
  /* The default tolerances are not in the spec: older items keep ids. */
  ck_assert_ptr_null(strstr(spec, "gap"));
  /* Every setting that decides the result changes the id. */
  for (int k = 0; k < 11; k++) {
    fp_batch_item c = base_item();
    switch (k) {
    case 0:
      c.graph_sha256[0] = 'b';
      break;
    case 1:
      c.cut = (fp_cut){3, 12};
      break;
    case 2:
      snprintf(c.objective, sizeof c.objective, "peak");
      break;
    case 3:
      c.peak = (fp_peak_spec){FP_PEAK_PERCENT, 90};
      break;
    case 4:
      c.traffic_limit = 5;
      break;
    case 5:
      snprintf(c.method, sizeof c.method, "ilp");
      break;
    case 6:
      c.time_limit_s = 10.5;
      break;
    case 7:
      c.seed = 2;
      break;
    case 8:
      c.gap2 = 0;
      break;
    case 9:
      c.gap = 1e-4;
      break;
    default:
      c.n_compare = 1;
      snprintf(c.compare[0], sizeof c.compare[0], "greedy");
    }
    fp_batch_item_finish(&c, "1.0");
    ck_assert_str_ne(c.id, a.id);
  }
  fp_batch_item_finish(&b, "1.1");
  ck_assert_str_ne(a.id, b.id);
}
END_TEST

START_TEST(records_round_trip) {
  fp_batch_record r, back;
  fp_error err;
  fp_batch_record_init(&r);
  memset(r.id, 'c', 64);
  snprintf(r.graph, sizeof r.graph, "gpt2.fwd@3+12");
  snprintf(r.source, sizeof r.source, "dir/with \"quotes\".json");
  snprintf(r.status, sizeof r.status, "optimal");
  r.cut_first = 3;
  r.cut_count = 12;
  r.traffic_bytes = (int64_t)1 << 52;
  r.peak_bytes = 77;
  r.kernels = 4;
  r.bound = 1.5;
  r.proven = 2;
  r.gold = true;
  r.n_compare = 2;
  snprintf(r.compare[0].method, 32, "greedy-lowmem");
  r.compare[0].present = true;
  r.compare[0].traffic_bytes = 99;
  r.compare[0].peak_bytes = 3;
  r.compare[0].kernels = 5;
  snprintf(r.compare[1].method, 32, "inductor");
  char *text = fp_batch_record_to_json(&r, &err);
  ck_assert_ptr_nonnull(text);
  ck_assert_ptr_nonnull(strstr(text, "\"greedy_lowmem_traffic_bytes\": 99"));
  ck_assert_ptr_nonnull(strstr(text, "\"inductor_traffic_bytes\": null"));
  ck_assert_int_eq(text[strlen(text) - 1], '\n');
  ck_assert(strchr(text, '\n') == text + strlen(text) - 1); /* one line */
  ck_assert_int_eq(fp_batch_record_parse(text, strlen(text), "t", &back, &err),
                   FP_OK);
  ck_assert_str_eq(back.graph, r.graph);
  ck_assert_str_eq(back.source, r.source);
  ck_assert_int_eq(back.traffic_bytes, r.traffic_bytes);
  ck_assert_int_eq(back.cut_first, 3);
  ck_assert(back.gold && back.proven == 2 && back.bound == 1.5);
  ck_assert(isnan(back.gap));
  ck_assert_int_eq(back.n_compare, 2);
  ck_assert(back.compare[0].present && back.compare[0].traffic_bytes == 99);
  ck_assert(!back.compare[1].present);
  free(text);
  ck_assert_int_eq(fp_batch_record_parse("{\"id\": 3}", 9, "t", &back, &err),
                   FP_EINPUT);
}
END_TEST

START_TEST(manifest_lines) {
  fp_batch_line ln;
  fp_error err;
  const char *ok = "{\"graph\": \"g/*.json\", \"peak_limit\": [\"eager\", "
                   "\"80%\", 4096], \"cut\": {\"nodes\": \"12..40\", "
                   "\"count\": 25}, \"time_limit\": 2.5}";
  ck_assert_int_eq(fp_batch_line_parse(ok, strlen(ok), "m:1", &ln, &err),
                   FP_OK);
  ck_assert_str_eq(ln.graph, "g/*.json");
  ck_assert_str_eq(ln.peak_limit, "eager,80%,4096");
  ck_assert_str_eq(ln.cut_nodes, "12..40");
  ck_assert_str_eq(ln.cut_count, "25");
  ck_assert_str_eq(ln.time_limit, "2.5");
  /* A number too large for digits is kept as a literal the options read
   * (it was "expected a string"). */
  const char *huge = "{\"graph\": \"g\", \"time_limit\": 1e308, \"seed\": 7}";
  ck_assert_int_eq(fp_batch_line_parse(huge, strlen(huge), "m:1", &ln, &err),
                   FP_OK);
  ck_assert(strtod(ln.time_limit, NULL) == 1e308);
  ck_assert_str_eq(ln.seed, "7");
  const char *bad[][2] = {
      {"{\"graph\": \"g\", \"colour\": 1}", "m:1: unknown key 'colour'"},
      {"{\"peak_limit\": \"eager\"}", "m:1: missing key 'graph'"},
      {"{\"graph\": \"g\", \"cut\": {\"nodes\": \"1..2\"}}", "needs nodes and"},
      {"{\"graph\": \"g\", \"cut\": {\"size\": 3}}", "cut: unknown key 'size'"},
      {"{\"graph\": [1]}", "m:1: graph: expected a string"},
      {"[1, 2]", "expected a JSON object"},
      {"{\"graph\": ", "m:1"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_int_eq(
        fp_batch_line_parse(bad[i][0], strlen(bad[i][0]), "m:1", &ln, &err),
        FP_EINPUT);
    ck_assert_msg(strstr(err.msg, bad[i][1]), "%s: %s", bad[i][0], err.msg);
  }
}
END_TEST

/* ---- the parent's memory and its inputs (expand.h) ------------------------
 */

/* A fresh directory under /tmp, into dir[64]. */
static void make_tmpdir(char dir[64]) {
  snprintf(dir, 64, "/tmp/fp_test_batch_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
}

/* Resets this process's peak resident set (VmHWM) to its current one. */
static void reset_peak_rss(void) {
  FILE *f = fopen("/proc/self/clear_refs", "w");
  ck_assert_ptr_nonnull(f);
  fputs("5", f);
  fclose(f);
}

/* This process's peak resident set in KiB (VmHWM). */
static long peak_rss_kib(void) {
  char line[256];
  long kib = -1;
  FILE *f = fopen("/proc/self/status", "r");
  ck_assert_ptr_nonnull(f);
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "VmHWM:", 6) == 0)
      kib = atol(line + 6);
  fclose(f);
  ck_assert_int_gt(kib, 0);
  return kib;
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

START_TEST(graph_hash_streams_under_the_input_limit) {
  char dir[64], plain[128], gz[128], bomb[128], hex[65], want[65];
  fp_error err;
  make_tmpdir(dir);
  snprintf(plain, sizeof plain, "%s/g.json", dir);
  snprintf(gz, sizeof gz, "%s/g.json.gz", dir);
  snprintf(bomb, sizeof bomb, "%s/bomb.json.gz", dir);
  write_text(plain, "{\"abc\": 1}\n");
  gzFile z = gzopen(gz, "wb");
  gzputs(z, "{\"abc\": 1}\n");
  gzclose(z);
  /* A file and its .gz have one hash: the content's. */
  fp_sha256_hex("{\"abc\": 1}\n", 11, want);
  ck_assert_int_eq(fp_batch_graph_sha256(plain, hex, &err), FP_OK);
  ck_assert_str_eq(hex, want);
  ck_assert_int_eq(fp_batch_graph_sha256(gz, hex, &err), FP_OK);
  ck_assert_str_eq(hex, want);
  /* 96 MiB of zeros in a small gzip file, over a 64 MiB limit: refused,
   * naming it, without the process ever holding it. */
  static char zeros[1 << 20];
  z = gzopen(bomb, "wb1");
  for (int i = 0; i < 96; i++)
    ck_assert_int_eq(gzwrite(z, zeros, sizeof zeros), (int)sizeof zeros);
  gzclose(z);
  fp_set_max_input_bytes((uint64_t)64 << 20);
  reset_peak_rss();
  long base = peak_rss_kib();
  ck_assert_int_eq(fp_batch_graph_sha256(bomb, hex, &err), FP_ELIMIT);
  long grown = peak_rss_kib() - base;
  fp_set_max_input_bytes(0);
  ck_assert_msg(strstr(err.msg, bomb) && strstr(err.msg, "larger than"), "%s",
                err.msg);
  ck_assert_msg(grown < 16 << 10, "hashing took %ld KiB", grown);
  unlink(plain);
  unlink(gz);
  unlink(bomb);
  rmdir(dir);
}
END_TEST

typedef struct warnings {
  int n;
  char last[512];
} warnings;

static void count_warning(const char *msg, void *ctx) {
  warnings *w = ctx;
  w->n++;
  snprintf(w->last, sizeof w->last, "%s", msg);
}

/* The settings every test item gets: one eager limit. */
static void base_spec(fp_batch_spec *spec) {
  memset(spec, 0, sizeof *spec);
  spec->proto = base_item();
  spec->n_peaks = 1;
}

START_TEST(a_fifo_in_a_directory_is_skipped_unopened) {
  char dir[64], path[128];
  fp_batch_spec spec;
  fp_error err;
  warnings w = {0, ""};
  make_tmpdir(dir);
  snprintf(path, sizeof path, "%s/a.json", dir);
  write_text(path, "{}\n");
  snprintf(path, sizeof path, "%s/b.json", dir);
  ck_assert_int_eq(mkfifo(path, 0600), 0);
  base_spec(&spec);
  fp_batch_items *L = fp_batch_items_create("1.0");
  fp_batch_items_on_warning(L, count_warning, &w);
  alarm(10); /* opening the FIFO would wait for a writer for ever */
  ck_assert_int_eq(
      fp_batch_items_add_path(L, &spec, dir, NULL, "argument 1", &err), FP_OK);
  alarm(0);
  int32_t n;
  const fp_batch_item *items = fp_batch_items_get(L, &n);
  ck_assert_int_eq(n, 1);
  ck_assert(strstr(items[0].source, "/a.json") && !items[0].load_error[0]);
  ck_assert_int_eq(w.n, 1);
  ck_assert_msg(strstr(w.last, "argument 1") && strstr(w.last, "b.json") &&
                    strstr(w.last, "not a regular file"),
                "%s", w.last);
  fp_batch_items_destroy(L);
  unlink(path);
  snprintf(path, sizeof path, "%s/a.json", dir);
  unlink(path);
  rmdir(dir);
}
END_TEST

static fp_status resolve_base(const fp_batch_line *ln, const char *where,
                              fp_batch_spec *spec, void *ctx, fp_error *err) {
  (void)ln, (void)where, (void)ctx, (void)err;
  base_spec(spec);
  return FP_OK;
}

START_TEST(a_manifest_of_200k_lines_in_bounded_memory) {
  char dir[64], graph[128], manifest[128];
  fp_error err;
  make_tmpdir(dir);
  snprintf(graph, sizeof graph, "%s/g.json", dir);
  snprintf(manifest, sizeof manifest, "%s/m.jsonl", dir);
  write_text(graph, "{}\n");
  FILE *f = fopen(manifest, "w");
  ck_assert_ptr_nonnull(f);
  for (int i = 0; i < 200000; i++)
    fputs("{\"graph\": \"g.json\"}\n", f);
  fclose(f);
  fp_batch_items *L = fp_batch_items_create("1.0");
  reset_peak_rss();
  long base = peak_rss_kib();
  ck_assert_int_eq(
      fp_batch_items_add_manifest(L, manifest, resolve_base, NULL, &err),
      FP_OK);
  long grown = peak_rss_kib() - base;
  int32_t n;
  fp_batch_items_get(L, &n);
  ck_assert_int_eq(n, 200000);
  /* docs/cluster.md: at most 200,000 items of about half a KiB each */
  ck_assert_msg(grown < 320 << 10, "200k items took %ld KiB", grown);
  fp_batch_items_destroy(L);
  unlink(graph);
  unlink(manifest);
  rmdir(dir);
}
END_TEST

/* Brute force: nodes of c connected through buffers (BFS). */
static int connected_slow(const fp_graph *g, fp_cut c) {
  int32_t seen[64] = {0}, stack[64], top = 0, n = 1;
  seen[0] = 1;
  stack[top++] = 0;
  while (top) {
    int32_t i = stack[--top];
    for (int32_t j = 0; j < c.count; j++) {
      if (seen[j])
        continue;
      int32_t a = c.first + (i < j ? i : j), b = c.first + (i < j ? j : i);
      const fp_node *nb = fp_graph_node(g, b);
      bool edge = false;
      for (int32_t r = 0; r < nb->n_reads && !edge; r++)
        edge = fp_graph_buffer(g, nb->reads[r].buffer)->writer == a;
      if (edge)
        seen[j] = 1, stack[top++] = j, n++;
    }
  }
  return n == c.count;
}

START_TEST(cuts_connected_and_costed_as_windows) {
  tu_rng r = {(uint64_t)_i * 7919 + 11};
  fp_graph *g = tu_random_graph(&r, 12, 30);
  int32_t n = fp_graph_node_count(g);
  for (int k = 0; k < 20; k++) {
    fp_cut c;
    c.count = 1 + (int32_t)tu_below(&r, (uint32_t)(n < 10 ? n : 10));
    c.first = (int32_t)tu_below(&r, (uint32_t)(n - c.count + 1));
    ck_assert_int_eq(fp_cut_connected(g, c), connected_slow(g, c));
    fp_graph *sg = NULL;
    fp_error err;
    ck_assert_int_eq(fp_graph_cut(g, c, &sg, &err), FP_OK);
    ck_assert_int_eq(fp_graph_node_count(sg), c.count);
    for (int32_t i = 0; i < c.count; i++)
      ck_assert_str_eq(fp_graph_node(sg, i)->name,
                       fp_graph_node(g, c.first + i)->name);
    /* The cut's eager traffic is what its steps cost in the whole eager
     * program (window.h's identity). */
    fp_plan *we = fp_plan_create(), *se = fp_plan_create();
    fp_step tl[64];
    fp_metrics wm, sm;
    ck_assert_int_eq(fp_plan_make_eager(we, g, NULL), FP_OK);
    ck_assert_int_eq(fp_plan_make_eager(se, sg, NULL), FP_OK);
    ck_assert_int_eq(fp_plan_eval_k(g, we, 0, &wm, tl, NULL), FP_OK);
    ck_assert_int_eq(fp_plan_eval_k(sg, se, 0, &sm, NULL, NULL), FP_OK);
    uint64_t window = 0;
    for (int32_t t = c.first; t < c.first + c.count; t++)
      window += tl[t].read_bytes + tl[t].write_bytes;
    ck_assert_uint_eq(sm.traffic_bytes, window);
    fp_plan_destroy(we);
    fp_plan_destroy(se);
    char name[256];
    snprintf(name, sizeof name, "%s@%d+%d", fp_graph_name(g), (int)c.first,
             (int)c.count);
    ck_assert_str_eq(fp_graph_name(sg), name);
    fp_graph_destroy(sg);
  }
  ck_assert_int_eq(
      fp_graph_cut(g, (fp_cut){n - 1, 2}, &(fp_graph *){NULL}, NULL), FP_EARG);
  fp_cut a[16], b[16];
  int32_t na, nb;
  ck_assert_int_eq(fp_cut_choose(g, 3, 8, 16, 5, a, &na, NULL), FP_OK);
  ck_assert_int_eq(fp_cut_choose(g, 3, 8, 16, 5, b, &nb, NULL), FP_OK);
  ck_assert_int_eq(na, nb);
  ck_assert(memcmp(a, b, (size_t)na * sizeof *a) == 0);
  for (int32_t i = 0; i < na; i++) {
    ck_assert(a[i].count >= 3 && a[i].count <= 8);
    ck_assert(connected_slow(g, a[i]));
    ck_assert(i == 0 || a[i - 1].first < a[i].first ||
              (a[i - 1].first == a[i].first && a[i - 1].count < a[i].count));
  }
  fp_graph_destroy(g);
}
END_TEST

typedef struct tally {
  int32_t accepted, n;
  bool ordered;
} tally;

static int count_decision(const fp_fusion_decision *d, void *ctx) {
  tally *t = ctx;
  t->n++;
  t->accepted += d->fused;
  t->ordered = t->ordered && d->u < d->v && d->size_u >= 1 && d->size_v >= 1;
  return 0;
}

START_TEST(decisions_are_greedys_fusions) {
  tu_rng r = {(uint64_t)_i * 104729 + 3};
  fp_graph *g = tu_random_graph(&r, 4, 40);
  for (int m = FP_METHOD_GREEDY; m <= FP_METHOD_GREEDY_LOWMEM; m++) {
    fp_fusion_params prm;
    fp_fusion_params_init(&prm, (fp_method)m);
    fp_plan *p = fp_plan_create();
    tally t = {0, 0, true};
    fp_error err;
    ck_assert_int_eq(fp_fuse(g, &prm, p, &err), FP_OK);
    ck_assert_int_eq(fp_fusion_decisions(g, &prm, count_decision, &t, &err),
                     FP_OK);
    ck_assert(t.ordered);
    ck_assert_int_eq(t.accepted,
                     fp_graph_node_count(g) - fp_plan_group_count(p));
    fp_plan_destroy(p);
  }
  fp_fusion_params prm;
  fp_fusion_params_init(&prm, FP_METHOD_GREEDY_PEAK);
  ck_assert_int_eq(
      fp_fusion_decisions(g, &prm, count_decision, &(tally){0, 0, true}, NULL),
      FP_EARG);
  fp_graph_destroy(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("batch/batch");
  TCase *tc = tcase_create("batch");
  tcase_add_test(tc, sha256_known_vectors);
  tcase_add_test(tc, item_ids_hash_the_spec_and_version_only);
  tcase_add_test(tc, records_round_trip);
  tcase_add_test(tc, manifest_lines);
  tcase_add_test(tc, graph_hash_streams_under_the_input_limit);
  tcase_add_test(tc, a_fifo_in_a_directory_is_skipped_unopened);
  tcase_add_test(tc, a_manifest_of_200k_lines_in_bounded_memory);
  tcase_add_loop_test(tc, cuts_connected_and_costed_as_windows, 0, 20);
  tcase_add_loop_test(tc, decisions_are_greedys_fusions, 0, 40);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
