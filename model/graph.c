/*
 * graph.c -- building, validating and reading fuseplan graphs.
 *
 * Validation happens as items are added, in the listed order: a node may
 * only read buffers that are inputs or already written, which is exactly
 * "the listed order is a valid program order" and also rules out cycles.
 * What needs the whole graph (outputs with writers, reader indexes) is done
 * by fp_graph_finalize().
 */
#include "model/graph.h"

#include <stdlib.h>
#include <string.h>

#include "model/graph_internal.h"
#include "model/util.h"

/* ---- names of enums ------------------------------------------------- */

static const char *const kind_names[] = {"pointwise", "reduction", "extern"};

const char *fp_kind_name(fp_kind k) {
  return fp_name_of(kind_names, 3, (int)k);
}

int fp_kind_parse(const char *s) {
  return fp_name_lookup(kind_names, 3, s);
}

typedef struct op_desc {
  const char *name;
  int kinds, min_reads, max_reads;
} op_desc;

static const op_desc op_table[] = {
#define FP_OP_DESC_(name, str, kinds, lo, hi) {str, kinds, lo, hi},
    FP_OP_MAP(FP_OP_DESC_)
#undef FP_OP_DESC_
};

const char *fp_op_name(fp_op_fn fn) {
  return (unsigned)fn < FP_OP_COUNT_ ? op_table[fn].name : "unknown";
}

int fp_op_parse(const char *s) {
  if (!s)
    return -1;
  for (int i = 1; i < FP_OP_COUNT_; i++)
    if (strcmp(s, op_table[i].name) == 0)
      return i;
  return -1;
}

static const char *const index_names[] = {"auto", "elem", "row", "col",
                                          "trans"};

const char *fp_index_name(fp_index ix) {
  return fp_name_of(index_names, FP_INDEX_TRANS + 1, (int)ix);
}

int fp_index_parse(const char *s) {
  return fp_name_lookup(index_names, FP_INDEX_TRANS + 1, s);
}

void fp_op_init(fp_op *op) {
  if (!op)
    return;
  memset(op, 0, sizeof *op);
  op->fn = FP_OP_NONE;
  op->alpha = 1.0;
}

/* ---- lifecycle ------------------------------------------------------ */

int fp_grow_array(void **arr, int32_t *cap, int64_t need, size_t elem) {
  if (need <= *cap)
    return 0;
  if (need > FP_MAX_ITEMS)
    return -1;
  int64_t n = *cap ? *cap : 16;
  while (n < need)
    n *= 2;
  if (n > FP_MAX_ITEMS)
    n = FP_MAX_ITEMS;
  void *p = realloc(*arr, (size_t)n * elem);
  if (!p)
    return -1;
  *arr = p;
  *cap = (int32_t)n;
  return 0;
}

#define GROW(g, field, capf, need)                                             \
  fp_grow_array((void **)&(g)->field, &(g)->capf, (need), sizeof(*(g)->field))

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p)
    memcpy(p, s, n);
  return p;
}

fp_graph *fp_graph_create(const char *name) {
  fp_graph *g = calloc(1, sizeof *g);
  if (!g)
    return NULL;
  g->name = dup_str(name ? name : "");
  g->source = dup_str("");
  if (!g->name || !g->source)
    goto fail;
  g->max_fusion_size = FP_DEFAULT_MAX_FUSION_SIZE;
  fp_arena_init(&g->names);
  fp_strmap_init(&g->buffer_map);
  fp_strmap_init(&g->node_map);
  return g;
fail:
  fp_graph_destroy(g);
  return NULL;
}

void fp_graph_destroy(fp_graph *g) {
  if (!g)
    return;
  free(g->name);
  free(g->source);
  free(g->meta_json);
  fp_arena_free(&g->names);
  fp_strmap_free(&g->buffer_map);
  fp_strmap_free(&g->node_map);
  free(g->buffers);
  free(g->nodes);
  free(g->reads);
  free(g->writes);
  free(g->outputs);
  free(g->unfusible);
  free(g->linked);
  free(g->linked_at);
  free(g->linked_via);
  free(g->linked_off);
  free(g->linked_by_u);
  free(g->inplace);
  free(g->inplace_node);
  free(g->inplace_off);
  free(g->fused_off);
  free(g->fused);
  free(g->prior);
  free(g->is_prior);
  free(g->reader_off);
  free(g->readers);
  free(g);
}

/* FP_EARG unless g is a graph still open for building. */
static fp_status check_building(const fp_graph *g, fp_error *err) {
  if (!g)
    return fp_error_set(err, FP_EARG, "graph: NULL graph");
  if (g->finalized)
    return fp_error_set(err, FP_EARG, "graph is already finalized");
  return FP_OK;
}

fp_status fp_graph_set_max_fusion_size(fp_graph *g, int32_t k, fp_error *err) {
  if (check_building(g, err) != FP_OK)
    return FP_EARG;
  if (k < 1)
    return fp_error_set(err, FP_EINPUT, "max_fusion_size: must be >= 1, got %d",
                        (int)k);
  g->max_fusion_size = k;
  return FP_OK;
}

fp_status fp_graph_set_source(fp_graph *g, const char *source, fp_error *err) {
  if (check_building(g, err) != FP_OK)
    return FP_EARG;
  char *s = dup_str(source ? source : "");
  if (!s)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  free(g->source);
  g->source = s;
  return FP_OK;
}

fp_status fp_graph_rename(fp_graph *g, const char *name, fp_error *err) {
  if (!g)
    return fp_error_set(err, FP_EARG, "graph: NULL graph");
  char *s = dup_str(name ? name : "");
  if (!s)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  free(g->name);
  g->name = s;
  return FP_OK;
}

/* Checks that `bytes` more keep the graph's running total below the bound
 * that keeps every evaluator sum inside uint64_t (FP_ELIMIT otherwise).
 * Does not add them: callers commit only once nothing else can fail. */
static fp_status check_total(const fp_graph *g, uint64_t bytes,
                             const char *what, const char *name,
                             fp_error *err) {
  if (bytes >= FP_MAX_TOTAL_BYTES - g->total_bytes)
    return fp_error_set(err, FP_ELIMIT,
                        "%s '%s': total bytes of the graph exceed 2^62", what,
                        name);
  return FP_OK;
}

fp_status fp_graph_set_outside_live_bytes(fp_graph *g, uint64_t bytes,
                                          fp_error *err) {
  if (check_building(g, err) != FP_OK)
    return FP_EARG;
  if (bytes >= FP_MAX_BYTES)
    return fp_error_set(err, FP_EINPUT,
                        "outside_live_bytes: %llu is not below 2^53",
                        (unsigned long long)bytes);
  /* The total counts them like a buffer's: every live sum stays bounded. */
  uint64_t was = g->outside_bytes;
  g->total_bytes -= was;
  fp_status st = check_total(g, bytes, "graph", "outside_live_bytes", err);
  g->outside_bytes = st == FP_OK ? bytes : was;
  g->total_bytes += g->outside_bytes;
  return st;
}

/* FP_ELIMIT when `count + more` items would pass FP_MAX_ITEMS. */
static fp_status check_items(int64_t count, int64_t more, const char *what,
                             const char *name, fp_error *err) {
  if (count + more > FP_MAX_ITEMS)
    return fp_error_set(err, FP_ELIMIT, "%s '%s': more than %d items", what,
                        name, FP_MAX_ITEMS);
  return FP_OK;
}

