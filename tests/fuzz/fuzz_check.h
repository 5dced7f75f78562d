/*
 * fuzz_check.h -- the checks the fuzz targets share: how a rejected input
 * must be reported, that only JSON is accepted, and what a plan accepted
 * for a graph must satisfy (the evaluator's invariants and the plan
 * format's round trip).  Any broken invariant aborts, which libFuzzer
 * reports as a crash with its reproducer (docs/fuzzing.md).
 */
#ifndef FP_FUZZ_CHECK_H
#define FP_FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "model/eval.h"
#include "model/graph.h"
#include "model/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The name inputs are loaded under; every input error must start with it. */
#define FUZZ_SRC "fuzz.json"

/* Reports a broken invariant on stderr and aborts. */
void fuzz_fail(const char *what, const char *detail);

/* Checks a rejection: the status is FP_EINPUT or FP_ELIMIT (FP_ENOMEM is
 * let through), err->code mirrors it and the message is one line that
 * starts with "source: ". */
void fuzz_check_rejection(fp_status st, const fp_error *err,
                          const char *source);

/* Checks that the accepted bytes are one well-formed JSON document
 * (blanks after it allowed); `what` names the rule in the report. */
void fuzz_check_valid_json(const char *data, size_t size, const char *what);

/* Loads NUL-terminated JSON that must be a valid graph (aborts if not). */
fp_graph *fuzz_reload_graph(const char *json, const char *what);

/* tests/data/small.json, loaded once for the life of the process, and
 * its eager figures in *eager. */
const fp_graph *fuzz_fixed_graph(const fp_metrics **eager);

/* Checks plan p of g: fp_plan_check and fp_plan_eval agree, and a legal
 * plan obeys the evaluator's invariants against the bounds `lb` and the
 * eager figures `eager` (NULL: unknown) and round-trips through the plan
 * format. */
void fuzz_check_plan(const fp_graph *g, const fp_plan *p, const fp_bounds *lb,
                     const fp_metrics *eager);

/* Checks the figures m and timeline tl of a legal plan p of g. */
void fuzz_check_metrics(const fp_graph *g, const fp_plan *p,
                        const fp_metrics *m, const fp_step *tl,
                        const fp_bounds *lb, const fp_metrics *eager);

/* Tries the input as a plan file for g: a rejection must be well formed,
 * an accepted plan must be JSON and pass fuzz_check_plan. */
void fuzz_try_plan(const fp_graph *g, const fp_metrics *eager, const char *data,
                   size_t size);

#endif /* FP_FUZZ_CHECK_H */
