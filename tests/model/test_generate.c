/*
 * test_generate.c -- Check tests for the graph generator (model/generate.c).
 *
 * What is held: exact node counts, determinism (two runs compared item by
 * item), seeds that change the graph, bad parameters rejected, and the
 * NN-like structure the planner and solvers rely on (all three kinds,
 * multi-reader buffers, fusible pairs, saved activations, gradients as
 * outputs, no dead nodes, realistic tensor sizes).
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/generate.h"

#define N_FAMILIES FP_GEN_FAMILY_COUNT_
#define MIB ((uint64_t)1 << 20)

static const uint64_t seeds[] = {1, 2, 3, 42, 12345, UINT64_MAX};
#define N_SEEDS ((int)(sizeof seeds / sizeof seeds[0]))

/* ---- helpers ------------------------------------------------------------ */

/* Generates a graph that must succeed; fails the test otherwise. */
static fp_graph *gen_ok(int family, int32_t size, uint64_t seed) {
  fp_gen_params p;
  fp_gen_params_init(&p);
  p.family = (fp_gen_family)family;
  p.size = size;
  p.seed = seed;
  fp_graph *g = NULL;
  fp_error e;
  memset(&e, 0, sizeof e);
  fp_status st = fp_generate(&p, &g, &e);
  ck_assert_msg(st == FP_OK, "%s n=%d seed=%llu: %s (%s)",
                fp_gen_family_name(p.family), (int)size,
                (unsigned long long)seed, fp_status_name(st), e.msg);
  ck_assert_ptr_nonnull(g);
  ck_assert(fp_graph_is_finalized(g));
  return g;
}

/* Runs fp_generate with raw parameters; returns the status and checks the
 * contract of a failure (no graph, an error record with a message). */
static fp_status gen_fail(int family, int32_t size) {
  fp_gen_params p;
  fp_gen_params_init(&p);
  p.family = (fp_gen_family)family;
  p.size = size;
  fp_graph *g = (fp_graph *)&p; /* must be reset to NULL */
  fp_error e;
  memset(&e, 0, sizeof e);
  fp_status st = fp_generate(&p, &g, &e);
  if (st != FP_OK) {
    ck_assert_ptr_null(g);
    ck_assert_int_eq(e.code, st);
    ck_assert_msg(e.msg[0] != '\0', "empty error message");
  } else {
    fp_graph_destroy(g);
  }
  return st;
}

/* Compares two nodes; writes the first difference into why. */
static bool node_same(const fp_node *a, const fp_node *b, char *why, size_t n) {
  bool same = strcmp(a->name, b->name) == 0 && a->kind == b->kind &&
              a->numel == b->numel && a->rnumel == b->rnumel &&
              a->n_reads == b->n_reads && a->n_writes == b->n_writes &&
              a->op.fn == b->op.fn && a->op.m == b->op.m &&
              a->op.n == b->op.n && a->op.k == b->op.k &&
              a->op.trans_a == b->op.trans_a &&
              a->op.trans_b == b->op.trans_b &&
              memcmp(&a->op.alpha, &b->op.alpha, sizeof(double)) == 0;
  for (int32_t i = 0; same && i < a->n_reads; i++)
    same = a->reads[i].buffer == b->reads[i].buffer &&
           a->reads[i].index == b->reads[i].index &&
           a->reads[i].bytes == b->reads[i].bytes;
  for (int32_t i = 0; same && i < a->n_writes; i++)
    same = a->writes[i] == b->writes[i];
  if (!same)
    snprintf(why, n, "node '%s' vs '%s'", a->name, b->name);
  return same;
}

/* Compares two buffers; writes the first difference into why. */
static bool buffer_same(const fp_buffer *a, const fp_buffer *b, char *why,
                        size_t n) {
  bool same = strcmp(a->name, b->name) == 0 && a->bytes == b->bytes &&
              a->input == b->input && a->freeable == b->freeable &&
              a->output == b->output && a->writer == b->writer &&
              a->n_readers == b->n_readers;
  for (int32_t i = 0; same && i < a->n_readers; i++)
    same = a->readers[i] == b->readers[i];
  if (!same)
    snprintf(why, n, "buffer '%s' vs '%s'", a->name, b->name);
  return same;
}

/* True when a and b agree in everything but their name and source (which
 * carry the seed); otherwise why says where they first differ. */
