/*
 * graph.h -- the fuseplan graph: buffers, nodes, outputs, unfusible pairs.
 *
 * A graph is built once (by the JSON loader or the generator) through the
 * builder calls below, then frozen by fp_graph_finalize(), which validates it
 * and builds the reverse indexes (writer and readers of every buffer).  After
 * finalize the graph is immutable and every accessor is O(1).
 *
 * Invariants of a finalized graph (what every other module may rely on):
 *   - node indices are the listed (eager) program order, and a valid one:
 *     every buffer a node reads is an input or is written by an earlier node;
 *   - every non-input buffer that is read or listed as an output has exactly
 *     one writer; inputs have none;
 *   - byte counts are integers below 2^53, and the sum of all buffer bytes,
 *     all per-read bytes and the outside live bytes is below 2^62
 *     (FP_MAX_TOTAL_BYTES), so no sum the evaluator forms (traffic, live
 *     memory) can overflow uint64_t;
 *   - a non-extern node has numel >= 1 and rnumel >= 1.
 */
#ifndef FP_GRAPH_H
#define FP_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "status.h"

/* Byte counts must be below 2^53: they are exact in JSON doubles. */
#define FP_MAX_BYTES ((uint64_t)1 << 53)
/* Bound on the sum of all byte counts of a graph (see the invariants). */
#define FP_MAX_TOTAL_BYTES ((uint64_t)1 << 62)

/* The newest graph-file version (docs/formats.md): 2 adds
 * outside_live_bytes, 3 the node fields loop and inplace and the linked
 * pairs, 4 the node field workspace; a file is
 * written at the lowest version that holds its fields. */
#define FP_GRAPH_FORMAT_VERSION 4
/* Most nodes / buffers one graph may hold (indices are int32_t). */
#define FP_MAX_ITEMS (1 << 30)
/* Default for the graph field max_fusion_size. */
#define FP_DEFAULT_MAX_FUSION_SIZE 64
/* Longest accepted name, in bytes. */
#define FP_MAX_NAME 4096

typedef enum fp_kind {
  FP_KIND_POINTWISE = 0,
  FP_KIND_REDUCTION = 1,
  FP_KIND_EXTERN = 2
} fp_kind;

/* Executable semantics of a node (optional; see docs/ops.md).
 * X(name, json-name, kind-mask, min reads, max reads); max -1 = unbounded.
 * Kind masks: P pointwise, R reduction, E extern. */
#define FP_OP_P 1
#define FP_OP_R 2
#define FP_OP_E 4
#define FP_OP_MAP(X)                                                           \
  X(NONE, "none", 0, 0, 0)                                                     \
  X(ADD, "add", FP_OP_P, 1, -1)                                                \
  X(MUL, "mul", FP_OP_P, 1, -1)                                                \
  X(SUB, "sub", FP_OP_P, 2, 2)                                                 \
  X(DIV, "div", FP_OP_P, 2, 2)                                                 \
  X(NEG, "neg", FP_OP_P, 1, 1)                                                 \
  X(SCALE, "scale", FP_OP_P, 1, 1)                                             \
  X(COPY, "copy", FP_OP_P, 1, 1)                                               \
  X(RELU, "relu", FP_OP_P, 1, 1)                                               \
  X(RELU_GRAD, "relu_grad", FP_OP_P, 2, 2)                                     \
  X(GELU, "gelu", FP_OP_P, 1, 1)                                               \
  X(EXP, "exp", FP_OP_P, 1, 1)                                                 \
  X(TANH, "tanh", FP_OP_P, 1, 1)                                               \
  X(RSQRT, "rsqrt", FP_OP_P, 1, 1)                                             \
  X(FILL, "fill", FP_OP_P, 0, 0)                                               \
  X(SUM, "sum", FP_OP_R, 1, -1)                                                \
  X(MEAN, "mean", FP_OP_R, 1, 1)                                               \
  X(MAX, "max", FP_OP_R, 1, 1)                                                 \
  X(SUMSQ, "sumsq", FP_OP_R, 1, 1)                                             \
  X(MATMUL, "matmul", FP_OP_E, 2, 2)

