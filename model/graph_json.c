/*
 * graph_json.c -- the graph file format (docs/formats.md): strict loader
 * and exact writer.
 *
 * The loader streams the document (top-level members, then one buffer or
 * node at a time, each parsed by cJSON) and feeds the graph builder, which
 * owns all semantic validation (graph.c); this file checks types and
 * presence, resolves names, and puts the file name and JSON path in front
 * of every message.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/args.h"
#include "model/graph_internal.h"
#include "model/io.h"
#include "model/json.h"
#include "model/json_util.h"

/* State of one load. */
typedef struct loader {
  const char *src; /* file name for messages */
  fp_graph *g;
  fp_error *err;
  fp_read *reads; /* scratch for one node's reads */
  int32_t *writes;
  int32_t cap_reads, cap_writes;
  uint64_t version; /* the file's format version */
} loader;

#define FAIL(L, ...) fp_error_set((L)->err, FP_EINPUT, __VA_ARGS__)

/* Adds the file name in front of a message the builder produced. */
static fp_status builder_error(loader *L) {
  fp_error_prefix(L->err, L->src);
  return L->err ? L->err->code : FP_EINPUT;
}

static const cJSON *field(const cJSON *obj, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* Reads an optional boolean field; FP_EINPUT when present and not bool. */
static fp_status opt_bool(loader *L, const cJSON *obj, const char *key,
                          const char *what, const char *name, bool *out) {
  const cJSON *it = field(obj, key);
  *out = false;
  if (!it)
    return FP_OK;
  if (!cJSON_IsBool(it))
    return FAIL(L, "%s: %s '%s': %s: expected true or false", L->src, what,
                name, key);
  *out = cJSON_IsTrue(it);
  return FP_OK;
}

/* Reads the "name" of the i-th item of `what` ("buffers", "nodes"). */
static const char *item_name(loader *L, const cJSON *obj, const char *what,
                             int i) {
  if (!cJSON_IsObject(obj)) {
    FAIL(L, "%s: %s[%d]: expected an object", L->src, what, i);
    return NULL;
  }
  const cJSON *nm = field(obj, "name");
  if (!cJSON_IsString(nm) || !nm->valuestring[0]) {
    FAIL(L, "%s: %s[%d]: name: missing or not a non-empty string", L->src, what,
         i);
    return NULL;
  }
  return nm->valuestring;
}

static fp_status load_buffer(loader *L, const cJSON *obj, int i) {
  const char *name = item_name(L, obj, "buffers", i);
  if (!name)
    return FP_EINPUT;
  const cJSON *by = field(obj, "bytes");
  uint64_t bytes;
  if (!by)
    return FAIL(L, "%s: buffer '%s': bytes: missing", L->src, name);
  if (!fp_json_u64(by, &bytes))
    return FAIL(L, "%s: buffer '%s': bytes: must be an integer in [0, 2^53)",
                L->src, name);
  bool input, freeable;
  if (opt_bool(L, obj, "input", "buffer", name, &input) != FP_OK ||
      opt_bool(L, obj, "freeable", "buffer", name, &freeable) != FP_OK)
    return FP_EINPUT;
  if (fp_graph_add_buffer(L->g, name, bytes, input, freeable, L->err) < 0)
    return builder_error(L);
  return FP_OK;
}

/* Looks up a buffer name used by node `node` in `key`[i]. */
static int32_t resolve_buffer(loader *L, const cJSON *it, const char *node,
                              const char *key, int i) {
  if (!cJSON_IsString(it)) {
    FAIL(L, "%s: node '%s': %s[%d]: expected a buffer name", L->src, node, key,
         i);
    return -1;
  }
  int32_t b = fp_graph_find_buffer(L->g, it->valuestring);
  if (b < 0)
    FAIL(L, "%s: node '%s': %s[%d]: unknown buffer '%.200s'", L->src, node, key,
         i, it->valuestring);
  return b;
}

/* Parses one entry of "reads": a name, or {"buffer": name, "bytes": n}. */
static fp_status load_read(loader *L, const cJSON *it, const char *node, int i,
                           fp_read *r) {
  r->index = FP_INDEX_AUTO;
  r->bytes = FP_READ_WHOLE;
  if (cJSON_IsString(it)) {
    r->buffer = resolve_buffer(L, it, node, "reads", i);
    return r->buffer < 0 ? FP_EINPUT : FP_OK;
  }
  if (!cJSON_IsObject(it))
    return FAIL(L, "%s: node '%s': reads[%d]: expected a name or an object",
                L->src, node, i);
  r->buffer = resolve_buffer(L, field(it, "buffer"), node, "reads", i);
  if (r->buffer < 0)
    return FP_EINPUT;
  const cJSON *by = field(it, "bytes");
  if (by && !fp_json_u64(by, &r->bytes))
    return FAIL(L,
                "%s: node '%s': reads[%d]: bytes: must be an integer in "
                "[0, 2^53)",
                L->src, node, i);
  return FP_OK;
}

static int grow_scratch(void **arr, int32_t *cap, int n, size_t elem) {
  return fp_grow_array(arr, cap, n, elem);
}

/* Parses "reads" and "writes" of a node into the loader's scratch. */
static fp_status load_lists(loader *L, const cJSON *obj, const char *node,
                            fp_node_spec *s) {
  const cJSON *rd = field(obj, "reads"), *wr = field(obj, "writes");
  if (rd && !cJSON_IsArray(rd))
    return FAIL(L, "%s: node '%s': reads: expected an array", L->src, node);
  if (!cJSON_IsArray(wr))
    return FAIL(L, "%s: node '%s': writes: missing or not an array", L->src,
                node);
  int nr = rd ? cJSON_GetArraySize(rd) : 0, nw = cJSON_GetArraySize(wr);
  if (grow_scratch((void **)&L->reads, &L->cap_reads, nr, sizeof *L->reads) ||
      grow_scratch((void **)&L->writes, &L->cap_writes, nw, sizeof *L->writes))
    return fp_error_set(L->err, FP_ENOMEM, "%s: out of memory", L->src);
  int i = 0;
  for (const cJSON *it = rd ? rd->child : NULL; it; it = it->next, i++)
    if (load_read(L, it, node, i, &L->reads[i]) != FP_OK)
      return FP_EINPUT;
  i = 0;
  for (const cJSON *it = wr->child; it; it = it->next, i++)
    if ((L->writes[i] = resolve_buffer(L, it, node, "writes", i)) < 0)
      return FP_EINPUT;
  s->reads = L->reads;
  s->n_reads = nr;
  s->writes = L->writes;
  s->n_writes = nw;
  return FP_OK;
}

/* Parses "iter": [numel, rnumel], required unless the node is extern. */
static fp_status load_iter(loader *L, const cJSON *obj, const char *node,
                           fp_node_spec *s) {
  const cJSON *it = field(obj, "iter");
  s->numel = s->rnumel = 0;
  if (!it && s->kind == FP_KIND_EXTERN)
    return FP_OK;
  if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2 ||
      !fp_json_u64(it->child, &s->numel) ||
      !fp_json_u64(it->child->next, &s->rnumel) || s->numel == 0 ||
      s->rnumel == 0)
    return FAIL(L,
                "%s: node '%s': iter: %s (expected [numel, rnumel], two "
                "positive integers below 2^53)",
                L->src, node, it ? "invalid" : "missing");
  return FP_OK;
}