static bool graph_same(const fp_graph *a, const fp_graph *b, char *why,
                       size_t n) {
  snprintf(why, n, "counts differ");
  if (fp_graph_node_count(a) != fp_graph_node_count(b) ||
      fp_graph_buffer_count(a) != fp_graph_buffer_count(b) ||
      fp_graph_output_count(a) != fp_graph_output_count(b) ||
      fp_graph_unfusible_count(a) != fp_graph_unfusible_count(b) ||
      fp_graph_max_fusion_size(a) != fp_graph_max_fusion_size(b))
    return false;
  for (int32_t v = 0; v < fp_graph_node_count(a); v++)
    if (!node_same(fp_graph_node(a, v), fp_graph_node(b, v), why, n))
      return false;
  for (int32_t b2 = 0; b2 < fp_graph_buffer_count(a); b2++)
    if (!buffer_same(fp_graph_buffer(a, b2), fp_graph_buffer(b, b2), why, n))
      return false;
  snprintf(why, n, "outputs or unfusible pairs differ");
  for (int32_t i = 0; i < fp_graph_output_count(a); i++)
    if (fp_graph_output(a, i) != fp_graph_output(b, i))
      return false;
  for (int32_t i = 0; i < fp_graph_unfusible_count(a); i++) {
    int32_t u1, v1, u2, v2;
    fp_graph_unfusible_pair(a, i, &u1, &v1);
    fp_graph_unfusible_pair(b, i, &u2, &v2);
    if (u1 != u2 || v1 != v2)
      return false;
  }
  return true;
}

static bool starts_with(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Whether some buffer is shared by two nodes (writer and reader, or two
 * readers) that are compatible (want = true) / incompatible non-externs
 * (want = false). */
static bool has_sharing_pair(const fp_graph *g, bool want) {
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++) {
    const fp_buffer *buf = fp_graph_buffer(g, b);
    for (int32_t i = 0; i < buf->n_readers; i++) {
      int32_t r = buf->readers[i];
      int32_t o = i > 0 ? buf->readers[i - 1] : buf->writer;
      if (o < 0 || fp_graph_node(g, r)->kind == FP_KIND_EXTERN ||
          fp_graph_node(g, o)->kind == FP_KIND_EXTERN)
        continue;
      if (fp_graph_compatible(g, o, r) == want)
        return true;
    }
  }
  return false;
}

/* Whether a buffer written in the first half of the program is still read
 * in the second half (an activation saved for the backward pass).  For
 * the NN families the writer must be a forward node, the reader a
 * backward one. */
static bool has_saved_activation(const fp_graph *g, bool named) {
  int32_t half = fp_graph_node_count(g) / 2;
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++) {
    const fp_buffer *buf = fp_graph_buffer(g, b);
    if (buf->writer < 0 || buf->writer >= half || buf->n_readers == 0)
      continue;
    int32_t last = buf->readers[buf->n_readers - 1];
    if (last < half)
      continue;
    if (!named || (!starts_with(fp_graph_node(g, buf->writer)->name, "bwd.") &&
                   starts_with(fp_graph_node(g, last)->name, "bwd.")))
      return true;
  }
  return false;
}

/* ---- names and parameters ------------------------------------------------ */

START_TEST(test_params_init) {
  fp_gen_params p;
  memset(&p, 0x5a, sizeof p);
  fp_gen_params_init(&p);
  ck_assert_int_eq(p.family, FP_GEN_TRANSFORMER);
  ck_assert_int_eq(p.size, FP_GEN_DEFAULT_SIZE);
  ck_assert_uint_eq(p.seed, 1);
}
END_TEST

START_TEST(test_family_names) {
  static const char *const want[] = {"transformer", "convnet", "mlp", "random"};
  ck_assert_int_eq(N_FAMILIES, 4);
  for (int f = 0; f < N_FAMILIES; f++) {
    ck_assert_str_eq(fp_gen_family_name((fp_gen_family)f), want[f]);
    ck_assert_int_eq(fp_gen_family_parse(want[f]), f);
  }
  ck_assert_str_eq(fp_gen_family_name((fp_gen_family)N_FAMILIES), "unknown");
  ck_assert_str_eq(fp_gen_family_name((fp_gen_family)-1), "unknown");
  ck_assert_int_eq(fp_gen_family_parse("Transformer"), -1);
  ck_assert_int_eq(fp_gen_family_parse(""), -1);
  ck_assert_int_eq(fp_gen_family_parse("mlp "), -1);
  ck_assert_int_eq(fp_gen_family_parse(NULL), -1);
}
END_TEST

