/*
 * fuzz_check.c -- the checks the fuzz targets share (fuzz_check.h): the
 * form of a rejection, JSON-only acceptance, the fixed graph that plan
 * inputs are loaded against, and the invariants of a legal plan.
 */
#include "tests/fuzz/fuzz_check.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/json.h"
#include "model/peak_bound.h"

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
void fuzz_fail(const char *what, const char *detail) {
  fprintf(stderr, "fuzz: invariant broken: %s%s%s\n", what, detail ? ": " : "",
          detail ? detail : "");
  abort();
}

/* Checks the error record of a rejected load: the status is an input or
 * limit error (or out of memory) and the message is one line that names
 * the source. */
void fuzz_check_rejection(fp_status st, const fp_error *err,
                          const char *source) {
  if (st == FP_ENOMEM)
    return;
  if (st != FP_EINPUT && st != FP_ELIMIT)
    fuzz_fail("a rejected input gives FP_EINPUT or FP_ELIMIT",
              fp_status_name(st));
  if (err->code != st)
    fuzz_fail("err.code mirrors the returned status", err->msg);
  if (strchr(err->msg, '\n'))
    fuzz_fail("error messages are one line", err->msg);
  size_t n = strlen(source);
  if (strncmp(err->msg, source, n) != 0 || strncmp(err->msg + n, ": ", 2))
    fuzz_fail("error messages start with the file name", err->msg);
}

/* Checks that an accepted input is one well-formed JSON document (cJSON's
 * reading, blanks after it allowed): the loaders may skip what they do not
 * need, but never accept what is not JSON. */