/* Parses one list of "loop" into l->size from position at, counting its
 * sizes into *count; false when it is no array of positive integers below
 * 2^53 or the sizes would pass FP_MAX_LOOP_DIMS. */
static bool loop_sizes(const cJSON *arr, fp_loop *l, int at, uint8_t *count) {
  int i = at;
  if (!cJSON_IsArray(arr))
    return false;
  for (const cJSON *it = arr->child; it; it = it->next, i++)
    if (i >= FP_MAX_LOOP_DIMS || !fp_json_u64(it, &l->size[i]) ||
        l->size[i] == 0)
      return false;
  *count = (uint8_t)(i - at);
  return true;
}

/* Parses the optional "loop": [[sizes...], [reduction sizes...]]
 * (version 3 on); the builder checks it against kind and iter. */
static fp_status load_loop(loader *L, const cJSON *obj, const char *node,
                           fp_loop *l) {
  const cJSON *it = field(obj, "loop");
  memset(l, 0, sizeof *l);
  if (!it)
    return FP_OK;
  if (L->version < 3)
    return FAIL(L, "%s: node '%s': loop: needs version 3 (this is %llu)",
                L->src, node, (unsigned long long)L->version);
  l->present = true;
  if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2 ||
      !loop_sizes(it->child, l, 0, &l->n) ||
      !loop_sizes(it->child->next, l, l->n, &l->rn))
    return FAIL(L,
                "%s: node '%s': loop: expected [[sizes], [reduction sizes]], "
                "at most %d positive integers",
                L->src, node, FP_MAX_LOOP_DIMS);
  return FP_OK;
}

/* Reads an optional non-negative 32-bit op attribute. */
static fp_status op_u32(loader *L, const cJSON *op, const char *key,
                        const char *node, uint32_t *out) {
  const cJSON *it = field(op, key);
  uint64_t v = 0;
  if (it && (!fp_json_u64(it, &v) || v > UINT32_MAX))
    return FAIL(L, "%s: node '%s': op.%s: expected an integer in [0, 2^32)",
                L->src, node, key);
  *out = (uint32_t)v;
  return FP_OK;
}

