/*
 * peak.h -- internal: the incremental peak tracker of greedy-peak
 * (peak.c), which follows the fuser's plan (fuser.h) as fusion.c tries
 * and applies fusions.  Not a public header.
 */
#ifndef FP_PEAK_H
#define FP_PEAK_H

#include <stdint.h>

#include "heuristics/fuser.h"
#include "model/eval.h"

/* The tracker; opaque. */
typedef struct peak_tracker peak_tracker;

/* Builds the tracker for the fuser's current order of singleton groups,
 * whose per-step figures (from fp_plan_eval) are `timeline`.  NULL when
 * out of memory. */
peak_tracker *peak_tracker_create(fuser *F, const fp_step *timeline);
void peak_tracker_destroy(peak_tracker *P);

/* Peak of the plan if a and b (pos[a] < pos[b], cycle check just done so
 * F->desc holds a's descendants before b) were fused. */
uint64_t peak_tracker_try(peak_tracker *P, int32_t a, int32_t b);

/* Records that the fusion just tried was applied (after fuser_merge). */
void peak_tracker_commit(peak_tracker *P);

/* Current peak. */
uint64_t peak_tracker_peak(const peak_tracker *P);

#endif /* FP_PEAK_H */