void fuzz_check_valid_json(const char *data, size_t size, const char *what) {
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(data, size, &end, 0);
  int ok = root != NULL && end != NULL;
  while (ok && end < data + size &&
         (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
    end++;
  ok = ok && end == data + size;
  cJSON_Delete(root);
  if (!ok)
    fuzz_fail(what, "the input is not one well-formed JSON document");
}

/* Loads `json` (NUL-terminated) as a graph that must be valid. */
fp_graph *fuzz_reload_graph(const char *json, const char *what) {
  fp_graph *g = NULL;
  fp_error err;
  fp_error_clear(&err);
  if (fp_graph_load_buffer(json, strlen(json), "reload.json", &g, &err) !=
      FP_OK) {
    fprintf(stderr, "%s\n", json);
    fuzz_fail(what, err.msg);
  }
  return g;
}

/* Checks the evaluator's invariants for a legal plan p of g with figures m
 * and per-step timeline tl; `lb` are the graph's lower bounds and `eager`
 * the eager plan's figures. */
void fuzz_check_metrics(const fp_graph *g, const fp_plan *p,
                        const fp_metrics *m, const fp_step *tl,
                        const fp_bounds *lb, const fp_metrics *eager) {
  int32_t steps = fp_plan_group_count(p);
  uint64_t reads = 0, writes = 0, max_live = 0;
  if (m->traffic_bytes != m->read_bytes + m->write_bytes)
    fuzz_fail("traffic = reads + writes", NULL);
  if (m->kernels != steps)
    fuzz_fail("kernels = groups", NULL);
  if (m->resident_bytes != fp_graph_resident_bytes(g) ||
      m->peak_bytes < m->resident_bytes)
    fuzz_fail("peak >= resident inputs", NULL);
  for (int32_t t = 0; t < steps; t++) {
    int32_t n;
    fp_plan_group(p, t, &n);
    if (tl[t].nodes != n)
      fuzz_fail("timeline nodes = group size", NULL);
    if (tl[t].live_bytes < m->resident_bytes)
      fuzz_fail("live(t) >= resident inputs", NULL);
    reads += tl[t].read_bytes;
    writes += tl[t].write_bytes;
    max_live = tl[t].live_bytes > max_live ? tl[t].live_bytes : max_live;
  }
  if (reads != m->read_bytes || writes != m->write_bytes)
    fuzz_fail("the timeline sums to the totals", NULL);
  if (steps > 0 &&
      (max_live != m->peak_bytes || m->peak_step < 0 || m->peak_step >= steps ||
       tl[m->peak_step].live_bytes != m->peak_bytes))
    fuzz_fail("peak = max of the timeline, reached at peak_step", NULL);
  if (steps == 0 && (m->peak_bytes != m->resident_bytes || m->traffic_bytes))
    fuzz_fail("an empty plan costs nothing beyond the resident inputs", NULL);
  if (m->traffic_bytes < lb->traffic_bytes)
    fuzz_fail("traffic >= its lower bound", NULL);
  if (m->peak_bytes < lb->peak_bytes)
    fuzz_fail("peak >= its lower bound", NULL);
  /* Fusion only removes reads and writes: no legal plan moves more bytes
   * than the eager one. */
  if (eager && m->traffic_bytes > eager->traffic_bytes)
    fuzz_fail("traffic <= eager traffic", NULL);
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
    fuzz_fail("a plan within a peak limit is legal on the restricted graph",
              err.msg);
  fp_graph_destroy(rg);
}

/* Checks p (a plan for g): fp_plan_check and fp_plan_eval agree, and a
 * legal plan obeys the invariants and round-trips through the plan
 * format. */
void fuzz_check_plan(const fp_graph *g, const fp_plan *p, const fp_bounds *lb,
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
    fuzz_fail("fp_plan_check and fp_plan_eval agree", err.msg);
  if (st != FP_OK && st != FP_EILLEGAL && st != FP_ENOMEM)
    fuzz_fail("an illegal plan is FP_EILLEGAL", err.msg);
  if (st == FP_OK) {
    fuzz_check_metrics(g, p, &m, tl, lb, eager);
    check_restriction(g, p, m.peak_bytes);
    char *s1 = fp_plan_to_json(p, g, &m, 0, NULL);
    fp_plan *p2 = NULL;
    if (!s1)
      fuzz_fail("fp_plan_to_json succeeds", NULL);
    if (fp_plan_load_buffer(s1, strlen(s1), "plan.json", g, &p2, &err) !=
        FP_OK) {
      fprintf(stderr, "%s\n", s1);
      fuzz_fail("a serialized plan reloads", err.msg);
    }
    char *s2 = fp_plan_to_json(p2, g, &m, 0, NULL);
    if (!s2 || strcmp(s1, s2) != 0) {
      fprintf(stderr, "first:  %s\nsecond: %s\n", s1, s2 ? s2 : "(null)");
      fuzz_fail("plan save -> load -> save gives the same JSON", NULL);
    }
    free(s1);
    free(s2);
    fp_plan_destroy(p2);
  }
  free(tl);
}

/* Tries the input as a plan for g (any outcome is fine, but a rejection
 * must be well-formed and an accepted plan must be consistent); `eager`
 * are g's eager figures (NULL: unknown). */
void fuzz_try_plan(const fp_graph *g, const fp_metrics *eager, const char *data,
                   size_t size) {
  fp_plan *p = NULL;
  fp_error err;
  fp_bounds lb;
  fp_error_clear(&err);
  fp_status st = fp_plan_load_buffer(data, size, FUZZ_SRC, g, &p, &err);
  if (st != FP_OK) {
    if (p)
      fuzz_fail("a failed plan load returns no plan", NULL);
    fuzz_check_rejection(st, &err, FUZZ_SRC);
    return;
  }
  fuzz_check_valid_json(data, size, "only JSON loads as a plan");
  if (fp_graph_bounds(g, &lb, &err) == FP_OK)
    fuzz_check_plan(g, p, &lb, eager);
  fp_plan_destroy(p);
}

/* Loads the fixed graph once (kept for the life of the process) and fills
 * *eager with its eager figures. */
const fp_graph *fuzz_fixed_graph(const fp_metrics **eager) {
  static fp_graph *g;
  static fp_metrics m;
  if (!g) {
    fp_plan *p = fp_plan_create();
    fp_error err;
    g = fuzz_reload_graph(fixed_graph_json, "the fixed graph loads");
    if (!p || fp_plan_make_eager(p, g, &err) != FP_OK ||
        fp_plan_eval(g, p, &m, NULL, &err) != FP_OK)
      fuzz_fail("the fixed graph's eager plan evaluates", NULL);
    fp_plan_destroy(p);
  }
  *eager = &m;
  return g;
}