/* Parses op.index (one mode per read) into the scratch reads. */
static fp_status load_op_index(loader *L, const cJSON *op, const char *node,
                               const fp_node_spec *s) {
  const cJSON *ix = field(op, "index");
  if (!ix)
    return FP_OK;
  if (!cJSON_IsArray(ix) || cJSON_GetArraySize(ix) != s->n_reads)
    return FAIL(L, "%s: node '%s': op.index: expected one entry per read",
                L->src, node);
  int i = 0;
  for (const cJSON *it = ix->child; it; it = it->next, i++) {
    int m = cJSON_IsString(it) ? fp_index_parse(it->valuestring) : -1;
    if (m < 0)
      return FAIL(L,
                  "%s: node '%s': op.index[%d]: expected auto, elem, row, "
                  "col or trans",
                  L->src, node, i);
    L->reads[i].index = (uint8_t)m;
  }
  return FP_OK;
}

static fp_status load_op(loader *L, const cJSON *obj, const char *node,
                         fp_node_spec *s, fp_op *op) {
  const cJSON *o = field(obj, "op");
  fp_op_init(op);
  if (!o)
    return FP_OK;
  if (!cJSON_IsObject(o))
    return FAIL(L, "%s: node '%s': op: expected an object", L->src, node);
  const cJSON *fn = field(o, "fn");
  int f = cJSON_IsString(fn) ? fp_op_parse(fn->valuestring) : -1;
  if (f < 0 && cJSON_IsString(fn))
    return FAIL(L, "%s: node '%s': op.fn: unknown function '%.64s'", L->src,
                node, fn->valuestring);
  if (f < 0)
    return FAIL(L, "%s: node '%s': op.fn: missing or not a string", L->src,
                node);
  op->fn = (fp_op_fn)f;
  const cJSON *al = field(o, "alpha");
  if (al && (!cJSON_IsNumber(al) || !isfinite(al->valuedouble)))
    return FAIL(L, "%s: node '%s': op.alpha: expected a finite number", L->src,
                node);
  if (al)
    op->alpha = al->valuedouble;
  if (op_u32(L, o, "m", node, &op->m) || op_u32(L, o, "n", node, &op->n) ||
      op_u32(L, o, "k", node, &op->k) ||
      opt_bool(L, o, "trans_a", "node", node, &op->trans_a) ||
      opt_bool(L, o, "trans_b", "node", node, &op->trans_b) ||
      load_op_index(L, o, node, s))
    return FP_EINPUT;
  s->op = op;
  return FP_OK;
}

/* Parses node v's optional "inplace": [[read, written], ...] (version 3
 * on); the builder checks the pairs against the node at finalize. */
static fp_status load_inplace(loader *L, const cJSON *obj, const char *node,
                              int32_t v) {
  const cJSON *arr = field(obj, "inplace");
  if (!arr)
    return FP_OK;
  if (L->version < 3)
    return FAIL(L, "%s: node '%s': inplace: needs version 3 (this is %llu)",
                L->src, node, (unsigned long long)L->version);
  if (!cJSON_IsArray(arr))
    return FAIL(L, "%s: node '%s': inplace: expected an array of pairs", L->src,
                node);
  int i = 0;
  for (const cJSON *it = arr->child; it; it = it->next, i++) {
    if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2)
      return FAIL(L,
                  "%s: node '%s': inplace[%d]: expected [read_buffer, "
                  "written_buffer]",
                  L->src, node, i);
    int32_t rd = resolve_buffer(L, it->child, node, "inplace", i);
    int32_t wr =
        rd < 0 ? -1 : resolve_buffer(L, it->child->next, node, "inplace", i);
    if (wr < 0)
      return FP_EINPUT;
    if (fp_graph_add_inplace(L->g, v, rd, wr, L->err) != FP_OK)
      return builder_error(L);
  }
  return FP_OK;
}

/* Parses node v's optional "workspace" (version 4 on): an integer of
 * bytes in [0, 2^53); absent means 0. */
static fp_status load_workspace(loader *L, const cJSON *obj, const char *node,
                                int32_t v) {
  const cJSON *it = field(obj, "workspace");
  uint64_t bytes;
  if (!it)
    return FP_OK;
  if (L->version < 4)
    return FAIL(L, "%s: node '%s': workspace: needs version 4 (this is %llu)",
                L->src, node, (unsigned long long)L->version);
  if (!fp_json_u64(it, &bytes) || bytes >= FP_MAX_BYTES)
    return FAIL(L,
                "%s: node '%s': workspace: expected an integer of bytes in "
                "[0, 2^53)",
                L->src, node);
  if (fp_graph_set_node_workspace(L->g, v, bytes, L->err) != FP_OK)
    return builder_error(L);
  return FP_OK;
}