START_TEST(test_bad_params) {
  ck_assert_int_eq(gen_fail(FP_GEN_MLP, FP_GEN_MIN_SIZE - 1), FP_EARG);
  ck_assert_int_eq(gen_fail(FP_GEN_MLP, 0), FP_EARG);
  ck_assert_int_eq(gen_fail(FP_GEN_RANDOM, -5), FP_EARG);
  ck_assert_int_eq(gen_fail(FP_GEN_CONVNET, FP_GEN_MAX_SIZE + 1), FP_EARG);
  ck_assert_int_eq(gen_fail(FP_GEN_TRANSFORMER, INT32_MAX), FP_EARG);
  ck_assert_int_eq(gen_fail(N_FAMILIES, 100), FP_EARG);
  ck_assert_int_eq(gen_fail(-1, 100), FP_EARG);
  ck_assert_int_eq(gen_fail(FP_GEN_RANDOM, FP_GEN_MIN_SIZE), FP_OK);
  fp_gen_params p;
  fp_gen_params_init(&p);
  fp_graph *g = NULL;
  fp_error e;
  ck_assert_int_eq(fp_generate(NULL, &g, &e), FP_EARG);
  ck_assert_ptr_null(g);
  ck_assert_int_eq(fp_generate(&p, NULL, &e), FP_EARG);
  /* A NULL error record is allowed. */
  p.size = 3;
  ck_assert_int_eq(fp_generate(&p, &g, NULL), FP_EARG);
  p.size = 50;
  ck_assert_int_eq(fp_generate(&p, &g, NULL), FP_OK);
  ck_assert_int_eq(fp_graph_node_count(g), 50);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(test_name_and_source) {
  fp_graph *g = gen_ok(FP_GEN_CONVNET, 1000, 42);
  ck_assert_str_eq(fp_graph_name(g), "gen.convnet.n1000.s42");
  ck_assert_str_eq(fp_graph_source(g),
                   "fuseplan gen --family convnet --size 1000 --seed 42");
  ck_assert_int_eq(fp_graph_max_fusion_size(g), FP_DEFAULT_MAX_FUSION_SIZE);
  fp_graph_destroy(g);
  g = gen_ok(FP_GEN_RANDOM, 10, UINT64_MAX);
  ck_assert_str_eq(fp_graph_name(g), "gen.random.n10.s18446744073709551615");
  fp_graph_destroy(g);
}
END_TEST

/* ---- counts, determinism, seeds -------------------------------------------
 */

/* Every size from the minimum to 400, and some larger ones, hit exactly. */
START_TEST(test_exact_count) {
  static const int32_t more[] = {401, 512, 999, 1000, 1001, 2048, 4097};
  int f = _i;
  for (int32_t n = FP_GEN_MIN_SIZE; n <= 400; n++)
    for (int s = 0; s < 2; s++) {
      fp_graph *g = gen_ok(f, n, seeds[(n + s) % N_SEEDS]);
      ck_assert_int_eq(fp_graph_node_count(g), n);
      fp_graph_destroy(g);
    }
  for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
    fp_graph *g = gen_ok(f, more[i], seeds[i % N_SEEDS]);
    ck_assert_int_eq(fp_graph_node_count(g), more[i]);
    fp_graph_destroy(g);
  }
}
END_TEST

START_TEST(test_deterministic) {
  static const int32_t sizes[] = {10, 37, 100, 1000};
  int f = _i;
  char why[256];
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    for (int s = 0; s < N_SEEDS; s++) {
      fp_graph *a = gen_ok(f, sizes[i], seeds[s]);
      fp_graph *b = gen_ok(f, sizes[i], seeds[s]);
      ck_assert_msg(graph_same(a, b, why, sizeof why), "%s n=%d: %s",
                    fp_gen_family_name((fp_gen_family)f), (int)sizes[i], why);
      ck_assert_str_eq(fp_graph_name(a), fp_graph_name(b));
      ck_assert_str_eq(fp_graph_source(a), fp_graph_source(b));
      fp_graph_destroy(a);
      fp_graph_destroy(b);
    }
}
END_TEST

