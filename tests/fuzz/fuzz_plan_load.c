/*
 * fuzz_plan_load.c -- libFuzzer target for the plan loader alone.
 *
 * Every input is loaded as a plan file for a fixed small graph (a copy of
 * tests/data/small.json, fuzz_check.c).  A rejection must be FP_EINPUT or
 * FP_ELIMIT with a one-line message naming the file; an accepted input
 * must be one JSON document, fp_plan_check and fp_plan_eval must agree on
 * it, and a legal plan must obey the evaluator's invariants and survive
 * save -> load -> save unchanged.  fuzz_graph_load also tries its inputs
 * as plans, but spends most of its time in the graph loader; this target
 * gives the plan loader the whole budget.
 *
 * Built with -fsanitize=fuzzer (`make fuzz`) or with standalone_main.c
 * (`make check` replays tests/fuzz/corpus/fuzz_plan_load).  See
 * docs/fuzzing.md.
 */
#include <stdint.h>

#include "tests/fuzz/fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const fp_metrics *eager;
  const fp_graph *g = fuzz_fixed_graph(&eager);
  fuzz_try_plan(g, eager, (const char *)data, size);
  return 0;
}