static fp_status load_node(loader *L, const cJSON *obj, int i) {
  const char *name = item_name(L, obj, "nodes", i);
  if (!name)
    return FP_EINPUT;
  fp_node_spec s;
  fp_op op;
  fp_loop loop;
  memset(&s, 0, sizeof s);
  s.name = name;
  const cJSON *kind = field(obj, "kind");
  int k = cJSON_IsString(kind) ? fp_kind_parse(kind->valuestring) : -1;
  if (k < 0)
    return FAIL(L,
                "%s: node '%s': kind: %s (expected pointwise, reduction or "
                "extern)",
                L->src, name, kind ? "unknown" : "missing");
  s.kind = (fp_kind)k;
  if (load_iter(L, obj, name, &s) != FP_OK ||
      load_loop(L, obj, name, &loop) != FP_OK ||
      load_lists(L, obj, name, &s) != FP_OK ||
      load_op(L, obj, name, &s, &op) != FP_OK)
    return L->err ? L->err->code : FP_EINPUT;
  int32_t v = fp_graph_add_node(L->g, &s, L->err);
  if (v < 0 ||
      (loop.present && fp_graph_set_node_loop(L->g, v, &loop, L->err) != FP_OK))
    return builder_error(L);
  if (load_workspace(L, obj, name, v) != FP_OK)
    return L->err ? L->err->code : FP_EINPUT;
  return load_inplace(L, obj, name, v);
}

/* The document's top level: the small members parsed by cJSON one by
 * one, the big arrays ("buffers", "nodes") kept as text spans and parsed
 * element by element (see json_util.h: memory stays ~1x the file). */
enum {
  M_FORMAT,
  M_VERSION,
  M_NAME,
  M_K,
  M_META,
  M_OUTPUTS,
  M_UNFUSIBLE,
  M_OUTSIDE,
  M_LINKED,
  M_BUFFERS,
  M_NODES,
  M_COUNT,
  M_SMALL = M_BUFFERS
};

static const char *const member_keys[M_COUNT] = {
    "format", "version", "name",      "max_fusion_size",
    "meta",   "outputs", "unfusible", "outside_live_bytes",
    "linked", "buffers", "nodes"};

typedef struct top {
  const char *data;
  fp_json_span span[M_COUNT];
  const cJSON *item[M_SMALL];
  fp_json_doc doc[M_SMALL];
} top;

static void top_free(top *T) {
  for (int i = 0; i < M_SMALL; i++)
    fp_json_release(&T->doc[i]);
}

static fp_status load_top(loader *L, const char *data, size_t len, top *T) {
  fp_status st =
      fp_json_members(data, len, L->src, member_keys, M_COUNT, T->span, L->err);
  T->data = data;
  for (int i = 0; i < M_SMALL && st == FP_OK; i++) {
    if (T->span[i].len == 0)
      continue;
    st = fp_json_parse_at(data, T->span[i].off, T->span[i].len, L->src,
                          member_keys[i], &T->doc[i], L->err);
    T->item[i] = T->doc[i].root;
  }
  return st;
}

/* Runs `fn` over every element of the required array member `m`, parsing
 * one element at a time into a reused arena. */
static fp_status load_array(loader *L, const top *T, int m,
                            fp_status (*fn)(loader *, const cJSON *, int)) {
  fp_json_iter it;
  fp_json_span el;
  fp_json_doc doc = {0};
  fp_status st = FP_OK;
  if (T->span[m].len == 0 || !fp_json_iter_begin(T->data, T->span[m], &it)) {
    /* Absent, or not an array (cJSON first, in case it is not even JSON). */
    if (T->span[m].len &&
        (st = fp_json_parse_at(T->data, T->span[m].off, T->span[m].len, L->src,
                               member_keys[m], &doc, L->err)) != FP_OK)
      goto done;
    st = FAIL(L, "%s: %s: missing or not an array", L->src, member_keys[m]);
    goto done;
  }
  int r;
  char label[48]; /* "nodes[12]": names the item in a string error */
  while (st == FP_OK &&
         (r = fp_json_iter_next(&it, L->src, &el, L->err)) == 1) {
    snprintf(label, sizeof label, "%s[%d]", member_keys[m], it.count - 1);
    if ((st = fp_json_parse_at(T->data, el.off, el.len, L->src, label, &doc,
                               L->err)) == FP_OK)
      st = fn(L, doc.root, it.count - 1);
  }
  if (st == FP_OK && r < 0)
    st = FP_EINPUT;
done:
  fp_json_release(&doc);
  return st;
}

static fp_status load_outputs(loader *L, const cJSON *arr) {
  if (!arr)
    return FP_OK;
  if (!cJSON_IsArray(arr))
    return FAIL(L, "%s: outputs: expected an array of buffer names", L->src);
  int i = 0;
  for (const cJSON *it = arr->child; it; it = it->next, i++) {
    if (!cJSON_IsString(it))
      return FAIL(L, "%s: outputs[%d]: expected a buffer name", L->src, i);
    int32_t b = fp_graph_find_buffer(L->g, it->valuestring);
    if (b < 0)
      return FAIL(L, "%s: outputs[%d]: unknown buffer '%.200s'", L->src, i,
                  it->valuestring);
    if (fp_graph_add_output(L->g, b, L->err) != FP_OK)
      return builder_error(L);
  }
  return FP_OK;
}