/* Checks a name and copies it into the arena; NULL with err on failure. */
static const char *intern_name(fp_graph *g, const char *name, const char *what,
                               fp_error *err) {
  if (!name || !name[0]) {
    fp_error_set(err, FP_EINPUT, "%s: empty name", what);
    return NULL;
  }
  if (strlen(name) > FP_MAX_NAME) {
    fp_error_set(err, FP_EINPUT, "%s: name longer than %d bytes", what,
                 FP_MAX_NAME);
    return NULL;
  }
  const char *s = fp_arena_strdup(&g->names, name);
  if (!s)
    fp_error_set(err, FP_ENOMEM, "out of memory");
  return s;
}

int32_t fp_graph_add_buffer(fp_graph *g, const char *name, uint64_t bytes,
                            bool input, bool freeable, fp_error *err) {
  const char *label = name ? name : "";
  if (check_building(g, err) != FP_OK)
    return -1;
  if (bytes >= FP_MAX_BYTES) {
    fp_error_set(err, FP_EINPUT, "buffer '%s': bytes must be below 2^53",
                 label);
    return -1;
  }
  if (freeable && !input) {
    fp_error_set(err, FP_EINPUT,
                 "buffer '%s': freeable is only allowed on inputs", label);
    return -1;
  }
  if (check_total(g, bytes, "buffer", label, err) != FP_OK ||
      check_items(g->n_buffers, 1, "buffer", label, err) != FP_OK)
    return -1;
  const char *nm = intern_name(g, name, "buffer", err);
  if (!nm)
    return -1;
  /* The map insert is the last step that can fail: nothing changes before
   * it, nothing can fail after it. */
  int32_t b = g->n_buffers;
  int put = GROW(g, buffers, cap_buffers, (int64_t)b + 1) != 0
                ? -1
                : fp_strmap_put(&g->buffer_map, nm, b);
  if (put != 0) { /* one lookup finds duplicates and inserts */
    fp_error_set(err, put > 0 ? FP_EINPUT : FP_ENOMEM,
                 put > 0 ? "buffer '%s': duplicate name"
                         : "buffer '%s': out of memory",
                 nm);
    return -1;
  }
  fp_buffer *buf = &g->buffers[b];
  memset(buf, 0, sizeof *buf);
  buf->name = nm;
  buf->bytes = bytes;
  buf->input = input;
  buf->freeable = freeable;
  buf->writer = -1;
  g->total_bytes += bytes;
  g->n_buffers++;
  return b;
}

int32_t fp_graph_find_buffer(const fp_graph *g, const char *name) {
  if (!g || !name)
    return -1;
  return fp_strmap_get(&g->buffer_map, name);
}

int32_t fp_graph_find_node(const fp_graph *g, const char *name) {
  if (!g || !name)
    return -1;
  return fp_strmap_get(&g->node_map, name);
}

/* ---- node validation -------------------------------------------------- */

/* Elements of a float32 buffer, or -1 if its size is not a multiple of 4. */
static int64_t f32_elems(const fp_graph *g, int32_t b) {
  uint64_t bytes = g->buffers[b].bytes;
  return bytes % 4 ? -1 : (int64_t)(bytes / 4);
}

/* Whether a read of E elements can be indexed from a space of N elements
 * with mode `ix` (see fp_index in graph.h). */
static bool index_fits(int64_t e, uint64_t n, fp_index ix) {
  if (e <= 0)
    return false;
  if (ix == FP_INDEX_ELEM || ix == FP_INDEX_TRANS)
    return (uint64_t)e == n;
  return n % (uint64_t)e == 0;
}

/* Checks the matmul shapes: reads A (m*k), B (k*n), one write C (m*n). */
static fp_status check_matmul(const fp_graph *g, const fp_node_spec *s,
                              fp_error *err) {
  const fp_op *op = s->op;
  if (op->m == 0 || op->n == 0 || op->k == 0)
    return fp_error_set(err, FP_EINPUT, "node '%s': op: matmul needs m, n, k",
                        s->name);
  uint64_t want[2] = {(uint64_t)op->m * op->k, (uint64_t)op->k * op->n};
  for (int i = 0; i < 2; i++)
    if (f32_elems(g, s->reads[i].buffer) != (int64_t)want[i])
      return fp_error_set(err, FP_EINPUT,
                          "node '%s': op: matmul operand %d of buffer '%s' "
                          "is not %llu float32 elements",
                          s->name, i, g->buffers[s->reads[i].buffer].name,
                          (unsigned long long)want[i]);
  if (s->n_writes != 1 ||
      f32_elems(g, s->writes[0]) != (int64_t)((uint64_t)op->m * op->n))
    return fp_error_set(err, FP_EINPUT,
                        "node '%s': op: matmul writes one buffer of m*n "
                        "float32 elements",
                        s->name);
  return FP_OK;
}

/* Checks that an op fits its node: allowed for the kind, right number of
 * reads, float32 shapes that index correctly (docs/ops.md). */
static fp_status check_op(const fp_graph *g, const fp_node_spec *s,
                          fp_error *err) {
  const fp_op *op = s->op;
  if (!op || op->fn == FP_OP_NONE)
    return FP_OK;
  if ((unsigned)op->fn >= FP_OP_COUNT_)
    return fp_error_set(err, FP_EINPUT, "node '%s': op: unknown fn", s->name);
  const op_desc *d = &op_table[op->fn];
  if (!(d->kinds & (1 << s->kind)))
    return fp_error_set(err, FP_EINPUT, "node '%s': op: '%s' is not a %s op",
                        s->name, d->name, fp_kind_name(s->kind));
  if (s->n_reads < d->min_reads ||
      (d->max_reads >= 0 && s->n_reads > d->max_reads))
    return fp_error_set(err, FP_EINPUT,
                        "node '%s': op: '%s' cannot take %d reads", s->name,
                        d->name, (int)s->n_reads);
  if (op->fn == FP_OP_MATMUL)
    return check_matmul(g, s, err);
  uint64_t n = s->numel * s->rnumel;
  for (int32_t i = 0; i < s->n_reads; i++)
    if (!index_fits(f32_elems(g, s->reads[i].buffer), n, s->reads[i].index))
      return fp_error_set(err, FP_EINPUT,
                          "node '%s': op: reads[%d] buffer '%s' does not fit "
                          "the iteration space as float32 (%s)",
                          s->name, (int)i, g->buffers[s->reads[i].buffer].name,
                          fp_index_name(s->reads[i].index));
  for (int32_t i = 0; i < s->n_writes; i++)
    if (f32_elems(g, s->writes[i]) != (int64_t)s->numel)
      return fp_error_set(err, FP_EINPUT,
                          "node '%s': op: writes[%d] buffer '%s' is not numel "
                          "float32 elements",
                          s->name, (int)i, g->buffers[s->writes[i]].name);
  return FP_OK;
}

/* ---- loop nests ---------------------------------------------------------
 * Graph format 3's node field `loop` (docs/cost-model.md#loop-nests).  The
 * rule mirrors the C++ backend of PyTorch Inductor, which compares loop
 * size tuples, not element counts: two nodes over the same 75264 elements
 * as (768,) x (98,) and (2, 49, 768) are no kernel there.  It only ever
 * narrows the (kind, numel, rnumel) rule, so a graph with loop nests
 * allows a subset of the groups that it allows without them. */

/* Product of sizes[0..n) when it does not pass `limit`, else limit + 1
 * (the caller compares it with limit, so any larger value says no). */
static uint64_t product_upto(const uint64_t *sizes, int n, uint64_t limit) {
  uint64_t p = 1;
  for (int i = 0; i < n; i++) {
    if (sizes[i] == 0 || p > limit / sizes[i])
      return limit + 1;
    p *= sizes[i];
  }
  return p;
}