/* Different seeds give structurally different graphs (not just names). */
START_TEST(test_seeds_differ) {
  static const int32_t sizes[] = {37, 100, 1000};
  int f = _i;
  char why[256];
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    fp_graph *g[N_SEEDS];
    for (int s = 0; s < N_SEEDS; s++)
      g[s] = gen_ok(f, sizes[i], seeds[s]);
    for (int s = 0; s < N_SEEDS; s++)
      for (int t = s + 1; t < N_SEEDS; t++)
        ck_assert_msg(!graph_same(g[s], g[t], why, sizeof why),
                      "%s n=%d: seeds %llu and %llu give the same graph",
                      fp_gen_family_name((fp_gen_family)f), (int)sizes[i],
                      (unsigned long long)seeds[s],
                      (unsigned long long)seeds[t]);
    for (int s = 0; s < N_SEEDS; s++)
      fp_graph_destroy(g[s]);
  }
}
END_TEST

/* Families differ from each other at the same size and seed. */
START_TEST(test_families_differ) {
  char why[256];
  fp_graph *g[N_FAMILIES];
  for (int f = 0; f < N_FAMILIES; f++)
    g[f] = gen_ok(f, 200, 7);
  for (int f = 0; f < N_FAMILIES; f++)
    for (int h = f + 1; h < N_FAMILIES; h++)
      ck_assert(!graph_same(g[f], g[h], why, sizeof why));
  for (int f = 0; f < N_FAMILIES; f++)
    fp_graph_destroy(g[f]);
}
END_TEST

/* ---- structure ------------------------------------------------------------
 */

/* Per-graph invariants that hold at every size: every node has semantics,
 * buffers are float32 tensors of realistic size, every node output is
 * used (read or an output), outputs are produced by nodes. */
static void check_basic(const fp_graph *g) {
  for (int32_t v = 0; v < fp_graph_node_count(g); v++) {
    const fp_node *n = fp_graph_node(g, v);
    ck_assert_msg(n->op.fn != FP_OP_NONE, "node '%s' has no op", n->name);
    ck_assert_int_eq(n->n_writes, 1);
    ck_assert_int_eq(n->op.fn == FP_OP_MATMUL, n->kind == FP_KIND_EXTERN);
  }
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++) {
    const fp_buffer *buf = fp_graph_buffer(g, b);
    ck_assert_msg(
        buf->bytes >= 4 && buf->bytes % 4 == 0 && buf->bytes <= 64 * MIB,
        "buffer '%s': %llu bytes", buf->name, (unsigned long long)buf->bytes);
    if (buf->input) {
      ck_assert_msg(buf->n_readers > 0, "input '%s' is unused", buf->name);
      ck_assert_int_eq(buf->freeable, starts_with(buf->name, "data."));
      ck_assert(!buf->output);
    } else {
      ck_assert_msg(buf->n_readers > 0 || buf->output,
                    "'%s' is dead: neither read nor an output", buf->name);
    }
  }
  ck_assert_int_gt(fp_graph_output_count(g), 0);
  for (int32_t i = 0; i < fp_graph_output_count(g); i++)
    ck_assert_int_ge(fp_graph_buffer(g, fp_graph_output(g, i))->writer, 0);
}

START_TEST(test_basic_invariants) {
  static const int32_t sizes[] = {10, 11, 12, 13, 15, 20, 37, 64, 100, 333};
  int f = _i;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    for (int s = 0; s < N_SEEDS; s++) {
      fp_graph *g = gen_ok(f, sizes[i], seeds[s]);
      check_basic(g);
      fp_graph_destroy(g);
    }
}
END_TEST

/* Counts of node kinds and the most readers of one buffer. */
static void census(const fp_graph *g, int32_t kinds[3], int32_t *max_readers) {
  kinds[0] = kinds[1] = kinds[2] = 0;
  *max_readers = 0;
  for (int32_t v = 0; v < fp_graph_node_count(g); v++)
    kinds[fp_graph_node(g, v)->kind]++;
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++)
    if (fp_graph_buffer(g, b)->n_readers > *max_readers)
      *max_readers = fp_graph_buffer(g, b)->n_readers;
}