static fp_status load_unfusible(loader *L, const cJSON *arr) {
  if (!arr)
    return FP_OK;
  if (!cJSON_IsArray(arr))
    return FAIL(L, "%s: unfusible: expected an array of node pairs", L->src);
  int i = 0;
  for (const cJSON *it = arr->child; it; it = it->next, i++) {
    if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != 2 ||
        !cJSON_IsString(it->child) || !cJSON_IsString(it->child->next))
      return FAIL(L, "%s: unfusible[%d]: expected a pair of node names", L->src,
                  i);
    int32_t u = fp_graph_find_node(L->g, it->child->valuestring);
    int32_t v = fp_graph_find_node(L->g, it->child->next->valuestring);
    if (u < 0 || v < 0)
      return FAIL(L, "%s: unfusible[%d]: unknown node '%.200s'", L->src, i,
                  u < 0 ? it->child->valuestring
                        : it->child->next->valuestring);
    if (fp_graph_add_unfusible(L->g, u, v, L->err) != FP_OK)
      return FAIL(L, "%s: unfusible[%d]: pair names node '%.200s' twice",
                  L->src, i, it->child->valuestring);
  }
  return FP_OK;
}

/* The node named by JSON string it, or -1 (with a message naming entry
 * i of linked) when it is no string or no node. */
static int32_t linked_node(loader *L, int i, const cJSON *it) {
  int32_t x =
      cJSON_IsString(it) ? fp_graph_find_node(L->g, it->valuestring) : -1;
  if (x < 0 && cJSON_IsString(it))
    FAIL(L, "%s: linked[%d]: unknown node '%.200s'", L->src, i,
         it->valuestring);
  else if (x < 0)
    FAIL(L, "%s: linked[%d]: expected [node, node, [linker, ...]]", L->src, i);
  return x;
}

/* One entry [u, v, [linkers...]] of linked (version 3 on). */
static fp_status load_linked_one(loader *L, int i, const cJSON *it,
                                 int32_t *via) {
  const cJSON *a = cJSON_IsArray(it) ? it->child : NULL;
  const cJSON *b = a ? a->next : NULL, *c = b ? b->next : NULL;
  if (!c || c->next || !cJSON_IsArray(c) ||
      cJSON_GetArraySize(c) > fp_graph_node_count(L->g))
    return FAIL(L, "%s: linked[%d]: expected [node, node, [linker, ...]]",
                L->src, i);
  int32_t u = linked_node(L, i, a), v = u < 0 ? -1 : linked_node(L, i, b);
  int32_t n = 0;
  for (const cJSON *x = c->child; x && v >= 0; x = x->next)
    if ((via[n++] = linked_node(L, i, x)) < 0)
      return FP_EINPUT;
  if (u < 0 || v < 0)
    return FP_EINPUT;
  if (fp_graph_add_linked(L->g, u, v, n, via, L->err) != FP_OK)
    return builder_error(L); /* "linked: pair 'u', 'v' ..." */
  return FP_OK;
}

/* linked: [[u, v, [linkers...]], ...], version 3 on (docs/formats.md). */
static fp_status load_linked(loader *L, const cJSON *arr) {
  if (!arr)
    return FP_OK;
  if (L->version < 3)
    return FAIL(L, "%s: linked: needs version 3 (this is %llu)", L->src,
                (unsigned long long)L->version);
  if (!cJSON_IsArray(arr))
    return FAIL(L,
                "%s: linked: expected an array of [node, node, "
                "[linker, ...]]",
                L->src);
  int32_t *via = malloc(((size_t)fp_graph_node_count(L->g) + 1) * sizeof *via);
  if (!via)
    return fp_error_set(L->err, FP_ENOMEM, "%s: out of memory", L->src);
  fp_status st = FP_OK;
  int i = 0;
  for (const cJSON *it = arr->child; it && st == FP_OK; it = it->next, i++)
    st = load_linked_one(L, i, it, via);
  free(via);
  return st;
}

/* Keeps the whole meta object verbatim (exporters put provenance and
 * estimates there) so that a load/save round trip loses nothing. */
static fp_status keep_meta(loader *L, const cJSON *meta) {
  const cJSON *src = cJSON_IsObject(meta) ? field(meta, "source") : NULL;
  if (cJSON_IsString(src) &&
      fp_graph_set_source(L->g, src->valuestring, L->err) != FP_OK)
    return FP_ENOMEM;
  if (!cJSON_IsObject(meta))
    return FP_OK;
  char *txt = cJSON_PrintUnformatted(meta);
  size_t n = txt ? strlen(txt) + 1 : 0;
  L->g->meta_json = txt ? malloc(n) : NULL;
  if (L->g->meta_json)
    memcpy(L->g->meta_json, txt, n);
  cJSON_free(txt);
  if (!L->g->meta_json)
    return fp_error_set(L->err, FP_ENOMEM, "%s: out of memory", L->src);
  return FP_OK;
}