/* Checks loop nest l for node n: not on an extern node, no reduction
 * sizes on a pointwise node and at least one on a reduction, at most
 * FP_MAX_LOOP_DIMS sizes, and the loop sizes multiply to numel and the
 * reduction sizes to rnumel (so every size is >= 1).  FP_OK, or FP_EINPUT
 * naming the node ("node 'n3': loop: ..."). */
static fp_status check_loop(const fp_node *n, const fp_loop *l, fp_error *err) {
  const char *why = NULL;
  if (n->kind == FP_KIND_EXTERN)
    why = "an extern node has no loop nest";
  else if (l->n + l->rn > FP_MAX_LOOP_DIMS)
    why = "more than 8 sizes";
  else if (n->kind == FP_KIND_POINTWISE && l->rn != 0)
    why = "a pointwise node has no reduction sizes";
  else if (n->kind == FP_KIND_REDUCTION && l->rn == 0)
    why = "a reduction needs reduction sizes";
  else if (product_upto(l->size, l->n, n->numel) != n->numel)
    why = "the loop sizes do not multiply to numel";
  else if (product_upto(l->size + l->n, l->rn, n->rnumel) != n->rnumel)
    why = "the reduction sizes do not multiply to rnumel";
  if (!why)
    return FP_OK;
  return fp_error_set(err, FP_EINPUT, "node '%s': loop: %s", n->name, why);
}

fp_status fp_graph_set_node_loop(fp_graph *g, int32_t v, const fp_loop *loop,
                                 fp_error *err) {
  if (check_building(g, err) != FP_OK)
    return FP_EARG;
  if (!loop)
    return fp_error_set(err, FP_EARG, "graph: NULL loop");
  if (v < 0 || v >= g->n_nodes)
    return fp_error_set(err, FP_EINPUT, "loop: unknown node");
  if (loop->present && check_loop(&g->nodes[v], loop, err) != FP_OK)
    return FP_EINPUT;
  g->nodes[v].loop = *loop;
  return FP_OK;
}

fp_status fp_graph_set_node_workspace(fp_graph *g, int32_t v, uint64_t bytes,
                                      fp_error *err) {
  if (check_building(g, err) != FP_OK)
    return FP_EARG;
  if (v < 0 || v >= g->n_nodes)
    return fp_error_set(err, FP_EINPUT, "workspace: unknown node");
  fp_node *n = &g->nodes[v];
  if (bytes >= FP_MAX_BYTES)
    return fp_error_set(err, FP_EINPUT,
                        "node '%s': workspace: %llu is not below 2^53", n->name,
                        (unsigned long long)bytes);
  /* The total counts it like a buffer's: every live sum stays bounded. */
  g->total_bytes -= n->workspace;
  fp_status st = check_total(g, bytes, "node", n->name, err);
  n->workspace = st == FP_OK ? bytes : n->workspace;
  g->total_bytes += n->workspace;
  return st;
}

/* Contract in graph.h. */
bool fp_loop_equal(const fp_loop *a, const fp_loop *b) {
  if (!a || !b)
    return a == b;
  if (!a->present || !b->present)
    return a->present == b->present;
  return a->n == b->n && a->rn == b->rn &&
         memcmp(a->size, b->size, (size_t)(a->n + a->rn) * sizeof *a->size) ==
             0;
}

/* Whether pointwise p's loop is reduction r's loop sizes then reduction
 * sizes: p runs over r's input space in r's loop order. */
static bool over_input_space(const fp_node *p, const fp_node *r) {
  return p->kind == FP_KIND_POINTWISE && r->kind == FP_KIND_REDUCTION &&
         p->loop.n == r->loop.n + r->loop.rn &&
         memcmp(p->loop.size, r->loop.size, p->loop.n * sizeof *p->loop.size) ==
             0;
}

/* Whether the loop nests of two non-extern nodes, whose iteration spaces
 * already pass the (kind, numel, rnumel) rule, may share one kernel
 * (docs/cost-model.md#loop-nests): true when either has no loop nest;
 * otherwise equal loops, a pointwise loop equal to a reduction's loop and
 * reduction sizes, two pointwise nodes one of which is one-dimensional,
 * or, with a reduction on one side, loops of which the shorter is a
 * non-empty prefix of the other (outer-loop fusion).  Never fails. */
static bool loops_fuse(const fp_node *a, const fp_node *b) {
  const fp_loop *x = &a->loop, *y = &b->loop;
  if (!x->present || !y->present || fp_loop_equal(x, y))
    return true;
  if (over_input_space(a, b) || over_input_space(b, a))
    return true;
  /* Inductor recomputes a one-dimensional pointwise node to the other's
   * loops (compatible ranges); the sizes rule already made numel equal. */
  if (a->kind == FP_KIND_POINTWISE && b->kind == FP_KIND_POINTWISE)
    return x->n <= 1 || y->n <= 1;
  /* Outer-loop fusion: the shorter loop is a non-empty prefix of the
   * other (a reduction (n,) x (r,) and a pointwise (n, a, b) with a * b =
   * r, or equal loops of different reduction shapes).  Inductor fuses
   * such a pair only when one depends on the other; the exporter lists
   * the independent ones unfusible. */
  int d = x->n < y->n ? x->n : y->n;
  return d >= 1 && memcmp(x->size, y->size, (size_t)d * sizeof *x->size) == 0;
}

/* Checks kind and iteration space. */
static fp_status check_iter(const fp_node_spec *s, fp_error *err) {
  if ((unsigned)s->kind > FP_KIND_EXTERN)
    return fp_error_set(err, FP_EINPUT, "node '%s': kind: unknown", s->name);
  if (s->kind == FP_KIND_EXTERN && s->numel == 0 && s->rnumel == 0)
    return FP_OK;
  if (s->numel == 0 || s->rnumel == 0)
    return fp_error_set(err, FP_EINPUT,
                        "node '%s': iter: must be two positive integers",
                        s->name);
  if (s->numel >= FP_MAX_BYTES || s->rnumel >= FP_MAX_BYTES ||
      s->numel > (UINT64_MAX >> 2) / s->rnumel)
    return fp_error_set(err, FP_EINPUT, "node '%s': iter: too large", s->name);
  if (s->kind == FP_KIND_POINTWISE && s->rnumel != 1)
    return fp_error_set(err, FP_EINPUT,
                        "node '%s': iter: a pointwise node has rnumel 1",
                        s->name);
  return FP_OK;
}

/* Checks reads: known buffers, already available (input or written by an
 * earlier node: the listed order must be a program order), overrides no
 * larger than the buffer. */
static fp_status check_reads(fp_graph *g, const fp_node_spec *s,
                             fp_error *err) {
  for (int32_t i = 0; i < s->n_reads; i++) {
    int32_t b = s->reads[i].buffer;
    if (b < 0 || b >= g->n_buffers)
      return fp_error_set(err, FP_EINPUT,
                          "node '%s': reads[%d]: unknown buffer", s->name,
                          (int)i);
    const fp_buffer *buf = &g->buffers[b];
    if (!buf->input && buf->writer < 0)
      return fp_error_set(err, FP_EINPUT,
                          "node '%s': reads buffer '%s' before any node writes "
                          "it (cycle, missing writer, or nodes not in program "
                          "order)",
                          s->name, buf->name);
    uint64_t rb = s->reads[i].bytes;
    if (rb != FP_READ_WHOLE && rb > buf->bytes)
      return fp_error_set(err, FP_EINPUT,
                          "node '%s': reads[%d]: bytes %llu exceed buffer "
                          "'%s' (%llu)",
                          s->name, (int)i, (unsigned long long)rb, buf->name,
                          (unsigned long long)buf->bytes);
    if (s->reads[i].index > FP_INDEX_TRANS)
      return fp_error_set(err, FP_EINPUT, "node '%s': reads[%d]: bad index",
                          s->name, (int)i);
  }
  return FP_OK;
}