typedef enum fp_op_fn {
#define FP_OP_ENUM_(name, str, kinds, lo, hi) FP_OP_##name,
  FP_OP_MAP(FP_OP_ENUM_)
#undef FP_OP_ENUM_
      FP_OP_COUNT_
} fp_op_fn;

/* How element i of a node's iteration space (N = numel * rnumel elements,
 * i = o * rnumel + r for output o and reduction index r) indexes a read
 * buffer of E float32 elements: ELEM i (E == N); ROW i/(N/E) (a per-row
 * value broadcast along the last dimension, e.g. a reduction result); COL
 * i%E (a per-column value, e.g. a bias); TRANS r * numel + o (E == N: a
 * reduction over the rows of a row-major [rnumel, numel] buffer, i.e. a
 * column sum; the same as ELEM for pointwise nodes).  AUTO is ELEM when
 * E == N and ROW otherwise. */
typedef enum fp_index {
  FP_INDEX_AUTO = 0,
  FP_INDEX_ELEM = 1,
  FP_INDEX_ROW = 2,
  FP_INDEX_COL = 3,
  FP_INDEX_TRANS = 4
} fp_index;

typedef struct fp_op {
  fp_op_fn fn;           /* FP_OP_NONE: the node has no semantics */
  double alpha;          /* scale / fill constant (default 1.0) */
  uint32_t m, n, k;      /* matmul: C[m,n] = op(A)[m,k] * op(B)[k,n] */
  bool trans_a, trans_b; /* matmul: A stored [k,m] / B stored [n,k] */
} fp_op;

/* One read of a node: the buffer and the bytes it touches (the per-read
 * override, or the buffer's size). `index` is the op's index mode. */
typedef struct fp_read {
  int32_t buffer;
  uint8_t index; /* fp_index */
  uint64_t bytes;
} fp_read;

/* Most sizes one loop nest holds, loop and reduction sizes together. */
#define FP_MAX_LOOP_DIMS 8

/* A node's loop nest as the compiler's scheduler sees it (graph format 3,
 * node field `loop`, docs/cost-model.md#loop-nests): n loop sizes, then rn
 * reduction sizes, in size[0..n+rn).  When present is false the node has
 * none and its iteration space alone decides its fusions. */
typedef struct fp_loop {
  bool present;
  uint8_t n, rn;
  uint64_t size[FP_MAX_LOOP_DIMS];
} fp_loop;

/* A finalized node, as seen through fp_graph_node(). */
typedef struct fp_node {
  const char *name;
  fp_kind kind;
  uint64_t numel, rnumel; /* both 0 for extern nodes without iter */
  int32_t n_reads, n_writes;
  const fp_read *reads;  /* in listed order; may repeat a buffer */
  const int32_t *writes; /* distinct buffers */
  fp_op op;
  fp_loop loop; /* absent unless the file gave one */
  /* Bytes of temporaries the node's kernel allocates and frees inside its
   * call (graph format 4, docs/cost-model.md#workspaces); 0 = none. */
  uint64_t workspace;
} fp_node;

/* A finalized buffer, as seen through fp_graph_buffer(). */
typedef struct fp_buffer {
  const char *name;
  uint64_t bytes;
  bool input, freeable, output;
  int32_t writer;    /* node index, -1 for inputs and unwritten */
  int32_t n_readers; /* distinct reader nodes, ascending */
  const int32_t *readers;
} fp_buffer;

typedef struct fp_graph fp_graph;

/* ---- building ------------------------------------------------------- */

/* Creates an empty, unfinalized graph named `name` (copied; NULL = "").
 * Returns NULL when out of memory. */
