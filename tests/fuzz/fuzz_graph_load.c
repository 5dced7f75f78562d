/*
 * fuzz_graph_load.c -- libFuzzer target for the graph and plan loaders.
 *
 * Every input is tried as a graph file.  When it loads, the graph must
 * survive everything the rest of fuseplan does with a graph: the eager plan
 * evaluates, the lower bounds hold for it, the graph serializes and reloads
 * to the same JSON (compact and pretty), and a plan derived from the input
 * bytes is either illegal or obeys the evaluator's invariants.  The input is
 * also tried as a plan file, against the loaded graph and against a fixed
 * small graph (so that plan-shaped inputs reach the plan loader, the
 * legality check and the evaluator).  An accepted input must be one
 * well-formed JSON document; a rejected one must come with a one-line
 * message naming the file.  Any broken invariant calls abort(),
 * which libFuzzer reports as a crash with its reproducer.
 *
 * Built two ways: with -fsanitize=fuzzer (`make fuzz`, FP_FUZZ_LIBFUZZER
 * defined), and as a plain program with standalone_main.c that replays a
 * corpus (`make check`).  See docs/fuzzing.md.
 */
#include <cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/eval.h"
#include "model/graph.h"
#include "model/json.h"
#include "model/peak_bound.h"
#include "model/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The name inputs are loaded under; every input error must start with it. */
#define SRC "fuzz.json"

/* A fixed graph for plan-shaped inputs: tests/data/small.json. */
static const char fixed_graph_json[] =
    "{\"format\": \"fuseplan.graph\", \"version\": 1, \"name\": \"small\","
    " \"max_fusion_size\": 3, \"buffers\": ["
    "{\"name\": \"x\", \"bytes\": 4096, \"input\": true},"
    "{\"name\": \"g\", \"bytes\": 1024, \"input\": true, \"freeable\": true},"
    "{\"name\": \"w\", \"bytes\": 2048, \"input\": true},"
    "{\"name\": \"a\", \"bytes\": 4096}, {\"name\": \"b\", \"bytes\": 4096},"
    "{\"name\": \"c\", \"bytes\": 4096}, {\"name\": \"r\", \"bytes\": 64},"
    "{\"name\": \"m\", \"bytes\": 512}, {\"name\": \"y\", \"bytes\": 256},"
    "{\"name\": \"z\", \"bytes\": 4096}], \"nodes\": ["
    "{\"name\": \"n0\", \"kind\": \"pointwise\", \"iter\": [1024, 1],"
    " \"reads\": [\"x\"], \"writes\": [\"a\"]},"
    "{\"name\": \"n1\", \"kind\": \"pointwise\", \"iter\": [1024, 1],"
    " \"reads\": [\"a\"], \"writes\": [\"b\"]},"
    "{\"name\": \"n2\", \"kind\": \"pointwise\", \"iter\": [1024, 1],"
    " \"reads\": [\"a\", \"b\"], \"writes\": [\"c\"]},"
    "{\"name\": \"n3\", \"kind\": \"reduction\", \"iter\": [16, 64],"
    " \"reads\": [\"c\"], \"writes\": [\"r\"]},"
    "{\"name\": \"n4\", \"kind\": \"extern\", \"reads\": [\"r\", \"w\"],"
    " \"writes\": [\"m\"]},"
    "{\"name\": \"n5\", \"kind\": \"pointwise\", \"iter\": [256, 1],"
    " \"reads\": [\"m\", {\"buffer\": \"g\", \"bytes\": 512}],"
    " \"writes\": [\"y\"]},"
    "{\"name\": \"n6\", \"kind\": \"pointwise\", \"iter\": [1024, 1],"
    " \"reads\": [\"c\", \"x\"], \"writes\": [\"z\"]}],"
    " \"outputs\": [\"y\", \"z\"], \"unfusible\": [[\"n2\", \"n6\"]]}";

/* Reports a broken invariant and aborts (a crash for libFuzzer). */
static void fail(const char *what, const char *detail) {
  fprintf(stderr, "fuzz_graph_load: invariant broken: %s%s%s\n", what,
          detail ? ": " : "", detail ? detail : "");
  abort();
}