/* Checks writes: known, not inputs, not already written, not twice here. */
static fp_status check_writes(fp_graph *g, const fp_node_spec *s,
                              fp_error *err) {
  if (s->n_writes < 1)
    return fp_error_set(err, FP_EINPUT, "node '%s': writes: empty", s->name);
  for (int32_t i = 0; i < s->n_writes; i++) {
    int32_t b = s->writes[i];
    if (b < 0 || b >= g->n_buffers)
      return fp_error_set(err, FP_EINPUT,
                          "node '%s': writes[%d]: unknown buffer", s->name,
                          (int)i);
    const fp_buffer *buf = &g->buffers[b];
    if (buf->input)
      return fp_error_set(err, FP_EINPUT, "node '%s': writes input buffer '%s'",
                          s->name, buf->name);
    if (buf->writer >= 0)
      return fp_error_set(err, FP_EINPUT,
                          "node '%s': writes buffer '%s', already written by "
                          "node '%s' (two writers)",
                          s->name, buf->name, g->nodes[buf->writer].name);
    for (int32_t j = 0; j < i; j++)
      if (s->writes[j] == b)
        return fp_error_set(err, FP_EINPUT,
                            "node '%s': writes buffer '%s' twice", s->name,
                            buf->name);
  }
  return FP_OK;
}

/* Sum of the spec's read bytes (FP_READ_WHOLE resolved); FP_ELIMIT when
 * the graph total would pass 2^62. */
static fp_status sum_reads(const fp_graph *g, const fp_node_spec *s,
                           uint64_t *sum, fp_error *err) {
  *sum = 0;
  for (int32_t i = 0; i < s->n_reads; i++) {
    uint64_t rb = s->reads[i].bytes;
    *sum += rb == FP_READ_WHOLE ? g->buffers[s->reads[i].buffer].bytes : rb;
    if (check_total(g, *sum, "node", s->name, err) != FP_OK)
      return FP_ELIMIT; /* checked per step: the sum itself cannot wrap */
  }
  return FP_OK;
}

/* Appends the spec's read and write lists, records the node as writer of
 * its buffers.  Cannot fail: capacity was reserved by the caller. */
static void store_lists(fp_graph *g, const fp_node_spec *s, int32_t v) {
  for (int32_t i = 0; i < s->n_reads; i++) {
    fp_read r = s->reads[i];
    if (r.bytes == FP_READ_WHOLE)
      r.bytes = g->buffers[r.buffer].bytes;
    g->reads[g->n_reads++] = r;
  }
  for (int32_t i = 0; i < s->n_writes; i++) {
    g->writes[g->n_writes++] = s->writes[i];
    g->buffers[s->writes[i]].writer = v;
  }
}

/* Reserves room for node v and its lists; FP_ELIMIT / FP_ENOMEM. */
static fp_status reserve_node(fp_graph *g, const fp_node_spec *s,
                              fp_error *err) {
  if (check_items(g->n_nodes, 1, "node", s->name, err) != FP_OK ||
      check_items(g->n_reads, s->n_reads, "node", s->name, err) != FP_OK ||
      check_items(g->n_writes, s->n_writes, "node", s->name, err) != FP_OK)
    return FP_ELIMIT;
  if (GROW(g, nodes, cap_nodes, (int64_t)g->n_nodes + 1) != 0 ||
      GROW(g, reads, cap_reads, (int64_t)g->n_reads + s->n_reads) != 0 ||
      GROW(g, writes, cap_writes, (int64_t)g->n_writes + s->n_writes) != 0)
    return fp_error_set(err, FP_ENOMEM, "node '%s': out of memory", s->name);
  return FP_OK;
}

int32_t fp_graph_add_node(fp_graph *g, const fp_node_spec *s, fp_error *err) {
  if (!s || check_building(g, err) != FP_OK) {
    if (!s)
      fp_error_set(err, FP_EARG, "graph: NULL node spec");
    return -1;
  }
  const char *label = s->name ? s->name : "";
  fp_node_spec spec = *s;
  uint64_t read_sum;
  spec.name = label;
  if (check_building(g, err) != FP_OK)
    return -1;
  if (spec.n_reads < 0 || spec.n_writes < 0 ||
      (spec.n_reads > 0 && !spec.reads) ||
      (spec.n_writes > 0 && !spec.writes)) {
    fp_error_set(err, FP_EARG, "node '%s': negative list length or NULL list",
                 label);
    return -1;
  }
  if (check_iter(&spec, err) != FP_OK || check_reads(g, &spec, err) != FP_OK ||
      check_writes(g, &spec, err) != FP_OK ||
      check_op(g, &spec, err) != FP_OK ||
      sum_reads(g, &spec, &read_sum, err) != FP_OK ||
      reserve_node(g, &spec, err) != FP_OK)
    return -1;
  const char *nm = intern_name(g, s->name, "node", err);
  int32_t v = g->n_nodes;
  /* The map insert is the last step that can fail; it also finds
   * duplicate names (one lookup instead of two). */
  int put = nm ? fp_strmap_put(&g->node_map, nm, v) : -1;
  if (put != 0) {
    if (nm)
      fp_error_set(err, put > 0 ? FP_EINPUT : FP_ENOMEM,
                   put > 0 ? "node '%s': duplicate name"
                           : "node '%s': out of memory",
                   nm);
    return -1;
  }
  fp_node *n = &g->nodes[v];
  memset(n, 0, sizeof *n);
  n->name = nm;
  n->kind = s->kind;
  n->numel = s->numel;
  n->rnumel = s->rnumel;
  n->n_reads = s->n_reads;
  n->n_writes = s->n_writes;
  /* reads/writes stay NULL until finalize: the lists are appended in node
   * order, so each node's slice is found by a prefix sum then. */
  if (s->op)
    n->op = *s->op;
  else
    fp_op_init(&n->op);
  store_lists(g, s, v);
  g->total_bytes += read_sum;
  g->n_nodes++;
  return v;
}

fp_status fp_graph_add_output(fp_graph *g, int32_t b, fp_error *err) {
  if (check_building(g, err) != FP_OK)
    return FP_EARG;
  if (b < 0 || b >= g->n_buffers)
    return fp_error_set(err, FP_EINPUT, "outputs: unknown buffer");
  if (g->buffers[b].output)
    return FP_OK;
  if (GROW(g, outputs, cap_outputs, (int64_t)g->n_outputs + 1) != 0)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  g->buffers[b].output = true;
  g->outputs[g->n_outputs++] = b;
  return FP_OK;
}

fp_status fp_graph_set_input_written_before(fp_graph *g, int32_t b,
                                            fp_error *err) {
  if (check_building(g, err) != FP_OK)
    return FP_EARG;
  if (b < 0 || b >= g->n_buffers || !g->buffers[b].input)
    return fp_error_set(err, FP_EINPUT, "written before: not an input buffer");
  if (GROW(g, prior, cap_prior, (int64_t)g->n_prior + 1) != 0)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  g->prior[g->n_prior++] = b;
  return FP_OK;
}

bool fp_graph_input_written_before(const fp_graph *g, int32_t b) {
  return g && g->finalized && b >= 0 && b < g->n_buffers && g->is_prior[b];
}