fp_graph *fp_graph_create(const char *name);

/* Frees the graph and everything it owns.  NULL is a no-op. */
void fp_graph_destroy(fp_graph *g);

/* Sets max_fusion_size (>= 1); FP_EINPUT otherwise, FP_EARG once the
 * graph is finalized. */
fp_status fp_graph_set_max_fusion_size(fp_graph *g, int32_t k, fp_error *err);

/* Sets the free-form provenance string written as meta.source (copied);
 * FP_EARG once finalized, FP_ENOMEM. */
fp_status fp_graph_set_source(fp_graph *g, const char *source, fp_error *err);

/* Sets the bytes live outside the graph: allocated when the compiled graph
 * is entered and neither read nor freed by it (parameters it does not
 * read, activations autograd holds, ...; docs/formats.md).  They are live
 * in every step of every plan, so they count as resident bytes.  bytes
 * must be below 2^53 (FP_EINPUT) and keep the graph's total below
 * FP_MAX_TOTAL_BYTES (FP_ELIMIT); FP_EARG once finalized.  Default 0. */
fp_status fp_graph_set_outside_live_bytes(fp_graph *g, uint64_t bytes,
                                          fp_error *err);

/* Adds a buffer; returns its index (>= 0) or -1 with err filled:
 * FP_EINPUT for an empty or duplicate name, bytes >= 2^53, or freeable on a
 * non-input; FP_ELIMIT past FP_MAX_ITEMS or FP_MAX_TOTAL_BYTES; FP_ENOMEM.
 * A failed call leaves the graph as it was. */
int32_t fp_graph_add_buffer(fp_graph *g, const char *name, uint64_t bytes,
                            bool input, bool freeable, fp_error *err);

/* Returns the index of the buffer / node called `name`, or -1. */
int32_t fp_graph_find_buffer(const fp_graph *g, const char *name);
int32_t fp_graph_find_node(const fp_graph *g, const char *name);

/* Describes a node to add.  `reads[i].bytes` is the per-read override, or
 * FP_READ_WHOLE for "the whole buffer".  `op` may be NULL. */
#define FP_READ_WHOLE UINT64_MAX
typedef struct fp_node_spec {
  const char *name;
  fp_kind kind;
  uint64_t numel, rnumel; /* required (>= 1) unless extern; 0 = absent */
  int32_t n_reads, n_writes;
  const fp_read *reads;
  const int32_t *writes;
  const fp_op *op;
} fp_node_spec;

/* Adds a node after all earlier ones (the listed order).  Returns its index
 * or -1 with err: FP_EINPUT for a duplicate/empty name, an unknown buffer
 * index, a write to an input, a buffer with two writers, a node writing the
 * same buffer twice, a read of a buffer not yet written (not topological),
 * a read override larger than the buffer, a missing/zero iter on a
 * non-extern node, or an op that does not fit the node (docs/ops.md);
 * FP_ELIMIT past FP_MAX_ITEMS or FP_MAX_TOTAL_BYTES; FP_ENOMEM.  A failed
 * call leaves the graph as it was. */
int32_t fp_graph_add_node(fp_graph *g, const fp_node_spec *spec, fp_error *err);

/* Gives node v (already added) the loop nest *loop, which replaces any
 * earlier one; a loop with present false removes it.  FP_EARG once
 * finalized or for a NULL loop; FP_EINPUT naming the node for a bad index,
 * a loop on an extern node, reduction sizes on a pointwise node or none on
 * a reduction, more than FP_MAX_LOOP_DIMS sizes, or sizes that do not
 * multiply to the node's numel and rnumel.  A failed call changes
 * nothing. */
fp_status fp_graph_set_node_loop(fp_graph *g, int32_t v, const fp_loop *loop,
                                 fp_error *err);