/* outside_live_bytes: version 2 on (a version-1 file has none: its
 * meaning stays); absent means 0. */
static fp_status load_outside(loader *L, const cJSON *item, uint64_t ver) {
  uint64_t bytes;
  if (!item)
    return FP_OK;
  if (ver < 2)
    return FAIL(L, "%s: outside_live_bytes: needs version 2 (this is %llu)",
                L->src, (unsigned long long)ver);
  if (!fp_json_u64(item, &bytes) || bytes >= FP_MAX_BYTES)
    return FAIL(L, "%s: outside_live_bytes: expected an integer below 2^53",
                L->src);
  if (fp_graph_set_outside_live_bytes(L->g, bytes, L->err) != FP_OK)
    return builder_error(L);
  return FP_OK;
}

/* Top-level scalar fields: format, version, name, max_fusion_size,
 * outside_live_bytes, meta. */
static fp_status load_header(loader *L, const top *T) {
  uint64_t ver;
  fp_status st = fp_json_check_format_upto(
      T->item[M_FORMAT], T->item[M_VERSION], L->src, "fuseplan.graph",
      FP_GRAPH_FORMAT_VERSION, &ver, L->err);
  if (st != FP_OK)
    return st;
  L->version = ver;
  const cJSON *nm = T->item[M_NAME], *k = T->item[M_K];
  if (nm && !cJSON_IsString(nm))
    return FAIL(L, "%s: name: expected a string", L->src);
  L->g = fp_graph_create(nm ? nm->valuestring : "");
  if (!L->g)
    return fp_error_set(L->err, FP_ENOMEM, "%s: out of memory", L->src);
  uint64_t kv;
  if (k && (!fp_json_u64(k, &kv) || kv < 1 || kv > INT32_MAX))
    return FAIL(L, "%s: max_fusion_size: expected a positive integer", L->src);
  if (k)
    fp_graph_set_max_fusion_size(L->g, (int32_t)kv, NULL);
  if ((st = load_outside(L, T->item[M_OUTSIDE], ver)) != FP_OK)
    return st;
  return keep_meta(L, T->item[M_META]);
}

fp_status fp_graph_load_buffer(const char *data, size_t len, const char *source,
                               fp_graph **out, fp_error *err) {
  loader L = {.src = source ? source : "<graph>", .err = err};
  top T;
  fp_status st;
  memset(&T, 0, sizeof T);
  if (fp_arg_ptr(out, L.src, "out", err) != FP_OK ||
      (!data && len > 0 && fp_arg_ptr(data, L.src, "data", err) != FP_OK))
    return FP_EARG;
  *out = NULL;
  if ((st = load_top(&L, data, len, &T)) || (st = load_header(&L, &T)) ||
      (st = load_array(&L, &T, M_BUFFERS, load_buffer)) ||
      (st = load_array(&L, &T, M_NODES, load_node)) ||
      (st = load_outputs(&L, T.item[M_OUTPUTS])) ||
      (st = load_unfusible(&L, T.item[M_UNFUSIBLE])) ||
      (st = load_linked(&L, T.item[M_LINKED])))
    goto fail;
  if ((st = fp_graph_finalize(L.g, err)) != FP_OK) {
    fp_error_prefix(err, L.src);
    goto fail;
  }
  *out = L.g;
  L.g = NULL;
fail:
  top_free(&T);
  fp_graph_destroy(L.g);
  free(L.reads);
  free(L.writes);
  return st;
}

fp_status fp_graph_load_file(const char *path, fp_graph **out, fp_error *err) {
  char *data;
  size_t len;
  if (fp_arg_ptr(out, "graph load", "out", err) != FP_OK)
    return FP_EARG;
  *out = NULL;
  fp_status st = fp_file_read_all(path, &data, &len, err);
  if (st != FP_OK)
    return st;
  st = fp_graph_load_buffer(data, len, path, out, err);
  free(data);
  return st;
}

/* ---- writer ------------------------------------------------------------- */

static void put_sep(fp_jbuf *b, int32_t i, int pretty) {
  fp_jbuf_puts(b, i ? "," : "");
  fp_jbuf_puts(b, pretty ? "\n  " : "");
}

static void write_buffer(fp_jbuf *b, const fp_buffer *buf) {
  fp_jbuf_puts(b, "{\"name\": ");
  fp_jbuf_str(b, buf->name);
  fp_jbuf_puts(b, ", \"bytes\": ");
  fp_jbuf_u64(b, buf->bytes);
  if (buf->input)
    fp_jbuf_puts(b, ", \"input\": true");
  if (buf->freeable)
    fp_jbuf_puts(b, ", \"freeable\": true");
  fp_jbuf_puts(b, "}");
}