fp_status fp_graph_add_unfusible(fp_graph *g, int32_t u, int32_t v,
                                 fp_error *err) {
  if (check_building(g, err) != FP_OK)
    return FP_EARG;
  if (u < 0 || v < 0 || u >= g->n_nodes || v >= g->n_nodes)
    return fp_error_set(err, FP_EINPUT, "unfusible: unknown node");
  if (u == v)
    return fp_error_set(err, FP_EINPUT, "unfusible: pair names node '%s' twice",
                        g->nodes[u].name);
  if (GROW(g, unfusible, cap_unfusible, (int64_t)g->n_unfusible + 1) != 0)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  fp_pair p = {u < v ? u : v, u < v ? v : u};
  g->unfusible[g->n_unfusible++] = p;
  return FP_OK;
}

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Checks the nodes of a linked pair (fp_graph_add_linked's rules). */
static fp_status check_linked(const fp_graph *g, int32_t u, int32_t v,
                              int32_t n_via, const int32_t *via,
                              fp_error *err) {
  if (u < 0 || v < 0 || u >= g->n_nodes || v >= g->n_nodes)
    return fp_error_set(err, FP_EINPUT, "linked: unknown node");
  if (u == v)
    return fp_error_set(err, FP_EINPUT, "linked: pair names node '%s' twice",
                        g->nodes[u].name);
  if (n_via <= 0)
    return fp_error_set(err, FP_EINPUT, "linked: pair '%s', '%s' has no linker",
                        g->nodes[u].name, g->nodes[v].name);
  for (int32_t i = 0; i < n_via; i++) {
    if (via[i] < 0 || via[i] >= g->n_nodes)
      return fp_error_set(err, FP_EINPUT, "linked: unknown node");
    if (via[i] == u || via[i] == v)
      return fp_error_set(err, FP_EINPUT,
                          "linked: pair '%s', '%s' lists '%s' as its own "
                          "linker",
                          g->nodes[u].name, g->nodes[v].name,
                          g->nodes[via[i]].name);
  }
  return FP_OK;
}

fp_status fp_graph_add_linked(fp_graph *g, int32_t u, int32_t v, int32_t n_via,
                              const int32_t *via, fp_error *err) {
  if (check_building(g, err) != FP_OK)
    return FP_EARG;
  if (!via && n_via > 0)
    return fp_error_set(err, FP_EARG, "linked: NULL linkers");
  fp_status st = check_linked(g, u, v, n_via, via, err);
  if (st != FP_OK)
    return st;
  int64_t at = g->n_linked_via;
  if (GROW(g, linked, cap_linked, (int64_t)g->n_linked + 1) != 0 ||
      GROW(g, linked_at, cap_linked_at, (int64_t)g->n_linked + 1) != 0 ||
      GROW(g, linked_via, cap_linked_via, at + n_via) != 0)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  int32_t *dst = g->linked_via + at;
  memcpy(dst, via, (size_t)n_via * sizeof *dst);
  qsort(dst, (size_t)n_via, sizeof *dst, cmp_i32);
  int32_t k = 1; /* repeats merged */
  for (int32_t i = 1; i < n_via; i++)
    if (dst[i] != dst[k - 1])
      dst[k++] = dst[i];
  g->linked[g->n_linked] = (fp_linked){u < v ? u : v, u < v ? v : u, k, NULL};
  g->linked_at[g->n_linked++] = (int32_t)at;
  g->n_linked_via = (int32_t)(at + k);
  return FP_OK;
}

fp_status fp_graph_add_inplace(fp_graph *g, int32_t v, int32_t read,
                               int32_t write, fp_error *err) {
  if (check_building(g, err) != FP_OK)
    return FP_EARG;
  if (v < 0 || v >= g->n_nodes)
    return fp_error_set(err, FP_EINPUT, "inplace: unknown node");
  if (read < 0 || read >= g->n_buffers || write < 0 || write >= g->n_buffers)
    return fp_error_set(err, FP_EINPUT, "node '%s': inplace: unknown buffer",
                        g->nodes[v].name);
  /* The rest is checked by finalize, once each node's lists are sliced. */
  if (GROW(g, inplace, cap_inplace, (int64_t)g->n_inplace + 1) != 0 ||
      GROW(g, inplace_node, cap_inplace_node, (int64_t)g->n_inplace + 1) != 0)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  g->inplace[g->n_inplace] = (fp_inplace){read, write};
  g->inplace_node[g->n_inplace++] = v;
  return FP_OK;
}

/* ---- copying ------------------------------------------------------------ */

/* Adds node v of g to the copy c (its buffers have c's indices, which
 * equal g's). */
static fp_status copy_node(fp_graph *c, const fp_graph *g, int32_t v,
                           fp_error *err) {
  const fp_node *nd = &g->nodes[v];
  fp_node_spec spec = {nd->name,   nd->kind,    nd->numel,
                       nd->rnumel, nd->n_reads, nd->n_writes,
                       nd->reads,  nd->writes,  &nd->op};
  if (fp_graph_add_node(c, &spec, err) < 0)
    return err->code;
  if (fp_graph_set_node_workspace(c, v, nd->workspace, err) != FP_OK)
    return err->code;
  return fp_graph_set_node_loop(c, v, &nd->loop, err);
}

fp_graph *fp_graph_copy_open(const fp_graph *g, fp_error *err) {
  fp_error local; /* copy_node reads err->code */
  err = err ? err : &local;
  if (!g || !g->finalized) {
    fp_error_set(err, FP_EARG, "copy: the graph is NULL or not finalized");
    return NULL;
  }
  fp_graph *c = fp_graph_create(g->name);
  if (!c) {
    fp_error_set(err, FP_ENOMEM, "out of memory");
    return NULL;
  }
  fp_status st = fp_graph_set_source(c, g->source, err);
  if (st == FP_OK)
    st = fp_graph_set_max_fusion_size(c, g->max_fusion_size, err);
  if (st == FP_OK)
    st = fp_graph_set_outside_live_bytes(c, g->outside_bytes, err);
  for (int32_t b = 0; st == FP_OK && b < g->n_buffers; b++) {
    const fp_buffer *buf = &g->buffers[b];
    if (fp_graph_add_buffer(c, buf->name, buf->bytes, buf->input, buf->freeable,
                            err) < 0)
      st = err->code;
  }
  for (int32_t v = 0; st == FP_OK && v < g->n_nodes; v++)
    st = copy_node(c, g, v, err);
  for (int32_t i = 0; st == FP_OK && i < g->n_outputs; i++)
    st = fp_graph_add_output(c, g->outputs[i], err);
  for (int32_t i = 0; st == FP_OK && i < g->n_unfusible; i++)
    st = fp_graph_add_unfusible(c, g->unfusible[i].u, g->unfusible[i].v, err);
  for (int32_t i = 0; st == FP_OK && i < g->n_inplace; i++)
    st = fp_graph_add_inplace(c, g->inplace_node[i], g->inplace[i].read,
                              g->inplace[i].write, err);
  for (int32_t i = 0; st == FP_OK && i < g->n_linked; i++)
    st = fp_graph_add_linked(c, g->linked[i].u, g->linked[i].v,
                             g->linked[i].n_via, g->linked[i].via, err);
  for (int32_t i = 0; st == FP_OK && i < g->n_prior; i++)
    st = fp_graph_set_input_written_before(c, g->prior[i], err);
  if (st == FP_OK)
    return c;
  fp_graph_destroy(c);
  return NULL;
}

/* ---- finalize ----------------------------------------------------------- */

static int cmp_pair(const void *a, const void *b) {
  const fp_pair *x = a, *y = b;
  if (x->u != y->u)
    return x->u < y->u ? -1 : 1;
  return x->v < y->v ? -1 : (x->v > y->v);
}

/* Builds the CSR of distinct readers per buffer (ascending node order). */
static fp_status build_readers(fp_graph *g, fp_error *err) {
  int32_t nb = g->n_buffers;
  int32_t *last = malloc(((size_t)nb + 1) * sizeof *last);
  g->reader_off = calloc((size_t)nb + 1, sizeof *g->reader_off);
  if (!last || !g->reader_off)
    goto fail;
  for (int pass = 0; pass < 2; pass++) {
    for (int32_t b = 0; b < nb; b++)
      last[b] = -1;
    for (int32_t v = 0; v < g->n_nodes; v++) {
      const fp_node *n = &g->nodes[v];
      for (int32_t i = 0; i < n->n_reads; i++) {
        int32_t b = n->reads[i].buffer;
        if (last[b] == v)
          continue; /* a node reading a buffer twice is one reader */
        last[b] = v;
        if (pass == 0)
          g->reader_off[b + 1]++;
        else
          g->readers[g->reader_off[b] + g->buffers[b].n_readers++] = v;
      }
    }
    if (pass == 0) {
      for (int32_t b = 0; b < nb; b++)
        g->reader_off[b + 1] += g->reader_off[b];
      g->readers = malloc(((size_t)g->reader_off[nb] + 1) * sizeof *g->readers);
      if (!g->readers)
        goto fail;
    }
  }
  for (int32_t b = 0; b < nb; b++)
    g->buffers[b].readers = g->readers + g->reader_off[b];
  free(last);
  return FP_OK;
fail:
  free(last);
  return fp_error_set(err, FP_ENOMEM, "out of memory");
}

/* Sorts the in-place pairs by node, keeping each node's order (a counting
 * sort), and builds inplace_off. */
static fp_status build_inplace(fp_graph *g, fp_error *err) {
  int32_t n = g->n_nodes, m = g->n_inplace;
  int32_t *off = calloc((size_t)n + 2, sizeof *off);
  fp_inplace *sorted = malloc(((size_t)m + 1) * sizeof *sorted);
  if (!off || !sorted) {
    free(off);
    free(sorted);
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  }
  for (int32_t k = 0; k < m; k++)
    off[g->inplace_node[k] + 2]++;
  for (int32_t v = 0; v < n; v++)
    off[v + 2] += off[v + 1];
  for (int32_t k = 0; k < m; k++) /* off[v + 1]: next slot of node v */
    sorted[off[g->inplace_node[k] + 1]++] = g->inplace[k];
  free(g->inplace);
  g->inplace = sorted;
  g->inplace_off = off; /* off[v] is now node v's first pair */
  /* inplace_node follows the sorted order, so that pair k is still node
   * inplace_node[k]'s (fp_graph_copy_open reads them side by side). */
  for (int32_t v = 0; v < n; v++)
    for (int32_t k = off[v]; k < off[v + 1]; k++)
      g->inplace_node[k] = v;
  return FP_OK;
}

/* Points every linked pair at its linkers and indexes the pairs by their
 * first node u (a counting sort, keeping the listed order). */
static fp_status build_linked(fp_graph *g, fp_error *err) {
  int32_t n = g->n_nodes, m = g->n_linked;
  g->linked_off = calloc((size_t)n + 2, sizeof *g->linked_off);
  g->linked_by_u = malloc(((size_t)m + 1) * sizeof *g->linked_by_u);
  if (!g->linked_off || !g->linked_by_u)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  int32_t *off = g->linked_off;
  for (int32_t k = 0; k < m; k++) {
    g->linked[k].via = g->linked_via + g->linked_at[k];
    off[g->linked[k].u + 2]++;
  }
  for (int32_t v = 0; v < n; v++)
    off[v + 2] += off[v + 1];
  for (int32_t k = 0; k < m; k++) /* off[u + 1]: next slot of node u */
    g->linked_by_u[off[g->linked[k].u + 1]++] = k;
  return FP_OK; /* off[u] is now node u's first pair */
}

/* Whether node n lists buffer b among its reads (rd) or its writes. */
static bool node_uses(const fp_node *n, int32_t b, bool rd) {
  for (int32_t i = 0; i < (rd ? n->n_reads : n->n_writes); i++)
    if ((rd ? n->reads[i].buffer : n->writes[i]) == b)
      return true;
  return false;
}

/* The rules of fp_graph_add_inplace for pair k of node v (sliced lists). */
static fp_status check_inplace(const fp_graph *g, int32_t v, int32_t k,
                               fp_error *err) {
  const fp_node *n = &g->nodes[v];
  const fp_inplace *p = &g->inplace[k];
  const fp_buffer *i = &g->buffers[p->read], *o = &g->buffers[p->write];
  if (k - g->inplace_off[v] >= FP_MAX_INPLACE_PER_NODE)
    return fp_error_set(err, FP_EINPUT,
                        "node '%s': inplace: more than %d pairs", n->name,
                        FP_MAX_INPLACE_PER_NODE);
  if (!node_uses(n, p->read, true))
    return fp_error_set(err, FP_EINPUT,
                        "node '%s': inplace: '%s' is not a buffer it reads",
                        n->name, i->name);
  if (!node_uses(n, p->write, false))
    return fp_error_set(err, FP_EINPUT,
                        "node '%s': inplace: '%s' is not a buffer it writes",
                        n->name, o->name);
  if (i->bytes != o->bytes)
    return fp_error_set(err, FP_EINPUT,
                        "node '%s': inplace: '%s' (%llu bytes) and '%s' (%llu "
                        "bytes) differ in size",
                        n->name, i->name, (unsigned long long)i->bytes, o->name,
                        (unsigned long long)o->bytes);
  bool same_read = false, same_write = false;
  for (int32_t j = g->inplace_off[v]; j < g->inplace_off[v + 1]; j++) {
    const fp_inplace *q = &g->inplace[j];
    if (j < k && q->read == p->read && q->write == p->write)
      return fp_error_set(err, FP_EINPUT,
                          "node '%s': inplace: pair ['%s', '%s'] listed twice",
                          n->name, i->name, o->name);
    same_read |= j != k && q->read == p->read && q->write != p->write;
    same_write |= j != k && q->write == p->write && q->read != p->read;
  }
  /* Pairs that share a buffer share one (a star): then every choice of
   * takeovers saves the same bytes, which the ILP relies on. */
  if (same_read && same_write)
    return fp_error_set(err, FP_EINPUT,
                        "node '%s': inplace: pair ['%s', '%s'] shares its "
                        "read with one pair and its written buffer with "
                        "another",
                        n->name, i->name, o->name);
  return FP_OK;
}

/* Node r's reads of buffer b are all the read `like` (the same bytes and
 * index mode): one index, as Inductor's single_index_in_fused_node asks of
 * every access to a buffer that a kernel takes over. */
static bool reads_like(const fp_graph *g, int32_t r, int32_t b,
                       const fp_read *like) {
  const fp_node *n = &g->nodes[r];
  for (int32_t i = 0; i < n->n_reads; i++)
    if (n->reads[i].buffer == b &&
        (n->reads[i].bytes != like->bytes || n->reads[i].index != like->index))
      return false;
  return true;
}

/* Node v's first read of buffer b (v reads it: check_inplace). */
static const fp_read *first_read(const fp_graph *g, int32_t v, int32_t b) {
  const fp_node *n = &g->nodes[v];
  int32_t i = 0;
  while (i < n->n_reads - 1 && n->reads[i].buffer != b)
    i++;
  return &n->reads[i];
}

/* Whether reader r of pair k's read buffer (pair of node v) may become a
 * fused reader: an earlier node that may share v's group and reads the
 * buffer as v does. */
static bool fused_candidate(const fp_graph *g, int32_t v, int32_t k,
                            int32_t r) {
  int32_t b = g->inplace[k].read;
  return r < v && fp_graph_compatible(g, r, v) &&
         reads_like(g, r, b, first_read(g, v, b));
}

/* Marks seen[u] = v for node v and each ancestor u >= lo that a path of
 * reads joins to v through nodes that may fuse with v: the ancestors that
 * can run in v's group, since every node on a path between two nodes of a
 * group runs in that group too.  queue holds n_nodes entries. */
static void fusible_ancestors(const fp_graph *g, int32_t v, int32_t lo,
                              int32_t *seen, int32_t *queue) {
  int32_t head = 0, tail = 0;
  seen[v] = v;
  queue[tail++] = v;
  while (head < tail) {
    const fp_node *n = &g->nodes[queue[head++]];
    for (int32_t i = 0; i < n->n_reads; i++) {
      int32_t u = g->buffers[n->reads[i].buffer].writer;
      if (u >= lo && seen[u] != v && fp_graph_compatible(g, u, v)) {
        seen[u] = v;
        queue[tail++] = u;
      }
    }
  }
}

/* Whether a pair on buffer b is a mutation's: b is a graph input not
 * written before the graph (Inductor takes over no other input's storage:
 * wrapper.can_reuse). */
static bool mutated_input(const fp_graph *g, int32_t b) {
  return g->buffers[b].input && !g->is_prior[b];
}

/* Node v's pairs' fused readers into g->fused (from *at on), each pair's
 * end into fused_off; seen and queue as fusible_ancestors.  A mutation
 * runs after every reader of the old value (its weak dependencies), so
 * for a pair on a mutated input each earlier candidate counts; other
 * pairs need a path of reads. */
static void node_fused_readers(fp_graph *g, int32_t v, int32_t *at,
                               int32_t *seen, int32_t *queue) {
  int32_t lo = v;
  for (int32_t k = g->inplace_off[v]; k < g->inplace_off[v + 1]; k++) {
    const fp_buffer *i = &g->buffers[g->inplace[k].read];
    bool mut = mutated_input(g, g->inplace[k].read);
    for (int32_t r = 0; !mut && r < i->n_readers && i->readers[r] < lo; r++)
      if (fused_candidate(g, v, k, i->readers[r]))
        lo = i->readers[r];
  }
  if (lo < v) /* only then can a reader of a pair's buffer be an ancestor */
    fusible_ancestors(g, v, lo, seen, queue);
  for (int32_t k = g->inplace_off[v]; k < g->inplace_off[v + 1]; k++) {
    const fp_buffer *i = &g->buffers[g->inplace[k].read];
    bool mut = mutated_input(g, g->inplace[k].read);
    for (int32_t r = 0; r < i->n_readers; r++) {
      int32_t u = i->readers[r];
      if (u != v && (mut || seen[u] == v) && fused_candidate(g, v, k, u))
        g->fused[(*at)++] = u;
    }
    g->fused_off[k + 1] = *at;
  }
}

/* Builds every pair's fused readers (graph.h,
 * fp_graph_inplace_fused_readers): per node, one walk back through the
 * nodes that may fuse with it, no further than its earliest candidate. */
static fp_status build_fused_readers(fp_graph *g, fp_error *err) {
  int64_t total = 0;
  for (int32_t k = 0; k < g->n_inplace; k++)
    total += g->buffers[g->inplace[k].read].n_readers;
  free(g->fused_off); /* a finalize that failed before may have left them */
  free(g->fused);
  free(g->is_prior);
  g->is_prior = calloc((size_t)g->n_buffers + 1, sizeof *g->is_prior);
  for (int32_t i = 0; g->is_prior && i < g->n_prior; i++)
    g->is_prior[g->prior[i]] = true;
  g->fused_off = calloc((size_t)g->n_inplace + 1, sizeof *g->fused_off);
  g->fused = malloc(((size_t)total + 1) * sizeof *g->fused);
  int32_t *seen = malloc(((size_t)g->n_nodes + 1) * sizeof *seen);
  int32_t *queue = malloc(((size_t)g->n_nodes + 1) * sizeof *queue);
  fp_status st = FP_OK;
  if (!g->is_prior || !g->fused_off || !g->fused || !seen || !queue) {
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
    goto done;
  }
  for (int32_t v = 0; v < g->n_nodes; v++)
    seen[v] = -1;
  int32_t at = 0;
  for (int32_t v = 0; v < g->n_nodes; v++)
    if (g->inplace_off[v] < g->inplace_off[v + 1])
      node_fused_readers(g, v, &at, seen, queue);
done:
  free(seen);
  free(queue);
  return st;
}

fp_status fp_graph_finalize(fp_graph *g, fp_error *err) {
  if (check_building(g, err) != FP_OK)
    return FP_EARG;
  for (int32_t i = 0; i < g->n_outputs; i++) {
    const fp_buffer *b = &g->buffers[g->outputs[i]];
    if (!b->input && b->writer < 0)
      return fp_error_set(err, FP_EINPUT,
                          "outputs: buffer '%s' is neither an input nor "
                          "written by any node",
                          b->name);
  }
  /* The lists were appended in node order: slice them by prefix sums. */
  int64_t r = 0, w = 0;
  for (int32_t v = 0; v < g->n_nodes; v++) {
    /* (no arithmetic on a NULL list: a graph may have no reads at all) */
    g->nodes[v].reads = g->reads ? g->reads + r : NULL;
    g->nodes[v].writes = g->writes ? g->writes + w : NULL;
    r += g->nodes[v].n_reads;
    w += g->nodes[v].n_writes;
  }
  fp_status st = build_readers(g, err);
  if (st == FP_OK)
    st = build_inplace(g, err);
  if (st == FP_OK)
    st = build_linked(g, err);
  for (int32_t v = 0; st == FP_OK && v < g->n_nodes; v++)
    for (int32_t k = g->inplace_off[v];
         st == FP_OK && k < g->inplace_off[v + 1]; k++)
      st = check_inplace(g, v, k, err);
  if (st != FP_OK)
    return st;
  if (g->n_unfusible > 1) {
    qsort(g->unfusible, (size_t)g->n_unfusible, sizeof *g->unfusible, cmp_pair);
    int32_t k = 1;
    for (int32_t i = 1; i < g->n_unfusible; i++)
      if (cmp_pair(&g->unfusible[i], &g->unfusible[k - 1]) != 0)
        g->unfusible[k++] = g->unfusible[i];
    g->n_unfusible = k;
  }
  /* After the unfusible pairs are sorted: the walks ask
   * fp_graph_compatible. */
  if ((st = build_fused_readers(g, err)) != FP_OK)
    return st;
  g->resident_bytes = g->outside_bytes;
  for (int32_t b = 0; b < g->n_buffers; b++) {
    const fp_buffer *buf = &g->buffers[b];
    if (buf->input && (!buf->freeable || buf->output))
      g->resident_bytes += buf->bytes;
  }
  g->finalized = true;
  return FP_OK;
}

/* ---- reading ------------------------------------------------------------ */

/* The accessors answer NULL, 0, -1 or false for a NULL graph or an index
 * out of range (graph.h), so a bad argument is never a crash. */
const char *fp_graph_name(const fp_graph *g) {
  return g ? g->name : NULL;
}
const char *fp_graph_source(const fp_graph *g) {
  return g ? g->source : NULL;
}
int32_t fp_graph_node_count(const fp_graph *g) {
  return g ? g->n_nodes : 0;
}
int32_t fp_graph_buffer_count(const fp_graph *g) {
  return g ? g->n_buffers : 0;
}
int32_t fp_graph_output_count(const fp_graph *g) {
  return g ? g->n_outputs : 0;
}
int32_t fp_graph_max_fusion_size(const fp_graph *g) {
  return g ? g->max_fusion_size : 0;
}
int32_t fp_graph_fusion_cap(const fp_graph *g, int32_t k) {
  int32_t own = fp_graph_max_fusion_size(g);
  return k > 0 && k < own ? k : own;
}
bool fp_graph_is_finalized(const fp_graph *g) {
  return g && g->finalized;
}
uint64_t fp_graph_resident_bytes(const fp_graph *g) {
  return g ? g->resident_bytes : 0;
}
uint64_t fp_graph_outside_live_bytes(const fp_graph *g) {
  return g ? g->outside_bytes : 0;
}

uint64_t fp_graph_workspace_total(const fp_graph *g) {
  uint64_t s = 0;
  for (int32_t v = 0; g && g->finalized && v < g->n_nodes; v++)
    s += g->nodes[v].workspace;
  return s;
}

uint64_t fp_graph_workspace_max(const fp_graph *g, int32_t *node) {
  uint64_t best = 0;
  int32_t at = -1;
  for (int32_t v = 0; g && g->finalized && v < g->n_nodes; v++)
    if (g->nodes[v].workspace > best) {
      best = g->nodes[v].workspace;
      at = v;
    }
  if (node)
    *node = at;
  return best;
}

uint64_t fp_graph_group_workspace(const fp_graph *g, const int32_t *members,
                                  int32_t n) {
  uint64_t s = 0;
  for (int32_t i = 0; members && i < n; i++) {
    const fp_node *nd = fp_graph_node(g, members[i]);
    s += nd ? nd->workspace : 0;
  }
  return s;
}

uint64_t fp_graph_mask_workspace(const fp_graph *g, uint64_t group) {
  uint64_t s = 0;
  if (fp_graph_node_count(g) > 64)
    return 0;
  for (uint64_t m = group; m; m &= m - 1) {
    const fp_node *nd = fp_graph_node(g, __builtin_ctzll(m));
    s += nd ? nd->workspace : 0;
  }
  return s;
}

const fp_inplace *fp_graph_inplace(const fp_graph *g, int32_t v, int32_t *n) {
  bool ok = g && g->finalized && v >= 0 && v < g->n_nodes;
  int32_t k = ok ? g->inplace_off[v + 1] - g->inplace_off[v] : 0;
  if (n)
    *n = k;
  return k ? g->inplace + g->inplace_off[v] : NULL;
}

const int32_t *fp_graph_inplace_fused_readers(const fp_graph *g, int32_t v,
                                              int32_t k, int32_t *n) {
  int32_t m;
  fp_graph_inplace(g, v, &m);
  int32_t j = k >= 0 && k < m ? g->inplace_off[v] + k : -1;
  int32_t c = j >= 0 ? g->fused_off[j + 1] - g->fused_off[j] : 0;
  if (n)
    *n = c;
  return c ? g->fused + g->fused_off[j] : NULL;
}

bool fp_graph_inplace_fused_reader(const fp_graph *g, int32_t v, int32_t k,
                                   int32_t r) {
  int32_t c;
  const int32_t *f = fp_graph_inplace_fused_readers(g, v, k, &c);
  for (int32_t i = 0; i < c; i++)
    if (f[i] == r)
      return true;
  return false;
}

int32_t fp_graph_inplace_count(const fp_graph *g) {
  return g ? g->n_inplace : 0;
}

int32_t fp_graph_output(const fp_graph *g, int32_t i) {
  return g && i >= 0 && i < g->n_outputs ? g->outputs[i] : -1;
}

const fp_node *fp_graph_node(const fp_graph *g, int32_t v) {
  return g && g->finalized && v >= 0 && v < g->n_nodes ? &g->nodes[v] : NULL;
}

const fp_buffer *fp_graph_buffer(const fp_graph *g, int32_t b) {
  return g && g->finalized && b >= 0 && b < g->n_buffers ? &g->buffers[b]
                                                         : NULL;
}

int32_t fp_graph_unfusible_count(const fp_graph *g) {
  return g ? g->n_unfusible : 0;
}

void fp_graph_unfusible_pair(const fp_graph *g, int32_t i, int32_t *u,
                             int32_t *v) {
  int ok = g && i >= 0 && i < g->n_unfusible;
  if (u)
    *u = ok ? g->unfusible[i].u : -1;
  if (v)
    *v = ok ? g->unfusible[i].v : -1;
}

bool fp_graph_is_unfusible(const fp_graph *g, int32_t u, int32_t v) {
  if (!g || g->n_unfusible == 0)
    return false;
  fp_pair key = {u < v ? u : v, u < v ? v : u};
  return bsearch(&key, g->unfusible, (size_t)g->n_unfusible,
                 sizeof *g->unfusible, cmp_pair) != NULL;
}

int32_t fp_graph_linked_count(const fp_graph *g) {
  return g ? g->n_linked : 0;
}

const fp_linked *fp_graph_linked(const fp_graph *g, int32_t i) {
  return g && g->finalized && i >= 0 && i < g->n_linked ? &g->linked[i] : NULL;
}

/* Whether node x is among members[0..n). */
static bool has_member(const int32_t *members, int32_t n, int32_t x) {
  for (int32_t i = 0; i < n; i++)
    if (members[i] == x)
      return true;
  return false;
}

int32_t fp_graph_linked_broken(const fp_graph *g, const int32_t *members,
                               int32_t n) {
  if (!g || !g->finalized || !members || g->n_linked == 0)
    return -1;
  for (int32_t i = 0; i < n; i++) {
    int32_t u = members[i];
    if (u < 0 || u >= g->n_nodes)
      continue;
    for (int32_t k = g->linked_off[u]; k < g->linked_off[u + 1]; k++) {
      const fp_linked *l = &g->linked[g->linked_by_u[k]];
      if (!has_member(members, n, l->v))
        continue;
      bool linked = false;
      for (int32_t j = 0; j < l->n_via && !linked; j++)
        linked = has_member(members, n, l->via[j]);
      if (!linked)
        return g->linked_by_u[k];
    }
  }
  return -1;
}

bool fp_iter_compatible(const fp_node *a, const fp_node *b) {
  if (!a || !b)
    return false;
  if (a->kind == FP_KIND_EXTERN || b->kind == FP_KIND_EXTERN)
    return false;
  bool ok = a->numel == b->numel && a->rnumel == b->rnumel;
  /* A pointwise node fuses with a reduction over the reduction's input
   * space (numel * rnumel) or its output space (numel). */
  if (!ok && a->kind == FP_KIND_POINTWISE)
    ok = a->numel == b->numel * b->rnumel || a->numel == b->numel;
  if (!ok && b->kind == FP_KIND_POINTWISE)
    ok = b->numel == a->numel * a->rnumel || b->numel == a->numel;
  /* Loop nests only narrow the rule (docs/cost-model.md#loop-nests). */
  return ok && loops_fuse(a, b);
}

bool fp_graph_compatible(const fp_graph *g, int32_t u, int32_t v) {
  if (!g || u < 0 || v < 0 || u >= g->n_nodes || v >= g->n_nodes)
    return false;
  return u != v && fp_iter_compatible(&g->nodes[u], &g->nodes[v]) &&
         !fp_graph_is_unfusible(g, u, v);
}