/* Gives node v (already added) a workspace: the bytes of temporaries its
 * kernel allocates and frees inside its call (graph format 4, node field
 * `workspace`, docs/cost-model.md#workspaces), live at v's step only.
 * Replaces an earlier value; 0 removes it.  FP_EARG once finalized;
 * FP_EINPUT naming the node for bytes >= 2^53, FP_EINPUT for a bad
 * index; FP_ELIMIT naming the node when the graph's total bytes would
 * pass FP_MAX_TOTAL_BYTES.  A failed call changes nothing. */
fp_status fp_graph_set_node_workspace(fp_graph *g, int32_t v, uint64_t bytes,
                                      fp_error *err);

/* Marks buffer `b` as a graph output (idempotent).  FP_EINPUT on a bad
 * index. */
fp_status fp_graph_add_output(fp_graph *g, int32_t b, fp_error *err);

/* One in-place pair of a node (docs/cost-model.md, "In-place kernels"):
 * the node writes `write` and may take over `read`'s storage. */
typedef struct fp_inplace {
  int32_t read, write; /* buffer indices */
} fp_inplace;

/* Most in-place pairs one node may list (a node has one per read at most
 * in Inductor's rule; the evaluator keeps them in a 64-bit mask). */
#define FP_MAX_INPLACE_PER_NODE 64

/* Adds the in-place pair (read, write) to node v.  Pairs of one node keep
 * the order of the calls (the evaluator applies them in that order).
 * FP_EINPUT naming the node when v or a buffer is unknown; finalize fails
 * with FP_EINPUT naming the node and buffers when v does not read `read`
 * or write `write`, their bytes differ, the pair is listed twice, v has
 * more than FP_MAX_INPLACE_PER_NODE pairs, or a pair shares its read with
 * another pair of v and its written buffer with a third (v's pairs that
 * share buffers must form stars: one read to several writes, or several
 * reads to one write, as Inductor's one-output rule gives).  FP_EARG
 * once finalized; FP_ENOMEM. */
fp_status fp_graph_add_inplace(fp_graph *g, int32_t v, int32_t read,
                               int32_t write, fp_error *err);

/* A linked pair (graph format 3, field `linked`, docs/formats.md): nodes
 * u < v may share a group only when the group also holds one of the
 * linkers via[0..n_via) (ascending, distinct, neither u nor v): the
 * compiler fuses u and v only through a member that links them. */
typedef struct fp_linked {
  int32_t u, v;
  int32_t n_via;
  const int32_t *via; /* set by finalize */
} fp_linked;

/* Declares the linked pair (u, v) with the n_via linkers via[] (order
 * irrelevant; repeats are merged).  FP_EINPUT naming the nodes for a bad
 * index, u == v, no linker, or a linker that is u or v; FP_EARG once
 * finalized or for a NULL via; FP_ENOMEM.  A failed call changes
 * nothing. */
fp_status fp_graph_add_linked(fp_graph *g, int32_t u, int32_t v, int32_t n_via,
                              const int32_t *via, fp_error *err);
/* Marks input buffer b as written before the graph, by the program the
 * graph is cut from (a window's sub-graph, solver/window/window.h): an
 * in-place pair on it is then no mutation's, and only its readers'
 * ancestry makes them fused readers (fp_graph_inplace_fused_readers).
 * FP_EINPUT for a bad index or a buffer that is no input; FP_EARG once
 * finalized; FP_ENOMEM. */
fp_status fp_graph_set_input_written_before(fp_graph *g, int32_t b,
                                            fp_error *err);

/* Whether input b was marked so (false for a bad index, a NULL or an
 * unfinalized graph). */
bool fp_graph_input_written_before(const fp_graph *g, int32_t b);

/* Declares nodes u and v unfusible (order irrelevant; duplicates are
 * merged).  FP_EINPUT on bad indices or u == v. */
fp_status fp_graph_add_unfusible(fp_graph *g, int32_t u, int32_t v,
                                 fp_error *err);