/* What makes the graphs interesting to plan, at size >= 100. */
static void check_nn_like(const fp_graph *g, int f) {
  int32_t kinds[3], max_readers;
  census(g, kinds, &max_readers);
  const char *name = fp_graph_name(g);
  ck_assert_msg(kinds[FP_KIND_POINTWISE] > 0, "%s: no pointwise", name);
  ck_assert_msg(kinds[FP_KIND_REDUCTION] > 0, "%s: no reduction", name);
  ck_assert_msg(kinds[FP_KIND_EXTERN] > 0, "%s: no extern", name);
  ck_assert_msg(max_readers >= 2, "%s: no multi-reader buffer", name);
  ck_assert_msg(has_sharing_pair(g, true), "%s: no fusible pair", name);
  ck_assert_msg(has_saved_activation(g, f != FP_GEN_RANDOM),
                "%s: no saved activation", name);
  bool freeable_read = false;
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++)
    freeable_read |=
        fp_graph_buffer(g, b)->freeable && fp_graph_buffer(g, b)->n_readers > 0;
  ck_assert_msg(freeable_read, "%s: no freeable input", name);
  if (f != FP_GEN_MLP)
    ck_assert_msg(has_sharing_pair(g, false), "%s: all pairs compatible", name);
}

/* The loss and the weight gradients (at least min_grads) are the outputs
 * of an NN family. */
static void check_outputs(const fp_graph *g, int32_t min_grads) {
  bool loss = false;
  int32_t grads = 0;
  for (int32_t i = 0; i < fp_graph_output_count(g); i++) {
    const char *nm = fp_graph_buffer(g, fp_graph_output(g, i))->name;
    if (strcmp(nm, "loss.out") == 0)
      loss = true;
    else if (starts_with(nm, "bwd."))
      grads++;
    else
      ck_abort_msg("%s: unexpected output '%s'", fp_graph_name(g), nm);
  }
  ck_assert_msg(loss, "%s: no loss output", fp_graph_name(g));
  ck_assert_int_ge(grads, min_grads);
}

START_TEST(test_structure) {
  static const int32_t sizes[] = {100, 101, 150, 1000};
  int f = _i;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
    for (int s = 0; s < N_SEEDS; s++) {
      fp_graph *g = gen_ok(f, sizes[i], seeds[s]);
      check_basic(g);
      check_nn_like(g, f);
      if (f != FP_GEN_RANDOM)
        check_outputs(g, 2);
      fp_graph_destroy(g);
    }
}
END_TEST

/* Even the smallest NN graphs train something: a loss and a gradient (the
 * tiniest freeze the embedding or have no hidden layer). */
START_TEST(test_smallest_graphs) {
  int f = _i;
  for (int32_t n = FP_GEN_MIN_SIZE; n < 40; n++) {
    fp_graph *g = gen_ok(f, n, seeds[n % N_SEEDS]);
    if (f != FP_GEN_RANDOM)
      check_outputs(g, 1);
    int32_t kinds[3], max_readers;
    census(g, kinds, &max_readers);
    ck_assert_int_gt(kinds[FP_KIND_EXTERN], 0);
    ck_assert_int_gt(kinds[FP_KIND_POINTWISE] + kinds[FP_KIND_REDUCTION], 0);
    fp_graph_destroy(g);
  }
}
END_TEST

/* Forward nodes come before backward ones, and every layer's weight
 * gradient exists: count parameters (non-freeable inputs that are matmul
 * weights) against "dW" outputs. */
START_TEST(test_training_shape) {
  int f = _i;
  fp_graph *g = gen_ok(f, 1000, 5);
  int32_t n = fp_graph_node_count(g), first_bwd = -1, weights = 0, dws = 0;
  for (int32_t v = 0; v < n; v++) {
    const fp_node *nd = fp_graph_node(g, v);
    bool bwd = starts_with(nd->name, "bwd.");
    if (bwd && first_bwd < 0)
      first_bwd = v;
    ck_assert_msg(bwd == (first_bwd >= 0), "'%s' out of place", nd->name);
    if (nd->op.fn == FP_OP_MATMUL && strstr(nd->name, "dW"))
      dws++;
  }
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++) {
    const char *nm = fp_graph_buffer(g, b)->name;
    size_t len = strlen(nm);
    if (fp_graph_buffer(g, b)->input && len > 2 &&
        strcmp(nm + len - 2, ".W") == 0)
      weights++;
  }
  ck_assert_int_gt(first_bwd, n / 5);
  ck_assert_int_lt(first_bwd, n * 4 / 5);
  ck_assert_int_gt(weights, 3);
  ck_assert_int_eq(dws, weights);
  fp_graph_destroy(g);
}
END_TEST

