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
 * The checks it shares with the other targets are in fuzz_check.c.
 *
 * Built two ways: with -fsanitize=fuzzer (`make fuzz`, FP_FUZZ_LIBFUZZER
 * defined), and as a plain program with standalone_main.c that replays a
 * corpus (`make check`).  See docs/fuzzing.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/json.h"
#include "tests/fuzz/fuzz_check.h"

/* Serializes g and checks that the text reloads to the same text, compact
 * and pretty.  Returns the compact text (free with free()). */
static char *check_round_trip(const fp_graph *g) {
  char *s1 = fp_graph_to_json(g, 0, NULL);
  char *p1 = fp_graph_to_json(g, 1, NULL);
  if (!s1 || !p1)
    fuzz_fail("fp_graph_to_json succeeds", NULL);
  fp_graph *g2 = fuzz_reload_graph(s1, "a serialized graph reloads");
  fp_graph *g3 = fuzz_reload_graph(p1, "a pretty-printed graph reloads");
  char *s2 = fp_graph_to_json(g2, 0, NULL);
  char *s3 = fp_graph_to_json(g3, 0, NULL);
  if (!s2 || !s3)
    fuzz_fail("fp_graph_to_json succeeds", NULL);
  if (strcmp(s1, s2) != 0) {
    fprintf(stderr, "first:  %s\nsecond: %s\n", s1, s2);
    fuzz_fail("save -> load -> save gives the same JSON", NULL);
  }
  if (strcmp(s1, s3) != 0) {
    fprintf(stderr, "compact: %s\nvia pretty: %s\n", s1, s3);
    fuzz_fail("the pretty form describes the same graph", NULL);
  }
  if (fp_graph_node_count(g2) != fp_graph_node_count(g) ||
      fp_graph_buffer_count(g2) != fp_graph_buffer_count(g) ||
      fp_graph_resident_bytes(g2) != fp_graph_resident_bytes(g))
    fuzz_fail("a reloaded graph has the same counts", NULL);
  free(s2);
  free(s3);
  free(p1);
  fp_graph_destroy(g2);
  fp_graph_destroy(g3);
  return s1;
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  fp_graph *g = NULL;
  fp_plan *eager = NULL, *derived = NULL;
  fp_error err;
  fp_metrics em;
  fp_bounds lb;
  const fp_metrics *fixed_eager;
  const fp_graph *fixed = fuzz_fixed_graph(&fixed_eager);
  fp_error_clear(&err);

  fuzz_try_plan(fixed, fixed_eager, text, size);
  fp_status st = fp_graph_load_buffer(text, size, FUZZ_SRC, &g, &err);
  if (st != FP_OK) {
    if (g)
      fuzz_fail("a failed graph load returns no graph", NULL);
    fuzz_check_rejection(st, &err, FUZZ_SRC);
    return 0;
  }
  if (!fp_graph_is_finalized(g))
    fuzz_fail("a loaded graph is finalized", NULL);
  fuzz_check_valid_json(text, size, "only JSON loads as a graph");

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
    fuzz_fail("the eager plan of a loaded graph is legal", err.msg);
  if (fp_graph_bounds(g, &lb, &err) != FP_OK)
    goto done;
  fuzz_check_metrics(g, eager, &em, tl, &lb, NULL);
  if (em.kernels != fp_graph_node_count(g))
    fuzz_fail("the eager plan has one kernel per node", NULL);

  free(check_round_trip(g));

  if (size > 0 && (derived = derived_plan(g, data, size)) != NULL)
    fuzz_check_plan(g, derived, &lb, &em);
  fuzz_try_plan(g, &em, text, size);
done:
  free(tl);
  fp_plan_destroy(derived);
  fp_plan_destroy(eager);
  fp_graph_destroy(g);
  return 0;
}