/* Validates what can only be checked once everything is in (every output
 * and every read buffer has a writer or is an input) and builds the reader
 * indexes.  After success the graph is frozen: further add_* calls fail
 * with FP_EARG.  Fails with FP_EINPUT naming the item, or FP_ENOMEM. */
fp_status fp_graph_finalize(fp_graph *g, fp_error *err);

/* ---- reading (finalized graphs) --------------------------------------- */

/* A copy of the finalized graph g that is still open for building: the
 * same name, source, max_fusion_size, buffers, nodes (in order), outputs
 * and unfusible pairs, so that a caller can add constraints (more
 * unfusible pairs) and finalize it.  NULL with err filled (FP_ENOMEM, or
 * FP_EARG when g is not finalized). */
fp_graph *fp_graph_copy_open(const fp_graph *g, fp_error *err);

/* Renames the graph (finalized or not; a cut of a graph is named after
 * its window).  FP_ENOMEM. */
fp_status fp_graph_rename(fp_graph *g, const char *name, fp_error *err);
const char *fp_graph_name(const fp_graph *g);
const char *fp_graph_source(const fp_graph *g); /* "" when unset */
int32_t fp_graph_node_count(const fp_graph *g);
int32_t fp_graph_buffer_count(const fp_graph *g);
int32_t fp_graph_output_count(const fp_graph *g);
int32_t fp_graph_output(const fp_graph *g, int32_t i); /* buffer index */
int32_t fp_graph_max_fusion_size(const fp_graph *g);
/* The largest group allowed in g under a fusion-size limit k: k when
 * 0 < k < g's max_fusion_size, g's own otherwise (0 stands for it, and a
 * limit may only lower it: every bound and rule of g assumes no group
 * above it); 0 for a NULL g.  Never fails. */
int32_t fp_graph_fusion_cap(const fp_graph *g, int32_t k);
bool fp_graph_is_finalized(const fp_graph *g);

/* Node / buffer views; the pointers stay valid until the graph is
 * destroyed.  NULL for an index out of range, a NULL graph or one not yet
 * finalized.  The other accessors answer NULL, 0, -1 (fp_graph_output) or
 * false for a NULL graph or an index out of range. */
const fp_node *fp_graph_node(const fp_graph *g, int32_t v);
const fp_buffer *fp_graph_buffer(const fp_graph *g, int32_t b);

/* Unfusible pairs, each once, as (u < v), sorted; pair i out of range
 * gives u = v = -1 (u or v may be NULL). */
int32_t fp_graph_unfusible_count(const fp_graph *g);
void fp_graph_unfusible_pair(const fp_graph *g, int32_t i, int32_t *u,
                             int32_t *v);
/* True when (u, v) is listed as unfusible.  O(log pairs). */
bool fp_graph_is_unfusible(const fp_graph *g, int32_t u, int32_t v);

/* Linked pairs in listed order; NULL for i out of range or a graph not
 * finalized. */
int32_t fp_graph_linked_count(const fp_graph *g);
const fp_linked *fp_graph_linked(const fp_graph *g, int32_t i);

/* Whether the group members[0..n) (distinct node indices) keeps the
 * linked-pair rule: every linked pair with both nodes in it also has one
 * of its linkers in it.  Returns -1 when it does, else the index of the
 * first linked pair it breaks (for fp_graph_linked).  O(n) per linked pair
 * that starts at a member, times its linkers. */
int32_t fp_graph_linked_broken(const fp_graph *g, const int32_t *members,
                               int32_t n);

/* True when nodes u != v may share a group as a pair: the compatibility
 * rule of docs/cost-model.md#legality (iteration spaces, not unfusible),
 * and no extern node shares a group. */
bool fp_graph_compatible(const fp_graph *g, int32_t u, int32_t v);