/* The iteration-space half of the compatibility rule
 * (docs/cost-model.md#legality), without the unfusible list. */
static bool iters_compatible(const fp_node *a, const fp_node *b) {
  if (a->kind == FP_KIND_EXTERN || b->kind == FP_KIND_EXTERN)
    return false;
  if (a->numel == b->numel && a->rnumel == b->rnumel)
    return true;
  if (a->kind == FP_KIND_POINTWISE &&
      (a->numel == b->numel * b->rnumel || a->numel == b->numel))
    return true;
  return b->kind == FP_KIND_POINTWISE &&
         (b->numel == a->numel * a->rnumel || b->numel == a->numel);
}

/* The random family declares unfusible pairs, each between a writer and
 * its reader that would be compatible otherwise (so each one matters);
 * the NN families declare none. */
START_TEST(test_unfusible) {
  fp_graph *g = gen_ok(FP_GEN_RANDOM, 1000, 3);
  int32_t k = fp_graph_unfusible_count(g);
  ck_assert_int_gt(k, 0);
  for (int32_t i = 0; i < k; i++) {
    int32_t u, v;
    fp_graph_unfusible_pair(g, i, &u, &v);
    ck_assert_int_lt(u, v);
    ck_assert(fp_graph_is_unfusible(g, u, v));
    ck_assert(!fp_graph_compatible(g, u, v));
    ck_assert(iters_compatible(fp_graph_node(g, u), fp_graph_node(g, v)));
    const fp_node *n = fp_graph_node(g, v);
    bool reads_u = false;
    for (int32_t r = 0; r < n->n_reads; r++)
      reads_u |= fp_graph_buffer(g, n->reads[r].buffer)->writer == u;
    ck_assert(reads_u);
  }
  fp_graph_destroy(g);
  for (int f = 0; f < FP_GEN_RANDOM; f++) {
    g = gen_ok(f, 1000, 3);
    ck_assert_int_eq(fp_graph_unfusible_count(g), 0);
    fp_graph_destroy(g);
  }
}
END_TEST

/* A large graph: exact count, realistic sizes, deterministic. */
START_TEST(test_large) {
  int f = _i;
  char why[256];
  fp_graph *a = gen_ok(f, 100000, 99);
  fp_graph *b = gen_ok(f, 100000, 99);
  ck_assert_int_eq(fp_graph_node_count(a), 100000);
  ck_assert_msg(graph_same(a, b, why, sizeof why), "%s", why);
  check_basic(a);
  check_nn_like(a, f);
  fp_graph_destroy(a);
  fp_graph_destroy(b);
}
END_TEST

/* ---- driver ---------------------------------------------------------------
 */

static Suite *generate_suite(void) {
  Suite *s = suite_create("generate");
  TCase *tc = tcase_create("api");
  tcase_add_test(tc, test_params_init);
  tcase_add_test(tc, test_family_names);
  tcase_add_test(tc, test_bad_params);
  tcase_add_test(tc, test_name_and_source);
  suite_add_tcase(s, tc);
  tc = tcase_create("graphs");
  tcase_set_timeout(tc, 300); /* slow under sanitizers / valgrind */
  tcase_add_loop_test(tc, test_exact_count, 0, N_FAMILIES);
  tcase_add_loop_test(tc, test_deterministic, 0, N_FAMILIES);
  tcase_add_loop_test(tc, test_seeds_differ, 0, N_FAMILIES);
  tcase_add_test(tc, test_families_differ);
  tcase_add_loop_test(tc, test_basic_invariants, 0, N_FAMILIES);
  tcase_add_loop_test(tc, test_structure, 0, N_FAMILIES);
  tcase_add_loop_test(tc, test_smallest_graphs, 0, N_FAMILIES);
  tcase_add_loop_test(tc, test_training_shape, 0, FP_GEN_RANDOM);
  tcase_add_test(tc, test_unfusible);
  tcase_add_loop_test(tc, test_large, 0, N_FAMILIES);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(generate_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