/* Checks the error record of a rejected load: the status is an input or
 * limit error (or out of memory) and the message is one line that names
 * the source. */
static void check_rejection(fp_status st, const fp_error *err,
                            const char *source) {
  if (st == FP_ENOMEM)
    return;
  if (st != FP_EINPUT && st != FP_ELIMIT)
    fail("a rejected input gives FP_EINPUT or FP_ELIMIT", fp_status_name(st));
  if (err->code != st)
    fail("err.code mirrors the returned status", err->msg);
  if (strchr(err->msg, '\n'))
    fail("error messages are one line", err->msg);
  size_t n = strlen(source);
  if (strncmp(err->msg, source, n) != 0 || strncmp(err->msg + n, ": ", 2))
    fail("error messages start with the file name", err->msg);
}

/* Checks that an accepted input is one well-formed JSON document (cJSON's
 * reading, blanks after it allowed): the loaders may skip what they do not
 * need, but never accept what is not JSON. */
static void check_valid_json(const char *data, size_t size, const char *what) {
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(data, size, &end, 0);
  int ok = root != NULL && end != NULL;
  while (ok && end < data + size &&
         (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
    end++;
  ok = ok && end == data + size;
  cJSON_Delete(root);
  if (!ok)
    fail(what, "the input is not one well-formed JSON document");
}

/* Loads `json` (NUL-terminated) as a graph that must be valid. */
static fp_graph *reload(const char *json, const char *what) {
  fp_graph *g = NULL;
  fp_error err;
  fp_error_clear(&err);
  if (fp_graph_load_buffer(json, strlen(json), "reload.json", &g, &err) !=
      FP_OK) {
    fprintf(stderr, "%s\n", json);
    fail(what, err.msg);
  }
  return g;
}

/* Serializes g and checks that the text reloads to the same text, compact
 * and pretty.  Returns the compact text (free with free()). */
static char *check_round_trip(const fp_graph *g) {
  char *s1 = fp_graph_to_json(g, 0, NULL);
  char *p1 = fp_graph_to_json(g, 1, NULL);
  if (!s1 || !p1)
    fail("fp_graph_to_json succeeds", NULL);
  fp_graph *g2 = reload(s1, "a serialized graph reloads");
  fp_graph *g3 = reload(p1, "a pretty-printed graph reloads");
  char *s2 = fp_graph_to_json(g2, 0, NULL);
  char *s3 = fp_graph_to_json(g3, 0, NULL);
  if (!s2 || !s3)
    fail("fp_graph_to_json succeeds", NULL);
  if (strcmp(s1, s2) != 0) {
    fprintf(stderr, "first:  %s\nsecond: %s\n", s1, s2);
    fail("save -> load -> save gives the same JSON", NULL);
  }
  if (strcmp(s1, s3) != 0) {
    fprintf(stderr, "compact: %s\nvia pretty: %s\n", s1, s3);
    fail("the pretty form describes the same graph", NULL);
  }
  if (fp_graph_node_count(g2) != fp_graph_node_count(g) ||
      fp_graph_buffer_count(g2) != fp_graph_buffer_count(g) ||
      fp_graph_resident_bytes(g2) != fp_graph_resident_bytes(g))
    fail("a reloaded graph has the same counts", NULL);
  free(s2);
  free(s3);
  free(p1);
  fp_graph_destroy(g2);
  fp_graph_destroy(g3);
  return s1;
}

/* Checks the evaluator's invariants for a legal plan p of g with figures m
 * and per-step timeline tl; `lb` are the graph's lower bounds and `eager`
 * the eager plan's figures. */
static void check_metrics(const fp_graph *g, const fp_plan *p,
                          const fp_metrics *m, const fp_step *tl,
                          const fp_bounds *lb, const fp_metrics *eager) {
  int32_t steps = fp_plan_group_count(p);
  uint64_t reads = 0, writes = 0, max_live = 0;
  if (m->traffic_bytes != m->read_bytes + m->write_bytes)
    fail("traffic = reads + writes", NULL);
  if (m->kernels != steps)
    fail("kernels = groups", NULL);
  if (m->resident_bytes != fp_graph_resident_bytes(g) ||
      m->peak_bytes < m->resident_bytes)
    fail("peak >= resident inputs", NULL);
  for (int32_t t = 0; t < steps; t++) {
    int32_t n;
    fp_plan_group(p, t, &n);
    if (tl[t].nodes != n)
      fail("timeline nodes = group size", NULL);
    if (tl[t].live_bytes < m->resident_bytes)
      fail("live(t) >= resident inputs", NULL);
    reads += tl[t].read_bytes;
    writes += tl[t].write_bytes;
    max_live = tl[t].live_bytes > max_live ? tl[t].live_bytes : max_live;
  }
  if (reads != m->read_bytes || writes != m->write_bytes)
    fail("the timeline sums to the totals", NULL);
  if (steps > 0 &&
      (max_live != m->peak_bytes || m->peak_step < 0 || m->peak_step >= steps ||
       tl[m->peak_step].live_bytes != m->peak_bytes))
    fail("peak = max of the timeline, reached at peak_step", NULL);
  if (steps == 0 && (m->peak_bytes != m->resident_bytes || m->traffic_bytes))
    fail("an empty plan costs nothing beyond the resident inputs", NULL);
  if (m->traffic_bytes < lb->traffic_bytes)
    fail("traffic >= its lower bound", NULL);
  if (m->peak_bytes < lb->peak_bytes)
    fail("peak >= its lower bound", NULL);
  /* Fusion only removes reads and writes: no legal plan moves more bytes
   * than the eager one. */
  if (eager && m->traffic_bytes > eager->traffic_bytes)
    fail("traffic <= eager traffic", NULL);
}

/* A legal plan p of peak `peak` stays legal on g restricted to that peak
 * (fp_peak_restrict forbids only pairs that no plan within it groups). */
static void check_restriction(const fp_graph *g, const fp_plan *p,
                              uint64_t peak) {
  fp_graph *rg = NULL;
  int32_t pairs = 0;
  fp_error err;
  if (fp_peak_restrict(g, 0, peak, &rg, &pairs, &err) != FP_OK)
    return; /* out of memory */
  if (rg && fp_plan_check(rg, p, 0, &err) == FP_EILLEGAL)
    fail("a plan within a peak limit is legal on the restricted graph",
         err.msg);
  fp_graph_destroy(rg);
}

/* Checks p (a plan for g): fp_plan_check and fp_plan_eval agree, and a
 * legal plan obeys the invariants and round-trips through the plan
 * format. */
static void check_plan(const fp_graph *g, const fp_plan *p, const fp_bounds *lb,
                       const fp_metrics *eager) {
  fp_error err;
  fp_metrics m;
  int32_t steps = fp_plan_group_count(p);
  fp_step *tl = calloc((size_t)steps + 1, sizeof *tl);
  if (!tl)
    return;
  fp_status chk = fp_plan_check(g, p, 0, &err);
  fp_status st = fp_plan_eval(g, p, &m, tl, &err);
  if (chk != st)
    fail("fp_plan_check and fp_plan_eval agree", err.msg);
  if (st != FP_OK && st != FP_EILLEGAL && st != FP_ENOMEM)
    fail("an illegal plan is FP_EILLEGAL", err.msg);
  if (st == FP_OK) {
    check_metrics(g, p, &m, tl, lb, eager);
    check_restriction(g, p, m.peak_bytes);
    char *s1 = fp_plan_to_json(p, g, &m, 0, NULL);
    fp_plan *p2 = NULL;
    if (!s1)
      fail("fp_plan_to_json succeeds", NULL);
    if (fp_plan_load_buffer(s1, strlen(s1), "plan.json", g, &p2, &err) !=
        FP_OK) {
      fprintf(stderr, "%s\n", s1);
      fail("a serialized plan reloads", err.msg);
    }
    char *s2 = fp_plan_to_json(p2, g, &m, 0, NULL);
    if (!s2 || strcmp(s1, s2) != 0) {
      fprintf(stderr, "first:  %s\nsecond: %s\n", s1, s2 ? s2 : "(null)");
      fail("plan save -> load -> save gives the same JSON", NULL);
    }
    free(s1);
    free(s2);
    fp_plan_destroy(p2);
  }
  free(tl);
}

/* Builds a plan of consecutive runs of nodes, cut where the input bytes
 * say: legal when each run is compatible and small enough, illegal
 * otherwise (both are useful). */
static fp_plan *derived_plan(const fp_graph *g, const uint8_t *data,
                             size_t size) {
  fp_plan *p = fp_plan_create();
  if (!p)
    return NULL;
  for (int32_t v = 0; v < fp_graph_node_count(g); v++) {
    int cut = v == 0 || (data[((size_t)v * 7u) % size] & 3u) != 0;
    if ((cut && fp_plan_open_group(p, NULL) != FP_OK) ||
        fp_plan_append_node(p, v, NULL) != FP_OK) {
      fp_plan_destroy(p);
      return NULL;
    }
  }
  return p;
}

/* Tries the input as a plan for g (any outcome is fine, but a rejection
 * must be well-formed and an accepted plan must be consistent); `eager`
 * are g's eager figures (NULL: unknown). */
static void try_plan(const fp_graph *g, const fp_metrics *eager,
                     const char *data, size_t size) {
  fp_plan *p = NULL;
  fp_error err;
  fp_bounds lb;
  fp_error_clear(&err);
  fp_status st = fp_plan_load_buffer(data, size, SRC, g, &p, &err);
  if (st != FP_OK) {
    if (p)
      fail("a failed plan load returns no plan", NULL);
    check_rejection(st, &err, SRC);
    return;
  }
  check_valid_json(data, size, "only JSON loads as a plan");
  if (fp_graph_bounds(g, &lb, &err) == FP_OK)
    check_plan(g, p, &lb, eager);
  fp_plan_destroy(p);
}

/* Loads the fixed graph once (kept for the life of the process) and fills
 * *eager with its eager figures. */
static const fp_graph *fixed_graph(const fp_metrics **eager) {
  static fp_graph *g;
  static fp_metrics m;
  if (!g) {
    fp_plan *p = fp_plan_create();
    fp_error err;
    g = reload(fixed_graph_json, "the fixed graph loads");
    if (!p || fp_plan_make_eager(p, g, &err) != FP_OK ||
        fp_plan_eval(g, p, &m, NULL, &err) != FP_OK)
      fail("the fixed graph's eager plan evaluates", NULL);
    fp_plan_destroy(p);
  }
  *eager = &m;
  return g;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  fp_graph *g = NULL;
  fp_plan *eager = NULL, *derived = NULL;
  fp_error err;
  fp_metrics em;
  fp_bounds lb;
  const fp_metrics *fixed_eager;
  const fp_graph *fixed = fixed_graph(&fixed_eager);
  fp_error_clear(&err);

  try_plan(fixed, fixed_eager, text, size);
  fp_status st = fp_graph_load_buffer(text, size, SRC, &g, &err);
  if (st != FP_OK) {
    if (g)
      fail("a failed graph load returns no graph", NULL);
    check_rejection(st, &err, SRC);
    return 0;
  }
  if (!fp_graph_is_finalized(g))
    fail("a loaded graph is finalized", NULL);
  check_valid_json(text, size, "only JSON loads as a graph");

  /* The eager plan is always legal, and the bounds hold for it. */
  fp_step *tl = calloc((size_t)fp_graph_node_count(g) + 1, sizeof *tl);
  eager = fp_plan_create();
  if (!tl || !eager)
    goto done;
  st = fp_plan_make_eager(eager, g, &err);
  if (st == FP_OK)
    st = fp_plan_eval(g, eager, &em, tl, &err);
  if (st == FP_ENOMEM)
    goto done;
  if (st != FP_OK)
    fail("the eager plan of a loaded graph is legal", err.msg);
  if (fp_graph_bounds(g, &lb, &err) != FP_OK)
    goto done;
  check_metrics(g, eager, &em, tl, &lb, NULL);
  if (em.kernels != fp_graph_node_count(g))
    fail("the eager plan has one kernel per node", NULL);

  free(check_round_trip(g));

  if (size > 0 && (derived = derived_plan(g, data, size)) != NULL)
    check_plan(g, derived, &lb, &em);
  try_plan(g, &em, text, size);
done:
  free(tl);
  fp_plan_destroy(derived);
  fp_plan_destroy(eager);
  fp_graph_destroy(g);
  return 0;
}