/* Rule 2 without the unfusible list: whether nodes of these kinds and
 * iteration spaces may share a group (never when either is extern), and,
 * when both have a loop nest, whether the loop nests fuse
 * (docs/cost-model.md#loop-nests).  Depends only on (kind, numel, rnumel,
 * loop), so the solver can reason about classes of nodes instead of
 * pairs. */
bool fp_iter_compatible(const fp_node *a, const fp_node *b);

/* Whether two loop nests are the same (both absent, or equal sizes in
 * equal positions): with kind, numel and rnumel, a node's class for
 * fp_iter_compatible.  NULL equals only NULL. */
bool fp_loop_equal(const fp_loop *a, const fp_loop *b);

/* Bytes live for the whole program whatever the plan: the bytes live
 * outside the graph, non-freeable inputs, and freeable inputs that are
 * graph outputs.  Every evaluator, bound and solver adds this once. */
uint64_t fp_graph_resident_bytes(const fp_graph *g);

/* Node v's in-place pairs, in listed order; *n gets their count (0 and
 * NULL for none, a bad index or an unfinalized graph). */
const fp_inplace *fp_graph_inplace(const fp_graph *g, int32_t v, int32_t *n);

/* The fused readers of node v's pair k (k counts v's pairs from 0): the
 * readers of the pair's read buffer i, other than v, that may run in v's
 * own group without stopping the takeover (docs/cost-model.md, "In-place
 * kernels").  Such a reader r comes before v, may fuse with v, reads i
 * only as v first reads it (the same bytes and index mode), and is an
 * ancestor of v: a path of reads leads from r to v through nodes that may
 * all fuse with v, or i is a graph input not written before the graph
 * (then the pair is a mutation's, which Inductor orders after every
 * reader of the old value).
 * Ascending; *n gets their count (0 and NULL for none, a bad index or an
 * unfinalized graph). */
const int32_t *fp_graph_inplace_fused_readers(const fp_graph *g, int32_t v,
                                              int32_t k, int32_t *n);

/* Whether node r is one of the fused readers of node v's pair k. */
bool fp_graph_inplace_fused_reader(const fp_graph *g, int32_t v, int32_t k,
                                   int32_t r);

/* The number of in-place pairs over all nodes (0 for NULL). */
int32_t fp_graph_inplace_count(const fp_graph *g);

/* The bytes live outside the graph (fp_graph_set_outside_live_bytes);
 * 0 when none were set or g is NULL. */
uint64_t fp_graph_outside_live_bytes(const fp_graph *g);

/* The sum of all nodes' workspaces (0 for NULL or an unfinalized
 * graph). */
uint64_t fp_graph_workspace_total(const fp_graph *g);

/* The largest workspace of a node, its node into *node unless node is
 * NULL (-1 when no node has one; then 0).  Never fails. */
uint64_t fp_graph_workspace_max(const fp_graph *g, int32_t *node);

/* The workspace of a group (docs/cost-model.md#workspaces): the sum of
 * its members' workspaces, live at the group's step only.  members[0..n)
 * are node indices; a bad index counts 0.  Never fails. */
uint64_t fp_graph_group_workspace(const fp_graph *g, const int32_t *members,
                                  int32_t n);

/* fp_graph_group_workspace of the nodes of mask `group` (bit v: node v),
 * for graphs of at most 64 nodes (the exact searches); 0 past 64 nodes. */
uint64_t fp_graph_mask_workspace(const fp_graph *g, uint64_t group);

/* Names of kinds / ops / index modes ("unknown" outside the list), and
 * their parsers (-1 if unknown or NULL). */
const char *fp_kind_name(fp_kind k);
int fp_kind_parse(const char *s);
const char *fp_op_name(fp_op_fn fn);
int fp_op_parse(const char *s);
const char *fp_index_name(fp_index ix);
int fp_index_parse(const char *s);

/* Fills `op` with defaults (FP_OP_NONE, alpha 1); NULL is a no-op. */
void fp_op_init(fp_op *op);

#endif /* FP_GRAPH_H */
