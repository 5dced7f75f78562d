/*
 * fuser.h -- internal: the greedy fusion engine (fuser.c), its groups,
 * order slots, legality, scores, cycle check and merging.  Used by the
 * fusion driver (fusion.c) and greedy-peak's peak tracker (peak.c); not a
 * public header.
 */
#ifndef FP_FUSER_H
#define FP_FUSER_H

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
  /* Inductor's C++ scheduling (fuser_set_cpp): a reduction's consumer
   * joins it only by outer-loop fusion, which keeps the two as separate
   * loop nests ("parts") of one scheduler group. */
  bool cpp;
  uint8_t *odepth; /* group -> its outer-loop fusion depth, 0: none */
  int32_t *part;   /* node -> its part: the group it was in when its group
                      was first outer-loop fused (its group until then) */
} fuser;

typedef struct pair_info {
  uint64_t shared; /* bytes of buffers both groups touch */
  int32_t proximity;
  bool vertical;  /* one group reads what the other writes */
  bool same_kind; /* both or neither hold a reduction */
  bool one_nest;  /* false with the C++ rules when the pair is vertical
                     and Inductor fuses it only by outer-loop fusion: the
                     producer holds a reduction, or the loops share only
                     a prefix (_why_fuse_nodes finds no reason) */
  bool scored;    /* filled by fuser_score (fusion.c's mark) */
} pair_info;

/* Sets up singleton groups in listed order.  -1 when out of memory (call
 * fuser_free either way). */
int fuser_init(fuser *F, const fp_graph *g, int32_t k);

/* Frees what the fuser owns and zeroes it (also after a failed init). */
void fuser_free(fuser *F);

/* The live group that group id g was fused into. */
int32_t fuser_find(fuser *F, int32_t g);

/* Whether live groups a and b may form one group: within the max fusion
 * size, no extern node, every cross pair of members compatible, every
 * linked pair of the union with one of its linkers. */
bool fuser_legal(fuser *F, int32_t a, int32_t b);

/* Fills *pi for live groups a and b: the bytes of buffers both touch,
 * whether the pair is vertical, its listed-order proximity and whether
 * both or neither hold a reduction.  Uses the per-buffer stamps. */
void fuser_score(fuser *F, int32_t a, int32_t b, pair_info *pi);

/* Whether a scored pair passes the method's rules beyond legality
 * (enough shared bytes; horizontal pairs only where allowed and near;
 * with the C++ rules, no vertical pair that is not one_nest: that one is
 * outer-loop fusion, fuser_outer_depth). */
bool fuser_acceptable(const fuser *F, const fp_fusion_params *prm,
                      const pair_info *pi);

/* Turns on Inductor's C++ scheduling rules when every pointwise and
 * reduction node of the graph has a loop nest (graph format 3): see the
 * cpp field and fuser_outer_depth. */
void fuser_set_cpp(fuser *F);

/* The depth at which live groups a and b (pos[a] < pos[b]) may be joined
 * by outer-loop fusion (can_fuse_vertical_outer_loop), or 0: with the C++
 * rules, b reads what a writes, the pair is not fusible otherwise, the
 * size limit holds, no extern node, enough shared bytes, and a's last
 * part and b's first part share a loop prefix of that depth, the depth
 * of either side that is already outer-loop fused. */
int32_t fuser_outer_depth(fuser *F, const fp_fusion_params *prm, int32_t a,
                          int32_t b, const pair_info *pi);

/* Whether outer-loop fused group g is emitted as its parts: code
 * generation splits it when its parts cannot share one loop nest, which
 * the graph says by a pair across two parts that may not share a group
 * (docs/heuristics.md, "Code generation splits"). */
bool fuser_splits(fuser *F, int32_t g);

/* Cycle check for fusing a and b (pos[a] < pos[b]): true when fusing
 * would create a cycle.  Leaves the descendants of a that lie before b in
 * F->desc[0..n_desc) (their mark == F->epoch). */
bool fuser_creates_cycle(fuser *F, int32_t a, int32_t b);

/* The new contents of slots pos[a]..pos[b] if b were fused into a, after
 * fuser_creates_cycle(a, b) returned false (see fuser.c). */
void fuser_interval(const fuser *F, int32_t a, int32_t b, int32_t *out);

/* Fuses b into a (pos[a] < pos[b]) after a successful cycle check, and
 * rewrites the slots between them (see fuser.c); depth > 0 makes it an
 * outer-loop fusion at that depth (b's parts stay parts). */
void fuser_merge(fuser *F, int32_t a, int32_t b, int32_t depth);

/* The fuser's groups in slot order, as a plan (groups replaced); a group
 * that code generation splits (fuser_splits) is its parts, in the order
 * they were fused.  When sched is given (F->n entries), sched[t] gets the
 * scheduler group of the plan's group t: the slot of the group it came
 * from.  Fails with FP_ENOMEM. */
fp_status fuser_plan(fuser *F, fp_plan *out, int32_t *sched, fp_error *err);

/* Starts the fuser (fresh from fuser_init) from a legal plan: its
 * groups, each one part, in its order. */
void fuser_set_groups(fuser *F, const fp_plan *p);

/* Starts the fuser (fresh from fuser_init) from a plan of singleton
 * groups in some order. */
void fuser_set_order(fuser *F, const fp_plan *p);

#endif /* FP_FUSER_H */
