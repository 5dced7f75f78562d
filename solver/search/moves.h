/*
 * moves.h -- single-node and whole-group moves for `--method auto`
 * (lns.c): one node, or its whole group, taken out and put into a group
 * it shares a buffer with, anywhere in the plan; and the readers of one
 * buffer grouped anew.  Internal to solver/.
 *
 * A window of consecutive steps cannot fuse a kernel late in the program
 * with one far earlier that reads the same tensor (a forward graph's last
 * kernels recompute from saved activations); one move can, and the
 * evaluator prices it exactly.  Calls: services.c (solver_better),
 * params.c (fp_meets_limits).
 */
#ifndef FP_MOVES_H
#define FP_MOVES_H

#include <stdbool.h>
#include <stdint.h>

#include "model/eval.h"
#include "model/graph.h"
#include "model/plan.h"
#include "model/status.h"
#include "solver/solver.h"

/* The candidate moves of a graph: ordered pairs (y, u) of nodes that may
 * share a group and touch a common buffer, by how many bytes that buffer
 * holds (largest first, then y, then u: a fixed order). */
typedef struct solver_moves {
  int32_t count;
  int32_t *node;   /* y: the node that moves */
  int32_t *target; /* u: y joins u's group */
  int32_t next;    /* the candidate the next pass starts at */
} solver_moves;

/* Lists the candidates of g into *mv (free with solver_moves_free).  A
 * buffer's writer and readers are paired among the first MOVES_PER_BUFFER
 * of them that are not extern.  0, or -1 out of memory (then *mv is
 * empty). */
int solver_moves_make(const fp_graph *g, solver_moves *mv);

/* Frees the lists; safe on a zeroed or already freed *mv. */
void solver_moves_free(solver_moves *mv);

/* The state a pass of moves works on: the plan, its figures and the
 * step of every node (kept in step after each accepted move). */
typedef struct solver_move_state {
  const fp_graph *g;
  const fp_ilp_params *prm;
  int32_t k;           /* effective max fusion size */
  uint64_t eager_peak; /* what FP_LIMITS_PEAK_EAGER stands for */
  fp_plan **cur;       /* legal and within the limits; replaced on a move */
  fp_plan **scratch;   /* a second plan to build moves in */
  fp_metrics *cur_m;   /* the evaluator's figures of *cur */
  int32_t *step;       /* node -> step in *cur */
} solver_move_state;

/* One pass over the candidates, in their order from mv->next on (and
 * round), until `deadline` (or the cancel flag), which leaves mv->next
 * where it stopped: for a pair (y, u) in different groups, the plan with y in
 * u's group at u's step, then with u's whole group moved to y's step and
 * y in it, then the same two with y's whole group in place of y; the
 * first legal one that meets the limits and beats *cur
 * (solver_better) becomes *cur (swapped with *scratch), and the pass goes
 * on from the next pair.  Moves that break an order between producers
 * and readers are skipped before evaluating.  *moved counts the moves
 * kept; *whole is true when every candidate was tried.  When a whole pass
 * kept nothing, the readers of each buffer are regrouped (moves.c) under
 * the same rule, until `deadline`, and *moved counts those kept too.
 * FP_OK or FP_ENOMEM
 * (then *cur is still a legal plan with figures *cur_m and steps `step`). */
fp_status solver_move_pass(solver_move_state *S, solver_moves *mv,
                           double deadline, int32_t *moved, bool *whole,
                           fp_error *err);

/* Whole groups moved across the peak step of *S->cur (moves.c, "groups
 * around the peak"): a group that runs at or before the peak step and
 * whose outputs are all read after it goes just before its first reader;
 * one that runs at or after it and whose producers all ran before it,
 * just after its last producer.  Only the order changes (the grouping,
 * hence the traffic, never does).  The first candidate that meets the
 * limits and beats *cur (solver_better) is kept and the scan starts again
 * at the new peak, until none does or `deadline` (or the cancel flag);
 * *moved counts those kept.  FP_OK or FP_ENOMEM (then *cur is still a
 * legal plan with figures *cur_m and steps `step`). */
fp_status solver_peak_pass(solver_move_state *S, double deadline,
                           int32_t *moved, fp_error *err);

#endif /* FP_MOVES_H */