/* Writes a node's op; only fields that differ from their defaults. */
static void write_op(fp_jbuf *b, const fp_node *n) {
  const fp_op *op = &n->op;
  fp_jbuf_puts(b, ", \"op\": {\"fn\": ");
  fp_jbuf_str(b, fp_op_name(op->fn));
  if (op->alpha != 1.0) {
    fp_jbuf_puts(b, ", \"alpha\": ");
    fp_jbuf_double(b, op->alpha);
  }
  if (op->fn == FP_OP_MATMUL)
    fp_jbuf_printf(b, ", \"m\": %u, \"n\": %u, \"k\": %u", (unsigned)op->m,
                   (unsigned)op->n, (unsigned)op->k);
  if (op->trans_a)
    fp_jbuf_puts(b, ", \"trans_a\": true");
  if (op->trans_b)
    fp_jbuf_puts(b, ", \"trans_b\": true");
  bool any = false;
  for (int32_t i = 0; i < n->n_reads; i++)
    any |= n->reads[i].index != FP_INDEX_AUTO;
  if (any) {
    fp_jbuf_puts(b, ", \"index\": [");
    for (int32_t i = 0; i < n->n_reads; i++) {
      fp_jbuf_puts(b, i ? ", " : "");
      fp_jbuf_str(b, fp_index_name((fp_index)n->reads[i].index));
    }
    fp_jbuf_puts(b, "]");
  }
  fp_jbuf_puts(b, "}");
}

/* Writes a node's ", \"loop\": [[...], [...]]". */
static void write_loop(fp_jbuf *b, const fp_loop *l) {
  fp_jbuf_puts(b, ", \"loop\": [[");
  for (int i = 0; i < l->n + l->rn; i++) {
    fp_jbuf_puts(b, i == l->n ? "], [" : i ? ", " : "");
    fp_jbuf_u64(b, l->size[i]);
  }
  fp_jbuf_puts(b, l->n == l->n + l->rn ? "], []]" : "]]");
}

/* Writes node n's "inplace" pairs, when it has any. */
static void write_inplace(fp_jbuf *b, const fp_graph *g, int32_t v) {
  int32_t m;
  const fp_inplace *p = fp_graph_inplace(g, v, &m);
  if (m == 0)
    return;
  fp_jbuf_puts(b, ", \"inplace\": [");
  for (int32_t k = 0; k < m; k++) {
    fp_jbuf_puts(b, k ? ", [" : "[");
    fp_jbuf_str(b, fp_graph_buffer(g, p[k].read)->name);
    fp_jbuf_puts(b, ", ");
    fp_jbuf_str(b, fp_graph_buffer(g, p[k].write)->name);
    fp_jbuf_puts(b, "]");
  }
  fp_jbuf_puts(b, "]");
}

static void write_node(fp_jbuf *b, const fp_graph *g, int32_t v) {
  const fp_node *n = fp_graph_node(g, v);
  fp_jbuf_puts(b, "{\"name\": ");
  fp_jbuf_str(b, n->name);
  fp_jbuf_puts(b, ", \"kind\": ");
  fp_jbuf_str(b, fp_kind_name(n->kind));
  if (n->numel)
    fp_jbuf_printf(b, ", \"iter\": [%llu, %llu]", (unsigned long long)n->numel,
                   (unsigned long long)n->rnumel);
  if (n->loop.present)
    write_loop(b, &n->loop);
  fp_jbuf_puts(b, ", \"reads\": [");
  for (int32_t i = 0; i < n->n_reads; i++) {
    const fp_buffer *buf = fp_graph_buffer(g, n->reads[i].buffer);
    fp_jbuf_puts(b, i ? ", " : "");
    if (n->reads[i].bytes == buf->bytes) {
      fp_jbuf_str(b, buf->name);
      continue;
    }
    fp_jbuf_puts(b, "{\"buffer\": ");
    fp_jbuf_str(b, buf->name);
    fp_jbuf_puts(b, ", \"bytes\": ");
    fp_jbuf_u64(b, n->reads[i].bytes);
    fp_jbuf_puts(b, "}");
  }
  fp_jbuf_puts(b, "], \"writes\": [");
  for (int32_t i = 0; i < n->n_writes; i++) {
    fp_jbuf_puts(b, i ? ", " : "");
    fp_jbuf_str(b, fp_graph_buffer(g, n->writes[i])->name);
  }
  fp_jbuf_puts(b, "]");
  write_inplace(b, g, v);
  if (n->workspace)
    fp_jbuf_printf(b, ", \"workspace\": %llu",
                   (unsigned long long)n->workspace);
  if (n->op.fn != FP_OP_NONE)
    write_op(b, n);
  fp_jbuf_puts(b, "}");
}

/* The linked pairs, only when there are some (then the file is version
 * 3), as "], linked": [[u, v, [linkers...]], ...": it closes unfusible. */
