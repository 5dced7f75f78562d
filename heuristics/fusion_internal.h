/*
 * fusion_internal.h -- the greedy fusion engine's state, shared by
 * fusion.c (candidates, legality, cycles, merging) and peak.c (the
 * incremental peak tracker of greedy-peak).  Not a public header.
 */
#ifndef FP_FUSION_INTERNAL_H
#define FP_FUSION_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "heuristics/heuristics.h"
#include "model/eval.h"

enum { GF_EXTERN = 1, GF_REDUCTION = 2 };

/* Group ids are node ids: group g starts as {g}; when B is fused into A,
 * A keeps its id and alias[B] = A.  Only ids with alias[g] == g are live
 * groups.  Slots: slot[pos[g]] == g for live groups, -1 for freed slots. */
typedef struct fuser {
  const fp_graph *g;
  int32_t n, k;         /* nodes, max fusion size */
  int32_t *grp;         /* node -> its group */
  int32_t *alias;       /* group -> group it was fused into (or itself) */
  int32_t *head, *tail; /* member lists: head[g], next[v] */
  int32_t *next;
  int32_t *size;
  int32_t *minidx, *maxidx; /* listed-order extent of a group */
  uint8_t *flags;           /* GF_* */
  int32_t *pos, *slot;
  int32_t *succ_off, *succ; /* node -> distinct consumer nodes */
  int32_t *mark, *mark2;    /* per-group scratch stamps */
  int32_t *stack, *desc;    /* per-group scratch lists */
  int32_t *buf_mark;        /* per-buffer stamps (epoch) */
  uint8_t *buf_flag;
  int32_t *tmp; /* per-group scratch */
  int32_t epoch;
  int32_t n_desc; /* descendants found by the last cycle check */
} fuser;

typedef struct pair_info {
  uint64_t shared; /* bytes of buffers both groups touch */
  int32_t proximity;
  bool vertical;  /* one group reads what the other writes */
  bool same_kind; /* both or neither hold a reduction */
} pair_info;

/* Sets up singleton groups in listed order.  -1 when out of memory (call
 * fuser_free either way). */
int fuser_init(fuser *F, const fp_graph *g, int32_t k);
void fuser_free(fuser *F);

/* The live group that group id g was fused into. */
int32_t fuser_find(fuser *F, int32_t g);

bool fuser_legal(fuser *F, int32_t a, int32_t b);
void fuser_score(fuser *F, int32_t a, int32_t b, pair_info *pi);
bool fuser_acceptable(const fuser *F, const fp_fusion_params *prm,
                      const pair_info *pi);

/* Cycle check for fusing a and b (pos[a] < pos[b]): true when fusing
 * would create a cycle.  Leaves the descendants of a that lie before b in
 * F->desc[0..n_desc) (their mark == F->epoch). */
bool fuser_creates_cycle(fuser *F, int32_t a, int32_t b);

/* The incremental peak tracker of greedy-peak (peak.c). */
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

/* The new contents of slots pos[a]..pos[b] if b were fused into a, after
 * fuser_creates_cycle(a, b) returned false (see fusion.c). */
void fuser_interval(const fuser *F, int32_t a, int32_t b, int32_t *out);

/* Fuses b into a (pos[a] < pos[b]) after a successful cycle check, and
 * rewrites the slots between them (see fusion.c). */
void fuser_merge(fuser *F, int32_t a, int32_t b);

/* The fuser's groups in slot order, as a plan (groups replaced). */
fp_status fuser_plan(const fuser *F, fp_plan *out, fp_error *err);

/* Starts the fuser (fresh from fuser_init) from a plan of singleton
 * groups in some order. */
void fuser_set_order(fuser *F, const fp_plan *p);

#endif /* FP_FUSION_INTERNAL_H */