static void write_linked(fp_jbuf *b, const fp_graph *g, int pretty) {
  if (fp_graph_linked_count(g) == 0)
    return;
  fp_jbuf_printf(b, "],%s\"linked\": [", pretty ? "\n" : "");
  for (int32_t i = 0; i < fp_graph_linked_count(g); i++) {
    const fp_linked *l = fp_graph_linked(g, i);
    put_sep(b, i, pretty);
    fp_jbuf_puts(b, "[");
    fp_jbuf_str(b, fp_graph_node(g, l->u)->name);
    fp_jbuf_puts(b, ", ");
    fp_jbuf_str(b, fp_graph_node(g, l->v)->name);
    fp_jbuf_puts(b, ", [");
    for (int32_t j = 0; j < l->n_via; j++) {
      fp_jbuf_puts(b, j ? ", " : "");
      fp_jbuf_str(b, fp_graph_node(g, l->via[j])->name);
    }
    fp_jbuf_puts(b, "]]");
  }
}

static void write_tail(fp_jbuf *b, const fp_graph *g, int pretty) {
  const char *nl = pretty ? "\n" : "";
  fp_jbuf_printf(b, "%s],%s\"outputs\": [", nl, nl);
  for (int32_t i = 0; i < fp_graph_output_count(g); i++) {
    fp_jbuf_puts(b, i ? ", " : "");
    fp_jbuf_str(b, fp_graph_buffer(g, fp_graph_output(g, i))->name);
  }
  fp_jbuf_printf(b, "],%s\"unfusible\": [", nl);
  for (int32_t i = 0; i < fp_graph_unfusible_count(g); i++) {
    int32_t u, v;
    fp_graph_unfusible_pair(g, i, &u, &v);
    put_sep(b, i, pretty);
    fp_jbuf_puts(b, "[");
    fp_jbuf_str(b, fp_graph_node(g, u)->name);
    fp_jbuf_puts(b, ", ");
    fp_jbuf_str(b, fp_graph_node(g, v)->name);
    fp_jbuf_puts(b, "]");
  }
  write_linked(b, g, pretty);
  fp_jbuf_printf(b, "],%s\"meta\": ", nl);
  if (g->meta_json) {
    fp_jbuf_puts(b, g->meta_json);
  } else {
    /* Compact, as cJSON re-prints a loaded meta: save/load/save is a fixed
     * point from the first save. */
    fp_jbuf_puts(b, "{\"source\":");
    fp_jbuf_str(b, fp_graph_source(g));
    fp_jbuf_puts(b, "}");
  }
  fp_jbuf_printf(b, "%s}\n", nl);
}

char *fp_graph_to_json(const fp_graph *g, int pretty, fp_error *err) {
  if (fp_arg_graph(g, "graph write", err) != FP_OK)
    return NULL;
  fp_jbuf b = {0};
  const char *nl = pretty ? "\n" : "";
  /* The lowest version that holds the fields (2 adds outside bytes, 3
   * loop nests, in-place and linked pairs, 4 workspaces): older files stay
   * byte for byte, and an older reader refuses what it would misread. */
  uint64_t outside = fp_graph_outside_live_bytes(g);
  bool v3 = fp_graph_inplace_count(g) > 0 || fp_graph_linked_count(g) > 0;
  for (int32_t v = 0; v < fp_graph_node_count(g) && !v3; v++)
    v3 = fp_graph_node(g, v)->loop.present;
  int ver = fp_graph_workspace_total(g) ? 4 : v3 ? 3 : outside ? 2 : 1;
  fp_jbuf_printf(&b, "{\"format\": \"fuseplan.graph\", \"version\": %d,%s", ver,
                 nl);
  fp_jbuf_puts(&b, "\"name\": ");
  fp_jbuf_str(&b, fp_graph_name(g));
  if (outside)
    fp_jbuf_printf(&b, ",%s\"outside_live_bytes\": %llu", nl,
                   (unsigned long long)outside);
  fp_jbuf_printf(&b, ",%s\"max_fusion_size\": %d,%s\"buffers\": [", nl,
                 (int)fp_graph_max_fusion_size(g), nl);
  for (int32_t i = 0; i < fp_graph_buffer_count(g); i++) {
    put_sep(&b, i, pretty);
    write_buffer(&b, fp_graph_buffer(g, i));
  }
  fp_jbuf_printf(&b, "%s],%s\"nodes\": [", nl, nl);
  for (int32_t i = 0; i < fp_graph_node_count(g); i++) {
    put_sep(&b, i, pretty);
    write_node(&b, g, i);
  }
  write_tail(&b, g, pretty);
  if (b.oom) {
    free(b.s);
    fp_error_set(err, FP_ENOMEM, "out of memory writing graph");
    return NULL;
  }
  return b.s;
}

fp_status fp_graph_save_file(const fp_graph *g, const char *path,
                             fp_error *err) {
  fp_error local;
  err = err ? err : &local;
  if (fp_arg_ptr(path, "graph write", "the path", err) != FP_OK)
    return FP_EARG;
  char *s = fp_graph_to_json(g, 1, err);
  if (!s)
    return err->code;
  fp_status st = fp_file_write_atomic(path, s, strlen(s), err);
  free(s);
  return st;
}
